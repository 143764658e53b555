//! The built binary over stdio during its life: `--watch` reloads (and survives a broken spec),
//! and a client cancelling a slow call.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openapi_mcp_runtime::rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest,
};
use openapi_mcp_runtime::rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use openapi_mcp_runtime::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use openapi_mcp_runtime::rmcp::{ClientHandler, RoleClient, ServiceExt};
use openapi_mcp_tests::harness::{binary, spec};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Recorder {
    list_changed: Arc<AtomicUsize>,
}

impl ClientHandler for Recorder {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }
}

/// The binary serving `spec_path` over stdio (extra `args` appended), its stderr collected.
async fn start(
    spec_path: &str,
    base: &str,
    args: &[&str],
    handler: Recorder,
) -> (
    RunningService<RoleClient, Recorder>,
    Arc<Mutex<Vec<String>>>,
) {
    let cmd = tokio::process::Command::new(binary()).configure(|cmd| {
        cmd.args(["proxy", spec_path, "--base-url", base]);
        cmd.args(args);
        cmd.env_remove("RUST_LOG");
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let log = Arc::new(Mutex::new(Vec::new()));
    if let Some(stderr) = stderr {
        let log = log.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                log.lock().expect("log lock").push(line);
            }
        });
    }
    let client = handler.serve(transport).await.expect("initialize");
    (client, log)
}

/// Waits (up to 10 s) until `cond` holds.
async fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn logged(log: &Mutex<Vec<String>>, needle: &str) -> bool {
    log.lock()
        .expect("log lock")
        .iter()
        .any(|l| l.contains(needle))
}

fn temp_spec_path(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir =
        std::env::temp_dir().join(format!("openapi-mcp-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join("spec.yaml")
}

/// Replaces the file atomically (the watcher never reads half a file).
fn write_atomically(path: &PathBuf, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).expect("write spec");
    std::fs::rename(&tmp, path).expect("rename spec");
}

fn watched_spec(with_create: bool) -> String {
    let mut s = String::from(
        "openapi: 3.0.3
info:
  title: Watched
  version: 1.0.0
paths:
  /items:
    get:
      operationId: listItems
      responses:
        '200':
          description: Items
",
    );
    if with_create {
        s.push_str(
            "    post:
      operationId: createItem
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name:
                  type: string
      responses:
        '201':
          description: Created
",
        );
    }
    s
}

type Client = RunningService<RoleClient, Recorder>;

async fn call(client: &Client, name: &str, args: serde_json::Value) -> CallToolResult {
    client
        .call_tool(
            CallToolRequestParams::new(name.to_string())
                .with_arguments(args.as_object().cloned().unwrap_or_default()),
        )
        .await
        .unwrap_or_else(|e| panic!("call {name} failed at the protocol level: {e}"))
}

fn text(r: &CallToolResult) -> String {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

async fn tool_names(client: &RunningService<RoleClient, Recorder>) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

#[tokio::test]
async fn watch_reloads_notifies_and_keeps_tools_on_a_broken_spec() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(201, json!({"ok": true})));
    let path = temp_spec_path("watch");
    write_atomically(&path, &watched_spec(false));
    let rec = Recorder::default();
    let (client, log) = start(
        path.to_str().expect("utf-8 path"),
        &up.url("/api"),
        &["--watch"],
        rec.clone(),
    )
    .await;
    assert_eq!(tool_names(&client).await, ["watched_list_items"]);

    // Add an operation: the client is told, and the new list has it.
    write_atomically(&path, &watched_spec(true));
    wait_for("tools/list_changed", || {
        rec.list_changed.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(
        tool_names(&client).await,
        ["watched_list_items", "watched_create_item"]
    );
    let r = call(&client, "watched_create_item", json!({"name": "n1"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(
        (req.method.as_str(), req.target.as_str()),
        ("POST", "/api/items")
    );
    assert_eq!(req.body_text(), r#"{"name":"n1"}"#);

    // A broken spec: a warning, no notification, the previous tools are still served.
    write_atomically(&path, "openapi: 3.0.3\npaths: [unclosed\n");
    wait_for("the reload failure warning", || {
        logged(
            &log,
            "spec changed but failed to load, keeping the previous tools",
        )
    })
    .await;
    assert_eq!(rec.list_changed.load(Ordering::SeqCst), 1);
    assert_eq!(
        tool_names(&client).await,
        ["watched_list_items", "watched_create_item"]
    );
    up.clear();
    let r = call(&client, "watched_create_item", json!({"name": "n2"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(up.last().body_text(), r#"{"name":"n2"}"#);

    // Fixed again: the watcher is still running.
    write_atomically(&path, &watched_spec(false));
    wait_for("the second tools/list_changed", || {
        rec.list_changed.load(Ordering::SeqCst) == 2
    })
    .await;
    assert_eq!(tool_names(&client).await, ["watched_list_items"]);

    client.cancel().await.expect("shutdown");
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A raw upstream: `GET /api/pets/999` is read and never answered (the connection's close is
/// counted); everything else gets a small JSON answer.
struct SlowUpstream {
    addr: std::net::SocketAddr,
    slow_seen: Arc<AtomicUsize>,
    slow_closed: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl SlowUpstream {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let slow_seen = Arc::new(AtomicUsize::new(0));
        let slow_closed = Arc::new(AtomicUsize::new(0));
        let (seen, closed) = (slow_seen.clone(), slow_closed.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let (seen, closed) = (seen.clone(), closed.clone());
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut tmp = [0u8; 1024];
                    let mut slow = false;
                    loop {
                        match sock.read(&mut tmp).await {
                            Ok(0) | Err(_) => {
                                if slow {
                                    closed.fetch_add(1, Ordering::SeqCst);
                                }
                                return;
                            }
                            Ok(n) => buf.extend_from_slice(&tmp[..n]),
                        }
                        if slow {
                            continue;
                        }
                        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                            continue;
                        };
                        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                        buf.drain(..end + 4);
                        if head.starts_with("GET /api/pets/999 ") {
                            slow = true;
                            seen.fetch_add(1, Ordering::SeqCst);
                            continue;
                        }
                        let body = r#"[{"id":1,"name":"Rex"}]"#;
                        let answer = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if sock.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Self {
            addr,
            slow_seen,
            slow_closed,
            task,
        }
    }
}

impl Drop for SlowUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test]
async fn a_cancelled_call_drops_the_upstream_request_and_the_proxy_stays_responsive() {
    let up = SlowUpstream::start().await;
    let (client, log) = start(
        spec("petstore.yaml").to_str().expect("utf-8 path"),
        &format!("http://{}/api", up.addr),
        &[],
        Recorder::default(),
    )
    .await;

    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("petstore_show_pet_by_id").with_arguments(
            json!({"petId": 999})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ),
    ));
    let handle = client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .expect("request sent");
    wait_for("the slow request upstream", || {
        up.slow_seen.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(up.slow_closed.load(Ordering::SeqCst), 0);

    let cancelled_at = Instant::now();
    handle
        .cancel(Some("the user pressed stop".into()))
        .await
        .expect("cancel sent");
    // The proxy drops the in-flight upstream request: the API sees the connection close.
    wait_for("the upstream connection to close", || {
        up.slow_closed.load(Ordering::SeqCst) == 1
    })
    .await;
    assert!(cancelled_at.elapsed() < Duration::from_secs(3));
    wait_for("the cancellation log line", || {
        logged(&log, "cancelled by the client")
    })
    .await;
    assert!(
        log.lock()
            .expect("log lock")
            .iter()
            .any(|l| l.contains("cancelled by the client") && l.contains("/pets/{petId}")),
        "{:?}",
        log.lock().expect("log lock")
    );

    // The next call goes through at once.
    let started = Instant::now();
    let r = call(&client, "petstore_list_pets", json!({"limit": 1})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        r.structured_content,
        Some(json!({"result": [{"id": 1, "name": "Rex"}]}))
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(up.slow_seen.load(Ordering::SeqCst), 1);

    client.cancel().await.expect("shutdown");
}
