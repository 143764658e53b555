//! `openapi-mcp proxy`: serve the tools and forward calls.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use openapi_mcp_convert::SpecSource;
use openapi_mcp_convert::pipeline::{self, LockMode, PipelineOptions, Stage};
use openapi_mcp_runtime::serve::{OnStart, Serving, StartError, serve};
use openapi_mcp_runtime::server::ProxyServer;

use crate::args::ProxyArgs;

pub async fn run(args: ProxyArgs) -> anyhow::Result<ExitCode> {
    // Checked before any work (pins only in hybrid mode, valid globs).
    args.serve.tool_mode()?;
    let opts = super::pipeline_options(&args.spec, args.spec.tool_options()?, LockMode::Read);
    let conversion = super::load_and_convert(&opts).await?;
    let watched = args.watch;
    let on_start: Option<OnStart> = if args.watch {
        // The reload runs the same pipeline with the same options (checked above).
        Some(Box::new(move |server: &ProxyServer| {
            spawn_watch(opts, server.clone())
        }))
    } else {
        None
    };
    let serving = Serving {
        program: "openapi-mcp".to_string(),
        label: args.spec.spec.clone(),
        dispatcher: None,
        on_start,
        watched,
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

/// Polls the spec file and reloads it when it changes (the whole pipeline: overrides and lock
/// included); a spec that fails to load, or that the overrides or the lock no longer fit, keeps
/// the old tools.
fn spawn_watch(opts: PipelineOptions, server: ProxyServer) {
    let SpecSource::Path(path) = opts.source.clone() else {
        tracing::warn!("--watch works with spec files, not URLs; not watching");
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
                    if server.replace_tools(tools).await {
                        tracing::info!("spec reloaded: {n} tools; clients notified");
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
                    tracing::warn!("spec changed but {what}, keeping the previous tools: {e:#}");
                }
            }
        }
    });
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}
