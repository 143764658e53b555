//! Soak benchmark (not a test): the release `openapi-mcp proxy` over Streamable HTTP, 16 rmcp
//! clients calling `petstore_show_pet_by_id` in a loop for SOAK_SECONDS (default 600) against an
//! upstream that injects faults by pet id (id % 20): 0 -> 500, 1 -> 503 on the first attempt then
//! 200 (the proxy runs with --retries 2), 2 -> 503 always, 3 -> 300 ms slow answer, 4 -> body
//! cut by a connection reset mid-stream, 5 -> 2 MiB body (cut to 1 MiB by the proxy), else 200.
//!
//! Prints calls done, errors by class, p50/p99 latency, and the proxy's RSS (VmRSS) at start,
//! middle and end, plus a series every 10% of the run (flat = no leak).
//!
//! Run: `cargo bench -p openapi-mcp-tests --bench soak` (`SOAK_SECONDS=60` to shorten;
//! `SOAK_NO_BUILD=1` uses the existing release binary).

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::extract::Path as UrlPath;
use axum::response::{IntoResponse, Response};
use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::model::CallToolRequestParams;
use openapi_mcp_runtime::rmcp::transport::StreamableHttpClientTransport;
use openapi_mcp_runtime::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use openapi_mcp_tests::harness::{Client, spec, workspace_root};
use serde_json::{Map, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const TOOL: &str = "petstore_show_pet_by_id";
const CLIENTS: usize = 16;

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let secs: u64 = std::env::var("SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let bin = release_binary()?;
    let upstream = start_upstream()?;
    let base = format!("http://{upstream}/api");
    let (mut child, url) = spawn_http(&bin, &spec("petstore.yaml"), &base).await?;
    let pid = child.id().context("proxy pid")?;
    eprintln!(
        "soak: {CLIENTS} clients for {secs} s against {url} (proxy pid {pid}, upstream {base})"
    );

    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        let transport = StreamableHttpClientTransport::with_client(
            reqwest::Client::builder().tcp_nodelay(true).build()?,
            StreamableHttpClientTransportConfig::with_uri(url.clone()),
        );
        let c: Client = ().serve(transport).await.context("client connects")?;
        clients.push(Arc::new(c));
    }
    // Warm-up: every fault kind once, then the start RSS.
    for id in 0..20 {
        let _ = call(&clients[0], id).await;
    }
    let rss_start = status_kb(pid, "VmRSS");

    let started = Instant::now();
    let deadline = started + Duration::from_secs(secs);
    let next_id = Arc::new(AtomicU64::new(20));
    let errors: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let mut tasks = Vec::new();
    for c in &clients {
        let c = Arc::clone(c);
        let next_id = Arc::clone(&next_id);
        let errors = Arc::clone(&errors);
        tasks.push(tokio::spawn(async move {
            let mut lat_us: Vec<u32> = Vec::new();
            while Instant::now() < deadline {
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                let t = Instant::now();
                let outcome = call(&c, id).await;
                lat_us.push(t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
                if let Err(class) = outcome
                    && let Ok(mut e) = errors.lock()
                {
                    *e.entry(class).or_default() += 1;
                }
            }
            lat_us
        }));
    }
    // RSS series every 10% of the run.
    let mut series = Vec::new();
    for tenth in 1..=10u32 {
        let at = started + Duration::from_secs(secs) * tenth / 10;
        tokio::time::sleep_until(at.into()).await;
        series.push((tenth * 10, status_kb(pid, "VmRSS")));
    }
    let mut lat: Vec<u32> = Vec::new();
    for t in tasks {
        lat.extend(t.await?);
    }
    let elapsed = started.elapsed();
    let rss_end = status_kb(pid, "VmRSS");
    let hwm = status_kb(pid, "VmHWM");
    lat.sort_unstable();
    let pct = |p: f64| -> f64 {
        if lat.is_empty() {
            return f64::NAN;
        }
        let i = ((lat.len() as f64 - 1.0) * p).round() as usize;
        f64::from(lat[i]) / 1000.0
    };
    let errors = errors.lock().map(|e| e.clone()).unwrap_or_default();
    let failed: u64 = errors.values().sum();
    let mb = |kb: Option<u64>| kb.map_or(f64::NAN, |k| k as f64 / 1024.0);
    println!("soak: {CLIENTS} clients, {:.0} s", elapsed.as_secs_f64());
    println!(
        "calls: {} ({:.0}/s), ok {}, error results {}",
        lat.len(),
        lat.len() as f64 / elapsed.as_secs_f64(),
        lat.len() as u64 - failed,
        failed
    );
    for (class, n) in &errors {
        println!("  {class}: {n}");
    }
    println!(
        "latency: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    let mid = series
        .iter()
        .find(|(p, _)| *p == 50)
        .and_then(|(_, kb)| *kb);
    println!(
        "proxy RSS: start {:.1} MB, middle {:.1} MB, end {:.1} MB (peak {:.1} MB)",
        mb(rss_start),
        mb(mid),
        mb(rss_end),
        mb(hwm)
    );
    println!(
        "RSS series: {}",
        series
            .iter()
            .map(|(p, kb)| format!("{p}%={:.1}", mb(*kb)))
            .collect::<Vec<_>>()
            .join(" ")
    );
    for c in clients {
        if let Ok(c) = Arc::try_unwrap(c) {
            let _ = c.cancel().await;
        }
    }
    let _ = child.kill().await;
    Ok(())
}

/// One call; `Err(class)` for an error result or a protocol failure.
async fn call(c: &Client, id: u64) -> Result<(), String> {
    let mut args = Map::new();
    args.insert("petId".into(), json!(id));
    let fut = c.call_tool(CallToolRequestParams::new(TOOL.to_string()).with_arguments(args));
    match tokio::time::timeout(Duration::from_secs(30), fut).await {
        Err(_) => Err("client timeout (30 s)".into()),
        Ok(Err(e)) => Err(format!("protocol: {}", first_words(&e.to_string()))),
        Ok(Ok(r)) if r.is_error == Some(true) => {
            let text = r
                .content
                .first()
                .and_then(|c| c.as_text())
                .map(|t| t.text.clone())
                .unwrap_or_default();
            Err(format!("isError: {}", first_words(&text)))
        }
        Ok(Ok(r)) => {
            let truncated = r
                .content
                .iter()
                .filter_map(|c| c.as_text())
                .any(|t| t.text.contains("truncated") || t.text.contains("cut"));
            if id % 20 == 5 && !truncated {
                return Err("big body not cut".into());
            }
            Ok(())
        }
    }
}

/// The message's class: its first words, digits kept (status codes), ids dropped.
fn first_words(s: &str) -> String {
    s.split_whitespace()
        .take(8)
        .map(|w| {
            if w.chars().any(|c| c.is_ascii_digit()) && w.len() > 4 {
                "_"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

// --------------------------------------------------------------------------- the upstream

async fn pet(
    UrlPath(id): UrlPath<u64>,
    axum::extract::State(seen): axum::extract::State<Arc<Mutex<HashSet<u64>>>>,
) -> Response {
    let ok = || axum::Json(json!({"id": id, "name": "Rex", "tag": "dog"})).into_response();
    match id % 20 {
        0 => (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        1 => {
            let first = seen.lock().map(|mut s| s.insert(id)).unwrap_or(false);
            if first {
                (axum::http::StatusCode::SERVICE_UNAVAILABLE, "try again").into_response()
            } else {
                ok()
            }
        }
        2 => (axum::http::StatusCode::SERVICE_UNAVAILABLE, "down").into_response(),
        3 => {
            tokio::time::sleep(Duration::from_millis(300)).await;
            ok()
        }
        4 => {
            let chunks: Vec<Result<bytes::Bytes, std::io::Error>> = vec![
                Ok(bytes::Bytes::from_static(b"{\"id\": 1, \"name\": \"")),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "reset",
                )),
            ];
            Response::builder()
                .header("content-type", "application/json")
                .body(axum::body::Body::from_stream(futures::stream::iter(chunks)))
                .unwrap_or_else(|_| ok())
        }
        5 => {
            let big = format!(
                "{{\"id\": {id}, \"name\": \"{}\"}}",
                "x".repeat(2 * 1024 * 1024)
            );
            ([("content-type", "application/json")], big).into_response()
        }
        _ => ok(),
    }
}

/// The upstream on its own thread and runtime, like a separate server.
fn start_upstream() -> anyhow::Result<SocketAddr> {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    std_listener.set_nonblocking(true)?;
    let addr = std_listener.local_addr()?;
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(std_listener) else {
                return;
            };
            let seen: Arc<Mutex<HashSet<u64>>> = Arc::default();
            let app = axum::Router::new()
                .route("/api/pets/{id}", axum::routing::get(pet))
                .with_state(seen);
            let _ = axum::serve(listener, app).await;
        });
    });
    Ok(addr)
}

// --------------------------------------------------------------------------- the proxy

fn release_binary() -> anyhow::Result<PathBuf> {
    let name = format!("openapi-mcp{}", std::env::consts::EXE_SUFFIX);
    let bin = workspace_root().join("target").join("release").join(&name);
    if std::env::var_os("SOAK_NO_BUILD").is_none() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        eprintln!("building the release binary (cargo build --release -p openapi-mcp-cli)...");
        let status = std::process::Command::new(cargo)
            .args(["build", "--release", "-p", "openapi-mcp-cli"])
            .current_dir(workspace_root())
            .status()
            .context("running cargo build --release")?;
        if !status.success() && bin.is_file() {
            eprintln!("WARNING: the release build failed; soaking the existing (STALE) binary");
        } else if !status.success() {
            bail!("cargo build --release -p openapi-mcp-cli failed: {status}");
        }
    }
    if !bin.is_file() {
        bail!("{} not found", bin.display());
    }
    Ok(bin)
}

async fn spawn_http(
    bin: &Path,
    spec: &Path,
    base: &str,
) -> anyhow::Result<(tokio::process::Child, String)> {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.arg("proxy")
        .arg(spec)
        .args(["--base-url", base])
        .args(["--transport", "http", "--listen", "127.0.0.1:0"])
        .args(["--retries", "2", "--timeout", "5"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().context("spawning the HTTP proxy")?;
    let stderr = child.stderr.take().context("child stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let url = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await? {
            if let Some(start) = line.find("http://127.0.0.1:")
                && let Some(len) = line[start..].find("/mcp")
            {
                return Ok(line[start..start + len + 4].to_string());
            }
        }
        bail!("the proxy exited without printing its /mcp URL")
    })
    .await
    .context("waiting for the /mcp URL on stderr")??;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, url))
}

/// A field of /proc/<pid>/status, in kB.
fn status_kb(pid: u32, field: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
