//! The OAI Arazzo repository's 1.0 examples (fixtures/oai-examples, see SOURCES there): they
//! load, validate against their OpenAPI source descriptions, and list their workflows as tools.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use openapi_mcp_arazzo::load::{self, Document};
use openapi_mcp_arazzo::tool::workflow_tools;
use openapi_mcp_arazzo::validate::{self, OperationInfo, OperationParam, Operations, Workflows};
use openapi_mcp_toolset::model::{HttpMethod, ParamIn};
use openapi_mcp_toolset::naming::NameAllocator;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/oai-examples")
        .join(name)
}

/// The operations of the OpenAPI source descriptions that are local files, read directly from
/// the specs (a small stand-in for the integrator's converted tools).
struct Specs(HashMap<String, Value>);

impl Specs {
    fn of(doc: &Document) -> Specs {
        let mut specs = HashMap::new();
        for s in doc.source_descriptions() {
            if let Ok(text) = std::fs::read_to_string(&s.location) {
                let v: Value = serde_yaml_ng::from_str(&text).expect("spec parses");
                specs.insert(s.name.clone(), v);
            }
        }
        Specs(specs)
    }

    fn info(source: &str, path: &str, method: &str, item: &Value, op: &Value) -> OperationInfo {
        let method = HttpMethod::parse(method).expect("method");
        let mut params = Vec::new();
        for p in item
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .chain(
                op.get("parameters")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            )
        {
            let name = p["name"].as_str().expect("name").to_string();
            let location = ParamIn::parse(p["in"].as_str().expect("in")).expect("location");
            let required = p.get("required").and_then(Value::as_bool).unwrap_or(false);
            params.retain(|q: &OperationParam| !(q.name == name && q.location == location));
            params.push(OperationParam {
                name,
                location,
                required,
            });
        }
        OperationInfo {
            source: source.to_string(),
            tool: op["operationId"].as_str().unwrap_or(path).to_string(),
            method,
            path: path.to_string(),
            params,
            body_required: op
                .pointer("/requestBody/required")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            read_only: method.is_read_only(),
            destructive: !method.is_read_only() && method != HttpMethod::Post,
        }
    }

    fn all(&self) -> Vec<(String, OperationInfo, Option<String>)> {
        let mut out = Vec::new();
        for (source, spec) in &self.0 {
            for (path, item) in spec["paths"].as_object().into_iter().flatten() {
                for (method, op) in item.as_object().into_iter().flatten() {
                    if HttpMethod::parse(method).is_none() {
                        continue;
                    }
                    let id = op
                        .get("operationId")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    out.push((
                        source.clone(),
                        Self::info(source, path, method, item, op),
                        id,
                    ));
                }
            }
        }
        out
    }
}

impl Operations for Specs {
    fn by_id(&self, source: Option<&str>, operation_id: &str) -> Option<OperationInfo> {
        let found: Vec<OperationInfo> = self
            .all()
            .into_iter()
            .filter(|(s, _, id)| {
                source.is_none_or(|x| x == s) && id.as_deref() == Some(operation_id)
            })
            .map(|(_, info, _)| info)
            .collect();
        (found.len() == 1)
            .then(|| found.into_iter().next())
            .flatten()
    }

    fn by_path(&self, source: &str, path: &str, method: &str) -> Option<OperationInfo> {
        let item = self.0.get(source)?.get("paths")?.get(path)?;
        let op = item.get(method)?;
        Some(Self::info(source, path, method, item, op))
    }
}

fn checked(name: &str) -> Workflows {
    let doc = load::load_file(&fixture(name)).expect("loads");
    let specs = Specs::of(&doc);
    validate::validate(Arc::new(doc), &specs)
}

fn messages(w: &Workflows) -> Vec<String> {
    w.diagnostics().iter().map(ToString::to_string).collect()
}

fn usable(w: &Workflows) -> Vec<&str> {
    w.usable().map(|wf| wf.id.as_str()).collect()
}

/// `file#pointer: workflow `id`: ...` with this pointer, containing `text`.
fn has(w: &Workflows, pointer: &str, text: &str) -> bool {
    w.diagnostics()
        .iter()
        .any(|d| d.location.pointer() == pointer && d.message.contains(text))
}

#[test]
fn pet_coupons_loads_validates_and_lists_its_usable_workflow() {
    let w = checked("pet-coupons.arazzo.yaml");
    let doc = w.document();
    assert_eq!(doc.version, "1.0.0");
    let src = &doc.source_descriptions()[0];
    assert_eq!(src.name, "pet-coupons");
    assert_eq!(
        Path::new(&src.location),
        fixture("pet-coupons.openapi.yaml")
            .canonicalize()
            .expect("exists"),
        "relative to the document"
    );
    let ids: Vec<&str> = doc.workflows().iter().map(|w| w.id.as_str()).collect();
    assert_eq!(ids, ["apply-coupon", "buy-available-pet", "place-order"]);
    // `$ref: '#/components/inputs/...'` inlined, nested ones too.
    let inputs = doc
        .workflow("apply-coupon")
        .and_then(|w| w.inputs.clone())
        .expect("inputs");
    assert_eq!(
        inputs.pointer("/properties/store_id/type"),
        Some(&Value::from("string"))
    );
    assert_eq!(
        inputs.pointer("/properties/my_pet_tags/type"),
        Some(&Value::from("array"))
    );

    // The example's own mistakes, each where it is written.
    for (pointer, text) in [
        ("/workflows/0/steps/0/outputs/my_pet_id", "`$outputs[0].id`"),
        (
            "/workflows/0/steps/2/outputs/my_order_id",
            "`$workflow_order_id`",
        ),
        (
            "/workflows/0/steps/0/parameters/0/name",
            "has no query parameter `pet_tags`",
        ),
        (
            "/workflows/0/steps/1",
            "does not give the required path parameter `petId`",
        ),
        (
            "/workflows/0/steps/2/successCriteria/0",
            "calls a workflow, so there is no HTTP",
        ),
        (
            "/workflows/1/steps/1/successCriteria/0",
            "calls a workflow, so there is no HTTP",
        ),
    ] {
        assert!(
            has(&w, pointer, text),
            "{pointer}: {text}\n{:#?}",
            messages(&w)
        );
    }
    for d in w.diagnostics() {
        assert!(d.location.doc().ends_with("pet-coupons.arazzo.yaml"), "{d}");
        assert!(d.workflow.as_deref() != Some("place-order"), "{d}");
    }
    assert_eq!(usable(&w), ["place-order"]);

    let mut names = NameAllocator::new("pets", 64);
    let tools = workflow_tools(&w, &mut names);
    assert_eq!(tools.len(), 1);
    let t = &tools[0].tool;
    assert_eq!(t.name, "pets_place_order");
    assert_eq!(t.title.as_deref(), Some("Place an order for a pet."));
    let props: Vec<&String> = t.input_schema["properties"]
        .as_object()
        .expect("props")
        .keys()
        .collect();
    assert_eq!(props, ["pet_id", "quantity", "coupon_code"]);
    assert_eq!(t.input_schema["type"], "object");
    let a = t.annotations.as_ref().expect("annotations");
    assert_eq!(
        (a.read_only_hint, a.destructive_hint),
        (Some(false), Some(false)),
        "a POST"
    );
    assert!(
        t.output_schema.is_none(),
        "`$response.body.id`: the body's type is not known here"
    );
}

#[test]
fn oauth_example_as_published_and_with_its_check_as_a_simple_condition() {
    // As published, `$.access_token != null` is not an RFC 9535 query: every workflow with it
    // is skipped, at the criterion.
    let w = checked("oauth.arazzo.yaml");
    assert!(
        has(
            &w,
            "/workflows/1/steps/0/successCriteria/1/condition",
            "JSONPath"
        ),
        "{:#?}",
        messages(&w)
    );
    assert!(usable(&w).is_empty(), "{:?}", usable(&w));

    // The same document with the check written as a simple condition: all three are usable,
    // the nested call's `$outputs.refresh_token` included.
    let text = std::fs::read_to_string(fixture("oauth.arazzo.yaml")).expect("read");
    let fixed = text.replace(
        "- context: $response.body\n            condition: $.access_token != null\n            type: jsonpath",
        "- condition: $response.body#/access_token != null",
    );
    assert_ne!(fixed, text);
    let base =
        url::Url::from_file_path(fixture("oauth.arazzo.yaml").canonicalize().expect("abs")).ok();
    let doc = load::from_bytes(fixed.as_bytes(), "oauth.arazzo.yaml", base).expect("loads");
    let specs = Specs::of(&doc);
    let w = validate::validate(Arc::new(doc), &specs);
    assert!(w.diagnostics().is_empty(), "{:#?}", messages(&w));
    assert_eq!(
        usable(&w),
        [
            "refresh-token-flow",
            "client-credentials-flow",
            "authorization-code-flow"
        ]
    );
    let ops: Vec<&str> = w
        .operations_of("refresh-token-flow")
        .iter()
        .map(|o| o.tool.as_str())
        .collect();
    assert_eq!(
        ops,
        ["get-token", "authorize"],
        "its own step, then the nested workflow's"
    );
    let mut names = NameAllocator::new("", 64);
    let names: Vec<String> = workflow_tools(&w, &mut names)
        .into_iter()
        .map(|t| t.tool.name.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "refresh_token_flow",
            "client_credentials_flow",
            "authorization_code_flow"
        ]
    );
}

#[test]
fn login_and_retrieve_pets_points_at_a_path_item() {
    let w = checked("LoginAndRetrievePets.arazzo.yaml");
    let src = &w.document().source_descriptions()[0];
    assert_eq!(
        src.location,
        "https://raw.githubusercontent.com/swagger-api/swagger-petstore/master/src/main/resources/openapi.yaml"
    );
    assert!(has(
        &w,
        "/workflows/0/steps/1/operationPath",
        "names a path item, not an operation"
    ));
    // The remote source is not loaded in these tests: its operation is unknown.
    assert!(has(
        &w,
        "/workflows/0/steps/0/operationId",
        "no operation `loginUser`"
    ));
    // The broken step is still known by its id (no second report about `getPetStep`).
    assert_eq!(w.diagnostics().len(), 2, "{:#?}", messages(&w));
    assert!(usable(&w).is_empty());
}
