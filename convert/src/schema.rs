//! OpenAPI schema objects (2.0, 3.0, 3.1) -> JSON Schema 2020-12 for MCP tools.
//!
//! Every referenced schema is converted once into a store of named definitions; each tool then
//! carries the closure of the definitions it uses in its own `$defs`, with local `$ref`s, so tool
//! schemas are self-contained. Recursion is kept as `$ref` cycles (never unrolled), and small or
//! single-use non-recursive definitions are inlined back where that is smaller.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::diag::Diagnostics;
use crate::load::{DocumentSet, SpecVersion};
use crate::node::{Node, Obj};
use crate::pointer::Loc;

/// Hash map for the store's internal lookups (locations, definition names): foldhash instead
/// of SipHash. Only ever looked up, never iterated, so the hasher cannot change any output.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Definitions referenced by a converted schema (indices into the store).
pub type Deps = Vec<usize>;

struct Def {
    name: String,
    loc: Loc,
    /// The converted schema as compact JSON text (`None` until converted): as `Value` trees a
    /// large spec's converted definitions take several times their JSON size, next to the
    /// loaded spec at the peak of a conversion. Parsed into `value` when a tool's schema first
    /// needs it.
    text: Option<Arc<str>>,
    value: std::sync::OnceLock<Value>,
    /// Its top level, for inlining it as an output root without parsing it.
    summary: DefSummary,
    deps: Deps,
    /// `approx_size(&value)`, once converted.
    size: usize,
}

/// The converted definitions of a spec: what tool schemas are bundled from. Shared by every
/// tool of a conversion (each bundles its own closure when its schema is first needed).
#[derive(Default)]
pub struct DefTable {
    defs: Vec<Def>,
    /// Definition name -> index (names are unique).
    by_name: FastMap<String, usize>,
    /// Whether each converted definition can reach itself through `$ref`s. A definition's deps
    /// are final once converted and only name definitions that exist by then, so a cycle never
    /// runs through a definition converted by an earlier flush: each flush classifies just the
    /// definitions it added.
    recursive: Vec<bool>,
}

/// Converts schemas, caching each referenced schema once.
pub struct SchemaStore<'a> {
    docs: &'a DocumentSet,
    version: SpecVersion,
    table: DefTable,
    by_loc: FastMap<Loc, usize>,
    /// [`Self::convert_remembered`]'s results by location.
    remembered: FastMap<Loc, (Value, Deps)>,
    /// [`crate::pattern::portable`] by pattern: specs repeat the same few patterns hundreds of
    /// times (Cloudflare: 232 patterns, 33 distinct), and compiling one is not free.
    patterns: FastMap<String, Result<Option<String>, regress::Error>>,
    pending: VecDeque<usize>,
    pub diags: Diagnostics,
}

const TYPE_NAMES: [&str; 7] = [
    "string", "number", "integer", "boolean", "array", "object", "null",
];

impl<'a> SchemaStore<'a> {
    pub fn new(docs: &'a DocumentSet, version: SpecVersion) -> Self {
        Self {
            docs,
            version,
            table: DefTable::default(),
            by_loc: FastMap::default(),
            remembered: FastMap::default(),
            patterns: FastMap::default(),
            pending: VecDeque::new(),
            diags: Diagnostics::default(),
        }
    }

    pub fn docs(&self) -> &'a DocumentSet {
        self.docs
    }

    /// Converts the schema at `loc` (an inline schema, or a `$ref`) and returns it with the
    /// definitions it references. Referenced definitions are converted before returning.
    pub fn convert_at(&mut self, loc: &Loc) -> (Value, Deps) {
        let docs = self.docs;
        let node = docs.get(loc).unwrap_or(Node::NULL);
        self.convert_node(loc, node)
    }

    /// Like [`Self::convert_at`], for a node the caller already holds.
    pub fn convert_node(&mut self, loc: &Loc, node: &Node) -> (Value, Deps) {
        let mut deps = Vec::new();
        let v = self.convert(loc, node, &mut deps);
        self.flush();
        (v, deps)
    }

    /// `convert(self)` for the schema at `loc`, converted once and remembered for the next
    /// caller (parameters shared by many operations). A conversion that reported a problem is not
    /// remembered, so each use reports it as before.
    pub fn convert_remembered(
        &mut self,
        loc: &Loc,
        convert: &dyn Fn(&mut Self) -> (Value, Deps),
    ) -> (Value, Deps) {
        if let Some((v, d)) = self.remembered.get(loc) {
            return (v.clone(), d.clone());
        }
        let before = self.diags.len();
        let (v, d) = convert(self);
        if self.diags.len() == before {
            self.remembered.insert(loc.clone(), (v.clone(), d.clone()));
        }
        (v, d)
    }

    /// Converts every pending definition (iteratively: ref chains never grow the stack).
    fn flush(&mut self) {
        while let Some(i) = self.pending.pop_front() {
            let loc = self.table.defs[i].loc.clone();
            let docs = self.docs;
            let node = docs.get(&loc).unwrap_or(Node::NULL);
            let mut deps = Vec::new();
            let v = self.convert(&loc, node, &mut deps);
            deps.sort_unstable();
            deps.dedup();
            self.table.defs[i].size = approx_size(&v);
            self.table.defs[i].summary = DefSummary::of(&v);
            self.table.defs[i].text = Some(json_text(&v).into());
            self.table.defs[i].deps = deps;
        }
        self.mark_recursive();
    }

    /// Classifies the definitions added since the last call (all converted): recursive when in
    /// a strongly connected component of more than one definition, or referencing itself.
    /// Iterative Tarjan over the new definitions only; their edges to older ones are skipped,
    /// as no cycle goes through those.
    fn mark_recursive(&mut self) {
        let start = self.table.recursive.len();
        let n = self.table.defs.len();
        if start == n {
            return;
        }
        let defs = &self.table.defs;
        let recursive = &mut self.table.recursive;
        recursive.resize(n, false);
        const UNSEEN: usize = usize::MAX;
        let mut index = vec![UNSEEN; n - start];
        let mut low = vec![0usize; n - start];
        let mut on_stack = vec![false; n - start];
        let mut stack: Vec<usize> = Vec::new();
        let mut work: Vec<(usize, usize)> = Vec::new();
        let mut next = 0usize;
        for first in start..n {
            if index[first - start] != UNSEEN {
                continue;
            }
            index[first - start] = next;
            low[first - start] = next;
            next += 1;
            stack.push(first);
            on_stack[first - start] = true;
            work.push((first, 0));
            while let Some(&mut (v, ref mut pos)) = work.last_mut() {
                let ds = &defs[v].deps;
                if *pos < ds.len() {
                    let w = ds[*pos];
                    *pos += 1;
                    if w < start {
                        continue;
                    }
                    if w == v {
                        recursive[v] = true;
                    }
                    if index[w - start] == UNSEEN {
                        index[w - start] = next;
                        low[w - start] = next;
                        next += 1;
                        stack.push(w);
                        on_stack[w - start] = true;
                        work.push((w, 0));
                    } else if on_stack[w - start] {
                        low[v - start] = low[v - start].min(index[w - start]);
                    }
                } else {
                    work.pop();
                    if let Some(&(parent, _)) = work.last() {
                        low[parent - start] = low[parent - start].min(low[v - start]);
                    }
                    if low[v - start] == index[v - start] {
                        let top = stack
                            .iter()
                            .rposition(|&w| w == v)
                            .expect("v is on the stack");
                        let comp = stack.split_off(top);
                        for &w in &comp {
                            on_stack[w - start] = false;
                        }
                        if comp.len() > 1 {
                            for &w in &comp {
                                recursive[w] = true;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Returns the index of the definition for the schema at `target`, scheduling its conversion.
    fn def_for(&mut self, target: Loc) -> usize {
        if let Some(&i) = self.by_loc.get(&target) {
            return i;
        }
        let base = def_base_name(&target, self.docs);
        let mut name = base.clone();
        let mut n = 2;
        while self.table.by_name.contains_key(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        let i = self.table.defs.len();
        self.table.by_name.insert(name.clone(), i);
        self.table.defs.push(Def {
            name,
            loc: target.clone(),
            text: None,
            value: std::sync::OnceLock::new(),
            summary: DefSummary::default(),
            deps: Vec::new(),
            size: 0,
        });
        self.by_loc.insert(target, i);
        self.pending.push_back(i);
        i
    }

    /// Name of definition `i` in `$defs`.
    pub fn def_name(&self, i: usize) -> &str {
        &self.table.defs[i].name
    }

    fn ref_to(&mut self, from: &Loc, reference: &str, deps: &mut Deps) -> Value {
        match self.docs.resolve(from.doc, reference) {
            Ok(target) => {
                let i = self.def_for(target);
                deps.push(i);
                json!({ "$ref": format!("#/$defs/{}", self.table.defs[i].name) })
            }
            Err(e) => {
                self.diags.warning(
                    self.docs.describe(from),
                    format!("{e}; any value is accepted there"),
                );
                json!({})
            }
        }
    }

    /// `pattern` as clients compile it (see [`crate::pattern`]), or `None` (with a warning)
    /// when no equivalent exists: the schema then leaves the check to the API.
    fn portable_pattern(&mut self, loc: &Loc, pattern: &str) -> Option<String> {
        let checked = match self.patterns.get(pattern) {
            Some(c) => c.clone(),
            None => {
                let c = crate::pattern::portable(pattern);
                self.patterns.insert(pattern.to_string(), c.clone());
                c
            }
        };
        match checked {
            Ok(None) => Some(pattern.to_string()),
            Ok(Some(rewritten)) => Some(rewritten),
            Err(e) => {
                self.diags.warning(
                    self.docs.describe(loc),
                    format!(
                        "pattern {pattern:?} is not an ECMA-262 regular expression in Unicode mode ({e}); left out, because MCP clients that compile it would reject the tool (the TypeScript SDK rejects the whole tools/list)"
                    ),
                );
                None
            }
        }
    }

    /// One schema object: its keywords one by one ([`value_keyword`] for those whose value is
    /// data, [`Self::subschema_keyword`] for those holding schemas), then what JSON Schema
    /// needs that OpenAPI leaves implicit (`items` on arrays, `nullable` as a type).
    fn convert(&mut self, loc: &Loc, node: &Node, deps: &mut Deps) -> Value {
        let obj = match (node.as_object(), node.as_bool()) {
            (Some(o), _) => o,
            (None, Some(b)) => return Value::Bool(b),
            (None, None) => return json!({}),
        };
        let mut out = Map::with_capacity(obj.len());
        if let Some(r) = obj.get("$ref").and_then(Node::as_str) {
            let v = self.ref_to(loc, r, deps);
            if let Value::Object(m) = v {
                out.extend(m);
            }
        }
        let nullable = obj.get("nullable").and_then(Node::as_bool).unwrap_or(false)
            || obj
                .get("x-nullable")
                .and_then(Node::as_bool)
                .unwrap_or(false);

        for (k, v) in obj {
            match k {
                "$ref" => {}
                "pattern" => {
                    if let Some(p) = v.as_str()
                        && let Some(p) = self.portable_pattern(&loc.join(k), p)
                    {
                        out.insert(k.to_string(), Value::String(p));
                    }
                }
                "properties"
                | "patternProperties"
                | "dependentSchemas"
                | "additionalProperties"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "additionalItems"
                | "items"
                | "prefixItems"
                | "allOf"
                | "anyOf"
                | "oneOf"
                | "discriminator" => self.subschema_keyword(loc, obj, k, v, &mut out, deps),
                _ => value_keyword(obj, k, v, &mut out),
            }
        }

        // Swagger 2.0 `type: file` -> base64 string.
        if obj.get("type").and_then(Node::as_str) == Some("file") {
            out.insert("type".into(), json!("string"));
            out.insert("contentEncoding".into(), json!("base64"));
        }
        // Every array gets `items`.
        let is_array = match out.get("type") {
            Some(Value::String(t)) => t == "array",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
            _ => false,
        };
        if is_array && !out.contains_key("items") && !out.contains_key("prefixItems") {
            out.insert("items".into(), json!({}));
        }
        if nullable && self.version != SpecVersion::OpenApi31 {
            return make_nullable(out);
        }
        Value::Object(out)
    }

    /// A keyword whose value holds schemas (`properties`, `items`, `allOf`, ...), converted
    /// into `out`; the discriminator's mapping is pointed at the definitions.
    fn subschema_keyword(
        &mut self,
        loc: &Loc,
        obj: Obj<'_>,
        k: &str,
        v: &Node,
        out: &mut Map<String, Value>,
        deps: &mut Deps,
    ) {
        let kl = || loc.join(k);
        match k {
            "properties" | "patternProperties" | "dependentSchemas" => {
                let Some(m) = v.as_object() else {
                    return;
                };
                let docs = self.docs;
                let kl = kl();
                let (ml, m) = match docs.schema_map(&kl, m) {
                    Ok(found) => found,
                    Err(e) => {
                        self.diags
                            .warning(docs.describe(&kl), format!("{e}; no {k} taken from there"));
                        return;
                    }
                };
                let mut props = Map::with_capacity(m.len());
                for (pk, pv) in m {
                    let name = if k == "patternProperties" {
                        match self.portable_pattern(&ml.join(pk), pk) {
                            Some(p) => p,
                            None => continue,
                        }
                    } else {
                        pk.to_string()
                    };
                    props.insert(name, self.convert(&ml.join(pk), pv, deps));
                }
                out.insert(k.to_string(), Value::Object(props));
            }
            "items" => {
                if let Some(a) = v.as_array() {
                    let kl = kl();
                    let items: Vec<Value> = a
                        .iter()
                        .enumerate()
                        .map(|(i, s)| self.convert(&kl.index(i), s, deps))
                        .collect();
                    out.insert("prefixItems".into(), Value::Array(items));
                } else {
                    out.insert("items".into(), self.convert(&kl(), v, deps));
                }
            }
            "prefixItems" | "allOf" | "anyOf" | "oneOf" => {
                let Some(a) = v.as_array() else {
                    return;
                };
                let kl = kl();
                let mut items: Vec<Value> = a
                    .iter()
                    .enumerate()
                    .map(|(i, s)| self.convert(&kl.index(i), s, deps))
                    .collect();
                // A discriminator picks the alternative by the property's value, with
                // `anyOf` as with `oneOf` (DigitalOcean uses both).
                if k == "oneOf" || k == "anyOf" {
                    pin_discriminator(self.docs, loc, obj, a, &mut items);
                }
                if !items.is_empty() {
                    out.insert(k.to_string(), Value::Array(items));
                }
            }
            "discriminator" => {
                if let Some(d) = v.as_object() {
                    let d = self.discriminator(loc, d, deps);
                    out.insert(k.to_string(), Value::Object(d));
                }
            }
            // additionalProperties, unevaluated*, not, if/then/else, contains, propertyNames,
            // additionalItems (as `items`): one schema, or a boolean one.
            _ if (v.is_object() || v.is_boolean()) => {
                let key = if k == "additionalItems" { "items" } else { k };
                if key == "items" && out.contains_key("items") {
                    return;
                }
                out.insert(key.into(), self.convert(&kl(), v, deps));
            }
            _ => {}
        }
    }

    /// A discriminator with its `mapping` pointed at the definitions it names.
    fn discriminator(&mut self, loc: &Loc, d: Obj<'_>, deps: &mut Deps) -> Map<String, Value> {
        let mut d = d.to_map();
        if let Some(Value::Object(mapping)) = d.get_mut("mapping") {
            for (_, target) in mapping.iter_mut() {
                if let Some(t) = target.as_str() {
                    let r = if t.contains('#') || t.contains('/') || t.contains('.') {
                        t.to_string()
                    } else {
                        format!("#/components/schemas/{t}")
                    };
                    if let Ok(tl) = self.docs.resolve(loc.doc, &r) {
                        let i = self.def_for(tl);
                        deps.push(i);
                        *target = Value::String(format!("#/$defs/{}", self.table.defs[i].name));
                    }
                }
            }
        }
        d
    }

    /// The converted definitions, for bundling tool schemas once conversion is over.
    pub fn into_table(self) -> DefTable {
        self.table
    }

    pub fn table(&self) -> &DefTable {
        &self.table
    }
}

/// A keyword whose value is data (annotations, bounds, `enum`, `required`, examples), copied
/// into `out` where JSON Schema 2020-12 takes it; OpenAPI-only and unknown keywords are dropped.
fn value_keyword(obj: Obj<'_>, k: &str, v: &Node, out: &mut Map<String, Value>) {
    match k {
        "type" => {
            if let Some(t) = convert_type(v) {
                out.insert("type".into(), t);
            }
        }
        "title" | "description" | "format" | "contentEncoding" | "contentMediaType"
        | "$comment"
            if v.is_string() =>
        {
            out.insert(k.to_string(), v.to_value());
        }
        "minimum" | "maximum" if v.is_number() => {
            out.insert(k.to_string(), v.to_value());
        }
        "exclusiveMinimum" | "exclusiveMaximum" => {
            if v.is_number() {
                out.insert(k.to_string(), v.to_value());
            } else if v.is_bool(true) {
                let bound = if k == "exclusiveMinimum" {
                    "minimum"
                } else {
                    "maximum"
                };
                if let Some(b) = obj.get(bound).filter(|b| b.is_number()) {
                    out.insert(k.to_string(), b.to_value());
                }
            }
        }
        "multipleOf" if v.as_f64().is_some_and(|f| f > 0.0) => {
            out.insert(k.to_string(), v.to_value());
        }
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties"
        | "minContains" | "maxContains" => {
            if v.is_u64() {
                out.insert(k.to_string(), v.to_value());
            } else if let Some(f) = v.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0) {
                out.insert(k.to_string(), Value::from(f as u64));
            }
        }
        "uniqueItems" | "readOnly" | "writeOnly" | "deprecated" if v.is_boolean() => {
            out.insert(k.to_string(), v.to_value());
        }
        "default" | "const" => {
            out.insert(k.to_string(), v.to_value());
        }
        "enum" if v.is_array() => {
            out.insert(k.to_string(), v.to_value());
        }
        "example" if !obj.contains_key("examples") => {
            let v = v.to_value();
            if !holds_ref(&v) {
                out.insert("examples".into(), Value::Array(vec![v]));
            }
        }
        "examples" => {
            // Example values that hold a `$ref` object (copied from the spec's own references,
            // as in GitHub's deployment protection rules) are dropped: clients that resolve
            // every `$ref` of a tool find them dangling.
            let vals: Vec<Value> = if let Some(a) = v.as_array() {
                a.iter().map(Node::to_value).collect()
            } else if let Some(m) = v.as_object() {
                // 3.0 media-type style `examples: {name: {value}}` misplaced in a schema.
                m.values()
                    .filter_map(|e| e.get("value").map(Node::to_value))
                    .collect()
            } else {
                Vec::new()
            };
            let vals: Vec<Value> = vals.into_iter().filter(|v| !holds_ref(v)).collect();
            if !vals.is_empty() {
                out.insert(k.to_string(), Value::Array(vals));
            }
        }
        "required" => {
            if let Some(a) = v.as_array() {
                let mut seen = HashSet::new();
                let req: Vec<Value> = a
                    .iter()
                    .filter_map(Node::as_str)
                    .filter(|s| seen.insert(*s))
                    .map(|s| Value::String(s.to_string()))
                    .collect();
                if !req.is_empty() {
                    out.insert(k.to_string(), Value::Array(req));
                }
            }
        }
        "dependentRequired" if v.is_object() => {
            out.insert(k.to_string(), v.to_value());
        }
        _ => {} // OpenAPI-only keywords (xml, externalDocs, nullable, x-*) and unknowns.
    }
}

impl Def {
    /// The converted schema, parsed from its text on first use (`true`, any value, before it
    /// is converted: a reference cycle met while converting).
    fn value(&self) -> &Value {
        self.value.get_or_init(|| self.parse())
    }

    fn parse(&self) -> Value {
        self.text.as_deref().map_or(Value::Bool(true), parse_text)
    }
}

/// Compact JSON text of a converted schema, held instead of its `Value` until needed (see
/// [`DefTable`] and `convert::FrozenMap`). Serializing a `Value` cannot fail: map keys are
/// strings.
pub(crate) fn json_text(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_string())
}

/// A schema back from [`json_text`] (`true`, any value, should the text not parse).
pub(crate) fn parse_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Bool(true))
}

/// Whether `v` holds an object with a `$ref` key anywhere (an example value copied from a
/// reference).
fn holds_ref(v: &Value) -> bool {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if m.contains_key("$ref") {
                    return true;
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    false
}

/// How many definitions deep inlining may nest (each level is a few JSON levels: `properties`,
/// the property, `items`, ...); deeper ones stay in `$defs` behind a `$ref`.
const MAX_INLINE_NESTING: usize = 12;

impl DefTable {
    /// Builds a self-contained schema: `root` plus the closure of `deps` in `$defs`, with
    /// small or single-use non-recursive definitions inlined. With `max_depth`, definitions more
    /// than that many `$ref`s away from the root are elided to `{"title": name}` (accepts anything).
    pub fn bundle(
        &self,
        root: Map<String, Value>,
        deps: &[usize],
        max_depth: Option<usize>,
    ) -> Map<String, Value> {
        self.bundle_within(root, deps, max_depth, None)
    }

    /// The deepest `$ref` depth (at most `max_depth`) whose definitions, reached from `deps`,
    /// add up to `budget` bytes or less: `max_depth` itself when all of them fit.
    fn depth_within(
        &self,
        deps: &[usize],
        max_depth: Option<usize>,
        budget: usize,
    ) -> Option<usize> {
        // Sizes by depth of the closure within `max_depth`.
        let mut by_depth: Vec<usize> = Vec::new();
        let mut seen = vec![false; self.defs.len()];
        let mut queue: VecDeque<(usize, usize)> = deps.iter().map(|&d| (d, 1)).collect();
        while let Some((i, depth)) = queue.pop_front() {
            if std::mem::replace(&mut seen[i], true) || max_depth.is_some_and(|m| depth > m) {
                continue;
            }
            if by_depth.len() < depth {
                by_depth.resize(depth, 0);
            }
            by_depth[depth - 1] += self.defs[i].size;
            queue.extend(self.defs[i].deps.iter().map(|&d| (d, depth + 1)));
        }
        if by_depth.iter().sum::<usize>() <= budget {
            return max_depth;
        }
        let mut total = 0;
        let fits = by_depth
            .iter()
            .take_while(|&&b| {
                total += b;
                total <= budget
            })
            .count();
        Some(fits)
    }

    /// [`Self::bundle`], and when the definitions it would carry add up to more than
    /// `max_bytes` (Microsoft Graph's `update_user`: 1,006 definitions, 1.7 MB), only those up
    /// to the deepest `$ref` depth that fits are carried; deeper ones accept any value (small
    /// leaf definitions are still inlined), as beyond `max_depth`.
    pub fn bundle_within(
        &self,
        mut root: Map<String, Value>,
        deps: &[usize],
        mut max_depth: Option<usize>,
        max_bytes: Option<usize>,
    ) -> Map<String, Value> {
        if let Some(budget) = max_bytes {
            max_depth = self.depth_within(deps, max_depth, budget);
        }
        // Closure of referenced definitions, breadth-first with depth.
        let mut closure: Vec<usize> = Vec::new();
        let mut elided: Vec<usize> = Vec::new();
        let mut seen = vec![false; self.defs.len()];
        let mut queue: VecDeque<(usize, usize)> = deps.iter().map(|&d| (d, 1)).collect();
        while let Some((i, depth)) = queue.pop_front() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            if max_depth.is_some_and(|m| depth > m) {
                elided.push(i);
                continue;
            }
            closure.push(i);
            queue.extend(self.defs[i].deps.iter().map(|&d| (d, depth + 1)));
        }
        if closure.is_empty() && elided.is_empty() {
            return root;
        }
        closure.sort_unstable();
        // Position in `closure` of the definition a local `$ref` names, if it is in the closure.
        let position = |name: &str| {
            let &i = self.by_name.get(name)?;
            closure.binary_search(&i).ok()
        };

        // Reference counts (from root and every definition in the closure), by closure position.
        let mut counts = vec![0usize; closure.len()];
        let mut pinned = vec![false; closure.len()];
        let mut count_refs = |m: &Map<String, Value>| {
            visit_refs(
                m,
                &mut |r| {
                    if let Some(p) = position(r) {
                        counts[p] += 1;
                    }
                },
                &mut |r| {
                    if let Some(p) = position(r) {
                        pinned[p] = true;
                    }
                },
            )
        };
        count_refs(&root);
        for &i in &closure {
            if let Value::Object(m) = self.defs[i].value() {
                count_refs(m);
            }
        }

        let in_closure = |i: &usize| closure.binary_search(i).is_ok();
        // Without elided definitions the closure holds every cycle through its members, so the
        // store-wide classification applies; with some, cycles through them do not count.
        let local_recursive = (!elided.is_empty()
            || closure.iter().any(|&i| i >= self.recursive.len()))
        .then(|| recursive_defs(&closure, |i| &self.defs[i].deps));
        let is_recursive = |i: usize| match &local_recursive {
            Some(r) => r.contains(&i),
            None => self.recursive[i],
        };
        let mut inline: Vec<bool> = closure
            .iter()
            .enumerate()
            .map(|(p, &i)| {
                !is_recursive(i)
                    && !pinned[p]
                    && (counts[p] <= 1
                        || (!self.defs[i].deps.iter().any(in_closure) && self.defs[i].size <= 160))
            })
            .collect();
        // Inlined definitions nest inside their referrer: a chain of single-use definitions
        // (700+ in the wild, or an `allOf` chain) would nest that deep, past what validators
        // (stack) and client parsers (depth limits) survive. Past MAX_INLINE_NESTING levels a
        // definition stays in `$defs`, and its own inlined definitions nest from there.
        {
            let mut level = vec![usize::MAX; closure.len()];
            let mut stack: Vec<(usize, usize)> = deps
                .iter()
                .filter_map(|&d| closure.binary_search(&d).ok())
                .map(|p| (p, 1))
                .collect();
            while let Some((p, nest)) = stack.pop() {
                if level[p] != usize::MAX {
                    continue;
                }
                let nest = if inline[p] && nest > MAX_INLINE_NESTING {
                    inline[p] = false;
                    0
                } else if inline[p] {
                    nest
                } else {
                    0
                };
                level[p] = nest;
                for d in &self.defs[closure[p]].deps {
                    if let Ok(q) = closure.binary_search(d) {
                        stack.push((q, nest + 1));
                    }
                }
            }
        }
        // Beyond the depth limit: small leaf definitions are still inlined, others accept anything.
        let stubs: Vec<(usize, Value)> = elided
            .iter()
            .map(|&i| {
                let d = &self.defs[i];
                if d.deps.is_empty() && d.size <= 160 {
                    (i, d.value().clone())
                } else {
                    (i, json!({ "title": d.name }))
                }
            })
            .collect();
        let mut replace: FastMap<&str, &Value> = closure
            .iter()
            .zip(&inline)
            .filter(|&(_, &inl)| inl)
            .map(|(&i, _)| (self.defs[i].name.as_str(), self.defs[i].value()))
            .collect();
        for (i, stub) in &stubs {
            replace.insert(self.defs[*i].name.as_str(), stub);
        }

        let mut defs = Map::new();
        for (&i, &inl) in closure.iter().zip(&inline) {
            if inl {
                continue;
            }
            let mut v = self.defs[i].value().clone();
            substitute(&mut v, &replace);
            defs.insert(self.defs[i].name.clone(), v);
        }
        substitute_children(&mut root, &replace);
        if !defs.is_empty() {
            root.insert("$defs".into(), Value::Object(defs));
        }
        root
    }

    /// The definition a local `$ref` names (to inline a root `$ref`): its index, its top
    /// level, and its text (`true`, any value, if it is not converted yet), which the caller
    /// parses where it is cheap to (the freezing thread).
    pub fn def_by_ref(&self, r: &str) -> Option<(usize, &DefSummary, Arc<str>)> {
        let &i = self.by_name.get(r.strip_prefix("#/$defs/")?)?;
        let d = &self.defs[i];
        let text = d.text.clone().unwrap_or_else(|| Arc::from("true"));
        Some((i, &d.summary, text))
    }

    pub fn def_deps(&self, i: usize) -> &[usize] {
        &self.defs[i].deps
    }
}

/// What inlining a converted schema as an output root needs to know of its top level.
#[derive(Clone, Debug, Default)]
pub struct DefSummary {
    /// An object (not a boolean schema).
    pub is_map: bool,
    /// Its `$ref`.
    pub reference: Option<Box<str>>,
    /// `None` without `type`; whether `type` is the string `"object"` otherwise.
    pub type_object: Option<bool>,
    pub properties: bool,
    pub one_of: bool,
    pub any_of: bool,
}

impl DefSummary {
    pub fn of(v: &Value) -> Self {
        let Value::Object(m) = v else {
            return Self::default();
        };
        Self {
            is_map: true,
            reference: m.get("$ref").and_then(Value::as_str).map(Into::into),
            type_object: m.get("type").map(|t| t == "object"),
            properties: m.contains_key("properties"),
            one_of: m.contains_key("oneOf"),
            any_of: m.contains_key("anyOf"),
        }
    }

    /// The top level of `def` with this map's members other than `$ref` put over it.
    pub fn merged_over(&self, def: &DefSummary) -> Self {
        Self {
            is_map: true,
            reference: def.reference.clone(),
            type_object: self.type_object.or(def.type_object),
            properties: self.properties || def.properties,
            one_of: self.one_of || def.one_of,
            any_of: self.any_of || def.any_of,
        }
    }
}

fn convert_type(v: &Node) -> Option<Value> {
    if let Some(s) = v.as_str() {
        return if TYPE_NAMES.contains(&s) {
            Some(Value::String(s.to_string()))
        } else if s == "file" {
            Some(json!("string"))
        } else {
            None
        };
    }
    match v.as_array() {
        Some(a) => {
            let mut ts: Vec<Value> = Vec::new();
            for t in a.iter().filter_map(Node::as_str) {
                let t = if t == "file" { "string" } else { t };
                if TYPE_NAMES.contains(&t) && !ts.iter().any(|x| x == t) {
                    ts.push(Value::String(t.to_string()));
                }
            }
            match ts.len() {
                0 => None,
                1 => ts.pop(),
                _ => Some(Value::Array(ts)),
            }
        }
        _ => None,
    }
}

/// Adds `null` to what a schema accepts.
pub fn make_nullable(mut out: Map<String, Value>) -> Value {
    if let Some(Value::Array(e)) = out.get_mut("enum")
        && !e.contains(&Value::Null)
    {
        e.push(Value::Null);
    }
    match out.get_mut("type") {
        Some(Value::String(t)) => {
            if t != "null" {
                let t = std::mem::take(t);
                out.insert("type".into(), json!([t, "null"]));
            }
            Value::Object(out)
        }
        Some(Value::Array(ts)) => {
            if !ts.iter().any(|t| t == "null") {
                ts.push(json!("null"));
            }
            Value::Object(out)
        }
        _ => {
            if out.is_empty() {
                return Value::Object(out);
            }
            // No type (a $ref or a composition): wrap, keeping annotations outside.
            let mut wrapper = Map::new();
            for k in [
                "title",
                "description",
                "default",
                "deprecated",
                "readOnly",
                "writeOnly",
                "examples",
            ] {
                if let Some(v) = out.remove(k) {
                    wrapper.insert(k.into(), v);
                }
            }
            wrapper.insert(
                "anyOf".into(),
                json!([Value::Object(out), {"type": "null"}]),
            );
            Value::Object(wrapper)
        }
    }
}

fn def_base_name(loc: &Loc, docs: &DocumentSet) -> String {
    let tokens: Vec<String> = loc.ptr.tokens().collect();
    let raw = match tokens.as_slice() {
        [] => {
            // A whole external file: its file stem.
            let url = &docs.docs[loc.doc].url;
            url.path_segments()
                .and_then(|mut s| s.next_back().map(str::to_string))
                .map(|f| f.split('.').next().unwrap_or_default().to_string())
                .unwrap_or_else(|| "Schema".to_string())
        }
        [.., parent, last]
            if parent == "schemas" || parent == "definitions" || parent == "$defs" =>
        {
            last.clone()
        }
        _ => {
            // Inline schemas reached by a ref into paths etc.: last few meaningful tokens.
            let meaningful: Vec<&str> = tokens
                .iter()
                .map(String::as_str)
                .filter(|t| {
                    !matches!(
                        *t,
                        "schema" | "content" | "properties" | "items" | "components" | "paths"
                    )
                })
                .collect();
            let n = meaningful.len();
            meaningful[n.saturating_sub(2)..].join("_")
        }
    };
    let mut s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        s = "Schema".into();
    }
    if s.len() > 120 {
        // Keep the informative end of long dotted names (`io.k8s....v1.JSONSchemaProps`).
        s = s[s.len() - 120..].to_string();
    }
    s
}

// Which keywords hold subschemas, and the walk over them: the contract's (`toolset::schema_walk`).
use openapi_mcp_toolset::schema_walk::{for_each_child_of, for_each_child_of_mut};

/// OpenAPI picks a `oneOf` alternative by the discriminator property; JSON Schema requires that
/// exactly one alternative validates, which fails for alternatives that differ only in that
/// property's value ("valid under more than one of the schemas": the proxy would refuse valid
/// calls, and clients that check `structuredContent` would reject valid results).
///
/// Each `$ref` alternative gets its discriminator values as the property's `enum` (and the
/// property required, as OpenAPI says it is): the values the explicit `mapping` gives it, else
/// its implicit value, the schema's name. An implicit name is only used when the alternative
/// does not constrain the property itself (`enum`/`const`, directly or through `allOf`): real
/// specs often write `petType: {enum: [cat]}` in `Cat` and rely on that instead.
fn pin_discriminator(
    docs: &DocumentSet,
    loc: &Loc,
    obj: crate::node::Obj<'_>,
    alts: &[Node],
    items: &mut [Value],
) {
    let Some(d) = obj.get("discriminator").and_then(Node::as_object) else {
        return;
    };
    let Some(prop) = d.get("propertyName").and_then(Node::as_str) else {
        return;
    };
    let mapping = d.get("mapping").and_then(Node::as_object);
    let names = |r: &str, target: &str| {
        if target.contains(['#', '/', '.']) {
            target == r
        } else {
            r.rsplit('/').next() == Some(target)
        }
    };
    for (alt, item) in alts.iter().zip(items.iter_mut()) {
        let Some(r) = alt.get("$ref").and_then(Node::as_str) else {
            continue;
        };
        let mut values: Vec<Value> = mapping
            .into_iter()
            .flatten()
            .filter(|(_, t)| t.as_str().is_some_and(|t| names(r, t)))
            .map(|(v, _)| Value::String(v.to_string()))
            .collect();
        if values.is_empty() {
            let implicit = r.rsplit('/').next().unwrap_or_default();
            let constrained = docs
                .resolve(loc.doc, r)
                .is_ok_and(|l| constrains(docs, &l, prop, 0));
            if implicit.is_empty() || !r.contains('#') || constrained {
                continue;
            }
            values.push(Value::String(
                implicit.replace("~1", "/").replace("~0", "~"),
            ));
        }
        let pinned = json!({
            "properties": {prop: {"enum": values}},
            "required": [prop]
        });
        *item = json!({"allOf": [std::mem::take(item), pinned]});
    }
}

/// Whether the schema at `loc` gives property `prop` an `enum` or `const` (directly, or in an
/// `allOf` member, following `$ref`s; a few levels deep).
fn constrains(docs: &DocumentSet, loc: &Loc, prop: &str, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    let Ok((at, node)) = docs.deref(loc) else {
        return false;
    };
    let own = node
        .get("properties")
        .and_then(|p| p.get(prop))
        .and_then(Node::as_object)
        .is_some_and(|p| {
            p.contains_key("enum")
                || p.contains_key("const")
                || p.get("$ref").and_then(Node::as_str).is_some_and(|r| {
                    docs.resolve(at.doc, r)
                        .ok()
                        .and_then(|l| docs.deref(&l).ok())
                        .is_some_and(|(_, n)| n.get("enum").is_some() || n.get("const").is_some())
                })
        });
    own || node
        .get("allOf")
        .and_then(Node::as_array)
        .is_some_and(|members| {
            members.iter().enumerate().any(|(i, _)| {
                let member = at.join("allOf").index(i);
                constrains(docs, &member, prop, depth + 1)
            })
        })
}

/// Calls `f` with the definition name of every local `$ref` in the schema object `m`, and
/// `pin` with every definition a discriminator mapping names (those must stay in `$defs`).
fn visit_refs(m: &Map<String, Value>, f: &mut impl FnMut(&str), pin: &mut impl FnMut(&str)) {
    if let Some(Value::String(r)) = m.get("$ref")
        && let Some(n) = r.strip_prefix("#/$defs/")
    {
        f(n);
    }
    if let Some(Value::Object(mapping)) = m.get("discriminator").and_then(|d| d.get("mapping")) {
        for t in mapping.values().filter_map(Value::as_str) {
            if let Some(n) = t.strip_prefix("#/$defs/") {
                pin(n);
            }
        }
    }
    for_each_child_of(m, &mut |_, c| {
        if let Value::Object(cm) = c {
            visit_refs(cm, f, pin);
        }
    });
}

/// Replaces `{"$ref": "#/$defs/X"}` by X's value for every X in `inline` (transitively), and
/// drops discriminator mapping entries whose target is replaced.
fn substitute(v: &mut Value, inline: &FastMap<&str, &Value>) {
    let Value::Object(m) = v else { return };
    let target = m
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|n| inline.get(n).copied());
    if let Some(Value::Object(def)) = target {
        let mut merged = def.clone();
        let mut ok = true;
        for (k, sv) in m.iter() {
            if k == "$ref" {
                continue;
            }
            match merged.get(k) {
                None => {
                    merged.insert(k.clone(), sv.clone());
                }
                Some(_)
                    if matches!(
                        k.as_str(),
                        "description"
                            | "title"
                            | "default"
                            | "examples"
                            | "deprecated"
                            | "readOnly"
                            | "writeOnly"
                    ) =>
                {
                    merged.insert(k.clone(), sv.clone());
                }
                Some(existing) if existing == sv => {}
                Some(_) => ok = false,
            }
        }
        if ok {
            *m = merged;
            substitute(v, inline);
            return;
        }
        // Siblings that conflict with the definition (`type: [string, null]` beside a
        // `$ref` to a `type: string` enum): both apply, as `$ref` with siblings means; the
        // definition leaves `$defs`, so the reference must not stay.
        and_with(m, Value::Object(def.clone()));
    } else if let Some(Value::Bool(b)) = target {
        if m.len() == 1 {
            *v = Value::Bool(*b);
            return;
        }
        and_with(m, Value::Bool(*b));
    }
    substitute_children(m, inline);
}

/// Replaces the `$ref` of `m` by `schema` as one more `allOf` member.
fn and_with(m: &mut Map<String, Value>, schema: Value) {
    m.remove("$ref");
    match m.get_mut("allOf") {
        Some(Value::Array(all)) => all.push(schema),
        _ => {
            m.insert("allOf".into(), Value::Array(vec![schema]));
        }
    }
}

fn substitute_children(m: &mut Map<String, Value>, inline: &FastMap<&str, &Value>) {
    if let Some(Value::Object(mapping)) = m
        .get_mut("discriminator")
        .and_then(|d| d.get_mut("mapping"))
    {
        mapping.retain(|_, t| {
            !t.as_str()
                .and_then(|t| t.strip_prefix("#/$defs/"))
                .is_some_and(|n| inline.contains_key(n))
        });
    }
    for_each_child_of_mut(m, &mut |_, c| substitute(c, inline));
}

/// Definitions that can reach themselves (Tarjan-free: DFS from each node over the closure).
fn recursive_defs<'d>(closure: &[usize], deps: impl Fn(usize) -> &'d Deps) -> HashSet<usize> {
    let mut out = HashSet::new();
    let set: HashSet<usize> = closure.iter().copied().collect();
    // Iterative Tarjan SCC.
    let mut index = 0usize;
    let mut indices: HashMap<usize, usize> = HashMap::new();
    let mut low: HashMap<usize, usize> = HashMap::new();
    let mut on_stack: HashSet<usize> = HashSet::new();
    let mut stack: Vec<usize> = Vec::new();
    for &start in closure {
        if indices.contains_key(&start) {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(start, 0)];
        indices.insert(start, index);
        low.insert(start, index);
        index += 1;
        stack.push(start);
        on_stack.insert(start);
        while let Some(&mut (v, ref mut pos)) = work.last_mut() {
            let ds = deps(v);
            if *pos < ds.len() {
                let w = ds[*pos];
                *pos += 1;
                if !set.contains(&w) {
                    continue;
                }
                if w == v {
                    out.insert(v);
                }
                if let std::collections::hash_map::Entry::Vacant(e) = indices.entry(w) {
                    e.insert(index);
                    low.insert(w, index);
                    index += 1;
                    stack.push(w);
                    on_stack.insert(w);
                    work.push((w, 0));
                } else if on_stack.contains(&w) {
                    let lw = indices[&w];
                    let lv = low[&v];
                    low.insert(v, lv.min(lw));
                }
            } else {
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    let lv = low[&v];
                    let lp = low[&parent];
                    low.insert(parent, lp.min(lv));
                }
                if low[&v] == indices[&v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack.remove(&w);
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if comp.len() > 1 {
                        out.extend(comp);
                    }
                }
            }
        }
    }
    out
}

fn approx_size(v: &Value) -> usize {
    match v {
        Value::Object(m) => {
            m.iter()
                .map(|(k, v)| k.len() + 4 + approx_size(v))
                .sum::<usize>()
                + 2
        }
        Value::Array(a) => a.iter().map(approx_size).sum::<usize>() + 2,
        Value::String(s) => s.len() + 2,
        _ => 6,
    }
}

/// Calls `f` on every schema object in `v` (subschema positions only, `$defs` included).
pub fn for_each_schema_mut(v: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    let Value::Object(m) = v else { return };
    f(m);
    for (k, c) in m.iter_mut() {
        match k.as_str() {
            "properties" | "patternProperties" | "dependentSchemas" | "$defs" => {
                if let Value::Object(ps) = c {
                    ps.values_mut().for_each(|s| for_each_schema_mut(s, f));
                }
            }
            "items"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames" => for_each_schema_mut(c, f),
            "prefixItems" | "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(a) = c {
                    a.iter_mut().for_each(|s| for_each_schema_mut(s, f));
                }
            }
            _ => {}
        }
    }
}

/// Request schemas: `readOnly` properties are left out.
pub fn strip_read_only(v: &mut Value) {
    strip_flagged(v, "readOnly")
}

/// Response schemas: `writeOnly` properties are left out.
pub fn strip_write_only(v: &mut Value) {
    strip_flagged(v, "writeOnly")
}

fn strip_flagged(v: &mut Value, flag: &str) {
    // Definitions carrying the flag themselves (through a chain of `$ref`s, or in an `allOf`
    // member): a property that is only a `$ref` to one (`connection: {$ref: ...}` with
    // `readOnly` inside) is flagged too.
    let (flagged, declares) = match v.get("$defs") {
        Some(Value::Object(defs)) => {
            let flagged: HashSet<String> = defs
                .iter()
                .filter(|(_, d)| def_flagged(d, flag, defs, 0))
                .map(|(k, _)| k.clone())
                .collect();
            // Per definition, the flagged properties it declares (itself, in its `allOf` members,
            // through `$ref`s), computed before anything is stripped.
            let declares: HashMap<String, HashSet<String>> = defs
                .iter()
                .map(|(k, d)| {
                    let mut names = HashSet::new();
                    declared_flagged(d, flag, &flagged, defs, 0, &mut names);
                    (k.clone(), names)
                })
                .filter(|(_, names)| !names.is_empty())
                .collect();
            (flagged, declares)
        }
        _ => (HashSet::new(), HashMap::new()),
    };
    for_each_schema_mut(v, &mut |m| {
        // Names a flagged property has here or in an `allOf` member or `$ref` target (the
        // members are still as converted: a map is visited before its subschemas). A `required`
        // naming one would make a request that can never be valid without sending it.
        let mut gone: HashSet<String> = HashSet::new();
        if let Some(Value::Array(all)) = m.get("allOf") {
            for member in all {
                member_declares(member, flag, &flagged, &declares, &mut gone);
            }
        }
        if let Some(n) = m
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            && let Some(names) = declares.get(n)
        {
            gone.extend(names.iter().cloned());
        }
        if let Some(Value::Object(props)) = m.get_mut("properties") {
            let mut drop = Vec::new();
            for (k, s) in props.iter() {
                if property_flagged(s, flag, &flagged) {
                    drop.push(k.clone());
                } else {
                    // Declared here without the flag: this map's own declaration wins.
                    gone.remove(k);
                }
            }
            for k in drop {
                props.shift_remove(&k);
                gone.insert(k);
            }
        }
        if gone.is_empty() {
            return;
        }
        drop_required(m, &gone);
        // `allOf` members hold each other's `required` (`allOf: [{$ref: Identified}, {required:
        // [id]}]`): a name a sibling declares flagged goes from each member's too, unless that
        // member declares it itself without the flag.
        if let Some(Value::Array(all)) = m.get_mut("allOf") {
            for member in all.iter_mut() {
                let Value::Object(mm) = member else { continue };
                let own: HashSet<&String> = match mm.get("properties") {
                    Some(Value::Object(props)) => props
                        .iter()
                        .filter(|(_, s)| !property_flagged(s, flag, &flagged))
                        .map(|(k, _)| k)
                        .collect(),
                    _ => HashSet::new(),
                };
                let gone: HashSet<String> =
                    gone.iter().filter(|k| !own.contains(k)).cloned().collect();
                drop_required(mm, &gone);
            }
        }
    });
}

/// Removes `names` from the `required` of `m` (and `required` itself once empty).
fn drop_required(m: &mut Map<String, Value>, names: &HashSet<String>) {
    if let Some(Value::Array(req)) = m.get_mut("required") {
        req.retain(|r| !r.as_str().is_some_and(|r| names.contains(r)));
        if req.is_empty() {
            m.remove("required");
        }
    }
}

/// The flagged properties an `allOf` member declares: its own, its members', and those of the
/// definition it refers to.
fn member_declares(
    member: &Value,
    flag: &str,
    flagged: &HashSet<String>,
    declares: &HashMap<String, HashSet<String>>,
    out: &mut HashSet<String>,
) {
    if let Some(Value::Object(props)) = member.get("properties") {
        out.extend(
            props
                .iter()
                .filter(|(_, s)| property_flagged(s, flag, flagged))
                .map(|(k, _)| k.clone()),
        );
    }
    if let Some(n) = member
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        && let Some(names) = declares.get(n)
    {
        out.extend(names.iter().cloned());
    }
    if let Some(Value::Array(all)) = member.get("allOf") {
        for m in all {
            member_declares(m, flag, flagged, declares, out);
        }
    }
}

/// [`member_declares`] for a definition, from the unstripped `$defs` (a few levels deep).
fn declared_flagged(
    d: &Value,
    flag: &str,
    flagged: &HashSet<String>,
    defs: &Map<String, Value>,
    depth: usize,
    out: &mut HashSet<String>,
) {
    if depth > 8 {
        return;
    }
    if let Some(Value::Object(props)) = d.get("properties") {
        out.extend(
            props
                .iter()
                .filter(|(_, s)| property_flagged(s, flag, flagged))
                .map(|(k, _)| k.clone()),
        );
    }
    if let Some(t) = d
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|n| defs.get(n))
    {
        declared_flagged(t, flag, flagged, defs, depth + 1, out);
    }
    if let Some(Value::Array(all)) = d.get("allOf") {
        for m in all {
            declared_flagged(m, flag, flagged, defs, depth + 1, out);
        }
    }
}

/// Whether a property schema carries `flag`: itself, through a `$ref` to a flagged definition,
/// or in an `allOf` member (`allOf: [{$ref: Connection}, {readOnly: true}]`, as DigitalOcean
/// writes it). An explicit `false` on the property wins.
fn property_flagged(s: &Value, flag: &str, flagged: &HashSet<String>) -> bool {
    let member = |m: &Value| {
        m.get(flag).and_then(Value::as_bool) == Some(true)
            || local_ref(m).is_some_and(|n| flagged.contains(n))
    };
    match s.get(flag).and_then(Value::as_bool) {
        Some(b) => b,
        None => {
            member(s)
                || s.get("allOf")
                    .and_then(Value::as_array)
                    .is_some_and(|all| all.iter().any(member))
        }
    }
}

/// The `$defs` name a schema refers to: `{"$ref": "#/$defs/N"}` or `{"allOf": [{"$ref": ...}]}`.
fn local_ref(s: &Value) -> Option<&str> {
    let target = match s.get("allOf").and_then(Value::as_array) {
        Some(all) if all.len() == 1 => &all[0],
        _ => s,
    };
    target.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

/// Whether a definition carries `flag`: itself, through a chain of `$ref`s, or in an `allOf`
/// member (`Stamp: {allOf: [{$ref: Plain}, {readOnly: true}]}`), as [`property_flagged`] reads
/// a property.
fn def_flagged(d: &Value, flag: &str, defs: &Map<String, Value>, depth: usize) -> bool {
    if depth >= 8 {
        return false;
    }
    let via_ref = |s: &Value| {
        s.get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|n| defs.get(n))
            .is_some_and(|t| def_flagged(t, flag, defs, depth + 1))
    };
    match d.get(flag).and_then(Value::as_bool) {
        Some(b) => b,
        None => {
            via_ref(d)
                || d.get("allOf").and_then(Value::as_array).is_some_and(|all| {
                    all.iter()
                        .any(|m| m.get(flag).and_then(Value::as_bool) == Some(true) || via_ref(m))
                })
        }
    }
}

/// Lenient output schemas describe the shape without rejecting real-world deviations: no
/// `required`, no `additionalProperties: false`, optional properties accept `null`, and no
/// `pattern` or `format`: the TypeScript SDK checks both on every structured result (Ajv with
/// ajv-formats), and APIs return date-times without a zone or identifiers outside their
/// documented pattern often enough that those checks would fail calls that worked.
pub fn make_lenient(v: &mut Value) {
    for_each_schema_mut(v, &mut |m| {
        m.remove("pattern");
        m.remove("format");
        let required: Vec<String> = match m.remove("required") {
            Some(Value::Array(r)) => r
                .into_iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        if m.get("additionalProperties") == Some(&Value::Bool(false)) {
            m.remove("additionalProperties");
        }
        if m.get("unevaluatedProperties") == Some(&Value::Bool(false)) {
            m.remove("unevaluatedProperties");
        }
        if let Some(Value::Object(props)) = m.get_mut("properties") {
            for (k, s) in props.iter_mut() {
                if required.contains(k) {
                    continue;
                }
                if let Value::Object(sm) = s {
                    let is_null_ok = match sm.get("type") {
                        Some(Value::String(t)) => t == "null",
                        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
                        _ => {
                            let constrained = ["$ref", "allOf", "oneOf", "enum", "const", "not"]
                                .iter()
                                .any(|k| sm.contains_key(*k));
                            let any_null =
                                sm.get("anyOf").and_then(Value::as_array).is_some_and(|a| {
                                    a.iter().any(|s| s.get("type") == Some(&json!("null")))
                                });
                            any_null || (!constrained && !sm.contains_key("anyOf"))
                        }
                    };
                    if !is_null_ok {
                        *s = make_nullable(std::mem::take(sm));
                    }
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::load_single;
    use crate::pointer::JsonPointer;

    fn store_for(doc: &str) -> crate::load::Spec {
        load_single(doc.as_bytes(), "t.yaml").unwrap()
    }

    #[test]
    fn nullable_and_exclusive_bounds() {
        let spec = store_for(
            "openapi: 3.0.0\ncomponents:\n  schemas:\n    A:\n      type: integer\n      nullable: true\n      minimum: 1\n      exclusiveMinimum: true\n      example: 5\n      x-foo: 1\n",
        );
        let mut store = SchemaStore::new(&spec.docs, spec.version);
        let (v, deps) = store.convert_at(&Loc::new(0, JsonPointer::parse("/components/schemas/A")));
        assert!(deps.is_empty());
        assert_eq!(
            v,
            json!({"type": ["integer", "null"], "minimum": 1, "exclusiveMinimum": 1, "examples": [5]})
        );
    }

    #[test]
    fn recursion_becomes_defs_and_single_use_inlines() {
        let spec = store_for(
            "openapi: 3.0.0\ncomponents:\n  schemas:\n    Tree:\n      type: object\n      properties:\n        kids:\n          type: array\n          items: {$ref: '#/components/schemas/Tree'}\n        meta: {$ref: '#/components/schemas/Meta'}\n    Meta:\n      type: object\n      properties:\n        tags: {type: array}\n",
        );
        let mut store = SchemaStore::new(&spec.docs, spec.version);
        let node = Node::from_json(r##"{"$ref": "#/components/schemas/Tree"}"##).unwrap();
        let (v, deps) = store.convert_node(&Loc::new(0, JsonPointer::parse("/paths/x")), &node);
        assert_eq!(v, json!({"$ref": "#/$defs/Tree"}));
        let mut root = Map::new();
        root.insert("properties".into(), json!({ "tree": v }));
        let b = store.table().bundle(root, &deps, None);
        let b = Value::Object(b);
        assert_eq!(b["properties"]["tree"], json!({"$ref": "#/$defs/Tree"}));
        assert_eq!(
            b["$defs"]["Tree"]["properties"]["kids"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
        // Meta is used once and not recursive: inlined, and its array got `items`.
        assert_eq!(
            b["$defs"]["Tree"]["properties"]["meta"]["properties"]["tags"],
            json!({"type": "array", "items": {}})
        );
        assert!(b["$defs"].get("Meta").is_none());
    }

    #[test]
    fn lenient_output() {
        let mut v = json!({"type": "object", "required": ["a"], "additionalProperties": false,
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"$ref": "#/$defs/C"}}});
        make_lenient(&mut v);
        assert_eq!(
            v,
            json!({"type": "object", "properties": {"a": {"type": "string"},
            "b": {"type": ["integer", "null"]}, "c": {"anyOf": [{"$ref": "#/$defs/C"}, {"type": "null"}]}}})
        );
    }

    #[test]
    fn read_only_through_a_ref_is_stripped() {
        let mut v = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "conn": {"$ref": "#/$defs/Conn"},
                "alias": {"allOf": [{"$ref": "#/$defs/Alias"}]},
                "member": {"allOf": [{"$ref": "#/$defs/Plain"}, {"readOnly": true}]},
                "kept": {"$ref": "#/$defs/Conn", "readOnly": false}
            },
            "required": ["name", "conn"],
            "$defs": {
                "Conn": {"type": "object", "readOnly": true},
                "Alias": {"$ref": "#/$defs/Conn"},
                "Plain": {"type": "object"}
            }
        });
        strip_read_only(&mut v);
        assert_eq!(
            v["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["name".to_string(), "kept".to_string()])
        );
        assert_eq!(v["required"], json!(["name"]));
    }
}
