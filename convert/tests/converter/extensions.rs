//! Vendor MCP extensions (`specs/extensions.yaml`) and client profiles over converted fixtures.

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_convert::profile::{self, Client, ClientProfile, Level};
use serde_json::{Value, json};

use super::support::*;

fn annotations(t: &openapi_mcp_toolset::model::ToolDef) -> Value {
    serde_json::to_value(&t.tool().annotations).expect("annotations serialize")
}

#[test]
fn x_mcp_include_exclude_name_description() {
    let conv = convert_fixture("extensions.yaml");
    // Speakeasy `disabled: true` and a path-item `x-mcp: {exclude: true}` leave operations out;
    // an operation's own `include: true` wins over its path item.
    assert!(!has_tool(&conv, "deleteWidget"));
    assert!(!has_tool(&conv, "reindex"));
    assert!(has_tool(&conv, "reindexStatus"));
    assert_eq!(conv.report.filtered, 2);
    assert_eq!(conv.report.tools, 4);

    // Names go through snake_case, the prefix and collision handling.
    let list = tool(&conv, "listWidgets");
    assert_eq!(list.name(), "widgets_find_widgets");
    assert_eq!(list.description(), Some("Search the widget catalogue."));
    assert_eq!(list.title(), Some("List widgets"));
    let get = tool(&conv, "getWidget");
    assert_eq!(get.name(), "widgets_get_widget");
    let status = tool(&conv, "reindexStatus");
    assert!(
        status.name().starts_with("widgets_get_widget_") && status.name().len() == 25,
        "{}",
        status.name()
    );
}

#[test]
fn speakeasy_and_annotation_overrides() {
    let conv = convert_fixture("extensions.yaml");
    let create = tool(&conv, "createWidget");
    assert_eq!(create.name(), "widgets_create_product");
    assert_eq!(create.title(), Some("Create widget"));
    assert_eq!(
        create.description(),
        Some("Creates a widget from the given fields.")
    );
    // POST: not idempotent by method; x-mcp-annotations says it is. Root x-mcp sets openWorld.
    assert_eq!(
        annotations(create),
        json!({"title": "Make a widget", "readOnlyHint": false, "destructiveHint": false,
               "idempotentHint": true, "openWorldHint": false})
    );
    // A hint of the wrong type is ignored with a warning at the operation.
    let get = tool(&conv, "getWidget");
    assert_eq!(annotations(get)["destructiveHint"], Value::Null);
    let diags = diagnostics_text(&conv);
    assert!(
        diags.iter().any(|d| d.starts_with("warning: specs/extensions.yaml#/paths/~1widgets~1{id}/get: annotation `destructiveHint`")),
        "{diags:?}"
    );
}

#[test]
fn generic_profile_is_todays_output() {
    for fixture in [
        "petstore.yaml",
        "recursive.yaml",
        "collisions.yaml",
        "openapi31.yaml",
    ] {
        let plain = convert_fixture(fixture);
        let generic = convert_fixture_with(
            fixture,
            &ToolOptions {
                client: ClientProfile::new(Client::Generic),
                ..ToolOptions::default()
            },
        );
        let a: Vec<_> = plain
            .tools
            .tools
            .iter()
            .map(|t| serde_json::to_string(t.tool()).expect("json"))
            .collect();
        let b: Vec<_> = generic
            .tools
            .tools
            .iter()
            .map(|t| serde_json::to_string(t.tool()).expect("json"))
            .collect();
        assert_eq!(a, b, "{fixture}");
    }
}

/// What the Gemini function-declaration schema subset accepts (profile module docs).
fn assert_gemini_clean(v: &Value, at: &str) {
    const OK: &[&str] = &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "anyOf",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "default",
        "minProperties",
        "maxProperties",
        "propertyOrdering",
    ];
    let Value::Object(m) = v else { return };
    for (k, x) in m {
        assert!(OK.contains(&k.as_str()), "{at}/{k}: {v}");
        match k.as_str() {
            "properties" => {
                for (pk, pv) in x.as_object().expect("properties object") {
                    assert_gemini_clean(pv, &format!("{at}/properties/{pk}"));
                }
            }
            "items" => assert_gemini_clean(x, &format!("{at}/items")),
            "anyOf" => {
                for (i, s) in x.as_array().expect("anyOf array").iter().enumerate() {
                    assert_gemini_clean(s, &format!("{at}/anyOf/{i}"));
                }
            }
            "type" => assert!(x.is_string(), "{at}/type: {x}"),
            "enum" => assert!(
                x.as_array().expect("enum").iter().all(Value::is_string),
                "{at}"
            ),
            _ => {}
        }
    }
    if m.get("type") == Some(&json!("array")) {
        assert!(m.contains_key("items"), "{at}: array without items");
    }
}

#[test]
fn gemini_profile_output_is_in_the_subset() {
    for fixture in [
        "extensions.yaml",
        "recursive.yaml",
        "allof-oneof.yaml",
        "openapi31.yaml",
        "collisions.yaml",
        "param-styles.yaml",
    ] {
        let conv = convert_fixture_with(
            fixture,
            &ToolOptions {
                client: ClientProfile::new(Client::Gemini),
                ..ToolOptions::default()
            },
        );
        for t in &conv.tools.tools {
            let name = t.name().to_string();
            assert!(
                name.len() <= 64 && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'),
                "{name}"
            );
            let input = input(t);
            assert_gemini_clean(&input, &format!("{fixture} {name}"));
            for k in input["properties"].as_object().expect("properties").keys() {
                assert!(
                    k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{fixture} {name}: {k}"
                );
                // Renamed arguments keep their route binding.
                assert!(
                    t.route.arg(k).is_some(),
                    "{fixture} {name}: {k} has no binding"
                );
            }
        }
        // And linting the profiled list for Gemini finds nothing more to fix.
        let again = profile::check(&conv.tools, &ClientProfile::new(Client::Gemini));
        assert!(again.is_empty(), "{fixture}: {again:?}");
    }
}

#[test]
fn lint_findings_point_into_the_unprofiled_tools() {
    let conv = convert_fixture("extensions.yaml");
    let issues = profile::check(&conv.tools, &ClientProfile::new(Client::Gemini));
    let list = tool(&conv, "listWidgets");
    let doc = serde_json::to_value(list.tool()).expect("json");
    let mine: Vec<_> = issues.iter().filter(|i| i.tool == list.name()).collect();
    assert!(!mine.is_empty());
    for i in &mine {
        assert_eq!(i.level, Level::Reject);
        assert!(i.fixed);
        assert!(
            i.operation.doc().ends_with("extensions.yaml")
                && i.operation.pointer() == "/paths/~1widgets/get",
            "{}",
            i.operation
        );
        // Every pointer resolves in the tool definition as served without a profile.
        assert!(
            doc.pointer(&i.pointer).is_some(),
            "{} not in {doc}",
            i.pointer
        );
    }
    let ptrs: Vec<&str> = mine.iter().map(|i| i.pointer.as_str()).collect();
    for want in [
        "/inputSchema/properties/X-Trace-Id",
        "/inputSchema/properties/X-Trace-Id/format",
        "/inputSchema/properties/limit/type",
        "/inputSchema/properties/limit/exclusiveMinimum",
        "/inputSchema/additionalProperties",
    ] {
        assert!(ptrs.contains(&want), "{want} not in {ptrs:?}");
    }
    // OpenAI accepts all of this fixture; Claude too.
    assert!(profile::check(&conv.tools, &ClientProfile::new(Client::Openai)).is_empty());
    assert!(profile::check(&conv.tools, &ClientProfile::new(Client::Claude)).is_empty());
}

#[test]
fn openai_items_required() {
    // The converter itself always emits `items` (it adds `items: {}`); a tool list without it
    // (a hand-written or older one) is what the OpenAI profile repairs.
    let mut conv = convert_inline(ARRAY_WITHOUT_ITEMS);
    assert_eq!(
        input(&conv.tools.tools[0])["properties"]["ids"]["items"],
        json!({})
    );
    let mut def = conv.tools.tools[0].as_ref().clone();
    let mut schema = (*def.tool().input_schema).clone();
    if let Some(Value::Object(ids)) = schema.get_mut("properties").and_then(|p| p.get_mut("ids")) {
        ids.remove("items");
    }
    def.tool_mut().input_schema = std::sync::Arc::new(schema);
    conv.tools.tools[0] = std::sync::Arc::new(def);
    let openai = ClientProfile::new(Client::Openai);
    let issues = profile::check(&conv.tools, &openai);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].pointer, "/inputSchema/properties/ids");
    assert!(issues[0].message.contains("without `items`"));
    // Generic does not complain; Claude does not require items.
    assert!(profile::check(&conv.tools, &ClientProfile::new(Client::Claude)).is_empty());
    profile::apply(&mut conv.tools, &openai);
    assert_eq!(
        input(&conv.tools.tools[0])["properties"]["ids"]["items"],
        json!({})
    );
    assert!(profile::check(&conv.tools, &openai).is_empty());
}

const ARRAY_WITHOUT_ITEMS: &str = r#"
openapi: 3.0.3
info: {title: Arr, version: "1"}
paths:
  /x:
    get:
      operationId: getX
      parameters:
        - {name: ids, in: query, schema: {type: array}}
      responses: {"200": {description: ok}}
"#;

/// On real specs every profile fixes everything it finds: linting the profiled list for the same
/// client finds nothing, and the Gemini inputSchemas are in the subset.
#[test]
fn profiles_fix_everything_they_find_on_real_specs() {
    let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/specs"));
    // (k8s-swagger-2.0.json passes too, 1123 tools, but takes ~8 s more in a debug build.)
    let specs = ["github-api-3.0.json", "stripe-spec3.json"];
    if !dir.is_dir() {
        eprintln!(
            "SKIPPED profiles_fix_everything_they_find_on_real_specs: {} not found",
            dir.display()
        );
        return;
    }
    for name in specs {
        let path = dir.join(name);
        if !path.is_file() {
            eprintln!("SKIPPED {name}: not found");
            continue;
        }
        let spec = block_on(openapi_mcp_convert::load(
            &openapi_mcp_convert::SpecSource::Path(path),
        ))
        .expect("corpus spec loads");
        let plain = openapi_mcp_convert::convert(&spec, &ToolOptions::default()).tools;
        for client in [
            Client::Claude,
            Client::Openai,
            Client::Gemini,
            Client::Cursor,
            Client::Vscode,
        ] {
            let profile = ClientProfile::new(client);
            let found = profile::check(&plain, &profile);
            assert!(
                found.iter().all(|i| i.fixed),
                "{name} {client:?}: {:?}",
                found.iter().find(|i| !i.fixed)
            );
            let mut shaped = plain.clone();
            let applied = profile::apply(&mut shaped, &profile);
            assert_eq!(applied.len(), found.len(), "{name} {client:?}");
            let again = profile::check(&shaped, &profile);
            assert!(
                again.is_empty(),
                "{name} {client:?}: {:?}",
                &again[..again.len().min(3)]
            );
            let mut names: Vec<&str> = shaped.tools.iter().map(|t| t.name()).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(
                names.len(),
                shaped.tools.len(),
                "{name} {client:?}: duplicate names"
            );
            if client == Client::Gemini {
                for t in &shaped.tools {
                    assert_gemini_clean(&input(t), &format!("{name} {}", t.name()));
                }
            }
            eprintln!(
                "{name} {client:?}: {} findings, {} tools changed",
                found.len(),
                shaped
                    .tools
                    .iter()
                    .zip(&plain.tools)
                    .filter(|(a, b)| a.tool() != b.tool())
                    .count()
            );
        }
    }
}

/// `x-mcp-header` on parameters (SEP-2243) reaches the arguments where the 2026-07-28 revision
/// allows it (string, integer, boolean; unique names; token characters), through a path item
/// and a `$ref`; the others are left out with a warning at the annotation, so no client drops
/// the whole tool.
#[test]
fn x_mcp_header_is_mirrored_where_the_revision_allows() {
    let conv = convert_fixture("mcp-headers.yaml");
    let header = |op: &str, arg: &str| prop(tool(&conv, op), arg).get("x-mcp-header").cloned();
    assert_eq!(header("listReports", "region"), Some(json!("Region")));
    assert_eq!(header("listReports", "X-Tenant"), Some(json!("Tenant")));
    assert_eq!(header("listReports", "limit"), Some(json!("Limit")));
    assert_eq!(header("listReports", "verbose"), Some(json!("Verbose")));
    assert_eq!(
        header("listReports", "ratio"),
        None,
        "numbers are not allowed"
    );
    assert_eq!(header("createReport", "region"), Some(json!("Region")));
    assert_eq!(header("createReport", "dryRun"), None, "a second `region`");
    assert_eq!(header("createReport", "priority"), None, "not a token");
    let diags = diagnostics_text(&conv).join("\n");
    for (at, why) in [
        (
            "get/parameters/3/x-mcp-header",
            "only allowed on string, integer and boolean",
        ),
        ("post/parameters/0/x-mcp-header", "used twice"),
        (
            "post/parameters/1/x-mcp-header",
            "not an HTTP header name token",
        ),
    ] {
        assert!(
            diags.lines().any(|l| l.contains(at) && l.contains(why)),
            "{at}: {why}\n{diags}"
        );
    }
    // Operations without the extension are untouched.
    let pets = convert_fixture("petstore.yaml");
    for t in &pets.tools.tools {
        assert!(
            !input(t).to_string().contains("x-mcp-header"),
            "{}",
            t.name()
        );
    }
}

/// `x-mcp-task` (tasks extension): each accepted value sets the tool's task support, on
/// OpenAPI 3 and Swagger 2.0 alike; a bad value is a warning at its pointer and that operation
/// alone keeps the inference; operations without it are inferred.
#[test]
fn x_mcp_task_sets_task_support_and_bad_values_degrade_alone() {
    use openapi_mcp_toolset::model::TaskSupport;
    let ops = r#"
  /export:
    post:
      operationId: startExport
      x-mcp-task: required
      responses: {'200': {description: ok}}
  /import:
    post:
      operationId: startImport
      x-mcp-task: Optional
      responses: {'202': {description: accepted}}
  /sync:
    post:
      operationId: syncNow
      x-mcp-task: none
      responses: {'202': {description: accepted}}
  /a:
    post:
      operationId: flagTrue
      x-mcp-task: true
      responses: {'200': {description: ok}}
  /b:
    post:
      operationId: flagFalse
      x-mcp-task: false
      responses: {'200': {description: ok}}
  /c:
    post:
      operationId: badWord
      x-mcp-task: "forever\nand ever"
      responses: {'200': {description: ok}}
  /d:
    post:
      operationId: badType
      x-mcp-task: {mode: required}
      responses: {'200': {description: ok}}
  /e:
    get:
      operationId: plain
      responses: {'200': {description: ok}}
"#;
    let v3 = format!("openapi: 3.0.3\ninfo: {{title: Jobs, version: '1'}}\npaths:{ops}");
    let v2 = format!("swagger: '2.0'\ninfo: {{title: Jobs, version: '1'}}\npaths:{ops}");
    for doc in [v3, v2] {
        let conv = convert_inline(&doc);
        let support = |op: &str| tool(&conv, op).task_support;
        assert_eq!(support("startExport"), TaskSupport::Required);
        assert_eq!(support("startImport"), TaskSupport::Optional);
        assert_eq!(support("syncNow"), TaskSupport::Never);
        assert_eq!(support("flagTrue"), TaskSupport::Optional);
        assert_eq!(support("flagFalse"), TaskSupport::Never);
        assert_eq!(support("badWord"), TaskSupport::Inferred);
        assert_eq!(support("badType"), TaskSupport::Inferred);
        assert_eq!(support("plain"), TaskSupport::Inferred);
        let diags = diagnostics_text(&conv);
        let task_warnings: Vec<&String> =
            diags.iter().filter(|l| l.contains("x-mcp-task")).collect();
        assert_eq!(task_warnings.len(), 2, "{diags:#?}");
        for (at, got) in [
            (
                "inline.yaml#/paths/~1c/post/x-mcp-task",
                r#"got "forever\nand ever""#,
            ),
            ("inline.yaml#/paths/~1d/post/x-mcp-task", "got an object"),
        ] {
            assert!(
                task_warnings
                    .iter()
                    .any(|l| l.starts_with("warning") && l.contains(at) && l.contains(got)),
                "{at}: {got}\n{diags:#?}"
            );
        }
        // One line each (a value holding a newline is escaped).
        assert!(task_warnings.iter().all(|l| !l.contains('\n')));
        // Not in the tool definition (the extension defines no such field).
        let listed = serde_json::to_string(tool(&conv, "startExport").tool()).expect("tool");
        assert!(!listed.contains("task"), "{listed}");
    }
}
