//! Codegen tests: snapshots of the generated crates (members of the root workspace, so
//! `cargo build --workspace` compiles them), byte-determinism, parity of the embedded tool
//! definitions, and a real standalone `cargo build` of generated crates.
//!
//! `UPDATE_SNAPSHOTS=1 cargo test -p openapi-mcp-codegen` rewrites `tests/output/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use openapi_mcp_codegen::{
    CodegenError, CodegenOptions, GeneratedCrate, MARKER_FILE, RuntimeDep, WorkflowDocument,
    default_crate_name, generate, generate_workspace_member,
};
use openapi_mcp_convert::{ToolOptions, convert, load::load_single};
use openapi_mcp_toolset::model::ToolSet;
use openapi_mcp_toolset::rmcp::model::Tool;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("codegen/ has a parent")
        .to_path_buf()
}

/// Converts `specs/<name>` with the CLI's default options.
fn tool_set(name: &str) -> ToolSet {
    let rel = format!("specs/{name}");
    let bytes =
        std::fs::read(workspace().join(&rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"));
    let spec = load_single(&bytes, &rel).unwrap_or_else(|e| panic!("loading {rel}: {e}"));
    convert(&spec, &ToolOptions::default()).tools
}

fn generate_for(set: &ToolSet, runtime_dep: RuntimeDep) -> GeneratedCrate {
    let opts = CodegenOptions {
        crate_name: default_crate_name(&set.title),
        runtime_dep,
        mode: Default::default(),
        pins: Vec::new(),
        features: Vec::new(),
        workflows: Vec::new(),
        workflows_only: false,
    };
    generate(set, &opts).unwrap_or_else(|e| panic!("generating for {}: {e}", set.title))
}

fn write_crate(dir: &Path, krate: &GeneratedCrate) {
    let _ = std::fs::remove_dir_all(dir);
    for (path, text) in &krate.files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().expect("file has a parent")).expect("create dir");
        std::fs::write(&p, text).expect("write file");
    }
}

fn read_tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("under root").to_path_buf();
                out.insert(rel, std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Fixture specs that load without external files.
const FIXTURES: &[&str] = &[
    "petstore.yaml",
    "param-styles.yaml",
    "collisions.yaml",
    "recursive.yaml",
    "allof-oneof.yaml",
    "forms.yaml",
    "swagger2.yaml",
    "openapi31.yaml",
    "security.yaml",
    "broken-ops.yaml",
    "typed-values.yaml",
];

/// The fixtures whose generated crates are checked in under `tests/output/<stem>/` and built:
/// as members of the root workspace (`cargo build --workspace` compiles them, `#![deny(warnings)]`
/// included) and standalone by [`generated_crates_build_and_serve_the_same_tools`].
const BUILT: &[&str] = &["petstore.yaml", "collisions.yaml"];

fn snapshot_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/output")
        .join(name.trim_end_matches(".yaml"))
}

/// The snapshots are generated with `generate_workspace_member` (the codegen option, rather than
/// normalising the manifest here): a member's `Cargo.toml` has no `[workspace]` table and no
/// profile, and every other file is byte for byte what `openapi-mcp generate` writes.
#[test]
fn snapshots() {
    let mut problems = Vec::new();
    for name in BUILT {
        let set = tool_set(name);
        // Relative to tests/output/<stem>/, so the snapshot is the same on every machine.
        let runtime = RuntimeDep::Path(PathBuf::from("../../../../runtime"));
        let opts = CodegenOptions {
            crate_name: default_crate_name(&set.title),
            runtime_dep: runtime.clone(),
            mode: Default::default(),
            pins: Vec::new(),
            features: Vec::new(),
            workflows: Vec::new(),
            workflows_only: false,
        };
        let krate = generate_workspace_member(&set, &opts)
            .unwrap_or_else(|e| panic!("generating for {name}: {e}"));
        // Only the manifest differs from the standalone crate.
        let standalone = generate_for(&set, runtime);
        for (path, text) in &krate.files {
            if path != Path::new("Cargo.toml") {
                assert_eq!(
                    Some(text),
                    standalone.files.get(path),
                    "{name}: {}",
                    path.display()
                );
            }
        }
        assert!(!krate.files[Path::new("Cargo.toml")].contains("[workspace]"));

        let dir = snapshot_dir(name);
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            write_crate(&dir, &krate);
            continue;
        }
        let on_disk = read_tree(&dir);
        for (path, text) in &krate.files {
            match on_disk.get(path) {
                None => problems.push(format!(
                    "{name}: {} is missing from the snapshot",
                    path.display()
                )),
                Some(old) if old != text => problems.push(format!(
                    "{name}: {} differs from the snapshot",
                    path.display()
                )),
                Some(_) => {}
            }
        }
        for path in on_disk.keys().filter(|p| {
            !krate.files.contains_key(*p)
                && !p.starts_with("target")
                && *p != Path::new("Cargo.lock")
        }) {
            problems.push(format!(
                "{name}: {} is in the snapshot but no longer generated",
                path.display()
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n(rerun with UPDATE_SNAPSHOTS=1 to accept)",
        problems.join("\n")
    );
}

/// Every snapshot is a member of the root workspace, so `cargo build --workspace` (and clippy)
/// compiles it.
#[test]
fn snapshots_are_workspace_members() {
    let manifest =
        std::fs::read_to_string(workspace().join("Cargo.toml")).expect("root Cargo.toml");
    // The `members = [...]` array of the root manifest (one entry per line or not).
    let members = manifest
        .split_once("\nmembers = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .expect("a members array");
    for name in BUILT {
        let member = format!(
            "\"codegen/tests/output/{}\"",
            name.trim_end_matches(".yaml")
        );
        assert!(members.contains(&member), "{member} is not in {members}");
    }
}

#[test]
fn output_is_deterministic_and_tools_round_trip() {
    for name in FIXTURES {
        let set = tool_set(name);
        if set.tools.is_empty() {
            continue;
        }
        let a = generate_for(&set, RuntimeDep::Version("0.1.0".into()));
        let b = generate_for(&tool_set(name), RuntimeDep::Version("0.1.0".into()));
        assert_eq!(a, b, "{name}: two generations differ");

        // Parity by construction: api.json holds every tool exactly as tools/list serves it.
        let api: serde_json::Value =
            serde_json::from_str(&a.files[Path::new("src/api.json")]).expect("api.json parses");
        let tools = api["tools"].as_array().expect("tools array");
        assert_eq!(tools.len(), set.tools.len(), "{name}");
        for (entry, def) in tools.iter().zip(&set.tools) {
            let served = serde_json::to_string(def.tool()).expect("serialize tool");
            let back: Tool =
                serde_json::from_value(entry["tool"].clone()).expect("tool deserializes");
            assert_eq!(
                serde_json::to_string(&back).expect("serialize"),
                served,
                "{name}: {}",
                def.name()
            );
            let route: openapi_mcp_toolset::model::Route =
                serde_json::from_value(entry["route"].clone()).expect("route deserializes");
            assert_eq!(route, def.route, "{name}: {}", def.name());
        }

        // The marker lists every other file.
        let marker = openapi_mcp_codegen::marker_files(&a.files[Path::new(MARKER_FILE)]);
        let others: Vec<PathBuf> = a
            .files
            .keys()
            .filter(|p| *p != Path::new(MARKER_FILE))
            .cloned()
            .collect();
        assert_eq!(marker, others, "{name}");
    }
}

#[test]
fn bad_crate_names_are_rejected() {
    let set = tool_set("petstore.yaml");
    for bad in ["", "self", "1abc", "has space", "std"] {
        let opts = CodegenOptions {
            crate_name: bad.into(),
            runtime_dep: RuntimeDep::Version("0.1.0".into()),
            mode: Default::default(),
            pins: Vec::new(),
            features: Vec::new(),
            workflows: Vec::new(),
            workflows_only: false,
        };
        assert!(generate(&set, &opts).is_err(), "{bad:?} accepted");
    }
}

/// Generates crates into `target/` and builds them with the workspace's target dir (so the
/// dependencies are shared) and the workspace's Cargo.lock (so the versions are). The generated
/// `src/main.rs` and `src/lib.rs` carry `#![deny(warnings)]`; `cargo test` also runs the
/// generated crate's own test (every tool has a handler).
#[test]
fn generated_crates_build_and_serve_the_same_tools() {
    let root = workspace();
    let target = root.join("target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for name in BUILT {
        let set = tool_set(name);
        let krate = generate_for(&set, RuntimeDep::Path(root.join("runtime")));
        let manifest = &krate.files[Path::new("Cargo.toml")];
        let runtime_path = root.join("runtime").to_string_lossy().replace('\\', "/");
        assert!(
            manifest.contains(&format!("path = \"{runtime_path}\"")),
            "{manifest}"
        );
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("generated")
            .join(name.trim_end_matches(".yaml"));
        write_crate(&dir, &krate);
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy Cargo.lock");
        let started = Instant::now();
        for cmd in ["build", "test"] {
            let out = Command::new(&cargo)
                .args([cmd, "--quiet", "--manifest-path"])
                .arg(dir.join("Cargo.toml"))
                .env("CARGO_TARGET_DIR", &target)
                .env_remove("RUSTFLAGS")
                .output()
                .expect("run cargo");
            assert!(
                out.status.success(),
                "{name}: cargo {cmd} failed\n--- stdout\n{}\n--- stderr\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        eprintln!(
            "{name}: cargo build + test of the generated crate took {:.1}s",
            started.elapsed().as_secs_f64()
        );

        let bin = target.join("debug").join(format!(
            "{}{}",
            default_crate_name(&set.title),
            std::env::consts::EXE_SUFFIX
        ));
        let replies = stdio_session(
            &bin,
            &[
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"codegen-test","version":"0"}}}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#,
            ],
            3,
        );
        let expected: Vec<serde_json::Value> = set
            .tools
            .iter()
            .map(|t| {
                serde_json::to_value(openapi_mcp_runtime::server::served_tool(t)).expect("tool")
            })
            .collect();
        assert_eq!(
            replies[&2]["result"]["tools"],
            serde_json::Value::Array(expected),
            "{name}: tools/list differs"
        );
        assert_eq!(
            replies[&3]["error"]["code"], -32602,
            "{name}: {}",
            replies[&3]
        );
        assert_eq!(
            replies[&1]["result"]["serverInfo"]["version"],
            set.version.as_str(),
            "{name}"
        );
        refuses_the_parts_left_out(&bin, name);
    }
}

/// `--features oauth-proxy`: the proxy crate beside the runtime (same place or version), the
/// runtime with `http` and the SQLite store, and `main.rs` handing the proxy's factory to
/// serving; every other file is the default generation's.
#[test]
fn the_oauth_proxy_feature_hands_its_factory_in() {
    let set = tool_set("petstore.yaml");
    let plain = generate_for(
        &set,
        RuntimeDep::Path(PathBuf::from("/src/openapi-mcp/runtime")),
    );
    let opts = CodegenOptions {
        crate_name: default_crate_name(&set.title),
        runtime_dep: RuntimeDep::Path(PathBuf::from("/src/openapi-mcp/runtime")),
        mode: Default::default(),
        pins: Vec::new(),
        features: vec!["oauth-proxy".into()],
        workflows: Vec::new(),
        workflows_only: false,
    };
    let krate = generate(&set, &opts).expect("generates");
    let manifest = &krate.files[Path::new("Cargo.toml")];
    assert!(
        manifest.contains(
            "openapi-mcp-runtime = { path = \"/src/openapi-mcp/runtime\", default-features = false, features = [\"cli\", \"http\", \"sqlite\"] }\nopenapi-mcp-oauth-proxy = { path = \"/src/openapi-mcp/oauth-proxy\", default-features = false, features = [\"sqlite\"] }\n"
        ),
        "{manifest}"
    );
    let main = &krate.files[Path::new("src/main.rs")];
    assert!(
        main.contains("generated_main_with(")
            && main.contains("Some(openapi_mcp_oauth_proxy::factory)"),
        "{main}"
    );
    for (path, text) in &plain.files {
        if path != Path::new("Cargo.toml") && path != Path::new("src/main.rs") {
            assert_eq!(Some(text), krate.files.get(path), "{}", path.display());
        }
    }
    let versioned = CodegenOptions {
        runtime_dep: RuntimeDep::Version("0.1.0".into()),
        ..opts
    };
    let manifest = &generate(&set, &versioned).expect("generates").files[Path::new("Cargo.toml")];
    assert!(
        manifest
            .contains("openapi-mcp-oauth-proxy = { version = \"0.1.0\", default-features = false"),
        "{manifest}"
    );
}

/// A generated server is built with the runtime's `cli` feature only (no `--features`): every
/// serving option is still there, and each one whose part is left out stops it at start-up with
/// a message naming the feature to regenerate with (before anything is served).
fn refuses_the_parts_left_out(bin: &Path, name: &str) {
    for (args, feature) in [
        (&["--transport", "http"][..], "http"),
        (&["--mode", "code"][..], "code"),
        (&["--metrics-listen", "127.0.0.1:0"][..], "metrics"),
        (&["--task-store", "sqlite:tasks.sqlite3"][..], "sqlite"),
        (&["--task-store", "redis://127.0.0.1:1"][..], "redis"),
        (
            &["--task-store", "postgres://u@127.0.0.1:1/t"][..],
            "postgres",
        ),
    ] {
        let out = Command::new(bin)
            .args(args)
            .args(["--base-url", "http://127.0.0.1:1/"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name} {args:?}: {stderr}");
        let said = format!(
            "this server was built without the `{feature}` feature (regenerate with `openapi-mcp generate --features {feature}`"
        );
        assert!(
            stderr.contains(&said) && stderr.contains(args[0]),
            "{name} {args:?}: {stderr}"
        );
    }
}

/// Sends JSON-RPC lines to `bin` over stdio and collects the replies with ids up to `last_id`.
fn stdio_session(bin: &Path, lines: &[&str], last_id: u64) -> BTreeMap<u64, serde_json::Value> {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(bin)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    // A server that never answers must fail the test, not hang it.
    let child = std::sync::Arc::new(std::sync::Mutex::new(child));
    let watchdog = {
        let child = std::sync::Arc::clone(&child);
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(60));
            let _ = child.lock().map(|mut c| c.kill());
        })
    };
    for line in lines {
        writeln!(stdin, "{line}").expect("write request");
    }
    let mut replies = BTreeMap::new();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let v: serde_json::Value = serde_json::from_str(&line).expect("reply is JSON");
        if let Some(id) = v["id"].as_u64() {
            replies.insert(id, v);
        }
        if (1..=last_id).all(|i| replies.contains_key(&i)) {
            break;
        }
    }
    drop(stdin);
    if let Ok(mut c) = child.lock() {
        let _ = c.kill();
        let _ = c.wait();
    }
    drop(watchdog);
    assert!(
        (1..=last_id).all(|i| replies.contains_key(&i)),
        "missing replies: {replies:?}"
    );
    replies
}

/// #23 finding 20: schemes whose names map to one variable read none of it; the generated README
/// says so instead of listing the shared variable as if it worked.
#[test]
fn readme_names_schemes_sharing_a_variable() {
    use openapi_mcp_toolset::model::SecurityScheme;
    let mut set = tool_set("petstore.yaml");
    set.security_schemes
        .push(("ApiKey".to_string(), SecurityScheme::Bearer));
    set.security_schemes
        .push(("API_KEY".to_string(), SecurityScheme::Bearer));
    let krate = generate_for(&set, RuntimeDep::Version("0.1.0".into()));
    let readme = &krate.files[Path::new("README.md")];
    assert!(
        readme.contains("Schemes `api_key`, `ApiKey`, `API_KEY` all map to `OPENAPI_MCP_API_KEY`"),
        "{readme}"
    );
    // Without a collision there is no such line.
    let krate = generate_for(
        &tool_set("petstore.yaml"),
        RuntimeDep::Version("0.1.0".into()),
    );
    assert!(!krate.files[Path::new("README.md")].contains("all map to"));
}

/// The runtime paths a Rust file names outside its facade for generated crates
/// (`openapi_mcp_runtime::generated::…`), each with its line: every occurrence of the crate's
/// name must be followed by `::generated::`.
fn paths_outside_facade(text: &str) -> Vec<String> {
    const CRATE: &str = "openapi_mcp_runtime";
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find(CRATE) {
            let after = &rest[i + CRATE.len()..];
            if !after.starts_with("::generated::") {
                let end = after
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(after.len());
                out.push(format!("line {}: {CRATE}{}", n + 1, &after[..end]));
            }
            rest = after;
        }
    }
    out
}

/// #42: generated code names the runtime only through its facade for generated crates
/// (`openapi_mcp_runtime::generated`), so a runtime upgrade that reorganises the modules behind
/// it leaves generated crates compiling. Every Rust file of every variant (each fixture, each
/// default mode, every optional part, the OAuth proxy's `main.rs`, an extensible crate and its
/// user-owned `src/custom.rs`), the checked-in snapshots and the example's generated crate.
#[test]
fn generated_code_names_the_runtime_only_through_its_facade() {
    use openapi_mcp_codegen::generate_extensible;
    use openapi_mcp_toolset::model::Exposure;
    // The check itself catches what it must.
    assert_eq!(
        paths_outside_facade(
            "use ::openapi_mcp_runtime::generated::Route;\nuse ::openapi_mcp_runtime::forward::Forwarder;\n x = openapi_mcp_runtime::rmcp::model::Tool"
        ),
        [
            "line 2: openapi_mcp_runtime::forward::Forwarder",
            "line 3: openapi_mcp_runtime::rmcp::model::Tool"
        ]
    );
    assert_eq!(
        paths_outside_facade("use openapi_mcp_runtime::{generated::Route, forward};"),
        ["line 1: openapi_mcp_runtime::"]
    );

    let mut problems = Vec::new();
    let mut check = |origin: &str, path: &Path, text: &str| {
        if path.extension().is_some_and(|e| e == "rs") {
            for p in paths_outside_facade(text) {
                problems.push(format!("{origin}: {}: {p}", path.display()));
            }
        }
    };
    let modes = [
        (Exposure::Tools, vec![]),
        (Exposure::Dynamic, vec![]),
        (Exposure::Hybrid, vec!["*pet*".to_string()]),
        (Exposure::Code, vec![]),
    ];
    for name in FIXTURES {
        let set = tool_set(name);
        for (mode, pins) in &modes {
            for features in [vec![], vec!["all".to_string()]] {
                let opts = CodegenOptions {
                    crate_name: default_crate_name(&set.title),
                    runtime_dep: RuntimeDep::Version("0.1.0".into()),
                    mode: *mode,
                    pins: pins.clone(),
                    features: features.clone(),
                    workflows: Vec::new(),
                    workflows_only: false,
                };
                let origin = format!("{name} ({mode:?}, features {features:?})");
                let krate = generate(&set, &opts).unwrap_or_else(|e| panic!("{origin}: {e}"));
                for (path, text) in &krate.files {
                    check(&origin, path, text);
                }
                let with_workflows = CodegenOptions {
                    workflows: vec![WorkflowDocument {
                        file_name: "flows.arazzo.yaml".into(),
                        text: "arazzo: 1.0.1\n".into(),
                    }],
                    ..opts.clone()
                };
                let krate = generate(&set, &with_workflows)
                    .unwrap_or_else(|e| panic!("{origin} with workflows: {e}"));
                for (path, text) in &krate.files {
                    check(&format!("{origin} with workflows"), path, text);
                }
                if features.is_empty() {
                    let ext = generate_extensible(&set, &opts)
                        .unwrap_or_else(|e| panic!("{origin} --extensible: {e}"));
                    for (path, text) in ext.generated.files.iter().chain(&ext.user_owned) {
                        check(&format!("{origin} --extensible"), path, text);
                    }
                }
            }
        }
    }
    for name in BUILT {
        for (path, text) in read_tree(&snapshot_dir(name)) {
            check("snapshot", &path, &text);
        }
    }
    let example = workspace().join("examples/axum-embed/mcp");
    let tree = read_tree(&example);
    assert!(tree.contains_key(Path::new("src/lib.rs")), "{example:?}");
    for (path, text) in tree {
        check("examples/axum-embed/mcp", &path, &text);
    }
    assert!(
        problems.is_empty(),
        "runtime paths outside openapi_mcp_runtime::generated:\n{}",
        problems.join("\n")
    );
}

/// #39: a crate with Arazzo documents embeds each as `src/workflows/NAME` (byte for byte, listed
/// in the marker), hands them to serving through the facade (`WORKFLOWS` in lib.rs,
/// `generated_main_with_workflows` in main.rs, with the OAuth proxy's factory when built with
/// it), and is built with the runtime's `workflows`; every other file but the README is the
/// plain generation's. Bad names, `--workflows-only` without documents and `--extensible` with
/// workflows are refused.
#[test]
fn workflows_are_embedded_and_handed_to_serving() {
    let set = tool_set("petstore.yaml");
    let doc = |name: &str| WorkflowDocument {
        file_name: name.into(),
        text: "arazzo: 1.0.1\ninfo: {title: t, version: '1'}\n# \"quoted\" \\ text\n".into(),
    };
    let plain_opts = CodegenOptions {
        crate_name: "petstore-mcp".into(),
        runtime_dep: RuntimeDep::Version("0.1.0".into()),
        ..Default::default()
    };
    let plain = generate(&set, &plain_opts).expect("generates");
    let opts = CodegenOptions {
        workflows: vec![doc("a.arazzo.yaml"), doc("b.arazzo.json")],
        ..plain_opts.clone()
    };
    let krate = generate(&set, &opts).expect("generates");
    for name in ["a.arazzo.yaml", "b.arazzo.json"] {
        let path = PathBuf::from(format!("src/workflows/{name}"));
        assert_eq!(krate.files[&path], doc(name).text);
        assert!(krate.files[Path::new(MARKER_FILE)].contains(&format!("src/workflows/{name}\n")));
    }
    let lib = &krate.files[Path::new("src/lib.rs")];
    assert!(
        lib.contains("include_str!(\"workflows/a.arazzo.yaml\")")
            && lib.contains("include_str!(\"workflows/b.arazzo.json\")")
            && lib.contains("only: false"),
        "{lib}"
    );
    let main = &krate.files[Path::new("src/main.rs")];
    assert!(
        main.contains("generated_main_with_workflows(")
            && main
                .split_whitespace()
                .collect::<String>()
                .contains("petstore_mcp::WORKFLOWS,None,"),
        "{main}"
    );
    let manifest = &krate.files[Path::new("Cargo.toml")];
    assert!(
        manifest.contains("features = [\"cli\", \"workflows\"]"),
        "{manifest}"
    );
    assert!(krate.files[Path::new("README.md")].contains("`src/workflows/a.arazzo.yaml`"));
    for (path, text) in &plain.files {
        let changed = [
            "Cargo.toml",
            "README.md",
            "src/lib.rs",
            "src/main.rs",
            MARKER_FILE,
        ];
        if !changed.iter().any(|c| path == Path::new(c)) {
            assert_eq!(Some(text), krate.files.get(path), "{}", path.display());
        }
    }

    // Only the workflows; with other parts (the order of FEATURES kept, once).
    let only = CodegenOptions {
        workflows_only: true,
        features: vec!["workflows".into(), "http".into(), "oauth-proxy".into()],
        ..opts.clone()
    };
    let krate = generate(&set, &only).expect("generates");
    assert!(krate.files[Path::new("src/lib.rs")].contains("only: true"));
    assert!(
        krate.files[Path::new("src/main.rs")]
            .split_whitespace()
            .collect::<String>()
            .contains("petstore_mcp::WORKFLOWS,Some(openapi_mcp_oauth_proxy::factory),")
    );
    assert!(
        krate.files[Path::new("Cargo.toml")]
            .contains("features = [\"cli\", \"http\", \"sqlite\", \"workflows\"]"),
        "{}",
        krate.files[Path::new("Cargo.toml")]
    );

    for bad in ["", "../x.yaml", "dir/x.yaml", "a\\b.yaml", ".", ".."] {
        let o = CodegenOptions {
            workflows: vec![doc(bad)],
            ..plain_opts.clone()
        };
        assert!(
            matches!(
                generate(&set, &o),
                Err(CodegenError::WorkflowFileName { .. })
            ),
            "{bad:?} accepted"
        );
    }
    let twice = CodegenOptions {
        workflows: vec![doc("a.yaml"), doc("a.yaml")],
        ..plain_opts.clone()
    };
    assert!(matches!(
        generate(&set, &twice),
        Err(CodegenError::WorkflowFileName { .. })
    ));
    let only_without = CodegenOptions {
        workflows_only: true,
        ..plain_opts.clone()
    };
    assert!(matches!(
        generate(&set, &only_without),
        Err(CodegenError::WorkflowsOnlyWithout)
    ));
    assert!(matches!(
        openapi_mcp_codegen::generate_extensible(&set, &opts),
        Err(CodegenError::ExtensibleWorkflows)
    ));
}
