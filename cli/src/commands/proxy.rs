//! `openapi-mcp proxy`: serve the tools and forward calls.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use openapi_mcp_runtime::dynamic::ToolMode;
use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, Forwarder};
use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
use openapi_mcp_runtime::transport::{self, HttpOptions};
use openapi_mcp_runtime::{SpecSource, convert, load};

use crate::args::SpecArgs;

#[derive(Args, Debug)]
pub struct ProxyArgs {
    #[command(flatten)]
    pub spec: SpecArgs,

    /// MCP transport: stdio (for Claude Desktop, Claude Code, Cursor, VS Code) or Streamable HTTP.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    pub transport: Transport,
    /// Address to listen on with --transport http (MCP endpoint at /mcp).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// HTTP: no sessions, every request stands alone (for load-balanced deployments).
    #[arg(long)]
    pub stateless: bool,
    /// HTTP: require `Authorization: Bearer TOKEN` from MCP clients.
    #[arg(long, env = "OPENAPI_MCP_AUTH_TOKEN", hide_env_values = true)]
    pub auth_token: Option<String>,
    /// HTTP: also accept this Host header (DNS-rebinding protection; loopback names are always accepted).
    #[arg(long)]
    pub allowed_host: Vec<String>,
    /// HTTP: also accept requests from this browser Origin (e.g. https://app.example.com).
    #[arg(long)]
    pub allowed_origin: Vec<String>,
    /// HTTP: pass this header of the MCP client's request on to the API (e.g. Authorization, for
    /// per-user tokens); it replaces a credential in the same header. Repeatable. Nothing of the
    /// client's request is forwarded otherwise.
    #[arg(long, value_name = "NAME", value_parser = parse_header_name)]
    pub forward_header: Vec<String>,
    /// HTTP: largest accepted MCP request body, in bytes.
    #[arg(long, default_value_t = 4 * 1024 * 1024)]
    pub max_request_bytes: usize,
    /// HTTP: at most N requests per second per MCP client (its session, else its IP address),
    /// with bursts of N; beyond that, HTTP 429 with Retry-After. Default: unlimited.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: Option<u32>,

    /// Base URL of the API (default: the spec's first server).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Credential for a security scheme: SCHEME=VALUE (basic: SCHEME=user:pass). Prefer environment variables.
    #[arg(long, value_name = "SCHEME=VALUE")]
    pub auth: Vec<String>,
    /// Static header sent with every API request: 'Name: value'.
    #[arg(long, value_name = "NAME: VALUE")]
    pub header: Vec<String>,
    /// Upstream request timeout, in seconds.
    #[arg(long, default_value_t = 30.0)]
    pub timeout: f64,
    /// Upstream calls in flight at once.
    #[arg(long)]
    pub max_concurrency: Option<usize>,
    /// Retries of idempotent calls on connection errors and 502/503/504, with backoff.
    #[arg(long, default_value_t = 0)]
    pub retries: u32,
    /// Largest response body returned to the client; longer bodies are cut with a note.
    #[arg(long, default_value_t = 1024 * 1024)]
    pub max_response_bytes: usize,
    /// Tools per tools/list page (default: all in one page, unless the list is over 8 MiB:
    /// clients on the TypeScript SDK drop stdio messages over 10 MiB, so larger lists are served
    /// in pages of at most 8 MiB).
    #[arg(long)]
    pub page_size: Option<usize>,
    /// Reload the spec when the file changes and tell clients the tool list changed.
    #[arg(long)]
    pub watch: bool,
    /// How operations are exposed: one tool each (tools), only three discovery tools
    /// search_operations / describe_operation / call_operation (dynamic, for large APIs; see
    /// `openapi-mcp tools --stats`), or pinned operations as tools plus the discovery tools for
    /// the rest (hybrid, with --pin).
    #[arg(long, value_enum, default_value_t = Mode::Tools)]
    pub mode: Mode,
    /// With --mode hybrid: serve operations whose tool name, operationId or tag matches this glob
    /// as normal tools (repeatable, comma-separated).
    #[arg(long, value_name = "GLOB", value_delimiter = ',')]
    pub pin: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Tools,
    Dynamic,
    Hybrid,
}

impl ProxyArgs {
    fn tool_mode(&self) -> anyhow::Result<ToolMode> {
        tool_mode(self.mode, &self.pin)
    }
}

/// `--mode` and `--pin` (of `proxy` and `generate`) as the server's [`ToolMode`].
pub fn tool_mode(mode: Mode, pin: &[String]) -> anyhow::Result<ToolMode> {
    if mode != Mode::Hybrid && !pin.is_empty() {
        return Err(
            anyhow::anyhow!("--pin only applies to --mode hybrid").context(crate::BAD_INPUT)
        );
    }
    let name = match mode {
        Mode::Tools => "tools",
        Mode::Dynamic => "dynamic",
        Mode::Hybrid => "hybrid",
    };
    ToolMode::from_flags(name, pin).map_err(|e| anyhow::anyhow!(e).context(crate::BAD_INPUT))
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

pub async fn run(args: ProxyArgs) -> anyhow::Result<ExitCode> {
    let mode = args.tool_mode()?;
    let conversion = super::load_and_convert(&args.spec).await?;
    let set = conversion.tools;
    let base = match args.base_url.clone().or_else(|| set.base_url.clone()) {
        Some(b) => b,
        None => anyhow::bail!("the spec declares no server URL: pass --base-url"),
    };
    let base_url = url::Url::parse(&base)
        .with_context(|| format!("invalid base URL {base:?} (pass an absolute --base-url)"))
        .context(crate::BAD_INPUT)?;

    let mut creds = Credentials::from_env(&set.security_schemes, |k| std::env::var(k).ok());
    for a in &args.auth {
        let (scheme, value) = a
            .split_once('=')
            .with_context(|| {
                format!(
                    "--auth expects SCHEME=VALUE, got {:?}",
                    a.split('=').next().unwrap_or_default()
                )
            })
            .context(crate::BAD_INPUT)?;
        if !set.security_schemes.iter().any(|(n, _)| n == scheme) {
            let known: Vec<&str> = set
                .security_schemes
                .iter()
                .map(|(n, _)| n.as_str())
                .collect();
            return Err(anyhow::anyhow!(
                "--auth: the spec has no security scheme {scheme:?} (it has: {})",
                known.join(", ")
            )
            .context(crate::BAD_INPUT));
        }
        creds.set(scheme, value.to_string());
    }
    let mut static_headers = Vec::new();
    for h in &args.header {
        let (name, value) = h
            .split_once(':')
            .with_context(|| format!("--header expects 'Name: value', got {h:?}"))
            .context(crate::BAD_INPUT)?;
        static_headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let missing = creds.missing(&set.security_schemes);
    let mut forward_opts = ForwardOptions::new(base_url.clone());
    forward_opts.timeout = Duration::from_secs_f64(args.timeout.max(0.001));
    forward_opts.max_response_bytes = args.max_response_bytes;
    forward_opts.retries = args.retries;
    forward_opts.static_headers = static_headers;
    let forwarder = Forwarder::new(forward_opts, set.security_schemes.clone(), creds)
        .context("setting up the HTTP client")?;

    let tool_count = set.tools.len();
    let server = ProxyServer::new(
        set,
        forwarder,
        ServerOptions {
            page_size: args.page_size,
            page_bytes: None,
            max_concurrency: args.max_concurrency,
            dispatcher: None,
            forward_headers: args.forward_header.clone(),
            mode,
        },
    );
    let served = server.state().tools().len();
    let tools_desc = if served == tool_count {
        format!("{tool_count} tools")
    } else {
        format!(
            "{tool_count} operations as {served} tools, --mode {}",
            args.mode
                .to_possible_value()
                .map(|v| v.get_name().to_string())
                .unwrap_or_default()
        )
    };
    for m in &missing {
        tracing::warn!(
            "no credentials for security scheme {m} (operations needing it will get 401/403 from the API)"
        );
    }
    let list_bytes = server.state().list_bytes();
    if list_bytes > openapi_mcp_runtime::server::MAX_PAGE_BYTES {
        tracing::warn!(
            "the tool list is {:.1} MiB: tools/list is served in pages of at most {} MiB (clients on the TypeScript SDK drop stdio messages over 10 MiB); clients that read only the first page see part of the tools; --mode dynamic serves 3 tools, or filter operations (--include-tag, --include-path)",
            list_bytes as f64 / (1 << 20) as f64,
            openapi_mcp_runtime::server::MAX_PAGE_BYTES >> 20
        );
    }
    if args.watch {
        spawn_watch(&args.spec, server.clone());
    }
    match args.transport {
        Transport::Stdio => {
            if !args.forward_header.is_empty() {
                tracing::warn!(
                    "--forward-header has no effect over stdio (there is no client HTTP request)"
                );
            }
            eprintln!(
                "openapi-mcp: serving {} ({tools_desc}) over stdio; API at {base_url}",
                args.spec.spec
            );
            transport::serve_stdio(server).await?;
        }
        Transport::Http => {
            let mut http = HttpOptions::new(args.listen);
            http.stateless = args.stateless;
            http.auth_token = args.auth_token.clone();
            http.allowed_hosts = args.allowed_host.clone();
            http.allowed_origins = args.allowed_origin.clone();
            http.max_body_bytes = args.max_request_bytes;
            http.rate_limit = args.rate_limit;
            let handle = transport::start_http(server, http).await?;
            eprintln!(
                "openapi-mcp: serving {} ({tools_desc}) over Streamable HTTP at http://{}/mcp{}; API at {base_url}",
                args.spec.spec,
                handle.addr,
                if args.stateless { " (stateless)" } else { "" }
            );
            let shutdown = handle.shutdown.clone();
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                shutdown.cancel();
            });
            handle.task.await.context("HTTP server task")??;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Polls the spec file and reloads it when it changes; a spec that fails to load keeps the old tools.
fn spawn_watch(spec: &SpecArgs, server: ProxyServer) {
    let SpecSource::Path(path) = SpecSource::parse(&spec.spec) else {
        tracing::warn!("--watch works with spec files, not URLs; not watching");
        return;
    };
    let spec = spec.clone();
    tokio::spawn(async move {
        let mut last = modified(&path);
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let now = modified(&path);
            if now == last {
                continue;
            }
            last = now;
            let Ok(opts) = spec.tool_options() else {
                continue;
            };
            match load(&SpecSource::Path(path.clone())).await {
                Ok(loaded) => {
                    let mut c = convert(&loaded, &opts);
                    if let Err(e) = super::apply_overrides(&spec, &opts, &mut c) {
                        tracing::warn!(
                            "spec changed but the overrides no longer apply, keeping the previous tools: {e:#}"
                        );
                        continue;
                    }
                    if let Err(e) = super::apply_lock(&spec, &opts, &mut c, super::LockMode::Read) {
                        tracing::warn!(
                            "spec changed but the lock file no longer applies, keeping the previous tools: {e:#}"
                        );
                        continue;
                    }
                    let n = c.tools.tools.len();
                    if server.replace_tools(c.tools).await {
                        tracing::info!("spec reloaded: {n} tools; clients notified");
                    }
                }
                Err(e) => tracing::warn!(
                    "spec changed but failed to load, keeping the previous tools: {e}"
                ),
            }
        }
    });
}

fn modified(path: &PathBuf) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn parse_header_name(s: &str) -> Result<String, String> {
    http::HeaderName::from_bytes(s.trim().as_bytes())
        .map(|h| h.as_str().to_string())
        .map_err(|_| format!("`{s}` is not a valid HTTP header name"))
}
