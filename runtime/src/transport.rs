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
///
/// When both are pipes (how MCP clients launch servers) they are driven by the IO reactor
/// (`rmcp::transport::stdio_pipes`, non-blocking descriptors of their own) instead of tokio's
/// `Stdin`/`Stdout`, which hand every read and write to the blocking thread pool; anything else
/// (a terminal, a file, a socket) falls back to those.
pub async fn serve_stdio(server: ProxyServer) -> Result<(), ServeError> {
    warm_up_later(&server);
    let running = server
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|e| ServeError::Init(e.to_string()))?;
    let reason = running.waiting().await;
    tracing::debug!(?reason, "stdio session ended");
    Ok(())
}

/// Above this many operations the validators are compiled on first use only: compiling all of
/// GitHub's 1,223 at start-up costs ~14 MB of memory for tools most sessions never call.
const EAGER_VALIDATORS_MAX: usize = 256;

/// Compiles the argument validators in the background once the start-up burst is past: a client
/// connects, initializes and lists the tools right after spawning the server, and compiling
/// every validator at once would compete with that first `tools/list` for the CPU. A call that
/// comes earlier (or any call, for a spec of more than [`EAGER_VALIDATORS_MAX`] operations)
/// compiles its own validator.
fn warm_up_later(server: &ProxyServer) {
    if server.state().set.tools.len() > EAGER_VALIDATORS_MAX {
        return;
    }
    let server = server.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        server.warm_up();
    });
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
    warm_up_later(&server);
    let service: StreamableHttpService<ProxyServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    let max_body = opts.max_body_bytes;
    let mut app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(session_delete_status))
        .layer(axum::middleware::from_fn(
            move |req: Request, next: Next| json_rpc_body_errors(max_body, req, next),
        ));
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

fn is_json_content_type(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}

fn payload_too_large(max: usize) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("Payload Too Large: request body exceeds {max} bytes"),
    )
        .into_response()
}

/// A JSON-RPC error answer without a result (HTTP 400).
fn json_rpc_error(id: serde_json::Value, code: i32, message: String) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    let mut resp = (StatusCode::BAD_REQUEST, body.to_string()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// rmcp answers a JSON POST body it cannot deserialize with `415 Unsupported Media Type` and a
/// plain-text line. JSON-RPC has codes for exactly these cases: invalid JSON is `-32700 Parse
/// error`, JSON that is not a request/notification/response is `-32600 Invalid Request` (with
/// the request's `id` when it has a usable one). Both become HTTP 400 with a JSON-RPC error body.
/// The body is read here, within `max` bytes (413 beyond, announced or not), and handed on.
async fn json_rpc_body_errors(max: usize, req: Request, next: Next) -> Response {
    use futures::StreamExt as _;

    if req.method() != axum::http::Method::POST || !is_json_content_type(req.headers()) {
        return next.run(req).await;
    }
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|n| n > max as u64) {
        return payload_too_large(max);
    }
    let (parts, body) = req.into_parts();
    let mut stream = body.into_data_stream();
    let mut buf = bytes::BytesMut::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(c) => {
                if c.len() > max.saturating_sub(buf.len()) {
                    return payload_too_large(max);
                }
                buf.extend_from_slice(&c);
            }
            Err(_) => {
                return (StatusCode::BAD_REQUEST, "could not read the request body\n")
                    .into_response();
            }
        }
    }
    let bytes = buf.freeze();
    let resp = next
        .run(Request::from_parts(
            parts,
            axum::body::Body::from(bytes.clone()),
        ))
        .await;
    if resp.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return resp;
    }
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Err(e) => json_rpc_error(
            serde_json::Value::Null,
            -32700,
            format!("Parse error: the request body is not valid JSON ({e})"),
        ),
        Ok(v) => {
            let id = v
                .get("id")
                .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
                .cloned()
                .unwrap_or(serde_json::Value::Null);
            let detail = axum::body::to_bytes(resp.into_body(), 4096)
                .await
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            let detail = detail
                .trim()
                .trim_start_matches("fail to deserialize request body")
                .trim()
                .to_string();
            let mut message =
                "Invalid Request: the body is not a JSON-RPC request, notification or response"
                    .to_string();
            if !detail.is_empty() {
                message.push_str(&format!(" ({detail})"));
            }
            json_rpc_error(id, -32600, message)
        }
    }
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
