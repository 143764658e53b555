//! Transports: stdio, and Streamable HTTP (axum) with host/origin checks and a bearer token.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::http::connections::ConnectionLimits;
use crate::http::sessions::{SessionGuard, SessionLimits, guard_sessions};
use crate::oauth::{Claims, OAuthOptions, ResourceServer, challenge, challenge_scopes};
use crate::observe::{AuditEntry, Caller, Metrics, Observe, Outcome, Readiness};
use crate::server::ProxyServer;

use crate::server::stdio::warm_up_later;
pub use crate::server::stdio::{ServeError, serve_stdio};

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
    /// Requests per second per client (`--rate-limit`), a token bucket with a burst of the same
    /// size; a client is a session this server issued when it sends one, else its IP address (a
    /// client cannot mint buckets with made-up session ids). Over the limit: HTTP 429 with
    /// `Retry-After` and a JSON-RPC error body. `None`: unlimited.
    pub rate_limit: Option<u32>,
    /// Bounds on live sessions (stateful mode).
    pub sessions: SessionLimits,
    /// Bounds on open connections and on how long headers may take.
    pub connections: ConnectionLimits,
    /// Metrics and the audit log: auth failures and rate-limited calls are counted here.
    pub observe: Observe,
    /// `/metrics` on this port too (behind the bearer token), when `--metrics-listen` is the
    /// `--listen` address.
    pub metrics_on_mcp_port: bool,
    /// What `/readyz` says (ready unless `--ready-check` waits for the API).
    pub readiness: Readiness,
    /// The OAuth resource server (`--oauth-issuer`): every request needs a valid token. An
    /// empty audience is `http://<bound address>/mcp`; `scopes_supported`, when empty, is
    /// filled from the operations' scopes.
    pub oauth: Option<OAuthOptions>,
    /// `--oauth-proxy`: its authorization server's routes are served beside `/mcp`.
    pub oauth_proxy: Option<Arc<dyn crate::oauth::authorization::AuthorizationServer>>,
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
            rate_limit: None,
            sessions: SessionLimits::default(),
            connections: ConnectionLimits::default(),
            observe: Observe::default(),
            metrics_on_mcp_port: false,
            readiness: Readiness::ready(),
            oauth: None,
            oauth_proxy: None,
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
    let mut opts = opts;
    opts.listen = addr;
    let app = http_router(server, &opts, &shutdown);
    let stop = shutdown.clone();
    let connections = opts.connections;
    let task = tokio::spawn(async move {
        crate::http::connections::serve(listener, app, connections, stop)
            .await
            .map_err(ServeError::Http)
    });
    Ok(HttpHandle {
        addr,
        shutdown,
        task,
    })
}

/// The service [`start_http`] serves (MCP at `/mcp` and its middleware), without a socket: for
/// in-process drivers such as the `http_transport` fuzz target. Call it inside a Tokio runtime
/// (it spawns the validator warm-up and the session sweeper); `shutdown` stops the sweeper and
/// the sessions.
pub fn http_router(
    server: ProxyServer,
    opts: &HttpOptions,
    shutdown: &CancellationToken,
) -> axum::Router {
    let config = mcp_config(opts, shutdown);
    warm_up_later(&server);
    let observed = opts.observe.is_on().then(|| server.clone());
    let gated = server.clone();
    let oauth = resource_server(opts, &server);
    let manager = Arc::new(LocalSessionManager::default());
    let service: StreamableHttpService<ProxyServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&manager), config);
    let max_body = opts.max_body_bytes;
    let mut app = axum::Router::new().nest_service("/mcp", service);
    if let Some(metrics) = opts
        .observe
        .metrics
        .clone()
        .filter(|_| opts.metrics_on_mcp_port)
    {
        app = app.route(
            "/metrics",
            axum::routing::get(move || metrics_response(Arc::clone(&metrics))),
        );
    }
    let guard = (!opts.stateless).then(|| SessionGuard::new(manager, opts.sessions));
    match &guard {
        Some(guard) => {
            guard.spawn_sweeper(shutdown.child_token());
            let guard = Arc::clone(guard);
            app = app.layer(axum::middleware::from_fn(
                move |req: Request, next: Next| guard_sessions(Arc::clone(&guard), req, next),
            ));
        }
        None => app = app.layer(axum::middleware::from_fn(session_delete_status)),
    }
    let app = app.layer(axum::middleware::from_fn(
        move |req: Request, next: Next| json_rpc_body_errors(max_body, req, next),
    ));
    let app = with_gates(app, opts, oauth.clone(), gated, guard, observed);
    open_routes(opts, oauth).merge(app)
}

/// The MCP endpoint's configuration: sessions unless `--stateless`, the Host and Origin
/// allow-lists (loopback, and the ones configured), the body limit, cancelled with `shutdown`.
fn mcp_config(opts: &HttpOptions, shutdown: &CancellationToken) -> StreamableHttpServerConfig {
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
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!opts.stateless)
        // A request served without a session (every 2026-era request, and every request with
        // --stateless) gets a JSON answer when the answer is all there is; a call that sends
        // progress first is answered as an event stream (rmcp falls back by itself). 2025-era
        // sessions answer with event streams whatever this says.
        .with_json_response(true)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(opts.max_body_bytes)
        .with_cancellation_token(shutdown.child_token())
}

/// The OAuth resource server of `--oauth-issuer` (or the `--oauth-proxy`'s): its audience
/// defaults to this server's `/mcp` URL, its advertised scopes to the operations'.
fn resource_server(opts: &HttpOptions, server: &ProxyServer) -> Option<Arc<ResourceServer>> {
    opts.oauth.clone().map(|mut o| {
        if o.audience.is_empty() {
            o.audience = format!("http://{}/mcp", opts.listen);
        }
        if o.scopes_supported.is_empty() {
            let state = server.state();
            for def in &state.set.tools {
                for s in def.route.oauth_scopes.iter().flatten() {
                    if !o.scopes_supported.contains(s) {
                        o.scopes_supported.push(s.clone());
                    }
                }
            }
        }
        Arc::new(ResourceServer::new(o))
    })
}

/// `app` behind its gates, outermost last: the `--auth-token` bearer check, the OAuth resource
/// server's token check (`gated` answers which tools a token may see), and the `--rate-limit`.
fn with_gates(
    mut app: axum::Router,
    opts: &HttpOptions,
    oauth: Option<Arc<ResourceServer>>,
    gated: ProxyServer,
    guard: Option<Arc<SessionGuard>>,
    observed: Option<ProxyServer>,
) -> axum::Router {
    let max_body = opts.max_body_bytes;
    if let Some(token) = opts.auth_token.clone() {
        let principal = crate::http::sessions::Principal::token(&token);
        let token = Arc::new(token);
        let metrics = opts.observe.metrics.clone();
        app = app.layer(axum::middleware::from_fn(
            move |req: Request, next: Next| {
                let token = Arc::clone(&token);
                let metrics = metrics.clone();
                async move {
                    require_bearer(&token, principal, metrics.as_deref(), req, next).await
                }
            },
        ));
    }
    if let Some(rs) = oauth {
        let metrics = opts.observe.metrics.clone();
        app =
            app.layer(axum::middleware::from_fn(
                move |req: Request, next: Next| {
                    let rs = Arc::clone(&rs);
                    let metrics = metrics.clone();
                    let server = gated.clone();
                    async move {
                        require_oauth(&rs, &server, metrics.as_deref(), max_body, req, next).await
                    }
                },
            ));
    }
    if let Some(limit) = opts.rate_limit.filter(|n| *n > 0) {
        let limiter = Arc::new(RateLimiter::new(limit));
        let observe = opts.observe.clone();
        app = app.layer(axum::middleware::from_fn(
            move |req: Request, next: Next| {
                let limiter = Arc::clone(&limiter);
                let guard = guard.clone();
                let observed = observed.clone().map(|s| (s, observe.clone()));
                async move { rate_limit(&limiter, guard.as_deref(), observed, req, next).await }
            },
        ));
    }
    app
}

/// The routes served before the gates: the OAuth protected-resource metadata, the
/// `--oauth-proxy`'s authorization server, and the health and readiness probes.
fn open_routes(opts: &HttpOptions, oauth: Option<Arc<ResourceServer>>) -> axum::Router {
    // Probes carry no token and come from anywhere the orchestrator is: served before the bearer
    // gate and the rate limit, and saying nothing but ready or not.
    let readiness = opts.readiness.clone();
    let mut open = axum::Router::new();
    if let Some(rs) = oauth {
        // RFC 9728 §3: at the root and with the resource's path appended; clients try both.
        let doc = Arc::new(rs.metadata().to_string());
        let metadata = move || {
            let doc = Arc::clone(&doc);
            async move {
                let mut resp = doc.as_str().to_owned().into_response();
                resp.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                resp
            }
        };
        open = open
            .route(
                "/.well-known/oauth-protected-resource",
                axum::routing::get(metadata.clone()),
            )
            .route(
                "/.well-known/oauth-protected-resource/{*path}",
                axum::routing::get(metadata),
            );
    }
    if let Some(p) = &opts.oauth_proxy {
        open = open.merge(Arc::clone(p).router());
    }
    open.route("/healthz", axum::routing::get(|| async { "ok\n" }))
        .route(
            "/readyz",
            axum::routing::get(move || {
                let ready = readiness.is_ready();
                async move {
                    if ready {
                        (StatusCode::OK, "ready\n")
                    } else {
                        (
                            StatusCode::SERVICE_UNAVAILABLE,
                            "not ready: waiting for the API to answer (--ready-check)\n",
                        )
                    }
                }
            }),
        )
}

/// `/metrics`: the Prometheus text format.
async fn metrics_response(metrics: Arc<Metrics>) -> Response {
    let mut resp = metrics.encode().into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    resp
}

/// A running `/metrics` listener (`--metrics-listen`).
pub struct MetricsHandle {
    pub addr: SocketAddr,
    pub shutdown: CancellationToken,
}

/// Binds `addr` and serves `/metrics` there (and nothing else) until `shutdown`.
pub async fn start_metrics(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
) -> Result<MetricsHandle, ServeError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let bound = listener.local_addr().map_err(ServeError::Http)?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || metrics_response(Arc::clone(&metrics))),
    );
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::warn!("the metrics listener stopped: {e}");
        }
    });
    Ok(MetricsHandle {
        addr: bound,
        shutdown,
    })
}

/// rmcp answers a session-terminating `DELETE` with 202 Accepted; clients (the Python SDK among
/// them) expect 200 or 204 and log a failure otherwise. The session is gone either way: say 204.
/// (Stateless mode; with sessions, [`guard_sessions`] does this and answers unknown ids 404.)
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

/// The `--auth-token` gate; a request that passes is the token's [`Principal`] (its session
/// is bound to it).
async fn require_bearer(
    token: &str,
    principal: crate::http::sessions::Principal,
    metrics: Option<&Metrics>,
    mut req: Request,
    next: Next,
) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        });
    match given {
        Some(g) if constant_time_eq(g.trim().as_bytes(), token.as_bytes()) => {
            req.extensions_mut().insert(principal);
            next.run(req).await
        }
        _ => {
            if let Some(m) = metrics {
                m.auth_failed();
            }
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

/// The bearer token of a request, if it has one.
fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// A 401 or 403 with its `WWW-Authenticate` challenge (MCP authorization, RFC 6750 §3).
fn oauth_refusal(status: StatusCode, value: &str, body: &'static str) -> Response {
    let mut resp = (status, body).into_response();
    if let Ok(v) = HeaderValue::from_str(value) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    resp
}

/// The OAuth gate (`--oauth-issuer`): a valid token or 401; for `tools/call`, the operation's
/// scopes or 403 `insufficient_scope`. The token's claims go on in the request's extensions.
async fn require_oauth(
    rs: &ResourceServer,
    server: &ProxyServer,
    metrics: Option<&Metrics>,
    max_body: usize,
    req: Request,
    next: Next,
) -> Response {
    let metadata = rs.metadata_url();
    let token = bearer(req.headers()).map(str::to_owned);
    let validated = match &token {
        None => Err(None),
        Some(token) => rs.validate(token).await.map_err(Some),
    };
    let mut claims = match validated {
        Ok(c) => c,
        Err(e) => {
            if let Some(m) = metrics {
                m.auth_failed();
            }
            let value = match &e {
                None => challenge(&[("resource_metadata", &metadata)]),
                Some(e) => {
                    let desc = e.to_string();
                    challenge(&[
                        ("error", "invalid_token"),
                        ("error_description", &desc),
                        ("resource_metadata", &metadata),
                    ])
                }
            };
            let body = match e {
                None => "missing bearer token\n",
                Some(e) if e.is_unavailable() => "the token cannot be checked now\n",
                Some(_) => "invalid bearer token\n",
            };
            // Read the refused request's body (within the limit) so the connection stays usable:
            // a client retries with a token right away, often on the same connection, and an
            // unread body makes the server close it under that retry.
            let _ = axum::body::to_bytes(req.into_body(), max_body).await;
            return oauth_refusal(StatusCode::UNAUTHORIZED, &value, body);
        }
    };
    claims.hide_unauthorized_tools = rs.opts.hide_unauthorized_tools;
    let (mut parts, body) = req.into_parts();
    let body = if parts.method == axum::http::Method::POST && is_json_content_type(&parts.headers) {
        let bytes = match axum::body::to_bytes(body, max_body).await {
            Ok(b) => b,
            Err(_) => return payload_too_large(max_body),
        };
        if let Some(required) = called_tool_scopes(server, &bytes)
            && !claims.allows(&required)
        {
            let scope = challenge_scopes(&claims, &required).join(" ");
            let value = challenge(&[
                ("error", "insufficient_scope"),
                ("scope", &scope),
                ("resource_metadata", &metadata),
                (
                    "error_description",
                    "the token lacks a scope this tool needs",
                ),
            ]);
            return oauth_refusal(
                StatusCode::FORBIDDEN,
                &value,
                "insufficient scope for this tool\n",
            );
        }
        axum::body::Body::from(bytes)
    } else {
        body
    };
    if let Some(token) = &token {
        // Who the request is: its session is bound to the subject (crate::http::sessions).
        parts.extensions.insert(match claims.subject.as_deref() {
            Some(sub) if !sub.is_empty() => crate::http::sessions::Principal::subject(sub),
            _ => crate::http::sessions::Principal::token(token),
        });
        // The caller, for per-caller upstream credentials (forward::caller).
        parts
            .extensions
            .insert(Arc::new(crate::forward::Caller::new(
                claims.subject.clone().unwrap_or_default(),
                token,
                claims.expires_at,
            )));
    }
    parts.extensions.insert::<Claims>(claims);
    next.run(Request::from_parts(parts, body)).await
}

/// The scopes the tool a `tools/call` body calls needs (`None`: not a call, or no such tool).
fn called_tool_scopes(server: &ProxyServer, body: &[u8]) -> Option<Vec<Vec<String>>> {
    #[derive(serde::Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        method: std::borrow::Cow<'a, str>,
        params: Option<serde_json::Value>,
    }
    let call: Call<'_> = serde_json::from_slice(body).ok()?;
    if call.method != "tools/call" {
        return None;
    }
    let params = call.params?;
    let name = params.get("name")?.as_str()?;
    server.required_scopes(
        name,
        params
            .get("arguments")
            .and_then(serde_json::Value::as_object),
    )
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

// ------------------------------------------------------------------ per-client rate limit

/// Token buckets per client key (`--rate-limit`): `rate` tokens a second, at most `rate` held.
struct RateLimiter {
    rate: f64,
    buckets: std::sync::Mutex<std::collections::HashMap<String, Bucket>>,
}

struct Bucket {
    tokens: f64,
    last: std::time::Instant,
}

/// Above this many tracked clients, buckets that have refilled completely are forgotten (a
/// forgotten bucket and a full one behave the same), so keys cannot grow memory without bound.
const RATE_LIMIT_PRUNE_AT: usize = 4096;

impl RateLimiter {
    fn new(per_second: u32) -> Self {
        Self {
            rate: f64::from(per_second),
            buckets: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// Takes a token for `key`, or says how long until one is available.
    fn take(&self, key: &str, now: std::time::Instant) -> Result<(), Duration> {
        let mut buckets = match self.buckets.lock() {
            Ok(b) => b,
            Err(poisoned) => poisoned.into_inner(),
        };
        if buckets.len() >= RATE_LIMIT_PRUNE_AT && !buckets.contains_key(key) {
            let full_after = Duration::from_secs_f64(1.0);
            buckets.retain(|_, b| now.saturating_duration_since(b.last) < full_after);
        }
        let rate = self.rate;
        let bucket = buckets.entry(key.to_string()).or_insert(Bucket {
            tokens: rate,
            last: now,
        });
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * rate).min(rate);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
        }
    }
}

/// The client a request counts against: the session, when it is one this server issued (and is
/// still live), else the peer IP address. An id the client made up (or any id, in stateless
/// mode, where the server issues none) counts against its IP: fresh ids are not fresh buckets.
fn rate_limit_key(req: &Request, sessions: Option<&SessionGuard>) -> String {
    if let Some(session) = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .filter(|s| !s.is_empty())
        && sessions.is_some_and(|g| g.is_issued(session))
    {
        return format!("session:{session}");
    }
    match req
        .extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
    {
        Some(info) => format!("ip:{}", info.0.ip()),
        None => "ip:unknown".to_string(),
    }
}

async fn rate_limit(
    limiter: &RateLimiter,
    sessions: Option<&SessionGuard>,
    observed: Option<(ProxyServer, Observe)>,
    req: Request,
    next: Next,
) -> Response {
    let key = rate_limit_key(&req, sessions);
    match limiter.take(&key, std::time::Instant::now()) {
        Ok(()) => next.run(req).await,
        Err(wait) => {
            if let Some((server, observe)) = observed {
                refused_call(&server, &observe, req).await;
            }
            let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {
                    "code": -32000,
                    "message": format!(
                        "Too many requests: over the limit of {} requests per second for this client; retry after {secs} s",
                        limiter.rate
                    ),
                },
            });
            let mut resp = (StatusCode::TOO_MANY_REQUESTS, body.to_string()).into_response();
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
            resp
        }
    }
}

/// Counts (and audits) a request `--rate-limit` refused when it is a `tools/call`: its body is
/// read (at most 64 KiB, for at most a second) for the tool's name; a name the server does not
/// have counts as [`crate::observe::UNKNOWN_TOOL`]. Other requests are not calls.
async fn refused_call(server: &ProxyServer, observe: &Observe, req: Request) {
    let at = std::time::SystemTime::now();
    let (parts, body) = req.into_parts();
    let read = tokio::time::timeout(
        Duration::from_secs(1),
        axum::body::to_bytes(body, 64 * 1024),
    )
    .await;
    let Ok(Ok(bytes)) = read else { return };
    let Ok(msg) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return;
    };
    if msg.get("method").and_then(|m| m.as_str()) != Some("tools/call") {
        return;
    }
    let name = msg
        .pointer("/params/name")
        .and_then(|n| n.as_str())
        .unwrap_or_default();
    let known = server.has_tool(name);
    let label = if known {
        name
    } else {
        crate::observe::UNKNOWN_TOOL
    };
    let state = server.state();
    let def = state.set.tools.iter().find(|d| known && d.name() == name);
    if let Some(m) = &observe.metrics {
        m.count_call(
            def.and_then(|d| state.api_name(d)),
            label,
            Outcome::RateLimited,
        );
    }
    if let Some(audit) = &observe.audit {
        audit.record(AuditEntry {
            at,
            request_id: crate::observe::next_request_id(),
            caller: Caller::http(&parts.headers, &parts.extensions),
            api: state.audit_api(def.map(|d| &**d)),
            tool: label.to_string(),
            operation_id: def.and_then(|d| d.operation_id.clone()),
            method: def.map(|d| d.route.method.as_str()),
            path: def.map(|d| d.route.path.clone()),
            status: None,
            latency_ms: 0.0,
            upstream_ms: None,
            bytes_sent: 0,
            bytes_received: 0,
            outcome: Outcome::RateLimited.as_str(),
        });
    }
}

#[cfg(test)]
mod rate_limit_tests {
    use super::*;

    #[test]
    fn token_bucket_allows_burst_then_refills_per_key() {
        let rl = RateLimiter::new(4);
        let t0 = std::time::Instant::now();
        for _ in 0..4 {
            assert!(rl.take("a", t0).is_ok());
        }
        let wait = rl.take("a", t0).expect_err("burst spent");
        assert!(
            wait <= Duration::from_millis(250) && wait > Duration::ZERO,
            "{wait:?}"
        );
        assert!(
            rl.take("b", t0).is_ok(),
            "another client has its own bucket"
        );
        assert!(rl.take("a", t0 + Duration::from_millis(260)).is_ok());
        assert!(rl.take("a", t0 + Duration::from_millis(260)).is_err());
        // Idle for long: refilled to the burst, not beyond.
        let later = t0 + Duration::from_secs(60);
        for _ in 0..4 {
            assert!(rl.take("a", later).is_ok());
        }
        assert!(rl.take("a", later).is_err());
    }

    #[test]
    fn idle_buckets_are_pruned() {
        let rl = RateLimiter::new(1);
        let t0 = std::time::Instant::now();
        for i in 0..RATE_LIMIT_PRUNE_AT {
            let _ = rl.take(&format!("k{i}"), t0);
        }
        let _ = rl.take("new", t0 + Duration::from_secs(2));
        let n = rl.buckets.lock().map(|b| b.len()).unwrap_or(usize::MAX);
        assert_eq!(n, 1);
    }
}
