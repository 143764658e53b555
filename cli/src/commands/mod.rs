pub mod diff;
pub mod generate;
pub mod lint;
pub mod proxy;
pub mod tools;

use std::io::Write;

use anyhow::Context;
use openapi_mcp_convert::overrides::Overrides;
use openapi_mcp_convert::{Conversion, SpecSource, convert, load};

use crate::args::SpecArgs;

/// Loads and converts the spec, printing diagnostics to stderr.
pub async fn load_and_convert(args: &SpecArgs) -> anyhow::Result<Conversion> {
    load_and_convert_locked(args, LockMode::Read).await
}

/// [`load_and_convert`] with a choice of what `--lock FILE` does.
pub async fn load_and_convert_locked(
    args: &SpecArgs,
    lock: LockMode,
) -> anyhow::Result<Conversion> {
    let opts = args.tool_options()?;
    let source = SpecSource::parse(&args.spec);
    let spec = load(&source)
        .await
        .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))?;
    let mut conversion = convert(&spec, &opts);
    // Freeing a large parsed spec (millions of small allocations, ~100 ms for a 13 MB one) is
    // off the start-up path: the tools are ready, the document is no longer needed.
    drop_in_background(spec);
    apply_overrides(args, &opts, &mut conversion)?;
    apply_lock(args, &opts, &mut conversion, lock)?;
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    for d in conversion.diagnostics.clone().into_sorted() {
        writeln!(err, "{d}").context("writing diagnostics")?;
    }
    Ok(conversion)
}

/// Drops `value` on a short-lived thread (inline when no thread can be started: the failed
/// spawn drops the closure and the value with it).
fn drop_in_background<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("drop".into())
        .spawn(move || drop(value));
}

/// Applies `--overrides FILE`, if given (after the conversion and its client profile).
pub fn apply_overrides(
    args: &SpecArgs,
    opts: &openapi_mcp_convert::ToolOptions,
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

/// What `--lock FILE` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// The file must exist; names are taken from it and drift is warned about (proxy, generate).
    Read,
    /// Read it when it exists, and write it when it does not (`tools`).
    ReadOrCreate,
    /// Read it when it exists, and write the updated lock (`tools --update-lock`).
    Update,
}

/// Applies `--lock FILE`, if given (after the overrides: the lock holds the published names).
pub fn apply_lock(
    args: &SpecArgs,
    opts: &openapi_mcp_convert::ToolOptions,
    conversion: &mut Conversion,
    mode: LockMode,
) -> anyhow::Result<()> {
    use openapi_mcp_convert::lock::Lock;
    let Some(path) = &args.lock else {
        return Ok(());
    };
    let file = path.display().to_string();
    let max_len = opts.max_name_len.clamp(16, 128);
    let (lock, exists) = match std::fs::read_to_string(path) {
        Ok(text) => (
            Lock::parse(&file, &text, max_len)
                .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))?,
            true,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && mode != LockMode::Read => {
            (Lock::empty(&file), false)
        }
        Err(e) => {
            return Err(anyhow::Error::new(e)
                .context(format!(
                    "reading lock file {file} (create it with `openapi-mcp tools SPEC --lock {file}`)"
                ))
                .context(crate::BAD_INPUT));
        }
    };
    let report = lock
        .apply(&mut conversion.tools, opts)
        .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))?;
    let write = mode == LockMode::Update || !exists;
    if write {
        let next = lock.updated(&conversion.tools);
        next.check_writable(max_len)
            .map_err(|e| anyhow::Error::new(e).context(crate::BAD_INPUT))?;
        let text = next.to_text();
        if !exists || text != lock.to_text() {
            std::fs::write(path, &text).with_context(|| format!("writing lock file {file}"))?;
        }
        let removed = next.entries.values().filter(|e| e.removed).count();
        eprintln!(
            "lock file {file}: {} names ({} new, {} kept, {} marked removed)",
            next.entries.len(),
            report.added.len(),
            report.kept,
            removed
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
