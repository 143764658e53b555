//! `openapi-mcp proxy`: serve the tools and forward calls.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use openapi_mcp_convert::{SpecSource, convert, load};
use openapi_mcp_runtime::serve::{Serving, serve};
use openapi_mcp_runtime::server::ProxyServer;

use crate::args::{ProxyArgs, SpecArgs};

pub async fn run(args: ProxyArgs) -> anyhow::Result<ExitCode> {
    // Checked before any work (pins only in hybrid mode, valid globs).
    args.serve.tool_mode()?;
    let conversion = super::load_and_convert(&args.spec).await?;
    let on_start: Option<Box<dyn FnOnce(&ProxyServer) + Send>> = if args.watch {
        let spec = args.spec.clone();
        Some(Box::new(move |server: &ProxyServer| {
            spawn_watch(&spec, server.clone())
        }))
    } else {
        None
    };
    let serving = Serving {
        program: "openapi-mcp".to_string(),
        label: args.spec.spec.clone(),
        dispatcher: None,
        on_start,
    };
    serve(conversion.tools, &args.serve, serving).await?;
    Ok(ExitCode::SUCCESS)
}

/// Polls the spec file and reloads it when it changes; a spec that fails to load keeps the old tools.
fn spawn_watch(spec: &SpecArgs, server: ProxyServer) {
    let SpecSource::Path(path) = SpecSource::parse(&spec.spec) else {
        tracing::warn!("--watch works with spec files, not URLs; not watching");
        return;
    };
    let spec = spec.clone();
    tokio::spawn(async move {
        let mut last = modified(&path);
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let now = modified(&path);
            if now == last {
                continue;
            }
            last = now;
            let Ok(opts) = spec.tool_options() else {
                continue;
            };
            match load(&SpecSource::Path(path.clone())).await {
                Ok(loaded) => {
                    let mut c = convert(&loaded, &opts);
                    if let Err(e) = super::apply_overrides(&spec, &opts, &mut c) {
                        tracing::warn!(
                            "spec changed but the overrides no longer apply, keeping the previous tools: {e:#}"
                        );
                        continue;
                    }
                    if let Err(e) = super::apply_lock(&spec, &opts, &mut c, super::LockMode::Read) {
                        tracing::warn!(
                            "spec changed but the lock file no longer applies, keeping the previous tools: {e:#}"
                        );
                        continue;
                    }
                    let n = c.tools.tools.len();
                    if server.replace_tools(c.tools).await {
                        tracing::info!("spec reloaded: {n} tools; clients notified");
                    }
                }
                Err(e) => tracing::warn!(
                    "spec changed but failed to load, keeping the previous tools: {e}"
                ),
            }
        }
    });
}

fn modified(path: &PathBuf) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}
