//! Rust identifiers from spec names: heck casing, keyword `_` suffix (typify's
//! `accept_as_ident`), leading digits prefixed, and per-scope de-duplication with `_2`, `_3`...

use std::collections::HashSet;

use heck::{ToSnakeCase, ToUpperCamelCase};

use crate::CodegenError;

/// Strict and reserved keywords of every edition, plus the path keywords (`self`, `Self`,
/// `super`, `crate`) that cannot be raw identifiers either, plus Windows device names (module
/// names become file names).
const RESERVED: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "union", "con", "prn",
    "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8", "com9", "lpt1",
    "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Keeps `[A-Za-z0-9]`, turning everything else into word separators for heck.
fn words(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect()
}

/// A `snake_case` identifier; `fallback` when nothing usable is left.
pub fn snake_ident(s: &str, fallback: &str) -> String {
    let mut id = words(s).to_snake_case();
    if id.is_empty() {
        id = fallback.to_string();
    }
    accept(id, "_")
}

/// An `UpperCamelCase` identifier; `fallback` when nothing usable is left.
pub fn camel_ident(s: &str, fallback: &str) -> String {
    let mut id = words(s).to_upper_camel_case();
    if id.is_empty() {
        id = fallback.to_string();
    }
    accept(id, "T")
}

fn accept(mut id: String, digit_prefix: &str) -> String {
    if id.starts_with(|c: char| c.is_ascii_digit()) {
        id.insert_str(0, digit_prefix);
    }
    if RESERVED.contains(&id.as_str()) {
        id.push('_');
    }
    id
}

/// Hands out names unique within one scope, in call order (deterministic).
#[derive(Default)]
pub struct Scope {
    taken: HashSet<String>,
}

impl Scope {
    /// A scope where `reserved` are already taken.
    pub fn with_reserved(reserved: &[&str]) -> Self {
        Self {
            taken: reserved.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Whether `name` is still free.
    pub fn is_free(&self, name: &str) -> bool {
        !self.taken.contains(name)
    }

    /// Like [`Scope::claim`] for `UpperCamelCase` names: `Name2`, `Name3`... (`Name_2` would trip
    /// `non_camel_case_types`), or `T1_2` after a digit.
    pub fn claim_camel(&mut self, base: String) -> String {
        if self.taken.insert(base.clone()) {
            return base;
        }
        let sep = if base.ends_with(|c: char| c.is_ascii_digit()) {
            "_"
        } else {
            ""
        };
        (2..)
            .map(|n| format!("{base}{sep}{n}"))
            .find(|c| self.taken.insert(c.clone()))
            .unwrap_or(base)
    }

    pub fn claim(&mut self, base: String) -> String {
        if self.taken.insert(base.clone()) {
            return base;
        }
        let sep = if base.ends_with('_') { "" } else { "_" };
        (2..)
            .map(|n| format!("{base}{sep}{n}"))
            .find(|c| self.taken.insert(c.clone()))
            .unwrap_or(base)
    }
}

/// Cargo package names we emit: `[A-Za-z][A-Za-z0-9_-]*`, not a keyword.
pub fn check_crate_name(name: &str) -> Result<(), CodegenError> {
    let ok = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && name.len() <= 64
        && !RESERVED.contains(&name.replace('-', "_").as_str())
        && !["std", "core", "alloc", "proc_macro", "test"]
            .contains(&name.replace('-', "_").as_str());
    if ok {
        Ok(())
    } else {
        Err(CodegenError::InvalidCrateName {
            name: name.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idents() {
        assert_eq!(snake_ident("petId", "arg"), "pet_id");
        assert_eq!(snake_ident("type", "arg"), "type_");
        assert_eq!(snake_ident("self", "arg"), "self_");
        assert_eq!(snake_ident("$", "arg"), "arg");
        assert_eq!(snake_ident("2fa-code", "arg"), "_2fa_code");
        assert_eq!(snake_ident("filter[name]", "arg"), "filter_name");
        assert_eq!(snake_ident("Con", "m"), "con_");
        assert_eq!(camel_ident("list_pets", "Tool"), "ListPets");
        assert_eq!(camel_ident("3d-secure", "Tool"), "T3dSecure");
        assert_eq!(camel_ident("self", "Tool"), "Self_");
        assert_eq!(camel_ident("", "Tool"), "Tool");
    }

    #[test]
    fn scopes_dedupe() {
        let mut s = Scope::with_reserved(&["dispatch"]);
        assert_eq!(s.claim("a".into()), "a");
        assert_eq!(s.claim("a".into()), "a_2");
        assert_eq!(s.claim("a_2".into()), "a_2_2");
        assert_eq!(s.claim("type_".into()), "type_");
        assert_eq!(s.claim("type_".into()), "type_2");
        assert_eq!(s.claim("dispatch".into()), "dispatch_2");
        assert_eq!(s.claim_camel("Pet".into()), "Pet");
        assert_eq!(s.claim_camel("Pet".into()), "Pet2");
        assert_eq!(s.claim_camel("Pet2".into()), "Pet2_2");
        assert_eq!(s.claim_camel("T1".into()), "T1");
        assert_eq!(s.claim_camel("T1".into()), "T1_2");
    }
}
