//! `openapi-mcp lint --client X SPEC`: what that client would reject or degrade in the tool list.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use openapi_mcp_convert::pipeline::{self, LockMode};
use openapi_mcp_convert::profile::{self, ClientProfile, Level};

use crate::args::LintArgs;

pub async fn run(args: LintArgs) -> anyhow::Result<ExitCode> {
    let target = ClientProfile {
        client: args.spec.client,
        server_name: args.spec.server_name.clone(),
    };
    // Lint the tool list as served without a profile (with the overrides, if any).
    let mut opts = args.spec.tool_options()?;
    opts.client = ClientProfile::default();
    let opts = super::pipeline_options(&args.spec, opts, LockMode::Read);
    let out = pipeline::run(&opts).await.map_err(super::pipeline_error)?;
    if let Some(lock) = &out.lock {
        super::report_lock(lock)?;
    }
    let conversion = out.conversion;
    super::print_overlay_warnings(&opts, &conversion);
    let issues = profile::check(&conversion.tools, &target);

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &issues).context("writing JSON")?;
        writeln!(out)?;
    } else {
        for i in &issues {
            writeln!(out, "{i}")?;
        }
    }
    let rejects = issues.iter().filter(|i| i.level == Level::Reject).count();
    let warnings = issues.len() - rejects;
    let mut tools: Vec<&str> = issues.iter().map(|i| i.tool.as_str()).collect();
    tools.sort_unstable();
    tools.dedup();
    let fixable = issues.iter().filter(|i| i.fixed).count();
    let client = target.client.as_str();
    let fixes = if target.client == profile::Client::Generic {
        String::new()
    } else {
        format!("; serving with `--client {client}` fixes {fixable} of them")
    };
    eprintln!(
        "openapi-mcp lint --client {client}: {} tools, {} with findings; {rejects} errors (rejected), {warnings} warnings (degraded){fixes}",
        conversion.tools.tools.len(),
        tools.len(),
    );
    let fail = rejects > 0 || (args.strict && warnings > 0);
    Ok(if fail {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
