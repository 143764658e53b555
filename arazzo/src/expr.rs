//! Arazzo 1.0.1 runtime expressions ("Runtime Expressions" of the specification) and the
//! strings that carry them: a bare expression (`$steps.find.outputs.id`), or text with embedded
//! `{$...}` expressions (`Bearer {$inputs.token}`), and payloads walked for both.
//!
//! The grammar is the specification's ABNF, with what its examples and peers rely on:
//!
//! - `$url`, `$method`, `$statusCode`;
//! - `$request.header.TOKEN`, `$request.query.NAME`, `$request.path.NAME`, `$request.body`,
//!   and the same under `$response.` (header names compare case-insensitively, RFC 9110);
//! - `$inputs.NAME`, `$outputs.NAME`, `$steps.ID.outputs[.NAME]`,
//!   `$workflows.ID.inputs[.NAME]`, `$workflows.ID.outputs[.NAME]`;
//! - `$sourceDescriptions.NAME[.MEMBER]` (`.url`, or an `operationId`/`workflowId` the executor
//!   resolves itself), `$components.KIND.NAME` (`parameters`, `inputs`, `successActions`,
//!   `failureActions`);
//! - a JSON Pointer (RFC 6901) after `#` following `body` or any NAME
//!   (`$response.body#/items/0/id`, `$steps.s.outputs.pets#/0/id`);
//! - property de-reference `.prop` and 0-based index `[N]` after a NAME or `body`
//!   (`$steps.s.outputs.pets[0].id`, `$response.body.id`): names may contain dots (output names
//!   match `^[a-zA-Z0-9.\-_]+$`), so `a.b.c` is resolved as the longest prefix that is a key
//!   (`a.b.c`, then `a.b` + `.c`, then `a` + `.b.c`); see [`name_candidates`].
//!
//! Values: an expression preserves the type of the value it refers to. A value that is absent
//! (a missing header, pointer or output) is [`EvalError::NotFound`] from [`Expr::eval`];
//! [`Expr::lookup`] gives `Ok(None)` instead (simple conditions read it as `null`).
//!
//! Budgets (checked before any allocation that depends on them): [`MAX_EXPR_LEN`],
//! [`MAX_TEMPLATE_LEN`], [`MAX_EMBEDS`], [`MAX_WALK_DEPTH`], [`MAX_OUTPUT_BYTES`].
//! Errors name the expression text, never the values (they may be secrets).

use std::fmt;

use serde_json::{Map, Value};

/// The longest runtime expression, in bytes (a bare one, or one embedded in `{}`).
pub const MAX_EXPR_LEN: usize = 4 * 1024;
/// The longest string parsed as a [`Template`] (a payload string with embedded expressions).
pub const MAX_TEMPLATE_LEN: usize = 256 * 1024;
/// Embedded `{$...}` expressions in one string.
pub const MAX_EMBEDS: usize = 64;
/// Nesting of objects and arrays [`eval_value`] and [`expressions_in`] walk.
pub const MAX_WALK_DEPTH: usize = 64;
/// The largest result of [`eval_value`] or of a [`Template`] with embedded expressions, in
/// bytes of compact JSON text (each embedded or replaced value counts its full size).
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;

/// A parse error: where (byte offset in the text given to `parse`) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    #[error("at byte {offset}: expected {expected}")]
    Syntax { offset: usize, expected: String },
    #[error("{what} of {len} bytes is longer than the limit of {limit} bytes ({budget})")]
    TooLong {
        what: &'static str,
        len: usize,
        limit: usize,
        budget: &'static str,
    },
    #[error("at byte {offset}: more than {limit} embedded expressions in one string (MAX_EMBEDS)")]
    TooManyEmbeds { offset: usize, limit: usize },
    #[error("nested deeper than {limit} objects/arrays (MAX_WALK_DEPTH)")]
    TooDeep { limit: usize },
}

impl ExprError {
    fn syntax(offset: usize, expected: impl Into<String>) -> ExprError {
        ExprError::Syntax {
            offset,
            expected: expected.into(),
        }
    }

    /// The same error with its offset moved by `by` (an expression inside a larger text).
    pub fn shifted(self, by: usize) -> ExprError {
        match self {
            ExprError::Syntax { offset, expected } => ExprError::Syntax {
                offset: offset + by,
                expected,
            },
            ExprError::TooManyEmbeds { offset, limit } => ExprError::TooManyEmbeds {
                offset: offset + by,
                limit,
            },
            other => other,
        }
    }
}

/// An evaluation error. It names the expression (never the values it read).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("`{expr}` refers to nothing: {detail}")]
    NotFound { expr: String, detail: String },
    #[error("`{expr}` needs an HTTP request and response, and there is none here")]
    NoExchange { expr: String },
    #[error("`{expr}`: {detail} (limit {limit}, {budget})")]
    Budget {
        expr: String,
        detail: String,
        limit: usize,
        budget: &'static str,
    },
    #[error("at {pointer}: {error}")]
    Invalid { pointer: String, error: ExprError },
    #[error("`{expr}`: {detail}")]
    Other { expr: String, detail: String },
}

/// What an expression refers to (for validation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root<'a> {
    Url,
    Method,
    StatusCode,
    Request,
    Response,
    /// The input's name as written (may be a dotted path, see [`name_candidates`]).
    Inputs(&'a str),
    /// The current workflow's output name as written.
    Outputs(&'a str),
    Step {
        step: &'a str,
        output: Option<&'a str>,
    },
    Workflow {
        workflow: &'a str,
        /// `"inputs"` or `"outputs"`.
        part: &'a str,
        name: Option<&'a str>,
    },
    SourceDescription(&'a str),
    Component {
        kind: &'a str,
        name: &'a str,
    },
}

/// One step's HTTP request and response.
#[derive(Clone, Debug, Default)]
pub struct Exchange {
    pub url: String,
    pub method: String,
    pub status: u16,
    pub request_headers: Vec<(String, String)>,
    pub request_query: Vec<(String, String)>,
    pub request_path: Map<String, Value>,
    pub request_body: Option<Value>,
    pub response_headers: Vec<(String, String)>,
    pub response_body: Option<Value>,
}

/// What expressions are evaluated against.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    pub inputs: &'a Value,
    /// step id -> `{"outputs": {...}}`
    pub steps: &'a Map<String, Value>,
    /// workflow id -> `{"inputs": {...}, "outputs": {...}}`
    pub workflows: &'a Map<String, Value>,
    /// The current workflow's outputs so far.
    pub outputs: Option<&'a Map<String, Value>>,
    /// name -> `{"name", "url", "type"}`
    pub source_descriptions: &'a Map<String, Value>,
    /// The document's `components` object (or `Null`).
    pub components: &'a Value,
    pub exchange: Option<&'a Exchange>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Source {
    Header(String),
    Query(String),
    Path(String),
    Body,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Url,
    Method,
    StatusCode,
    Request(Source),
    Response(Source),
    Inputs(String),
    Outputs(String),
    Step(String, Option<String>),
    Workflow(String, &'static str, Option<String>),
    SourceDescription(String, Option<String>),
    Component(String, String),
}

/// What follows a name: de-references and a JSON Pointer's tokens.
type Tail = (Vec<Seg>, Option<Vec<String>>);

/// A de-reference after a name or `body`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// One parsed runtime expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    text: String,
    kind: Kind,
    /// `.prop` / `[N]` after the name (or `body`).
    path: Vec<Seg>,
    /// The unescaped reference tokens of a `#/json/pointer`.
    pointer: Option<Vec<String>>,
}

/// Where a parse runs: a whole string, or an operand inside a simple condition (which ends at
/// whitespace or an operator character).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Whole,
    Condition,
}

/// `tchar` of RFC 9110 (header names).
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Characters that end an expression inside a simple condition.
fn ends_operand(c: char) -> bool {
    c.is_whitespace() || "()=!<>&|,{}".contains(c)
}

/// The candidate keys of a (possibly dotted) name, longest first: `a.b.c`, `a.b`, `a`.
/// Validation can accept a name when any candidate is declared.
pub fn name_candidates(name: &str) -> impl Iterator<Item = &str> {
    let mut end = Some(name.len());
    std::iter::from_fn(move || {
        let e = end?;
        let out = &name[..e];
        end = name[..e].rfind('.');
        Some(out)
    })
}

struct Parser<'t> {
    text: &'t str,
    pos: usize,
    mode: Mode,
}

impl<'t> Parser<'t> {
    fn rest(&self) -> &'t str {
        &self.text[self.pos..]
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, s: &str, expected: &str) -> Result<(), ExprError> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(ExprError::syntax(self.pos, expected))
        }
    }

    fn at_end(&self) -> bool {
        match self.rest().chars().next() {
            None => true,
            Some(c) => self.mode == Mode::Condition && ends_operand(c),
        }
    }

    /// A run of characters up to one of `stops` (or the end of the operand); may be empty.
    fn take_until(&mut self, stops: &[char]) -> &'t str {
        let start = self.pos;
        for (i, c) in self.rest().char_indices() {
            if stops.contains(&c) || (self.mode == Mode::Condition && ends_operand(c)) {
                self.pos = start + i;
                return &self.text[start..self.pos];
            }
        }
        self.pos = self.text.len();
        &self.text[start..]
    }

    /// A non-empty identifier segment (step id, workflow id, source name, component kind).
    fn segment(&mut self, what: &str) -> Result<&'t str, ExprError> {
        let s = self.take_until(&['.', '#', '[']);
        if s.is_empty() {
            return Err(ExprError::syntax(self.pos, what));
        }
        Ok(s)
    }

    /// A name that runs to `#`, `[` or the end (dots included).
    fn name(&mut self, what: &str) -> Result<String, ExprError> {
        let s = self.take_until(&['#', '[']);
        if s.is_empty() {
            return Err(ExprError::syntax(self.pos, what));
        }
        Ok(s.to_string())
    }

    /// `[N]` / `['key']` / `.key` de-references, then an optional `#pointer`.
    fn tail(&mut self, allow_path: bool) -> Result<Tail, ExprError> {
        let mut path = Vec::new();
        while !self.at_end() && allow_path {
            if self.eat("[") {
                path.push(self.bracket()?);
            } else if self.eat(".") {
                let k = self.take_until(&['.', '[', '#']);
                if k.is_empty() {
                    return Err(ExprError::syntax(self.pos, "a property name after `.`"));
                }
                path.push(Seg::Key(k.to_string()));
            } else {
                break;
            }
        }
        let pointer = if self.eat("#") {
            Some(self.pointer()?)
        } else {
            None
        };
        if !self.at_end() {
            return Err(ExprError::syntax(
                self.pos,
                if allow_path {
                    "the end of the expression, `.name`, `[index]` or `#/json/pointer`"
                } else {
                    "the end of the expression or `#/json/pointer`"
                },
            ));
        }
        Ok((path, pointer))
    }

    fn bracket(&mut self) -> Result<Seg, ExprError> {
        for q in ['\'', '"'] {
            if self.rest().starts_with(q) {
                self.pos += 1;
                let start = self.pos;
                let Some(i) = self.rest().find(q) else {
                    return Err(ExprError::syntax(self.pos, format!("a closing {q}")));
                };
                let key = self.text[start..start + i].to_string();
                self.pos = start + i + 1;
                self.expect("]", "`]`")?;
                return Ok(Seg::Key(key));
            }
        }
        let start = self.pos;
        let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 18 {
            return Err(ExprError::syntax(
                start,
                "a 0-based index (digits) or a quoted key inside `[]`",
            ));
        }
        let n: usize = self.text[start..start + digits]
            .parse()
            .map_err(|_| ExprError::syntax(start, "an index"))?;
        self.pos += digits;
        self.expect("]", "`]`")?;
        Ok(Seg::Index(n))
    }

    /// RFC 6901 after `#`: empty, or `/`-separated tokens with `~0`/`~1` escapes.
    fn pointer(&mut self) -> Result<Vec<String>, ExprError> {
        let mut tokens = Vec::new();
        if self.at_end() {
            return Ok(tokens);
        }
        if !self.rest().starts_with('/') {
            return Err(ExprError::syntax(
                self.pos,
                "a JSON Pointer starting with `/` after `#`",
            ));
        }
        while self.eat("/") {
            let mut tok = String::new();
            while let Some(c) = self.rest().chars().next() {
                if c == '/' || (self.mode == Mode::Condition && ends_operand(c)) {
                    break;
                }
                if c == '~' {
                    match self.rest().as_bytes().get(1) {
                        Some(b'0') => tok.push('~'),
                        Some(b'1') => tok.push('/'),
                        _ => {
                            return Err(ExprError::syntax(
                                self.pos,
                                "`~0` or `~1` (a `~` in a JSON Pointer is escaped)",
                            ));
                        }
                    }
                    self.pos += 2;
                    continue;
                }
                tok.push(c);
                self.pos += c.len_utf8();
            }
            tokens.push(tok);
        }
        Ok(tokens)
    }

    fn header(&mut self) -> Result<String, ExprError> {
        let start = self.pos;
        let n: usize = self
            .rest()
            .char_indices()
            .find(|&(_, c)| {
                !is_tchar(c) || (self.mode == Mode::Condition && (ends_operand(c) || c == '&'))
            })
            .map_or(self.rest().len(), |(i, _)| i);
        if n == 0 {
            return Err(ExprError::syntax(start, "a header name (RFC 9110 token)"));
        }
        self.pos += n;
        Ok(self.text[start..self.pos].to_string())
    }

    fn source(&mut self) -> Result<(Source, Tail), ExprError> {
        if self.eat("header.") {
            let h = self.header()?;
            let (path, ptr) = self.tail(false)?;
            Ok((Source::Header(h), (path, ptr)))
        } else if self.eat("query.") {
            let n = self.name("a query parameter name")?;
            let (path, ptr) = self.tail(false)?;
            Ok((Source::Query(n), (path, ptr)))
        } else if self.eat("path.") {
            let n = self.name("a path parameter name")?;
            let (path, ptr) = self.tail(false)?;
            Ok((Source::Path(n), (path, ptr)))
        } else if self.eat("body") {
            let (path, ptr) = self.tail(true)?;
            Ok((Source::Body, (path, ptr)))
        } else {
            Err(ExprError::syntax(
                self.pos,
                "`header.`, `query.`, `path.` or `body`",
            ))
        }
    }

    /// A name with a dotted tail kept in the name (resolved longest-prefix), then `[N]`,
    /// `.key` and `#pointer`.
    fn named(&mut self, what: &str) -> Result<(String, Tail), ExprError> {
        let n = self.name(what)?;
        Ok((n, self.tail(true)?))
    }

    fn expression(&mut self) -> Result<Expr, ExprError> {
        let start = self.pos;
        self.expect("$", "`$` (a runtime expression)")?;
        let root_at = self.pos;
        let root = self.take_until(&['.', '#', '[']);
        let (kind, path, pointer) = match root {
            "url" => (Kind::Url, Vec::new(), None),
            "method" => (Kind::Method, Vec::new(), None),
            "statusCode" => (Kind::StatusCode, Vec::new(), None),
            "request" | "response" => {
                self.expect(".", "`.` then `header.`, `query.`, `path.` or `body`")?;
                let (s, (path, ptr)) = self.source()?;
                let k = if root == "request" {
                    Kind::Request(s)
                } else {
                    Kind::Response(s)
                };
                (k, path, ptr)
            }
            "inputs" | "outputs" => {
                self.expect(".", "`.` and a name")?;
                let (n, (path, ptr)) = self.named("a name")?;
                let k = if root == "inputs" {
                    Kind::Inputs(n)
                } else {
                    Kind::Outputs(n)
                };
                (k, path, ptr)
            }
            "steps" => {
                self.expect(".", "`.` and a step id")?;
                let id = self.segment("a step id")?.to_string();
                self.expect(".outputs", "`.outputs` after the step id")?;
                if self.eat(".") {
                    let (n, (path, ptr)) = self.named("an output name")?;
                    (Kind::Step(id, Some(n)), path, ptr)
                } else {
                    let (path, ptr) = self.tail(true)?;
                    (Kind::Step(id, None), path, ptr)
                }
            }
            "workflows" => {
                self.expect(".", "`.` and a workflow id")?;
                let id = self.segment("a workflow id")?.to_string();
                let part = if self.eat(".inputs") {
                    "inputs"
                } else if self.eat(".outputs") {
                    "outputs"
                } else {
                    return Err(ExprError::syntax(
                        self.pos,
                        "`.inputs` or `.outputs` after the workflow id",
                    ));
                };
                if self.eat(".") {
                    let (n, (path, ptr)) = self.named("a name")?;
                    (Kind::Workflow(id, part, Some(n)), path, ptr)
                } else {
                    let (path, ptr) = self.tail(true)?;
                    (Kind::Workflow(id, part, None), path, ptr)
                }
            }
            "sourceDescriptions" => {
                self.expect(".", "`.` and a source description name")?;
                let name = self.segment("a source description name")?.to_string();
                let member = if self.eat(".") {
                    let m = self.take_until(&[]);
                    if m.is_empty() {
                        return Err(ExprError::syntax(self.pos, "a member such as `url`"));
                    }
                    Some(m.to_string())
                } else {
                    None
                };
                if !self.at_end() {
                    return Err(ExprError::syntax(self.pos, "the end of the expression"));
                }
                (Kind::SourceDescription(name, member), Vec::new(), None)
            }
            "components" => {
                self.expect(".", "`.` and a component kind such as `parameters`")?;
                let kind = self.segment("a component kind such as `parameters`")?;
                self.expect(".", "`.` and a component name")?;
                let name = self.take_until(&[]);
                if name.is_empty() {
                    return Err(ExprError::syntax(self.pos, "a component name"));
                }
                (
                    Kind::Component(kind.to_string(), name.to_string()),
                    Vec::new(),
                    None,
                )
            }
            _ => {
                return Err(ExprError::syntax(
                    root_at,
                    "one of url, method, statusCode, request., response., inputs., outputs., steps., workflows., sourceDescriptions., components.",
                ));
            }
        };
        if !self.at_end() {
            return Err(ExprError::syntax(self.pos, "the end of the expression"));
        }
        Ok(Expr {
            text: self.text[start..self.pos].to_string(),
            kind,
            path,
            pointer,
        })
    }
}

/// Parses one expression starting at byte `at` of `text`; in [`Mode::Condition`] it ends at
/// whitespace or an operator character and the end offset is returned.
pub(crate) fn parse_in(text: &str, at: usize, mode: Mode) -> Result<(Expr, usize), ExprError> {
    let mut p = Parser {
        text,
        pos: at,
        mode,
    };
    let e = p.expression()?;
    if p.pos - at > MAX_EXPR_LEN {
        return Err(ExprError::TooLong {
            what: "an expression",
            len: p.pos - at,
            limit: MAX_EXPR_LEN,
            budget: "MAX_EXPR_LEN",
        });
    }
    Ok((e, p.pos))
}

impl Expr {
    /// Parses a whole string as one runtime expression.
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        if text.len() > MAX_EXPR_LEN {
            return Err(ExprError::TooLong {
                what: "an expression",
                len: text.len(),
                limit: MAX_EXPR_LEN,
                budget: "MAX_EXPR_LEN",
            });
        }
        parse_in(text, 0, Mode::Whole).map(|(e, _)| e)
    }

    /// The text as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// What the expression refers to.
    pub fn root(&self) -> Root<'_> {
        match &self.kind {
            Kind::Url => Root::Url,
            Kind::Method => Root::Method,
            Kind::StatusCode => Root::StatusCode,
            Kind::Request(_) => Root::Request,
            Kind::Response(_) => Root::Response,
            Kind::Inputs(n) => Root::Inputs(n),
            Kind::Outputs(n) => Root::Outputs(n),
            Kind::Step(s, o) => Root::Step {
                step: s,
                output: o.as_deref(),
            },
            Kind::Workflow(w, part, n) => Root::Workflow {
                workflow: w,
                part,
                name: n.as_deref(),
            },
            Kind::SourceDescription(n, _) => Root::SourceDescription(n),
            Kind::Component(k, n) => Root::Component { kind: k, name: n },
        }
    }

    /// The member after `$sourceDescriptions.NAME.` (`url`, or an operation/workflow id).
    pub fn source_member(&self) -> Option<&str> {
        match &self.kind {
            Kind::SourceDescription(_, m) => m.as_deref(),
            _ => None,
        }
    }

    /// Whether it reads the current HTTP request/response (`$url`, `$method`, `$statusCode`,
    /// `$request.*`, `$response.*`).
    pub fn needs_exchange(&self) -> bool {
        matches!(
            self.kind,
            Kind::Url | Kind::Method | Kind::StatusCode | Kind::Request(_) | Kind::Response(_)
        )
    }

    fn not_found(&self, detail: impl Into<String>) -> EvalError {
        EvalError::NotFound {
            expr: self.text.clone(),
            detail: detail.into(),
        }
    }

    /// The value, or [`EvalError::NotFound`] when it is absent.
    pub fn eval(&self, scope: &Scope<'_>) -> Result<Value, EvalError> {
        match self.resolve(scope)? {
            Ok(v) => Ok(v.into_owned()),
            Err(detail) => Err(self.not_found(detail)),
        }
    }

    /// The value, or `None` when it is absent (a missing header, output or pointer target).
    pub fn lookup(&self, scope: &Scope<'_>) -> Result<Option<Value>, EvalError> {
        Ok(self.resolve(scope)?.ok().map(std::borrow::Cow::into_owned))
    }

    /// A reference to the value where it lives in the scope (no copy), `Err(detail)` inside
    /// `Ok` when it is absent.
    pub(crate) fn resolve<'s>(
        &self,
        scope: &Scope<'s>,
    ) -> Result<Result<std::borrow::Cow<'s, Value>, String>, EvalError> {
        use std::borrow::Cow;
        let exchange = || {
            scope.exchange.ok_or_else(|| EvalError::NoExchange {
                expr: self.text.clone(),
            })
        };
        // (base value, whether `name` still has to be resolved in it)
        let (base, name): (Cow<'s, Value>, Option<&str>) = match &self.kind {
            Kind::Url => return Ok(Ok(Cow::Owned(Value::String(exchange()?.url.clone())))),
            Kind::Method => {
                return Ok(Ok(Cow::Owned(Value::String(exchange()?.method.clone()))));
            }
            Kind::StatusCode => return Ok(Ok(Cow::Owned(Value::from(exchange()?.status)))),
            Kind::Request(src) | Kind::Response(src) => {
                let x = exchange()?;
                let request = matches!(self.kind, Kind::Request(_));
                let side = if request { "request" } else { "response" };
                match src {
                    Source::Header(h) => {
                        let headers = if request {
                            &x.request_headers
                        } else {
                            &x.response_headers
                        };
                        match headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(h)) {
                            Some((_, v)) => (Cow::Owned(Value::String(v.clone())), None),
                            None => return Ok(Err(format!("the {side} has no header {h}"))),
                        }
                    }
                    Source::Query(q) => {
                        if !request {
                            return Ok(Err("a response has no query parameters".into()));
                        }
                        match x.request_query.iter().find(|(k, _)| k == q) {
                            Some((_, v)) => (Cow::Owned(Value::String(v.clone())), None),
                            None => {
                                return Ok(Err(format!("the request has no query parameter {q}")));
                            }
                        }
                    }
                    Source::Path(p) => {
                        if !request {
                            return Ok(Err("a response has no path parameters".into()));
                        }
                        match x.request_path.get(p) {
                            // An exchange outlives the scope borrow only as long as 's.
                            Some(v) => (Cow::Borrowed(v), None),
                            None => {
                                return Ok(Err(format!("the request has no path parameter {p}")));
                            }
                        }
                    }
                    Source::Body => {
                        let body = if request {
                            x.request_body.as_ref()
                        } else {
                            x.response_body.as_ref()
                        };
                        match body {
                            Some(b) => (Cow::Borrowed(b), None),
                            None => return Ok(Err(format!("the {side} has no body"))),
                        }
                    }
                }
            }
            Kind::Inputs(n) => (Cow::Borrowed(scope.inputs), Some(n.as_str())),
            Kind::Outputs(n) => match scope.outputs {
                Some(o) => match resolve_name(o, n) {
                    Some((v, rest)) => {
                        return Ok(self.finish(v, rest).map(Cow::Borrowed));
                    }
                    None => return Ok(Err(format!("the workflow has no output {n} (yet)"))),
                },
                None => return Ok(Err("no workflow outputs here".into())),
            },
            Kind::Step(id, out) => {
                let Some(outputs) = scope.steps.get(id).and_then(|s| s.get("outputs")) else {
                    return Ok(Err(format!("step {id} has not run or has no outputs")));
                };
                (Cow::Borrowed(outputs), out.as_deref())
            }
            Kind::Workflow(id, part, n) => {
                let Some(v) = scope.workflows.get(id).and_then(|w| w.get(*part)) else {
                    return Ok(Err(format!("workflow {id} has no {part} (has it run?)")));
                };
                (Cow::Borrowed(v), n.as_deref())
            }
            Kind::SourceDescription(n, member) => {
                let Some(sd) = scope.source_descriptions.get(n) else {
                    return Ok(Err(format!("no source description named {n}")));
                };
                match member {
                    None => return Ok(Ok(Cow::Borrowed(sd))),
                    Some(m) => match sd.get(m) {
                        Some(v) => return Ok(Ok(Cow::Borrowed(v))),
                        None => {
                            return Ok(Err(format!("source description {n} has no member {m}")));
                        }
                    },
                }
            }
            Kind::Component(k, n) => {
                return Ok(match scope.components.get(k).and_then(|c| c.get(n)) {
                    Some(v) => Ok(Cow::Borrowed(v)),
                    None => Err(format!("no component {k}.{n}")),
                });
            }
        };
        let (start, rest) = match name {
            None => (base, None),
            Some(n) => {
                let found = match &base {
                    Cow::Borrowed(b) => b
                        .as_object()
                        .and_then(|m| resolve_name(m, n))
                        .map(|(v, r)| (Cow::Borrowed(v), r)),
                    Cow::Owned(b) => b
                        .as_object()
                        .and_then(|m| resolve_name(m, n))
                        .map(|(v, r)| (Cow::Owned(v.clone()), r)),
                };
                match found {
                    Some((v, r)) => (v, r),
                    None => return Ok(Err(format!("there is no value named {n}"))),
                }
            }
        };
        Ok(match start {
            Cow::Borrowed(v) => self.finish(v, rest).map(Cow::Borrowed),
            Cow::Owned(v) => self.finish(&v, rest).map(|x| Cow::Owned(x.clone())),
        })
    }

    /// Applies the leftover dotted part of a name, the `.key`/`[N]` path and the pointer.
    fn finish<'v>(&self, mut v: &'v Value, rest: Option<&str>) -> Result<&'v Value, String> {
        if let Some(rest) = rest {
            for k in rest.split('.') {
                v = step_key(v, k).ok_or_else(|| format!("no property {k}"))?;
            }
        }
        for s in &self.path {
            v = match s {
                Seg::Key(k) => step_key(v, k).ok_or_else(|| format!("no property {k}"))?,
                Seg::Index(i) => v
                    .as_array()
                    .and_then(|a| a.get(*i))
                    .ok_or_else(|| format!("no item [{i}]"))?,
            };
        }
        if let Some(tokens) = &self.pointer {
            for t in tokens {
                v = match v {
                    Value::Object(m) => m.get(t.as_str()),
                    Value::Array(a) => array_index(t).and_then(|i| a.get(i)),
                    _ => None,
                }
                .ok_or_else(|| "the JSON Pointer does not resolve".to_string())?;
            }
        }
        Ok(v)
    }
}

/// A member of an object, or an item of an array by its decimal index (`.0` like `[0]`).
fn step_key<'v>(v: &'v Value, k: &str) -> Option<&'v Value> {
    match v {
        Value::Object(m) => m.get(k),
        Value::Array(a) => array_index(k).and_then(|i| a.get(i)),
        _ => None,
    }
}

/// An RFC 6901 array index: `0` or digits without a leading zero.
fn array_index(t: &str) -> Option<usize> {
    if t.is_empty() || (t.len() > 1 && t.starts_with('0')) || !t.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    t.parse().ok()
}

/// The longest prefix of the dotted `name` that is a key of `m`, and the rest after its dot.
fn resolve_name<'m, 'n>(
    m: &'m Map<String, Value>,
    name: &'n str,
) -> Option<(&'m Value, Option<&'n str>)> {
    for cand in name_candidates(name) {
        if let Some(v) = m.get(cand) {
            let rest = name.get(cand.len() + 1..).filter(|r| !r.is_empty());
            return Some((v, rest));
        }
    }
    None
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A string that may carry expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    text: String,
    parts: Parts,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Parts {
    Literal,
    Bare(Expr),
    /// Literal text ranges and expressions, in order.
    Embedded(Vec<Piece>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(std::ops::Range<usize>),
    Expr(Expr),
}

/// Whether a string is meant as a bare expression: `$` then a letter (`$5` stays text).
fn looks_bare(text: &str) -> bool {
    let mut c = text.chars();
    c.next() == Some('$') && c.next().is_some_and(|c| c.is_ascii_alphabetic())
}

impl Template {
    /// Parses a string: a bare expression (`$` then a letter: it must be a valid expression),
    /// text with embedded `{$...}` expressions (each must be valid), or a literal.
    pub fn parse(text: &str) -> Result<Template, ExprError> {
        if text.len() > MAX_TEMPLATE_LEN {
            return Err(ExprError::TooLong {
                what: "a string",
                len: text.len(),
                limit: MAX_TEMPLATE_LEN,
                budget: "MAX_TEMPLATE_LEN",
            });
        }
        if looks_bare(text) {
            return Ok(Template {
                text: text.to_string(),
                parts: Parts::Bare(Expr::parse(text)?),
            });
        }
        let mut pieces = Vec::new();
        let mut embeds = 0;
        let mut lit_start = 0;
        let mut from = 0;
        while let Some(i) = text[from..].find("{$").map(|i| i + from) {
            embeds += 1;
            if embeds > MAX_EMBEDS {
                return Err(ExprError::TooManyEmbeds {
                    offset: i,
                    limit: MAX_EMBEDS,
                });
            }
            let inner = i + 1;
            let Some(close) = text[inner..].find('}').map(|j| j + inner) else {
                return Err(ExprError::syntax(
                    text.len(),
                    "`}` closing the embedded expression",
                ));
            };
            if close - inner > MAX_EXPR_LEN {
                return Err(ExprError::TooLong {
                    what: "an embedded expression",
                    len: close - inner,
                    limit: MAX_EXPR_LEN,
                    budget: "MAX_EXPR_LEN",
                });
            }
            let e = Expr::parse(&text[inner..close]).map_err(|e| e.shifted(inner))?;
            if lit_start < i {
                pieces.push(Piece::Text(lit_start..i));
            }
            pieces.push(Piece::Expr(e));
            lit_start = close + 1;
            from = close + 1;
        }
        if pieces.is_empty() {
            return Ok(Template {
                text: text.to_string(),
                parts: Parts::Literal,
            });
        }
        if lit_start < text.len() {
            pieces.push(Piece::Text(lit_start..text.len()));
        }
        Ok(Template {
            text: text.to_string(),
            parts: Parts::Embedded(pieces),
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn expressions(&self) -> impl Iterator<Item = &Expr> {
        let (bare, pieces): (Option<&Expr>, &[Piece]) = match &self.parts {
            Parts::Literal => (None, &[]),
            Parts::Bare(e) => (Some(e), &[]),
            Parts::Embedded(p) => (None, p),
        };
        bare.into_iter()
            .chain(pieces.iter().filter_map(|p| match p {
                Piece::Expr(e) => Some(e),
                Piece::Text(_) => None,
            }))
    }

    pub fn is_literal(&self) -> bool {
        matches!(self.parts, Parts::Literal)
    }

    /// A bare expression gives its value (type preserved); text with embedded expressions
    /// gives a string (a string value as is, `null` as nothing, anything else as compact JSON);
    /// a literal gives itself.
    pub fn eval(&self, scope: &Scope<'_>) -> Result<Value, EvalError> {
        let mut budget = MAX_OUTPUT_BYTES;
        self.eval_budget(scope, &mut budget)
    }

    fn eval_budget(&self, scope: &Scope<'_>, budget: &mut usize) -> Result<Value, EvalError> {
        match &self.parts {
            Parts::Literal => {
                take(budget, self.text.len() + 2, &self.text)?;
                Ok(Value::String(self.text.clone()))
            }
            Parts::Bare(e) => {
                let v = e.resolve(scope)?.map_err(|d| e.not_found(d))?;
                take(budget, json_size(&v, *budget), e.text())?;
                Ok(v.into_owned())
            }
            Parts::Embedded(pieces) => {
                // Size first (no allocation beyond the budget), then build.
                let mut values = Vec::with_capacity(pieces.len());
                let mut total = 0usize;
                for p in pieces {
                    match p {
                        Piece::Text(r) => total += r.len(),
                        Piece::Expr(e) => {
                            let v = e.resolve(scope)?.map_err(|d| e.not_found(d))?;
                            total = total.saturating_add(match &*v {
                                Value::String(s) => s.len(),
                                Value::Null => 0,
                                other => json_size(other, *budget),
                            });
                            if total > *budget {
                                return Err(over(&self.text, *budget));
                            }
                            values.push(v);
                        }
                    }
                }
                take(budget, total + 2, &self.text)?;
                let mut out = String::with_capacity(total);
                let mut vals = values.into_iter();
                for p in pieces {
                    match p {
                        Piece::Text(r) => out.push_str(&self.text[r.clone()]),
                        Piece::Expr(_) => match vals.next().as_deref() {
                            Some(Value::String(s)) => out.push_str(s),
                            Some(Value::Null) | None => {}
                            Some(other) => out.push_str(&other.to_string()),
                        },
                    }
                }
                Ok(Value::String(out))
            }
        }
    }
}

fn over(text: &str, limit: usize) -> EvalError {
    EvalError::Budget {
        expr: short(text),
        detail: "the result is larger than the output budget".into(),
        limit,
        budget: "MAX_OUTPUT_BYTES",
    }
}

/// At most 120 bytes of a text, for messages.
pub(crate) fn short(text: &str) -> String {
    if text.len() <= 120 {
        return text.to_string();
    }
    let mut end = 117;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

fn take(budget: &mut usize, n: usize, text: &str) -> Result<(), EvalError> {
    if n > *budget {
        return Err(over(text, MAX_OUTPUT_BYTES));
    }
    *budget -= n;
    Ok(())
}

/// The length of `v` as compact JSON text, or `limit + 1` as soon as it exceeds `limit`
/// (walks without recursion and stops early).
pub fn json_size(v: &Value, limit: usize) -> usize {
    let mut total = 0usize;
    let mut stack: Vec<&Value> = vec![v];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(match v {
            Value::Null => 4,
            Value::Bool(b) => 4 + usize::from(!*b),
            Value::Number(n) => number_len(n),
            // Quotes; escapes counted as one byte each (a lower bound is enough for a budget
            // that the real text also respects: the real text is only larger).
            Value::String(s) => s.len() + 2,
            Value::Array(a) => {
                stack.extend(a.iter());
                // Brackets and the commas between items.
                a.len().max(1) + 1
            }
            Value::Object(m) => {
                let mut keys = 2usize;
                for (k, v) in m {
                    // `"k":` and a comma (one too many, for the last member).
                    keys = keys.saturating_add(k.len() + 4);
                    stack.push(v);
                }
                keys - usize::from(!m.is_empty())
            }
        });
        if total > limit {
            return limit.saturating_add(1);
        }
    }
    total
}

fn number_len(n: &serde_json::Number) -> usize {
    if let Some(i) = n.as_i64() {
        let mut len = usize::from(i < 0) + 1;
        let mut x = i.unsigned_abs();
        while x >= 10 {
            x /= 10;
            len += 1;
        }
        len
    } else if let Some(u) = n.as_u64() {
        u.to_string().len()
    } else {
        // Floats print in at most 24 bytes (ryu).
        24
    }
}

/// Payload replacement: each string of `value` that is a bare expression or embeds `{$...}`
/// is evaluated; objects and arrays are walked (at most [`MAX_WALK_DEPTH`] deep); the result is
/// at most [`MAX_OUTPUT_BYTES`] of JSON text. Keys are kept as written.
pub fn eval_value(value: &Value, scope: &Scope<'_>) -> Result<Value, EvalError> {
    let mut budget = MAX_OUTPUT_BYTES;
    let mut pointer = String::new();
    walk_eval(value, scope, 0, &mut budget, &mut pointer)
}

fn walk_eval(
    value: &Value,
    scope: &Scope<'_>,
    depth: usize,
    budget: &mut usize,
    pointer: &mut String,
) -> Result<Value, EvalError> {
    if depth > MAX_WALK_DEPTH {
        return Err(EvalError::Invalid {
            pointer: pointer_text(pointer),
            error: ExprError::TooDeep {
                limit: MAX_WALK_DEPTH,
            },
        });
    }
    match value {
        Value::String(s) => {
            let t = Template::parse(s).map_err(|error| EvalError::Invalid {
                pointer: pointer_text(pointer),
                error,
            })?;
            t.eval_budget(scope, budget)
        }
        Value::Array(a) => {
            take(budget, a.len() + 2, "the payload")?;
            let mut out = Vec::with_capacity(a.len());
            for (i, v) in a.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&i.to_string());
                out.push(walk_eval(v, scope, depth + 1, budget, pointer)?);
                pointer.truncate(len);
            }
            Ok(Value::Array(out))
        }
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                take(budget, k.len() + 4, "the payload")?;
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&k.replace('~', "~0").replace('/', "~1"));
                out.insert(k.clone(), walk_eval(v, scope, depth + 1, budget, pointer)?);
                pointer.truncate(len);
            }
            Ok(Value::Object(out))
        }
        other => {
            take(budget, json_size(other, *budget), "the payload")?;
            Ok(other.clone())
        }
    }
}

fn pointer_text(p: &str) -> String {
    if p.is_empty() {
        "the value".to_string()
    } else {
        format!("#{p}")
    }
}

/// Every expression inside a JSON value (strings parsed as [`Template`]s), or the first
/// parse error with its JSON pointer inside `value` (`""` for the value itself).
pub fn expressions_in(value: &Value) -> Result<Vec<Expr>, (String, ExprError)> {
    let mut out = Vec::new();
    let mut pointer = String::new();
    walk_exprs(value, 0, &mut pointer, &mut out)?;
    Ok(out)
}

fn walk_exprs(
    value: &Value,
    depth: usize,
    pointer: &mut String,
    out: &mut Vec<Expr>,
) -> Result<(), (String, ExprError)> {
    if depth > MAX_WALK_DEPTH {
        return Err((
            pointer.clone(),
            ExprError::TooDeep {
                limit: MAX_WALK_DEPTH,
            },
        ));
    }
    match value {
        Value::String(s) => {
            let t = Template::parse(s).map_err(|e| (pointer.clone(), e))?;
            out.extend(t.expressions().cloned());
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&i.to_string());
                walk_exprs(v, depth + 1, pointer, out)?;
                pointer.truncate(len);
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&k.replace('~', "~0").replace('/', "~1"));
                walk_exprs(v, depth + 1, pointer, out)?;
                pointer.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
