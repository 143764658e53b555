//! Both protocol eras from one server: 2025-11-25 clients (initialize, sessions) and 2026-07-28
//! clients (no handshake: `server/discover`, the request `_meta`, the SEP-2243 headers), spoken
//! here as raw HTTP so that every header and field on the wire is the test's own.

use std::net::SocketAddr;
use std::time::Duration;

use openapi_mcp_convert::{SpecSource, ToolOptions, convert, load};
use openapi_mcp_runtime::http::transport::{HttpOptions, start_http};
use openapi_mcp_runtime::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use openapi_mcp_runtime::rmcp::service::RequestContext;
use openapi_mcp_runtime::rmcp::{ClientHandler, ErrorData, RoleClient};
use openapi_mcp_runtime::server::confirm::Confirm;
use openapi_mcp_runtime::server::{ListCaching, ProxyServer, ServerOptions};
use openapi_mcp_tests::harness::{connect_in_process_as, proxy_server_with, spec};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::{Value, json};

pub const V2026: &str = "2026-07-28";

/// The `_meta` every 2026-era request carries.
pub fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientInfo": {"name": "eras-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A 2026-era request: the body with `_meta` in its params, and the headers SEP-2243 asks for.
pub fn request(
    http: &reqwest::Client,
    addr: SocketAddr,
    id: u64,
    method: &str,
    mut params: Value,
) -> reqwest::RequestBuilder {
    if params.get("_meta").is_none() {
        params["_meta"] = meta(json!({}));
    }
    let mut req = http
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V2026)
        .header("mcp-method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        req = req.header("mcp-name", name);
    }
    req.body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
}

/// The JSON-RPC messages of a response, whether it came as JSON or as an SSE stream.
pub fn messages(content_type: &str, body: &str) -> Vec<Value> {
    if content_type.starts_with("text/event-stream") {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| serde_json::from_str(d).expect("SSE data is JSON"))
            .collect()
    } else if body.trim().is_empty() {
        Vec::new()
    } else {
        vec![serde_json::from_str(body).expect("body is JSON")]
    }
}

/// Sends a 2026-era request and returns the HTTP status and the final JSON-RPC response (the
/// last message; notifications before it are in the second element).
pub async fn rpc(
    http: &reqwest::Client,
    addr: SocketAddr,
    id: u64,
    method: &str,
    params: Value,
) -> (u16, Value, Vec<Value>) {
    let resp = request(http, addr, id, method, params)
        .send()
        .await
        .expect("request");
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = resp.text().await.expect("body");
    let mut all = messages(&ct, &body);
    let last = all.pop().unwrap_or(Value::Null);
    (status, last, all)
}

pub async fn serve_http(server: ProxyServer, stateless: bool) -> SocketAddr {
    let mut opts = HttpOptions::new("127.0.0.1:0".parse().unwrap());
    opts.stateless = stateless;
    start_http(server, opts).await.expect("http server").addr
}

async fn petstore(up: &Upstream, opts: ServerOptions) -> ProxyServer {
    proxy_server_with(
        &spec("petstore.yaml"),
        &up.url("/api"),
        ToolOptions::default(),
        &[],
        opts,
    )
    .await
}

/// One process, one endpoint: a 2025 session and 2026 requests side by side, each answered in
/// its own era's terms.
#[tokio::test]
async fn one_endpoint_serves_both_eras() {
    let up = Upstream::start().await;
    up.respond(|r| Reply::json(200, json!({"id": 7, "name": r.path()})));
    let addr = serve_http(petstore(&up, ServerOptions::default()).await, false).await;
    let http = reqwest::Client::new();

    // 2026: discover names both eras, the tools, and the instructions.
    let (status, discover, _) = rpc(&http, addr, 1, "server/discover", json!({})).await;
    assert_eq!(status, 200, "{discover}");
    let r = &discover["result"];
    let versions = r["supportedVersions"].as_array().expect("versions");
    assert!(versions.contains(&json!(V2026)) && versions.contains(&json!("2025-11-25")));
    // Nothing changes this list (no --watch): no listChanged promised.
    assert!(
        r["capabilities"]["tools"].get("listChanged").is_none(),
        "{r}"
    );
    assert!(r["capabilities"].get("prompts").is_none(), "{r}");
    assert!(
        r["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("Petstore")),
        "{r}"
    );

    // 2026: a call without any handshake, answered with resultType.
    let (status, called, _) = rpc(
        &http,
        addr,
        2,
        "tools/call",
        json!({"name": "petstore_show_pet_by_id", "arguments": {"petId": 7}}),
    )
    .await;
    assert_eq!(status, 200, "{called}");
    assert_eq!(called["result"]["resultType"], "complete", "{called}");
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(up.last().path(), "/api/pets/7");

    // 2025: initialize gets a session and the 2025 version; its results carry no resultType.
    let init = http
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "old", "version": "0"}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(init.status(), 200);
    let session = init
        .headers()
        .get("mcp-session-id")
        .expect("a 2025 session")
        .to_str()
        .unwrap()
        .to_string();
    let ct = init.headers()["content-type"].to_str().unwrap().to_string();
    let reply = messages(&ct, &init.text().await.unwrap()).pop().unwrap();
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    assert!(reply["result"].get("resultType").is_none(), "{reply}");
    assert!(!session.is_empty());

    // An unsupported version: 400 with the supported list.
    let resp = http
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2099-01-01")
        .header("mcp-method", "tools/list")
        .body(
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                "io.modelcontextprotocol/clientCapabilities": {}}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32022, "{body}");
    assert!(body.to_string().contains(V2026), "{body}");
}

/// `tools/list` carries caching hints that follow from what can change the list: an hour for
/// a spec read once, seconds under `--watch`; private behind authentication.
#[tokio::test]
async fn list_caching_hints_follow_what_can_change_the_list() {
    let up = Upstream::start().await;
    let http = reqwest::Client::new();
    for (watched, authenticated, ttl, scope) in [
        (false, false, 3_600_000, "public"),
        (true, false, 10_000, "public"),
        (false, true, 3_600_000, "private"),
    ] {
        let opts = ServerOptions {
            list_caching: ListCaching::new(watched, authenticated),
            ..ServerOptions::default()
        };
        let addr = serve_http(petstore(&up, opts).await, false).await;
        let (_, list, _) = rpc(&http, addr, 1, "tools/list", json!({})).await;
        let r = &list["result"];
        assert_eq!(r["ttlMs"], ttl, "{watched} {authenticated}: {r}");
        assert_eq!(r["cacheScope"], scope, "{watched} {authenticated}: {r}");
        assert_eq!(r["tools"].as_array().map(Vec::len), Some(6));
    }
}

/// Neither prompts nor resources are served: their methods are not found (HTTP 404 in the
/// 2026 era), rather than empty lists that read as an undeclared capability.
#[tokio::test]
async fn prompts_and_resources_are_not_found() {
    let up = Upstream::start().await;
    let addr = serve_http(petstore(&up, ServerOptions::default()).await, false).await;
    let http = reqwest::Client::new();
    for (i, method) in ["prompts/list", "resources/list", "resources/templates/list"]
        .into_iter()
        .enumerate()
    {
        let (status, reply, _) = rpc(&http, addr, i as u64, method, json!({})).await;
        assert_eq!(status, 404, "{method}: {reply}");
        assert_eq!(reply["error"]["code"], -32601, "{method}: {reply}");
    }
}

/// A `--watch` reload reaches 2026-era clients on their `subscriptions/listen` stream: the
/// acknowledgement first, then `tools/list_changed` tagged with the subscription id.
#[tokio::test]
async fn list_changes_reach_listen_streams() {
    let up = Upstream::start().await;
    let watched = ServerOptions {
        list_caching: ListCaching::new(true, false),
        ..ServerOptions::default()
    };
    let server = petstore(&up, watched).await;
    let addr = serve_http(server.clone(), false).await;
    let http = reqwest::Client::new();
    let mut resp = request(
        &http,
        addr,
        41,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 200);
    let mut seen = String::new();
    let mut next_message = async || -> Value {
        loop {
            if let Some(end) = seen.find("\n\n") {
                let event: String = seen.drain(..end + 2).collect();
                if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data:")) {
                    return serde_json::from_str(data.trim()).unwrap();
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), resp.chunk())
                .await
                .expect("a message within 10 s")
                .unwrap()
                .expect("the stream stays open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    let ack = next_message().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["toolsListChanged"], true,
        "{ack}"
    );

    // The spec changes: fewer tools.
    let loaded = load(&SpecSource::Path(spec("petstore.yaml")))
        .await
        .unwrap();
    let mut opts = ToolOptions::default();
    opts.filter.methods = vec![openapi_mcp_toolset::model::HttpMethod::Delete];
    let smaller = convert(&loaded, &opts).tools;
    assert!(server.replace_tools(smaller).await);
    let changed = next_message().await;
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 41,
        "{changed}"
    );
    let (_, list, _) = rpc(&http, addr, 2, "tools/list", json!({})).await;
    assert_eq!(list["result"]["tools"].as_array().map(Vec::len), Some(1));
}

fn confirming(policy: Confirm) -> ServerOptions {
    ServerOptions {
        confirm: policy,
        ..ServerOptions::default()
    }
}

/// `--confirm destructive`, 2026 era: the delete comes back as `input_required` (an elicitation
/// and a sealed state) and is sent only on a retry that carries the user's acceptance; a
/// decline, a tampered state, a state moved to other arguments, or a client that cannot ask all
/// send nothing. Reads are not gated.
#[tokio::test]
async fn confirmation_2026_is_a_multi_round_trip() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::empty(204));
    let addr = serve_http(petstore(&up, confirming(Confirm::Destructive)).await, false).await;
    let http = reqwest::Client::new();
    let asks = meta(json!({"elicitation": {"form": {}}}));
    let delete = |extra: Value| {
        let mut p = json!({"name": "petstore_delete_pet", "arguments": {"petId": 3}, "_meta": asks.clone()});
        if let (Value::Object(p), Value::Object(extra)) = (&mut p, extra) {
            p.extend(extra);
        }
        p
    };

    let (status, first, _) = rpc(&http, addr, 1, "tools/call", delete(json!({}))).await;
    assert_eq!(status, 200, "{first}");
    let r = &first["result"];
    assert_eq!(r["resultType"], "input_required", "{first}");
    let ask = &r["inputRequests"]["confirm"];
    assert_eq!(ask["method"], "elicitation/create", "{first}");
    assert_eq!(ask["params"]["mode"], "form");
    let message = ask["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("DELETE /pets/{petId}") && message.contains("petId = 3"),
        "{message}"
    );
    let state = r["requestState"]
        .as_str()
        .expect("a request state")
        .to_string();
    assert!(
        up.requests().is_empty(),
        "nothing is sent before the user answers"
    );

    // Declined: nothing sent, the model is told.
    let declined =
        json!({"inputResponses": {"confirm": {"action": "decline"}}, "requestState": state});
    let (_, reply, _) = rpc(&http, addr, 2, "tools/call", delete(declined)).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(reply.to_string().contains("declined"), "{reply}");
    assert!(up.requests().is_empty());

    // Tampered, or the consent moved to other arguments: a protocol error, nothing sent.
    let yes = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let tampered = json!({"inputResponses": yes, "requestState": format!("{state}x")});
    let (_, reply, _) = rpc(&http, addr, 3, "tools/call", delete(tampered)).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let mut moved = delete(json!({"inputResponses": yes, "requestState": state}));
    moved["arguments"]["petId"] = json!(4);
    let (_, reply, _) = rpc(&http, addr, 4, "tools/call", moved).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    // The model cannot consent through an argument of its own.
    let mut forged = delete(json!({}));
    forged["arguments"]["confirm"] = json!(true);
    let (_, reply, _) = rpc(&http, addr, 5, "tools/call", forged).await;
    // (An unknown argument is refused by validation; nothing is sent either way.)
    let r = &reply["result"];
    assert!(
        r["isError"] == true || r["resultType"] == "input_required",
        "{reply}"
    );
    assert!(up.requests().is_empty());

    // Accepted, with the keys in another order: sent once.
    let accepted = json!({"inputResponses": yes, "requestState": state});
    let (_, reply, _) = rpc(&http, addr, 6, "tools/call", delete(accepted)).await;
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    let sent = up.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].method.as_str(), sent[0].path()),
        ("DELETE", "/api/pets/3")
    );

    // A client without elicitation: MissingRequiredClientCapability, HTTP 400.
    let mut cannot = delete(json!({}));
    cannot["_meta"] = meta(json!({}));
    let (status, reply, _) = rpc(&http, addr, 7, "tools/call", cannot).await;
    assert_eq!(
        (status, reply["error"]["code"].as_i64()),
        (400, Some(-32021)),
        "{reply}"
    );

    // Reads are not gated.
    up.clear();
    let read = json!({"name": "petstore_show_pet_by_id", "arguments": {"petId": 3}, "_meta": asks});
    let (_, reply, _) = rpc(&http, addr, 8, "tools/call", read).await;
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(up.requests().len(), 1);
}

/// A 2025-era client that answers elicitations the way a user would.
#[derive(Clone)]
struct Answering(Option<bool>);

impl ClientHandler for Answering {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        if self.0.is_some() {
            caps.elicitation = Some(Default::default());
        }
        ClientConfig::new(caps, Implementation::new("answering", "0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        };
        assert!(message.contains("POST /pets"), "{message}");
        Ok(match self.0 {
            Some(true) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true}))
            }
            _ => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

/// `--confirm writes`, 2025 era (a session): `elicitation/create` while the call waits; sent
/// when the user accepts, not when they decline or when the client cannot ask.
#[tokio::test]
async fn confirmation_2025_asks_through_elicitation() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(201, json!({"id": 1, "name": "Rex"})));
    for (answer, sent) in [(Some(true), 1), (Some(false), 0), (None, 0)] {
        up.clear();
        let server = petstore(&up, confirming(Confirm::Writes)).await;
        let client = connect_in_process_as(server, Answering(answer)).await;
        let args = json!({"name": "Rex"}).as_object().cloned().unwrap();
        let r = client
            .call_tool(CallToolRequestParams::new("petstore_create_pet").with_arguments(args))
            .await
            .unwrap();
        assert_eq!(up.requests().len(), sent, "{answer:?}: {r:?}");
        assert_eq!(r.is_error, Some(sent == 0), "{answer:?}: {r:?}");
        if answer.is_none() {
            assert!(format!("{r:?}").contains("elicitation capability"), "{r:?}");
        }
        client.cancel().await.unwrap();
    }
}

/// A call the API has not answered after a second gets progress notifications when the client
/// asked for them (its progressToken), on the call's own response stream (2026).
#[tokio::test]
async fn slow_calls_report_progress() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"id": 3, "name": "Tom"})));
    up.delay(Duration::from_millis(2600));
    let addr = serve_http(petstore(&up, ServerOptions::default()).await, false).await;
    let http = reqwest::Client::new();
    let mut m = meta(json!({}));
    m["progressToken"] = json!("slow-1");
    let (_, reply, before) = rpc(
        &http,
        addr,
        1,
        "tools/call",
        json!({"name": "petstore_show_pet_by_id", "arguments": {"petId": 3}, "_meta": m}),
    )
    .await;
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    let progress: Vec<f64> = before
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .inspect(|n| assert_eq!(n["params"]["progressToken"], "slow-1", "{n}"))
        .map(|n| n["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(progress.len() >= 2, "{before:?}");
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    assert!(
        before[0]["params"]["message"]
            .as_str()
            .unwrap()
            .contains("GET /pets/{petId}")
    );

    // Without a token, or with a quick answer: no notifications.
    let (_, _, before) = rpc(
        &http,
        addr,
        2,
        "tools/call",
        json!({"name": "petstore_show_pet_by_id", "arguments": {"petId": 3}}),
    )
    .await;
    assert!(before.is_empty(), "{before:?}");
}

/// The same in the 2025 era, over stdio: the notifications come before the call's response,
/// carrying the token of the request.
#[tokio::test]
async fn slow_calls_report_progress_in_a_2025_session() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"id": 3, "name": "Tom"})));
    up.delay(Duration::from_millis(2600));
    let mut child = tokio::process::Command::new(openapi_mcp_tests::harness::binary())
        .arg("proxy")
        .arg(spec("petstore.yaml"))
        .args(["--base-url", &up.url("/api")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    for line in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "old", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "petstore_show_pet_by_id", "arguments": {"petId": 3},
            "_meta": {"progressToken": 77}}}),
    ] {
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut progress = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("an answer within 20 s")
            .unwrap()
            .expect("stdout open");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["method"] == "notifications/progress" {
            assert_eq!(v["params"]["progressToken"], 77, "{v}");
            progress.push(v["params"]["progress"].as_f64().unwrap());
        } else if v["id"] == 2 {
            assert_eq!(v["result"]["isError"], false, "{v}");
            break;
        }
    }
    assert!(progress.len() >= 2, "{progress:?}");
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
}

/// `--poll` (#23): a `202 Accepted` is followed through the GET tool that reads its status URL
/// until the operation ends, with progress meanwhile; past `--timeout` the result says it is
/// still running and which call checks it.
#[tokio::test]
async fn accepted_operations_are_polled_to_their_end() {
    let up = Upstream::start().await;
    let polls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = polls.clone();
    up.respond(move |r| {
        if r.method == "POST" {
            let mut reply = Reply::empty(202);
            reply
                .headers
                .push(("Location".into(), "/api/pets/42".into()));
            return reply;
        }
        // The status says the operation runs, then answers with the pet (a status answering
        // 202 all along is the second half).
        match seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => Reply::json(
                200,
                json!({"id": 42, "name": "rex", "status": "InProgress"}),
            ),
            _ => Reply::json(200, json!({"id": 42, "name": "rex", "status": "available"})),
        }
    });
    let opts = ServerOptions {
        poll: true,
        ..ServerOptions::default()
    };
    let addr = serve_http(petstore(&up, opts).await, false).await;
    let http = reqwest::Client::new();
    let mut m = meta(json!({}));
    m["progressToken"] = json!("lro");
    let started = std::time::Instant::now();
    let (_, reply, before) = rpc(
        &http,
        addr,
        1,
        "tools/call",
        json!({"name": "petstore_create_pet", "arguments": {"name": "rex"}, "_meta": m}),
    )
    .await;
    let r = &reply["result"];
    assert_eq!(r["isError"], false, "{reply}");
    let text = r["content"].to_string();
    assert!(text.contains("available"), "{text}");
    assert!(
        text.contains("final answer of `petstore_show_pet_by_id`")
            && text.contains("polled 2 times"),
        "{text}"
    );
    let sent: Vec<String> = up
        .requests()
        .iter()
        .map(|q| format!("{} {}", q.method, q.path()))
        .collect();
    assert_eq!(
        sent,
        ["POST /api/pets", "GET /api/pets/42", "GET /api/pets/42"]
    );
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "waits 1, then 2 s"
    );
    assert!(
        before
            .iter()
            .any(|n| n["method"] == "notifications/progress"),
        "progress while polling: {before:?}"
    );

    // Never done within --timeout (5 s here): the result says so and names the call.
    up.clear();
    up.respond(|r| {
        let mut reply = Reply::empty(202);
        if r.method == "POST" {
            reply
                .headers
                .push(("Location".into(), "/api/pets/43".into()));
        }
        reply
    });
    let (_, reply, _) = rpc(
        &http,
        addr,
        2,
        "tools/call",
        json!({"name": "petstore_create_pet", "arguments": {"name": "tom"}}),
    )
    .await;
    let text = reply["result"]["content"].to_string();
    assert!(
        text.contains("still running") && text.contains("petstore_show_pet_by_id"),
        "{text}"
    );
    assert!(up.requests().len() >= 2, "it polled before giving up");
}
