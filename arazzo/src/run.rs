//! The workflow executor: runs a usable workflow of [`Workflows`] against the integrator's
//! [`StepCaller`] (which sends each step's HTTP request through its forwarder).
//!
//! Semantics (Arazzo 1.0.1, and the decisions where the specification leaves room):
//! - `dependsOn` workflows run first, in order, each with the caller's inputs; their inputs and
//!   outputs are then `$workflows.ID.inputs` / `$workflows.ID.outputs`.
//! - Steps run in document order. A step succeeds when every `successCriteria` holds; a step
//!   without criteria succeeds when its call returned a 2xx status (a step calling a workflow:
//!   when that workflow succeeded). A criterion that cannot be evaluated fails the step.
//! - After a step, its `onSuccess` (or `onFailure`) actions, then the workflow's
//!   `successActions` (`failureActions`) it does not override by name, are tried in order: the
//!   first whose `criteria` all hold wins (an action without criteria always matches; a
//!   criterion that cannot be evaluated does not match). No success action: the next step. No
//!   failure action: the workflow fails.
//! - `end` on success ends the workflow with its outputs; `end` on failure fails it. `goto` a
//!   step continues there; `goto` a workflow runs it (with the current inputs) and then ends the
//!   current workflow with its outputs.
//! - `retry` waits `retryAfter` seconds, or what the response's `Retry-After` header says when it
//!   has one in seconds (the specification: the header SHOULD overrule), then runs the step
//!   again, after running the `stepId`/`workflowId` it names if any. Each retry action allows
//!   `retryLimit` retries (default 1, at most [`Limits::max_retries`]) per step until the step
//!   succeeds; an exhausted retry action is skipped for the next matching failure action. A
//!   wait longer than [`Limits::max_retry_delay`] fails the step instead of waiting.
//! - A parameter whose value is absent (`$inputs.x` not given, a missing output) or `null` is
//!   not sent, unless the operation requires it (then the workflow fails naming it); a request
//!   body member that is a bare expression whose value is absent is left out.
//! - Step outputs are evaluated after a successful step; workflow outputs when the workflow
//!   ends; an output whose value is absent (a step skipped by a `goto`) is left out.
//! - Budgets ([`Limits`]): steps executed per run (nested workflows, gotos and retries
//!   included), nesting depth of workflows, retries per action. Wall time is the caller's (drop
//!   the future to cancel: nothing runs in the background).
//!
//! Errors name the workflow, the step, the HTTP status and the criterion, never a value sent or
//! received (header values, bodies).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use openapi_mcp_toolset::model::ParamIn;
use serde_json::{Map, Value};

use crate::expr::{EvalError, Exchange, MAX_WALK_DEPTH, Scope, eval_value};
use crate::load::{Action, ActionKind, Body, Jump, Target, Workflow, WorkflowRef};
use crate::validate::{OperationInfo, Workflows};

/// Steps executed in one run (every attempt, in every nested workflow).
pub const MAX_STEPS: usize = 200;
/// Workflows running inside one another (a step calling a workflow, `dependsOn`, a `goto` or
/// `retry` to a workflow), the called workflow at depth 1.
pub const MAX_DEPTH: usize = 8;
/// The most retries one `retry` action allows, whatever its `retryLimit`.
pub const MAX_RETRIES: u64 = 10;
/// The longest wait before a retry.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

/// The budgets of a run (defaults: the constants above).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_steps: usize,
    pub max_depth: usize,
    pub max_retries: u64,
    pub max_retry_delay: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: MAX_STEPS,
            max_depth: MAX_DEPTH,
            max_retries: MAX_RETRIES,
            max_retry_delay: MAX_RETRY_DELAY,
        }
    }
}

/// One parameter of a call, evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct CallParam {
    pub location: ParamIn,
    pub name: String,
    pub value: Value,
}

/// One step's operation call, evaluated: what the integrator sends.
#[derive(Debug)]
pub struct StepCall<'a> {
    pub workflow: &'a str,
    pub step: &'a str,
    pub operation: &'a OperationInfo,
    /// In the order the step (after the workflow's) lists them.
    pub params: Vec<CallParam>,
    /// The request body (`payload` evaluated, `replacements` applied); a string is sent as it
    /// is (a templated text body).
    pub body: Option<Value>,
    /// The step's `contentType`; `None`: the operation's.
    pub content_type: Option<&'a str>,
}

/// A call that returned no HTTP response (refused by a policy, a network error). Its message
/// is shown to the user: no secrets.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CallFailure {
    pub message: String,
}

/// How steps reach the API: the integrator sends the request (credentials, validation,
/// policies, audit) and returns the exchange (`status`, headers and a parsed body at least).
pub trait StepCaller: Send + Sync {
    fn call<'a>(&'a self, call: StepCall<'a>) -> BoxFuture<'a, Result<Exchange, CallFailure>>;
}

/// Why a workflow failed: the innermost workflow and step, the HTTP status, the criterion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkflowFailure {
    pub workflow: String,
    pub step: Option<String>,
    pub status: Option<u16>,
    /// The condition that did not hold.
    pub criterion: Option<String>,
    pub message: String,
}

impl std::fmt::Display for WorkflowFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "workflow `{}`", self.workflow)?;
        if let Some(s) = &self.step {
            write!(f, ", step `{s}`")?;
        }
        if let Some(st) = self.status {
            write!(f, " (HTTP {st})")?;
        }
        f.write_str(": ")?;
        if let Some(c) = &self.criterion {
            write!(f, "success criterion `{c}` not met")?;
            if !self.message.is_empty() {
                write!(f, " ({})", self.message)?;
            }
            Ok(())
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for WorkflowFailure {}

/// Runs the usable workflow `id` with `inputs` (an object; the integrator has validated it
/// against the tool's inputSchema). `Ok`: the workflow's outputs.
pub async fn run(
    workflows: &Workflows,
    id: &str,
    inputs: Value,
    caller: &dyn StepCaller,
    limits: &Limits,
) -> Result<Map<String, Value>, WorkflowFailure> {
    let fail = |message: String| WorkflowFailure {
        workflow: id.to_string(),
        step: None,
        status: None,
        criterion: None,
        message,
    };
    let Some(wf) = workflows.get(id) else {
        return Err(fail("no such usable workflow".into()));
    };
    if !inputs.is_object() {
        return Err(fail("the inputs must be an object".into()));
    }
    let exec = Executor {
        workflows,
        caller,
        limits,
        steps: AtomicUsize::new(0),
    };
    exec.workflow(wf, inputs, 0).await
}

struct Executor<'a> {
    workflows: &'a Workflows,
    caller: &'a dyn StepCaller,
    limits: &'a Limits,
    /// Steps executed so far in this run.
    steps: AtomicUsize,
}

/// What running one step gave.
struct Outcome {
    exchange: Option<Exchange>,
    /// The called workflow's outputs (a step that calls a workflow).
    nested: Option<Map<String, Value>>,
    /// Why it failed without a response (or the called workflow's failure).
    failure: Option<WorkflowFailure>,
}

/// One running workflow's state.
struct Frame<'w> {
    wf: &'w Workflow,
    inputs: Value,
    /// step id -> {"outputs": {...}}
    steps: Map<String, Value>,
    /// workflow id -> {"inputs": ..., "outputs": ...}
    workflows: Map<String, Value>,
}

enum Next {
    Step(usize),
    End,
    Fail(WorkflowFailure),
}

impl<'a> Executor<'a> {
    fn failure(&self, wf: &Workflow, step: Option<&str>, message: String) -> WorkflowFailure {
        WorkflowFailure {
            workflow: wf.id.clone(),
            step: step.map(str::to_string),
            status: None,
            criterion: None,
            message,
        }
    }

    fn resolve(&self, r: &WorkflowRef) -> Option<&'a Workflow> {
        match r {
            WorkflowRef::Local(id) => self.workflows.get(id),
            WorkflowRef::External { .. } => None,
        }
    }

    fn scope<'s>(
        &'s self,
        frame: &'s Frame<'_>,
        exchange: Option<&'s Exchange>,
        outputs: Option<&'s Map<String, Value>>,
    ) -> Scope<'s> {
        let doc = self.workflows.document();
        Scope {
            inputs: &frame.inputs,
            steps: &frame.steps,
            workflows: &frame.workflows,
            outputs,
            source_descriptions: doc.source_values(),
            components: doc.components(),
            exchange,
        }
    }

    fn workflow<'s>(
        &'s self,
        wf: &'a Workflow,
        inputs: Value,
        depth: usize,
    ) -> BoxFuture<'s, Result<Map<String, Value>, WorkflowFailure>> {
        Box::pin(async move {
            if depth > self.limits.max_depth {
                return Err(self.failure(
                    wf,
                    None,
                    format!(
                        "workflows nested deeper than {} (MAX_DEPTH)",
                        self.limits.max_depth
                    ),
                ));
            }
            let mut frame = Frame {
                wf,
                inputs,
                steps: Map::new(),
                workflows: Map::new(),
            };
            for d in &wf.depends_on {
                let Some(dep) = self.resolve(d) else {
                    return Err(self.failure(wf, None, format!("cannot run dependency `{d}`")));
                };
                let out = self.workflow(dep, frame.inputs.clone(), depth + 1).await?;
                record(&mut frame.workflows, &dep.id, &frame.inputs, out);
            }
            let mut retries: HashMap<(usize, usize), u64> = HashMap::new();
            let mut i = 0;
            while i < wf.steps.len() {
                match self.step(&mut frame, i, depth, &mut retries).await {
                    Next::Step(j) => i = j,
                    Next::End => break,
                    Next::Fail(f) => return Err(f),
                }
            }
            let scope = self.scope(&frame, None, None);
            let mut outputs = Map::new();
            for o in &wf.outputs {
                if let Ok(v) = o.expr.eval(&scope) {
                    outputs.insert(o.name.clone(), v);
                }
            }
            Ok(outputs)
        })
    }

    /// Runs step `i` once and decides what comes next (retries loop here).
    async fn step(
        &self,
        frame: &mut Frame<'a>,
        i: usize,
        depth: usize,
        retries: &mut HashMap<(usize, usize), u64>,
    ) -> Next {
        let wf = frame.wf;
        let step = &wf.steps[i];
        loop {
            let outcome = match self.attempt(frame, i, depth).await {
                Ok(o) => o,
                Err(f) => return Next::Fail(f),
            };
            let status = outcome.exchange.as_ref().map(|x| x.status);
            // Success?
            let verdict: Result<(), WorkflowFailure> = if let Some(f) = &outcome.failure {
                Err(f.clone())
            } else {
                let scope = self.scope(frame, outcome.exchange.as_ref(), outcome.nested.as_ref());
                let mut verdict = Ok(());
                if step.success_criteria.is_empty()
                    && let Some(st) = status
                    && !(200..300).contains(&st)
                {
                    verdict = Err(WorkflowFailure {
                        workflow: wf.id.clone(),
                        step: Some(step.id.clone()),
                        status,
                        criterion: None,
                        message: "the response status is not 2xx (the step has no successCriteria)"
                            .into(),
                    });
                }
                for c in &step.success_criteria {
                    let message = match c.criterion.check(&scope) {
                        Ok(true) => continue,
                        Ok(false) => String::new(),
                        Err(e) => format!("cannot be evaluated: {e}"),
                    };
                    verdict = Err(WorkflowFailure {
                        workflow: wf.id.clone(),
                        step: Some(step.id.clone()),
                        status,
                        criterion: Some(c.criterion.condition().to_string()),
                        message,
                    });
                    break;
                }
                verdict
            };
            match verdict {
                Ok(()) => {
                    retries.retain(|(s, _), _| *s != i);
                    let outputs = {
                        let scope =
                            self.scope(frame, outcome.exchange.as_ref(), outcome.nested.as_ref());
                        let mut outputs = Map::new();
                        for o in &step.outputs {
                            if let Ok(v) = o.expr.eval(&scope) {
                                outputs.insert(o.name.clone(), v);
                            }
                        }
                        outputs
                    };
                    // The step's own outputs are visible to its actions' criteria.
                    frame
                        .steps
                        .insert(step.id.clone(), serde_json::json!({ "outputs": outputs }));
                    let action = {
                        let scope =
                            self.scope(frame, outcome.exchange.as_ref(), outcome.nested.as_ref());
                        matching(&step.on_success, &scope)
                            .next()
                            .map(|(_, a)| a.clone())
                    };
                    return match action.as_deref().map(|a| &a.kind) {
                        None => Next::Step(i + 1),
                        Some(ActionKind::End) => Next::End,
                        Some(ActionKind::Goto(j)) => self.jump(frame, j, depth).await,
                        // Not a success action (the loader makes none).
                        Some(ActionKind::Retry { .. }) => Next::Step(i + 1),
                    };
                }
                Err(failed) => {
                    // The first matching failure action that is not an exhausted retry.
                    let chosen = {
                        let scope =
                            self.scope(frame, outcome.exchange.as_ref(), outcome.nested.as_ref());
                        matching(&step.on_failure, &scope)
                            .find(|(ai, a)| match a.kind {
                                ActionKind::Retry { limit, .. } => {
                                    retries.get(&(i, *ai)).copied().unwrap_or(0)
                                        < limit.min(self.limits.max_retries)
                                }
                                _ => true,
                            })
                            .map(|(ai, a)| (ai, a.clone()))
                    };
                    let Some((ai, action)) = chosen else {
                        return Next::Fail(failed);
                    };
                    match &action.kind {
                        ActionKind::End => return Next::Fail(failed),
                        ActionKind::Goto(j) => return self.jump(frame, j, depth).await,
                        ActionKind::Retry { after, then, .. } => {
                            *retries.entry((i, ai)).or_insert(0) += 1;
                            let header = outcome.exchange.as_ref().and_then(retry_after_header);
                            let wait = header.unwrap_or(*after);
                            if wait > self.limits.max_retry_delay.as_secs_f64() {
                                return Next::Fail(WorkflowFailure {
                                    message: format!(
                                        "{}; a retry would wait {wait} s, more than the limit of {} s",
                                        failed_text(&failed),
                                        self.limits.max_retry_delay.as_secs_f64()
                                    ),
                                    ..failed
                                });
                            }
                            if wait > 0.0 {
                                tokio::time::sleep(Duration::from_secs_f64(wait)).await;
                            }
                            match then {
                                Some(Jump::Step(id)) => {
                                    let Some((j, _)) = wf.step(id) else {
                                        return Next::Fail(failed);
                                    };
                                    if let Err(f) = self.run_alone(frame, j, depth).await {
                                        return Next::Fail(f);
                                    }
                                }
                                Some(Jump::Workflow(r)) => {
                                    if let Err(f) = self.call_workflow(frame, r, depth).await {
                                        return Next::Fail(f);
                                    }
                                }
                                None => {}
                            }
                            // and attempt the step again
                        }
                    }
                }
            }
        }
    }

    /// A `goto`: to a step of this workflow, or to a workflow (run, then this one ends).
    async fn jump(&self, frame: &mut Frame<'a>, j: &Jump, depth: usize) -> Next {
        match j {
            Jump::Step(id) => match frame.wf.step(id) {
                Some((k, _)) => Next::Step(k),
                None => Next::Fail(self.failure(frame.wf, None, format!("no step `{id}`"))),
            },
            Jump::Workflow(r) => match self.call_workflow(frame, r, depth).await {
                Ok(()) => Next::End,
                Err(f) => Next::Fail(f),
            },
        }
    }

    async fn call_workflow(
        &self,
        frame: &mut Frame<'a>,
        r: &WorkflowRef,
        depth: usize,
    ) -> Result<(), WorkflowFailure> {
        let Some(target) = self.resolve(r) else {
            return Err(self.failure(frame.wf, None, format!("cannot run workflow `{r}`")));
        };
        let out = self
            .workflow(target, frame.inputs.clone(), depth + 1)
            .await?;
        record(&mut frame.workflows, &target.id, &frame.inputs, out);
        Ok(())
    }

    /// Step `j` run once for a `retry` that names it: it must succeed (its own actions are not
    /// followed); its outputs are recorded.
    async fn run_alone(
        &self,
        frame: &mut Frame<'a>,
        j: usize,
        depth: usize,
    ) -> Result<(), WorkflowFailure> {
        let step = &frame.wf.steps[j];
        let outcome = self.attempt(frame, j, depth).await?;
        if let Some(f) = outcome.failure {
            return Err(f);
        }
        let status = outcome.exchange.as_ref().map(|x| x.status);
        let scope = self.scope(frame, outcome.exchange.as_ref(), outcome.nested.as_ref());
        for c in &step.success_criteria {
            if !matches!(c.criterion.check(&scope), Ok(true)) {
                return Err(WorkflowFailure {
                    workflow: frame.wf.id.clone(),
                    step: Some(step.id.clone()),
                    status,
                    criterion: Some(c.criterion.condition().to_string()),
                    message: String::new(),
                });
            }
        }
        let mut outputs = Map::new();
        for o in &step.outputs {
            if let Ok(v) = o.expr.eval(&scope) {
                outputs.insert(o.name.clone(), v);
            }
        }
        frame
            .steps
            .insert(step.id.clone(), serde_json::json!({ "outputs": outputs }));
        Ok(())
    }

    /// One execution of step `i`: its call (or its workflow). `Err`: the run cannot go on
    /// (a budget, a parameter that cannot be evaluated); a failed call is an [`Outcome`].
    async fn attempt(
        &self,
        frame: &mut Frame<'a>,
        i: usize,
        depth: usize,
    ) -> Result<Outcome, WorkflowFailure> {
        let wf = frame.wf;
        let step = &wf.steps[i];
        let used = self.steps.fetch_add(1, Ordering::Relaxed) + 1;
        if used > self.limits.max_steps {
            return Err(self.failure(
                wf,
                Some(&step.id),
                format!(
                    "more than {} steps executed in one run (MAX_STEPS)",
                    self.limits.max_steps
                ),
            ));
        }
        match &step.target {
            Target::Operation(_) => {
                let Some(op) = self.workflows.operation(wf.index, i) else {
                    return Err(self.failure(wf, Some(&step.id), "no operation".into()));
                };
                let (params, body) = {
                    let scope = self.scope(frame, None, None);
                    let mut params = Vec::with_capacity(step.parameters.len());
                    for p in &step.parameters {
                        let Some(location) = p.location else { continue };
                        let required = op.params.iter().any(|d| {
                            d.required
                                && d.location == location
                                && d.name.eq_ignore_ascii_case(&p.name)
                        });
                        match eval_value(&p.value, &scope) {
                            Ok(Value::Null) | Err(EvalError::NotFound { .. }) if !required => {}
                            Ok(Value::Null) => {
                                return Err(self.failure(
                                    wf,
                                    Some(&step.id),
                                    format!(
                                        "required {} parameter `{}` is null",
                                        location.as_str(),
                                        p.name
                                    ),
                                ));
                            }
                            Ok(value) => params.push(CallParam {
                                location,
                                name: p.name.clone(),
                                value,
                            }),
                            Err(e) => {
                                return Err(self.failure(
                                    wf,
                                    Some(&step.id),
                                    format!("{} parameter `{}`: {e}", location.as_str(), p.name),
                                ));
                            }
                        }
                    }
                    let body = match &step.request_body {
                        Some(b) => Some(body(b, &scope).map_err(|m| {
                            self.failure(wf, Some(&step.id), format!("requestBody: {m}"))
                        })?),
                        None => None,
                    };
                    (params, body.flatten())
                };
                let call = StepCall {
                    workflow: &wf.id,
                    step: &step.id,
                    operation: op,
                    params,
                    body,
                    content_type: step
                        .request_body
                        .as_ref()
                        .and_then(|b| b.content_type.as_deref()),
                };
                Ok(match self.caller.call(call).await {
                    Ok(x) => Outcome {
                        exchange: Some(x),
                        nested: None,
                        failure: None,
                    },
                    Err(e) => Outcome {
                        exchange: None,
                        nested: None,
                        failure: Some(WorkflowFailure {
                            workflow: wf.id.clone(),
                            step: Some(step.id.clone()),
                            status: None,
                            criterion: None,
                            message: format!("the call failed: {e}"),
                        }),
                    },
                })
            }
            Target::Invalid => Err(self.failure(wf, Some(&step.id), "the step is invalid".into())),
            Target::Workflow(r) => {
                let Some(target) = self.resolve(r) else {
                    return Err(self.failure(
                        wf,
                        Some(&step.id),
                        format!("cannot run workflow `{r}`"),
                    ));
                };
                let inputs = {
                    let scope = self.scope(frame, None, None);
                    let mut inputs = Map::new();
                    for p in &step.parameters {
                        match eval_value(&p.value, &scope) {
                            Ok(v) => {
                                inputs.insert(p.name.clone(), v);
                            }
                            Err(EvalError::NotFound { .. }) => {}
                            Err(e) => {
                                return Err(self.failure(
                                    wf,
                                    Some(&step.id),
                                    format!("input `{}`: {e}", p.name),
                                ));
                            }
                        }
                    }
                    Value::Object(inputs)
                };
                Ok(
                    match self.workflow(target, inputs.clone(), depth + 1).await {
                        Ok(out) => {
                            record(&mut frame.workflows, &target.id, &inputs, out.clone());
                            Outcome {
                                exchange: None,
                                nested: Some(out),
                                failure: None,
                            }
                        }
                        Err(f) => Outcome {
                            exchange: None,
                            nested: None,
                            failure: Some(f),
                        },
                    },
                )
            }
        }
    }
}

/// The actions whose criteria all hold (a criterion that cannot be evaluated does not), with
/// their indexes, in order.
fn matching<'x>(
    actions: &'x [std::sync::Arc<Action>],
    scope: &'x Scope<'x>,
) -> impl Iterator<Item = (usize, &'x std::sync::Arc<Action>)> + 'x {
    actions.iter().enumerate().filter(move |(_, a)| {
        a.criteria
            .iter()
            .all(|c| matches!(c.criterion.check(scope), Ok(true)))
    })
}

fn record(map: &mut Map<String, Value>, id: &str, inputs: &Value, outputs: Map<String, Value>) {
    map.insert(
        id.to_string(),
        serde_json::json!({ "inputs": inputs, "outputs": outputs }),
    );
}

fn failed_text(f: &WorkflowFailure) -> String {
    match &f.criterion {
        Some(c) => format!("success criterion `{c}` not met"),
        None => f.message.clone(),
    }
}

/// A `Retry-After` header in seconds (an HTTP date is not read: the action's `retryAfter`
/// applies then).
fn retry_after_header(x: &Exchange) -> Option<f64> {
    let v = x
        .response_headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))?
        .1
        .trim();
    let secs: f64 = v.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then_some(secs)
}

/// The request body: the payload evaluated (a member whose bare expression is absent is left
/// out), then the replacements applied. `Ok(None)`: no payload.
fn body(b: &Body, scope: &Scope<'_>) -> Result<Option<Value>, String> {
    let Some(payload) = &b.payload else {
        if b.replacements.is_empty() {
            return Ok(None);
        }
        return Err("replacements without a payload".into());
    };
    let mut value = payload_value(payload, scope, 0).map_err(|e| e.to_string())?;
    for (target, v) in &b.replacements {
        let v = eval_value(v, scope).map_err(|e| format!("replacement `{target}`: {e}"))?;
        set_pointer(&mut value, target, v).map_err(|m| format!("replacement `{target}`: {m}"))?;
    }
    Ok(Some(value))
}

fn payload_value(v: &Value, scope: &Scope<'_>, depth: usize) -> Result<Value, EvalError> {
    if depth > MAX_WALK_DEPTH {
        // eval_value reports the depth error with its own budget.
        return eval_value(v, scope);
    }
    match v {
        Value::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, x) in m {
                match x {
                    Value::String(_) => match eval_value(x, scope) {
                        Ok(val) => {
                            out.insert(k.clone(), val);
                        }
                        Err(EvalError::NotFound { .. }) => {}
                        Err(e) => return Err(e),
                    },
                    other => {
                        out.insert(k.clone(), payload_value(other, scope, depth + 1)?);
                    }
                }
            }
            Ok(Value::Object(out))
        }
        Value::Array(a) => a
            .iter()
            .map(|x| payload_value(x, scope, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => eval_value(other, scope),
    }
}

/// Sets the value at an RFC 6901 pointer: an existing member or item is replaced, a missing
/// object member added, `-` appends to an array.
fn set_pointer(root: &mut Value, pointer: &str, v: Value) -> Result<(), String> {
    if pointer.is_empty() {
        *root = v;
        return Ok(());
    }
    let tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let (last, parents) = tokens.split_last().ok_or("empty pointer")?;
    let mut cur = root;
    for t in parents {
        cur = match cur {
            Value::Object(m) => m.get_mut(t).ok_or_else(|| format!("no member `{t}`"))?,
            Value::Array(a) => {
                let i: usize = t.parse().map_err(|_| format!("`{t}` is not an index"))?;
                a.get_mut(i).ok_or_else(|| format!("no item {i}"))?
            }
            _ => return Err("the payload has no such location".into()),
        };
    }
    match cur {
        Value::Object(m) => {
            m.insert(last.clone(), v);
        }
        Value::Array(a) if last == "-" => a.push(v),
        Value::Array(a) => {
            let i: usize = last
                .parse()
                .map_err(|_| format!("`{last}` is not an index"))?;
            *a.get_mut(i).ok_or_else(|| format!("no item {i}"))? = v;
        }
        _ => {
            return Err(
                "the payload has no such location (a string payload takes no replacements)".into(),
            );
        }
    }
    Ok(())
}
