//! `openapi-mcp tools`: the tool list a spec converts to (a table, `--json`, or `--stats`), and
//! the `--lock` file written for it.

use std::io::Write;

use anyhow::Context;
use openapi_mcp_convert::pipeline::LockMode;

use crate::args::ToolsArgs;

pub async fn run(args: ToolsArgs) -> anyhow::Result<std::process::ExitCode> {
    if crate::arazzo::is_document(&args.spec.spec) || !args.spec.arazzo.is_empty() {
        return crate::arazzo::list_tools(&args).await;
    }
    let lock_mode = if args.update_lock {
        LockMode::Update
    } else {
        LockMode::ReadOrCreate
    };
    let opts = super::pipeline_options(&args.spec, args.spec.tool_options()?, lock_mode);
    let conversion = super::load_and_convert(&opts).await?;
    // Stdout is line-buffered: pretty JSON of a large API is ~10^5 lines, one write(2) each.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if args.stats {
        print_stats(&mut out, &conversion.tools)?;
    } else if args.json {
        // As served: with the `_select` argument of tools with JSON results.
        let tools: Vec<rmcp_tool::Tool> = conversion
            .tools
            .tools
            .iter()
            .map(|t| openapi_mcp_runtime::server::served_tool(t))
            .collect();
        serde_json::to_writer_pretty(&mut out, &tools).context("writing JSON")?;
        writeln!(out)?;
    } else {
        let w = conversion
            .tools
            .tools
            .iter()
            .map(|t| t.name().len())
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(
            out,
            "{:<w$}  {:<7} {:<40} {:>4}  OUTPUT",
            "NAME", "METHOD", "PATH", "ARGS"
        )?;
        for t in &conversion.tools.tools {
            writeln!(
                out,
                "{:<w$}  {:<7} {:<40} {:>4}  {}",
                t.name(),
                t.route.method.as_str(),
                t.route.path,
                t.route.args.len(),
                if t.has_output_schema() { "yes" } else { "no" }
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
    out.flush().context("writing to stdout")?;
    if args.strict && !conversion.diagnostics.is_empty() {
        return Ok(std::process::ExitCode::from(1));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// The tokenizer `--stats` counts with (embedded in tiktoken-rs: no network at run time).
const TOKENIZER: &str = "o200k_base";
/// Above these, `--stats` recommends `--mode dynamic`.
const DYNAMIC_TOKENS: usize = 50_000;
const DYNAMIC_TOOLS: usize = 100;

fn count_tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// Bytes and tokens of the `tools/list` result serving `tools`.
fn payload(tools: &[rmcp_tool::Tool]) -> anyhow::Result<(usize, usize)> {
    let json = serde_json::to_string(&serde_json::json!({ "tools": tools }))?;
    Ok((json.len(), count_tokens(&json)))
}

fn print_stats(
    out: &mut impl Write,
    set: &openapi_mcp_runtime::model::ToolSet,
) -> anyhow::Result<()> {
    use openapi_mcp_runtime::modes::dynamic::ToolMode;
    use openapi_mcp_runtime::server::ToolState;

    let mut sizes = Vec::with_capacity(set.tools.len());
    for t in &set.tools {
        let json = serde_json::to_string(&openapi_mcp_runtime::server::served_tool(t))?;
        sizes.push((t.name().to_string(), json.len(), count_tokens(&json)));
    }
    let w = sizes.iter().map(|s| s.0.len()).max().unwrap_or(4).max(4);
    writeln!(out, "{:<w$}  {:>9}  {:>8}", "NAME", "BYTES", "TOKENS")?;
    for (name, bytes, tokens) in &sizes {
        writeln!(out, "{name:<w$}  {bytes:>9}  {tokens:>8}")?;
    }
    let mut heaviest: Vec<&(String, usize, usize)> = sizes.iter().collect();
    heaviest.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    writeln!(out, "\nHeaviest tools:")?;
    for (name, bytes, tokens) in heaviest.iter().take(10) {
        writeln!(out, "  {name:<w$}  {bytes:>9}  {tokens:>8}")?;
    }

    let all: Vec<rmcp_tool::Tool> = set
        .tools
        .iter()
        .map(|t| openapi_mcp_runtime::server::served_tool(t))
        .collect();
    let (tools_bytes, tools_tokens) = payload(&all)?;
    let dynamic = ToolState::with_mode(set.clone(), &ToolMode::Dynamic);
    let (dyn_bytes, dyn_tokens) = payload(dynamic.tools())?;
    let code = ToolState::with_mode(set.clone(), &ToolMode::Code(Default::default()));
    let (code_bytes, code_tokens) = payload(code.tools())?;
    // What one describe_operation answer costs in each mode: the JSON Schemas (dynamic), or the
    // TypeScript declaration (code).
    let (mut json_describe, mut ts_describe) = (0usize, 0usize);
    for t in &set.tools {
        let v = openapi_mcp_runtime::modes::dynamic::describe(t);
        json_describe += count_tokens(&serde_json::to_string_pretty(&v)?);
        ts_describe += count_tokens(&openapi_mcp_runtime::modes::code::declaration(t));
    }
    let json_describe = json_describe.checked_div(set.tools.len()).unwrap_or(0);
    let ts_describe = ts_describe.checked_div(set.tools.len()).unwrap_or(0);
    let n = sizes.len();
    let mut per_tool: Vec<usize> = sizes.iter().map(|s| s.2).collect();
    per_tool.sort_unstable();
    let avg = per_tool.iter().sum::<usize>().checked_div(n).unwrap_or(0);
    let median = per_tool.get(n / 2).copied().unwrap_or(0);
    let max = per_tool.last().copied().unwrap_or(0);
    writeln!(
        out,
        "\ntools/list payload (tokens counted with {TOKENIZER}, tiktoken-rs):"
    )?;
    writeln!(
        out,
        "  --mode tools    {n:>5} tools  {tools_bytes:>10} bytes  {tools_tokens:>9} tokens"
    )?;
    writeln!(
        out,
        "  --mode dynamic  {:>5} tools  {dyn_bytes:>10} bytes  {dyn_tokens:>9} tokens  (+ one describe_operation per operation used: ~{json_describe} tokens of JSON Schema on average)",
        dynamic.tools().len()
    )?;
    writeln!(
        out,
        "  --mode code     {:>5} tools  {code_bytes:>10} bytes  {code_tokens:>9} tokens  (+ one describe_operation per operation used: ~{ts_describe} tokens of TypeScript on average; dependent calls in one execute)",
        code.tools().len()
    )?;
    writeln!(
        out,
        "  per tool: average {avg} tokens, median {median}, largest {max}"
    )?;
    let recommendation = if tools_tokens > DYNAMIC_TOKENS || n > DYNAMIC_TOOLS {
        format!(
            "use `proxy --mode dynamic` ({n} tools / {tools_tokens} tokens exceed {DYNAMIC_TOOLS} tools or {DYNAMIC_TOKENS} tokens; dynamic saves {:.2}% of the tools/list tokens), or `--mode hybrid --pin GLOB` to keep the operations used most as direct tools",
            if tools_tokens == 0 {
                0
            } else {
                100 - dyn_tokens * 100 / tools_tokens.max(1)
            }
        )
    } else if tools_tokens > DYNAMIC_TOKENS / 2 || n > DYNAMIC_TOOLS / 2 {
        "`--mode tools` works; consider filters (--include-tag, --include-op) or `--mode hybrid` if the model picks the wrong tools".to_string()
    } else {
        "`--mode tools` (the default): the tool list is small enough to serve whole".to_string()
    };
    writeln!(out, "\nRecommendation: {recommendation}.")?;
    Ok(())
}

mod rmcp_tool {
    pub use openapi_mcp_runtime::rmcp::model::Tool;
}
