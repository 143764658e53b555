//! `openapi-mcp diff` and `tools --lock` through the built binary: exit codes (1 when breaking),
//! the table and the JSON, a lock written, read with drift warnings, updated, and rejected when an
//! entry is invalid; and a diff of two real GitHub spec versions (skipped without ../shared/specs).

use std::process::Output;

use openapi_mcp_tests::harness::{Scratch, arg, binary, shared_specs, spec};
use serde_json::Value;

fn run(args: &[&str]) -> Output {
    std::process::Command::new(binary())
        .args(args)
        .output()
        .expect("run openapi-mcp")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn diff_exit_codes_table_and_json() {
    let (old, new) = (spec("diff-old.yaml"), spec("diff-new.yaml"));
    let o = run(&["diff", arg(&old), arg(&new)]);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "Removed tools (breaking) (1):",
        "inventory_get_item -> inventory_fetch_item",
        "Breaking changes (9):",
        "location_changed",
        "wire_name_changed",
        "additional_properties_tightened",
        "Non-breaking changes (6):",
        "inventory_get_item_history",
        ": BREAKING",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }

    let o = run(&["diff", arg(&old), arg(&new), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).expect("diff --json is JSON");
    assert_eq!(v["isBreaking"], Value::Bool(true));
    assert_eq!(v["breaking"].as_array().map(Vec::len), Some(9));
    assert_eq!(v["nonBreaking"].as_array().map(Vec::len), Some(6));
    assert_eq!(v["renamed"][0]["identity"], "fetchItem");
    assert_eq!(v["removed"][0]["name"], "inventory_delete_item");

    // Same spec twice: nothing, exit 0.
    let o = run(&["diff", arg(&old), arg(&old)]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert!(stdout(&o).contains(
        "0 added, 0 removed, 0 renamed, 0 breaking and 0 non-breaking changes: not breaking"
    ));
    // The reverse direction is breaking too (getItemHistory removed, arguments removed).
    let o = run(&["diff", arg(&new), arg(&old), "--json"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn tools_lock_written_read_updated_and_validated() {
    let dir = Scratch::new("lock-tools");
    let lock = dir.path("names.yaml");
    let (old, new) = (spec("diff-old.yaml"), spec("diff-new.yaml"));

    // First run writes the lock (the file does not exist yet).
    let o = run(&["tools", arg(&old), "--lock", arg(&lock)]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let first = std::fs::read_to_string(&lock).expect("lock written");
    assert!(
        first.contains("getItem:") && first.contains("name: inventory_get_item"),
        "{first}"
    );
    // Deterministic: writing again gives the same bytes.
    let o = run(&["tools", arg(&old), "--lock", arg(&lock), "--update-lock"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&lock).expect("lock"), first);

    // The new version, read only: locked names served, drift warned, file untouched.
    let o = run(&["tools", arg(&new), "--lock", arg(&lock), "--json"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let tools: Value = serde_json::from_slice(&o.stdout).expect("tools --json");
    let names: Vec<&str> = tools
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"inventory_get_item"), "{names:?}");
    assert!(!names.contains(&"inventory_fetch_item"), "{names:?}");
    let err = stderr(&o);
    assert!(
        err.contains("out of date") && err.contains("deleteItem"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&lock).expect("lock"), first);

    // --update-lock records the new version; deleteItem stays, marked removed.
    let o = run(&["tools", arg(&new), "--lock", arg(&lock), "--update-lock"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let updated = std::fs::read_to_string(&lock).expect("lock");
    assert!(
        updated.contains("fetchItem:") && !updated.contains("getItem:"),
        "{updated}"
    );
    assert!(
        updated.contains("deleteItem:") && updated.contains("removed: true"),
        "{updated}"
    );
    let o = run(&["tools", arg(&new), "--lock", arg(&lock)]);
    assert!(!stderr(&o).contains("out of date"), "{}", stderr(&o));

    // diff with the lock: no rename any more (still breaking: deleteItem removed).
    let o = run(&["diff", arg(&old), arg(&new), "--lock", arg(&lock), "--json"]);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["renamed"], Value::Array(Vec::new()));

    // An invalid entry: exit 1, the error names the file and the entry.
    let bad = dir.path("bad.json");
    std::fs::write(
        &bad,
        r#"{"version": 1, "operations": {"getItem": {"name": "Get-Item", "method": "GET", "path": "/items/{id}"}}}"#,
    )
    .expect("write");
    let o = run(&["tools", arg(&new), "--lock", arg(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("bad.json") && err.contains("operations.getItem.name"),
        "{err}"
    );

    // proxy and generate only read: a missing lock is an error, not created.
    let missing = dir.path("missing.json");
    let out_dir = dir.path("gen");
    let o = run(&[
        "generate",
        arg(&new),
        "--lock",
        arg(&missing),
        "--out",
        arg(&out_dir),
    ]);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    assert!(stderr(&o).contains("missing.json"), "{}", stderr(&o));
    assert!(!missing.exists());
}

#[test]
fn diff_of_two_real_github_versions() {
    let Some(shared) = shared_specs() else {
        println!("SKIPPED: ../shared/specs not found");
        return;
    };
    let (old, new) = (
        shared.join("github-api-3.0.json"),
        shared.join("github-octokit-2026-3.0.json"),
    );
    if !old.exists() || !new.exists() {
        println!("SKIPPED: the two GitHub spec versions are not in ../shared/specs");
        return;
    }
    let dir = Scratch::new("lock-github");
    let lock = dir.path("github.json");
    let started = std::time::Instant::now();
    let o = run(&["diff", arg(&old), arg(&new), "--json"]);
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let count = |k: &str| v[k].as_array().map(Vec::len).unwrap_or(0);
    println!(
        "github 2020 -> 2026: {} added, {} removed, {} renamed, {} breaking, {} non-breaking in {took:?}",
        count("added"),
        count("removed"),
        count("renamed"),
        count("breaking"),
        count("nonBreaking")
    );
    assert!(count("renamed") > 0 && count("removed") > 0 && count("added") > 0);
    // With a lock made from the old version no tool is renamed.
    let o = run(&["tools", arg(&old), "--lock", arg(&lock)]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let o = run(&["diff", arg(&old), arg(&new), "--lock", arg(&lock), "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["renamed"], Value::Array(Vec::new()));
}
