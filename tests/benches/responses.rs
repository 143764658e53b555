//! `--response compact` measured on the example responses the real-world specs in
//! `../shared/specs` carry (#22): tokens (tiktoken o200k_base) of each 2xx JSON example as the
//! full minified body vs its compact form, per API, and for GitHub's list operations apart.
//! Also checks what compact promises: for every example of an operation with an output schema,
//! a compact structuredContent that the schema rejects while the full one passes would fall back
//! to the full one (counted), and the cut (`fit`) of every list example stays valid JSON within
//! the budget.
//!
//! Run: `cargo bench -p openapi-mcp-tests --bench responses` (`-- --verbose` lists each
//! operation).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use openapi_mcp_convert::{SpecSource, ToolOptions, convert, load};
use openapi_mcp_runtime::forward::fit;
use openapi_mcp_runtime::model::OutputShape;
use openapi_mcp_runtime::server::served_tool;
use openapi_mcp_runtime::validate::{LazyValidator, check_output};
use serde_json::{Value, json};

fn specs_dir() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/specs")).to_path_buf()
}

fn tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// A local `$ref` resolved (chains followed, at most 16).
fn deref<'v>(root: &'v Value, mut v: &'v Value) -> &'v Value {
    for _ in 0..16 {
        match v.get("$ref").and_then(Value::as_str) {
            Some(r) if r.starts_with('#') => match root.pointer(&r[1..]) {
                Some(t) => v = t,
                None => return v,
            },
            _ => return v,
        }
    }
    v
}

struct Example {
    op_id: String,
    method: String,
    value: Value,
}

/// Every example of a 2xx JSON response: OpenAPI 3 `example` / `examples.*.value`, Swagger 2
/// `examples.<json type>`.
fn examples(root: &Value) -> Vec<Example> {
    let mut out = Vec::new();
    let Some(paths) = root.get("paths").and_then(Value::as_object) else {
        return out;
    };
    for (path, item) in paths {
        let Some(item) = deref(root, item).as_object() else {
            continue;
        };
        for (method, op) in item {
            if !matches!(method.as_str(), "get" | "post" | "put" | "patch" | "delete") {
                continue;
            }
            let op_id = op
                .get("operationId")
                .and_then(Value::as_str)
                .map_or_else(|| format!("{method} {path}"), str::to_string);
            let Some(responses) = op.get("responses").and_then(Value::as_object) else {
                continue;
            };
            for (code, resp) in responses {
                if !code.starts_with('2') {
                    continue;
                }
                let resp = deref(root, resp);
                let mut found: Vec<Value> = Vec::new();
                if let Some(content) = resp.get("content").and_then(Value::as_object) {
                    for (mt, media) in content {
                        if !mt.contains("json") {
                            continue;
                        }
                        if let Some(e) = media.get("example") {
                            found.push(e.clone());
                        }
                        if let Some(es) = media.get("examples").and_then(Value::as_object) {
                            for e in es.values() {
                                if let Some(v) = deref(root, e).get("value") {
                                    found.push(v.clone());
                                }
                            }
                        }
                    }
                }
                if let Some(es) = resp.get("examples").and_then(Value::as_object) {
                    for (mt, v) in es {
                        if mt.contains("json") {
                            found.push(v.clone());
                        }
                    }
                }
                for value in found {
                    // Examples given as JSON text.
                    let value = match value {
                        Value::String(s) => match serde_json::from_str::<Value>(&s) {
                            Ok(v @ (Value::Object(_) | Value::Array(_))) => v,
                            _ => continue,
                        },
                        Value::Object(_) | Value::Array(_) => value,
                        _ => continue,
                    };
                    out.push(Example {
                        op_id: op_id.clone(),
                        method: method.clone(),
                        value,
                    });
                }
            }
        }
    }
    out
}

/// A GitHub list operation: a GET whose operationId's verb is `list` (`issues/list-for-repo`).
fn is_github_list(e: &Example) -> bool {
    e.method == "get"
        && e.op_id
            .rsplit('/')
            .next()
            .is_some_and(|v| v.starts_with("list"))
}

#[derive(Default)]
struct Tally {
    examples: usize,
    full: usize,
    compact: usize,
}

impl Tally {
    fn add(&mut self, full: usize, compact: usize) {
        self.examples += 1;
        self.full += full;
        self.compact += compact;
    }
    fn row(&self, label: &str) {
        let saved = if self.full == 0 {
            0.0
        } else {
            100.0 * (self.full - self.compact) as f64 / self.full as f64
        };
        println!(
            "{label:<40} {:>8} {:>12} {:>12} {:>8.1}%",
            self.examples, self.full, self.compact, saved
        );
    }
}

fn main() {
    let verbose = std::env::args().any(|a| a == "--verbose" || a == "-v");
    let dir = specs_dir();
    let files = [
        "github-octokit-2026-3.0.json",
        "stripe-spec3.json",
        "cloudflare-api-3.0.json",
        "box-api-3.0.json",
        "discord-api-3.1.json",
        "twilio-api-v2010-3.0.json",
        "slack-web-api-2.0.json",
        "k8s-swagger-2.0.json",
        "readme-train-travel-3.1.json",
        "oai-link-example-3.0.json",
    ];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "{:<40} {:>8} {:>12} {:>12} {:>9}",
        "API (2xx JSON examples)", "examples", "full tok", "compact tok", "saved"
    );
    let mut all = Tally::default();
    for file in files {
        let path = dir.join(file);
        if !path.exists() {
            println!("{file:<40} SKIPPED (not found)");
            continue;
        }
        let root: Value = match std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            Some(v) => v,
            None => {
                println!("{file:<40} SKIPPED (not JSON)");
                continue;
            }
        };
        let exs = examples(&root);
        if exs.is_empty() {
            println!("{file:<40} (no 2xx JSON examples)");
            continue;
        }
        // Output schemas, by operationId, to check that compact structured content validates.
        let spec = rt
            .block_on(load(&SpecSource::Path(path.clone())))
            .expect("spec loads");
        let set = convert(&spec, &ToolOptions::default()).tools;
        let outputs: HashMap<String, (Value, OutputShape, LazyValidator)> = set
            .tools
            .iter()
            .filter_map(|t| {
                let id = t.operation_id.clone()?;
                let schema = t.tool().output_schema.clone()?;
                Some((
                    id,
                    (
                        Value::Object((*schema).clone()),
                        t.route.output,
                        LazyValidator::default(),
                    ),
                ))
            })
            .collect();
        // What the `_select` argument adds to tools/list.
        let list_tokens = |tools: Vec<openapi_mcp_runtime::rmcp::model::Tool>| {
            tokens(&serde_json::to_string(&json!({ "tools": tools })).unwrap_or_default())
        };
        let bare = list_tokens(set.tools.iter().map(|t| t.tool().clone()).collect());
        let served = list_tokens(set.tools.iter().map(|t| served_tool(t)).collect());
        let with_select = set
            .tools
            .iter()
            .filter(|t| {
                served_tool(t).input_schema["properties"]
                    .get("_select")
                    .is_some()
            })
            .count();
        let mut api = Tally::default();
        let mut lists = Tally::default();
        let (mut checked, mut full_invalid, mut fallbacks) = (0, 0, 0);
        let (mut cuts, mut cut_invalid) = (0, 0);
        let mut compact_time = std::time::Duration::ZERO;
        let mut slowest = (std::time::Duration::ZERO, 0usize);
        for e in &exs {
            let full_text = serde_json::to_string(&e.value).unwrap_or_default();
            // What the proxy returns in compact mode (timed: compacting and writing the text;
            // the best of 3, the machine is shared).
            let mut took = std::time::Duration::MAX;
            let mut out = None;
            for _ in 0..3 {
                let started = std::time::Instant::now();
                let c = fit::compacted(&e.value).unwrap_or_else(|| e.value.clone());
                let text = serde_json::to_string(&c).unwrap_or_default();
                took = took.min(started.elapsed());
                out = Some((c, text));
            }
            let (c, compact_text) = out.unwrap_or_default();
            compact_time += took;
            slowest = slowest.max((took, full_text.len()));
            let (ft, ct) = (tokens(&full_text), tokens(&compact_text));
            api.add(ft, ct);
            all.add(ft, ct);
            let github_list = file.starts_with("github") && is_github_list(e);
            if github_list {
                lists.add(ft, ct);
            }
            if verbose {
                println!(
                    "  {:<60} {:>7} {:>7}{}",
                    e.op_id,
                    ft,
                    ct,
                    if github_list { "  (list)" } else { "" }
                );
            }
            if let Some((schema, shape, validator)) = outputs.get(&e.op_id) {
                let wrap = |v: &Value| match shape {
                    OutputShape::Wrapped => json!({ "result": v }),
                    _ => v.clone(),
                };
                let schema = schema.as_object().cloned().unwrap_or_default();
                if *shape == OutputShape::Object && !e.value.is_object() {
                    continue;
                }
                checked += 1;
                if check_output(validator, &schema, &wrap(&e.value)).is_err() {
                    full_invalid += 1;
                } else if check_output(validator, &schema, &wrap(&c)).is_err() {
                    fallbacks += 1;
                }
            }
            // A cut at a third of the compact size stays valid JSON within the budget (for
            // examples of 96 bytes or more: `{}` and `[]` are as small as JSON gets).
            let budget = compact_text.len() / 3;
            if budget < 32 {
                continue;
            }
            if let Some((cut, _)) = fit::fit(&c, budget) {
                cuts += 1;
                let text = serde_json::to_string(&cut).unwrap_or_default();
                if text.len() > budget || serde_json::from_str::<Value>(&text).is_err() {
                    cut_invalid += 1;
                }
            }
        }
        api.row(file);
        if lists.examples > 0 {
            lists.row("  GitHub list operations (GET list-*)");
        }
        println!(
            "  compacting (best of 3): {:.0} µs per example on average, the slowest {:.0} µs ({} bytes)",
            compact_time.as_secs_f64() * 1e6 / exs.len() as f64,
            slowest.0.as_secs_f64() * 1e6,
            slowest.1
        );
        println!(
            "  tools/list: {bare} tokens without `_select`, {served} with it on {with_select} of {} tools (+{:.1}%)",
            set.tools.len(),
            100.0 * (served as f64 - bare as f64) / bare.max(1) as f64
        );
        println!(
            "  {checked} examples with an output schema: {full_invalid} already invalid as full, {fallbacks} where compact needs the full fallback; {cuts} cut to 1/3 of their size, {cut_invalid} over budget or invalid"
        );
    }
    all.row("all APIs");
}
