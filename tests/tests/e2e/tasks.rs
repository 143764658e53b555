//! MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663; #38) against a real job
//! API (tests/src/jobs.rs, specs/jobs.yaml): a `202 Accepted` becomes a task the client polls
//! with `tasks/get` (the server reads the API's status then), a failing job is `completed` with
//! `isError`, `tasks/cancel` calls the API's DELETE, a 303 leads to the result, `--task-after`
//! turns a slow call into a task, and a second server sharing a SQLite store answers for a task
//! the first started.
//!
//! No released SDK client speaks the extension yet (Python `mcp` 2.3.0 and TypeScript
//! `@modelcontextprotocol/client` 2.4.0 have no tasks client), so the client here is raw
//! JSON-RPC over Streamable HTTP at the 2026-07-28 wire, as in eras.rs: every field and header
//! is the test's own.

use std::net::SocketAddr;
use std::time::Duration;

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
use openapi_mcp_runtime::tasks;
use openapi_mcp_tests::harness::{proxy_server_with, spec};
use openapi_mcp_tests::jobs::JobApi;
use serde_json::{Value, json};

use super::eras::{V2026, messages, meta, serve_http};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The `_meta` of a request that declares the tasks extension.
fn declaring() -> Value {
    meta(json!({"extensions": {TASKS: {}}}))
}

/// A 2026-era request with the SEP-2243 headers (`Mcp-Name` is the tool's name, or the task id
/// of `tasks/*`), and `authorization` when given; returns the final JSON-RPC message.
async fn rpc(
    http: &reqwest::Client,
    addr: SocketAddr,
    method: &str,
    mut params: Value,
    authorization: Option<&str>,
) -> Value {
    if params.get("_meta").is_none() {
        params["_meta"] = declaring();
    }
    let mut req = http
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V2026)
        .header("mcp-method", method);
    if let Some(name) = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
    {
        req = req.header("mcp-name", name);
    }
    if let Some(a) = authorization {
        req = req.header("authorization", a);
    }
    let resp = req
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string())
        .send()
        .await
        .expect("request");
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = resp.text().await.expect("body");
    messages(&ct, &body).pop().unwrap_or(Value::Null)
}

fn with_tasks(store: Option<&str>, after: Option<Duration>) -> ServerOptions {
    ServerOptions {
        tasks: tasks::from_options(
            true,
            store,
            Duration::from_secs(600),
            after,
            Some(b"a test key of thirty-two bytes!!".as_slice()),
        )
        .unwrap(),
        task_after: after,
        ..ServerOptions::default()
    }
}

async fn jobs_server(api: &JobApi, opts: ServerOptions) -> ProxyServer {
    proxy_server_with(
        &spec("jobs.yaml"),
        &api.base_url(),
        ToolOptions::default(),
        &[],
        opts,
    )
    .await
}

/// Polls `tasks/get` as the client should (waiting `pollIntervalMs` between reads) until the
/// task is terminal; at most `reads` reads.
async fn until_terminal(
    http: &reqwest::Client,
    addrs: &[SocketAddr],
    id: &str,
    reads: usize,
) -> Value {
    for n in 0..reads {
        let addr = addrs[n % addrs.len()];
        let got = rpc(http, addr, "tasks/get", json!({"taskId": id}), None).await;
        let r = &got["result"];
        assert_eq!(r["resultType"], "complete", "{got}");
        assert_eq!(r["taskId"], id, "{got}");
        match r["status"].as_str() {
            Some("working") => {
                let wait = r["pollIntervalMs"].as_u64().expect("pollIntervalMs");
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
            Some(_) => return r.clone(),
            None => panic!("no status: {got}"),
        }
    }
    panic!("task {id} not terminal after {reads} reads");
}

/// Calls `tool` declaring tasks and returns the `CreateTaskResult`.
async fn start(http: &reqwest::Client, addr: SocketAddr, tool: &str, args: Value) -> Value {
    let got = rpc(
        http,
        addr,
        "tools/call",
        json!({"name": tool, "arguments": args}),
        None,
    )
    .await;
    let r = got["result"].clone();
    assert_eq!(r["resultType"], "task", "{got}");
    r
}

#[tokio::test]
async fn an_accepted_job_is_a_task_polled_to_its_result() {
    let api = JobApi::start().await;
    let addr = serve_http(jobs_server(&api, with_tasks(None, None)).await, true).await;
    let http = reqwest::Client::new();

    // The extension is advertised.
    let got = rpc(&http, addr, "server/discover", json!({}), None).await;
    assert_eq!(
        got["result"]["capabilities"]["extensions"][TASKS],
        json!({}),
        "{got}"
    );

    let created = start(
        &http,
        addr,
        "jobs_start_job",
        json!({"name": "nightly", "polls": 2}),
    )
    .await;
    // A flat CreateTaskResult: the task's fields at the top level, nothing of the result.
    let id = created["taskId"].as_str().expect("taskId").to_string();
    assert!(id.len() >= 32, "an unguessable id: {id}");
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttlMs"], 600_000);
    assert_eq!(created["pollIntervalMs"], 1000, "Retry-After: 1");
    for absent in ["task", "result", "error", "requestState", "content"] {
        assert!(created.get(absent).is_none(), "{absent} in {created}");
    }
    // Only the POST so far: the server does not poll inside the call any more.
    assert_eq!(api.requests(), ["POST /api/jobs"]);

    let done = until_terminal(&http, &[addr], &id, 20).await;
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["result"];
    assert_eq!(result["isError"], false, "{done}");
    assert_eq!(result["structuredContent"]["status"], "succeeded", "{done}");
    assert_eq!(
        result["structuredContent"]["result"]["answer"], 42,
        "{done}"
    );
    assert!(
        result["content"].to_string().contains("jobs_get_job"),
        "the result says which call read it: {done}"
    );
    assert!(
        result["_meta"]
            .get("io.modelcontextprotocol/related-task")
            .is_none()
    );
    let reads: Vec<String> = api
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("GET"))
        .collect();
    assert_eq!(
        reads, ["GET /api/jobs/job-1"; 3],
        "running, running, succeeded"
    );
    // A terminal task answers from its record.
    let again = rpc(&http, addr, "tasks/get", json!({"taskId": id}), None).await;
    assert_eq!(again["result"]["status"], "completed");
    assert_eq!(api.requests().len(), 4, "no read after the end");
}

#[tokio::test]
async fn clients_that_do_not_declare_tasks_are_served_as_before() {
    let api = JobApi::start().await;
    let addr = serve_http(jobs_server(&api, with_tasks(None, None)).await, true).await;
    let http = reqwest::Client::new();
    let plain = meta(json!({}));
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "jobs_start_job", "arguments": {"polls": 1}, "_meta": plain}),
        None,
    )
    .await;
    let r = &got["result"];
    assert_ne!(r["resultType"], "task", "{got}");
    assert!(r.get("taskId").is_none(), "{got}");
    assert!(
        r["content"].to_string().contains("jobs_get_job"),
        "the follow-up call is named: {got}"
    );
    // tasks/* from a request that did not declare the extension: -32021, naming it.
    for method in ["tasks/get", "tasks/cancel"] {
        let got = rpc(
            &http,
            addr,
            method,
            json!({"taskId": "0123456789abcdef0123456789abcdef", "_meta": meta(json!({}))}),
            None,
        )
        .await;
        assert_eq!(got["error"]["code"], -32021, "{method}: {got}");
        assert_eq!(
            got["error"]["data"]["requiredCapabilities"]["extensions"][TASKS],
            json!({}),
            "{got}"
        );
    }
    // An unknown task: -32602; tasks/list and tasks/result are no methods of the extension.
    let got = rpc(
        &http,
        addr,
        "tasks/get",
        json!({"taskId": "0123456789abcdef0123456789abcdef"}),
        None,
    )
    .await;
    assert_eq!(got["error"]["code"], -32602, "{got}");
    for method in ["tasks/list", "tasks/result"] {
        let got = rpc(&http, addr, method, json!({}), None).await;
        assert_eq!(got["error"]["code"], -32601, "{method}: {got}");
    }
}

#[tokio::test]
async fn a_failing_job_is_completed_with_is_error() {
    let api = JobApi::start().await;
    let addr = serve_http(jobs_server(&api, with_tasks(None, None)).await, true).await;
    let http = reqwest::Client::new();
    let created = start(
        &http,
        addr,
        "jobs_start_job",
        json!({"polls": 0, "fail": true}),
    )
    .await;
    let id = created["taskId"].as_str().unwrap();
    let done = until_terminal(&http, &[addr], id, 10).await;
    // A tool error, not a protocol error: completed, isError, no `error` member.
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(done.get("error").is_none(), "{done}");
    assert!(
        done["result"]["content"]
            .to_string()
            .contains("ran out of disk"),
        "the API's own failure: {done}"
    );
}

#[tokio::test]
async fn cancel_calls_the_apis_cancel_operation() {
    let api = JobApi::start().await;
    let addr = serve_http(jobs_server(&api, with_tasks(None, None)).await, true).await;
    let http = reqwest::Client::new();
    let created = start(&http, addr, "jobs_start_job", json!({"polls": 1000})).await;
    let id = created["taskId"].as_str().unwrap();
    let ack = rpc(&http, addr, "tasks/cancel", json!({"taskId": id}), None).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    assert!(
        api.cancelled("job-1"),
        "the API was told: {:?}",
        api.requests()
    );
    let got = rpc(&http, addr, "tasks/get", json!({"taskId": id}), None).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    assert!(
        got["result"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("jobs_cancel_job") && m.contains("202")),
        "{got}"
    );
    // Cancelling a terminal task: the same acknowledgement, the state stays.
    let ack = rpc(&http, addr, "tasks/cancel", json!({"taskId": id}), None).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let deletes = api
        .requests()
        .iter()
        .filter(|r| r.starts_with("DELETE"))
        .count();
    assert_eq!(deletes, 1);
}

#[tokio::test]
async fn a_see_other_leads_to_the_result_and_no_cancel_operation_is_said() {
    let api = JobApi::start().await;
    let addr = serve_http(jobs_server(&api, with_tasks(None, None)).await, true).await;
    let http = reqwest::Client::new();
    let created = start(&http, addr, "jobs_start_export", json!({})).await;
    let id = created["taskId"].as_str().unwrap();
    assert_eq!(
        created["pollIntervalMs"], 2000,
        "no Retry-After: the default"
    );
    let done = until_terminal(&http, &[addr], id, 10).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert!(
        done["result"]["content"].to_string().contains("1234"),
        "the result the 303 pointed at: {done}"
    );
    assert!(
        api.requests().iter().any(|r| r.ends_with("/result")),
        "{:?}",
        api.requests()
    );

    // Exports have no cancel operation: cancelled here, and the message says the API may go on.
    let created = start(&http, addr, "jobs_start_export", json!({})).await;
    let id = created["taskId"].as_str().unwrap();
    let ack = rpc(&http, addr, "tasks/cancel", json!({"taskId": id}), None).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let got = rpc(&http, addr, "tasks/get", json!({"taskId": id}), None).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    assert!(
        got["result"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("may still run")),
        "{got}"
    );
}

#[tokio::test]
async fn tasks_belong_to_who_started_them() {
    let api = JobApi::start().await;
    let addr = serve_http(jobs_server(&api, with_tasks(None, None)).await, true).await;
    let http = reqwest::Client::new();
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "jobs_start_job", "arguments": {"polls": 5}}),
        Some("Bearer alice"),
    )
    .await;
    let id = got["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_string();
    let mine = rpc(
        &http,
        addr,
        "tasks/get",
        json!({"taskId": id}),
        Some("Bearer alice"),
    )
    .await;
    assert_eq!(mine["result"]["status"], "working", "{mine}");
    for other in [Some("Bearer mallory"), None] {
        for method in ["tasks/get", "tasks/cancel", "tasks/update"] {
            let mut params = json!({"taskId": id});
            if method == "tasks/update" {
                params["inputResponses"] = json!({});
            }
            let got = rpc(&http, addr, method, params, other).await;
            assert_eq!(got["error"]["code"], -32602, "{method} {other:?}: {got}");
        }
    }
    assert!(!api.cancelled("job-1"));
}

#[tokio::test]
async fn a_slow_call_becomes_a_task_after_the_threshold() {
    let api = JobApi::start().await;
    let opts = with_tasks(None, Some(Duration::from_millis(200)));
    let addr = serve_http(jobs_server(&api, opts).await, true).await;
    let http = reqwest::Client::new();
    // Quick: a plain result.
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "jobs_health", "arguments": {}}),
        None,
    )
    .await;
    assert_eq!(got["result"]["resultType"], "complete", "{got}");
    assert_eq!(got["result"]["structuredContent"]["ok"], true, "{got}");
    // Slow: a task whose result is the call's answer.
    let created = start(&http, addr, "jobs_make_report", json!({"delayMs": 1500})).await;
    let id = created["taskId"].as_str().unwrap();
    let done = until_terminal(&http, &[addr], id, 20).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["report"], "made in 1500 ms",
        "{done}"
    );
    // Cancelled while in flight: the request is dropped and the task says so.
    let created = start(&http, addr, "jobs_make_report", json!({"delayMs": 5000})).await;
    let id = created["taskId"].as_str().unwrap();
    let ack = rpc(&http, addr, "tasks/cancel", json!({"taskId": id}), None).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let got = rpc(&http, addr, "tasks/get", json!({"taskId": id}), None).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
}

#[tokio::test]
async fn another_instance_sharing_the_store_answers_for_the_task() {
    let api = JobApi::start().await;
    let dir = std::env::temp_dir().join(format!("openapi-mcp-e2e-tasks-{}", std::process::id()));
    let store = format!("sqlite:{}", dir.join("tasks.sqlite3").display());
    let a = serve_http(
        jobs_server(&api, with_tasks(Some(&store), None)).await,
        true,
    )
    .await;
    let b = serve_http(
        jobs_server(&api, with_tasks(Some(&store), None)).await,
        true,
    )
    .await;
    let http = reqwest::Client::new();
    let created = start(&http, a, "jobs_start_job", json!({"polls": 2})).await;
    let id = created["taskId"].as_str().unwrap();
    // B never saw the call: it reads the record and polls the stored status URL itself.
    let done = until_terminal(&http, &[b], id, 20).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["status"], "succeeded");
    // And A sees the same end (from the record: no more reads of the API).
    let reads = api.requests().len();
    let on_a = rpc(&http, a, "tasks/get", json!({"taskId": id}), None).await;
    assert_eq!(on_a["result"]["status"], "completed", "{on_a}");
    assert_eq!(api.requests().len(), reads);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A script's `api.*` call (code mode) waits for its answer even when the client declared tasks:
/// only the client's own tool call may become a task (a 202 inside a script stays the script's
/// answer, with the follow-up named, and no task is left behind).
#[tokio::test]
async fn calls_inside_a_script_never_become_tasks() {
    use openapi_mcp_runtime::modes::code::{CodeLimits, EXECUTE};
    use openapi_mcp_runtime::modes::dynamic::ToolMode;
    let api = JobApi::start().await;
    let opts = ServerOptions {
        mode: ToolMode::Code(CodeLimits::default()),
        ..with_tasks(None, Some(Duration::from_millis(100)))
    };
    let addr = serve_http(jobs_server(&api, opts).await, true).await;
    let http = reqwest::Client::new();
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": EXECUTE, "arguments": {"code": "return await api.jobs_start_job({polls: 0});"}}),
        None,
    )
    .await;
    let r = &got["result"];
    assert_eq!(r["resultType"], "complete", "{got}");
    assert_eq!(r["isError"], false, "{got}");
    assert!(r["content"].to_string().contains("queued"), "{got}");
}

/// specs/jobs.yaml with `x-mcp-task: VALUE` added to the operations named, written to a file of
/// its own (the fixture itself stays without the extension).
fn jobs_spec_with(marks: &[(&str, &str)]) -> std::path::PathBuf {
    let mut text = std::fs::read_to_string(spec("jobs.yaml")).expect("jobs.yaml");
    for (op, value) in marks {
        let line = format!("      operationId: {op}\n");
        assert!(text.contains(&line), "{op} in jobs.yaml");
        text = text.replace(&line, &format!("{line}      x-mcp-task: {value}\n"));
    }
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "openapi-mcp-e2e-x-mcp-task-{}-{n}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("jobs.yaml");
    std::fs::write(&path, text).expect("write spec");
    path
}

async fn marked_server(api: &JobApi, marks: &[(&str, &str)], opts: ServerOptions) -> ProxyServer {
    proxy_server_with(
        &jobs_spec_with(marks),
        &api.base_url(),
        ToolOptions::default(),
        &[],
        opts,
    )
    .await
}

/// `x-mcp-task` overrides the inference both ways: `none` keeps a 202 + Location operation a
/// plain call (even past `--task-after`), `required` makes a quick synchronous operation a task
/// at once for a declaring client and refuses others with -32021, `optional` is a task at once
/// without `--task-after` and a plain answer when the call beats it.
#[tokio::test]
async fn x_mcp_task_overrides_the_inference_both_ways() {
    let api = JobApi::start().await;
    let marks = [
        ("startJob", "none"),
        ("makeReport", "required"),
        ("health", "optional"),
    ];
    let addr = serve_http(
        marked_server(&api, &marks, with_tasks(None, None)).await,
        true,
    )
    .await;
    let http = reqwest::Client::new();

    // none: the 202 is answered as without tasks (the follow-up call is named).
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "jobs_start_job", "arguments": {"polls": 1}}),
        None,
    )
    .await;
    assert_eq!(got["result"]["resultType"], "complete", "{got}");
    assert!(got["result"].get("taskId").is_none(), "{got}");
    assert!(
        got["result"]["content"]
            .to_string()
            .contains("jobs_get_job"),
        "{got}"
    );

    // required, declaring client: a task at once, completed with the API's answer.
    let created = start(&http, addr, "jobs_make_report", json!({"delayMs": 0})).await;
    let id = created["taskId"].as_str().expect("taskId");
    let done = until_terminal(&http, &[addr], id, 20).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["report"], "made in 0 ms",
        "{done}"
    );
    // required, a client that did not declare the extension: -32021 naming it, nothing sent.
    let before = api.requests().len();
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "jobs_make_report", "arguments": {"delayMs": 0}, "_meta": meta(json!({}))}),
        None,
    )
    .await;
    assert_eq!(got["error"]["code"], -32021, "{got}");
    assert_eq!(
        got["error"]["data"]["requiredCapabilities"]["extensions"][TASKS],
        json!({}),
        "{got}"
    );
    assert_eq!(api.requests().len(), before, "nothing sent");

    // optional without --task-after: a task at once; a non-declaring client: a plain answer.
    let created = start(&http, addr, "jobs_health", json!({})).await;
    let done = until_terminal(&http, &[addr], created["taskId"].as_str().unwrap(), 20).await;
    assert_eq!(done["result"]["structuredContent"]["ok"], true, "{done}");
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "jobs_health", "arguments": {}, "_meta": meta(json!({}))}),
        None,
    )
    .await;
    assert_eq!(got["result"]["structuredContent"]["ok"], true, "{got}");

    // With --task-after: `none` stays plain past the threshold; `optional` answers a quick call
    // directly.
    let addr = serve_http(
        marked_server(
            &api,
            &[("makeReport", "none"), ("health", "optional")],
            with_tasks(None, Some(Duration::from_millis(300))),
        )
        .await,
        true,
    )
    .await;
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "jobs_make_report", "arguments": {"delayMs": 800}}),
        None,
    )
    .await;
    assert_eq!(got["result"]["resultType"], "complete", "{got}");
    assert_eq!(
        got["result"]["structuredContent"]["report"], "made in 800 ms",
        "{got}"
    );
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "jobs_health", "arguments": {}}),
        None,
    )
    .await;
    assert_eq!(got["result"]["resultType"], "complete", "{got}");
}

/// The `_meta` of a request that declares tasks and form elicitation.
fn declaring_and_asking() -> Value {
    meta(json!({"extensions": {TASKS: {}}, "elicitation": {"form": {}}}))
}

/// `--confirm` inside a task: a declaring client that can be asked gets a task in
/// `input_required` carrying the confirmation (the elicitation the non-task confirm sends) and
/// nothing is sent; `tasks/update` with the acceptance sends the call once (the task then goes
/// on as any), a replay sends nothing more; another owner's update is refused; a malformed
/// answer is an error and consumes nothing; a decline completes the task with isError; a
/// cancelled task's late acceptance sends nothing; `x-mcp-task: none` keeps the multi-round-trip
/// confirmation; a client that cannot be asked is refused as before.
#[tokio::test]
async fn confirm_inside_a_task_waits_for_tasks_update() {
    use openapi_mcp_runtime::server::confirm::Confirm;
    let api = JobApi::start().await;
    let opts = ServerOptions {
        confirm: Confirm::Writes,
        ..with_tasks(None, None)
    };
    let addr = serve_http(jobs_server(&api, opts).await, true).await;
    let http = reqwest::Client::new();
    let alice = Some("Bearer alice");
    let call = |args: Value| json!({"name": "jobs_start_job", "arguments": args, "_meta": declaring_and_asking()});
    let get = |id: &str| json!({"taskId": id});
    let update = |id: &str, responses: Value| json!({"taskId": id, "inputResponses": responses});
    let yes = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});

    let got = rpc(
        &http,
        addr,
        "tools/call",
        call(json!({"name": "n", "polls": 1})),
        alice,
    )
    .await;
    let created = &got["result"];
    assert_eq!(created["resultType"], "task", "{got}");
    assert_eq!(created["status"], "input_required", "{got}");
    assert!(created.get("inputRequests").is_none(), "{got}");
    assert!(created.get("requestState").is_none(), "{got}");
    let id = created["taskId"].as_str().expect("taskId").to_string();
    assert!(api.requests().is_empty(), "nothing sent before the answer");

    let got = rpc(&http, addr, "tasks/get", get(&id), alice).await;
    let r = &got["result"];
    assert_eq!(r["status"], "input_required", "{got}");
    let ask = &r["inputRequests"]["confirm"];
    assert_eq!(ask["method"], "elicitation/create", "{got}");
    assert_eq!(ask["params"]["mode"], "form", "{got}");
    let message = ask["params"]["message"].as_str().expect("message");
    assert!(
        message.contains("POST /jobs") && message.contains("polls = 1"),
        "{message}"
    );
    assert_eq!(
        ask["params"]["requestedSchema"]["required"],
        json!(["confirm"])
    );

    // Another owner: the task does not exist for them; nothing sent.
    let got = rpc(
        &http,
        addr,
        "tasks/update",
        update(&id, yes.clone()),
        Some("Bearer mallory"),
    )
    .await;
    assert_eq!(got["error"]["code"], -32602, "{got}");
    // A key that is not outstanding: acknowledged and ignored.
    let got = rpc(
        &http,
        addr,
        "tasks/update",
        update(&id, json!({"other": {"action": "accept"}})),
        alice,
    )
    .await;
    assert_eq!(got["result"]["resultType"], "complete", "{got}");
    // Not an elicitation result: an error, and the question stays outstanding.
    let got = rpc(
        &http,
        addr,
        "tasks/update",
        update(&id, json!({"confirm": {"yes": true}})),
        alice,
    )
    .await;
    assert_eq!(got["error"]["code"], -32602, "{got}");
    let got = rpc(&http, addr, "tasks/get", get(&id), alice).await;
    assert_eq!(got["result"]["status"], "input_required", "{got}");
    assert!(api.requests().is_empty());

    // Accepted: the ack carries no task fields; the call is sent once and the task goes on.
    let ack = rpc(&http, addr, "tasks/update", update(&id, yes.clone()), alice).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let mut done = Value::Null;
    for _ in 0..40 {
        let got = rpc(&http, addr, "tasks/get", get(&id), alice).await;
        let status = got["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert_ne!(status, "input_required", "{got}");
        if status != "working" {
            done = got["result"].clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["status"], "succeeded",
        "{done}"
    );
    // A replay of the acceptance finds nothing outstanding: acknowledged, nothing sent.
    let again = rpc(&http, addr, "tasks/update", update(&id, yes.clone()), alice).await;
    assert_eq!(again["result"]["resultType"], "complete", "{again}");
    let posts = |api: &JobApi| {
        api.requests()
            .iter()
            .filter(|r| r.starts_with("POST"))
            .count()
    };
    assert_eq!(posts(&api), 1, "{:?}", api.requests());

    // Declined: completed with isError saying so; nothing sent.
    let got = rpc(&http, addr, "tools/call", call(json!({"polls": 0})), alice).await;
    let id = got["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_string();
    let no = json!({"confirm": {"action": "decline"}});
    rpc(&http, addr, "tasks/update", update(&id, no), alice).await;
    let got = rpc(&http, addr, "tasks/get", get(&id), alice).await;
    assert_eq!(got["result"]["status"], "completed", "{got}");
    assert_eq!(got["result"]["result"]["isError"], true, "{got}");
    assert!(got.to_string().contains("declined"), "{got}");
    assert_eq!(posts(&api), 1);

    // Cancelled while waiting: a late acceptance sends nothing.
    let got = rpc(&http, addr, "tools/call", call(json!({"polls": 0})), alice).await;
    let id = got["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_string();
    let ack = rpc(&http, addr, "tasks/cancel", get(&id), alice).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    rpc(&http, addr, "tasks/update", update(&id, yes.clone()), alice).await;
    let got = rpc(&http, addr, "tasks/get", get(&id), alice).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    assert!(
        got["result"]["statusMessage"]
            .as_str()
            .unwrap_or_default()
            .contains("nothing was sent"),
        "{got}"
    );
    assert_eq!(posts(&api), 1);

    // A declaring client that cannot be asked: refused as without tasks (-32021, elicitation).
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "jobs_start_job", "arguments": {}, "_meta": declaring()}),
        alice,
    )
    .await;
    assert_eq!(got["error"]["code"], -32021, "{got}");
    assert!(
        got["error"]["data"]["requiredCapabilities"]
            .get("elicitation")
            .is_some(),
        "{got}"
    );

    // x-mcp-task: none: the multi-round-trip confirmation, no task.
    let opts = ServerOptions {
        confirm: Confirm::Writes,
        ..with_tasks(None, None)
    };
    let addr = serve_http(
        marked_server(&api, &[("startJob", "none")], opts).await,
        true,
    )
    .await;
    let got = rpc(&http, addr, "tools/call", call(json!({})), alice).await;
    assert_eq!(got["result"]["resultType"], "input_required", "{got}");
    assert!(got["result"]["requestState"].is_string(), "{got}");
    assert_eq!(posts(&api), 1);
}

/// Dynamic mode's `call_operation` is the client's own call: it becomes a task exactly as the
/// operation's tool would (a 202, `x-mcp-task`, `-32021` for `required` without the extension).
/// Code mode's `execute` never does: a script waits for its `api.*` calls (a `required`
/// operation runs synchronously inside it; the script is the server's own caller).
#[tokio::test]
async fn call_operation_becomes_a_task_and_execute_does_not() {
    use openapi_mcp_runtime::modes::code::{CodeLimits, EXECUTE};
    use openapi_mcp_runtime::modes::dynamic::{CALL, ToolMode};
    let api = JobApi::start().await;
    let marks = [("makeReport", "required")];
    let opts = ServerOptions {
        mode: ToolMode::Dynamic,
        ..with_tasks(None, None)
    };
    let addr = serve_http(marked_server(&api, &marks, opts).await, true).await;
    let http = reqwest::Client::new();
    let created = start(
        &http,
        addr,
        CALL,
        json!({"name": "jobs_start_job", "arguments": {"polls": 1}}),
    )
    .await;
    let done = until_terminal(&http, &[addr], created["taskId"].as_str().unwrap(), 20).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["status"], "succeeded",
        "{done}"
    );
    let created = start(
        &http,
        addr,
        CALL,
        json!({"name": "jobs_make_report", "arguments": {"delayMs": 0}}),
    )
    .await;
    let done = until_terminal(&http, &[addr], created["taskId"].as_str().unwrap(), 20).await;
    assert_eq!(
        done["result"]["structuredContent"]["report"], "made in 0 ms",
        "{done}"
    );
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": CALL, "arguments": {"name": "jobs_make_report", "arguments": {}}, "_meta": meta(json!({}))}),
        None,
    )
    .await;
    assert_eq!(got["error"]["code"], -32021, "{got}");

    let opts = ServerOptions {
        mode: ToolMode::Code(CodeLimits::default()),
        ..with_tasks(None, None)
    };
    let addr = serve_http(marked_server(&api, &marks, opts).await, true).await;
    let got = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": EXECUTE, "arguments": {"code": "return await api.jobs_make_report({delayMs: 0});"}}),
        None,
    )
    .await;
    let r = &got["result"];
    assert_eq!(r["resultType"], "complete", "{got}");
    assert_eq!(r["isError"], false, "{got}");
    assert!(r["content"].to_string().contains("made in 0 ms"), "{got}");
}
