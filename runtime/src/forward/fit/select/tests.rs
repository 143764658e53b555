use super::*;
use serde_json::json;

/// The JMESPath compliance suite (see compliance/README.md).
const SUITES: &[(&str, &str)] = &[
    ("basic", include_str!("compliance/basic.json")),
    ("benchmarks", include_str!("compliance/benchmarks.json")),
    ("boolean", include_str!("compliance/boolean.json")),
    ("current", include_str!("compliance/current.json")),
    ("escape", include_str!("compliance/escape.json")),
    ("filters", include_str!("compliance/filters.json")),
    ("functions", include_str!("compliance/functions.json")),
    ("identifiers", include_str!("compliance/identifiers.json")),
    ("indices", include_str!("compliance/indices.json")),
    ("literal", include_str!("compliance/literal.json")),
    ("multiselect", include_str!("compliance/multiselect.json")),
    ("pipe", include_str!("compliance/pipe.json")),
    ("slice", include_str!("compliance/slice.json")),
    ("syntax", include_str!("compliance/syntax.json")),
    ("unicode", include_str!("compliance/unicode.json")),
    ("wildcard", include_str!("compliance/wildcard.json")),
];

fn limits() -> Limits {
    Limits::for_response(1 << 20)
}

fn run(expr: &str, doc: &Value) -> R<Value> {
    compile(expr)?.search(doc, limits())
}

/// JMESPath equality of two results (numbers by value, objects in any order), as the crate's
/// compliance runner compares them.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => float_eq(x, y),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same(p, q)))
        }
        _ => a == b,
    }
}

#[test]
fn compliance_suite_passes() {
    let mut ran = 0;
    let mut failures = Vec::new();
    for (file, text) in SUITES {
        let suites: Value = serde_json::from_str(text).expect("suite JSON");
        for suite in suites.as_array().expect("suites") {
            let given = &suite["given"];
            for case in suite["cases"].as_array().expect("cases") {
                let expr = case["expression"].as_str().expect("expression");
                ran += 1;
                if case.get("bench").is_some() {
                    // Benchmarks assert nothing (one is not even valid, two are over the
                    // limits of `_select`: 26 arguments to `sum`, 104 chained projections):
                    // they run without a panic.
                    let _ = run(expr, given);
                } else if let Some(expected) = case.get("result") {
                    match run(expr, given) {
                        Ok(v) if same(&v, expected) => {}
                        other => failures.push(format!(
                            "{file}: {expr}: expected {expected}, got {other:?}"
                        )),
                    }
                } else {
                    let kind = match case["error"].as_str().expect("error") {
                        "syntax" => ErrorKind::Syntax,
                        "invalid-type" => ErrorKind::InvalidType,
                        "invalid-value" => ErrorKind::InvalidValue,
                        "invalid-arity" => ErrorKind::InvalidArity,
                        "unknown-function" => ErrorKind::UnknownFunction,
                        e => panic!("unknown error type {e}"),
                    };
                    // Syntax errors come from compiling, before any document is seen.
                    let got = if kind == ErrorKind::Syntax {
                        compile(expr).map(|_| Value::Null)
                    } else {
                        run(expr, given)
                    };
                    match got {
                        Err(e) if e.kind == kind => {}
                        other => failures
                            .push(format!("{file}: {expr}: expected {kind:?}, got {other:?}")),
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ran > 850, "only {ran} cases");
}

#[test]
fn order_and_numbers() {
    let doc = json!({"b": 1, "a": [-2, 2.5], "c": {"z": 1, "y": 2}});
    // Objects keep the document's order and the expression's.
    let v = run("{z: b, y: a[0], x: abs(a[0])}", &doc).unwrap();
    assert_eq!(
        serde_json::to_string(&v).unwrap(),
        r#"{"z":1,"y":-2,"x":2}"#
    );
    assert_eq!(run("keys(c)", &doc).unwrap(), json!(["z", "y"]));
    assert_eq!(run("ceil(a[1])", &doc).unwrap(), json!(3));
    assert_eq!(run("avg(`[]`)", &doc).unwrap(), Value::Null);
    assert_eq!(run("sum(a)", &doc).unwrap(), json!(0.5));
    assert_eq!(
        run("to_string(c)", &doc).unwrap(),
        json!(r#"{"z":1,"y":2}"#)
    );
    // Far endpoints and steps do not overflow (the crate's i32 arithmetic wraps there).
    let arr = json!([0, 1, 2, 3]);
    assert_eq!(run("[1::2147483647]", &arr).unwrap(), json!([1]));
    assert_eq!(
        run("[-2147483647:2147483647:2147483647]", &arr).unwrap(),
        json!([0])
    );
    assert_eq!(run("[-2::-2147483647]", &arr).unwrap(), json!([2]));
    assert_eq!(run("[-2147483647]", &arr).unwrap(), Value::Null);
}

#[test]
fn unknown_functions_and_arity_are_found_when_compiling() {
    assert_eq!(
        compile("a || nope(@)").unwrap_err().kind,
        ErrorKind::UnknownFunction
    );
    assert_eq!(
        compile("length(a, b)").unwrap_err().kind,
        ErrorKind::InvalidArity
    );
    assert_eq!(
        compile("merge()").unwrap_err().kind,
        ErrorKind::InvalidArity
    );
    assert!(compile("merge(a, b, c)").is_ok());
}

/// Every shape of a deep expression the attack used, far past the limits: a clear error, not a
/// stack overflow (the parser is never reached).
#[test]
fn deep_expressions_are_refused_before_parsing() {
    let n = 2000;
    let shapes = [
        format!("{}@{}", "[".repeat(n), "]".repeat(n)),
        format!("{}@{}", "(".repeat(n), ")".repeat(n)),
        format!("{}@", "!".repeat(n)),
        format!("a{}", ".a".repeat(n)),
        format!("@{}", "|@".repeat(n)),
        format!("a{}", "[]".repeat(n)),
        format!("{}a{}", "{a:".repeat(n), "}".repeat(n)),
        format!("{}a{}", "f(".repeat(n), ")".repeat(n)),
        format!("a{}", "[?a]".repeat(n)),
        format!("{}@", "&".repeat(n)),
        format!("a{}", "||a".repeat(n)),
        format!("a{}", "==a".repeat(n)),
    ];
    for s in &shapes {
        let e = compile(s).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Limit, "{e}");
        // Within the length limit too: the nesting bound refuses it.
        let short: String = s.chars().take(MAX_EXPR_BYTES).collect();
        let e = compile(&short).unwrap_err();
        assert!(
            e.kind == ErrorKind::Limit || e.kind == ErrorKind::Syntax,
            "{short}: {e}"
        );
    }
    let e = compile(&"[".repeat(100)).unwrap_err();
    assert!(e.message.contains("deeper than 64"), "{e}");
    let e = compile(&"a".repeat(MAX_EXPR_BYTES + 1)).unwrap_err();
    assert!(e.message.contains("over the limit of 1024 bytes"), "{e}");
    // Brackets inside strings and literals are text, not nesting.
    let quoted = format!("'{}'", "[".repeat(500));
    assert_eq!(run(&quoted, &Value::Null).unwrap(), json!("[".repeat(500)));
}

/// The deepest expressions accepted, of each shape, compile and run on a thread with a quarter
/// of a tokio worker's stack (2 MiB), in a debug build.
#[test]
fn the_deepest_accepted_expressions_fit_a_small_stack() {
    type Shape = fn(usize) -> String;
    let shapes: [Shape; 16] = [
        |k| format!("{}@{}", "[".repeat(k), "]".repeat(k)),
        |k| format!("{}@{}", "(".repeat(k), ")".repeat(k)),
        |k| format!("{}@", "!".repeat(k)),
        |k| format!("a{}", ".a".repeat(k)),
        |k| format!("@{}", "|@".repeat(k)),
        |k| format!("a{}", "[]".repeat(k)),
        |k| format!("{}a{}", "{a:".repeat(k), "}".repeat(k)),
        |k| format!("{}@{}", "to_array(".repeat(k), ")".repeat(k)),
        |k| format!("a{}", "[?a]".repeat(k)),
        |k| format!("a{}", "[*]".repeat(k)),
        |k| format!("a{}", ".*".repeat(k)),
        |k| format!("{}@{}", "&(".repeat(k), ")".repeat(k)),
        |k| format!("a{}", "||a".repeat(k)),
        |k| format!("a{}", "==a".repeat(k)),
        |k| format!("map(&{}@, @)", "[@]|".repeat(k)),
        |k| format!("{}@{}", "[?".repeat(k), "]".repeat(k)),
    ];
    // The largest k each shape is accepted at (compiling stops at the text scan past it).
    let deepest: Vec<String> = shapes
        .iter()
        .map(|shape| {
            let k = (1..MAX_EXPR_BYTES)
                .take_while(|&k| compile(&shape(k)).is_ok())
                .last()
                .unwrap_or_else(|| panic!("{} is never accepted", shape(1)));
            assert!(k >= 10, "{}: only {k} levels", shape(k));
            shape(k)
        })
        .collect();
    let handle = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || {
            let doc = json!({"a": [{"a": [1, {"a": true}]}, [2, [3]]]});
            let mut compiled = 0;
            for s in &deepest {
                // No panic on this small stack (printing a backtrace needs more).
                if let Ok(sel) = compile(s) {
                    compiled += 1;
                    // An answer or a runtime error; never a crash.
                    let _ = sel.search(&doc, limits());
                }
            }
            compiled
        })
        .unwrap();
    assert_eq!(handle.join().unwrap(), shapes.len());
}

/// Expressions whose results double at each step: refused by the output, work or step budget,
/// never materialized.
#[test]
fn bombs_are_refused_by_a_budget() {
    let doc = json!({"a": [1, 2, 3], "s": "x".repeat(1000)});
    let lim = Limits::for_response(1 << 20);
    let bombs = [
        // The result's text doubles at each step (a few pointers in memory).
        format!("{}@", "[@,@]|".repeat(20)),
        // Flattening materializes it.
        format!("{}@", "[@,@]|[]|".repeat(15)),
        format!("{}@", "([@,@]|[])|".repeat(20)),
        // Projections, map and sort over it.
        format!("{}[*].s", "[@,@]|[]|".repeat(14)),
        format!("{}map(&[@, @], @)", "[@,@]|[]|".repeat(14)),
        format!("{}sort_by(@, &s)", "[@,@]|[]|".repeat(14)),
        // Serializing it to a string.
        format!("{}to_string(@)", "[@,@]|".repeat(20)),
        // Comparing two equal, separately built halves (no shared pointer to stop at).
        format!("[{0}@, {0}@] | [0] == [1]", "[@,@]|".repeat(25)),
        format!("contains([{0}@], {0}@)", "[@,@]|".repeat(25)),
        // Joining long strings.
        format!("s|{}join('', @)", "[@,@]|[]|".repeat(14)),
        format!("s|{}length(@)", "join('', [@,@])|".repeat(20)),
    ];
    for b in &bombs {
        assert!(b.len() <= MAX_EXPR_BYTES, "{b}");
        let sel = compile(b).unwrap_or_else(|e| panic!("{b}: {e}"));
        match sel.search(&doc, lim) {
            Err(e) => assert_eq!(e.kind, ErrorKind::Limit, "{b}: {e}"),
            Ok(v) => panic!("{b}: {} bytes selected", v.to_string().len()),
        }
    }
    // A result just within the output budget is returned.
    let big = json!(vec!["y".repeat(100); 1000]);
    let v = run("[@, @]", &big).unwrap();
    assert_eq!(v[1].as_array().unwrap().len(), 1000);
}

/// Each budget, alone, with its message.
#[test]
fn budgets_say_which_limit() {
    let doc = json!((0..1000).collect::<Vec<_>>());
    let tight = Limits {
        steps: 100,
        work_bytes: 1 << 20,
        output_bytes: 1 << 20,
    };
    let e = compile("[*]").unwrap().search(&doc, tight).unwrap_err();
    assert!(e.message.contains("more than 100 steps"), "{e}");
    let tight = Limits {
        steps: 1 << 20,
        work_bytes: 1000,
        output_bytes: 1 << 20,
    };
    let e = compile("[*]").unwrap().search(&doc, tight).unwrap_err();
    assert!(
        e.message
            .contains("more than 1000 bytes of intermediate values"),
        "{e}"
    );
    let tight = Limits {
        steps: 1 << 20,
        work_bytes: 1 << 20,
        output_bytes: 100,
    };
    let e = compile("@").unwrap().search(&doc, tight).unwrap_err();
    assert!(e.message.contains("over 100 bytes of JSON"), "{e}");
    assert!(compile("[:20]").unwrap().search(&doc, tight).is_ok());
    assert_eq!(
        Limits::for_response(1 << 20),
        Limits {
            steps: 4 << 20,
            work_bytes: 16 << 20,
            output_bytes: 4 << 20
        }
    );
    assert_eq!(Limits::for_response(64).output_bytes, MIN_OUTPUT_BYTES);
}

/// The size measured before building the result is the length of its JSON text.
#[test]
fn json_size_is_exact() {
    let doc = json!({"a": "q\"\\\n\u{1}é", "b": [1, -2.5, 1e300, true, false, null], "c": {}});
    for expr in ["@", "[a, b, c, `{\"k\": [1, {}]}`]", "{x: a, y: b}"] {
        let sel = compile(expr).unwrap();
        let mut ev = Eval {
            steps: 0,
            work: 0,
            limits: limits(),
        };
        let out = ev.eval(&sel.root, &Val::Ref(&doc)).unwrap();
        let size = ev.json_size(&out, usize::MAX).unwrap().unwrap();
        let text = serde_json::to_string(&ev.json_of(&out, 0).unwrap()).unwrap();
        assert_eq!(size, text.len(), "{expr}: {text}");
    }
}
