//! Running a script of `--mode code` in the embedded QuickJS engine (the `code` feature): the
//! thread, the limits, the `api` object and `console`, and what a script's end reports.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rmcp::model::CallToolResult;
use rquickjs::function::Rest;
use rquickjs::{Context, Ctx, Function, Object, Runtime};

use super::*;

/// The engine's own stack limit (QuickJS's default): deep recursion is a `RangeError`.
const JS_STACK_BYTES: usize = 1 << 20;
/// The script thread's stack: room for the engine's limit, the parser and the host calls.
const THREAD_STACK_BYTES: usize = 8 << 20;

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
}
