//! Per-caller upstream credentials (#21): the hook shared by `--upstream-auth token-exchange`
//! and the `oauth-proxy` mode.
//!
//! The HTTP transport's OAuth gate puts the validated caller ([`Caller`], as `Arc<Caller>`) into
//! the request's `http::request::Parts` extensions; the server hands it to the forwarder in the
//! call's [`crate::forward::CallScope`]. For each security scheme of the operation's chosen security
//! alternative the [`Forwarder`](crate::forward::Forwarder) asks its [`CallerCredentials`] first, and the
//! static [`Credentials`](crate::forward::Credentials) only when that says `Ok(None)`. A value it returns
//! is placed as the scheme says (an `Authorization: Bearer` header for oauth2 and http bearer
//! schemes, the key's header, query or cookie for apiKey, `user:pass` for basic) and scrubbed
//! from the call's result like every configured secret.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The caller's validated access token for this server, wrapped so it cannot be printed
/// (`Debug` and `Display` show `<redacted>`). [`CallerToken::expose`] is for the code that
/// must send it (a token-exchange request), never for logs or messages.
#[derive(Clone)]
pub struct CallerToken(Arc<str>);

impl CallerToken {
    pub fn new(token: &str) -> Self {
        CallerToken(Arc::from(token))
    }

    /// The raw token.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for CallerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for CallerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The caller of one `tools/call` as the HTTP transport authorized it: the OAuth subject and the
/// validated access token (never the raw token in `Debug`; caches key it by
/// [`Caller::token_digest`]).
#[derive(Clone)]
pub struct Caller {
    /// `sub` of the token (empty when it has none).
    pub subject: String,
    token: CallerToken,
    digest: [u8; 32],
    /// When the token expires (`exp`, Unix seconds), when it says.
    pub expires_at: Option<u64>,
}

impl Caller {
    pub fn new(subject: String, token: &str, expires_at: Option<u64>) -> Self {
        Caller {
            subject,
            digest: crate::oauth::token_digest(token),
            token: CallerToken::new(token),
            expires_at,
        }
    }

    /// The validated access token (wrapped).
    pub fn token(&self) -> &CallerToken {
        &self.token
    }

    /// SHA-256 of the token: the key of per-caller caches.
    pub fn token_digest(&self) -> &[u8; 32] {
        &self.digest
    }
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let short: String = self.digest[..4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        f.debug_struct("Caller")
            .field("subject", &self.subject)
            .field("token_sha256", &format_args!("{short}…"))
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// Why no per-caller credential can be had: the call fails with this message as its tool error
/// (it should say what to do, e.g. "authorize again"), and nothing is sent. It must hold no
/// token or secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CallerCredentialError {
    pub message: String,
}

impl CallerCredentialError {
    pub fn new(message: impl Into<String>) -> Self {
        CallerCredentialError {
            message: message.into(),
        }
    }
}

/// A boxed future of a per-caller credential.
pub type CredentialFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Option<String>, CallerCredentialError>> + Send + 'a>>;

/// Per-caller upstream credentials: consulted by the Forwarder for each security scheme of a call
/// before the static Credentials. `Ok(None)`: fall back to static. `Err`: the call fails with a
/// tool error that says what to do (e.g. "authorize again"), nothing is sent.
pub trait CallerCredentials: Send + Sync + 'static {
    fn credential<'a>(&'a self, caller: &'a Caller, scheme: &'a str) -> CredentialFuture<'a>;

    /// The API answered 401 to a request carrying this caller's credential for `scheme`: drop
    /// it from any cache (the forwarder asks once more and sends the call again). Default: nothing.
    fn rejected(&self, _caller: &Caller, _scheme: &str) {}
}
