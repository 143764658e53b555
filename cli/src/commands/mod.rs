pub mod generate;
pub mod proxy;
pub mod tools;

use std::io::Write;

use anyhow::Context;
use openapi_mcp_runtime::{Conversion, SpecSource, convert, load};

use crate::args::SpecArgs;

/// Loads and converts the spec, printing diagnostics to stderr.
pub async fn load_and_convert(args: &SpecArgs) -> anyhow::Result<Conversion> {
    let opts = args.tool_options()?;
    let source = SpecSource::parse(&args.spec);
    let spec = load(&source)
        .await
        .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))?;
    let conversion = convert(&spec, &opts);
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    for d in conversion.diagnostics.clone().into_sorted() {
        writeln!(err, "{d}").context("writing diagnostics")?;
    }
    Ok(conversion)
}
