//! `_select` (#36): JMESPath evaluated under budgets.
//!
//! The expression is parsed by the `jmespath` crate (its recursive Pratt parser, so the text is
//! first checked by [`prescan`]: at most [`MAX_EXPR_BYTES`] bytes and [`MAX_NESTING`] levels of
//! brackets and chained operators), converted to [`Node`]s (at most [`MAX_DEPTH`] deep and
//! [`MAX_NODES`] nodes; unknown functions and wrong argument counts are found here, before the
//! API is called) and evaluated here rather than by the crate's interpreter, which has no bound
//! on recursion, time or memory. The evaluator:
//!
//! * reads the document in place ([`Val::Ref`]) and shares what it builds ([`Rc`]), so
//!   `[@,@]|[@,@]|…` costs a few pointers per step, not a copy;
//! * counts every step (a node evaluated, an element visited, a comparison, 64 bytes of a string
//!   scanned) against [`Limits::steps`], which bounds its CPU time;
//! * counts what it allocates (array slots, object entries, string bytes) against
//!   [`Limits::work_bytes`];
//! * measures the JSON text of the result before building it, against [`Limits::output_bytes`]
//!   (the sharing above makes a 120-byte expression describe gigabytes of text);
//! * recurses only as deep as the parsed expression (≤ [`MAX_DEPTH`]) and the values (≤
//!   [`MAX_VALUE_DEPTH`], checked).
//!
//! The semantics are those of the `jmespath` crate 0.5 (the JMESPath compliance suite it ships
//! passes, see the tests), with two differences a client can see: objects keep their members'
//! order (the document's, or the expression's for `{a: …, b: …}`), and a computed whole number
//! is written as an integer (`abs(\`-2\`)` is `2`, not `2.0`); `avg([])` is `null` as the
//! specification says (the crate fails).

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::rc::Rc;

use indexmap::IndexMap;
use jmespath::ast::{Ast, Comparator};
use serde_json::{Map, Number, Value};

/// Longest expression accepted (bytes).
pub const MAX_EXPR_BYTES: usize = 1024;
/// Nesting of the expression text: open brackets, parentheses and braces plus the operators
/// chained since the last `,` or `:` of each (what the parser recurses on).
pub const MAX_NESTING: usize = 64;
/// Depth of the parsed expression.
pub const MAX_DEPTH: usize = 128;
/// Nodes of the parsed expression.
pub const MAX_NODES: usize = 1024;
/// Depth of the values built (the document itself is at most 128 deep: serde_json's limit).
pub const MAX_VALUE_DEPTH: usize = 512;

/// The result's JSON text may be this many times `--max-response-bytes` (it is then cut to the
/// budget at item boundaries, with a note, like any result).
pub const OUTPUT_FACTOR: usize = 4;
/// Bytes the evaluation may allocate, in multiples of `--max-response-bytes`.
pub const WORK_FACTOR: usize = 16;
/// Steps per byte of `--max-response-bytes`.
pub const STEPS_FACTOR: u64 = 4;
/// The floors of the three budgets (for a small `--max-response-bytes`).
pub const MIN_OUTPUT_BYTES: usize = 64 * 1024;
pub const MIN_WORK_BYTES: usize = 16 << 20;
pub const MIN_STEPS: u64 = 1_000_000;

/// Bytes charged per array slot and per object entry (plus its key) built.
const SLOT_BYTES: usize = std::mem::size_of::<Val<'static>>();
const ENTRY_BYTES: usize = 64;

/// The budgets of one evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub steps: u64,
    pub work_bytes: usize,
    pub output_bytes: usize,
}

impl Limits {
    /// The budgets for a server whose results are cut at `max_response_bytes`.
    pub fn for_response(max_response_bytes: usize) -> Limits {
        Limits {
            steps: (max_response_bytes as u64)
                .saturating_mul(STEPS_FACTOR)
                .max(MIN_STEPS),
            work_bytes: max_response_bytes
                .saturating_mul(WORK_FACTOR)
                .max(MIN_WORK_BYTES),
            output_bytes: max_response_bytes
                .saturating_mul(OUTPUT_FACTOR)
                .max(MIN_OUTPUT_BYTES),
        }
    }
}

/// What kind of error (the compliance suite's names, plus the budgets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Syntax,
    /// A limit on the expression or on its evaluation.
    Limit,
    InvalidType,
    InvalidArity,
    /// A slice step of 0.
    InvalidValue,
    UnknownFunction,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectError {
    pub kind: ErrorKind,
    pub message: String,
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn err(kind: ErrorKind, message: impl Into<String>) -> SelectError {
    SelectError {
        kind,
        message: message.into(),
    }
}

type R<T> = Result<T, SelectError>;

/// Checks the text before the (recursive) parser sees it: its length, and an upper bound of
/// the parser's recursion and of the parsed depth: open `(`/`[`/`{` plus the operator
/// characters chained since the last `,` or `:` inside each. Quoted identifiers, raw strings
/// and JSON literals are skipped (with the lexer's own escape rule: `\` takes the next
/// character); a literal's JSON is parsed by serde_json, whose depth limit is 128.
pub fn prescan(expr: &str) -> R<()> {
    if expr.len() > MAX_EXPR_BYTES {
        return Err(err(
            ErrorKind::Limit,
            format!(
                "the expression is {} bytes, over the limit of {MAX_EXPR_BYTES} bytes",
                expr.len()
            ),
        ));
    }
    let b = expr.as_bytes();
    // The operators chained in each open bracket, the outermost first; their sum is the bound.
    let mut runs: Vec<usize> = vec![0];
    let mut total = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' | b'`' => {
                i += 1;
                while i < b.len() && b[i] != c {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => {
                if let Some(top) = runs.last_mut() {
                    *top += 1;
                }
                total += 1;
                runs.push(0);
            }
            b')' | b']' | b'}' if runs.len() > 1 => {
                total -= runs.pop().unwrap_or(0);
            }
            b',' | b':' => {
                if let Some(top) = runs.last_mut() {
                    total -= *top;
                    *top = 0;
                }
            }
            b'.' | b'|' | b'&' | b'!' | b'*' | b'?' | b'<' | b'>' | b'=' => {
                if let Some(top) = runs.last_mut() {
                    *top += 1;
                }
                total += 1;
            }
            _ => {}
        }
        if total > MAX_NESTING {
            return Err(err(
                ErrorKind::Limit,
                format!(
                    "the expression nests deeper than {MAX_NESTING} levels (brackets, parentheses, braces and chained operators such as `.`, `|`, `!`, `[]`) at byte {i}"
                ),
            ));
        }
        i += 1;
    }
    Ok(())
}

/// The built-in functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Func {
    Abs,
    Avg,
    Ceil,
    Contains,
    EndsWith,
    Floor,
    Join,
    Keys,
    Length,
    Map,
    Max,
    MaxBy,
    Merge,
    Min,
    MinBy,
    NotNull,
    Reverse,
    Sort,
    SortBy,
    StartsWith,
    Sum,
    ToArray,
    ToNumber,
    ToString,
    Type,
    Values,
}

impl Func {
    fn by_name(name: &str) -> Option<Func> {
        use Func::*;
        Some(match name {
            "abs" => Abs,
            "avg" => Avg,
            "ceil" => Ceil,
            "contains" => Contains,
            "ends_with" => EndsWith,
            "floor" => Floor,
            "join" => Join,
            "keys" => Keys,
            "length" => Length,
            "map" => Map,
            "max" => Max,
            "max_by" => MaxBy,
            "merge" => Merge,
            "min" => Min,
            "min_by" => MinBy,
            "not_null" => NotNull,
            "reverse" => Reverse,
            "sort" => Sort,
            "sort_by" => SortBy,
            "starts_with" => StartsWith,
            "sum" => Sum,
            "to_array" => ToArray,
            "to_number" => ToNumber,
            "to_string" => ToString,
            "type" => Type,
            "values" => Values,
            _ => return None,
        })
    }

    /// Arguments: how many, and whether more may follow.
    fn arity(self) -> (usize, bool) {
        use Func::*;
        match self {
            Merge | NotNull => (1, true),
            Contains | EndsWith | Join | Map | MaxBy | MinBy | SortBy | StartsWith => (2, false),
            _ => (1, false),
        }
    }

    fn name(self) -> &'static str {
        use Func::*;
        match self {
            Abs => "abs",
            Avg => "avg",
            Ceil => "ceil",
            Contains => "contains",
            EndsWith => "ends_with",
            Floor => "floor",
            Join => "join",
            Keys => "keys",
            Length => "length",
            Map => "map",
            Max => "max",
            MaxBy => "max_by",
            Merge => "merge",
            Min => "min",
            MinBy => "min_by",
            NotNull => "not_null",
            Reverse => "reverse",
            Sort => "sort",
            SortBy => "sort_by",
            StartsWith => "starts_with",
            Sum => "sum",
            ToArray => "to_array",
            ToNumber => "to_number",
            ToString => "to_string",
            Type => "type",
            Values => "values",
        }
    }
}

/// A parsed expression, as evaluated here.
#[derive(Debug)]
enum Node {
    Identity,
    Field(String),
    Index(i64),
    Literal(Value),
    Sub(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Condition(Box<Node>, Box<Node>),
    Compare(Comparator, Box<Node>, Box<Node>),
    ObjectValues(Box<Node>),
    Projection(Box<Node>, Box<Node>),
    Flatten(Box<Node>),
    MultiList(Vec<Node>),
    MultiHash(Vec<(String, Node)>),
    Function(Func, Vec<Node>),
    Expref(Box<Node>),
    Slice(Option<i64>, Option<i64>, i64),
}

/// A compiled `_select` expression.
#[derive(Debug)]
pub struct Selection {
    root: Node,
}

/// Checks and compiles `expr` (see the module doc).
pub fn compile(expr: &str) -> R<Selection> {
    prescan(expr)?;
    let ast = jmespath::parse(expr).map_err(|e| err(ErrorKind::Syntax, e.to_string()))?;
    let mut nodes = 0;
    let root = lower(&ast, 1, &mut nodes)?;
    Ok(Selection { root })
}

/// `ast` as [`Node`]s. Recursive (as deep as the parsed expression, which the text scan
/// bounds); the arms that build much are functions of their own, so that the frame repeated at
/// each level stays small, even in a debug build.
fn lower(ast: &Ast, depth: usize, nodes: &mut usize) -> R<Node> {
    if depth > MAX_DEPTH {
        return Err(limit_error(format!(
            "the parsed expression is more than {MAX_DEPTH} levels deep"
        )));
    }
    *nodes += 1;
    if *nodes > MAX_NODES {
        return Err(limit_error(format!(
            "the parsed expression has more than {MAX_NODES} nodes"
        )));
    }
    let d = depth + 1;
    Ok(match ast {
        Ast::Identity { .. } => Node::Identity,
        Ast::Field { name, .. } => Node::Field(name.clone()),
        Ast::Index { idx, .. } => Node::Index(i64::from(*idx)),
        Ast::Literal { value, .. } => lower_literal(value)?,
        Ast::Subexpr { lhs, rhs, .. } => Node::Sub(boxed(lhs, d, nodes)?, boxed(rhs, d, nodes)?),
        Ast::Or { lhs, rhs, .. } => Node::Or(boxed(lhs, d, nodes)?, boxed(rhs, d, nodes)?),
        Ast::And { lhs, rhs, .. } => Node::And(boxed(lhs, d, nodes)?, boxed(rhs, d, nodes)?),
        Ast::Not { node, .. } => Node::Not(boxed(node, d, nodes)?),
        Ast::Condition {
            predicate, then, ..
        } => Node::Condition(boxed(predicate, d, nodes)?, boxed(then, d, nodes)?),
        Ast::Comparison {
            comparator,
            lhs,
            rhs,
            ..
        } => Node::Compare(
            comparator.clone(),
            boxed(lhs, d, nodes)?,
            boxed(rhs, d, nodes)?,
        ),
        Ast::ObjectValues { node, .. } => Node::ObjectValues(boxed(node, d, nodes)?),
        Ast::Projection { lhs, rhs, .. } => {
            Node::Projection(boxed(lhs, d, nodes)?, boxed(rhs, d, nodes)?)
        }
        Ast::Flatten { node, .. } => Node::Flatten(boxed(node, d, nodes)?),
        Ast::Expref { ast, .. } => Node::Expref(boxed(ast, d, nodes)?),
        Ast::Slice {
            start, stop, step, ..
        } => Node::Slice(start.map(i64::from), stop.map(i64::from), i64::from(*step)),
        Ast::MultiList { elements, .. } => Node::MultiList(lower_all(elements, d, nodes)?),
        Ast::MultiHash { elements, .. } => lower_hash(elements, d, nodes)?,
        Ast::Function { name, args, .. } => lower_function(name, args, d, nodes)?,
    })
}

fn limit_error(message: String) -> SelectError {
    err(ErrorKind::Limit, message)
}

#[inline(never)]
fn boxed(ast: &Ast, depth: usize, nodes: &mut usize) -> R<Box<Node>> {
    lower(ast, depth, nodes).map(Box::new)
}

#[inline(never)]
fn lower_all(asts: &[Ast], depth: usize, nodes: &mut usize) -> R<Vec<Node>> {
    asts.iter().map(|a| lower(a, depth, nodes)).collect()
}

#[inline(never)]
fn lower_literal(value: &jmespath::Rcvar) -> R<Node> {
    serde_json::to_value(&**value)
        .map(Node::Literal)
        .map_err(|e| err(ErrorKind::Syntax, e.to_string()))
}

#[inline(never)]
fn lower_hash(pairs: &[jmespath::ast::KeyValuePair], depth: usize, nodes: &mut usize) -> R<Node> {
    let mut out = Vec::with_capacity(pairs.len());
    for kv in pairs {
        out.push((kv.key.clone(), lower(&kv.value, depth, nodes)?));
    }
    Ok(Node::MultiHash(out))
}

#[inline(never)]
fn lower_function(name: &str, args: &[Ast], depth: usize, nodes: &mut usize) -> R<Node> {
    let f = Func::by_name(name).ok_or_else(|| {
        err(
            ErrorKind::UnknownFunction,
            format!("unknown function `{name}()`"),
        )
    })?;
    let (n, variadic) = f.arity();
    if args.len() < n || (!variadic && args.len() > n) {
        return Err(err(
            ErrorKind::InvalidArity,
            format!(
                "`{name}()` takes {}{n} argument{}, got {}",
                if variadic { "at least " } else { "" },
                if n == 1 { "" } else { "s" },
                args.len()
            ),
        ));
    }
    Ok(Node::Function(f, lower_all(args, depth, nodes)?))
}

/// A value during evaluation: a part of the document (or of a literal), or one built here.
#[derive(Clone, Debug)]
enum Val<'a> {
    Ref(&'a Value),
    Null,
    Bool(bool),
    Num(Number),
    Str(Rc<str>),
    Arr(Rc<Vec<Val<'a>>>),
    Obj(Rc<IndexMap<String, Val<'a>>>),
    Expref(&'a Node),
}

/// An array's items, wherever they live.
#[derive(Clone, Copy)]
enum Items<'v, 'a> {
    Doc(&'a [Value]),
    Own(&'v [Val<'a>]),
}

impl<'a> Items<'_, 'a> {
    fn len(&self) -> usize {
        match self {
            Items::Doc(a) => a.len(),
            Items::Own(a) => a.len(),
        }
    }
    fn get(&self, i: usize) -> Option<Val<'a>> {
        match self {
            Items::Doc(a) => a.get(i).map(Val::Ref),
            Items::Own(a) => a.get(i).cloned(),
        }
    }
    fn iter(&self) -> impl Iterator<Item = Val<'a>> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// An object's members, wherever they live.
#[derive(Clone, Copy)]
enum Entries<'v, 'a> {
    Doc(&'a Map<String, Value>),
    Own(&'v IndexMap<String, Val<'a>>),
}

impl<'v, 'a> Entries<'v, 'a> {
    fn len(&self) -> usize {
        match self {
            Entries::Doc(m) => m.len(),
            Entries::Own(m) => m.len(),
        }
    }
    fn get(&self, k: &str) -> Option<Val<'a>> {
        match self {
            Entries::Doc(m) => m.get(k).map(Val::Ref),
            Entries::Own(m) => m.get(k).cloned(),
        }
    }
    fn iter(&self) -> Box<dyn Iterator<Item = (&'v str, Val<'a>)> + 'v>
    where
        'a: 'v,
    {
        match *self {
            Entries::Doc(m) => Box::new(m.iter().map(|(k, v)| (k.as_str(), Val::Ref(v)))),
            Entries::Own(m) => Box::new(m.iter().map(|(k, v)| (k.as_str(), v.clone()))),
        }
    }
}

/// What a value is, seen through a reference.
enum Kind<'v, 'a> {
    Null,
    Bool(bool),
    Num(&'v Number),
    Str(&'v str),
    Arr(Items<'v, 'a>),
    Obj(Entries<'v, 'a>),
    Expref(&'a Node),
}

impl<'a> Val<'a> {
    fn kind(&self) -> Kind<'_, 'a> {
        match self {
            Val::Ref(v) => match v {
                Value::Null => Kind::Null,
                Value::Bool(b) => Kind::Bool(*b),
                Value::Number(n) => Kind::Num(n),
                Value::String(s) => Kind::Str(s),
                Value::Array(a) => Kind::Arr(Items::Doc(a)),
                Value::Object(m) => Kind::Obj(Entries::Doc(m)),
            },
            Val::Null => Kind::Null,
            Val::Bool(b) => Kind::Bool(*b),
            Val::Num(n) => Kind::Num(n),
            Val::Str(s) => Kind::Str(s),
            Val::Arr(a) => Kind::Arr(Items::Own(a)),
            Val::Obj(m) => Kind::Obj(Entries::Own(m)),
            Val::Expref(n) => Kind::Expref(n),
        }
    }

    fn type_name(&self) -> &'static str {
        match self.kind() {
            Kind::Null => "null",
            Kind::Bool(_) => "boolean",
            Kind::Num(_) => "number",
            Kind::Str(_) => "string",
            Kind::Arr(_) => "array",
            Kind::Obj(_) => "object",
            Kind::Expref(_) => "expref",
        }
    }

    fn is_null(&self) -> bool {
        matches!(self.kind(), Kind::Null)
    }

    fn items(&self) -> Option<Items<'_, 'a>> {
        match self.kind() {
            Kind::Arr(a) => Some(a),
            _ => None,
        }
    }

    fn entries(&self) -> Option<Entries<'_, 'a>> {
        match self.kind() {
            Kind::Obj(m) => Some(m),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self.kind() {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self.kind() {
            Kind::Num(n) => n.as_f64(),
            _ => None,
        }
    }

    fn truthy(&self) -> bool {
        match self.kind() {
            Kind::Bool(b) => b,
            Kind::Str(s) => !s.is_empty(),
            Kind::Arr(a) => a.len() > 0,
            Kind::Obj(m) => m.len() > 0,
            Kind::Num(_) => true,
            Kind::Null | Kind::Expref(_) => false,
        }
    }

    fn field(&self, name: &str) -> Val<'a> {
        match self.kind() {
            Kind::Obj(m) => m.get(name).unwrap_or(Val::Null),
            _ => Val::Null,
        }
    }

    fn index(&self, i: i64) -> Val<'a> {
        let Some(a) = self.items() else {
            return Val::Null;
        };
        let len = a.len() as i64;
        let at = if i < 0 { len + i } else { i };
        if (0..len).contains(&at) {
            a.get(at as usize).unwrap_or(Val::Null)
        } else {
            Val::Null
        }
    }
}

/// A number from arithmetic: whole numbers (within 2^53) as integers.
fn number(x: f64) -> R<Val<'static>> {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        return Ok(Val::Num(Number::from(x as i64)));
    }
    Number::from_f64(x)
        .map(Val::Num)
        .ok_or_else(|| err(ErrorKind::InvalidValue, format!("{x} is not a JSON number")))
}

/// The crate's float equality (relative, so 0.7100000000000002 equals 0.71).
fn float_eq(a: f64, b: f64) -> bool {
    if a == b {
        true
    } else if !a.is_normal() || !b.is_normal() {
        (a - b).abs() < (f64::EPSILON * f64::MIN_POSITIVE)
    } else {
        (a - b).abs() / (a.abs() + b.abs()) < f64::EPSILON
    }
}

/// The crate's ordering: numbers and strings of the same type; anything else is equal.
fn order(a: &Val<'_>, b: &Val<'_>) -> Ordering {
    match (a.kind(), b.kind()) {
        (Kind::Str(x), Kind::Str(y)) => x.cmp(y),
        (Kind::Num(x), Kind::Num(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Less),
            _ => Ordering::Equal,
        },
        _ => Ordering::Equal,
    }
}

/// A function's arguments, and the type error naming one of them.
struct Args<'s, 'a> {
    f: Func,
    args: &'s [Val<'a>],
}

impl<'a> Args<'_, 'a> {
    /// Argument `i` (null when not given).
    fn get(&self, i: usize) -> Val<'a> {
        self.args.get(i).cloned().unwrap_or(Val::Null)
    }

    /// Argument `i` is not of the type the function takes.
    fn bad(&self, i: usize, expected: &str) -> SelectError {
        err(
            ErrorKind::InvalidType,
            format!(
                "`{}()` argument {} must be {expected}, got {}",
                self.f.name(),
                i + 1,
                self.args.get(i).map_or("nothing", Val::type_name)
            ),
        )
    }
}

struct Eval {
    steps: u64,
    work: usize,
    limits: Limits,
}

impl Eval {
    fn tick(&mut self, n: u64) -> R<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.limits.steps {
            return Err(err(
                ErrorKind::Limit,
                format!(
                    "evaluating it took more than {} steps, the limit (a step is a node of the expression evaluated or an element visited); select from less data or with fewer operations",
                    self.limits.steps
                ),
            ));
        }
        Ok(())
    }

    /// Work for scanning `bytes` of text.
    fn scan(&mut self, bytes: usize) -> R<()> {
        self.tick(1 + (bytes / 64) as u64)
    }

    fn alloc(&mut self, bytes: usize) -> R<()> {
        self.work = self.work.saturating_add(bytes);
        if self.work > self.limits.work_bytes {
            return Err(err(
                ErrorKind::Limit,
                format!(
                    "evaluating it built more than {} bytes of intermediate values, the limit; select from less data",
                    self.limits.work_bytes
                ),
            ));
        }
        Ok(())
    }

    fn array<'a>(&mut self, items: Vec<Val<'a>>) -> Val<'a> {
        Val::Arr(Rc::new(items))
    }

    /// One node on `data`. A thin dispatcher: the arms that hold locals are functions of their
    /// own, so that the frame repeated at each level of the expression stays small (the
    /// recursion is as deep as the expression, at most [`MAX_DEPTH`]).
    fn eval<'a>(&mut self, node: &'a Node, data: &Val<'a>) -> R<Val<'a>> {
        self.tick(1)?;
        match node {
            Node::Identity => Ok(data.clone()),
            Node::Field(name) => Ok(data.field(name)),
            Node::Index(i) => Ok(data.index(*i)),
            Node::Literal(v) => Ok(Val::Ref(v)),
            Node::Sub(l, r) => {
                let x = self.eval(l, data)?;
                self.eval(r, &x)
            }
            Node::Or(l, r) | Node::And(l, r) => {
                self.or_and(matches!(node, Node::Or(..)), l, r, data)
            }
            Node::Not(n) => Ok(Val::Bool(!self.eval(n, data)?.truthy())),
            Node::Condition(p, then) => {
                if self.eval(p, data)?.truthy() {
                    self.eval(then, data)
                } else {
                    Ok(Val::Null)
                }
            }
            Node::Compare(c, l, r) => self.comparison(c, l, r, data),
            Node::ObjectValues(n) => self.object_values(n, data),
            Node::Projection(l, r) => self.projection(l, r, data),
            Node::Flatten(n) => self.flatten(n, data),
            Node::MultiList(elements) => self.multi_list(elements, data),
            Node::MultiHash(pairs) => self.multi_hash(pairs, data),
            Node::Function(f, args) => self.function(*f, args, data),
            Node::Expref(n) => Ok(Val::Expref(n)),
            Node::Slice(start, stop, step) => self.slice(*start, *stop, *step, data),
        }
    }

    #[inline(never)]
    fn or_and<'a>(&mut self, or: bool, l: &'a Node, r: &'a Node, data: &Val<'a>) -> R<Val<'a>> {
        let x = self.eval(l, data)?;
        if x.truthy() == or {
            Ok(x)
        } else {
            self.eval(r, data)
        }
    }

    #[inline(never)]
    fn comparison<'a>(
        &mut self,
        c: &Comparator,
        l: &'a Node,
        r: &'a Node,
        data: &Val<'a>,
    ) -> R<Val<'a>> {
        let x = self.eval(l, data)?;
        let y = self.eval(r, data)?;
        self.compare(c, &x, &y)
    }

    #[inline(never)]
    fn object_values<'a>(&mut self, n: &'a Node, data: &Val<'a>) -> R<Val<'a>> {
        let x = self.eval(n, data)?;
        Ok(match x.entries() {
            Some(m) => {
                self.tick(m.len() as u64)?;
                self.alloc(m.len() * SLOT_BYTES)?;
                let out = m.iter().map(|(_, v)| v).collect();
                self.array(out)
            }
            None => Val::Null,
        })
    }

    #[inline(never)]
    fn projection<'a>(&mut self, l: &'a Node, r: &'a Node, data: &Val<'a>) -> R<Val<'a>> {
        let x = self.eval(l, data)?;
        let Some(items) = x.items() else {
            return Ok(Val::Null);
        };
        self.alloc(items.len() * SLOT_BYTES)?;
        let mut out = Vec::new();
        for item in items.iter() {
            let y = self.eval(r, &item)?;
            if !y.is_null() {
                out.push(y);
            }
        }
        Ok(self.array(out))
    }

    #[inline(never)]
    fn flatten<'a>(&mut self, n: &'a Node, data: &Val<'a>) -> R<Val<'a>> {
        let x = self.eval(n, data)?;
        let Some(items) = x.items() else {
            return Ok(Val::Null);
        };
        let mut out = Vec::new();
        for item in items.iter() {
            self.tick(1)?;
            match item.items() {
                Some(inner) => {
                    self.tick(inner.len() as u64)?;
                    self.alloc(inner.len() * SLOT_BYTES)?;
                    out.extend(inner.iter());
                }
                None => {
                    self.alloc(SLOT_BYTES)?;
                    out.push(item.clone());
                }
            }
        }
        Ok(self.array(out))
    }

    #[inline(never)]
    fn multi_list<'a>(&mut self, elements: &'a [Node], data: &Val<'a>) -> R<Val<'a>> {
        if data.is_null() {
            return Ok(Val::Null);
        }
        self.alloc(elements.len() * SLOT_BYTES)?;
        let mut out = Vec::with_capacity(elements.len());
        for e in elements {
            out.push(self.eval(e, data)?);
        }
        Ok(self.array(out))
    }

    #[inline(never)]
    fn multi_hash<'a>(&mut self, pairs: &'a [(String, Node)], data: &Val<'a>) -> R<Val<'a>> {
        if data.is_null() {
            return Ok(Val::Null);
        }
        let mut out = IndexMap::with_capacity(pairs.len());
        for (k, e) in pairs {
            self.alloc(ENTRY_BYTES + k.len())?;
            let v = self.eval(e, data)?;
            out.insert(k.clone(), v);
        }
        Ok(Val::Obj(Rc::new(out)))
    }

    #[inline(never)]
    fn function<'a>(&mut self, f: Func, args: &'a [Node], data: &Val<'a>) -> R<Val<'a>> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.eval(a, data)?);
        }
        self.call(f, &vals)
    }

    #[inline(never)]
    fn slice<'a>(
        &mut self,
        start: Option<i64>,
        stop: Option<i64>,
        step: i64,
        data: &Val<'a>,
    ) -> R<Val<'a>> {
        if step == 0 {
            return Err(err(ErrorKind::InvalidValue, "a slice step cannot be 0"));
        }
        let Some(items) = data.items() else {
            return Ok(Val::Null);
        };
        let picked = slice(items.len() as i64, start, stop, step);
        self.tick(picked.len() as u64)?;
        self.alloc(picked.len() * SLOT_BYTES)?;
        let out = picked.into_iter().filter_map(|i| items.get(i)).collect();
        Ok(self.array(out))
    }

    fn compare<'a>(&mut self, c: &Comparator, x: &Val<'a>, y: &Val<'a>) -> R<Val<'a>> {
        Ok(match c {
            Comparator::Equal => Val::Bool(self.equal(x, y, 0)?),
            Comparator::NotEqual => Val::Bool(!self.equal(x, y, 0)?),
            _ => {
                if !(matches!(x.kind(), Kind::Num(_)) && matches!(y.kind(), Kind::Num(_))) {
                    return Ok(Val::Null);
                }
                let o = order(x, y);
                Val::Bool(match c {
                    Comparator::LessThan => o == Ordering::Less,
                    Comparator::LessThanEqual => o != Ordering::Greater,
                    Comparator::GreaterThan => o == Ordering::Greater,
                    _ => o != Ordering::Less,
                })
            }
        })
    }

    /// Deep equality (the crate's: numbers by [`float_eq`], objects whatever their order).
    fn equal(&mut self, x: &Val<'_>, y: &Val<'_>, depth: usize) -> R<bool> {
        self.tick(1)?;
        if depth > MAX_VALUE_DEPTH {
            return Err(too_deep());
        }
        Ok(match (x.kind(), y.kind()) {
            (Kind::Null, Kind::Null) => true,
            (Kind::Bool(a), Kind::Bool(b)) => a == b,
            (Kind::Num(a), Kind::Num(b)) => match (a.as_f64(), b.as_f64()) {
                (Some(a), Some(b)) => float_eq(a, b),
                _ => false,
            },
            (Kind::Str(a), Kind::Str(b)) => {
                self.scan(a.len().min(b.len()))?;
                a == b
            }
            (Kind::Arr(a), Kind::Arr(b)) => {
                if same_items(a, b) {
                    return Ok(true);
                }
                if a.len() != b.len() {
                    return Ok(false);
                }
                for i in 0..a.len() {
                    let (Some(p), Some(q)) = (a.get(i), b.get(i)) else {
                        return Ok(false);
                    };
                    if !self.equal(&p, &q, depth + 1)? {
                        return Ok(false);
                    }
                }
                true
            }
            (Kind::Obj(a), Kind::Obj(b)) => {
                if same_entries(a, b) {
                    return Ok(true);
                }
                if a.len() != b.len() {
                    return Ok(false);
                }
                for (k, p) in a.iter() {
                    let Some(q) = b.get(k) else {
                        return Ok(false);
                    };
                    if !self.equal(&p, &q, depth + 1)? {
                        return Ok(false);
                    }
                }
                true
            }
            (Kind::Expref(a), Kind::Expref(b)) => std::ptr::eq(a, b),
            _ => false,
        })
    }

    #[inline(never)]
    fn call<'a>(&mut self, f: Func, args: &[Val<'a>]) -> R<Val<'a>> {
        use Func::*;
        let args = Args { f, args };
        let a0 = args.get(0);
        Ok(match f {
            Abs | Ceil | Floor => self.rounded(f, &args)?,
            Avg | Sum => self.total(f, &args)?,
            Contains => self.contains(&args)?,
            EndsWith | StartsWith => self.affix(f, &args)?,
            Join => self.join(&args)?,
            Keys | Values => self.keys_or_values(f, &args)?,
            Length => self.length(&args)?,
            Map => self.map(&args)?,
            Max | Min => self.extreme(f, &args)?,
            MaxBy | MinBy | SortBy => self.by_key(f, &args)?,
            Merge => self.merge(&args)?,
            NotNull => args
                .args
                .iter()
                .find(|a| !a.is_null())
                .cloned()
                .unwrap_or(Val::Null),
            Reverse => self.reverse(&args)?,
            Sort => self.sort(&args)?,
            ToArray => match a0.kind() {
                Kind::Arr(_) => a0.clone(),
                _ => {
                    self.alloc(SLOT_BYTES)?;
                    self.array(vec![a0.clone()])
                }
            },
            ToNumber => match a0.kind() {
                Kind::Num(_) => a0.clone(),
                Kind::Str(s) => {
                    self.scan(s.len())?;
                    serde_json::from_str::<Number>(s).map_or(Val::Null, Val::Num)
                }
                _ => Val::Null,
            },
            ToString => self.stringify(&args)?,
            Type => Val::Str(a0.type_name().into()),
        })
    }

    /// `abs`, `ceil`, `floor`: integers stay exact.
    #[inline(never)]
    fn rounded<'a>(&mut self, f: Func, args: &Args<'_, 'a>) -> R<Val<'a>> {
        use Func::*;
        let a0 = args.get(0);
        let Kind::Num(n) = a0.kind() else {
            return Err(args.bad(0, "a number"));
        };
        // Integers stay exact.
        if let Some(i) = n.as_i64() {
            return Ok(match f {
                Abs => Val::Num(Number::from(i.unsigned_abs())),
                _ => a0.clone(),
            });
        }
        if n.is_u64() {
            return Ok(a0.clone());
        }
        let x = n.as_f64().ok_or_else(|| args.bad(0, "a number"))?;
        number(match f {
            Abs => x.abs(),
            Ceil => x.ceil(),
            _ => x.floor(),
        })
    }

    /// `avg`, `sum`.
    #[inline(never)]
    fn total<'a>(&mut self, f: Func, args: &Args<'_, 'a>) -> R<Val<'a>> {
        use Func::*;
        let a0 = args.get(0);
        let nums = self
            .numbers(&a0)?
            .ok_or_else(|| args.bad(0, "an array of numbers"))?;
        let total: f64 = nums.iter().sum();
        Ok(if f == Sum {
            number(total)?
        } else if nums.is_empty() {
            Val::Null
        } else {
            number(total / nums.len() as f64)?
        })
    }

    /// `contains`: an item of an array (by JMESPath equality), or a substring.
    #[inline(never)]
    fn contains<'a>(&mut self, args: &Args<'_, 'a>) -> R<Val<'a>> {
        let a0 = args.get(0);
        let needle = args.get(1);
        Ok(match a0.kind() {
            Kind::Arr(items) => {
                let mut found = false;
                for x in items.iter() {
                    if self.equal(&x, &needle, 0)? {
                        found = true;
                        break;
                    }
                }
                Val::Bool(found)
            }
            Kind::Str(s) => match needle.as_str() {
                Some(n) => {
                    self.scan(s.len())?;
                    Val::Bool(s.contains(n))
                }
                None => Val::Bool(false),
            },
            _ => return Err(args.bad(0, "an array or a string")),
        })
    }

    /// `ends_with`, `starts_with`.
    #[inline(never)]
    fn affix<'a>(&mut self, f: Func, args: &Args<'_, 'a>) -> R<Val<'a>> {
        use Func::*;
        let a0 = args.get(0);
        let s = a0.as_str().ok_or_else(|| args.bad(0, "a string"))?;
        let a1 = args.get(1);
        let t = a1.as_str().ok_or_else(|| args.bad(1, "a string"))?;
        self.scan(t.len())?;
        Ok(Val::Bool(if f == EndsWith {
            s.ends_with(t)
        } else {
            s.starts_with(t)
        }))
    }

    /// `join`: the strings of an array with a glue string between.
    #[inline(never)]
    fn join<'a>(&mut self, args: &Args<'_, 'a>) -> R<Val<'a>> {
        let a0 = args.get(0);
        let glue = a0.as_str().ok_or_else(|| args.bad(0, "a string"))?;
        let a1 = args.get(1);
        let items = a1
            .items()
            .ok_or_else(|| args.bad(1, "an array of strings"))?;
        let mut out = String::new();
        for (i, x) in items.iter().enumerate() {
            let s = x
                .as_str()
                .ok_or_else(|| args.bad(1, "an array of strings"))?
                .to_string();
            let add = s.len() + if i > 0 { glue.len() } else { 0 };
            self.scan(add)?;
            self.alloc(add)?;
            if i > 0 {
                out.push_str(glue);
            }
            out.push_str(&s);
        }
        Ok(Val::Str(out.into()))
    }

    /// `keys`, `values`: of an object, in its order.
    #[inline(never)]
    fn keys_or_values<'a>(&mut self, f: Func, args: &Args<'_, 'a>) -> R<Val<'a>> {
        use Func::*;
        let a0 = args.get(0);
        let m = a0.entries().ok_or_else(|| args.bad(0, "an object"))?;
        self.tick(m.len() as u64)?;
        self.alloc(m.len() * SLOT_BYTES)?;
        let mut out = Vec::with_capacity(m.len());
        for (k, v) in m.iter() {
            if f == Keys {
                self.alloc(k.len())?;
                out.push(Val::Str(k.into()));
            } else {
                out.push(v);
            }
        }
        Ok(self.array(out))
    }

    /// `length`: of an array, an object, or a string (in characters).
    #[inline(never)]
    fn length<'a>(&mut self, args: &Args<'_, 'a>) -> R<Val<'a>> {
        let a0 = args.get(0);
        Ok(match a0.kind() {
            Kind::Arr(a) => Val::Num(Number::from(a.len())),
            Kind::Obj(m) => Val::Num(Number::from(m.len())),
            Kind::Str(s) => {
                self.scan(s.len())?;
                Val::Num(Number::from(s.chars().count()))
            }
            _ => return Err(args.bad(0, "an array, an object or a string")),
        })
    }

    /// `map`: an expression over each item of an array.
    #[inline(never)]
    fn map<'a>(&mut self, args: &Args<'_, 'a>) -> R<Val<'a>> {
        let a0 = args.get(0);
        let Val::Expref(e) = a0 else {
            return Err(args.bad(0, "an expression (`&expr`)"));
        };
        let a1 = args.get(1);
        let items = a1.items().ok_or_else(|| args.bad(1, "an array"))?;
        self.alloc(items.len() * SLOT_BYTES)?;
        let mut out = Vec::with_capacity(items.len());
        for x in items.iter() {
            out.push(self.eval(e, &x)?);
        }
        Ok(self.array(out))
    }

    /// `max`, `min`: of an array of numbers or of strings.
    #[inline(never)]
    fn extreme<'a>(&mut self, f: Func, args: &Args<'_, 'a>) -> R<Val<'a>> {
        use Func::*;
        let a0 = args.get(0);
        let items = a0
            .items()
            .ok_or_else(|| args.bad(0, "an array of numbers or of strings"))?;
        if !self.homogeneous(items)? {
            return Err(args.bad(0, "an array of numbers or of strings"));
        }
        let mut best: Option<Val<'a>> = None;
        for x in items.iter() {
            self.tick(1)?;
            best = Some(match best {
                None => x,
                // std's max keeps the second of equals, min the first (as the crate).
                Some(b) => {
                    let o = order(&x, &b);
                    if (f == Max && o != Ordering::Less) || (f == Min && o == Ordering::Less) {
                        x
                    } else {
                        b
                    }
                }
            });
        }
        Ok(best.unwrap_or(Val::Null))
    }

    /// `max_by`, `min_by`, `sort_by`: items ordered by an expression giving numbers or strings.
    #[inline(never)]
    fn by_key<'a>(&mut self, f: Func, args: &Args<'_, 'a>) -> R<Val<'a>> {
        use Func::*;
        let a0 = args.get(0);
        let items = a0.items().ok_or_else(|| args.bad(0, "an array"))?;
        let Val::Expref(e) = args.get(1) else {
            return Err(args.bad(1, "an expression (`&expr`)"));
        };
        self.alloc(items.len() * 2 * SLOT_BYTES)?;
        let mut keyed: Vec<(Val<'a>, Val<'a>)> = Vec::with_capacity(items.len());
        let mut first_type = None;
        for (i, x) in items.iter().enumerate() {
            let k = self.eval(e, &x)?;
            let t = k.type_name();
            match first_type {
                None if t == "number" || t == "string" => first_type = Some(t),
                None => {
                    return Err(err(
                        ErrorKind::InvalidType,
                        format!(
                            "`{}()`: the expression must give numbers or strings, got {t}",
                            f.name()
                        ),
                    ));
                }
                Some(ft) if ft != t => {
                    return Err(err(
                        ErrorKind::InvalidType,
                        format!(
                            "`{}()`: the expression must give values of one type: {ft} for the first item, {t} for item {}",
                            f.name(),
                            i + 1
                        ),
                    ));
                }
                Some(_) => {}
            }
            keyed.push((x, k));
        }
        if f == SortBy {
            self.charge_sort(keyed.iter().map(|(_, k)| k))?;
            keyed.sort_by(|a, b| order(&a.1, &b.1));
            let out = keyed.into_iter().map(|(x, _)| x).collect();
            return Ok(self.array(out));
        }
        let mut best: Option<(Val<'a>, Val<'a>)> = None;
        for (x, k) in keyed {
            best = Some(match best {
                None => (x, k),
                Some((bx, bk)) => {
                    let o = order(&k, &bk);
                    if (f == MaxBy && o == Ordering::Greater) || (f == MinBy && o == Ordering::Less)
                    {
                        (x, k)
                    } else {
                        (bx, bk)
                    }
                }
            });
        }
        Ok(best.map_or(Val::Null, |(x, _)| x))
    }

    /// `merge`: objects, later members replacing earlier ones.
    #[inline(never)]
    fn merge<'a>(&mut self, args: &Args<'_, 'a>) -> R<Val<'a>> {
        let mut out: IndexMap<String, Val<'a>> = IndexMap::new();
        for (i, a) in args.args.iter().enumerate() {
            let m = a.entries().ok_or_else(|| args.bad(i, "an object"))?;
            self.tick(m.len() as u64)?;
            for (k, v) in m.iter() {
                self.alloc(ENTRY_BYTES + k.len())?;
                out.insert(k.to_string(), v);
            }
        }
        Ok(Val::Obj(Rc::new(out)))
    }

    /// `reverse`: an array or a string.
    #[inline(never)]
    fn reverse<'a>(&mut self, args: &Args<'_, 'a>) -> R<Val<'a>> {
        let a0 = args.get(0);
        Ok(match a0.kind() {
            Kind::Arr(items) => {
                self.tick(items.len() as u64)?;
                self.alloc(items.len() * SLOT_BYTES)?;
                let mut out: Vec<Val<'a>> = items.iter().collect();
                out.reverse();
                self.array(out)
            }
            Kind::Str(s) => {
                self.scan(s.len())?;
                self.alloc(s.len())?;
                Val::Str(s.chars().rev().collect::<String>().into())
            }
            _ => return Err(args.bad(0, "an array or a string")),
        })
    }

    /// `sort`: an array of numbers or of strings.
    #[inline(never)]
    fn sort<'a>(&mut self, args: &Args<'_, 'a>) -> R<Val<'a>> {
        let a0 = args.get(0);
        let items = a0
            .items()
            .ok_or_else(|| args.bad(0, "an array of numbers or of strings"))?;
        if !self.homogeneous(items)? {
            return Err(args.bad(0, "an array of numbers or of strings"));
        }
        self.alloc(items.len() * SLOT_BYTES)?;
        let mut out: Vec<Val<'a>> = items.iter().collect();
        self.charge_sort(out.iter())?;
        out.sort_by(order);
        Ok(self.array(out))
    }

    /// `to_string`: strings as they are, anything else as JSON text.
    #[inline(never)]
    fn stringify<'a>(&mut self, args: &Args<'_, 'a>) -> R<Val<'a>> {
        let a0 = args.get(0);
        Ok(match a0.kind() {
            Kind::Str(_) => a0.clone(),
            Kind::Expref(_) => {
                return Err(args.bad(
                    0,
                    "an object, an array, a boolean, a number, a string or null",
                ));
            }
            _ => {
                let room = self.limits.work_bytes.saturating_sub(self.work);
                let size = self.json_size(&a0, room)?.unwrap_or(room + 1);
                self.alloc(size)?;
                let text = serde_json::to_string(&self.json_of(&a0, 0)?)
                    .map_err(|e| err(ErrorKind::InvalidValue, e.to_string()))?;
                Val::Str(text.into())
            }
        })
    }

    /// The numbers of an array of numbers (`None`: not one).
    fn numbers(&mut self, v: &Val<'_>) -> R<Option<Vec<f64>>> {
        let Some(items) = v.items() else {
            return Ok(None);
        };
        self.tick(items.len() as u64)?;
        Ok(items.iter().map(|x| x.as_f64()).collect())
    }

    /// Whether an array holds only numbers or only strings (or nothing).
    fn homogeneous(&mut self, items: Items<'_, '_>) -> R<bool> {
        self.tick(items.len() as u64)?;
        let Some(first) = items.get(0) else {
            return Ok(true);
        };
        let t = first.type_name();
        Ok((t == "number" || t == "string") && items.iter().all(|x| x.type_name() == t))
    }

    /// Charges a sort of `keys` up front: n·log2(n) comparisons, each scanning the shorter
    /// string.
    fn charge_sort<'v, 'a: 'v>(&mut self, keys: impl Iterator<Item = &'v Val<'a>>) -> R<()> {
        let mut n = 0u64;
        let mut bytes = 0u64;
        for k in keys {
            n += 1;
            bytes += k.as_str().map_or(0, str::len) as u64;
        }
        let log = 64 - n.leading_zeros() as u64;
        self.tick((n + bytes / 64).saturating_mul(log.max(1)))
    }

    /// The length of `v`'s JSON text, or `None` past `max` bytes (it stops there: at most
    /// about `max` steps).
    fn json_size(&mut self, v: &Val<'_>, max: usize) -> R<Option<usize>> {
        let mut size = 0usize;
        self.size_of(v, max, &mut size, 0)?;
        Ok((size <= max).then_some(size))
    }

    fn size_of(&mut self, v: &Val<'_>, max: usize, size: &mut usize, depth: usize) -> R<()> {
        if depth > MAX_VALUE_DEPTH {
            return Err(too_deep());
        }
        self.tick(1)?;
        match v.kind() {
            Kind::Null => *size += 4,
            Kind::Bool(b) => *size += 4 + usize::from(!b),
            Kind::Num(n) => {
                let mut c = Counter(0);
                let _ = write!(c, "{n}");
                *size += c.0;
            }
            Kind::Str(s) => {
                self.scan(s.len())?;
                *size += string_size(s);
            }
            Kind::Expref(_) => *size += EXPREF.len() + 2,
            Kind::Arr(items) => {
                *size += 2 + items.len().saturating_sub(1);
                for x in items.iter() {
                    if *size > max {
                        break;
                    }
                    self.size_of(&x, max, size, depth + 1)?;
                }
            }
            Kind::Obj(m) => {
                *size += 2 + m.len().saturating_sub(1);
                for (k, x) in m.iter() {
                    if *size > max {
                        break;
                    }
                    *size += string_size(k) + 1;
                    self.size_of(&x, max, size, depth + 1)?;
                }
            }
        }
        Ok(())
    }

    fn json_of(&mut self, v: &Val<'_>, depth: usize) -> R<Value> {
        if depth > MAX_VALUE_DEPTH {
            return Err(too_deep());
        }
        if let Val::Ref(x) = v {
            // A part of the document (at most 128 deep) or of a literal: one copy.
            return Ok((*x).clone());
        }
        Ok(match v.kind() {
            Kind::Null => Value::Null,
            Kind::Bool(b) => Value::Bool(b),
            Kind::Num(n) => Value::Number(n.clone()),
            Kind::Str(s) => Value::String(s.to_string()),
            Kind::Expref(_) => Value::String(EXPREF.into()),
            Kind::Arr(items) => {
                let mut out = Vec::with_capacity(items.len());
                for x in items.iter() {
                    out.push(self.json_of(&x, depth + 1)?);
                }
                Value::Array(out)
            }
            Kind::Obj(m) => {
                let mut out = Map::with_capacity(m.len());
                for (k, x) in m.iter() {
                    out.insert(k.to_string(), self.json_of(&x, depth + 1)?);
                }
                Value::Object(out)
            }
        })
    }
}

/// How an expression reference is written in a result (the crate writes its AST's debug text).
const EXPREF: &str = "<expression>";

fn too_deep() -> SelectError {
    err(
        ErrorKind::Limit,
        format!("it builds values nested deeper than {MAX_VALUE_DEPTH} levels"),
    )
}

fn same_items(a: Items<'_, '_>, b: Items<'_, '_>) -> bool {
    match (a, b) {
        (Items::Doc(x), Items::Doc(y)) => std::ptr::eq(x, y),
        (Items::Own(x), Items::Own(y)) => std::ptr::eq(x, y),
        _ => false,
    }
}

fn same_entries(a: Entries<'_, '_>, b: Entries<'_, '_>) -> bool {
    match (a, b) {
        (Entries::Doc(x), Entries::Doc(y)) => std::ptr::eq(x, y),
        (Entries::Own(x), Entries::Own(y)) => std::ptr::eq(x, y),
        _ => false,
    }
}

/// Counts the bytes written to it.
struct Counter(usize);

impl std::fmt::Write for Counter {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

/// The length of `s` as a JSON string (serde_json's escapes).
fn string_size(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// The indices a slice picks (the crate's rules, in i64 so that no endpoint overflows).
fn slice(len: i64, start: Option<i64>, stop: Option<i64>, step: i64) -> Vec<usize> {
    let mut out = Vec::new();
    if len == 0 {
        return out;
    }
    let adjust = |end: i64| -> i64 {
        if end < 0 {
            let e = end + len;
            if e >= 0 {
                e
            } else if step < 0 {
                -1
            } else {
                0
            }
        } else if end < len {
            end
        } else if step < 0 {
            len - 1
        } else {
            len
        }
    };
    let a = match start {
        Some(s) => adjust(s),
        None if step < 0 => len - 1,
        None => 0,
    };
    let b = match stop {
        Some(s) => adjust(s),
        None if step < 0 => -1,
        None => len,
    };
    let mut i = a;
    if step > 0 {
        while i < b {
            out.push(i as usize);
            i += step;
        }
    } else {
        while i > b {
            out.push(i as usize);
            i += step;
        }
    }
    out
}

impl Selection {
    /// The selection applied to `doc`, within `limits`.
    pub fn search(&self, doc: &Value, limits: Limits) -> R<Value> {
        let mut ev = Eval {
            steps: 0,
            work: 0,
            limits,
        };
        let out = ev.eval(&self.root, &Val::Ref(doc))?;
        if ev.json_size(&out, limits.output_bytes)?.is_none() {
            return Err(err(
                ErrorKind::Limit,
                format!(
                    "its result is over {} bytes of JSON, the limit ({OUTPUT_FACTOR} times --max-response-bytes); select fewer items or fields",
                    limits.output_bytes
                ),
            ));
        }
        ev.json_of(&out, 0)
    }
}

#[cfg(test)]
mod tests;
