//! What to emit: the crate's Rust names, decided once so every emitter agrees.

use std::collections::BTreeMap;

use openapi_mcp_runtime::model::{ToolDef, ToolSet};
use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Map, Value};

use crate::naming::{Scope, camel_ident, snake_ident};

pub struct Plan {
    pub crate_name: String,
    /// The library crate's name (`crate_name` with `_`).
    pub lib_name: String,
    pub modules: Vec<ModulePlan>,
}

/// One `src/tools/<ident>.rs`.
pub struct ModulePlan {
    pub ident: String,
    pub group: Group,
    pub tools: Vec<ToolPlan>,
}

/// Which operations share a module: those with the same first tag; operations without tags, by
/// the first significant segment of their path (so untagged specs such as Stripe's still split).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    Tag(String),
    /// `/v1/customers/{id}` -> `customers` (version-like segments skipped); `""` for `/`.
    Path(String),
}

impl Group {
    fn of(def: &ToolDef) -> Group {
        if let Some(tag) = def.tags.first() {
            return Group::Tag(tag.clone());
        }
        let segment = def
            .route
            .path
            .split('/')
            .filter(|s| !s.is_empty() && !s.contains('{'))
            .find(|s| !is_version_segment(s))
            .unwrap_or("");
        Group::Path(segment.to_string())
    }

    /// What the module's doc comments say about its operations.
    pub fn describe(&self) -> String {
        match self {
            Group::Tag(tag) => format!("Operations tagged `{tag}`"),
            Group::Path(seg) if seg.is_empty() => {
                "Operations without tags at the root path".to_string()
            }
            Group::Path(seg) => format!("Operations without tags under `/{seg}`"),
        }
    }
}

/// `v1`, `v2beta`, `api`, `2024-01-01`: path prefixes that say nothing about the resource.
fn is_version_segment(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    l == "api"
        || l.starts_with(|c: char| c.is_ascii_digit())
        || (l.starts_with('v') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
}

pub struct ToolPlan {
    /// The MCP tool name (what `dispatch` matches on).
    pub name: String,
    pub fn_ident: String,
    pub struct_ident: String,
    pub method: &'static str,
    pub path: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub fields: Vec<FieldPlan>,
}

pub struct FieldPlan {
    pub ident: String,
    /// The argument name, when it differs from `ident`.
    pub rename: Option<String>,
    pub ty: TokenStream,
    pub description: Option<String>,
    /// `query parameter `limit``, `body property `name``, ...
    pub binding: Option<String>,
}

pub fn plan(set: &ToolSet, crate_name: &str) -> Plan {
    // BTreeMap: tags in byte order, then untagged path groups; tools keep the tool-set order.
    let mut groups: BTreeMap<Group, Vec<&ToolDef>> = BTreeMap::new();
    for def in &set.tools {
        groups.entry(Group::of(def)).or_default().push(def);
    }
    let mut module_scope = Scope::with_reserved(&["mod"]);
    let modules = groups
        .into_iter()
        .map(|(group, defs)| {
            let base = match &group {
                Group::Tag(tag) => snake_ident(tag, "tag"),
                Group::Path(seg) => snake_ident(seg, "root"),
            };
            let ident = module_scope.claim(base);
            let mut fns = Scope::default();
            let mut structs = Scope::default();
            let tools = defs
                .into_iter()
                .map(|def| {
                    let name = def.tool.name.to_string();
                    ToolPlan {
                        fn_ident: fns.claim(snake_ident(&name, "tool")),
                        struct_ident: structs.claim(format!("{}Args", camel_ident(&name, "Tool"))),
                        method: def.route.method.as_str(),
                        path: def.route.path.clone(),
                        title: def.tool.title.clone(),
                        description: def.tool.description.as_deref().map(str::to_string),
                        fields: fields(def),
                        name,
                    }
                })
                .collect();
            ModulePlan {
                ident,
                group,
                tools,
            }
        })
        .collect();
    Plan {
        crate_name: crate_name.to_string(),
        lib_name: crate_name.replace('-', "_"),
        modules,
    }
}

/// One field per inputSchema property, in schema order.
fn fields(def: &ToolDef) -> Vec<FieldPlan> {
    let schema = &def.tool.input_schema;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut scope = Scope::default();
    props
        .iter()
        .map(|(arg, prop)| {
            let ident = scope.claim(snake_ident(arg, "arg"));
            let (ty, nullable) = rust_type(prop);
            let ty = if required.contains(&arg.as_str()) && !nullable {
                ty
            } else {
                quote! { Option<#ty> }
            };
            let binding = def.route.arg(arg).map(|b| match b.location.label() {
                "body" if b.location == openapi_mcp_runtime::model::ArgLocation::Body => {
                    "The request body.".to_string()
                }
                "body" => format!("Request body property `{}`.", b.wire),
                label => format!(
                    "{}{} parameter `{}`.",
                    label[..1].to_ascii_uppercase(),
                    &label[1..],
                    b.wire
                ),
            });
            FieldPlan {
                rename: (ident != *arg).then(|| arg.clone()),
                ident,
                ty,
                description: prop
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                binding,
            }
        })
        .collect()
}

/// The Rust type of a JSON schema (names as imported/preluded in the tool modules, where no
/// generated item can shadow them: generated types all end in `Args`), and whether the schema also admits `null`. Only plain types
/// map to Rust types; everything else (refs, compositions, objects, enums of mixed types) stays
/// `serde_json::Value`, so deserializing never rejects what the schema accepts for lack of a type.
fn rust_type(schema: &Value) -> (TokenStream, bool) {
    let value = quote! { Value };
    let Some(obj) = schema.as_object() else {
        return (value, false);
    };
    // Keywords that constrain beyond `type` are left to the schema validator; but a composition
    // next to `type` may widen it, so fall back to Value then.
    if ["anyOf", "oneOf", "allOf", "$ref", "not", "if"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return (value, false);
    }
    match obj.get("type") {
        Some(Value::String(t)) => (base_type(t, obj), false),
        Some(Value::Array(ts)) => {
            let non_null: Vec<&str> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            let nullable = ts.iter().any(|t| t == "null");
            match non_null.as_slice() {
                [t] => (base_type(t, obj), nullable),
                _ => (value, false),
            }
        }
        _ => (value, false),
    }
}

fn base_type(t: &str, obj: &Map<String, Value>) -> TokenStream {
    match t {
        "string" => quote! { String },
        "integer" => quote! { i64 },
        "number" => quote! { f64 },
        "boolean" => quote! { bool },
        "array" => {
            let item = match obj.get("items") {
                Some(items) => {
                    let (ty, nullable) = rust_type(items);
                    if nullable {
                        quote! { Option<#ty> }
                    } else {
                        ty
                    }
                }
                None => quote! { Value },
            };
            quote! { Vec<#item> }
        }
        _ => quote! { Value },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ty(v: Value) -> String {
        let (t, n) = rust_type(&v);
        format!(
            "{}{}",
            t.to_string().replace(' ', ""),
            if n { "?" } else { "" }
        )
    }

    #[test]
    fn version_segments() {
        assert!(
            is_version_segment("v1") && is_version_segment("V2beta") && is_version_segment("api")
        );
        assert!(is_version_segment("2024-01-01"));
        assert!(!is_version_segment("videos") && !is_version_segment("customers"));
    }

    #[test]
    fn types() {
        assert_eq!(ty(json!({"type": "string", "enum": ["a"]})), "String");
        assert_eq!(ty(json!({"type": "integer", "format": "int32"})), "i64");
        assert_eq!(ty(json!({"type": ["number", "null"]})), "f64?");
        assert_eq!(
            ty(json!({"type": "array", "items": {"type": "boolean"}})),
            "Vec<bool>"
        );
        assert_eq!(
            ty(json!({"type": "array", "items": {"type": ["string", "null"]}})),
            "Vec<Option<String>>"
        );
        assert_eq!(ty(json!({"type": "array"})), "Vec<Value>");
        assert_eq!(ty(json!({"type": "object"})), "Value");
        assert_eq!(ty(json!({"type": ["string", "integer"]})), "Value");
        assert_eq!(ty(json!({"$ref": "#/$defs/Pet"})), "Value");
        assert_eq!(ty(json!({"type": "string", "anyOf": [{}]})), "Value");
        assert_eq!(ty(json!(true)), "Value");
    }
}
