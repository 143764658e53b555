//! The Arazzo 1.0.x document as written: serde types of its objects. Unknown fields (the `x-`
//! specification extensions among them) are ignored. [`crate::load`] reads these and compiles
//! them into the executable form ([`crate::load::Workflow`]).
//!
//! The workflows are deserialized one at a time ([`Arazzo::workflows`] holds them as JSON), so a
//! workflow that is not well formed is reported and skipped alone.

use serde::Deserialize;
use serde_json::{Map, Value};

/// The root object: everything but the workflows, which [`crate::load`] reads one by one.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Arazzo {
    /// The specification version (`1.0.0`, `1.0.1`, any `1.0.x`).
    pub arazzo: String,
    pub info: Info,
    pub source_descriptions: Vec<SourceDescription>,
    /// The workflows as written (each read by [`Workflow`]'s deserializer on its own).
    pub workflows: Vec<Value>,
    #[serde(default)]
    pub components: Components,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    pub title: String,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub version: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceDescription {
    pub name: String,
    pub url: String,
    /// `openapi` or `arazzo`; absent means `openapi` here (the only kind this crate calls).
    #[serde(default, rename = "type")]
    pub kind: Option<SourceKind>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Openapi,
    Arazzo,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Openapi => "openapi",
            SourceKind::Arazzo => "arazzo",
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Components {
    /// Reusable JSON Schemas for workflow `inputs` (`$ref: '#/components/inputs/NAME'`).
    #[serde(default)]
    pub inputs: Map<String, Value>,
    #[serde(default)]
    pub parameters: Map<String, Value>,
    #[serde(default)]
    pub success_actions: Map<String, Value>,
    #[serde(default)]
    pub failure_actions: Map<String, Value>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workflow {
    pub workflow_id: String,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// A JSON Schema 2020-12 object.
    #[serde(default)]
    pub inputs: Option<Value>,
    #[serde(default)]
    pub depends_on: Vec<String>,
    pub steps: Vec<Step>,
    #[serde(default)]
    pub success_actions: Vec<Reusable<SuccessAction>>,
    #[serde(default)]
    pub failure_actions: Vec<Reusable<FailureAction>>,
    /// Name -> runtime expression.
    #[serde(default)]
    pub outputs: Map<String, Value>,
    #[serde(default)]
    pub parameters: Vec<Reusable<Parameter>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub step_id: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub operation_id: Option<String>,
    #[serde(default)]
    pub operation_path: Option<String>,
    #[serde(default)]
    pub workflow_id: Option<String>,
    #[serde(default)]
    pub parameters: Vec<Reusable<Parameter>>,
    #[serde(default)]
    pub request_body: Option<RequestBody>,
    #[serde(default)]
    pub success_criteria: Vec<Criterion>,
    #[serde(default)]
    pub on_success: Vec<Reusable<SuccessAction>>,
    #[serde(default)]
    pub on_failure: Vec<Reusable<FailureAction>>,
    /// Name -> runtime expression.
    #[serde(default)]
    pub outputs: Map<String, Value>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Parameter {
    pub name: String,
    /// `path`, `query`, `header` or `cookie`; absent for a step that calls a workflow (its
    /// parameters are the workflow's inputs).
    #[serde(default, rename = "in")]
    pub location: Option<String>,
    /// A constant, a runtime expression, or a string with `{expression}`s.
    pub value: Value,
}

/// An object written in place, or a Reusable Object (`reference: $components.KIND.NAME`, and for
/// parameters an optional `value` that replaces the component's).
#[derive(Clone, Debug)]
pub enum Reusable<T> {
    Inline(T),
    Reference {
        reference: String,
        value: Option<Value>,
    },
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Reusable<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if let Some(obj) = v.as_object()
            && let Some(r) = obj.get("reference")
        {
            let reference = r
                .as_str()
                .ok_or_else(|| serde::de::Error::custom("`reference` must be a string"))?
                .to_string();
            return Ok(Reusable::Reference {
                reference,
                value: obj.get("value").cloned(),
            });
        }
        T::deserialize(v)
            .map(Reusable::Inline)
            .map_err(serde::de::Error::custom)
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SuccessAction {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: SuccessKind,
    #[serde(default)]
    pub workflow_id: Option<String>,
    #[serde(default)]
    pub step_id: Option<String>,
    #[serde(default)]
    pub criteria: Vec<Criterion>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SuccessKind {
    End,
    Goto,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureAction {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FailureKind,
    #[serde(default)]
    pub workflow_id: Option<String>,
    #[serde(default)]
    pub step_id: Option<String>,
    /// Seconds (a non-negative decimal).
    #[serde(default)]
    pub retry_after: Option<f64>,
    /// Retries (a non-negative integer); absent means one.
    #[serde(default)]
    pub retry_limit: Option<u64>,
    #[serde(default)]
    pub criteria: Vec<Criterion>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureKind {
    End,
    Retry,
    Goto,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Criterion {
    #[serde(default)]
    pub context: Option<String>,
    pub condition: String,
    /// `simple`, `regex`, `jsonpath`, `xpath`, or a Criterion Expression Type Object
    /// (`{type, version}`): read by [`crate::criteria::CriterionKind::from_type`].
    #[serde(default, rename = "type")]
    pub kind: Option<Value>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestBody {
    #[serde(default)]
    pub content_type: Option<String>,
    #[serde(default)]
    pub payload: Option<Value>,
    #[serde(default)]
    pub replacements: Vec<Replacement>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Replacement {
    /// A JSON pointer into the payload.
    pub target: String,
    pub value: Value,
}

/// Whether `version` (the `arazzo` field) is one this crate reads: `1.0` and any `1.0.x`.
pub fn supported_version(version: &str) -> bool {
    let mut parts = version.trim().split('.');
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some("1"), Some("0"), None | Some(_), None)
    ) && version
        .trim()
        .split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        for ok in ["1.0.0", "1.0.1", "1.0.7", "1.0"] {
            assert!(supported_version(ok), "{ok}");
        }
        for bad in [
            "2.0.0",
            "1.1.0",
            "0.9",
            "1",
            "1.0.x",
            "1.0.0-rc1",
            "",
            "1.0.0.1",
        ] {
            assert!(!supported_version(bad), "{bad}");
        }
    }

    #[test]
    fn reusable_or_inline() {
        let p: Reusable<Parameter> = serde_json::from_value(
            serde_json::json!({"reference": "$components.parameters.page", "value": 2}),
        )
        .expect("reference");
        assert!(
            matches!(p, Reusable::Reference { ref reference, value: Some(_) } if reference == "$components.parameters.page")
        );
        let p: Reusable<Parameter> = serde_json::from_value(
            serde_json::json!({"name": "a", "in": "query", "value": 1, "x-note": true}),
        )
        .expect("inline");
        assert!(matches!(p, Reusable::Inline(Parameter { ref name, .. }) if name == "a"));
        let e = serde_json::from_value::<Reusable<Parameter>>(serde_json::json!({"in": "query"}))
            .expect_err("no name");
        assert!(e.to_string().contains("name"), "{e}");
    }
}
