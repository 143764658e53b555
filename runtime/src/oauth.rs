//! The HTTP transport as an OAuth 2.1 resource server (`--oauth-issuer`), as MCP's authorization
//! spec has it (2025-11-25 and 2026-07-28 alike): protected resource metadata (RFC 9728) at
//! `/.well-known/oauth-protected-resource` (and its path-suffixed form), `401` with
//! `WWW-Authenticate: Bearer resource_metadata="…"` for a missing or invalid token, and `403`
//! with `error="insufficient_scope", scope="…"` for a `tools/call` whose operation needs scopes
//! the token lacks.
//!
//! Tokens are JWTs signed by the issuer (RFC 9068 style): the signature is checked against the
//! issuer's JWKS (found through its RFC 8414 / OpenID metadata unless `--oauth-jwks-url` names
//! it; cached, fetched again, at most every [`REFETCH_MIN`], when a token names an unknown
//! `kid`), then `iss`, `aud` (this server, RFC 8707), `exp` and `nbf` with [`LEEWAY_SECS`] of
//! clock skew. Only asymmetric algorithms are accepted (no `none`, no HMAC keyed with a public
//! key). With `--oauth-introspection-url` tokens are opaque to this server instead: the
//! authorization server is asked about each one (RFC 7662, [`introspect`]) and its answer is
//! held for at most [`introspect::CACHE_TTL`]. A token never appears in a log line, an error or
//! a result.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

/// Clock skew allowed on `exp` and `nbf`.
pub const LEEWAY_SECS: u64 = 30;
/// How long a token's check is reused: a JWT's validation (its signature is not verified again
/// for each request), an introspection answer (a revoked token stops working within this).
/// Never past the token's `exp`.
pub const CACHE_TTL: Duration = Duration::from_secs(30);
/// Tokens whose checks are held at most (per cache).
pub const CACHE_MAX: usize = 10_000;

/// A token's check, and until when it holds.
type Checked = (Instant, Result<Claims, TokenError>);

/// Checked tokens by SHA-256 (never the token itself), each until a time.
#[derive(Default)]
pub(crate) struct Validated {
    map: std::sync::Mutex<HashMap<[u8; 32], Checked>>,
}

impl Validated {
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Result<Claims, TokenError>> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let (until, result) = map.get(key)?;
        (Instant::now() < *until).then(|| result.clone())
    }

    pub(crate) fn put(&self, key: [u8; 32], until: Instant, result: Result<Claims, TokenError>) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= CACHE_MAX && !map.contains_key(&key) {
            let now = Instant::now();
            map.retain(|_, (u, _)| *u > now);
            if map.len() >= CACHE_MAX {
                // Full of live entries (a flood of distinct tokens): start over rather than grow.
                map.clear();
            }
        }
        map.insert(key, (until, result));
    }

    #[cfg(test)]
    pub(crate) fn keys(&self) -> Vec<[u8; 32]> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.keys().copied().collect()
    }
}
/// The JWKS is fetched again for an unknown `kid` at most this often.
pub const REFETCH_MIN: Duration = Duration::from_secs(10);

/// What `--oauth-*` configure.
#[derive(Clone, Debug, Default)]
pub struct OAuthOptions {
    /// The authorization server's issuer identifier (`iss` of its tokens).
    pub issuer: String,
    /// This server's resource identifier: the `aud` its tokens must carry, and the `resource` of
    /// its metadata (the public MCP URL).
    pub audience: String,
    /// Where the issuer's keys are; `None`: from the issuer's metadata.
    pub jwks_url: Option<String>,
    /// `tools/list` leaves out the tools the token lacks the scopes for.
    pub hide_unauthorized_tools: bool,
    /// `scopes_supported` of the metadata: every scope an operation asks for.
    pub scopes_supported: Vec<String>,
    /// `--oauth-introspection-url`: tokens are checked by the authorization server (RFC 7662),
    /// not as JWTs.
    pub introspection: Option<introspect::Introspection>,
    /// The issuer's keys, given rather than fetched (`--oauth-proxy`: this server's own).
    pub jwks: Option<JwkSet>,
}

/// This server's own client credentials at the authorization server (`--oauth-client-id`, the
/// secret from [`CLIENT_SECRET_ENV`]): for introspection and token exchange. The secret never
/// shows in `Debug`.
#[derive(Clone)]
pub struct ClientAuth {
    pub id: String,
    secret: String,
}

/// The environment variable holding the secret of `--oauth-client-id` (never a flag: a flag's
/// value shows in process listings and shell history). Listed with the server's other
/// variables in `forward::auth::SERVER_ENV`.
pub const CLIENT_SECRET_ENV: &str = "OPENAPI_MCP_OAUTH_CLIENT_SECRET";

impl ClientAuth {
    pub fn new(id: String, secret: String) -> Self {
        ClientAuth { id, secret }
    }

    /// `Authorization: Basic …` (RFC 6749 §2.3.1: id and secret form-encoded first).
    pub fn basic(&self) -> String {
        use base64::Engine as _;
        let enc = |v: &str| url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
        let pair = format!("{}:{}", enc(&self.id), enc(&self.secret));
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }

    /// The secret, for scrubbing text that might echo it.
    pub fn secret(&self) -> &str {
        &self.secret
    }
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientAuth")
            .field("id", &self.id)
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// SHA-256 of a token: how caches key tokens (never by the token itself).
pub fn token_digest(token: &str) -> [u8; 32] {
    let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// What a validated token says about its caller; the transport puts it into the request's
/// extensions, where `tools/list`, `tools/call` and the audit log read it.
#[derive(Clone, Debug, Default)]
pub struct Claims {
    /// `sub`, the user (or client) the token was issued to.
    pub subject: Option<String>,
    /// The granted scopes (`scope`, space-separated, or `scp`, a list).
    pub scopes: Vec<String>,
    /// `--hide-unauthorized-tools`: `tools/list` shows only what this token may call.
    pub hide_unauthorized_tools: bool,
    /// When the token expires (`exp`, Unix seconds), when it says.
    pub expires_at: Option<u64>,
}

impl Claims {
    /// Whether the token may call an operation needing `required` (see `Route::oauth_scopes`):
    /// no alternative at all, or every scope of any one alternative.
    pub fn allows(&self, required: &[Vec<String>]) -> bool {
        required.is_empty()
            || required
                .iter()
                .any(|alt| alt.iter().all(|s| self.scopes.iter().any(|g| g == s)))
    }
}

/// The scopes to ask for in an `insufficient_scope` challenge: the alternative that needs the
/// fewest scopes the token lacks. Only the operation's own scopes (RFC 6750 §3.1): a client
/// adds the ones it already holds (MCP 2026-07-28 moved that to the client).
pub fn challenge_scopes<'a>(claims: &Claims, required: &'a [Vec<String>]) -> &'a [String] {
    required
        .iter()
        .min_by_key(|alt| {
            alt.iter()
                .filter(|s| !claims.scopes.iter().any(|g| g == *s))
                .count()
        })
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Why a token was refused (said to the client in `error_description`; never the token).
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("the token is not a well-formed JWT")]
    Malformed,
    #[error("the token's algorithm is not accepted (asymmetric signatures only)")]
    Algorithm,
    #[error("the token is signed with a key the issuer does not publish")]
    UnknownKey,
    #[error("the token's signature does not verify")]
    Signature,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token was issued by another issuer")]
    Issuer,
    #[error("the token was issued for another resource (audience)")]
    Audience,
    #[error("the token lacks a required claim (exp, iss, aud)")]
    MissingClaim,
    #[error("the issuer's keys cannot be fetched now")]
    KeysUnavailable,
    #[error("the token is not active (revoked, expired or unknown to the authorization server)")]
    Inactive,
    #[error("the authorization server cannot check the token now")]
    IntrospectionUnavailable,
}

impl TokenError {
    /// A failure of this server or the authorization server, not of the token.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            TokenError::KeysUnavailable | TokenError::IntrospectionUnavailable
        )
    }
}

const ACCEPTED: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// When the JWKS was last fetched (the fetch rate limit).
#[derive(Default)]
struct KeyCache {
    fetched: Option<Instant>,
}

/// The issuer's keys by `kid` (`#index` for a key without one), with the algorithm each names.
type Keys = Arc<HashMap<String, (DecodingKey, Option<Algorithm>)>>;

/// The resource server: validates tokens against the issuer's keys.
pub struct ResourceServer {
    pub opts: OAuthOptions,
    http: reqwest::Client,
    /// `--oauth-introspection-url`: tokens are introspected, with a cache.
    introspector: Option<introspect::Introspector>,
    /// JWTs validated (successes only), for [`CACHE_TTL`] at most.
    validated: Validated,
    jwks_url: tokio::sync::OnceCell<String>,
    cache: tokio::sync::Mutex<KeyCache>,
    /// Decoding keys by `kid` (or by index for keys without one), rebuilt on each fetch.
    decoding: std::sync::RwLock<Keys>,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct RawClaims {
    sub: Option<String>,
    exp: Option<f64>,
    scope: Option<String>,
    scp: Option<ScpClaim>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ScpClaim {
    List(Vec<String>),
    Text(String),
}

impl ResourceServer {
    pub fn new(opts: OAuthOptions) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        let jwks_url = tokio::sync::OnceCell::new();
        if let Some(u) = &opts.jwks_url {
            let _ = jwks_url.set(u.clone());
        }
        let introspector = opts
            .introspection
            .clone()
            .map(introspect::Introspector::new);
        let decoding = std::sync::RwLock::new(Arc::new(
            opts.jwks.as_ref().map(decoding_keys).unwrap_or_default(),
        ));
        ResourceServer {
            opts,
            http,
            introspector,
            validated: Validated::default(),
            jwks_url,
            cache: Default::default(),
            decoding,
        }
    }

    /// The protected resource metadata's URL: the well-known path inserted before the
    /// resource's path (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        metadata_url(&self.opts.audience)
    }

    /// The protected resource metadata (RFC 9728 §2). No `resource_signing_alg_values_supported`:
    /// that field lists algorithms the resource signs its *responses* with, which it does not.
    pub fn metadata(&self) -> serde_json::Value {
        serde_json::json!({
            "resource": self.opts.audience,
            "authorization_servers": [self.opts.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": self.opts.scopes_supported,
        })
    }

    /// Validates a bearer token: signature, issuer, audience, expiry and not-before (or, with
    /// introspection, what the authorization server says of it, then the same checks).
    pub async fn validate(&self, token: &str) -> Result<Claims, TokenError> {
        if let Some(i) = &self.introspector {
            return i.validate(&self.http, &self.opts, token).await;
        }
        // A token seen lately: its signature and claims were checked (a client sends the same
        // token with every request; verifying a signature costs more than the rest of a call's
        // gate). Only until the token expires.
        let key = token_digest(token);
        if let Some(hit) = self.validated.get(&key) {
            return hit;
        }
        let claims = self.validate_jwt(token).await?;
        let now = unix_now();
        let left = claims.expires_at.map_or(Duration::ZERO, |e| {
            Duration::from_secs(e.saturating_sub(now))
        });
        let keep = left.min(CACHE_TTL);
        if !keep.is_zero() {
            self.validated
                .put(key, Instant::now() + keep, Ok(claims.clone()));
        }
        Ok(claims)
    }

    /// A JWT's signature, issuer, audience, expiry and not-before.
    async fn validate_jwt(&self, token: &str) -> Result<Claims, TokenError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::Malformed)?;
        if !ACCEPTED.contains(&header.alg) {
            return Err(TokenError::Algorithm);
        }
        let kid = header.kid.clone().unwrap_or_default();
        let key = match self.key(&kid, header.alg) {
            Some(k) => k,
            None => {
                self.refresh().await?;
                self.key(&kid, header.alg).ok_or(TokenError::UnknownKey)?
            }
        };
        let mut v = Validation::new(header.alg);
        v.leeway = LEEWAY_SECS;
        v.validate_nbf = true;
        v.set_issuer(&[&self.opts.issuer]);
        v.set_audience(&[&self.opts.audience]);
        v.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<RawClaims>(token, &key, &v).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            match e.kind() {
                K::ExpiredSignature => TokenError::Expired,
                K::ImmatureSignature => TokenError::NotYetValid,
                K::InvalidIssuer => TokenError::Issuer,
                K::InvalidAudience => TokenError::Audience,
                K::MissingRequiredClaim(_) => TokenError::MissingClaim,
                K::InvalidSignature => TokenError::Signature,
                K::InvalidAlgorithm => TokenError::Algorithm,
                _ => TokenError::Malformed,
            }
        })?;
        let c = data.claims;
        let mut scopes = scope_list(c.scope.as_deref());
        match c.scp {
            Some(ScpClaim::List(l)) => scopes.extend(l),
            Some(ScpClaim::Text(t)) => {
                scopes.extend(t.split_ascii_whitespace().map(str::to_string));
            }
            None => {}
        }
        Ok(Claims {
            subject: c.sub,
            scopes,
            hide_unauthorized_tools: self.opts.hide_unauthorized_tools,
            expires_at: c.exp.filter(|e| *e >= 0.0).map(|e| e as u64),
        })
    }

    /// A cached key for `kid` usable with `alg`.
    fn key(&self, kid: &str, alg: Algorithm) -> Option<DecodingKey> {
        let map = self.decoding.read().ok()?.clone();
        let usable = |(k, a): &(DecodingKey, Option<Algorithm>)| {
            a.is_none_or(|a| a == alg).then(|| k.clone())
        };
        if !kid.is_empty() {
            return map.get(kid).and_then(usable);
        }
        // No kid: the only key there is.
        if map.len() == 1 {
            return map.values().next().and_then(usable);
        }
        None
    }

    /// Fetches the JWKS again, unless it was fetched less than [`REFETCH_MIN`] ago.
    async fn refresh(&self) -> Result<(), TokenError> {
        if self.opts.jwks.is_some() {
            return Ok(());
        }
        let mut cache = self.cache.lock().await;
        if cache.fetched.is_some_and(|t| t.elapsed() < REFETCH_MIN) {
            return Ok(());
        }
        cache.fetched = Some(Instant::now());
        let url = self
            .jwks_url
            .get_or_try_init(|| self.discover_jwks_url())
            .await?;
        let set: JwkSet = self.get_json(url).await?;
        let map = decoding_keys(&set);
        if let Ok(mut d) = self.decoding.write() {
            *d = Arc::new(map);
        }
        Ok(())
    }

    /// `jwks_uri` of the issuer's RFC 8414 metadata, else of its OpenID configuration.
    async fn discover_jwks_url(&self) -> Result<String, TokenError> {
        #[derive(Deserialize)]
        struct Meta {
            issuer: Option<String>,
            jwks_uri: Option<String>,
        }
        for url in issuer_metadata_urls(&self.opts.issuer) {
            let Ok(m) = self.get_json::<Meta>(&url).await else {
                continue;
            };
            if m.issuer.as_deref().is_some_and(|i| i != self.opts.issuer) {
                tracing::warn!("{url}: the metadata names another issuer; ignored");
                continue;
            }
            if let Some(j) = m.jwks_uri {
                return Ok(j);
            }
        }
        tracing::warn!(
            "no jwks_uri in the metadata of {} (RFC 8414 or OpenID); set --oauth-jwks-url",
            self.opts.issuer
        );
        Err(TokenError::KeysUnavailable)
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, TokenError> {
        let resp = self
            .http
            .get(url)
            .header("accept", "application/json")
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| {
                tracing::warn!("fetching {url}: {e}");
                TokenError::KeysUnavailable
            })?;
        let body = resp.bytes().await.map_err(|e| {
            tracing::warn!("fetching {url}: {e}");
            TokenError::KeysUnavailable
        })?;
        serde_json::from_slice::<T>(&body).map_err(|e| {
            tracing::warn!("{url}: not the JSON expected: {e}");
            TokenError::KeysUnavailable
        })
    }
}

/// The usable keys of a JWKS by `kid` (`#index` for a key without one).
fn decoding_keys(set: &JwkSet) -> HashMap<String, (DecodingKey, Option<Algorithm>)> {
    let mut map = HashMap::new();
    for (i, jwk) in set.keys.iter().enumerate() {
        let Ok(key) = DecodingKey::from_jwk(jwk) else {
            continue;
        };
        let alg = jwk
            .common
            .key_algorithm
            .and_then(|a| a.to_string().parse::<Algorithm>().ok());
        let id = jwk.common.key_id.clone().unwrap_or_else(|| format!("#{i}"));
        map.insert(id, (key, alg));
    }
    map
}

/// A space-separated `scope` value as a list.
fn scope_list(scope: Option<&str>) -> Vec<String> {
    scope
        .unwrap_or("")
        .split_ascii_whitespace()
        .map(str::to_string)
        .collect()
}

/// `https://h/.well-known/oauth-protected-resource/p` for the resource `https://h/p`.
pub fn metadata_url(resource: &str) -> String {
    well_known(resource, "oauth-protected-resource")
}

fn well_known(base: &str, name: &str) -> String {
    match url::Url::parse(base) {
        Ok(u) => {
            let path = u.path().trim_end_matches('/');
            format!(
                "{}/.well-known/{name}{path}",
                u.origin().ascii_serialization()
            )
        }
        Err(_) => format!("{}/.well-known/{name}", base.trim_end_matches('/')),
    }
}

/// Where an issuer's metadata may be: RFC 8414 (well-known inserted before the path), then
/// OpenID Connect Discovery (appended), and OpenID's inserted form.
pub fn issuer_metadata_urls(issuer: &str) -> Vec<String> {
    let mut urls = vec![
        well_known(issuer, "oauth-authorization-server"),
        format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ),
        well_known(issuer, "openid-configuration"),
    ];
    urls.dedup();
    urls
}

/// A `WWW-Authenticate` value (quoted strings; our values hold no quote or backslash but are
/// escaped anyway).
pub fn challenge(params: &[(&str, &str)]) -> String {
    let mut out = String::from("Bearer");
    for (i, (k, v)) in params.iter().enumerate() {
        let v = v.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(if i == 0 { " " } else { ", " });
        out.push_str(&format!("{k}=\"{v}\""));
    }
    out
}

pub mod authorization;
pub mod caller;
pub mod exchange;
pub mod introspect;
pub mod token_post;

#[cfg(test)]
mod tests;
