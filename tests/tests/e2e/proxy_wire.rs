//! Exact bytes on the wire: request bodies and headers the upstream receives, MCP content the
//! client gets back for each kind of response, limits (size, timeout, retries) and credentials.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_runtime::forward::{Credentials, ForwardOptions};
use openapi_mcp_runtime::rmcp::model::CallToolResult;
use openapi_mcp_runtime::server::ServerOptions;
use openapi_mcp_tests::harness::{
    Client, base64, call, connect_in_process, server_for, spec, text, tool_set,
};
use openapi_mcp_tests::upstream::{Recorded, Reply, Upstream};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

// ------------------------------------------------------------------------------------ helpers

/// The proxy for `spec_path` at `base`, with forward options tweaked by `tweak` and credentials
/// read through the documented `OPENAPI_MCP_*` variable names from `env`.
async fn client_with(
    spec_path: &Path,
    base: &str,
    tweak: impl FnOnce(&mut ForwardOptions),
    env: &[(&str, &str)],
) -> Client {
    let set = tool_set(spec_path, &ToolOptions::default()).await;
    let creds = Credentials::from_env(&set.security_schemes, |k| {
        env.iter()
            .find(|(name, _)| *name == k)
            .map(|(_, v)| v.to_string())
    });
    connect_in_process(server_for(
        set,
        base,
        creds,
        tweak,
        ServerOptions::default(),
    ))
    .await
}

async fn client(spec_name: &str, up: &Upstream, env: &[(&str, &str)]) -> Client {
    client_with(&spec(spec_name), &up.url("/api"), |_| {}, env).await
}

/// The whole result as the client sees it on the wire.
fn wire(r: &CallToolResult) -> Value {
    serde_json::to_value(r).expect("result serializes")
}

/// Bytes that are not UTF-8 and contain CR/LF and NUL: they must survive untouched.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\r\n--not-a-boundary\x00";

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// One part of a multipart body: its header lines (lower-cased names) and raw bytes.
#[derive(Debug, PartialEq)]
struct Part {
    headers: Vec<(String, String)>,
    data: Vec<u8>,
}

impl Part {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses a `multipart/form-data` body strictly (RFC 7578 / 2046): every delimiter, CRLF and the
/// closing delimiter must be where they belong.
fn parse_multipart(content_type: &str, body: &[u8]) -> Vec<Part> {
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .unwrap_or_else(|| panic!("unexpected content type {content_type}"));
    assert!(
        !boundary.is_empty() && boundary.len() <= 70,
        "RFC 2046 boundary length: {boundary}"
    );
    let delim = format!("--{boundary}");
    let close = format!("{delim}--\r\n");
    assert!(
        body.starts_with(format!("{delim}\r\n").as_bytes()),
        "body must start with the delimiter"
    );
    assert!(
        body.ends_with(close.as_bytes()),
        "body must end with the closing delimiter"
    );
    let inner_delim = format!("\r\n{delim}");
    let mut parts = Vec::new();
    let mut rest = &body[delim.len() + 2..];
    loop {
        let head_end = find(rest, b"\r\n\r\n").expect("part headers end");
        let headers = std::str::from_utf8(&rest[..head_end])
            .expect("part headers are text")
            .split("\r\n")
            .map(|l| {
                let (k, v) = l.split_once(": ").expect("header line");
                (k.to_ascii_lowercase(), v.to_string())
            })
            .collect();
        let data_start = head_end + 4;
        let data_len = find(&rest[data_start..], inner_delim.as_bytes()).expect("part end");
        parts.push(Part {
            headers,
            data: rest[data_start..data_start + data_len].to_vec(),
        });
        rest = &rest[data_start + data_len + inner_delim.len()..];
        if rest == b"--\r\n" {
            return parts;
        }
        assert!(rest.starts_with(b"\r\n"), "delimiter must end with CRLF");
        rest = &rest[2..];
    }
}

// ------------------------------------------------------------------------------ request bodies

#[tokio::test]
async fn json_bodies_flattened_array_and_string() {
    let up = Upstream::start().await;
    up.respond(|r| match r.path() {
        "/api/employees" => Reply::json(
            201,
            json!({"firstName": "Ada", "lastName": "Lovelace", "employeeNumber": 7}),
        ),
        "/api/employees/batch" => Reply::json(201, json!(2)),
        "/api/notes" => Reply::json(201, json!("n-1")),
        _ => Reply::empty(404),
    });
    let c = client("allof-oneof.yaml", &up, &[]).await;

    // Flattened object: arguments become the object's members in schema order.
    let r = call(
        &c,
        "schema_create_employee",
        json!({"department": "engineering", "employeeNumber": 7, "lastName": "Lovelace", "firstName": "Ada"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(
        (req.method.as_str(), req.target.as_str()),
        ("POST", "/api/employees")
    );
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.header("accept"), Some("application/json"));
    assert_eq!(
        req.body_text(),
        r#"{"firstName":"Ada","lastName":"Lovelace","employeeNumber":7,"department":"engineering"}"#
    );

    // A non-object body is the `body` argument, sent as is.
    let batch = json!([
        {"firstName": "Ada", "lastName": "Lovelace", "employeeNumber": 1},
        {"firstName": "Alan", "lastName": "Turing", "employeeNumber": 2, "middleName": null}
    ]);
    let r = call(&c, "schema_create_employees_batch", json!({"body": batch})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.target, "/api/employees/batch");
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(
        req.body_text(),
        r#"[{"firstName":"Ada","lastName":"Lovelace","employeeNumber":1},{"firstName":"Alan","lastName":"Turing","employeeNumber":2,"middleName":null}]"#
    );
    // A non-object JSON answer is wrapped.
    assert_eq!(r.structured_content, Some(json!({"result": 2})));
    assert_eq!(text(&r), "2");

    let r = call(
        &c,
        "schema_create_note",
        json!({"body": "feed \"the\" cat"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.body_text(), r#""feed \"the\" cat""#);
    assert_eq!(r.structured_content, Some(json!({"result": "n-1"})));
}

#[tokio::test]
async fn form_multipart_text_and_binary_bodies() {
    let up = Upstream::start().await;
    up.respond(|r| match (r.method.as_str(), r.path()) {
        ("POST", "/api/profiles") => Reply::json(201, json!({"profileId": "p-1"})),
        ("POST", "/api/pets/p%201/photo") => {
            Reply::json(201, json!({"url": "http://x.example/p.png"}))
        }
        ("POST", "/api/notes") => Reply::raw(201, "text/plain", "note-9"),
        ("PUT", "/api/blobs/k1") => Reply::empty(204),
        _ => Reply::empty(404),
    });
    let c = client("forms.yaml", &up, &[]).await;

    // application/x-www-form-urlencoded; `interests` is style form, explode false (encoding).
    let r = call(
        &c,
        "forms_submit_profile_form",
        json!({"name": "Ada Lovelace & co", "age": 36, "interests": ["math", "poetry"], "newsletter": true}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.target, "/api/profiles");
    assert_eq!(
        req.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(req.header("accept"), Some("application/json"));
    assert_eq!(
        req.body_text(),
        "name=Ada+Lovelace+%26+co&age=36&interests=math,poetry&newsletter=true"
    );

    // multipart/form-data: a base64 file part, text fields and a JSON part.
    let r = call(
        &c,
        "forms_upload_pet_photo",
        json!({
            "petId": "p 1",
            "file": base64(PNG),
            "caption": "Rex\r\non the beach",
            "takenYear": 2024,
            "metadata": {"camera": "X100", "iso": 200}
        }),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.target, "/api/pets/p%201/photo");
    let ct = req
        .header("content-type")
        .expect("content type")
        .to_string();
    let parts = parse_multipart(&ct, &req.body);
    assert_eq!(
        parts,
        vec![
            Part {
                headers: vec![
                    (
                        "content-disposition".into(),
                        r#"form-data; name="file"; filename="file""#.into()
                    ),
                    ("content-type".into(), "image/png".into()),
                ],
                data: PNG.to_vec(),
            },
            Part {
                headers: vec![(
                    "content-disposition".into(),
                    r#"form-data; name="caption""#.into()
                )],
                data: b"Rex\r\non the beach".to_vec(),
            },
            Part {
                headers: vec![(
                    "content-disposition".into(),
                    r#"form-data; name="takenYear""#.into()
                )],
                data: b"2024".to_vec(),
            },
            Part {
                headers: vec![
                    (
                        "content-disposition".into(),
                        r#"form-data; name="metadata""#.into()
                    ),
                    ("content-type".into(), "application/json".into()),
                ],
                data: br#"{"camera":"X100","iso":200}"#.to_vec(),
            },
        ]
    );
    assert_eq!(parts[0].header("content-type"), Some("image/png"));
    assert_eq!(
        req.header("content-length"),
        Some(req.body.len().to_string().as_str())
    );

    // text/plain: the string as is.
    let r = call(
        &c,
        "forms_create_plain_note",
        json!({"body": "line 1\nlïne 2 {\"not\": json}"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.header("content-type"), Some("text/plain"));
    assert_eq!(req.header("accept"), Some("text/plain"));
    assert_eq!(
        req.body.as_ref(),
        "line 1\nlïne 2 {\"not\": json}".as_bytes()
    );
    assert_eq!(
        wire(&r),
        json!({"content": [{"type": "text", "text": "note-9"}], "isError": false})
    );

    // application/octet-stream: base64 decoded to the exact bytes.
    let all_bytes: Vec<u8> = (0..=255u8).collect();
    let r = call(
        &c,
        "forms_put_blob",
        json!({"key": "k1", "body": base64(&all_bytes)}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(
        (req.method.as_str(), req.target.as_str()),
        ("PUT", "/api/blobs/k1")
    );
    assert_eq!(req.header("content-type"), Some("application/octet-stream"));
    assert_eq!(req.body.as_ref(), all_bytes.as_slice());

    // Invalid base64 is an argument error; nothing is sent.
    up.clear();
    let r = call(
        &c,
        "forms_put_blob",
        json!({"key": "k1", "body": "not base64!"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("base64"), "{}", text(&r));
    assert!(up.requests().is_empty());
}

// --------------------------------------------------------------------------------- responses

#[tokio::test]
async fn response_kinds_map_to_mcp_content() {
    let up = Upstream::start().await;
    let mp3: Vec<u8> = vec![0xff, 0xfb, 0x90, 0x00, 0x01, 0x02];
    let pdf: Vec<u8> = b"%PDF-1.7\n\xe2\xe3\xcf\xd3\n%%EOF".to_vec();
    let (mp3_, pdf_) = (mp3.clone(), pdf.clone());
    up.respond(move |r| match r.path() {
        "/api/pets/photo-1/photo" => Reply::raw(200, "image/png", PNG),
        "/api/notes/n1" => Reply::raw(200, "text/plain; charset=utf-8", "héllo\nworld"),
        "/api/blobs/song" => Reply::raw(200, "audio/mpeg", mp3_.clone()),
        "/api/blobs/doc" => Reply::raw(200, "application/pdf", pdf_.clone()),
        "/api/blobs/raw" => Reply::raw(200, "application/octet-stream", vec![0u8, 1, 2, 3]),
        "/api/blobs/gone" => Reply::empty(204),
        _ => Reply::empty(404),
    });
    let c = client("forms.yaml", &up, &[]).await;

    let r = call(&c, "forms_get_pet_photo", json!({"petId": "photo-1"})).await;
    assert_eq!(up.last().header("accept"), Some("image/png"));
    assert_eq!(
        wire(&r),
        json!({"content": [{"type": "image", "data": base64(PNG), "mimeType": "image/png"}], "isError": false})
    );

    let r = call(&c, "forms_get_plain_note", json!({"noteId": "n1"})).await;
    assert_eq!(
        wire(&r),
        json!({"content": [{"type": "text", "text": "héllo\nworld"}], "isError": false})
    );

    let r = call(&c, "forms_get_blob", json!({"key": "song"})).await;
    assert_eq!(
        wire(&r),
        json!({"content": [{"type": "audio", "data": base64(&mp3), "mimeType": "audio/mpeg"}], "isError": false})
    );

    for (key, mime, bytes) in [
        ("doc", "application/pdf", pdf.clone()),
        ("raw", "application/octet-stream", vec![0u8, 1, 2, 3]),
    ] {
        let r = call(&c, "forms_get_blob", json!({"key": key})).await;
        assert_eq!(
            wire(&r),
            json!({"content": [{"type": "resource", "resource": {
                "uri": format!("openapi-mcp://response/api/blobs/{key}"),
                "mimeType": mime,
                "blob": base64(&bytes)
            }}], "isError": false}),
            "{key}"
        );
    }

    let r = call(&c, "forms_delete_blob", json!({"key": "gone"})).await;
    assert_eq!(up.last().method, "DELETE");
    assert_eq!(
        wire(&r),
        json!({"content": [{"type": "text", "text": "HTTP 204 No Content: the request succeeded and returned no body."}], "isError": false})
    );
}

#[tokio::test]
async fn json_responses_and_api_errors() {
    let up = Upstream::start().await;
    up.respond(|r| match r.path() {
        // Deliberately odd formatting: the text block is the body as received.
        "/api/pets/7" => Reply::raw(
            200,
            "application/json; charset=utf-8",
            r#"{ "id":7,"name" : "Tom"}"#,
        ),
        "/api/pets" => Reply::raw(
            200,
            "application/json",
            "[{\"id\":1,\"name\":\"Rex\"},{\"id\":2,\"name\":\"Tom\"}]",
        ),
        "/api/pets/8" => Reply::json(404, json!({"code": 404, "message": "no such pet"})),
        _ => Reply::raw(500, "text/plain", "database on fire"),
    });
    let c = client("petstore.yaml", &up, &[]).await;

    let r = call(&c, "petstore_show_pet_by_id", json!({"petId": 7})).await;
    let req = up.last();
    assert_eq!(req.header("accept"), Some("application/json"));
    assert_eq!(
        req.header("user-agent"),
        Some(openapi_mcp_runtime::forward::default_user_agent().as_str())
    );
    // No body, no Content-Type.
    assert_eq!(req.header("content-type"), None);
    assert!(req.body.is_empty());
    assert_eq!(
        wire(&r),
        json!({
            // `--response compact` (the default) minifies; `full` keeps the body as sent
            // (e2e::responses).
            "content": [{"type": "text", "text": r#"{"id":7,"name":"Tom"}"#}],
            "structuredContent": {"id": 7, "name": "Tom"},
            "isError": false
        })
    );

    let r = call(&c, "petstore_list_pets", json!({})).await;
    assert_eq!(
        wire(&r),
        json!({
            "content": [{"type": "text", "text": "[{\"id\":1,\"name\":\"Rex\"},{\"id\":2,\"name\":\"Tom\"}]"}],
            "structuredContent": {"result": [{"id": 1, "name": "Rex"}, {"id": 2, "name": "Tom"}]},
            "isError": false
        })
    );

    let r = call(&c, "petstore_show_pet_by_id", json!({"petId": 8})).await;
    assert_eq!(
        wire(&r),
        json!({
            "content": [{"type": "text", "text": "HTTP 404 Not Found\n{\n  \"code\": 404,\n  \"message\": \"no such pet\"\n}"}],
            "isError": true
        })
    );

    let r = call(&c, "petstore_show_pet_by_id", json!({"petId": 9})).await;
    assert_eq!(
        wire(&r),
        json!({
            "content": [{"type": "text", "text": "HTTP 500 Internal Server Error\ndatabase on fire"}],
            "isError": true
        })
    );
}

#[tokio::test]
async fn oversized_bodies_are_cut_with_the_original_size() {
    let up = Upstream::start().await;
    up.respond(|r| match r.path() {
        "/api/notes/big" => Reply::raw(200, "text/plain", "x".repeat(100)),
        "/api/pets/1" => Reply::raw(
            200,
            "application/json",
            format!(r#"{{"id":1,"name":"{}"}}"#, "y".repeat(80)),
        ),
        "/api/blobs/big" => Reply::raw(200, "application/octet-stream", vec![7u8; 100]),
        _ => Reply::raw(200, "text/plain", "x".repeat(64)),
    });
    let forms = client_with(
        &spec("forms.yaml"),
        &up.url("/api"),
        |o| o.max_response_bytes = 64,
        &[],
    )
    .await;
    let r = call(&forms, "forms_get_plain_note", json!({"noteId": "big"})).await;
    assert_eq!(
        wire(&r),
        json!({"content": [{"type": "text", "text": format!("{}\n[response truncated: 64 of 100 bytes shown]", "x".repeat(64))}], "isError": false})
    );
    // Exactly at the limit: not truncated.
    let r = call(&forms, "forms_get_plain_note", json!({"noteId": "exact"})).await;
    assert_eq!(text(&r), "x".repeat(64));
    // Binary over the limit is not returned at all.
    let r = call(&forms, "forms_get_blob", json!({"key": "big"})).await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        text(&r),
        "HTTP 200 OK: the application/octet-stream response exceeded --max-response-bytes (64 bytes) and was not returned; raise the limit to receive it.\n[response truncated: 64 of 100 bytes shown]"
    );

    // JSON over the limit is cut at a member (or item) boundary and stays valid JSON, with the
    // structuredContent cut alike and a note saying what was cut (e2e::responses has arrays and
    // next pages).
    let pets = client_with(
        &spec("petstore.yaml"),
        &up.url("/api"),
        |o| o.max_response_bytes = 64,
        &[],
    )
    .await;
    let r = call(&pets, "petstore_show_pet_by_id", json!({"petId": 1})).await;
    assert_eq!(
        wire(&r),
        json!({
            "content": [
                {"type": "text", "text": "{\"id\":1}"},
                {"type": "text", "text": "[openapi-mcp: the result was over --max-response-bytes (64 bytes): 1 of 2 members shown, 1 cut (the JSON above is complete as shown). To see the rest, call again with a smaller page size or a `_select` expression that keeps fewer fields.]"}
            ],
            "structuredContent": {"id": 1},
            "isError": false
        })
    );
}

/// A raw TCP upstream that reads each request head and never answers; it counts requests seen
/// and connections the client closed.
struct Silent {
    addr: std::net::SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
    closed: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Silent {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let heads = Arc::new(Mutex::new(Vec::new()));
        let closed = Arc::new(AtomicUsize::new(0));
        let (h, c) = (heads.clone(), closed.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let (h, c) = (h.clone(), c.clone());
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut tmp = [0u8; 1024];
                    let mut head_seen = false;
                    loop {
                        match sock.read(&mut tmp).await {
                            Ok(0) | Err(_) => {
                                c.fetch_add(1, Ordering::SeqCst);
                                return;
                            }
                            Ok(n) => buf.extend_from_slice(&tmp[..n]),
                        }
                        if !head_seen && let Some(end) = find(&buf, b"\r\n\r\n") {
                            head_seen = true;
                            h.lock()
                                .expect("lock")
                                .push(String::from_utf8_lossy(&buf[..end]).into_owned());
                        }
                    }
                });
            }
        });
        Self {
            addr,
            heads,
            closed,
            task,
        }
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test]
async fn upstream_timeout_is_an_actionable_error() {
    let silent = Silent::start().await;
    let c = client_with(
        &spec("petstore.yaml"),
        &format!("http://{}/api", silent.addr),
        |o| o.timeout = Duration::from_millis(300),
        &[],
    )
    .await;
    let started = std::time::Instant::now();
    let r = call(&c, "petstore_show_pet_by_id", json!({"petId": 1})).await;
    let took = started.elapsed();
    assert_eq!(
        wire(&r),
        json!({"content": [{"type": "text", "text": "the API did not answer within 300 ms (timeout); the request may or may not have been applied"}], "isError": true})
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
    let heads = silent.heads.lock().expect("lock").clone();
    assert_eq!(heads.len(), 1);
    assert!(
        heads[0].starts_with("GET /api/pets/1 HTTP/1.1\r\n"),
        "{}",
        heads[0]
    );
    // The proxy gave up on the connection.
    for _ in 0..100 {
        if silent.closed.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(silent.closed.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn idempotent_calls_are_retried_and_posts_are_not() {
    let up = Upstream::start().await;
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    up.respond(move |r| {
        if r.method == "POST" {
            return Reply::json(503, json!({"error": "busy"}));
        }
        if h.fetch_add(1, Ordering::SeqCst) == 0 {
            Reply::json(503, json!({"error": "busy"}))
        } else {
            Reply::json(200, json!({"id": 3, "name": "Rex"}))
        }
    });
    let c = client_with(
        &spec("petstore.yaml"),
        &up.url("/api"),
        |o| o.retries = 2,
        &[],
    )
    .await;
    let r = call(&c, "petstore_show_pet_by_id", json!({"petId": 3})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(r.structured_content, Some(json!({"id": 3, "name": "Rex"})));
    let reqs = up.requests();
    assert_eq!(
        reqs.iter()
            .map(|r| (r.method.as_str(), r.target.as_str()))
            .collect::<Vec<_>>(),
        vec![("GET", "/api/pets/3"), ("GET", "/api/pets/3")]
    );

    up.clear();
    let r = call(&c, "petstore_create_pet", json!({"name": "Tom"})).await;
    assert_eq!(
        wire(&r),
        json!({"content": [{"type": "text", "text": "HTTP 503 Service Unavailable\n{\n  \"error\": \"busy\"\n}"}], "isError": true})
    );
    assert_eq!(up.requests().len(), 1, "a POST is never retried");
}

// ------------------------------------------------------------------------------- credentials

/// Where each credential landed on one request.
fn creds_seen(
    r: &Recorded,
) -> (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
) {
    let s = |v: Option<&str>| v.map(str::to_string);
    (
        s(r.header("authorization")),
        s(r.header("x-api-key")),
        s(r.query()),
        s(r.header("cookie")),
    )
}

#[tokio::test]
async fn api_keys_bearer_basic_and_public_operations() {
    let up = Upstream::start().await;
    // The API echoes every credential back in an error: the proxy must not show them.
    up.respond(|r| {
        if r.path() == "/api/status" {
            return Reply::json(200, json!({"ok": true}));
        }
        Reply::json(
            403,
            json!({"authorization": r.header("authorization"), "key": r.header("x-api-key"), "query": r.query(), "cookie": r.header("cookie")}),
        )
    });
    let env = [
        ("OPENAPI_MCP_BEARER_AUTH", "bearer-tok-123"),
        ("OPENAPI_MCP_QUERY_KEY", "qk s3cret&x"),
        ("OPENAPI_MCP_SESSION_COOKIE", "sess-s3cret"),
        ("OPENAPI_MCP_HEADER_KEY", "hk-s3cret\"q"),
        ("OPENAPI_MCP_BASIC_AUTH_USERNAME", "alice"),
        ("OPENAPI_MCP_BASIC_AUTH_PASSWORD", "pa:ss-s3cret"),
    ];
    let secrets = [
        "bearer-tok-123",
        "qk s3cret",
        "qk%20s3cret",
        "sess-s3cret",
        "hk-s3cret",
        "pa:ss-s3cret",
        "YWxpY2U6cGE6c3MtczNjcmV0",
    ];
    let c = client("security.yaml", &up, &env).await;
    let none = || (None, None, None, None);

    // security: [] — nothing, even though every credential is configured.
    let r = call(&c, "secured_get_status", json!({})).await;
    assert_eq!(r.structured_content, Some(json!({"ok": true})));
    assert_eq!(creds_seen(&up.last()), none());

    let mut results = Vec::new();
    let r = call(&c, "secured_get_current_user", json!({})).await;
    assert_eq!(
        creds_seen(&up.last()),
        (Some("Bearer bearer-tok-123".into()), None, None, None)
    );
    results.push(r);

    // query key AND cookie.
    let r = call(&c, "secured_export_report", json!({"reportId": "r1"})).await;
    let req = up.last();
    assert_eq!(req.path(), "/api/exports/r1");
    assert_eq!(
        creds_seen(&req),
        (
            None,
            None,
            Some("api_key=qk%20s3cret%26x".into()),
            Some("SESSIONID=sess-s3cret".into())
        )
    );
    results.push(r);

    // bearer OR basic OR header key: the first alternative with credentials.
    let r = call(&c, "secured_delete_report", json!({"reportId": "r1"})).await;
    assert_eq!(up.last().method, "DELETE");
    assert_eq!(
        creds_seen(&up.last()),
        (Some("Bearer bearer-tok-123".into()), None, None, None)
    );
    results.push(r);

    // Without a bearer token: basic; without basic either: the header key.
    let basic_env: Vec<_> = env
        .iter()
        .copied()
        .filter(|(k, _)| *k != "OPENAPI_MCP_BEARER_AUTH")
        .collect();
    let c = client("security.yaml", &up, &basic_env).await;
    let r = call(&c, "secured_delete_report", json!({"reportId": "r2"})).await;
    assert_eq!(
        creds_seen(&up.last()),
        (
            Some("Basic YWxpY2U6cGE6c3MtczNjcmV0".into()),
            None,
            None,
            None
        )
    );
    results.push(r);
    let key_env = [("OPENAPI_MCP_HEADER_KEY", "hk-s3cret\"q")];
    let c = client("security.yaml", &up, &key_env).await;
    let r = call(&c, "secured_delete_report", json!({"reportId": "r3"})).await;
    assert_eq!(
        creds_seen(&up.last()),
        (None, Some("hk-s3cret\"q".into()), None, None)
    );
    results.push(r);
    // No credential for bearer-only: sent without one (the API decides).
    let r = call(&c, "secured_get_current_user", json!({})).await;
    assert_eq!(creds_seen(&up.last()), none());
    results.push(r);

    for r in &results {
        assert_eq!(r.is_error, Some(true));
        let shown = serde_json::to_string(r).expect("json");
        assert!(
            shown.starts_with(r#"{"content":[{"type":"text","text":"HTTP 403 Forbidden\n"#),
            "{shown}"
        );
        for s in secrets {
            assert!(!shown.contains(s), "{s} leaked: {shown}");
        }
    }
    assert!(
        text(&results[0]).contains("\"authorization\": \"Bearer [redacted]\""),
        "{}",
        text(&results[0])
    );
    assert!(
        text(&results[3]).contains("\"authorization\": \"Basic [redacted]\""),
        "{}",
        text(&results[3])
    );
    assert!(
        text(&results[4]).contains("\"key\": \"[redacted]\""),
        "{}",
        text(&results[4])
    );

    // Transport errors never show the query string (it may carry a key).
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let c = client_with(
        &spec("security.yaml"),
        &format!("http://127.0.0.1:{port}/api"),
        |_| {},
        &env,
    )
    .await;
    let r = call(&c, "secured_export_report", json!({"reportId": "r1"})).await;
    assert_eq!(
        text(&r),
        format!(
            "could not connect to http://127.0.0.1:{port}: connection refused; is the API running and is --base-url right?"
        )
    );
}

#[tokio::test]
async fn oauth2_client_credentials_token_dance() {
    let up = Upstream::start().await;
    let tokens = Arc::new(AtomicUsize::new(0));
    // Which tokens the API accepts: `tok1` until revoked, then only `tok2`, then none.
    let revoked = Arc::new(AtomicUsize::new(0));
    let (t, rv) = (tokens.clone(), revoked.clone());
    up.respond(move |r| {
        if r.path() == "/oauth/token" {
            let n = t.fetch_add(1, Ordering::SeqCst) + 1;
            return Reply::json(
                200,
                json!({"access_token": format!("tok-{n}-s3cret"), "token_type": "Bearer", "expires_in": 3600}),
            );
        }
        if r.path() == "/api/health" {
            return Reply::json(200, json!({"ok": true}));
        }
        let auth = r.header("authorization").unwrap_or("");
        let ok = match rv.load(Ordering::SeqCst) {
            0 => auth == "Bearer tok-1-s3cret",
            1 => auth == "Bearer tok-2-s3cret",
            _ => false,
        };
        if ok {
            Reply::json(200, json!([{"id": 1}]))
        } else {
            Reply::json(401, json!({"error": "invalid_token", "got": auth}))
        }
    });
    let env = [
        ("OPENAPI_MCP_OAUTH_CLIENT_CLIENT_ID", "my client"),
        ("OPENAPI_MCP_OAUTH_CLIENT_CLIENT_SECRET", "cl1ent-s3cret"),
    ];
    let c = client("oauth-relative.yaml", &up, &env).await;
    let seen = |up: &Upstream| -> Vec<(String, String, Option<String>)> {
        up.requests()
            .iter()
            .map(|r| {
                (
                    r.method.clone(),
                    r.target.clone(),
                    r.header("authorization").map(str::to_string),
                )
            })
            .collect()
    };
    let tok = |n: u32| Some(format!("Bearer tok-{n}-s3cret"));

    // Public: no token is fetched, nothing is sent.
    let r = call(&c, "token_get_health", json!({})).await;
    assert_eq!(r.structured_content, Some(json!({"ok": true})));
    assert_eq!(seen(&up), vec![("GET".into(), "/api/health".into(), None)]);
    up.clear();

    // Two calls: one token request, the token is cached.
    for _ in 0..2 {
        let r = call(&c, "token_list_things", json!({})).await;
        assert_eq!(
            r.structured_content,
            Some(json!({"result": [{"id": 1}]})),
            "{}",
            text(&r)
        );
    }
    let reqs = up.requests();
    assert_eq!(
        seen(&up),
        vec![
            ("POST".into(), "/oauth/token".into(), None),
            ("GET".into(), "/api/things".into(), tok(1)),
            ("GET".into(), "/api/things".into(), tok(1)),
        ]
    );
    let token_req = &reqs[0];
    assert_eq!(
        token_req.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(token_req.header("accept"), Some("application/json"));
    assert_eq!(
        token_req.body_text(),
        "grant_type=client_credentials&client_id=my+client&client_secret=cl1ent-s3cret&scope=things%3Aread+things%3Awrite"
    );
    up.clear();

    // The API rejects the token: refreshed once and the call is repeated.
    revoked.store(1, Ordering::SeqCst);
    let r = call(&c, "token_list_things", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        seen(&up),
        vec![
            ("GET".into(), "/api/things".into(), tok(1)),
            ("POST".into(), "/oauth/token".into(), None),
            ("GET".into(), "/api/things".into(), tok(2)),
        ]
    );
    up.clear();

    // Still rejected after the refresh: one refresh only, then the 401 is the result, with no
    // token or client secret in it.
    revoked.store(2, Ordering::SeqCst);
    let r = call(&c, "token_list_things", json!({})).await;
    assert_eq!(
        seen(&up),
        vec![
            ("GET".into(), "/api/things".into(), tok(2)),
            ("POST".into(), "/oauth/token".into(), None),
            ("GET".into(), "/api/things".into(), tok(3)),
        ]
    );
    assert_eq!(
        wire(&r),
        json!({"content": [{"type": "text", "text": "HTTP 401 Unauthorized\n{\n  \"error\": \"invalid_token\",\n  \"got\": \"Bearer [redacted]\"\n}"}], "isError": true})
    );
    assert_eq!(tokens.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn oauth2_token_endpoint_failure_names_the_scheme_not_the_secret() {
    let up = Upstream::start().await;
    let called = Arc::new(AtomicBool::new(false));
    let cl = called.clone();
    up.respond(move |r| {
        if r.path() == "/oauth/token" {
            return Reply::json(
                401,
                json!({"error": "invalid_client", "echo": r.body_text()}),
            );
        }
        cl.store(true, Ordering::SeqCst);
        Reply::json(200, json!([]))
    });
    let env = [
        ("OPENAPI_MCP_OAUTH_CLIENT_CLIENT_ID", "my-client"),
        ("OPENAPI_MCP_OAUTH_CLIENT_CLIENT_SECRET", "cl1ent s3cret/+"),
    ];
    let c = client("oauth-relative.yaml", &up, &env).await;
    let r = call(&c, "token_list_things", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    // The endpoint echoed the form body: the secret is scrubbed in its encoded form too.
    assert_eq!(
        t,
        format!(
            "could not obtain an OAuth2 access token for security scheme `oauth_client`: the token endpoint {} answered HTTP 401 Unauthorized\n{}",
            up.url("/oauth/token"),
            r#"{"error":"invalid_client","echo":"grant_type=client_credentials&client_id=my-client&client_secret=[redacted]&scope=things%3Aread+things%3Awrite"}"#
        )
    );
    assert!(!t.contains("s3cret"), "{t}");
    assert!(
        !called.load(Ordering::SeqCst),
        "the API is not called without a token"
    );
}

#[tokio::test]
async fn oauth2_short_lived_tokens_are_still_sent() {
    let up = Upstream::start().await;
    up.respond(|r| {
        if r.path() == "/oauth/token" {
            return Reply::json(
                200,
                json!({"access_token": "short-tok", "token_type": "Bearer", "expires_in": 20}),
            );
        }
        match r.header("authorization") {
            Some("Bearer short-tok") => Reply::json(200, json!([{"id": 1}])),
            _ => Reply::json(401, json!({"error": "no token"})),
        }
    });
    let env = [
        ("OPENAPI_MCP_OAUTH_CLIENT_CLIENT_ID", "my-client"),
        ("OPENAPI_MCP_OAUTH_CLIENT_CLIENT_SECRET", "cl1ent-s3cret"),
    ];
    let c = client("oauth-relative.yaml", &up, &env).await;
    // A 20 s token (shorter than the 30 s refresh margin) is sent, and cached for a while.
    for _ in 0..2 {
        let r = call(&c, "token_list_things", json!({})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
    }
    let tok = Some("Bearer short-tok".to_string());
    let seen: Vec<(String, Option<String>)> = up
        .requests()
        .iter()
        .map(|r| {
            (
                r.target.clone(),
                r.header("authorization").map(str::to_string),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            ("/oauth/token".to_string(), None),
            ("/api/things".to_string(), tok.clone()),
            ("/api/things".to_string(), tok),
        ]
    );
}
