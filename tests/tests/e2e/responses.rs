//! Responses that fit (#22): `--response compact|full`, the `_select` argument (JMESPath), and
//! `--max-response-bytes` cuts that keep JSON valid and give the next page's arguments; through a
//! real rmcp client against the recording upstream (`specs/responses.yaml`).

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_convert::profile::{Client as Profile, ClientProfile};
use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, ResponseMode};
use openapi_mcp_runtime::modes::dynamic::{CALL, DESCRIBE, ToolMode};
use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::model::CallToolResult;
use openapi_mcp_runtime::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use openapi_mcp_runtime::server::ServerOptions;
use openapi_mcp_tests::harness::{
    Client, binary, call, connect_in_process, server_for, spec, text, tool_set,
};
use openapi_mcp_tests::upstream::{Recorded, Reply, Upstream};
use serde_json::{Value, json};

const KEY: &str = "sekr3t-key-0042";

async fn client_with(
    up: &Upstream,
    tweak: impl FnOnce(&mut ForwardOptions),
    tool_opts: ToolOptions,
    server_opts: ServerOptions,
) -> Client {
    // The client profile is the pipeline's first pass, after `convert`.
    let mut set = tool_set(&spec("responses.yaml"), &tool_opts).await;
    openapi_mcp_convert::profile::apply(&mut set, &tool_opts.client);
    let mut creds = Credentials::new();
    creds.set("api_key", KEY.to_string());
    connect_in_process(server_for(set, &up.url("/api"), creds, tweak, server_opts)).await
}

async fn client(up: &Upstream, tweak: impl FnOnce(&mut ForwardOptions)) -> Client {
    client_with(up, tweak, ToolOptions::default(), ServerOptions::default()).await
}

/// A GitHub-like issue: nulls, empty values, `*_url` hypermedia, a nested user; `secret_echo`
/// carries the API key back (APIs echo credentials).
fn issue(n: u64) -> Value {
    let user = json!({
        "login": format!("user{n}"), "id": 100 + n,
        "avatar_url": format!("https://avatars.example.com/u/{n}?v=4"),
        "gravatar_id": "",
        "url": format!("https://api.example.com/users/user{n}"),
        "html_url": format!("https://example.com/user{n}"),
        "followers_url": format!("https://api.example.com/users/user{n}/followers"),
        "following_url": format!("https://api.example.com/users/user{n}/following{{/other_user}}"),
    });
    json!({
        "id": 1000 + n, "number": n, "title": format!("Issue {n}"), "state": "open",
        "url": format!("https://api.example.com/repos/o/r/issues/{n}"),
        "html_url": format!("https://example.com/o/r/issues/{n}"),
        "comments_url": format!("https://api.example.com/repos/o/r/issues/{n}/comments"),
        "labels_url": format!("https://api.example.com/repos/o/r/issues/{n}/labels{{/name}}"),
        "user": user, "labels": [], "assignee": null, "milestone": null, "body": null,
        "secret_echo": format!("key={KEY}"),
    })
}

/// What the compact form of [`issue`] keeps.
fn compact_issue(n: u64) -> Value {
    json!({
        "id": 1000 + n, "number": n, "title": format!("Issue {n}"), "state": "open",
        "url": format!("https://api.example.com/repos/o/r/issues/{n}"),
        "html_url": format!("https://example.com/o/r/issues/{n}"),
        "user": {"login": format!("user{n}"), "id": 100 + n,
            "url": format!("https://api.example.com/users/user{n}"),
            "html_url": format!("https://example.com/user{n}")},
        "secret_echo": "key=[redacted]",
    })
}

fn query(r: &Recorded, name: &str) -> Option<String> {
    url::form_urlencoded::parse(r.query().unwrap_or("").as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// Issues 1..=95 served by `page` and `per_page` (default 30), as GitHub does.
fn paged_issues(r: &Recorded) -> Reply {
    let per: u64 = query(r, "per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let page: u64 = query(r, "page").and_then(|v| v.parse().ok()).unwrap_or(1);
    let items: Vec<Value> = ((page - 1) * per + 1..=page * per)
        .filter(|n| *n <= 95)
        .map(issue)
        .collect();
    Reply::json(200, Value::Array(items))
}

fn all_text(r: &CallToolResult) -> String {
    serde_json::to_string(r).expect("serializes")
}

fn note(r: &CallToolResult) -> String {
    r.content
        .get(1)
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// The arguments a cut note gives for the next call.
fn next_args(note: &str) -> Value {
    let start = note.find("arguments {").expect("next-page arguments") + "arguments ".len();
    let mut de = serde_json::Deserializer::from_str(&note[start..]).into_iter::<Value>();
    de.next().expect("a JSON object").expect("valid JSON")
}

#[tokio::test]
async fn compact_by_default_full_on_request_and_secrets_scrubbed() {
    let up = Upstream::start().await;
    up.respond(paged_issues);
    let c = client(&up, |_| {}).await;
    let r = call(&c, "responses_list_issues", json!({"per_page": 2})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let shown: Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(shown, json!([compact_issue(1), compact_issue(2)]));
    // structuredContent is compact too, and valid against the output schema.
    assert_eq!(
        r.structured_content,
        Some(json!({"result": [compact_issue(1), compact_issue(2)]}))
    );
    assert_eq!(r.content.len(), 1, "no note when nothing was cut");
    assert!(!all_text(&r).contains(KEY));

    // --response full: the body as the API sent it (the key still scrubbed).
    let full = client(&up, |o| o.response = ResponseMode::Full).await;
    let r = call(&full, "responses_list_issues", json!({"per_page": 2})).await;
    let body = json!([issue(1), issue(2)]).to_string();
    assert_eq!(text(&r), body.replace(KEY, "[redacted]"));
    assert_eq!(
        r.structured_content.as_ref().unwrap()["result"][0]["comments_url"],
        "https://api.example.com/repos/o/r/issues/1/comments"
    );
    assert!(!all_text(&r).contains(KEY));
}

#[tokio::test]
async fn compacted_structured_content_keeps_what_the_schema_requires() {
    let up = Upstream::start().await;
    up.respond(|_| {
        Reply::json(
            200,
            json!({"id": "acct_1", "closed_at": null, "tags": [], "note": null}),
        )
    });
    let c = client(&up, |_| {}).await;
    let r = call(&c, "responses_get_account", json!({"id": "acct_1"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    // The text is compact; the output schema wants at least 3 members, so the structured
    // content is the full body.
    assert_eq!(text(&r), r#"{"id":"acct_1"}"#);
    assert_eq!(
        r.structured_content,
        Some(json!({"id": "acct_1", "closed_at": null, "tags": [], "note": null}))
    );
}

#[tokio::test]
async fn selection_applies_jmespath_and_is_never_sent() {
    let up = Upstream::start().await;
    up.respond(|r| match r.path() {
        "/api/readme" => Reply::raw(200, "text/plain", "# Read me"),
        _ => paged_issues(r),
    });
    let c = client(&up, |_| {}).await;
    let tools = c.list_all_tools().await.unwrap();
    let list = tools
        .iter()
        .find(|t| t.name == "responses_list_issues")
        .unwrap();
    assert_eq!(list.input_schema["properties"]["_select"]["type"], "string");

    let r = call(
        &c,
        "responses_list_issues",
        json!({"per_page": 3, "_select": "[?number > `1`].{n: number, c: comments_url}"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    // A field the selection names is kept even where compact would drop it (`*_url`).
    let shown: Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(
        shown,
        json!([
            {"c": "https://api.example.com/repos/o/r/issues/2/comments", "n": 2},
            {"c": "https://api.example.com/repos/o/r/issues/3/comments", "n": 3}
        ])
    );
    let sent = up.last();
    assert_eq!(sent.target, "/api/issues?per_page=3");
    // structuredContent stays the (compact) result the output schema describes.
    assert_eq!(
        r.structured_content.as_ref().unwrap()["result"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );

    // Secrets cannot be selected out, however transformed.
    let r = call(
        &c,
        "responses_list_issues",
        json!({"per_page": 1, "_select": "[0].[secret_echo, reverse(secret_echo), keys(@)]"}),
    )
    .await;
    let rev: String = KEY.chars().rev().collect();
    assert!(
        !all_text(&r).contains(KEY) && !all_text(&r).contains(&rev),
        "{}",
        all_text(&r)
    );
    assert!(text(&r).contains("key=[redacted]"), "{}", text(&r));

    // An invalid expression: a tool error naming the argument; nothing is sent.
    up.clear();
    let r = call(
        &c,
        "responses_list_issues",
        json!({"_select": "[?number >"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(
        t.starts_with(
            "Invalid arguments for `responses_list_issues`; nothing was sent to the API."
        ) && t.contains("`_select`: not a valid JMESPath expression"),
        "{t}"
    );
    let r = call(&c, "responses_list_issues", json!({"_select": 3})).await;
    assert!(
        text(&r).contains("`_select`: must be a string"),
        "{}",
        text(&r)
    );
    assert!(up.requests().is_empty());

    // An expression that fails on this result (a type error at run time): the request was
    // carried out, so the result comes without the selection, after a sentence that says so.
    let r = call(
        &c,
        "responses_list_issues",
        json!({"per_page": 1, "_select": "abs(@)"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false));
    assert!(
        text(&r).starts_with(
            "The API call succeeded, but `_select` could not be applied to its result: "
        ) && text(&r).contains("do not repeat it"),
        "{}",
        text(&r)
    );
    assert_eq!(
        serde_json::from_str::<Value>(&note(&r)).unwrap(),
        json!([compact_issue(1)])
    );

    // A non-JSON answer: returned as it is, with a note that the selection was not applied.
    let r = call(&c, "responses_get_readme", json!({"_select": "title"})).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(text(&r), "# Read me");
    assert_eq!(
        note(&r),
        "[openapi-mcp: `_select` was not applied: the API's answer is not JSON (text/plain).]"
    );
    assert_eq!(up.last().target, "/api/readme");
}

#[tokio::test]
async fn cut_lists_stay_valid_json_and_continue_exactly_page_style() {
    let up = Upstream::start().await;
    up.respond(paged_issues);
    let c = client(&up, |o| o.max_response_bytes = 2000).await;
    let mut args = json!({"state": "open", "per_page": 20, "page": 2});
    let mut seen: Vec<u64> = Vec::new();
    // Walk the whole list through the notes' next-page arguments: every issue exactly once.
    for _ in 0..100 {
        let r = call(&c, "responses_list_issues", args.clone()).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        assert!(text(&r).len() <= 2000);
        let shown: Vec<Value> = serde_json::from_str(&text(&r)).unwrap();
        assert_eq!(
            r.structured_content,
            Some(json!({"result": shown.clone()})),
            "structuredContent is cut alike"
        );
        seen.extend(shown.iter().map(|i| i["number"].as_u64().unwrap()));
        let n = note(&r);
        if n.is_empty() {
            // Not cut: the next page as the model would ask for it.
            if shown.is_empty() {
                break;
            }
            args["page"] = json!(args["page"].as_u64().unwrap_or(1) + 1);
            continue;
        }
        assert!(
            n.starts_with(&format!(
                "[openapi-mcp: the result was over --max-response-bytes (2000 bytes): {} of ",
                shown.len()
            )) && n.contains(" items shown, ")
                && n.contains("To continue after the last item shown, call again with arguments {"),
            "{n}"
        );
        assert!(!all_text(&r).contains(KEY));
        args = next_args(&n);
        assert_eq!(args["state"], "open", "the other arguments are kept: {n}");
    }
    // Issues 21..=95 (the walk started at page 2 of 20), each once and in order.
    assert_eq!(seen, (21..=95).collect::<Vec<u64>>());
}

#[tokio::test]
async fn cut_lists_name_the_link_header_page_and_the_starting_after_cursor() {
    let up = Upstream::start().await;
    let base = up.url("/api");
    up.respond(move |r| match r.path() {
        "/api/events" => {
            let events: Vec<Value> = (0..8)
                .map(|i| json!({"id": i, "type": "PushEvent", "payload": "x".repeat(40)}))
                .collect();
            let mut reply = Reply::json(200, Value::Array(events));
            reply.headers.push((
                "link".into(),
                format!(
                    "<{base}/events?after=Y3Vyc29yOjg%3D&per_page=8>; rel=\"next\", <{base}/events?per_page=8>; rel=\"first\""
                ),
            ));
            reply
        }
        _ => Reply::json(
            200,
            json!({
                "object": "list",
                "data": (1..=6).map(|i| json!({"id": format!("cus_{i}"), "email": format!("c{i}@example.com"), "pad": "y".repeat(40)})).collect::<Vec<_>>(),
                "has_more": true
            }),
        ),
    });
    let c = client(&up, |o| o.max_response_bytes = 300).await;

    let r = call(&c, "responses_list_events", json!({"per_page": 8})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let shown: Vec<Value> = serde_json::from_str(&text(&r)).unwrap();
    let k = shown.len();
    assert!(k > 0 && k < 8, "{k}");
    assert_eq!(
        note(&r),
        format!(
            "[openapi-mcp: the result was over --max-response-bytes (300 bytes): {k} of 8 items shown, {} cut (the JSON above is complete as shown). Next page: call again with arguments {{\"per_page\":8,\"after\":\"Y3Vyc29yOjg=\"}} (it skips the items cut here; to see those, call this page again with a smaller page size or a `_select` expression that keeps fewer fields).]",
            8 - k
        )
    );

    let r = call(&c, "responses_list_customers", json!({"limit": 6})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let shown: Value = serde_json::from_str(&text(&r)).unwrap();
    let data = shown["data"].as_array().unwrap();
    assert!(!data.is_empty() && data.len() < 6);
    assert_eq!(shown["has_more"], true, "the envelope is kept");
    let n = note(&r);
    assert!(n.contains(" items of `data` shown, "), "{n}");
    assert_eq!(
        next_args(&n),
        json!({"limit": 6, "starting_after": data.last().unwrap()["id"]})
    );
}

#[tokio::test]
async fn a_body_past_the_read_limit_shows_its_whole_items() {
    let up = Upstream::start().await;
    // 200 issues (~100 KB) against a 4 KB budget: read up to 16 KB, cut at an item there.
    up.respond(|_| Reply::json(200, Value::Array((1..=200).map(issue).collect())));
    let c = client(&up, |o| o.max_response_bytes = 4096).await;
    let r = call(&c, "responses_list_issues", json!({"per_page": 100})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let shown: Vec<Value> = serde_json::from_str(&text(&r)).unwrap();
    assert!(!shown.is_empty());
    assert_eq!(shown[0], compact_issue(1));
    let n = note(&r);
    assert!(
        n.contains(&format!("{} of at least ", shown.len())) && n.contains("arguments {"),
        "{n}"
    );
    assert!(!all_text(&r).contains(KEY));
}

#[tokio::test]
async fn dynamic_mode_and_client_profiles_keep_the_selection_argument() {
    let up = Upstream::start().await;
    up.respond(paged_issues);
    let c = client_with(
        &up,
        |_| {},
        ToolOptions::default(),
        ServerOptions {
            mode: ToolMode::Dynamic,
            ..Default::default()
        },
    )
    .await;
    let d = call(&c, DESCRIBE, json!({"name": "responses_list_issues"})).await;
    assert_eq!(
        d.structured_content.as_ref().unwrap()["inputSchema"]["properties"]["_select"]["type"],
        "string"
    );
    let r = call(
        &c,
        CALL,
        json!({"name": "responses_list_issues", "arguments": {"per_page": 2, "_select": "[].title"}}),
    )
    .await;
    assert_eq!(text(&r), r#"["Issue 1","Issue 2"]"#);
    assert_eq!(up.last().target, "/api/issues?per_page=2");

    for profile in [Profile::Gemini, Profile::Openai] {
        let c = client_with(
            &up,
            |_| {},
            ToolOptions {
                client: ClientProfile::new(profile),
                ..Default::default()
            },
            ServerOptions::default(),
        )
        .await;
        let tools = c.list_all_tools().await.unwrap();
        let t = tools
            .iter()
            .find(|t| t.name.ends_with("list_issues"))
            .unwrap();
        assert!(
            t.input_schema["properties"].get("_select").is_some(),
            "{profile:?}"
        );
        let r = call(&c, &t.name, json!({"per_page": 1, "_select": "[].number"})).await;
        assert_eq!(text(&r), "[1]", "{profile:?}");
    }
}

/// The flags through the built binary (the generated servers take the same `ServeArgs`).
#[tokio::test]
async fn the_binary_takes_response_and_max_response_bytes() {
    let up = Upstream::start().await;
    up.respond(paged_issues);
    let base = up.url("/api");
    let serve = |extra: &'static [&'static str]| {
        let base = base.clone();
        TokioChildProcess::new(
            tokio::process::Command::new(binary()).configure(move |cmd| {
                cmd.args([
                    "proxy",
                    spec("responses.yaml").to_str().unwrap(),
                    "--base-url",
                    &base,
                ]);
                cmd.args(extra);
                cmd.env("OPENAPI_MCP_API_KEY", KEY);
            }),
        )
        .expect("spawn")
    };
    let full = ().serve(serve(&["--response", "full"])).await.expect("initialize");
    let r = call(&full, "responses_list_issues", json!({"per_page": 1})).await;
    assert_eq!(
        text(&r),
        json!([issue(1)]).to_string().replace(KEY, "[redacted]")
    );
    full.cancel().await.unwrap();
    let cut = ().serve(serve(&["--max-response-bytes", "1000"])).await.expect("initialize");
    let r = call(&cut, "responses_list_issues", json!({"per_page": 10})).await;
    let shown: Vec<Value> = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(shown[0], compact_issue(1));
    assert!(shown.len() < 10 && text(&r).len() <= 1000);
    assert_eq!(
        next_args(&note(&r)),
        json!({"per_page": shown.len(), "page": 2})
    );
    cut.cancel().await.unwrap();
}
