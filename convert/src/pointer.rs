//! RFC 6901 JSON pointers, and locations of nodes inside a set of loaded documents.

use std::borrow::Cow;
use std::fmt;

use crate::node::Node;

/// The node at the escaped pointer `ptr` inside `root`: the same answer as
/// [`serde_json::Value::pointer`], without allocating two `String`s per reference token (a
/// token is only unescaped into a new `String` when it contains `~`).
pub fn lookup<'v>(root: &'v Node, ptr: &str) -> Option<&'v Node> {
    if ptr.is_empty() {
        return Some(root);
    }
    let rest = ptr.strip_prefix('/')?;
    rest.split('/').try_fold(root, |target, token| {
        if let Some(map) = target.as_object() {
            map.get_escaped(token)
        } else {
            let list = target.as_array()?;
            parse_index(&unescape(token)).and_then(|i| list.get(i))
        }
    })
}

/// One reference token unescaped as `serde_json` does (`~1` -> `/`, then `~0` -> `~`).
fn unescape(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// An array index as `serde_json` accepts it in a pointer: decimal, no sign, no leading zero.
fn parse_index(s: &str) -> Option<usize> {
    if s.starts_with('+') || (s.starts_with('0') && s.len() != 1) {
        return None;
    }
    s.parse().ok()
}

/// A JSON pointer (RFC 6901), stored in its escaped form without the leading `#`.
#[derive(
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(transparent)]
pub struct JsonPointer(String);

impl JsonPointer {
    /// The pointer to the whole document.
    pub fn root() -> Self {
        Self(String::new())
    }

    /// Parses an already escaped pointer such as `/paths/~1pets/get` (a leading `#` is accepted).
    pub fn parse(escaped: &str) -> Self {
        Self(escaped.strip_prefix('#').unwrap_or(escaped).to_string())
    }

    /// Returns a new pointer with one more (unescaped) reference token.
    pub fn join(&self, token: impl AsRef<str>) -> Self {
        let mut s = String::with_capacity(self.0.len() + token.as_ref().len() + 1);
        s.push_str(&self.0);
        s.push('/');
        for c in token.as_ref().chars() {
            match c {
                '~' => s.push_str("~0"),
                '/' => s.push_str("~1"),
                c => s.push(c),
            }
        }
        Self(s)
    }

    /// Returns a new pointer with an array index appended.
    pub fn index(&self, i: usize) -> Self {
        Self(format!("{}/{}", self.0, i))
    }

    /// The escaped form, usable with [`serde_json::Value::pointer`].
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The unescaped reference tokens.
    pub fn tokens(&self) -> impl Iterator<Item = String> + '_ {
        self.0
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
    }

    /// The last unescaped token, if any.
    pub fn last(&self) -> Option<String> {
        if self.0.is_empty() {
            None
        } else {
            self.tokens().last()
        }
    }
}

impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Index of a document inside a [`crate::load::DocumentSet`]; 0 is the root document.
pub type DocId = usize;

/// Where a node lives: which document, and the pointer inside it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc {
    pub doc: DocId,
    pub ptr: JsonPointer,
}

impl Loc {
    pub fn new(doc: DocId, ptr: JsonPointer) -> Self {
        Self { doc, ptr }
    }
    pub fn join(&self, token: impl AsRef<str>) -> Self {
        Self {
            doc: self.doc,
            ptr: self.ptr.join(token),
        }
    }
    pub fn index(&self, i: usize) -> Self {
        Self {
            doc: self.doc,
            ptr: self.ptr.index(i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_tokens() {
        let p = JsonPointer::root()
            .join("paths")
            .join("/pets/{id}")
            .join("get");
        assert_eq!(p.to_string(), "#/paths/~1pets~1{id}/get");
        let q = JsonPointer::root().join("a~b");
        assert_eq!(q.as_str(), "/a~0b");
        assert_eq!(q.tokens().collect::<Vec<_>>(), vec!["a~b"]);
        assert_eq!(p.last().as_deref(), Some("get"));
        assert_eq!(JsonPointer::root().last(), None);
    }

    #[test]
    fn resolves_with_serde_json() {
        let v = serde_json::json!({"paths": {"/pets": {"get": 1}}});
        let p = JsonPointer::root().join("paths").join("/pets").join("get");
        assert_eq!(v.pointer(p.as_str()), Some(&serde_json::json!(1)));
    }

    #[test]
    fn lookup_matches_serde_json() {
        let v = serde_json::json!({
            "a": {"b/c": 1, "d~e": 2, "~1": 3, "f~01": 4, "": {"": 5}, "0": 6, "~~1": 10},
            "arr": [7, [8, 9]],
            "s": "x"
        });
        let ptrs = [
            "",
            "/",
            "//",
            "/a",
            "/a/b~1c",
            "/a/d~0e",
            "/a/~01",
            "/a/f~001",
            "/a/~0~1",
            "/a/~~1",
            "/a/",
            "/a//",
            "/a/0",
            "/arr/0",
            "/arr/1/1",
            "/arr/01",
            "/arr/+1",
            "/arr/-1",
            "/arr/2",
            "/arr/",
            "/arr/00",
            "/arr/1/0/x",
            "/s",
            "/s/0",
            "a",
            "#/a",
            "/missing",
            "/arr/18446744073709551616",
            "/a/b~2c",
        ];
        // The same object padded to be indexed (sorted lookups), and as it is.
        let mut big = v.clone();
        for i in 0..40 {
            big["a"][format!("pad~{i}/x")] = serde_json::json!(i);
        }
        for v in [v, big] {
            let node = Node::from_json(&v.to_string()).unwrap();
            for p in ptrs
                .iter()
                .chain(&["/a/pad~07~1x", "/a/pad~039~1x", "/a/pad~7~1x"])
            {
                assert_eq!(
                    lookup(&node, p).map(Node::to_value).as_ref(),
                    v.pointer(p),
                    "{p:?}"
                );
            }
        }
    }
}
