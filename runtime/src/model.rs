//! The tool set: what the converter produces and what the proxy and the generated crate consume.
//! Every argument knows where it goes on the wire.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

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

impl ArgLocation {
    pub fn label(&self) -> &'static str {
        match self {
            ArgLocation::Path { .. } => "path",
            ArgLocation::Query { .. } => "query",
            ArgLocation::Header { .. } => "header",
            ArgLocation::Cookie { .. } => "cookie",
            ArgLocation::BodyField | ArgLocation::Body => "body",
        }
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
    pub output: OutputShape,
    /// Arguments pinned by an overrides file: not in the inputSchema, always sent with these
    /// values (the forwarder adds them to every call).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub pinned: serde_json::Map<String, serde_json::Value>,
}

impl Route {
    pub fn arg(&self, name: &str) -> Option<&ArgBinding> {
        self.args.iter().find(|a| a.arg == name)
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApiKeyLocation {
    Header,
    Query,
    Cookie,
}

/// One tool: the MCP definition served in `tools/list`, and its route.
#[derive(Clone, Debug)]
pub struct ToolDef {
    pub tool: rmcp::model::Tool,
    pub route: Route,
    /// The operation the tool was made from (for filters, lint, diagnostics).
    pub operation_id: Option<String>,
    pub tags: Vec<String>,
    /// `file#/paths/...` of the operation.
    pub location: String,
}

/// The converted API: tools plus what the runtime needs to reach the API.
#[derive(Clone, Debug)]
pub struct ToolSet {
    pub title: String,
    pub version: String,
    pub description: Option<String>,
    /// Base URL from the spec (first server), if it has one.
    pub base_url: Option<String>,
    pub security_schemes: Vec<(String, SecurityScheme)>,
    pub tools: Vec<Arc<ToolDef>>,
}

impl ToolSet {
    pub fn find(&self, name: &str) -> Option<&Arc<ToolDef>> {
        self.tools.iter().find(|t| t.tool.name == name)
    }
}
