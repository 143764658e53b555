//! The `oauth_proxy` fuzz target's check (#36): a short sequence of requests decoded from the
//! fuzz bytes (`/register`, `/authorize`, the consent form's `POST /oauth/consent`,
//! `/oauth/callback`, `/token`, the metadata, and raw requests to those paths) driven in-process
//! through the `--oauth-proxy` routes ([`OAuthProxy::router`]), from a client address the input
//! picks (the per-address rate limits are on), on one current-thread Tokio runtime reused across
//! inputs. State carries across the steps of one input: the client it registered, the last
//! consent form and its cookie, the last `state` sent to the API's authorization server.
//!
//! Invariants: no panic; each answer within [`STEP_TIMEOUT`]; no 5xx but the documented refusal
//! when the registrations that never got a token reach their bound; no secret (the upstream
//! client secret, the store key) in any answer; no markup of the input in a page (the marker
//! `<x-fuzz` never appears unescaped); a `Location` is an absolute URL and never a
//! `javascript:`/`data:`/`file:` one; after each input the store holds no more registrations
//! without a token, sign-ins in progress or cached metadata documents than its bounds.
//!
//! Nothing leaves the machine: the API's token endpoint is `127.0.0.1:1` (refused at once), and
//! every `client_id` that would name a metadata document URL is rewritten to one on
//! `127.0.0.1:1` (the proxy is on loopback, so it may fetch there; nothing listens).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use http::{HeaderValue, Method, Request, StatusCode, header};
use tower::ServiceExt as _;

use openapi_mcp_oauth_proxy::limits::StoreBounds;
use openapi_mcp_oauth_proxy::{OAuthProxy, ProxyArgs, configure, s256};
use openapi_mcp_toolset::model::SecurityScheme;

use super::MAX_INPUT;
use super::reader::{Reader, Writer};
use crate::harness::base64;

/// Each request must be answered within this.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(5);
/// The proxy's public URL (loopback: metadata documents on loopback may be fetched).
pub const ISSUER: &str = "http://127.0.0.1:7000";
pub const UPSTREAM_SECRET: &str = "fuzz-upstream-client-secret-0123456789";
pub const STORE_KEY: &str = "fuzz-store-key-0123456789abcdef0123456789abcdef";
/// The API's authorization server (never contacted: the browser would go there).
pub const AUTHORIZATION_URL: &str = "https://as.example.test/authorize";
/// The API's token endpoint: nothing listens, the callback's exchange fails at once.
pub const TOKEN_URL: &str = "http://127.0.0.1:1/token";
/// What the fixture's store may hold of what strangers create.
pub const BOUNDS: StoreBounds = StoreBounds {
    unused_clients: 200,
    pending: 200,
    documents: 20,
};
/// Injected into names, scopes and states: it must never reach a page unescaped.
const MARKER: &str = "<x-fuzz a='1'>\"&";
const MAX_BODY: usize = 4 << 20;

pub const REDIRECTS: &[&str] = &[
    "http://127.0.0.1:5000/cb",
    "https://app.example.test/cb",
    "cursor://anysphere.cursor-retrieval/oauth/callback",
    "http://evil.example/cb",
    "javascript:alert(1)",
    "https://app.example.test/cb#frag",
    "data:text/html,x",
    "",
];
pub const PATHS: &[&str] = &[
    "/register",
    "/authorize",
    "/oauth/consent",
    "/oauth/callback",
    "/token",
    "/.well-known/oauth-authorization-server",
    "/oauth/jwks",
];
const METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "OPTIONS", "HEAD"];
const AUTH_METHODS: &[&str] = &[
    "none",
    "client_secret_post",
    "client_secret_basic",
    "private_key_jwt",
    "",
];
const GRANT_TYPES: &[&str] = &[
    "authorization_code",
    "refresh_token",
    "client_credentials",
    "",
];
const SCOPES: &[&str] = &["repo", "user", "repo user", "admin", "", "repo repo repo"];
const ORIGINS: &[&str] = &[ISSUER, "", "https://evil.example", "null"];

/// The proxy, a client it knows, and the runtime the checks run on.
pub struct OAuthFixture {
    rt: tokio::runtime::Runtime,
    pub proxy: Arc<OAuthProxy>,
    /// A public client registered when the fixture was made (redirect [`REDIRECTS`]`[0..2]`).
    pub client_id: String,
}

impl OAuthFixture {
    pub fn new() -> Result<Self, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let schemes = [(
            "oauth".to_string(),
            SecurityScheme::OAuth2AuthorizationCode {
                authorization_url: AUTHORIZATION_URL.into(),
                token_url: TOKEN_URL.into(),
                refresh_url: None,
                scopes: vec!["repo".into(), "user".into()],
            },
        )];
        let base = url::Url::parse("http://127.0.0.1:1/v1/").map_err(|e| e.to_string())?;
        let env = |k: &str| match k {
            "OPENAPI_MCP_STORE_KEY" => Some(STORE_KEY.to_string()),
            "OPENAPI_MCP_UPSTREAM_CLIENT_SECRET" => Some(UPSTREAM_SECRET.to_string()),
            _ => None,
        };
        let mut cfg = configure(
            ProxyArgs {
                url: ISSUER,
                client_id: Some("upstream-client"),
                store: Some("sqlite::memory:"),
                ..Default::default()
            },
            &schemes,
            &base,
            env,
        )
        .map_err(|e| e.to_string())?;
        cfg.bounds = BOUNDS;
        let proxy = Arc::new(OAuthProxy::new(cfg).map_err(|e| e.to_string())?);
        let client_id = rt.block_on(async {
            let req = Request::post("/register")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(
                    serde_json::json!({"redirect_uris": [REDIRECTS[0], REDIRECTS[1]], "token_endpoint_auth_method": "none", "client_name": "fixture"})
                        .to_string(),
                ))
                .map_err(|e| e.to_string())?;
            let resp = proxy
                .router()
                .oneshot(req)
                .await
                .map_err(|e| e.to_string())?;
            let body = axum::body::to_bytes(resp.into_body(), MAX_BODY)
                .await
                .map_err(|e| e.to_string())?;
            let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
            v["client_id"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("the fixture's registration: {v}"))
        })?;
        Ok(OAuthFixture {
            rt,
            proxy,
            client_id,
        })
    }
}

/// What one input's steps remember.
#[derive(Default)]
struct Session {
    client_id: Option<String>,
    cookie: Option<String>,
    /// (request, csrf) of the last consent page.
    form: Option<(String, String)>,
    /// The `state` of the last redirect to the API's authorization server.
    upstream_state: Option<String>,
}

/// A `client_id` that cannot make the proxy fetch from anywhere but `127.0.0.1:1`.
fn safe_client_id(s: &str) -> String {
    if s.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("http")) {
        let tail: String = url::form_urlencoded::byte_serialize(s.as_bytes()).collect();
        format!("http://127.0.0.1:1/{tail}")
    } else {
        s.to_string()
    }
}

/// A form or query with every `client_id` made safe.
fn safe_form(raw: &[u8]) -> String {
    let mut ser = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in url::form_urlencoded::parse(raw) {
        if k == "client_id" {
            ser.append_pair(&k, &safe_client_id(&v));
        } else {
            ser.append_pair(&k, &v);
        }
    }
    ser.finish()
}

fn text(r: &mut Reader<'_>, max: usize) -> String {
    match r.choose(4) {
        0 => r.string(),
        1 => r.long_string(max),
        2 => format!("{}{MARKER}", r.string()),
        _ => String::new(),
    }
}

fn address(r: &mut Reader<'_>) -> SocketAddr {
    let n = r.u16();
    let ip = if n & 1 == 0 {
        IpAddr::V4(Ipv4Addr::new(10, 0, (n >> 8) as u8, n as u8))
    } else {
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, n, 0, 0, 0, 0, 1))
    };
    SocketAddr::new(ip, 40000)
}

fn client_id(r: &mut Reader<'_>, fx: &OAuthFixture, s: &Session) -> String {
    match r.choose(5) {
        0 | 1 => fx.client_id.clone(),
        2 => s.client_id.clone().unwrap_or_else(|| fx.client_id.clone()),
        3 => "http://127.0.0.1:1/client.json".into(),
        _ => safe_client_id(&r.string()),
    }
}

/// One step's request, decoded.
fn request(r: &mut Reader<'_>, fx: &OAuthFixture, s: &Session) -> Request<Body> {
    let cookie_of = |r: &mut Reader<'_>, s: &Session| match r.choose(3) {
        0 => s.cookie.clone(),
        1 => None,
        _ => Some(format!("openapi-mcp-consent={}", r.string())),
    };
    let b = Request::builder();
    let (b, body) = match r.choose(7) {
        0 => {
            let b = b
                .method(Method::POST)
                .uri("/register")
                .header(header::CONTENT_TYPE, "application/json");
            let body = if r.flag() {
                let n = r.choose(10);
                let uris: Vec<serde_json::Value> = (0..n)
                    .map(|_| match r.choose(3) {
                        0 | 1 => REDIRECTS[r.choose(REDIRECTS.len())].into(),
                        _ => text(r, 4096).into(),
                    })
                    .collect();
                let mut meta = serde_json::json!({"redirect_uris": uris});
                if r.flag() {
                    meta["token_endpoint_auth_method"] =
                        AUTH_METHODS[r.choose(AUTH_METHODS.len())].into();
                }
                if r.flag() {
                    meta["client_name"] = text(r, 1024).into();
                }
                if r.flag() {
                    meta["scope"] = text(r, 4096).into();
                }
                if r.flag() {
                    meta["grant_types"] =
                        serde_json::json!([GRANT_TYPES[r.choose(GRANT_TYPES.len())]]);
                }
                if r.flag() {
                    meta["extra"] = r.value(3, 32 * 1024);
                }
                meta.to_string()
            } else {
                r.long_string(80 * 1024)
            };
            (b, Body::from(body))
        }
        1 => {
            let mut q = url::form_urlencoded::Serializer::new(String::new());
            q.append_pair("client_id", &client_id(r, fx, s));
            if r.choose(4) != 0 {
                q.append_pair("response_type", if r.flag() { "code" } else { "token" });
            }
            match r.choose(4) {
                0 => {}
                1 => {
                    q.append_pair("redirect_uri", &text(r, 1024));
                }
                _ => {
                    q.append_pair("redirect_uri", REDIRECTS[r.choose(3)]);
                }
            }
            match r.choose(4) {
                0 => {}
                1 => {
                    q.append_pair("code_challenge", &text(r, 256));
                }
                _ => {
                    q.append_pair("code_challenge", &s256(&"v".repeat(50)));
                }
            }
            if r.choose(4) != 0 {
                q.append_pair(
                    "code_challenge_method",
                    if r.flag() { "S256" } else { "plain" },
                );
            }
            if r.flag() {
                q.append_pair("state", &text(r, 70 * 1024));
            }
            if r.flag() {
                let scope = if r.flag() {
                    SCOPES[r.choose(SCOPES.len())].to_string()
                } else {
                    text(r, 4096)
                };
                q.append_pair("scope", &scope);
            }
            if r.flag() {
                let res = if r.flag() {
                    format!("{ISSUER}/mcp")
                } else {
                    text(r, 256)
                };
                q.append_pair("resource", &res);
            }
            let mut b = b
                .method(Method::GET)
                .uri(format!("/authorize?{}", q.finish()));
            if let Some(c) = cookie_of(r, s) {
                b = b.header(header::COOKIE, c);
            }
            (b, Body::empty())
        }
        2 => {
            let (mut request, mut csrf) = s.form.clone().unwrap_or_default();
            if r.choose(4) == 0 {
                request = r.string();
            }
            if r.choose(4) == 0 {
                csrf = r.string();
            }
            let decision = ["approve", "deny", "", "maybe"][r.choose(4)];
            let mut f = url::form_urlencoded::Serializer::new(String::new());
            f.append_pair("request", &request)
                .append_pair("csrf", &csrf)
                .append_pair("decision", decision);
            let mut b = b
                .method(Method::POST)
                .uri("/oauth/consent")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
            let origin = ORIGINS[r.choose(ORIGINS.len())];
            if !origin.is_empty() {
                b = b.header(header::ORIGIN, origin);
            }
            if let Some(c) = cookie_of(r, s) {
                b = b.header(header::COOKIE, c);
            }
            (b, Body::from(f.finish()))
        }
        3 => {
            let mut q = url::form_urlencoded::Serializer::new(String::new());
            let state = match r.choose(3) {
                0 => s.upstream_state.clone().unwrap_or_default(),
                1 => text(r, 4096),
                _ => String::new(),
            };
            q.append_pair("state", &state);
            match r.choose(3) {
                0 => {
                    q.append_pair("code", &text(r, 1024));
                }
                1 => {
                    q.append_pair("error", &text(r, 256));
                }
                _ => {}
            }
            let b = b
                .method(Method::GET)
                .uri(format!("/oauth/callback?{}", q.finish()));
            (b, Body::empty())
        }
        4 => {
            let cid = client_id(r, fx, s);
            let mut f = url::form_urlencoded::Serializer::new(String::new());
            f.append_pair("grant_type", GRANT_TYPES[r.choose(GRANT_TYPES.len())]);
            for k in [
                "code",
                "code_verifier",
                "refresh_token",
                "redirect_uri",
                "resource",
                "scope",
            ] {
                if r.flag() {
                    f.append_pair(k, &text(r, 2048));
                }
            }
            let mut b = b
                .method(Method::POST)
                .uri("/token")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
            if r.flag() {
                let secret = r.string();
                let id: String = url::form_urlencoded::byte_serialize(cid.as_bytes()).collect();
                let basic = base64(format!("{id}:{secret}").as_bytes());
                b = b.header(header::AUTHORIZATION, format!("Basic {basic}"));
            } else {
                f.append_pair("client_id", &cid);
            }
            (b, Body::from(f.finish()))
        }
        5 => {
            let path = if r.flag() {
                "/.well-known/oauth-authorization-server"
            } else {
                "/oauth/jwks"
            };
            (b.method(Method::GET).uri(path), Body::empty())
        }
        _ => {
            let method = METHODS[r.choose(METHODS.len())];
            let path = PATHS[r.choose(PATHS.len())];
            let query = safe_form(r.bytes());
            let raw_body = r.long_string(32 * 1024);
            let raw_body = if path == "/register" {
                raw_body
            } else {
                safe_form(raw_body.as_bytes())
            };
            let content_type = [
                "application/json",
                "application/x-www-form-urlencoded",
                "text/plain",
            ][r.choose(3)];
            let b = b
                .method(method)
                .uri(format!("{path}?{query}"))
                .header(header::CONTENT_TYPE, content_type);
            (b, Body::from(raw_body))
        }
    };
    b.body(body).unwrap_or_default()
}

/// Runs the input; `Err` names the broken invariant.
pub fn check_oauth_proxy(fx: &OAuthFixture, data: &[u8]) -> Result<(), String> {
    if data.len() > MAX_INPUT {
        return Ok(());
    }
    let mut r = Reader::new(data);
    let peer = address(&mut r);
    let steps = 1 + r.choose(4);
    let mut s = Session::default();
    fx.rt.block_on(async {
        for step in 0..steps {
            let mut req = request(&mut r, fx, &s);
            req.extensions_mut()
                .insert(axum::extract::ConnectInfo(peer));
            let what = format!(
                "step {step}: {} {}",
                req.method(),
                cut(&req.uri().to_string())
            );
            let resp = tokio::time::timeout(STEP_TIMEOUT, fx.proxy.router().oneshot(req))
                .await
                .map_err(|_| format!("{what}: no answer within {STEP_TIMEOUT:?}"))?
                .map_err(|e| format!("{what}: {e}"))?;
            let status = resp.status();
            let headers = resp.headers().clone();
            let body = tokio::time::timeout(
                STEP_TIMEOUT,
                axum::body::to_bytes(resp.into_body(), MAX_BODY),
            )
            .await
            .map_err(|_| format!("{what}: the body did not end within {STEP_TIMEOUT:?}"))?
            .map_err(|e| format!("{what}: body: {e}"))?;
            let text = String::from_utf8_lossy(&body);
            if status.is_server_error() {
                let counts = fx
                    .proxy
                    .stranger_records()
                    .await
                    .map_err(|e| format!("{what}: the store: {e}"))?;
                let capacity = status == StatusCode::SERVICE_UNAVAILABLE
                    && text.contains("the most it keeps")
                    && counts.unused_clients >= BOUNDS.unused_clients;
                if !capacity {
                    return Err(format!("{what}: {status}: {}", cut(&text)));
                }
            }
            for secret in [UPSTREAM_SECRET, STORE_KEY] {
                let in_headers = headers
                    .values()
                    .any(|v| String::from_utf8_lossy(v.as_bytes()).contains(secret));
                if text.contains(secret) || in_headers {
                    return Err(format!("{what}: a secret in the answer"));
                }
            }
            let html = headers
                .get(header::CONTENT_TYPE)
                .is_some_and(|v| v.as_bytes().starts_with(b"text/html"));
            if html && text.contains("<x-fuzz") {
                return Err(format!("{what}: input markup in the page: {}", cut(&text)));
            }
            if let Some(loc) = headers.get(header::LOCATION) {
                let loc = loc
                    .to_str()
                    .map_err(|_| format!("{what}: a Location that is not text"))?;
                let u = url::Url::parse(loc)
                    .map_err(|e| format!("{what}: Location {}: {e}", cut(loc)))?;
                if matches!(u.scheme(), "javascript" | "data" | "file" | "vbscript") {
                    return Err(format!("{what}: a redirect to {}", cut(loc)));
                }
                if loc.starts_with(AUTHORIZATION_URL) {
                    s.upstream_state = u
                        .query_pairs()
                        .find(|(k, _)| k == "state")
                        .map(|(_, v)| v.into_owned());
                }
            }
            if let Some(c) = headers
                .get(header::SET_COOKIE)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(';').next())
            {
                s.cookie = Some(c.to_string());
            }
            if html && let Some(form) = consent_fields(&text) {
                if headers
                    .get(header::X_FRAME_OPTIONS)
                    .map(HeaderValue::as_bytes)
                    != Some(b"DENY")
                {
                    return Err(format!("{what}: a consent page that can be framed"));
                }
                s.form = Some(form);
            }
            if status == StatusCode::CREATED
                && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body)
            {
                s.client_id = v["client_id"].as_str().map(str::to_string);
            }
        }
        let counts = fx
            .proxy
            .stranger_records()
            .await
            .map_err(|e| format!("the store: {e}"))?;
        if counts.unused_clients > BOUNDS.unused_clients
            || counts.pending > BOUNDS.pending
            || counts.documents > BOUNDS.documents
        {
            return Err(format!("the store grew past its bounds: {counts:?}"));
        }
        Ok(())
    })
}

/// The consent form's (request, csrf).
fn consent_fields(html: &str) -> Option<(String, String)> {
    let field = |name: &str| {
        let marker = format!("name=\"{name}\" value=\"");
        let at = html.find(&marker)? + marker.len();
        let rest = &html[at..];
        Some(rest[..rest.find('"')?].to_string())
    };
    Some((field("request")?, field("csrf")?))
}

fn cut(s: &str) -> String {
    s.chars().take(200).collect()
}

/// Hand-written seeds: the flows a client and a browser go through, and the attacks of #36.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let addr = |w: Writer| w.u16(2);
    let authorize_fixture = |w: Writer, scope_pick: usize| {
        // client: the fixture's; response_type code; redirect pick 0; a valid challenge; S256;
        // a state; a scope from the list; the resource; the kept cookie.
        w.pick(1)
            .pick(0)
            .pick(1)
            .pick(1)
            .pick(2)
            .pick(0)
            .pick(2)
            .pick(1)
            .pick(1)
            .pick(1)
            .pick(0)
            .string("st")
            .pick(1)
            .pick(1)
            .pick(scope_pick)
            .pick(1)
            .pick(1)
            .pick(0)
    };
    let approve = |w: Writer, decision: usize, origin: usize| {
        w.pick(2)
            .pick(1)
            .pick(1)
            .pick(decision)
            .pick(origin)
            .pick(0)
    };
    let mut out = Vec::new();
    // Register (structured): two redirect URIs, public, a name with markup.
    let reg = addr(Writer::new())
        .pick(0)
        .pick(0)
        .pick(1)
        .pick(2)
        .pick(0)
        .pick(0)
        .pick(0)
        .pick(1)
        .pick(1)
        .pick(0)
        .pick(1)
        .pick(2)
        .string("Claude")
        .pick(0)
        .pick(0)
        .pick(0);
    out.push(("register".to_string(), reg.finish()));
    // The page, then approve: on to the API's authorization server; then the callback.
    let w = authorize_fixture(addr(Writer::new()).pick(2), 0);
    let w = approve(w, 0, 0);
    let w = w.pick(3).pick(0).pick(0).pick(0).string("api-code");
    out.push(("authorize-approve-callback".to_string(), w.finish()));
    // The page, then approve (a sign-in left in progress).
    let w = authorize_fixture(addr(Writer::new()).pick(1), 0);
    out.push(("authorize-approve".to_string(), approve(w, 0, 0).finish()));
    // The page, then deny.
    let w = authorize_fixture(addr(Writer::new()).pick(1), 2);
    out.push(("authorize-deny".to_string(), approve(w, 1, 0).finish()));
    // The page, then a forged approval from another origin, and one without the cookie.
    let w = authorize_fixture(addr(Writer::new()).pick(2), 0);
    let w = approve(w, 0, 2);
    let w = w.pick(2).pick(1).pick(1).pick(0).pick(0).pick(1);
    out.push(("authorize-forged-consents".to_string(), w.finish()));
    // A huge state.
    let w = addr(Writer::new())
        .pick(0)
        .pick(1)
        .pick(0)
        .pick(1)
        .pick(1)
        .pick(2)
        .pick(0)
        .pick(2)
        .pick(1)
        .pick(1)
        .pick(1)
        .pick(1)
        .string("state-")
        .u16(12000);
    out.push(("authorize-huge-state".to_string(), w.finish()));
    // Token requests: a refresh token of nobody's; a code with Basic auth.
    let w = addr(Writer::new())
        .pick(0)
        .pick(4)
        .pick(0)
        .pick(1)
        .pick(0)
        .pick(0)
        .pick(1)
        .pick(0)
        .string("rt-unknown")
        .pick(0)
        .pick(0)
        .pick(0)
        .pick(0);
    out.push(("token-refresh-unknown".to_string(), w.finish()));
    // A metadata document client on loopback (nothing listens).
    let w = addr(Writer::new())
        .pick(0)
        .pick(1)
        .pick(3)
        .pick(1)
        .pick(1)
        .pick(2)
        .pick(2);
    out.push(("authorize-cimd-unreachable".to_string(), w.finish()));
    // Raw requests.
    for (i, path) in PATHS.iter().enumerate() {
        let w = addr(Writer::new())
            .pick(0)
            .pick(6)
            .pick(1)
            .pick(i)
            .string("client_id=https%3A%2F%2Fexample.com%2Fc&x=1")
            .string(r#"{"redirect_uris":["https://a.example/cb"]}"#)
            .u16(1)
            .pick(0);
        out.push((
            format!("raw-{}", path.trim_start_matches('/').replace('/', "_")),
            w.finish(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_checks::reader::tests::{files_in, root};

    /// Every seed and saved crash input passes the check.
    #[test]
    fn oauth_proxy_corpus_replays() {
        let fx = OAuthFixture::new().expect("fixture");
        let seeds = files_in(&root().join("fuzz/seeds/oauth_proxy"));
        assert!(seeds.len() >= 10, "seed corpus missing");
        let mut inputs = seeds;
        inputs.extend(files_in(&root().join("fuzz/regressions/oauth_proxy")));
        for p in inputs {
            let data = std::fs::read(&p).expect("read input");
            if let Err(e) = check_oauth_proxy(&fx, &data) {
                panic!("{}: {e}", p.display());
            }
        }
    }

    /// The seeds reach what they are for: the consent page, the approval's redirect to the
    /// API's authorization server and the callback, and the check catches a broken invariant.
    #[test]
    fn oauth_proxy_seeds_reach_the_consent_flow() {
        let fx = OAuthFixture::new().expect("fixture");
        for (name, data) in seeds() {
            check_oauth_proxy(&fx, &data).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        // The approval seed left a sign-in in progress: it went past the consent page.
        let counts = fx.rt.block_on(fx.proxy.stranger_records()).expect("counts");
        assert!(counts.pending >= 1, "{counts:?}");
        assert!(counts.unused_clients >= 2, "{counts:?}");
        // The invariant on markup is live: a page with the marker is reported.
        assert!(consent_fields("<input type=\"hidden\" name=\"request\" value=\"r\"><input type=\"hidden\" name=\"csrf\" value=\"c\">").is_some());
    }

    #[test]
    fn client_ids_never_name_another_host() {
        for s in [
            "https://example.com/c",
            "HTTP://x/y",
            "http://127.0.0.1@evil/x",
        ] {
            let safe = safe_client_id(s);
            let u = url::Url::parse(&safe).expect("url");
            assert_eq!(u.host_str(), Some("127.0.0.1"), "{s}");
            assert_eq!(u.port(), Some(1), "{s}");
        }
        assert_eq!(safe_client_id("abc"), "abc");
        assert!(
            safe_form(b"client_id=https%3A%2F%2Fevil.example%2Fx&a=b").contains("127.0.0.1%3A1")
        );
    }

    /// Writes `fuzz/seeds/oauth_proxy`:
    /// `cargo test -p openapi-mcp-tests --lib fuzz_checks::oauth_proxy -- --ignored`.
    #[test]
    #[ignore = "writes the seed corpus"]
    fn write_seeds() {
        let dir = root().join("fuzz/seeds/oauth_proxy");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (name, data) in seeds() {
            std::fs::write(dir.join(name), data).expect("write seed");
        }
    }
}
