//! The `select` fuzz target's check (#36): a `_select` expression and a document, through the
//! server's path (`fit::check_selection` before the call, then the budgeted evaluator on the
//! API's answer). It must not panic or overflow the stack, must finish within the time limit the
//! caller gives, must keep its result within the output budget, must give one-line errors, and
//! must agree with the `jmespath` crate's own interpreter wherever that one can be run safely.
//!
//! An input is the expression's bytes, a NUL, then the document as JSON text (any other bytes
//! are decoded into a document by [`Reader::value`]).

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use openapi_mcp_runtime::forward::fit::{
    self,
    select::{self, ErrorKind, Limits},
};

use super::MAX_INPUT;
use super::reader::Reader;

/// The server's `--max-response-bytes` in the check: small, so the floors of the budgets apply
/// (1 M steps, 16 MiB of work, 64 KiB of output).
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024;

/// A decoded input.
pub struct Case {
    pub expr: String,
    pub doc: Value,
}

pub fn decode(data: &[u8]) -> Option<Case> {
    if data.len() > MAX_INPUT {
        return None;
    }
    let (e, rest) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let expr = String::from_utf8_lossy(e).into_owned();
    let doc = serde_json::from_slice(rest).unwrap_or_else(|_| Reader::new(rest).value(4, 4096));
    Some(Case { expr, doc })
}

/// An input's bytes (for seeds).
pub fn encode(expr: &str, doc: &Value) -> Vec<u8> {
    let mut out = expr.as_bytes().to_vec();
    out.push(0);
    out.extend_from_slice(doc.to_string().as_bytes());
    out
}

/// What the check saw (for the replay test's own assertions).
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Refused before evaluation (syntax, a limit, an unknown function).
    Refused(ErrorKind),
    Selected(Value),
    Failed(ErrorKind),
}

/// The CPU time the calling thread has run (Linux: `/proc/thread-self/schedstat`, in ns), or
/// `None` where the kernel does not say.
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().next()?.parse::<u64>().ok()?;
    Some(Duration::from_nanos(ns))
}

pub fn run_case(case: &Case, limit: Duration) -> Result<Outcome, String> {
    let started = Instant::now();
    let cpu_before = thread_cpu();
    let checked = fit::check_selection(&case.expr);
    let compiled = select::compile(&case.expr);
    if checked.is_ok() != compiled.is_ok() {
        return Err(format!(
            "check_selection and compile disagree on {:?}",
            case.expr
        ));
    }
    if let Err(e) = &checked
        && (e.is_empty() || e.contains('\n') || e.len() > 4 * select::MAX_EXPR_BYTES)
    {
        return Err(format!("bad error text for {:?}: {e:?}", case.expr));
    }
    let sel = match compiled {
        Ok(s) => s,
        Err(e) => return Ok(Outcome::Refused(e.kind)),
    };
    let limits = Limits::for_response(MAX_RESPONSE_BYTES);
    let got = sel.search(&case.doc, limits);
    // The public path: the same answer (its errors worded for the tool result).
    let public = fit::select(&case.doc, &case.expr, MAX_RESPONSE_BYTES);
    let took = started.elapsed();
    let cpu = thread_cpu()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    if took > limit && cpu.is_none_or(|cpu| cpu > limit || limit.is_zero()) {
        return Err(format!(
            "evaluation took {took:?} ({} of CPU; limit {limit:?}): {:?}",
            cpu.map_or("unknown".to_string(), |c| format!("{c:?}")),
            case.expr
        ));
    }
    match (&got, &public) {
        (Ok(a), Ok(b)) if a == b => {}
        (Err(_), Err(e)) if !e.is_empty() && !e.contains('\n') => {}
        _ => {
            return Err(format!(
                "fit::select and search disagree on {:?}: {got:?} / {public:?}",
                case.expr
            ));
        }
    }
    let outcome = match got {
        Ok(v) => {
            let len = serde_json::to_vec(&v).map_or(usize::MAX, |b| b.len());
            if len > limits.output_bytes {
                return Err(format!(
                    "a result of {len} bytes, over the output budget of {}: {:?}",
                    limits.output_bytes, case.expr
                ));
            }
            Outcome::Selected(v)
        }
        Err(e) => {
            if e.message.is_empty() || e.message.contains('\n') {
                return Err(format!("bad error text for {:?}: {e:?}", case.expr));
            }
            Outcome::Failed(e.kind)
        }
    };
    differential(case, &outcome)?;
    Ok(outcome)
}

/// The fuzz target's check: decode, evaluate, within `limit`.
pub fn check_select(data: &[u8], limit: Duration) -> Result<(), String> {
    match decode(data) {
        Some(case) => run_case(&case, limit).map(|_| ()),
        None => Ok(()),
    }
}

/// `v` with every object's members in key order (the crate's objects are `BTreeMap`s).
fn sorted(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&m[k]));
            }
            Value::Object(out)
        }
        _ => v.clone(),
    }
}

fn float_eq(a: f64, b: f64) -> bool {
    a == b
        || (a - b).abs() <= f64::EPSILON * (a.abs() + b.abs())
        || (a - b).abs() < f64::EPSILON * f64::MIN_POSITIVE
}

/// JMESPath equality of results; two strings that are JSON texts of equal values are equal
/// (`to_string` of an object the crate orders by key, or of a number it writes `2.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => float_eq(x, y),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same(p, q)))
        }
        (Value::String(x), Value::String(y)) if x != y => {
            match (
                serde_json::from_str::<Value>(x),
                serde_json::from_str::<Value>(y),
            ) {
                (Ok(p), Ok(q)) if !p.is_string() => same(&p, &q),
                _ => false,
            }
        }
        _ => a == b,
    }
}

/// The crate's interpreter on the same input, where it can run without the dangers the budgets
/// exist for, and where the two are meant to agree (see the `select` module doc for the
/// differences: member order of built objects, `avg([])`, `to_number` of a non-number text).
fn differential(case: &Case, ours: &Outcome) -> Result<(), String> {
    let e = &case.expr;
    let builds_objects = e.contains('{') || e.contains("merge");
    let order_visible = ["keys", "values", "*", "to_string"]
        .iter()
        .any(|w| e.contains(w));
    // The crate's slices add in i32 and index with the wrapped sum: a far step panics it.
    let long_number = e
        .as_bytes()
        .windows(6)
        .any(|w| w.iter().all(u8::is_ascii_digit));
    if (builds_objects && order_visible) || long_number || e.contains("to_number") {
        return Ok(());
    }
    match ours {
        Outcome::Selected(v) if !v.to_string().contains("<expression") => {}
        Outcome::Failed(ErrorKind::InvalidType | ErrorKind::InvalidValue) => {}
        _ => return Ok(()),
    }
    // Small inputs only: the crate has no budget (ours passed its own, so this is bounded, but
    // the crate copies what ours shares).
    let tight = Limits {
        steps: 20_000,
        work_bytes: 1 << 20,
        output_bytes: 16 * 1024,
    };
    let Ok(sel) = select::compile(e) else {
        return Ok(());
    };
    let doc = sorted(&case.doc);
    let ours = match sel.search(&doc, tight) {
        Err(x) if x.kind == ErrorKind::Limit => return Ok(()),
        other => other,
    };
    let Ok(expr) = jmespath::compile(e) else {
        return Err(format!("the crate does not parse {e:?}, which we compiled"));
    };
    let theirs = expr
        .search(&doc)
        .map_err(|x| x.to_string())
        .and_then(|r| serde_json::to_value(&*r).map_err(|x| x.to_string()));
    agree(e, &case.doc, &ours.map_err(|x| x.message), &theirs)
}

/// Whether our result and the crate's agree (see [`differential`]).
fn agree(
    e: &str,
    doc: &Value,
    ours: &Result<Value, String>,
    theirs: &Result<Value, String>,
) -> Result<(), String> {
    match (ours, theirs) {
        (Ok(a), Ok(b)) if same(a, b) => Ok(()),
        (Err(_), Err(_)) => Ok(()),
        (Ok(Value::Null), Err(_)) if e.contains("avg") => Ok(()),
        _ => Err(format!(
            "{e:?} on {}: ours {ours:?}, the crate's {theirs:?}",
            cut(&doc.to_string(), 500)
        )),
    }
}

fn cut(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Seed inputs: the compliance suite's expressions (over a document of each suite) are in
/// `fuzz/seeds/select/`; these are the attacks of #36.
pub fn attack_seeds() -> Vec<(String, Vec<u8>)> {
    let doc = serde_json::json!({"a": [1, 2, 3], "s": "xyz", "o": {"b": {"c": [4, 5]}}});
    let n = 2000;
    let exprs = [
        (
            "deep-brackets",
            format!("{}@{}", "[".repeat(n), "]".repeat(n)),
        ),
        (
            "deep-parens",
            format!("{}@{}", "(".repeat(n), ")".repeat(n)),
        ),
        ("deep-not", format!("{}@", "!".repeat(10_000))),
        ("deep-dots", format!("a{}", ".a".repeat(10_000))),
        ("deep-pipes", format!("@{}", "|@".repeat(10_000))),
        ("bomb-double", format!("{}@", "[@,@]|".repeat(20))),
        ("bomb-flatten", format!("{}@", "([@,@]|[])|".repeat(30))),
        (
            "bomb-to-string",
            format!("{}to_string(@)", "[@,@]|".repeat(30)),
        ),
        (
            "bomb-sort-by",
            format!("{}sort_by(@, &s)", "[@,@]|[]|".repeat(14)),
        ),
        (
            "bomb-equal",
            format!("[{0}@, {0}@] | [0] == [1]", "[@,@]|".repeat(25)),
        ),
        ("slice-far-step", "a[1::2147483647]".to_string()),
    ];
    exprs
        .into_iter()
        .map(|(name, e)| (name.to_string(), encode(&e, &doc)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_checks::reader::tests::{files_in, root};

    /// Debug builds are an order of magnitude slower than the fuzzer's release build.
    const REPLAY_LIMIT: Duration = Duration::from_secs(30);

    /// Every seed and saved crash input passes; the seeds really select things (so the check and
    /// its comparison with the crate are exercised, not skipped).
    #[test]
    fn select_corpus_replays() {
        let seeds = files_in(&root().join("fuzz/seeds/select"));
        assert!(seeds.len() >= 100, "seed corpus missing: {}", seeds.len());
        let regressions = files_in(&root().join("fuzz/regressions/select"));
        assert!(regressions.len() >= 10, "regressions missing");
        let mut selected = 0;
        for p in seeds.iter().chain(&regressions) {
            let data = std::fs::read(p).expect("read input");
            let case = decode(&data).expect("decodes");
            match run_case(&case, REPLAY_LIMIT) {
                Ok(Outcome::Selected(_)) => selected += 1,
                Ok(_) => {}
                Err(e) => panic!("{}: {e}", p.display()),
            }
        }
        assert!(selected >= 100, "only {selected} inputs selected something");
    }

    /// The attacks end as refusals or budget errors.
    #[test]
    fn attacks_are_refused() {
        for (name, data) in attack_seeds() {
            let case = decode(&data).expect("decodes");
            let outcome = run_case(&case, REPLAY_LIMIT).unwrap_or_else(|e| panic!("{name}: {e}"));
            match name.split('-').next() {
                Some("deep") => assert_eq!(outcome, Outcome::Refused(ErrorKind::Limit), "{name}"),
                Some("bomb") => assert_eq!(outcome, Outcome::Failed(ErrorKind::Limit), "{name}"),
                _ => assert_eq!(outcome, Outcome::Selected(serde_json::json!([2])), "{name}"),
            }
        }
    }

    /// The check catches what it is for: a disagreement with the crate is reported.
    #[test]
    fn differential_reports_disagreement() {
        let doc = serde_json::json!({"a": [1]});
        let one = Ok(serde_json::json!(1));
        assert!(agree("a[0]", &doc, &one, &one).is_ok());
        assert!(agree("a[0]", &doc, &Ok(serde_json::json!(2)), &one).is_err());
        assert!(agree("a[0]", &doc, &Err("x".into()), &one).is_err());
        assert!(agree("a[0]", &doc, &one, &Err("x".into())).is_err());
        assert!(agree("avg(`[]`)", &doc, &Ok(Value::Null), &Err("NaN".into())).is_ok());
        // Run on a real case: ours and the crate's agree.
        let case = Case {
            expr: "a[?@ > `0`] | [0]".into(),
            doc: doc.clone(),
        };
        assert_eq!(
            run_case(&case, REPLAY_LIMIT),
            Ok(Outcome::Selected(serde_json::json!(1)))
        );
        assert!(!same(
            &serde_json::json!([1, 2]),
            &serde_json::json!([2, 1])
        ));
        assert!(same(&serde_json::json!(2), &serde_json::json!(2.0)));
        assert!(same(
            &serde_json::json!("{\"b\":1,\"a\":2.0}"),
            &serde_json::json!("{\"a\":2,\"b\":1}")
        ));
    }
}
