//! The OAuth proxy (`--oauth-proxy`) under attack (#36), through real HTTP: the release-shaped
//! binary, a stand-in for the API's authorization server that approves silently (as GitHub does
//! for an app the user authorized before), and the victim's browser simulated by an HTTP client
//! with a cookie jar following the real redirects.
//!
//! - A registered client phishing a consent: the victim opens the attacker's `/authorize` link
//!   and gets the proxy's consent page; no code goes anywhere (the API's authorization server
//!   is not even asked) without the victim's "Approve" on that page.
//! - Forged consent posts (no cookie, another browser's form, another origin) are refused.
//! - A flood of registrations is rate-limited (429, Retry-After) and an oversized `state` is
//!   refused, so the store stays small.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use openapi_mcp_tests::harness::{Scratch, binary};
use openapi_mcp_tests::upstream::{Recorded, Reply, Upstream};
use tokio::io::{AsyncBufReadExt, BufReader};

const STORE_KEY: &str = "attack-test-store-key-0123456789abcdef-0123456789";
const VICTIM_API_TOKEN: &str = "gho_victims-api-token-0123456789";

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn s256(verifier: &str) -> String {
    use base64::Engine as _;
    let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(d.as_ref())
}

fn query(url: &str) -> HashMap<String, String> {
    url::Url::parse(url)
        .expect("url")
        .query_pairs()
        .into_owned()
        .collect()
}

/// A browser: one cookie jar (per origin: these tests have one site with cookies), redirects
/// followed by hand so every hop is seen.
struct Browser {
    http: reqwest::Client,
    cookies: HashMap<String, String>,
}

impl Browser {
    fn new() -> Self {
        Browser {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            cookies: HashMap::new(),
        }
    }

    fn cookie_header(&self) -> Option<String> {
        (!self.cookies.is_empty()).then(|| {
            self.cookies
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    fn keep(&mut self, resp: &reqwest::Response) {
        for v in resp.headers().get_all(reqwest::header::SET_COOKIE) {
            let line = v.to_str().expect("ascii cookie");
            let pair = line.split(';').next().expect("pair");
            let (k, v) = pair.split_once('=').expect("name=value");
            self.cookies.insert(k.trim().into(), v.trim().into());
        }
    }

    async fn get(&mut self, url: &str) -> reqwest::Response {
        let mut req = self.http.get(url);
        if let Some(c) = self.cookie_header() {
            req = req.header(reqwest::header::COOKIE, c);
        }
        let resp = req.send().await.expect("GET");
        self.keep(&resp);
        resp
    }

    async fn post_form(
        &mut self,
        url: &str,
        origin: Option<&str>,
        body: String,
    ) -> reqwest::Response {
        let mut req = self
            .http
            .post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        if let Some(c) = self.cookie_header() {
            req = req.header(reqwest::header::COOKIE, c);
        }
        if let Some(o) = origin {
            req = req.header(reqwest::header::ORIGIN, o);
        }
        let resp = req.send().await.expect("POST");
        self.keep(&resp);
        resp
    }

    /// Follows redirects from `url` until one leaves for `stop` (not requested: the client's
    /// redirect URI) or a page answers. The hops and the last answer (or the stop URL).
    async fn follow(
        &mut self,
        mut url: String,
        stop: &str,
    ) -> (Vec<String>, Result<String, reqwest::Response>) {
        let mut hops = Vec::new();
        for _ in 0..10 {
            hops.push(url.clone());
            if url.starts_with(stop) {
                return (hops, Ok(url));
            }
            let resp = self.get(&url).await;
            if !resp.status().is_redirection() {
                return (hops, Err(resp));
            }
            let loc = resp.headers()[reqwest::header::LOCATION]
                .to_str()
                .expect("location")
                .to_string();
            url = url::Url::parse(&url)
                .expect("url")
                .join(&loc)
                .expect("join")
                .to_string();
        }
        panic!("too many redirects: {hops:?}");
    }
}

/// The consent page's form: (action, request, csrf).
fn consent_form(html: &str) -> (String, String, String) {
    let field = |name: &str| {
        let marker = format!("name=\"{name}\" value=\"");
        let at = html
            .find(&marker)
            .unwrap_or_else(|| panic!("no {name}: {html}"));
        let rest = &html[at + marker.len()..];
        rest[..rest.find('"').expect("quote")].to_string()
    };
    let at = html
        .find("<form method=\"post\" action=\"")
        .expect("a form");
    let rest = &html[at + 28..];
    (
        rest[..rest.find('"').expect("quote")].to_string(),
        field("request"),
        field("csrf"),
    )
}

/// The proxy binary with `--oauth-proxy` on a free loopback port.
struct Proxy {
    /// Kept for its kill on drop.
    _child: tokio::process::Child,
    origin: String,
    store: std::path::PathBuf,
    _dir: Scratch,
}

async fn start_proxy(asrv: &Upstream, api: &Upstream) -> Proxy {
    let dir = Scratch::new(&format!("attack-oauth-{}", asrv.addr.port()));
    let spec = dir.path("api.yaml");
    std::fs::write(
        &spec,
        format!(
            r#"openapi: 3.0.3
info: {{title: Victim's API, version: '1'}}
components:
  securitySchemes:
    apiauth:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: {as_}/login/oauth/authorize
          tokenUrl: {as_}/login/oauth/access_token
          scopes: {{repo: repositories, user: profile}}
security: [{{apiauth: [repo]}}]
paths:
  /user:
    get:
      operationId: getUser
      responses: {{'200': {{description: ok}}}}
"#,
            as_ = asrv.url("")
        ),
    )
    .expect("spec");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let origin = format!("http://127.0.0.1:{port}");
    let store = dir.path("store.sqlite3");
    let mut child = tokio::process::Command::new(binary())
        .arg("proxy")
        .arg(&spec)
        .args(["--base-url", &api.url(""), "--transport", "http"])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args([
            "--oauth-proxy",
            &origin,
            "--upstream-client-id",
            "upstream-client",
        ])
        .arg("--oauth-store")
        .arg(format!("sqlite:{}", store.display()))
        .env("OPENAPI_MCP_STORE_KEY", STORE_KEY)
        .env("OPENAPI_MCP_UPSTREAM_CLIENT_SECRET", "upstream-secret")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the proxy");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let started = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("over Streamable HTTP at") {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(started, "the proxy started");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Proxy {
        _child: child,
        origin,
        store,
        _dir: dir,
    }
}

/// The API's authorization server: approves every request of the proxy's client silently (the
/// victim authorized the proxy's app there before), and hands out the victim's API token.
async fn silent_authorization_server() -> (Upstream, Arc<AtomicUsize>) {
    let asrv = Upstream::start().await;
    let approvals = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&approvals);
    asrv.respond(move |r: &Recorded| match r.path() {
        "/login/oauth/authorize" => {
            let q: HashMap<String, String> =
                url::form_urlencoded::parse(r.query().unwrap_or("").as_bytes())
                    .into_owned()
                    .collect();
            if q.get("client_id").map(String::as_str) != Some("upstream-client") {
                return Reply::empty(400);
            }
            counted.fetch_add(1, Ordering::SeqCst);
            let to = format!(
                "{}?code=api-code-{}&state={}",
                q["redirect_uri"],
                counted.load(Ordering::SeqCst),
                enc(&q["state"])
            );
            let mut reply = Reply::empty(302);
            reply.headers.push(("location".into(), to));
            reply
        }
        "/login/oauth/access_token" => Reply::json(
            200,
            serde_json::json!({"access_token": VICTIM_API_TOKEN, "token_type": "bearer", "expires_in": 3600, "scope": "repo"}),
        ),
        _ => Reply::empty(404),
    });
    (asrv, approvals)
}

#[tokio::test]
async fn a_phishing_client_gets_no_code_without_the_victims_approval_on_the_proxys_page() {
    let (asrv, approvals) = silent_authorization_server().await;
    let api = Upstream::start().await;
    let proxy = start_proxy(&asrv, &api).await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let origin = proxy.origin.clone();

    // The attacker registers a public client named like a trusted one, sending users back to
    // the attacker's own site, and makes the link with the attacker's own PKCE challenge.
    const STEAL: &str = "https://attacker.example/steal";
    let reg: serde_json::Value = http
        .post(format!("{origin}/register"))
        .json(&serde_json::json!({
            "redirect_uris": [STEAL], "token_endpoint_auth_method": "none",
            "client_name": "Claude <b>official</b>"
        }))
        .send()
        .await
        .expect("register")
        .json()
        .await
        .expect("json");
    let attacker = reg["client_id"].as_str().expect("client id").to_string();
    let attacker_verifier = "a".repeat(64);
    let link = format!(
        "{origin}/authorize?response_type=code&client_id={attacker}&redirect_uri={}&state=phish&code_challenge={}&code_challenge_method=S256&scope=repo",
        enc(STEAL),
        s256(&attacker_verifier)
    );

    // The victim opens the link: the proxy's consent page, nothing sent anywhere.
    let mut victim = Browser::new();
    let (hops, end) = victim.follow(link.clone(), STEAL).await;
    let page = end.expect_err("a page, not a redirect to the attacker");
    assert_eq!(hops.len(), 1, "no redirect at all: {hops:?}");
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    assert!(
        page.headers()["content-security-policy"]
            .to_str()
            .expect("csp")
            .contains("frame-ancestors 'none'")
    );
    let html = page.text().await.expect("page");
    assert!(
        html.contains("https://attacker.example"),
        "the page names where the answer goes"
    );
    assert!(
        html.contains("Claude &lt;b&gt;official&lt;/b&gt;") && !html.contains("<b>official</b>")
    );
    assert!(html.contains("not verified"));
    assert_eq!(
        approvals.load(Ordering::SeqCst),
        0,
        "the API's authorization server was not asked"
    );
    let (action, victims_request, victims_csrf) = consent_form(&html);
    let consent_url = format!("{origin}{action}");

    // Forged approvals. The attacker loads its own link in its own browser to get a valid
    // form, then makes the victim's browser post it (a cross-site form: another origin).
    let mut attackers_browser = Browser::new();
    let own = attackers_browser
        .get(&link)
        .await
        .text()
        .await
        .expect("page");
    let (_, request, csrf) = consent_form(&own);
    let approve = |request: &str, csrf: &str| {
        format!(
            "request={}&csrf={}&decision=approve",
            enc(request),
            enc(csrf)
        )
    };
    for (who, origin_header, body) in [
        (
            "the attacker's form, from the attacker's site",
            Some("https://attacker.example"),
            approve(&request, &csrf),
        ),
        (
            "the attacker's form, no Origin",
            None,
            approve(&request, &csrf),
        ),
        (
            "the victim's form with the attacker's token",
            None,
            approve(&victims_request, &csrf),
        ),
        (
            "the victim's own form, from the attacker's site",
            Some("https://attacker.example"),
            approve(&victims_request, &victims_csrf),
        ),
    ] {
        let resp = victim.post_form(&consent_url, origin_header, body).await;
        assert_eq!(resp.status(), 403, "{who}");
        assert!(resp.headers().get("location").is_none(), "{who}");
    }
    // The victim's own form without the victim's cookie (what SameSite does to a cross-site
    // post): refused too.
    let resp = http
        .post(&consent_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", &origin)
        .body(approve(&victims_request, &victims_csrf))
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), 403, "no cookie");
    assert_eq!(
        approvals.load(Ordering::SeqCst),
        0,
        "still nothing sent to the API's authorization server"
    );

    // The victim denies: back to the attacker with access_denied, and no code.
    let resp = victim
        .post_form(
            &consent_url,
            Some(&origin),
            format!(
                "request={}&csrf={}&decision=deny",
                enc(&victims_request),
                enc(&victims_csrf)
            ),
        )
        .await;
    assert_eq!(resp.status(), 303);
    let to = resp.headers()["location"]
        .to_str()
        .expect("loc")
        .to_string();
    let q = query(&to);
    assert!(to.starts_with(STEAL));
    assert_eq!(q.get("error").map(String::as_str), Some("access_denied"));
    assert!(!q.contains_key("code"));
    assert_eq!(approvals.load(Ordering::SeqCst), 0);
    // Opening the link again asks again (a denial is not remembered as consent).
    let (_, end) = victim.follow(link.clone(), STEAL).await;
    assert_eq!(end.expect_err("the page again").status(), 200);

    // Only the victim's explicit approval on the page lets the sign-in go on: then (and only
    // then) the silent authorization server is asked and a code comes back.
    let resp = victim
        .post_form(
            &consent_url,
            Some(&origin),
            approve(&victims_request, &victims_csrf),
        )
        .await;
    assert_eq!(resp.status(), 303);
    let next = resp.headers()["location"]
        .to_str()
        .expect("loc")
        .to_string();
    assert!(
        next.starts_with(&asrv.url("/login/oauth/authorize")),
        "{next}"
    );
    let (hops, end) = victim.follow(next, STEAL).await;
    let back = end.expect("back at the redirect URI");
    assert_eq!(approvals.load(Ordering::SeqCst), 1);
    assert!(query(&back).contains_key("code"), "{hops:?}");

    // A legitimate client of the same user: its own consent page, once; remembered after.
    const APP: &str = "http://127.0.0.1:9/callback";
    let reg: serde_json::Value = http
        .post(format!("{origin}/register"))
        .json(&serde_json::json!({"redirect_uris": [APP], "token_endpoint_auth_method": "none", "client_name": "app"}))
        .send()
        .await
        .expect("register")
        .json()
        .await
        .expect("json");
    let app = reg["client_id"].as_str().expect("id").to_string();
    let verifier = "v".repeat(64);
    let app_link = format!(
        "{origin}/authorize?response_type=code&client_id={app}&redirect_uri={}&state=s1&code_challenge={}&code_challenge_method=S256&scope=repo",
        enc(APP),
        s256(&verifier)
    );
    let (_, end) = victim.follow(app_link.clone(), APP).await;
    let html = end.expect_err("consent page").text().await.expect("page");
    let (_, r, c) = consent_form(&html);
    let resp = victim
        .post_form(&consent_url, Some(&origin), approve(&r, &c))
        .await;
    let next = resp.headers()["location"]
        .to_str()
        .expect("loc")
        .to_string();
    let (_, end) = victim.follow(next, APP).await;
    let code = query(&end.expect("back at the app"))["code"].clone();
    let tokens: serde_json::Value = http
        .post(format!("{origin}/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "grant_type=authorization_code&code={}&client_id={}&code_verifier={}&redirect_uri={}",
            enc(&code),
            enc(&app),
            enc(&verifier),
            enc(APP)
        ))
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("json");
    assert!(tokens["access_token"].as_str().is_some(), "{tokens}");
    assert!(
        !tokens.to_string().contains(VICTIM_API_TOKEN),
        "the API's token never reaches a client"
    );
    let (hops, end) = victim.follow(app_link, APP).await;
    assert!(end.is_ok(), "remembered: no page the second time");
    assert_eq!(
        hops.len(),
        4,
        "/authorize -> API -> callback -> app: {hops:?}"
    );
    drop(proxy);
}

#[tokio::test]
async fn a_registration_flood_is_rate_limited_and_oversized_requests_are_not_kept() {
    let (asrv, approvals) = silent_authorization_server().await;
    let api = Upstream::start().await;
    let proxy = start_proxy(&asrv, &api).await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let origin = proxy.origin.clone();
    let size = || {
        std::fs::metadata(&proxy.store)
            .map(|m| m.len())
            .unwrap_or(0)
            + std::fs::metadata(proxy.store.with_extension("sqlite3-wal"))
                .map(|m| m.len())
                .unwrap_or(0)
    };
    // A client registered before the flood, for the /authorize checks below.
    const APP: &str = "http://127.0.0.1:9/callback";
    let reg: serde_json::Value = http
        .post(format!("{origin}/register"))
        .json(&serde_json::json!({"redirect_uris": [APP], "token_endpoint_auth_method": "none"}))
        .send()
        .await
        .expect("register")
        .json()
        .await
        .expect("json");
    let app = reg["client_id"].as_str().expect("id").to_string();
    let before = size();
    // 1,500 registrations with 8 long redirect URIs each (the largest accepted), as fast as
    // one address can send them.
    let uris: Vec<String> = (0..8)
        .map(|i| format!("https://flood.example/{i}/{}", "x".repeat(450)))
        .collect();
    let meta = serde_json::json!({"redirect_uris": uris, "token_endpoint_auth_method": "none"});
    let (mut created, mut limited, mut retry_after) = (0, 0, None);
    let started = std::time::Instant::now();
    for _ in 0..1500 {
        let resp = http
            .post(format!("{origin}/register"))
            .json(&meta)
            .send()
            .await
            .expect("register");
        match resp.status().as_u16() {
            201 => created += 1,
            429 => {
                limited += 1;
                retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok());
            }
            s => panic!("unexpected {s}"),
        }
    }
    let grew = size().saturating_sub(before);
    eprintln!(
        "registration flood: 1500 sent in {:?}, {created} created, {limited} refused with 429, store grew {grew} bytes",
        started.elapsed()
    );
    // The burst (20, less the one above) and what refilled meanwhile (one per 10 s).
    assert!(created <= 25, "{created} registrations got through");
    assert!(limited >= 1475);
    assert!(retry_after.is_some_and(|s| s >= 1));
    assert!(grew < 1024 * 1024, "the store stays small: {grew} bytes");
    // A 60 KB state at /authorize: refused back to the client without it, nothing kept, and
    // the state not echoed.
    let big_state = "s".repeat(60 * 1024);
    let before = size();
    let resp = http
        .get(format!(
            "{origin}/authorize?response_type=code&client_id={app}&redirect_uri={}&state={big_state}&code_challenge={}&code_challenge_method=S256",
            enc(APP),
            s256(&"v".repeat(64))
        ))
        .send()
        .await
        .expect("authorize");
    assert_eq!(resp.status(), 302);
    let to = resp.headers()["location"]
        .to_str()
        .expect("loc")
        .to_string();
    assert!(
        to.starts_with(APP) && to.contains("error=invalid_request") && !to.contains("sssss"),
        "{}",
        &to[..to.len().min(300)]
    );
    assert!(size().saturating_sub(before) < 16 * 1024);
    drop(proxy);
    assert_eq!(approvals.load(Ordering::SeqCst), 0);
}
