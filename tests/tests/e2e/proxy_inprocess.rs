//! The proxy in-process with rmcp's client over a duplex pipe: the wire rules end to end.

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_runtime::rmcp::ServiceError;
use openapi_mcp_runtime::rmcp::model::ErrorCode;
use openapi_mcp_tests::harness::{call, connect_in_process, proxy_server, spec, text};
use openapi_mcp_tests::upstream::{Reply, Upstream};
use serde_json::json;

fn decode(s: &str) -> String {
    percent_decode(s)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn petstore_list_create_show_with_api_key() {
    let up = Upstream::start().await;
    up.respond(|r| match (r.method.as_str(), r.path()) {
        ("GET", "/api/pets") => Reply::json(200, json!([{"id": 1, "name": "Rex"}])),
        ("POST", "/api/pets") => Reply::json(201, json!({"id": 7, "name": "Tom"})),
        ("GET", "/api/pets/7") => Reply::json(200, json!({"id": 7, "name": "Tom", "tag": null})),
        _ => Reply::json(404, json!({"code": 404, "message": "no such pet"})),
    });
    let server = proxy_server(
        &spec("petstore.yaml"),
        &up.url("/api"),
        ToolOptions::default(),
        &[("api_key", "s3cret")],
    )
    .await;
    let client = connect_in_process(server).await;

    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"petstore_list_pets") && names.contains(&"petstore_create_pet"),
        "{names:?}"
    );

    let r = call(
        &client,
        "petstore_list_pets",
        json!({"limit": 2, "tags": ["a b", "c"]}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!(req.method, "GET");
    assert_eq!(req.path(), "/api/pets");
    assert_eq!(req.query(), Some("limit=2&tags=a%20b&tags=c"));
    assert_eq!(req.header("x-api-key"), Some("s3cret"));
    assert_eq!(
        r.structured_content,
        Some(json!({"result": [{"id": 1, "name": "Rex"}]}))
    );

    let r = call(
        &client,
        "petstore_create_pet",
        json!({"name": "Tom", "tag": "cat"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = up.last();
    assert_eq!((req.method.as_str(), req.path()), ("POST", "/api/pets"));
    assert_eq!(req.body_json(), json!({"name": "Tom", "tag": "cat"}));
    assert!(
        req.header("content-type")
            .unwrap_or_default()
            .starts_with("application/json")
    );
    assert_eq!(r.structured_content, Some(json!({"id": 7, "name": "Tom"})));
    // The secret is in no part of the MCP result.
    assert!(!serde_json::to_string(&r).unwrap().contains("s3cret"));

    let r = call(&client, "petstore_show_pet_by_id", json!({"petId": 7})).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(up.last().path(), "/api/pets/7");

    // Upstream errors are tool errors with the status and body.
    let r = call(&client, "petstore_show_pet_by_id", json!({"petId": 8})).await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(t.contains("404") && t.contains("no such pet"), "{t}");
    assert!(r.structured_content.is_none());
}

/// Data the output schema does not describe would make MCP clients fail the whole call: it comes
/// back as text in an error result that says the request itself succeeded.
#[tokio::test]
async fn responses_that_break_the_output_schema_come_back_as_text() {
    let up = Upstream::start().await;
    up.respond(|r| match r.path() {
        // An object where the spec promises an array of pets.
        "/api/pets" => Reply::json(200, json!({"data": [{"id": 1}]})),
        _ => Reply::json(200, json!({"id": 7, "name": "Tom"})),
    });
    let server = proxy_server(
        &spec("petstore.yaml"),
        &up.url("/api"),
        ToolOptions::default(),
        &[("api_key", "k")],
    )
    .await;
    let client = connect_in_process(server).await;

    let r = call(&client, "petstore_list_pets", json!({})).await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(r.structured_content, None);
    let all = text(&r);
    assert!(
        all.starts_with("The API call succeeded, but the response does not match")
            && all.contains("do not repeat it")
            && all.contains("`result`")
            && all.contains(r#"{"data":[{"id":1}]}"#),
        "{all}"
    );
    assert_eq!(up.requests().len(), 1, "the call was sent once");

    // Data that fits keeps its structured content.
    let r = call(&client, "petstore_show_pet_by_id", json!({"petId": 7})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(r.structured_content, Some(json!({"id": 7, "name": "Tom"})));
}

#[tokio::test]
async fn invalid_arguments_are_tool_errors_and_nothing_is_sent() {
    let up = Upstream::start().await;
    let server = proxy_server(
        &spec("petstore.yaml"),
        &up.url("/api"),
        ToolOptions::default(),
        &[],
    )
    .await;
    let client = connect_in_process(server).await;
    let r = call(
        &client,
        "petstore_list_pets",
        json!({"limit": 1000, "tag": "x"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(t.contains("`limit`"), "{t}");
    assert!(
        t.contains("unknown argument `tag`: did you mean `tags`?"),
        "{t}"
    );
    let r = call(&client, "petstore_show_pet_by_id", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("petId"), "{}", text(&r));
    assert!(
        up.requests().is_empty(),
        "invalid calls must not reach the API"
    );

    // Unknown tool: a protocol error (-32602), not a tool result.
    let err = client
        .call_tool(openapi_mcp_runtime::rmcp::model::CallToolRequestParams::new("nope"))
        .await
        .expect_err("unknown tool");
    match err {
        ServiceError::McpError(e) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
        other => panic!("unexpected error {other:?}"),
    }
}

#[tokio::test]
async fn path_values_cannot_escape_their_segment() {
    let up = Upstream::start().await;
    let server = proxy_server(
        &spec("collisions.yaml"),
        &up.url("/api"),
        ToolOptions::default(),
        &[],
    )
    .await;
    let client = connect_in_process(server).await;
    let tools = client.list_all_tools().await.unwrap();
    let t = tools
        .iter()
        .find(|t| t.name.ends_with("_get_user"))
        .expect("the first getUser keeps the plain name");
    let name = t.name.to_string();
    // `.`/`..` cannot be sent at all: URL parsers resolve them (even as %2E%2E). Refused.
    for hostile in ["..", "."] {
        let r = call(&client, &name, json!({"userId": hostile})).await;
        assert_eq!(r.is_error, Some(true), "{hostile}");
        assert!(text(&r).contains("dot segment"), "{}", text(&r));
    }
    assert!(up.requests().is_empty());
    for hostile in [
        "../../etc/passwd",
        "a/b?c=d#e",
        "%2e%2e",
        "//evil.example",
        "...",
        "a b%",
    ] {
        up.clear();
        let r = call(&client, &name, json!({"userId": hostile})).await;
        assert_eq!(r.is_error, Some(false), "{hostile}: {}", text(&r));
        let req = up.last();
        assert!(
            req.path().starts_with("/api/users/"),
            "{hostile} -> {}",
            req.target
        );
        let seg = &req.path()["/api/users/".len()..];
        assert!(
            !seg.contains('/') && req.query().is_none(),
            "{hostile} -> {}",
            req.target
        );
        assert_eq!(decode(seg), hostile, "value must arrive intact");
    }
}

#[tokio::test]
async fn parameter_styles_on_the_wire() {
    let up = Upstream::start().await;
    let server = proxy_server(
        &spec("param-styles.yaml"),
        &up.url("/api"),
        ToolOptions {
            prefix: Some(String::new()),
            ..Default::default()
        },
        &[],
    )
    .await;
    let client = connect_in_process(server).await;
    let color = json!(["blue", "black", "brown"]);
    let point = json!({"R": 100, "G": 200, "B": 150});
    let cases = [
        (
            "path_simple",
            json!({"color": color, "point": point}),
            "/api/path/simple/blue,black,brown/R,100,G,200,B,150",
            None,
        ),
        (
            "path_simple_explode",
            json!({"color": color, "point": point}),
            "/api/path/simple-explode/blue,black,brown/R=100,G=200,B=150",
            None,
        ),
        (
            "path_label",
            json!({"color": color, "point": point}),
            "/api/path/label/.blue,black,brown/.R,100,G,200,B,150",
            None,
        ),
        (
            "path_label_explode",
            json!({"color": color, "point": point}),
            "/api/path/label-explode/.blue.black.brown/.R=100.G=200.B=150",
            None,
        ),
        (
            "path_matrix_explode",
            json!({"color": color, "point": point}),
            "/api/path/matrix-explode/;color=blue;color=black;color=brown/;R=100;G=200;B=150",
            None,
        ),
        (
            "query_form_explode",
            json!({"color": color, "point": point}),
            "/api/query/form",
            Some("color=blue&color=black&color=brown&R=100&G=200&B=150"),
        ),
        (
            "query_form_no_explode",
            json!({"color": color, "point": point}),
            "/api/query/form-no-explode",
            Some("color=blue,black,brown&point=R,100,G,200,B,150"),
        ),
        (
            "query_space_delimited",
            json!({"color": color}),
            "/api/query/space-delimited",
            Some("color=blue black brown"),
        ),
        (
            "query_pipe_delimited",
            json!({"color": color}),
            "/api/query/pipe-delimited",
            Some("color=blue|black|brown"),
        ),
        (
            "query_deep_object",
            json!({"filter": {"status": "active", "owner": "alice"}}),
            "/api/query/deep-object",
            Some("filter[status]=active&filter[owner]=alice"),
        ),
        (
            "query_json_content",
            json!({"where": {"age": {"gt": 21}}}),
            "/api/query/json",
            Some(r#"where={"age":{"gt":21}}"#),
        ),
    ];
    let tools = client.list_all_tools().await.unwrap();
    for (tool, args, path, query) in cases {
        let tool = tools
            .iter()
            .find(|t| t.name == tool)
            .unwrap_or_else(|| panic!("no tool {tool}"));
        // Only pass the arguments this tool has.
        let props = tool
            .input_schema
            .get("properties")
            .and_then(|p| p.as_object())
            .cloned()
            .unwrap_or_default();
        let args: serde_json::Map<String, serde_json::Value> = args
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| props.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        up.clear();
        let r = call(&client, &tool.name, serde_json::Value::Object(args)).await;
        assert_eq!(r.is_error, Some(false), "{}: {}", tool.name, text(&r));
        let req = up.last();
        assert_eq!(decode(req.path()), path, "{}", tool.name);
        assert_eq!(
            req.query().map(decode),
            query.map(str::to_string),
            "{}",
            tool.name
        );
    }
}

#[tokio::test]
async fn pagination_of_tools_list() {
    use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, Forwarder};
    use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
    let spec = openapi_mcp_convert::load(&openapi_mcp_convert::SpecSource::Path(spec(
        "param-styles.yaml",
    )))
    .await
    .unwrap();
    let set = openapi_mcp_convert::convert(&spec, &ToolOptions::default()).tools;
    let total = set.tools.len();
    let fwd = Forwarder::new(
        ForwardOptions::new(url::Url::parse("http://127.0.0.1:9/").unwrap()),
        vec![],
        Credentials::from_env(&[], |_| None),
    )
    .unwrap();
    let server = ProxyServer::new(
        set,
        fwd,
        ServerOptions {
            page_size: Some(5),
            ..Default::default()
        },
    );
    let client = connect_in_process(server).await;
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 5);
    assert_eq!(first.next_cursor.as_deref(), Some("5"));
    let all = client.list_all_tools().await.unwrap();
    assert_eq!(all.len(), total);
}

/// Pages are bounded in bytes as well as in tools (a stdio message over 10 MiB makes the
/// TypeScript SDK close the connection): every page but a single-tool one fits the budget, and
/// the pages together are the whole list, in order.
#[tokio::test]
async fn tools_list_pages_are_bounded_in_bytes() {
    use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, Forwarder};
    use openapi_mcp_runtime::rmcp::model::PaginatedRequestParams;
    use openapi_mcp_runtime::server::{ProxyServer, ServerOptions};
    let spec = openapi_mcp_convert::load(&openapi_mcp_convert::SpecSource::Path(spec(
        "param-styles.yaml",
    )))
    .await
    .unwrap();
    let set = openapi_mcp_convert::convert(&spec, &ToolOptions::default()).tools;
    let names: Vec<String> = set.tools.iter().map(|t| t.name().to_string()).collect();
    let fwd = Forwarder::new(
        ForwardOptions::new(url::Url::parse("http://127.0.0.1:9/").unwrap()),
        vec![],
        Credentials::from_env(&[], |_| None),
    )
    .unwrap();
    const BUDGET: usize = 2048;
    let server = ProxyServer::new(
        set,
        fwd,
        ServerOptions {
            page_bytes: Some(BUDGET),
            ..Default::default()
        },
    );
    let client = connect_in_process(server).await;
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let page = client
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .unwrap();
        pages += 1;
        assert!(!page.tools.is_empty());
        let bytes: usize = page
            .tools
            .iter()
            .map(|t| serde_json::to_vec(t).unwrap().len() + 1)
            .sum();
        assert!(
            page.tools.len() == 1 || bytes <= BUDGET,
            "page of {} tools is {bytes} bytes",
            page.tools.len()
        );
        seen.extend(page.tools.iter().map(|t| t.name.to_string()));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert!(pages > 2, "{pages} pages");
    assert_eq!(seen, names);
}

#[tokio::test]
async fn connection_refused_is_an_actionable_tool_error() {
    // Bind and drop a listener to get a port nobody listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let server = proxy_server(
        &spec("petstore.yaml"),
        &format!("http://127.0.0.1:{port}/api"),
        ToolOptions::default(),
        &[],
    )
    .await;
    let client = connect_in_process(server).await;
    let r = call(&client, "petstore_list_pets", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).to_lowercase().contains("connect"), "{}", text(&r));
}
