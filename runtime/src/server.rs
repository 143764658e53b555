//! The MCP server: serves a tool set and forwards each `tools/call` to the API.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
    ErrorCode, Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::forward::{CallScope, Forwarder};
use crate::model::ToolSet;
use crate::validate::{self, LazyValidator};

/// A future returned by a [`Dispatcher`].
pub type HandlerFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = CallToolResult> + Send + 'a>>;

/// Custom per-tool handlers (the generated crate's typed handlers): `Some` handles the call,
/// `None` falls back to the plain forwarder. Validation, limits, cancellation and logging stay
/// in the server either way.
pub type Dispatcher = Arc<
    dyn for<'a> Fn(
            &'a str,
            &'a Forwarder,
            &'a crate::model::Route,
            serde_json::Map<String, Value>,
        ) -> Option<HandlerFuture<'a>>
        + Send
        + Sync,
>;

/// Options of the MCP side of the proxy.
#[derive(Clone, Default)]
pub struct ServerOptions {
    /// Tools per `tools/list` page (all in one page when `None`).
    pub page_size: Option<usize>,
    /// Upstream calls in flight at once (unlimited when `None`).
    pub max_concurrency: Option<usize>,
    pub dispatcher: Option<Dispatcher>,
    /// Headers of the client's HTTP request (Streamable HTTP) passed on upstream, by name
    /// (`--forward-header`). Nothing of the client's request is forwarded otherwise.
    pub forward_headers: Vec<String>,
}

impl std::fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerOptions")
            .field("page_size", &self.page_size)
            .field("max_concurrency", &self.max_concurrency)
            .field("dispatcher", &self.dispatcher.is_some())
            .field("forward_headers", &self.forward_headers)
            .finish()
    }
}

/// A tool set ready to serve: tools in list order, a name index, and lazily compiled validators.
pub struct ToolState {
    pub set: ToolSet,
    tools: Vec<Tool>,
    index: HashMap<String, usize>,
    validators: Vec<LazyValidator>,
}

impl ToolState {
    pub fn new(set: ToolSet) -> Self {
        let tools: Vec<Tool> = set.tools.iter().map(|t| t.tool.clone()).collect();
        let index = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.to_string(), i))
            .collect();
        let validators = tools.iter().map(|_| LazyValidator::default()).collect();
        Self {
            set,
            tools,
            index,
            validators,
        }
    }
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }
}

struct Inner {
    state: RwLock<Arc<ToolState>>,
    forwarder: Forwarder,
    opts: ServerOptions,
    limiter: Option<Semaphore>,
    peers: Mutex<Vec<Peer<RoleServer>>>,
}

/// The proxy's MCP server. Cheap to clone: every session of the HTTP transport shares one.
#[derive(Clone)]
pub struct ProxyServer {
    inner: Arc<Inner>,
}

impl ProxyServer {
    pub fn new(set: ToolSet, forwarder: Forwarder, opts: ServerOptions) -> Self {
        let limiter = opts.max_concurrency.map(|n| Semaphore::new(n.max(1)));
        Self {
            inner: Arc::new(Inner {
                state: RwLock::new(Arc::new(ToolState::new(set))),
                forwarder,
                opts,
                limiter,
                peers: Mutex::new(Vec::new()),
            }),
        }
    }

    pub fn state(&self) -> Arc<ToolState> {
        self.inner
            .state
            .read()
            .map(|s| Arc::clone(&s))
            .unwrap_or_else(|p| Arc::clone(&p.into_inner()))
    }

    /// Compiles every argument validator in the background, so the first calls do not pay for it.
    /// The `--forward-header` headers of the client's HTTP request, when it came over HTTP.
    fn forwarded_headers(&self, context: &RequestContext<RoleServer>) -> Vec<(String, String)> {
        let names = &self.inner.opts.forward_headers;
        if names.is_empty() {
            return Vec::new();
        }
        let Some(parts) = context.extensions.get::<http::request::Parts>() else {
            return Vec::new();
        };
        names
            .iter()
            .filter_map(|n| {
                let v = parts.headers.get(n.as_str())?.to_str().ok()?;
                Some((n.clone(), v.to_string()))
            })
            .collect()
    }

    pub fn warm_up(&self) {
        let state = self.state();
        tokio::task::spawn_blocking(move || {
            for (tool, v) in state.tools.iter().zip(&state.validators) {
                let _ = v.get(&tool.input_schema);
            }
        });
    }

    /// Replaces the tool set (`--watch`); connected clients are told when the list changed.
    /// Returns whether it changed.
    pub async fn replace_tools(&self, set: ToolSet) -> bool {
        let new = ToolState::new(set);
        let changed = self.state().tools != new.tools;
        if let Ok(mut s) = self.inner.state.write() {
            *s = Arc::new(new);
        }
        if changed {
            let peers: Vec<Peer<RoleServer>> = match self.inner.peers.lock() {
                Ok(mut p) => {
                    p.retain(|peer| !peer.is_transport_closed());
                    p.clone()
                }
                Err(_) => Vec::new(),
            };
            for peer in peers {
                let _ = peer.notify_tool_list_changed().await;
            }
            self.warm_up();
        }
        changed
    }
}

impl ServerHandler for ProxyServer {
    fn get_info(&self) -> ServerConfig {
        let state = self.state();
        let set = &state.set;
        let mut instructions = format!(
            "Tools for the {} API (version {}): each tool is one HTTP operation; call it with the arguments its inputSchema describes.",
            set.title, set.version
        );
        if let Some(d) = set
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            instructions.push_str("\n\n");
            instructions.extend(d.chars().take(600));
            if d.chars().count() > 600 {
                instructions.push('…');
            }
        }
        let name: String = crate::naming::snake(&set.title);
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(
            Implementation::new(
                if name.is_empty() {
                    "openapi-mcp".to_string()
                } else {
                    name
                },
                set.version.clone(),
            )
            .with_title(set.title.clone()),
        )
        .with_instructions(instructions)
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    /// The initialize handshake is the protocol we speak (2025-11-25 and older): clients that
    /// probe with `server/discover` get "method not found" and fall back to `initialize`.
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "server/discover",
            None,
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Ok(mut peers) = self.inner.peers.lock() {
            peers.retain(|p| !p.is_transport_closed());
            peers.push(context.peer);
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let state = self.state();
        let all = state.tools();
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|s| *s <= all.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("invalid cursor {c:?}"), None))?,
        };
        let end = match self.inner.opts.page_size {
            Some(n) => (start + n.max(1)).min(all.len()),
            None => all.len(),
        };
        let mut result = ListToolsResult::with_all_items(all[start..end].to_vec());
        if end < all.len() {
            result.next_cursor = Some(end.to_string());
        }
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let state = self.state();
        state.index.get(name).map(|&i| state.tools[i].clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let state = self.state();
        let Some(&i) = state.index.get(request.name.as_ref()) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                Some(serde_json::json!({ "tool": request.name })),
            ));
        };
        let def = &state.set.tools[i];
        let args = request.arguments.unwrap_or_default();
        if let Err(problems) = validate::check(&state.validators[i], &def.tool.input_schema, &args)
        {
            let text = format!(
                "Invalid arguments for `{}`; nothing was sent to the API. Fix these and call again:\n- {}",
                def.tool.name,
                problems.join("\n- ")
            );
            return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
        }
        let _permit = match &self.inner.limiter {
            Some(s) => Some(
                s.acquire()
                    .await
                    .map_err(|_| ErrorData::internal_error("server is shutting down", None))?,
            ),
            None => None,
        };
        let started = Instant::now();
        let route = &def.route;
        let fwd = &self.inner.forwarder;
        let call = async {
            let custom = self
                .inner
                .opts
                .dispatcher
                .as_ref()
                .and_then(|d| d(&def.tool.name, fwd, route, args.clone()));
            match custom {
                Some(f) => f.await,
                None => fwd.call(route, &args).await,
            }
        };
        let forwarded = self.forwarded_headers(&context);
        let scoped = CallScope::new(forwarded).run(call);
        let (result, status) = tokio::select! {
            r = scoped => r,
            _ = context.ct.cancelled() => {
                tracing::info!(tool = %def.tool.name, method = route.method.as_str(), path = %route.path, "cancelled by the client");
                return Ok(CallToolResult::error(vec![ContentBlock::text("cancelled by the client")]).into());
            }
        };
        tracing::info!(
            tool = %def.tool.name,
            method = route.method.as_str(),
            path = %route.path,
            status = status.map(i64::from).unwrap_or(-1),
            ok = !result.is_error.unwrap_or(false),
            ms = started.elapsed().as_millis() as u64,
            "call"
        );
        Ok(result.into())
    }
}

/// Reads `Value` arguments without cloning when they are already an object.
pub fn as_object(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}
