//! The todo API and its MCP server in one process, on one port: the API at `/todos`, MCP at
//! `/mcp`. `PORT` (default 3000) and `TODO_TOKEN` (the API's bearer token; default `dev-token`).

use axum_embed_example::{AppState, app, mcp};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(3000);
    let token = std::env::var("TODO_TOKEN").unwrap_or_else(|_| "dev-token".into());
    let state = AppState::new(&token);
    let api = app(state.clone());
    let shutdown = tokio_util::sync::CancellationToken::new();
    // MCP's tool calls go to `api` in process; both are served from one router.
    let both = api.clone().merge(mcp(api, state, &token, &shutdown)?);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!(
        "todo API at http://{}/todos, MCP at http://{0}/mcp",
        listener.local_addr()?
    );
    axum::serve(listener, both).await?;
    Ok(())
}
