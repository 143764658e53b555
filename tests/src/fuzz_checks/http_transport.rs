//! The `http_transport` fuzz target's check: an HTTP request decoded from the fuzz bytes (method,
//! path, the MCP headers, a body shaped like JSON-RPC most of the time) is driven in-process
//! through the service the proxy serves over Streamable HTTP ([`transport::http_router`]), on one
//! current-thread Tokio runtime reused across inputs. Four configurations are served: stateful
//! and stateless, each plain and locked down (bearer token, rate limit, allowed hosts/origins, a
//! small body limit, `--forward-header`, dynamic mode). Optionally the input runs inside a live
//! session (a real `initialize` first; the `Mcp-Session-Id` choice `live` names it).
//!
//! Invariants: no panic; an answer (headers) within [`STEP_TIMEOUT`]; no 5xx; a JSON answer is
//! JSON, every server-sent event's data is JSON, a POST's event stream ends (a GET's and
//! `subscriptions/listen`'s may stay open); without the bearer token the answer is 401; a
//! disallowed `Host` never succeeds; the `initialize` handshake of a valid client works and a
//! session the server issued can be deleted. Sessions created are deleted after each input, so
//! inputs do not pile up state.

use std::time::Duration;

use axum::body::Body;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;
use url::Url;

use openapi_mcp_convert::convert::{ToolOptions, convert};
use openapi_mcp_convert::load::load_single;
use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, Forwarder};
use openapi_mcp_runtime::http::transport::{HttpOptions, http_router};
use openapi_mcp_runtime::modes::dynamic::ToolMode;
use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};

use super::MAX_INPUT;
use super::reader::{Reader, Writer};

/// A request must be answered (status and headers; a POST's event stream must end) within this.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(5);
/// The bearer token of the locked-down configurations.
pub const TOKEN: &str = "fuzz-token-0123456789";
/// Where tool calls go: nothing listens there, so a call fails fast with a connection error.
pub const UNREACHABLE_BASE: &str = "http://127.0.0.1:1/v1";
/// Response bodies are read up to this.
const MAX_BODY: usize = 16 << 20;

/// The `Host` the locked-down configurations allow besides the loopback names.
const ALLOWED_HOST: &str = "api.example.test";
/// A `Host` no configuration allows.
const EVIL_HOST: &str = "evil.example";

pub const METHODS: &[&str] = &[
    "POST", "GET", "DELETE", "PUT", "OPTIONS", "HEAD", "PATCH", "TRACE", "CONNECT",
];
pub const PATHS: &[&str] = &[
    "/mcp",
    "/mcp/",
    "/",
    "/mcp?x=1",
    "/mcp/x",
    "/MCP",
    "//mcp",
    "/mcp/../mcp",
    "http://localhost/mcp",
    "http://evil.example/mcp",
    "*",
];
pub const PROTOCOL_VERSIONS: &[&str] = &[
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "2025-11-25",
    "2026-07-28",
    "2099-01-01",
    "",
];
pub const RPC_METHODS: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "server/discover",
    "subscriptions/listen",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
];
/// Requests whose answer is a stream that stays open by design.
const LONG_LIVED: &[&str] = &["subscriptions/listen"];

/// The headers an input may set, in decoding order, each with its canned values (the fuzz bytes
/// pick one of them, a string of their own, or none).
pub const HEADERS: &[(&str, &[&str])] = &[
    (
        "content-type",
        &[
            "application/json",
            "application/json; charset=utf-8",
            "text/plain",
            "APPLICATION/JSON",
            "application/json-rpc",
        ],
    ),
    (
        "accept",
        &[
            "application/json, text/event-stream",
            "text/event-stream",
            "application/json",
            "*/*",
            "application/json;q=0, text/event-stream",
        ],
    ),
    (
        "mcp-session-id",
        &["live", "", "00000000-0000-0000-0000-000000000000", "x"],
    ),
    ("mcp-protocol-version", PROTOCOL_VERSIONS),
    (
        "mcp-method",
        &[
            "tools/call",
            "initialize",
            "tools/list",
            "ping",
            "server/discover",
            "notifications/initialized",
        ],
    ),
    (
        "mcp-name",
        &[
            "petstore_list_pets",
            "petstore_show_pet_by_id",
            "call_operation",
            "listPets",
            "",
        ],
    ),
    (
        "authorization",
        &[
            "Bearer fuzz-token-0123456789",
            "bearer fuzz-token-0123456789 ",
            "Bearer wrong",
            "Basic Zm9vOmJhcg==",
            "Bearer ",
        ],
    ),
    (
        "host",
        &[
            "localhost",
            "127.0.0.1:8080",
            "[::1]:1",
            ALLOWED_HOST,
            EVIL_HOST,
            "localhost:99999",
        ],
    ),
    (
        "origin",
        &[
            "http://localhost:3000",
            "https://app.example.test",
            "https://evil.example",
            "null",
        ],
    ),
    (
        "content-length",
        &["0", "1", "999999999", "-1", "18446744073709551616"],
    ),
    ("last-event-id", &["0", "1/2", "x"]),
    ("mcp-param-limit", &["1", "=?base64?MQ==?=", ""]),
    ("x-forward-me", &["yes"]),
];

/// One configuration of the HTTP transport.
struct Variant {
    router: axum::Router,
    stateless: bool,
    token: bool,
}

/// The services the check drives (built once) and the runtime they run on.
pub struct HttpFixture {
    rt: tokio::runtime::Runtime,
    variants: Vec<Variant>,
    /// Tool names the servers list (tool-call bodies pick one, or a string of their own).
    pub tool_names: Vec<String>,
}

fn proxy(spec: &[u8], opts: ServerOptions) -> Result<ProxyServer, String> {
    let spec = load_single(spec, "petstore.yaml").map_err(|e| e.to_string())?;
    let set = convert(&spec, &ToolOptions::default()).tools;
    let base = Url::parse(UNREACHABLE_BASE).map_err(|e| e.to_string())?;
    let mut fo = ForwardOptions::new(base);
    fo.timeout = Duration::from_secs(2);
    let fwd = Forwarder::new(fo, set.security_schemes.clone(), Credentials::default())
        .map_err(|e| e.to_string())?;
    Ok(ProxyServer::new(set, fwd, opts))
}

impl HttpFixture {
    /// Serves the petstore spec `spec` in the four configurations.
    pub fn new(spec: &[u8]) -> Result<Self, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let plain = proxy(spec, ServerOptions::default())?;
        let forwarding = proxy(
            spec,
            ServerOptions {
                forward_headers: vec!["X-Forward-Me".into()],
                max_concurrency: Some(2),
                ..ServerOptions::default()
            },
        )?;
        let dynamic = proxy(
            spec,
            ServerOptions {
                mode: ToolMode::Dynamic,
                ..ServerOptions::default()
            },
        )?;
        let mut tool_names: Vec<String> = Vec::new();
        for s in [&plain, &dynamic] {
            tool_names.extend(s.state().tools().iter().map(|t| t.name.to_string()));
        }
        let listen = "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?;
        let locked = |stateless: bool| {
            let mut o = HttpOptions::new(listen);
            o.stateless = stateless;
            o.auth_token = Some(TOKEN.into());
            o.rate_limit = Some(1_000_000);
            o.allowed_hosts = vec![ALLOWED_HOST.into()];
            o.allowed_origins = vec!["https://app.example.test".into()];
            o.max_body_bytes = 2048;
            o.sessions.max = 64;
            o.sessions.per_client = 8;
            o.sessions.half_open = Duration::from_secs(1);
            o
        };
        let mut stateless = HttpOptions::new(listen);
        stateless.stateless = true;
        let configs = [
            (plain.clone(), HttpOptions::new(listen)),
            (plain, stateless),
            (forwarding, locked(false)),
            (dynamic, locked(true)),
        ];
        let variants = rt.block_on(async {
            configs
                .into_iter()
                .map(|(server, opts)| {
                    // Never cancelled: the services live as long as the process.
                    let shutdown = CancellationToken::new();
                    Variant {
                        router: http_router(server, &opts, &shutdown),
                        stateless: opts.stateless,
                        token: opts.auth_token.is_some(),
                    }
                })
                .collect()
        });
        Ok(HttpFixture {
            rt,
            variants,
            tool_names,
        })
    }
}

/// A decoded fuzz input.
#[derive(Debug)]
pub struct HttpCase {
    pub variant: usize,
    /// Run inside a live session (stateful configurations).
    pub session: bool,
    pub method: Vec<u8>,
    pub uri: Vec<u8>,
    /// Header name and raw value; the value `live` of `mcp-session-id` is the live session's id.
    pub headers: Vec<(&'static str, Vec<u8>)>,
    pub body: Vec<u8>,
    /// The JSON-RPC methods in the body (for the open-stream exemption).
    pub rpc_methods: Vec<String>,
}

fn header_value(r: &mut Reader<'_>, canned: &[&str]) -> Option<Vec<u8>> {
    let sel = r.choose(canned.len() + 3);
    match sel {
        0 | 1 => None,
        2 => Some(r.bytes().to_vec()),
        i => Some(canned[i - 3].as_bytes().to_vec()),
    }
}

fn rpc_message(r: &mut Reader<'_>, tools: &[String], methods: &mut Vec<String>) -> Value {
    let mut m = Map::new();
    match r.choose(4) {
        0 | 1 => {
            m.insert("jsonrpc".into(), json!("2.0"));
        }
        2 => {}
        _ => {
            m.insert("jsonrpc".into(), r.value(1, 64));
        }
    }
    let id = match r.choose(8) {
        0 => Some(json!(1)),
        1 => Some(json!("req-1")),
        2 => None,
        3 => Some(Value::Null),
        4 => Some(json!(-1)),
        5 => Some(json!(1.5)),
        6 => Some(json!(u64::MAX)),
        _ => Some(r.value(1, 64)),
    };
    if let Some(id) = id {
        m.insert("id".into(), id);
    }
    let method = match RPC_METHODS.get(r.choose(RPC_METHODS.len() + 1)) {
        Some(s) => s.to_string(),
        None => r.string(),
    };
    methods.push(method.clone());
    let version =
        |r: &mut Reader<'_>| match PROTOCOL_VERSIONS.get(r.choose(PROTOCOL_VERSIONS.len() + 1)) {
            Some(v) => Value::String(v.to_string()),
            None => r.value(1, 64),
        };
    let mut params = match method.as_str() {
        "initialize" => {
            let mut p = Map::new();
            p.insert("protocolVersion".into(), version(r));
            p.insert(
                "capabilities".into(),
                if r.flag() { json!({}) } else { r.value(2, 64) },
            );
            p.insert(
                "clientInfo".into(),
                if r.flag() {
                    json!({"name": "fuzz", "version": "1"})
                } else {
                    r.value(2, 64)
                },
            );
            Value::Object(p)
        }
        "tools/call" => {
            let name = match tools.get(r.choose(tools.len() + 1)) {
                Some(n) => Value::String(n.clone()),
                None => r.value(1, 64),
            };
            let args = match r.choose(3) {
                0 => json!({}),
                1 => {
                    let mut a = Map::new();
                    for _ in 0..r.choose(4) {
                        let k = match [
                            "petId",
                            "limit",
                            "name",
                            "tag",
                            "operation",
                            "query",
                            "arguments",
                        ]
                        .get(r.choose(8))
                        {
                            Some(k) => k.to_string(),
                            None => r.string(),
                        };
                        a.insert(k, r.value(2, 4096));
                    }
                    Value::Object(a)
                }
                _ => r.value(3, 4096),
            };
            json!({"name": name, "arguments": args})
        }
        "tools/list" => match r.choose(3) {
            0 => json!({}),
            1 => json!({"cursor": r.string()}),
            _ => r.value(2, 256),
        },
        _ => {
            if r.flag() {
                json!({})
            } else {
                r.value(2, 256)
            }
        }
    };
    // Per-request protocol metadata (the 2026-07-28 era: the version and the client's
    // capabilities on every request).
    if r.choose(4) == 0
        && let Value::Object(p) = &mut params
    {
        let mut meta = Map::new();
        meta.insert("io.modelcontextprotocol/protocolVersion".into(), version(r));
        if r.choose(4) != 0 {
            let caps = if r.flag() { json!({}) } else { r.value(2, 64) };
            meta.insert("io.modelcontextprotocol/clientCapabilities".into(), caps);
        }
        if r.flag() {
            meta.insert(
                "io.modelcontextprotocol/clientInfo".into(),
                json!({"name": "fuzz", "version": "1"}),
            );
        }
        if r.flag() {
            meta.insert("progressToken".into(), r.value(1, 64));
        }
        p.insert("_meta".into(), Value::Object(meta));
    }
    match r.choose(8) {
        0 => {}
        1 => {
            m.insert("result".into(), json!({}));
        }
        2 => {
            m.insert(
                "error".into(),
                json!({"code": -32600, "message": r.string()}),
            );
        }
        _ => {
            m.insert("method".into(), Value::String(method));
            if r.choose(8) != 0 {
                m.insert("params".into(), params);
            }
        }
    }
    Value::Object(m)
}

impl HttpFixture {
    /// Decodes a fuzz input; `None` for inputs over [`MAX_INPUT`].
    pub fn decode(&self, data: &[u8]) -> Option<HttpCase> {
        if data.len() > MAX_INPUT {
            return None;
        }
        let mut r = Reader::new(data);
        let variant = r.choose(self.variants.len());
        let session = r.flag();
        let method = match METHODS.get(r.choose(METHODS.len() + 1)) {
            Some(m) => m.as_bytes().to_vec(),
            None => r.bytes().to_vec(),
        };
        let uri = match PATHS.get(r.choose(PATHS.len() + 1)) {
            Some(p) => p.as_bytes().to_vec(),
            None => r.bytes().to_vec(),
        };
        let mut headers = Vec::new();
        for (name, canned) in HEADERS {
            let twice = r.choose(8) == 0;
            for _ in 0..if twice { 2 } else { 1 } {
                if let Some(v) = header_value(&mut r, canned) {
                    headers.push((*name, v));
                }
            }
        }
        let mut rpc_methods = Vec::new();
        let body = match r.choose(6) {
            0 => Vec::new(),
            1 => r.bytes().to_vec(),
            2 => {
                let n = 1 + r.choose(3);
                let batch: Vec<Value> = (0..n)
                    .map(|_| rpc_message(&mut r, &self.tool_names, &mut rpc_methods))
                    .collect();
                Value::Array(batch).to_string().into_bytes()
            }
            _ => rpc_message(&mut r, &self.tool_names, &mut rpc_methods)
                .to_string()
                .into_bytes(),
        };
        Some(HttpCase {
            variant,
            session,
            method,
            uri,
            headers,
            body,
            rpc_methods,
        })
    }
}

/// Headers of a well-behaved client of `v` (host, accept, bearer token).
fn client_request(v: &Variant, method: Method, body: Option<Value>) -> http::request::Builder {
    let mut b = Request::builder()
        .method(method)
        .uri("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if body.is_some() {
        b = b.header(header::CONTENT_TYPE, "application/json");
    }
    if v.token {
        b = b.header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
    }
    b
}

async fn send(v: &Variant, req: Request<Body>) -> Result<Response<Body>, String> {
    match tokio::time::timeout(STEP_TIMEOUT, v.router.clone().oneshot(req)).await {
        Ok(Ok(resp)) => Ok(resp),
        Ok(Err(e)) => match e {},
        Err(_) => Err(format!("no answer within {STEP_TIMEOUT:?}")),
    }
}

async fn read_body(body: Body, what: &str) -> Result<bytes::Bytes, String> {
    match tokio::time::timeout(STEP_TIMEOUT, axum::body::to_bytes(body, MAX_BODY)).await {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(e)) => Err(format!("{what}: reading the body failed: {e}")),
        Err(_) => Err(format!(
            "{what}: the body did not end within {STEP_TIMEOUT:?}"
        )),
    }
}

fn content_type(resp: &Response<Body>) -> String {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Every `data:` of the server-sent events in `body` is JSON.
fn check_events(body: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(body).map_err(|_| "an event stream that is not UTF-8")?;
    for event in text.split("\n\n") {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            continue;
        }
        let data = data.join("\n");
        if data.is_empty() {
            continue;
        }
        if serde_json::from_str::<Value>(&data).is_err() {
            return Err(format!("an event's data is not JSON: {:?}", cut(&data)));
        }
    }
    Ok(())
}

fn cut(s: &str) -> String {
    s.chars().take(300).collect()
}

/// A well-behaved client's `initialize` + `notifications/initialized`; the session id.
async fn open_session(v: &Variant) -> Result<String, String> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fuzz", "version": "1"}}});
    let req = client_request(v, Method::POST, Some(init.clone()))
        .body(Body::from(init.to_string()))
        .map_err(|e| e.to_string())?;
    let resp = send(v, req).await?;
    let status = resp.status();
    let id = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|h| h.to_str().ok())
        .map(str::to_string);
    let body = read_body(resp.into_body(), "initialize").await?;
    let Some(id) = id.filter(|_| status == StatusCode::OK) else {
        return Err(format!(
            "a valid initialize got {status} without a session: {}",
            cut(&String::from_utf8_lossy(&body))
        ));
    };
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let req = client_request(v, Method::POST, Some(note.clone()))
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-06-18")
        .body(Body::from(note.to_string()))
        .map_err(|e| e.to_string())?;
    let resp = send(v, req).await?;
    if resp.status() != StatusCode::ACCEPTED {
        return Err(format!("notifications/initialized got {}", resp.status()));
    }
    Ok(id)
}

async fn close_session(v: &Variant, id: &str, must_exist: bool) -> Result<(), String> {
    let req = client_request(v, Method::DELETE, None)
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", "2025-06-18")
        .body(Body::empty())
        .map_err(|e| e.to_string())?;
    let resp = send(v, req).await?;
    let status = resp.status();
    let ok = status == StatusCode::NO_CONTENT || (!must_exist && status == StatusCode::NOT_FOUND);
    if !ok {
        return Err(format!(
            "DELETE of a session the server issued got {status}"
        ));
    }
    Ok(())
}

/// Sends the fuzzed request of `case`, then checks the answer.
async fn run(v: &Variant, case: &HttpCase, live: Option<&str>) -> Result<Outcome, String> {
    let Ok(method) = Method::from_bytes(&case.method) else {
        return Ok(Outcome::default());
    };
    let mut b = Request::builder()
        .method(method.clone())
        .uri(case.uri.as_slice());
    for (name, value) in &case.headers {
        let value = if *name == "mcp-session-id" && value.as_slice() == b"live" {
            live.unwrap_or("no-live-session").as_bytes()
        } else {
            value.as_slice()
        };
        let Ok(value) = HeaderValue::from_bytes(value) else {
            return Ok(Outcome::default());
        };
        b = b.header(*name, value);
    }
    let Ok(req) = b.body(Body::from(case.body.clone())) else {
        return Ok(Outcome::default());
    };
    let authorized = req
        .headers()
        .get_all(header::AUTHORIZATION)
        .iter()
        .any(|h| {
            h.as_bytes()
                .windows(TOKEN.len())
                .any(|w| w == TOKEN.as_bytes())
        });
    // The probes and the OAuth metadata are served before the bearer gate and the Host check, by
    // design (the kubelet probes by pod IP; the metadata is public): any answer there (405 for a
    // POST to /healthz, 200 for `Host: evil.example`) is not a bypass. The router sees
    // `////healthz` as `/healthz` too.
    let open_path = {
        let p = req.uri().path().trim_start_matches('/');
        p == "healthz" || p == "readyz" || p.starts_with(".well-known/")
    };
    let evil_host = req.uri().authority().is_none()
        && req
            .headers()
            .get(header::HOST)
            .is_some_and(|h| h.as_bytes() == EVIL_HOST.as_bytes());
    let resp = send(v, req).await?;
    let status = resp.status();
    if status.is_server_error() {
        let body = read_body(resp.into_body(), "5xx answer").await?;
        return Err(format!(
            "{status} for a client's request: {}",
            cut(&String::from_utf8_lossy(&body))
        ));
    }
    if v.token && !authorized && !open_path && status != StatusCode::UNAUTHORIZED {
        return Err(format!("{status} without the bearer token (expected 401)"));
    }
    if evil_host && !open_path && status.is_success() {
        return Err(format!("{status} for Host: {EVIL_HOST}"));
    }
    let created = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|h| h.to_str().ok())
        .filter(|id| Some(*id) != live)
        .map(str::to_string);
    let ct = content_type(&resp);
    let open_ok = method == Method::GET
        || case
            .rpc_methods
            .iter()
            .any(|m| LONG_LIVED.contains(&m.as_str()));
    if ct == "text/event-stream" && open_ok {
        // A stream that may stay open: headers were enough.
        return Ok(Outcome {
            status: Some(status),
            body: None,
            created,
        });
    }
    let body = read_body(resp.into_body(), &format!("{method} answer ({status})")).await?;
    match ct.as_str() {
        "application/json"
            if !body.is_empty() && serde_json::from_slice::<Value>(&body).is_err() =>
        {
            return Err(format!(
                "a JSON answer ({status}) that is not JSON: {}",
                cut(&String::from_utf8_lossy(&body))
            ));
        }
        "text/event-stream" => check_events(&body)?,
        _ => {}
    }
    Ok(Outcome {
        status: Some(status),
        body: Some(body),
        created,
    })
}

/// What the fuzzed request got.
#[derive(Debug, Default)]
pub struct Outcome {
    /// `None`: the input is no valid HTTP request (method, URI or a header value).
    pub status: Option<StatusCode>,
    /// The body read to its end (`None` for a stream that may stay open).
    pub body: Option<bytes::Bytes>,
    /// A session the request created (deleted afterwards).
    pub created: Option<String>,
}

/// Runs one input: the live session first when asked, the fuzzed request, then cleanup.
pub fn exchange(fx: &HttpFixture, data: &[u8]) -> Result<Outcome, String> {
    let Some(case) = fx.decode(data) else {
        return Ok(Outcome::default());
    };
    let v = &fx.variants[case.variant];
    fx.rt.block_on(async {
        let live = if case.session && !v.stateless {
            Some(open_session(v).await?)
        } else {
            None
        };
        let result = run(v, &case, live.as_deref()).await;
        // Clean up whatever happened: a session the request created, then the live one.
        if let Ok(Outcome {
            created: Some(created),
            ..
        }) = &result
        {
            close_session(v, created, true).await?;
        }
        if let Some(id) = &live {
            close_session(v, id, false).await?;
        }
        result
    })
}

/// The fuzz target's check (see the module docs).
pub fn check_http_transport(fx: &HttpFixture, data: &[u8]) -> Result<(), String> {
    exchange(fx, data).map(|_| ())
}

/// Writes a `tools/call` arguments object for [`seeds`].
type ArgsFn = dyn Fn(Writer) -> Writer;

/// Seed inputs: for each configuration a valid `initialize`, tool calls and every JSON-RPC
/// method inside a live session (stateful) or alone, a GET stream and a DELETE.
pub fn seeds(fx: &HttpFixture) -> Vec<(String, Vec<u8>)> {
    // Per header (HEADERS order): the "twice" byte (1: once), then the value: 0 = none,
    // 2 = bytes of its own, 3 + i = canned value i.
    fn headers(mut w: Writer, picks: &[usize]) -> Writer {
        for i in 0..HEADERS.len() {
            w = w.pick(1).pick(picks.get(i).copied().unwrap_or(0));
        }
        w
    }
    // The bytes `rpc_message` reads for a well-formed request to `method` (for `tools/call`:
    // tool `tool` with the arguments `args` writes), with 2026-07-28 `_meta` when `meta`.
    fn request(
        w: Writer,
        method: usize,
        tool: usize,
        args: &dyn Fn(Writer) -> Writer,
        meta: bool,
    ) -> Writer {
        // jsonrpc "2.0", id 1, the method
        let w = w.pick(0).pick(0).pick(method);
        let w = match RPC_METHODS[method] {
            // protocolVersion 2025-06-18, capabilities {}, clientInfo
            "initialize" => w.pick(0).pick(1).pick(1),
            "tools/call" => args(w.pick(tool).pick(1)),
            // {} params
            "tools/list" => w.pick(0),
            _ => w.pick(1),
        };
        let w = if meta {
            // _meta: protocolVersion 2026-07-28, clientCapabilities {}, clientInfo, no
            // progressToken
            w.pick(0).pick(4).pick(1).pick(1).pick(1).pick(0)
        } else {
            w.pick(1)
        };
        // a request, with params
        w.pick(3).pick(1)
    }
    // Argument objects (after the "an object" choice): {key: 7} for the first keys of the
    // list `rpc_message` picks from, and call_operation's {"operation": ..., "arguments": {}}.
    let number = |k: usize| move |w: Writer| w.pick(1).pick(k).pick(2).pick(0).pick(7);
    let none = |w: Writer| w.pick(0);
    let call_op = |w: Writer| {
        w.pick(2)
            .pick(4) // operation
            .pick(3)
            .string("petstore_list_pets")
            .pick(6) // arguments
            .pick(6) // an object
            .pick(1)
            .string("limit")
            .pick(2)
            .pick(0)
            .pick(7)
    };
    let no_args = |w: Writer| w;
    // Canned value indices (+3) of the headers a valid client sends.
    let (ct, acc, live, pv, auth, host) = (3, 3, 3, 3, 3, 3);
    let index = |m: &str| RPC_METHODS.iter().position(|x| *x == m).unwrap_or(0);
    let mut out = Vec::new();
    for variant in 0..fx.variants.len() {
        let session = usize::from(!fx.variants[variant].stateless);
        let start = |session: usize| {
            let w = Writer::new().pick(variant).pick(session).pick(0).pick(0);
            // The session id only inside a session (stateless: none at all).
            let sid = if session == 1 { live } else { 0 };
            headers(w, &[ct, acc, sid, pv, 0, 0, auth, host])
        };
        let w = request(start(0).pick(3), index("initialize"), 0, &no_args, false);
        out.push((format!("v{variant}-initialize"), w.finish()));
        for (tool, name) in fx.tool_names.iter().enumerate() {
            let arg_sets: [(&str, &dyn Fn(Writer) -> Writer); 4] = [
                ("none", &none),
                ("petId", &number(0)),
                ("limit", &number(1)),
                ("op", &call_op),
            ];
            for (label, args) in arg_sets {
                let w = request(
                    start(session).pick(3),
                    index("tools/call"),
                    tool,
                    args,
                    false,
                );
                out.push((format!("v{variant}-call-{name}-{label}"), w.finish()));
            }
        }
        for (i, m) in RPC_METHODS.iter().enumerate() {
            let w = request(start(session).pick(3), i, 0, &none, false);
            out.push((
                format!("v{variant}-rpc-{}", m.replace('/', "_")),
                w.finish(),
            ));
        }
        // A batch of ping + tools/list.
        let w = request(
            start(session).pick(2).pick(1),
            index("ping"),
            0,
            &no_args,
            false,
        );
        let w = request(w, index("tools/list"), 0, &no_args, false);
        out.push((format!("v{variant}-batch"), w.finish()));
        // The 2026-07-28 era: no session, per-request _meta, the SEP-2243 headers.
        let tool = |n: &str| fx.tool_names.iter().position(|t| t == n).unwrap_or(0);
        // The method, the Mcp-Method and Mcp-Name choices, the tool, its arguments.
        let era: [(&str, usize, usize, usize, &ArgsFn); 5] = [
            ("server/discover", 7, 0, 0, &none),
            ("ping", 6, 0, 0, &none),
            ("tools/list", 5, 0, 0, &none),
            ("tools/call", 3, 3, tool("petstore_list_pets"), &number(1)),
            ("tools/call", 3, 5, tool("call_operation"), &call_op),
        ];
        for (m, method_header, name_header, t, args) in era {
            let w = Writer::new().pick(variant).pick(0).pick(0).pick(0);
            let w = headers(
                w,
                &[ct, acc, 0, 3 + 4, method_header, name_header, auth, host],
            );
            let w = request(w.pick(3), index(m), t, args, true);
            let label = format!("{}-{}", m.replace('/', "_"), fx.tool_names[t]);
            out.push((format!("v{variant}-2026-{label}"), w.finish()));
        }
        // GET (the standalone stream) and DELETE of the live session.
        for (mi, m) in [(1, "get"), (2, "delete")] {
            let w = Writer::new().pick(variant).pick(session).pick(mi).pick(0);
            let w = headers(w, &[0, acc + 1, live, pv, 0, 0, auth, host]);
            out.push((format!("v{variant}-{m}"), w.pick(0).finish()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz_checks::reader::tests::{files_in, root};

    fn fixture() -> HttpFixture {
        let spec = std::fs::read(root().join("specs/petstore.yaml")).expect("petstore");
        HttpFixture::new(&spec).expect("fixture")
    }

    /// Every seed and saved crash input passes; the seeds reach the server (a live session, a
    /// tool call answered with a JSON-RPC result).
    #[test]
    fn http_transport_corpus_replays() {
        let fx = fixture();
        let seeds = files_in(&root().join("fuzz/seeds/http_transport"));
        assert!(seeds.len() >= 20, "seed corpus missing");
        let mut inputs = seeds;
        inputs.extend(files_in(&root().join("fuzz/regressions/http_transport")));
        for p in inputs {
            let data = std::fs::read(&p).expect("read input");
            if let Err(e) = check_http_transport(&fx, &data) {
                panic!("{}: {e}", p.display());
            }
        }
    }

    /// The seeds get the answers a client would: a session from `initialize`, a tool call
    /// answered (the API is unreachable: an error result, not a protocol error).
    #[test]
    fn http_transport_seeds_reach_the_server() {
        let fx = fixture();
        for (name, data) in seeds(&fx) {
            let out = exchange(&fx, &data).unwrap_or_else(|e| panic!("{name}: {e}"));
            let body = out
                .body
                .as_ref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            if std::env::var_os("FUZZ_SHOW").is_some() {
                eprintln!("{name}: {:?} {}", out.status, cut(&body));
            }
            if name.ends_with("-initialize")
                && !name.contains("-rpc-")
                && !fx.variants[usize::from(name.as_bytes()[1] - b'0')].stateless
            {
                assert!(out.created.is_some(), "{name}: no session");
            }
            if name.starts_with("v1-2026-tools_list") {
                assert_eq!(out.status, Some(StatusCode::OK), "{name}: {body}");
                assert!(body.contains("petstore_list_pets"), "{name}: {body}");
            }
            let forwarded = (name.ends_with("-call-petstore_list_pets-limit")
                && !name.starts_with("v3"))
                || name == "v0-2026-tools_call-petstore_list_pets"
                || name == "v3-call-call_operation-op";
            if forwarded {
                assert_eq!(out.status, Some(StatusCode::OK), "{name}: {body}");
                assert!(body.contains("\"isError\":true"), "{name}: {body}");
            }
        }
    }

    /// The seeds decode to what they say.
    #[test]
    fn http_transport_seeds_decode() {
        let fx = fixture();
        let seeds = seeds(&fx);
        let get = |n: &str| {
            let data = &seeds.iter().find(|(name, _)| name == n).expect(n).1;
            fx.decode(data).expect("decodes")
        };
        let init = get("v0-initialize");
        assert_eq!(init.method, b"POST");
        assert_eq!(init.uri, b"/mcp");
        assert!(!init.session);
        let body: Value = serde_json::from_slice(&init.body).expect("json");
        assert_eq!(body["method"], "initialize");
        assert_eq!(body["params"]["protocolVersion"], "2025-06-18");
        let call = get(&format!("v2-call-{}-petId", fx.tool_names[0]));
        assert!(call.session);
        assert!(call.headers.contains(&("mcp-session-id", b"live".to_vec())));
        assert!(
            call.headers
                .contains(&("authorization", format!("Bearer {TOKEN}").into_bytes()))
        );
        let body: Value = serde_json::from_slice(&call.body).expect("json");
        assert_eq!(
            body,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": fx.tool_names[0], "arguments": {"petId": 7}}})
        );
        let batch: Value = serde_json::from_slice(&get("v1-batch").body).expect("json");
        assert_eq!(batch.as_array().map(Vec::len), Some(2));
        assert_eq!(get("v0-get").method, b"GET");
    }

    /// Writes `fuzz/seeds/http_transport`:
    /// `cargo test -p openapi-mcp-tests --lib fuzz_checks::http_transport -- --ignored`.
    #[test]
    #[ignore = "writes the seed corpus"]
    fn write_seeds() {
        let fx = fixture();
        let dir = root().join("fuzz/seeds/http_transport");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (name, data) in seeds(&fx) {
            std::fs::write(dir.join(name), data).expect("write seed");
        }
    }
}
