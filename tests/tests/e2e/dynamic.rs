//! `--mode dynamic` / `--mode hybrid`: the three discovery tools through a real rmcp client, the
//! requests they send to the recording upstream, and search quality on real large specs.

use std::path::Path;

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_runtime::filter::Pattern;
use openapi_mcp_runtime::modes::dynamic::{CALL, DESCRIBE, SEARCH, ToolMode};
use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
use openapi_mcp_tests::harness::{
    Client, call, connect_in_process, proxy_server_with, shared_specs, spec, text,
};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::{Value, json};

fn mode_opts(mode: ToolMode) -> ServerOptions {
    ServerOptions {
        mode,
        ..Default::default()
    }
}

async fn petstore(base: &str, mode: ToolMode) -> ProxyServer {
    proxy_server_with(
        &spec("petstore.yaml"),
        base,
        ToolOptions::default(),
        &[("api_key", "s3cret")],
        mode_opts(mode),
    )
    .await
}

fn pins(globs: &[&str]) -> ToolMode {
    ToolMode::Hybrid {
        pins: globs
            .iter()
            .map(|g| Pattern::new(g).expect("glob"))
            .collect(),
    }
}

/// The names of `search_operations` results, best first.
async fn search(client: &Client, query: &str, limit: usize) -> Vec<String> {
    let r = call(client, SEARCH, json!({"query": query, "limit": limit})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    r.structured_content
        .as_ref()
        .and_then(|s| s["results"].as_array())
        .map(|a| {
            a.iter()
                .map(|h| h["name"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn dynamic_mode_lists_three_discovery_tools() {
    let up = Upstream::start().await;
    let client = connect_in_process(petstore(&up.url("/api"), ToolMode::Dynamic).await).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, [SEARCH, DESCRIBE, CALL]);
    for t in &tools {
        assert!(t.title.is_some(), "{} has a title", t.name);
        let d = t.description.as_deref().unwrap_or_default();
        assert!(d.contains(SEARCH) || d.contains(DESCRIBE), "{d}");
    }
    let ann = |i: usize| tools[i].annotations.clone().expect("annotations");
    assert_eq!(ann(0).read_only_hint, Some(true));
    assert_eq!(ann(1).read_only_hint, Some(true));
    assert_eq!(ann(2).read_only_hint, Some(false));
    assert_eq!(ann(2).open_world_hint, Some(true));
    let info = client.peer_info().expect("server info");
    assert!(
        info.instructions
            .as_deref()
            .unwrap_or_default()
            .contains(SEARCH),
        "{:?}",
        info.instructions
    );
}

#[tokio::test]
async fn search_ranks_and_reports_no_match() {
    let up = Upstream::start().await;
    let client = connect_in_process(petstore(&up.url("/api"), ToolMode::Dynamic).await).await;
    let r = call(&client, SEARCH, json!({"query": "get a pet by its id"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let s = r.structured_content.clone().expect("structured results");
    assert_eq!(s["results"][0]["name"], "petstore_show_pet_by_id", "{s}");
    assert_eq!(s["results"][0]["method"], "GET");
    assert_eq!(s["results"][0]["path"], "/pets/{petId}");
    assert_eq!(s["results"][0]["summary"], "Info for a specific pet");
    // Enough to call without describing first: the required arguments and their types.
    assert_eq!(
        s["results"][0]["required_arguments"], "petId: integer",
        "{s}"
    );
    let t = text(&r);
    assert!(
        t.starts_with(
            "1. petstore_show_pet_by_id — GET /pets/{petId} — Info for a specific pet\n   required: petId: integer\n"
        ),
        "{t}"
    );
    let list = call(
        &client,
        SEARCH,
        json!({"query": "list all pets", "limit": 1}),
    )
    .await;
    let s = list.structured_content.clone().expect("structured results");
    assert_eq!(s["results"][0]["name"], "petstore_list_pets", "{s}");
    assert_eq!(
        s["results"][0]["required_arguments"], "none (+2 optional)",
        "{s}"
    );
    assert_eq!(
        search(&client, "delete pet", 1).await,
        ["petstore_delete_pet"]
    );
    assert_eq!(
        search(&client, "add a new pet", 1).await,
        ["petstore_create_pet"]
    );
    assert!(search(&client, "pets", 50).await.len() == 6);

    let r = call(&client, SEARCH, json!({"query": "invoice refund xyzzy"})).await;
    assert_eq!(r.is_error, Some(false), "no match is not an error");
    assert!(text(&r).starts_with("No operation matches"), "{}", text(&r));
    assert_eq!(
        r.structured_content.expect("structured")["results"],
        json!([])
    );

    // The discovery tools validate their own arguments too.
    let r = call(&client, SEARCH, json!({"q": "pets"})).await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(
        t.contains("unknown argument `q`") && t.contains("\"query\" is a required property"),
        "{t}"
    );
    assert!(up.requests().is_empty());
}

/// `area`: a query among one area's operations, `*` (or a query none of them matches) lists
/// them, an unknown area names the areas there are; nothing reaches the API.
#[tokio::test]
async fn search_within_an_area_and_browse_it() {
    let up = Upstream::start().await;
    let client = connect_in_process(petstore(&up.url("/api"), ToolMode::Dynamic).await).await;
    let r = call(&client, SEARCH, json!({"query": "*", "area": "Pets"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let s = r.structured_content.clone().expect("structured");
    assert_eq!(s["area_operations"], 6, "{s}");
    assert_eq!(s["results"].as_array().map(Vec::len), Some(6), "{s}");
    assert!(
        text(&r).starts_with("The operations of area \"Pets\":\n1. "),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        SEARCH,
        json!({"query": "*", "area": "pets", "limit": 2}),
    )
    .await;
    assert!(
        text(&r).starts_with(
            "The operations of area \"pets\", the first 2 of 6 (a query narrows them):"
        ),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        SEARCH,
        json!({"query": "delete pet", "area": "pets"}),
    )
    .await;
    let s = r.structured_content.clone().expect("structured");
    assert_eq!(s["results"][0]["name"], "petstore_delete_pet", "{s}");
    assert!(
        s.get("area_operations").is_none(),
        "ranked, not listed: {s}"
    );
    let r = call(&client, SEARCH, json!({"query": "xyzzy", "area": "pets"})).await;
    assert!(
        text(&r).starts_with("No operation of area \"pets\" matches \"xyzzy\"; its operations:"),
        "{}",
        text(&r)
    );
    let r = call(&client, SEARCH, json!({"query": "pets", "area": "stores"})).await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        text(&r),
        "Unknown area \"stores\". Areas (operations): pets (6)."
    );
    assert!(up.requests().is_empty());

    // GitHub's spec (1,223 operations), when the shared specs are there.
    let Some(path) = shared_specs()
        .map(|d| d.join("github-octokit-2026-3.0.json"))
        .filter(|p| p.exists())
    else {
        println!("SKIPPED: github-octokit-2026-3.0.json not found");
        return;
    };
    let server = dynamic_proxy(&path).await;
    let state = server.state();
    let client = connect_in_process(server).await;
    let r = call(
        &client,
        SEARCH,
        json!({"query": "lock it", "area": "issues", "limit": 3}),
    )
    .await;
    let s = r.structured_content.clone().expect("structured");
    let names: Vec<&str> = s["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|h| h["name"].as_str().unwrap_or_default())
        .collect();
    assert!(!names.is_empty(), "{s}");
    for n in &names {
        let def = state
            .set
            .tools
            .iter()
            .find(|t| t.name() == *n)
            .expect("a tool");
        assert!(
            def.tags.iter().any(|t| t == "issues"),
            "{n}: {:?}",
            def.tags
        );
    }
    assert_eq!(names[0], "github_issues_lock", "{s}");
    let r = call(&client, SEARCH, json!({"query": "*", "area": "emojis"})).await;
    let s = r.structured_content.clone().expect("structured");
    assert_eq!(s["area_operations"], 1, "{s}");
    let r = call(
        &client,
        SEARCH,
        json!({"query": "*", "area": "no such area"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(
        t.starts_with("Unknown area \"no such area\". Areas (operations): repos ("),
        "{t}"
    );
}

#[tokio::test]
async fn describe_matches_the_tools_mode_definition() {
    let up = Upstream::start().await;
    let tools_client = connect_in_process(petstore(&up.url("/api"), ToolMode::Tools).await).await;
    let dyn_client = connect_in_process(petstore(&up.url("/api"), ToolMode::Dynamic).await).await;
    let tools = tools_client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 6);
    for tool in &tools {
        let r = call(&dyn_client, DESCRIBE, json!({"name": tool.name})).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        let d = r.structured_content.expect("structured");
        assert_eq!(
            d["inputSchema"],
            Value::Object((*tool.input_schema).clone())
        );
        assert_eq!(
            d.get("outputSchema").cloned(),
            tool.output_schema
                .as_ref()
                .map(|o| Value::Object((**o).clone()))
        );
        assert_eq!(d["description"], json!(tool.description));
        assert_eq!(
            d["annotations"],
            serde_json::to_value(&tool.annotations).expect("annotations serialize")
        );
    }
    let r = call(&dyn_client, DESCRIBE, json!({"name": "petstore_show_pet"})).await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(
        t.contains("Unknown operation `petstore_show_pet`")
            && t.contains("petstore_show_pet_by_id"),
        "{t}"
    );
}

/// Dynamic mode serves large APIs from a handful of schemas: searching bundles none, describing
/// or calling an operation bundles that operation's only, and tools mode bundles every one.
#[tokio::test]
async fn dynamic_mode_bundles_only_the_schemas_it_uses() {
    let up = Upstream::start().await;
    let materialized = |server: &ProxyServer| -> Vec<String> {
        server
            .state()
            .set
            .tools
            .iter()
            .filter(|t| t.is_materialized())
            .map(|t| t.name().to_string())
            .collect()
    };
    let server = petstore(&up.url("/api"), ToolMode::Dynamic).await;
    assert!(server.state().set.tools.len() > 2);
    assert_eq!(materialized(&server), Vec::<String>::new());
    let client = connect_in_process(server.clone()).await;
    assert!(!search(&client, "list pets", 5).await.is_empty());
    assert_eq!(materialized(&server), Vec::<String>::new());
    let r = call(
        &client,
        DESCRIBE,
        json!({"name": "petstore_show_pet_by_id"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(materialized(&server), vec!["petstore_show_pet_by_id"]);
    let r = call(
        &client,
        CALL,
        json!({"name": "petstore_list_pets", "arguments": {"limit": "many"}}),
    )
    .await;
    assert_eq!(
        r.is_error,
        Some(true),
        "an invalid call is refused: {}",
        text(&r)
    );
    let mut now = materialized(&server);
    now.sort();
    assert_eq!(now, vec!["petstore_list_pets", "petstore_show_pet_by_id"]);

    // A `--watch` reload compares every operation without keeping what it bundled for that.
    let loaded = openapi_mcp_convert::load(&openapi_mcp_convert::SpecSource::Path(spec(
        "petstore.yaml",
    )))
    .await
    .expect("spec");
    let same = openapi_mcp_convert::convert(&loaded, &ToolOptions::default()).tools;
    assert!(
        !server.replace_tools(same).await,
        "same spec: nothing changed"
    );
    assert_eq!(materialized(&server), Vec::<String>::new());
    let strict = ToolOptions {
        output_schema: openapi_mcp_convert::OutputSchemaMode::Strict,
        ..Default::default()
    };
    let other = openapi_mcp_convert::convert(&loaded, &strict).tools;
    assert!(
        server.replace_tools(other).await,
        "only output schemas differ"
    );
    assert_eq!(materialized(&server), Vec::<String>::new());

    let tools = petstore(&up.url("/api"), ToolMode::Tools).await;
    assert_eq!(materialized(&tools).len(), tools.state().set.tools.len());
}

#[tokio::test]
async fn call_operation_sends_the_same_request_as_the_tool() {
    let up = Upstream::start().await;
    up.respond(|r| match (r.method.as_str(), r.path()) {
        ("GET", "/api/pets") => Reply::json(200, json!([{"id": 1, "name": "Rex"}])),
        ("POST", "/api/pets") => Reply::json(201, json!({"id": 7, "name": "Tom"})),
        _ => Reply::json(404, json!({"code": 404, "message": "no such pet"})),
    });
    let tools_client = connect_in_process(petstore(&up.url("/api"), ToolMode::Tools).await).await;
    let dyn_client = connect_in_process(petstore(&up.url("/api"), ToolMode::Dynamic).await).await;
    let cases = [
        ("petstore_create_pet", json!({"name": "Tom", "tag": "cat"})),
        (
            "petstore_list_pets",
            json!({"limit": 2, "tags": ["a b", "c"]}),
        ),
        ("petstore_show_pet_by_id", json!({"petId": 8})),
        ("petstore_delete_pet", json!({"petId": 3})),
    ];
    for (name, args) in cases {
        up.clear();
        let direct = call(&tools_client, name, args.clone()).await;
        let via = call(&dyn_client, CALL, json!({"name": name, "arguments": args})).await;
        let reqs = up.requests();
        assert_eq!(reqs.len(), 2, "{name}");
        let (a, b) = (&reqs[0], &reqs[1]);
        assert_eq!(a.method, b.method, "{name}");
        assert_eq!(a.target, b.target, "{name}");
        assert_eq!(a.body, b.body, "{name}");
        assert_eq!(a.headers, b.headers, "{name}");
        assert_eq!(b.header("x-api-key"), Some("s3cret"));
        assert_eq!(direct, via, "{name}: same result");
    }
    // `arguments` may be left out for operations without required arguments.
    up.clear();
    let r = call(&dyn_client, CALL, json!({"name": "petstore_list_pets"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(up.last().target, "/api/pets");
}

#[tokio::test]
async fn call_operation_rejects_invalid_arguments_and_unknown_names() {
    let up = Upstream::start().await;
    let tools_client = connect_in_process(petstore(&up.url("/api"), ToolMode::Tools).await).await;
    let dyn_client = connect_in_process(petstore(&up.url("/api"), ToolMode::Dynamic).await).await;
    let bad = json!({"limit": 1000, "tag": "x", "tags": ["ok", 2]});
    let via = call(
        &dyn_client,
        CALL,
        json!({"name": "petstore_list_pets", "arguments": bad}),
    )
    .await;
    assert_eq!(via.is_error, Some(true));
    let t = text(&via);
    assert!(t.contains("nothing was sent"), "{t}");
    assert!(t.contains("`limit`"), "{t}");
    assert!(t.contains("`tags[1]`"), "{t}");
    assert!(
        t.contains("unknown argument `tag`: did you mean `tags`?"),
        "{t}"
    );
    let direct = call(&tools_client, "petstore_list_pets", bad).await;
    assert_eq!(text(&direct), t, "same messages as the tool itself");

    let r = call(
        &dyn_client,
        CALL,
        json!({"name": "petstore_show_pet_by_id"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("petId"), "{}", text(&r));

    let r = call(
        &dyn_client,
        CALL,
        json!({"name": "petstore_show_pet_by_id", "arguments": [7]}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).contains("`arguments`: [7] is not of type \"object\""),
        "{}",
        text(&r)
    );

    let r = call(
        &dyn_client,
        CALL,
        json!({"name": "petstore_delete_pets", "arguments": {"petId": 1}}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(
        t.contains("Unknown operation `petstore_delete_pets`") && t.contains("petstore_delete_pet"),
        "{t}"
    );
    assert!(up.requests().is_empty(), "nothing reaches the API");
}

#[tokio::test]
async fn hybrid_pins_operations_as_tools() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"id": 7, "name": "Tom"})));
    let server = petstore(
        &up.url("/api"),
        pins(&["petstore_list_pets", "showPetById"]),
    )
    .await;
    let client = connect_in_process(server).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "petstore_list_pets",
            "petstore_show_pet_by_id",
            SEARCH,
            DESCRIBE,
            CALL
        ]
    );
    // Search covers the rest only.
    let found = search(&client, "pet", 50).await;
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(!found.iter().any(|n| n == "petstore_show_pet_by_id"));
    let r = call(&client, "petstore_show_pet_by_id", json!({"petId": 7})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(up.last().target, "/api/pets/7");
    let r = call(
        &client,
        CALL,
        json!({"name": "petstore_update_pet", "arguments": {"petId": 7, "name": "Tom"}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        (up.last().method.as_str(), up.last().path()),
        ("PUT", "/api/pets/7")
    );

    // Pinning every operation (by tag) leaves nothing to discover: plain tools.
    let client = connect_in_process(petstore(&up.url("/api"), pins(&["pets"])).await).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 6);
    assert!(!tools.iter().any(|t| t.name == SEARCH));
}

#[tokio::test]
async fn replacing_tools_rebuilds_the_index() {
    let up = Upstream::start().await;
    let server = petstore(&up.url("/api"), ToolMode::Dynamic).await;
    let client = connect_in_process(server.clone()).await;
    assert_eq!(
        search(&client, "delete pet", 1).await,
        ["petstore_delete_pet"]
    );
    let spec = openapi_mcp_convert::load(&openapi_mcp_convert::SpecSource::Path(spec(
        "petstore.yaml",
    )))
    .await
    .expect("spec");
    let mut opts = ToolOptions::default();
    opts.filter.exclude_operations = vec![Pattern::new("deletePet").expect("glob")];
    let set = openapi_mcp_convert::convert(&spec, &opts).tools;
    assert!(server.replace_tools(set).await);
    assert!(
        !search(&client, "delete pet", 10)
            .await
            .iter()
            .any(|n| n == "petstore_delete_pet")
    );
    let r = call(&client, DESCRIBE, json!({"name": "petstore_delete_pet"})).await;
    assert_eq!(r.is_error, Some(true));
}

/// Top-3 hit rate of each task set (natural-language task, expected operationId) on one dynamic
/// proxy of `spec_path`; prints every miss.
/// A dynamic-mode proxy of `spec_path` whose upstream is never reached (search only).
async fn dynamic_proxy(spec_path: &Path) -> ProxyServer {
    proxy_server_with(
        spec_path,
        "http://127.0.0.1:9/",
        ToolOptions::default(),
        &[],
        mode_opts(ToolMode::Dynamic),
    )
    .await
}

async fn hit_rates(spec_path: &Path, sets: &[&[(&str, &str)]]) -> Vec<f64> {
    let server = dynamic_proxy(spec_path).await;
    let state = server.state();
    let client = connect_in_process(server).await;
    let mut rates = Vec::new();
    for tasks in sets {
        let mut hits = 0;
        for (task, op_ids) in *tasks {
            // `a|b`: either operation does the task.
            let expected: Vec<String> = op_ids
                .split('|')
                .map(|op_id| {
                    state
                        .set
                        .tools
                        .iter()
                        .find(|t| t.operation_id.as_deref() == Some(op_id))
                        .unwrap_or_else(|| panic!("no operation {op_id}"))
                        .name()
                        .to_string()
                })
                .collect();
            let found = search(&client, task, 10).await;
            let rank = found.iter().position(|n| expected.contains(n));
            if rank.is_some_and(|r| r < 3) {
                hits += 1;
            } else {
                println!(
                    "  miss: {task:?} -> expected {expected:?} (rank {}), got {:?}",
                    rank.map_or("-".to_string(), |r| (r + 1).to_string()),
                    &found[..found.len().min(3)]
                );
            }
        }
        let rate = f64::from(hits) / tasks.len() as f64;
        println!(
            "{}: top-3 hit rate {hits}/{} = {:.0}%",
            spec_path.file_name().unwrap_or_default().to_string_lossy(),
            tasks.len(),
            rate * 100.0
        );
        rates.push(rate);
    }
    rates
}

// The task sets (natural-language task, expected operationId), shared with the
// `tests/benches/dynamic.rs` measurement.
include!("../../benches/dynamic_tasks.rs");
include!("../../benches/dynamic_tasks2.rs");

/// The top-3 hit rate of each task set on `../shared/specs/{file}` is at least its floor (the
/// dev-set figure the README reports, rounded down: a change that loses a task fails); skipped
/// when the spec is absent. One proxy serves both development sets.
async fn search_quality(file: &str, sets: &[(&[(&str, &str)], f64)]) {
    let Some(path) = shared_specs().map(|d| d.join(file)).filter(|p| p.exists()) else {
        println!("SKIPPED: ../shared/specs/{file} not found");
        return;
    };
    let tasks: Vec<&[(&str, &str)]> = sets.iter().map(|(t, _)| *t).collect();
    let rates = hit_rates(&path, &tasks).await;
    for (i, (rate, (_, floor))) in rates.iter().zip(sets).enumerate() {
        assert!(
            rate >= floor,
            "{file}: development set {}: top-3 hit rate {rate:.2} < {floor:.2}",
            i + 1
        );
    }
}

#[tokio::test]
async fn search_quality_on_github() {
    search_quality(
        "github-octokit-2026-3.0.json",
        &[(GITHUB_TASKS, 0.81), (GITHUB_TASKS2, 0.86)],
    )
    .await;
}

#[tokio::test]
async fn search_quality_on_cloudflare() {
    search_quality(
        "cloudflare-api-3.0.json",
        &[(CLOUDFLARE_TASKS, 0.8), (CLOUDFLARE_TASKS2, 0.57)],
    )
    .await;
}

#[tokio::test]
async fn search_quality_on_stripe() {
    search_quality(
        "stripe-spec3.json",
        &[(STRIPE_TASKS, 0.88), (STRIPE_TASKS2, 0.92)],
    )
    .await;
}

#[tokio::test]
async fn search_quality_on_kubernetes() {
    search_quality(
        "k8s-swagger-2.0.json",
        &[(K8S_TASKS, 0.66), (K8S_TASKS2, 0.85)],
    )
    .await;
}
