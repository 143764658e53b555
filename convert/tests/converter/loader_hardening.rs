//! The loader's limits (`openapi_mcp_convert::load::LoadOptions`): what a spec, or a document it
//! reaches, can make the loader read, connect to and spend parsing. Every server here listens on
//! 127.0.0.1; the link-local addresses named are refused before any connection is tried.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use openapi_mcp_convert::load::{LoadOptions, load_single, load_with};
use openapi_mcp_convert::{LoadError, SpecSource, ToolOptions, convert, load};

use super::support::*;

/// Serves the routes `make` returns for the server's address (each a path and a raw HTTP
/// response) on 127.0.0.1, one connection at a time; 404 for anything else.
fn serve(make: impl FnOnce(SocketAddr) -> Vec<(String, String)>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    let routes = make(addr);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let Ok(read) = stream.try_clone() else {
                continue;
            };
            let mut reader = BufReader::new(read);
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let path = first.split(' ').nth(1).unwrap_or_default();
            let resp = routes
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, r)| r.clone())
                .unwrap_or_else(|| {
                    "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        .into()
                });
            let _ = stream.write_all(resp.as_bytes());
        }
    });
    addr
}

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/yaml\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn redirect(to: &str) -> String {
    format!(
        "HTTP/1.1 302 Found\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "openapi-mcp-loader-hardening-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// An error and its sources, as the CLI prints them.
fn chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(c) = cur {
        parts.push(c.to_string());
        cur = c.source();
    }
    parts.join(": ")
}

/// A spec whose operations `op<i>` each take the request body schema `refs[i]` names.
fn spec_with_refs(refs: &[&str]) -> String {
    let mut out = String::from("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n");
    for (i, r) in refs.iter().enumerate() {
        out.push_str(&format!(
            "  /op{i}:\n    post:\n      operationId: op{i}\n      requestBody:\n        content:\n          application/json:\n            schema: {{$ref: '{r}'}}\n      responses:\n        '200': {{description: ok}}\n"
        ));
    }
    out
}

fn the_schema_site(doc: &str, op: usize) -> String {
    format!("{doc}#/paths/~1op{op}/post/requestBody/content/application~1json/schema")
}

fn load_url(url: &str) -> Result<openapi_mcp_convert::load::Spec, LoadError> {
    let url = url::Url::parse(url).expect("url");
    block_on(load(&SpecSource::Url(url)))
}

fn load_path(path: &Path) -> Result<openapi_mcp_convert::load::Spec, LoadError> {
    block_on(load(&SpecSource::Path(path.to_path_buf())))
}

fn tools_json(conv: &openapi_mcp_convert::Conversion) -> String {
    conv.tools
        .tools
        .iter()
        .map(|t| serde_json::to_string(t.tool()).expect("json"))
        .collect()
}

// --- Finding 8: what a remote document can make the loader read or fetch ---------------------

#[test]
fn a_remote_spec_may_not_ref_local_files() {
    let dir = scratch("remote-to-file");
    let secret = dir.join("secret.yaml");
    std::fs::write(
        &secret,
        "Secret:\n  type: object\n  properties:\n    root_password_hash: {type: string}\n",
    )
    .expect("write secret");
    let secret_url = url::Url::from_file_path(&secret).expect("file url");
    let spec = spec_with_refs(&[&format!("{secret_url}#/Secret"), "file:///etc/passwd"]);
    let addr = serve(|_| vec![("/openapi.yaml".into(), ok(&spec))]);
    let root = format!("http://{addr}/openapi.yaml");

    // A spec served from loopback is the user's choice: it loads.
    let loaded = load_url(&root).expect("a spec on 127.0.0.1 loads");
    let conv = convert(&loaded, &ToolOptions::default());
    // The local file's content is not in the tools, and each $ref says why, where it is.
    let tools = tools_json(&conv);
    assert!(!tools.contains("root_password_hash"), "{tools}");
    assert!(!tools.contains("root:"), "{tools}");
    let diags = diagnostics_text(&conv).join("\n");
    for (op, target) in [
        (0, secret_url.to_string()),
        (1, "file:///etc/passwd".into()),
    ] {
        let site = the_schema_site(&root, op);
        let expected = format!(
            "{site}: $ref {:?}: refused to use {target}: a document fetched over http(s) may not reference a local file",
            if op == 0 {
                format!("{secret_url}#/Secret")
            } else {
                target.clone()
            }
        );
        assert!(diags.contains(&expected), "{expected}\nnot in\n{diags}");
    }
    // Nothing was read, so there is no document for it either.
    assert_eq!(loaded.docs.docs.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_local_spec_may_still_ref_remote_documents() {
    let addr = serve(|_| {
        vec![(
            "/common.yaml".into(),
            ok("Pet:\n  type: object\n  properties:\n    name: {type: string}\n"),
        )]
    });
    let dir = scratch("local-to-remote");
    let path = dir.join("openapi.yaml");
    std::fs::write(
        &path,
        spec_with_refs(&[&format!("http://{addr}/common.yaml#/Pet")]),
    )
    .expect("write spec");
    let conv = convert(&load_path(&path).expect("loads"), &ToolOptions::default());
    assert!(conv.diagnostics.is_empty(), "{:?}", diagnostics_text(&conv));
    assert_eq!(prop_names(&input(tool(&conv, "op0"))), vec!["name"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn remote_refs_never_reach_link_local_addresses() {
    let addr = serve(|_| {
        vec![(
            "/hop".into(),
            redirect("http://169.254.169.254/latest/meta-data/iam.yaml"),
        )]
    });
    let refs = [
        "http://169.254.169.254/latest/meta-data/iam.yaml#/S".to_string(),
        "http://[fe80::1]/x.yaml#/S".to_string(),
        format!("http://{addr}/hop#/S"),
    ];
    let reasons = [
        "cannot load http://169.254.169.254/latest/meta-data/iam.yaml: refused: 169.254.169.254 is a link-local address (where cloud metadata services answer), and remote $refs may not reach link-local addresses",
        "cannot load http://[fe80::1]/x.yaml: refused: [fe80::1] is a link-local address (where cloud metadata services answer), and remote $refs may not reach link-local addresses",
        "refused: redirect to http://169.254.169.254/latest/meta-data/iam.yaml: 169.254.169.254 is a link-local address (where cloud metadata services answer), and remote $refs may not reach link-local addresses",
    ];
    let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
    let spec = spec_with_refs(&refs);

    // From a local spec, and from one served over http: the same.
    let dir = scratch("link-local");
    let path = dir.join("openapi.yaml");
    std::fs::write(&path, &spec).expect("write spec");
    let served = serve(|_| vec![("/openapi.yaml".into(), ok(&spec))]);
    let root = format!("http://{served}/openapi.yaml");
    for (name, loaded) in [
        (path.display().to_string(), load_path(&path)),
        (root.clone(), load_url(&root)),
    ] {
        let start = Instant::now();
        let conv = convert(&loaded.expect("loads"), &ToolOptions::default());
        let diags = diagnostics_text(&conv).join("\n");
        for (op, reason) in reasons.iter().enumerate() {
            let site = the_schema_site(&name, op);
            let line = diags
                .lines()
                .find(|l| l.contains(&format!("{site}: ")))
                .unwrap_or_else(|| panic!("no diagnostic at {site} in\n{diags}"));
            assert!(line.contains(reason), "{reason}\nnot in\n{line}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_spec_url_may_not_redirect_to_a_link_local_address() {
    let spec = spec_with_refs(&["#/components/schemas/S"])
        + "components:\n  schemas:\n    S: {type: object, properties: {a: {type: string}}}\n";
    let addr = serve(|_| {
        vec![
            (
                "/metadata".into(),
                redirect("http://169.254.169.254/openapi.yaml"),
            ),
            ("/moved".into(), redirect("/openapi.yaml")),
            ("/openapi.yaml".into(), ok(&spec)),
        ]
    });
    let url = format!("http://{addr}/metadata");
    let err = load_url(&url).expect_err("refused");
    assert!(matches!(err, LoadError::Fetch { .. }), "{err:?}");
    assert_eq!(
        chain(&err),
        format!(
            "{url}: cannot read: refused: redirect to http://169.254.169.254/openapi.yaml: 169.254.169.254 is a link-local address (where cloud metadata services answer), and redirects may not lead to link-local addresses"
        )
    );
    // A redirect from loopback to loopback is followed.
    let conv = convert(
        &load_url(&format!("http://{addr}/moved")).expect("loads"),
        &ToolOptions::default(),
    );
    assert!(has_tool(&conv, "op0"));
}

// --- Finding 13: how much the loader reads -----------------------------------------------------

#[test]
fn every_document_read_is_capped() {
    assert_eq!(LoadOptions::default().max_document_bytes, 256 << 20);
    let opts = LoadOptions {
        max_document_bytes: 2048,
        ..LoadOptions::default()
    };
    let padding = format!("# {}\n", "x".repeat(3000));
    let big = spec_with_refs(&[]) + &padding;
    let dir = scratch("capped");

    // The spec itself, as a file and over http (declared length).
    let path = dir.join("big.yaml");
    std::fs::write(&path, &big).expect("write");
    let err = block_on(load_with(&SpecSource::Path(path.clone()), &opts)).expect_err("too big");
    assert!(matches!(err, LoadError::Read { .. }), "{err:?}");
    assert_eq!(
        chain(&err),
        format!(
            "{}: cannot read: larger than the limit of 2048 bytes",
            path.display()
        )
    );
    let large_schema = format!("S: {{type: object}}\n{padding}");
    let addr = serve(|_| {
        vec![
            ("/big.yaml".into(), ok(&big)),
            ("/schema.yaml".into(), ok(&large_schema)),
        ]
    });
    let url = url::Url::parse(&format!("http://{addr}/big.yaml")).expect("url");
    let err = block_on(load_with(&SpecSource::Url(url.clone()), &opts)).expect_err("too big");
    assert!(matches!(err, LoadError::Fetch { .. }), "{err:?}");
    assert_eq!(
        chain(&err),
        format!("{url}: cannot read: larger than the limit of 2048 bytes")
    );

    // A document a $ref reaches, as a file and over http.
    std::fs::write(dir.join("schema.yaml"), &large_schema).expect("write");
    let path = dir.join("openapi.yaml");
    std::fs::write(
        &path,
        spec_with_refs(&["schema.yaml#/S", &format!("http://{addr}/schema.yaml#/S")]),
    )
    .expect("write");
    let spec = block_on(load_with(&SpecSource::Path(path.clone()), &opts)).expect("loads");
    let diags = diagnostics_text(&convert(&spec, &ToolOptions::default())).join("\n");
    for op in 0..2 {
        let site = the_schema_site(&path.display().to_string(), op);
        let line = diags
            .lines()
            .find(|l| l.contains(&format!("{site}: ")))
            .unwrap_or_else(|| panic!("no diagnostic at {site} in\n{diags}"));
        assert!(
            line.contains(": larger than the limit of 2048 bytes"),
            "{line}"
        );
    }
    // With the default limit, the same documents load.
    let conv = convert(&load_path(&path).expect("loads"), &ToolOptions::default());
    assert!(conv.diagnostics.is_empty(), "{:?}", diagnostics_text(&conv));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn only_regular_files_are_read() {
    // The spec itself may be a pipe (`openapi-mcp proxy <(curl ...)`): read up to the cap.
    let dir = scratch("root-pipe");
    let root_fifo = dir.join("spec-pipe");
    if std::process::Command::new("mkfifo")
        .arg(&root_fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let writer = {
            let root_fifo = root_fifo.clone();
            std::thread::spawn(move || std::fs::write(&root_fifo, spec_with_refs(&[])))
        };
        let spec = load_path(&root_fifo).expect("a piped spec loads");
        assert!(spec.docs.root().get("openapi").is_some());
        writer.join().expect("writer").expect("write");
    }
    // But never a directory.
    let err = load_path(&dir).expect_err("refused");
    assert!(
        chain(&err).ends_with("not a regular file (a directory)"),
        "{}",
        chain(&err)
    );
    // Documents a $ref reaches: a device that never ends, a FIFO nobody writes to, a directory.
    let dir = scratch("special");
    let fifo = dir.join("fifo.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    std::fs::create_dir(dir.join("sub")).expect("mkdir");
    let path = dir.join("openapi.yaml");
    std::fs::write(
        &path,
        spec_with_refs(&["file:///dev/zero#/S", "fifo.yaml#/S", "sub/#/S"]),
    )
    .expect("write");
    let start = Instant::now();
    let spec = load_path(&path).expect("loads");
    let diags = diagnostics_text(&convert(&spec, &ToolOptions::default())).join("\n");
    let mut expected = vec![
        (
            0,
            "cannot load file:///dev/zero: not a regular file (a character device)",
        ),
        (2, "not a regular file (a directory)"),
    ];
    if made {
        expected.push((1, "not a regular file (a FIFO)"));
    } else {
        eprintln!("mkfifo unavailable: the FIFO case is not checked");
    }
    for (op, reason) in expected {
        let site = the_schema_site(&path.display().to_string(), op);
        let line = diags
            .lines()
            .find(|l| l.contains(&format!("{site}: ")))
            .unwrap_or_else(|| panic!("no diagnostic at {site} in\n{diags}"));
        assert!(line.contains(reason), "{reason}\nnot in\n{line}");
    }
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// --- Finding 12: how long parsing takes -------------------------------------------------------

#[test]
fn a_json_looking_document_is_json_only() {
    let dir = scratch("json-looking");
    let path = dir.join("openapi.json");
    // Valid YAML (flow style), invalid JSON: reported as JSON, not parsed as YAML again.
    std::fs::write(
        &path,
        "{openapi: 3.0.3, info: {title: t, version: '1'}, paths: {}}\n",
    )
    .expect("write");
    let err = load_path(&path).expect_err("not JSON");
    assert!(matches!(err, LoadError::Parse { .. }), "{err:?}");
    assert_eq!(
        chain(&err),
        format!(
            "{}: not valid JSON or YAML: line 1, column 2: key must be a string at line 1 column 2",
            path.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_json_document_fails_fast() {
    // 400 KB that look like JSON and are not: the JSON error is reported at once, and the YAML
    // parser is not tried (to which nested flow mappings cost tens of seconds).
    for (doc, error) in [
        (
            "{a: ".repeat(100_000),
            "line 1, column 2: key must be a string",
        ),
        (
            "[".repeat(400_000),
            "line 1, column 128: recursion limit exceeded",
        ),
    ] {
        let start = Instant::now();
        let err = load_single(doc.as_bytes(), "nested.json").expect_err("not JSON");
        let text = chain(&err);
        assert!(
            text.starts_with(&format!("nested.json: not valid JSON or YAML: {error}")),
            "{text}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
    }
}

#[test]
fn deeply_nested_yaml_flow_collections_fail_fast() {
    // 400 KB of nested flow collections after a YAML key, sequences and mappings: refused
    // before libyaml scans them (which took minutes).
    for nested in ["[".repeat(400_000), "{a: ".repeat(100_000)] {
        let doc = format!("openapi: 3.0.3\nx: {nested}\n");
        let start = Instant::now();
        let err = load_single(doc.as_bytes(), "nested.yaml").expect_err("too deep");
        assert_eq!(
            chain(&err),
            "nested.yaml: not valid JSON or YAML: line 2: flow collections ([...] or {...}) nested deeper than 128 levels"
        );
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
    }
    // Nesting the YAML parser takes still parses.
    let doc = format!(
        "openapi: 3.0.3\ninfo: {{title: t, version: '1'}}\npaths: {{}}\nx: {}1{}\n",
        "[".repeat(100),
        "]".repeat(100)
    );
    assert!(load_single(doc.as_bytes(), "ok.yaml").is_ok());
}
