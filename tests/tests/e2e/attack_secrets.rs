//! #36, an outside attack on the service surfaces: the server's own secrets as API credentials
//! (item 4), Streamable HTTP sessions bound to the caller (item 8), `config --print` and
//! malformed `auth`/`header` values (item 9), and every configured secret scrubbed from an
//! upstream's echo whatever its header's name (item 12). (Item 10, the audit log's file mode, is
//! a unit test in runtime/src/observe.rs.)

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, Forwarder};
use openapi_mcp_runtime::http::transport::{HttpOptions, start_http};
use openapi_mcp_runtime::oauth::OAuthOptions;
use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::transport::TokioChildProcess;
use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
use openapi_mcp_tests::harness::{
    Scratch, binary, call, connect_in_process, proxy_server, spec, text,
};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

/// A spec whose security schemes are named like the server's own variables.
const RESERVED_SPEC: &str = r#"openapi: 3.0.3
info: {title: Reserved, version: "1"}
servers: [{url: "http://127.0.0.1:9/api"}]
components:
  securitySchemes:
    auth_token: {type: http, scheme: bearer}
    store_key: {type: apiKey, in: header, name: X-Store}
security: [{auth_token: [], store_key: []}]
paths:
  /things:
    get:
      operationId: listThings
      responses: {"200": {description: ok}}
"#;

/// Item 4: `OPENAPI_MCP_AUTH_TOKEN` (the gate token) and `OPENAPI_MCP_STORE_KEY` are never the
/// credentials of schemes `auth_token` and `store_key`: nothing of them reaches the API, and the
/// server says why and what to do.
#[tokio::test]
async fn the_servers_own_variables_are_never_api_credentials() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!([])));
    let dir = Scratch::new("attack-reserved");
    let spec_path = dir.path("reserved.yaml");
    std::fs::write(&spec_path, RESERVED_SPEC).unwrap();
    let mut cmd = tokio::process::Command::new(binary());
    cmd.args([
        "proxy",
        spec_path.to_str().unwrap(),
        "--base-url",
        &up.url("/api"),
    ])
    .env("OPENAPI_MCP_AUTH_TOKEN", "gate-SECRET-4711")
    .env(
        "OPENAPI_MCP_STORE_KEY",
        "store-SECRET-0815-xxxxxxxxxxxxxxxxxxxxxxxx",
    );
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let client = ().serve(transport).await.expect("initialize");
    let r = call(&client, "reserved_list_things", json!({})).await;
    client.cancel().await.unwrap();
    let mut err = String::new();
    stderr
        .expect("stderr")
        .read_to_string(&mut err)
        .await
        .unwrap();
    // Nothing was sent: the schemes have no credential (the call says how to set one).
    for req in up.requests() {
        for (k, v) in &req.headers {
            let v = v.to_str().unwrap_or_default();
            assert!(
                !v.contains("gate-SECRET") && !v.contains("store-SECRET"),
                "{k}: {v} reached the API"
            );
        }
    }
    let t = text(&r);
    assert!(!t.contains("SECRET"), "{t}");
    for w in [
        "security scheme auth_token would read its credential from OPENAPI_MCP_AUTH_TOKEN",
        "--auth auth_token=VALUE",
        "security scheme store_key would read its credential from OPENAPI_MCP_STORE_KEY",
    ] {
        assert!(err.contains(w), "no {w:?} in {err}");
    }
    assert!(!err.contains("SECRET"), "{err}");
}

/// A tiny authorization server: an ES256 key, its JWKS at `/jwks`, and tokens it signs.
pub(crate) struct Issuer {
    pub(crate) url: String,
    pkcs8: Vec<u8>,
}

pub(crate) const AUDIENCE: &str = "http://mcp.attack.invalid/mcp";

impl Issuer {
    pub(crate) async fn start() -> Self {
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
        use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
        let point = pair.public_key().as_ref();
        let jwks = json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256",
            "use": "sig", "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])}]});
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || std::future::ready(axum::Json(jwks.clone()))),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Issuer {
            url,
            pkcs8: pkcs8.as_ref().to_vec(),
        }
    }

    pub(crate) fn token(&self, sub: &str) -> String {
        self.token_with_scope(sub, None)
    }

    /// A token for `sub` granting `scope` (space-separated) when given.
    pub(crate) fn token_with_scope(&self, sub: &str, scope: Option<&str>) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let mut claims = json!({"iss": self.url, "aud": AUDIENCE, "sub": sub, "iat": now,
            "exp": now + 3600, "jti": format!("{sub}-{now}")});
        if let Some(scope) = scope {
            claims["scope"] = json!(scope);
        }
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some("k1".into());
        jsonwebtoken::encode(
            &header,
            &claims,
            &jsonwebtoken::EncodingKey::from_ec_der(&self.pkcs8),
        )
        .unwrap()
    }
}

mod sessions {
    use super::*;

    async fn serve_oauth(up: &Upstream, issuer: &Issuer) -> SocketAddr {
        let server = proxy_server(
            &spec("petstore.yaml"),
            &up.url("/api"),
            openapi_mcp_convert::ToolOptions::default(),
            &[],
        )
        .await;
        let mut o = HttpOptions::new("127.0.0.1:0".parse().unwrap());
        o.oauth = Some(OAuthOptions {
            issuer: issuer.url.clone(),
            audience: AUDIENCE.into(),
            jwks_url: Some(format!("{}/jwks", issuer.url)),
            ..OAuthOptions::default()
        });
        start_http(server, o).await.expect("http server").addr
    }

    fn post(
        http: &reqwest::Client,
        addr: SocketAddr,
        token: &str,
        session: Option<&str>,
        body: Value,
    ) -> reqwest::RequestBuilder {
        let mut b = http
            .post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("authorization", format!("Bearer {token}"))
            .body(body.to_string());
        if let Some(s) = session {
            b = b.header("mcp-session-id", s);
        }
        b
    }

    /// Status, content type and body: what a client can tell of an answer.
    async fn seen(r: reqwest::Response) -> (u16, Option<String>, String) {
        let status = r.status().as_u16();
        let ct = r
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string());
        (status, ct, r.text().await.unwrap())
    }

    /// Item 8: a session opened with alice's token serves alice only. Bob, with his own valid
    /// token and alice's session id, gets what an unknown session gets (404), for a request, a
    /// stream (GET) and a DELETE; alice's session keeps working.
    #[tokio::test]
    async fn a_session_serves_only_the_subject_that_opened_it() {
        let up = Upstream::start().await;
        let issuer = Issuer::start().await;
        let addr = serve_oauth(&up, &issuer).await;
        let (alice, bob) = (issuer.token("alice"), issuer.token("bob"));
        let http = reqwest::Client::new();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}});
        let r = post(&http, addr, &alice, None, init).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let id = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
        drop(r.bytes().await);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = post(&http, addr, &alice, Some(&id), note.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});

        // Bob, valid token, alice's session: as if there were no such session.
        let theirs = seen(
            post(&http, addr, &bob, Some(&id), list.clone())
                .send()
                .await
                .unwrap(),
        )
        .await;
        let unknown = seen(
            post(&http, addr, &bob, Some("no-such-session"), list.clone())
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(theirs.0, 404, "{theirs:?}");
        assert_eq!(theirs, unknown);
        let get = |token: &str, session: &str| {
            http.get(format!("http://{addr}/mcp"))
                .header("accept", "text/event-stream")
                .header("mcp-protocol-version", "2025-11-25")
                .header("authorization", format!("Bearer {token}"))
                .header("mcp-session-id", session.to_string())
                .send()
        };
        assert_eq!(get(&bob, &id).await.unwrap().status(), 404);
        let delete = |token: &str, session: &str| {
            http.delete(format!("http://{addr}/mcp"))
                .header("mcp-protocol-version", "2025-11-25")
                .header("authorization", format!("Bearer {token}"))
                .header("mcp-session-id", session.to_string())
                .send()
        };
        let (d_theirs, d_unknown) = (
            seen(delete(&bob, &id).await.unwrap()).await,
            seen(delete(&bob, "no-such-session").await.unwrap()).await,
        );
        assert_eq!(d_theirs.0, 404, "{d_theirs:?}");
        assert_eq!(d_theirs, d_unknown);

        // Alice's session is untouched, and a fresh token of hers (same subject) still has it.
        let r = post(&http, addr, &alice, Some(&id), list.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.text().await.unwrap().contains("petstore_list_pets"));
        tokio::time::sleep(Duration::from_millis(1100)).await; // a new `iat`/`jti`
        let alice2 = issuer.token("alice");
        assert_ne!(alice2, alice);
        let r = post(&http, addr, &alice2, Some(&id), list)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(delete(&alice, &id).await.unwrap().status(), 204);
    }
}

/// Item 12: an upstream's 401 that reflects every request header (and the values URL-encoded,
/// and Basic auth decoded) shows none of the configured secrets, whatever the header's name.
#[tokio::test]
async fn an_upstream_echo_shows_no_configured_secret_whatever_its_header() {
    let up = Upstream::start().await;
    up.respond(|r| {
        let mut headers = serde_json::Map::new();
        let mut decoded = Vec::new();
        for (k, v) in &r.headers {
            let v = v.to_str().unwrap_or_default().to_string();
            if let Some(b) = v.strip_prefix("Basic ") {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(b)
                    .unwrap_or_default();
                decoded.push(String::from_utf8_lossy(&raw).into_owned());
            }
            let enc: String = url::form_urlencoded::byte_serialize(v.as_bytes()).collect();
            headers.insert(k.to_string(), json!([v, enc]));
        }
        Reply::json(
            401,
            json!({"error": "unauthorized", "you_sent": headers, "basic": decoded}),
        )
    });
    let source = openapi_mcp_convert::load::SpecSource::Path(spec("petstore.yaml"));
    let loaded = openapi_mcp_convert::load::load(&source).await.unwrap();
    let set =
        openapi_mcp_convert::convert(&loaded, &openapi_mcp_convert::ToolOptions::default()).tools;
    let mut creds = Credentials::new();
    creds.set("api_key", "k-api-SECRET-123".into());
    let mut opts = ForwardOptions::new(url::Url::parse(&up.url("/api")).unwrap());
    let basic = base64::engine::general_purpose::STANDARD.encode("alice:pw SECRET/9");
    opts.static_headers = vec![
        ("X-Access".into(), "open sesame/42".into()),
        ("X-Partner".into(), "partner7".into()),
        ("Authorization".into(), format!("Basic {basic}")),
        ("Accept-Language".into(), "en".into()),
    ];
    let fwd = Forwarder::new(opts, set.security_schemes.clone(), creds).unwrap();
    let server = ProxyServer::new(set, fwd, ServerOptions::default());
    let client = connect_in_process(server).await;
    let r = call(&client, "petstore_list_pets", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    let req = up.last();
    assert_eq!(req.header("x-access"), Some("open sesame/42"), "sent as is");
    let shown = serde_json::to_string(&r).unwrap();
    assert!(shown.contains("you_sent"), "the echo is shown: {shown}");
    for secret in [
        "sesame",
        "partner7",
        "k-api-SECRET-123",
        "SECRET",
        basic.as_str(),
        "alice:pw",
    ] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    // Configuration is not a secret: left alone.
    assert!(text(&r).contains("\"en\""), "{shown}");
    client.cancel().await.unwrap();
}

/// Item 9: `config --print` shows every URL as the start-up line does (no user info, query
/// values hidden), and a malformed `auth` or `header` names the key and the problem, not the
/// value.
#[test]
fn config_print_masks_every_url_and_malformed_secrets_are_not_echoed() {
    let dir = Scratch::new("attack-config");
    let file = dir.path("c.yaml");
    std::fs::write(
        &file,
        "spec: https://specs.example/api.yaml?token=SPEC-SECRET-1\n\
         base-url: https://user:BASE-SECRET-2@api.example/v1?key=BASE-SECRET-3\n\
         oauth-issuer: https://issuer.example\n\
         oauth-introspection-url: https://issuer.example/introspect?client_secret=INTRO-SECRET-4\n\
         oauth-client-id: me\n\
         transport: http\n",
    )
    .unwrap();
    let out = std::process::Command::new(binary())
        .args(["config", "--print", "--config", file.to_str().unwrap()])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for s in ["SPEC-SECRET", "BASE-SECRET", "INTRO-SECRET", "user"] {
        assert!(!printed.contains(s), "{s} in\n{printed}");
    }
    for shown in [
        "spec: https://specs.example/api.yaml?token=***",
        "base-url: https://api.example/v1?key=***",
        "oauth-introspection-url: https://issuer.example/introspect?client_secret=***",
    ] {
        assert!(printed.contains(shown), "no {shown:?} in\n{printed}");
    }

    // Malformed values: on the command line and in a file, the key and the problem only.
    let spec_path = spec("petstore.yaml");
    for (flag, value) in [
        ("--auth", "sk_live_NOEQUALS_SECRET"),
        ("--header", "X-Key sk_live_NOCOLON_SECRET"),
        ("--auth", "sk_live_Abc123+/NAME_SECRET=x"),
    ] {
        let out = std::process::Command::new(binary())
            .args(["proxy", spec_path.to_str().unwrap(), flag, value])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flag} {value}: {err}");
        assert!(err.contains(flag), "{err}");
        assert!(!err.contains("SECRET"), "{flag} {value}: {err}");
    }
    for (key, value) in [
        ("auth", "sk_live_NOEQUALS_SECRET"),
        ("header", "X-Key sk_live_NOCOLON_SECRET"),
    ] {
        std::fs::write(&file, format!("spec: x.yaml\n{key}: ['{value}']\n")).unwrap();
        let out = std::process::Command::new(binary())
            .args(["config", "--print", "--config", file.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(&format!("`{key}`")), "{err}");
        assert!(!err.contains("SECRET"), "{key}: {err}");
    }
}
