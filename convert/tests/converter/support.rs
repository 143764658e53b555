//! Shared helpers: loading fixtures, finding tools, walking JSON Schemas, snapshot files.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use openapi_mcp_convert::diag::Diagnostic;
use openapi_mcp_convert::load::Spec;
use openapi_mcp_convert::{Conversion, LoadError, SpecSource, ToolOptions, convert, load};
use openapi_mcp_toolset::model::{ArgBinding, ArgLocation, PathStyle, QueryStyle, ToolDef};
use serde_json::{Map, Value};

/// `runtime/../specs`, as the loader names it in messages.
pub fn specs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("specs")
}

pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(f)
}

/// Loads `specs/<rel>` with the real (file-following) loader.
pub fn try_load_fixture(rel: &str) -> Result<Spec, LoadError> {
    block_on(load(&SpecSource::Path(specs_dir().join(rel))))
}

pub fn load_fixture(rel: &str) -> Spec {
    try_load_fixture(rel).unwrap_or_else(|e| panic!("loading fixture {rel}: {e}"))
}

pub fn convert_fixture(rel: &str) -> Conversion {
    convert_fixture_with(rel, &ToolOptions::default())
}

/// Converts `specs/<rel>` with `opts`, then runs the pipeline's first pass, the client profile
/// (`opts.client`), as `openapi-mcp tools --client` does.
pub fn convert_fixture_with(rel: &str, opts: &ToolOptions) -> Conversion {
    let mut conversion = convert(&load_fixture(rel), opts);
    openapi_mcp_convert::profile::apply(&mut conversion.tools, &opts.client);
    conversion
}

/// Parses an inline YAML/JSON spec (no external refs) and converts it with default options.
pub fn convert_inline(doc: &str) -> Conversion {
    let spec = openapi_mcp_convert::load::load_single(doc.as_bytes(), "inline.yaml")
        .expect("inline spec loads");
    convert(&spec, &ToolOptions::default())
}

/// Diagnostics as `severity: location: message` lines, sorted; the machine-specific specs
/// directory is replaced by `specs`.
pub fn diagnostics_text(conv: &Conversion) -> Vec<String> {
    let sorted: Vec<Diagnostic> = conv.diagnostics.clone().into_sorted();
    sorted
        .iter()
        .map(|d| normalize_paths(&d.to_string()))
        .collect()
}

pub fn normalize_paths(s: &str) -> String {
    let dir = specs_dir().display().to_string();
    let mut out = s.replace(&dir, "specs");
    if let Ok(canonical) = specs_dir().canonicalize() {
        out = out.replace(&canonical.display().to_string(), "specs");
    }
    out
}

pub fn path_loc(style: PathStyle, explode: bool) -> ArgLocation {
    ArgLocation::Path { style, explode }
}

pub fn query_loc(style: QueryStyle, explode: bool) -> ArgLocation {
    ArgLocation::query(style, explode)
}

/// The tool made from `operation_id`; panics with the list of operation ids otherwise.
pub fn tool<'c>(conv: &'c Conversion, operation_id: &str) -> &'c ToolDef {
    conv.tools
        .tools
        .iter()
        .find(|t| t.operation_id.as_deref() == Some(operation_id))
        .map(|t| t.as_ref())
        .unwrap_or_else(|| {
            let ids: Vec<_> = conv
                .tools
                .tools
                .iter()
                .map(|t| t.operation_id.clone())
                .collect();
            panic!("no tool for operation {operation_id}; have {ids:?}")
        })
}

pub fn has_tool(conv: &Conversion, operation_id: &str) -> bool {
    conv.tools
        .tools
        .iter()
        .any(|t| t.operation_id.as_deref() == Some(operation_id))
}

pub fn names(conv: &Conversion) -> Vec<String> {
    conv.tools
        .tools
        .iter()
        .map(|t| t.name().to_string())
        .collect()
}

/// The route binding of argument `arg`; panics with the list of arguments otherwise.
pub fn arg<'t>(t: &'t ToolDef, arg: &str) -> &'t ArgBinding {
    t.route.arg(arg).unwrap_or_else(|| {
        let have: Vec<_> = t.route.args.iter().map(|a| (&a.arg, &a.wire)).collect();
        panic!("tool {} has no argument {arg:?}; have {have:?}", t.name())
    })
}

pub fn input(t: &ToolDef) -> Value {
    Value::Object((*t.tool().input_schema).clone())
}

pub fn output(t: &ToolDef) -> Option<Value> {
    t.tool()
        .output_schema
        .as_ref()
        .map(|s| Value::Object((**s).clone()))
}

/// The inputSchema property of argument `arg`.
pub fn prop(t: &ToolDef, arg: &str) -> Value {
    t.tool()
        .input_schema
        .get("properties")
        .and_then(|p| p.get(arg))
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "tool {} inputSchema has no property {arg:?}: {}",
                t.name(),
                input(t)
            )
        })
}

pub fn required_of(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

pub fn prop_names(schema: &Value) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// A valid MCP tool name for the strictest clients: `^[a-z0-9_]{1,64}$`.
pub fn is_valid_tool_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A valid input-schema property name: `^[a-zA-Z0-9_.-]{1,64}$`.
pub fn is_valid_arg_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Calls `f(pointer, schema)` for every schema object or boolean schema reachable through
/// subschema keywords (never inside `enum`, `const`, `default`, `examples`, ...).
pub fn walk_schemas<'v>(v: &'v Value, ptr: &str, f: &mut dyn FnMut(&str, &'v Value)) {
    f(ptr, v);
    let Value::Object(m) = v else { return };
    for (k, c) in m {
        let esc = k.replace('~', "~0").replace('/', "~1");
        let here = format!("{ptr}/{esc}");
        match k.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(ps) = c {
                    for (pk, pv) in ps {
                        let pesc = pk.replace('~', "~0").replace('/', "~1");
                        walk_schemas(pv, &format!("{here}/{pesc}"), f);
                    }
                }
            }
            "items"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "additionalItems"
            | "contentSchema" => {
                if let Value::Array(a) = c {
                    for (i, s) in a.iter().enumerate() {
                        walk_schemas(s, &format!("{here}/{i}"), f);
                    }
                } else {
                    walk_schemas(c, &here, f);
                }
            }
            "prefixItems" | "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(a) = c {
                    for (i, s) in a.iter().enumerate() {
                        walk_schemas(s, &format!("{here}/{i}"), f);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Structural problems of one tool schema: `$ref`s that are not local `#/$defs/...` or do not
/// resolve inside the schema, and arrays without `items`/`prefixItems`.
pub fn schema_problems(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk_schemas(schema, "", &mut |ptr, s| {
        let Value::Object(m) = s else { return };
        if let Some(r) = m.get("$ref") {
            match r.as_str() {
                Some(r) if r.starts_with("#/$defs/") => {
                    if schema.pointer(&r[1..]).is_none() {
                        out.push(format!(
                            "#{ptr}: $ref {r:?} does not resolve inside the schema"
                        ));
                    }
                }
                other => out.push(format!(
                    "#{ptr}: $ref {other:?} is not a local #/$defs/ reference"
                )),
            }
        }
        let is_array = match m.get("type") {
            Some(Value::String(t)) => t == "array",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
            _ => false,
        };
        if is_array && !m.contains_key("items") && !m.contains_key("prefixItems") {
            out.push(format!("#{ptr}: type array without items or prefixItems"));
        }
    });
    out
}

/// Every (pointer, keyword value) of `keyword` in schema positions.
pub fn keyword_uses<'v>(schema: &'v Value, keyword: &str) -> Vec<(String, &'v Value)> {
    let mut out = Vec::new();
    walk_schemas(schema, "", &mut |ptr, s| {
        if let Some(v) = s.get(keyword) {
            out.push((ptr.to_string(), v));
        }
    });
    out
}

pub fn as_map(v: &Value) -> &Map<String, Value> {
    v.as_object().expect("an object")
}

// ---------------------------------------------------------------------------------------------
// Snapshots (expectorate-style).

pub fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("snapshots")
}

/// Compares `actual` with the checked-in file `tests/snapshots/<file>`; with `UPDATE_SNAPSHOTS=1`
/// (re)writes the file instead.
pub fn assert_snapshot(file: &str, actual: &str) {
    let path = snapshot_dir().join(file);
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(snapshot_dir()).expect("create snapshot dir");
        let current = std::fs::read_to_string(&path).ok();
        if current.as_deref() != Some(actual) {
            std::fs::write(&path, actual).expect("write snapshot");
            eprintln!("updated snapshot {}", path.display());
        }
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "snapshot {} cannot be read ({e}); run with UPDATE_SNAPSHOTS=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        panic!(
            "snapshot {} differs from the converter's output:\n{}\nIf the change is intended, rerun with \
             UPDATE_SNAPSHOTS=1 and review the diff.",
            path.display(),
            diff_hint(&expected, actual)
        );
    }
}

/// A unified-ish diff: the differing middle block between the common prefix and suffix lines,
/// with a little context.
pub fn diff_hint(expected: &str, actual: &str) -> String {
    const CONTEXT: usize = 3;
    const MAX_LINES: usize = 60;
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let prefix = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let max_suffix = e.len().min(a.len()) - prefix;
    let suffix = e
        .iter()
        .rev()
        .zip(a.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let start = prefix.saturating_sub(CONTEXT);
    let mut out = format!(
        "@@ -{},{} +{},{} @@ (expected: snapshot file, actual: converter output)\n",
        prefix + 1,
        e.len() - prefix - suffix,
        prefix + 1,
        a.len() - prefix - suffix
    );
    let mut n = 0;
    let mut push = |line: String, out: &mut String| {
        n += 1;
        if n <= MAX_LINES {
            out.push_str(&line);
            out.push('\n');
        } else if n == MAX_LINES + 1 {
            out.push_str("... (diff cut)\n");
        }
    };
    for l in &e[start..prefix] {
        push(format!("  {l}"), &mut out);
    }
    for l in &e[prefix..e.len() - suffix] {
        push(format!("- {l}"), &mut out);
    }
    for l in &a[prefix..a.len() - suffix] {
        push(format!("+ {l}"), &mut out);
    }
    for l in e[e.len() - suffix..].iter().take(CONTEXT) {
        push(format!("  {l}"), &mut out);
    }
    out
}
