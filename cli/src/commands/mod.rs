//! The subcommands. Each runs the conversion through [`openapi_mcp_convert::pipeline`] and
//! prints its own results; this module holds what they share: the pipeline's options from the
//! command line, its errors as user errors (exit code 1), and the lock and diagnostics lines on
//! stderr.

pub mod bundle;
pub mod config;
pub mod diff;
pub mod generate;
pub mod lint;
pub mod proxy;
pub mod tools;

use std::io::Write;

use anyhow::Context;
use openapi_mcp_convert::pipeline::{
    self, LockMode, LockOutcome, Output, PipelineError, PipelineOptions,
};
use openapi_mcp_convert::{Conversion, SpecSource, ToolOptions};
use openapi_mcp_runtime::serve::exit::UserError;

use crate::args::SpecArgs;

/// The pipeline's options for `args` (`tool_options` from [`SpecArgs::tool_options`], possibly
/// adjusted, as `lint` does).
pub fn pipeline_options(
    args: &SpecArgs,
    tool_options: ToolOptions,
    lock_mode: LockMode,
) -> PipelineOptions {
    PipelineOptions {
        source: SpecSource::parse(&args.spec),
        load_options: openapi_mcp_convert::load::LoadOptions {
            private_refs: !args.no_private_refs,
            ..Default::default()
        },
        tool_options,
        overlays: args.overlay.clone(),
        overrides: args.overrides.clone(),
        lock: args.lock.clone(),
        lock_mode,
    }
}

/// A pipeline error for `main`: marked as the user's when it is (exit code 1).
pub fn pipeline_error(e: PipelineError) -> anyhow::Error {
    if e.is_user_error() {
        anyhow::Error::new(UserError::new(e))
    } else {
        anyhow::Error::new(e)
    }
}

/// An error caused by the user's input (exit code 1), with its message and causes unchanged.
pub fn user_error(e: anyhow::Error) -> anyhow::Error {
    anyhow::Error::new(UserError::new(e))
}

/// Runs the pipeline, then prints the lock lines and the diagnostics to stderr (`tools`,
/// `proxy`, `generate`).
pub async fn load_and_convert(opts: &PipelineOptions) -> anyhow::Result<Conversion> {
    let out = pipeline::run(opts).await.map_err(pipeline_error)?;
    let Output {
        conversion, lock, ..
    } = out;
    if let Some(lock) = &lock {
        report_lock(lock)?;
    }
    print_diagnostics(&conversion)?;
    Ok(conversion)
}

/// The diagnostics located in the `--overlay` files (their actions that select nothing), one per
/// line on stderr: for `lint` and `diff`, which leave the spec's own diagnostics to `tools`.
pub fn print_overlay_warnings(opts: &PipelineOptions, conversion: &Conversion) {
    let files: Vec<String> = opts
        .overlays
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    for d in conversion.diagnostics.clone().into_sorted() {
        if files.iter().any(|f| f == d.location.doc()) {
            eprintln!("{d}");
        }
    }
}

/// Every diagnostic, sorted, one per line on stderr.
fn print_diagnostics(conversion: &Conversion) -> anyhow::Result<()> {
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    for d in conversion.diagnostics.clone().into_sorted() {
        writeln!(err, "{d}").context("writing diagnostics")?;
    }
    Ok(())
}

/// Writes the updated lock file when there is one, and reports on stderr what the lock did:
/// the names written, or its drift; and new operations whose name was locked to another one.
pub fn report_lock(lock: &LockOutcome) -> anyhow::Result<()> {
    let file = &lock.file;
    let report = &lock.report;
    if let Some(write) = &lock.write {
        if write.changed {
            std::fs::write(&lock.path, &write.text)
                .with_context(|| format!("writing lock file {file}"))?;
        }
        eprintln!(
            "lock file {file}: {} names ({} new, {} kept, {} marked removed)",
            write.lock.entries.len(),
            report.added.len(),
            report.kept,
            write.removed()
        );
    } else if report.drift() {
        for line in report.drift_lines() {
            eprintln!("warning: lock file {file} is out of date: {line}");
        }
        eprintln!(
            "warning: run `openapi-mcp tools SPEC --lock {file} --update-lock` to record the names"
        );
    }
    for (id, wanted, given) in &report.moved {
        eprintln!(
            "warning: operation `{id}` would be named `{wanted}`, which {file} locks to another operation; named `{given}`"
        );
    }
    Ok(())
}
