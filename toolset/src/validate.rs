//! Argument validation against a tool's inputSchema, with messages a model can act on.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::suggest;

/// Why a schema could not be compiled into a validator (e.g. a regex the engine rejects).
pub type SchemaCompileError = jsonschema::ValidationError<'static>;

/// A lazily compiled validator (compiled once, on first use or by a warm-up task).
#[derive(Default)]
pub struct LazyValidator {
    cell: OnceLock<Result<jsonschema::Validator, SchemaCompileError>>,
}

impl LazyValidator {
    pub fn get(
        &self,
        schema: &Map<String, Value>,
    ) -> &Result<jsonschema::Validator, SchemaCompileError> {
        self.cell.get_or_init(|| compile(schema))
    }
}

/// Backtracking steps one `pattern` match may take (fancy-regex counts them): a pattern with
/// nested quantifiers over a long argument fails its check instead of holding a worker for
/// minutes.
pub const PATTERN_BACKTRACK_LIMIT: usize = 100_000;

/// The keyword a `pattern` that needs a backtracking engine is checked under instead (by
/// [`BoundedPattern`]): patterns the linear-time engine compiles stay `pattern`.
const BOUNDED_PATTERN: &str = "x-openapi-mcp-bounded-pattern";

/// Longest string a backtracking pattern is matched against; longer strings fail the check. A
/// lookbehind with nested quantifiers (`(?<=(a+)+)b`) is quadratic or worse in the input: over
/// 100 KB it held a worker for more than a minute.
pub const BOUNDED_PATTERN_MAX_LEN: usize = 4 * 1024;

/// A linear-time `pattern` whose compiled automaton can hold this many states at once (see
/// [`pattern_weight`]) and is not anchored at the start is heavy: an unanchored search starts a
/// thread at every position, so its cost grows with the string's length times this weight.
const HEAVY_PATTERN_WEIGHT: u64 = 4_096;

/// Work allowed for one heavy pattern match (string length × weight): strings longer than
/// `PATTERN_STEP_BUDGET / weight` bytes (at least 64, at most [`BOUNDED_PATTERN_MAX_LEN`]) fail
/// the check instead of being searched. `\xEB[a-\xEB]{13464}` against a few KB took 3.5 s of CPU
/// (fuzz target `validate_args`).
const PATTERN_STEP_BUDGET: u64 = 20_000_000;

/// An upper bound of the automaton states `pattern` compiles to, from its syntax tree (counted
/// repetitions multiply, a Unicode class counts 4 per range for its UTF-8 forms), and whether it
/// is anchored at the start; `None` when the `regex` syntax does not parse it.
fn pattern_weight(pattern: &str) -> Option<(u64, bool)> {
    use regex_syntax::hir::{Class, Hir, HirKind, Look};
    fn weight(h: &Hir) -> u64 {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => 1,
            HirKind::Literal(l) => l.0.len() as u64,
            HirKind::Class(Class::Unicode(c)) => 4 * c.ranges().len() as u64,
            HirKind::Class(Class::Bytes(c)) => c.ranges().len() as u64,
            HirKind::Repetition(r) => {
                let times = r.max.unwrap_or(r.min.saturating_add(1)).max(1);
                weight(&r.sub).saturating_mul(u64::from(times))
            }
            HirKind::Capture(c) => weight(&c.sub),
            HirKind::Concat(v) | HirKind::Alternation(v) => {
                v.iter().map(weight).fold(0, u64::saturating_add)
            }
        }
    }
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    // A Unicode word boundary keeps the linear engine off its DFA for any string with a
    // non-ASCII character: its slower engine costs the string's length times the automaton's
    // size, anchored or not, so such a pattern weighs as much as an unanchored heavy one.
    let unicode_word = hir.properties().look_set().contains_word_unicode();
    let anchored = hir.properties().look_set_prefix().contains(Look::Start) && !unicode_word;
    let weight = weight(&hir);
    Some((
        if unicode_word {
            weight.saturating_mul(64).max(HEAVY_PATTERN_WEIGHT + 1)
        } else {
            weight
        },
        anchored,
    ))
}

/// The longest string a heavy `pattern` is searched in, or `None` for a pattern that is not
/// heavy.
fn heavy_pattern_max_len(pattern: &str) -> Option<usize> {
    let (weight, anchored) = pattern_weight(pattern)?;
    if anchored || weight <= HEAVY_PATTERN_WEIGHT {
        return None;
    }
    let len = (PATTERN_STEP_BUDGET / weight).clamp(64, BOUNDED_PATTERN_MAX_LEN as u64);
    Some(usize::try_from(len).unwrap_or(BOUNDED_PATTERN_MAX_LEN))
}

fn options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::draft202012::options()
        .should_validate_formats(false)
        .with_pattern_options(
            jsonschema::PatternOptions::fancy_regex().backtrack_limit(PATTERN_BACKTRACK_LIMIT),
        )
        .with_keyword(BOUNDED_PATTERN, |_, value, _| {
            let pattern = value.as_str().unwrap_or_default();
            BoundedPattern::new(pattern)
                .map(|k| Box::new(k) as Box<dyn for<'i> jsonschema::Keyword<'i>>)
                .map_err(jsonschema::ValidationError::custom)
        })
}

/// Whether the linear-time engine (the `regex` crate, as the validator translates ECMA-262)
/// compiles `pattern`, and so does the validator's own `pattern` keyword: a pattern only the
/// former takes (`(?-u)`) would make the whole schema fail to compile, and the tool go
/// unvalidated.
fn is_linear(pattern: &str) -> bool {
    // What jsonschema's compiler does with a `pattern`: translate ECMA-262's classes, then build.
    let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
        return false;
    };
    // The `regex` syntax parses it (no lookaround, no backreference), so fancy-regex hands all of
    // it to the `regex` crate, with that crate's size limits: building it is building the linear
    // engine once (compiling it with the `regex` crate as well cost a third of a schema's
    // compile time, fuzz target `validate_args`).
    regex_syntax::Parser::new().parse(&translated).is_ok()
        && fancy_regex::RegexBuilder::new(&translated)
            .backtrack_limit(PATTERN_BACKTRACK_LIMIT)
            .build()
            .is_ok()
}

/// Compiles `schema`, with every `pattern` the linear-time engine cannot compile (lookaround,
/// backreferences, ECMA-only syntax such as `[^]` or `\0`) checked by [`BoundedPattern`]. A
/// pattern no engine compiles fails only its own keyword's values; the rest of the tool (enums,
/// types, required, hidden arguments) is still enforced. Such a pattern used to leave the whole
/// tool unvalidated.
fn compile(schema: &Map<String, Value>) -> Result<jsonschema::Validator, SchemaCompileError> {
    let mut patched = Value::Object(schema.clone());
    bound_patterns(&mut patched);
    options().build(&patched)
}

/// Renames every non-linear or heavy `pattern` to [`BOUNDED_PATTERN`], in `schema` and its
/// subschemas.
fn bound_patterns(schema: &mut Value) {
    if let Value::Object(m) = schema
        && let Some(Value::String(p)) = m.get("pattern")
    {
        // ECMA-262 syntax the engines spell otherwise (`\\0`, `\\cJ`, `[^]`, `\\g`, `\\<`),
        // rewritten for them; syntax ECMA-262 does not have fails closed in the bounded check.
        let linear = ecma_to_fancy(p).ok().filter(|rewritten| {
            let q = rewritten.as_deref().unwrap_or(p);
            is_linear(q) && heavy_pattern_max_len(q).is_none()
        });
        match linear {
            Some(Some(rewritten)) => {
                m.insert("pattern".to_string(), Value::String(rewritten));
            }
            Some(None) => {}
            None => {
                if let Some(p) = m.remove("pattern") {
                    m.insert(BOUNDED_PATTERN.to_string(), p);
                }
            }
        }
    }
    if let Value::Object(m) = schema
        && let Some(Value::Object(props)) = m.get_mut("patternProperties")
    {
        // Unsafe keys' subschemas move into an `allOf` entry of their own that holds them for
        // every property; there they leave `additionalProperties` beside them as strict as it was.
        let mut every = Vec::new();
        let keys: Vec<String> = props.keys().cloned().collect();
        for key in keys {
            let safe = pattern_property_key(&key);
            if safe.as_deref() == Some(key.as_str()) {
                continue;
            }
            let Some(sub) = props.remove(&key) else {
                continue;
            };
            match safe {
                Some(rewritten) => match props.get_mut(&rewritten) {
                    Some(existing) => {
                        let first = existing.take();
                        *existing = serde_json::json!({ "allOf": [first, sub] });
                    }
                    None => {
                        props.insert(rewritten, sub);
                    }
                },
                None => every.push(serde_json::json!({ "patternProperties": { "": sub } })),
            }
        }
        if !every.is_empty() {
            match m.get_mut("allOf") {
                Some(Value::Array(all)) => all.extend(every),
                _ => {
                    m.insert("allOf".to_string(), Value::Array(every));
                }
            }
        }
    }
    crate::schema_walk::for_each_child_mut(schema, &mut |_, child| bound_patterns(child));
}

/// A backtracking `pattern`: fancy-regex with [`PATTERN_BACKTRACK_LIMIT`], else (ECMA-only
/// syntax: [`ecma_to_fancy`] first); strings over [`BOUNDED_PATTERN_MAX_LEN`] fail; a match that
/// runs out of steps fails. A pattern fancy-regex does not compile fails every string: an ECMA-262
/// engine (regress) would compile a few more (`[\d-z]`), but it has no step limit, and a nested
/// quantifier over 30 characters held a worker for minutes (fuzz target `validate_args`).
struct BoundedPattern {
    engine: Option<fancy_regex::Regex>,
    pattern: String,
    /// Longest string searched: [`BOUNDED_PATTERN_MAX_LEN`], less for a heavy pattern.
    max_len: usize,
}

impl BoundedPattern {
    fn new(pattern: &str) -> Result<Self, String> {
        let build = |p: &str| {
            fancy_regex::RegexBuilder::new(p)
                .backtrack_limit(PATTERN_BACKTRACK_LIMIT)
                .build()
                .ok()
        };
        // Only ECMA-262 syntax reaches fancy-regex: its own extensions (subroutine calls
        // `\g<1>`, `\g0{2}`, recursion, atomic groups) are not what the spec means, and a
        // repeated recursive call made it allocate 2.3 GB for 5 s while compiling (fuzz target
        // `validate_args`).
        let engine = bounded_source(pattern).and_then(|p| build(&p));
        Ok(BoundedPattern {
            engine,
            pattern: pattern.to_string(),
            max_len: heavy_pattern_max_len(pattern).unwrap_or(BOUNDED_PATTERN_MAX_LEN),
        })
    }

    fn matches(&self, s: &str) -> bool {
        s.len() <= self.max_len
            && self.engine.as_ref().is_some_and(|r| {
                // A panic inside the engine (see `(?(` in [`ecma_to_fancy`]) fails the value, not
                // the call.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| r.is_match(s)))
                    .is_ok_and(|m| m.unwrap_or(false))
            })
    }
}

/// Most automaton states (as [`pattern_weight`] counts them) a lookbehind's body may compile to.
/// fancy-regex compiles a variable-length lookbehind into a reverse automaton with no size limit:
/// `(?<=(a+)*…]{1221220404})` asked for 4 GB and then more, before any string was matched (fuzz
/// target `validate_args`).
const MAX_LOOKBEHIND_WEIGHT: u64 = 100_000;

/// What fancy-regex is given to compile for `pattern` (ECMA-262 spelled its way, see
/// [`ecma_to_fancy`]), or `None` when it must not compile it: syntax ECMA-262 does not have, or a
/// lookbehind heavier than [`MAX_LOOKBEHIND_WEIGHT`].
fn bounded_source(pattern: &str) -> Option<String> {
    use fancy_regex::{Expr, LookAround};
    fn weight(e: &Expr) -> u64 {
        match e {
            Expr::Literal { val, .. } => val.len() as u64,
            Expr::Delegate { inner, .. } => {
                pattern_weight(inner).map_or(inner.len() as u64, |(w, _)| w)
            }
            Expr::Repeat { child, lo, hi, .. } => {
                let times = if *hi == usize::MAX {
                    lo.saturating_add(1)
                } else {
                    *hi
                };
                weight(child).saturating_mul(u64::try_from(times.max(1)).unwrap_or(u64::MAX))
            }
            e => e.children_iter().map(weight).fold(1, u64::saturating_add),
        }
    }
    fn lookbehinds_bounded(e: &Expr) -> bool {
        match e {
            Expr::LookAround(body, LookAround::LookBehind | LookAround::LookBehindNeg)
                if weight(body) > MAX_LOOKBEHIND_WEIGHT =>
            {
                false
            }
            e => e.children_iter().all(lookbehinds_bounded),
        }
    }
    let source = match ecma_to_fancy(pattern) {
        Err(NotEcma) => return None,
        Ok(rewritten) => rewritten.unwrap_or_else(|| pattern.to_string()),
    };
    // A pattern fancy-regex cannot parse is left to it: it fails to compile, and fails closed.
    fancy_regex::Expr::parse_tree(&source)
        .map_or(true, |tree| lookbehinds_bounded(&tree.expr))
        .then_some(source)
}

/// A `patternProperties` key as the validator can compile it safely (as written, or spelled the
/// engine's way, see [`ecma_to_fancy`]), or `None` when it must not or cannot be compiled: then
/// its subschema holds for every property, so it fails closed, like a `pattern`. The validator
/// used to compile such keys as written (the lookbehind of [`bounded_source`], the subroutine
/// calls of [`BoundedPattern::new`]), and one it rejected left the whole tool unvalidated.
fn pattern_property_key(key: &str) -> Option<String> {
    bounded_source(key).filter(|p| {
        // What the validator does with a key: translate ECMA-262's classes, then build.
        jsonschema_regex::to_rust_regex(p).is_ok_and(|translated| {
            fancy_regex::RegexBuilder::new(&translated)
                .backtrack_limit(PATTERN_BACKTRACK_LIMIT)
                .build()
                .is_ok()
        })
    })
}

/// A pattern that uses a regex syntax ECMA-262 does not have and fancy-regex gives a meaning
/// (recursion `(?R)`, subroutine calls `(?&a)` `(?P>a)` `(?1)`, atomic groups `(?>…)`, branch
/// reset `(?|…)`, `\K`): an ECMA-262 engine rejects it, and so does the bounded check.
#[derive(Debug, PartialEq, Eq)]
struct NotEcma;

/// `pattern` with the ECMA-262 syntax the regex engines (fancy-regex and the linear `regex`
/// crate) lack or read otherwise spelled their way: `\0` (NUL, when no digit follows) is `\x00`,
/// a control escape `\cJ` is `\x0A`, the empty class `[]` never matches, `[^]` is any
/// character, `\g` (an identity escape in ECMA-262, a subroutine call or back-reference in
/// fancy-regex) is `g`, and `\<`, `\>` outside classes are `<` and `>` (identity escapes, not the
/// engines' word assertions: `N?.\>.+…`, a Unicode word boundary to them, kept the linear engine
/// off its DFA for 3.7 s of CPU over a long non-ASCII argument, fuzz target `validate_args`).
/// `Ok(None)` when there is nothing to rewrite.
fn ecma_to_fancy(pattern: &str) -> Result<Option<String>, NotEcma> {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut rewrote = false;
    let mut in_class = false;
    let mut chars = pattern.chars().peekable();
    // The last token was a quantifier (`*`, `+`, `?`, `{2,3}`): a `+` after it makes it
    // possessive, which ECMA-262 does not have (a syntax error there) and fancy-regex ran for
    // 41 s of CPU on `x*+` and a few KB (fuzz target `validate_args`).
    let mut quantified = false;
    while let Some(c) = chars.next() {
        if quantified && c == '+' && !in_class {
            return Err(NotEcma);
        }
        quantified = !in_class && matches!(c, '*' | '+' | '?');
        if c == '{' && !in_class {
            let rest: String = chars.clone().take(32).take_while(|&d| d != '}').collect();
            let (min, max) = rest.split_once(',').unwrap_or((&rest, "0"));
            let digits = |t: &str| t.chars().all(|d| d.is_ascii_digit());
            if !min.is_empty()
                && digits(min)
                && digits(max)
                && chars.clone().nth(rest.chars().count()) == Some('}')
            {
                out.push('{');
                out.push_str(&rest);
                out.push('}');
                for _ in 0..=rest.chars().count() {
                    chars.next();
                }
                quantified = true;
                continue;
            }
        }
        match c {
            '\\' => match chars.next() {
                Some('0') if !chars.peek().is_some_and(char::is_ascii_digit) => {
                    out.push_str("\\x00");
                    rewrote = true;
                }
                Some('c') if chars.peek().is_some_and(char::is_ascii_alphabetic) => {
                    let letter = chars.next().map_or(0, |l| l as u32);
                    out.push_str(&format!("\\x{:02X}", letter % 32));
                    rewrote = true;
                }
                Some('g') => {
                    out.push('g');
                    rewrote = true;
                }
                Some('K') if !in_class => return Err(NotEcma),
                Some(e @ ('<' | '>')) if !in_class => {
                    out.push(e);
                    rewrote = true;
                }
                Some(e) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                let rest = chars.clone().take(2).collect::<String>();
                if rest.starts_with(']') {
                    chars.next();
                    out.push_str("[^\\s\\S]");
                    rewrote = true;
                } else if rest == "^]" {
                    chars.next();
                    chars.next();
                    out.push_str("[\\s\\S]");
                    rewrote = true;
                } else {
                    in_class = true;
                    out.push('[');
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '(' if !in_class && chars.peek() == Some(&'?') => {
                let rest: String = chars.clone().skip(1).take(2).collect();
                let mut r = rest.chars();
                let (a, b) = (r.next(), r.next());
                // `(?(1)…)`: a conditional, which fancy-regex 0.19 also mis-runs when the group
                // does not exist (an index out of bounds in its VM: fuzz target `validate_args`).
                let fancy_only = matches!(a, Some('R' | '&' | '>' | '|' | '0'..='9' | '+' | '('))
                    || (a == Some('P') && b == Some('>'))
                    || (a == Some('-') && b.is_some_and(|c| c.is_ascii_digit()));
                if fancy_only {
                    return Err(NotEcma);
                }
                out.push('(');
            }
            c => out.push(c),
        }
    }
    Ok(rewrote.then_some(out))
}

impl<'i> jsonschema::Keyword<'i> for BoundedPattern {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        let Some(s) = instance.as_str() else {
            return Ok(());
        };
        if self.matches(s) {
            return Ok(());
        }
        let p = &self.pattern;
        Err(jsonschema::ValidationError::custom(
            if self.engine.is_none() {
                format!("cannot be checked: no bounded regex engine compiles the pattern {p:?}")
            } else if s.len() > self.max_len {
                format!(
                    "is longer than {} bytes, too long to check against the pattern {p:?}",
                    self.max_len
                )
            } else {
                format!("does not match {p:?}")
            },
        ))
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        instance.as_str().is_none_or(|s| self.matches(s))
    }
}

/// Arguments nested deeper than this are refused before anything else looks at them: JSON-RPC
/// parsers stop at 128 levels too, and recursive code (schema validation, serializers, `Drop`)
/// must never meet an unbounded depth.
pub const MAX_DEPTH: usize = 128;

/// Problem lines a failed check reports at most, before a last line saying more were left out.
const MAX_PROBLEMS: usize = 20;

/// Longest rendering of an argument value inside a problem line (characters).
const VALUE_PREVIEW_CHARS: usize = 80;
/// Longest problem line (characters).
const PROBLEM_MAX_CHARS: usize = 400;

/// How deeply `v` nests (a scalar is 0, `[1]` is 1), computed without recursion; stops counting
/// once `limit` is exceeded.
pub fn depth_exceeds(v: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((v, d)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        if d + 1 > limit {
            return true;
        }
        stack.extend(children.map(|c| (c, d + 1)));
    }
    false
}

/// A short rendering of a value for messages: JSON text cut at [`VALUE_PREVIEW_CHARS`], with
/// the full size when it was cut. Never serializes more than it shows.
pub fn preview(v: &Value) -> String {
    struct Capped(Vec<u8>, usize);
    impl std::io::Write for Capped {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = self.1.saturating_sub(self.0.len());
            if room == 0 {
                return Err(std::io::Error::other("preview full"));
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    if depth_exceeds(v, MAX_DEPTH) {
        return format!("a value nested more than {MAX_DEPTH} levels deep");
    }
    // 4 bytes per character at most, plus one to notice that it was cut.
    let mut w = Capped(Vec::new(), VALUE_PREVIEW_CHARS * 4 + 1);
    let complete = serde_json::to_writer(&mut w, v).is_ok();
    let text = String::from_utf8_lossy(&w.0).into_owned();
    let shown: String = text.chars().take(VALUE_PREVIEW_CHARS).collect();
    if complete && shown.len() == text.len() {
        return text;
    }
    match v {
        Value::String(s) => format!("{shown}…\" ({} characters)", s.chars().count()),
        Value::Array(a) => format!("{shown}… (an array of {} items)", a.len()),
        Value::Object(o) => format!("{shown}… (an object with {} members)", o.len()),
        _ => format!("{shown}…"),
    }
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// `i64::MIN` and `u64::MAX + 1` (2^63 and 2^64 are exact as `f64`).
const I64_MIN_F: f64 = -9_223_372_036_854_775_808.0;
const U64_END_F: f64 = 18_446_744_073_709_551_616.0;

/// Integer-typed values JSON parsers could not keep exactly: floats beyond the 64-bit integer
/// range (`1e308`, `18446744073709551616`). Sending them would send a different number (or an
/// exponent where the API expects digits). Follows `properties` and `items` of `schema`.
fn inexact_integers(schema: &Value, v: &Value, path: &mut String, out: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    let integer = match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => {
            ts.iter().any(|t| t == "integer") && !ts.iter().any(|t| t == "number")
        }
        _ => false,
    };
    match v {
        Value::Number(n)
            if integer
                && !n.is_i64()
                && !n.is_u64()
                && n.as_f64()
                    .is_some_and(|f| !(I64_MIN_F..U64_END_F).contains(&f)) =>
        {
            out.push(format!(
                "`{}`: {n} is outside the 64-bit integer range; JSON parsing already rounded it, so it cannot be sent exactly",
                display_path(path)
            ));
        }
        Value::Object(o) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, x) in o {
                    if let Some(ps) = props.get(k) {
                        let len = path.len();
                        path.push('/');
                        path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                        inexact_integers(ps, x, path, out);
                        path.truncate(len);
                    }
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = schema.get("items") {
                for (i, x) in a.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("/{i}"));
                    inexact_integers(items, x, path, out);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// `args` without the `null`s that mean "not set": models send `null` for arguments they leave
/// out. A `null` is dropped where it stands for an optional argument, or an optional member of an
/// object inside one, whose schema does not allow `null`; so the call is validated and sent as
/// if it had been left out. Everything else stays: a `null` the schema allows (`nullable: true`,
/// a type array with `"null"`, an untyped value) is sent as `null`, and a `null` for a required
/// argument or member (or one the schema does not declare) is left for validation to report.
///
/// Members are followed through `properties`, `items`, `$ref`s (local to `schema`) and `allOf`,
/// and through the one `anyOf`/`oneOf` alternative that can hold an object (a nullable object is
/// `anyOf: [object, null]`); where several alternatives could, nothing inside is dropped.
/// Borrowed when nothing is dropped.
pub fn drop_unset_nulls<'a>(
    schema: &Map<String, Value>,
    args: &'a Map<String, Value>,
) -> std::borrow::Cow<'a, Map<String, Value>> {
    fn has_null(v: &Value, depth: usize) -> bool {
        depth <= MAX_DEPTH
            && match v {
                Value::Null => true,
                Value::Array(a) => a.iter().any(|x| has_null(x, depth + 1)),
                Value::Object(o) => o.values().any(|x| has_null(x, depth + 1)),
                _ => false,
            }
    }
    if !args.values().any(|v| has_null(v, 1)) {
        return std::borrow::Cow::Borrowed(args);
    }
    let root = Value::Object(schema.clone());
    let nulls = Nulls { root: &root };
    let mut out = args.clone();
    nulls.object(&mut out, &[&root], 0);
    if out.len() == args.len() && out == *args {
        std::borrow::Cow::Borrowed(args)
    } else {
        std::borrow::Cow::Owned(out)
    }
}

/// [`drop_unset_nulls`]' walk: a value and the schemas that all apply to it.
struct Nulls<'s> {
    root: &'s Value,
}

/// How many `$ref`s in a row are followed.
const REF_CHAIN_MAX: usize = 32;

impl<'s> Nulls<'s> {
    /// The schema a local `$ref` (`#/$defs/X`, `#/properties/...`) names.
    fn target(&self, r: &str) -> Option<&'s Value> {
        let ptr = r.strip_prefix('#')?;
        if ptr.is_empty() {
            return Some(self.root);
        }
        self.root.pointer(ptr)
    }

    /// `schemas` with every `$ref` target and `allOf` member added (all of them apply), and the
    /// one `anyOf`/`oneOf` alternative that can be of JSON type `kind` (`object`, `array`);
    /// `None` when several could.
    fn expand(&self, schemas: &[&'s Value], kind: &str) -> Option<Vec<&'s Value>> {
        let mut out: Vec<&'s Value> = Vec::new();
        let mut todo: Vec<(&'s Value, usize)> = schemas.iter().map(|s| (*s, 0)).collect();
        while let Some((s, hops)) = todo.pop() {
            if hops > REF_CHAIN_MAX || out.len() > 256 {
                return None;
            }
            if out.iter().any(|o| std::ptr::eq(*o, s)) {
                continue;
            }
            out.push(s);
            let Value::Object(m) = s else { continue };
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                todo.push((self.target(r)?, hops + 1));
            }
            if let Some(Value::Array(all)) = m.get("allOf") {
                todo.extend(all.iter().map(|x| (x, hops + 1)));
            }
            for k in ["anyOf", "oneOf"] {
                if let Some(Value::Array(alts)) = m.get(k) {
                    let fits: Vec<&'s Value> =
                        alts.iter().filter(|a| self.may_be(a, kind, 0)).collect();
                    match fits.as_slice() {
                        [one] => todo.push((one, hops + 1)),
                        _ => return None,
                    }
                }
            }
        }
        Some(out)
    }

    /// Whether schema `s` allows JSON type `kind` (following `$ref`s; compositions are assumed
    /// to).
    fn may_be(&self, s: &'s Value, kind: &str, hops: usize) -> bool {
        let Value::Object(m) = s else {
            return s.as_bool() != Some(false);
        };
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            match self.target(r) {
                Some(t) if hops < REF_CHAIN_MAX => {
                    if !self.may_be(t, kind, hops + 1) {
                        return false;
                    }
                }
                _ => return true,
            }
        }
        let fits = |t: &str| t == kind;
        match m.get("type") {
            Some(Value::String(t)) => fits(t),
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).any(fits),
            _ => true,
        }
    }

    /// Whether schema `s` accepts `null` (its type, `enum`, `const`, `$ref` target and `allOf`
    /// members all do, and one of its `anyOf`/`oneOf` alternatives does).
    fn accepts_null(&self, s: &Value, hops: usize) -> bool {
        let Value::Object(m) = s else {
            return s.as_bool() != Some(false);
        };
        if hops > REF_CHAIN_MAX {
            return true;
        }
        let typed = match m.get("type") {
            Some(Value::String(t)) => t == "null",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
            _ => true,
        };
        let listed = |k: &str| match m.get(k) {
            Some(Value::Array(e)) if k == "enum" => e.contains(&Value::Null),
            Some(c) if k == "const" => c.is_null(),
            _ => true,
        };
        let any = |k: &str| match m.get(k) {
            Some(Value::Array(alts)) => alts.iter().any(|a| self.accepts_null(a, hops + 1)),
            _ => true,
        };
        typed
            && listed("enum")
            && listed("const")
            && m.get("$ref").and_then(Value::as_str).is_none_or(|r| {
                self.target(r)
                    .is_none_or(|t| self.accepts_null(t, hops + 1))
            })
            && m.get("allOf")
                .and_then(Value::as_array)
                .is_none_or(|all| all.iter().all(|a| self.accepts_null(a, hops + 1)))
            && any("anyOf")
            && any("oneOf")
    }

    /// Drops the unset `null`s of `obj`, whose schemas are `schemas`, and of what it holds.
    fn object(&self, obj: &mut Map<String, Value>, schemas: &[&'s Value], depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let Some(view) = self.expand(schemas, "object") else {
            return;
        };
        let required = |k: &str| {
            view.iter().any(|s| {
                s.get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|x| x == k))
            })
        };
        // The schemas of member `k`: its declarations, else `additionalProperties`.
        let member = |k: &str| -> (bool, Vec<&'s Value>) {
            let declared: Vec<&'s Value> = view
                .iter()
                .filter_map(|s| s.get("properties")?.get(k))
                .collect();
            if !declared.is_empty() {
                return (true, declared);
            }
            let extra = view
                .iter()
                .filter_map(|s| s.get("additionalProperties"))
                .collect();
            (false, extra)
        };
        obj.retain(|k, v| {
            if !v.is_null() {
                return true;
            }
            let (declared, schemas) = member(k);
            !declared || required(k) || schemas.iter().all(|s| self.accepts_null(s, 0))
        });
        for (k, v) in obj.iter_mut() {
            let (_, schemas) = member(k);
            if !schemas.is_empty() {
                self.value(v, &schemas, depth + 1);
            }
        }
    }

    fn value(&self, v: &mut Value, schemas: &[&'s Value], depth: usize) {
        match v {
            Value::Object(o) => self.object(o, schemas, depth),
            Value::Array(items) if depth <= MAX_DEPTH => {
                let Some(view) = self.expand(schemas, "array") else {
                    return;
                };
                if view.iter().any(|s| s.get("prefixItems").is_some()) {
                    return;
                }
                let item: Vec<&'s Value> = view.iter().filter_map(|s| s.get("items")).collect();
                if item.is_empty() {
                    return;
                }
                for x in items.iter_mut() {
                    self.value(x, &item, depth + 1);
                }
            }
            _ => {}
        }
    }
}

/// Validates `args`; returns one line per problem, each naming the argument path. Values are
/// shown cut short (a 1 MB string is not echoed back), and arguments nested more than
/// [`MAX_DEPTH`] levels are refused before the schema validator sees them.
pub fn check(
    validator: &LazyValidator,
    schema: &Map<String, Value>,
    args: &Map<String, Value>,
) -> Result<(), Vec<String>> {
    let too_deep: Vec<String> = args
        .iter()
        .filter(|(_, v)| depth_exceeds(v, MAX_DEPTH))
        .map(|(k, _)| {
            format!(
                "`{}`: the value is nested more than {MAX_DEPTH} levels deep; refused",
                cut(k, 64)
            )
        })
        .collect();
    if !too_deep.is_empty() {
        return Err(too_deep);
    }
    // Validated as sent: without the nulls that mean "not set".
    let args = &*drop_unset_nulls(schema, args);
    let v = match validator.get(schema) {
        Ok(v) => v,
        // A schema the validator cannot compile (e.g. an exotic regex): let the API judge.
        Err(_) => return Ok(()),
    };
    let instance = Value::Object(args.clone());
    let mut problems = Vec::new();
    let mut more = false;
    for err in v.iter_errors(&instance) {
        let path = display_path(err.instance_path().as_str());
        match err.kind() {
            jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected }
                if path.is_empty() =>
            {
                let valid: Vec<&str> = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                unknown_arguments(unexpected, &valid, &mut problems);
            }
            _ => {
                let what = if path.is_empty() {
                    "arguments".to_string()
                } else {
                    format!("`{}`", cut(&path, 100))
                };
                let msg = err.masked_with(preview(err.instance())).to_string();
                problems.push(cut(&format!("{what}: {msg}"), PROBLEM_MAX_CHARS));
            }
        }
        if problems.len() >= MAX_PROBLEMS {
            more = true;
            break;
        }
    }
    if problems.is_empty()
        && let Some(props) = schema.get("properties").and_then(Value::as_object)
    {
        for (k, x) in args {
            if let Some(ps) = props.get(k) {
                let mut path = format!("/{}", k.replace('~', "~0").replace('/', "~1"));
                inexact_integers(ps, x, &mut path, &mut problems);
            }
        }
    }
    // One error can add several lines (unknown arguments): the cap is on the lines.
    if more || problems.len() > MAX_PROBLEMS {
        problems.truncate(MAX_PROBLEMS);
        problems.push("(more problems not shown)".to_string());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Validates one operation call as it will be sent: the empty values the API takes none of are
/// left out first (or refused, for a required parameter or body: [`drop_empty_values`]), then
/// the arguments are checked against the schema ([`check`], which leaves out the `null`s that
/// mean "not set") and the wire formats of parameters ([`check_wire_formats`]). So a value that
/// is not sent is never validated (an optional `nextToken: ""` is not refused for its
/// `minLength`), and a value that is validated is the one sent.
pub fn check_call(
    validator: &LazyValidator,
    schema: &Map<String, Value>,
    route: &crate::model::Route,
    args: &Map<String, Value>,
) -> Result<(), Vec<String>> {
    // Too deep: refused by `check` before anything walks it.
    if args.values().any(|v| depth_exceeds(v, MAX_DEPTH)) {
        return check(validator, schema, args);
    }
    let (args, empty) = split_empty_values(Some(schema), route, args);
    // The schema's verdict too, in the same answer (a required empty value stays in for it).
    let mut problems: Vec<String> = empty.into_iter().map(|e| e.message).collect();
    if let Err(more) = check(validator, schema, &args) {
        problems.extend(more);
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    check_wire_formats(schema, route, &args)
}

/// A required parameter or request body given as an empty value the API does not take (see
/// [`drop_empty_values`]); `message` names the argument and where it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmptyValue {
    pub arg: String,
    pub message: String,
}

/// `args` without the empty values the API takes none of, as the request builder sends them:
///
/// - query parameters: OpenAPI's `allowEmptyValue` defaults to false, so unless the parameter
///   allows an empty value (`allowEmptyValue: true`, or `""` in its schema's `enum`: the
///   [`crate::model::ArgLocation::Query`] flag) no `name=` is sent. An empty string or `null`
///   item of an array, and an empty string or `null` member of an object, is left out (in every
///   style: form exploded or not, spaceDelimited, pipeDelimited, deepObject at any depth); a
///   value left with nothing to send (`""`, `[]`, `{}`, `["", null]`) is not sent when
///   optional and refused when required.
/// - a whole request body that would be sent as zero bytes (`""` for a text, form-encoded or
///   binary body, or base64 with no content): not sent when the body is optional, refused when
///   required, unless the body's schema says an empty body is a value (`""` in its `enum` or
///   `const`, `maxLength: 0`, or `minLength: 0` written out).
///
/// Values arrays and objects hold as JSON text (an array of objects in a form-style query) and
/// parameters with a JSON `content` type are sent as JSON, never empty: they are kept. Borrowed
/// when nothing changes; `Err` lists every required argument that is empty.
pub fn drop_empty_values<'a>(
    schema: Option<&Map<String, Value>>,
    route: &crate::model::Route,
    args: &'a Map<String, Value>,
) -> Result<std::borrow::Cow<'a, Map<String, Value>>, Vec<EmptyValue>> {
    let (args, problems) = split_empty_values(schema, route, args);
    if problems.is_empty() {
        Ok(args)
    } else {
        Err(problems)
    }
}

/// [`drop_empty_values`]' work: the arguments without the empty values not sent (required empty
/// ones left as given), and the required empty ones.
fn split_empty_values<'a>(
    schema: Option<&Map<String, Value>>,
    route: &crate::model::Route,
    args: &'a Map<String, Value>,
) -> (std::borrow::Cow<'a, Map<String, Value>>, Vec<EmptyValue>) {
    use crate::model::ArgLocation;
    let mut out: Option<Map<String, Value>> = None;
    let mut problems = Vec::new();
    for b in &route.args {
        let Some(v) = args.get(&b.arg) else {
            continue;
        };
        let (verdict, required, what) = match &b.location {
            ArgLocation::Query {
                style,
                allow_empty_value: false,
                ..
            } => {
                let verdict = match b.content_type.as_deref() {
                    Some(ct) if crate::media::is_json(ct) => Wire::Keep,
                    Some(_) if !v.is_string() => Wire::Keep,
                    _ => query_wire(v, *style),
                };
                let what = match v {
                    Value::Array(a) if !a.is_empty() => "has only empty items",
                    Value::Object(o) if !o.is_empty() => "has only empty members",
                    _ => "is empty",
                };
                (
                    verdict,
                    b.required,
                    format!(
                        "argument `{}` (query `{}`): {what}, and the API allows no empty value for this parameter",
                        b.arg, b.wire
                    ),
                )
            }
            ArgLocation::Body => {
                let Some(body) = &route.body else { continue };
                let empty = body_is_empty(body.kind, v)
                    && !schema
                        .and_then(|s| s.get("properties")?.get(&b.arg))
                        .is_some_and(|s| admits_empty_string(schema, s, 0));
                (
                    if empty { Wire::Nothing } else { Wire::Keep },
                    b.required || body.required,
                    format!(
                        "argument `{}` (the request body, {}): is empty, and the operation requires a request body; an empty body is sent only where the body's schema allows one (`\"\"` in its `enum`, or `minLength: 0`)",
                        b.arg, body.content_type
                    ),
                )
            }
            _ => continue,
        };
        match verdict {
            Wire::Keep => {}
            Wire::Pruned(p) => {
                out.get_or_insert_with(|| args.clone())
                    .insert(b.arg.clone(), p);
            }
            Wire::Nothing if required => problems.push(EmptyValue {
                arg: b.arg.clone(),
                message: what,
            }),
            Wire::Nothing => {
                out.get_or_insert_with(|| args.clone()).remove(&b.arg);
            }
        }
    }
    let args = match out {
        Some(m) => std::borrow::Cow::Owned(m),
        None => std::borrow::Cow::Borrowed(args),
    };
    (args, problems)
}

/// What of a value goes on the wire once its empty values are left out.
enum Wire {
    /// All of it.
    Keep,
    /// This (some items or members were empty).
    Pruned(Value),
    /// Nothing.
    Nothing,
}

fn is_empty_scalar(v: &Value) -> bool {
    v.is_null() || v.as_str() == Some("")
}

/// A query parameter's value as `style` writes it (the request builder's `expand_query`), without
/// the pairs whose value would be empty.
fn query_wire(v: &Value, style: crate::model::QueryStyle) -> Wire {
    use crate::model::QueryStyle;
    let nested = |a: &[Value]| a.iter().any(|x| x.is_object() || x.is_array());
    match v {
        _ if is_empty_scalar(v) => Wire::Nothing,
        Value::Array(_) | Value::Object(_) if style == QueryStyle::DeepObject => deep_wire(v, 0),
        // Sent whole, as JSON text.
        Value::Array(a) if nested(a) => Wire::Keep,
        Value::Array(a) => {
            let kept: Vec<Value> = a.iter().filter(|x| !is_empty_scalar(x)).cloned().collect();
            match kept.len() {
                0 => Wire::Nothing,
                n if n == a.len() => Wire::Keep,
                _ => Wire::Pruned(Value::Array(kept)),
            }
        }
        // Form, spaceDelimited, pipeDelimited (exploded `k=v` pairs or `name=k,v,...`): a member
        // whose value is an object or array is written as JSON text, never empty.
        Value::Object(o) => {
            let kept: Map<String, Value> = o
                .iter()
                .filter(|(_, x)| !is_empty_scalar(x))
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect();
            match kept.len() {
                0 => Wire::Nothing,
                n if n == o.len() => Wire::Keep,
                _ => Wire::Pruned(Value::Object(kept)),
            }
        }
        _ => Wire::Keep,
    }
}

/// [`query_wire`] for deepObject (`key[a][b]=v`, `key[]=v`, `key[0][a]=v`), at any depth. The
/// items of an array of objects keep their places (their indices are in the keys): an item left
/// with nothing becomes `{}`, which writes nothing.
fn deep_wire(v: &Value, depth: usize) -> Wire {
    if depth > MAX_DEPTH {
        return Wire::Keep;
    }
    match v {
        _ if is_empty_scalar(v) => Wire::Nothing,
        Value::Object(o) => {
            let mut changed = false;
            let mut kept = Map::new();
            for (k, x) in o {
                match deep_wire(x, depth + 1) {
                    Wire::Keep => {
                        kept.insert(k.clone(), x.clone());
                    }
                    Wire::Pruned(p) => {
                        changed = true;
                        kept.insert(k.clone(), p);
                    }
                    Wire::Nothing => changed = true,
                }
            }
            if kept.is_empty() {
                Wire::Nothing
            } else if changed {
                Wire::Pruned(Value::Object(kept))
            } else {
                Wire::Keep
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
            let mut changed = false;
            let mut any = false;
            let items: Vec<Value> = a
                .iter()
                .map(|x| match deep_wire(x, depth + 1) {
                    Wire::Keep => {
                        any = true;
                        x.clone()
                    }
                    Wire::Pruned(p) => {
                        any = true;
                        changed = true;
                        p
                    }
                    Wire::Nothing => {
                        changed = changed || !matches!(x, Value::Object(o) if o.is_empty());
                        Value::Object(Map::new())
                    }
                })
                .collect();
            if !any {
                Wire::Nothing
            } else if changed {
                Wire::Pruned(Value::Array(items))
            } else {
                Wire::Keep
            }
        }
        Value::Array(a) => {
            let kept: Vec<Value> = a.iter().filter(|x| !is_empty_scalar(x)).cloned().collect();
            match kept.len() {
                0 => Wire::Nothing,
                n if n == a.len() => Wire::Keep,
                _ => Wire::Pruned(Value::Array(kept)),
            }
        }
        _ => Wire::Keep,
    }
}

/// Whether a whole request body of `kind` given as `v` would be sent as zero bytes: an empty
/// string for a text or form-encoded body, base64 without content (`""`, whitespace, or a
/// `data:…;base64,` URL with nothing after the comma) for a binary one. JSON (`""` is sent as
/// `""`) and multipart bodies (a part is sent, if an empty one) are never empty.
fn body_is_empty(kind: crate::model::BodyKind, v: &Value) -> bool {
    use crate::model::BodyKind;
    let Some(s) = v.as_str() else {
        return false;
    };
    match kind {
        BodyKind::Text | BodyKind::Form => s.is_empty(),
        BodyKind::Binary => {
            let payload = match s.strip_prefix("data:").and_then(|r| r.split_once(',')) {
                Some((meta, data)) if meta.ends_with(";base64") => data,
                _ => s,
            };
            payload.chars().all(|c| c.is_ascii_whitespace())
        }
        BodyKind::Json | BodyKind::Multipart => false,
    }
}

/// Whether schema `s` says in so many words that `""` is a value: `""` in its `enum`, `const:
/// ""`, `maxLength: 0`, or `minLength: 0` written out (JSON Schema's default of 0 does not
/// count, as OpenAPI's `allowEmptyValue` default does not), here or in a local `$ref` target or
/// `allOf` member.
fn admits_empty_string(root: Option<&Map<String, Value>>, s: &Value, hops: usize) -> bool {
    let Value::Object(m) = s else {
        return false;
    };
    if hops > REF_CHAIN_MAX {
        return false;
    }
    let zero = |k: &str| m.get(k).and_then(Value::as_u64) == Some(0);
    m.get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| e.iter().any(|x| x.as_str() == Some("")))
        || m.get("const").and_then(Value::as_str) == Some("")
        || zero("maxLength")
        || zero("minLength")
        || m.get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| local_ref(root?, r))
            .is_some_and(|t| admits_empty_string(root, t, hops + 1))
        || m.get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|all| all.iter().any(|x| admits_empty_string(root, x, hops + 1)))
}

/// The schema a local `$ref` (`#/$defs/X`) names inside the inputSchema `root`.
fn local_ref<'s>(root: &'s Map<String, Value>, r: &str) -> Option<&'s Value> {
    let ptr = r.strip_prefix("#/")?;
    let (first, rest) = ptr
        .split_once('/')
        .map_or((ptr, None), |(a, b)| (a, Some(b)));
    let first = first.replace("~1", "/").replace("~0", "~");
    let v = root.get(&first)?;
    match rest {
        None => Some(v),
        Some(rest) => v.pointer(&format!("/{rest}")),
    }
}

/// Checks the `format` of every argument that goes into the URL path, the query, a header or a
/// cookie, for the formats whose meaning is unambiguous (`uuid`, `date`, `date-time`, `ipv4`,
/// `ipv6`, `email`): such a value is written into the request as text, and a server that parses
/// it answers 400 (or, for a path, 404 on another resource). The format is looked for where the
/// schema puts it: on the argument, its array items and object members (deepObject and form
/// objects), behind local `$ref`s and in `allOf` members; a value that must match one of several
/// `anyOf`/`oneOf` alternatives (a nullable parameter is `anyOf: [{…, format}, {type: null}]`)
/// fails when it matches none that can be a string. Body values are the API's to judge.
/// One line per problem, naming the argument (and the item or member).
pub fn check_wire_formats(
    schema: &Map<String, Value>,
    route: &crate::model::Route,
    args: &Map<String, Value>,
) -> Result<(), Vec<String>> {
    use crate::model::ArgLocation;
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    let formats = Formats { root: schema };
    let mut problems = Vec::new();
    for b in &route.args {
        if matches!(b.location, ArgLocation::Body | ArgLocation::BodyField) {
            continue;
        }
        let (Some(value), Some(prop)) = (args.get(&b.arg), props.get(&b.arg)) else {
            continue;
        };
        formats.value(prop, value, &mut cut(&b.arg, 64), 0, &mut problems);
        if problems.len() >= MAX_PROBLEMS {
            break;
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// [`check_wire_formats`]' walk over an inputSchema (`root`, for local `$ref`s).
struct Formats<'s> {
    root: &'s Map<String, Value>,
}

impl<'s> Formats<'s> {
    /// `s` and every schema that applies with it: `$ref` targets and `allOf` members.
    fn all_of(&self, s: &'s Value) -> Vec<&'s Value> {
        let mut out: Vec<&'s Value> = Vec::new();
        let mut todo: Vec<(&'s Value, usize)> = vec![(s, 0)];
        while let Some((s, hops)) = todo.pop() {
            if hops > REF_CHAIN_MAX || out.len() > 256 || out.iter().any(|o| std::ptr::eq(*o, s)) {
                continue;
            }
            out.push(s);
            if let Some(t) = s
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| local_ref(self.root, r))
            {
                todo.push((t, hops + 1));
            }
            if let Some(Value::Array(all)) = s.get("allOf") {
                todo.extend(all.iter().map(|x| (x, hops + 1)));
            }
        }
        out
    }

    /// [`Formats::all_of`], plus (with its own) the one `anyOf`/`oneOf` alternative that can be
    /// of JSON type `kind` (a nullable array or object), where only one can.
    fn view(&self, s: &'s Value, kind: &str) -> Vec<&'s Value> {
        let mut out = self.all_of(s);
        let mut more = Vec::new();
        for x in &out {
            for k in ["anyOf", "oneOf"] {
                if let Some(Value::Array(alts)) = x.get(k)
                    && let [one] = alts
                        .iter()
                        .filter(|a| self.may_be(a, kind))
                        .collect::<Vec<_>>()
                        .as_slice()
                {
                    more.extend(self.all_of(one));
                }
            }
        }
        out.extend(more);
        out
    }

    /// Whether schema `s` can be of JSON type `kind`, as far as its `type` (and its `$ref`s and
    /// `allOf`s) say.
    fn may_be(&self, s: &'s Value, kind: &str) -> bool {
        self.all_of(s).iter().all(|x| match x.get("type") {
            Some(Value::String(t)) => t == kind,
            Some(Value::Array(ts)) => ts.iter().any(|t| t == kind),
            _ => x.as_bool() != Some(false),
        })
    }

    /// The first format of `s` that string `text` does not satisfy, if any.
    fn string_fault(&self, s: &'s Value, text: &str, depth: usize) -> Option<&'s str> {
        if depth > REF_CHAIN_MAX {
            return None;
        }
        for x in self.all_of(s) {
            if let Some(f) = x.get("format").and_then(Value::as_str)
                && wire_format_ok(f, text) == Some(false)
            {
                return Some(f);
            }
            for k in ["anyOf", "oneOf"] {
                let Some(Value::Array(alts)) = x.get(k) else {
                    continue;
                };
                let strings: Vec<&'s Value> =
                    alts.iter().filter(|a| self.may_be(a, "string")).collect();
                let faults: Vec<Option<&'s str>> = strings
                    .iter()
                    .map(|a| self.string_fault(a, text, depth + 1))
                    .collect();
                if !faults.is_empty() && faults.iter().all(Option::is_some) {
                    return faults[0];
                }
            }
        }
        None
    }

    fn value(
        &self,
        s: &'s Value,
        v: &Value,
        path: &mut String,
        depth: usize,
        out: &mut Vec<String>,
    ) {
        if depth > MAX_DEPTH || out.len() >= MAX_PROBLEMS {
            return;
        }
        match v {
            Value::String(text) => {
                if let Some(format) = self.string_fault(s, text, 0) {
                    out.push(format!(
                        "`{path}`: {} is not a valid `{format}`{}",
                        preview(v),
                        format_hint(format)
                    ));
                }
            }
            Value::Array(items) => {
                let schemas: Vec<&'s Value> = self
                    .view(s, "array")
                    .iter()
                    .filter_map(|x| x.get("items"))
                    .collect();
                for (i, x) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    for item in &schemas {
                        self.value(item, x, path, depth + 1, out);
                    }
                    path.truncate(len);
                }
            }
            Value::Object(members) => {
                let view = self.view(s, "object");
                for (k, x) in members {
                    let declared: Vec<&'s Value> = view
                        .iter()
                        .filter_map(|s| s.get("properties")?.get(k))
                        .collect();
                    let schemas = if declared.is_empty() {
                        view.iter()
                            .filter_map(|s| s.get("additionalProperties"))
                            .filter(|a| a.is_object())
                            .collect()
                    } else {
                        declared
                    };
                    let len = path.len();
                    path.push('.');
                    path.push_str(&cut(k, 64));
                    for m in schemas {
                        self.value(m, x, path, depth + 1, out);
                    }
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
}

/// `Some(valid)` for the formats [`check_wire_formats`] checks, `None` for the others.
fn wire_format_ok(format: &str, s: &str) -> Option<bool> {
    Some(match format {
        "uuid" => is_uuid(s),
        "date" => is_full_date(s),
        "date-time" => is_date_time(s),
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<std::net::Ipv6Addr>().is_ok(),
        "email" => is_email(s),
        _ => return None,
    })
}

fn format_hint(format: &str) -> &'static str {
    match format {
        "uuid" => " (like 123e4567-e89b-12d3-a456-426614174000)",
        "date" => " (YYYY-MM-DD)",
        "date-time" => " (RFC 3339, like 2024-05-01T12:00:00Z)",
        "ipv4" => " (like 192.0.2.1)",
        "ipv6" => " (like 2001:db8::1)",
        "email" => " (like name@example.com)",
        _ => "",
    }
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn digits(s: &str) -> Option<u32> {
    (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

fn is_full_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&s[..4]), digits(&s[5..7]), digits(&s[8..])) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// RFC 3339 `date-time`: full-date `T` HH:MM:SS[.frac] (`Z` | +HH:MM | -HH:MM); `t`/`z` and a
/// leap second accepted.
fn is_date_time(s: &str) -> bool {
    let Some((date, time)) = s.split_once(['T', 't']) else {
        return false;
    };
    if !is_full_date(date) {
        return false;
    }
    let (clock, offset) = match time.find(['Z', 'z', '+', '-']) {
        Some(i) => time.split_at(i),
        None => return false,
    };
    let clock = clock.split_once('.').map_or(clock, |(hms, frac)| {
        if !frac.is_empty() && frac.bytes().all(|c| c.is_ascii_digit()) {
            hms
        } else {
            "invalid"
        }
    });
    let hms_ok = |t: &str, max_h: u32, sec: bool| {
        let parts: Vec<&str> = t.split(':').collect();
        let want = if sec { 3 } else { 2 };
        parts.len() == want
            && parts.iter().all(|p| p.len() == 2)
            && digits(parts[0]).is_some_and(|h| h <= max_h)
            && digits(parts[1]).is_some_and(|m| m <= 59)
            && (!sec || digits(parts[2]).is_some_and(|s| s <= 60))
    };
    hms_ok(clock, 23, true) && (offset.eq_ignore_ascii_case("z") || hms_ok(&offset[1..], 23, false))
}

/// A deliberately loose `email`: one `@`, something before it, a dotted domain after it, no
/// spaces or control characters (quoted local parts and IP literals are the API's to judge).
fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
        && (domain.starts_with('[')
            || (domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains('@')))
}

/// Unknown argument names reported one by one; the rest are counted.
const UNKNOWN_SHOWN: usize = 10;
/// Longest list of valid argument names in a message (characters).
const VALID_LIST_MAX_CHARS: usize = 2000;

/// One line per unknown argument (at most [`UNKNOWN_SHOWN`], then "… and K more"), each with
/// the closest valid name when there is one; the valid names are listed once. The work is
/// bounded whatever the client sends: a name longer than [`suggest::MAX_NAME_LEN`] gets no
/// suggestion, and only the shown names are compared.
fn unknown_arguments(unexpected: &[String], valid: &[&str], problems: &mut Vec<String>) {
    let mut listed = false;
    for name in unexpected.iter().take(UNKNOWN_SHOWN) {
        let hint = match suggest::closest(name, valid, suggest::Tolerance::THIRD) {
            Some(c) => format!("did you mean `{c}`?"),
            None if valid.is_empty() => "this tool takes no arguments.".to_string(),
            None if listed => "see the valid arguments above.".to_string(),
            None => {
                listed = true;
                format!(
                    "valid arguments: {}.",
                    cut(&valid.join(", "), VALID_LIST_MAX_CHARS)
                )
            }
        };
        problems.push(format!("unknown argument `{}`: {hint}", cut(name, 64)));
    }
    if unexpected.len() > UNKNOWN_SHOWN {
        problems.push(format!(
            "… and {} more unknown arguments",
            unexpected.len() - UNKNOWN_SHOWN
        ));
    }
}

/// `/tags/0/name` -> `tags[0].name`.
/// At most this many output-schema mismatches are listed.
const OUTPUT_PROBLEMS_MAX: usize = 5;

/// Checks a result's `structuredContent` against the tool's output schema. MCP clients validate
/// it too (the Python and TypeScript SDKs fail the whole call on a mismatch), and real APIs do
/// return data their own spec does not describe. `Err` lists the first mismatches as
/// `` `path`: message ``; a schema the validator cannot compile passes everything.
pub fn check_output(
    validator: &LazyValidator,
    schema: &Map<String, Value>,
    structured: &Value,
) -> Result<(), Vec<String>> {
    let Ok(v) = validator.get(schema) else {
        return Ok(());
    };
    let mut problems = Vec::new();
    let mut more = 0usize;
    for err in v.iter_errors(structured) {
        if problems.len() == OUTPUT_PROBLEMS_MAX {
            more += 1;
            continue;
        }
        let path = display_path(err.instance_path().as_str());
        let path = if path.is_empty() {
            "(root)".to_string()
        } else {
            path
        };
        problems.push(cut(&format!("`{path}`: {err}"), PROBLEM_MAX_CHARS));
    }
    if more > 0 {
        problems.push(format!("… and {more} more"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn display_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if seg.chars().all(|c| c.is_ascii_digit()) && !seg.is_empty() {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Map<String, Value> {
        match json!({"type": "object", "properties": {"petId": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["petId"], "additionalProperties": false})
        {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn reports_every_problem_with_paths_and_suggestions() {
        let v = LazyValidator::default();
        let args = match json!({"petid": 1, "tags": ["a", 2]}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let problems = check(&v, &schema(), &args).expect_err("problems");
        let text = problems.join("\n");
        assert!(
            text.contains("unknown argument `petid`: did you mean `petId`?"),
            "{text}"
        );
        assert!(text.contains("`tags[1]`"), "{text}");
        assert!(text.contains("petId"), "{text}");
        let ok = match json!({"petId": 1}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        assert!(check(&v, &schema(), &ok).is_ok());
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn huge_deep_and_inexact_values() {
        let schema = obj(json!({"type": "object", "properties": {
            "n": {"type": "integer"},
            "r": {"type": "number"},
            "ids": {"type": "array", "items": {"type": ["integer", "null"]}},
            "any": {}
        }, "additionalProperties": false}));
        let v = LazyValidator::default();
        // A megabyte is shown cut short.
        let big = "x".repeat(1 << 20);
        let p = check(&v, &schema, &obj(json!({ "n": big }))).expect_err("problems");
        assert_eq!(
            p,
            vec![format!(
                "`n`: \"{}…\" (1048576 characters) is not of type \"integer\"",
                "x".repeat(79)
            )]
        );
        let p = check(&v, &schema, &obj(json!({ big.clone(): 1 }))).expect_err("problems");
        assert_eq!(
            p,
            vec![format!(
                "unknown argument `{}…`: valid arguments: n, r, ids, any.",
                "x".repeat(64)
            )]
        );
        // Too deep: refused before validation.
        let mut deep = json!(1);
        for _ in 0..=MAX_DEPTH {
            deep = Value::Array(vec![deep]);
        }
        assert!(depth_exceeds(&deep, MAX_DEPTH));
        let p = check(&v, &schema, &obj(json!({ "any": deep }))).expect_err("problems");
        assert_eq!(
            p,
            vec!["`any`: the value is nested more than 128 levels deep; refused".to_string()]
        );
        let mut ok = json!(1);
        for _ in 0..MAX_DEPTH {
            ok = Value::Array(vec![ok]);
        }
        assert!(!depth_exceeds(&ok, MAX_DEPTH));
        assert!(check(&v, &schema, &obj(json!({ "any": ok }))).is_ok());
        // Integers beyond 64 bits: refused; the 64-bit extremes and numbers are fine.
        let p =
            check(&v, &schema, &obj(json!({"n": 1e308, "ids": [1, -1e20]}))).expect_err("problems");
        assert_eq!(
            p,
            vec![
                "`n`: 1e+308 is outside the 64-bit integer range; JSON parsing already rounded it, so it cannot be sent exactly".to_string(),
                "`ids[1]`: -1e+20 is outside the 64-bit integer range; JSON parsing already rounded it, so it cannot be sent exactly".to_string(),
            ]
        );
        assert!(check(&v, &schema, &obj(json!({"n": u64::MAX, "r": 1e308}))).is_ok());
        assert!(
            check(
                &v,
                &schema,
                &obj(json!({"n": i64::MIN, "ids": [null, 5.0]}))
            )
            .is_ok()
        );
        assert_eq!(preview(&json!("seven")), "\"seven\"");
        assert_eq!(
            preview(&json!((0..100).collect::<Vec<i32>>())),
            format!(
                "{}… (an array of 100 items)",
                &serde_json::to_string(&(0..100).collect::<Vec<i32>>()).expect("json")[..80]
            )
        );
    }

    /// Fuzz target `validate_args`: the unknown-arguments error adds up to 11 lines at once, so
    /// the cap of 20 was checked after it and the report had 22. The cap is on the lines now.
    #[test]
    fn problem_lines_stay_capped_whatever_adds_them() {
        let mut props = serde_json::Map::new();
        let mut args = serde_json::Map::new();
        for i in 0..15 {
            props.insert(format!("p{i}"), json!({"type": "integer"}));
            args.insert(format!("p{i}"), json!("x"));
        }
        for i in 0..15 {
            args.insert(format!("zz{i}"), json!(1));
        }
        let s = obj(json!({"type": "object", "properties": props, "additionalProperties": false}));
        let problems = check(&LazyValidator::default(), &s, &args).expect_err("invalid");
        assert_eq!(problems.len(), MAX_PROBLEMS + 1, "{problems:#?}");
        assert_eq!(
            problems.last().map(String::as_str),
            Some("(more problems not shown)")
        );
    }

    #[test]
    fn paths_display() {
        assert_eq!(display_path("/a/0/b~1c"), "a[0].b/c");
        assert_eq!(display_path(""), "");
    }
}

#[cfg(test)]
mod wire_format_tests {
    use super::*;

    #[test]
    fn unambiguous_formats() {
        assert_eq!(
            wire_format_ok("uuid", "123e4567-e89b-12d3-a456-426614174000"),
            Some(true)
        );
        assert_eq!(
            wire_format_ok("uuid", "123e4567e89b12d3a456426614174000"),
            Some(false)
        );
        assert_eq!(wire_format_ok("date", "2024-02-29"), Some(true));
        assert_eq!(wire_format_ok("date", "2023-02-29"), Some(false));
        assert_eq!(wire_format_ok("date", "2024-5-1"), Some(false));
        for ok in [
            "2024-05-01T12:00:00Z",
            "2024-05-01t12:00:00.123+02:00",
            "2024-05-01T23:59:60-05:30",
        ] {
            assert_eq!(wire_format_ok("date-time", ok), Some(true), "{ok}");
        }
        for bad in [
            "2024-05-01",
            "2024-05-01T12:00Z",
            "2024-05-01T25:00:00Z",
            "2024-05-01 12:00:00Z",
            "2024-05-01T12:00:00",
        ] {
            assert_eq!(wire_format_ok("date-time", bad), Some(false), "{bad}");
        }
        assert_eq!(wire_format_ok("ipv4", "192.0.2.1"), Some(true));
        assert_eq!(wire_format_ok("ipv4", "192.0.2"), Some(false));
        assert_eq!(wire_format_ok("ipv6", "2001:db8::1"), Some(true));
        assert_eq!(wire_format_ok("email", "a.b@example.com"), Some(true));
        assert_eq!(wire_format_ok("email", "not an email"), Some(false));
        assert_eq!(wire_format_ok("uri", "whatever"), None);
    }
}

#[cfg(test)]
mod pattern_tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    /// #23 finding 11: a pattern the engine cannot compile costs only its own check; the enum
    /// beside it is still enforced (the whole tool used to go unvalidated), and the pattern is
    /// checked by the ECMA engine.
    #[test]
    fn a_foreign_pattern_fails_closed_per_keyword() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["a", "b"]},
                "code": {"type": "string", "pattern": "^x[^]z$"},
                "nested": {"type": "array", "items": {"type": "string", "pattern": "\\0|ok"}}
            },
            "additionalProperties": false
        }));
        let v = LazyValidator::default();
        assert!(v.get(&s).is_ok(), "compiles with the pattern moved");
        let ok = |a: Value| check(&v, &s, a.as_object().unwrap()).is_ok();
        assert!(ok(json!({"kind": "a", "code": "x\nz", "nested": ["ok"]})));
        assert!(!ok(json!({"kind": "evil"})), "enum enforced");
        assert!(
            !ok(json!({"code": "xyy"})),
            "pattern enforced by the ECMA engine"
        );
        assert!(!ok(json!({"nested": ["nope"]})));
        assert!(
            !ok(json!({"code": format!("x{}z", "y".repeat(5_000))})),
            "too long to check"
        );
    }

    /// Fuzz target `validate_args`: fancy-regex compiles a variable-length lookbehind into an
    /// automaton with no size limit, and `(?<=(a+)*…]{1221220404})` asked for 4 GB, then more,
    /// while the schema compiled. A lookbehind that heavy is never compiled: its `pattern` fails
    /// closed, and a `patternProperties` key like it (or one no engine compiles) holds its
    /// subschema for every property; light lookbehinds and plain keys are kept as they are.
    #[test]
    fn heavy_lookbehinds_are_never_compiled() {
        let heavy = "(?<=(a+)*x{1221220404})y";
        assert_eq!(bounded_source(heavy), None);
        assert_eq!(bounded_source("(?<!(a+)*[a-z]{1,20000000})y"), None);
        for light in [
            "(?<=(a+)+)b",
            "(?<=[a-z]{1,64})x",
            "(?<!\\\\)\\d{1,10}",
            "x{99999999}",
        ] {
            assert_eq!(bounded_source(light).as_deref(), Some(light), "{light}");
        }
        assert_eq!(bounded_source("\\0(?<=a)").as_deref(), Some("\\x00(?<=a)"));
        let started = std::time::Instant::now();
        let s = schema(json!({
            "type": "object",
            "properties": {
                "p": {"type": "string", "pattern": heavy},
                "kind": {"type": "string", "enum": ["a"]}
            }
        }));
        let v = LazyValidator::default();
        assert!(v.get(&s).is_ok(), "compiles");
        let ok = |a: Value| check(&v, &s, a.as_object().unwrap()).is_ok();
        assert!(!ok(json!({"p": "y"})), "the heavy pattern fails closed");
        assert!(!ok(json!({"kind": "b"})), "the enum beside it is enforced");
        assert!(ok(json!({"kind": "a"})));
        let keys = |heavy_key: bool| {
            let mut pp = json!({
                "^tag_": {"type": "string"},
                "^n_\\0": {"type": "boolean"}
            });
            if heavy_key {
                pp[heavy] = json!({"type": "integer"});
                pp["(?R)x"] = json!({"minimum": 5});
            }
            schema(json!({"type": "object", "patternProperties": pp}))
        };
        for heavy_key in [false, true] {
            let s = keys(heavy_key);
            let v = LazyValidator::default();
            assert!(v.get(&s).is_ok(), "compiles");
            let ok = |a: Value| check(&v, &s, a.as_object().unwrap()).is_ok();
            assert!(!ok(json!({"tag_a": 1})), "a plain key is kept");
            assert!(ok(json!({"tag_a": "1"})) != heavy_key);
            assert!(
                !ok(json!({"n_\u{0}": 1})),
                "an ECMA-262 key, spelled the engine's way"
            );
            // The unsafe keys' subschemas hold for every property.
            assert_eq!(ok(json!({"name": "x"})), !heavy_key);
            assert!(ok(json!({"name": 7})));
            assert_eq!(ok(json!({"name": 4})), !heavy_key);
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(pattern_property_key("^tag_").as_deref(), Some("^tag_"));
        assert_eq!(pattern_property_key("(?R)x"), None);
        assert_eq!(pattern_property_key("(unclosed"), None);
        // `additionalProperties` beside an unsafe key stays as strict as it was: the property
        // the key may have matched is not declared, so it is refused.
        // (Nested: the unknown-arguments check does not see it.)
        let s = schema(json!({
            "type": "object",
            "properties": {"o": {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "patternProperties": {heavy: {"type": "integer"}, "^b": {}},
                "additionalProperties": false
            }}
        }));
        let v = LazyValidator::default();
        let ok = |o: Value| check(&v, &s, json!({ "o": o }).as_object().unwrap()).is_ok();
        assert!(ok(json!({"a": 1, "b1": 2})));
        assert!(!ok(json!({"a": 1, "zzz": 2})), "undeclared");
        assert!(
            !ok(json!({"b1": "x"})),
            "the unsafe key's subschema holds for b1 too"
        );
    }

    /// #23 finding 14: nested quantifiers with a lookaround over a long argument are bounded.
    #[test]
    fn pathological_patterns_are_bounded() {
        for pattern in ["(?<=(a+)+)b", "^(?=(a+)+$)c", "^((a+)+\\1)$"] {
            let s = schema(json!({
                "type": "object",
                "properties": {"p": {"type": "string", "pattern": pattern}}
            }));
            let v = LazyValidator::default();
            let arg = json!({"p": format!("{}!", "a".repeat(100_000))});
            let started = std::time::Instant::now();
            let _ = check(&v, &s, arg.as_object().unwrap());
            let took = started.elapsed();
            assert!(
                took < std::time::Duration::from_secs(5),
                "{pattern}: {took:?}"
            );
        }
    }

    /// Fuzz target `validate_args`: an unanchored pattern with a large counted repetition
    /// (`\xEB[a-\xEB]{13464}`) searched a few KB for 3.5 s of CPU: the linear engine's cost is
    /// the string's length times the automaton's size. Such a pattern is weighed from its syntax
    /// tree, and strings past its budget fail with a message that says so; an anchored one, or a
    /// light one, is searched as before.
    #[test]
    fn heavy_unanchored_patterns_search_bounded_strings() {
        let heavy = "\u{EB}[a-\u{EB}]{13464}";
        let cap = heavy_pattern_max_len(heavy).expect("heavy");
        assert!((64..=400).contains(&cap), "{cap}");
        assert_eq!(heavy_pattern_max_len("^.{0,10000}$"), None, "anchored");
        assert_eq!(heavy_pattern_max_len("[a-z0-9]{1,64}"), None, "light");
        assert_eq!(
            heavy_pattern_max_len("a{10001000}").map(|n| n >= 64),
            Some(true)
        );
        let s = schema(json!({
            "type": "object",
            "properties": {"p": {"type": "string", "pattern": heavy}}
        }));
        let v = LazyValidator::default();
        let long = json!({"p": "\u{EB}".repeat(5_000)});
        let problems = check(&v, &s, long.as_object().unwrap()).expect_err("too long");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("too long to check against the pattern")),
            "{problems:?}"
        );
        let s = schema(json!({
            "type": "object",
            "properties": {"p": {"type": "string", "pattern": "x[a-c]{5000}"}}
        }));
        let fits = json!({"p": format!("x{}", "a".repeat(5000))});
        // Weight 20,001 (unanchored): 999 bytes are searched; this string is longer.
        assert!(check(&LazyValidator::default(), &s, fits.as_object().unwrap()).is_err());
        let s = schema(json!({
            "type": "object",
            "properties": {"p": {"type": "string", "pattern": "^x[a-c]{5000}$"}}
        }));
        assert_eq!(
            check(&LazyValidator::default(), &s, fits.as_object().unwrap()),
            Ok(()),
            "anchored: searched whole"
        );
    }

    /// Fuzz target `validate_args`: `N?.\>.+` (then a few non-ASCII characters) took 3.7 s of
    /// CPU over a long non-ASCII argument: the linear engine read `\>` as a Unicode word-end
    /// assertion, which keeps it off its DFA. ECMA-262 reads `\>` as `>` and `\b` as an ASCII
    /// word boundary, and so does the validator now; a Unicode word boundary written in the
    /// engine's own syntax is bounded like a heavy pattern.
    #[test]
    fn word_boundaries_mean_what_ecma_262_says_and_stay_fast() {
        let ecma = |p: &str| ecma_to_fancy(p).expect("ECMA-262");
        assert_eq!(ecma("a\\>b\\<").as_deref(), Some("a>b<"));
        assert_eq!(ecma("[\\>]\\\\>\\b"), None, "in a class, or escaped");
        assert_eq!(ecma("[]\\>").as_deref(), Some("[^\\s\\S]>"));
        assert_eq!(
            ecma_to_fancy("(?=a)\\>").unwrap().as_deref(),
            Some("(?=a)>")
        );
        assert!(
            !is_linear("(?-u)x"),
            "the validator's own engine refuses it"
        );
        let v = LazyValidator::default();
        let s = schema(json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "pattern": "^a\\>b$"},
                "w": {"type": "string", "pattern": "\\bcat\\b"},
                "u": {"type": "string", "pattern": "(?-u)x"},
                "e": {"type": "string", "enum": ["x"]},
            }
        }));
        let ok = |a: Value| check(&v, &s, a.as_object().unwrap()).is_ok();
        assert!(ok(json!({"a": "a>b"})));
        assert!(!ok(json!({"a": "ab"})));
        assert!(ok(json!({"w": "a cat!"})));
        assert!(!ok(json!({"w": "concat"})));
        // A pattern the validator's engine refuses fails its own values, not the whole tool.
        assert!(!ok(json!({"u": "x"})));
        assert!(!ok(json!({"e": "y"})));
        // The finding: bounded now (a word boundary is heavy), checked at once.
        let found = "N?.\\>.+\u{0}\u{FFFD}\u{FFFD}n\u{FFFD}.\u{5A0}\u{FFFD}";
        let long = json!({"p": "\u{5A0}\u{FFFD}".repeat(200_000)});
        let started = std::time::Instant::now();
        for pattern in [found, "N?.\\b.+\u{0}\u{FFFD}", "^\\B.+\u{0}y"] {
            let s = schema(json!({
                "type": "object",
                "properties": {"p": {"type": "string", "pattern": pattern}}
            }));
            let v = LazyValidator::default();
            assert!(
                check(&v, &s, long.as_object().unwrap()).is_err(),
                "{pattern}"
            );
        }
        assert!(
            heavy_pattern_max_len("^\\bx.+y").is_some(),
            "a word boundary is heavy"
        );
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(2), "{took:?}");
    }

    /// Fuzz target `validate_args`: nested quantifiers in a pattern only an ECMA-262 engine
    /// compiled (`\0`) took seconds at 24 characters and doubled with each one more (the length
    /// cap does not help): such patterns are matched with the step limit now, or fail closed.
    #[test]
    fn ecma_only_patterns_are_bounded_too() {
        for pattern in [
            "^((a+)+\\0)$",
            "^(a|a)*\\0$",
            "^(a+)+\\cJ$",
            "^x[^]*(a+)+$",
            "^[\\d-z](a+)+$",
        ] {
            let s = schema(json!({
                "type": "object",
                "properties": {"p": {"type": "string", "pattern": pattern}}
            }));
            let v = LazyValidator::default();
            let arg = json!({"p": format!("{}!", "a".repeat(40))});
            let started = std::time::Instant::now();
            assert!(
                check(&v, &s, arg.as_object().unwrap()).is_err(),
                "{pattern}"
            );
            let took = started.elapsed();
            assert!(
                took < std::time::Duration::from_secs(5),
                "{pattern}: {took:?}"
            );
        }
    }

    #[test]
    fn ecma_syntax_is_rewritten_for_the_bounded_engine() {
        let ecma = |p: &str| ecma_to_fancy(p).expect("ECMA-262");
        assert_eq!(ecma("a\\0|b").as_deref(), Some("a\\x00|b"));
        assert_eq!(ecma("\\01"), None, "an octal-looking escape stays");
        assert_eq!(ecma("x[^]z").as_deref(), Some("x[\\s\\S]z"));
        assert_eq!(ecma("x[]z").as_deref(), Some("x[^\\s\\S]z"));
        assert_eq!(ecma("[\\]]\\[^]"), None, "escaped brackets are not classes");
        assert_eq!(ecma("[a^]]"), None);
        assert_eq!(ecma("\\g0{2}").as_deref(), Some("g0{2}"));
        assert_eq!(ecma("(?<=a)(?<n>b)\\k<n>(?:c)(?=d)(?!e)(?<!f)"), None);
        for p in [
            "(?R)",
            "a(?1)",
            "(?&n)",
            "(?P>n)",
            "(?>a+)",
            "(?|a|b)",
            "a\\Kb",
            "(?-1)",
            "(?+1)",
            "(?(4)at)ern",
            "(a)(?(1)b|c)",
            "a*+",
            "(ab)++",
            "x?+y",
            "a{2,}+",
            "a{1,3}+b",
        ] {
            assert_eq!(ecma_to_fancy(p), Err(NotEcma), "{p}");
        }
        for p in [
            "a+?", "a*?b", "\\++", "[*+]", "x{+", "x{a}+", "a{2}?", "(?:a)+",
        ] {
            assert!(ecma_to_fancy(p).is_ok(), "{p} is ECMA-262");
        }
        // Fuzz target `validate_args`: a possessive quantifier took 41 s of CPU in fancy-regex.
        let s = schema(json!({
            "type": "object",
            "properties": {"p": {"type": "string", "pattern": "\u{FFFD}*+\u{FFFD}\u{FFFD}x"}}
        }));
        let started = std::time::Instant::now();
        let long = json!({"p": "\u{FFFD}".repeat(1_300)});
        assert!(check(&LazyValidator::default(), &s, long.as_object().unwrap()).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        // Fuzz target `validate_args`: fancy-regex ran this conditional with an index out of
        // bounds (a panic). Not ECMA-262: it fails closed, without running.
        let s = schema(json!({
            "type": "object",
            "properties": {"p": {"type": "string", "pattern": "(?(4)at)ern"}}
        }));
        let problems = check(
            &LazyValidator::default(),
            &s,
            json!({"p": "atern"}).as_object().unwrap(),
        )
        .expect_err("fails closed");
        assert!(problems[0].contains("cannot be checked"), "{problems:?}");
        let s = schema(json!({
            "type": "object",
            "properties": {"p": {"type": "string", "pattern": "^x[]?[^]\\0$"}}
        }));
        let v = LazyValidator::default();
        let ok = |a: &str| check(&v, &s, json!({ "p": a }).as_object().unwrap()).is_ok();
        assert!(ok("x\n\0"));
        assert!(!ok("x\n0"));
        assert_eq!(ecma("\\cJ\\cj").as_deref(), Some("\\x0A\\x0A"));
        // fancy-regex's recursive subroutine call, repeated: compiling it took 2.3 GB and 5 s.
        // As ECMA-262 reads it (`\g` is `g`) it is a plain pattern, checked at once.
        let s = schema(json!({
            "type": "object",
            "properties": {"p": {"type": "string", "pattern": "^-\\g0{2}(?=x)|ok"}}
        }));
        let v = LazyValidator::default();
        let started = std::time::Instant::now();
        assert!(check(&v, &s, json!({ "p": "-g00x" }).as_object().unwrap()).is_ok());
        assert!(check(&v, &s, json!({ "p": "-g0x" }).as_object().unwrap()).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        // A class escape as a range end (ECMA-262 Annex B): no bounded engine compiles it, so
        // it fails closed.
        let s = schema(json!({
            "type": "object",
            "properties": {"p": {"type": "string", "pattern": "^[\\d-z]$"}}
        }));
        let v = LazyValidator::default();
        let p = check(&v, &s, json!({ "p": "-" }).as_object().unwrap()).unwrap_err();
        assert!(p[0].contains("cannot be checked"), "{p:?}");
    }
}

#[cfg(test)]
mod null_tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn schema() -> Map<String, Value> {
        obj(json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer"},
                "cursor": {"type": ["string", "null"]},
                "name": {"type": "string"},
                "shape": {"oneOf": [
                    {"type": "object", "properties": {"r": {"type": "number"}}},
                    {"type": "object", "properties": {"w": {"type": "number"}}}
                ]},
                "owner": {"$ref": "#/$defs/Owner"},
                "mode": {"enum": ["a", "b"]},
                "any": {"description": "untyped"}
            },
            "required": ["name"],
            "additionalProperties": false,
            "$defs": {"Owner": {"anyOf": [
                {"type": "object", "properties": {"id": {"type": "integer"}, "nick": {"type": "string"}},
                 "additionalProperties": false},
                {"type": "null"}
            ]}}
        }))
    }

    #[test]
    fn unset_nulls_are_dropped_by_schema() {
        let s = schema();
        let args = obj(json!({
            "limit": null, "cursor": null, "name": null, "mode": null, "any": null,
            "shape": {"r": null}, "owner": {"id": 1, "nick": null, "zz": null}, "typo": null
        }));
        // Optional non-nullable (`limit`, `mode`, `owner.nick` through a `$ref` and a nullable
        // `anyOf`) go; nullable, untyped, required and undeclared ones stay; inside an
        // ambiguous `oneOf` nothing is dropped.
        assert_eq!(
            Value::Object(drop_unset_nulls(&s, &args).into_owned()),
            json!({"cursor": null, "name": null, "any": null, "shape": {"r": null},
                   "owner": {"id": 1, "zz": null}, "typo": null})
        );
        let clean = obj(json!({"name": "x", "cursor": null}));
        assert!(matches!(
            drop_unset_nulls(&s, &clean),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn validation_sees_the_call_without_unset_nulls() {
        let s = schema();
        let v = LazyValidator::default();
        assert!(
            check(
                &v,
                &s,
                &obj(json!({"name": "x", "limit": null, "mode": null}))
            )
            .is_ok()
        );
        let p = check(&v, &s, &obj(json!({"name": null}))).expect_err("required null");
        assert_eq!(p, ["`name`: null is not of type \"string\""]);
        let p = check(&v, &s, &obj(json!({"name": "x", "typo": null}))).expect_err("unknown");
        assert!(p[0].starts_with("unknown argument `typo`"), "{p:?}");
    }
}

#[cfg(test)]
mod empty_value_tests {
    use super::*;
    use crate::model::{
        ArgBinding, ArgLocation, BodyBinding, BodyKind, HttpMethod, QueryStyle, Route,
    };
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("object")
    }

    fn q(name: &str, style: QueryStyle, explode: bool, required: bool) -> ArgBinding {
        ArgBinding {
            arg: name.into(),
            wire: name.into(),
            location: ArgLocation::query(style, explode),
            required,
            content_type: None,
        }
    }

    fn route(args: Vec<ArgBinding>) -> Route {
        Route {
            args,
            ..Route::new(HttpMethod::Get, "/x")
        }
    }

    fn dropped(r: &Route, a: Value) -> Value {
        Value::Object(
            drop_empty_values(None, r, &obj(a))
                .expect("no required empty")
                .into_owned(),
        )
    }

    /// #36 item 13: the empty-query rule holds for array items and object members in every
    /// style, not only for a whole `""`.
    #[test]
    fn empty_items_and_members_are_left_out_in_every_style() {
        use QueryStyle::*;
        for (style, explode) in [
            (Form, true),
            (Form, false),
            (SpaceDelimited, false),
            (PipeDelimited, false),
            (DeepObject, true),
        ] {
            let r = route(vec![q("ids", style, explode, false)]);
            let at = format!("{style:?} explode={explode}");
            assert_eq!(
                dropped(&r, json!({"ids": ["a", "", null, "b"]})),
                json!({"ids": ["a", "b"]}),
                "{at}"
            );
            assert_eq!(
                dropped(&r, json!({"ids": {"a": "1", "b": "", "c": null}})),
                json!({"ids": {"a": "1"}}),
                "{at}"
            );
            for nothing in [json!(""), json!([]), json!(["", null]), json!({"b": ""})] {
                assert_eq!(dropped(&r, json!({"ids": nothing})), json!({}), "{at}");
            }
            let r = route(vec![q("ids", style, explode, true)]);
            let e =
                drop_empty_values(None, &r, &obj(json!({"ids": ["", ""]}))).expect_err("required");
            assert_eq!(e[0].arg, "ids");
            assert!(
                e[0].message
                    .starts_with("argument `ids` (query `ids`): has only empty items")
                    && e[0].message.contains("no empty value"),
                "{at}: {}",
                e[0].message
            );
        }
        // deepObject at depth: empty leaves go, array items keep their indices.
        let r = route(vec![q("f", DeepObject, true, false)]);
        assert_eq!(
            dropped(
                &r,
                json!({"f": {"a": {"b": "", "c": "1"}, "d": {"e": ""}, "l": [{"k": ""}, {"k": "v"}]}})
            ),
            json!({"f": {"a": {"c": "1"}, "l": [{}, {"k": "v"}]}})
        );
        // Arrays of objects outside deepObject are sent as JSON text: kept whole.
        let r = route(vec![q("m", Form, true, false)]);
        let a = obj(json!({"m": [{"k": ""}]}));
        assert!(matches!(
            drop_empty_values(None, &r, &a),
            Ok(std::borrow::Cow::Borrowed(_))
        ));
        // Where the spec allows empty values nothing is touched.
        let mut allowed = q("ids", Form, true, true);
        allowed.location = ArgLocation::Query {
            style: Form,
            explode: true,
            allow_reserved: false,
            allow_empty_value: true,
        };
        let a = obj(json!({"ids": ["a", ""]}));
        assert!(matches!(
            drop_empty_values(None, &route(vec![allowed]), &a),
            Ok(std::borrow::Cow::Borrowed(_))
        ));
        // A JSON `content` parameter is sent as JSON text, never empty.
        let mut content = q("filter", Form, true, true);
        content.content_type = Some("application/json".into());
        let a = obj(json!({"filter": ""}));
        assert!(drop_empty_values(None, &route(vec![content]), &a).is_ok());
    }

    /// #36 item 13: the value left out is not validated (an optional `""` under `minLength: 1`
    /// was refused, though it would not have been sent), and what is validated is what is sent.
    #[test]
    fn values_not_sent_are_not_validated() {
        let s = obj(json!({"type": "object", "properties": {
            "nextToken": {"type": "string", "minLength": 1},
            "ids": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
            "since": {"type": "string", "format": "date-time"},
            "q": {"type": "string"}
        }, "required": ["q"]}));
        let r = route(vec![
            q("nextToken", QueryStyle::Form, true, false),
            q("ids", QueryStyle::Form, true, false),
            q("since", QueryStyle::Form, true, false),
            q("q", QueryStyle::Form, true, true),
        ]);
        let v = LazyValidator::default();
        let call = obj(json!({"nextToken": "", "ids": ["ab", ""], "since": "", "q": "x"}));
        assert_eq!(check_call(&v, &s, &r, &call), Ok(()));
        let p = check_call(&v, &s, &r, &obj(json!({"q": ""}))).expect_err("required empty");
        assert_eq!(
            p,
            [
                "argument `q` (query `q`): is empty, and the API allows no empty value for this parameter"
            ]
        );
        // Refused empty values and the schema's problems come in one answer.
        let p = check_call(&v, &s, &r, &obj(json!({"q": "", "ids": ["AB"]}))).expect_err("both");
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(
            p[0].starts_with("argument `q` (query `q`): is empty"),
            "{p:?}"
        );
        assert!(p[1].starts_with("`ids[0]`"), "{p:?}");
        // What is sent is still validated.
        let p = check_call(&v, &s, &r, &obj(json!({"q": "x", "ids": ["AB", ""]})))
            .expect_err("pattern");
        assert!(p[0].starts_with("`ids[0]`"), "{p:?}");
    }

    fn body_route(kind: BodyKind, ct: &str, required: bool) -> Route {
        Route {
            args: vec![ArgBinding {
                arg: "body".into(),
                wire: String::new(),
                location: ArgLocation::Body,
                required,
                content_type: None,
            }],
            body: Some(BodyBinding {
                kind,
                content_type: ct.into(),
                required,
                flattened: false,
                encoding: Vec::new(),
            }),
            ..Route::new(HttpMethod::Put, "/x")
        }
    }

    /// #36 item 14: a required body that would be sent as zero bytes is refused, naming the
    /// argument; an optional one is not sent; a schema that says "" is a value lets it through.
    #[test]
    fn empty_required_bodies_are_refused() {
        let plain = obj(json!({"properties": {"body": {"type": "string"}}}));
        for (kind, ct, empty) in [
            (BodyKind::Binary, "application/octet-stream", json!("")),
            (BodyKind::Binary, "application/jwt", json!("  \n")),
            (
                BodyKind::Binary,
                "application/pdf",
                json!("data:application/pdf;base64,"),
            ),
            (BodyKind::Text, "text/plain", json!("")),
            (
                BodyKind::Form,
                "application/x-www-form-urlencoded",
                json!(""),
            ),
        ] {
            let r = body_route(kind, ct, true);
            let e =
                drop_empty_values(Some(&plain), &r, &obj(json!({"body": empty}))).expect_err(ct);
            assert_eq!(e[0].arg, "body");
            assert!(
                e[0].message.starts_with(&format!(
                    "argument `body` (the request body, {ct}): is empty"
                )),
                "{}",
                e[0].message
            );
            let r = body_route(kind, ct, false);
            assert_eq!(
                Value::Object(
                    drop_empty_values(Some(&plain), &r, &obj(json!({"body": empty})))
                        .expect(ct)
                        .into_owned()
                ),
                json!({}),
                "{ct}"
            );
        }
        // Content, and bodies never sent empty, are kept.
        let a = obj(json!({"body": "aGk="}));
        let r = body_route(BodyKind::Binary, "application/octet-stream", true);
        assert!(matches!(
            drop_empty_values(Some(&plain), &r, &a),
            Ok(std::borrow::Cow::Borrowed(_))
        ));
        for kind in [BodyKind::Json, BodyKind::Multipart] {
            let a = obj(json!({"body": ""}));
            assert!(drop_empty_values(Some(&plain), &body_route(kind, "x/y", true), &a).is_ok());
        }
        // The schema says an empty body is a value.
        for s in [
            json!({"type": "string", "minLength": 0}),
            json!({"type": "string", "maxLength": 0}),
            json!({"enum": ["", "x"]}),
            json!({"$ref": "#/$defs/E"}),
        ] {
            let schema = obj(json!({"properties": {"body": s}, "$defs": {"E": {"const": ""}}}));
            let r = body_route(BodyKind::Text, "text/plain", true);
            assert!(
                drop_empty_values(Some(&schema), &r, &obj(json!({"body": ""}))).is_ok(),
                "{schema:?}"
            );
        }
    }

    /// #36 item 14: a parameter's format is found where the schema puts it: behind a `$ref`, in
    /// `allOf`, in a nullable `anyOf`, on array items and object members.
    #[test]
    fn wire_formats_are_checked_wherever_the_schema_puts_them() {
        let s = obj(json!({"type": "object", "properties": {
            "direct": {"type": "string", "format": "date-time", "pattern": "^.*$"},
            "viaRef": {"$ref": "#/$defs/When"},
            "viaAllOf": {"allOf": [{"$ref": "#/$defs/When"}], "description": "d"},
            "nullable": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
            "either": {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]},
            "list": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/When"}}, {"type": "null"}]},
            "filter": {"type": "object", "properties": {"from": {"$ref": "#/$defs/When"}},
                       "additionalProperties": {"type": "string", "format": "uuid"}}
        }, "$defs": {"When": {"type": "string", "format": "date-time"}}}));
        let r = route(
            [
                "direct", "viaRef", "viaAllOf", "nullable", "either", "list", "filter",
            ]
            .into_iter()
            .map(|n| q(n, QueryStyle::DeepObject, true, false))
            .collect(),
        );
        let bad = "2024-01-01T00:00:00-69:45";
        for (arg, value, at) in [
            ("direct", json!(bad), "direct"),
            ("viaRef", json!(bad), "viaRef"),
            ("viaAllOf", json!(bad), "viaAllOf"),
            ("nullable", json!(bad), "nullable"),
            ("either", json!(bad), "either"),
            ("list", json!(["2024-01-01T00:00:00Z", bad]), "list[1]"),
            ("filter", json!({"from": bad}), "filter.from"),
            ("filter", json!({"id": "nope"}), "filter.id"),
        ] {
            let p = check_wire_formats(&s, &r, &obj(json!({ arg: value })))
                .expect_err(&format!("{arg}: {value}"));
            assert!(p[0].starts_with(&format!("`{at}`: ")), "{p:?}");
        }
        for (arg, value) in [
            ("direct", json!("2024-01-01T00:00:00-09:45")),
            ("either", json!("2024-01-01")),
            ("nullable", json!(null)),
            ("list", json!(["2024-01-01T00:00:00Z"])),
            (
                "filter",
                json!({"from": "2024-01-01T00:00:00Z", "id": "123e4567-e89b-12d3-a456-426614174000"}),
            ),
        ] {
            assert_eq!(
                check_wire_formats(&s, &r, &obj(json!({ arg: value }))),
                Ok(()),
                "{arg}"
            );
        }
    }
}

#[cfg(test)]
mod per_call_cost {
    use super::*;
    use crate::model::{ArgBinding, ArgLocation, HttpMethod, QueryStyle, Route};
    use serde_json::json;
    use std::time::Instant;

    /// Per-call cost of validation, compiled once (the server's `LazyValidator` per tool) vs
    /// compiled on every call. Prints figures; asserts nothing timed. Run with
    /// `cargo test -p openapi-mcp-toolset --release --lib per_call_cost -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a test"]
    fn validation_per_call_cost() {
        let mut props = Map::new();
        let mut args = Map::new();
        let mut bindings = Vec::new();
        for i in 0..20 {
            let name = format!("p{i}");
            let pattern = match i % 4 {
                0 => r"^[a-z0-9_-]{1,64}$",
                1 => r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$",
                2 => r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$",
                _ => r"^arn:aws:[a-z0-9-]+:[a-z0-9-]*:\d{12}:.+$",
            };
            props.insert(
                name.clone(),
                json!({"type": "string", "pattern": pattern, "maxLength": 256}),
            );
            args.insert(
                name.clone(),
                json!(match i % 4 {
                    0 => "abc_1",
                    1 => "2024-05-01T12:00:00Z",
                    2 => "host-name",
                    _ => "arn:aws:s3:eu-west-1:123456789012:bucket/x",
                }),
            );
            bindings.push(ArgBinding {
                arg: name.clone(),
                wire: name,
                location: ArgLocation::query(QueryStyle::Form, true),
                required: false,
                content_type: None,
            });
        }
        let schema = json!({"type": "object", "properties": props, "additionalProperties": false});
        let schema = schema.as_object().cloned().expect("object");
        let route = Route {
            args: bindings,
            ..Route::new(HttpMethod::Get, "/x")
        };
        let n = 2000u32;
        let v = LazyValidator::default();
        let t = Instant::now();
        assert_eq!(check_call(&v, &schema, &route, &args), Ok(()));
        let first = t.elapsed();
        let t = Instant::now();
        for _ in 0..n {
            assert_eq!(check_call(&v, &schema, &route, &args), Ok(()));
        }
        let cached = t.elapsed() / n;
        let t = Instant::now();
        for _ in 0..n {
            assert_eq!(check(&v, &schema, &args), Ok(()));
        }
        let schema_only = t.elapsed() / n;
        let t = Instant::now();
        for _ in 0..n {
            let sent = drop_empty_values(Some(&schema), &route, &args).expect("none empty");
            assert_eq!(check_wire_formats(&schema, &route, &sent), Ok(()));
        }
        let wire_only = t.elapsed() / n;
        let m = 50u32;
        let t = Instant::now();
        for _ in 0..m {
            assert_eq!(
                check_call(&LazyValidator::default(), &schema, &route, &args),
                Ok(())
            );
        }
        let fresh = t.elapsed() / m;
        println!(
            "20 patterned string arguments: first call (compiles) {first:?}; later calls {cached:?} each (the schema {schema_only:?}, empty values and wire formats {wire_only:?}); compiling on every call would cost {fresh:?} each"
        );
    }
}
