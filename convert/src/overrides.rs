//! An overrides file (`--overrides FILE`, YAML or JSON): per-tool renames, new titles and
//! descriptions, hidden arguments and pinned argument values.
//!
//! ```yaml
//! tools:
//!   getPetById:              # tool name or operationId
//!     name: fetch_pet        # rename
//!     title: Fetch a pet
//!     description: Look one pet up by id.
//!     hide: [X-Trace-Id]     # removed from the inputSchema (optional arguments, or pinned ones)
//!     pin:                   # removed from the inputSchema, always sent with this value
//!       tenant: acme
//! ```
//!
//! Every error names the file and the key path (`overrides.yaml: tools.getPetById.hide[0]: ...`).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::convert::ToolOptions;
use crate::diag::{FileError, PassFile};
use openapi_mcp_toolset::model::{ToolDef, ToolSet};

/// A problem in the overrides file (`FILE: KEY: message`).
pub type OverrideError = FileError;

/// One tool's overrides.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOverride {
    pub name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub hide: Vec<String>,
    pub pin: Map<String, Value>,
}

/// A parsed overrides file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// The file name, for error messages.
    pub file: String,
    /// Keyed by tool name or operationId, in file order.
    pub tools: Vec<(String, ToolOverride)>,
}

impl Overrides {
    /// Parses YAML or JSON text (JSON is YAML). `file` is used in error messages.
    pub fn parse(file: &str, text: &str) -> Result<Self, OverrideError> {
        let err =
            |key: &str, message: String| FileError::new(PassFile::Overrides, file, key, message);
        let doc: Value = serde_yaml_ng::from_str(text)
            .map_err(|e| err("", format!("not valid YAML or JSON: {e}")))?;
        let Value::Object(root) = doc else {
            return Err(err("", "expected a mapping with a `tools` key".into()));
        };
        for k in root.keys() {
            if k != "tools" {
                return Err(err(k, "unknown key (expected `tools`)".into()));
            }
        }
        let mut out = Overrides {
            file: file.to_string(),
            tools: Vec::new(),
        };
        let tools = match root.get("tools") {
            None | Some(Value::Null) => return Ok(out),
            Some(Value::Object(t)) => t,
            Some(_) => {
                return Err(err(
                    "tools",
                    "expected a mapping of tool names to overrides".into(),
                ));
            }
        };
        for (tool, v) in tools {
            let base = format!("tools.{tool}");
            let Value::Object(m) = v else {
                return Err(err(&base, "expected a mapping".into()));
            };
            let mut o = ToolOverride::default();
            for (k, v) in m {
                let key = format!("{base}.{k}");
                let string = |v: &Value| -> Result<String, OverrideError> {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| err(&key, "expected a string".into()))
                };
                match k.as_str() {
                    "name" => o.name = Some(string(v)?),
                    "title" => o.title = Some(string(v)?),
                    "description" => o.description = Some(string(v)?),
                    "hide" => {
                        let Value::Array(a) = v else {
                            return Err(err(&key, "expected a list of argument names".into()));
                        };
                        for (i, x) in a.iter().enumerate() {
                            let s = x.as_str().ok_or_else(|| {
                                err(&format!("{key}[{i}]"), "expected an argument name".into())
                            })?;
                            o.hide.push(s.to_string());
                        }
                    }
                    "pin" => {
                        let Value::Object(p) = v else {
                            return Err(err(
                                &key,
                                "expected a mapping of argument names to values".into(),
                            ));
                        };
                        o.pin = p.clone();
                    }
                    other => {
                        return Err(err(
                            &key,
                            format!(
                                "unknown key `{other}` (known: name, title, description, hide, pin)"
                            ),
                        ));
                    }
                }
            }
            out.tools.push((tool.clone(), o));
        }
        Ok(out)
    }

    /// Applies the overrides to a converted tool set. A key naming no tool is an error that
    /// suggests the closest name; so is hiding a required argument without pinning it.
    pub fn apply(&self, set: &mut ToolSet, opts: &ToolOptions) -> Result<(), OverrideError> {
        let err = |key: String, message: String| {
            FileError::new(PassFile::Overrides, &self.file, key, message)
        };
        let mut seen: BTreeMap<usize, String> = BTreeMap::new();
        for (key, o) in &self.tools {
            let base = format!("tools.{key}");
            let idx = set
                .tools
                .iter()
                .position(|t| t.name() == key.as_str())
                .or_else(|| {
                    set.tools
                        .iter()
                        .position(|t| t.operation_id.as_deref() == Some(key.as_str()))
                });
            let Some(idx) = idx else {
                let mut candidates: Vec<&str> = set.tools.iter().map(|t| t.name()).collect();
                candidates.extend(set.tools.iter().filter_map(|t| t.operation_id.as_deref()));
                let hint = closest(key, &candidates)
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                return Err(err(base, format!("no tool or operationId `{key}`{hint}")));
            };
            if let Some(prev) = seen.insert(idx, key.clone()) {
                return Err(err(base, format!("names the same tool as `tools.{prev}`")));
            }
            let mut def: ToolDef = set.tools[idx].as_ref().clone();
            apply_one(&mut def, o, &base, &err)?;
            set.tools[idx] = Arc::new(def);
        }
        // Renames last, so they are checked against the final names of every tool.
        let mut names: HashSet<String> = set.tools.iter().map(|t| t.name().to_string()).collect();
        for (key, o) in &self.tools {
            let Some(new) = &o.name else { continue };
            let base = format!("tools.{key}.name");
            let Some((&idx, _)) = seen.iter().find(|(_, k)| *k == key) else {
                continue;
            };
            let old = set.tools[idx].name().to_string();
            if *new == old {
                continue;
            }
            let valid = !new.is_empty()
                && new.len() <= opts.max_name_len.max(16)
                && new
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
            if !valid {
                return Err(err(
                    base,
                    format!(
                        "`{new}` is not a valid tool name ([A-Za-z0-9_.-], at most {} characters)",
                        opts.max_name_len
                    ),
                ));
            }
            if let Some(p) = crate::profile::name_problem(set, &opts.client, new) {
                return Err(err(
                    base,
                    format!(
                        "`{new}` would be rejected by --client {}: {p}",
                        opts.client.client.as_str()
                    ),
                ));
            }
            if names.contains(new.as_str()) {
                return Err(err(base, format!("another tool is already named `{new}`")));
            }
            names.remove(&old);
            names.insert(new.clone());
            let mut def: ToolDef = set.tools[idx].as_ref().clone();
            def.head_mut().set_name(new.clone());
            set.tools[idx] = Arc::new(def);
        }
        Ok(())
    }
}

fn apply_one(
    def: &mut ToolDef,
    o: &ToolOverride,
    base: &str,
    err: &dyn Fn(String, String) -> OverrideError,
) -> Result<(), OverrideError> {
    if let Some(t) = &o.title {
        let mut head = def.head_mut();
        head.set_title(Some(t.clone()));
        head.update_annotations(|a| a.title = Some(t.clone()));
    }
    if let Some(d) = &o.description {
        def.head_mut().set_description(Some(d.clone()));
    }
    let mut schema = (*def.tool().input_schema).clone();
    let props: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    // An argument is named by its inputSchema name, or by its wire name.
    let resolve = |name: &str, key: String| -> Result<String, OverrideError> {
        if props.iter().any(|p| p == name) {
            return Ok(name.to_string());
        }
        if let Some(b) = def
            .route
            .args
            .iter()
            .find(|b| b.wire == name && props.contains(&b.arg))
        {
            return Ok(b.arg.clone());
        }
        let hint = closest(name, &props.iter().map(String::as_str).collect::<Vec<_>>())
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default();
        Err(err(
            key,
            format!("tool `{}` has no argument `{name}`{hint}", def.name()),
        ))
    };
    let mut pinned = Vec::new();
    for (name, value) in &o.pin {
        let arg = resolve(name, format!("{base}.pin.{name}"))?;
        if def.route.arg(&arg).is_none() {
            return Err(err(
                format!("{base}.pin.{name}"),
                format!("argument `{name}` is not sent to the API, so it cannot be pinned"),
            ));
        }
        // The pinned value must be one the argument accepts (its schema, with the tool's $defs).
        let mut one = Map::new();
        one.insert("type".into(), Value::String("object".into()));
        if let Some(p) = schema.get("properties").and_then(|p| p.get(&arg)) {
            let mut props = Map::new();
            props.insert(arg.clone(), p.clone());
            one.insert("properties".into(), Value::Object(props));
        }
        for k in ["$defs", "definitions"] {
            if let Some(d) = schema.get(k) {
                one.insert(k.into(), d.clone());
            }
        }
        let mut instance = Map::new();
        instance.insert(arg.clone(), value.clone());
        let validator = openapi_mcp_toolset::validate::LazyValidator::default();
        if let Err(problems) = openapi_mcp_toolset::validate::check(&validator, &one, &instance) {
            return Err(err(
                format!("{base}.pin.{name}"),
                format!(
                    "the pinned value does not fit the argument: {}",
                    problems.join("; ")
                ),
            ));
        }
        pinned.push((arg, value.clone()));
    }
    let mut hidden = Vec::new();
    for (i, name) in o.hide.iter().enumerate() {
        let arg = resolve(name, format!("{base}.hide[{i}]"))?;
        if required.contains(&arg) && !pinned.iter().any(|(a, _)| *a == arg) {
            return Err(err(
                format!("{base}.hide[{i}]"),
                format!(
                    "argument `{name}` is required: hiding it needs a pinned value (add it under {base}.pin)"
                ),
            ));
        }
        hidden.push(arg);
    }
    let remove: Vec<&String> = hidden.iter().chain(pinned.iter().map(|(a, _)| a)).collect();
    if let Some(Value::Object(p)) = schema.get_mut("properties") {
        for a in &remove {
            p.remove(a.as_str());
        }
    }
    if let Some(Value::Array(r)) = schema.get_mut("required") {
        r.retain(|v| !remove.iter().any(|a| v.as_str() == Some(a.as_str())));
        if r.is_empty() {
            schema.remove("required");
        }
    }
    if let Some(Value::Object(dr)) = schema.get_mut("dependentRequired") {
        for a in &remove {
            dr.remove(a.as_str());
        }
        for v in dr.values_mut() {
            if let Value::Array(list) = v {
                list.retain(|x| !remove.iter().any(|a| x.as_str() == Some(a.as_str())));
            }
        }
    }
    def.tool_mut().input_schema = Arc::new(schema);
    for (arg, value) in pinned {
        def.route.pinned.insert(arg, value);
    }
    Ok(())
}

/// The candidate closest to `name` (edit distance, case-insensitive), if reasonably close; ties go
/// to the candidate that sorts first.
fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let mut sorted = candidates.to_vec();
    sorted.sort_unstable();
    suggest::closest(name, &sorted, suggest::Tolerance::HALF)
}

use openapi_mcp_toolset::suggest;
#[cfg(test)]
use openapi_mcp_toolset::suggest::edit_distance;

#[cfg(test)]
mod tests {
    use super::*;
    use openapi_mcp_toolset::model::{ArgBinding, ArgLocation, HttpMethod, OutputShape, Route};
    use serde_json::json;

    fn arg(name: &str, location: ArgLocation, required: bool) -> ArgBinding {
        ArgBinding {
            arg: name.into(),
            wire: name.into(),
            location,
            required,
            content_type: None,
        }
    }

    fn set() -> ToolSet {
        let mut t = rmcp::model::Tool::default();
        t.name = "pets_get_pet".into();
        t.description = Some("Get a pet".into());
        let Value::Object(m) = json!({"type": "object", "properties": {
            "petId": {"type": "integer"}, "tenant": {"type": "string"},
            "X-Trace": {"type": "string"}}, "required": ["petId", "tenant"]})
        else {
            panic!()
        };
        t.input_schema = Arc::new(m);
        let def = ToolDef::new(
            t,
            Route {
                method: HttpMethod::Get,
                path: "/pets/{petId}".into(),
                server: None,
                args: vec![
                    arg(
                        "petId",
                        ArgLocation::Path {
                            style: openapi_mcp_toolset::model::PathStyle::Simple,
                            explode: false,
                        },
                        true,
                    ),
                    arg(
                        "tenant",
                        ArgLocation::query(openapi_mcp_toolset::model::QueryStyle::Form, true),
                        true,
                    ),
                    arg("X-Trace", ArgLocation::Header { explode: false }, false),
                ],
                body: None,
                accept: None,
                security: vec![],
                oauth_scopes: Vec::new(),
                output: OutputShape::None,
                pinned: Map::new(),
                credential_params: Vec::new(),
                input_schema: Default::default(),
            },
            Some("getPet".into()),
            vec![],
            openapi_mcp_toolset::Location::new("s.yaml", "/paths/~1pets~1{petId}/get"),
        );
        let mut other = def.clone();
        other.head_mut().set_name("pets_list_pets".into());
        other.operation_id = Some("listPets".into());
        ToolSet {
            title: "Pets".into(),
            version: "1".into(),
            description: None,
            tag_descriptions: Vec::new(),
            base_url: None,
            security_schemes: vec![],
            tools: vec![Arc::new(def), Arc::new(other)],
        }
    }

    #[test]
    fn rename_hide_pin() {
        let o = Overrides::parse(
            "o.yaml",
            "tools:\n  getPet:\n    name: fetch_pet\n    title: Fetch\n    description: New text\n    hide: [X-Trace]\n    pin:\n      tenant: acme\n",
        )
        .expect("parses");
        let mut s = set();
        o.apply(&mut s, &ToolOptions::default()).expect("applies");
        let t = &s.tools[0];
        assert_eq!(t.name(), "fetch_pet");
        assert_eq!(t.title(), Some("Fetch"));
        assert_eq!(t.description(), Some("New text"));
        let schema = Value::Object((*t.tool().input_schema).clone());
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {"petId": {"type": "integer"}}, "required": ["petId"]})
        );
        assert_eq!(
            t.route.pinned,
            *json!({"tenant": "acme"}).as_object().expect("obj")
        );
        // The binding stays so the forwarder knows where the pinned value goes.
        assert!(t.route.arg("tenant").is_some());
    }

    #[test]
    fn errors_name_file_and_key() {
        let o =
            Overrides::parse("o.yaml", "tools:\n  getPet:\n    hide: [tenant]\n").expect("parses");
        let e = o
            .apply(&mut set(), &ToolOptions::default())
            .expect_err("required");
        assert_eq!(e.key, "tools.getPet.hide[0]");
        assert!(
            e.to_string().starts_with("o.yaml: tools.getPet.hide[0]: "),
            "{e}"
        );

        let o = Overrides::parse("o.yaml", "tools:\n  getPets:\n    title: x\n").expect("parses");
        let e = o
            .apply(&mut set(), &ToolOptions::default())
            .expect_err("unknown tool");
        assert!(e.to_string().contains("did you mean `getPet`?"), "{e}");

        let o =
            Overrides::parse("o.yaml", "tools:\n  getPet:\n    pin: {tenat: x}\n").expect("parses");
        let e = o
            .apply(&mut set(), &ToolOptions::default())
            .expect_err("unknown arg");
        assert_eq!(e.key, "tools.getPet.pin.tenat");
        assert!(e.message.contains("did you mean `tenant`?"), "{e}");

        let o = Overrides::parse("o.yaml", "tools:\n  getPet:\n    name: pets_list_pets\n")
            .expect("parses");
        let e = o
            .apply(&mut set(), &ToolOptions::default())
            .expect_err("collision");
        assert_eq!(e.key, "tools.getPet.name");

        let o = Overrides::parse("o.yaml", "tools:\n  getPet:\n    pin: {petId: abc}\n")
            .expect("parses");
        let e = o
            .apply(&mut set(), &ToolOptions::default())
            .expect_err("wrong type");
        assert_eq!(e.key, "tools.getPet.pin.petId");
        assert!(e.message.contains("does not fit"), "{e}");

        let o = Overrides::parse("o.yaml", "tools:\n  getPet:\n    name: a.b\n").expect("parses");
        let opts = ToolOptions {
            client: crate::profile::ClientProfile::new(crate::profile::Client::Openai),
            ..ToolOptions::default()
        };
        let e = o.apply(&mut set(), &opts).expect_err("openai rejects dots");
        assert!(e.message.contains("--client openai"), "{e}");

        for (text, key) in [
            ("tools:\n  getPet:\n    hide: x\n", "tools.getPet.hide"),
            ("tools:\n  getPet:\n    color: red\n", "tools.getPet.color"),
            ("tool: {}\n", "tool"),
            ("tools:\n  getPet:\n    hide: [1]\n", "tools.getPet.hide[0]"),
        ] {
            let e = Overrides::parse("o.yaml", text).expect_err(text);
            assert_eq!(e.key, key, "{text}");
        }
        let e = Overrides::parse("o.json", "{").expect_err("syntax");
        assert!(e.to_string().starts_with("o.json: "), "{e}");
    }

    #[test]
    fn json_and_wire_names() {
        let o = Overrides::parse(
            "o.json",
            r#"{"tools": {"pets_get_pet": {"pin": {"tenant": "t1"}, "hide": ["tenant"]}}}"#,
        )
        .expect("parses");
        let mut s = set();
        o.apply(&mut s, &ToolOptions::default()).expect("applies");
        assert_eq!(s.tools[0].route.pinned.get("tenant"), Some(&json!("t1")));
    }

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            closest("lstPets", &["listPets", "getPet"]),
            Some("listPets")
        );
        assert_eq!(closest("zzzzzz", &["listPets"]), None);
    }
}
