//! Loading: a spec from a file or an http(s) URL, JSON or YAML (chosen by content), plus every
//! document its `$ref`s reach. All I/O of the converter happens here; later stages are pure.
//!
//! A spec is untrusted input, and so is every document it reaches: what loading may read and
//! connect to is bounded as [`LoadOptions`] describes.

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

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
    /// The URL, or a redirect on the way to it, is an address the loader does not connect to
    /// from here (see [`LoadOptions`]).
    #[error("refused: {0}")]
    Refused(String),
    /// A redirect without a usable target, or too many of them.
    #[error("{0}")]
    Redirect(String),
    /// The body is larger than [`LoadOptions::max_document_bytes`].
    #[error("larger than the limit of {}", bytes(*.0))]
    TooLarge(u64),
}

/// Why a document is not valid JSON or YAML.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The document looks like JSON (it starts with `{` or `[`) and is not: it is parsed as JSON
    /// only, never as YAML (YAML's flow style can look the same, but specs written in YAML start
    /// with a key, `openapi:` or `swagger:`; and parsing a broken JSON document as YAML again
    /// can cost minutes).
    #[error("line {}, column {}: {}", .0.line(), .0.column(), .0)]
    Json(serde_json::Error),
    #[error("{0}")]
    Yaml(serde_yaml_ng::Error),
    /// YAML flow collections (`[...]`, `{...}`) nested deeper than the YAML parser goes
    /// ([`MAX_YAML_FLOW_DEPTH`]), refused before parsing: libyaml's time grows with the size of
    /// the document times that depth.
    #[error(
        "line {line}: flow collections ([...] or {{...}}) nested deeper than {MAX_YAML_FLOW_DEPTH} levels"
    )]
    TooDeep { line: usize },
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
    /// Where the document came from, which decides what its `$ref`s may reach.
    origin: Origin,
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
    /// External documents that could not be loaded for documents of an origin, with the reason
    /// (by origin: a URL refused to a remote document may load for a local one).
    failed: HashMap<(Url, Origin), String>,
    /// [`LoadOptions::private_refs`].
    private_refs: bool,
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
    /// The document holding the `$ref` may not use the document it names (see [`LoadOptions`]).
    #[error("$ref {reference:?}: refused to use {url}: {reason}")]
    Refused {
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
            let origin = self.docs[from].origin;
            let target = self.index.get(&url).copied();
            if target != Some(from)
                && let Some(reason) = refusal(
                    origin,
                    &url,
                    target.map(|t| self.docs[t].origin),
                    self.private_refs,
                )
            {
                return Err(RefError::Refused {
                    reference: reference.to_string(),
                    url: url.to_string(),
                    reason: reason.to_string(),
                });
            }
            match target {
                Some(id) => id,
                None => {
                    return Err(RefError::Unloadable {
                        reference: reference.to_string(),
                        reason: self
                            .failed
                            .get(&(url.clone(), origin))
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

/// Loads a spec and every document reachable through its `$ref`s, with the default
/// [`LoadOptions`].
pub async fn load(source: &SpecSource) -> Result<Spec, LoadError> {
    load_with(source, &LoadOptions::default()).await
}

/// What loading may read and connect to. A spec and the documents it reaches are untrusted: a
/// `$ref` names any URL, and a server answers what it likes. So, whatever the options:
///
/// - **Local files** are read only for local documents: a document fetched over http(s) (or
///   given to [`load_bytes`] with an http(s) base) may not `$ref` a `file:` URL: the file is
///   not read, and resolving the `$ref` is a [`RefError::Refused`] (which the converter
///   reports at the `$ref`). A local spec may `$ref` http(s) documents.
/// - **Size**: no document (the spec, or one a `$ref` reaches; a file or an http body) may be
///   larger than [`Self::max_document_bytes`], and only regular files are read (not devices
///   such as `/dev/zero`, FIFOs or directories).
/// - **Addresses**: each connection's address is classified as public, private (RFC 1918,
///   unique-local IPv6, CGNAT and the other ranges that are not globally routable), loopback
///   (127.0.0.0/8, `::1`, the unspecified address) or link-local (169.254.0.0/16, `fe80::/10`,
///   and the cloud metadata addresses outside them: 100.100.100.200, `fd00:ec2::254`), by the
///   URL's literal address or by every address its host name resolves to (the least public one
///   counts; IPv4-mapped and NAT64 IPv6 addresses count as their IPv4 address). Redirects are
///   followed by the loader (at most 10), so every hop is checked. Then:
///   - the spec's own URL may be any address (`http://127.0.0.1:8080/openapi.json` is the
///     user's choice); its redirects may not lead to a link-local address;
///   - a remote `$ref` (an http(s) URL, from any document) and its redirects may not reach a
///     link-local address, nor, with [`Self::private_refs`] off, a private or loopback one;
///   - once a hop is public, every later hop must be public (a public server cannot redirect
///     the loader inward), and a document any hop of which was public may only `$ref` public
///     addresses.
///
///   A remote `$ref` refused this way fails to load ([`RefError::Unloadable`], its reason
///   starting with `refused:`), and one that names a loaded document it may not use is a
///   [`RefError::Refused`]; a refused redirect of the spec's own URL is a load error
///   ([`FetchError::Refused`]). With an HTTP proxy configured (`HTTPS_PROXY` and the like), the
///   proxy resolves host names, so only literal addresses are checked.
/// - **Parsing**: a document that starts with `{` or `[` is JSON only ([`ParseError::Json`]),
///   and a YAML document whose flow collections nest deeper than [`MAX_YAML_FLOW_DEPTH`] is
///   refused before it is parsed ([`ParseError::TooDeep`]).
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// The largest document read, in bytes: 256 MiB by default (the largest real specs are
    /// about 30 MB).
    pub max_document_bytes: u64,
    /// Whether remote `$ref`s from a local document, or from a document fetched from a
    /// non-public address, may reach private and loopback addresses (`true` by default).
    pub private_refs: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_document_bytes: 256 << 20,
            private_refs: true,
        }
    }
}

/// [`load`], with `opts`.
pub async fn load_with(source: &SpecSource, opts: &LoadOptions) -> Result<Spec, LoadError> {
    let (bytes, url, origin, name, mut fetcher) = fetch_root(source, opts).await?;
    // The file's bytes go as soon as they are parsed: a 13 MB spec parses to several times its
    // size, and the peak of loading is what the process keeps as its high-water mark.
    let root = parse_root(&bytes, &name)?;
    drop(bytes);
    load_parsed(root, url, origin, name, Some(&mut fetcher), opts).await
}

/// [`load_with`], with the root document rewritten by `edit` (given the spec's name and the
/// document as a `serde_json::Value`) before the loader goes on: `--overlay`
/// ([`crate::overlay`]). Only the root document is edited; documents its `$ref`s reach are
/// loaded as they are, relative `$ref`s resolving against the spec's own location. The edited
/// document is held to [`LoadOptions::max_document_bytes`] too. [`load_with`] is the path of
/// specs without overlays, unchanged.
pub async fn load_edited<E: From<LoadError>>(
    source: &SpecSource,
    opts: &LoadOptions,
    edit: impl FnOnce(&str, serde_json::Value) -> Result<serde_json::Value, E>,
) -> Result<Spec, E> {
    let (raw, url, origin, name, mut fetcher) = fetch_root(source, opts).await?;
    let value = parse_document(&raw)
        .map_err(|source| LoadError::Parse {
            source_name: name.clone(),
            source,
        })?
        .to_value();
    drop(raw);
    let value = edit(&name, value)?;
    let json = serde_json::to_vec(&value).map_err(|e| LoadError::Read {
        source_name: name.clone(),
        source: std::io::Error::other(e),
    })?;
    drop(value);
    if json.len() as u64 > opts.max_document_bytes {
        return Err(LoadError::Read {
            source_name: name,
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "with the overlays applied, larger than the limit of {}",
                    bytes(opts.max_document_bytes)
                ),
            ),
        }
        .into());
    }
    let root = parse_root(&json, &name)?;
    drop(json);
    Ok(load_parsed(root, url, origin, name, Some(&mut fetcher), opts).await?)
}

/// Reads a local file other than the spec (an overlay) under the loader's rules for the spec
/// file: at most `max_bytes`, no directories.
pub(crate) fn read_local(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    let url = file_url(path).map_err(|e| match e {
        LoadError::Read { source, .. } => source,
        other => std::io::Error::other(other.to_string()),
    })?;
    fetch_file(&url, max_bytes, FileKinds::Root)
}

/// The spec's bytes, URL, origin and name, and the fetcher its `$ref`s are fetched with.
async fn fetch_root(
    source: &SpecSource,
    opts: &LoadOptions,
) -> Result<(Vec<u8>, Url, Origin, String, Fetcher), LoadError> {
    let (url, name) = match source {
        SpecSource::Path(p) => (file_url(p)?, p.display().to_string()),
        SpecSource::Url(u) => (u.clone(), u.to_string()),
    };
    let mut fetcher = Fetcher::default();
    let (bytes, origin) = match url.scheme() {
        "file" => fetch_file(&url, opts.max_document_bytes, FileKinds::Root)
            .map(|b| (b, Origin::Local))
            .map_err(|source| LoadError::Read {
                source_name: name.clone(),
                source,
            })?,
        _ => fetcher
            .fetch(&url, Hops::Root, opts.max_document_bytes)
            .await
            .map_err(|source| LoadError::Fetch {
                source_name: name.clone(),
                source,
            })?,
    };
    Ok((bytes, url, origin, name, fetcher))
}

/// Loads a spec from bytes already in memory; relative `$ref`s resolve against `base`
/// (a `file://` or `http(s)://` URL), and are fetched when `base` allows it. With an http(s)
/// `base`, the spec counts as a remote document (see [`LoadOptions`]): one from a public
/// address unless `base`'s host is a literal non-public address or `localhost`.
pub async fn load_bytes(bytes: &[u8], base: Url, name: String) -> Result<Spec, LoadError> {
    let mut fetcher = Fetcher::default();
    let origin = match base.scheme() {
        "file" => Origin::Local,
        _ => match literal_reach(&base) {
            Some(Reach::Public) | None => Origin::Public,
            Some(_) => Origin::Internal,
        },
    };
    let root = parse_root(bytes, &name)?;
    let opts = LoadOptions::default();
    load_parsed(root, base, origin, name, Some(&mut fetcher), &opts).await
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
                origin: Origin::Local,
            }],
            index,
            failed: HashMap::new(),
            private_refs: true,
        },
    })
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
    origin: Origin,
    name: String,
    mut fetcher: Option<&mut Fetcher>,
    opts: &LoadOptions,
) -> Result<Spec, LoadError> {
    let version = detect_version(&root, &name)?;
    let mut set = DocumentSet {
        docs: Vec::new(),
        index: HashMap::new(),
        failed: HashMap::new(),
        private_refs: opts.private_refs,
    };
    set.index.insert(url.clone(), 0);
    set.docs.push(Document {
        url,
        name,
        root,
        deferred,
        origin,
    });

    // Breadth-first over external references.
    let mut queue: VecDeque<DocId> = VecDeque::from([0]);
    while let Some(id) = queue.pop_front() {
        let mut targets = Vec::new();
        collect_external_refs(&set.docs[id].root, &mut targets);
        let from = set.docs[id].origin;
        for r in targets {
            let Ok(target) = set.docs[id].url.join(&r) else {
                continue;
            };
            let target = strip_fragment(target);
            let key = (target, from);
            if set.index.contains_key(&key.0) || set.failed.contains_key(&key) {
                continue;
            }
            // A local file a remote document names is not read: resolving the `$ref` says why.
            if refusal(from, &key.0, None, opts.private_refs).is_some() {
                continue;
            }
            // A document that cannot be loaded is a reason in the `$ref`s' diagnostics (text).
            let fetched = match (key.0.scheme(), fetcher.as_deref_mut()) {
                ("file", _) => fetch_file(&key.0, opts.max_document_bytes, FileKinds::Referenced)
                    .map(|b| (b, Origin::Local))
                    .map_err(|e| e.to_string()),
                ("http" | "https", Some(f)) => {
                    let hops = Hops::Ref {
                        from,
                        private: opts.private_refs,
                    };
                    f.fetch(&key.0, hops, opts.max_document_bytes)
                        .await
                        .map_err(|e| e.to_string())
                }
                (s, _) => Err(format!("unsupported scheme {s:?}")),
            };
            let parsed = fetched.and_then(|(b, origin)| {
                parse_deferring(&b)
                    .map(|doc| (doc, origin))
                    .map_err(|e| e.to_string())
            });
            match parsed {
                Ok(((root, deferred), origin)) => {
                    let (target, _) = key;
                    let new_id = set.docs.len();
                    let name = display_name(&set.docs[0], &target);
                    set.index.insert(target.clone(), new_id);
                    set.docs.push(Document {
                        url: target,
                        name,
                        root,
                        deferred,
                        origin,
                    });
                    queue.push_back(new_id);
                }
                Err(reason) => {
                    set.failed.insert(key, reason);
                }
            }
        }
    }
    Ok(Spec { version, docs: set })
}

/// Where a document came from, which decides what its `$ref`s may reach (see [`LoadOptions`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Origin {
    /// A local file.
    Local,
    /// Fetched over http(s), from non-public addresses only (every hop).
    Internal,
    /// Fetched over http(s), some hop from a public address.
    Public,
}

/// Why a document of origin `from` may not use the document at `target` (of origin `loaded`
/// when it is loaded), if it may not. Whether a remote target may be fetched at all is decided
/// hop by hop when fetching ([`Hops`]); this is what holds for documents already loaded too.
fn refusal(
    from: Origin,
    target: &Url,
    loaded: Option<Origin>,
    private_refs: bool,
) -> Option<&'static str> {
    if target.scheme() == "file" {
        return (from != Origin::Local)
            .then_some("a document fetched over http(s) may not reference a local file");
    }
    match (from, loaded) {
        (Origin::Public, Some(Origin::Internal)) => Some(
            "it was fetched from a non-public address, and a document from a public address may only reference public ones",
        ),
        (_, Some(Origin::Internal)) if !private_refs => Some(
            "it was fetched from a non-public address, and remote $refs are limited to public addresses",
        ),
        _ => None,
    }
}

/// What kind of address a host is. The order ranks them from the most to the least public: a
/// limit admits its own kind and those before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Reach {
    Public,
    /// Not globally routable, other than the kinds below.
    Private,
    Loopback,
    /// Link-local, and the cloud metadata services' addresses.
    LinkLocal,
}

impl Reach {
    fn of(ip: IpAddr) -> Reach {
        match ip {
            IpAddr::V4(a) => Reach::of_v4(a),
            IpAddr::V6(a) => Reach::of_v6(a),
        }
    }

    fn of_v4(a: Ipv4Addr) -> Reach {
        let [b0, b1, b2, _] = a.octets();
        if a.is_link_local() || a == Ipv4Addr::new(100, 100, 100, 200) {
            // 100.100.100.200: Alibaba Cloud's metadata service.
            Reach::LinkLocal
        } else if a.is_loopback() || b0 == 0 {
            // 0.0.0.0/8 "this network": connecting to 0.0.0.0 reaches this machine.
            Reach::Loopback
        } else if a.is_private()
            || (b0 == 100 && (64..128).contains(&b1)) // shared address space (CGNAT)
            || (b0 == 192 && b1 == 0 && b2 == 0) // IETF protocol assignments
            || (b0 == 198 && (18..20).contains(&b1)) // benchmarking
            || a.is_documentation()
            || a.is_multicast()
            || b0 >= 240
        // reserved, and broadcast
        {
            Reach::Private
        } else {
            Reach::Public
        }
    }

    fn of_v6(a: Ipv6Addr) -> Reach {
        let s = a.segments();
        let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
        if let Some(v4) = a.to_ipv4_mapped() {
            Reach::of_v4(v4)
        } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
            // NAT64: the IPv4 address in the last 32 bits.
            Reach::of_v4(v4(s[6], s[7]))
        } else if s[0] == 0x2002 {
            // 6to4: the IPv4 address in bits 16..48.
            Reach::of_v4(v4(s[1], s[2]))
        } else if (s[0] & 0xffc0) == 0xfe80
            || a == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
        {
            // fe80::/10, and AWS's metadata service over IPv6.
            Reach::LinkLocal
        } else if a.is_loopback() || a.is_unspecified() {
            Reach::Loopback
        } else if s[..6] == [0; 6] {
            // IPv4-compatible (deprecated): the IPv4 address in the last 32 bits.
            Reach::of_v4(v4(s[6], s[7]))
        } else if (s[0] & 0xfe00) == 0xfc00 // unique local
            || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
            || a.is_multicast()
            || (s[0] == 0x2001 && s[1] == 0xdb8) // documentation
            || s[0] == 0x100 && s[1..4] == [0, 0, 0]
        // discard-only
        {
            Reach::Private
        } else {
            Reach::Public
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Reach::Public => "a public address",
            Reach::Private => "a private (not globally routable) address",
            Reach::Loopback => "a loopback address",
            Reach::LinkLocal => "a link-local address (where cloud metadata services answer)",
        }
    }
}

/// The kind of `url`'s host when the URL names it without DNS: a literal address, or
/// `localhost` (`*.localhost` included, which resolvers answer with loopback addresses).
fn literal_reach(url: &Url) -> Option<Reach> {
    match url.host()? {
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            (d == "localhost" || d.ends_with(".localhost")).then_some(Reach::Loopback)
        }
        _ => ip_literal(url),
    }
}

/// The kind of `url`'s host when it is a literal address.
fn ip_literal(url: &Url) -> Option<Reach> {
    match url.host()? {
        url::Host::Ipv4(a) => Some(Reach::of_v4(a)),
        url::Host::Ipv6(a) => Some(Reach::of_v6(a)),
        url::Host::Domain(_) => None,
    }
}

/// Which fetch a hop belongs to, for what it may reach (see [`LoadOptions`]).
#[derive(Clone, Copy, Debug)]
enum Hops {
    /// The spec's own URL.
    Root,
    /// A remote `$ref` in a document of origin `from`.
    Ref { from: Origin, private: bool },
}

impl Hops {
    /// The least public kind of address hop number `hop` may reach (after a public hop when
    /// `after_public`), and the rule that says so.
    fn limit(self, hop: usize, after_public: bool) -> (Reach, &'static str) {
        if after_public {
            return (
                Reach::Public,
                "a redirect from a public address may only lead to public addresses",
            );
        }
        match self {
            Hops::Root if hop == 0 => (Reach::LinkLocal, ""),
            Hops::Root => (
                Reach::Loopback,
                "redirects may not lead to link-local addresses",
            ),
            Hops::Ref {
                from: Origin::Public,
                ..
            } => (
                Reach::Public,
                "a document from a public address may only reference public addresses",
            ),
            Hops::Ref { private: false, .. } => (
                Reach::Public,
                "remote $refs are limited to public addresses",
            ),
            Hops::Ref { .. } => (
                Reach::Loopback,
                "remote $refs may not reach link-local addresses",
            ),
        }
    }
}

/// At most this many redirects are followed per fetch (reqwest's default).
const MAX_REDIRECTS: usize = 10;

/// Fetches http(s) documents for one load: an HTTP client, built on first use (building one
/// loads the system's root certificates, tens of milliseconds, which a spec made of local files
/// never needs), and the [`Guard`] its resolver checks each host name against.
#[derive(Default)]
struct Fetcher {
    client: Option<reqwest::Client>,
    guard: Arc<Mutex<Guard>>,
}

/// What the hop being fetched may connect to, shared with the client's resolver. One load
/// fetches one URL at a time, so one hop is current at a time.
#[derive(Default)]
struct Guard {
    /// The host name of the hop being fetched, the least public kind of address it may resolve
    /// to, and the rule that says so. `None` for a literal address (never resolved).
    hop: Option<(String, Reach, &'static str)>,
    /// What each name resolved to (its least public address): a hop that reuses a connection
    /// does not resolve its name again.
    names: HashMap<String, Reach>,
    /// Why the resolver refused the current hop's name.
    refused: Option<String>,
}

fn lock(guard: &Mutex<Guard>) -> std::sync::MutexGuard<'_, Guard> {
    guard.lock().unwrap_or_else(PoisonError::into_inner)
}

fn refused_text(host: &str, reach: Reach, rule: &str) -> String {
    format!("{host} is {}, and {rule}", reach.describe())
}

/// Resolves names for the [`Fetcher`]'s client, refusing the current hop's name when it
/// resolves to an address its [`Guard`] does not admit. Checking here, rather than before the
/// request, checks the addresses the connection is made to. Other names (a proxy's) are
/// resolved unchecked.
struct GuardedResolver(Arc<Mutex<Guard>>);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = Arc::clone(&self.0);
        let host = name.as_str().to_ascii_lowercase();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let reach = addrs
                .iter()
                .map(|a| Reach::of(a.ip()))
                .max()
                .unwrap_or(Reach::Public);
            let mut g = lock(&guard);
            g.names.insert(host.clone(), reach);
            if let Some((hop, limit, rule)) = &g.hop
                && *hop == host
                && reach > *limit
            {
                let why = refused_text(&host, reach, rule);
                g.refused = Some(why.clone());
                return Err(why.into());
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

impl Fetcher {
    fn client(&mut self) -> &reqwest::Client {
        let guard = &self.guard;
        self.client.get_or_insert_with(|| {
            reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(30))
                // Followed by `fetch`, which checks every hop.
                .redirect(reqwest::redirect::Policy::none())
                .dns_resolver(GuardedResolver(Arc::clone(guard)))
                .build()
                .unwrap_or_default()
        })
    }

    /// Fetches an http(s) URL (`file:` URLs are read by [`fetch_file`]), following redirects
    /// and checking every hop's address against `hops`' limits: the body (at most `max_bytes`)
    /// and the document's origin.
    async fn fetch(
        &mut self,
        url: &Url,
        hops: Hops,
        max_bytes: u64,
    ) -> Result<(Vec<u8>, Origin), FetchError> {
        let mut url = url.clone();
        let mut public = false;
        for hop in 0..=MAX_REDIRECTS {
            let (limit, rule) = hops.limit(hop, public);
            let redirect = |why: String| match hop {
                0 => why,
                _ => format!("redirect to {url}: {why}"),
            };
            let host = url
                .host_str()
                .ok_or_else(|| FetchError::Redirect(format!("{url} has no host")))?
                .to_ascii_lowercase();
            // A literal address is never resolved, and a name resolved before may reuse a
            // connection without resolving again: both are checked here. A name resolved for
            // this hop is checked by the resolver.
            let literal = ip_literal(&url);
            let known = literal.or_else(|| lock(&self.guard).names.get(&host).copied());
            if let Some(reach) = known
                && reach > limit
            {
                return Err(FetchError::Refused(redirect(refused_text(
                    &host, reach, rule,
                ))));
            }
            {
                let mut g = lock(&self.guard);
                g.hop = literal.is_none().then(|| (host.clone(), limit, rule));
                g.refused = None;
            }
            let sent = self.client().get(url.clone()).send().await;
            let refused = lock(&self.guard).refused.take();
            let resp = match (sent, refused) {
                (_, Some(why)) => return Err(FetchError::Refused(redirect(why))),
                (Err(e), None) => return Err(FetchError::Request(e)),
                (Ok(resp), None) => resp,
            };
            let reach = known
                .or_else(|| lock(&self.guard).names.get(&host).copied())
                .unwrap_or(Reach::Public);
            public |= reach == Reach::Public;
            if resp.status().is_redirection()
                && let Some(location) = resp.headers().get(reqwest::header::LOCATION)
            {
                let next = location
                    .to_str()
                    .ok()
                    .and_then(|l| url.join(l).ok())
                    .ok_or_else(|| FetchError::Redirect(format!("{url}: bad redirect target")))?;
                if !matches!(next.scheme(), "http" | "https") {
                    return Err(FetchError::Refused(format!(
                        "redirect from {url} to {next}: only http(s) redirects are followed"
                    )));
                }
                url = next;
                continue;
            }
            if !resp.status().is_success() {
                return Err(FetchError::Status(resp.status()));
            }
            let body = read_body(resp, max_bytes).await?;
            let origin = if public {
                Origin::Public
            } else {
                Origin::Internal
            };
            return Ok((body, origin));
        }
        Err(FetchError::Redirect(format!(
            "more than {MAX_REDIRECTS} redirects"
        )))
    }
}

/// An http body, refused as soon as it is known to exceed `max_bytes` (by its declared length,
/// or while it streams).
async fn read_body(mut resp: reqwest::Response, max_bytes: u64) -> Result<Vec<u8>, FetchError> {
    let declared = resp.content_length();
    if declared.is_some_and(|n| n > max_bytes) {
        return Err(FetchError::TooLarge(max_bytes));
    }
    let mut body = Vec::with_capacity(usize::try_from(declared.unwrap_or(0)).unwrap_or(0));
    while let Some(chunk) = resp.chunk().await.map_err(FetchError::Request)? {
        if (body.len() + chunk.len()) as u64 > max_bytes {
            return Err(FetchError::TooLarge(max_bytes));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
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

/// What [`fetch_file`] may read besides regular files.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FileKinds {
    /// The spec the user named: also a pipe or device (`<(curl …)`, `/dev/stdin`), read up to
    /// the cap; never a directory.
    Root,
    /// A `$ref` target: regular files only (a spec cannot make the loader read `/dev/zero` or
    /// wait on a FIFO).
    Referenced,
}

/// Reads a `file:` URL of at most `max_bytes`: a regular file, or for the root spec also a pipe
/// or device (anything else is an error saying so, before reading: `/dev/zero` never ends, and
/// opening a FIFO waits for a writer).
fn fetch_file(url: &Url, max_bytes: u64, kinds: FileKinds) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind};
    let path = url.to_file_path().map_err(|()| {
        Error::new(
            ErrorKind::InvalidInput,
            format!("{url} is not a local path"),
        )
    })?;
    let regular = |meta: &std::fs::Metadata| {
        if meta.is_file() || (kinds == FileKinds::Root && !meta.is_dir()) {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::InvalidInput,
                format!("not a regular file ({})", file_kind(meta)),
            ))
        }
    };
    let too_large = || {
        Error::new(
            ErrorKind::InvalidData,
            format!("larger than the limit of {}", bytes(max_bytes)),
        )
    };
    // `metadata` follows symbolic links, as opening does.
    let meta = std::fs::metadata(&path)?;
    regular(&meta)?;
    if meta.is_file() && meta.len() > max_bytes {
        return Err(too_large());
    }
    let file = std::fs::File::open(&path)?;
    // The path may name something else by now: what was opened is what is read.
    let meta = file.metadata()?;
    regular(&meta)?;
    let mut buf = Vec::with_capacity(usize::try_from(meta.len().min(max_bytes)).unwrap_or(0));
    // One byte more than allowed tells a file that grew past the limit from one at it.
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > max_bytes {
        return Err(too_large());
    }
    Ok(buf)
}

/// What a file that is not a regular file is, for messages.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_char_device() {
            return "a character device";
        } else if t.is_block_device() {
            return "a block device";
        } else if t.is_fifo() {
            return "a FIFO";
        } else if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// A byte count for messages: in MiB when it is a whole number of them.
fn bytes(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
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
            // Not parsed as YAML again: see `ParseError::Json`.
            Err(json_err) => return Err(ParseError::Json(json_err)),
        }
    }
    check_yaml_flow_depth(bytes)?;
    parse_yaml(bytes)
        .map(|v| (v, Deferred::default()))
        .map_err(ParseError::Yaml)
}

/// serde_yaml_ng's own limit on nesting (its recursion limit): a document with flow collections
/// nested deeper fails to parse anyway, but only once libyaml has scanned all of it, in time
/// that grows with the document's size times its flow nesting depth (a 400 KB document of
/// nested `[`s: over a minute). [`check_yaml_flow_depth`] refuses those before parsing.
pub const MAX_YAML_FLOW_DEPTH: usize = 128;

/// Refuses a YAML document whose flow collections (`[...]`, `{...}`) nest deeper than
/// [`MAX_YAML_FLOW_DEPTH`]: see [`FlowScan`].
fn check_yaml_flow_depth(bytes: &[u8]) -> Result<(), ParseError> {
    let mut scan = FlowScan::new(bytes);
    scan.run();
    match scan.refused {
        Some(line) => Err(ParseError::TooDeep { line }),
        None => Ok(()),
    }
}

/// One linear pass over a YAML document that follows libyaml's scanner as far as flow
/// indicators go, and stops at the first line where flow collections nest deeper than
/// [`MAX_YAML_FLOW_DEPTH`]. `[` and `{` open a collection where a token starts (in block or flow
/// context); they are text inside plain scalars (after their first character), quoted scalars,
/// comments, tags and anchors, and the content of block scalars (`|`, `>`).
///
/// The pass is simpler than libyaml: it does not track the block indentation, so it cannot
/// always tell a multi-line plain scalar's next line, or a block scalar's end, as libyaml does.
/// Where it cannot, it counts: it treats a line that may continue a plain scalar as tokens, and
/// recognises a block scalar only after `key:`, or after `-`/`?` on a line that cannot continue
/// one, and only with an automatic indentation. And so that a mistaken guess is less likely to
/// hide nesting, the brackets inside what it skips as text (plain and quoted scalars, comments,
/// block scalars' content) count too, on their own: opening ones that closing ones in text do
/// not balance add to the depth. (Real specs stay far below the limit: at most 15 levels in the
/// YAML documents of the real-world corpus, `../shared/specs`, text included.) It is a
/// heuristic all the same: a document crafted to make it and libyaml disagree on where text
/// ends could still get more nesting past it.
struct FlowScan<'a> {
    b: &'a [u8],
    i: usize,
    line: usize,
    line_start: usize,
    depth: usize,
    /// Net opening brackets inside the text skipped so far (never below zero).
    hidden: usize,
    /// The line where `depth + hidden` first went over the limit.
    refused: Option<usize>,
    /// On the current line: the column of its first scalar, and of its last `-` or `?`.
    parent: Option<usize>,
    indicator: Option<usize>,
    /// On the current line: a `:` value indicator was seen.
    value: bool,
    /// The current line may continue a plain scalar of the line before.
    continued: bool,
    /// A plain scalar in block context ran to the end of the current line.
    plain_eol: bool,
}

impl<'a> FlowScan<'a> {
    fn new(b: &'a [u8]) -> Self {
        FlowScan {
            b,
            i: 0,
            line: 1,
            line_start: 0,
            depth: 0,
            hidden: 0,
            refused: None,
            parent: None,
            indicator: None,
            value: false,
            continued: false,
            plain_eol: false,
        }
    }

    fn blankz(&self, j: usize) -> bool {
        j >= self.b.len() || matches!(self.b[j], b' ' | b'\t' | b'\r' | b'\n')
    }

    fn check(&mut self) {
        if self.depth + self.hidden > MAX_YAML_FLOW_DEPTH && self.refused.is_none() {
            self.refused = Some(self.line);
        }
    }

    /// Past the line break at `self.i`.
    fn newline(&mut self) {
        self.i += 1;
        self.line += 1;
        self.line_start = self.i;
    }

    /// One byte of text (not tokens) at `self.i`.
    fn text(&mut self) {
        match self.b[self.i] {
            b'[' | b'{' => {
                self.hidden += 1;
                self.check();
            }
            b']' | b'}' => self.hidden = self.hidden.saturating_sub(1),
            _ => {}
        }
        if self.b[self.i] == b'\n' {
            self.newline();
        } else {
            self.i += 1;
        }
    }

    /// Text to the end of the line (not past the line break).
    fn text_to_eol(&mut self) {
        while self.i < self.b.len() && self.b[self.i] != b'\n' {
            self.text();
        }
    }

    fn run(&mut self) {
        let n = self.b.len();
        let mut line_has_token = false;
        while self.i < n && self.refused.is_none() {
            let c = self.b[self.i];
            match c {
                b' ' | b'\t' | b'\r' => {
                    self.i += 1;
                    continue;
                }
                b'\n' => {
                    // Blank lines keep the state of the line before them.
                    if line_has_token {
                        self.continued = self.plain_eol;
                        self.plain_eol = false;
                        (self.parent, self.indicator, self.value) = (None, None, false);
                    }
                    line_has_token = false;
                    self.newline();
                    continue;
                }
                b'#' => {
                    // A comment-only line ends a multi-line plain scalar.
                    if !line_has_token {
                        (self.continued, self.plain_eol) = (false, false);
                    }
                    self.text_to_eol();
                    continue;
                }
                _ => {}
            }
            line_has_token = true;
            let col = self.i - self.line_start;
            let flow = self.depth > 0;
            match c {
                b'[' | b'{' => {
                    self.depth += 1;
                    self.check();
                    self.i += 1;
                }
                b']' | b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.i += 1;
                }
                b',' => self.i += 1,
                b'-' if self.blankz(self.i + 1) => {
                    self.indicator = Some(col);
                    self.i += 1;
                }
                b'?' if flow || self.blankz(self.i + 1) => {
                    self.indicator = Some(col);
                    self.i += 1;
                }
                b':' if flow || self.blankz(self.i + 1) => {
                    self.value = true;
                    self.i += 1;
                }
                b'%' if col == 0 => self.text_to_eol(),
                b'&' | b'*' => {
                    self.i += 1;
                    while self.i < n
                        && (self.b[self.i].is_ascii_alphanumeric()
                            || matches!(self.b[self.i], b'-' | b'_'))
                    {
                        self.i += 1;
                    }
                }
                b'!' => {
                    // Tags may hold `,` and `]`, skipped (they could only lower the depth), but
                    // not `[` or `{`, left to count, in case libyaml ends the tag there.
                    self.i += 1;
                    while !self.blankz(self.i) && !matches!(self.b[self.i], b'[' | b'{') {
                        self.i += 1;
                    }
                }
                b'|' | b'>' if !flow && self.block_scalar_here() => self.block_scalar(),
                b'\'' | b'"' if !(self.continued && self.parent.is_none()) => {
                    self.parent.get_or_insert(col);
                    self.quoted(c);
                }
                _ => {
                    self.parent.get_or_insert(col);
                    self.plain(flow);
                }
            }
        }
    }

    /// Whether a `|` or `>` at `self.i` starts a block scalar, as far as this pass can be sure
    /// (see [`FlowScan`]): after `key:`, or after `-`/`?` on a line that cannot continue a
    /// plain scalar; with no indentation indicator (a digit) in its header.
    fn block_scalar_here(&self) -> bool {
        let placed = self.value || (self.indicator.is_some() && !self.continued);
        let mut header = self.b[self.i + 1..]
            .iter()
            .take_while(|&&c| !matches!(c, b'\n' | b'#'));
        placed && !header.any(u8::is_ascii_digit)
    }

    /// A block scalar's header at `self.i`, then its content: the lines that are blank or
    /// indented at least as deep as the first non-blank one, when that is deeper than the
    /// node's parent (the line's first scalar, or else its last `-`/`?`).
    fn block_scalar(&mut self) {
        let n = self.b.len();
        let parent = self.parent.or(self.indicator).unwrap_or(0);
        self.text_to_eol();
        let mut content: Option<usize> = None;
        while self.i < n {
            // At a line break: look at the next line.
            let start = self.i + 1;
            let indent = self.b[start.min(n)..]
                .iter()
                .take_while(|&&c| c == b' ')
                .count();
            let rest = start + indent;
            let blank = rest >= n || matches!(self.b[rest], b'\n' | b'\r');
            if !(blank || indent >= content.unwrap_or(parent + 1)) {
                break;
            }
            if !blank && content.is_none() {
                content = Some(indent);
            }
            self.newline();
            self.text_to_eol();
        }
        // The line after the content is not a plain scalar's continuation.
        self.plain_eol = false;
    }

    /// A quoted scalar from its opening quote at `self.i`, to its closing one.
    fn quoted(&mut self, quote: u8) {
        let n = self.b.len();
        self.i += 1;
        while self.i < n {
            let c = self.b[self.i];
            if c == quote {
                if quote == b'\'' && self.b.get(self.i + 1) == Some(&b'\'') {
                    self.i += 2;
                    continue;
                }
                self.i += 1;
                return;
            }
            if c == b'\\' && quote == b'"' {
                // The escaped character is text too.
                self.i += 1;
                if self.i >= n {
                    return;
                }
            }
            self.text();
        }
    }

    /// A plain scalar from its first character at `self.i`, to the end of its line at most (a
    /// continuation line is scanned as tokens: it can only count more). It ends at `: ` and
    /// ` #`, and in flow context at flow indicators.
    fn plain(&mut self, flow: bool) {
        let n = self.b.len();
        let indicator = |c: u8| matches!(c, b',' | b'[' | b']' | b'{' | b'}');
        self.i += 1;
        while self.i < n && self.b[self.i] != b'\n' {
            let c = self.b[self.i];
            if (c == b':' && (self.blankz(self.i + 1) || (flow && indicator(self.b[self.i + 1]))))
                || (c == b'#' && matches!(self.b[self.i - 1], b' ' | b'\t'))
                || (flow && indicator(c))
            {
                return;
            }
            self.text();
        }
        if !flow {
            self.plain_eol = true;
        }
    }
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
            None => b.key(&complex_key(&node)),
        })
    }
}

/// Longest rendering of a YAML key that is not a scalar (a mapping or sequence used as a key,
/// which no OpenAPI document means), in bytes.
const MAX_COMPLEX_KEY: usize = 256;

/// A non-scalar YAML key as a string: its JSON, cut at [`MAX_COMPLEX_KEY`] bytes. Uncut, keys
/// nested in keys grew twice as long at each level (JSON escapes the quotes and backslashes of
/// the key inside): 452 bytes of `{` keys took 8 GB and 68 s (fuzz target `load_convert`).
fn complex_key(node: &Node) -> String {
    struct Capped(Vec<u8>);
    impl std::io::Write for Capped {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = MAX_COMPLEX_KEY - self.0.len();
            if room == 0 {
                return Err(std::io::Error::other("long enough"));
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Capped(Vec::with_capacity(64));
    let cut = serde_json::to_writer(&mut out, node).is_err();
    let mut key = String::from_utf8_lossy(&out.0).into_owned();
    if cut {
        // A cut inside a character leaves a replacement character: drop it with the rest.
        while key.ends_with('\u{FFFD}') {
            key.pop();
        }
        key.push('…');
    }
    key
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

    #[test]
    fn addresses_are_classified() {
        let reach = |s: &str| Reach::of(s.parse().unwrap());
        for public in [
            "8.8.8.8",
            "1.1.1.1",
            "100.63.255.255",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(reach(public), Reach::Public, "{public}");
        }
        for private in [
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "198.18.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "fd12::1",
            "fec0::1",
            "::ffff:10.0.0.1",
        ] {
            assert_eq!(reach(private), Reach::Private, "{private}");
        }
        for loopback in [
            "127.0.0.1",
            "127.255.0.9",
            "0.0.0.0",
            "::1",
            "::",
            "::ffff:127.0.0.1",
        ] {
            assert_eq!(reach(loopback), Reach::Loopback, "{loopback}");
        }
        for link_local in [
            "169.254.169.254",
            "169.254.0.1",
            "100.100.100.200",
            "fe80::1",
            "febf::1",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
        ] {
            assert_eq!(reach(link_local), Reach::LinkLocal, "{link_local}");
        }
        let url = |s: &str| Url::parse(s).unwrap();
        assert_eq!(
            literal_reach(&url("http://localhost:8/")),
            Some(Reach::Loopback)
        );
        assert_eq!(
            literal_reach(&url("http://api.localhost/")),
            Some(Reach::Loopback)
        );
        assert_eq!(
            literal_reach(&url("http://[fe80::1]/")),
            Some(Reach::LinkLocal)
        );
        assert_eq!(literal_reach(&url("http://example.com/")), None);
        assert_eq!(ip_literal(&url("http://localhost/")), None);
    }

    #[test]
    fn what_each_hop_may_reach() {
        use Reach::*;
        let limit = |h: Hops, hop, after_public| h.limit(hop, after_public).0;
        // The spec's own URL: anything; its redirects: not link-local; after a public hop, public.
        assert_eq!(limit(Hops::Root, 0, false), LinkLocal);
        assert_eq!(limit(Hops::Root, 1, false), Loopback);
        assert_eq!(limit(Hops::Root, 1, true), Public);
        let from = |from, private| Hops::Ref { from, private };
        assert_eq!(limit(from(Origin::Local, true), 0, false), Loopback);
        assert_eq!(limit(from(Origin::Internal, true), 0, false), Loopback);
        assert_eq!(limit(from(Origin::Local, false), 0, false), Public);
        assert_eq!(limit(from(Origin::Public, true), 0, false), Public);
        assert_eq!(limit(from(Origin::Local, true), 2, true), Public);
    }

    #[test]
    fn which_documents_a_document_may_use() {
        let file = Url::parse("file:///etc/passwd").unwrap();
        let http = Url::parse("http://10.0.0.1/a.yaml").unwrap();
        assert_eq!(refusal(Origin::Local, &file, None, true), None);
        for remote in [Origin::Internal, Origin::Public] {
            let why = refusal(remote, &file, Some(Origin::Local), true).unwrap();
            assert!(why.contains("may not reference a local file"), "{why}");
        }
        assert_eq!(
            refusal(Origin::Local, &http, Some(Origin::Internal), true),
            None
        );
        assert_eq!(
            refusal(Origin::Internal, &http, Some(Origin::Internal), true),
            None
        );
        assert!(refusal(Origin::Public, &http, Some(Origin::Internal), true).is_some());
        assert!(refusal(Origin::Local, &http, Some(Origin::Internal), false).is_some());
        assert_eq!(
            refusal(Origin::Public, &http, Some(Origin::Public), false),
            None
        );
        assert_eq!(refusal(Origin::Public, &http, None, true), None);
    }

    /// Serves each `(path, raw response)` on 127.0.0.1, one connection at a time (and one
    /// request per connection: every response says `connection: close`).
    fn serve(routes: Vec<(String, String)>) -> std::net::SocketAddr {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let path = first.split(' ').nth(1).unwrap_or("");
                let resp = routes
                    .iter()
                    .find(|(p, _)| p == path)
                    .map(|(_, r)| r.clone())
                    .unwrap_or_else(|| {
                        "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                            .into()
                    });
                let _ = stream.write_all(resp.as_bytes());
            }
        });
        addr
    }

    fn ok(body: &str) -> String {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    #[tokio::test]
    async fn a_public_document_may_not_reach_loopback_by_address_or_by_name() {
        let addr = serve(vec![("/a".into(), ok("x: 1\n"))]);
        let port = addr.port();
        let public = Hops::Ref {
            from: Origin::Public,
            private: true,
        };
        let local = Hops::Ref {
            from: Origin::Local,
            private: true,
        };
        let mut f = Fetcher::default();
        // By address: refused before any connection.
        let url = Url::parse(&format!("http://127.0.0.1:{port}/a")).unwrap();
        let err = f.fetch(&url, public, 1 << 20).await.unwrap_err();
        assert!(
            matches!(&err, FetchError::Refused(why) if why.contains("127.0.0.1 is a loopback address")),
            "{err}"
        );
        // By name: the resolver refuses it.
        let url = Url::parse(&format!("http://localhost:{port}/a")).unwrap();
        let err = f.fetch(&url, public, 1 << 20).await.unwrap_err();
        assert!(
            matches!(&err, FetchError::Refused(why) if why.contains("localhost is a loopback address")),
            "{err}"
        );
        // A local document's $ref may, and the document it gets is not a public one.
        let (body, origin) = f.fetch(&url, local, 1 << 20).await.unwrap();
        assert_eq!(
            (body.as_slice(), origin),
            (&b"x: 1\n"[..], Origin::Internal)
        );
        // A connection to it may be reused without resolving the name: it is still checked.
        let err = f.fetch(&url, public, 1 << 20).await.unwrap_err();
        assert!(matches!(err, FetchError::Refused(_)), "{err}");
    }

    #[tokio::test]
    async fn redirects_are_checked_hop_by_hop() {
        let addr = serve(vec![
            (
                "/meta".into(),
                "HTTP/1.1 302 Found\r\nlocation: http://169.254.169.254/latest/meta-data/\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
            ),
            (
                "/file".into(),
                "HTTP/1.1 301 Moved\r\nlocation: file:///etc/passwd\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    .into(),
            ),
            (
                "/loop".into(),
                "HTTP/1.1 302 Found\r\nlocation: /loop\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
            ),
            (
                "/next".into(),
                "HTTP/1.1 307 Temporary\r\nlocation: /a\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
            ),
            ("/a".into(), ok("x: 1\n")),
        ]);
        let url = |p: &str| Url::parse(&format!("http://{addr}{p}")).unwrap();
        let mut f = Fetcher::default();
        let err = f
            .fetch(&url("/meta"), Hops::Root, 1 << 20)
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("refused: redirect to http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a link-local address"),
            "{text}"
        );
        let err = f
            .fetch(&url("/file"), Hops::Root, 1 << 20)
            .await
            .unwrap_err();
        assert!(matches!(err, FetchError::Refused(_)), "{err}");
        let err = f
            .fetch(&url("/loop"), Hops::Root, 1 << 20)
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "more than 10 redirects");
        let (body, _) = f.fetch(&url("/next"), Hops::Root, 1 << 20).await.unwrap();
        assert_eq!(body, b"x: 1\n");
    }

    #[tokio::test]
    async fn the_resolver_checks_the_current_hop_only() {
        use reqwest::dns::Resolve;
        use std::str::FromStr;
        let guard = Arc::new(Mutex::new(Guard::default()));
        let resolver = GuardedResolver(Arc::clone(&guard));
        let name = || reqwest::dns::Name::from_str("localhost").unwrap();
        // Not the hop's name (a proxy's, say): resolved, and remembered.
        lock(&guard).hop = Some(("example.com".into(), Reach::Public, "rule"));
        assert!(resolver.resolve(name()).await.is_ok());
        assert_eq!(lock(&guard).names.get("localhost"), Some(&Reach::Loopback));
        lock(&guard).hop = Some(("localhost".into(), Reach::Loopback, "rule"));
        assert!(resolver.resolve(name()).await.is_ok());
        lock(&guard).hop = Some(("localhost".into(), Reach::Public, "rule"));
        assert!(resolver.resolve(name()).await.is_err());
        assert_eq!(
            lock(&guard).refused.as_deref(),
            Some("localhost is a loopback address, and rule")
        );
    }

    #[tokio::test]
    async fn bodies_are_capped() {
        let big = "y".repeat(5000);
        let addr = serve(vec![
            ("/declared".into(), ok(&big)),
            (
                "/chunked".into(),
                format!(
                    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
                    big.len()
                ),
            ),
        ]);
        let mut f = Fetcher::default();
        for path in ["/declared", "/chunked"] {
            let url = Url::parse(&format!("http://{addr}{path}")).unwrap();
            let err = f.fetch(&url, Hops::Root, 4096).await.unwrap_err();
            assert_eq!(
                err.to_string(),
                "larger than the limit of 4096 bytes",
                "{path}"
            );
            let (body, _) = f.fetch(&url, Hops::Root, 5000).await.unwrap();
            assert_eq!(body.len(), 5000, "{path}");
        }
    }

    #[test]
    fn files_are_capped_and_regular() {
        let dir = std::env::temp_dir().join(format!("openapi-mcp-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("big.yaml");
        std::fs::write(&file, "z".repeat(5000)).unwrap();
        let url = Url::from_file_path(&file).unwrap();
        let err = fetch_file(&url, 4096, FileKinds::Referenced).unwrap_err();
        assert_eq!(err.to_string(), "larger than the limit of 4096 bytes");
        assert_eq!(
            fetch_file(&url, 5000, FileKinds::Referenced).unwrap().len(),
            5000
        );
        let err = fetch_file(
            &Url::from_directory_path(&dir).unwrap(),
            4096,
            FileKinds::Root,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "not a regular file (a directory)");
        #[cfg(unix)]
        {
            let err = fetch_file(
                &Url::parse("file:///dev/zero").unwrap(),
                4096,
                FileKinds::Referenced,
            )
            .unwrap_err();
            assert_eq!(err.to_string(), "not a regular file (a character device)");
            // The spec the user names may be a device or pipe (`<(curl ...)`): read up to the cap.
            let err = fetch_file(
                &Url::parse("file:///dev/zero").unwrap(),
                4096,
                FileKinds::Root,
            )
            .unwrap_err();
            assert_eq!(err.to_string(), "larger than the limit of 4096 bytes");
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(bytes(256 << 20), "256 MiB");
        assert_eq!(LoadOptions::default().max_document_bytes, 256 << 20);
    }

    #[test]
    fn json_looking_documents_are_json_only() {
        // YAML in flow style would parse; it is reported as the JSON it looks like.
        let err = parse_document(b" {openapi: 3.0.0, info: {title: t, version: '1'}}").unwrap_err();
        assert!(matches!(err, ParseError::Json(_)), "{err}");
        assert!(
            err.to_string()
                .starts_with("line 1, column 3: key must be a string"),
            "{err}"
        );
        // A YAML document that does not start with `{` may still use flow style.
        let v = parse_document(b"openapi: 3.0.0\ninfo: {title: t, version: '1'}\n").unwrap();
        assert_eq!(v["info"]["title"], "t");
    }

    /// Fuzz target `load_convert`: mappings used as keys, nested in each other's keys, doubled
    /// their rendering at each level (8 GB and 68 s for 452 bytes). A non-scalar key is its JSON,
    /// cut at `MAX_COMPLEX_KEY` bytes.
    #[test]
    fn keys_that_are_mappings_stay_short() {
        let found =
            include_bytes!("../../fuzz/regressions/load_convert/yaml-keys-in-keys-escaping-blowup");
        let started = std::time::Instant::now();
        let _ = parse_document(found);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let nested = format!(
            "openapi: 3.0.0\nx: {}v{}\n",
            "{? ".repeat(60),
            ": 1}".repeat(60)
        );
        let started = std::time::Instant::now();
        let v = parse_document(nested.as_bytes()).expect("parses");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let key = v["x"]
            .as_object()
            .and_then(|m| m.keys().next().map(str::to_string))
            .expect("a key");
        assert!(
            key.len() <= MAX_COMPLEX_KEY + '…'.len_utf8() && key.ends_with('…'),
            "{key}"
        );
        let v = parse_document(b"openapi: 3.0.0\nx: {[a, b]: 1}\n").expect("parses");
        assert_eq!(
            v["x"]["[\"a\",\"b\"]"].as_i64(),
            Some(1),
            "a short key is whole"
        );
    }

    #[test]
    fn yaml_flow_nesting_is_limited_before_parsing() {
        let nested = |depth: usize| {
            format!(
                "openapi: 3.0.0\nx: {}{}\n",
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        assert!(check_yaml_flow_depth(nested(MAX_YAML_FLOW_DEPTH).as_bytes()).is_ok());
        let err = check_yaml_flow_depth(nested(MAX_YAML_FLOW_DEPTH + 1).as_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: flow collections ([...] or {...}) nested deeper than 128 levels"
        );
        // Mappings count as much as sequences, across lines.
        let maps = format!("a:\n  b: {}\n", "{k:\n ".repeat(200));
        assert!(matches!(
            check_yaml_flow_depth(maps.as_bytes()),
            Err(ParseError::TooDeep { line: 130 })
        ));
        // Brackets in text are not collections: plain scalars (after their first character),
        // quoted scalars, comments, block scalars. Balanced, they add up to nothing (though
        // more than the limit open at once in text would count: see below).
        let text = format!(
            "a: x {o}{c}\nb: '{o}{c}'\nc: \"{o}\\\"{c}\"\n# {o}{c}\nd: |\n  {o}\n  {c}\ne: [ok]\n",
            o = "[".repeat(100),
            c = "]".repeat(100)
        );
        let mut scan = FlowScan::new(text.as_bytes());
        scan.run();
        assert_eq!((scan.refused, scan.depth, scan.hidden), (None, 0, 0));
        // Unbalanced, they count: a mistaken guess of where text ends cannot hide it all.
        let hidden = format!("a: '{}'\nb: x\n", "[".repeat(200));
        assert!(check_yaml_flow_depth(hidden.as_bytes()).is_err());
        // `[` after a scalar's first character is text, and `-`/`?`/`:` need a blank after
        // them to be indicators.
        let mut scan = FlowScan::new(b"a: b[c\nd: -[e\nf: ?[g\nh: x:[i\n");
        scan.run();
        assert_eq!((scan.depth, scan.hidden), (0, 4));
        // A block scalar after `key:` is text, to the end of its indentation.
        let mut scan = FlowScan::new(b"a:\n  b: |\n    [x\n\n    [y\n  c: [z\n");
        scan.run();
        assert_eq!((scan.depth, scan.hidden), (1, 2));
        // On a line that may continue a plain scalar, `- |` is not trusted to start a block
        // scalar: what follows is scanned as tokens.
        let mut scan = FlowScan::new(b"a: b\n  - |\n   [[\n");
        scan.run();
        assert_eq!((scan.depth, scan.hidden), (2, 0));
    }
}
