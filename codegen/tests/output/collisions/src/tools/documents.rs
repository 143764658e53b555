//! Operations without tags under `/documents`: per operation, an argument struct and a handler.
#![allow(
    unknown_lints,
    clippy::doc_lazy_continuation,
    clippy::doc_overindented_list_items,
    clippy::doc_nested_refdefs,
    clippy::tabs_in_doc_comments,
    clippy::needless_doctest_main,
    clippy::test_attr_in_doctest
)]
use ::openapi_mcp_runtime::generated::{CallToolResult, Forwarder, Route};
use ::serde_json::{Map, Value};
/// Declares headers that OpenAPI says must be ignored
///
/// Content-Type and Accept header parameters are ignored per the OpenAPI spec (requestBody and responses govern them) and must not become tool arguments. No security scheme fills the required Authorization header, so it is per-call data: an optional argument, and a call without it (or a --header Authorization) is refused. X-Tenant must survive.
///
/// Arguments of the tool `name_create_document` (`POST /documents`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NameCreateDocumentArgs {
    /// When the server is started with `--header Authorization`, that is sent instead of this argument. Required otherwise.
    ///
    /// Header parameter `Authorization`.
    #[serde(rename = "Authorization")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization: Option<String>,
    /// Header parameter `X-Tenant`.
    #[serde(rename = "X-Tenant")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_tenant: Option<String>,
    /// Request body property `title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}
/// The tool `name_create_document` (`POST /documents`): reads the arguments as [`NameCreateDocumentArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_create_document(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: NameCreateDocumentArgs = match super::parse(
        "name_create_document",
        &args,
    ) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route)
        .header_opt("Authorization", args.authorization.as_ref())
        .header_opt("X-Tenant", args.x_tenant.as_ref())
        .body_field_opt("title", args.title.as_ref())
        .send()
        .await
}
/// Query parameter names with characters illegal in MCP property names
///
/// Expected query ?filter[name]=report&$select=title with the original names (brackets and dollar sign may be percent-encoded)
///
/// Arguments of the tool `name_search_documents` (`GET /documents/search`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NameSearchDocumentsArgs {
    /// Query parameter `filter[name]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_name: Option<String>,
    /// Query parameter `$select`.
    #[serde(rename = "_select")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<String>,
}
/// The tool `name_search_documents` (`GET /documents/search`): reads the arguments as [`NameSearchDocumentsArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_search_documents(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: NameSearchDocumentsArgs = match super::parse(
        "name_search_documents",
        &args,
    ) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route)
        .query_opt("filter[name]", args.filter_name.as_ref())
        .query_opt("$select", args.select.as_ref())
        .send()
        .await
}
