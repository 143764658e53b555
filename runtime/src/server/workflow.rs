//! Arazzo workflows served as tools (#39): each usable workflow of a document is one tool
//! (`openapi_mcp_arazzo::tool`), and its call runs the executor (`openapi_mcp_arazzo::run`)
//! with a [`StepCaller`] over this server's own call path: every step is a call of its
//! operation's tool through [`ProxyServer::invoke`] (argument validation, `--confirm` for a
//! destructive step, the concurrency limit, the forwarder of the step's API with its
//! credentials, origin policy and retries), recorded in metrics and the audit log like a tool
//! call of its own, with a span of its own under the workflow call's. The step sees the API's
//! answer as read (status, headers, body: the forwarder's capture slot,
//! [`crate::forward::capture`]), before the result is shaped.
//!
//! The workflow's result is its outputs as `structuredContent` (and as JSON text), scrubbed of
//! every credential its steps' forwarders would scrub; a failed workflow is a tool error that
//! names the step, its HTTP status and the criterion that failed. `--timeout` bounds the whole
//! workflow (the first API's).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::future::BoxFuture;
use openapi_mcp_arazzo::expr::Exchange as StepExchange;
use openapi_mcp_arazzo::run::{self, CallFailure, Limits, StepCall, StepCaller};
use openapi_mcp_arazzo::validate::{OperationInfo, OperationParam, Operations, Workflows};
use openapi_mcp_toolset::model::{ArgLocation, HttpMethod, ParamIn, ToolDef, ToolSet};
use openapi_mcp_toolset::naming::NameAllocator;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value};

use super::call::{Began, CallNote};
use super::confirm::Retry;
use super::{CallToolResponse, ProxyServer, ToolState};
use crate::forward::capture;
use crate::modes::dynamic;
use crate::observe::Caller;
use openapi_mcp_toolset::validate::{self, LazyValidator};

/// One workflow served as a tool.
pub struct WorkflowTool {
    pub tool: Tool,
    workflows: Arc<Workflows>,
    id: String,
    validator: LazyValidator,
}

/// The workflow tools of a server: listed after the operation tools.
#[derive(Default)]
pub struct WorkflowTools {
    tools: Vec<WorkflowTool>,
    by_name: HashMap<String, usize>,
    /// `--workflows-only`: the operation tools are not listed nor callable by name (the steps
    /// still call them).
    pub only: bool,
    /// The APIs (of a server of several) whose operation tools are not listed nor callable by
    /// name: `workflows-only` in their `apis:` entry (`only` is every API's).
    pub only_apis: Vec<usize>,
}

impl WorkflowTools {
    /// The tools of the usable workflows of each of `docs`, named uniquely beside `set`'s
    /// operation tools (a workflow whose name would collide gets a suffixed one).
    pub fn new(set: &ToolSet, docs: &[Arc<Workflows>], only: bool) -> Self {
        let mut out = Self {
            only,
            ..Self::default()
        };
        out.add(set, "", docs);
        out
    }

    /// Adds the tools of the usable workflows of each of `docs`, named with `prefix` (an
    /// `apis:` entry's), uniquely beside `set`'s operation tools and the workflow tools
    /// already in.
    pub fn add(&mut self, set: &ToolSet, prefix: &str, docs: &[Arc<Workflows>]) {
        let mut names = NameAllocator::new(prefix, 64);
        for t in &set.tools {
            names.reserve(t.name());
        }
        for t in &self.tools {
            names.reserve(&t.tool.name);
        }
        for doc in docs {
            for wt in openapi_mcp_arazzo::tool::workflow_tools(doc, &mut names) {
                self.by_name
                    .insert(wt.tool.name.to_string(), self.tools.len());
                self.tools.push(WorkflowTool {
                    tool: wt.tool,
                    workflows: Arc::clone(doc),
                    id: wt.workflow_id,
                    validator: LazyValidator::default(),
                });
            }
        }
    }

    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().map(|w| &w.tool)
    }

    /// Each tool with the id of its workflow.
    pub fn entries(&self) -> impl Iterator<Item = (&Tool, &str)> {
        self.tools.iter().map(|w| (&w.tool, w.id.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub(super) fn get(&self, name: &str) -> Option<&WorkflowTool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The `i`-th workflow tool (a search hit's).
    pub(super) fn at(&self, i: usize) -> Option<&WorkflowTool> {
        self.tools.get(i)
    }

    /// The workflows as `--mode dynamic|code`'s search indexes them, in order (a hit's `op`
    /// is the index here): name, id, summary, inputs, the tags of the operations of `set`
    /// they call, and their description with their steps' and those operations' summaries.
    pub(super) fn search_docs(&self, set: &ToolSet) -> Vec<dynamic::WorkflowDoc> {
        let def_of = |tool: &str| set.tools.iter().find(|d| d.name() == tool);
        self.tools
            .iter()
            .map(|w| {
                let wf = w.workflows.get(&w.id);
                let mut text: Vec<String> = Vec::new();
                let mut tags: Vec<String> = Vec::new();
                if let Some(d) = wf.and_then(|wf| wf.description.as_deref()) {
                    text.push(d.to_string());
                }
                for s in wf.map(|wf| wf.steps.as_slice()).unwrap_or_default() {
                    if let Some(d) = &s.description {
                        text.push(d.clone());
                    }
                }
                for op in w.workflows.operations_of(&w.id) {
                    if let Some(def) = def_of(&op.tool) {
                        text.push(dynamic::summary(def));
                        for t in &def.tags {
                            if !tags.contains(t) {
                                tags.push(t.clone());
                            }
                        }
                    }
                }
                let summary = wf
                    .and_then(|wf| wf.summary.clone().or_else(|| wf.description.clone()))
                    .unwrap_or_default();
                dynamic::WorkflowDoc {
                    name: w.tool.name.to_string(),
                    id: w.id.clone(),
                    summary: summary.lines().next().unwrap_or_default().to_string(),
                    text: text.join("\n"),
                    inputs: wf
                        .map(|wf| wf.input_names().into_iter().map(str::to_string).collect())
                        .unwrap_or_default(),
                    tags,
                }
            })
            .collect()
    }
}

impl WorkflowTool {
    /// Its `workflowId`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its steps as `stepId → tool` (the operation's tool it calls; a workflow it runs by
    /// id), in document order.
    pub fn steps(&self) -> Vec<String> {
        let Some(wf) = self.workflows.get(&self.id) else {
            return Vec::new();
        };
        wf.steps
            .iter()
            .enumerate()
            .map(|(j, s)| match self.workflows.operation(wf.index, j) {
                Some(op) => format!("{} → {}", s.id, op.tool),
                None => format!("{} → a workflow", s.id),
            })
            .collect()
    }

    /// The tools of the operations it may call (for the APIs it uses).
    pub fn operation_tools(&self) -> Vec<&str> {
        self.workflows
            .operations_of(&self.id)
            .into_iter()
            .map(|o| o.tool.as_str())
            .collect()
    }
}

/// The operations of the served tool set, as the Arazzo validator asks for them: source
/// description `name` is the API of index `api` (several sources: one API each, `apis`
/// order; one spec: every source is it).
pub struct SetOperations<'a> {
    pub set: &'a ToolSet,
    /// (source description name, API index)
    pub sources: Vec<(String, usize)>,
}

impl SetOperations<'_> {
    fn api_of(&self, source: &str) -> Option<usize> {
        self.sources
            .iter()
            .find(|(n, _)| n == source)
            .map(|(_, a)| *a)
    }

    fn info(&self, source: &str, def: &ToolDef) -> OperationInfo {
        let route = &def.route;
        let credential = |wire: &str, at: ParamIn| {
            route
                .credential_params
                .iter()
                .any(|c| c.location.param_in() == at && c.name.eq_ignore_ascii_case(wire))
        };
        let params = route
            .args
            .iter()
            .filter_map(|b| {
                let at = b.location.param_in()?;
                (!credential(&b.wire, at)).then(|| OperationParam {
                    name: b.wire.clone(),
                    location: at,
                    required: b.required,
                })
            })
            .collect();
        let annotations = def.tool().annotations.clone().unwrap_or_default();
        OperationInfo {
            source: source.to_string(),
            tool: def.name().to_string(),
            method: route.method,
            path: route.path.clone(),
            params,
            body_required: route.body.as_ref().is_some_and(|b| b.required),
            read_only: annotations
                .read_only_hint
                .unwrap_or(matches!(route.method, HttpMethod::Get | HttpMethod::Head)),
            destructive: annotations
                .destructive_hint
                .unwrap_or(matches!(route.method, HttpMethod::Delete)),
        }
    }
}

impl Operations for SetOperations<'_> {
    fn by_id(&self, source: Option<&str>, operation_id: &str) -> Option<OperationInfo> {
        let mut found = self.set.tools.iter().filter_map(|d| {
            if d.operation_id.as_deref() != Some(operation_id) {
                return None;
            }
            let (name, _) = self
                .sources
                .iter()
                .find(|(n, a)| *a == d.api && source.is_none_or(|s| s == n))?;
            Some((name.as_str(), d))
        });
        let (name, def) = found.next()?;
        // Unqualified and in several sources: ambiguous.
        if source.is_none() && found.next().is_some() {
            return None;
        }
        Some(self.info(name, def))
    }

    fn by_path(&self, source: &str, path: &str, method: &str) -> Option<OperationInfo> {
        let api = self.api_of(source)?;
        let def = self.set.tools.iter().find(|d| {
            d.api == api
                && d.route.path == path
                && d.route.method.as_str().eq_ignore_ascii_case(method)
        })?;
        Some(self.info(source, def))
    }
}

/// A step's parameters and body as the arguments of its operation's tool.
fn step_args(def: &ToolDef, call: &StepCall<'_>) -> Result<Map<String, Value>, String> {
    let route = &def.route;
    let mut args = Map::new();
    for p in &call.params {
        let binding = route.args.iter().find(|b| {
            b.location.param_in() == Some(p.location)
                && if p.location == ParamIn::Header {
                    b.wire.eq_ignore_ascii_case(&p.name)
                } else {
                    b.wire == p.name
                }
        });
        match binding {
            Some(b) => {
                args.insert(b.arg.clone(), p.value.clone());
            }
            // A credential's parameter (the forwarder fills it) or one the tool does not
            // take: the validator reported the latter.
            None => {
                return Err(format!(
                    "the operation's tool `{}` has no {} parameter `{}`",
                    def.name(),
                    p.location.as_str(),
                    p.name
                ));
            }
        }
    }
    if let Some(body) = &call.body {
        let whole = route
            .args
            .iter()
            .find(|b| matches!(b.location, ArgLocation::Body));
        match (whole, body) {
            (Some(b), _) => {
                args.insert(b.arg.clone(), body.clone());
            }
            (None, Value::Object(members)) => {
                for (k, v) in members {
                    let Some(b) = route
                        .args
                        .iter()
                        .find(|b| matches!(b.location, ArgLocation::BodyField) && &b.wire == k)
                    else {
                        return Err(format!(
                            "the request body member `{k}` is not a property of the body of `{}`",
                            def.name()
                        ));
                    };
                    args.insert(b.arg.clone(), v.clone());
                }
            }
            (None, _) => {
                return Err(format!(
                    "the operation `{}` takes no request body of this type",
                    def.name()
                ));
            }
        }
    }
    Ok(args)
}

/// Sends a workflow's steps through the server's call path.
struct ServerSteps<'a> {
    server: &'a ProxyServer,
    state: &'a ToolState,
    retry: &'a Retry,
    context: &'a RequestContext<RoleServer>,
    caller: Caller,
    /// What the steps' forwarders scrub, for the workflow's result.
    secrets: Mutex<Vec<String>>,
    /// The steps that reached the server's checks, in order.
    steps: Mutex<Vec<StepRecord>>,
    /// At most this many steps may reach the server's checks (an `execute` script's calls
    /// left, `--code-max-calls`); none: the workflow's own budgets only.
    budget: Option<usize>,
}

/// One step of a workflow run as a script's list of calls shows it.
#[cfg_attr(not(feature = "code"), allow(dead_code))]
pub(super) struct StepRecord {
    /// The operation's tool.
    pub(super) tool: String,
    /// The API's HTTP status, when it answered.
    pub(super) status: Option<u16>,
    pub(super) ok: bool,
}

/// A workflow's run: its tool result, its steps, and the HTTP status of the step that failed.
#[cfg_attr(not(feature = "code"), allow(dead_code))]
pub(super) struct WorkflowRun {
    pub(super) result: CallToolResult,
    pub(super) steps: Vec<StepRecord>,
    pub(super) status: Option<u16>,
}

impl StepCaller for ServerSteps<'_> {
    fn call<'a>(&'a self, call: StepCall<'a>) -> BoxFuture<'a, Result<StepExchange, CallFailure>> {
        Box::pin(async move {
            let fail = |message: String| CallFailure { message };
            let Some(&i) = self.state.ops.get(&call.operation.tool) else {
                return Err(fail(format!(
                    "the operation's tool `{}` is not served",
                    call.operation.tool
                )));
            };
            let def = Arc::clone(&self.state.set.tools[i]);
            let args = step_args(&def, &call).map_err(fail)?;
            if let Some(budget) = self.budget
                && self.steps.lock().map_or(0, |s| s.len()) >= budget
            {
                return Err(fail(format!(
                    "the script's limit of API calls (--code-max-calls) is reached; `{}` was not sent",
                    def.name()
                )));
            }
            let began = Began {
                at: std::time::SystemTime::now(),
                started: Instant::now(),
                caller: self.caller.clone(),
            };
            let mut note = CallNote::default();
            if self.server.inner.opts.observe.is_on() {
                note.state = Some(self.server.state());
            }
            tracing::info!(workflow = call.workflow, step = call.step, tool = %def.name(), "workflow step");
            // A span per step (`tools/call OPERATION`), child of the workflow call's.
            let trace = crate::observe::otel::enabled().then(|| {
                crate::observe::otel::call_span(
                    &crate::observe::otel::Context::current(),
                    def.name(),
                )
            });
            let sent = capture::capturing(self.server.invoke(
                self.state,
                i,
                args,
                self.retry,
                self.context,
                &mut note,
            ));
            let (response, captured) = match &trace {
                Some(cx) => {
                    use crate::observe::otel::FutureExt as _;
                    sent.with_context(cx.clone()).await
                }
                None => sent.await,
            };
            // Metrics and the audit log see the operation's call, as a tool call of its own.
            if note.state.is_some() {
                note.op = Some(i);
            }
            self.server
                .record_call(def.name(), began, &note, &response, trace.as_ref());
            if let Ok(mut steps) = self.steps.lock() {
                steps.push(StepRecord {
                    tool: def.name().to_string(),
                    status: note.status,
                    ok: matches!(&response, Ok(CallToolResponse::Complete(r)) if r.is_error != Some(true)),
                });
            }
            let result = match response {
                Ok(CallToolResponse::Complete(r)) => r,
                Ok(_) => {
                    return Err(fail(
                        "the call asked for more input or became a task, which a workflow step cannot wait for".into(),
                    ));
                }
                Err(e) => return Err(fail(e.message.to_string())),
            };
            let Some(c) = captured else {
                // Nothing was sent (invalid arguments, no confirmation, a missing credential):
                // the result says why.
                let text: Vec<String> = result
                    .content
                    .iter()
                    .filter_map(|b| b.as_text().map(|t| t.text.clone()))
                    .collect();
                return Err(fail(text.join(" ")));
            };
            if let Ok(mut s) = self.secrets.lock() {
                for x in &c.secrets {
                    if !s.contains(x) {
                        s.push(x.clone());
                    }
                }
            }
            Ok(exchange(&call, c))
        })
    }
}

/// The step's exchange as its expressions read it.
fn exchange(call: &StepCall<'_>, c: capture::Captured) -> StepExchange {
    let json = c
        .headers
        .iter()
        .find(|(k, _)| k == "content-type")
        .is_some_and(|(_, v)| {
            let essence = v
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            essence == "application/json" || essence.ends_with("+json")
        });
    let response_body = if c.body.is_empty() {
        None
    } else if json {
        serde_json::from_slice(&c.body).ok()
    } else {
        Some(Value::String(String::from_utf8_lossy(&c.body).into_owned()))
    };
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let of = |at: ParamIn| -> Vec<(String, String)> {
        call.params
            .iter()
            .filter(|p| p.location == at)
            .map(|p| (p.name.clone(), text(&p.value)))
            .collect()
    };
    StepExchange {
        url: c.url,
        method: call.operation.method.as_str().to_ascii_uppercase(),
        status: c.status,
        request_headers: of(ParamIn::Header),
        request_query: of(ParamIn::Query),
        request_path: call
            .params
            .iter()
            .filter(|p| p.location == ParamIn::Path)
            .map(|p| (p.name.clone(), p.value.clone()))
            .collect(),
        request_body: call.body.clone(),
        response_headers: c.headers,
        response_body,
    }
}

impl ProxyServer {
    /// A workflow tool's call: its inputs validated, the workflow run step by step within
    /// `--timeout`.
    pub(super) async fn call_workflow(
        &self,
        state: &ToolState,
        wt: &WorkflowTool,
        args: Map<String, Value>,
        retry: &Retry,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(self
            .run_workflow(state, wt, args, retry, context, None)
            .await
            .result
            .into())
    }

    /// [`Self::call_workflow`]'s run, with the steps it sent; at most `budget` steps reach the
    /// server's checks (an `execute` script's calls left).
    pub(super) async fn run_workflow(
        &self,
        state: &ToolState,
        wt: &WorkflowTool,
        args: Map<String, Value>,
        retry: &Retry,
        context: &RequestContext<RoleServer>,
        budget: Option<usize>,
    ) -> WorkflowRun {
        let name = wt.tool.name.to_string();
        let ended = |result: CallToolResult| WorkflowRun {
            result,
            steps: Vec::new(),
            status: None,
        };
        if let Err(problems) = validate::check(&wt.validator, &wt.tool.input_schema, &args) {
            let text = format!(
                "Invalid arguments for `{name}`; nothing was sent to the API. Fix these and call again:\n- {}",
                problems.join("\n- ")
            );
            return ended(CallToolResult::error(vec![ContentBlock::text(text)]));
        }
        let caller = match context.extensions.get::<http::request::Parts>() {
            Some(parts) => Caller::http(&parts.headers, &parts.extensions),
            None => Caller::stdio(),
        };
        let steps = ServerSteps {
            server: self,
            state,
            retry,
            context,
            caller,
            secrets: Mutex::new(Vec::new()),
            steps: Mutex::new(Vec::new()),
            budget,
        };
        let timeout = self.inner.forwarders[0].options().timeout;
        let started = Instant::now();
        let limits = Limits::default();
        let run = run::run(&wt.workflows, &wt.id, Value::Object(args), &steps, &limits);
        let outcome = tokio::select! {
            r = tokio::time::timeout(timeout, run) => r,
            _ = context.ct.cancelled() => {
                return ended(CallToolResult::error(vec![ContentBlock::text("cancelled by the client")]));
            }
        };
        let mut status = None;
        let mut result = match outcome {
            Ok(Ok(outputs)) => {
                tracing::info!(tool = %name, ms = started.elapsed().as_millis() as u64, ok = true, "workflow");
                CallToolResult::structured(Value::Object(outputs))
            }
            Ok(Err(failure)) => {
                status = failure.status;
                tracing::info!(tool = %name, ms = started.elapsed().as_millis() as u64, ok = false, step = failure.step.as_deref().unwrap_or(""), "workflow");
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "The workflow failed: {failure}."
                ))])
            }
            Err(_) => CallToolResult::error(vec![ContentBlock::text(format!(
                "The workflow `{}` did not finish within {:.0} s (--timeout); the steps already sent were not undone.",
                wt.id,
                timeout.as_secs_f64()
            ))]),
        };
        let secrets = steps.secrets.into_inner().unwrap_or_default();
        if !secrets.is_empty() {
            let mut secrets = secrets;
            secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
            let refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
            crate::forward::scrub::scrub(&mut result, &refs);
        }
        WorkflowRun {
            result,
            steps: steps.steps.into_inner().unwrap_or_default(),
            status,
        }
    }
}

/// At most this many alternatives in a workflow's combined scope requirement; past it the
/// alternatives needing the fewest scopes are kept (stricter, never looser).
const MAX_SCOPE_ALTERNATIVES: usize = 64;

/// The OAuth scopes running `w` needs: every operation its steps may call must be allowed, so
/// the requirement is the product of the operations' alternatives (each alternative of the
/// result is one alternative of each operation, united). Empty: no operation needs a scope.
pub(super) fn required_scopes(state: &ToolState, w: &WorkflowTool) -> Vec<Vec<String>> {
    let mut combined: Vec<Vec<String>> = vec![Vec::new()];
    for tool in w.operation_tools() {
        let Some(&i) = state.ops.get(tool) else {
            continue;
        };
        let required = &state.set.tools[i].route.oauth_scopes;
        if required.is_empty() {
            continue;
        }
        let mut next: Vec<Vec<String>> = Vec::new();
        for have in &combined {
            for alt in required {
                let mut united: Vec<String> = have.iter().chain(alt).cloned().collect();
                united.sort();
                united.dedup();
                next.push(united);
            }
        }
        next.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        next.dedup();
        next.truncate(MAX_SCOPE_ALTERNATIVES);
        combined = next;
    }
    if combined.iter().all(Vec::is_empty) {
        return Vec::new();
    }
    combined
}

#[cfg(test)]
mod tests {
    use super::*;
    use openapi_mcp_arazzo::run::CallParam;
    use openapi_mcp_toolset::Location;
    use openapi_mcp_toolset::model::{
        ApiKeyLocation, ArgBinding, BodyBinding, BodyKind, CredentialParam, PathStyle, Route,
    };
    use serde_json::json;

    fn bind(arg: &str, wire: &str, location: ArgLocation) -> ArgBinding {
        ArgBinding {
            arg: arg.into(),
            wire: wire.into(),
            location,
            required: false,
            content_type: None,
        }
    }

    /// `placeOrder` (POST /orders: an `X-Request-Tag` header, an `X-API-Key` credential
    /// header, a flattened JSON body) of API `api`, and `getOrder` (GET /orders/{id}).
    fn tools(api: usize, prefix: &str) -> Vec<Arc<ToolDef>> {
        let mut post = Route::new(HttpMethod::Post, "/orders");
        post.args = vec![
            bind(
                "tag",
                "X-Request-Tag",
                ArgLocation::Header { explode: false },
            ),
            bind(
                "x_api_key",
                "X-API-Key",
                ArgLocation::Header { explode: false },
            ),
            bind("petId", "petId", ArgLocation::BodyField),
            bind("quantity", "quantity", ArgLocation::BodyField),
        ];
        post.credential_params = vec![CredentialParam {
            name: "X-API-Key".into(),
            location: ApiKeyLocation::Header,
            required: false,
        }];
        post.body = Some(BodyBinding {
            kind: BodyKind::Json,
            content_type: "application/json".into(),
            required: true,
            flattened: true,
            encoding: Vec::new(),
        });
        let mut get = Route::new(HttpMethod::Get, "/orders/{id}");
        get.args = vec![bind(
            "id",
            "id",
            ArgLocation::Path {
                style: PathStyle::Simple,
                explode: false,
            },
        )];
        let def = |name: &str, route: Route, op: &str| {
            let tool = Tool::new(format!("{prefix}{name}"), "", Arc::new(Map::new()));
            let mut d = ToolDef::new(
                tool,
                route,
                Some(op.into()),
                Vec::new(),
                Location::default(),
            );
            d.api = api;
            Arc::new(d)
        };
        vec![
            def("place_order", post, "placeOrder"),
            def("get_order", get, "getOrder"),
        ]
    }

    fn set(tools: Vec<Arc<ToolDef>>) -> ToolSet {
        ToolSet {
            title: "t".into(),
            version: "1".into(),
            description: None,
            tag_descriptions: Vec::new(),
            base_url: None,
            security_schemes: Vec::new(),
            tools,
        }
    }

    #[test]
    fn operations_resolve_per_source_and_leave_credentials_out() {
        let mut all = tools(0, "a_");
        all.extend(tools(1, "b_"));
        let set = set(all);
        let ops = SetOperations {
            set: &set,
            sources: vec![("shop".into(), 0), ("other".into(), 1)],
        };
        // Qualified: the source's own; unqualified and in both: ambiguous.
        assert_eq!(
            ops.by_id(Some("other"), "placeOrder").map(|o| o.tool),
            Some("b_place_order".into())
        );
        assert_eq!(ops.by_id(None, "placeOrder"), None);
        assert_eq!(ops.by_id(Some("nowhere"), "placeOrder"), None);
        let info = ops.by_path("shop", "/orders", "post").expect("by path");
        assert_eq!(info.tool, "a_place_order");
        assert!(info.body_required && !info.read_only && !info.destructive);
        // The credential's header is the forwarder's: not a parameter a step sets.
        let names: Vec<&str> = info.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["X-Request-Tag"]);
        assert!(ops.by_path("shop", "/orders", "delete").is_none());
        let get = ops.by_id(Some("shop"), "getOrder").expect("getOrder");
        assert!(get.read_only);
    }

    fn step<'a>(
        op: &'a OperationInfo,
        params: Vec<CallParam>,
        body: Option<Value>,
    ) -> StepCall<'a> {
        StepCall {
            workflow: "w",
            step: "s",
            operation: op,
            params,
            body,
            content_type: None,
        }
    }

    #[test]
    fn a_step_becomes_its_tools_arguments() {
        let set = set(tools(0, ""));
        let ops = SetOperations {
            set: &set,
            sources: vec![("shop".into(), 0)],
        };
        let op = ops.by_id(None, "placeOrder").expect("op");
        let def = &set.tools[0];
        // Header names match whatever their case; body members go to their own arguments.
        let call = step(
            &op,
            vec![CallParam {
                location: ParamIn::Header,
                name: "x-request-tag".into(),
                value: json!("t1"),
            }],
            Some(json!({"petId": 2, "quantity": 1})),
        );
        assert_eq!(
            Value::Object(step_args(def, &call).expect("args")),
            json!({"tag": "t1", "petId": 2, "quantity": 1})
        );
        // A member the body does not have, a body that is not an object, a parameter the
        // operation does not take: refused before anything is sent, naming it.
        let e = step_args(
            def,
            &step(&op, vec![], Some(json!({"petId": 2, "color": "red"}))),
        );
        assert!(e.is_err_and(|m| m.contains("`color`")));
        let e = step_args(def, &step(&op, vec![], Some(json!([1]))));
        assert!(e.is_err());
        let e = step_args(
            def,
            &step(
                &op,
                vec![CallParam {
                    location: ParamIn::Query,
                    name: "tag".into(),
                    value: json!("x"),
                }],
                None,
            ),
        );
        assert!(e.is_err_and(|m| m.contains("query parameter `tag`")));
    }
}
