//! Large APIs: instead of one MCP tool per operation, three discovery tools
//! (`search_operations` → `describe_operation` → `call_operation`) over a BM25 index of the
//! operations. `hybrid` mode serves some pinned operations as normal tools as well.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use openapi_mcp_toolset::filter::{Pattern, PatternError};
use openapi_mcp_toolset::model::{Exposure, HttpMethod, ToolDef};
use openapi_mcp_toolset::suggest::edit_distance;

/// How the proxy exposes the operations in `tools/list`.
#[derive(Clone, Debug, Default)]
pub enum ToolMode {
    /// One tool per operation.
    #[default]
    Tools,
    /// Only the three discovery tools.
    Dynamic,
    /// Operations matching a pin (tool name, operationId or tag glob) as normal tools, plus the
    /// discovery tools for the rest.
    Hybrid { pins: Vec<Pattern> },
}

impl ToolMode {
    /// The mode of `--mode` with its `--pin` globs (used, and required, only by `hybrid`). The
    /// error is a sentence for the command line.
    pub fn from_flags(mode: Exposure, pins: &[String]) -> Result<ToolMode, ModeError> {
        match mode {
            Exposure::Tools => Ok(ToolMode::Tools),
            Exposure::Dynamic => Ok(ToolMode::Dynamic),
            Exposure::Hybrid => {
                if pins.is_empty() {
                    return Err(ModeError::NoPins);
                }
                let pins = pins
                    .iter()
                    .map(|p| Pattern::new(p))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(ToolMode::Hybrid { pins })
            }
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            ToolMode::Tools => "tools",
            ToolMode::Dynamic => "dynamic",
            ToolMode::Hybrid { .. } => "hybrid",
        }
    }
}

/// Why `--mode` / `--pin` do not make a mode.
#[derive(Debug, thiserror::Error)]
pub enum ModeError {
    #[error("--mode hybrid needs at least one --pin GLOB (tool name, operationId or tag)")]
    NoPins,
    #[error(transparent)]
    Pin(#[from] PatternError),
}

/// Longest search query considered (characters); the rest is ignored.
pub const MAX_QUERY_CHARS: usize = 2000;

/// Name of the search tool.
pub const SEARCH: &str = "search_operations";
/// Name of the describe tool.
pub const DESCRIBE: &str = "describe_operation";
/// Name of the call tool.
pub const CALL: &str = "call_operation";

/// Default and largest number of search results.
pub const DEFAULT_LIMIT: usize = 10;
pub const MAX_LIMIT: usize = 50;

/// Which discovery tool a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meta {
    Search,
    Describe,
    Call,
}

impl Meta {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            SEARCH => Some(Meta::Search),
            DESCRIBE => Some(Meta::Describe),
            CALL => Some(Meta::Call),
            _ => None,
        }
    }
}

/// Whether an operation is pinned: a pattern matches its tool name, operationId or a tag.
pub fn is_pinned(def: &ToolDef, pins: &[Pattern]) -> bool {
    pins.iter().any(|p| {
        p.matches(def.name())
            || def.operation_id.as_deref().is_some_and(|id| p.matches(id))
            || def.tags.iter().any(|t| p.matches(t))
    })
}

fn object(v: Value) -> Arc<Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    }
}

/// The three discovery tools, described for a model (`api` is the API's title).
pub fn meta_tools(api: &str, operations: usize) -> Vec<Tool> {
    let mut search = Tool::new(
        SEARCH,
        format!(
            "Find operations of the {api} API ({operations} operations, not listed as tools). \
             Step 1 of 3: search with what you want to do in plain words (e.g. \"create an issue \
             in a repository\") or with keywords from an operation name or path. Returns the \
             best-matching operations ranked by relevance: name, HTTP method, path and summary. \
             Then call `{DESCRIBE}` with a name to get its arguments, and `{CALL}` to run it. \
             If nothing fits, search again with other words (synonyms, the resource's name)."
        ),
        object(json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What you want to do, in plain words, or keywords (resource, action, path segment)."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "default": DEFAULT_LIMIT,
                    "description": format!("Most results to return (default {DEFAULT_LIMIT}; capped at {MAX_LIMIT}).")
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })),
    )
    .with_title("Search API operations")
    .with_annotations(
        ToolAnnotations::with_title("Search API operations")
            .read_only(true)
            .idempotent(true)
            .open_world(false),
    );
    search.output_schema = Some(object(json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "method": {"type": "string"},
                        "path": {"type": "string"},
                        "summary": {"type": "string"},
                        "score": {"type": "number"}
                    },
                    "required": ["name", "method", "path", "summary"]
                }
            },
            "total_operations": {"type": "integer"}
        },
        "required": ["results"]
    })));
    let describe = Tool::new(
        DESCRIBE,
        format!(
            "Step 2 of 3: get the full definition of one {api} API operation found with \
             `{SEARCH}`: its description, `inputSchema` (the arguments to pass to `{CALL}`), \
             `outputSchema` and annotations (read-only, destructive, ...). Always describe an \
             operation before calling it the first time."
        ),
        object(json!({
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "minLength": 1,
                    "description": format!("Operation name exactly as returned by `{SEARCH}`.")
                }
            },
            "required": ["name"],
            "additionalProperties": false
        })),
    )
    .with_title("Describe an API operation")
    .with_annotations(
        ToolAnnotations::with_title("Describe an API operation")
            .read_only(true)
            .idempotent(true)
            .open_world(false),
    );
    let call = Tool::new(
        CALL,
        format!(
            "Step 3 of 3: call one {api} API operation (an HTTP request to the API) and return \
             its response. `name` is the operation name from `{SEARCH}`; `arguments` is an \
             object matching the operation's `inputSchema` from `{DESCRIBE}`. Arguments are \
             checked first: invalid ones are reported with their path and nothing is sent. \
             The operation may change data in the API (see its annotations)."
        ),
        object(json!({
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Operation name exactly as returned by search_operations."
                },
                "arguments": {
                    "type": "object",
                    "description": "The operation's arguments, as its inputSchema describes (default {}).",
                    "default": {}
                }
            },
            "required": ["name"],
            "additionalProperties": false
        })),
    )
    .with_title("Call an API operation")
    .with_annotations(
        ToolAnnotations::with_title("Call an API operation")
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true),
    );
    vec![search, describe, call]
}

/// Fields of an operation document, with their BM25F weight and length normalisation.
#[derive(Clone, Copy)]
enum Field {
    Name,
    Tags,
    Path,
    Summary,
    Params,
    Description,
    Verbs,
}

const FIELDS: usize = 7;
/// (weight, b) per field.
const FIELD_PARAMS: [(f32, f32); FIELDS] = [
    (3.0, 0.5),  // Name: tool name + operationId
    (2.0, 0.5),  // Tags
    (1.5, 0.5),  // Path segments
    (2.5, 0.5),  // Summary
    (0.5, 0.75), // Parameter names
    (0.6, 0.75), // Description (lower weight)
    (0.5, 0.0),  // Verbs implied by the HTTP method
];
const K1: f32 = 1.2;

/// One search hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Index of the operation in the tool set.
    pub op: usize,
    pub score: f32,
}

/// A BM25F index over operations (tool name/operationId, tags, path, summary, description,
/// parameter names).
#[derive(Clone, Debug, Default)]
pub struct SearchIndex {
    /// Operation index (in the tool set) of each document.
    docs: Vec<usize>,
    /// Deprecated documents rank a little lower.
    deprecated: Vec<bool>,
    lens: Vec<[u16; FIELDS]>,
    /// Distinct terms of each document's name and of its summary (for the coverage boost).
    name_terms: Vec<Vec<String>>,
    summary_terms: Vec<Vec<String>>,
    avg: [f32; FIELDS],
    /// term -> (document, per-field term frequency).
    postings: HashMap<String, Vec<(u32, [u16; FIELDS])>>,
}

impl SearchIndex {
    /// Indexes `defs[i]` for every `i` in `ops`.
    pub fn build(defs: &[Arc<ToolDef>], ops: impl IntoIterator<Item = usize>) -> Self {
        let mut idx = SearchIndex::default();
        let mut sums = [0f64; FIELDS];
        for op in ops {
            let Some(def) = defs.get(op) else { continue };
            let doc = idx.docs.len() as u32;
            let mut tf: HashMap<String, [u16; FIELDS]> = HashMap::new();
            let mut lens = [0u16; FIELDS];
            let mut add = |field: Field, tokens: Vec<String>| {
                let f = field as usize;
                for t in tokens {
                    let e = tf.entry(t).or_insert([0; FIELDS]);
                    e[f] = e[f].saturating_add(1);
                    lens[f] = lens[f].saturating_add(1);
                }
            };
            let mut name = tokenize(def.name());
            if let Some(id) = &def.operation_id {
                let seen: HashSet<String> = name.iter().cloned().collect();
                name.extend(tokenize(id).into_iter().filter(|t| !seen.contains(t)));
            }
            idx.name_terms.push(dedup(&name));
            add(Field::Name, name);
            add(
                Field::Tags,
                def.tags.iter().flat_map(|t| tokenize(t)).collect(),
            );
            // Literal path segments only: template parameters (`{owner}/{repo}`) are in Params,
            // and counting them here favours every operation under a common prefix.
            let literal: Vec<&str> = def
                .route
                .path
                .split('/')
                .filter(|seg| !seg.starts_with('{'))
                .collect();
            add(Field::Path, tokenize(&literal.join("/")));
            let summary_terms = tokenize(&summary(def));
            idx.summary_terms.push(dedup(&summary_terms));
            add(Field::Summary, summary_terms);
            add(
                Field::Params,
                def.route
                    .args
                    .iter()
                    .flat_map(|a| tokenize(&a.arg))
                    .collect(),
            );
            add(
                Field::Description,
                tokenize(def.description().unwrap_or_default()),
            );
            add(
                Field::Verbs,
                verbs(def.route.method).iter().map(|v| stem(v)).collect(),
            );
            for (f, l) in lens.iter().enumerate() {
                sums[f] += f64::from(*l);
            }
            for (term, freqs) in tf {
                idx.postings.entry(term).or_default().push((doc, freqs));
            }
            idx.docs.push(op);
            idx.deprecated.push(
                def.description()
                    .is_some_and(|d| d.starts_with("Deprecated.")),
            );
            idx.lens.push(lens);
        }
        let n = idx.docs.len().max(1) as f64;
        for (avg, sum) in idx.avg.iter_mut().zip(sums) {
            *avg = ((sum / n) as f32).max(1.0);
        }
        idx
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Whether operation `op` is in the index.
    pub fn contains(&self, op: usize) -> bool {
        self.docs.contains(&op)
    }

    /// The best `limit` operations for `query`, best first; only scores > 0.
    ///
    /// BM25F over the fields, with query-side synonyms for common verbs ("open" -> create, "my"
    /// -> authenticated/current user) at a lower weight, times a boost for documents whose name
    /// or summary the query covers (so "delete a repository" prefers `repos/delete` over
    /// `repos/delete-webhook`).
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let n = self.docs.len() as f32;
        let terms = query_terms(query);
        let mut scores = vec![0f32; self.docs.len()];
        for (term, qw) in &terms {
            let Some(postings) = self.postings.get(term) else {
                continue;
            };
            let df = postings.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (doc, freqs) in postings {
                let lens = &self.lens[*doc as usize];
                let mut tf = 0f32;
                for (f, &(w, b)) in FIELD_PARAMS.iter().enumerate() {
                    if freqs[f] == 0 {
                        continue;
                    }
                    let norm = 1.0 - b + b * f32::from(lens[f]) / self.avg[f];
                    tf += w * f32::from(freqs[f]) / norm;
                }
                scores[*doc as usize] += qw * idf * tf / (K1 + tf);
            }
        }
        let qset: HashSet<&str> = terms.iter().map(|(t, _)| t.as_str()).collect();
        // Terms in most documents (an API-wide prefix, "get") say nothing about coverage.
        let common = |t: &str| {
            self.postings
                .get(t)
                .is_some_and(|p| p.len() as f32 > n * 0.5)
        };
        let coverage = |terms: &[String]| {
            let useful: Vec<&String> = terms.iter().filter(|t| !common(t)).collect();
            if useful.is_empty() {
                return 0.0;
            }
            useful.iter().filter(|t| qset.contains(t.as_str())).count() as f32 / useful.len() as f32
        };
        let mut hits: Vec<Hit> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .map(|(d, s)| {
                let cover = coverage(&self.name_terms[d]).max(coverage(&self.summary_terms[d]));
                let mut score = s * (1.0 + COVER_BOOST * cover);
                if self.deprecated[d] {
                    score *= 0.8;
                }
                Hit {
                    op: self.docs[d],
                    score,
                }
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.op.cmp(&b.op)));
        hits.truncate(limit);
        hits
    }
}

/// How much a document whose name or summary the query fully covers gains.
const COVER_BOOST: f32 = 0.5;
/// Weight of synonyms added to a query.
const SYNONYM_WEIGHT: f32 = 0.6;

fn dedup(terms: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    terms
        .iter()
        .filter(|t| seen.insert(t.as_str()))
        .cloned()
        .collect()
}

/// Common words for the same action or subject as the words API names use, and their weight.
fn synonyms(term: &str) -> (&'static [&'static str], f32) {
    let verbs: &'static [&'static str] = match term {
        "open" | "mak" | "new" | "publish" | "start" | "generat" => &["creat"],
        "remov" | "drop" | "eras" | "destroy" => &["delet"],
        "edit" | "modify" | "chang" | "renam" => &["updat"],
        "fetch" | "retriev" | "show" | "read" | "view" | "see" | "lookup" => &["get"],
        "ask" => &["request"],
        _ => &[],
    };
    match term {
        // A weak hint of the API's "authenticated user" / "current user" / `/me` operations.
        "my" | "me" | "min" => (&["me", "authenticat", "current", "user"], 0.3),
        _ => (verbs, SYNONYM_WEIGHT),
    }
}

/// The query's distinct terms with their weights (1 for the query's own words, less for
/// synonyms).
fn query_terms(query: &str) -> Vec<(String, f32)> {
    let own = dedup(&tokenize(query));
    // Possessives only stand for their synonyms ("my" is in text about anything).
    let mut terms: Vec<(String, f32)> = own
        .iter()
        .filter(|t| !matches!(t.as_str(), "my" | "min"))
        .map(|t| (t.clone(), 1.0))
        .collect();
    for t in &own {
        let (syns, weight) = synonyms(t);
        for syn in syns {
            if !terms.iter().any(|(x, _)| x == syn) {
                terms.push(((*syn).to_string(), weight));
            }
        }
    }
    terms
}

/// The words a user may say for an HTTP method.
fn verbs(m: HttpMethod) -> &'static [&'static str] {
    match m {
        HttpMethod::Get => &[
            "get", "list", "show", "fetch", "read", "retrieve", "find", "view",
        ],
        HttpMethod::Post => &["create", "add", "new", "post", "send", "submit"],
        HttpMethod::Put => &["update", "replace", "set", "add", "put"],
        HttpMethod::Patch => &["update", "edit", "modify", "change"],
        HttpMethod::Delete => &["delete", "remove"],
        HttpMethod::Head => &["check", "exist"],
        HttpMethod::Options | HttpMethod::Trace => &[],
    }
}

/// One line of summary for an operation: its title (the spec's summary), else the description's
/// first line.
pub fn summary(def: &ToolDef) -> String {
    let s = def
        .title()
        .filter(|t| !t.trim().is_empty())
        .or(def.description())
        .unwrap_or_default();
    let line = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() > 160 {
        let mut out: String = line.chars().take(159).collect();
        out.push('…');
        out
    } else {
        line.to_string()
    }
}

const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "of",
    "by",
    "its",
    "it",
    "in",
    "for",
    "to",
    "and",
    "or",
    "with",
    "on",
    "is",
    "are",
    "be",
    "i",
    "am",
    "who",
    "we",
    "our",
    "your",
    "from",
    "at",
    "as",
    "this",
    "that",
    "these",
    "those",
    "some",
    "into",
    "using",
    "via",
    "how",
    "do",
    "does",
    "can",
    "which",
    "what",
    "want",
    "please",
    "there",
    "their",
    "them",
    "they",
    "will",
    "would",
    "should",
    "has",
    "have",
    "was",
    "someone",
    "something",
];

/// Common abbreviations in API names, normalised on both sides.
fn canonical(word: &str) -> &str {
    match word {
        "repository" | "repositories" => "repo",
        "organization" | "organizations" | "organisation" | "organisations" => "org",
        "configuration" | "configurations" => "config",
        "information" => "info",
        "identifier" | "identifiers" => "id",
        "application" | "applications" => "app",
        "authentication" => "auth",
        "environment" | "environments" => "env",
        "directory" | "directories" => "dir",
        "parameter" | "parameters" => "param",
        "administrator" | "administrators" => "admin",
        "statistics" => "stat",
        _ => word,
    }
}

/// Light stemming: plural `s`/`es`/`ies` and a final `e`, applied alike to documents and queries.
pub fn stem(word: &str) -> String {
    let w = canonical(word);
    let n = w.len();
    if n > 4 && w.ends_with("ies") {
        return format!("{}y", &w[..n - 3]);
    }
    if n >= 5 && w.ends_with("es") && !w.ends_with("ies") {
        return w[..n - 2].to_string();
    }
    if n >= 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is")
    {
        return w[..n - 1].to_string();
    }
    if n > 3 && w.ends_with('e') {
        return w[..n - 1].to_string();
    }
    w.to_string()
}

/// Lower-case words split on non-alphanumerics, `_` and camelCase; stop words dropped; stemmed.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if !cur.is_empty() && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            // fooBar | HTTPServer (split before the S) | v2Beta
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                words.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
        .into_iter()
        .map(|w| w.to_lowercase())
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .filter(|w| w.len() > 1 || w.chars().all(|c| c.is_ascii_digit()))
        .map(|w| stem(&w))
        .collect()
}

/// Up to `n` operation names closest to `name`: by edit distance, then by search on its words.
pub fn closest_names(
    defs: &[Arc<ToolDef>],
    index: Option<&SearchIndex>,
    name: &str,
    n: usize,
) -> Vec<String> {
    // A name this long is not a typo, and comparing it with every operation would cost
    // len x len x operations on the caller's worker.
    if name.len() > openapi_mcp_toolset::suggest::MAX_NAME_LEN {
        return Vec::new();
    }
    let lower = name.to_lowercase();
    let mut by_edit: Vec<(usize, usize)> = defs
        .iter()
        .enumerate()
        .map(|(i, d)| (edit_distance(&lower, &d.name().to_lowercase()), i))
        .collect();
    by_edit.sort();
    let mut out: Vec<String> = Vec::new();
    let close_enough = (name.chars().count() / 3).max(2);
    for (d, i) in by_edit.iter().take(n) {
        if *d <= close_enough {
            out.push(defs[*i].name().to_string());
        }
    }
    if let Some(index) = index {
        for hit in index.search(name, n) {
            let nm = defs[hit.op].name().to_string();
            if !out.contains(&nm) {
                out.push(nm);
            }
        }
    }
    if out.is_empty() {
        out.extend(
            by_edit
                .iter()
                .take(n)
                .map(|(_, i)| defs[*i].name().to_string()),
        );
    }
    out.truncate(n);
    out
}

/// The `describe_operation` result for one operation.
pub fn describe(def: &ToolDef) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(def.name().to_string()));
    if let Some(t) = def.title() {
        m.insert("title".into(), Value::String(t.to_string()));
    }
    m.insert(
        "method".into(),
        Value::String(def.route.method.as_str().into()),
    );
    m.insert("path".into(), Value::String(def.route.path.clone()));
    if let Some(d) = &def.tool().description {
        m.insert("description".into(), Value::String(d.to_string()));
    }
    m.insert(
        "inputSchema".into(),
        Value::Object((*def.tool().input_schema).clone()),
    );
    if let Some(o) = &def.tool().output_schema {
        m.insert("outputSchema".into(), Value::Object((**o).clone()));
    }
    if let Some(a) = &def.tool().annotations {
        m.insert(
            "annotations".into(),
            serde_json::to_value(a).unwrap_or(Value::Null),
        );
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizes_names_paths_and_text() {
        assert_eq!(tokenize("showPetById"), ["show", "pet", "id"]);
        assert_eq!(
            tokenize("github_issues_create"),
            ["github", "issu", "creat"]
        );
        assert_eq!(
            tokenize("/repos/{owner}/{repo}/issues"),
            ["repo", "owner", "repo", "issu"]
        );
        assert_eq!(
            tokenize("HTTPServer v2Beta"),
            ["http", "server", "v2", "beta"]
        );
        assert_eq!(tokenize("Get a pet by its ID"), ["get", "pet", "id"]);
        assert_eq!(tokenize("repositories"), tokenize("repos"));
        assert_eq!(tokenize("policies"), tokenize("policy"));
        assert_eq!(tokenize("branches"), tokenize("branch"));
        assert_eq!(tokenize("releases"), tokenize("release"));
        assert_eq!(tokenize("status"), ["status"]);
        assert_eq!(tokenize("addresses"), tokenize("address"));
    }
}
