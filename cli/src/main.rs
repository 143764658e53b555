//! `openapi-mcp`: a thin CLI over the runtime and codegen libraries.

mod apis;
mod arazzo;
mod args;
mod commands;
#[cfg(test)]
mod option_parity;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use openapi_mcp_runtime::serve::config;
use openapi_mcp_runtime::serve::exit::ExitStatus;

/// jemalloc instead of the platform's malloc: loading and converting a large spec is allocation
/// bound, and glibc's malloc spends a fifth of that time consolidating and unlinking chunks.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The subcommands that take `--config FILE`.
pub(crate) const CONFIG_COMMANDS: &[&str] = &["proxy", "config"];

fn main() -> ExitCode {
    // `--config FILE`: the file's settings become command-line options ahead of the user's.
    let expanded = match config::expand(
        &args::Cli::command(),
        CONFIG_COMMANDS,
        std::env::args_os().collect(),
    ) {
        Ok(e) => e,
        Err(e) => {
            report(&anyhow::Error::new(e));
            return ExitStatus::Failure.into();
        }
    };
    for w in &expanded.warnings {
        eprintln!("warning: {w}");
    }
    // `apis:` (several APIs in one server): no spec argument, each API has its own.
    let command = if expanded.apis.is_some() {
        apis::relaxed(args::Cli::command())
    } else {
        args::Cli::command()
    };
    let matches = command.clone().get_matches_from(&expanded.argv);
    let cli = args::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let served = match matches.subcommand() {
        Some((name, m)) if expanded.apis.is_some() => {
            let mut built = command;
            built.build();
            let parsed = built
                .find_subcommand(name)
                .ok_or_else(|| anyhow::anyhow!("no {name} command"))
                .and_then(|sub| apis::parse(&expanded, sub, m));
            match parsed {
                Ok((apis, warnings)) => {
                    for w in &warnings {
                        eprintln!("warning: {w}");
                    }
                    apis
                }
                Err(e) => return report(&e).into(),
            }
        }
        _ => Vec::new(),
    };
    let _log = init_logging(cli.verbose);
    // `proxy` over stdio serves one client: a single-threaded runtime keeps each call on one
    // thread (no hand-offs between workers) and lets the memory freed after loading the spec be
    // reused by what follows (glibc gives each worker thread its own arena).
    let stdio_proxy = matches!(&cli.command, args::Command::Proxy(a)
        if a.serve.transport == openapi_mcp_runtime::serve::Transport::Stdio);
    let mut builder = if stdio_proxy {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            args::Command::Tools(a) => commands::tools::run(a).await,
            args::Command::Proxy(a) if !served.is_empty() => {
                commands::proxy::run_apis(a, served).await
            }
            args::Command::Proxy(a) => commands::proxy::run(a).await,
            args::Command::Generate(a) => commands::generate::run(a).await,
            args::Command::Lint(a) => commands::lint::run(a).await,
            args::Command::Bundle(a) => commands::bundle::run(a).await,
            args::Command::Diff(a) => commands::diff::run(a).await,
            args::Command::Config(_) => commands::config::print(&matches, &expanded, &served),
        }
    });
    match result {
        Ok(code) => code,
        Err(err) => report(&err).into(),
    }
}

/// Prints the error and its causes on one line; exit 1 when the user's input caused it: a
/// `UserError` anywhere in the chain (it adds no text of its own, so the message is the chain as
/// it always was). A config file error is always the user's.
fn report(err: &anyhow::Error) -> ExitStatus {
    let status = if err
        .chain()
        .any(|c| ExitStatus::of(c) == ExitStatus::Failure || c.is::<config::ConfigError>())
    {
        ExitStatus::Failure
    } else {
        ExitStatus::Error
    };
    let msg = err
        .chain()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    eprintln!("error: {msg}");
    status
}

fn init_logging(verbose: u8) -> openapi_mcp_runtime::serve::LogGuard {
    openapi_mcp_runtime::serve::init_logging(verbose)
}
