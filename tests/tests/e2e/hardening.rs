//! Regression tests for the findings of the outside attack (issue #23, part 1): each one fails
//! on the code before its fix.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use openapi_mcp_tests::harness::{binary, spec};

/// The petstore fixture, served in-process against `up` (most tests here need nothing else).
async fn petstore(
    up: &openapi_mcp_tests::upstream::Upstream,
) -> openapi_mcp_runtime::server::ProxyServer {
    openapi_mcp_tests::harness::proxy_server(
        &spec("petstore.yaml"),
        &up.url("/api"),
        openapi_mcp_convert::ToolOptions::default(),
        &[],
    )
    .await
}

fn proxy(args: &[&str]) -> std::process::Output {
    Command::new(binary())
        .arg("proxy")
        .arg(spec("petstore.yaml"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run openapi-mcp")
}

/// Finding 1: the gate token must never be forwarded to the API.
#[test]
fn auth_token_with_forwarded_authorization_is_refused_at_start_up() {
    for header in ["Authorization", "authorization"] {
        let out = proxy(&[
            "--transport",
            "http",
            "--listen",
            "127.0.0.1:0",
            "--auth-token",
            "gate-secret-123",
            "--forward-header",
            header,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("cannot be combined with --auth-token"),
            "{stderr}"
        );
        assert!(!stderr.contains("gate-secret-123"), "{stderr}");
    }
}

/// Finding 22: absurd timeouts are a usage error, never a panic or a silent 1 ms.
#[test]
fn absurd_timeouts_are_usage_errors() {
    for t in ["inf", "1e20", "-5", "0", "NaN", "abc"] {
        let out = proxy(&["--timeout", t]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--timeout {t}: {stderr}");
        assert!(!stderr.contains("panicked"), "--timeout {t}: {stderr}");
        assert!(stderr.contains("--timeout"), "--timeout {t}: {stderr}");
    }
    // Reasonable values still start (stdio, stdin closed: serves and ends).
    let out = proxy(&["--timeout", "0.5"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("serving"), "{stderr}");
}

/// Finding 18: the start-up line never shows a base URL's user info or query values.
#[test]
fn start_up_line_hides_base_url_secrets() {
    let out = proxy(&[
        "--base-url",
        "http://user:PASSW0RD@127.0.0.1:9/v1?key=QKEY777&x",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("API at http://127.0.0.1:9/v1?key=***&x"),
        "{stderr}"
    );
    for secret in ["PASSW0RD", "QKEY777", "user:"] {
        assert!(!stderr.contains(secret), "{secret} in {stderr}");
    }
    // An unparsable base URL is not echoed past its user info either.
    let out = proxy(&["--base-url", "http://user:PASSW0RD@[bad/"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("PASSW0RD"), "{stderr}");
}

/// Finding 15: listening beyond loopback without --auth-token says so.
#[test]
fn public_listen_without_auth_token_warns() {
    let mut child = Command::new(binary())
        .arg("proxy")
        .arg(spec("petstore.yaml"))
        .args(["--transport", "http", "--listen", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                let started = line.contains("over Streamable HTTP");
                seen.push(line);
                if started {
                    break;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let all = seen.join("\n");
    assert!(all.contains("over Streamable HTTP"), "did not start: {all}");
    assert!(all.contains("without --auth-token"), "{all}");
}

mod http {
    use std::net::SocketAddr;
    use std::time::Duration;

    use super::petstore;
    use openapi_mcp_runtime::http::transport::{HttpOptions, start_http};
    use openapi_mcp_tests::upstream::Upstream;
    use serde_json::json;

    async fn serve(up: &Upstream, opts: impl FnOnce(&mut HttpOptions)) -> SocketAddr {
        let server = petstore(up).await;
        let mut o = HttpOptions::new("127.0.0.1:0".parse().unwrap());
        opts(&mut o);
        start_http(server, o).await.expect("http server").addr
    }

    fn init() -> String {
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}).to_string()
    }

    fn post(http: &reqwest::Client, addr: SocketAddr, body: String) -> reqwest::RequestBuilder {
        http.post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body)
    }

    /// Finding 4: in stateless mode a made-up `Mcp-Session-Id` per request is not a fresh bucket.
    #[tokio::test]
    async fn stateless_rate_limit_is_not_bypassed_by_fresh_session_ids() {
        let up = Upstream::start().await;
        let addr = serve(&up, |o| {
            o.stateless = true;
            o.rate_limit = Some(2);
        })
        .await;
        let http = reqwest::Client::new();
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
        let mut limited = 0;
        for i in 0..10 {
            let r = post(&http, addr, list.clone())
                .header("mcp-session-id", format!("minted-{i}"))
                .send()
                .await
                .unwrap();
            if r.status() == 429 {
                limited += 1;
            }
        }
        assert!(limited >= 6, "only {limited} of 10 rate-limited");
    }

    /// Finding 3: sessions are capped per client, half-open ones expire, and a made-up session id
    /// is neither a rate-limit bucket nor deletable (404).
    #[tokio::test]
    async fn sessions_are_capped_expire_half_open_and_unknown_deletes_are_404() {
        let up = Upstream::start().await;
        let addr = serve(&up, |o| {
            o.sessions.per_client = 3;
            o.sessions.half_open = Duration::from_millis(300);
        })
        .await;
        let http = reqwest::Client::new();
        let mut ids = Vec::new();
        let mut statuses = Vec::new();
        for _ in 0..5 {
            let r = post(&http, addr, init()).send().await.unwrap();
            statuses.push(r.status().as_u16());
            if let Some(id) = r.headers().get("mcp-session-id") {
                ids.push(id.to_str().unwrap().to_string());
            }
        }
        assert_eq!(statuses, [200, 200, 200, 429, 429]);
        assert_eq!(ids.len(), 3);

        let delete = |id: &str| {
            http.delete(format!("http://{addr}/mcp"))
                .header("mcp-session-id", id.to_string())
                .header("mcp-protocol-version", "2025-11-25")
                .send()
        };
        assert_eq!(delete("not-a-session").await.unwrap().status(), 404);
        assert_eq!(delete(&ids[0]).await.unwrap().status(), 204);
        // The others were never used after initialize: gone after the half-open limit, which
        // frees the client's quota.
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_eq!(delete(&ids[1]).await.unwrap().status(), 404);
        for _ in 0..3 {
            assert_eq!(
                post(&http, addr, init()).send().await.unwrap().status(),
                200
            );
        }
    }

    /// A session that completes its handshake stays (it is not half-open).
    #[tokio::test]
    async fn used_sessions_are_kept() {
        let up = Upstream::start().await;
        let addr = serve(&up, |o| o.sessions.half_open = Duration::from_millis(200)).await;
        let http = reqwest::Client::new();
        let r = post(&http, addr, init()).send().await.unwrap();
        let id = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
        drop(r.bytes().await);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        let r = post(&http, addr, note)
            .header("mcp-session-id", &id)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
        tokio::time::sleep(Duration::from_millis(800)).await;
        let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string();
        let r = post(&http, addr, list)
            .header("mcp-session-id", &id)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
}

mod calls {
    use std::time::{Duration, Instant};

    use super::petstore;
    use openapi_mcp_convert::ToolOptions;
    use openapi_mcp_runtime::modes::dynamic::ToolMode;
    use openapi_mcp_runtime::server::ServerOptions;
    use openapi_mcp_tests::harness::{call, connect_in_process, proxy_server_with, spec, text};
    use openapi_mcp_tests::upstream::Upstream;
    use serde_json::{Map, Value, json};

    /// Finding 6: thousands of unknown argument names get a bounded answer, quickly.
    #[tokio::test]
    async fn many_unknown_arguments_get_a_short_answer() {
        let up = Upstream::start().await;
        let server = petstore(&up).await;
        let client = connect_in_process(server).await;
        let mut args = Map::new();
        for i in 0..15_000 {
            args.insert(
                format!("unknown_argument_number_{i:06}_{}", "x".repeat(200)),
                json!(1),
            );
        }
        let started = Instant::now();
        let r = call(&client, "petstore_list_pets", Value::Object(args)).await;
        let took = started.elapsed();
        let t = text(&r);
        assert_eq!(r.is_error, Some(true));
        assert!(t.len() < 8_000, "answer is {} bytes", t.len());
        assert!(t.contains("… and 14990 more unknown arguments"), "{t}");
        assert_eq!(t.matches("valid arguments:").count(), 1, "{t}");
        assert!(took < Duration::from_secs(20), "took {took:?}");
        assert!(up.requests().is_empty(), "nothing may be sent");
    }

    /// Finding 5: a huge unknown operation name in dynamic mode costs little and is not echoed.
    #[tokio::test]
    async fn huge_unknown_operation_names_are_cheap_and_not_echoed() {
        let up = Upstream::start().await;
        let server = proxy_server_with(
            &spec("petstore.yaml"),
            &up.url("/api"),
            ToolOptions::default(),
            &[],
            ServerOptions {
                mode: ToolMode::Dynamic,
                ..ServerOptions::default()
            },
        )
        .await;
        let client = connect_in_process(server).await;
        let name = "q".repeat(300_000);
        let started = Instant::now();
        for (tool, args) in [
            ("describe_operation", json!({"name": name})),
            ("call_operation", json!({"name": name, "arguments": {}})),
        ] {
            let r = call(&client, tool, args).await;
            let t = text(&r);
            assert_eq!(r.is_error, Some(true), "{tool}");
            assert!(
                t.starts_with("Unknown operation"),
                "{tool}: {}",
                &t[..t.len().min(200)]
            );
            assert!(t.len() < 2_000, "{tool}: answer is {} bytes", t.len());
        }
        let r = call(
            &client,
            "search_operations",
            json!({"query": "pet ".repeat(100_000)}),
        )
        .await;
        assert_ne!(r.is_error, Some(true));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
    }
}

/// Finding 10: a 2xx body that echoes the credential reaches the model redacted, in text and in
/// structured content.
#[tokio::test]
async fn echoed_credentials_are_redacted_from_successful_results() {
    use openapi_mcp_convert::ToolOptions;
    use openapi_mcp_tests::harness::{call, connect_in_process, proxy_server, text};
    use openapi_mcp_tests::upstream::{Reply, Upstream};
    use serde_json::json;

    let up = Upstream::start().await;
    up.respond(|r| {
        let key = r.header("x-api-key").unwrap_or_default().to_string();
        Reply::json(
            200,
            json!([{"id": 1, "name": format!("echo {key}"), "tag": format!("https://api/next?key={key}")}]),
        )
    });
    let server = proxy_server(
        &spec("petstore.yaml"),
        &up.url("/api"),
        ToolOptions::default(),
        &[("api_key", "SECRET-KEY-9876")],
    )
    .await;
    let client = connect_in_process(server).await;
    let r = call(&client, "petstore_list_pets", json!({})).await;
    assert_eq!(up.last().header("x-api-key"), Some("SECRET-KEY-9876"));
    let all = serde_json::to_string(&r).unwrap();
    assert!(!all.contains("SECRET-KEY-9876"), "{all}");
    assert!(text(&r).contains("echo [redacted]"), "{}", text(&r));
}

/// Finding 9: credentials go only to the origins the operator named; an operation-level server
/// on another host gets the request without them unless --credential-origin names it; the OAuth2
/// client secret is never POSTed over plain http to a non-loopback host.
#[tokio::test]
async fn credentials_stay_with_the_origins_the_operator_named() {
    use openapi_mcp_convert::{SpecSource, ToolOptions, convert, load};
    use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, Forwarder};
    use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
    use openapi_mcp_tests::harness::{call, connect_in_process, text};
    use openapi_mcp_tests::upstream::{Reply, Upstream};
    use serde_json::json;

    let main = Upstream::start().await;
    let other = Upstream::start().await;
    for up in [&main, &other] {
        up.respond(|_| Reply::json(200, json!({"ok": true})));
    }
    let spec = format!(
        r#"openapi: 3.0.3
info: {{ title: Origins, version: "1" }}
servers: [{{ url: "{main}" }}]
security: [{{ key: [] }}]
paths:
  /a:
    get: {{ operationId: onMain, responses: {{ "200": {{ description: ok }} }} }}
  /b:
    get:
      operationId: onOther
      servers: [{{ url: "{other}" }}]
      responses: {{ "200": {{ description: ok }} }}
  /c:
    get:
      operationId: withClientCredentials
      security: [{{ cc: [] }}]
      responses: {{ "200": {{ description: ok }} }}
components:
  securitySchemes:
    key: {{ type: apiKey, in: header, name: X-Key }}
    cc:
      type: oauth2
      flows:
        clientCredentials: {{ tokenUrl: "http://auth.example.invalid/token", scopes: {{}} }}
"#,
        main = main.url("/api"),
        other = other.url("/api")
    );
    let dir = std::env::temp_dir().join(format!("omcp-origins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("origins.yaml");
    std::fs::write(&path, spec).unwrap();
    let loaded = load(&SpecSource::Path(path.clone())).await.expect("loads");
    let set = convert(&loaded, &ToolOptions::default()).tools;
    let serve = |trusted: Vec<String>| {
        let set = set.clone();
        let main_url = main.url("/api");
        async move {
            let mut creds = Credentials::new();
            creds.set("key", "K-SECRET-1".into());
            creds.set_client_credentials("cc", "id".into(), "CLIENT-SECRET".into());
            let mut o = ForwardOptions::new(url::Url::parse(&main_url).unwrap());
            o.credential_origins = trusted;
            let fwd = Forwarder::new(o, set.security_schemes.clone(), creds).unwrap();
            connect_in_process(ProxyServer::new(set, fwd, ServerOptions::default())).await
        }
    };
    let client = serve(Vec::new()).await;
    call(&client, "origins_on_main", json!({})).await;
    assert_eq!(main.last().header("x-key"), Some("K-SECRET-1"));
    call(&client, "origins_on_other", json!({})).await;
    assert_eq!(
        other.requests().len(),
        1,
        "the request still goes to its server"
    );
    assert_eq!(
        other.last().header("x-key"),
        None,
        "but without the credential"
    );
    let r = call(&client, "origins_with_client_credentials", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("not https"), "{}", text(&r));

    // Named by the operator: the credential goes there too.
    let origin = url::Url::parse(&other.url("/"))
        .unwrap()
        .origin()
        .ascii_serialization();
    let client = serve(vec![origin]).await;
    call(&client, "origins_on_other", json!({})).await;
    assert_eq!(other.last().header("x-key"), Some("K-SECRET-1"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finding 7: a chain of ~700+ single-use `$ref`s (or `allOf`s) made 700-level schemas whose
/// validator compile overflowed the stack and aborted the process. Inlining stops at a depth
/// (the rest stays `$ref`), so schemas stay shallow, the validators compile, calls work.
#[tokio::test]
async fn long_ref_and_allof_chains_keep_schemas_shallow_and_the_process_alive() {
    use openapi_mcp_convert::ToolOptions;
    use openapi_mcp_tests::harness::{call, connect_in_process, proxy_server, text};
    use openapi_mcp_tests::upstream::{Reply, Upstream};
    use serde_json::{Value, json};

    const N: usize = 1500;
    let mut schemas = serde_json::Map::new();
    for i in 0..N {
        let next = if i + 1 < N {
            json!({"$ref": format!("#/components/schemas/P{}", i + 1)})
        } else {
            json!({"type": "string"})
        };
        schemas.insert(
            format!("P{i}"),
            json!({"type": "object", "properties": {"next": next, "v": {"type": "integer"}}}),
        );
        let next = if i + 1 < N {
            json!({"allOf": [{"$ref": format!("#/components/schemas/A{}", i + 1)}], "description": format!("a{i}")})
        } else {
            json!({"type": "object", "properties": {"leaf": {"type": "string"}}})
        };
        schemas.insert(format!("A{i}"), next);
    }
    let spec = json!({
        "openapi": "3.0.3",
        "info": {"title": "Chains", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {
            "/p": {"post": {"operationId": "postP", "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/P0"}}}}, "responses": {"200": {"description": "ok"}}}},
            "/a": {"post": {"operationId": "postA", "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/A0"}}}}, "responses": {"200": {"description": "ok"}}}}
        },
        "components": {"schemas": schemas}
    });
    let dir = std::env::temp_dir().join(format!("omcp-chains-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chains.json");
    std::fs::write(&path, spec.to_string()).unwrap();

    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"ok": true})));
    let server = proxy_server(&path, &up.url("/"), ToolOptions::default(), &[]).await;
    server.warm_up();
    let client = connect_in_process(server).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    fn depth(v: &Value) -> usize {
        match v {
            Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
            Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }
    for t in &tools {
        let d = depth(&Value::Object((*t.input_schema).clone()));
        assert!(d <= 100, "{}: inputSchema nests {d} levels", t.name);
    }
    let r = call(
        &client,
        "chains_post_p",
        json!({"next": {"v": 1, "next": {"v": 2}}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let r = call(
        &client,
        "chains_post_p",
        json!({"next": {"v": "not a number"}}),
    )
    .await;
    assert_eq!(
        r.is_error,
        Some(true),
        "validation still applies: {}",
        text(&r)
    );
    let r = call(&client, "chains_post_a", json!({"body": {"leaf": "x"}})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finding 2: idle and trickling connections are closed after the header-read timeout, and at
/// the connection cap new clients wait for a slot instead of the process running out of
/// descriptors; silent sockets cannot lock out real clients for longer than the timeout.
#[tokio::test]
async fn idle_connections_are_capped_and_timed_out() {
    use openapi_mcp_runtime::http::transport::{HttpOptions, start_http};
    use openapi_mcp_tests::upstream::Upstream;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    let up = Upstream::start().await;
    let server = petstore(&up).await;
    let mut o = HttpOptions::new("127.0.0.1:0".parse().unwrap());
    o.connections.max = 4;
    o.connections.header_read_timeout = Duration::from_millis(400);
    let addr = start_http(server, o).await.expect("http").addr;

    /// Whether the server closes `s` within `within`.
    async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
        let mut buf = [0u8; 256];
        loop {
            match tokio::time::timeout(within, s.read(&mut buf)).await {
                Err(_) => return false,
                Ok(Ok(0)) | Ok(Err(_)) => return true,
                Ok(Ok(_)) => continue,
            }
        }
    }

    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    // At the cap a new client waits (listen backlog) until a silent one gives its slot back.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let post = || {
        reqwest::Client::new()
            .post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init)
            .send()
    };
    let started = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(5), post())
        .await
        .expect("served once the idle connections time out")
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    for s in &mut idle {
        assert!(
            closed_within(s, Duration::from_secs(3)).await,
            "idle: closed after the timeout"
        );
    }
    // A trickle of header lines does not keep a connection open either.
    let mut slow = TcpStream::connect(addr).await.unwrap();
    let started = Instant::now();
    let _ = slow
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n")
        .await;
    let mut closed = false;
    for i in 0..30 {
        if slow
            .write_all(format!("X-Drip-{i}: 1\r\n").as_bytes())
            .await
            .is_err()
        {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        if started.elapsed() > Duration::from_millis(1500) {
            break;
        }
    }
    assert!(
        closed || closed_within(&mut slow, Duration::from_millis(500)).await,
        "trickle closed"
    );
    // Real clients are served at once again.
    let started = Instant::now();
    assert_eq!(post().await.unwrap().status(), 200);
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

/// Part 3: upstreams that push back. 429/503 are retried within --timeout, as Retry-After asks
/// (seconds or an HTTP date) or with jittered backoff; writes only with --retry-writes; a wait
/// beyond the timeout is not made; the model is told what happened.
mod pushback {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use openapi_mcp_convert::ToolOptions;
    use openapi_mcp_runtime::forward::{Credentials, ForwardOptions};
    use openapi_mcp_runtime::server::ServerOptions;
    use openapi_mcp_tests::harness::{
        Client, call, connect_in_process, server_for, spec, tool_set,
    };
    use openapi_mcp_tests::upstream::{Reply, Upstream};
    use serde_json::json;

    async fn client(up: &Upstream, retry_writes: bool) -> Client {
        let set = tool_set(&spec("petstore.yaml"), &ToolOptions::default()).await;
        let tweak = |o: &mut ForwardOptions| {
            o.timeout = Duration::from_secs(6);
            o.retry_writes = retry_writes;
        };
        let server = server_for(
            set,
            &up.url("/api"),
            Credentials::new(),
            tweak,
            ServerOptions::default(),
        );
        connect_in_process(server).await
    }

    /// The first `n` requests get `refusal`, the rest 200.
    fn refuse_first(up: &Upstream, n: usize, refusal: Reply) -> Arc<AtomicUsize> {
        let seen = Arc::new(AtomicUsize::new(0));
        let s = Arc::clone(&seen);
        up.respond(move |_| {
            if s.fetch_add(1, Ordering::SeqCst) < n {
                refusal.clone()
            } else {
                Reply::json(200, json!([{"id": 1, "name": "rex"}]))
            }
        });
        seen
    }

    /// Every text block (the push-back note is the last one).
    fn all_text(r: &openapi_mcp_runtime::rmcp::model::CallToolResult) -> String {
        r.content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn with_header(mut r: Reply, k: &str, v: &str) -> Reply {
        r.headers.push((k.to_string(), v.to_string()));
        r
    }

    #[tokio::test]
    async fn retry_after_seconds_and_dates_are_honoured_for_reads() {
        let up = Upstream::start().await;
        let c = client(&up, false).await;
        let seen = refuse_first(
            &up,
            2,
            with_header(
                Reply::json(429, json!({"message": "slow down"})),
                "Retry-After",
                "1",
            ),
        );
        let started = Instant::now();
        let r = call(&c, "petstore_list_pets", json!({})).await;
        assert_eq!(r.is_error, Some(false), "{}", all_text(&r));
        assert_eq!(seen.load(Ordering::SeqCst), 3);
        assert!(
            started.elapsed() >= Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        let t = all_text(&r);
        assert!(
            t.contains("HTTP 429") && t.contains("retried 2 times") && t.contains("Retry-After"),
            "{t}"
        );

        let date = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2));
        let seen = refuse_first(&up, 1, with_header(Reply::empty(503), "Retry-After", &date));
        let r = call(&c, "petstore_list_pets", json!({})).await;
        assert_eq!(r.is_error, Some(false), "{}", all_text(&r));
        assert_eq!(seen.load(Ordering::SeqCst), 2);

        // Without Retry-After: backoff (well under a second for the first retries).
        let seen = refuse_first(&up, 2, Reply::empty(503));
        let r = call(&c, "petstore_list_pets", json!({})).await;
        assert_eq!(r.is_error, Some(false), "{}", all_text(&r));
        assert_eq!(seen.load(Ordering::SeqCst), 3);
        assert!(all_text(&r).contains("with backoff"), "{}", all_text(&r));
    }

    #[tokio::test]
    async fn writes_are_retried_only_with_retry_writes_and_long_waits_are_declined() {
        let up = Upstream::start().await;
        let refusal = with_header(
            Reply::json(429, json!({"message": "slow down"})),
            "Retry-After",
            "1",
        );
        let c = client(&up, false).await;
        let seen = refuse_first(&up, 1, refusal.clone());
        let r = call(&c, "petstore_create_pet", json!({"name": "rex"})).await;
        assert_eq!(
            seen.load(Ordering::SeqCst),
            1,
            "a POST is not repeated: {}",
            all_text(&r)
        );
        assert_eq!(r.is_error, Some(true));

        let c = client(&up, true).await;
        let seen = refuse_first(&up, 1, refusal);
        let r = call(&c, "petstore_create_pet", json!({"name": "rex"})).await;
        assert_eq!(
            seen.load(Ordering::SeqCst),
            2,
            "--retry-writes: {}",
            all_text(&r)
        );

        let seen = refuse_first(
            &up,
            5,
            with_header(Reply::empty(429), "Retry-After", "3600"),
        );
        let started = Instant::now();
        let r = call(&c, "petstore_list_pets", json!({})).await;
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(seen.load(Ordering::SeqCst), 1);
        assert_eq!(r.is_error, Some(true));
        assert!(
            all_text(&r).contains("retry after 3600 s"),
            "{}",
            all_text(&r)
        );
    }
}

/// Part 3: a `202 Accepted` with a status URL tells the model the operation goes on and the
/// exact call that checks it (a GET tool whose path matches), without the URL's query.
#[tokio::test]
async fn accepted_answers_name_the_follow_up_call() {
    use openapi_mcp_tests::harness::{call, connect_in_process};
    use openapi_mcp_tests::upstream::{Reply, Upstream};
    use serde_json::json;

    let up = Upstream::start().await;
    up.respond(|r| {
        let mut reply = Reply::empty(202);
        let at = if r.path().ends_with("/pets") {
            "/api/pets/42?sig=SECRET-SIG"
        } else {
            "https://elsewhere.example/jobs/1"
        };
        reply.headers.push(("Location".into(), at.into()));
        reply
    });
    let server = petstore(&up).await;
    let client = connect_in_process(server).await;
    let r = call(&client, "petstore_create_pet", json!({"name": "rex"})).await;
    let all: Vec<String> = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    let note = all.last().cloned().unwrap_or_default();
    assert!(note.contains("HTTP 202"), "{all:?}");
    assert!(
        note.contains("Check it with `petstore_show_pet_by_id` {\"petId\":42}"),
        "{note}"
    );
    assert!(!note.contains("SECRET-SIG"), "{note}");
    let r = call(
        &client,
        "petstore_update_pet",
        json!({"petId": 1, "name": "rex"}),
    )
    .await;
    let note = r
        .content
        .iter()
        .rev()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default();
    assert!(
        note.contains("elsewhere.example/jobs/1") && note.contains("no tool of this server reads"),
        "{note}"
    );
}

/// Finding 8's option on the command line: `--no-private-refs` refuses remote `$ref`s to
/// loopback and private addresses (they load by default: local development serves specs there).
#[tokio::test]
async fn no_private_refs_refuses_loopback_refs() {
    use openapi_mcp_tests::upstream::{Reply, Upstream};

    let up = Upstream::start().await;
    up.respond(|_| {
        Reply::raw(
            200,
            "application/yaml",
            "Pet: {type: object, properties: {secret_field: {type: string}}}\n",
        )
    });
    let dir = std::env::temp_dir().join(format!("omcp-private-refs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("spec.yaml");
    std::fs::write(
        &path,
        format!(
            "openapi: 3.0.3\ninfo: {{title: Refs, version: '1'}}\npaths:\n  /p:\n    post:\n      operationId: postP\n      requestBody:\n        content:\n          application/json:\n            schema: {{$ref: '{}#/Pet'}}\n      responses:\n        '200': {{description: ok}}\n",
            up.url("/schemas.yaml")
        ),
    )
    .unwrap();
    let run = |extra: &'static [&'static str]| {
        let path = path.clone();
        tokio::task::spawn_blocking(move || {
            let out = Command::new(binary())
                .arg("tools")
                .arg(&path)
                .arg("--json")
                .args(extra)
                .output()
                .expect("run");
            (
                String::from_utf8_lossy(&out.stdout).to_string(),
                String::from_utf8_lossy(&out.stderr).to_string(),
            )
        })
    };
    let (tools, _) = run(&[]).await.unwrap();
    assert!(tools.contains("secret_field"), "loads by default: {tools}");
    let (tools, stderr) = run(&["--no-private-refs"]).await.unwrap();
    assert!(!tools.contains("secret_field"), "{tools}");
    assert!(stderr.contains("refused"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Part 2: path, query and header values that break their declared `format` (uuid, date,
/// date-time, ipv4/6, email) are tool errors, and nothing is sent; body values are the API's.
#[tokio::test]
async fn wire_values_are_checked_against_unambiguous_formats() {
    use openapi_mcp_convert::ToolOptions;
    use openapi_mcp_tests::harness::{call, connect_in_process, proxy_server, text};
    use openapi_mcp_tests::upstream::{Reply, Upstream};
    use serde_json::json;

    let dir = std::env::temp_dir().join(format!("omcp-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("formats.yaml");
    std::fs::write(
        &path,
        r#"openapi: 3.0.3
info: {title: Formats, version: '1'}
paths:
  /orders/{id}:
    get:
      operationId: getOrder
      parameters:
        - {name: id, in: path, required: true, schema: {type: string, format: uuid}}
        - {name: since, in: query, schema: {type: string, format: date-time}}
        - {name: days, in: query, schema: {type: array, items: {type: string, format: date}}}
        - {name: X-Client-Ip, in: header, schema: {type: string, format: ipv4}}
      responses: {'200': {description: ok}}
"#,
    )
    .unwrap();
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"ok": true})));
    let server = proxy_server(&path, &up.url("/"), ToolOptions::default(), &[]).await;
    let client = connect_in_process(server).await;
    let bad = [
        json!({"id": "42"}),
        json!({"id": "123e4567-e89b-12d3-a456-426614174000", "since": "yesterday"}),
        json!({"id": "123e4567-e89b-12d3-a456-426614174000", "days": ["2024-01-01", "2024-13-01"]}),
        json!({"id": "123e4567-e89b-12d3-a456-426614174000", "X-Client-Ip": "300.1.1.1"}),
    ];
    for args in bad {
        let r = call(&client, "formats_get_order", args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{args}: {}", text(&r));
        assert!(text(&r).contains("is not a valid"), "{}", text(&r));
    }
    assert!(up.requests().is_empty(), "nothing may be sent");
    let r = call(
        &client,
        "formats_get_order",
        json!({"id": "123e4567-e89b-12d3-a456-426614174000", "since": "2024-05-01T12:00:00Z", "days": ["2024-02-29"], "X-Client-Ip": "192.0.2.1"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(up.requests().len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
