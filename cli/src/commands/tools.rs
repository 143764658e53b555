use std::io::Write;

use anyhow::Context;

use crate::args::ToolsArgs;

pub async fn run(args: ToolsArgs) -> anyhow::Result<std::process::ExitCode> {
    let conversion = super::load_and_convert(&args.spec).await?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let tools: Vec<&rmcp_tool::Tool> = conversion.tools.tools.iter().map(|t| &t.tool).collect();
        serde_json::to_writer_pretty(&mut out, &tools).context("writing JSON")?;
        writeln!(out)?;
    } else {
        let w = conversion
            .tools
            .tools
            .iter()
            .map(|t| t.tool.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(
            out,
            "{:<w$}  {:<7} {:<40} {:>4}  {}",
            "NAME", "METHOD", "PATH", "ARGS", "OUTPUT"
        )?;
        for t in &conversion.tools.tools {
            writeln!(
                out,
                "{:<w$}  {:<7} {:<40} {:>4}  {}",
                t.tool.name,
                t.route.method.as_str(),
                t.route.path,
                t.route.args.len(),
                if t.tool.output_schema.is_some() {
                    "yes"
                } else {
                    "no"
                }
            )?;
        }
        let r = &conversion.report;
        writeln!(
            out,
            "\n{} tools from {} operations ({} skipped with errors, {} filtered out); {} diagnostics",
            r.tools,
            r.operations,
            r.failed,
            r.filtered,
            conversion.diagnostics.len()
        )?;
    }
    if args.strict && !conversion.diagnostics.is_empty() {
        return Ok(std::process::ExitCode::from(1));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

mod rmcp_tool {
    pub use openapi_mcp_runtime::rmcp::model::Tool;
}
