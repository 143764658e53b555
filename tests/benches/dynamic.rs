//! `--mode dynamic` measurements on the large real-world specs in `../shared/specs`: the size of
//! the `tools/list` payload in tools mode vs dynamic mode (bytes, and tokens with tiktoken's
//! o200k_base), the time to build the search index and to answer a query, the index's size (its
//! own estimate of its heap bytes, and the process RSS growth while building it), and the top-3
//! and top-10 hit rates of the natural-language task sets in `dynamic_tasks.rs`; then the
//! held-out evaluations of `tests/search-eval/heldout*.json` (`heldout/mod.rs`, aggregates only).
//!
//! Run: `cargo bench -p openapi-mcp-tests --bench dynamic`

use std::path::{Path, PathBuf};
use std::time::Instant;

use openapi_mcp_convert::{SpecSource, ToolOptions, convert, load};
use openapi_mcp_runtime::modes::dynamic::ToolMode;
use openapi_mcp_runtime::rmcp::model::Tool;
use openapi_mcp_runtime::server::ToolState;

include!("dynamic_tasks.rs");
include!("dynamic_tasks2.rs");

// The held-out evaluation (#22): a separate module so the task loop below stays independent of it.
mod heldout;

/// (what a user asks for, the operationId that does it).
type Tasks = &'static [(&'static str, &'static str)];

fn specs_dir() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/specs")).to_path_buf()
}

fn tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// Bytes and tokens of a `tools/list` result serving `tools`.
fn payload(tools: &[Tool]) -> (usize, usize) {
    let json = serde_json::to_string(&serde_json::json!({ "tools": tools })).unwrap_or_default();
    (json.len(), tokens(&json))
}

/// Resident set size of this process (Linux; 0 elsewhere).
fn rss_bytes() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn main() {
    let verbose = std::env::args().any(|a| a == "--verbose" || a == "-v");
    let dir = specs_dir();
    // Development set 1, then set 2 (`dynamic_tasks2.rs`, written blind) as rows of their own.
    let cases: [(&str, Tasks, Tasks); 4] = [
        ("github-octokit-2026-3.0.json", GITHUB_TASKS, GITHUB_TASKS2),
        (
            "cloudflare-api-3.0.json",
            CLOUDFLARE_TASKS,
            CLOUDFLARE_TASKS2,
        ),
        ("stripe-spec3.json", STRIPE_TASKS, STRIPE_TASKS2),
        ("k8s-swagger-2.0.json", K8S_TASKS, K8S_TASKS2),
    ];
    println!(
        "{:<30} {:>6} {:>12} {:>10} {:>9} {:>8} {:>9} {:>8} {:>8} {:>9} {:>12} {:>12}",
        "spec",
        "tools",
        "tools bytes",
        "tokens",
        "dyn bytes",
        "dyn tok",
        "index ms",
        "index MB",
        "RSS +MB",
        "query µs",
        "top-3",
        "top-10"
    );
    heldout::bm25::self_check();
    let mut second = Vec::new();
    let mut versus = Vec::new();
    for (file, tasks, tasks2) in cases {
        let path = dir.join(file);
        if !path.exists() {
            println!("{file:<30} SKIPPED (not found)");
            continue;
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let spec = match rt.block_on(load(&SpecSource::Path(path))) {
            Ok(s) => s,
            Err(e) => {
                println!("{file:<30} FAILED to load: {e}");
                continue;
            }
        };
        let set = convert(&spec, &ToolOptions::default()).tools;
        let rss_before = rss_bytes();
        let started = Instant::now();
        let state = ToolState::with_mode(set.clone(), &ToolMode::Dynamic);
        let index_ms = started.elapsed().as_secs_f64() * 1000.0;
        let rss_mb = rss_bytes().saturating_sub(rss_before) as f64 / 1e6;
        // After the index: the server builds it before any schema is bundled.
        let all: Vec<Tool> = set.tools.iter().map(|t| t.tool().clone()).collect();
        let (tb, tt) = payload(&all);
        let (db, dt) = payload(state.tools());
        let index = state.search_index().expect("dynamic mode has an index");

        let index_mb = index.heap_bytes() as f64 / 1e6;
        if let Ok(path) = std::env::var("DYNAMIC_DUMP_DEV") {
            dump_dev(&path, file, index, &set.tools, &[tasks, tasks2]);
        }

        let (mut hits, mut hits10) = (0, 0);
        let mut misses = Vec::new();
        for (task, op_ids) in tasks {
            // `a|b`: either operation does the task.
            let expected: Vec<usize> = op_ids
                .split('|')
                .map(|id| {
                    set.tools
                        .iter()
                        .position(|t| t.operation_id.as_deref() == Some(id))
                        .unwrap_or_else(|| panic!("{file}: no operation {id}"))
                })
                .collect();
            let op_id = op_ids;
            let found = index.search(task, 10);
            let rank = found.iter().position(|h| expected.contains(&h.op));
            if rank.is_some() {
                hits10 += 1;
            }
            if rank.is_some_and(|r| r < 3) {
                hits += 1;
            } else {
                let names: Vec<&str> = found
                    .iter()
                    .take(3)
                    .map(|h| set.tools[h.op].name())
                    .collect();
                misses.push(format!(
                    "  miss: {task:?} -> {op_id} (rank {}), got {names:?}",
                    rank.map_or("-".to_string(), |r| (r + 1).to_string())
                ));
            }
        }
        // The fastest of 5 passes over the set (the machine is shared).
        let queries: Vec<&str> = tasks.iter().map(|(t, _)| *t).collect();
        let query_us = heldout::best_pass(&queries, |q| index.search(q, 10).len()) * 1e6
            / tasks.len().max(1) as f64;
        let pct = |h: usize| h as f64 * 100.0 / tasks.len().max(1) as f64;
        println!(
            "{file:<30} {:>6} {tb:>12} {tt:>10} {db:>9} {dt:>8} {index_ms:>9.1} {index_mb:>8.1} {rss_mb:>8.1} {query_us:>9.0} {:>3}/{:<2} {:>4.0}% {:>3}/{:<2} {:>4.0}%",
            all.len(),
            hits,
            tasks.len(),
            pct(hits),
            hits10,
            tasks.len(),
            pct(hits10),
        );
        if verbose {
            for m in misses {
                println!("{m}");
            }
        }
        let (h3, h10) = top3_top10(index, &set.tools, tasks2);
        second.push((file, h3, h10, tasks2.len()));
        let base = heldout::bm25::Bm25::build(&set.tools);
        versus.push((
            file,
            versus_dev(index, &base, &set.tools, tasks),
            versus_dev(index, &base, &set.tools, tasks2),
        ));
    }
    println!("development set 2 (dynamic_tasks2.rs):");
    for (file, h3, h10, n) in second {
        let pct = |h: usize| h as f64 * 100.0 / n.max(1) as f64;
        println!(
            "{file:<30} top-3 {h3:>3}/{n:<2} {:>4.0}%  top-10 {h10:>3}/{n:<2} {:>4.0}%",
            pct(h3),
            pct(h10)
        );
    }
    // #41: our ranking beside a plain BM25 over name, description and parameters
    // (`heldout/bm25.rs`), on the same requests.
    for (k, title) in [
        "development set 1 (dynamic_tasks.rs)",
        "development set 2 (dynamic_tasks2.rs)",
    ]
    .iter()
    .enumerate()
    {
        println!();
        println!("{title}: search_operations vs plain BM25, limit 10");
        heldout::print_versus_header();
        let (mut ours_all, mut base_all) = (heldout::Tally::default(), heldout::Tally::default());
        for (file, one, two) in &versus {
            let (ours, base) = if k == 0 { one } else { two };
            heldout::print_versus_row(file, ours, base);
            ours_all.merge(*ours);
            base_all.merge(*base);
        }
        heldout::print_versus_row("all present specs", &ours_all, &base_all);
    }
    heldout::run(&dir);
}

/// Top-1/3/10 of our ranking and of the BM25 baseline on one development set (`a|b`: either
/// operationId).
fn versus_dev(
    index: &openapi_mcp_runtime::modes::dynamic::SearchIndex,
    base: &heldout::bm25::Bm25,
    tools: &[std::sync::Arc<openapi_mcp_toolset::model::ToolDef>],
    tasks: Tasks,
) -> (heldout::Tally, heldout::Tally) {
    let (mut ours, mut theirs) = (heldout::Tally::default(), heldout::Tally::default());
    for (task, op_ids) in tasks {
        let expected: Vec<usize> = op_ids
            .split('|')
            .filter_map(|id| {
                tools
                    .iter()
                    .position(|t| t.operation_id.as_deref() == Some(id))
            })
            .collect();
        let found: Vec<usize> = index.search(task, 10).iter().map(|h| h.op).collect();
        let rank = found.iter().position(|op| expected.contains(op));
        let base_found = base.search(task, 10);
        let base_rank = base_found.iter().position(|op| expected.contains(op));
        ours.add(rank);
        theirs.add(base_rank);
        // `DYNAMIC_RANKS=1`: every development request's rank, ours and BM25's (to compare two
        // builds; never the held-out sets).
        if std::env::var("DYNAMIC_RANKS").is_ok_and(|v| v == "1") {
            let show = |r: Option<usize>| r.map_or("-".to_string(), |r| (r + 1).to_string());
            println!(
                "  rank {:>2} bm25 {:>2}  {task:?} -> {op_ids}; ours {:?}",
                show(rank),
                show(base_rank),
                found
                    .iter()
                    .take(3)
                    .map(|&op| tools[op].name())
                    .collect::<Vec<_>>(),
            );
        }
        // `DYNAMIC_VERSUS=1`: the development requests BM25 ranks better than we do (never the
        // held-out sets).
        if std::env::var("DYNAMIC_VERSUS").is_ok_and(|v| v == "1")
            && base_rank.is_some_and(|b| rank.is_none_or(|r| b < r))
        {
            let name = |op: usize| tools[op].name().to_string();
            println!(
                "  bm25 better: {task:?} -> {op_ids} ours {} bm25 {}; ours {:?}; bm25 {:?}",
                rank.map_or("-".to_string(), |r| (r + 1).to_string()),
                base_rank.map_or("-".to_string(), |r| (r + 1).to_string()),
                found.iter().take(3).map(|&op| name(op)).collect::<Vec<_>>(),
                base_found
                    .iter()
                    .take(3)
                    .map(|&op| name(op))
                    .collect::<Vec<_>>(),
            );
        }
    }
    (ours, theirs)
}

/// How many of `tasks` (`a|b`: either operationId) have their operation in the top 3 and top 10.
fn top3_top10(
    index: &openapi_mcp_runtime::modes::dynamic::SearchIndex,
    tools: &[std::sync::Arc<openapi_mcp_toolset::model::ToolDef>],
    tasks: &[(&str, &str)],
) -> (usize, usize) {
    let (mut h3, mut h10) = (0, 0);
    for (task, op_ids) in tasks {
        let expected: Vec<usize> = op_ids
            .split('|')
            .filter_map(|id| {
                tools
                    .iter()
                    .position(|t| t.operation_id.as_deref() == Some(id))
            })
            .collect();
        let rank = index
            .search(task, 10)
            .iter()
            .position(|h| expected.contains(&h.op));
        h3 += usize::from(rank.is_some_and(|r| r < 3));
        h10 += usize::from(rank.is_some());
    }
    (h3, h10)
}

/// `DYNAMIC_DUMP_DEV=FILE`: appends, for every DEVELOPMENT request (never the held-out set), the
/// lexical ranking's best 300 operations with their scores, one JSON line each, for fusion
/// experiments outside the server (`tests/search-eval/embedding-probe`).
fn dump_dev(
    path: &str,
    file: &str,
    index: &openapi_mcp_runtime::modes::dynamic::SearchIndex,
    tools: &[std::sync::Arc<openapi_mcp_toolset::model::ToolDef>],
    sets: &[Tasks],
) {
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("DYNAMIC_DUMP_DEV file");
    for (task, op_ids) in sets.iter().flat_map(|s| s.iter()) {
        let expect: Vec<&str> = op_ids.split('|').collect();
        heldout::dump_line(&mut out, file, task, &expect, index, tools);
    }
}
