//! The guide cannot drift from the binary (#40). Every example in `README.md` and `docs/src/**/*.md`
//! is either run or parsed by the real `openapi-mcp`:
//!
//! - `docs/src/reference/cli.md` is the `--help` of the binary and of every subcommand it lists;
//! - a ```` ```console ```` block is **run**: each `$ openapi-mcp …` line runs (in a temporary
//!   directory where `specs/` is this repository's fixture specs; the block's commands in order, so
//!   one may read what another wrote) and what it prints (stdout, then stderr, then
//!   `[exit status: N]` when not 0) must be the lines shown under it;
//! - a ```` ```yaml ```` or ```` ```toml ```` block whose first line is `# openapi-mcp ARGS` is
//!   written to the file its `--config` or `--overrides` names and that command is **run** (a
//!   `proxy` command as `config --print`, which reads the file exactly as `proxy` would, then stops)
//!   and must exit 0;
//! - every `openapi-mcp …` command line of a ```` ```sh ```` block, and the `args` of every
//!   client configuration (```` ```json ```` with `"command": "openapi-mcp"`), is **parsed**: run
//!   with `--help` appended, so clap checks every option and value before it prints the help.
//!
//! `UPDATE_SNAPSHOTS=1 cargo test -p openapi-mcp-tests --test e2e docs::` rewrites `cli.md` and
//! the output under each console command; review the diff.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use openapi_mcp_tests::harness::{binary, workspace_root};

fn updating() -> bool {
    std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1")
}

/// The binary with an environment that cannot change what it prints: no credential or option
/// variables of ours, a fixed help width, no terminal.
fn openapi_mcp(args: &[String], dir: &Path) -> Output {
    let mut cmd = Command::new(binary());
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .env("COLUMNS", "100")
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG");
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k.starts_with("OPENAPI_MCP_") || k.starts_with("OTEL_") {
            cmd.env_remove(&key);
        }
    }
    cmd.output().expect("run openapi-mcp")
}

fn printed(o: &Output) -> String {
    let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&o.stderr));
    match o.status.code() {
        Some(0) => {}
        Some(n) => s.push_str(&format!("[exit status: {n}]\n")),
        None => s.push_str("[killed by a signal]\n"),
    }
    normalize(&s)
}

/// Trailing spaces dropped (Markdown editors drop them too), one final newline.
fn normalize(s: &str) -> String {
    let mut out: String = s.lines().map(|l| format!("{}\n", l.trim_end())).collect();
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The Markdown files and their fenced blocks.

fn doc_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("read docs dir")
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let root = workspace_root();
    let mut files = vec![root.join("README.md")];
    walk(&root.join("docs").join("src"), &mut files);
    files
}

struct Block {
    /// The fence's info string's first word (`sh`, `console`, …).
    lang: String,
    /// 1-based line of the opening fence.
    line: usize,
    /// Lines of the content, without the fence's indentation.
    lines: Vec<String>,
    /// Index (0-based) of the first content line and one past the last, in the file's lines.
    range: (usize, usize),
    indent: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            let indent = lines[i].len() - trimmed.len();
            let lang = info
                .split([',', ' '])
                .next()
                .unwrap_or_default()
                .to_string();
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && lines[end].trim() != "```" {
                end += 1;
            }
            let content = lines[start..end]
                .iter()
                .map(|l| {
                    l.get(indent..)
                        .unwrap_or_else(|| l.trim_start())
                        .to_string()
                })
                .collect();
            out.push(Block {
                lang,
                line: i + 1,
                lines: content,
                range: (start, end),
                indent,
            });
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Shell words of one command line: quotes, backslash escapes, a `#` word starting a comment.
/// Variables and `$(…)` are kept as written (they stand for values).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                cur.push(n);
                            }
                        }
                        _ => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Logical command lines of a shell block: `\`-continued lines joined, comment lines skipped.
fn logical_lines(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for l in lines {
        let t = l.trim();
        if cur.is_empty() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            cur.push_str(head);
            cur.push(' ');
        } else {
            cur.push_str(t);
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The arguments after `openapi-mcp` when the line runs it (after `VAR=value` words, or after the
/// `--` of a launcher such as `claude mcp add NAME -- openapi-mcp ...`), else None.
fn openapi_mcp_args(line: &str) -> Option<Vec<String>> {
    let words = shell_words(line);
    let is_env = |w: &String| {
        w.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let start = words.iter().position(|w| !is_env(w))?;
    let start = if words[start] == "openapi-mcp" {
        start
    } else {
        let dashes = words.iter().position(|w| w == "--")?;
        dashes + 1
    };
    (words.get(start)? == "openapi-mcp").then(|| words[start + 1..].to_vec())
}

fn rel(p: &Path) -> String {
    p.strip_prefix(workspace_root())
        .unwrap_or(p)
        .display()
        .to_string()
}

/// A fresh directory whose `specs` is the repository's fixture specs.
fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "openapi-mcp-docs-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    std::os::unix::fs::symlink(workspace_root().join("specs"), dir.join("specs"))
        .expect("link specs");
    dir
}

/// Runs `args --help`: clap parses every argument (unknown options, bad values) before the help.
fn parse_error(args: &[String]) -> Option<String> {
    let mut with_help = args.to_vec();
    with_help.push("--help".into());
    let o = openapi_mcp(&with_help, &workspace_root());
    let out = String::from_utf8_lossy(&o.stdout);
    (o.status.code() != Some(0) || !out.contains("Usage:"))
        .then(|| format!("{}{}", out, String::from_utf8_lossy(&o.stderr)))
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// `docs/src/reference/cli.md` is exactly the help the binary prints.
#[test]
fn cli_reference_is_the_binarys_help() {
    let root = workspace_root();
    let help = |args: &[&str]| -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let o = openapi_mcp(&args, &root);
        assert_eq!(o.status.code(), Some(0), "openapi-mcp {args:?}");
        normalize(&String::from_utf8_lossy(&o.stdout))
    };
    let top = help(&["--help"]);
    let subcommands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A name starts in column 3; a wrapped description goes on further right.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(
        subcommands.len() >= 6,
        "subcommands read from --help: {subcommands:?}"
    );

    let mut doc = String::from(
        "# Command-line reference\n\n\
         <!-- Generated: `UPDATE_SNAPSHOTS=1 cargo test -p openapi-mcp-tests --test e2e docs::` \
         rewrites this file from the binary; do not edit it by hand. -->\n\n\
         Every subcommand's `--help`, exactly as the binary prints it (a test compares the two).\n\
         Generated servers take `proxy`'s serving options.\n",
    );
    let mut section = |title: &str, text: &str| {
        doc.push_str(&format!("\n## `{title}`\n\n```text\n{text}```\n"));
    };
    section("openapi-mcp", &top);
    for sub in &subcommands {
        section(&format!("openapi-mcp {sub}"), &help(&[sub, "--help"]));
    }

    let path = root.join("docs/src/reference/cli.md");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if updating() {
        if current != doc {
            std::fs::write(&path, &doc).expect("write cli.md");
            eprintln!("updated {}", path.display());
        }
        return;
    }
    assert!(
        current == doc,
        "{} is not the binary's --help (an option was added or changed?). Rerun with \
         UPDATE_SNAPSHOTS=1 and review the diff.",
        path.display()
    );
}

/// Every ```console block runs, and prints what the guide shows.
#[test]
fn console_examples_run_and_print_what_the_guide_shows() {
    let mut ran = 0;
    let mut failures = Vec::new();
    let mut malformed = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).expect("read doc");
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut changed = false;
        // Rewrite from the last block up, so earlier ranges stay valid.
        let console: Vec<Block> = blocks(&text)
            .into_iter()
            .filter(|b| b.lang == "console")
            .collect();
        for block in console.iter().rev() {
            let dir = scratch_dir("console");
            let mut rewritten: Vec<String> = Vec::new();
            let mut well_formed = true;
            let mut i = 0;
            while i < block.lines.len() {
                let Some(first) = block.lines[i].strip_prefix("$ ") else {
                    malformed.push(format!(
                        "{}:{}: console block: output before any `$ ` command",
                        rel(&file),
                        block.line
                    ));
                    well_formed = false;
                    break;
                };
                let mut cmd_lines = vec![block.lines[i].clone()];
                let mut cmd = first.to_string();
                while cmd.trim_end().ends_with('\\') && i + 1 < block.lines.len() {
                    i += 1;
                    cmd_lines.push(block.lines[i].clone());
                    cmd = format!(
                        "{} {}",
                        cmd.trim_end().trim_end_matches('\\'),
                        block.lines[i].trim()
                    );
                }
                i += 1;
                let start = i;
                while i < block.lines.len() && !block.lines[i].starts_with("$ ") {
                    i += 1;
                }
                let expected = normalize(&block.lines[start..i].join("\n"));
                let Some(args) = openapi_mcp_args(&cmd) else {
                    malformed.push(format!(
                        "{}:{}: console blocks run `openapi-mcp` only: {cmd}",
                        rel(&file),
                        block.line
                    ));
                    well_formed = false;
                    break;
                };
                // The scratch directory's path changes every run; the guide shows it as the
                // place its readers run the examples from.
                let actual = printed(&openapi_mcp(&args, &dir))
                    .replace(&dir.display().to_string(), "/path/to/openapi-mcp");
                ran += 1;
                if actual != expected {
                    failures.push(format!(
                        "{}:{}: `{cmd}` printed\n{actual}\nbut the guide shows\n{expected}",
                        rel(&file),
                        block.line
                    ));
                }
                rewritten.extend(cmd_lines);
                rewritten.extend(actual.lines().map(str::to_string));
            }
            let _ = std::fs::remove_dir_all(&dir);
            let pad = " ".repeat(block.indent);
            let new: Vec<String> = rewritten
                .iter()
                .map(|l| {
                    if l.is_empty() {
                        String::new()
                    } else {
                        format!("{pad}{l}")
                    }
                })
                .collect();
            if well_formed && lines[block.range.0..block.range.1] != new[..] {
                lines.splice(block.range.0..block.range.1, new);
                changed = true;
            }
        }
        if updating() && changed {
            std::fs::write(&file, lines.join("\n") + "\n").expect("rewrite doc");
            eprintln!("updated the console output in {}", file.display());
        }
    }
    assert!(malformed.is_empty(), "{}", malformed.join("\n"));
    assert!(
        ran >= 5,
        "only {ran} console commands found: the docs lost their run examples?"
    );
    if !updating() {
        assert!(
            failures.is_empty(),
            "{} console example(s) differ from the binary (rerun with UPDATE_SNAPSHOTS=1 and review \
             the diff):\n\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    }
}

/// Config and overrides files the guide shows (first line `# openapi-mcp ARGS`) are read by the
/// binary without an error.
#[test]
fn config_examples_are_accepted() {
    // The check itself: `config --print` refuses a key `proxy` would refuse.
    let dir = scratch_dir("config-bad");
    std::fs::write(
        dir.join("bad.yaml"),
        "spec: specs/petstore.yaml\nretires: 3\n",
    )
    .expect("write");
    let args: Vec<String> = ["config", "--print", "--config", "bad.yaml"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(openapi_mcp(&args, &dir).status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);

    let mut ran = 0;
    let mut failures = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).expect("read doc");
        for block in blocks(&text) {
            if !matches!(block.lang.as_str(), "yaml" | "toml") {
                continue;
            }
            let Some(first) = block.lines.first() else {
                continue;
            };
            let Some(args) = first.strip_prefix("# ").and_then(openapi_mcp_args) else {
                continue;
            };
            let name = args
                .iter()
                .position(|a| a == "--config" || a == "--overrides")
                .and_then(|i| args.get(i + 1))
                .unwrap_or_else(|| {
                    panic!(
                        "{}:{}: `{first}` names no --config or --overrides file",
                        rel(&file),
                        block.line
                    )
                });
            let dir = scratch_dir("config");
            std::fs::write(dir.join(name), block.lines.join("\n") + "\n").expect("write example");
            let args: Vec<String> = match args.first().map(String::as_str) {
                Some("proxy") => ["config".to_string(), "--print".to_string()]
                    .into_iter()
                    .chain(args[1..].iter().cloned())
                    .collect(),
                _ => args,
            };
            let o = openapi_mcp(&args, &dir);
            ran += 1;
            if o.status.code() != Some(0) {
                failures.push(format!(
                    "{}:{}: `openapi-mcp {}` exited {:?}:\n{}",
                    rel(&file),
                    block.line,
                    args.join(" "),
                    o.status.code(),
                    printed(&o)
                ));
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    assert!(ran >= 3, "only {ran} config examples found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every `openapi-mcp` command line of a shell block, and every client configuration's `args`,
/// parses with the binary's own command definition.
#[test]
fn shell_examples_parse() {
    // The check itself: a misspelt option or a bad value is caught despite the `--help`.
    for bad in [
        "openapi-mcp proxy specs/petstore.yaml --retires 3",
        "openapi-mcp proxy specs/petstore.yaml --timeout soon",
        "openapi-mcp tools specs/petstore.yaml --mode dynamic",
    ] {
        let args = openapi_mcp_args(bad).expect("an openapi-mcp line");
        assert!(parse_error(&args).is_some(), "not caught: {bad}");
    }

    let mut parsed = 0;
    let mut failures = Vec::new();
    for file in doc_files() {
        if file.ends_with("reference/cli.md") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("read doc");
        for block in blocks(&text) {
            let commands: Vec<Vec<String>> = match block.lang.as_str() {
                "sh" | "bash" | "shell" => logical_lines(&block.lines)
                    .iter()
                    .filter_map(|l| openapi_mcp_args(l).or_else(|| docker_run_args(l)))
                    .collect(),
                "json" => {
                    let v: serde_json::Value = serde_json::from_str(&block.lines.join("\n"))
                        .unwrap_or_else(|e| {
                            panic!(
                                "{}:{}: JSON example does not parse: {e}",
                                rel(&file),
                                block.line
                            )
                        });
                    let mut found = Vec::new();
                    client_commands(&v, &mut found);
                    found
                }
                _ => continue,
            };
            for args in commands {
                parsed += 1;
                if let Some(err) = parse_error(&args) {
                    failures.push(format!(
                        "{}:{}: `openapi-mcp {}` does not parse:\n{err}",
                        rel(&file),
                        block.line,
                        args.join(" ")
                    ));
                }
            }
        }
    }
    assert!(parsed >= 10, "only {parsed} command lines found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `docker run … openapi-mcp ARGS` (the image): the Dockerfile's `ENTRYPOINT` arguments, then ARGS.
fn docker_run_args(line: &str) -> Option<Vec<String>> {
    let words = shell_words(line);
    if words.get(..2)? != ["docker", "run"] {
        return None;
    }
    let image = words.iter().position(|w| w == "openapi-mcp")?;
    let dockerfile =
        std::fs::read_to_string(workspace_root().join("Dockerfile")).expect("read Dockerfile");
    let entrypoint = dockerfile
        .lines()
        .find_map(|l| l.strip_prefix("ENTRYPOINT "))
        .expect("the Dockerfile has an ENTRYPOINT");
    let entrypoint: Vec<String> =
        serde_json::from_str(entrypoint).expect("ENTRYPOINT in exec form (a JSON array)");
    assert!(
        entrypoint
            .first()
            .is_some_and(|e| e.ends_with("/openapi-mcp")),
        "ENTRYPOINT runs openapi-mcp: {entrypoint:?}"
    );
    Some(
        entrypoint[1..]
            .iter()
            .chain(&words[image + 1..])
            .cloned()
            .collect(),
    )
}

/// `{"command": "openapi-mcp", "args": [...]}` anywhere in a client configuration.
fn client_commands(v: &serde_json::Value, out: &mut Vec<Vec<String>>) {
    match v {
        serde_json::Value::Object(m) => {
            if m.get("command").and_then(|c| c.as_str()) == Some("openapi-mcp") {
                let args = m
                    .get("args")
                    .and_then(|a| a.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|s| s.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(args);
            }
            m.values().for_each(|v| client_commands(v, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| client_commands(v, out)),
        _ => {}
    }
}

#[test]
fn shell_words_and_lines() {
    assert_eq!(
        shell_words(r#"A=1 openapi-mcp proxy 'a b' "c \"d\"" e\ f # comment"#),
        ["A=1", "openapi-mcp", "proxy", "a b", "c \"d\"", "e f"]
    );
    let block: Vec<String> = ["x \\", "  --y 1", "  # --z", "", "# only a comment", "w"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(logical_lines(&block), ["x  --y 1", "w"]);
    assert_eq!(
        openapi_mcp_args("OPENAPI_MCP_X=… openapi-mcp tools s.yaml"),
        Some(vec!["tools".to_string(), "s.yaml".to_string()])
    );
    assert_eq!(openapi_mcp_args("cd x && cargo build"), None);
    let docker = docker_run_args("docker run --rm -p 8080:8080 openapi-mcp /spec.yaml --stateless")
        .expect("a docker run line");
    assert_eq!(docker[0], "proxy");
    assert_eq!(docker[docker.len() - 2..], ["/spec.yaml", "--stateless"]);
    assert_eq!(
        openapi_mcp_args("claude mcp add p --env K=v -- openapi-mcp proxy s.yaml"),
        Some(vec!["proxy".to_string(), "s.yaml".to_string()])
    );
}
