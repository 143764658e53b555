//! The executor against a scripted StepCaller: goto, retry, end, a failing criterion, nested
//! workflows and dependsOn, budgets; and validation's reports on broken workflows.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use openapi_mcp_arazzo::expr::Exchange;
use openapi_mcp_arazzo::load;
use openapi_mcp_arazzo::run::{self, CallFailure, CallParam, Limits, StepCall, StepCaller};
use openapi_mcp_arazzo::tool::workflow_tool;
use openapi_mcp_arazzo::validate::{self, OperationInfo, OperationParam, Operations, Workflows};
use openapi_mcp_toolset::model::{HttpMethod, ParamIn};
use openapi_mcp_toolset::naming::NameAllocator;
use serde_json::{Value, json};

/// listPets GET /pets (tag query), placeOrder POST /orders (body required), getOrder
/// GET /orders/{id}, login POST /login (X-Key header), deleteOrder DELETE /orders/{id}.
struct Shop;

fn op(
    tool: &str,
    method: HttpMethod,
    path: &str,
    params: &[(&str, ParamIn, bool)],
) -> OperationInfo {
    OperationInfo {
        source: "shop".into(),
        tool: tool.into(),
        method,
        path: path.into(),
        params: params
            .iter()
            .map(|(n, l, r)| OperationParam {
                name: (*n).into(),
                location: *l,
                required: *r,
            })
            .collect(),
        body_required: method == HttpMethod::Post && tool == "placeOrder",
        read_only: method.is_read_only(),
        destructive: method == HttpMethod::Delete,
    }
}

impl Operations for Shop {
    fn by_id(&self, source: Option<&str>, id: &str) -> Option<OperationInfo> {
        if source.is_some_and(|s| s != "shop") {
            return None;
        }
        Some(match id {
            "listPets" => op(
                id,
                HttpMethod::Get,
                "/pets",
                &[
                    ("tag", ParamIn::Query, false),
                    ("X-Token", ParamIn::Header, false),
                ],
            ),
            "placeOrder" => op(id, HttpMethod::Post, "/orders", &[]),
            "getOrder" => op(
                id,
                HttpMethod::Get,
                "/orders/{id}",
                &[("id", ParamIn::Path, true)],
            ),
            "login" => op(
                id,
                HttpMethod::Post,
                "/login",
                &[("X-Key", ParamIn::Header, true)],
            ),
            "deleteOrder" => op(
                id,
                HttpMethod::Delete,
                "/orders/{id}",
                &[("id", ParamIn::Path, true)],
            ),
            _ => return None,
        })
    }

    fn by_path(&self, source: &str, path: &str, method: &str) -> Option<OperationInfo> {
        (source == "shop" && path == "/orders/{id}" && method == "get")
            .then(|| self.by_id(None, "getOrder"))
            .flatten()
    }
}

/// A recorded call: the operation's tool, its parameters, its body.
type Call = (String, Vec<CallParam>, Option<Value>);

/// Answers each operation with the next scripted response, and records every call.
#[derive(Default)]
struct Script {
    answers: Mutex<HashMap<String, VecDeque<Result<Exchange, CallFailure>>>>,
    calls: Mutex<Vec<Call>>,
}

impl Script {
    fn answer(self, tool: &str, status: u16, body: Value) -> Self {
        self.answer_with(tool, status, body, &[])
    }

    fn answer_with(self, tool: &str, status: u16, body: Value, headers: &[(&str, &str)]) -> Self {
        let x = Exchange {
            status,
            response_body: Some(body),
            response_headers: headers
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
            ..Exchange::default()
        };
        self.answers
            .lock()
            .expect("lock")
            .entry(tool.into())
            .or_default()
            .push_back(Ok(x));
        self
    }

    fn calls(&self) -> Vec<String> {
        self.calls
            .lock()
            .expect("lock")
            .iter()
            .map(|(t, _, _)| t.clone())
            .collect()
    }
}

impl StepCaller for Script {
    fn call<'a>(&'a self, call: StepCall<'a>) -> BoxFuture<'a, Result<Exchange, CallFailure>> {
        let tool = call.operation.tool.clone();
        self.calls.lock().expect("lock").push((
            tool.clone(),
            call.params.clone(),
            call.body.clone(),
        ));
        let next = self
            .answers
            .lock()
            .expect("lock")
            .get_mut(&tool)
            .and_then(VecDeque::pop_front);
        Box::pin(async move {
            next.unwrap_or_else(|| {
                Err(CallFailure {
                    message: format!("no scripted answer for {tool}"),
                })
            })
        })
    }
}

fn workflows(yaml: &str) -> Workflows {
    let doc = load::from_bytes(yaml.as_bytes(), "flows.arazzo.yaml", None).expect("loads");
    validate::validate(Arc::new(doc), &Shop)
}

const HEAD: &str = "arazzo: 1.0.1\ninfo: {title: Shop flows, version: '1'}\nsourceDescriptions: [{name: shop, url: ./shop.yaml, type: openapi}]\n";

const BUY: &str = r#"
workflows:
  - workflowId: buy
    summary: Buy a pet
    inputs:
      type: object
      required: [tag]
      properties:
        tag: {type: string}
        coupon: {type: string}
    steps:
      - stepId: find
        operationId: listPets
        parameters:
          - {name: tag, in: query, value: $inputs.tag}
        successCriteria:
          - condition: $statusCode == 200
        outputs:
          petId: $response.body#/0/id
      - stepId: order
        operationId: placeOrder
        requestBody:
          contentType: application/json
          payload:
            petId: $steps.find.outputs.petId
            coupon: $inputs.coupon
            note: 'pet {$steps.find.outputs.petId}'
        successCriteria:
          - condition: $statusCode == 201
        onFailure:
          - name: busy
            type: retry
            retryAfter: 0
            retryLimit: 2
            criteria: [{condition: $statusCode == 503}]
          - name: gone
            type: goto
            stepId: find
            criteria: [{condition: $statusCode == 409}]
        outputs:
          orderId: $response.body#/id
      - stepId: confirm
        operationId: getOrder
        parameters:
          - {name: id, in: path, value: $steps.order.outputs.orderId}
        successCriteria:
          - condition: $statusCode == 200
          - context: $response.body
            condition: '$[?@ == ''placed'']'
            type: jsonpath
        onSuccess:
          - {name: done, type: end}
        outputs:
          status: $response.body#/status
      - stepId: never
        operationId: deleteOrder
        parameters:
          - {name: id, in: path, value: $steps.order.outputs.orderId}
    outputs:
      orderId: $steps.order.outputs.orderId
      status: $steps.confirm.outputs.status
      tag: $inputs.tag
"#;

#[tokio::test]
async fn goto_retry_and_end() {
    let w = workflows(&format!("{HEAD}{BUY}"));
    assert!(w.diagnostics().is_empty(), "{:#?}", w.diagnostics());
    let script = Script::default()
        .answer("listPets", 200, json!([{"id": 7}]))
        .answer("placeOrder", 503, json!({}))
        .answer("placeOrder", 409, json!({}))
        .answer("listPets", 200, json!([{"id": 8}]))
        .answer("placeOrder", 503, json!({}))
        .answer("placeOrder", 201, json!({"id": 99}))
        .answer("getOrder", 200, json!({"id": 99, "status": "placed"}));
    let out = run::run(
        &w,
        "buy",
        json!({"tag": "dog"}),
        &script,
        &Limits::default(),
    )
    .await
    .expect("succeeds");
    assert_eq!(
        Value::Object(out),
        json!({"orderId": 99, "status": "placed", "tag": "dog"})
    );
    assert_eq!(
        script.calls(),
        [
            "listPets",
            "placeOrder",
            "placeOrder",
            "listPets",
            "placeOrder",
            "placeOrder",
            "getOrder"
        ],
        "retry on 503, goto find on 409, retry again (2 allowed), end after confirm"
    );
    let calls = script.calls.lock().expect("lock");
    assert_eq!(
        calls[0].1,
        [CallParam {
            location: ParamIn::Query,
            name: "tag".into(),
            value: json!("dog")
        }]
    );
    // The last order carries the second pet; the absent coupon is left out.
    assert_eq!(calls[5].2, Some(json!({"petId": 8, "note": "pet 8"})));
    assert_eq!(calls[6].1[0].value, json!(99));
}

#[tokio::test]
async fn a_failing_criterion_names_step_status_and_condition() {
    let w = workflows(&format!("{HEAD}{BUY}"));
    let script = Script::default()
        .answer("listPets", 200, json!([{"id": 7}]))
        .answer("placeOrder", 400, json!({"error": "secret-detail"}));
    let e = run::run(
        &w,
        "buy",
        json!({"tag": "dog"}),
        &script,
        &Limits::default(),
    )
    .await
    .expect_err("fails");
    assert_eq!(e.workflow, "buy");
    assert_eq!(e.step.as_deref(), Some("order"));
    assert_eq!(e.status, Some(400));
    assert_eq!(e.criterion.as_deref(), Some("$statusCode == 201"));
    let text = e.to_string();
    assert_eq!(
        text,
        "workflow `buy`, step `order` (HTTP 400): success criterion `$statusCode == 201` not met"
    );
    assert!(!text.contains("secret"));
}

#[tokio::test]
async fn retries_are_bounded_by_the_retry_limit() {
    let w = workflows(&format!("{HEAD}{BUY}"));
    let script = Script::default()
        .answer("listPets", 200, json!([{"id": 7}]))
        .answer("placeOrder", 503, json!({}))
        .answer("placeOrder", 503, json!({}))
        .answer("placeOrder", 503, json!({}))
        .answer("placeOrder", 201, json!({"id": 1}));
    let e = run::run(
        &w,
        "buy",
        json!({"tag": "dog"}),
        &script,
        &Limits::default(),
    )
    .await
    .expect_err("exhausted");
    assert_eq!(
        script.calls(),
        ["listPets", "placeOrder", "placeOrder", "placeOrder"]
    );
    assert_eq!((e.step.as_deref(), e.status), (Some("order"), Some(503)));
}

#[tokio::test]
async fn a_retry_after_header_beyond_the_limit_fails_instead_of_waiting() {
    let w = workflows(&format!("{HEAD}{BUY}"));
    let script = Script::default()
        .answer("listPets", 200, json!([{"id": 7}]))
        .answer_with("placeOrder", 503, json!({}), &[("Retry-After", "120")]);
    let limits = Limits {
        max_retry_delay: Duration::from_secs(60),
        ..Limits::default()
    };
    let e = run::run(&w, "buy", json!({"tag": "dog"}), &script, &limits)
        .await
        .expect_err("too long a wait");
    assert!(
        e.message
            .contains("would wait 120 s, more than the limit of 60 s"),
        "{e}"
    );
    assert_eq!(script.calls(), ["listPets", "placeOrder"]);
}

const NESTED: &str = r#"
workflows:
  - workflowId: session
    inputs: {type: object, properties: {key: {type: string}}}
    steps:
      - stepId: login
        operationId: login
        parameters:
          - {name: X-Key, in: header, value: $inputs.key}
        outputs:
          token: $response.body#/token
    outputs:
      token: $steps.login.outputs.token
  - workflowId: lookup
    inputs:
      type: object
      required: [orderId]
      properties: {orderId: {type: integer}}
    steps:
      - stepId: get
        operationId: getOrder
        parameters:
          - {name: id, in: path, value: $inputs.orderId}
        successCriteria:
          - condition: $response.body#/status == 'Placed'
        outputs:
          status: $response.body#/status
    outputs:
      status: $steps.get.outputs.status
  - workflowId: outer
    summary: List, then look the order up
    dependsOn: [session]
    inputs: {type: object, properties: {key: {type: string}, id: {type: integer}}}
    steps:
      - stepId: pets
        operationId: listPets
        parameters:
          - {name: X-Token, in: header, value: 'Bearer {$workflows.session.outputs.token}'}
      - stepId: check
        workflowId: lookup
        parameters:
          - {name: orderId, value: $inputs.id}
        successCriteria:
          - condition: $outputs.status != null
        outputs:
          orderStatus: $outputs.status
    outputs:
      status: $steps.check.outputs.orderStatus
      code: $statusCode
"#;

#[tokio::test]
async fn nested_workflows_and_depends_on() {
    let w = workflows(&format!("{HEAD}{NESTED}"));
    // `$statusCode` in the workflow outputs is reported: only `outer` is affected.
    let ds: Vec<String> = w.diagnostics().iter().map(ToString::to_string).collect();
    assert_eq!(ds.len(), 1, "{ds:#?}");
    assert!(ds[0].starts_with("flows.arazzo.yaml#/workflows/2/outputs/code: workflow `outer`: `$statusCode` reads an HTTP exchange"), "{ds:#?}");
    let usable: Vec<&str> = w.usable().map(|x| x.id.as_str()).collect();
    assert_eq!(usable, ["session", "lookup"]);

    let fixed = NESTED.replace("      code: $statusCode\n", "");
    let w = workflows(&format!("{HEAD}{fixed}"));
    assert!(w.diagnostics().is_empty(), "{:#?}", w.diagnostics());
    let script = Script::default()
        .answer("login", 200, json!({"token": "t0k"}))
        .answer("listPets", 200, json!([]))
        .answer("getOrder", 200, json!({"status": "placed"}));
    let out = run::run(
        &w,
        "outer",
        json!({"key": "k", "id": 5}),
        &script,
        &Limits::default(),
    )
    .await
    .expect("succeeds");
    assert_eq!(
        Value::Object(out),
        json!({"status": "placed"}),
        "case-insensitive string comparison"
    );
    assert_eq!(script.calls(), ["login", "listPets", "getOrder"]);
    {
        let calls = script.calls.lock().expect("lock");
        assert_eq!(
            calls[0].1[0],
            CallParam {
                location: ParamIn::Header,
                name: "X-Key".into(),
                value: json!("k")
            }
        );
        assert_eq!(calls[1].1[0].value, json!("Bearer t0k"));
        assert_eq!(calls[2].1[0].value, json!(5));
    }

    // The nested workflow's failure is the step's; it names the innermost step.
    let script = Script::default()
        .answer("login", 200, json!({"token": "t0k"}))
        .answer("listPets", 200, json!([]))
        .answer("getOrder", 404, json!({}));
    let e = run::run(
        &w,
        "outer",
        json!({"key": "k", "id": 5}),
        &script,
        &Limits::default(),
    )
    .await
    .expect_err("fails");
    assert_eq!(
        (e.workflow.as_str(), e.step.as_deref(), e.status),
        ("lookup", Some("get"), Some(404))
    );

    // Depth budget: `outer` runs `session` and `lookup` one level down.
    let script = Script::default().answer("login", 200, json!({"token": "t"}));
    let limits = Limits {
        max_depth: 0,
        ..Limits::default()
    };
    let e = run::run(&w, "outer", json!({}), &script, &limits)
        .await
        .expect_err("too deep");
    assert!(e.message.contains("MAX_DEPTH"), "{e}");
    assert!(script.calls().is_empty());
}

#[tokio::test]
async fn a_goto_loop_stops_at_the_step_budget() {
    let yaml = format!(
        "{HEAD}{}",
        r#"
workflows:
  - workflowId: poll
    steps:
      - stepId: again
        operationId: listPets
        onSuccess:
          - {name: loop, type: goto, stepId: again}
"#
    );
    let w = workflows(&yaml);
    assert!(w.diagnostics().is_empty(), "{:#?}", w.diagnostics());
    let mut script = Script::default();
    for _ in 0..10 {
        script = script.answer("listPets", 200, json!([]));
    }
    let limits = Limits {
        max_steps: 4,
        ..Limits::default()
    };
    let e = run::run(&w, "poll", json!({}), &script, &limits)
        .await
        .expect_err("budget");
    assert!(
        e.message
            .contains("more than 4 steps executed in one run (MAX_STEPS)"),
        "{e}"
    );
    assert_eq!(script.calls().len(), 4);
}

#[test]
fn validation_reports_and_skips_broken_workflows_alone() {
    let yaml = format!(
        "{HEAD}{}",
        r#"
workflows:
  - workflowId: good
    inputs: {type: object, properties: {id: {type: integer}}}
    steps:
      - stepId: get
        operationPath: '{$sourceDescriptions.shop.url}#/paths/~1orders~1{id}/get'
        parameters:
          - {name: id, in: path, value: $inputs.id}
    outputs:
      code: $steps.get.outputs.code
  - workflowId: bad
    inputs: {type: object, required: [x], properties: {x: {type: string}}}
    steps:
      - stepId: first
        operationId: getOrder
        parameters:
          - {name: id, in: path, value: $steps.second.outputs.id}
        onFailure:
          - {name: nowhere, type: goto, stepId: missing}
      - stepId: second
        operationId: $sourceDescriptions.shop.nope
        outputs: {id: $response.body#/id}
      - stepId: third
        workflowId: lookup
        parameters:
          - {name: y, value: $inputs.xx}
  - workflowId: lookup
    inputs: {type: object, required: [orderId], properties: {orderId: {type: integer}}}
    steps:
      - stepId: call-bad
        workflowId: bad
        parameters: [{name: x, value: '1'}]
  - workflowId: ping
    dependsOn: [pong]
    steps:
      - {stepId: s, operationId: listPets}
  - workflowId: pong
    dependsOn: [ping]
    steps:
      - {stepId: s, operationId: listPets}
"#
    );
    let w = workflows(&yaml);
    let ds: Vec<(String, String)> = w
        .diagnostics()
        .iter()
        .map(|d| (d.location.pointer().to_string(), d.message.clone()))
        .collect();
    let has = |pointer: &str, text: &str| ds.iter().any(|(p, m)| p == pointer && m.contains(text));
    for (pointer, text) in [
        (
            "/workflows/0/outputs/code",
            "step `get` has no output `code`",
        ),
        (
            "/workflows/1/steps/0/parameters/0/value",
            "step `second` cannot have run yet here",
        ),
        (
            "/workflows/1/steps/0/onFailure/0/stepId",
            "no step `missing`",
        ),
        (
            "/workflows/1/steps/1/operationId",
            "no operation `nope` in source description `shop`",
        ),
        (
            "/workflows/1/steps/2",
            "does not give the required input `orderId` of workflow `lookup`",
        ),
        (
            "/workflows/1/steps/2/parameters/0/name",
            "workflow `lookup` has no input `y`",
        ),
        (
            "/workflows/1/steps/2/parameters/0/value",
            "has no input `xx` (did you mean `x`?)",
        ),
        ("/workflows/1", "a cycle of workflows: bad -> lookup -> bad"),
        ("/workflows/3", "a cycle of workflows: ping -> pong -> ping"),
        ("/workflows/4", "a cycle of workflows: pong -> ping -> pong"),
    ] {
        assert!(has(pointer, text), "{pointer}: {text}\n{ds:#?}");
    }
    // `good` only reads its own step's missing output: fixed, it is usable alone.
    assert!(w.get("good").is_none());
    let fixed = yaml.replace(
        "      code: $steps.get.outputs.code\n",
        "      code: $steps.get.outputs\n",
    );
    let w = workflows(&fixed);
    let usable: Vec<&str> = w.usable().map(|x| x.id.as_str()).collect();
    assert_eq!(usable, ["good"]);
    assert_eq!(w.operation(0, 0).map(|o| o.tool.as_str()), Some("getOrder"));
}

#[test]
fn workflow_tools_derive_annotations_and_output_schemas() {
    let yaml = format!(
        "{HEAD}{}",
        r#"
workflows:
  - workflowId: checkOrder
    summary: Check an order
    description: Reads an order and reports its status code.
    inputs: {type: object, required: [id], properties: {id: {$ref: '#/components/inputs/id'}}}
    steps:
      - stepId: get
        operationId: getOrder
        parameters: [{name: id, in: path, value: $inputs.id}]
        outputs: {code: $statusCode, etag: $response.header.ETag}
    outputs:
      code: $steps.get.outputs.code
      etag: $steps.get.outputs.etag
      id: $inputs.id
  - workflowId: cancel_order
    steps:
      - stepId: get
        workflowId: checkOrder
        parameters: [{name: id, value: 1}]
      - stepId: del
        operationId: deleteOrder
        parameters: [{name: id, in: path, value: 1}]
    outputs:
      code: $steps.get.outputs
components:
  inputs:
    id: {type: integer, minimum: 1}
"#
    );
    let w = workflows(&yaml);
    assert!(w.diagnostics().is_empty(), "{:#?}", w.diagnostics());
    let mut names = NameAllocator::new("shop", 64);
    names.reserve("shop_check_order");
    let read = workflow_tool(&w, w.get("checkOrder").expect("usable"), &mut names);
    assert!(
        read.name.starts_with("shop_check_order_"),
        "unique beside a taken name: {}",
        read.name
    );
    assert_eq!(
        read.description.as_deref(),
        Some("Check an order\n\nReads an order and reports its status code.")
    );
    assert_eq!(
        Value::Object((*read.input_schema).clone()),
        json!({"type": "object", "required": ["id"], "properties": {"id": {"type": "integer", "minimum": 1}}})
    );
    assert_eq!(
        read.output_schema.as_deref().cloned().map(Value::Object),
        Some(json!({"type": "object", "properties": {
            "code": {"type": "integer"}, "etag": {"type": "string"}, "id": {"type": "integer", "minimum": 1}
        }}))
    );
    let a = read.annotations.expect("annotations");
    assert_eq!(
        (a.read_only_hint, a.idempotent_hint),
        (Some(true), Some(true))
    );
    assert_eq!(a.destructive_hint, None);

    let cancel = workflow_tool(&w, w.get("cancel_order").expect("usable"), &mut names);
    assert_eq!(cancel.name, "shop_cancel_order");
    assert!(
        cancel.output_schema.is_none(),
        "a whole outputs object: not derived"
    );
    let a = cancel.annotations.expect("annotations");
    assert_eq!(
        (a.read_only_hint, a.destructive_hint),
        (Some(false), Some(true)),
        "a DELETE, and a nested GET"
    );
    assert_eq!(cancel.input_schema["properties"], json!({}));
}

/// Component actions (`reference: $components.successActions.NAME`) load from their own pointer;
/// one naming no component is reported at the reference and makes only its workflow unusable.
#[test]
fn component_actions_resolve_and_a_missing_one_is_reported_at_its_reference() {
    let yaml = format!(
        "{HEAD}{}",
        r#"
components:
  successActions:
    done: {name: done, type: end}
  failureActions:
    again: {name: again, type: retry, retryAfter: 1, retryLimit: 2}
workflows:
  - workflowId: ok
    steps:
      - stepId: s
        operationId: listPets
        onSuccess: [{reference: $components.successActions.done}]
        onFailure: [{reference: $components.failureActions.again}]
  - workflowId: broken
    steps:
      - stepId: s
        operationId: listPets
        onFailure: [{reference: $components.failureActions.gone}]
"#
    );
    let doc = load::from_bytes(yaml.as_bytes(), "flows.arazzo.yaml", None).expect("loads");
    let messages: Vec<String> = doc.diagnostics().iter().map(|d| d.to_string()).collect();
    assert!(
        messages.iter().any(
            |m| m.contains("#/workflows/1/steps/0/onFailure/0/reference")
                && m.contains("no such component failure action")
        ),
        "{messages:?}"
    );
    assert!(
        !messages.iter().any(|m| m.contains("#/workflows/0/")),
        "{messages:?}"
    );
    assert!(doc.workflow("ok").is_some(), "{messages:?}");
}
