//! Hardening: hostile tool arguments, faulty upstreams, hostile MCP clients and secrets in logs.
//!
//! Every case is table-driven and asserts one exact outcome: the exact request target the
//! recording upstream saw (always on the upstream's host, always under the `/api/v1` prefix of
//! the base URL), or the exact error text naming the argument with nothing sent at all.
//! Each test prints how many cases it tried (`hostile cases: <category>/<test>: N`).

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openapi_mcp_convert::{SpecSource, ToolOptions, convert, load};
use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, Forwarder};
use openapi_mcp_runtime::http::transport::{HttpOptions, start_http};
use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::model::CallToolResult;
use openapi_mcp_runtime::rmcp::transport::StreamableHttpClientTransport;
use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
use openapi_mcp_runtime::validate::{LazyValidator, check};
use openapi_mcp_tests::harness::{
    Client, binary, call, connect_in_process, server_for, spec, text, tool_set,
};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

// ------------------------------------------------------------------------------------ helpers

fn report(category: &str, test: &str, n: usize) {
    eprintln!("hostile cases: {category}/{test}: {n}");
}

/// The proxy for `spec_path` at `base` (forward options tweaked by `tweak`), in-process.
async fn client_with(
    spec_path: &Path,
    base: &str,
    tweak: impl FnOnce(&mut ForwardOptions),
) -> Client {
    connect_in_process(server_with(spec_path, base, tweak).await).await
}

async fn server_with(
    spec_path: &Path,
    base: &str,
    tweak: impl FnOnce(&mut ForwardOptions),
) -> ProxyServer {
    let set = tool_set(spec_path, &ToolOptions::default()).await;
    server_for(
        set,
        base,
        Credentials::new(),
        tweak,
        ServerOptions::default(),
    )
}

/// The hostile fixture behind a base URL with a path prefix.
async fn hostile_client(up: &Upstream) -> Client {
    client_with(&spec("hostile.yaml"), &up.url("/api/v1"), |_| {}).await
}

fn wire(r: &CallToolResult) -> Value {
    serde_json::to_value(r).expect("result serializes")
}

/// `[[[...1...]]]`, `n` levels, built without recursion.
fn deep_array(n: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..n {
        v = Value::Array(vec![v]);
    }
    v
}

/// `{"a":{"a":...1...}}`, `n` levels.
fn deep_object(n: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..n {
        let mut m = Map::new();
        m.insert("a".into(), v);
        v = Value::Object(m);
    }
    v
}

/// The same nesting as JSON text, without building a value.
fn deep_text(n: usize) -> String {
    format!("{}1{}", "[".repeat(n), "]".repeat(n))
}

/// Drops a deeply nested value without recursion.
fn drop_deep(v: Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => stack.extend(o.into_iter().map(|(_, x)| x)),
            _ => {}
        }
    }
}

fn short(s: &str) -> String {
    if s.len() <= 160 {
        s.to_string()
    } else {
        let cut: String = s.chars().take(160).collect();
        format!("{cut}… ({} bytes)", s.len())
    }
}

/// What one call must do.
enum Want {
    /// Exactly this request target was sent (and nothing else).
    Sent(String),
    /// Sent with this target, and header `name` had exactly these bytes.
    SentHeader(String, &'static str, Vec<u8>),
    /// An `isError` result with exactly this text; nothing sent.
    Refused(String),
}

fn sent(t: &str) -> Want {
    Want::Sent(t.to_string())
}

fn dot(arg: &str, loc: &str, seg: &str) -> Want {
    Want::Refused(format!(
        "invalid arguments: argument `{arg}` ({loc} `{arg}`): makes the path segment `{seg}`, a dot segment that URL resolution would remove (path traversal); refused"
    ))
}

fn empty(arg: &str) -> Want {
    Want::Refused(format!(
        "invalid arguments: argument `{arg}` (path `{arg}`): is empty; an empty path segment would address a different resource"
    ))
}

fn invalid(tool: &str, problems: &[&str]) -> Want {
    Want::Refused(format!(
        "Invalid arguments for `{tool}`; nothing was sent to the API. Fix these and call again:\n- {}",
        problems.join("\n- ")
    ))
}

/// Runs every case against `up`; returns how many ran.
async fn run_cases(c: &Client, up: &Upstream, cases: Vec<(&str, Value, Want)>) -> usize {
    let n = cases.len();
    let host = up.addr.to_string();
    for (tool, args, want) in cases {
        let label = format!("{tool} {}", short(&args.to_string()));
        up.clear();
        let r = call(c, tool, args).await;
        let reqs = up.requests();
        match want {
            Want::Sent(target) | Want::SentHeader(target, _, _) if r.is_error != Some(false) => {
                panic!(
                    "{label}: expected {} to be sent, got error {}",
                    short(&target),
                    short(&text(&r))
                )
            }
            Want::Sent(target) => {
                assert_eq!(reqs.len(), 1, "{label}");
                assert_eq!(reqs[0].target, target, "{label}");
                assert_eq!(reqs[0].header("host"), Some(host.as_str()), "{label}");
                assert!(target.starts_with("/api/v1/"), "{label}");
            }
            Want::SentHeader(target, name, value) => {
                assert_eq!(reqs.len(), 1, "{label}");
                assert_eq!(reqs[0].target, target, "{label}");
                assert_eq!(
                    reqs[0].headers.get(name).map(|v| v.as_bytes().to_vec()),
                    Some(value),
                    "{label}"
                );
            }
            Want::Refused(msg) => {
                assert_eq!(r.is_error, Some(true), "{label}: {}", short(&text(&r)));
                assert_eq!(text(&r), msg, "{label}");
                assert!(reqs.is_empty(), "{label}: nothing may be sent");
            }
        }
    }
    n
}

// ------------------------------------------------------------------------ hostile arguments

#[tokio::test]
async fn hostile_path_arguments_stay_in_their_segment_under_the_base_path() {
    let up = Upstream::start().await;
    let c = hostile_client(&up).await;
    let file = |dir: &str| json!({"dir": dir, "name": "n"});
    let f = "hostile_get_file";
    let mut cases: Vec<(&str, Value, Want)> = vec![
        (f, file("../"), sent("/api/v1/files/..%2F/n")),
        (f, file(".."), dot("dir", "path", "..")),
        (f, file("."), dot("dir", "path", ".")),
        (f, file(""), empty("dir")),
        (f, file("..\\"), sent("/api/v1/files/..%5C/n")),
        (
            f,
            file("../../../../etc/passwd"),
            sent("/api/v1/files/..%2F..%2F..%2F..%2Fetc%2Fpasswd/n"),
        ),
        (f, file("%2e%2e"), sent("/api/v1/files/%252e%252e/n")),
        (f, file(".%2E"), sent("/api/v1/files/.%252E/n")),
        (
            f,
            file("%2e%2e%2f"),
            sent("/api/v1/files/%252e%252e%252f/n"),
        ),
        (f, file("%2F"), sent("/api/v1/files/%252F/n")),
        (f, file("?"), sent("/api/v1/files/%3F/n")),
        (f, file("?admin=1"), sent("/api/v1/files/%3Fadmin%3D1/n")),
        (f, file("#"), sent("/api/v1/files/%23/n")),
        (f, file("&"), sent("/api/v1/files/%26/n")),
        (f, file("="), sent("/api/v1/files/%3D/n")),
        (
            f,
            file("http://evil.example/x"),
            sent("/api/v1/files/http%3A%2F%2Fevil.example%2Fx/n"),
        ),
        (
            f,
            file("//evil.example"),
            sent("/api/v1/files/%2F%2Fevil.example/n"),
        ),
        (
            f,
            file("@evil.example"),
            sent("/api/v1/files/%40evil.example/n"),
        ),
        (f, file("a b"), sent("/api/v1/files/a%20b/n")),
        (f, file(";x=1"), sent("/api/v1/files/%3Bx%3D1/n")),
        (f, file("\r\n"), sent("/api/v1/files/%0D%0A/n")),
        (f, file("\0"), sent("/api/v1/files/%00/n")),
        (f, file("é"), sent("/api/v1/files/%C3%A9/n")),
        (f, file("..."), sent("/api/v1/files/.../n")),
        (f, file("~"), sent("/api/v1/files/~/n")),
        (f, file("{name}"), sent("/api/v1/files/%7Bname%7D/n")),
        // The second parameter too.
        (
            f,
            json!({"dir": "d", "name": ".."}),
            dot("name", "path", ".."),
        ),
        (
            f,
            json!({"dir": "d", "name": "../../x"}),
            sent("/api/v1/files/d/..%2F..%2Fx"),
        ),
        // A parameter sharing its segment with literal text: `..` + `.json` is no dot segment.
        (
            "hostile_get_doc",
            json!({"docId": ".."}),
            sent("/api/v1/docs/...json"),
        ),
        (
            "hostile_get_doc",
            json!({"docId": ""}),
            sent("/api/v1/docs/.json"),
        ),
        (
            "hostile_get_doc",
            json!({"docId": "../x"}),
            sent("/api/v1/docs/..%2Fx.json"),
        ),
        (
            "hostile_get_doc",
            json!({"docId": "?"}),
            sent("/api/v1/docs/%3F.json"),
        ),
        // Label style: the leading `.` makes `""` and `"."` dot segments.
        ("hostile_get_label", json!({"v": ""}), dot("v", "path", ".")),
        (
            "hostile_get_label",
            json!({"v": "."}),
            dot("v", "path", ".."),
        ),
        (
            "hostile_get_label",
            json!({"v": ".."}),
            sent("/api/v1/label/..."),
        ),
        (
            "hostile_get_label",
            json!({"v": "/x"}),
            sent("/api/v1/label/.%2Fx"),
        ),
        (
            "hostile_get_label",
            json!({"v": "a.b"}),
            sent("/api/v1/label/.a.b"),
        ),
        // Matrix style.
        (
            "hostile_get_matrix",
            json!({"v": ".."}),
            sent("/api/v1/matrix/;v=.."),
        ),
        (
            "hostile_get_matrix",
            json!({"v": ""}),
            sent("/api/v1/matrix/;v="),
        ),
        (
            "hostile_get_matrix",
            json!({"v": "/../x"}),
            sent("/api/v1/matrix/;v=%2F..%2Fx"),
        ),
        (
            "hostile_get_matrix",
            json!({"v": "?"}),
            sent("/api/v1/matrix/;v=%3F"),
        ),
    ];
    // Same values through the other string path parameter of an object-response tool.
    for (v, seg) in [
        ("../", "..%2F"),
        ("//evil.example", "%2F%2Fevil.example"),
        ("http://evil.example/x", "http%3A%2F%2Fevil.example%2Fx"),
    ] {
        up.respond(|_| Reply::json(200, json!({"id": "x"})));
        cases.push((
            "hostile_get_object",
            json!({ "key": v }),
            Want::Sent(format!("/api/v1/objects/{seg}")),
        ));
    }
    let n = run_cases(&c, &up, cases).await;
    report("arguments", "path", n);
}

#[tokio::test]
async fn hostile_query_header_and_cookie_values_are_encoded_or_refused() {
    let up = Upstream::start().await;
    let c = hostile_client(&up).await;
    let f = "hostile_get_file";
    let with = |k: &str, v: &str| {
        let mut m = json!({"dir": "d", "name": "n"});
        m[k] = json!(v);
        m
    };
    let q = |v: &str, query: &str| {
        (
            f,
            with("q", v),
            Want::Sent(format!("/api/v1/files/d/n?q={query}")),
        )
    };
    let next = |v: &str, query: &str| {
        (
            f,
            with("next", v),
            Want::Sent(format!("/api/v1/files/d/n?next={query}")),
        )
    };
    let header_refused = || {
        Want::Refused(
            "invalid arguments: argument `X-Note` (header `X-Note`): contains a control character (CR, LF, ...), which is not allowed in an HTTP header".into(),
        )
    };
    let cookie_refused = || {
        Want::Refused(
            "invalid arguments: argument `session` (cookie `session`): contains CR or LF, which is not allowed in a cookie".into(),
        )
    };
    let header = |v: &str| {
        (
            f,
            with("X-Note", v),
            Want::SentHeader("/api/v1/files/d/n".into(), "x-note", v.as_bytes().to_vec()),
        )
    };
    let cookie = |v: &str, sent: &str| {
        (
            f,
            with("session", v),
            Want::SentHeader(
                "/api/v1/files/d/n".into(),
                "cookie",
                sent.as_bytes().to_vec(),
            ),
        )
    };
    let cases = vec![
        q("../", "..%2F"),
        q("?", "%3F"),
        q("#", "%23"),
        q("&", "%26"),
        q("=", "%3D"),
        q("&admin=true", "%26admin%3Dtrue"),
        q("http://evil.example/x", "http%3A%2F%2Fevil.example%2Fx"),
        q("//evil.example", "%2F%2Fevil.example"),
        q("%2F", "%252F"),
        q("a+b c", "a%2Bb%20c"),
        q("\r\n", "%0D%0A"),
        q("\0", "%00"),
        // No `allowEmptyValue`: an empty value is not sent.
        (f, with("q", ""), sent("/api/v1/files/d/n")),
        q("é", "%C3%A9"),
        // allowReserved: RFC 3986 reserved characters pass, but never the ones that would end
        // the query (`#`) or split it into new parameters (`&`, `=`, `+`), nor `[` `]`.
        next("/a?b", "/a?b"),
        next("x&admin=true", "x%26admin%3Dtrue"),
        next("a+b", "a%2Bb"),
        next("#frag", "%23frag"),
        next("[x]", "%5Bx%5D"),
        next("%2F", "%2F"),
        next("%zz", "%25zz"),
        next("http://evil.example/x?y=1", "http://evil.example/x?y%3D1"),
        next(" ", "%20"),
        next("\r\n", "%0D%0A"),
        // Header values: raw, but no control characters but TAB.
        (f, with("X-Note", "a\r\nX-Injected: 1"), header_refused()),
        (f, with("X-Note", "a\nb"), header_refused()),
        (f, with("X-Note", "a\rb"), header_refused()),
        (f, with("X-Note", "a\0b"), header_refused()),
        (f, with("X-Note", "\u{7f}"), header_refused()),
        header("a\tb"),
        header("é"),
        header("../x"),
        header("http://evil.example/x"),
        // Cookie values: CR/LF refused, delimiters and controls percent-encoded.
        (f, with("session", "a\r\nb"), cookie_refused()),
        (f, with("session", "a\nb"), cookie_refused()),
        (f, with("session", "a\rb"), cookie_refused()),
        cookie("a\0b", "session=a%00b"),
        cookie("a; admin=1", "session=a%3B%20admin=1"),
        cookie("x,y", "session=x%2Cy"),
        cookie("\"q\"", "session=%22q%22"),
        cookie("é", "session=%C3%A9"),
        cookie("a\tb", "session=a%09b"),
    ];
    let n = run_cases(&c, &up, cases).await;
    report("arguments", "query-header-cookie", n);
}

#[tokio::test]
async fn unknown_arguments_wrong_types_huge_numbers_and_huge_strings() {
    let up = Upstream::start().await;
    let c = hostile_client(&up).await;
    let f = "hostile_get_file";
    let count = "hostile_get_count";
    let thing = "hostile_create_thing";
    let mb = "x".repeat(1 << 20);
    let mb_preview = format!("\"{}…\" (1048576 characters)", "x".repeat(79));
    let big_int: Value =
        serde_json::from_str(r#"{"n": 18446744073709551616}"#).expect("u64::MAX + 1");
    let huge_url =
        |prefix: &str, suffix: &str| format!("http://{}{prefix}{mb}{suffix}", up.addr).len();
    let path_len = huge_url("/api/v1/files/", "/n");
    let query_len = huge_url("/api/v1/files/d/n?q=", "");
    let mut cases: Vec<(&str, Value, Want)> = vec![
        (
            f,
            json!({"dir": "d", "name": "n", "zzz": 1, "dri": 2}),
            invalid(
                f,
                &[
                    "unknown argument `zzz`: valid arguments: dir, name, q, next, X-Note, session.",
                    "unknown argument `dri`: did you mean `dir`?",
                ],
            ),
        ),
        (
            f,
            json!({"dir": 5, "name": ["a"]}),
            invalid(
                f,
                &[
                    "`dir`: 5 is not of type \"string\"",
                    "`name`: [\"a\"] is not of type \"string\"",
                ],
            ),
        ),
        (
            f,
            json!({"dir": null, "name": {"a": 1}}),
            invalid(
                f,
                &[
                    "`dir`: null is not of type \"string\"",
                    "`name`: {\"a\":1} is not of type \"string\"",
                ],
            ),
        ),
        (
            f,
            json!({}),
            invalid(
                f,
                &[
                    "arguments: \"dir\" is a required property",
                    "arguments: \"name\" is a required property",
                ],
            ),
        ),
        (
            count,
            json!({"n": "7"}),
            invalid(count, &["`n`: \"7\" is not of type \"integer\""]),
        ),
        (
            count,
            json!({"n": 1.5}),
            invalid(count, &["`n`: 1.5 is not of type \"integer\""]),
        ),
        // Integers JSON parsing cannot keep exactly are refused, not sent as `1e+308`.
        (
            count,
            json!({"n": 1e308}),
            invalid(
                count,
                &[
                    "`n`: 1e+308 is outside the 64-bit integer range; JSON parsing already rounded it, so it cannot be sent exactly",
                ],
            ),
        ),
        (
            count,
            big_int,
            invalid(
                count,
                &[
                    "`n`: 1.8446744073709552e+19 is outside the 64-bit integer range; JSON parsing already rounded it, so it cannot be sent exactly",
                ],
            ),
        ),
        (
            thing,
            json!({"name": "n", "count": -1e300}),
            invalid(
                thing,
                &[
                    "`count`: -1e+300 is outside the 64-bit integer range; JSON parsing already rounded it, so it cannot be sent exactly",
                ],
            ),
        ),
        // JSON Schema's `integer` includes `5.0`.
        (count, json!({"n": 5.0}), sent("/api/v1/counts/5")),
        // The extremes of the 64-bit range are exact.
        (
            count,
            json!({"n": u64::MAX}),
            sent("/api/v1/counts/18446744073709551615"),
        ),
        (
            count,
            json!({"n": i64::MIN}),
            sent("/api/v1/counts/-9223372036854775808"),
        ),
        // `number` parameters take any JSON number, in JSON's spelling.
        (
            count,
            json!({"n": 1, "ratio": 1e308}),
            sent("/api/v1/counts/1?ratio=1e%2B308"),
        ),
        (
            count,
            json!({"n": 1, "ratio": -5e-324}),
            sent("/api/v1/counts/1?ratio=-5e-324"),
        ),
        // 1 MB strings: a URL cannot hold them (refused, naming the argument); a header is the
        // API's call (axum answers 431); a body carries them.
        (
            f,
            json!({"dir": mb, "name": "n"}),
            Want::Refused(format!(
                "invalid arguments: argument `dir` (path `dir`): makes the request URL {path_len} bytes long, more than the 65534 bytes an HTTP request target can hold; refused"
            )),
        ),
        (
            f,
            json!({"dir": "d", "name": "n", "q": mb}),
            Want::Refused(format!(
                "invalid arguments: argument `q` (query `q`): makes the request URL {query_len} bytes long, more than the 65534 bytes an HTTP request target can hold; refused"
            )),
        ),
        (
            f,
            json!({"dir": "d", "name": "n", "q": "y".repeat(60_000)}),
            Want::Sent(format!("/api/v1/files/d/n?q={}", "y".repeat(60_000))),
        ),
        // Validation errors show a value cut short, not the megabyte.
        (
            count,
            json!({"n": mb}),
            invalid(
                count,
                &[&format!("`n`: {mb_preview} is not of type \"integer\"")],
            ),
        ),
        (
            f,
            json!({"dir": "d", "name": "n", mb.clone(): 1}),
            invalid(
                f,
                &[&format!(
                    "unknown argument `{}…`: valid arguments: dir, name, q, next, X-Note, session.",
                    "x".repeat(64)
                )],
            ),
        ),
    ];
    // A JSON value nested 120 levels (as deep as JSON-RPC parsers let it arrive) is sent intact.
    cases.push((
        thing,
        json!({"name": "n", "payload": deep_array(120)}),
        sent("/api/v1/things"),
    ));
    let n = run_cases(&c, &up, cases).await;
    assert_eq!(
        up.last().body_json(),
        json!({"name": "n", "payload": deep_array(120)})
    );

    // A 1 MB header reaches the API, which refuses it.
    up.clear();
    let r = call(&c, f, json!({"dir": "d", "name": "n", "X-Note": mb})).await;
    assert_eq!(
        wire(&r),
        json!({"content": [{"type": "text", "text": "HTTP 431 Request Header Fields Too Large"}], "isError": true})
    );
    // A 1 MB body field arrives byte for byte.
    let r = call(&c, thing, json!({"name": mb, "ratio": 1e308})).await;
    assert_eq!(r.is_error, Some(false), "{}", short(&text(&r)));
    let got = up.last();
    assert_eq!(
        (got.method.as_str(), got.target.as_str()),
        ("POST", "/api/v1/things")
    );
    let body = got.body_text();
    let want = format!("{{\"name\":\"{mb}\",\"ratio\":1e+308}}");
    assert!(
        body == want,
        "body: {} … {}",
        short(&body),
        &body[body.len().saturating_sub(40)..]
    );
    report("arguments", "types-numbers-sizes", n + 2);
}

/// Values nested 10,000 deep, given straight to the library (no JSON-RPC parser in front to
/// stop them), on a thread with a tokio worker's 2 MiB stack: validation, request building and
/// the forwarder's error messages must refuse them without recursing.
#[test]
fn values_nested_10000_deep_are_refused_without_recursion() {
    let run =
        || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
            let up = Upstream::start().await;
            let loaded = load(&SpecSource::Path(spec("hostile.yaml")))
                .await
                .expect("spec");
            let set = convert(&loaded, &ToolOptions::default()).tools;
            let fwd = Forwarder::new(
                ForwardOptions::new(url::Url::parse(&up.url("/api/v1")).expect("url")),
                vec![],
                Credentials::new(),
            )
            .expect("forwarder");
            let mut n = 0;
            for (tool, arg, loc, deep) in [
                ("hostile_create_thing", "payload", "body", deep_array(10_000)),
                ("hostile_create_thing", "payload", "body", deep_object(10_000)),
                ("hostile_create_thing", "name", "body", deep_array(10_000)),
                ("hostile_get_file", "q", "query", deep_array(10_000)),
                ("hostile_get_file", "dir", "path", deep_object(10_000)),
                ("hostile_get_file", "X-Note", "header", deep_array(10_000)),
                ("hostile_get_file", "session", "cookie", deep_object(10_000)),
            ] {
                n += 1;
                let def = set.find(tool).expect("tool");
                let mut args = Map::new();
                for (k, v) in [("name", "n"), ("dir", "d")] {
                    args.insert(k.into(), json!(v));
                }
                args.insert(arg.into(), deep);
                // Validation: one line naming the argument, nothing else looked at.
                let problems = check(&LazyValidator::default(), &def.tool().input_schema, &args)
                    .expect_err("too deep");
                assert_eq!(
                    problems,
                    vec![format!(
                        "`{arg}`: the value is nested more than 128 levels deep; refused"
                    )]
                );
                // Request building (what a generated crate calls without validation).
                let e = fwd
                    .build_request(&def.route, &args)
                    .expect_err("too deep");
                assert_eq!(e.arg.as_deref(), Some(arg));
                let msg = format!(
                    "argument `{arg}` ({loc} `{arg}`): is nested more than 128 levels deep; refused"
                );
                assert_eq!(e.message, msg);
                // The forwarder's whole call: an error result, nothing sent.
                let r = fwd.call(&def.route, &args).await;
                assert_eq!(r.is_error, Some(true));
                assert_eq!(text(&r), format!("invalid arguments: {msg}"));
                assert!(up.requests().is_empty());
                drop_deep(Value::Object(args));
            }
            n
        })
        };
    let n = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(run)
        .expect("thread")
        .join()
        .expect("no panic (a stack overflow would abort the process)");
    report("arguments", "deep-library", n);
}

// --------------------------------------------------------------------------- faulty upstreams

type RawHandler = Arc<
    dyn Fn(String, TcpStream) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
        + Send
        + Sync,
>;

/// A raw TCP upstream: each connection's request head is read and recorded, then `handler` gets
/// the head and the socket and may misbehave freely.
struct Raw {
    addr: std::net::SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Raw {
    async fn start(handler: RawHandler) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let heads = Arc::new(Mutex::new(Vec::new()));
        let h = heads.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let (h, handler) = (h.clone(), handler.clone());
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut tmp = [0u8; 4096];
                    loop {
                        match sock.read(&mut tmp).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&tmp[..n]),
                        }
                        if buf.windows(4).any(|w| w == b"\r\n\r\n") {
                            break;
                        }
                    }
                    let head = String::from_utf8_lossy(&buf).into_owned();
                    h.lock().expect("lock").push(head.clone());
                    handler(head, sock).await;
                });
            }
        });
        Self { addr, heads, task }
    }

    fn base(&self) -> String {
        format!("http://{}/api/v1", self.addr)
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("lock").clone()
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn handler<F>(f: impl Fn(String, TcpStream) -> F + Send + Sync + 'static) -> RawHandler
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    Arc::new(move |head, sock| Box::pin(f(head, sock)))
}

#[tokio::test]
async fn connection_reset_garbage_and_early_close_mid_body() {
    let mut n = 0;
    // (what the upstream does, the result text up to the OS's wording)
    let cases: Vec<(&str, RawHandler, &str)> = vec![
        (
            "reset mid-body",
            handler(|_, mut sock: TcpStream| async move {
                let _ = sock
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"partial\":")
                    .await;
                let _ = sock.flush().await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                let _ = sock.set_zero_linger();
                drop(sock);
            }),
            "HTTP 200: reading the response failed: the request to {origin} failed: error decoding response body: request or response body error: error reading a body from connection: Connection reset by peer",
        ),
        (
            "closed mid-body",
            handler(|_, mut sock: TcpStream| async move {
                let _ = sock
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"partial\":")
                    .await;
                let _ = sock.shutdown().await;
            }),
            "HTTP 200: reading the response failed: the request to {origin} failed: error decoding response body: request or response body error: error reading a body from connection: end of file before message length reached",
        ),
        (
            "reset before answering",
            handler(|_, sock: TcpStream| async move {
                let _ = sock.set_zero_linger();
                drop(sock);
            }),
            "the request to {origin} failed: error sending request: client error (SendRequest): connection error: Connection reset by peer",
        ),
        (
            "not HTTP at all",
            handler(|_, mut sock: TcpStream| async move {
                let _ = sock.write_all(b"SSH-2.0-OpenSSH_9.6\r\n\r\n").await;
                let _ = sock.shutdown().await;
            }),
            "the request to {origin} failed: error sending request: client error (SendRequest): invalid HTTP version parsed",
        ),
    ];
    for (what, h, want) in cases {
        n += 1;
        let raw = Raw::start(h).await;
        let c = client_with(&spec("hostile.yaml"), &raw.base(), |_| {}).await;
        let r = call(&c, "hostile_get_file", json!({"dir": "d", "name": "n"})).await;
        let want = want.replace("{origin}", &format!("http://{}", raw.addr));
        // Exact up to the OS's wording of the error (` (os error 104)` on Linux).
        assert_eq!(r.is_error, Some(true), "{what}");
        assert!(r.structured_content.is_none(), "{what}");
        assert_eq!(r.content.len(), 1, "{what}");
        let t = text(&r);
        assert!(t.starts_with(&want), "{what}: {t}");
        assert!(t.len() <= want.len() + 16, "{what}: {t}");
        let heads = raw.heads();
        assert_eq!(heads.len(), 1, "{what}: sent once, not retried");
        assert!(
            heads[0].starts_with("GET /api/v1/files/d/n HTTP/1.1\r\n"),
            "{what}"
        );
    }
    report("upstream", "reset-garbage-close", n);
}

#[tokio::test]
async fn invalid_json_and_wrong_content_types() {
    let up = Upstream::start().await;
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00";
    up.respond(move |r| match r.path() {
        "/api/v1/files/json/bad" | "/api/v1/objects/bad" => {
            Reply::raw(200, "application/json", "{not json")
        }
        "/api/v1/files/json/err" => Reply::raw(500, "application/json", "{not json"),
        "/api/v1/files/json/binary" => {
            Reply::raw(200, "application/json", vec![0xffu8, 0xfe, b'{'])
        }
        "/api/v1/objects/html" => Reply::raw(200, "text/html", "<html>hi</html>"),
        "/api/v1/objects/png" => Reply::raw(200, "image/png", PNG),
        "/api/v1/objects/plain" => Reply::raw(200, "text/plain", r#"{"id":"7"}"#),
        "/api/v1/objects/array" => Reply::json(200, json!(["id"])),
        "/api/v1/objects/none" => Reply {
            status: 200,
            content_type: None,
            body: br#"{"id":"8"}"#.to_vec(),
            headers: vec![],
        },
        "/api/v1/files/html/ok" => Reply::raw(200, "text/html", "<b>hi</b>"),
        _ => Reply::empty(404),
    });
    let c = hostile_client(&up).await;
    let file = |dir: &str, name: &str| json!({"dir": dir, "name": name});
    let obj = |k: &str| json!({ "key": k });
    let cases: Vec<(&str, Value, Value)> = vec![
        // Invalid JSON labelled JSON: returned as text when the tool has no output schema (the
        // status says it worked), an error when structured content was promised.
        (
            "hostile_get_file",
            file("json", "bad"),
            json!({"content": [{"type": "text", "text": "{not json"}], "isError": false}),
        ),
        (
            "hostile_get_object",
            obj("bad"),
            json!({"content": [{"type": "text", "text": "HTTP 200 OK: the API's answer is labelled application/json but is not valid JSON (key must be a string at line 1 column 2), so it cannot match the tool's output schema. Body:\n{not json"}], "isError": true}),
        ),
        (
            "hostile_get_file",
            file("json", "err"),
            json!({"content": [{"type": "text", "text": "HTTP 500 Internal Server Error\n{not json"}], "isError": true}),
        ),
        (
            "hostile_get_file",
            file("json", "binary"),
            json!({"content": [{"type": "text", "text": "\u{fffd}\u{fffd}{"}], "isError": false}),
        ),
        // Wrong content types.
        (
            "hostile_get_object",
            obj("html"),
            json!({"content": [{"type": "text", "text": "HTTP 200 OK: the API answered with text/html where the API description promised JSON, so the result cannot match the tool's output schema. Body:\n<html>hi</html>"}], "isError": true}),
        ),
        (
            "hostile_get_object",
            obj("png"),
            json!({"content": [
                {"type": "text", "text": "HTTP 200 OK: the API answered with image/png where the API description promised JSON, so the result cannot match the tool's output schema."},
                {"type": "image", "data": "iVBORw0KGgoAAA==", "mimeType": "image/png"}
            ], "isError": true}),
        ),
        // JSON labelled text/plain, or not labelled at all, still parses.
        (
            "hostile_get_object",
            obj("plain"),
            json!({"content": [{"type": "text", "text": r#"{"id":"7"}"#}], "structuredContent": {"id": "7"}, "isError": false}),
        ),
        (
            "hostile_get_object",
            obj("none"),
            json!({"content": [{"type": "text", "text": r#"{"id":"8"}"#}], "structuredContent": {"id": "8"}, "isError": false}),
        ),
        (
            "hostile_get_object",
            obj("array"),
            json!({"content": [{"type": "text", "text": "HTTP 200 OK: the API returned a JSON array where the API description promised an object, so the result cannot match the tool's output schema. Body:\n[\"id\"]"}], "isError": true}),
        ),
        (
            "hostile_get_file",
            file("html", "ok"),
            json!({"content": [{"type": "text", "text": "<b>hi</b>"}], "isError": false}),
        ),
    ];
    let n = cases.len();
    for (tool, args, want) in cases {
        let label = args.to_string();
        let r = call(&c, tool, args).await;
        assert_eq!(wire(&r), want, "{label}");
    }
    report("upstream", "content-types", n);
}

#[tokio::test]
async fn a_10_mb_body_is_cut_and_the_proxy_stops_reading() {
    const TEN_MB: usize = 10 * 1024 * 1024;
    // (bytes the upstream managed to write, whether writing failed)
    let written = Arc::new(Mutex::new(None::<(usize, bool)>));
    let w = written.clone();
    let raw = Raw::start(handler(move |_, mut sock: TcpStream| {
        let w = w.clone();
        async move {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {TEN_MB}\r\n\r\n"
            );
            let _ = sock.write_all(head.as_bytes()).await;
            let chunk = vec![b'z'; 64 * 1024];
            let mut sent = 0;
            let mut failed = false;
            while sent < TEN_MB {
                // A slow producer: the whole body would take ~8 s.
                if sock.write_all(&chunk).await.is_err() {
                    failed = true;
                    break;
                }
                sent += chunk.len();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            *w.lock().expect("lock") = Some((sent, failed));
        }
    }))
    .await;
    let c = client_with(&spec("hostile.yaml"), &raw.base(), |o| {
        o.timeout = Duration::from_secs(20)
    })
    .await;
    let started = Instant::now();
    let r = call(&c, "hostile_get_file", json!({"dir": "big", "name": "n"})).await;
    let took = started.elapsed();
    assert_eq!(r.is_error, Some(false));
    let t = text(&r);
    assert_eq!(
        t.len(),
        1024 * 1024 + "\n[response truncated: 1048576 of 10485760 bytes shown]".len()
    );
    assert!(
        t.ends_with("zzz\n[response truncated: 1048576 of 10485760 bytes shown]"),
        "{}",
        short(&t)
    );
    assert!(took < Duration::from_secs(4), "returned after {took:?}");
    // The proxy dropped the connection: the upstream's writes fail long before 10 MB.
    let deadline = Instant::now() + Duration::from_secs(5);
    let (sent, failed) = loop {
        if let Some(w) = *written.lock().expect("lock") {
            break w;
        }
        assert!(Instant::now() < deadline, "the upstream is still writing");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        failed && sent < TEN_MB,
        "sent {sent} bytes, failed: {failed}"
    );
    report("upstream", "10mb", 1);
}

#[tokio::test]
async fn slow_drip_beyond_the_timeout_is_a_timeout_error() {
    let mut n = 0;
    for (what, head_first) in [("body", true), ("head", false)] {
        n += 1;
        let raw = Raw::start(handler(move |_, mut sock: TcpStream| async move {
            let head =
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n";
            if head_first {
                let _ = sock.write_all(head).await;
            }
            let drip: &[u8] = if head_first { &[b'x'; 100] } else { head };
            for b in drip {
                if sock.write_all(&[*b]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }))
        .await;
        let c = client_with(&spec("hostile.yaml"), &raw.base(), |o| {
            o.timeout = Duration::from_millis(700)
        })
        .await;
        let started = Instant::now();
        let r = call(&c, "hostile_get_file", json!({"dir": "d", "name": "n"})).await;
        let took = started.elapsed();
        let want = if head_first {
            "HTTP 200: reading the response failed: the API did not answer within 700 ms (timeout); the request may or may not have been applied"
        } else {
            "the API did not answer within 700 ms (timeout); the request may or may not have been applied"
        };
        assert_eq!(
            wire(&r),
            json!({"content": [{"type": "text", "text": want}], "isError": true}),
            "{what}"
        );
        assert!(took < Duration::from_secs(3), "{what}: {took:?}");
    }
    report("upstream", "slow-drip", n);
}

/// Redirects are never followed, to another host or the same one: a same-host `Location` can
/// still leave the base path, and re-sending credentials and bodies is the caller's decision.
/// The result names the status and the target.
#[tokio::test]
async fn redirects_are_not_followed_to_any_host() {
    let up = Upstream::start().await;
    let elsewhere = Upstream::start().await;
    let steal = elsewhere.url("/steal?x=1");
    let steal2 = steal.clone();
    up.respond(move |r| {
        let to = |status: u16, loc: &str| Reply {
            status,
            content_type: None,
            body: vec![],
            headers: vec![("location".into(), loc.into())],
        };
        match r.path() {
            "/api/v1/files/r/302" => to(302, &steal2),
            "/api/v1/files/r/307" => to(307, &steal2),
            "/api/v1/files/r/same" => to(301, "/api/v1/files/other/n"),
            "/api/v1/files/r/up" => to(308, "/admin"),
            _ => Reply::empty(303),
        }
    });
    let c = hostile_client(&up).await;
    let cases = [
        (
            "302",
            format!(
                "HTTP 302 Found: the API redirected to {steal}; redirects are not followed."
            ),
        ),
        (
            "307",
            format!(
                "HTTP 307 Temporary Redirect: the API redirected to {steal}; redirects are not followed."
            ),
        ),
        (
            "same",
            "HTTP 301 Moved Permanently: the API redirected to /api/v1/files/other/n; redirects are not followed.".to_string(),
        ),
        (
            "up",
            "HTTP 308 Permanent Redirect: the API redirected to /admin; redirects are not followed."
                .to_string(),
        ),
        (
            "none",
            "HTTP 303 See Other: the API answered with a redirection status; redirects are not followed.".to_string(),
        ),
    ];
    let n = cases.len();
    for (name, want) in cases {
        up.clear();
        let r = call(&c, "hostile_get_file", json!({"dir": "r", "name": name})).await;
        assert_eq!(
            wire(&r),
            json!({"content": [{"type": "text", "text": want}], "isError": true}),
            "{name}"
        );
        let seen: Vec<String> = up.requests().iter().map(|r| r.target.clone()).collect();
        assert_eq!(seen, vec![format!("/api/v1/files/r/{name}")], "{name}");
    }
    assert!(
        elsewhere.requests().is_empty(),
        "the other host received {:?}",
        elsewhere.requests()
    );
    report("upstream", "redirects", n);
}

/// 1,000 calls in flight at once over Streamable HTTP: the upstream holds every answer until all
/// 1,000 requests arrived, then answers each with its own id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_calls_in_flight_over_http_get_their_own_answers() {
    const N: usize = 1000;
    let arrived = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (a, p) = (arrived.clone(), peak.clone());
    let raw = Raw::start(handler(move |head, mut sock: TcpStream| {
        let (a, p) = (a.clone(), p.clone());
        async move {
            let key = head
                .split_whitespace()
                .nth(1)
                .and_then(|t| t.rsplit('/').next())
                .unwrap_or("")
                .to_string();
            a.fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(15);
            while a.load(Ordering::SeqCst) < N && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            p.fetch_max(a.load(Ordering::SeqCst), Ordering::SeqCst);
            let body = json!({ "id": key }).to_string();
            let resp = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(resp.as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    }))
    .await;
    let server = server_with(&spec("hostile.yaml"), &raw.base(), |o| {
        o.timeout = Duration::from_secs(30)
    })
    .await;
    let addr = start_http(
        server,
        HttpOptions::new("127.0.0.1:0".parse().expect("addr")),
    )
    .await
    .expect("http")
    .addr;
    let client = Arc::new(
        ().serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{addr}/mcp"
        )))
        .await
        .expect("connect"),
    );
    let mut tasks = Vec::new();
    for i in 0..N {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            let key = format!("k{i}");
            let r = call(&c, "hostile_get_object", json!({ "key": key })).await;
            (key, r)
        }));
    }
    for t in tasks {
        let (key, r) = t.await.expect("task");
        assert_eq!(
            wire(&r),
            json!({"content": [{"type": "text", "text": format!("{{\"id\":\"{key}\"}}")}], "structuredContent": {"id": key}, "isError": false})
        );
    }
    assert_eq!(raw.heads().len(), N);
    assert_eq!(
        peak.load(Ordering::SeqCst),
        N,
        "all calls were in flight at once"
    );
    report("upstream", "1000-in-flight", N);
}

// ----------------------------------------------------------------------- hostile MCP clients

#[tokio::test]
async fn hostile_http_clients_get_413_404_400_and_json_rpc_errors() {
    let up = Upstream::start().await;
    let mut n = 0;
    for stateless in [false, true] {
        let server = server_with(&spec("hostile.yaml"), &up.url("/api/v1"), |_| {}).await;
        let mut opts = HttpOptions::new("127.0.0.1:0".parse().expect("addr"));
        opts.stateless = stateless;
        opts.max_body_bytes = 64 * 1024;
        let addr = start_http(server, opts).await.expect("http").addr;
        let http = reqwest::Client::new();
        let url = format!("http://{addr}/mcp");
        let post = |body: reqwest::Body, session: Option<&str>, ct: &str| {
            let mut b = http
                .post(&url)
                .header("content-type", ct)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-11-25")
                .body(body);
            if let Some(s) = session {
                b = b.header("mcp-session-id", s);
            }
            b.send()
        };
        let json_ct = "application/json";
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        let resp = post(init.to_string().into(), None, json_ct)
            .await
            .expect("init");
        assert_eq!(resp.status(), 200);

        // (what, body, expected status, expected JSON-RPC error (id, code) when 400)
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"ping","pad":"{}"}}"#,
            "p".repeat(70_000)
        );
        type Case<'a> = (&'a str, reqwest::Body, u16, Option<(Value, i64)>);
        let cases: Vec<Case> = vec![
            ("oversized", big.clone().into(), 413, None),
            ("invalid JSON", "{not json".into(), 400, Some((Value::Null, -32700))),
            ("truncated JSON", r#"{"jsonrpc":"2.0","id":3,"#.into(), 400, Some((Value::Null, -32700))),
            ("empty body", "".into(), 400, Some((Value::Null, -32700))),
            (
                "nested 10,000 deep",
                format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"hostile_create_thing","arguments":{{"name":"n","payload":{}}}}}}}"#, deep_text(10_000)).into(),
                400,
                Some((Value::Null, -32700)),
            ),
            ("not JSON-RPC", r#"{"id": 7, "hello": "world"}"#.into(), 400, Some((json!(7), -32600))),
            ("a JSON array", "[1, 2, 3]".into(), 400, Some((Value::Null, -32600))),
            ("a JSON string", r#""ping""#.into(), 400, Some((Value::Null, -32600))),
            (
                "params of the wrong type",
                r#"{"jsonrpc":"2.0","id":"x9","method":"tools/call","params":"oops"}"#.into(),
                400,
                Some((json!("x9"), -32600)),
            ),
        ];
        for (what, body, status, rpc) in cases {
            n += 1;
            let resp = post(body, None, json_ct).await.expect(what);
            assert_eq!(
                resp.status().as_u16(),
                status,
                "{what} (stateless {stateless})"
            );
            let body = resp.text().await.expect("body");
            match rpc {
                None => assert_eq!(body, "Payload Too Large: request body exceeds 65536 bytes"),
                Some((id, code)) => {
                    let v: Value = serde_json::from_str(&body).expect("JSON-RPC error body");
                    assert_eq!(v["jsonrpc"], "2.0", "{what}: {body}");
                    assert_eq!(v["id"], id, "{what}: {body}");
                    assert_eq!(v["error"]["code"], code, "{what}: {body}");
                    let msg = v["error"]["message"].as_str().unwrap_or_default();
                    let prefix = if code == -32700 {
                        "Parse error: the request body is not valid JSON ("
                    } else {
                        "Invalid Request: the body is not a JSON-RPC request, notification or response"
                    };
                    assert!(msg.starts_with(prefix), "{what}: {msg}");
                    assert!(msg.len() < 500, "{what}: {msg}");
                }
            }
        }
        // Oversized without a Content-Length (chunked): counted while reading.
        n += 1;
        assert_eq!(
            post_chunked(addr, &big).await,
            "HTTP/1.1 413 Payload Too Large"
        );
        // Not JSON at all by its content type: rmcp's 415 stays.
        n += 1;
        let resp = post("{}".into(), None, "text/plain")
            .await
            .expect("text/plain");
        assert_eq!(resp.status(), 415);
        if !stateless {
            // A session id the server never issued.
            n += 1;
            let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"});
            let resp = post(list.to_string().into(), Some("no-such-session"), json_ct)
                .await
                .expect("unknown session");
            assert_eq!(resp.status(), 404);
        }
        // The server is still fine: a real client works.
        let client =
            ().serve(StreamableHttpClientTransport::from_uri(url.clone()))
                .await
                .expect("connect after abuse");
        assert_eq!(client.list_all_tools().await.expect("tools").len(), 7);
        client.cancel().await.expect("cancel");
    }
    assert!(up.requests().is_empty(), "nothing reached the API");
    report("clients", "http", n);
}

/// POSTs `body` to `/mcp` with `Transfer-Encoding: chunked` (8 KiB chunks); returns the status
/// line.
async fn post_chunked(addr: std::net::SocketAddr, body: &str) -> String {
    let mut sock = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
        addr.port()
    );
    sock.write_all(head.as_bytes()).await.expect("write");
    for chunk in body.as_bytes().chunks(8 * 1024) {
        // The server may answer (and stop reading) before the end.
        if sock
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .await
            .is_err()
            || sock.write_all(chunk).await.is_err()
            || sock.write_all(b"\r\n").await.is_err()
        {
            break;
        }
    }
    let _ = sock.write_all(b"0\r\n\r\n").await;
    let mut lines = BufReader::new(sock).lines();
    lines
        .next_line()
        .await
        .expect("read")
        .expect("a status line")
}

/// The built binary over stdio, spoken to line by line; every line it prints is kept.
struct StdioProxy {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    stdout: Vec<String>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl StdioProxy {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = tokio::process::Command::new(binary());
        cmd.arg("proxy")
            .args(args)
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn the proxy");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
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
            child,
            stdin,
            lines,
            stdout: Vec::new(),
            stderr,
        }
    }

    async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.expect("write");
        self.stdin.write_all(b"\n").await.expect("write");
        self.stdin.flush().await.expect("flush");
    }

    /// The next line the proxy prints (10 s at most).
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer within 10 s")
            .expect("read")
            .expect("the proxy is still running");
        self.stdout.push(line.clone());
        serde_json::from_str(&line).expect("a JSON line")
    }

    /// Sends a request and returns its answer (notifications in between are kept, skipped).
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        )
        .await;
        loop {
            let v = self.recv().await;
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    async fn initialize(&mut self) {
        let v = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
            )
            .await;
        assert_eq!(v["result"]["protocolVersion"], "2025-11-25", "{v}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }

    /// Closes stdin and waits for a clean exit.
    async fn finish(mut self) -> (Vec<String>, Vec<String>) {
        drop(self.stdin);
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .expect("exits")
            .expect("status");
        assert!(status.success(), "{status:?}");
        // Let the stderr reader drain.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let stderr = self.stderr.lock().expect("log").clone();
        (self.stdout, stderr)
    }
}

#[tokio::test]
async fn hostile_stdio_lines_get_invalid_request_or_are_dropped_and_the_proxy_lives_on() {
    let up = Upstream::start().await;
    let base = up.url("/api/v1");
    let mut p = StdioProxy::start(
        &[
            spec("hostile.yaml").to_str().expect("path"),
            "--base-url",
            &base,
        ],
        &[],
    );
    p.initialize().await;
    let mut n = 0;
    // Well-formed JSON that is no JSON-RPC message: -32600 Invalid Request (id null: rmcp cannot
    // tell which request it was).
    for line in [
        r#"{"id": 7}"#,
        "42",
        r#""ping""#,
        "[]",
        r#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"oops"}"#,
    ] {
        n += 1;
        p.send(line).await;
        let v = p.recv().await;
        assert_eq!(v["error"]["code"], -32600, "{line}: {v}");
        assert_eq!(v["id"], Value::Null, "{line}: {v}");
    }
    // Lines rmcp cannot parse are dropped without an answer (as the other MCP SDKs do): invalid
    // JSON, JSON nested 10,000 deep (beyond serde_json's 128 levels; no stack overflow), and a
    // line over rmcp's 16 MiB line limit. The next request is answered normally, and the next
    // line printed is its answer.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{{"name":"hostile_create_thing","arguments":{{"name":"n","payload":{}}}}}}}"#,
        deep_text(10_000)
    );
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":11,"method":"ping","pad":"{}"}}"#,
        "p".repeat(17 << 20)
    );
    for (i, line) in ["{not json", deep.as_str(), huge.as_str()]
        .into_iter()
        .enumerate()
    {
        n += 1;
        p.send(line).await;
        let id = 100 + i as u64;
        let v = p.request(id, "ping", json!({})).await;
        assert_eq!(v, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }
    // Nested 120 deep still parses, is validated and forwarded intact.
    n += 1;
    let v = p
        .request(
            12,
            "tools/call",
            json!({"name": "hostile_create_thing", "arguments": {"name": "n", "payload": deep_array(120)}}),
        )
        .await;
    assert_eq!(v["result"]["isError"], false, "{v}");
    assert_eq!(
        up.last().body_json(),
        json!({"name": "n", "payload": deep_array(120)})
    );
    let (stdout, stderr) = p.finish().await;
    assert_eq!(
        stdout.len(),
        1 + 7 + 3 + 1,
        "one line per answer, nothing for the dropped lines"
    );
    assert!(
        !stderr
            .iter()
            .any(|l| l.contains("panicked") || l.contains("overflow")),
        "{stderr:?}"
    );
    report("clients", "stdio", n);
}

// -------------------------------------------------------------------------------------- secrets

/// Credentials for every kind of scheme in security.yaml (+ a static header), calls that succeed
/// and fail (the API echoes credentials in its errors), the binary at `-vv` (trace): no secret
/// in any line on stdout (MCP messages) or stderr (logs).
#[tokio::test]
async fn no_secret_in_any_mcp_message_or_trace_log_line() {
    let up = Upstream::start().await;
    up.respond(|r| {
        let echo = || {
            json!({
                "authorization": r.header("authorization"),
                "key": r.header("x-api-key"),
                "static": r.header("x-static-token"),
                "query": r.query(),
                "cookie": r.header("cookie"),
                "body": r.body_text(),
            })
        };
        match (r.method.as_str(), r.path()) {
            ("POST", "/oauth/token") => Reply::json(
                200,
                json!({"access_token": "at-S3CRET-tok", "token_type": "Bearer", "expires_in": 3600}),
            ),
            ("GET", "/api/status") => Reply::json(200, json!({"ok": true})),
            ("GET", "/api/reports") => Reply::json(200, json!([{"title": "t"}])),
            ("POST", "/api/reports") => Reply::json(403, echo()),
            ("GET", "/api/me") => Reply::json(200, json!({"username": "alice"})),
            ("GET", "/api/exports/ok") => Reply::raw(200, "text/csv", "a,b\n1,2\n"),
            ("GET", _) => Reply::json(401, echo()),
            ("DELETE", "/api/reports/ok") => Reply::empty(204),
            _ => Reply::json(500, echo()),
        }
    });
    // security.yaml with its token URL pointed at the recording upstream.
    let dir = std::env::temp_dir().join(format!(
        "openapi-mcp-hostile-{}-{}",
        std::process::id(),
        up.addr.port()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let spec_path = dir.join("security.yaml");
    let text_ = std::fs::read_to_string(spec("security.yaml"))
        .expect("security.yaml")
        .replace("http://localhost:8080/oauth/token", &up.url("/oauth/token"));
    std::fs::write(&spec_path, text_).expect("write spec");

    let all = [
        ("OPENAPI_MCP_BEARER_AUTH", "bearer-S3CRET-tok"),
        ("OPENAPI_MCP_QUERY_KEY", "qk-S3CRET"),
        ("OPENAPI_MCP_SESSION_COOKIE", "sess-S3CRET"),
        ("OPENAPI_MCP_HEADER_KEY", "hk-S3CRET"),
        ("OPENAPI_MCP_BASIC_AUTH_USERNAME", "alice"),
        ("OPENAPI_MCP_BASIC_AUTH_PASSWORD", "pw-S3CRET"),
        ("OPENAPI_MCP_OAUTH_CLIENT_CLIENT_ID", "client-1"),
        ("OPENAPI_MCP_OAUTH_CLIENT_CLIENT_SECRET", "cs-S3CRET"),
    ];
    // Every secret contains `S3CRET`; basic auth travels as base64("alice:pw-S3CRET").
    let forbidden = ["S3CRET", "YWxpY2U6cHctUzNDUkVU"];
    let base = up.url("/api");
    let mut n = 0;
    let mut seen_on_the_wire = Vec::new();
    // With every credential; then without the bearer token, so the OR alternatives fall back
    // to basic auth.
    for without_bearer in [false, true] {
        let env: Vec<(&str, &str)> = all
            .iter()
            .copied()
            .filter(|(k, _)| !(without_bearer && *k == "OPENAPI_MCP_BEARER_AUTH"))
            .collect();
        let mut p = StdioProxy::start(
            &[
                spec_path.to_str().expect("path"),
                "--base-url",
                &base,
                "--header",
                "X-Static-Token: st-S3CRET",
                "-vv",
            ],
            &env,
        );
        p.initialize().await;
        let tools = p.request(1, "tools/list", json!({})).await;
        assert_eq!(tools["result"]["tools"].as_array().map(Vec::len), Some(6));
        let calls = [
            ("secured_get_status", json!({}), false),
            ("secured_list_reports", json!({}), false),
            ("secured_create_report", json!({"title": "t"}), true),
            ("secured_get_current_user", json!({}), false),
            ("secured_export_report", json!({"reportId": "ok"}), false),
            ("secured_export_report", json!({"reportId": "denied"}), true),
            ("secured_delete_report", json!({"reportId": "ok"}), false),
            ("secured_delete_report", json!({"reportId": "fail"}), true),
        ];
        for (i, (tool, args, is_error)) in calls.into_iter().enumerate() {
            n += 1;
            let v = p
                .request(
                    10 + i as u64,
                    "tools/call",
                    json!({"name": tool, "arguments": args}),
                )
                .await;
            assert_eq!(v["result"]["isError"], is_error, "{tool}: {v}");
        }
        let (stdout, stderr) = p.finish().await;
        assert!(
            stderr.iter().any(|l| l.contains("TRACE")) && stderr.len() > 20,
            "-vv logs at trace level: {stderr:?}"
        );
        for line in stdout.iter().chain(&stderr) {
            for s in forbidden {
                assert!(!line.contains(s), "secret {s} leaked: {}", short(line));
            }
        }
        // The API did get them (and echoed them in its errors, which were redacted).
        assert!(
            stdout.iter().any(|l| l.contains("[redacted]")),
            "{stdout:?}"
        );
        seen_on_the_wire.extend(up.requests());
        up.clear();
    }
    // Every credential was really sent somewhere.
    let wire_text: String = seen_on_the_wire
        .iter()
        .map(|r| format!("{} {:?} {}\n", r.target, r.headers, r.body_text()))
        .collect();
    for s in [
        "Bearer bearer-S3CRET-tok",
        "api_key=qk-S3CRET",
        "SESSIONID=sess-S3CRET",
        "Basic YWxpY2U6cHctUzNDUkVU",
        "client_secret=cs-S3CRET",
        "Bearer at-S3CRET-tok",
        "st-S3CRET",
    ] {
        assert!(wire_text.contains(s), "{s} was never sent");
    }
    let _ = std::fs::remove_dir_all(&dir);
    report("secrets", "stdio-trace", n);
}

// ------------------------------------------------------------------ per-client rate limit

/// `--rate-limit 5`: a client flooding the endpoint gets 429 + Retry-After + a JSON-RPC error
/// once its burst of 5 is spent, per key (session id, else peer IP); a real rmcp client with its
/// own session keeps working meanwhile, and the flooder gets through again after Retry-After.
#[tokio::test]
async fn rate_limit_answers_429_per_client() {
    const LIMIT: u32 = 5;
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"id": "k"})));
    let server = server_with(&spec("hostile.yaml"), &up.url("/api/v1"), |_| {}).await;
    let mut opts = HttpOptions::new("127.0.0.1:0".parse().expect("addr"));
    opts.rate_limit = Some(LIMIT);
    let addr = start_http(server, opts).await.expect("http").addr;
    let url = format!("http://{addr}/mcp");

    // A real client: initialize (counted against 127.0.0.1), then its own session's bucket.
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(url.clone()))
            .await
            .expect("rmcp client connects under the limit");

    // A flooder with a made-up session id: the id is not one the server issued, so it counts
    // against its IP address, which spent 1 token on the client's initialize; 4 (+1 refilled at
    // most) pass to rmcp (which refuses the unknown session), everything after is 429.
    let http = reqwest::Client::new();
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}).to_string();
    let flood = |session: Option<&'static str>| {
        let http = http.clone();
        let url = url.clone();
        let ping = ping.clone();
        async move {
            let mut b = http
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(ping);
            if let Some(s) = session {
                b = b.header("mcp-session-id", s);
            }
            b.send().await.expect("request")
        }
    };
    let mut statuses = Vec::new();
    let mut limited = None;
    for _ in 0..12 {
        let resp = flood(Some("flooder")).await;
        statuses.push(resp.status().as_u16());
        if resp.status() == 429 && limited.is_none() {
            let retry_after = resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok())
                .expect("Retry-After in seconds");
            let body: Value = resp.json().await.expect("JSON-RPC error body");
            limited = Some((retry_after, body));
        }
    }
    let passed = statuses.iter().filter(|s| **s != 429).count();
    assert!(
        (LIMIT as usize - 1..=LIMIT as usize).contains(&passed),
        "burst of {LIMIT} less the initialize (+1 refilled at most): {statuses:?}"
    );
    assert_eq!(
        statuses[..LIMIT as usize - 1]
            .iter()
            .filter(|s| **s == 429)
            .count(),
        0
    );
    let (retry_after, body) = limited.expect("the flooder was limited");
    assert_eq!(retry_after, 1);
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["error"]["code"], -32000);
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Too many requests") && m.contains("retry after 1 s")),
        "{body}"
    );

    // The real client's session (issued by the server) is another key: its calls go through.
    for i in 0..2 {
        let r = call(
            &client,
            "hostile_get_object",
            json!({ "key": format!("c{i}") }),
        )
        .await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
    }
    // Without a session id the key is the peer IP too: the bucket the flooder drained, so at
    // most the one or two tokens refilled since pass.
    let mut ip_statuses = Vec::new();
    for _ in 0..10 {
        ip_statuses.push(flood(None).await.status().as_u16());
    }
    let ip_passed = ip_statuses.iter().filter(|s| **s != 429).count();
    assert!(ip_passed <= 2, "{ip_statuses:?}");

    // After Retry-After the flooder is served again.
    tokio::time::sleep(Duration::from_secs(retry_after)).await;
    assert_ne!(flood(Some("flooder")).await.status(), 429);
    let _ = client.cancel().await;
    report(
        "clients",
        "rate-limit",
        statuses.len() + ip_statuses.len() + 3,
    );
}
