//! Operations without tags under `/widgets`: per operation, an argument struct and a handler.
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
/// The name "id" appears in path, query, header and body
///
/// Arguments of the tool `name_update_widget` (`PUT /widgets/{id}`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NameUpdateWidgetArgs {
    /// Widget id (path)
    ///
    /// Path parameter `id`.
    pub id: i64,
    /// Revision id (query)
    ///
    /// Query parameter `id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_id: Option<String>,
    /// Idempotency id (header)
    ///
    /// Header parameter `id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_id: Option<String>,
    /// Client-side id (body property)
    ///
    /// Request body property `id`.
    pub body_id: String,
    /// Request body property `label`.
    pub label: String,
}
/// The tool `name_update_widget` (`PUT /widgets/{id}`): reads the arguments as [`NameUpdateWidgetArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_update_widget(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: NameUpdateWidgetArgs = match super::parse("name_update_widget", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route)
        .path("id", &args.id)
        .query_opt("id", args.query_id.as_ref())
        .header_opt("id", args.header_id.as_ref())
        .body_field("id", &args.body_id)
        .body_field("label", &args.label)
        .send()
        .await
}
