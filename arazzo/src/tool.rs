//! A workflow as an MCP tool definition: one tool per usable workflow.
//!
//! - **name**: like an operation's (the [`NameAllocator`] the operation tools use: prefix +
//!   snake_case of the `workflowId`, unique, at most its length limit);
//! - **title** / **description**: the workflow's `summary` / `summary` + `description`;
//! - **inputSchema**: the workflow's `inputs` (a JSON Schema 2020-12 object, its
//!   `$ref: '#/components/inputs/...'` inlined by the loader), a flat `type: object`;
//! - **outputSchema**: an object of the workflow's outputs, when every output's type can be
//!   derived (`$inputs.x` from the inputs schema, `$statusCode` an integer, `$url`, `$method`
//!   and `$response.header.X` strings, a step's or a called workflow's output from its own
//!   expression); otherwise none (response bodies' schemas are not known here);
//! - **annotations**: `readOnlyHint` when every operation the workflow may call (nested
//!   workflows included) is read-only, `destructiveHint` when any is destructive,
//!   `idempotentHint` when every one is idempotent, `openWorldHint`.

use std::sync::Arc;

use openapi_mcp_toolset::naming::NameAllocator;
use serde_json::{Map, Value, json};

use crate::expr::{Expr, Root};
use crate::load::{Target, Workflow, WorkflowRef};
use crate::validate::Workflows;

/// A workflow's tool.
#[derive(Clone, Debug)]
pub struct WorkflowTool {
    pub workflow_id: String,
    pub tool: rmcp::model::Tool,
}

/// The tools of every usable workflow, in document order. `names` is the allocator of the
/// operation tools served beside them (so names stay unique across both).
pub fn workflow_tools(workflows: &Workflows, names: &mut NameAllocator) -> Vec<WorkflowTool> {
    workflows
        .usable()
        .map(|wf| WorkflowTool {
            workflow_id: wf.id.clone(),
            tool: workflow_tool(workflows, wf, names),
        })
        .collect()
}

/// The tool of one workflow.
pub fn workflow_tool(
    workflows: &Workflows,
    wf: &Workflow,
    names: &mut NameAllocator,
) -> rmcp::model::Tool {
    let name = names.allocate(&wf.id, &format!("arazzo workflow {}", wf.id));
    let title = wf.summary.clone().unwrap_or_else(|| wf.id.clone());
    let description = match (&wf.summary, &wf.description) {
        (Some(s), Some(d)) if d.trim_start().starts_with(s.trim()) => d.trim().to_string(),
        (Some(s), Some(d)) => format!("{}\n\n{}", s.trim(), d.trim()),
        (Some(s), None) => s.trim().to_string(),
        (None, Some(d)) => d.trim().to_string(),
        (None, None) => format!("Runs the workflow `{}`.", wf.id),
    };
    let ops = workflows.operations_of(&wf.id);
    let read_only = !ops.is_empty() && ops.iter().all(|o| o.read_only);
    let destructive = ops.iter().any(|o| o.destructive);
    let idempotent = !ops.is_empty() && ops.iter().all(|o| o.method.is_idempotent());
    let mut annotations = rmcp::model::ToolAnnotations::with_title(title.clone())
        .read_only(read_only)
        .idempotent(idempotent)
        .open_world(true);
    if !read_only {
        annotations = annotations.destructive(destructive);
    }
    let mut tool = rmcp::model::Tool::default();
    tool.name = name.into();
    tool.title = Some(title);
    tool.description = Some(description.into());
    tool.input_schema = Arc::new(input_schema(wf));
    tool.output_schema = output_schema(workflows, wf).map(Arc::new);
    tool.annotations = Some(annotations);
    tool
}

/// The workflow's inputs as a flat object schema.
pub fn input_schema(wf: &Workflow) -> Map<String, Value> {
    let mut schema = match &wf.inputs {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    // The tool's schema is its own document: these keywords of the workflow's do not apply.
    for k in ["$schema", "$id", "$anchor", "$defs", "definitions"] {
        schema.remove(k);
    }
    schema.insert("type".into(), Value::String("object".into()));
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    schema
}

/// An object of the outputs, when every output's type is derivable.
pub fn output_schema(workflows: &Workflows, wf: &Workflow) -> Option<Map<String, Value>> {
    if wf.outputs.is_empty() {
        return None;
    }
    let mut props = Map::new();
    for o in &wf.outputs {
        props.insert(o.name.clone(), derive(workflows, wf, &o.expr, 0)?);
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(props));
    Some(schema)
}

/// The schema of what `e` (in workflow `wf`) evaluates to, when it can be told.
fn derive(workflows: &Workflows, wf: &Workflow, e: &Expr, depth: usize) -> Option<Value> {
    if depth > 16 {
        return None;
    }
    let text = e.text();
    match e.root() {
        Root::StatusCode => Some(json!({"type": "integer"})),
        Root::Url | Root::Method => Some(json!({"type": "string"})),
        Root::Response if text.starts_with("$response.header.") => Some(json!({"type": "string"})),
        Root::Inputs(name) if text == format!("$inputs.{name}") => {
            let s = wf.inputs.as_ref()?.get("properties")?.get(name)?;
            (s.is_object() && !s.as_object()?.is_empty()).then(|| s.clone())
        }
        Root::Step {
            step,
            output: Some(o),
        } if text == format!("$steps.{step}.outputs.{o}") => {
            let (_, s) = wf.step(step)?;
            let out = s.outputs.iter().find(|x| x.name == o)?;
            // In a step that calls a workflow, `$outputs.x` is that workflow's output.
            if let (Root::Outputs(n), Target::Workflow(WorkflowRef::Local(id))) =
                (out.expr.root(), &s.target)
            {
                if out.expr.text() != format!("$outputs.{n}") {
                    return None;
                }
                let called = workflows.get(id)?;
                let inner = called.outputs.iter().find(|x| x.name == n)?;
                return derive(workflows, called, &inner.expr, depth + 1);
            }
            derive(workflows, wf, &out.expr, depth + 1)
        }
        Root::Workflow {
            workflow,
            part: "outputs",
            name: Some(n),
        } if text == format!("$workflows.{workflow}.outputs.{n}") => {
            let called = workflows.get(workflow)?;
            let inner = called.outputs.iter().find(|x| x.name == n)?;
            derive(workflows, called, &inner.expr, depth + 1)
        }
        _ => None,
    }
}
