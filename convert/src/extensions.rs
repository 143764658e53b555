//! Vendor MCP extensions read from the spec.
//!
//! - `x-mcp` on an operation, or on a path item / the document root as defaults for the
//!   operations below: `include` / `exclude` (bool), and on operations `name`, `title`,
//!   `description`, `annotations`.
//! - `x-speakeasy-mcp` (Speakeasy's, documented on operations: `disabled`, `name`, `title`,
//!   `scopes`, `description`): honoured the same way; `annotations` (MCP hint names) is accepted
//!   too. `scopes` select tools at server start in Speakeasy's generated servers; here they are
//!   read but not used (filter with `--include-tag`/`--include-op` instead).
//! - `x-mcp-annotations`: `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`,
//!   `title` overriding the hints derived from the HTTP method.
//!
//! - `x-mcp-header` on a parameter (a string naming the header): the tool's argument carries the
//!   same annotation, and 2026-era clients mirror its value into an `Mcp-Param-{name}` HTTP header
//!   so that gateways can route on it without reading the body (SEP-2243). Only where the
//!   revision allows it: a string, integer or boolean argument at the top of the inputSchema, a
//!   name of token characters, unique (case-insensitively) within the tool; otherwise a warning
//!   says why it was left out (a client drops a whole tool whose annotations break the rules).
//!
//! - `x-mcp-task` on an operation: its MCP task support (the tasks extension, SEP-2663):
//!   `required`, `optional` or `none` (`true` is `optional`, `false` is `none`), overriding what
//!   the server infers from the API's answers (a 202 with a status URL). A bad value is a warning
//!   at its pointer and the operation keeps the inference.
//!
//! On one level `x-mcp` wins over `x-speakeasy-mcp`, and `x-mcp-annotations` over both; the
//! operation wins over its path item, which wins over the root. Names still go through the
//! converter's snake_case sanitizing, prefix, length limit and collision handling.

use crate::node::Node;

use crate::diag::Diagnostics;
use openapi_mcp_toolset::model::{ArgLocation, TaskSupport, ToolDef};

const X_MCP: &str = "x-mcp";
const X_SPEAKEASY: &str = "x-speakeasy-mcp";
const X_ANNOTATIONS: &str = "x-mcp-annotations";
const X_HEADER: &str = "x-mcp-header";
const X_TASK: &str = "x-mcp-task";

/// The operation's `x-mcp-task` onto its tool (`def.task_support`); a value that is none of
/// `required`, `optional`, `none`, `true`, `false` is a warning at `…/x-mcp-task` and leaves the
/// tool to the inference.
pub fn task_support(def: &mut ToolDef, op: &Node, diags: &mut Diagnostics) {
    let Some(v) = op.get(X_TASK) else { return };
    let support = match (v.as_bool(), v.as_str()) {
        (Some(true), _) => Some(TaskSupport::Optional),
        (Some(false), _) => Some(TaskSupport::Never),
        (_, Some(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "required" => Some(TaskSupport::Required),
            "optional" => Some(TaskSupport::Optional),
            "none" => Some(TaskSupport::Never),
            _ => None,
        },
        _ => None,
    };
    match support {
        Some(s) => def.task_support = s,
        None => {
            let got = match v.as_str() {
                Some(s) => {
                    let s: String = s.chars().take(60).flat_map(char::escape_default).collect();
                    format!("\"{s}\"")
                }
                None if v.is_null() => "null".to_string(),
                None if v.is_number() => "a number".to_string(),
                None if v.is_array() => "an array".to_string(),
                None => "an object".to_string(),
            };
            diags.warning(
                def.location.join(X_TASK),
                format!(
                    "`{X_TASK}` must be `required`, `optional` or `none` (or true/false), got {got}; ignored: the operation's task support is inferred from the API's answers"
                ),
            );
        }
    }
}

/// Whether the extensions leave this operation out (operation, then path item, then root).
pub fn excluded(root: &Node, item: &Node, op: &Node) -> bool {
    for level in [op, item, root] {
        if let Some(include) = include_at(level) {
            return !include;
        }
    }
    false
}

/// `Some(true)` include, `Some(false)` exclude, `None` no opinion at this level.
fn include_at(node: &Node) -> Option<bool> {
    if let Some(x) = node.get(X_MCP) {
        if let Some(b) = x.get("exclude").and_then(Node::as_bool) {
            return Some(!b);
        }
        if let Some(b) = x.get("include").and_then(Node::as_bool) {
            return Some(b);
        }
    }
    node.get(X_SPEAKEASY)
        .and_then(|x| x.get("disabled"))
        .and_then(Node::as_bool)
        .map(|d| !d)
}

/// The tool name an operation asks for (before sanitizing and allocation).
pub fn name(op: &Node) -> Option<&str> {
    [X_MCP, X_SPEAKEASY]
        .into_iter()
        .filter_map(|k| op.get(k)?.get("name")?.as_str())
        .find(|s| !s.trim().is_empty())
}

fn op_string<'v>(op: &'v Node, key: &str) -> Option<&'v str> {
    [X_MCP, X_SPEAKEASY]
        .into_iter()
        .filter_map(|k| op.get(k)?.get(key)?.as_str())
        .map(str::trim)
        .find(|s| !s.is_empty())
}

const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// Applies title, description and annotation overrides to a converted tool; problems with the
/// extension values become warnings at `location#.../x-...`.
pub fn apply(
    def: &mut ToolDef,
    root: &Node,
    item: &Node,
    op: &Node,
    max_description_len: usize,
    diags: &mut Diagnostics,
) {
    // Type problems in the extension objects.
    {
        for key in [X_MCP, X_SPEAKEASY, X_ANNOTATIONS] {
            let Some(x) = op.get(key) else { continue };
            if !x.is_object() {
                diags.warning(
                    def.location.join(key),
                    format!("`{key}` must be an object; ignored"),
                );
                continue;
            }
            for (field, want_bool) in [
                ("include", true),
                ("exclude", true),
                ("disabled", true),
                ("name", false),
                ("title", false),
                ("description", false),
            ] {
                if let Some(v) = x.get(field) {
                    let ok = if want_bool {
                        v.is_boolean()
                    } else {
                        v.is_string()
                    };
                    if !ok {
                        diags.warning(
                            def.location.join(key).join(field),
                            format!(
                                "`{field}` must be a {}; ignored",
                                if want_bool { "boolean" } else { "string" }
                            ),
                        );
                    }
                }
            }
        }
    }

    if let Some(title) = op_string(op, "title") {
        def.tool_mut().title = Some(title.to_string());
        if let Some(a) = &mut def.tool_mut().annotations {
            a.title = Some(title.to_string());
        }
    }
    if let Some(d) = op_string(op, "description") {
        let d: String = d.chars().take(max_description_len).collect();
        def.tool_mut().description = Some(d.into());
    }

    // Annotations: root, then path item, then operation; on each level x-mcp.annotations and
    // x-speakeasy-mcp.annotations, then x-mcp-annotations.
    let location = def.location.clone();
    let Some(ann) = &mut def.tool_mut().annotations else {
        return;
    };
    for node in [root, item, op] {
        let sources = [
            node.get(X_SPEAKEASY).and_then(|x| x.get("annotations")),
            node.get(X_MCP).and_then(|x| x.get("annotations")),
            node.get(X_ANNOTATIONS),
        ];
        for src in sources.into_iter().flatten() {
            let Some(m) = src.as_object() else { continue };
            for (k, v) in m {
                match (k, v.as_bool(), v.as_str()) {
                    ("readOnlyHint", Some(b), _) => ann.read_only_hint = Some(b),
                    ("destructiveHint", Some(b), _) => ann.destructive_hint = Some(b),
                    ("idempotentHint", Some(b), _) => ann.idempotent_hint = Some(b),
                    ("openWorldHint", Some(b), _) => ann.open_world_hint = Some(b),
                    ("title", _, Some(t)) => ann.title = Some(t.to_string()),
                    (k, _, _) if HINTS.contains(&k) || k == "title" => diags.warning(
                        location.clone(),
                        format!("annotation `{k}` has the wrong type; ignored"),
                    ),
                    (k, _, _) => diags.warning(
                        location.clone(),
                        format!(
                            "unknown annotation `{k}` (known: readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title); ignored"
                        ),
                    ),
                }
            }
        }
    }
    // A read-only tool is neither destructive nor idempotent-relevant: the MCP spec says the
    // other hints only mean something when readOnlyHint is false; keep what was set.
}

/// `x-mcp-header` of the operation's parameters (path item ones first, the operation's win),
/// copied onto their arguments in `input` (the tool's inputSchema before bundling) where SEP-2243
/// allows it.
pub fn mirror_headers(
    def: &ToolDef,
    input: &mut serde_json::Map<String, serde_json::Value>,
    root: &Node,
    item: &Node,
    op: &Node,
    diags: &mut Diagnostics,
) {
    // (argument, header name, its parameter's schema type, where the annotation is)
    let mut wanted: Vec<(
        String,
        String,
        Option<String>,
        openapi_mcp_toolset::Location,
    )> = Vec::new();
    // The operation is at `.../paths/~1pets/get`; its path item one level up.
    let item_at = match def.location.pointer().rsplit_once('/') {
        Some((p, _)) => openapi_mcp_toolset::Location::new(def.location.doc(), p),
        None => def.location.clone(),
    };
    // A local `$ref` (`#/components/...`) is followed; other documents are not read for this.
    fn deref<'a>(root: &'a Node, n: &'a Node) -> Option<&'a Node> {
        match n.get("$ref").and_then(Node::as_str) {
            Some(r) => r
                .strip_prefix('#')
                .and_then(|ptr| crate::pointer::lookup(root, ptr)),
            None => Some(n),
        }
    }
    for (at_op, node) in [(false, item), (true, op)] {
        let Some(params) = node.get("parameters").and_then(Node::as_array) else {
            continue;
        };
        for (i, p) in params.iter().enumerate() {
            let Some(p) = deref(root, p) else { continue };
            let Some(header) = p.get(X_HEADER) else {
                continue;
            };
            let base = if at_op { &def.location } else { &item_at };
            let at = base.join("parameters").join(&i.to_string()).join(X_HEADER);
            let (Some(name), Some(place)) = (
                p.get("name").and_then(Node::as_str),
                p.get("in").and_then(Node::as_str),
            ) else {
                continue;
            };
            let Some(header) = header.as_str() else {
                diags.warning(at, format!("`{X_HEADER}` must be a string; ignored"));
                continue;
            };
            if header.is_empty() || !header.bytes().all(is_tchar) {
                diags.warning(
                    at,
                    format!("`{X_HEADER}` {header:?} is not an HTTP header name token; ignored"),
                );
                continue;
            }
            let binding = def.route.args.iter().find(|b| {
                b.wire == name
                    && matches!(
                        (&b.location, place),
                        (ArgLocation::Path { .. }, "path")
                            | (ArgLocation::Query { .. }, "query")
                            | (ArgLocation::Header { .. }, "header")
                            | (ArgLocation::Cookie { .. }, "cookie")
                    )
            });
            let Some(binding) = binding else { continue };
            let ty = p
                .get("schema")
                .and_then(|s| deref(root, s))
                .and_then(|s| s.get("type").and_then(Node::as_str).map(str::to_string));
            wanted.retain(|(arg, ..)| *arg != binding.arg);
            wanted.push((binding.arg.clone(), header.to_string(), ty, at));
        }
    }
    let Some(serde_json::Value::Object(props)) = input.get_mut("properties") else {
        return;
    };
    let mut taken: Vec<String> = Vec::new();
    for (arg, header, ty, at) in wanted {
        let Some(serde_json::Value::Object(prop)) = props.get_mut(&arg) else {
            continue;
        };
        let ty = ty.or_else(|| {
            prop.get("type")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        });
        if !matches!(ty.as_deref(), Some("string" | "integer" | "boolean")) {
            diags.warning(
                at,
                format!(
                    "`{X_HEADER}` is only allowed on string, integer and boolean arguments (SEP-2243); `{arg}` is {}; ignored",
                    ty.as_deref().unwrap_or("untyped")
                ),
            );
            continue;
        }
        let lower = header.to_ascii_lowercase();
        if taken.contains(&lower) {
            diags.warning(
                at,
                format!(
                    "`{X_HEADER}` {header:?} is used twice in this operation (names are case-insensitive); ignored"
                ),
            );
            continue;
        }
        taken.push(lower);
        prop.insert(X_HEADER.to_string(), serde_json::Value::String(header));
    }
}

/// RFC 9110 token characters.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The node of a `json!` literal.
    macro_rules! json {
        ($($t:tt)+) => {
            Node::from_json(&serde_json::json!($($t)+).to_string()).unwrap()
        };
    }

    #[test]
    fn include_exclude_precedence() {
        let root = json!({"x-mcp": {"exclude": true}});
        let item = json!({});
        let op = json!({});
        assert!(excluded(&root, &item, &op));
        let op_in = json!({"x-mcp": {"include": true}});
        assert!(!excluded(&root, &item, &op_in));
        let item_in = json!({"x-mcp": {"include": true}});
        assert!(!excluded(&root, &item_in, &op));
        let op_disabled = json!({"x-speakeasy-mcp": {"disabled": true}});
        assert!(excluded(&json!({}), &item, &op_disabled));
        assert!(!excluded(
            &json!({}),
            &item,
            &json!({"x-speakeasy-mcp": {"disabled": false}})
        ));
        // x-mcp wins over x-speakeasy-mcp on the same level
        assert!(!excluded(
            &json!({}),
            &item,
            &json!({"x-mcp": {"include": true}, "x-speakeasy-mcp": {"disabled": true}})
        ));
        assert!(!excluded(&json!({}), &json!({}), &json!({})));
    }

    #[test]
    fn names() {
        assert_eq!(name(&json!({"x-mcp": {"name": "a"}})), Some("a"));
        assert_eq!(
            name(&json!({"x-speakeasy-mcp": {"name": "create-product"}})),
            Some("create-product")
        );
        assert_eq!(
            name(&json!({"x-mcp": {"name": " "}, "x-speakeasy-mcp": {"name": "b"}})),
            Some("b")
        );
        assert_eq!(name(&json!({})), None);
    }
}
