//! The `arazzo_expr` fuzz target's check (#39): Arazzo runtime expressions, templates and
//! criteria (simple, regex, jsonpath) parsed and evaluated against a small fixed scope (with a
//! response body large and deep enough that a careless query or pattern would be slow). It must
//! not panic or overflow the stack, must finish each input within the CPU time the caller gives,
//! must keep results within the output budget, must give errors that carry no value of the scope
//! (a secret input stands in), and every expression it parsed must parse again from its own text
//! to the same expression.
//!
//! An input is a mode byte (expression, template, payload, simple, regex, jsonpath), then the
//! text, a NUL, and the context expression (regex/jsonpath) or a JSON payload (payload mode).

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use openapi_mcp_arazzo::criteria::{Criterion, CriterionKind};
use openapi_mcp_arazzo::expr::{
    self, EvalError, Exchange, Expr, MAX_OUTPUT_BYTES, Scope, Template, eval_value, expressions_in,
};

use super::MAX_INPUT;

/// The fixture's secret input: no error may show it.
pub const SECRET: &str = "s3cret-Zq9";

/// The modes of an input (its first byte, modulo their number).
pub const MODES: [&str; 6] = ["expr", "template", "payload", "simple", "regex", "jsonpath"];

#[derive(Debug, Clone)]
pub struct Case {
    pub mode: usize,
    pub text: String,
    pub extra: String,
}

pub fn decode(data: &[u8]) -> Option<Case> {
    if data.is_empty() || data.len() > MAX_INPUT {
        return None;
    }
    let mode = usize::from(data[0]) % MODES.len();
    let rest = &data[1..];
    let (t, e) = match rest.iter().position(|b| *b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    Some(Case {
        mode,
        text: String::from_utf8_lossy(t).into_owned(),
        extra: String::from_utf8_lossy(e).into_owned(),
    })
}

pub fn encode(mode: &str, text: &str, extra: &str) -> Vec<u8> {
    let m = MODES.iter().position(|m| *m == mode).unwrap_or(0);
    let mut out = vec![u8::try_from(m).unwrap_or(0)];
    out.extend_from_slice(text.as_bytes());
    out.push(0);
    out.extend_from_slice(extra.as_bytes());
    out
}

/// The scope every input is evaluated against.
pub struct Fixture {
    inputs: Value,
    steps: Map<String, Value>,
    workflows: Map<String, Value>,
    outputs: Map<String, Value>,
    sources: Map<String, Value>,
    components: Value,
    exchange: Exchange,
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

impl Fixture {
    pub fn new() -> Fixture {
        // A body of ~20k nodes, 40 deep in one branch.
        let mut deep = json!({"leaf": SECRET});
        for i in 0..40 {
            deep = json!({ format!("d{i}"): deep, "n": i });
        }
        let items: Vec<Value> = (0..2000)
            .map(|i| json!({"id": i, "name": format!("pet{i}"), "tags": ["a", "b"], "ok": i % 2 == 0}))
            .collect();
        Fixture {
            inputs: json!({"username": "ann", "password": SECRET, "n": 7, "pet": {"id": 1, "tags": ["x"]},
                           "a.b": 1, "big": "y".repeat(64 * 1024)}),
            steps: obj(
                json!({"find": {"outputs": {"pets": [{"id": 1, "name": "rex"}], "count": 1, "token": SECRET}}}),
            ),
            workflows: obj(json!({"w": {"inputs": {"u": "bob"}, "outputs": {"o": [1, 2]}}})),
            outputs: obj(json!({"bar": "b"})),
            sources: obj(
                json!({"api": {"name": "api", "url": "https://api.test/openapi.json", "type": "openapi"}}),
            ),
            components: json!({"parameters": {"p": {"name": "p", "in": "query", "value": 1}}}),
            exchange: Exchange {
                url: "https://api.test/pets?status=available".into(),
                method: "GET".into(),
                status: 200,
                request_headers: vec![("Authorization".into(), format!("Bearer {SECRET}"))],
                request_query: vec![("status".into(), "available".into())],
                request_path: obj(json!({"id": "42"})),
                request_body: Some(json!({"user": {"uuid": "u-1"}})),
                response_headers: vec![("X-Rate-Limit".into(), "100".into())],
                response_body: Some(
                    json!({"status": "available", "items": items, "deep": deep, "count": 2000}),
                ),
            },
        }
    }

    pub fn scope(&self) -> Scope<'_> {
        Scope {
            inputs: &self.inputs,
            steps: &self.steps,
            workflows: &self.workflows,
            outputs: Some(&self.outputs),
            source_descriptions: &self.sources,
            components: &self.components,
            exchange: Some(&self.exchange),
        }
    }
}

impl Default for Fixture {
    fn default() -> Self {
        Fixture::new()
    }
}

/// What the check saw.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Refused when parsing or compiling.
    Refused(String),
    /// Evaluated (a criterion's answer is a boolean).
    Value(Value),
    /// Parsed, but its evaluation failed.
    Failed(String),
}

fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().next()?.parse::<u64>().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Every parsed expression parses again from its own text to the same expression.
fn reparses(e: &Expr) -> Result<(), String> {
    match Expr::parse(e.text()) {
        Ok(again) if &again == e => Ok(()),
        Ok(_) => Err(format!("{:?} parses to a different expression", e.text())),
        Err(err) => Err(format!("{:?} does not parse again: {err}", e.text())),
    }
}

fn eval_outcome(case: &Case, r: Result<Value, EvalError>) -> Result<Outcome, String> {
    match r {
        Ok(v) => Ok(Outcome::Value(v)),
        Err(e) => {
            let msg = e.to_string();
            if msg.contains(SECRET) && !case.text.contains(SECRET) && !case.extra.contains(SECRET) {
                return Err(format!("an error shows a value of the scope: {msg}"));
            }
            Ok(Outcome::Failed(msg))
        }
    }
}

/// Differential: `$response.body#PTR` resolves as serde_json's RFC 6901 `Value::pointer` does.
fn pointer_agrees(fx: &Fixture, text: &str, out: &Outcome) -> Result<(), String> {
    let Some(ptr) = text.strip_prefix("$response.body#") else {
        return Ok(());
    };
    let body = fx.exchange.response_body.as_ref();
    let theirs = body.and_then(|b| b.pointer(ptr));
    let same = match out {
        Outcome::Value(v) => theirs == Some(v),
        _ => theirs.is_none(),
    };
    if !same {
        let ours = matches!(out, Outcome::Value(_));
        return Err(format!(
            "{text:?}: ours found a value: {ours}, serde_json's pointer found one: {}, or they differ",
            theirs.is_some()
        ));
    }
    Ok(())
}

fn bounded(v: &Value, what: &str) -> Result<(), String> {
    if expr::json_size(v, MAX_OUTPUT_BYTES) > MAX_OUTPUT_BYTES {
        return Err(format!("{what}: a result over MAX_OUTPUT_BYTES"));
    }
    Ok(())
}

pub fn run_case(fx: &Fixture, case: &Case, limit: Duration) -> Result<Outcome, String> {
    let started = Instant::now();
    let cpu_before = thread_cpu();
    let scope = fx.scope();
    let outcome = match MODES[case.mode] {
        "expr" => match Expr::parse(&case.text) {
            Err(e) => Outcome::Refused(e.to_string()),
            Ok(e) => {
                reparses(&e)?;
                let _ = e.root();
                let looked = e.lookup(&scope).map_err(|x| x.to_string());
                let out = eval_outcome(case, e.eval(&scope))?;
                match (&out, &looked) {
                    (Outcome::Value(v), Ok(Some(w))) if v == w => {}
                    (Outcome::Failed(_), Ok(None) | Err(_)) => {}
                    _ => return Err(format!("eval and lookup disagree on {:?}", case.text)),
                }
                pointer_agrees(fx, &case.text, &out)?;
                out
            }
        },
        "template" => match Template::parse(&case.text) {
            Err(e) => Outcome::Refused(e.to_string()),
            Ok(t) => {
                for e in t.expressions() {
                    reparses(e)?;
                }
                if t.is_literal() != (t.expressions().count() == 0) {
                    return Err("is_literal disagrees with expressions()".into());
                }
                let out = eval_outcome(case, t.eval(&scope))?;
                if let Outcome::Value(v) = &out {
                    bounded(v, "template")?;
                    if t.is_literal() && v.as_str() != Some(case.text.as_str()) {
                        return Err("a literal template changed".into());
                    }
                }
                out
            }
        },
        "payload" => {
            let payload: Value = serde_json::from_str(&case.extra)
                .unwrap_or_else(|_| json!({"a": [case.text.clone(), {"b": case.text.clone()}]}));
            let listed = expressions_in(&payload);
            for e in listed.iter().flatten() {
                reparses(e)?;
            }
            let out = eval_outcome(case, eval_value(&payload, &scope))?;
            match (&out, &listed) {
                (Outcome::Value(v), Ok(_)) => bounded(v, "payload")?,
                (Outcome::Value(_), Err((p, e))) => {
                    return Err(format!(
                        "eval_value accepted what expressions_in refused at {p}: {e}"
                    ));
                }
                _ => {}
            }
            out
        }
        kind => {
            let k = match kind {
                "simple" => CriterionKind::Simple,
                "regex" => CriterionKind::Regex,
                _ => CriterionKind::JsonPath,
            };
            let context = if case.extra.is_empty() && k != CriterionKind::Simple {
                "$response.body"
            } else if case.extra.is_empty() {
                ""
            } else {
                case.extra.as_str()
            };
            let context = (!context.is_empty()).then_some(context);
            match Criterion::compile(&case.text, context, k) {
                Err(e) => Outcome::Refused(e.to_string()),
                Ok(c) => {
                    for e in c.expressions() {
                        reparses(e)?;
                    }
                    eval_outcome(case, c.check(&scope).map(Value::Bool))?
                }
            }
        }
    };
    let cpu = match (cpu_before, thread_cpu()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => started.elapsed(),
    };
    if cpu > limit {
        return Err(format!(
            "{} input took {cpu:?} of CPU (limit {limit:?})",
            MODES[case.mode]
        ));
    }
    Ok(outcome)
}

/// The fuzz target's entry point.
pub fn check_arazzo_expr(fx: &Fixture, data: &[u8], limit: Duration) -> Result<(), String> {
    let Some(case) = decode(data) else {
        return Ok(());
    };
    run_case(fx, &case, limit).map(|_| ())
}

/// The seed corpus (`fuzz/seeds/arazzo_expr/`): the specification's examples in every mode,
/// then the attacks (names starting with `attack-`).
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let exprs = [
        "$url",
        "$method",
        "$statusCode",
        "$request.header.accept",
        "$request.header.Authorization",
        "$request.path.id",
        "$request.query.status",
        "$request.body#/user/uuid",
        "$response.body#/status",
        "$response.body#/items/3/name",
        "$response.body.items[3].tags[1]",
        "$response.header.x-rate-limit",
        "$inputs.username",
        "$inputs.a.b",
        "$inputs.pet#/tags/0",
        "$outputs.bar",
        "$steps.find.outputs.pets#/0/id",
        "$steps.find.outputs.pets[0].name",
        "$workflows.w.inputs.u",
        "$workflows.w.outputs.o#/1",
        "$sourceDescriptions.api.url",
        "$components.parameters.p",
        "$response.body#/deep/d39/d38/n",
        "$inputs.password.x",
    ];
    for (i, e) in exprs.iter().enumerate() {
        out.push((format!("expr-{i:02}"), encode("expr", e, "")));
    }
    let templates = [
        "Bearer {$steps.find.outputs.token}",
        "{$sourceDescriptions.api.url}#/paths/~1pets/get",
        "id={$inputs.n}&p={$inputs.pet}&s={$response.body#/status}",
        "$inputs.pet",
        "plain text $5",
        "{\"petId\": \"{$inputs.n}\"}",
        "x {$inputs.nope}",
    ];
    for (i, t) in templates.iter().enumerate() {
        out.push((format!("template-{i:02}"), encode("template", t, "")));
    }
    let payloads = [
        r#"{"petOrder": {"petId": "$inputs.n", "couponCode": "{$inputs.username}-x", "quantity": 1}}"#,
        r#"["$response.body#/items/0", "$statusCode", {"a": ["$inputs.pet"]}]"#,
    ];
    for (i, p) in payloads.iter().enumerate() {
        out.push((format!("payload-{i:02}"), encode("payload", "", p)));
    }
    let simple = [
        "$statusCode == 200",
        "{$statusCode == 401}",
        "$response.body#/status == 'AVAILABLE'",
        "$response.body#/items/0/id != null",
        "$statusCode >= 200 && $statusCode < 300 || !$response.body#/count",
        "($response.header.X-Rate-Limit > 10) && $inputs.pet.tags[0] == 'x'",
        "'it''s' == \"IT'S\"",
        "$steps.find.outputs.count == 1.0e0",
    ];
    for (i, c) in simple.iter().enumerate() {
        out.push((format!("simple-{i:02}"), encode("simple", c, "")));
    }
    out.push(("regex-00".into(), encode("regex", "^200$", "$statusCode")));
    out.push((
        "regex-01".into(),
        encode("regex", "(?i)avail", "$response.body#/status"),
    ));
    out.push(("regex-02".into(), encode("regex", "\"id\":1999", "")));
    out.push((
        "jsonpath-00".into(),
        encode("jsonpath", "$[?count(@.pets) > 0]", "$steps.find.outputs"),
    ));
    out.push((
        "jsonpath-01".into(),
        encode("jsonpath", "$.items[?@.id == 5 && @.ok]", ""),
    ));
    out.push(("jsonpath-02".into(), encode("jsonpath", "$..leaf", "")));
    out.extend(attack_seeds());
    out
}

/// Hostile inputs: each must end in a refusal or a budget error, quickly.
pub fn attack_seeds() -> Vec<(String, Vec<u8>)> {
    let deep_parens = format!("{}true{}", "(".repeat(2000), ")".repeat(2000));
    let deep_not = format!("{}true", "!".repeat(2000));
    let deep_braces = format!("{}true{}", "{".repeat(100), "}".repeat(100));
    let many_tokens = vec!["$statusCode"; 600].join("||");
    let huge_template = "{$inputs.big}".repeat(64);
    let many_embeds = "{$url}".repeat(65);
    let long_expr = format!("$inputs.{}", "a".repeat(5000));
    let deep_payload = format!("{}\"$url\"{}", "[".repeat(100), "]".repeat(100));
    vec![
        ("attack-deep-parens", encode("simple", &deep_parens, "")),
        ("attack-deep-not", encode("simple", &deep_not, "")),
        ("attack-deep-braces", encode("simple", &deep_braces, "")),
        ("attack-many-tokens", encode("simple", &many_tokens, "")),
        (
            "attack-huge-template",
            encode("template", &huge_template, ""),
        ),
        ("attack-many-embeds", encode("template", &many_embeds, "")),
        ("attack-long-expr", encode("expr", &long_expr, "")),
        ("attack-deep-payload", encode("payload", "", &deep_payload)),
        (
            "attack-regex-nested",
            encode("regex", "^(a+)+$", "$inputs.big"),
        ),
        ("attack-regex-big", encode("regex", "\\w{1000}{1000}", "")),
        (
            "attack-regex-counted",
            encode("regex", "(((a{100}){100}){100})", ""),
        ),
        (
            "attack-jsonpath-descendants",
            encode("jsonpath", "$..*..*..*", ""),
        ),
        (
            "attack-jsonpath-unions",
            encode(
                "jsonpath",
                &format!("$[{0}][{0}][{0}]", vec!["*"; 60].join(",")),
                "",
            ),
        ),
        (
            "attack-jsonpath-nested-filters",
            encode("jsonpath", &format!("${}", "[?@".repeat(40)), ""),
        ),
    ]
    .into_iter()
    .map(|(n, d)| (n.to_string(), d))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_checks::reader::tests::{files_in, root};

    /// Debug builds are an order of magnitude slower than the fuzzer's release build.
    const REPLAY_LIMIT: Duration = Duration::from_secs(30);

    /// Every seed and saved crash input passes; the specification's examples evaluate.
    #[test]
    fn arazzo_expr_corpus_replays() {
        let fx = Fixture::new();
        let seeds = files_in(&root().join("fuzz/seeds/arazzo_expr"));
        assert!(seeds.len() >= 50, "seed corpus missing: {}", seeds.len());
        let regressions = files_in(&root().join("fuzz/regressions/arazzo_expr"));
        let mut values = 0;
        for p in seeds.iter().chain(&regressions) {
            let data = std::fs::read(p).expect("read input");
            let case = decode(&data).expect("decodes");
            match run_case(&fx, &case, REPLAY_LIMIT) {
                Ok(Outcome::Value(_)) => values += 1,
                Ok(_) => {}
                Err(e) => panic!("{}: {e}", p.display()),
            }
        }
        assert!(values >= 40, "only {values} inputs evaluated");
    }

    /// The seeds on disk are the ones this file lists (regenerate with `write_seeds`).
    #[test]
    fn arazzo_expr_seeds_are_current() {
        let dir = root().join("fuzz/seeds/arazzo_expr");
        for (name, data) in seeds() {
            let on_disk = std::fs::read(dir.join(&name)).unwrap_or_default();
            assert_eq!(on_disk, data, "{name}: run write_seeds");
        }
    }

    /// The attacks end as refusals or budget errors.
    #[test]
    fn arazzo_expr_attacks_are_refused() {
        let fx = Fixture::new();
        for (name, data) in attack_seeds() {
            let case = decode(&data).expect("decodes");
            let outcome =
                run_case(&fx, &case, REPLAY_LIMIT).unwrap_or_else(|e| panic!("{name}: {e}"));
            match (name.as_str(), &outcome) {
                // Linear-time engine: no match, no error.
                ("attack-regex-nested", Outcome::Value(v)) => assert_eq!(v, &json!(false)),
                (_, Outcome::Refused(m) | Outcome::Failed(m)) => {
                    assert!(m.contains("MAX_") || m.contains("limit"), "{name}: {m}")
                }
                _ => panic!("{name}: {outcome:?}"),
            }
        }
    }

    /// The check catches what it is for.
    #[test]
    fn arazzo_expr_check_reports_breakage() {
        let case = Case {
            mode: 0,
            text: "$inputs.x".into(),
            extra: String::new(),
        };
        let leak = EvalError::NotFound {
            expr: "$inputs.x".into(),
            detail: format!("value {SECRET}"),
        };
        assert!(eval_outcome(&case, Err(leak)).is_err());
        assert!(bounded(&json!("y".repeat(MAX_OUTPUT_BYTES + 1)), "x").is_err());
        let fx = Fixture::new();
        let case = Case {
            mode: 0,
            text: "$inputs.username".into(),
            extra: String::new(),
        };
        assert_eq!(
            run_case(&fx, &case, REPLAY_LIMIT),
            Ok(Outcome::Value(json!("ann")))
        );
        // The pointer differential: agreement passes, a wrong answer is reported.
        let t = "$response.body#/items/1/id";
        assert!(pointer_agrees(&fx, t, &Outcome::Value(json!(1))).is_ok());
        assert!(pointer_agrees(&fx, t, &Outcome::Value(json!(2))).is_err());
        assert!(pointer_agrees(&fx, t, &Outcome::Failed("x".into())).is_err());
        assert!(pointer_agrees(&fx, "$response.body#/nope", &Outcome::Failed("x".into())).is_ok());
    }

    #[test]
    #[ignore = "writes the seed corpus"]
    fn write_seeds() {
        let dir = root().join("fuzz/seeds/arazzo_expr");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (name, data) in seeds() {
            std::fs::write(dir.join(name), data).expect("write seed");
        }
    }
}
