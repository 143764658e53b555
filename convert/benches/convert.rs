//! Load + convert benchmark over the largest real-world specs in `../shared/specs`.
//!
//! For each spec, in one run: the best and median time of N full `load` + `convert` runs, the time
//! of a bare parse of the same bytes into `serde_json::Value` (the floor any converter pays), their
//! ratio, the peak heap used during load + convert and that peak relative to the spec's size on
//! disk, and the size of the serialized tool list.
//!
//! Times are taken on jemalloc, the allocator the `openapi-mcp` binary ships with, for the
//! conversion and the bare parse alike. Peaks come from the `convert_peak` binary (a counting
//! allocator, see `common/convert.rs`), which this one runs per spec when cargo has built it:
//! `cargo bench -p openapi-mcp-convert --bench convert --bench convert_peak` (case filters after
//! `--`, e.g. `-- k8s stripe`).

#[path = "common/convert.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[global_allocator]
static JEMALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const RUNS: usize = 10;
const TARGET_RATIO: f64 = 3.0;
const TARGET_PEAK: f64 = 5.0;

struct Row {
    label: &'static str,
    files: usize,
    bytes: u64,
    ops: usize,
    tools: usize,
    best: Duration,
    median: Duration,
    /// Best time of the load part alone (read + parse + external refs) in the same runs.
    load: Duration,
    parse: Option<Duration>,
    /// Why the bare parse is n/a.
    parse_error: Option<String>,
    tool_bytes: usize,
    /// Best time to bundle every tool's schemas and serialize the whole `tools/list` after a
    /// conversion (what serving the complete list costs once).
    list: Duration,
    /// From `convert_peak`: load + convert, that + the whole list, the bare parse.
    peaks: Result<(usize, usize, Option<usize>), String>,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn mib(b: usize) -> String {
    format!("{:.1}", b as f64 / (1024.0 * 1024.0))
}

/// The `convert_peak` bench binary cargo built next to this one (the newest, if several).
fn peak_probe() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("convert_peak-") && !name.contains('.')
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
}

fn probe_peaks(probe: Option<&Path>, root: &Path) -> Result<(usize, usize, Option<usize>), String> {
    let probe = probe.ok_or("convert_peak not built")?;
    let out = std::process::Command::new(probe)
        .arg("--child")
        .arg(root)
        .output()
        .map_err(|e| format!("{}: {e}", probe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("peaks "))
        .ok_or_else(|| {
            format!(
                "convert_peak failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })?;
    let f: Vec<&str> = line.split_whitespace().skip(1).collect();
    let num = |i: usize| f.get(i).and_then(|s| s.parse::<usize>().ok());
    match (num(0), num(1)) {
        (Some(peak), Some(list)) => Ok((peak, list, num(2))),
        _ => Err(format!("convert_peak printed {line:?}")),
    }
}

fn run_case(dir: &Path, case: &common::Case, probe: Option<&Path>) -> Result<Row, String> {
    let root = dir.join(case.root);
    // Warm-up run: also tells which files the spec spans and what it converts to.
    let files = common::spec_files(&root)?;
    let conv = common::load_convert(&root)?;
    let bytes: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    let ops = conv.report.operations;
    let tools = conv.report.tools;
    let tool_list: Vec<&openapi_mcp_convert::toolset::rmcp::model::Tool> =
        conv.tools.tools.iter().map(|t| t.tool()).collect();
    let tool_bytes = serde_json::to_vec(&tool_list)
        .map_err(|e| e.to_string())?
        .len();
    drop(tool_list);
    drop(conv);

    // Full load + convert, timed, each run next to a bare parse of the same bytes (all files
    // of a multi-file spec), so that both see the machine in the same state: on a shared VM
    // the speed of both drifts by a third within a minute. The bare parse is n/a when the bare
    // parser cannot read the files (YAML integers beyond 64 bits, non-string keys, ...).
    let source = openapi_mcp_convert::SpecSource::Path(root.clone());
    let mut times = Vec::with_capacity(RUNS);
    let mut load_times = Vec::with_capacity(RUNS);
    let mut list_times = Vec::with_capacity(RUNS);
    let mut parse_times = Vec::with_capacity(RUNS);
    let mut parse_error = None;
    for _ in 0..RUNS {
        if parse_error.is_none() {
            let start = Instant::now();
            let mut parsed = Vec::with_capacity(files.len());
            for (f, c) in &files {
                match common::bare_parse(c) {
                    Ok(v) => parsed.push(v),
                    Err(e) => {
                        parse_error.get_or_insert_with(|| {
                            format!(
                                "{}: {e}",
                                f.file_name()
                                    .map(|n| n.to_string_lossy())
                                    .unwrap_or_default()
                            )
                        });
                    }
                }
            }
            parse_times.push(start.elapsed());
            std::hint::black_box(&parsed);
            drop(parsed);
        }

        let start = Instant::now();
        let spec =
            common::block_on(openapi_mcp_convert::load(&source)).map_err(|e| e.to_string())?;
        load_times.push(start.elapsed());
        let conv = openapi_mcp_convert::convert(&spec, &Default::default());
        times.push(start.elapsed());
        std::hint::black_box(&conv.tools.tools.len());
        // Then what a complete tools/list costs: every schema bundled, the list serialized.
        let start = Instant::now();
        std::hint::black_box(common::list_bytes(&conv)?);
        list_times.push(start.elapsed());
        drop(conv);
        drop(spec);
    }
    let parse_ok = parse_error.is_none();

    Ok(Row {
        label: case.label,
        files: files.len(),
        bytes,
        ops,
        tools,
        best: *times.iter().min().expect("runs"),
        load: *load_times.iter().min().expect("runs"),
        median: median(times),
        parse: parse_ok.then(|| *parse_times.iter().min().expect("runs")),
        parse_error,
        tool_bytes,
        list: *list_times.iter().min().expect("runs"),
        peaks: probe_peaks(probe, &root),
    })
}

fn main() {
    // `cargo bench` passes `--bench`; other arguments select cases by substring of their label
    // (`cargo bench --bench convert -- k8s`), e.g. to profile one spec.
    let filters = common::filters();
    let dir = common::specs_dir();
    if !dir.is_dir() {
        eprintln!(
            "SKIPPED: ../shared/specs not found (looked in {})",
            dir.display()
        );
        println!("SKIPPED: ../shared/specs not found");
        return;
    }
    let probe = peak_probe();
    println!("openapi-mcp convert benchmark: N={RUNS} runs per spec, best/median of load+convert");
    println!(
        "targets: load+convert best <= {TARGET_RATIO}x bare parse; peak heap <= {TARGET_PEAK}x spec size"
    );
    match &probe {
        Some(p) => {
            // Built by an earlier cargo command when only `--bench convert` was asked for.
            let age = std::fs::metadata(p)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .map_or(String::new(), |a| format!(" (built {} s ago)", a.as_secs()));
            println!("peaks: {}{age}", p.display())
        }
        None => println!(
            "peaks: n/a (convert_peak not built: add `--bench convert_peak` to the cargo command)"
        ),
    }
    println!();

    let mut rows = Vec::new();
    for case in common::CASES
        .iter()
        .filter(|c| common::selected(&filters, c))
    {
        if !dir.join(case.root).is_file() {
            println!("{:<27} SKIPPED: {} not found", case.label, case.root);
            continue;
        }
        match run_case(&dir, case, probe.as_deref()) {
            Ok(r) => rows.push(r),
            Err(e) => println!("{:<27} ERROR: {e}", case.label),
        }
    }

    let header = format!(
        "{:<27} {:>5} {:>8} {:>5} {:>5} {:>9} {:>9} {:>8} {:>9} {:>11} {:>9} {:>11} {:>10} {:>9} {:>8} {:>10}",
        "spec",
        "files",
        "MiB",
        "ops",
        "tools",
        "best ms",
        "median ms",
        "load ms",
        "parse ms",
        "ratio (<=3)",
        "peak MiB",
        "peak/size",
        "parse peak",
        "tools MiB",
        "list ms",
        "list peak"
    );
    println!("{header}");
    println!("{}", "-".repeat(header.len()));
    for r in &rows {
        let (parse, ratio) = match r.parse {
            Some(p) => {
                let ratio = r.best.as_secs_f64() / p.as_secs_f64().max(1e-9);
                (
                    ms(p),
                    format!(
                        "{ratio:.2} {}",
                        if ratio <= TARGET_RATIO { "ok" } else { "OVER" }
                    ),
                )
            }
            None => ("n/a".to_string(), "n/a".to_string()),
        };
        let x = |b: usize| format!("{:.2}x", b as f64 / r.bytes.max(1) as f64);
        let (peak, peak_ratio, parse_peak, list_peak) = match &r.peaks {
            Ok((peak, list, parse)) => {
                let ratio = *peak as f64 / r.bytes.max(1) as f64;
                (
                    mib(*peak),
                    format!(
                        "{ratio:.2}x {}",
                        if ratio <= TARGET_PEAK { "ok" } else { "OVER" }
                    ),
                    parse.map_or("n/a".to_string(), x),
                    x(*list),
                )
            }
            Err(_) => ("n/a".into(), "n/a".into(), "n/a".into(), "n/a".into()),
        };
        println!(
            "{:<27} {:>5} {:>8} {:>5} {:>5} {:>9} {:>9} {:>8} {:>9} {:>11} {:>9} {:>11} {:>10} {:>9} {:>8} {:>10}",
            r.label,
            r.files,
            mib(r.bytes as usize),
            r.ops,
            r.tools,
            ms(r.best),
            ms(r.median),
            ms(r.load),
            parse,
            ratio,
            peak,
            peak_ratio,
            parse_peak,
            mib(r.tool_bytes),
            ms(r.list),
            list_peak,
        );
    }
    for r in rows.iter().filter(|r| r.parse_error.is_some()) {
        let e = r.parse_error.as_deref().unwrap_or_default();
        let e: String = e.chars().take(160).collect();
        println!("parse n/a for {}: bare parser failed: {e}", r.label);
    }
    for r in &rows {
        if let (Err(e), Some(_)) = (&r.peaks, &probe) {
            println!("peak n/a for {}: {e}", r.label);
        }
    }
    println!();
    println!(
        "best/median: wall time of load (read + parse + external refs) + convert with default options;
load: best time of the load part alone, in the same runs;"
    );
    println!(
        "parse: best bare serde_json / serde_yaml_ng parse of the same bytes into serde_json::Value;"
    );
    println!(
        "peak: largest heap growth during one load+convert (peak/size: over the bytes of all files),"
    );
    println!("counted by convert_peak; parse peak: the same for the bare parse alone;");
    println!(
        "tools: compact JSON of the tools array. list: after a conversion, bundling every tool's"
    );
    println!(
        "schemas (shared until first use) and serializing the whole tools/list; list peak: heap"
    );
    println!("peak of load+convert+list over size.");
}
