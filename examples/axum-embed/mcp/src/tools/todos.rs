//! Operations without tags under `/todos`: per operation, an argument struct and a handler.
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
/// List todos.
///
/// Arguments of the tool `todo_list_todos` (`GET /todos`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct TodoListTodosArgs {
    /// Only todos that are (or are not) done.
    ///
    /// Query parameter `done`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<bool>,
}
/// The tool `todo_list_todos` (`GET /todos`): reads the arguments as [`TodoListTodosArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn todo_list_todos(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: TodoListTodosArgs = match super::parse("todo_list_todos", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).query_opt("done", args.done.as_ref()).send().await
}
/// Create a todo.
///
/// Arguments of the tool `todo_create_todo` (`POST /todos`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct TodoCreateTodoArgs {
    /// What there is to do.
    ///
    /// Request body property `title`.
    pub title: String,
}
/// The tool `todo_create_todo` (`POST /todos`): reads the arguments as [`TodoCreateTodoArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn todo_create_todo(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: TodoCreateTodoArgs = match super::parse("todo_create_todo", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).body_field("title", &args.title).send().await
}
/// Get one todo.
///
/// Arguments of the tool `todo_get_todo` (`GET /todos/{id}`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct TodoGetTodoArgs {
    /// The todo's id
    ///
    /// Path parameter `id`.
    pub id: i64,
}
/// The tool `todo_get_todo` (`GET /todos/{id}`): reads the arguments as [`TodoGetTodoArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn todo_get_todo(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: TodoGetTodoArgs = match super::parse("todo_get_todo", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).path("id", &args.id).send().await
}
/// Delete a todo.
///
/// Arguments of the tool `todo_delete_todo` (`DELETE /todos/{id}`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct TodoDeleteTodoArgs {
    /// The todo's id
    ///
    /// Path parameter `id`.
    pub id: i64,
}
/// The tool `todo_delete_todo` (`DELETE /todos/{id}`): reads the arguments as [`TodoDeleteTodoArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn todo_delete_todo(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: TodoDeleteTodoArgs = match super::parse("todo_delete_todo", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).path("id", &args.id).send().await
}
/// Change a todo.
///
/// Arguments of the tool `todo_update_todo` (`PATCH /todos/{id}`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct TodoUpdateTodoArgs {
    /// The todo's id
    ///
    /// Path parameter `id`.
    pub id: i64,
    /// Request body property `done`.
    #[serde(
        default,
        deserialize_with = "::openapi_mcp_runtime::generated::typed::nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub done: Option<Option<bool>>,
    /// Request body property `title`.
    #[serde(
        default,
        deserialize_with = "::openapi_mcp_runtime::generated::typed::nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub title: Option<Option<String>>,
}
/// The tool `todo_update_todo` (`PATCH /todos/{id}`): reads the arguments as [`TodoUpdateTodoArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn todo_update_todo(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: TodoUpdateTodoArgs = match super::parse("todo_update_todo", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route)
        .path("id", &args.id)
        .body_field_opt("done", args.done.as_ref())
        .body_field_opt("title", args.title.as_ref())
        .send()
        .await
}
