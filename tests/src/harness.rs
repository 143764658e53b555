//! Starting the proxy: in-process over a duplex pipe, as the built binary over stdio, or over
//! Streamable HTTP; each with a real rmcp client.

use std::path::{Path, PathBuf};
use std::time::Duration;

use openapi_mcp_convert::{SpecSource, ToolOptions, convert, load};
use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, Forwarder};
use openapi_mcp_runtime::rmcp::model::{CallToolRequestParams, CallToolResult};
use openapi_mcp_runtime::rmcp::service::RunningService;
use openapi_mcp_runtime::rmcp::{ClientHandler, RoleClient, ServiceExt};
use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
use openapi_mcp_toolset::model::ToolSet;
use serde_json::Value;

pub type Client = RunningService<RoleClient, ()>;

/// The workspace root (this crate lives in `tests/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// A fixture spec under `specs/`.
pub fn spec(name: &str) -> PathBuf {
    workspace_root().join("specs").join(name)
}

/// The shared real-world specs, if present.
pub fn shared_specs() -> Option<PathBuf> {
    let p = workspace_root().join("..").join("shared").join("specs");
    p.is_dir().then_some(p)
}

/// The `openapi-mcp` debug binary, built (or brought up to date) once per test process:
/// `cargo test` builds the binaries only of packages with integration tests, so without this the
/// tests would fail on a fresh clone, or run an old binary after a change to the sources. It
/// builds with the same target selection as `cargo test --workspace` (and as `.ci/run`'s
/// `cargo build --workspace --all-targets`), so features unify the same way and, after those, the
/// build is a no-op instead of recompiling dependencies with the CLI's features alone.
pub fn binary() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("current exe");
            let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
            let bin = dir.join(format!("openapi-mcp{}", std::env::consts::EXE_SUFFIX));
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = std::process::Command::new(cargo)
                .args(["build", "--workspace", "--bins", "--tests"])
                .current_dir(workspace_root())
                .status()
                .expect("running cargo build --workspace --bins --tests");
            assert!(
                status.success(),
                "cargo build --workspace --bins --tests failed"
            );
            assert!(bin.exists(), "{} not built", bin.display());
            bin
        })
        .clone()
}

/// Builds a proxy server for `spec_path` pointed at `base_url`.
pub async fn proxy_server(
    spec_path: &Path,
    base_url: &str,
    opts: ToolOptions,
    creds: &[(&str, &str)],
) -> ProxyServer {
    proxy_server_with(spec_path, base_url, opts, creds, ServerOptions::default()).await
}

/// [`proxy_server`] with explicit server options (page size, concurrency).
pub async fn proxy_server_with(
    spec_path: &Path,
    base_url: &str,
    opts: ToolOptions,
    creds: &[(&str, &str)],
    server_opts: ServerOptions,
) -> ProxyServer {
    let set = tool_set(spec_path, &opts).await;
    let mut credentials = Credentials::from_env(&set.security_schemes, |_| None);
    for (scheme, value) in creds {
        credentials.set(scheme, value.to_string());
    }
    server_for(set, base_url, credentials, |_| {}, server_opts)
}

/// The tool set of the spec at `spec_path`, converted with `opts`.
pub async fn tool_set(spec_path: &Path, opts: &ToolOptions) -> ToolSet {
    let spec = load(&SpecSource::Path(spec_path.to_path_buf()))
        .await
        .expect("spec loads");
    convert(&spec, opts).tools
}

/// A proxy server for `set` sending to `base_url` with `credentials`: forward options with a
/// 5 s timeout, then as `tweak` sets them.
pub fn server_for(
    set: ToolSet,
    base_url: &str,
    credentials: Credentials,
    tweak: impl FnOnce(&mut ForwardOptions),
    server_opts: ServerOptions,
) -> ProxyServer {
    let mut o = ForwardOptions::new(url::Url::parse(base_url).expect("base url"));
    o.timeout = Duration::from_secs(5);
    tweak(&mut o);
    let fwd = Forwarder::new(o, set.security_schemes.clone(), credentials).expect("forwarder");
    ProxyServer::new(set, fwd, server_opts)
}

/// An rmcp client connected in-process to `server`.
pub async fn connect_in_process(server: ProxyServer) -> Client {
    connect_in_process_as(server, ()).await
}

/// [`connect_in_process`] with a client of its own (one that answers elicitation, sampling, …).
pub async fn connect_in_process_as<C: ClientHandler>(
    server: ProxyServer,
    client: C,
) -> RunningService<RoleClient, C> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client.serve(client_io).await.expect("client connects")
}

/// Calls a tool with JSON arguments.
pub async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("call {name} failed at the protocol level: {e}"))
}

/// The text of the first content block.
pub fn text(r: &CallToolResult) -> String {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// A directory of a test's own under the system's temporary directory (its name: `tag`, the
/// process id and a counter), emptied when made and removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "openapi-mcp-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.0
    }

    /// The path of `name` in it.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes `text` to `name` in it; returns the file's path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).expect("write a scratch file");
        p
    }

    /// [`Scratch::path`] as a command-line argument.
    pub fn path_arg(&self, name: &str) -> String {
        arg(&self.path(name)).to_string()
    }

    /// [`Scratch::write`], the path as a command-line argument.
    pub fn write_arg(&self, name: &str, text: &str) -> String {
        arg(&self.write(name, text)).to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A path as a command-line argument (UTF-8).
pub fn arg(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Standard base64 with padding (a `Basic` header, a file argument).
pub fn base64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}
