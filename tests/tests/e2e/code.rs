//! `--mode code`: `search_operations`, `describe_operation` (TypeScript declarations) and
//! `execute` through a real rmcp client; scripted multi-step tasks against the recording
//! upstream (every `api.*` call validated and sent like a tool call), and hostile scripts, each
//! stopped with a clear error while the server goes on serving.

use std::time::{Duration, Instant};

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_runtime::modes::code::{CodeLimits, EXECUTE};
use openapi_mcp_runtime::modes::dynamic::{DESCRIBE, SEARCH, ToolMode};
use openapi_mcp_runtime::rmcp::model::CallToolResult;
use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
use openapi_mcp_tests::harness::{Client, call, connect_in_process, proxy_server_with, spec, text};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::{Value, json};

async fn petstore(base: &str, limits: CodeLimits) -> ProxyServer {
    proxy_server_with(
        &spec("petstore.yaml"),
        base,
        ToolOptions::default(),
        &[("api_key", "s3cret")],
        ServerOptions {
            mode: ToolMode::Code(limits),
            ..Default::default()
        },
    )
    .await
}

/// Limits small enough for hostile scripts to hit them quickly.
fn tight() -> CodeLimits {
    CodeLimits {
        timeout: Duration::from_millis(1500),
        memory: 16 << 20,
        max_calls: 3,
        max_output: 4096,
    }
}

async fn execute(client: &Client, code: &str) -> CallToolResult {
    call(client, EXECUTE, json!({ "code": code })).await
}

/// The script's result (the call must have succeeded).
async fn run_ok(client: &Client, code: &str) -> Value {
    let r = execute(client, code).await;
    assert_eq!(r.is_error, Some(false), "{code}\n=> {}", text(&r));
    r.structured_content.expect("structured result")["result"].clone()
}

/// The error text of a script that must fail.
async fn run_err(client: &Client, code: &str) -> String {
    let r = execute(client, code).await;
    assert_eq!(r.is_error, Some(true), "{code}\n=> {}", text(&r));
    text(&r)
}

fn pets() -> Value {
    json!([
        {"id": 1, "name": "Rex", "tag": "dog", "status": "available"},
        {"id": 2, "name": "Tom", "tag": "cat", "status": "pending"},
        {"id": 3, "name": "Kit", "tag": "cat", "status": "pending"},
        {"id": 4, "name": "Bo", "tag": "dog", "status": "sold"}
    ])
}

/// A petstore upstream: the list above, PUT echoes the pet with its id, pet 999 is missing.
fn serve_pets(up: &Upstream) {
    up.respond(|r| {
        let id = r.path().strip_prefix("/api/pets/").map(str::to_string);
        match (r.method.as_str(), r.path(), id.as_deref()) {
            ("GET", "/api/pets", _) => Reply::json(200, pets()),
            (_, _, Some("999")) => Reply::json(404, json!({"code": 404, "message": "no such pet"})),
            ("PUT", _, Some(id)) => {
                let mut pet = r.body_json();
                pet["id"] = json!(id.parse::<u64>().unwrap_or(0));
                Reply::json(200, pet)
            }
            ("GET", _, Some(id)) => Reply::json(
                200,
                json!({"id": id.parse::<u64>().unwrap_or(0), "name": "Rex", "status": "available"}),
            ),
            _ => Reply::json(404, json!({"code": 404, "message": "not here"})),
        }
    });
}

#[tokio::test]
async fn code_mode_lists_search_describe_execute() {
    let up = Upstream::start().await;
    let client = connect_in_process(petstore(&up.url("/api"), CodeLimits::default()).await).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, [SEARCH, DESCRIBE, EXECUTE]);
    let exec = &tools[2];
    let d = exec.description.as_deref().unwrap_or_default();
    assert!(
        d.contains("api.<name>") && d.contains("50 API calls"),
        "{d}"
    );
    assert_eq!(
        exec.annotations.as_ref().and_then(|a| a.destructive_hint),
        Some(true)
    );
    let info = client.peer_info().expect("server info");
    let instructions = info.instructions.as_deref().unwrap_or_default();
    assert!(instructions.contains(EXECUTE), "{instructions}");

    let r = call(&client, SEARCH, json!({"query": "update a pet"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert!(text(&r).contains("`execute` script"), "{}", text(&r));

    let r = call(&client, DESCRIBE, json!({"name": "petstore_update_pet"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let decl = text(&r);
    assert!(
        decl.contains("function api.petstore_update_pet(args: {\n  /** The id of the pet */\n  petId: number;\n  name: string;\n  tag?: string;\n  status?: \"available\" | \"pending\" | \"sold\";\n}): Promise<{"),
        "{decl}"
    );
    assert!(decl.contains(" * PUT /pets/{petId}"), "{decl}");
    // A list wrapped as {"result": [...]} for MCP is the array itself in a script.
    let r = call(&client, DESCRIBE, json!({"name": "petstore_list_pets"})).await;
    let decl = text(&r);
    assert!(decl.contains("type Pet = {"), "{decl}");
    assert!(
        decl.contains("function api.petstore_list_pets(args?: {"),
        "{decl}"
    );
    assert!(decl.contains("}): Promise<Pet[]>;"), "{decl}");
    assert_eq!(
        r.structured_content.expect("structured")["declaration"]
            .as_str()
            .map(|d| decl.starts_with(d)),
        Some(true)
    );
    // Unknown names get the usual suggestions.
    let r = call(&client, DESCRIBE, json!({"name": "petstore_update_pets"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("petstore_update_pet"), "{}", text(&r));
    // No call_operation in code mode.
    let r = client
        .call_tool(
            openapi_mcp_runtime::rmcp::model::CallToolRequestParams::new("call_operation")
                .with_arguments(serde_json::Map::new()),
        )
        .await;
    assert!(r.is_err(), "call_operation is not a tool in code mode");
}

#[tokio::test]
async fn a_script_lists_filters_and_updates_each_in_one_call() {
    let up = Upstream::start().await;
    serve_pets(&up);
    let client = connect_in_process(petstore(&up.url("/api"), CodeLimits::default()).await).await;
    let code = r#"
        const pets = await api.petstore_list_pets({limit: 10});
        const pending = pets.filter(p => p.status === 'pending');
        const done = [];
        for (const p of pending) {
          const u = await api.petstore_update_pet({petId: p.id, name: p.name, tag: p.tag, status: 'sold'});
          done.push(`${u.id}:${u.name}:${u.status}`);
        }
        console.log('updated', done.length, {ids: pending.map(p => p.id)});
        let missing;
        try {
          await api.petstore_show_pet_by_id({petId: 999});
        } catch (e) {
          missing = {status: e.status, operation: e.operation, first: e.message.split('\n')[0]};
        }
        return {done, missing};
    "#;
    let r = execute(&client, code).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let s = r.structured_content.clone().expect("structured");
    assert_eq!(
        s["result"],
        json!({
            "done": ["2:Tom:sold", "3:Kit:sold"],
            "missing": {"status": 404, "operation": "petstore_show_pet_by_id", "first": "HTTP 404 Not Found"}
        })
    );
    assert_eq!(
        s["calls"],
        json!([
            {"operation": "petstore_list_pets", "status": 200, "ok": true},
            {"operation": "petstore_update_pet", "status": 200, "ok": true},
            {"operation": "petstore_update_pet", "status": 200, "ok": true},
            {"operation": "petstore_show_pet_by_id", "status": 404, "ok": false}
        ])
    );
    assert_eq!(s["logs"], json!(["updated 2 {\"ids\":[2,3]}"]));
    // What the API received: exactly the tool calls' requests, with the configured credential.
    let reqs = up.requests();
    let lines: Vec<String> = reqs
        .iter()
        .map(|r| format!("{} {}", r.method, r.target))
        .collect();
    assert_eq!(
        lines,
        [
            "GET /api/pets?limit=10",
            "PUT /api/pets/2",
            "PUT /api/pets/3",
            "GET /api/pets/999"
        ]
    );
    assert!(reqs.iter().all(|r| r.header("x-api-key") == Some("s3cret")));
    assert_eq!(
        reqs[1].body_json(),
        json!({"name": "Tom", "tag": "cat", "status": "sold"})
    );
    assert!(!text(&r).contains("s3cret"), "no credential in the result");
}

#[tokio::test]
async fn invalid_arguments_throw_the_tool_message_and_send_nothing() {
    let up = Upstream::start().await;
    serve_pets(&up);
    let client = connect_in_process(petstore(&up.url("/api"), CodeLimits::default()).await).await;
    let caught = run_ok(
        &client,
        "try { await api.petstore_list_pets({limit: 'many'}); } catch (e) { return e.message; }",
    )
    .await;
    let caught = caught.as_str().unwrap_or_default();
    assert!(
        caught.starts_with(
            "Invalid arguments for `petstore_list_pets`; nothing was sent to the API."
        ) && caught.contains("limit"),
        "{caught}"
    );
    // Uncaught, it ends the script with the same message, and the calls made so far.
    let t = run_err(
        &client,
        "await api.petstore_list_pets({});\nawait api.petstore_create_pet({tag: 'x'});",
    )
    .await;
    assert!(
        t.starts_with("The script failed: the script threw Error: Invalid arguments for `petstore_create_pet`; nothing was sent to the API."),
        "{t}"
    );
    assert!(t.contains("name"), "{t}");
    assert!(
        t.contains(
            "API calls made (2): petstore_list_pets → 200, petstore_create_pet → no HTTP response."
        ),
        "{t}"
    );
    assert!(t.contains("(script:2:"), "the script's line: {t}");
    assert!(!t.contains("(api:"), "not the api wrapper's: {t}");
    // Only the valid call reached the API.
    assert_eq!(up.requests().len(), 1);
    // Not an object of arguments.
    let t = run_ok(
        &client,
        "try { await api.petstore_list_pets(5); } catch (e) { return e.message; }",
    )
    .await;
    assert!(
        t.as_str()
            .unwrap_or_default()
            .contains("takes one object of arguments"),
        "{t}"
    );
    assert_eq!(up.requests().len(), 1);
}

#[tokio::test]
async fn hostile_scripts_are_contained_and_the_server_goes_on() {
    let up = Upstream::start().await;
    serve_pets(&up);
    let client = connect_in_process(petstore(&up.url("/api"), tight()).await).await;
    let cases: &[(&str, &str)] = &[
        ("while (true) {}", "time limit of 1.5 s (--code-timeout)"),
        (
            "for (;;) { try { while (true) {} } catch (e) {} }",
            "time limit",
        ),
        (
            "const a = []; for (;;) a.push(new Array(1e5).fill(a.length));",
            "ran out of memory",
        ),
        (
            "const s = 'x'.repeat(1 << 20); const a = []; for (;;) a.push(s + a.length);",
            "ran out of memory",
        ),
        ("let s = 'x'; for (;;) s += s;", "string too long"),
        (
            "function f() { return f() + 1; } return f();",
            "stack overflow",
        ),
        ("return 'x'.repeat(100000);", "--max-response-bytes"),
        (
            "for (let i = 0; i < 5; i++) await api.petstore_list_pets({});",
            "its limit (--code-max-calls)",
        ),
        (
            "return require('fs');",
            "ReferenceError: require is not defined",
        ),
        (
            "return await fetch('http://127.0.0.1:1/');",
            "ReferenceError: fetch is not defined",
        ),
        ("setTimeout(() => {}, 10);", "setTimeout is not defined"),
        ("const os = await import('os'); return os.getpid();", "os"),
        ("return std.loadFile('/etc/passwd');", "std is not defined"),
        (
            "await new Promise(resolve => {});",
            "awaited something that never finishes",
        ),
        (
            "Object.defineProperty(Object.prototype, 'then', {value() {}}); return await api.petstore_list_pets({});",
            "awaited something that never finishes",
        ),
        ("throw {secret: 1}", "the script threw {\"secret\":1}"),
        ("return (", "SyntaxError"),
    ];
    for (code, expected) in cases {
        let started = Instant::now();
        let t = run_err(&client, code).await;
        assert!(t.contains(expected), "{code}\n=> {t}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{code} took {:?}",
            started.elapsed()
        );
        // The server still serves, and the next script runs from a clean slate.
        assert_eq!(
            run_ok(&client, "return typeof Object.prototype.then;").await,
            "undefined"
        );
    }
    // What a script can reach: its own global object and `api`; no host, modules or timers.
    let reach = run_ok(
        &client,
        r#"
        const g = globalThis.constructor.constructor('return this')();
        const names = ['require', 'process', 'fetch', 'XMLHttpRequest', 'WebSocket', 'setTimeout',
          'setInterval', 'std', 'os', 'Deno', 'Bun', 'print', 'console', 'api'];
        const out = {};
        for (const n of names) out[n] = typeof g[n];
        try { api.petstore_list_pets = null; } catch (e) { out.assign = e.name; }
        out.frozen = Object.isFrozen(api) && typeof api.petstore_list_pets === 'function';
        out.sameGlobal = g === globalThis;
        return out;
    "#,
    )
    .await;
    assert_eq!(
        reach,
        json!({
            "require": "undefined", "process": "undefined", "fetch": "undefined",
            "XMLHttpRequest": "undefined", "WebSocket": "undefined", "setTimeout": "undefined",
            "setInterval": "undefined", "std": "undefined", "os": "undefined",
            "Deno": "undefined", "Bun": "undefined", "print": "undefined",
            "console": "object", "api": "object", "assign": "TypeError", "frozen": true,
            "sameGlobal": true
        })
    );
    // Only the three calls of the max-calls case and the one of the `then` case reached the API.
    assert_eq!(up.requests().len(), 4);
}

#[tokio::test]
async fn other_clients_are_served_while_a_script_runs_and_it_is_stopped_at_its_limit() {
    let up = Upstream::start().await;
    serve_pets(&up);
    let limits = CodeLimits {
        timeout: Duration::from_secs(2),
        ..tight()
    };
    let server = petstore(&up.url("/api"), limits).await;
    let busy = connect_in_process(server.clone()).await;
    let other = connect_in_process(server).await;
    let started = Instant::now();
    let runaway = tokio::spawn(async move { execute(&busy, "while (true) {}").await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Meanwhile: a search and a whole script with an API call, answered long before the limit.
    let t0 = Instant::now();
    let r = call(&other, SEARCH, json!({"query": "list pets"})).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(
        run_ok(&other, "return (await api.petstore_list_pets({})).length;").await,
        4
    );
    assert!(
        t0.elapsed() < Duration::from_secs(1),
        "served in {:?}",
        t0.elapsed()
    );
    assert!(
        !runaway.is_finished(),
        "the runaway script is still running"
    );
    let r = runaway.await.expect("task");
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("time limit of 2 s"), "{}", text(&r));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(4),
        "stopped after {took:?}"
    );
}

#[tokio::test]
async fn confirm_applies_to_calls_in_scripts() {
    let up = Upstream::start().await;
    serve_pets(&up);
    let server = proxy_server_with(
        &spec("petstore.yaml"),
        &up.url("/api"),
        ToolOptions::default(),
        &[("api_key", "s3cret")],
        ServerOptions {
            mode: ToolMode::Code(CodeLimits::default()),
            confirm: openapi_mcp_runtime::server::confirm::Confirm::Destructive,
            ..Default::default()
        },
    )
    .await;
    // This client cannot be asked (no elicitation): the destructive call is refused, the
    // read-only one goes through.
    let client = connect_in_process(server).await;
    let r = run_ok(
        &client,
        "const n = (await api.petstore_list_pets({})).length;\n\
         try { await api.petstore_delete_pet({petId: 2}); return 'deleted'; }\n\
         catch (e) { return {n, refused: e.message}; }",
    )
    .await;
    assert_eq!(r["n"], 4);
    let refused = r["refused"].as_str().unwrap_or_default();
    assert!(
        refused.contains("--confirm destructive") && refused.contains("Nothing was sent"),
        "{refused}"
    );
    let sent: Vec<String> = up.requests().iter().map(|r| r.method.clone()).collect();
    assert_eq!(sent, ["GET"]);
}

#[tokio::test]
async fn api_calls_in_scripts_are_counted_like_tool_calls() {
    use openapi_mcp_runtime::observe::{Metrics, Observe};
    let up = Upstream::start().await;
    serve_pets(&up);
    let metrics = std::sync::Arc::new(Metrics::new());
    let server = proxy_server_with(
        &spec("petstore.yaml"),
        &up.url("/api"),
        ToolOptions::default(),
        &[("api_key", "s3cret")],
        ServerOptions {
            mode: ToolMode::Code(CodeLimits::default()),
            observe: Observe {
                metrics: Some(std::sync::Arc::clone(&metrics)),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .await;
    let client = connect_in_process(server).await;
    run_ok(
        &client,
        "await api.petstore_list_pets({});\n\
         try { await api.petstore_show_pet_by_id({petId: 999}); } catch (e) {}\n\
         try { await api.petstore_show_pet_by_id({petId: 'x'}); } catch (e) {}\n\
         return 1;",
    )
    .await;
    let text = metrics.encode();
    for line in [
        r#"openapi_mcp_tool_calls_total{tool="petstore_list_pets",outcome="ok"} 1"#,
        r#"openapi_mcp_tool_calls_total{tool="petstore_show_pet_by_id",outcome="upstream_4xx"} 1"#,
        r#"openapi_mcp_tool_calls_total{tool="petstore_show_pet_by_id",outcome="invalid"} 1"#,
        r#"openapi_mcp_tool_calls_total{tool="execute",outcome="ok"} 1"#,
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
}
