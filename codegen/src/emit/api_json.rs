//! `src/api.json`: the tool set as data. The generated crate deserializes it back into the
//! runtime's `ToolSet`, so its `tools/list` and routes are the proxy's by construction.

use openapi_mcp_toolset::model::{Route, SecurityScheme, ToolSet};
use openapi_mcp_toolset::rmcp::model::Tool;
use serde::Serialize;

use crate::CodegenError;

/// Mirror of `ToolSet` (which is not `Serialize`); `src/lib.rs` reads the same shape.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ApiFile<'a> {
    title: &'a str,
    version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    base_url: Option<&'a str>,
    security_schemes: &'a [(String, SecurityScheme)],
    tools: Vec<ToolEntry<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolEntry<'a> {
    tool: &'a Tool,
    route: &'a Route,
    #[serde(skip_serializing_if = "Option::is_none")]
    operation_id: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    tags: &'a [String],
    location: &'a str,
}

pub fn api_json(set: &ToolSet) -> Result<String, CodegenError> {
    let file = ApiFile {
        title: &set.title,
        version: &set.version,
        description: set.description.as_deref(),
        base_url: set.base_url.as_deref(),
        security_schemes: &set.security_schemes,
        tools: set
            .tools
            .iter()
            .map(|t| ToolEntry {
                tool: t.tool(),
                route: &t.route,
                operation_id: t.operation_id.as_deref(),
                tags: &t.tags,
                location: &t.location,
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&file)?;
    text.push('\n');
    Ok(text)
}
