//! Differences between two converted tool sets (two versions of one API): tools added, removed
//! and renamed, and changes to each tool's inputSchema and argument bindings, split into breaking
//! (a client call that worked before may now fail) and non-breaking.
//!
//! Tools are matched by operation identity ([`crate::lock::identities`]: operationId, else
//! `METHOD path`), then by method + path.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::lock::identities;
use openapi_mcp_toolset::model::{HttpMethod, ToolDef, ToolSet};

/// A tool on one side of the diff.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolRef {
    pub name: String,
    pub identity: String,
    pub method: String,
    pub path: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Renamed {
    pub identity: String,
    pub old: String,
    pub new: String,
}

/// One change to a tool that exists in both versions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The tool's name in the new version.
    pub tool: String,
    /// e.g. `argument_removed`, `became_required`, `type_changed`, `enum_values_added`.
    pub kind: &'static str,
    /// Argument path: `owner`, `body.tags[]`, `filter.kind`; empty for the tool itself.
    pub argument: String,
    pub detail: String,
    pub breaking: bool,
}

/// The whole diff.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecDiff {
    pub added: Vec<ToolRef>,
    pub removed: Vec<ToolRef>,
    pub renamed: Vec<Renamed>,
    pub breaking: Vec<Change>,
    pub non_breaking: Vec<Change>,
}

impl SpecDiff {
    /// Removed or renamed tools, or any breaking schema change.
    pub fn is_breaking(&self) -> bool {
        !(self.removed.is_empty() && self.renamed.is_empty() && self.breaking.is_empty())
    }

    pub fn is_empty(&self) -> bool {
        !self.is_breaking() && self.added.is_empty() && self.non_breaking.is_empty()
    }

    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.insert("isBreaking".into(), Value::Bool(self.is_breaking()));
        }
        v
    }

    /// A human-readable report: one table per section, and a summary line.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let tools = |out: &mut String, title: &str, v: &[ToolRef]| {
            if v.is_empty() {
                return;
            }
            let _ = writeln!(out, "{title} ({}):", v.len());
            let w = v.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
            for t in v {
                let _ = writeln!(out, "  {:<w$}  {:<7} {}", t.name, t.method, t.path);
            }
            out.push('\n');
        };
        tools(&mut out, "Removed tools (breaking)", &self.removed);
        if !self.renamed.is_empty() {
            let _ = writeln!(out, "Renamed tools (breaking) ({}):", self.renamed.len());
            let w = self.renamed.iter().map(|r| r.old.len()).max().unwrap_or(4);
            for r in &self.renamed {
                let _ = writeln!(out, "  {:<w$} -> {}  ({})", r.old, r.new, r.identity);
            }
            out.push('\n');
        }
        let changes = |out: &mut String, title: &str, v: &[Change]| {
            if v.is_empty() {
                return;
            }
            let _ = writeln!(out, "{title} ({}):", v.len());
            let wt = v.iter().map(|c| c.tool.len()).max().unwrap_or(4).max(4);
            let wk = v.iter().map(|c| c.kind.len()).max().unwrap_or(4).max(6);
            let wa = v.iter().map(|c| c.argument.len()).max().unwrap_or(1).max(8);
            let _ = writeln!(
                out,
                "  {:<wt$}  {:<wk$}  {:<wa$}  DETAIL",
                "TOOL", "CHANGE", "ARGUMENT"
            );
            for c in v {
                let arg = if c.argument.is_empty() {
                    "-"
                } else {
                    &c.argument
                };
                let _ = writeln!(
                    out,
                    "  {:<wt$}  {:<wk$}  {:<wa$}  {}",
                    c.tool, c.kind, arg, c.detail
                );
            }
            out.push('\n');
        };
        changes(&mut out, "Breaking changes", &self.breaking);
        tools(&mut out, "Added tools", &self.added);
        changes(&mut out, "Non-breaking changes", &self.non_breaking);
        let _ = writeln!(
            out,
            "{} added, {} removed, {} renamed, {} breaking and {} non-breaking changes: {}",
            self.added.len(),
            self.removed.len(),
            self.renamed.len(),
            self.breaking.len(),
            self.non_breaking.len(),
            if self.is_breaking() {
                "BREAKING"
            } else {
                "not breaking"
            }
        );
        out
    }
}

fn tool_ref(t: &ToolDef, identity: &str) -> ToolRef {
    ToolRef {
        name: t.name().to_string(),
        identity: identity.to_string(),
        method: t.route.method.as_str().to_string(),
        path: t.route.path.clone(),
    }
}

/// Compares two tool sets converted with the same options.
pub fn diff(old: &ToolSet, new: &ToolSet) -> SpecDiff {
    let old_ids = identities(old);
    let new_ids = identities(new);
    // new index -> old index
    let mut pair: Vec<Option<usize>> = vec![None; new.tools.len()];
    let mut used = HashSet::new();
    let by_id: HashMap<&str, usize> = old_ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    for (j, id) in new_ids.iter().enumerate() {
        if let Some(&i) = by_id.get(id.as_str())
            && used.insert(i)
        {
            pair[j] = Some(i);
        }
    }
    let mut by_route: HashMap<(HttpMethod, &str), Vec<usize>> = HashMap::new();
    for (i, t) in old.tools.iter().enumerate() {
        by_route
            .entry((t.route.method, t.route.path.as_str()))
            .or_default()
            .push(i);
    }
    for (j, t) in new.tools.iter().enumerate() {
        if pair[j].is_some() {
            continue;
        }
        if let Some(cands) = by_route.get(&(t.route.method, t.route.path.as_str()))
            && let Some(&i) = cands.iter().find(|i| !used.contains(*i))
        {
            used.insert(i);
            pair[j] = Some(i);
        }
    }
    let mut d = SpecDiff::default();
    for (i, t) in old.tools.iter().enumerate() {
        if !used.contains(&i) {
            d.removed.push(tool_ref(t, &old_ids[i]));
        }
    }
    let mut changes = Vec::new();
    for (j, t) in new.tools.iter().enumerate() {
        let Some(i) = pair[j] else {
            d.added.push(tool_ref(t, &new_ids[j]));
            continue;
        };
        let o = &old.tools[i];
        if o.name() != t.name() {
            d.renamed.push(Renamed {
                identity: new_ids[j].clone(),
                old: o.name().to_string(),
                new: t.name().to_string(),
            });
        }
        compare_tool(o, t, &mut changes);
    }
    for c in changes {
        if c.breaking {
            d.breaking.push(c);
        } else {
            d.non_breaking.push(c);
        }
    }
    d.added.sort_by(|a, b| a.name.cmp(&b.name));
    d.removed.sort_by(|a, b| a.name.cmp(&b.name));
    d.renamed.sort_by(|a, b| a.new.cmp(&b.new));
    let key = |c: &Change| (c.tool.clone(), c.argument.clone(), c.kind);
    d.breaking.sort_by_key(key);
    d.non_breaking.sort_by_key(key);
    d
}

struct Ctx<'a> {
    tool: String,
    old_root: &'a Map<String, Value>,
    new_root: &'a Map<String, Value>,
    out: &'a mut Vec<Change>,
    /// (old $ref, new $ref) pairs being compared: recursion stops at cycles.
    visiting: HashSet<(String, String)>,
}

impl Ctx<'_> {
    fn push(&mut self, kind: &'static str, argument: &str, detail: String, breaking: bool) {
        self.out.push(Change {
            tool: self.tool.clone(),
            kind,
            argument: argument.to_string(),
            detail,
            breaking,
        });
    }
}

fn compare_tool(old: &ToolDef, new: &ToolDef, out: &mut Vec<Change>) {
    let tool = new.name().to_string();
    if old.tool().description != new.tool().description {
        out.push(Change {
            tool: tool.clone(),
            kind: "description_changed",
            argument: String::new(),
            detail: "tool description changed".into(),
            breaking: false,
        });
    }
    // Wire bindings of arguments present in both versions.
    for ob in &old.route.args {
        let Some(nb) = new.route.arg(&ob.arg) else {
            continue;
        };
        if ob.location.label() != nb.location.label() {
            out.push(Change {
                tool: tool.clone(),
                kind: "location_changed",
                argument: ob.arg.clone(),
                detail: format!(
                    "sent in the {} instead of the {}",
                    nb.location.label(),
                    ob.location.label()
                ),
                breaking: true,
            });
        } else if ob.wire != nb.wire {
            out.push(Change {
                tool: tool.clone(),
                kind: "wire_name_changed",
                argument: ob.arg.clone(),
                detail: format!("sent as `{}` instead of `{}`", nb.wire, ob.wire),
                breaking: true,
            });
        }
    }
    let mut ctx = Ctx {
        tool,
        old_root: &old.tool().input_schema,
        new_root: &new.tool().input_schema,
        out,
        visiting: HashSet::new(),
    };
    let o = Value::Object(old.tool().input_schema.as_ref().clone());
    let n = Value::Object(new.tool().input_schema.as_ref().clone());
    compare_object(&mut ctx, &o, &n, "", 0);
}

const MAX_DEPTH: usize = 16;

/// Follows a local `#/...` `$ref` within the tool's own schema.
fn resolve<'v>(
    root: &'v Map<String, Value>,
    v: &'v Value,
    hops: usize,
) -> (&'v Value, Option<String>) {
    let Some(r) = v.get("$ref").and_then(Value::as_str) else {
        return (v, None);
    };
    let Some(ptr) = r.strip_prefix('#') else {
        return (v, None);
    };
    let mut cur: Option<&Value> = None;
    let mut first = true;
    for seg in ptr.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        cur = if first {
            first = false;
            root.get(&seg)
        } else {
            cur.and_then(|c| match c {
                Value::Object(m) => m.get(&seg),
                Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
                _ => None,
            })
        };
    }
    match cur {
        Some(t) if hops < 8 => {
            let (t, _) = resolve(root, t, hops + 1);
            (t, Some(r.to_string()))
        }
        _ => (v, Some(r.to_string())),
    }
}

fn join(base: &str, prop: &str) -> String {
    if base.is_empty() {
        prop.to_string()
    } else {
        format!("{base}.{prop}")
    }
}

fn required_set(v: &Value) -> BTreeSet<String> {
    v.get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Properties removed/added/required changes, additionalProperties, then each common property.
fn compare_object(ctx: &mut Ctx, old: &Value, new: &Value, at: &str, depth: usize) {
    let empty = Map::new();
    let op = old
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let np = new
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let or = required_set(old);
    let nr = required_set(new);
    let top = at.is_empty();
    for k in op.keys() {
        if !np.contains_key(k) {
            let (kind, what) = if top {
                ("argument_removed", "argument")
            } else {
                ("property_removed", "property")
            };
            ctx.push(kind, &join(at, k), format!("{what} removed"), true);
        }
    }
    for k in np.keys() {
        if op.contains_key(k) {
            continue;
        }
        let p = join(at, k);
        if nr.contains(k) {
            let kind = if top {
                "new_required_argument"
            } else {
                "new_required_property"
            };
            ctx.push(kind, &p, "new and required".into(), true);
        } else {
            let kind = if top {
                "new_optional_argument"
            } else {
                "new_optional_property"
            };
            ctx.push(kind, &p, "new, optional".into(), false);
        }
    }
    for (k, ov) in op {
        let Some(nv) = np.get(k) else { continue };
        let p = join(at, k);
        match (or.contains(k), nr.contains(k)) {
            (false, true) => ctx.push("became_required", &p, "now required".into(), true),
            (true, false) => ctx.push("became_optional", &p, "no longer required".into(), false),
            _ => {}
        }
        compare_schema(ctx, ov, nv, &p, depth + 1);
    }
    let closed = |v: &Value| v.get("additionalProperties") == Some(&Value::Bool(false));
    let is_object = |v: &Value| {
        v.get("properties").is_some() || type_set(v).is_some_and(|t| t.contains("object"))
    };
    if is_object(old) && is_object(new) {
        let label = if top { "" } else { at };
        match (closed(old), closed(new)) {
            (false, true) => ctx.push(
                "additional_properties_tightened",
                label,
                "undeclared properties are now rejected (additionalProperties: false)".into(),
                true,
            ),
            (true, false) => ctx.push(
                "additional_properties_loosened",
                label,
                "undeclared properties are now accepted".into(),
                false,
            ),
            _ => {}
        }
    }
}

fn type_set(v: &Value) -> Option<BTreeSet<String>> {
    match v.get("type")? {
        Value::String(s) => Some(BTreeSet::from([s.clone()])),
        Value::Array(a) => Some(
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ),
        _ => None,
    }
}

fn show(s: &Option<BTreeSet<String>>) -> String {
    match s {
        None => "any".into(),
        Some(s) => s.iter().cloned().collect::<Vec<_>>().join("|"),
    }
}

fn show_values(v: &[&Value]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn compare_schema(ctx: &mut Ctx, old: &Value, new: &Value, at: &str, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let (old_r, new_r) = (ctx.old_root, ctx.new_root);
    let (old, oref) = resolve(old_r, old, 0);
    let (new, nref) = resolve(new_r, new, 0);
    let key = (oref.unwrap_or_default(), nref.unwrap_or_default());
    let via_ref = !key.0.is_empty() || !key.1.is_empty();
    if via_ref && !ctx.visiting.insert(key.clone()) {
        return; // recursive schema: already being compared
    }
    // Types.
    let (ot, nt) = (type_set(old), type_set(new));
    if ot != nt {
        let covers = |n: &BTreeSet<String>, t: &String| {
            n.contains(t) || (t == "integer" && n.contains("number"))
        };
        let widened = match (&ot, &nt) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(o), Some(n)) => o.iter().all(|t| covers(n, t)),
        };
        let detail = format!("{} -> {}", show(&ot), show(&nt));
        if widened {
            ctx.push("type_widened", at, detail, false);
        } else {
            ctx.push("type_changed", at, detail, true);
        }
    }
    // Enums.
    let en = |v: &Value| v.get("enum").and_then(Value::as_array).cloned();
    match (en(old), en(new)) {
        (Some(o), Some(n)) => {
            let gone: Vec<&Value> = o.iter().filter(|x| !n.contains(x)).collect();
            let added: Vec<&Value> = n.iter().filter(|x| !o.contains(x)).collect();
            if !gone.is_empty() {
                ctx.push("enum_values_removed", at, show_values(&gone), true);
            }
            if !added.is_empty() {
                ctx.push("enum_values_added", at, show_values(&added), false);
            }
        }
        (None, Some(n)) => ctx.push(
            "enum_values_removed",
            at,
            format!(
                "now restricted to {}",
                show_values(&n.iter().collect::<Vec<_>>())
            ),
            true,
        ),
        (Some(_), None) => ctx.push(
            "enum_values_added",
            at,
            "no longer restricted".into(),
            false,
        ),
        (None, None) => {}
    }
    if old.get("description") != new.get("description") && !at.is_empty() {
        ctx.push(
            "description_changed",
            at,
            "description changed".into(),
            false,
        );
    }
    // Nested objects and array items.
    compare_object(ctx, old, new, at, depth);
    if let (Some(oi), Some(ni)) = (old.get("items"), new.get("items")) {
        compare_schema(ctx, oi, ni, &format!("{at}[]"), depth + 1);
    }
    if via_ref {
        ctx.visiting.remove(&key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openapi_mcp_toolset::model::{ArgBinding, ArgLocation, QueryStyle, Route};
    use serde_json::json;
    use std::sync::Arc;

    fn tool(name: &str, op: &str, schema: Value, args: Vec<(&str, &str, &str)>) -> Arc<ToolDef> {
        let mut t = rmcp::model::Tool::default();
        t.name = name.to_string().into();
        t.description = Some("d".into());
        let Value::Object(m) = schema else {
            panic!("schema must be an object")
        };
        t.input_schema = Arc::new(m);
        let args = args
            .into_iter()
            .map(|(arg, wire, loc)| ArgBinding {
                arg: arg.into(),
                wire: wire.into(),
                location: if loc == "query" {
                    ArgLocation::query(QueryStyle::Form, true)
                } else {
                    ArgLocation::Header { explode: false }
                },
                required: false,
                content_type: None,
            })
            .collect();
        Arc::new(ToolDef::new(
            t,
            Route {
                args,
                ..Route::new(HttpMethod::Get, format!("/{op}"))
            },
            Some(op.into()),
            vec![],
            openapi_mcp_toolset::Location::default(),
        ))
    }

    fn set(tools: Vec<Arc<ToolDef>>) -> ToolSet {
        ToolSet {
            title: "T".into(),
            version: "1".into(),
            description: None,
            tag_descriptions: Vec::new(),
            base_url: None,
            security_schemes: vec![],
            tools,
        }
    }

    fn kinds(v: &[Change]) -> Vec<(String, &'static str)> {
        v.iter().map(|c| (c.argument.clone(), c.kind)).collect()
    }

    #[test]
    fn every_kind_of_change() {
        let old = set(vec![
            tool(
                "t_search",
                "search",
                json!({"type": "object", "properties": {
                    "q": {"type": "string"},
                    "gone": {"type": "string"},
                    "limit": {"type": "integer"},
                    "sort": {"type": "string", "enum": ["asc", "desc", "random"]},
                    "size": {"type": "string"},
                    "trace": {"type": "string"},
                    "filter": {"$ref": "#/$defs/Filter"}
                }, "required": ["q"], "$defs": {"Filter": {"type": "object", "properties": {
                    "kind": {"type": "string"}}}}}),
                vec![
                    ("q", "q", "query"),
                    ("trace", "X-Trace", "header"),
                    ("size", "size", "query"),
                ],
            ),
            tool("t_old", "old", json!({"type": "object"}), vec![]),
            tool("t_ren", "ren", json!({"type": "object"}), vec![]),
        ]);
        let new = set(vec![
            tool(
                "t_search",
                "search",
                json!({"type": "object", "properties": {
                    "q": {"type": "string", "description": "query"},
                    "limit": {"type": "string"},
                    "sort": {"type": "string", "enum": ["asc", "desc", "best"]},
                    "size": {"type": "string"},
                    "trace": {"type": "string"},
                    "page": {"type": "integer"},
                    "tenant": {"type": "string"},
                    "filter": {"$ref": "#/$defs/Filter"}
                }, "required": ["q", "tenant", "limit"], "additionalProperties": false,
                "$defs": {"Filter": {"type": "object", "properties": {
                    "kind": {"type": "string"}, "deep": {"type": "boolean"}}, "required": ["deep"]}}}),
                vec![
                    ("q", "q", "query"),
                    ("trace", "X-Request-Trace", "header"),
                    ("size", "size", "header"),
                ],
            ),
            tool("t_renamed", "ren", json!({"type": "object"}), vec![]),
            tool("t_new", "new", json!({"type": "object"}), vec![]),
        ]);
        let d = diff(&old, &new);
        assert!(d.is_breaking());
        assert_eq!(
            d.added.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["t_new"]
        );
        assert_eq!(
            d.removed
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>(),
            ["t_old"]
        );
        assert_eq!(
            d.renamed,
            vec![Renamed {
                identity: "ren".into(),
                old: "t_ren".into(),
                new: "t_renamed".into()
            }]
        );
        let b = kinds(&d.breaking);
        for want in [
            ("gone", "argument_removed"),
            ("limit", "became_required"),
            ("limit", "type_changed"),
            ("sort", "enum_values_removed"),
            ("tenant", "new_required_argument"),
            ("", "additional_properties_tightened"),
            ("trace", "wire_name_changed"),
            ("size", "location_changed"),
            ("filter.deep", "new_required_property"),
        ] {
            assert!(
                b.contains(&(want.0.to_string(), want.1)),
                "missing {want:?} in {b:?}"
            );
        }
        assert_eq!(b.len(), 9, "{b:?}");
        let n = kinds(&d.non_breaking);
        for want in [
            ("page", "new_optional_argument"),
            ("q", "description_changed"),
            ("sort", "enum_values_added"),
        ] {
            assert!(
                n.contains(&(want.0.to_string(), want.1)),
                "missing {want:?} in {n:?}"
            );
        }
        assert_eq!(n.len(), 3, "{n:?}");
        let table = d.to_table();
        assert!(
            table.contains("BREAKING") && table.contains("t_ren -> t_renamed"),
            "{table}"
        );
        assert_eq!(d.to_json()["isBreaking"], json!(true));
    }

    #[test]
    fn identical_and_widening_are_not_breaking() {
        let s = |t: &str| {
            set(vec![tool(
                "a",
                "a",
                json!({"type": "object", "properties": {"n": {"type": t}}, "required": ["n"]}),
                vec![],
            )])
        };
        assert!(diff(&s("integer"), &s("integer")).is_empty());
        let d = diff(&s("integer"), &s("number"));
        assert!(!d.is_breaking(), "{d:?}");
        assert_eq!(
            kinds(&d.non_breaking),
            vec![("n".to_string(), "type_widened")]
        );
        assert!(diff(&s("number"), &s("integer")).is_breaking());
    }

    #[test]
    fn recursive_schemas_terminate() {
        let schema = json!({"type": "object", "properties": {"node": {"$ref": "#/$defs/N"}},
            "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}});
        let a = set(vec![tool("a", "a", schema.clone(), vec![])]);
        assert!(diff(&a, &a).is_empty());
    }
}
