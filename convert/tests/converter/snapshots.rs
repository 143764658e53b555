//! Snapshot of every fixture: the tools (as served in tools/list), their routes, the tool set's
//! metadata and the sorted diagnostics.

use serde_json::{Value, json};

use super::support::*;

fn snapshot(fixture: &str, name: &str) {
    let conv = convert_fixture(fixture);
    let tools: Vec<&openapi_mcp_toolset::rmcp::model::Tool> =
        conv.tools.tools.iter().map(|t| t.tool()).collect();
    let routes: Vec<Value> = conv
        .tools
        .tools
        .iter()
        .map(|t| json!({ "tool": t.name(), "location": normalize_paths(&t.location.to_string()), "route": t.route }))
        .collect();
    let r = &conv.report;
    let doc = json!({
        "title": conv.tools.title,
        "version": conv.tools.version,
        "baseUrl": conv.tools.base_url,
        "securitySchemes": conv.tools.security_schemes,
        "report": { "operations": r.operations, "tools": r.tools, "failed": r.failed, "filtered": r.filtered },
        "tools": tools,
        "routes": routes,
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("serialize snapshot");
    text.push('\n');
    assert_snapshot(&format!("{name}.json"), &text);

    let mut diags = diagnostics_text(&conv).join("\n");
    if !diags.is_empty() {
        diags.push('\n');
    }
    assert_snapshot(&format!("{name}.diagnostics.txt"), &diags);
}

macro_rules! snapshot_tests {
    ($($test:ident => $fixture:literal as $name:literal;)*) => {
        $(
            #[test]
            fn $test() {
                snapshot($fixture, $name);
            }
        )*
    };
}

snapshot_tests! {
    snapshot_petstore => "petstore.yaml" as "petstore";
    snapshot_param_styles => "param-styles.yaml" as "param-styles";
    snapshot_collisions => "collisions.yaml" as "collisions";
    snapshot_recursive => "recursive.yaml" as "recursive";
    snapshot_allof_oneof => "allof-oneof.yaml" as "allof-oneof";
    snapshot_forms => "forms.yaml" as "forms";
    snapshot_swagger2 => "swagger2.yaml" as "swagger2";
    snapshot_openapi31 => "openapi31.yaml" as "openapi31";
    snapshot_external_refs => "external-refs/openapi.yaml" as "external-refs";
    snapshot_broken_ops => "broken-ops.yaml" as "broken-ops";
    snapshot_security => "security.yaml" as "security";
}
