pub mod generate;
pub mod lint;
pub mod proxy;
pub mod tools;

use std::io::Write;

use anyhow::Context;
use openapi_mcp_runtime::overrides::Overrides;
use openapi_mcp_runtime::{Conversion, SpecSource, convert, load};

use crate::args::SpecArgs;

/// Loads and converts the spec, printing diagnostics to stderr.
pub async fn load_and_convert(args: &SpecArgs) -> anyhow::Result<Conversion> {
    let opts = args.tool_options()?;
    let source = SpecSource::parse(&args.spec);
    let spec = load(&source)
        .await
        .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))?;
    let mut conversion = convert(&spec, &opts);
    apply_overrides(args, &opts, &mut conversion)?;
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    for d in conversion.diagnostics.clone().into_sorted() {
        writeln!(err, "{d}").context("writing diagnostics")?;
    }
    Ok(conversion)
}

/// Applies `--overrides FILE`, if given (after the conversion and its client profile).
pub fn apply_overrides(
    args: &SpecArgs,
    opts: &openapi_mcp_runtime::ToolOptions,
    conversion: &mut Conversion,
) -> anyhow::Result<()> {
    let Some(path) = &args.overrides else {
        return Ok(());
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading overrides file {}", path.display()))
        .context(crate::BAD_INPUT)?;
    let overrides = Overrides::parse(&path.display().to_string(), &text)
        .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))?;
    overrides
        .apply(&mut conversion.tools, opts)
        .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))
}
