//! Rust types for JSON schemas: the typed argument structs' field types, and the named structs and
//! enums they need.
//!
//! The rule is that a type never rejects what its schema accepts (the runtime validates every call
//! against the schema before the handler runs, so the typed parse must not be stricter): only
//! plain shapes get Rust types, everything else stays `serde_json::Value`.
//!
//! - `string`, `integer`, `number`, `boolean` -> `String`, `i64`, `f64`, `bool`; arrays -> `Vec`.
//! - A string enum -> a Rust `enum` with one variant per value (`#[serde(rename)]` to the exact
//!   value), named after the property that has it.
//! - `type: object` with `properties` -> a struct (unknown properties are ignored, as the schema
//!   allows them unless it says otherwise, and then the validator has rejected them already);
//!   with only `additionalProperties` -> a `BTreeMap<String, _>`.
//! - `allOf` of objects -> one struct with the properties of all; `anyOf`/`oneOf` of one schema and
//!   `null` -> `Option` of that schema's type; other compositions -> `Value`.
//! - `#/$defs/Name` (the converter keeps recursive component schemas there) -> a type named after
//!   the component; a direct (not through `Vec` or a map) field of a `$defs` struct type is boxed, which
//!   breaks every cycle.
//! - `null` in the type or enum, or a non-required property -> `Option`.
//!
//! Types are per module (`src/tools/<tag>.rs`); structurally identical schemas share one type.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use serde_json::{Map, Value};

use crate::naming::{Scope, camel_ident, snake_ident};

/// A named type a tool module defines.
pub enum TypeDef {
    Struct {
        ident: String,
        doc: String,
        fields: Vec<FieldPlan>,
        /// The field that keeps undeclared properties (`#[serde(flatten)]`), unless the schema
        /// forbids them.
        extra: Option<String>,
    },
    Enum {
        ident: String,
        doc: String,
        /// `(variant ident, JSON value)`.
        variants: Vec<(String, String)>,
    },
}

pub struct FieldPlan {
    pub ident: String,
    /// The property name, when it differs from `ident`.
    pub rename: Option<String>,
    pub ty: TokenStream,
    pub description: Option<String>,
    /// `Query parameter `limit`.`, `Request body property `name`.`, ... (argument structs only)
    pub binding: Option<String>,
    pub presence: Presence,
}

impl FieldPlan {
    /// The property name in the schema (and the argument name in the inputSchema).
    pub fn property(&self) -> &str {
        self.rename.as_deref().unwrap_or(&self.ident)
    }
}

/// Whether a property may be absent and whether it may be `null`: decides the field's type and
/// how it (de)serializes, so that a value round-trips exactly (absent stays absent, `null` stays
/// `null`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// `T`.
    Required,
    /// `Option<T>`; `None` is `null`.
    RequiredNullable,
    /// `Option<T>`; `None` is absent.
    Optional,
    /// `Option<Option<T>>`: `None` is absent, `Some(None)` is `null`.
    OptionalNullable,
    /// `Option<Value>`: `None` is absent, `Some(Value::Null)` is `null`.
    OptionalValue,
}

/// The name of the catch-all field of a struct with these fields: `extra`, unless a property
/// took it.
fn extra_ident(fields: &[FieldPlan]) -> String {
    let taken = |c: &str| fields.iter().any(|f| f.ident == c);
    std::iter::once("extra".to_string())
        .chain((2..).map(|n| format!("extra_{n}")))
        .find(|c| !taken(c))
        .unwrap_or_default()
}

/// Whether an object schema allows properties it does not declare.
fn allows_extra(obj: &Map<String, Value>) -> bool {
    obj.get("additionalProperties") != Some(&Value::Bool(false))
        && obj.get("unevaluatedProperties") != Some(&Value::Bool(false))
}

/// Names that generated types must not take in a tool module: what the module imports or uses
/// from the prelude by its short name.
pub const RESERVED_TYPE_NAMES: &[&str] = &[
    "Forwarder",
    "Route",
    "CallToolResult",
    "Map",
    "Value",
    "String",
    "Vec",
    "Option",
    "Box",
    "Result",
    "Ok",
    "Err",
    "Some",
    "None",
    "Self",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Copy",
    "Clone",
    "Debug",
    "Default",
    "Drop",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "Hash",
    "Fn",
    "FnMut",
    "FnOnce",
    "Iterator",
    "IntoIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "Extend",
    "From",
    "Into",
    "TryFrom",
    "TryInto",
    "AsRef",
    "AsMut",
    "ToOwned",
    "ToString",
    "Future",
    "IntoFuture",
    "Deserialize",
    "Serialize",
    "BTreeMap",
];

/// Keywords that only annotate: a `$ref` next to them is still just the reference.
const ANNOTATIONS: &[&str] = &[
    "$ref",
    "description",
    "title",
    "default",
    "examples",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "format",
];

/// Names for a type a schema position introduces.
struct Hint {
    /// `<Parent><Property>`.
    long: String,
    /// `<Property>`, preferred for the properties of argument structs.
    short: Option<String>,
    /// `<Property>`, used (numbered) when `long` gets too long.
    part: String,
}

impl Hint {
    fn suffixed(&self, suffix: &str) -> Hint {
        Hint {
            long: format!("{}{suffix}", self.long),
            short: self.short.as_ref().map(|s| format!("{s}{suffix}")),
            part: format!("{}{suffix}", self.part),
        }
    }
}

/// Longest `<Parent><Property>` type name; deeper types are `<Property>N`.
const MAX_TYPE_NAME: usize = 40;
/// Inline objects nested deeper than this stay `Value` (deeply nested form-style bodies would
/// otherwise produce a struct per level).
const MAX_INLINE_DEPTH: usize = 8;

/// A type for one schema position.
struct Ty {
    tokens: TokenStream,
    /// The schema also admits `null`.
    nullable: bool,
    /// A `$defs` struct: boxed where it is a direct field.
    boxable: bool,
}

impl Ty {
    fn plain(tokens: TokenStream) -> Self {
        Ty {
            tokens,
            nullable: false,
            boxable: false,
        }
    }
    fn value() -> Self {
        Ty::plain(quote! { Value })
    }
    /// As an array item or map value: `Option<T>` when nullable, never boxed.
    fn element(self) -> TokenStream {
        let t = self.tokens;
        if self.nullable {
            quote! { Option<#t> }
        } else {
            t
        }
    }
}

/// The types of one tool module.
pub struct ModuleTypes {
    scope: Scope,
    /// Schema key -> type ident, so identical schemas share a type.
    known: HashMap<String, String>,
    /// The names of `$defs` definitions: short names of inline types leave them to the
    /// definitions.
    def_names: HashSet<String>,
}

impl ModuleTypes {
    /// `args_structs`: the argument struct names, claimed before any other type.
    pub fn new(args_structs: &[String]) -> (Self, Vec<String>) {
        let mut scope = Scope::with_reserved(RESERVED_TYPE_NAMES);
        let claimed = args_structs
            .iter()
            .map(|s| scope.claim_camel(s.clone()))
            .collect();
        (
            ModuleTypes {
                scope,
                known: HashMap::new(),
                def_names: HashSet::new(),
            },
            claimed,
        )
    }

    /// Notes the `$defs` names of a tool's input schema (call for every tool of the module before
    /// [`ModuleTypes::args_fields`]).
    pub fn note_defs(&mut self, input_schema: &Map<String, Value>) {
        if let Some(defs) = input_schema.get("$defs").and_then(Value::as_object) {
            self.def_names
                .extend(defs.keys().map(|k| type_part(k, "Schema")));
        }
    }

    /// The fields of a tool's argument struct (one per inputSchema property, in schema order) and
    /// the types they introduce. `base` names the types (`PetstoreCreatePet` + `Status`).
    pub fn args_fields(
        &mut self,
        input_schema: &Map<String, Value>,
        base: &str,
        binding: impl Fn(&str) -> Option<String>,
    ) -> (Vec<FieldPlan>, Vec<TypeDef>) {
        let defs = input_schema.get("$defs").and_then(Value::as_object);
        let mut cx = Cx {
            types: self,
            defs,
            defs_key: defs
                .map(|d| Value::Object(d.clone()).to_string())
                .unwrap_or_default(),
            out: Vec::new(),
            resolving: Vec::new(),
            depth: 0,
        };
        let fields = cx.fields(input_schema, base, true, &binding);
        (fields, cx.out.into_iter().flatten().collect())
    }
}

struct Cx<'a> {
    types: &'a mut ModuleTypes,
    defs: Option<&'a Map<String, Value>>,
    /// The `$defs` as text: part of the key of every type that refers to them.
    defs_key: String,
    /// Types introduced, parents before the types of their fields (slots are reserved first).
    out: Vec<Option<TypeDef>>,
    /// Definitions being resolved inline (a cycle through them falls back to `Value`).
    resolving: Vec<String>,
    /// How many inline structs enclose the schema being typed.
    depth: usize,
}

impl Cx<'_> {
    /// One field per property of an object schema, in schema order. Types the fields introduce
    /// are named `<base><Property>`, or just `<Property>` if `short` and that name is free.
    fn fields(
        &mut self,
        obj: &Map<String, Value>,
        base: &str,
        short: bool,
        binding: &dyn Fn(&str) -> Option<String>,
    ) -> Vec<FieldPlan> {
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(props) = obj.get("properties").and_then(Value::as_object) else {
            return Vec::new();
        };
        let mut scope = Scope::default();
        props
            .iter()
            .map(|(name, prop)| {
                let ident = scope.claim(snake_ident(name, "field"));
                let part = type_part(name, "Field");
                let hint = Hint {
                    long: format!("{base}{part}"),
                    short: short.then(|| part.clone()),
                    part,
                };
                let ty = self.ty(prop, &hint);
                let inner = ty.tokens;
                let inner = if ty.boxable {
                    quote! { Box<#inner> }
                } else {
                    inner
                };
                let any = !ty.nullable && inner.to_string() == "Value";
                let presence = match (required.contains(&name.as_str()), ty.nullable) {
                    (false, _) if any => Presence::OptionalValue,
                    (true, false) => Presence::Required,
                    (true, true) => Presence::RequiredNullable,
                    (false, false) => Presence::Optional,
                    (false, true) => Presence::OptionalNullable,
                };
                let tokens = match presence {
                    Presence::Required => inner,
                    Presence::RequiredNullable | Presence::Optional | Presence::OptionalValue => {
                        quote! { Option<#inner> }
                    }
                    Presence::OptionalNullable => quote! { Option<Option<#inner>> },
                };
                FieldPlan {
                    rename: (ident != *name).then(|| name.clone()),
                    ident,
                    ty: tokens,
                    description: prop
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    binding: binding(name),
                    presence,
                }
            })
            .collect()
    }

    /// The type of `schema`; `hint` names a type it introduces.
    fn ty(&mut self, schema: &Value, hint: &Hint) -> Ty {
        let Some(obj) = schema.as_object() else {
            return Ty::value();
        };
        if let Some(r) = obj.get("$ref") {
            if obj.keys().any(|k| !ANNOTATIONS.contains(&k.as_str())) {
                return Ty::value();
            }
            return match r.as_str().and_then(|r| self.def_name(r)) {
                Some(name) => self.def_ty(&name),
                None => Ty::value(),
            };
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(alts) = obj.get(key).and_then(Value::as_array) {
                return self.nullable_alternative(obj, alts, hint);
            }
        }
        if ["not", "if", "then", "else", "const"]
            .iter()
            .any(|k| obj.contains_key(*k))
        {
            return Ty::value();
        }
        if obj.contains_key("allOf") {
            return match self.merge_all_of(obj, 0) {
                Some(merged) => self.object_ty(&merged, hint),
                None => Ty::value(),
            };
        }
        let (types, type_nullable) = match obj.get("type") {
            None => (Vec::new(), true),
            Some(Value::String(t)) => (vec![t.as_str()], false),
            Some(Value::Array(ts)) => (
                ts.iter()
                    .filter_map(Value::as_str)
                    .filter(|t| *t != "null")
                    .collect(),
                ts.iter().any(|t| t == "null"),
            ),
            Some(_) => return Ty::value(),
        };
        let nullable = type_nullable || obj.get("nullable") == Some(&Value::Bool(true));
        if let Some(values) = obj.get("enum").and_then(Value::as_array)
            && matches!(types.as_slice(), [] | ["string"])
            && let Some(mut ty) = self.enum_ty(obj, values, hint)
        {
            // `null` must be both in the enum and allowed by the type to validate.
            ty.nullable = values.contains(&Value::Null) && nullable;
            return ty;
        }
        let mut ty = match types.as_slice() {
            [t] => self.base_ty(t, obj, hint),
            _ => return Ty::value(),
        };
        ty.nullable = nullable;
        ty
    }

    fn base_ty(&mut self, t: &str, obj: &Map<String, Value>, hint: &Hint) -> Ty {
        match t {
            "string" => Ty::plain(quote! { String }),
            "integer" => Ty::plain(quote! { i64 }),
            "number" => Ty::plain(quote! { f64 }),
            "boolean" => Ty::plain(quote! { bool }),
            "array" => {
                let item = match obj.get("items") {
                    Some(items) => self.ty(items, &hint.suffixed("Item")).element(),
                    None => quote! { Value },
                };
                Ty::plain(quote! { Vec<#item> })
            }
            "object" => self.object_ty(obj, hint),
            _ => Ty::value(),
        }
    }

    /// `anyOf`/`oneOf` of one schema and `{"type": "null"}`: that schema's type, nullable.
    fn nullable_alternative(
        &mut self,
        obj: &Map<String, Value>,
        alts: &[Value],
        hint: &Hint,
    ) -> Ty {
        // Other keywords next to the composition would constrain it further: not worth typing.
        let composition = |k: &str| k == "anyOf" || k == "oneOf";
        if obj
            .keys()
            .any(|k| !ANNOTATIONS.contains(&k.as_str()) && !composition(k))
            || (obj.contains_key("anyOf") && obj.contains_key("oneOf"))
        {
            return Ty::value();
        }
        let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
        match alts {
            [a, b] if is_null(a) != is_null(b) => {
                let other = if is_null(a) { b } else { a };
                let mut ty = self.ty(other, hint);
                ty.nullable = true;
                ty
            }
            [only] => self.ty(only, hint),
            _ => Ty::value(),
        }
    }

    /// `type: object`: a struct when it has properties, a map when it only has
    /// `additionalProperties`, `Value` otherwise.
    fn object_ty(&mut self, obj: &Map<String, Value>, hint: &Hint) -> Ty {
        let has_props = obj
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        if has_props {
            let key = self.key(obj);
            if let Some(id) = self.types.known.get(&key) {
                return Ty::plain(ident_tokens(id));
            }
            if self.depth >= MAX_INLINE_DEPTH {
                return Ty::value();
            }
            let id = self.claim(hint);
            self.types.known.insert(key, id.clone());
            let slot = self.reserve();
            self.depth += 1;
            let fields = self.fields(obj, &id, false, &|_| None);
            self.depth -= 1;
            let extra = allows_extra(obj).then(|| extra_ident(&fields));
            self.out[slot] = Some(TypeDef::Struct {
                ident: id.clone(),
                doc: schema_doc(obj),
                fields,
                extra,
            });
            return Ty::plain(ident_tokens(&id));
        }
        let patterned = obj.contains_key("patternProperties") || obj.contains_key("propertyNames");
        match obj.get("additionalProperties") {
            Some(extra @ Value::Object(o)) if !o.is_empty() && !patterned => {
                let v = self.ty(extra, &hint.suffixed("Value")).element();
                Ty::plain(quote! { ::std::collections::BTreeMap<String, #v> })
            }
            _ => Ty::value(),
        }
    }

    /// A string enum: `None` when some value is not a string (or there are none).
    fn enum_ty(&mut self, obj: &Map<String, Value>, values: &[Value], hint: &Hint) -> Option<Ty> {
        let mut strings: Vec<&str> = Vec::new();
        for v in values {
            match v {
                Value::String(s) => {
                    if !strings.contains(&s.as_str()) {
                        strings.push(s);
                    }
                }
                Value::Null => {}
                _ => return None,
            }
        }
        if strings.is_empty() {
            return None;
        }
        let key = format!(
            "enum:{}",
            Value::Array(strings.iter().map(|s| Value::from(*s)).collect())
        );
        // Enums are shared by their values alone (descriptions differ more often than not).
        if let Some(id) = self.types.known.get(&key) {
            return Some(Ty::plain(ident_tokens(id)));
        }
        let id = self.claim(hint);
        self.types.known.insert(key, id.clone());
        let mut scope = Scope::default();
        let variants = strings
            .iter()
            .map(|s| (scope.claim_camel(camel_ident(s, "Empty")), s.to_string()))
            .collect();
        self.out.push(Some(TypeDef::Enum {
            ident: id.clone(),
            doc: schema_doc(obj),
            variants,
        }));
        Some(Ty::plain(ident_tokens(&id)))
    }

    /// The type of `#/$defs/<name>`: named after the definition when it is a struct or an enum,
    /// else the type of its schema (with cycles through such definitions cut to `Value`).
    fn def_ty(&mut self, name: &str) -> Ty {
        let Some(schema) = self.defs.and_then(|d| d.get(name)) else {
            return Ty::value();
        };
        let hint = Hint {
            long: type_part(name, "Schema"),
            short: None,
            part: type_part(name, "Schema"),
        };
        let Some(obj) = schema.as_object() else {
            return Ty::value();
        };
        let (object_type, nullable) = match obj.get("type") {
            Some(Value::String(t)) => (t == "object", false),
            Some(Value::Array(ts)) => (
                ts.iter().all(|t| t == "object" || t == "null") && ts.iter().any(|t| t == "object"),
                ts.iter().any(|t| t == "null"),
            ),
            _ => (false, false),
        };
        let struct_like = object_type
            && obj
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty())
            && !["anyOf", "oneOf", "allOf", "not", "if", "$ref", "const"]
                .iter()
                .any(|k| obj.contains_key(*k));
        let merged = if struct_like {
            None
        } else if obj.contains_key("allOf")
            && !["anyOf", "oneOf", "not", "if", "$ref", "const"]
                .iter()
                .any(|k| obj.contains_key(*k))
        {
            self.merge_all_of(obj, 0)
        } else {
            None
        };
        let nullable = match &merged {
            Some(m) => m.get("type").is_some_and(Value::is_array),
            None => nullable,
        };
        if struct_like || merged.is_some() {
            let key = format!("def:{name}:{}", self.defs_key);
            if let Some(id) = self.types.known.get(&key) {
                return Ty {
                    tokens: ident_tokens(id),
                    nullable,
                    boxable: true,
                };
            }
            let id = self.types.scope.claim_camel(hint.long.clone());
            self.types.known.insert(key, id.clone());
            let slot = self.reserve();
            let body = merged.as_ref().unwrap_or(obj);
            let fields = self.fields(body, &id, false, &|_| None);
            let mut doc = schema_doc(obj);
            if !doc.is_empty() {
                doc.push_str("\n\n");
            }
            doc.push_str(&format!("The spec's schema `{name}`."));
            let extra = allows_extra(body).then(|| extra_ident(&fields));
            self.out[slot] = Some(TypeDef::Struct {
                ident: id.clone(),
                doc,
                fields,
                extra,
            });
            return Ty {
                tokens: ident_tokens(&id),
                nullable,
                boxable: true,
            };
        }
        if self.resolving.iter().any(|n| n == name) {
            return Ty::value();
        }
        self.resolving.push(name.to_string());
        let ty = self.ty(schema, &hint);
        self.resolving.pop();
        Ty {
            boxable: false,
            ..ty
        }
    }

    /// `allOf` whose members (and `obj` itself) are all plain objects: one object schema with
    /// every property and every required name. `None` when anything else is involved or two
    /// members define the same property differently.
    fn merge_all_of(&self, obj: &Map<String, Value>, depth: usize) -> Option<Map<String, Value>> {
        if depth > 8 {
            return None;
        }
        let mut props = Map::new();
        let mut required: Vec<Value> = Vec::new();
        let mut nullable_everywhere = true;
        let mut saw_object = false;
        let mut parts: Vec<Map<String, Value>> = Vec::new();
        // `obj` itself, without `allOf`, is one more member (when it says more than annotations).
        let mut own = obj.clone();
        own.remove("allOf");
        for k in ANNOTATIONS {
            own.remove(*k);
        }
        if !own.is_empty() {
            parts.push(own);
        }
        for member in obj.get("allOf")?.as_array()? {
            let m = member.as_object()?;
            let m = if let Some(r) = m.get("$ref") {
                if m.keys().any(|k| !ANNOTATIONS.contains(&k.as_str())) {
                    return None;
                }
                let name = self.def_name(r.as_str()?)?;
                self.defs?.get(&name)?.as_object()?.clone()
            } else {
                m.clone()
            };
            if m.contains_key("allOf") {
                parts.push(self.merge_all_of(&m, depth + 1)?);
            } else {
                parts.push(m);
            }
        }
        for part in parts {
            for k in part.keys() {
                if !matches!(
                    k.as_str(),
                    "type" | "properties" | "required" | "additionalProperties"
                ) && !ANNOTATIONS.contains(&k.as_str())
                {
                    return None;
                }
            }
            match part.get("type") {
                // Without `type`, a member only constrains objects: it does not widen the type.
                None => {}
                Some(Value::String(t)) if t == "object" => {
                    saw_object = true;
                    nullable_everywhere = false;
                }
                Some(Value::Array(ts))
                    if ts.iter().all(|t| t == "object" || t == "null")
                        && ts.iter().any(|t| t == "object") =>
                {
                    saw_object = true;
                    nullable_everywhere &= ts.iter().any(|t| t == "null");
                }
                _ => return None,
            }
            if let Some(p) = part.get("properties") {
                for (k, v) in p.as_object()? {
                    match props.get(k) {
                        Some(existing) if existing != v => return None,
                        _ => {
                            props.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            if let Some(r) = part.get("required") {
                for name in r.as_array()? {
                    if !required.contains(name) {
                        required.push(name.clone());
                    }
                }
            }
        }
        if !saw_object {
            return None;
        }
        let mut merged = Map::new();
        merged.insert(
            "type".into(),
            if nullable_everywhere {
                serde_json::json!(["object", "null"])
            } else {
                Value::from("object")
            },
        );
        if let Some(d) = obj.get("description") {
            merged.insert("description".into(), d.clone());
        }
        merged.insert("properties".into(), Value::Object(props));
        merged.insert("required".into(), Value::Array(required));
        Some(merged)
    }

    /// `#/$defs/A~1B` -> `A/B`, when it names one of this schema's definitions.
    fn def_name(&self, r: &str) -> Option<String> {
        let name = r
            .strip_prefix("#/$defs/")?
            .replace("~1", "/")
            .replace("~0", "~");
        self.defs?.contains_key(&name).then_some(name)
    }

    /// The dedup key of an inline schema: its text, plus the `$defs` when it refers to them.
    fn key(&self, obj: &Map<String, Value>) -> String {
        let text = Value::Object(obj.clone()).to_string();
        if text.contains("\"$ref\"") {
            format!("inline:{text}:{}", self.defs_key)
        } else {
            format!("inline:{text}")
        }
    }

    /// A name for a new type: the short one when it is free (and no definition's), else the long.
    fn claim(&mut self, hint: &Hint) -> String {
        if let Some(short) = &hint.short
            && !self.types.def_names.contains(short)
            && self.types.scope.is_free(short)
        {
            return self.types.scope.claim_camel(short.clone());
        }
        if hint.long.len() <= MAX_TYPE_NAME {
            self.types.scope.claim_camel(hint.long.clone())
        } else {
            self.types.scope.claim_camel(hint.part.clone())
        }
    }

    fn reserve(&mut self) -> usize {
        self.out.push(None);
        self.out.len() - 1
    }
}

/// `name` as part of a type name: UpperCamelCase without the keyword `_` suffix (an underscore
/// inside a type name would trip `non_camel_case_types`).
pub fn type_part(name: &str, fallback: &str) -> String {
    camel_ident(name, fallback)
        .trim_end_matches('_')
        .to_string()
}

fn ident_tokens(id: &str) -> TokenStream {
    let id = Ident::new(id, Span::call_site());
    quote! { #id }
}

/// The doc comment of a named type: the schema's title and description.
fn schema_doc(obj: &Map<String, Value>) -> String {
    let title = obj.get("title").and_then(Value::as_str).map(str::trim);
    let description = obj
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim);
    match (title, description) {
        (Some(t), Some(d)) if !t.is_empty() && !d.contains(t) => format!("{t}\n\n{d}"),
        (_, Some(d)) if !d.is_empty() => d.to_string(),
        (Some(t), _) => t.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The type of the property `p` of an argument schema, and the introduced types' names.
    fn ty_of(schema: Value) -> (String, Vec<String>) {
        let (mut types, _) = ModuleTypes::new(&["TArgs".to_string()]);
        let Value::Object(input) = json!({
            "type": "object",
            "properties": {"p": schema},
            "required": ["p"],
            "$defs": {
                "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}, "parent": {"$ref": "#/$defs/Tree"}}},
                "Color": {"type": "string", "enum": ["red", "green"]},
                "Alias": {"$ref": "#/$defs/Alias2"},
                "Alias2": {"$ref": "#/$defs/Alias"},
            }
        }) else {
            unreachable!()
        };
        let (fields, defs) = types.args_fields(&input, "T", |_| None);
        let names = defs
            .iter()
            .map(|d| match d {
                TypeDef::Struct { ident, fields, .. } => format!(
                    "struct {ident} {{{}}}",
                    fields
                        .iter()
                        .map(|f| format!("{}: {}", f.ident, f.ty.to_string().replace(' ', "")))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                TypeDef::Enum {
                    ident, variants, ..
                } => format!(
                    "enum {ident} {{{}}}",
                    variants
                        .iter()
                        .map(|(v, s)| format!("{v}={s}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
            .collect();
        (fields[0].ty.to_string().replace(' ', ""), names)
    }

    fn ty(schema: Value) -> String {
        ty_of(schema).0
    }

    #[test]
    fn plain_types() {
        assert_eq!(ty(json!({"type": "integer", "format": "int32"})), "i64");
        assert_eq!(ty(json!({"type": ["number", "null"]})), "Option<f64>");
        assert_eq!(
            ty(json!({"type": "number", "nullable": true})),
            "Option<f64>"
        );
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
        assert_eq!(ty(json!({"properties": {"a": {}}})), "Value");
        assert_eq!(ty(json!({"type": ["string", "integer"]})), "Value");
        assert_eq!(ty(json!({"type": "string", "anyOf": [{}]})), "Value");
        assert_eq!(
            ty(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})),
            "Value"
        );
        assert_eq!(
            ty(json!({"anyOf": [{"type": "string"}, {"type": "null"}]})),
            "Option<String>"
        );
        assert_eq!(ty(json!({"const": "x"})), "Value");
        assert_eq!(ty(json!({"$ref": "#/components/schemas/X"})), "Value");
        assert_eq!(ty(json!(true)), "Value");
        assert_eq!(
            ty(json!({"type": "object", "additionalProperties": {"type": "integer"}})),
            "::std::collections::BTreeMap<String,i64>"
        );
        assert_eq!(
            ty(json!({"type": "integer", "enum": [1, 2]})),
            "i64",
            "only string enums become Rust enums"
        );
    }

    #[test]
    fn enums() {
        let (t, defs) =
            ty_of(json!({"type": "string", "enum": ["a-b", "a_b", "", "type", "3d", "Self"]}));
        assert_eq!(t, "P");
        assert_eq!(
            defs,
            ["enum P {AB=a-b, AB2=a_b, Empty=, Type=type, T3d=3d, Self_=Self}"]
        );
        let (t, defs) = ty_of(json!({"type": ["string", "null"], "enum": ["x", null]}));
        assert_eq!((t.as_str(), defs.len()), ("Option<P>", 1));
        // `null` in the enum but not in the type: never valid, so not optional.
        assert_eq!(ty(json!({"type": "string", "enum": ["x", null]})), "P");
        assert_eq!(ty(json!({"enum": ["x", 1]})), "Value");
    }

    #[test]
    fn objects_and_recursion() {
        let (t, defs) = ty_of(json!({
            "type": "object",
            "properties": {"status": {"type": "string", "enum": ["on"]}, "tree": {"$ref": "#/$defs/Tree"}, "color": {"$ref": "#/$defs/Color"}, "alias": {"$ref": "#/$defs/Alias"}},
            "required": ["tree"]
        }));
        assert_eq!(t, "P");
        assert_eq!(
            defs,
            [
                "struct P {status: Option<PStatus>, tree: Box<Tree>, color: Option<Color>, alias: Option<Value>}",
                "enum PStatus {On=on}",
                "struct Tree {kids: Option<Vec<Tree>>, parent: Option<Box<Tree>>}",
                "enum Color {Red=red, Green=green}",
            ]
        );
    }

    #[test]
    fn all_of_merges_objects() {
        let (t, defs) = ty_of(json!({"allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "integer"}}}
        ]}));
        assert_eq!(t, "P");
        assert_eq!(defs, ["struct P {a: String, b: Option<i64>}"]);
        assert_eq!(
            ty(json!({"allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "object", "properties": {"a": {"type": "integer"}}}
            ]})),
            "Value"
        );
        assert_eq!(ty(json!({"allOf": [{"type": "string"}]})), "Value");
    }

    #[test]
    fn identical_schemas_share_a_type() {
        let (mut types, _) = ModuleTypes::new(&["AArgs".into(), "BArgs".into()]);
        let schema = json!({"type": "object", "properties": {"p": {"type": "object", "properties": {"x": {"type": "string", "enum": ["1"]}}}}});
        let (fa, ta) = types.args_fields(schema.as_object().expect("object"), "A", |_| None);
        let (fb, tb) = types.args_fields(schema.as_object().expect("object"), "B", |_| None);
        assert_eq!(fa[0].ty.to_string(), "Option < P >");
        assert_eq!(fb[0].ty.to_string(), "Option < P >");
        assert_eq!((ta.len(), tb.len()), (2, 0));
    }

    #[test]
    fn type_names_avoid_imports_and_each_other() {
        let (mut types, args) = ModuleTypes::new(&["ValueArgs".into(), "XArgs".into()]);
        assert_eq!(args, ["ValueArgs", "XArgs"]);
        let enum_of = |prop: &str, value: &str| json!({"type": "object", "properties": {prop: {"type": "string", "enum": [value]}}});
        let first = |types: &mut ModuleTypes, schema: Value| {
            let (f, _) = types.args_fields(schema.as_object().expect("object"), "X", |_| None);
            f[0].ty.to_string()
        };
        // Short names when free, else `<Tool><Property>`, else numbered.
        assert_eq!(
            first(&mut types, enum_of("status", "a")),
            "Option < Status >"
        );
        assert_eq!(
            first(&mut types, enum_of("status", "b")),
            "Option < XStatus >"
        );
        assert_eq!(
            first(&mut types, enum_of("status", "c")),
            "Option < XStatus2 >"
        );
        assert_eq!(
            first(&mut types, enum_of("value", "d")),
            "Option < XValue >"
        );
        assert_eq!(first(&mut types, enum_of("args", "e")), "Option < Args >");
        assert_eq!(
            first(&mut types, enum_of("x-args", "f")),
            "Option < XXArgs >"
        );
        assert_eq!(first(&mut types, enum_of("", "g")), "Option < Field >");
        assert_eq!(first(&mut types, enum_of("self", "h")), "Option < XSelf >");
        // Definitions keep their names.
        let with_def = json!({"type": "object", "properties": {"tree": {"type": "string", "enum": ["i"]}}, "$defs": {"Tree": {}}});
        types.note_defs(with_def.as_object().expect("object"));
        assert_eq!(first(&mut types, with_def), "Option < XTree >");
    }
}
