//! The held-out search evaluations of issue #22 (`tests/search-eval/heldout*.json`, see the README
//! there): natural-language requests written before looking at the specs, each with the
//! operation(s) that do it. For every spec present in `../shared/specs`, the dynamic-mode
//! `SearchIndex` is built exactly as the rest of this bench builds it, each request is run with
//! limit 10, and the hits are mapped back to (method, path template) through the tool set.
//!
//! Only aggregates are printed (n, top-1/3/10). Each set is a test, not a development set: per-query
//! detail is printed only with `HELDOUT_VERBOSE=1`, and must not be used to tune the search.
//! `HELDOUT_ONLY=NAME` runs only the sets whose file name contains NAME; `HELDOUT_DUMP=FILE` writes
//! the first set's lexical top 300 per request for the embedding probe (later sets never).
//!
//! The file is `heldout/mod.rs` (not `heldout.rs`) so that Cargo does not auto-discover it as a
//! bench target of its own.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use openapi_mcp_convert::{SpecSource, ToolOptions, convert, load};
use openapi_mcp_runtime::modes::dynamic::ToolMode;
use openapi_mcp_runtime::server::ToolState;

/// The plain BM25 baseline every set is reported against (#41).
pub mod bm25;

/// Results are taken from the top `LIMIT` hits.
const LIMIT: usize = 10;

/// How many of `n` requests had a right operation at rank 1, in the top 3 and in the top 10.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    pub n: usize,
    pub top: [usize; 3],
}

impl Tally {
    /// Counts one request whose first right operation is at `rank` (0-based; `None`: not in the
    /// top 10).
    pub fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        for (k, cut) in [1, 3, 10].iter().enumerate() {
            self.top[k] += usize::from(rank.is_some_and(|r| r < *cut));
        }
    }

    pub fn merge(&mut self, other: Tally) {
        self.n += other.n;
        for k in 0..3 {
            self.top[k] += other.top[k];
        }
    }

    /// `12/25  15/25  20/25`-style top-1/3/10 with percentages.
    fn cells(&self) -> String {
        self.top
            .iter()
            .map(|&k| format!("{k:>3}/{:<3} {:>5.1}%", self.n, pct(k, self.n)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The header of an ours-vs-BM25 table.
pub fn print_versus_header() {
    println!(
        "{:<30} {:>4}  {:<44} {:<44} {:>4} {:>4}",
        "spec",
        "n",
        "search_operations top-1 / top-3 / top-10",
        "plain BM25 top-1 / top-3 / top-10",
        "Δ3",
        "Δ10"
    );
}

/// One row: our ranking and the baseline's on the same requests, and our lead at top 3 and 10
/// (negative: behind the baseline).
pub fn print_versus_row(name: &str, ours: &Tally, base: &Tally) {
    println!(
        "{name:<30} {:>4}  {:<44} {:<44} {:>+4} {:>+4}{}",
        ours.n,
        ours.cells(),
        base.cells(),
        ours.top[1] as i64 - base.top[1] as i64,
        ours.top[2] as i64 - base.top[2] as i64,
        if ours.top[1] < base.top[1] || ours.top[2] < base.top[2] {
            "  BELOW BM25"
        } else {
            ""
        }
    );
}

/// One graded request: the text and the (METHOD, path template) pairs that are right answers.
struct Case {
    request: String,
    expect: HashSet<(String, String)>,
}

/// Every held-out set: `search-eval/heldout.json` (the first, written 2026-11-26) and the later
/// ones beside it (`heldout-v2.json`, …), in name order. Each is reported on its own: a set that
/// has been looked at per query is replaced by a fresh one, never merged into it.
fn eval_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("search-eval");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("heldout") && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    files
}

/// Reads `heldout.json`: `{ "<spec file>": [ {"request": "...", "expect": [["GET", "/path"], ...]} ] }`.
/// A malformed file is an error naming the entry, never a panic.
fn read_cases(path: &Path) -> Result<Vec<(String, Vec<Case>)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let specs = doc
        .as_object()
        .ok_or_else(|| format!("{}: top level is not an object", path.display()))?;
    let mut out = Vec::new();
    for (spec, entries) in specs {
        let entries = entries
            .as_array()
            .ok_or_else(|| format!("{spec}: not an array"))?;
        let mut cases = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let request = entry
                .get("request")
                .and_then(|r| r.as_str())
                .ok_or_else(|| format!("{spec}[{i}]: no \"request\" string"))?;
            let expect = entry
                .get("expect")
                .and_then(|e| e.as_array())
                .filter(|e| !e.is_empty())
                .ok_or_else(|| format!("{spec}[{i}]: no non-empty \"expect\" array"))?;
            let mut ops = HashSet::new();
            for op in expect {
                let pair = op.as_array().filter(|a| a.len() == 2);
                let Some((Some(m), Some(p))) = pair.map(|a| (a[0].as_str(), a[1].as_str())) else {
                    return Err(format!("{spec}[{i}]: {op} is not [method, path]"));
                };
                ops.insert((m.to_ascii_uppercase(), p.to_string()));
            }
            cases.push(Case {
                request: request.to_string(),
                expect: ops,
            });
        }
        out.push((spec.clone(), cases));
    }
    Ok(out)
}

/// Seconds of the fastest of 5 passes of `search` over `queries`: the machine is shared, and the
/// fastest pass is the one least disturbed by other work.
pub fn best_pass(queries: &[&str], mut search: impl FnMut(&str) -> usize) -> f64 {
    (0..5)
        .map(|_| {
            let started = Instant::now();
            let found: usize = queries.iter().map(|q| search(q)).sum();
            std::hint::black_box(found);
            started.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn pct(k: usize, n: usize) -> f64 {
    k as f64 * 100.0 / n.max(1) as f64
}

/// Runs each held-out evaluation on every spec of its file found in `specs_dir` and prints the
/// aggregates.
pub fn run(specs_dir: &Path) {
    let files = eval_files();
    if files.is_empty() {
        println!("FAILED: no held-out set (search-eval/heldout*.json)");
    }
    // `HELDOUT_ONLY=heldout.json`: only the sets whose file name contains it.
    let only = std::env::var("HELDOUT_ONLY").unwrap_or_default();
    for file in files {
        if file
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains(only.as_str()))
        {
            run_file(specs_dir, &file);
        }
    }
}

/// [`run`] for one held-out file.
fn run_file(specs_dir: &Path, file: &Path) {
    let verbose = std::env::var("HELDOUT_VERBOSE").is_ok_and(|v| v == "1");
    println!();
    println!(
        "held-out search evaluation ({}; written once, never tune on it), limit {LIMIT}",
        file.display()
    );
    let sets = match read_cases(file) {
        Ok(s) => s,
        Err(e) => {
            println!("FAILED to read the held-out set: {e}");
            return;
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            println!("FAILED to start a tokio runtime: {e}");
            return;
        }
    };
    print_versus_header();
    let (mut ours_all, mut base_all) = (Tally::default(), Tally::default());
    let mut costs = Vec::new();
    // `HELDOUT_DUMP=FILE`: the lexical top 300 of every request, for the embedding probe
    // (`search-eval/embedding-probe/fuse.py`). Only for the first set, whose per-query results
    // are no longer blind; the later sets stay measured in aggregate only.
    let mut dump = std::env::var("HELDOUT_DUMP")
        .ok()
        .filter(|_| file.file_name().is_some_and(|n| n == "heldout.json"))
        .map(|p| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&p)
                .unwrap_or_else(|e| panic!("HELDOUT_DUMP {p}: {e}"))
        });
    for (name, cases) in &sets {
        let path = specs_dir.join(name);
        if !path.exists() {
            println!("{name:<30} SKIPPED (not found in {})", specs_dir.display());
            continue;
        }
        let spec = match rt.block_on(load(&SpecSource::Path(path))) {
            Ok(s) => s,
            Err(e) => {
                println!("{name:<30} FAILED to load: {e}");
                continue;
            }
        };
        let set = convert(&spec, &ToolOptions::default()).tools;
        let routes: Vec<(String, String)> = set
            .tools
            .iter()
            .map(|t| (t.route.method.as_str().to_string(), t.route.path.clone()))
            .collect();
        let known: HashSet<&(String, String)> = routes.iter().collect();
        let started = Instant::now();
        let state = ToolState::with_mode(set.clone(), &ToolMode::Dynamic);
        let index_ms = started.elapsed().as_secs_f64() * 1e3;
        let Some(index) = state.search_index() else {
            println!("{name:<30} FAILED: dynamic mode built no search index");
            continue;
        };
        let started = Instant::now();
        let base = bm25::Bm25::build(&set.tools);
        let base_ms = started.elapsed().as_secs_f64() * 1e3;
        let (mut ours, mut theirs, mut unreachable) = (Tally::default(), Tally::default(), 0);
        for (i, case) in cases.iter().enumerate() {
            // A request none of whose operations became a tool can never be found; it stays in
            // the denominator (the agent cannot do it) and is counted apart.
            if !case.expect.iter().any(|op| known.contains(op)) {
                unreachable += 1;
            }
            let is_right = |op: usize| routes.get(op).is_some_and(|r| case.expect.contains(r));
            let hits = index.search(&case.request, LIMIT);
            let rank = hits.iter().position(|h| is_right(h.op));
            ours.add(rank);
            let base_hits = base.search(&case.request, LIMIT);
            theirs.add(base_hits.iter().position(|&op| is_right(op)));
            if let Some(out) = dump.as_mut() {
                dump_case(out, name, case, index, &set.tools, &routes);
            }
            if verbose {
                let got: Vec<String> = hits
                    .iter()
                    .take(3)
                    .filter_map(|h| routes.get(h.op))
                    .map(|(m, p)| format!("{m} {p}"))
                    .collect();
                println!(
                    "  {i:>2} rank {:>2}  {:?} -> {got:?}",
                    rank.map_or("-".to_string(), |r| (r + 1).to_string()),
                    case.request
                );
            }
        }
        print_versus_row(name, &ours, &theirs);
        if unreachable > 0 {
            println!("{:<30} ({unreachable} unreachable: no tool does it)", "");
        }
        let requests: Vec<&str> = cases.iter().map(|c| c.request.as_str()).collect();
        let ours_s = best_pass(&requests, |q| index.search(q, LIMIT).len());
        let base_s = best_pass(&requests, |q| base.search(q, LIMIT).len());
        let per_query = |s: f64| s * 1e6 / cases.len().max(1) as f64;
        costs.push(format!(
            "{name:<30} {:>6} {index_ms:>9.1} {:>9.2} {:>9.0} {base_ms:>9.1} {:>9.2} {:>9.0}",
            index.len(),
            index.heap_bytes() as f64 / 1e6,
            per_query(ours_s),
            base.heap_bytes() as f64 / 1e6,
            per_query(base_s),
        ));
        ours_all.merge(ours);
        base_all.merge(theirs);
    }
    print_versus_row("all present specs", &ours_all, &base_all);
    println!(
        "{:<30} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "cost", "ops", "index ms", "index MB", "query µs", "bm25 ms", "bm25 MB", "bm25 µs"
    );
    for c in costs {
        println!("{c}");
    }
}

/// One line of `HELDOUT_DUMP`: the request, its right operations (by operationId, as
/// `DYNAMIC_DUMP_DEV` writes the development sets).
fn dump_case(
    out: &mut std::fs::File,
    spec: &str,
    case: &Case,
    index: &openapi_mcp_runtime::modes::dynamic::SearchIndex,
    tools: &[std::sync::Arc<openapi_mcp_toolset::model::ToolDef>],
    routes: &[(String, String)],
) {
    let expect: Vec<&str> = routes
        .iter()
        .zip(tools)
        .filter(|(r, _)| case.expect.contains(*r))
        .filter_map(|(_, t)| t.operation_id.as_deref())
        .collect();
    dump_line(out, spec, &case.request, &expect, index, tools);
}

/// One JSON line of a ranking dump (`HELDOUT_DUMP`, `DYNAMIC_DUMP_DEV`) for the embedding probe:
/// the spec, the request, the operationIds that are right, and the lexical top 300 with scores.
pub fn dump_line(
    out: &mut std::fs::File,
    spec: &str,
    task: &str,
    expect: &[&str],
    index: &openapi_mcp_runtime::modes::dynamic::SearchIndex,
    tools: &[std::sync::Arc<openapi_mcp_toolset::model::ToolDef>],
) {
    use std::io::Write;
    let hits: Vec<serde_json::Value> = index
        .search(task, 300)
        .iter()
        .map(|h| serde_json::json!([tools[h.op].operation_id, h.score]))
        .collect();
    let line = serde_json::json!({"spec": spec, "task": task, "expect": expect, "hits": hits});
    writeln!(out, "{line}").expect("ranking dump: write");
}
