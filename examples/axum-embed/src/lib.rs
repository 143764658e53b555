//! A small todo API on axum, as its owner would write it, with its MCP server embedded (#42).
//!
//! - [`app`]: the API's routes behind a bearer-token middleware, and a call counter.
//! - [`ApiDoc`]: its OpenAPI document, produced by utoipa from the handlers' annotations
//!   (checked in as `openapi.json`; `mcp/` is the crate `openapi-mcp generate` made from it).
//! - [`mcp`]: the MCP endpoint (`/mcp`), whose tool calls go to [`app`] in process: no socket,
//!   the same middleware, the credential sent as a header as over the network.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use axum::extract::{Path, Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use openapi_mcp_runtime::embed::Embed;
use openapi_mcp_runtime::forward::Credentials;
use openapi_mcp_runtime::generated::{
    Args, Before, CallToolResult, ContentBlock, Extensions, Tool,
};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoParams, Modify, OpenApi, ToSchema};

/// A todo item.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct Todo {
    pub id: u64,
    pub title: String,
    pub done: bool,
}

/// A new todo.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NewTodo {
    /// What there is to do.
    pub title: String,
}

/// Changes to a todo.
#[derive(Debug, Deserialize, ToSchema)]
pub struct TodoPatch {
    pub title: Option<String>,
    pub done: Option<bool>,
}

/// Filters of the list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only todos that are (or are not) done.
    pub done: Option<bool>,
}

/// The app's state: the todos, the token its middleware accepts, and what it counted.
#[derive(Debug)]
pub struct AppState {
    todos: Mutex<Vec<Todo>>,
    next_id: AtomicU64,
    token: String,
    /// Requests the handlers served.
    pub handled: AtomicUsize,
    /// Requests the middleware refused (no or wrong bearer token).
    pub refused: AtomicUsize,
}

impl AppState {
    pub fn new(token: &str) -> Arc<Self> {
        Arc::new(AppState {
            todos: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            token: token.to_string(),
            handled: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
        })
    }

    fn todos(&self) -> std::sync::MutexGuard<'_, Vec<Todo>> {
        self.todos.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count(&self) {
        self.handled.fetch_add(1, Ordering::SeqCst);
    }
}

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The API's OpenAPI document.
#[derive(OpenApi)]
#[openapi(
    info(title = "Todo API", version = "1.0.0", description = "A small todo list."),
    servers((url = "http://localhost:3000")),
    paths(list_todos, create_todo, get_todo, update_todo, delete_todo),
    components(schemas(Todo, NewTodo, TodoPatch)),
    modifiers(&BearerAuth),
    security(("bearer" = []))
)]
pub struct ApiDoc;

/// List todos.
#[utoipa::path(get, path = "/todos", operation_id = "listTodos", params(ListQuery),
    responses((status = 200, description = "The todos", body = [Todo])))]
async fn list_todos(State(s): State<Arc<AppState>>, Query(q): Query<ListQuery>) -> Json<Vec<Todo>> {
    s.count();
    let todos = s.todos();
    Json(
        todos
            .iter()
            .filter(|t| q.done.is_none_or(|d| t.done == d))
            .cloned()
            .collect(),
    )
}

/// Create a todo.
#[utoipa::path(post, path = "/todos", operation_id = "createTodo", request_body = NewTodo,
    responses((status = 201, description = "Created", body = Todo)))]
async fn create_todo(
    State(s): State<Arc<AppState>>,
    Json(new): Json<NewTodo>,
) -> (StatusCode, Json<Todo>) {
    s.count();
    let todo = Todo {
        id: s.next_id.fetch_add(1, Ordering::SeqCst),
        title: new.title,
        done: false,
    };
    s.todos().push(todo.clone());
    (StatusCode::CREATED, Json(todo))
}

/// Get one todo.
#[utoipa::path(get, path = "/todos/{id}", operation_id = "getTodo",
    params(("id" = u64, Path, description = "The todo's id")),
    responses((status = 200, description = "The todo", body = Todo), (status = 404, description = "No such todo")))]
async fn get_todo(State(s): State<Arc<AppState>>, Path(id): Path<u64>) -> Response {
    s.count();
    match s.todos().iter().find(|t| t.id == id) {
        Some(t) => Json(t.clone()).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(serde_json::json!({"error": "no such todo"})),
        )
            .into_response(),
    }
}

/// Change a todo.
#[utoipa::path(patch, path = "/todos/{id}", operation_id = "updateTodo",
    params(("id" = u64, Path, description = "The todo's id")), request_body = TodoPatch,
    responses((status = 200, description = "The changed todo", body = Todo), (status = 404, description = "No such todo")))]
async fn update_todo(
    State(s): State<Arc<AppState>>,
    Path(id): Path<u64>,
    Json(patch): Json<TodoPatch>,
) -> Response {
    s.count();
    let mut todos = s.todos();
    let Some(t) = todos.iter_mut().find(|t| t.id == id) else {
        return (
            StatusCode::NOT_FOUND,
            Json(serde_json::json!({"error": "no such todo"})),
        )
            .into_response();
    };
    if let Some(title) = patch.title {
        t.title = title;
    }
    if let Some(done) = patch.done {
        t.done = done;
    }
    Json(t.clone()).into_response()
}

/// Delete a todo.
#[utoipa::path(delete, path = "/todos/{id}", operation_id = "deleteTodo",
    params(("id" = u64, Path, description = "The todo's id")),
    responses((status = 204, description = "Deleted"), (status = 404, description = "No such todo")))]
async fn delete_todo(State(s): State<Arc<AppState>>, Path(id): Path<u64>) -> StatusCode {
    s.count();
    let mut todos = s.todos();
    let before = todos.len();
    todos.retain(|t| t.id != id);
    if todos.len() < before {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}

/// The owner's auth: every request needs `Authorization: Bearer <token>`.
async fn require_token(State(s): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let ok = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| t == s.token);
    if !ok {
        s.refused.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::UNAUTHORIZED, "a bearer token is required\n").into_response();
    }
    next.run(req).await
}

/// The API: its routes behind the token middleware.
pub fn app(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/todos", axum::routing::get(list_todos).post(create_todo))
        .route(
            "/todos/{id}",
            axum::routing::get(get_todo)
                .patch(update_todo)
                .delete(delete_todo),
        )
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            require_token,
        ))
        .with_state(state)
}

/// The owner's extensions: a custom tool, and a hook that refuses titles the spec cannot rule out.
pub fn extensions(state: Arc<AppState>) -> Extensions {
    let schema =
        serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false});
    let schema = match schema {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    let counted = Tool::new(
        "todo_stats",
        "How many API requests the app has served.",
        schema,
    );
    Extensions::new()
        .tool(counted, move |_fwd, _args: Args| {
            let n = state.handled.load(Ordering::SeqCst);
            Box::pin(async move {
                CallToolResult::success(vec![ContentBlock::text(format!("{n} requests served"))])
            })
        })
        .before(|call, args: Args| async move {
            let bad = call.tool.as_ref() == "todo_create_todo"
                && args
                    .get("title")
                    .and_then(|v| v.as_str())
                    .is_some_and(|t| t.trim().is_empty());
            if bad {
                Before::Deny(CallToolResult::error(vec![ContentBlock::text(
                    "a todo needs a title that is not blank; nothing was sent",
                )]))
            } else {
                Before::Continue(args)
            }
        })
}

/// The MCP endpoint (`/mcp`) of the todo API, its calls going to `app` in process with `token`
/// as the bearer credential.
pub fn mcp(
    app: Router,
    state: Arc<AppState>,
    token: &str,
    shutdown: &CancellationToken,
) -> Result<Router, Box<dyn std::error::Error + Send + Sync>> {
    let set = todo_mcp::tool_set()?;
    let mut creds = Credentials::new();
    creds.set("bearer", token.to_string());
    // Where the app would be over HTTP: its path prefix and the requests' Host.
    let base = url::Url::parse("http://localhost:3000/")?;
    Ok(Embed::in_process(set, base, creds, app)?
        .dispatcher(Arc::new(todo_mcp::tools::dispatch))
        .extensions(extensions(state))
        .router(shutdown)?)
}
