//! `--oauth-proxy` (#21): this server is the OAuth 2.1 authorization server its MCP clients see,
//! and behind it each user goes through the API's own authorization-code flow, taken from the
//! spec's `securitySchemes` (an oauth2 scheme with an `authorizationCode` flow: its
//! `authorizationUrl`, `tokenUrl` and scopes), with the client id the operator registered there.
//!
//! ```text
//! MCP client ──/authorize (PKCE S256, resource)──▶ proxy ──authorizationUrl (its own PKCE, state)──▶ API's AS
//!            ◀──redirect_uri?code (proxy's code)── proxy ◀──/oauth/callback?code──────────────────── (user signs in)
//!            ──/token (code + verifier)──────────▶ proxy ──tokenUrl (code, client secret)──────────▶ API's AS
//!            ◀──proxy's access + refresh token─── proxy   (API tokens stored sealed, never shown)
//!            ──/mcp tools/call (proxy token)─────▶ proxy ──API call with the user's API token──────▶ API
//! ```
//!
//! The proxy's access tokens are short-lived JWTs ([`ACCESS_TTL`]) signed with an Ed25519 key
//! derived from `OPENAPI_MCP_STORE_KEY` (instances sharing the store and the key accept each
//! other's tokens); their `sub` names the grant that holds the user's API tokens, which the
//! forwarder gets for each call through [`CallerCredentials`] (refreshed at the API's token
//! endpoint when they expire). The API's tokens never reach the MCP client, and the proxy's
//! tokens never reach the API. Clients register by RFC 7591 dynamic registration (`/register`).

pub mod consent;
mod errors;
pub mod limits;
/// The storage tier (the `openapi-mcp-store` crate).
pub use openapi_mcp_store as store;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use url::Url;

use consent::AuthRequest;
use limits::{
    MAX_CLIENT_ID_BYTES, MAX_CLIENT_NAME_CHARS, MAX_REDIRECT_URI_BYTES, MAX_REDIRECT_URIS,
    MAX_REGISTRATION_BYTES, MAX_SCOPE_BYTES, MAX_SCOPES, MAX_STATE_BYTES, UNUSED_CLIENT_TTL,
};
use openapi_mcp_runtime::forward::{
    Caller, CallerCredentialError, CallerCredentials, caller::CredentialFuture,
};
/// The `--oauth-proxy` options as given (defined at the runtime's seam).
pub use openapi_mcp_runtime::oauth::authorization::ProxyArgs;
use openapi_mcp_runtime::oauth::authorization::{AuthorizationServer, ProxyContext, SetupFailure};
use openapi_mcp_runtime::oauth::token_post::{TokenClient, TokenPost, TokenPostError};
use store::{Sealer, Store, StoreError, StoreSpec, now};

/// The variables holding the store's key and `--upstream-client-id`'s secret (defined beside the
/// server's other variables, [`openapi_mcp_runtime::forward::auth::SERVER_ENV`]).
pub use openapi_mcp_runtime::forward::auth::{STORE_KEY_ENV, UPSTREAM_SECRET_ENV};
/// Lifetime of the proxy's access tokens.
pub const ACCESS_TTL: u64 = 15 * 60;
/// Lifetime of the proxy's authorization codes.
pub const CODE_TTL: u64 = 60;
/// How long a user has to sign in at the API's authorization server.
pub const PENDING_TTL: u64 = 10 * 60;
/// Lifetime of the proxy's refresh tokens (each use gives a new one).
pub const REFRESH_TTL: u64 = 30 * 24 * 3600;
/// How long a grant (the user's API tokens) is kept after its last use of a refresh.
pub const GRANT_TTL: u64 = 30 * 24 * 3600;
/// How long a registered client is kept.
pub const CLIENT_TTL: u64 = 365 * 24 * 3600;
/// An API token is renewed this long before it expires.
pub const RENEW_MARGIN: u64 = 30;
/// The most of a token endpoint's answer read.
pub const TOKEN_ANSWER_MAX: usize = 64 * 1024;

/// How the proxy is configured (from the command line, the spec and the environment).
#[derive(Clone)]
pub struct ProxyConfig {
    /// The public base URL of this server (an origin): the issuer of its tokens.
    pub issuer: String,
    /// The MCP endpoint's URL: the `aud` of the tokens, the `resource` clients ask for.
    pub resource: String,
    /// The spec's security scheme whose flow is run.
    pub scheme: String,
    pub authorization_url: Url,
    pub token_url: Url,
    /// Where refreshes go (`refreshUrl`, else `tokenUrl`).
    pub refresh_url: Url,
    /// The flow's scopes (what clients may ask for).
    pub scopes: Vec<String>,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub store: StoreSpec,
    /// `OPENAPI_MCP_STORE_KEY`.
    pub key: Vec<u8>,
    /// `--oauth-proxy-redirect-hosts`: where clients may send their users back (lowercase
    /// host names, `*.domain`, or `scheme:` for an app scheme); empty: anywhere
    /// [`redirect_uri_ok`] allows.
    pub redirect_hosts: Vec<String>,
    /// How many registrations and sign-ins in progress the store keeps.
    pub bounds: limits::StoreBounds,
    /// Whether requests per client address are limited ([`limits::Endpoint::budget`]; off only
    /// in tests and the fuzz target, which send everything from one address).
    pub rate_limited: bool,
}

impl std::fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyConfig")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("scheme", &self.scheme)
            .field("client_id", &self.client_id)
            .field("store", &self.store)
            .field("redirect_hosts", &self.redirect_hosts)
            .finish_non_exhaustive()
    }
}

pub use errors::{
    ClientDocumentError, ConfigError, RedirectHostsError, RedirectUriError, SetupError,
};

/// The authorization server and per-caller credential source of `--oauth-proxy`.
pub struct OAuthProxy {
    cfg: ProxyConfig,
    store: Box<dyn Store>,
    sealer: Sealer,
    signing: jsonwebtoken::EncodingKey,
    kid: String,
    jwks: jsonwebtoken::jwk::JwkSet,
    http: reqwest::Client,
    /// One refresh of a grant's API token at a time (per instance).
    renewing: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Signs the consent cookie's approvals and the consent form's CSRF token.
    consent_key: aws_lc_rs::hmac::Key,
    /// Requests per client address at the OAuth endpoints.
    limits: limits::RateLimits,
}

impl std::fmt::Debug for OAuthProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthProxy")
            .field("cfg", &self.cfg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

pub(crate) use openapi_mcp_store::random_bytes;

/// 32 random bytes, base64url: codes, tokens, ids, states, PKCE verifiers.
fn random_token() -> String {
    let mut b = [0u8; 32];
    random_bytes(&mut b);
    b64(&b)
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

fn sha256(s: &str) -> Vec<u8> {
    aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, s.as_bytes())
        .as_ref()
        .to_vec()
}

/// The store key of a record named by a secret: its SHA-256, hex.
fn hashed(secret: &str) -> String {
    sha256(secret).iter().map(|b| format!("{b:02x}")).collect()
}

/// PKCE S256 (RFC 7636 §4.2).
pub fn s256(verifier: &str) -> String {
    b64(&sha256(verifier))
}

/// HKDF-SHA256 of the store key for one purpose.
fn derive(key: &[u8], info: &str) -> [u8; 32] {
    struct Len;
    impl aws_lc_rs::hkdf::KeyType for Len {
        fn len(&self) -> usize {
            32
        }
    }
    let mut out = [0u8; 32];
    let prk = aws_lc_rs::hkdf::Salt::new(aws_lc_rs::hkdf::HKDF_SHA256, b"openapi-mcp oauth-proxy")
        .extract(key);
    let info = [info.as_bytes()];
    if let Ok(okm) = prk.expand(&info, Len) {
        let _ = okm.fill(&mut out);
    }
    out
}

fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether `url` names this machine (where plain http is allowed: tests, local development).
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

// ------------------------------------------------------------------------- stored records

const CLIENT: &str = "client";
const PENDING: &str = "pending";
const CODE: &str = "code";
const GRANT: &str = "grant";
const REFRESH: &str = "refresh";
/// A proxy refresh token spent by its rotation (keyed by its hash, kept until the token would
/// have expired): presented again, it revokes its grant.
const REFRESH_USED: &str = "refresh-used";
/// A grant revoked (keyed by the grant id): a renewal racing with the revocation does not bring
/// it back.
const REVOKED: &str = "revoked";
const CIMD: &str = "cimd";
/// A registered client that has not been issued a token yet: kept [`UNUSED_CLIENT_TTL`], at
/// most [`MAX_UNUSED_CLIENTS`] of them; its first token moves it to [`CLIENT`].
const CLIENT_NEW: &str = "client-new";

/// How long a fetched client metadata document is used before it is fetched again.
pub const CIMD_TTL: u64 = 3600;
/// The largest client metadata document read.
pub const CIMD_MAX_BYTES: usize = 16 * 1024;

/// Whether an address is one a fetch on a client's say-so may reach: globally routable
/// (not loopback, private, link-local, CGNAT, multicast, documentation, benchmarking,
/// unspecified). An IPv6 address that carries an IPv4 address (IPv4-mapped `::ffff:0:0/96`,
/// IPv4-translated `::ffff:0:0:0/96`, IPv4-compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4
/// `2002::/16`, Teredo `2001::/32`'s server and client) is public only when that IPv4 address
/// is; local-use NAT64 `64:ff9b:1::/48` (where the IPv4 address may sit anywhere) never is.
fn public_address(ip: std::net::IpAddr) -> bool {
    use std::net::{IpAddr, Ipv4Addr};
    match ip {
        IpAddr::V4(a) => {
            let [b0, b1, b2, _] = a.octets();
            !(a.is_loopback()
                || a.is_private()
                || a.is_link_local()
                || a.is_unspecified()
                || a.is_broadcast()
                || a.is_multicast()
                || a.is_documentation()
                || b0 == 0
                || b0 >= 240
                || (b0 == 100 && (64..128).contains(&b1))
                // 192.0.0.0/24 (IETF protocol assignments, DS-Lite), 198.18.0.0/15
                // (benchmarking), 192.88.99.0/24 (the former 6to4 relay anycast).
                || (b0 == 192 && b1 == 0 && b2 == 0)
                || (b0 == 198 && (b1 == 18 || b1 == 19))
                || (b0 == 192 && b1 == 88 && b2 == 99))
        }
        IpAddr::V6(a) => {
            let s = a.segments();
            let v4 = |hi: u16, lo: u16| {
                IpAddr::V4(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)))
            };
            if let Some(v4) = a.to_ipv4_mapped() {
                return public_address(IpAddr::V4(v4));
            }
            // ::ffff:0:a.b.c.d (SIIT), 64:ff9b::a.b.c.d (NAT64).
            if s[..6] == [0, 0, 0, 0, 0xffff, 0] || (s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]) {
                return public_address(v4(s[6], s[7]));
            }
            if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
                return false;
            }
            // 6to4: 2002:AABB:CCDD::/48 is IPv4 AA.BB.CC.DD's.
            if s[0] == 0x2002 {
                return public_address(v4(s[1], s[2]));
            }
            // Teredo: the server's address, and the client's (its public address, inverted).
            if s[0] == 0x2001 && s[1] == 0 {
                return public_address(v4(s[2], s[3])) && public_address(v4(!s[6], !s[7]));
            }
            !(a.is_loopback()
                || a.is_unspecified()
                || a.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                // Site-local (deprecated), discard-only 100::/64, benchmarking 2001:2::/48,
                // ORCHID 2001:10::/28 and 2001:20::/28, documentation 2001:db8::/32 and
                // 3fff::/20.
                || (s[0] & 0xffc0) == 0xfec0
                || s[..4] == [0x100, 0, 0, 0]
                || (s[0] == 0x2001 && s[1] == 2 && s[2] == 0)
                || (s[0] == 0x2001 && (s[1] & 0xffe0) == 0x20)
                || (s[0] == 0x2001 && (s[1] & 0xfff0) == 0x10)
                || (s[0] == 0x2001 && s[1] == 0xdb8)
                || (s[0] == 0x3fff && (s[1] & 0xf000) == 0)
                // ::/96 (IPv4-compatible, unspecified, loopback).
                || s[..6] == [0; 6])
        }
    }
}

/// Fetches and checks a client metadata document (see [`OAuthProxy::metadata_document`]).
async fn fetch_client_document(url: &str, local: bool) -> Result<Client, ClientDocumentError> {
    let u = Url::parse(url).map_err(|_| ClientDocumentError::NotUrl)?;
    let https = u.scheme() == "https";
    if !(https || (local && u.scheme() == "http" && is_loopback(&u))) {
        return Err(ClientDocumentError::NotHttps);
    }
    if u.path() == "/"
        || u.fragment().is_some()
        || !u.username().is_empty()
        || u.password().is_some()
    {
        return Err(ClientDocumentError::Shape);
    }
    let host = u.host_str().ok_or(ClientDocumentError::NoHost)?.to_string();
    let port = u
        .port_or_known_default()
        .ok_or(ClientDocumentError::NoPort)?;
    let addrs: Vec<std::net::SocketAddr> =
        tokio::net::lookup_host((host.trim_matches(['[', ']']), port))
            .await
            .map_err(|e| ClientDocumentError::Resolve(host.clone(), e))?
            .collect();
    let allowed =
        |a: &std::net::SocketAddr| public_address(a.ip()) || (local && a.ip().is_loopback());
    let addr = addrs
        .iter()
        .copied()
        .find(allowed)
        .ok_or_else(|| ClientDocumentError::NoPublicAddress(host.clone()))?;
    if !addrs.iter().all(allowed) {
        return Err(ClientDocumentError::PrivateAddress(host));
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(5))
        .resolve(&host, addr)
        .build()
        .map_err(ClientDocumentError::Http)?;
    let mut resp = client
        .get(u.clone())
        .header(header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| ClientDocumentError::Http(e.without_url()))?;
    if !resp.status().is_success() {
        return Err(ClientDocumentError::Status(resp.status().as_u16()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ClientDocumentError::Http(e.without_url()))?
    {
        if body.len() + chunk.len() > CIMD_MAX_BYTES {
            return Err(ClientDocumentError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    let doc: serde_json::Value =
        serde_json::from_slice(&body).map_err(|_| ClientDocumentError::NotJson)?;
    if doc.get("client_id").and_then(|v| v.as_str()) != Some(url) {
        return Err(ClientDocumentError::NotItsOwn);
    }
    if let Some(m) = doc
        .get("token_endpoint_auth_method")
        .and_then(|v| v.as_str())
        && m != "none"
    {
        return Err(ClientDocumentError::AuthMethod(short(m)));
    }
    if doc.get("client_secret").is_some() {
        return Err(ClientDocumentError::HasSecret);
    }
    let uris: Vec<String> = doc
        .get("redirect_uris")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if uris.is_empty() || uris.len() > MAX_REDIRECT_URIS {
        return Err(ClientDocumentError::RedirectUriCount);
    }
    for r in &uris {
        if r.len() > MAX_REDIRECT_URI_BYTES {
            return Err(ClientDocumentError::RedirectUriLength);
        }
        redirect_uri_ok(r)?;
    }
    let name = doc.get("client_name").and_then(|v| v.as_str());
    if name.is_some_and(|n| n.chars().count() > MAX_CLIENT_NAME_CHARS) {
        return Err(ClientDocumentError::NameLength);
    }
    Ok(Client {
        redirect_uris: uris,
        secret_sha256: None,
        name: name.map(str::to_string),
        unused: false,
    })
}

/// A registered client (RFC 7591).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Client {
    redirect_uris: Vec<String>,
    /// SHA-256 of the secret of a confidential client.
    #[serde(default)]
    secret_sha256: Option<String>,
    #[serde(default)]
    name: Option<String>,
    /// Found among the registrations that never got a token ([`CLIENT_NEW`]).
    #[serde(skip)]
    unused: bool,
}

/// An authorization in progress: the client's request, and the proxy's PKCE verifier for the
/// API's authorization server. Keyed by the hash of the `state` sent there.
#[derive(Serialize, Deserialize)]
pub(crate) struct Pending {
    client_id: String,
    redirect_uri: String,
    state: Option<String>,
    code_challenge: String,
    resource: String,
    scopes: Vec<String>,
    verifier: String,
}

/// A proxy authorization code (keyed by its hash).
#[derive(Serialize, Deserialize)]
struct Code {
    client_id: String,
    redirect_uri: String,
    code_challenge: String,
    resource: String,
    scopes: Vec<String>,
    grant: String,
}

/// A user's API tokens (keyed by the grant id, the `sub` of the proxy's tokens).
#[derive(Serialize, Deserialize)]
struct Grant {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    /// Unix seconds; `None`: the API did not say.
    #[serde(default)]
    expires_at: Option<u64>,
    /// When the API issued the access token (Unix seconds).
    #[serde(default)]
    issued_at: u64,
    client_id: String,
}

impl Grant {
    /// Whether the access token is good for a call now: it does not expire within
    /// [`RENEW_MARGIN`] (or half its lifetime, for tokens that live less than twice that).
    fn fresh(&self) -> bool {
        self.expires_at.is_none_or(|e| {
            let margin = RENEW_MARGIN.min(e.saturating_sub(self.issued_at) / 2);
            now() + margin < e
        })
    }
}

/// A proxy refresh token (keyed by its hash).
#[derive(Serialize, Deserialize)]
struct Refresh {
    client_id: String,
    grant: String,
    scopes: Vec<String>,
    resource: String,
    /// When it expires (Unix seconds; 0 in records written before this was kept).
    #[serde(default)]
    expires: u64,
}

/// A refresh token already rotated: the grant it belonged to.
#[derive(Serialize, Deserialize)]
struct UsedRefresh {
    grant: String,
}

/// The claims of the proxy's access tokens.
#[derive(Serialize)]
struct AccessClaims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    client_id: &'a str,
    scope: String,
    iat: u64,
    exp: u64,
    jti: String,
}

impl OAuthProxy {
    /// Opens the store and derives the keys.
    pub fn new(cfg: ProxyConfig) -> Result<Self, SetupError> {
        if cfg.key.len() < 32 {
            return Err(ConfigError::ShortStoreKey(cfg.key.len()).into());
        }
        let store = cfg.store.open()?;
        let cfg_key_copy = cfg.key.clone();
        let sealer = Sealer::new(&derive(&cfg.key, "store sealing v1"));
        let seed = derive(&cfg.key, "token signing v1");
        let pair = aws_lc_rs::signature::Ed25519KeyPair::from_seed_unchecked(&seed)
            .map_err(|e| SetupError::Keys(format!("signing key: {e}")))?;
        let pkcs8 = pair
            .to_pkcs8()
            .map_err(|_| SetupError::Keys("signing key: cannot encode it".into()))?;
        let signing = jsonwebtoken::EncodingKey::from_ed_der(pkcs8.as_ref());
        use aws_lc_rs::signature::KeyPair as _;
        let public = pair.public_key().as_ref().to_vec();
        let kid = hashed(&b64(&public))[..16].to_string();
        let jwks: jsonwebtoken::jwk::JwkSet = serde_json::from_value(serde_json::json!({
            "keys": [{"kty": "OKP", "crv": "Ed25519", "x": b64(&public), "kid": kid,
                      "alg": "EdDSA", "use": "sig"}]
        }))
        .map_err(|e| SetupError::Keys(format!("signing key: {e}")))?;
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(15))
            .build()
            .map_err(|e| SetupError::Keys(format!("HTTP client: {e}")))?;
        Ok(OAuthProxy {
            cfg,
            store,
            sealer,
            signing,
            kid,
            jwks,
            http,
            renewing: Mutex::new(HashMap::new()),
            consent_key: aws_lc_rs::hmac::Key::new(
                aws_lc_rs::hmac::HMAC_SHA256,
                &derive(&cfg_key_copy, "consent v1"),
            ),
            limits: limits::RateLimits::default(),
        })
    }

    pub fn config(&self) -> &ProxyConfig {
        &self.cfg
    }

    /// The public keys of the proxy's tokens (for the resource server, and `/oauth/jwks`).
    pub fn jwks(&self) -> &jsonwebtoken::jwk::JwkSet {
        &self.jwks
    }

    /// How many records of the kinds a stranger's requests create the store holds now, against
    /// [`ProxyConfig::bounds`] (for checks such as the fuzz target's).
    pub async fn stranger_records(&self) -> Result<limits::StoreBounds, StoreError> {
        Ok(limits::StoreBounds {
            unused_clients: self.store.count(CLIENT_NEW).await?,
            pending: self.store.count(PENDING).await?,
            documents: self.store.count(CIMD).await?,
        })
    }

    /// What the store is, for the start-up line.
    pub fn store_description(&self) -> String {
        self.store.describe()
    }

    /// The callback URL the API's authorization server sends users back to: register it there.
    pub fn callback_url(&self) -> String {
        format!("{}/oauth/callback", self.cfg.issuer)
    }

    async fn put<T: Serialize>(
        &self,
        kind: &str,
        key: &str,
        v: &T,
        ttl: u64,
    ) -> Result<(), StoreError> {
        let plain = serde_json::to_vec(v).unwrap_or_default();
        let sealed = self.sealer.seal(kind, key, &plain);
        self.store.put(kind, key, sealed, now() + ttl).await
    }

    fn open<T: for<'de> Deserialize<'de>>(
        &self,
        kind: &str,
        key: &str,
        sealed: Option<Vec<u8>>,
    ) -> Result<Option<T>, StoreError> {
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        let plain = self.sealer.open(kind, key, &sealed)?;
        serde_json::from_slice(&plain)
            .map(Some)
            .map_err(|_| StoreError::Sealed)
    }

    async fn get<T: for<'de> Deserialize<'de>>(
        &self,
        kind: &str,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        let v = self.store.get(kind, key).await?;
        self.open(kind, key, v)
    }

    async fn take<T: for<'de> Deserialize<'de>>(
        &self,
        kind: &str,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        let v = self.store.take(kind, key).await?;
        self.open(kind, key, v)
    }

    /// Revokes a grant: the user's API tokens are forgotten, so every refresh token and
    /// access token of the grant is refused from now on (at `/token`, and for tool calls, which
    /// say to sign in again). The revocation mark goes first: a renewal of the API token that
    /// is writing the grant back meanwhile sees it and deletes the grant again.
    async fn revoke(&self, grant: &str) -> Result<(), StoreError> {
        self.put(REVOKED, grant, &true, GRANT_TTL).await?;
        self.store.delete(GRANT, grant).await
    }

    /// The authorization server metadata (RFC 8414).
    pub fn metadata(&self) -> serde_json::Value {
        let i = &self.cfg.issuer;
        serde_json::json!({
            "issuer": i,
            "authorization_endpoint": format!("{i}/authorize"),
            "token_endpoint": format!("{i}/token"),
            "registration_endpoint": format!("{i}/register"),
            "jwks_uri": format!("{i}/oauth/jwks"),
            "scopes_supported": self.cfg.scopes,
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": true,
        })
    }

    /// The routes of the authorization server (unauthenticated; beside `/mcp`).
    pub fn router(self: &Arc<Self>) -> axum::Router {
        use axum::routing::{get, post};
        axum::Router::new()
            .route("/.well-known/oauth-authorization-server", get(metadata))
            .route("/authorize", get(authorize))
            .route("/oauth/callback", get(callback))
            .route("/token", post(token))
            .route("/register", post(register))
            .route(consent::CONSENT_PATH, post(consent::consent))
            .route("/oauth/jwks", get(jwks))
            .layer(axum::middleware::from_fn_with_state(
                Arc::clone(self),
                limits::limit,
            ))
            .layer(axum::extract::DefaultBodyLimit::max(64 * 1024))
            .with_state(Arc::clone(self))
    }

    /// A registered client.
    async fn client(&self, client_id: &str) -> Result<Option<Client>, StoreError> {
        if client_id.is_empty() || client_id.len() > MAX_CLIENT_ID_BYTES {
            return Ok(None);
        }
        if client_id.starts_with("https://") || client_id.starts_with("http://") {
            return Ok(self.metadata_document(client_id).await);
        }
        if let Some(c) = self.get::<Client>(CLIENT, client_id).await? {
            return Ok(Some(c));
        }
        Ok(self
            .get::<Client>(CLIENT_NEW, client_id)
            .await?
            .map(|c| Client { unused: true, ..c }))
    }

    /// Whether the operator's `--oauth-proxy-redirect-hosts` (when given) lets a client send
    /// its users back to `uri`.
    fn redirect_allowed(&self, uri: &str) -> bool {
        redirect_host_allowed(&self.cfg.redirect_hosts, uri)
    }

    /// Sends the user of a consented request on to the API's authorization server: the sign-in
    /// is kept (within [`MAX_PENDING`]) under the hash of the proxy's own `state`; the URL to
    /// send the browser to, or the answer that says why not.
    async fn start_upstream(&self, req: AuthRequest) -> Result<String, Response> {
        match self.store.count(PENDING).await {
            Ok(n) if n >= self.cfg.bounds.pending => {
                tracing::warn!(
                    "oauth-proxy: {n} sign-ins are in progress, the most kept ({}); refusing new ones until some finish or expire",
                    self.cfg.bounds.pending
                );
                let mut pairs = vec![
                    ("error", "temporarily_unavailable"),
                    (
                        "error_description",
                        "too many sign-ins are in progress on this server; try again in a few minutes",
                    ),
                    ("iss", self.cfg.issuer.as_str()),
                ];
                if let Some(s) = &req.state {
                    pairs.push(("state", s));
                }
                return Err(redirect(&back_to(&req.redirect_uri, &pairs)));
            }
            Ok(_) => {}
            Err(e) => return Err(server_error(e)),
        }
        let verifier = random_token();
        let upstream_state = random_token();
        let scopes = req.scopes.clone();
        let pending = Pending {
            client_id: req.client_id,
            redirect_uri: req.redirect_uri,
            state: req.state,
            code_challenge: req.code_challenge,
            resource: req.resource,
            scopes: req.scopes,
            verifier: verifier.clone(),
        };
        self.put(PENDING, &hashed(&upstream_state), &pending, PENDING_TTL)
            .await
            .map_err(server_error)?;
        let mut to = self.cfg.authorization_url.clone();
        {
            let mut qp = to.query_pairs_mut();
            qp.append_pair("response_type", "code")
                .append_pair("client_id", &self.cfg.client_id)
                .append_pair("redirect_uri", &self.callback_url())
                .append_pair("state", &upstream_state)
                .append_pair("code_challenge", &s256(&verifier))
                .append_pair("code_challenge_method", "S256");
            if !scopes.is_empty() {
                qp.append_pair("scope", &scopes.join(" "));
            }
        }
        Ok(to.to_string())
    }

    /// A client whose `client_id` is the URL of its metadata document (Client ID Metadata
    /// Documents, draft-ietf-oauth-client-id-metadata-document): fetched (and cached for
    /// [`CIMD_TTL`]) with the care remote spec references get: https only, no credentials, no
    /// redirects, 5 s, at most [`CIMD_MAX_BYTES`], and only from public addresses (resolved
    /// once, and that address is the one connected to). When this server itself is on a
    /// loopback address (local use, tests), http and loopback addresses are allowed too.
    /// `None` for anything that is not a valid document for that URL (logged).
    async fn metadata_document(&self, url: &str) -> Option<Client> {
        let key = hashed(url);
        if let Ok(Some(c)) = self.get::<Client>(CIMD, &key).await {
            return Some(c);
        }
        let local = Url::parse(&self.cfg.issuer).is_ok_and(|u| is_loopback(&u));
        match fetch_client_document(url, local).await {
            Ok(c) if !c.redirect_uris.iter().all(|u| self.redirect_allowed(u)) => {
                tracing::info!(
                    "oauth-proxy: client metadata document {url}: a redirect URI's host is not in --oauth-proxy-redirect-hosts"
                );
                None
            }
            Ok(c) => {
                // Past the cap the document is fetched again next time instead of kept.
                match self.store.count(CIMD).await {
                    Ok(n) if n >= self.cfg.bounds.documents => {}
                    _ => {
                        if let Err(e) = self.put(CIMD, &key, &c, CIMD_TTL).await {
                            tracing::warn!("oauth-proxy: {e}");
                        }
                    }
                }
                Some(c)
            }
            Err(why) => {
                tracing::info!("oauth-proxy: client metadata document {url}: {why}");
                None
            }
        }
    }

    /// Issues an access token and a refresh token for `grant`.
    async fn issue(
        &self,
        client_id: &str,
        grant: &str,
        scopes: &[String],
        resource: &str,
    ) -> Result<serde_json::Value, StoreError> {
        let t = now();
        let claims = AccessClaims {
            iss: &self.cfg.issuer,
            sub: grant,
            aud: resource,
            client_id,
            scope: scopes.join(" "),
            iat: t,
            exp: t + ACCESS_TTL,
            jti: random_token(),
        };
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
        header.kid = Some(self.kid.clone());
        header.typ = Some("at+jwt".into());
        let access = jsonwebtoken::encode(&header, &claims, &self.signing)
            .map_err(|e| StoreError::Backend("token signing".into(), e.to_string()))?;
        let refresh = random_token();
        self.put(
            REFRESH,
            &hashed(&refresh),
            &Refresh {
                client_id: client_id.to_string(),
                grant: grant.to_string(),
                scopes: scopes.to_vec(),
                resource: resource.to_string(),
                expires: t + REFRESH_TTL,
            },
            REFRESH_TTL,
        )
        .await?;
        Ok(serde_json::json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ACCESS_TTL,
            "refresh_token": refresh,
            "scope": scopes.join(" "),
        }))
    }

    /// The user's API access token for `grant`, renewed at the API's token endpoint when it
    /// is about to expire.
    async fn upstream_token(&self, grant_id: &str) -> Result<String, CallerCredentialError> {
        let unavailable = |e: StoreError| {
            tracing::warn!("oauth-proxy: {e}");
            CallerCredentialError::new(unavailable_message("the credential store cannot be read"))
        };
        let gone = || reauthorize("no authorization of the API is on record for this sign-in");
        let grant: Grant = self
            .get(GRANT, grant_id)
            .await
            .map_err(unavailable)?
            .ok_or_else(gone)?;
        if grant.fresh() {
            return Ok(grant.access_token);
        }
        let lock = {
            let mut m = self.renewing.lock().unwrap_or_else(|e| e.into_inner());
            if m.len() > 1024 {
                m.retain(|_, l| Arc::strong_count(l) > 1);
            }
            Arc::clone(m.entry(grant_id.to_string()).or_default())
        };
        let _renewing = lock.lock().await;
        // Another call may have renewed it meanwhile.
        let grant: Grant = self
            .get(GRANT, grant_id)
            .await
            .map_err(unavailable)?
            .ok_or_else(gone)?;
        if grant.fresh() {
            return Ok(grant.access_token);
        }
        let Some(refresh) = grant.refresh_token.clone() else {
            if grant.expires_at.is_some_and(|e| now() >= e) {
                let _ = self.store.delete(GRANT, grant_id).await;
                return Err(reauthorize(
                    "the API's token expired and the API gave no refresh token",
                ));
            }
            return Ok(grant.access_token);
        };
        let form = [("refresh_token", refresh.as_str())];
        match self
            .upstream_token_request(&self.cfg.refresh_url, "refresh_token", &form)
            .await
        {
            Ok(t) => {
                let renewed = Grant {
                    access_token: t.access_token.clone(),
                    refresh_token: t.refresh_token.or(Some(refresh)),
                    expires_at: t.expires_in.map(|s| now() + s),
                    issued_at: now(),
                    client_id: grant.client_id,
                };
                self.put(GRANT, grant_id, &renewed, GRANT_TTL)
                    .await
                    .map_err(unavailable)?;
                // Revoked while the API was renewing it: not brought back.
                if self
                    .get::<bool>(REVOKED, grant_id)
                    .await
                    .map_err(unavailable)?
                    .is_some()
                {
                    let _ = self.store.delete(GRANT, grant_id).await;
                    return Err(gone());
                }
                tracing::debug!("oauth-proxy: renewed a user's API token");
                Ok(t.access_token)
            }
            Err(UpstreamError::Refused(why)) => {
                let _ = self.store.delete(GRANT, grant_id).await;
                tracing::info!("oauth-proxy: the API refused to renew a user's token ({why})");
                Err(reauthorize(format!(
                    "the API refused to renew its token: {why}"
                )))
            }
            Err(UpstreamError::Unavailable(why)) => {
                tracing::warn!("oauth-proxy: renewing a user's API token: {why}");
                Err(CallerCredentialError::new(unavailable_message(&why)))
            }
        }
    }

    /// A request to the API's token endpoint, the proxy authenticating as its client there
    /// (`client_secret_post`; a public client sends its id only).
    async fn upstream_token_request(
        &self,
        url: &Url,
        grant_type: &str,
        params: &[(&str, &str)],
    ) -> Result<UpstreamTokens, UpstreamError> {
        let shown = format!("{}{}", url.origin().ascii_serialization(), url.path());
        let post = TokenPost {
            url,
            grant_type,
            params,
            client: TokenClient::Post {
                id: &self.cfg.client_id,
                secret: self.cfg.client_secret.as_deref(),
            },
            user_agent: None,
            max_bytes: TOKEN_ANSWER_MAX,
        };
        let answer = match post.send(&self.http).await {
            Ok(a) if a.truncated => {
                return Err(UpstreamError::Unavailable(format!(
                    "reading the answer of {shown}: larger than {TOKEN_ANSWER_MAX} bytes"
                )));
            }
            Ok(a) => a,
            Err(TokenPostError::Send(e)) => {
                return Err(UpstreamError::Unavailable(format!(
                    "the API's token endpoint {shown} cannot be reached ({e})"
                )));
            }
            Err(TokenPostError::Read(e)) => {
                return Err(UpstreamError::Unavailable(format!(
                    "reading the answer of {shown}: {e}"
                )));
            }
        };
        let status = answer.status;
        let fields = answer.fields();
        let error = fields.get("error").cloned();
        if !status.is_success() || error.is_some() {
            let code = error.unwrap_or_else(|| format!("HTTP {}", status.as_u16()));
            // Only the OAuth error code: descriptions may echo what was sent.
            return Err(
                if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
                    UpstreamError::Unavailable(format!("{shown} answered {code}"))
                } else {
                    UpstreamError::Refused(format!("{shown} answered {}", short(&code)))
                },
            );
        }
        let Some(access_token) = fields.get("access_token").filter(|t| !t.is_empty()) else {
            return Err(UpstreamError::Refused(format!(
                "{shown} gave no access_token"
            )));
        };
        Ok(UpstreamTokens {
            access_token: access_token.clone(),
            refresh_token: fields
                .get("refresh_token")
                .filter(|t| !t.is_empty())
                .cloned(),
            expires_in: fields.get("expires_in").and_then(|s| {
                s.parse::<u64>()
                    .ok()
                    .or_else(|| s.parse::<f64>().ok().map(|f| f.max(0.0) as u64))
            }),
            scope: fields.get("scope").map(|s| {
                s.split([' ', ','])
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            }),
        })
    }
}

/// The tool error when the user must sign in again (no secret in it).
fn reauthorize(why: impl std::fmt::Display) -> CallerCredentialError {
    CallerCredentialError::new(format!(
        "the API needs your authorization again ({why}); nothing was sent. Sign in again: reconnect this MCP server in your client (its OAuth flow starts over)"
    ))
}

/// The tool error when the user's API credential cannot be had now.
fn unavailable_message(why: &str) -> String {
    format!("your API credential cannot be obtained now ({why}); nothing was sent. Try again later")
}

fn short(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || "_- .".contains(*c))
        .take(60)
        .collect()
}

/// What the API's token endpoint gave.
struct UpstreamTokens {
    access_token: String,
    refresh_token: Option<String>,
    expires_in: Option<u64>,
    scope: Option<Vec<String>>,
}

enum UpstreamError {
    /// The API's authorization server said no (the grant is no good): authorize again.
    Refused(String),
    /// It could not be asked (network, 5xx): try later.
    Unavailable(String),
}

impl CallerCredentials for OAuthProxy {
    fn credential<'a>(&'a self, caller: &'a Caller, scheme: &'a str) -> CredentialFuture<'a> {
        Box::pin(async move {
            if scheme != self.cfg.scheme {
                return Ok(None);
            }
            if caller.subject.is_empty() {
                return Err(reauthorize("the token names no grant"));
            }
            self.upstream_token(&caller.subject).await.map(Some)
        })
    }
}

// ------------------------------------------------------------------------------ endpoints

fn json_response(status: StatusCode, v: &serde_json::Value) -> Response {
    let mut resp = (status, v.to_string()).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// An OAuth error answer (RFC 6749 §5.2).
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    let mut resp = json_response(
        status,
        &serde_json::json!({"error": error, "error_description": description}),
    );
    if status == StatusCode::UNAUTHORIZED {
        resp.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"token\""),
        );
    }
    resp
}

fn server_error(e: StoreError) -> Response {
    tracing::warn!("oauth-proxy: {e}");
    oauth_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        "the authorization store cannot be used now; try again later",
    )
}

/// A page for the user when the request cannot go back to the client.
fn page(status: StatusCode, text: &str) -> Response {
    let mut resp = (status, format!("{text}\n")).into_response();
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn redirect(to: &str) -> Response {
    let mut resp = StatusCode::FOUND.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn params(raw: Option<&str>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        // A repeated parameter is an error in OAuth; keeping the first is the safe reading.
        out.entry(k.into_owned()).or_insert_with(|| v.into_owned());
    }
    out
}

/// `redirect_uri` with the authorization response's parameters added.
fn back_to(redirect_uri: &str, pairs: &[(&str, &str)]) -> String {
    match Url::parse(redirect_uri) {
        Ok(mut u) => {
            {
                let mut q = u.query_pairs_mut();
                for (k, v) in pairs {
                    q.append_pair(k, v);
                }
            }
            u.to_string()
        }
        Err(_) => redirect_uri.to_string(),
    }
}

async fn metadata(State(p): State<Arc<OAuthProxy>>) -> Response {
    let mut resp = json_response(StatusCode::OK, &p.metadata());
    resp.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    resp
}

async fn jwks(State(p): State<Arc<OAuthProxy>>) -> Response {
    json_response(
        StatusCode::OK,
        &serde_json::to_value(p.jwks()).unwrap_or_default(),
    )
}

/// Same resource, ignoring one trailing slash.
fn same_resource(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

async fn authorize(
    State(p): State<Arc<OAuthProxy>>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Response {
    let q = params(raw.as_deref());
    let get = |k: &str| q.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let Some(client_id) = get("client_id") else {
        return page(StatusCode::BAD_REQUEST, "invalid request: no client_id");
    };
    let client = match p.client(client_id).await {
        Ok(Some(c)) => c,
        Ok(None) => {
            return page(
                StatusCode::BAD_REQUEST,
                "invalid request: unknown client_id (register first, at /register, or use the URL of a client metadata document)",
            );
        }
        Err(e) => return server_error(e),
    };
    let redirect_uri = match get("redirect_uri") {
        Some(r) if client.redirect_uris.iter().any(|u| u == r) => r.to_string(),
        Some(_) => {
            return page(
                StatusCode::BAD_REQUEST,
                "invalid request: redirect_uri is not one this client registered",
            );
        }
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => {
            return page(
                StatusCode::BAD_REQUEST,
                "invalid request: redirect_uri is required (the client registered several)",
            );
        }
    };
    if !p.redirect_allowed(&redirect_uri) {
        return page(
            StatusCode::BAD_REQUEST,
            "invalid request: redirect_uri's host is not one this server sends users back to (--oauth-proxy-redirect-hosts)",
        );
    }
    // A state too long to keep is not sent back either.
    let state_too_long = get("state").is_some_and(|s| s.len() > MAX_STATE_BYTES);
    let state = get("state").filter(|_| !state_too_long).map(str::to_string);
    let fail = |error: &str, desc: &str| {
        let mut pairs = vec![
            ("error", error),
            ("error_description", desc),
            ("iss", p.cfg.issuer.as_str()),
        ];
        if let Some(s) = &state {
            pairs.push(("state", s));
        }
        redirect(&back_to(&redirect_uri, &pairs))
    };
    if state_too_long {
        return fail(
            "invalid_request",
            &format!("state: at most {MAX_STATE_BYTES} bytes"),
        );
    }
    if get("response_type") != Some("code") {
        return fail(
            "unsupported_response_type",
            "only response_type=code is supported",
        );
    }
    let Some(challenge) = get("code_challenge") else {
        return fail(
            "invalid_request",
            "PKCE is required: send code_challenge with code_challenge_method=S256",
        );
    };
    if get("code_challenge_method") != Some("S256") {
        return fail(
            "invalid_request",
            "code_challenge_method must be S256 (plain is not accepted)",
        );
    }
    if !(43..=128).contains(&challenge.len()) {
        return fail("invalid_request", "code_challenge is not an S256 challenge");
    }
    let resource = match get("resource") {
        Some(r) if same_resource(r, &p.cfg.resource) => p.cfg.resource.clone(),
        Some(_) => {
            return fail(
                "invalid_target",
                "this authorization server issues tokens for its own MCP endpoint only",
            );
        }
        None => p.cfg.resource.clone(),
    };
    let scope = get("scope").unwrap_or("");
    let mut scopes: Vec<String> = Vec::new();
    for s in scope.split_ascii_whitespace() {
        if !scopes.iter().any(|x| x == s) {
            scopes.push(s.to_string());
        }
    }
    if scope.len() > MAX_SCOPE_BYTES || scopes.len() > MAX_SCOPES {
        return fail(
            "invalid_scope",
            &format!("scope: at most {MAX_SCOPES} scopes and {MAX_SCOPE_BYTES} bytes"),
        );
    }
    if !p.cfg.scopes.is_empty()
        && let Some(bad) = scopes.iter().find(|s| !p.cfg.scopes.contains(s))
    {
        return fail("invalid_scope", &format!("unknown scope {:?}", short(bad)));
    }
    let req = AuthRequest {
        client_id: client_id.to_string(),
        redirect_uri,
        state,
        code_challenge: challenge.to_string(),
        resource,
        scopes,
        expires: 0,
    };
    // The user's consent to this client first (the confused-deputy defence): remembered by
    // this browser, or asked on the proxy's own page.
    let browser = p.browser(&headers);
    if !p.approved(&browser, &req) {
        return p.consent_page(&browser, &req, &client);
    }
    match p.start_upstream(req).await {
        Ok(to) => redirect(&to),
        Err(resp) => resp,
    }
}

async fn callback(State(p): State<Arc<OAuthProxy>>, RawQuery(raw): RawQuery) -> Response {
    let q = params(raw.as_deref());
    let Some(state) = q.get("state").filter(|s| !s.is_empty()) else {
        return page(
            StatusCode::BAD_REQUEST,
            "invalid request: no state (start again from your MCP client)",
        );
    };
    let pending: Pending = match p.take(PENDING, &hashed(state)).await {
        Ok(Some(x)) => x,
        Ok(None) => {
            return page(
                StatusCode::BAD_REQUEST,
                "this sign-in is unknown, used already or expired: start again from your MCP client",
            );
        }
        Err(e) => return server_error(e),
    };
    let back = |pairs: &[(&str, &str)]| {
        let mut all: Vec<(&str, &str)> = pairs.to_vec();
        all.push(("iss", p.cfg.issuer.as_str()));
        if let Some(s) = &pending.state {
            all.push(("state", s));
        }
        redirect(&back_to(&pending.redirect_uri, &all))
    };
    if let Some(err) = q.get("error") {
        let error = match err.as_str() {
            "access_denied" | "invalid_scope" | "temporarily_unavailable" | "server_error" => {
                err.as_str()
            }
            _ => "access_denied",
        };
        return back(&[
            ("error", error),
            (
                "error_description",
                "the API's authorization server did not grant access",
            ),
        ]);
    }
    let Some(code) = q.get("code").filter(|c| !c.is_empty()) else {
        return back(&[
            ("error", "server_error"),
            (
                "error_description",
                "the API's authorization server sent no code",
            ),
        ]);
    };
    let callback = p.callback_url();
    let form = [
        ("code", code.as_str()),
        ("redirect_uri", callback.as_str()),
        ("code_verifier", pending.verifier.as_str()),
    ];
    let tokens = match p
        .upstream_token_request(&p.cfg.token_url, "authorization_code", &form)
        .await
    {
        Ok(t) => t,
        Err(UpstreamError::Refused(why)) | Err(UpstreamError::Unavailable(why)) => {
            tracing::warn!("oauth-proxy: exchanging a user's code at the API: {why}");
            return back(&[
                ("error", "server_error"),
                (
                    "error_description",
                    "the API's authorization server did not give a token for this sign-in",
                ),
            ]);
        }
    };
    // The scopes the API granted, when it says (GitHub separates them with commas).
    let scopes = match &tokens.scope {
        Some(granted) => pending
            .scopes
            .iter()
            .filter(|s| granted.contains(s))
            .cloned()
            .chain(
                granted
                    .iter()
                    .filter(|g| !pending.scopes.contains(g) && p.cfg.scopes.contains(g))
                    .cloned(),
            )
            .collect(),
        None => pending.scopes.clone(),
    };
    let grant_id = random_token();
    let grant = Grant {
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        expires_at: tokens.expires_in.map(|s| now() + s),
        issued_at: now(),
        client_id: pending.client_id.clone(),
    };
    if let Err(e) = p.put(GRANT, &grant_id, &grant, GRANT_TTL).await {
        return server_error(e);
    }
    let our_code = random_token();
    let record = Code {
        client_id: pending.client_id.clone(),
        redirect_uri: pending.redirect_uri.clone(),
        code_challenge: pending.code_challenge.clone(),
        resource: pending.resource.clone(),
        scopes,
        grant: grant_id,
    };
    if let Err(e) = p.put(CODE, &hashed(&our_code), &record, CODE_TTL).await {
        return server_error(e);
    }
    back(&[("code", &our_code)])
}

/// The client's credentials at `/token`: `Authorization: Basic` or the form's
/// `client_id`/`client_secret`.
fn client_credentials(
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Option<(String, Option<String>)> {
    if let Some(basic) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("basic").then_some(rest.trim())
        })
    {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic)
            .ok()?;
        let text = String::from_utf8(decoded).ok()?;
        let (id, secret) = text.split_once(':')?;
        let dec = |s: &str| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        };
        return Some((dec(id), Some(dec(secret))));
    }
    let id = form.get("client_id").filter(|s| !s.is_empty())?.clone();
    Some((id, form.get("client_secret").cloned()))
}

async fn token(
    State(p): State<Arc<OAuthProxy>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let form = params(std::str::from_utf8(&body).ok());
    let (client_id, client) = match authenticate(&p, &headers, &form).await {
        Ok(c) => c,
        Err(resp) => return resp,
    };
    let grant = TokenRequest {
        p: &p,
        client_id: &client_id,
        client: &client,
        form: &form,
    };
    match grant.get("grant_type") {
        Some("authorization_code") => grant.authorization_code().await,
        Some("refresh_token") => grant.refresh_token().await,
        Some(_) => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "grant_type must be authorization_code or refresh_token",
        ),
        None => oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "no grant_type"),
    }
}

/// The client of a `/token` request, authenticated: its id and registration, or the
/// `invalid_client` answer.
async fn authenticate(
    p: &OAuthProxy,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<(String, Client), Response> {
    let Some((client_id, secret)) = client_credentials(headers, form) else {
        return Err(oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "no client authentication (client_id)",
        ));
    };
    let client = match p.client(&client_id).await {
        Ok(Some(c)) => c,
        Ok(None) => {
            return Err(oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "unknown client",
            ));
        }
        Err(e) => return Err(server_error(e)),
    };
    if let Some(want) = &client.secret_sha256 {
        let ok = secret
            .as_deref()
            .is_some_and(|s| same_bytes(hashed(s).as_bytes(), want.as_bytes()));
        if !ok {
            return Err(oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "client authentication failed",
            ));
        }
    }
    Ok((client_id, client))
}

fn invalid_grant(description: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", description)
}

/// A `/token` request of an authenticated client.
struct TokenRequest<'a> {
    p: &'a OAuthProxy,
    client_id: &'a str,
    client: &'a Client,
    form: &'a HashMap<String, String>,
}

impl TokenRequest<'_> {
    /// A form parameter, when given and not empty.
    fn get(&self, k: &str) -> Option<&str> {
        self.form
            .get(k)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `grant_type=authorization_code`: the proxy's code, for its grant's first tokens.
    async fn authorization_code(&self) -> Response {
        let (p, client_id, client) = (self.p, self.client_id, self.client);
        let get = |k: &str| self.get(k);
        let Some(code) = get("code") else {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "no code");
        };
        // The client is checked before the code is spent: another client presenting it
        // (a leaked or stolen code) must not use it up for its owner.
        match p.get::<Code>(CODE, &hashed(code)).await {
            Ok(Some(c)) if c.client_id != client_id => {
                return invalid_grant("the code was issued to another client");
            }
            Ok(Some(_)) => {}
            Ok(None) => return invalid_grant("the code is unknown, used already or expired"),
            Err(e) => return server_error(e),
        }
        let record: Code = match p.take(CODE, &hashed(code)).await {
            Ok(Some(c)) => c,
            Ok(None) => return invalid_grant("the code is unknown, used already or expired"),
            Err(e) => return server_error(e),
        };
        if record.client_id != client_id {
            return invalid_grant("the code was issued to another client");
        }
        if get("redirect_uri").is_some_and(|r| r != record.redirect_uri) {
            return invalid_grant("redirect_uri differs from the authorization request's");
        }
        let Some(verifier) = get("code_verifier") else {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "PKCE code_verifier is required",
            );
        };
        if !same_bytes(s256(verifier).as_bytes(), record.code_challenge.as_bytes()) {
            return invalid_grant("code_verifier does not match the code_challenge");
        }
        if get("resource").is_some_and(|r| !same_resource(r, &record.resource)) {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_target",
                "resource differs from the authorization request's",
            );
        }
        // Its first token: the registration is kept as long as a used one.
        if client.unused {
            let kept = Client {
                unused: false,
                ..client.clone()
            };
            if let Err(e) = p.put(CLIENT, client_id, &kept, CLIENT_TTL).await {
                return server_error(e);
            }
            let _ = p.store.delete(CLIENT_NEW, client_id).await;
        }
        match p
            .issue(client_id, &record.grant, &record.scopes, &record.resource)
            .await
        {
            Ok(v) => json_response(StatusCode::OK, &v),
            Err(e) => server_error(e),
        }
    }

    /// `grant_type=refresh_token`: new tokens for the same grant, the refresh token rotated.
    async fn refresh_token(&self) -> Response {
        let (p, client_id) = (self.p, self.client_id);
        let get = |k: &str| self.get(k);
        let Some(rt) = get("refresh_token") else {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "no refresh_token",
            );
        };
        let record = match self.spend_refresh(rt).await {
            Ok(r) => r,
            Err(resp) => return resp,
        };
        if record.client_id != client_id {
            return invalid_grant("the refresh token was issued to another client");
        }
        if get("resource").is_some_and(|r| !same_resource(r, &record.resource)) {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_target",
                "resource differs from the original grant's",
            );
        }
        let scopes: Vec<String> = match get("scope") {
            None => record.scopes.clone(),
            Some(s) => {
                let asked: Vec<String> = s.split_ascii_whitespace().map(str::to_string).collect();
                if asked.iter().any(|a| !record.scopes.contains(a)) {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_scope",
                        "a refresh cannot add scopes; authorize again for more",
                    );
                }
                asked
            }
        };
        match p.get::<Grant>(GRANT, &record.grant).await {
            Ok(Some(_)) => {}
            Ok(None) => {
                return invalid_grant(
                    "the API authorization behind this token is gone; authorize again",
                );
            }
            Err(e) => return server_error(e),
        }
        match p
            .issue(client_id, &record.grant, &scopes, &record.resource)
            .await
        {
            Ok(v) => json_response(StatusCode::OK, &v),
            Err(e) => server_error(e),
        }
    }

    /// Spends a refresh token of this client (kept as used until it would have expired, so that
    /// a replay is caught): its record, or the answer. Presented by another client, it is
    /// refused without being spent; presented again after its rotation, its grant is revoked.
    async fn spend_refresh(&self, rt: &str) -> Result<Refresh, Response> {
        let (p, client_id) = (self.p, self.client_id);
        let key = hashed(rt);
        // The client first: a refresh token presented by another client is refused without
        // being spent, so its owner's next refresh is not taken for a replay (which would
        // revoke the owner's grant).
        match p.get::<Refresh>(REFRESH, &key).await {
            Ok(Some(r)) if r.client_id != client_id => {
                return Err(invalid_grant(
                    "the refresh token was issued to another client",
                ));
            }
            Ok(_) => {}
            Err(e) => return Err(server_error(e)),
        }
        let record: Refresh = match p.take(REFRESH, &key).await {
            Ok(Some(r)) => r,
            Ok(None) => return Err(self.replayed(&key).await),
            Err(e) => return Err(server_error(e)),
        };
        // Spent: remembered until it would have expired, so that a replay is caught.
        let ttl = if record.expires > now() {
            record.expires - now()
        } else {
            REFRESH_TTL
        };
        let used = UsedRefresh {
            grant: record.grant.clone(),
        };
        if let Err(e) = p.put(REFRESH_USED, &key, &used, ttl).await {
            return Err(server_error(e));
        }
        Ok(record)
    }

    /// The answer to a refresh token that is not (or no longer) live. A rotated one presented
    /// again means one of its two holders is not the client it was issued to: the grant is
    /// revoked, and the user authorizes again (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2).
    async fn replayed(&self, key: &str) -> Response {
        match self.p.get::<UsedRefresh>(REFRESH_USED, key).await {
            Ok(Some(used)) => {
                if let Err(e) = self.p.revoke(&used.grant).await {
                    return server_error(e);
                }
                tracing::warn!(
                    grant = %used.grant,
                    "oauth-proxy: a refresh token was presented again after its rotation; its grant is revoked (the user must authorize again)"
                );
                invalid_grant(
                    "the refresh token was used already; the authorization behind it is revoked: authorize again",
                )
            }
            Ok(None) => invalid_grant("the refresh token is unknown or expired"),
            Err(e) => server_error(e),
        }
    }
}

/// Whether a client may register `uri` as a redirect URI: an absolute URI without a fragment;
/// https, http to this machine only (native apps, RFC 8252 §7.3), or a private-use scheme
/// (`cursor://…`, RFC 8252 §7.1); never `javascript:`, `data:`, `file:` and the like.
fn redirect_uri_ok(uri: &str) -> Result<(), RedirectUriError> {
    let u = Url::parse(uri).map_err(|_| RedirectUriError::NotAbsolute(uri.to_string()))?;
    if u.fragment().is_some() {
        return Err(RedirectUriError::Fragment(uri.to_string()));
    }
    match u.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&u) => Ok(()),
        "http" => Err(RedirectUriError::PlainHttp(uri.to_string())),
        "javascript" | "data" | "file" | "blob" | "about" | "vbscript" | "ftp" | "ws" | "wss" => {
            Err(RedirectUriError::Scheme(
                uri.to_string(),
                u.scheme().to_string(),
            ))
        }
        // Private-use schemes of native apps (RFC 8252 §7.1).
        _ => Ok(()),
    }
}

/// Whether `uri` goes to one of `allowed` (`--oauth-proxy-redirect-hosts`; empty: any): its
/// host equal to an entry (ASCII case-insensitive, IPv6 with or without brackets), under a
/// `*.domain` entry, or its scheme named by a `scheme:` entry (an app's private-use scheme).
pub fn redirect_host_allowed(allowed: &[String], uri: &str) -> bool {
    if allowed.is_empty() {
        return true;
    }
    let Ok(u) = Url::parse(uri) else {
        return false;
    };
    let scheme = format!("{}:", u.scheme());
    let host = u
        .host_str()
        .map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase());
    allowed.iter().any(|a| {
        if a.ends_with(':') {
            return !matches!(u.scheme(), "http" | "https") && *a == scheme;
        }
        let Some(h) = &host else { return false };
        if !matches!(u.scheme(), "http" | "https") {
            return false;
        }
        match a.strip_prefix("*.") {
            Some(domain) => {
                h.len() > domain.len() + 1
                    && h.ends_with(domain)
                    && h.as_bytes()[h.len() - domain.len() - 1] == b'.'
            }
            None => h == a.trim_matches(['[', ']']),
        }
    })
}

/// Checks and normalises `--oauth-proxy-redirect-hosts` entries (lowercase).
fn parse_redirect_hosts(entries: &[String]) -> Result<Vec<String>, RedirectHostsError> {
    let mut out = Vec::new();
    for raw in entries.iter().flat_map(|e| e.split(',')) {
        let e = raw.trim().to_ascii_lowercase();
        if e.is_empty() {
            continue;
        }
        let ok = if let Some(scheme) = e.strip_suffix(':') {
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !matches!(scheme, "http" | "https" | "javascript" | "data" | "file")
        } else {
            let host = e.strip_prefix("*.").unwrap_or(&e);
            host.trim_matches(['[', ']'])
                .parse::<std::net::IpAddr>()
                .is_ok()
                || (!host.is_empty()
                    && !host.starts_with(['.', '-'])
                    && !host.ends_with('.')
                    && host
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c)))
        };
        if !ok {
            return Err(RedirectHostsError(raw.to_string()));
        }
        out.push(e);
    }
    Ok(out)
}

async fn register(State(p): State<Arc<OAuthProxy>>, body: axum::body::Bytes) -> Response {
    if body.len() > MAX_REGISTRATION_BYTES {
        return bad_metadata(format!(
            "the client metadata is larger than {MAX_REGISTRATION_BYTES} bytes"
        ));
    }
    let meta: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        _ => {
            return bad_metadata(
                "the body must be a JSON object of client metadata (RFC 7591)".into(),
            );
        }
    };
    let uris = match p.registered_redirect_uris(&meta) {
        Ok(u) => u,
        Err(refusal) => return refusal.response(),
    };
    let Registration {
        method,
        grant_types,
        response_types,
        name,
        scope,
    } = match Registration::of(&meta) {
        Ok(r) => r,
        Err(refusal) => return refusal.response(),
    };
    if let Err(resp) = p.room_to_register().await {
        return resp;
    }
    let client_id = random_token();
    let secret = (method != "none").then(random_token);
    let client = Client {
        redirect_uris: uris.clone(),
        secret_sha256: secret.as_deref().map(hashed),
        name: name.clone(),
        unused: true,
    };
    if let Err(e) = p
        .put(CLIENT_NEW, &client_id, &client, UNUSED_CLIENT_TTL)
        .await
    {
        return server_error(e);
    }
    let mut out = serde_json::json!({
        "client_id": client_id,
        "client_id_issued_at": now(),
        "redirect_uris": uris,
        "token_endpoint_auth_method": method,
        "grant_types": grant_types,
        "response_types": response_types,
    });
    if let Some(n) = name {
        out["client_name"] = n.into();
    }
    if let Some(scope) = scope {
        out["scope"] = scope.into();
    }
    if let Some(s) = secret {
        out["client_secret"] = s.into();
        out["client_secret_expires_at"] = 0.into();
    }
    json_response(StatusCode::CREATED, &out)
}

/// Why a registration is refused (RFC 7591 §3.2.2), with the description for the client.
enum Refusal {
    /// `invalid_client_metadata`.
    Metadata(String),
    /// `invalid_redirect_uri`.
    RedirectUri(String),
}

impl Refusal {
    fn response(self) -> Response {
        let (error, d) = match self {
            Refusal::Metadata(d) => ("invalid_client_metadata", d),
            Refusal::RedirectUri(d) => ("invalid_redirect_uri", d),
        };
        json_response(
            StatusCode::BAD_REQUEST,
            &serde_json::json!({"error": error, "error_description": d}),
        )
    }
}

fn bad_metadata(d: String) -> Response {
    Refusal::Metadata(d).response()
}

/// What a registration asks for besides its redirect URIs, checked.
struct Registration<'a> {
    method: &'a str,
    grant_types: Vec<String>,
    response_types: Vec<String>,
    name: Option<String>,
    scope: Option<&'a str>,
}

impl<'a> Registration<'a> {
    fn of(meta: &'a serde_json::Value) -> Result<Self, Refusal> {
        let bad = |d: String| Err(Refusal::Metadata(d));
        let method = meta
            .get("token_endpoint_auth_method")
            .and_then(|v| v.as_str())
            .unwrap_or("client_secret_basic");
        if !["none", "client_secret_post", "client_secret_basic"].contains(&method) {
            return bad(format!(
                "token_endpoint_auth_method {:?} is not supported (none, client_secret_post, client_secret_basic)",
                short(method)
            ));
        }
        let strings = |k: &str| -> Option<Vec<String>> {
            meta.get(k)?.as_array().map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
        };
        let grant_types =
            strings("grant_types").unwrap_or_else(|| vec!["authorization_code".to_string()]);
        if let Some(g) = grant_types
            .iter()
            .find(|g| !["authorization_code", "refresh_token"].contains(&g.as_str()))
        {
            return bad(format!(
                "grant type {:?} is not supported (authorization_code, refresh_token)",
                short(g)
            ));
        }
        let response_types = strings("response_types").unwrap_or_else(|| vec!["code".to_string()]);
        if response_types.iter().any(|r| r != "code") {
            return bad("response_types: only code".into());
        }
        let name = meta
            .get("client_name")
            .and_then(|v| v.as_str())
            .map(str::to_string);
        if name
            .as_ref()
            .is_some_and(|n| n.chars().count() > MAX_CLIENT_NAME_CHARS)
        {
            return bad(format!(
                "client_name: at most {MAX_CLIENT_NAME_CHARS} characters"
            ));
        }
        let scope = meta.get("scope").and_then(|v| v.as_str());
        if scope.is_some_and(|s| {
            s.len() > MAX_SCOPE_BYTES || s.split_ascii_whitespace().count() > MAX_SCOPES
        }) {
            return bad(format!(
                "scope: at most {MAX_SCOPES} scopes and {MAX_SCOPE_BYTES} bytes"
            ));
        }
        Ok(Registration {
            method,
            grant_types,
            response_types,
            name,
            scope,
        })
    }
}

impl OAuthProxy {
    /// A registration's `redirect_uris`, checked (1 to [`MAX_REDIRECT_URIS`], each allowed),
    /// without repeats.
    fn registered_redirect_uris(&self, meta: &serde_json::Value) -> Result<Vec<String>, Refusal> {
        let p = self;
        let bad = |d: String| Err(Refusal::Metadata(d));
        let bad_uri = |d: String| Err(Refusal::RedirectUri(d));
        match meta.get("redirect_uris").and_then(|v| v.as_array()) {
            Some(a) if !a.is_empty() && a.len() <= MAX_REDIRECT_URIS => {
                let mut out: Vec<String> = Vec::new();
                for (i, u) in a.iter().enumerate() {
                    let Some(s) = u.as_str() else {
                        return bad_uri(format!("redirect_uris/{i}: must be a string"));
                    };
                    if s.len() > MAX_REDIRECT_URI_BYTES {
                        return bad_uri(format!(
                            "redirect_uris/{i}: longer than {MAX_REDIRECT_URI_BYTES} bytes"
                        ));
                    }
                    if let Err(e) = redirect_uri_ok(s) {
                        return bad_uri(format!("redirect_uris/{i}: {e}"));
                    }
                    if !p.redirect_allowed(s) {
                        return bad_uri(format!(
                            "redirect_uris/{i}: {:?}: its host is not one this server sends users back to (--oauth-proxy-redirect-hosts)",
                            s
                        ));
                    }
                    if !out.iter().any(|o| o == s) {
                        out.push(s.to_string());
                    }
                }
                Ok(out)
            }
            _ => bad(format!(
                "redirect_uris: 1 to {MAX_REDIRECT_URIS} redirect URIs are required"
            )),
        }
    }

    /// Whether another client that never got a token may be kept: registrations that never got
    /// a token are bounded (and forgotten after a day).
    async fn room_to_register(&self) -> Result<(), Response> {
        let p = self;
        match p.store.count(CLIENT_NEW).await {
            Ok(n) if n >= p.cfg.bounds.unused_clients => {
                tracing::warn!(
                    "oauth-proxy: {n} registered clients have not signed in yet, the most kept ({}); refusing registrations until some sign in or expire",
                    p.cfg.bounds.unused_clients
                );
                let mut resp = json_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &serde_json::json!({"error": "temporarily_unavailable", "error_description": format!("this server holds {} registrations that have not signed in yet, the most it keeps; try again later", p.cfg.bounds.unused_clients)}),
                );
                resp.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("3600"));
                Err(resp)
            }
            Ok(_) => Ok(()),
            Err(e) => Err(server_error(e)),
        }
    }
}

#[cfg(test)]
mod tests;

// ------------------------------------------------------------------------------ setup

/// An authorization-code scheme: name, authorizationUrl, tokenUrl, refreshUrl, scopes.
type Flow<'a> = (
    &'a String,
    &'a String,
    &'a String,
    &'a Option<String>,
    &'a Vec<String>,
);

/// Checks the options against the spec's schemes and the environment ([`STORE_KEY_ENV`],
/// [`UPSTREAM_SECRET_ENV`]); relative flow URLs are resolved against the API's base URL.
pub fn configure(
    args: ProxyArgs<'_>,
    schemes: &[(String, openapi_mcp_toolset::model::SecurityScheme)],
    base_url: &Url,
    env: impl Fn(&str) -> Option<String>,
) -> Result<ProxyConfig, ConfigError> {
    use openapi_mcp_toolset::model::SecurityScheme;
    let url = Url::parse(args.url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .ok_or_else(|| ConfigError::NotHttpUrl(args.url.to_string()))?;
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(ConfigError::NotAnOrigin(args.url.to_string()));
    }
    if url.scheme() != "https" && !is_loopback(&url) {
        return Err(ConfigError::PlainHttp(args.url.to_string()));
    }
    let issuer = url.origin().ascii_serialization();
    let flows: Vec<Flow<'_>> = schemes
        .iter()
        .filter_map(|(n, s)| match s {
            SecurityScheme::OAuth2AuthorizationCode {
                authorization_url,
                token_url,
                refresh_url,
                scopes,
            } => Some((n, authorization_url, token_url, refresh_url, scopes)),
            _ => None,
        })
        .collect();
    let names = || {
        flows
            .iter()
            .map(|f| f.0.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let flow = match args.scheme {
        Some(name) => flows.iter().find(|f| f.0 == name).ok_or_else(|| {
            if flows.is_empty() {
                ConfigError::NamedSchemeButNoFlows(name.to_string())
            } else {
                ConfigError::UnknownScheme {
                    name: name.to_string(),
                    known: names(),
                }
            }
        })?,
        None => match flows.as_slice() {
            [one] => one,
            [] => {
                return Err(ConfigError::NoFlow);
            }
            _ => {
                return Err(ConfigError::SeveralFlows(names()));
            }
        },
    };
    let (scheme, authorization_url, token_url, refresh_url, scopes) = *flow;
    let resolve = |what: &'static str, u: &str| -> Result<Url, ConfigError> {
        let parsed = match Url::parse(u) {
            Ok(p) => p,
            Err(url::ParseError::RelativeUrlWithoutBase) => {
                base_url.join(u).map_err(|reason| ConfigError::FlowUrl {
                    what,
                    url: u.to_string(),
                    scheme: scheme.clone(),
                    reason,
                })?
            }
            Err(reason) => {
                return Err(ConfigError::FlowUrl {
                    what,
                    url: u.to_string(),
                    scheme: scheme.clone(),
                    reason,
                });
            }
        };
        if parsed.scheme() != "https" && !(parsed.scheme() == "http" && is_loopback(&parsed)) {
            return Err(ConfigError::InsecureFlowUrl {
                what,
                scheme: scheme.clone(),
                origin: parsed.origin().ascii_serialization(),
            });
        }
        Ok(parsed)
    };
    let authorization_url = resolve("authorizationUrl", authorization_url)?;
    let token_url = resolve("tokenUrl", token_url)?;
    let refresh_url = match refresh_url {
        Some(r) => resolve("refreshUrl", r)?,
        None => token_url.clone(),
    };
    let client_id = args
        .client_id
        .filter(|c| !c.is_empty())
        .ok_or(ConfigError::NoUpstreamClient)?
        .to_string();
    let client_secret = env(UPSTREAM_SECRET_ENV).filter(|s| !s.is_empty());
    let key = env(STORE_KEY_ENV)
        .filter(|k| !k.is_empty())
        .ok_or(ConfigError::NoStoreKey)?;
    if key.len() < 32 {
        return Err(ConfigError::ShortStoreKey(key.len()));
    }
    let store = match args.store {
        Some(s) => StoreSpec::parse(s).map_err(ConfigError::Store)?,
        None => StoreSpec::Sqlite(StoreSpec::default_path(&env)),
    };
    let resource = match args.audience {
        Some(a) => a.to_string(),
        None => format!("{issuer}/mcp"),
    };
    Ok(ProxyConfig {
        issuer,
        resource,
        scheme: scheme.clone(),
        authorization_url,
        token_url,
        refresh_url,
        scopes: scopes.clone(),
        client_id,
        client_secret,
        store,
        key: key.into_bytes(),
        redirect_hosts: parse_redirect_hosts(args.redirect_hosts)?,
        bounds: limits::StoreBounds::default(),
        rate_limited: true,
    })
}

/// Builds the authorization server from the `--oauth-proxy*` options: what the `openapi-mcp`
/// binary (and a generated server built with the proxy) hands to serving as its
/// [`openapi_mcp_runtime::oauth::authorization::OAuthProxyFactory`].
pub fn factory(
    args: ProxyArgs<'_>,
    context: ProxyContext<'_>,
) -> Result<Arc<dyn AuthorizationServer>, SetupFailure> {
    let cfg = configure(args, context.schemes, context.base_url, context.env)
        .map_err(SetupError::from)?;
    Ok(Arc::new(OAuthProxy::new(cfg)?))
}

impl AuthorizationServer for OAuthProxy {
    fn issuer(&self) -> &str {
        &self.cfg.issuer
    }

    fn resource(&self) -> &str {
        &self.cfg.resource
    }

    fn scheme(&self) -> &str {
        &self.cfg.scheme
    }

    fn jwks(&self) -> &jsonwebtoken::jwk::JwkSet {
        &self.jwks
    }

    fn router(self: Arc<Self>) -> axum::Router {
        OAuthProxy::router(&self)
    }

    fn describe(&self, api: Option<&str>) -> String {
        let of_api = api.map(|a| format!("API {a}, ")).unwrap_or_default();
        format!(
            "OAuth proxy: authorization server {} ({of_api}scheme {}; register {} at the API's authorization server); store {}",
            self.cfg.issuer,
            self.cfg.scheme,
            self.callback_url(),
            self.store_description()
        )
    }
}
