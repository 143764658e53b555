//! `openapi-mcp config --print`: the effective `proxy` configuration.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::{ArgMatches, CommandFactory};
use openapi_mcp_runtime::config::{self, Expanded};

/// Prints every `proxy` option's effective value and where it came from (secrets masked).
pub fn print(matches: &ArgMatches, expanded: &Expanded) -> anyhow::Result<ExitCode> {
    let text = effective(matches, expanded)?;
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// What `config --print` prints for a parsed `config` command line.
fn effective(matches: &ArgMatches, expanded: &Expanded) -> anyhow::Result<String> {
    let mut cmd = crate::args::Cli::command();
    cmd.build();
    let (Some(sub), Some(("config", m))) = (cmd.find_subcommand("config"), matches.subcommand())
    else {
        anyhow::bail!("config: the command line did not parse as `config`");
    };
    let mut text = String::new();
    if let Some(f) = &expanded.file {
        text.push_str(&format!(
            "# openapi-mcp proxy: {} with the command line over it\n",
            f.display()
        ));
    }
    text.push_str(&config::render_effective(
        sub,
        m,
        &expanded.from_file,
        expanded.file.as_deref(),
        &["print"],
    ));
    Ok(text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::ffi::OsString;

    use super::*;

    /// `openapi-mcp ARGS...` as `main` parses it: the config file expanded, then clap.
    fn printed(args: &[&str]) -> String {
        let argv: Vec<OsString> = std::iter::once("openapi-mcp")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        let expanded =
            config::expand(&crate::args::Cli::command(), crate::CONFIG_COMMANDS, argv).unwrap();
        let m = crate::args::Cli::command()
            .try_get_matches_from(&expanded.argv)
            .unwrap();
        effective(&m, &expanded).unwrap()
    }

    /// The values without the `# source` comments.
    fn values(text: &str) -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split("  # ").next().unwrap().to_string())
            .collect()
    }

    /// Every `proxy` option is a config key, and `config --print`'s output is a config file
    /// that says the same: non-default values of every kind printed, written to a file, read
    /// back through `--config` alone, print the same values.
    #[test]
    fn every_proxy_option_is_a_key_and_print_round_trips() {
        let mut cli = crate::args::Cli::command();
        cli.build();
        let proxy = cli.find_subcommand("proxy").unwrap();
        let mut keys = config::keys(proxy);
        keys.sort();
        let mut longs: Vec<String> = proxy
            .get_arguments()
            .filter(|a| !a.is_positional() && a.get_id() != "help" && a.get_id() != "config")
            .filter_map(|a| a.get_long().map(str::to_string))
            .chain(["spec".to_string()])
            .collect();
        longs.sort();
        assert_eq!(keys, longs);
        assert!(keys.len() >= 50, "{keys:?}");

        let flags = [
            "config",
            "--print",
            "api.yaml",
            "--prefix",
            "p",
            "--max-name-len",
            "40",
            "--output-schema",
            "strict",
            "--include-tag",
            "a,b",
            "--include-tag",
            "c",
            "--method",
            "get",
            "--exclude-deprecated",
            "--client",
            "claude",
            "--transport",
            "http",
            "--listen",
            "127.0.0.1:0",
            "--stateless",
            "--forward-header",
            "x-user",
            "--rate-limit",
            "5",
            "--base-url",
            "http://127.0.0.1:9/api",
            "--timeout",
            "2.5",
            "--retries",
            "2",
            "--mode",
            "hybrid",
            "--pin",
            "list*",
            "--confirm",
            "destructive",
            "--poll",
            "--watch",
            "-vv",
        ];
        let text = printed(&flags);
        let dir = std::env::temp_dir().join(format!("openapi-mcp-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("printed.yaml");
        std::fs::write(&file, &text).unwrap();
        let again = printed(&["config", "--print", "--config", file.to_str().unwrap()]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(values(&text), values(&again), "{again}");
        // Every key printed, and the non-defaults now come from the file.
        let printed_keys = values(&again)
            .iter()
            .filter(|l| !l.starts_with("- "))
            .count();
        assert_eq!(printed_keys, keys.len(), "{again}");
        assert!(again.contains("timeout: 2.5  # config file"), "{again}");
        assert!(again.contains("verbose: 2  # config file"), "{again}");
        assert!(again.contains("- c\n"), "{again}");
    }
}
