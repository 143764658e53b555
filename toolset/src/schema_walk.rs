//! Which JSON Schema keywords hold subschemas, and one walk over them. Code that visits every
//! subschema (client profiles, the converter's `$ref` and `readOnly` passes, lint) used to keep
//! its own keyword lists, and they drifted: one of them skipped `definitions`. Data keywords
//! (`enum`, `const`, `default`, `examples`, ...) are never entered, but properties *named*
//! `default` are.

use serde_json::{Map, Value};

/// Keywords whose value is a map of name -> subschema.
pub const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];
/// Keywords whose value is one subschema (an array under one of them, draft-4 tuple `items`, is
/// a list of subschemas).
pub const SCHEMA_ONE: [&str; 10] = [
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];
/// Keywords whose value is a list of subschemas.
pub const SCHEMA_LISTS: [&str; 4] = ["prefixItems", "allOf", "anyOf", "oneOf"];

/// Where a direct subschema sits in its parent: the keyword, and the name or index under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// `items`, `not`, ...: the keyword's value.
    Keyword(&'a str),
    /// `properties/{name}`, `$defs/{name}`, ...
    Entry(&'a str, &'a str),
    /// `allOf/{i}`, `prefixItems/{i}`, tuple `items/{i}`.
    Index(&'a str, usize),
}

impl Step<'_> {
    /// Appends this step to an escaped JSON pointer (RFC 6901).
    pub fn push_to(&self, pointer: &mut String) {
        fn token(pointer: &mut String, t: &str) {
            pointer.push('/');
            for c in t.chars() {
                match c {
                    '~' => pointer.push_str("~0"),
                    '/' => pointer.push_str("~1"),
                    c => pointer.push(c),
                }
            }
        }
        match *self {
            Step::Keyword(k) => token(pointer, k),
            Step::Entry(k, name) => {
                token(pointer, k);
                token(pointer, name);
            }
            Step::Index(k, i) => {
                token(pointer, k);
                pointer.push('/');
                pointer.push_str(&i.to_string());
            }
        }
    }
}

/// Calls `f` on every direct subschema of `schema` (nothing if it is not an object), in the
/// schema's key order.
pub fn for_each_child<'v>(schema: &'v Value, f: &mut dyn FnMut(Step<'v>, &'v Value)) {
    if let Value::Object(m) = schema {
        for_each_child_of(m, f)
    }
}

/// [`for_each_child`] of a schema object's map.
pub fn for_each_child_of<'v>(m: &'v Map<String, Value>, f: &mut dyn FnMut(Step<'v>, &'v Value)) {
    for (k, v) in m {
        let k = k.as_str();
        match v {
            Value::Object(entries) if SCHEMA_MAPS.contains(&k) => {
                for (name, sub) in entries {
                    f(Step::Entry(k, name), sub);
                }
            }
            Value::Array(list) if SCHEMA_LISTS.contains(&k) || SCHEMA_ONE.contains(&k) => {
                for (i, sub) in list.iter().enumerate() {
                    f(Step::Index(k, i), sub);
                }
            }
            _ if SCHEMA_ONE.contains(&k) => f(Step::Keyword(k), v),
            _ => {}
        }
    }
}

/// Mutable twin of [`for_each_child`].
pub fn for_each_child_mut(schema: &mut Value, f: &mut dyn FnMut(Step<'_>, &mut Value)) {
    if let Value::Object(m) = schema {
        for_each_child_of_mut(m, f)
    }
}

/// Mutable twin of [`for_each_child_of`].
pub fn for_each_child_of_mut(m: &mut Map<String, Value>, f: &mut dyn FnMut(Step<'_>, &mut Value)) {
    for (k, v) in m.iter_mut() {
        let k = k.as_str();
        match v {
            Value::Object(entries) if SCHEMA_MAPS.contains(&k) => {
                for (name, sub) in entries.iter_mut() {
                    f(Step::Entry(k, name), sub);
                }
            }
            Value::Array(list) if SCHEMA_LISTS.contains(&k) || SCHEMA_ONE.contains(&k) => {
                for (i, sub) in list.iter_mut().enumerate() {
                    f(Step::Index(k, i), sub);
                }
            }
            _ if SCHEMA_ONE.contains(&k) => f(Step::Keyword(k), v),
            _ => {}
        }
    }
}

/// Calls `f(pointer, schema)` on `schema` and every subschema below it, parents first, for the
/// schema objects only (boolean schemas have nothing to visit). `pointer` is escaped and relative
/// to `schema` (`""` for `schema` itself, `/properties/a/items` below).
pub fn walk(schema: &Value, f: &mut dyn FnMut(&str, &Value)) {
    fn go(node: &Value, pointer: &mut String, f: &mut dyn FnMut(&str, &Value)) {
        if !node.is_object() {
            return;
        }
        f(pointer, node);
        for_each_child(node, &mut |step, child| {
            let len = pointer.len();
            step.push_to(pointer);
            go(child, pointer, f);
            pointer.truncate(len);
        });
    }
    go(schema, &mut String::new(), f);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn visits_subschemas_with_pointers() {
        let s = json!({
            "type": "object",
            "properties": {"a/b": {"type": "array", "items": {"type": "string"}}, "default": {"enum": [{"type": "x"}]}},
            "definitions": {"D": {"not": {"type": "null"}}},
            "$defs": {"E": {"items": [{"type": "integer"}, true]}},
            "anyOf": [{"type": "object"}],
            "default": {"type": "object"},
            "enum": [{"properties": {}}]
        });
        let mut seen = Vec::new();
        walk(&s, &mut |p, _| seen.push(p.to_string()));
        assert_eq!(
            seen,
            [
                "",
                "/properties/a~1b",
                "/properties/a~1b/items",
                "/properties/default",
                "/definitions/D",
                "/definitions/D/not",
                "/$defs/E",
                "/$defs/E/items/0",
                "/anyOf/0",
            ]
        );
    }

    #[test]
    fn mutable_children_match_the_immutable_ones() {
        let mut s = json!({"properties": {"a": {}}, "items": {}, "oneOf": [{}, {}], "not": true});
        let mut seen = Vec::new();
        for_each_child(&s, &mut |step, _| seen.push(format!("{step:?}")));
        let mut seen_mut = Vec::new();
        for_each_child_mut(&mut s, &mut |step, v| {
            seen_mut.push(format!("{step:?}"));
            *v = json!({"x": 1});
        });
        assert_eq!(seen, seen_mut);
        assert_eq!(seen.len(), 5);
        assert_eq!(s["oneOf"][1], json!({"x": 1}));
        assert_eq!(s["not"], json!({"x": 1}));
    }
}
