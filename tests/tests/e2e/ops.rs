//! Running it as a service (#20): `/healthz` and `/readyz` (before the bearer gate,
//! `--ready-check`), Prometheus metrics on `--metrics-listen` scraped after known calls, and the
//! audit log (`--audit-log`): its fields, and none of the configured secrets or argument values.
//! The built binary is run with the real flags; calls go through raw JSON-RPC over HTTP (exact
//! control of what is sent, and of which requests the rate limit refuses) and rmcp over stdio.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use openapi_mcp_tests::harness::{binary, call, spec};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const GATE_TOKEN: &str = "gate-token-Zq81xWv3";
const API_KEY: &str = "upstream-key-Hn52kPo9";
const HEADER_SECRET: &str = "header-secret-Tc47mRe2";

/// The binary serving petstore over HTTP (extra `args`), its stderr collected.
struct Proxy {
    _child: tokio::process::Child,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start(base: &str, args: &[&str]) -> Self {
        let mut child = tokio::process::Command::new(binary())
            .arg("proxy")
            .arg(spec("petstore.yaml"))
            .args(["--base-url", base, "--transport", "http"])
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("RUST_LOG")
            .env_remove("PETSTORE_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the proxy");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let err = child.stderr.take().expect("stderr");
        let log = stderr.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(err).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                log.lock().expect("log").push(line);
            }
        });
        Self {
            _child: child,
            stderr,
        }
    }

    async fn mcp(&self) -> String {
        url_after(&self.stderr, "Streamable HTTP at ").await
    }

    async fn metrics(&self) -> String {
        url_after(&self.stderr, "metrics at ").await
    }
}

/// `http://host:port` from the first stderr line holding `marker` followed by a URL.
async fn url_after(stderr: &Mutex<Vec<String>>, marker: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = stderr.lock().expect("log").iter().find_map(|l| {
            let rest = &l[l.find(marker)? + marker.len()..];
            let end = rest.get(7..)?.find('/').map_or(rest.len(), |i| i + 7);
            Some(rest[..end].to_string())
        });
        if let Some(u) = found {
            return u;
        }
        assert!(
            Instant::now() < deadline,
            "no `{marker}` line; stderr: {:?}",
            stderr.lock().expect("log")
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn temp_file(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("openapi-mcp-ops-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(tag)
}

/// A raw 2025-11-25 JSON-RPC session over Streamable HTTP.
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
    next: AtomicU64,
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: Value,
) -> reqwest::Response {
    let mut req = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string());
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    req.send().await.expect("request")
}

/// The JSON-RPC message in an answer (a JSON body, or the `data:` line of an SSE stream).
fn message(body: &str) -> Value {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(std::iter::once(body))
        .find_map(|d| {
            serde_json::from_str::<Value>(d.trim())
                .ok()
                .filter(|v| v.get("result").is_some() || v.get("error").is_some())
        })
        .unwrap_or(Value::Null)
}

impl Session {
    async fn open(url: &str) -> Self {
        let http = reqwest::Client::new();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "ops-test", "version": "0"}}});
        let resp = post(&http, url, Some(GATE_TOKEN), None, init).await;
        assert_eq!(resp.status(), 200);
        let id = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_string();
        let _ = resp.text().await;
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let resp = post(&http, url, Some(GATE_TOKEN), Some(&id), note).await;
        assert!(resp.status().is_success(), "{}", resp.status());
        Session {
            http,
            url: url.to_string(),
            id,
            next: AtomicU64::new(1),
        }
    }

    /// Calls a tool: the HTTP status and the JSON-RPC answer.
    async fn call(&self, tool: &str, args: Value) -> (u16, Value) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        let resp = post(
            &self.http,
            &self.url,
            Some(GATE_TOKEN),
            Some(&self.id),
            body,
        )
        .await;
        let status = resp.status().as_u16();
        (status, message(&resp.text().await.unwrap_or_default()))
    }
}

/// The value of the sample `name{labels}` (exact label text) in a Prometheus scrape.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

fn calls(text: &str, tool: &str, outcome: &str) -> f64 {
    sample(
        text,
        &format!(r#"openapi_mcp_tool_calls_total{{tool="{tool}",outcome="{outcome}"}}"#),
    )
    .unwrap_or(0.0)
}

async fn scrape(url: &str) -> String {
    let resp = reqwest::get(format!("{url}/metrics"))
        .await
        .expect("scrape");
    assert_eq!(resp.status(), 200);
    resp.text().await.expect("metrics text")
}

async fn audit_lines(path: &PathBuf, at_least: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        if lines.len() >= at_least {
            return lines;
        }
        assert!(
            Instant::now() < deadline,
            "the audit log has {} lines, expected {at_least}:\n{text}",
            lines.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

const PET_OK: i64 = 73_310_459;
const PET_MISSING: i64 = 40_440_404;
const BAD_ID: &str = "not-a-number-Wq30";
const PET_NAME: &str = "pet-name-Lx92bT";

#[tokio::test]
async fn metrics_count_known_calls_and_the_audit_log_keeps_no_secrets() {
    let up = Upstream::start().await;
    // Bytes the API answered with, to check the byte counter against.
    let answered = Arc::new(AtomicU64::new(0));
    let tally = answered.clone();
    up.respond(move |r| {
        let reply = if r.path().ends_with(&format!("/{PET_MISSING}")) {
            Reply::json(404, json!({"code": 404, "message": "no such pet"}))
        } else if r.method == "POST" {
            Reply::json(201, json!({"id": 1, "name": "created"}))
        } else if r.path().ends_with("/pets") {
            Reply::json(200, json!([{"id": 1, "name": "a"}]))
        } else {
            Reply::json(200, json!({"id": 7, "name": "b"}))
        };
        tally.fetch_add(reply.body.len() as u64, Ordering::Relaxed);
        reply
    });
    let audit = temp_file("audit.jsonl");
    let auth = format!("api_key={API_KEY}");
    let header = format!("X-Trace: {HEADER_SECRET}");
    let proxy = Proxy::start(
        &up.url("/api"),
        &[
            "--metrics-listen",
            "127.0.0.1:0",
            "--audit-log",
            audit.to_str().expect("utf-8 path"),
            "--auth-token",
            GATE_TOKEN,
            "--auth",
            &auth,
            "--header",
            &header,
            "--rate-limit",
            "8",
        ],
    );
    let base = proxy.mcp().await;
    let metrics = proxy.metrics().await;
    assert_ne!(base, metrics, "metrics are not on the MCP port");
    let mcp = format!("{base}/mcp");
    let http = reqwest::Client::new();

    // Probes need no token; the MCP endpoint does (one auth failure).
    for (path, want) in [("/healthz", "ok"), ("/readyz", "ready")] {
        let resp = http.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert_eq!(resp.text().await.unwrap().trim(), want);
    }
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}});
    let refused = post(&http, &mcp, Some("wrong-token"), None, init).await;
    assert_eq!(refused.status(), 401);
    // /metrics is not served on the MCP port.
    let resp = http
        .get(format!("{base}/metrics"))
        .bearer_auth(GATE_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);

    let s = Session::open(&mcp).await;
    let show = "petstore_show_pet_by_id";
    let (st, ok) = s.call(show, json!({"petId": PET_OK})).await;
    assert_eq!(
        (st, ok["result"]["isError"].as_bool()),
        (200, Some(false)),
        "{ok}"
    );
    let (_, missing) = s.call(show, json!({"petId": PET_MISSING})).await;
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    let (_, invalid) = s.call(show, json!({"petId": BAD_ID})).await;
    assert!(
        invalid["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("nothing was sent")),
        "{invalid}"
    );
    let (_, created) = s
        .call("petstore_create_pet", json!({"name": PET_NAME}))
        .await;
    assert_eq!(created["result"]["isError"], false, "{created}");
    assert_eq!(up.requests().len(), 3, "the invalid call was not sent");

    // A burst over --rate-limit 8 (a token bucket of 8, 6 taken above): some calls are refused
    // with HTTP 429; the counts must be what the client saw.
    let burst: Vec<(u16, Value)> =
        futures::future::join_all((0..16).map(|_| s.call("petstore_list_pets", json!({})))).await;
    let listed = burst.iter().filter(|(st, _)| *st == 200).count();
    let limited = burst.iter().filter(|(st, _)| *st == 429).count();
    assert_eq!(listed + limited, burst.len(), "{burst:?}");
    assert!(limited >= 1, "the burst was not limited: {burst:?}");

    let text = scrape(&metrics).await;
    assert_eq!(calls(&text, show, "ok"), 1.0, "{text}");
    assert_eq!(calls(&text, show, "upstream_4xx"), 1.0, "{text}");
    assert_eq!(calls(&text, show, "invalid"), 1.0, "{text}");
    assert_eq!(calls(&text, "petstore_create_pet", "ok"), 1.0, "{text}");
    assert_eq!(
        calls(&text, "petstore_list_pets", "ok"),
        listed as f64,
        "{text}"
    );
    assert_eq!(
        calls(&text, "petstore_list_pets", "rate_limited"),
        limited as f64,
        "{text}"
    );
    assert_eq!(sample(&text, "openapi_mcp_auth_failures_total"), Some(1.0));
    assert_eq!(sample(&text, "openapi_mcp_tool_calls_in_flight"), Some(0.0));
    let upstream_calls = up.requests().len();
    assert_eq!(upstream_calls, 3 + listed);
    assert_eq!(
        sample(&text, "openapi_mcp_upstream_request_duration_seconds_count"),
        Some(upstream_calls as f64),
        "{text}"
    );
    // Served calls (the refused ones never reached the server).
    assert_eq!(
        sample(&text, "openapi_mcp_tool_call_duration_seconds_count"),
        Some((4 + listed) as f64),
        "{text}"
    );
    let sent: usize = up.requests().iter().map(|r| r.body.len()).sum();
    assert_eq!(
        sample(&text, "openapi_mcp_upstream_sent_bytes_total"),
        Some(sent as f64),
        "{text}"
    );
    assert_eq!(
        sample(&text, "openapi_mcp_upstream_received_bytes_total"),
        Some(answered.load(Ordering::Relaxed) as f64),
        "{text}"
    );

    // The audit log: one line per call, refused ones included.
    let lines = audit_lines(&audit, 4 + listed + limited).await;
    assert_eq!(lines.len(), 4 + listed + limited);
    let of = |outcome: &str| -> Vec<&Value> {
        lines.iter().filter(|l| l["outcome"] == outcome).collect()
    };
    assert_eq!(of("rate_limited").len(), limited);
    assert_eq!(of("invalid").len(), 1);
    let missing = of("upstream_4xx");
    let [line] = missing.as_slice() else {
        panic!("one upstream_4xx line: {lines:?}")
    };
    assert_eq!(line["tool"], show);
    assert_eq!(line["api"], "Petstore");
    assert_eq!(line["operation_id"], "showPetById");
    assert_eq!(line["method"], "GET");
    assert_eq!(line["path"], "/pets/{petId}");
    assert_eq!(line["status"], 404);
    assert!(
        line["latency_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{line}"
    );
    assert!(
        line["upstream_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{line}"
    );
    assert!(
        line["bytes_received"].as_u64().is_some_and(|b| b > 0),
        "{line}"
    );
    assert_eq!(line["caller"]["transport"], "http");
    let digest = line["caller"]["session"]
        .as_str()
        .expect("a session digest");
    assert_eq!(digest.len(), 16);
    assert!(
        line["caller"]["peer"]
            .as_str()
            .is_some_and(|p| p.starts_with("127.0.0.1:"))
    );
    let time = line["time"].as_str().expect("time");
    assert!(
        time.len() == 24 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
        "{time}"
    );
    let created = of("ok")
        .into_iter()
        .find(|l| l["tool"] == "petstore_create_pet")
        .expect("the create_pet line");
    assert_eq!(
        created["bytes_sent"].as_u64(),
        Some(up.requests()[2].body.len() as u64)
    );
    // Every line of the one session has its digest; request ids are unique.
    assert!(
        lines.iter().all(|l| l["caller"]["session"] == digest),
        "{lines:?}"
    );
    let mut ids: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["request_id"].as_str())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), lines.len());

    let raw = std::fs::read_to_string(&audit).unwrap();
    for secret in [GATE_TOKEN, API_KEY, HEADER_SECRET, s.id.as_str()] {
        assert!(!raw.contains(secret), "the audit log holds a secret: {raw}");
    }
    for value in [
        &PET_OK.to_string(),
        &PET_MISSING.to_string(),
        BAD_ID,
        PET_NAME,
    ] {
        assert!(
            !raw.contains(value),
            "the audit log holds an argument value {value}: {raw}"
        );
    }
    // The credentials did reach the API (so the grep above had something to miss).
    assert_eq!(up.requests()[0].header("x-api-key"), Some(API_KEY));
    drop(proxy);
}

#[tokio::test]
async fn readyz_waits_for_the_api_with_ready_check() {
    let up = Upstream::start().await;
    // Nothing listens here: bound, then closed.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let auth = format!("api_key={API_KEY}");
    let args = ["--ready-check", "--auth-token", GATE_TOKEN, "--auth", &auth];
    let down = Proxy::start(&format!("http://{closed}/api"), &args);
    let live = Proxy::start(&up.url("/api"), &args);
    let http = reqwest::Client::new();

    let base = down.mcp().await;
    let health = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let ready = http.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    let body = ready.text().await.unwrap();
    assert!(!body.contains(&closed.port().to_string()), "{body}");

    let base = live.mcp().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = http.get(format!("{base}/readyz")).send().await.unwrap();
        if r.status() == 200 {
            break;
        }
        assert_eq!(r.status(), 503);
        assert!(Instant::now() < deadline, "never ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The probe: a HEAD on the base URL, without credentials.
    let probe = up
        .requests()
        .into_iter()
        .find(|r| r.method == "HEAD")
        .expect("a HEAD probe");
    assert_eq!(probe.path(), "/api");
    assert_eq!(probe.header("x-api-key"), None);
    // Still not ready where nothing answers.
    let base = down.mcp().await;
    let r = http.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(r.status(), 503);
}

/// Over stdio: metrics on their own listener, spec reloads counted under `--watch`, the audit
/// log says the caller is stdio; `--audit-log -` is refused (stdout is the MCP channel).
#[tokio::test]
async fn stdio_metrics_count_reloads_and_audit_names_stdio() {
    let refused = tokio::process::Command::new(binary())
        .arg("proxy")
        .arg(spec("petstore.yaml"))
        .args(["--audit-log", "-"])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("standard output") && err.contains("MCP"),
        "{err}"
    );
    assert!(refused.stdout.is_empty());

    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"id": 1, "name": "a"})));
    let spec_path = temp_file("spec.yaml");
    let original = std::fs::read_to_string(spec("petstore.yaml")).unwrap();
    std::fs::write(&spec_path, &original).unwrap();
    let audit = temp_file("stdio-audit.jsonl");
    let base = up.url("/api");
    let stderr = Arc::new(Mutex::new(Vec::<String>::new()));
    let cmd = tokio::process::Command::new(binary()).configure(|cmd| {
        cmd.arg("proxy").arg(&spec_path);
        cmd.args([
            "--base-url",
            &base,
            "--watch",
            "--metrics-listen",
            "127.0.0.1:0",
        ]);
        cmd.arg("--audit-log").arg(&audit);
        cmd.env_remove("RUST_LOG");
    });
    let (transport, err) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    if let Some(err) = err {
        let log = stderr.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(err).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                log.lock().expect("log").push(line);
            }
        });
    }
    let client = ().serve(transport).await.expect("initialize");
    let r = call(&client, "petstore_show_pet_by_id", json!({"petId": 3})).await;
    assert_eq!(r.is_error, Some(false));
    let metrics = url_after(&stderr, "metrics at ").await;

    // A good change, then a broken one (the previous tools stay).
    tokio::time::sleep(Duration::from_millis(50)).await;
    std::fs::write(
        &spec_path,
        original.replace("title: Petstore", "title: Petstore 2"),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while sample(
        &scrape(&metrics).await,
        r#"openapi_mcp_spec_reloads_total{result="ok"}"#,
    ) != Some(1.0)
    {
        assert!(Instant::now() < deadline, "no reload counted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    std::fs::write(&spec_path, "openapi: [not a spec").unwrap();
    while sample(
        &scrape(&metrics).await,
        r#"openapi_mcp_spec_reloads_total{result="error"}"#,
    ) != Some(1.0)
    {
        assert!(Instant::now() < deadline, "no failed reload counted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let text = scrape(&metrics).await;
    assert_eq!(calls(&text, "petstore_show_pet_by_id", "ok"), 1.0, "{text}");

    let lines = audit_lines(&audit, 1).await;
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["caller"], json!({"transport": "stdio"}));
    assert_eq!(lines[0]["outcome"], "ok");
    assert_eq!(lines[0]["status"], 200);
    client.cancel().await.unwrap();
}

/// SIGTERM (what Kubernetes and `docker stop` send) ends the HTTP server as Ctrl-C does: exit
/// status 0, and the audit log's last batch written first. The call is answered right before the
/// signal, so its entry is still in the writer's batch wait when the signal comes.
#[tokio::test]
async fn sigterm_stops_gracefully_and_writes_the_last_audit_entries() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"id": 7, "name": "b"})));
    let audit = temp_file("sigterm-audit.jsonl");
    let mut proxy = Proxy::start(
        &up.url("/api"),
        &[
            "--audit-log",
            audit.to_str().expect("utf-8 path"),
            "--auth-token",
            GATE_TOKEN,
        ],
    );
    let mcp = format!("{}/mcp", proxy.mcp().await);
    let s = Session::open(&mcp).await;
    for i in 0..3 {
        let (status, answer) = s.call("petstore_show_pet_by_id", json!({"petId": i})).await;
        assert_eq!(status, 200, "{answer}");
    }
    let pid = proxy._child.id().expect("running").to_string();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("run kill");
    assert!(kill.success());
    let exit = tokio::time::timeout(Duration::from_secs(10), proxy._child.wait())
        .await
        .expect("the proxy exits within 10 s of SIGTERM")
        .expect("wait");
    assert!(exit.success(), "exit after SIGTERM: {exit:?}");
    // Read once, no waiting: every entry is there when the process has exited.
    let text = std::fs::read_to_string(&audit).unwrap_or_default();
    assert_eq!(text.lines().count(), 3, "audit log after SIGTERM:\n{text}");
}
