//! Real-world corpus: every spec in `../shared/specs` converts without panics into valid,
//! self-contained JSON Schema 2020-12 tools with valid, unique names.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use openapi_mcp_convert::{SpecSource, ToolOptions, convert, load};
use serde_json::Value;

use super::support::*;

fn corpus_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/specs"))
}

/// All top-level `.json`/`.yaml`/`.yml` files plus the roots of the multi-file specs.
fn corpus_specs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read specs dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("json" | "yaml" | "yml")
                )
        })
        .collect();
    for multi in [
        "digitalocean-3.0/DigitalOcean-public.v2.yaml",
        "oai-petstore-separate-2.0/spec/swagger.yaml",
    ] {
        let p = dir.join(multi);
        if p.is_file() {
            out.push(p);
        } else {
            eprintln!(
                "warning: multi-file spec {multi} not found in {}",
                dir.display()
            );
        }
    }
    out.sort();
    out
}

struct Row {
    name: String,
    ops: usize,
    tools: usize,
    failed: usize,
    diags: usize,
    ms: u128,
    problems: usize,
    known: usize,
}

/// Signature of the known bundling bug (see `properties_named_like_data_keywords_keep_their_refs`):
/// every dangling `$ref` of the schema sits under a property named like a data keyword.
fn only_known_dangling_refs(schema: &Value) -> bool {
    let structural = schema_problems(schema);
    !structural.is_empty()
        && structural.iter().all(|p| {
            p.contains("does not resolve inside the schema")
                && [
                    "/properties/default",
                    "/properties/enum",
                    "/properties/const",
                    "/properties/examples",
                ]
                .iter()
                .any(|k| p.split(':').next().is_some_and(|ptr| ptr.contains(k)))
        })
}

fn check_schema(
    problems: &mut Vec<String>,
    known: &mut Vec<String>,
    spec: &str,
    tool: &str,
    which: &str,
    schema: &Value,
) {
    if only_known_dangling_refs(schema) {
        known.push(format!(
            "{spec} {tool} {which}: {}",
            schema_problems(schema).join("; ")
        ));
        return;
    }
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        problems.push(format!(
            "{spec} {tool} {which}: not valid JSON Schema 2020-12: {e} at {}",
            e.instance_path()
        ));
    }
    if let Err(e) = jsonschema::draft202012::new(schema) {
        problems.push(format!("{spec} {tool} {which}: does not compile: {e}"));
    }
    for p in schema_problems(schema) {
        problems.push(format!("{spec} {tool} {which}: {p}"));
    }
    if schema.get("type") != Some(&Value::String("object".into())) {
        problems.push(format!("{spec} {tool} {which}: root is not type object"));
    }
}

#[test]
fn real_world_corpus_converts_to_valid_tools() {
    let Some((problems, known)) = run_corpus() else {
        return;
    };
    if !known.is_empty() {
        eprintln!(
            "{} schemas show the known dangling-$ref bug (ignored test corpus_has_no_dangling_refs_under_keyword_named_properties)",
            known.len()
        );
    }
    if !problems.is_empty() {
        let shown: Vec<&String> = problems.iter().take(60).collect();
        panic!(
            "{} problems in the corpus (first {}):\n{}",
            problems.len(),
            shown.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn corpus_has_no_dangling_refs_under_keyword_named_properties() {
    let Some((_, known)) = run_corpus() else {
        return;
    };
    assert!(
        known.is_empty(),
        "{} schemas with dangling refs:\n{}",
        known.len(),
        known.join("\n")
    );
}

/// Converts the whole corpus; `None` when it is not there. Returns (problems, known-bug problems)
/// and panics when less than 99.5% of the operations became tools.
fn run_corpus() -> Option<(Vec<String>, Vec<String>)> {
    let dir = corpus_dir();
    if !dir.is_dir() {
        eprintln!(
            "SKIPPED: ../shared/specs not found (looked in {})",
            dir.display()
        );
        return None;
    }
    let specs = corpus_specs(&dir);
    assert!(!specs.is_empty(), "no specs in {}", dir.display());

    let mut rows = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    let mut known: Vec<String> = Vec::new();
    let mut samples: Vec<String> = Vec::new();
    let (mut all_ops, mut all_tools) = (0usize, 0usize);
    for path in &specs {
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(path)
            .display()
            .to_string();
        let start = Instant::now();
        let spec = match block_on(load(&SpecSource::Path(path.clone()))) {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!("{name}: does not load: {e}"));
                continue;
            }
        };
        let conv = convert(&spec, &ToolOptions::default());
        let ms = start.elapsed().as_millis();
        let before = problems.len();
        let before_known = known.len();

        let r = &conv.report;
        if r.tools + r.failed != r.operations || r.filtered != 0 {
            problems.push(format!("{name}: report does not add up: {r:?}"));
        }
        if r.tools != conv.tools.tools.len() {
            problems.push(format!(
                "{name}: report.tools {} but {} tools",
                r.tools,
                conv.tools.tools.len()
            ));
        }
        let mut seen = HashSet::new();
        for t in &conv.tools.tools {
            let tname = t.name().to_string();
            if !is_valid_tool_name(&tname) {
                problems.push(format!("{name}: invalid tool name {tname:?}"));
            }
            if !seen.insert(tname.clone()) {
                problems.push(format!("{name}: duplicate tool name {tname:?}"));
            }
            let inp = input(t);
            check_schema(
                &mut problems,
                &mut known,
                &name,
                &tname,
                "inputSchema",
                &inp,
            );
            for p in prop_names(&inp) {
                if !is_valid_arg_name(&p) {
                    problems.push(format!("{name} {tname}: invalid property name {p:?}"));
                }
            }
            if let Some(out) = output(t) {
                check_schema(
                    &mut problems,
                    &mut known,
                    &name,
                    &tname,
                    "outputSchema",
                    &out,
                );
            }
        }
        // A sample of the diagnostics, for the summary.
        for d in conv.diagnostics.clone().into_sorted().iter().take(2) {
            let text: String = d.to_string().chars().take(220).collect();
            samples.push(format!("{name}: {text}"));
        }
        all_ops += r.operations;
        all_tools += r.tools;
        rows.push(Row {
            name,
            ops: r.operations,
            tools: r.tools,
            failed: r.failed,
            diags: conv.diagnostics.len(),
            ms,
            problems: problems.len() - before,
            known: known.len() - before_known,
        });
    }

    eprintln!();
    eprintln!(
        "{:<52} {:>6} {:>6} {:>6} {:>6} {:>7} {:>8} {:>9}",
        "spec", "ops", "tools", "failed", "diags", "ms", "problems", "known-bug"
    );
    for r in &rows {
        eprintln!(
            "{:<52} {:>6} {:>6} {:>6} {:>6} {:>7} {:>8} {:>9}",
            r.name, r.ops, r.tools, r.failed, r.diags, r.ms, r.problems, r.known
        );
    }
    for s in &samples {
        eprintln!("  sample diagnostic: {s}");
    }
    let pct = if all_ops == 0 {
        100.0
    } else {
        all_tools as f64 * 100.0 / all_ops as f64
    };
    eprintln!(
        "total: {} specs, {all_ops} operations, {all_tools} tools ({pct:.2}%)",
        rows.len()
    );

    assert!(
        pct >= 99.5,
        "only {pct:.2}% of {all_ops} operations became tools"
    );
    Some((problems, known))
}
