//! Bounds on Streamable HTTP sessions (stateful mode): how many may live at once, globally and
//! per client address; half-open sessions (created by `initialize`, never used again) expire
//! fast; a `DELETE` of a session the server does not know is 404. It also tells the rate limiter
//! which `Mcp-Session-Id`s the server really issued, so a client cannot mint fresh buckets.
//!
//! Behind a gate (`--oauth-issuer`, `--oauth-proxy`, `--auth-token`) a session belongs to the
//! caller that opened it (#36): the gate puts the request's [`Principal`] into its extensions,
//! the session remembers the one of its `initialize`, and a request for the session from anyone
//! else — another user's valid token — is answered 404 exactly as an unknown session is (it
//! learns nothing, and cannot use, watch or end the session). Sessions live in this process only
//! (rmcp's `LocalSessionManager`, no shared session store): a session id is worth nothing at
//! another replica.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;

/// The session header.
const SESSION_HEADER: &str = "mcp-session-id";

/// Limits of [`SessionGuard`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// Live sessions at most (all clients).
    pub max: usize,
    /// Live sessions at most per client IP address.
    pub per_client: usize,
    /// A session nobody used after its `initialize` is closed after this long.
    pub half_open: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            max: 4096,
            per_client: 256,
            half_open: Duration::from_secs(30),
        }
    }
}

/// Who the HTTP gate authenticated a request as: for OAuth (`--oauth-issuer`, `--oauth-proxy`)
/// the token's subject (`sub`; the proxy's is the user's grant), or the token itself when it has
/// none; for `--auth-token` the token. Kept as a SHA-256 digest (never the token); `Debug` shows
/// its first bytes only.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Principal([u8; 32]);

impl Principal {
    /// The subject `sub` of a validated OAuth token.
    pub fn subject(sub: &str) -> Self {
        Principal(crate::oauth::token_digest(&format!("sub\n{sub}")))
    }

    /// A validated bearer token that names no subject.
    pub fn token(token: &str) -> Self {
        Principal(crate::oauth::token_digest(&format!("token\n{token}")))
    }
}

impl std::fmt::Debug for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Principal({:02x}{:02x}{:02x}{:02x}…)",
            self.0[0], self.0[1], self.0[2], self.0[3]
        )
    }
}

struct Entry {
    ip: IpAddr,
    created: Instant,
    /// The client came back with the id (e.g. `notifications/initialized`).
    used: bool,
    /// Who opened it (`None`: no gate).
    owner: Option<Principal>,
}

/// Tracks the sessions this server issued (see the module docs).
pub struct SessionGuard {
    manager: Arc<LocalSessionManager>,
    limits: SessionLimits,
    issued: Mutex<HashMap<Arc<str>, Entry>>,
}

impl SessionGuard {
    pub fn new(manager: Arc<LocalSessionManager>, limits: SessionLimits) -> Arc<Self> {
        Arc::new(SessionGuard {
            manager,
            limits,
            issued: Mutex::new(HashMap::new()),
        })
    }

    fn issued(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Entry>> {
        self.issued.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `id` is a live session this server issued (the rate limiter's key test).
    pub fn is_issued(&self, id: &str) -> bool {
        self.issued().contains_key(id)
    }

    /// Live sessions issued, all and for `ip`.
    fn counts(&self, ip: IpAddr) -> (usize, usize) {
        let issued = self.issued();
        let mine = issued.values().filter(|e| e.ip == ip).count();
        (issued.len(), mine)
    }

    /// Closes half-open sessions and forgets sessions the manager has dropped (idle timeout,
    /// transport closed). Runs every few seconds until `stop`.
    pub fn spawn_sweeper(self: &Arc<Self>, stop: CancellationToken) {
        let guard = Arc::clone(self);
        let every =
            (self.limits.half_open / 3).clamp(Duration::from_millis(50), Duration::from_secs(5));
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(every) => {}
                }
                guard.sweep(Instant::now()).await;
            }
        });
    }

    async fn sweep(&self, now: Instant) {
        let live: std::collections::HashSet<Arc<str>> =
            self.manager.sessions.read().await.keys().cloned().collect();
        let stale: Vec<Arc<str>> = {
            let mut issued = self.issued();
            issued.retain(|id, _| live.contains(id));
            issued
                .iter()
                .filter(|(_, e)| !e.used && now.duration_since(e.created) >= self.limits.half_open)
                .map(|(id, _)| Arc::clone(id))
                .collect()
        };
        for id in stale {
            tracing::debug!("closing half-open session {id}");
            let _ = self.manager.close_session(&id).await;
            self.issued().remove(&id);
        }
    }
}

fn client_ip(req: &Request) -> Option<IpAddr> {
    req.extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
}

fn json_rpc_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32000, "message": message },
    });
    let mut resp = (status, body.to_string()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// rmcp's answer to a request for a session it does not know (byte for byte, so a session of
/// another caller looks the same).
fn unknown_session() -> Response {
    let mut resp = Response::new(axum::body::Body::from("Not Found: Session not found"));
    *resp.status_mut() = StatusCode::NOT_FOUND;
    resp
}

/// The middleware: caps new sessions, marks used ones, answers `DELETE` of unknown sessions
/// with 404 and rmcp's 202 for a known one with 204 (clients expect 200 or 204).
pub async fn guard_sessions(guard: Arc<SessionGuard>, req: Request, next: Next) -> Response {
    let session: Option<Arc<str>> = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|s| !s.is_empty())
        .map(Arc::from);
    let ip = client_ip(&req).unwrap_or(IpAddr::from([0, 0, 0, 0]));
    let is_delete = req.method() == axum::http::Method::DELETE;
    let principal = req.extensions().get::<Principal>().copied();
    if let Some(id) = &session {
        let known = match guard.issued().get_mut(id) {
            Some(e) if e.owner != principal => {
                // Another caller's session: what an unknown session gets, nothing more.
                tracing::debug!("refused a request for a session another caller opened");
                return if is_delete {
                    json_rpc_error(StatusCode::NOT_FOUND, "Session not found")
                } else {
                    unknown_session()
                };
            }
            Some(e) => {
                e.used = true;
                true
            }
            None => false,
        };
        if is_delete {
            if !known && !guard.manager.sessions.read().await.contains_key(id) {
                return json_rpc_error(StatusCode::NOT_FOUND, "Session not found");
            }
            let mut resp = next.run(req).await;
            if resp.status() == StatusCode::ACCEPTED {
                *resp.status_mut() = StatusCode::NO_CONTENT;
            }
            if resp.status().is_success() {
                guard.issued().remove(id);
            }
            return resp;
        }
        return next.run(req).await;
    }
    // No session: a POST here may create one (initialize).
    if req.method() == axum::http::Method::POST {
        let (all, mine) = guard.counts(ip);
        if all >= guard.limits.max {
            return json_rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "Too many sessions on this server; retry later",
            );
        }
        if mine >= guard.limits.per_client {
            return json_rpc_error(
                StatusCode::TOO_MANY_REQUESTS,
                &format!(
                    "Too many sessions from this client (at most {}); end unused sessions with DELETE",
                    guard.limits.per_client
                ),
            );
        }
    }
    let resp = next.run(req).await;
    if let Some(id) = resp
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        guard.issued().insert(
            Arc::from(id),
            Entry {
                ip,
                created: Instant::now(),
                used: false,
                owner: principal,
            },
        );
    }
    resp
}
