//! What to emit: the crate's Rust names, decided once so every emitter agrees.

use std::collections::BTreeMap;

use openapi_mcp_toolset::model::{ArgLocation, ToolDef, ToolSet};

use crate::naming::{Scope, snake_ident};
pub use crate::types::{FieldPlan, TypeDef};
use crate::types::{ModuleTypes, type_part};

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
    /// The named types the argument struct introduces (emitted after it).
    pub types: Vec<TypeDef>,
    /// Per field (same order as `fields`): where the handler puts it on the wire.
    pub setters: Vec<Setter>,
}

/// The `Call` setter a handler uses for one argument field.
pub struct Setter {
    /// `path`, `query`, `header`, `cookie`, `body_field`, `body`, or `arg` (no wire binding
    /// known: passed by its argument name).
    pub method: &'static str,
    /// The wire name (`None` for `body`), or the argument name for `arg`.
    pub wire: Option<String>,
}

fn setter(def: &ToolDef, arg: &str) -> Setter {
    let Some(b) = def.route.arg(arg) else {
        return Setter {
            method: "arg",
            wire: Some(arg.to_string()),
        };
    };
    let method = match b.location {
        ArgLocation::Path { .. } => "path",
        ArgLocation::Query { .. } => "query",
        ArgLocation::Header { .. } => "header",
        ArgLocation::Cookie { .. } => "cookie",
        ArgLocation::BodyField => "body_field",
        ArgLocation::Body => "body",
    };
    Setter {
        method,
        wire: (method != "body").then(|| b.wire.clone()),
    }
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
            // Argument structs first, so they keep their names whatever the other types are called.
            let bases: Vec<String> = defs
                .iter()
                .map(|def| type_part(def.name(), "Tool"))
                .collect();
            let args: Vec<String> = bases.iter().map(|b| format!("{b}Args")).collect();
            let (mut types, struct_idents) = ModuleTypes::new(&args);
            for def in &defs {
                types.note_defs(&def.tool().input_schema);
            }
            let tools = defs
                .into_iter()
                .zip(bases)
                .zip(struct_idents)
                .map(|((def, base), struct_ident)| {
                    let name = def.name().to_string();
                    let (fields, new_types) =
                        types.args_fields(&def.tool().input_schema, &base, |arg| binding(def, arg));
                    let setters = fields.iter().map(|f| setter(def, f.property())).collect();
                    ToolPlan {
                        setters,
                        fn_ident: fns.claim(snake_ident(&name, "tool")),
                        struct_ident,
                        method: def.route.method.as_str(),
                        path: def.route.path.clone(),
                        title: def.tool().title.clone(),
                        description: def.description().map(str::to_string),
                        fields,
                        types: new_types,
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

/// What the argument `arg` of `def` becomes on the wire, for its field's doc comment.
fn binding(def: &ToolDef, arg: &str) -> Option<String> {
    def.route.arg(arg).map(|b| match b.location.label() {
        "body" if b.location == ArgLocation::Body => "The request body.".to_string(),
        "body" => format!("Request body property `{}`.", b.wire),
        label => format!(
            "{}{} parameter `{}`.",
            label[..1].to_ascii_uppercase(),
            &label[1..],
            b.wire
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_segments() {
        assert!(
            is_version_segment("v1") && is_version_segment("V2beta") && is_version_segment("api")
        );
        assert!(is_version_segment("2024-01-01"));
        assert!(!is_version_segment("videos") && !is_version_segment("customers"));
    }
}
