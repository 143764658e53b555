//! The `overlay` fuzz target's check (#39): an OpenAPI Overlay document (actions with RFC 9535
//! JSONPath targets, `update` merged, `remove`) parsed and applied through the public API of
//! `openapi_mcp_convert::overlay` to an OpenAPI-ish document. It must not panic or overflow the
//! stack, must finish each input within the CPU time the caller gives, must keep the result
//! within the budgets (nodes: the document's plus [`MAX_WRITTEN`]; text: the document's plus
//! [`MAX_WRITTEN_BYTES`]; depth: [`MAX_DEPTH`]), must name the place of every error and warning
//! (`fuzz.yaml#/actions/N[/target|/update]`, one line), and must keep the properties that hold:
//! actions that neither update nor remove leave the document byte-identical, and so do actions
//! that all select nothing; an overlay of `remove` actions whose targets are names and
//! wildcards only, applied twice, gives what it gave once (the second time selects nothing).
//!
//! An input is a mode byte, then the rest. Mode bits 0-1: the document (0: a small pets spec,
//! 1: a large spec of ~30k nodes, 2-3: given by the input); bit 2: the overlay is structured
//! (built from [`Reader`] choices: a target grammar, updates, flags) rather than raw text.
//! Raw: the overlay's text, a NUL, then the document as JSON (or [`Reader::value`] bytes).
//! An overlay with no actions is refused by the parser (Overlay 1.0 requires at least one), so
//! the "nothing to do" property is checked with actions that select nothing or do nothing.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use openapi_mcp_convert::load::parse_document;
use openapi_mcp_convert::overlay::{
    MAX_DEPTH, MAX_WRITTEN, MAX_WRITTEN_BYTES, Overlay, OverlayError,
};

use super::MAX_INPUT;
use super::reader::{Reader, Writer};

/// The overlay's name in messages.
pub const FILE: &str = "fuzz.yaml";

/// The documents an input may pick.
pub const DOCS: [&str; 4] = ["spec", "large", "given", "given"];

/// A decoded input.
#[derive(Debug, Clone)]
pub struct Case {
    pub doc: Value,
    pub overlay: Vec<u8>,
}

/// The small spec the Overlay specification's examples are written against.
pub fn spec() -> Value {
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Pets", "version": "1.0.0", "description": "A pet store"},
        "servers": [{"url": "https://api.test/v1"}],
        "tags": [{"name": "pets"}, {"name": "store", "x-internal": true}],
        "paths": {
            "/pets": {
                "get": {
                    "operationId": "listPets",
                    "summary": "List pets",
                    "tags": ["pets"],
                    "x-oai-traits": ["paged"],
                    "parameters": [
                        {"name": "dummy", "in": "query", "schema": {"type": "string"}},
                        {"name": "limit", "in": "query", "schema": {"type": "integer"}}
                    ],
                    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pets"}}}}}
                },
                "post": {"operationId": "createPet", "x-internal": true, "responses": {"201": {"description": "created"}}}
            },
            "/pets/{petId}": {
                "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
                "get": {"operationId": "showPetById", "deprecated": true, "parameters": [{"name": "dummy", "in": "query"}], "responses": {"200": {"description": "ok"}}},
                "delete": {"operationId": "deletePet", "responses": {"204": {"description": "gone"}}}
            }
        },
        "components": {"schemas": {
            "Pet": {"type": "object", "required": ["id", "name"], "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "tag": {"type": "string"}}},
            "Pets": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}
        }}
    })
}

/// A large spec: 1,000 paths of two operations each (~30k nodes), and a schema 60 deep.
pub fn large() -> Value {
    let mut paths = Map::new();
    for i in 0..1000 {
        paths.insert(
            format!("/r{i}/{{id}}"),
            json!({
                "get": {"operationId": format!("get{i}"), "tags": ["t"], "deprecated": i % 7 == 0,
                        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                                       {"name": "q", "in": "query", "schema": {"type": "integer"}}],
                        "responses": {"200": {"description": "ok"}}},
                "put": {"operationId": format!("put{i}"), "x-internal": i % 3 == 0,
                        "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
                        "responses": {"204": {"description": "done"}}}
            }),
        );
    }
    let mut deep = json!({"type": "string"});
    for i in 0..60 {
        deep = json!({"type": "object", "properties": {format!("p{i}"): deep}});
    }
    let mut doc = spec();
    doc["paths"] = Value::Object(paths);
    doc["components"]["schemas"]["Deep"] = deep;
    doc
}

/// [`large`], built once (cloned per input).
static LARGE: LazyLock<Value> = LazyLock::new(large);

pub fn decode(data: &[u8]) -> Option<Case> {
    if data.is_empty() || data.len() > MAX_INPUT {
        return None;
    }
    let mode = data[0];
    let rest = &data[1..];
    let given = DOCS[usize::from(mode & 3)] == "given";
    let (overlay, doc) = if mode & 4 == 0 {
        let (o, d) = match rest.iter().position(|b| *b == 0) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &[][..]),
        };
        let doc = given
            .then(|| serde_json::from_slice(d).unwrap_or_else(|_| Reader::new(d).value(6, 4096)));
        (o.to_vec(), doc)
    } else {
        let mut r = Reader::new(rest);
        let o = structured(&mut r);
        (o, given.then(|| r.value(6, 4096)))
    };
    let doc = match (doc, DOCS[usize::from(mode & 3)]) {
        (Some(d), _) => d,
        (None, "large") => LARGE.clone(),
        (None, _) => spec(),
    };
    Some(Case { doc, overlay })
}

/// The pieces targets are built of (structured mode); the last choice is a string of the input.
pub const PIECES: [&str; 24] = [
    ".paths",
    ".*",
    "..",
    "[*]",
    "['/pets']",
    "['/pets/{petId}']",
    ".get",
    ".parameters",
    "[0]",
    "[-1]",
    "[1:]",
    "[::-1]",
    "[?@.name == 'dummy']",
    "[?@.deprecated == true]",
    "[?@['x-internal']]",
    "[*,*]",
    "['get','put','post']",
    "[?length(@.parameters) > 1]",
    "[?count(@.*) > 2]",
    ".components.schemas",
    ".properties",
    "[?@.operationId]",
    ".info",
    "[?$.info.version == '1.0.0']",
];

fn structured(r: &mut Reader<'_>) -> Vec<u8> {
    let n = 1 + r.choose(6);
    let mut actions = Vec::new();
    for _ in 0..n {
        let mut target = String::from("$");
        for _ in 0..r.choose(7) {
            let i = r.choose(PIECES.len() + 1);
            match PIECES.get(i) {
                Some(p) => target.push_str(p),
                None => target.push_str(&r.string()),
            }
        }
        let mut a = Map::new();
        a.insert("target".into(), Value::String(target));
        let flags = r.byte();
        if flags & 1 == 1 {
            let update = match flags >> 1 & 3 {
                0 => r.value(4, 256),
                1 => json!({"description": r.long_string(8192), "x-a": r.value(3, 64)}),
                2 => {
                    // Deep: an object nested up to 140 levels.
                    let mut v = r.value(1, 16);
                    for _ in 0..r.choose(141) {
                        v = json!({"n": v});
                    }
                    v
                }
                _ => Value::Array((0..r.choose(8)).map(|_| r.value(2, 32)).collect()),
            };
            a.insert("update".into(), update);
        }
        if flags & 8 == 8 {
            a.insert("remove".into(), Value::Bool(flags & 16 == 16));
        }
        actions.push(Value::Object(a));
    }
    json!({"overlay": "1.0.0", "info": {"title": "fuzz", "version": "1"}, "actions": actions})
        .to_string()
        .into_bytes()
}

/// Raw-mode input bytes (for seeds): an overlay's text and a document (`None`: the small spec;
/// `Some(Value::Null)`: the large one).
pub fn encode(overlay: &str, doc: Option<&Value>) -> Vec<u8> {
    let mut out = Vec::new();
    match doc {
        None => out.push(0),
        Some(Value::Null) => out.push(1),
        Some(_) => out.push(2),
    }
    out.extend_from_slice(overlay.as_bytes());
    if let Some(d) = doc.filter(|d| !d.is_null()) {
        out.push(0);
        out.extend_from_slice(d.to_string().as_bytes());
    }
    out
}

/// What the check saw.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// The overlay was refused by the parser.
    Refused(String),
    /// Applied: the number of warnings.
    Applied(usize),
    /// Applying failed (the message).
    Failed(String),
}

fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().next()?.parse::<u64>().ok()?;
    Some(Duration::from_nanos(ns))
}

/// What the overlay's own text says of its actions (read independently of the code under test).
struct ActionInfo {
    target: String,
    update: bool,
    remove: bool,
}

fn actions_of(bytes: &[u8]) -> Option<Vec<ActionInfo>> {
    let doc = parse_document(bytes).ok()?.to_value();
    let actions = doc.get("actions")?.as_array()?;
    Some(
        actions
            .iter()
            .map(|a| ActionInfo {
                target: a["target"].as_str().unwrap_or_default().to_string(),
                update: a.get("update").is_some(),
                remove: a.get("remove") == Some(&Value::Bool(true)),
            })
            .collect(),
    )
}

/// A target of names, wildcards and descendant segments only (no index, slice or filter): the
/// nodes it selects in a document with fewer nodes are a subset of those it selects before, so
/// removing them is idempotent.
fn names_and_wildcards(target: &str) -> bool {
    let b = target.as_bytes();
    let (mut i, mut quote, mut depth) = (1, None::<u8>, 0);
    if b.first() != Some(&b'$') {
        return false;
    }
    while i < b.len() {
        let c = b[i];
        match (quote, c) {
            (Some(_), b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') if depth > 0 => quote = Some(c),
            (None, b'[') => depth += 1,
            (None, b']') => depth -= 1,
            (None, b'*' | b',' | b' ') if depth > 0 => {}
            (None, _) if depth > 0 => return false,
            (None, b'?' | b'$' | b'@' | b'(') => return false,
            _ => {}
        }
        i += 1;
    }
    true
}

/// The depth of a value (a scalar: 0).
fn depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(m) => stack.extend(m.values().map(|x| (x, d + 1))),
            _ => max = max.max(d),
        }
        if matches!(v, Value::Array(a) if a.is_empty())
            || matches!(v, Value::Object(m) if m.is_empty())
        {
            max = max.max(d + 1);
        }
    }
    max
}

/// Nodes, and the bytes of their strings and member names.
fn size(v: &Value) -> (usize, usize) {
    let (mut nodes, mut bytes) = (0usize, 0usize);
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        nodes += 1;
        match v {
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(m) => {
                bytes += m.keys().map(String::len).sum::<usize>();
                stack.extend(m.values());
            }
            Value::String(s) => bytes += s.len(),
            _ => {}
        }
    }
    (nodes, bytes)
}

/// `/actions/N` then nothing or one of the action's members; `N` < `count`.
fn action_pointer(p: &str, count: usize, members: &[&str]) -> bool {
    let Some(rest) = p.strip_prefix("/actions/") else {
        return false;
    };
    let (n, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    n.parse::<usize>().is_ok_and(|n| n < count)
        && (n == "0" || !n.starts_with('0'))
        && (tail.is_empty() || members.contains(&tail))
}

fn check_error(e: &OverlayError, count: Option<usize>, applying: bool) -> Result<(), String> {
    let text = e.to_string();
    if e.file != FILE || !text.starts_with(&format!("overlay {FILE}")) {
        return Err(format!("an error that does not name the file: {text}"));
    }
    if text.contains('\n') || e.message.is_empty() {
        return Err(format!("an error that is not one line: {text:?}"));
    }
    let members = ["/target", "/update", "/remove", "/description"];
    let ok = if applying {
        action_pointer(&e.pointer, count.unwrap_or(0), &members[..2])
    } else {
        e.pointer.is_empty()
            || [
                "/overlay",
                "/info",
                "/info/title",
                "/info/version",
                "/extends",
                "/actions",
            ]
            .contains(&e.pointer.as_str())
            || action_pointer(&e.pointer, count.unwrap_or(usize::MAX), &members)
    };
    if !ok {
        return Err(format!("an error at an unexpected place: {text}"));
    }
    Ok(())
}

pub fn run_case(case: &Case, limit: Duration) -> Result<Outcome, String> {
    let started = Instant::now();
    let cpu_before = thread_cpu();
    let infos = actions_of(&case.overlay);
    let count = infos.as_ref().map(Vec::len);
    let outcome = match Overlay::parse(FILE, &case.overlay) {
        Err(e) => {
            check_error(&e, count, false)?;
            Outcome::Refused(e.to_string())
        }
        Ok(o) => {
            let infos = infos.ok_or("the parser accepted an overlay its text has no actions of")?;
            let before = serde_json::to_vec(&case.doc).map_err(|e| e.to_string())?;
            let mut doc = case.doc.clone();
            match Overlay::apply_all(std::slice::from_ref(&o), &mut doc) {
                Err(e) => {
                    check_error(&e, Some(infos.len()), true)?;
                    Outcome::Failed(e.to_string())
                }
                Ok(diags) => {
                    let warnings = diags.len();
                    for d in diags.iter() {
                        let (file, ptr) = (d.location.doc(), d.location.pointer());
                        if file != FILE
                            || !action_pointer(ptr, infos.len(), &[])
                            || d.message.contains('\n')
                        {
                            return Err(format!("a warning at an unexpected place: {d}"));
                        }
                    }
                    let after = serde_json::to_vec(&doc).map_err(|e| e.to_string())?;
                    let (n0, b0) = size(&case.doc);
                    let (n1, b1) = size(&doc);
                    if n1 > n0 + MAX_WRITTEN {
                        return Err(format!("{n1} nodes from {n0}: over MAX_WRITTEN"));
                    }
                    if b1 > b0 + MAX_WRITTEN_BYTES {
                        return Err(format!(
                            "{b1} bytes of text from {b0}: over MAX_WRITTEN_BYTES"
                        ));
                    }
                    if depth(&doc) > depth(&case.doc).max(MAX_DEPTH) {
                        return Err(format!("a result {} deep: over MAX_DEPTH", depth(&doc)));
                    }
                    let inert = infos.iter().all(|a| !a.update && !a.remove);
                    if (inert || warnings == infos.len()) && after != before {
                        return Err(format!(
                            "the document changed, with actions that do nothing (inert: {inert}, warnings: {warnings})"
                        ));
                    }
                    if warnings > infos.len() {
                        return Err(format!("{warnings} warnings for {} actions", infos.len()));
                    }
                    let removes = infos
                        .iter()
                        .all(|a| a.remove && names_and_wildcards(&a.target));
                    if removes {
                        let mut again = doc.clone();
                        let second = Overlay::apply_all(std::slice::from_ref(&o), &mut again)
                            .map_err(|e| {
                                format!("remove-only overlay failed the second time: {e}")
                            })?;
                        if serde_json::to_vec(&again).map_err(|e| e.to_string())? != after {
                            return Err(
                                "a remove-only overlay applied twice differs from once".into()
                            );
                        }
                        if second.len() != infos.len() {
                            return Err(format!(
                                "a remove-only overlay applied again selected something ({} of {} actions warned)",
                                second.len(),
                                infos.len()
                            ));
                        }
                    }
                    Outcome::Applied(warnings)
                }
            }
        }
    };
    let cpu = match (cpu_before, thread_cpu()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => started.elapsed(),
    };
    if cpu > limit {
        return Err(format!("the input took {cpu:?} of CPU (limit {limit:?})"));
    }
    Ok(outcome)
}

/// The fuzz target's entry point.
pub fn check_overlay(data: &[u8], limit: Duration) -> Result<(), String> {
    let Some(case) = decode(data) else {
        return Ok(());
    };
    run_case(&case, limit).map(|_| ())
}

const HEAD: &str = "overlay: 1.0.0\ninfo:\n  title: fuzz\n  version: 1.0.0\nactions:\n";

/// The seed corpus (`fuzz/seeds/overlay/`): the Overlay specification's examples (1.0.0, in
/// RFC 9535 syntax where its text is not), then the attacks (names starting with `attack-`).
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let examples: [(&str, &str); 10] = [
        (
            "structured",
            "- target: $\n  update:\n    info:\n      x-overlay-applied: structured-overlay\n    paths:\n      /pets:\n        get:\n          description: All the pets\n",
        ),
        (
            "targeted",
            "- target: $.paths['/pets'].get\n  description: Add a description\n  update:\n    description: All the pets\n- target: $.paths['/pets/{petId}'].get\n  update:\n    description: One pet\n",
        ),
        (
            "wildcard",
            "- target: $.paths.*.get\n  description: Add a header to every GET\n  update:\n    parameters:\n      - name: X-Trace\n        in: header\n",
        ),
        (
            "array-remove",
            "- target: $.paths.*.get.parameters[?@.name == 'dummy']\n  description: Remove a parameter everywhere\n  remove: true\n",
        ),
        (
            "traits",
            "- target: $.paths.*.get[?@['x-oai-traits'][?@ == 'paged']]\n  update:\n    parameters:\n      - {name: top, in: query}\n      - {name: skip, in: query}\n",
        ),
        (
            "remove-internal",
            "- target: $.paths.*[?@['x-internal'] == true]\n  remove: true\n- target: $.tags[?@['x-internal']]\n  remove: true\n",
        ),
        (
            "remove-deprecated",
            "- target: $.paths.*[?@.deprecated == true]\n  remove: true\n- target: $.paths['/nowhere']\n  remove: true\n",
        ),
        (
            "remove-names",
            "- target: $.paths.*.delete\n  remove: true\n- target: $..x-oai-traits\n  remove: true\n- target: $.components.schemas.Pet.properties.tag\n  remove: true\n",
        ),
        (
            "append-array",
            "- target: $.tags\n  update: {name: snacks}\n- target: $.servers\n  update: [{url: 'https://b.test'}]\n",
        ),
        (
            "inert",
            "- target: $.paths.*.get\n  description: neither update nor remove\n- target: $.info\n  remove: false\n",
        ),
    ];
    let mut out: Vec<(String, Vec<u8>)> = examples
        .iter()
        .map(|(n, a)| (format!("spec-{n}"), encode(&format!("{HEAD}{a}"), None)))
        .collect();
    out.push((
        "large-rename".into(),
        encode(
            &format!("{HEAD}- target: $.paths.*.get\n  update: {{x-safe: true}}\n- target: $.paths.*[?@['x-internal'] == true]\n  remove: true\n"),
            Some(&Value::Null),
        ),
    ));
    out.push((
        "given-json".into(),
        encode(
            r#"{"overlay":"1.0.0","info":{"title":"t","version":"1"},"actions":[{"target":"$.a[1:]","remove":true},{"target":"$.b","update":{"c":[1]}}]}"#,
            Some(&json!({"a": [1, 2, 3], "b": {"c": [0]}})),
        ),
    ));
    // Structured inputs: a few choices of the grammar.
    let w = Writer::new()
        .pick(4)
        .pick(1) // two actions
        .pick(3)
        .pick(0)
        .pick(1)
        .pick(6) // $.paths.*.get
        .pick(1) // update, any value
        .pick(6)
        .pick(1)
        .string("x-a")
        .pick(1)
        .pick(1)
        .pick(2)
        .pick(2)
        .pick(21) // $..[?@.operationId]
        .pick(8 | 16); // remove: true
    out.push(("structured-00".into(), w.finish()));
    out.extend(attack_seeds());
    out
}

/// Hostile inputs: each must end applied within the budgets, or refused, quickly.
pub fn attack_seeds() -> Vec<(String, Vec<u8>)> {
    let large = Some(&Value::Null);
    let a = |s: String| format!("{HEAD}{s}");
    // Many actions, each with two `..`, over the large spec.
    let many_descendants: String = (0..400)
        .map(|i| format!("- target: $..[?@.operationId == 'get{i}']..q\n  remove: true\n"))
        .collect();
    // One update of ~4k nodes merged at every operation (2,000 matches).
    let big: Vec<String> = (0..4000).map(|i| format!("k{i}: {i}")).collect();
    let huge_update = format!("- target: $.paths.*.*\n  update: {{{}}}\n", big.join(", "));
    // A long string (60 kB, one node) merged at 2,000 matches by each of five actions (a YAML
    // alias repeats it): 600 MB of text, over MAX_WRITTEN_BYTES.
    let long_string = format!(
        "- target: $.paths.*.*\n  update: {{description: &s '{}'}}\n{}",
        "x".repeat(60_000),
        "- target: $.paths.*.*\n  update: {description: *s}\n".repeat(4)
    );
    // Updates nested deeper at each action: the document would grow past any parser's depth.
    let nested = format!("{}{{z: 1}}{}", "{n: ".repeat(100), "}".repeat(100));
    let deep_updates: String = (0..40)
        .map(|_| format!("- target: $..[?@.z == 1]\n  update: {{z: 2, n: {nested}}}\n"))
        .collect();
    // Unions multiplying the matches before any count.
    let stars = ["*"; 100].join(",");
    let unions = format!("- target: $[{stars}][{stars}][{stars}][{stars}]\n  remove: true\n");
    let unions_filter = format!(
        "- target: $..[?@[{s}][{s}][{s}]]\n  remove: true\n",
        s = ["*"; 60].join(",")
    );
    // Absolute queries in a filter: a search of the whole document at every node.
    let absolute = "- target: $..[?$..*]\n  remove: true\n".to_string();
    let absolute_count = "- target: $..[?count($..*) > 1]\n  update: {x: 1}\n".to_string();
    // Every node, every descendant.
    let all_nodes = "- target: $..*..*\n  remove: true\n".to_string();
    vec![
        (
            "attack-many-descendants",
            encode(&a(many_descendants), large),
        ),
        ("attack-huge-update", encode(&a(huge_update), large)),
        ("attack-long-string", encode(&a(long_string), large)),
        (
            "attack-deep-updates",
            encode(&a(deep_updates), Some(&json!({"a": {"z": 1}}))),
        ),
        ("attack-unions", encode(&a(unions), large)),
        ("attack-unions-filter", encode(&a(unions_filter), large)),
        ("attack-absolute-filter", encode(&a(absolute), large)),
        ("attack-absolute-count", encode(&a(absolute_count), large)),
        ("attack-all-nodes", encode(&a(all_nodes), large)),
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
    const REPLAY_LIMIT: Duration = Duration::from_secs(60);

    /// Every seed and saved crash input passes; the specification's examples apply.
    #[test]
    fn overlay_corpus_replays() {
        let seeds = files_in(&root().join("fuzz/seeds/overlay"));
        assert!(seeds.len() >= 20, "seed corpus missing: {}", seeds.len());
        let regressions = files_in(&root().join("fuzz/regressions/overlay"));
        let mut applied = 0;
        for p in seeds.iter().chain(&regressions) {
            let data = std::fs::read(p).expect("read input");
            let case = decode(&data).expect("decodes");
            match run_case(&case, REPLAY_LIMIT) {
                Ok(Outcome::Applied(_)) => applied += 1,
                Ok(_) => {}
                Err(e) => panic!("{}: {e}", p.display()),
            }
        }
        assert!(applied >= 12, "only {applied} inputs applied");
    }

    /// The seeds on disk are the ones this file lists (regenerate with `write_seeds`).
    #[test]
    fn overlay_seeds_are_current() {
        let dir = root().join("fuzz/seeds/overlay");
        for (name, data) in seeds() {
            let on_disk = std::fs::read(dir.join(&name)).unwrap_or_default();
            assert_eq!(on_disk, data, "{name}: run write_seeds");
        }
    }

    /// The attacks end refused or failed by a limit, or applied within the budgets.
    #[test]
    fn overlay_attacks_are_bounded() {
        for (name, data) in attack_seeds() {
            let case = decode(&data).expect("decodes");
            let outcome = run_case(&case, REPLAY_LIMIT).unwrap_or_else(|e| panic!("{name}: {e}"));
            match (name.as_str(), &outcome) {
                ("attack-many-descendants" | "attack-all-nodes", _) => {}
                (_, Outcome::Refused(m) | Outcome::Failed(m)) => {
                    assert!(
                        m.contains("limit") || m.contains("not supported"),
                        "{name}: {m}"
                    )
                }
                _ => panic!("{name}: {outcome:?}"),
            }
        }
    }

    /// The check catches what it is for.
    #[test]
    fn overlay_check_reports_breakage() {
        let e = |file: &str, pointer: &str| OverlayError {
            file: file.into(),
            pointer: pointer.into(),
            message: "m".into(),
        };
        assert!(check_error(&e(FILE, "/actions/0/target"), Some(1), true).is_ok());
        assert!(check_error(&e(FILE, "/actions/1/target"), Some(1), true).is_err());
        assert!(check_error(&e(FILE, "/actions/01"), Some(3), false).is_err());
        assert!(check_error(&e(FILE, ""), Some(1), true).is_err());
        assert!(check_error(&e("other.yaml", "/actions/0"), Some(1), true).is_err());
        assert!(names_and_wildcards("$.paths.*['a','b']..x[*]"));
        assert!(!names_and_wildcards("$.a[0]"));
        assert!(!names_and_wildcards("$.a[?@.b]"));
        assert!(!names_and_wildcards("$.a[1:]"));
        assert_eq!(depth(&json!({"a": [1, {}]})), 3);
        assert_eq!(depth(&json!(1)), 0);
        // Removing index 0 twice is not idempotent: such targets are not held to it.
        let case = decode(&encode(
            &format!("{HEAD}- target: $.a[0]\n  remove: true\n"),
            Some(&json!({"a": [1, 2]})),
        ))
        .expect("decodes");
        assert_eq!(run_case(&case, REPLAY_LIMIT), Ok(Outcome::Applied(0)));
        let case = decode(&encode(
            &format!("{HEAD}- target: $.a.*\n  remove: true\n- target: $.b\n  remove: true\n"),
            Some(&json!({"a": [1, 2], "c": 1})),
        ))
        .expect("decodes");
        assert_eq!(run_case(&case, REPLAY_LIMIT), Ok(Outcome::Applied(1)));
    }

    #[test]
    #[ignore = "writes the seed corpus"]
    fn write_seeds() {
        let dir = root().join("fuzz/seeds/overlay");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (name, data) in seeds() {
            std::fs::write(dir.join(name), data).expect("write seed");
        }
    }
}
