//! Load + convert benchmark over the largest real-world specs in `../shared/specs`.
//!
//! For each spec, in one run: the best and median time of N full `load` + `convert` runs, the time
//! of a bare parse of the same bytes into `serde_json::Value` (the floor any converter pays), their
//! ratio, the peak heap used during load + convert (counting global allocator), that peak relative
//! to the spec's size on disk, and the size of the serialized tool list.
//!
//! Run: `cargo bench -p openapi-mcp-runtime --bench convert`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use openapi_mcp_runtime::{SpecSource, ToolOptions, convert, load};
use peakmem_alloc::{PeakMemAlloc, PeakMemAllocTrait};
use serde_json::Value;

/// Counts the peak heap growth (`peakmem-alloc`: the workspace forbids `unsafe_code`, which an
/// in-crate `GlobalAlloc` impl would need) around jemalloc, the allocator the `openapi-mcp`
/// binary ships with, so times and peaks are those of the product; the bare parse it is compared
/// with runs on the same allocator.
#[global_allocator]
static HEAP: PeakMemAlloc<tikv_jemallocator::Jemalloc> =
    PeakMemAlloc::new(tikv_jemallocator::Jemalloc);

const RUNS: usize = 5;
const TARGET_RATIO: f64 = 3.0;
const TARGET_PEAK: f64 = 5.0;

struct Case {
    label: &'static str,
    /// Root document, relative to the specs directory.
    root: &'static str,
}

const CASES: &[Case] = &[
    Case {
        label: "github-octokit-2026-3.0",
        root: "github-octokit-2026-3.0.json",
    },
    Case {
        label: "cloudflare-api-3.0",
        root: "cloudflare-api-3.0.json",
    },
    Case {
        label: "k8s-swagger-2.0",
        root: "k8s-swagger-2.0.json",
    },
    Case {
        label: "stripe-spec3",
        root: "stripe-spec3.json",
    },
    Case {
        label: "openai-api-3.1 (yaml)",
        root: "openai-api-3.1.yaml",
    },
    Case {
        label: "digitalocean (multi-file)",
        root: "digitalocean-3.0/DigitalOcean-public.v2.yaml",
    },
];

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
    /// Peak heap of the bare parse (all files), for scale.
    parse_peak: Option<usize>,
    peak: usize,
    tool_bytes: usize,
    /// Best time to bundle every tool's schemas and serialize the whole `tools/list` after a
    /// conversion (what serving the complete list costs once), and the peak heap with it.
    list: Duration,
    list_peak: usize,
}

fn specs_dir() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/specs")).to_path_buf()
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(f)
}

/// Parses one document the way a bare parser would: JSON with serde_json, YAML with serde_yaml_ng.
fn bare_parse(bytes: &[u8]) -> Result<Value, String> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{') | Some(b'[')) {
        serde_json::from_slice::<Value>(bytes).map_err(|e| e.to_string())
    } else {
        serde_yaml_ng::from_slice::<Value>(bytes).map_err(|e| e.to_string())
    }
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

fn run_case(dir: &Path, case: &Case) -> Result<Row, String> {
    let root = dir.join(case.root);
    let source = SpecSource::Path(root.clone());

    // Warm-up run: also tells which files the spec spans and what it converts to.
    let spec = block_on(load(&source)).map_err(|e| e.to_string())?;
    let conv = convert(&spec, &ToolOptions::default());
    let files: Vec<PathBuf> = spec
        .docs
        .docs
        .iter()
        .filter_map(|d| d.url.to_file_path().ok())
        .collect();
    let contents: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).map_err(|e| format!("{}: {e}", f.display())))
        .collect::<Result<_, _>>()?;
    let bytes: u64 = contents.iter().map(|c| c.len() as u64).sum();
    let ops = conv.report.operations;
    let tools = conv.report.tools;
    let tool_list: Vec<&openapi_mcp_runtime::rmcp::model::Tool> =
        conv.tools.tools.iter().map(|t| t.tool()).collect();
    let tool_bytes = serde_json::to_vec(&tool_list)
        .map_err(|e| e.to_string())?
        .len();
    drop(tool_list);
    drop(conv);
    drop(spec);

    // Full load + convert, timed; peak heap measured over the same runs.
    let mut times = Vec::with_capacity(RUNS);
    let mut load_times = Vec::with_capacity(RUNS);
    let mut list_times = Vec::with_capacity(RUNS);
    let mut peak = 0usize;
    let mut list_peak = 0usize;
    for _ in 0..RUNS {
        HEAP.reset_peak_memory();
        let start = Instant::now();
        let spec = block_on(load(&source)).map_err(|e| e.to_string())?;
        load_times.push(start.elapsed());
        let conv = convert(&spec, &ToolOptions::default());
        let elapsed = start.elapsed();
        peak = peak.max(HEAP.get_peak_memory());
        std::hint::black_box(&conv.tools.tools.len());
        // Then what a complete tools/list costs: every schema bundled, the list serialized.
        let start = Instant::now();
        let tools: Vec<&openapi_mcp_runtime::rmcp::model::Tool> =
            conv.tools.tools.iter().map(|t| t.tool()).collect();
        let mut sink = CountingSink(0);
        serde_json::to_writer(&mut sink, &tools).map_err(|e| e.to_string())?;
        list_times.push(start.elapsed());
        list_peak = list_peak.max(HEAP.get_peak_memory());
        std::hint::black_box(sink.0);
        drop(tools);
        drop(conv);
        drop(spec);
        times.push(elapsed);
    }

    // Bare parse of the same bytes (all files of a multi-file spec); n/a when the bare parser
    // cannot read them (YAML integers beyond 64 bits, non-string keys, ...).
    let mut parse_times = Vec::with_capacity(RUNS);
    let mut parse_error = None;
    let mut parse_peak = 0usize;
    for _ in 0..RUNS {
        HEAP.reset_peak_memory();
        let start = Instant::now();
        let mut parsed = Vec::with_capacity(contents.len());
        for (c, f) in contents.iter().zip(&files) {
            match bare_parse(c) {
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
        parse_peak = parse_peak.max(HEAP.get_peak_memory());
        std::hint::black_box(&parsed);
        drop(parsed);
        if parse_error.is_some() {
            break;
        }
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
        parse_peak: parse_ok.then_some(parse_peak),
        peak,
        tool_bytes,
        list: *list_times.iter().min().expect("runs"),
        list_peak,
    })
}

/// Counts the bytes written to it.
struct CountingSink(usize);

impl std::io::Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() {
    // `cargo bench` passes `--bench`; other arguments select cases by substring of their label
    // (`cargo bench --bench convert -- k8s`), e.g. to profile one spec.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let dir = specs_dir();
    if !dir.is_dir() {
        eprintln!(
            "SKIPPED: ../shared/specs not found (looked in {})",
            dir.display()
        );
        println!("SKIPPED: ../shared/specs not found");
        return;
    }
    println!("openapi-mcp convert benchmark: N={RUNS} runs per spec, best/median of load+convert");
    println!(
        "targets: load+convert best <= {TARGET_RATIO}x bare parse; peak heap <= {TARGET_PEAK}x spec size"
    );
    println!();

    let mut rows = Vec::new();
    for case in CASES {
        if !filters.is_empty() && !filters.iter().any(|f| case.label.contains(f.as_str())) {
            continue;
        }
        if !dir.join(case.root).is_file() {
            println!("{:<27} SKIPPED: {} not found", case.label, case.root);
            continue;
        }
        match run_case(&dir, case) {
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
        let peak_ratio = r.peak as f64 / r.bytes.max(1) as f64;
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
            mib(r.peak),
            format!(
                "{peak_ratio:.2}x {}",
                if peak_ratio <= TARGET_PEAK {
                    "ok"
                } else {
                    "OVER"
                }
            ),
            r.parse_peak
                .map(|p| format!("{:.2}x", p as f64 / r.bytes.max(1) as f64))
                .unwrap_or_else(|| "n/a".into()),
            mib(r.tool_bytes),
            ms(r.list),
            format!("{:.2}x", r.list_peak as f64 / r.bytes.max(1) as f64),
        );
    }
    for r in rows.iter().filter(|r| r.parse_error.is_some()) {
        let e = r.parse_error.as_deref().unwrap_or_default();
        let e: String = e.chars().take(160).collect();
        println!("parse n/a for {}: bare parser failed: {e}", r.label);
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
        "peak: largest heap growth during one load+convert (peak/size: over the bytes of all files);"
    );
    println!(
        "parse peak: the same for the bare parse alone; tools: compact JSON of the tools array."
    );
    println!(
        "list: after a conversion, bundling every tool's schemas (they are shared until first use)"
    );
    println!(
        "and serializing the whole tools/list; list peak: heap peak of load+convert+list over size."
    );
}
