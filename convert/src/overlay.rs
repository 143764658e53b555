//! OpenAPI Overlay 1.0.x (`--overlay FILE`): a document of `actions`, each a `target` (an
//! RFC 9535 JSONPath selecting nodes of the spec) with an `update` merged into every selected
//! node or `remove: true` deleting them, applied in order to the spec's root document before it
//! is loaded and converted ([`crate::load::load_edited`]).
//!
//! The rules (Overlay 1.0.0, with the merge its 1.1 text spells out):
//!
//! - an `update` of an object target must be an object; it is merged recursively: a member only
//!   in the update is added, objects in both are merged, arrays in both are concatenated, and
//!   anything else is replaced by the update's value;
//! - an `update` of an array target is appended to it (an array update is concatenated, as
//!   Speakeasy's and openapi-overlays-js do);
//! - a target that selects a string, number, boolean or null is an error (select its parent);
//! - `remove: true` removes every selected node from its parent (the root cannot be removed);
//!   `remove` wins over `update`;
//! - an action whose target selects nothing is a warning naming the file and `/actions/N`.
//!
//! Budgets, as the overlay and the spec are both input: the overlay file goes through the
//! loader's size cap and parser; a target is at most [`MAX_TARGET_LEN`] bytes with at most
//! [`MAX_DESCENDANTS`] descendant segments (`..`: each multiplies the nodes visited by the
//! document's depth); an action selects at most [`MAX_MATCHES`] nodes; the nodes written by all
//! updates together are at most [`MAX_WRITTEN`]; and the descendant searches of all actions
//! together visit at most [`MAX_VISITED`] nodes (each `..` of a target counts the document's
//! size: many actions over a large spec each walk all of it). The RFC's `match()` and `search()` functions
//! are left out (the engine is built without them): it compiles their regular expression again
//! for every node a filter visits, work that grows with the document and the pattern both.

use std::fmt;
use std::path::Path;

use openapi_mcp_toolset::Location;
use serde_json::{Map, Value};
use serde_json_path::JsonPath;

use crate::diag::Diagnostics;

/// The longest `target`, in bytes (it bounds the regular expressions of `match()`/`search()`).
pub const MAX_TARGET_LEN: usize = 1024;
/// Descendant segments (`..`) allowed in one target, filters included.
pub const MAX_DESCENDANTS: usize = 2;
/// Nodes one action may select.
pub const MAX_MATCHES: usize = 200_000;
/// Nodes all the updates of a run may write (an update's size times the nodes it is merged
/// into, summed). A merged member costs ~170 bytes of memory (an object's entry, its key, its
/// value): 2 M is ~340 MB at most (20 M, the limit before the fuzz target, let one overlay of
/// 50 kB take 1.4 GB and run out of the fuzzer's 2 GB: a 4,000-member update at 2,000 operations).
pub const MAX_WRITTEN: usize = 2_000_000;
/// Bytes of text (strings and member names) all the updates of a run may write, counted like
/// [`MAX_WRITTEN`] (a node counts its text: a long string merged at many places is large
/// while it is one node).
pub const MAX_WRITTEN_BYTES: usize = 64 << 20;
/// How deep an update may make the document: its levels of objects and arrays, the root's
/// included, counting the target's level plus one plus the update's. The JSON parser refuses
/// more than 127 levels when the overlaid spec is read again, and a document grown deeper by
/// update after update would be walked recursively (queries, serialisation) before that.
pub const MAX_DEPTH: usize = 128;
/// The product of the selectors of every bracketed segment of a target (`[*,*]` counts 2;
/// filters included): a union of `k` selectors selects up to `k` times the nodes, and
/// consecutive unions multiply, before any count of the matches can stop them.
pub const MAX_UNION_FACTOR: usize = 64;

/// A problem with an overlay: its file and the JSON pointer inside it (`/actions/2/target`;
/// empty for the whole file).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct OverlayError {
    pub file: String,
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for OverlayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "overlay {}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "overlay {}#{}: {}",
                self.file, self.pointer, self.message
            )
        }
    }
}

/// One parsed overlay document.
#[derive(Clone, Debug)]
pub struct Overlay {
    /// Its name in messages (the path as given).
    pub file: String,
    /// `info.title`.
    pub title: String,
    actions: Vec<Action>,
}

#[derive(Clone, Debug)]
struct Action {
    target_text: String,
    /// Its descendant segments (`..`).
    descendants: usize,
    /// The product of its unions' selectors ([`MAX_UNION_FACTOR`]).
    factor: usize,
    target: JsonPath,
    update: Option<Value>,
    remove: bool,
}

/// Nodes the descendant searches (`..`) and unions of all the actions of a run may visit: the
/// document's size for a target's first `..`, times its depth for the second, times the
/// selectors of its unions. The engine builds each visited node's path: a few microseconds per
/// node under the fuzzer's sanitizer (over 500 M, the limit before the fuzz target, took minutes).
pub const MAX_VISITED: usize = 50_000_000;

/// Counts what a run of overlays has done against [`MAX_WRITTEN`] and [`MAX_VISITED`].
#[derive(Debug)]
pub struct Budget {
    written: usize,
    written_bytes: usize,
    visited: usize,
    max_visited: usize,
    /// The document's size in nodes (counted once, then grown by what the updates write).
    doc_nodes: usize,
    /// The document's depth (measured once, then grown by what the updates write).
    doc_depth: usize,
}

impl Budget {
    /// The budget of a run over `doc`.
    pub fn new(doc: &Value) -> Budget {
        let (doc_nodes, _, doc_depth) = measure(doc);
        Budget {
            written: 0,
            written_bytes: 0,
            visited: 0,
            max_visited: MAX_VISITED,
            doc_nodes,
            doc_depth,
        }
    }

    /// Counts what `action`'s descendant searches (`..`) and unions visit: the first `..`
    /// visits the document, each further one the document again below every node (its depth),
    /// each union multiplies.
    fn charge_search(&mut self, action: &Action) -> Result<(), (&'static str, String)> {
        if action.descendants == 0 && action.factor <= 1 {
            return Ok(());
        }
        let depth = self.doc_depth.max(1);
        let mut cost = self
            .doc_nodes
            .saturating_mul(action.descendants.max(1))
            .saturating_mul(action.factor);
        for _ in 1..action.descendants {
            cost = cost.saturating_mul(depth);
        }
        self.visited = self.visited.saturating_add(cost);
        if self.visited > self.max_visited {
            return Err((
                "/target",
                format!(
                    "the descendant searches (`..`) and unions of the actions so far visit more than the limit of {} nodes of this document",
                    self.max_visited
                ),
            ));
        }
        Ok(())
    }

    /// Counts `update` written at `n` matches, before the first is written; returns the
    /// update's depth.
    fn charge_update(&mut self, update: &Value, n: usize) -> Result<usize, (&'static str, String)> {
        let (size, text, update_depth) = measure(update);
        self.written = self.written.saturating_add(size.saturating_mul(n));
        self.written_bytes = self.written_bytes.saturating_add(text.saturating_mul(n));
        self.doc_nodes = self.doc_nodes.saturating_add(size.saturating_mul(n));
        if self.written > MAX_WRITTEN {
            return Err((
                "/update",
                format!("the updates write more than the limit of {MAX_WRITTEN} nodes"),
            ));
        }
        if self.written_bytes > MAX_WRITTEN_BYTES {
            return Err((
                "/update",
                format!(
                    "the updates write more than the limit of {MAX_WRITTEN_BYTES} bytes of text (strings and member names)"
                ),
            ));
        }
        Ok(update_depth)
    }
}

impl Overlay {
    /// Reads and parses an overlay file of at most `max_bytes` (the spec's own cap).
    pub fn read(path: &Path, max_bytes: u64) -> Result<Overlay, OverlayError> {
        let file = path.display().to_string();
        let bytes = crate::load::read_local(path, max_bytes).map_err(|e| OverlayError {
            file: file.clone(),
            pointer: String::new(),
            message: format!("cannot read: {e}"),
        })?;
        Overlay::parse(&file, &bytes)
    }

    /// Parses an overlay document (JSON or YAML, as the loader reads specs).
    pub fn parse(file: &str, bytes: &[u8]) -> Result<Overlay, OverlayError> {
        let err = |pointer: &str, message: String| OverlayError {
            file: file.to_string(),
            pointer: pointer.to_string(),
            message,
        };
        let doc = crate::load::parse_document(bytes)
            .map_err(|e| err("", format!("not valid JSON or YAML: {e}")))?
            .to_value();
        let Value::Object(root) = doc else {
            return Err(err(
                "",
                "not an Overlay document: expected an object".into(),
            ));
        };
        let version = match root.get("overlay") {
            Some(Value::String(v)) => v.as_str(),
            Some(_) => {
                return Err(err(
                    "/overlay",
                    "expected a string such as \"1.0.0\"".into(),
                ));
            }
            None => {
                return Err(err(
                    "",
                    "not an Overlay document: no `overlay` version (expected `overlay: 1.0.0`)"
                        .into(),
                ));
            }
        };
        if !is_1_0(version) {
            return Err(err(
                "/overlay",
                format!("unsupported Overlay version {version:?} (supported: 1.0.x)"),
            ));
        }
        let title = match root.get("info") {
            Some(Value::Object(info)) => {
                for key in ["title", "version"] {
                    if !matches!(info.get(key), Some(Value::String(_))) {
                        return Err(err(
                            &format!("/info/{key}"),
                            "required, a string".to_string(),
                        ));
                    }
                }
                info["title"].as_str().unwrap_or_default().to_string()
            }
            _ => {
                return Err(err(
                    "/info",
                    "required, an object with title and version".into(),
                ));
            }
        };
        if let Some(ext) = root.get("extends")
            && !ext.is_string()
        {
            return Err(err("/extends", "expected a URI string".into()));
        }
        let actions = match root.get("actions") {
            Some(Value::Array(a)) if !a.is_empty() => a,
            _ => {
                return Err(err(
                    "/actions",
                    "required, an array of at least one action".into(),
                ));
            }
        };
        let actions = actions
            .iter()
            .enumerate()
            .map(|(i, a)| parse_action(a).map_err(|(at, m)| err(&format!("/actions/{i}{at}"), m)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Overlay {
            file: file.to_string(),
            title,
            actions,
        })
    }

    /// Applies the actions in order to `doc`; an action whose target selects nothing is a
    /// warning in `diags`, located in the overlay file.
    pub fn apply(
        &self,
        doc: &mut Value,
        budget: &mut Budget,
        diags: &mut Diagnostics,
    ) -> Result<(), OverlayError> {
        for (i, action) in self.actions.iter().enumerate() {
            let err = |(at, message): (&str, String)| OverlayError {
                file: self.file.clone(),
                pointer: format!("/actions/{i}{at}"),
                message,
            };
            budget.charge_search(action).map_err(err)?;
            // Counted first (references only): a located node carries its whole path.
            let count = action.target.query(doc).len();
            if count > MAX_MATCHES {
                return Err(err((
                    "/target",
                    format!("selects {count} nodes, more than the limit of {MAX_MATCHES}"),
                )));
            }
            let mut paths = located_paths(action, doc);
            if paths.is_empty() {
                diags.warning(
                    Location::new(self.file.as_str(), format!("/actions/{i}")),
                    format!("target `{}` selects nothing", one_line(&action.target_text)),
                );
                continue;
            }
            if action.remove {
                remove_paths(doc, &mut paths).map_err(err)?;
                continue;
            }
            let Some(update) = &action.update else {
                // Neither update nor remove: nothing to do (the specification allows it).
                continue;
            };
            let update_depth = budget.charge_update(update, paths.len()).map_err(err)?;
            for path in &paths {
                update_at(doc, path, update, update_depth, budget).map_err(err)?;
            }
        }
        Ok(())
    }

    /// Applies `overlays` in order to `doc`, returning the warnings.
    pub fn apply_all(overlays: &[Overlay], doc: &mut Value) -> Result<Diagnostics, OverlayError> {
        let mut diags = Diagnostics::default();
        let mut budget = Budget::new(doc);
        for o in overlays {
            o.apply(doc, &mut budget, &mut diags)?;
        }
        Ok(diags)
    }
}

/// `1.0.x`, as the Overlay 1.0 JSON Schema's `^1\.0\.\d+$`.
fn is_1_0(v: &str) -> bool {
    v.strip_prefix("1.0.")
        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn parse_action(a: &Value) -> Result<Action, (&'static str, String)> {
    let Value::Object(a) = a else {
        return Err(("", "an action must be an object".into()));
    };
    let target_text = match a.get("target") {
        Some(Value::String(t)) => t.clone(),
        Some(_) => return Err(("/target", "expected a JSONPath string".into())),
        None => return Err(("/target", "required (a JSONPath such as `$.paths`)".into())),
    };
    if target_text.len() > MAX_TARGET_LEN {
        return Err((
            "/target",
            format!("longer than the limit of {MAX_TARGET_LEN} bytes"),
        ));
    }
    let Shape {
        descendants,
        factor,
        absolute,
    } = shape(&target_text);
    if descendants > MAX_DESCENDANTS {
        return Err((
            "/target",
            format!(
                "{descendants} descendant segments (`..`), more than the limit of {MAX_DESCENDANTS}"
            ),
        ));
    }
    if factor > MAX_UNION_FACTOR {
        return Err((
            "/target",
            format!(
                "its unions multiply to {factor} selectors (the product of the selectors of each bracketed segment), more than the limit of {MAX_UNION_FACTOR}"
            ),
        ));
    }
    if let Some(q) = absolute {
        return Err((
            "/target",
            format!(
                "the absolute query `{q}` in a filter is not supported: it is evaluated again for every node the filter tests (only a singular query such as `$.info.version` is)"
            ),
        ));
    }
    let target = JsonPath::parse(&target_text).map_err(|e| {
        // The shorthand `.name` takes letters, digits and `_` only: `.x-foo` is the most
        // common mistake (the Overlay 1.0.0 text's own examples make it).
        let hint = if target_text.contains("match(") || target_text.contains("search(") {
            " (match() and search() are not supported: the JSONPath engine compiles their regular expression again for every node it visits, which no budget bounds)"
        } else if target_text.contains('-') {
            " (a member name with `-` needs brackets: `['x-name']`, not `.x-name`)"
        } else {
            ""
        };
        ("/target", format!("invalid JSONPath (RFC 9535): {e}{hint}"))
    })?;
    let remove = match a.get("remove") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(("/remove", "expected true or false".into())),
    };
    if let Some(d) = a.get("description")
        && !d.is_string()
    {
        return Err(("/description", "expected a string".into()));
    }
    Ok(Action {
        descendants,
        factor,
        target_text,
        target,
        update: a.get("update").cloned(),
        remove,
    })
}

/// A target's text as messages show it: on one line (control characters escaped, as a target
/// may hold a newline), at most 200 characters.
fn one_line(text: &str) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == 200 {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// What a target's text says of its cost, read outside string literals.
#[derive(Debug, PartialEq)]
struct Shape {
    /// Descendant segments (`..`).
    descendants: usize,
    /// The product of the selectors of each bracketed segment (1 + its top-level commas).
    factor: usize,
    /// The first absolute query inside a filter that is not singular (`$..x`, `$.*`,
    /// `$.a[?...]`, `$.a[0:2]`), as written.
    absolute: Option<String>,
}

fn shape(target: &str) -> Shape {
    let b = target.as_bytes();
    let (mut descendants, mut factor, mut absolute) = (0usize, 1usize, None);
    // Per open bracket or parenthesis: the selectors counted so far (brackets only).
    let mut open: Vec<(u8, usize)> = Vec::new();
    let (mut i, mut quote) = (0, None::<u8>);
    while i < b.len() {
        match (quote, b[i]) {
            (Some(_), b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, c @ (b'\'' | b'"')) => quote = Some(c),
            (None, b'.') if b.get(i + 1) == Some(&b'.') => {
                descendants += 1;
                i += 1;
            }
            (None, c @ (b'[' | b'(')) => open.push((c, 1)),
            (None, b']' | b')') => {
                if let Some((b'[', n)) = open.pop() {
                    factor = factor.saturating_mul(n);
                }
            }
            (None, b',') => {
                if let Some((b'[', n)) = open.last_mut() {
                    *n += 1;
                }
            }
            // `$` is only ever the root identifier (not a shorthand name character): past the
            // first byte it starts an absolute query inside a filter.
            (None, b'$') if i > 0 && absolute.is_none() => {
                let end = singular_end(b, i + 1);
                if let Err(end) = end {
                    let end = end.min(b.len()).max(i + 1);
                    absolute = Some(one_line(&String::from_utf8_lossy(&b[i..end])));
                }
            }
            _ => {}
        }
        i += 1;
    }
    Shape {
        descendants,
        factor,
        absolute,
    }
}

/// Reads the segments of a query from `i` (just past its `$`): `Ok(end)` when they are all
/// singular (`.name`, `['name']`, `[index]`), else `Err(position)` of the first that is not.
fn singular_end(b: &[u8], mut i: usize) -> Result<usize, usize> {
    loop {
        while b.get(i).is_some_and(|c| *c == b' ') && matches!(b.get(i + 1), Some(b'.' | b'[')) {
            i += 1;
        }
        match b.get(i) {
            Some(b'.') => match b.get(i + 1) {
                Some(b'.' | b'*') => return Err(i + 2),
                _ => {
                    i += 1;
                    while b
                        .get(i)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80)
                    {
                        i += 1;
                    }
                }
            },
            Some(b'[') => {
                i += 1;
                while b.get(i) == Some(&b' ') {
                    i += 1;
                }
                match b.get(i) {
                    Some(q @ (b'\'' | b'"')) => {
                        let q = *q;
                        i += 1;
                        while let Some(c) = b.get(i) {
                            if *c == b'\\' {
                                i += 1;
                            } else if *c == q {
                                break;
                            }
                            i += 1;
                        }
                        i += 1;
                    }
                    Some(c) if c.is_ascii_digit() || *c == b'-' => {
                        i += 1;
                        while b.get(i).is_some_and(u8::is_ascii_digit) {
                            i += 1;
                        }
                    }
                    _ => return Err(i + 1),
                }
                while b.get(i) == Some(&b' ') {
                    i += 1;
                }
                if b.get(i) != Some(&b']') {
                    return Err(i + 1);
                }
                i += 1;
            }
            _ => return Ok(i),
        }
    }
}

/// One step of a located node's path (owned: the document is changed between lookups).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Key(String),
    Index(usize),
}

/// The paths of the nodes `action`'s target selects in `doc`.
fn located_paths(action: &Action, doc: &Value) -> Vec<Vec<Step>> {
    action
        .target
        .query_located(doc)
        .iter()
        .map(|n| {
            n.location()
                .iter()
                .map(|e| match e {
                    serde_json_path::PathElement::Name(k) => Step::Key(k.to_string()),
                    serde_json_path::PathElement::Index(i) => Step::Index(*i),
                })
                .collect()
        })
        .collect()
}

/// Removes the nodes at `paths`: deepest and last first, so removing an array item does not
/// move the items still to remove, and a node inside one already removed is skipped.
fn remove_paths(doc: &mut Value, paths: &mut Vec<Vec<Step>>) -> Result<(), (&'static str, String)> {
    paths.sort();
    paths.dedup();
    for path in paths.iter().rev() {
        let Some((last, parent)) = path.split_last() else {
            return Err((
                "/target",
                "selects the document root, which cannot be removed".into(),
            ));
        };
        match (navigate(doc, parent), last) {
            (Some(Value::Object(m)), Step::Key(k)) => {
                m.shift_remove(k);
            }
            (Some(Value::Array(a)), Step::Index(i)) if *i < a.len() => {
                a.remove(*i);
            }
            _ => {}
        }
    }
    Ok(())
}

/// Merges `update` (`update_depth` levels deep) into the node at `path`: an object into an
/// object, an array's items or any other value appended to an array.
fn update_at(
    doc: &mut Value,
    path: &[Step],
    update: &Value,
    update_depth: usize,
    budget: &mut Budget,
) -> Result<(), (&'static str, String)> {
    // The target is `path.len() + 1` levels deep; an item appended to an array goes one
    // level below it (one more than a merge needs: counted for both).
    let depth = path.len() + 1 + update_depth;
    if depth > MAX_DEPTH {
        return Err((
            "/update",
            format!(
                "would make the document {depth} levels deep at {}, more than the limit of {MAX_DEPTH}",
                pointer(path)
            ),
        ));
    }
    budget.doc_depth = budget.doc_depth.max(depth);
    let Some(node) = navigate(doc, path) else {
        return Ok(());
    };
    match (node, update) {
        (Value::Object(target), Value::Object(u)) => merge_object(target, u),
        (Value::Object(_), other) => {
            return Err((
                "/update",
                format!(
                    "the target selects an object at {}: the update must be an object, not {}",
                    pointer(path),
                    kind(other)
                ),
            ));
        }
        (Value::Array(target), Value::Array(u)) => target.extend(u.iter().cloned()),
        (Value::Array(target), other) => target.push(other.clone()),
        (other, _) => {
            return Err((
                "/target",
                format!(
                    "selects {} at {}: an update needs an object or array (select its parent object and update the member)",
                    kind(other),
                    pointer(path)
                ),
            ));
        }
    }
    Ok(())
}

fn navigate<'v>(mut v: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    for step in path {
        v = match (v, step) {
            (Value::Object(m), Step::Key(k)) => m.get_mut(k)?,
            (Value::Array(a), Step::Index(i)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

/// The recursive merge: objects merge, arrays concatenate, anything else is replaced.
fn merge_object(target: &mut Map<String, Value>, update: &Map<String, Value>) {
    for (k, u) in update {
        match (target.get_mut(k), u) {
            (Some(Value::Object(t)), Value::Object(u)) => merge_object(t, u),
            (Some(Value::Array(t)), Value::Array(u)) => t.extend(u.iter().cloned()),
            (Some(t), u) => *t = u.clone(),
            (None, u) => {
                target.insert(k.clone(), u.clone());
            }
        }
    }
}

/// A value's nodes, the bytes of its text (strings and member names) and its depth (a scalar
/// is 0 deep, `{}` and `{"a": 1}` 1), without recursion.
fn measure(v: &Value) -> (usize, usize, usize) {
    let (mut nodes, mut text, mut depth) = (0usize, 0usize, 0usize);
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        nodes += 1;
        match v {
            Value::Array(a) => {
                depth = depth.max(d + 1);
                stack.extend(a.iter().map(|x| (x, d + 1)));
            }
            Value::Object(m) => {
                depth = depth.max(d + 1);
                text = text.saturating_add(m.keys().map(String::len).sum());
                stack.extend(m.values().map(|x| (x, d + 1)));
            }
            Value::String(s) => text = text.saturating_add(s.len()),
            _ => {}
        }
    }
    (nodes, text, depth)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A path as a JSON pointer of the spec, for messages.
fn pointer(path: &[Step]) -> String {
    if path.is_empty() {
        return "the root".into();
    }
    let mut s = String::new();
    for step in path {
        s.push('/');
        match step {
            Step::Key(k) => s.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Step::Index(i) => s.push_str(&i.to_string()),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The pets API the Overlay 1.0.0 specification's examples are written against.
    fn spec() -> Value {
        json!({
            "openapi": "3.1.0",
            "info": {"title": "Pets", "version": "1"},
            "tags": [{"name": "pets"}],
            "paths": {
                "/pets": {
                    "get": {
                        "operationId": "listPets",
                        "summary": "List pets",
                        "x-oai-traits": ["paged"],
                        "parameters": [
                            {"name": "dummy", "in": "query"},
                            {"name": "kind", "in": "query"}
                        ],
                        "responses": {"200": {"description": "ok"}}
                    },
                    "post": {"operationId": "addPet", "responses": {"201": {"description": "ok"}}}
                },
                "/pets/{id}": {
                    "get": {"operationId": "getPet", "parameters": [{"name": "dummy", "in": "query"}], "responses": {"200": {"description": "ok"}}}
                }
            }
        })
    }

    fn overlay(actions: &str) -> Overlay {
        let text = format!("overlay: 1.0.0\ninfo: {{title: t, version: '1'}}\nactions:\n{actions}");
        Overlay::parse("o.yaml", text.as_bytes()).unwrap()
    }

    fn apply(o: &Overlay, doc: &mut Value) -> Diagnostics {
        Overlay::apply_all(std::slice::from_ref(o), doc).unwrap()
    }

    fn parse_err(text: &str) -> String {
        Overlay::parse("o.yaml", text.as_bytes())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn structured_overlay_merges_into_the_root() {
        // The specification's "structured overlay": one update at `$`.
        let o = overlay(
            "- target: '$'\n  update:\n    info: {x-overlay-applied: structured}\n    paths:\n      /pets:\n        get: {description: All the pets}\n",
        );
        let mut doc = spec();
        assert!(apply(&o, &mut doc).is_empty());
        assert_eq!(doc["info"]["x-overlay-applied"], "structured");
        assert_eq!(
            doc["info"]["title"], "Pets",
            "members only in the target stay"
        );
        assert_eq!(doc["paths"]["/pets"]["get"]["description"], "All the pets");
        assert_eq!(doc["paths"]["/pets"]["get"]["operationId"], "listPets");
    }

    #[test]
    fn targeted_and_wildcard_overlays() {
        let o = overlay(
            "- target: $.paths['/pets'].get\n  update: {description: Targeted, summary: Replaced}\n- target: $.paths.*.get\n  update: {x-safe: true}\n",
        );
        let mut doc = spec();
        apply(&o, &mut doc);
        let get = &doc["paths"]["/pets"]["get"];
        assert_eq!(get["description"], "Targeted");
        assert_eq!(get["summary"], "Replaced", "a primitive is replaced");
        assert_eq!(doc["paths"]["/pets"]["get"]["x-safe"], true);
        assert_eq!(doc["paths"]["/pets/{id}"]["get"]["x-safe"], true);
        assert!(doc["paths"]["/pets"]["post"].get("x-safe").is_none());
    }

    #[test]
    fn array_modification_removes_matching_items() {
        // The specification's "array modification": remove a parameter by a filter.
        let o = overlay("- target: $.paths.*.get.parameters[?@.name == 'dummy']\n  remove: true\n");
        let mut doc = spec();
        apply(&o, &mut doc);
        assert_eq!(
            doc["paths"]["/pets"]["get"]["parameters"],
            json!([{"name": "kind", "in": "query"}])
        );
        assert_eq!(doc["paths"]["/pets/{id}"]["get"]["parameters"], json!([]));
    }

    #[test]
    fn traits_update_the_operations_a_filter_selects() {
        // The specification's "traits" example, in RFC 9535 syntax: a member name with `-`
        // needs brackets (`@.x-oai-traits` is not a JSONPath, and the error says so).
        let e = parse_err(
            "overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions: [{target: '$.paths.*[?@.x-oai-traits]'}]\n",
        );
        assert!(
            e.contains("#/actions/0/target: invalid JSONPath") && e.contains("['x-name']"),
            "{e}"
        );
        let o = overlay(
            "- target: $.paths[?@.get['x-oai-traits'][?@ == 'paged']].get\n  update:\n    parameters:\n      - {name: top, in: query}\n",
        );
        let mut doc = spec();
        assert!(apply(&o, &mut doc).is_empty());
        let names: Vec<_> = doc["paths"]["/pets"]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["dummy", "kind", "top"], "arrays are concatenated");
        assert_eq!(
            doc["paths"]["/pets/{id}"]["get"]["parameters"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn an_update_of_an_array_appends_and_members_merge_recursively() {
        let o = overlay(
            "- target: $.tags\n  update: {name: snacks}\n- target: $.tags\n  update: [{name: a}, {name: b}]\n- target: $.paths['/pets'].get\n  update: {responses: {'200': {x-a: 1}, '404': {description: gone}}}\n",
        );
        let mut doc = spec();
        apply(&o, &mut doc);
        assert_eq!(
            doc["tags"],
            json!([{"name": "pets"}, {"name": "snacks"}, {"name": "a"}, {"name": "b"}])
        );
        assert_eq!(
            doc["paths"]["/pets"]["get"]["responses"],
            json!({"200": {"description": "ok", "x-a": 1}, "404": {"description": "gone"}})
        );
    }

    #[test]
    fn remove_keeps_member_order_and_handles_nested_and_indexed_matches() {
        let o = overlay(
            "- target: $.paths['/pets'].get.summary\n  remove: false\n- target: $.paths['/pets'].get['summary','x-oai-traits']\n  remove: true\n- target: $..parameters[0,1]\n  remove: true\n- target: $..[?@.operationId == 'addPet']\n  remove: true\n",
        );
        let mut doc = spec();
        apply(&o, &mut doc);
        let keys: Vec<_> = doc["paths"]["/pets"]["get"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["operationId", "parameters", "responses"]);
        assert_eq!(doc["paths"]["/pets"]["get"]["parameters"], json!([]));
        assert!(doc["paths"]["/pets"].get("post").is_none());
        // A match inside another removed by the same action.
        let o = overlay("- target: $..[?@.operationId]\n  remove: true\n");
        let mut doc = spec();
        apply(&o, &mut doc);
        assert_eq!(doc["paths"], json!({"/pets": {}, "/pets/{id}": {}}));
    }

    #[test]
    fn a_target_selecting_nothing_is_a_warning_naming_the_action() {
        let o = overlay(
            "- target: $.info\n  update: {x-a: 1}\n- target: $.paths['/nope']\n  remove: true\n",
        );
        let mut doc = spec();
        let diags = apply(&o, &mut doc).into_sorted();
        assert_eq!(diags.len(), 1);
        assert_eq!(
            diags[0].to_string(),
            "warning: o.yaml#/actions/1: target `$.paths['/nope']` selects nothing"
        );
        assert_eq!(doc["info"]["x-a"], 1);
    }

    #[test]
    fn overlays_apply_in_order_each_to_the_previous_result() {
        let a = overlay("- target: $.info\n  update: {title: First}\n");
        let b = overlay("- target: $.info[?@ == 'First']\n  remove: true\n");
        let mut doc = spec();
        let diags = Overlay::apply_all(&[a, b], &mut doc).unwrap();
        assert!(diags.is_empty());
        assert!(doc["info"].get("title").is_none());
    }

    #[test]
    fn documents_that_are_not_overlay_1_0_are_refused_with_their_place() {
        let head = "overlay: 1.0.0\ninfo: {title: t, version: '1'}\n";
        for (text, want) in [
            (
                "openapi: 3.0.0\n",
                "overlay o.yaml: not an Overlay document: no `overlay` version",
            ),
            (
                "overlay: 1.1.0\ninfo: {title: t, version: '1'}\nactions: [{target: $}]\n",
                "overlay o.yaml#/overlay: unsupported Overlay version \"1.1.0\"",
            ),
            (
                "overlay: 1.0.0\nactions: [{target: $}]\n",
                "overlay o.yaml#/info: required",
            ),
            (
                "overlay: 1.0.0\ninfo: {title: t}\nactions: [{target: $}]\n",
                "overlay o.yaml#/info/version: required",
            ),
            (
                &format!("{head}actions: []\n"),
                "overlay o.yaml#/actions: required, an array of at least one action",
            ),
            (
                &format!("{head}actions: [{{update: {{}}}}]\n"),
                "overlay o.yaml#/actions/0/target: required",
            ),
            (
                &format!("{head}actions:\n- {{target: $.info}}\n- {{target: £}}\n"),
                "overlay o.yaml#/actions/1/target: invalid JSONPath (RFC 9535)",
            ),
            (
                &format!("{head}actions: [{{target: $.info, remove: yes please}}]\n"),
                "overlay o.yaml#/actions/0/remove: expected true or false",
            ),
            ("[1, 2", "overlay o.yaml: not valid JSON or YAML"),
        ] {
            let got = parse_err(text);
            assert!(got.starts_with(want), "{text:?}: {got}");
        }
    }

    #[test]
    fn updates_that_do_not_fit_their_target_are_errors_naming_the_action() {
        let mut doc = spec();
        let o = overlay("- target: $.info.title\n  update: {a: 1}\n");
        let e = Overlay::apply_all(&[o], &mut doc).unwrap_err().to_string();
        assert_eq!(
            e,
            "overlay o.yaml#/actions/0/target: selects a string at /info/title: an update needs an object or array (select its parent object and update the member)"
        );
        let o = overlay("- target: $.info\n  update: new title\n");
        let e = Overlay::apply_all(&[o], &mut doc).unwrap_err().to_string();
        assert!(e.starts_with("overlay o.yaml#/actions/0/update: the target selects an object at /info: the update must be an object, not a string"), "{e}");
        let o = overlay("- target: $\n  remove: true\n");
        let e = Overlay::apply_all(&[o], &mut doc).unwrap_err().to_string();
        assert!(
            e.contains("/actions/0/target: selects the document root"),
            "{e}"
        );
    }

    #[test]
    fn budgets_bound_the_targets_and_the_work() {
        let head = "overlay: 1.0.0\ninfo: {title: t, version: '1'}\n";
        let e = parse_err(&format!("{head}actions: [{{target: '$..a..b..c'}}]\n"));
        assert!(
            e.contains("#/actions/0/target: 3 descendant segments"),
            "{e}"
        );
        // `..` inside a string literal is not a segment.
        overlay("- target: \"$..[?@.a == '..'].b..c\"\n  remove: true\n");
        let e = parse_err(&format!(
            "{head}actions: [{{target: \"$.paths.*[?search(@.operationId, 'list')]\"}}]\n"
        ));
        assert!(
            e.contains("#/actions/0/target: invalid JSONPath")
                && e.contains("search() are not supported"),
            "{e}"
        );
        // The other functions are there.
        overlay("- target: \"$.paths[?length(@.get.parameters) > 1]\"\n  remove: true\n");
        let long = format!("$.{}", "a".repeat(MAX_TARGET_LEN));
        let e = parse_err(&format!("{head}actions: [{{target: '{long}'}}]\n"));
        assert!(e.contains("longer than the limit"), "{e}");
        // More matches than the limit.
        let mut doc = json!({"a": vec![0; MAX_MATCHES + 1]});
        let o = overlay("- target: $.a[*]\n  remove: true\n");
        let e = Overlay::apply_all(&[o], &mut doc).unwrap_err().to_string();
        assert!(
            e.contains("#/actions/0/target: selects 200001 nodes"),
            "{e}"
        );
        // Updates that would write more than the limit: 100k objects x a 201-node update.
        let mut doc = json!({"a": vec![json!({}); 100_000]});
        let big: Vec<String> = (0..200).map(|i| format!("k{i}: 1")).collect();
        let o = overlay(&format!(
            "- target: $.a[*]\n  update: {{{}}}\n",
            big.join(", ")
        ));
        let e = Overlay::apply_all(&[o], &mut doc).unwrap_err().to_string();
        assert!(
            e.contains("#/actions/0/update: the updates write more than the limit"),
            "{e}"
        );
        // Descendant searches: each `..` counts the document's size.
        let mut doc = spec();
        let mut budget = Budget::new(&doc);
        budget.max_visited = budget.doc_nodes * 3 - 1;
        let o = overlay(
            "- target: $..summary\n  remove: true\n- target: $..a\n  remove: true\n- target: $.info\n  update: {x: 1}\n- target: $..c\n  remove: true\n",
        );
        let e = o
            .apply(&mut doc, &mut budget, &mut Diagnostics::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("#/actions/3/target: the descendant searches"),
            "{e}"
        );
        assert_eq!(doc["info"]["x"], 1, "the actions before it were applied");
    }

    /// #39 fuzz target `overlay`: unions multiplied the matches (`$[*,*,...]` four times over a
    /// large spec: 10^8 nodes listed, out of memory) before MAX_MATCHES could count them.
    #[test]
    fn unions_are_bounded_before_any_match_is_listed() {
        let head = "overlay: 1.0.0\ninfo: {title: t, version: '1'}\n";
        let stars = ["*"; 10].join(",");
        let e = parse_err(&format!(
            "{head}actions: [{{target: '$[{stars}][{stars}]', remove: true}}]\n"
        ));
        assert!(
            e.contains("#/actions/0/target: its unions multiply to 100 selectors"),
            "{e}"
        );
        // Inside a filter too (evaluated at every node).
        let e = parse_err(&format!(
            "{head}actions: [{{target: '$..[?@[{stars}][{stars}]]', remove: true}}]\n"
        ));
        assert!(e.contains("multiply to 100"), "{e}");
        // Unions of names stay usable, and a comma in a string is not a selector.
        let o = overlay(
            "- target: \"$.paths['/pets','/pets/{id}']['get','post']\"\n  update: {x: 1}\n- target: \"$.paths[?@.get.summary != 'a,b,c']\"\n  update: {x: 2}\n",
        );
        let mut doc = spec();
        apply(&o, &mut doc);
        assert_eq!(doc["paths"]["/pets/{id}"]["get"]["x"], 1);
        // A union is charged to the search budget as many times as it has selectors.
        let mut doc = spec();
        let mut budget = Budget::new(&doc);
        budget.max_visited = budget.doc_nodes * 3;
        let o = overlay("- target: $[*,*,*,*]\n  remove: true\n");
        let e = o
            .apply(&mut doc, &mut budget, &mut Diagnostics::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("#/actions/0/target: the descendant searches"),
            "{e}"
        );
    }

    /// #39 fuzz target `overlay`: an absolute query in a filter (`$..[?$..*]`) is evaluated
    /// again at every node the filter tests: the document's size squared (over 100 s on a
    /// 30k-node spec), charged as two searches.
    #[test]
    fn absolute_queries_in_filters_must_be_singular() {
        let head = "overlay: 1.0.0\ninfo: {title: t, version: '1'}\n";
        for (target, shown) in [
            ("$..[?$..*]", "$.."),
            ("$.paths.*[?count($.*) > 1]", "$.*"),
            ("$.a[?$.b[?@]]", "$.b[?"),
            ("$.a[?$['b'][0:2]]", "$['b'][0:"),
            ("$.a[?$.b[*]]", "$.b[*"),
            ("$.a[?@.x == 1 || $ .. x]", "$ .."),
        ] {
            let e = parse_err(&format!(
                "{head}actions: [{{target: \"{target}\", remove: true}}]\n"
            ));
            assert!(
                e.contains(&format!("#/actions/0/target: the absolute query `{shown}")),
                "{target}: {e}"
            );
        }
        // Singular absolute queries are cheap (a lookup per node) and stay.
        let o = overlay(
            "- target: \"$.paths.*[?@.operationId == $.paths['/pets'].get.operationId]\"\n  update: {x-first: true}\n- target: \"$.tags[?@.name == $.tags[0].name && $.info.title == 'Pets']\"\n  update: {x-t: 1}\n",
        );
        let mut doc = spec();
        assert!(apply(&o, &mut doc).is_empty());
        assert_eq!(doc["paths"]["/pets"]["get"]["x-first"], true);
        assert_eq!(doc["tags"][0]["x-t"], 1);
        // `$` in a string literal is text.
        overlay("- target: \"$..[?@.summary == '$..*']\"\n  remove: true\n");
    }

    /// #39 fuzz target `overlay`: MAX_WRITTEN counts nodes, and a long string is one node: a
    /// 14 kB description merged at 5,000 places wrote 70 MB (the budget now counts text too,
    /// before writing anything; 60 kB at 5,000 places was 300 MB).
    #[test]
    fn long_strings_count_against_the_text_budget() {
        let mut doc = json!({"a": vec![json!({}); 5000]});
        let o = overlay(&format!(
            "- target: $.a[*]\n  update: {{description: '{}'}}\n",
            "x".repeat(14_000)
        ));
        let e = Overlay::apply_all(&[o], &mut doc).unwrap_err().to_string();
        assert!(
            e.contains("#/actions/0/update: the updates write more than the limit of 67108864 bytes of text"),
            "{e}"
        );
        assert_eq!(doc["a"][0], json!({}), "nothing was written");
    }

    /// #39 fuzz target `overlay`: each update could nest the document deeper (an update 100
    /// deep, merged again at its own deepest node by the next action): past the parser's depth
    /// the spec cannot be read again, and the queries and serialisation of a document grown
    /// without bound recurse that deep.
    #[test]
    fn updates_cannot_grow_the_document_past_the_depth_limit() {
        let nested = format!("{}{{z: 1}}{}", "{n: ".repeat(100), "}".repeat(100));
        let o = overlay(&format!(
            "- target: $..[?@.z == 1]\n  update: {{z: 2, n: {nested}}}\n- target: $..[?@.z == 1]\n  update: {{z: 2, n: {nested}}}\n"
        ));
        let mut doc = json!({"a": {"z": 1}});
        let e = Overlay::apply_all(&[o], &mut doc).unwrap_err().to_string();
        assert!(
            e.contains("#/actions/1/update: would make the document 205 levels deep at /a/n/"),
            "{e}"
        );
        assert_eq!(doc["a"]["z"], 2, "the first action applied (104 deep)");
        // An item appended to an array counts one level below the array (128 levels here:
        // the limit), an object merged into it one more.
        let deep = format!("{}1{}", "[".repeat(121), "]".repeat(121));
        let o = overlay(&format!("- target: $.a.b.c.d.e.f\n  update: {deep}\n"));
        let mut doc = json!({"a": {"b": {"c": {"d": {"e": {"f": []}}}}}});
        Overlay::apply_all(&[o], &mut doc).unwrap();
        let o = overlay(&format!(
            "- target: $.a.b.c.d.e.f\n  update: {{c: {deep}}}\n"
        ));
        let e = Overlay::apply_all(&[o], &mut doc).unwrap_err().to_string();
        assert!(e.contains("129 levels deep"), "{e}");
    }

    /// #39: a second `..` searches below every node the first found (the document's size times
    /// its depth), not the document once more.
    #[test]
    fn a_second_descendant_segment_counts_the_depth() {
        let mut doc = spec();
        let mut budget = Budget::new(&doc);
        budget.max_visited = budget.doc_nodes * 5;
        let o = overlay("- target: $..*..*\n  remove: true\n");
        let e = o
            .apply(&mut doc, &mut budget, &mut Diagnostics::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("#/actions/0/target: the descendant searches"),
            "{e}"
        );
    }

    /// #39 fuzz target `overlay` (artifact oom-9d6e4927...): a 4,000-member update merged at
    /// the 2,000 operations of a spec was 8 M nodes, within the old MAX_WRITTEN of 20 M, and
    /// took 1.4 GB: out of the fuzzer's memory. 1,001 members at 2,000 matches is now over.
    #[test]
    fn written_nodes_are_bounded_by_memory() {
        let mut doc = json!({"a": vec![json!({}); 2000]});
        let members: Vec<String> = (0..1000).map(|i| format!("k{i}: {i}")).collect();
        let o = overlay(&format!(
            "- target: $.a[*]\n  update: {{{}}}\n",
            members.join(", ")
        ));
        let e = Overlay::apply_all(&[o], &mut doc).unwrap_err().to_string();
        assert!(
            e.contains(
                "#/actions/0/update: the updates write more than the limit of 2000000 nodes"
            ),
            "{e}"
        );
        assert_eq!(doc["a"][0], json!({}), "nothing was written");
    }

    /// #39 fuzz target `overlay`: descendant searches visited up to 500 M nodes (minutes); a
    /// `$..a..b` over a 210k-node document 120 deep is ~50 M now, refused before it runs.
    #[test]
    fn descendant_searches_are_bounded_in_time() {
        let mut chain = json!(1);
        for _ in 0..120 {
            chain = json!({ "c": chain });
        }
        let mut doc = json!({"w": vec![0; 210_000], "d": chain});
        let o = overlay("- target: $..a..b\n  remove: true\n");
        let e = Overlay::apply_all(&[o], &mut doc).unwrap_err().to_string();
        assert!(
            e.contains("#/actions/0/target: the descendant searches (`..`) and unions of the actions so far visit more than the limit of 50000000 nodes"),
            "{e}"
        );
    }

    /// #39 fuzz target `overlay` (artifact crash-62a8c368...): a target holding a newline was
    /// quoted as it is, making the error (and the "selects nothing" warning) several lines.
    #[test]
    fn messages_quote_targets_on_one_line() {
        let head = "overlay: 1.0.0\ninfo: {title: t, version: '1'}\n";
        let e = parse_err(&format!(
            "{head}actions: [{{target: \"$.a[?$.paths['/pe\\n  update:\\n\", remove: true}}]\n"
        ));
        assert!(
            !e.contains('\n') && e.contains("`$.paths['/pe\\n  update:\\n`"),
            "{e}"
        );
        let o = overlay("- target: \"$.info\\n['nope']\"\n  remove: true\n");
        let diags = apply(&o, &mut spec()).into_sorted();
        let w = diags[0].to_string();
        assert!(
            !w.contains('\n') && w.contains("`$.info\\n['nope']`"),
            "{w}"
        );
        assert_eq!(one_line(&"x".repeat(300)).len(), 203);
    }
}
