//! Loading: a spec from a file or an http(s) URL, JSON or YAML (chosen by content), plus every
//! document its `$ref`s reach. All I/O of the converter happens here; later stages are pure.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use url::Url;

use crate::node::{self, Builder, KeySeed, Node, Obj};
use crate::pointer::{DocId, JsonPointer, Loc};
use openapi_mcp_toolset::Location;

/// Why a spec could not be loaded. The cause of a read or parse failure is the error's
/// [`source`](std::error::Error::source), so a front end prints `name: cannot read: cause` by
/// walking the chain (as the CLI does) and can tell an I/O error from the rest.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The spec file could not be read.
    #[error("{source_name}: cannot read")]
    Read {
        source_name: String,
        #[source]
        source: std::io::Error,
    },
    /// The spec URL could not be fetched.
    #[error("{source_name}: cannot read")]
    Fetch {
        source_name: String,
        #[source]
        source: FetchError,
    },
    #[error("{source_name}: not valid JSON or YAML")]
    Parse {
        source_name: String,
        #[source]
        source: ParseError,
    },
    #[error("{source_name}#: not an OpenAPI or Swagger document: {message}")]
    NotOpenApi {
        source_name: String,
        message: String,
    },
    #[error(
        "{source_name}#/{field}: unsupported version {version:?} (supported: swagger 2.0, openapi 3.0.x and 3.1.x)"
    )]
    UnsupportedVersion {
        source_name: String,
        field: &'static str,
        version: String,
    },
}

/// Why a URL could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The request failed (its text only: reqwest's own causes are not part of the message).
    #[error("{0}")]
    Request(reqwest::Error),
    #[error("HTTP status {0}")]
    Status(reqwest::StatusCode),
}

/// Why a document is not valid JSON or YAML.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The document looks like JSON (it starts with `{` or `[`) and is neither JSON nor YAML: the
    /// JSON error is the one that says what is wrong.
    #[error("line {}, column {}: {}", .0.line(), .0.column(), .0)]
    Json(serde_json::Error),
    #[error("{0}")]
    Yaml(serde_yaml_ng::Error),
}

/// Which dialect the root document is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecVersion {
    Swagger2,
    OpenApi30,
    OpenApi31,
}

/// One parsed document (the root spec or a file/URL reached by a `$ref`).
#[derive(Debug)]
pub struct Document {
    /// Absolute URL (`file://` for local files) used to resolve relative `$ref`s.
    pub url: Url,
    /// How the document is named in messages: the path or URL as the user would recognise it.
    pub name: String,
    /// The parsed document. Subtrees no tool is built from (see [`Deferred`]) hold `null` here
    /// and are parsed on first access through [`DocumentSet::get`].
    pub root: Node,
    deferred: Deferred,
}

impl Document {
    /// The node at `ptr` (escaped), parsing a deferred subtree if the pointer reaches into one.
    pub fn lookup(&self, ptr: &str) -> Option<&Node> {
        let found = crate::pointer::lookup(&self.root, ptr);
        if found.is_none_or(Node::is_null)
            && !self.deferred.raw.is_empty()
            && let Some(v) = self.deferred.lookup(ptr)
        {
            return Some(v);
        }
        found
    }
}

/// Subtrees of a JSON document that no tool is built from (examples, webhooks), kept as raw
/// JSON instead of parsed values: they are a large share of some real specs (a fifth of
/// GitHub's), and parsing them into `Value`s would cost time and memory for nothing. The parsed
/// tree holds `null` in their place; anything that does reach into one (a `$ref` into
/// `components/examples`, say) gets it parsed on first access, so no content is lost.
#[derive(Debug, Default)]
struct Deferred {
    /// Escaped JSON pointer of each deferred subtree -> its index.
    by_ptr: HashMap<String, usize>,
    raw: Vec<Box<RawValue>>,
    parsed: Vec<OnceLock<Node>>,
}

impl Deferred {
    fn lookup(&self, ptr: &str) -> Option<&Node> {
        // The longest prefix of `ptr`, on a token boundary, that is a deferred subtree.
        let ends = ptr
            .match_indices('/')
            .map(|(i, _)| i)
            .skip(1)
            .chain(std::iter::once(ptr.len()));
        for end in ends {
            if let Some(&i) = self.by_ptr.get(&ptr[..end]) {
                let value = self.parsed[i]
                    .get_or_init(|| Node::from_json(self.raw[i].get()).unwrap_or_default());
                return crate::pointer::lookup(value, &ptr[end..]);
            }
        }
        None
    }
}

/// The root document and every document reachable through `$ref`s.
#[derive(Debug)]
pub struct DocumentSet {
    pub docs: Vec<Document>,
    index: HashMap<Url, DocId>,
    /// External documents that could not be loaded, with the reason.
    failed: HashMap<Url, String>,
}

/// A loaded spec.
#[derive(Debug)]
pub struct Spec {
    pub version: SpecVersion,
    pub docs: DocumentSet,
}

#[derive(Debug, thiserror::Error)]
pub enum RefError {
    #[error("unsupported $ref {0:?}")]
    Malformed(String),
    #[error("$ref {reference:?}: cannot load {url}: {reason}")]
    Unloadable {
        reference: String,
        url: String,
        reason: String,
    },
    #[error("$ref {reference:?} does not resolve: no node at {pointer} in {doc}")]
    Dangling {
        reference: String,
        doc: String,
        pointer: JsonPointer,
    },
}

impl DocumentSet {
    pub fn root(&self) -> &Node {
        &self.docs[0].root
    }

    /// The node at `loc`, if any.
    pub fn get(&self, loc: &Loc) -> Option<&Node> {
        self.docs.get(loc.doc)?.lookup(loc.ptr.as_str())
    }

    /// `file#/pointer` for messages.
    pub fn describe(&self, loc: &Loc) -> Location {
        Location::new(self.docs[loc.doc].name.as_str(), loc.ptr.as_str())
    }

    /// Resolves a `$ref` string found in document `from`.
    pub fn resolve(&self, from: DocId, reference: &str) -> Result<Loc, RefError> {
        self.resolve_node(from, reference).map(|(loc, _)| loc)
    }

    /// [`Self::resolve`], with the node it names (found by the same lookup).
    fn resolve_node(&self, from: DocId, reference: &str) -> Result<(Loc, &Node), RefError> {
        let (file, fragment) = match reference.split_once('#') {
            Some((f, frag)) => (f, frag),
            None => (reference, ""),
        };
        let doc = if file.is_empty() {
            from
        } else {
            let url = self.docs[from]
                .url
                .join(file)
                .map_err(|_| RefError::Malformed(reference.to_string()))?;
            let url = strip_fragment(url);
            match self.index.get(&url) {
                Some(&id) => id,
                None => {
                    return Err(RefError::Unloadable {
                        reference: reference.to_string(),
                        reason: self
                            .failed
                            .get(&url)
                            .cloned()
                            .unwrap_or_else(|| "not loaded".to_string()),
                        url: url.to_string(),
                    });
                }
            }
        };
        let decoded = percent_encoding::percent_decode_str(fragment).decode_utf8_lossy();
        if !decoded.is_empty() && !decoded.starts_with('/') {
            // Plain-name fragments (`#foo`, JSON Schema anchors) are not supported.
            return Err(RefError::Malformed(reference.to_string()));
        }
        let ptr = JsonPointer::parse(&decoded);
        match self.docs[doc].lookup(ptr.as_str()) {
            Some(node) => Ok((Loc::new(doc, ptr), node)),
            None => Err(RefError::Dangling {
                reference: reference.to_string(),
                doc: self.docs[doc].name.clone(),
                pointer: ptr,
            }),
        }
    }

    /// A map of name -> schema (`properties` and the like) at `loc`. Some specs write the whole
    /// map as a JSON Reference (DigitalOcean: `properties: {$ref: 'attributes.yml#/droplet_ids'}`,
    /// the target holding `droplet_ids: {type: array, ...}`); that is followed, and the map it
    /// names is returned with its location. A property literally named `$ref` has a schema object
    /// as its value, never a string, so it is not mistaken for one.
    pub fn schema_map<'a>(&'a self, loc: &Loc, map: Obj<'a>) -> Result<(Loc, Obj<'a>), RefError> {
        match map.get("$ref").and_then(Node::as_str) {
            Some(r) if map.len() == 1 => {
                let (target, node) = self.resolve_node(loc.doc, r)?;
                let (target, node) = self.deref_node(&target, node)?;
                match node.as_object() {
                    Some(m) => Ok((target, m)),
                    None => Err(RefError::Malformed(format!(
                        "{r} names {}, not a map of schemas",
                        self.describe(&target)
                    ))),
                }
            }
            _ => Ok((loc.clone(), map)),
        }
    }

    /// Follows `$ref` chains starting at `loc` until a node without `$ref` (cycles and dangling
    /// refs are errors). Returns the final location and node.
    pub fn deref<'a>(&'a self, loc: &Loc) -> Result<(Loc, &'a Node), RefError> {
        let node = self.get(loc).ok_or_else(|| RefError::Dangling {
            reference: loc.ptr.to_string(),
            doc: self.docs[loc.doc].name.clone(),
            pointer: loc.ptr.clone(),
        })?;
        self.deref_node(loc, node)
    }

    /// [`Self::deref`] for the node at `loc` the caller already holds: no lookup unless it is a
    /// `$ref`, and one lookup per `$ref` followed.
    pub fn deref_node<'a>(
        &'a self,
        loc: &Loc,
        node: &'a Node,
    ) -> Result<(Loc, &'a Node), RefError> {
        let (mut cur, mut node) = (loc.clone(), node);
        for _ in 0..64 {
            match node.get("$ref").and_then(Node::as_str) {
                Some(r) => (cur, node) = self.resolve_node(cur.doc, r)?,
                None => return Ok((cur, node)),
            }
        }
        Err(RefError::Malformed(format!(
            "$ref chain too long or cyclic at {}",
            self.describe(loc)
        )))
    }
}

fn strip_fragment(mut url: Url) -> Url {
    url.set_fragment(None);
    url
}

/// Where a spec comes from.
#[derive(Clone, Debug)]
pub enum SpecSource {
    Path(PathBuf),
    Url(Url),
}

impl SpecSource {
    /// `http://` and `https://` arguments are URLs; anything else is a path.
    pub fn parse(arg: &str) -> Self {
        match Url::parse(arg) {
            Ok(u) if u.scheme() == "http" || u.scheme() == "https" => SpecSource::Url(u),
            _ => SpecSource::Path(PathBuf::from(arg)),
        }
    }
}

/// Loads a spec and every document reachable through its `$ref`s.
pub async fn load(source: &SpecSource) -> Result<Spec, LoadError> {
    let (url, name) = match source {
        SpecSource::Path(p) => (file_url(p)?, p.display().to_string()),
        SpecSource::Url(u) => (u.clone(), u.to_string()),
    };
    let mut client = LazyClient::default();
    let bytes = match url.scheme() {
        "file" => fetch_file(&url).map_err(|source| LoadError::Read {
            source_name: name.clone(),
            source,
        })?,
        _ => fetch(client.get(), &url)
            .await
            .map_err(|source| LoadError::Fetch {
                source_name: name.clone(),
                source,
            })?,
    };
    // The file's bytes go as soon as they are parsed: a 13 MB spec parses to several times its
    // size, and the peak of loading is what the process keeps as its high-water mark.
    let root = parse_root(&bytes, &name)?;
    drop(bytes);
    load_parsed(root, url, name, Some(&mut client)).await
}

/// Loads a spec from bytes already in memory; relative `$ref`s resolve against `base`
/// (a `file://` or `http(s)://` URL), and are fetched when `base` allows it.
pub async fn load_bytes(bytes: &[u8], base: Url, name: String) -> Result<Spec, LoadError> {
    let mut client = LazyClient::default();
    load_bytes_with(bytes, base, name, Some(&mut client)).await
}

/// An HTTP client for fetching specs, built on first use: building one loads the system's
/// root certificates (tens of milliseconds), which a spec made of local files never needs.
#[derive(Default)]
struct LazyClient(Option<reqwest::Client>);

impl LazyClient {
    fn get(&mut self) -> &reqwest::Client {
        self.0.get_or_insert_with(http_client)
    }
}

/// Parses a single document without following external refs (synchronous).
pub fn load_single(bytes: &[u8], name: &str) -> Result<Spec, LoadError> {
    let (root, deferred) = parse_deferring(bytes).map_err(|source| LoadError::Parse {
        source_name: name.to_string(),
        source,
    })?;
    let version = detect_version(&root, name)?;
    let url = Url::parse("file:///spec").expect("static url");
    let mut index = HashMap::new();
    index.insert(url.clone(), 0);
    Ok(Spec {
        version,
        docs: DocumentSet {
            docs: vec![Document {
                url,
                name: name.to_string(),
                root,
                deferred,
            }],
            index,
            failed: HashMap::new(),
        },
    })
}

async fn load_bytes_with(
    bytes: &[u8],
    url: Url,
    name: String,
    client: Option<&mut LazyClient>,
) -> Result<Spec, LoadError> {
    let root = parse_root(bytes, &name)?;
    load_parsed(root, url, name, client).await
}

fn parse_root(bytes: &[u8], name: &str) -> Result<(Node, Deferred), LoadError> {
    parse_deferring(bytes).map_err(|source| LoadError::Parse {
        source_name: name.to_string(),
        source,
    })
}

async fn load_parsed(
    (root, deferred): (Node, Deferred),
    url: Url,
    name: String,
    mut client: Option<&mut LazyClient>,
) -> Result<Spec, LoadError> {
    let version = detect_version(&root, &name)?;
    let mut set = DocumentSet {
        docs: Vec::new(),
        index: HashMap::new(),
        failed: HashMap::new(),
    };
    set.index.insert(url.clone(), 0);
    set.docs.push(Document {
        url,
        name,
        root,
        deferred,
    });

    // Breadth-first over external references.
    let mut queue: VecDeque<DocId> = VecDeque::from([0]);
    while let Some(id) = queue.pop_front() {
        let mut targets = Vec::new();
        collect_external_refs(&set.docs[id].root, &mut targets);
        for r in targets {
            let Ok(target) = set.docs[id].url.join(&r) else {
                continue;
            };
            let target = strip_fragment(target);
            if set.index.contains_key(&target) || set.failed.contains_key(&target) {
                continue;
            }
            // A document that cannot be loaded is a reason in the `$ref`s' diagnostics (text).
            let fetched = match (target.scheme(), client.as_deref_mut()) {
                ("file", _) => fetch_file(&target).map_err(|e| e.to_string()),
                ("http" | "https", Some(c)) => {
                    fetch(c.get(), &target).await.map_err(|e| e.to_string())
                }
                (s, _) => Err(format!("unsupported scheme {s:?}")),
            };
            let parsed = fetched.and_then(|b| parse_deferring(&b).map_err(|e| e.to_string()));
            match parsed {
                Ok((root, deferred)) => {
                    let new_id = set.docs.len();
                    let name = display_name(&set.docs[0], &target);
                    set.index.insert(target.clone(), new_id);
                    set.docs.push(Document {
                        url: target,
                        name,
                        root,
                        deferred,
                    });
                    queue.push_back(new_id);
                }
                Err(reason) => {
                    set.failed.insert(target, reason);
                }
            }
        }
    }
    Ok(Spec { version, docs: set })
}

/// Names an external document relative to the root document's directory when both are files.
fn display_name(root: &Document, target: &Url) -> String {
    if target.scheme() == "file"
        && let (Ok(t), Ok(r)) = (target.to_file_path(), root.url.to_file_path())
    {
        if let Some(dir) = Path::new(&root.name).parent()
            && let Some(rdir) = r.parent()
            && let Ok(rel) = t.strip_prefix(rdir)
        {
            return dir.join(rel).display().to_string();
        }
        return t.display().to_string();
    }
    target.to_string()
}

fn collect_external_refs(v: &Node, out: &mut Vec<String>) {
    // Iterative walk: documents can be deep.
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        if let Some(m) = v.as_object() {
            if let Some(r) = m.get("$ref").and_then(Node::as_str)
                && !r.starts_with('#')
                && !r.is_empty()
            {
                let file = r.split('#').next().unwrap_or_default();
                if !file.is_empty() && !out.iter().any(|o| o == file) {
                    out.push(file.to_string());
                }
            }
            stack.extend(m.values());
        } else if let Some(a) = v.as_array() {
            stack.extend(a.iter());
        }
    }
}

fn file_url(p: &Path) -> Result<Url, LoadError> {
    let read = |source| LoadError::Read {
        source_name: p.display().to_string(),
        source,
    };
    let abs = std::path::absolute(p).map_err(read)?;
    Url::from_file_path(&abs).map_err(|()| {
        read(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a valid file path",
        ))
    })
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap_or_default()
}

fn fetch_file(url: &Url) -> std::io::Result<Vec<u8>> {
    let path = url.to_file_path().map_err(|()| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{url} is not a local path"),
        )
    })?;
    std::fs::read(&path)
}

/// Fetches an http(s) URL (`file:` URLs are read by [`fetch_file`]).
async fn fetch(client: &reqwest::Client, url: &Url) -> Result<Vec<u8>, FetchError> {
    let resp = client
        .get(url.clone())
        .send()
        .await
        .map_err(FetchError::Request)?;
    if !resp.status().is_success() {
        return Err(FetchError::Status(resp.status()));
    }
    resp.bytes()
        .await
        .map(|b| b.to_vec())
        .map_err(FetchError::Request)
}

/// Parses JSON or YAML, chosen by content: a document whose first significant character is `{`
/// or `[` is JSON; anything else is YAML. YAML keys that are not strings (`200:`) become strings.
pub fn parse_document(bytes: &[u8]) -> Result<Node, ParseError> {
    parse_tree(bytes, false).map(|(root, _)| root)
}

/// [`parse_document`], leaving the [`Deferred`] subtrees of a JSON document unparsed.
fn parse_deferring(bytes: &[u8]) -> Result<(Node, Deferred), ParseError> {
    parse_tree(bytes, true)
}

fn parse_tree(bytes: &[u8], defer: bool) -> Result<(Node, Deferred), ParseError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{') | Some(b'[')) {
        let mut deferred = Vec::new();
        let mut builder = Builder::default();
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let parsed = if defer {
            Tracked {
                at: At::Root,
                ptr: JsonPointer::root(),
                deferred: &mut deferred,
                builder: &mut builder,
            }
            .deserialize(&mut de)
        } else {
            builder.seed().deserialize(&mut de)
        }
        .and_then(|v| de.end().map(|()| v));
        match parsed {
            Ok(v) => {
                let mut d = Deferred::default();
                for (ptr, raw) in deferred {
                    d.by_ptr.insert(ptr, d.raw.len());
                    d.raw.push(raw);
                    d.parsed.push(OnceLock::new());
                }
                return Ok((v, d));
            }
            Err(json_err) => {
                // JSON-looking YAML (flow style) is rare but legal; fall through to YAML, and
                // report the JSON error if YAML fails too.
                return parse_yaml(bytes)
                    .map(|v| (v, Deferred::default()))
                    .map_err(|_| ParseError::Json(json_err));
            }
        }
    }
    parse_yaml(bytes)
        .map(|v| (v, Deferred::default()))
        .map_err(ParseError::Yaml)
}

/// Where the JSON parser is in an OpenAPI document, as far as deferring subtrees goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    Root,
    Components,
    Paths,
    PathItem,
    Operation,
    /// A map of responses (an operation's, or a named collection of them).
    Responses,
    Response,
    RequestBody,
    /// A map of request bodies (`components/requestBodies`).
    RequestBodies,
    Content,
    MediaType,
}

/// What to do with the value under `key` at `at`.
enum Next {
    Track(At),
    Defer,
    Parse,
}

fn next(at: At, key: &str) -> Next {
    use At::*;
    match (at, key) {
        (Root, "webhooks" | "x-webhooks") => Next::Defer,
        (Root, "components") => Next::Track(Components),
        (Root, "paths") => Next::Track(Paths),
        (Root, "responses") => Next::Track(Responses), // Swagger 2.0
        (Components, "examples") => Next::Defer,
        (Components, "responses") => Next::Track(Responses),
        (Components, "requestBodies") => Next::Track(RequestBodies),
        (Paths, _) => Next::Track(PathItem),
        (PathItem, k) if openapi_mcp_toolset::model::HttpMethod::parse(k).is_some() => {
            Next::Track(Operation)
        }
        (Operation, "responses") => Next::Track(Responses),
        (Operation, "requestBody") => Next::Track(RequestBody),
        (Responses, _) => Next::Track(Response),
        (RequestBodies, _) => Next::Track(RequestBody),
        (Response, "examples") => Next::Defer, // Swagger 2.0: examples by media type
        (Response | RequestBody, "content") => Next::Track(Content),
        (Content, _) => Next::Track(MediaType),
        (MediaType, "example" | "examples") => Next::Defer,
        _ => Next::Parse,
    }
}

/// Parses a JSON value at a known place of an OpenAPI document, deferring the subtrees [`next`]
/// says to (recording their pointers), and parsing everything else into [`Node`]s.
struct Tracked<'a> {
    at: At,
    ptr: JsonPointer,
    deferred: &'a mut Vec<(String, Box<RawValue>)>,
    builder: &'a mut Builder,
}

impl<'de> DeserializeSeed<'de> for Tracked<'_> {
    type Value = Node;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Tracked<'_> {
    type Value = Node;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Node, E> {
        self.builder.seed().visit_bool(v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Node, E> {
        self.builder.seed().visit_i64(v)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Node, E> {
        self.builder.seed().visit_u64(v)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Node, E> {
        self.builder.seed().visit_f64(v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Node, E> {
        self.builder.seed().visit_str(v)
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Node, E> {
        self.builder.seed().visit_string(v)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Node, E> {
        self.builder.seed().visit_unit()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Node, A::Error> {
        self.builder.seed().visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let start = self.builder.begin_object();
        while let Some(k) = map.next_key_seed(KeySeed(&mut *self.builder))? {
            let v = match next(self.at, &k) {
                Next::Parse => map.next_value_seed(self.builder.seed())?,
                Next::Track(at) => map.next_value_seed(Tracked {
                    at,
                    ptr: self.ptr.join(&*k),
                    deferred: &mut *self.deferred,
                    builder: &mut *self.builder,
                })?,
                Next::Defer => {
                    let raw = map.next_value::<Box<RawValue>>()?;
                    self.deferred
                        .push((self.ptr.join(&*k).as_str().to_owned(), raw));
                    Node::default()
                }
            };
            self.builder.push_member(k, v);
        }
        Ok(self.builder.end_object(start))
    }
}

fn parse_yaml(bytes: &[u8]) -> Result<Node, serde_yaml_ng::Error> {
    let mut b = Builder::default();
    let de = serde_yaml_ng::Deserializer::from_slice(bytes);
    YamlSeed(&mut b).deserialize(de)
}

/// Parses one YAML value into a [`Node`]: keys that are not strings (`200:`) become strings
/// (their JSON text), integers beyond 64 bits become floats, `<<` merge keys are applied, and
/// tags (`!Tag value`) are dropped.
struct YamlSeed<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for YamlSeed<'_> {
    type Value = Node;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
}

/// A YAML mapping key of any type, as a shared string key.
struct YamlKeySeed<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for YamlKeySeed<'_> {
    type Value = crate::node::Key;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let b = self.0;
        let node = YamlSeed(&mut *b).deserialize(d)?;
        Ok(match node.as_str() {
            Some(s) => b.key(s),
            None if node.is_null() => b.key("null"),
            None => b.key(&serde_json::to_string(&node).unwrap_or_default()),
        })
    }
}

impl<'de> Visitor<'de> for YamlSeed<'_> {
    type Value = Node;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::from(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(node::number_i64(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(node::number_u64(v))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(i64::try_from(v)
            .map(node::number_i64)
            .unwrap_or_else(|_| node::number_f64(v as f64)))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Node, E> {
        Ok(u64::try_from(v)
            .map(node::number_u64)
            .unwrap_or_else(|_| node::number_f64(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(node::number_f64(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::string(v))
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::default())
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::default())
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let b = self.0;
        let start = b.begin_array();
        while let Some(v) = seq.next_element_seed(YamlSeed(&mut *b))? {
            b.push_item(v);
        }
        Ok(b.end_array(start))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let b = self.0;
        let start = b.begin_object();
        let mut merges = Vec::new();
        while let Some(k) = map.next_key_seed(YamlKeySeed(&mut *b))? {
            let v = map.next_value_seed(YamlSeed(&mut *b))?;
            if &*k == "<<" {
                merges.push(v);
            } else {
                b.push_member(k, v);
            }
        }
        // Merged mappings add the keys this one does not have, in their order.
        for m in merges {
            let sources = match m.as_array() {
                Some(a) => a.to_vec(),
                None => vec![m],
            };
            for src in &sources {
                for (k, v) in src.as_object().iter().flat_map(|o| o.entries()) {
                    if !b.has_member_since(start, k) {
                        b.push_member(k.clone(), v.clone());
                    }
                }
            }
        }
        Ok(b.end_object(start))
    }
    fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<Node, A::Error> {
        use serde::de::VariantAccess;
        let b = self.0;
        let (_tag, variant) = data.variant_seed(YamlKeySeed(&mut *b))?;
        variant.newtype_variant_seed(YamlSeed(b))
    }
}

fn detect_version(root: &Node, name: &str) -> Result<SpecVersion, LoadError> {
    let not = |message: &str| LoadError::NotOpenApi {
        source_name: name.to_string(),
        message: message.to_string(),
    };
    let obj = root
        .as_object()
        .ok_or_else(|| not("the document root is not an object"))?;
    if let Some(v) = obj.get("openapi") {
        let s = value_as_version(v);
        return if s.starts_with("3.0") {
            Ok(SpecVersion::OpenApi30)
        } else if s.starts_with("3.1") || s.starts_with("3.2") {
            Ok(SpecVersion::OpenApi31)
        } else {
            Err(LoadError::UnsupportedVersion {
                source_name: name.to_string(),
                field: "openapi",
                version: s,
            })
        };
    }
    if let Some(v) = obj.get("swagger") {
        let s = value_as_version(v);
        return if s == "2.0" || s == "2" {
            Ok(SpecVersion::Swagger2)
        } else {
            Err(LoadError::UnsupportedVersion {
                source_name: name.to_string(),
                field: "swagger",
                version: s,
            })
        };
    }
    Err(not("it has neither an `openapi` nor a `swagger` field"))
}

fn value_as_version(v: &Node) -> String {
    match v.as_str() {
        Some(s) => s.to_string(),
        None => serde_json::to_string(v).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn yaml_integer_keys_become_strings() {
        let v = parse_document(b"responses:\n  200:\n    description: ok\n").unwrap();
        assert!(crate::pointer::lookup(&v, "/responses/200/description").is_some());
    }

    #[test]
    fn yaml_merge_keys_tags_odd_keys_and_big_integers() {
        let yaml = b"base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n  z: !Tag 4\n  y: 5\nbig: 123456789012345678901234567890\n? [1, 2]\n: seq\n~: n\ntrue: t\n";
        let v = parse_document(yaml).unwrap().to_value();
        let m = v["m"].as_object().unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["y", "z", "x"]);
        assert_eq!(v["m"], serde_json::json!({"y": 5, "z": 4, "x": 1}));
        assert_eq!(v["big"].as_f64(), Some(1.2345678901234568e29));
        assert_eq!(v["[1,2]"], "seq");
        assert_eq!(v["null"], "n");
        assert_eq!(v["true"], "t");
    }

    #[test]
    fn json_chosen_by_content() {
        let v = parse_document(b"  {\"openapi\": \"3.0.0\"}").unwrap();
        assert_eq!(v["openapi"], "3.0.0");
    }

    #[test]
    fn not_openapi_is_an_error_naming_the_file() {
        let err = load_single(b"{\"name\": \"x\"}", "pkg.json").unwrap_err();
        assert!(err.to_string().starts_with("pkg.json#"), "{err}");
        let err = load_single(b"openapi: 4.0.0\n", "x.yaml").unwrap_err();
        assert!(err.to_string().contains("x.yaml#/openapi"), "{err}");
    }

    const WITH_EXAMPLES: &str = r##"{
      "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
      "paths": {"/a/{id}": {"get": {
        "parameters": [{"name": "id", "in": "path", "required": true,
                        "schema": {"$ref": "#/components/examples/odd/value"}}],
        "responses": {"200": {"description": "ok", "content": {"application/json": {
          "schema": {"type": "object"},
          "example": {"big": [1, 2, 3]},
          "examples": {"one": {"$ref": "#/components/examples/odd"}}}}}}}}},
      "components": {"examples": {"odd": {"value": {"type": "integer", "minimum": 1}}},
                     "schemas": {"S": {"type": "string", "example": "kept"}}},
      "webhooks": {"ping": {"post": {"responses": {"200": {"description": "ok"}}}}}
    }"##;

    #[test]
    fn deferred_subtrees_are_not_parsed_but_stay_reachable() {
        let spec = load_single(WITH_EXAMPLES.as_bytes(), "ex.json").unwrap();
        let doc = &spec.docs.docs[0];
        // Examples and webhooks are left as raw JSON: `null` in the tree, the key kept.
        assert!(doc.root["components"]["examples"].is_null());
        assert!(doc.root["webhooks"].is_null());
        assert!(doc.root.get("webhooks").is_some());
        let media =
            &doc.root["paths"]["/a/{id}"]["get"]["responses"]["200"]["content"]["application/json"];
        assert!(media["example"].is_null());
        assert_eq!(
            media["schema"].to_value(),
            serde_json::json!({"type": "object"})
        );
        // Schema examples are not deferred.
        assert_eq!(doc.root["components"]["schemas"]["S"]["example"], "kept");
        // A `$ref` into a deferred subtree resolves, and reads the parsed node.
        let from = Loc::new(
            0,
            JsonPointer::parse("/paths/~1a~1{id}/get/parameters/0/schema"),
        );
        let (loc, node) = spec.docs.deref(&from).unwrap();
        assert_eq!(loc.ptr.as_str(), "/components/examples/odd/value");
        assert_eq!(
            node.to_value(),
            serde_json::json!({"type": "integer", "minimum": 1})
        );
        let webhook = Loc::new(0, JsonPointer::parse("/webhooks/ping/post/responses/200"));
        assert_eq!(spec.docs.get(&webhook).unwrap()["description"], "ok");
        assert!(
            spec.docs
                .get(&Loc::new(0, JsonPointer::parse("/webhooks/nope")))
                .is_none()
        );
        // The public parser returns the whole tree.
        let full = parse_document(WITH_EXAMPLES.as_bytes()).unwrap();
        let reparsed: Value = serde_json::from_str(WITH_EXAMPLES).unwrap();
        assert_eq!(full.to_value(), reparsed);
    }
}
