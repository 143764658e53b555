//! A names lockfile (`--lock FILE`, JSON or YAML): once a tool name is published it stays the
//! same across spec versions.
//!
//! ```yaml
//! version: 1
//! operations:
//!   getPet:                       # operationId, or `METHOD path` when there is none
//!     name: petstore_get_pet
//!     method: GET
//!     path: /pets/{petId}
//!   GET /legacy:
//!     name: petstore_legacy
//!     method: GET
//!     path: /legacy
//!     removed: true               # gone from the spec; the name is still never reused
//! ```
//!
//! Applying a lock to a converted [`ToolSet`] (a post-pass, after the overrides): an operation
//! found in the lock (by identity, else by method + path, so a renamed operationId keeps its
//! name) gets its locked name; a new operation keeps the name the rules gave it unless that name
//! is locked to another operation, in which case it gets a stable hashed variant. [`Lock::updated`]
//! makes the lock for the resulting tool set, keeping removed operations marked `removed`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::diag::{FileError, PassFile};
use openapi_mcp_toolset::model::{HttpMethod, ToolDef, ToolSet};
use openapi_mcp_toolset::naming::NameAllocator;

/// A lock entry that is not valid, or a lock file that cannot be read (`lock file FILE: KEY:
/// message`).
pub type LockError = FileError;

/// One published name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockEntry {
    pub name: String,
    pub method: HttpMethod,
    pub path: String,
    /// The operation is no longer in the (converted) spec.
    pub removed: bool,
}

/// The lock: operation identity -> published name, sorted by identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lock {
    pub file: String,
    pub entries: BTreeMap<String, LockEntry>,
}

/// What applying a lock changed or found out of date (drift).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockReport {
    /// Operations found in the lock.
    pub kept: usize,
    /// (identity, name the rules gave, locked name) where they differ.
    pub pinned: Vec<(String, String, String)>,
    /// Operations not in the lock: (identity, name).
    pub added: Vec<(String, String)>,
    /// (identity, name) of lock entries whose operation is gone (not yet marked removed).
    pub removed: Vec<(String, String)>,
    /// Entries marked removed whose operation is back.
    pub restored: Vec<(String, String)>,
    /// (old identity, new identity): found by method + path under another operationId.
    pub rekeyed: Vec<(String, String)>,
    /// (identity, wanted, given): new operations whose name was locked to another operation.
    pub moved: Vec<(String, String, String)>,
}

impl LockReport {
    /// Whether the lock no longer describes the tool set exactly.
    pub fn drift(&self) -> bool {
        !(self.added.is_empty()
            && self.removed.is_empty()
            && self.restored.is_empty()
            && self.rekeyed.is_empty())
    }

    /// One line per kind of drift (empty when there is none).
    pub fn drift_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let list = |v: &[(String, String)]| {
            v.iter()
                .map(|(id, n)| format!("{id} ({n})"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.added.is_empty() {
            out.push(format!(
                "{} operations not in the lock: {}",
                self.added.len(),
                list(&self.added)
            ));
        }
        if !self.removed.is_empty() {
            out.push(format!(
                "{} locked operations are gone from the spec: {}",
                self.removed.len(),
                list(&self.removed)
            ));
        }
        if !self.restored.is_empty() {
            out.push(format!(
                "{} operations marked removed are back: {}",
                self.restored.len(),
                list(&self.restored)
            ));
        }
        for (old, new) in &self.rekeyed {
            out.push(format!(
                "operation `{old}` is now `{new}` (same method and path)"
            ));
        }
        out
    }
}

/// The identity of each tool's operation: its operationId, or `METHOD path` when it has none
/// (or when an earlier tool already has the same operationId).
pub fn identities(set: &ToolSet) -> Vec<String> {
    let mut seen = HashSet::new();
    set.tools
        .iter()
        .map(|t| {
            let id = match &t.operation_id {
                Some(id) if !id.is_empty() && !seen.contains(id.as_str()) => id.clone(),
                _ => method_path(t.route.method, &t.route.path),
            };
            seen.insert(id.clone());
            id
        })
        .collect()
}

fn method_path(method: HttpMethod, path: &str) -> String {
    format!("{} {}", method.as_str(), path)
}

/// A published tool name: `[a-z0-9_]`, 1..=max_len characters.
pub fn valid_name(name: &str, max_len: usize) -> bool {
    !name.is_empty()
        && name.len() <= max_len
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

impl Lock {
    pub fn empty(file: &str) -> Self {
        Lock {
            file: file.to_string(),
            entries: BTreeMap::new(),
        }
    }

    /// Parses a lock file (JSON or YAML) and checks every entry (names valid for `max_len`,
    /// no name locked to two operations).
    pub fn parse(file: &str, text: &str, max_len: usize) -> Result<Self, LockError> {
        let err = |key: &str, message: String| FileError::new(PassFile::Lock, file, key, message);
        let doc: Value = serde_yaml_ng::from_str(text)
            .map_err(|e| err("", format!("not valid YAML or JSON: {e}")))?;
        let Value::Object(root) = doc else {
            return Err(err(
                "",
                "expected a mapping with `version` and `operations`".into(),
            ));
        };
        for k in root.keys() {
            if k != "version" && k != "operations" {
                return Err(err(
                    k,
                    "unknown key (expected `version`, `operations`)".into(),
                ));
            }
        }
        match root.get("version") {
            Some(v) if v.as_u64() == Some(1) => {}
            Some(v) => {
                return Err(err(
                    "version",
                    format!("unsupported version {v} (expected 1)"),
                ));
            }
            None => return Err(err("version", "missing (expected 1)".into())),
        }
        let ops = match root.get("operations") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(err("operations", "expected a mapping".into())),
        };
        let mut entries = BTreeMap::new();
        let mut owners: HashMap<String, String> = HashMap::new();
        for (id, v) in ops {
            let base = format!("operations.{id}");
            if id.trim().is_empty() {
                return Err(err(&base, "empty operation identity".into()));
            }
            let Value::Object(e) = v else {
                return Err(err(
                    &base,
                    "expected a mapping with `name`, `method`, `path`".into(),
                ));
            };
            for k in e.keys() {
                if !matches!(k.as_str(), "name" | "method" | "path" | "removed") {
                    return Err(err(
                        &format!("{base}.{k}"),
                        "unknown key (expected `name`, `method`, `path`, `removed`)".into(),
                    ));
                }
            }
            let string = |k: &str| -> Result<String, LockError> {
                match e.get(k) {
                    Some(Value::String(s)) => Ok(s.clone()),
                    Some(_) => Err(err(&format!("{base}.{k}"), "expected a string".into())),
                    None => Err(err(&format!("{base}.{k}"), "missing".into())),
                }
            };
            let name = string("name")?;
            if !valid_name(&name, max_len) {
                return Err(err(
                    &format!("{base}.name"),
                    format!(
                        "`{name}` is not a valid tool name ([a-z0-9_], 1 to {max_len} characters)"
                    ),
                ));
            }
            let m = string("method")?;
            let method = HttpMethod::parse(&m).ok_or_else(|| {
                err(
                    &format!("{base}.method"),
                    format!("unknown HTTP method `{m}`"),
                )
            })?;
            let path = string("path")?;
            if !path.starts_with('/') {
                return Err(err(
                    &format!("{base}.path"),
                    format!("`{path}` is not a path (must start with `/`)"),
                ));
            }
            let removed = match e.get("removed") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => {
                    return Err(err(
                        &format!("{base}.removed"),
                        "expected true or false".into(),
                    ));
                }
            };
            if let Some(other) = owners.insert(name.clone(), id.clone()) {
                return Err(err(
                    &format!("{base}.name"),
                    format!("`{name}` is also locked to operation `{other}`"),
                ));
            }
            entries.insert(
                id,
                LockEntry {
                    name,
                    method,
                    path,
                    removed,
                },
            );
        }
        Ok(Lock {
            file: file.to_string(),
            entries,
        })
    }

    /// Renames the tools of `set` as the lock says (see the module docs). Fails when a locked
    /// name would be rejected by the set's client profile.
    pub fn apply(
        &self,
        set: &mut ToolSet,
        opts: &crate::ToolOptions,
    ) -> Result<LockReport, LockError> {
        let mut report = LockReport::default();
        let ids = identities(set);
        let matched = self.matches(set, &ids);
        let locked: HashSet<&str> = self.entries.values().map(|e| e.name.as_str()).collect();
        let max_len = opts.max_name_len.clamp(16, 128);
        let mut used_entries = HashSet::new();
        // Locked names first.
        for (i, m) in matched.iter().enumerate() {
            let Some(key) = m else { continue };
            used_entries.insert(key.clone());
            let entry = &self.entries[key];
            report.kept += 1;
            if *key != ids[i] {
                report.rekeyed.push((key.clone(), ids[i].clone()));
            }
            if entry.removed {
                report.restored.push((ids[i].clone(), entry.name.clone()));
            }
            let current = set.tools[i].name().to_string();
            if current != entry.name {
                if let Some(p) = crate::profile::name_problem(set, &opts.client, &entry.name) {
                    return Err(FileError::new(
                        PassFile::Lock,
                        &self.file,
                        format!("operations.{key}.name"),
                        format!(
                            "`{}` would be rejected by --client {}: {p}",
                            entry.name,
                            opts.client.client.as_str()
                        ),
                    ));
                }
                report
                    .pinned
                    .push((ids[i].clone(), current, entry.name.clone()));
                rename(&mut set.tools[i], &entry.name);
            }
        }
        // New operations: keep their names unless locked to another operation (or now taken).
        let mut taken: HashSet<String> = locked.iter().map(|s| s.to_string()).collect();
        for (i, m) in matched.iter().enumerate() {
            if m.is_some() {
                taken.insert(set.tools[i].name().to_string());
            }
        }
        let mut alloc = NameAllocator::new("", max_len);
        for n in &taken {
            alloc.reserve(n);
        }
        for (i, m) in matched.iter().enumerate() {
            if m.is_some() {
                continue;
            }
            let wanted = set.tools[i].name().to_string();
            if taken.contains(&wanted) {
                let given = alloc.allocate(&wanted, &ids[i]);
                report
                    .moved
                    .push((ids[i].clone(), wanted.clone(), given.clone()));
                rename(&mut set.tools[i], &given);
                taken.insert(given);
            } else {
                alloc.reserve(&wanted);
                taken.insert(wanted);
            }
            report
                .added
                .push((ids[i].clone(), set.tools[i].name().to_string()));
        }
        for (key, e) in &self.entries {
            if !used_entries.contains(key) && !e.removed {
                report.removed.push((key.clone(), e.name.clone()));
            }
        }
        Ok(report)
    }

    /// For each tool, the key of its lock entry: by identity first, then by method + path among
    /// the entries no tool matched by identity.
    fn matches(&self, set: &ToolSet, ids: &[String]) -> Vec<Option<String>> {
        let mut out: Vec<Option<String>> = vec![None; ids.len()];
        let mut used: HashSet<&str> = HashSet::new();
        for (i, id) in ids.iter().enumerate() {
            if self.entries.contains_key(id) && used.insert(id.as_str()) {
                out[i] = Some(id.clone());
            }
        }
        let by_route: HashMap<(HttpMethod, &str), Vec<&String>> =
            self.entries.iter().fold(HashMap::new(), |mut m, (k, e)| {
                m.entry((e.method, e.path.as_str())).or_default().push(k);
                m
            });
        for (i, t) in set.tools.iter().enumerate() {
            if out[i].is_some() {
                continue;
            }
            let Some(keys) = by_route.get(&(t.route.method, t.route.path.as_str())) else {
                continue;
            };
            if let Some(k) = keys.iter().find(|k| !used.contains(k.as_str())) {
                used.insert(k.as_str());
                out[i] = Some((*k).clone());
            }
        }
        out
    }

    /// The lock describing `set` (after [`Lock::apply`]): every tool under its identity, and
    /// every entry of this lock whose operation is gone, marked removed.
    pub fn updated(&self, set: &ToolSet) -> Lock {
        let ids = identities(set);
        let matched = self.matches(set, &ids);
        let mut entries = BTreeMap::new();
        for (i, t) in set.tools.iter().enumerate() {
            entries.insert(
                ids[i].clone(),
                LockEntry {
                    name: t.name().to_string(),
                    method: t.route.method,
                    path: t.route.path.clone(),
                    removed: false,
                },
            );
        }
        let used: HashSet<&String> = matched.iter().flatten().collect();
        let names: HashSet<String> = entries.values().map(|e| e.name.clone()).collect();
        for (key, e) in &self.entries {
            if used.contains(key) || entries.contains_key(key) || names.contains(&e.name) {
                continue;
            }
            let mut e = e.clone();
            e.removed = true;
            entries.insert(key.clone(), e);
        }
        Lock {
            file: self.file.clone(),
            entries,
        }
    }

    /// Checks that every name can be written (and read back): a tool renamed by `--overrides`
    /// or a client profile to a name outside `[a-z0-9_]` cannot be locked.
    pub fn check_writable(&self, max_len: usize) -> Result<(), LockError> {
        for (id, e) in &self.entries {
            if !valid_name(&e.name, max_len) {
                return Err(FileError::new(
                    PassFile::Lock,
                    &self.file,
                    format!("operations.{id}.name"),
                    format!(
                        "the tool name `{}` cannot be locked ([a-z0-9_], 1 to {max_len} characters); rename it with --overrides",
                        e.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The lock file text: YAML when the file name ends in `.yaml`/`.yml`, JSON otherwise;
    /// sorted by identity, so the same lock always gives the same bytes.
    pub fn to_text(&self) -> String {
        let mut ops = Map::new();
        for (id, e) in &self.entries {
            let mut m = Map::new();
            m.insert("name".into(), Value::String(e.name.clone()));
            m.insert("method".into(), Value::String(e.method.as_str().into()));
            m.insert("path".into(), Value::String(e.path.clone()));
            if e.removed {
                m.insert("removed".into(), Value::Bool(true));
            }
            ops.insert(id.clone(), Value::Object(m));
        }
        let mut root = Map::new();
        root.insert("version".into(), Value::from(1));
        root.insert("operations".into(), Value::Object(ops));
        let root = Value::Object(root);
        let lower = self.file.to_ascii_lowercase();
        if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            let head = "# openapi-mcp names lock: operation -> published tool name. Keep it in version control.\n";
            match serde_yaml_ng::to_string(&root) {
                Ok(s) => format!("{head}{s}"),
                // Serializing a JSON value to YAML cannot fail; fall back to JSON (valid YAML).
                Err(_) => format!("{head}{root:#}\n"),
            }
        } else {
            format!("{root:#}\n")
        }
    }
}

fn rename(def: &mut Arc<ToolDef>, name: &str) {
    let mut d: ToolDef = def.as_ref().clone();
    d.head_mut().set_name(name.to_string());
    *def = Arc::new(d);
}

#[cfg(test)]
mod tests {
    use super::*;
    use openapi_mcp_toolset::model::Route;

    fn tool(name: &str, op: Option<&str>, method: HttpMethod, path: &str) -> Arc<ToolDef> {
        let mut t = rmcp::model::Tool::default();
        t.name = name.to_string().into();
        Arc::new(ToolDef::new(
            t,
            Route::new(method, path),
            op.map(str::to_string),
            Vec::new(),
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
            security_schemes: Vec::new(),
            tools,
        }
    }

    fn names(s: &ToolSet) -> Vec<String> {
        s.tools.iter().map(|t| t.name().to_string()).collect()
    }

    fn opts() -> crate::ToolOptions {
        crate::ToolOptions::default()
    }

    #[test]
    fn round_trip_and_keep_names() {
        let v1 = set(vec![
            tool("p_get_pet", Some("getPet"), HttpMethod::Get, "/pets/{id}"),
            tool("p_list", None, HttpMethod::Get, "/pets"),
        ]);
        let lock = Lock::empty("names.json").updated(&v1);
        let text = lock.to_text();
        assert!(
            text.contains("\"getPet\"") && text.contains("\"GET /pets\""),
            "{text}"
        );
        let parsed = Lock::parse("names.json", &text, 64).expect("parses");
        assert_eq!(parsed, lock);
        // v2: operationId renamed, naming rules changed, one op removed, one added.
        let mut v2 = set(vec![
            tool(
                "p_fetch_pet",
                Some("fetchPet"),
                HttpMethod::Get,
                "/pets/{id}",
            ),
            tool("p_get_pet", Some("createPet"), HttpMethod::Post, "/pets"),
        ]);
        let r = parsed.apply(&mut v2, &opts()).expect("applies");
        let n = names(&v2);
        assert_eq!(n[0], "p_get_pet", "renamed operationId keeps its name");
        assert_ne!(
            n[1], "p_get_pet",
            "a locked name is never given to another operation"
        );
        assert!(n[1].starts_with("p_get_pet_"), "{n:?}");
        assert_eq!(r.rekeyed, vec![("getPet".into(), "fetchPet".into())]);
        assert_eq!(r.removed, vec![("GET /pets".into(), "p_list".into())]);
        assert_eq!(r.added.len(), 1);
        assert!(r.drift());
        let next = parsed.updated(&v2);
        assert!(next.entries["GET /pets"].removed);
        assert_eq!(next.entries["fetchPet"].name, "p_get_pet");
        assert!(!next.entries.contains_key("getPet"));
        // Applying the updated lock again changes nothing and reports no drift.
        let mut again = set(vec![
            tool(
                "p_fetch_pet",
                Some("fetchPet"),
                HttpMethod::Get,
                "/pets/{id}",
            ),
            tool("p_get_pet", Some("createPet"), HttpMethod::Post, "/pets"),
        ]);
        let r2 = next.apply(&mut again, &opts()).expect("applies");
        assert_eq!(names(&again), n);
        assert!(!r2.drift(), "{r2:?}");
        // The removed operation comes back with its old name.
        let mut back = set(vec![tool("p_list_pets", None, HttpMethod::Get, "/pets")]);
        let r3 = next.apply(&mut back, &opts()).expect("applies");
        assert_eq!(names(&back), vec!["p_list"]);
        assert_eq!(r3.restored.len(), 1);
    }

    #[test]
    fn yaml_is_deterministic() {
        let s = set(vec![
            tool("b", Some("zeta"), HttpMethod::Get, "/z"),
            tool("a", Some("alpha"), HttpMethod::Get, "/a"),
        ]);
        let l = Lock::empty("x.yaml").updated(&s);
        let t = l.to_text();
        assert_eq!(t, Lock::parse("x.yaml", &t, 64).expect("parses").to_text());
        let a = t.find("alpha").unwrap_or(usize::MAX);
        let z = t.find("zeta").unwrap_or(0);
        assert!(a < z, "{t}");
    }

    #[test]
    fn invalid_entries_are_errors_naming_file_and_entry() {
        let bad = |text: &str| {
            Lock::parse("l.yaml", text, 20)
                .expect_err("must fail")
                .to_string()
        };
        let e = bad("version: 1\noperations:\n  getPet: {name: Get-Pet, method: GET, path: /p}\n");
        assert!(
            e.contains("l.yaml") && e.contains("operations.getPet.name"),
            "{e}"
        );
        let e = bad(&format!(
            "version: 1\noperations:\n  a: {{name: {}, method: GET, path: /p}}\n",
            "x".repeat(21)
        ));
        assert!(e.contains("operations.a.name") && e.contains("20"), "{e}");
        let e = bad(
            "version: 1\noperations:\n  a: {name: x, method: GET, path: /p}\n  b: {name: x, method: GET, path: /q}\n",
        );
        assert!(e.contains("operations.b.name") && e.contains("`a`"), "{e}");
        let e = bad("version: 1\noperations:\n  a: {name: x, method: FETCH, path: /p}\n");
        assert!(e.contains("operations.a.method"), "{e}");
        let l = Lock::empty("w.json").updated(&set(vec![tool(
            "pets.list",
            Some("l"),
            HttpMethod::Get,
            "/p",
        )]));
        let e = l.check_writable(64).expect_err("dot in name").to_string();
        assert!(
            e.contains("w.json") && e.contains("operations.l.name"),
            "{e}"
        );
        let e = bad("version: 2\n");
        assert!(e.contains("version"), "{e}");
        let e = bad("version: 1\noperations:\n  a: {name: x, method: GET, path: /p, extra: 1}\n");
        assert!(e.contains("operations.a.extra"), "{e}");
    }
}
