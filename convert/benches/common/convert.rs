//! What the convert benchmark's two binaries share: the cases, the spec files, the bare parse.
//!
//! `convert` times load + convert on the allocator the `openapi-mcp` binary ships with
//! (jemalloc). Peak heap is counted by `convert_peak`, whose allocator counts every allocation:
//! two shared atomic counters updated by both conversion threads slowed a conversion by a fifth
//! to a half, so times are never taken there.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use openapi_mcp_convert::{SpecSource, ToolOptions, convert, load};
use serde_json::Value;

pub struct Case {
    pub label: &'static str,
    /// Root document, relative to the specs directory.
    pub root: &'static str,
}

pub const CASES: &[Case] = &[
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

pub fn specs_dir() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/specs")).to_path_buf()
}

pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(f)
}

/// Parses one document the way a bare parser would: JSON with serde_json, YAML with serde_yaml_ng.
pub fn bare_parse(bytes: &[u8]) -> Result<Value, String> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{') | Some(b'[')) {
        serde_json::from_slice::<Value>(bytes).map_err(|e| e.to_string())
    } else {
        serde_yaml_ng::from_slice::<Value>(bytes).map_err(|e| e.to_string())
    }
}

/// Every file a spec spans (root first), read into memory.
pub fn spec_files(root: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, String> {
    let spec = block_on(load(&SpecSource::Path(root.to_path_buf()))).map_err(|e| e.to_string())?;
    spec.docs
        .docs
        .iter()
        .filter_map(|d| d.url.to_file_path().ok())
        .map(|f| {
            std::fs::read(&f)
                .map(|b| (f.clone(), b))
                .map_err(|e| format!("{}: {e}", f.display()))
        })
        .collect()
}

/// One full load + convert with default options.
pub fn load_convert(root: &Path) -> Result<openapi_mcp_convert::Conversion, String> {
    let spec = block_on(load(&SpecSource::Path(root.to_path_buf()))).map_err(|e| e.to_string())?;
    Ok(convert(&spec, &ToolOptions::default()))
}

/// Bundles every tool's schemas and serializes the whole `tools/list`; returns its size.
pub fn list_bytes(conv: &openapi_mcp_convert::Conversion) -> Result<usize, String> {
    let tools: Vec<&openapi_mcp_convert::toolset::rmcp::model::Tool> =
        conv.tools.tools.iter().map(|t| t.tool()).collect();
    Ok(openapi_mcp_convert::toolset::model::json_size(&tools))
}

/// Arguments after `cargo bench`'s own (`--bench`): substrings of case labels to run.
pub fn filters() -> Vec<String> {
    std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect()
}

pub fn selected(filters: &[String], case: &Case) -> bool {
    filters.is_empty() || filters.iter().any(|f| case.label.contains(f.as_str()))
}
