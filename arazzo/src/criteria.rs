//! Arazzo 1.0.1 Criterion Objects (`successCriteria`, action `criteria`): `simple` conditions,
//! `regex` and `jsonpath` (RFC 9535); `xpath` is refused at compile time.
//!
//! **simple**: literals (`true`, `false`, `null`, numbers, `'single-quoted'` strings with `''`
//! for a quote; `"double-quoted"` accepted too), runtime expressions (which may de-reference with
//! `.prop` and `[N]`), the operators `<` `<=` `>` `>=` `==` `!=` `!` `&&` `||`, and grouping
//! with `()` (or `{}`, as the specification's own `"{$statusCode == 401}"` example writes it).
//! `&&` binds tighter than `||`; `!` applies to the operand after it. Comparisons are loose, as
//! the specification says: numbers numerically, strings case-insensitively (the specification:
//! "String comparisons MUST be case insensitive"), a number and a numeric string as numbers, a
//! boolean and the string `'true'`/`'false'` as booleans, `null` equals only `null` (or a value
//! that is absent). An ordering between values that have none (an object, `null`) is false. A
//! condition that is a single operand is its truth (`false`, `null`, `0`, `''`, `[]`, `{}` and
//! absent are false).
//!
//! **regex**: `context` (required) is the value matched, `condition` the pattern (Rust `regex`
//! syntax: no look-around or back-references, linear-time matching); it matches anywhere unless
//! anchored (`^200$`). A string context is matched as is, a number or boolean as its JSON text,
//! an object or array as its compact JSON text; an absent or `null` context does not match.
//!
//! **jsonpath**: `context` (required) is the root `$`; the condition is an RFC 9535 query and
//! holds when it selects at least one node (`$[?count(@.pets) > 0]`). `match()` and `search()`
//! are not available (see `convert/src/overlay.rs`: the engine recompiles their regex per node).
//!
//! Budgets (named constants below) are checked at compile time or before the work they bound.

use std::cmp::Ordering;

use serde_json::Value;
use serde_json_path::JsonPath;

use crate::expr::{self, EvalError, Expr, ExprError, Mode, Scope, short};

/// The longest condition (any type), in bytes.
pub const MAX_CONDITION_LEN: usize = 4 * 1024;
/// Tokens in one simple condition.
pub const MAX_CONDITION_TOKENS: usize = 512;
/// Nesting of `(`, `{` and `!` in one simple condition.
pub const MAX_CONDITION_DEPTH: usize = 32;
/// The compiled size of a regex pattern (`RegexBuilder::size_limit`), in bytes.
pub const MAX_REGEX_SIZE: usize = 1024 * 1024;
/// The lazy DFA's cache per regex (`RegexBuilder::dfa_size_limit`), in bytes.
pub const MAX_REGEX_DFA_SIZE: usize = 2 * 1024 * 1024;
/// Nesting of groups and repetitions in a pattern (`RegexBuilder::nest_limit`).
pub const MAX_REGEX_NEST: u32 = 64;
/// The largest value a regex is matched against, in bytes.
pub const MAX_REGEX_SUBJECT: usize = 1024 * 1024;
/// The longest JSONPath condition, in bytes.
pub const MAX_JSONPATH_LEN: usize = 1024;
/// Descendant segments (`..`) in a JSONPath condition, filters included.
pub const MAX_JSONPATH_DESCENDANTS: usize = 3;
/// Nesting of brackets and parentheses in a JSONPath condition.
pub const MAX_JSONPATH_NESTING: usize = 16;
/// The estimated nodes a JSONPath condition may visit (and select): the context's nodes, times
/// its depth for each `..` after the first, times the selectors of each bracketed segment,
/// times the filters plus one;
/// checked against the context before the query runs.
pub const MAX_JSONPATH_WORK: u64 = 4_000_000;

/// The `type` of a criterion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CriterionKind {
    Simple,
    Regex,
    JsonPath,
    XPath,
}

impl CriterionKind {
    /// Reads a criterion's `type`: absent (simple), a string, or a Criterion Expression Type
    /// Object `{type, version}` (`jsonpath` with `draft-goessner-dispatch-jsonpath-00`, `xpath`
    /// with `xpath-10|20|30`). A goessner-draft query is evaluated as RFC 9535 (its common
    /// subset).
    pub fn from_type(ty: Option<&Value>) -> Result<CriterionKind, CriterionError> {
        let (name, version) = match ty {
            None | Some(Value::Null) => return Ok(CriterionKind::Simple),
            Some(Value::String(s)) => (s.as_str(), None),
            Some(Value::Object(o)) => {
                let Some(Value::String(t)) = o.get("type") else {
                    return Err(CriterionError::Type(
                        "a Criterion Expression Type Object needs `type` (jsonpath or xpath)"
                            .into(),
                    ));
                };
                let Some(Value::String(v)) = o.get("version") else {
                    return Err(CriterionError::Type(
                        "a Criterion Expression Type Object needs `version`".into(),
                    ));
                };
                (t.as_str(), Some(v.as_str()))
            }
            Some(_) => {
                return Err(CriterionError::Type(
                    "expected a string (simple, regex, jsonpath, xpath) or {type, version}".into(),
                ));
            }
        };
        let kind = match name {
            "simple" if version.is_none() => CriterionKind::Simple,
            "regex" if version.is_none() => CriterionKind::Regex,
            "jsonpath" => CriterionKind::JsonPath,
            "xpath" => CriterionKind::XPath,
            other => {
                return Err(CriterionError::Type(format!(
                    "unknown type {:?} (expected simple, regex, jsonpath or xpath{})",
                    short(other),
                    if version.is_some() {
                        "; an object form is for jsonpath and xpath only"
                    } else {
                        ""
                    }
                )));
            }
        };
        match (kind, version) {
            (_, None) => {}
            (CriterionKind::JsonPath, Some("draft-goessner-dispatch-jsonpath-00")) => {}
            (CriterionKind::XPath, Some("xpath-10" | "xpath-20" | "xpath-30")) => {}
            (_, Some(v)) => {
                return Err(CriterionError::Type(format!(
                    "unknown version {:?} for {name}",
                    short(v)
                )));
            }
        }
        Ok(kind)
    }
}

/// A criterion that cannot be compiled. Offsets are bytes into the condition (or the context).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CriterionError {
    #[error("condition: {0}")]
    Condition(ExprError),
    #[error("context: {0}")]
    Context(ExprError),
    #[error("a {0} criterion needs a `context` (the runtime expression it applies to)")]
    MissingContext(&'static str),
    #[error("{what}: {detail} (limit {limit}, {budget})")]
    Budget {
        what: &'static str,
        detail: String,
        limit: usize,
        budget: &'static str,
    },
    #[error("invalid regex: {0}")]
    Regex(String),
    #[error("invalid JSONPath (RFC 9535): {0}")]
    JsonPath(String),
    #[error("type: {0}")]
    Type(String),
    #[error("xpath criteria are not supported (no XML bodies)")]
    XPathUnsupported,
}

/// A compiled criterion.
#[derive(Clone, Debug)]
pub struct Criterion {
    condition: String,
    context: Option<Expr>,
    compiled: Compiled,
}

#[derive(Clone, Debug)]
enum Compiled {
    Simple(Simple),
    Regex(regex::Regex),
    JsonPath {
        path: JsonPath,
        descendants: u32,
        /// Selectors and filters multiplied out.
        factor: u64,
    },
}

impl Criterion {
    pub fn compile(
        condition: &str,
        context: Option<&str>,
        kind: CriterionKind,
    ) -> Result<Criterion, CriterionError> {
        if condition.len() > MAX_CONDITION_LEN {
            return Err(CriterionError::Budget {
                what: "condition",
                detail: format!("{} bytes", condition.len()),
                limit: MAX_CONDITION_LEN,
                budget: "MAX_CONDITION_LEN",
            });
        }
        let context = context
            .map(|c| Expr::parse(c).map_err(CriterionError::Context))
            .transpose()?;
        let compiled = match kind {
            CriterionKind::XPath => return Err(CriterionError::XPathUnsupported),
            CriterionKind::Simple => {
                Compiled::Simple(Simple::parse(condition).map_err(CriterionError::Condition)?)
            }
            CriterionKind::Regex => {
                if context.is_none() {
                    return Err(CriterionError::MissingContext("regex"));
                }
                let re = regex::RegexBuilder::new(condition)
                    .size_limit(MAX_REGEX_SIZE)
                    .dfa_size_limit(MAX_REGEX_DFA_SIZE)
                    .nest_limit(MAX_REGEX_NEST)
                    .build()
                    .map_err(|e| match e {
                        regex::Error::CompiledTooBig(n) => CriterionError::Budget {
                            what: "regex",
                            detail: "the compiled pattern is too large".into(),
                            limit: n,
                            budget: "MAX_REGEX_SIZE",
                        },
                        other => CriterionError::Regex(one_line(&other.to_string())),
                    })?;
                Compiled::Regex(re)
            }
            CriterionKind::JsonPath => {
                if context.is_none() {
                    return Err(CriterionError::MissingContext("jsonpath"));
                }
                compile_jsonpath(condition)?
            }
        };
        Ok(Criterion {
            condition: condition.to_string(),
            context,
            compiled,
        })
    }

    pub fn condition(&self) -> &str {
        &self.condition
    }

    pub fn context(&self) -> Option<&Expr> {
        self.context.as_ref()
    }

    /// The context and the expressions inside a simple condition.
    pub fn expressions(&self) -> Vec<&Expr> {
        let mut out: Vec<&Expr> = self.context.iter().collect();
        if let Compiled::Simple(s) = &self.compiled {
            out.extend(s.nodes.iter().filter_map(|n| match n {
                Node::Expr(e) => Some(e),
                _ => None,
            }));
        }
        out
    }

    /// Whether the criterion holds. An absent value is not an error (it is `null` in a simple
    /// condition, and matches no regex or JSONPath); a missing HTTP exchange or a budget is.
    pub fn check(&self, scope: &Scope<'_>) -> Result<bool, EvalError> {
        match &self.compiled {
            Compiled::Simple(s) => s.check(scope),
            Compiled::Regex(re) => {
                let Some(ctx) = &self.context else {
                    return Ok(false);
                };
                let Ok(v) = ctx.resolve(scope)? else {
                    return Ok(false);
                };
                let budget = |len: usize| EvalError::Budget {
                    expr: ctx.text().to_string(),
                    detail: format!("the regex subject is {len} bytes or more"),
                    limit: MAX_REGEX_SUBJECT,
                    budget: "MAX_REGEX_SUBJECT",
                };
                match &*v {
                    Value::Null => Ok(false),
                    Value::String(s) => {
                        if s.len() > MAX_REGEX_SUBJECT {
                            return Err(budget(s.len()));
                        }
                        Ok(re.is_match(s))
                    }
                    other => {
                        let size = expr::json_size(other, MAX_REGEX_SUBJECT);
                        if size > MAX_REGEX_SUBJECT {
                            return Err(budget(size));
                        }
                        Ok(re.is_match(&other.to_string()))
                    }
                }
            }
            Compiled::JsonPath {
                path,
                descendants,
                factor,
            } => {
                let Some(ctx) = &self.context else {
                    return Ok(false);
                };
                let Ok(v) = ctx.resolve(scope)? else {
                    return Ok(false);
                };
                let (nodes, depth) = size_and_depth(&v, MAX_JSONPATH_WORK);
                let mut work = nodes.saturating_mul(*factor);
                // One `..` visits each node once; each further one re-walks the subtrees of
                // the nodes selected so far (at most the depth times as many).
                for _ in 1..*descendants {
                    work = work.saturating_mul(depth.max(1));
                }
                if work > MAX_JSONPATH_WORK {
                    return Err(EvalError::Budget {
                        expr: short(&self.condition),
                        detail: format!(
                            "the query would visit about {work} nodes of the context `{}` ({nodes} nodes, depth {depth})",
                            ctx.text()
                        ),
                        limit: usize::try_from(MAX_JSONPATH_WORK).unwrap_or(usize::MAX),
                        budget: "MAX_JSONPATH_WORK",
                    });
                }
                Ok(!path.query(&v).is_empty())
            }
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Nodes (capped just past `cap`) and depth of a value, without recursion.
fn size_and_depth(v: &Value, cap: u64) -> (u64, u64) {
    let (mut nodes, mut depth) = (0u64, 0u64);
    let mut stack = vec![(v, 1u64)];
    while let Some((v, d)) = stack.pop() {
        nodes += 1;
        depth = depth.max(d);
        if nodes > cap {
            break;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(m) => stack.extend(m.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    (nodes, depth)
}

fn compile_jsonpath(q: &str) -> Result<Compiled, CriterionError> {
    if q.len() > MAX_JSONPATH_LEN {
        return Err(CriterionError::Budget {
            what: "jsonpath",
            detail: format!("{} bytes", q.len()),
            limit: MAX_JSONPATH_LEN,
            budget: "MAX_JSONPATH_LEN",
        });
    }
    // A lexical pass outside string literals: `..`, nesting, selectors per bracket, filters.
    let b = q.as_bytes();
    let (mut descendants, mut filters, mut nest, mut max_nest) = (0usize, 0u64, 0usize, 0usize);
    let mut factor: u64 = 1;
    // Per open bracket: the selectors counted so far (1 + top-level commas); per open paren: 0.
    let mut open: Vec<(u8, u64)> = Vec::new();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if let Some(qc) = quote {
            if c == b'\\' {
                i += 1;
            } else if c == qc {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'\'' | b'"' => quote = Some(c),
            b'.' if b.get(i + 1) == Some(&b'.') => {
                descendants += 1;
                i += 1;
            }
            b'?' => filters += 1,
            b'[' | b'(' => {
                nest += 1;
                max_nest = max_nest.max(nest);
                open.push((c, 1));
            }
            b']' | b')' => {
                nest = nest.saturating_sub(1);
                if let Some((b'[', n)) = open.pop() {
                    factor = factor.saturating_mul(n);
                }
            }
            b',' => {
                if let Some((b'[', n)) = open.last_mut() {
                    *n += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if descendants > MAX_JSONPATH_DESCENDANTS {
        return Err(CriterionError::Budget {
            what: "jsonpath",
            detail: format!("{descendants} descendant segments (`..`)"),
            limit: MAX_JSONPATH_DESCENDANTS,
            budget: "MAX_JSONPATH_DESCENDANTS",
        });
    }
    if max_nest > MAX_JSONPATH_NESTING {
        return Err(CriterionError::Budget {
            what: "jsonpath",
            detail: format!("brackets and parentheses nested {max_nest} deep"),
            limit: MAX_JSONPATH_NESTING,
            budget: "MAX_JSONPATH_NESTING",
        });
    }
    let path = JsonPath::parse(q).map_err(|e| {
        let hint = if q.contains("match(") || q.contains("search(") {
            " (match() and search() are not supported: the engine compiles their regular expression again for every node it visits)"
        } else if q.starts_with('$') && !q.contains("[?") && ["==", "!=", "<", ">"].iter().any(|op| q.contains(op)) {
            " (RFC 9535 has comparisons only inside a filter `[?...]`; to compare a value of the context, use a simple condition such as `$response.body#/name == 'x'`)"
        } else if !q.starts_with('$') {
            " (a jsonpath condition is a query starting with `$`, applied to the context)"
        } else {
            ""
        };
        CriterionError::JsonPath(format!("{}{hint}", one_line(&e.to_string())))
    })?;
    Ok(Compiled::JsonPath {
        path,
        descendants: u32::try_from(descendants).unwrap_or(u32::MAX),
        factor: factor.saturating_mul(filters.saturating_add(1)),
    })
}

// ---------------------------------------------------------------------------------------------
// simple conditions

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Debug)]
enum Node {
    Lit(Value),
    Expr(Expr),
    Not(usize),
    And(Vec<usize>),
    Or(Vec<usize>),
    Cmp(Cmp, usize, usize),
}

/// A parsed simple condition: nodes in an arena, the root last.
#[derive(Clone, Debug)]
struct Simple {
    nodes: Vec<Node>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Open(u8),
    Close(u8),
    And,
    Or,
    Not,
    Cmp(Cmp),
    Lit(Value),
    Expr(Box<Expr>),
}

fn err(offset: usize, expected: &str) -> ExprError {
    ExprError::Syntax {
        offset,
        expected: expected.into(),
    }
}

fn tokenize(text: &str) -> Result<Vec<(usize, Tok)>, ExprError> {
    let b = text.as_bytes();
    let mut out: Vec<(usize, Tok)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if out.len() >= MAX_CONDITION_TOKENS {
            return Err(ExprError::TooLong {
                what: "a condition's tokens",
                len: out.len() + 1,
                limit: MAX_CONDITION_TOKENS,
                budget: "MAX_CONDITION_TOKENS",
            });
        }
        let at = i;
        let two = b.get(i + 1).copied();
        let tok = match (c, two) {
            (b'(' | b'{', _) => {
                i += 1;
                Tok::Open(c)
            }
            (b')' | b'}', _) => {
                i += 1;
                Tok::Close(c)
            }
            (b'&', Some(b'&')) => {
                i += 2;
                Tok::And
            }
            (b'|', Some(b'|')) => {
                i += 2;
                Tok::Or
            }
            (b'=', Some(b'=')) => {
                i += 2;
                Tok::Cmp(Cmp::Eq)
            }
            (b'!', Some(b'=')) => {
                i += 2;
                Tok::Cmp(Cmp::Ne)
            }
            (b'<', Some(b'=')) => {
                i += 2;
                Tok::Cmp(Cmp::Le)
            }
            (b'>', Some(b'=')) => {
                i += 2;
                Tok::Cmp(Cmp::Ge)
            }
            (b'<', _) => {
                i += 1;
                Tok::Cmp(Cmp::Lt)
            }
            (b'>', _) => {
                i += 1;
                Tok::Cmp(Cmp::Gt)
            }
            (b'!', _) => {
                i += 1;
                Tok::Not
            }
            (b'=', _) => return Err(err(i, "`==` (a single `=` is not an operator)")),
            (b'&', _) => return Err(err(i, "`&&`")),
            (b'|', _) => return Err(err(i, "`||`")),
            (b'\'' | b'"', _) => {
                let (s, end) = string_lit(text, i)?;
                i = end;
                Tok::Lit(Value::String(s))
            }
            (b'$', _) => {
                let (e, end) = expr::parse_in(text, i, Mode::Condition)?;
                i = end;
                Tok::Expr(Box::new(e))
            }
            (b'-' | b'0'..=b'9', _) => {
                let end = i + b[i..]
                    .iter()
                    .take_while(|c| {
                        c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E')
                    })
                    .count();
                let n: serde_json::Number = text[i..end]
                    .parse()
                    .map_err(|_| err(i, "a number (JSON number syntax)"))?;
                i = end;
                Tok::Lit(Value::Number(n))
            }
            _ => {
                let end = i + b[i..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                let v = match &text[i..end] {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "null" => Value::Null,
                    _ => {
                        return Err(err(
                            i,
                            "a literal (true, false, null, a number, 'string'), a `$` runtime expression, `(` or `!`",
                        ));
                    }
                };
                i = end;
                Tok::Lit(v)
            }
        };
        out.push((at, tok));
    }
    Ok(out)
}

/// A quoted string from `at` (the quote); the quote doubled stands for itself.
fn string_lit(text: &str, at: usize) -> Result<(String, usize), ExprError> {
    let q = text.as_bytes()[at];
    let mut s = String::new();
    let mut i = at + 1;
    loop {
        let Some(j) = text[i..].find(q as char).map(|j| j + i) else {
            return Err(err(text.len(), "a closing quote"));
        };
        s.push_str(&text[i..j]);
        if text.as_bytes().get(j + 1) == Some(&q) {
            s.push(q as char);
            i = j + 2;
        } else {
            return Ok((s, j + 1));
        }
    }
}

struct SimpleParser {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    end: usize,
    depth: usize,
    nodes: Vec<Node>,
}

impl SimpleParser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(_, t)| t)
    }

    fn offset(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |(o, _)| *o)
    }

    fn push(&mut self, n: Node) -> usize {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    fn deeper(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_CONDITION_DEPTH {
            return Err(ExprError::TooLong {
                what: "a condition's nesting",
                len: self.depth,
                limit: MAX_CONDITION_DEPTH,
                budget: "MAX_CONDITION_DEPTH",
            });
        }
        Ok(())
    }

    fn or(&mut self) -> Result<usize, ExprError> {
        let mut items = vec![self.and()?];
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            items.push(self.and()?);
        }
        Ok(if items.len() == 1 {
            items[0]
        } else {
            self.push(Node::Or(items))
        })
    }

    fn and(&mut self) -> Result<usize, ExprError> {
        let mut items = vec![self.not()?];
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            items.push(self.not()?);
        }
        Ok(if items.len() == 1 {
            items[0]
        } else {
            self.push(Node::And(items))
        })
    }

    fn not(&mut self) -> Result<usize, ExprError> {
        if self.peek() == Some(&Tok::Not) {
            self.pos += 1;
            self.deeper()?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(self.push(Node::Not(inner)));
        }
        let left = self.primary()?;
        if let Some(Tok::Cmp(op)) = self.peek() {
            let op = *op;
            self.pos += 1;
            let right = self.primary()?;
            if let Some(Tok::Cmp(_)) = self.peek() {
                return Err(err(
                    self.offset(),
                    "`&&`, `||` or the end (comparisons do not chain)",
                ));
            }
            return Ok(self.push(Node::Cmp(op, left, right)));
        }
        Ok(left)
    }

    fn primary(&mut self) -> Result<usize, ExprError> {
        let at = self.offset();
        let Some((_, tok)) = self.toks.get(self.pos).cloned() else {
            return Err(err(at, "an operand (a literal, a `$` expression or `(`)"));
        };
        self.pos += 1;
        match tok {
            Tok::Open(o) => {
                self.deeper()?;
                let inner = self.or()?;
                let close = if o == b'(' { b')' } else { b'}' };
                if self.peek() != Some(&Tok::Close(close)) {
                    return Err(err(
                        self.offset(),
                        if close == b')' { "`)`" } else { "`}`" },
                    ));
                }
                self.pos += 1;
                self.depth -= 1;
                Ok(inner)
            }
            Tok::Lit(v) => Ok(self.push(Node::Lit(v))),
            Tok::Expr(e) => Ok(self.push(Node::Expr(*e))),
            Tok::Not => {
                // `a == !b`: allowed, as an operand.
                self.pos -= 1;
                self.not()
            }
            _ => Err(err(at, "an operand (a literal, a `$` expression or `(`)")),
        }
    }
}

impl Simple {
    fn parse(text: &str) -> Result<Simple, ExprError> {
        let toks = tokenize(text)?;
        if toks.is_empty() {
            return Err(err(0, "a condition"));
        }
        let mut p = SimpleParser {
            toks,
            pos: 0,
            end: text.len(),
            depth: 0,
            nodes: Vec::new(),
        };
        let root = p.or()?;
        if p.pos != p.toks.len() {
            return Err(err(p.offset(), "`&&`, `||`, a comparison or the end"));
        }
        // The root last: evaluation starts there.
        if root != p.nodes.len() - 1 {
            let n = p.nodes[root].clone();
            p.nodes.push(n);
        }
        Ok(Simple { nodes: p.nodes })
    }

    fn check(&self, scope: &Scope<'_>) -> Result<bool, EvalError> {
        let root = self.nodes.len() - 1;
        Ok(truthy(&self.value(root, scope)?))
    }

    /// The value of node `i` (recursion bounded by MAX_CONDITION_DEPTH plus the comparison and
    /// `&&`/`||` levels between groups).
    fn value(&self, i: usize, scope: &Scope<'_>) -> Result<Value, EvalError> {
        Ok(match &self.nodes[i] {
            Node::Lit(v) => v.clone(),
            Node::Expr(e) => e.lookup(scope)?.unwrap_or(Value::Null),
            Node::Not(n) => Value::Bool(!truthy(&self.value(*n, scope)?)),
            Node::And(items) => {
                for n in items {
                    if !truthy(&self.value(*n, scope)?) {
                        return Ok(Value::Bool(false));
                    }
                }
                Value::Bool(true)
            }
            Node::Or(items) => {
                for n in items {
                    if truthy(&self.value(*n, scope)?) {
                        return Ok(Value::Bool(true));
                    }
                }
                Value::Bool(false)
            }
            Node::Cmp(op, l, r) => {
                let (l, r) = (self.operand(*l, scope)?, self.operand(*r, scope)?);
                Value::Bool(compare(*op, &l, &r))
            }
        })
    }

    /// An operand without copying a referenced value.
    fn operand<'s>(
        &'s self,
        i: usize,
        scope: &Scope<'s>,
    ) -> Result<std::borrow::Cow<'s, Value>, EvalError> {
        use std::borrow::Cow;
        match &self.nodes[i] {
            Node::Lit(v) => Ok(Cow::Borrowed(v)),
            Node::Expr(e) => Ok(e.resolve(scope)?.unwrap_or(Cow::Owned(Value::Null))),
            _ => Ok(Cow::Owned(self.value(i, scope)?)),
        }
    }
}

/// `false`, `null`, `0`, `""`, `[]`, `{}` are false.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

fn compare(op: Cmp, l: &Value, r: &Value) -> bool {
    match op {
        Cmp::Eq => loose_eq(l, r),
        Cmp::Ne => !loose_eq(l, r),
        _ => match loose_ord(l, r) {
            None => false,
            Some(o) => match op {
                Cmp::Lt => o == Ordering::Less,
                Cmp::Le => o != Ordering::Greater,
                Cmp::Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            },
        },
    }
}

fn num_cmp(a: &serde_json::Number, b: &serde_json::Number) -> Option<Ordering> {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => Some(x.cmp(&y)),
        (_, _, Some(x), Some(y)) => Some(x.cmp(&y)),
        // One is a u64 above i64::MAX, the other a negative i64.
        (Some(_), None, _, Some(_)) => Some(Ordering::Less),
        (None, Some(_), Some(_), _) => Some(Ordering::Greater),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// A string that is a number (JSON syntax, surrounding whitespace allowed).
fn as_number(s: &str) -> Option<serde_json::Number> {
    let t = s.trim();
    if t.is_empty() || t.len() > 64 {
        return None;
    }
    t.parse().ok()
}

fn fold_cmp(a: &str, b: &str) -> Ordering {
    a.chars()
        .flat_map(char::to_lowercase)
        .cmp(b.chars().flat_map(char::to_lowercase))
}

fn loose_ord(l: &Value, r: &Value) -> Option<Ordering> {
    match (l, r) {
        (Value::Number(a), Value::Number(b)) => num_cmp(a, b),
        (Value::String(a), Value::String(b)) => Some(fold_cmp(a, b)),
        (Value::Number(a), Value::String(s)) => num_cmp(a, &as_number(s)?),
        (Value::String(s), Value::Number(b)) => num_cmp(&as_number(s)?, b),
        (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
        _ => None,
    }
}

/// Loose equality; arrays and objects compare member by member (without recursion).
fn loose_eq(l: &Value, r: &Value) -> bool {
    let mut stack = vec![(l, r)];
    while let Some((l, r)) = stack.pop() {
        let same = match (l, r) {
            (Value::Null, Value::Null) => true,
            (Value::Null, _) | (_, Value::Null) => false,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Bool(b), Value::String(s)) | (Value::String(s), Value::Bool(b)) => s
                .trim()
                .eq_ignore_ascii_case(if *b { "true" } else { "false" }),
            (Value::Array(a), Value::Array(b)) => {
                if a.len() != b.len() {
                    false
                } else {
                    stack.extend(a.iter().zip(b));
                    true
                }
            }
            (Value::Object(a), Value::Object(b)) => {
                if a.len() != b.len() {
                    false
                } else {
                    let mut ok = true;
                    for (k, v) in a {
                        match b.get(k) {
                            Some(w) => stack.push((v, w)),
                            None => {
                                ok = false;
                                break;
                            }
                        }
                    }
                    ok
                }
            }
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
                false
            }
            _ => loose_ord(l, r) == Some(Ordering::Equal),
        };
        if !same {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests;
