//! Diagnostics: problems found in a spec, each with the place it was found; and the one error
//! of the files the passes read (`--overrides`, `--lock`), located by key.

use std::fmt;

use openapi_mcp_toolset::Location;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The operation was skipped: it does not become a tool.
    Error,
    /// Something was degraded or ignored; the tool still exists.
    Warning,
}

/// One problem, located as `file#/json/pointer`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The node the problem is about (`file#/pointer` in messages and JSON).
    pub location: Location,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{sev}: {}: {}", self.location, self.message)
    }
}

/// Collects diagnostics; output order is stable (sorted by location, then message).
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, severity: Severity, location: Location, message: impl Into<String>) {
        self.items.push(Diagnostic {
            severity,
            location,
            message: message.into(),
        });
    }
    pub fn error(&mut self, location: Location, message: impl Into<String>) {
        self.push(Severity::Error, location, message)
    }
    pub fn warning(&mut self, location: Location, message: impl Into<String>) {
        self.push(Severity::Warning, location, message)
    }
    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items)
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn errors(&self) -> usize {
        self.items
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }
    /// Sorted, deduplicated diagnostics.
    pub fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.items.sort_by(|a, b| {
            (&a.location, a.severity, a.message.as_str()).cmp(&(
                &b.location,
                b.severity,
                b.message.as_str(),
            ))
        });
        self.items.dedup();
        self.items
    }
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }
}

/// The files the passes read besides the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassFile {
    /// `--overrides FILE`.
    Overrides,
    /// `--lock FILE`.
    Lock,
}

/// A problem in a file a pass reads: which file, the dotted key path inside it (e.g.
/// `tools.getPet.pin.tenant`, `operations.getPet.name`; empty for the whole file), and what is
/// wrong. The overrides' and the lock's errors ([`crate::overrides::OverrideError`],
/// [`crate::lock::LockError`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{file}: {}{message}", match kind { PassFile::Lock => "lock file ", PassFile::Overrides => "" }, if key.is_empty() { String::new() } else { format!("{key}: ") })]
pub struct FileError {
    pub kind: PassFile,
    pub file: String,
    pub key: String,
    pub message: String,
}

impl FileError {
    pub fn new(kind: PassFile, file: &str, key: impl Into<String>, message: String) -> Self {
        Self {
            kind,
            file: file.to_string(),
            key: key.into(),
            message,
        }
    }
}
