//! Which operations become tools: include/exclude by tag, operationId or tool name, path, method.

use globset::{Glob, GlobMatcher};

use crate::model::HttpMethod;

/// A compiled glob pattern (`*`, `?`, `[...]`, `{a,b}`).
#[derive(Clone, Debug)]
pub struct Pattern {
    text: String,
    matcher: GlobMatcher,
}

/// A glob that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid pattern {pattern:?}: {reason}")]
pub struct PatternError {
    pub pattern: String,
    /// Why (in the message: the command line shows this error's text only).
    pub reason: globset::Error,
}

impl Pattern {
    pub fn new(text: &str) -> Result<Self, PatternError> {
        let glob = Glob::new(text).map_err(|reason| PatternError {
            pattern: text.to_string(),
            reason,
        })?;
        Ok(Self {
            text: text.to_string(),
            matcher: glob.compile_matcher(),
        })
    }
    /// A pattern for paths: `{` and `}` are literal, so `/pets/{petId}` matches that template.
    pub fn path(text: &str) -> Result<Self, PatternError> {
        let escaped = text.replace('{', "[{]").replace('}', "[}]");
        let glob = Glob::new(&escaped).map_err(|reason| PatternError {
            pattern: text.to_string(),
            reason,
        })?;
        Ok(Self {
            text: text.to_string(),
            matcher: glob.compile_matcher(),
        })
    }
    pub fn matches(&self, s: &str) -> bool {
        self.matcher.is_match(s)
    }
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Filters; within a kind any pattern matches, across kinds all given kinds must match.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub include_tags: Vec<Pattern>,
    pub exclude_tags: Vec<Pattern>,
    /// Matched against the operationId and the tool's base name (without prefix).
    pub include_operations: Vec<Pattern>,
    pub exclude_operations: Vec<Pattern>,
    pub include_paths: Vec<Pattern>,
    pub exclude_paths: Vec<Pattern>,
    /// Only these methods (all when empty).
    pub methods: Vec<HttpMethod>,
    pub exclude_deprecated: bool,
}

/// What a filter looks at.
pub struct OpFacts<'a> {
    pub method: HttpMethod,
    pub path: &'a str,
    pub operation_id: Option<&'a str>,
    pub tool_base_name: &'a str,
    pub tags: &'a [String],
    pub deprecated: bool,
}

impl Filter {
    /// Whether any pattern looks at the operationId or tool base name.
    pub fn matches_operations(&self) -> bool {
        !self.include_operations.is_empty() || !self.exclude_operations.is_empty()
    }

    pub fn matches(&self, op: &OpFacts<'_>) -> bool {
        if self.exclude_deprecated && op.deprecated {
            return false;
        }
        if !self.methods.is_empty() && !self.methods.contains(&op.method) {
            return false;
        }
        let tag_hit = |ps: &[Pattern]| ps.iter().any(|p| op.tags.iter().any(|t| p.matches(t)));
        let op_hit = |ps: &[Pattern]| {
            ps.iter().any(|p| {
                op.operation_id.is_some_and(|id| p.matches(id)) || p.matches(op.tool_base_name)
            })
        };
        let path_hit = |ps: &[Pattern]| ps.iter().any(|p| p.matches(op.path));
        if !self.include_tags.is_empty() && !tag_hit(&self.include_tags) {
            return false;
        }
        if !self.include_operations.is_empty() && !op_hit(&self.include_operations) {
            return false;
        }
        if !self.include_paths.is_empty() && !path_hit(&self.include_paths) {
            return false;
        }
        !(tag_hit(&self.exclude_tags)
            || op_hit(&self.exclude_operations)
            || path_hit(&self.exclude_paths))
    }
}
