//! What the OAuth proxy fails with: its set-up (said to the operator at start), a redirect URI
//! or an `--oauth-proxy-redirect-hosts` entry refused, a client metadata document refused
//! (logged). None carries a secret: the store key, client secrets and tokens never appear.

use openapi_mcp_store::StoreError;

use crate::limits::{MAX_CLIENT_NAME_CHARS, MAX_REDIRECT_URI_BYTES, MAX_REDIRECT_URIS};
use crate::{CIMD_MAX_BYTES, STORE_KEY_ENV};

/// Why the `--oauth-proxy` options cannot work with this spec and environment.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("--oauth-proxy {0:?} is not an http(s) URL")]
    NotHttpUrl(String),
    #[error(
        "--oauth-proxy {0:?}: give the public base URL of this server without a path (https://mcp.example.com): its endpoints are /authorize, /token, /register and /oauth/callback there, and MCP is at /mcp"
    )]
    NotAnOrigin(String),
    #[error(
        "--oauth-proxy {0:?}: an authorization server is served over https (plain http only on this machine: localhost, 127.0.0.1)"
    )]
    PlainHttp(String),
    #[error(
        "--oauth-proxy-scheme {0:?}: the spec declares no oauth2 scheme with an authorizationCode flow (and no clientCredentials flow)"
    )]
    NamedSchemeButNoFlows(String),
    #[error(
        "--oauth-proxy-scheme {name:?}: not an oauth2 scheme with an authorizationCode flow in the spec; those are: {known}"
    )]
    UnknownScheme { name: String, known: String },
    #[error(
        "--oauth-proxy runs the API's own authorization-code flow, and the spec declares no oauth2 scheme with an authorizationCode flow (and no clientCredentials flow)"
    )]
    NoFlow,
    #[error(
        "the spec declares several oauth2 authorizationCode schemes ({0}): choose one with --oauth-proxy-scheme"
    )]
    SeveralFlows(String),
    #[error("the {what} {url:?} of scheme {scheme}: {reason}")]
    FlowUrl {
        what: &'static str,
        url: String,
        scheme: String,
        reason: url::ParseError,
    },
    #[error(
        "the {what} of scheme {scheme} ({origin}) is not https: codes and secrets travel only over TLS (or to this machine)"
    )]
    InsecureFlowUrl {
        what: &'static str,
        scheme: String,
        origin: String,
    },
    #[error(
        "--oauth-proxy needs --upstream-client-id: the client id this server has at the API's authorization server (and its secret in OPENAPI_MCP_UPSTREAM_CLIENT_SECRET)"
    )]
    NoUpstreamClient,
    #[error(
        "--oauth-proxy stores users' API tokens encrypted: set OPENAPI_MCP_STORE_KEY (32 bytes or more, e.g. `openssl rand -base64 32`; the same on every instance sharing the store)"
    )]
    NoStoreKey,
    #[error("{STORE_KEY_ENV} must be at least 32 bytes (it is {0})")]
    ShortStoreKey(usize),
    /// `--oauth-store` (the store crate's message, which names the option).
    #[error("{0}")]
    Store(String),
    #[error(transparent)]
    RedirectHosts(#[from] RedirectHostsError),
}

/// Why the proxy cannot start (said to the operator).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The signing key or the HTTP client could not be made.
    #[error("{0}")]
    Keys(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A `--oauth-proxy-redirect-hosts` entry that is not a host, `*.domain`, IP address or app
/// scheme.
#[derive(Debug, thiserror::Error)]
#[error(
    "--oauth-proxy-redirect-hosts {0:?}: give host names (mcp-client.example.com), *.domain for its subdomains, IP addresses (127.0.0.1, ::1), or an app scheme with its colon (cursor:)"
)]
pub struct RedirectHostsError(pub String);

/// Why a client may not register a redirect URI.
#[derive(Debug, thiserror::Error)]
pub enum RedirectUriError {
    #[error("{0:?} is not an absolute URI")]
    NotAbsolute(String),
    #[error("{0:?} has a fragment")]
    Fragment(String),
    #[error("{0:?}: plain http only to this machine (localhost, 127.0.0.1, [::1])")]
    PlainHttp(String),
    #[error("{0:?}: scheme {1} is not allowed")]
    Scheme(String, String),
}

/// Why a client metadata document is not a client (logged, never shown to the client).
#[derive(Debug, thiserror::Error)]
pub enum ClientDocumentError {
    #[error("not a URL")]
    NotUrl,
    #[error("a client_id URL must be https")]
    NotHttps,
    #[error("a client_id URL needs a path, and no fragment or user info")]
    Shape,
    #[error("no host")]
    NoHost,
    #[error("no port")]
    NoPort,
    #[error("cannot resolve {0}: {1}")]
    Resolve(String, #[source] std::io::Error),
    #[error("{0} resolves to no public address")]
    NoPublicAddress(String),
    #[error("{0} resolves to a private or loopback address")]
    PrivateAddress(String),
    /// Making the client, sending, or reading the answer (without the URL).
    #[error("{0}")]
    Http(#[source] reqwest::Error),
    #[error("HTTP {0}")]
    Status(u16),
    #[error("larger than {CIMD_MAX_BYTES} bytes")]
    TooLarge,
    #[error("not a JSON document")]
    NotJson,
    #[error("its client_id is not its own URL")]
    NotItsOwn,
    #[error("token_endpoint_auth_method {0:?}: only public clients (none) are supported")]
    AuthMethod(String),
    #[error("a metadata document must not hold a client_secret")]
    HasSecret,
    #[error("redirect_uris: 1 to {MAX_REDIRECT_URIS} are required")]
    RedirectUriCount,
    #[error("redirect_uris: each at most {MAX_REDIRECT_URI_BYTES} bytes")]
    RedirectUriLength,
    #[error(transparent)]
    RedirectUri(#[from] RedirectUriError),
    #[error("client_name: at most {MAX_CLIENT_NAME_CHARS} characters")]
    NameLength,
}
