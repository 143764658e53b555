//! The one serving entry point: [`ServeArgs`] (every serving option, a clap `Args` struct with the
//! `cli` feature) and [`serve`]. `openapi-mcp proxy` and every generated server's `main.rs` run
//! exactly this, so a serving option added here reaches both by construction (a test compares
//! the two command lines).

mod api_options;
mod args;
#[cfg(feature = "cli")]
pub mod config;
pub mod exit;
mod features;
#[cfg(feature = "cli")]
mod generated;
mod logging;
mod resolve;
pub mod shown;
pub use crate::server::stdio;

pub use crate::serve::shown::{shown_url, shown_url_text};
pub use api_options::*;
pub use args::*;
pub use features::*;
#[cfg(feature = "cli")]
pub use generated::*;
pub use logging::*;
pub use resolve::*;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use openapi_mcp_toolset::model::ToolSet;

use crate::forward::{Credentials, ForwardError, ForwardOptions, Forwarder, ResponseMode};
#[cfg(feature = "http")]
use crate::http::transport::{self, HttpOptions};
use crate::modes::dynamic::ToolMode;
use crate::oauth::OAuthOptions;
#[cfg(feature = "http")]
use crate::observe::Readiness;
use crate::observe::{AuditLog, AuditTarget, Metrics, Observe};
use crate::serve::exit::UserError;
use crate::serve::stdio::ServeError;
use crate::server::confirm::Confirm;
use crate::server::{Dispatcher, ListCaching, MAX_PAGE_BYTES, ProxyServer, ServerOptions};
/// What differs between the servers that call [`serve`]: the proxy and each generated crate.
#[derive(Default)]
pub struct Serving {
    /// The program, for the start-up line (`openapi-mcp`, a generated crate's name).
    pub program: String,
    /// What is served, for the start-up line (the spec's path or URL, the API's title).
    pub label: String,
    /// Takes every call instead of the forwarder (a generated crate's typed handlers).
    pub dispatcher: Option<Dispatcher>,
    /// Called once the server is built, before it serves (the proxy's `--watch`).
    pub on_start: Option<OnStart>,
    /// The tool set may be replaced while serving (`--watch`): lists are cached briefly.
    pub watched: bool,
    /// Builds `--oauth-proxy`'s authorization server (the `openapi-mcp-oauth-proxy` crate's
    /// `factory`); `None`: built without it, and `--oauth-proxy` says so.
    pub oauth_proxy: Option<crate::oauth::authorization::OAuthProxyFactory>,
    /// Arazzo workflows served as tools beside the operations (`--arazzo`, #39).
    pub workflows: Option<Arc<crate::server::workflow::WorkflowTools>>,
}

/// Flushes the spans still queued when serving ends, off the async workers.
struct OtelGuard(Option<crate::observe::otel::Guard>);

impl Drop for OtelGuard {
    // Without `otel` the guard is an empty enum (never made), so dropping it does nothing.
    #[cfg_attr(not(feature = "otel"), allow(clippy::drop_non_drop))]
    fn drop(&mut self) {
        if let Some(g) = self.0.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                    tokio::task::block_in_place(move || drop(g));
                }
                _ => drop(g),
            }
        }
    }
}

/// A hook run with the built server before it serves (see [`Serving::on_start`]).
pub type OnStart = Box<dyn FnOnce(&ProxyServer) + Send>;

/// Serves `set` as `args` say until the client goes away (stdio) or the process is interrupted
/// (HTTP). Start-up warnings (missing credentials, a paged tool list) go to the log, the
/// start-up line to stderr.
pub async fn serve(set: ToolSet, args: &ServeArgs, serving: Serving) -> Result<(), StartError> {
    args.check_features()?;
    args.check_gate()?;
    let mode = args.tool_mode()?;
    let (forwarder, mut missing) = args.forwarder(&set)?;
    if let Some(exchange) = args.token_exchange(&forwarder)? {
        // Those schemes get each caller's exchanged token: not missing.
        missing.retain(|m| !exchange.schemes().contains(m));
        forwarder.set_caller_credentials(Arc::new(exchange));
    }
    let oauth_proxy = args.oauth_proxy(&set, &forwarder.options().base_url, serving.oauth_proxy)?;
    if let Some(p) = &oauth_proxy {
        // Its scheme gets each caller's own API token: not missing.
        missing.retain(|m| m != p.scheme());
        forwarder.set_caller_credentials(Arc::clone(p) as _);
    }
    let api_at = shown_url(&forwarder.options().base_url);
    let upstreams = if args.ready_check {
        ServeArgs::upstreams(&set, &forwarder.options().base_url)
    } else {
        Vec::new()
    };
    let warnings = missing
        .iter()
        .map(|m| format!("no credentials for security scheme {m} (operations needing it will get 401/403 from the API)"))
        .collect();
    let prepared = Prepared {
        set,
        apis: Vec::new(),
        forwarders: vec![forwarder],
        warnings,
        upstreams,
        api_at: format!("API at {api_at}"),
        oauth_proxy,
        oauth_proxy_api: None,
    };
    run(prepared, mode, args, serving).await
}

/// One API of a server of several ([`serve_apis`]): its name, tool set, and its own API-side
/// options (the other serving options are the server's).
#[derive(Debug)]
pub struct ApiServing {
    /// `[a-z][a-z0-9_]*` ([`crate::server::multi::check_name`]), unique among the APIs.
    pub name: String,
    pub set: ToolSet,
    /// Its own serving options.
    pub options: ApiOptions,
}

/// How one API of a server of several gets its credentials, as its `apis:` entry says: what
/// [`check_api_auth`] checks (the keys it sets, not their values).
#[derive(Clone, Copy, Debug, Default)]
pub struct ApiAuth<'a> {
    pub name: &'a str,
    /// Its `upstream-auth` (`None`: the server's, [`ServeArgs::upstream_auth`]).
    pub upstream_auth: Option<UpstreamAuth>,
    pub token_exchange_audience: bool,
    pub upstream_client_id: bool,
    pub oauth_proxy_scheme: bool,
}

/// Why the APIs' credential modes cannot be served as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiAuthError {
    /// The API whose `key` it is (its index), or `None`: the server's own `key` (a default the
    /// API took, or a server-wide option).
    pub api: Option<usize>,
    /// The config key: `upstream-auth`, `oauth-proxy`, `upstream-client-id`, …
    pub key: &'static str,
    /// What is wrong, naming the API(s).
    pub message: String,
}

/// The credential modes of several APIs (`apis:`) checked together: each API is `static`,
/// `token-exchange` or `oauth-proxy` (its entry's `upstream-auth`, else the server's); at most
/// one API is in `oauth-proxy` mode (one authorization server sends a user through one API's
/// sign-in per authorization), and `--oauth-proxy URL` names none but it; `token-exchange`
/// needs the server's `--oauth-issuer` and `--oauth-client-id` and cannot be had next to the
/// oauth-proxy (which issues the callers' tokens itself); the per-mode keys only in their mode.
pub fn check_api_auth(args: &ServeArgs, apis: &[ApiAuth<'_>]) -> Result<(), ApiAuthError> {
    let mode_of = |a: &ApiAuth<'_>| a.upstream_auth.unwrap_or(args.upstream_auth);
    // The entry's own `upstream-auth`, or the server's when the API took its default.
    let mode_err = |i: usize, message: String| ApiAuthError {
        api: apis[i].upstream_auth.is_some().then_some(i),
        key: "upstream-auth",
        message,
    };
    let proxied: Vec<usize> = (0..apis.len())
        .filter(|&i| mode_of(&apis[i]) == UpstreamAuth::OAuthProxy)
        .collect();
    if let [first, second, ..] = proxied[..] {
        return Err(mode_err(
            second,
            format!(
                "APIs `{}` (apis[{first}]) and `{}` (apis[{second}]) are both upstream-auth oauth-proxy: this server is one authorization server for its MCP clients, and one authorization sends a user through one API's sign-in, so one API at most can be in oauth-proxy mode; make the other static (or serve it from a proxy of its own)",
                apis[first].name, apis[second].name
            ),
        ));
    }
    if args.oauth_proxy.is_some() && proxied.is_empty() {
        return Err(ApiAuthError {
            api: None,
            key: "oauth-proxy",
            message: "makes this server the authorization server for one API's users: set `upstream-auth: oauth-proxy` in that API's entry".into(),
        });
    }
    for (i, a) in apis.iter().enumerate() {
        let mode = mode_of(a);
        let entry = |key: &'static str, want: UpstreamAuth| ApiAuthError {
            api: Some(i),
            key,
            message: format!(
                "API `{}`: {key} is for upstream-auth {} (this API's is {})",
                a.name,
                want.name(),
                mode.name()
            ),
        };
        if a.token_exchange_audience && mode != UpstreamAuth::TokenExchange {
            return Err(entry(
                "token-exchange-audience",
                UpstreamAuth::TokenExchange,
            ));
        }
        if a.upstream_client_id && mode != UpstreamAuth::OAuthProxy {
            return Err(entry("upstream-client-id", UpstreamAuth::OAuthProxy));
        }
        if a.oauth_proxy_scheme && mode != UpstreamAuth::OAuthProxy {
            return Err(entry("oauth-proxy-scheme", UpstreamAuth::OAuthProxy));
        }
        match mode {
            UpstreamAuth::Static => {}
            UpstreamAuth::TokenExchange => {
                if let Some(&p) = proxied.first() {
                    return Err(mode_err(
                        i,
                        format!(
                            "API `{}`: token-exchange exchanges the tokens an oauth-issuer gave the callers, and API `{}` is in oauth-proxy mode, where this server issues their tokens itself: next to it, the other APIs are static",
                            a.name, apis[p].name
                        ),
                    ));
                }
                if args.transport != Transport::Http
                    || args.oauth_issuer.is_none()
                    || args.oauth_client_id.is_none()
                {
                    return Err(mode_err(
                        i,
                        format!(
                            "API `{}`: token-exchange exchanges each caller's OAuth token: it needs `transport: http`, `oauth-issuer` and `oauth-client-id` (its secret in OPENAPI_MCP_OAUTH_CLIENT_SECRET)",
                            a.name
                        ),
                    ));
                }
            }
            UpstreamAuth::OAuthProxy => {
                if args.oauth_proxy.is_none() {
                    return Err(mode_err(
                        i,
                        format!(
                            "API `{}`: oauth-proxy needs `oauth-proxy: URL` at the top level (this server's public URL, where MCP clients authorize)",
                            a.name
                        ),
                    ));
                }
                if !a.upstream_client_id {
                    return Err(mode_err(
                        i,
                        format!(
                            "API `{}`: oauth-proxy needs `upstream-client-id` in its entry: this server's client id at the API's authorization server (its secret in {})",
                            a.name,
                            crate::server::multi::env_var(
                                a.name,
                                crate::forward::auth::UPSTREAM_SECRET_ENV
                            )
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Serves several APIs from one server (`apis:` in a config file): each API gets its own
/// forwarder (base URL, credentials from `OPENAPI_MCP_<API>_<SCHEME>` and its own `auth`,
/// credential origins, static headers, and its own credential mode: static, token exchange
/// with its own audience, or the `--oauth-proxy` flow of one API), and every call goes through
/// its tool's API's; a per-caller credential is only ever its own API's forwarder's.
/// `args.upstream_auth` is the default of APIs that do not say; `args`' other API-side options
/// (those of [`ApiOptions`]) are not used.
pub async fn serve_apis(
    apis: Vec<ApiServing>,
    args: &ServeArgs,
    serving: Serving,
) -> Result<(), StartError> {
    let modes = check_apis(&apis, args)?;
    let mode = args.tool_mode()?;
    let bases = api_bases(&apis)?;
    let origins: Vec<String> = bases
        .iter()
        .map(|b| b.origin().ascii_serialization())
        .collect();
    let mut parts = Vec::with_capacity(apis.len());
    let mut forwarders = Vec::with_capacity(apis.len());
    let mut warnings = Vec::new();
    let mut upstreams = Vec::new();
    let mut api_at = Vec::new();
    let mut oauth_proxy = None;
    for (i, (api, base)) in apis.into_iter().zip(bases).enumerate() {
        let others: Vec<String> = origins
            .iter()
            .enumerate()
            .filter(|&(j, o)| j != i && *o != origins[i])
            .map(|(_, o)| o.clone())
            .collect();
        let api_args = api.options.serve_args(args, modes[i]);
        let (forwarder, mut missing) = api_args
            .forwarder_for(&api.set, base.clone(), Some(&api.name), &others)
            .map_err(|e| match e {
                StartError::Input(u) => StartError::Input(in_api(&api.name, u)),
                other => other,
            })?;
        // Each API's exchanged tokens are for its own audience (its base URL's origin, or its
        // own `token-exchange-audience`).
        if let Some(exchange) = api_args
            .token_exchange(&forwarder)
            .map_err(|e| in_api(&api.name, e))?
        {
            missing.retain(|m| !exchange.schemes().contains(m));
            forwarder.set_caller_credentials(Arc::new(exchange));
        }
        // The oauth-proxy API's users' own tokens go to its forwarder only: every other API's
        // forwarder has no per-caller credentials, so a user's token for this API never
        // reaches another.
        if modes[i] == UpstreamAuth::OAuthProxy {
            let proxy = api_args
                .oauth_proxy_for(&api.set, &base, Some(&api.name), serving.oauth_proxy)
                .map_err(|e| in_api(&api.name, e))?
                .ok_or_else(|| {
                    in_api(
                        &api.name,
                        UserError::msg("oauth-proxy needs `oauth-proxy: URL` at the top level"),
                    )
                })?;
            missing.retain(|m| m != proxy.scheme());
            forwarder.set_caller_credentials(Arc::clone(&proxy) as _);
            oauth_proxy = Some((proxy, api.name.clone()));
        }
        warnings.extend(missing_credentials(&api, missing));
        if args.ready_check {
            for u in ServeArgs::upstreams(&api.set, &base) {
                if !upstreams.contains(&u) {
                    upstreams.push(u);
                }
            }
        }
        api_at.push(format!("{} at {}", api.name, shown_url(&base)));
        forwarders.push(forwarder);
        parts.push(crate::server::multi::ApiInfo::split(&api.name, api.set));
    }
    if let Some((_, proxied)) = &oauth_proxy {
        // The proxy's tokens carry the scopes of its API's flow only: the other APIs' operation
        // scopes (at their own authorization servers) are not asked of them.
        for (info, _) in &mut parts {
            info.token_scopes = info.name == *proxied;
        }
    }
    let infos: Vec<crate::server::multi::ApiInfo> = parts.iter().map(|(i, _)| i.clone()).collect();
    crate::server::multi::check_variables(&infos).map_err(UserError::new)?;
    let (set, apis) = crate::server::multi::merge(parts).map_err(UserError::new)?;
    let (oauth_proxy, oauth_proxy_api) = match oauth_proxy {
        Some((p, name)) => (Some(p), Some(name)),
        None => (None, None),
    };
    let prepared = Prepared {
        set,
        apis,
        forwarders,
        warnings,
        upstreams,
        api_at: format!("APIs: {}", api_at.join(", ")),
        oauth_proxy,
        oauth_proxy_api,
    };
    run(prepared, mode, args, serving).await
}

/// The checks of a server of several APIs before anything is built: the server's own options,
/// the APIs' credential modes together (returned, one per API), their upstream client secrets,
/// and no `--forward-header` (it would reach every API).
fn check_apis(apis: &[ApiServing], args: &ServeArgs) -> Result<Vec<UpstreamAuth>, StartError> {
    // The server's own options; each API's credential mode is checked below.
    args.check_features()?;
    ServeArgs {
        upstream_auth: UpstreamAuth::Static,
        ..args.clone()
    }
    .check_gate()?;
    let auths: Vec<ApiAuth<'_>> = apis.iter().map(|a| a.options.api_auth(&a.name)).collect();
    check_api_auth(args, &auths).map_err(|e| match e.api {
        Some(_) => UserError::msg(e.message),
        None if e.message.starts_with("API") => UserError::msg(e.message),
        None => UserError::msg(format!("--{} {}", e.key, e.message)),
    })?;
    let modes: Vec<UpstreamAuth> = apis
        .iter()
        .map(|a| a.options.upstream_auth.unwrap_or(args.upstream_auth))
        .collect();
    check_upstream_secret(apis, &modes)?;
    if let Some(h) = args.forward_header.first() {
        return Err(UserError::msg(format!(
            "--forward-header {h} passes a client's header (often a per-user credential) to the API, and with several APIs (`apis:`) it would reach every one of them: run one proxy per API for it"
        ))
        .into());
    }
    Ok(modes)
}

/// Each API's base URL (its entry's `base-url`, else its spec's server), checking its name.
fn api_bases(apis: &[ApiServing]) -> Result<Vec<url::Url>, UserError> {
    let mut bases = Vec::with_capacity(apis.len());
    for api in apis {
        crate::server::multi::check_name(&api.name).map_err(UserError::msg)?;
        let api_args = ServeArgs {
            base_url: api.options.base_url.clone(),
            ..ServeArgs::default()
        };
        bases.push(
            api_args
                .base_url(&api.set)
                .map_err(|e| in_api(&api.name, e))?,
        );
    }
    Ok(bases)
}

/// The start-up warnings of an API of several for the security schemes it has no credentials
/// for, naming its variables.
fn missing_credentials(api: &ApiServing, missing: Vec<String>) -> Vec<String> {
    missing
        .into_iter()
        .map(|m| {
            let vars: Vec<String> = api
                .set
                .security_schemes
                .iter()
                .filter(|(n, _)| *n == m)
                .flat_map(|(n, s)| s.env_var_names(n))
                .map(|v| crate::server::multi::env_var(&api.name, &v))
                .collect();
            format!(
                "API {}: no credentials for security scheme {m} (set {}, or `auth` in its entry; operations needing it will get 401/403 from the API)",
                api.name,
                vars.join(" or ")
            )
        })
        .collect()
}

/// An error of the API named `name`, saying so.
fn in_api(name: &str, e: UserError) -> UserError {
    UserError::msg(format!("API `{name}`: {e}"))
}

/// A server's tools and forwarders, ready to serve.
struct Prepared {
    /// The tool set (merged, for several APIs).
    set: ToolSet,
    /// The APIs, when there are several.
    apis: Vec<crate::server::multi::ApiInfo>,
    /// One per API.
    forwarders: Vec<Forwarder>,
    /// Start-up warnings (missing credentials).
    warnings: Vec<String>,
    /// What `--ready-check` probes.
    upstreams: Vec<url::Url>,
    /// Where the API (or each API) is, for the start-up line.
    api_at: String,
    /// `--oauth-proxy`'s authorization server (one API only).
    oauth_proxy: Option<Arc<dyn crate::oauth::authorization::AuthorizationServer>>,
    /// The API whose users sign in through it, when the server serves several.
    oauth_proxy_api: Option<String>,
}

/// The oauth-proxy API's upstream client secret variable (`OPENAPI_MCP_<API>_UPSTREAM_CLIENT_SECRET`)
/// must not be a credential variable of an API's scheme too (API `a_upstream`'s scheme
/// `client_secret` reads the same name): the secret would be sent to that API.
fn check_upstream_secret(apis: &[ApiServing], modes: &[UpstreamAuth]) -> Result<(), UserError> {
    for (api, _) in apis
        .iter()
        .zip(modes)
        .filter(|(_, m)| **m == UpstreamAuth::OAuthProxy)
    {
        let secret =
            crate::server::multi::env_var(&api.name, crate::forward::auth::UPSTREAM_SECRET_ENV);
        for other in apis {
            for (scheme, s) in &other.set.security_schemes {
                if s.env_var_names(scheme)
                    .iter()
                    .any(|v| crate::server::multi::env_var(&other.name, v) == secret)
                {
                    return Err(UserError::msg(format!(
                        "API `{}` (scheme {scheme}) would read {secret}, the upstream client secret of API `{}`: rename one of the APIs",
                        other.name, api.name
                    )));
                }
            }
        }
    }
    Ok(())
}

async fn run(
    prepared: Prepared,
    mode: ToolMode,
    args: &ServeArgs,
    mut serving: Serving,
) -> Result<(), StartError> {
    let Prepared {
        set,
        apis,
        forwarders,
        warnings,
        upstreams,
        api_at,
        oauth_proxy,
        oauth_proxy_api,
    } = prepared;
    let oauth = args.oauth_options()?;
    // OpenTelemetry before anything is observed (its exporter's blocking HTTP client is made
    // off the async workers). The guard flushes the last spans when serving ends.
    let otel = tokio::task::spawn_blocking(crate::observe::otel::init_from_env)
        .await
        .map_err(|e| UserError::msg(format!("OpenTelemetry: {e}")))?
        .map_err(|e| UserError::msg(e.to_string()))?;
    let _otel = OtelGuard(otel);
    let observe = args.observe()?;
    let tool_count = set.tools.len();
    let probe_timeout = timeout_duration(args.timeout)?.min(Duration::from_secs(5));
    let options = server_options(args, mode, observe.clone(), &mut serving)?;
    let server = ProxyServer::with_apis(set, apis, forwarders, options);
    if let Some(audit) = &observe.audit {
        audit.reopen_on_sighup();
    }
    // /metrics on its own listener (the MCP port's only when it is the --listen address).
    // (Port 0 is "any free port": two of them are two listeners.)
    let metrics_on_mcp_port = args.transport == Transport::Http
        && args.listen.port() != 0
        && args.metrics_listen == Some(args.listen);
    // (Served over HTTP: the `metrics` feature has the `http` one.)
    #[cfg(feature = "http")]
    let metrics_task = match (args.metrics_listen, &observe.metrics) {
        (Some(addr), Some(metrics)) if !metrics_on_mcp_port => {
            Some(start_metrics_listener(addr, metrics, &serving.program).await?)
        }
        _ => None,
    };
    let tools_desc = describe_tools(&server, tool_count, args, &warnings);
    if let Some(f) = serving.on_start {
        f(&server);
    }
    let Serving { program, label, .. } = serving;
    match args.transport {
        Transport::Stdio => {
            warn_http_only_options(args);
            eprintln!("{program}: serving {label} ({tools_desc}) over stdio; {api_at}");
            // Over stdio, log lines stay in place: one client's calls come one at a time, and
            // waking the writer thread per call added 20-25 µs at p50 (proxy bench,
            // PROXY_BENCH_ONLY=stdio) where writing in place costs one `write`.
            stdio::serve_stdio(server).await?;
        }
        // Refused at start-up already (`check_features`).
        #[cfg(not(feature = "http"))]
        Transport::Http => {
            let _ = (
                oauth,
                oauth_proxy,
                oauth_proxy_api,
                upstreams,
                probe_timeout,
            );
            let _ = metrics_on_mcp_port;
            return Err(UserError::msg(Feature::Http.missing("--transport http")).into());
        }
        #[cfg(feature = "http")]
        Transport::Http => {
            let mut http = HttpOptions::new(args.listen);
            http.stateless = args.stateless;
            http.auth_token = args.auth_token.clone();
            http.oauth = oauth;
            if let Some(p) = &oauth_proxy {
                http.oauth = Some(oauth_proxy_resource(p, args));
                eprintln!("{program}: {}", p.describe(oauth_proxy_api.as_deref()));
                http.oauth_proxy = Some(Arc::clone(p));
            }
            http.allowed_hosts = args.allowed_host.clone();
            http.allowed_origins = args.allowed_origin.clone();
            http.max_body_bytes = args.max_request_bytes;
            http.rate_limit = args.rate_limit;
            http.connections.max = args.max_connections;
            http.sessions.max = args.max_sessions;
            http.sessions.per_client = args.max_sessions_per_client;
            http.observe = observe.clone();
            http.metrics_on_mcp_port = metrics_on_mcp_port;
            if args.ready_check {
                let readiness = Readiness::not_yet();
                readiness.probe(upstreams, probe_timeout);
                http.readiness = readiness;
            }
            if args.auth_token.is_none()
                && args.oauth_issuer.is_none()
                && oauth_proxy.is_none()
                && !args.listen.ip().is_loopback()
            {
                tracing::warn!(
                    "listening on {} without --auth-token: anyone who can reach this address can call the API with the configured credentials (the Host check only stops browsers' DNS rebinding; a client can send any Host)",
                    args.listen
                );
            }
            let handle = transport::start_http(server, http).await?;
            eprintln!(
                "{program}: serving {label} ({tools_desc}) over Streamable HTTP at http://{}/mcp{}; {api_at}",
                handle.addr,
                if args.stateless { " (stateless)" } else { "" }
            );
            let _queued = QueuedLogs::start();
            let shutdown = handle.shutdown.clone();
            tokio::spawn(async move {
                stop_signal().await;
                shutdown.cancel();
            });
            handle.task.await.map_err(StartError::Task)??;
        }
    }
    #[cfg(feature = "http")]
    if let Some(m) = metrics_task {
        m.shutdown.cancel();
    }
    // The audit log's last batch is written before the process ends.
    if let Some(audit) = observe.audit.clone() {
        let _ = tokio::task::spawn_blocking(move || audit.flush(Duration::from_secs(5))).await;
    }
    Ok(())
}

/// Options that only mean something over HTTP, given with `--transport stdio`: a warning each.
fn warn_http_only_options(args: &ServeArgs) {
    if !args.forward_header.is_empty() {
        tracing::warn!(
            "--forward-header has no effect over stdio (there is no client HTTP request)"
        );
    }
    if args.ready_check {
        tracing::warn!("--ready-check has no effect over stdio (/readyz is served over HTTP)");
    }
}

/// `/metrics` on its own listener (`--metrics-listen` other than the MCP port).
#[cfg(feature = "http")]
async fn start_metrics_listener(
    addr: SocketAddr,
    metrics: &Arc<Metrics>,
    program: &str,
) -> Result<transport::MetricsHandle, StartError> {
    let handle = transport::start_metrics(addr, Arc::clone(metrics)).await?;
    eprintln!("{program}: metrics at http://{}/metrics", handle.addr);
    Ok(handle)
}

/// The resource server's options when this server is its own authorization server (the OAuth
/// proxy): tokens it signed, checked against its own keys.
#[cfg(feature = "http")]
fn oauth_proxy_resource(
    p: &Arc<dyn crate::oauth::authorization::AuthorizationServer>,
    args: &ServeArgs,
) -> OAuthOptions {
    OAuthOptions {
        issuer: p.issuer().to_string(),
        audience: p.resource().to_string(),
        jwks_url: None,
        hide_unauthorized_tools: args.hide_unauthorized_tools,
        scopes_supported: Vec::new(),
        introspection: None,
        jwks: Some(p.jwks().clone()),
    }
}

/// The server's options from the serving options: the tool `mode`, `observe`, and what
/// `serving` brings (its dispatcher is taken).
fn server_options(
    args: &ServeArgs,
    mode: ToolMode,
    observe: Observe,
    serving: &mut Serving,
) -> Result<ServerOptions, StartError> {
    Ok(ServerOptions {
        page_size: args.page_size,
        page_bytes: None,
        max_concurrency: args.max_concurrency,
        dispatcher: serving.dispatcher.take(),
        forward_headers: args.forward_header.clone(),
        mode,
        list_caching: ListCaching::new(
            serving.watched,
            args.auth_token.is_some() || args.oauth_issuer.is_some() || args.oauth_proxy.is_some(),
        ),
        confirm: args.confirm,
        confirm_key: args.confirm_key()?,
        poll: args.poll,
        observe,
        tasks: crate::tasks::from_options(
            args.tasks,
            args.task_store.as_deref(),
            args.task_ttl,
            args.task_after,
            std::env::var_os(crate::forward::auth::STORE_KEY_ENV)
                .as_ref()
                .map(|k| k.as_encoded_bytes()),
        )
        .map_err(UserError::msg)?,
        task_after: args.task_after,
        workflows: serving.workflows.clone(),
    })
}

/// The start-up line's account of the tools (`N tools`, or the operations and the tools they
/// became in another `--mode`); logs the start-up `warnings` and a tool list too long for one
/// page.
fn describe_tools(
    server: &ProxyServer,
    tool_count: usize,
    args: &ServeArgs,
    warnings: &[String],
) -> String {
    let served = server.state().tools().len();
    let tools_desc = if served == tool_count {
        format!("{tool_count} tools")
    } else {
        format!(
            "{tool_count} operations as {served} tools, --mode {}",
            args.mode.name()
        )
    };
    for w in warnings {
        tracing::warn!("{w}");
    }
    let list_bytes = server.state().list_bytes();
    if list_bytes > MAX_PAGE_BYTES {
        tracing::warn!(
            "the tool list is {:.1} MiB: tools/list is served in pages of at most {} MiB (clients on the TypeScript SDK drop stdio messages over 10 MiB); clients that read only the first page see part of the tools; --mode dynamic serves 3 tools, or filter operations (--include-tag, --include-path)",
            list_bytes as f64 / (1 << 20) as f64,
            MAX_PAGE_BYTES >> 20
        );
    }
    tools_desc
}

/// Resolves on Ctrl-C, or on SIGTERM (what Kubernetes, systemd and `docker stop` send): the
/// HTTP server then stops taking connections and ends as on Ctrl-C.
#[cfg(feature = "http")]
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use openapi_mcp_toolset::location::Location;
    use openapi_mcp_toolset::model::{HttpMethod, Route, ToolDef};

    use super::*;

    /// A tool set whose one operation is served from `server`.
    fn set_with_server(server: &str) -> ToolSet {
        let mut route = Route::new(HttpMethod::Get, "/x");
        route.server = Some(server.to_string());
        let tool = rmcp::model::Tool::new("op", "", Arc::new(Default::default()));
        ToolSet {
            title: "T".into(),
            version: "1".into(),
            description: None,
            tag_descriptions: Vec::new(),
            base_url: Some("https://own.example/api".into()),
            security_schemes: Vec::new(),
            tools: vec![Arc::new(ToolDef::new(
                tool,
                route,
                None,
                Vec::new(),
                Location::default(),
            ))],
        }
    }

    /// The credential mode of each API of several: one oauth-proxy API at most (both named),
    /// `--oauth-proxy` naming none, token exchange next to it or without its issuer, a mode's
    /// keys in another mode; the error says which key of which entry (or the top level's).
    #[test]
    fn each_apis_credential_mode_is_checked_with_the_others() {
        let api = |name: &'static str, mode: Option<UpstreamAuth>| ApiAuth {
            name,
            upstream_auth: mode,
            upstream_client_id: mode == Some(UpstreamAuth::OAuthProxy),
            ..ApiAuth::default()
        };
        let proxy = ServeArgs {
            transport: Transport::Http,
            oauth_proxy: Some("https://mcp.example".into()),
            ..ServeArgs::default()
        };
        let exchange = ServeArgs {
            transport: Transport::Http,
            oauth_issuer: Some("https://as.example".into()),
            oauth_client_id: Some("rs".into()),
            ..ServeArgs::default()
        };
        let oauth_proxy = Some(UpstreamAuth::OAuthProxy);
        let token_exchange = Some(UpstreamAuth::TokenExchange);
        // Fine: one API through the proxy and one static; one exchanging and one static.
        assert_eq!(
            check_api_auth(&proxy, &[api("a", oauth_proxy), api("b", None)]),
            Ok(())
        );
        assert_eq!(
            check_api_auth(&exchange, &[api("a", token_exchange), api("b", None)]),
            Ok(())
        );
        let err = |args: &ServeArgs, apis: &[ApiAuth<'_>]| check_api_auth(args, apis).unwrap_err();
        let e = err(
            &proxy,
            &[api("a", oauth_proxy), api("b", None), api("c", oauth_proxy)],
        );
        assert_eq!((e.api, e.key), (Some(2), "upstream-auth"));
        assert!(
            e.message.contains("`a` (apis[0]) and `c` (apis[2])")
                && e.message.contains("one API at most"),
            "{}",
            e.message
        );
        // Both from the top-level default: the top level's key.
        let all = ServeArgs {
            upstream_auth: UpstreamAuth::OAuthProxy,
            ..proxy.clone()
        };
        let both = [
            ApiAuth {
                upstream_client_id: true,
                ..api("a", None)
            },
            ApiAuth {
                upstream_client_id: true,
                ..api("b", None)
            },
        ];
        let e = err(&all, &both);
        assert_eq!((e.api, e.key), (None, "upstream-auth"));
        let e = err(&proxy, &[api("a", None), api("b", None)]);
        assert_eq!((e.api, e.key), (None, "oauth-proxy"));
        let e = err(&exchange, &[api("a", oauth_proxy)]);
        assert_eq!((e.api, e.key), (Some(0), "upstream-auth"));
        assert!(e.message.contains("`oauth-proxy: URL`"), "{}", e.message);
        let e = err(&proxy, &[api("a", oauth_proxy), api("b", token_exchange)]);
        assert_eq!((e.api, e.key), (Some(1), "upstream-auth"));
        assert!(
            e.message.contains("API `a` is in oauth-proxy mode"),
            "{}",
            e.message
        );
        let e = err(&ServeArgs::default(), &[api("a", token_exchange)]);
        assert!(
            e.message
                .contains("needs `transport: http`, `oauth-issuer`"),
            "{}",
            e.message
        );
        let e = err(
            &proxy,
            &[ApiAuth {
                upstream_client_id: false,
                ..api("a", oauth_proxy)
            }],
        );
        assert!(
            e.message.contains("OPENAPI_MCP_A_UPSTREAM_CLIENT_SECRET"),
            "{}",
            e.message
        );
        for (key, entry) in [
            (
                "upstream-client-id",
                ApiAuth {
                    upstream_client_id: true,
                    ..api("b", None)
                },
            ),
            (
                "oauth-proxy-scheme",
                ApiAuth {
                    oauth_proxy_scheme: true,
                    ..api("b", None)
                },
            ),
            (
                "token-exchange-audience",
                ApiAuth {
                    token_exchange_audience: true,
                    ..api("b", None)
                },
            ),
        ] {
            let e = err(&proxy, &[api("a", oauth_proxy), entry]);
            assert_eq!((e.api, e.key), (Some(1), key));
            assert!(
                e.message.contains("(this API's is static)"),
                "{}",
                e.message
            );
        }
    }

    /// The oauth-proxy API's client secret variable cannot be another API's credential
    /// variable (it would be sent to that API).
    #[test]
    fn the_upstream_client_secret_is_no_other_apis_credential() {
        use openapi_mcp_toolset::model::SecurityScheme;
        let api = |name: &str, scheme: &str| {
            let mut set = set_with_server("https://own.example/api");
            set.security_schemes = vec![(scheme.to_string(), SecurityScheme::Bearer)];
            ApiServing {
                name: name.into(),
                set,
                options: ApiOptions::default(),
            }
        };
        let apis = [api("a", "bearer"), api("a_upstream", "client_secret")];
        let proxied = [UpstreamAuth::OAuthProxy, UpstreamAuth::Static];
        let err = check_upstream_secret(&apis, &proxied)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("API `a_upstream` (scheme client_secret) would read OPENAPI_MCP_A_UPSTREAM_CLIENT_SECRET, the upstream client secret of API `a`"),
            "{err}"
        );
        assert!(check_upstream_secret(&apis, &[UpstreamAuth::Static; 2]).is_ok());
        let others = [api("a", "bearer"), api("b", "client_secret")];
        assert!(check_upstream_secret(&others, &proxied).is_ok());
    }

    /// One API without --base-url: the spec's operation-level servers get credentials. In a
    /// server of several APIs, no host but the API's own base URL origin and its entry's
    /// credential origins does: not another API's base URL, not a host only the spec names.
    #[test]
    fn an_operation_server_on_another_apis_origin_gets_no_credentials() {
        let base = url::Url::parse("https://own.example/api").unwrap();
        let args = ServeArgs::default();
        let spec_host = set_with_server("https://files.own-cdn.example/v1");
        assert_eq!(
            args.credential_origins(&spec_host, &base, &[], None)
                .unwrap(),
            ["https://files.own-cdn.example"]
        );
        assert!(
            args.credential_origins(&spec_host, &base, &[], Some("own"))
                .unwrap()
                .is_empty(),
            "with apis:, a host only the API's own spec names gets no credentials"
        );
        let listed = ServeArgs {
            credential_origin: vec!["https://files.own-cdn.example".into()],
            ..ServeArgs::default()
        };
        assert_eq!(
            listed
                .credential_origins(&spec_host, &base, &[], Some("own"))
                .unwrap(),
            ["https://files.own-cdn.example"]
        );
        let other_api = set_with_server("https://other.example/v2");
        let others = ["https://other.example".to_string()];
        assert!(
            args.credential_origins(&other_api, &base, &others, Some("own"))
                .unwrap()
                .is_empty()
        );
        let named = ServeArgs {
            credential_origin: vec!["https://other.example".into()],
            ..ServeArgs::default()
        };
        assert_eq!(
            named
                .credential_origins(&other_api, &base, &others, Some("own"))
                .unwrap(),
            ["https://other.example"]
        );
    }
}
