//! The server's side of MCP tasks ([`crate::tasks`]): which calls become tasks, and `tasks/get`,
//! `tasks/cancel`, `tasks/update` answered by reading the API through this server's own tools
//! (the GET tool that reads a status URL; a DELETE of it, or a POST of `…/cancel`, to cancel),
//! with the credentials of the request being served.

use super::*;

use openapi_mcp_toolset::model::{HttpMethod, TaskSupport};
use rmcp::model::{CancelTaskParams, CreateTaskResult, GetTaskParams, GetTaskResult};
use tokio_util::sync::CancellationToken;

use crate::tasks::{Finished, Owner, Read, StatusReader, Tasks};

/// Whether the request declared the tasks extension (in its `_meta`, or a 2025-era session's
/// capabilities): only such a request may be answered with a task.
pub(super) fn wants_tasks(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks())
}

/// Who the request's tasks belong to (see [`Owner`]).
pub(super) fn owner_of(context: &RequestContext<RoleServer>) -> Owner {
    let parts = context.extensions.get::<http::request::Parts>();
    let subject = claims_of(context).and_then(|c| c.subject.as_deref());
    let authorization = parts
        .and_then(|p| p.headers.get(http::header::AUTHORIZATION))
        .map(|v| v.as_bytes());
    let session = parts
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok());
    Owner::new(subject, authorization, session)
}

/// Reads the API for a task with the tools of `state` and the credentials of one request.
pub(super) struct Reader<'a> {
    server: &'a ProxyServer,
    state: Arc<ToolState>,
    forwarded: Vec<(String, String)>,
    caller: Option<Arc<crate::forward::Caller>>,
}

impl Reader<'_> {
    async fn send(&self, api: usize, url: &url::Url, method: HttpMethod) -> Option<Read> {
        let fwd = self.server.inner.forwarders.get(api)?;
        let (tool, args) = tool_for_url(&self.state, api, &fwd.options().base_url, url, method)?;
        let &i = self.state.ops.get(&tool)?;
        let route = &self.state.set.tools[i].route;
        let (result, report) = CallScope::new(self.forwarded.clone())
            .with_caller(self.caller.clone())
            .run(fwd.call(route, &args))
            .await;
        tracing::info!(tool = %tool, method = method.as_str(), status = report.status.map(i64::from).unwrap_or(-1), "task poll");
        Some(Read {
            tool,
            result,
            status: report.status,
            accepted_at: report.accepted_at,
            retry_after: report.retry_after,
            see_other: report.see_other,
        })
    }
}

impl StatusReader for Reader<'_> {
    fn read<'a>(
        &'a self,
        api: usize,
        url: &'a url::Url,
    ) -> futures::future::BoxFuture<'a, Option<Read>> {
        Box::pin(self.send(api, url, HttpMethod::Get))
    }

    fn cancel<'a>(
        &'a self,
        api: usize,
        url: &'a url::Url,
    ) -> futures::future::BoxFuture<'a, Option<Read>> {
        Box::pin(async move {
            if let Some(r) = self.send(api, url, HttpMethod::Delete).await {
                return Some(r);
            }
            let path = url.path().trim_end_matches('/').to_string();
            for action in [format!("{path}/cancel"), format!("{path}:cancel")] {
                let mut u = url.clone();
                u.set_path(&action);
                if let Some(r) = self.send(api, &u, HttpMethod::Post).await {
                    return Some(r);
                }
            }
            None
        })
    }

    fn conform(&self, tool: &str, result: CallToolResult) -> CallToolResult {
        match self.state.ops.get(tool) {
            Some(&i) => conform_to_output_schema(
                result,
                None,
                &self.state.set.tools[i],
                &self.state.output_validators[i],
            ),
            None => result,
        }
    }
}

impl ProxyServer {
    fn tasks(&self) -> Option<&Arc<Tasks>> {
        self.inner.opts.tasks.as_ref()
    }

    /// Whether a call of `def` from this request may be answered with a task: the server serves
    /// tasks, the request declared the extension, and the operation's `x-mcp-task` is not
    /// `none`.
    pub(super) fn may_become_task(
        &self,
        def: &ToolDef,
        context: &RequestContext<RoleServer>,
    ) -> bool {
        self.tasks().is_some() && def.task_support != TaskSupport::Never && wants_tasks(context)
    }

    /// What a client's own call of operation `i` (validated) gets before anything is sent, as a
    /// task matter: `x-mcp-task: required` from a request that did not declare the extension is
    /// refused with -32021 (the extension's Missing Required Client Capability). `None`: go on.
    pub(super) async fn task_gate(
        &self,
        state: &ToolState,
        i: usize,
        args: &serde_json::Map<String, Value>,
        select: &Option<(String, String)>,
        retry: &Retry,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        self.tasks()?;
        let def = state.set.tools.get(i)?;
        if def.task_support == TaskSupport::Required && !wants_tasks(context) {
            tracing::info!(tool = %def.name(), "refused: x-mcp-task required, the client did not declare the tasks extension");
            let required = rmcp::model::ClientCapabilities::builder()
                .enable_tasks()
                .build();
            return Some(Err(ErrorData::missing_required_client_capability(required)));
        }
        // `--confirm` inside a task: a fresh call (not a retry carrying a multi-round-trip
        // state) of a guarded tool from a client that declared tasks and can be asked.
        if retry.request_state.is_none()
            && self.inner.opts.confirm.applies_to(def)
            && matches!(self.inner.confirmer, Some(Ok(_)))
            && self.may_become_task(def, context)
            && confirm::can_ask(context)
        {
            return self.confirm_in_task(def, args, select, context).await;
        }
        None
    }

    /// A task in `input_required` asking the user to confirm the call of `def` (the question
    /// `--confirm` asks); the call is sent when `tasks/update` brings the acceptance. `None`
    /// when no task was created (limits, store): the confirmation is asked as without tasks.
    async fn confirm_in_task(
        &self,
        def: &ToolDef,
        args: &serde_json::Map<String, Value>,
        select: &Option<(String, String)>,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        let tasks = self.tasks()?;
        let requests = match confirm::input_requests(def, args) {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let pending = crate::tasks::PendingCall {
            args: args.clone(),
            select: select.clone(),
        };
        let message = format!(
            "Waiting for the user to confirm `{}` (answer inputRequests.{} with tasks/update); nothing was sent to the API.",
            def.name(),
            confirm::KEY
        );
        match tasks
            .awaiting_input(
                &owner_of(context),
                def.name(),
                def.api,
                &requests,
                pending,
                confirm::STATE_TTL,
                message,
            )
            .await
        {
            Ok(Some((_, created))) => {
                tracing::info!(tool = %def.name(), "confirmation asked inside a task");
                Some(Ok(CallToolResponse::Task(created)))
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e.message, "task not created");
                None
            }
        }
    }

    fn reader(&self, context: &RequestContext<RoleServer>) -> Reader<'_> {
        Reader {
            server: self,
            state: self.state(),
            forwarded: self.forwarded_headers(context),
            caller: caller_of(context),
        }
    }

    pub(super) async fn task_get(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let tasks = self
            .tasks()
            .ok_or_else(ErrorData::method_not_found::<rmcp::model::GetTaskMethod>)?;
        let reader = self.reader(&context);
        tasks
            .get(&request.task_id, &owner_of(&context), &reader)
            .await
    }

    pub(super) async fn task_cancel(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let tasks = self
            .tasks()
            .ok_or_else(ErrorData::method_not_found::<rmcp::model::CancelTaskMethod>)?;
        let reader = self.reader(&context);
        tasks
            .cancel(&request.task_id, &owner_of(&context), &reader)
            .await
    }

    pub(super) async fn task_update(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let tasks = self
            .tasks()
            .ok_or_else(ErrorData::method_not_found::<rmcp::model::UpdateTaskMethod>)?;
        let owner = owner_of(&context);
        let cancel = CancellationToken::new();
        let claimed = tasks
            .claim_input(
                &request.task_id,
                &owner,
                &request.input_responses,
                confirm::KEY,
                confirm::is_answer,
                cancel.clone(),
            )
            .await?;
        let Some(claimed) = claimed else {
            // Nothing outstanding for these responses: acknowledged, ignored.
            return Ok(());
        };
        self.confirmed(Arc::clone(tasks), claimed, cancel, &context)
            .await;
        Ok(())
    }

    /// A task's confirmation came: on acceptance the pending call is validated against the
    /// tool as served now and sent (with the credentials of the `tasks/update` request, whose
    /// owner is the task's), its end stored as a `--task-after` call's; otherwise nothing is
    /// sent and the refusal is the task's result.
    async fn confirmed(
        &self,
        tasks: Arc<Tasks>,
        claimed: crate::tasks::Claimed,
        cancel: CancellationToken,
        context: &RequestContext<RoleServer>,
    ) {
        let crate::tasks::Claimed {
            handle,
            tool,
            api,
            call,
            answer,
        } = claimed;
        if let Some(refusal) = confirm::refusal(&tool, &answer) {
            tracing::info!(tool = %tool, "not sent: no confirmation (task)");
            tasks.finish(&handle, api, Finished::NotSent(refusal)).await;
            return;
        }
        let state = self.state();
        let Some(&i) = state.ops.get(&tool) else {
            let gone = CallToolResult::error(vec![ContentBlock::text(format!(
                "`{tool}` is no longer served (the API description changed); nothing was sent to the API."
            ))]);
            tasks.finish(&handle, api, Finished::NotSent(gone)).await;
            return;
        };
        let def = Arc::clone(&state.set.tools[i]);
        if let Err(problems) = validate::check_call(
            &state.validators[i],
            &def.tool().input_schema,
            &def.route,
            &call.args,
        ) {
            let invalid = CallToolResult::error(vec![ContentBlock::text(format!(
                "The arguments of `{tool}` no longer fit the tool as served now; nothing was sent to the API:\n- {}",
                problems.join("\n- ")
            ))]);
            tasks.finish(&handle, api, Finished::NotSent(invalid)).await;
            return;
        }
        tracing::info!(tool = %tool, "confirmed inside a task: sent");
        let running = self.spawn_call(
            Arc::clone(&def),
            call.args,
            call.select,
            self.forwarded_headers(context),
            caller_of(context),
        );
        self.finish_in_background(tasks, handle, running, cancel, state, i, def);
    }

    /// Sends the call of `def` on a task of its own (`--task-after`, a confirmed task).
    fn spawn_call(
        &self,
        def: Arc<ToolDef>,
        args: serde_json::Map<String, Value>,
        select: Option<(String, String)>,
        forwarded: Vec<(String, String)>,
        caller: Option<Arc<crate::forward::Caller>>,
    ) -> tokio::task::JoinHandle<(CallToolResult, CallReport)> {
        let server = self.clone();
        tokio::spawn(async move {
            let fwd = server.forwarder_of(&def);
            let call = async {
                let custom = server
                    .inner
                    .opts
                    .dispatcher
                    .as_ref()
                    .and_then(|d| d(def.name(), fwd, &def.route, args.clone()));
                match custom {
                    Some(f) => f.await,
                    None => fwd.call(&def.route, &args).await,
                }
            };
            CallScope::new(forwarded)
                .with_caller(caller)
                .with_select(select)
                .run(call)
                .await
        })
    }

    /// Stores the end of the call `running` (operation `i` of `current`) as task `handle`'s,
    /// unless `cancel` is tripped first (the request is then dropped): a 202 whose status a
    /// GET tool reads goes on as a polled task, any other answer is the result.
    #[allow(clippy::too_many_arguments)]
    fn finish_in_background(
        &self,
        tasks: Arc<Tasks>,
        handle: crate::tasks::Handle,
        mut running: tokio::task::JoinHandle<(CallToolResult, CallReport)>,
        cancel: CancellationToken,
        current: Arc<ToolState>,
        i: usize,
        def: Arc<ToolDef>,
    ) {
        let server = self.clone();
        let api = def.api;
        tokio::spawn(async move {
            let ended = tokio::select! {
                r = &mut running => r,
                _ = cancel.cancelled() => {
                    running.abort();
                    return;
                }
            };
            let end = match ended {
                Err(e) => Finished::Error(ErrorData::internal_error(
                    format!("the call failed: {e}"),
                    None,
                )),
                Ok((result, report)) => {
                    let fwd = server.forwarder_of(&def);
                    match report.accepted_at.clone() {
                        Some(at)
                            if follow_up(&current, api, &fwd.options().base_url, &at).is_some() =>
                        {
                            Finished::Accepted {
                                status_url: at,
                                retry_after: report.retry_after,
                            }
                        }
                        _ => {
                            let mut result = result;
                            if let Some(at) = &report.accepted_at {
                                result.content.push(ContentBlock::text(accepted_note(
                                    &current, api, fwd, at,
                                )));
                            }
                            Finished::Result(conform_to_output_schema(
                                result,
                                report.full_structured,
                                &def,
                                &current.output_validators[i],
                            ))
                        }
                    }
                }
            };
            tasks.finish(&handle, api, end).await;
        });
    }

    /// A call of `def` the API accepted (202, status at `at`), from a request that declared
    /// tasks: a task, when a GET tool of the server reads the status URL (else `None`: the
    /// call is answered as without tasks).
    pub(super) async fn accepted_task(
        &self,
        state: &ToolState,
        def: &ToolDef,
        at: &url::Url,
        retry_after: Option<std::time::Duration>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<CreateTaskResult>, ErrorData> {
        let Some(tasks) = self.tasks() else {
            return Ok(None);
        };
        if !self.may_become_task(def, context) {
            return Ok(None);
        }
        let fwd = self.forwarder_of(def);
        if follow_up(state, def.api, &fwd.options().base_url, at).is_none() {
            return Ok(None);
        }
        tasks
            .accepted(&owner_of(context), def.name(), def.api, at, retry_after)
            .await
    }

    /// `--task-after`: runs the call of operation `i` (validated, confirmed) on a task of its
    /// own; when it is not done within the threshold and the request declared tasks, answers with
    /// a task whose result the call stores when it ends. `None`: the caller runs the call as
    /// usual (no threshold, no tasks, another tool state).
    ///
    /// The threshold is `--task-after` for operations without `x-mcp-task`; `x-mcp-task:
    /// optional` uses it when set and is a task at once otherwise, `required` is a task at once,
    /// `none` never one.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn call_or_task(
        &self,
        state: &ToolState,
        i: usize,
        args: &serde_json::Map<String, Value>,
        select: &Option<(String, String)>,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        let tasks = Arc::clone(self.tasks()?);
        let after = match state.set.tools.get(i)?.task_support {
            TaskSupport::Never => return None,
            TaskSupport::Inferred => self.inner.opts.task_after?,
            TaskSupport::Optional => self.inner.opts.task_after.unwrap_or_default(),
            TaskSupport::Required => std::time::Duration::ZERO,
        };
        if !wants_tasks(context) {
            return None;
        }
        let current = self.state();
        if !std::ptr::eq(Arc::as_ptr(&current), state) {
            return None;
        }
        let def = Arc::clone(&current.set.tools[i]);
        let mut running = self.spawn_call(
            Arc::clone(&def),
            args.clone(),
            select.clone(),
            self.forwarded_headers(context),
            caller_of(context),
        );
        let ended = if after.is_zero() {
            None
        } else {
            tokio::select! {
                r = &mut running => Some(r),
                _ = tokio::time::sleep(after) => None,
                _ = context.ct.cancelled() => {
                    running.abort();
                    return Some(Ok(CallToolResult::error(vec![ContentBlock::text("cancelled by the client")]).into()));
                }
            }
        };
        if let Some(ended) = ended {
            // Done within the threshold: the answer as without tasks.
            let (result, report) = match ended {
                Ok(r) => r,
                Err(e) => {
                    return Some(Err(ErrorData::internal_error(
                        format!("the call failed: {e}"),
                        None,
                    )));
                }
            };
            return Some(Ok(self
                .settle(&current, i, &def, result, report, context)
                .await));
        }
        let cancel = CancellationToken::new();
        let owner = owner_of(context);
        let created = match tasks.in_flight(&owner, def.name(), cancel.clone()).await {
            Ok(Some(c)) => c,
            // No room for a task (or no store): wait for the answer as usual.
            Ok(None) | Err(_) => {
                let (result, report) = match running.await {
                    Ok(r) => r,
                    Err(e) => {
                        return Some(Err(ErrorData::internal_error(
                            format!("the call failed: {e}"),
                            None,
                        )));
                    }
                };
                return Some(Ok(self
                    .settle(&current, i, &def, result, report, context)
                    .await));
            }
        };
        let (handle, create) = created;
        self.finish_in_background(tasks, handle, running, cancel, current, i, def);
        Some(Ok(CallToolResponse::Task(create)))
    }

    /// The answer of a call that ended within `--task-after` (what [`Self::invoke`] does after
    /// the forwarder: a 202 becomes a task or a note; the output schema is applied).
    async fn settle(
        &self,
        state: &ToolState,
        i: usize,
        def: &ToolDef,
        result: CallToolResult,
        report: CallReport,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        if let Some(at) = &report.accepted_at {
            match self
                .accepted_task(state, def, at, report.retry_after, context)
                .await
            {
                Ok(Some(created)) => return CallToolResponse::Task(created),
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e.message, "task not created"),
            }
            let mut result = result;
            let fwd = self.forwarder_of(def);
            result
                .content
                .push(ContentBlock::text(accepted_note(state, def.api, fwd, at)));
            return conform_to_output_schema(
                result,
                report.full_structured,
                def,
                &state.output_validators[i],
            )
            .into();
        }
        conform_to_output_schema(
            result,
            report.full_structured,
            def,
            &state.output_validators[i],
        )
        .into()
    }
}
