//! The `validate_args` fuzz target's check: a tool input schema built from the fuzz bytes (the
//! keywords specs use: `type`, `enum`, `const`, `pattern` with an ECMA-262 pattern from the
//! bytes, `format`, lengths, bounds, `items`, `properties`, `required`, `additionalProperties`,
//! `anyOf`/`oneOf`/`allOf`/`not`, `$ref` into `$defs`) plus arguments, run through the path a
//! tool call takes in the server: [`validate::check`] with a fresh [`LazyValidator`] (the schema
//! is compiled on that first use), then [`validate::check_wire_formats`]; and
//! [`validate::check_output`] with the same schema. It must not panic, must finish within the
//! time limit the caller gives, and must report problems in bounded lines.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use openapi_mcp_toolset::model::Route;
use openapi_mcp_toolset::validate::{self, LazyValidator};

use super::MAX_INPUT;
use super::reader::Reader;

/// Nesting of generated subschemas at most.
const MAX_SCHEMA_DEPTH: usize = 4;
/// Longest generated argument string (above the 4 KiB cap on backtracking pattern matches).
const MAX_ARG_STRING: usize = 64 * 1024;
/// `validate::check` lists at most 20 problems and a "more not shown" line.
const MAX_PROBLEM_LINES: usize = 21;

const FORMATS: &[&str] = &[
    "uuid",
    "date",
    "date-time",
    "ipv4",
    "ipv6",
    "email",
    "uri",
    "regex",
    "int64",
    "byte",
    "binary",
];

/// A decoded input: the tool's inputSchema, its route (argument locations) and the arguments.
pub struct Case {
    pub schema: Map<String, Value>,
    pub route: Route,
    pub args: Map<String, Value>,
    pub check_output: bool,
}

struct Gen<'a> {
    r: Reader<'a>,
    defs: usize,
}

impl Gen<'_> {
    fn schema(&mut self, depth: usize) -> Value {
        let mut m = Map::new();
        let mut f = self.r.u16();
        if depth >= MAX_SCHEMA_DEPTH {
            // Leaves only: no subschemas.
            f &= 0x080f | 0x0400;
        }
        match self.r.choose(11) {
            0 => {
                m.insert("type".into(), json!("string"));
            }
            1 => {
                m.insert("type".into(), json!("integer"));
            }
            2 => {
                m.insert("type".into(), json!("number"));
            }
            3 => {
                m.insert("type".into(), json!("boolean"));
            }
            4 => {
                m.insert("type".into(), json!("array"));
            }
            5 => {
                m.insert("type".into(), json!("object"));
            }
            6 => {
                m.insert("type".into(), json!("null"));
            }
            7 => {
                m.insert("type".into(), json!(["string", "null"]));
            }
            8 => {
                m.insert("type".into(), json!(["integer", "string"]));
            }
            9 => {
                m.insert("type".into(), Value::String(self.r.string()));
            }
            _ => {}
        }
        if f & 0x0001 != 0 {
            // The spec's pattern, as written (ECMA-262 syntax, any bytes).
            m.insert("pattern".into(), Value::String(self.r.string()));
        }
        if f & 0x0002 != 0 {
            let i = self.r.choose(FORMATS.len() + 1);
            let format = FORMATS
                .get(i)
                .map_or_else(|| self.r.string(), |s| s.to_string());
            m.insert("format".into(), Value::String(format));
        }
        if f & 0x0004 != 0 {
            m.insert("minLength".into(), json!(self.r.byte()));
            if self.r.flag() {
                m.insert("maxLength".into(), json!(self.r.u16()));
            }
        }
        if f & 0x0008 != 0 {
            let n = 1 + self.r.choose(4);
            let values: Vec<Value> = (0..n).map(|_| self.r.value(1, 256)).collect();
            m.insert("enum".into(), Value::Array(values));
        }
        if f & 0x0010 != 0 {
            m.insert("items".into(), self.schema(depth + 1));
            if self.r.flag() {
                m.insert("minItems".into(), json!(self.r.choose(4)));
                m.insert("maxItems".into(), json!(self.r.choose(8)));
            }
            if self.r.flag() {
                m.insert("uniqueItems".into(), json!(true));
            }
        }
        if f & 0x0020 != 0 {
            let n = 1 + self.r.choose(3);
            let mut props = Map::new();
            let mut required = Vec::new();
            for i in 0..n {
                let name = if self.r.choose(4) == 0 {
                    self.r.string()
                } else {
                    format!("p{i}")
                };
                if self.r.flag() {
                    required.push(Value::String(name.clone()));
                }
                props.insert(name, self.schema(depth + 1));
            }
            m.insert("properties".into(), Value::Object(props));
            if !required.is_empty() {
                m.insert("required".into(), Value::Array(required));
            }
            match self.r.choose(3) {
                0 => {}
                1 => {
                    m.insert("additionalProperties".into(), json!(false));
                }
                _ => {
                    m.insert("additionalProperties".into(), self.schema(depth + 1));
                }
            }
        }
        for (bit, key) in [(0x0040, "anyOf"), (0x0080, "oneOf"), (0x0100, "allOf")] {
            if f & bit != 0 {
                let n = 1 + self.r.choose(3);
                let subs: Vec<Value> = (0..n).map(|_| self.schema(depth + 1)).collect();
                m.insert(key.into(), Value::Array(subs));
            }
        }
        if f & 0x0200 != 0 {
            m.insert("not".into(), self.schema(depth + 1));
        }
        if f & 0x0400 != 0 {
            for key in ["minimum", "maximum", "exclusiveMinimum", "multipleOf"] {
                if self.r.flag() {
                    m.insert(key.into(), self.r.number());
                }
            }
        }
        if f & 0x0800 != 0 {
            m.insert("const".into(), self.r.value(1, 256));
        }
        if f & 0x1000 != 0 {
            let target = match self.r.choose(self.defs + 2) {
                0 => "#".to_string(),
                i if i <= self.defs => format!("#/$defs/d{}", i - 1),
                _ => self.r.string(),
            };
            m.insert("$ref".into(), Value::String(target));
        }
        if f & 0x2000 != 0 {
            // Keywords specs carry that validation ignores (or that OpenAPI 3.0 means).
            m.insert("nullable".into(), json!(true));
            m.insert("description".into(), Value::String(self.r.string()));
            m.insert("default".into(), self.r.value(1, 64));
        }
        if f & 0x4000 != 0 {
            let mut pp = Map::new();
            pp.insert(self.r.string(), self.schema(depth + 1));
            m.insert("patternProperties".into(), Value::Object(pp));
            if self.r.flag() {
                m.insert(
                    "propertyNames".into(),
                    json!({ "pattern": self.r.string(), "maxLength": self.r.byte() }),
                );
            }
        }
        if f & 0x8000 != 0 {
            match self.r.choose(3) {
                0 => {
                    m.insert("contains".into(), self.schema(depth + 1));
                }
                1 => {
                    let subs: Vec<Value> = (0..1 + self.r.choose(2))
                        .map(|_| self.schema(depth + 1))
                        .collect();
                    m.insert("prefixItems".into(), Value::Array(subs));
                }
                _ => {
                    m.insert("if".into(), self.schema(depth + 1));
                    m.insert("then".into(), self.schema(depth + 1));
                    m.insert("else".into(), self.schema(depth + 1));
                }
            }
        }
        Value::Object(m)
    }

    /// A value for `schema`: often one of its `enum` or `const` values or of its `type`, else
    /// anything.
    fn value_for(&mut self, schema: &Value, depth: usize) -> Value {
        let pick = self.r.choose(4);
        if pick == 0
            && let Some(Value::Array(e)) = schema.get("enum")
            && !e.is_empty()
        {
            return e[self.r.choose(e.len())].clone();
        }
        if pick == 0
            && let Some(c) = schema.get("const")
        {
            return c.clone();
        }
        if pick <= 1 {
            return self.r.value(depth, MAX_ARG_STRING);
        }
        let ty = match schema.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(Value::Array(ts)) => ts
                .get(self.r.choose(ts.len().max(1)))
                .and_then(Value::as_str)
                .unwrap_or(""),
            _ => "",
        };
        match ty {
            "string" => Value::String(self.r.long_string(MAX_ARG_STRING)),
            "integer" | "number" => self.r.number(),
            "boolean" => Value::Bool(self.r.flag()),
            "null" => Value::Null,
            "array" if depth > 0 => {
                let items = schema.get("items").cloned().unwrap_or(Value::Null);
                let n = self.r.choose(6);
                Value::Array((0..n).map(|_| self.value_for(&items, depth - 1)).collect())
            }
            "object" if depth > 0 => {
                let mut out = Map::new();
                if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                    for (k, s) in props {
                        if self.r.choose(4) != 0 {
                            out.insert(k.clone(), self.value_for(s, depth - 1));
                        }
                    }
                }
                if self.r.choose(4) == 0 {
                    out.insert(self.r.string(), self.r.value(depth - 1, 256));
                }
                Value::Object(out)
            }
            _ => self.r.value(depth, MAX_ARG_STRING),
        }
    }
}

/// Decodes a fuzz input; `None` for inputs over [`MAX_INPUT`].
pub fn decode(data: &[u8]) -> Option<Result<Case, String>> {
    if data.len() > MAX_INPUT {
        return None;
    }
    let mut g = Gen {
        r: Reader::new(data),
        defs: 0,
    };
    let mut root = Map::new();
    root.insert("type".into(), json!("object"));
    let ndefs = g.r.choose(3);
    if ndefs > 0 {
        g.defs = ndefs;
        let defs: Map<String, Value> = (0..ndefs).map(|i| (format!("d{i}"), g.schema(1))).collect();
        root.insert("$defs".into(), Value::Object(defs));
    }
    let nargs = 1 + g.r.choose(4);
    let mut props = Map::new();
    let mut required = Vec::new();
    let mut bindings = Vec::new();
    let mut has_body = false;
    for i in 0..nargs {
        let name = if g.r.choose(8) == 0 {
            g.r.string()
        } else {
            format!("a{i}")
        };
        // Serialized as the model has it (`Route` is built from JSON, so fields added to the
        // model later with defaults do not break this check).
        let location = match g.r.choose(6) {
            0 => json!({"in": "path", "style": "simple", "explode": false}),
            1 => json!({"in": "query", "style": "form", "explode": true, "allowReserved": false}),
            2 => json!({"in": "header", "explode": false}),
            3 => json!({"in": "cookie", "explode": false}),
            4 => json!({"in": "bodyField"}),
            _ => json!({"in": "body"}),
        };
        let req = g.r.flag();
        if req {
            required.push(Value::String(name.clone()));
        }
        let body = !matches!(
            location["in"].as_str(),
            Some("path" | "query" | "header" | "cookie")
        );
        has_body |= body;
        bindings.push(json!({"arg": name, "wire": name, "location": location, "required": req}));
        props.insert(name, g.schema(0));
    }
    root.insert("properties".into(), Value::Object(props.clone()));
    if !required.is_empty() {
        root.insert("required".into(), Value::Array(required));
    }
    if g.r.flag() {
        root.insert("additionalProperties".into(), json!(false));
    }
    let check_output = g.r.flag();
    let mut args = Map::new();
    for (name, schema) in &props {
        if g.r.choose(8) != 0 {
            let v = g.value_for(schema, 3);
            args.insert(name.clone(), v);
        }
    }
    while !g.r.is_empty() && g.r.choose(4) == 0 {
        let k = g.r.string();
        let v = g.r.value(2, MAX_ARG_STRING);
        args.insert(k, v);
    }
    let mut route = json!({
        "method": "POST",
        "path": "/fuzz/{a0}",
        "args": bindings,
        "output": "none",
    });
    if has_body {
        route["body"] = json!({"kind": "json", "contentType": "application/json",
            "required": false, "flattened": true});
    }
    let route = match serde_json::from_value::<Route>(route) {
        Ok(r) => r,
        Err(e) => return Some(Err(format!("the fuzz route does not deserialize: {e}"))),
    };
    Some(Ok(Case {
        schema: root,
        route,
        args,
        check_output,
    }))
}

/// Runs a decoded case the way the server validates a call (and a structured result).
/// Returns how long it took, or the broken invariant.
pub fn run_case(case: &Case, limit: Duration) -> Result<Duration, String> {
    let started = Instant::now();
    let cpu_before = thread_cpu();
    let validator = LazyValidator::default();
    let checked = validate::check(&validator, &case.schema, &case.args)
        .and_then(|()| validate::check_wire_formats(&case.schema, &case.route, &case.args));
    // The wire-format check on its own too (the server runs it only after `check` passed).
    let wire = validate::check_wire_formats(&case.schema, &case.route, &case.args);
    // The same schema as an output schema (the validator compiled above: the server keeps one
    // per schema, and compiling is most of the work per input).
    let output = case.check_output.then(|| {
        validate::check_output(&validator, &case.schema, &Value::Object(case.args.clone()))
    });
    let took = started.elapsed();
    // Over the limit in wall time: the invariant is about work, so a fuzzer at nice 19 beside
    // builds (2.7 s of wall time for 0.15 s of CPU) is not a finding; this thread's CPU time
    // decides where the kernel reports it.
    let cpu = thread_cpu()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    if took > limit && cpu.is_none_or(|cpu| cpu > limit || limit.is_zero()) {
        return Err(format!(
            "validation took {took:?} ({} of CPU; limit {limit:?}); schema: {}",
            cpu.map_or("unknown".to_string(), |c| format!("{c:?}")),
            cut_json(&Value::Object(case.schema.clone()), 2000)
        ));
    }
    if let Err(problems) = &checked
        && problems.len() > MAX_PROBLEM_LINES
    {
        return Err(format!(
            "validate::check reported {} problem lines (at most {MAX_PROBLEM_LINES})",
            problems.len()
        ));
    }
    for problems in [checked.err(), wire.err(), output.and_then(Result::err)]
        .into_iter()
        .flatten()
    {
        if problems.is_empty() {
            return Err("a check failed without naming a problem".into());
        }
    }
    Ok(took)
}

/// The CPU time the calling thread has run (Linux: `/proc/thread-self/schedstat`, in ns), or
/// `None` where the kernel does not say.
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().next()?.parse::<u64>().ok()?;
    Some(Duration::from_nanos(ns))
}

/// The fuzz target's check: decode, validate, within `limit`.
pub fn check_validate_args(data: &[u8], limit: Duration) -> Result<(), String> {
    match decode(data) {
        Some(case) => run_case(&case?, limit).map(|_| ()),
        None => Ok(()),
    }
}

/// `v` as JSON text, cut at `max` characters (for failure messages).
fn cut_json(v: &Value, max: usize) -> String {
    let text = v.to_string();
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// Seed inputs: spec-like patterns (linear, backtracking, ECMA-only, pathological) against
/// matching, failing and long arguments, and the wire formats in query parameters.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    use super::reader::Writer;
    // One query argument `a0` (required) whose schema is `{"type": "string", <flags>}`.
    fn one_arg(flags: u16) -> Writer {
        Writer::new()
            .pick(0) // no $defs
            .pick(0) // one argument
            .pick(1) // named a0
            .pick(1) // in the query
            .pick(1) // required
            .u16(flags)
            .pick(0) // type string
    }
    // The argument: a typed value (a string), `chunk` repeated `times`; no more arguments.
    fn arg(w: Writer, chunk: &str, times: u16) -> Vec<u8> {
        w.pick(0) // additionalProperties allowed
            .pick(1) // check_output too
            .pick(1) // a0 given
            .pick(2) // a value of the schema's type
            .string(chunk)
            .u16(times)
            .pick(1) // no unknown arguments
            .finish()
    }
    let patterns: &[(&str, &str, u16)] = &[
        ("^[a-z]{1,64}$", "abc", 1),
        ("^[a-z]{1,64}$", "ABC", 1),
        ("(?<=(a+)+)b", "a", 5000),
        ("^(a+)+$", "a", 40),
        ("^(?=(a+)+$)c", "a", 3000),
        ("^((a+)+\\1)$", "a", 100),
        ("^x[^]z$", "x\nz", 1),
        ("\\0|ok", "ok", 1),
        ("\\p{L}+", "é", 10),
        ("(a|aa)*c", "a", 30),
        ("^[\\w.+-]+@[\\w-]+\\.[\\w.-]+$", "a@b.c", 1),
        ("(?i)^abc$", "ABC", 1),
        ("\\d{3}-\\d{4}", "555-1234", 1),
        ("[", "x", 1),
        ("(?<name>a)\\k<name>", "aa", 1),
        ("^\\u{1F600}$", "😀", 1),
        ("a{1000}{1000}", "a", 1),
        ("^(\\w+\\s?)*$", "word ", 500),
    ];
    let mut out = Vec::new();
    for (i, (p, chunk, times)) in patterns.iter().enumerate() {
        let w = one_arg(0x0001).string(p);
        out.push((format!("pattern-{i:02}"), arg(w, chunk, *times)));
    }
    for (i, (format, value)) in [
        ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
        ("uuid", "not-a-uuid"),
        ("date", "2024-02-30"),
        ("date-time", "2024-05-01T12:00:00Z"),
        ("ipv4", "256.0.0.1"),
        ("ipv6", "::1"),
        ("email", "a@b"),
    ]
    .iter()
    .enumerate()
    {
        let idx = FORMATS.iter().position(|f| f == format).unwrap_or(0);
        let w = one_arg(0x0002).pick(idx);
        out.push((format!("format-{i:02}"), arg(w, value, 1)));
    }
    // Every keyword group once, over the rest of a fixed byte pattern.
    for bit in 0..16 {
        let w = Writer::new()
            .pick(1)
            .pick(2)
            .pick(1)
            .pick(4)
            .pick(0)
            .u16(1 << bit)
            .raw(&[
                4, 3, b'a', b'b', b'c', 2, 0, 5, 1, 1, 9, 3, 7, 0, 1, 2, 3, 4, 5, 6, 7, 8,
            ]);
        out.push((format!("keyword-{bit:02}"), w.finish()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_checks::reader::tests::{files_in, root};

    /// Debug builds compile and match regexes an order of magnitude slower than the fuzzer's.
    const REPLAY_LIMIT: Duration = Duration::from_secs(30);

    /// Every seed and saved crash input passes; the seeds decode to what they say.
    #[test]
    fn validate_args_corpus_replays() {
        let seeds = files_in(&root().join("fuzz/seeds/validate_args"));
        assert!(seeds.len() >= 20, "seed corpus missing");
        let mut inputs = seeds;
        inputs.extend(files_in(&root().join("fuzz/regressions/validate_args")));
        for p in inputs {
            let data = std::fs::read(&p).expect("read input");
            if let Err(e) = check_validate_args(&data, REPLAY_LIMIT) {
                panic!("{}: {e}", p.display());
            }
        }
        let case = decode(&seeds_by_name("pattern-02"))
            .expect("decodes")
            .expect("route");
        assert_eq!(
            case.schema["properties"]["a0"],
            json!({"type": "string", "pattern": "(?<=(a+)+)b"})
        );
        assert_eq!(case.args["a0"], json!("a".repeat(5000)));
        // The wire-format check sees the argument in the query.
        let bad = decode(&seeds_by_name("format-01"))
            .expect("decodes")
            .expect("route");
        let problems = validate::check_wire_formats(&bad.schema, &bad.route, &bad.args)
            .expect_err("not a uuid");
        assert!(problems[0].contains("`uuid`"), "{problems:?}");
    }

    fn seeds_by_name(name: &str) -> Vec<u8> {
        seeds()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d)
            .expect("seed")
    }

    /// The check catches slow validation and unbounded problem lists.
    #[test]
    fn validate_args_check_reports_breaks() {
        let case = decode(&seeds_by_name("pattern-03"))
            .expect("decodes")
            .expect("route");
        assert!(run_case(&case, Duration::ZERO).is_err(), "over the limit");
        assert!(run_case(&case, REPLAY_LIMIT).is_ok());
    }

    /// The limit is on this thread's CPU time where the kernel gives it: a thread that waits
    /// (a loaded machine) has run for less than it has waited.
    #[test]
    fn thread_cpu_counts_work_not_waiting() {
        let Some(before) = thread_cpu() else {
            eprintln!("SKIPPED: no /proc/thread-self/schedstat here");
            return;
        };
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_cpu().expect("still readable") - before;
        assert!(
            slept < Duration::from_millis(25),
            "{slept:?} of CPU while asleep"
        );
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(thread_cpu().expect("readable") - before > Duration::ZERO);
    }

    /// Writes `fuzz/seeds/validate_args`:
    /// `cargo test -p openapi-mcp-tests --lib fuzz_checks::validate_args -- --ignored`.
    #[test]
    #[ignore = "writes the seed corpus"]
    fn write_seeds() {
        let dir = root().join("fuzz/seeds/validate_args");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (name, data) in seeds() {
            std::fs::write(dir.join(name), data).expect("write seed");
        }
    }
}
