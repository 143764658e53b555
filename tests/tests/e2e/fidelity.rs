//! Request fidelity on unseen APIs (issue #23, part 2): the exact HTTP request the proxy sends,
//! as a real upstream records it, for each defect class an outside validator found on real-world
//! specs. Each test fails on the code before its fix.

use std::path::{Path, PathBuf};

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_tests::harness::{Client, call, connect_in_process, proxy_server, spec, text};
use openapi_mcp_tests::upstream::{Recorded, Reply, Upstream};
use serde_json::{Value, json};

/// An upstream answering 200 `{}` to everything, and a client of the proxy for `spec_path`
/// pointed at it (`/api`), with credentials `creds`.
async fn serve(spec_path: &Path, creds: &[(&str, &str)]) -> (Upstream, Client) {
    let up = Upstream::start().await;
    up.respond(|_| Reply::json(200, json!({})));
    let server = proxy_server(spec_path, &up.url("/api"), ToolOptions::default(), creds).await;
    (up, connect_in_process(server).await)
}

/// A spec written inline, in a directory of its own.
fn write_spec(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("omcp-fidelity-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Calls `tool` and expects a success; returns the one request the upstream got.
async fn sent(up: &Upstream, client: &Client, tool: &str, args: Value) -> Recorded {
    up.clear();
    let r = call(client, tool, args.clone()).await;
    assert_eq!(r.is_error, Some(false), "{tool} {args}: {}", text(&r));
    let reqs = up.requests();
    assert_eq!(reqs.len(), 1, "{tool} {args}");
    reqs[0].clone()
}

/// Calls `tool` and expects a tool error with nothing sent; returns the error text.
async fn refused(up: &Upstream, client: &Client, tool: &str, args: Value) -> String {
    up.clear();
    let r = call(client, tool, args.clone()).await;
    let t = text(&r);
    assert_eq!(r.is_error, Some(true), "{tool} {args}: {t}");
    assert!(
        up.requests().is_empty(),
        "{tool} {args}: something was sent"
    );
    t
}

/// (a) `null` for an optional argument or member whose schema does not allow it means "not set":
/// left out at the top level, in the query and headers, and inside the JSON body (through `$ref`,
/// `allOf`, array items and a nullable object). Nullable ones are sent as `null`; a required
/// non-nullable one is a validation error naming its path.
#[tokio::test]
async fn unset_nulls_are_left_out_and_nullable_ones_are_sent() {
    let (up, client) = serve(&spec("nulls.yaml"), &[]).await;
    let req = sent(
        &up,
        &client,
        "nulls_update_contact",
        json!({
            "id": "c1", "notify": null, "X-Request-Tag": null,
            "name": "Ann", "nickname": null, "manager": null, "phone": null, "extra": null,
            "address": {"city": "Paris", "street": null, "country": null, "zip": null,
                        "geo": {"lat": 1.5, "label": null}},
            "tags": [{"key": "k", "value": null}],
            "labels": {"team": "a"}
        }),
    )
    .await;
    assert_eq!(
        (req.method.as_str(), req.target.as_str()),
        ("PATCH", "/api/contacts/c1")
    );
    assert_eq!(req.header("x-request-tag"), None);
    assert_eq!(
        req.body_text(),
        r#"{"name":"Ann","manager":null,"phone":null,"address":{"city":"Paris","zip":null,"geo":{"lat":1.5}},"tags":[{"key":"k"}],"labels":{"team":"a"},"extra":null}"#
    );

    // Required and not nullable: a validation error that names the argument path.
    let t = refused(
        &up,
        &client,
        "nulls_update_contact",
        json!({"id": "c1", "name": null, "manager": "Bo"}),
    )
    .await;
    assert!(t.contains("`name`: null is not of type \"string\""), "{t}");
    let t = refused(
        &up,
        &client,
        "nulls_update_contact",
        json!({"id": "c1", "name": "Ann", "manager": null, "address": {"city": null}}),
    )
    .await;
    assert!(t.contains("`address.city`"), "{t}");

    // An optional whole body given as null: no body at all.
    let req = sent(&up, &client, "nulls_create_note", json!({"body": null})).await;
    assert!(req.body.is_empty(), "{}", req.body_text());
    assert_eq!(req.header("content-type"), None);
}

/// (a), the other dialects: 3.1 type arrays with `"null"` and Swagger 2.0 `x-nullable`.
#[tokio::test]
async fn nullable_in_3_1_and_swagger_2_are_sent_as_null() {
    let (up, client) = serve(&spec("typed-values.yaml"), &[]).await;
    let req = sent(
        &up,
        &client,
        "typed_update_item",
        json!({"id": "i1", "note": null, "ratio": null, "price": null, "description": null,
               "owner": null, "meta": {"color": null, "size": null}, "scores": [1.5, null]}),
    )
    .await;
    assert_eq!(req.target, "/api/items/i1");
    assert_eq!(
        req.body_text(),
        r#"{"description":null,"owner":null,"meta":{"size":null},"scores":[1.5,null]}"#
    );

    let path = write_spec(
        "nullable2.yaml",
        r#"swagger: "2.0"
info: {title: Legacy, version: "1"}
paths:
  /things:
    post:
      operationId: createThing
      consumes: [application/json]
      parameters:
        - in: body
          name: thing
          required: true
          schema:
            type: object
            properties:
              name: {type: string}
              parent: {type: string, x-nullable: true}
      responses: {"204": {description: ok}}
"#,
    );
    let (up, client) = serve(&path, &[]).await;
    let req = sent(
        &up,
        &client,
        "legacy_create_thing",
        json!({"name": null, "parent": null}),
    )
    .await;
    assert_eq!(req.body_text(), r#"{"parent":null}"#);
}

/// (b) `readOnly` properties declared in `allOf` members or behind `$ref`s are not arguments and
/// not required: an order's lines go without the read-only `id` their schema's sibling member
/// requires, and the read-only `stamp` is refused as an unknown argument.
#[tokio::test]
async fn nested_read_only_properties_are_neither_required_nor_sent() {
    let (up, client) = serve(&spec("read-only-nested.yaml"), &[]).await;
    let req = sent(
        &up,
        &client,
        "read_create_order",
        json!({"lines": [{"sku": "A", "qty": 2}], "note": "rush"}),
    )
    .await;
    assert_eq!(
        (req.method.as_str(), req.target.as_str()),
        ("POST", "/api/orders")
    );
    assert_eq!(
        req.body_text(),
        r#"{"lines":[{"sku":"A","qty":2}],"note":"rush"}"#
    );
    let req = sent(
        &up,
        &client,
        "read_import_orders",
        json!({"body": [{"lines": [{"sku": "B"}]}]}),
    )
    .await;
    assert_eq!(req.body_text(), r#"[{"lines":[{"sku":"B"}]}]"#);
    for ro in ["stamp", "id", "createdAt"] {
        let t = refused(
            &up,
            &client,
            "read_create_order",
            json!({"lines": [], ro: "x"}),
        )
        .await;
        assert!(t.contains(&format!("unknown argument `{ro}`")), "{t}");
    }
}

/// (c) A required non-JSON request body is a required argument: without it the call is refused
/// and nothing is sent; with it the bytes go out with their media type (an upload decoded from
/// base64, a `*/*` binary body too, CSV and text as given, a multipart upload with its file).
#[tokio::test]
async fn required_non_json_bodies_are_required_and_sent_as_their_media_type() {
    let (up, client) = serve(&spec("required-bodies.yaml"), &[]).await;
    for tool in [
        "required_upload_file",
        "required_put_blob",
        "required_import_csv",
        "required_import_text",
    ] {
        let t = refused(&up, &client, tool, json!({})).await;
        assert!(t.contains("\"body\" is a required property"), "{tool}: {t}");
    }
    let t = refused(
        &up,
        &client,
        "required_add_attachment",
        json!({"caption": "c"}),
    )
    .await;
    assert!(t.contains("\"file\" is a required property"), "{t}");

    let req = sent(
        &up,
        &client,
        "required_upload_file",
        json!({"body": "aGVsbG8="}),
    )
    .await;
    assert_eq!(req.header("content-type"), Some("application/octet-stream"));
    assert_eq!(&req.body[..], b"hello");
    let req = sent(
        &up,
        &client,
        "required_put_blob",
        json!({"body": "aGVsbG8="}),
    )
    .await;
    assert_eq!(req.method, "PUT");
    assert_eq!(req.header("content-type"), Some("application/octet-stream"));
    assert_eq!(&req.body[..], b"hello");
    let req = sent(
        &up,
        &client,
        "required_import_csv",
        json!({"body": "a,b\n1,2\n"}),
    )
    .await;
    assert_eq!(req.header("content-type"), Some("text/csv"));
    assert_eq!(req.body_text(), "a,b\n1,2\n");
    let req = sent(
        &up,
        &client,
        "required_import_text",
        json!({"body": "line"}),
    )
    .await;
    assert_eq!(req.header("content-type"), Some("text/plain"));
    assert_eq!(req.body_text(), "line");
    let req = sent(
        &up,
        &client,
        "required_add_attachment",
        json!({"file": "aGVsbG8=", "caption": "hi"}),
    )
    .await;
    let ct = req.header("content-type").unwrap_or_default().to_string();
    let boundary = ct
        .strip_prefix("multipart/form-data; boundary=")
        .unwrap_or_else(|| panic!("{ct}"));
    assert_eq!(
        req.body_text(),
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\nhello\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nhi\r\n--{boundary}--\r\n"
        )
    );
    // An optional body may be left out: no body is sent.
    let req = sent(&up, &client, "required_add_note", json!({})).await;
    assert!(req.body.is_empty());

    // Swagger 2.0: a required octet-stream `in: body` is base64 of the bytes, a required
    // `formData` file is required.
    let (up, client) = serve(&spec("required-bodies-swagger2.yaml"), &[]).await;
    let t = refused(&up, &client, "required_upload_file", json!({})).await;
    assert!(t.contains("\"body\" is a required property"), "{t}");
    let req = sent(
        &up,
        &client,
        "required_upload_file",
        json!({"body": "aGVsbG8="}),
    )
    .await;
    assert_eq!(req.header("content-type"), Some("application/octet-stream"));
    assert_eq!(&req.body[..], b"hello");
    let t = refused(&up, &client, "required_import_csv", json!({})).await;
    assert!(t.contains("\"body\" is a required property"), "{t}");
    let t = refused(&up, &client, "required_add_attachment", json!({})).await;
    assert!(t.contains("\"file\" is a required property"), "{t}");
}

/// (d) Required object and array query parameters are always in the query, in their style;
/// an empty one (`{}`, `[]`, an object of unset members) would be the empty value `name=`,
/// which these parameters do not allow (#36): it is refused, naming each. Form body arrays
/// follow the encoding object (default exploded), objects and arrays of objects without a
/// style go deepObject-style.
#[tokio::test]
async fn object_query_parameters_and_form_fields_are_encoded_for_decoders() {
    let (up, client) = serve(&spec("query-and-form-encoding.yaml"), &[]).await;
    let t = refused(
        &up,
        &client,
        "encodings_search",
        json!({"page": {}, "range": {}, "ids": []}),
    )
    .await;
    assert!(t.contains("\"filter\" is a required property"), "{t}");
    for arg in ["page", "range", "ids"] {
        assert!(
            t.contains(&format!(
                "argument `{arg}` (query `{arg}`): is empty, and the API allows no empty value"
            )),
            "{t}"
        );
    }
    let req = sent(
        &up,
        &client,
        "encodings_search",
        json!({
            "filter": {"status": "open", "owner": {"id": 7}},
            "page": {"n": 2, "per": 10},
            "range": {"from": 1, "to": 5},
            "ids": [1, 2],
            "sort": {"by": "date"}
        }),
    )
    .await;
    assert_eq!(
        req.target,
        "/api/search?filter[status]=open&filter[owner][id]=7&n=2&per=10&range=from,1,to,5&ids=1&ids=2&by=date"
    );
    // Empty values of required parameters are refused (an object of unset members too); optional
    // ones are not sent.
    for filter in [json!({}), json!({"status": null})] {
        let t = refused(
            &up,
            &client,
            "encodings_search",
            json!({"filter": filter, "page": {"n": 1}, "range": {"from": 1}, "ids": [1], "sort": {}}),
        )
        .await;
        assert!(
            t.contains("argument `filter` (query `filter`): ")
                && t.contains("the API allows no empty value")
                && !t.contains("argument `sort`"),
            "{t}"
        );
    }
    let req = sent(
        &up,
        &client,
        "encodings_search",
        json!({"filter": {"status": "open"}, "page": {"n": 1}, "range": {"from": 1}, "ids": [1], "sort": {}}),
    )
    .await;
    assert_eq!(
        req.target,
        "/api/search?filter[status]=open&n=1&range=from,1&ids=1"
    );

    let req = sent(
        &up,
        &client,
        "encodings_create_order",
        json!({
            "tag": ["a", "b c"], "ids": [1, 2], "filter": {"a": "x", "b": 1},
            "items": [{"sku": "s1", "qty": 1}, {"sku": "s2"}],
            "point": {"x": 1, "y": 2}, "meta": {"source": "web"}
        }),
    )
    .await;
    assert_eq!(
        req.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        req.body_text(),
        "tag=a&tag=b+c&ids=1,2&filter[a]=x&filter[b]=1&items[0][sku]=s1&items[0][qty]=1&items[1][sku]=s2\
         &x=1&y=2&meta=%7B%22source%22%3A%22web%22%7D"
    );
}

/// (e) A required parameter that is a credential: filled by the configured credential (never
/// the model); without one the call is a tool error naming the variable to set, and nothing is
/// sent. A per-call one (its scheme is not in the operation's security) is an argument the
/// configured credential replaces.
#[tokio::test]
async fn credential_parameters_are_filled_or_refused_never_left_out() {
    let (up, client) = serve(&spec("credential-params.yaml"), &[]).await;
    for (tool, var) in [
        ("credentials_list_reports", "OPENAPI_MCP_KEY"),
        ("credentials_get_me", "OPENAPI_MCP_TOKEN"),
        ("credentials_search_reports", "OPENAPI_MCP_QUERY_KEY"),
    ] {
        let t = refused(&up, &client, tool, json!({})).await;
        assert!(
            t.contains(&format!("set {var} ")) && t.ends_with("Nothing was sent."),
            "{tool}: {t}"
        );
    }
    let t = refused(&up, &client, "credentials_list_apps", json!({})).await;
    assert_eq!(
        t,
        "The API requires the header `X-App-Id`, which the credential of security scheme `app` fills, and none is configured: set OPENAPI_MCP_APP (or start the server with --auth SCHEME=VALUE), or pass it as the argument `X-App-Id`. Nothing was sent."
    );
    let t = refused(&up, &client, "credentials_get_status", json!({})).await;
    assert_eq!(
        t,
        "The API requires the header `Authorization`: pass it as the argument `Authorization`. Nothing was sent."
    );
    // Per-call values given as arguments are sent.
    let req = sent(
        &up,
        &client,
        "credentials_list_apps",
        json!({"X-App-Id": "app-7"}),
    )
    .await;
    assert_eq!(req.header("x-app-id"), Some("app-7"));
    let req = sent(
        &up,
        &client,
        "credentials_get_status",
        json!({"Authorization": "Token abc"}),
    )
    .await;
    assert_eq!(req.header("authorization"), Some("Token abc"));

    // Configured: the credentials fill the parameters, the model's value never goes out.
    let (up, client) = serve(
        &spec("credential-params.yaml"),
        &[
            ("key", "K-1"),
            ("token", "T-1"),
            ("queryKey", "Q-1"),
            ("app", "A-1"),
        ],
    )
    .await;
    let req = sent(
        &up,
        &client,
        "credentials_list_reports",
        json!({"limit": 2}),
    )
    .await;
    assert_eq!(req.target, "/api/reports?limit=2");
    assert_eq!(req.header("x-api-key"), Some("K-1"));
    let req = sent(&up, &client, "credentials_get_me", json!({})).await;
    assert_eq!(req.header("authorization"), Some("Bearer T-1"));
    let req = sent(
        &up,
        &client,
        "credentials_search_reports",
        json!({"q": "x"}),
    )
    .await;
    assert_eq!(req.target, "/api/search?q=x&api_key=Q-1");
    let req = sent(
        &up,
        &client,
        "credentials_list_apps",
        json!({"X-App-Id": "model"}),
    )
    .await;
    assert_eq!(req.header("x-app-id"), Some("A-1"));
    assert_eq!(req.header("x-api-key"), Some("K-1"));
    let req = sent(&up, &client, "credentials_list_apps", json!({})).await;
    assert_eq!(req.header("x-app-id"), Some("A-1"));
}

/// An empty string for a query parameter is a value only when the spec allows it
/// (`allowEmptyValue: true`, or `""` in the schema's `enum`): OpenAPI's default is false, and
/// models pass `""` for "no cursor". Otherwise an optional one is not sent (as `null` is not),
/// and a required one is refused with the argument named. Both dialects.
#[tokio::test]
async fn empty_query_values_are_sent_only_where_the_spec_allows_them() {
    let path = write_spec(
        "empty-query.yaml",
        r##"openapi: 3.0.3
info: {title: Empty, version: "1"}
paths:
  /subscribers:
    get:
      operationId: listSubscribers
      parameters:
        - {name: nextToken, in: query, schema: {type: string, pattern: "^.*$"}}
        - {name: flag, in: query, allowEmptyValue: true, schema: {type: string}}
        - {name: sort, in: query, schema: {$ref: "#/components/schemas/Sort"}}
        - {name: q, in: query, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
components:
  schemas:
    Sort: {type: string, enum: ["", asc, desc]}
"##,
    );
    let (up, client) = serve(&path, &[]).await;
    let req = sent(
        &up,
        &client,
        "empty_list_subscribers",
        json!({"nextToken": "", "flag": "", "sort": "", "q": "x"}),
    )
    .await;
    assert_eq!(req.target, "/api/subscribers?flag=&sort=&q=x");
    let req = sent(
        &up,
        &client,
        "empty_list_subscribers",
        json!({"nextToken": "t1", "q": "x"}),
    )
    .await;
    assert_eq!(req.target, "/api/subscribers?nextToken=t1&q=x");
    let t = refused(&up, &client, "empty_list_subscribers", json!({"q": ""})).await;
    assert!(
        t.contains("argument `q` (query `q`): is empty") && t.contains("no empty value"),
        "{t}"
    );

    let path = write_spec(
        "empty-query2.yaml",
        r#"swagger: "2.0"
info: {title: Legacy, version: "1"}
paths:
  /things:
    get:
      operationId: listThings
      parameters:
        - {name: cursor, in: query, type: string}
        - {name: mark, in: query, type: string, allowEmptyValue: true}
        - {name: order, in: query, type: string, enum: ["", up]}
      responses: {"200": {description: ok}}
"#,
    );
    let (up, client) = serve(&path, &[]).await;
    let req = sent(
        &up,
        &client,
        "legacy_list_things",
        json!({"cursor": "", "mark": "", "order": ""}),
    )
    .await;
    assert_eq!(req.target, "/api/things?mark=&order=");
}

/// #36 items 13 and 14 on one spec: empty items and members of query values, empty required
/// bodies, and date-time parameters whose format sits in `allOf`, `oneOf` or an object member.
const EMPTY_VALUES_SPEC: &str = r##"openapi: 3.0.3
info: {title: Fid, version: "1"}
paths:
  /items:
    get:
      operationId: listItems
      parameters:
        - {name: ids, in: query, schema: {type: array, items: {type: string, minLength: 1}}}
        - {name: tags, in: query, style: pipeDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - name: filter
          in: query
          style: deepObject
          explode: true
          schema:
            type: object
            properties: {name: {type: string}, owner: {type: string}, after: {$ref: "#/components/schemas/Stamp"}}
        - {name: nextToken, in: query, schema: {type: string, minLength: 1}}
        - {name: since, in: query, schema: {allOf: [{$ref: "#/components/schemas/Stamp"}], description: Lower bound}}
        - {name: until, in: query, schema: {oneOf: [{$ref: "#/components/schemas/Stamp"}, {type: integer}]}}
        - {name: q, in: query, required: true, schema: {type: array, items: {type: string}}}
      responses: {"200": {description: ok}}
  /blobs/{id}:
    put:
      operationId: putBlob
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      requestBody:
        required: true
        content: {application/octet-stream: {schema: {type: string, format: binary}}}
      responses: {"200": {description: ok}}
  /tokens:
    post:
      operationId: postToken
      requestBody:
        required: true
        content: {application/jwt: {schema: {type: string}}}
      responses: {"200": {description: ok}}
  /notes:
    put:
      operationId: putNote
      requestBody:
        required: true
        content: {text/plain: {schema: {type: string, minLength: 0}}}
      responses: {"200": {description: ok}}
components:
  schemas:
    Stamp:
      type: string
      format: date-time
      pattern: '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$'
"##;

/// #36 item 13: an empty item of an array query value, or an empty member of an object one, is
/// not sent where the spec allows no empty value (`ids=a&ids=` went out for `["a", ""]`), in
/// every style; a value left with nothing is not sent when optional and refused when required.
/// What is not sent is not validated (an optional `nextToken: ""` under `minLength: 1`, and the
/// `""` item under the items' `minLength: 1`, were refused though never sent).
#[tokio::test]
async fn empty_items_and_members_of_query_values_are_not_sent() {
    let path = write_spec("empty-values.yaml", EMPTY_VALUES_SPEC);
    let (up, client) = serve(&path, &[]).await;
    let req = sent(
        &up,
        &client,
        "fid_list_items",
        json!({"ids": ["a", "", "b"], "tags": ["", "x"], "filter": {"name": "", "owner": "me"},
               "nextToken": "", "q": ["z", ""]}),
    )
    .await;
    assert_eq!(
        req.target,
        "/api/items?ids=a&ids=b&tags=x&filter[owner]=me&q=z"
    );
    let req = sent(
        &up,
        &client,
        "fid_list_items",
        json!({"ids": ["", ""], "filter": {"name": ""}, "q": ["z"]}),
    )
    .await;
    assert_eq!(req.target, "/api/items?q=z");
    for q in [json!([]), json!([""]), json!("")] {
        let t = refused(&up, &client, "fid_list_items", json!({ "q": q })).await;
        assert!(
            t.contains("argument `q` (query `q`): ") && t.contains("no empty value"),
            "{q}: {t}"
        );
    }
}

/// #36 item 14: a required request body given as an empty value (`""` for
/// `application/octet-stream` or `application/jwt`) was sent as an empty body; it is refused,
/// naming the argument, unless the body's schema says an empty body is a value.
#[tokio::test]
async fn empty_required_bodies_are_refused() {
    let path = write_spec("empty-values.yaml", EMPTY_VALUES_SPEC);
    let (up, client) = serve(&path, &[]).await;
    for (tool, args) in [
        ("fid_put_blob", json!({"id": "b1", "body": ""})),
        (
            "fid_put_blob",
            json!({"id": "b1", "body": "data:application/octet-stream;base64,"}),
        ),
        ("fid_post_token", json!({"body": ""})),
    ] {
        let t = refused(&up, &client, tool, args.clone()).await;
        assert!(
            t.contains("argument `body` (the request body, application/") && t.contains("is empty"),
            "{tool} {args}: {t}"
        );
    }
    let req = sent(
        &up,
        &client,
        "fid_put_blob",
        json!({"id": "b1", "body": "aGk="}),
    )
    .await;
    assert_eq!(&req.body[..], b"hi");
    // `minLength: 0` written out: the empty text is a value.
    let req = sent(&up, &client, "fid_put_note", json!({"body": ""})).await;
    assert_eq!(req.method, "PUT");
    assert!(req.body.is_empty());
}

/// #36 item 14: a `date-time` query value that matches the spec's own pattern but is not RFC 3339
/// (an offset of `-69:45`) went out when the format sat in an `allOf` (a `$ref` with a
/// description beside it), a `oneOf`, or an object parameter's member; it is refused.
#[tokio::test]
async fn date_time_parameters_in_compositions_and_members_are_asserted() {
    let path = write_spec("empty-values.yaml", EMPTY_VALUES_SPEC);
    let (up, client) = serve(&path, &[]).await;
    let bad = "2024-01-01T00:00:00-69:45";
    for (args, at) in [
        (json!({"q": ["z"], "since": bad}), "`since`: "),
        (json!({"q": ["z"], "until": bad}), "`until`: "),
        (
            json!({"q": ["z"], "filter": {"after": bad}}),
            "`filter.after`: ",
        ),
    ] {
        let t = refused(&up, &client, "fid_list_items", args).await;
        assert!(
            t.contains(at) && t.contains("is not a valid `date-time`"),
            "{t}"
        );
    }
    let req = sent(
        &up,
        &client,
        "fid_list_items",
        json!({"q": ["z"], "since": "2024-01-01T00:00:00-09:45"}),
    )
    .await;
    assert_eq!(
        req.target,
        "/api/items?since=2024-01-01T00%3A00%3A00-09%3A45&q=z"
    );
}

/// The same rules in dynamic mode (`call_operation`) and code mode (`api.*` in `execute`): they
/// validate and build through the same code as a tool call.
#[tokio::test]
async fn empty_values_are_handled_alike_in_dynamic_and_code_mode() {
    use openapi_mcp_runtime::modes::code::{CodeLimits, EXECUTE};
    use openapi_mcp_runtime::modes::dynamic::{CALL, ToolMode};
    use openapi_mcp_runtime::server::ServerOptions;
    use openapi_mcp_tests::harness::proxy_server_with;

    let path = write_spec("empty-values.yaml", EMPTY_VALUES_SPEC);
    for mode in [ToolMode::Dynamic, ToolMode::Code(CodeLimits::default())] {
        let code = matches!(mode, ToolMode::Code(_));
        let up = Upstream::start().await;
        up.respond(|_| Reply::json(200, json!({})));
        let server = proxy_server_with(
            &path,
            &up.url("/api"),
            ToolOptions::default(),
            &[],
            ServerOptions {
                mode,
                ..Default::default()
            },
        )
        .await;
        let client = connect_in_process(server).await;
        let invoke = |op: &str, args: Value| {
            if code {
                (
                    EXECUTE,
                    json!({ "code": format!("return await api.{op}({args});") }),
                )
            } else {
                (CALL, json!({"name": op, "arguments": args}))
            }
        };
        let (tool, args) = invoke(
            "fid_list_items",
            json!({"ids": ["a", ""], "nextToken": "", "q": ["z"]}),
        );
        up.clear();
        let r = call(&client, tool, args).await;
        assert_eq!(r.is_error, Some(false), "code={code}: {}", text(&r));
        let reqs = up.requests();
        assert_eq!(reqs.len(), 1, "code={code}");
        assert_eq!(reqs[0].target, "/api/items?ids=a&q=z", "code={code}");

        for (op, args) in [
            ("fid_list_items", json!({"q": [""]})),
            ("fid_post_token", json!({"body": ""})),
            (
                "fid_list_items",
                json!({"q": ["z"], "since": "2024-01-01T00:00:00-69:45"}),
            ),
        ] {
            let (tool, call_args) = invoke(op, args.clone());
            up.clear();
            let r = call(&client, tool, call_args).await;
            assert_eq!(
                r.is_error,
                Some(true),
                "code={code} {op} {args}: {}",
                text(&r)
            );
            assert!(up.requests().is_empty(), "code={code} {op} {args}: sent");
        }
    }
}
