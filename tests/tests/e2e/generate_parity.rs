//! `openapi-mcp generate` parity: the generated crate, built and run, must behave exactly like
//! `openapi-mcp proxy` for the same spec. Both binaries are served over stdio to rmcp clients and
//! pointed at one recording upstream; every tool of the fixture specs is called with
//! representative arguments, and the upstream must receive byte-identical requests (multipart
//! boundaries normalized) while the clients get identical `initialize`, `tools/list` and
//! `tools/call` results. Any difference fails with a diff.
//!
//! The generated crates are built with the workspace's target dir and Cargo.lock, so the
//! dependencies are shared with the workspace (and with `codegen`'s own build test).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::model::CallToolRequestParams;
use openapi_mcp_runtime::rmcp::transport::TokioChildProcess;
use openapi_mcp_tests::harness::{Client, binary, spec, workspace_root};
use openapi_mcp_tests::upstream::{Recorded, Reply, Upstream};
use serde_json::{Value, json};

/// Pretty JSON of anything serializable (a macro: this crate does not depend on `serde`).
macro_rules! pretty {
    ($v:expr) => {
        serde_json::to_string_pretty(&$v).expect("serialize")
    };
}

/// Credentials given to both servers (petstore's `api_key` scheme).
const ENV: &[(&str, &str)] = &[("OPENAPI_MCP_API_KEY", "k-parity")];

/// Headers that describe the connection rather than the request: left out of the comparison.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// One nested `cargo build` at a time (they would only queue on Cargo's lock).
static BUILD: Mutex<()> = Mutex::new(());

/// The target directory the `openapi-mcp` binary was built into (`<target>/debug/openapi-mcp`).
fn target_dir() -> PathBuf {
    binary()
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf()
}

/// Generates the crate for `specs/<file>` with the built CLI and builds it; returns its binary.
///
/// Generation goes to a staging directory first and only changed files are copied over, so an
/// unchanged generator does not make Cargo rebuild the crate on the next run.
fn generate_and_build(file: &str, variant: &str, gen_args: &[&str]) -> PathBuf {
    generate_and_build_from(&spec(file), file, variant, gen_args)
}

/// [`generate_and_build`] of the spec (or Arazzo document) at `spec_path`; `file` names it.
fn generate_and_build_from(
    spec_path: &Path,
    file: &str,
    variant: &str,
    gen_args: &[&str],
) -> PathBuf {
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let stem = file.split('.').next().expect("stem");
    let stem = if variant.is_empty() {
        stem.to_string()
    } else {
        format!("{stem}-{variant}")
    };
    // Names of their own: the binaries of codegen's build test stay untouched.
    let name = format!("parity-{stem}-mcp");
    let root = workspace_root();
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("generate-parity");
    let staging = base.join(format!("{stem}.staging"));
    let dir = base.join(stem);
    let _ = std::fs::remove_dir_all(&staging);

    let started = Instant::now();
    let out = Command::new(binary())
        .arg("generate")
        .arg(spec_path)
        .arg("-o")
        .arg(&staging)
        .args(["--name", &name, "--runtime-dep"])
        .arg(root.join("runtime"))
        // Every optional part: the servers run with --metrics-listen like the proxy.
        .args(["--features", "all"])
        .args(gen_args)
        .output()
        .expect("run openapi-mcp generate");
    assert!(
        out.status.success(),
        "openapi-mcp generate {file} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    sync_tree(&staging, &dir);
    let _ = std::fs::remove_dir_all(&staging);
    let lock = std::fs::read(root.join("Cargo.lock")).expect("workspace Cargo.lock");
    write_if_changed(&dir.join("Cargo.lock"), &lock);
    let generated = started.elapsed();

    let started = Instant::now();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir())
        // As codegen's build test does, so the two share the built dependencies.
        .env_remove("RUSTFLAGS")
        .stdin(Stdio::null())
        .output()
        .expect("run cargo build");
    assert!(
        out.status.success(),
        "{file}: cargo build of the generated crate ({}) failed\n--- stdout\n{}\n--- stderr\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "{file}: generated in {:.1}s, cargo build took {:.1}s",
        generated.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    let bin = target_dir()
        .join("debug")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.exists(), "{} was not built", bin.display());
    bin
}

/// Makes `dst` hold exactly the files of `src`, touching only the files whose content differs
/// (`target/` and `Cargo.lock` in `dst` are kept).
fn sync_tree(src: &Path, dst: &Path) {
    fn files(root: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                files(root, &p, out);
            } else {
                out.insert(p.strip_prefix(root).expect("under root").to_path_buf());
            }
        }
    }
    let (mut new, mut old) = (BTreeSet::new(), BTreeSet::new());
    files(src, src, &mut new);
    files(dst, dst, &mut old);
    for rel in &new {
        let bytes = std::fs::read(src.join(rel)).expect("read generated file");
        write_if_changed(&dst.join(rel), &bytes);
    }
    for rel in old.difference(&new) {
        if !rel.starts_with("target") && rel != Path::new("Cargo.lock") {
            let _ = std::fs::remove_file(dst.join(rel));
        }
    }
}

fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() == Some(bytes) {
        return;
    }
    std::fs::create_dir_all(path.parent().expect("parent")).expect("create dir");
    std::fs::write(path, bytes).expect("write file");
}

/// Starts `cmd` over stdio with an rmcp client; its stderr goes to `log`.
async fn connect(mut cmd: tokio::process::Command, log: &Path) -> Client {
    for (k, v) in ENV {
        cmd.env(k, v);
    }
    cmd.env_remove("RUST_LOG");
    let stderr = std::fs::File::create(log).expect("create stderr log");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(stderr)
        .spawn()
        .expect("spawn server");
    ().serve(transport)
        .await
        .unwrap_or_else(|e| panic!("initialize failed (stderr in {}): {e}", log.display()))
}

/// A tool call and what the upstream answers to it.
struct Case {
    tool: &'static str,
    args: Value,
    reply: Reply,
    /// How many requests the call sends upstream (0 for the discovery tools' search/describe).
    upstream: usize,
}

fn case(tool: &'static str, args: Value) -> Case {
    Case {
        tool,
        args,
        reply: Reply::json(200, json!({"ok": true, "items": [1, 2.5, "three", null]})),
        upstream: 1,
    }
}

impl Case {
    fn reply(mut self, reply: Reply) -> Self {
        self.reply = reply;
        self
    }

    fn local(mut self) -> Self {
        self.upstream = 0;
        self
    }
}

/// Collects differences, then fails once with all of them.
#[derive(Default)]
struct Diffs(Vec<String>);

impl Diffs {
    fn check(&mut self, what: &str, proxy: &str, generated: &str) {
        if proxy != generated {
            self.0.push(format!(
                "=== {what} differs (- proxy, + generated)\n{}",
                diff(proxy, generated)
            ));
        }
    }

    fn finish(self, spec: &str) {
        assert!(
            self.0.is_empty(),
            "{spec}: the generated server does not behave like the proxy ({} differences)\n\n{}",
            self.0.len(),
            self.0.join("\n")
        );
    }
}

/// Runs the parity check for one spec: `cases` must call every tool, `invalid` are calls both
/// servers must reject before anything is sent.
async fn parity(file: &str, cases: Vec<Case>, invalid: Vec<(&'static str, Value)>) {
    parity_with(file, "", &[], cases, invalid).await
}

/// [`parity`] with serving options: `mode_args` go to `generate` (they become the generated
/// server's defaults) and to `proxy`; the generated server runs with its defaults.
async fn parity_with(
    file: &str,
    variant: &'static str,
    mode_args: &'static [&'static str],
    cases: Vec<Case>,
    invalid: Vec<(&'static str, Value)>,
) {
    let generated_bin = tokio::task::spawn_blocking({
        let file = file.to_string();
        move || generate_and_build(&file, variant, mode_args)
    })
    .await
    .expect("build task");

    let up = Upstream::start().await;
    let base = up.url("/api");
    let logs = Path::new(env!("CARGO_TARGET_TMPDIR")).join("generate-parity");
    std::fs::create_dir_all(&logs).expect("log dir");
    let stem = file.split('.').next().expect("stem");
    let stem = if variant.is_empty() {
        stem.to_string()
    } else {
        format!("{stem}-{variant}")
    };

    // Metrics and the audit log on both: they share the serving code, so they count the same.
    let observed = |who: &str| {
        let audit = logs.join(format!("{stem}.{who}.audit.jsonl"));
        let _ = std::fs::remove_file(&audit);
        let args: Vec<std::ffi::OsString> = vec![
            "--metrics-listen".into(),
            "127.0.0.1:0".into(),
            "--audit-log".into(),
            audit.clone().into(),
        ];
        (audit, args)
    };
    let (proxy_audit, proxy_observe) = observed("proxy");
    let (generated_audit, generated_observe) = observed("generated");
    let proxy_log = logs.join(format!("{stem}.proxy.stderr"));
    let generated_log = logs.join(format!("{stem}.generated.stderr"));
    let mut cmd = tokio::process::Command::new(binary());
    cmd.arg("proxy")
        .arg(spec(file))
        .args(["--base-url", &base])
        .args(mode_args)
        .args(&proxy_observe);
    let proxy = connect(cmd, &proxy_log).await;
    let mut cmd = tokio::process::Command::new(&generated_bin);
    cmd.args(["--base-url", &base]).args(&generated_observe);
    let generated = connect(cmd, &generated_log).await;

    let mut diffs = Diffs::default();
    diffs.check(
        "initialize result",
        &pretty!(proxy.peer_info()),
        &pretty!(generated.peer_info()),
    );

    let tools_proxy = proxy.list_all_tools().await.expect("proxy tools/list");
    let tools_generated = generated
        .list_all_tools()
        .await
        .expect("generated tools/list");
    diffs.check(
        "tools/list",
        &pretty!(tools_proxy),
        &pretty!(tools_generated),
    );

    // The cases must cover every tool, and only tools that exist.
    let listed: BTreeSet<&str> = tools_proxy.iter().map(|t| t.name.as_ref()).collect();
    let called: BTreeSet<&str> = cases.iter().map(|c| c.tool).collect();
    let uncovered: Vec<&&str> = listed.difference(&called).collect();
    assert!(
        uncovered.is_empty(),
        "{file}: tools without a parity case: {uncovered:?}"
    );
    let unknown: Vec<&&str> = called.difference(&listed).collect();
    assert!(
        unknown.is_empty(),
        "{file}: cases for tools that do not exist: {unknown:?}"
    );

    for c in &cases {
        let reply = c.reply.clone();
        up.respond(move |_| reply.clone());
        let (r_proxy, q_proxy) = call_recorded(&proxy, &up, c.tool, &c.args).await;
        let (r_generated, q_generated) = call_recorded(&generated, &up, c.tool, &c.args).await;
        // A case the proxy rejects would only compare two rejections: it must get through.
        assert_eq!(
            q_proxy.len(),
            c.upstream,
            "{file}: {} {} sent {} requests upstream; result: {r_proxy}",
            c.tool,
            c.args,
            q_proxy.len()
        );
        // The generic reply may not fit a tool's output schema: that result (the same from both)
        // says the call succeeded; anything else must not be an error.
        let mismatch = r_proxy["content"][0]["text"].as_str().is_some_and(|t| {
            t.starts_with("The API call succeeded, but the response does not match")
        });
        assert!(
            r_proxy.get("isError") == Some(&json!(false)) || mismatch,
            "{file}: the proxy's {} call failed: {r_proxy}",
            c.tool
        );
        diffs.check(
            &format!("upstream request of {} {}", c.tool, c.args),
            &render_all(&q_proxy),
            &render_all(&q_generated),
        );
        diffs.check(
            &format!("result of {} {}", c.tool, c.args),
            &pretty!(r_proxy),
            &pretty!(r_generated),
        );
    }

    for (tool, args) in &invalid {
        let (r_proxy, q_proxy) = call_recorded(&proxy, &up, tool, args).await;
        let (r_generated, q_generated) = call_recorded(&generated, &up, tool, args).await;
        assert!(
            r_proxy.get("isError") == Some(&json!(true)) && q_proxy.is_empty(),
            "{file}: the proxy accepted the invalid {tool} call {args}: {r_proxy}"
        );
        diffs.check(
            &format!("upstream requests of invalid {tool} {args}"),
            &render_all(&q_proxy),
            &render_all(&q_generated),
        );
        diffs.check(
            &format!("result of invalid {tool} {args}"),
            &pretty!(r_proxy),
            &pretty!(r_generated),
        );
    }

    // An unknown tool is a protocol error on both.
    async fn unknown_tool(c: &Client) -> String {
        let r = c
            .call_tool(CallToolRequestParams::new("no_such_tool".to_string()))
            .await;
        match r {
            Ok(r) => format!("result: {}", pretty!(r)),
            Err(e) => format!("error: {e}"),
        }
    }
    diffs.check(
        "call of an unknown tool",
        &unknown_tool(&proxy).await,
        &unknown_tool(&generated).await,
    );

    let counted = counted_calls(&proxy_log).await;
    assert!(
        counted.contains("openapi_mcp_tool_calls_total{"),
        "{file}: no calls counted: {counted}"
    );
    diffs.check(
        "calls counted in /metrics",
        &counted,
        &counted_calls(&generated_log).await,
    );
    let calls = cases.len() + invalid.len() + 1;
    diffs.check(
        "audit log",
        &audited(&proxy_audit, calls).await,
        &audited(&generated_audit, calls).await,
    );

    let _ = proxy.cancel().await;
    let _ = generated.cancel().await;

    // The same again in the 2026-07-28 era: no handshake, `_meta` on every request.
    let mut cmd = tokio::process::Command::new(binary());
    cmd.arg("proxy")
        .arg(spec(file))
        .args(["--base-url", &base])
        .args(mode_args);
    let mut proxy = Modern::spawn(cmd, &logs.join(format!("{stem}.proxy-2026.stderr")));
    let mut cmd = tokio::process::Command::new(&generated_bin);
    cmd.args(["--base-url", &base]);
    let mut generated = Modern::spawn(cmd, &logs.join(format!("{stem}.generated-2026.stderr")));
    for method in ["server/discover", "tools/list"] {
        let p = proxy.request(method, json!({})).await;
        assert!(p.get("result").is_some(), "{file}: 2026 {method}: {p}");
        let g = generated.request(method, json!({})).await;
        diffs.check(&format!("2026 {method}"), &pretty!(p), &pretty!(g));
    }
    for c in cases
        .iter()
        .map(|c| (c.tool, &c.args, Some(&c.reply)))
        .chain(invalid.iter().map(|(tool, args)| (*tool, args, None)))
    {
        let (tool, args, reply) = c;
        if let Some(reply) = reply {
            let reply = reply.clone();
            up.respond(move |_| reply.clone());
        }
        let params = json!({"name": tool, "arguments": args});
        up.clear();
        let p = proxy.request("tools/call", params.clone()).await;
        let q_proxy = up.requests();
        up.clear();
        let g = generated.request("tools/call", params).await;
        let q_generated = up.requests();
        assert_eq!(
            p["result"]["resultType"], "complete",
            "{file}: 2026 {tool} {args}: {p}"
        );
        diffs.check(
            &format!("2026 upstream request of {tool} {args}"),
            &render_all(&q_proxy),
            &render_all(&q_generated),
        );
        diffs.check(
            &format!("2026 result of {tool} {args}"),
            &pretty!(p),
            &pretty!(g),
        );
    }
    diffs.finish(file);
}

/// The `openapi_mcp_tool_calls_total` samples of the server whose stderr is in `log` (it prints
/// where its metrics are), and its upstream byte counters.
async fn counted_calls(log: &Path) -> String {
    let text = std::fs::read_to_string(log).expect("stderr log");
    let addr = text
        .lines()
        .find_map(|l| l.split("metrics at ").nth(1))
        .unwrap_or_else(|| panic!("no metrics line in {}", log.display()));
    let scrape = reqwest::get(addr.trim())
        .await
        .expect("scrape")
        .text()
        .await
        .expect("metrics text");
    let mut lines: Vec<&str> = scrape
        .lines()
        .filter(|l| {
            l.starts_with("openapi_mcp_tool_calls_total{")
                || l.starts_with("openapi_mcp_upstream_sent_bytes_total ")
                || l.starts_with("openapi_mcp_upstream_received_bytes_total ")
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

/// The audit log's lines without what differs between two runs (time, ids, latencies).
async fn audited(path: &Path, calls: usize) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= calls || std::time::Instant::now() > deadline {
            return text
                .lines()
                .map(|l| {
                    let mut v: Value = serde_json::from_str(l).expect("a JSON line");
                    if let Some(o) = v.as_object_mut() {
                        for k in ["time", "request_id", "latency_ms", "upstream_ms"] {
                            o.remove(k);
                        }
                    }
                    v.to_string()
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A 2026-07-28 client over stdio, spoken as raw JSON lines: no `initialize`, the protocol
/// version and capabilities in every request's `_meta`.
struct Modern {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    next: u64,
}

impl Modern {
    fn spawn(mut cmd: tokio::process::Command, log: &Path) -> Self {
        for (k, v) in ENV {
            cmd.env(k, v);
        }
        cmd.env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).expect("create stderr log"))
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        Self {
            _child: child,
            stdin,
            lines: tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout)),
            next: 1,
        }
    }

    /// Sends `method` and returns its response (notifications before it are skipped), with the
    /// id taken out so that the two servers' answers compare.
    async fn request(&mut self, method: &str, mut params: Value) -> Value {
        use tokio::io::AsyncWriteExt;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "parity-2026", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let id = self.next;
        self.next += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write request");
        self.stdin.flush().await.expect("flush");
        loop {
            let line =
                tokio::time::timeout(std::time::Duration::from_secs(30), self.lines.next_line())
                    .await
                    .unwrap_or_else(|_| panic!("no answer to {method} within 30 s"))
                    .expect("read")
                    .unwrap_or_else(|| {
                        panic!("the server closed stdout before answering {method}")
                    });
            let mut v: Value = serde_json::from_str(&line).expect("a JSON line");
            if v.get("id") == Some(&json!(id)) {
                if let Value::Object(m) = &mut v {
                    m.remove("id");
                }
                return v;
            }
        }
    }
}

/// Calls `tool` and returns the result as JSON and what the upstream received meanwhile.
async fn call_recorded(
    client: &Client,
    up: &Upstream,
    tool: &str,
    args: &Value,
) -> (Value, Vec<Recorded>) {
    up.clear();
    let Value::Object(map) = args.clone() else {
        panic!("arguments must be an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error: {e}"));
    let received = up.requests();
    up.clear();
    (
        serde_json::to_value(&result).expect("result JSON"),
        received,
    )
}

/// The request as text: request line, headers in received order (hop-by-hop ones left out),
/// blank line, body bytes (non-printable bytes as `\xNN`). A multipart boundary (random per
/// request) is replaced by `BOUNDARY` in the content type and the body.
fn render(r: &Recorded) -> String {
    let boundary = r
        .header("content-type")
        .filter(|ct| ct.starts_with("multipart/"))
        .and_then(|ct| {
            ct.split(';')
                .find_map(|p| p.trim().strip_prefix("boundary="))
        })
        .map(|b| b.trim_matches('"').to_string())
        .filter(|b| !b.is_empty());
    let mut body = r.body.to_vec();
    if let Some(b) = &boundary {
        body = replace_bytes(&body, b.as_bytes(), b"BOUNDARY");
    }
    let mut out = format!("{} {}\n", r.method, r.target);
    for (name, value) in &r.headers {
        if HOP_BY_HOP.contains(&name.as_str()) {
            continue;
        }
        let mut value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        if let Some(b) = &boundary {
            value = value.replace(b.as_str(), "BOUNDARY");
        }
        out.push_str(&format!("{name}: {value}\n"));
    }
    out.push('\n');
    for &b in &body {
        match b {
            b'\n' => out.push('\n'),
            b'\r' => out.push_str("\\r"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

fn render_all(rs: &[Recorded]) -> String {
    rs.iter().map(render).collect::<Vec<_>>().join("\n----\n")
}

fn replace_bytes(hay: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

/// A line diff (longest common subsequence) with three lines of context around changes.
fn diff(a: &str, b: &str) -> String {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > 25_000_000 {
        return format!(
            "--- proxy\n{}\n+++ generated\n{}",
            a.join("\n"),
            b.join("\n")
        );
    }
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ops.push(('+', b[j]));
            j += 1;
        } else {
            ops.push(('-', a[i]));
            i += 1;
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    let mut out = String::new();
    let mut last_shown: Option<usize> = None;
    for (k, (op, line)) in ops.iter().enumerate() {
        if !changed.iter().any(|&c| c.abs_diff(k) <= 3) {
            continue;
        }
        if last_shown.is_some_and(|l| l + 1 != k) {
            out.push_str("@@\n");
        }
        out.push_str(&format!("{op}{line}\n"));
        last_shown = Some(k);
    }
    out
}

const COLORS: [&str; 3] = ["blue", "black", "brown"];

fn point() -> Value {
    json!({"R": 100, "G": 200, "B": 150})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn petstore_generated_matches_proxy() {
    parity(
        "petstore.yaml",
        vec![
            case(
                "petstore_list_pets",
                json!({"limit": 2, "tags": ["a b", "c&d"]}),
            )
            .reply(Reply::json(200, json!([{"id": 1, "name": "Rex"}]))),
            // JSON Schema's `integer` includes `2.0`: the typed argument struct (i64) must too.
            case("petstore_list_pets", json!({"limit": 2.0})),
            case(
                "petstore_create_pet",
                json!({"name": "Tom ✓", "tag": "cat", "status": "available"}),
            )
            .reply(Reply::json(
                201,
                json!({"id": 7, "name": "Tom ✓", "status": "available"}),
            )),
            case("petstore_search_pets_legacy", json!({"q": "re x/?"})),
            case("petstore_show_pet_by_id", json!({"petId": 7})).reply(Reply::json(
                200,
                json!({"id": 7, "name": "Tom", "tag": null}),
            )),
            case(
                "petstore_update_pet",
                json!({"petId": 7, "name": "Tom", "status": "sold"}),
            ),
            case("petstore_delete_pet", json!({"petId": 7})).reply(Reply::empty(204)),
        ],
        vec![
            ("petstore_show_pet_by_id", json!({"petId": "seven"})),
            (
                "petstore_create_pet",
                json!({"name": "Tom", "status": "lost"}),
            ),
            ("petstore_list_pets", json!({"limit": 1, "unknown": true})),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn param_styles_generated_matches_proxy() {
    let cp = || json!({"color": COLORS, "point": point()});
    parity(
        "param-styles.yaml",
        vec![
            case("parameter_path_simple", cp()),
            case("parameter_path_simple_explode", cp()),
            case("parameter_path_label", cp()),
            case("parameter_path_label_explode", cp()),
            case(
                "parameter_path_matrix",
                json!({"id": 5, "color": COLORS, "point": point()}),
            ),
            case("parameter_path_matrix_explode", cp()),
            case("parameter_query_form_explode", cp()),
            case("parameter_query_form_no_explode", cp()),
            case("parameter_query_space_delimited", json!({"color": COLORS})),
            case("parameter_query_pipe_delimited", json!({"color": COLORS})),
            case(
                "parameter_query_deep_object",
                json!({"filter": {"status": "active", "owner": "alice & bob"}}),
            ),
            case(
                "parameter_query_allow_reserved",
                json!({"redirect": "/next?page=2", "state": "a b/c?d"}),
            ),
            case(
                "parameter_query_json_content",
                json!({"where": {"age": {"gt": 21, "lt": 65}}}),
            ),
            case(
                "parameter_header_params",
                json!({"X-Page-Size": 25, "X-Trace-Tags": COLORS, "X-Request-Id": "3fa85f64-5717-4562-b3fc-2c963f66afa6"}),
            ),
            case(
                "parameter_cookie_params",
                json!({"session_id": "abc123", "theme": COLORS}),
            ),
            case(
                "parameter_get_item",
                json!({"itemId": "it em/1", "verbose": true, "limit": 5, "X-Request-Id": "123e4567-e89b-12d3-a456-426614174000"}),
            ),
            case(
                "parameter_delete_item",
                json!({"itemId": "x", "verbose": false}),
            )
            .reply(Reply::empty(204)),
        ],
        vec![
            ("parameter_header_params", json!({"X-Trace-Tags": COLORS})),
            (
                "parameter_query_deep_object",
                json!({"filter": {"status": "deleted"}}),
            ),
            (
                "parameter_path_simple",
                json!({"color": ["red"], "point": point()}),
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forms_generated_matches_proxy() {
    let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR".to_vec();
    parity(
        "forms.yaml",
        vec![
            case(
                "forms_submit_profile_form",
                json!({"name": "Ada Lovelace", "age": 36, "interests": ["math", "poetry"], "newsletter": true}),
            )
            .reply(Reply::json(201, json!({"profileId": "p-1"}))),
            case("forms_get_pet_photo", json!({"petId": "p1"}))
                .reply(Reply::raw(200, "image/png", png)),
            case(
                "forms_upload_pet_photo",
                json!({
                    "petId": "p1",
                    "file": "iVBORw0KGgoAAAANSUhEUg==",
                    "caption": "on the sofa",
                    "takenYear": 2024,
                    "metadata": {"camera": "X100", "iso": 200}
                }),
            )
            .reply(Reply::json(201, json!({"url": "http://img.example/p1.png"}))),
            case("forms_create_plain_note", json!({"body": "hello\nworld ✓"}))
                .reply(Reply::raw(201, "text/plain; charset=utf-8", "note-1")),
            case("forms_get_plain_note", json!({"noteId": "note 1"}))
                .reply(Reply::raw(200, "text/plain", "hello\nworld")),
            case("forms_get_blob", json!({"key": "k/1"})).reply(Reply::raw(
                200,
                "application/octet-stream",
                vec![0u8, 1, 2, 255],
            )),
            case("forms_put_blob", json!({"key": "k1", "body": "AAECAwT/"}))
                .reply(Reply::empty(204)),
            case("forms_delete_blob", json!({"key": "k1"})).reply(Reply::empty(204)),
        ],
        vec![
            ("forms_put_blob", json!({"body": "AAECAwT/"})),
            ("forms_submit_profile_form", json!({"name": "Ada", "age": -1})),
        ],
    )
    .await;
}

/// Values the typed handlers must carry exactly as the proxy does: absent vs `null` (optional
/// nullable, required nullable, untyped), whole numbers in `number` fields (`10`, not `10.0`),
/// undeclared properties of nested objects, maps, nullable array items, recursion, array bodies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_values_generated_matches_proxy() {
    parity(
        "typed-values.yaml",
        vec![
            case(
                "typed_update_item",
                json!({
                    "id": "a/b c",
                    "ratio": 10,
                    "note": null,
                    "X-Weight": 2,
                    "price": 10,
                    "description": null,
                    "owner": null,
                    "meta": {"color": "red", "size": null, "undeclared": {"x": 1, "y": [true]}},
                    "labels": {"k": "v"},
                    "scores": [1.5, null, 3],
                    "anything": null,
                    "parent": {"name": "root", "weight": 1, "children": [{"name": "leaf", "children": [], "tag": "t"}]}
                }),
            ),
            case(
                "typed_update_item",
                json!({"id": "x", "owner": "me", "ratio": 0.25, "price": 2.5, "anything": {"free": [1, "two"]}}),
            ),
            case("typed_update_item", json!({"id": "x", "owner": "me", "description": "d", "meta": {}})),
            case(
                "typed_create_batch",
                json!({"body": [{"sku": "a", "qty": 1, "weight": 3}, {"sku": "b", "gift": true}]}),
            )
            .reply(Reply::empty(201)),
        ],
        vec![
            ("typed_update_item", json!({"id": "x"})),
            ("typed_create_batch", json!({"body": [{"qty": 1}]})),
        ],
    )
    .await;
}

/// `generate --mode dynamic`: the generated server lists the discovery tools by default, and
/// search, describe and call_operation (through the typed handlers) match the proxy's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn petstore_dynamic_generated_matches_proxy() {
    parity_with(
        "petstore.yaml",
        "dynamic",
        &["--mode", "dynamic"],
        vec![
            case("search_operations", json!({"query": "list pets", "limit": 3})).local(),
            case("describe_operation", json!({"name": "petstore_update_pet"})).local(),
            case(
                "call_operation",
                json!({"name": "petstore_update_pet", "arguments": {"petId": 7, "name": "Tom", "status": "sold"}}),
            ),
        ],
        vec![
            (
                "call_operation",
                json!({"name": "petstore_show_pet_by_id", "arguments": {"petId": "seven"}}),
            ),
            ("call_operation", json!({"name": "petstore_no_such_op", "arguments": {}})),
        ],
    )
    .await;
}

/// `generate --mode hybrid --pin GLOB`: the pins are the generated server's default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn petstore_hybrid_generated_matches_proxy() {
    parity_with(
        "petstore.yaml",
        "hybrid",
        &["--mode", "hybrid", "--pin", "petstore_list_*"],
        vec![
            case("petstore_list_pets", json!({"limit": 2})),
            case("search_operations", json!({"query": "delete a pet"})).local(),
            case("describe_operation", json!({"name": "petstore_create_pet"})).local(),
            case(
                "call_operation",
                json!({"name": "petstore_create_pet", "arguments": {"name": "Tom", "tag": "cat"}}),
            ),
        ],
        vec![("petstore_list_pets", json!({"limit": "two"}))],
    )
    .await;
}

/// The Arazzo fixtures of tests/arazzo/fixtures/ (the shop's workflows over its spec), written
/// under the test's temporary directory with the spec's server at a fixed address (the servers
/// get `--base-url`), so the generated crate does not change from run to run.
fn arazzo_fixtures() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("generate-parity/arazzo-fixtures");
    let fixtures = workspace_root().join("tests/arazzo/fixtures");
    for name in ["shop.openapi.yaml", "shop.arazzo.yaml"] {
        let text = std::fs::read_to_string(fixtures.join(name)).expect("fixture");
        let text = text.replace("127.0.0.1:{{PORT}}", "127.0.0.1:9");
        write_if_changed(&dir.join(name), text.as_bytes());
    }
    dir
}

/// The shop of tests/arazzo/recorder.py, stateful per run (`reset` between the two servers):
/// orders are pending twice, then ready; the inventory is busy (503) once; a reservation is
/// rate limited (429, `Retry-After: 1`) once.
fn shop(up: &Upstream) -> impl Fn() + use<> {
    use std::collections::HashMap;
    use std::sync::Arc;
    let counters: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let count = {
        let counters = Arc::clone(&counters);
        move |k: &str| {
            let mut c = counters.lock().expect("counters");
            let n = c.entry(k.to_string()).or_default();
            *n += 1;
            *n - 1
        }
    };
    up.respond(move |r: &Recorded| {
        if r.header("x-api-key") != Some("k-parity") {
            return Reply::json(401, json!({"error": "key"}));
        }
        let path = r.path().strip_prefix("/shop").unwrap_or_default();
        let pets = [
            json!({"id": 2, "name": "Tom", "status": "available", "price": 12}),
            json!({"id": 4, "name": "Bo", "status": "available", "price": 25}),
            json!({"id": 3, "name": "Kit", "status": "sold", "price": 8}),
        ];
        match (r.method.as_str(), path) {
            ("GET", "/pets") => Reply::json(200, json!(pets[..2])),
            ("GET", p) if p.starts_with("/pets/") => {
                let id = &p[6..];
                match pets
                    .iter()
                    .find(|x| x["id"].as_u64().is_some_and(|n| n.to_string() == id))
                {
                    Some(x) => Reply::json(200, x.clone()),
                    None => Reply::json(404, json!({"error": "no such pet"})),
                }
            }
            ("POST", "/orders") => {
                let n = count("orders");
                let b = r.body_json();
                Reply::json(
                    201,
                    json!({"id": 100 + n, "petId": b["petId"], "discount": 0, "status": "placed"}),
                )
            }
            ("GET", p) if p.starts_with("/orders/") => {
                let status = if count(p) < 2 { "pending" } else { "ready" };
                Reply::json(200, json!({"id": 100, "status": status}))
            }
            ("GET", "/inventory") => {
                if count("inventory") == 0 {
                    Reply::json(503, json!({"error": "busy"}))
                } else {
                    Reply::json(200, json!({"available": 2, "sold": 1}))
                }
            }
            ("POST", "/reservations") => {
                if count("reservations") == 0 {
                    let mut reply = Reply::json(429, json!({"error": "slow down"}));
                    reply.headers.push(("retry-after".into(), "1".into()));
                    reply
                } else {
                    Reply::json(201, json!({"id": "R-1", "petId": 1}))
                }
            }
            _ => Reply::json(404, json!({"error": "no route"})),
        }
    });
    move || counters.lock().expect("counters").clear()
}

/// #39: a crate generated from Arazzo workflows serves the same workflow tools as `proxy` with
/// the same arguments (`generate DOC.arazzo.yaml`; `generate SPEC --arazzo DOC
/// --workflows-only`): tools/list identical, and each workflow, called through a real MCP
/// client, sends the same requests in the same order to the same upstream (a `goto` polling
/// loop, a `retry` on 503 and on 429 with `Retry-After`, a failing success criterion) and
/// returns the same result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arazzo_workflows_generated_match_proxy() {
    let dir = arazzo_fixtures();
    let doc = dir.join("shop.arazzo.yaml");
    let spec_file = dir.join("shop.openapi.yaml");
    let variants: [(&str, PathBuf, Vec<std::ffi::OsString>); 2] = [
        ("document", doc.clone(), vec![]),
        (
            "over-spec",
            spec_file.clone(),
            vec![
                "--arazzo".into(),
                doc.clone().into(),
                "--workflows-only".into(),
            ],
        ),
    ];
    let up = Upstream::start().await;
    let reset = shop(&up);
    let base = up.url("/shop");
    let logs = Path::new(env!("CARGO_TARGET_TMPDIR")).join("generate-parity");
    for (variant, spec_path, extra) in variants {
        let gen_args: Vec<String> = extra
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let bin = tokio::task::spawn_blocking({
            let spec_path = spec_path.clone();
            let gen_args = gen_args.clone();
            move || {
                let args: Vec<&str> = gen_args.iter().map(String::as_str).collect();
                generate_and_build_from(&spec_path, "shop.arazzo", variant, &args)
            }
        })
        .await
        .expect("build task");
        // The generated crate embeds the document and is built with the `workflows` feature.
        let krate = logs.join(format!("shop-{variant}"));
        let embedded = std::fs::read_to_string(krate.join("src/workflows/shop.arazzo.yaml"))
            .expect("the embedded document");
        assert_eq!(embedded, std::fs::read_to_string(&doc).expect("fixture"));

        let mut cmd = tokio::process::Command::new(binary());
        cmd.arg("proxy")
            .arg(&spec_path)
            .args(&extra)
            .args(["--base-url", &base]);
        let proxy = connect(cmd, &logs.join(format!("shop-{variant}.proxy.stderr"))).await;
        let mut cmd = tokio::process::Command::new(&bin);
        cmd.args(["--base-url", &base]);
        let generated = connect(cmd, &logs.join(format!("shop-{variant}.generated.stderr"))).await;

        let mut diffs = Diffs::default();
        diffs.check(
            "initialize result",
            &pretty!(proxy.peer_info()),
            &pretty!(generated.peer_info()),
        );
        let tools_proxy = proxy.list_all_tools().await.expect("proxy tools/list");
        let names: Vec<&str> = tools_proxy.iter().map(|t| t.name.as_ref()).collect();
        assert!(
            names.contains(&"buy_cheapest_pet") && names.contains(&"order_and_wait"),
            "{variant}: {names:?}"
        );
        assert_eq!(
            names.iter().any(|n| n.starts_with("shop_")),
            variant == "document",
            "{variant}: operation tools listed or not as --workflows-only says: {names:?}"
        );
        diffs.check(
            "tools/list",
            &pretty!(tools_proxy),
            &pretty!(
                generated
                    .list_all_tools()
                    .await
                    .expect("generated tools/list")
            ),
        );
        let calls = [
            (
                "buy_cheapest_pet",
                json!({"status": "available", "coupon": "SAVE5"}),
                3,
                false,
            ),
            ("order_and_wait", json!({"petId": 2}), 4, false),
            ("inventory_with_retry", json!({}), 2, false),
            ("reserve_with_retry", json!({"petId": 1}), 2, false),
            ("buy_sold_pet", json!({"petId": 3}), 1, true),
        ];
        for (tool, args, requests, fails) in calls {
            assert!(names.contains(&tool), "{variant}: no {tool} in {names:?}");
            reset();
            let (r_proxy, q_proxy) = call_recorded(&proxy, &up, tool, &args).await;
            reset();
            let (r_generated, q_generated) = call_recorded(&generated, &up, tool, &args).await;
            assert_eq!(
                (q_proxy.len(), r_proxy.get("isError") == Some(&json!(true))),
                (requests, fails),
                "{variant}: the proxy's {tool}: {r_proxy}\n{}",
                render_all(&q_proxy)
            );
            diffs.check(
                &format!("upstream requests of {tool}"),
                &render_all(&q_proxy),
                &render_all(&q_generated),
            );
            diffs.check(
                &format!("result of {tool}"),
                &pretty!(r_proxy),
                &pretty!(r_generated),
            );
        }
        let _ = proxy.cancel().await;
        let _ = generated.cancel().await;
        diffs.finish(&format!("shop.arazzo.yaml ({variant})"));
    }
}
