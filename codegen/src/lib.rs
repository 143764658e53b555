//! openapi-mcp codegen: turn a converted [`ToolSet`] into the files of a standalone Rust MCP
//! server crate.
//!
//! [`generate`] is pure: it returns the files and writes nothing (the CLI writes them).
//!
//! The generated crate is *the proxy, frozen*: its tool definitions and routes are the tool set
//! serialized to `src/api.json` and served by the runtime's `ProxyServer`, and every call goes
//! through the runtime's `Forwarder`, so `tools/list` and the HTTP requests are identical to what
//! `openapi-mcp proxy` produces for the same spec and options. On top of that it has one typed
//! argument struct and one handler per operation (`src/tools/<tag>.rs`) that owners can read and
//! edit: the handler puts each typed field at its wire location with the runtime's
//! `forward::typed::Call` builder, which serializes it as the route says.

mod emit;
mod extensible;
mod format;
mod naming;
mod plan;
mod types;

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use openapi_mcp_toolset::model::{Exposure, ToolSet};

pub use extensible::{
    ExtensibleCrate, USER_OWNED, generate_extensible, regeneration_report, write_user_owned,
};

/// Name of the marker file written into every generated crate. Its presence means a directory
/// may be regenerated in place; it lists the files generation owns (one per line after the
/// header), so stale ones can be removed.
pub const MARKER_FILE: &str = ".openapi-mcp-generated";

/// Where the generated crate gets `openapi-mcp-runtime` from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuntimeDep {
    /// A path dependency (absolute, or relative to the generated crate's directory).
    Path(PathBuf),
    /// A crates.io version requirement, e.g. `0.1.0`.
    Version(String),
}

impl Default for RuntimeDep {
    fn default() -> Self {
        RuntimeDep::Path(default_runtime_path())
    }
}

/// Options of [`generate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodegenOptions {
    /// Cargo package name of the generated crate (see [`default_crate_name`]).
    pub crate_name: String,
    pub runtime_dep: RuntimeDep,
    /// The generated server's default `--mode`; its users can still choose.
    pub mode: Exposure,
    /// The default `--pin` globs of hybrid mode (ignored in the other modes: see
    /// [`CodegenOptions::default_pins`]).
    pub pins: Vec<String>,
    /// Optional parts to build with besides those the crate needs (names of [`FEATURES`], or
    /// `all`); see [`features`].
    pub features: Vec<String>,
    /// Arazzo documents whose workflows the crate serves as tools (#39), embedded as
    /// `src/workflows/<file_name>`; the crate is then built with the runtime's `workflows`.
    pub workflows: Vec<WorkflowDocument>,
    /// `--workflows-only`: the crate lists only the workflow tools.
    pub workflows_only: bool,
}

/// An Arazzo document a generated crate embeds (#39): served at start-up exactly as
/// `openapi-mcp proxy` serves it over the crate's spec (its `openapi` source descriptions are
/// the crate's API, already converted in `src/api.json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkflowDocument {
    /// A plain file name (no directory), unique among the crate's documents: the file under
    /// `src/workflows/` and the name its diagnostics give.
    pub file_name: String,
    /// The document as written (YAML or JSON).
    pub text: String,
}

impl Default for CodegenOptions {
    fn default() -> Self {
        CodegenOptions {
            crate_name: "api-mcp".to_string(),
            runtime_dep: RuntimeDep::default(),
            mode: Exposure::default(),
            pins: Vec::new(),
            features: Vec::new(),
            workflows: Vec::new(),
            workflows_only: false,
        }
    }
}

/// The optional parts a generated crate can be built with (`openapi-mcp generate --features`),
/// each with what it serves: the runtime's cargo features, and `oauth-proxy` (the
/// `openapi-mcp-oauth-proxy` crate, handed to serving by `main.rs`).
pub const FEATURES: &[(&str, &str)] = &[
    ("http", "--transport http: Streamable HTTP"),
    (
        "code",
        "--mode code: scripts in an embedded QuickJS sandbox (a C build)",
    ),
    (
        "metrics",
        "--metrics-listen: Prometheus metrics (with http)",
    ),
    (
        "otel",
        "OpenTelemetry traces (the OTEL_EXPORTER_OTLP_* variables)",
    ),
    (
        "sqlite",
        "--task-store sqlite:PATH, and the OAuth proxy's default store (a C build)",
    ),
    ("redis", "--task-store and --oauth-store redis://..."),
    ("postgres", "--task-store and --oauth-store postgres://..."),
    (
        "workflows",
        "Arazzo workflows served as tools (on by itself for a crate that embeds workflows)",
    ),
    (
        "oauth-proxy",
        "--oauth-proxy: the OAuth authorization server (with http and a store)",
    ),
];

/// What a generated crate is built with ([`features`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Features {
    /// The runtime's cargo features, `cli` first, then in the order of [`FEATURES`].
    pub runtime: Vec<&'static str>,
    /// With `oauth-proxy`: the proxy crate's features (its stores).
    pub oauth_proxy: Option<Vec<&'static str>>,
}

/// The parts a generated crate is built with: the runtime's `cli`, those its default mode needs
/// (`code` for `--mode code`), and the ones asked for (`all`: every one of [`FEATURES`]), with
/// what they need (`metrics` and `oauth-proxy` need `http`; `oauth-proxy` the SQLite store when
/// no other store is named). Nothing else, whatever the spec: a server for a small API served
/// over stdio builds only what it uses, and an option needing a part left out is refused at
/// start-up, naming the feature to regenerate with.
pub fn features(mode: Exposure, asked: &[String]) -> Result<Features> {
    let mut on: Vec<&'static str> = Vec::new();
    if mode == Exposure::Code {
        on.push("code");
    }
    for name in asked.iter().map(|a| a.trim()).filter(|a| !a.is_empty()) {
        if name == "all" {
            on.extend(FEATURES.iter().map(|(n, _)| *n));
            continue;
        }
        match FEATURES.iter().find(|(n, _)| *n == name) {
            Some((n, _)) => on.push(n),
            None => {
                return Err(CodegenError::UnknownFeature {
                    name: name.to_string(),
                    known: FEATURES
                        .iter()
                        .map(|(n, _)| *n)
                        .chain(["all"])
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
    }
    if on.contains(&"metrics") || on.contains(&"oauth-proxy") {
        on.push("http");
    }
    const STORES: [&str; 3] = ["sqlite", "redis", "postgres"];
    if on.contains(&"oauth-proxy") && !on.iter().any(|f| STORES.contains(f)) {
        on.push("sqlite");
    }
    let mut runtime = vec!["cli"];
    runtime.extend(
        FEATURES
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| *n != "oauth-proxy" && on.contains(n)),
    );
    let oauth_proxy = on.contains(&"oauth-proxy").then(|| {
        STORES
            .into_iter()
            .filter(|s| on.contains(s))
            .collect::<Vec<_>>()
    });
    Ok(Features {
        runtime,
        oauth_proxy,
    })
}

impl CodegenOptions {
    /// What the crate is built with: [`features`] of its mode and `--features`, and `workflows`
    /// when it embeds Arazzo documents.
    pub fn features(&self) -> Result<Features> {
        let mut f = features(self.mode, &self.features)?;
        if !self.workflows.is_empty() && !f.runtime.contains(&"workflows") {
            f.runtime.push("workflows");
            // In the order of FEATURES (after `cli`).
            let order = |n: &&str| FEATURES.iter().position(|(f, _)| f == n);
            f.runtime[1..].sort_by_key(order);
        }
        Ok(f)
    }

    /// Checks the embedded documents' file names: plain names, unique.
    fn check_workflows(&self) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for d in &self.workflows {
            let plain = !d.file_name.is_empty()
                && Path::new(&d.file_name).components().count() == 1
                && matches!(
                    Path::new(&d.file_name).components().next(),
                    Some(Component::Normal(_))
                )
                && !d.file_name.contains(['/', '\\']);
            if !plain || !seen.insert(d.file_name.as_str()) {
                return Err(CodegenError::WorkflowFileName {
                    name: d.file_name.clone(),
                });
            }
        }
        if self.workflows_only && self.workflows.is_empty() {
            return Err(CodegenError::WorkflowsOnlyWithout);
        }
        Ok(())
    }

    /// The generated server's default `--pin`s: [`CodegenOptions::pins`] in hybrid mode, none in
    /// the others.
    pub fn default_pins(&self) -> &[String] {
        if self.mode == Exposure::Hybrid {
            &self.pins
        } else {
            &[]
        }
    }
}

/// The generated files, keyed by their path relative to the crate root (`/`-separated).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GeneratedCrate {
    pub files: BTreeMap<PathBuf, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    #[error(
        "invalid crate name {name:?}: use ASCII letters, digits, `-` and `_`, starting with a letter, and not a Rust keyword"
    )]
    InvalidCrateName { name: String },
    #[error("the tool set has no tools: nothing to generate")]
    NoTools,
    #[error("unknown feature {name:?} (--features): choose from {known}")]
    UnknownFeature { name: String, known: String },
    /// `generated_main_extended` has no OAuth proxy factory yet: an extensible crate with the
    /// oauth-proxy feature would refuse `--oauth-proxy` at start-up.
    #[error(
        "--extensible cannot be combined with the oauth-proxy feature yet (the extended entry point has no OAuth proxy): leave out one of them"
    )]
    ExtensibleOAuthProxy,
    /// `generated_main_extended` has no workflows yet.
    #[error(
        "--extensible cannot be combined with Arazzo workflows yet (the extended entry point serves no workflows): leave out one of them"
    )]
    ExtensibleWorkflows,
    #[error(
        "invalid workflow document name {name:?}: a plain file name, unique among the crate's documents"
    )]
    WorkflowFileName { name: String },
    #[error(
        "--workflows-only needs Arazzo workflows (an Arazzo document as SPEC, or --arazzo FILE)"
    )]
    WorkflowsOnlyWithout,
    #[error("the runtime path {path:?} cannot be written into Cargo.toml")]
    RuntimePath { path: PathBuf },
    #[error("serializing the tool definitions failed: {0}")]
    Serialize(#[from] serde_json::Error),
    /// A bug in the generator: the tokens it built do not parse. Carries the token text.
    #[error("internal error: generated `{file}` does not parse ({message}); tokens:\n{tokens}")]
    Unparsable {
        file: String,
        message: String,
        tokens: String,
    },
}

pub type Result<T, E = CodegenError> = std::result::Result<T, E>;

/// The runtime crate of the workspace this generator was built in (an absolute path).
pub fn default_runtime_path() -> PathBuf {
    normalize(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("runtime"),
    )
}

/// `Petstore API` -> `petstore-mcp`: the title's first significant word (the converter's default
/// tool-name prefix) plus `-mcp`, which also keeps the name clear of keywords and standard-library
/// crate names.
pub fn default_crate_name(title: &str) -> String {
    let word = openapi_mcp_toolset::naming::prefix_from_title(title).replace('_', "-");
    let word = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-');
    if word.is_empty() {
        "api-mcp".to_string()
    } else {
        format!("{word}-mcp")
    }
}

/// Generates the crate's files for `set`: a crate that is a workspace of its own, so it builds
/// wherever it is written (what `openapi-mcp generate` writes).
pub fn generate(set: &ToolSet, opts: &CodegenOptions) -> Result<GeneratedCrate> {
    generate_placed(set, opts, true)
}

/// [`generate`] for a crate that an enclosing workspace lists in its `members` (the repository's
/// own codegen snapshots, compiled by `cargo build --workspace`): its `Cargo.toml` has no
/// `[workspace]` table (Cargo refuses a member that declares one) and no `[profile]` (only the
/// workspace root's apply). Every other file is the same as [`generate`]'s.
pub fn generate_workspace_member(set: &ToolSet, opts: &CodegenOptions) -> Result<GeneratedCrate> {
    generate_placed(set, opts, false)
}

fn generate_placed(
    set: &ToolSet,
    opts: &CodegenOptions,
    standalone: bool,
) -> Result<GeneratedCrate> {
    naming::check_crate_name(&opts.crate_name)?;
    if set.tools.is_empty() {
        return Err(CodegenError::NoTools);
    }
    opts.check_workflows()?;
    let plan = plan::plan(set, &opts.crate_name);
    let mut files = BTreeMap::new();
    let features = opts.features()?;
    files.insert(
        PathBuf::from("Cargo.toml"),
        emit::manifest::cargo_toml(&plan, &opts.runtime_dep, &features, standalone)?,
    );
    files.insert(
        PathBuf::from("README.md"),
        emit::manifest::readme(&plan, set, opts),
    );
    files.insert(PathBuf::from(".gitignore"), "/target\n".to_string());
    files.insert(
        PathBuf::from("src/api.json"),
        openapi_mcp_toolset::api_file::write(set)?,
    );
    files.insert(
        PathBuf::from("src/lib.rs"),
        emit::lib_rs::lib_rs(set, opts)?,
    );
    for d in &opts.workflows {
        files.insert(
            PathBuf::from(format!("src/workflows/{}", d.file_name)),
            d.text.clone(),
        );
    }
    files.insert(
        PathBuf::from("src/main.rs"),
        emit::main_rs::main_rs(
            &plan,
            set,
            opts.mode,
            opts.default_pins(),
            features.oauth_proxy.is_some(),
            !opts.workflows.is_empty(),
        )?,
    );
    files.insert(
        PathBuf::from("src/tools/mod.rs"),
        emit::tools::tools_mod(&plan)?,
    );
    for module in &plan.modules {
        files.insert(
            PathBuf::from(format!("src/tools/{}.rs", module.ident)),
            emit::tools::tool_module(module)?,
        );
    }
    let mut marker = String::from(
        "# Generated by `openapi-mcp generate`. Regenerating this directory overwrites the files below\n\
         # (and removes those a new generation no longer produces); other files are kept.\n",
    );
    for path in files.keys() {
        marker.push_str(&path_string(path));
        marker.push('\n');
    }
    files.insert(PathBuf::from(MARKER_FILE), marker);
    Ok(GeneratedCrate { files })
}

/// The files a marker lists (what a previous generation wrote).
pub fn marker_files(marker: &str) -> Vec<PathBuf> {
    marker
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(PathBuf::from)
        // Only plain relative paths: a tampered marker must not point outside the directory.
        .filter(|p| p.components().all(|c| matches!(c, Component::Normal(_))))
        .collect()
}

/// `/`-separated (Cargo accepts `/` on every platform; the marker and snapshots stay portable).
fn path_string(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// Lexically removes `.` and `..` components.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names() {
        assert_eq!(default_crate_name("Petstore"), "petstore-mcp");
        assert_eq!(default_crate_name("GitHub v3 REST API"), "github-mcp");
        assert_eq!(default_crate_name("Stripe API"), "stripe-mcp");
        assert_eq!(default_crate_name("123 ✨"), "api-mcp");
        assert!(naming::check_crate_name("petstore-mcp").is_ok());
        assert!(naming::check_crate_name("self").is_err());
        assert!(naming::check_crate_name("9lives").is_err());
        assert!(naming::check_crate_name("a b").is_err());
    }

    /// `cli` always; `code` for a code-mode server; the asked ones in a fixed order, once, with
    /// what they need; `all`; an unknown name is an error naming the known ones.
    #[test]
    fn features_follow_the_mode_and_the_asked() {
        let asked = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let runtime = |mode: Exposure, a: &[&str]| features(mode, &asked(a)).unwrap().runtime;
        assert_eq!(runtime(Exposure::Tools, &[]), ["cli"]);
        assert_eq!(features(Exposure::Tools, &[]).unwrap().oauth_proxy, None);
        assert_eq!(runtime(Exposure::Code, &[]), ["cli", "code"]);
        assert_eq!(
            runtime(Exposure::Code, &["otel", " code", "otel", ""]),
            ["cli", "code", "otel"]
        );
        assert_eq!(
            runtime(Exposure::Tools, &["metrics"]),
            ["cli", "http", "metrics"]
        );
        let proxy = features(Exposure::Tools, &asked(&["oauth-proxy"])).unwrap();
        assert_eq!(proxy.runtime, ["cli", "http", "sqlite"]);
        assert_eq!(proxy.oauth_proxy.as_deref(), Some(&["sqlite"][..]));
        let proxy = features(Exposure::Tools, &asked(&["oauth-proxy", "redis"])).unwrap();
        assert_eq!(proxy.runtime, ["cli", "http", "redis"]);
        assert_eq!(proxy.oauth_proxy.as_deref(), Some(&["redis"][..]));
        let all = features(Exposure::Dynamic, &asked(&["all"])).unwrap();
        assert_eq!(
            all.runtime,
            [
                "cli",
                "http",
                "code",
                "metrics",
                "otel",
                "sqlite",
                "redis",
                "postgres",
                "workflows"
            ]
        );
        assert_eq!(
            all.oauth_proxy.as_deref(),
            Some(&["sqlite", "redis", "postgres"][..])
        );
        let e = features(Exposure::Tools, &asked(&["quickjs"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"quickjs\"")
                && e.contains(
                    "http, code, metrics, otel, sqlite, redis, postgres, workflows, oauth-proxy, all"
                ),
            "{e}"
        );
    }

    #[test]
    fn runtime_path_is_normalized() {
        let p = default_runtime_path();
        assert!(p.is_absolute() && p.ends_with("runtime"), "{p:?}");
        assert!(!p.components().any(|c| c == Component::ParentDir));
    }

    #[test]
    fn marker_paths_stay_inside() {
        let files = marker_files("# header\nsrc/lib.rs\n../evil\n/abs\n\nCargo.toml\n");
        assert_eq!(
            files,
            vec![PathBuf::from("src/lib.rs"), PathBuf::from("Cargo.toml")]
        );
    }
}
