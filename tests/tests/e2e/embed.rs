//! #42: an API owner's axum app with its MCP server embedded (`examples/axum-embed`). The MCP
//! endpoint, mounted in the owner's router, is reached by a real MCP client over Streamable
//! HTTP; only that router listens: the API itself has no socket, so every tool call that
//! reaches the app's handlers went there in process, through the app's own auth middleware.

use std::sync::atomic::Ordering;

use axum_embed_example::{AppState, app, mcp};
use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::model::Tool;
use openapi_mcp_runtime::rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use openapi_mcp_tests::harness::{Client, binary, call, text, workspace_root};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "todo-token-7f3a9c";

/// Serves only the MCP router of an app whose middleware accepts [`TOKEN`], the MCP side
/// sending `sent_token`; returns a connected client.
async fn mounted(
    state: &std::sync::Arc<AppState>,
    sent_token: &str,
    shutdown: &CancellationToken,
) -> Client {
    let api = app(state.clone());
    let router = mcp(api, state.clone(), sent_token, shutdown).expect("MCP router");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let stop = shutdown.clone();
    tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
    });
    ().serve(StreamableHttpClientTransport::from_uri(format!(
        "http://{addr}/mcp"
    )))
    .await
    .expect("MCP client connects")
}

fn json_of(tools: &[Tool]) -> Value {
    serde_json::to_value(tools).expect("tools serialize")
}

#[tokio::test]
async fn mounted_endpoint_lists_the_proxys_tools_and_calls_the_app_in_process() {
    let shutdown = CancellationToken::new();
    let state = AppState::new(TOKEN);
    let client = mounted(&state, TOKEN, &shutdown).await;

    // tools/list: the proxy's on the same document, plus the owner's custom tool at the end.
    let doc = workspace_root().join("examples/axum-embed/openapi.json");
    let mut cmd = tokio::process::Command::new(binary());
    cmd.arg("proxy").arg(&doc).env_remove("RUST_LOG");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn proxy");
    let proxy = ().serve(transport).await.expect("proxy initializes");
    let proxied = proxy.list_all_tools().await.expect("proxy tools/list");
    let mut served = client.list_all_tools().await.expect("mounted tools/list");
    let custom = served.pop().expect("the custom tool");
    assert_eq!(custom.name, "todo_stats");
    assert_eq!(json_of(&served), json_of(&proxied));
    assert_eq!(proxied.len(), 5);
    let _ = proxy.cancel().await;

    // Each call reaches the app's handler (its counter), through its auth middleware.
    let handled = || state.handled.load(Ordering::SeqCst);
    let r = call(
        &client,
        "todo_create_todo",
        json!({"title": "write the chapter"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(handled(), 1);
    let id = r
        .structured_content
        .as_ref()
        .and_then(|v| v.get("id"))
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("an id in {r:?}"));
    let r = call(&client, "todo_update_todo", json!({"id": id, "done": true})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(handled(), 2);
    let r = call(&client, "todo_list_todos", json!({"done": true})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert!(text(&r).contains("write the chapter"), "{}", text(&r));
    assert_eq!(handled(), 3);
    let r = call(&client, "todo_get_todo", json!({"id": id})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(handled(), 4);
    let r = call(&client, "todo_delete_todo", json!({"id": id})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(handled(), 5);
    let r = call(&client, "todo_get_todo", json!({"id": id})).await;
    assert_eq!(r.is_error, Some(true), "gone: {}", text(&r));
    assert!(text(&r).contains("404"), "{}", text(&r));
    assert_eq!(handled(), 6);
    assert_eq!(state.refused.load(Ordering::SeqCst), 0);

    // The owner's before hook answers a blank title itself: nothing reaches the app.
    let r = call(&client, "todo_create_todo", json!({"title": "  "})).await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        text(&r),
        "a todo needs a title that is not blank; nothing was sent"
    );
    assert_eq!(handled(), 6);
    // The owner's custom tool.
    let r = call(&client, "todo_stats", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(text(&r), "6 requests served");
    // Validated like the generated ones.
    let r = call(&client, "todo_stats", json!({"extra": 1})).await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    shutdown.cancel();
}

/// The app's auth middleware sees the credential the MCP side sends: a wrong one is refused
/// by the app (and never shown in the result).
#[tokio::test]
async fn the_apps_middleware_sees_the_credential() {
    let shutdown = CancellationToken::new();
    let state = AppState::new(TOKEN);
    let client = mounted(&state, "not-the-token-1234", &shutdown).await;
    let r = call(&client, "todo_list_todos", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("401"), "{}", text(&r));
    assert!(!text(&r).contains("not-the-token-1234"), "{}", text(&r));
    assert_eq!(state.refused.load(Ordering::SeqCst), 1);
    assert_eq!(state.handled.load(Ordering::SeqCst), 0);
    shutdown.cancel();
}
