//! Every tool of every small and medium real-world spec (at most 400 tools) is called once
//! through an rmcp client, with arguments generated from its inputSchema, against the recording
//! upstream behind a base URL with a path prefix.
//!
//! Per call, one of: `ok` (the request reached the upstream, at a path that matches the
//! operation's path template under the base path), `refused` (nothing sent; an `isError` result
//! saying why: a generator gap or a converter bug, counted and the top reasons printed), or
//! `bad` (a hang, a protocol error, a request at the wrong path, an empty refusal): the test
//! fails on any `bad`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use openapi_mcp_convert::{SpecSource, ToolOptions, convert, load};
use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, Forwarder};
use openapi_mcp_runtime::model::ToolDef;
use openapi_mcp_runtime::rmcp::model::CallToolRequestParams;
use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
use openapi_mcp_runtime::validate::{LazyValidator, check};
use openapi_mcp_tests::harness::{connect_in_process, shared_specs, text};
use openapi_mcp_tests::upstream::Upstream;
use serde_json::{Map, Value, json};

const MAX_TOOLS: usize = 400;
const BASE_PATH: &str = "/corpus/v9";
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

// ------------------------------------------------------------------ argument generator

/// Deterministic arguments valid for a JSON Schema (the common keywords; `$ref` within the
/// tool's own schema).
struct Gen<'a> {
    root: &'a Value,
}

fn merge_all_of(parts: &[Value], g: &Gen<'_>, depth: usize) -> Value {
    let mut out = Map::new();
    let mut props = Map::new();
    let mut required: Vec<Value> = Vec::new();
    for p in parts {
        let p = g.resolve(p, depth);
        let p = match p.get("allOf").and_then(Value::as_array) {
            Some(inner) => merge_all_of(inner, g, depth + 1),
            None => p.clone(),
        };
        let Some(o) = p.as_object() else { continue };
        for (k, v) in o {
            match k.as_str() {
                "properties" => {
                    if let Some(m) = v.as_object() {
                        props.extend(m.clone());
                    }
                }
                "required" => required.extend(v.as_array().cloned().unwrap_or_default()),
                _ => {
                    out.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
    }
    if !props.is_empty() {
        out.insert("properties".into(), Value::Object(props));
        out.entry("type").or_insert(json!("object"));
    }
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    Value::Object(out)
}

/// A string matching `pattern` among a few candidates, checked with the runtime's validator.
fn string_for_pattern(pattern: &str, min: usize, max: usize) -> Option<String> {
    let schema = json!({"type": "string", "pattern": pattern})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let v = LazyValidator::default();
    let candidates = [
        "abc",
        "a",
        "A",
        "1",
        "123",
        "abc123",
        "ABC",
        "Ab1",
        "a-b",
        "a_b",
        "a.b",
        "2024-01-02",
        "2024-01-02T03:04:05Z",
        "US",
        "usd",
        "en-US",
        "+15555550100",
        "AC0123456789abcdef0123456789abcdef",
        "PN0123456789abcdef0123456789abcdef",
        "SK0123456789abcdef0123456789abcdef",
        "CA0123456789abcdef0123456789abcdef",
        "0123456789abcdef0123456789abcdef",
        "user@example.com",
        "https://example.com/x",
        "#ffffff",
        "ffffff",
        "v1",
        "x",
    ];
    let derived = example_of_pattern(pattern);
    let derived = derived.iter().map(String::as_str);
    derived
        .chain(candidates)
        .map(|c| fit_len(c, min, max))
        .find(|c| {
            let mut args = Map::new();
            args.insert("v".into(), json!(c));
            let wrapper = json!({"type": "object", "properties": {"v": schema}})
                .as_object()
                .cloned()
                .unwrap_or_default();
            check(&v, &wrapper, &args).is_ok()
        })
}

/// A string for a simple regular expression: literals, classes (their first member), `\d`,
/// `\w`, `.`, groups (their first alternative) and quantifiers (their least count, one for
/// `+`). `None` for anything else.
fn example_of_pattern(pattern: &str) -> Option<String> {
    fn alt(chars: &[char], i: &mut usize, out: &mut String, depth: usize) -> Option<()> {
        if depth > 8 {
            return None;
        }
        while *i < chars.len() {
            let start = out.len();
            match chars[*i] {
                '^' | '$' => {
                    *i += 1;
                    continue;
                }
                '|' => {
                    // Keep the first alternative: skip to the end of this group.
                    let mut level = 0;
                    while *i < chars.len() {
                        match chars[*i] {
                            '\\' => *i += 1,
                            '(' => level += 1,
                            ')' if level == 0 => return Some(()),
                            ')' => level -= 1,
                            _ => {}
                        }
                        *i += 1;
                    }
                    return Some(());
                }
                ')' => return Some(()),
                '(' => {
                    *i += 1;
                    if chars.get(*i) == Some(&'?') {
                        *i += 2; // (?: ...)
                    }
                    alt(chars, i, out, depth + 1)?;
                    if chars.get(*i) != Some(&')') {
                        return None;
                    }
                    *i += 1;
                }
                '[' => {
                    *i += 1;
                    if chars.get(*i) == Some(&'^') {
                        return None;
                    }
                    let first = match chars.get(*i)? {
                        '\\' => {
                            *i += 1;
                            match chars.get(*i)? {
                                'd' => '1',
                                'w' => 'a',
                                c => *c,
                            }
                        }
                        c => *c,
                    };
                    while *i < chars.len() && chars[*i] != ']' {
                        *i += 1;
                    }
                    *i += 1;
                    out.push(first);
                }
                '\\' => {
                    *i += 1;
                    out.push(match chars.get(*i)? {
                        'd' => '1',
                        'w' => 'a',
                        's' => ' ',
                        c if c.is_ascii_alphanumeric() => return None,
                        c => *c,
                    });
                    *i += 1;
                }
                '.' => {
                    out.push('a');
                    *i += 1;
                }
                c => {
                    out.push(c);
                    *i += 1;
                }
            }
            // Quantifier on what was just added.
            let piece = out[start..].to_string();
            match chars.get(*i) {
                Some('{') => {
                    let close = chars[*i..].iter().position(|c| *c == '}')? + *i;
                    let inner: String = chars[*i + 1..close].iter().collect();
                    let n: usize = inner.split(',').next()?.trim().parse().ok()?;
                    out.truncate(start);
                    for _ in 0..n.min(256) {
                        out.push_str(&piece);
                    }
                    *i = close + 1;
                }
                Some('*') | Some('?') => {
                    out.truncate(start);
                    *i += 1;
                }
                Some('+') => *i += 1,
                _ => {}
            }
            if matches!(chars.get(*i), Some('?') | Some('+')) {
                *i += 1; // lazy / possessive
            }
        }
        Some(())
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    alt(&chars, &mut i, &mut out, 0)?;
    Some(out)
}

fn fit_len(s: &str, min: usize, max: usize) -> String {
    let mut s = s.to_string();
    while s.chars().count() < min {
        s.push('a');
    }
    if s.chars().count() > max {
        s = s.chars().take(max.max(1)).collect();
    }
    s
}

impl Gen<'_> {
    fn resolve<'s>(&'s self, s: &'s Value, depth: usize) -> &'s Value {
        let mut cur = s;
        for _ in 0..16 {
            let Some(r) = cur.get("$ref").and_then(Value::as_str) else {
                return cur;
            };
            let Some(ptr) = r.strip_prefix('#') else {
                return cur;
            };
            match self.root.pointer(ptr) {
                Some(t) => cur = t,
                None => return cur,
            }
        }
        let _ = depth;
        cur
    }

    fn value(&self, schema: &Value, depth: usize, optional: usize) -> Value {
        if depth > 12 {
            return Value::Null;
        }
        let s = self.resolve(schema, depth);
        let Some(o) = s.as_object() else {
            return json!("abc");
        };
        if let Some(c) = o.get("const") {
            return c.clone();
        }
        if let Some(e) = o.get("enum").and_then(Value::as_array)
            && let Some(v) = e.iter().find(|v| !v.is_null()).or(e.first())
        {
            return v.clone();
        }
        if let Some(d) = o.get("default").filter(|d| !d.is_null()) {
            return d.clone();
        }
        if let Some(parts) = o.get("allOf").and_then(Value::as_array) {
            let mut merged = merge_all_of(parts, self, depth);
            if let (Some(m), Some(own)) = (merged.as_object_mut(), Some(o)) {
                for (k, v) in own {
                    if k != "allOf" {
                        m.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            return self.value(&merged, depth + 1, optional);
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(alts) = o.get(key).and_then(Value::as_array) {
                let pick = alts
                    .iter()
                    .find(|a| {
                        let a = self.resolve(a, depth);
                        a.get("type") != Some(&json!("null"))
                    })
                    .or(alts.first());
                if let Some(a) = pick {
                    // Siblings (e.g. `properties` next to `oneOf`) still apply: merge them.
                    let mut m = self
                        .resolve(a, depth)
                        .as_object()
                        .cloned()
                        .unwrap_or_default();
                    for (k, v) in o {
                        if k != key {
                            m.entry(k.clone()).or_insert_with(|| v.clone());
                        }
                    }
                    return self.value(&Value::Object(m), depth + 1, optional);
                }
            }
        }
        let ty = match o.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null")
                .unwrap_or("null")
                .to_string(),
            _ if o.contains_key("properties") => "object".into(),
            _ if o.contains_key("items") => "array".into(),
            _ => "string".into(),
        };
        match ty.as_str() {
            "null" => Value::Null,
            "boolean" => json!(true),
            "integer" | "number" => number(o, ty == "integer"),
            "array" => {
                let min = o
                    .get("minItems")
                    .and_then(Value::as_u64)
                    .unwrap_or(1)
                    .max(1);
                let item = o.get("items").cloned().unwrap_or(json!({"type": "string"}));
                let first = self.value(&item, depth + 1, 0);
                let unique = o.get("uniqueItems") == Some(&json!(true));
                let mut out = vec![first.clone()];
                for i in 1..min {
                    out.push(match (&first, unique) {
                        (Value::String(s), true) => json!(format!("{s}{i}")),
                        (Value::Number(_), true) => json!(i),
                        _ => first.clone(),
                    });
                }
                Value::Array(out)
            }
            "object" => self.object(o, depth, optional),
            _ => string(o),
        }
    }

    /// Required properties, plus the first `optional` others (and enough for `minProperties`).
    fn object(&self, o: &Map<String, Value>, depth: usize, optional: usize) -> Value {
        let mut out = Map::new();
        let props = o.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = o
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for name in &required {
            let schema = props
                .and_then(|p| p.get(*name))
                .cloned()
                .unwrap_or(json!({}));
            out.insert(name.to_string(), self.value(&schema, depth + 1, 0));
        }
        let min_props = o.get("minProperties").and_then(Value::as_u64).unwrap_or(0) as usize;
        let mut extra = optional.max(min_props.saturating_sub(out.len()));
        if let Some(p) = props {
            for (name, schema) in p {
                if extra == 0 {
                    break;
                }
                if out.contains_key(name) {
                    continue;
                }
                let s = self.resolve(schema, depth);
                if s.get("readOnly") == Some(&json!(true))
                    || s.get("deprecated") == Some(&json!(true))
                {
                    continue;
                }
                out.insert(name.clone(), self.value(schema, depth + 1, 0));
                extra -= 1;
            }
        }
        Value::Object(out)
    }
}

fn number(o: &Map<String, Value>, integer: bool) -> Value {
    let f = |k: &str| o.get(k).and_then(Value::as_f64);
    let mut lo = f("minimum");
    if let Some(x) = f("exclusiveMinimum") {
        lo = Some(if integer { x.floor() + 1.0 } else { x + 0.5 });
    } else if o.get("exclusiveMinimum") == Some(&json!(true)) {
        lo = lo.map(|x| if integer { x + 1.0 } else { x + 0.5 });
    }
    let mut hi = f("maximum");
    if let Some(x) = f("exclusiveMaximum") {
        hi = Some(if integer { x.ceil() - 1.0 } else { x - 0.5 });
    } else if o.get("exclusiveMaximum") == Some(&json!(true)) {
        hi = hi.map(|x| if integer { x - 1.0 } else { x - 0.5 });
    }
    let mut v = match (lo, hi) {
        (Some(l), _) => l.max(1.0_f64.min(hi.unwrap_or(f64::MAX))).max(l),
        (None, Some(h)) => h.min(1.0),
        (None, None) => 1.0,
    };
    if let Some(m) = f("multipleOf").filter(|m| *m > 0.0) {
        v = (v / m).ceil() * m;
    }
    if integer { json!(v as i64) } else { json!(v) }
}

fn string(o: &Map<String, Value>) -> Value {
    let min = o.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = o
        .get("maxLength")
        .and_then(Value::as_u64)
        .map_or(usize::MAX, |m| m as usize);
    let by_format = match o.get("format").and_then(Value::as_str).unwrap_or("") {
        "date-time" => Some("2024-01-02T03:04:05Z"),
        "date" => Some("2024-01-02"),
        "time" => Some("03:04:05Z"),
        "uuid" => Some("123e4567-e89b-42d3-a456-426614174000"),
        "email" => Some("user@example.com"),
        "uri" | "url" | "uri-reference" | "iri" => Some("https://example.com/x"),
        "hostname" => Some("example.com"),
        "ipv4" => Some("192.0.2.1"),
        "ipv6" => Some("2001:db8::1"),
        "byte" => Some("aGVsbG8="),
        "duration" => Some("P1D"),
        "int32" | "int64" => Some("1"),
        _ => None,
    };
    if let Some(p) = o.get("pattern").and_then(Value::as_str)
        && let Some(s) = string_for_pattern(p, min, max)
    {
        return json!(s);
    }
    json!(fit_len(by_format.unwrap_or("abc"), min, max))
}

/// Arguments for a tool: required ones plus up to two optional top-level ones.
fn arguments(def: &ToolDef) -> Map<String, Value> {
    let root = Value::Object((*def.tool().input_schema).clone());
    let g = Gen { root: &root };
    match g.value(&root, 0, 2) {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

// ------------------------------------------------------------------ path check

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && b[i + 1].is_ascii_hexdigit()
            && b[i + 2].is_ascii_hexdigit()
            && let Ok(x) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(x);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether the request path is the template (literal text as is, each `{param}` a non-empty
/// stretch without `/`) under [`BASE_PATH`]. A query or fragment written in the path key
/// (`/{Bucket}?acl`, `/cookies#form`) is not part of the request path.
fn path_matches(template: &str, path: &str) -> bool {
    let template = template.split(['?', '#']).next().unwrap_or_default();
    let Some(rest) = path.strip_prefix(BASE_PATH) else {
        return false;
    };
    let t: Vec<&str> = template.trim_start_matches('/').split('/').collect();
    let p: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    if !rest.starts_with('/') || t.len() != p.len() {
        return false;
    }
    t.iter().zip(&p).all(|(ts, ps)| {
        let ps = percent_decode(ps);
        if !ts.contains('{') {
            return *ts == ps || percent_decode(ts) == ps;
        }
        // Literal pieces around the parameters, in order.
        let mut literals: Vec<&str> = Vec::new();
        let mut r = *ts;
        while let Some(open) = r.find('{') {
            literals.push(&r[..open]);
            match r[open..].find('}') {
                Some(close) => r = &r[open + close + 1..],
                None => break,
            }
        }
        literals.push(r);
        let mut pos = 0;
        let n = literals.len();
        for (i, lit) in literals.iter().enumerate() {
            if i == 0 {
                if !ps.starts_with(lit) {
                    return false;
                }
                pos = lit.len();
            } else if i == n - 1 {
                if ps.len() < pos + lit.len() || !ps[pos..].ends_with(lit) {
                    return false;
                }
            } else {
                match ps[pos..].find(lit) {
                    Some(at) => pos += at + lit.len(),
                    None => return false,
                }
            }
        }
        !ps.is_empty()
    })
}

// ------------------------------------------------------------------ the test

fn small_and_medium_specs(dir: &Path) -> Vec<PathBuf> {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "yaml"))
                .collect()
        })
        .unwrap_or_default();
    specs.push(dir.join("digitalocean-3.0/DigitalOcean-public.v2.yaml"));
    specs.push(dir.join("oai-petstore-separate-2.0/spec/swagger.yaml"));
    specs.sort();
    specs
}

#[derive(Default, Debug)]
struct Counts {
    tools: usize,
    ok: usize,
    refused: usize,
    bad: usize,
    own_server: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_of_small_and_medium_specs_is_called() {
    let Some(dir) = shared_specs() else {
        eprintln!("SKIPPED: ../shared/specs not found (the corpus-calls test needs it)");
        return;
    };
    let started = Instant::now();
    let up = Upstream::start().await;
    let base = up.url(BASE_PATH);
    let mut refusals: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut bad_lines: Vec<String> = Vec::new();
    let mut totals = Counts::default();
    let mut specs_called = 0;
    for path in small_and_medium_specs(&dir) {
        let spec_started = Instant::now();
        let Ok(loaded) = load(&SpecSource::Path(path.clone())).await else {
            bad_lines.push(format!("{}: does not load", path.display()));
            continue;
        };
        let mut set = convert(&loaded, &ToolOptions::default()).tools;
        if set.tools.len() > MAX_TOOLS {
            eprintln!(
                "{}: {} tools > {MAX_TOOLS}, left out",
                path.display(),
                set.tools.len()
            );
            continue;
        }
        let mut c = Counts {
            tools: set.tools.len(),
            ..Counts::default()
        };
        // Operation-level servers would send the call elsewhere (the real API): point them at
        // the upstream too, by dropping them (the base URL then applies).
        for t in &mut set.tools {
            if t.route.server.is_some() {
                c.own_server += 1;
                Arc::make_mut(t).route.server = None;
            }
        }
        let defs = set.tools.clone();
        let mut opts = ForwardOptions::new(url::Url::parse(&base).expect("base url"));
        opts.timeout = Duration::from_secs(5);
        let fwd = Forwarder::new(opts, set.security_schemes.clone(), Credentials::new())
            .expect("forwarder");
        let client = connect_in_process(ProxyServer::new(set, fwd, ServerOptions::default())).await;
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        for def in &defs {
            let tool = def.name().to_string();
            let args = arguments(def);
            up.clear();
            let call = client
                .call_tool(CallToolRequestParams::new(tool.clone()).with_arguments(args.clone()));
            let outcome = tokio::time::timeout(CALL_TIMEOUT, call).await;
            let seen = up.requests();
            let line =
                |why: &str| format!("{name} {tool}: {why}; args {}", Value::Object(args.clone()));
            match outcome {
                Err(_) => {
                    c.bad += 1;
                    bad_lines.push(line("no answer within 10 s"));
                }
                Ok(Err(e)) => {
                    c.bad += 1;
                    bad_lines.push(line(&format!("protocol error {e}")));
                }
                Ok(Ok(r)) => match seen.as_slice() {
                    [req] => {
                        if path_matches(&def.route.path, req.path()) {
                            c.ok += 1;
                        } else {
                            c.bad += 1;
                            bad_lines.push(line(&format!(
                                "sent to {} for template {}",
                                req.path(),
                                def.route.path
                            )));
                        }
                    }
                    [] if r.is_error == Some(true) && !text(&r).is_empty() => {
                        c.refused += 1;
                        let msg = text(&r);
                        // Group by the message with the argument values cut off.
                        let key: String = msg
                            .lines()
                            .nth(1)
                            .unwrap_or(&msg)
                            .split(['`', '\''])
                            .enumerate()
                            .map(|(i, p)| if i % 2 == 1 { "_" } else { p })
                            .collect::<String>()
                            .chars()
                            .take(120)
                            .collect();
                        let e = refusals.entry(key).or_insert((0, String::new()));
                        e.0 += 1;
                        if e.1.is_empty() {
                            e.1 = format!(
                                "{name} {tool}: {}",
                                msg.chars().take(300).collect::<String>()
                            );
                        }
                    }
                    other => {
                        c.bad += 1;
                        bad_lines.push(line(&format!(
                            "{} requests upstream; result {}",
                            other.len(),
                            text(&r).chars().take(200).collect::<String>()
                        )));
                    }
                },
            }
        }
        let _ = client.cancel().await;
        eprintln!(
            "corpus calls: {name}: {} tools, {} ok, {} refused, {} bad ({} operation servers redirected) in {:.2?}",
            c.tools,
            c.ok,
            c.refused,
            c.bad,
            c.own_server,
            spec_started.elapsed()
        );
        specs_called += 1;
        totals.tools += c.tools;
        totals.ok += c.ok;
        totals.refused += c.refused;
        totals.bad += c.bad;
    }
    let mut top: Vec<_> = refusals.into_iter().collect();
    top.sort_by_key(|t| std::cmp::Reverse(t.1.0));
    for (key, (n, example)) in top.iter().take(10) {
        eprintln!("refused x{n}: {key}\n    e.g. {example}");
    }
    for l in bad_lines.iter().take(20) {
        eprintln!("BAD: {l}");
    }
    eprintln!(
        "corpus calls: {specs_called} specs, {} tools, {} ok, {} refused, {} bad in {:.2?}",
        totals.tools,
        totals.ok,
        totals.refused,
        totals.bad,
        started.elapsed()
    );
    assert!(specs_called >= 10, "only {specs_called} specs called");
    assert!(bad_lines.is_empty(), "{} bad calls", bad_lines.len());
    // Refusals are generator gaps or converter bugs; most calls must get through.
    assert!(
        totals.ok * 10 >= totals.tools * 9,
        "only {} of {} calls reached the upstream",
        totals.ok,
        totals.tools
    );
}

#[test]
fn pattern_examples() {
    let ex = |p: &str| example_of_pattern(p).unwrap_or_default();
    assert_eq!(ex("^SD[0-9a-fA-F]{32}$").len(), 34);
    assert!(ex("^(SM|MM)[0-9a-fA-F]{2}$").starts_with("SM0"));
    assert_eq!(ex(r"^\d{3}-\d+$"), "111-1");
}

#[test]
fn path_matching() {
    assert!(path_matches("/pets/{id}", "/corpus/v9/pets/7"));
    assert!(path_matches("/pets/{id}.json", "/corpus/v9/pets/7.json"));
    assert!(path_matches("/a/{x}/b", "/corpus/v9/a/%2F/b"));
    assert!(!path_matches("/pets/{id}", "/corpus/v9/pets/7/x"));
    assert!(!path_matches("/pets/{id}", "/pets/7"));
    assert!(!path_matches("/pets/{id}", "/corpus/v9/dogs/7"));
    assert!(!path_matches("/pets/{id}.json", "/corpus/v9/pets/7.xml"));
}
