//! Transports: stdio, and Streamable HTTP (axum) with host/origin checks and a bearer token.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::server::ProxyServer;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("MCP session failed to start: {0}")]
    Init(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("HTTP server failed: {0}")]
    Http(std::io::Error),
}

/// Serves one MCP session over stdin/stdout until stdin closes.
pub async fn serve_stdio(server: ProxyServer) -> Result<(), ServeError> {
    server.warm_up();
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Init(e.to_string()))?;
    let reason = running.waiting().await;
    tracing::debug!(?reason, "stdio session ended");
    Ok(())
}

/// Options of the Streamable HTTP transport.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub listen: SocketAddr,
    /// No sessions: every request stands alone (for load-balanced deployments).
    pub stateless: bool,
    /// Accepted `Host` header values (DNS-rebinding protection); loopback names by default.
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` values (browsers); loopback origins by default.
    pub allowed_origins: Vec<String>,
    /// When set, every request must carry `Authorization: Bearer <token>`.
    pub auth_token: Option<String>,
    pub max_body_bytes: usize,
}

impl HttpOptions {
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            stateless: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            auth_token: None,
            max_body_bytes: 4 * 1024 * 1024,
        }
    }
}

/// A running HTTP server.
pub struct HttpHandle {
    pub addr: SocketAddr,
    pub shutdown: CancellationToken,
    pub task: tokio::task::JoinHandle<Result<(), ServeError>>,
}

/// Binds and starts serving MCP at `/mcp`; returns once the socket is bound.
pub async fn start_http(server: ProxyServer, opts: HttpOptions) -> Result<HttpHandle, ServeError> {
    let listener = tokio::net::TcpListener::bind(opts.listen)
        .await
        .map_err(|source| ServeError::Bind {
            addr: opts.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(ServeError::Http)?;
    let shutdown = CancellationToken::new();

    let mut hosts: Vec<String> = vec![
        "localhost".into(),
        "127.0.0.1".into(),
        "::1".into(),
        "[::1]".into(),
    ];
    hosts.extend(opts.allowed_hosts.iter().cloned());
    if !opts.listen.ip().is_loopback() && !opts.listen.ip().is_unspecified() {
        hosts.push(opts.listen.ip().to_string());
    }
    let mut origins: Vec<String> = vec![
        "http://localhost:*".into(),
        "http://127.0.0.1:*".into(),
        "http://[::1]:*".into(),
        "https://localhost:*".into(),
    ];
    origins.extend(opts.allowed_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!opts.stateless)
        .with_json_response(opts.stateless)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(opts.max_body_bytes)
        .with_cancellation_token(shutdown.child_token());
    server.warm_up();
    let service: StreamableHttpService<ProxyServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    let mut app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(session_delete_status));
    if let Some(token) = opts.auth_token.clone() {
        let token = Arc::new(token);
        app = app.layer(axum::middleware::from_fn(
            move |req: Request, next: Next| {
                let token = Arc::clone(&token);
                async move { require_bearer(&token, req, next).await }
            },
        ));
    }
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
            .map_err(ServeError::Http)
    });
    Ok(HttpHandle {
        addr,
        shutdown,
        task,
    })
}

/// rmcp answers a session-terminating `DELETE` with 202 Accepted; clients (the Python SDK among
/// them) expect 200 or 204 and log a failure otherwise. The session is gone either way: say 204.
async fn session_delete_status(req: Request, next: Next) -> Response {
    let is_delete = req.method() == axum::http::Method::DELETE;
    let mut resp = next.run(req).await;
    if is_delete && resp.status() == StatusCode::ACCEPTED {
        *resp.status_mut() = StatusCode::NO_CONTENT;
    }
    resp
}

async fn require_bearer(token: &str, req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        });
    match given {
        Some(g) if constant_time_eq(g.trim().as_bytes(), token.as_bytes()) => next.run(req).await,
        _ => {
            let mut resp = (
                StatusCode::UNAUTHORIZED,
                "missing or invalid bearer token\n",
            )
                .into_response();
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            resp
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
