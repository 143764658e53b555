//! Checking a loaded document against the operations of its source descriptions: which
//! workflows can run. A broken workflow is skipped alone; what calls it is skipped too.
//!
//! Checked, each problem a [`Diagnostic`] at `file#/json/pointer`:
//! - what each step calls: an operation ([`Operations`] resolves `operationId` and
//!   `operationPath`), a workflow of this document, a known source description;
//! - parameters: each names a parameter of the operation (`name` + `in`), every required
//!   parameter of the operation is given, a required request body is given; a step that calls a
//!   workflow gives its required inputs and no input it does not declare;
//! - runtime expressions: `$inputs.x` is a declared input, `$steps.s.outputs.o` names a step of
//!   the workflow that can have run before (in document order or through a `goto`/`retry`) and
//!   an output it declares, `$workflows.w...` a workflow this one runs (`dependsOn`, a step, an
//!   action), `$outputs.o` an output of the workflow a step calls, `$statusCode`/`$response`/
//!   `$request`/`$url`/`$method` only where a step calls an operation,
//!   `$sourceDescriptions.NAME` and `$components.KIND.NAME` exist;
//! - actions: `goto`/`retry` to a step of the workflow or a workflow of the document;
//! - cycles: a workflow that reaches itself through steps, `dependsOn` or actions.
//!
//! Workflows of other Arazzo documents (`type: arazzo` sources) are not run: a workflow that
//! refers to one is reported and skipped.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use openapi_mcp_toolset::Location;
use openapi_mcp_toolset::model::{HttpMethod, ParamIn};
use serde_json::Value;

use crate::expr::{Expr, Root, name_candidates};
use crate::load::{
    Action, ActionKind, Diagnostic, Document, Jump, OperationRef, Step, Target, Workflow,
    WorkflowRef,
};
use crate::model::SourceKind;

/// One parameter an operation declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationParam {
    pub name: String,
    pub location: ParamIn,
    pub required: bool,
}

/// What a step needs to know about the operation it calls: the integrator fills this from its
/// converted tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationInfo {
    /// The source description's name.
    pub source: String,
    /// The operation's tool name (how the integrator finds its route and forwarder).
    pub tool: String,
    pub method: HttpMethod,
    /// The path template, e.g. `/pets/{petId}`.
    pub path: String,
    /// The parameters a step may set; those a configured credential fills (an apiKey scheme's
    /// parameter) are best left out, so that a workflow need not give them.
    pub params: Vec<OperationParam>,
    /// Whether the operation requires a request body.
    pub body_required: bool,
    pub read_only: bool,
    pub destructive: bool,
}

/// How the integrator resolves the operations steps name.
pub trait Operations {
    /// The operation of this `operationId`: in source `source`, or (`None`, an unqualified
    /// id) in whichever `openapi` source has it, `None` when none or several do.
    fn by_id(&self, source: Option<&str>, operation_id: &str) -> Option<OperationInfo>;
    /// The operation at `path` (a template as the spec writes it, `/pets/{id}`) and `method`
    /// (lower case) of source `source`.
    fn by_path(&self, source: &str, path: &str, method: &str) -> Option<OperationInfo>;
}

/// The workflows of a document, checked: which are usable, what each step calls, and the
/// problems found (loading's included).
pub struct Workflows {
    doc: Arc<Document>,
    /// Per workflow (document order of [`Document::workflows`]).
    usable: Vec<bool>,
    /// Per workflow, per step: the operation it calls.
    ops: Vec<Vec<Option<OperationInfo>>>,
    diagnostics: Vec<Diagnostic>,
}

impl Workflows {
    pub fn document(&self) -> &Document {
        &self.doc
    }

    /// The usable workflows, in document order.
    pub fn usable(&self) -> impl Iterator<Item = &Workflow> {
        self.doc
            .workflows()
            .iter()
            .zip(&self.usable)
            .filter_map(|(w, ok)| ok.then_some(w))
    }

    /// The usable workflow of this id.
    pub fn get(&self, id: &str) -> Option<&Workflow> {
        self.usable().find(|w| w.id == id)
    }

    /// Every problem: loading's, then validation's, in document order within each.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The operation step `step` of workflow `workflow` (indexes into
    /// [`Document::workflows`] and its steps) calls.
    pub fn operation(&self, workflow: usize, step: usize) -> Option<&OperationInfo> {
        self.ops.get(workflow)?.get(step)?.as_ref()
    }

    /// Every operation running workflow `id` may call: its steps', and those of the workflows
    /// it runs (`dependsOn`, steps, actions), each once. For annotations and confirmation.
    pub fn operations_of(&self, id: &str) -> Vec<&OperationInfo> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![id.to_string()];
        let mut out: Vec<&OperationInfo> = Vec::new();
        while let Some(w) = stack.pop() {
            if !seen.insert(w.clone()) {
                continue;
            }
            let Some((wi, wf)) = self
                .doc
                .workflows()
                .iter()
                .enumerate()
                .find(|(_, x)| x.id == w)
            else {
                continue;
            };
            for (si, _) in wf.steps.iter().enumerate() {
                if let Some(op) = self.operation(wi, si)
                    && !out
                        .iter()
                        .any(|o| o.source == op.source && o.tool == op.tool)
                {
                    out.push(op);
                }
            }
            stack.extend(called_workflows(wf).into_iter().filter_map(|r| match r {
                WorkflowRef::Local(id) => Some(id),
                WorkflowRef::External { .. } => None,
            }));
        }
        out
    }
}

/// The workflows `wf` runs: `dependsOn`, steps that call workflows, and actions' targets.
fn called_workflows(wf: &Workflow) -> Vec<WorkflowRef> {
    let mut out: Vec<WorkflowRef> = wf.depends_on.clone();
    for s in &wf.steps {
        if let Target::Workflow(r) = &s.target {
            out.push(r.clone());
        }
        for a in s.on_success.iter().chain(&s.on_failure) {
            match &a.kind {
                ActionKind::Goto(Jump::Workflow(r))
                | ActionKind::Retry {
                    then: Some(Jump::Workflow(r)),
                    ..
                } => out.push(r.clone()),
                _ => {}
            }
        }
    }
    out
}

/// Checks every workflow of `doc` against `ops`.
pub fn validate(doc: Arc<Document>, ops: &dyn Operations) -> Workflows {
    let mut diagnostics: Vec<Diagnostic> = doc.diagnostics().to_vec();
    let workflows = doc.workflows();
    let mut resolved: Vec<Vec<Option<OperationInfo>>> = Vec::with_capacity(workflows.len());
    for wf in workflows {
        let mut check = Check {
            doc: &doc,
            wf,
            ops,
            out: &mut diagnostics,
            resolved: Vec::with_capacity(wf.steps.len()),
        };
        check.workflow();
        resolved.push(check.resolved);
    }
    cycles(workflows, &mut diagnostics);

    // Usable: no diagnostic of its own, and everything it runs usable (to a fixed point).
    let mut usable: Vec<bool> = workflows
        .iter()
        .map(|w| {
            !diagnostics
                .iter()
                .any(|d| d.workflow.as_deref() == Some(&w.id))
        })
        .collect();
    loop {
        let mut changed = false;
        for (i, wf) in workflows.iter().enumerate() {
            if !usable[i] {
                continue;
            }
            let broken = called_workflows(wf).into_iter().find_map(|r| match r {
                WorkflowRef::Local(id) => workflows
                    .iter()
                    .position(|w| w.id == id)
                    .filter(|&j| !usable[j])
                    .map(|_| id),
                WorkflowRef::External { .. } => None,
            });
            if let Some(id) = broken {
                usable[i] = false;
                changed = true;
                diagnostics.push(Diagnostic {
                    location: wf.at.clone(),
                    workflow: Some(wf.id.clone()),
                    message: format!("runs workflow `{id}`, which cannot be used"),
                });
            }
        }
        if !changed {
            break;
        }
    }
    Workflows {
        doc,
        usable,
        ops: resolved,
        diagnostics,
    }
}

/// Workflows that reach themselves through what they run.
fn cycles(workflows: &[Workflow], out: &mut Vec<Diagnostic>) {
    let index: HashMap<&str, usize> = workflows
        .iter()
        .enumerate()
        .map(|(i, w)| (w.id.as_str(), i))
        .collect();
    let edges: Vec<Vec<usize>> = workflows
        .iter()
        .map(|w| {
            called_workflows(w)
                .into_iter()
                .filter_map(|r| match r {
                    WorkflowRef::Local(id) => index.get(id.as_str()).copied(),
                    WorkflowRef::External { .. } => None,
                })
                .collect()
        })
        .collect();
    for (start, wf) in workflows.iter().enumerate() {
        // Depth-first from `start`, remembering the path to report it.
        let mut seen = vec![false; workflows.len()];
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(start, vec![start])];
        let mut found: Option<Vec<usize>> = None;
        while let Some((n, path)) = stack.pop() {
            for &m in &edges[n] {
                if m == start {
                    found = Some(path.clone());
                    break;
                }
                if !seen[m] {
                    seen[m] = true;
                    let mut p = path.clone();
                    p.push(m);
                    stack.push((m, p));
                }
            }
            if found.is_some() {
                break;
            }
        }
        if let Some(path) = found {
            let mut names: Vec<&str> = path.iter().map(|&i| workflows[i].id.as_str()).collect();
            names.push(&wf.id);
            out.push(Diagnostic {
                location: wf.at.clone(),
                workflow: Some(wf.id.clone()),
                message: format!(
                    "a cycle of workflows: {} (through steps, dependsOn or actions)",
                    names.join(" -> ")
                ),
            });
        }
    }
}

/// Where an expression is evaluated, for what it may refer to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A step's parameters or request body (before its call).
    Request,
    /// A step's success criteria, outputs or actions (after its call).
    Response,
    /// The workflow's outputs (after its last step).
    WorkflowOutputs,
}

struct Check<'a> {
    doc: &'a Document,
    wf: &'a Workflow,
    ops: &'a dyn Operations,
    out: &'a mut Vec<Diagnostic>,
    resolved: Vec<Option<OperationInfo>>,
}

impl<'a> Check<'a> {
    fn diag(&mut self, at: &Location, message: String) {
        self.out.push(Diagnostic {
            location: at.clone(),
            workflow: Some(self.wf.id.clone()),
            message,
        });
    }

    fn source(&self, name: &str) -> Option<SourceKind> {
        self.doc
            .source_descriptions()
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.kind)
    }

    fn workflow(&mut self) {
        let wf = self.wf;
        for d in &wf.depends_on {
            self.workflow_ref(d, &wf.at.join("dependsOn"));
        }
        let precedes = precedence(wf);
        for (si, step) in wf.steps.iter().enumerate() {
            let op = self.step(si, step, &precedes);
            self.resolved.push(op);
        }
        let all: Vec<bool> = vec![true; wf.steps.len()];
        for o in &wf.outputs {
            self.expr(&o.expr, &o.at, Place::WorkflowOutputs, None, &all);
        }
    }

    /// A reference to a workflow: one of this document (an `arazzo` source's is reported
    /// unsupported). Whether it exists.
    fn workflow_ref(&mut self, r: &WorkflowRef, at: &Location) -> Option<&'a Workflow> {
        let doc: &'a Document = self.doc;
        match r {
            WorkflowRef::Local(id) => {
                let found = doc.workflow(id);
                if found.is_none() {
                    self.diag(at, format!("no workflow `{id}` in this document"));
                }
                found
            }
            WorkflowRef::External { source, workflow } => {
                let msg = match self.source(source) {
                    None => format!("no source description `{source}`"),
                    Some(SourceKind::Openapi) => {
                        format!("`{source}` is an OpenAPI source; it has no workflow `{workflow}`")
                    }
                    Some(SourceKind::Arazzo) => format!(
                        "workflow `{workflow}` of Arazzo source `{source}`: workflows of other Arazzo documents are not supported"
                    ),
                };
                self.diag(at, msg);
                None
            }
        }
    }

    fn operation(&mut self, r: &OperationRef, at: &Location) -> Option<OperationInfo> {
        match r {
            OperationRef::Id { source, id } => {
                if let Some(s) = source {
                    match self.source(s) {
                        None => {
                            self.diag(at, format!("no source description `{s}`"));
                            return None;
                        }
                        Some(SourceKind::Arazzo) => {
                            self.diag(
                                at,
                                format!("`{s}` is an Arazzo source; operations come from OpenAPI sources"),
                            );
                            return None;
                        }
                        Some(SourceKind::Openapi) => {}
                    }
                }
                let found = self.ops.by_id(source.as_deref(), id);
                if found.is_none() {
                    let msg = match source {
                        Some(s) => format!("no operation `{id}` in source description `{s}`"),
                        None => format!(
                            "no operation `{id}` in the source descriptions (or several have one: qualify it as `$sourceDescriptions.NAME.{id}`)"
                        ),
                    };
                    self.diag(at, msg);
                }
                found
            }
            OperationRef::Path {
                source,
                path,
                method,
            } => {
                match self.source(source) {
                    None => {
                        self.diag(at, format!("no source description `{source}`"));
                        return None;
                    }
                    Some(SourceKind::Arazzo) => {
                        self.diag(
                            at,
                            format!("`{source}` is an Arazzo source; operations come from OpenAPI sources"),
                        );
                        return None;
                    }
                    Some(SourceKind::Openapi) => {}
                }
                let found = self.ops.by_path(source, path, method);
                if found.is_none() {
                    self.diag(
                        at,
                        format!(
                            "no operation {} {path} in source description `{source}`",
                            method.to_ascii_uppercase()
                        ),
                    );
                }
                found
            }
        }
    }

    fn step(&mut self, si: usize, step: &Step, precedes: &[Vec<bool>]) -> Option<OperationInfo> {
        let before: Vec<bool> = (0..self.wf.steps.len()).map(|j| precedes[j][si]).collect();
        let (op, called) = self.step_target(step);
        // Parameters against the operation or the called workflow.
        if let Some(info) = &op {
            self.operation_params(step, info);
        }
        if let Some(target) = called {
            self.workflow_inputs(step, target);
        }
        let http = !matches!(step.target, Target::Workflow(_));
        self.request_exprs(step, &before);
        // After the call: the step itself has run.
        let mut after = before;
        after[si] = true;
        let nested = if http { None } else { called };
        for c in &step.success_criteria {
            for e in c.criterion.expressions() {
                self.step_response_expr(e, &c.at, http, nested, &after, si);
            }
        }
        for o in &step.outputs {
            self.step_response_expr(&o.expr, &o.at, http, nested, &after, si);
        }
        for a in step.on_success.iter().chain(&step.on_failure) {
            self.action(a, http, nested, &after, si);
        }
        op
    }

    /// What a step calls: the operation, or the workflow of this document.
    fn step_target(&mut self, step: &Step) -> (Option<OperationInfo>, Option<&'a Workflow>) {
        match &step.target {
            Target::Operation(r) => {
                let field = if matches!(r, OperationRef::Path { .. }) {
                    "operationPath"
                } else {
                    "operationId"
                };
                (self.operation(r, &step.at.join(field)), None)
            }
            Target::Workflow(r) => (None, self.workflow_ref(r, &step.at.join("workflowId"))),
            Target::Invalid => (None, None),
        }
    }

    /// A step's parameters name parameters of its operation, and give the required ones and a
    /// required request body.
    fn operation_params(&mut self, step: &Step, info: &OperationInfo) {
        for p in &step.parameters {
            let Some(loc) = p.location else { continue };
            let declared = info.params.iter().any(|d| {
                d.location == loc
                    && if loc == ParamIn::Header {
                        d.name.eq_ignore_ascii_case(&p.name)
                    } else {
                        d.name == p.name
                    }
            });
            if !declared {
                self.diag(
                    &p.at.join("name"),
                    format!(
                        "operation {} {} has no {} parameter `{}`",
                        info.method.as_str(),
                        info.path,
                        loc.as_str(),
                        p.name
                    ),
                );
            }
        }
        for d in info.params.iter().filter(|d| d.required) {
            let given = step.parameters.iter().any(|p| {
                p.location == Some(d.location)
                    && if d.location == ParamIn::Header {
                        d.name.eq_ignore_ascii_case(&p.name)
                    } else {
                        d.name == p.name
                    }
            });
            if !given {
                self.diag(
                    &step.at,
                    format!(
                        "step `{}` does not give the required {} parameter `{}` of {} {}",
                        step.id,
                        d.location.as_str(),
                        d.name,
                        info.method.as_str(),
                        info.path
                    ),
                );
            }
        }
        if info.body_required && step.request_body.is_none() {
            self.diag(
                &step.at,
                format!(
                    "step `{}` gives no requestBody, which {} {} requires",
                    step.id,
                    info.method.as_str(),
                    info.path
                ),
            );
        }
    }

    /// A step that calls a workflow gives its required inputs and no input it does not declare.
    fn workflow_inputs(&mut self, step: &Step, target: &Workflow) {
        let names = target.input_names();
        let declares = target
            .inputs
            .as_ref()
            .is_some_and(|s| s.get("properties").is_some());
        for p in &step.parameters {
            if declares && !names.contains(&p.name.as_str()) {
                self.diag(
                    &p.at.join("name"),
                    format!("workflow `{}` has no input `{}`", target.id, p.name),
                );
            }
        }
        for r in target.required_inputs() {
            if !step.parameters.iter().any(|p| p.name == r) {
                self.diag(
                    &step.at,
                    format!(
                        "step `{}` does not give the required input `{r}` of workflow `{}`",
                        step.id, target.id
                    ),
                );
            }
        }
    }

    /// The expressions of a step's parameters and request body, evaluated before its call.
    fn request_exprs(&mut self, step: &Step, before: &[bool]) {
        for p in &step.parameters {
            for e in &p.exprs {
                self.expr(e, &p.at.join("value"), Place::Request, None, before);
            }
        }
        if let Some(b) = &step.request_body {
            for e in &b.exprs {
                self.expr(e, &b.at, Place::Request, None, before);
            }
        }
    }

    /// A success or failure action of step `si`: its criteria, and where it jumps exists.
    fn action(
        &mut self,
        a: &Action,
        http: bool,
        nested: Option<&Workflow>,
        after: &[bool],
        si: usize,
    ) {
        for c in &a.criteria {
            for e in c.criterion.expressions() {
                self.step_response_expr(e, &c.at, http, nested, after, si);
            }
        }
        let jump = match &a.kind {
            ActionKind::Goto(j) => Some(j),
            ActionKind::Retry { then, .. } => then.as_ref(),
            ActionKind::End => None,
        };
        match jump {
            Some(Jump::Step(id)) if self.wf.step(id).is_none() => {
                self.diag(
                    &a.at.join("stepId"),
                    format!(
                        "action `{}`: no step `{id}` in workflow `{}`",
                        a.name, self.wf.id
                    ),
                );
            }
            Some(Jump::Step(_)) => {}
            Some(Jump::Workflow(r)) => {
                self.workflow_ref(r, &a.at.join("workflowId"));
            }
            None => {}
        }
    }

    /// An expression evaluated after step `si`'s call (`nested`: the workflow it called).
    fn step_response_expr(
        &mut self,
        e: &Expr,
        at: &Location,
        http: bool,
        nested: Option<&Workflow>,
        may_have_run: &[bool],
        si: usize,
    ) {
        if !http && e.needs_exchange() {
            self.diag(
                at,
                format!(
                    "`{}`: step `{}` calls a workflow, so there is no HTTP request or response here",
                    e.text(),
                    self.wf.steps[si].id
                ),
            );
            return;
        }
        self.expr(e, at, Place::Response, nested, may_have_run);
    }

    /// What one expression refers to exists (and, for steps, can have run).
    fn expr(
        &mut self,
        e: &Expr,
        at: &Location,
        place: Place,
        nested: Option<&Workflow>,
        may_have_run: &[bool],
    ) {
        let wf = self.wf;
        let text = e.text();
        match e.root() {
            Root::Url | Root::Method | Root::StatusCode | Root::Request | Root::Response => {
                if place != Place::Response {
                    self.diag(
                        at,
                        format!(
                            "`{text}` reads an HTTP exchange, which exists only in a step's criteria, outputs and actions"
                        ),
                    );
                }
            }
            Root::Inputs(name) => match &wf.inputs {
                None => self.diag(at, format!("`{text}`: workflow `{}` declares no inputs", wf.id)),
                Some(schema) => {
                    let names = wf.input_names();
                    let checkable = schema.get("properties").is_some();
                    if checkable && !name_candidates(name).any(|c| names.contains(&c)) {
                        self.diag(
                            at,
                            format!(
                                "`{text}`: workflow `{}` has no input `{name}`{}",
                                wf.id,
                                did_you_mean(name, &names)
                            ),
                        );
                    }
                }
            },
            Root::Outputs(name) => match nested {
                Some(target) if place == Place::Response && !std::ptr::eq(target, wf) => {
                    let names: Vec<&str> = target.outputs.iter().map(|o| o.name.as_str()).collect();
                    if !name_candidates(name).any(|c| names.contains(&c)) {
                        self.diag(
                            at,
                            format!(
                                "`{text}`: workflow `{}` has no output `{name}`{}",
                                target.id,
                                did_you_mean(name, &names)
                            ),
                        );
                    }
                }
                _ => self.diag(
                    at,
                    format!(
                        "`{text}`: `$outputs` reads the outputs of the workflow a step calls, only in that step's criteria, outputs and actions"
                    ),
                ),
            },
            Root::Step { step, output } => {
                let Some((j, target)) = wf.step(step) else {
                    let ids: Vec<&str> = wf.steps.iter().map(|s| s.id.as_str()).collect();
                    self.diag(
                        at,
                        format!(
                            "`{text}`: no step `{step}` in workflow `{}`{}",
                            wf.id,
                            did_you_mean(step, &ids)
                        ),
                    );
                    return;
                };
                if !may_have_run[j] {
                    self.diag(
                        at,
                        format!(
                            "`{text}`: step `{step}` cannot have run yet here (it comes later and no goto or retry leads back)"
                        ),
                    );
                    return;
                }
                if let Some(o) = output {
                    let names: Vec<&str> = target.outputs.iter().map(|x| x.name.as_str()).collect();
                    if !name_candidates(o).any(|c| names.contains(&c)) {
                        self.diag(
                            at,
                            format!(
                                "`{text}`: step `{step}` has no output `{o}`{}",
                                did_you_mean(o, &names)
                            ),
                        );
                    }
                }
            }
            Root::Workflow {
                workflow,
                part,
                name,
            } => {
                let runs = called_workflows(wf)
                    .iter()
                    .any(|r| matches!(r, WorkflowRef::Local(id) if id == workflow));
                let Some(target) = self.doc.workflow(workflow) else {
                    self.diag(at, format!("`{text}`: no workflow `{workflow}` in this document"));
                    return;
                };
                if !runs {
                    self.diag(
                        at,
                        format!(
                            "`{text}`: workflow `{}` does not run `{workflow}` (list it in dependsOn, or call it from a step)",
                            wf.id
                        ),
                    );
                    return;
                }
                if let Some(n) = name {
                    let names: Vec<&str> = if part == "inputs" {
                        target.input_names()
                    } else {
                        target.outputs.iter().map(|o| o.name.as_str()).collect()
                    };
                    let checkable = part != "inputs"
                        || target.inputs.as_ref().is_some_and(|s| s.get("properties").is_some());
                    if checkable && !name_candidates(n).any(|c| names.contains(&c)) {
                        self.diag(
                            at,
                            format!("`{text}`: workflow `{workflow}` has no {} `{n}`", &part[..part.len() - 1]),
                        );
                    }
                }
            }
            Root::SourceDescription(name) => {
                if self.source(name).is_none() {
                    self.diag(at, format!("`{text}`: no source description `{name}`"));
                }
            }
            Root::Component { kind, name } => {
                let found = self
                    .doc
                    .components()
                    .get(kind)
                    .and_then(Value::as_object)
                    .is_some_and(|m| m.contains_key(name));
                if !found {
                    self.diag(at, format!("`{text}`: no component `{kind}.{name}`"));
                }
            }
        }
    }
}

/// `precedes[a][b]`: step `a` can have run before step `b` runs (a path of one or more
/// transitions from `a` to `b`: the next step in order, `goto` targets, `retry` targets).
fn precedence(wf: &Workflow) -> Vec<Vec<bool>> {
    let n = wf.steps.len();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, s) in wf.steps.iter().enumerate() {
        if i + 1 < n {
            next[i].push(i + 1);
        }
        for a in s.on_success.iter().chain(&s.on_failure) {
            match &a.kind {
                ActionKind::Goto(Jump::Step(id)) => {
                    if let Some((j, _)) = wf.step(id) {
                        next[i].push(j);
                    }
                }
                ActionKind::Retry { then, .. } => {
                    // A retry runs the step again (after `then`, when it names a step).
                    next[i].push(i);
                    if let Some(Jump::Step(id)) = then
                        && let Some((j, _)) = wf.step(id)
                    {
                        next[i].push(j);
                        next[j].push(i);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = vec![vec![false; n]; n];
    for (a, row) in out.iter_mut().enumerate() {
        let mut stack: Vec<usize> = next[a].clone();
        while let Some(b) = stack.pop() {
            if !row[b] {
                row[b] = true;
                stack.extend(&next[b]);
            }
        }
    }
    out
}

fn did_you_mean(name: &str, names: &[&str]) -> String {
    openapi_mcp_toolset::suggest::closest(
        name,
        names,
        openapi_mcp_toolset::suggest::Tolerance::THIRD,
    )
    .map(|c| format!(" (did you mean `{c}`?)"))
    .unwrap_or_default()
}
