//! `openapi-mcp proxy`: serve the tools and forward calls.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use openapi_mcp_convert::SpecSource;
use openapi_mcp_convert::pipeline::{self, LockMode, PipelineOptions, Stage};
use openapi_mcp_runtime::serve::{ApiServing, OnStart, Serving, StartError, serve, serve_apis};
use openapi_mcp_runtime::server::ProxyServer;
use openapi_mcp_runtime::server::multi::{ApiInfo, merge};

use crate::apis::ApiConfig;
use crate::args::ProxyArgs;

pub async fn run(args: ProxyArgs) -> anyhow::Result<ExitCode> {
    // Checked before any work (pins only in hybrid mode, valid globs).
    args.serve.tool_mode()?;
    if crate::arazzo::is_document(&args.spec.spec) {
        return crate::arazzo::proxy_document(args).await;
    }
    let opts = super::pipeline_options(&args.spec, args.spec.tool_options()?, LockMode::Read);
    let conversion = super::load_and_convert(&opts).await?;
    let workflows = crate::arazzo::over_spec(&args.spec, &conversion.tools)?;
    let watched = args.watch;
    let on_start: Option<OnStart> = if args.watch {
        // The reload runs the same pipeline with the same options (checked above).
        Some(Box::new(move |server: &ProxyServer| {
            spawn_watch(opts, server.clone(), None)
        }))
    } else {
        None
    };
    let serving = Serving {
        program: "openapi-mcp".to_string(),
        // The spec's URL as every URL is shown: no user info, query values hidden (#36).
        label: openapi_mcp_runtime::serve::shown_url_text(&args.spec.spec),
        dispatcher: None,
        on_start,
        watched,
        oauth_proxy: Some(openapi_mcp_oauth_proxy::factory),
        workflows,
    };
    serve(conversion.tools, &args.serve, serving)
        .await
        .map_err(|e| match e {
            // Unwrapped, so that main finds the user error (exit code 1).
            StartError::Input(u) => anyhow::Error::new(u),
            other => anyhow::Error::new(other),
        })?;
    Ok(ExitCode::SUCCESS)
}

/// `proxy` with `apis:` in its config file: each API converted with its own options, served
/// together (`--watch` reloads the API whose spec file changed).
pub async fn run_apis(args: ProxyArgs, apis: Vec<ApiConfig>) -> anyhow::Result<ExitCode> {
    args.serve.tool_mode()?;
    let mut served = Vec::with_capacity(apis.len());
    let mut watched = Vec::new();
    let mut workflows = Vec::with_capacity(apis.len());
    for api in &apis {
        let in_api = |e: anyhow::Error| e.context(format!("API `{}`", api.name));
        // Its spec converted, and its workflows (`arazzo:`, or an Arazzo document as `spec`).
        let entry = crate::arazzo::entry(api).await.map_err(in_api)?;
        if args.watch {
            watched.push((served.len(), api.name.clone(), entry.opts));
        }
        workflows.push(entry.workflows);
        served.push(ApiServing {
            name: api.name.clone(),
            set: entry.set,
            options: api.options.clone(),
        });
    }
    let workflows = if workflows.iter().all(Vec::is_empty) {
        None
    } else {
        let parts = served
            .iter()
            .map(|a| ApiInfo::split(&a.name, a.set.clone()))
            .collect();
        let (set, _) = merge(parts).map_err(|e| super::user_error(anyhow::Error::new(e)))?;
        crate::arazzo::of_apis(&apis, &workflows, &set)
    };
    let label = served
        .iter()
        .map(|a| a.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let on_start: Option<OnStart> = if args.watch {
        Some(Box::new(move |server: &ProxyServer| {
            for (i, name, opts) in watched {
                spawn_watch(opts, server.clone(), Some((i, name)));
            }
        }))
    } else {
        None
    };
    let serving = Serving {
        program: "openapi-mcp".to_string(),
        label: format!("{} APIs ({label})", served.len()),
        dispatcher: None,
        on_start,
        watched: args.watch,
        oauth_proxy: Some(openapi_mcp_oauth_proxy::factory),
        workflows,
    };
    serve_apis(served, &args.serve, serving)
        .await
        .map_err(|e| match e {
            StartError::Input(u) => anyhow::Error::new(u),
            other => anyhow::Error::new(other),
        })?;
    Ok(ExitCode::SUCCESS)
}

/// Polls the spec file and reloads it when it changes (the whole pipeline: overrides and lock
/// included); a spec that fails to load, or that the overrides or the lock no longer fit, keeps
/// the old tools. `api`: the index and name of the API whose spec it is, when the server
/// serves several (the other APIs keep their tools).
fn spawn_watch(opts: PipelineOptions, server: ProxyServer, api: Option<(usize, String)>) {
    let of_api = api
        .as_ref()
        .map(|(_, name)| format!("API {name}: "))
        .unwrap_or_default();
    let SpecSource::Path(path) = opts.source.clone() else {
        tracing::warn!("{of_api}--watch works with spec files, not URLs; not watching");
        return;
    };
    tokio::spawn(async move {
        let mut last = modified(&path);
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let now = modified(&path);
            if now == last {
                continue;
            }
            last = now;
            match pipeline::run(&opts).await {
                Ok(out) => {
                    let tools = out.conversion.tools;
                    let n = tools.tools.len();
                    let changed = match &api {
                        None => server.replace_tools(tools).await,
                        Some((i, _)) => match server.replace_api_tools(*i, tools).await {
                            Ok(changed) => changed,
                            Err(e) => {
                                tracing::warn!(
                                    "{of_api}spec changed but cannot be served with the other APIs, keeping the previous tools: {e}"
                                );
                                continue;
                            }
                        },
                    };
                    if changed {
                        tracing::info!("{of_api}spec reloaded: {n} tools; clients notified");
                    }
                }
                Err(e) => {
                    let what = match e.stage() {
                        Stage::Load => "failed to load",
                        Stage::Overrides => "the overrides no longer apply",
                        Stage::Lock => "the lock file no longer applies",
                    };
                    server.reload_failed();
                    let e = anyhow::Error::new(e);
                    tracing::warn!(
                        "{of_api}spec changed but {what}, keeping the previous tools: {e:#}"
                    );
                }
            }
        }
    });
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}
