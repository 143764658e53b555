//! The proxy over Streamable HTTP with rmcp's HTTP client, plus raw HTTP checks of the endpoint.

use std::net::SocketAddr;

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_runtime::http::transport::{HttpOptions, start_http};
use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::transport::StreamableHttpClientTransport;
use openapi_mcp_tests::harness::{call, proxy_server, spec, text};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::json;

async fn serve(up: &Upstream, stateless: bool, token: Option<&str>) -> SocketAddr {
    let server = proxy_server(
        &spec("petstore.yaml"),
        &up.url("/api"),
        ToolOptions::default(),
        &[],
    )
    .await;
    let mut opts = HttpOptions::new("127.0.0.1:0".parse().unwrap());
    opts.stateless = stateless;
    opts.auth_token = token.map(str::to_string);
    start_http(server, opts).await.expect("http server").addr
}

#[tokio::test]
async fn stateful_and_stateless_sessions_call_through() {
    let up = Upstream::start().await;
    up.respond(|r| Reply::json(200, json!({"id": 5, "name": r.path()})));
    for stateless in [false, true] {
        let addr = serve(&up, stateless, None).await;
        let client = ()
            .serve(StreamableHttpClientTransport::from_uri(format!(
                "http://{addr}/mcp"
            )))
            .await
            .expect("connect");
        assert_eq!(client.list_all_tools().await.unwrap().len(), 6);
        let r = call(&client, "petstore_show_pet_by_id", json!({"petId": 5})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        assert_eq!(
            r.structured_content,
            Some(json!({"id": 5, "name": "/api/pets/5"}))
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn many_concurrent_calls_get_their_own_answers() {
    let up = Upstream::start().await;
    up.respond(|r| Reply::json(200, json!({"id": r.path().rsplit('/').next().unwrap().parse::<i64>().unwrap_or(-1), "name": "x"})));
    let addr = serve(&up, false, None).await;
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{addr}/mcp"
        )))
        .await
        .unwrap();
    let client = std::sync::Arc::new(client);
    let mut tasks = Vec::new();
    for i in 0..200i64 {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            let r = call(&c, "petstore_show_pet_by_id", json!({"petId": i})).await;
            assert_eq!(
                r.structured_content.as_ref().and_then(|s| s["id"].as_i64()),
                Some(i)
            );
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

#[tokio::test]
async fn endpoint_checks_origin_host_and_bearer_token() {
    let up = Upstream::start().await;
    let addr = serve(&up, false, Some("tok-9")).await;
    let http = reqwest_client();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let post = |origin: Option<&str>, token: Option<&str>, host: Option<&str>| {
        let mut b = http
            .post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string());
        if let Some(o) = origin {
            b = b.header("origin", o);
        }
        if let Some(t) = token {
            b = b.header("authorization", format!("Bearer {t}"));
        }
        if let Some(h) = host {
            b = b.header("host", h);
        }
        b.send()
    };
    assert_eq!(post(None, None, None).await.unwrap().status(), 401);
    assert_eq!(post(None, Some("wrong"), None).await.unwrap().status(), 401);
    let ok = post(None, Some("tok-9"), None).await.unwrap();
    assert_eq!(ok.status(), 200);
    // Idle connections close after 10 s (the header-read timeout): clients are told 9.
    assert_eq!(
        ok.headers().get("keep-alive").and_then(|v| v.to_str().ok()),
        Some("timeout=9")
    );
    assert_eq!(
        post(Some("http://evil.example"), Some("tok-9"), None)
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        post(None, Some("tok-9"), Some("evil.example"))
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        post(Some("http://localhost:3000"), Some("tok-9"), None)
            .await
            .unwrap()
            .status(),
        200
    );
}

fn reqwest_client() -> reqwest::Client {
    reqwest::Client::new()
}

/// `--forward-header`: named headers of the MCP client's HTTP request go upstream (replacing the
/// configured credential in the same header); nothing else of the client's request does.
#[tokio::test]
async fn forward_header_passes_named_client_headers_only() {
    use openapi_mcp_runtime::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use openapi_mcp_runtime::server::ServerOptions;
    use openapi_mcp_tests::harness::proxy_server_with;

    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"id": 1, "name": "x"})));
    for forward in [false, true] {
        let mut server_opts = ServerOptions::default();
        if forward {
            server_opts.forward_headers = vec!["x-tenant".into(), "x-api-key".into()];
        }
        let server = proxy_server_with(
            &spec("petstore.yaml"),
            &up.url("/api"),
            ToolOptions::default(),
            &[("api_key", "configured-key")],
            server_opts,
        )
        .await;
        let addr = start_http(server, HttpOptions::new("127.0.0.1:0".parse().unwrap()))
            .await
            .expect("http server")
            .addr;
        let mut headers = std::collections::HashMap::new();
        for (k, v) in [
            ("x-tenant", "acme"),
            ("x-api-key", "the-users-own-key"),
            ("x-other", "not-forwarded"),
        ] {
            headers.insert(
                http::HeaderName::from_static(k),
                http::HeaderValue::from_static(v),
            );
        }
        let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"))
            .auth_header("mcp-client-token")
            .custom_headers(headers);
        let client =
            ().serve(StreamableHttpClientTransport::from_config(config))
                .await
                .expect("connect");
        up.clear();
        let r = call(&client, "petstore_show_pet_by_id", json!({"petId": 1})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        let got = up.last();
        assert_eq!(
            got.header("authorization"),
            None,
            "the MCP client's own token never goes upstream"
        );
        assert_eq!(got.header("x-other"), None);
        if forward {
            assert_eq!(got.header("x-tenant"), Some("acme"));
            assert_eq!(got.header("x-api-key"), Some("the-users-own-key"));
        } else {
            assert_eq!(got.header("x-tenant"), None);
            assert_eq!(got.header("x-api-key"), Some("configured-key"));
        }
        client.cancel().await.unwrap();
    }
}
