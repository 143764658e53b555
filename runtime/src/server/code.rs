//! `--mode code`'s driver: runs a script on its own thread (the sandbox is
//! [`crate::modes::code`]) and serves its `api.*` calls through the call path.

use super::*;

#[cfg(feature = "code")]
impl ProxyServer {
    /// `execute` (code mode): runs the script on a thread of its own and serves its `api.*` calls
    /// here, through [`ProxyServer::invoke`] like any tool call, until it ends, runs out of time
    /// or the client cancels.
    pub(super) async fn execute(
        &self,
        state: &Arc<ToolState>,
        args: &serde_json::Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        use crate::modes::code::{Script, ScriptError};
        let limits = match &self.inner.opts.mode {
            ToolMode::Code(limits) => *limits,
            _ => crate::modes::code::CodeLimits::default(),
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
        let operations: Vec<String> = state.script_functions();
        let (calls_tx, mut calls_rx) = tokio::sync::mpsc::channel(1);
        let script = Script {
            code,
            operations,
            limits,
            deadline,
            stop: Arc::clone(&stop),
        };
        let mut done = match crate::modes::code::spawn(script, calls_tx) {
            Ok(rx) => rx,
            Err(e) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "the script could not be started ({e}); nothing was sent to the API"
                ))])
                .into());
            }
        };
        let mut made: Vec<Value> = Vec::new();
        let late = tokio::time::Instant::from_std(deadline + crate::modes::code::GRACE);
        let end = loop {
            tokio::select! {
                end = &mut done => break end.ok(),
                Some(call) = calls_rx.recv() => {
                    self.serve_script_call(state, call, &limits, deadline, context, &mut made).await;
                }
                _ = tokio::time::sleep_until(late) => break None,
                _ = context.ct.cancelled() => {
                    tracing::info!(tool = crate::modes::code::EXECUTE, calls = made.len(), "cancelled by the client");
                    return Ok(CallToolResult::error(vec![ContentBlock::text("cancelled by the client")]).into());
                }
            }
        };
        let end = end.unwrap_or_else(|| crate::modes::code::ScriptEnd {
            outcome: Err(ScriptError::Timeout(limits.timeout)),
            logs: Vec::new(),
            logs_cut: false,
            returned_nothing: false,
        });
        let ok = end.outcome.is_ok();
        tracing::info!(
            tool = crate::modes::code::EXECUTE,
            calls = made.len(),
            ok,
            ms = started.elapsed().as_millis() as u64,
            "script"
        );
        Ok(Self::script_result(end, &made, &limits))
    }

    /// Answers one `api.*` call of a script running under `limits` until `deadline`: refused past
    /// `--code-max-calls`, an error after the deadline, else the call's answer (its record is
    /// added to `made`).
    async fn serve_script_call(
        &self,
        state: &Arc<ToolState>,
        call: crate::modes::code::ApiCall,
        limits: &crate::modes::code::CodeLimits,
        deadline: Instant,
        context: &RequestContext<RoleServer>,
        made: &mut Vec<Value>,
    ) {
        use crate::modes::code::Answer;
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
            let left = limits.max_calls - made.len();
            match tokio::time::timeout_at(
                call_deadline,
                self.script_call(state, &call.operation, call.args, context, left),
            )
            .await
            {
                Ok((answer, sent)) => {
                    made.extend(sent);
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

    /// `execute`'s result once the script ended: its result (or error), the API calls it `made`
    /// and its console output (`logs`), cut to `--code-max-output`.
    fn script_result(
        end: crate::modes::code::ScriptEnd,
        made: &[Value],
        limits: &crate::modes::code::CodeLimits,
    ) -> CallToolResponse {
        use crate::modes::code::ScriptError;
        let mut logs = end.logs;
        if end.logs_cut {
            logs.push(format!(
                "[console output cut at {} bytes]",
                crate::modes::code::MAX_LOG_BYTES
            ));
        }
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
                    return CallToolResult::error(vec![ContentBlock::text(format!(
                        "The script ran, but {e}. {}",
                        calls_line(made)
                    ))])
                    .into();
                }
                let mut content = vec![ContentBlock::text(text)];
                if end.returned_nothing {
                    content.push(ContentBlock::text(
                        "[openapi-mcp: the script returned nothing; end it with `return value` to get a result.]",
                    ));
                }
                let mut r = CallToolResult::success(content);
                r.structured_content = Some(structured);
                r.into()
            }
            Err(e) => {
                let mut text = format!("The script failed: {e}.\n{}", calls_line(made));
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
                let text = crate::modes::code::cut_text(&text, limits.max_output);
                let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
                r.structured_content = Some(serde_json::json!({
                    "error": crate::modes::code::cut_text(&e.to_string(), limits.max_output),
                    "calls": made,
                    "logs": logs,
                }));
                r.into()
            }
        }
    }

    /// One `api.*` call of a script: validated and forwarded by [`ProxyServer::invoke`] (a
    /// workflow's: run by [`ProxyServer::run_workflow`], at most `left` of its steps sent).
    /// Returns what the script gets and the records of the calls that reached the server's
    /// checks (a workflow: one per step, naming it).
    pub(super) async fn script_call(
        &self,
        state: &Arc<ToolState>,
        operation: &str,
        args: serde_json::Map<String, Value>,
        context: &RequestContext<RoleServer>,
        left: usize,
    ) -> (crate::modes::code::Answer, Vec<Value>) {
        use crate::modes::code::Answer;
        let i = match discovery::target(state, operation) {
            discovery::Target::Operation(i) => i,
            discovery::Target::Workflow(wt) => {
                return self.script_workflow(state, wt, args, context, left).await;
            }
            discovery::Target::Unknown => {
                let answer = Answer::Err {
                    message: format!(
                        "unknown operation `{operation}`; nothing was sent to the API"
                    ),
                    status: None,
                };
                return (answer, Vec::new());
            }
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
            return (answer, vec![record]);
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
            Ok(CallToolResponse::Complete(r)) => Answer::Ok(crate::modes::code::answer_value(
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
        (answer, vec![record])
    }

    /// A script's call of a workflow (#39): run as a call of its tool would be (its steps
    /// through the call path, with the same checks, records and scrubbing), at most `left` of
    /// its steps sent (each step counts as one of the script's API calls). The script gets
    /// the workflow's outputs, or an Error with the tool error's text (and the failed step's
    /// HTTP status).
    async fn script_workflow(
        &self,
        state: &Arc<ToolState>,
        wt: &super::workflow::WorkflowTool,
        args: serde_json::Map<String, Value>,
        context: &RequestContext<RoleServer>,
        left: usize,
    ) -> (crate::modes::code::Answer, Vec<Value>) {
        use crate::modes::code::Answer;
        let name = wt.tool.name.to_string();
        // The token's scopes: those of every operation it may call.
        if let Some(claims) = claims_of(context) {
            for tool in wt.operation_tools() {
                let Some(&i) = state.ops.get(tool) else {
                    continue;
                };
                let required = &state.set.tools[i].route.oauth_scopes;
                if !claims.allows(required) {
                    let scope = crate::oauth::challenge_scopes(claims, required).join(" ");
                    let answer = Answer::Err {
                        message: format!(
                            "insufficient scope: the workflow `{name}` calls `{tool}`, which needs the scope(s) {scope}; nothing was sent to the API"
                        ),
                        status: None,
                    };
                    return (answer, Vec::new());
                }
            }
        }
        let run = self
            .run_workflow(state, wt, args, &Retry::default(), context, Some(left))
            .await;
        let records = run
            .steps
            .iter()
            .map(|s| {
                serde_json::json!({
                    "operation": s.tool, "status": s.status, "ok": s.ok, "workflow": name
                })
            })
            .collect();
        let r = run.result;
        let answer = if r.is_error == Some(true) {
            let text: Vec<&str> = r
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                .collect();
            Answer::Err {
                message: text.join("\n"),
                status: run.status,
            }
        } else {
            Answer::Ok(r.structured_content.unwrap_or(Value::Null))
        };
        (answer, records)
    }
}

/// Without the `code` feature no server is in code mode (`--mode code` is refused at start-up,
/// [`crate::serve::ServeArgs::check_features`]), so `execute` is never one of its tools.
#[cfg(not(feature = "code"))]
impl ProxyServer {
    pub(super) async fn execute(
        &self,
        _state: &Arc<ToolState>,
        _args: &serde_json::Map<String, Value>,
        _context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Err(ErrorData::invalid_params(
            crate::features::Feature::Code.missing("--mode code"),
            None,
        ))
    }
}
