//! Where something in a spec lives: a document and a JSON pointer inside it.
//!
//! Tools and diagnostics carry one so every message can say `file#/json/pointer`; the text form
//! is what users see (and what `api.json` stores), the typed form is what code builds and compares.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// A document (its name as given: a path or URL, without fragment) and a JSON pointer
/// (RFC 6901, `""` for the whole document) inside it. Displays as `doc#pointer`; the default
/// value is "nowhere" (a tool made by hand, not from a spec) and displays as `""`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Location {
    doc: Arc<str>,
    pointer: String,
}

impl Location {
    /// `pointer` is an RFC 6901 pointer (escaped tokens, `""` or starting with `/`).
    pub fn new(doc: impl Into<Arc<str>>, pointer: impl Into<String>) -> Self {
        Location {
            doc: doc.into(),
            pointer: pointer.into(),
        }
    }

    /// Whether this is the default "nowhere" location.
    pub fn is_unknown(&self) -> bool {
        self.doc.is_empty() && self.pointer.is_empty()
    }

    /// The document's name.
    pub fn doc(&self) -> &str {
        &self.doc
    }

    /// The pointer inside the document (escaped, without `#`).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The location of the child `token` (unescaped; `~` and `/` are escaped here).
    pub fn join(&self, token: &str) -> Location {
        let mut pointer = String::with_capacity(self.pointer.len() + token.len() + 1);
        pointer.push_str(&self.pointer);
        pointer.push('/');
        for c in token.chars() {
            match c {
                '~' => pointer.push_str("~0"),
                '/' => pointer.push_str("~1"),
                c => pointer.push(c),
            }
        }
        Location {
            doc: self.doc.clone(),
            pointer,
        }
    }

    /// Whether this location is `other` or lies inside it (same document, pointer below).
    pub fn is_within(&self, other: &Location) -> bool {
        self.doc == other.doc
            && self
                .pointer
                .strip_prefix(other.pointer.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }

    /// Reads the text form `doc#pointer` (the first `#` separates them: a document name
    /// carries no fragment). Text without `#` is a whole document.
    pub fn parse(text: &str) -> Location {
        if text.is_empty() {
            return Location::default();
        }
        match text.split_once('#') {
            Some((doc, pointer)) => Location::new(doc, pointer),
            None => Location::new(text, ""),
        }
    }

    fn text_bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let hash = (!self.is_unknown()).then_some(b'#');
        self.doc.bytes().chain(hash).chain(self.pointer.bytes())
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_unknown() {
            return Ok(());
        }
        write!(f, "{}#{}", self.doc, self.pointer)
    }
}

/// Ordered as the text form is, so sorted output reads as before the type existed.
impl Ord for Location {
    fn cmp(&self, other: &Self) -> Ordering {
        self.text_bytes()
            .cmp(other.text_bytes())
            // Only a document name holding `#` can tie with a different location.
            .then_with(|| self.doc.len().cmp(&other.doc.len()))
    }
}

impl PartialOrd for Location {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl serde::Serialize for Location {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Location {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(Location::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_round_trips_and_orders_like_text() {
        let a = Location::new("spec.yaml", "/paths/~1pets/get");
        assert_eq!(a.to_string(), "spec.yaml#/paths/~1pets/get");
        assert_eq!(Location::parse(&a.to_string()), a);
        assert_eq!(Location::parse("spec.yaml"), Location::new("spec.yaml", ""));
        assert_eq!(Location::default().to_string(), "");
        assert!(Location::parse("").is_unknown());
        // A document name that is a prefix of another: "a b#" sorts before "a#" as text does.
        let mut v = [Location::new("a", "/x"), Location::new("a b", "/x")];
        v.sort();
        let texts: Vec<String> = v.iter().map(|l| l.to_string()).collect();
        let mut sorted = texts.clone();
        sorted.sort();
        assert_eq!(texts, sorted);
    }

    #[test]
    fn join_escapes_and_within_respects_token_boundaries() {
        let op = Location::new("s.json", "/paths/~1a~1{id}/get");
        let x = op.join("x-mcp/annotations").join("a~b");
        assert_eq!(x.pointer(), "/paths/~1a~1{id}/get/x-mcp~1annotations/a~0b");
        assert!(x.is_within(&op));
        assert!(op.is_within(&op));
        assert!(!Location::new("s.json", "/paths/~1a~1{id}/getter").is_within(&op));
        assert!(!Location::new("t.json", op.pointer()).is_within(&op));
    }

    #[test]
    fn serializes_as_text() {
        let l = Location::new("u", "/a");
        let s = serde_json::to_string(&l).unwrap();
        assert_eq!(s, "\"u#/a\"");
        assert_eq!(serde_json::from_str::<Location>(&s).unwrap(), l);
    }
}
