//! Diagnostics: problems found in a spec, each with the place it was found.

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
