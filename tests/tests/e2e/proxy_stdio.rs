//! The built `openapi-mcp` binary over stdio with rmcp's child-process client.

use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use openapi_mcp_tests::harness::{binary, call, spec, text};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::test]
async fn binary_serves_and_forwards_over_stdio() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!([{"id": 1, "name": "Rex"}])));
    let base = up.url("/api");
    let transport =
        TokioChildProcess::new(tokio::process::Command::new(binary()).configure(|cmd| {
            cmd.args([
                "proxy",
                spec("petstore.yaml").to_str().unwrap(),
                "--base-url",
                &base,
            ]);
            cmd.env("OPENAPI_MCP_API_KEY", "k-123");
        }))
        .expect("spawn");
    let client = ().serve(transport).await.expect("initialize");
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("petstore")
    );
    // Without --watch nothing changes the list: no listChanged is promised.
    assert!(
        !info
            .capabilities
            .tools
            .as_ref()
            .and_then(|t| t.list_changed)
            .unwrap_or(false)
    );
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 6);
    let r = call(&client, "petstore_list_pets", json!({"limit": 1})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.target, "/api/pets?limit=1");
    assert_eq!(req.header("x-api-key"), Some("k-123"));
    client.cancel().await.unwrap();
}

/// Raw JSON-RPC lines: what the Python SDK 2.x and broken clients send.
#[tokio::test]
async fn stdio_answers_discover_unknown_methods_and_survives_garbage() {
    let mut child = tokio::process::Command::new(binary())
        .args([
            "proxy",
            spec("petstore.yaml").to_str().unwrap(),
            "--base-url",
            "http://127.0.0.1:9/api",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = async |line: &str| {
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    send(&init.to_string()).await;
    let reply: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    send("{this is not json").await;
    // Without the 2026 request _meta: invalid params; with it: the discover result.
    send(r#"{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{}}"#).await;
    let reply: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    send(r#"{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await;
    let reply: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(reply["id"], 2);
    // Both eras from one process: discover lists 2026-07-28 beside the initialize versions.
    let versions = &reply["result"]["supportedVersions"];
    for v in ["2026-07-28", "2025-11-25"] {
        assert!(
            versions.as_array().is_some_and(|a| a.contains(&json!(v))),
            "{reply}"
        );
    }
    send(r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method","params":{}}"#).await;
    let reply: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    send(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#).await;
    let reply: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(reply["id"], 4);
    assert!(reply.get("result").is_some(), "{reply}");
    // stdin closed: the server exits cleanly.
    drop(stdin);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
        .await
        .expect("exits")
        .unwrap();
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn tools_command_json_equals_what_the_proxy_serves() {
    let out = tokio::process::Command::new(binary())
        .args(["tools", "--json", spec("petstore.yaml").to_str().unwrap()])
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let server = openapi_mcp_tests::harness::proxy_server(
        &spec("petstore.yaml"),
        "http://127.0.0.1:9/",
        Default::default(),
        &[],
    )
    .await;
    let client = openapi_mcp_tests::harness::connect_in_process(server).await;
    let served = serde_json::to_value(client.list_all_tools().await.unwrap()).unwrap();
    assert_eq!(printed, served);
}

#[tokio::test]
async fn not_openapi_exits_1_naming_the_file() {
    for f in ["not-openapi.json", "not-openapi.yaml"] {
        let out = tokio::process::Command::new(binary())
            .args(["tools", spec(f).to_str().unwrap()])
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{f}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(f) && err.contains('#'), "{err}");
    }
    let out = tokio::process::Command::new(binary())
        .args(["tools", "/no/such/spec.yaml"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}
