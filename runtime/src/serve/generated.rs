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
    run_generated(g, oauth_proxy, None)
}

/// The Arazzo documents a generated crate embeds (`src/workflows/`, #39): their workflows are
/// served as tools exactly as `openapi-mcp proxy` serves them for the crate's spec (`proxy
/// DOC.arazzo.yaml`, or `proxy SPEC --arazzo DOC`), every `openapi` source description being
/// the crate's API.
#[derive(Clone, Copy, Debug)]
pub struct EmbeddedWorkflows {
    pub documents: &'static [EmbeddedDocument],
    /// `--workflows-only` at generation: the operation tools are not listed.
    pub only: bool,
}

/// One embedded Arazzo document: its file name (what diagnostics name) and its text.
#[derive(Clone, Copy, Debug)]
pub struct EmbeddedDocument {
    pub name: &'static str,
    pub text: &'static str,
}

/// [`generated_main_with`] of a crate that embeds Arazzo workflows. Needs the runtime's
/// `workflows` feature (which `openapi-mcp generate` turns on for such a crate); without it the
/// server refuses to start, naming the feature.
#[cfg(feature = "cli")]
pub fn generated_main_with_workflows(
    g: Generated,
    workflows: EmbeddedWorkflows,
    oauth_proxy: Option<crate::oauth::authorization::OAuthProxyFactory>,
) -> std::process::ExitCode {
    run_generated(g, oauth_proxy, Some(workflows))
}

/// The embedded documents' workflows over `set`, checked as the proxy checks them (each
/// diagnostic printed as a warning, a broken workflow skipped alone).
#[cfg(all(feature = "cli", feature = "workflows"))]
fn embedded_workflows(
    set: &ToolSet,
    w: &EmbeddedWorkflows,
) -> Result<Arc<crate::server::workflow::WorkflowTools>, EmbeddedWorkflowsError> {
    use crate::server::workflow::{SetOperations, WorkflowTools};
    let mut docs = Vec::with_capacity(w.documents.len());
    for d in w.documents {
        let doc = openapi_mcp_arazzo::load::from_bytes(d.text.as_bytes(), d.name, None)
            .map_err(|e| EmbeddedWorkflowsError(e.to_string()))?;
        // One API: every `openapi` source description is the crate's.
        let sources = doc.sources_as_one_api(0);
        let checked =
            openapi_mcp_arazzo::validate::validate(Arc::new(doc), &SetOperations { set, sources });
        for diag in checked.diagnostics() {
            eprintln!("warning: {diag}");
        }
        let usable = checked.usable().count();
        let total = checked.document().workflows().len();
        if usable < total {
            eprintln!(
                "warning: {}: {} of {total} workflows skipped (see above)",
                checked.document().name(),
                total - usable
            );
        }
        docs.push(Arc::new(checked));
    }
    Ok(Arc::new(WorkflowTools::new(set, &docs, w.only)))
}

#[cfg(all(feature = "cli", not(feature = "workflows")))]
fn embedded_workflows(
    _set: &ToolSet,
    _w: &EmbeddedWorkflows,
) -> Result<Arc<crate::server::workflow::WorkflowTools>, EmbeddedWorkflowsError> {
    Err(EmbeddedWorkflowsError(
        "this server was built without the `workflows` feature (regenerate with `openapi-mcp generate`, or build with the runtime's `workflows` feature)".into(),
    ))
}

/// The embedded Arazzo documents could not be served.
#[cfg(feature = "cli")]
#[derive(Debug, thiserror::Error)]
#[error("the embedded workflows (src/workflows/): {0}")]
pub(super) struct EmbeddedWorkflowsError(String);

#[cfg(feature = "cli")]
fn run_generated(
    g: Generated,
    oauth_proxy: Option<crate::oauth::authorization::OAuthProxyFactory>,
    workflows: Option<EmbeddedWorkflows>,
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
        let workflows = match &workflows {
            Some(w) => Some(
                embedded_workflows(&set, w)
                    .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?,
            ),
            None => None,
        };
        let serving = Serving {
            program: g.name.to_string(),
            label: format!("the {} API", g.title),
            dispatcher: g.dispatcher,
            on_start: None,
            watched: false,
            oauth_proxy,
            workflows,
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
