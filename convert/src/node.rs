//! The loaded documents' tree: a compact, read-only JSON value.
//!
//! A spec is read many times during a conversion and never changed, and in a large one the tree
//! is most of what the process holds. `serde_json::Value` with `preserve_order` spends about
//! 112 bytes on each object member (hash, key `String`, an 80-byte value) plus a hash table per
//! object, and one allocation per key: Cloudflare's 4.2 MB spec took 24.9 MB as `Value`s.
//! A [`Node`] is 24 bytes; an object is one boxed slice of `(key, node)` members in document
//! order; keys are interned per document (`Arc<str>`: Cloudflare has 150,000 members and 7,389
//! distinct keys); only objects of `INDEX_FROM` (16) members or more carry a hash index for
//! lookups (`paths`, `components/schemas`), smaller ones are scanned.
//!
//! Parsing follows `serde_json` exactly: the same numbers (a float that is not finite becomes
//! `null`), and a repeated key keeps its first position and its last value.

use std::collections::HashSet;
use std::sync::Arc;

use serde::Serialize;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// An object member's key, shared by every equal key of a document.
pub type Key = Arc<str>;

/// Objects with at least this many members get a hash index; smaller ones are scanned.
const INDEX_FROM: usize = 16;

/// A JSON value of a loaded document. Read it through [`Node::as_object`], [`Node::as_str`]
/// and the like; [`Node::to_value`] copies it out as a `serde_json::Value`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node(Repr);

#[derive(Clone, Debug, Default, PartialEq)]
enum Repr {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(Box<str>),
    Array(Box<[Node]>),
    Object(Box<[(Key, Node)]>),
    Indexed(Box<Indexed>),
}

/// An object of [`INDEX_FROM`] members or more: its members, and a hash table of their
/// positions by key (one hash and, as a rule, one comparison per lookup; `components/schemas`
/// keys share long prefixes, which a binary search compares again and again).
#[derive(Clone, Debug)]
struct Indexed {
    entries: Box<[(Key, Node)]>,
    index: hashbrown::HashTable<u32>,
}

/// The hasher of every index: seeded once per process, so a spec cannot be written to collide.
static HASHER: std::sync::LazyLock<foldhash::fast::RandomState> =
    std::sync::LazyLock::new(Default::default);

fn hash_key(key: &str) -> u64 {
    use std::hash::BuildHasher;
    HASHER.hash_one(key)
}

impl PartialEq for Indexed {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

static NULL: Node = Node(Repr::Null);

/// A view of an object node: its members in document order.
#[derive(Clone, Copy, Debug)]
pub struct Obj<'a> {
    entries: &'a [(Key, Node)],
    index: Option<&'a hashbrown::HashTable<u32>>,
}

impl Node {
    pub const NULL: &'static Node = &Node(Repr::Null);

    /// The member `key` of an object node.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_object()?.get(key)
    }

    pub fn as_object(&self) -> Option<Obj<'_>> {
        match &self.0 {
            Repr::Object(entries) => Some(Obj {
                entries,
                index: None,
            }),
            Repr::Indexed(ix) => Some(Obj {
                entries: &ix.entries,
                index: Some(&ix.index),
            }),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Node]> {
        match &self.0 {
            Repr::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.0 {
            Repr::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.0 {
            Repr::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number> {
        match &self.0 {
            Repr::Number(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        self.as_number()?.as_u64()
    }

    pub fn as_i64(&self) -> Option<i64> {
        self.as_number()?.as_i64()
    }

    pub fn as_f64(&self) -> Option<f64> {
        self.as_number()?.as_f64()
    }

    pub fn is_null(&self) -> bool {
        matches!(self.0, Repr::Null)
    }

    pub fn is_boolean(&self) -> bool {
        matches!(self.0, Repr::Bool(_))
    }

    pub fn is_number(&self) -> bool {
        matches!(self.0, Repr::Number(_))
    }

    pub fn is_u64(&self) -> bool {
        self.as_number().is_some_and(Number::is_u64)
    }

    pub fn is_string(&self) -> bool {
        matches!(self.0, Repr::String(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self.0, Repr::Array(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self.0, Repr::Object(_) | Repr::Indexed(_))
    }

    /// Whether this is the boolean `b`.
    pub fn is_bool(&self, b: bool) -> bool {
        self.as_bool() == Some(b)
    }

    /// A copy of this node as a `serde_json::Value` (same member order).
    pub fn to_value(&self) -> Value {
        match &self.0 {
            Repr::Null => Value::Null,
            Repr::Bool(b) => Value::Bool(*b),
            Repr::Number(n) => Value::Number(n.clone()),
            Repr::String(s) => Value::String(s.to_string()),
            Repr::Array(a) => Value::Array(a.iter().map(Node::to_value).collect()),
            Repr::Object(_) | Repr::Indexed(_) => {
                Value::Object(self.as_object().map(Obj::to_map).unwrap_or_default())
            }
        }
    }

    /// An object node of `entries` (in order; a repeated key keeps its first position and
    /// its last value).
    pub(crate) fn from_entries(entries: Vec<(Key, Node)>) -> Node {
        object(entries)
    }

    pub(crate) fn string(s: &str) -> Node {
        Node(Repr::String(s.into()))
    }

    /// Parses JSON text into a node (keys interned in a fresh table).
    pub fn from_json(text: &str) -> Result<Node, serde_json::Error> {
        let mut b = Builder::default();
        let mut de = serde_json::Deserializer::from_str(text);
        let node = b.seed().deserialize(&mut de)?;
        de.end()?;
        Ok(node)
    }
}

impl From<bool> for Node {
    fn from(b: bool) -> Self {
        Node(Repr::Bool(b))
    }
}

impl std::ops::Index<&str> for Node {
    type Output = Node;
    /// The member `key`, or `null` (as `serde_json::Value` indexes).
    fn index(&self, key: &str) -> &Node {
        self.get(key).unwrap_or(&NULL)
    }
}

impl PartialEq<Value> for Node {
    fn eq(&self, other: &Value) -> bool {
        match (&self.0, other) {
            (Repr::Null, Value::Null) => true,
            (Repr::Bool(a), Value::Bool(b)) => a == b,
            (Repr::Number(a), Value::Number(b)) => a == b,
            (Repr::String(a), Value::String(b)) => **a == **b,
            (Repr::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
            }
            (Repr::Object(_) | Repr::Indexed(_), Value::Object(b)) => {
                let a = self.as_object().expect("object");
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((ka, va), (kb, vb))| ka == kb && va == vb)
            }
            _ => false,
        }
    }
}

impl PartialEq<&str> for Node {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl Serialize for Node {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Null => s.serialize_unit(),
            Repr::Bool(b) => s.serialize_bool(*b),
            Repr::Number(n) => n.serialize(s),
            Repr::String(v) => s.serialize_str(v),
            Repr::Array(a) => s.collect_seq(a.iter()),
            Repr::Object(_) | Repr::Indexed(_) => {
                s.collect_map(self.as_object().into_iter().flat_map(Obj::iter))
            }
        }
    }
}

impl<'a> Obj<'a> {
    pub fn get(self, key: &str) -> Option<&'a Node> {
        match self.index {
            None => self
                .entries
                .iter()
                .find(|(k, _)| **k == *key)
                .map(|(_, v)| v),
            Some(index) => index
                .find(hash_key(key), |&i| *self.entries[i as usize].0 == *key)
                .map(|&i| &self.entries[i as usize].1),
        }
    }

    /// The member named by an escaped JSON pointer token (`~1` for `/`, `~0` for `~`), decoded
    /// as it is compared: no `String` per lookup (every `paths` key holds a `/`).
    pub fn get_escaped(self, token: &str) -> Option<&'a Node> {
        if !token.contains('~') {
            return self.get(token);
        }
        let mut buf = [0u8; 256];
        if token.len() <= buf.len() {
            let mut n = 0;
            for b in Unescaped(token.as_bytes()) {
                buf[n] = b;
                n += 1;
            }
            // Decoding replaces ASCII with ASCII: still UTF-8.
            std::str::from_utf8(&buf[..n])
                .ok()
                .and_then(|key| self.get(key))
        } else {
            let key: Vec<u8> = Unescaped(token.as_bytes()).collect();
            String::from_utf8(key).ok().and_then(|key| self.get(&key))
        }
    }

    pub fn contains_key(self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn len(self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(self) -> bool {
        self.entries.is_empty()
    }

    /// The members in document order.
    pub fn iter(self) -> Iter<'a> {
        Iter(self.entries.iter())
    }

    pub fn keys(self) -> impl DoubleEndedIterator<Item = &'a str> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| &**k)
    }

    pub fn values(self) -> impl DoubleEndedIterator<Item = &'a Node> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }

    /// The members with their shared keys.
    pub fn entries(self) -> &'a [(Key, Node)] {
        self.entries
    }

    /// A copy as a `serde_json` map (same member order).
    pub fn to_map(self) -> Map<String, Value> {
        let mut m = Map::with_capacity(self.len());
        for (k, v) in self {
            m.insert(k.to_string(), v.to_value());
        }
        m
    }
}

/// The bytes of an escaped JSON pointer token, unescaped as `serde_json` does (`~1` -> `/`,
/// then `~0` -> `~`; any other `~` stays).
struct Unescaped<'t>(&'t [u8]);

impl Iterator for Unescaped<'_> {
    type Item = u8;
    fn next(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        match (b, rest.first()) {
            (b'~', Some(b'1')) => {
                self.0 = &rest[1..];
                Some(b'/')
            }
            (b'~', Some(b'0')) => {
                self.0 = &rest[1..];
                Some(b'~')
            }
            _ => {
                self.0 = rest;
                Some(b)
            }
        }
    }
}

/// The members of an object, in document order.
#[derive(Clone)]
pub struct Iter<'a>(std::slice::Iter<'a, (Key, Node)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a Node);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&**k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (&**k, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for Obj<'a> {
    type Item = (&'a str, &'a Node);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Obj<'a> {
    type Item = (&'a str, &'a Node);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// An object node from its members (in order; a repeated key keeps its first position and its
/// last value, as `serde_json` does).
fn object(mut entries: Vec<(Key, Node)>) -> Node {
    if entries.len() < INDEX_FROM {
        if has_duplicates_small(&entries) {
            entries = dedup(entries);
        }
        if entries.len() < INDEX_FROM {
            return Node(Repr::Object(entries.into_boxed_slice()));
        }
    }
    let index = match build_index(&entries) {
        Some(index) => index,
        None => {
            entries = dedup(entries);
            if entries.len() < INDEX_FROM {
                return Node(Repr::Object(entries.into_boxed_slice()));
            }
            build_index(&entries).unwrap_or_default()
        }
    };
    Node(Repr::Indexed(Box::new(Indexed {
        entries: entries.into_boxed_slice(),
        index,
    })))
}

/// The positions of `entries` by key, or `None` if a key repeats.
fn build_index(entries: &[(Key, Node)]) -> Option<hashbrown::HashTable<u32>> {
    let mut index = hashbrown::HashTable::with_capacity(entries.len());
    for (i, (k, _)) in entries.iter().enumerate() {
        match index.entry(
            hash_key(k),
            |&j: &u32| entries[j as usize].0 == *k,
            |&j: &u32| hash_key(&entries[j as usize].0),
        ) {
            hashbrown::hash_table::Entry::Occupied(_) => return None,
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert(i as u32);
            }
        }
    }
    Some(index)
}

fn has_duplicates_small(entries: &[(Key, Node)]) -> bool {
    entries
        .iter()
        .enumerate()
        .any(|(i, (k, _))| entries[..i].iter().any(|(e, _)| e == k))
}

/// Removes repeated keys: each key at its first position, with its last value.
fn dedup(entries: Vec<(Key, Node)>) -> Vec<(Key, Node)> {
    let mut out: Vec<(Key, Node)> = Vec::with_capacity(entries.len());
    let mut at: std::collections::HashMap<Key, usize> = std::collections::HashMap::new();
    for (k, v) in entries {
        match at.get(&k) {
            Some(&i) => out[i].1 = v,
            None => {
                at.insert(k.clone(), out.len());
                out.push((k, v));
            }
        }
    }
    out
}

/// Parser state shared by a whole document: the key table, and the stacks that members and
/// items are collected on before each object or array is allocated at its final size.
#[derive(Default)]
pub(crate) struct Builder {
    keys: HashSet<Key, foldhash::fast::RandomState>,
    entries: Vec<(Key, Node)>,
    items: Vec<Node>,
}

impl Builder {
    /// The shared key equal to `k`.
    pub(crate) fn key(&mut self, k: &str) -> Key {
        if let Some(key) = self.keys.get(k) {
            return key.clone();
        }
        let key: Key = Arc::from(k);
        self.keys.insert(key.clone());
        key
    }

    /// A seed that parses one JSON value into a [`Node`].
    pub(crate) fn seed(&mut self) -> NodeSeed<'_> {
        NodeSeed(self)
    }

    /// Marks the start of an object's members on the stack.
    pub(crate) fn begin_object(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn push_member(&mut self, key: Key, value: Node) {
        self.entries.push((key, value));
    }

    /// The object of the members pushed since `start`.
    pub(crate) fn end_object(&mut self, start: usize) -> Node {
        let members: Vec<(Key, Node)> = self.entries.drain(start..).collect();
        object(members)
    }

    /// Whether a member `key` was pushed since `start`.
    pub(crate) fn has_member_since(&self, start: usize, key: &str) -> bool {
        self.entries[start..].iter().any(|(k, _)| **k == *key)
    }

    /// Marks the start of an array's items on the stack.
    pub(crate) fn begin_array(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn push_item(&mut self, item: Node) {
        self.items.push(item);
    }

    /// The array of the items pushed since `start`.
    pub(crate) fn end_array(&mut self, start: usize) -> Node {
        Node(Repr::Array(self.items.drain(start..).collect()))
    }
}

pub(crate) fn number_f64(f: f64) -> Node {
    Number::from_f64(f).map_or(Node(Repr::Null), |n| Node(Repr::Number(n)))
}

pub(crate) fn number_i64(i: i64) -> Node {
    Node(Repr::Number(i.into()))
}

pub(crate) fn number_u64(u: u64) -> Node {
    Node(Repr::Number(u.into()))
}

/// Parses one JSON value into a [`Node`]; see [`Builder::seed`].
pub(crate) struct NodeSeed<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = Node;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_> {
    type Value = Node;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node(Repr::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(number_i64(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(number_u64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(number_f64(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::string(v))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node(Repr::String(v.into_boxed_str())))
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node(Repr::Null))
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node(Repr::Null))
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let b = self.0;
        let start = b.items.len();
        while let Some(v) = seq.next_element_seed(NodeSeed(b))? {
            b.items.push(v);
        }
        Ok(b.end_array(start))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let b = self.0;
        let start = b.begin_object();
        while let Some(k) = map.next_key_seed(KeySeed(b))? {
            let v = map.next_value_seed(NodeSeed(b))?;
            b.push_member(k, v);
        }
        Ok(b.end_object(start))
    }
}

/// Parses an object key into a shared [`Key`].
pub(crate) struct KeySeed<'b>(pub(crate) &'b mut Builder);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Key;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = Key;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E>(self, v: &str) -> Result<Key, E> {
        Ok(self.0.key(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(text: &str) -> (Node, Value) {
        (
            Node::from_json(text).unwrap(),
            serde_json::from_str(text).unwrap(),
        )
    }

    #[test]
    fn parses_as_serde_json_does() {
        let keys: Vec<String> = (0..40).map(|i| format!("\"k{}\": {i}", 40 - i)).collect();
        for text in [
            r#"{"a": 1, "b": [true, null, -2, 1.5e300, "x\u00e9"], "c": {"d": {}}, "e": []}"#,
            r#"{"a": 1, "b": 2, "a": 3}"#,
            r#"[18446744073709551615, -9223372036854775808, 0.1, -0.0, 1.7976931348623157e308]"#,
            &format!("{{{}}}", keys.join(",")),
            &format!("{{{}, \"k7\": \"again\", \"k40\": null}}", keys.join(",")),
        ] {
            let (node, value) = both(text);
            assert!(node == value, "{text}");
            assert_eq!(node.to_value(), value, "{text}");
            assert_eq!(
                serde_json::to_string(&node).unwrap(),
                serde_json::to_string(&value).unwrap()
            );
        }
    }

    #[test]
    fn lookups_in_small_and_indexed_objects() {
        let members: Vec<String> = (0..100).map(|i| format!("\"p{i}\": {i}")).collect();
        let big = Node::from_json(&format!("{{{}}}", members.join(","))).unwrap();
        let obj = big.as_object().unwrap();
        assert!(obj.index.is_some());
        for i in 0..100 {
            assert_eq!(big.get(&format!("p{i}")).and_then(Node::as_u64), Some(i));
        }
        assert!(big.get("p100").is_none());
        assert_eq!(obj.keys().next(), Some("p0"));
        let small = Node::from_json(r#"{"x": "y", "z": [1]}"#).unwrap();
        assert_eq!(small["x"], "y");
        assert!(small["nope"].is_null());
        assert_eq!(small["z"].as_array().map(<[Node]>::len), Some(1));
    }

    #[test]
    fn equal_keys_are_shared() {
        let n = Node::from_json(r#"[{"type": 1}, {"type": 2}]"#).unwrap();
        let a = n.as_array().unwrap();
        let k0 = &a[0].as_object().unwrap().entries()[0].0;
        let k1 = &a[1].as_object().unwrap().entries()[0].0;
        assert!(Arc::ptr_eq(k0, k1));
    }

    #[test]
    fn node_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Node>(), 24);
    }
}
