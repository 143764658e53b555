//! `--config FILE` (#20): the built binary configured by a file alone, and the command line over
//! a file, against the recording upstream.

use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use openapi_mcp_tests::harness::{Scratch, binary, call, spec, text};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::json;

/// `openapi-mcp proxy --config FILE` and nothing else: the spec, base URL, filters, prefix,
/// a static header and the timeout all come from the YAML file; the credential from the
/// environment.
#[tokio::test]
async fn proxy_runs_from_a_yaml_config_file_alone() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!([{"id": 1, "name": "Rex"}])));
    let dir = Scratch::new("e2e-config-yaml");
    let file = dir.write_arg(
        "petstore.yaml",
        &format!(
            "# the whole proxy, one file\nspec: {spec}\nbase_url: {base}\nprefix: shop\nmethod: [get]\nexclude-deprecated: true\nheader:\n  - 'X-Trace: from-config'\ntimeout: 5\n",
            spec = spec("petstore.yaml").display(),
            base = up.url("/api"),
        ),
    );
    let transport =
        TokioChildProcess::new(tokio::process::Command::new(binary()).configure(|cmd| {
            cmd.args(["proxy", "--config", &file]);
            cmd.env("OPENAPI_MCP_API_KEY", "k-cfg");
        }))
        .expect("spawn");
    let client = ().serve(transport).await.expect("initialize");
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    // GET only, the deprecated search left out, the file's prefix.
    assert_eq!(names, ["shop_list_pets", "shop_show_pet_by_id"]);
    let r = call(&client, "shop_list_pets", json!({"limit": 1})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.target, "/api/pets?limit=1");
    assert_eq!(req.header("x-trace"), Some("from-config"));
    assert_eq!(req.header("x-api-key"), Some("k-cfg"));
    client.cancel().await.unwrap();
}

/// A TOML file whose base URL is dead, and `--base-url` on the command line: the command line
/// wins (the call reaches the upstream), the file's other settings stay.
#[tokio::test]
async fn the_command_line_overrides_a_toml_config_file() {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({"id": 7, "name": "Rex"})));
    let dir = Scratch::new("e2e-config-toml");
    let file = dir.write_arg(
        "petstore.toml",
        &format!(
            "spec = {spec:?}\nbase-url = \"http://127.0.0.1:9/dead\"\ninclude-op = [\"showPetById\"]\nheader = [\"X-Trace: toml\"]\n",
            spec = spec("petstore.yaml").display().to_string(),
        ),
    );
    let base = up.url("/api");
    let transport =
        TokioChildProcess::new(tokio::process::Command::new(binary()).configure(|cmd| {
            cmd.args(["proxy", "--config", &file, "--base-url", &base]);
        }))
        .expect("spawn");
    let client = ().serve(transport).await.expect("initialize");
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1, "{tools:?}");
    let r = call(&client, "petstore_show_pet_by_id", json!({"petId": 7})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.target, "/api/pets/7");
    assert_eq!(req.header("x-trace"), Some("toml"));
    client.cancel().await.unwrap();
}

/// Errors name the file and the key and exit 1 before anything starts; `config --print` masks
/// what the file and the environment hold as secrets.
#[tokio::test]
async fn config_errors_and_print() {
    let dir = Scratch::new("e2e-config-errors");
    let bad = dir.write_arg("bad.yaml", "spec: x.yaml\nretires: 2\n");
    let out = tokio::process::Command::new(binary())
        .args(["proxy", "--config", &bad])
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "config file {bad}: unknown key `retires`; did you mean `retries`?"
        )),
        "{err}"
    );

    let secret = dir.write_arg(
        "secret.yaml",
        "spec: x.yaml\nauth: ['api_key=sk-file-1']\nheader: ['Authorization: Bearer hdr-2']\n",
    );
    let out = tokio::process::Command::new(binary())
        .args(["config", "--print", "--config", &secret, "--retries", "3"])
        .env("OPENAPI_MCP_AUTH_TOKEN", "gate-3")
        .output()
        .await
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for s in ["sk-file-1", "hdr-2", "gate-3"] {
        assert!(
            !printed.contains(s) && !err.contains(s),
            "{s}: {printed}{err}"
        );
    }
    assert!(printed.contains("- api_key=***"), "{printed}");
    assert!(printed.contains("- 'Authorization: ***'"), "{printed}");
    assert!(
        printed.contains("auth-token: '***'  # environment OPENAPI_MCP_AUTH_TOKEN"),
        "{printed}"
    );
    assert!(printed.contains("retries: 3  # command line"), "{printed}");
    // Both literal secrets in the file are warned about.
    assert_eq!(err.matches("holds a literal secret").count(), 2, "{err}");
}
