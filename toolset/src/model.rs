//! The tool set: what the converter produces and what the proxy and the generated crate consume.
//! Every argument knows where it goes on the wire.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use crate::location::Location;

/// Header names an argument never sets: the HTTP client owns them (framing, connection
/// management, the target host) or they are hop-by-hop (RFC 9110 section 7.6.1), and a model that
/// could set `Host`, `Transfer-Encoding` or `Proxy-Authorization` could redirect or smuggle
/// requests. Lower case. (`Accept`, `Content-Type` and `Authorization`, which OpenAPI says to
/// ignore as header parameters, are [`is_ignored_header_param`].)
pub const RESERVED_HEADERS: &[&str] = &[
    "connection",
    "content-length",
    "expect",
    "host",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Whether a header of this name is reserved ([`RESERVED_HEADERS`]; any case).
pub fn is_reserved_header(name: &str) -> bool {
    RESERVED_HEADERS
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name.trim()))
}

/// Header parameters OpenAPI says are ignored (`Accept`, `Content-Type`, `Authorization`: the
/// media types and security schemes say those).
pub fn is_ignored_header_param(name: &str) -> bool {
    ["accept", "content-type", "authorization"]
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name))
}

/// How a server exposes the operations (`--mode`): the proxy's option and a generated crate's
/// default are this one enum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Exposure {
    /// One tool per operation.
    #[default]
    Tools,
    /// Only the discovery tools (`search_operations`, `describe_operation`, `call_operation`).
    Dynamic,
    /// Operations matching a pin glob as tools, the discovery tools for the rest.
    Hybrid,
    /// Code mode: `search_operations`, `describe_operation` (TypeScript declarations) and
    /// `execute`, which runs a script against an `api` object of the operations.
    Code,
}

impl Exposure {
    /// The `--mode` value.
    pub fn name(self) -> &'static str {
        match self {
            Exposure::Tools => "tools",
            Exposure::Dynamic => "dynamic",
            Exposure::Hybrid => "hybrid",
            Exposure::Code => "code",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    Get,
    Put,
    Post,
    Delete,
    Options,
    Head,
    Patch,
    Trace,
}

impl HttpMethod {
    pub const ALL: [HttpMethod; 8] = [
        HttpMethod::Get,
        HttpMethod::Put,
        HttpMethod::Post,
        HttpMethod::Delete,
        HttpMethod::Options,
        HttpMethod::Head,
        HttpMethod::Patch,
        HttpMethod::Trace,
    ];
    /// The lower-case key used in a path item.
    pub fn key(self) -> &'static str {
        match self {
            HttpMethod::Get => "get",
            HttpMethod::Put => "put",
            HttpMethod::Post => "post",
            HttpMethod::Delete => "delete",
            HttpMethod::Options => "options",
            HttpMethod::Head => "head",
            HttpMethod::Patch => "patch",
            HttpMethod::Trace => "trace",
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Put => "PUT",
            HttpMethod::Post => "POST",
            HttpMethod::Delete => "DELETE",
            HttpMethod::Options => "OPTIONS",
            HttpMethod::Head => "HEAD",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Trace => "TRACE",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.key().eq_ignore_ascii_case(s))
    }
    pub fn is_read_only(self) -> bool {
        matches!(
            self,
            HttpMethod::Get | HttpMethod::Head | HttpMethod::Options | HttpMethod::Trace
        )
    }
    pub fn is_idempotent(self) -> bool {
        matches!(
            self,
            HttpMethod::Get
                | HttpMethod::Head
                | HttpMethod::Options
                | HttpMethod::Trace
                | HttpMethod::Put
                | HttpMethod::Delete
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PathStyle {
    Simple,
    Label,
    Matrix,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum QueryStyle {
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
}

/// Where an argument goes in the HTTP request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "in", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ArgLocation {
    Path {
        style: PathStyle,
        explode: bool,
    },
    Query {
        style: QueryStyle,
        explode: bool,
        allow_reserved: bool,
        /// The parameter may be sent with an empty value (`name=`): OpenAPI's `allowEmptyValue`,
        /// or a schema whose `enum` lists `""`. Without it an empty string argument is not sent
        /// (optional) or refused (required), as the spec allows no empty value.
        #[serde(default, skip_serializing_if = "is_false")]
        allow_empty_value: bool,
    },
    Header {
        explode: bool,
    },
    Cookie {
        explode: bool,
    },
    /// One property of an object request body.
    BodyField,
    /// The whole request body (non-object bodies, or bodies without known properties).
    Body,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl ArgLocation {
    /// A query parameter with `allowReserved` and `allowEmptyValue` off, as most are.
    pub fn query(style: QueryStyle, explode: bool) -> Self {
        ArgLocation::Query {
            style,
            explode,
            allow_reserved: false,
            allow_empty_value: false,
        }
    }

    /// The parameter location, `None` for the request body.
    pub fn param_in(&self) -> Option<ParamIn> {
        match self {
            ArgLocation::Path { .. } => Some(ParamIn::Path),
            ArgLocation::Query { .. } => Some(ParamIn::Query),
            ArgLocation::Header { .. } => Some(ParamIn::Header),
            ArgLocation::Cookie { .. } => Some(ParamIn::Cookie),
            ArgLocation::BodyField | ArgLocation::Body => None,
        }
    }

    /// `path`, `query`, `header`, `cookie` or `body`.
    pub fn label(&self) -> &'static str {
        self.param_in().map_or("body", ParamIn::as_str)
    }
}

/// Where a parameter goes: OpenAPI's `in`. (Swagger 2.0's `in: body` and `in: formData` are
/// request bodies, not parameters.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamIn {
    Path,
    Query,
    Header,
    Cookie,
}

impl ParamIn {
    /// In the order a tool lists its parameter arguments.
    pub const ALL: [ParamIn; 4] = [
        ParamIn::Path,
        ParamIn::Query,
        ParamIn::Header,
        ParamIn::Cookie,
    ];

    /// As a spec writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamIn::Path => "path",
            ParamIn::Query => "query",
            ParamIn::Header => "header",
            ParamIn::Cookie => "cookie",
        }
    }

    /// A spec's `in` (exactly as written: `Query` is not a location).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

/// One tool argument and its wire binding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArgBinding {
    /// Property name in the tool's inputSchema.
    pub arg: String,
    /// Name on the wire: parameter name, or body property name.
    pub wire: String,
    pub location: ArgLocation,
    pub required: bool,
    /// Parameters declared with `content` instead of `schema`: the value is serialized with this
    /// media type (JSON) before the style rules apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BodyKind {
    Json,
    Form,
    Multipart,
    Text,
    Binary,
}

/// Per-property encoding of a form or multipart body (OpenAPI `encoding` object).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartEncoding {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style: Option<QueryStyle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explode: Option<bool>,
    /// The argument carries base64 that is decoded to raw bytes (file parts).
    #[serde(default)]
    pub binary: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BodyBinding {
    pub kind: BodyKind,
    pub content_type: String,
    pub required: bool,
    /// Whether the body's properties are flattened into separate arguments (`BodyField`s).
    pub flattened: bool,
    /// For a whole `Body` argument of kind Binary: the argument is base64.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub encoding: Vec<PartEncoding>,
}

/// How the proxy maps a JSON response body to `structuredContent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OutputShape {
    /// No outputSchema: no structured content.
    None,
    /// The body is an object: structured content is the body.
    Object,
    /// The body is wrapped as `{"result": body}`.
    Wrapped,
}

/// An operation's support for MCP tasks (the `io.modelcontextprotocol/tasks` extension), as its
/// `x-mcp-task` says. The extension defines no field of the tool definition for it (the server
/// decides per request), so it is not in `tools/list`: it steers what the server does with a
/// call from a client that declared the extension.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// No `x-mcp-task`: a call becomes a task when the API answers 202 with a status URL a GET
    /// tool reads, or (`--task-after`) when it is still running after the threshold.
    #[default]
    Inferred,
    /// `x-mcp-task: none` (or `false`): never a task; the call is answered as without tasks.
    #[serde(rename = "none")]
    Never,
    /// `x-mcp-task: optional` (or `true`): a task for a client that declared the extension, a
    /// plain call for others.
    Optional,
    /// `x-mcp-task: required`: a task for a client that declared the extension; others are
    /// refused (-32021, the extension's Missing Required Client Capability).
    Required,
}

impl TaskSupport {
    pub fn is_inferred(&self) -> bool {
        *self == TaskSupport::Inferred
    }
}

/// One security requirement alternative: all of these schemes together.
pub type SecurityRequirement = Vec<String>;

/// Everything needed to turn a tool call into an HTTP request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Route {
    pub method: HttpMethod,
    /// Path template as written in the spec, e.g. `/pets/{petId}`.
    pub path: String,
    /// Operation- or path-level server overriding the API's base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub args: Vec<ArgBinding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<BodyBinding>,
    /// `Accept` header derived from the declared responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<String>,
    /// Alternatives (any one suffices) of sets of security schemes (all needed). Empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<SecurityRequirement>,
    /// The OAuth scopes a caller's token needs (`--oauth-issuer`): one entry per security
    /// alternative that names an oauth2 or openIdConnect scheme, the union of the scopes it lists
    /// for them. A token may call the operation when it holds every scope of any one entry.
    /// Empty: the operation needs no scope.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub oauth_scopes: Vec<Vec<String>>,
    pub output: OutputShape,
    /// Arguments pinned by an overrides file: not in the inputSchema, always sent with these
    /// values (the forwarder adds them to every call).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub pinned: serde_json::Map<String, serde_json::Value>,
    /// Parameters the operation declares that a credential fills: an apiKey scheme's parameter
    /// or an `Authorization` header. The credential is sent in their place; a required one that
    /// neither a configured credential nor an argument fills makes the call a tool error that
    /// names the variable to set, and nothing is sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credential_params: Vec<CredentialParam>,
    /// The tool's inputSchema, as its [`ToolDef`] has it (the forwarder reads which `null`s mean
    /// "not set" from it: [`crate::validate::drop_unset_nulls`]). Not part of the contract: never
    /// serialized, never compared.
    #[serde(skip)]
    pub input_schema: InputSchemaLink,
}

impl Route {
    /// A route with nothing but a method and a path template: no arguments, body, security or
    /// structured output (tests and hand-made tools start here).
    pub fn new(method: HttpMethod, path: impl Into<String>) -> Self {
        Route {
            method,
            path: path.into(),
            server: None,
            args: Vec::new(),
            body: None,
            accept: None,
            security: Vec::new(),
            oauth_scopes: Vec::new(),
            output: OutputShape::None,
            pinned: serde_json::Map::new(),
            credential_params: Vec::new(),
            input_schema: InputSchemaLink::default(),
        }
    }

    pub fn arg(&self, name: &str) -> Option<&ArgBinding> {
        self.args.iter().find(|a| a.arg == name)
    }
}

/// A parameter a credential fills (see [`Route::credential_params`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialParam {
    /// The parameter's name (a header name, a query or cookie name).
    pub name: String,
    #[serde(rename = "in")]
    pub location: ApiKeyLocation,
    /// The operation declares it required.
    pub required: bool,
}

impl CredentialParam {
    /// Whether scheme `scheme` puts its credential in this parameter: an apiKey scheme of this
    /// name and location, or (for an `Authorization` header) a scheme sent as `Authorization`.
    pub fn filled_by(&self, scheme: &SecurityScheme) -> bool {
        let header = self.location == ApiKeyLocation::Header;
        let same = |n: &str| {
            if header {
                n.eq_ignore_ascii_case(&self.name)
            } else {
                n == self.name
            }
        };
        match scheme {
            SecurityScheme::ApiKey { name, location } => *location == self.location && same(name),
            SecurityScheme::Bearer
            | SecurityScheme::Basic
            | SecurityScheme::OAuth2ClientCredentials { .. }
            | SecurityScheme::OAuth2Token
            | SecurityScheme::OAuth2AuthorizationCode { .. } => header && same("Authorization"),
        }
    }
}

/// A tool's inputSchema, shared with its route (see [`Route::input_schema`]): set when the
/// [`ToolDef`] is made, when its schemas are bundled, and after every [`ToolDef::tool_mut`].
#[derive(Default)]
pub struct InputSchemaLink(
    std::sync::RwLock<Option<Arc<serde_json::Map<String, serde_json::Value>>>>,
);

impl InputSchemaLink {
    /// The inputSchema, once the tool has one.
    pub fn get(&self) -> Option<Arc<serde_json::Map<String, serde_json::Value>>> {
        match self.0.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn set(&self, schema: Option<Arc<serde_json::Map<String, serde_json::Value>>>) {
        match self.0.write() {
            Ok(mut g) => *g = schema,
            Err(poisoned) => *poisoned.into_inner() = schema,
        }
    }
}

impl Clone for InputSchemaLink {
    fn clone(&self) -> Self {
        InputSchemaLink(std::sync::RwLock::new(self.get()))
    }
}

/// Derived from the tool, so it never makes two routes differ.
impl PartialEq for InputSchemaLink {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for InputSchemaLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.get().is_some() {
            "InputSchemaLink(set)"
        } else {
            "InputSchemaLink(unset)"
        })
    }
}

/// A credential scheme from `securitySchemes` / `securityDefinitions`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SecurityScheme {
    ApiKey {
        name: String,
        location: ApiKeyLocation,
    },
    Bearer,
    Basic,
    OAuth2ClientCredentials {
        token_url: String,
        scopes: Vec<String>,
    },
    /// OAuth2 flows other than client credentials, and OpenID Connect: a token supplied by the user.
    OAuth2Token,
    /// An OAuth2 scheme whose flows include authorization code (OpenAPI 3 `authorizationCode`,
    /// Swagger 2 `accessCode`) and not client credentials: a user's token, given like
    /// [`SecurityScheme::OAuth2Token`]'s, or obtained per user by `--oauth-proxy`, which sends
    /// each user through this flow.
    OAuth2AuthorizationCode {
        authorization_url: String,
        token_url: String,
        /// `refreshUrl`, when the flow names one (else refreshes go to `token_url`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refresh_url: Option<String>,
        scopes: Vec<String>,
    },
}

/// `OPENAPI_MCP_` + the scheme name in upper snake case: the environment variable (or the stem
/// of the variables) that holds a scheme's credential.
pub fn credential_env_base(scheme_name: &str) -> String {
    let mut snake = crate::naming::snake(scheme_name);
    if snake.is_empty() {
        snake = format!("scheme_{}", crate::naming::short_hash(scheme_name));
    }
    format!("OPENAPI_MCP_{}", snake.to_ascii_uppercase())
}

/// Security schemes whose names map to the same variables (`ApiKey`, `api-key` and `API_KEY` are
/// all `OPENAPI_MCP_API_KEY`): (variable stem, scheme names), in spec order. One secret would go
/// to each of them (as a header, in a query, as Basic auth), so such schemes read nothing from
/// the environment; `--auth SCHEME=VALUE` sets each. The proxy, generated servers and their
/// READMEs use this one rule.
pub fn ambiguous_env(schemes: &[(String, SecurityScheme)]) -> Vec<(String, Vec<String>)> {
    let mut by_base: Vec<(String, Vec<String>)> = Vec::new();
    for (name, _) in schemes {
        let base = credential_env_base(name);
        match by_base.iter_mut().find(|(b, _)| *b == base) {
            Some((_, names)) => names.push(name.clone()),
            None => by_base.push((base, vec![name.clone()])),
        }
    }
    by_base.retain(|(_, names)| names.len() > 1);
    by_base
}

impl SecurityScheme {
    /// The environment variables consulted for this scheme's credential, in the order they are
    /// tried (the proxy, generated servers and their READMEs name the same ones).
    pub fn env_var_names(&self, scheme_name: &str) -> Vec<String> {
        let base = credential_env_base(scheme_name);
        match self {
            SecurityScheme::Basic => {
                vec![format!("{base}_USERNAME"), format!("{base}_PASSWORD"), base]
            }
            SecurityScheme::OAuth2ClientCredentials { .. } => {
                vec![
                    format!("{base}_CLIENT_ID"),
                    format!("{base}_CLIENT_SECRET"),
                    base,
                ]
            }
            SecurityScheme::ApiKey { .. }
            | SecurityScheme::Bearer
            | SecurityScheme::OAuth2Token
            | SecurityScheme::OAuth2AuthorizationCode { .. } => vec![base],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApiKeyLocation {
    Header,
    Query,
    Cookie,
}

impl ApiKeyLocation {
    pub fn param_in(self) -> ParamIn {
        match self {
            ApiKeyLocation::Header => ParamIn::Header,
            ApiKeyLocation::Query => ParamIn::Query,
            ApiKeyLocation::Cookie => ParamIn::Cookie,
        }
    }
}

/// One tool: the MCP definition served in `tools/list`, and its route.
///
/// A converted tool's schemas are assembled from the conversion's shared definitions the first
/// time something needs them ([`ToolDef::tool`]): a large API's tool list carries the same
/// definitions in hundreds of self-contained schemas (Kubernetes: a 3.9 MB spec, a 24 MB
/// `tools/list`), and dynamic mode, search, lint-free serving of a few tools or a filter only ever
/// need a handful of them. The name, title, description and annotations are always at hand.
#[derive(Clone, Debug)]
pub struct ToolDef {
    /// The tool; its schemas are the final ones unless `deferred` is set.
    head: rmcp::model::Tool,
    deferred: Option<Deferred>,
    pub route: Route,
    /// The operation the tool was made from (for filters, lint, diagnostics).
    pub operation_id: Option<String>,
    pub tags: Vec<String>,
    /// Where the operation is (`file#/paths/...`).
    pub location: Location,
    /// The API the tool belongs to, as an index into the server's APIs, when one server serves
    /// several (`apis:` in a config file); 0 otherwise. Each call goes to its API's forwarder
    /// (base URL, credentials, headers).
    pub api: usize,
    /// The operation's `x-mcp-task` ([`TaskSupport::Inferred`] without one).
    pub task_support: TaskSupport,
}

/// Where a tool's deferred schemas come from: the converter implements it (its shared
/// definitions, bundled into self-contained schemas on first use). The contract only needs to
/// ask for the finished tool, so the tool set never depends on the converter.
pub trait SchemaSource: Send + Sync {
    /// The tool `head` (name, title, description, annotations) with its self-contained input and
    /// output schemas.
    fn materialize(&self, head: &rmcp::model::Tool) -> rmcp::model::Tool;
    /// Whether the tool has an outputSchema, without bundling it.
    fn has_output(&self) -> bool;
    /// The inputSchema's top level (property names and types, `required`) without bundling the
    /// shared definitions: `$ref`s may be left. Defaults to the bundled inputSchema.
    fn input_outline(
        &self,
        head: &rmcp::model::Tool,
    ) -> Arc<serde_json::Map<String, serde_json::Value>> {
        self.materialize(head).input_schema
    }
}

/// Schemas still to be bundled from shared definitions, and the tool once they are.
#[derive(Clone)]
struct Deferred {
    schemas: Arc<dyn SchemaSource>,
    full: std::sync::OnceLock<rmcp::model::Tool>,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred")
            .field("materialized", &self.full.get().is_some())
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// A tool whose definition is complete (generated servers, tests, reshaped tools).
    pub fn new(
        tool: rmcp::model::Tool,
        route: Route,
        operation_id: Option<String>,
        tags: Vec<String>,
        location: Location,
    ) -> Self {
        route.input_schema.set(Some(tool.input_schema.clone()));
        ToolDef {
            head: tool,
            deferred: None,
            route,
            operation_id,
            tags,
            location,
            api: 0,
            task_support: TaskSupport::Inferred,
        }
    }

    /// A converted tool whose schemas are bundled on first use.
    pub fn with_deferred_schemas(mut self, schemas: Arc<dyn SchemaSource>) -> Self {
        self.route.input_schema.set(None);
        self.deferred = Some(Deferred {
            schemas,
            full: std::sync::OnceLock::new(),
        });
        self
    }

    /// The complete MCP tool definition, as `tools/list` serves it (schemas bundled on first use,
    /// then kept).
    pub fn tool(&self) -> &rmcp::model::Tool {
        match &self.deferred {
            None => &self.head,
            Some(d) => d.full.get_or_init(|| {
                let tool = d.schemas.materialize(&self.head);
                self.route.input_schema.set(Some(tool.input_schema.clone()));
                tool
            }),
        }
    }

    /// The tool, to change (its schemas are bundled first). The route's
    /// [`Route::input_schema`] follows the change when the returned guard is dropped.
    pub fn tool_mut(&mut self) -> ToolMut<'_> {
        if let Some(d) = self.deferred.take() {
            self.head = match d.full.into_inner() {
                Some(t) => t,
                None => d.schemas.materialize(&self.head),
            };
        }
        ToolMut {
            tool: &mut self.head,
            link: &self.route.input_schema,
        }
    }

    /// Whether `self` and `other` serve the same MCP definition. Schemas not bundled yet are
    /// bundled for the comparison only, not kept (a `--watch` reload in dynamic mode compares
    /// every operation).
    pub fn serves_same_tool(&self, other: &ToolDef) -> bool {
        fn peek(d: &ToolDef) -> std::borrow::Cow<'_, rmcp::model::Tool> {
            match &d.deferred {
                None => std::borrow::Cow::Borrowed(&d.head),
                Some(l) => match l.full.get() {
                    Some(t) => std::borrow::Cow::Borrowed(t),
                    None => std::borrow::Cow::Owned(l.schemas.materialize(&d.head)),
                },
            }
        }
        self.head.name == other.head.name
            && self.head.title == other.head.title
            && self.head.description == other.head.description
            && self.head.annotations == other.head.annotations
            && peek(self) == peek(other)
    }

    /// The inputSchema's top level, for a one-line summary of the arguments (dynamic mode's
    /// search hits): the bundled schema when it is there, else an outline that bundles nothing
    /// and is not kept (`$ref`s may be left unresolved).
    pub fn input_outline(&self) -> Arc<serde_json::Map<String, serde_json::Value>> {
        match &self.deferred {
            None => self.head.input_schema.clone(),
            Some(d) => match d.full.get() {
                Some(t) => t.input_schema.clone(),
                None => d.schemas.input_outline(&self.head),
            },
        }
    }

    /// Whether the schemas have been bundled (or never needed to be).
    pub fn is_materialized(&self) -> bool {
        self.deferred
            .as_ref()
            .is_none_or(|d| d.full.get().is_some())
    }

    pub fn name(&self) -> &str {
        &self.head.name
    }

    pub fn title(&self) -> Option<&str> {
        self.head.title.as_deref()
    }

    pub fn description(&self) -> Option<&str> {
        self.head.description.as_deref()
    }

    pub fn annotations(&self) -> Option<&rmcp::model::ToolAnnotations> {
        self.head.annotations.as_ref()
    }

    /// Whether the tool has an outputSchema (without bundling it).
    pub fn has_output_schema(&self) -> bool {
        match &self.deferred {
            None => self.head.output_schema.is_some(),
            Some(d) => d.schemas.has_output(),
        }
    }

    /// Changes what every tool shows but its schemas (extensions, overrides, names).
    pub fn head_mut(&mut self) -> HeadMut<'_> {
        HeadMut(self)
    }
}

/// The tool of a [`ToolDef`], being changed ([`ToolDef::tool_mut`]); when dropped, the route's
/// [`Route::input_schema`] is the tool's inputSchema again.
pub struct ToolMut<'a> {
    tool: &'a mut rmcp::model::Tool,
    link: &'a InputSchemaLink,
}

impl std::ops::Deref for ToolMut<'_> {
    type Target = rmcp::model::Tool;
    fn deref(&self) -> &rmcp::model::Tool {
        self.tool
    }
}

impl std::ops::DerefMut for ToolMut<'_> {
    fn deref_mut(&mut self) -> &mut rmcp::model::Tool {
        self.tool
    }
}

impl Drop for ToolMut<'_> {
    fn drop(&mut self) {
        self.link.set(Some(self.tool.input_schema.clone()));
    }
}

/// Changes a tool's name, title, description or annotations without bundling its schemas.
pub struct HeadMut<'a>(&'a mut ToolDef);

impl HeadMut<'_> {
    fn each(&mut self, mut f: impl FnMut(&mut rmcp::model::Tool)) {
        f(&mut self.0.head);
        if let Some(t) = self.0.deferred.as_mut().and_then(|d| d.full.get_mut()) {
            f(t);
        }
    }
    pub fn set_name(&mut self, name: String) {
        self.each(|t| t.name = name.clone().into());
    }
    pub fn set_title(&mut self, title: Option<String>) {
        self.each(|t| t.title = title.clone());
    }
    pub fn set_description(&mut self, description: Option<String>) {
        self.each(|t| t.description = description.clone().map(Into::into));
    }
    pub fn update_annotations(&mut self, f: impl Fn(&mut rmcp::model::ToolAnnotations)) {
        self.each(|t| {
            if let Some(a) = &mut t.annotations {
                f(a);
            }
        });
    }
}

/// The converted API: tools plus what the runtime needs to reach the API.
#[derive(Clone, Debug)]
pub struct ToolSet {
    pub title: String,
    pub version: String,
    pub description: Option<String>,
    /// The spec's top-level `tags` that have a description: (name, description), in the spec's
    /// order. Server instructions name what each area is for.
    pub tag_descriptions: Vec<(String, String)>,
    /// Base URL from the spec (first server), if it has one.
    pub base_url: Option<String>,
    pub security_schemes: Vec<(String, SecurityScheme)>,
    pub tools: Vec<Arc<ToolDef>>,
}

impl ToolSet {
    pub fn find(&self, name: &str) -> Option<&Arc<ToolDef>> {
        self.tools.iter().find(|t| t.name() == name)
    }
}

/// Bytes of `v` serialized as compact JSON, without building the text (the size of a tool or of a
/// `tools/list` page, as served).
pub fn json_size(v: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing to a counter cannot fail; a tool that could not be serialized counts as empty.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value, json};

    fn route() -> Route {
        Route::new(HttpMethod::Get, "/x")
    }

    fn tool(schema: Value) -> rmcp::model::Tool {
        let mut t = rmcp::model::Tool::default();
        t.name = "t".into();
        if let Value::Object(m) = schema {
            t.input_schema = Arc::new(m);
        }
        t
    }

    struct Source;
    impl SchemaSource for Source {
        fn materialize(&self, head: &rmcp::model::Tool) -> rmcp::model::Tool {
            let mut t = head.clone();
            if let Value::Object(m) = json!({"type": "object", "properties": {"b": {}}}) {
                t.input_schema = Arc::new(m);
            }
            t
        }
        fn has_output(&self) -> bool {
            false
        }
    }

    /// The route's inputSchema link follows the tool: made, bundled, changed.
    #[test]
    fn the_route_sees_the_tools_input_schema() {
        let props = |d: &ToolDef| {
            d.route
                .input_schema
                .get()
                .and_then(|s| s.get("properties").cloned())
        };
        let a = json!({"type": "object", "properties": {"a": {}}});
        let mut def = ToolDef::new(tool(a), route(), None, vec![], Location::new("t", ""));
        assert_eq!(props(&def), Some(json!({"a": {}})));
        def.tool_mut().input_schema = Arc::new(Map::new());
        assert_eq!(props(&def), None);
        assert!(def.route.input_schema.get().is_some());

        let def = ToolDef::new(
            tool(json!({})),
            route(),
            None,
            vec![],
            Location::new("t", ""),
        )
        .with_deferred_schemas(Arc::new(Source));
        assert!(def.route.input_schema.get().is_none());
        let _ = def.tool();
        assert_eq!(props(&def), Some(json!({"b": {}})));
        // A clone keeps its own link.
        let mut copy = def.clone();
        if let Value::Object(m) = json!({"properties": {"c": {}}}) {
            copy.tool_mut().input_schema = Arc::new(m);
        }
        assert_eq!(props(&copy), Some(json!({"c": {}})));
        assert_eq!(props(&def), Some(json!({"b": {}})));
        assert_eq!(def.route, copy.route, "never compared");
    }

    #[test]
    fn credential_params_know_their_schemes() {
        let cp = |name: &str, location| CredentialParam {
            name: name.into(),
            location,
            required: true,
        };
        let key = SecurityScheme::ApiKey {
            name: "X-Key".into(),
            location: ApiKeyLocation::Header,
        };
        assert!(cp("x-key", ApiKeyLocation::Header).filled_by(&key));
        assert!(!cp("X-Key", ApiKeyLocation::Query).filled_by(&key));
        let q = SecurityScheme::ApiKey {
            name: "key".into(),
            location: ApiKeyLocation::Query,
        };
        assert!(!cp("KEY", ApiKeyLocation::Query).filled_by(&q));
        for s in [
            SecurityScheme::Bearer,
            SecurityScheme::Basic,
            SecurityScheme::OAuth2Token,
        ] {
            assert!(cp("authorization", ApiKeyLocation::Header).filled_by(&s));
            assert!(!cp("X-Key", ApiKeyLocation::Header).filled_by(&s));
        }
    }
}
