//! Forwarding: one MCP tool call → one HTTP request to the real API → one MCP tool result.
//!
//! * [`Forwarder::build_request`] turns a [`Route`] plus the call's arguments into a
//!   [`BuiltRequest`] (pure; see [`request`] for the serialization rules).
//! * [`Forwarder::call`] sends it (with credentials from [`Credentials`], optional retries and the
//!   OAuth2 client-credentials token dance) and maps the answer with [`response::to_result`].
//!
//! Upstream failures never become protocol errors: they are `CallToolResult`s with
//! `isError: true` and a sentence a model can act on. Secrets never appear in results, errors or
//! logs (only method, path template, status and duration are logged, at debug level).

pub mod auth;
pub use crate::oauth::caller;
#[cfg(feature = "workflows")]
pub mod capture;
mod encode;
pub mod fit;
pub mod local;
pub mod request;
pub mod response;
pub(crate) mod scrub;
pub mod typed;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::header;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};
use url::Url;

pub use auth::Credentials;
pub use caller::{Caller, CallerCredentialError, CallerCredentials};
pub use fit::ResponseMode;
pub use local::CallerIdentity;
pub use response::{Shape, Truncation, to_result, to_result_shaped};

use auth::{Cred, TokenCache};
use openapi_mcp_toolset::model::{
    ApiKeyLocation, ArgLocation, CredentialParam, Route, SecurityScheme,
};

tokio::task_local! {
    static CALL_SCOPE: CallScope;
}

/// Per-call context of the MCP request being served, visible to [`Forwarder::call`] however the
/// call reaches it (the proxy, or a generated crate's typed handler): headers of the client's
/// HTTP request to pass on (`--forward-header`), the authorized caller (for
/// [`CallerCredentials`]) and, afterwards, the upstream status for the log.
#[derive(Debug, Default)]
pub struct CallScope {
    pub forwarded_headers: Vec<(String, String)>,
    /// The caller the HTTP transport authorized (OAuth), when there is one.
    pub caller: Option<Arc<Caller>>,
    /// The call's `_select` argument (its name and JMESPath expression), checked already.
    pub select: Option<(String, String)>,
    status: std::cell::Cell<Option<u16>>,
    accepted_at: std::cell::RefCell<Option<Url>>,
    retry_after: std::cell::Cell<Option<Duration>>,
    see_other: std::cell::RefCell<Option<Url>>,
    exchange: std::cell::Cell<Exchange>,
    full_structured: std::cell::RefCell<Option<Value>>,
}

/// What went over the wire for a call (for metrics and the audit log): time spent on the API
/// (sending and reading, every attempt), body bytes each way, and how a failure ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exchange {
    /// Time spent sending requests and reading answers (every attempt), if any was sent.
    pub upstream: Option<Duration>,
    /// Request body bytes sent (every attempt).
    pub sent: u64,
    /// Response body bytes read.
    pub received: u64,
    /// The last attempt timed out.
    pub timed_out: bool,
    /// The last attempt could not connect.
    pub unreachable: bool,
}

/// Adds to the current call's [`Exchange`] (a no-op outside a [`CallScope`]).
fn note_exchange(f: impl FnOnce(&mut Exchange)) {
    let _ = CALL_SCOPE.try_with(|s| {
        let mut e = s.exchange.get();
        f(&mut e);
        s.exchange.set(e);
    });
}

fn note_error(e: &local::SendError) {
    let (timed_out, unreachable) = (e.is_timeout(), e.is_connect() && !e.is_timeout());
    note_exchange(|x| {
        x.timed_out = timed_out;
        x.unreachable = unreachable;
    });
}

/// What the upstream said besides the result, for the server (see [`CallScope::run`]).
#[derive(Debug, Default)]
pub struct CallReport {
    /// The last upstream HTTP status.
    pub status: Option<u16>,
    /// A `202 Accepted` answer's status URL (`Operation-Location`, `Azure-AsyncOperation` or
    /// `Location`), resolved against the request URL: the operation goes on in the background.
    pub accepted_at: Option<Url>,
    /// That answer's `Retry-After` (the wait it asks for, uncapped): how often to poll it.
    pub retry_after: Option<Duration>,
    /// A `303 See Other` answer's `Location`, resolved against the request URL (a finished
    /// operation's status pointing at its result).
    pub see_other: Option<Url>,
    /// Time and bytes on the wire.
    pub exchange: Exchange,
    /// The uncompacted structured content, when `--response compact` changed it: for the server
    /// to use when the output schema rejects the compacted one.
    pub full_structured: Option<Value>,
}

impl CallScope {
    pub fn new(forwarded_headers: Vec<(String, String)>) -> Self {
        Self {
            forwarded_headers,
            ..Self::default()
        }
    }

    /// With the caller the HTTP transport authorized.
    pub fn with_caller(mut self, caller: Option<Arc<Caller>>) -> Self {
        self.caller = caller;
        self
    }

    /// With the call's selection argument: its name and (checked) JMESPath expression.
    pub fn with_select(mut self, select: Option<(String, String)>) -> Self {
        self.select = select;
        self
    }

    /// Runs `fut` in this scope; returns its output and what the upstream said besides.
    pub async fn run<F: std::future::Future>(self, fut: F) -> (F::Output, CallReport) {
        CALL_SCOPE
            .scope(self, async move {
                let out = fut.await;
                let report = CALL_SCOPE.with(|s| CallReport {
                    status: s.status.get(),
                    accepted_at: s.accepted_at.take(),
                    retry_after: s.retry_after.get(),
                    see_other: s.see_other.take(),
                    exchange: s.exchange.get(),
                    full_structured: s.full_structured.take(),
                });
                (out, report)
            })
            .await
    }
}

/// The status URL of a `202 Accepted` answer (long-running operations): `Operation-Location`
/// (Azure, Microsoft Graph), `Azure-AsyncOperation`, else `Location`; relative ones against the
/// request URL; http(s) only.
fn status_url(headers: &http::HeaderMap, request: &Url) -> Option<Url> {
    ["operation-location", "azure-asyncoperation", "location"]
        .iter()
        .find_map(|h| headers.get(*h)?.to_str().ok())
        .and_then(|v| request.join(v.trim()).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
}

/// `openapi-mcp/<version>`.
pub fn default_user_agent() -> String {
    format!("openapi-mcp/{}", env!("CARGO_PKG_VERSION"))
}

/// How requests are sent.
#[derive(Clone, Debug)]
pub struct ForwardOptions {
    /// Where the API lives; route paths are appended to its path.
    pub base_url: Url,
    /// Whole-request timeout (connect + answer + body). Default 30 s.
    pub timeout: Duration,
    /// Response bodies are cut here. Default 1 MiB.
    pub max_response_bytes: usize,
    /// Extra attempts for idempotent requests on connection errors and 502/503/504. Default 0.
    /// 429 and 503 answers are retried at least [`PUSHBACK_RETRIES`] times (see
    /// [`Forwarder::call`]).
    pub retries: u32,
    /// JSON results compacted (default) or as the API sent them (`--response`).
    pub response: ResponseMode,
    /// Retry non-idempotent calls (POST, PATCH) too, on 429/503 and with `retries`. Default off:
    /// a write the API may have carried out is not repeated unless the operator says so.
    pub retry_writes: bool,
    /// Headers added to every request (`--header`). They replace same-named headers computed from
    /// arguments, but never credentials.
    pub static_headers: Vec<(String, String)>,
    pub user_agent: String,
    /// Origins (`scheme://host[:port]`) besides the base URL's that receive credentials and
    /// forwarded client headers. A request to any other origin (an operation-level `servers`
    /// entry on another host) goes without them.
    pub credential_origins: Vec<String>,
}

impl ForwardOptions {
    pub fn new(base_url: Url) -> Self {
        Self {
            base_url,
            timeout: Duration::from_secs(30),
            max_response_bytes: 1024 * 1024,
            response: ResponseMode::Compact,
            retries: 0,
            retry_writes: false,
            static_headers: Vec::new(),
            user_agent: default_user_agent(),
            credential_origins: Vec::new(),
        }
    }

    /// Whether a request to `url` may carry credentials: its origin is the base URL's or one
    /// of [`Self::credential_origins`].
    pub fn sends_credentials_to(&self, url: &Url) -> bool {
        let origin = origin_of(url);
        origin == origin_of(&self.base_url) || self.credential_origins.contains(&origin)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    #[error("the base URL `{url}` cannot be used: {reason}")]
    BaseUrl { url: String, reason: String },
    /// The value is never included: static headers often carry secrets.
    #[error("the static header `{name}` is invalid: {reason}")]
    StaticHeader { name: String, reason: &'static str },
    #[error("could not create the HTTP client")]
    Client(#[source] reqwest::Error),
}

/// An argument that cannot be put on the wire (or a request that would leave the API's base URL).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ArgError {
    /// The tool argument at fault, when there is one.
    pub arg: Option<String>,
    pub message: String,
}

/// A request ready to send.
#[derive(Clone, PartialEq, Eq)]
pub struct BuiltRequest {
    pub method: http::Method,
    pub url: Url,
    /// In order; `Content-Type` is not here but in `body`.
    pub headers: Vec<(String, String)>,
    /// Content type and bytes.
    pub body: Option<(String, Vec<u8>)>,
}

impl BuiltRequest {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Shows no header values and no query string: they may carry credentials.
impl fmt::Debug for BuiltRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut u = self.url.clone();
        u.set_query(None);
        let _ = u.set_password(None);
        f.debug_struct("BuiltRequest")
            .field("method", &self.method)
            .field("url", &u.as_str())
            .field("has_query", &self.url.query().is_some())
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
            )
            .field(
                "body",
                &self.body.as_ref().map(|(ct, b)| (ct.as_str(), b.len())),
            )
            .finish()
    }
}

/// Sends tool calls to the API. Cheap to clone (shares the connection pool and token cache).
#[derive(Clone)]
pub struct Forwarder {
    inner: Arc<Inner>,
}

struct Inner {
    client: reqwest::Client,
    opts: ForwardOptions,
    schemes: Vec<(String, SecurityScheme)>,
    creds: Credentials,
    tokens: TokenCache,
    /// Per-caller credentials, asked before `creds` (set once, before serving).
    caller_creds: std::sync::OnceLock<Arc<dyn CallerCredentials>>,
    /// In-process forwarding: requests to the base URL's origin go to this service instead of
    /// over HTTP (set once, before serving).
    local: std::sync::OnceLock<local::LocalService>,
    /// Credential values (in their wire encodings) and `--header` values that are secrets
    /// ([`scrub::is_secret_header`]), prepared for [`scrub::scrub`]; OAuth tokens join them per
    /// call.
    secrets: Vec<String>,
}

impl fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Forwarder")
            .field("base_url", &self.inner.opts.base_url.as_str())
            .field(
                "schemes",
                &self
                    .inner
                    .schemes
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("credentials", &self.inner.creds)
            .finish()
    }
}

/// A JSON answer is read up to this many times `--max-response-bytes`, so that it can be cut
/// at an item boundary within the budget and what was cut counted (past it, the items read are
/// shown and the rest is said to go on).
pub const JSON_READ_FACTOR: usize = 4;

/// Cap on a token endpoint's answer.
const TOKEN_RESPONSE_MAX: usize = 64 * 1024;
/// Cap on a `Retry-After` wait (502/504 with `--retries`).
const RETRY_AFTER_MAX: Duration = Duration::from_secs(5);
/// 429 / 503 answers retried at least this many times (more with `--retries`), within the
/// call's `--timeout`.
pub const PUSHBACK_RETRIES: u32 = 3;

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(100u64.saturating_mul(1u64 << attempt.min(10)))
        .min(Duration::from_secs(2))
}

fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    asked_wait(headers, std::time::SystemTime::now()).map(|d| d.min(RETRY_AFTER_MAX))
}

/// The wait a `Retry-After` header asks for: delay-seconds, or an HTTP date (a date in the past
/// is no wait).
fn asked_wait(headers: &http::HeaderMap, now: std::time::SystemTime) -> Option<Duration> {
    let v = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Exponential backoff from 250 ms, capped at 8 s, with +/-50 % jitter (so clients that were
/// refused together do not come back together).
fn jittered_backoff(attempt: u32) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let base = Duration::from_millis(250u64.saturating_mul(1u64 << attempt.min(10)))
        .min(Duration::from_secs(8));
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    let unit = (h.finish() % 1000) as f64 / 1000.0; // [0, 1)
    base.mul_f64(0.5 + unit)
}

/// What the API's push-back (429 / 503) did to a call, told to the model with the result.
#[derive(Debug, Default)]
struct Pushback {
    /// Retries made, and the status that caused the last one.
    retries: u32,
    status: u16,
    waited: Duration,
    /// The waits came from `Retry-After`.
    asked: bool,
    /// A wait not made: the API asked for more than was left of `--timeout`.
    declined: Option<Duration>,
}

impl Pushback {
    fn note(&self, timeout: Duration) -> Option<String> {
        let mut parts = Vec::new();
        if self.retries > 0 {
            parts.push(format!(
                "the API answered HTTP {} and the call was retried {} time{} after waiting {:.1} s in total ({})",
                self.status,
                self.retries,
                if self.retries == 1 { "" } else { "s" },
                self.waited.as_secs_f64(),
                if self.asked { "as its Retry-After asked" } else { "with backoff" }
            ));
        }
        if let Some(d) = self.declined {
            parts.push(format!(
                "the API asked to retry after {:.0} s, more than is left of the {:.0} s timeout: not retried; call again later",
                d.as_secs_f64().ceil(),
                timeout.as_secs_f64()
            ));
        }
        (!parts.is_empty()).then(|| format!("[openapi-mcp: {}]", parts.join("; ")))
    }
}

/// `scheme://host[:port]`, without credentials or path.
fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Reads at most `max` bytes of the body; `true` when more was available.
async fn read_capped<R: local::Chunks>(
    resp: &mut R,
    max: usize,
) -> Result<(Vec<u8>, bool), R::Error> {
    let mut buf = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        let room = max - buf.len();
        if chunk.len() > room {
            buf.extend_from_slice(&chunk[..room]);
            return Ok((buf, true));
        }
        buf.extend_from_slice(&chunk);
        if buf.len() == max {
            // Exactly at the cap: truncated only if anything follows.
            return match resp.chunk().await {
                Ok(Some(c)) if !c.is_empty() => Ok((buf, true)),
                _ => Ok((buf, false)),
            };
        }
    }
    Ok((buf, false))
}

/// A per-caller credential's refusal as the call's tool error.
fn nothing_sent(e: &CallerCredentialError) -> String {
    let m = e.message.trim_end();
    if m.ends_with('.') {
        format!("{m} Nothing was sent.")
    } else {
        format!("{m}. Nothing was sent.")
    }
}

fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// What an answer said before its body: status, headers and announced length.
struct Head {
    status: http::StatusCode,
    headers: http::HeaderMap,
    total: Option<u64>,
}

/// Notes, for the call's task or workflow handoff, where a 202 says to poll (and when) and
/// where a 303 says the result is.
fn note_handoff(head: &Head, url: &Url) {
    if head.status == http::StatusCode::ACCEPTED
        && let Some(u) = status_url(&head.headers, url)
    {
        let wait = asked_wait(&head.headers, std::time::SystemTime::now());
        let _ = CALL_SCOPE.try_with(|s| {
            s.accepted_at.replace(Some(u));
            s.retry_after.set(wait);
        });
    }
    if head.status == http::StatusCode::SEE_OTHER
        && let Some(u) = head
            .headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| url.join(v.trim()).ok())
            .filter(|u| matches!(u.scheme(), "http" | "https"))
    {
        let _ = CALL_SCOPE.try_with(|s| s.see_other.replace(Some(u)));
    }
}

impl Forwarder {
    pub fn new(
        opts: ForwardOptions,
        schemes: Vec<(String, SecurityScheme)>,
        creds: Credentials,
    ) -> Result<Self, ForwardError> {
        let base = &opts.base_url;
        let bad = |reason: &str| ForwardError::BaseUrl {
            url: origin_of(base),
            reason: reason.to_string(),
        };
        if !matches!(base.scheme(), "http" | "https") {
            return Err(bad("only http and https URLs are supported"));
        }
        if base.host().is_none() || base.cannot_be_a_base() {
            return Err(bad("it has no host"));
        }
        let mut static_secrets = Vec::new();
        for (k, v) in &opts.static_headers {
            if http::HeaderName::from_bytes(k.as_bytes()).is_err() {
                return Err(ForwardError::StaticHeader {
                    name: k.clone(),
                    reason: "not a valid header name",
                });
            }
            if http::HeaderValue::from_bytes(v.as_bytes()).is_err() {
                return Err(ForwardError::StaticHeader {
                    name: k.clone(),
                    reason: "the value contains control characters",
                });
            }
            static_secrets.extend(scrub::header_secrets(k, v));
        }
        for what in scrub::short_secrets(&opts.static_headers, &creds) {
            tracing::warn!(
                "{what}: the value is shorter than {} characters, too short to be redacted from results (it would match ordinary text)",
                scrub::MIN_SECRET_LEN
            );
        }
        let client = reqwest::Client::builder()
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(opts.timeout)
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .map_err(|e| ForwardError::Client(e.without_url()))?;
        let secrets = scrub::prepare(
            creds
                .secret_strings()
                .into_iter()
                .chain(static_secrets)
                .collect(),
        );
        Ok(Self {
            inner: Arc::new(Inner {
                client,
                opts,
                schemes,
                creds,
                tokens: TokenCache::default(),
                caller_creds: std::sync::OnceLock::new(),
                local: std::sync::OnceLock::new(),
                secrets,
            }),
        })
    }

    pub fn options(&self) -> &ForwardOptions {
        &self.inner.opts
    }

    pub fn credentials(&self) -> &Credentials {
        &self.inner.creds
    }

    /// The API's security schemes by name.
    pub fn schemes(&self) -> &[(String, SecurityScheme)] {
        &self.inner.schemes
    }

    /// Per-caller upstream credentials, consulted before the static ones for every call made
    /// by an authorized caller (see [`caller`]). Set once; `false` if one was set already.
    pub fn set_caller_credentials(&self, provider: Arc<dyn CallerCredentials>) -> bool {
        self.inner.caller_creds.set(provider).is_ok()
    }

    /// Sends calls to `service` — typically the API owner's own `axum::Router` — instead of
    /// over HTTP (see [`local`]): every request to the base URL's origin becomes a `oneshot`
    /// on it, with the same method, path, query, headers and body, and its answer is mapped as
    /// an HTTP answer (limits, timeout, retries). Set once, before serving; `false` if one was
    /// set already.
    pub fn set_in_process<S, B>(&self, service: S) -> bool
    where
        S: tower::Service<http::Request<local::Body>, Response = http::Response<B>>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Error: Into<local::BoxError>,
        S::Future: Send + 'static,
        B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
        B::Error: Into<local::BoxError>,
    {
        self.inner
            .local
            .set(local::LocalService::new(service))
            .is_ok()
    }

    /// Whether calls go to an in-process service ([`Self::set_in_process`]).
    pub fn is_in_process(&self) -> bool {
        self.inner.local.get().is_some()
    }

    /// The per-caller credentials of `caller` for `route` (scheme, value): asked scheme by
    /// scheme in the order of the operation's security alternatives, up to the first
    /// alternative they and the static credentials fill. Nothing is asked for an operation
    /// served from an origin credentials do not go to.
    async fn caller_credentials(
        &self,
        route: &Route,
        caller: Option<&Caller>,
    ) -> Result<Vec<(String, String)>, CallerCredentialError> {
        let inner = &self.inner;
        let (Some(provider), Some(caller)) = (inner.caller_creds.get(), caller) else {
            return Ok(Vec::new());
        };
        let trusted = request::effective_base(&inner.opts.base_url, route.server.as_deref())
            .is_ok_and(|u| inner.opts.sends_credentials_to(&u));
        if !trusted {
            return Ok(Vec::new());
        }
        let mut asked: Vec<(String, Option<String>)> = Vec::new();
        for alt in route.security.iter().filter(|a| !a.is_empty()) {
            let mut filled = true;
            for name in alt {
                let value = match asked.iter().find(|(n, _)| n == name) {
                    Some((_, v)) => v.clone(),
                    None => {
                        let v = provider.credential(caller, name).await?;
                        asked.push((name.clone(), v.clone()));
                        v
                    }
                };
                let static_cred = || {
                    inner
                        .schemes
                        .iter()
                        .any(|(n, s)| n == name && inner.creds.cred(n, s).is_some())
                };
                if value.is_none() && !static_cred() {
                    filled = false;
                    break;
                }
            }
            if filled {
                break;
            }
        }
        Ok(asked
            .into_iter()
            .filter_map(|(n, v)| v.map(|v| (n, v)))
            .collect())
    }

    /// The request for one tool call: method, URL, headers (credentials of the chosen security
    /// alternative included; an OAuth2 client-credentials token only if already cached) and body.
    pub fn build_request(
        &self,
        route: &Route,
        args: &Map<String, Value>,
    ) -> Result<BuiltRequest, ArgError> {
        self.check_credentials(route, args, &[])
            .map_err(|message| ArgError { arg: None, message })?;
        self.build(route, args, None, &[], &[])
    }

    /// `fresh`: OAuth2 tokens (scheme, token) obtained for this very request; they are used even
    /// if the cache already considers them stale (short-lived tokens). `per_caller`: the
    /// caller's own credentials (scheme, value), before the static ones.
    fn build(
        &self,
        route: &Route,
        args: &Map<String, Value>,
        boundary: Option<&str>,
        fresh: &[(String, String)],
        per_caller: &[(String, String)],
    ) -> Result<BuiltRequest, ArgError> {
        // `null`s that mean "not set" are not sent: the same ones validation left out.
        let schema = route.input_schema.get();
        let pruned;
        let args = match &schema {
            Some(s) => {
                pruned = openapi_mcp_toolset::validate::drop_unset_nulls(s, args);
                &*pruned
            }
            None => args,
        };
        // Arguments pinned by an overrides file are not in the inputSchema: add them here.
        let with_pinned;
        let args = if route.pinned.is_empty() {
            args
        } else {
            let mut all = args.clone();
            all.extend(route.pinned.iter().map(|(k, v)| (k.clone(), v.clone())));
            with_pinned = all;
            &with_pinned
        };
        let inner = &self.inner;
        let token = |n: &str| {
            fresh
                .iter()
                .find(|(s, _)| s == n)
                .map(|(_, t)| t.clone())
                .or_else(|| inner.tokens.get(n))
        };
        // Credentials (and the client's forwarded headers) go only to the origins the operator
        // named; an operation-level server elsewhere gets the request without them.
        let trusted = request::effective_base(&inner.opts.base_url, route.server.as_deref())
            .is_ok_and(|u| inner.opts.sends_credentials_to(&u));
        let parts = if trusted {
            auth::select_with(&route.security, &inner.schemes, &inner.creds, per_caller)
                .map(|alt| auth::apply_with(alt, &inner.schemes, &inner.creds, token, per_caller))
                .unwrap_or_default()
        } else {
            auth::AuthParts::default()
        };
        let forwarded = if trusted {
            CALL_SCOPE
                .try_with(|s| s.forwarded_headers.clone())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let ctx = request::BuildContext {
            base: &inner.opts.base_url,
            user_agent: &inner.opts.user_agent,
            static_headers: &inner.opts.static_headers,
            forwarded_headers: &forwarded,
        };
        request::build(&ctx, route, args, &parts, boundary)
    }

    /// Builds and sends the request for one tool call and maps the response to an MCP result.
    /// Never panics; argument problems and upstream failures are results with `is_error = true`.
    pub async fn call(&self, route: &Route, args: &Map<String, Value>) -> CallToolResult {
        let started = Instant::now();
        let mut per_caller = Vec::new();
        let (result, status) = self.call_inner(route, args, &mut per_caller).await;
        let _ = CALL_SCOPE.try_with(|s| s.status.set(status));
        tracing::debug!(
            method = route.method.as_str(),
            path = %route.path,
            status = status.map(i64::from).unwrap_or(-1),
            ms = started.elapsed().as_millis() as u64,
            "forwarded tool call"
        );
        self.scrub(result, &per_caller)
    }

    /// Refuses a call that would go without a required parameter a credential fills
    /// ([`Route::credential_params`]): no configured credential, argument, `--header`,
    /// forwarded header or base-URL query gives it. The message names what to set.
    fn check_credentials(
        &self,
        route: &Route,
        args: &Map<String, Value>,
        per_caller: &[(String, String)],
    ) -> Result<(), String> {
        let inner = &self.inner;
        let mut required = route
            .credential_params
            .iter()
            .filter(|c| c.required)
            .peekable();
        if required.peek().is_none() {
            return Ok(());
        }
        let base = request::effective_base(&inner.opts.base_url, route.server.as_deref());
        let trusted = base
            .as_ref()
            .is_ok_and(|u| inner.opts.sends_credentials_to(u));
        let alt = auth::select_with(&route.security, &inner.schemes, &inner.creds, per_caller);
        let scheme = |n: &str| inner.schemes.iter().find(|(s, _)| s == n).map(|(_, s)| s);
        let forwarded = if trusted {
            CALL_SCOPE
                .try_with(|s| s.forwarded_headers.clone())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        for cp in required {
            let fills = |n: &String| scheme(n).is_some_and(|s| cp.filled_by(s));
            let binding = route.args.iter().find(|b| {
                b.wire == cp.name
                    && matches!(
                        (&b.location, cp.location),
                        (ArgLocation::Header { .. }, ApiKeyLocation::Header)
                            | (ArgLocation::Query { .. }, ApiKeyLocation::Query)
                            | (ArgLocation::Cookie { .. }, ApiKeyLocation::Cookie)
                    )
            });
            if let Some(alt) = alt.filter(|_| trusted) {
                if alt.iter().any(fills) {
                    continue;
                }
                // The operation's security is met by another credential: the parameter only
                // documented where one of its alternatives goes.
                if binding.is_none() {
                    continue;
                }
            }
            if binding.is_some_and(|b| {
                args.get(&b.arg)
                    .or_else(|| route.pinned.get(&b.arg))
                    .is_some_and(|v| !v.is_null())
            }) {
                continue;
            }
            if operator_fills(cp, &inner.opts, &forwarded, base.as_ref().ok()) {
                continue;
            }
            return Err(missing_credential(
                cp,
                route,
                &inner.schemes,
                &inner.creds,
                binding.map(|b| b.arg.as_str()),
                base.as_ref().ok().filter(|_| !trusted),
            ));
        }
        Ok(())
    }

    /// Client-credentials schemes of the security alternative chosen for `route` (those a
    /// per-caller credential fills need no token).
    fn client_credential_schemes(
        &self,
        route: &Route,
        per_caller: &[(String, String)],
    ) -> Vec<String> {
        let inner = &self.inner;
        let Some(alt) =
            auth::select_with(&route.security, &inner.schemes, &inner.creds, per_caller)
        else {
            return Vec::new();
        };
        alt.iter()
            .filter(|name| !per_caller.iter().any(|(n, _)| n == *name))
            .filter(|name| {
                inner.schemes.iter().any(|(n, s)| {
                    n == *name && matches!(inner.creds.cred(n, s), Some(Cred::Client { .. }))
                })
            })
            .cloned()
            .collect()
    }

    /// `per_caller` receives the caller's credentials used (for the result's scrubbing).
    async fn call_inner(
        &self,
        route: &Route,
        args: &Map<String, Value>,
        per_caller: &mut Vec<(String, String)>,
    ) -> (CallToolResult, Option<u16>) {
        let caller = CALL_SCOPE.try_with(|s| s.caller.clone()).ok().flatten();
        match self.caller_credentials(route, caller.as_deref()).await {
            Ok(v) => *per_caller = v,
            Err(e) => return (error_result(nothing_sent(&e)), None),
        }
        if let Err(message) = self.check_credentials(route, args, per_caller) {
            return (error_result(message), None);
        }
        let opts = &self.inner.opts;
        let mut cc = self.client_credential_schemes(route, per_caller);
        let idempotent = route.method.is_idempotent() || opts.retry_writes;
        let started = Instant::now();
        let mut attempt = 0u32;
        let mut refreshed = false;
        let mut pushback = Pushback::default();
        loop {
            let fresh = match self.fresh_tokens(&cc).await {
                Ok(fresh) => fresh,
                Err(e) => return (error_result(e), None),
            };
            let mut built = match self.build(route, args, None, &fresh, per_caller) {
                Ok(b) => b,
                Err(e) => return (error_result(format!("invalid arguments: {e}")), None),
            };
            let origin = origin_of(&built.url);
            let host = built.url.host_str().unwrap_or("").to_string();
            let resource_path = built.url.path().to_string();
            match self.send_traced(route, &mut built, &host).await {
                Ok(mut resp) => {
                    let status = resp.status();
                    if status == http::StatusCode::UNAUTHORIZED
                        && (!cc.is_empty() || !per_caller.is_empty())
                        && !refreshed
                    {
                        refreshed = true;
                        drop(resp);
                        if let Err(e) = self
                            .renew_rejected(route, caller.as_deref(), &mut cc, per_caller)
                            .await
                        {
                            return (error_result(nothing_sent(&e)), None);
                        }
                        continue;
                    }
                    // 429 / 503: the API asks to come back later; do, within --timeout.
                    if idempotent
                        && matches!(status.as_u16(), 429 | 503)
                        && pushback.retries < opts.retries.max(PUSHBACK_RETRIES)
                    {
                        let asked = asked_wait(resp.headers(), std::time::SystemTime::now());
                        let wait = asked.unwrap_or_else(|| jittered_backoff(pushback.retries));
                        let left = opts.timeout.saturating_sub(started.elapsed());
                        if wait < left {
                            drop(resp);
                            tokio::time::sleep(wait).await;
                            pushback.retries += 1;
                            pushback.status = status.as_u16();
                            pushback.waited += wait;
                            pushback.asked |= asked.is_some();
                            continue;
                        }
                        pushback.declined = Some(wait);
                    }
                    if idempotent && attempt < opts.retries && matches!(status.as_u16(), 502..=504)
                    {
                        let delay = retry_after(resp.headers()).unwrap_or_else(|| backoff(attempt));
                        drop(resp);
                        tokio::time::sleep(delay).await;
                        attempt += 1;
                        continue;
                    }
                    let head = Head {
                        status,
                        headers: resp.headers().clone(),
                        total: resp.content_length(),
                    };
                    note_handoff(&head, &built.url);
                    let note = pushback.note(opts.timeout);
                    let with_note = |(mut r, s): (CallToolResult, Option<u16>)| {
                        if let Some(n) = &note {
                            r.content.push(ContentBlock::text(n.clone()));
                        }
                        (r, s)
                    };
                    let read = self.read_answer(&mut resp, &head).await;
                    #[cfg(feature = "workflows")]
                    self.capture_answer(&head, &built.url, &read, per_caller);
                    return with_note(match read {
                        Ok(read) => {
                            self.shape_answer(route, args, per_caller, &head, read, &resource_path)
                        }
                        Err(e) => {
                            let msg = e.message(&origin, &host, opts.timeout);
                            (
                                error_result(format!(
                                    "HTTP {}: reading the response failed: {msg}",
                                    status.as_u16()
                                )),
                                Some(status.as_u16()),
                            )
                        }
                    });
                }
                Err(e) => {
                    note_error(&e);
                    if idempotent && attempt < opts.retries && e.is_connect() {
                        tokio::time::sleep(backoff(attempt)).await;
                        attempt += 1;
                        continue;
                    }
                    return (error_result(e.message(&origin, &host, opts.timeout)), None);
                }
            }
        }
    }

    /// A token for each client-credentials scheme in `cc` (fetched, or from the cache).
    async fn fresh_tokens(&self, cc: &[String]) -> Result<Vec<(String, String)>, String> {
        let mut fresh = Vec::with_capacity(cc.len());
        for name in cc {
            match self.ensure_token(name).await {
                Ok(token) => fresh.push((name.clone(), token)),
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(fresh)
    }

    /// Sends one attempt, in a client span whose traceparent the API receives, and counts its
    /// time and body bytes in the call's exchange.
    async fn send_traced(
        &self,
        route: &Route,
        built: &mut BuiltRequest,
        host: &str,
    ) -> Result<local::Upstream, local::SendError> {
        let sent_at = Instant::now();
        let body_len = built.body.as_ref().map_or(0, |(_, b)| b.len() as u64);
        // Traces: a client span per attempt; the API receives its traceparent.
        let span = crate::observe::otel::upstream_span(route.method.as_str(), &route.path, host);
        if let Some(cx) = &span {
            built.headers.extend(crate::observe::otel::inject(cx));
        }
        let sent = self.send(built).await;
        if let Some(cx) = &span {
            crate::observe::otel::end_upstream(cx, sent.as_ref().ok().map(|r| r.status().as_u16()));
        }
        note_exchange(|x| {
            x.upstream = Some(x.upstream.unwrap_or_default() + sent_at.elapsed());
            x.sent += body_len;
            x.timed_out = false;
            x.unreachable = false;
        });
        sent
    }

    /// After a 401: forgets the client-credentials tokens in `cc` and, when the caller's own
    /// credentials were used, drops them from their provider's cache and asks for them again.
    async fn renew_rejected(
        &self,
        route: &Route,
        caller: Option<&Caller>,
        cc: &mut Vec<String>,
        per_caller: &mut Vec<(String, String)>,
    ) -> Result<(), CallerCredentialError> {
        let inner = &self.inner;
        for name in cc.iter() {
            inner.tokens.invalidate(name);
        }
        // The caller's credentials: dropped from their provider's cache, and
        // asked for again.
        if let (Some(p), Some(c)) = (inner.caller_creds.get(), caller)
            && !per_caller.is_empty()
        {
            for (name, _) in per_caller.iter() {
                p.rejected(c, name);
            }
            *per_caller = self.caller_credentials(route, Some(c)).await?;
            *cc = self.client_credential_schemes(route, per_caller);
        }
        Ok(())
    }

    /// Reads the answer's body, counting its time and bytes in the call's exchange. A JSON
    /// answer is read up to JSON_READ_FACTOR times past the budget, to be cut at an item
    /// boundary within it (and to count what was cut).
    async fn read_answer(
        &self,
        resp: &mut local::Upstream,
        head: &Head,
    ) -> Result<(Vec<u8>, bool), local::SendError> {
        let opts = &self.inner.opts;
        let json = head.status.is_success()
            && head
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|ct| {
                    response::is_json_essence(
                        ct.split(';')
                            .next()
                            .unwrap_or("")
                            .trim()
                            .to_ascii_lowercase()
                            .as_str(),
                    )
                });
        let read_max = if json {
            opts.max_response_bytes.saturating_mul(JSON_READ_FACTOR)
        } else {
            opts.max_response_bytes
        };
        let read_at = Instant::now();
        let read = read_capped(resp, read_max).await;
        note_exchange(|x| {
            x.upstream = Some(x.upstream.unwrap_or_default() + read_at.elapsed());
            if let Ok((body, _)) = &read {
                x.received += body.len() as u64;
            }
        });
        if let Err(e) = &read {
            note_error(e);
        }
        read
    }

    /// Hands the answer read to a workflow step that wants it (Arazzo's runtime expressions).
    #[cfg(feature = "workflows")]
    fn capture_answer(
        &self,
        head: &Head,
        url: &Url,
        read: &Result<(Vec<u8>, bool), local::SendError>,
        per_caller: &[(String, String)],
    ) {
        if let Ok((body, cut)) = read
            && capture::wanted()
        {
            capture::keep(|| capture::Captured {
                url: url.to_string(),
                status: head.status.as_u16(),
                headers: head
                    .headers
                    .iter()
                    .map(|(k, v)| {
                        let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
                        (k.as_str().to_string(), v)
                    })
                    .collect(),
                body: body.to_vec(),
                cut: *cut,
                secrets: self.secrets_with(per_caller),
            });
        }
    }

    /// Maps an answer read (`cut` when the body went past the read limit) to the tool result,
    /// shaped by the response mode, budget and the call's `_select`, with secrets scrubbed.
    fn shape_answer(
        &self,
        route: &Route,
        args: &Map<String, Value>,
        per_caller: &[(String, String)],
        head: &Head,
        (body, cut): (Vec<u8>, bool),
        resource_path: &str,
    ) -> (CallToolResult, Option<u16>) {
        let opts = &self.inner.opts;
        let _span = crate::observe::otel::step("map response");
        let t = cut.then_some(match head.total {
            Some(n) if n > body.len() as u64 => Truncation::Of(n),
            _ => Truncation::Unknown,
        });
        let select = CALL_SCOPE.try_with(|s| s.select.clone()).ok().flatten();
        let secrets = self.secrets_with(per_caller);
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let shape = Shape {
            mode: opts.response,
            max: opts.max_response_bytes,
            select: select.as_ref().map(|(a, e)| (a.as_str(), e.as_str())),
            args,
            secrets: &secrets,
        };
        let (r, full) = to_result_shaped(
            head.status,
            &head.headers,
            &body,
            t,
            route,
            resource_path,
            &shape,
        );
        let _ = CALL_SCOPE.try_with(|s| s.full_structured.replace(full));
        (r, Some(head.status.as_u16()))
    }

    async fn send(&self, built: &BuiltRequest) -> Result<local::Upstream, local::SendError> {
        // One check per attempt; nothing more on the HTTP path.
        if let Some(svc) = self.inner.local.get()
            && origin_of(&built.url) == origin_of(&self.inner.opts.base_url)
        {
            let deadline = tokio::time::Instant::now() + self.inner.opts.timeout;
            return svc
                .send(built, local::current_caller(), deadline)
                .await
                .map(local::Upstream::Local)
                .map_err(local::SendError::Local);
        }
        let mut rb = self
            .inner
            .client
            .request(built.method.clone(), built.url.clone());
        for (k, v) in &built.headers {
            // `from_bytes` (unlike `from_str`) accepts UTF-8 (obs-text) in values; control
            // characters were rejected when the request was built.
            match (
                http::HeaderName::from_bytes(k.as_bytes()),
                http::HeaderValue::from_bytes(v.as_bytes()),
            ) {
                (Ok(name), Ok(value)) => rb = rb.header(name, value),
                _ => tracing::debug!(header = %k, "skipping an invalid header"),
            }
        }
        if let Some((ct, body)) = &built.body {
            rb = rb
                .header(header::CONTENT_TYPE, ct.as_str())
                .body(body.clone());
        }
        rb.send()
            .await
            .map(local::Upstream::Http)
            .map_err(local::SendError::Http)
    }

    /// A client-credentials token for `scheme`: the cached one, or a freshly fetched one (then
    /// cached).
    async fn ensure_token(&self, scheme: &str) -> Result<String, TokenError> {
        let inner = &self.inner;
        if let Some(token) = inner.tokens.get(scheme) {
            return Ok(token);
        }
        let _guard = inner.tokens.fetch_lock.lock().await;
        if let Some(token) = inner.tokens.get(scheme) {
            return Ok(token);
        }
        let Some((_, s)) = inner.schemes.iter().find(|(n, _)| n == scheme) else {
            return Err(TokenError::UnknownScheme(scheme.to_string()));
        };
        let (
            SecurityScheme::OAuth2ClientCredentials { token_url, scopes },
            Some(Cred::Client { id, secret }),
        ) = (s, inner.creds.cred(scheme, s))
        else {
            return Err(TokenError::NoClientCredentials(scheme.to_string()));
        };
        let failed = |endpoint: String, cause: TokenFailure| TokenError::Fetch {
            scheme: scheme.to_string(),
            endpoint,
            cause,
        };
        let url = match Url::parse(token_url) {
            Ok(u) => u,
            Err(url::ParseError::RelativeUrlWithoutBase) => {
                inner.opts.base_url.join(token_url).map_err(|e| {
                    failed(String::new(), TokenFailure::BadUrl(token_url.clone(), e))
                })?
            }
            Err(e) => {
                return Err(failed(
                    String::new(),
                    TokenFailure::BadUrl(token_url.clone(), e),
                ));
            }
        };
        // The client secret travels only over TLS (or to this machine).
        let loopback = match url.host() {
            Some(url::Host::Ipv4(a)) => a.is_loopback(),
            Some(url::Host::Ipv6(a)) => a.is_loopback(),
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        if url.scheme() != "https" && !loopback {
            return Err(failed(origin_of(&url), TokenFailure::Insecure));
        }
        let shown = {
            let mut u = url.clone();
            u.set_query(None);
            let _ = u.set_password(None);
            let _ = u.set_username("");
            u.to_string()
        };
        let scope = scopes.join(" ");
        let params = [("scope", scope.as_str())];
        let post = crate::oauth::token_post::TokenPost {
            url: &url,
            grant_type: "client_credentials",
            params: if scopes.is_empty() { &[] } else { &params },
            client: crate::oauth::token_post::TokenClient::Post {
                id,
                secret: Some(secret),
            },
            user_agent: Some(inner.opts.user_agent.as_str()),
            max_bytes: TOKEN_RESPONSE_MAX,
        };
        let answer = match post.send(&inner.client).await {
            Ok(a) => a,
            Err(crate::oauth::token_post::TokenPostError::Send(e)) => {
                let host = url.host_str().unwrap_or("").to_string();
                let msg = response::transport_error(e, &origin_of(&url), &host, inner.opts.timeout);
                return Err(failed(shown, TokenFailure::Transport(msg)));
            }
            Err(crate::oauth::token_post::TokenPostError::Read(e)) => {
                return Err(failed(shown, TokenFailure::Read(e)));
            }
        };
        let (status, bytes) = (answer.status, answer.body);
        if !status.is_success() {
            let text = String::from_utf8_lossy(&bytes);
            let snippet: String = text.chars().take(500).collect();
            return Err(failed(shown, TokenFailure::Status { status, snippet }));
        }
        let (token, expires_in) = auth::parse_token_response(&bytes)
            .map_err(|e| failed(shown, TokenFailure::Answer(e)))?;
        inner.tokens.put(scheme, token.clone(), expires_in);
        Ok(token)
    }

    /// Replaces every configured secret (and OAuth token, and the caller's credentials used) in
    /// the result with `[redacted]`.
    fn scrub(&self, mut result: CallToolResult, per_caller: &[(String, String)]) -> CallToolResult {
        let secrets = self.secrets_with(per_caller);
        if secrets.is_empty() {
            return result;
        }
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        scrub::scrub(&mut result, &secrets);
        result
    }

    /// [`Self::secrets`] and the caller's credentials of this call, longest first.
    /// The client's forwarded headers (`--forward-header`) count as the caller's credentials.
    fn secrets_with(&self, per_caller: &[(String, String)]) -> Vec<String> {
        let mut secrets = self.secrets();
        let forwarded: Vec<String> = CALL_SCOPE
            .try_with(|s| {
                s.forwarded_headers
                    .iter()
                    .flat_map(|(k, v)| scrub::header_secrets(k, v))
                    .collect()
            })
            .unwrap_or_default();
        if per_caller.is_empty() && forwarded.is_empty() {
            return secrets;
        }
        secrets.extend(scrub::prepare(
            per_caller
                .iter()
                .flat_map(|(_, v)| scrub::value_forms(v))
                .chain(forwarded)
                .collect(),
        ));
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets
    }

    /// The configured secrets and the OAuth tokens obtained so far, longest first.
    fn secrets(&self) -> Vec<String> {
        let inner = &self.inner;
        let tokens = inner.tokens.all_tokens();
        if tokens.is_empty() {
            return inner.secrets.clone();
        }
        let mut secrets = inner.secrets.clone();
        secrets.extend(scrub::prepare(tokens));
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets
    }
}

/// Whether the operator gives parameter `cp` on every request: a `--header` (or a header the
/// client's request forwards), a cookie in a `--header Cookie`, or the base URL's query.
fn operator_fills(
    cp: &CredentialParam,
    opts: &ForwardOptions,
    forwarded: &[(String, String)],
    base: Option<&Url>,
) -> bool {
    let mut headers = opts.static_headers.iter().chain(forwarded);
    match cp.location {
        ApiKeyLocation::Header => headers.any(|(k, _)| k.eq_ignore_ascii_case(&cp.name)),
        ApiKeyLocation::Query => base.is_some_and(|u| u.query_pairs().any(|(k, _)| k == cp.name)),
        ApiKeyLocation::Cookie => headers.any(|(k, v)| {
            k.eq_ignore_ascii_case("cookie")
                && v.split(';')
                    .any(|c| c.trim().split('=').next() == Some(cp.name.as_str()))
        }),
    }
}

/// The tool error for a required credential parameter nothing fills: what the API needs, the
/// security schemes that fill it and their variables, or why a configured credential is not
/// sent (`untrusted`: the operation's server, an origin credentials do not go to).
fn missing_credential(
    cp: &CredentialParam,
    route: &Route,
    schemes: &[(String, SecurityScheme)],
    creds: &Credentials,
    arg: Option<&str>,
    untrusted: Option<&Url>,
) -> String {
    let what = match cp.location {
        ApiKeyLocation::Header => format!("the header `{}`", cp.name),
        ApiKeyLocation::Query => format!("the query parameter `{}`", cp.name),
        ApiKeyLocation::Cookie => format!("the cookie `{}`", cp.name),
    };
    // The schemes of the operation's security that fill it, in spec order.
    let fillers: Vec<&(String, SecurityScheme)> = schemes
        .iter()
        .filter(|(n, s)| cp.filled_by(s) && route.security.iter().flatten().any(|x| x == n))
        .collect();
    let named = fillers
        .iter()
        .map(|(n, _)| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(" or ");
    if let Some(url) = untrusted
        && fillers.iter().any(|(n, s)| creds.has(n, s))
    {
        return format!(
            "The API requires {what}, which the credential of security scheme {named} fills, but credentials are not sent to {}, this operation's server (the operator can allow it with --credential-origin). Nothing was sent.",
            url.origin().ascii_serialization()
        );
    }
    let ambiguous = openapi_mcp_toolset::model::ambiguous_env(schemes);
    let how: Vec<String> = fillers
        .iter()
        .map(|(n, s)| {
            let base = openapi_mcp_toolset::model::credential_env_base(n);
            let vars = if ambiguous.iter().any(|(b, _)| *b == base) {
                format!("--auth {n}=VALUE (its variable is shared with another scheme)")
            } else if s
                .env_var_names(n)
                .iter()
                .any(|v| auth::server_env(v).is_some())
            {
                format!("--auth {n}=VALUE (its variable is one the server reads for itself)")
            } else {
                match s {
                    SecurityScheme::Basic => format!("{base}_USERNAME and {base}_PASSWORD"),
                    SecurityScheme::OAuth2ClientCredentials { .. } => {
                        format!("{base}_CLIENT_ID and {base}_CLIENT_SECRET (or a token in {base})")
                    }
                    _ => base,
                }
            };
            if fillers.len() > 1 {
                format!("{vars} (scheme `{n}`)")
            } else {
                vars
            }
        })
        .collect();
    let mut text = format!("The API requires {what}");
    if !fillers.is_empty() {
        text.push_str(&format!(
            ", which the credential of security scheme {named} fills, and none is configured: set {} (or start the server with --auth SCHEME=VALUE)",
            how.join(" or ")
        ));
    }
    if let Some(arg) = arg {
        text.push_str(&format!(
            "{} pass it as the argument `{arg}`",
            if fillers.is_empty() { ":" } else { ", or" }
        ));
    }
    text.push_str(". Nothing was sent.");
    text
}

/// Why no OAuth2 client-credentials token could be had for a security scheme.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenError {
    #[error("unknown security scheme `{0}`")]
    UnknownScheme(String),
    #[error("security scheme `{0}` has no OAuth2 client credentials")]
    NoClientCredentials(String),
    /// Fetching from the token endpoint (`endpoint`: its URL without query or user info,
    /// empty when the URL itself is invalid) failed.
    #[error(
        "could not obtain an OAuth2 access token for security scheme `{scheme}`{}",
        fetch_detail(endpoint, cause)
    )]
    Fetch {
        scheme: String,
        endpoint: String,
        #[source]
        cause: TokenFailure,
    },
}

/// What went wrong at the token endpoint.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenFailure {
    #[error("the token URL `{0}` is invalid ({1})")]
    BadUrl(String, #[source] url::ParseError),
    #[error(
        "the token endpoint is not https, and the client secret is not sent in the clear (plain http is accepted for loopback hosts only)"
    )]
    Insecure,
    /// A transport error, already described for the user (timeouts, refused connections).
    #[error("{0}")]
    Transport(String),
    #[error("reading the answer failed ({0})")]
    Read(#[source] reqwest::Error),
    #[error("answered HTTP {} {}\n{snippet}", .status.as_u16(), .status.canonical_reason().unwrap_or(""))]
    Status {
        status: http::StatusCode,
        /// The start of the answer's body (the endpoint's own error text).
        snippet: String,
    },
    #[error(transparent)]
    Answer(auth::TokenResponseError),
}

fn fetch_detail(endpoint: &str, cause: &TokenFailure) -> String {
    match cause {
        TokenFailure::BadUrl(..) => format!(": {cause}"),
        TokenFailure::Insecure => format!(" from {endpoint}: {cause}"),
        TokenFailure::Status { .. } => format!(": the token endpoint {endpoint} {cause}"),
        _ => format!(" from {endpoint}: {cause}"),
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;
    use openapi_mcp_toolset::model::{
        ApiKeyLocation, ArgBinding, ArgLocation, BodyBinding, BodyKind, HttpMethod, OutputShape,
        PathStyle,
    };

    type Handler = Arc<dyn Fn(&str) -> Vec<u8> + Send + Sync>;

    /// A tiny HTTP/1.1 server on 127.0.0.1: each connection gets one canned answer from `handler`
    /// (given the raw request text) and is closed. Requests are recorded.
    async fn serve(handler: Handler) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let handler = handler.clone();
                let seen = seen2.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut tmp = [0u8; 4096];
                    loop {
                        let Ok(n) = sock.read(&mut tmp).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&tmp[..n]);
                        let text = String::from_utf8_lossy(&buf).to_string();
                        if let Some(end) = text.find("\r\n\r\n") {
                            let len = text[..end]
                                .lines()
                                .find_map(|l| {
                                    let (k, v) = l.split_once(':')?;
                                    k.eq_ignore_ascii_case("content-length")
                                        .then(|| v.trim().parse::<usize>().ok())
                                        .flatten()
                                })
                                .unwrap_or(0);
                            if buf.len() >= end + 4 + len {
                                break;
                            }
                        }
                    }
                    let req = String::from_utf8_lossy(&buf).to_string();
                    let answer = handler(&req);
                    seen.lock().expect("lock").push(req);
                    let _ = sock.write_all(&answer).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        (addr, seen)
    }

    fn http(status: &str, ct: &str, body: &str) -> Vec<u8> {
        format!("HTTP/1.1 {status}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
            .into_bytes()
    }

    fn opts(addr: SocketAddr) -> ForwardOptions {
        ForwardOptions::new(Url::parse(&format!("http://{addr}/api")).expect("url"))
    }

    fn get_pet() -> Route {
        Route {
            method: HttpMethod::Get,
            path: "/pets/{petId}".into(),
            server: None,
            args: vec![
                ArgBinding {
                    arg: "petId".into(),
                    wire: "petId".into(),
                    location: ArgLocation::Path {
                        style: PathStyle::Simple,
                        explode: false,
                    },
                    required: true,
                    content_type: None,
                },
                ArgBinding {
                    arg: "X-Trace".into(),
                    wire: "X-Trace".into(),
                    location: ArgLocation::Header { explode: false },
                    required: false,
                    content_type: None,
                },
            ],
            body: None,
            accept: Some("application/json".into()),
            security: vec![vec!["key".into()]],
            oauth_scopes: Vec::new(),
            output: OutputShape::Object,
            pinned: Default::default(),
            credential_params: Vec::new(),
            input_schema: Default::default(),
        }
    }

    fn key_scheme() -> Vec<(String, SecurityScheme)> {
        vec![(
            "key".into(),
            SecurityScheme::ApiKey {
                name: "X-Api-Key".into(),
                location: ApiKeyLocation::Header,
            },
        )]
    }

    fn args(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn text(r: &CallToolResult) -> String {
        r.content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn end_to_end_json_call() {
        let (addr, seen) = serve(Arc::new(|_req: &str| {
            http("200 OK", "application/json", r#"{"id":7,"name":"Rex"}"#)
        }))
        .await;
        let mut creds = Credentials::new();
        creds.set("key", "sekret-key".into());
        let f = Forwarder::new(opts(addr), key_scheme(), creds).expect("forwarder");
        let a = args(json!({"petId": "a/b", "X-Trace": "tëst"}));

        let built = f.build_request(&get_pet(), &a).expect("build");
        assert_eq!(built.url.as_str(), format!("http://{addr}/api/pets/a%2Fb"));
        assert_eq!(built.header("X-Api-Key"), Some("sekret-key"));

        let r = f.call(&get_pet(), &a).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        assert_eq!(r.structured_content, Some(json!({"id": 7, "name": "Rex"})));
        assert_eq!(text(&r), r#"{"id":7,"name":"Rex"}"#);
        let req = seen.lock().expect("lock")[0].clone();
        assert!(req.starts_with("GET /api/pets/a%2Fb HTTP/1.1\r\n"), "{req}");
        let lower = req.to_ascii_lowercase();
        assert!(lower.contains("\r\nx-api-key: sekret-key\r\n"), "{req}");
        assert!(lower.contains("\r\nx-trace: tëst\r\n"), "{req}");
        assert!(lower.contains("\r\naccept: application/json\r\n"), "{req}");
        assert!(
            lower.contains(&format!(
                "\r\nuser-agent: openapi-mcp/{}\r\n",
                env!("CARGO_PKG_VERSION")
            )),
            "{req}"
        );

        // Argument errors are results, not panics.
        let r = f.call(&get_pet(), &args(json!({"X-Trace": "x"}))).await;
        assert_eq!(r.is_error, Some(true));
        assert!(text(&r).contains("petId"), "{}", text(&r));
    }

    #[tokio::test]
    async fn end_to_end_post_body_and_errors() {
        let (addr, seen) = serve(Arc::new(|req: &str| {
            if req.starts_with("POST") {
                http("404 Not Found", "application/json", r#"{"error":"no such owner","key":"sekret-key"}"#)
            } else {
                b"HTTP/1.1 302 Found\r\nLocation: http://elsewhere.example/\r\nContent-Length: 0\r\n\r\n".to_vec()
            }
        }))
        .await;
        let mut creds = Credentials::new();
        creds.set("key", "sekret-key".into());
        let f = Forwarder::new(opts(addr), key_scheme(), creds).expect("forwarder");
        let route = Route {
            method: HttpMethod::Post,
            path: "/pets".into(),
            server: None,
            args: vec![ArgBinding {
                arg: "name".into(),
                wire: "name".into(),
                location: ArgLocation::BodyField,
                required: true,
                content_type: None,
            }],
            body: Some(BodyBinding {
                kind: BodyKind::Json,
                content_type: "application/json".into(),
                required: true,
                flattened: true,
                encoding: vec![],
            }),
            accept: None,
            security: vec![vec!["key".into()]],
            oauth_scopes: Vec::new(),
            output: OutputShape::None,
            pinned: Default::default(),
            credential_params: Vec::new(),
            input_schema: Default::default(),
        };
        let r = f.call(&route, &args(json!({"name": "Rex"}))).await;
        assert_eq!(r.is_error, Some(true));
        // The API echoed the key: it's scrubbed.
        assert_eq!(
            text(&r),
            "HTTP 404 Not Found\n{\n  \"error\": \"no such owner\",\n  \"key\": \"[redacted]\"\n}"
        );
        let req = seen.lock().expect("lock")[0].clone();
        assert!(
            req.to_ascii_lowercase()
                .contains("content-type: application/json\r\n"),
            "{req}"
        );
        assert!(req.ends_with("\r\n\r\n{\"name\":\"Rex\"}"), "{req}");

        let r = f.call(&get_pet(), &args(json!({"petId": 1}))).await;
        assert_eq!(r.is_error, Some(true));
        assert_eq!(
            text(&r),
            "HTTP 302 Found: the API redirected to http://elsewhere.example/; redirects are not followed."
        );
    }

    #[tokio::test]
    async fn truncation_retries_and_transport_errors() {
        let hits = Arc::new(AtomicUsize::new(0));
        let h2 = hits.clone();
        let (addr, _) = serve(Arc::new(move |req: &str| {
            if req.contains("/big") {
                return http("200 OK", "text/plain", &"x".repeat(100));
            }
            if h2.fetch_add(1, Ordering::SeqCst) == 0 {
                b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 0\r\nContent-Length: 0\r\n\r\n"
                    .to_vec()
            } else {
                http("200 OK", "application/json", r#"{"ok":true}"#)
            }
        }))
        .await;
        let mut o = opts(addr);
        o.max_response_bytes = 64;
        o.retries = 2;
        let f = Forwarder::new(o, vec![], Credentials::new()).expect("forwarder");
        let mut big = get_pet();
        big.path = "/big".into();
        big.output = OutputShape::None;
        let r = f.call(&big, &Map::new()).await;
        assert_eq!(r.is_error, Some(false));
        assert_eq!(
            text(&r),
            format!(
                "{}\n[response truncated: 64 of 100 bytes shown]",
                "x".repeat(64)
            )
        );

        let r = f.call(&get_pet(), &args(json!({"petId": 1}))).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        assert_eq!(hits.load(Ordering::SeqCst), 2);

        // Connection refused (a port nobody listens on).
        let free = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = free.local_addr().expect("addr").port();
        drop(free);
        let f = Forwarder::new(
            ForwardOptions::new(Url::parse(&format!("http://127.0.0.1:{port}")).expect("url")),
            vec![],
            Credentials::new(),
        )
        .expect("forwarder");
        let r = f.call(&get_pet(), &args(json!({"petId": 1}))).await;
        assert_eq!(r.is_error, Some(true));
        assert_eq!(
            text(&r),
            format!(
                "could not connect to http://127.0.0.1:{port}: connection refused; is the API running and is --base-url right?"
            )
        );

        // Timeout: a server that never answers.
        let silent = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let saddr = silent.local_addr().expect("addr");
        let keep = tokio::spawn(async move {
            let mut socks = Vec::new();
            while let Ok((s, _)) = silent.accept().await {
                socks.push(s);
            }
        });
        let mut o = opts(saddr);
        o.timeout = Duration::from_millis(300);
        let f = Forwarder::new(o, vec![], Credentials::new()).expect("forwarder");
        let r = f.call(&get_pet(), &args(json!({"petId": 1}))).await;
        assert_eq!(
            text(&r),
            "the API did not answer within 300 ms (timeout); the request may or may not have been applied"
        );
        keep.abort();
    }

    #[tokio::test]
    async fn oauth2_client_credentials_fetch_cache_refresh() {
        let token_calls = Arc::new(AtomicUsize::new(0));
        let tc = token_calls.clone();
        let (addr, seen) = serve(Arc::new(move |req: &str| {
            if req.starts_with("POST /oauth/token") {
                let n = tc.fetch_add(1, Ordering::SeqCst) + 1;
                return http(
                    "200 OK",
                    "application/json",
                    &format!(
                        r#"{{"access_token":"tok{n}","token_type":"Bearer","expires_in":3600}}"#
                    ),
                );
            }
            if req.contains("authorization: Bearer tok1\r\n")
                || req.contains("Authorization: Bearer tok1\r\n")
            {
                return http(
                    "401 Unauthorized",
                    "application/json",
                    r#"{"error":"expired"}"#,
                );
            }
            if req
                .to_ascii_lowercase()
                .contains("authorization: bearer tok2\r\n")
            {
                return http("200 OK", "application/json", r#"{"id":1}"#);
            }
            http("403 Forbidden", "text/plain", "no token")
        }))
        .await;
        let schemes = vec![(
            // Not `oauth`: OPENAPI_MCP_OAUTH_CLIENT_SECRET is the server's own (#36).
            "api_oauth".to_string(),
            SecurityScheme::OAuth2ClientCredentials {
                token_url: format!("http://{addr}/oauth/token"),
                scopes: vec!["read".into(), "write".into()],
            },
        )];
        let creds = Credentials::from_env(&schemes, |k| match k {
            "OPENAPI_MCP_API_OAUTH_CLIENT_ID" => Some("my-client".into()),
            "OPENAPI_MCP_API_OAUTH_CLIENT_SECRET" => Some("cl1ent-s3cret".into()),
            _ => None,
        });
        let f = Forwarder::new(opts(addr), schemes, creds).expect("forwarder");
        let mut route = get_pet();
        route.security = vec![vec!["api_oauth".into()]];

        // Before any call, build_request has no token to add.
        assert_eq!(
            f.build_request(&route, &args(json!({"petId": 1})))
                .expect("build")
                .header("authorization"),
            None
        );

        let r = f.call(&route, &args(json!({"petId": 1}))).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        assert_eq!(
            token_calls.load(Ordering::SeqCst),
            2,
            "fetched, then refreshed after the 401"
        );
        let r = f.call(&route, &args(json!({"petId": 2}))).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        assert_eq!(token_calls.load(Ordering::SeqCst), 2, "cached token reused");
        assert_eq!(
            f.build_request(&route, &args(json!({"petId": 1})))
                .expect("build")
                .header("authorization"),
            Some("Bearer tok2")
        );

        let reqs = seen.lock().expect("lock").clone();
        let token_req = reqs
            .iter()
            .find(|r| r.starts_with("POST /oauth/token"))
            .expect("token request");
        assert!(
            token_req
                .to_ascii_lowercase()
                .contains("content-type: application/x-www-form-urlencoded\r\n")
        );
        assert!(
            token_req.ends_with("\r\n\r\ngrant_type=client_credentials&client_id=my-client&client_secret=cl1ent-s3cret&scope=read+write"),
            "{token_req}"
        );
        assert_eq!(
            reqs.iter()
                .filter(|r| r.starts_with("GET /api/pets/"))
                .count(),
            3
        );
    }

    /// A per-caller provider for tests: `upstream-for-<subject>-v<n>` for the bearer scheme
    /// (`n` grows with each rejection), nothing for other schemes, an error for `locked-out`.
    struct PerCaller {
        version: Mutex<std::collections::HashMap<String, usize>>,
        asked: AtomicUsize,
    }

    impl CallerCredentials for PerCaller {
        fn credential<'a>(
            &'a self,
            caller: &'a Caller,
            scheme: &'a str,
        ) -> caller::CredentialFuture<'a> {
            Box::pin(async move {
                self.asked.fetch_add(1, Ordering::SeqCst);
                if scheme != "user_auth" {
                    return Ok(None);
                }
                if caller.subject == "locked-out" {
                    return Err(CallerCredentialError::new("authorize again, locked-out."));
                }
                let v = self
                    .version
                    .lock()
                    .unwrap()
                    .get(&caller.subject)
                    .copied()
                    .unwrap_or(0);
                Ok(Some(format!("upstream-for-{}-v{v}", caller.subject)))
            })
        }

        fn rejected(&self, caller: &Caller, _scheme: &str) {
            *self
                .version
                .lock()
                .unwrap()
                .entry(caller.subject.clone())
                .or_default() += 1;
        }
    }

    #[tokio::test]
    async fn per_caller_credentials_come_before_static_ones_and_are_scrubbed() {
        // The upstream echoes the Authorization header it got; refuses bob's first token.
        let (addr, seen) = serve(Arc::new(|req: &str| {
            let auth = req
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("authorization")
                        .then(|| v.trim().to_string())
                })
                .unwrap_or_default();
            if auth.ends_with("upstream-for-bob-v0") {
                return http(
                    "401 Unauthorized",
                    "application/json",
                    r#"{"error":"expired"}"#,
                );
            }
            http(
                "200 OK",
                "application/json",
                &json!({"auth": auth}).to_string(),
            )
        }))
        .await;
        let schemes = vec![
            ("user_auth".to_string(), SecurityScheme::Bearer),
            (
                "key".to_string(),
                SecurityScheme::ApiKey {
                    name: "X-API-Key".into(),
                    location: ApiKeyLocation::Header,
                },
            ),
        ];
        let mut creds = Credentials::new();
        creds.set("user_auth", "static-bearer-value".into());
        creds.set("key", "static-key-value".into());
        let f = Forwarder::new(opts(addr), schemes, creds).expect("forwarder");
        let provider = Arc::new(PerCaller {
            version: Mutex::new(std::collections::HashMap::new()),
            asked: AtomicUsize::new(0),
        });
        assert!(f.set_caller_credentials(provider.clone()));
        assert!(!f.set_caller_credentials(provider.clone()), "set once");
        let mut route = get_pet();
        route.security = vec![vec!["user_auth".into(), "key".into()]];
        let call_as = |subject: Option<&str>| {
            let caller = subject
                .map(|s| Arc::new(Caller::new(s.into(), &format!("mcp-token-of-{s}"), None)));
            let f = f.clone();
            let route = route.clone();
            async move {
                CallScope::new(Vec::new())
                    .with_caller(caller)
                    .run(async move { f.call(&route, &args(json!({"petId": 1}))).await })
                    .await
                    .0
            }
        };
        // Alice: her own credential for the bearer scheme, the static key for the other.
        let r = call_as(Some("alice")).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        let reqs = seen.lock().unwrap().clone();
        let last = reqs.last().unwrap().to_ascii_lowercase();
        assert!(
            last.contains("authorization: bearer upstream-for-alice-v0\r\n"),
            "{last}"
        );
        assert!(last.contains("x-api-key: static-key-value\r\n"), "{last}");
        // The API echoed it: scrubbed from the result like a configured secret.
        assert!(
            !text(&r).contains("upstream-for-alice") && text(&r).contains("[redacted]"),
            "{}",
            text(&r)
        );
        // No caller (stdio, no OAuth): the static credentials.
        let r = call_as(None).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        let last = seen.lock().unwrap().last().unwrap().to_ascii_lowercase();
        assert!(
            last.contains("authorization: bearer static-bearer-value\r\n"),
            "{last}"
        );
        // The provider refuses: a tool error saying what to do, and nothing is sent.
        let before = seen.lock().unwrap().len();
        let r = call_as(Some("locked-out")).await;
        assert_eq!(r.is_error, Some(true));
        assert_eq!(text(&r), "authorize again, locked-out. Nothing was sent.");
        assert_eq!(seen.lock().unwrap().len(), before);
        // The API answers 401 to bob's credential: the provider is told, asked again, and the
        // call is sent once more with the new one.
        let r = call_as(Some("bob")).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        let reqs = seen.lock().unwrap().clone();
        let bobs: Vec<String> = reqs[before..]
            .iter()
            .map(|r| r.to_ascii_lowercase())
            .collect();
        assert_eq!(bobs.len(), 2);
        assert!(bobs[0].contains("bearer upstream-for-bob-v0\r\n"));
        assert!(bobs[1].contains("bearer upstream-for-bob-v1\r\n"));
        // No MCP token ever reached the API.
        assert!(reqs.iter().all(|r| !r.contains("mcp-token-of-")));
    }

    #[tokio::test]
    async fn oauth2_token_endpoint_failure_is_reported_without_secret() {
        let (addr, _) = serve(Arc::new(|_req: &str| {
            http(
                "400 Bad Request",
                "application/json",
                r#"{"error":"invalid_client","got":"cl1ent-s3cret"}"#,
            )
        }))
        .await;
        let schemes = vec![(
            "oauth".to_string(),
            SecurityScheme::OAuth2ClientCredentials {
                token_url: "/oauth/token".into(),
                scopes: vec![],
            },
        )];
        let mut creds = Credentials::new();
        creds.set_client_credentials("oauth", "id".into(), "cl1ent-s3cret".into());
        let f = Forwarder::new(opts(addr), schemes, creds).expect("forwarder");
        let mut route = get_pet();
        route.security = vec![vec!["oauth".into()]];
        let r = f.call(&route, &args(json!({"petId": 1}))).await;
        assert_eq!(r.is_error, Some(true));
        let t = text(&r);
        assert!(
            t.starts_with("could not obtain an OAuth2 access token for security scheme `oauth`"),
            "{t}"
        );
        assert!(
            t.contains(&format!("http://{addr}/oauth/token")) && t.contains("HTTP 400 Bad Request"),
            "{t}"
        );
        assert!(!t.contains("cl1ent-s3cret"), "{t}");
    }

    /// #23 part 2: a required parameter a credential fills goes out filled, or the call is
    /// refused naming what to set; `--header` fills it too; a configured credential held back
    /// from another origin says so.
    #[test]
    fn required_credential_parameters_are_filled_or_refused() {
        let mut route = get_pet();
        route.credential_params = vec![CredentialParam {
            name: "X-Api-Key".into(),
            location: ApiKeyLocation::Header,
            required: true,
        }];
        let a = args(json!({"petId": 1}));
        let base = || ForwardOptions::new(Url::parse("http://api.test/v1").expect("url"));
        let f = Forwarder::new(base(), key_scheme(), Credentials::new()).expect("forwarder");
        let e = f.build_request(&route, &a).expect_err("refused");
        assert_eq!(
            e.message,
            "The API requires the header `X-Api-Key`, which the credential of security scheme `key` fills, and none is configured: set OPENAPI_MCP_KEY (or start the server with --auth SCHEME=VALUE). Nothing was sent."
        );
        let mut o = base();
        o.static_headers = vec![("x-api-key".into(), "STATIC".into())];
        let f = Forwarder::new(o, key_scheme(), Credentials::new()).expect("forwarder");
        let built = f.build_request(&route, &a).expect("static header fills it");
        assert_eq!(built.header("X-Api-Key"), Some("STATIC"));
        let mut creds = Credentials::new();
        creds.set("key", "K".into());
        let f = Forwarder::new(base(), key_scheme(), creds).expect("forwarder");
        let built = f.build_request(&route, &a).expect("credential fills it");
        assert_eq!(built.header("X-Api-Key"), Some("K"));
        route.server = Some("https://elsewhere.test/v1".into());
        let e = f.build_request(&route, &a).expect_err("held back");
        assert!(
            e.message
                .contains("credentials are not sent to https://elsewhere.test"),
            "{}",
            e.message
        );
        // Optional: sent without.
        route.credential_params[0].required = false;
        route.server = None;
        let f = Forwarder::new(base(), key_scheme(), Credentials::new()).expect("forwarder");
        assert!(f.build_request(&route, &a).is_ok());
    }

    #[test]
    fn call_future_is_send() {
        fn assert_send<T: Send>(_: &T) {}
        let f = Forwarder::new(
            ForwardOptions::new(Url::parse("http://127.0.0.1:1").expect("url")),
            vec![],
            Credentials::new(),
        )
        .expect("forwarder");
        let route = get_pet();
        let a = Map::new();
        let fut = f.call(&route, &a);
        assert_send(&fut);
    }

    #[test]
    fn options_and_constructor_checks() {
        let o = ForwardOptions::new(Url::parse("https://api.example.com").expect("url"));
        assert_eq!(o.timeout, Duration::from_secs(30));
        assert_eq!(o.max_response_bytes, 1 << 20);
        assert_eq!(o.retries, 0);
        assert!(o.user_agent.starts_with("openapi-mcp/"));
        let mut bad = o.clone();
        bad.static_headers = vec![("X-Bad".into(), "a\r\nb: secret".into())];
        let e = Forwarder::new(bad, vec![], Credentials::new()).expect_err("bad header");
        assert!(!e.to_string().contains("secret"), "{e}");
        let ftp = ForwardOptions::new(Url::parse("ftp://x/").expect("url"));
        assert!(Forwarder::new(ftp, vec![], Credentials::new()).is_err());
        assert_eq!(backoff(0), Duration::from_millis(100));
        assert_eq!(backoff(3), Duration::from_millis(800));
        assert_eq!(backoff(20), Duration::from_secs(2));
        let mut h = http::HeaderMap::new();
        h.insert(header::RETRY_AFTER, http::HeaderValue::from_static("120"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(5)));
    }
}
