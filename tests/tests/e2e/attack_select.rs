//! #36, items 2, 3 and 7: hostile `_select` expressions and a code-mode error bomb, sent by a
//! real MCP client over Streamable HTTP to a server in front of a real upstream, on a
//! multi-threaded runtime like the binary's. Each gets a clear tool error (or a note), nothing
//! crashes, and the same server answers another session's call afterwards.

use std::net::SocketAddr;

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_runtime::http::transport::{HttpOptions, start_http};
use openapi_mcp_runtime::modes::code::{CodeLimits, EXECUTE};
use openapi_mcp_runtime::modes::dynamic::ToolMode;
use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::transport::StreamableHttpClientTransport;
use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
use openapi_mcp_tests::harness::{Client, call, proxy_server_with, spec, text};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::{Value, json};

/// The servers' `--max-response-bytes` (the default).
const MAX_RESPONSE_BYTES: usize = 1 << 20;

async fn serve(server: ProxyServer) -> SocketAddr {
    let opts = HttpOptions::new("127.0.0.1:0".parse().unwrap());
    start_http(server, opts).await.expect("http server").addr
}

async fn session(addr: SocketAddr) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(format!(
        "http://{addr}/mcp"
    )))
    .await
    .expect("connect")
}

async fn petstore(up: &Upstream, mode: ToolMode) -> ProxyServer {
    proxy_server_with(
        &spec("petstore.yaml"),
        &up.url("/api"),
        ToolOptions::default(),
        &[("api_key", "s3cret")],
        ServerOptions {
            mode,
            ..Default::default()
        },
    )
    .await
}

/// A page of 50 pets, 200-byte names: 12 KB of JSON.
fn pets() -> Value {
    Value::Array(
        (0..50)
            .map(|i| json!({"id": i, "name": format!("{i:03}{}", "n".repeat(197)), "tag": "dog"}))
            .collect(),
    )
}

fn size(r: &openapi_mcp_runtime::rmcp::model::CallToolResult) -> usize {
    serde_json::to_vec(r).map_or(usize::MAX, |b| b.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_and_exploding_selections_are_refused_and_the_server_goes_on() {
    let up = Upstream::start().await;
    up.respond(|r| {
        if r.path() == "/api/pets" {
            Reply::json(200, pets())
        } else {
            Reply::json(200, json!({"id": 7, "name": "rex"}))
        }
    });
    let addr = serve(petstore(&up, ToolMode::Tools).await).await;
    let attacker = session(addr).await;

    // Item 2: nested ~2,000 / ~10,000 levels (4 KB / 10-20 KB arguments): refused before the
    // parser runs, and before anything is sent.
    let n = 2000;
    let deep = [
        format!("{}@{}", "[".repeat(n), "]".repeat(n)),
        format!("{}@{}", "(".repeat(n), ")".repeat(n)),
        format!("{}@", "!".repeat(10_000)),
        format!("a{}", ".a".repeat(10_000)),
        format!("@{}", "|@".repeat(10_000)),
        // Within the length limit, past the nesting one.
        format!("{}@{}", "[".repeat(100), "]".repeat(100)),
    ];
    for expr in &deep {
        let r = call(&attacker, "petstore_list_pets", json!({ "_select": expr })).await;
        let t = text(&r);
        assert_eq!(r.is_error, Some(true), "{}", &t[..t.len().min(300)]);
        assert!(
            t.contains("nothing was sent to the API")
                && t.contains("`_select`: over a limit of `_select` expressions"),
            "{}",
            &t[..t.len().min(300)]
        );
        assert!(
            t.contains("over the limit of 1024 bytes") || t.contains("deeper than 64 levels"),
            "{t}"
        );
    }
    assert!(up.requests().is_empty(), "a refused call reached the API");

    // Item 3: results that double at each step (120-byte and similar expressions), through
    // projections, flattening, sorting and serializing: the API call is carried out, the
    // selection gives up at a budget and says which, the result stays within the response cap.
    let bombs = [
        (format!("{}@", "[@,@]|".repeat(20)), "bytes of JSON"),
        (format!("{}@", "([@,@]|[])|".repeat(20)), ""),
        (format!("{}[*].name", "[@,@]|[]|".repeat(14)), ""),
        (format!("{}sort_by(@, &name)", "[@,@]|[]|".repeat(14)), ""),
        (
            format!("{}to_string(@)", "[@,@]|".repeat(20)),
            "intermediate values",
        ),
        (
            format!("[{0}@, {0}@] | [0] == [1]", "[@,@]|".repeat(25)),
            "steps",
        ),
    ];
    for (expr, limit) in &bombs {
        let r = call(&attacker, "petstore_list_pets", json!({ "_select": expr })).await;
        let t = text(&r);
        assert!(
            t.starts_with(
                "The API call succeeded, but `_select` could not be applied to its result: "
            ),
            "{expr}: {}",
            &t[..t.len().min(300)]
        );
        assert!(t.contains("the limit"), "{t}");
        assert!(t.contains(limit), "{expr}: {t}");
        // The unselected page follows, within the response cap.
        assert!(
            size(&r) < 3 * MAX_RESPONSE_BYTES,
            "{expr}: {} bytes",
            size(&r)
        );
    }
    assert_eq!(up.requests().len(), bombs.len());

    // A selection within the budgets works as before.
    let r = call(
        &attacker,
        "petstore_list_pets",
        json!({"_select": "[?id < `3`].{id: id, tag: tag}"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        serde_json::from_str::<Value>(&text(&r)).unwrap(),
        json!([{"id": 0, "tag": "dog"}, {"id": 1, "tag": "dog"}, {"id": 2, "tag": "dog"}])
    );

    // Another session of the same server is served.
    let other = session(addr).await;
    let r = call(&other, "petstore_show_pet_by_id", json!({"petId": 7})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(r.structured_content, Some(json!({"id": 7, "name": "rex"})));
    other.cancel().await.unwrap();
    attacker.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thrown_40_mb_error_is_cut_and_the_server_goes_on() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"id": 1, "name": "rex"})));
    let addr = serve(petstore(&up, ToolMode::Code(CodeLimits::default())).await).await;
    let attacker = session(addr).await;
    let limits = CodeLimits::default();

    // Item 7: a 60-byte script whose Error message is 40 MB; and its name, its stack (a
    // function with a 1 MB name) and a thrown value, each large.
    let scripts = [
        "throw new Error('x'.repeat(4e7));",
        "const e = new Error('m'); e.name = 'N'.repeat(4e6); throw e;",
        "const n = 'f'.repeat(1e6); const o = {[n]() { throw new Error('s'); }}; o[n]();",
        "throw {a: 'x'.repeat(4e6)};",
        "console.log('y'.repeat(4e6)); throw new Error('after a long log');",
    ];
    for code in scripts {
        let r = call(&attacker, EXECUTE, json!({ "code": code })).await;
        let t = text(&r);
        assert_eq!(r.is_error, Some(true), "{code}: {}", &t[..t.len().min(300)]);
        assert!(
            t.starts_with("The script failed: the script threw "),
            "{}",
            &t[..t.len().min(300)]
        );
        assert!(t.len() <= limits.max_output, "{code}: {} bytes", t.len());
        // Text and structured content together, far under the TypeScript SDK's 10 MiB.
        assert!(size(&r) < 64 * 1024, "{code}: {} bytes", size(&r));
    }
    let r = call(
        &attacker,
        EXECUTE,
        json!({"code": "throw new Error('x'.repeat(4e7));"}),
    )
    .await;
    assert!(
        text(&r).contains("[cut: 40000000 characters in all]"),
        "{}",
        &text(&r)[..200]
    );

    // Another session runs a script that calls the API.
    let other = session(addr).await;
    let r = call(
        &other,
        EXECUTE,
        json!({"code": "const p = await api.petstore_show_pet_by_id({petId: 1}); return p.name;"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        r.structured_content.as_ref().unwrap()["result"],
        json!("rex")
    );
    other.cancel().await.unwrap();
    attacker.cancel().await.unwrap();
}
