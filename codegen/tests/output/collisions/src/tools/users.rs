//! Operations without tags under `/users`: per operation, an argument struct and a handler.
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
/// camelCase operationId (snake_case get_user)
///
/// Arguments of the tool `name_get_user` (`GET /users/{userId}`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NameGetUserArgs {
    /// Path parameter `userId`.
    #[serde(rename = "userId")]
    pub user_id: String,
}
/// The tool `name_get_user` (`GET /users/{userId}`): reads the arguments as [`NameGetUserArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_get_user(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: NameGetUserArgs = match super::parse("name_get_user", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).path("userId", &args.user_id).send().await
}
/// snake_case operationId identical to getUser after conversion
///
/// Arguments of the tool `name_get_user_8cn0a4` (`GET /v2/users/{userId}`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NameGetUser8cn0a4Args {
    /// Path parameter `userId`.
    #[serde(rename = "userId")]
    pub user_id: String,
}
/// The tool `name_get_user_8cn0a4` (`GET /v2/users/{userId}`): reads the arguments as [`NameGetUser8cn0a4Args`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_get_user_8cn0a4(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: NameGetUser8cn0a4Args = match super::parse("name_get_user_8cn0a4", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).path("userId", &args.user_id).send().await
}
/// PascalCase operationId identical to getUser after conversion
///
/// Arguments of the tool `name_get_user_do52kh` (`GET /v3/users/{userId}`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NameGetUserDo52khArgs {
    /// Path parameter `userId`.
    #[serde(rename = "userId")]
    pub user_id: String,
}
/// The tool `name_get_user_do52kh` (`GET /v3/users/{userId}`): reads the arguments as [`NameGetUserDo52khArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_get_user_do52kh(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: NameGetUserDo52khArgs = match super::parse("name_get_user_do52kh", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).path("userId", &args.user_id).send().await
}
