//! `--overrides` through the built binary (pinned values reach the upstream, hidden arguments
//! leave the schema, errors name the file and key), `--client` on the served list, and `lint`
//! exit codes on a fixture and on a real-world spec.

use std::path::PathBuf;
use std::process::Output;

use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use openapi_mcp_tests::harness::{binary, call, shared_specs, spec, text};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::{Value, json};

/// A file in a fresh temporary directory (removed at the end of the test by the caller).
fn temp_file(name: &str, text: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "openapi-mcp-overrides-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join(name);
    std::fs::write(&file, text).expect("write overrides");
    (dir, file)
}

fn run(args: &[&str]) -> Output {
    std::process::Command::new(binary())
        .args(args)
        .output()
        .expect("run openapi-mcp")
}

const OVERRIDES: &str = "\
tools:
  listPets:
    name: pets_list
    description: Lists pets, five at a time.
    pin:
      limit: 5
  showPetById:
    title: The pet of the day
    hide: [petId]
    pin:
      petId: 42
  petstore_create_pet:
    pin:
      tag: from-overrides
";

#[tokio::test]
async fn pinned_values_reach_the_upstream_through_the_binary() {
    let up = Upstream::start().await;
    up.respond(|req| {
        if req.method == "GET" && req.path().ends_with("/pets") {
            Reply::json(200, json!([{"id": 1, "name": "Rex"}]))
        } else {
            Reply::json(200, json!({"id": 1, "name": "Rex"}))
        }
    });
    let base = up.url("/api");
    let (dir, file) = temp_file("overrides.yaml", OVERRIDES);
    let petstore = spec("petstore.yaml");
    let transport =
        TokioChildProcess::new(tokio::process::Command::new(binary()).configure(|cmd| {
            cmd.arg("proxy")
                .arg(&petstore)
                .args(["--base-url", &base, "--client", "claude", "--overrides"])
                .arg(&file);
        }))
        .expect("spawn");
    let client = ().serve(transport).await.expect("initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    let by_name = |n: &str| {
        tools
            .iter()
            .find(|t| t.name == n)
            .unwrap_or_else(|| panic!("no tool {n}"))
    };
    let list = by_name("pets_list");
    assert_eq!(
        list.description.as_deref(),
        Some("Lists pets, five at a time.")
    );
    let list_schema = Value::Object((*list.input_schema).clone());
    assert!(
        list_schema["properties"].get("limit").is_none(),
        "{list_schema}"
    );
    assert!(list_schema["properties"].get("tags").is_some());
    let show = by_name("petstore_show_pet_by_id");
    assert_eq!(show.title.as_deref(), Some("The pet of the day"));
    let show_schema = Value::Object((*show.input_schema).clone());
    // Only the server's own selection argument is left.
    assert_eq!(
        show_schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["_select".to_string()]),
        "{show_schema}"
    );
    assert!(show_schema.get("required").is_none(), "{show_schema}");

    // The pinned query value is sent with the client's own arguments.
    let r = call(&client, "pets_list", json!({"tags": ["a"]})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.path(), "/api/pets");
    let query = req.query().unwrap_or_default();
    assert!(query.split('&').any(|p| p == "limit=5"), "{query}");
    assert!(query.split('&').any(|p| p == "tags=a"), "{query}");

    // A pinned argument is not the client's to set: the schema refuses it, nothing is sent.
    up.clear();
    let r = call(&client, "pets_list", json!({"limit": 1})).await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(up.requests().is_empty());

    // A hidden required path argument with its pinned value.
    let r = call(&client, "petstore_show_pet_by_id", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(up.last().path(), "/api/pets/42");

    // A pinned body field joins the client's fields.
    let r = call(&client, "petstore_create_pet", json!({"name": "Rex"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.method, "POST");
    assert_eq!(
        req.body_json(),
        json!({"name": "Rex", "tag": "from-overrides"})
    );

    client.cancel().await.expect("cancel");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn overrides_errors_name_the_file_and_key() {
    let petstore = spec("petstore.yaml");
    let petstore = petstore.to_str().expect("utf-8 path");
    for (text, want) in [
        (
            "tools:\n  listPet:\n    title: x\n",
            "tools.listPet: no tool or operationId `listPet`; did you mean `listPets`?",
        ),
        (
            "tools:\n  showPetById:\n    hide: [petId]\n",
            "tools.showPetById.hide[0]: argument `petId` is required: hiding it needs a pinned value",
        ),
        (
            "tools:\n  listPets:\n    pin: {limt: 3}\n",
            "tools.listPets.pin.limt: tool `petstore_list_pets` has no argument `limt`; did you mean `limit`?",
        ),
        (
            "tools:\n  listPets:\n    rename: x\n",
            "tools.listPets.rename: unknown key `rename`",
        ),
    ] {
        let (dir, file) = temp_file("bad.yaml", text);
        let out = run(&[
            "tools",
            petstore,
            "--overrides",
            file.to_str().expect("path"),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text}: {stderr}");
        let prefix = format!("error: {}: ", file.display());
        assert!(
            stderr.contains(&format!("{prefix}{want}")),
            "{text}: want {want:?} in {stderr}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
    // A rename the chosen client would reject is refused, naming the key.
    let (dir, file) = temp_file("dots.yaml", "tools:\n  listPets:\n    name: pets.list\n");
    let out = run(&[
        "tools",
        petstore,
        "--client",
        "openai",
        "--overrides",
        file.to_str().expect("path"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("tools.listPets.name: `pets.list` would be rejected by --client openai"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

fn tools_json(args: &[&str]) -> Vec<Value> {
    let out = run(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("tools --json")
}

#[test]
fn client_profiles_on_the_served_list_and_lint_on_a_fixture() {
    let petstore = spec("petstore.yaml");
    let petstore = petstore.to_str().expect("utf-8 path");
    let generic = tools_json(&["tools", "--json", petstore]);
    let explicit = tools_json(&["tools", "--json", petstore, "--client", "generic"]);
    assert_eq!(generic, explicit, "generic is today's output");
    let gemini = tools_json(&["tools", "--json", petstore, "--client", "gemini"]);
    assert_eq!(gemini.len(), generic.len());
    let text = serde_json::to_string(&gemini).expect("json");
    assert!(
        !text.contains("additionalProperties") && !text.contains("\"examples\""),
        "{text}"
    );
    assert!(
        serde_json::to_string(&generic)
            .expect("json")
            .contains("additionalProperties")
    );

    let gemini_lint = run(&["lint", "--client", "gemini", petstore]);
    assert_eq!(gemini_lint.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&gemini_lint.stdout);
    assert!(
        stdout.lines().any(|l| l
            .starts_with("error: petstore_list_pets #/inputSchema/additionalProperties: ")
            && l.ends_with("specs/petstore.yaml#/paths/~1pets/get)")),
        "{stdout}"
    );
    for client in ["openai", "claude", "generic"] {
        let out = run(&["lint", "--client", client, petstore, "--strict"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{client}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    // --json findings carry tool, pointer, operation, level.
    let out = run(&["lint", "--client", "gemini", "--json", petstore]);
    let findings: Vec<Value> = serde_json::from_slice(&out.stdout).expect("lint --json");
    assert!(!findings.is_empty());
    for f in &findings {
        assert_eq!(f["level"], "reject");
        let tool = generic
            .iter()
            .find(|t| t["name"] == f["tool"])
            .expect("finding names a served tool");
        let ptr = f["pointer"].as_str().expect("pointer");
        assert!(tool.pointer(ptr).is_some(), "{ptr} not in {tool}");
    }
}

#[test]
fn lint_exit_codes_on_github() {
    let Some(shared) = shared_specs() else {
        eprintln!("SKIPPED lint_exit_codes_on_github: ../shared/specs is missing");
        return;
    };
    let github = shared.join("github-api-3.0.json");
    if !github.is_file() {
        eprintln!(
            "SKIPPED lint_exit_codes_on_github: {} is missing",
            github.display()
        );
        return;
    }
    let github = github.to_str().expect("utf-8 path");
    let count = |o: &Output, level: &str| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with(level))
            .count()
    };
    // Gemini rejects the JSON Schema keywords GitHub's tools use: exit 1.
    let gemini = run(&["lint", "--client", "gemini", github]);
    assert_eq!(gemini.status.code(), Some(1));
    assert!(
        count(&gemini, "error: ") > 600,
        "{}",
        count(&gemini, "error: ")
    );
    // Claude Code: names over 64 - len("mcp__github__") = 51 characters.
    let claude = run(&["lint", "--client", "claude", github]);
    assert_eq!(claude.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&claude.stdout);
    assert!(
        stdout.lines().all(|l| l.contains(" #/name: tool name is ")),
        "{stdout}"
    );
    assert!(count(&claude, "error: ") > 0);
    // A shorter server name leaves more room.
    let short = run(&["lint", "--client", "claude", "--server-name", "gh", github]);
    assert!(count(&short, "error: ") < count(&claude, "error: "));
    // OpenAI accepts everything: exit 0; generic has warnings only (type arrays): exit 0,
    // --strict exit 1.
    assert_eq!(
        run(&["lint", "--client", "openai", github]).status.code(),
        Some(0)
    );
    let generic = run(&["lint", github]);
    assert_eq!(generic.status.code(), Some(0));
    assert!(count(&generic, "warning: ") > 0);
    assert_eq!(count(&generic, "error: "), 0);
    assert_eq!(run(&["lint", "--strict", github]).status.code(), Some(1));
    // The profiled inputSchemas (what becomes Gemini's function parameters) are clean.
    let tools = tools_json(&["tools", "--json", "--client", "gemini", github]);
    for t in &tools {
        let input = t["inputSchema"].to_string();
        assert!(
            !input.contains("\"$ref\"") && !input.contains("\"additionalProperties\""),
            "{}",
            t["name"]
        );
    }
}
