//! Every serving option: [`ServeArgs`] (a clap `Args` struct with the `cli` feature), the
//! transport and upstream-auth choices, and the parsers of durations and header names.

use super::*;

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
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS))]
    pub max_connections: usize,
    /// HTTP: live sessions at most; beyond, `initialize` gets HTTP 503. Sessions never used after
    /// their `initialize` close after 30 s, idle ones after 5 minutes.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SESSIONS))]
    pub max_sessions: usize,
    /// HTTP: live sessions at most per client IP address; beyond, `initialize` gets HTTP 429.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SESSIONS_PER_CLIENT))]
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
    /// Serve MCP tasks (the io.modelcontextprotocol/tasks extension) to clients that declare
    /// it: a call the API accepts (202 with a status URL a GET tool reads) is answered with a
    /// task the client polls with tasks/get (each poll reads the API's status, at most once per
    /// pollIntervalMs) and may cancel with tasks/cancel (the API's DELETE or POST .../cancel of
    /// the status URL, when the spec has one). Other clients are served as without it.
    #[cfg_attr(feature = "cli", arg(long))]
    pub tasks: bool,
    /// With --tasks: a call still running after this long (500ms, 2s, 1m) becomes a task too;
    /// its request goes on in the background on this instance.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DURATION", value_parser = crate::tasks::parse_duration))]
    pub task_after: Option<std::time::Duration>,
    /// With --tasks: how long a task and its result are kept after it is created.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DURATION", default_value = "1h", value_parser = crate::tasks::parse_duration))]
    pub task_ttl: std::time::Duration,
    /// With --tasks: where task records are kept, so that instances behind one load balancer
    /// serve each other's tasks: sqlite:PATH, redis://..., postgres://... (records sealed with
    /// OPENAPI_MCP_STORE_KEY, 32 bytes or more). Default: this process's memory.
    #[cfg_attr(feature = "cli", arg(long, value_name = "STORE"))]
    pub task_store: Option<String>,

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
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_sessions_per_client: DEFAULT_MAX_SESSIONS_PER_CLIENT,
            credential_origin: Vec::new(),
            max_connections: DEFAULT_MAX_CONNECTIONS,
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
            tasks: false,
            task_after: None,
            task_ttl: std::time::Duration::from_secs(3600),
            task_store: None,
            metrics_listen: None,
            audit_log: None,
            ready_check: false,
            code_timeout: 30.0,
            code_memory: 64,
            code_max_calls: 50,
        }
    }
}

/// `--max-connections` by default: the HTTP transport's own default (a test keeps them equal;
/// the options exist without the `http` feature too).
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// `--max-sessions` by default (the HTTP transport's).
pub const DEFAULT_MAX_SESSIONS: usize = 4096;
/// `--max-sessions-per-client` by default (the HTTP transport's).
pub const DEFAULT_MAX_SESSIONS_PER_CLIENT: usize = 256;

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
pub(super) fn parse_code_timeout(s: &str) -> Result<f64, UserError> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| UserError::msg(format!("`{s}` is not a number of seconds")))?;
    code_timeout_duration(secs).map(|_| secs)
}

#[cfg(feature = "cli")]
pub(super) fn parse_timeout(s: &str) -> Result<f64, UserError> {
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
pub(super) struct BadHeaderName(String, #[source] http::header::InvalidHeaderName);

#[cfg(feature = "cli")]
pub(super) fn parse_header_name(s: &str) -> Result<String, BadHeaderName> {
    http::HeaderName::from_bytes(s.trim().as_bytes())
        .map(|h| h.as_str().to_string())
        .map_err(|e| BadHeaderName(s.to_string(), e))
}
