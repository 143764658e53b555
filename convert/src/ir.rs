//! The first stage of the conversion: the spec lowered, once, into the operations it declares.
//!
//! [`lower`] walks `paths` and hands back an [`Api`]: the API's own facts (title, base URL,
//! security schemes, tags) and every operation that passes the filters, as an [`Operation`]
//! whose inputs, security, server and responses are read from either dialect into one shape.
//! The converter then builds each tool from an [`Operation`] alone, never going back to the
//! spec's walk (only to its schemas, by location).
//!
//! Swagger 2.0 and OpenAPI 3.x say the same things differently: 2.0 writes a parameter's schema
//! inline and its array format as `collectionFormat`, and its request body as an `in: body`
//! parameter or as `formData` parameters whose media type `consumes` decides; 3.x has `schema` or
//! `content`, `style`/`explode`, and a `requestBody` with one schema per media type. Lowering
//! turns both into [`Param`]s and one [`RequestBody`], so the converter builds a tool's input
//! from a single shape. Everything borrows the loaded tree: schemas are named by their location,
//! never copied. An operation whose parameters or request body cannot be lowered is skipped here
//! (one error diagnostic); the diagnostics about its schemas come from building.

use crate::diag::Diagnostics;
use crate::load::{DocumentSet, RefError, Spec, SpecVersion};
use crate::node::{Node, Obj};
use crate::pointer::{JsonPointer, Loc};
use openapi_mcp_toolset::Location;
use openapi_mcp_toolset::filter::{Filter, OpFacts};

/// The hasher of the converter's sets (see `convert.rs`).
type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;
use openapi_mcp_toolset::media::{body_kind, is_json, media_base, path_template_names};
use openapi_mcp_toolset::model::{
    ApiKeyLocation, ArgLocation, BodyKind, HttpMethod, ParamIn, PartEncoding, PathStyle,
    QueryStyle, SecurityRequirement, SecurityScheme, is_ignored_header_param, is_reserved_header,
};
use openapi_mcp_toolset::naming::snake;

const JSON_BODY_PREFERENCE: usize = 0;

/// Counts of what happened to the spec's operations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertReport {
    /// Operations under `paths` (webhooks are not operations).
    pub operations: usize,
    pub tools: usize,
    /// Operations that could not be converted (each has an error diagnostic).
    pub failed: usize,
    /// Operations left out by filters.
    pub filtered: usize,
}

/// The spec, lowered: what the API says about itself, and its operations.
pub(crate) struct Api<'a> {
    pub docs: &'a DocumentSet,
    pub dialect: SpecVersion,
    /// `info.title`, `info.version`, `info.description`.
    pub title: String,
    pub version: String,
    pub description: Option<String>,
    /// (name, description) of each top-level tag that has both, in the spec's order.
    pub tag_descriptions: Vec<(String, String)>,
    /// The base URL as the spec gives it.
    pub base_url: Option<String>,
    pub security_schemes: Vec<(String, SecurityScheme)>,
    /// The operations that pass the filters and could be lowered, in the spec's order.
    pub operations: Vec<Operation<'a>>,
    /// Operations seen, skipped and filtered out (`tools` is counted by the converter).
    pub report: ConvertReport,
}

/// The nodes an operation is read from.
pub(crate) struct Source<'a> {
    pub docs: &'a DocumentSet,
    pub version: SpecVersion,
    pub item: &'a Node,
    pub item_loc: Loc,
    pub op: &'a Node,
    pub op_loc: Loc,
}

/// One operation, lowered: its identity, its inputs and what it answers with.
pub(crate) struct Operation<'a> {
    pub src: Source<'a>,
    pub path: &'a str,
    pub method: HttpMethod,
    /// A non-blank `operationId`.
    pub operation_id: Option<&'a str>,
    pub tags: Vec<String>,
    pub deprecated: bool,
    /// Non-blank, trimmed `summary` and `description`.
    pub summary: Option<&'a str>,
    pub description: Option<&'a str>,
    /// The parameters that reach the request, in declaration order: those the path template
    /// names, and no header the HTTP client or the media types set.
    pub params: Vec<Param<'a>>,
    /// Path template variables no parameter declares.
    pub undeclared: Vec<String>,
    pub body: Option<RequestBody<'a>>,
    /// The operation's security alternatives (else the API's).
    pub security: Vec<SecurityRequirement>,
    /// Per alternative naming an OAuth scheme, the scopes it lists.
    pub oauth_scopes: Vec<Vec<String>>,
    /// A path- or operation-level server (OpenAPI 3).
    pub server: Option<String>,
    pub responses: Responses,
}

/// What an operation answers with.
pub(crate) struct Responses {
    /// The media types of every response, success first, JSON first within each.
    pub accept: Option<String>,
    /// The success response's JSON schema, when it has one.
    pub schema: Option<Loc>,
}

/// Where a declared parameter goes, before request bodies are told apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DeclaredIn {
    Param(ParamIn),
    /// Swagger 2.0 `in: body`.
    Body,
    /// Swagger 2.0 `in: formData`.
    FormData,
}

impl DeclaredIn {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "body" => Some(DeclaredIn::Body),
            "formData" => Some(DeclaredIn::FormData),
            s => ParamIn::parse(s).map(DeclaredIn::Param),
        }
    }
}

/// A parameter after `$ref` resolution and path-item merging.
struct Declared<'a> {
    loc: Loc,
    node: &'a Node,
    name: &'a str,
    location: DeclaredIn,
    /// Declared on the path item or reached through a `$ref`: other operations use it too.
    shared: bool,
}

/// An operation's parameters: those that are arguments on the wire, and Swagger 2.0's body
/// parameters (lowered into a [`RequestBody`] by [`request_body`]).
pub(crate) struct Parameters<'a> {
    /// Path, query, header and cookie parameters, in declaration order.
    pub params: Vec<Param<'a>>,
    body: Option<Declared<'a>>,
    form: Vec<Declared<'a>>,
}

/// A path, query, header or cookie parameter, in either dialect.
pub(crate) struct Param<'a> {
    pub name: &'a str,
    pub location: ParamIn,
    pub style: Style,
    pub explode: bool,
    pub allow_reserved: bool,
    /// A query parameter that may be sent empty (`name=`): see [`allows_empty_value`].
    pub allow_empty_value: bool,
    /// Path parameters are always required.
    pub required: bool,
    pub schema: ParamSchema<'a>,
    pub description: Option<&'a str>,
    pub deprecated: bool,
    pub example: Option<&'a Node>,
    /// The parameter object (after `$ref`s).
    pub loc: Loc,
    /// Declared on the path item or reached through a `$ref`: converted once for all operations.
    pub shared: bool,
}

/// How a parameter's value is serialized (OpenAPI 3's `style`; 2.0's `collectionFormat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    Simple,
    Label,
    Matrix,
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
}

/// Where a parameter's schema is.
pub(crate) enum ParamSchema<'a> {
    /// `schema`, at the parameter's `schema`.
    Schema(&'a Node),
    /// `content`: the value is serialized with its first media type (if any) before styling.
    Content {
        media_type: Option<&'a str>,
        schema: Option<&'a Node>,
    },
    /// Swagger 2.0: the parameter object carries its schema inline (`type`, `items`, ...).
    Inline(&'a Node),
    /// OpenAPI 3: neither `schema` nor `content`.
    Missing,
}

/// The request body to send, in either dialect, with its media type chosen.
pub(crate) struct RequestBody<'a> {
    pub required: bool,
    pub description: Option<&'a Node>,
    pub media: Media,
    pub content: BodyContent<'a>,
}

/// The chosen media type of a request body.
pub(crate) struct Media {
    pub content_type: String,
    pub kind: BodyKind,
    pub encoding: Vec<PartEncoding>,
}

/// What describes a request body's content.
pub(crate) enum BodyContent<'a> {
    /// An OpenAPI 3 media type's schema (if it has one), read as its media type says: object
    /// JSON, form and multipart bodies are flattened, files and text are typed as such.
    MediaSchema(Option<Loc>),
    /// A Swagger 2.0 `in: body` parameter's schema: flattened when the body is JSON, otherwise
    /// sent whole whatever `consumes` says.
    Schema(Loc),
    /// Swagger 2.0 `formData` parameters: one field each.
    Fields(Vec<FormField<'a>>),
}

/// A Swagger 2.0 `formData` parameter.
pub(crate) struct FormField<'a> {
    pub name: &'a str,
    pub loc: Loc,
    /// Carries its schema inline.
    pub node: &'a Node,
    pub required: bool,
}

impl Style {
    fn path(self) -> PathStyle {
        match self {
            Style::Label => PathStyle::Label,
            Style::Matrix => PathStyle::Matrix,
            _ => PathStyle::Simple,
        }
    }

    fn query(self) -> QueryStyle {
        match self {
            Style::SpaceDelimited => QueryStyle::SpaceDelimited,
            Style::PipeDelimited => QueryStyle::PipeDelimited,
            Style::DeepObject => QueryStyle::DeepObject,
            _ => QueryStyle::Form,
        }
    }

    fn of_query(s: QueryStyle) -> Self {
        match s {
            QueryStyle::Form => Style::Form,
            QueryStyle::SpaceDelimited => Style::SpaceDelimited,
            QueryStyle::PipeDelimited => Style::PipeDelimited,
            QueryStyle::DeepObject => Style::DeepObject,
        }
    }
}

impl Param<'_> {
    /// Where the argument goes on the wire.
    pub fn arg_location(&self) -> ArgLocation {
        let explode = self.explode;
        match self.location {
            ParamIn::Path => ArgLocation::Path {
                style: self.style.path(),
                explode,
            },
            ParamIn::Query => ArgLocation::Query {
                style: self.style.query(),
                explode,
                allow_reserved: self.allow_reserved,
                allow_empty_value: self.allow_empty_value,
            },
            ParamIn::Header => ArgLocation::Header { explode },
            ParamIn::Cookie => ArgLocation::Cookie { explode },
        }
    }

    /// The media type a `content` parameter's value is serialized with.
    pub fn content_type(&self) -> Option<&str> {
        match self.schema {
            ParamSchema::Content { media_type, .. } => media_type,
            _ => None,
        }
    }
}

/// Why an operation's parameters or request body cannot be lowered: the operation is skipped
/// (with this as the diagnostic), the others convert.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LowerError {
    #[error("parameter {at}: {source}")]
    ParamRef {
        at: Location,
        #[source]
        source: RefError,
    },
    #[error("parameter {at} has no `name` or no `in`")]
    ParamIncomplete { at: Location },
    #[error("parameter {at} has an unknown location `in: {location}`")]
    ParamLocation { at: Location, location: String },
    #[error("requestBody: {0}")]
    RequestBodyRef(#[source] RefError),
}

/// Lowers the spec: the API's facts, and every operation under `paths` that `filter` (and
/// `x-mcp-exclude`) keeps. An operation that cannot be lowered is counted as failed and named
/// in an error diagnostic; the others are lowered all the same.
pub(crate) fn lower<'a>(spec: &'a Spec, filter: &Filter, diags: &mut Diagnostics) -> Api<'a> {
    let docs = &spec.docs;
    let root = docs.root();
    let info = root.get("info");
    let mut api = Api {
        docs,
        dialect: spec.version,
        title: str_at(info, "title").unwrap_or("API").to_string(),
        version: str_at(info, "version").unwrap_or("0.0.0").to_string(),
        description: str_at(info, "description").map(str::to_string),
        tag_descriptions: tag_descriptions(root),
        security_schemes: security_schemes(docs, spec.version, diags),
        base_url: base_url(docs, spec.version),
        operations: Vec::new(),
        report: ConvertReport::default(),
    };
    let global_security = root.get("security");
    let Some(paths) = root.get("paths").and_then(Node::as_object) else {
        if root.get("paths").is_none() && root.get("webhooks").is_none() {
            diags.warning(
                Location::new(docs.docs[0].name.as_str(), "/paths"),
                "the spec has no paths",
            );
        }
        return api;
    };
    let paths_loc = Loc::new(0, JsonPointer::root().join("paths"));
    for (path, item) in paths {
        if !path.starts_with('/') {
            continue; // `x-` extensions
        }
        let item_loc = paths_loc.join(path);
        let (item_loc, item) = match item.get("$ref").and_then(Node::as_str) {
            Some(_) => match docs.deref(&item_loc) {
                Ok(found) => found,
                Err(e) => {
                    let n = count_methods(item).max(1);
                    api.report.operations += n;
                    api.report.failed += n;
                    diags.error(docs.describe(&item_loc), format!("path item skipped: {e}"));
                    continue;
                }
            },
            None => (item_loc, item),
        };
        for method in HttpMethod::ALL {
            let Some(op) = item.get(method.key()).filter(|op| op.is_object()) else {
                continue;
            };
            api.report.operations += 1;
            let op_loc = item_loc.join(method.key());
            // Operations may themselves be `$ref`s to other files (DigitalOcean).
            let (op_loc, op) = if op.get("$ref").is_some() {
                match docs.deref(&op_loc) {
                    Ok(found) => found,
                    Err(e) => {
                        api.report.failed += 1;
                        diags.error(docs.describe(&op_loc), format!("operation skipped: {e}"));
                        continue;
                    }
                }
            } else {
                (op_loc, op)
            };
            let src = Source {
                docs,
                version: spec.version,
                item,
                item_loc: item_loc.clone(),
                op,
                op_loc,
            };
            let Some(operation) = identify(src, path, method, filter, root) else {
                api.report.filtered += 1;
                continue;
            };
            let op_loc = operation.op_loc.clone();
            match operation.lower(&api.security_schemes, global_security, diags) {
                Ok(operation) => api.operations.push(operation),
                Err(e) => {
                    api.report.failed += 1;
                    diags.error(docs.describe(&op_loc), format!("operation skipped: {e}"));
                }
            }
        }
    }
    api
}

/// An operation before its inputs are lowered: what the filters look at.
struct Identified<'a> {
    src: Source<'a>,
    path: &'a str,
    method: HttpMethod,
    operation_id: Option<&'a str>,
    tags: Vec<String>,
    deprecated: bool,
}

/// The operation's identity, or `None` when `x-mcp-exclude` or the filter leaves it out.
fn identify<'a>(
    src: Source<'a>,
    path: &'a str,
    method: HttpMethod,
    filter: &Filter,
    root: &Node,
) -> Option<Identified<'a>> {
    if crate::extensions::excluded(root, src.item, src.op) {
        return None;
    }
    let op = src.op;
    let id = Identified {
        operation_id: op
            .get("operationId")
            .and_then(Node::as_str)
            .filter(|s| !s.trim().is_empty()),
        tags: op
            .get("tags")
            .and_then(Node::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Node::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        deprecated: op
            .get("deprecated")
            .and_then(Node::as_bool)
            .unwrap_or(false),
        src,
        path,
        method,
    };
    let base = if filter.matches_operations() {
        base_name(id.src.op, id.operation_id, method, path)
    } else {
        String::new()
    };
    filter
        .matches(&OpFacts {
            method,
            path,
            operation_id: id.operation_id,
            tool_base_name: &base,
            tags: &id.tags,
            deprecated: id.deprecated,
        })
        .then_some(id)
}

impl<'a> std::ops::Deref for Identified<'a> {
    type Target = Source<'a>;
    fn deref(&self) -> &Source<'a> {
        &self.src
    }
}

impl<'a> Identified<'a> {
    /// Lowers the operation's inputs, security, server and responses.
    fn lower(
        self,
        schemes: &[(String, SecurityScheme)],
        global_security: Option<&'a Node>,
        diags: &mut Diagnostics,
    ) -> Result<Operation<'a>, LowerError> {
        let src = &self.src;
        let declared = parameters(src, diags)?;
        let template = path_template_names(self.path);
        let undeclared = template
            .iter()
            .filter(|name| {
                !declared
                    .params
                    .iter()
                    .any(|p| p.location == ParamIn::Path && p.name == name.as_str())
            })
            .cloned()
            .collect::<Vec<String>>();
        let params = reaching_params(src, self.path, &template, declared.params, diags);
        for name in &undeclared {
            diags.warning(src.docs.describe(&src.op_loc), format!("path template variable {{{name}}} has no parameter; it becomes a required string argument"));
        }
        let body = request_body(
            src,
            Parameters {
                params: Vec::new(),
                body: declared.body,
                form: declared.form,
            },
        )?;
        let security_node = src.op.get("security").or(global_security);
        let text = |key: &str| {
            src.op
                .get(key)
                .and_then(Node::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        Ok(Operation {
            summary: text("summary"),
            description: text("description"),
            params,
            undeclared,
            body,
            security: security(security_node),
            oauth_scopes: oauth_scopes(security_node, schemes),
            server: server_override(src),
            responses: responses(src),
            operation_id: self.operation_id,
            tags: self.tags,
            deprecated: self.deprecated,
            path: self.path,
            method: self.method,
            src: self.src,
        })
    }
}

impl Operation<'_> {
    /// The tool's name before prefix and allocation: `x-mcp-name`, else the `operationId`, else
    /// method and path, in snake case.
    pub fn base_name(&self) -> String {
        base_name(self.src.op, self.operation_id, self.method, self.path)
    }
}

fn base_name(op: &Node, operation_id: Option<&str>, method: HttpMethod, path: &str) -> String {
    if let Some(n) = crate::extensions::name(op).map(snake)
        && !n.is_empty()
    {
        return n;
    }
    if let Some(id) = operation_id {
        let s = snake(id);
        if !s.is_empty() {
            return s;
        }
    }
    snake(&format!("{} {}", method.key(), path))
}

/// The parameters that reach the request: a path parameter must be in the path template, and
/// `Accept`, `Content-Type` (the media types') and the headers the HTTP client sets are not
/// arguments. `Authorization` stays: a credential fills it, or the caller does.
fn reaching_params<'a>(
    src: &Source<'a>,
    path: &str,
    template: &[String],
    params: Vec<Param<'a>>,
    diags: &mut Diagnostics,
) -> Vec<Param<'a>> {
    params
        .into_iter()
        .filter(|p| {
            if p.location == ParamIn::Path && !template.iter().any(|t| t == p.name) {
                diags.warning(
                    src.docs.describe(&p.loc),
                    format!(
                        "path parameter {:?} is not in the path template {path:?}; ignored",
                        p.name
                    ),
                );
                return false;
            }
            if p.location != ParamIn::Header {
                return true;
            }
            let authorization = p.name.eq_ignore_ascii_case("authorization");
            if is_ignored_header_param(p.name) && !authorization {
                return false;
            }
            if is_reserved_header(p.name) {
                diags.warning(
                    src.docs.describe(&p.loc),
                    format!(
                        "header parameter {:?} is set by the HTTP client (framing, connection or target host), never by an argument; ignored",
                        p.name
                    ),
                );
                return false;
            }
            true
        })
        .collect()
}

/// The security alternatives of a `security` list (each the scheme names it requires).
fn security(reqs: Option<&Node>) -> Vec<SecurityRequirement> {
    let Some(reqs) = reqs.and_then(Node::as_array) else {
        return Vec::new();
    };
    reqs.iter()
        .filter_map(Node::as_object)
        .map(|r| r.keys().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Per security alternative naming an oauth2 or openIdConnect scheme: the union of the
/// scopes it lists for them (see `Route::oauth_scopes`).
fn oauth_scopes(reqs: Option<&Node>, schemes: &[(String, SecurityScheme)]) -> Vec<Vec<String>> {
    let Some(reqs) = reqs.and_then(Node::as_array) else {
        return Vec::new();
    };
    let is_oauth = |name: &str| {
        schemes.iter().any(|(n, s)| {
            n == name
                && matches!(
                    s,
                    SecurityScheme::OAuth2ClientCredentials { .. }
                        | SecurityScheme::OAuth2Token
                        | SecurityScheme::OAuth2AuthorizationCode { .. }
                )
        })
    };
    let mut out: Vec<Vec<String>> = Vec::new();
    for alt in reqs.iter().filter_map(Node::as_object) {
        let mut scopes: Vec<String> = Vec::new();
        let mut oauth = false;
        for (name, listed) in alt.entries() {
            if !is_oauth(name) {
                continue;
            }
            oauth = true;
            for s in listed
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Node::as_str)
            {
                if !scopes.iter().any(|x| x == s) {
                    scopes.push(s.to_string());
                }
            }
        }
        if oauth && !out.contains(&scopes) {
            out.push(scopes);
        }
    }
    out
}

/// The operation's or its path item's own server (OpenAPI 3).
fn server_override(src: &Source<'_>) -> Option<String> {
    if src.version == SpecVersion::Swagger2 {
        return None;
    }
    let servers = src.op.get("servers").or_else(|| src.item.get("servers"))?;
    first_server_url(servers, src.docs)
}

/// The Accept header (media types of all responses, success first, JSON first within each)
/// and the success response's JSON schema.
fn responses(src: &Source<'_>) -> Responses {
    let Some(responses) = src.op.get("responses").and_then(Node::as_object) else {
        return Responses {
            accept: None,
            schema: None,
        };
    };
    let resp_loc = src.op_loc.join("responses");
    let mut codes: Vec<(&str, &Node)> = responses.iter().collect();
    let rank = |c: &str| -> u32 {
        match c {
            "200" => 0,
            "201" => 1,
            c if c.starts_with('2') && c.len() == 3 && c.chars().all(|d| d.is_ascii_digit()) => {
                2 + c.parse::<u32>().unwrap_or(299) - 200
            }
            "2XX" | "2xx" => 200,
            "default" => 300,
            _ => 1000,
        }
    };
    codes.sort_by_key(|(c, _)| rank(c));
    let success = codes.iter().find(|(c, _)| rank(c) < 300).copied();

    let mut accept: Vec<String> = Vec::new();
    if src.version == SpecVersion::Swagger2 {
        accept = media_list(src, "produces");
        accept.sort_by_key(|m| !is_json(m));
    } else {
        for (c, r) in &codes {
            if let Ok((_, r)) = src.docs.deref_node(&resp_loc.join(c), r)
                && let Some(content) = r.get("content").and_then(Node::as_object)
            {
                let mut types: Vec<&str> = content.keys().collect();
                types.sort_by_key(|m| !is_json(m));
                for t in types {
                    if !accept.iter().any(|a| a == t) {
                        accept.push(t.to_string());
                    }
                }
            }
        }
    }
    let accept = (!accept.is_empty()).then(|| accept.join(", "));
    let schema = success.and_then(|(code, response)| {
        let (rloc, r) = src.docs.deref_node(&resp_loc.join(code), response).ok()?;
        if src.version == SpecVersion::Swagger2 {
            let json = accept.as_deref().is_none_or(|a| a.split(", ").any(is_json));
            return (r.get("schema").is_some() && json).then(|| rloc.join("schema"));
        }
        let content = r.get("content").and_then(Node::as_object)?;
        let (mt, media) = content.iter().find(|(m, _)| is_json(m))?;
        media.get("schema")?;
        Some(rloc.join("content").join(mt).join("schema"))
    });
    Responses { accept, schema }
}

fn count_methods(item: &Node) -> usize {
    HttpMethod::ALL
        .iter()
        .filter(|m| item.get(m.key()).is_some())
        .count()
}

/// (name, description) of each top-level tag that has both, in the spec's order.
fn tag_descriptions(root: &Node) -> Vec<(String, String)> {
    let Some(tags) = root.get("tags").and_then(Node::as_array) else {
        return Vec::new();
    };
    tags.iter()
        .filter_map(|t| {
            let name = str_at(Some(t), "name")?.trim();
            let description = str_at(Some(t), "description")?.trim();
            (!name.is_empty() && !description.is_empty())
                .then(|| (name.to_string(), description.to_string()))
        })
        .collect()
}

fn str_at<'v>(v: Option<&'v Node>, key: &str) -> Option<&'v str> {
    v?.get(key)?.as_str()
}

/// The first server's URL with variables replaced by their defaults.
fn first_server_url(servers: &Node, docs: &DocumentSet) -> Option<String> {
    let server = servers.as_array()?.first()?;
    let mut url = server.get("url")?.as_str()?.to_string();
    if let Some(vars) = server.get("variables").and_then(Node::as_object) {
        for (name, var) in vars {
            let default = var
                .get("default")
                .map(|d| match d.as_str() {
                    Some(s) => s.to_string(),
                    None => serde_json::to_string(d).unwrap_or_default(),
                })
                .unwrap_or_default();
            url = url.replace(&format!("{{{name}}}"), &default);
        }
    }
    let base = &docs.docs[0].url;
    if !url.contains("://")
        && matches!(base.scheme(), "http" | "https")
        && let Ok(joined) = base.join(&url)
    {
        return Some(joined.to_string());
    }
    // Scheme-relative (`//kubernetes.local`) in a spec read from a file: HTTPS, the scheme
    // operations that repeat the server spell out (so they are recognised as the same server).
    if url.starts_with("//") {
        return Some(format!("https:{url}"));
    }
    Some(url)
}

/// The API's base URL as the spec gives it.
fn base_url(docs: &DocumentSet, version: SpecVersion) -> Option<String> {
    let root = docs.root();
    if version == SpecVersion::Swagger2 {
        let origin = &docs.docs[0].url;
        let from_url = matches!(origin.scheme(), "http" | "https");
        let scheme = root
            .get("schemes")
            .and_then(Node::as_array)
            .and_then(|s| {
                let list: Vec<&str> = s.iter().filter_map(Node::as_str).collect();
                list.iter()
                    .find(|x| **x == "https")
                    .or(list.first())
                    .map(|s| s.to_string())
            })
            .or_else(|| from_url.then(|| origin.scheme().to_string()))
            .unwrap_or_else(|| "https".to_string());
        let host = root
            .get("host")
            .and_then(Node::as_str)
            .map(str::to_string)
            .or_else(|| {
                from_url
                    .then(|| {
                        origin.host_str().map(|h| match origin.port() {
                            Some(p) => format!("{h}:{p}"),
                            None => h.to_string(),
                        })
                    })
                    .flatten()
            });
        let base_path = root.get("basePath").and_then(Node::as_str).unwrap_or("");
        return match host {
            Some(h) => Some(format!("{scheme}://{h}{base_path}")),
            None if !base_path.is_empty() => Some(base_path.to_string()),
            None => None,
        };
    }
    first_server_url(root.get("servers")?, docs)
}

/// The API's security schemes that requests can carry, in the spec's order.
fn security_schemes(
    docs: &DocumentSet,
    version: SpecVersion,
    diags: &mut Diagnostics,
) -> Vec<(String, SecurityScheme)> {
    let root = docs.root();
    let (container, loc) = if version == SpecVersion::Swagger2 {
        (
            root.get("securityDefinitions"),
            Loc::new(0, JsonPointer::root().join("securityDefinitions")),
        )
    } else {
        (
            root.get("components")
                .and_then(|c| c.get("securitySchemes")),
            Loc::new(
                0,
                JsonPointer::root()
                    .join("components")
                    .join("securitySchemes"),
            ),
        )
    };
    let Some(map) = container.and_then(Node::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, _) in map {
        let sloc = loc.join(name);
        let Ok((sloc, s)) = docs.deref(&sloc) else {
            diags.warning(
                docs.describe(&sloc),
                "security scheme does not resolve; ignored",
            );
            continue;
        };
        let ty = s.get("type").and_then(Node::as_str).unwrap_or("");
        let scheme = match ty {
            "apiKey" => {
                let location = match s.get("in").and_then(Node::as_str) {
                    Some("query") => ApiKeyLocation::Query,
                    Some("cookie") => ApiKeyLocation::Cookie,
                    _ => ApiKeyLocation::Header,
                };
                s.get("name")
                    .and_then(Node::as_str)
                    .map(|n| SecurityScheme::ApiKey {
                        name: n.to_string(),
                        location,
                    })
            }
            "basic" => Some(SecurityScheme::Basic),
            "http" => {
                match s
                    .get("scheme")
                    .and_then(Node::as_str)
                    .map(str::to_ascii_lowercase)
                    .as_deref()
                {
                    Some("bearer") => Some(SecurityScheme::Bearer),
                    Some("basic") => Some(SecurityScheme::Basic),
                    other => {
                        diags.warning(docs.describe(&sloc), format!("HTTP auth scheme {other:?} is not supported; requests go without it"));
                        None
                    }
                }
            }
            "oauth2" => {
                let cc = if version == SpecVersion::Swagger2 {
                    (s.get("flow").and_then(Node::as_str) == Some("application")).then_some(s)
                } else {
                    s.get("flows").and_then(|f| f.get("clientCredentials"))
                };
                let code = if version == SpecVersion::Swagger2 {
                    (s.get("flow").and_then(Node::as_str) == Some("accessCode")).then_some(s)
                } else {
                    s.get("flows").and_then(|f| f.get("authorizationCode"))
                };
                let scopes_of = |flow: Option<&Node>| -> Vec<String> {
                    flow.and_then(|c| c.get("scopes"))
                        .and_then(Node::as_object)
                        .map(|m| m.keys().map(str::to_string).collect())
                        .unwrap_or_default()
                };
                let text = |flow: Option<&Node>, key: &str| {
                    flow.and_then(|c| c.get(key))
                        .and_then(Node::as_str)
                        .filter(|u| !u.trim().is_empty())
                        .map(str::to_string)
                };
                match text(cc, "tokenUrl") {
                    Some(url) => Some(SecurityScheme::OAuth2ClientCredentials {
                        token_url: url,
                        scopes: scopes_of(cc),
                    }),
                    None => match (text(code, "authorizationUrl"), text(code, "tokenUrl")) {
                        (Some(authorization_url), Some(token_url)) => {
                            Some(SecurityScheme::OAuth2AuthorizationCode {
                                authorization_url,
                                token_url,
                                refresh_url: text(code, "refreshUrl"),
                                scopes: scopes_of(code),
                            })
                        }
                        _ => Some(SecurityScheme::OAuth2Token),
                    },
                }
            }
            "openIdConnect" => Some(SecurityScheme::OAuth2Token),
            other => {
                diags.warning(
                    docs.describe(&sloc),
                    format!("security scheme type {other:?} is not supported"),
                );
                None
            }
        };
        if let Some(sc) = scheme {
            out.push((name.to_string(), sc));
        }
    }
    out
}

/// Path-item parameters merged with operation parameters (the operation wins on name + in).
pub(crate) fn parameters<'a>(
    src: &Source<'a>,
    diags: &mut Diagnostics,
) -> Result<Parameters<'a>, LowerError> {
    let mut out: Vec<Declared<'a>> = Vec::new();
    let sources = [
        (
            src.item.get("parameters"),
            src.item_loc.join("parameters"),
            true,
        ),
        (
            src.op.get("parameters"),
            src.op_loc.join("parameters"),
            false,
        ),
    ];
    for (list, list_loc, on_item) in sources {
        let Some(list) = list else { continue };
        let Some(list) = list.as_array() else {
            diags.warning(
                src.docs.describe(&list_loc),
                "`parameters` is not an array; ignored",
            );
            continue;
        };
        for (i, p) in list.iter().enumerate() {
            let ploc = list_loc.index(i);
            let shared = on_item || p.get("$ref").is_some();
            let (loc, node) = if p.get("$ref").is_some() {
                src.docs
                    .deref_node(&ploc, p)
                    .map_err(|source| LowerError::ParamRef {
                        at: src.docs.describe(&ploc),
                        source,
                    })?
            } else {
                (ploc.clone(), p)
            };
            let name = node.get("name").and_then(Node::as_str);
            let location = node.get("in").and_then(Node::as_str);
            let (Some(name), Some(location)) = (name, location) else {
                return Err(LowerError::ParamIncomplete {
                    at: src.docs.describe(&loc),
                });
            };
            let Some(location) = DeclaredIn::parse(location) else {
                return Err(LowerError::ParamLocation {
                    at: src.docs.describe(&loc),
                    location: location.to_string(),
                });
            };
            let declared = Declared {
                loc,
                node,
                name,
                location,
                shared,
            };
            match out
                .iter_mut()
                .find(|q| q.name == name && q.location == location)
            {
                Some(existing) => *existing = declared,
                None => out.push(declared),
            }
        }
    }
    let mut params = Parameters {
        params: Vec::with_capacity(out.len()),
        body: None,
        form: Vec::new(),
    };
    for d in out {
        match d.location {
            DeclaredIn::Param(location) => params.params.push(lower_param(src, d, location)),
            DeclaredIn::Body => {
                if params.body.is_none() {
                    params.body = Some(d);
                }
            }
            DeclaredIn::FormData => params.form.push(d),
        }
    }
    Ok(params)
}

fn lower_param<'a>(src: &Source<'a>, d: Declared<'a>, location: ParamIn) -> Param<'a> {
    let node = d.node;
    let swagger2 = src.version == SpecVersion::Swagger2;
    let schema = if let Some(s) = node.get("schema") {
        ParamSchema::Schema(s)
    } else if let Some(content) = node.get("content").and_then(Node::as_object) {
        match content.iter().next() {
            Some((mt, media)) => ParamSchema::Content {
                media_type: Some(mt),
                schema: media.get("schema"),
            },
            None => ParamSchema::Content {
                media_type: None,
                schema: None,
            },
        }
    } else if swagger2 {
        ParamSchema::Inline(node)
    } else {
        ParamSchema::Missing
    };
    let explode_of = |default: bool| {
        node.get("explode")
            .and_then(Node::as_bool)
            .unwrap_or(default)
    };
    let style = node.get("style").and_then(Node::as_str);
    let (style, explode) = match location {
        // Swagger 2.0 path parameters have one format.
        ParamIn::Path if swagger2 => (Style::Simple, false),
        ParamIn::Path => {
            let st = match style {
                Some("label") => Style::Label,
                Some("matrix") => Style::Matrix,
                _ => Style::Simple,
            };
            (st, explode_of(false))
        }
        ParamIn::Query if swagger2 => {
            let (st, explode) = swagger2_collection(node);
            (Style::of_query(st), explode)
        }
        ParamIn::Query => {
            let st = match style {
                Some("spaceDelimited") => Style::SpaceDelimited,
                Some("pipeDelimited") => Style::PipeDelimited,
                Some("deepObject") => Style::DeepObject,
                _ => Style::Form,
            };
            (
                st,
                explode_of(matches!(st, Style::Form | Style::DeepObject)),
            )
        }
        ParamIn::Header => (Style::Simple, explode_of(false)),
        ParamIn::Cookie => (Style::Form, explode_of(true)),
    };
    let allow_empty_value = location == ParamIn::Query && allows_empty_value(src, &d, &schema);
    Param {
        name: d.name,
        location,
        style,
        explode,
        allow_empty_value,
        allow_reserved: node
            .get("allowReserved")
            .and_then(Node::as_bool)
            .unwrap_or(false),
        required: location == ParamIn::Path
            || node
                .get("required")
                .and_then(Node::as_bool)
                .unwrap_or(false),
        schema,
        description: node.get("description").and_then(Node::as_str),
        deprecated: node.get("deprecated").and_then(Node::as_bool) == Some(true),
        example: node.get("example"),
        loc: d.loc,
        shared: d.shared,
    }
}

/// Whether a query parameter may be sent with an empty value: `allowEmptyValue: true` (both
/// dialects), or a schema whose `enum` lists the empty string (the author means `name=` to be
/// sent). Otherwise OpenAPI allows no empty query value (`allowEmptyValue` defaults to false).
fn allows_empty_value(src: &Source<'_>, d: &Declared<'_>, schema: &ParamSchema<'_>) -> bool {
    if d.node.get("allowEmptyValue").and_then(Node::as_bool) == Some(true) {
        return true;
    }
    let (loc, node) = match *schema {
        ParamSchema::Schema(s) => (d.loc.join("schema"), s),
        ParamSchema::Inline(n) => (d.loc.clone(), n),
        ParamSchema::Content { .. } | ParamSchema::Missing => return false,
    };
    let Ok((_, node)) = src.docs.deref_node(&loc, node) else {
        return false;
    };
    node.get("enum")
        .and_then(Node::as_array)
        .is_some_and(|e| e.iter().any(|v| v.as_str() == Some("")))
}

/// Swagger 2.0 `collectionFormat` -> query style.
pub(crate) fn swagger2_collection(node: &Node) -> (QueryStyle, bool) {
    match node.get("collectionFormat").and_then(Node::as_str) {
        Some("multi") => (QueryStyle::Form, true),
        Some("ssv") => (QueryStyle::SpaceDelimited, false),
        Some("pipes") => (QueryStyle::PipeDelimited, false),
        _ => (QueryStyle::Form, false),
    }
}

/// The operation's request body: OpenAPI 3's `requestBody`, or Swagger 2.0's `in: body` or
/// `formData` parameters. Fails when `requestBody` is a `$ref` that does not resolve.
pub(crate) fn request_body<'a>(
    src: &Source<'a>,
    params: Parameters<'a>,
) -> Result<Option<RequestBody<'a>>, LowerError> {
    if src.version == SpecVersion::Swagger2 {
        return Ok(swagger2_body(src, params));
    }
    if src.op.get("requestBody").is_none() {
        return Ok(None);
    }
    let rb_loc = src.op_loc.join("requestBody");
    let (rb_loc, _) = src
        .docs
        .deref(&rb_loc)
        .map_err(LowerError::RequestBodyRef)?;
    let rb = src.docs.get(&rb_loc).unwrap_or(Node::NULL);
    let required = rb.get("required").and_then(Node::as_bool).unwrap_or(false);
    let Some(content) = rb.get("content").and_then(Node::as_object) else {
        return Ok(None);
    };
    let Some((mt, media)) = choose_media_type(content, |mt| {
        flatten_object(src.docs, &rb_loc.join("content").join(mt).join("schema")).is_some()
    }) else {
        return Ok(None);
    };
    let media_loc = rb_loc.join("content").join(mt);
    let encoding: Vec<PartEncoding> = media
        .get("encoding")
        .and_then(Node::as_object)
        .map(|enc| {
            enc.iter()
                .map(|(name, e)| PartEncoding {
                    name: name.to_string(),
                    content_type: e
                        .get("contentType")
                        .and_then(Node::as_str)
                        .map(str::to_string),
                    style: e.get("style").and_then(Node::as_str).and_then(query_style),
                    explode: e.get("explode").and_then(Node::as_bool),
                    binary: false,
                })
                .collect()
        })
        .unwrap_or_default();
    let schema = media.get("schema").map(|_| media_loc.join("schema"));
    let mut kind = body_kind(mt);
    // A media range whose schema is a binary string (`*/*: {type: string, format: binary}`) is
    // an upload: the bytes are sent, not a JSON string of them.
    if kind == BodyKind::Json
        && media_base(mt).contains('*')
        && schema
            .as_ref()
            .and_then(|l| src.docs.deref(l).ok())
            .is_some_and(|(_, n)| {
                n.get("type").and_then(Node::as_str) == Some("string")
                    && n.get("format").and_then(Node::as_str) == Some("binary")
            })
    {
        kind = BodyKind::Binary;
    }
    Ok(Some(RequestBody {
        required,
        description: rb.get("description"),
        media: Media {
            content_type: mt.to_string(),
            kind,
            encoding,
        },
        content: BodyContent::MediaSchema(schema),
    }))
}

/// Swagger 2.0: the `in: body` parameter, else the `formData` parameters, as a request body.
fn swagger2_body<'a>(src: &Source<'a>, params: Parameters<'a>) -> Option<RequestBody<'a>> {
    let consumes = media_list(src, "consumes");
    if let Some(p) = params.body {
        // JSON Patch fits a body that is an array of operations.
        let array_body = src
            .docs
            .deref(&p.loc.join("schema"))
            .is_ok_and(|(_, n)| n.get("type").and_then(Node::as_str) == Some("array"));
        let ct = consumes
            .iter()
            .filter(|c| is_json(c))
            .min_by_key(|c| match json_rank(c) {
                2 if array_body => 1,
                r => r,
            })
            .or_else(|| consumes.first())
            .cloned()
            .unwrap_or_else(|| "application/json".to_string());
        return Some(RequestBody {
            required: p
                .node
                .get("required")
                .and_then(Node::as_bool)
                .unwrap_or(false),
            description: p.node.get("description"),
            media: Media {
                kind: body_kind(&ct),
                content_type: ct,
                encoding: Vec::new(),
            },
            content: BodyContent::Schema(p.loc.join("schema")),
        });
    }
    if params.form.is_empty() {
        return None;
    }
    let is_file = |p: &Declared<'_>| p.node.get("type").and_then(Node::as_str) == Some("file");
    let multipart = params.form.iter().any(is_file)
        || consumes
            .iter()
            .any(|c| c.starts_with("multipart/form-data"));
    let (kind, content_type) = if multipart {
        (BodyKind::Multipart, "multipart/form-data".to_string())
    } else {
        (
            BodyKind::Form,
            "application/x-www-form-urlencoded".to_string(),
        )
    };
    let required = params
        .form
        .iter()
        .any(|p| p.node.get("required").is_some_and(|v| v.is_bool(true)));
    let encoding = params
        .form
        .iter()
        .map(|p| {
            let (style, explode) = swagger2_collection(p.node);
            PartEncoding {
                name: p.name.to_string(),
                content_type: None,
                style: Some(style),
                explode: Some(explode),
                binary: is_file(p),
            }
        })
        .collect();
    let fields = params
        .form
        .into_iter()
        .map(|p| FormField {
            name: p.name,
            required: p
                .node
                .get("required")
                .and_then(Node::as_bool)
                .unwrap_or(false),
            loc: p.loc,
            node: p.node,
        })
        .collect();
    Some(RequestBody {
        required,
        description: None,
        media: Media {
            content_type,
            kind,
            encoding,
        },
        content: BodyContent::Fields(fields),
    })
}

/// A Swagger 2.0 media-type list (`consumes`, `produces`): the operation's, else the document's.
pub(crate) fn media_list(src: &Source<'_>, key: &str) -> Vec<String> {
    let list = src.op.get(key).or_else(|| src.docs.root().get(key));
    list.and_then(Node::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Node::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn query_style(s: &str) -> Option<QueryStyle> {
    match s {
        "form" => Some(QueryStyle::Form),
        "spaceDelimited" => Some(QueryStyle::SpaceDelimited),
        "pipeDelimited" => Some(QueryStyle::PipeDelimited),
        "deepObject" => Some(QueryStyle::DeepObject),
        _ => None,
    }
}

/// JSON first, then forms, multipart, text, and anything else.
///
/// A form or multipart type whose schema declares no fields (`{type: object, format: file}`)
/// comes after a raw binary alternative: the file is then sent as the body, as the spec offers.
fn choose_media_type(
    content: Obj<'_>,
    declares_fields: impl Fn(&str) -> bool,
) -> Option<(&str, &Node)> {
    let has_binary = content.keys().any(|mt| body_kind(mt) == BodyKind::Binary);
    let score = |mt: &str| match body_kind(mt) {
        BodyKind::Json => JSON_BODY_PREFERENCE,
        BodyKind::Form | BodyKind::Multipart if has_binary && !declares_fields(mt) => 5,
        BodyKind::Form => 1,
        BodyKind::Multipart => 2,
        BodyKind::Text => 3,
        BodyKind::Binary => 4,
    };
    // Among equals, the JSON type that fits best (see `json_rank`).
    content
        .iter()
        .min_by_key(|(mt, _)| (score(mt), json_rank(mt)))
}

/// Order among JSON media types for an object body: `application/json`, then other concrete
/// types (`application/merge-patch+json`), then JSON Patch (`application/json-patch+json`,
/// whose document is an array of operations, as Kubernetes lists it first), then ranges
/// (`*/*`, `application/*+json`).
fn json_rank(mt: &str) -> u8 {
    let base = media_base(mt);
    if base.contains('*') {
        3
    } else if base == "application/json-patch+json" {
        2
    } else if base == "application/json" {
        0
    } else {
        1
    }
}

/// The properties of an object schema (following `$ref`s and merging top-level `allOf`), or
/// `None` when the schema is not a plain object (arrays, primitives, unions, maps).
pub(crate) fn flatten_object(docs: &DocumentSet, loc: &Loc) -> Option<Vec<(String, Loc, bool)>> {
    let mut props: Vec<(String, Loc, bool)> = Vec::new();
    let mut required: Vec<String> = Vec::new();
    let mut visited: HashSet<Loc> = HashSet::default();
    let mut saw_object = false;
    if !collect_object(
        docs,
        loc,
        &mut props,
        &mut required,
        &mut visited,
        &mut saw_object,
        0,
    ) || !saw_object
    {
        return None;
    }
    for (name, _, req) in props.iter_mut() {
        *req = required.contains(name);
    }
    // An object that declares nothing (`{type: object}`) accepts any members: it is one
    // argument, not zero (unless it is closed with `additionalProperties: false`).
    if props.is_empty() && required.is_empty() {
        let closed = docs.deref(loc).is_ok_and(|(_, n)| {
            n.get("additionalProperties")
                .is_some_and(|v| v.is_bool(false))
        });
        if !closed {
            return None;
        }
    }
    // A name the object requires but never declares (Cloudflare's rate-limit update requires an
    // `id` its body schema does not list) still becomes an argument: the API needs it, and the
    // flat inputSchema would otherwise refuse it as unknown. Its location names no schema.
    for name in required {
        if !props.iter().any(|(n, _, _)| *n == name) {
            let at = loc.join("properties").join(&name);
            props.push((name, at, true));
        }
    }
    Some(props)
}

fn collect_object(
    docs: &DocumentSet,
    loc: &Loc,
    props: &mut Vec<(String, Loc, bool)>,
    required: &mut Vec<String>,
    visited: &mut HashSet<Loc>,
    saw_object: &mut bool,
    depth: usize,
) -> bool {
    if depth > 32 {
        return false;
    }
    let Ok((loc, node)) = docs.deref(loc) else {
        return false;
    };
    if !visited.insert(loc.clone()) {
        return false;
    }
    let Some(m) = node.as_object() else {
        return false;
    };
    if m.contains_key("oneOf") || m.contains_key("anyOf") || m.contains_key("not") {
        return false;
    }
    if m.get("nullable").is_some_and(|v| v.is_bool(true)) {
        return false;
    }
    match m.get("type").map(Node::as_str) {
        None => {}
        Some(Some("object")) => *saw_object = true,
        _ => return false,
    }
    if let Some(parts) = m.get("allOf").and_then(Node::as_array) {
        for (i, _) in parts.iter().enumerate() {
            if !collect_object(
                docs,
                &loc.join("allOf").index(i),
                props,
                required,
                visited,
                saw_object,
                depth + 1,
            ) {
                return false;
            }
        }
    }
    if let Some(ps) = m.get("properties").and_then(Node::as_object) {
        *saw_object = true;
        let Ok((ps_loc, ps)) = docs.schema_map(&loc.join("properties"), ps) else {
            return false;
        };
        for k in ps.keys() {
            let ploc = ps_loc.join(k);
            match props.iter_mut().find(|(n, _, _)| n == k) {
                Some(existing) => existing.1 = ploc,
                None => props.push((k.to_string(), ploc, false)),
            }
        }
    }
    if let Some(r) = m.get("required").and_then(Node::as_array) {
        required.extend(r.iter().filter_map(Node::as_str).map(str::to_string));
    }
    // A pure map (no properties, only additionalProperties) is not flattened.
    let open_map = m
        .get("additionalProperties")
        .is_some_and(|a| !a.is_bool(false));
    !(props.is_empty() && open_map)
}
