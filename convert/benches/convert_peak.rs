//! Peak heap of load + convert over the largest real-world specs in `../shared/specs`, counted
//! by a wrapper around jemalloc (the allocator the `openapi-mcp` binary ships with).
//!
//! The `convert` benchmark runs this binary for its peak columns (`--child ROOT` prints one
//! line of figures); run alone (`cargo bench -p openapi-mcp-convert --bench convert_peak`) it
//! prints the peaks of every case. Times are never taken here: the counting costs time.

#[path = "common/convert.rs"]
mod common;

use std::path::Path;

use peakmem_alloc::{PeakMemAlloc, PeakMemAllocTrait};

/// Counts the peak heap growth (`peakmem-alloc`: the workspace forbids `unsafe_code`, which an
/// in-crate `GlobalAlloc` impl would need) around jemalloc.
#[global_allocator]
static HEAP: PeakMemAlloc<tikv_jemallocator::Jemalloc> =
    PeakMemAlloc::new(tikv_jemallocator::Jemalloc);

const RUNS: usize = 2;

/// Peak heap growth of: load + convert; that and the complete tools/list; the bare parse of the
/// same files (`None` when the bare parser cannot read them).
fn peaks(root: &Path) -> Result<(usize, usize, Option<usize>), String> {
    let files = common::spec_files(root)?;
    drop(common::load_convert(root)?); // warm-up
    let (mut peak, mut list_peak) = (0, 0);
    for _ in 0..RUNS {
        HEAP.reset_peak_memory();
        let conv = common::load_convert(root)?;
        peak = peak.max(HEAP.get_peak_memory());
        std::hint::black_box(common::list_bytes(&conv)?);
        list_peak = list_peak.max(HEAP.get_peak_memory());
    }
    let mut parse_peak = Some(0);
    for _ in 0..RUNS {
        HEAP.reset_peak_memory();
        let parsed: Result<Vec<_>, _> = files.iter().map(|(_, b)| common::bare_parse(b)).collect();
        match parsed {
            Ok(p) => {
                parse_peak = parse_peak.map(|m: usize| m.max(HEAP.get_peak_memory()));
                std::hint::black_box(&p);
            }
            Err(_) => parse_peak = None,
        }
    }
    Ok((peak, list_peak, parse_peak))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let Some(root) = args.get(i + 1) else {
            eprintln!("--child needs a spec path");
            std::process::exit(2);
        };
        match peaks(Path::new(root)) {
            Ok((peak, list, parse)) => println!(
                "peaks {peak} {list} {}",
                parse.map_or("-".to_string(), |p| p.to_string())
            ),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let dir = common::specs_dir();
    if !dir.is_dir() {
        println!(
            "SKIPPED: ../shared/specs not found (looked in {})",
            dir.display()
        );
        return;
    }
    let filters = common::filters();
    println!("openapi-mcp convert peak heap (target: <= 5x the spec's size)");
    println!(
        "{:<27} {:>8} {:>9} {:>9} {:>10} {:>10}",
        "spec", "MiB", "peak MiB", "peak/size", "parse peak", "list peak"
    );
    for case in common::CASES
        .iter()
        .filter(|c| common::selected(&filters, c))
    {
        let root = dir.join(case.root);
        if !root.is_file() {
            println!("{:<27} SKIPPED: {} not found", case.label, case.root);
            continue;
        }
        let bytes: usize = match common::spec_files(&root) {
            Ok(f) => f.iter().map(|(_, b)| b.len()).sum(),
            Err(e) => {
                println!("{:<27} ERROR: {e}", case.label);
                continue;
            }
        };
        let x = |b: usize| format!("{:.2}x", b as f64 / bytes.max(1) as f64);
        match peaks(&root) {
            Ok((peak, list, parse)) => println!(
                "{:<27} {:>8.1} {:>9.1} {:>9} {:>10} {:>10}",
                case.label,
                bytes as f64 / 1048576.0,
                peak as f64 / 1048576.0,
                x(peak),
                parse.map_or("n/a".to_string(), x),
                x(list)
            ),
            Err(e) => println!("{:<27} ERROR: {e}", case.label),
        }
    }
}
