//! The conversion pipeline as one function: load -> convert (lower the spec to its operations,
//! build a tool from each) -> the passes over the tool set: the client profile, `--overrides`,
//! `--lock`; returning the tools and every pass's report.
//!
//! `tools`, `lint`, `diff`, `proxy` (and its `--watch` reload) and `generate` each ran these
//! steps with their own copy (the reload skipped the options' errors, `diff` read the lock its
//! own way), so a pass added to one was missing from another. They now all call [`run`]; what
//! they print stays theirs. Reading the overrides and lock files is part of the pipeline, with
//! typed errors naming the file (and the key, from [`OverrideError`] and [`LockError`]).

use std::path::PathBuf;

use crate::convert::{Conversion, ToolOptions, convert};
use crate::load::{LoadError, LoadOptions, SpecSource, load_edited, load_with};
use crate::lock::{Lock, LockError, LockReport};
use crate::overlay::{Overlay, OverlayError};
use crate::overrides::{OverrideError, Overrides};
use crate::profile::{self, Issue};

/// What `--lock FILE` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// The file must exist; names are taken from it and drift is reported (proxy, generate,
    /// lint). A missing file's error says how to create it.
    Read,
    /// The file must exist; names are taken from it (diff: both versions under one lock).
    Compare,
    /// Read it when it exists, and write it when it does not (`tools`).
    ReadOrCreate,
    /// Read it when it exists, and write the updated lock (`tools --update-lock`).
    Update,
}

/// Everything the pipeline needs: plain data, so any front end (the CLI, a test, an embedding
/// program) can fill it.
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    pub source: SpecSource,
    /// What the loader may read (size cap, private addresses for remote `$ref`s).
    pub load_options: LoadOptions,
    pub tool_options: ToolOptions,
    /// `--overlay FILE`s (Overlay 1.0.x), applied in order to the spec before it is loaded.
    pub overlays: Vec<PathBuf>,
    /// `--overrides FILE`.
    pub overrides: Option<PathBuf>,
    /// `--lock FILE`.
    pub lock: Option<PathBuf>,
    pub lock_mode: LockMode,
}

/// What [`run`] produced: the conversion (tools, diagnostics, counts) and what each pass did.
pub struct Output {
    pub conversion: Conversion,
    /// What the client profile (`ToolOptions::client`) changed in the tools, and what it found
    /// but could not fix ([`Issue::fixed`] false); empty for `generic`.
    pub profile: Vec<Issue>,
    /// The overrides file that was applied.
    pub overrides: Option<Overrides>,
    /// What the lock did, when one was given.
    pub lock: Option<LockOutcome>,
}

/// The lock pass's outcome.
#[derive(Debug)]
pub struct LockOutcome {
    /// The lock file.
    pub path: PathBuf,
    /// Its name in messages.
    pub file: String,
    /// What applying it changed, and its drift ([`LockReport::drift_lines`]; new operations
    /// whose name was locked to another one in [`LockReport::moved`]).
    pub report: LockReport,
    /// The lock to write back ([`LockMode::ReadOrCreate`] when the file did not exist,
    /// [`LockMode::Update`]); `None` when the file is only read.
    pub write: Option<LockWrite>,
}

/// A lock to write (the caller writes it: file output is the front end's business).
#[derive(Debug)]
pub struct LockWrite {
    /// The updated lock.
    pub lock: Lock,
    /// Its file text ([`Lock::to_text`]).
    pub text: String,
    /// Whether the file must be written: it does not exist, or its text changes.
    pub changed: bool,
}

impl LockWrite {
    /// Entries marked removed in the updated lock.
    pub fn removed(&self) -> usize {
        self.lock.entries.values().filter(|e| e.removed).count()
    }
}

/// Why the pipeline stopped. Every variant is caused by the user's input (see
/// [`PipelineError::is_user_error`]).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The spec could not be read or is not an OpenAPI document.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// An overlay could not be read, is not an Overlay 1.0.x document, or does not apply.
    #[error(transparent)]
    Overlay(OverlayError),
    #[error("reading overrides file {}", path.display())]
    OverridesRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The overrides file is not valid, or does not apply to this spec.
    #[error(transparent)]
    Overrides(OverrideError),
    #[error("reading lock file {file}{}", create_hint(*mode, file))]
    LockRead {
        file: String,
        mode: LockMode,
        #[source]
        source: std::io::Error,
    },
    /// The lock file is not valid, does not apply, or the updated lock cannot be written.
    #[error(transparent)]
    Lock(LockError),
}

/// How to create a lock file that `proxy`/`generate`/`lint` did not find.
fn create_hint(mode: LockMode, file: &str) -> String {
    if mode == LockMode::Compare {
        String::new()
    } else {
        format!(" (create it with `openapi-mcp tools SPEC --lock {file}`)")
    }
}

/// Which step of the pipeline failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Load,
    Overrides,
    Lock,
}

impl PipelineError {
    /// Whether the user's input caused it (the CLI exits 1 rather than 2): every variant is a
    /// spec, an overrides file or a lock file the user gave (a spec URL that cannot be fetched
    /// included, as the CLI has always counted it).
    pub fn is_user_error(&self) -> bool {
        match self {
            PipelineError::Load(_)
            | PipelineError::Overlay(_)
            | PipelineError::OverridesRead { .. }
            | PipelineError::Overrides(_)
            | PipelineError::LockRead { .. }
            | PipelineError::Lock(_) => true,
        }
    }

    /// The step that failed.
    pub fn stage(&self) -> Stage {
        match self {
            PipelineError::Load(_) | PipelineError::Overlay(_) => Stage::Load,
            PipelineError::OverridesRead { .. } | PipelineError::Overrides(_) => Stage::Overrides,
            PipelineError::LockRead { .. } | PipelineError::Lock(_) => Stage::Lock,
        }
    }
}

/// Loads and converts the spec, then applies the overrides and the lock.
pub async fn run(opts: &PipelineOptions) -> Result<Output, PipelineError> {
    let (spec, overlay_warnings) = if opts.overlays.is_empty() {
        (load_with(&opts.source, &opts.load_options).await?, None)
    } else {
        let max = opts.load_options.max_document_bytes;
        let overlays = opts
            .overlays
            .iter()
            .map(|p| Overlay::read(p, max))
            .collect::<Result<Vec<_>, _>>()
            .map_err(PipelineError::Overlay)?;
        let mut warnings = None;
        let spec = load_edited(&opts.source, &opts.load_options, |_, mut doc| {
            warnings =
                Some(Overlay::apply_all(&overlays, &mut doc).map_err(PipelineError::Overlay)?);
            Ok::<_, PipelineError>(doc)
        })
        .await?;
        (spec, warnings)
    };
    let mut conversion = convert(&spec, &opts.tool_options);
    if let Some(w) = overlay_warnings {
        conversion.diagnostics.extend(w);
    }
    // Freeing a large parsed spec (millions of small allocations, ~100 ms for a 13 MB one) is
    // off the start-up path: the tools are ready, the document is no longer needed.
    drop_in_background(spec);
    apply_passes(opts, conversion)
}

/// The passes after the conversion: the client profile, `--overrides` (a rename the profile's
/// client would reject is refused), then `--lock` (the lock holds the published names, so it
/// comes last).
pub fn apply_passes(
    opts: &PipelineOptions,
    mut conversion: Conversion,
) -> Result<Output, PipelineError> {
    let profile = profile::apply(&mut conversion.tools, &opts.tool_options.client);
    let overrides = match &opts.overrides {
        None => None,
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|source| PipelineError::OverridesRead {
                    path: path.clone(),
                    source,
                })?;
            let overrides = Overrides::parse(&path.display().to_string(), &text)
                .map_err(PipelineError::Overrides)?;
            overrides
                .apply(&mut conversion.tools, &opts.tool_options)
                .map_err(PipelineError::Overrides)?;
            Some(overrides)
        }
    };
    let lock = match &opts.lock {
        None => None,
        Some(path) => Some(apply_lock(
            path,
            opts.lock_mode,
            &opts.tool_options,
            &mut conversion,
        )?),
    };
    Ok(Output {
        conversion,
        profile,
        overrides,
        lock,
    })
}

fn apply_lock(
    path: &std::path::Path,
    mode: LockMode,
    opts: &ToolOptions,
    conversion: &mut Conversion,
) -> Result<LockOutcome, PipelineError> {
    let file = path.display().to_string();
    let max_len = opts.max_name_len.clamp(16, 128);
    let may_create = matches!(mode, LockMode::ReadOrCreate | LockMode::Update);
    let (lock, exists) = match std::fs::read_to_string(path) {
        Ok(text) => (
            Lock::parse(&file, &text, max_len).map_err(PipelineError::Lock)?,
            true,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && may_create => {
            (Lock::empty(&file), false)
        }
        Err(source) => {
            return Err(PipelineError::LockRead { file, mode, source });
        }
    };
    let report = lock
        .apply(&mut conversion.tools, opts)
        .map_err(PipelineError::Lock)?;
    let write = if mode == LockMode::Update || !exists {
        let next = lock.updated(&conversion.tools);
        next.check_writable(max_len).map_err(PipelineError::Lock)?;
        let text = next.to_text();
        let changed = !exists || text != lock.to_text();
        Some(LockWrite {
            lock: next,
            text,
            changed,
        })
    } else {
        None
    };
    Ok(LockOutcome {
        path: path.to_path_buf(),
        file,
        report,
        write,
    })
}

/// Drops `value` on a short-lived thread (inline when no thread can be started: the failed
/// spawn drops the closure and the value with it).
fn drop_in_background<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("drop".into())
        .spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::load_single;

    const SPEC: &str = "openapi: 3.0.3\ninfo: {title: Pets, version: '1'}\npaths:\n  /pets:\n    get:\n      operationId: listPets\n      responses: {'200': {description: ok}}\n";

    fn converted(opts: &PipelineOptions) -> Conversion {
        let spec = load_single(SPEC.as_bytes(), "pets.yaml").unwrap();
        convert(&spec, &opts.tool_options)
    }

    fn options(dir: &std::path::Path) -> PipelineOptions {
        PipelineOptions {
            load_options: Default::default(),
            source: SpecSource::Path(dir.join("pets.yaml")),
            tool_options: ToolOptions::default(),
            overlays: Vec::new(),
            overrides: None,
            lock: None,
            lock_mode: LockMode::Read,
        }
    }

    fn chain(e: &dyn std::error::Error) -> String {
        let mut parts = vec![e.to_string()];
        let mut cur = e.source();
        while let Some(c) = cur {
            parts.push(c.to_string());
            cur = c.source();
        }
        parts.join(": ")
    }

    #[test]
    fn overrides_then_lock_written_then_read() {
        let dir = std::env::temp_dir().join(format!("openapi-mcp-pipeline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ov = dir.join("ov.yaml");
        std::fs::write(&ov, "tools:\n  listPets:\n    name: all_pets\n").unwrap();
        let lock = dir.join("names.json");
        let _ = std::fs::remove_file(&lock);
        let mut opts = options(&dir);
        opts.overrides = Some(ov);
        opts.lock = Some(lock.clone());

        // Read: the lock must exist, and the error says how to create it.
        let err = apply_passes(&opts, converted(&opts)).err().unwrap();
        assert_eq!(err.stage(), Stage::Lock);
        assert!(err.is_user_error());
        let text = chain(&err);
        assert!(text.starts_with("reading lock file "), "{text}");
        assert!(
            text.contains("(create it with `openapi-mcp tools SPEC --lock "),
            "{text}"
        );
        opts.lock_mode = LockMode::Compare;
        let text = chain(&apply_passes(&opts, converted(&opts)).err().unwrap());
        assert!(!text.contains("create it"), "{text}");

        // ReadOrCreate: a missing lock is made from the tools (after the overrides).
        opts.lock_mode = LockMode::ReadOrCreate;
        let out = apply_passes(&opts, converted(&opts)).unwrap();
        assert!(out.overrides.is_some());
        assert_eq!(out.conversion.tools.tools[0].name(), "all_pets");
        let lock_out = out.lock.unwrap();
        let write = lock_out.write.unwrap();
        assert!(write.changed);
        assert!(write.text.contains("all_pets"));
        std::fs::write(&lock, &write.text).unwrap();

        // Read: names from the lock, nothing to write, no drift.
        opts.lock_mode = LockMode::Read;
        let out = apply_passes(&opts, converted(&opts)).unwrap();
        let lock_out = out.lock.unwrap();
        assert!(lock_out.write.is_none());
        assert!(!lock_out.report.drift());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_client_profile_is_the_first_pass_and_its_report_is_kept() {
        use crate::profile::{Client, ClientProfile, check};
        let dir = std::env::temp_dir().join("openapi-mcp-pipeline-profile");
        let mut opts = options(&dir);
        // `convert` leaves the tools as the spec gives them; the pass shapes them for the client.
        let gemini = ClientProfile::new(Client::Gemini);
        opts.tool_options.client = gemini.clone();
        let plain = converted(&opts);
        assert!(!check(&plain.tools, &gemini).is_empty());
        let out = apply_passes(&opts, plain).unwrap();
        assert!(!out.profile.is_empty());
        assert!(out.profile.iter().all(|i| i.fixed), "{:?}", out.profile);
        assert!(check(&out.conversion.tools, &gemini).is_empty());

        // What the profile cannot fix is kept too: this server name leaves Claude Code too few
        // characters for tool names.
        opts.tool_options.client = ClientProfile {
            client: Client::Claude,
            server_name: Some("a-server-name-that-leaves-claude-code-too-little".into()),
        };
        let out = apply_passes(&opts, converted(&opts)).unwrap();
        assert!(
            out.profile.iter().any(|i| i.tool == "pets_list_pets"
                && i.pointer == "/name"
                && !i.fixed
                && i.message.contains("--server-name")),
            "{:?}",
            out.profile
        );

        opts.tool_options.client = Default::default();
        let out = apply_passes(&opts, converted(&opts)).unwrap();
        assert!(out.profile.is_empty());
    }

    #[test]
    fn a_missing_overrides_file_names_the_file_and_keeps_the_io_error() {
        let dir = std::env::temp_dir().join("openapi-mcp-pipeline-no-such-dir");
        let mut opts = options(&dir);
        opts.overrides = Some(dir.join("ov.yaml"));
        let err = apply_passes(&opts, converted(&opts)).err().unwrap();
        assert_eq!(err.stage(), Stage::Overrides);
        let source = std::error::Error::source(&err).unwrap();
        assert!(source.is::<std::io::Error>());
        assert!(chain(&err).starts_with("reading overrides file "));
    }

    #[tokio::test]
    async fn a_missing_spec_is_a_load_error_with_the_io_error_as_source() {
        let opts = options(std::path::Path::new("/no/such/dir"));
        let err = run(&opts).await.err().unwrap();
        assert_eq!(err.stage(), Stage::Load);
        let PipelineError::Load(LoadError::Read { source, .. }) = &err else {
            panic!("{err:?}");
        };
        assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        let text = chain(&err);
        assert!(
            text.starts_with("/no/such/dir/pets.yaml: cannot read: "),
            "{text}"
        );
    }
}
