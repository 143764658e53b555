use serde_json::{Value, json};

use super::*;
use crate::expr::tests::Fixture;

fn simple(cond: &str) -> bool {
    let f = Fixture::new();
    Criterion::compile(cond, None, CriterionKind::Simple)
        .unwrap_or_else(|e| panic!("{cond}: {e}"))
        .check(&f.scope())
        .unwrap_or_else(|e| panic!("{cond}: {e}"))
}

fn typed(kind: CriterionKind, context: &str, cond: &str) -> Result<bool, String> {
    let f = Fixture::new();
    let c = Criterion::compile(cond, Some(context), kind).map_err(|e| e.to_string())?;
    c.check(&f.scope()).map_err(|e| e.to_string())
}

/// The specification's own criteria ("Criterion Object Example", the workflow, step and
/// components examples).
#[test]
fn specification_examples() {
    assert!(simple("$statusCode == 200"));
    assert!(!simple("$statusCode == 401"));
    // The components example writes a condition inside braces.
    assert!(!simple("{$statusCode == 401}"));
    assert!(simple("{$statusCode == 200}"));
    assert_eq!(
        typed(CriterionKind::Regex, "$statusCode", "^200$"),
        Ok(true)
    );
    assert_eq!(
        typed(CriterionKind::Regex, "$statusCode", "^201$"),
        Ok(false)
    );
    // `$[?count(@.pets) > 0]`: the context's children that have a `pets` member (count()
    // counts the nodes `@.pets` selects: one when the member exists, whatever its length).
    let mut f = Fixture::new();
    f.exchange.response_body = Some(json!([{"pets": [1]}, {"pets": []}]));
    let c = Criterion::compile(
        "$[?count(@.pets) > 0]",
        Some("$response.body"),
        CriterionKind::JsonPath,
    )
    .expect("compiles");
    assert_eq!(c.check(&f.scope()), Ok(true));
    f.exchange.response_body = Some(json!([{"cats": [1]}, 3]));
    assert_eq!(c.check(&f.scope()), Ok(false));
    f.exchange.response_body = Some(json!({"pets": [1]}));
    assert_eq!(
        c.check(&f.scope()),
        Ok(false),
        "the root itself is not a candidate"
    );
}

#[test]
fn simple_literals_and_operators() {
    assert!(simple("$response.body#/status == 'available'"));
    // String comparisons are case-insensitive (the specification says MUST).
    assert!(simple("$response.body#/status == 'AVAILABLE'"));
    assert!(simple("$response.body#/status != 'sold'"));
    assert!(simple("$response.body#/items/0/id != null"));
    assert!(!simple("$response.body#/items/1/id != null"));
    assert!(simple("$response.body#/items/1/id == null"));
    // Absent is null.
    assert!(simple("$response.body#/items/7/id == null"));
    assert!(simple("$steps.nope.outputs.x == null"));
    assert!(simple("$statusCode >= 200 && $statusCode < 300"));
    assert!(!simple("$statusCode > 200 || $statusCode <= 199"));
    assert!(simple("$statusCode == 404 || $statusCode == 200"));
    assert!(simple("!($statusCode == 404)"));
    assert!(simple("!!($statusCode == 200)"));
    assert!(simple(
        "($statusCode == 404 || $statusCode == 200) && $response.body#/ok == true"
    ));
    // && binds tighter than ||.
    assert!(simple("true || false && false"));
    assert!(!simple("(true || false) && false"));
    // Numbers: integers, negatives, floats, exponents.
    assert!(simple("$steps.find.outputs.count == 2.0"));
    assert!(simple("$steps.find.outputs.count > -1"));
    assert!(simple("$steps.find.outputs.count < 2.5e0"));
    assert!(simple("1e3 == 1000"));
    // Loose: a numeric header against a number.
    assert!(simple("$response.header.X-Rate-Limit > 10"));
    assert!(simple("$response.header.X-Rate-Limit == 100"));
    assert!(simple("$statusCode == '200'"));
    assert!(!simple("$response.body#/status > 3"));
    // Quotes: doubled to escape; double quotes accepted.
    assert!(simple("'it''s' == \"IT'S\""));
    // A lone operand is its truth.
    assert!(simple("$response.body#/ok"));
    assert!(!simple("$response.body#/count"));
    assert!(!simple("$response.body#/missing"));
    assert!(simple("$steps.find.outputs.pets"));
    // De-reference and index inside conditions.
    assert!(simple("$steps.find.outputs.pets[0].name == 'REX'"));
    assert!(simple("$steps.find.outputs.pets[1].id >= 11"));
    assert!(simple("$inputs.pet.tags[0] == 'a'"));
    assert!(simple("{$statusCode} == 200"));
    // Booleans and strings.
    assert!(simple("$response.body#/ok == 'TRUE'"));
    assert!(simple("false < true"));
    // Deep equality.
    assert!(simple("$inputs.pet == $inputs.pet"));
    assert!(!simple("$inputs.pet == $steps.find.outputs.pets"));
    // Ordering without an order is false both ways.
    assert!(!simple("$inputs.pet < 1") && !simple("$inputs.pet >= 1"));
    assert!(!simple("null < 1") && !simple("null >= 1"));
    // Large integers compare exactly.
    assert!(simple("18446744073709551615 > 9223372036854775807"));
    assert!(simple("-9223372036854775808 < 18446744073709551615"));
    assert!(simple("9007199254740993 != 9007199254740992"));
    // Whitespace is optional around operators.
    assert!(simple("$statusCode==200&&$response.body#/ok"));
}

#[test]
fn simple_syntax_errors_say_where() {
    let cases = [
        ("$statusCode = 200", 12, "`==`"),
        ("$statusCode == ", 15, "an operand"),
        ("($statusCode == 200", 19, "`)`"),
        ("$statusCode == 200)", 18, "`&&`"),
        ("$statusCode == 'abc", 19, "closing quote"),
        ("1 < 2 < 3", 6, "do not chain"),
        ("$statusCode & 1", 12, "`&&`"),
        ("$statusCode == available", 15, "a literal"),
        ("$statsCode == 200", 1, "one of url"),
        ("", 0, "a condition"),
        ("{$statusCode == 1)", 17, "`}`"),
    ];
    for (cond, offset, expected) in cases {
        match Criterion::compile(cond, None, CriterionKind::Simple) {
            Err(CriterionError::Condition(ExprError::Syntax {
                offset: o,
                expected: e,
            })) => {
                assert_eq!(o, offset, "{cond}: {e}");
                assert!(e.contains(expected), "{cond}: {e}");
            }
            other => panic!("{cond}: {other:?}"),
        }
    }
}

#[test]
fn types() {
    use CriterionKind::*;
    assert_eq!(CriterionKind::from_type(None), Ok(Simple));
    assert_eq!(CriterionKind::from_type(Some(&json!("regex"))), Ok(Regex));
    assert_eq!(
        CriterionKind::from_type(Some(&json!("jsonpath"))),
        Ok(JsonPath)
    );
    assert_eq!(CriterionKind::from_type(Some(&json!("xpath"))), Ok(XPath));
    assert_eq!(
        CriterionKind::from_type(Some(
            &json!({"type": "jsonpath", "version": "draft-goessner-dispatch-jsonpath-00"})
        )),
        Ok(JsonPath)
    );
    assert_eq!(
        CriterionKind::from_type(Some(&json!({"type": "xpath", "version": "xpath-30"}))),
        Ok(XPath)
    );
    for bad in [
        json!("Regex"),
        json!(1),
        json!({"type": "jsonpath"}),
        json!({"type": "jsonpath", "version": "rfc9535"}),
        json!({"type": "regex", "version": "x"}),
    ] {
        assert!(CriterionKind::from_type(Some(&bad)).is_err(), "{bad}");
    }
    let e = Criterion::compile("/a", Some("$response.body"), XPath).expect_err("xpath");
    assert!(e.to_string().contains("not supported"), "{e}");
    for k in [Regex, JsonPath] {
        assert!(matches!(
            Criterion::compile("x", None, k),
            Err(CriterionError::MissingContext(_))
        ));
    }
    assert!(matches!(
        Criterion::compile("^a$", Some("$nope"), Regex),
        Err(CriterionError::Context(_))
    ));
}

#[test]
fn regex_criteria() {
    use CriterionKind::Regex;
    assert_eq!(typed(Regex, "$response.body#/status", "^avail"), Ok(true));
    assert_eq!(typed(Regex, "$response.body#/status", "^AVAIL"), Ok(false));
    assert_eq!(
        typed(Regex, "$response.body#/status", "(?i)^AVAIL"),
        Ok(true)
    );
    assert_eq!(typed(Regex, "$response.header.server", "nginx"), Ok(true));
    // Unanchored: matches anywhere.
    assert_eq!(typed(Regex, "$url", "status=avail"), Ok(true));
    // Objects and arrays as compact JSON.
    assert_eq!(typed(Regex, "$inputs.pet", r#""tags":\["a""#), Ok(true));
    // Absent or null: no match.
    assert_eq!(typed(Regex, "$response.header.nope", ".*"), Ok(false));
    assert_eq!(typed(Regex, "$inputs.nothing", ".*"), Ok(false));
    // Unsupported syntax is a compile error, on one line.
    let e = typed(Regex, "$url", "(?=a)").expect_err("look-ahead");
    assert!(e.starts_with("invalid regex") && !e.contains('\n'), "{e}");
}

#[test]
fn jsonpath_criteria() {
    use CriterionKind::JsonPath;
    assert_eq!(typed(JsonPath, "$response.body", "$.status"), Ok(true));
    assert_eq!(typed(JsonPath, "$response.body", "$.nope"), Ok(false));
    assert_eq!(
        typed(JsonPath, "$response.body", "$.items[?@.id == 5]"),
        Ok(true)
    );
    assert_eq!(
        typed(JsonPath, "$response.body", "$.items[?@.id > 5]"),
        Ok(false)
    );
    assert_eq!(
        typed(JsonPath, "$response.body", "$[?length(@) > 0]"),
        Ok(true)
    );
    assert_eq!(typed(JsonPath, "$response.body", "$..name"), Ok(true));
    assert_eq!(
        typed(JsonPath, "$steps.find.outputs.pets", "$[?@.name == 'rex']"),
        Ok(true)
    );
    // Absent context: nothing selected.
    assert_eq!(typed(JsonPath, "$steps.nope.outputs.x", "$"), Ok(false));
    let e = typed(JsonPath, "$response.body", "$[?match(@.status, 'a.*')]").expect_err("match");
    assert!(e.contains("not supported"), "{e}");
    // The goessner-draft style of Redocly's example: refused, pointing at a simple condition.
    let e = typed(JsonPath, "$response.body", "$.status == 'available'").expect_err("draft");
    assert!(e.contains("use a simple condition"), "{e}");
    let e = typed(JsonPath, "$response.body", "status").expect_err("no $");
    assert!(e.contains("starting with `$`"), "{e}");
}

#[test]
fn expressions_for_validation() {
    let c = Criterion::compile(
        "$statusCode == 200 && ($response.body#/a == $inputs.x || !$steps.s.outputs.y)",
        Some("$response.body"),
        CriterionKind::Simple,
    )
    .expect("compiles");
    let texts: Vec<&str> = c.expressions().iter().map(|e| e.text()).collect();
    assert_eq!(
        texts,
        vec![
            "$response.body",
            "$statusCode",
            "$response.body#/a",
            "$inputs.x",
            "$steps.s.outputs.y"
        ]
    );
    assert_eq!(
        c.condition(),
        "$statusCode == 200 && ($response.body#/a == $inputs.x || !$steps.s.outputs.y)"
    );
}

#[test]
fn no_exchange_is_an_error_not_false() {
    let f = Fixture::new();
    let mut s = f.scope();
    s.exchange = None;
    let c =
        Criterion::compile("$statusCode == 200", None, CriterionKind::Simple).expect("compiles");
    assert!(matches!(c.check(&s), Err(EvalError::NoExchange { .. })));
}

// --- the attacker -------------------------------------------------------------------------

#[test]
fn budget_deep_nesting() {
    for cond in [
        format!("{}true{}", "(".repeat(100_000), ")".repeat(100_000)),
        format!("{}true", "!".repeat(MAX_CONDITION_DEPTH + 1)),
        format!(
            "{}true{}",
            "(".repeat(MAX_CONDITION_DEPTH + 1),
            ")".repeat(MAX_CONDITION_DEPTH + 1)
        ),
        format!(
            "{}true{}",
            "{".repeat(MAX_CONDITION_DEPTH + 1),
            "}".repeat(MAX_CONDITION_DEPTH + 1)
        ),
    ] {
        let e = Criterion::compile(&cond, None, CriterionKind::Simple).expect_err("too deep");
        let msg = e.to_string();
        assert!(
            msg.contains("MAX_CONDITION_DEPTH") || msg.contains("MAX_CONDITION_LEN"),
            "{msg}"
        );
    }
    let ok = format!(
        "{}true{}",
        "(".repeat(MAX_CONDITION_DEPTH),
        ")".repeat(MAX_CONDITION_DEPTH)
    );
    assert!(simple(&ok));
}

#[test]
fn budget_tokens_and_length() {
    let many = vec!["true"; MAX_CONDITION_TOKENS / 2 + 1].join(" && ");
    assert!(many.len() <= MAX_CONDITION_LEN);
    let e = Criterion::compile(&many, None, CriterionKind::Simple).expect_err("too many");
    assert!(e.to_string().contains("MAX_CONDITION_TOKENS"), "{e}");
    let fits = vec!["true"; MAX_CONDITION_TOKENS / 2].join(" && ");
    assert!(simple(&fits));
    let long = format!("'{}' == ''", "a".repeat(MAX_CONDITION_LEN));
    let e = Criterion::compile(&long, None, CriterionKind::Simple).expect_err("too long");
    assert!(e.to_string().contains("MAX_CONDITION_LEN"), "{e}");
}

#[test]
fn budget_catastrophic_regex() {
    use CriterionKind::Regex;
    // Backtracking bombs run in linear time with this engine.
    let mut f = Fixture::new();
    f.inputs["s"] = json!(format!("{}!", "a".repeat(100_000)));
    for pat in ["^(a+)+$", "^(a|a)*$", "(a*)*b", "^(a|aa)+$"] {
        let c = Criterion::compile(pat, Some("$inputs.s"), Regex).expect("compiles");
        assert_eq!(c.check(&f.scope()), Ok(false), "{pat}");
    }
    // Patterns that compile to too much are refused at compile time.
    for pat in ["\\w{1000}{1000}", "(((a{100}){100}){100})", "\\p{L}{5000}"] {
        match Criterion::compile(pat, Some("$inputs.s"), Regex) {
            Err(CriterionError::Budget { budget, .. }) => assert_eq!(budget, "MAX_REGEX_SIZE"),
            Err(CriterionError::Regex(m)) => {
                assert!(m.contains("exceed") || m.contains("limit"), "{pat}: {m}")
            }
            other => panic!("{pat}: {other:?}"),
        }
    }
    let nested = format!("{}a{}", "(".repeat(200), ")".repeat(200));
    assert!(Criterion::compile(&nested, Some("$inputs.s"), Regex).is_err());
    // The subject is bounded.
    f.inputs["s"] = json!("a".repeat(MAX_REGEX_SUBJECT + 1));
    let c = Criterion::compile("a", Some("$inputs.s"), Regex).expect("compiles");
    let e = c.check(&f.scope()).expect_err("too big");
    assert!(e.to_string().contains("MAX_REGEX_SUBJECT"), "{e}");
    f.inputs["s"] = Value::Array(vec![json!("aaaa"); MAX_REGEX_SUBJECT / 6]);
    let c = Criterion::compile("b", Some("$inputs.s"), Regex).expect("compiles");
    assert!(c.check(&f.scope()).is_err());
}

#[test]
fn budget_jsonpath() {
    use CriterionKind::JsonPath;
    let e = Criterion::compile("$..a..b..c..d", Some("$response.body"), JsonPath)
        .expect_err("descendants");
    assert!(e.to_string().contains("MAX_JSONPATH_DESCENDANTS"), "{e}");
    let e = Criterion::compile(
        &format!("$.{}", "a.".repeat(600)),
        Some("$response.body"),
        JsonPath,
    )
    .expect_err("long");
    assert!(e.to_string().contains("MAX_JSONPATH_LEN"), "{e}");
    let nested = format!("${}", "[?@".repeat(20)) + &"]".repeat(20);
    let e = Criterion::compile(&nested, Some("$response.body"), JsonPath).expect_err("nesting");
    assert!(e.to_string().contains("MAX_JSONPATH_NESTING"), "{e}");
    // Many descendant segments over a large body: refused before the query runs.
    let mut f = Fixture::new();
    let mut deep = json!(1);
    for i in 0..100 {
        deep = json!({ format!("k{i}"): deep, "list": [1, 2, 3] });
    }
    f.exchange.response_body = Some(Value::Array(vec![deep; 200]));
    let c = Criterion::compile("$..*..*..*", Some("$response.body"), JsonPath).expect("compiles");
    let e = c.check(&f.scope()).expect_err("too much work");
    assert!(e.to_string().contains("MAX_JSONPATH_WORK"), "{e}");
    // Unions multiply.
    let c = Criterion::compile(
        &format!(
            "$[{}][{}]",
            vec!["*"; 100].join(","),
            vec!["*"; 100].join(",")
        ),
        Some("$response.body"),
        JsonPath,
    )
    .expect("compiles");
    assert!(c.check(&f.scope()).is_err());
    // One `..` over the same body fits.
    let c = Criterion::compile("$..list", Some("$response.body"), JsonPath).expect("compiles");
    assert_eq!(c.check(&f.scope()), Ok(true));
}
