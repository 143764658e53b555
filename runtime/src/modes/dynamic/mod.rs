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

/// Name of code mode's script tool (in the place of `call_operation`).
pub const EXECUTE: &str = "execute";

/// The limits of one `execute` (`--code-timeout`, `--code-memory`, `--code-max-calls`,
/// `--max-response-bytes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeLimits {
    /// Wall time of a whole script, API calls included.
    pub timeout: std::time::Duration,
    /// Bytes of JavaScript heap.
    pub memory: usize,
    /// `api.*` calls sent per script.
    pub max_calls: usize,
    /// Bytes of the result (its JSON text) returned to the model.
    pub max_output: usize,
}

impl Default for CodeLimits {
    fn default() -> Self {
        Self {
            timeout: std::time::Duration::from_secs(30),
            memory: 64 << 20,
            max_calls: 50,
            max_output: 1024 * 1024,
        }
    }
}

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
    /// `search_operations`, `describe_operation` (TypeScript declarations) and `execute`, which
    /// runs a script whose `api` object calls the operations (see [`crate::modes::code`]), within these
    /// limits.
    Code(CodeLimits),
}

impl ToolMode {
    /// The mode of `--mode` with its `--pin` globs (used, and required, only by `hybrid`). The
    /// error is a sentence for the command line.
    pub fn from_flags(mode: Exposure, pins: &[String]) -> Result<ToolMode, ModeError> {
        match mode {
            Exposure::Tools => Ok(ToolMode::Tools),
            Exposure::Dynamic => Ok(ToolMode::Dynamic),
            Exposure::Code => Ok(ToolMode::Code(Default::default())),
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
            ToolMode::Code(_) => "code",
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

/// An area's name as compared: letters and digits, lower case ("Pull Requests" is
/// `pullrequests`, as is "pull-requests").
pub fn area_key(area: &str) -> String {
    area.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The areas (tags) of the indexed operations, with how many operations each has, largest
/// first (then by name).
pub fn areas(defs: &[Arc<ToolDef>], index: &SearchIndex) -> Vec<(String, usize)> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for &op in index.ops() {
        for t in defs.get(op).map(|d| d.tags.as_slice()).unwrap_or_default() {
            *counts.entry(t.as_str()).or_default() += 1;
        }
    }
    let mut out: Vec<(String, usize)> = counts
        .into_iter()
        .map(|(t, n)| (t.to_string(), n))
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// Default and largest number of search results.
pub const DEFAULT_LIMIT: usize = 10;
pub const MAX_LIMIT: usize = 50;

/// Which discovery tool a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meta {
    Search,
    Describe,
    Call,
    /// `execute` (code mode), in the place of `call_operation`.
    Execute,
}

impl Meta {
    /// The discovery tool `name` is in `mode` (code mode has `execute` instead of
    /// `call_operation`).
    pub fn from_name(name: &str, code: bool) -> Option<Self> {
        match name {
            SEARCH => Some(Meta::Search),
            DESCRIBE => Some(Meta::Describe),
            CALL if !code => Some(Meta::Call),
            EXECUTE if code => Some(Meta::Execute),
            _ => None,
        }
    }

    /// Its place among the three tools served.
    pub fn slot(self) -> usize {
        match self {
            Meta::Search => 0,
            Meta::Describe => 1,
            Meta::Call | Meta::Execute => 2,
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
             best-matching operations ranked by relevance: name, HTTP method, path, summary and \
             required arguments. Then call `{CALL}` to run one (`{DESCRIBE}` first for its \
             optional arguments and details). \
             If nothing fits, search again with other words (synonyms, the resource's name), \
             or browse an area of the API (`area`, with the query `*`)."
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
                },
                "area": {
                    "type": "string",
                    "description": "Only operations of this area (an API tag, as the server's instructions list them, e.g. \"issues\"). With an area, the query `*` lists the area's operations, and a query that matches none of them lists them too."
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
                        "required_arguments": {
                            "type": "string",
                            "description": "The required arguments with their types (`none` if none), and how many optional ones there are."
                        },
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
             `outputSchema` and annotations (read-only, destructive, ...). Describe an operation \
             before calling it when its required arguments from the search are not enough."
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

/// The discovery tools (`meta_tools`, or code mode's) when `workflows` Arazzo workflows are
/// searchable too (#39): each tool's description says so, and a search result may be a workflow
/// (`kind: "workflow"`, no method or path). `only` (`--workflows-only`): only workflows are.
pub fn describe_workflows(tools: &mut [Tool], workflows: usize, only: bool, code: bool) {
    let say = |t: &mut Tool, text: String| {
        let d = t.description.get_or_insert_default();
        d.to_mut().push_str(&text);
    };
    let callable = if code {
        "as `api.<name>(args)` in a script, like an operation"
    } else {
        "with `call_operation`, like an operation"
    };
    let searched = if only {
        format!(
            " Only the API's {workflows} workflows are served: each runs several operations in \
             order in one call (the operations themselves are not searchable or callable)."
        )
    } else {
        format!(
            " The results include the API's {workflows} workflows as well: each runs several \
             operations in order in one call (a result of `kind` \"workflow\", with no method \
             or path); prefer one when it does the whole task."
        )
    };
    if let Some(search) = tools.first_mut() {
        say(search, searched);
        if let Some(schema) = &mut search.output_schema {
            let s = Arc::make_mut(schema);
            if let Some(item) = s
                .get_mut("properties")
                .and_then(|p| p.get_mut("results"))
                .and_then(|r| r.get_mut("items"))
            {
                item["properties"]["kind"] = json!({"enum": ["operation", "workflow"]});
                item["properties"]["workflow"] = json!({"type": "string"});
                item["properties"]["steps"] = json!({"type": "integer"});
                item["required"] = json!(["name", "kind", "summary"]);
            }
            if let Some(p) = s.get_mut("properties").and_then(Value::as_object_mut) {
                p.insert("total_workflows".into(), json!({"type": "integer"}));
            }
        }
    }
    if let Some(describe) = tools.get_mut(1) {
        say(
            describe,
            format!(" A workflow's name is described the same way; call it {callable}."),
        );
    }
    if code && let Some(execute) = tools.get_mut(2) {
        say(
            execute,
            " A workflow is a function of `api` too: `await api.<workflow>({...})` runs all its \
             steps and resolves to its outputs (each step's request counts as an API call)."
                .to_string(),
        );
    }
    if !code && let Some(call) = tools.get_mut(2) {
        say(
            call,
            " `name` may be a workflow's (a search result of kind \"workflow\"): all its steps run, \
             and the result is the workflow's outputs, or an error naming the step that failed."
                .to_string(),
        );
    }
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
    TagText,
    Leaf,
    Values,
    Flags,
}

const FIELDS: usize = 11;
/// (weight, b) per field.
const FIELD_PARAMS: [(f32, f32); FIELDS] = [
    (3.0, 0.5),  // Name: tool name + operationId
    (2.0, 0.5),  // Tags
    (1.5, 0.5),  // Path segments
    (2.5, 0.5),  // Summary
    (0.6, 0.3),  // Parameter and body property names
    (0.6, 0.75), // Description (lower weight)
    (0.5, 0.0),  // Verbs implied by the HTTP method and the path's shape
    (0.4, 0.75), // The descriptions of the operation's tags (what its area is for)
    (1.5, 0.0),  // The path's last literal segment: the resource or action it ends in
    (1.0, 0.0),  // The values an argument takes (enums: `state` closed, `visibility` private)
    (2.0, 0.0),  // The yes/no settings a write sets (`archived`, `private`, `has_wiki`)
];
const K1: f32 = 1.2;

/// Whether an operation's description says it is deprecated: the converter's `Deprecated.`
/// for a spec's `deprecated: true`, and the words of specs that say it only in text: a sentence
/// that starts with the word (Kubernetes' `watch` operations: "watch individual changes to a
/// list of Pod. deprecated: use the 'watch' parameter with a list operation instead.";
/// "**Deprecated**: Use ... instead"), or "this endpoint / the API is (now) deprecated".
fn says_deprecated(text: &str) -> bool {
    const WORD: &str = "deprecated";
    let lower = text.to_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(WORD) {
        let at = from + i;
        from = at + WORD.len();
        let before = lower[..at].trim_end_matches(['*', '_', '[', '(', ' ', '`']);
        let starts = before.is_empty() || before.ends_with(['.', '!', '?', ':', '\n']);
        let it_is = ["is now", "is", "has been", "are now", "have been", "was"]
            .iter()
            .filter_map(|w| before.strip_suffix(w))
            .any(|rest| {
                let rest = rest.trim_end();
                ["endpoint", "operation", "method", "api", "route", "call"]
                    .iter()
                    .any(|n| rest.ends_with(n))
            });
        if starts || it_is {
            return true;
        }
    }
    false
}

/// One search hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Index of the operation in the tool set; of the workflow when `workflow` is set.
    pub op: usize,
    pub score: f32,
    /// An Arazzo workflow ([`SearchIndex::add_workflows`]), not an operation.
    pub workflow: bool,
}

/// An Arazzo workflow as the search reads it (#39): served as one call, found like an
/// operation.
#[derive(Clone, Debug, Default)]
pub struct WorkflowDoc {
    /// Its tool name.
    pub name: String,
    /// Its `workflowId`.
    pub id: String,
    /// Its summary (else the first sentence of its description).
    pub summary: String,
    /// Its description, its steps' descriptions, and the summaries of the operations its steps
    /// call.
    pub text: String,
    /// Its input properties.
    pub inputs: Vec<String>,
    /// The tags of the operations its steps call.
    pub tags: Vec<String>,
}

/// A BM25F index over operations (tool name/operationId, tags, path, summary, description,
/// parameter names, the verbs of the HTTP method).
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
    /// The last this many documents are workflows (`docs` holds their index among the
    /// workflows).
    workflows: usize,
}

impl SearchIndex {
    /// Indexes `defs[i]` for every `i` in `ops`.
    pub fn build(defs: &[Arc<ToolDef>], ops: impl IntoIterator<Item = usize>) -> Self {
        Self::build_with_tags(defs, ops, &[])
    }

    /// [`SearchIndex::build`], with the spec's tag descriptions ((tag, description), as
    /// `ToolSet::tag_descriptions`) as low-weight evidence for the operations of each tag.
    pub fn build_with_tags(
        defs: &[Arc<ToolDef>],
        ops: impl IntoIterator<Item = usize>,
        tag_descriptions: &[(String, String)],
    ) -> Self {
        let mut idx = SearchIndex::default();
        let mut sums = [0f64; FIELDS];
        // Stemming is most of the build: API text says the same words over and over.
        let mut memo: HashMap<String, String> = HashMap::new();
        let mut stem_memo = |w: &str| -> String {
            if let Some(s) = memo.get(w) {
                return s.clone();
            }
            let s = stem(w);
            memo.insert(w.to_string(), s.clone());
            s
        };
        let mut tokenize = |text: &str| tokenize_with(text, &mut stem_memo);
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
            let tag_text: Vec<String> = def
                .tags
                .iter()
                .filter_map(|t| tag_descriptions.iter().find(|(name, _)| name == t))
                .flat_map(|(_, d)| tokenize(d))
                .collect();
            add(Field::TagText, tag_text);
            // Literal path segments only: template parameters (`{owner}/{repo}`) are in Params,
            // and counting them here favours every operation under a common prefix.
            let literal: Vec<&str> = def
                .route
                .path
                .split('/')
                .filter(|seg| !seg.starts_with('{'))
                .collect();
            add(Field::Path, tokenize(&literal.join("/")));
            // The resource (or action) the path ends in is what the operation is about:
            // `/repos/{owner}/{repo}/issues/{issue_number}/lock` locks, `.../languages` lists
            // languages, whatever its parents are.
            if let Some(leaf) = literal.iter().rev().find(|seg| !seg.is_empty()) {
                add(Field::Leaf, tokenize(leaf));
            }
            let outline = def.input_outline();
            add(Field::Values, enum_words(&outline, &mut tokenize));
            // "make it private", "archive it", "turn the wiki off": a write whose arguments
            // include that yes/no setting (`private`, `archived`, `has_wiki`) does it.
            if matches!(
                def.route.method,
                HttpMethod::Patch | HttpMethod::Put | HttpMethod::Post
            ) {
                add(Field::Flags, flag_words(&outline, &mut tokenize));
            }
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
            // `/things` vs `/things/{id}`: a collection is listed and added to, an item is read
            // and changed (Stripe changes an item with POST).
            let item = def.route.path.trim_end_matches('/').ends_with('}');
            add(
                Field::Verbs,
                verbs(def.route.method, item)
                    .iter()
                    .map(|v| stem(v))
                    .collect(),
            );
            for (f, l) in lens.iter().enumerate() {
                sums[f] += f64::from(*l);
            }
            for (term, freqs) in tf {
                idx.postings.entry(term).or_default().push((doc, freqs));
            }
            idx.docs.push(op);
            idx.deprecated
                .push(def.description().is_some_and(says_deprecated));
            idx.lens.push(lens);
        }
        let n = idx.docs.len().max(1) as f64;
        for (avg, sum) in idx.avg.iter_mut().zip(sums) {
            *avg = ((sum / n) as f32).max(1.0);
        }
        for p in idx.postings.values_mut() {
            p.shrink_to_fit();
        }
        idx.postings.shrink_to_fit();
        idx
    }

    /// The indexed operations (workflows not counted).
    pub fn len(&self) -> usize {
        self.docs.len() - self.workflows
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The indexed workflows ([`SearchIndex::add_workflows`]).
    pub fn workflows(&self) -> usize {
        self.workflows
    }

    /// The indexed operations (indexes in the tool set), in tool-set order.
    pub fn ops(&self) -> &[usize] {
        &self.docs[..self.len()]
    }

    /// Whether operation `op` is in the index.
    pub fn contains(&self, op: usize) -> bool {
        self.ops().contains(&op)
    }

    /// Adds Arazzo workflows (#39) as documents of their own, found beside the operations
    /// (their hits have `workflow` set and `op` the index in `docs`): the workflow's name and
    /// id as its name, its summary, its inputs as parameters, the tags of the operations it
    /// calls, and its description with its steps' (and their operations' summaries) as
    /// description. An index without workflows is left as it was.
    pub fn add_workflows(&mut self, docs: &[WorkflowDoc]) {
        if docs.is_empty() {
            return;
        }
        for (i, w) in docs.iter().enumerate() {
            let doc = self.docs.len() as u32;
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
            let mut name = tokenize(&w.name);
            let seen: HashSet<String> = name.iter().cloned().collect();
            name.extend(tokenize(&w.id).into_iter().filter(|t| !seen.contains(t)));
            self.name_terms.push(dedup(&name));
            add(Field::Name, name);
            add(
                Field::Tags,
                w.tags.iter().flat_map(|t| tokenize(t)).collect(),
            );
            let summary_terms = tokenize(&w.summary);
            self.summary_terms.push(dedup(&summary_terms));
            add(Field::Summary, summary_terms);
            add(
                Field::Params,
                w.inputs.iter().flat_map(|a| tokenize(a)).collect(),
            );
            add(Field::Description, tokenize(&w.text));
            for (term, freqs) in tf {
                self.postings.entry(term).or_default().push((doc, freqs));
            }
            self.docs.push(i);
            self.deprecated.push(false);
            self.lens.push(lens);
        }
        self.workflows += docs.len();
        let n = self.docs.len().max(1) as f64;
        for (f, avg) in self.avg.iter_mut().enumerate() {
            let sum: f64 = self.lens.iter().map(|l| f64::from(l[f])).sum();
            *avg = ((sum / n) as f32).max(1.0);
        }
    }

    /// Heap bytes the index holds (an estimate from its collections' capacities).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let strings = |v: &Vec<Vec<String>>| {
            v.iter()
                .map(|t| {
                    t.capacity() * size_of::<String>()
                        + t.iter().map(String::capacity).sum::<usize>()
                })
                .sum::<usize>()
                + v.capacity() * size_of::<Vec<String>>()
        };
        let postings: usize = self
            .postings
            .iter()
            .map(|(k, v)| {
                k.capacity()
                    + v.capacity() * size_of::<(u32, [u16; FIELDS])>()
                    // Table slot: key, value and a control byte.
                    + size_of::<(String, Vec<(u32, [u16; FIELDS])>)>()
                    + 1
            })
            .sum();
        self.docs.capacity() * size_of::<usize>()
            + self.deprecated.capacity()
            + self.lens.capacity() * size_of::<[u16; FIELDS]>()
            + strings(&self.name_terms)
            + strings(&self.summary_terms)
            + postings
    }

    /// The best `limit` operations for `query`, best first; only scores > 0.
    ///
    /// BM25F over the fields, with the query's words and what they mean in an API's words (a
    /// lexicon of how people say API actions and objects: "get rid of" -> delete, "kick off" ->
    /// trigger/dispatch, "favorite" -> star) at a lower weight, and, for a word the index does
    /// not have, the indexed words one typo away or the parts of a compound ("configmap" ->
    /// config map). Times a boost for documents whose name or summary the query covers (so
    /// "delete a repository" prefers `repos/delete` over `repos/delete-webhook`).
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let n = self.docs.len() as f32;
        let mut groups = query_groups(query);
        self.relax(&mut groups);
        let mut scores = vec![0f32; self.docs.len()];
        // Per group: each document's best term, and the sum of all its terms.
        let mut best = vec![0f32; self.docs.len()];
        let mut sum = vec![0f32; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        // How much of what the user said each document matches (each group by its weight).
        let mut matched = vec![0f32; self.docs.len()];
        let mut said = 0f32;
        let idf = |df: usize| (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln();
        for group in &groups {
            // What a word means is no better evidence than the word itself, when the index has
            // it: a rare synonym must not outweigh the user's own common word.
            let cap = group
                .first()
                .filter(|(_, w)| *w >= 1.0)
                .and_then(|(t, _)| self.postings.get(t))
                .map_or(f32::INFINITY, |p| idf(p.len()));
            for (i, (term, qw)) in group.iter().enumerate() {
                let Some(postings) = self.postings.get(term) else {
                    continue;
                };
                let idf = if i == 0 {
                    idf(postings.len())
                } else {
                    idf(postings.len()).min(cap * SYNONYM_IDF_CAP)
                };
                for (doc, freqs) in postings {
                    let d = *doc as usize;
                    let lens = &self.lens[d];
                    let mut tf = 0f32;
                    for (f, &(w, b)) in FIELD_PARAMS.iter().enumerate() {
                        if freqs[f] == 0 {
                            continue;
                        }
                        let norm = 1.0 - b + b * f32::from(lens[f]) / self.avg[f];
                        tf += w * f32::from(freqs[f]) / norm;
                    }
                    let s = qw * idf * tf / (K1 + tf);
                    if sum[d] == 0.0 {
                        touched.push(*doc);
                    }
                    best[d] = best[d].max(s);
                    sum[d] += s;
                }
            }
            // One thing said counts about once, however many of its API words a document has.
            let weight = group.iter().map(|(_, w)| *w).fold(0f32, f32::max);
            said += weight;
            for d in touched.drain(..) {
                let d = d as usize;
                matched[d] += weight;
                scores[d] += best[d] + GROUP_REST * (sum[d] - best[d]);
                best[d] = 0.0;
                sum[d] = 0.0;
            }
        }
        // The query's own consecutive words (stop words left out), for the phrase boost.
        let pairs: Vec<(String, String)> = {
            let own: Vec<String> = words(query)
                .into_iter()
                .filter(|w| !is_stopword(w) && w.len() > 1)
                .map(|w| stem(&w))
                .collect();
            own.windows(2)
                .filter(|w| w[0] != w[1])
                .map(|w| (w[0].clone(), w[1].clone()))
                .collect()
        };
        let terms: Vec<&(String, f32)> = groups.iter().flatten().collect();
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
                // A document that matches more of what was said beats one that matches a
                // single rare word very well.
                if said > 0.0 {
                    score *= (matched[d] / said).powf(COORD);
                }
                // Two words said together that the name or summary has together ("pull
                // request", "payment link"): a phrase, not two loose words.
                let together = pairs
                    .iter()
                    .filter(|(a, b)| {
                        [&self.name_terms[d], &self.summary_terms[d]]
                            .iter()
                            .any(|t| t.windows(2).any(|w| w[0] == *a && w[1] == *b))
                    })
                    .count();
                score *= 1.0 + PAIR_BOOST * together.min(2) as f32;
                if self.deprecated[d] {
                    score *= 0.8;
                }
                Hit {
                    op: self.docs[d],
                    score,
                    workflow: d >= self.docs.len() - self.workflows,
                }
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.workflow.cmp(&b.workflow))
                .then(a.op.cmp(&b.op))
        });
        hits.truncate(limit);
        hits
    }

    /// For each of the query's own words that no document has: the indexed words one edit
    /// away (two for long words), else the two indexed words it is made of ("rolebinding",
    /// "webhooks" written as "web hooks" is the other way round and needs nothing).
    fn relax(&self, groups: &mut [Vec<(String, f32)>]) {
        for group in groups.iter_mut() {
            let Some((t, _)) = group
                .first()
                .filter(|(t, w)| *w >= 1.0 && t.len() >= 5 && !self.postings.contains_key(t))
                .cloned()
            else {
                continue;
            };
            let max = if t.len() >= 8 { 2 } else { 1 };
            let mut near: Vec<(usize, &String)> = self
                .postings
                .keys()
                .filter(|k| k.len() >= 3 && k.len().abs_diff(t.len()) <= max)
                .map(|k| (edit_distance(&t, k), k))
                .filter(|(d, _)| *d <= max)
                .collect();
            near.sort();
            let mut added: Vec<String> = near.iter().take(3).map(|(_, k)| (*k).clone()).collect();
            if added.is_empty() {
                // A compound: split where both halves are indexed words of 3+ letters.
                for i in 3..t.len().saturating_sub(2) {
                    if !t.is_char_boundary(i) {
                        continue;
                    }
                    let (a, b) = t.split_at(i);
                    let b = stem(b);
                    if self.postings.contains_key(a) && self.postings.contains_key(&b) {
                        added = vec![a.to_string(), b];
                        break;
                    }
                }
            }
            for k in added {
                if !group.iter().any(|(x, _)| *x == k) {
                    group.push((k, RELAXED_WEIGHT));
                }
            }
        }
    }
}

/// How much a document whose name or summary the query fully covers gains.
const COVER_BOOST: f32 = 1.0;
/// How strongly the share of the query (its groups, by weight) a document matches scales its
/// score: `score × share^COORD` (Lucene's coordination factor, softened).
const COORD: f32 = 0.3;
/// How much a document gains per pair of the query's consecutive words that its name or summary
/// has side by side (at most two pairs count).
const PAIR_BOOST: f32 = 0.1;
/// How much a group's terms other than its best count (a group is one thing the user said: a
/// word and what it means in the API's words).
const GROUP_REST: f32 = 0.4;
/// At most how much more informative (idf) than the user's own word what it means may be.
const SYNONYM_IDF_CAP: f32 = 1.5;
/// Weight of a word the index lacks, replaced by a close indexed word.
const RELAXED_WEIGHT: f32 = 0.5;
/// Weight of the query's own words that a lexicon phrase stands for ("kick" in "kick off").
const PHRASE_WORD_WEIGHT: f32 = 0.4;

/// The words of the string values the arguments take (`enum` / `const` of each top-level
/// argument, and of the properties of an inline `body` object): an operation whose `state` may be
/// `closed` closes things, one whose `visibility` may be `private` makes them private.
fn enum_words(
    input: &Map<String, Value>,
    tokenize: &mut impl FnMut(&str) -> Vec<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut values = |schema: &Value, out: &mut Vec<String>| {
        let listed = schema.get("enum").and_then(Value::as_array);
        // Long enums (country codes, every event type) say little about the operation.
        if listed.is_some_and(|l| l.len() > 12) {
            return;
        }
        for v in listed.into_iter().flatten().chain(schema.get("const")) {
            if let Some(s) = v.as_str() {
                out.extend(tokenize(s));
            }
        }
    };
    let Some(Value::Object(props)) = input.get("properties") else {
        return out;
    };
    for (name, schema) in props {
        values(schema, &mut out);
        if name == "body"
            && let Some(Value::Object(inner)) = schema.get("properties")
        {
            for schema in inner.values() {
                values(schema, &mut out);
            }
        }
    }
    out
}

/// The names of the yes/no settings among the arguments (top-level, and the properties of an
/// inline `body` object): `archived`, `private`, `has_wiki` on the update of a repository.
fn flag_words(
    input: &Map<String, Value>,
    tokenize: &mut impl FnMut(&str) -> Vec<String>,
) -> Vec<String> {
    let is_flag = |schema: &Value| match schema.get("type") {
        Some(Value::String(t)) => t == "boolean",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "boolean"),
        _ => false,
    };
    let mut out = Vec::new();
    let Some(Value::Object(props)) = input.get("properties") else {
        return out;
    };
    for (name, schema) in props {
        if is_flag(schema) {
            out.extend(tokenize(name));
        }
        if name == "body"
            && let Some(Value::Object(inner)) = schema.get("properties")
        {
            for (name, schema) in inner {
                if is_flag(schema) {
                    out.extend(tokenize(name));
                }
            }
        }
    }
    out
}

fn dedup(terms: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    terms
        .iter()
        .filter(|t| seen.insert(t.as_str()))
        .cloned()
        .collect()
}

/// How people say API actions and objects, and the words API names use for them
/// (`dynamic/lexicon.tsv`: weight, what a user says with `|` between alternatives, the API's
/// words). Both sides are stemmed when the lexicon is built.
const LEXICON: &str = include_str!("lexicon.tsv");

/// The entries of [`LEXICON`] as (said, means, weight); a line that is not
/// `weight<TAB>said<TAB>means` is an `Err` naming it (a unit test keeps the file clean).
fn lexicon_lines() -> impl Iterator<Item = Result<(&'static str, &'static str, f32), &'static str>>
{
    LEXICON
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split('\t');
            match (
                f.next().and_then(|w| w.parse::<f32>().ok()),
                f.next(),
                f.next(),
                f.next(),
            ) {
                (Some(w), Some(said), Some(means), None)
                    if !said.is_empty() && !means.is_empty() =>
                {
                    Ok((said, means, w))
                }
                _ => Err(l),
            }
        })
}

/// A stemmed lexicon entry: (a phrase's stems, the API's stems, weight).
type LexEntry = (Vec<String>, Vec<String>, f32);

/// The lexicon, stemmed, longest phrases first.
fn lexicon() -> &'static [LexEntry] {
    static LEX: std::sync::LazyLock<Vec<LexEntry>> = std::sync::LazyLock::new(|| {
        let mut out = Vec::new();
        for (said, means, weight) in lexicon_lines().filter_map(Result::ok) {
            let means: Vec<String> = means.split(' ').map(stem).collect();
            for phrase in said.split('|') {
                let phrase: Vec<String> = words(phrase).iter().map(|w| stem(w)).collect();
                if !phrase.is_empty() {
                    out.push((phrase, means.clone(), weight));
                }
            }
        }
        out.sort_by_key(|(p, _, _)| std::cmp::Reverse(p.len()));
        out
    });
    &LEX
}

/// The query as groups of weighted terms, one per thing said: each own word (weight 1; less
/// when it is part of a phrase the lexicon knows) with what the lexicon says it means, each
/// lexicon phrase's meaning (longest phrases first, matched with and without stop words), and
/// "my"/"me" as a weak hint of the authenticated user. A word said twice is one group.
fn query_groups(query: &str) -> Vec<Vec<(String, f32)>> {
    let raw = words(query);
    let stems: Vec<String> = raw.iter().map(|w| stem(w)).collect();
    let keep =
        |w: &String| !is_stopword(w) && (w.len() > 1 || w.chars().all(|c| c.is_ascii_digit()));
    // The word sequence as said, and without its stop words: (stem, position in `raw`).
    let all: Vec<(&str, usize)> = stems
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let content: Vec<(&str, usize)> = all
        .iter()
        .filter(|(_, i)| keep(&raw[*i]))
        .copied()
        .collect();
    let mut in_phrase = vec![false; raw.len()];
    // Per position: the meanings of one-word entries; then the meanings of phrases.
    let mut word_means: Vec<Vec<(String, f32)>> = vec![Vec::new(); raw.len()];
    let mut phrase_groups: Vec<Vec<(String, f32)>> = Vec::new();
    let add = |group: &mut Vec<(String, f32)>, t: &str, w: f32| match group
        .iter_mut()
        .find(|(x, _)| x == t)
    {
        Some(e) => e.1 = e.1.max(w),
        None => group.push((t.to_string(), w)),
    };
    for (phrase, api, weight) in lexicon() {
        let k = phrase.len();
        for seq in [&all, &content] {
            if k > seq.len() {
                continue;
            }
            for start in 0..=seq.len() - k {
                let window = &seq[start..start + k];
                if !window.iter().zip(phrase).all(|((s, _), p)| s == p) {
                    continue;
                }
                if k == 1 {
                    let i = window[0].1;
                    // A word of a longer phrase already found is not a phrase of its own.
                    if in_phrase[i] {
                        continue;
                    }
                    for t in api {
                        add(&mut word_means[i], t, *weight);
                    }
                } else {
                    let positions: Vec<usize> = window.iter().map(|(_, i)| *i).collect();
                    if positions.iter().all(|i| in_phrase[*i]) {
                        continue;
                    }
                    positions.iter().for_each(|i| in_phrase[*i] = true);
                    let mut group = Vec::new();
                    for t in api {
                        add(&mut group, t, *weight);
                    }
                    phrase_groups.push(group);
                }
            }
        }
    }
    let mut groups: Vec<Vec<(String, f32)>> = Vec::new();
    for (i, w) in raw.iter().enumerate() {
        let own = keep(w);
        if !own && word_means[i].is_empty() {
            continue;
        }
        let mut group = Vec::new();
        if own {
            let weight = if in_phrase[i] {
                PHRASE_WORD_WEIGHT
            } else {
                1.0
            };
            group.push((stems[i].clone(), weight));
        }
        for (t, w) in &word_means[i] {
            add(&mut group, t, *w);
        }
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    groups.extend(phrase_groups);
    if raw
        .iter()
        .any(|w| matches!(w.as_str(), "my" | "me" | "mine" | "myself"))
    {
        // A weak hint of the API's "authenticated user" / "current user" / `/me` operations.
        groups.push(
            ["me", "authenticat", "current", "user", "viewer"]
                .iter()
                .map(|t| (t.to_string(), 0.3))
                .collect(),
        );
    }
    groups
}

/// The query's distinct terms with their largest weights (for tests and diagnostics).
#[cfg(test)]
fn query_terms(query: &str) -> Vec<(String, f32)> {
    let mut terms: Vec<(String, f32)> = Vec::new();
    for (t, w) in query_groups(query).into_iter().flatten() {
        match terms.iter_mut().find(|(x, _)| *x == t) {
            Some(e) => e.1 = e.1.max(w),
            None => terms.push((t, w)),
        }
    }
    terms
}

/// The words a user may say for an HTTP method on a collection (`/things`) or an item
/// (`/things/{id}`).
fn verbs(m: HttpMethod, item: bool) -> &'static [&'static str] {
    match (m, item) {
        (HttpMethod::Get, false) => &[
            "get", "list", "show", "fetch", "read", "retrieve", "find", "view", "all",
        ],
        (HttpMethod::Get, true) => &[
            "get", "show", "fetch", "read", "retrieve", "find", "view", "detail",
        ],
        (HttpMethod::Post, false) => &["create", "add", "new", "post", "send", "submit"],
        (HttpMethod::Post, true) => &["update", "edit", "modify", "change", "set", "create"],
        (HttpMethod::Put, _) => &["update", "replace", "set", "add", "put", "enable"],
        (HttpMethod::Patch, _) => &["update", "edit", "modify", "change", "set"],
        (HttpMethod::Delete, _) => &["delete", "remove", "cancel", "revoke", "disable"],
        (HttpMethod::Head, _) => &["check", "exist"],
        (HttpMethod::Options | HttpMethod::Trace, _) => &[],
    }
}

/// One line of summary for an operation: its title (the spec's summary), else the description's
/// first sentence (HTML tags left out: Stripe writes `<p>Creates a customer.</p>`). A title that
/// is only `METHOD /path` (what the converter gives an operation without a summary) is no
/// summary: the hit shows the method and path anyway.
pub fn summary(def: &ToolDef) -> String {
    let fallback = format!("{} {}", def.route.method.as_str(), def.route.path);
    let line = match def
        .title()
        .map(str::trim)
        .filter(|t| !t.is_empty() && *t != fallback)
    {
        Some(title) => first_line(title).to_string(),
        None => {
            let text = strip_tags(def.description().unwrap_or_default());
            let text = text.strip_prefix("Deprecated. ").unwrap_or(&text);
            match first_sentence(text) {
                "" => def.title().map(first_line).unwrap_or_default().to_string(),
                s => s.to_string(),
            }
        }
    };
    if line.chars().count() > 160 {
        let mut out: String = line.chars().take(159).collect();
        out.push('…');
        out
    } else {
        line.to_string()
    }
}

/// The first non-empty line, trimmed.
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The first sentence of the first non-empty line: up to a `.`, `!` or `?` followed by a space
/// and a capital (so "e.g. a" or "v1.2" do not end it), else the whole line.
fn first_sentence(text: &str) -> &str {
    let line = first_line(text);
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?')
            && chars.peek().is_some_and(|(_, n)| n.is_whitespace())
            && line[i + 1..]
                .trim_start()
                .chars()
                .next()
                .is_some_and(char::is_uppercase)
        {
            return &line[..=i];
        }
    }
    line
}

/// `text` without its HTML tags (`<p>`, `<a href="…">`, `</code>`), each replaced by nothing
/// (a block tag by a line break), and with the common entities decoded.
fn strip_tags(text: &str) -> String {
    if !text.contains('<') && !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let is_tag = after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '/');
        match after.find('>').filter(|&end| is_tag && end < 200) {
            Some(end) => {
                let name = after[..end].trim_start_matches('/');
                if ["p", "br", "li", "ul", "ol", "div"]
                    .iter()
                    .any(|b| name.split([' ', '/']).next() == Some(*b))
                {
                    out.push('\n');
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    for (entity, c) in [
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&nbsp;", " "),
        ("&amp;", "&"),
    ] {
        if out.contains(entity) {
            out = out.replace(entity, c);
        }
    }
    out
}

/// The operation's required arguments with their types, for a search hit: `owner: string,
/// repo: string` (and how many optional ones follow), so a model can call it without
/// describing it first. `none` when nothing is required.
pub fn required_arguments(def: &ToolDef) -> String {
    // Not `def.tool()`: a search bundles no schema (describe and call do, for theirs).
    required_of_schema(&def.input_outline())
}

/// [`required_arguments`] of an input schema (a workflow's, #39).
pub fn required_of_schema(schema: &Map<String, Value>) -> String {
    let props = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut parts: Vec<String> = required
        .iter()
        .map(|name| {
            let ty = props
                .and_then(|p| p.get(*name))
                .map_or_else(|| "any".to_string(), type_of);
            format!("{name}: {ty}")
        })
        .collect();
    if parts.is_empty() {
        parts.push("none".to_string());
    }
    let optional = props.map_or(0, |p| p.len().saturating_sub(required.len()));
    let mut line = parts.join(", ");
    if optional > 0 {
        line.push_str(&format!(" (+{optional} optional)"));
    }
    line
}

/// A property schema's type in a few characters: `string`, `integer[]`, `"a"|"b"`, `object`.
fn type_of(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && !values.is_empty()
        && values.len() <= 4
    {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("|");
    }
    if let Some(Value::String(r)) = schema.get("$ref") {
        // A shared definition: its name says what it is.
        return r.rsplit('/').next().unwrap_or("object").to_string();
    }
    match schema.get("type") {
        Some(Value::String(t)) if t == "array" => {
            let item = schema
                .get("items")
                .map_or_else(|| "any".to_string(), type_of);
            format!("{item}[]")
        }
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join("|"),
        _ if schema.get("properties").is_some() => "object".to_string(),
        _ => ["oneOf", "anyOf"]
            .iter()
            .find_map(|k| schema.get(*k).and_then(Value::as_array))
            .map_or_else(
                || "any".to_string(),
                |alts| {
                    let mut ts: Vec<String> = alts.iter().map(type_of).collect();
                    ts.dedup();
                    ts.join("|")
                },
            ),
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
    "my",
    "me",
    "mine",
    "myself",
    "all",
    "any",
    "every",
    "each",
    "again",
    "still",
    "just",
    "one",
    "more",
    "so",
    "if",
    "whether",
    "than",
    "then",
    "up",
    "off",
    "out",
    "about",
    "let",
    "need",
    "could",
    "when",
    "where",
    "why",
    "here",
    "now",
    "also",
    "too",
    "very",
    "really",
    "thing",
    "things",
    "stuff",
    "him",
    "her",
    "his",
    "hers",
    "he",
    "she",
    "you",
    "us",
    "been",
    "being",
    "did",
    "done",
    "got",
    "currently",
    "time",
    "way",
    "able",
    "over",
    "anyone",
    "everyone",
    "somebody",
    "else",
    "already",
    "yet",
    "only",
    "not",
    "no",
    "don",
    "t",
    "s",
    "ve",
    "ll",
    "re",
    "d",
    "m",
    "whose",
    "whom",
    "own",
    "lot",
    "lots",
    "many",
    "much",
    "like",
    "go",
    "going",
    "make",
    "sure",
];

fn is_stopword(w: &str) -> bool {
    STOPWORDS.contains(&w)
}

/// Common abbreviations in API names, normalised on both sides.
fn canonical(word: &str) -> &str {
    match word {
        "repository" | "repositories" | "repos" => "repo",
        "organization" | "organizations" | "organisation" | "organisations" | "orgs" => "org",
        "configuration" | "configurations" | "configs" => "config",
        "information" => "info",
        "identifier" | "identifiers" | "ids" => "id",
        "application" | "applications" | "apps" => "app",
        "authentication" => "auth",
        "environment" | "environments" | "envs" => "env",
        "directory" | "directories" | "dirs" => "dir",
        "parameter" | "parameters" | "params" => "param",
        "administrator" | "administrators" | "admins" => "admin",
        "statistics" | "stats" => "stat",
        "e-mail" | "emails" => "email",
        "favourite" => "favorite",
        _ => word,
    }
}

/// Words kept whole by [`stem`] (singular).
const KEEP: &[&str] = &[
    "customer",
    "container",
    "controller",
    "provider",
    "consumer",
    "setting",
    "printer",
    "computer",
    "number",
    "business",
];

/// Snowball (Porter2) English stemming after [`canonical`], applied alike to documents and
/// queries.
pub fn stem(word: &str) -> String {
    static EN: std::sync::LazyLock<rust_stemmers::Stemmer> = std::sync::LazyLock::new(|| {
        rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English)
    });
    let w = canonical(word);
    // Short words and identifiers with digits (v2, s3, oauth2) are names, not English.
    if w.len() <= 3 || w.chars().any(|c| c.is_ascii_digit()) {
        return w.to_string();
    }
    // Nouns the algorithm would join with another word (customer ~ custom, container ~
    // contain, settings ~ set).
    let singular = w.strip_suffix('s').unwrap_or(w);
    if KEEP.contains(&singular) {
        return singular.to_string();
    }
    // The one a thing is done to is named after the doing: assignee ~ assign, invitee ~ invite,
    // employee ~ employ (the stemmer keeps `assigne`, which "assign" never finds).
    if singular.len() >= 7
        && let Some(base) = singular.strip_suffix("ee")
    {
        return EN.stem(base).into_owned();
    }
    EN.stem(w).into_owned()
}

/// Lower-case words split on non-alphanumerics, `_` and camelCase; `re` joined to the word it
/// prefixes (`re-run`, `reRun` -> `rerun`).
fn words(text: &str) -> Vec<String> {
    // Each word, and whether an apostrophe came right before it ("you're").
    let mut words: Vec<(String, bool)> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut cur = String::new();
    let mut after_apostrophe = false;
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push((std::mem::take(&mut cur), after_apostrophe));
            }
            after_apostrophe = matches!(c, '\'' | '’');
            continue;
        }
        if !cur.is_empty() && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            // fooBar | HTTPServer (split before the S) | v2Beta
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                words.push((std::mem::take(&mut cur), after_apostrophe));
                after_apostrophe = false;
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        words.push((cur, after_apostrophe));
    }
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut prefix = false;
    for (w, after_apostrophe) in words {
        let w = w.to_lowercase();
        if prefix {
            prefix = false;
            if let Some(last) = out.last_mut() {
                last.push_str(&w);
                continue;
            }
        }
        prefix = w == "re" && !after_apostrophe;
        out.push(w);
    }
    out
}

/// Lower-case words split on non-alphanumerics, `_` and camelCase; stop words dropped; stemmed.
pub fn tokenize(text: &str) -> Vec<String> {
    tokenize_with(text, &mut |w| stem(w))
}

/// [`tokenize`] with a given stemmer (the index build's memoised one).
fn tokenize_with(text: &str, stem: &mut impl FnMut(&str) -> String) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| !is_stopword(w))
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
            if hit.workflow {
                continue;
            }
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
    use openapi_mcp_toolset::Location;
    use openapi_mcp_toolset::model::Route;

    /// Every line of dynamic/lexicon.tsv is an entry (or a comment), and none is lost.
    #[test]
    fn the_lexicon_file_parses_line_by_line() {
        let bad: Vec<&str> = lexicon_lines().filter_map(Result::err).collect();
        assert!(
            bad.is_empty(),
            "lines that are not weight<TAB>said<TAB>means: {bad:?}"
        );
        assert_eq!(lexicon_lines().count(), 132);
        assert!(lexicon().iter().all(|(said, means, w)| {
            !said.is_empty() && !means.is_empty() && *w > 0.0 && *w <= 1.0
        }));
    }

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

    /// Snowball stemming joins a word's forms; `re-` compounds are one word however written.
    #[test]
    fn stems_word_forms_and_joins_re_compounds() {
        assert_eq!(tokenize("deploying"), tokenize("deployments"));
        assert_eq!(tokenize("starred"), tokenize("star"));
        assert_eq!(tokenize("archived"), tokenize("archive"));
        assert_eq!(tokenize("Re-run a workflow"), ["rerun", "workflow"]);
        assert_eq!(tokenize("reRunWorkflow"), tokenize("rerun workflow"));
        // An apostrophe's "re" is not a prefix.
        assert_eq!(tokenize("you're running"), ["run"]);
        // Names with digits are kept whole.
        assert_eq!(tokenize("oauth2 s3"), ["oauth2", "s3"]);
    }

    fn weight(terms: &[(String, f32)], t: &str) -> Option<f32> {
        terms.iter().find(|(x, _)| x == t).map(|(_, w)| *w)
    }

    /// The lexicon adds the API's words for what the user said, below the user's own words;
    /// the words of a phrase it knows count less than words of their own.
    #[test]
    fn query_terms_add_what_phrases_mean() {
        let t = query_terms("get rid of the old branch");
        assert_eq!(weight(&t, "branch"), Some(1.0));
        assert!(weight(&t, "delet").is_some_and(|w| w < 1.0), "{t:?}");
        assert_eq!(weight(&t, "rid"), Some(PHRASE_WORD_WEIGHT));
        let t = query_terms("kick off the deploy workflow again");
        for api in ["trigger", "dispatch", "rerun"] {
            assert!(weight(&t, api).is_some(), "{api}: {t:?}");
        }
        let t = query_terms("turn off a workflow");
        assert!(weight(&t, "disabl").is_some(), "{t:?}");
        // "my" is only a hint of the authenticated user, not a word to match.
        let t = query_terms("list my repositories");
        assert_eq!(weight(&t, "my"), None);
        assert_eq!(weight(&t, "authenticat"), Some(0.3));
        assert!(query_terms("").is_empty());
        assert!(query_terms("the of a").is_empty());
    }

    fn op(name: &str, method: HttpMethod, path: &str, summary: &str, input: Value) -> Arc<ToolDef> {
        let mut tool = Tool::new(name.to_string(), String::new(), object(input));
        tool.title = Some(summary.to_string());
        tool.description = None;
        let route = Route::new(method, path);
        Arc::new(ToolDef::new(
            tool,
            route,
            Some(name.to_string()),
            vec![],
            Location::new("t", ""),
        ))
    }

    fn ops() -> Vec<Arc<ToolDef>> {
        vec![
            op(
                "delete_branch",
                HttpMethod::Delete,
                "/repos/{repo}/branches/{branch}",
                "Delete a branch",
                json!({}),
            ),
            op(
                "list_branches",
                HttpMethod::Get,
                "/repos/{repo}/branches",
                "List branches",
                json!({}),
            ),
            op(
                "star_repo",
                HttpMethod::Put,
                "/user/starred/{repo}",
                "Star a repository",
                json!({}),
            ),
            op(
                "rerun_workflow",
                HttpMethod::Post,
                "/runs/{run_id}/rerun",
                "Re-run a workflow",
                json!({}),
            ),
            op(
                "list_workflows",
                HttpMethod::Get,
                "/workflows",
                "List workflows",
                json!({}),
            ),
            op(
                "create_config_map",
                HttpMethod::Post,
                "/namespaces/{ns}/configmaps",
                "Create a ConfigMap",
                json!({}),
            ),
        ]
    }

    fn top(index: &SearchIndex, defs: &[Arc<ToolDef>], query: &str) -> Option<String> {
        index
            .search(query, 1)
            .first()
            .map(|h| defs[h.op].name().to_string())
    }

    /// #39: workflows added to an index are found by their summary, steps' text and inputs,
    /// marked as workflows; the operations indexed, their count and their hits for a query that
    /// names no workflow stay as they were.
    #[test]
    fn workflows_are_searched_beside_the_operations() {
        let defs = ops();
        let mut index = SearchIndex::build(&defs, 0..defs.len());
        let before = index.search("delete a branch", 10);
        let before_ops = index.ops().to_vec();
        index.add_workflows(&[
            WorkflowDoc {
                name: "tidy_branches".into(),
                id: "tidyBranches".into(),
                summary: "Remove merged branches of a repository".into(),
                text: "Lists the branches, then deletes each merged one.".into(),
                inputs: vec!["repo".into(), "older_than_days".into()],
                tags: vec!["branches".into()],
            },
            WorkflowDoc {
                name: "star_and_watch".into(),
                id: "starAndWatch".into(),
                summary: "Star a repository and subscribe to it".into(),
                ..WorkflowDoc::default()
            },
        ]);
        assert_eq!(index.len(), defs.len());
        assert_eq!(index.workflows(), 2);
        assert_eq!(index.ops(), before_ops.as_slice());
        let hit = &index.search("clean up old merged branches", 3)[0];
        assert!(hit.workflow && hit.op == 0, "{hit:?}");
        let hits = index.search("subscribe to a repository", 3);
        assert!(hits.iter().any(|h| h.workflow && h.op == 1), "{hits:?}");
        // An operation's hits carry no workflow mark, and the same operations come first.
        let after = index.search("delete a branch", 10);
        assert_eq!(after[0].op, before[0].op);
        assert!(!after[0].workflow);
        // The closest names to a typo are operations only.
        assert!(
            closest_names(&defs, Some(&index), "tidy_branchs", 5)
                .iter()
                .all(|n| defs.iter().any(|d| d.name() == n))
        );
    }

    /// Requests in the user's words find the operation named in the API's words; a typo or a
    /// compound written as one word still finds it; nothing matches nothing.
    #[test]
    fn finds_operations_from_users_words() {
        let defs = ops();
        let index = SearchIndex::build(&defs, 0..defs.len());
        for (query, want) in [
            ("get rid of a branch", "delete_branch"),
            ("favorite a repo", "star_repo"),
            ("run the workflow again", "rerun_workflow"),
            ("re-run workflow", "rerun_workflow"),
            ("show me every branch", "list_branches"),
            ("list brabches", "list_branches"),
            ("make a new configmap", "create_config_map"),
        ] {
            assert_eq!(top(&index, &defs, query).as_deref(), Some(want), "{query}");
        }
        // Only the relaxed words match these.
        let names = |q: &str| -> Vec<String> {
            let mut n: Vec<String> = index
                .search(q, 10)
                .iter()
                .map(|h| defs[h.op].name().to_string())
                .collect();
            n.sort();
            n
        };
        assert_eq!(names("brabch"), ["delete_branch", "list_branches"]);
        assert_eq!(names("configmaps"), ["create_config_map"]);
        assert!(index.search("zebra", 10).is_empty());
        assert!(index.search("", 10).is_empty());
    }

    /// The values an argument takes and the path's last segment are evidence of their own: each
    /// pair below ties on every other field, and the first operation would win the tie.
    #[test]
    fn argument_values_and_the_path_leaf_are_searched() {
        let priority = |values: Vec<String>| {
            json!({"type": "object", "properties": {
                "id": {"type": "string"},
                "body": {"type": "object", "properties": {
                    "priority": {"type": "string", "enum": values}
                }}
            }})
        };
        let few = vec!["urgent".to_string(), "low".to_string()];
        // Thirteen values: a long enum says little and is left out.
        let many: Vec<String> = (0..12)
            .map(|i| format!("level{i}"))
            .chain(["urgent".to_string()])
            .collect();
        let defs = vec![
            op(
                "get_thing",
                HttpMethod::Get,
                "/things/{id}",
                "Get a thing",
                json!({}),
            ),
            op(
                "update_thing",
                HttpMethod::Patch,
                "/things/{id}",
                "Update a thing",
                priority(few),
            ),
            op(
                "edit_thing",
                HttpMethod::Patch,
                "/things/{id}/edit",
                "Edit a thing",
                priority(many),
            ),
            op(
                "list_items_a",
                HttpMethod::Get,
                "/archive/{id}/items",
                "List items",
                json!({}),
            ),
            op(
                "list_items_b",
                HttpMethod::Get,
                "/items/{id}/archive",
                "List items",
                json!({}),
            ),
        ];
        let index = SearchIndex::build(&defs, 0..defs.len());
        assert_eq!(
            top(&index, &defs, "mark the thing urgent").as_deref(),
            Some("update_thing")
        );
        let hits = index.search("urgent", 10);
        assert!(
            hits.iter().all(|h| defs[h.op].name() != "edit_thing"),
            "a 13-value enum is not indexed"
        );
        assert_eq!(
            top(&index, &defs, "archive items").as_deref(),
            Some("list_items_b")
        );
    }

    /// A yes/no setting that a write takes is evidence that the write does what its name says
    /// ("archive the repository" is the update whose `archived` is a boolean): the two writes
    /// below tie on every other field, and the first would win the tie.
    #[test]
    fn yes_no_settings_of_writes_are_searched() {
        let with = |ty: &str| {
            json!({"type": "object", "properties": {
                "repo": {"type": "string"},
                "archived": {"type": ty},
                "body": {"type": "object", "properties": {
                    "has_wiki": {"type": [ty, "null"]}
                }}
            }})
        };
        let defs = vec![
            op(
                "update_repo_a",
                HttpMethod::Patch,
                "/repos/{repo}/a",
                "Update a repository",
                with("string"),
            ),
            op(
                "update_repo_b",
                HttpMethod::Patch,
                "/repos/{repo}/b",
                "Update a repository",
                with("boolean"),
            ),
        ];
        let index = SearchIndex::build(&defs, 0..defs.len());
        for query in [
            "archive the repository",
            "turn off the wiki of a repository",
        ] {
            assert_eq!(
                top(&index, &defs, query).as_deref(),
                Some("update_repo_b"),
                "{query}"
            );
        }
        let mut tokenize = |t: &str| tokenize_with(t, &mut |w: &str| stem(w));
        assert_eq!(
            flag_words(&object(with("boolean")), &mut tokenize),
            tokenize("archived has_wiki")
        );
        assert!(flag_words(&object(with("string")), &mut tokenize).is_empty());
    }

    /// The spec's tag descriptions are evidence for the operations of their tag.
    #[test]
    fn tag_descriptions_are_searched() {
        let mut def = (*op(
            "list_runs",
            HttpMethod::Get,
            "/runs",
            "List runs",
            json!({}),
        ))
        .clone();
        def.tags = vec!["actions".into()];
        let defs = vec![Arc::new(def)];
        let tags = [(
            "actions".to_string(),
            "Automation of the repository".to_string(),
        )];
        assert!(
            SearchIndex::build(&defs, 0..1)
                .search("automation", 5)
                .is_empty()
        );
        let index = SearchIndex::build_with_tags(&defs, 0..1, &tags);
        assert_eq!(index.search("automation", 5).len(), 1);
    }

    /// Deprecation said in words (not only the converter's `Deprecated.` for `deprecated:
    /// true`): a sentence starting with the word, or "the API is now deprecated"; a word about
    /// something else (a deprecated field) does not make the operation deprecated.
    #[test]
    fn deprecation_in_words() {
        for yes in [
            "Deprecated. Creates a customer.",
            "watch individual changes to a list of Pod. deprecated: use the 'watch' parameter \
             with a list operation instead.",
            "**Deprecated**: Use `repos.compareCommitsWithBasehead()` instead.",
            "Returns a retention.  **Note**: File retention API is now **deprecated**. To get ...",
            "Marked a user as active. Deprecated and non-functional.",
            "This endpoint has been deprecated.",
        ] {
            assert!(says_deprecated(yes), "{yes}");
        }
        for no in [
            "List the deprecated fields of a schema.",
            "Updates a customer. The `legacy` field is deprecated.",
            "Creates a customer.",
            "",
        ] {
            assert!(!says_deprecated(no), "{no}");
        }
    }

    /// Of two operations that read alike, the one whose description says it is deprecated
    /// ranks second (Kubernetes' `watch` twins of its `list` operations), whatever their order.
    #[test]
    fn deprecated_in_words_ranks_below_its_twin() {
        let with = |name: &str, description: &str| {
            let mut tool = Tool::new(name.to_string(), String::new(), object(json!({})));
            tool.title = Some("List pods".to_string());
            tool.description = Some(description.to_string().into());
            let route = Route::new(HttpMethod::Get, "/api/v1/pods");
            Arc::new(ToolDef::new(
                tool,
                route,
                Some(name.to_string()),
                vec![],
                Location::new("t", ""),
            ))
        };
        let defs = vec![
            with(
                "pods",
                "list pods. deprecated: use the 'watch' parameter with a list operation instead.",
            ),
            with(
                "pods",
                "list pods. Use the 'watch' parameter to watch them.",
            ),
        ];
        let hits = SearchIndex::build(&defs, 0..2).search("list the pods", 5);
        assert_eq!(hits.iter().map(|h| h.op).collect::<Vec<_>>(), vec![1, 0]);
    }

    /// The one a thing is done to is found by the doing: "assign" finds `add_assignees`.
    #[test]
    fn ee_nouns_stem_to_their_verb() {
        assert_eq!(stem("assignees"), stem("assign"));
        assert_eq!(stem("assignee"), stem("assigned"));
        assert_eq!(stem("invitee"), stem("invite"));
        assert_eq!(stem("employees"), stem("employ"));
        // Short words are left alone.
        assert_eq!(stem("fee"), "fee");
        assert_eq!(stem("free"), "free");
    }

    /// A hit's line of required arguments: names and types, `none`, and the optional count.
    /// An operation without a spec summary (the converter's title is `METHOD /path`) is summed
    /// up by its description's first sentence, without HTML; one with a summary keeps it.
    #[test]
    fn summary_is_the_description_first_sentence_without_a_spec_summary() {
        let with = |title: &str, description: Option<&str>| {
            let mut tool = Tool::new("t", String::new(), object(json!({"type": "object"})));
            tool.title = Some(title.to_string());
            tool.description = description.map(|d| d.to_string().into());
            let route = Route::new(HttpMethod::Post, "/v1/customers");
            ToolDef::new(tool, route, None, vec![], Location::new("t", ""))
        };
        let stripe = with(
            "POST /v1/customers",
            Some("<p>Creates a new customer object. See e.g. <a href=\"/docs\">the docs</a>.</p>"),
        );
        assert_eq!(summary(&stripe), "Creates a new customer object.");
        let deprecated = with(
            "POST /v1/customers",
            Some("Deprecated. Creates a customer, v1.2 style. Use the new one."),
        );
        assert_eq!(summary(&deprecated), "Creates a customer, v1.2 style.");
        let k8s = with("POST /v1/customers", Some("create a Job"));
        assert_eq!(summary(&k8s), "create a Job");
        // Neither summary nor description: the method and path are all there is.
        assert_eq!(
            summary(&with("POST /v1/customers", None)),
            "POST /v1/customers"
        );
        let summed = with("Create a customer", Some("Long text. More."));
        assert_eq!(summary(&summed), "Create a customer");
        assert_eq!(
            strip_tags("a &amp; b <code>x</code> 1 < 2"),
            "a & b x 1 < 2"
        );
    }

    #[test]
    fn required_arguments_name_their_types() {
        let def = op(
            "x",
            HttpMethod::Post,
            "/x",
            "X",
            json!({
                "type": "object",
                "properties": {
                    "owner": {"type": "string"},
                    "ids": {"type": "array", "items": {"type": "integer"}},
                    "state": {"type": "string", "enum": ["open", "closed"]},
                    "body": {"type": "object", "properties": {}},
                    "note": {"type": ["string", "null"]}
                },
                "required": ["owner", "ids", "state", "body"]
            }),
        );
        assert_eq!(
            required_arguments(&def),
            r#"owner: string, ids: integer[], state: "open"|"closed", body: object (+1 optional)"#
        );
        let def = op(
            "y",
            HttpMethod::Get,
            "/y",
            "Y",
            json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        );
        assert_eq!(required_arguments(&def), "none (+1 optional)");
        let def = op("z", HttpMethod::Get, "/z", "Z", json!({"type": "object"}));
        assert_eq!(required_arguments(&def), "none");
    }
}
