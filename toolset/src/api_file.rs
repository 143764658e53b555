//! The `api.json` file: a tool set as data. `openapi-mcp generate` writes it into every generated
//! crate (`src/api.json`) and the crate's `tool_set()` reads it back, both through [`ApiFile`],
//! so writer and reader cannot drift apart (they used to be two hand-kept mirrors, one of them
//! emitted as code into every crate). The file names its format ([`FORMAT`]); a reader refuses
//! any other, saying which it expected and which it found.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::location::Location;
use crate::model::{Route, SecurityScheme, TaskSupport, ToolDef, ToolSet};

/// The format this crate writes and reads. Change it whenever the shape changes in a way an
/// older reader would misread.
pub const FORMAT: &str = "openapi-mcp/api.json v1";

/// The whole file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiFile {
    /// Always [`FORMAT`] when written by this crate.
    pub format: String,
    pub title: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// (tag, description) of the spec's described tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tag_descriptions: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default)]
    pub security_schemes: Vec<(String, SecurityScheme)>,
    pub tools: Vec<ToolEntry>,
}

/// One tool: its MCP definition (schemas bundled) and its route.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    pub tool: rmcp::model::Tool,
    pub route: Route,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// `file#/paths/...` of the operation (text form of [`Location`]).
    pub location: Location,
    /// The operation's `x-mcp-task`; absent when it has none.
    #[serde(default, skip_serializing_if = "TaskSupport::is_inferred")]
    pub task_support: TaskSupport,
}

/// Why an `api.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ApiFileError {
    #[error(
        "api.json is in format {found:?}, this runtime reads {expected:?} (regenerate the crate with a matching openapi-mcp)"
    )]
    Format {
        expected: &'static str,
        found: String,
    },
    #[error(
        "api.json has no \"format\" field, this runtime reads {expected:?} (regenerate the crate with a matching openapi-mcp)"
    )]
    NoFormat { expected: &'static str },
    #[error("api.json is not valid JSON for format {FORMAT:?}")]
    Json(#[source] serde_json::Error),
}

impl ApiFile {
    /// The file for `set` (every tool's schemas bundled).
    pub fn from_tool_set(set: &ToolSet) -> Self {
        ApiFile {
            format: FORMAT.to_string(),
            title: set.title.clone(),
            version: set.version.clone(),
            description: set.description.clone(),
            tag_descriptions: set.tag_descriptions.clone(),
            base_url: set.base_url.clone(),
            security_schemes: set.security_schemes.clone(),
            tools: set
                .tools
                .iter()
                .map(|t| ToolEntry {
                    tool: t.tool().clone(),
                    route: t.route.clone(),
                    operation_id: t.operation_id.clone(),
                    tags: t.tags.clone(),
                    location: t.location.clone(),
                    task_support: t.task_support,
                })
                .collect(),
        }
    }

    /// The tool set the file describes.
    pub fn into_tool_set(self) -> ToolSet {
        ToolSet {
            title: self.title,
            version: self.version,
            description: self.description,
            tag_descriptions: self.tag_descriptions,
            base_url: self.base_url,
            security_schemes: self.security_schemes,
            tools: self
                .tools
                .into_iter()
                .map(|t| {
                    let mut def = ToolDef::new(t.tool, t.route, t.operation_id, t.tags, t.location);
                    def.task_support = t.task_support;
                    Arc::new(def)
                })
                .collect(),
        }
    }
}

/// `set` as `api.json` text (pretty-printed, with a final newline).
pub fn write(set: &ToolSet) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(&ApiFile::from_tool_set(set))?;
    text.push('\n');
    Ok(text)
}

/// The tool set in `api.json` text. The format is checked before anything else, so a file from
/// another version is reported as such rather than as whatever field no longer fits.
pub fn read(text: &str) -> Result<ToolSet, ApiFileError> {
    #[derive(Deserialize)]
    struct Header {
        #[serde(default)]
        format: Option<String>,
    }
    let header: Header = serde_json::from_str(text).map_err(ApiFileError::Json)?;
    match header.format {
        Some(f) if f == FORMAT => {}
        Some(found) => {
            return Err(ApiFileError::Format {
                expected: FORMAT,
                found,
            });
        }
        None => return Err(ApiFileError::NoFormat { expected: FORMAT }),
    }
    let file: ApiFile = serde_json::from_str(text).map_err(ApiFileError::Json)?;
    Ok(file.into_tool_set())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HttpMethod;

    fn set() -> ToolSet {
        let schema = match serde_json::json!({"type": "object", "properties": {"a": {"type": "number", "minimum": 0.1}}})
        {
            serde_json::Value::Object(m) => m,
            _ => unreachable!(),
        };
        let tool = rmcp::model::Tool::new("t", "does t", Arc::new(schema));
        let route = Route::new(HttpMethod::Get, "/t");
        ToolSet {
            title: "T".into(),
            version: "1".into(),
            description: None,
            tag_descriptions: Vec::new(),
            base_url: Some("http://localhost/".into()),
            security_schemes: vec![("b".into(), SecurityScheme::Bearer)],
            tools: vec![Arc::new(ToolDef::new(
                tool,
                route,
                Some("getT".into()),
                vec!["x".into()],
                Location::new("spec.yaml", "/paths/~1t/get"),
            ))],
        }
    }

    #[test]
    fn round_trips() {
        let text = write(&set()).expect("writes");
        assert!(text.starts_with("{\n  \"format\": \"openapi-mcp/api.json v1\",\n"));
        let back = read(&text).expect("reads");
        assert_eq!(write(&back).expect("writes"), text);
        assert_eq!(back.tools[0].tool(), set().tools[0].tool());
        assert_eq!(back.tools[0].route, set().tools[0].route);
    }

    /// `x-mcp-task` goes to generated crates: written only when the operation has one, read back.
    #[test]
    fn task_support_round_trips_and_is_absent_by_default() {
        let plain = write(&set()).expect("writes");
        assert!(!plain.contains("taskSupport"), "{plain}");
        let mut with = set();
        let mut def = (*with.tools[0]).clone();
        def.task_support = TaskSupport::Required;
        with.tools[0] = Arc::new(def);
        let text = write(&with).expect("writes");
        assert!(text.contains("\"taskSupport\": \"required\""), "{text}");
        let back = read(&text).expect("reads");
        assert_eq!(back.tools[0].task_support, TaskSupport::Required);
        let none = text.replace("\"required\"", "\"none\"");
        assert_eq!(
            read(&none).expect("reads").tools[0].task_support,
            TaskSupport::Never
        );
    }

    #[test]
    fn other_formats_are_named() {
        let text = write(&set())
            .expect("writes")
            .replace(FORMAT, "openapi-mcp/api.json v9");
        let e = read(&text).expect_err("refused");
        assert!(
            matches!(&e, ApiFileError::Format { found, .. } if found == "openapi-mcp/api.json v9")
        );
        let msg = e.to_string();
        assert!(msg.contains("v9") && msg.contains(FORMAT), "{msg}");

        let e = read(r#"{"title": "T", "version": "1", "tools": []}"#).expect_err("refused");
        assert!(matches!(e, ApiFileError::NoFormat { .. }), "{e}");
        assert!(matches!(read("{"), Err(ApiFileError::Json(_))));
    }
}
