//! The MCP server: serves a tool set and forwards each `tools/call` to the API.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    Implementation, ListPromptsRequestMethod, ListPromptsResult,
    ListResourceTemplatesRequestMethod, ListResourceTemplatesResult, ListResourcesRequestMethod,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig, ServerNotification, SubscriptionFilter, Tool,
    ToolListChangedNotification,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::confirm::{Confirm, Confirmer, Gate, Retry};
use crate::dynamic::{self, Meta, SearchIndex, ToolMode};
use crate::forward::{CallReport, CallScope, Exchange, Forwarder};
use crate::multi::{ApiInfo, MergeError};
use crate::observe::{AuditEntry, Caller, Observe, Outcome};
use openapi_mcp_toolset::model::{ToolDef, ToolSet};
use openapi_mcp_toolset::validate::{self, LazyValidator};

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
            &'a openapi_mcp_toolset::model::Route,
            serde_json::Map<String, Value>,
        ) -> Option<HandlerFuture<'a>>
        + Send
        + Sync,
>;

/// Options of the MCP side of the proxy.
#[derive(Clone, Default)]
pub struct ServerOptions {
    /// Tools per `tools/list` page (all in one page when `None`, within `page_bytes`).
    pub page_size: Option<usize>,
    /// Serialized bytes of the tools of one `tools/list` page at most ([`MAX_PAGE_BYTES`] when
    /// `None`); a page always holds at least one tool.
    pub page_bytes: Option<usize>,
    /// Upstream calls in flight at once (unlimited when `None`).
    pub max_concurrency: Option<usize>,
    pub dispatcher: Option<Dispatcher>,
    /// Headers of the client's HTTP request (Streamable HTTP) passed on upstream, by name
    /// (`--forward-header`). Nothing of the client's request is forwarded otherwise.
    pub forward_headers: Vec<String>,
    /// One tool per operation (default), only the discovery tools (`dynamic`), or pinned
    /// operations plus the discovery tools (`hybrid`).
    pub mode: ToolMode,
    /// The caching hints of `tools/list` (2026-07-28, SEP-2549).
    pub list_caching: ListCaching,
    /// Which calls need the user's consent first (`--confirm`).
    pub confirm: Confirm,
    /// Follow `202 Accepted` answers to their end within `--timeout` (`--poll`).
    pub poll: bool,
    /// The key that seals 2026-era confirmations (at least 32 bytes; one per process when
    /// `None`). Servers behind one load balancer need the same key.
    pub confirm_key: Option<Arc<[u8]>>,
    /// Metrics and the audit log (both off by default).
    pub observe: Observe,
}

/// How long a client may keep the tool list, and whether shared intermediaries may: the hints
/// `tools/list` carries (`ttlMs`, `cacheScope`). They follow from what can change the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListCaching {
    pub ttl: std::time::Duration,
    /// Only the client that asked may cache it (`private`), not shared caches (`public`).
    pub private: bool,
    /// The list can change while serving (`--watch`): the `listChanged` capability is declared
    /// and clients are notified. Without it nothing changes the list, and nothing is promised.
    pub changes: bool,
}

impl ListCaching {
    /// A tool set read once at start-up changes only when the server restarts.
    pub const FIXED_TTL: std::time::Duration = std::time::Duration::from_secs(3600);
    /// `--watch` replaces the tool set when the spec file changes (polled every 0.5 s; clients
    /// that listen are also notified).
    pub const WATCHED_TTL: std::time::Duration = std::time::Duration::from_secs(10);

    /// The hints for a server whose tool set is `watched` (or fixed), behind `authenticated`
    /// access (a bearer token or OAuth): a list that only authorized callers may read is not for
    /// shared caches.
    pub fn new(watched: bool, authenticated: bool) -> Self {
        Self {
            ttl: if watched {
                Self::WATCHED_TTL
            } else {
                Self::FIXED_TTL
            },
            private: authenticated,
            changes: watched,
        }
    }
}

impl Default for ListCaching {
    fn default() -> Self {
        Self::new(false, false)
    }
}

impl std::fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerOptions")
            .field("page_size", &self.page_size)
            .field("page_bytes", &self.page_bytes)
            .field("max_concurrency", &self.max_concurrency)
            .field("dispatcher", &self.dispatcher.is_some())
            .field("forward_headers", &self.forward_headers)
            .field("mode", &self.mode)
            .field("list_caching", &self.list_caching)
            .field("confirm", &self.confirm)
            .field("poll", &self.poll)
            .field("confirm_key", &self.confirm_key.as_ref().map(|_| "<set>"))
            .field("observe", &self.observe)
            .finish()
    }
}

/// Default bytes of one `tools/list` page. The TypeScript SDK's stdio transport (1.30 and
/// later, the SDK of Claude Desktop, Claude Code and Cursor) closes the connection on any
/// message over 10 MiB, so a large API's whole list in one message (Kubernetes: 24 MiB) would
/// end the session; past this size the list is served in pages with `nextCursor`.
pub const MAX_PAGE_BYTES: usize = 8 << 20;

/// The discovery tools of `dynamic`/`hybrid` mode: their search index (built once per tool set)
/// and validators of their own arguments.
struct Discovery {
    index: SearchIndex,
    /// Code mode: `execute` in the place of `call_operation`.
    code: bool,
    validators: [LazyValidator; 3],
    tools: Vec<Tool>,
}

/// A tool set ready to serve: the tools listed (in list order), a name index, the search index of
/// the discovery tools, and lazily compiled validators (one per operation).
pub struct ToolState {
    pub set: ToolSet,
    /// What `tools/list` serves.
    tools: Vec<Tool>,
    /// Serialized size of each of `tools` (for pages of bounded bytes).
    sizes: Vec<usize>,
    /// Operations served as their own tool: name -> operation index.
    index: HashMap<String, usize>,
    /// Where each operation served as its own tool is in `tools` (by operation index; `u32::MAX`
    /// for the others): `get_tool`, which rmcp asks on every 2026-era `tools/call` (for SEP-2243
    /// header checks), answers from the served tool instead of rebuilding its schema.
    listed_at: Vec<u32>,
    /// Every operation: name -> operation index (for `describe_operation` / `call_operation`).
    ops: HashMap<String, usize>,
    validators: Vec<LazyValidator>,
    /// Each operation's selection argument (`_select`), for those with JSON results.
    select_args: Vec<Option<String>>,
    /// Validators of the operations' output schemas (structured results are checked).
    output_validators: Vec<LazyValidator>,
    discovery: Option<Discovery>,
    /// The server's instructions (built once: `initialize` and `server/discover` serve them).
    instructions: String,
    /// What `get_info` answers for this tool set, made on first use: rmcp asks for it on every
    /// stateless request (2026-07-28 requests and `--stateless` 2025-era ones).
    info: std::sync::OnceLock<ServerConfig>,
    /// The APIs served, when there are several (`apis:`): [`ToolDef::api`] indexes it. Empty
    /// for one API.
    apis: Vec<ApiInfo>,
    /// The API names as metric labels and audit fields (shared, not copied per call).
    api_names: Vec<Arc<str>>,
}

impl ToolState {
    /// One tool per operation.
    pub fn new(set: ToolSet) -> Self {
        Self::with_mode(set, &ToolMode::Tools)
    }

    /// The tool set exposed as `mode` says; builds the search index for the discovery tools.
    pub fn with_mode(set: ToolSet, mode: &ToolMode) -> Self {
        Self::with_apis(set, mode, Vec::new())
    }

    /// [`ToolState::with_mode`] for the merged tool set of several APIs ([`crate::multi::merge`]):
    /// search results, descriptions, instructions, metrics and the audit log name each
    /// operation's API.
    pub fn with_apis(set: ToolSet, mode: &ToolMode, apis: Vec<ApiInfo>) -> Self {
        let apis = if apis.len() > 1 { apis } else { Vec::new() };
        let ops: HashMap<String, usize> = set
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name().to_string(), i))
            .collect();
        let validators = set.tools.iter().map(|_| LazyValidator::default()).collect();
        let output_validators = set.tools.iter().map(|_| LazyValidator::default()).collect();
        let direct: Vec<usize> = match mode {
            ToolMode::Tools => (0..set.tools.len()).collect(),
            ToolMode::Dynamic | ToolMode::Code(_) => Vec::new(),
            ToolMode::Hybrid { pins } => (0..set.tools.len())
                .filter(|&i| dynamic::is_pinned(&set.tools[i], pins))
                .collect(),
        };
        let rest: Vec<usize> = match mode {
            ToolMode::Tools => Vec::new(),
            _ => (0..set.tools.len())
                .filter(|i| !direct.contains(i))
                .collect(),
        };
        let discovery = (!matches!(mode, ToolMode::Tools)
            && (!rest.is_empty() || direct.is_empty()))
        .then(|| {
            let index = SearchIndex::build_with_tags(
                &set.tools,
                rest.iter().copied(),
                &set.tag_descriptions,
            );
            let mut tools = match mode {
                ToolMode::Code(limits) => crate::code::meta_tools(&set.title, index.len(), limits),
                _ => dynamic::meta_tools(&set.title, index.len()),
            };
            if !apis.is_empty()
                && let Some(search) = tools.first_mut()
            {
                let list: Vec<String> = apis
                    .iter()
                    .map(|a| format!("{} ({})", a.name, a.title))
                    .collect();
                let d = search.description.get_or_insert_default();
                d.to_mut().push_str(&format!(
                    " The operations are of several APIs: {}; each result names its `api`.",
                    list.join(", ")
                ));
            }
            Discovery {
                tools,
                code: matches!(mode, ToolMode::Code(_)),
                index,
                validators: Default::default(),
            }
        });
        let select_args: Vec<Option<String>> = set.tools.iter().map(|d| selection_arg(d)).collect();
        let mut tools: Vec<Tool> = Vec::new();
        let mut index = HashMap::new();
        let mut listed_at = vec![u32::MAX; set.tools.len()];
        for i in direct {
            let t = set.tools[i].tool();
            if discovery.is_some() && Meta::from_name(&t.name, false).is_some() {
                tracing::warn!(
                    "operation tool `{}` has the name of a discovery tool; reach it with {}",
                    t.name,
                    dynamic::CALL
                );
                continue;
            }
            index.insert(t.name.to_string(), i);
            listed_at[i] = u32::try_from(tools.len()).unwrap_or(u32::MAX);
            tools.push(with_selection(t, select_args[i].as_deref()));
        }
        if let Some(d) = &discovery {
            tools.extend(d.tools.iter().cloned());
        }
        let sizes: Vec<usize> = tools
            .iter()
            .map(openapi_mcp_toolset::model::json_size)
            .collect();
        let instructions = crate::instructions::build_for(
            &set,
            &apis,
            &match &discovery {
                None => crate::instructions::Exposure::Tools,
                Some(d) if d.code => crate::instructions::Exposure::Code {
                    searchable: d.index.len(),
                },
                Some(d) => crate::instructions::Exposure::Discovery {
                    searchable: d.index.len(),
                    direct: index.len(),
                },
            },
        );
        Self {
            set,
            tools,
            sizes,
            index,
            listed_at,
            ops,
            validators,
            select_args,
            output_validators,
            discovery,
            instructions,
            info: std::sync::OnceLock::new(),
            api_names: apis.iter().map(|a| Arc::from(a.name.as_str())).collect(),
            apis,
        }
    }

    /// The APIs served, when there are several (empty for one).
    pub fn apis(&self) -> &[ApiInfo] {
        &self.apis
    }

    /// The name of `def`'s API when several are served (the `api` metric label).
    pub fn api_name(&self, def: &ToolDef) -> Option<&Arc<str>> {
        self.api_names.get(def.api)
    }

    /// The audit log's `api` of a call of `def` (none: a call of no operation): the API's name
    /// when several are served, else the spec's title.
    pub fn audit_api(&self, def: Option<&ToolDef>) -> Arc<str> {
        match def.and_then(|d| self.api_name(d)) {
            Some(name) => Arc::clone(name),
            None if !self.api_names.is_empty() && def.is_none() => {
                Arc::from(self.api_names.join(","))
            }
            None => Arc::from(self.set.title.as_str()),
        }
    }

    /// The tools `tools/list` serves.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Serialized bytes of the whole tools array `tools/list` serves.
    pub fn list_bytes(&self) -> usize {
        self.sizes.iter().map(|s| s + 1).sum::<usize>() + 1
    }

    /// End (exclusive) of the `tools/list` page that starts at tool `start`: at most
    /// `max_tools` tools and `max_bytes` serialized bytes, and at least one tool.
    pub fn page_end(&self, start: usize, max_tools: Option<usize>, max_bytes: usize) -> usize {
        let last = max_tools
            .map_or(self.tools.len(), |n| start.saturating_add(n.max(1)))
            .min(self.tools.len());
        let mut end = start;
        let mut bytes = 0;
        while end < last {
            let size = self.sizes[end] + 1;
            if end > start && bytes + size > max_bytes {
                break;
            }
            bytes += size;
            end += 1;
        }
        end
    }

    /// Operations reachable through the discovery tools (searchable), if they are served.
    pub fn search_index(&self) -> Option<&SearchIndex> {
        self.discovery.as_ref().map(|d| &d.index)
    }
}

struct Inner {
    state: RwLock<Arc<ToolState>>,
    /// One per API, in API order ([`ToolDef::api`]); never empty.
    forwarders: Vec<Forwarder>,
    opts: ServerOptions,
    limiter: Option<Semaphore>,
    /// 2025-era clients (initialized sessions): told of list changes by notification.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// The `--confirm` gate (none when every call is sent).
    confirmer: Option<Result<Confirmer, rmcp::model::RequestStateError>>,
    /// 2026-era clients: their open `subscriptions/listen` streams.
    listeners: Mutex<Vec<(u64, SubscriptionSink)>>,
    /// Slots of `execute` scripts running at once (code mode).
    scripts: Semaphore,
}

/// The proxy's MCP server. Cheap to clone: every session of the HTTP transport shares one.
#[derive(Clone)]
pub struct ProxyServer {
    inner: Arc<Inner>,
}

impl ProxyServer {
    pub fn new(set: ToolSet, forwarder: Forwarder, opts: ServerOptions) -> Self {
        Self::with_apis(set, Vec::new(), vec![forwarder], opts)
    }

    /// A server of several APIs: `set` is their merged tool set ([`crate::multi::merge`]),
    /// `apis` describe them and `forwarders` send each one's calls (the same order; a tool's
    /// [`ToolDef::api`] picks its API's). With one forwarder it is [`ProxyServer::new`].
    pub fn with_apis(
        set: ToolSet,
        apis: Vec<ApiInfo>,
        forwarders: Vec<Forwarder>,
        opts: ServerOptions,
    ) -> Self {
        assert!(
            !forwarders.is_empty(),
            "a server needs a forwarder per API, at least one"
        );
        let limiter = opts.max_concurrency.map(|n| Semaphore::new(n.max(1)));
        // serve() checks the key before it gets here; should making the gate still fail, the
        // calls it covers fail closed (nothing is sent).
        let confirmer = (opts.confirm != Confirm::None)
            .then(|| Confirmer::new(opts.confirm, opts.confirm_key.as_deref()));
        Self {
            inner: Arc::new(Inner {
                state: RwLock::new(Arc::new(ToolState::with_apis(set, &opts.mode, apis))),
                forwarders,
                opts,
                limiter,
                confirmer,
                peers: Mutex::new(Vec::new()),
                listeners: Mutex::new(Vec::new()),
                scripts: Semaphore::new(crate::code::MAX_SCRIPTS),
            }),
        }
    }

    /// The OAuth scopes calling `name` needs (`Route::oauth_scopes`); for `call_operation`,
    /// those of the operation it names; none for `execute`, whose `api.*` calls are checked one
    /// by one. `None`: no such tool.
    pub fn required_scopes(
        &self,
        name: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
    ) -> Option<Vec<Vec<String>>> {
        let state = self.state();
        if let Some(d) = &state.discovery
            && let Some(meta) = Meta::from_name(name, d.code)
        {
            if meta != Meta::Call {
                return Some(Vec::new());
            }
            let op = arguments?.get("name")?.as_str()?;
            let &i = state.ops.get(op)?;
            return Some(state.set.tools[i].route.oauth_scopes.clone());
        }
        let &i = state.index.get(name)?;
        Some(state.set.tools[i].route.oauth_scopes.clone())
    }

    pub fn state(&self) -> Arc<ToolState> {
        self.inner
            .state
            .read()
            .map(|s| Arc::clone(&s))
            .unwrap_or_else(|p| Arc::clone(&p.into_inner()))
    }

    /// Metrics and the audit log of this server.
    pub fn observe(&self) -> &Observe {
        &self.inner.opts.observe
    }

    /// The forwarder of `def`'s API.
    fn forwarder_of(&self, def: &ToolDef) -> &Forwarder {
        self.inner
            .forwarders
            .get(def.api)
            .unwrap_or(&self.inner.forwarders[0])
    }

    /// Whether `tools/list` serves a tool of this name (an operation's or a discovery tool).
    pub fn has_tool(&self, name: &str) -> bool {
        let state = self.state();
        state.index.contains_key(name)
            || state
                .discovery
                .as_ref()
                .is_some_and(|d| Meta::from_name(name, d.code).is_some())
    }

    /// A reload of the spec failed (`--watch`): the previous tools stay (counted in the metrics).
    pub fn reload_failed(&self) {
        if let Some(m) = &self.inner.opts.observe.metrics {
            m.reloaded(false);
        }
    }

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

    /// Compiles every argument validator in the background, so the first calls do not pay for it.
    pub fn warm_up(&self) {
        let state = self.state();
        tokio::task::spawn_blocking(move || {
            for (def, v) in state.set.tools.iter().zip(&state.validators) {
                let _ = v.get(&def.tool().input_schema);
            }
        });
    }

    /// Replaces the tool set (`--watch`); connected clients are told when the list changed.
    /// Returns whether it changed.
    pub async fn replace_tools(&self, set: ToolSet) -> bool {
        if let Some(m) = &self.inner.opts.observe.metrics {
            m.reloaded(true);
        }
        let new = ToolState::with_mode(set, &self.inner.opts.mode);
        self.install(new).await
    }

    /// Replaces the tools of API `api` (`--watch` with several APIs) with `set`'s, the other
    /// APIs' tools kept. A reload whose names collide with another API's keeps the previous
    /// tools and says why. Returns whether the list changed.
    pub async fn replace_api_tools(&self, api: usize, set: ToolSet) -> Result<bool, MergeError> {
        let old = self.state();
        let mut parts: Vec<(ApiInfo, Vec<Arc<ToolDef>>)> = old
            .apis
            .iter()
            .map(|info| (info.clone(), Vec::new()))
            .collect();
        for def in &old.set.tools {
            if let Some((_, tools)) = parts.get_mut(def.api) {
                tools.push(Arc::clone(def));
            }
        }
        let Some(slot) = parts.get_mut(api) else {
            return Ok(false);
        };
        let token_scopes = slot.0.token_scopes;
        *slot = ApiInfo::split(&slot.0.name, set);
        slot.0.token_scopes = token_scopes;
        let merged = crate::multi::merge(parts);
        let (set, infos) = match merged {
            Ok(m) => m,
            Err(e) => {
                self.reload_failed();
                return Err(e);
            }
        };
        if let Some(m) = &self.inner.opts.observe.metrics {
            m.reloaded(true);
        }
        let new = ToolState::with_apis(set, &self.inner.opts.mode, infos);
        Ok(self.install(new).await)
    }

    /// Serves `new` from now on; connected clients are told when the list changed.
    async fn install(&self, new: ToolState) -> bool {
        let old = self.state();
        // In dynamic mode the listed tools barely change; what they reach does.
        let changed = old.tools != new.tools
            || (new.discovery.is_some()
                && (old.set.tools.len() != new.set.tools.len()
                    || !old
                        .set
                        .tools
                        .iter()
                        .zip(&new.set.tools)
                        .all(|(a, b)| a.serves_same_tool(b))));
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
            let listeners: Vec<SubscriptionSink> = match self.inner.listeners.lock() {
                Ok(l) => l.iter().map(|(_, s)| s.clone()).collect(),
                Err(_) => Vec::new(),
            };
            for sink in listeners {
                let changed = ServerNotification::ToolListChangedNotification(
                    ToolListChangedNotification::default(),
                );
                let _ = sink.send(changed).await;
            }
            self.warm_up();
        }
        changed
    }
}

/// The server's description of itself for `state`: name and title from the spec, the tools
/// capability (with `listChanged` when the list can change), the instructions.
fn server_info(state: &ToolState, list_changes: bool) -> ServerConfig {
    let set = &state.set;
    let name: String = openapi_mcp_toolset::naming::snake(&set.title);
    let capabilities = if list_changes {
        ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build()
    } else {
        ServerCapabilities::builder().enable_tools().build()
    };
    ServerConfig::new(capabilities)
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
        .with_instructions(state.instructions.clone())
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

impl ServerHandler for ProxyServer {
    fn get_info(&self) -> ServerConfig {
        let state = self.state();
        state
            .info
            .get_or_init(|| server_info(&state, self.inner.opts.list_caching.changes))
            .clone()
    }

    /// Both eras: 2025-11-25 and older through `initialize` (sessions or `--stateless`), and
    /// 2026-07-28 per request (`server/discover`, `_meta` on every request).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let state = self.state();
        let all = state.tools();
        // --hide-unauthorized-tools: only the tools this token may call, in one page.
        if let Some(claims) = claims_of(&context).filter(|c| c.hide_unauthorized_tools) {
            let shown: Vec<Tool> = all
                .iter()
                .filter(|t| {
                    self.required_scopes(&t.name, None)
                        .is_none_or(|r| claims.allows(&r))
                })
                .cloned()
                .collect();
            return Ok(ListToolsResult::with_all_items(shown));
        }
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|s| *s <= all.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("invalid cursor {c:?}"), None))?,
        };
        let opts = &self.inner.opts;
        let end = state.page_end(
            start,
            opts.page_size,
            opts.page_bytes.unwrap_or(MAX_PAGE_BYTES),
        );
        let caching = opts.list_caching;
        let mut result = ListToolsResult::with_all_items(all[start..end].to_vec())
            .with_ttl_ms(caching.ttl.as_millis() as u64)
            .with_cache_scope(if caching.private {
                CacheScope::Private
            } else {
                CacheScope::Public
            });
        if end < all.len() {
            result.next_cursor = Some(end.to_string());
        }
        Ok(result)
    }

    // No prompts and no resources: their methods are not found (the default answers empty
    // lists, which 2026-era clients read as "serves prompts" without the capability declared).
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Err(ErrorData::method_not_found::<ListPromptsRequestMethod>())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Err(ErrorData::method_not_found::<ListResourcesRequestMethod>())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Err(ErrorData::method_not_found::<
            ListResourceTemplatesRequestMethod,
        >())
    }

    /// `subscriptions/listen` (2026-07-28): the tool list is the only thing that changes.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // Request ids are the client's, not unique across clients: each stream gets a key.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let key = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut l) = self.inner.listeners.lock() {
            l.push((key, context.sink().clone()));
        }
        context.cancelled().await;
        if let Ok(mut l) = self.inner.listeners.lock() {
            l.retain(|(k, _)| *k != key);
        }
        Ok(())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let state = self.state();
        if let Some(d) = &state.discovery
            && let Some(meta) = Meta::from_name(name, d.code)
        {
            return Some(d.tools[meta.slot()].clone());
        }
        let &i = state.index.get(name)?;
        match state.tools.get(state.listed_at[i] as usize) {
            Some(t) => Some(t.clone()),
            None => Some(with_selection(
                state.set.tools[i].tool(),
                state.select_args[i].as_deref(),
            )),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The HTTP gate answers 403 before this; in case a call comes another way with claims.
        if let Some(claims) = claims_of(&context)
            && let Some(required) = self.required_scopes(&request.name, request.arguments.as_ref())
            && !claims.allows(&required)
        {
            let scope = crate::oauth::challenge_scopes(claims, &required).join(" ");
            return Err(ErrorData::invalid_request(
                format!("insufficient scope: this tool needs the scope(s) {scope}"),
                None,
            ));
        }
        // Boxed: rmcp spawns one task per request whose future embeds this one, and tokio moves
        // a task's whole future in memory when it starts and when it finishes. Unboxed, the
        // forwarding state (reqwest, validation, cancellation) made those copies a measurable
        // share of the proxy's CPU per call.
        if self.inner.opts.observe.is_on() {
            Box::pin(self.observed_call(request, context)).await
        } else {
            Box::pin(self.handle_call(request, context, &mut CallNote::default())).await
        }
    }
}

/// What the call path tells metrics and the audit log about a call, besides its result.
#[derive(Default)]
struct CallNote {
    /// The operation called (directly or through `call_operation`), once known.
    op: Option<usize>,
    /// The state that operation index is of.
    state: Option<Arc<ToolState>>,
    /// An outcome the result alone does not tell (invalid arguments, cancelled).
    outcome: Option<Outcome>,
    status: Option<u16>,
    exchange: Exchange,
}

/// When and by whom a call was made (for the audit log and the latency histogram).
struct Began {
    at: std::time::SystemTime,
    started: Instant,
    caller: Caller,
}

/// Takes a call off the in-flight gauge however the call ends (its future may be dropped).
struct InFlight<'a>(&'a crate::observe::Metrics, Instant);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.call_ended(self.1.elapsed());
    }
}

impl ProxyServer {
    /// [`Self::handle_call`] with metrics and the audit log.
    async fn observed_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let obs = &self.inner.opts.observe;
        let at = std::time::SystemTime::now();
        let started = Instant::now();
        let _in_flight = obs.metrics.as_deref().map(|m| {
            m.call_started();
            InFlight(m, started)
        });
        let tool = request.name.to_string();
        let caller = match context.extensions.get::<http::request::Parts>() {
            Some(parts) => Caller::http(&parts.headers, &parts.extensions),
            None => Caller::stdio(),
        };
        let mut note = CallNote::default();
        let trace = crate::otel::enabled().then(|| {
            let headers = context
                .extensions
                .get::<http::request::Parts>()
                .map(|p| &p.headers);
            let parent = crate::otel::caller_context(Some(&context.meta.0), headers);
            crate::otel::call_span(&parent, &tool)
        });
        let response = match &trace {
            Some(cx) => {
                use crate::otel::FutureExt as _;
                self.handle_call(request, context, &mut note)
                    .with_context(cx.clone())
                    .await
            }
            None => self.handle_call(request, context, &mut note).await,
        };
        let began = Began {
            at,
            started,
            caller,
        };
        self.record_call(&tool, began, &note, &response, trace.as_ref());
        response
    }

    /// Metrics and the audit log of one call (a tool call, or an `api.*` call of a script) that
    /// `note` and `response` tell about.
    fn record_call(
        &self,
        tool: &str,
        Began {
            at,
            started,
            caller,
        }: Began,
        note: &CallNote,
        response: &Result<CallToolResponse, ErrorData>,
        trace: Option<&opentelemetry::Context>,
    ) {
        let obs = &self.inner.opts.observe;
        let outcome = note.outcome.unwrap_or(match response {
            Err(_) => Outcome::ToolError,
            Ok(CallToolResponse::Complete(r)) => Outcome::of_call(
                note.status,
                r.is_error.unwrap_or(false),
                note.exchange.timed_out,
                note.exchange.unreachable,
            ),
            Ok(CallToolResponse::InputRequired(_)) => Outcome::InputRequired,
            Ok(_) => Outcome::Ok,
        });
        let def = note
            .state
            .as_ref()
            .zip(note.op)
            .map(|(s, i)| &s.set.tools[i]);
        // The label: the operation's tool name (also through call_operation), else the tool
        // called when it is one of this server's, else UNKNOWN_TOOL (names are the caller's).
        let label: &str = match def {
            Some(d) => d.name(),
            None if self.has_tool(tool) => tool,
            None => crate::observe::UNKNOWN_TOOL,
        };
        if let Some(cx) = trace {
            crate::otel::end_call(
                cx,
                outcome.as_str(),
                def.map(|d| {
                    (
                        d.route.method.as_str(),
                        d.route.path.as_str(),
                        d.operation_id.as_deref(),
                    )
                }),
            );
        }
        if let Some(m) = &obs.metrics {
            let api = match (&note.state, def) {
                (Some(s), Some(d)) => s.api_name(d).cloned(),
                _ => None,
            };
            m.count_call(api.as_ref(), label, outcome);
            if let Some(took) = note.exchange.upstream {
                m.upstream(took, note.exchange.sent, note.exchange.received);
            }
        }
        if let Some(audit) = &obs.audit {
            let api: Arc<str> = match &note.state {
                Some(s) => s.audit_api(def.map(|d| &**d)),
                None => self.state().audit_api(None),
            };
            audit.record(AuditEntry {
                at,
                request_id: crate::observe::next_request_id(),
                caller,
                api,
                tool: label.to_string(),
                operation_id: def.and_then(|d| d.operation_id.clone()),
                method: def.map(|d| d.route.method.as_str()),
                path: def.map(|d| d.route.path.clone()),
                status: note.status,
                latency_ms: crate::observe::millis(started.elapsed()),
                upstream_ms: note.exchange.upstream.map(crate::observe::millis),
                bytes_sent: note.exchange.sent,
                bytes_received: note.exchange.received,
                outcome: outcome.as_str(),
            });
        }
    }

    async fn handle_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        note: &mut CallNote,
    ) -> Result<CallToolResponse, ErrorData> {
        let state = self.state();
        if self.inner.opts.observe.is_on() {
            note.state = Some(Arc::clone(&state));
        }
        let retry = Retry {
            input_responses: request.input_responses.clone(),
            request_state: request.request_state.clone(),
        };
        let name = request.name.as_ref();
        if let Some(d) = &state.discovery
            && let Some(meta) = Meta::from_name(name, d.code)
        {
            let args = request.arguments.unwrap_or_default();
            let tool = &d.tools[meta.slot()];
            if let Err(problems) =
                validate::check(&d.validators[meta.slot()], &tool.input_schema, &args)
            {
                let text = format!(
                    "Invalid arguments for `{name}`. Fix these and call again:\n- {}",
                    problems.join("\n- ")
                );
                note.outcome = Some(Outcome::Invalid);
                return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
            }
            return Ok(match meta {
                Meta::Search => search_result(&state, d, &args),
                Meta::Describe => describe_result(&state, d, &args),
                Meta::Execute => return self.execute(&state, &args, &context).await,
                Meta::Call => {
                    let op_name = args.get("name").and_then(Value::as_str).unwrap_or_default();
                    let Some(&i) = state.ops.get(op_name) else {
                        return Ok(unknown_operation(&state, d, op_name).into());
                    };
                    let op_args = match args.get("arguments") {
                        None | Some(Value::Null) => serde_json::Map::new(),
                        Some(Value::Object(m)) => m.clone(),
                        Some(other) => {
                            let text = format!(
                                "`arguments` must be an object of the operation's arguments (got {}); nothing was sent to the API.",
                                json_type(other)
                            );
                            return Ok(
                                CallToolResult::error(vec![ContentBlock::text(text)]).into()
                            );
                        }
                    };
                    return self
                        .invoke(&state, i, op_args, &retry, &context, note)
                        .await;
                }
            }
            .into());
        }
        let Some(&i) = state.index.get(name) else {
            note.outcome = Some(Outcome::Invalid);
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                Some(serde_json::json!({ "tool": request.name })),
            ));
        };
        let args = request.arguments.unwrap_or_default();
        self.invoke(&state, i, args, &retry, &context, note).await
    }

    /// Validates and forwards a call of operation `i` (a tool call, `call_operation`, or an
    /// `api.*` call of an `execute` script); `sent` gets the API's HTTP status when the request
    /// was sent and answered.
    async fn invoke(
        &self,
        state: &ToolState,
        i: usize,
        args: serde_json::Map<String, Value>,
        retry: &Retry,
        context: &RequestContext<RoleServer>,
        note: &mut CallNote,
    ) -> Result<CallToolResponse, ErrorData> {
        let def = &state.set.tools[i];
        note.op = Some(i);
        let mut args = args;
        // The selection argument is the server's: checked here, never validated against the
        // operation's schema nor sent.
        let select = match state.select_args[i].as_ref() {
            Some(name) => match args.remove(name) {
                None | Some(Value::Null) => None,
                Some(Value::String(expr)) => match crate::forward::fit::check_selection(&expr) {
                    Ok(()) => Some((name.clone(), expr)),
                    Err(e) => {
                        let text = format!(
                            "Invalid arguments for `{}`; nothing was sent to the API. Fix these and call again:\n- `{name}`: {e}",
                            def.name()
                        );
                        note.outcome = Some(Outcome::Invalid);
                        return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
                    }
                },
                Some(other) => {
                    let text = format!(
                        "Invalid arguments for `{}`; nothing was sent to the API. Fix these and call again:\n- `{name}`: must be a string (a JMESPath expression), got {}",
                        def.name(),
                        json_type(&other)
                    );
                    note.outcome = Some(Outcome::Invalid);
                    return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
                }
            },
            None => None,
        };
        let validated = {
            let _span = crate::otel::step("validate arguments");
            validate::check_call(
                &state.validators[i],
                &def.tool().input_schema,
                &def.route,
                &args,
            )
        };
        if let Err(problems) = validated {
            let text = format!(
                "Invalid arguments for `{}`; nothing was sent to the API. Fix these and call again:\n- {}",
                def.name(),
                problems.join("\n- ")
            );
            note.outcome = Some(Outcome::Invalid);
            return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
        }
        // The user's consent (`--confirm`), after validation (nobody is asked about a call that
        // could not be sent) and before anything reaches the API.
        if self.inner.opts.confirm.applies_to(def) {
            let gate = match &self.inner.confirmer {
                Some(Ok(c)) => c.gate(def, &args, retry, context).await,
                Some(Err(e)) => Gate::Answer(
                    CallToolResult::error(vec![ContentBlock::text(format!(
                        "`{}` needs the user's confirmation, which this server cannot ask for ({e}); nothing was sent to the API.",
                        def.name()
                    ))])
                    .into(),
                ),
                None => Gate::Send,
            };
            match gate {
                Gate::Send => {}
                Gate::Answer(response) => {
                    tracing::info!(tool = %def.name(), method = route_method(def), "not sent: no confirmation");
                    return Ok(response);
                }
                Gate::Refuse(e) => return Err(e),
            }
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
        let fwd = self.forwarder_of(def);
        let call = async {
            let custom = self
                .inner
                .opts
                .dispatcher
                .as_ref()
                .and_then(|d| d(def.name(), fwd, route, args.clone()));
            match custom {
                Some(f) => f.await,
                None => fwd.call(route, &args).await,
            }
        };
        let forwarded = self.forwarded_headers(context);
        let caller = caller_of(context);
        let work = async {
            let (result, report) = CallScope::new(forwarded.clone())
                .with_caller(caller.clone())
                .with_select(select.clone())
                .run(call)
                .await;
            match report.accepted_at.clone() {
                Some(at) if self.inner.opts.poll => {
                    self.poll(
                        state,
                        def.api,
                        &at,
                        (&forwarded, &caller),
                        started,
                        result,
                        report,
                    )
                    .await
                }
                Some(at) => {
                    let mut result = result;
                    result
                        .content
                        .push(ContentBlock::text(accepted_note(state, def.api, fwd, &at)));
                    (result, report)
                }
                None => (result, report),
            }
        };
        let work = crate::progress::while_pending(
            context,
            || format!("{} {}", route.method.as_str(), route.path),
            work,
        );
        let (result, report) = tokio::select! {
            r = work => r,
            _ = context.ct.cancelled() => {
                tracing::info!(tool = %def.name(), method = route.method.as_str(), path = %route.path, "cancelled by the client");
                note.outcome = Some(Outcome::Cancelled);
                return Ok(CallToolResult::error(vec![ContentBlock::text("cancelled by the client")]).into());
            }
        };
        let status = report.status;
        note.status = status;
        note.exchange = report.exchange;
        let result = conform_to_output_schema(
            result,
            report.full_structured,
            def,
            &state.output_validators[i],
        );
        tracing::info!(
            tool = %def.name(),
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

impl ProxyServer {
    /// `execute` (code mode): runs the script on a thread of its own and serves its `api.*` calls
    /// here, through [`ProxyServer::invoke`] like any tool call, until it ends, runs out of time
    /// or the client cancels.
    async fn execute(
        &self,
        state: &Arc<ToolState>,
        args: &serde_json::Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        use crate::code::{Answer, Script, ScriptError};
        let limits = match &self.inner.opts.mode {
            ToolMode::Code(limits) => *limits,
            _ => crate::code::CodeLimits::default(),
        };
        let code = args
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let _slot = tokio::select! {
            slot = self.inner.scripts.acquire() => slot
                .map_err(|_| ErrorData::internal_error("server is shutting down", None))?,
            _ = context.ct.cancelled() => {
                return Ok(CallToolResult::error(vec![ContentBlock::text("cancelled by the client")]).into());
            }
        };
        let started = Instant::now();
        let deadline = started + limits.timeout;
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Tells the engine to stop whenever this call ends early (cancelled, or dropped).
        struct StopOnDrop(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for StopOnDrop {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let _stop = StopOnDrop(Arc::clone(&stop));
        let operations: Vec<String> = state
            .set
            .tools
            .iter()
            .map(|d| d.name().to_string())
            .collect();
        let (calls_tx, mut calls_rx) = tokio::sync::mpsc::channel(1);
        let script = Script {
            code,
            operations,
            limits,
            deadline,
            stop: Arc::clone(&stop),
        };
        let mut done = match crate::code::spawn(script, calls_tx) {
            Ok(rx) => rx,
            Err(e) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "the script could not be started ({e}); nothing was sent to the API"
                ))])
                .into());
            }
        };
        let mut made: Vec<Value> = Vec::new();
        let late = tokio::time::Instant::from_std(deadline + crate::code::GRACE);
        let end = loop {
            tokio::select! {
                end = &mut done => break end.ok(),
                Some(call) = calls_rx.recv() => {
                    let answer = if made.len() >= limits.max_calls {
                        Answer::Err {
                            message: format!(
                                "api.{}: the script already made {} API calls, its limit (--code-max-calls); nothing was sent to the API",
                                call.operation, limits.max_calls
                            ),
                            status: None,
                        }
                    } else {
                        let call_deadline = tokio::time::Instant::from_std(deadline);
                        match tokio::time::timeout_at(
                            call_deadline,
                            self.script_call(state, &call.operation, call.args, context),
                        )
                        .await
                        {
                            Ok((answer, sent)) => {
                                if let Some(sent) = sent {
                                    made.push(sent);
                                }
                                answer
                            }
                            Err(_) => {
                                made.push(serde_json::json!({
                                    "operation": call.operation, "status": null, "ok": false
                                }));
                                Answer::Err {
                                    message: format!(
                                        "api.{}: no answer before the script's time limit (--code-timeout)",
                                        call.operation
                                    ),
                                    status: None,
                                }
                            }
                        }
                    };
                    let _ = call.reply.send(answer);
                }
                _ = tokio::time::sleep_until(late) => break None,
                _ = context.ct.cancelled() => {
                    tracing::info!(tool = crate::code::EXECUTE, calls = made.len(), "cancelled by the client");
                    return Ok(CallToolResult::error(vec![ContentBlock::text("cancelled by the client")]).into());
                }
            }
        };
        let end = end.unwrap_or_else(|| crate::code::ScriptEnd {
            outcome: Err(ScriptError::Timeout(limits.timeout)),
            logs: Vec::new(),
            logs_cut: false,
            returned_nothing: false,
        });
        let mut logs = end.logs;
        if end.logs_cut {
            logs.push(format!(
                "[console output cut at {} bytes]",
                crate::code::MAX_LOG_BYTES
            ));
        }
        let ok = end.outcome.is_ok();
        tracing::info!(
            tool = crate::code::EXECUTE,
            calls = made.len(),
            ok,
            ms = started.elapsed().as_millis() as u64,
            "script"
        );
        let calls_line = |made: &[Value]| -> String {
            if made.is_empty() {
                return "No API call was made.".to_string();
            }
            let list: Vec<String> = made
                .iter()
                .map(|c| {
                    format!(
                        "{} → {}",
                        c["operation"].as_str().unwrap_or_default(),
                        c["status"]
                            .as_u64()
                            .map_or_else(|| "no HTTP response".to_string(), |s| s.to_string())
                    )
                })
                .collect();
            format!("API calls made ({}): {}.", made.len(), list.join(", "))
        };
        match end.outcome {
            Ok(result) => {
                let mut structured = serde_json::json!({ "result": result, "calls": made });
                if !logs.is_empty() {
                    structured["logs"] = Value::from(logs);
                }
                let text = serde_json::to_string(&structured).unwrap_or_default();
                if text.len() > limits.max_output {
                    let e = ScriptError::Output {
                        bytes: text.len(),
                        max: limits.max_output,
                    };
                    return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                        "The script ran, but {e}. {}",
                        calls_line(&made)
                    ))])
                    .into());
                }
                let mut content = vec![ContentBlock::text(text)];
                if end.returned_nothing {
                    content.push(ContentBlock::text(
                        "[openapi-mcp: the script returned nothing; end it with `return value` to get a result.]",
                    ));
                }
                let mut r = CallToolResult::success(content);
                r.structured_content = Some(structured);
                Ok(r.into())
            }
            Err(e) => {
                let mut text = format!("The script failed: {e}.\n{}", calls_line(&made));
                if !made.is_empty() {
                    text.push_str(
                        " Calls that changed data are not undone: check before running it again.",
                    );
                }
                if !logs.is_empty() {
                    text.push_str("\nconsole output:\n");
                    text.push_str(&logs.join("\n"));
                }
                // What the script threw is cut in code.rs; the whole is cut here too (#36).
                let text = crate::code::cut_text(&text, limits.max_output);
                let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
                r.structured_content = Some(serde_json::json!({
                    "error": crate::code::cut_text(&e.to_string(), limits.max_output),
                    "calls": made,
                    "logs": logs,
                }));
                Ok(r.into())
            }
        }
    }

    /// One `api.*` call of a script: validated and forwarded by [`ProxyServer::invoke`]. Returns
    /// what the script gets and, when the call reached the server's checks, its record.
    async fn script_call(
        &self,
        state: &Arc<ToolState>,
        operation: &str,
        args: serde_json::Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> (crate::code::Answer, Option<Value>) {
        use crate::code::Answer;
        let Some(&i) = state.ops.get(operation) else {
            let answer = Answer::Err {
                message: format!("unknown operation `{operation}`; nothing was sent to the API"),
                status: None,
            };
            return (answer, None);
        };
        // The token's scopes, as for a tool call (the gate let `execute` through without them).
        let required = &state.set.tools[i].route.oauth_scopes;
        if let Some(claims) = claims_of(context)
            && !claims.allows(required)
        {
            let scope = crate::oauth::challenge_scopes(claims, required).join(" ");
            let answer = Answer::Err {
                message: format!(
                    "insufficient scope: `{operation}` needs the scope(s) {scope}; nothing was sent to the API"
                ),
                status: None,
            };
            let record = serde_json::json!({ "operation": operation, "status": null, "ok": false });
            return (answer, Some(record));
        }
        let obs = &self.inner.opts.observe;
        let mut note = CallNote::default();
        if obs.is_on() {
            note.state = Some(Arc::clone(state));
        }
        let started = Instant::now();
        let at = std::time::SystemTime::now();
        let _in_flight = obs.metrics.as_deref().map(|m| {
            m.call_started();
            InFlight(m, started)
        });
        let response = self
            .invoke(state, i, args, &Retry::default(), context, &mut note)
            .await;
        if obs.is_on() {
            let caller = match context.extensions.get::<http::request::Parts>() {
                Some(parts) => Caller::http(&parts.headers, &parts.extensions),
                None => Caller::stdio(),
            };
            let began = Began {
                at,
                started,
                caller,
            };
            self.record_call(operation, began, &note, &response, None);
        }
        let status = note.status;
        let fail = |message: String| Answer::Err { message, status };
        let answer = match response {
            Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
                let text: Vec<&str> = r
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                    .collect();
                fail(text.join("\n"))
            }
            Ok(CallToolResponse::Complete(r)) => Answer::Ok(crate::code::answer_value(
                &r,
                state.set.tools[i].route.output,
            )),
            Ok(CallToolResponse::InputRequired(_)) => fail(format!(
                "`{operation}` needs the user's confirmation (--confirm), which this client can only give to a single tool call, not within a script; nothing was sent to the API"
            )),
            Ok(_) => fail(format!(
                "`{operation}` did not complete within the script; nothing more is known"
            )),
            Err(e) => fail(e.message.to_string()),
        };
        let ok = matches!(answer, Answer::Ok(_));
        let record = serde_json::json!({ "operation": operation, "status": status, "ok": ok });
        (answer, Some(record))
    }

    /// `--poll`: follows a `202 Accepted` to its end within `--timeout` (counted from the call's
    /// start) through the GET tool that reads its status URL, so credentials, validation and
    /// scrubbing are those of any call. Waits 1, 2, 3, then 5 s between polls; the operation is
    /// still going while the status URL answers 202, or a JSON `status` says so (Azure's
    /// `Running`, `InProgress`, `NotStarted`…). Without such a GET tool, or past the timeout, the
    /// result says where the status is and which call reads it, as without `--poll`.
    #[allow(clippy::too_many_arguments)]
    async fn poll(
        &self,
        state: &ToolState,
        api: usize,
        at: &url::Url,
        (forwarded, caller): (&[(String, String)], &Option<Arc<crate::forward::Caller>>),
        started: Instant,
        first: CallToolResult,
        first_report: CallReport,
    ) -> (CallToolResult, CallReport) {
        let fwd = self
            .inner
            .forwarders
            .get(api)
            .unwrap_or(&self.inner.forwarders[0]);
        let deadline = started + fwd.options().timeout;
        let mut at = at.clone();
        let mut polls = 0u32;
        loop {
            let Some((tool, args)) = follow_up(state, api, &fwd.options().base_url, &at) else {
                let mut result = first;
                result
                    .content
                    .push(ContentBlock::text(accepted_note(state, api, fwd, &at)));
                return (result, first_report);
            };
            let wait = POLL_WAITS[(polls as usize).min(POLL_WAITS.len() - 1)];
            if Instant::now() + wait >= deadline {
                let mut result = first;
                result.content.push(ContentBlock::text(format!(
                    "{} [openapi-mcp: polled {polls} times over {:.0} s (--timeout); the operation was still running.]",
                    accepted_note(state, api, fwd, &at),
                    started.elapsed().as_secs_f64()
                )));
                return (result, first_report);
            }
            tokio::time::sleep(wait).await;
            polls += 1;
            let Some(&i) = state.ops.get(&tool) else {
                return (first, first_report);
            };
            let route = &state.set.tools[i].route;
            let (polled, report) = CallScope::new(forwarded.to_vec())
                .with_caller(caller.clone())
                .run(fwd.call(route, &args))
                .await;
            let running = report.status == Some(202)
                || polled
                    .structured_content
                    .as_ref()
                    .and_then(|v| v.get("status"))
                    .and_then(Value::as_str)
                    .is_some_and(still_running);
            if running {
                if let Some(next) = report.accepted_at {
                    at = next;
                }
                continue;
            }
            let mut result = polled;
            result.content.push(ContentBlock::text(format!(
                "[openapi-mcp: the API accepted the request (HTTP 202) and carried it out in the background; this is the final answer of `{tool}` {}, polled {polls} times over {:.0} s. Do not repeat the call.]",
                Value::Object(args),
                started.elapsed().as_secs_f64()
            )));
            return (result, report);
        }
    }
}

/// Waits between polls of a long-running operation (the last one repeats).
const POLL_WAITS: [std::time::Duration; 4] = [
    std::time::Duration::from_secs(1),
    std::time::Duration::from_secs(2),
    std::time::Duration::from_secs(3),
    std::time::Duration::from_secs(5),
];

/// A long-running operation's `status` that means it goes on (Azure, Google, AWS spellings).
fn still_running(status: &str) -> bool {
    let s: String = status
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        s.as_str(),
        "running"
            | "inprogress"
            | "notstarted"
            | "pending"
            | "accepted"
            | "queued"
            | "started"
            | "creating"
            | "updating"
            | "deleting"
            | "provisioning"
    )
}

fn route_method(def: &ToolDef) -> &'static str {
    def.route.method.as_str()
}

/// What a `202 Accepted` result tells the model: the operation goes on, where its status is,
/// and, when a GET tool of this server reads that URL, the exact call that checks it. The URL is
/// shown without its query (status URLs can carry signed tokens).
fn accepted_note(state: &ToolState, api: usize, fwd: &Forwarder, at: &url::Url) -> String {
    let mut shown = at.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    let head = format!(
        "[openapi-mcp: the API accepted the request (HTTP 202) and carries it out in the background; its status is at {shown}"
    );
    match follow_up(state, api, &fwd.options().base_url, at) {
        Some((tool, args)) => format!(
            "{head}. Check it with `{tool}` {}; do not repeat this call.]",
            Value::Object(args)
        ),
        None => format!("{head}; no tool of this server reads that URL. Do not repeat this call.]"),
    }
}

/// The GET tool of API `api` whose path template matches `url` (same origin as `base`, that
/// API's base URL, under its path), with the path arguments it takes from it: the template with
/// the most literal segments wins.
fn follow_up(
    state: &ToolState,
    api: usize,
    base: &url::Url,
    url: &url::Url,
) -> Option<(String, serde_json::Map<String, Value>)> {
    if url.origin() != base.origin() {
        return None;
    }
    let rest = url.path().strip_prefix(base.path().trim_end_matches('/'))?;
    let segments: Vec<&str> = rest.trim_matches('/').split('/').collect();
    let mut best: Option<(usize, String, serde_json::Map<String, Value>)> = None;
    for def in state.set.tools.iter() {
        let route = &def.route;
        if def.api != api
            || route.method != openapi_mcp_toolset::model::HttpMethod::Get
            || route.server.is_some()
        {
            continue;
        }
        let template: Vec<&str> = route.path.trim_matches('/').split('/').collect();
        if template.len() != segments.len() {
            continue;
        }
        let mut args = serde_json::Map::new();
        let mut literal = 0;
        let matched = template.iter().zip(&segments).all(|(t, s)| {
            match t.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
                Some(wire) => {
                    let Some(b) = route.args.iter().find(|b| {
                        b.wire == wire
                            && matches!(
                                b.location,
                                openapi_mcp_toolset::model::ArgLocation::Path { .. }
                            )
                    }) else {
                        return false;
                    };
                    let value = percent_encoding::percent_decode_str(s).decode_utf8_lossy();
                    let numeric = def
                        .tool()
                        .input_schema
                        .get("properties")
                        .and_then(|p| p.get(&b.arg))
                        .and_then(|p| p.get("type"))
                        .and_then(Value::as_str)
                        .is_some_and(|t| t == "integer" || t == "number");
                    let v = match value.parse::<serde_json::Number>() {
                        Ok(n) if numeric => Value::Number(n),
                        _ => Value::String(value.clone().into_owned()),
                    };
                    !value.is_empty() && {
                        args.insert(b.arg.clone(), v);
                        true
                    }
                }
                None => {
                    literal += 1;
                    *t == *s
                }
            }
        });
        if matched && best.as_ref().is_none_or(|(l, _, _)| literal > *l) {
            best = Some((literal, def.name().to_string(), args));
        }
    }
    best.map(|(_, name, args)| (name, args))
}

/// A successful result whose `structuredContent` does not match the tool's output schema
/// (the API returned data its spec does not describe) would make the client fail the whole
/// call: MCP clients check structured results against the output schema, except error results.
/// Such a result keeps its content as text, without `structuredContent`, marked as an error, with
/// a first block that says the request itself succeeded (so the model does not repeat it) and
/// what did not match.
///
/// A compacted `structuredContent` (`--response compact`) that the schema rejects (it requires a
/// member that was `null` or empty) is replaced by the uncompacted one, `full`, when that passes.
fn conform_to_output_schema(
    mut result: CallToolResult,
    full: Option<Value>,
    def: &ToolDef,
    validator: &LazyValidator,
) -> CallToolResult {
    if result.is_error == Some(true) {
        return result;
    }
    let (Some(structured), Some(schema)) = (&result.structured_content, &def.tool().output_schema)
    else {
        return result;
    };
    let Err(problems) = validate::check_output(validator, schema, structured) else {
        return result;
    };
    if let Some(full) = full
        && validate::check_output(validator, schema, &full).is_ok()
    {
        result.structured_content = Some(full);
        return result;
    }
    tracing::warn!(tool = %def.name(), "response does not match the output schema: {}", problems.join("; "));
    let note = format!(
        "The API call succeeded, but the response does not match this tool's output schema, so it is returned as text only below (this is reported as an error because MCP clients reject structured results that do not match). The request was carried out: do not repeat it because of this.\nMismatches:\n- {}",
        problems.join("\n- ")
    );
    result.structured_content = None;
    result.is_error = Some(true);
    result.content.insert(0, ContentBlock::text(note));
    result
}

/// The selection argument of an operation whose results are JSON (it has an output schema or
/// accepts a JSON media type): `_select`, unless the operation has an argument of that name.
/// (An operation without an output schema counts when it is a GET whose first accepted media
/// type is JSON: `Accept` lists the success response's types first.)
fn selection_arg(def: &ToolDef) -> Option<String> {
    let route = &def.route;
    let json = route.output != openapi_mcp_toolset::model::OutputShape::None
        || (route.method == openapi_mcp_toolset::model::HttpMethod::Get
            && route.accept.as_deref().is_some_and(|a| {
                let first = a.split(',').next().unwrap_or("").trim();
                crate::forward::response::is_json_essence(&first.to_ascii_lowercase())
            }));
    // The route's arguments are the inputSchema's properties (read without bundling deferred
    // schemas).
    json.then(|| crate::forward::fit::selection_arg(route.args.iter().map(|b| b.arg.as_str())))
}

/// The tool `tools/list` serves for an operation: its tool with the selection argument
/// (`_select`) when its results are JSON.
pub fn served_tool(def: &ToolDef) -> Tool {
    with_selection(def.tool(), selection_arg(def).as_deref())
}

/// The tool as served: with its selection argument, if it has one.
fn with_selection(t: &Tool, arg: Option<&str>) -> Tool {
    let mut t = t.clone();
    if let Some(arg) = arg {
        let schema = Arc::make_mut(&mut t.input_schema);
        let props = schema
            .entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Value::Object(p) = props {
            p.insert(arg.to_string(), crate::forward::fit::selection_schema());
        }
    }
    t
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `search_operations`: ranked operations as text and structured content.
fn search_result(
    state: &ToolState,
    d: &Discovery,
    args: &serde_json::Map<String, Value>,
) -> CallToolResult {
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // A search query is a sentence: past a few hundred words the rest only costs time.
    let query = match query.char_indices().nth(dynamic::MAX_QUERY_CHARS) {
        Some((i, _)) => &query[..i],
        None => query,
    };
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(dynamic::DEFAULT_LIMIT, |l| {
            usize::try_from(l).unwrap_or(usize::MAX)
        })
        .clamp(1, dynamic::MAX_LIMIT);
    let area = args
        .get("area")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|a| !a.is_empty());
    // With an area: the query's hits among its operations, else (`*`, or nothing matched) the
    // area's operations in the spec's order.
    let mut listed: Option<(usize, bool)> = None;
    let hits = match area {
        None => d.index.search(query, limit),
        Some(area) => {
            let key = dynamic::area_key(area);
            let tools = &state.set.tools;
            let in_area = |op: usize| tools[op].tags.iter().any(|t| dynamic::area_key(t) == key);
            let members: Vec<usize> = d
                .index
                .ops()
                .iter()
                .copied()
                .filter(|&op| in_area(op))
                .collect();
            if members.is_empty() {
                return unknown_area(state, d, area);
            }
            let mut hits: Vec<dynamic::Hit> = if query.trim() == "*" {
                Vec::new()
            } else {
                d.index
                    .search(query, usize::MAX)
                    .into_iter()
                    .filter(|h| in_area(h.op))
                    .take(limit)
                    .collect()
            };
            if hits.is_empty() {
                listed = Some((members.len(), query.trim() != "*"));
                hits = members
                    .into_iter()
                    .take(limit)
                    .map(|op| dynamic::Hit { op, score: 0.0 })
                    .collect();
            }
            hits
        }
    };
    let mut results = Vec::with_capacity(hits.len());
    let mut text = String::new();
    for (rank, hit) in hits.iter().enumerate() {
        let def = &state.set.tools[hit.op];
        let summary = dynamic::summary(def);
        let required = dynamic::required_arguments(def);
        let api = state.api_name(def);
        text.push_str(&format!(
            "{}. {}{} — {} {} — {}\n   required: {}\n",
            rank + 1,
            def.name(),
            api.map(|a| format!(" (API {a})")).unwrap_or_default(),
            def.route.method.as_str(),
            def.route.path,
            summary,
            required
        ));
        let mut result = serde_json::json!({
            "name": def.name(),
            "method": def.route.method.as_str(),
            "path": def.route.path,
            "summary": summary,
            "required_arguments": required,
            "score": (f64::from(hit.score) * 1000.0).round() / 1000.0,
        });
        if let Some(api) = api {
            result["api"] = Value::from(&**api);
        }
        results.push(result);
    }
    if let (Some((n, unmatched)), Some(area)) = (listed, area) {
        let head = if unmatched {
            format!("No operation of area {area:?} matches {query:?}; its operations")
        } else {
            format!("The operations of area {area:?}")
        };
        let more = if n > hits.len() {
            format!(", the first {} of {n} (a query narrows them)", hits.len())
        } else {
            String::new()
        };
        text = format!("{head}{more}:\n{text}");
    }
    if hits.is_empty() {
        text = format!(
            "No operation matches {query:?} (searched {} operations). Try other words: the resource's name (e.g. \"user\", \"invoice\"), an action (list, create, update, delete) or a path segment, or browse an area (`area`, with the query `*`).",
            d.index.len()
        );
    } else if d.code {
        text.push_str(&format!(
            "\nNext: `{}` with a name for its TypeScript declaration, then call it as `api.<name>(args)` in an `{}` script.",
            dynamic::DESCRIBE,
            crate::code::EXECUTE
        ));
    } else {
        text.push_str(&format!(
            "\nNext: `{}` with a name and the required arguments above; `{}` first for the optional ones and their details.",
            dynamic::CALL,
            dynamic::DESCRIBE
        ));
    }
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    let mut structured = serde_json::json!({
        "query": query,
        "results": results,
        "total_operations": d.index.len(),
    });
    if let Some(area) = area {
        structured["area"] = Value::from(area);
    }
    if let Some((n, _)) = listed {
        structured["area_operations"] = Value::from(n);
    }
    r.structured_content = Some(structured);
    r
}

/// `search_operations` with an area no indexed operation has: the areas there are.
fn unknown_area(state: &ToolState, d: &Discovery, area: &str) -> CallToolResult {
    // Echo a prefix only: the name is the caller's, of any length.
    let area = match area.char_indices().nth(64) {
        Some((i, _)) => format!("{}…", &area[..i]),
        None => area.to_string(),
    };
    let areas = dynamic::areas(&state.set.tools, &d.index);
    let text = if areas.is_empty() {
        format!(
            "Unknown area {area:?}: the operations of this API have no areas (tags). Search without `area`."
        )
    } else {
        let shown: Vec<String> = areas
            .iter()
            .take(60)
            .map(|(t, n)| format!("{t} ({n})"))
            .collect();
        let more = if areas.len() > shown.len() {
            format!(" and {} more", areas.len() - shown.len())
        } else {
            String::new()
        };
        format!(
            "Unknown area {area:?}. Areas (operations): {}{more}.",
            shown.join(", ")
        )
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// `describe_operation`: the operation's full tool definition.
fn describe_result(
    state: &ToolState,
    d: &Discovery,
    args: &serde_json::Map<String, Value>,
) -> CallToolResult {
    let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
    let Some(&i) = state.ops.get(name) else {
        return unknown_operation(state, d, name);
    };
    let def = &state.set.tools[i];
    let api = state.apis().get(def.api);
    if d.code {
        let mut v = crate::code::describe(def);
        let mut text = crate::code::declaration(def);
        if let Some(api) = api {
            v["api"] = Value::from(api.name.as_str());
            text = format!("// API: {} ({})\n{text}", api.name, api.title);
        }
        if let Some(a) = &def.tool().annotations {
            let hints: Vec<&str> = [
                (a.read_only_hint == Some(true), "read-only"),
                (a.destructive_hint == Some(true), "destructive"),
                (a.idempotent_hint == Some(true), "idempotent"),
            ]
            .into_iter()
            .filter_map(|(on, h)| on.then_some(h))
            .collect();
            if !hints.is_empty() {
                text.push_str(&format!("\n// {}", hints.join(", ")));
            }
        }
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(v);
        return r;
    }
    let mut v = dynamic::describe(def);
    if let Some(api) = api {
        v["api"] = Value::from(api.name.as_str());
    }
    if let Some(arg) = &state.select_args[i]
        && let Some(Value::Object(props)) = v
            .get_mut("inputSchema")
            .and_then(|s| s.get_mut("properties"))
    {
        props.insert(arg.clone(), crate::forward::fit::selection_schema());
    }
    let text = format!(
        "{}Call it with `{}` {{\"name\": \"{}\", \"arguments\": {{...}}}} where arguments match inputSchema.\n{}",
        api.map(|a| format!("API: {} ({})\n", a.name, a.title))
            .unwrap_or_default(),
        dynamic::CALL,
        def.name(),
        serde_json::to_string_pretty(&v).unwrap_or_default()
    );
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(v);
    r
}

fn unknown_operation(state: &ToolState, d: &Discovery, name: &str) -> CallToolResult {
    let close = dynamic::closest_names(&state.set.tools, Some(&d.index), name, 5);
    // Echo a prefix only: the name is the caller's, of any length.
    let name = match name.char_indices().nth(64) {
        Some((i, _)) => format!("{}…", &name[..i]),
        None => name.to_string(),
    };
    let text = if close.is_empty() {
        format!(
            "Unknown operation `{name}`; nothing was sent to the API. Find one with `{}`.",
            dynamic::SEARCH
        )
    } else {
        format!(
            "Unknown operation `{name}`; nothing was sent to the API. Closest names: {}. Or find one with `{}`.",
            close.join(", "),
            dynamic::SEARCH
        )
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// Reads `Value` arguments without cloning when they are already an object.
pub fn as_object(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

/// The caller the HTTP transport's OAuth gate authorized (for per-caller upstream credentials).
fn caller_of(context: &RequestContext<RoleServer>) -> Option<Arc<crate::forward::Caller>> {
    context
        .extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<Arc<crate::forward::Caller>>()
        .cloned()
}

/// The validated token's claims of an HTTP request (`--oauth-issuer`).
fn claims_of(context: &RequestContext<RoleServer>) -> Option<&crate::oauth::Claims> {
    context
        .extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<crate::oauth::Claims>()
}
