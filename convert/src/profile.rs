//! Client profiles: what each MCP client rejects or degrades, applied to the emitted tool list.
//!
//! A pure pass over a [`ToolSet`]. [`apply`] rewrites the tools so the chosen client accepts
//! them and returns what it changed; [`check`] returns the same findings without changing
//! anything (that is `openapi-mcp lint`). Every finding names the tool and a JSON pointer into
//! the tool definition *before* the profile ran (`/name`, `/inputSchema/properties/x/type`).
//!
//! The facts each profile encodes (see `../shared/INTEROP.md` and the sources cited inline):
//! - Claude (Anthropic API, Claude Code): tool names `^[a-zA-Z0-9_-]{1,64}$`, and Claude Code
//!   names tools `mcp__<server>__<tool>` within that budget; an inputSchema whose root is
//!   `oneOf`/`anyOf`/`allOf` is rejected (one bad schema can drop every tool of the server).
//!   Claude Code uses the TypeScript SDK, which throws on a `$ref` that does not resolve inside
//!   the schema it appears in.
//! - OpenAI: function names `^[a-zA-Z0-9_-]{1,64}$`; `type: array` without `items` is rejected;
//!   the parameters root must be an object schema.
//! - Gemini: function declarations take "a select subset of an OpenAPI 3.0 schema object"
//!   (Vertex AI `FunctionDeclaration` / `Schema` reference): no `$ref`/`$defs`, no
//!   `additionalProperties`, no `const`, no `oneOf`/`allOf`, no type arrays (`nullable`
//!   instead), `enum` of strings only, `format` limited to `enum`/`date-time` (string),
//!   `float`/`double` (number), `int32`/`int64` (integer); arrays need `items`. Function names
//!   start with a letter or `_`, `[a-zA-Z0-9_.-]`, at most 64; parameter names start with a
//!   letter or `_`, `[a-zA-Z0-9_]`, at most 64.
//! - Cursor: 60 characters for server name + tool name together; it hands tools to OpenAI and
//!   Anthropic models, so their name pattern and `items` rule apply.
//! - VS Code (Copilot): hands tools to OpenAI and Anthropic models (name pattern, `items`, object
//!   root) and is built on the TypeScript SDK (`$ref`s must resolve).
//! - generic: today's output, unchanged. `lint --client generic` checks what the MCP spec and
//!   common tooling need: names `[A-Za-z0-9_.-]{1,128}`, an object inputSchema (MCP Inspector
//!   drops others), a description (the conformance suite fails without), and warns on type
//!   arrays (MCP Inspector `--strict`).

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::pointer::JsonPointer;
use openapi_mcp_toolset::model::{Location, ToolDef, ToolSet};
use openapi_mcp_toolset::naming::{prefix_from_title, short_hash, snake};
use openapi_mcp_toolset::schema_walk::{self, Step};

/// The MCP client a tool list is shaped for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Client {
    /// No client-specific changes.
    #[default]
    Generic,
    Claude,
    Openai,
    Gemini,
    Cursor,
    Vscode,
}

impl Client {
    pub const ALL: [Client; 6] = [
        Client::Generic,
        Client::Claude,
        Client::Openai,
        Client::Gemini,
        Client::Cursor,
        Client::Vscode,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Client::Generic => "generic",
            Client::Claude => "claude",
            Client::Openai => "openai",
            Client::Gemini => "gemini",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(s))
    }
}

/// The client plus the server name it registers the tools under (Claude Code and Cursor count
/// it against their name limits).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientProfile {
    pub client: Client,
    /// Default: the first significant word of the API title (as for the tool prefix), or `api`.
    pub server_name: Option<String>,
}

impl ClientProfile {
    pub fn new(client: Client) -> Self {
        Self {
            client,
            server_name: None,
        }
    }
}

/// How a client treats a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The client refuses the tool (or the whole list).
    Reject,
    /// The client accepts it but ignores or weakens something.
    Degrade,
}

/// One thing a client would reject or degrade, and what the profile does about it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Issue {
    /// The tool's name before the profile ran.
    pub tool: String,
    /// JSON pointer into the tool definition before the profile ran.
    pub pointer: String,
    /// Where the operation is (`file#/paths/...`).
    pub operation: Location,
    pub level: Level,
    pub message: String,
    /// Whether [`apply`] changes the tool so the client accepts it.
    pub fixed: bool,
}

impl std::fmt::Display for Issue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = match self.level {
            Level::Reject => "error",
            Level::Degrade => "warning",
        };
        write!(
            f,
            "{level}: {} #{}: {}",
            self.tool,
            if self.pointer.is_empty() {
                "/"
            } else {
                &self.pointer
            },
            self.message
        )?;
        if !self.operation.is_unknown() {
            write!(f, " (operation {})", self.operation)?;
        }
        Ok(())
    }
}

/// What a profile enforces.
#[derive(Clone, Debug)]
struct Rules {
    /// Longest tool name once the client's own prefix is counted.
    name_budget: usize,
    /// Tool names `[A-Za-z0-9_-]` (no dots).
    strict_name_chars: bool,
    /// Tool names start with a letter or `_` (Gemini).
    name_starts_with_letter: bool,
    /// Top-level argument names `^[A-Za-z_][A-Za-z0-9_]*$` (Gemini).
    strict_arg_names: bool,
    /// The client does not resolve `$ref`: inline them (bounded).
    inline_refs: bool,
    /// `$ref`s must resolve inside the schema that holds them (TypeScript SDK).
    refs_must_resolve: bool,
    /// Arrays need `items`.
    items_required: bool,
    /// The inputSchema root must be a plain object schema (no root union).
    object_root: bool,
    /// Only these keywords are accepted (Gemini); everything else is converted or dropped.
    gemini_schema: bool,
}

const CLAUDE_CODE_PREFIX: usize = "mcp__".len() + "__".len();
const NAME_LIMIT: usize = 64;
const CURSOR_COMBINED: usize = 60;
/// Below this, shortened names would be mostly hash: the profile reports instead of fixing.
const MIN_NAME: usize = 16;

fn rules(client: Client, server: &str) -> Option<Rules> {
    let base = Rules {
        name_budget: NAME_LIMIT,
        strict_name_chars: true,
        name_starts_with_letter: false,
        strict_arg_names: false,
        inline_refs: false,
        refs_must_resolve: false,
        items_required: false,
        object_root: true,
        gemini_schema: false,
    };
    Some(match client {
        Client::Generic => return None,
        // INTEROP.md: `^[a-zA-Z0-9_-]{1,64}$`, Claude Code prefixes `mcp__<server>__` within
        // that budget; root oneOf/anyOf/allOf rejected; TS SDK throws on unresolved `$ref`.
        Client::Claude => Rules {
            name_budget: NAME_LIMIT.saturating_sub(CLAUDE_CODE_PREFIX + server.len()),
            refs_must_resolve: true,
            ..base
        },
        // INTEROP.md: names `^[a-zA-Z0-9_-]{1,64}$`; `type: array` without `items` rejected.
        Client::Openai => Rules {
            items_required: true,
            ..base
        },
        // Vertex AI FunctionDeclaration: name starts with a letter or underscore,
        // `[a-zA-Z0-9_.-]`, max 64; parameters are an OpenAPI 3.0 subset (module docs).
        Client::Gemini => Rules {
            strict_name_chars: false,
            name_starts_with_letter: true,
            strict_arg_names: true,
            inline_refs: true,
            items_required: true,
            gemini_schema: true,
            ..base
        },
        // Cursor: 60 characters for server + tool name together.
        Client::Cursor => Rules {
            name_budget: CURSOR_COMBINED.saturating_sub(server.len()),
            items_required: true,
            ..base
        },
        Client::Vscode => Rules {
            items_required: true,
            refs_must_resolve: true,
            ..base
        },
    })
}

/// The server name a profile counts against name limits.
pub fn server_name(set: &ToolSet, profile: &ClientProfile) -> String {
    match &profile.server_name {
        Some(s) => s.clone(),
        None => {
            let p = snake(&prefix_from_title(&set.title));
            if p.is_empty() { "api".into() } else { p }
        }
    }
}

/// Why `name` would be rejected by the profile's client, if it would (for explicit names, such
/// as renames in an overrides file, that must not be changed silently).
pub fn name_problem(set: &ToolSet, profile: &ClientProfile, name: &str) -> Option<String> {
    let server = server_name(set, profile);
    let r = rules(profile.client, &server)?;
    let mut issues = Vec::new();
    let fixed = fix_name(name, &r, &mut |_, _, m: String| issues.push(m));
    (fixed != name).then(|| issues.join("; "))
}

/// Rewrites `set` for the profile's client; returns what was changed (empty for `generic`).
pub fn apply(set: &mut ToolSet, profile: &ClientProfile) -> Vec<Issue> {
    let server = server_name(set, profile);
    let Some(rules) = rules(profile.client, &server) else {
        return Vec::new();
    };
    let mut issues = Vec::new();
    // Names first, then make them unique again (shortening can collide).
    let mut taken: HashSet<String> = HashSet::new();
    let original: Vec<String> = set.tools.iter().map(|t| t.name().to_string()).collect();
    let mut renamed = Vec::with_capacity(set.tools.len());
    for (i, def) in set.tools.iter().enumerate() {
        let name = &original[i];
        let mut found = Vec::new();
        let mut fixed = fix_name(name, &rules, &mut |lvl, ptr, msg| {
            found.push((lvl, ptr, msg))
        });
        if fixed != *name || taken.contains(&fixed) {
            let mut salt = 0;
            while taken.contains(&fixed) {
                salt += 1;
                fixed = fit(
                    &fixed,
                    rules.name_budget.max(MIN_NAME),
                    &format!("{name}#{salt}"),
                );
            }
        }
        for (level, pointer, message) in found {
            issues.push(issue(def, name, pointer, level, message, true));
        }
        if rules.name_budget < MIN_NAME {
            issues.push(issue(
                def,
                name,
                "/name".into(),
                Level::Reject,
                format!(
                    "the server name {server:?} leaves {} characters for tool names; choose a shorter --server-name",
                    rules.name_budget
                ),
                false,
            ));
        }
        taken.insert(fixed.clone());
        renamed.push(fixed);
    }
    for (i, def) in set.tools.iter_mut().enumerate() {
        let name = original[i].clone();
        let mut local = Vec::new();
        let mut new = def.as_ref().clone();
        new.head_mut().set_name(renamed[i].clone());
        fix_tool(&mut new, &rules, &mut |lvl, ptr, msg, fixed| {
            local.push((lvl, ptr, msg, fixed))
        });
        for (level, pointer, message, fixed) in local {
            issues.push(issue(&new, &name, pointer, level, message, fixed));
        }
        if new.tool() != def.tool() || new.route != def.route {
            *def = Arc::new(new);
        }
    }
    issues
}

/// What `client` would reject or degrade in `set`, without changing it. For `generic`, the
/// MCP-level checks.
pub fn check(set: &ToolSet, profile: &ClientProfile) -> Vec<Issue> {
    let mut issues = if profile.client == Client::Generic {
        Vec::new()
    } else {
        let mut copy = set.clone();
        apply(&mut copy, profile)
    };
    for def in &set.tools {
        generic_checks(def, profile.client, &mut issues);
    }
    issues.sort_by(|a, b| {
        (a.tool.as_str(), a.pointer.as_str(), a.message.as_str()).cmp(&(
            b.tool.as_str(),
            b.pointer.as_str(),
            b.message.as_str(),
        ))
    });
    issues.dedup();
    issues
}

fn issue(
    def: &ToolDef,
    tool: &str,
    pointer: String,
    level: Level,
    message: String,
    fixed: bool,
) -> Issue {
    Issue {
        tool: tool.to_string(),
        pointer,
        operation: def.location.clone(),
        level,
        message,
        fixed,
    }
}

/// Checks every client needs (MCP spec, Inspector, conformance suite); reported, never fixed.
fn generic_checks(def: &ToolDef, client: Client, issues: &mut Vec<Issue>) {
    let name = def.name().to_string();
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if name.is_empty() || name.len() > 128 || !ok_chars {
        issues.push(issue(
            def,
            &name,
            "/name".into(),
            Level::Reject,
            "the MCP spec allows tool names [A-Za-z0-9_.-]{1,128}".into(),
            false,
        ));
    }
    // For the other clients the profile itself reports (and fixes) a non-object root.
    if client == Client::Generic
        && def.tool().input_schema.get("type").and_then(Value::as_str) != Some("object")
    {
        issues.push(issue(
            def,
            &name,
            "/inputSchema/type".into(),
            Level::Reject,
            "inputSchema is not `type: object` (MCP Inspector drops such tools)".into(),
            false,
        ));
    }
    if def.description().is_none_or(str::is_empty) {
        issues.push(issue(
            def,
            &name,
            "/description".into(),
            Level::Degrade,
            "no description (the MCP conformance suite fails tools without one)".into(),
            false,
        ));
    }
    if client == Client::Generic {
        let root = Value::Object((*def.tool().input_schema).clone());
        walk(
            &root,
            &JsonPointer::root().join("inputSchema"),
            &mut |node, ptr| {
                if node.get("type").is_some_and(Value::is_array) {
                    issues.push(issue(
                        def,
                        &name,
                        ptr.join("type").as_str().to_string(),
                        Level::Degrade,
                        "type array (MCP Inspector --strict warns; Gemini rejects)".into(),
                        false,
                    ));
                }
            },
        );
    }
}

/// `ptr` followed by one step into a subschema.
fn step_ptr(ptr: &JsonPointer, step: Step<'_>) -> JsonPointer {
    match step {
        Step::Keyword(k) => ptr.join(k),
        Step::Entry(k, name) => ptr.join(k).join(name),
        Step::Index(k, i) => ptr.join(k).index(i),
    }
}

/// Visits every subschema (read-only).
fn walk(node: &Value, ptr: &JsonPointer, f: &mut dyn FnMut(&Value, &JsonPointer)) {
    if !node.is_object() {
        return;
    }
    f(node, ptr);
    schema_walk::for_each_child(node, &mut |step, child| {
        walk(child, &step_ptr(ptr, step), f)
    });
}

/// Calls `f` on every direct subschema of `node`, with its pointer.
fn for_each_child_mut(
    node: &mut Value,
    ptr: &JsonPointer,
    f: &mut dyn FnMut(&mut Value, JsonPointer),
) {
    schema_walk::for_each_child_mut(node, &mut |step, child| f(child, step_ptr(ptr, step)));
}

// ------------------------------------------------------------------------------------ names

/// The name the client accepts; `report(level, pointer, message)` for each problem.
fn fix_name(name: &str, r: &Rules, report: &mut dyn FnMut(Level, String, String)) -> String {
    let mut out = name.to_string();
    let bad = |c: char| {
        !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || (!r.strict_name_chars && c == '.'))
    };
    if out.chars().any(bad) {
        report(
            Level::Reject,
            "/name".into(),
            format!(
                "tool name characters outside {} are rejected",
                if r.strict_name_chars {
                    "[a-zA-Z0-9_-]"
                } else {
                    "[a-zA-Z0-9_.-]"
                }
            ),
        );
        out = out.chars().map(|c| if bad(c) { '_' } else { c }).collect();
    }
    if r.name_starts_with_letter && !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
    {
        report(
            Level::Reject,
            "/name".into(),
            "tool names must start with a letter or `_`".into(),
        );
        out = format!("t_{out}");
    }
    let budget = r.name_budget.max(MIN_NAME);
    if out.len() > r.name_budget {
        report(
            Level::Reject,
            "/name".into(),
            format!(
                "tool name is {} characters; this client allows {} here",
                out.len(),
                r.name_budget
            ),
        );
        out = fit(&out, budget, name);
    }
    out
}

/// `name` cut to `max` characters with a stable hash of `identity` so shortened names stay unique.
fn fit(name: &str, max: usize, identity: &str) -> String {
    if name.len() <= max && !identity.contains('#') {
        return name.to_string();
    }
    let h = short_hash(identity);
    let keep = max.saturating_sub(h.len() + 1);
    let mut head: String = name.chars().take(keep).collect();
    while head.ends_with(['_', '-', '.']) {
        head.pop();
    }
    format!("{head}_{h}")
}

// ------------------------------------------------------------------------------------ schemas

type Report<'a> = dyn FnMut(Level, String, String, bool) + 'a;

fn fix_tool(def: &mut ToolDef, r: &Rules, report: &mut Report<'_>) {
    let input_ptr = JsonPointer::root().join("inputSchema");
    let mut input = Value::Object((*def.tool().input_schema).clone());

    if r.object_root {
        let m = input.as_object_mut();
        if let Some(m) = m {
            for k in ["oneOf", "anyOf", "allOf"] {
                if m.remove(k).is_some() {
                    report(
                        Level::Reject,
                        input_ptr.join(k).as_str().into(),
                        format!("`{k}` at the root of an inputSchema is rejected; removed"),
                        true,
                    );
                }
            }
            if m.get("type").and_then(Value::as_str) != Some("object") {
                report(
                    Level::Reject,
                    input_ptr.join("type").as_str().into(),
                    "the inputSchema root must be `type: object`".into(),
                    true,
                );
                m.insert("type".into(), json!("object"));
            }
        }
    }
    fix_node(&mut input, &input_ptr, r, report);
    if r.inline_refs {
        inline_refs(&mut input, &input_ptr, report);
    } else if r.refs_must_resolve {
        drop_unresolved_refs(&mut input, &input_ptr, report);
    }
    // Last, so the pointers reported above use the names as served without the profile.
    if r.strict_arg_names {
        rename_args(def, &mut input, &input_ptr, report);
    }
    if let Value::Object(m) = input {
        def.tool_mut().input_schema = Arc::new(m);
    }
    if r.refs_must_resolve
        && let Some(out) = def.tool().output_schema.clone()
    {
        let mut output = Value::Object((*out).clone());
        drop_unresolved_refs(
            &mut output,
            &JsonPointer::root().join("outputSchema"),
            report,
        );
        if let Value::Object(m) = output {
            def.tool_mut().output_schema = Some(Arc::new(m));
        }
    }
}

/// Gemini parameter names: `^[A-Za-z_][A-Za-z0-9_]{0,63}$`. Renames the top-level property and
/// the route binding together (the wire name is unchanged).
fn rename_args(def: &mut ToolDef, input: &mut Value, ptr: &JsonPointer, report: &mut Report<'_>) {
    let Some(props) = input.get("properties").and_then(Value::as_object) else {
        return;
    };
    let names: Vec<String> = props.keys().cloned().collect();
    let mut taken: HashSet<String> = names.iter().cloned().collect();
    let mut renames = Vec::new();
    for n in &names {
        let ok = n.len() <= 64
            && n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ok {
            continue;
        }
        let mut new: String = n
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        if !new.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            new = format!("_{new}");
        }
        new = fit(&new, 64, n);
        let mut salt = 0;
        while taken.contains(&new) {
            salt += 1;
            new = fit(&new, 64, &format!("{n}#{salt}"));
        }
        taken.insert(new.clone());
        report(
            Level::Reject,
            ptr.join("properties").join(n).as_str().into(),
            format!(
                "parameter names must match ^[A-Za-z_][A-Za-z0-9_]{{0,63}}$; renamed to {new:?}"
            ),
            true,
        );
        renames.push((n.clone(), new));
    }
    if renames.is_empty() {
        return;
    }
    let Some(m) = input.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(props)) = m.get("properties") {
        let mut new_props = Map::new();
        for (k, v) in props {
            let key = renames
                .iter()
                .find(|(o, _)| o == k)
                .map_or(k.clone(), |(_, n)| n.clone());
            new_props.insert(key, v.clone());
        }
        m.insert("properties".into(), Value::Object(new_props));
    }
    let rename = |s: &str| {
        renames
            .iter()
            .find(|(o, _)| o == s)
            .map_or(s.to_string(), |(_, n)| n.clone())
    };
    if let Some(Value::Array(req)) = m.get_mut("required") {
        for v in req.iter_mut() {
            if let Some(s) = v.as_str() {
                *v = Value::String(rename(s));
            }
        }
    }
    if let Some(Value::Object(dr)) = m.remove("dependentRequired") {
        let mut out = Map::new();
        for (k, v) in dr {
            let v = match v {
                Value::Array(a) => Value::Array(
                    a.into_iter()
                        .map(|x| match x.as_str() {
                            Some(s) => Value::String(rename(s)),
                            None => x,
                        })
                        .collect(),
                ),
                v => v,
            };
            out.insert(rename(&k), v);
        }
        m.insert("dependentRequired".into(), Value::Object(out));
    }
    for b in &mut def.route.args {
        b.arg = rename(&b.arg);
    }
    let pinned = std::mem::take(&mut def.route.pinned);
    def.route.pinned = pinned.into_iter().map(|(k, v)| (rename(&k), v)).collect();
}

/// Keywords a Gemini `Schema` accepts (Vertex AI / Gemini API `Schema` reference).
const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "anyOf",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "default",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
];

fn gemini_format_ok(ty: Option<&str>, format: &str) -> bool {
    matches!(
        (ty, format),
        (Some("string"), "enum" | "date-time")
            | (Some("number"), "float" | "double")
            | (Some("integer"), "int32" | "int64")
    )
}

fn is_array_type(node: &Value) -> bool {
    match node.get("type") {
        Some(Value::String(s)) => s == "array",
        Some(Value::Array(a)) => a.iter().any(|t| t == "array"),
        _ => false,
    }
}

fn fix_node(node: &mut Value, ptr: &JsonPointer, r: &Rules, report: &mut Report<'_>) {
    if !node.is_object() {
        return;
    }
    if r.gemini_schema {
        gemini_node(node, ptr, report);
    }
    if r.items_required
        && is_array_type(node)
        && let Some(m) = node.as_object_mut()
        && !m.contains_key("items")
    {
        report(
            Level::Reject,
            ptr.as_str().into(),
            "`type: array` without `items` is rejected; `items: {}` added".into(),
            true,
        );
        m.insert("items".into(), json!({}));
    }
    for_each_child_mut(node, ptr, &mut |child, p| fix_node(child, &p, r, report));
}

/// Type arrays: the non-null type plus `nullable`, or `anyOf` of several types.
fn gemini_type_array(m: &mut Map<String, Value>, ptr: &JsonPointer, report: &mut Report<'_>) {
    if let Some(Value::Array(types)) = m.get("type").cloned() {
        let non_null: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let nullable = non_null.len() != types.len();
        m.remove("type");
        match non_null.as_slice() {
            [] => {}
            [one] => {
                m.insert("type".into(), one.clone());
            }
            many => {
                m.insert(
                    "anyOf".into(),
                    Value::Array(many.iter().map(|t| json!({ "type": t })).collect()),
                );
            }
        }
        if nullable {
            m.insert("nullable".into(), json!(true));
        }
        report(
            Level::Reject,
            ptr.join("type").as_str().into(),
            "type arrays are rejected; replaced by the non-null type (+ `nullable`) or `anyOf`"
                .into(),
            true,
        );
    }
}

/// `oneOf` becomes `anyOf`; `allOf`'s parts are merged into the schema.
fn gemini_combinators(m: &mut Map<String, Value>, ptr: &JsonPointer, report: &mut Report<'_>) {
    if let Some(one_of) = m.remove("oneOf") {
        report(
            Level::Reject,
            ptr.join("oneOf").as_str().into(),
            "`oneOf` is rejected; replaced by `anyOf`".into(),
            true,
        );
        match m.get_mut("anyOf") {
            Some(Value::Array(a)) => {
                if let Value::Array(more) = one_of {
                    a.extend(more);
                }
            }
            _ => {
                m.insert("anyOf".into(), one_of);
            }
        }
    }
    if let Some(Value::Array(parts)) = m.remove("allOf") {
        report(
            Level::Reject,
            ptr.join("allOf").as_str().into(),
            "`allOf` is rejected; its parts are merged into the schema".into(),
            true,
        );
        for part in parts {
            let Value::Object(p) = part else { continue };
            for (k, v) in p {
                match (k.as_str(), m.get_mut(&k)) {
                    ("properties", Some(Value::Object(mine))) => {
                        if let Value::Object(theirs) = v {
                            for (pk, pv) in theirs {
                                mine.entry(pk).or_insert(pv);
                            }
                        }
                    }
                    ("required", Some(Value::Array(mine))) => {
                        if let Value::Array(theirs) = v {
                            for x in theirs {
                                if !mine.contains(&x) {
                                    mine.push(x);
                                }
                            }
                        }
                    }
                    (_, Some(_)) => {}
                    (_, None) => {
                        m.insert(k, v);
                    }
                }
            }
        }
    }
}

/// One schema node rewritten to the Gemini subset (children are visited by the caller).
fn gemini_node(node: &mut Value, ptr: &JsonPointer, report: &mut Report<'_>) {
    let Some(m) = node.as_object_mut() else {
        return;
    };
    let mut notes: Vec<String> = Vec::new();
    gemini_type_array(m, ptr, report);
    if let Some(c) = m.remove("const") {
        report(
            Level::Reject,
            ptr.join("const").as_str().into(),
            "`const` is rejected; replaced by a one-value `enum`".into(),
            true,
        );
        m.insert("enum".into(), json!([c]));
    }
    gemini_combinators(m, ptr, report);
    for (k, into) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(v) = m.get(k).cloned() {
            m.remove(k);
            if v.is_number() && !m.contains_key(into) {
                m.insert(into.into(), v.clone());
            }
            notes.push(format!("{k} {v}"));
            report(
                Level::Reject,
                ptr.join(k).as_str().into(),
                format!("`{k}` is rejected; became `{into}` (bound now inclusive)"),
                true,
            );
        }
    }
    if let Some(Value::Array(ex)) = m.remove("examples") {
        report(
            Level::Reject,
            ptr.join("examples").as_str().into(),
            "`examples` is rejected; the first became `example`".into(),
            true,
        );
        if let Some(first) = ex.into_iter().next() {
            m.entry("example").or_insert(first);
        }
    }
    let ty = m.get("type").and_then(Value::as_str).map(str::to_string);
    if let Some(f) = m.get("format").and_then(Value::as_str).map(str::to_string)
        && !gemini_format_ok(ty.as_deref(), &f)
    {
        m.remove("format");
        notes.push(format!("format: {f}"));
        report(
            Level::Reject,
            ptr.join("format").as_str().into(),
            format!("format {f:?} is not accepted for this type; moved to the description"),
            true,
        );
    }
    if let Some(Value::Array(values)) = m.get("enum").cloned()
        && values.iter().any(|v| !v.is_string())
    {
        report(
            Level::Reject,
            ptr.join("enum").as_str().into(),
            "`enum` values must be strings; the values moved to the description".into(),
            true,
        );
        m.remove("enum");
        notes.push(format!(
            "one of: {}",
            values
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let unknown: Vec<String> = m
        .keys()
        .filter(|k| !GEMINI_KEYWORDS.contains(&k.as_str()) && *k != "$ref" && *k != "$defs")
        .cloned()
        .collect();
    for k in unknown {
        m.remove(&k);
        report(
            Level::Reject,
            ptr.join(&k).as_str().into(),
            format!("`{k}` is not part of the Gemini schema subset; removed"),
            true,
        );
    }
    if !notes.is_empty() {
        let add = format!("({})", notes.join("; "));
        let d = match m.get("description").and_then(Value::as_str) {
            Some(d) if !d.is_empty() => format!("{d} {add}"),
            _ => add,
        };
        m.insert("description".into(), Value::String(d));
    }
}

/// Nested `$ref`s expanded at most this deep, and at most this many expansions per schema;
/// beyond, and for recursive references, the reference becomes `{description}` (accepts anything).
const MAX_REF_DEPTH: usize = 8;
const MAX_EXPANSIONS: usize = 2_000;

fn inline_refs(root: &mut Value, ptr: &JsonPointer, report: &mut Report<'_>) {
    let defs = root
        .as_object_mut()
        .and_then(|m| {
            let a = m.remove("$defs");
            let b = m.remove("definitions");
            match (a, b) {
                (Some(Value::Object(mut x)), Some(Value::Object(y))) => {
                    x.extend(y);
                    Some(x)
                }
                (Some(Value::Object(x)), _) | (_, Some(Value::Object(x))) => Some(x),
                _ => None,
            }
        })
        .unwrap_or_default();
    // The references inside definitions are reported where they are written.
    for (name, def) in &defs {
        let at = ptr.join("$defs").join(name);
        walk(def, &at, &mut |node, p| {
            if let Some(r) = node.get("$ref").and_then(Value::as_str) {
                report(
                    Level::Reject,
                    p.join("$ref").as_str().into(),
                    format!("`$ref` is not supported; {r} inlined"),
                    true,
                );
            }
        });
    }
    let mut budget = MAX_EXPANSIONS;
    let mut stack = Vec::new();
    inline_node(root, ptr, &defs, &mut stack, &mut budget, true, report);
}

fn ref_target<'d>(reference: &str, defs: &'d Map<String, Value>) -> Option<(String, &'d Value)> {
    let name = reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))?;
    let name = name.replace("~1", "/").replace("~0", "~");
    defs.get(&name).map(|v| (name, v))
}

fn inline_node(
    node: &mut Value,
    ptr: &JsonPointer,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
    budget: &mut usize,
    original: bool,
    report: &mut Report<'_>,
) {
    let Some(m) = node.as_object_mut() else {
        return;
    };
    if let Some(reference) = m.remove("$ref") {
        let r = reference.as_str().unwrap_or_default().to_string();
        let at = ptr.join("$ref").as_str().to_string();
        let mut expanded = match ref_target(&r, defs) {
            Some((name, target))
                if !stack.contains(&name) && stack.len() < MAX_REF_DEPTH && *budget > 0 =>
            {
                *budget -= 1;
                if original {
                    report(
                        Level::Reject,
                        at,
                        format!("`$ref` is not supported; {r} inlined"),
                        true,
                    );
                }
                let mut copy = target.clone();
                stack.push(name);
                inline_node(&mut copy, ptr, defs, stack, budget, false, report);
                stack.pop();
                copy
            }
            Some((name, _)) => {
                if original {
                    report(
                        Level::Reject,
                        at,
                        format!(
                            "`$ref` is not supported; {r} is recursive or too deep to inline, it accepts any value"
                        ),
                        true,
                    );
                }
                json!({ "description": format!("{name} (nested value, any shape)") })
            }
            None => {
                if original {
                    report(
                        Level::Reject,
                        at,
                        format!("`$ref` {r} does not resolve; it accepts any value"),
                        true,
                    );
                }
                json!({})
            }
        };
        // Sibling keywords (description, ...) win over the target's.
        if let Value::Object(e) = &mut expanded {
            for (k, v) in std::mem::take(m) {
                e.insert(k, v);
            }
        }
        *node = expanded;
        return;
    }
    for_each_child_mut(node, ptr, &mut |child, p| {
        inline_node(child, &p, defs, stack, budget, original, report)
    });
}

/// `$ref`s that do not resolve inside `root` become `{}` (the TypeScript SDK throws on them).
fn drop_unresolved_refs(root: &mut Value, ptr: &JsonPointer, report: &mut Report<'_>) {
    let snapshot = root.clone();
    let mut bad: Vec<JsonPointer> = Vec::new();
    walk(&snapshot, &JsonPointer::root(), &mut |node, p| {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            let ok = r == "#"
                || r.strip_prefix('#')
                    .is_some_and(|frag| frag.starts_with('/') && snapshot.pointer(frag).is_some());
            if !ok {
                bad.push(p.clone());
            }
        }
    });
    for p in bad {
        if let Some(Value::Object(m)) = root.pointer_mut(p.as_str()) {
            let r = m.remove("$ref");
            report(
                Level::Reject,
                format!("{}{}/$ref", ptr.as_str(), p.as_str()),
                format!(
                    "`$ref` {} does not resolve inside this schema (the TypeScript SDK fails tools/list); removed",
                    r.unwrap_or_default()
                ),
                true,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openapi_mcp_toolset::model::{HttpMethod, Route};

    fn tool(name: &str, input: Value) -> Arc<ToolDef> {
        let mut t = rmcp::model::Tool::default();
        t.name = name.to_string().into();
        t.description = Some("d".into());
        let Value::Object(m) = input else {
            panic!("object")
        };
        t.input_schema = Arc::new(m);
        Arc::new(ToolDef::new(
            t,
            Route::new(HttpMethod::Get, "/x"),
            None,
            Vec::new(),
            Location::new("spec.yaml", "/paths/~1x/get"),
        ))
    }

    fn set(tools: Vec<Arc<ToolDef>>) -> ToolSet {
        ToolSet {
            title: "Acme API".into(),
            version: "1".into(),
            description: None,
            tag_descriptions: Vec::new(),
            base_url: None,
            security_schemes: Vec::new(),
            tools,
        }
    }

    fn input(s: &ToolSet, i: usize) -> Value {
        Value::Object((*s.tools[i].tool().input_schema).clone())
    }

    #[test]
    fn generic_changes_nothing() {
        let mut s = set(vec![tool(
            "a.b",
            json!({"type": "object", "properties": {"x": {"type": ["string", "null"]}}}),
        )]);
        let before = input(&s, 0);
        assert!(apply(&mut s, &ClientProfile::new(Client::Generic)).is_empty());
        assert_eq!(input(&s, 0), before);
        assert_eq!(s.tools[0].name(), "a.b");
        // lint still reports the type array as a warning
        let issues = check(&s, &ClientProfile::new(Client::Generic));
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].pointer, "/inputSchema/properties/x/type");
        assert_eq!(issues[0].level, Level::Degrade);
    }

    #[test]
    fn claude_budget_counts_server_prefix() {
        let long = "acme_".to_string() + &"x".repeat(55); // 60 chars
        let mut s = set(vec![tool(&long, json!({"type": "object"}))]);
        let issues = apply(&mut s, &ClientProfile::new(Client::Claude));
        // mcp__acme__ is 11 characters: 53 left.
        assert_eq!(s.tools[0].name().len(), 53);
        assert!(s.tools[0].name().starts_with("acme_xxx"));
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].pointer, "/name");
        let named = ClientProfile {
            client: Client::Claude,
            server_name: Some("s".repeat(50)),
        };
        let mut s2 = set(vec![tool("short_name_here_x", json!({"type": "object"}))]);
        let issues = apply(&mut s2, &named);
        assert!(issues.iter().any(|i| !i.fixed), "{issues:?}");
    }

    #[test]
    fn shortened_names_stay_unique() {
        let a = "p_".to_string() + &"y".repeat(70);
        let b = "p_".to_string() + &"y".repeat(71);
        let mut s = set(vec![
            tool(&a, json!({"type": "object"})),
            tool(&b, json!({"type": "object"})),
        ]);
        apply(&mut s, &ClientProfile::new(Client::Openai));
        assert_ne!(s.tools[0].name(), s.tools[1].name());
        assert!(s.tools.iter().all(|t| t.name().len() <= 64));
    }

    #[test]
    fn cursor_combined_limit_and_dots() {
        let mut s = set(vec![tool(
            &("a.".to_string() + &"z".repeat(60)),
            json!({"type": "object"}),
        )]);
        let profile = ClientProfile {
            client: Client::Cursor,
            server_name: Some("github".into()),
        };
        let issues = apply(&mut s, &profile);
        let n = s.tools[0].name().to_string();
        assert!(n.len() <= 54, "{n}");
        assert!(!n.contains('.'));
        assert_eq!(issues.len(), 2, "{issues:?}");
    }

    #[test]
    fn openai_adds_items_and_keeps_refs() {
        let mut s = set(vec![tool(
            "t",
            json!({"type": "object", "properties": {
                "a": {"type": "array"},
                "b": {"$ref": "#/$defs/B"}
            }, "$defs": {"B": {"type": ["array", "null"]}}}),
        )]);
        let issues = apply(&mut s, &ClientProfile::new(Client::Openai));
        let i = input(&s, 0);
        assert_eq!(i["properties"]["a"]["items"], json!({}));
        assert_eq!(i["$defs"]["B"]["items"], json!({}));
        assert_eq!(i["properties"]["b"]["$ref"], "#/$defs/B");
        let ptrs: Vec<&str> = issues.iter().map(|i| i.pointer.as_str()).collect();
        assert_eq!(
            ptrs,
            ["/inputSchema/properties/a", "/inputSchema/$defs/B"],
            "{issues:?}"
        );
    }

    #[test]
    fn gemini_subset() {
        let mut s = set(vec![tool(
            "9lives",
            json!({"type": "object", "additionalProperties": false, "properties": {
                "X-Trace-Id": {"type": "string", "format": "uuid"},
                "n": {"type": ["integer", "null"], "exclusiveMinimum": 0, "format": "int64"},
                "k": {"const": "fixed"},
                "u": {"oneOf": [{"type": "string"}, {"type": "integer", "enum": [1, 2]}]},
                "tree": {"$ref": "#/$defs/Tree"}
            }, "required": ["X-Trace-Id"],
            "$defs": {"Tree": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}}}),
        )]);
        let mut t = s.tools[0].as_ref().clone();
        t.route.args.push(openapi_mcp_toolset::model::ArgBinding {
            arg: "X-Trace-Id".into(),
            wire: "X-Trace-Id".into(),
            location: openapi_mcp_toolset::model::ArgLocation::Header { explode: false },
            required: true,
            content_type: None,
        });
        s.tools[0] = Arc::new(t);
        let issues = apply(&mut s, &ClientProfile::new(Client::Gemini));
        assert_eq!(s.tools[0].name(), "t_9lives");
        let i = input(&s, 0);
        assert!(i.get("additionalProperties").is_none());
        assert!(i.get("$defs").is_none());
        let p = &i["properties"];
        assert!(p.get("X-Trace-Id").is_none());
        assert_eq!(p["X_Trace_Id"]["type"], "string");
        assert!(p["X_Trace_Id"].get("format").is_none());
        assert_eq!(p["X_Trace_Id"]["description"], "(format: uuid)");
        assert_eq!(i["required"], json!(["X_Trace_Id"]));
        assert_eq!(s.tools[0].route.args[0].arg, "X_Trace_Id");
        assert_eq!(s.tools[0].route.args[0].wire, "X-Trace-Id");
        assert_eq!(p["n"]["type"], "integer");
        assert_eq!(p["n"]["nullable"], true);
        assert_eq!(p["n"]["minimum"], 0);
        assert_eq!(p["n"]["format"], "int64");
        assert_eq!(p["k"]["enum"], json!(["fixed"]));
        assert!(p["u"].get("oneOf").is_none());
        assert!(p["u"]["anyOf"][1].get("enum").is_none());
        // Recursion is cut after one expansion.
        assert_eq!(p["tree"]["type"], "object");
        let inner = &p["tree"]["properties"]["children"]["items"];
        assert!(inner.get("$ref").is_none());
        assert!(inner["description"].as_str().unwrap_or("").contains("Tree"));
        assert!(!i.to_string().contains("$ref"));
        // Only the original $refs are reported (two: property and the one inside $defs).
        let refs = issues
            .iter()
            .filter(|i| i.pointer.ends_with("$ref"))
            .count();
        assert_eq!(refs, 2, "{issues:?}");
        assert!(issues.iter().all(|i| i.fixed));
        // The fixed output is clean: applying again changes nothing.
        let again = apply(&mut s, &ClientProfile::new(Client::Gemini));
        assert!(again.is_empty(), "{again:?}");
    }

    #[test]
    fn diamond_refs_are_bounded() {
        let mut defs = Map::new();
        defs.insert("L".into(), json!({"type": "string"}));
        let mut prev = "L".to_string();
        for i in 0..12 {
            let n = format!("D{i}");
            defs.insert(
                n.clone(),
                json!({"type": "object", "properties": {
                    "a": {"$ref": format!("#/$defs/{prev}")},
                    "b": {"$ref": format!("#/$defs/{prev}")},
                    "c": {"$ref": format!("#/$defs/{prev}")}}}),
            );
            prev = n;
        }
        let mut s = set(vec![tool(
            "t",
            json!({"type": "object", "properties": {"root": {"$ref": format!("#/$defs/{prev}")}}, "$defs": defs}),
        )]);
        apply(&mut s, &ClientProfile::new(Client::Gemini));
        let size = input(&s, 0).to_string().len();
        assert!(size < 2_000_000, "{size}");
        assert!(!input(&s, 0).to_string().contains("$ref"));
    }

    #[test]
    fn ts_sdk_unresolved_refs_removed() {
        let mut t = tool(
            "t",
            json!({"type": "object", "properties": {"p": {"$ref": "#/components/schemas/Pet"}}}),
        )
        .as_ref()
        .clone();
        let Value::Object(out) = json!({"type": "object", "properties": {
            "ok": {"$ref": "#/$defs/A"}, "bad": {"$ref": "#/$defs/Missing"}}, "$defs": {"A": {}}})
        else {
            panic!()
        };
        t.tool_mut().output_schema = Some(Arc::new(out));
        let mut s = set(vec![Arc::new(t)]);
        let issues = apply(&mut s, &ClientProfile::new(Client::Vscode));
        let ptrs: Vec<&str> = issues.iter().map(|i| i.pointer.as_str()).collect();
        assert_eq!(
            ptrs,
            [
                "/inputSchema/properties/p/$ref",
                "/outputSchema/properties/bad/$ref"
            ]
        );
        let out = s.tools[0]
            .tool()
            .output_schema
            .as_ref()
            .map(|o| Value::Object((**o).clone()));
        assert_eq!(
            out.as_ref().map(|o| o["properties"]["ok"]["$ref"].clone()),
            Some(json!("#/$defs/A"))
        );
    }

    #[test]
    fn root_union_rejected() {
        let s = set(vec![tool(
            "t",
            json!({"anyOf": [{"type": "object"}, {"type": "object"}]}),
        )]);
        let issues = check(&s, &ClientProfile::new(Client::Claude));
        assert!(
            issues.iter().any(|i| i.pointer == "/inputSchema/anyOf"),
            "{issues:?}"
        );
        assert!(
            issues
                .iter()
                .any(|i| i.pointer == "/inputSchema/type" && i.fixed)
        );
        let generic = check(&s, &ClientProfile::new(Client::Generic));
        assert!(
            generic
                .iter()
                .any(|i| i.pointer == "/inputSchema/type" && !i.fixed)
        );
    }

    #[test]
    fn name_problem_for_explicit_names() {
        let s = set(Vec::new());
        assert!(name_problem(&s, &ClientProfile::new(Client::Openai), "a.b").is_some());
        assert!(name_problem(&s, &ClientProfile::new(Client::Openai), "a_b").is_none());
        assert!(name_problem(&s, &ClientProfile::new(Client::Generic), "a.b").is_none());
    }
}
