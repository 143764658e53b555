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

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResult, Tool, ToolAnnotations};
use rquickjs::function::Rest;
use rquickjs::{Context, Ctx, Function, Object, Runtime};
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
/// The engine's own stack limit (QuickJS's default): deep recursion is a `RangeError`.
const JS_STACK_BYTES: usize = 1 << 20;
/// The script thread's stack: room for the engine's limit, the parser and the host calls.
const THREAD_STACK_BYTES: usize = 8 << 20;
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
// Running a script

/// One `api.*` call of a script, for the server to validate and forward; the answer goes back
/// on `reply`.
pub struct ApiCall {
    pub operation: String,
    pub args: Map<String, Value>,
    pub reply: std::sync::mpsc::SyncSender<Answer>,
}

/// The server's answer to an [`ApiCall`].
#[derive(Debug)]
pub enum Answer {
    /// The call's result, as the script sees it.
    Ok(Value),
    /// Thrown in the script as an `Error` with this message (and `status`, the HTTP status when
    /// the API answered).
    Err {
        message: String,
        status: Option<u16>,
    },
}

/// What a script's `api.*` call returns for a successful tool result: the structured content
/// (unwrapped when the tool wraps a non-object body as `{"result": ...}`), else the text, parsed
/// when it is JSON, else the content blocks.
pub fn answer_value(result: &CallToolResult, output: OutputShape) -> Value {
    if let Some(s) = &result.structured_content {
        if output == OutputShape::Wrapped
            && let Some(v) = s.get("result")
        {
            return v.clone();
        }
        return s.clone();
    }
    if let [block] = result.content.as_slice()
        && let Some(t) = block.as_text()
    {
        return serde_json::from_str(&t.text).unwrap_or_else(|_| Value::String(t.text.clone()));
    }
    serde_json::to_value(&result.content).unwrap_or(Value::Null)
}

/// Why a script stopped without a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptError {
    /// Past `--code-timeout`.
    Timeout(Duration),
    /// Past `--code-memory`.
    Memory(usize),
    /// Recursion past the engine's stack limit.
    Stack,
    /// The script threw (or a promise it returned rejected): the error's text.
    Thrown(String),
    /// The script returned a promise that can never settle (it awaits something other than
    /// `api.*`).
    NeverSettled,
    /// The result's JSON is larger than `--max-response-bytes`.
    Output { bytes: usize, max: usize },
    /// The client cancelled the call, or the server is stopping.
    Stopped,
    /// The engine could not be started.
    Engine(String),
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScriptError::Timeout(t) => write!(
                f,
                "the script ran past its time limit of {} s (--code-timeout) and was stopped. Make fewer or cheaper calls, or split the task into several scripts",
                seconds(*t)
            ),
            ScriptError::Memory(m) => write!(
                f,
                "the script ran out of memory: it used more than its {} MiB (--code-memory) and was stopped. Keep less data (select the fields you need, process page by page)",
                m >> 20
            ),
            ScriptError::Stack => write!(
                f,
                "the script recursed too deep (stack overflow) and was stopped"
            ),
            ScriptError::Thrown(e) => write!(f, "the script threw {e}"),
            ScriptError::NeverSettled => write!(
                f,
                "the script awaited something that never finishes (only api.* calls are asynchronous here: there are no timers or other events)"
            ),
            ScriptError::Output { bytes, max } => write!(
                f,
                "the script's result is {bytes} bytes of JSON, over the limit of {max} bytes (--max-response-bytes). Return less: select the fields you need, filter, count or summarise in the script"
            ),
            ScriptError::Stopped => write!(f, "the script was stopped (cancelled)"),
            ScriptError::Engine(e) => write!(f, "the script engine could not start: {e}"),
        }
    }
}

/// How a script ended: its result (JSON) or why it has none, and its `console` output.
#[derive(Debug)]
pub struct ScriptEnd {
    pub outcome: Result<Value, ScriptError>,
    pub logs: Vec<String>,
    /// `console` output past [`MAX_LOG_BYTES`] was dropped.
    pub logs_cut: bool,
    /// The script returned nothing (`undefined`).
    pub returned_nothing: bool,
}

/// A script to run.
pub struct Script {
    pub code: String,
    /// The operations the `api` object has.
    pub operations: Vec<String>,
    pub limits: CodeLimits,
    /// When the script must have ended (its start plus `--code-timeout`).
    pub deadline: Instant,
    /// Set by the server when the client cancels: the engine stops at its next check.
    pub stop: Arc<AtomicBool>,
}

/// Starts `script` on a thread of its own; its `api.*` calls arrive on `calls`, its end on the
/// returned receiver.
pub fn spawn(
    script: Script,
    calls: tokio::sync::mpsc::Sender<ApiCall>,
) -> std::io::Result<tokio::sync::oneshot::Receiver<ScriptEnd>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("openapi-mcp-script".into())
        .stack_size(THREAD_STACK_BYTES)
        .spawn(move || {
            let end = run(&script, calls);
            let _ = tx.send(end);
        })?;
    Ok(rx)
}

/// `console` output of a script, bounded.
#[derive(Default)]
struct Logs {
    lines: Vec<String>,
    bytes: usize,
    cut: bool,
}

impl Logs {
    fn push(&mut self, line: String) {
        if self.cut {
            return;
        }
        if self.bytes + line.len() > MAX_LOG_BYTES {
            self.cut = true;
            let room = MAX_LOG_BYTES.saturating_sub(self.bytes);
            let mut end = room.min(line.len());
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            if end > 0 {
                self.lines.push(line[..end].to_string());
            }
            self.bytes = MAX_LOG_BYTES;
            return;
        }
        self.bytes += line.len();
        self.lines.push(line);
    }
}

/// Installs `api` and `console` with the host functions passed in, never stored on the global
/// object: a script reaches the server only through the functions of `api`.
const BOOTSTRAP: &str = r#"(function (call, log, names) {
  'use strict';
  const E = Error, define = Object.defineProperty;
  const api = Object.create(null);
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const f = async function (args) {
      const r = call(name, args);
      if (r.ok) return r.value;
      const e = new E(r.message);
      e.operation = name;
      if (r.status !== undefined) e.status = r.status;
      throw e;
    };
    define(f, 'name', { value: name });
    api[name] = f;
  }
  const console = Object.create(null);
  for (const level of ['log', 'info', 'debug', 'warn', 'error']) {
    console[level] = function (...args) { log(level, ...args); };
  }
  define(globalThis, 'api', { value: Object.freeze(api), enumerable: true });
  define(globalThis, 'console', { value: Object.freeze(console), enumerable: true });
})"#;

/// The file name of the script in error positions (`script:3:5`).
const SCRIPT_FILE: &str = "script";

fn eval_options(filename: &str) -> rquickjs::context::EvalOptions {
    let mut o = rquickjs::context::EvalOptions::default();
    o.filename = Some(filename.to_string());
    o
}

fn run(script: &Script, calls: tokio::sync::mpsc::Sender<ApiCall>) -> ScriptEnd {
    let logs = Rc::new(RefCell::new(Logs::default()));
    let timed_out = Rc::new(Cell::new(false));
    let mut returned_nothing = false;
    let outcome = (|| {
        let rt = Runtime::new().map_err(|e| ScriptError::Engine(e.to_string()))?;
        rt.set_memory_limit(script.limits.memory);
        rt.set_max_stack_size(JS_STACK_BYTES);
        let deadline = script.deadline;
        let stop = Arc::clone(&script.stop);
        let flag = Rc::clone(&timed_out);
        rt.set_interrupt_handler(Some(Box::new(move || {
            let late = Instant::now() >= deadline;
            if late {
                flag.set(true);
            }
            late || stop.load(Ordering::Relaxed)
        })));
        let ctx = Context::full(&rt).map_err(|e| ScriptError::Engine(e.to_string()))?;
        ctx.with(|ctx| {
            install(&ctx, script, calls, Rc::clone(&logs))
                .map_err(|e| ScriptError::Engine(thrown(&ctx, e)))?;
            // The script is the body of an async function; its first line stays line 1.
            let source = format!("(async () => {{{}\n}})()", script.code);
            let value: rquickjs::Value = ctx
                .eval_with_options(source, eval_options(SCRIPT_FILE))
                .map_err(|e| ScriptError::Thrown(thrown(&ctx, e)))?;
            let value = match value.into_promise() {
                Some(p) => p.finish::<rquickjs::Value>().map_err(|e| match e {
                    rquickjs::Error::WouldBlock => ScriptError::NeverSettled,
                    e => ScriptError::Thrown(thrown(&ctx, e)),
                })?,
                None => return Err(ScriptError::NeverSettled),
            };
            returned_nothing = value.is_undefined();
            let text = ctx
                .json_stringify(value)
                .map_err(|e| ScriptError::Thrown(thrown(&ctx, e)))?
                .map(|s| s.to_string())
                .transpose()
                .map_err(|e| ScriptError::Thrown(e.to_string()))?
                .unwrap_or_else(|| "null".into());
            if text.len() > script.limits.max_output {
                return Err(ScriptError::Output {
                    bytes: text.len(),
                    max: script.limits.max_output,
                });
            }
            serde_json::from_str::<Value>(&text).map_err(|e| ScriptError::Thrown(e.to_string()))
        })
    })();
    let outcome = outcome.map_err(|e| classify(e, script, timed_out.get()));
    let logs = std::mem::take(&mut *logs.borrow_mut());
    ScriptEnd {
        outcome,
        logs: logs.lines,
        logs_cut: logs.cut,
        returned_nothing,
    }
}

/// The limit behind an error, when one is.
fn classify(e: ScriptError, script: &Script, timed_out: bool) -> ScriptError {
    if timed_out {
        return ScriptError::Timeout(script.limits.timeout);
    }
    if script.stop.load(Ordering::Relaxed) {
        return ScriptError::Stopped;
    }
    match &e {
        ScriptError::Thrown(t) | ScriptError::Engine(t) if t.contains("out of memory") => {
            ScriptError::Memory(script.limits.memory)
        }
        ScriptError::Thrown(t)
            if t.contains("stack overflow") || t.contains("Maximum call stack size exceeded") =>
        {
            ScriptError::Stack
        }
        _ => e,
    }
}

/// `s` cut to at most `max` bytes (at a character boundary), with a note of its full length when
/// cut.
pub fn cut_text(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut note = format!("… [cut: {} bytes in all]", s.len());
    if note.len() >= max {
        note.clear();
    }
    let mut end = max - note.len();
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{note}", &s[..end])
}

/// A JavaScript function that cuts a string to `n` UTF-16 units inside the engine, so that a
/// huge string is never copied out whole.
const CUT_JS: &str = "(function (s, n) { return s.length > n ? s.slice(0, n) + '… [cut: ' + s.length + ' characters in all]' : s; })";

/// The text of a JavaScript string, cut to its first `max` characters (with a note): in the
/// engine when it can still run code (not past the deadline, nor out of memory), else here.
fn js_string<'js>(ctx: &Ctx<'js>, v: &rquickjs::Value<'js>, max: usize) -> Option<String> {
    let s = v.as_string()?;
    let cut_in_engine = ctx
        .eval::<Function, _>(CUT_JS)
        .and_then(|f| f.call::<_, rquickjs::String>((s.clone(), max)));
    match cut_in_engine {
        Ok(c) => c.to_string().ok(),
        Err(_) => {
            let _ = ctx.catch();
            let text = s.to_string().ok()?;
            Some(match text.char_indices().nth(max) {
                Some((i, _)) => format!(
                    "{}… [cut: {} characters in all]",
                    &text[..i],
                    text.chars().count()
                ),
                None => text,
            })
        }
    }
}

/// The text of what a script threw: `Name: message` and where (the stack's first lines), or the
/// thrown value as JSON; each part cut ([`MAX_NAME_CHARS`], [`MAX_MESSAGE_CHARS`],
/// [`MAX_STACK_LINE_CHARS`], [`MAX_THROWN_JSON_CHARS`]).
fn thrown(ctx: &Ctx<'_>, e: rquickjs::Error) -> String {
    if !matches!(e, rquickjs::Error::Exception) {
        return e.to_string();
    }
    let v = ctx.catch();
    if v.is_null() || v.type_of() == rquickjs::Type::Uninitialized {
        // What QuickJS throws when it cannot even allocate its "out of memory" error. (A script
        // that throws null itself is reported so too.)
        return "InternalError: out of memory".into();
    }
    if let Some(ex) = v.as_exception() {
        let text = |key: &str, max: usize| {
            ex.get::<_, rquickjs::Value>(key)
                .ok()
                .and_then(|v| js_string(ctx, &v, max))
        };
        let name = text("name", MAX_NAME_CHARS).unwrap_or_else(|| "Error".into());
        let message = text("message", MAX_MESSAGE_CHARS).unwrap_or_default();
        let mut out = format!("{name}: {message}");
        if let Ok(Some(status)) = ex.get::<_, Option<u16>>("status") {
            out.push_str(&format!(" (status {status})"));
        }
        // The stack's first lines are enough (frames past a few long names are not read).
        if let Some(stack) = text("stack", 4 * MAX_STACK_LINE_CHARS) {
            // The script's own frames: not the `api` wrappers, nor the wrapping function's call.
            let at = format!("({SCRIPT_FILE}:");
            let lines: Vec<String> = stack
                .lines()
                .map(str::trim)
                .filter(|l| l.contains(&at) && !l.starts_with("at <eval>"))
                .take(3)
                .map(|l| cut_text(l, MAX_STACK_LINE_CHARS))
                .collect();
            if !lines.is_empty() {
                out.push_str(&format!("\n  {}", lines.join("\n  ")));
            }
        }
        return out;
    }
    match ctx.json_stringify(v) {
        Ok(Some(s)) => js_string(ctx, &s.into_value(), MAX_THROWN_JSON_CHARS)
            .unwrap_or_else(|| "a value".into()),
        _ => "a value that is not an Error".into(),
    }
}

/// Text of a `console` argument: strings as they are, other values as JSON; at most
/// [`MAX_LOG_BYTES`] characters of it are copied out of the engine.
fn log_text<'js>(ctx: &Ctx<'js>, v: rquickjs::Value<'js>) -> String {
    if v.is_string() {
        return js_string(ctx, &v, MAX_LOG_BYTES).unwrap_or_default();
    }
    if v.is_undefined() {
        return "undefined".into();
    }
    match ctx.json_stringify(v) {
        Ok(Some(s)) => js_string(ctx, &s.into_value(), MAX_LOG_BYTES).unwrap_or_default(),
        Ok(None) => "undefined".into(),
        Err(_) => {
            // A cyclic value, a BigInt: the exception is the script's concern, not the log's.
            let _ = ctx.catch();
            "[value that cannot be shown as JSON]".into()
        }
    }
}

fn install<'js>(
    ctx: &Ctx<'js>,
    script: &Script,
    calls: tokio::sync::mpsc::Sender<ApiCall>,
    logs: Rc<RefCell<Logs>>,
) -> rquickjs::Result<()> {
    let deadline = script.deadline;
    let call = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>,
              name: String,
              args: rquickjs::Value<'js>|
              -> rquickjs::Result<Object<'js>> {
            let answer = api_call(&ctx, &calls, deadline, &name, args)?;
            let out = Object::new(ctx.clone())?;
            match answer {
                Answer::Ok(v) => {
                    out.set("ok", true)?;
                    let text = serde_json::to_string(&v).unwrap_or_else(|_| "null".into());
                    out.set("value", ctx.json_parse(text)?)?;
                }
                Answer::Err { message, status } => {
                    out.set("ok", false)?;
                    out.set("message", message)?;
                    if let Some(s) = status {
                        out.set("status", s)?;
                    }
                }
            }
            Ok(out)
        },
    )?;
    let log = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, level: String, args: Rest<rquickjs::Value<'js>>| {
            if logs.borrow().cut {
                // Nothing more is kept: nothing more is converted.
                return;
            }
            let parts: Vec<String> = args.0.into_iter().map(|v| log_text(&ctx, v)).collect();
            let line = parts.join(" ");
            let line = match level.as_str() {
                "warn" | "error" => format!("[{level}] {line}"),
                _ => line,
            };
            logs.borrow_mut().push(line);
        },
    )?;
    let names: Vec<String> = script.operations.clone();
    let bootstrap: Function = ctx.eval_with_options(BOOTSTRAP, eval_options("api"))?;
    bootstrap.call::<_, ()>((call, log, names))
}

/// Sends one `api.*` call to the server and waits for its answer (until the script's deadline).
fn api_call<'js>(
    ctx: &Ctx<'js>,
    calls: &tokio::sync::mpsc::Sender<ApiCall>,
    deadline: Instant,
    name: &str,
    args: rquickjs::Value<'js>,
) -> rquickjs::Result<Answer> {
    let not_sent = |message: String| Answer::Err {
        message,
        status: None,
    };
    let args = if args.is_undefined() || args.is_null() {
        Map::new()
    } else if !args.is_object() || args.is_array() || args.is_function() {
        return Ok(not_sent(format!(
            "api.{name} takes one object of arguments (as describe_operation declares); nothing was sent to the API"
        )));
    } else {
        let text = ctx
            .json_stringify(args)?
            .map(|s| s.to_string())
            .transpose()?
            .unwrap_or_else(|| "{}".into());
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Ok(not_sent(format!(
                    "api.{name}: the arguments are not a JSON object; nothing was sent to the API"
                )));
            }
        }
    };
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let request = ApiCall {
        operation: name.to_string(),
        args,
        reply: tx,
    };
    if calls.blocking_send(request).is_err() {
        return Ok(not_sent(
            "the server stopped the script; nothing was sent to the API".into(),
        ));
    }
    let wait = deadline.saturating_duration_since(Instant::now());
    Ok(match rx.recv_timeout(wait) {
        Ok(answer) => answer,
        Err(_) => not_sent(format!(
            "api.{name}: no answer before the script's time limit (--code-timeout)"
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_code(code: &str, limits: CodeLimits) -> ScriptEnd {
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        let script = Script {
            code: code.into(),
            operations: vec!["ping".into()],
            limits,
            deadline: Instant::now() + limits.timeout,
            stop: Arc::new(AtomicBool::new(false)),
        };
        run(&script, tx)
    }

    fn quick() -> CodeLimits {
        CodeLimits {
            timeout: Duration::from_millis(500),
            memory: 16 << 20,
            ..CodeLimits::default()
        }
    }

    #[test]
    fn returns_json_and_logs() {
        let end = run_code(
            "console.log('hi', {a: 1}); const xs = [3, 1, 2].sort(); return {xs, n: xs.length};",
            quick(),
        );
        assert_eq!(end.outcome, Ok(json!({"xs": [1, 2, 3], "n": 3})));
        assert_eq!(end.logs, ["hi {\"a\":1}"]);
        assert!(!end.returned_nothing);
        let end = run_code("const x = 1;", quick());
        assert_eq!(end.outcome, Ok(Value::Null));
        assert!(end.returned_nothing);
    }

    #[test]
    fn limits_are_errors() {
        let started = Instant::now();
        let end = run_code("while (true) {}", quick());
        assert!(
            matches!(end.outcome, Err(ScriptError::Timeout(_))),
            "{end:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(3));
        let end = run_code(
            "const a = []; while (true) a.push('x'.repeat(1 << 20) + a.length);",
            quick(),
        );
        assert!(
            matches!(end.outcome, Err(ScriptError::Memory(_))),
            "{end:?}"
        );
        let end = run_code(
            "function f(n) { return f(n + 1) + 1; } return f(0);",
            quick(),
        );
        assert_eq!(end.outcome, Err(ScriptError::Stack), "{end:?}");
        let end = run_code(
            "return 'x'.repeat(2000);",
            CodeLimits {
                max_output: 1000,
                ..quick()
            },
        );
        assert_eq!(
            end.outcome,
            Err(ScriptError::Output {
                bytes: 2002,
                max: 1000
            })
        );
        let end = run_code("await new Promise(() => {});", quick());
        assert_eq!(end.outcome, Err(ScriptError::NeverSettled));
        let end = run_code(
            "for (let i = 0; i < 5000; i++) console.log('y'.repeat(100));",
            quick(),
        );
        assert!(end.logs_cut);
        assert!(end.logs.iter().map(String::len).sum::<usize>() <= MAX_LOG_BYTES);
    }

    #[test]
    fn syntax_errors_and_throws_say_where() {
        let end = run_code("return (", quick());
        let Err(ScriptError::Thrown(t)) = end.outcome else {
            panic!("{end:?}")
        };
        assert!(t.starts_with("SyntaxError"), "{t}");
        let end = run_code("\nthrow new TypeError('bad thing');", quick());
        let Err(ScriptError::Thrown(t)) = end.outcome else {
            panic!("{end:?}")
        };
        assert!(t.starts_with("TypeError: bad thing"), "{t}");
        assert!(t.contains("(script:2:"), "line 2 of the script: {t}");
    }

    /// #36: what a script throws or logs is cut, however large: its message, name, stack lines,
    /// a thrown value's JSON, console arguments.
    #[test]
    fn thrown_and_logged_text_is_cut() {
        let thrown = |code: &str| {
            let end = run_code(code, quick());
            match end.outcome {
                Err(ScriptError::Thrown(t)) => t,
                other => panic!("{code}: {other:?}"),
            }
        };
        let t = thrown("throw new Error('x'.repeat(4e6));");
        assert!(t.starts_with("Error: xxx"), "{}", &t[..40]);
        assert!(t.len() < MAX_MESSAGE_CHARS + 1024, "{} bytes", t.len());
        assert!(
            t.contains("[cut: 4000000 characters in all]"),
            "{}",
            &t[t.len() - 200..]
        );
        let t = thrown("const e = new Error('m'); e.name = 'N'.repeat(1e6); throw e;");
        assert!(t.len() < MAX_NAME_CHARS + 1024, "{} bytes", t.len());
        assert!(t.contains(": m"), "{t}");
        let t = thrown(
            "const n = 'f'.repeat(1e6); const o = {[n]() { throw new RangeError('deep'); }}; o[n]();",
        );
        assert!(t.starts_with("RangeError: deep"), "{}", &t[..40]);
        assert!(
            t.len() < 4 * MAX_STACK_LINE_CHARS + 1024,
            "{} bytes",
            t.len()
        );
        let t = thrown("throw {a: 'x'.repeat(1e6)};");
        assert!(t.len() < MAX_THROWN_JSON_CHARS + 100, "{} bytes", t.len());
        // Multi-byte characters: cut at a character, never inside one.
        let t = thrown("throw new Error('é😀'.repeat(1e5));");
        assert!(t.len() < 4 * MAX_MESSAGE_CHARS, "{} bytes", t.len());
        let end = run_code(
            "console.log('x'.repeat(4e6)); console.log('after');",
            quick(),
        );
        assert!(end.logs_cut);
        assert!(end.logs.iter().map(String::len).sum::<usize>() <= MAX_LOG_BYTES);
        assert_eq!(cut_text("abcdef", 100), "abcdef");
        let c = cut_text(&"é".repeat(100), 60);
        assert!(
            c.len() <= 60 && c.ends_with("[cut: 200 bytes in all]"),
            "{c}"
        );
        assert_eq!(cut_text("abcdef", 3), "abc");
    }

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
