//! A generated server's whole `main`: [`generated_main`] parses the same options as
//! `openapi-mcp proxy` and serves the crate's embedded tool set.

use super::*;

/// A generated server: what its `main.rs` passes to [`generated_main`].
#[cfg(feature = "cli")]
pub struct Generated {
    /// The crate's name (the program name on the command line and in the start-up line).
    pub name: &'static str,
    /// `--help`'s first line.
    pub about: &'static str,
    pub version: &'static str,
    /// The API's title, for the start-up line.
    pub title: &'static str,
    /// `--mode`'s default (and `--pin`'s, for hybrid), chosen at generation.
    pub default_mode: Mode,
    pub default_pins: &'static [&'static str],
    /// The embedded tool set (`src/api.json`).
    pub tool_set: fn() -> Result<ToolSet, openapi_mcp_toolset::api_file::ApiFileError>,
    /// The crate's typed handlers.
    pub dispatcher: Option<Dispatcher>,
}

/// The command line of a generated server: `-v` and every [`ServeArgs`] option.
#[cfg(feature = "cli")]
#[derive(clap::Parser, Debug)]
pub struct GeneratedCli {
    /// More logging on stderr (-v debug, -vv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(flatten)]
    pub serve: ServeArgs,
    /// Read options from a YAML or TOML file (`.toml`): keys are the long option names, lists
    /// for repeatable options; options on the command line override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
}

#[cfg(feature = "cli")]
impl GeneratedCli {
    /// The clap command of a generated server, with its generation-time defaults.
    pub fn command_for(g: &Generated) -> clap::Command {
        use clap::CommandFactory;
        let mut cmd = GeneratedCli::command()
            .name(g.name)
            .bin_name(g.name)
            .about(g.about)
            .version(g.version)
            .mut_arg("mode", |a| a.default_value(g.default_mode.name()));
        if !g.default_pins.is_empty() {
            let pins: Vec<clap::builder::OsStr> =
                g.default_pins.iter().map(|p| (*p).into()).collect();
            cmd = cmd.mut_arg("pin", |a| a.default_values(pins));
        }
        cmd
    }
}

/// The whole `main` of a generated server: parse the command line, start logging, serve the
/// embedded tool set with the crate's handlers, and turn the outcome into an exit code.
#[cfg(feature = "cli")]
pub fn generated_main(g: Generated) -> std::process::ExitCode {
    generated_main_with(g, None)
}

/// [`generated_main`] of a server built with the OAuth proxy: `oauth_proxy` builds
/// `--oauth-proxy`'s authorization server (`openapi_mcp_oauth_proxy::factory`); without it,
/// `--oauth-proxy` is refused with [`crate::oauth::authorization::NO_OAUTH_PROXY`].
#[cfg(feature = "cli")]
pub fn generated_main_with(
    g: Generated,
    oauth_proxy: Option<crate::oauth::authorization::OAuthProxyFactory>,
) -> std::process::ExitCode {
    use clap::FromArgMatches;
    let cmd = GeneratedCli::command_for(&g);
    // `--config FILE`, as `openapi-mcp proxy` has it.
    let expanded = match crate::serve::config::expand(&cmd, &[], std::env::args_os().collect()) {
        Ok(e) => e,
        Err(e) => {
            report(&e);
            return crate::serve::exit::ExitStatus::Failure.into();
        }
    };
    if expanded.apis.is_some() {
        let file = expanded
            .file
            .as_ref()
            .map(|f| f.display().to_string())
            .unwrap_or_default();
        eprintln!(
            "error: config file {file}: `{}` (several APIs in one server) is for `openapi-mcp proxy`; a generated server serves its own API",
            crate::serve::config::APIS_KEY
        );
        return crate::serve::exit::ExitStatus::Failure.into();
    }
    for w in &expanded.warnings {
        eprintln!("warning: {w}");
    }
    let matches = cmd.get_matches_from(expanded.argv);
    let cli = match GeneratedCli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let _log = init_logging(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return crate::serve::exit::ExitStatus::Error.into();
        }
    };
    let result: Result<(), Box<dyn std::error::Error + Send + Sync>> = runtime.block_on(async {
        let set = (g.tool_set)().map_err(|e| {
            Box::new(EmbeddedToolSetError(e)) as Box<dyn std::error::Error + Send + Sync>
        })?;
        let serving = Serving {
            program: g.name.to_string(),
            label: format!("the {} API", g.title),
            dispatcher: g.dispatcher,
            on_start: None,
            watched: false,
            oauth_proxy,
            workflows: None,
        };
        serve(set, &cli.serve, serving)
            .await
            .map_err(StartError::into_error)
    });
    match result {
        Ok(()) => crate::serve::exit::ExitStatus::Success.into(),
        Err(e) => report(&*e).into(),
    }
}

/// Prints `error: ` and the error with its causes on one line; returns its exit status.
pub fn report(err: &(dyn std::error::Error + 'static)) -> crate::serve::exit::ExitStatus {
    let mut parts = vec![err.to_string()];
    let mut cur = err.source();
    while let Some(e) = cur {
        parts.push(e.to_string());
        cur = e.source();
    }
    eprintln!("error: {}", parts.join(": "));
    crate::serve::exit::ExitStatus::of(err)
}

/// The embedded `src/api.json` of a generated server could not be read.
#[cfg(feature = "cli")]
#[derive(Debug, thiserror::Error)]
#[error("reading the embedded tool definitions (src/api.json)")]
pub(super) struct EmbeddedToolSetError(#[source] openapi_mcp_toolset::api_file::ApiFileError);
