//! Proxy benchmark: what the `openapi-mcp proxy` release binary adds on top of a direct HTTP call.
//!
//! In one run, against a fast local axum upstream on 127.0.0.1:0:
//! 1. the floor: a direct reqwest round trip (`GET /api/pets/{id}`), p50/p99 of sequential calls;
//! 2. the same call through the proxy over stdio (rmcp child-process client), p50/p99 and the
//!    latency added at p50;
//! 3. throughput over Streamable HTTP with 16 concurrent clients, stateful and `--stateless`:
//!    rmcp's default client (`from_uri`, which keeps no connections alive), rmcp over a
//!    keep-alive reqwest client, and (diagnostic) a bare reqwest JSON-RPC client, with the CPU
//!    time per call of the proxy and of this process;
//! 4. time from spawn to the first complete `tools/list` (petstore, and GitHub's 13 MB spec): as a
//!    minimal line-reading client receives it (the target), and through rmcp's client, which
//!    adds its own deserialization of the response;
//! 5. peak RSS (VmHWM) of the proxy with the GitHub spec loaded;
//! 6. GitHub's and Kubernetes' specs served as tools and in `--mode dynamic`: spawn to complete
//!    `tools/list` and VmHWM;
//! 7. what metrics and the audit log cost (`--metrics-listen`, `--audit-log FILE`): runs with
//!    and without them interleaved, the added p50 over stdio and the HTTP calls/s ratio;
//! 8. what the OAuth resource server costs (`--oauth-issuer`, JWTs checked against the issuer's
//!    cached JWKS): HTTP calls/s with 16 clients, each request carrying a real ES256 token from a
//!    tiny issuer served by this process, against the same proxy without authorization, runs
//!    interleaved.
//!
//! The release binary is (re)built first with `cargo build --release -p openapi-mcp-cli`; if that
//! build fails (a shared checkout mid-edit), the previous binary is measured and the table says
//! STALE. `PROXY_BENCH_NO_BUILD=1` skips the build; `PROXY_BENCH_BIN=PATH` measures that binary
//! instead (e.g. the previous commit's release build, for a before/after comparison).
//!
//! Run: `cargo bench -p openapi-mcp-tests --bench proxy`
//! (`PROXY_BENCH_CALLS=N` changes the number of sequential calls, e.g. to profile the proxy;
//! `PROXY_BENCH_ONLY=observe` runs only section 7, `PROXY_BENCH_ONLY=oauth` only section 8,
//! `PROXY_BENCH_ONLY=eras` only the era comparisons of sections 2 and 3, interleaved and
//! repeated `PROXY_BENCH_ROUNDS` times (default 3), e.g. under `perf`; `PROXY_BENCH_ONLY=stdio`
//! only section 2's rmcp-client row, 3 rounds.)

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::extract::Path as UrlPath;
use axum::serve::ListenerExt;
use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::model::CallToolRequestParams;
use openapi_mcp_runtime::rmcp::transport::{
    ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess,
    streamable_http_client::StreamableHttpClientTransportConfig,
};
use openapi_mcp_tests::harness::{Client, shared_specs, spec, workspace_root};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const TOOL: &str = "petstore_show_pet_by_id";
const WARMUP_CALLS: usize = 300;
const DEFAULT_SEQ_CALLS: usize = 2_000;
const HTTP_CLIENTS: usize = 16;
const HTTP_WARMUP: Duration = Duration::from_millis(500);
const HTTP_DURATION: Duration = Duration::from_secs(5);
const SPAWNS: usize = 5;
const GITHUB_SPEC: &str = "github-octokit-2026-3.0.json";
const K8S_SPEC: &str = "k8s-swagger-2.0.json";

const TARGET_ADDED_P50_US: f64 = 100.0;
const TARGET_CALLS_PER_S: f64 = 8_000.0;
const TARGET_GITHUB_LIST_MS: f64 = 300.0;
const TARGET_RSS_MB: f64 = 100.0;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let seq_calls = std::env::var("PROXY_BENCH_CALLS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(DEFAULT_SEQ_CALLS)
        .max(1);
    let (bin, stale) = build_release_binary()?;
    let petstore = spec("petstore.yaml");
    let github = shared_specs()
        .map(|d| d.join(GITHUB_SPEC))
        .filter(|p| p.is_file());

    let upstream = start_upstream()?;
    let base = format!("http://{upstream}/api");
    let mut report = Report::default();
    report.notes.extend(stale.map(|s| format!("binary: {s}")));
    // Other processes share the cores: say how busy the machine was just before measuring.
    let before = machine_ticks();
    tokio::time::sleep(Duration::from_secs(1)).await;
    report.notes.push(format!(
        "machine CPU busy in the 1 s before measuring (other processes): {:.0} %",
        busy_share(before, machine_ticks()) * 100.0
    ));
    eprintln!("upstream: http://{upstream}; binary: {}", bin.display());
    if std::env::var("PROXY_BENCH_ONLY").is_ok_and(|v| v == "observe") {
        bench_observe(&bin, &petstore, &base, seq_calls, &mut report).await?;
        report.print();
        return Ok(());
    }
    if std::env::var("PROXY_BENCH_ONLY").is_ok_and(|v| v == "oauth") {
        bench_oauth(&bin, &petstore, &base, &mut report).await?;
        report.print();
        return Ok(());
    }

    if std::env::var("PROXY_BENCH_ONLY").is_ok_and(|v| v == "stdio") {
        // Section 2's rmcp-client row alone: the direct floor and the proxy, alternated.
        report.section(&format!(
            "2 (stdio only). rmcp client over stdio, {seq_calls} sequential calls, 3 rounds"
        ));
        for round in 0..3 {
            eprintln!("[stdio] round {}/3...", round + 1);
            let direct = bench_direct(upstream, seq_calls).await?;
            let stdio = bench_stdio(&bin, &petstore, &base, seq_calls).await?;
            report.info(
                &format!(
                    "round {}: added p50 | proxy CPU per call | switches",
                    round + 1
                ),
                format!(
                    "{:.1} µs | {:.0} µs | {:.1}",
                    us(stdio.lat.p50) - us(direct.p50),
                    stdio.proxy_cpu_us_per_call,
                    stdio.switches_per_call
                ),
            );
        }
        report.print();
        return Ok(());
    }
    if std::env::var("PROXY_BENCH_ONLY").is_ok_and(|v| v == "eras") {
        bench_eras(&bin, &petstore, upstream, &base, seq_calls, &mut report).await?;
        report.print();
        return Ok(());
    }

    // 1. The floor.
    eprintln!("[1/5] direct HTTP round trip ({seq_calls} calls)...");
    let m0 = machine_ticks();
    let direct = bench_direct(upstream, seq_calls).await?;
    let m1 = machine_ticks();

    // 2. Through the proxy over stdio.
    eprintln!("[2/5] proxy over stdio ({seq_calls} calls)...");
    let stdio = bench_stdio(&bin, &petstore, &base, seq_calls).await?;
    let m2 = machine_ticks();
    eprintln!("[2/5] ... by protocol era, a bare line client ({seq_calls} calls each)...");
    let stdio_2025 = bench_stdio_raw(&bin, &petstore, &base, seq_calls, false).await?;
    let stdio_2026 = bench_stdio_raw(&bin, &petstore, &base, seq_calls, true).await?;
    eprintln!("[2/5] ... and over Streamable HTTP --stateless, one keep-alive rmcp client...");
    let http_seq = bench_http_sequential(&bin, &petstore, &base, seq_calls).await?;

    // 3. Throughput over Streamable HTTP.
    eprintln!(
        "[3/5] Streamable HTTP, {HTTP_CLIENTS} clients x {}s per run...",
        HTTP_DURATION.as_secs()
    );
    let mut http_runs = Vec::new();
    for (mode, stateless) in [("stateful", false), ("--stateless", true)] {
        for kind in [
            HttpClientKind::Rmcp,
            HttpClientKind::RmcpPooled,
            HttpClientKind::Raw,
            HttpClientKind::Raw2026,
        ] {
            eprintln!("[3/5] ... {mode}, {}...", kind.label());
            let r = bench_http(&bin, &petstore, &base, stateless, kind).await?;
            http_runs.push((mode, kind, r));
        }
    }

    // 4 and 5. Spawn to tools/list, and peak RSS with the GitHub spec.
    eprintln!("[4/5] spawn -> tools/list ({SPAWNS} spawns per spec)...");
    let pet_list = bench_spawn(&bin, &petstore, &base, false).await?;
    let gh_list = match &github {
        Some(g) => Some(bench_spawn(&bin, g, &base, true).await?),
        None => None,
    };
    let pet_raw = bench_spawn_raw(&bin, &petstore, &base, &[]).await?;
    let gh_raw = match &github {
        Some(g) => Some(bench_spawn_raw(&bin, g, &base, &[]).await?),
        None => None,
    };
    // 6. Large specs as tools and in dynamic mode (which bundles no tool schema up front).
    eprintln!(
        "[4/5] ... GitHub and Kubernetes as tools and --mode dynamic ({SPAWNS} spawns each)..."
    );
    let mut by_mode = Vec::new();
    if let Some(dir) = shared_specs() {
        for name in [GITHUB_SPEC, K8S_SPEC] {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            for (mode, args) in [
                ("tools", &[][..]),
                ("--mode dynamic", &["--mode", "dynamic"][..]),
            ] {
                by_mode.push((name, mode, bench_spawn_raw(&bin, &path, &base, args).await?));
            }
        }
    }

    // 7. Metrics and the audit log on (the runs interleaved with runs without).
    eprintln!("[5/5] metrics + audit log on vs off...");
    let mut observe_report = Report::default();
    bench_observe(&bin, &petstore, &base, seq_calls, &mut observe_report).await?;
    // 8. The OAuth resource server on (interleaved with runs without).
    eprintln!("[5/5] OAuth resource server on vs off...");
    bench_oauth(&bin, &petstore, &base, &mut observe_report).await?;

    // The table.
    report.section("1. floor: direct reqwest -> axum upstream, GET /api/pets/{id}, sequential");
    report.latency("direct HTTP round trip", &direct);
    report.info(
        "machine CPU busy during this run, all processes",
        format!("{:.0} %", busy_share(m0, m1) * 100.0),
    );
    report.section(&format!(
        "2. proxy over stdio (release binary), tools/call {TOOL} {{\"petId\":1}}, sequential"
    ));
    report.latency("proxy round trip", &stdio.lat);
    report.info(
        "machine CPU busy during this run, all processes",
        format!("{:.0} %", busy_share(m1, m2) * 100.0),
    );
    let added = us(stdio.lat.p50) - us(direct.p50);
    report.target_row(
        "added latency at p50 (proxy - direct)",
        format!("{added:.1} µs"),
        format!("<= {TARGET_ADDED_P50_US:.0} µs"),
        added <= TARGET_ADDED_P50_US,
    );
    report.info(
        "added latency at p99 (proxy - direct)",
        format!("{:.1} µs", us(stdio.lat.p99) - us(direct.p99)),
    );
    report.info(
        "ratio proxy / direct (p50, p99)",
        format!(
            "{:.2}x, {:.2}x",
            us(stdio.lat.p50) / us(direct.p50).max(0.001),
            us(stdio.lat.p99) / us(direct.p99).max(0.001)
        ),
    );
    report.info(
        "proxy CPU per call (user+sys) | context switches per call",
        format!(
            "{:.1} µs | {:.1}",
            stdio.proxy_cpu_us_per_call, stdio.switches_per_call
        ),
    );
    report.latency(
        "bare line client, 2025-11-25 (after initialize)",
        &stdio_2025.lat,
    );
    report.latency(
        "bare line client, 2026-07-28 (_meta per call)",
        &stdio_2026.lat,
    );
    let added_2025 = us(stdio_2025.lat.p50) - us(direct.p50);
    let added_2026 = us(stdio_2026.lat.p50) - us(direct.p50);
    let era_ratio = added_2026 / added_2025.max(0.001);
    report.target_row(
        "added latency at p50, 2026 / 2025 era",
        format!("{added_2026:.1} / {added_2025:.1} µs = {era_ratio:.2}x"),
        "<= 1.10x".to_string(),
        era_ratio <= 1.10,
    );
    report.info(
        "proxy CPU per call, 2025 | 2026 era",
        format!(
            "{:.1} µs | {:.1} µs",
            stdio_2025.proxy_cpu_us_per_call, stdio_2026.proxy_cpu_us_per_call
        ),
    );
    report.latency(
        "diag.: same, Streamable HTTP --stateless + keep-alive",
        &http_seq.lat,
    );
    report.info(
        "diag.: same, proxy CPU | context switches per call",
        format!(
            "{:.1} µs | {:.1}",
            http_seq.proxy_cpu_us_per_call, http_seq.switches_per_call
        ),
    );
    report.section(&format!(
        "3. Streamable HTTP throughput, {HTTP_CLIENTS} concurrent clients (one session each), {}s per run",
        HTTP_DURATION.as_secs()
    ));
    for (mode, kind, r) in &http_runs {
        let label = format!("{mode}, {}", kind.label());
        if !matches!(kind, HttpClientKind::Raw | HttpClientKind::Raw2026) {
            report.target_row(
                &format!("{label}: calls/s"),
                format!("{:.0}", r.calls_per_s),
                format!(">= {TARGET_CALLS_PER_S:.0}"),
                r.calls_per_s >= TARGET_CALLS_PER_S,
            );
        } else {
            report.info(
                &format!("{label}: calls/s"),
                format!("{:.0}", r.calls_per_s),
            );
        }
        report.info(
            &format!("{label}: calls (errors)"),
            format!("{} ({})", r.calls, r.errors),
        );
        report.info(
            &format!("{label}: CPU/call proxy | bench process"),
            format!(
                "{:.0} µs | {:.0} µs",
                r.proxy_cpu_us_per_call, r.bench_cpu_us_per_call
            ),
        );
        report.info(
            &format!("{label}: machine CPU busy, all processes"),
            format!("{:.0} %", r.machine_busy * 100.0),
        );
    }
    let rate = |mode: &str, kind: HttpClientKind| {
        http_runs
            .iter()
            .find(|(m, k, _)| *m == mode && *k == kind)
            .map_or(f64::NAN, |(_, _, r)| r.calls_per_s)
    };
    for mode in ["stateful", "--stateless"] {
        let (old, new) = (
            rate(mode, HttpClientKind::Raw),
            rate(mode, HttpClientKind::Raw2026),
        );
        report.target_row(
            &format!("{mode}: 2026-07-28 / 2025-11-25 calls/s (bare clients)"),
            format!("{new:.0} / {old:.0} = {:.2}x", new / old),
            ">= 0.90x".to_string(),
            new / old >= 0.90,
        );
    }
    report.section(&format!(
        "4. spawn -> first complete tools/list (incl. initialize), median of {SPAWNS}"
    ));
    let span = |v: &[Duration]| {
        format!(
            "{:.1} ms (min {:.1}, max {:.1})",
            ms(v[v.len() / 2]),
            ms(v[0]),
            ms(v[v.len() - 1])
        )
    };
    report.info(
        &format!("petstore.yaml ({} tools): response received", pet_raw.tools),
        span(&pet_raw.times),
    );
    report.info(
        "  same, rmcp client (incl. its deserialization)",
        format!(
            "{:.1} ms (min {:.1}, max {:.1})",
            ms(pet_list.median),
            ms(pet_list.min),
            ms(pet_list.max)
        ),
    );
    match (&gh_list, &gh_raw) {
        (
            Some(g),
            Some(RawSpawns {
                times: raw,
                tools: n,
                ..
            }),
        ) => {
            let median = raw[raw.len() / 2];
            report.target_row(
                &format!("{GITHUB_SPEC} ({n} tools): response received"),
                span(raw),
                format!("< {TARGET_GITHUB_LIST_MS:.0} ms"),
                ms(median) < TARGET_GITHUB_LIST_MS,
            );
            report.info(
                &format!(
                    "  same, rmcp client (incl. its deserialization; {} tools)",
                    g.tools
                ),
                format!(
                    "{:.1} ms (min {:.1}, max {:.1})",
                    ms(g.median),
                    ms(g.min),
                    ms(g.max)
                ),
            );
            report.info(
                "  of which spawn -> 'serving' line (load + convert)",
                g.ready_median
                    .map_or("n/a".into(), |d| format!("{:.1} ms", ms(d))),
            );
        }
        _ => report.skipped(GITHUB_SPEC, "../shared/specs is absent"),
    }
    report.section("5. peak RSS of the proxy with the GitHub spec loaded (VmHWM)");
    match &gh_list {
        Some(g) => {
            let after_list = g.hwm_after_list_kb.map_or(f64::NAN, mb);
            let settled = g.hwm_settled_kb.map_or(f64::NAN, mb);
            report.info(
                "VmHWM right after tools/list",
                format!("{after_list:.1} MB"),
            );
            report.target_row(
                "VmHWM after validator warm-up settled",
                format!("{settled:.1} MB"),
                format!("< {TARGET_RSS_MB:.0} MB"),
                settled < TARGET_RSS_MB,
            );
            report.info(
                "petstore VmHWM after tools/list, for scale",
                format!("{:.1} MB", pet_list.hwm_settled_kb.map_or(f64::NAN, mb)),
            );
        }
        None => report.skipped("peak RSS (GitHub spec)", "../shared/specs is absent"),
    }
    report.section(
        "6. large specs by mode: spawn -> complete tools/list (median of 5), VmHWM of the last spawn",
    );
    if by_mode.is_empty() {
        report.skipped("large specs by mode", "../shared/specs is absent");
    }
    for (name, mode, raw) in &by_mode {
        report.info(
            &format!("{name}, {mode} ({} tools listed)", raw.tools),
            format!(
                "{:.1} ms | {:.1} MB",
                ms(raw.times[raw.times.len() / 2]),
                raw.hwm_kb.map_or(f64::NAN, mb)
            ),
        );
    }
    report.lines.append(&mut observe_report.lines);
    report.print();
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 7. What metrics and the audit log cost.

/// Runs of each kind, interleaved (off, on, off, on, ...), so drift in the machine's load hits
/// both alike.
const OBSERVE_PAIRS_STDIO: usize = 3;
const OBSERVE_PAIRS_HTTP: usize = 2;
const TARGET_OBSERVE_ADDED_P50_US: f64 = 10.0;
const TARGET_OBSERVE_HTTP_RATIO: f64 = 0.95;

/// `--metrics-listen 127.0.0.1:0 --audit-log FILE` against the same proxy without them: the
/// added p50 over stdio (bare 2025 line client, sequential) and the calls/s ratio over
/// Streamable HTTP (16 bare stateful clients). Tracing has no exporter to set: the log level is
/// the default in both.
async fn bench_observe(
    bin: &Path,
    spec: &Path,
    base: &str,
    seq_calls: usize,
    report: &mut Report,
) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("openapi-mcp-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let audit = dir.join("audit.jsonl");
    let on: Vec<String> = vec![
        "--metrics-listen".into(),
        "127.0.0.1:0".into(),
        "--audit-log".into(),
        audit.display().to_string(),
    ];
    let (mut off_p50, mut on_p50) = (Vec::new(), Vec::new());
    let (mut off_cpu, mut on_cpu) = (Vec::new(), Vec::new());
    for _ in 0..OBSERVE_PAIRS_STDIO {
        let r = bench_stdio_raw_with(bin, spec, base, seq_calls, false, &[]).await?;
        off_p50.push(us(r.lat.p50));
        off_cpu.push(r.proxy_cpu_us_per_call);
        let r = bench_stdio_raw_with(bin, spec, base, seq_calls, false, &on).await?;
        on_p50.push(us(r.lat.p50));
        on_cpu.push(r.proxy_cpu_us_per_call);
    }
    let lines = std::fs::read_to_string(&audit)
        .map(|t| t.lines().count())
        .unwrap_or(0);
    let expected = OBSERVE_PAIRS_STDIO * (seq_calls + WARMUP_CALLS);
    if lines != expected {
        bail!("the audit log has {lines} lines, {expected} calls were made");
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (off, onv) = (median(&mut off_p50), median(&mut on_p50));
    report.section(
        "7. metrics + audit log (--metrics-listen, --audit-log FILE) vs without, interleaved runs",
    );
    report.info(
        &format!("stdio p50, median of {OBSERVE_PAIRS_STDIO} runs: off | on"),
        format!("{off:.1} µs | {onv:.1} µs"),
    );
    report.target_row(
        "stdio: added p50 with metrics + audit log",
        format!("{:.1} µs", onv - off),
        format!("<= {TARGET_OBSERVE_ADDED_P50_US:.0} µs"),
        onv - off <= TARGET_OBSERVE_ADDED_P50_US,
    );
    report.info(
        "stdio: proxy CPU per call, off | on (medians)",
        format!(
            "{:.1} µs | {:.1} µs",
            median(&mut off_cpu),
            median(&mut on_cpu)
        ),
    );
    let (mut off_rate, mut on_rate) = (0.0, 0.0);
    let (mut off_cpu, mut on_cpu) = (Vec::new(), Vec::new());
    for _ in 0..OBSERVE_PAIRS_HTTP {
        let r = bench_http_with(bin, spec, base, false, HttpClientKind::Raw, &[]).await?;
        off_rate += r.calls_per_s;
        off_cpu.push(r.proxy_cpu_us_per_call);
        let r = bench_http_with(bin, spec, base, false, HttpClientKind::Raw, &on).await?;
        on_rate += r.calls_per_s;
        on_cpu.push(r.proxy_cpu_us_per_call);
        if r.errors > 0 {
            bail!("{} calls failed with metrics + audit log on", r.errors);
        }
    }
    let n = OBSERVE_PAIRS_HTTP as f64;
    let ratio = on_rate / off_rate;
    report.info(
        &format!(
            "HTTP, {HTTP_CLIENTS} bare stateful clients, mean of {OBSERVE_PAIRS_HTTP} x {}s: off | on",
            HTTP_DURATION.as_secs()
        ),
        format!("{:.0} | {:.0} calls/s", off_rate / n, on_rate / n),
    );
    report.target_row(
        "HTTP: calls/s with / without metrics + audit log",
        format!("{ratio:.3}x"),
        format!(">= {TARGET_OBSERVE_HTTP_RATIO:.2}x"),
        ratio >= TARGET_OBSERVE_HTTP_RATIO,
    );
    report.info(
        "HTTP: proxy CPU per call, off | on (medians)",
        format!(
            "{:.0} µs | {:.0} µs",
            median(&mut off_cpu),
            median(&mut on_cpu)
        ),
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

const OAUTH_PAIRS_HTTP: usize = 3;
const TARGET_OAUTH_HTTP_RATIO: f64 = 0.90;
/// The resource the bench's tokens are for (`--oauth-audience`).
const OAUTH_AUDIENCE: &str = "http://proxy-bench.invalid/mcp";

/// A tiny authorization server in this process: RFC 8414 metadata naming its JWKS, and the
/// JWKS (one ES256 key made here). Returns the issuer URL and a token it "issued" for
/// [`OAUTH_AUDIENCE`], valid for an hour.
async fn bench_issuer() -> anyhow::Result<(String, String)> {
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
        .map_err(|_| anyhow::anyhow!("generating the bench key"))?;
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
        .map_err(|_| anyhow::anyhow!("reading the bench key"))?;
    let point = pair.public_key().as_ref(); // 0x04 || x || y
    let jwks = json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "bench-1", "alg": "ES256",
        "use": "sig", "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])}]});
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let issuer = format!("http://{}", listener.local_addr()?);
    let meta = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"), "response_types_supported": ["code"]});
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || std::future::ready(axum::Json(meta.clone()))),
        )
        .route(
            "/jwks",
            axum::routing::get(move || std::future::ready(axum::Json(jwks.clone()))),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let claims = json!({"iss": issuer, "aud": OAUTH_AUDIENCE, "sub": "proxy-bench",
        "iat": now, "exp": now + 3600, "scope": "pets:read"});
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some("bench-1".into());
    let token = jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_ec_der(pkcs8.as_ref()),
    )?;
    Ok((issuer, token))
}

/// `--oauth-issuer` (every request's JWT checked against the cached JWKS, and each
/// `tools/call`'s scopes) against the same proxy without authorization: calls/s over
/// Streamable HTTP with 16 bare stateful clients, runs interleaved.
async fn bench_oauth(
    bin: &Path,
    spec: &Path,
    base: &str,
    report: &mut Report,
) -> anyhow::Result<()> {
    let (issuer, token) = bench_issuer().await?;
    let on: Vec<String> = vec![
        "--oauth-issuer".into(),
        issuer,
        "--oauth-audience".into(),
        OAUTH_AUDIENCE.into(),
    ];
    let bearer = format!("Bearer {token}");
    // The gate is really on: no token, 401.
    let (mut child, url) = spawn_http_with(bin, spec, base, false, &on).await?;
    let status = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#)
        .send()
        .await?
        .status();
    let _ = child.start_kill();
    let _ = child.wait().await;
    if status != reqwest::StatusCode::UNAUTHORIZED {
        bail!("--oauth-issuer let a request without a token through (HTTP {status})");
    }
    let (mut off_rate, mut on_rate) = (0.0, 0.0);
    let (mut off_cpu, mut on_cpu) = (Vec::new(), Vec::new());
    for _ in 0..OAUTH_PAIRS_HTTP {
        let r = bench_http_as(bin, spec, base, false, HttpClientKind::Raw, &[], None).await?;
        off_rate += r.calls_per_s;
        off_cpu.push(r.proxy_cpu_us_per_call);
        let r = bench_http_as(
            bin,
            spec,
            base,
            false,
            HttpClientKind::Raw,
            &on,
            Some(&bearer),
        )
        .await?;
        on_rate += r.calls_per_s;
        on_cpu.push(r.proxy_cpu_us_per_call);
        if r.errors > 0 {
            bail!(
                "{} calls failed with the OAuth resource server on",
                r.errors
            );
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let n = OAUTH_PAIRS_HTTP as f64;
    let ratio = on_rate / off_rate;
    report.section(
        "8. OAuth resource server (--oauth-issuer, ES256 JWT per request, cached JWKS) vs no authorization, interleaved runs",
    );
    report.info(
        &format!(
            "HTTP, {HTTP_CLIENTS} bare stateful clients, mean of {OAUTH_PAIRS_HTTP} x {}s: off | on",
            HTTP_DURATION.as_secs()
        ),
        format!("{:.0} | {:.0} calls/s", off_rate / n, on_rate / n),
    );
    report.target_row(
        "HTTP: calls/s with / without the OAuth resource server",
        format!("{ratio:.3}x"),
        format!(">= {TARGET_OAUTH_HTTP_RATIO:.2}x"),
        ratio >= TARGET_OAUTH_HTTP_RATIO,
    );
    report.info(
        "HTTP: proxy CPU per call, off | on (medians)",
        format!(
            "{:.0} µs | {:.0} µs",
            median(&mut off_cpu),
            median(&mut on_cpu)
        ),
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Building and locating the release binary.

/// Runs `cargo build --release -p openapi-mcp-cli` (a no-op when fresh) and returns the binary.
fn build_release_binary() -> anyhow::Result<(PathBuf, Option<String>)> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let name = format!("openapi-mcp{}", std::env::consts::EXE_SUFFIX);
    // This bench runs from <target>/release/deps/; the binary sits in <target>/release/.
    let exe = std::env::current_exe().context("current exe")?;
    let find = || {
        [
            exe.parent().and_then(Path::parent).map(|d| d.join(&name)),
            Some(workspace_root().join("target").join("release").join(&name)),
        ]
        .into_iter()
        .flatten()
        .find(|p| p.is_file())
    };
    if let Some(bin) = std::env::var_os("PROXY_BENCH_BIN") {
        // Another build (e.g. the previous commit's, for a before/after table).
        let bin = PathBuf::from(bin);
        anyhow::ensure!(
            bin.is_file(),
            "PROXY_BENCH_BIN={} is not a file",
            bin.display()
        );
        let note = format!("PROXY_BENCH_BIN={}", bin.display());
        return Ok((bin, Some(note)));
    }
    if std::env::var_os("PROXY_BENCH_NO_BUILD").is_some() {
        let bin = find().context("PROXY_BENCH_NO_BUILD is set but no release binary exists")?;
        return Ok((bin, Some("not rebuilt (PROXY_BENCH_NO_BUILD)".into())));
    }
    eprintln!("building the release binary (cargo build --release -p openapi-mcp-cli)...");
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "-p", "openapi-mcp-cli"])
        .current_dir(workspace_root())
        .status()
        .context("running cargo build --release")?;
    if status.success() {
        return Ok((
            find().context("release binary not found after building it")?,
            None,
        ));
    }
    // A shared checkout can be mid-edit: measure the last good build, and say so loudly.
    match find() {
        Some(bin) => {
            eprintln!("WARNING: the release build failed; measuring the existing (STALE) binary");
            Ok((
                bin,
                Some("STALE: the release build failed, measured the previous binary".into()),
            ))
        }
        None => bail!("cargo build --release -p openapi-mcp-cli failed: {status}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The upstream.

/// A fast upstream: `GET /api/pets/{id}` answers a small JSON pet. It runs on its own thread with
/// a current-thread runtime, like a separate server: its wake-ups do not depend on how busy the
/// bench's own runtime workers are (which made the floor bimodal when they shared one).
fn start_upstream() -> anyhow::Result<SocketAddr> {
    async fn pet(UrlPath(id): UrlPath<i64>) -> axum::Json<Value> {
        axum::Json(json!({"id": id, "name": "Rex", "tag": "dog"}))
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("upstream".into())
        .spawn(move || {
            rt.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let listener = listener.tap_io(|tcp| {
                    let _ = tcp.set_nodelay(true);
                });
                let app = axum::Router::new().route("/api/pets/{id}", axum::routing::get(pet));
                let _ = axum::serve(listener, app).await;
            });
        })?;
    Ok(addr)
}

// ---------------------------------------------------------------------------------------------
// 1. Direct.

async fn bench_direct(upstream: SocketAddr, seq_calls: usize) -> anyhow::Result<Latency> {
    let http = reqwest::Client::builder().tcp_nodelay(true).build()?;
    let url = format!("http://{upstream}/api/pets/1");
    let one = async || -> anyhow::Result<()> {
        let resp = http.get(&url).send().await?;
        if !resp.status().is_success() {
            bail!("upstream answered {}", resp.status());
        }
        let body = resp.bytes().await?;
        std::hint::black_box(body);
        Ok(())
    };
    for _ in 0..WARMUP_CALLS {
        one().await?;
    }
    let mut samples = Vec::with_capacity(seq_calls);
    for _ in 0..seq_calls {
        let t = Instant::now();
        one().await?;
        samples.push(t.elapsed());
    }
    Ok(Latency::of(samples))
}

// ---------------------------------------------------------------------------------------------
// 2. Stdio.

/// Sequential latency through the proxy, and the proxy's CPU time per call.
struct StdioResult {
    lat: Latency,
    proxy_cpu_us_per_call: f64,
    /// Context switches of all the proxy's threads per call.
    switches_per_call: f64,
}

fn tool_args() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("petId".into(), json!(1));
    m
}

/// One tools/call; an error result or a protocol error is an error.
async fn call_once(client: &Client, args: &Map<String, Value>) -> anyhow::Result<()> {
    let r = client
        .call_tool(CallToolRequestParams::new(TOOL).with_arguments(args.clone()))
        .await?;
    if r.is_error == Some(true) {
        bail!("tool error: {:?}", r.content.first());
    }
    std::hint::black_box(r);
    Ok(())
}

/// Spawns the proxy over stdio and connects (initialize); returns the client and the child's pid.
/// A spawned stdio proxy: the connected client, its pid, and when it printed its "serving" line
/// (spec loaded and converted).
struct StdioProxy {
    client: Client,
    pid: u32,
    ready: tokio::sync::oneshot::Receiver<Instant>,
}

/// Spawns the proxy over stdio and connects (initialize).
async fn spawn_stdio(bin: &Path, spec: &Path, base: &str) -> anyhow::Result<StdioProxy> {
    let cmd = tokio::process::Command::new(bin).configure(|cmd| {
        cmd.arg("proxy").arg(spec).args(["--base-url", base]);
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .context("spawning the proxy")?;
    let pid = transport.id().context("child pid")?;
    let (tx, ready) = tokio::sync::oneshot::channel();
    if let Some(stderr) = stderr {
        tokio::spawn(async move {
            let mut tx = Some(tx);
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("serving")
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(Instant::now());
                }
            }
        });
    }
    let client = ().serve(transport).await.context("initialize over stdio")?;
    Ok(StdioProxy { client, pid, ready })
}

async fn bench_stdio(
    bin: &Path,
    spec: &Path,
    base: &str,
    seq_calls: usize,
) -> anyhow::Result<StdioResult> {
    let StdioProxy { client, pid, .. } = spawn_stdio(bin, spec, base).await?;
    let args = tool_args();
    // Check the answer once: the upstream's pet must come back as structured content.
    let first = client
        .call_tool(CallToolRequestParams::new(TOOL).with_arguments(args.clone()))
        .await?;
    if first.structured_content != Some(json!({"id": 1, "name": "Rex", "tag": "dog"})) {
        bail!("unexpected tools/call result: {first:?}");
    }
    for _ in 0..WARMUP_CALLS {
        call_once(&client, &args).await?;
    }
    let (cpu0, cs0) = (cpu_ticks(pid), context_switches(pid));
    let mut samples = Vec::with_capacity(seq_calls);
    for _ in 0..seq_calls {
        let t = Instant::now();
        call_once(&client, &args).await?;
        samples.push(t.elapsed());
    }
    let (cpu1, cs1) = (cpu_ticks(pid), context_switches(pid));
    client.cancel().await?;
    Ok(StdioResult {
        lat: Latency::of(samples),
        proxy_cpu_us_per_call: cpu_us_per_call(cpu0, cpu1, seq_calls),
        switches_per_call: per_call(cs0, cs1, seq_calls),
    })
}

/// Sequential calls over stdio with a bare line client (the same code for both eras, so the
/// difference is the protocol's): 2025-11-25 after `initialize`, or 2026-07-28 with `_meta` on
/// every call and no handshake.
async fn bench_stdio_raw(
    bin: &Path,
    spec: &Path,
    base: &str,
    seq_calls: usize,
    modern: bool,
) -> anyhow::Result<StdioResult> {
    bench_stdio_raw_with(bin, spec, base, seq_calls, modern, &[]).await
}

/// [`bench_stdio_raw`] with `extra` arguments for the proxy.
async fn bench_stdio_raw_with(
    bin: &Path,
    spec: &Path,
    base: &str,
    seq_calls: usize,
    modern: bool,
    extra: &[String],
) -> anyhow::Result<StdioResult> {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(bin)
        .arg("proxy")
        .arg(spec)
        .args(["--base-url", base])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("spawning the proxy")?;
    let pid = child.id().context("child pid")?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let mut next_id = 0u64;
    let mut ask = async |method: &str, params: Value, stdin: &mut tokio::process::ChildStdin| {
        next_id += 1;
        let id = next_id;
        let mut line =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).await?;
        let want = format!("\"id\":{id},");
        loop {
            let answer = lines
                .next_line()
                .await?
                .context("the proxy closed stdout")?;
            if answer.contains(&want) {
                if !answer.contains("\"result\"") || answer.contains("\"isError\":true") {
                    bail!("bad answer: {answer}");
                }
                return anyhow::Ok(());
            }
        }
    };
    if !modern {
        ask(
            "initialize",
            json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                "clientInfo": {"name": "proxy-bench", "version": "0"}}),
            &mut stdin,
        )
        .await?;
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await?;
    }
    let mut params = json!({"name": TOOL, "arguments": tool_args()});
    if modern {
        params["_meta"] = modern_meta();
    }
    for _ in 0..WARMUP_CALLS {
        ask("tools/call", params.clone(), &mut stdin).await?;
    }
    let (cpu0, cs0) = (cpu_ticks(pid), context_switches(pid));
    let mut samples = Vec::with_capacity(seq_calls);
    for _ in 0..seq_calls {
        let t = Instant::now();
        ask("tools/call", params.clone(), &mut stdin).await?;
        samples.push(t.elapsed());
    }
    let (cpu1, cs1) = (cpu_ticks(pid), context_switches(pid));
    // End of input ends the server, as a client leaving does (the audit log's last batch is
    // written then); killed only if it has not ended within 5 s.
    drop(stdin);
    if tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .is_err()
    {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
    Ok(StdioResult {
        lat: Latency::of(samples),
        proxy_cpu_us_per_call: cpu_us_per_call(cpu0, cpu1, seq_calls),
        switches_per_call: per_call(cs0, cs1, seq_calls),
    })
}

// ---------------------------------------------------------------------------------------------
// 3. Streamable HTTP.

struct HttpResult {
    calls: u64,
    errors: u64,
    calls_per_s: f64,
    proxy_cpu_us_per_call: f64,
    bench_cpu_us_per_call: f64,
    /// Share of all cores busy (every process on the machine) during the window.
    machine_busy: f64,
}

/// Starts the proxy with `--transport http --listen 127.0.0.1:0`; returns the child and the
/// MCP endpoint URL it printed on stderr.
async fn spawn_http(
    bin: &Path,
    spec: &Path,
    base: &str,
    stateless: bool,
) -> anyhow::Result<(tokio::process::Child, String)> {
    spawn_http_with(bin, spec, base, stateless, &[]).await
}

/// [`spawn_http`] with `extra` arguments for the proxy.
async fn spawn_http_with(
    bin: &Path,
    spec: &Path,
    base: &str,
    stateless: bool,
    extra: &[String],
) -> anyhow::Result<(tokio::process::Child, String)> {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.arg("proxy")
        .arg(spec)
        .args(["--base-url", base])
        .args(["--transport", "http", "--listen", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if stateless {
        cmd.arg("--stateless");
    }
    let mut child = cmd.spawn().context("spawning the HTTP proxy")?;
    let stderr = child.stderr.take().context("child stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let url = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await? {
            if let Some(start) = line.find("http://127.0.0.1:")
                && let Some(len) = line[start..].find("/mcp")
                && line.contains("Streamable HTTP")
            {
                return Ok(line[start..start + len + 4].to_string());
            }
        }
        bail!("the proxy exited without printing its /mcp URL")
    })
    .await
    .context("waiting for the /mcp URL on stderr")??;
    // Keep draining stderr so the child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, url))
}

/// Which MCP client drives the HTTP endpoint.
#[derive(Clone, Copy, PartialEq, Eq)]
enum HttpClientKind {
    /// rmcp's `StreamableHttpClientTransport::from_uri` (what the target is about). Its default
    /// reqwest client keeps no idle connections (`pool_max_idle_per_host(0)`): one TCP
    /// connection per call.
    Rmcp,
    /// The same rmcp transport over a reqwest client that keeps connections alive
    /// (`StreamableHttpClientTransport::with_client`).
    RmcpPooled,
    /// A bare reqwest client posting JSON-RPC and reading the whole answer: the server's
    /// capacity without rmcp's client-side costs.
    Raw,
    /// The same bare client in the 2026-07-28 era: no `initialize`, the version and
    /// capabilities in each request's `_meta`, the SEP-2243 headers.
    Raw2026,
}

impl HttpClientKind {
    fn label(self) -> &'static str {
        match self {
            Self::Rmcp => "rmcp from_uri (no keep-alive)",
            Self::RmcpPooled => "rmcp + keep-alive reqwest",
            Self::Raw => "bare reqwest JSON-RPC, 2025-11-25",
            Self::Raw2026 => "bare reqwest JSON-RPC, 2026-07-28",
        }
    }
}

/// Sequential calls over Streamable HTTP (`--stateless`, rmcp over a keep-alive client): the
/// same proxy and call as over stdio, without the stdio transport.
async fn bench_http_sequential(
    bin: &Path,
    spec: &Path,
    base: &str,
    seq_calls: usize,
) -> anyhow::Result<StdioResult> {
    let (mut child, url) = spawn_http(bin, spec, base, true).await?;
    let pid = child.id().context("child pid")?;
    let caller = Caller::connect(HttpClientKind::RmcpPooled, &url).await?;
    let args = tool_args();
    for _ in 0..WARMUP_CALLS {
        caller.call(&args).await?;
    }
    let (cpu0, cs0) = (cpu_ticks(pid), context_switches(pid));
    let mut samples = Vec::with_capacity(seq_calls);
    for _ in 0..seq_calls {
        let t = Instant::now();
        caller.call(&args).await?;
        samples.push(t.elapsed());
    }
    let (cpu1, cs1) = (cpu_ticks(pid), context_switches(pid));
    caller.close().await;
    let _ = child.start_kill();
    let _ = child.wait().await;
    Ok(StdioResult {
        lat: Latency::of(samples),
        proxy_cpu_us_per_call: cpu_us_per_call(cpu0, cpu1, seq_calls),
        switches_per_call: per_call(cs0, cs1, seq_calls),
    })
}

/// One client session.
enum Caller {
    Rmcp(Client),
    Raw {
        http: reqwest::Client,
        url: String,
        session: Option<String>,
        next_id: std::sync::atomic::AtomicU64,
        /// 2026-07-28 requests (no session, `_meta` and SEP-2243 headers on each).
        modern: bool,
        /// An `Authorization` value sent with every request (`--oauth-issuer`).
        auth: Option<String>,
    },
}

const PROTOCOL_VERSION: &str = "2025-11-25";
const PROTOCOL_VERSION_2026: &str = "2026-07-28";

/// The `_meta` of every 2026-07-28 request.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION_2026,
        "io.modelcontextprotocol/clientInfo": {"name": "proxy-bench", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

impl Caller {
    async fn connect(kind: HttpClientKind, url: &str) -> anyhow::Result<Self> {
        Self::connect_as(kind, url, None).await
    }

    /// [`Self::connect`]; the bare clients send `auth` as `Authorization` on every request.
    async fn connect_as(
        kind: HttpClientKind,
        url: &str,
        auth: Option<&str>,
    ) -> anyhow::Result<Self> {
        let transport = match kind {
            HttpClientKind::Rmcp => Some(StreamableHttpClientTransport::from_uri(url.to_string())),
            HttpClientKind::RmcpPooled => Some(StreamableHttpClientTransport::with_client(
                reqwest::Client::builder().tcp_nodelay(true).build()?,
                StreamableHttpClientTransportConfig::with_uri(url.to_string()),
            )),
            HttpClientKind::Raw | HttpClientKind::Raw2026 => None,
        };
        if let Some(transport) = transport {
            let c: Client = ().serve(transport).await.context("connecting over Streamable HTTP")?;
            return Ok(Self::Rmcp(c));
        }
        let http = reqwest::Client::builder().tcp_nodelay(true).build()?;
        if kind == HttpClientKind::Raw2026 {
            // No handshake: the first request is a call like any other.
            return Ok(Self::Raw {
                http,
                url: url.to_string(),
                session: None,
                next_id: std::sync::atomic::AtomicU64::new(1),
                modern: true,
                auth: auth.map(str::to_string),
            });
        }
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "proxy-bench", "version": "0"}}});
        let resp = Self::post(&http, url, None, auth, init.to_string()).await?;
        let session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = resp.bytes().await?;
        if !contains(&body, b"\"result\"") {
            bail!("initialize failed: {}", String::from_utf8_lossy(&body));
        }
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let resp = Self::post(&http, url, session.as_deref(), auth, note.to_string()).await?;
        let _ = resp.bytes().await?;
        Ok(Self::Raw {
            http,
            url: url.to_string(),
            session,
            next_id: std::sync::atomic::AtomicU64::new(1),
            modern: false,
            auth: auth.map(str::to_string),
        })
    }

    async fn post(
        http: &reqwest::Client,
        url: &str,
        session: Option<&str>,
        auth: Option<&str>,
        body: String,
    ) -> anyhow::Result<reqwest::Response> {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("authorization", a)).into_iter().collect();
        Self::post_as(http, url, session, PROTOCOL_VERSION, &headers, body).await
    }

    async fn post_as(
        http: &reqwest::Client,
        url: &str,
        session: Option<&str>,
        version: &str,
        headers: &[(&str, &str)],
        body: String,
    ) -> anyhow::Result<reqwest::Response> {
        let mut req = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version)
            .body(body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        let resp = req.send().await?;
        if !resp.status().is_success() {
            bail!("HTTP {}", resp.status());
        }
        Ok(resp)
    }

    async fn call(&self, args: &Map<String, Value>) -> anyhow::Result<()> {
        match self {
            Self::Rmcp(c) => call_once(c, args).await,
            Self::Raw {
                http,
                url,
                session,
                next_id,
                modern,
                auth,
            } => {
                let id = next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let resp = if *modern {
                    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": TOOL, "arguments": args, "_meta": modern_meta()}});
                    let mut headers = vec![("mcp-method", "tools/call"), ("mcp-name", TOOL)];
                    headers.extend(auth.as_deref().map(|a| ("authorization", a)));
                    Self::post_as(
                        http,
                        url,
                        None,
                        PROTOCOL_VERSION_2026,
                        &headers,
                        body.to_string(),
                    )
                    .await?
                } else {
                    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": TOOL, "arguments": args}});
                    Self::post(
                        http,
                        url,
                        session.as_deref(),
                        auth.as_deref(),
                        body.to_string(),
                    )
                    .await?
                };
                let body = resp.bytes().await?;
                if !contains(&body, b"\"result\"") || contains(&body, b"\"isError\":true") {
                    bail!("bad answer: {}", String::from_utf8_lossy(&body));
                }
                Ok(())
            }
        }
    }

    async fn close(self) {
        if let Self::Rmcp(c) = self {
            let _ = c.cancel().await;
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The era comparisons of sections 2 and 3 only (`PROXY_BENCH_ONLY=eras`), interleaved and
/// repeated: over stdio the added p50 of the bare line client of each era (over a direct round
/// trip measured in the same round), over HTTP the bare clients' calls/s, stateful and
/// `--stateless`; medians of the rounds.
async fn bench_eras(
    bin: &Path,
    spec: &Path,
    upstream: SocketAddr,
    base: &str,
    seq_calls: usize,
    report: &mut Report,
) -> anyhow::Result<()> {
    let rounds = std::env::var("PROXY_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(3)
        .max(1);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    report.section(&format!(
        "2 (eras only). stdio, bare line client, {seq_calls} sequential calls per run, {rounds} rounds"
    ));
    let (mut old, mut new, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    let (mut old_cpu, mut new_cpu) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        eprintln!("[eras] stdio, round {}/{rounds}...", round + 1);
        let direct = us(bench_direct(upstream, seq_calls).await?.p50);
        let o = bench_stdio_raw(bin, spec, base, seq_calls, false).await?;
        let n = bench_stdio_raw(bin, spec, base, seq_calls, true).await?;
        let (a_old, a_new) = (us(o.lat.p50) - direct, us(n.lat.p50) - direct);
        old.push(a_old);
        new.push(a_new);
        ratio.push(a_new / a_old.max(0.001));
        old_cpu.push(o.proxy_cpu_us_per_call);
        new_cpu.push(n.proxy_cpu_us_per_call);
    }
    report.info(
        "stdio: proxy CPU/call, 2025 | 2026 era (median)",
        format!(
            "{:.0} µs | {:.0} µs",
            median(&mut old_cpu),
            median(&mut new_cpu)
        ),
    );
    let r = median(&mut ratio);
    report.target_row(
        &format!("stdio: added p50, 2026 / 2025 era (median of {rounds})"),
        format!(
            "{:.1} / {:.1} µs = {r:.2}x",
            median(&mut new),
            median(&mut old)
        ),
        "<= 1.10x".to_string(),
        r <= 1.10,
    );
    report.section(&format!(
        "3 (eras only). Streamable HTTP, {HTTP_CLIENTS} bare clients, {}s per run, {rounds} rounds",
        HTTP_DURATION.as_secs()
    ));
    for (mode, stateless) in [("stateful", false), ("--stateless", true)] {
        let (mut old, mut new) = (Vec::new(), Vec::new());
        let (mut old_cpu, mut new_cpu) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            eprintln!("[eras] {mode}, round {}/{rounds}...", round + 1);
            let r = bench_http(bin, spec, base, stateless, HttpClientKind::Raw).await?;
            old.push(r.calls_per_s);
            old_cpu.push(r.proxy_cpu_us_per_call);
            let r = bench_http(bin, spec, base, stateless, HttpClientKind::Raw2026).await?;
            new.push(r.calls_per_s);
            new_cpu.push(r.proxy_cpu_us_per_call);
        }
        let (o, n) = (median(&mut old), median(&mut new));
        report.info(
            &format!("{mode}: proxy CPU/call, 2025 | 2026 era (median)"),
            format!(
                "{:.0} µs | {:.0} µs",
                median(&mut old_cpu),
                median(&mut new_cpu)
            ),
        );
        report.target_row(
            &format!("{mode}: 2026-07-28 / 2025-11-25 calls/s (median of {rounds})"),
            format!("{n:.0} / {o:.0} = {:.2}x", n / o),
            ">= 0.90x".to_string(),
            n / o >= 0.90,
        );
    }
    Ok(())
}

async fn bench_http(
    bin: &Path,
    spec: &Path,
    base: &str,
    stateless: bool,
    kind: HttpClientKind,
) -> anyhow::Result<HttpResult> {
    bench_http_with(bin, spec, base, stateless, kind, &[]).await
}

/// [`bench_http`] with `extra` arguments for the proxy.
async fn bench_http_with(
    bin: &Path,
    spec: &Path,
    base: &str,
    stateless: bool,
    kind: HttpClientKind,
    extra: &[String],
) -> anyhow::Result<HttpResult> {
    bench_http_as(bin, spec, base, stateless, kind, extra, None).await
}

/// [`bench_http_with`], the bare clients sending `auth` as `Authorization`.
async fn bench_http_as(
    bin: &Path,
    spec: &Path,
    base: &str,
    stateless: bool,
    kind: HttpClientKind,
    extra: &[String],
    auth: Option<&str>,
) -> anyhow::Result<HttpResult> {
    let (mut child, url) = spawn_http_with(bin, spec, base, stateless, extra).await?;
    let pid = child.id().context("child pid")?;
    let mut clients = Vec::with_capacity(HTTP_CLIENTS);
    for _ in 0..HTTP_CLIENTS {
        clients.push(Arc::new(Caller::connect_as(kind, &url, auth).await?));
    }
    let args = Arc::new(tool_args());

    // Warm-up, then the measured window; each client loops on its own session.
    let run = async |window: Duration| -> (u64, u64, Duration) {
        let start = Instant::now();
        let deadline = start + window;
        let tasks: Vec<_> = clients
            .iter()
            .map(|c| {
                let c = Arc::clone(c);
                let args = Arc::clone(&args);
                tokio::spawn(async move {
                    let (mut ok, mut err) = (0u64, 0u64);
                    while Instant::now() < deadline {
                        match c.call(&args).await {
                            Ok(()) => ok += 1,
                            Err(_) => err += 1,
                        }
                    }
                    (ok, err)
                })
            })
            .collect();
        let (mut ok, mut err) = (0, 0);
        for t in tasks {
            if let Ok((o, e)) = t.await {
                ok += o;
                err += e;
            }
        }
        (ok, err, start.elapsed())
    };
    run(HTTP_WARMUP).await;
    let (proxy0, self0, machine0) = (cpu_ticks(pid), cpu_ticks_self(), machine_ticks());
    let (ok, errors, elapsed) = run(HTTP_DURATION).await;
    let (proxy1, self1, machine1) = (cpu_ticks(pid), cpu_ticks_self(), machine_ticks());

    for c in clients {
        if let Ok(c) = Arc::try_unwrap(c) {
            c.close().await;
        }
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
    let n = usize::try_from(ok.max(1)).unwrap_or(usize::MAX);
    let machine_busy = busy_share(machine0, machine1);
    Ok(HttpResult {
        calls: ok,
        errors,
        calls_per_s: ok as f64 / elapsed.as_secs_f64(),
        proxy_cpu_us_per_call: cpu_us_per_call(proxy0, proxy1, n),
        bench_cpu_us_per_call: cpu_us_per_call(self0, self1, n),
        machine_busy,
    })
}

// ---------------------------------------------------------------------------------------------
// 4 and 5. Spawn to tools/list; peak RSS.

struct SpawnResult {
    tools: usize,
    /// Median time from spawn to the proxy's "serving" line on stderr (load + convert done).
    ready_median: Option<Duration>,
    median: Duration,
    min: Duration,
    max: Duration,
    /// VmHWM (kB) of the last spawn right after tools/list.
    hwm_after_list_kb: Option<u64>,
    /// VmHWM (kB) of the last spawn once its CPU use settled (background validator warm-up done).
    hwm_settled_kb: Option<u64>,
}

async fn bench_spawn(
    bin: &Path,
    spec: &Path,
    base: &str,
    settle: bool,
) -> anyhow::Result<SpawnResult> {
    let mut times = Vec::with_capacity(SPAWNS);
    let mut ready_times = Vec::with_capacity(SPAWNS);
    let (mut tools, mut hwm_after_list_kb, mut hwm_settled_kb) = (0, None, None);
    for i in 0..SPAWNS {
        let t = Instant::now();
        let StdioProxy { client, pid, ready } = spawn_stdio(bin, spec, base).await?;
        let list = client.list_all_tools().await.context("tools/list")?;
        times.push(t.elapsed());
        if let Ok(at) = ready.await {
            ready_times.push(at.saturating_duration_since(t));
        }
        tools = list.len();
        drop(list);
        if i + 1 == SPAWNS {
            hwm_after_list_kb = status_kb(pid, "VmHWM");
            if settle {
                wait_until_idle(pid).await;
            }
            hwm_settled_kb = status_kb(pid, "VmHWM");
        }
        client.cancel().await?;
    }
    times.sort();
    ready_times.sort();
    Ok(SpawnResult {
        tools,
        ready_median: ready_times.get(ready_times.len() / 2).copied(),
        median: times[times.len() / 2],
        min: times[0],
        max: times[times.len() - 1],
        hwm_after_list_kb,
        hwm_settled_kb,
    })
}

/// Spawn -> complete `tools/list` response as a minimal client sees it: the three messages
/// (initialize, initialized, tools/list) written at once as JSON lines, and the clock stopped
/// when the last byte of the tools/list response line has arrived. The response is parsed and
/// checked afterwards, outside the timing: how fast a client deserializes 5 MB of JSON is the
/// client's cost (rmcp's client takes ~200 ms for it; see the rmcp row), not the server's.
/// Returns the sorted times and the number of tools listed.
async fn bench_spawn_raw(
    bin: &Path,
    spec: &Path,
    base: &str,
    extra_args: &[&str],
) -> anyhow::Result<RawSpawns> {
    use tokio::io::AsyncWriteExt;
    let mut times = Vec::with_capacity(SPAWNS);
    let mut tools = 0;
    let mut hwm_kb = None;
    let hello = concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        "\n"
    );
    for _ in 0..SPAWNS {
        let t = Instant::now();
        let mut child = tokio::process::Command::new(bin)
            .arg("proxy")
            .arg(spec)
            .args(["--base-url", base])
            .args(extra_args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("spawning the proxy")?;
        let pid = child.id();
        let mut stdin = child.stdin.take().context("stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
        stdin.write_all(hello.as_bytes()).await?;
        stdin.flush().await?;
        // Pages (a list over 8 MiB comes in several): each next one is asked for as soon as
        // the previous arrives; the time is to the last page.
        let mut pages: Vec<Vec<u8>> = Vec::new();
        let mut id = 1u64;
        loop {
            let mut line = Vec::new();
            let want = format!(r#""id":{id}"#);
            loop {
                line.clear();
                if stdout.read_until(b'\n', &mut line).await? == 0 {
                    bail!("the proxy closed stdout before answering tools/list");
                }
                if contains(&line, want.as_bytes()) {
                    break;
                }
            }
            let cursor = next_cursor(&line);
            pages.push(line);
            let Some(cursor) = cursor else { break };
            id += 1;
            let next = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\",\"params\":{{\"cursor\":{}}}}}\n",
                Value::String(cursor)
            );
            stdin.write_all(next.as_bytes()).await?;
            stdin.flush().await?;
        }
        times.push(t.elapsed());
        hwm_kb = pid.and_then(|p| status_kb(p, "VmHWM"));
        tools = 0;
        for page in &pages {
            let v: Value = serde_json::from_slice(page).context("tools/list response")?;
            tools += v["result"]["tools"].as_array().map_or(0, Vec::len);
        }
        drop(stdin);
        let _ = child.wait().await;
    }
    times.sort();
    Ok(RawSpawns {
        times,
        tools,
        hwm_kb,
    })
}

/// The `nextCursor` of a tools/list response line, found without parsing the whole page.
fn next_cursor(line: &[u8]) -> Option<String> {
    const KEY: &[u8] = br#""nextCursor":""#;
    let at = line.windows(KEY.len()).rposition(|w| w == KEY)? + KEY.len();
    let len = line[at..].iter().position(|&b| b == b'"')?;
    String::from_utf8(line[at..at + len].to_vec()).ok()
}

/// What [`bench_spawn_raw`] measured: sorted spawn -> tools/list times, the number of tools
/// listed, and the VmHWM (kB) of the last spawn right after the list arrived.
struct RawSpawns {
    times: Vec<Duration>,
    tools: usize,
    hwm_kb: Option<u64>,
}

/// Waits (at most 10 s) until the process stops using CPU for 300 ms.
async fn wait_until_idle(pid: u32) {
    let give_up = Instant::now() + Duration::from_secs(10);
    let mut last = cpu_ticks(pid);
    while Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = cpu_ticks(pid);
        if now == last {
            return;
        }
        last = now;
    }
}

// ---------------------------------------------------------------------------------------------
// /proc helpers (Linux; None elsewhere).

/// A `/proc/<pid>/status` field in kB, e.g. `VmHWM`.
fn status_kb(pid: u32, field: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn ticks_of(stat: &str) -> Option<u64> {
    // Fields after the `(comm)`: state is field 3; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// utime + stime of all threads of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    ticks_of(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// (busy, total) jiffies of the whole machine, from the `cpu` line of `/proc/stat`.
fn machine_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let f: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = f.iter().take(8).sum();
    let idle = f.get(3)? + f.get(4)?;
    Some((total - idle, total))
}

/// Voluntary + involuntary context switches of all threads of `pid`.
fn context_switches(pid: u32) -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let status = std::fs::read_to_string(task.ok()?.path().join("status")).ok()?;
        total += status
            .lines()
            .filter(|l| l.contains("ctxt_switches:"))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum::<u64>();
    }
    Some(total)
}

fn per_call(before: Option<u64>, after: Option<u64>, calls: usize) -> f64 {
    match (before, after) {
        (Some(b), Some(a)) => a.saturating_sub(b) as f64 / calls.max(1) as f64,
        _ => f64::NAN,
    }
}

/// Share of all cores busy between two [`machine_ticks`] readings.
fn busy_share(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> f64 {
    match (before, after) {
        (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => {
            (b1.saturating_sub(b0)) as f64 / (t1 - t0) as f64
        }
        _ => f64::NAN,
    }
}

fn cpu_ticks_self() -> Option<u64> {
    ticks_of(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// Clock ticks per second (USER_HZ): 100 on Linux unless `getconf` says otherwise.
fn clk_tck() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

fn cpu_us_per_call(before: Option<u64>, after: Option<u64>, calls: usize) -> f64 {
    match (before, after) {
        (Some(b), Some(a)) => (a.saturating_sub(b)) as f64 / clk_tck() * 1e6 / calls.max(1) as f64,
        _ => f64::NAN,
    }
}

// ---------------------------------------------------------------------------------------------
// Figures and the table.

struct Latency {
    p50: Duration,
    p99: Duration,
    min: Duration,
    mean: Duration,
}

impl Latency {
    fn of(mut v: Vec<Duration>) -> Self {
        v.sort();
        let at = |p: usize| v[(v.len() * p / 100).min(v.len() - 1)];
        let total: Duration = v.iter().sum();
        Self {
            p50: at(50),
            p99: at(99),
            min: v[0],
            mean: total / u32::try_from(v.len()).unwrap_or(u32::MAX),
        }
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

enum Line {
    Section(String),
    Row {
        label: String,
        value: String,
        target: String,
        status: &'static str,
    },
}

#[derive(Default)]
struct Report {
    lines: Vec<Line>,
    /// Printed under the title (a stale binary, the machine's load).
    notes: Vec<String>,
}

impl Report {
    fn section(&mut self, title: &str) {
        self.lines.push(Line::Section(title.to_string()));
    }

    fn row(&mut self, label: &str, value: String, target: &str, status: &'static str) {
        self.lines.push(Line::Row {
            label: label.to_string(),
            value,
            target: target.to_string(),
            status,
        });
    }

    fn info(&mut self, label: &str, value: String) {
        self.row(label, value, "", "");
    }

    fn target_row(&mut self, label: &str, value: String, target: String, pass: bool) {
        self.row(label, value, &target, if pass { "PASS" } else { "MISS" });
    }

    fn skipped(&mut self, label: &str, why: &str) {
        self.row(label, format!("SKIPPED ({why})"), "", "");
    }

    fn latency(&mut self, label: &str, l: &Latency) {
        self.info(
            &format!("{label}: p50 / p99"),
            format!("{:.1} µs / {:.1} µs", us(l.p50), us(l.p99)),
        );
        self.info(
            &format!("{label}: min / mean"),
            format!("{:.1} µs / {:.1} µs", us(l.min), us(l.mean)),
        );
    }

    fn print(&self) {
        let width = |f: fn(&Line) -> usize| self.lines.iter().map(f).max().unwrap_or(0);
        let lw = width(|l| match l {
            Line::Row { label, .. } => label.chars().count(),
            Line::Section(_) => 0,
        });
        let vw = width(|l| match l {
            Line::Row { value, .. } => value.chars().count(),
            Line::Section(_) => 0,
        });
        let tw = width(|l| match l {
            Line::Row { target, .. } => target.chars().count(),
            Line::Section(_) => 0,
        })
        .max("target".len());
        let total = 2 + lw + vw + tw + 6 + 3 * 3;
        println!();
        println!(
            "openapi-mcp proxy benchmark ({} cores)",
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );
        for note in &self.notes {
            println!("{note}");
        }
        println!("{}", "=".repeat(total));
        println!(
            "  {:<lw$} | {:>vw$} | {:<tw$} | status",
            "figure", "value", "target"
        );
        for line in &self.lines {
            match line {
                Line::Section(t) => {
                    println!("{}", "-".repeat(total));
                    println!("{t}");
                }
                Line::Row {
                    label,
                    value,
                    target,
                    status,
                } => println!("  {label:<lw$} | {value:>vw$} | {target:<tw$} | {status}"),
            }
        }
        println!("{}", "=".repeat(total));
    }
}
