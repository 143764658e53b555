//! The call path: a `tools/call` through validation, confirmation, the forwarder, `--poll`,
//! output shaping, metrics and the audit log.

use super::*;

/// What the call path tells metrics and the audit log about a call, besides its result.
#[derive(Default)]
pub(super) struct CallNote {
    /// The operation called (directly or through `call_operation`), once known.
    pub(super) op: Option<usize>,
    /// The state that operation index is of.
    pub(super) state: Option<Arc<ToolState>>,
    /// An outcome the result alone does not tell (invalid arguments, cancelled).
    pub(super) outcome: Option<Outcome>,
    pub(super) status: Option<u16>,
    pub(super) exchange: Exchange,
    /// The call is the client's own (a tool call or `call_operation`), which may become an MCP
    /// task; not a script's `api.*` call or a workflow step, which wait for their answer.
    pub(super) may_be_task: bool,
    /// The workflow called through `call_operation` (its name labels the call, as a call of
    /// its own tool would be).
    pub(super) workflow: Option<String>,
}

/// When and by whom a call was made (for the audit log and the latency histogram).
pub(super) struct Began {
    pub(super) at: std::time::SystemTime,
    pub(super) started: Instant,
    pub(super) caller: Caller,
}

/// Takes a call off the in-flight gauge however the call ends (its future may be dropped).
pub(super) struct InFlight<'a>(pub(super) &'a crate::observe::Metrics, pub(super) Instant);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.call_ended(self.1.elapsed());
    }
}

impl ProxyServer {
    /// [`Self::handle_call`] with metrics and the audit log.
    pub(super) async fn observed_call(
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
        let trace = crate::observe::otel::enabled().then(|| {
            let headers = context
                .extensions
                .get::<http::request::Parts>()
                .map(|p| &p.headers);
            let parent = crate::observe::otel::caller_context(Some(&context.meta.0), headers);
            crate::observe::otel::call_span(&parent, &tool)
        });
        let response = match &trace {
            Some(cx) => {
                use crate::observe::otel::FutureExt as _;
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
    pub(super) fn record_call(
        &self,
        tool: &str,
        Began {
            at,
            started,
            caller,
        }: Began,
        note: &CallNote,
        response: &Result<CallToolResponse, ErrorData>,
        trace: Option<&crate::observe::otel::Context>,
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
            None if note.workflow.is_some() => note.workflow.as_deref().unwrap_or(tool),
            None if self.has_tool(tool) => tool,
            None => crate::observe::UNKNOWN_TOOL,
        };
        if let Some(cx) = trace {
            crate::observe::otel::end_call(
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

    pub(super) async fn handle_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        note: &mut CallNote,
    ) -> Result<CallToolResponse, ErrorData> {
        let state = self.state();
        if self.inner.opts.observe.is_on() {
            note.state = Some(Arc::clone(&state));
        }
        note.may_be_task = true;
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
                    let target = discovery::target(&state, op_name);
                    if matches!(target, discovery::Target::Unknown) {
                        return Ok(unknown_operation(&state, d, op_name).into());
                    }
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
                    return match target {
                        discovery::Target::Workflow(w) => {
                            note.workflow = Some(w.tool.name.to_string());
                            self.call_workflow(&state, w, op_args, &retry, &context)
                                .await
                        }
                        discovery::Target::Operation(i) => {
                            self.invoke(&state, i, op_args, &retry, &context, note)
                                .await
                        }
                        discovery::Target::Unknown => {
                            Ok(unknown_operation(&state, d, op_name).into())
                        }
                    };
                }
            }
            .into());
        }
        if let Some(w) = state.listed_workflow(name) {
            let args = request.arguments.unwrap_or_default();
            return self.call_workflow(&state, w, args, &retry, &context).await;
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
    pub(super) async fn invoke(
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
        let select = match checked_arguments(state, i, &mut args) {
            Ok(select) => select,
            Err(text) => {
                note.outcome = Some(Outcome::Invalid);
                return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
            }
        };
        // Tasks (`x-mcp-task: required` from a client without the extension; `--confirm` asked
        // inside a task), after validation and before anything reaches the API.
        if note.may_be_task
            && let Some(answer) = self
                .task_gate(state, i, &args, &select, retry, context)
                .await
        {
            return answer;
        }
        // The user's consent (`--confirm`), after validation (nobody is asked about a call that
        // could not be sent) and before anything reaches the API.
        if self.inner.opts.confirm.applies_to(def)
            && let Some(answer) = self.unconfirmed(def, &args, retry, context).await
        {
            return answer;
        }
        let _permit = match &self.inner.limiter {
            Some(s) => Some(
                s.acquire()
                    .await
                    .map_err(|_| ErrorData::internal_error("server is shutting down", None))?,
            ),
            None => None,
        };
        // --task-after: the call runs on a task of its own and may become an MCP task.
        if note.may_be_task
            && let Some(answer) = self.call_or_task(state, i, &args, &select, context).await
        {
            return answer;
        }
        // A 202 answer to a request that declared tasks becomes a task instead of being polled.
        let task_client = note.may_be_task && self.may_become_task(def, context);
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
                Some(at) if self.inner.opts.poll && !task_client => {
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
        let work = crate::server::progress::while_pending(
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
        if task_client
            && let Some(at) = &report.accepted_at
            && let Some(created) = self
                .accepted_as_task(state, def, at, report.retry_after, context)
                .await
        {
            return Ok(CallToolResponse::Task(created));
        }
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

    /// `--confirm` for a call that needs it: `None` when it may be sent, else the answer to
    /// give instead (the user declined, or cannot be asked).
    async fn unconfirmed(
        &self,
        def: &ToolDef,
        args: &serde_json::Map<String, Value>,
        retry: &Retry,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        let gate = match &self.inner.confirmer {
            Some(Ok(c)) => c.gate(def, args, retry, context).await,
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
            Gate::Send => None,
            Gate::Answer(response) => {
                tracing::info!(tool = %def.name(), method = route_method(def), "not sent: no confirmation");
                Some(Ok(response))
            }
            Gate::Refuse(e) => Some(Err(e)),
        }
    }

    /// A 202 answer to a client that declared tasks: the MCP task it becomes, when one was
    /// created (a failure to create one is logged, and the call answers as without tasks).
    async fn accepted_as_task(
        &self,
        state: &ToolState,
        def: &ToolDef,
        at: &url::Url,
        retry_after: Option<std::time::Duration>,
        context: &RequestContext<RoleServer>,
    ) -> Option<rmcp::model::CreateTaskResult> {
        match self
            .accepted_task(state, def, at, retry_after, context)
            .await
        {
            Ok(Some(created)) => {
                let route = &def.route;
                tracing::info!(tool = %def.name(), method = route.method.as_str(), path = %route.path, status = 202, "call became a task");
                Some(created)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e.message, "task not created");
                None
            }
        }
    }
}

/// The arguments of a call of operation `i`, checked before anything is sent: its selection
/// argument taken out and checked, then the rest validated against the operation's schema.
/// `Err` is the text of the tool error saying what to fix.
fn checked_arguments(
    state: &ToolState,
    i: usize,
    args: &mut serde_json::Map<String, Value>,
) -> Result<Option<(String, String)>, String> {
    let def = &state.set.tools[i];
    // The selection argument is the server's: checked here, never validated against the
    // operation's schema nor sent.
    let select = match state.select_args[i].as_ref() {
        Some(name) => match args.remove(name) {
            None | Some(Value::Null) => None,
            Some(Value::String(expr)) => match crate::forward::fit::check_selection(&expr) {
                Ok(()) => Some((name.clone(), expr)),
                Err(e) => {
                    return Err(format!(
                        "Invalid arguments for `{}`; nothing was sent to the API. Fix these and call again:\n- `{name}`: {e}",
                        def.name()
                    ));
                }
            },
            Some(other) => {
                return Err(format!(
                    "Invalid arguments for `{}`; nothing was sent to the API. Fix these and call again:\n- `{name}`: must be a string (a JMESPath expression), got {}",
                    def.name(),
                    json_type(&other)
                ));
            }
        },
        None => None,
    };
    let validated = {
        let _span = crate::observe::otel::step("validate arguments");
        validate::check_call(
            &state.validators[i],
            &def.tool().input_schema,
            &def.route,
            args,
        )
    };
    if let Err(problems) = validated {
        return Err(format!(
            "Invalid arguments for `{}`; nothing was sent to the API. Fix these and call again:\n- {}",
            def.name(),
            problems.join("\n- ")
        ));
    }
    Ok(select)
}

impl ProxyServer {
    /// `--poll`: follows a `202 Accepted` to its end within `--timeout` (counted from the call's
    /// start) through the GET tool that reads its status URL, so credentials, validation and
    /// scrubbing are those of any call. Waits 1, 2, 3, then 5 s between polls; the operation is
    /// still going while the status URL answers 202, or a JSON `status` says so (Azure's
    /// `Running`, `InProgress`, `NotStarted`…). Without such a GET tool, or past the timeout, the
    /// result says where the status is and which call reads it, as without `--poll`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn poll(
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
pub(super) const POLL_WAITS: [std::time::Duration; 4] = [
    std::time::Duration::from_secs(1),
    std::time::Duration::from_secs(2),
    std::time::Duration::from_secs(3),
    std::time::Duration::from_secs(5),
];

/// A long-running operation's `status` that means it goes on (Azure, Google, AWS spellings).
pub(super) fn still_running(status: &str) -> bool {
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

pub(super) fn route_method(def: &ToolDef) -> &'static str {
    def.route.method.as_str()
}

/// What a `202 Accepted` result tells the model: the operation goes on, where its status is,
/// and, when a GET tool of this server reads that URL, the exact call that checks it. The URL is
/// shown without its query (status URLs can carry signed tokens).
pub(super) fn accepted_note(
    state: &ToolState,
    api: usize,
    fwd: &Forwarder,
    at: &url::Url,
) -> String {
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
pub(super) fn follow_up(
    state: &ToolState,
    api: usize,
    base: &url::Url,
    url: &url::Url,
) -> Option<(String, serde_json::Map<String, Value>)> {
    tool_for_url(
        state,
        api,
        base,
        url,
        openapi_mcp_toolset::model::HttpMethod::Get,
    )
}

/// The `method` tool of API `api` whose path template matches `url` (as [`follow_up`]).
pub(super) fn tool_for_url(
    state: &ToolState,
    api: usize,
    base: &url::Url,
    url: &url::Url,
    method: openapi_mcp_toolset::model::HttpMethod,
) -> Option<(String, serde_json::Map<String, Value>)> {
    if url.origin() != base.origin() {
        return None;
    }
    let rest = url.path().strip_prefix(base.path().trim_end_matches('/'))?;
    let segments: Vec<&str> = rest.trim_matches('/').split('/').collect();
    let mut best: Option<(usize, String, serde_json::Map<String, Value>)> = None;
    for def in state.set.tools.iter() {
        let route = &def.route;
        if def.api != api || route.method != method || route.server.is_some() {
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
pub(super) fn conform_to_output_schema(
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
pub(super) fn selection_arg(def: &ToolDef) -> Option<String> {
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
pub(super) fn with_selection(t: &Tool, arg: Option<&str>) -> Tool {
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

pub(super) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
