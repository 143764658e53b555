//! Arazzo workflows without the `workflows` feature: the same types, holding nothing. A
//! [`WorkflowTools`] built here is empty (`Serving::workflows` stays `None` or empty), so no
//! workflow tool is ever listed or called; a [`WorkflowTool`] cannot be built at all.

use std::convert::Infallible;

use rmcp::model::Tool;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value};

use super::confirm::Retry;
use super::{CallToolResponse, ProxyServer, ToolState};

/// One workflow served as a tool: never built without the `workflows` feature.
pub struct WorkflowTool {
    pub tool: Tool,
    never: Infallible,
}

/// The workflow tools of a server: always empty without the `workflows` feature.
#[derive(Default)]
pub struct WorkflowTools {
    /// `--workflows-only` (unused: there are no workflows to serve instead).
    pub only: bool,
    /// `workflows-only` of `apis:` entries (unused, likewise).
    pub only_apis: Vec<usize>,
}

impl WorkflowTools {
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        std::iter::empty()
    }

    pub fn entries(&self) -> impl Iterator<Item = (&Tool, &str)> {
        std::iter::empty()
    }

    pub fn is_empty(&self) -> bool {
        true
    }

    pub fn len(&self) -> usize {
        0
    }

    pub(super) fn get(&self, _name: &str) -> Option<&WorkflowTool> {
        None
    }

    pub(super) fn at(&self, _i: usize) -> Option<&WorkflowTool> {
        None
    }

    pub(super) fn search_docs(
        &self,
        _set: &openapi_mcp_toolset::model::ToolSet,
    ) -> Vec<crate::modes::dynamic::WorkflowDoc> {
        Vec::new()
    }
}

impl WorkflowTool {
    pub fn id(&self) -> &str {
        match self.never {}
    }

    pub fn steps(&self) -> Vec<String> {
        match self.never {}
    }

    pub fn operation_tools(&self) -> Vec<&str> {
        match self.never {}
    }
}

/// One step of a workflow run (none without the feature).
#[cfg(feature = "code")]
pub(super) struct StepRecord {
    pub(super) tool: String,
    pub(super) status: Option<u16>,
    pub(super) ok: bool,
}

/// A workflow's run (none without the feature).
#[cfg(feature = "code")]
pub(super) struct WorkflowRun {
    pub(super) result: rmcp::model::CallToolResult,
    pub(super) steps: Vec<StepRecord>,
    pub(super) status: Option<u16>,
}

impl ProxyServer {
    /// Unreachable: there is no [`WorkflowTool`] to call.
    pub(super) async fn call_workflow(
        &self,
        _state: &ToolState,
        wt: &WorkflowTool,
        _args: Map<String, Value>,
        _retry: &Retry,
        _context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match wt.never {}
    }

    /// Unreachable: there is no [`WorkflowTool`] to run.
    #[cfg(feature = "code")]
    pub(super) async fn run_workflow(
        &self,
        _state: &ToolState,
        wt: &WorkflowTool,
        _args: Map<String, Value>,
        _retry: &Retry,
        _context: &RequestContext<RoleServer>,
        _budget: Option<usize>,
    ) -> WorkflowRun {
        match wt.never {}
    }
}

/// Unreachable: there is no [`WorkflowTool`] whose scopes to combine.
pub(super) fn required_scopes(_state: &ToolState, w: &WorkflowTool) -> Vec<Vec<String>> {
    match w.never {}
}
