//! The MCP server: serves a tool set and forwards each `tools/call` to the API.

mod call;
mod code;
pub mod confirm;
mod discovery;
pub mod instructions;
pub mod multi;
pub mod progress;
pub mod stdio;
mod tasks;
#[cfg(feature = "workflows")]
pub mod workflow;
#[cfg(not(feature = "workflows"))]
#[path = "workflow_off.rs"]
pub mod workflow;

pub use call::served_tool;
use call::*;
use discovery::*;

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

use crate::forward::{CallReport, CallScope, Exchange, Forwarder};
use crate::modes::dynamic::{self, Meta, SearchIndex, ToolMode};
use crate::observe::{AuditEntry, Caller, Observe, Outcome};
use crate::server::confirm::{Confirm, Confirmer, Gate, Retry};
use crate::server::multi::{ApiInfo, MergeError};
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
    /// MCP tasks (SEP-2663) for requests that declare the extension (`--tasks`): a `202
    /// Accepted` answer becomes a task; none when `None`.
    pub tasks: Option<Arc<crate::tasks::Tasks>>,
    /// With `tasks`: a call still running after this long becomes a task (`--task-after`).
    pub task_after: Option<std::time::Duration>,
    /// Arazzo workflows served as tools beside the operations (`--arazzo`, #39).
    pub workflows: Option<Arc<workflow::WorkflowTools>>,
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
            .field("tasks", &self.tasks)
            .field("task_after", &self.task_after)
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
    /// Hybrid mode (its workflows are listed as tools of their own).
    hybrid: bool,
    /// Arazzo workflows are searched and called through these tools (dynamic and code mode,
    /// [`ToolState::index_workflows`]); `only`: they alone (`--workflows-only`).
    workflows: bool,
    only: bool,
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
    /// The workflow tools, listed after the others ([`ToolState::with_workflows`]).
    workflows: Option<Arc<workflow::WorkflowTools>>,
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

    /// [`ToolState::with_mode`] for the merged tool set of several APIs ([`crate::server::multi::merge`]):
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
                ToolMode::Code(limits) => {
                    crate::modes::code::meta_tools(&set.title, index.len(), limits)
                }
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
                hybrid: matches!(mode, ToolMode::Hybrid { .. }),
                workflows: false,
                only: false,
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
        let instructions = crate::server::instructions::build_for(
            &set,
            &apis,
            &match &discovery {
                None => crate::server::instructions::Listing::Tools,
                Some(d) if d.code => crate::server::instructions::Listing::Code {
                    searchable: d.index.len(),
                },
                Some(d) => crate::server::instructions::Listing::Discovery {
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
            workflows: None,
        }
    }

    /// With Arazzo workflows served as tools, listed after the others (`--workflows-only`:
    /// instead of the operation tools, which the steps still call). No workflows: unchanged.
    pub fn with_workflows(mut self, workflows: Option<Arc<workflow::WorkflowTools>>) -> Self {
        let Some(w) = workflows.filter(|w| !w.is_empty()) else {
            return self;
        };
        if self.index_workflows(&w) {
            self.workflows = Some(w);
            return self;
        }
        if w.only {
            // Hybrid mode: nothing is left to discover.
            self.discovery = None;
            self.tools.clear();
            self.sizes.clear();
            self.index.clear();
            self.listed_at.iter_mut().for_each(|i| *i = u32::MAX);
        } else if !w.only_apis.is_empty() {
            self.unlist_apis(&w.only_apis);
        }
        for t in w.tools() {
            self.sizes.push(openapi_mcp_toolset::model::json_size(t));
            self.tools.push(t.clone());
        }
        self.workflows = Some(w);
        self
    }

    /// The operation tools of `apis` neither listed nor callable by name (`workflows-only` in
    /// their `apis:` entries: their workflows' steps still call them).
    fn unlist_apis(&mut self, apis: &[usize]) {
        let mut listed = vec![true; self.tools.len()];
        for (i, def) in self.set.tools.iter().enumerate() {
            let at = self.listed_at[i] as usize;
            if apis.contains(&def.api) && at < listed.len() {
                listed[at] = false;
                self.index.remove(def.name());
            }
        }
        let mut keep = listed.iter();
        self.tools.retain(|_| keep.next().copied().unwrap_or(true));
        let mut keep = listed.iter();
        self.sizes.retain(|_| keep.next().copied().unwrap_or(true));
        self.listed_at.iter_mut().for_each(|i| *i = u32::MAX);
        for (at, t) in self.tools.iter().enumerate() {
            if let Some(&i) = self.index.get(t.name.as_ref()) {
                self.listed_at[i] = u32::try_from(at).unwrap_or(u32::MAX);
            }
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
    #[cfg_attr(not(feature = "code"), allow(dead_code))]
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

    /// A server of several APIs: `set` is their merged tool set ([`crate::server::multi::merge`]),
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
                state: RwLock::new(Arc::new(
                    ToolState::with_apis(set, &opts.mode, apis)
                        .with_workflows(opts.workflows.clone()),
                )),
                forwarders,
                opts,
                limiter,
                confirmer,
                peers: Mutex::new(Vec::new()),
                listeners: Mutex::new(Vec::new()),
                scripts: Semaphore::new(crate::modes::code::MAX_SCRIPTS),
            }),
        }
    }

    /// The OAuth scopes calling `name` needs (`Route::oauth_scopes`); for `call_operation`,
    /// those of the operation it names; for a workflow, those of every operation its steps may
    /// call; none for `execute`, whose `api.*` calls are checked one by one. `None`: no such
    /// tool.
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
            if let Some(w) = state.discovered_workflow(op) {
                return Some(workflow::required_scopes(&state, w));
            }
            let &i = state.ops.get(op)?;
            return Some(state.set.tools[i].route.oauth_scopes.clone());
        }
        if let Some(w) = state.listed_workflow(name) {
            return Some(workflow::required_scopes(&state, w));
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
            || state.listed_workflow(name).is_some()
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
        let new = ToolState::with_mode(set, &self.inner.opts.mode)
            .with_workflows(self.inner.opts.workflows.clone());
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
        let merged = crate::server::multi::merge(parts);
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
        let new = ToolState::with_apis(set, &self.inner.opts.mode, infos)
            .with_workflows(self.inner.opts.workflows.clone());
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
fn server_info(state: &ToolState, list_changes: bool, tasks: bool) -> ServerConfig {
    let set = &state.set;
    let name: String = openapi_mcp_toolset::naming::snake(&set.title);
    // The tasks extension (SEP-2663), in `capabilities.extensions`, when tasks are served.
    let capabilities = match (list_changes, tasks) {
        (true, true) => ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks()
            .build(),
        (true, false) => ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build(),
        (false, true) => ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .build(),
        (false, false) => ServerCapabilities::builder().enable_tools().build(),
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
            .get_or_init(|| {
                server_info(
                    &state,
                    self.inner.opts.list_caching.changes,
                    self.inner.opts.tasks.is_some(),
                )
            })
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
        if let Some(w) = state.listed_workflow(name) {
            return Some(w.tool.clone());
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

    /// `tasks/get` (SEP-2663; rmcp answers -32021 to a request that did not declare the
    /// extension, -32601 when the server does not serve tasks).
    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.task_get(request, context).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.task_cancel(request, context).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.task_update(request, context).await
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
