//! `--overlay FILE` (OpenAPI Overlay 1.0.0, #39) through the built binary: `tools --json` with
//! the fixture overlay (renamed, described and removed operations, a warning for an action that
//! selects nothing), overlays applied in order, errors naming the file and the action, the
//! `overlay` key of a proxy config file (top level and in an `apis:` entry), and `generate`
//! embedding the overlaid tools.

use std::path::PathBuf;
use std::process::Output;

use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use openapi_mcp_tests::harness::{Scratch, arg, binary, spec};
use serde_json::Value;

fn run(args: &[&str]) -> Output {
    std::process::Command::new(binary())
        .args(args)
        .output()
        .expect("run openapi-mcp")
}

fn fixture() -> PathBuf {
    spec("overlays/petstore.overlay.yaml")
}

/// The tools of `tools SPEC ARGS --json`, with stderr.
fn tools_json(args: &[&str]) -> (Vec<Value>, String) {
    let petstore = spec("petstore.yaml");
    let mut all = vec!["tools", arg(&petstore)];
    all.extend_from_slice(args);
    all.push("--json");
    let out = run(&all);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
    (tools.as_array().unwrap().clone(), stderr)
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

#[test]
fn tools_json_renames_describes_and_removes_as_the_overlay_says() {
    let (before, _) = tools_json(&[]);
    assert_eq!(
        names(&before),
        [
            "petstore_list_pets",
            "petstore_create_pet",
            "petstore_search_pets_legacy",
            "petstore_show_pet_by_id",
            "petstore_update_pet",
            "petstore_delete_pet"
        ]
    );
    let ov = fixture();
    let (tools, stderr) = tools_json(&["--overlay", arg(&ov)]);
    // Renamed (operationId), the deprecated and the DELETE operations removed.
    assert_eq!(
        names(&tools),
        [
            "petstore_pets_list",
            "petstore_create_pet",
            "petstore_show_pet_by_id",
            "petstore_update_pet"
        ]
    );
    assert_eq!(
        tools[0]["description"],
        "List all pets\n\nLists the pets in the store, a page at a time."
    );
    assert_eq!(tools[1]["title"], "Add a pet to the store");
    // Only the action that selects nothing is reported, as a warning naming file and action.
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("overlay")).collect();
    assert_eq!(
        warnings,
        [format!(
            "warning: {}#/actions/4: target `$.paths['/no-such-path']` selects nothing",
            ov.display()
        )]
    );
}

#[test]
fn overlays_apply_in_order_and_errors_name_the_file_and_action() {
    let dir = Scratch::new("overlay-order");
    // The second overlay selects what the first one made.
    let second = dir.write(
        "second.yaml",
        "overlay: 1.0.0\ninfo: {title: second, version: '1'}\nactions:\n  - target: \"$.paths.*[?@.operationId == 'pets_list']\"\n    update: {operationId: all_pets}\n",
    );
    let first = fixture();
    let (tools, _) = tools_json(&["--overlay", arg(&first), "--overlay", arg(&second)]);
    assert_eq!(names(&tools)[0], "petstore_all_pets");
    // The other way round, the second overlay's filter selects nothing yet.
    let (tools, stderr) = tools_json(&["--overlay", arg(&second), "--overlay", arg(&first)]);
    assert_eq!(names(&tools)[0], "petstore_pets_list");
    assert!(
        stderr.contains(&format!("warning: {}#/actions/0: target", second.display())),
        "{stderr}"
    );

    let bad = dir.write(
        "bad.yaml",
        "overlay: 1.0.0\ninfo: {title: bad, version: '1'}\nactions:\n  - target: $.info\n    update: {x-a: 1}\n  - target: $.paths.*[?@.x-internal]\n    remove: true\n",
    );
    let petstore = spec("petstore.yaml");
    let out = run(&["tools", arg(&petstore), "--overlay", arg(&bad)]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "overlay {}#/actions/1/target: invalid JSONPath (RFC 9535)",
            bad.display()
        )) && stderr.contains("['x-name']"),
        "{stderr}"
    );
    let out = run(&["tools", arg(&petstore), "--overlay", arg(&petstore)]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not an Overlay document: no `overlay` version"),
        "{stderr}"
    );
}

/// The tool names a proxy started with `args` lists.
async fn proxy_tool_names(args: &[&str]) -> Vec<String> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let transport =
        TokioChildProcess::new(tokio::process::Command::new(binary()).configure(|cmd| {
            cmd.arg("proxy").args(&args);
        }))
        .expect("spawn");
    let client = ().serve(transport).await.expect("initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    let _ = client.cancel().await;
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn the_config_file_takes_overlay_lists_at_the_top_and_per_api() {
    let dir = Scratch::new("overlay-config");
    let petstore = spec("petstore.yaml");
    let ov = fixture();
    let config = dir.write(
        "single.yaml",
        &format!(
            "spec: {}\noverlay:\n  - {}\nbase-url: http://127.0.0.1:9/api\n",
            petstore.display(),
            ov.display()
        ),
    );
    let names = proxy_tool_names(&["--config", arg(&config)]).await;
    assert!(names.iter().any(|n| n == "petstore_pets_list"), "{names:?}");
    assert!(
        !names.iter().any(|n| n == "petstore_delete_pet"),
        "{names:?}"
    );

    let config = dir.write(
        "multi.yaml",
        &format!(
            "apis:\n  - name: pets\n    spec: {p}\n    base-url: http://127.0.0.1:9/api\n    overlay: [{o}]\n  - name: plain\n    spec: {p}\n    base-url: http://127.0.0.1:9/api\n",
            p = petstore.display(),
            o = ov.display()
        ),
    );
    let names = proxy_tool_names(&["--config", arg(&config)]).await;
    assert!(names.iter().any(|n| n == "pets_pets_list"), "{names:?}");
    assert!(!names.iter().any(|n| n == "pets_delete_pet"), "{names:?}");
    assert!(names.iter().any(|n| n == "plain_delete_pet"), "{names:?}");
}

#[test]
fn generate_embeds_the_overlaid_tools() {
    let dir = Scratch::new("overlay-generate");
    let out_dir = dir.path("server");
    let petstore = spec("petstore.yaml");
    let ov = fixture();
    let out = run(&[
        "generate",
        arg(&petstore),
        "--overlay",
        arg(&ov),
        "--out",
        arg(&out_dir),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let api = std::fs::read_to_string(out_dir.join("src/api.json")).unwrap();
    assert!(api.contains("\"petstore_pets_list\""));
    assert!(!api.contains("\"petstore_delete_pet\""));
}

#[test]
fn lint_and_diff_show_the_actions_that_select_nothing() {
    let petstore = spec("petstore.yaml");
    let ov = fixture();
    let warning = format!(
        "warning: {}#/actions/4: target `$.paths['/no-such-path']` selects nothing",
        ov.display()
    );
    let out = run(&["lint", arg(&petstore), "--overlay", arg(&ov)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&warning), "{stderr}");
    assert!(stderr.contains(": 4 tools,"), "{stderr}");
    // diff: both versions are overlaid, and each reports its own.
    let out = run(&[
        "diff",
        arg(&petstore),
        arg(&petstore),
        "--overlay",
        arg(&ov),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches(&warning).count(), 2, "{stderr}");
    assert!(stderr.contains(": 4 tools"), "{stderr}");
}
