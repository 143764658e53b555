//! `openapi-mcp diff OLD NEW`: what changed for MCP clients between two versions of a spec.

use std::io::Write;

use anyhow::Context;
use openapi_mcp_convert::SpecSource;
use openapi_mcp_convert::pipeline::{self, LockMode, Stage};

use crate::args::DiffArgs;

pub async fn run(args: DiffArgs) -> anyhow::Result<std::process::ExitCode> {
    // Both versions go through the same pipeline, under the same overrides and lock (read, never
    // written: `diff` only compares).
    let mut opts =
        super::pipeline_options(&args.spec, args.spec.tool_options()?, LockMode::Compare);
    let mut sides = Vec::with_capacity(2);
    for (label, spec) in [("old", &args.spec.spec), ("new", &args.new)] {
        opts.source = SpecSource::parse(spec);
        let out = match pipeline::run(&opts).await {
            Ok(out) => out,
            Err(e) => {
                let stage = e.stage();
                let err = super::pipeline_error(e);
                return Err(match stage {
                    Stage::Load => err.context(format!("loading the {label} spec {spec}")),
                    Stage::Overrides => {
                        err.context(format!("applying the overrides to the {label} spec"))
                    }
                    Stage::Lock => err,
                });
            }
        };
        let c = out.conversion;
        super::print_overlay_warnings(&opts, &c);
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
