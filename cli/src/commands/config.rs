//! `openapi-mcp config --print`: the effective `proxy` configuration.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::{ArgMatches, CommandFactory};
use openapi_mcp_runtime::serve::ApiOptions;
use openapi_mcp_runtime::serve::config::{self, Expanded};

use crate::apis::ApiConfig;

/// Prints every `proxy` option's effective value and where it came from (secrets masked); with
/// `apis:`, the server's options, then each API's.
pub fn print(
    matches: &ArgMatches,
    expanded: &Expanded,
    apis: &[ApiConfig],
) -> anyhow::Result<ExitCode> {
    let text = effective(matches, expanded, apis)?;
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// What `config --print` prints for a parsed `config` command line.
fn effective(
    matches: &ArgMatches,
    expanded: &Expanded,
    apis: &[ApiConfig],
) -> anyhow::Result<String> {
    let mut cmd = if apis.is_empty() {
        crate::args::Cli::command()
    } else {
        crate::apis::relaxed(crate::args::Cli::command())
    };
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
    // Per-API options are printed in the entries (`upstream-auth` in both: at the top level
    // it is the entries' default).
    let per_api: Vec<String> = if apis.is_empty() {
        Vec::new()
    } else {
        crate::apis::per_api_ids()
            .into_iter()
            .filter(|id| !ApiOptions::SERVER_DEFAULTS.contains(&id.as_str()))
            .collect()
    };
    let skip: Vec<&str> = ["print"]
        .into_iter()
        .chain(per_api.iter().map(String::as_str))
        .collect();
    text.push_str(&config::render_effective(
        sub,
        m,
        &expanded.from_file,
        expanded.file.as_deref(),
        &skip,
    ));
    if !apis.is_empty() {
        let entry = crate::apis::entry_command();
        text.push_str(&format!("{}:\n", config::APIS_KEY));
        // An entry without its own `upstream-auth` has the top level's.
        let server_mode = m
            .get_one::<openapi_mcp_runtime::serve::UpstreamAuth>("upstream_auth")
            .copied()
            .unwrap_or_default();
        for api in apis {
            let rendered = config::render_effective(
                &entry,
                &api.matches,
                &api.from_file,
                expanded.file.as_deref(),
                &[],
            );
            let rendered: Vec<String> = rendered
                .lines()
                .map(
                    |l| match (api.options.upstream_auth, l.strip_prefix("upstream-auth: ")) {
                        (None, Some(_)) => format!(
                            "upstream-auth: {}  # the top-level upstream-auth",
                            server_mode.name()
                        ),
                        _ => l.to_string(),
                    },
                )
                .collect();
            for (i, line) in rendered.iter().enumerate() {
                text.push_str(if i == 0 { "- " } else { "  " });
                text.push_str(line);
                text.push('\n');
            }
        }
    }
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
        let mut cmd = if expanded.apis.is_some() {
            crate::apis::relaxed(crate::args::Cli::command())
        } else {
            crate::args::Cli::command()
        };
        let m = cmd.clone().try_get_matches_from(&expanded.argv).unwrap();
        cmd.build();
        let apis = match m.subcommand() {
            Some(("config", sm)) => {
                crate::apis::parse(&expanded, cmd.find_subcommand("config").unwrap(), sm)
                    .unwrap()
                    .0
            }
            _ => Vec::new(),
        };
        effective(&m, &expanded, &apis).unwrap()
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

    /// With `apis:`, each API is printed in a list under the server's options, its secrets
    /// masked, and the output reads back as the same configuration.
    #[test]
    fn print_shows_each_api_masked_and_round_trips() {
        let dir = std::env::temp_dir().join(format!("openapi-mcp-cfg-apis-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("apis.yaml");
        std::fs::write(
            &file,
            "transport: http\napis:\n  - name: pets\n    spec: pets.yaml\n    base-url: https://u:pw-1@pets.example/api\n    auth: [api_key=sk-pets]\n  - name: crm\n    spec: crm.yaml\n    header: ['X-Api-Key: sk-crm']\n    include-tag: [a, b]\n",
        )
        .unwrap();
        let text = printed(&["config", "--print", "--config", file.to_str().unwrap()]);
        for secret in ["pw-1", "sk-pets", "sk-crm"] {
            assert!(!text.contains(secret), "{secret} in\n{text}");
        }
        assert!(text.contains("transport: http  # config file"), "{text}");
        assert!(
            text.contains("apis:\n- name: pets  # config file"),
            "{text}"
        );
        assert!(text.contains("  - api_key=***"), "{text}");
        assert!(text.contains("  - 'X-Api-Key: ***'"), "{text}");
        assert!(text.contains("- name: crm"), "{text}");
        // No per-API option at the top level (it would be refused next to `apis:`).
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("spec:") || l.starts_with("base-url:")),
            "{text}"
        );
        let again_file = dir.join("printed.yaml");
        std::fs::write(&again_file, &text).unwrap();
        let again = printed(&[
            "config",
            "--print",
            "--config",
            again_file.to_str().unwrap(),
        ]);
        std::fs::remove_dir_all(&dir).unwrap();
        // The masked values read back as themselves (masked), everything else the same.
        assert_eq!(values(&text), values(&again), "{again}");
    }

    /// Each API's credential mode is printed in its entry: its own, or the top level's (the
    /// default of the entries that do not say), which is printed at the top level too.
    #[test]
    fn print_shows_each_apis_upstream_auth() {
        let dir =
            std::env::temp_dir().join(format!("openapi-mcp-cfg-modes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("modes.yaml");
        std::fs::write(
            &file,
            "transport: http\noauth-issuer: https://as.example\noauth-client-id: rs\nupstream-auth: token-exchange\napis:\n  - name: crm\n    spec: crm.yaml\n    token-exchange-audience: https://crm.example\n  - name: pets\n    spec: pets.yaml\n    upstream-auth: static\n",
        )
        .unwrap();
        let text = printed(&["config", "--print", "--config", file.to_str().unwrap()]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            text.contains("\nupstream-auth: token-exchange  # config file"),
            "{text}"
        );
        let crm = text.split("- name: crm").nth(1).unwrap();
        let (crm, pets) = crm.split_once("- name: pets").unwrap();
        assert!(
            crm.contains("  upstream-auth: token-exchange  # the top-level upstream-auth"),
            "{text}"
        );
        assert!(
            pets.contains("  upstream-auth: static  # config file"),
            "{text}"
        );
        // An audience is a name, not a secret: shown as it is.
        assert!(
            crm.contains("  token-exchange-audience: https://crm.example  # config file"),
            "{text}"
        );
    }
}
