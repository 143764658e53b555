//! The example's checked-in artifacts are what its sources make: `openapi.json` is utoipa's
//! document of the app, and `mcp/` is the crate `openapi-mcp generate` makes from it (as a
//! workspace member). A difference fails with the file's name; `UPDATE_EXAMPLE=1` rewrites them
//! (then review and commit).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use axum_embed_example::ApiDoc;
use openapi_mcp_codegen::{CodegenOptions, RuntimeDep, generate_workspace_member};
use openapi_mcp_convert::{ToolOptions, convert, load::load_single};
use utoipa::OpenApi;

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn update() -> bool {
    std::env::var_os("UPDATE_EXAMPLE").is_some_and(|v| v == "1")
}

/// Writes `text` to `path` when updating; else checks it is what is there.
fn check(path: &Path, text: &str, stale: &mut Vec<String>) {
    if update() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    } else if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        stale.push(path.display().to_string());
    }
}

#[test]
fn openapi_json_and_the_generated_crate_are_up_to_date() {
    let mut stale = Vec::new();
    let doc = ApiDoc::openapi().to_pretty_json().unwrap() + "\n";
    check(&here().join("openapi.json"), &doc, &mut stale);

    let spec = load_single(doc.as_bytes(), "openapi.json").unwrap();
    let set = convert(&spec, &ToolOptions::default()).tools;
    let opts = CodegenOptions {
        crate_name: "todo-mcp".into(),
        runtime_dep: RuntimeDep::Path(PathBuf::from("../../../runtime")),
        ..Default::default()
    };
    let krate = generate_workspace_member(&set, &opts).unwrap();
    let dir = here().join("mcp");
    let mut expected: BTreeMap<PathBuf, ()> = BTreeMap::new();
    for (path, text) in &krate.files {
        check(&dir.join(path), text, &mut stale);
        expected.insert(path.clone(), ());
    }
    assert!(
        stale.is_empty(),
        "out of date (run `UPDATE_EXAMPLE=1 cargo test -p axum-embed-example --test regenerate`): {stale:?}"
    );
}
