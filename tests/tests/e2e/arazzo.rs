//! Arazzo workflows as tools (#39): the built binary serving the fixtures of tests/arazzo/
//! (`proxy DOC.arazzo.yaml`, `proxy SPEC --arazzo DOC`, `--workflows-only`), a real MCP client
//! over stdio, recording upstreams on 127.0.0.1:0 (the shop and the shipping API on hosts of
//! their own, so that each credential's destination is checked).

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use openapi_mcp_tests::harness::{Client, Scratch, binary, call, text, workspace_root};
use openapi_mcp_tests::upstream::{Recorded, Reply, Upstream};
use serde_json::{Value, json};

const SHOP_KEY: &str = "shop-key-7Hq2Lm";
const SHIP_TOKEN: &str = "ship-token-Zr81Pw";

fn fixture(name: &str) -> String {
    std::fs::read_to_string(workspace_root().join("tests/arazzo/fixtures").join(name))
        .expect("fixture")
}

/// The two APIs, answering as tests/arazzo/recorder.py does.
struct Hosts {
    shop: Upstream,
    ship: Upstream,
}

impl Hosts {
    async fn start() -> Hosts {
        let hosts = Hosts {
            shop: Upstream::start().await,
            ship: Upstream::start().await,
        };
        let counters: Arc<Mutex<std::collections::HashMap<String, u32>>> = Arc::default();
        let count = move |k: &str| {
            let mut c = counters.lock().expect("counters");
            let n = c.entry(k.to_string()).or_default();
            *n += 1;
            *n - 1
        };
        hosts.shop.respond(move |r: &Recorded| {
            if r.header("x-api-key") != Some(SHOP_KEY) {
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
                    match pets.iter().find(|x| x["id"].as_u64().is_some_and(|n| n.to_string() == id)) {
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
                    let n = count(p);
                    let status = if n < 2 { "pending" } else { "ready" };
                    // An API that echoes the caller's key (a workflow output must not show it).
                    let echo = format!("key={}", r.header("x-api-key").unwrap_or_default());
                    Reply::json(200, json!({"id": 100, "status": status, "echo": echo}))
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
        hosts.ship.respond(move |r: &Recorded| {
            if r.header("authorization") != Some(&format!("Bearer {SHIP_TOKEN}")) {
                return Reply::json(401, json!({"error": "token"}));
            }
            let path = r.path().strip_prefix("/ship").unwrap_or_default();
            match (r.method.as_str(), path) {
                ("POST", "/shipments") => {
                    let b = r.body_json();
                    Reply::json(
                        201,
                        json!({"trackingNumber": format!("TRK-{}", b["orderId"]), "carrier": "acme"}),
                    )
                }
                ("GET", p) if p.starts_with("/shipments/") => Reply::json(
                    200,
                    json!({"trackingNumber": &p[11..], "state": "in_transit"}),
                ),
                _ => Reply::json(404, json!({"error": "no route"})),
            }
        });
        hosts
    }

    /// The fixtures in `dir`, their servers pointing at these hosts.
    fn write(&self, dir: &Scratch) {
        let shop = fixture("shop.openapi.yaml")
            .replace("http://127.0.0.1:{{PORT}}/shop", &self.shop.url("/shop"));
        let ship = fixture("ship.openapi.yaml")
            .replace("http://127.0.0.1:{{PORT}}/ship", &self.ship.url("/ship"));
        dir.write("shop.openapi.yaml", &shop);
        dir.write("ship.openapi.yaml", &ship);
        for doc in [
            "shop.arazzo.yaml",
            "shop-and-ship.arazzo.yaml",
            "shop-and-ship-ids.arazzo.yaml",
        ] {
            dir.write(doc, &fixture(doc));
        }
    }
}

fn command(args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(binary());
    cmd.arg("proxy")
        .args(args)
        .env_remove("RUST_LOG")
        // One API (a one-source document, or SPEC --arazzo): the scheme's own variable.
        .env("OPENAPI_MCP_API_KEY", SHOP_KEY)
        // One API per source description.
        .env("OPENAPI_MCP_SHOP_API_KEY", SHOP_KEY)
        .env("OPENAPI_MCP_SHIP_BEARER", SHIP_TOKEN);
    cmd
}

async fn connect(args: &[&str]) -> Client {
    let transport = TokioChildProcess::new(command(args).configure(|c| {
        c.stderr(Stdio::null());
    }))
    .expect("spawn");
    ().serve(transport).await.expect("initialize")
}

async fn tool_names(client: &Client) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// `buy_cheapest_pet` with `status: available`: the outputs and the three requests in order
/// (returned, for their details).
fn bought_the_cheapest(
    r: &openapi_mcp_runtime::rmcp::model::CallToolResult,
    hosts: &Hosts,
) -> Vec<Recorded> {
    assert_ne!(r.is_error, Some(true), "{}", text(r));
    assert_eq!(
        r.structured_content,
        Some(json!({"petId": 2, "petName": "Tom", "price": 12, "orderId": 100, "discount": 0}))
    );
    let reqs = hosts.shop.requests();
    assert_eq!(
        paths(&reqs),
        [
            "GET /shop/pets?status=available&limit=3",
            "GET /shop/pets/2",
            "POST /shop/orders"
        ]
    );
    reqs
}

fn paths(reqs: &[Recorded]) -> Vec<String> {
    reqs.iter()
        .map(|r| format!("{} {}", r.method, r.target))
        .collect()
}

#[tokio::test]
async fn document_workflows_are_tools_and_pass_values_between_steps() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-arazzo-doc");
    hosts.write(&dir);
    let client = connect(&[&dir.path_arg("shop.arazzo.yaml")]).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for w in [
        "buy_cheapest_pet",
        "order_and_wait",
        "order_and_wait_on_response",
        "inventory_with_retry",
        "reserve_with_retry",
        "buy_sold_pet",
    ] {
        assert!(names.contains(&w), "{w} in {names:?}");
    }
    // The operations are served too (no --workflows-only).
    assert!(names.contains(&"shop_list_pets"), "{names:?}");
    let buy = tools
        .iter()
        .find(|t| t.name == "buy_cheapest_pet")
        .expect("tool");
    assert_eq!(buy.input_schema["required"], json!(["status"]));
    let ann = buy.annotations.clone().expect("annotations");
    assert_eq!(
        ann.read_only_hint,
        Some(false),
        "a POST step: not read-only"
    );

    let r = call(
        &client,
        "buy_cheapest_pet",
        json!({"status": "available", "coupon": "SAVE5"}),
    )
    .await;
    let reqs = bought_the_cheapest(&r, &hosts);
    assert_eq!(reqs[2].header("x-request-tag"), Some("cheapest-2"));
    assert_eq!(
        reqs[2].body_json(),
        json!({"petId": 2, "quantity": 1, "coupon": "SAVE5"})
    );
    assert!(reqs.iter().all(|r| r.header("x-api-key") == Some(SHOP_KEY)));

    // A goto loop on the step's own response: polls until `ready`.
    hosts.shop.clear();
    let r = call(&client, "order_and_wait_on_response", json!({"petId": 4})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(
        r.structured_content,
        Some(json!({"orderId": 101, "status": "ready"}))
    );
    assert_eq!(
        paths(&hosts.shop.requests()),
        [
            "POST /shop/orders",
            "GET /shop/orders/101",
            "GET /shop/orders/101",
            "GET /shop/orders/101"
        ]
    );
    // Invalid inputs: nothing sent.
    hosts.shop.clear();
    let r = call(&client, "buy_sold_pet", json!({"petId": "three"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("Invalid arguments"), "{}", text(&r));
    assert!(hosts.shop.requests().is_empty());
    client.cancel().await.expect("cancel");
}

#[tokio::test]
async fn retry_action_honours_retry_after_and_a_failed_criterion_names_the_step() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-arazzo-retry");
    hosts.write(&dir);
    let client = connect(&[&dir.path_arg("shop.arazzo.yaml")]).await;
    // A POST answered 429 + Retry-After: 1 (retryAfter says 5): sent again once, succeeds.
    let r = call(&client, "reserve_with_retry", json!({"petId": 1})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(r.structured_content, Some(json!({"reservation": "R-1"})));
    assert_eq!(
        paths(&hosts.shop.requests()),
        ["POST /shop/reservations", "POST /shop/reservations"]
    );

    hosts.shop.clear();
    let r = call(&client, "buy_sold_pet", json!({"petId": 3})).await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(
        t.contains("step `getPet`")
            && t.contains("HTTP 200")
            && t.contains("$response.body#/status == 'available'"),
        "{t}"
    );
    assert!(r.structured_content.is_none());
    // The order step never ran.
    assert_eq!(paths(&hosts.shop.requests()), ["GET /shop/pets/3"]);
    client.cancel().await.expect("cancel");
}

#[tokio::test]
async fn cross_source_workflow_sends_each_source_its_own_credentials() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-arazzo-cross");
    hosts.write(&dir);
    for (doc, tool) in [
        ("shop-and-ship.arazzo.yaml", "order_and_ship"),
        ("shop-and-ship-ids.arazzo.yaml", "order_and_ship_by_id"),
    ] {
        hosts.shop.clear();
        hosts.ship.clear();
        let client = connect(&[&dir.path_arg(doc)]).await;
        let r = call(&client, tool, json!({"petId": 2, "address": "1 Main St"})).await;
        assert_ne!(r.is_error, Some(true), "{doc}: {}", text(&r));
        let out = r.structured_content.clone().expect("outputs");
        assert_eq!(
            out["trackingNumber"],
            json!(format!("TRK-{}", out["orderId"]))
        );
        assert_eq!(out["state"], json!("in_transit"));
        let shop = hosts.shop.requests();
        let ship = hosts.ship.requests();
        assert_eq!(paths(&shop), ["POST /shop/orders"], "{doc}");
        assert_eq!(ship.len(), 2, "{doc}");
        assert!(shop.iter().all(
            |r| r.header("x-api-key") == Some(SHOP_KEY) && r.header("authorization").is_none()
        ));
        assert!(ship.iter().all(|r| r.header("authorization")
            == Some(&format!("Bearer {SHIP_TOKEN}"))
            && r.header("x-api-key").is_none()));
        let shown = serde_json::to_string(&r).expect("json");
        assert!(!shown.contains(SHOP_KEY) && !shown.contains(SHIP_TOKEN));
        client.cancel().await.expect("cancel");
    }
}

#[tokio::test]
async fn arazzo_flag_adds_workflows_and_workflows_only_serves_just_them() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-arazzo-flag");
    hosts.write(&dir);
    let spec = dir.path_arg("shop.openapi.yaml");
    let doc = dir.path_arg("shop.arazzo.yaml");
    let client = connect(&[&spec, "--arazzo", &doc]).await;
    let names = tool_names(&client).await;
    assert!(
        names.contains(&"shop_get_pet".to_string())
            && names.contains(&"order_and_wait".to_string()),
        "{names:?}"
    );
    client.cancel().await.expect("cancel");

    let client = connect(&[&spec, "--arazzo", &doc, "--workflows-only"]).await;
    let names = tool_names(&client).await;
    assert!(names.iter().all(|n| !n.starts_with("shop_")), "{names:?}");
    assert_eq!(names.len(), 6, "{names:?}");
    // The operations are not callable by name, the workflows still call them.
    let e = client
        .call_tool(
            openapi_mcp_runtime::rmcp::model::CallToolRequestParams::new("shop_get_pet")
                .with_arguments(json!({"petId": 2}).as_object().cloned().unwrap_or_default()),
        )
        .await;
    assert!(
        e.is_err(),
        "an unlisted operation is an unknown tool: {e:?}"
    );
    let r = call(&client, "order_and_wait", json!({"petId": 4})).await;
    assert_eq!(
        r.structured_content,
        Some(json!({"orderId": 100, "status": "ready"})),
        "{}",
        text(&r)
    );
    client.cancel().await.expect("cancel");
}

#[tokio::test]
async fn a_broken_workflow_is_skipped_alone_with_its_location() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-arazzo-broken");
    hosts.write(&dir);
    let broken = fixture("shop.arazzo.yaml").replace(
        "        operationId: getInventory\n",
        "        operationId: getInventry\n",
    );
    let doc = dir.write("broken.arazzo.yaml", &broken);
    let out = std::process::Command::new(binary())
        .args(["proxy", doc.to_str().expect("utf-8")])
        .env("OPENAPI_MCP_API_KEY", SHOP_KEY)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("broken.arazzo.yaml#/workflows/3/steps/0/operationId")
            && stderr.contains("inventoryWithRetry")
            && stderr.contains("1 of 6 workflows skipped"),
        "{stderr}"
    );
    let client = connect(&[doc.to_str().expect("utf-8")]).await;
    let names = tool_names(&client).await;
    assert!(
        !names.contains(&"inventory_with_retry".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"order_and_wait".to_string()), "{names:?}");
    let v: Value = json!(names.len());
    assert_eq!(
        v,
        json!(6 + 5),
        "6 operations and the 5 sound workflows: {names:?}"
    );
    client.cancel().await.expect("cancel");
}

#[tokio::test]
async fn a_credential_the_api_echoes_never_reaches_the_workflow_result() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-arazzo-echo");
    hosts.write(&dir);
    let doc = dir.write(
        "echo.arazzo.yaml",
        r#"arazzo: 1.0.1
info: {title: Echo, version: 1.0.0}
sourceDescriptions:
  - {name: shop, url: ./shop.openapi.yaml, type: openapi}
workflows:
  - workflowId: readOrder
    steps:
      - stepId: get
        operationId: getOrder
        parameters:
          - {name: orderId, in: path, value: 7}
        outputs:
          echo: $response.body#/echo
          whole: $response.body
    outputs:
      echo: $steps.get.outputs.echo
      whole: $steps.get.outputs.whole
"#,
    );
    let client = connect(&[doc.to_str().expect("utf-8")]).await;
    let r = call(&client, "read_order", json!({})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    // The key reached the API (the echo is there), and not the result.
    assert_eq!(hosts.shop.requests()[0].header("x-api-key"), Some(SHOP_KEY));
    let shown = serde_json::to_string(&r).expect("json");
    assert!(shown.contains("key="), "{shown}");
    assert!(!shown.contains(SHOP_KEY), "{shown}");
    client.cancel().await.expect("cancel");
}

// ---------------------------------------------------------------------------------------------
// Workflows in `--mode dynamic` and `--mode code` (#39): searched, described and called through
// the discovery tools, run through the same call path as in tools mode.

/// The search results' (kind, name) pairs.
fn found(r: &openapi_mcp_runtime::rmcp::model::CallToolResult) -> Vec<(String, String)> {
    r.structured_content.as_ref().expect("structured")["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|h| {
            (
                h["kind"].as_str().unwrap_or("?").to_string(),
                h["name"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn dynamic_mode_finds_describes_and_calls_workflows() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-arazzo-dynamic");
    hosts.write(&dir);
    let doc = dir.path_arg("shop.arazzo.yaml");
    let client = connect(&[&doc, "--mode", "dynamic"]).await;
    // Only the discovery tools are listed; the workflows are behind them.
    let names = tool_names(&client).await;
    assert_eq!(
        names,
        ["search_operations", "describe_operation", "call_operation"]
    );
    let direct = client
        .call_tool(
            openapi_mcp_runtime::rmcp::model::CallToolRequestParams::new("buy_cheapest_pet")
                .with_arguments(
                    json!({"status": "available"})
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                ),
        )
        .await;
    assert!(direct.is_err(), "not a listed tool: {direct:?}");

    // A request in plain words finds the workflow first, marked as one.
    let r = call(
        &client,
        "search_operations",
        json!({"query": "buy the cheapest available pet using a coupon"}),
    )
    .await;
    let hits = found(&r);
    assert_eq!(
        hits[0],
        ("workflow".to_string(), "buy_cheapest_pet".to_string()),
        "{}",
        text(&r)
    );
    assert!(hits.iter().any(|(k, _)| k == "operation"), "{hits:?}");
    let first = &r.structured_content.as_ref().expect("structured")["results"][0];
    assert_eq!(first["workflow"], json!("buyCheapestPet"));
    assert_eq!(first["steps"], json!(3));
    assert!(first.get("method").is_none() && first.get("path").is_none());
    assert!(
        text(&r).contains("workflow `buyCheapestPet`"),
        "{}",
        text(&r)
    );
    // A step's description is searched too ("cheapest first" is only there), and the polling
    // workflow by what it does.
    let r = call(
        &client,
        "search_operations",
        json!({"query": "wait until my order is ready"}),
    )
    .await;
    assert!(
        found(&r)
            .iter()
            .take(3)
            .any(|(k, n)| k == "workflow" && n.starts_with("order_and_wait")),
        "{}",
        text(&r)
    );

    let r = call(
        &client,
        "describe_operation",
        json!({"name": "buy_cheapest_pet"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let d = r.structured_content.clone().expect("structured");
    assert_eq!(d["kind"], json!("workflow"));
    assert_eq!(d["inputSchema"]["required"], json!(["status"]));
    assert_eq!(d["annotations"]["readOnlyHint"], json!(false));
    assert_eq!(
        d["steps"],
        json!([
            "findPets → shop_list_pets",
            "getPet → shop_get_pet",
            "placeOrder → shop_place_order"
        ])
    );

    // call_operation runs every step against the API, in order, with its credential.
    let r = call(
        &client,
        "call_operation",
        json!({"name": "buy_cheapest_pet", "arguments": {"status": "available", "coupon": "SAVE5"}}),
    )
    .await;
    let reqs = bought_the_cheapest(&r, &hosts);
    assert!(reqs.iter().all(|r| r.header("x-api-key") == Some(SHOP_KEY)));
    // Invalid inputs: checked against the workflow's inputs, nothing sent.
    hosts.shop.clear();
    let r = call(
        &client,
        "call_operation",
        json!({"name": "buy_sold_pet", "arguments": {"petId": "three"}}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("Invalid arguments"), "{}", text(&r));
    assert!(hosts.shop.requests().is_empty());
    // A failing step: the tool error of tools mode, word for word.
    let failed = call(
        &client,
        "call_operation",
        json!({"name": "buy_sold_pet", "arguments": {"petId": 3}}),
    )
    .await;
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(paths(&hosts.shop.requests()), ["GET /shop/pets/3"]);
    let tools_mode = connect(&[&doc]).await;
    let direct = call(&tools_mode, "buy_sold_pet", json!({"petId": 3})).await;
    assert_eq!(direct.is_error, Some(true));
    assert_eq!(text(&failed), text(&direct));
    assert!(text(&failed).contains("step `getPet`"), "{}", text(&failed));
    tools_mode.cancel().await.expect("cancel");
    // Operations are still searched and called as before; a near miss suggests the workflow.
    let r = call(
        &client,
        "call_operation",
        json!({"name": "shop_get_pet", "arguments": {"petId": 2}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let r = call(
        &client,
        "call_operation",
        json!({"name": "buy_cheapest_pets", "arguments": {}}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("buy_cheapest_pet"), "{}", text(&r));
    client.cancel().await.expect("cancel");
}

#[tokio::test]
async fn workflows_only_in_dynamic_mode_searches_and_calls_only_workflows() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-arazzo-dynamic-only");
    hosts.write(&dir);
    let spec = dir.path_arg("shop.openapi.yaml");
    let doc = dir.path_arg("shop.arazzo.yaml");
    let client = connect(&[
        &spec,
        "--arazzo",
        &doc,
        "--workflows-only",
        "--mode",
        "dynamic",
    ])
    .await;
    let r = call(&client, "search_operations", json!({"query": "list pets"})).await;
    let hits = found(&r);
    assert!(!hits.is_empty(), "{}", text(&r));
    assert!(hits.iter().all(|(k, _)| k == "workflow"), "{hits:?}");
    assert_eq!(
        r.structured_content.as_ref().expect("s")["total_workflows"],
        json!(6)
    );
    for (tool, args) in [
        ("describe_operation", json!({"name": "shop_get_pet"})),
        (
            "call_operation",
            json!({"name": "shop_get_pet", "arguments": {"petId": 2}}),
        ),
    ] {
        let r = call(&client, tool, args).await;
        assert_eq!(r.is_error, Some(true), "{tool}: {}", text(&r));
        assert!(text(&r).contains("Unknown operation"), "{}", text(&r));
    }
    assert!(hosts.shop.requests().is_empty());
    let r = call(
        &client,
        "call_operation",
        json!({"name": "order_and_wait", "arguments": {"petId": 4}}),
    )
    .await;
    assert_eq!(
        r.structured_content,
        Some(json!({"orderId": 100, "status": "ready"})),
        "{}",
        text(&r)
    );
    assert_eq!(
        paths(&hosts.shop.requests()),
        [
            "POST /shop/orders",
            "GET /shop/orders/100",
            "GET /shop/orders/100",
            "GET /shop/orders/100"
        ]
    );
    client.cancel().await.expect("cancel");
}

#[tokio::test]
async fn dynamic_mode_names_the_apis_of_a_cross_source_workflow() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-arazzo-dynamic-apis");
    hosts.write(&dir);
    let client = connect(&[
        &dir.path_arg("shop-and-ship.arazzo.yaml"),
        "--mode",
        "dynamic",
    ])
    .await;
    let r = call(
        &client,
        "search_operations",
        json!({"query": "order a pet and ship it"}),
    )
    .await;
    let first = r.structured_content.as_ref().expect("structured")["results"][0].clone();
    assert_eq!(first["name"], json!("order_and_ship"), "{}", text(&r));
    assert_eq!(first["apis"], json!(["shop", "ship"]));
    let r = call(
        &client,
        "call_operation",
        json!({"name": "order_and_ship", "arguments": {"petId": 2, "address": "1 Main St"}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(paths(&hosts.shop.requests()), ["POST /shop/orders"]);
    assert_eq!(hosts.ship.requests().len(), 2);
    assert!(
        hosts
            .ship
            .requests()
            .iter()
            .all(|r| r.header("authorization") == Some(&format!("Bearer {SHIP_TOKEN}")))
    );
    client.cancel().await.expect("cancel");
}

#[tokio::test]
async fn code_mode_scripts_call_workflows() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-arazzo-code");
    hosts.write(&dir);
    let doc = dir.path_arg("shop.arazzo.yaml");
    let client = connect(&[&doc, "--mode", "code"]).await;
    let r = call(
        &client,
        "search_operations",
        json!({"query": "buy the cheapest available pet"}),
    )
    .await;
    assert_eq!(found(&r)[0].1, "buy_cheapest_pet", "{}", text(&r));
    let r = call(
        &client,
        "describe_operation",
        json!({"name": "buy_cheapest_pet"}),
    )
    .await;
    let decl = text(&r);
    assert!(
        decl.contains("function api.buy_cheapest_pet(args: {")
            && decl.contains("status: string;")
            && decl.contains("coupon?: string;")
            && decl.contains("Workflow `buyCheapestPet`: 3 step(s)"),
        "{decl}"
    );
    // A script runs the workflow, then an operation with its output.
    let r = call(
        &client,
        "execute",
        json!({"code": "const o = await api.buy_cheapest_pet({status: 'available', coupon: 'SAVE5'}); const p = await api.shop_get_pet({petId: o.petId}); return {o, name: p.name};"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let s = r.structured_content.clone().expect("structured");
    assert_eq!(
        s["result"],
        json!({"o": {"petId": 2, "petName": "Tom", "price": 12, "orderId": 100, "discount": 0}, "name": "Tom"})
    );
    assert_eq!(
        paths(&hosts.shop.requests()),
        [
            "GET /shop/pets?status=available&limit=3",
            "GET /shop/pets/2",
            "POST /shop/orders",
            "GET /shop/pets/2"
        ]
    );
    // Each step is one of the script's calls, naming its workflow.
    let calls = s["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert_eq!(calls[2]["operation"], json!("shop_place_order"));
    assert_eq!(calls[2]["workflow"], json!("buy_cheapest_pet"));
    assert_eq!(calls[2]["status"], json!(201));
    assert!(calls[3].get("workflow").is_none());
    // A failing step throws with the tools-mode message and the step's status.
    hosts.shop.clear();
    let r = call(
        &client,
        "execute",
        json!({"code": "try { await api.buy_sold_pet({petId: 3}); return 'no'; } catch (e) { return {m: e.message, s: e.status}; }"}),
    )
    .await;
    let out = r.structured_content.clone().expect("structured")["result"].clone();
    assert!(
        out["m"]
            .as_str()
            .is_some_and(|m| m.starts_with("The workflow failed: ") && m.contains("step `getPet`")),
        "{out}"
    );
    assert_eq!(out["s"], json!(200));
    assert_eq!(paths(&hosts.shop.requests()), ["GET /shop/pets/3"]);
    client.cancel().await.expect("cancel");

    // The script's call budget counts each step: with 2 calls left, the third step is not sent.
    hosts.shop.clear();
    let client = connect(&[&doc, "--mode", "code", "--code-max-calls", "2"]).await;
    let r = call(
        &client,
        "execute",
        json!({"code": "return await api.buy_cheapest_pet({status: 'available'});"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(text(&r).contains("--code-max-calls"), "{}", text(&r));
    assert_eq!(
        paths(&hosts.shop.requests()),
        [
            "GET /shop/pets?status=available&limit=3",
            "GET /shop/pets/2"
        ]
    );
    client.cancel().await.expect("cancel");

    // --workflows-only: a script's `api` has the workflows alone.
    let client = connect(&[&doc, "--mode", "code", "--workflows-only"]).await;
    let r = call(
        &client,
        "execute",
        json!({"code": "return Object.keys(api).sort();"}),
    )
    .await;
    assert_eq!(
        r.structured_content.clone().expect("structured")["result"],
        json!([
            "buy_cheapest_pet",
            "buy_sold_pet",
            "inventory_with_retry",
            "order_and_wait",
            "order_and_wait_on_response",
            "reserve_with_retry"
        ]),
        "{}",
        text(&r)
    );
    client.cancel().await.expect("cancel");
}
