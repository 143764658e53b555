//! #39: a workflow tool runs operations, so a caller needs the OAuth scopes of every operation
//! its steps may call: a token with some of them gets HTTP 403 `insufficient_scope` naming the
//! whole requirement and nothing reaches the API; `--hide-unauthorized-tools` hides the
//! workflow from it. Before, a workflow needed no scope at all (its name was not an operation's,
//! so the check found nothing to require).

use std::net::SocketAddr;
use std::sync::Arc;

use openapi_mcp_runtime::forward::Credentials;
use openapi_mcp_runtime::http::transport::{HttpOptions, start_http};
use openapi_mcp_runtime::oauth::OAuthOptions;
use openapi_mcp_runtime::server::ServerOptions;
use openapi_mcp_runtime::server::workflow::{SetOperations, WorkflowTools};
use openapi_mcp_tests::harness::{Scratch, server_for, tool_set};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::{Value, json};

use super::attack_secrets::{AUDIENCE, Issuer};

const SPEC: &str = r#"openapi: 3.0.3
info: {title: Shop, version: "1"}
servers: [{url: "http://127.0.0.1:9/api"}]
components:
  securitySchemes:
    o:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: https://auth.invalid/token
          scopes: {"pets:read": read pets, "orders:write": place orders}
paths:
  /pets:
    get:
      operationId: listPets
      security: [{o: ["pets:read"]}]
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {type: array, items: {type: object}}}}
  /orders:
    post:
      operationId: placeOrder
      security: [{o: ["orders:write"]}]
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, properties: {petId: {type: integer}}}
      responses:
        "201":
          description: ok
          content: {application/json: {schema: {type: object}}}
"#;

const DOC: &str = r#"arazzo: 1.0.1
info: {title: Buy, version: "1"}
sourceDescriptions: [{name: shop, url: shop.yaml, type: openapi}]
workflows:
  - workflowId: buyFirstPet
    summary: Order the first pet listed
    steps:
      - stepId: list
        operationId: listPets
        successCriteria: [{condition: $statusCode == 200}]
        outputs: {id: $response.body#/0/id}
      - stepId: order
        operationId: placeOrder
        requestBody: {payload: {petId: $steps.list.outputs.id}}
        successCriteria: [{condition: $statusCode == 201}]
"#;

struct Served {
    addr: SocketAddr,
    workflow: String,
    up: Upstream,
}

async fn serve(issuer: &Issuer, hide: bool) -> Served {
    let up = Upstream::start().await;
    up.respond(|r| match (r.method.as_str(), r.path()) {
        ("GET", "/api/pets") => Reply::json(200, json!([{"id": 7}])),
        ("POST", "/api/orders") => Reply::json(201, json!({"ordered": true})),
        _ => Reply::json(404, json!({})),
    });
    let dir = Scratch::new("workflow-scopes");
    let spec = dir.write("shop.yaml", SPEC);
    let set = tool_set(&spec, &openapi_mcp_convert::ToolOptions::default()).await;
    let doc = openapi_mcp_arazzo::load::from_bytes(DOC.as_bytes(), "buy.arazzo.yaml", None)
        .expect("document");
    let checked = openapi_mcp_arazzo::validate::validate(
        Arc::new(doc),
        &SetOperations {
            set: &set,
            sources: vec![("shop".into(), 0)],
        },
    );
    assert!(
        checked.diagnostics().is_empty(),
        "{:?}",
        checked.diagnostics()
    );
    let workflows = WorkflowTools::new(&set, &[Arc::new(checked)], false);
    let workflow = workflows
        .tools()
        .next()
        .expect("one workflow tool")
        .name
        .to_string();
    let opts = ServerOptions {
        workflows: Some(Arc::new(workflows)),
        ..ServerOptions::default()
    };
    let server = server_for(set, &up.url("/api"), Credentials::default(), |_| {}, opts);
    assert_eq!(
        server.required_scopes(&workflow, None),
        Some(vec![vec![
            "orders:write".to_string(),
            "pets:read".to_string()
        ]]),
        "a workflow needs one alternative of each operation it calls"
    );
    let mut o = HttpOptions::new("127.0.0.1:0".parse().unwrap());
    o.stateless = true;
    o.oauth = Some(OAuthOptions {
        issuer: issuer.url.clone(),
        audience: AUDIENCE.into(),
        jwks_url: Some(format!("{}/jwks", issuer.url)),
        hide_unauthorized_tools: hide,
        ..OAuthOptions::default()
    });
    let addr = start_http(server, o).await.expect("http server").addr;
    Served { addr, workflow, up }
}

/// One stateless-era JSON-RPC request with `token`: the status, the WWW-Authenticate header and
/// the body.
async fn post(addr: SocketAddr, token: &str, body: Value) -> (u16, String, String) {
    let r = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("authorization", format!("Bearer {token}"))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let challenge = r
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, challenge, r.text().await.unwrap())
}

fn call(name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": name, "arguments": {}}})
}

#[tokio::test]
async fn a_workflow_needs_the_scopes_of_every_operation_it_calls() {
    let issuer = Issuer::start().await;
    let s = serve(&issuer, false).await;
    // Enough for the first step only: refused before anything is sent.
    let partial = issuer.token_with_scope("alice", Some("pets:read"));
    let (status, challenge, _) = post(s.addr, &partial, call(&s.workflow)).await;
    assert_eq!(status, 403, "{challenge}");
    assert!(
        challenge.contains("insufficient_scope") && challenge.contains("orders:write"),
        "{challenge}"
    );
    assert!(s.up.requests().is_empty(), "nothing reaches the API");
}

#[tokio::test]
async fn hidden_unauthorized_tools_hide_a_workflow_the_token_cannot_run() {
    let issuer = Issuer::start().await;
    let s = serve(&issuer, true).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let names = |body: &str| -> Vec<String> {
        let v: Value = body
            .lines()
            .find_map(|l| serde_json::from_str(l.strip_prefix("data: ").unwrap_or(l)).ok())
            .expect("a JSON-RPC answer");
        v["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let partial = issuer.token_with_scope("alice", Some("pets:read"));
    let (status, _, body) = post(s.addr, &partial, list.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert!(!names(&body).contains(&s.workflow), "{body}");
    let full = issuer.token_with_scope("bob", Some("pets:read orders:write"));
    let (status, _, body) = post(s.addr, &full, list).await;
    assert_eq!(status, 200, "{body}");
    assert!(names(&body).contains(&s.workflow), "{body}");
}
