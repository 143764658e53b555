//! `--mode code` (#22): two steps instead of one tool call per operation. The model finds
//! operations with `search_operations`, reads their TypeScript declarations with
//! `describe_operation`, and sends one script to `execute`, which runs it in an embedded
//! JavaScript engine (QuickJS, through rquickjs) whose only capability is an `api` object: one
//! async function per operation. Each `api.*` call goes back to the server, which validates and
//! forwards it exactly as a tool call (credentials, `--confirm`, rate and concurrency limits,
//! scrubbing, logging); the script sees the result, or an `Error` with the message the tool would
//! have given. So ten dependent calls cost the model one round trip.
//!
//! The sandbox: no filesystem, network, timers, modules or host objects (QuickJS without its
//! `std`/`os` modules; `import()` finds no loader); a wall-time limit (an interrupt handler the
//! engine polls, which also covers the time spent waiting for the API), a heap limit, a stack
//! limit, a cap on `api.*` calls and on the size of the result and of `console` output. Each
//! script runs on its own thread (a bounded number at once), so a runaway script never holds a
//! worker of the async runtime: other clients are served meanwhile.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use openapi_mcp_toolset::model::{OutputShape, ToolDef};

use crate::modes::dynamic::{self, DESCRIBE, SEARCH};

// The mode's definitions (its tool name, its limits) live with the other modes.
pub use crate::modes::dynamic::{CodeLimits, EXECUTE};

/// Longest script accepted (characters).
pub const MAX_CODE_CHARS: usize = 100_000;
/// Bytes of `console` output kept per script; the rest is dropped with a note.
pub const MAX_LOG_BYTES: usize = 16 * 1024;
/// Characters of a thrown error's message kept (the rest is cut, with a note): a script's
/// `throw new Error('x'.repeat(4e7))` must not become a 40 MB result (#36).
pub const MAX_MESSAGE_CHARS: usize = 16 * 1024;
/// Characters of a thrown error's `name`, and of each of the (at most 3) stack lines shown.
pub const MAX_NAME_CHARS: usize = 256;
pub const MAX_STACK_LINE_CHARS: usize = 512;
/// Characters of a thrown non-Error value's JSON.
pub const MAX_THROWN_JSON_CHARS: usize = 2000;
/// Scripts running at once; more wait for a slot.
pub const MAX_SCRIPTS: usize = 8;
/// How long past its deadline a script that does not stop is waited for before the call answers
/// anyway (the engine is still told to stop; its thread ends at its next interrupt check).
pub const GRACE: Duration = Duration::from_secs(1);

/// Seconds to a tenth, without a needless `.0`.
fn seconds(t: Duration) -> f64 {
    (t.as_secs_f64() * 10.0).round() / 10.0
}

fn object(v: Value) -> Arc<Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    }
}

/// The three tools of code mode, described for a model (`api` is the API's title).
pub fn meta_tools(api: &str, operations: usize, limits: &CodeLimits) -> Vec<Tool> {
    let mut tools = dynamic::meta_tools(api, operations);
    tools.truncate(2);
    tools[0].description = Some(
        format!(
            "Find operations of the {api} API ({operations} operations, callable from `{EXECUTE}` \
             scripts as `api.<name>(args)`). Search with what you want to do in plain words (e.g. \
             \"create an issue in a repository\") or with keywords. Returns the best-matching \
             operations: name, HTTP method, path and summary. Then `{DESCRIBE}` gives an \
             operation's TypeScript declaration, and `{EXECUTE}` runs a script that calls it."
        )
        .into(),
    );
    tools[1].description = Some(
        format!(
            "The TypeScript declaration of one {api} API operation found with `{SEARCH}`: \
             `api.<name>(args: {{...}}): Promise<...>` with its argument and result types, and \
             its description and annotations (read-only, destructive, ...). Describe an \
             operation before calling it in a script."
        )
        .into(),
    );
    let secs = seconds(limits.timeout);
    let mut execute = Tool::new(
        EXECUTE,
        format!(
            "Run JavaScript against the {api} API and return its result: several dependent calls \
             in one step (list, filter, act on each). `code` is the body of an async function: \
             `await api.<name>({{...}})` calls an operation (one object argument, as \
             `{DESCRIBE}` declares; the result is the parsed response), and `return` gives the \
             result (JSON-serialised). A failed call (invalid arguments, an HTTP error) throws an \
             Error with the message and `status`; use try/catch to go on. `console.log` output is \
             returned too. Calls run one at a time. There is nothing else: no network, files, \
             timers or modules. Limits: {secs} s, {} MiB of memory, {} API calls, {} KiB of \
             result. The result lists the calls made.",
            limits.memory >> 20,
            limits.max_calls,
            limits.max_output / 1024,
        ),
        object(json!({
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_CODE_CHARS,
                    "description": "The body of an async function, e.g. `const pets = await api.list_pets({limit: 10}); return pets.filter(p => p.tag === 'dog').map(p => p.name);`"
                }
            },
            "required": ["code"],
            "additionalProperties": false
        })),
    )
    .with_title("Run a script against the API")
    .with_annotations(
        ToolAnnotations::with_title("Run a script against the API")
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true),
    );
    execute.output_schema = Some(object(json!({
        "type": "object",
        "properties": {
            "result": {"description": "What the script returned."},
            "calls": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "operation": {"type": "string"},
                        "status": {"type": ["integer", "null"]},
                        "ok": {"type": "boolean"}
                    },
                    "required": ["operation", "ok"]
                }
            },
            "logs": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["calls"]
    })));
    tools.push(execute);
    tools
}

// ---------------------------------------------------------------------------------------------
// TypeScript declarations

/// Nesting depth of a declared type past which it is `unknown`.
const MAX_TYPE_DEPTH: usize = 12;
/// Characters of one declaration at most (past it, the rest of the types are `unknown`).
const MAX_DECLARATION_CHARS: usize = 24_000;

/// The TypeScript declaration of `def`'s function on the `api` object: named types for its
/// schemas' `$defs`, then `api.<name>(args: {...}): Promise<...>`, with the description as a doc
/// comment.
pub fn declaration(def: &ToolDef) -> String {
    let tool = def.tool();
    let input = Value::Object((*tool.input_schema).clone());
    let mut ts = TsWriter::default();
    let args = ts.root(&input);
    let result = match &tool.output_schema {
        Some(o) => {
            let o = Value::Object((**o).clone());
            let body = match def.route.output {
                OutputShape::Wrapped => o
                    .get("properties")
                    .and_then(|p| p.get("result"))
                    .cloned()
                    .unwrap_or(Value::Bool(true)),
                _ => o.clone(),
            };
            ts.with_root(&o, |ts| ts.ty(&body, 0))
        }
        None => "unknown".to_string(),
    };
    let mut out = String::new();
    for (name, body) in &ts.named {
        out.push_str(&format!("type {name} = {body};\n"));
    }
    let summary = dynamic::summary(def);
    out.push_str("/**\n");
    for line in doc_lines(&summary, def.description()) {
        out.push_str(&format!(" * {line}\n"));
    }
    out.push_str(&format!(
        " * {} {}\n */\n",
        def.route.method.as_str(),
        def.route.path
    ));
    let required = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    out.push_str(&format!(
        "function {}(args{}: {args}): Promise<{result}>;",
        member("api", def.name()),
        if required { "" } else { "?" },
    ));
    out
}

/// The TypeScript declaration of an Arazzo workflow's function on the `api` object (#39):
/// its inputs as the argument, its outputs as the result (`Record<string, unknown>` when
/// their types are not known), its summary and description, and the operations its `steps`
/// call, as a doc comment.
pub fn workflow_declaration(tool: &Tool, id: &str, steps: &[String]) -> String {
    let input = Value::Object((*tool.input_schema).clone());
    let mut ts = TsWriter::default();
    let args = ts.root(&input);
    let result = match &tool.output_schema {
        Some(o) => ts.root(&Value::Object((**o).clone())),
        None => "Record<string, unknown>".to_string(),
    };
    let mut out = String::new();
    for (name, body) in &ts.named {
        out.push_str(&format!("type {name} = {body};\n"));
    }
    let summary = tool.title.as_deref().unwrap_or(id);
    let description = tool
        .description
        .as_deref()
        .map(|d| d.strip_prefix(summary).unwrap_or(d).trim_start());
    out.push_str("/**\n");
    for line in doc_lines(summary, description) {
        out.push_str(&format!(" * {line}\n"));
    }
    out.push_str(&format!(
        " * Workflow `{}`: {} step(s) in one call ({}). Resolves to the workflow's outputs; a\n * failed step throws an Error naming the step, its HTTP status and the criterion.\n */\n",
        id.replace("*/", "* /"),
        steps.len(),
        steps.join(", ").replace("*/", "* /")
    ));
    let required = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    out.push_str(&format!(
        "function {}(args{}: {args}): Promise<{result}>;",
        member("api", &tool.name),
        if required { "" } else { "?" },
    ));
    out
}

/// The `describe_operation` result in code mode for a workflow: its declaration (see
/// [`workflow_declaration`]), its workflowId, steps and annotations.
pub fn describe_workflow(tool: &Tool, id: &str, steps: &[String]) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(tool.name.to_string()));
    m.insert("kind".into(), Value::String("workflow".into()));
    m.insert("workflow".into(), Value::String(id.to_string()));
    m.insert("steps".into(), json!(steps));
    m.insert(
        "declaration".into(),
        Value::String(workflow_declaration(tool, id, steps)),
    );
    if let Some(a) = &tool.annotations {
        m.insert(
            "annotations".into(),
            serde_json::to_value(a).unwrap_or(Value::Null),
        );
    }
    Value::Object(m)
}

/// `api.name`, or `api["name-with-dashes"]`.
fn member(object: &str, name: &str) -> String {
    if is_identifier(name) {
        format!("{object}.{name}")
    } else {
        format!("{object}[{}]", Value::String(name.to_string()))
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// The doc comment's lines: the summary, then the description (without a repeat of the summary),
/// at most 20 lines, none of them closing the comment.
fn doc_lines(summary: &str, description: Option<&str>) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    if !summary.is_empty() {
        lines.push(summary.to_string());
    }
    for l in description.unwrap_or_default().lines().map(str::trim_end) {
        if lines.is_empty() && l.trim().is_empty() {
            continue;
        }
        if lines.len() == 1 && l.trim() == summary {
            continue;
        }
        lines.push(l.to_string());
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    if lines.len() > 20 {
        lines.truncate(20);
        lines.push("…".into());
    }
    lines.into_iter().map(|l| l.replace("*/", "* /")).collect()
}

/// Writes TypeScript types for JSON Schemas; `$ref`s to `#/$defs/X` (or `#/definitions/X`)
/// become named types.
#[derive(Default)]
struct TsWriter {
    /// The schema whose `$defs` the `$ref`s being written point into.
    root: Value,
    /// Named types written: name -> body, in order.
    named: BTreeMap<String, String>,
    /// Names being written (a recursive type refers to itself by name).
    pending: HashSet<String>,
    /// Characters written so far.
    chars: usize,
}

impl TsWriter {
    fn root(&mut self, schema: &Value) -> String {
        self.with_root(schema, |ts| ts.ty(schema, 0))
    }

    fn with_root(&mut self, root: &Value, f: impl FnOnce(&mut Self) -> String) -> String {
        let old = std::mem::replace(&mut self.root, root.clone());
        let out = f(self);
        self.root = old;
        out
    }

    fn ty(&mut self, schema: &Value, depth: usize) -> String {
        let out = self.ty_inner(schema, depth);
        self.chars += out.len();
        out
    }

    fn ty_inner(&mut self, schema: &Value, depth: usize) -> String {
        if depth > MAX_TYPE_DEPTH || self.chars > MAX_DECLARATION_CHARS {
            return "unknown".into();
        }
        let s = match schema {
            Value::Bool(true) => return "unknown".into(),
            Value::Bool(false) => return "never".into(),
            Value::Object(s) => s,
            _ => return "unknown".into(),
        };
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            return self.reference(r, depth);
        }
        if let Some(c) = s.get("const") {
            return literal(c);
        }
        if let Some(e) = s.get("enum").and_then(Value::as_array) {
            let parts: Vec<String> = e.iter().map(literal).collect();
            return union(parts);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(alts) = s.get(key).and_then(Value::as_array) {
                let parts: Vec<String> = alts.iter().map(|a| self.ty(a, depth)).collect();
                return union(parts);
            }
        }
        if let Some(all) = s.get("allOf").and_then(Value::as_array) {
            let mut parts: Vec<String> = all.iter().map(|a| self.ty(a, depth)).collect();
            // Sibling keywords (an object's own properties beside its allOf) count too.
            let mut rest = s.clone();
            rest.remove("allOf");
            if rest.contains_key("properties") || rest.contains_key("type") {
                parts.push(self.ty(&Value::Object(rest), depth));
            }
            parts.retain(|p| p != "unknown");
            return match parts.len() {
                0 => "unknown".into(),
                1 => parts.remove(0),
                _ => parts
                    .iter()
                    .map(|p| paren(p))
                    .collect::<Vec<_>>()
                    .join(" & "),
            };
        }
        let types: Vec<&str> = match s.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ if s.contains_key("properties") => vec!["object"],
            _ if s.contains_key("items") => vec!["array"],
            _ => return "unknown".into(),
        };
        let parts: Vec<String> = types
            .iter()
            .map(|t| match *t {
                "string" => "string".into(),
                "integer" | "number" => "number".into(),
                "boolean" => "boolean".into(),
                "null" => "null".into(),
                "array" => {
                    let item = s
                        .get("items")
                        .map_or_else(|| "unknown".into(), |i| self.ty(i, depth));
                    format!("{}[]", paren(&item))
                }
                "object" => self.object(s, depth),
                _ => "unknown".into(),
            })
            .collect();
        union(parts)
    }

    fn object(&mut self, s: &Map<String, Value>, depth: usize) -> String {
        let required: HashSet<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let indent = "  ".repeat(depth + 1);
        let mut fields = Vec::new();
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for (name, p) in props {
                let t = self.ty(p, depth + 1);
                let doc = p
                    .get("description")
                    .and_then(Value::as_str)
                    .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
                    .map(|d| {
                        let d: String = d.chars().take(120).collect();
                        format!("{indent}/** {} */\n", d.replace("*/", "* /"))
                    })
                    .unwrap_or_default();
                let key = if is_identifier(name) {
                    name.clone()
                } else {
                    Value::String(name.clone()).to_string()
                };
                let opt = if required.contains(name.as_str()) {
                    ""
                } else {
                    "?"
                };
                fields.push(format!("{doc}{indent}{key}{opt}: {t};"));
            }
        }
        match s.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            Some(extra @ Value::Object(_)) => {
                let t = self.ty(extra, depth + 1);
                fields.push(format!("{indent}[key: string]: {t};"));
            }
            _ if fields.is_empty() => return "Record<string, unknown>".into(),
            _ => {}
        }
        if fields.is_empty() {
            return "{}".into();
        }
        format!("{{\n{}\n{}}}", fields.join("\n"), "  ".repeat(depth))
    }

    fn reference(&mut self, r: &str, depth: usize) -> String {
        let Some(name) = r
            .strip_prefix("#/$defs/")
            .or_else(|| r.strip_prefix("#/definitions/"))
        else {
            return "unknown".into();
        };
        let ident: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let ident = if ident.starts_with(|c: char| c.is_ascii_digit()) || ident.is_empty() {
            format!("T{ident}")
        } else {
            ident
        };
        if self.named.contains_key(&ident) || self.pending.contains(&ident) {
            return ident;
        }
        let key = if r.starts_with("#/$defs/") {
            "$defs"
        } else {
            "definitions"
        };
        let Some(target) = self.root.get(key).and_then(|d| d.get(name)).cloned() else {
            return "unknown".into();
        };
        self.pending.insert(ident.clone());
        let _ = depth;
        let body = self.ty(&target, 0);
        self.pending.remove(&ident);
        self.named.insert(ident.clone(), body);
        ident
    }
}

fn literal(v: &Value) -> String {
    match v {
        Value::Object(_) | Value::Array(_) => "unknown".into(),
        other => other.to_string(),
    }
}

fn union(mut parts: Vec<String>) -> String {
    let mut seen = HashSet::new();
    parts.retain(|p| seen.insert(p.clone()));
    if parts.iter().any(|p| p == "unknown") {
        return "unknown".into();
    }
    match parts.len() {
        0 => "never".into(),
        1 => parts.remove(0),
        _ => parts.join(" | "),
    }
}

/// A type in parentheses when it is a union or intersection (for `T[]` and `A & B`).
fn paren(t: &str) -> String {
    let top_level = !t.starts_with('{') && (t.contains(" | ") || t.contains(" & "));
    if top_level {
        format!("({t})")
    } else {
        t.to_string()
    }
}

/// The `describe_operation` result in code mode: the declaration, and what the model needs
/// beside it (no JSON Schemas: the declaration says the same in fewer tokens).
pub fn describe(def: &ToolDef) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(def.name().to_string()));
    m.insert(
        "method".into(),
        Value::String(def.route.method.as_str().into()),
    );
    m.insert("path".into(), Value::String(def.route.path.clone()));
    m.insert("declaration".into(), Value::String(declaration(def)));
    if let Some(a) = &def.tool().annotations {
        m.insert(
            "annotations".into(),
            serde_json::to_value(a).unwrap_or(Value::Null),
        );
    }
    Value::Object(m)
}

// ---------------------------------------------------------------------------------------------
// Running a script: the sandbox (QuickJS, a C library), only with the `code` feature. Without it
// the declarations above still build (`describe_operation` shares them) and `--mode code` is
// refused at start-up, naming the feature.

#[cfg(feature = "code")]
mod sandbox;
#[cfg(feature = "code")]
pub use sandbox::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_are_typescript() {
        let mut w = TsWriter::default();
        let schema = json!({
            "type": "object",
            "properties": {
                "petId": {"type": "integer", "description": "The id"},
                "tags": {"type": "array", "items": {"type": ["string", "null"]}},
                "status": {"enum": ["a", "b"]},
                "x-y": {"$ref": "#/$defs/Node"}
            },
            "required": ["petId"],
            "additionalProperties": false,
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}
        });
        let t = w.root(&schema);
        assert_eq!(
            t,
            "{\n  /** The id */\n  petId: number;\n  tags?: (string | null)[];\n  status?: \"a\" | \"b\";\n  \"x-y\"?: Node;\n}"
        );
        assert_eq!(w.named["Node"], "{\n  next?: Node;\n}");
        assert_eq!(member("api", "a-b"), "api[\"a-b\"]");
        assert_eq!(member("api", "list_pets"), "api.list_pets");
    }
}
