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
//! On one level `x-mcp` wins over `x-speakeasy-mcp`, and `x-mcp-annotations` over both; the
//! operation wins over its path item, which wins over the root. Names still go through the
//! converter's snake_case sanitizing, prefix, length limit and collision handling.

use crate::node::Node;

use crate::diag::Diagnostics;
use openapi_mcp_toolset::model::ToolDef;

const X_MCP: &str = "x-mcp";
const X_SPEAKEASY: &str = "x-speakeasy-mcp";
const X_ANNOTATIONS: &str = "x-mcp-annotations";

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
