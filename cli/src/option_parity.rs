//! Generated servers accept exactly the serving options of `openapi-mcp proxy`: both flatten the
//! runtime's `ServeArgs`, and this test keeps it so (an option added to `proxy` alone, outside
//! `ServeArgs` and the spec/conversion options, fails here).

use std::collections::BTreeSet;

use clap::{Args, CommandFactory};
use openapi_mcp_runtime::serve::GeneratedCli;

/// Long names (or ids, for positionals) of a command's own arguments.
fn names(cmd: &clap::Command) -> BTreeSet<String> {
    cmd.get_arguments()
        .filter(|a| a.get_id() != "help" && a.get_id() != "version")
        .map(|a| {
            a.get_long()
                .map(str::to_string)
                .unwrap_or_else(|| a.get_id().to_string())
        })
        .collect()
}

#[test]
fn generated_servers_take_every_serving_option_of_proxy() {
    let cli = crate::args::Cli::command();
    let proxy = cli
        .find_subcommand("proxy")
        .expect("the CLI has a proxy command");
    let spec_options = names(&crate::args::SpecArgs::augment_args(clap::Command::new(
        "spec",
    )));
    // What only the proxy can have: the spec and how it is converted (generated servers embed
    // the converted tools), and --watch (reloading the spec file).
    let proxy_serving: BTreeSet<String> = names(proxy)
        .into_iter()
        .filter(|n| !spec_options.contains(n) && n != "watch")
        .collect();
    let generated: BTreeSet<String> = names(&GeneratedCli::command())
        .into_iter()
        // `-v` is a global option of the CLI, declared on the top-level command.
        .filter(|n| n != "verbose")
        .collect();
    assert!(proxy_serving.contains("forward-header") && proxy_serving.contains("rate-limit"));
    assert_eq!(
        proxy_serving, generated,
        "openapi-mcp proxy and generated servers must accept the same serving options"
    );
    assert!(names(&cli).contains("verbose"));
}
