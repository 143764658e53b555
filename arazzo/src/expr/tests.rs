use serde_json::{Map, Value, json};

use super::*;

/// A scope with one of everything, owned.
pub(crate) struct Fixture {
    pub inputs: Value,
    pub steps: Map<String, Value>,
    pub workflows: Map<String, Value>,
    pub outputs: Map<String, Value>,
    pub sources: Map<String, Value>,
    pub components: Value,
    pub exchange: Exchange,
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture {
            inputs: json!({
                "username": "ann", "password": "s3cret", "pet_id": 7, "x-store-id": "s1",
                "pet": {"id": 1, "tags": ["a", "b"]}, "a.b": "dotted", "a": {"b": "nested"},
                "nothing": null, "coupon": "C~/1"
            }),
            steps: obj(json!({
                "find": {"outputs": {"pets": [{"id": 10, "name": "rex"}, {"id": 11}], "id": "p1", "count": 2}},
                "loginStep": {"outputs": {"sessionToken": "tok", "tokenExpires": "2030"}}
            })),
            workflows: obj(json!({
                "foo": {"inputs": {"username": "bob"}, "outputs": {"bar": 3, "mappedResponse": {"name": "n"}}}
            })),
            outputs: obj(json!({"bar": "b", "available": [1, 2]})),
            sources: obj(json!({
                "petStoreDescription": {"name": "petStoreDescription", "url": "https://example.test/openapi.yaml", "type": "openapi"}
            })),
            components: json!({
                "parameters": {"storeId": {"name": "storeId", "in": "header", "value": "$inputs.x-store-id"},
                               "my.org.Param": {"name": "p", "in": "query", "value": 1}},
                "successActions": {"notify": {"name": "notify", "type": "end"}}
            }),
            exchange: Exchange {
                url: "https://api.test/pet/findByStatus?status=available".into(),
                method: "GET".into(),
                status: 200,
                request_headers: vec![("Accept".into(), "application/json".into())],
                request_query: vec![("status".into(), "available".into())],
                request_path: obj(json!({"id": "42"})),
                request_body: Some(json!({"user": {"uuid": "u-1"}})),
                response_headers: vec![
                    ("Server".into(), "nginx".into()),
                    ("X-Rate-Limit".into(), "100".into()),
                    ("X-Expires-After".into(), "2030-01-01".into()),
                ],
                response_body: Some(json!({
                    "status": "available", "items": [{"id": 5}, {"id": null}],
                    "a/b": 1, "m~n": 2, "": 3, "pets": [{"name": "x"}], "ok": true, "count": 0
                })),
            },
        }
    }

    pub fn scope(&self) -> Scope<'_> {
        Scope {
            inputs: &self.inputs,
            steps: &self.steps,
            workflows: &self.workflows,
            outputs: Some(&self.outputs),
            source_descriptions: &self.sources,
            components: &self.components,
            exchange: Some(&self.exchange),
        }
    }
}

fn ev(text: &str) -> Result<Value, EvalError> {
    let f = Fixture::new();
    Expr::parse(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .eval(&f.scope())
}

/// The specification's table of examples ("Runtime Expressions", "Examples"), plus the
/// examples its objects use.
#[test]
fn specification_examples() {
    let cases: &[(&str, Value)] = &[
        ("$method", json!("GET")),
        ("$request.header.accept", json!("application/json")),
        ("$request.path.id", json!("42")),
        ("$request.body#/user/uuid", json!("u-1")),
        (
            "$url",
            json!("https://api.test/pet/findByStatus?status=available"),
        ),
        ("$response.body#/status", json!("available")),
        ("$response.header.Server", json!("nginx")),
        ("$inputs.username", json!("ann")),
        ("$workflows.foo.inputs.username", json!("bob")),
        (
            "$steps.find.outputs.pets",
            json!([{"id": 10, "name": "rex"}, {"id": 11}]),
        ),
        ("$steps.find.outputs.pets#/0/id", json!(10)),
        ("$outputs.bar", json!("b")),
        ("$workflows.foo.outputs.bar", json!(3)),
        ("$workflows.foo.outputs.mappedResponse#/name", json!("n")),
        (
            "$components.parameters.storeId",
            json!({"name": "storeId", "in": "header", "value": "$inputs.x-store-id"}),
        ),
        ("$statusCode", json!(200)),
        ("$response.header.X-Expires-After", json!("2030-01-01")),
        ("$response.header.X-Rate-Limit", json!("100")),
        ("$inputs.x-store-id", json!("s1")),
        ("$steps.loginStep.outputs.sessionToken", json!("tok")),
        (
            "$sourceDescriptions.petStoreDescription.url",
            json!("https://example.test/openapi.yaml"),
        ),
        (
            "$components.successActions.notify",
            json!({"name": "notify", "type": "end"}),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(
            &ev(text).unwrap_or_else(|e| panic!("{text}: {e}")),
            want,
            "{text}"
        );
    }
}

#[test]
fn types_are_preserved() {
    assert_eq!(ev("$inputs.pet_id").ok(), Some(json!(7)));
    assert_eq!(
        ev("$inputs.pet").ok(),
        Some(json!({"id": 1, "tags": ["a", "b"]}))
    );
    assert_eq!(ev("$response.body#/ok").ok(), Some(json!(true)));
    assert_eq!(ev("$inputs.nothing").ok(), Some(Value::Null));
}

#[test]
fn json_pointers_follow_rfc_6901() {
    assert_eq!(ev("$response.body#/a~1b").ok(), Some(json!(1)));
    assert_eq!(ev("$response.body#/m~0n").ok(), Some(json!(2)));
    assert_eq!(ev("$response.body#/").ok(), Some(json!(3)));
    assert_eq!(ev("$response.body#/items/1/id").ok(), Some(Value::Null));
    assert_eq!(
        ev("$response.body#").ok(),
        Fixture::new().exchange.response_body
    );
    // Leading zeros, `-` and out of range are not indices.
    for p in [
        "#/items/01",
        "#/items/-",
        "#/items/2",
        "#/items/x",
        "#/status/0",
    ] {
        let e = ev(&format!("$response.body{p}"));
        assert!(matches!(e, Err(EvalError::NotFound { .. })), "{p}: {e:?}");
    }
    for bad in [
        "$response.body#x",
        "$response.body#/a~2",
        "$response.body#/a~",
    ] {
        assert!(Expr::parse(bad).is_err(), "{bad}");
    }
    // Pointers after names.
    assert_eq!(ev("$inputs.pet#/tags/1").ok(), Some(json!("b")));
}

#[test]
fn dereference_and_dotted_names() {
    assert_eq!(ev("$steps.find.outputs.pets[0].id").ok(), Some(json!(10)));
    assert_eq!(
        ev("$steps.find.outputs.pets[1]").ok(),
        Some(json!({"id": 11}))
    );
    assert_eq!(ev("$inputs.pet.tags[1]").ok(), Some(json!("b")));
    assert_eq!(ev("$inputs.pet['id']").ok(), Some(json!(1)));
    assert_eq!(ev("$response.body.items[0].id").ok(), Some(json!(5)));
    // A key with a dot wins over de-reference (longest prefix first).
    assert_eq!(ev("$inputs.a.b").ok(), Some(json!("dotted")));
    assert!(ev("$components.parameters.my.org.Param#").is_err());
    assert_eq!(
        ev("$components.parameters.my.org.Param").ok(),
        Some(json!({"name": "p", "in": "query", "value": 1}))
    );
    assert_eq!(
        name_candidates("a.b.c").collect::<Vec<_>>(),
        vec!["a.b.c", "a.b", "a"]
    );
    assert_eq!(name_candidates("x").collect::<Vec<_>>(), vec!["x"]);
}

#[test]
fn headers_are_case_insensitive_query_and_path_are_not() {
    assert_eq!(ev("$response.header.server").ok(), Some(json!("nginx")));
    assert_eq!(ev("$response.header.x-rate-limit").ok(), Some(json!("100")));
    assert_eq!(
        ev("$request.header.ACCEPT").ok(),
        Some(json!("application/json"))
    );
    assert_eq!(ev("$request.query.status").ok(), Some(json!("available")));
    assert!(matches!(
        ev("$request.query.Status"),
        Err(EvalError::NotFound { .. })
    ));
    assert!(matches!(
        ev("$request.path.ID"),
        Err(EvalError::NotFound { .. })
    ));
    assert!(matches!(
        ev("$response.query.x"),
        Err(EvalError::NotFound { .. })
    ));
    assert!(Expr::parse("$response.header.").is_err());
    assert!(Expr::parse("$response.header.a b").is_err());
}

#[test]
fn roots_for_validation() {
    let cases: Vec<(&str, Root<'_>)> = vec![
        ("$url", Root::Url),
        ("$method", Root::Method),
        ("$statusCode", Root::StatusCode),
        ("$request.body", Root::Request),
        ("$response.header.X", Root::Response),
        ("$inputs.a.b", Root::Inputs("a.b")),
        ("$outputs.x#/0", Root::Outputs("x")),
        (
            "$steps.s1.outputs.pets[0]",
            Root::Step {
                step: "s1",
                output: Some("pets"),
            },
        ),
        (
            "$steps.s1.outputs",
            Root::Step {
                step: "s1",
                output: None,
            },
        ),
        (
            "$workflows.w.inputs.u",
            Root::Workflow {
                workflow: "w",
                part: "inputs",
                name: Some("u"),
            },
        ),
        (
            "$workflows.w.outputs",
            Root::Workflow {
                workflow: "w",
                part: "outputs",
                name: None,
            },
        ),
        (
            "$sourceDescriptions.api.url",
            Root::SourceDescription("api"),
        ),
        (
            "$components.parameters.p",
            Root::Component {
                kind: "parameters",
                name: "p",
            },
        ),
    ];
    for (text, root) in cases {
        let e = Expr::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(e.root(), root, "{text}");
        assert_eq!(e.text(), text);
    }
    let e = Expr::parse("$sourceDescriptions.api.findPets").expect("parses");
    assert_eq!(e.source_member(), Some("findPets"));
    assert!(Expr::parse("$statusCode").expect("parses").needs_exchange());
    assert!(!Expr::parse("$inputs.a").expect("parses").needs_exchange());
}

#[test]
fn parse_errors_name_the_offset_and_what_was_expected() {
    let cases = [
        ("$resposne.body", 1, "one of url"),
        ("$steps.find.output.x", 11, "`.outputs`"),
        ("$steps..outputs.x", 7, "a step id"),
        ("$request.cookie.x", 9, "`header.`"),
        ("$inputs", 7, "`.` and a name"),
        ("$inputs.", 8, "a name"),
        ("$statusCode.x", 11, "the end of the expression"),
        ("$workflows.w.steps", 12, "`.inputs` or `.outputs`"),
        ("$components.parameters", 22, "`.` and a component name"),
        ("$inputs.a[x]", 10, "index"),
        ("$inputs.a[1", 11, "`]`"),
        ("inputs.a", 0, "`$`"),
    ];
    for (text, offset, expected) in cases {
        match Expr::parse(text) {
            Err(ExprError::Syntax {
                offset: o,
                expected: e,
            }) => {
                assert_eq!(o, offset, "{text}: {e}");
                assert!(e.contains(expected), "{text}: {e}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    let msg = Expr::parse("$foo").expect_err("bad root").to_string();
    assert!(msg.starts_with("at byte 1: expected one of url"), "{msg}");
}

#[test]
fn missing_values_and_exchange() {
    let f = Fixture::new();
    let e = Expr::parse("$steps.nope.outputs.x").expect("parses");
    let err = e.eval(&f.scope()).expect_err("absent");
    assert!(err.to_string().contains("$steps.nope.outputs.x"), "{err}");
    assert_eq!(e.lookup(&f.scope()), Ok(None));
    let mut s = f.scope();
    s.exchange = None;
    assert!(matches!(
        Expr::parse("$statusCode").expect("parses").eval(&s),
        Err(EvalError::NoExchange { .. })
    ));
    s.outputs = None;
    assert!(
        Expr::parse("$outputs.bar")
            .expect("parses")
            .eval(&s)
            .is_err()
    );
    // Errors never carry values (they may be secrets).
    let err = Expr::parse("$inputs.password.x")
        .expect("parses")
        .eval(&f.scope())
        .expect_err("a string has no property");
    assert!(!err.to_string().contains("s3cret"), "{err}");
}

#[test]
fn templates() {
    let f = Fixture::new();
    let s = f.scope();
    let t = Template::parse("Bearer {$steps.loginStep.outputs.sessionToken}").expect("parses");
    assert!(!t.is_literal());
    assert_eq!(t.eval(&s), Ok(json!("Bearer tok")));
    assert_eq!(t.expressions().count(), 1);
    // The specification's operationPath.
    let t = Template::parse(
        "{$sourceDescriptions.petStoreDescription.url}#/paths/~1pet~1findByStatus/get",
    )
    .expect("parses");
    assert_eq!(
        t.eval(&s),
        Ok(json!(
            "https://example.test/openapi.yaml#/paths/~1pet~1findByStatus/get"
        ))
    );
    // Bare: the type is kept.
    let t = Template::parse("$inputs.pet_id").expect("parses");
    assert_eq!(t.eval(&s), Ok(json!(7)));
    // Embedded non-strings are JSON text; null is empty.
    let t =
        Template::parse("id={$inputs.pet_id}&p={$inputs.pet}&n={$inputs.nothing}").expect("parses");
    assert_eq!(
        t.eval(&s),
        Ok(json!("id=7&p={\"id\":1,\"tags\":[\"a\",\"b\"]}&n="))
    );
    // Literals.
    for lit in [
        "available",
        "$5 off",
        "a $inputs.x b",
        "{ $inputs.x }",
        "",
        "$",
        "{}",
    ] {
        let t = Template::parse(lit).expect("parses");
        assert!(t.is_literal(), "{lit}");
        assert_eq!(t.eval(&s), Ok(json!(lit)));
    }
    // The specification's form-data string (a stray `}` stays text).
    let t = Template::parse("client_id={$inputs.username}&scope=$inputs.scope}").expect("parses");
    assert_eq!(t.eval(&s), Ok(json!("client_id=ann&scope=$inputs.scope}")));
    // Errors point into the whole string.
    match Template::parse("x {$inputs.a") {
        Err(ExprError::Syntax { offset, .. }) => assert_eq!(offset, 12),
        other => panic!("{other:?}"),
    }
    match Template::parse("ab{$nope}") {
        Err(ExprError::Syntax { offset, .. }) => assert_eq!(offset, 4),
        other => panic!("{other:?}"),
    }
    assert!(Template::parse("$inputs").is_err());
    assert!(Template::parse("$typo.x").is_err());
}

#[test]
fn the_specification_templated_payload() {
    let f = Fixture::new();
    let payload = "{\n  \"petOrder\": {\n    \"petId\": \"{$inputs.pet_id}\",\n    \"couponCode\": \"{$inputs.coupon}\",\n    \"status\": \"placed\"\n  }\n}\n";
    let out = Template::parse(payload)
        .expect("parses")
        .eval(&f.scope())
        .expect("evaluates");
    let parsed: Value = serde_json::from_str(out.as_str().expect("a string")).expect("JSON");
    assert_eq!(
        parsed,
        json!({"petOrder": {"petId": "7", "couponCode": "C~/1", "status": "placed"}})
    );
}

#[test]
fn eval_value_walks_payloads() {
    let f = Fixture::new();
    let payload = json!({
        "petOrder": {"petId": "$inputs.pet_id", "couponCode": "$inputs.coupon", "quantity": 1,
                     "status": "placed", "complete": false, "tags": ["$inputs.pet#/tags/0", "x-{$inputs.username}"]}
    });
    assert_eq!(
        eval_value(&payload, &f.scope()),
        Ok(
            json!({"petOrder": {"petId": 7, "couponCode": "C~/1", "quantity": 1, "status": "placed",
                               "complete": false, "tags": ["a", "x-ann"]}})
        )
    );
    // A bad expression names its place.
    let bad = json!({"a": [1, {"b/c": "$nope"}]});
    match eval_value(&bad, &f.scope()) {
        Err(EvalError::Invalid { pointer, .. }) => assert_eq!(pointer, "#/a/1/b~1c"),
        other => panic!("{other:?}"),
    }
    match expressions_in(&bad) {
        Err((pointer, _)) => assert_eq!(pointer, "/a/1/b~1c"),
        other => panic!("{other:?}"),
    }
    let exprs = expressions_in(&payload).expect("valid");
    let texts: Vec<&str> = exprs.iter().map(Expr::text).collect();
    assert_eq!(
        texts,
        vec![
            "$inputs.pet_id",
            "$inputs.coupon",
            "$inputs.pet#/tags/0",
            "$inputs.username"
        ]
    );
}

// --- budgets ------------------------------------------------------------------------------

#[test]
fn budget_expression_length() {
    let long = format!("$inputs.{}", "a".repeat(MAX_EXPR_LEN));
    match Expr::parse(&long) {
        Err(e @ ExprError::TooLong { .. }) => {
            assert!(e.to_string().contains("MAX_EXPR_LEN"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    let ok = format!("$inputs.{}", "a".repeat(MAX_EXPR_LEN - 8));
    assert!(Expr::parse(&ok).is_ok());
    let t = format!("x{{{long}}}");
    assert!(matches!(
        Template::parse(&t),
        Err(ExprError::TooLong { .. })
    ));
}

#[test]
fn budget_huge_templates() {
    let many = "{$inputs.username}".repeat(MAX_EMBEDS + 1);
    match Template::parse(&many) {
        Err(e @ ExprError::TooManyEmbeds { .. }) => {
            assert!(e.to_string().contains("MAX_EMBEDS"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert!(Template::parse(&"{$inputs.username}".repeat(MAX_EMBEDS)).is_ok());
    let huge = "x".repeat(MAX_TEMPLATE_LEN + 1);
    assert!(matches!(
        Template::parse(&huge),
        Err(ExprError::TooLong {
            budget: "MAX_TEMPLATE_LEN",
            ..
        })
    ));
    // 64 embeds of a 100 KiB value: over the output budget, refused before building.
    let mut f = Fixture::new();
    f.inputs["big"] = json!("y".repeat(100 * 1024));
    let t = Template::parse(&"{$inputs.big}".repeat(MAX_EMBEDS)).expect("parses");
    match t.eval(&f.scope()) {
        Err(e @ EvalError::Budget { .. }) => {
            assert!(e.to_string().contains("MAX_OUTPUT_BYTES"), "{e}")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    // The same through eval_value, spread over many strings.
    let payload = Value::Array(vec![json!("$inputs.big"); 20]);
    assert!(matches!(
        eval_value(&payload, &f.scope()),
        Err(EvalError::Budget { .. })
    ));
    let payload = Value::Array(vec![json!("$inputs.big"); 5]);
    assert!(eval_value(&payload, &f.scope()).is_ok());
}

#[test]
fn budget_walk_depth() {
    let mut v = json!("$inputs.username");
    for _ in 0..MAX_WALK_DEPTH + 1 {
        v = json!([v]);
    }
    let f = Fixture::new();
    assert!(matches!(
        eval_value(&v, &f.scope()),
        Err(EvalError::Invalid {
            error: ExprError::TooDeep { .. },
            ..
        })
    ));
    assert!(matches!(
        expressions_in(&v),
        Err((_, ExprError::TooDeep { .. }))
    ));
    let mut v = json!("$inputs.username");
    for _ in 0..MAX_WALK_DEPTH {
        v = json!([v]);
    }
    assert!(eval_value(&v, &f.scope()).is_ok());
}

#[test]
fn json_size_is_exact_for_plain_values_and_stops_early() {
    for v in [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(-12345),
        json!(u64::MAX),
        json!("abc"),
        json!([]),
        json!({}),
        json!([1, 2, [3]]),
        json!({"a": {"b": [1, "x"]}, "c": null}),
    ] {
        assert_eq!(json_size(&v, usize::MAX), v.to_string().len(), "{v}");
    }
    assert!(json_size(&json!([1.5]), usize::MAX) >= 5);
    let big = Value::Array(vec![json!("x"); 1000]);
    assert_eq!(json_size(&big, 10), 11);
}
