//! Reading an Arazzo document into a [`Document`]: JSON or YAML, size-capped, every runtime
//! expression, template and criterion compiled up front.
//!
//! What makes the whole document unusable is a [`LoadError`] (`file#/json/pointer: message`):
//! unreadable or too large, not JSON/YAML, no `arazzo` 1.0.x version, a malformed `info`,
//! `sourceDescriptions` or `components`. A problem inside one workflow (a malformed step, an
//! expression that does not parse, a reference to a missing component) is a [`Diagnostic`] of
//! that workflow: [`crate::validate`] skips the workflow alone.
//!
//! The source descriptions are not loaded here: [`Document::source_descriptions`] says where
//! they are (resolved against the document's own location) for the integrator to load.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use openapi_mcp_toolset::Location;
use openapi_mcp_toolset::model::ParamIn;
use serde_json::{Map, Value};
use url::Url;

use crate::criteria::{Criterion, CriterionKind};
use crate::expr::{Expr, expressions_in};
use crate::model::{self, SourceKind};

/// The largest document read: 16 MiB (Arazzo documents are a few KB; the spec loader allows
/// more because OpenAPI specs reach 30 MB).
pub const MAX_DOCUMENT_BYTES: u64 = 16 << 20;

/// YAML flow collections (`[...]`, `{...}`) nested deeper than this are refused before parsing
/// (the spec loader's limit: libyaml's time grows with size times flow depth).
pub const MAX_YAML_FLOW_DEPTH: usize = 128;

/// Why a document cannot be used at all: the file, a JSON pointer inside it (empty for the
/// whole file) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", if pointer.is_empty() { String::new() } else { format!("#{pointer}") })]
pub struct LoadError {
    pub file: String,
    pub pointer: String,
    pub message: String,
}

impl LoadError {
    fn new(file: &str, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        LoadError {
            file: file.to_string(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

/// A problem in one workflow (or, from [`crate::validate`], with what it calls): where
/// (`file#/workflows/2/steps/1/operationId`), which workflow, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub location: Location,
    /// The workflow the problem makes unusable (`None`: the document as a whole, e.g. a
    /// duplicate workflowId that cannot be attributed).
    pub workflow: Option<String>,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}: ", self.location.doc(), self.location.pointer())?;
        if let Some(w) = &self.workflow {
            write!(f, "workflow `{w}`: ")?;
        }
        f.write_str(&self.message)
    }
}

/// A source description, as the integrator loads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The `name` steps use (`$sourceDescriptions.NAME...`).
    pub name: String,
    /// The `url` as written.
    pub url: String,
    /// Where to load it from: an absolute http(s) URL, or a local path (a relative `url` of a
    /// local document resolves against the document's directory, of a fetched one against its
    /// URL).
    pub location: String,
    pub kind: SourceKind,
}

/// A workflow another refers to: one of this document, or of an `arazzo` source description
/// (`$sourceDescriptions.NAME.workflowId`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkflowRef {
    Local(String),
    External { source: String, workflow: String },
}

impl std::fmt::Display for WorkflowRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkflowRef::Local(w) => f.write_str(w),
            WorkflowRef::External { source, workflow } => {
                write!(f, "$sourceDescriptions.{source}.{workflow}")
            }
        }
    }
}

/// The operation a step calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperationRef {
    /// `operationId`, qualified (`$sourceDescriptions.NAME.opId`) or not.
    Id { source: Option<String>, id: String },
    /// `operationPath`: `{$sourceDescriptions.NAME.url}#/paths/~1pets~1{id}/get`.
    Path {
        source: String,
        /// The path template (`/pets/{id}`).
        path: String,
        /// Lower case (`get`).
        method: String,
    },
}

impl std::fmt::Display for OperationRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OperationRef::Id { source: None, id } => f.write_str(id),
            OperationRef::Id {
                source: Some(s),
                id,
            } => write!(f, "$sourceDescriptions.{s}.{id}"),
            OperationRef::Path {
                source,
                path,
                method,
            } => write!(f, "{} {path} of `{source}`", method.to_ascii_uppercase()),
        }
    }
}

/// What a step calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Operation(OperationRef),
    Workflow(WorkflowRef),
    /// What the step calls could not be read (reported; the workflow is never usable). The
    /// step is kept so that references to it are not reported as well.
    Invalid,
}

/// Where an action transfers control.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Jump {
    Step(String),
    Workflow(WorkflowRef),
}

/// A compiled runtime expression and where it is written.
pub struct Output {
    pub name: String,
    pub expr: Expr,
    pub at: Location,
}

/// A parameter of a step (the workflow's parameters merged in, components resolved).
pub struct Param {
    pub name: String,
    /// `None` for a step that calls a workflow (the parameter is one of its inputs).
    pub location: Option<ParamIn>,
    /// The value as written: a constant, an expression or a template, anywhere inside.
    pub value: Value,
    /// The expressions inside `value`.
    pub exprs: Vec<Expr>,
    pub at: Location,
}

pub struct Body {
    pub content_type: Option<String>,
    pub payload: Option<Value>,
    /// (JSON pointer into the payload, value as written).
    pub replacements: Vec<(String, Value)>,
    /// Every expression of the payload and the replacements.
    pub exprs: Vec<Expr>,
    pub at: Location,
}

/// A compiled criterion and where it is written.
pub struct Check {
    pub criterion: Criterion,
    pub at: Location,
}

pub enum ActionKind {
    End,
    Goto(Jump),
    Retry {
        /// Seconds to wait before the next attempt.
        after: f64,
        /// How many retries this action allows (per step execution).
        limit: u64,
        /// A step or workflow run before the retry.
        then: Option<Jump>,
    },
}

/// A success or failure action (the step's own, then the workflow's it does not override).
pub struct Action {
    pub name: String,
    pub kind: ActionKind,
    pub criteria: Vec<Check>,
    pub at: Location,
}

pub struct Step {
    pub id: String,
    pub description: Option<String>,
    pub target: Target,
    pub parameters: Vec<Param>,
    pub request_body: Option<Body>,
    pub success_criteria: Vec<Check>,
    /// The step's actions, then the workflow's it does not override (by name), shared.
    pub on_success: Vec<Arc<Action>>,
    pub on_failure: Vec<Arc<Action>>,
    pub outputs: Vec<Output>,
    pub at: Location,
}

pub struct Workflow {
    pub id: String,
    /// Its index in the document's `workflows`.
    pub index: usize,
    pub summary: Option<String>,
    pub description: Option<String>,
    /// The `inputs` JSON Schema with its `$ref`s to `#/components/inputs/...` inlined.
    pub inputs: Option<Value>,
    pub depends_on: Vec<WorkflowRef>,
    pub steps: Vec<Step>,
    pub outputs: Vec<Output>,
    pub at: Location,
}

impl Workflow {
    /// The step of this id.
    pub fn step(&self, id: &str) -> Option<(usize, &Step)> {
        self.steps.iter().enumerate().find(|(_, s)| s.id == id)
    }

    /// The input properties its schema declares (top level), and whether it declares any
    /// schema at all.
    pub fn input_names(&self) -> Vec<&str> {
        self.inputs
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// The inputs its schema lists as `required`.
    pub fn required_inputs(&self) -> Vec<&str> {
        self.inputs
            .as_ref()
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// A loaded Arazzo document.
pub struct Document {
    name: Arc<str>,
    pub info: model::Info,
    /// The `arazzo` version as written.
    pub version: String,
    sources: Vec<Source>,
    /// `name -> {"url": ..., "type": ...}`: what `$sourceDescriptions.NAME.url` reads.
    source_values: Map<String, Value>,
    /// The `components` object as written (what `$components.*` reads).
    components: Value,
    workflows: Vec<Workflow>,
    diagnostics: Vec<Diagnostic>,
}

impl Document {
    /// The document's name as given (a path or URL): the `file` of every diagnostic.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The source descriptions, in document order, with where to load each from.
    pub fn source_descriptions(&self) -> &[Source] {
        &self.sources
    }

    /// The names of the `openapi` source descriptions, each mapped to API `api`: how a server
    /// of one API (or one `apis:` entry) sees a document, for the validator's operations.
    pub fn sources_as_one_api(&self, api: usize) -> Vec<(String, usize)> {
        self.sources
            .iter()
            .filter(|s| s.kind == SourceKind::Openapi)
            .map(|s| (s.name.clone(), api))
            .collect()
    }

    /// The well-formed workflows, in document order (some may still be unusable: see
    /// [`crate::validate`]).
    pub fn workflows(&self) -> &[Workflow] {
        &self.workflows
    }

    /// The workflow of this id.
    pub fn workflow(&self, id: &str) -> Option<&Workflow> {
        self.workflows.iter().find(|w| w.id == id)
    }

    /// Problems found while loading, each naming the workflow it makes unusable.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    pub(crate) fn source_values(&self) -> &Map<String, Value> {
        &self.source_values
    }

    pub(crate) fn components(&self) -> &Value {
        &self.components
    }
}

/// Reads a local file (at most [`MAX_DOCUMENT_BYTES`], a regular file) and loads it; relative
/// source descriptions resolve against its directory.
pub fn load_file(path: &Path) -> Result<Document, LoadError> {
    let name = path.display().to_string();
    let bytes = read_capped(path, MAX_DOCUMENT_BYTES).map_err(|m| LoadError::new(&name, "", m))?;
    let base = std::fs::canonicalize(path)
        .ok()
        .and_then(|p| Url::from_file_path(p).ok());
    from_bytes(&bytes, &name, base)
}

fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let too_large = || format!("larger than the limit of {} MiB", max >> 20);
    if meta.len() > max {
        return Err(too_large());
    }
    let mut buf = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read: {e}"))?;
    if buf.len() as u64 > max {
        return Err(too_large());
    }
    Ok(buf)
}

/// Loads a document from its bytes (JSON when the first significant character is `{`, else
/// YAML). `name` is what diagnostics call it; `base` is its location (a `file:` or http(s)
/// URL), against which relative source descriptions resolve (without it they stay as written).
pub fn from_bytes(bytes: &[u8], name: &str, base: Option<Url>) -> Result<Document, LoadError> {
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(LoadError::new(
            name,
            "",
            format!("larger than the limit of {} MiB", MAX_DOCUMENT_BYTES >> 20),
        ));
    }
    let value = parse(bytes).map_err(|m| LoadError::new(name, "", m))?;
    from_value(value, name, base)
}

/// JSON or YAML to a JSON value (YAML keys that are not strings become strings).
fn parse(bytes: &[u8]) -> Result<Value, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{') | Some(b'[')) {
        return serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"));
    }
    if let Some(line) = flow_too_deep(bytes) {
        return Err(format!(
            "line {line}: flow collections ([...] or {{...}}) nested deeper than {MAX_YAML_FLOW_DEPTH} levels"
        ));
    }
    let yaml: serde_yaml_ng::Value =
        serde_yaml_ng::from_slice(bytes).map_err(|e| format!("not valid YAML: {e}"))?;
    yaml_to_json(yaml)
}

/// The line where `[`/`{` outside quotes and comments first nest deeper than
/// [`MAX_YAML_FLOW_DEPTH`] (a conservative count: brackets inside plain scalars count too).
fn flow_too_deep(bytes: &[u8]) -> Option<usize> {
    let (mut depth, mut line) = (0usize, 1usize);
    let mut quote: Option<u8> = None;
    let mut comment = false;
    let mut escaped = false;
    let mut prev = b'\n';
    for &b in bytes {
        if b == b'\n' {
            line += 1;
            comment = false;
        }
        if comment {
            prev = b;
            continue;
        }
        match quote {
            Some(b'"') if escaped => escaped = false,
            Some(b'"') if b == b'\\' => escaped = true,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'"' | b'\''
                    if matches!(prev, b' ' | b'\t' | b'\n' | b'[' | b'{' | b',' | b':') =>
                {
                    quote = Some(b)
                }
                b'#' if matches!(prev, b' ' | b'\t' | b'\n') => comment = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_YAML_FLOW_DEPTH {
                        return Some(line);
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
        prev = b;
    }
    None
}

fn yaml_to_json(v: serde_yaml_ng::Value) -> Result<Value, String> {
    use serde_yaml_ng::Value as Y;
    Ok(match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
                    .ok_or_else(|| format!("the number {n} has no JSON form"))?
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(
            items
                .into_iter()
                .map(yaml_to_json)
                .collect::<Result<_, _>>()?,
        ),
        Y::Mapping(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, v) in m {
                let key = match k {
                    Y::String(s) => s,
                    Y::Number(n) => n.to_string(),
                    Y::Bool(b) => b.to_string(),
                    Y::Null => "null".into(),
                    other => return Err(format!("a mapping key is not a scalar: {other:?}")),
                };
                out.insert(key, yaml_to_json(v)?);
            }
            Value::Object(out)
        }
        Y::Tagged(t) => yaml_to_json(t.value)?,
    })
}

/// An RFC 6901 token, escaped.
pub(crate) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => {
                out.push('/');
                out.push_str(&index.to_string());
            }
            Segment::Map { key } => {
                out.push('/');
                out.push_str(&escape(key));
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    out
}

/// Deserializes `value` as `T`, an error pointing inside it (`base` + the path serde reached).
fn typed<T: serde::de::DeserializeOwned>(value: Value, base: &str) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let pointer = format!("{base}{}", pointer_of(e.path()));
        (pointer, e.into_inner().to_string())
    })
}

/// Loads a document already parsed to JSON. See [`from_bytes`].
pub fn from_value(value: Value, name: &str, base: Option<Url>) -> Result<Document, LoadError> {
    let err = |pointer: &str, message: String| LoadError::new(name, pointer, message);
    let Some(root) = value.as_object() else {
        return Err(err("", "an Arazzo document is an object".into()));
    };
    match root.get("arazzo") {
        None => {
            return Err(err(
                "",
                "not an Arazzo document: no `arazzo` version field".into(),
            ));
        }
        Some(Value::String(v)) if model::supported_version(v) => {}
        Some(Value::String(v)) => {
            return Err(err(
                "/arazzo",
                format!("Arazzo {v} is not supported (this reads Arazzo 1.0.x)"),
            ));
        }
        Some(other) => {
            return Err(err(
                "/arazzo",
                format!("the version must be a string such as \"1.0.1\", not {other}"),
            ));
        }
    }
    let components_value = root.get("components").cloned().unwrap_or(Value::Null);
    let doc: model::Arazzo = typed(value, "").map_err(|(p, m)| err(&p, m))?;
    if doc.source_descriptions.is_empty() {
        return Err(err(
            "/sourceDescriptions",
            "at least one source description is required".into(),
        ));
    }
    if doc.workflows.is_empty() {
        return Err(err(
            "/workflows",
            "at least one workflow is required".into(),
        ));
    }
    let mut sources = Vec::with_capacity(doc.source_descriptions.len());
    let mut source_values = Map::new();
    for (i, s) in doc.source_descriptions.iter().enumerate() {
        if source_values.contains_key(&s.name) {
            return Err(err(
                &format!("/sourceDescriptions/{i}/name"),
                format!("a second source description named `{}`", s.name),
            ));
        }
        let kind = s.kind.unwrap_or(SourceKind::Openapi);
        let location = resolve_url(base.as_ref(), &s.url);
        source_values.insert(
            s.name.clone(),
            serde_json::json!({"name": s.name, "url": location, "type": kind.as_str()}),
        );
        sources.push(Source {
            name: s.name.clone(),
            url: s.url.clone(),
            location,
            kind,
        });
    }

    let name: Arc<str> = Arc::from(name);
    let mut loader = Loader {
        doc: name.clone(),
        components: &doc.components,
        diagnostics: Vec::new(),
        workflow: None,
    };
    let mut workflows: Vec<Workflow> = Vec::new();
    for (index, raw) in doc.workflows.iter().enumerate() {
        let wid = raw
            .get("workflowId")
            .and_then(Value::as_str)
            .map(str::to_string);
        loader.workflow = wid.clone();
        let base = format!("/workflows/{index}");
        match typed::<model::Workflow>(raw.clone(), &base) {
            Ok(w) => {
                if workflows.iter().any(|o| o.id == w.workflow_id) {
                    loader.diag(
                        &format!("{base}/workflowId"),
                        format!(
                            "a second workflow `{}`: workflowIds are unique; this one is skipped",
                            w.workflow_id
                        ),
                    );
                    continue;
                }
                workflows.push(loader.workflow(w, index));
            }
            Err((pointer, message)) => {
                loader.diag(&pointer, format!("{message}; the workflow is skipped"));
            }
        }
    }
    let diagnostics = loader.diagnostics;
    Ok(Document {
        name,
        info: doc.info,
        version: doc.arazzo,
        sources,
        source_values,
        components: components_value,
        workflows,
        diagnostics,
    })
}

/// A source description's `url`, resolved against the document's location: an absolute URL
/// stays as it is; a relative one joins `base`; a `file:` result becomes a local path.
fn resolve_url(base: Option<&Url>, url: &str) -> String {
    if let Ok(abs) = Url::parse(url) {
        return file_or_url(abs);
    }
    match base.and_then(|b| b.join(url).ok()) {
        Some(joined) => file_or_url(joined),
        None => url.to_string(),
    }
}

fn file_or_url(u: Url) -> String {
    if u.scheme() == "file"
        && let Ok(p) = u.to_file_path()
    {
        return p.display().to_string();
    }
    u.to_string()
}

/// Compiles one workflow, collecting its problems.
struct Loader<'a> {
    doc: Arc<str>,
    components: &'a model::Components,
    diagnostics: Vec<Diagnostic>,
    workflow: Option<String>,
}

/// `$sourceDescriptions.NAME.REST` -> (NAME, REST). Source names match `[A-Za-z0-9_\-]+`, so
/// the first `.` after the prefix ends the name.
fn qualified(s: &str) -> Option<(&str, &str)> {
    let rest = s.strip_prefix("$sourceDescriptions.")?;
    let (name, id) = rest.split_once('.')?;
    (!name.is_empty() && !id.is_empty()).then_some((name, id))
}

fn workflow_ref(s: &str) -> WorkflowRef {
    match qualified(s) {
        Some((source, workflow)) => WorkflowRef::External {
            source: source.into(),
            workflow: workflow.into(),
        },
        None => WorkflowRef::Local(s.into()),
    }
}

impl Loader<'_> {
    fn at(&self, pointer: &str) -> Location {
        Location::new(self.doc.clone(), pointer.to_string())
    }

    fn diag(&mut self, pointer: &str, message: String) {
        self.diagnostics.push(Diagnostic {
            location: self.at(pointer),
            workflow: self.workflow.clone(),
            message,
        });
    }

    fn workflow(&mut self, w: model::Workflow, index: usize) -> Workflow {
        let base = format!("/workflows/{index}");
        let inputs = w.inputs.as_ref().map(|s| {
            let mut seen = Vec::new();
            match self.inline_inputs(s, &mut seen, 0) {
                Ok(v) => v,
                Err(m) => {
                    self.diag(&format!("{base}/inputs"), m);
                    Value::Object(Map::new())
                }
            }
        });
        if let Some(s) = &inputs
            && s.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| t != "object")
        {
            self.diag(
                &format!("{base}/inputs"),
                "workflow inputs must be an object schema (`type: object`)".into(),
            );
        }
        let depends_on = w.depends_on.iter().map(|d| workflow_ref(d)).collect();
        let wf_params: Vec<(model::Parameter, String)> = w
            .parameters
            .iter()
            .enumerate()
            .filter_map(|(i, p)| self.parameter(p, &format!("{base}/parameters/{i}")))
            .collect();
        let wf_success: Vec<Arc<Action>> = w
            .success_actions
            .iter()
            .enumerate()
            .filter_map(|(i, a)| self.success_action(a, &format!("{base}/successActions/{i}")))
            .map(Arc::new)
            .collect();
        let wf_failure: Vec<Arc<Action>> = w
            .failure_actions
            .iter()
            .enumerate()
            .filter_map(|(i, a)| self.failure_action(a, &format!("{base}/failureActions/{i}")))
            .map(Arc::new)
            .collect();
        let mut steps: Vec<Step> = Vec::with_capacity(w.steps.len());
        if w.steps.is_empty() {
            self.diag(
                &format!("{base}/steps"),
                "a workflow needs at least one step".into(),
            );
        }
        for (si, s) in w.steps.iter().enumerate() {
            let sp = format!("{base}/steps/{si}");
            if steps.iter().any(|o| o.id == s.step_id) {
                self.diag(
                    &format!("{sp}/stepId"),
                    format!(
                        "a second step `{}`: stepIds are unique in a workflow",
                        s.step_id
                    ),
                );
            }
            if let Some(step) = self.step(s, &sp, &wf_params, &wf_success, &wf_failure) {
                steps.push(step);
            }
        }
        let outputs = self.outputs(&w.outputs, &format!("{base}/outputs"));
        Workflow {
            id: w.workflow_id,
            index,
            summary: w.summary,
            description: w.description,
            inputs,
            depends_on,
            steps,
            outputs,
            at: self.at(&base),
        }
    }

    /// `inputs` with `$ref: '#/components/inputs/NAME'` inlined (recursively; a cycle or a
    /// reference elsewhere is an error).
    fn inline_inputs(
        &self,
        schema: &Value,
        seen: &mut Vec<String>,
        depth: usize,
    ) -> Result<Value, String> {
        if depth > 64 {
            return Err("the inputs schema nests deeper than 64 levels".into());
        }
        match schema {
            Value::Object(m) => {
                if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                    let Some(name) = r.strip_prefix("#/components/inputs/") else {
                        return Err(format!(
                            "`$ref: {r}`: inputs may only refer to `#/components/inputs/NAME`"
                        ));
                    };
                    let name = unescape(name);
                    if seen.contains(&name) {
                        return Err(format!("`$ref: {r}` refers to itself (a cycle)"));
                    }
                    let Some(target) = self.components.inputs.get(&name) else {
                        return Err(format!("`$ref: {r}`: no such component input"));
                    };
                    seen.push(name);
                    let mut resolved = self.inline_inputs(target, seen, depth + 1)?;
                    seen.pop();
                    // Keywords beside `$ref` (2020-12 allows them) apply too.
                    if let Value::Object(out) = &mut resolved {
                        for (k, v) in m {
                            if k != "$ref" {
                                out.insert(k.clone(), self.inline_inputs(v, seen, depth + 1)?);
                            }
                        }
                    }
                    return Ok(resolved);
                }
                let mut out = Map::with_capacity(m.len());
                for (k, v) in m {
                    out.insert(k.clone(), self.inline_inputs(v, seen, depth + 1)?);
                }
                Ok(Value::Object(out))
            }
            Value::Array(items) => items
                .iter()
                .map(|v| self.inline_inputs(v, seen, depth + 1))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            other => Ok(other.clone()),
        }
    }

    /// A component's name from `$components.KIND.NAME`.
    fn component<'c>(&mut self, reference: &'c str, kind: &str, pointer: &str) -> Option<&'c str> {
        let name = reference
            .strip_prefix("$components.")
            .and_then(|r| r.strip_prefix(kind))
            .and_then(|r| r.strip_prefix('.'));
        if name.is_none() {
            self.diag(
                &format!("{pointer}/reference"),
                format!("`{reference}`: expected `$components.{kind}.NAME`"),
            );
        }
        name
    }

    /// A parameter (a component resolved, its `value` overridden) and where it is written.
    fn parameter(
        &mut self,
        p: &model::Reusable<model::Parameter>,
        pointer: &str,
    ) -> Option<(model::Parameter, String)> {
        match p {
            model::Reusable::Inline(p) => Some((p.clone(), pointer.to_string())),
            model::Reusable::Reference { reference, value } => {
                let name = self.component(reference, "parameters", pointer)?;
                let Some(raw) = self.components.parameters.get(name) else {
                    self.diag(
                        &format!("{pointer}/reference"),
                        format!("`{reference}`: no such component parameter"),
                    );
                    return None;
                };
                let cp = format!("/components/parameters/{}", escape(name));
                match typed::<model::Parameter>(raw.clone(), &cp) {
                    Ok(mut param) => {
                        let at = match value {
                            Some(v) => {
                                param.value = v.clone();
                                pointer.to_string()
                            }
                            None => cp,
                        };
                        Some((param, at))
                    }
                    Err((ptr, m)) => {
                        self.diag(&ptr, m);
                        None
                    }
                }
            }
        }
    }

    /// An inline action, or the component action a `reference` names (read at its own pointer),
    /// with the pointer its diagnostics are reported at.
    fn reusable<T: Clone + serde::de::DeserializeOwned>(
        &mut self,
        a: &model::Reusable<T>,
        pointer: &str,
        section: &str,
        what: &str,
        table: &serde_json::Map<String, Value>,
    ) -> Option<(T, String)> {
        match a {
            model::Reusable::Inline(a) => Some((a.clone(), pointer.to_string())),
            model::Reusable::Reference { reference, .. } => {
                let name = self.component(reference, section, pointer)?;
                let cp = format!("/components/{section}/{}", escape(name));
                let Some(raw) = table.get(name) else {
                    self.diag(
                        &format!("{pointer}/reference"),
                        format!("`{reference}`: no such component {what}"),
                    );
                    return None;
                };
                match typed::<T>(raw.clone(), &cp) {
                    Ok(a) => Some((a, cp)),
                    Err((ptr, m)) => {
                        self.diag(&ptr, m);
                        None
                    }
                }
            }
        }
    }

    fn success_action(
        &mut self,
        a: &model::Reusable<model::SuccessAction>,
        pointer: &str,
    ) -> Option<Action> {
        let components = self.components;
        let raw = &components.success_actions;
        let (a, pointer) = self.reusable(a, pointer, "successActions", "success action", raw)?;
        // A success action is a failure action that cannot retry: one reading of both.
        let kind = match a.kind {
            model::SuccessKind::End => model::FailureKind::End,
            model::SuccessKind::Goto => model::FailureKind::Goto,
        };
        let a = model::FailureAction {
            name: a.name,
            kind,
            workflow_id: a.workflow_id,
            step_id: a.step_id,
            retry_after: None,
            retry_limit: None,
            criteria: a.criteria,
        };
        self.action(a, pointer)
    }

    fn failure_action(
        &mut self,
        a: &model::Reusable<model::FailureAction>,
        pointer: &str,
    ) -> Option<Action> {
        let components = self.components;
        let raw = &components.failure_actions;
        let (a, pointer) = self.reusable(a, pointer, "failureActions", "failure action", raw)?;
        self.action(a, pointer)
    }

    /// An action (of either kind, read at `pointer`): `end`, `goto` or `retry`, its criteria.
    fn action(&mut self, a: model::FailureAction, pointer: String) -> Option<Action> {
        let kind = match a.kind {
            model::FailureKind::End => ActionKind::End,
            model::FailureKind::Goto => ActionKind::Goto(self.jump(
                a.step_id.as_deref(),
                a.workflow_id.as_deref(),
                &pointer,
                true,
            )?),
            model::FailureKind::Retry => {
                let after = a.retry_after.unwrap_or(0.0);
                if !(after.is_finite() && after >= 0.0) {
                    self.diag(
                        &format!("{pointer}/retryAfter"),
                        "retryAfter is a non-negative number of seconds".into(),
                    );
                    return None;
                }
                let then = if a.step_id.is_some() || a.workflow_id.is_some() {
                    Some(self.jump(
                        a.step_id.as_deref(),
                        a.workflow_id.as_deref(),
                        &pointer,
                        false,
                    )?)
                } else {
                    None
                };
                ActionKind::Retry {
                    after,
                    limit: a.retry_limit.unwrap_or(1),
                    then,
                }
            }
        };
        let criteria = self.criteria(&a.criteria, &format!("{pointer}/criteria"));
        Some(Action {
            name: a.name,
            kind,
            criteria,
            at: self.at(&pointer),
        })
    }

    fn jump(
        &mut self,
        step: Option<&str>,
        workflow: Option<&str>,
        pointer: &str,
        required: bool,
    ) -> Option<Jump> {
        match (step, workflow) {
            (Some(s), None) => Some(Jump::Step(s.to_string())),
            (None, Some(w)) => Some(Jump::Workflow(workflow_ref(w))),
            (Some(_), Some(_)) => {
                self.diag(
                    pointer,
                    "`stepId` and `workflowId` are mutually exclusive".into(),
                );
                None
            }
            (None, None) => {
                if required {
                    self.diag(
                        pointer,
                        "a `goto` action needs a `stepId` or a `workflowId`".into(),
                    );
                }
                None
            }
        }
    }

    fn criteria(&mut self, list: &[model::Criterion], pointer: &str) -> Vec<Check> {
        let mut out = Vec::with_capacity(list.len());
        for (i, c) in list.iter().enumerate() {
            let cp = format!("{pointer}/{i}");
            let kind = match CriterionKind::from_type(c.kind.as_ref()) {
                Ok(k) => k,
                Err(e) => {
                    self.diag(&format!("{cp}/type"), e.to_string());
                    continue;
                }
            };
            match Criterion::compile(&c.condition, c.context.as_deref(), kind) {
                Ok(criterion) => out.push(Check {
                    criterion,
                    at: self.at(&cp),
                }),
                Err(e) => self.diag(
                    &format!("{cp}/condition"),
                    format!("`{}`: {e}", c.condition),
                ),
            }
        }
        out
    }

    fn outputs(&mut self, map: &Map<String, Value>, pointer: &str) -> Vec<Output> {
        let mut out = Vec::with_capacity(map.len());
        for (name, v) in map {
            let op = format!("{pointer}/{}", escape(name));
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
            {
                self.diag(
                    &op,
                    format!("output name `{name}` must match ^[a-zA-Z0-9.\\-_]+$"),
                );
                continue;
            }
            let Some(text) = v.as_str() else {
                self.diag(&op, "an output is a runtime expression (a string)".into());
                continue;
            };
            match Expr::parse(text) {
                Ok(expr) => out.push(Output {
                    name: name.clone(),
                    expr,
                    at: self.at(&op),
                }),
                Err(e) => self.diag(&op, format!("`{text}`: {e}")),
            }
        }
        out
    }

    fn compile_value(&mut self, value: &Value, pointer: &str) -> Vec<Expr> {
        match expressions_in(value) {
            Ok(exprs) => exprs,
            Err((inner, e)) => {
                self.diag(&format!("{pointer}{inner}"), e.to_string());
                Vec::new()
            }
        }
    }

    fn target(&mut self, s: &model::Step, pointer: &str) -> Option<Target> {
        match (&s.operation_id, &s.operation_path, &s.workflow_id) {
            (Some(id), None, None) => Some(Target::Operation(match qualified(id) {
                Some((source, id)) => OperationRef::Id {
                    source: Some(source.into()),
                    id: id.into(),
                },
                None => OperationRef::Id {
                    source: None,
                    id: id.clone(),
                },
            })),
            (None, Some(path), None) => match operation_path(path) {
                Ok(op) => Some(Target::Operation(op)),
                Err(m) => {
                    self.diag(
                        &format!("{pointer}/operationPath"),
                        format!("`{path}`: {m}"),
                    );
                    None
                }
            },
            (None, None, Some(w)) => Some(Target::Workflow(workflow_ref(w))),
            (None, None, None) => {
                self.diag(
                    pointer,
                    "a step needs one of `operationId`, `operationPath` or `workflowId`".into(),
                );
                None
            }
            _ => {
                self.diag(
                    pointer,
                    "`operationId`, `operationPath` and `workflowId` are mutually exclusive".into(),
                );
                None
            }
        }
    }

    fn step(
        &mut self,
        s: &model::Step,
        pointer: &str,
        wf_params: &[(model::Parameter, String)],
        wf_success: &[Arc<Action>],
        wf_failure: &[Arc<Action>],
    ) -> Option<Step> {
        let target = self.target(s, pointer);
        let calls_workflow = matches!(target, Some(Target::Workflow(_)));
        // The workflow's parameters, then the step's: a step's (name, in) replaces the
        // workflow's.
        let own: Vec<(model::Parameter, String)> = s
            .parameters
            .iter()
            .enumerate()
            .filter_map(|(i, p)| self.parameter(p, &format!("{pointer}/parameters/{i}")))
            .collect();
        let mut merged: Vec<(model::Parameter, String)> = wf_params
            .iter()
            .filter(|(w, _)| {
                !own.iter()
                    .any(|(o, _)| o.name == w.name && o.location == w.location)
            })
            .cloned()
            .collect();
        merged.extend(own);
        let mut parameters = Vec::with_capacity(merged.len());
        for (p, at) in merged {
            let location = match p.location.as_deref() {
                None if calls_workflow => None,
                None => {
                    self.diag(
                        &format!("{at}/name"),
                        format!(
                            "parameter `{}`: `in` is required for an operation's parameter",
                            p.name
                        ),
                    );
                    continue;
                }
                Some(l) => match ParamIn::parse(l) {
                    Some(l) => Some(l),
                    None => {
                        self.diag(
                            &format!("{at}/in"),
                            format!(
                                "parameter `{}`: `in: {l}` is not a parameter location (path, query, header or cookie; a body goes in `requestBody`)",
                                p.name
                            ),
                        );
                        continue;
                    }
                },
            };
            let exprs = self.compile_value(&p.value, &format!("{at}/value"));
            parameters.push(Param {
                name: p.name,
                location,
                value: p.value,
                exprs,
                at: self.at(&at),
            });
        }
        let request_body = s.request_body.as_ref().map(|b| {
            let bp = format!("{pointer}/requestBody");
            let mut exprs = match &b.payload {
                Some(p) => self.compile_value(p, &format!("{bp}/payload")),
                None => Vec::new(),
            };
            let mut replacements = Vec::with_capacity(b.replacements.len());
            for (i, r) in b.replacements.iter().enumerate() {
                let rp = format!("{bp}/replacements/{i}");
                if !(r.target.is_empty() || r.target.starts_with('/')) {
                    self.diag(
                        &format!("{rp}/target"),
                        format!("`{}`: a replacement target is a JSON pointer (XPath targets are not supported)", r.target),
                    );
                    continue;
                }
                exprs.extend(self.compile_value(&r.value, &format!("{rp}/value")));
                replacements.push((r.target.clone(), r.value.clone()));
            }
            Body {
                content_type: b.content_type.clone(),
                payload: b.payload.clone(),
                replacements,
                exprs,
                at: self.at(&bp),
            }
        });
        if calls_workflow && request_body.is_some() {
            self.diag(
                &format!("{pointer}/requestBody"),
                "a step that calls a workflow has no request body (pass inputs as parameters)"
                    .into(),
            );
        }
        let success_criteria =
            self.criteria(&s.success_criteria, &format!("{pointer}/successCriteria"));
        let mut on_success: Vec<Arc<Action>> = s
            .on_success
            .iter()
            .enumerate()
            .filter_map(|(i, a)| self.success_action(a, &format!("{pointer}/onSuccess/{i}")))
            .map(Arc::new)
            .collect();
        let mut on_failure: Vec<Arc<Action>> = s
            .on_failure
            .iter()
            .enumerate()
            .filter_map(|(i, a)| self.failure_action(a, &format!("{pointer}/onFailure/{i}")))
            .map(Arc::new)
            .collect();
        // The workflow's actions apply after the step's; a step's action of the same name
        // overrides the workflow's.
        for list in [(&mut on_success, wf_success), (&mut on_failure, wf_failure)] {
            let (own, inherited) = list;
            for a in inherited {
                if !own.iter().any(|o| o.name == a.name) {
                    own.push(a.clone());
                }
            }
        }
        let outputs = self.outputs(&s.outputs, &format!("{pointer}/outputs"));
        Some(Step {
            id: s.step_id.clone(),
            description: s.description.clone(),
            target: target.unwrap_or(Target::Invalid),
            parameters,
            request_body,
            success_criteria,
            on_success,
            on_failure,
            outputs,
            at: self.at(pointer),
        })
    }
}

/// `{$sourceDescriptions.NAME.url}#/paths/~1pets~1{id}/get` -> the operation.
fn operation_path(text: &str) -> Result<OperationRef, String> {
    let rest = text
        .strip_prefix("{$sourceDescriptions.")
        .ok_or("expected `{$sourceDescriptions.NAME.url}#/paths/...`")?;
    let (name, rest) = rest
        .split_once(".url}")
        .ok_or("expected `{$sourceDescriptions.NAME.url}#/paths/...`")?;
    if name.is_empty() || name.contains(['.', '}', '{']) {
        return Err("expected `{$sourceDescriptions.NAME.url}#/paths/...`".into());
    }
    let pointer = rest
        .strip_prefix('#')
        .ok_or("expected `#` and a JSON pointer after the source description")?;
    let tokens: Vec<String> = pointer.split('/').skip(1).map(unescape).collect();
    if !pointer.starts_with('/') || tokens.first().map(String::as_str) != Some("paths") {
        return Err("the JSON pointer must start with `/paths/`".into());
    }
    match tokens.as_slice() {
        [_, path, method] => {
            let m = method.to_ascii_lowercase();
            if openapi_mcp_toolset::model::HttpMethod::parse(&m).is_none() {
                return Err(format!("`{method}` is not an HTTP method"));
            }
            Ok(OperationRef::Path {
                source: name.to_string(),
                path: path.clone(),
                method: m,
            })
        }
        [_, _] => Err(
            "the pointer names a path item, not an operation: add the method (`.../get`)".into(),
        ),
        _ => Err("expected `#/paths/{escaped path}/{method}`".into()),
    }
}

/// Whether SPEC names an Arazzo document rather than an OpenAPI description: a local file
/// named `*.arazzo.{yaml,yml,json}`, or one whose first lines declare `arazzo:`.
pub fn is_document(spec: &str) -> bool {
    let path = Path::new(spec);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if [".arazzo.yaml", ".arazzo.yml", ".arazzo.json"]
        .iter()
        .any(|s| name.ends_with(s))
    {
        return true;
    }
    // A cheap look at the head of a local file (specs are read in full later anyway).
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = [0u8; 512];
    let n = std::io::Read::read(&mut f, &mut head).unwrap_or(0);
    let head = String::from_utf8_lossy(&head[..n]);
    head.lines().any(|l| {
        let l = l.trim_start_matches('\u{feff}');
        let t = l.trim_start();
        l.starts_with("arazzo:") || t.starts_with("\"arazzo\"") || t.starts_with("{\"arazzo\"")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_paths() {
        assert_eq!(
            operation_path("{$sourceDescriptions.petstore.url}#/paths/~1pets~1{id}/get"),
            Ok(OperationRef::Path {
                source: "petstore".into(),
                path: "/pets/{id}".into(),
                method: "get".into()
            })
        );
        let e = operation_path("{$sourceDescriptions.p.url}#/paths/~1pet~1findByStatus")
            .expect_err("no method");
        assert!(e.contains("path item"), "{e}");
        assert!(operation_path("$sourceDescriptions.p.url#/paths/~1a/get").is_err());
        assert!(operation_path("{$sourceDescriptions.p.url}#/paths/~1a/fetch").is_err());
        assert!(operation_path("{$sourceDescriptions.p.url}#/components/x/get").is_err());
    }

    #[test]
    fn flow_depth() {
        let deep = format!("a: {}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(flow_too_deep(deep.as_bytes()), Some(1));
        let fine = "a: '[[[[' # [[[[[\nb: [1, [2, {c: 3}]]\n";
        assert_eq!(flow_too_deep(fine.as_bytes()), None);
        let e = from_bytes(deep.as_bytes(), "deep.yaml", None)
            .err()
            .expect("refused");
        assert!(
            e.to_string()
                .starts_with("deep.yaml: line 1: flow collections"),
            "{e}"
        );
    }

    #[test]
    fn versions_and_shape() {
        let e = from_bytes(b"arazzo: 2.0.0\n", "a.yaml", None)
            .err()
            .expect("2.0");
        assert_eq!(
            e.to_string(),
            "a.yaml#/arazzo: Arazzo 2.0.0 is not supported (this reads Arazzo 1.0.x)"
        );
        let e = from_bytes(b"openapi: 3.1.0\n", "a.yaml", None)
            .err()
            .expect("not arazzo");
        assert!(e.message.contains("no `arazzo` version"), "{e}");
        let e = from_bytes(b"arazzo: 1.0.1\ninfo: {title: t}\n", "a.yaml", None)
            .err()
            .expect("no version");
        assert_eq!(e.pointer, "/info", "{e}");
        assert!(e.message.contains("version"), "{e}");
        let e = from_bytes(b"{\"arazzo\": \"1.0.0\",", "a.json", None)
            .err()
            .expect("json");
        assert!(e.message.starts_with("not valid JSON"), "{e}");
    }

    #[test]
    fn relative_sources_resolve_against_the_document() {
        let base = Url::parse("file:///specs/flows/a.arazzo.yaml").ok();
        assert_eq!(
            resolve_url(base.as_ref(), "./pets.yaml"),
            "/specs/flows/pets.yaml"
        );
        assert_eq!(
            resolve_url(base.as_ref(), "../pets.yaml"),
            "/specs/pets.yaml"
        );
        let remote = Url::parse("https://example.com/flows/a.yaml").ok();
        assert_eq!(
            resolve_url(remote.as_ref(), "pets.yaml"),
            "https://example.com/flows/pets.yaml"
        );
        assert_eq!(
            resolve_url(base.as_ref(), "https://x.test/o.json"),
            "https://x.test/o.json"
        );
        assert_eq!(resolve_url(None, "pets.yaml"), "pets.yaml");
    }
}
