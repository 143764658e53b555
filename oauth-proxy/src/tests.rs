use super::*;
use openapi_mcp_toolset::model::SecurityScheme;
use tower::ServiceExt as _;

const KEY: &str = "0123456789abcdef0123456789abcdef-test-key";

fn code_scheme(name: &str, auth: &str, token: &str) -> (String, SecurityScheme) {
    (
        name.into(),
        SecurityScheme::OAuth2AuthorizationCode {
            authorization_url: auth.into(),
            token_url: token.into(),
            refresh_url: None,
            scopes: vec!["repo".into(), "user".into()],
        },
    )
}

fn env(extra: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k: &str| {
        extra
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

fn base() -> Url {
    Url::parse("https://api.example.com/v3/").expect("static URL")
}

fn args(store: &str) -> ProxyArgs<'_> {
    ProxyArgs {
        url: "http://127.0.0.1:7000",
        client_id: Some("up-client"),
        store: Some(store),
        ..Default::default()
    }
}

fn temp_store() -> (tempdir::Dir, String) {
    let d = tempdir::Dir::new();
    let spec = format!("sqlite:{}", d.0.join("s.sqlite3").display());
    (d, spec)
}

mod tempdir {
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Self {
            let mut b = [0u8; 8];
            super::random_bytes(&mut b);
            let name: String = b.iter().map(|x| format!("{x:02x}")).collect();
            let p = std::env::temp_dir().join(format!("openapi-mcp-oauth-proxy-{name}"));
            let _ = std::fs::create_dir_all(&p);
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn proxy(store: &str) -> Arc<OAuthProxy> {
    let schemes = [code_scheme(
        "oauth",
        "https://as.example.com/authorize",
        "/oauth/token",
    )];
    let cfg = configure(
        args(store),
        &schemes,
        &base(),
        env(&[(STORE_KEY_ENV, KEY), (UPSTREAM_SECRET_ENV, "up-secret")]),
    )
    .expect("configured");
    Arc::new(OAuthProxy::new(cfg).expect("opened"))
}

#[test]
fn configure_takes_the_only_authorization_code_scheme_and_resolves_its_urls() {
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let c = p.config();
    assert_eq!(c.issuer, "http://127.0.0.1:7000");
    assert_eq!(c.resource, "http://127.0.0.1:7000/mcp");
    assert_eq!(c.scheme, "oauth");
    assert_eq!(c.token_url.as_str(), "https://api.example.com/oauth/token");
    assert_eq!(c.refresh_url, c.token_url);
    assert_eq!(c.client_secret.as_deref(), Some("up-secret"));
    assert_eq!(p.callback_url(), "http://127.0.0.1:7000/oauth/callback");
    assert!(!format!("{c:?}").contains("up-secret"));
    assert!(!format!("{c:?}").contains(KEY));
}

#[test]
fn configure_refuses_what_cannot_work() {
    let keyed = || env(&[(STORE_KEY_ENV, KEY)]);
    let one = [code_scheme("a", "https://as/a", "https://as/t")];
    let err = |a: ProxyArgs<'_>, s: &[(String, SecurityScheme)], e| {
        configure(a, s, &base(), e)
            .expect_err("refused")
            .to_string()
    };
    let a = args("sqlite:/tmp/x");
    // No authorization-code scheme at all; several without a choice; a wrong choice.
    assert!(err(a, &[("k".into(), SecurityScheme::Bearer)], keyed()).contains("no oauth2 scheme"));
    let two = [
        one[0].clone(),
        code_scheme("b", "https://as/a", "https://as/t"),
    ];
    assert!(err(a, &two, keyed()).contains("--oauth-proxy-scheme"));
    let named = ProxyArgs {
        scheme: Some("b"),
        ..a
    };
    assert_eq!(
        configure(named, &two, &base(), keyed())
            .expect("chosen")
            .scheme,
        "b"
    );
    let wrong = ProxyArgs {
        scheme: Some("zzz"),
        ..a
    };
    assert!(err(wrong, &two, keyed()).contains("a, b"));
    // Secrets over plain http to another host; a URL with a path; http to another host.
    let http = [code_scheme("a", "https://as/a", "http://as.example/t")];
    assert!(err(a, &http, keyed()).contains("not https"));
    for url in [
        "https://mcp.example.com/x",
        "http://mcp.example.com",
        "ftp://x",
    ] {
        let a2 = ProxyArgs { url, ..a };
        assert!(err(a2, &one, keyed()).contains("--oauth-proxy"), "{url}");
    }
    // No client id; no key; a short key.
    let no_id = ProxyArgs {
        client_id: None,
        ..a
    };
    assert!(err(no_id, &one, keyed()).contains("--upstream-client-id"));
    assert!(err(a, &one, env(&[])).contains(STORE_KEY_ENV));
    assert!(err(a, &one, env(&[(STORE_KEY_ENV, "short")])).contains("at least 32 bytes"));
    // Stores this build does not have; a Redis password never shows.
    for store in [
        "rediss://h:6380?ca=/nonexistent/ca.pem",
        "rediss://:hunter2-password@h:6380?ca=/dev/null",
        "redis://:hunter2-password@h:6380?ca=/tmp/ca.pem",
        "redis://:hunter2-password@h:6380?tls=1",
        "postgres://h/db",
        "postgres://u:hunter2-password@h/db?sslmode=bogus",
        "postgres://u:hunter2-password@h/db?sslrootcert=/tmp/ca.pem",
        "postgres://u:hunter2-password@h/db?sslmode=require&sslrootcert=/nonexistent/ca.pem",
        "postgresql://u:hunter2-password@h:5432/db?bogus=1",
        "memory:",
    ] {
        let other = ProxyArgs {
            store: Some(store),
            ..a
        };
        let e = err(other, &one, keyed());
        assert!(e.contains("--oauth-store"), "{store}: {e}");
        assert!(!e.contains("hunter2"), "{store}: {e}");
    }
    let redis = ProxyArgs {
        store: Some("redis://:hunter2-password@cache.internal:6380/2"),
        ..a
    };
    let cfg = configure(redis, &one, &base(), keyed()).expect("redis");
    let shown = format!("{cfg:?}");
    assert!(shown.contains("redis://cache.internal:6380/2"), "{shown}");
    assert!(!shown.contains("hunter2"), "{shown}");
    for url in [
        "postgres://app:hunter2-password@db.internal:5433/oauth",
        "postgresql://app:hunter2-password@db.internal:5433/oauth?sslmode=disable",
    ] {
        let pg = ProxyArgs {
            store: Some(url),
            ..a
        };
        let cfg = configure(pg, &one, &base(), keyed()).expect("postgres");
        let shown = format!("{cfg:?}");
        assert!(
            shown.contains("postgres://app@db.internal:5433/oauth"),
            "{shown}"
        );
        assert!(!shown.contains("hunter2"), "{shown}");
        let st = store::PostgresStore::parse(url).expect("parses");
        assert_eq!(st.describe(), "postgres://app@db.internal:5433/oauth");
    }
    let st = store::PostgresStore::parse(
        "postgres://app:hunter2-password@db.internal/oauth?sslmode=require&connect_timeout=3",
    )
    .expect("TLS with the platform's roots");
    assert_eq!(
        st.describe(),
        "postgres://app@db.internal:5432/oauth?sslmode=verify-full"
    );
}

#[test]
fn sealed_values_open_only_with_their_key_and_record() {
    let s = Sealer::new(&derive(KEY.as_bytes(), "store sealing v1"));
    let sealed = s.seal("grant", "g1", b"upstream-token");
    assert!(
        !sealed
            .windows(b"upstream-token".len())
            .any(|w| w == b"upstream-token")
    );
    assert_eq!(
        s.open("grant", "g1", &sealed).expect("opens"),
        b"upstream-token"
    );
    assert!(s.open("grant", "g2", &sealed).is_err(), "another record");
    assert!(s.open("code", "g1", &sealed).is_err(), "another kind");
    let mut tampered = sealed.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    assert!(s.open("grant", "g1", &tampered).is_err(), "tampered");
    let other = Sealer::new(&derive(
        b"another-key-another-key-another-key!",
        "store sealing v1",
    ));
    assert!(other.open("grant", "g1", &sealed).is_err(), "another key");
    assert_ne!(
        s.seal("grant", "g1", b"x"),
        s.seal("grant", "g1", b"x"),
        "a fresh nonce per value"
    );
}

#[tokio::test]
async fn issued_tokens_pass_the_resource_server_with_the_grant_as_subject() {
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let tokens = p
        .issue(
            "client-1",
            "grant-1",
            &["repo".into()],
            &p.config().resource,
        )
        .await
        .expect("issued");
    let access = tokens["access_token"].as_str().expect("a token");
    let rs =
        openapi_mcp_runtime::oauth::ResourceServer::new(openapi_mcp_runtime::oauth::OAuthOptions {
            issuer: p.config().issuer.clone(),
            audience: p.config().resource.clone(),
            jwks_url: None,
            hide_unauthorized_tools: false,
            scopes_supported: vec![],
            introspection: None,
            jwks: Some(p.jwks().clone()),
        });
    let claims = rs.validate(access).await.expect("valid");
    assert_eq!(claims.subject.as_deref(), Some("grant-1"));
    assert_eq!(claims.scopes, vec!["repo".to_string()]);
    assert_eq!(tokens["expires_in"], ACCESS_TTL);
    // Another audience does not pass; nor does a token of another key.
    let elsewhere = p
        .issue("client-1", "grant-1", &[], "http://127.0.0.1:1/mcp")
        .await
        .expect("issued");
    assert_eq!(
        rs.validate(elsewhere["access_token"].as_str().expect("token"))
            .await
            .expect_err("refused"),
        openapi_mcp_runtime::oauth::TokenError::Audience
    );
    // Instances sharing the store key accept each other's tokens.
    let (_d2, store2) = temp_store();
    let twin = proxy(&store2);
    assert_eq!(twin.jwks().keys.len(), 1);
    assert_eq!(
        serde_json::to_value(twin.jwks()).expect("json"),
        serde_json::to_value(p.jwks()).expect("json")
    );
}

#[tokio::test]
async fn caller_credentials_come_from_the_grant_or_ask_to_authorize_again() {
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let caller = Caller::new("grant-1".into(), "mcp-token", None);
    // Another scheme: not this proxy's business.
    assert_eq!(p.credential(&caller, "other").await, Ok(None));
    // No grant on record.
    let e = p.credential(&caller, "oauth").await.expect_err("no grant");
    assert!(
        e.message.contains("sign in again") || e.message.contains("Sign in again"),
        "{e:?}"
    );
    assert!(e.to_string().contains("again"), "{e}");
    // A live grant: its API token.
    let g = Grant {
        access_token: "api-token-1".into(),
        refresh_token: None,
        expires_at: Some(now() + 3600),
        issued_at: now(),
        client_id: "c".into(),
    };
    p.put(GRANT, "grant-1", &g, GRANT_TTL).await.expect("put");
    assert_eq!(
        p.credential(&caller, "oauth").await,
        Ok(Some("api-token-1".into()))
    );
    // Expired, and nothing to renew it with: authorize again (and the grant is gone).
    let g = Grant {
        expires_at: Some(now() - 5),
        issued_at: now() - 100,
        ..g
    };
    p.put(GRANT, "grant-1", &g, GRANT_TTL).await.expect("put");
    let e = p.credential(&caller, "oauth").await.expect_err("expired");
    assert!(
        e.message.contains("sign in again") || e.message.contains("Sign in again"),
        "{e:?}"
    );
    assert!(
        p.get::<Grant>(GRANT, "grant-1")
            .await
            .expect("get")
            .is_none()
    );
}

#[test]
fn short_lived_api_tokens_are_renewed_from_half_their_life() {
    let g = |issued: u64, expires: u64| Grant {
        access_token: String::new(),
        refresh_token: None,
        expires_at: Some(expires),
        issued_at: issued,
        client_id: String::new(),
    };
    let t = now();
    assert!(g(t, t + 3600).fresh());
    assert!(!g(t - 3600, t + 20).fresh(), "within the 30 s margin");
    assert!(g(t, t + 6).fresh(), "6 s token: fresh for 3 s");
    assert!(!g(t - 4, t + 2).fresh());
}

#[test]
fn redirect_uris_are_https_loopback_http_or_an_app_scheme() {
    for ok in [
        "https://claude.ai/api/mcp/auth_callback",
        "http://127.0.0.1:33418/callback",
        "http://localhost:8000/cb",
        "http://[::1]:9/cb",
        "cursor://anysphere.cursor-retrieval/oauth/callback",
    ] {
        assert!(redirect_uri_ok(ok).is_ok(), "{ok}");
    }
    for bad in [
        "http://evil.example/cb",
        "javascript:alert(1)",
        "data:text/html,x",
        "https://x.example/cb#frag",
        "/relative",
        "file:///etc/passwd",
    ] {
        assert!(redirect_uri_ok(bad).is_err(), "{bad}");
    }
}

#[test]
fn token_answers_are_json_or_form_encoded() {
    let j = openapi_mcp_runtime::oauth::token_post::token_fields(
        "application/json",
        br#"{"access_token":"a","expires_in":3600,"scope":"repo user","refresh_token":"r"}"#,
    );
    assert_eq!(j["access_token"], "a");
    assert_eq!(j["expires_in"], "3600");
    let f = openapi_mcp_runtime::oauth::token_post::token_fields(
        "application/x-www-form-urlencoded",
        b"access_token=gho_x&scope=repo%2Cgist&token_type=bearer",
    );
    assert_eq!(f["access_token"], "gho_x");
    assert_eq!(f["scope"], "repo,gist");
}

async fn send(p: &Arc<OAuthProxy>, req: axum::http::Request<axum::body::Body>) -> Response {
    p.router().oneshot(req).await.expect("infallible")
}

fn get(uri: &str) -> axum::http::Request<axum::body::Body> {
    axum::http::Request::get(uri)
        .body(axum::body::Body::empty())
        .expect("request")
}

async fn body_json(resp: Response) -> serde_json::Value {
    let b = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .expect("body");
    serde_json::from_slice(&b).unwrap_or(serde_json::Value::Null)
}

#[tokio::test]
async fn registration_then_authorize_redirects_to_the_api_with_the_proxys_own_pkce() {
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let meta = body_json(send(&p, get("/.well-known/oauth-authorization-server")).await).await;
    assert_eq!(meta["issuer"], "http://127.0.0.1:7000");
    assert_eq!(
        meta["code_challenge_methods_supported"],
        serde_json::json!(["S256"])
    );
    let reg = axum::http::Request::post("/register")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(
            r#"{"redirect_uris":["http://127.0.0.1:5000/cb"],"token_endpoint_auth_method":"client_secret_post","client_name":"t"}"#,
        ))
        .expect("request");
    let resp = send(&p, reg).await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    let reg = body_json(resp).await;
    let cid = reg["client_id"].as_str().expect("client_id").to_string();
    assert!(reg["client_secret"].as_str().is_some_and(|s| s.len() >= 40));
    let challenge = s256(&"v".repeat(50));
    let q = format!(
        "/authorize?response_type=code&client_id={cid}&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcb&state=xyz&code_challenge={challenge}&code_challenge_method=S256&scope=repo&resource=http%3A%2F%2F127.0.0.1%3A7000%2Fmcp"
    );
    let resp = approve(&p, &q, None).await.1;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let to = Url::parse(resp.headers()[header::LOCATION].to_str().expect("location")).expect("url");
    assert_eq!(to.host_str(), Some("as.example.com"));
    let qp: HashMap<String, String> = to.query_pairs().into_owned().collect();
    assert_eq!(qp["client_id"], "up-client");
    assert_eq!(qp["redirect_uri"], "http://127.0.0.1:7000/oauth/callback");
    assert_eq!(qp["code_challenge_method"], "S256");
    assert_ne!(qp["code_challenge"], challenge, "the proxy's own verifier");
    assert_ne!(qp["state"], "xyz", "the proxy's own state");
    assert_eq!(qp["scope"], "repo");
    // A confidential client must authenticate at /token.
    let t = axum::http::Request::post("/token")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(axum::body::Body::from(format!(
            "grant_type=authorization_code&code=nope&client_id={cid}"
        )))
        .expect("request");
    let resp = send(&p, t).await;
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(body_json(resp).await["error"], "invalid_client");
    // An unknown state at the callback: a page, no redirect.
    let resp = send(&p, get("/oauth/callback?code=c&state=unknown")).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert!(resp.headers().get(header::LOCATION).is_none());
}

#[test]
fn only_public_addresses_are_fetched_on_a_clients_say_so() {
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "fd00::1",
        "::ffff:10.0.0.1",
        // IPv6 forms that carry a private IPv4 address (#36): NAT64, 6to4, Teredo (server or
        // client, the client's inverted), IPv4-translated, IPv4-compatible.
        "64:ff9b::7f00:1",
        "64:ff9b::10.0.0.1",
        "64:ff9b::169.254.169.254",
        "64:ff9b:1::1",
        "64:ff9b:1:ffff::8.8.8.8",
        "2002:7f00:1::",
        "2002:a00:1::1",
        "2002:a9fe:a9fe::1",
        "2001:0:a00:1::1",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
        "::ffff:0:127.0.0.1",
        "::ffff:0:a00:1",
        "::10.0.0.1",
        "::127.0.0.1",
        // Other reserved blocks of both families.
        "192.0.0.8",
        "198.18.0.1",
        "fec0::1",
        "100::1",
        "2001:2::1",
        "2001:20::1",
        "3fff::1",
    ] {
        assert!(!public_address(ip.parse().expect("ip")), "{ip}");
    }
    for ip in [
        "93.184.216.34",
        "2606:4700::1111",
        "8.8.8.8",
        // Embedded public IPv4 addresses stay public.
        "64:ff9b::808:808",
        "2002:808:808::1",
        "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
    ] {
        assert!(public_address(ip.parse().expect("ip")), "{ip}");
    }
}

#[tokio::test]
async fn a_client_metadata_document_is_a_client_when_it_names_itself() {
    // A document server on this machine: allowed because this proxy is on loopback too.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let me = format!("http://{addr}/client.json");
    let doc = serde_json::json!({
        "client_id": me, "client_name": "cimd test",
        "redirect_uris": ["http://127.0.0.1:5000/cb"], "token_endpoint_auth_method": "none"
    });
    let liar = serde_json::json!({"client_id": "http://elsewhere/x", "redirect_uris": ["http://127.0.0.1:5000/cb"]});
    let app = axum::Router::new()
        .route(
            "/client.json",
            axum::routing::get(move || {
                let d = doc.to_string();
                async move { d }
            }),
        )
        .route(
            "/liar.json",
            axum::routing::get(move || {
                let d = liar.to_string();
                async move { d }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let meta = body_json(send(&p, get("/.well-known/oauth-authorization-server")).await).await;
    assert_eq!(meta["client_id_metadata_document_supported"], true);
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let challenge = s256(&"v".repeat(50));
    let authorize = |cid: &str| {
        format!(
            "/authorize?response_type=code&client_id={}&redirect_uri={}&state=s&code_challenge={challenge}&code_challenge_method=S256",
            enc(cid),
            enc("http://127.0.0.1:5000/cb")
        )
    };
    let resp = approve(&p, &authorize(&me), None).await.1;
    assert_eq!(
        resp.status(),
        StatusCode::SEE_OTHER,
        "the document's client"
    );
    assert!(
        resp.headers()[header::LOCATION]
            .to_str()
            .expect("location")
            .starts_with("https://as.example.com/authorize?")
    );
    for bad in [
        format!("http://{addr}/liar.json"),
        format!("http://{addr}/missing.json"),
        format!("http://{addr}/"),
        "http://10.0.0.1/client.json".to_string(),
    ] {
        let resp = send(&p, get(&authorize(&bad))).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{bad}");
    }
    // On a public host, plain http and loopback documents are refused.
    assert!(fetch_client_document(&me, false).await.is_err());
}

async fn register_public_client(p: &Arc<OAuthProxy>) -> String {
    let reg = axum::http::Request::post("/register")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(
            r#"{"redirect_uris":["http://127.0.0.1:5000/cb"],"token_endpoint_auth_method":"none"}"#,
        ))
        .expect("request");
    body_json(send(p, reg).await).await["client_id"]
        .as_str()
        .expect("id")
        .to_string()
}

fn refresh_form(client_id: &str, rt: &str) -> axum::http::Request<axum::body::Body> {
    axum::http::Request::post("/token")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(axum::body::Body::from(format!(
            "grant_type=refresh_token&client_id={client_id}&refresh_token={rt}"
        )))
        .expect("request")
}

fn live_grant(token: &str) -> Grant {
    Grant {
        access_token: token.into(),
        refresh_token: Some(format!("{token}-refresh")),
        expires_at: Some(now() + 3600),
        issued_at: now(),
        client_id: "c".into(),
    }
}

#[tokio::test]
async fn a_rotated_refresh_token_presented_again_revokes_its_grant() {
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let cid = register_public_client(&p).await;
    p.put(GRANT, "grant-1", &live_grant("api-token-1"), GRANT_TTL)
        .await
        .expect("put");
    p.put(GRANT, "grant-2", &live_grant("api-token-2"), GRANT_TTL)
        .await
        .expect("put");
    let first = p
        .issue(&cid, "grant-1", &["repo".into()], &p.config().resource)
        .await
        .expect("issued");
    let rt1 = first["refresh_token"].as_str().expect("rt").to_string();
    // The legitimate rotation: a new pair, the grant still serves calls.
    let resp = send(&p, refresh_form(&cid, &rt1)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let second = body_json(resp).await;
    let rt2 = second["refresh_token"].as_str().expect("rt").to_string();
    assert_ne!(rt1, rt2);
    let caller = Caller::new("grant-1".into(), "mcp-token", None);
    assert_eq!(
        p.credential(&caller, "oauth").await,
        Ok(Some("api-token-1".into()))
    );
    // An unknown token revokes nothing.
    let resp = send(&p, refresh_form(&cid, "never-issued")).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let e = body_json(resp).await;
    assert_eq!(e["error"], "invalid_grant");
    assert!(!e.to_string().contains("revoked"), "{e}");
    assert!(p.credential(&caller, "oauth").await.is_ok());
    // The spent token again (an attacker's copy, or the client's): invalid_grant, and the
    // whole grant is revoked.
    let resp = send(&p, refresh_form(&cid, &rt1)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let e = body_json(resp).await;
    assert_eq!(e["error"], "invalid_grant");
    assert!(
        e["error_description"]
            .as_str()
            .is_some_and(|d| d.contains("revoked") && d.contains("authorize again")),
        "{e}"
    );
    assert!(!e.to_string().contains(&rt1), "no token in the answer");
    // The user's API tokens are gone; calls with the newer access token say to sign in again.
    assert!(
        p.get::<Grant>(GRANT, "grant-1")
            .await
            .expect("get")
            .is_none()
    );
    let err = p.credential(&caller, "oauth").await.expect_err("revoked");
    assert!(err.to_string().contains("Sign in again"), "{err}");
    // The newer refresh token, live until now, is refused too (and is then spent).
    let resp = send(&p, refresh_form(&cid, &rt2)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(body_json(resp).await["error"], "invalid_grant");
    // Another user's grant is untouched.
    assert_eq!(
        p.credential(&Caller::new("grant-2".into(), "t", None), "oauth")
            .await,
        Ok(Some("api-token-2".into()))
    );
    // The mark of a spent token is sealed and keyed by its hash, and expires with the token.
    assert!(
        p.store
            .get(REFRESH_USED, &rt1)
            .await
            .expect("get")
            .is_none()
    );
    let sealed = p
        .store
        .get(REFRESH_USED, &hashed(&rt1))
        .await
        .expect("get")
        .expect("the mark");
    assert!(!sealed.windows(7).any(|w| w == b"grant-1"));
    // A grant revoked while a renewal writes it back: the mark is there for the renewal to see.
    assert_eq!(
        p.get::<bool>(REVOKED, "grant-1").await.expect("get"),
        Some(true)
    );
}

#[tokio::test]
async fn a_grant_revoked_while_its_api_token_is_renewed_stays_revoked() {
    // The API's token endpoint: the revocation lands while it is renewing the user's token.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let slot: Arc<std::sync::OnceLock<Arc<OAuthProxy>>> = Arc::default();
    let in_handler = Arc::clone(&slot);
    let app = axum::Router::new().route(
        "/token",
        axum::routing::post(move || {
            let slot = Arc::clone(&in_handler);
            async move {
                if let Some(p) = slot.get() {
                    p.revoke("grant-1").await.expect("revoked");
                }
                axum::Json(serde_json::json!({
                    "access_token": "api-token-renewed", "token_type": "bearer", "expires_in": 3600
                }))
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (_d, store) = temp_store();
    let schemes = [code_scheme(
        "oauth",
        "https://as.example.com/authorize",
        &format!("http://{addr}/token"),
    )];
    let cfg = configure(
        args(&store),
        &schemes,
        &base(),
        env(&[(STORE_KEY_ENV, KEY), (UPSTREAM_SECRET_ENV, "up-secret")]),
    )
    .expect("configured");
    let p = Arc::new(OAuthProxy::new(cfg).expect("opened"));
    let expired = Grant {
        expires_at: Some(now() - 5),
        issued_at: now() - 100,
        ..live_grant("api-token-old")
    };
    let caller = Caller::new("grant-1".into(), "mcp-token", None);
    // Without a revocation, the renewal serves the call.
    p.put(GRANT, "grant-1", &expired, GRANT_TTL)
        .await
        .expect("put");
    assert_eq!(
        p.credential(&caller, "oauth").await,
        Ok(Some("api-token-renewed".into()))
    );
    // Revoked during the renewal: the renewed token is not written back, the call says to sign
    // in again.
    p.put(GRANT, "grant-1", &expired, GRANT_TTL)
        .await
        .expect("put");
    let _ = slot.set(Arc::clone(&p));
    let e = p.credential(&caller, "oauth").await.expect_err("revoked");
    assert!(e.to_string().contains("Sign in again"), "{e}");
    assert!(
        p.get::<Grant>(GRANT, "grant-1")
            .await
            .expect("get")
            .is_none()
    );
}

/// A Redis server of this machine's (`redis-server` on PATH) on a free loopback port, with
/// `extra` arguments; `None` (and the test says it is skipped) without one.
async fn redis_server_with(extra: &[&str], tls_port: bool) -> Option<(std::process::Child, u16)> {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").ok()?;
        l.local_addr().ok()?.port()
    };
    let port_arg = if tls_port { "--tls-port" } else { "--port" };
    let child = std::process::Command::new("redis-server")
        .args([
            port_arg,
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(extra)
        .stdout(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("skipped: no redis-server on PATH (apt-get install redis-server)");
        return None;
    };
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Some((child, port));
        }
        if let Ok(Some(status)) = child.try_wait() {
            eprintln!("skipped: redis-server {extra:?} exited ({status}): built without TLS?");
            return None;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

async fn redis_server() -> Option<(std::process::Child, String)> {
    let (child, port) = redis_server_with(&[], false).await?;
    Some((child, format!("redis://127.0.0.1:{port}")))
}

/// A CA and a server certificate for 127.0.0.1 it issued (`ca.pem`, `server.pem`,
/// `server.key`), and another CA (`other-ca.pem`), made with the `openssl` command; `None`
/// (and the test says it is skipped) without it.
fn tls_files(dir: &std::path::Path) -> Option<()> {
    let run = |args: &[&str]| {
        std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let ca = |name: &str| {
        run(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.pem"),
            "-days",
            "2",
            "-subj",
            &format!("/CN={name}"),
        ])
    };
    if !ca("ca") {
        eprintln!(
            "skipped: no openssl command to make test certificates (apt-get install openssl)"
        );
        return None;
    }
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .ok()?;
    let ok = ca("other-ca")
        && run(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ])
        && run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ]);
    ok.then_some(())
}

#[tokio::test]
async fn two_instances_share_users_through_redis_over_tls() {
    let dir = tempdir::Dir::new();
    if tls_files(&dir.0).is_none() {
        return;
    }
    let file = |n: &str| dir.0.join(n).display().to_string();
    let Some((mut server, port)) = redis_server_with(
        &[
            "--port",
            "0",
            "--tls-cert-file",
            &file("server.pem"),
            "--tls-key-file",
            &file("server.key"),
            "--tls-ca-cert-file",
            &file("ca.pem"),
            "--tls-auth-clients",
            "no",
            "--requirepass",
            "redis-tls-password",
        ],
        true,
    )
    .await
    else {
        return;
    };
    let url = format!(
        "rediss://:redis-tls-password@127.0.0.1:{port}/?ca={}",
        file("ca.pem")
    );
    let st = store::RedisStore::parse(&url).expect("url");
    assert_eq!(
        st.describe(),
        format!("rediss://127.0.0.1:{port}/0?ca={}", file("ca.pem"))
    );
    openapi_mcp_store::contract::check(&st).await;
    // A CA that did not issue the server's certificate: a clear error, no password in it.
    let wrong = store::RedisStore::parse(&url.replace("ca.pem", "other-ca.pem")).expect("url");
    let e = wrong
        .get("code", "k")
        .await
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("TLS handshake") && e.contains("UnknownIssuer"),
        "{e}"
    );
    assert!(e.contains("other-ca.pem"), "{e}");
    assert!(!e.contains("redis-tls-password"), "{e}");
    // Without ?ca=, the platform's roots do not know this test CA either.
    let platform =
        store::RedisStore::parse(&format!("rediss://:redis-tls-password@127.0.0.1:{port}"))
            .expect("url");
    let e = platform
        .get("code", "k")
        .await
        .expect_err("refused")
        .to_string();
    assert!(e.contains("TLS handshake"), "{e}");
    // The right CA, the wrong password: Redis's own refusal.
    let e = store::RedisStore::parse(&url.replace("redis-tls-password", "nope"))
        .expect("url")
        .get("code", "k")
        .await
        .expect_err("refused")
        .to_string();
    assert!(e.contains("WRONGPASS") || e.contains("invalid"), "{e}");
    two_instances_share_users(&url).await;
    let _ = server.kill();
    let _ = server.wait();
}

#[tokio::test]
async fn two_instances_share_users_through_redis() {
    let Some((mut server, url)) = redis_server().await else {
        return;
    };
    let st = store::RedisStore::parse(&url).expect("url");
    openapi_mcp_store::contract::check(&st).await;
    two_instances_share_users(&url).await;
    let _ = server.kill();
    let _ = server.wait();
}

/// Two instances with one store key and one shared store (`url`).
async fn two_instances_share_users(url: &str) {
    // Two instances with one key and one store: a grant one made serves calls on the other, a
    // refresh token one issued is redeemed once on the other, their tokens pass both.
    let a = proxy(url);
    let b = proxy(url);
    let g = Grant {
        access_token: "api-token-shared".into(),
        refresh_token: None,
        expires_at: Some(now() + 3600),
        issued_at: now(),
        client_id: "c".into(),
    };
    a.put(GRANT, "grant-r", &g, GRANT_TTL).await.expect("put");
    let caller = Caller::new("grant-r".into(), "mcp-token", None);
    assert_eq!(
        b.credential(&caller, "oauth").await,
        Ok(Some("api-token-shared".into()))
    );
    let reg = axum::http::Request::post("/register")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(
            r#"{"redirect_uris":["http://127.0.0.1:5000/cb"],"token_endpoint_auth_method":"none"}"#,
        ))
        .expect("request");
    let cid = body_json(send(&a, reg).await).await["client_id"]
        .as_str()
        .expect("id")
        .to_string();
    let issued = a
        .issue(&cid, "grant-r", &[], &a.config().resource)
        .await
        .expect("issued");
    let form = format!(
        "grant_type=refresh_token&client_id={cid}&refresh_token={}",
        issued["refresh_token"].as_str().expect("rt")
    );
    let post = |body: String| {
        axum::http::Request::post("/token")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(axum::body::Body::from(body))
            .expect("request")
    };
    // Another client presenting it is refused without spending it (#36).
    let thief = register_public_client(&b).await;
    let resp = send(&b, post(form.replace(&cid, &thief))).await;
    assert_eq!(body_json(resp).await["error"], "invalid_grant");
    let resp = send(&b, post(form.clone())).await;
    assert_eq!(
        resp.status(),
        StatusCode::OK,
        "the other instance knows the client and the refresh token"
    );
    let resp = send(&a, post(form)).await;
    assert_eq!(
        resp.status(),
        StatusCode::BAD_REQUEST,
        "and it is spent on both"
    );
    // That was a replay of a rotated token: the grant is revoked for both instances.
    let e = body_json(resp).await;
    assert_eq!(e["error"], "invalid_grant");
    assert!(
        e["error_description"]
            .as_str()
            .is_some_and(|d| d.contains("revoked")),
        "{e}"
    );
    assert!(
        b.credential(&caller, "oauth").await.is_err(),
        "revoked on B"
    );
    assert!(
        a.credential(&caller, "oauth").await.is_err(),
        "revoked on A"
    );
}

/// A PostgreSQL server of this machine's (Debian's `postgresql`: `initdb` and `postgres` in
/// /usr/lib/postgresql/*/bin, or on PATH), made in a temporary directory and listening on a
/// free loopback port with a password (SCRAM); `None` (and the test says it is skipped) without
/// one. As root (CI containers), `initdb` and `postgres` run as the `postgres` user (or
/// `nobody`): both refuse to run as root.
struct Postgres {
    child: std::process::Child,
    url: String,
    dir: tempdir::Dir,
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn postgres_server() -> Option<Postgres> {
    postgres_server_with(false).await
}

/// With `tls`: also TLS (`ssl=on`) with a certificate for 127.0.0.1 from [`tls_files`]; the
/// CA is `ca.pem` in [`Postgres::dir`].
async fn postgres_server_with(tls: bool) -> Option<Postgres> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let bin = std::fs::read_dir("/usr/lib/postgresql")
        .ok()
        .and_then(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path().join("bin")))
                .filter(|b| b.join("initdb").exists())
                .max_by_key(|b| {
                    b.parent()
                        .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
                        .unwrap_or(0)
                })
        })
        .unwrap_or_default();
    let exe = |name: &str| {
        let p = bin.join(name);
        if p.exists() {
            p
        } else {
            std::path::PathBuf::from(name)
        }
    };
    let dir = tempdir::Dir::new();
    // As root: the server runs as an unprivileged user, which must write the directory.
    let as_user = if std::fs::metadata(&dir.0).ok()?.uid() == 0 {
        let user = ["postgres", "nobody"].into_iter().find(|u| {
            std::process::Command::new("id")
                .arg(u)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })?;
        std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o777)).ok()?;
        Some(user)
    } else {
        None
    };
    let command = |program: std::path::PathBuf| match as_user {
        Some(u) => {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", u, "--"]).arg(program);
            c
        }
        None => std::process::Command::new(program),
    };
    let pwfile = dir.0.join("pw");
    std::fs::write(&pwfile, "pg-secret-password\n").ok()?;
    std::fs::set_permissions(&pwfile, std::fs::Permissions::from_mode(0o644)).ok()?;
    let data = dir.0.join("data");
    let init = command(exe("initdb"))
        .arg("-D")
        .arg(&data)
        .args([
            "-U",
            "oauth",
            "--auth=scram-sha-256",
            "--no-sync",
            "-E",
            "UTF8",
        ])
        .arg(format!("--pwfile={}", pwfile.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output();
    match init {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            eprintln!(
                "skipped: initdb failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return None;
        }
        Err(_) => {
            eprintln!("skipped: no PostgreSQL server (apt-get install postgresql)");
            return None;
        }
    }
    let mut ssl = Vec::new();
    if tls {
        tls_files(&dir.0)?;
        if let Some(u) = as_user {
            // The key must belong to the server's user (mode 0600).
            let id = |flag: &str| {
                let out = std::process::Command::new("id")
                    .args([flag, u])
                    .output()
                    .ok()?;
                String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .parse::<u32>()
                    .ok()
            };
            let (uid, gid) = (id("-u")?, id("-g")?);
            for f in ["server.key", "server.pem"] {
                std::os::unix::fs::chown(dir.0.join(f), Some(uid), Some(gid)).ok()?;
            }
        }
        std::fs::set_permissions(
            dir.0.join("server.key"),
            std::fs::Permissions::from_mode(0o600),
        )
        .ok()?;
        ssl = vec![
            "-c".to_string(),
            "ssl=on".to_string(),
            "-c".to_string(),
            format!("ssl_cert_file={}", dir.0.join("server.pem").display()),
            "-c".to_string(),
            format!("ssl_key_file={}", dir.0.join("server.key").display()),
        ];
    }
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").ok()?;
        l.local_addr().ok()?.port()
    };
    let child = command(exe("postgres"))
        .arg("-D")
        .arg(&data)
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k"])
        .arg(&dir.0)
        .args(["-c", "fsync=off", "-c", "max_connections=20"])
        .args(&ssl)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let url = format!("postgres://oauth:pg-secret-password@127.0.0.1:{port}/postgres");
    let pg = Postgres { child, url, dir };
    let probe: tokio_postgres::Config = pg.url.parse().ok()?;
    for _ in 0..200 {
        if probe.connect(tokio_postgres::NoTls).await.is_ok() {
            return Some(pg);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    eprintln!("skipped: the PostgreSQL server did not start");
    None
}

#[tokio::test]
async fn two_instances_share_users_through_postgres() {
    let Some(pg) = postgres_server().await else {
        return;
    };
    let st = store::PostgresStore::parse(&pg.url).expect("url");
    openapi_mcp_store::contract::check(&st).await;
    assert!(!st.describe().contains("pg-secret-password"));
    // The server drops every connection: the store reconnects on the next request.
    let (admin, conn) = pg
        .url
        .parse::<tokio_postgres::Config>()
        .expect("url")
        .connect(tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(conn);
    let killed = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE pid <> pg_backend_pid() AND application_name = 'openapi-mcp oauth-proxy'",
            &[],
        )
        .await
        .expect("terminate");
    assert_eq!(killed.len(), 1, "the store's one connection");
    st.put("code", "after", b"v".to_vec(), now() + 60)
        .await
        .expect("put after the connection was lost");
    assert_eq!(
        st.get("code", "after").await.expect("get"),
        Some(b"v".to_vec())
    );
    // The table as the issue describes it, rows sealed by the proxy never readable in clear.
    let cols: Vec<(String, String)> = admin
        .query(
            "SELECT column_name::text, data_type::text FROM information_schema.columns
             WHERE table_name = 'openapi_mcp_oauth_proxy' ORDER BY ordinal_position",
            &[],
        )
        .await
        .expect("columns")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let want = [
        ("kind", "text"),
        ("key", "text"),
        ("value", "bytea"),
        ("expires", "bigint"),
    ];
    assert_eq!(
        cols,
        want.map(|(a, b)| (a.to_string(), b.to_string())).to_vec()
    );
    // A user allowed only to read and write the table (no CREATE on the schema) uses it.
    admin
        .batch_execute(
            "CREATE ROLE rw LOGIN PASSWORD 'rw-password';
             GRANT SELECT, INSERT, UPDATE, DELETE ON openapi_mcp_oauth_proxy TO rw;",
        )
        .await
        .expect("role");
    let rw =
        store::PostgresStore::parse(&pg.url.replace("oauth:pg-secret-password", "rw:rw-password"))
            .expect("url");
    rw.put("code", "rw", b"v".to_vec(), now() + 60)
        .await
        .expect("a table user writes");
    assert_eq!(
        st.take("code", "rw").await.expect("take"),
        Some(b"v".to_vec())
    );
    // A wrong password: a clear error, and the password is not in it.
    let wrong = pg.url.replace("pg-secret-password", "wrong-password-xyz");
    let bad = store::PostgresStore::parse(&wrong).expect("url");
    let e = bad.get("code", "k").await.expect_err("refused").to_string();
    assert!(e.contains("password authentication failed"), "{e}");
    assert!(!e.contains("wrong-password-xyz"), "{e}");
    two_instances_share_users(&pg.url).await;
}

#[tokio::test]
async fn two_instances_share_users_through_postgres_over_tls() {
    let Some(pg) = postgres_server_with(true).await else {
        return;
    };
    let ca = pg.dir.0.join("ca.pem").display().to_string();
    let url = format!("{}?sslmode=verify-full&sslrootcert={ca}", pg.url);
    let st = store::PostgresStore::parse(&url).expect("url");
    openapi_mcp_store::contract::check(&st).await;
    // The store's connection is TLS.
    let (admin, conn) = pg
        .url
        .parse::<tokio_postgres::Config>()
        .expect("url")
        .connect(tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(conn);
    let ssl: Vec<bool> = admin
        .query(
            "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
             WHERE a.application_name = 'openapi-mcp oauth-proxy'",
            &[],
        )
        .await
        .expect("pg_stat_ssl")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(ssl, vec![true]);
    // A CA that did not issue the server's certificate, or the platform's roots: refused at
    // the handshake, with a clear error and no password.
    let wrong = store::PostgresStore::parse(&url.replace("ca.pem", "other-ca.pem")).expect("url");
    let e = wrong
        .get("code", "k")
        .await
        .expect_err("refused")
        .to_string();
    assert!(e.contains("TLS") && e.contains("UnknownIssuer"), "{e}");
    assert!(e.contains("other-ca.pem"), "{e}");
    assert!(!e.contains("pg-secret-password"), "{e}");
    let platform =
        store::PostgresStore::parse(&format!("{}?sslmode=require", pg.url)).expect("url");
    let e = platform
        .get("code", "k")
        .await
        .expect_err("refused")
        .to_string();
    assert!(e.contains("TLS"), "{e}");
    two_instances_share_users(&url).await;
}

// ------------------------------------------------------------------ consent (#36)

/// The consent form of a page: (action, request, csrf).
fn consent_form(html: &str) -> (String, String, String) {
    let attr = |name: &str| -> String {
        let at = html
            .find(&format!("name=\"{name}\" value=\""))
            .unwrap_or_else(|| panic!("no {name} in {html}"));
        let rest = &html[at + name.len() + 15..];
        rest[..rest.find('"').expect("quote")].to_string()
    };
    let at = html.find("action=\"").expect("form action");
    let rest = &html[at + 8..];
    (
        rest[..rest.find('"').expect("quote")].to_string(),
        attr("request"),
        attr("csrf"),
    )
}

/// The cookie a response sets (`name=value`).
fn set_cookie(resp: &Response) -> Option<String> {
    resp.headers()
        .get(header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::to_string)
}

async fn body_text(resp: Response) -> String {
    let b = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .expect("body");
    String::from_utf8_lossy(&b).into_owned()
}

fn get_with_cookie(uri: &str, cookie: Option<&str>) -> axum::http::Request<axum::body::Body> {
    let mut r = axum::http::Request::get(uri);
    if let Some(c) = cookie {
        r = r.header(header::COOKIE, c);
    }
    r.body(axum::body::Body::empty()).expect("request")
}

fn consent_post(
    cookie: Option<&str>,
    origin: Option<&str>,
    body: String,
) -> axum::http::Request<axum::body::Body> {
    let mut r = axum::http::Request::post("/oauth/consent")
        .header("content-type", "application/x-www-form-urlencoded");
    if let Some(c) = cookie {
        r = r.header(header::COOKIE, c);
    }
    if let Some(o) = origin {
        r = r.header(header::ORIGIN, o);
    }
    r.body(axum::body::Body::from(body)).expect("request")
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// As a user would: `GET uri` (the consent page), then "Approve" from that page. The cookie
/// after it, and the answer to the approval.
async fn approve(p: &Arc<OAuthProxy>, uri: &str, cookie: Option<&str>) -> (String, Response) {
    let resp = send(p, get_with_cookie(uri, cookie)).await;
    assert_eq!(resp.status(), StatusCode::OK, "the consent page");
    let cookie = set_cookie(&resp)
        .or_else(|| cookie.map(str::to_string))
        .expect("a cookie");
    let (action, request, csrf) = consent_form(&body_text(resp).await);
    assert_eq!(action, "/oauth/consent");
    let body = format!(
        "request={}&csrf={}&decision=approve",
        enc(&request),
        enc(&csrf)
    );
    let resp = send(
        p,
        consent_post(Some(&cookie), Some(&p.config().issuer), body),
    )
    .await;
    let cookie = set_cookie(&resp).unwrap_or(cookie);
    (cookie, resp)
}

async fn register_with(p: &Arc<OAuthProxy>, meta: serde_json::Value) -> Response {
    let reg = axum::http::Request::post("/register")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(meta.to_string()))
        .expect("request");
    send(p, reg).await
}

fn authorize_uri(cid: &str, redirect: &str, scope: &str, state: &str) -> String {
    format!(
        "/authorize?response_type=code&client_id={}&redirect_uri={}&state={}&code_challenge={}&code_challenge_method=S256&scope={}",
        enc(cid),
        enc(redirect),
        enc(state),
        s256(&"v".repeat(50)),
        enc(scope)
    )
}

#[tokio::test]
async fn authorize_asks_the_user_before_sending_anyone_to_the_api() {
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let resp = register_with(
        &p,
        serde_json::json!({
            "redirect_uris": ["https://evil.example/cb", "https://evil.example/other"],
            "token_endpoint_auth_method": "none",
            "client_name": "<script>alert('Claude')</script>"
        }),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    let cid = body_json(resp).await["client_id"]
        .as_str()
        .expect("id")
        .to_string();
    let uri = authorize_uri(&cid, "https://evil.example/cb", "repo", "st-1");
    // The page, not a redirect: nothing kept, nothing sent to the API's authorization server.
    let (cookie, html) = consent_page(&p, &uri).await;
    assert!(!html.contains("<script>"), "the client's name is escaped");
    assert!(html.contains("&lt;script&gt;alert(&#39;Claude&#39;)&lt;/script&gt;"));
    assert!(html.contains("https://evil.example") && html.contains("<code>repo</code>"));
    assert_eq!(p.store.count(PENDING).await.expect("count"), 0);
    let (_, request, csrf) = consent_form(&html);
    let form = |decision: &str, csrf: &str| {
        format!(
            "request={}&csrf={}&decision={decision}",
            enc(&request),
            enc(csrf)
        )
    };
    let issuer = p.config().issuer.clone();
    forged_consents_are_refused(&p, &cookie, &csrf, &form).await;
    assert_eq!(
        p.store.count(PENDING).await.expect("count"),
        0,
        "nothing started"
    );
    // A tampered request does not open.
    let mut other = request.clone().into_bytes();
    other[10] = if other[10] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(other).expect("ascii");
    let body = format!(
        "request={}&csrf={}&decision=approve",
        enc(&tampered),
        enc(&p.csrf(&p.browser(&cookie_headers(&cookie)), &tampered))
    );
    let resp = send(&p, consent_post(Some(&cookie), Some(&issuer), body)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    // Denied: back to the client with access_denied, its state and iss (RFC 6749 §4.1.2.1).
    let resp = send(
        &p,
        consent_post(Some(&cookie), Some(&issuer), form("deny", &csrf)),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let to = Url::parse(resp.headers()[header::LOCATION].to_str().expect("loc")).expect("url");
    let q: HashMap<String, String> = to.query_pairs().into_owned().collect();
    assert_eq!(to.host_str(), Some("evil.example"));
    assert_eq!(q["error"], "access_denied");
    assert_eq!(q["state"], "st-1");
    assert_eq!(q["iss"], issuer);
    assert!(!q.contains_key("code"));
    assert_eq!(p.store.count(PENDING).await.expect("count"), 0);
    // Approved: on to the API's authorization server, and remembered by this browser.
    let resp = send(
        &p,
        consent_post(Some(&cookie), Some(&issuer), form("approve", &csrf)),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert!(
        resp.headers()[header::LOCATION]
            .to_str()
            .expect("loc")
            .starts_with("https://as.example.com/authorize?")
    );
    assert_eq!(p.store.count(PENDING).await.expect("count"), 1);
    let remembered = set_cookie(&resp).expect("the approval remembered");
    assert!(remembered.len() > cookie.len());
    let resp = send(&p, get_with_cookie(&uri, Some(&remembered))).await;
    assert_eq!(resp.status(), StatusCode::FOUND, "remembered: straight on");
    asked_again_unless_the_same_approval(&p, &cid, &uri, &cookie, &remembered).await;
}

/// The consent page of `uri`: shown (no redirect), not framable, not cached, with the browser's
/// consent cookie (HttpOnly, SameSite=Lax). Returns the cookie and the page.
async fn consent_page(p: &Arc<OAuthProxy>, uri: &str) -> (String, String) {
    let resp = send(p, get(uri)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers().get(header::LOCATION).is_none());
    let h = resp.headers();
    assert_eq!(h[header::X_FRAME_OPTIONS], "DENY");
    assert!(
        h[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .expect("csp")
            .contains("frame-ancestors 'none'")
    );
    assert_eq!(h[header::CACHE_CONTROL], "no-store");
    let cookie_line = h[header::SET_COOKIE].to_str().expect("cookie").to_string();
    assert!(
        cookie_line.starts_with("openapi-mcp-consent="),
        "{cookie_line}"
    );
    assert!(cookie_line.contains("HttpOnly") && cookie_line.contains("SameSite=Lax"));
    let cookie = set_cookie(&resp).expect("cookie");
    (cookie, body_text(resp).await)
}

/// Approvals the user did not give are refused (403, no redirect).
async fn forged_consents_are_refused(
    p: &Arc<OAuthProxy>,
    cookie: &str,
    csrf: &str,
    form: &dyn Fn(&str, &str) -> String,
) {
    let issuer = p.config().issuer.clone();
    // Forged posts: no cookie (a cross-site form post: SameSite keeps it home), another token,
    // another origin, a sandboxed frame's null origin, a cross-site fetch.
    for (cookie, origin, body, what) in [
        (
            None,
            Some(issuer.as_str()),
            form("approve", csrf),
            "no cookie",
        ),
        (
            Some(cookie),
            Some(issuer.as_str()),
            form("approve", "AAAAAAAAAAAAAAAAAAAAAA"),
            "another token",
        ),
        (
            Some(cookie),
            Some("https://evil.example"),
            form("approve", csrf),
            "another origin",
        ),
        (
            Some(cookie),
            Some("null"),
            form("approve", csrf),
            "null origin",
        ),
        (
            Some("openapi-mcp-consent=AAAAAAAAAAAAAAAAAAAAAA"),
            Some(issuer.as_str()),
            form("approve", csrf),
            "another browser",
        ),
    ] {
        let resp = send(p, consent_post(cookie, origin, body)).await;
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{what}");
        assert!(resp.headers().get(header::LOCATION).is_none(), "{what}");
    }
    let mut cross = consent_post(Some(cookie), None, form("approve", csrf));
    cross
        .headers_mut()
        .insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
    assert_eq!(send(p, cross).await.status(), StatusCode::FORBIDDEN);
}

/// With an approval remembered for (client, redirect URI, scopes), anything else asks again:
/// other scopes, another redirect URI, another browser, the approval moved to another
/// browser's cookie.
async fn asked_again_unless_the_same_approval(
    p: &Arc<OAuthProxy>,
    cid: &str,
    uri: &str,
    cookie: &str,
    remembered: &str,
) {
    let id_len = 22;
    let transplanted = format!(
        "openapi-mcp-consent=BBBBBBBBBBBBBBBBBBBBBB{}",
        &remembered["openapi-mcp-consent=".len() + id_len..]
    );
    for (u, c, what) in [
        (
            authorize_uri(cid, "https://evil.example/cb", "repo user", "s"),
            remembered,
            "more scopes",
        ),
        (
            authorize_uri(cid, "https://evil.example/cb", "", "s"),
            remembered,
            "other scopes",
        ),
        (
            authorize_uri(cid, "https://evil.example/other", "repo", "s"),
            remembered,
            "another redirect URI",
        ),
        (uri.to_string(), cookie, "before the approval"),
        (
            uri.to_string(),
            transplanted.as_str(),
            "another browser's id",
        ),
    ] {
        let resp = send(p, get_with_cookie(&u, Some(c))).await;
        assert_eq!(resp.status(), StatusCode::OK, "{what}: the page again");
    }
}

fn cookie_headers(cookie: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        header::COOKIE,
        HeaderValue::from_str(cookie).expect("cookie"),
    );
    h
}

#[tokio::test]
async fn on_https_the_consent_cookie_is_host_only_and_secure() {
    let (_d, store) = temp_store();
    let schemes = [code_scheme(
        "oauth",
        "https://as.example.com/authorize",
        "/oauth/token",
    )];
    let cfg = configure(
        ProxyArgs {
            url: "https://mcp.example.com",
            ..args(&store)
        },
        &schemes,
        &base(),
        env(&[(STORE_KEY_ENV, KEY)]),
    )
    .expect("configured");
    let p = Arc::new(OAuthProxy::new(cfg).expect("opened"));
    let cid = body_json(
        register_with(
            &p,
            serde_json::json!({"redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "none"}),
        )
        .await,
    )
    .await["client_id"]
        .as_str()
        .expect("id")
        .to_string();
    let resp = send(
        &p,
        get(&authorize_uri(&cid, "https://app.example/cb", "", "s")),
    )
    .await;
    let line = resp.headers()[header::SET_COOKIE].to_str().expect("cookie");
    assert!(line.starts_with("__Host-openapi-mcp-consent="), "{line}");
    assert!(line.contains("; Secure") && line.contains("Path=/") && !line.contains("Domain"));
}

#[tokio::test]
async fn what_a_stranger_can_make_the_store_keep_is_capped() {
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let long_uri = format!("https://a.example/{}", "x".repeat(MAX_REDIRECT_URI_BYTES));
    let many: Vec<String> = (0..=MAX_REDIRECT_URIS)
        .map(|i| format!("https://a.example/{i}"))
        .collect();
    for (meta, what) in [
        (
            serde_json::json!({"redirect_uris": [long_uri]}),
            "redirect_uris/0: longer than",
        ),
        (
            serde_json::json!({"redirect_uris": many}),
            "redirect_uris: 1 to 8",
        ),
        (
            serde_json::json!({"redirect_uris": ["https://a.example/cb"], "client_name": "n".repeat(MAX_CLIENT_NAME_CHARS + 1)}),
            "client_name: at most 100",
        ),
        (
            serde_json::json!({"redirect_uris": ["https://a.example/cb"], "scope": "s ".repeat(MAX_SCOPES + 1)}),
            "scope: at most",
        ),
        (
            serde_json::json!({"redirect_uris": ["https://a.example/cb"], "padding": "p".repeat(MAX_REGISTRATION_BYTES)}),
            "larger than 16384 bytes",
        ),
    ] {
        let resp = register_with(&p, meta).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{what}");
        let e = body_json(resp).await;
        assert!(
            e["error_description"]
                .as_str()
                .is_some_and(|d| d.contains(what)),
            "{what}: {e}"
        );
    }
    assert_eq!(p.store.count(CLIENT_NEW).await.expect("count"), 0);
    // A registration that never gets a token is kept a day, as an unused one.
    let cid = register_public_client(&p).await;
    assert_eq!(p.store.count(CLIENT_NEW).await.expect("count"), 1);
    assert!(p.store.get(CLIENT, &cid).await.expect("get").is_none());
    // A state too long to keep: refused, and not sent back.
    let uri = authorize_uri(
        &cid,
        "http://127.0.0.1:5000/cb",
        "",
        &"s".repeat(MAX_STATE_BYTES + 1),
    );
    let resp = send(&p, get(&uri)).await;
    assert_eq!(resp.status(), StatusCode::FOUND);
    let loc = resp.headers()[header::LOCATION]
        .to_str()
        .expect("loc")
        .to_string();
    assert!(
        loc.contains("error=invalid_request") && !loc.contains("sssss"),
        "{loc}"
    );
    let uri = authorize_uri(&cid, "http://127.0.0.1:5000/cb", &"repo ".repeat(300), "s");
    let loc = send(&p, get(&uri)).await.headers()[header::LOCATION]
        .to_str()
        .expect("loc")
        .to_string();
    assert!(loc.contains("error=invalid_scope"), "{loc}");
    assert_eq!(p.store.count(PENDING).await.expect("count"), 0);
}

#[tokio::test]
async fn registrations_and_sign_ins_in_progress_are_bounded() {
    let (_d, store) = temp_store();
    let schemes = [code_scheme(
        "oauth",
        "https://as.example.com/authorize",
        "/oauth/token",
    )];
    let mut cfg = configure(
        args(&store),
        &schemes,
        &base(),
        env(&[(STORE_KEY_ENV, KEY)]),
    )
    .expect("configured");
    cfg.bounds = limits::StoreBounds {
        unused_clients: 3,
        pending: 2,
        documents: 1,
    };
    let p = Arc::new(OAuthProxy::new(cfg).expect("opened"));
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(register_public_client(&p).await);
    }
    let resp = register_with(
        &p,
        serde_json::json!({"redirect_uris": ["http://127.0.0.1:5000/cb"], "token_endpoint_auth_method": "none"}),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(resp.headers().get(header::RETRY_AFTER).is_some());
    let e = body_json(resp).await;
    assert_eq!(e["error"], "temporarily_unavailable");
    assert!(
        e["error_description"]
            .as_str()
            .is_some_and(|d| d.contains("3 registrations")),
        "{e}"
    );
    assert_eq!(p.store.count(CLIENT_NEW).await.expect("count"), 3);
    // Sign-ins in progress: two kept, the third sent back to its client with an error.
    let mut cookie: Option<String> = None;
    for i in 0..2 {
        let uri = authorize_uri(
            &ids[0],
            "http://127.0.0.1:5000/cb",
            &format!("repo{}", " user".repeat(i)),
            "s",
        );
        let (c, resp) = approve(&p, &uri, cookie.as_deref()).await;
        cookie = Some(c);
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert!(
            resp.headers()[header::LOCATION]
                .to_str()
                .expect("loc")
                .starts_with("https://as.example.com/")
        );
    }
    let (_, resp) = approve(
        &p,
        &authorize_uri(&ids[0], "http://127.0.0.1:5000/cb", "user", "s9"),
        cookie.as_deref(),
    )
    .await;
    let loc = resp.headers()[header::LOCATION]
        .to_str()
        .expect("loc")
        .to_string();
    assert!(
        loc.starts_with("http://127.0.0.1:5000/cb?")
            && loc.contains("error=temporarily_unavailable")
            && loc.contains("state=s9"),
        "{loc}"
    );
    assert_eq!(p.store.count(PENDING).await.expect("count"), 2);
}

#[tokio::test]
async fn a_clients_first_token_keeps_its_registration() {
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let cid = register_public_client(&p).await;
    p.put(GRANT, "g", &live_grant("api"), GRANT_TTL)
        .await
        .expect("put");
    let verifier = "v".repeat(50);
    p.put(
        CODE,
        &hashed("the-code"),
        &Code {
            client_id: cid.clone(),
            redirect_uri: "http://127.0.0.1:5000/cb".into(),
            code_challenge: s256(&verifier),
            resource: p.config().resource.clone(),
            scopes: vec![],
            grant: "g".into(),
        },
        CODE_TTL,
    )
    .await
    .expect("put");
    let t = axum::http::Request::post("/token")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(axum::body::Body::from(format!(
            "grant_type=authorization_code&code=the-code&client_id={cid}&code_verifier={verifier}"
        )))
        .expect("request");
    assert_eq!(send(&p, t).await.status(), StatusCode::OK);
    assert!(
        p.store.get(CLIENT, &cid).await.expect("get").is_some(),
        "kept"
    );
    assert!(p.store.get(CLIENT_NEW, &cid).await.expect("get").is_none());
    assert_eq!(p.store.count(CLIENT_NEW).await.expect("count"), 0);
    // And it is still a client.
    assert!(p.client(&cid).await.expect("client").is_some());
}

#[tokio::test]
async fn a_token_presented_by_another_client_is_refused_without_spending_it() {
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let owner = register_public_client(&p).await;
    let thief = register_public_client(&p).await;
    p.put(GRANT, "grant-1", &live_grant("api-token-1"), GRANT_TTL)
        .await
        .expect("put");
    let issued = p
        .issue(&owner, "grant-1", &["repo".into()], &p.config().resource)
        .await
        .expect("issued");
    let rt = issued["refresh_token"].as_str().expect("rt").to_string();
    let resp = send(&p, refresh_form(&thief, &rt)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let e = body_json(resp).await;
    assert_eq!(e["error"], "invalid_grant");
    assert!(
        e["error_description"]
            .as_str()
            .is_some_and(|d| d.contains("another client")),
        "{e}"
    );
    // The owner's refresh is not a replay: it goes through, and the grant still serves calls.
    let resp = send(&p, refresh_form(&owner, &rt)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let caller = Caller::new("grant-1".into(), "mcp-token", None);
    assert_eq!(
        p.credential(&caller, "oauth").await,
        Ok(Some("api-token-1".into()))
    );
    // Likewise a code: another client's attempt leaves it to its owner.
    let verifier = "w".repeat(50);
    p.put(
        CODE,
        &hashed("code-1"),
        &Code {
            client_id: owner.clone(),
            redirect_uri: "http://127.0.0.1:5000/cb".into(),
            code_challenge: s256(&verifier),
            resource: p.config().resource.clone(),
            scopes: vec![],
            grant: "grant-1".into(),
        },
        CODE_TTL,
    )
    .await
    .expect("put");
    let redeem = |cid: &str| {
        axum::http::Request::post("/token")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(axum::body::Body::from(format!(
                "grant_type=authorization_code&code=code-1&client_id={cid}&code_verifier={verifier}"
            )))
            .expect("request")
    };
    let resp = send(&p, redeem(&thief)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(body_json(resp).await["error"], "invalid_grant");
    assert_eq!(send(&p, redeem(&owner)).await.status(), StatusCode::OK);
}

#[test]
fn redirect_hosts_are_an_operators_allowlist() {
    let hosts = parse_redirect_hosts(&[
        "Claude.ai, *.example.com".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        "cursor:".to_string(),
    ])
    .expect("parsed");
    assert_eq!(
        hosts,
        ["claude.ai", "*.example.com", "127.0.0.1", "::1", "cursor:"]
    );
    for ok in [
        "https://claude.ai/api/mcp/auth_callback",
        "https://CLAUDE.ai/cb",
        "https://app.example.com/cb",
        "https://a.b.example.com/cb",
        "http://127.0.0.1:33418/",
        "http://[::1]:5000/cb",
        "cursor://anysphere.cursor-retrieval/oauth",
    ] {
        assert!(redirect_host_allowed(&hosts, ok), "{ok}");
    }
    for bad in [
        "https://evil.example/cb",
        "https://claude.ai.evil.example/cb",
        "https://example.com/cb",
        "https://evilexample.com/cb",
        "http://localhost:5000/cb",
        "vscode://cb",
        "cursor-evil://x",
        "https://cursor/x",
    ] {
        assert!(!redirect_host_allowed(&hosts, bad), "{bad}");
    }
    assert!(redirect_host_allowed(&[], "https://anything.example/cb"));
    for wrong in ["https://x.example", "x/y", "*.", "http:", "a b"] {
        let e = parse_redirect_hosts(&[wrong.to_string()])
            .expect_err(wrong)
            .to_string();
        assert!(e.contains("--oauth-proxy-redirect-hosts"), "{e}");
    }
}

#[tokio::test]
async fn a_redirect_host_outside_the_allowlist_is_refused_everywhere() {
    let (_d, store) = temp_store();
    let schemes = [code_scheme(
        "oauth",
        "https://as.example.com/authorize",
        "/oauth/token",
    )];
    let allowed = ["127.0.0.1".to_string()];
    let open_p = proxy(&store);
    let cid = body_json(
        register_with(
            &open_p,
            serde_json::json!({"redirect_uris": ["https://evil.example/cb"], "token_endpoint_auth_method": "none"}),
        )
        .await,
    )
    .await["client_id"]
        .as_str()
        .expect("registered before the allowlist")
        .to_string();
    let cfg = configure(
        ProxyArgs {
            redirect_hosts: &allowed,
            ..args(&store)
        },
        &schemes,
        &base(),
        env(&[(STORE_KEY_ENV, KEY)]),
    )
    .expect("configured");
    let p = Arc::new(OAuthProxy::new(cfg).expect("opened"));
    let resp = register_with(
        &p,
        serde_json::json!({"redirect_uris": ["https://evil.example/cb"], "token_endpoint_auth_method": "none"}),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let e = body_json(resp).await;
    assert_eq!(e["error"], "invalid_redirect_uri");
    assert!(
        e["error_description"]
            .as_str()
            .is_some_and(|d| d.contains("--oauth-proxy-redirect-hosts"))
    );
    // A client registered before the operator narrowed the hosts: no page, no redirect.
    let resp = send(
        &p,
        get(&authorize_uri(&cid, "https://evil.example/cb", "", "s")),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert!(resp.headers().get(header::LOCATION).is_none());
    assert!(
        register_public_client(&p).await.len() > 20,
        "a listed host registers"
    );
}

#[tokio::test]
async fn the_oauth_endpoints_are_rate_limited_per_client_address() {
    let (_d, store) = temp_store();
    let p = proxy(&store);
    let from = |addr: &str, mut req: axum::http::Request<axum::body::Body>| {
        let sa: std::net::SocketAddr = addr.parse().expect("addr");
        req.extensions_mut().insert(axum::extract::ConnectInfo(sa));
        req
    };
    let reg = || {
        axum::http::Request::post("/register")
            .header("content-type", "application/json")
            .body(axum::body::Body::from(
                r#"{"redirect_uris":["http://127.0.0.1:5000/cb"],"token_endpoint_auth_method":"none"}"#,
            ))
            .expect("request")
    };
    let (burst, _) = limits::Endpoint::Register.budget();
    for _ in 0..burst as usize {
        assert_eq!(
            send(&p, from("198.51.100.1:1000", reg())).await.status(),
            StatusCode::CREATED
        );
    }
    let resp = send(&p, from("198.51.100.1:1001", reg())).await;
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(resp.headers()[header::RETRY_AFTER], "10");
    assert_eq!(body_json(resp).await["error"], "too_many_requests");
    assert_eq!(
        p.store.count(CLIENT_NEW).await.expect("count"),
        burst as u64
    );
    // Another address, and another endpoint of the same address, are not held back.
    assert_eq!(
        send(&p, from("198.51.100.2:1000", reg())).await.status(),
        StatusCode::CREATED
    );
    let resp = send(
        &p,
        from("198.51.100.1:1000", get("/oauth/callback?state=x")),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    // The metadata is not limited.
    for _ in 0..100 {
        let r = send(
            &p,
            from(
                "198.51.100.1:1000",
                get("/.well-known/oauth-authorization-server"),
            ),
        )
        .await;
        assert_eq!(r.status(), StatusCode::OK);
    }
}
