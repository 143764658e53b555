//! `openapi-mcp diff OLD NEW`: what changed for MCP clients between two versions of a spec.

use std::io::Write;

use anyhow::Context;
use openapi_mcp_convert::lock::Lock;
use openapi_mcp_convert::{Conversion, SpecSource, convert, load};

use crate::args::DiffArgs;

pub async fn run(args: DiffArgs) -> anyhow::Result<std::process::ExitCode> {
    let opts = args.spec.tool_options()?;
    let lock = match &args.spec.lock {
        None => None,
        Some(path) => {
            let file = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading lock file {file}"))
                .context(crate::BAD_INPUT)?;
            Some(
                Lock::parse(&file, &text, opts.max_name_len.clamp(16, 128))
                    .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))?,
            )
        }
    };
    let mut sides = Vec::with_capacity(2);
    for (label, spec) in [("old", &args.spec.spec), ("new", &args.new)] {
        let loaded = load(&SpecSource::parse(spec))
            .await
            .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))
            .with_context(|| format!("loading the {label} spec {spec}"))?;
        let mut c: Conversion = convert(&loaded, &opts);
        super::apply_overrides(&args.spec, &opts, &mut c)
            .with_context(|| format!("applying the overrides to the {label} spec"))?;
        if let Some(lock) = &lock {
            lock.apply(&mut c.tools, &opts)
                .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))?;
        }
        eprintln!(
            "{label}: {spec}: {} tools ({} diagnostics; see `openapi-mcp tools`)",
            c.tools.tools.len(),
            c.diagnostics.len()
        );
        sides.push(c.tools);
    }
    let d = openapi_mcp_convert::diff::diff(&sides[0], &sides[1]);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &d.to_json()).context("writing JSON")?;
        writeln!(out)?;
    } else {
        write!(out, "{}", d.to_table())?;
    }
    Ok(if d.is_breaking() {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    })
}
