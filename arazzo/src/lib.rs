//! Arazzo 1.0.x workflows (the OpenAPI Initiative's workflow standard) for openapi-mcp.
//!
//! - [`expr`]: runtime expressions (`$inputs.x`, `$response.body#/a`, `{$url}` templates).
//! - [`criteria`]: criterion objects (`simple`, `regex`, `jsonpath`).
//! - [`model`]: the document as written (serde types of Arazzo 1.0.x).
//! - [`load`]: reading a document into a [`load::Document`], every expression compiled.
//! - [`validate`]: checking the workflows against the operations of their source descriptions.
//! - [`run`]: the workflow executor, against the integrator's [`run::StepCaller`].
//! - [`tool`]: a workflow as an MCP tool definition.

pub mod criteria;
pub mod expr;
pub mod load;
pub mod model;
pub mod run;
pub mod tool;
pub mod validate;
