//! The one serving entry point: [`ServeArgs`] (every serving option, a clap `Args` struct with the
//! `cli` feature) and [`serve`]. `openapi-mcp proxy` and every generated server's `main.rs` run
//! exactly this, so a serving option added here reaches both by construction (a test compares
//! the two command lines).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use openapi_mcp_toolset::model::ToolSet;

use crate::confirm::Confirm;
use crate::connections::ConnectionLimits;
use crate::dynamic::ToolMode;
use crate::exit::UserError;
use crate::forward::{Credentials, ForwardError, ForwardOptions, Forwarder, ResponseMode};
use crate::oauth::OAuthOptions;
use crate::observe::{AuditLog, AuditTarget, Metrics, Observe, Readiness};
use crate::server::{Dispatcher, ListCaching, MAX_PAGE_BYTES, ProxyServer, ServerOptions};
use crate::sessions::SessionLimits;
use crate::transport::{self, HttpOptions, ServeError};

/// MCP transport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Transport {
    /// stdin/stdout (Claude Desktop, Claude Code, Cursor, VS Code launch the server).
    #[default]
    Stdio,
    /// Streamable HTTP at `/mcp`.
    Http,
}

/// Where the API's credentials come from (`--upstream-auth`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum UpstreamAuth {
    /// `--auth` and the OPENAPI_MCP_* variables, the same for every caller.
    #[default]
    Static,
    /// Each caller's token for this server, exchanged at the --oauth-issuer for one for the API
    /// (RFC 8693), for the operations' oauth2 and http bearer schemes.
    TokenExchange,
    /// Each user's own API token from the API's authorization-code flow, which the
    /// `--oauth-proxy` authorization server runs (implied by --oauth-proxy with one API).
    #[cfg_attr(feature = "cli", value(name = "oauth-proxy"))]
    OAuthProxy,
}

impl UpstreamAuth {
    /// The name on the command line and in config files.
    pub fn name(self) -> &'static str {
        match self {
            UpstreamAuth::Static => "static",
            UpstreamAuth::TokenExchange => "token-exchange",
            UpstreamAuth::OAuthProxy => "oauth-proxy",
        }
    }
}

/// How operations are exposed (`--mode`); defined by the contract, which codegen shares.
pub use openapi_mcp_toolset::model::Exposure as Mode;

/// Every option of serving a tool set: the MCP side (transport, HTTP limits and checks, paging,
/// the tool mode) and the API side (base URL, credentials, headers, timeouts, retries).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ServeArgs {
    /// MCP transport: stdio (for Claude Desktop, Claude Code, Cursor, VS Code) or Streamable HTTP.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Transport::Stdio))]
    pub transport: Transport,
    /// Address to listen on with --transport http (MCP endpoint at /mcp).
    #[cfg_attr(feature = "cli", arg(long, default_value = "127.0.0.1:8080"))]
    pub listen: SocketAddr,
    /// HTTP: no sessions, every request stands alone (for load-balanced deployments).
    #[cfg_attr(feature = "cli", arg(long))]
    pub stateless: bool,
    /// HTTP: require `Authorization: Bearer TOKEN` from MCP clients.
    #[cfg_attr(
        feature = "cli",
        arg(long, env = crate::forward::auth::AUTH_TOKEN_ENV, hide_env_values = true)
    )]
    pub auth_token: Option<String>,
    /// HTTP: be an OAuth 2.1 resource server for this authorization server (its issuer URL):
    /// every request needs a JWT access token it issued for this server (README: Authorization).
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub oauth_issuer: Option<String>,
    /// HTTP, with --oauth-issuer: this server's resource identifier, the `aud` its tokens carry
    /// (default: http://<listen address>/mcp; set the public URL behind a proxy).
    #[cfg_attr(feature = "cli", arg(long, value_name = "URI"))]
    pub oauth_audience: Option<String>,
    /// HTTP, with --oauth-issuer: the issuer's JWKS (default: `jwks_uri` of its RFC 8414 or
    /// OpenID metadata).
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub oauth_jwks_url: Option<String>,
    /// HTTP, with --oauth-issuer: check tokens (opaque ones) at this RFC 7662 introspection
    /// endpoint instead of as JWTs, authenticating with --oauth-client-id; answers are used for
    /// 30 s at most (a revoked token stops working within 30 s).
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub oauth_introspection_url: Option<String>,
    /// This server's client id at the --oauth-issuer (for --oauth-introspection-url and
    /// --upstream-auth token-exchange); its secret is read from OPENAPI_MCP_OAUTH_CLIENT_SECRET.
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID"))]
    pub oauth_client_id: Option<String>,
    /// Where the API's credentials come from: static (--auth and OPENAPI_MCP_* variables, shared
    /// by every caller), token-exchange (HTTP with --oauth-issuer and --oauth-client-id: each
    /// caller's token is exchanged at the issuer, RFC 8693, for a token for the API, sent for the
    /// operations' oauth2 and http bearer schemes; the caller's own token never reaches the API)
    /// or oauth-proxy (each user's own API token, with --oauth-proxy). With `apis:` in a config
    /// file, the default of the APIs whose entry does not say.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = UpstreamAuth::Static))]
    pub upstream_auth: UpstreamAuth,
    /// With --upstream-auth token-exchange: the API the exchanged tokens are for, sent as
    /// `resource` when an absolute URI, else as `audience` (default: the base URL's origin).
    #[cfg_attr(feature = "cli", arg(long, value_name = "URI"))]
    pub token_exchange_audience: Option<String>,
    /// HTTP, with --oauth-issuer: tools/list shows only the tools the caller's token has the
    /// scopes for (a call to any other still gets the 403 scope challenge).
    #[cfg_attr(feature = "cli", arg(long))]
    pub hide_unauthorized_tools: bool,
    /// HTTP: be the OAuth authorization server of MCP clients at this public base URL (e.g.
    /// https://mcp.example.com; MCP at /mcp), and send each user through the API's own
    /// authorization-code flow from the spec; each call carries that user's API token
    /// (README: OAuth proxy). Needs --upstream-client-id and OPENAPI_MCP_STORE_KEY.
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub oauth_proxy: Option<String>,
    /// With --oauth-proxy: the spec's oauth2 scheme whose authorizationCode flow is run
    /// (default: the only one).
    #[cfg_attr(feature = "cli", arg(long, value_name = "SCHEME"))]
    pub oauth_proxy_scheme: Option<String>,
    /// With --oauth-proxy: this server's client id at the API's authorization server (its
    /// secret in OPENAPI_MCP_UPSTREAM_CLIENT_SECRET); register {URL}/oauth/callback there as
    /// the redirect URI.
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID"))]
    pub upstream_client_id: Option<String>,
    /// With --oauth-proxy: where clients, sign-ins and users' API tokens (encrypted) are kept:
    /// sqlite:PATH (default: oauth-proxy.sqlite3 in $OPENAPI_MCP_DATA_DIR, else
    /// $XDG_DATA_HOME/openapi-mcp, else ~/.local/share/openapi-mcp), or
    /// redis://[:PASSWORD@]HOST[:PORT][/DB] (rediss://…[?ca=CA.pem] for TLS) or
    /// postgres://USER:PASSWORD@HOST[:PORT]/DB[?sslmode=verify-full[&sslrootcert=CA.pem]],
    /// shared by instances on several hosts.
    #[cfg_attr(feature = "cli", arg(long, value_name = "STORE"))]
    pub oauth_store: Option<String>,
    /// With --oauth-proxy: the only hosts clients may send their users back to (redirect
    /// URIs), comma-separated or repeated: host names, *.domain for its subdomains, IP addresses
    /// (127.0.0.1, ::1), or an app scheme with its colon (cursor:). Default: any https host,
    /// http to this machine, or an app scheme.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "HOSTS", value_delimiter = ',')
    )]
    pub oauth_proxy_redirect_hosts: Vec<String>,
    /// HTTP: also accept this Host header (DNS-rebinding protection; loopback names are always accepted).
    #[cfg_attr(feature = "cli", arg(long))]
    pub allowed_host: Vec<String>,
    /// HTTP: also accept requests from this browser Origin (e.g. https://app.example.com).
    #[cfg_attr(feature = "cli", arg(long))]
    pub allowed_origin: Vec<String>,
    /// HTTP: pass this header of the MCP client's request on to the API (e.g. Authorization, for
    /// per-user tokens); it replaces a credential in the same header. Repeatable. Nothing of the
    /// client's request is forwarded otherwise.
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME", value_parser = parse_header_name))]
    pub forward_header: Vec<String>,
    /// HTTP: largest accepted MCP request body, in bytes.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 4 * 1024 * 1024))]
    pub max_request_bytes: usize,
    /// HTTP: at most N requests per second per MCP client (a session this server issued, else
    /// its IP address), with bursts of N; beyond that, HTTP 429 with Retry-After. Default:
    /// unlimited.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))
    )]
    pub rate_limit: Option<u32>,
    /// HTTP: open connections at most (kept under half the open-files limit); beyond, new
    /// connections wait in the listen backlog. A request's headers must arrive within 10 s, and
    /// an idle keep-alive connection closes after 10 s.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = ConnectionLimits::default().max))]
    pub max_connections: usize,
    /// HTTP: live sessions at most; beyond, `initialize` gets HTTP 503. Sessions never used after
    /// their `initialize` close after 30 s, idle ones after 5 minutes.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = SessionLimits::default().max))]
    pub max_sessions: usize,
    /// HTTP: live sessions at most per client IP address; beyond, `initialize` gets HTTP 429.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = SessionLimits::default().per_client))]
    pub max_sessions_per_client: usize,

    /// Base URL of the API (default: the spec's first server).
    #[cfg_attr(feature = "cli", arg(long))]
    pub base_url: Option<String>,
    /// Also send credentials to this origin (scheme://host[:port]). Credentials go to the base
    /// URL's origin, and, without --base-url, to the spec's operation-level servers; requests to
    /// any other origin go without them. Repeatable.
    #[cfg_attr(feature = "cli", arg(long, value_name = "ORIGIN"))]
    pub credential_origin: Vec<String>,
    /// Credential for a security scheme: SCHEME=VALUE (basic: SCHEME=user:pass). Prefer environment variables.
    #[cfg_attr(feature = "cli", arg(long, value_name = "SCHEME=VALUE"))]
    pub auth: Vec<String>,
    /// Static header sent with every API request: 'Name: value'.
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME: VALUE"))]
    pub header: Vec<String>,
    /// Upstream request timeout, in seconds (more than 0, at most a day).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 30.0, value_parser = parse_timeout, allow_negative_numbers = true))]
    pub timeout: f64,
    /// Upstream calls in flight at once.
    #[cfg_attr(feature = "cli", arg(long))]
    pub max_concurrency: Option<usize>,
    /// Retries of idempotent calls on connection errors and 502/503/504, with backoff. 429 and
    /// 503 answers are retried at least 3 times, waiting as their Retry-After asks (or with
    /// jittered backoff), as long as the wait fits in --timeout; the result says so.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub retries: u32,
    /// Also retry non-idempotent calls (POST, PATCH) on 429/503 and with --retries (a write the
    /// API may have carried out is otherwise never repeated).
    #[cfg_attr(feature = "cli", arg(long))]
    pub retry_writes: bool,
    /// Largest response body returned to the client; longer bodies are cut with a note.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1024 * 1024))]
    pub max_response_bytes: usize,
    /// JSON results: compact (nulls, empty values and hypermedia links such as `*_url` and
    /// `_links` dropped, minified) or full (as the API sent them). A `_select` (JMESPath)
    /// argument and the --max-response-bytes cut at item boundaries apply to both.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = ResponseMode::Compact))]
    pub response: ResponseMode,
    /// Tools per tools/list page (default: all in one page, unless the list is over 8 MiB:
    /// clients on the TypeScript SDK drop stdio messages over 10 MiB, so larger lists are served
    /// in pages of at most 8 MiB).
    #[cfg_attr(feature = "cli", arg(long))]
    pub page_size: Option<usize>,
    /// How operations are exposed: one tool each (tools), only three discovery tools
    /// search_operations / describe_operation / call_operation (dynamic, for large APIs; see
    /// `openapi-mcp tools --stats`), pinned operations as tools plus the discovery tools for
    /// the rest (hybrid, with --pin), or search_operations / describe_operation (TypeScript
    /// declarations) / execute, which runs a JavaScript script against an `api` object of the
    /// operations in an embedded sandbox (code).
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Mode::Tools))]
    pub mode: Mode,
    /// With --mode hybrid: serve operations whose tool name, operationId or tag matches this glob
    /// as normal tools (repeatable, comma-separated).
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB", value_delimiter = ','))]
    pub pin: Vec<String>,
    /// Ask the user before a call is sent: of destructive tools (DELETE, PUT), of every write
    /// (not read-only), or of none. The question goes through the MCP client (elicitation); a
    /// client that cannot ask gets an error and nothing is sent. Servers behind one load
    /// balancer need one key for 2026-era confirmations: OPENAPI_MCP_CONFIRM_KEY (32 bytes or
    /// more; a key of the process otherwise).
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Confirm::None))]
    pub confirm: Confirm,
    /// Follow a `202 Accepted` (Operation-Location, Azure-AsyncOperation, Location) to its end
    /// within --timeout through the GET tool that reads the status URL, with progress
    /// notifications meanwhile; without it the result names that follow-up call.
    #[cfg_attr(feature = "cli", arg(long))]
    pub poll: bool,

    /// Serve Prometheus metrics at http://ADDR/metrics (calls by tool and outcome, latencies,
    /// in-flight calls, bytes to and from the API, reloads, auth failures). Its own listener, not
    /// the MCP port's; with the --listen address itself, /metrics is on the MCP port behind
    /// --auth-token. Default: no metrics.
    #[cfg_attr(feature = "cli", arg(long, value_name = "ADDR"))]
    pub metrics_listen: Option<SocketAddr>,
    /// Write one JSON line per tool call to FILE (appended; reopened on SIGHUP), or to standard
    /// output with `-` (HTTP transport only: over stdio, stdout is the MCP channel). Time,
    /// request id, caller, tool, operation, method and path template, status, latency, bytes,
    /// outcome; never argument values or secrets.
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE|-"))]
    pub audit_log: Option<String>,
    /// HTTP: /readyz answers 503 until every API server (the base URL and operation-level
    /// servers) answered a HEAD request (any status; no credentials sent; 5 s timeout, retried
    /// every second).
    #[cfg_attr(feature = "cli", arg(long))]
    pub ready_check: bool,
    /// With --mode code: wall time of one `execute` script, API calls included, in seconds
    /// (more than 0, at most an hour).
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = parse_code_timeout, allow_negative_numbers = true))]
    pub code_timeout: f64,
    /// With --mode code: JavaScript heap of one script, in MiB.
    #[cfg_attr(feature = "cli", arg(long, value_name = "MIB", default_value_t = 64, value_parser = clap::value_parser!(u32).range(4..=4096)))]
    pub code_memory: u32,
    /// With --mode code: API calls one script may make (each validated and sent like a tool
    /// call). The script's result is capped by --max-response-bytes.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000)))]
    pub code_max_calls: u32,
}

/// The environment variable holding the key that seals 2026-era confirmations (defined beside
/// the server's other variables, [`crate::forward::auth::SERVER_ENV`]).
pub use crate::forward::auth::CONFIRM_KEY_ENV;

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            transport: Transport::Stdio,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            stateless: false,
            auth_token: None,
            oauth_issuer: None,
            oauth_audience: None,
            oauth_jwks_url: None,
            oauth_introspection_url: None,
            oauth_client_id: None,
            upstream_auth: UpstreamAuth::Static,
            token_exchange_audience: None,
            hide_unauthorized_tools: false,
            oauth_proxy: None,
            oauth_proxy_scheme: None,
            upstream_client_id: None,
            oauth_store: None,
            oauth_proxy_redirect_hosts: Vec::new(),
            allowed_host: Vec::new(),
            allowed_origin: Vec::new(),
            forward_header: Vec::new(),
            max_request_bytes: 4 * 1024 * 1024,
            rate_limit: None,
            max_sessions: SessionLimits::default().max,
            max_sessions_per_client: SessionLimits::default().per_client,
            credential_origin: Vec::new(),
            max_connections: ConnectionLimits::default().max,
            base_url: None,
            auth: Vec::new(),
            header: Vec::new(),
            timeout: 30.0,
            max_concurrency: None,
            retries: 0,
            retry_writes: false,
            max_response_bytes: 1024 * 1024,
            response: ResponseMode::Compact,
            page_size: None,
            mode: Mode::Tools,
            pin: Vec::new(),
            confirm: Confirm::None,
            poll: false,
            metrics_listen: None,
            audit_log: None,
            ready_check: false,
            code_timeout: 30.0,
            code_memory: 64,
            code_max_calls: 50,
        }
    }
}

/// Longest accepted `--timeout` (a day): beyond it a call is not "timed", and very large values
/// overflow the clock.
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// `--timeout` as a duration, or why it is not one (not a number, not finite, not more than 0,
/// or over [`MAX_TIMEOUT_SECS`]).
pub fn timeout_duration(secs: f64) -> Result<Duration, UserError> {
    if secs.is_finite() && secs > 0.0 && secs <= MAX_TIMEOUT_SECS {
        // At least a millisecond: a shorter timeout cannot reach any API.
        Ok(Duration::from_secs_f64(secs.max(0.001)))
    } else {
        Err(UserError::msg(format!(
            "--timeout {secs} is not a timeout: give seconds, more than 0 and at most {MAX_TIMEOUT_SECS} (a day)"
        )))
    }
}

/// Longest `--code-timeout` (an hour).
pub const MAX_CODE_TIMEOUT_SECS: f64 = 3600.0;

/// `--code-timeout` as a duration, or why it is not one.
pub fn code_timeout_duration(secs: f64) -> Result<Duration, UserError> {
    if secs.is_finite() && secs > 0.0 && secs <= MAX_CODE_TIMEOUT_SECS {
        Ok(Duration::from_secs_f64(secs.max(0.001)))
    } else {
        Err(UserError::msg(format!(
            "--code-timeout {secs} is not a time limit: give seconds, more than 0 and at most {MAX_CODE_TIMEOUT_SECS} (an hour)"
        )))
    }
}

#[cfg(feature = "cli")]
fn parse_code_timeout(s: &str) -> Result<f64, UserError> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| UserError::msg(format!("`{s}` is not a number of seconds")))?;
    code_timeout_duration(secs).map(|_| secs)
}

#[cfg(feature = "cli")]
fn parse_timeout(s: &str) -> Result<f64, UserError> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| UserError::msg(format!("`{s}` is not a number of seconds")))?;
    timeout_duration(secs).map(|_| secs)
}

/// A `--forward-header` value that is not an HTTP header name.
#[cfg(feature = "cli")]
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a valid HTTP header name")]
struct BadHeaderName(String, #[source] http::header::InvalidHeaderName);

#[cfg(feature = "cli")]
fn parse_header_name(s: &str) -> Result<String, BadHeaderName> {
    http::HeaderName::from_bytes(s.trim().as_bytes())
        .map(|h| h.as_str().to_string())
        .map_err(|e| BadHeaderName(s.to_string(), e))
}

/// Why serving could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The options or the tool set do not allow serving (exit code 1).
    #[error(transparent)]
    Input(#[from] UserError),
    #[error("setting up the HTTP client")]
    Client(#[source] ForwardError),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error("HTTP server task")]
    Task(#[source] tokio::task::JoinError),
}

impl StartError {
    /// The error to report: a user error unwrapped (so [`crate::exit::ExitStatus::of`] sees it),
    /// anything else as it is.
    pub fn into_error(self) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        match self {
            StartError::Input(e) => Box::new(e),
            other => Box::new(other),
        }
    }
}

impl ServeArgs {
    /// The origins besides the base URL's that receive credentials: `--credential-origin`, and,
    /// when the base URL is the spec's own (no `--base-url`), the spec's operation-level servers
    /// (the spec names them as the API's hosts). With `--base-url` (a mock, staging), operation
    /// servers elsewhere get requests without credentials, and start-up says so.
    ///
    /// In a server of several APIs (`api` is the entry's name) a credential goes only to its own
    /// API's origin: the base URL and the entry's `credential-origin` list. An operation-level
    /// server on any other host (another API's base URL or not) gets requests without this API's
    /// credentials, and start-up says which origin to add. `others` are the other APIs' base URL
    /// origins, named as such in that warning.
    fn credential_origins(
        &self,
        set: &ToolSet,
        base: &url::Url,
        others: &[String],
        api: Option<&str>,
    ) -> Result<Vec<String>, UserError> {
        let mut origins = Vec::new();
        for o in &self.credential_origin {
            let u = url::Url::parse(o)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
                .ok_or_else(|| {
                    UserError::msg(format!(
                        "--credential-origin {o:?} is not an origin like https://api.example.com"
                    ))
                })?;
            origins.push(u.origin().ascii_serialization());
        }
        let base_origin = base.origin().ascii_serialization();
        let mut elsewhere: Vec<(String, usize)> = Vec::new();
        for t in &set.tools {
            let Some(server) = t.route.server.as_deref() else {
                continue;
            };
            let Ok(u) = base.join(server) else { continue };
            let origin = u.origin().ascii_serialization();
            if origin == base_origin || origins.contains(&origin) {
                continue;
            }
            match elsewhere.iter_mut().find(|(o, _)| *o == origin) {
                Some((_, n)) => *n += 1,
                None => elsewhere.push((origin, 1)),
            }
        }
        let of_api = api.map(|a| format!("API {a}: ")).unwrap_or_default();
        for (origin, n) in elsewhere {
            if others.contains(&origin) {
                tracing::warn!(
                    "{of_api}{n} operation(s) are served from {origin} (their own `servers`), another API's base URL: they are sent without this API's credentials; add its credential-origin {origin} to send them"
                );
            } else if api.is_some() {
                // A server of several APIs: a credential goes to its own API's origin only
                // (the base URL and the entry's credential-origin list), never to another host
                // the spec happens to name.
                tracing::warn!(
                    "{of_api}{n} operation(s) are served from {origin} (their own `servers`), not from this API's base URL: they are sent without its credentials; add its credential-origin {origin} to send them"
                );
            } else if self.base_url.is_none() {
                origins.push(origin);
            } else {
                tracing::warn!(
                    "{of_api}{n} operation(s) are served from {origin} (their own `servers`), not from --base-url: they are sent without credentials; add --credential-origin {origin} to send them"
                );
            }
        }
        Ok(origins)
    }

    /// Refuses options that would leak the HTTP gate's credential: with `--auth-token`, the
    /// client's `Authorization` header *is* the gate token, so `--forward-header Authorization`
    /// would send it to the API (replacing the API's own credential, and echoed back to the model
    /// by any API that reflects headers).
    pub fn check_gate(&self) -> Result<(), UserError> {
        self.check_oauth()?;
        if self.auth_token.is_some()
            && self
                .forward_header
                .iter()
                .any(|h| h.trim().eq_ignore_ascii_case("authorization"))
        {
            return Err(UserError::msg(
                "--forward-header Authorization cannot be combined with --auth-token: the clients' Authorization header carries the --auth-token secret, which would be sent to the API; forward a different header for per-user API credentials (e.g. --forward-header X-Api-Token)",
            ));
        }
        Ok(())
    }

    /// `--oauth-*`: an issuer with an http(s) URL, not with `--auth-token`, never passing the
    /// client's token on to the API (MCP forbids token passthrough).
    fn check_oauth(&self) -> Result<(), UserError> {
        self.check_oauth_proxy()?;
        if self.upstream_auth == UpstreamAuth::OAuthProxy && self.oauth_proxy.is_none() {
            return Err(UserError::msg(
                "--upstream-auth oauth-proxy needs --oauth-proxy URL (this server's public URL, where MCP clients authorize)",
            ));
        }
        let exchange = self.upstream_auth == UpstreamAuth::TokenExchange;
        if self.token_exchange_audience.is_some() && !exchange {
            return Err(UserError::msg(
                "--token-exchange-audience is for --upstream-auth token-exchange",
            ));
        }
        if exchange && (self.oauth_issuer.is_none() || self.transport != Transport::Http) {
            return Err(UserError::msg(
                "--upstream-auth token-exchange exchanges each caller's OAuth token: it needs --transport http and --oauth-issuer (and --oauth-client-id)",
            ));
        }
        if exchange && self.oauth_client_id.is_none() {
            return Err(UserError::msg(
                "--upstream-auth token-exchange needs --oauth-client-id (and its secret in OPENAPI_MCP_OAUTH_CLIENT_SECRET): this server authenticates at the issuer's token endpoint to exchange tokens",
            ));
        }
        let Some(issuer) = &self.oauth_issuer else {
            if self.oauth_proxy.is_some() {
                return Ok(());
            }
            if self.oauth_audience.is_some()
                || self.oauth_jwks_url.is_some()
                || self.oauth_introspection_url.is_some()
                || self.hide_unauthorized_tools
            {
                return Err(UserError::msg(
                    "--oauth-audience, --oauth-jwks-url, --oauth-introspection-url and --hide-unauthorized-tools need --oauth-issuer",
                ));
            }
            if self.oauth_client_id.is_some() {
                return Err(UserError::msg(
                    "--oauth-client-id is this server's client at the --oauth-issuer: give --oauth-issuer (with --oauth-introspection-url or --upstream-auth token-exchange)",
                ));
            }
            return Ok(());
        };
        if self.oauth_introspection_url.is_some() && self.oauth_jwks_url.is_some() {
            return Err(UserError::msg(
                "--oauth-jwks-url and --oauth-introspection-url are two ways to check tokens (JWTs against the issuer's keys, or any token at the introspection endpoint): choose one",
            ));
        }
        if self.oauth_introspection_url.is_some() && self.oauth_client_id.is_none() {
            return Err(UserError::msg(
                "--oauth-introspection-url needs --oauth-client-id (and its secret in OPENAPI_MCP_OAUTH_CLIENT_SECRET): the introspection endpoint answers authenticated clients only (RFC 7662)",
            ));
        }
        for (flag, v) in [
            ("--oauth-issuer", Some(issuer)),
            ("--oauth-audience", self.oauth_audience.as_ref()),
            ("--oauth-jwks-url", self.oauth_jwks_url.as_ref()),
            (
                "--oauth-introspection-url",
                self.oauth_introspection_url.as_ref(),
            ),
        ] {
            if let Some(v) = v
                && !url::Url::parse(v).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
            {
                return Err(UserError::msg(format!(
                    "{flag} {v:?} is not an http(s) URL"
                )));
            }
        }
        if self.auth_token.is_some() {
            return Err(UserError::msg(
                "--oauth-issuer and --auth-token are two ways to guard the HTTP transport: choose one",
            ));
        }
        if self
            .forward_header
            .iter()
            .any(|h| h.trim().eq_ignore_ascii_case("authorization"))
        {
            return Err(UserError::msg(
                "--forward-header Authorization cannot be combined with --oauth-issuer: the clients' Authorization header carries their token for this server, which must never reach the API",
            ));
        }
        Ok(())
    }

    /// `--oauth-*` as the HTTP transport takes them (`None`: no OAuth). The client secret comes
    /// from [`crate::oauth::CLIENT_SECRET_ENV`].
    pub fn oauth_options(&self) -> Result<Option<OAuthOptions>, UserError> {
        let Some(issuer) = self.oauth_issuer.clone() else {
            return Ok(None);
        };
        let introspection = match &self.oauth_introspection_url {
            None => None,
            Some(url) => Some(crate::oauth::introspect::Introspection {
                url: url.clone(),
                client: self.oauth_client()?,
                ttl: crate::oauth::introspect::CACHE_TTL,
            }),
        };
        Ok(Some(OAuthOptions {
            issuer,
            audience: self.oauth_audience.clone().unwrap_or_default(),
            jwks_url: self.oauth_jwks_url.clone(),
            hide_unauthorized_tools: self.hide_unauthorized_tools,
            scopes_supported: Vec::new(),
            introspection,
            jwks: None,
        }))
    }

    /// `--upstream-auth token-exchange`: its provider of per-caller credentials for `forwarder`'s
    /// schemes (`None`: static credentials).
    fn token_exchange(
        &self,
        forwarder: &Forwarder,
    ) -> Result<Option<crate::oauth::exchange::TokenExchange>, UserError> {
        if self.upstream_auth != UpstreamAuth::TokenExchange {
            return Ok(None);
        }
        let issuer = self
            .oauth_issuer
            .clone()
            .ok_or_else(|| UserError::msg("--upstream-auth token-exchange needs --oauth-issuer"))?;
        let audience = match &self.token_exchange_audience {
            Some(a) if !a.trim().is_empty() => a.trim().to_string(),
            Some(_) => return Err(UserError::msg("--token-exchange-audience is empty")),
            None => forwarder.options().base_url.origin().ascii_serialization(),
        };
        let exchange = crate::oauth::exchange::TokenExchange::new(
            crate::oauth::exchange::ExchangeOptions {
                issuer,
                client: self.oauth_client()?,
                audience,
                token_endpoint: None,
            },
            forwarder.schemes(),
        );
        if exchange.schemes().is_empty() {
            tracing::warn!(
                "--upstream-auth token-exchange: the spec declares no oauth2, openIdConnect or http bearer scheme, so no exchanged token is ever sent"
            );
        }
        Ok(Some(exchange))
    }

    /// `--oauth-client-id` with its secret from the environment.
    fn oauth_client(&self) -> Result<crate::oauth::ClientAuth, UserError> {
        use crate::oauth::CLIENT_SECRET_ENV;
        let id = self.oauth_client_id.clone().ok_or_else(|| {
            UserError::msg(
                "--oauth-client-id is needed (this server's client at the --oauth-issuer)",
            )
        })?;
        let secret = std::env::var(CLIENT_SECRET_ENV)
            .ok()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                UserError::msg(format!(
                    "--oauth-client-id {id} needs its secret in {CLIENT_SECRET_ENV}"
                ))
            })?;
        Ok(crate::oauth::ClientAuth::new(id, secret))
    }

    /// `--oauth-proxy` and its options: HTTP only, not with another gate, never passing the
    /// client's token on.
    fn check_oauth_proxy(&self) -> Result<(), UserError> {
        if self.oauth_proxy.is_none() {
            if self.oauth_proxy_scheme.is_some()
                || self.upstream_client_id.is_some()
                || self.oauth_store.is_some()
                || !self.oauth_proxy_redirect_hosts.is_empty()
            {
                return Err(UserError::msg(
                    "--oauth-proxy-scheme, --upstream-client-id, --oauth-store and --oauth-proxy-redirect-hosts need --oauth-proxy",
                ));
            }
            return Ok(());
        }
        let clash = if self.oauth_issuer.is_some() {
            Some("--oauth-issuer (this server is the issuer)")
        } else if self.auth_token.is_some() {
            Some("--auth-token")
        } else if self.oauth_jwks_url.is_some() {
            Some("--oauth-jwks-url (the proxy signs its own tokens)")
        } else if self.oauth_introspection_url.is_some() {
            Some("--oauth-introspection-url (the proxy checks its own tokens)")
        } else if self.oauth_client_id.is_some() {
            Some(
                "--oauth-client-id (the client id at the API's authorization server is --upstream-client-id)",
            )
        } else if self.transport != Transport::Http {
            Some("--transport stdio (it is an HTTP server)")
        } else if self
            .forward_header
            .iter()
            .any(|h| h.trim().eq_ignore_ascii_case("authorization"))
        {
            Some("--forward-header Authorization (the client's token must never reach the API)")
        } else {
            None
        };
        match clash {
            Some(c) => Err(UserError::msg(format!(
                "--oauth-proxy cannot be combined with {c}"
            ))),
            None => Ok(()),
        }
    }

    /// The `--oauth-proxy` authorization server for `set`, opened (store, keys), when asked for.
    pub fn oauth_proxy(
        &self,
        set: &ToolSet,
        base_url: &url::Url,
    ) -> Result<Option<Arc<crate::oauth::proxy::OAuthProxy>>, UserError> {
        self.oauth_proxy_for(set, base_url, None)
    }

    /// [`ServeArgs::oauth_proxy`] for API `api` of a server of several: the upstream client's
    /// secret is read from its own variable (`OPENAPI_MCP_<API>_UPSTREAM_CLIENT_SECRET`).
    fn oauth_proxy_for(
        &self,
        set: &ToolSet,
        base_url: &url::Url,
        api: Option<&str>,
    ) -> Result<Option<Arc<crate::oauth::proxy::OAuthProxy>>, UserError> {
        use crate::oauth::proxy::{OAuthProxy, ProxyArgs, UPSTREAM_SECRET_ENV, configure};
        let Some(url) = &self.oauth_proxy else {
            return Ok(None);
        };
        let env = |k: &str| match api {
            Some(a) if k == UPSTREAM_SECRET_ENV => std::env::var(crate::multi::env_var(a, k)).ok(),
            _ => std::env::var(k).ok(),
        };
        let cfg = configure(
            ProxyArgs {
                url,
                scheme: self.oauth_proxy_scheme.as_deref(),
                client_id: self.upstream_client_id.as_deref(),
                store: self.oauth_store.as_deref(),
                audience: self.oauth_audience.as_deref(),
                redirect_hosts: &self.oauth_proxy_redirect_hosts,
            },
            &set.security_schemes,
            base_url,
            env,
        )
        .map_err(UserError::msg)?;
        let proxy = OAuthProxy::new(cfg).map_err(|e| UserError::msg(e.to_string()))?;
        Ok(Some(Arc::new(proxy)))
    }

    /// The key sealing 2026-era confirmations ([`CONFIRM_KEY_ENV`]), when one is set.
    pub fn confirm_key(&self) -> Result<Option<Arc<[u8]>>, UserError> {
        let Some(key) = std::env::var_os(CONFIRM_KEY_ENV) else {
            return Ok(None);
        };
        let key = key.as_encoded_bytes();
        if key.len() < 32 {
            return Err(UserError::msg(format!(
                "{CONFIRM_KEY_ENV} must be at least 32 bytes (it is {})",
                key.len()
            )));
        }
        Ok(Some(Arc::from(key)))
    }

    /// Metrics (`--metrics-listen`) and the audit log (`--audit-log`), opened; `-` (stdout) is
    /// refused over stdio, where stdout carries the MCP messages.
    pub fn observe(&self) -> Result<Observe, UserError> {
        let metrics = self.metrics_listen.map(|_| Arc::new(Metrics::new()));
        let audit = match self.audit_log.as_deref() {
            None => None,
            Some("") => {
                return Err(UserError::msg(
                    "--audit-log needs a file name, or - for standard output",
                ));
            }
            Some(path) => {
                let target = AuditTarget::parse(path);
                if target == AuditTarget::Stdout && self.transport == Transport::Stdio {
                    return Err(UserError::msg(
                        "--audit-log - writes to standard output, which carries the MCP messages over stdio: give a file (or /dev/stderr)",
                    ));
                }
                let log = AuditLog::open(target, metrics.clone()).map_err(|e| {
                    UserError::msg(format!(
                        "--audit-log {path}: cannot open it for appending ({e})"
                    ))
                })?;
                Some(log)
            }
        };
        Ok(Observe {
            metrics,
            audit,
            traces: crate::otel::enabled(),
        })
    }

    /// The API servers `--ready-check` probes: the base URL and the operation-level servers.
    fn upstreams(set: &ToolSet, base: &url::Url) -> Vec<url::Url> {
        let mut out = vec![base.clone()];
        for t in &set.tools {
            if let Some(server) = t.route.server.as_deref()
                && let Ok(u) = base.join(server)
                && !out.contains(&u)
            {
                out.push(u);
            }
        }
        out
    }

    /// `--mode` and `--pin` as the server's [`ToolMode`].
    pub fn tool_mode(&self) -> Result<ToolMode, UserError> {
        if self.mode != Mode::Hybrid && !self.pin.is_empty() {
            return Err(UserError::msg("--pin only applies to --mode hybrid"));
        }
        let mode = ToolMode::from_flags(self.mode, &self.pin).map_err(UserError::new)?;
        Ok(match mode {
            ToolMode::Code(_) => ToolMode::Code(crate::code::CodeLimits {
                timeout: code_timeout_duration(self.code_timeout)?,
                memory: (self.code_memory.clamp(4, 4096) as usize) << 20,
                max_calls: self.code_max_calls.max(1) as usize,
                max_output: self.max_response_bytes,
            }),
            other => other,
        })
    }

    /// The forwarder for `set`: base URL, credentials (environment and `--auth`), static headers,
    /// timeouts and retries. Also returns the schemes that have no credential.
    pub fn forwarder(&self, set: &ToolSet) -> Result<(Forwarder, Vec<String>), StartError> {
        let base = self.base_url(set)?;
        self.forwarder_for(set, base, None, &[])
    }

    /// The base URL for `set`: `--base-url`, else the spec's first server.
    fn base_url(&self, set: &ToolSet) -> Result<url::Url, UserError> {
        let base = match self.base_url.clone().or_else(|| set.base_url.clone()) {
            Some(b) => b,
            None => {
                return Err(UserError::msg(
                    "the spec declares no server URL: pass --base-url",
                ));
            }
        };
        url::Url::parse(&base).map_err(|e| {
            // Not parsed: shown without what may hold secrets (user info, the query).
            let safe = shown_url_text(&base);
            UserError::msg(format!(
                "invalid base URL {safe:?} (pass an absolute --base-url): {e}"
            ))
        })
    }

    /// [`ServeArgs::forwarder`] of API `api` of a server of several (credentials from its own
    /// variables, `OPENAPI_MCP_<API>_<SCHEME>`; `others`: the other APIs' base URL origins),
    /// or of the only API (`None`).
    fn forwarder_for(
        &self,
        set: &ToolSet,
        base_url: url::Url,
        api: Option<&str>,
        others: &[String],
    ) -> Result<(Forwarder, Vec<String>), StartError> {
        let var = |k: &str| match api {
            Some(a) => crate::multi::env_var(a, k),
            None => k.to_string(),
        };
        let of_api = api.map(|a| format!("API {a}: ")).unwrap_or_default();
        for (v, names) in openapi_mcp_toolset::model::ambiguous_env(&set.security_schemes) {
            tracing::warn!(
                "{of_api}security schemes {} all read {}: none of them takes a credential from the environment (one secret would go to each); set each with --auth SCHEME=VALUE",
                names.join(", "),
                var(&v)
            );
        }
        let (mut creds, reserved) =
            Credentials::from_env_as(&set.security_schemes, var, |k| std::env::var(k).ok());
        for r in reserved {
            tracing::warn!("{of_api}{r}");
        }
        for a in &self.auth {
            let Some((scheme, value)) = a.split_once('=') else {
                return Err(UserError::msg(format!(
                    "{of_api}--auth expects SCHEME=VALUE: one value has no `=` (not shown: it may be a secret)"
                ))
                .into());
            };
            if !set.security_schemes.iter().any(|(n, _)| n == scheme) {
                if crate::forward::scrub::looks_generated(scheme) {
                    return Err(UserError::msg(format!(
                        "{of_api}--auth: the spec has no security scheme by the name before `=` (not shown: it looks like a secret; --auth expects SCHEME=VALUE)"
                    ))
                    .into());
                }
                let known: Vec<&str> = set
                    .security_schemes
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect();
                return Err(UserError::msg(format!(
                    "--auth: the spec has no security scheme {scheme:?} (it has: {})",
                    known.join(", ")
                ))
                .into());
            }
            creds.set(scheme, value.to_string());
        }
        let mut static_headers = Vec::new();
        for h in &self.header {
            let Some((name, value)) = h.split_once(':') else {
                return Err(UserError::msg(format!(
                    "{of_api}--header expects 'Name: value': one value has no `:` (not shown: it may be a secret)"
                ))
                .into());
            };
            static_headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        let missing = creds.missing(&set.security_schemes);
        let mut forward_opts = ForwardOptions::new(base_url);
        forward_opts.timeout = timeout_duration(self.timeout)?;
        forward_opts.max_response_bytes = self.max_response_bytes;
        forward_opts.response = self.response;
        forward_opts.retries = self.retries;
        forward_opts.retry_writes = self.retry_writes;
        forward_opts.static_headers = static_headers;
        forward_opts.credential_origins =
            self.credential_origins(set, &forward_opts.base_url.clone(), others, api)?;
        let forwarder = Forwarder::new(forward_opts, set.security_schemes.clone(), creds)
            .map_err(StartError::Client)?;
        Ok((forwarder, missing))
    }
}

/// What differs between the servers that call [`serve`]: the proxy and each generated crate.
#[derive(Default)]
pub struct Serving {
    /// The program, for the start-up line (`openapi-mcp`, a generated crate's name).
    pub program: String,
    /// What is served, for the start-up line (the spec's path or URL, the API's title).
    pub label: String,
    /// Takes every call instead of the forwarder (a generated crate's typed handlers).
    pub dispatcher: Option<Dispatcher>,
    /// Called once the server is built, before it serves (the proxy's `--watch`).
    pub on_start: Option<OnStart>,
    /// The tool set may be replaced while serving (`--watch`): lists are cached briefly.
    pub watched: bool,
}

/// Flushes the spans still queued when serving ends, off the async workers.
struct OtelGuard(Option<crate::otel::Guard>);

impl Drop for OtelGuard {
    fn drop(&mut self) {
        if let Some(g) = self.0.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                    tokio::task::block_in_place(move || drop(g));
                }
                _ => drop(g),
            }
        }
    }
}

/// A hook run with the built server before it serves (see [`Serving::on_start`]).
pub type OnStart = Box<dyn FnOnce(&ProxyServer) + Send>;

/// Serves `set` as `args` say until the client goes away (stdio) or the process is interrupted
/// (HTTP). Start-up warnings (missing credentials, a paged tool list) go to the log, the
/// start-up line to stderr.
pub async fn serve(set: ToolSet, args: &ServeArgs, serving: Serving) -> Result<(), StartError> {
    args.check_gate()?;
    let mode = args.tool_mode()?;
    let (forwarder, mut missing) = args.forwarder(&set)?;
    if let Some(exchange) = args.token_exchange(&forwarder)? {
        // Those schemes get each caller's exchanged token: not missing.
        missing.retain(|m| !exchange.schemes().contains(m));
        forwarder.set_caller_credentials(Arc::new(exchange));
    }
    let oauth_proxy = args.oauth_proxy(&set, &forwarder.options().base_url)?;
    if let Some(p) = &oauth_proxy {
        // Its scheme gets each caller's own API token: not missing.
        missing.retain(|m| *m != p.config().scheme);
        forwarder.set_caller_credentials(Arc::clone(p) as _);
    }
    let api_at = shown_url(&forwarder.options().base_url);
    let upstreams = if args.ready_check {
        ServeArgs::upstreams(&set, &forwarder.options().base_url)
    } else {
        Vec::new()
    };
    let warnings = missing
        .iter()
        .map(|m| format!("no credentials for security scheme {m} (operations needing it will get 401/403 from the API)"))
        .collect();
    let prepared = Prepared {
        set,
        apis: Vec::new(),
        forwarders: vec![forwarder],
        warnings,
        upstreams,
        api_at: format!("API at {api_at}"),
        oauth_proxy,
        oauth_proxy_api: None,
    };
    run(prepared, mode, args, serving).await
}

/// One API of a server of several ([`serve_apis`]): its name, tool set, and its own API-side
/// options (the other serving options are the server's).
#[derive(Debug)]
pub struct ApiServing {
    /// `[a-z][a-z0-9_]*` ([`crate::multi::check_name`]), unique among the APIs.
    pub name: String,
    pub set: ToolSet,
    /// `--base-url` of this API.
    pub base_url: Option<String>,
    /// `--credential-origin` of this API.
    pub credential_origin: Vec<String>,
    /// `--auth` of this API.
    pub auth: Vec<String>,
    /// `--header` of this API.
    pub header: Vec<String>,
    /// `--token-exchange-audience` of this API (with `--upstream-auth token-exchange`).
    pub token_exchange_audience: Option<String>,
    /// `--upstream-auth` of this API (`None`: the server's, [`ServeArgs::upstream_auth`]).
    pub upstream_auth: Option<UpstreamAuth>,
    /// `--upstream-client-id` of this API (with `upstream-auth: oauth-proxy`); its secret is
    /// read from `OPENAPI_MCP_<API>_UPSTREAM_CLIENT_SECRET`.
    pub upstream_client_id: Option<String>,
    /// `--oauth-proxy-scheme` of this API (with `upstream-auth: oauth-proxy`).
    pub oauth_proxy_scheme: Option<String>,
}

/// How one API of a server of several gets its credentials, as its `apis:` entry says: what
/// [`check_api_auth`] checks (the keys it sets, not their values).
#[derive(Clone, Copy, Debug, Default)]
pub struct ApiAuth<'a> {
    pub name: &'a str,
    /// Its `upstream-auth` (`None`: the server's, [`ServeArgs::upstream_auth`]).
    pub upstream_auth: Option<UpstreamAuth>,
    pub token_exchange_audience: bool,
    pub upstream_client_id: bool,
    pub oauth_proxy_scheme: bool,
}

/// Why the APIs' credential modes cannot be served as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiAuthError {
    /// The API whose `key` it is (its index), or `None`: the server's own `key` (a default the
    /// API took, or a server-wide option).
    pub api: Option<usize>,
    /// The config key: `upstream-auth`, `oauth-proxy`, `upstream-client-id`, …
    pub key: &'static str,
    /// What is wrong, naming the API(s).
    pub message: String,
}

/// The credential modes of several APIs (`apis:`) checked together: each API is `static`,
/// `token-exchange` or `oauth-proxy` (its entry's `upstream-auth`, else the server's); at most
/// one API is in `oauth-proxy` mode (one authorization server sends a user through one API's
/// sign-in per authorization), and `--oauth-proxy URL` names none but it; `token-exchange`
/// needs the server's `--oauth-issuer` and `--oauth-client-id` and cannot be had next to the
/// oauth-proxy (which issues the callers' tokens itself); the per-mode keys only in their mode.
pub fn check_api_auth(args: &ServeArgs, apis: &[ApiAuth<'_>]) -> Result<(), ApiAuthError> {
    let mode_of = |a: &ApiAuth<'_>| a.upstream_auth.unwrap_or(args.upstream_auth);
    // The entry's own `upstream-auth`, or the server's when the API took its default.
    let mode_err = |i: usize, message: String| ApiAuthError {
        api: apis[i].upstream_auth.is_some().then_some(i),
        key: "upstream-auth",
        message,
    };
    let proxied: Vec<usize> = (0..apis.len())
        .filter(|&i| mode_of(&apis[i]) == UpstreamAuth::OAuthProxy)
        .collect();
    if let [first, second, ..] = proxied[..] {
        return Err(mode_err(
            second,
            format!(
                "APIs `{}` (apis[{first}]) and `{}` (apis[{second}]) are both upstream-auth oauth-proxy: this server is one authorization server for its MCP clients, and one authorization sends a user through one API's sign-in, so one API at most can be in oauth-proxy mode; make the other static (or serve it from a proxy of its own)",
                apis[first].name, apis[second].name
            ),
        ));
    }
    if args.oauth_proxy.is_some() && proxied.is_empty() {
        return Err(ApiAuthError {
            api: None,
            key: "oauth-proxy",
            message: "makes this server the authorization server for one API's users: set `upstream-auth: oauth-proxy` in that API's entry".into(),
        });
    }
    for (i, a) in apis.iter().enumerate() {
        let mode = mode_of(a);
        let entry = |key: &'static str, want: UpstreamAuth| ApiAuthError {
            api: Some(i),
            key,
            message: format!(
                "API `{}`: {key} is for upstream-auth {} (this API's is {})",
                a.name,
                want.name(),
                mode.name()
            ),
        };
        if a.token_exchange_audience && mode != UpstreamAuth::TokenExchange {
            return Err(entry(
                "token-exchange-audience",
                UpstreamAuth::TokenExchange,
            ));
        }
        if a.upstream_client_id && mode != UpstreamAuth::OAuthProxy {
            return Err(entry("upstream-client-id", UpstreamAuth::OAuthProxy));
        }
        if a.oauth_proxy_scheme && mode != UpstreamAuth::OAuthProxy {
            return Err(entry("oauth-proxy-scheme", UpstreamAuth::OAuthProxy));
        }
        match mode {
            UpstreamAuth::Static => {}
            UpstreamAuth::TokenExchange => {
                if let Some(&p) = proxied.first() {
                    return Err(mode_err(
                        i,
                        format!(
                            "API `{}`: token-exchange exchanges the tokens an oauth-issuer gave the callers, and API `{}` is in oauth-proxy mode, where this server issues their tokens itself: next to it, the other APIs are static",
                            a.name, apis[p].name
                        ),
                    ));
                }
                if args.transport != Transport::Http
                    || args.oauth_issuer.is_none()
                    || args.oauth_client_id.is_none()
                {
                    return Err(mode_err(
                        i,
                        format!(
                            "API `{}`: token-exchange exchanges each caller's OAuth token: it needs `transport: http`, `oauth-issuer` and `oauth-client-id` (its secret in OPENAPI_MCP_OAUTH_CLIENT_SECRET)",
                            a.name
                        ),
                    ));
                }
            }
            UpstreamAuth::OAuthProxy => {
                if args.oauth_proxy.is_none() {
                    return Err(mode_err(
                        i,
                        format!(
                            "API `{}`: oauth-proxy needs `oauth-proxy: URL` at the top level (this server's public URL, where MCP clients authorize)",
                            a.name
                        ),
                    ));
                }
                if !a.upstream_client_id {
                    return Err(mode_err(
                        i,
                        format!(
                            "API `{}`: oauth-proxy needs `upstream-client-id` in its entry: this server's client id at the API's authorization server (its secret in {})",
                            a.name,
                            crate::multi::env_var(a.name, crate::oauth::proxy::UPSTREAM_SECRET_ENV)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Serves several APIs from one server (`apis:` in a config file): each API gets its own
/// forwarder (base URL, credentials from `OPENAPI_MCP_<API>_<SCHEME>` and its own `auth`,
/// credential origins, static headers, and its own credential mode: static, token exchange
/// with its own audience, or the `--oauth-proxy` flow of one API), and every call goes through
/// its tool's API's; a per-caller credential is only ever its own API's forwarder's.
/// `args.upstream_auth` is the default of APIs that do not say; `args`' other API-side options
/// (`base_url`, `credential_origin`, `auth`, `header`, `token_exchange_audience`,
/// `upstream_client_id`, `oauth_proxy_scheme`) are not used.
pub async fn serve_apis(
    apis: Vec<ApiServing>,
    args: &ServeArgs,
    serving: Serving,
) -> Result<(), StartError> {
    // The server's own options; each API's credential mode is checked below.
    ServeArgs {
        upstream_auth: UpstreamAuth::Static,
        ..args.clone()
    }
    .check_gate()?;
    let auths: Vec<ApiAuth<'_>> = apis
        .iter()
        .map(|a| ApiAuth {
            name: &a.name,
            upstream_auth: a.upstream_auth,
            token_exchange_audience: a.token_exchange_audience.is_some(),
            upstream_client_id: a.upstream_client_id.is_some(),
            oauth_proxy_scheme: a.oauth_proxy_scheme.is_some(),
        })
        .collect();
    check_api_auth(args, &auths).map_err(|e| match e.api {
        Some(_) => UserError::msg(e.message),
        None if e.message.starts_with("API") => UserError::msg(e.message),
        None => UserError::msg(format!("--{} {}", e.key, e.message)),
    })?;
    let modes: Vec<UpstreamAuth> = apis
        .iter()
        .map(|a| a.upstream_auth.unwrap_or(args.upstream_auth))
        .collect();
    check_upstream_secret(&apis, &modes)?;
    if let Some(h) = args.forward_header.first() {
        return Err(UserError::msg(format!(
            "--forward-header {h} passes a client's header (often a per-user credential) to the API, and with several APIs (`apis:`) it would reach every one of them: run one proxy per API for it"
        ))
        .into());
    }
    let mode = args.tool_mode()?;
    let in_api = |name: &str, e: UserError| UserError::msg(format!("API `{name}`: {e}"));
    let mut bases = Vec::with_capacity(apis.len());
    for api in &apis {
        crate::multi::check_name(&api.name).map_err(UserError::msg)?;
        let api_args = ServeArgs {
            base_url: api.base_url.clone(),
            ..ServeArgs::default()
        };
        bases.push(
            api_args
                .base_url(&api.set)
                .map_err(|e| in_api(&api.name, e))?,
        );
    }
    let origins: Vec<String> = bases
        .iter()
        .map(|b| b.origin().ascii_serialization())
        .collect();
    let mut parts = Vec::with_capacity(apis.len());
    let mut forwarders = Vec::with_capacity(apis.len());
    let mut warnings = Vec::new();
    let mut upstreams = Vec::new();
    let mut api_at = Vec::new();
    let mut oauth_proxy = None;
    for (i, (api, base)) in apis.into_iter().zip(bases).enumerate() {
        let others: Vec<String> = origins
            .iter()
            .enumerate()
            .filter(|&(j, o)| j != i && *o != origins[i])
            .map(|(_, o)| o.clone())
            .collect();
        let api_args = ServeArgs {
            base_url: api.base_url.clone(),
            credential_origin: api.credential_origin.clone(),
            auth: api.auth.clone(),
            header: api.header.clone(),
            token_exchange_audience: api.token_exchange_audience.clone(),
            upstream_auth: modes[i],
            upstream_client_id: api.upstream_client_id.clone(),
            oauth_proxy_scheme: api.oauth_proxy_scheme.clone(),
            ..args.clone()
        };
        let (forwarder, mut missing) = api_args
            .forwarder_for(&api.set, base.clone(), Some(&api.name), &others)
            .map_err(|e| match e {
                StartError::Input(u) => StartError::Input(in_api(&api.name, u)),
                other => other,
            })?;
        // Each API's exchanged tokens are for its own audience (its base URL's origin, or its
        // own `token-exchange-audience`).
        if let Some(exchange) = api_args
            .token_exchange(&forwarder)
            .map_err(|e| in_api(&api.name, e))?
        {
            missing.retain(|m| !exchange.schemes().contains(m));
            forwarder.set_caller_credentials(Arc::new(exchange));
        }
        // The oauth-proxy API's users' own tokens go to its forwarder only: every other API's
        // forwarder has no per-caller credentials, so a user's token for this API never
        // reaches another.
        if modes[i] == UpstreamAuth::OAuthProxy {
            let proxy = api_args
                .oauth_proxy_for(&api.set, &base, Some(&api.name))
                .map_err(|e| in_api(&api.name, e))?
                .ok_or_else(|| {
                    in_api(
                        &api.name,
                        UserError::msg("oauth-proxy needs `oauth-proxy: URL` at the top level"),
                    )
                })?;
            missing.retain(|m| *m != proxy.config().scheme);
            forwarder.set_caller_credentials(Arc::clone(&proxy) as _);
            oauth_proxy = Some((proxy, api.name.clone()));
        }
        for m in missing {
            let vars: Vec<String> = api
                .set
                .security_schemes
                .iter()
                .filter(|(n, _)| *n == m)
                .flat_map(|(n, s)| s.env_var_names(n))
                .map(|v| crate::multi::env_var(&api.name, &v))
                .collect();
            warnings.push(format!(
                "API {}: no credentials for security scheme {m} (set {}, or `auth` in its entry; operations needing it will get 401/403 from the API)",
                api.name,
                vars.join(" or ")
            ));
        }
        if args.ready_check {
            for u in ServeArgs::upstreams(&api.set, &base) {
                if !upstreams.contains(&u) {
                    upstreams.push(u);
                }
            }
        }
        api_at.push(format!("{} at {}", api.name, shown_url(&base)));
        forwarders.push(forwarder);
        parts.push(crate::multi::ApiInfo::split(&api.name, api.set));
    }
    if let Some((_, proxied)) = &oauth_proxy {
        // The proxy's tokens carry the scopes of its API's flow only: the other APIs' operation
        // scopes (at their own authorization servers) are not asked of them.
        for (info, _) in &mut parts {
            info.token_scopes = info.name == *proxied;
        }
    }
    let infos: Vec<crate::multi::ApiInfo> = parts.iter().map(|(i, _)| i.clone()).collect();
    crate::multi::check_variables(&infos).map_err(UserError::new)?;
    let (set, apis) = crate::multi::merge(parts).map_err(UserError::new)?;
    let (oauth_proxy, oauth_proxy_api) = match oauth_proxy {
        Some((p, name)) => (Some(p), Some(name)),
        None => (None, None),
    };
    let prepared = Prepared {
        set,
        apis,
        forwarders,
        warnings,
        upstreams,
        api_at: format!("APIs: {}", api_at.join(", ")),
        oauth_proxy,
        oauth_proxy_api,
    };
    run(prepared, mode, args, serving).await
}

/// A server's tools and forwarders, ready to serve.
struct Prepared {
    /// The tool set (merged, for several APIs).
    set: ToolSet,
    /// The APIs, when there are several.
    apis: Vec<crate::multi::ApiInfo>,
    /// One per API.
    forwarders: Vec<Forwarder>,
    /// Start-up warnings (missing credentials).
    warnings: Vec<String>,
    /// What `--ready-check` probes.
    upstreams: Vec<url::Url>,
    /// Where the API (or each API) is, for the start-up line.
    api_at: String,
    /// `--oauth-proxy`'s authorization server (one API only).
    oauth_proxy: Option<Arc<crate::oauth::proxy::OAuthProxy>>,
    /// The API whose users sign in through it, when the server serves several.
    oauth_proxy_api: Option<String>,
}

/// The oauth-proxy API's upstream client secret variable (`OPENAPI_MCP_<API>_UPSTREAM_CLIENT_SECRET`)
/// must not be a credential variable of an API's scheme too (API `a_upstream`'s scheme
/// `client_secret` reads the same name): the secret would be sent to that API.
fn check_upstream_secret(apis: &[ApiServing], modes: &[UpstreamAuth]) -> Result<(), UserError> {
    for (api, _) in apis
        .iter()
        .zip(modes)
        .filter(|(_, m)| **m == UpstreamAuth::OAuthProxy)
    {
        let secret = crate::multi::env_var(&api.name, crate::oauth::proxy::UPSTREAM_SECRET_ENV);
        for other in apis {
            for (scheme, s) in &other.set.security_schemes {
                if s.env_var_names(scheme)
                    .iter()
                    .any(|v| crate::multi::env_var(&other.name, v) == secret)
                {
                    return Err(UserError::msg(format!(
                        "API `{}` (scheme {scheme}) would read {secret}, the upstream client secret of API `{}`: rename one of the APIs",
                        other.name, api.name
                    )));
                }
            }
        }
    }
    Ok(())
}

async fn run(
    prepared: Prepared,
    mode: ToolMode,
    args: &ServeArgs,
    serving: Serving,
) -> Result<(), StartError> {
    let Prepared {
        set,
        apis,
        forwarders,
        warnings,
        upstreams,
        api_at,
        oauth_proxy,
        oauth_proxy_api,
    } = prepared;
    let oauth = args.oauth_options()?;
    // OpenTelemetry before anything is observed (its exporter's blocking HTTP client is made
    // off the async workers). The guard flushes the last spans when serving ends.
    let otel = tokio::task::spawn_blocking(crate::otel::init_from_env)
        .await
        .map_err(|e| UserError::msg(format!("OpenTelemetry: {e}")))?
        .map_err(|e| UserError::msg(e.to_string()))?;
    let _otel = OtelGuard(otel);
    let observe = args.observe()?;
    let tool_count = set.tools.len();
    let probe_timeout = timeout_duration(args.timeout)?.min(Duration::from_secs(5));
    let server = ProxyServer::with_apis(
        set,
        apis,
        forwarders,
        ServerOptions {
            page_size: args.page_size,
            page_bytes: None,
            max_concurrency: args.max_concurrency,
            dispatcher: serving.dispatcher,
            forward_headers: args.forward_header.clone(),
            mode,
            list_caching: ListCaching::new(
                serving.watched,
                args.auth_token.is_some()
                    || args.oauth_issuer.is_some()
                    || args.oauth_proxy.is_some(),
            ),
            confirm: args.confirm,
            confirm_key: args.confirm_key()?,
            poll: args.poll,
            observe: observe.clone(),
        },
    );
    if let Some(audit) = &observe.audit {
        audit.reopen_on_sighup();
    }
    // /metrics on its own listener (the MCP port's only when it is the --listen address).
    // (Port 0 is "any free port": two of them are two listeners.)
    let metrics_on_mcp_port = args.transport == Transport::Http
        && args.listen.port() != 0
        && args.metrics_listen == Some(args.listen);
    let mut metrics_task = None;
    if let (Some(addr), Some(metrics)) = (args.metrics_listen, &observe.metrics)
        && !metrics_on_mcp_port
    {
        let handle = transport::start_metrics(addr, Arc::clone(metrics)).await?;
        eprintln!(
            "{}: metrics at http://{}/metrics",
            serving.program, handle.addr
        );
        metrics_task = Some(handle);
    }
    let served = server.state().tools().len();
    let tools_desc = if served == tool_count {
        format!("{tool_count} tools")
    } else {
        format!(
            "{tool_count} operations as {served} tools, --mode {}",
            args.mode.name()
        )
    };
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let list_bytes = server.state().list_bytes();
    if list_bytes > MAX_PAGE_BYTES {
        tracing::warn!(
            "the tool list is {:.1} MiB: tools/list is served in pages of at most {} MiB (clients on the TypeScript SDK drop stdio messages over 10 MiB); clients that read only the first page see part of the tools; --mode dynamic serves 3 tools, or filter operations (--include-tag, --include-path)",
            list_bytes as f64 / (1 << 20) as f64,
            MAX_PAGE_BYTES >> 20
        );
    }
    if let Some(f) = serving.on_start {
        f(&server);
    }
    let Serving { program, label, .. } = serving;
    match args.transport {
        Transport::Stdio => {
            if !args.forward_header.is_empty() {
                tracing::warn!(
                    "--forward-header has no effect over stdio (there is no client HTTP request)"
                );
            }
            if args.ready_check {
                tracing::warn!(
                    "--ready-check has no effect over stdio (/readyz is served over HTTP)"
                );
            }
            eprintln!("{program}: serving {label} ({tools_desc}) over stdio; {api_at}");
            // Over stdio, log lines stay in place: one client's calls come one at a time, and
            // waking the writer thread per call added 20-25 µs at p50 (proxy bench,
            // PROXY_BENCH_ONLY=stdio) where writing in place costs one `write`.
            transport::serve_stdio(server).await?;
        }
        Transport::Http => {
            let mut http = HttpOptions::new(args.listen);
            http.stateless = args.stateless;
            http.auth_token = args.auth_token.clone();
            http.oauth = oauth;
            if let Some(p) = &oauth_proxy {
                http.oauth = Some(OAuthOptions {
                    issuer: p.config().issuer.clone(),
                    audience: p.config().resource.clone(),
                    jwks_url: None,
                    hide_unauthorized_tools: args.hide_unauthorized_tools,
                    scopes_supported: Vec::new(),
                    introspection: None,
                    jwks: Some(p.jwks().clone()),
                });
                let of_api = oauth_proxy_api
                    .as_deref()
                    .map(|a| format!("API {a}, "))
                    .unwrap_or_default();
                eprintln!(
                    "{program}: OAuth proxy: authorization server {} ({of_api}scheme {}; register {} at the API's authorization server); store {}",
                    p.config().issuer,
                    p.config().scheme,
                    p.callback_url(),
                    p.store_description()
                );
                http.oauth_proxy = Some(Arc::clone(p));
            }
            http.allowed_hosts = args.allowed_host.clone();
            http.allowed_origins = args.allowed_origin.clone();
            http.max_body_bytes = args.max_request_bytes;
            http.rate_limit = args.rate_limit;
            http.connections.max = args.max_connections;
            http.sessions.max = args.max_sessions;
            http.sessions.per_client = args.max_sessions_per_client;
            http.observe = observe.clone();
            http.metrics_on_mcp_port = metrics_on_mcp_port;
            if args.ready_check {
                let readiness = Readiness::not_yet();
                readiness.probe(upstreams, probe_timeout);
                http.readiness = readiness;
            }
            if args.auth_token.is_none()
                && args.oauth_issuer.is_none()
                && oauth_proxy.is_none()
                && !args.listen.ip().is_loopback()
            {
                tracing::warn!(
                    "listening on {} without --auth-token: anyone who can reach this address can call the API with the configured credentials (the Host check only stops browsers' DNS rebinding; a client can send any Host)",
                    args.listen
                );
            }
            let handle = transport::start_http(server, http).await?;
            eprintln!(
                "{program}: serving {label} ({tools_desc}) over Streamable HTTP at http://{}/mcp{}; {api_at}",
                handle.addr,
                if args.stateless { " (stateless)" } else { "" }
            );
            let _queued = QueuedLogs::start();
            let shutdown = handle.shutdown.clone();
            tokio::spawn(async move {
                stop_signal().await;
                shutdown.cancel();
            });
            handle.task.await.map_err(StartError::Task)??;
        }
    }
    if let Some(m) = metrics_task {
        m.shutdown.cancel();
    }
    // The audit log's last batch is written before the process ends.
    if let Some(audit) = observe.audit.clone() {
        let _ = tokio::task::spawn_blocking(move || audit.flush(Duration::from_secs(5))).await;
    }
    Ok(())
}

/// Resolves on Ctrl-C, or on SIGTERM (what Kubernetes, systemd and `docker stop` send): the
/// HTTP server then stops taking connections and ends as on Ctrl-C.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

pub use crate::shown::{shown_url, shown_url_text};

/// A generated server: what its `main.rs` passes to [`generated_main`].
#[cfg(feature = "cli")]
pub struct Generated {
    /// The crate's name (the program name on the command line and in the start-up line).
    pub name: &'static str,
    /// `--help`'s first line.
    pub about: &'static str,
    pub version: &'static str,
    /// The API's title, for the start-up line.
    pub title: &'static str,
    /// `--mode`'s default (and `--pin`'s, for hybrid), chosen at generation.
    pub default_mode: Mode,
    pub default_pins: &'static [&'static str],
    /// The embedded tool set (`src/api.json`).
    pub tool_set: fn() -> Result<ToolSet, openapi_mcp_toolset::api_file::ApiFileError>,
    /// The crate's typed handlers.
    pub dispatcher: Option<Dispatcher>,
}

/// The command line of a generated server: `-v` and every [`ServeArgs`] option.
#[cfg(feature = "cli")]
#[derive(clap::Parser, Debug)]
pub struct GeneratedCli {
    /// More logging on stderr (-v debug, -vv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(flatten)]
    pub serve: ServeArgs,
    /// Read options from a YAML or TOML file (`.toml`): keys are the long option names, lists
    /// for repeatable options; options on the command line override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
}

#[cfg(feature = "cli")]
impl GeneratedCli {
    /// The clap command of a generated server, with its generation-time defaults.
    pub fn command_for(g: &Generated) -> clap::Command {
        use clap::CommandFactory;
        let mut cmd = GeneratedCli::command()
            .name(g.name)
            .bin_name(g.name)
            .about(g.about)
            .version(g.version)
            .mut_arg("mode", |a| a.default_value(g.default_mode.name()));
        if !g.default_pins.is_empty() {
            let pins: Vec<clap::builder::OsStr> =
                g.default_pins.iter().map(|p| (*p).into()).collect();
            cmd = cmd.mut_arg("pin", |a| a.default_values(pins));
        }
        cmd
    }
}

/// The whole `main` of a generated server: parse the command line, start logging, serve the
/// embedded tool set with the crate's handlers, and turn the outcome into an exit code.
#[cfg(feature = "cli")]
pub fn generated_main(g: Generated) -> std::process::ExitCode {
    use clap::FromArgMatches;
    let cmd = GeneratedCli::command_for(&g);
    // `--config FILE`, as `openapi-mcp proxy` has it.
    let expanded = match crate::config::expand(&cmd, &[], std::env::args_os().collect()) {
        Ok(e) => e,
        Err(e) => {
            report(&e);
            return crate::exit::ExitStatus::Failure.into();
        }
    };
    if expanded.apis.is_some() {
        let file = expanded
            .file
            .as_ref()
            .map(|f| f.display().to_string())
            .unwrap_or_default();
        eprintln!(
            "error: config file {file}: `{}` (several APIs in one server) is for `openapi-mcp proxy`; a generated server serves its own API",
            crate::config::APIS_KEY
        );
        return crate::exit::ExitStatus::Failure.into();
    }
    for w in &expanded.warnings {
        eprintln!("warning: {w}");
    }
    let matches = cmd.get_matches_from(expanded.argv);
    let cli = match GeneratedCli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let _log = init_logging(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return crate::exit::ExitStatus::Error.into();
        }
    };
    let result: Result<(), Box<dyn std::error::Error + Send + Sync>> = runtime.block_on(async {
        let set = (g.tool_set)().map_err(|e| {
            Box::new(EmbeddedToolSetError(e)) as Box<dyn std::error::Error + Send + Sync>
        })?;
        let serving = Serving {
            program: g.name.to_string(),
            label: format!("the {} API", g.title),
            dispatcher: g.dispatcher,
            on_start: None,
            watched: false,
        };
        serve(set, &cli.serve, serving)
            .await
            .map_err(StartError::into_error)
    });
    match result {
        Ok(()) => crate::exit::ExitStatus::Success.into(),
        Err(e) => report(&*e).into(),
    }
}

/// Prints `error: ` and the error with its causes on one line; returns its exit status.
pub fn report(err: &(dyn std::error::Error + 'static)) -> crate::exit::ExitStatus {
    let mut parts = vec![err.to_string()];
    let mut cur = err.source();
    while let Some(e) = cur {
        parts.push(e.to_string());
        cur = e.source();
    }
    eprintln!("error: {}", parts.join(": "));
    crate::exit::ExitStatus::of(err)
}

/// The embedded `src/api.json` of a generated server could not be read.
#[cfg(feature = "cli")]
#[derive(Debug, thiserror::Error)]
#[error("reading the embedded tool definitions (src/api.json)")]
struct EmbeddedToolSetError(#[source] openapi_mcp_toolset::api_file::ApiFileError);

/// Whether log lines go through the queue of [`init_logging`] (while serving) or are written in
/// place.
static LOGS_QUEUED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Log lines are queued from its creation (once the `serving` line is out) until it is dropped
/// (serving ended).
struct QueuedLogs;

impl QueuedLogs {
    fn start() -> Self {
        LOGS_QUEUED.store(true, std::sync::atomic::Ordering::Relaxed);
        QueuedLogs
    }
}

impl Drop for QueuedLogs {
    fn drop(&mut self) {
        LOGS_QUEUED.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Keeps the log writer's thread until it is dropped, then writes what is queued (hold it until
/// the program returns).
#[must_use = "log lines still queued are lost unless the guard lives until the program returns"]
pub struct LogGuard(#[allow(dead_code)] Option<tracing_appender::non_blocking::WorkerGuard>);

/// Logs to stderr: `info` by default (rmcp's own lines only as errors), `-v` debug, `-vv` trace;
/// `RUST_LOG` overrides.
///
/// While a server serves over HTTP ([`QueuedLogs`]), lines go through a queue to a writer thread that
/// writes each batch it finds queued in one `write` (a buffered stderr flushed when the queue is
/// empty), so a call's log line costs the serving threads no system call, and a stalled reader of
/// stderr (a full pipe, a slow log collector) never stalls a call: past 128,000 queued lines,
/// lines are dropped instead. Before that (start-up warnings, then the `serving` line printed
/// directly) and after it, lines are written in place, so they keep their order with what the
/// program prints itself.
pub fn init_logging(verbose: u8) -> LogGuard {
    use tracing_subscriber::EnvFilter;
    // rmcp's own lines (handshakes, stream ends, a warning for every error answered to a client,
    // such as an unknown tool) are noise for users at the default level; -v shows them.
    let default = match verbose {
        0 => "info,rmcp=error",
        1 => "debug,rmcp=info",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(true)
        .thread_name("openapi-mcp-log")
        .finish(std::io::BufWriter::new(std::io::stderr()));
    use tracing_subscriber::fmt::writer::MakeWriterExt as _;
    let writer = writer
        .with_filter(|_| LOGS_QUEUED.load(std::sync::atomic::Ordering::Relaxed))
        .or_else(std::io::stderr);
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init()
        .is_ok();
    LogGuard(installed.then_some(guard))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use openapi_mcp_toolset::location::Location;
    use openapi_mcp_toolset::model::{HttpMethod, Route, ToolDef};

    use super::*;

    /// A tool set whose one operation is served from `server`.
    fn set_with_server(server: &str) -> ToolSet {
        let mut route = Route::new(HttpMethod::Get, "/x");
        route.server = Some(server.to_string());
        let tool = rmcp::model::Tool::new("op", "", Arc::new(Default::default()));
        ToolSet {
            title: "T".into(),
            version: "1".into(),
            description: None,
            tag_descriptions: Vec::new(),
            base_url: Some("https://own.example/api".into()),
            security_schemes: Vec::new(),
            tools: vec![Arc::new(ToolDef::new(
                tool,
                route,
                None,
                Vec::new(),
                Location::default(),
            ))],
        }
    }

    /// The credential mode of each API of several: one oauth-proxy API at most (both named),
    /// `--oauth-proxy` naming none, token exchange next to it or without its issuer, a mode's
    /// keys in another mode; the error says which key of which entry (or the top level's).
    #[test]
    fn each_apis_credential_mode_is_checked_with_the_others() {
        let api = |name: &'static str, mode: Option<UpstreamAuth>| ApiAuth {
            name,
            upstream_auth: mode,
            upstream_client_id: mode == Some(UpstreamAuth::OAuthProxy),
            ..ApiAuth::default()
        };
        let proxy = ServeArgs {
            transport: Transport::Http,
            oauth_proxy: Some("https://mcp.example".into()),
            ..ServeArgs::default()
        };
        let exchange = ServeArgs {
            transport: Transport::Http,
            oauth_issuer: Some("https://as.example".into()),
            oauth_client_id: Some("rs".into()),
            ..ServeArgs::default()
        };
        let oauth_proxy = Some(UpstreamAuth::OAuthProxy);
        let token_exchange = Some(UpstreamAuth::TokenExchange);
        // Fine: one API through the proxy and one static; one exchanging and one static.
        assert_eq!(
            check_api_auth(&proxy, &[api("a", oauth_proxy), api("b", None)]),
            Ok(())
        );
        assert_eq!(
            check_api_auth(&exchange, &[api("a", token_exchange), api("b", None)]),
            Ok(())
        );
        let err = |args: &ServeArgs, apis: &[ApiAuth<'_>]| check_api_auth(args, apis).unwrap_err();
        let e = err(
            &proxy,
            &[api("a", oauth_proxy), api("b", None), api("c", oauth_proxy)],
        );
        assert_eq!((e.api, e.key), (Some(2), "upstream-auth"));
        assert!(
            e.message.contains("`a` (apis[0]) and `c` (apis[2])")
                && e.message.contains("one API at most"),
            "{}",
            e.message
        );
        // Both from the top-level default: the top level's key.
        let all = ServeArgs {
            upstream_auth: UpstreamAuth::OAuthProxy,
            ..proxy.clone()
        };
        let both = [
            ApiAuth {
                upstream_client_id: true,
                ..api("a", None)
            },
            ApiAuth {
                upstream_client_id: true,
                ..api("b", None)
            },
        ];
        let e = err(&all, &both);
        assert_eq!((e.api, e.key), (None, "upstream-auth"));
        let e = err(&proxy, &[api("a", None), api("b", None)]);
        assert_eq!((e.api, e.key), (None, "oauth-proxy"));
        let e = err(&exchange, &[api("a", oauth_proxy)]);
        assert_eq!((e.api, e.key), (Some(0), "upstream-auth"));
        assert!(e.message.contains("`oauth-proxy: URL`"), "{}", e.message);
        let e = err(&proxy, &[api("a", oauth_proxy), api("b", token_exchange)]);
        assert_eq!((e.api, e.key), (Some(1), "upstream-auth"));
        assert!(
            e.message.contains("API `a` is in oauth-proxy mode"),
            "{}",
            e.message
        );
        let e = err(&ServeArgs::default(), &[api("a", token_exchange)]);
        assert!(
            e.message
                .contains("needs `transport: http`, `oauth-issuer`"),
            "{}",
            e.message
        );
        let e = err(
            &proxy,
            &[ApiAuth {
                upstream_client_id: false,
                ..api("a", oauth_proxy)
            }],
        );
        assert!(
            e.message.contains("OPENAPI_MCP_A_UPSTREAM_CLIENT_SECRET"),
            "{}",
            e.message
        );
        for (key, entry) in [
            (
                "upstream-client-id",
                ApiAuth {
                    upstream_client_id: true,
                    ..api("b", None)
                },
            ),
            (
                "oauth-proxy-scheme",
                ApiAuth {
                    oauth_proxy_scheme: true,
                    ..api("b", None)
                },
            ),
            (
                "token-exchange-audience",
                ApiAuth {
                    token_exchange_audience: true,
                    ..api("b", None)
                },
            ),
        ] {
            let e = err(&proxy, &[api("a", oauth_proxy), entry]);
            assert_eq!((e.api, e.key), (Some(1), key));
            assert!(
                e.message.contains("(this API's is static)"),
                "{}",
                e.message
            );
        }
    }

    /// The oauth-proxy API's client secret variable cannot be another API's credential
    /// variable (it would be sent to that API).
    #[test]
    fn the_upstream_client_secret_is_no_other_apis_credential() {
        use openapi_mcp_toolset::model::SecurityScheme;
        let api = |name: &str, scheme: &str| {
            let mut set = set_with_server("https://own.example/api");
            set.security_schemes = vec![(scheme.to_string(), SecurityScheme::Bearer)];
            ApiServing {
                name: name.into(),
                set,
                base_url: None,
                credential_origin: Vec::new(),
                auth: Vec::new(),
                header: Vec::new(),
                token_exchange_audience: None,
                upstream_auth: None,
                upstream_client_id: None,
                oauth_proxy_scheme: None,
            }
        };
        let apis = [api("a", "bearer"), api("a_upstream", "client_secret")];
        let proxied = [UpstreamAuth::OAuthProxy, UpstreamAuth::Static];
        let err = check_upstream_secret(&apis, &proxied)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("API `a_upstream` (scheme client_secret) would read OPENAPI_MCP_A_UPSTREAM_CLIENT_SECRET, the upstream client secret of API `a`"),
            "{err}"
        );
        assert!(check_upstream_secret(&apis, &[UpstreamAuth::Static; 2]).is_ok());
        let others = [api("a", "bearer"), api("b", "client_secret")];
        assert!(check_upstream_secret(&others, &proxied).is_ok());
    }

    /// One API without --base-url: the spec's operation-level servers get credentials. In a
    /// server of several APIs, no host but the API's own base URL origin and its entry's
    /// credential origins does: not another API's base URL, not a host only the spec names.
    #[test]
    fn an_operation_server_on_another_apis_origin_gets_no_credentials() {
        let base = url::Url::parse("https://own.example/api").unwrap();
        let args = ServeArgs::default();
        let spec_host = set_with_server("https://files.own-cdn.example/v1");
        assert_eq!(
            args.credential_origins(&spec_host, &base, &[], None)
                .unwrap(),
            ["https://files.own-cdn.example"]
        );
        assert!(
            args.credential_origins(&spec_host, &base, &[], Some("own"))
                .unwrap()
                .is_empty(),
            "with apis:, a host only the API's own spec names gets no credentials"
        );
        let listed = ServeArgs {
            credential_origin: vec!["https://files.own-cdn.example".into()],
            ..ServeArgs::default()
        };
        assert_eq!(
            listed
                .credential_origins(&spec_host, &base, &[], Some("own"))
                .unwrap(),
            ["https://files.own-cdn.example"]
        );
        let other_api = set_with_server("https://other.example/v2");
        let others = ["https://other.example".to_string()];
        assert!(
            args.credential_origins(&other_api, &base, &others, Some("own"))
                .unwrap()
                .is_empty()
        );
        let named = ServeArgs {
            credential_origin: vec!["https://other.example".into()],
            ..ServeArgs::default()
        };
        assert_eq!(
            named
                .credential_origins(&other_api, &base, &others, Some("own"))
                .unwrap(),
            ["https://other.example"]
        );
    }
}
