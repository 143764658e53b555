use serde_json::json;

use super::*;
use crate::forward::BuiltRequest;
use crate::forward::auth::AuthParts;
use openapi_mcp_toolset::model::HttpMethod;
use openapi_mcp_toolset::model::{
    ArgLocation, BodyBinding, BodyKind, PartEncoding, PathStyle, QueryStyle, Route,
};
use serde_json::Map;
use url::Url;

const UA: &str = "openapi-mcp/test";

fn base() -> Url {
    Url::parse("https://api.example.com/v1/").expect("url")
}

fn route(path: &str, args: Vec<ArgBinding>) -> Route {
    Route {
        args,
        ..Route::new(HttpMethod::Get, path)
    }
}

fn arg(name: &str, location: ArgLocation) -> ArgBinding {
    ArgBinding {
        arg: name.into(),
        wire: name.into(),
        location,
        required: false,
        content_type: None,
    }
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

/// `build` with the test base URL, no static or forwarded headers, and `auth`.
fn build_with(r: &Route, a: Value, auth: &AuthParts) -> Result<BuiltRequest, ArgError> {
    let b = base();
    let ctx = BuildContext {
        base: &b,
        user_agent: UA,
        static_headers: &[],
        forwarded_headers: &[],
    };
    build(&ctx, r, &args(a), auth, Some("BOUNDARY"))
}

fn build_ok(r: &Route, a: Value) -> BuiltRequest {
    build_with(r, a, &AuthParts::default()).expect("build")
}

fn build_err(r: &Route, a: Value) -> ArgError {
    build_with(r, a, &AuthParts::default()).expect_err("should fail")
}

fn path_url(style: PathStyle, explode: bool, v: Value) -> String {
    let r = route(
        "/c/{color}",
        vec![arg("color", ArgLocation::Path { style, explode })],
    );
    build_ok(&r, json!({ "color": v }))
        .url
        .path()
        .trim_start_matches("/v1/c/")
        .to_string()
}

fn blue() -> Value {
    json!("blue")
}
fn arr() -> Value {
    json!(["blue", "black", "brown"])
}
fn obj() -> Value {
    json!({"R": 100, "G": 200, "B": 150})
}

#[test]
fn query_and_fragment_written_in_the_path_key() {
    let path = |style| ArgLocation::Path {
        style,
        explode: false,
    };
    let q = |name: &str| arg(name, ArgLocation::query(QueryStyle::Form, true));
    // AWS-style: the query in the key is sent as written, before the parameters.
    let r = route(
        "/{Bucket}?acl",
        vec![arg("Bucket", path(PathStyle::Simple)), q("max")],
    );
    let req = build_ok(&r, json!({"Bucket": "b 1", "max": 2}));
    assert_eq!(req.url.path(), "/v1/b%201");
    assert_eq!(req.url.query(), Some("acl&max=2"));
    // Variables in it are filled and encoded as query values.
    let r = route(
        "/x?list-type=2&prefix={p}",
        vec![arg("p", path(PathStyle::Simple))],
    );
    let req = build_ok(&r, json!({"p": "a&b"}));
    assert_eq!(req.url.query(), Some("list-type=2&prefix=a%26b"));
    // A fragment only tells operations apart: it is not sent, a `?` after it included.
    let r = route("/cookies#form?x=1", vec![q("a")]);
    let req = build_ok(&r, json!({"a": "1"}));
    assert_eq!(req.url.path(), "/v1/cookies");
    assert_eq!(req.url.query(), Some("a=1"));
    assert_eq!(req.url.fragment(), None);
    assert_eq!(
        openapi_mcp_toolset::media::path_template_names("/a/{x}#{y}"),
        vec!["x".to_string()]
    );
}

#[test]
fn path_styles_spec_table() {
    use PathStyle::*;
    let cases: Vec<(PathStyle, bool, Value, &str)> = vec![
        (Simple, false, blue(), "blue"),
        (Simple, false, arr(), "blue,black,brown"),
        (Simple, false, obj(), "R,100,G,200,B,150"),
        (Simple, true, blue(), "blue"),
        (Simple, true, arr(), "blue,black,brown"),
        (Simple, true, obj(), "R=100,G=200,B=150"),
        (Label, false, blue(), ".blue"),
        (Label, false, arr(), ".blue,black,brown"),
        (Label, false, obj(), ".R,100,G,200,B,150"),
        (Label, true, blue(), ".blue"),
        (Label, true, arr(), ".blue.black.brown"),
        (Label, true, obj(), ".R=100.G=200.B=150"),
        (Matrix, false, blue(), ";color=blue"),
        (Matrix, false, arr(), ";color=blue,black,brown"),
        (Matrix, false, obj(), ";color=R,100,G,200,B,150"),
        (Matrix, true, blue(), ";color=blue"),
        (Matrix, true, arr(), ";color=blue;color=black;color=brown"),
        (Matrix, true, obj(), ";R=100;G=200;B=150"),
        (Matrix, false, Value::Null, ";color"),
        (Label, false, json!("a.b"), ".a.b"),
        (Simple, false, json!(5), "5"),
        (Simple, false, json!(2.5), "2.5"),
        (Simple, false, json!(true), "true"),
    ];
    for (style, explode, v, want) in cases {
        assert_eq!(
            path_url(style, explode, v.clone()),
            want,
            "{style:?} explode={explode} {v}"
        );
    }
    // The brief's id examples.
    assert_eq!(path_url(Matrix, false, json!(5)), ";color=5");
    assert_eq!(path_url(Matrix, false, json!([3, 4])), ";color=3,4");
    assert_eq!(path_url(Matrix, true, json!([3, 4])), ";color=3;color=4");
    assert_eq!(
        path_url(Matrix, true, json!({"role": "admin"})),
        ";role=admin"
    );
}

#[test]
fn path_hostile_values() {
    let simple = ArgLocation::Path {
        style: PathStyle::Simple,
        explode: false,
    };
    let r = route("/files/{name}/meta", vec![arg("name", simple.clone())]);
    let cases = [
        ("../etc", "/v1/files/..%2Fetc/meta"),
        ("a/b?c#d", "/v1/files/a%2Fb%3Fc%23d/meta"),
        ("%2e%2e", "/v1/files/%252e%252e/meta"),
        ("//evil.com", "/v1/files/%2F%2Fevil.com/meta"),
        ("a b%", "/v1/files/a%20b%25/meta"),
        ("...", "/v1/files/.../meta"),
        ("é", "/v1/files/%C3%A9/meta"),
    ];
    for (v, want) in cases {
        let req = build_ok(&r, json!({ "name": v }));
        assert_eq!(req.url.path(), want, "{v}");
        assert_eq!(req.url.as_str(), format!("https://api.example.com{want}"));
        assert_eq!(req.url.host_str(), Some("api.example.com"));
    }
    // `.` and `..` (as whole segments) are resolved by URL parsers even when percent-encoded
    // (WHATWG treats `%2E%2E` as `..`), so they are refused instead of silently rewritten.
    assert_eq!(
        Url::parse("https://h/v1/files/%2E%2E/meta")
            .expect("url")
            .path(),
        "/v1/meta"
    );
    for v in ["..", ".", ""] {
        let e = build_err(&r, json!({ "name": v }));
        assert_eq!(e.arg.as_deref(), Some("name"), "{v}: {e}");
    }
    // Label style: the value `.` would make the segment `..`.
    let r2 = route(
        "/x/{n}",
        vec![arg(
            "n",
            ArgLocation::Path {
                style: PathStyle::Label,
                explode: false,
            },
        )],
    );
    assert!(
        build_err(&r2, json!({"n": "."}))
            .message
            .contains("dot segment")
    );
    assert!(
        build_err(&r2, json!({"n": null}))
            .message
            .contains("dot segment")
    );
    // Missing path argument: an error, no panic.
    let e = build_err(&r, json!({}));
    assert_eq!(e.arg.as_deref(), Some("name"));
    // A template variable without a binding.
    let r3 = route("/x/{nope}", vec![]);
    assert!(build_err(&r3, json!({})).message.contains("{nope}"));
    // Dots inside a larger segment are fine.
    let r4 = route("/files/{name}.json", vec![arg("name", simple)]);
    assert_eq!(
        build_ok(&r4, json!({"name": ".."})).url.path(),
        "/v1/files/...json"
    );
}

#[test]
fn oversized_urls_and_deep_values_are_refused_naming_the_argument() {
    let simple = ArgLocation::Path {
        style: PathStyle::Simple,
        explode: false,
    };
    let q = ArgLocation::query(QueryStyle::Form, true);
    let r = route(
        "/files/{name}",
        vec![
            arg("name", simple),
            arg("q", q),
            arg("body", ArgLocation::Body),
        ],
    );
    // Up to http::Uri's limit: sent.
    let fits = MAX_URL_BYTES - "https://api.example.com/v1/files/".len();
    let req = build_ok(&r, json!({ "name": "a".repeat(fits) }));
    assert_eq!(req.url.as_str().len(), MAX_URL_BYTES);
    let e = build_err(&r, json!({ "name": "a".repeat(fits + 1) }));
    assert_eq!(e.arg.as_deref(), Some("name"));
    assert_eq!(
        e.message,
        "argument `name` (path `name`): makes the request URL 65535 bytes long, more than the 65534 bytes an HTTP request target can hold; refused"
    );
    // Integral floats are written as integers in the URL.
    let req = build_ok(&r, json!({"name": 5.0, "q": -0.0}));
    assert_eq!(req.url.as_str(), "https://api.example.com/v1/files/5?q=0");
    let req = build_ok(&r, json!({"name": 2.5, "q": 1e300}));
    assert_eq!(
        req.url.as_str(),
        "https://api.example.com/v1/files/2.5?q=1e%2B300"
    );
    let e = build_err(&r, json!({"name": "x", "q": "é".repeat(40_000)}));
    assert_eq!(e.arg.as_deref(), Some("q"), "{e}");
    // Nested beyond MAX_DEPTH: refused before any serializer recurses.
    let mut deep = json!(1);
    for _ in 0..=openapi_mcp_toolset::validate::MAX_DEPTH {
        deep = Value::Array(vec![deep]);
    }
    let e = build_err(&r, json!({"name": "x", "body": deep}));
    assert_eq!(
        e.message,
        "argument `body` (body `body`): is nested more than 128 levels deep; refused"
    );
}

#[test]
fn base_url_and_server_override() {
    let r = route("/pets", vec![]);
    assert_eq!(
        build_ok(&r, json!({})).url.as_str(),
        "https://api.example.com/v1/pets"
    );
    let b = Url::parse("http://127.0.0.1:8080").expect("url");
    let ctx = BuildContext {
        base: &b,
        user_agent: UA,
        static_headers: &[],
        forwarded_headers: &[],
    };
    let req = build(&ctx, &r, &Map::new(), &AuthParts::default(), None).expect("build");
    assert_eq!(req.url.as_str(), "http://127.0.0.1:8080/pets");
    // Base query parameters are kept.
    let b = Url::parse("https://h/api?api-version=2").expect("url");
    let ctx = BuildContext {
        base: &b,
        user_agent: UA,
        static_headers: &[],
        forwarded_headers: &[],
    };
    let r2 = route(
        "/x",
        vec![arg("q", ArgLocation::query(QueryStyle::Form, true))],
    );
    let req = build(
        &ctx,
        &r2,
        &args(json!({"q": 1})),
        &AuthParts::default(),
        None,
    )
    .expect("build");
    assert_eq!(req.url.as_str(), "https://h/api/x?api-version=2&q=1");
    // Operation server: absolute, and relative to the base URL.
    let mut r3 = route("/up", vec![]);
    r3.server = Some("https://files.example.com/u".into());
    assert_eq!(
        build_ok(&r3, json!({})).url.as_str(),
        "https://files.example.com/u/up"
    );
    r3.server = Some("/v2".into());
    assert_eq!(
        build_ok(&r3, json!({})).url.as_str(),
        "https://api.example.com/v2/up"
    );
    // A server variable whose default is a placeholder (DigitalOcean's agent inference:
    // `https://{agent_url}`, default `{your-agent-url}`): the URL standard accepts the host,
    // the HTTP stack does not; refused before sending, naming the server URL.
    r3.server = Some("https://{your-agent-url}".into());
    let e = build_err(&r3, json!({}));
    assert!(e.arg.is_none());
    assert!(
        e.message
            .contains("`https://{your-agent-url}` is not a valid HTTP URL"),
        "{}",
        e.message
    );
    r3.server = Some("https://".into());
    assert!(
        build_err(&r3, json!({}))
            .message
            .contains("`https://` is invalid")
    );
}

fn query_of(style: QueryStyle, explode: bool, v: Value) -> String {
    query_of_allowing(style, explode, false, v)
}

fn query_of_allowing(
    style: QueryStyle,
    explode: bool,
    allow_empty_value: bool,
    v: Value,
) -> String {
    let r = route(
        "/q",
        vec![arg(
            "color",
            ArgLocation::Query {
                style,
                explode,
                allow_reserved: false,
                allow_empty_value,
            },
        )],
    );
    build_ok(&r, json!({ "color": v }))
        .url
        .query()
        .unwrap_or("")
        .to_string()
}

#[test]
fn query_styles_spec_table() {
    use QueryStyle::*;
    let cases: Vec<(QueryStyle, bool, Value, &str)> = vec![
        // The table's "empty" column is for parameters that allow empty values (below);
        // others leave `""` out, as OpenAPI's `allowEmptyValue` defaults to false.
        (Form, false, json!(""), ""),
        (Form, true, json!(""), ""),
        (Form, false, blue(), "color=blue"),
        (Form, false, arr(), "color=blue,black,brown"),
        (Form, false, obj(), "color=R,100,G,200,B,150"),
        (Form, true, blue(), "color=blue"),
        (Form, true, arr(), "color=blue&color=black&color=brown"),
        (Form, true, obj(), "R=100&G=200&B=150"),
        (SpaceDelimited, false, arr(), "color=blue%20black%20brown"),
        (
            SpaceDelimited,
            false,
            obj(),
            "color=R%20100%20G%20200%20B%20150",
        ),
        (PipeDelimited, false, arr(), "color=blue|black|brown"),
        (PipeDelimited, false, obj(), "color=R|100|G|200|B|150"),
        (
            DeepObject,
            true,
            obj(),
            "color[R]=100&color[G]=200&color[B]=150",
        ),
        (
            DeepObject,
            true,
            json!({"a": {"b": "x"}, "c": [1, 2]}),
            "color[a][b]=x&color[c][]=1&color[c][]=2",
        ),
        (
            DeepObject,
            true,
            json!({"l": [{"k": 1}, {"k": 2}]}),
            "color[l][0][k]=1&color[l][1][k]=2",
        ),
        (DeepObject, true, json!(["a", "b"]), "color[]=a&color[]=b"),
        (
            Form,
            true,
            json!([{"k": "v"}]),
            "color=%5B%7B%22k%22%3A%22v%22%7D%5D",
        ),
        (DeepObject, true, json!([{"k": "v"}]), "color[0][k]=v"),
        (Form, true, json!([3, 4]), "color=3&color=4"),
        (Form, false, json!([3, 4]), "color=3,4"),
        (SpaceDelimited, false, json!([3, 4]), "color=3%204"),
        (PipeDelimited, false, json!([3, 4]), "color=3|4"),
        (
            Form,
            true,
            json!({"role": "admin", "name": "x"}),
            "role=admin&name=x",
        ),
        (Form, false, json!({"role": "admin"}), "color=role,admin"),
        (
            DeepObject,
            true,
            json!({"role": "admin"}),
            "color[role]=admin",
        ),
        (Form, true, json!(true), "color=true"),
        (Form, true, json!(null), ""),
        (Form, true, json!([]), ""),
    ];
    for (style, explode, v, want) in cases {
        assert_eq!(
            query_of(style, explode, v.clone()),
            want,
            "{style:?} explode={explode} {v}"
        );
    }
    for explode in [false, true] {
        assert_eq!(query_of_allowing(Form, explode, true, json!("")), "color=");
    }
}

#[test]
fn query_encoding() {
    use QueryStyle::*;
    assert_eq!(
        query_of(Form, true, json!("a b&c=d/é+%")),
        "color=a%20b%26c%3Dd%2F%C3%A9%2B%25"
    );
    // Values containing the delimiter are encoded, delimiters are not.
    assert_eq!(
        query_of(Form, false, json!(["a,b", "c|d"])),
        "color=a%2Cb,c%7Cd"
    );
    assert_eq!(
        query_of(PipeDelimited, false, json!(["a|b", "c"])),
        "color=a%7Cb|c"
    );
    // allowReserved: reserved characters pass (except `#[]` and the form delimiters `&=+`),
    // valid %XX triples pass.
    let r = route(
        "/q",
        vec![arg(
            "p",
            ArgLocation::Query {
                style: Form,
                explode: true,
                allow_reserved: true,
                allow_empty_value: false,
            },
        )],
    );
    let req = build_ok(&r, json!({"p": "a/b?c:d@e!$&()*+,;=[x]#f %41 %zz"}));
    assert_eq!(
        req.url.query(),
        Some("p=a/b?c:d@e!$%26()*%2B,;%3D%5Bx%5D%23f%20%41%20%25zz")
    );
    // content: application/json on a query parameter.
    let mut a = arg("filter", ArgLocation::query(Form, true));
    a.content_type = Some("application/json".into());
    let r = route("/q", vec![a]);
    let req = build_ok(&r, json!({"filter": {"a": [1, "x y"]}}));
    assert_eq!(
        req.url.query(),
        Some("filter=%7B%22a%22%3A%5B1%2C%22x%20y%22%5D%7D")
    );
    // Parameter names are encoded too.
    let r = route("/q", vec![arg("a b", ArgLocation::query(Form, true))]);
    assert_eq!(build_ok(&r, json!({"a b": 1})).url.query(), Some("a%20b=1"));
}

#[test]
fn headers_and_cookies() {
    let r = route(
        "/h",
        vec![
            arg("X-Color", ArgLocation::Header { explode: false }),
            arg("X-Arr", ArgLocation::Header { explode: false }),
            arg("X-Obj", ArgLocation::Header { explode: false }),
            arg("X-ObjE", ArgLocation::Header { explode: true }),
            arg("X-Num", ArgLocation::Header { explode: false }),
            arg("X-Null", ArgLocation::Header { explode: false }),
        ],
    );
    let req = build_ok(
        &r,
        json!({"X-Color": "blue", "X-Arr": arr(), "X-Obj": obj(), "X-ObjE": obj(), "X-Num": 1.5, "X-Null": null}),
    );
    assert_eq!(
        req.headers,
        vec![
            ("X-Color".to_string(), "blue".to_string()),
            ("X-Arr".to_string(), "blue,black,brown".to_string()),
            ("X-Obj".to_string(), "R,100,G,200,B,150".to_string()),
            ("X-ObjE".to_string(), "R=100,G=200,B=150".to_string()),
            ("X-Num".to_string(), "1.5".to_string()),
            ("User-Agent".to_string(), UA.to_string()),
        ]
    );
    for bad in ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u{0}b", "a\u{7f}"] {
        let e = build_err(&r, json!({ "X-Color": bad }));
        assert_eq!(e.arg.as_deref(), Some("X-Color"));
        assert!(e.message.contains("X-Color"), "{e}");
    }
    assert!(
        build_err(&r, json!({"X-Arr": ["ok", "b\nad"]}))
            .message
            .contains("X-Arr")
    );
    // A tab is allowed.
    assert!(
        build_ok(&r, json!({"X-Color": "a\tb"}))
            .headers
            .contains(&("X-Color".into(), "a\tb".into()))
    );

    let r = route(
        "/c",
        vec![
            arg("session", ArgLocation::Cookie { explode: true }),
            arg("ids", ArgLocation::Cookie { explode: false }),
            arg("many", ArgLocation::Cookie { explode: true }),
        ],
    );
    let req = build_ok(
        &r,
        json!({"session": "a b;c,d\"e%", "ids": [3, 4], "many": ["x", "y"]}),
    );
    assert_eq!(
        req.headers.last(),
        Some(&(
            "Cookie".to_string(),
            "session=a%20b%3Bc%2Cd%22e%25; ids=3,4; many=x; many=y".to_string()
        ))
    );
    let e = build_err(&r, json!({"session": "a\r\nSet-Cookie: x"}));
    assert_eq!(e.arg.as_deref(), Some("session"));
}

/// #23 finding 21: a tool set from elsewhere (an older api.json) that binds `Host` or
/// `Transfer-Encoding` to an argument still cannot set them.
#[test]
fn reserved_headers_are_refused_as_arguments() {
    for name in [
        "Host",
        "transfer-encoding",
        "Proxy-Authorization",
        "Connection",
    ] {
        let r = route(
            "/a",
            vec![arg(name, ArgLocation::Header { explode: false })],
        );
        let e = build_err(&r, json!({ name: "evil.example" }));
        assert_eq!(e.arg.as_deref(), Some(name));
        assert!(e.message.contains("refused"), "{e}");
    }
}

#[test]
fn accept_user_agent_static_and_auth_headers() {
    let mut r = route(
        "/a",
        vec![arg("X-Trace", ArgLocation::Header { explode: false })],
    );
    r.accept = Some("application/json, text/plain".into());
    let b = base();
    let statics = vec![
        ("Authorization".to_string(), "Bearer static".to_string()),
        ("X-Tenant".to_string(), "t1".to_string()),
        ("X-Trace".to_string(), "static-trace".to_string()),
    ];
    let ctx = BuildContext {
        base: &b,
        user_agent: UA,
        static_headers: &statics,
        forwarded_headers: &[],
    };
    let auth = AuthParts {
        headers: vec![("Authorization".into(), "Bearer secret".into())],
        query: vec![("api key".into(), "k&1".into())],
        cookies: vec![("sid".into(), "s;1".into())],
        needs_token: vec![],
    };
    let req = build(&ctx, &r, &args(json!({"X-Trace": "arg"})), &auth, None).expect("build");
    assert_eq!(
        req.headers,
        vec![
            (
                "Accept".to_string(),
                "application/json, text/plain".to_string()
            ),
            ("User-Agent".to_string(), UA.to_string()),
            ("X-Tenant".to_string(), "t1".to_string()),
            ("X-Trace".to_string(), "static-trace".to_string()),
            ("Cookie".to_string(), "sid=s%3B1".to_string()),
            ("Authorization".to_string(), "Bearer secret".to_string()),
        ]
    );
    assert_eq!(req.url.query(), Some("api%20key=k%261"));
    // Debug output hides credentials.
    let dbg = format!("{req:?}");
    assert!(!dbg.contains("secret") && !dbg.contains("k%261"), "{dbg}");
}

/// #23 finding 19: a free-form object exploded into the query (or cookies) cannot set the
/// credential's parameter before the configured one.
#[test]
fn arguments_never_shadow_a_credential_parameter() {
    let r = route(
        "/a",
        vec![
            arg("extra", ArgLocation::query(QueryStyle::Form, true)),
            arg("prefs", ArgLocation::Cookie { explode: true }),
        ],
    );
    let auth = AuthParts {
        headers: vec![],
        query: vec![("api_key".into(), "REAL".into())],
        cookies: vec![("sid".into(), "S1".into())],
        needs_token: vec![],
    };
    let go = |a: Value| build_with(&r, a, &auth);
    let e = go(json!({"extra": {"q": "x", "api_key": "ATTACKER"}})).expect_err("shadowing");
    assert!(
        e.message.contains("`api_key`") && e.message.contains("refused"),
        "{e}"
    );
    let e = go(json!({"prefs": {"sid": "ATTACKER"}})).expect_err("cookie shadowing");
    assert!(e.message.contains("`sid`"), "{e}");
    // Other names pass, and the credential is sent once.
    let req = go(json!({"extra": {"q": "x", "api_key_hint": "y"}})).expect("build");
    assert_eq!(req.url.query(), Some("q=x&api_key_hint=y&api_key=REAL"));
}

fn body_route(
    kind: BodyKind,
    ct: &str,
    flattened: bool,
    args: Vec<ArgBinding>,
    encoding: Vec<PartEncoding>,
) -> Route {
    let mut r = route("/b", args);
    r.method = HttpMethod::Post;
    r.body = Some(BodyBinding {
        kind,
        content_type: ct.into(),
        required: false,
        flattened,
        encoding,
    });
    r
}

fn body_str(req: &BuiltRequest) -> (String, String) {
    let (ct, b) = req.body.clone().expect("body");
    (ct, String::from_utf8(b).expect("utf8"))
}

#[test]
fn json_bodies() {
    let r = body_route(
        BodyKind::Json,
        "application/json",
        true,
        vec![
            arg("name", ArgLocation::BodyField),
            arg("tag", ArgLocation::BodyField),
            arg("gone", ArgLocation::BodyField),
        ],
        vec![],
    );
    let req = build_ok(&r, json!({"name": "Rex", "tag": null}));
    assert_eq!(req.method, http::Method::POST);
    assert_eq!(
        body_str(&req),
        (
            "application/json".into(),
            r#"{"name":"Rex","tag":null}"#.into()
        )
    );
    assert!(build_ok(&r, json!({})).body.is_none());
    let mut rr = r.clone();
    if let Some(b) = rr.body.as_mut() {
        b.required = true;
    }
    assert_eq!(body_str(&build_ok(&rr, json!({}))).1, "{}");
    // Wire names differ from argument names.
    let mut a = arg("body_type", ArgLocation::BodyField);
    a.wire = "type".into();
    let r = body_route(BodyKind::Json, "application/json", true, vec![a], vec![]);
    assert_eq!(
        body_str(&build_ok(&r, json!({"body_type": 1}))).1,
        r#"{"type":1}"#
    );
    // Whole body.
    let r = body_route(
        BodyKind::Json,
        "application/merge-patch+json",
        false,
        vec![arg("body", ArgLocation::Body)],
        vec![],
    );
    assert_eq!(
        body_str(&build_ok(&r, json!({"body": [1, {"a": "é"}]}))),
        (
            "application/merge-patch+json".into(),
            r#"[1,{"a":"é"}]"#.into()
        )
    );
    assert!(build_ok(&r, json!({})).body.is_none());
}

fn enc_of(
    name: &str,
    style: Option<QueryStyle>,
    explode: Option<bool>,
    ct: Option<&str>,
) -> PartEncoding {
    PartEncoding {
        name: name.into(),
        content_type: ct.map(str::to_string),
        style,
        explode,
        binary: false,
    }
}

#[test]
fn form_bodies() {
    let fields = [
        "s", "n", "tags", "csv", "sp", "pipe", "obj", "objf", "metadata", "js", "nil",
    ];
    let r = body_route(
        BodyKind::Form,
        "application/x-www-form-urlencoded",
        true,
        fields
            .iter()
            .map(|f| arg(f, ArgLocation::BodyField))
            .collect(),
        vec![
            enc_of("csv", None, Some(false), None),
            enc_of("sp", Some(QueryStyle::SpaceDelimited), None, None),
            enc_of("pipe", Some(QueryStyle::PipeDelimited), None, None),
            enc_of("objf", Some(QueryStyle::Form), Some(false), None),
            enc_of("metadata", Some(QueryStyle::DeepObject), None, None),
            enc_of("js", None, None, Some("application/json")),
        ],
    );
    let req = build_ok(
        &r,
        json!({
            "s": "a b&c=é", "n": 4.5, "tags": ["x", "y"], "csv": ["x", "y,z"], "sp": [1, 2], "pipe": [1, 2],
            "obj": {"k1": "v1", "k2": 2}, "objf": {"k": "v"},
            "metadata": {"order_id": "6735", "nested": {"a": 1}, "items": [{"price": "p1"}]},
            "js": {"a": [1]}, "nil": null
        }),
    );
    assert_eq!(
        body_str(&req),
        (
            "application/x-www-form-urlencoded".into(),
            "s=a+b%26c%3D%C3%A9&n=4.5&tags=x&tags=y&csv=x,y%2Cz&sp=1%202&pipe=1|2&obj[k1]=v1&obj[k2]=2&objf=k,v\
             &metadata[order_id]=6735&metadata[nested][a]=1&metadata[items][0][price]=p1&js=%7B%22a%22%3A%5B1%5D%7D"
                .into()
        )
    );
    assert!(build_ok(&r, json!({})).body.is_none());
}

/// #23 part 2: a required query parameter is never left out: where the API allows empty
/// values an empty object or array is sent as the empty value (`name=`); #36: elsewhere it
/// is refused, naming the argument, as an empty string is. An optional empty one is not sent.
#[test]
fn required_query_parameters_are_always_sent_or_refused() {
    let q = |name: &str, style, explode, required, allow_empty_value| {
        let mut a = arg(
            name,
            ArgLocation::Query {
                style,
                explode,
                allow_reserved: false,
                allow_empty_value,
            },
        );
        a.required = required;
        a
    };
    let r = route(
        "/q",
        vec![
            q("filter", QueryStyle::DeepObject, true, true, true),
            q("page", QueryStyle::Form, true, true, true),
            q("ids", QueryStyle::PipeDelimited, false, true, true),
            q("sort", QueryStyle::Form, true, false, false),
        ],
    );
    let query = |v: Value| build_ok(&r, v).url.query().unwrap_or("").to_string();
    assert_eq!(
        query(json!({"filter": {}, "page": {}, "ids": [], "sort": {}})),
        "filter=&page=&ids="
    );
    assert_eq!(
        query(json!({"filter": {"a": null}, "page": {"n": 1}, "ids": [1, 2], "sort": {"by": "x"}})),
        "filter=&n=1&ids=1|2&by=x"
    );
    for (style, explode) in [
        (QueryStyle::DeepObject, true),
        (QueryStyle::Form, true),
        (QueryStyle::Form, false),
        (QueryStyle::SpaceDelimited, false),
        (QueryStyle::PipeDelimited, false),
    ] {
        let r = route("/q", vec![q("filter", style, explode, true, false)]);
        for empty in [
            json!({}),
            json!([]),
            json!({"a": ""}),
            json!(["", null]),
            json!(""),
        ] {
            let e = build_err(&r, json!({ "filter": empty }));
            assert_eq!(e.arg.as_deref(), Some("filter"));
            assert!(
                e.message
                    .starts_with("argument `filter` (query `filter`): ")
                    && e.message.contains("the API allows no empty value"),
                "{style:?} {explode} {empty}: {}",
                e.message
            );
        }
    }
}

/// #36 item 13: an empty item or member is not sent where the API allows no empty value, in
/// every style (`ids=a&ids=` went out for `["a", ""]`); where it allows one it is.
#[test]
fn empty_items_and_members_are_not_sent() {
    use QueryStyle::*;
    let cases: Vec<(QueryStyle, bool, Value, &str)> = vec![
        (Form, true, json!(["a", ""]), "color=a"),
        (Form, false, json!(["a", "", null, "b"]), "color=a,b"),
        (SpaceDelimited, false, json!(["a", ""]), "color=a"),
        (PipeDelimited, false, json!(["", "b"]), "color=b"),
        (DeepObject, true, json!(["a", ""]), "color[]=a"),
        (Form, true, json!({"R": "", "G": "1"}), "G=1"),
        (Form, false, json!({"R": "", "G": "1"}), "color=G,1"),
        (
            SpaceDelimited,
            false,
            json!({"R": null, "G": "1"}),
            "color=G%201",
        ),
        (
            PipeDelimited,
            false,
            json!({"R": "", "G": "1"}),
            "color=G|1",
        ),
        (
            DeepObject,
            true,
            json!({"a": {"b": "", "c": "x"}, "d": [""], "e": [{"k": ""}, {"k": "v"}]}),
            "color[a][c]=x&color[e][1][k]=v",
        ),
        (Form, true, json!(["", null]), ""),
        (DeepObject, true, json!({"a": {"b": ""}}), ""),
    ];
    for (style, explode, v, want) in cases {
        assert_eq!(
            query_of(style, explode, v.clone()),
            want,
            "{style:?} explode={explode} {v}"
        );
    }
    assert_eq!(
        query_of_allowing(Form, true, true, json!(["a", ""])),
        "color=a&color="
    );
}

/// #23 part 2: form fields without an encoding style: arrays exploded, objects and arrays of
/// objects deepObject-style, never JSON text or bare member names.
#[test]
fn form_fields_without_a_style_are_decodable() {
    let fields = ["tag", "filter", "items", "grid"];
    let r = body_route(
        BodyKind::Form,
        "application/x-www-form-urlencoded",
        true,
        fields
            .iter()
            .map(|f| arg(f, ArgLocation::BodyField))
            .collect(),
        vec![enc_of("grid", None, Some(false), None)],
    );
    let req = build_ok(
        &r,
        json!({"tag": ["a", "b"], "filter": {"a": 1, "n": {"m": "x"}}, "items": [{"sku": "s"}, {"sku": "t"}],
               "grid": [[1, 2]]}),
    );
    assert_eq!(
        body_str(&req).1,
        "tag=a&tag=b&filter[a]=1&filter[n][m]=x&items[0][sku]=s&items[1][sku]=t&grid[0][]=1&grid[0][]=2"
    );
}

#[test]
fn multipart_bodies() {
    let mut enc_file = enc_of("file", None, None, Some("image/png, image/jpeg"));
    enc_file.binary = true;
    let mut enc_any = enc_of("blob", None, None, None);
    enc_any.binary = true;
    let r = body_route(
        BodyKind::Multipart,
        "multipart/form-data",
        true,
        ["title", "count", "file", "blob", "meta", "tags", "nil"]
            .iter()
            .map(|f| arg(f, ArgLocation::BodyField))
            .collect(),
        vec![enc_file, enc_any],
    );
    let req = build_ok(
        &r,
        json!({"title": "Hi \"x\"", "count": 3, "file": "iVBORw0KGgo=", "blob": "AAEC", "meta": {"a": 1}, "tags": ["p", "q"], "nil": null}),
    );
    let (ct, body) = req.body.clone().expect("body");
    assert_eq!(ct, "multipart/form-data; boundary=BOUNDARY");
    let mut want = Vec::new();
    want.extend_from_slice(
        b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHi \"x\"\r\n",
    );
    want.extend_from_slice(
        b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"count\"\r\n\r\n3\r\n",
    );
    want.extend_from_slice(
        b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\nContent-Type: image/png\r\n\r\n",
    );
    want.extend_from_slice(&[0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n']);
    want.extend_from_slice(b"\r\n");
    want.extend_from_slice(
        b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"blob\"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\x01\x02\r\n",
    );
    want.extend_from_slice(b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"meta\"\r\nContent-Type: application/json\r\n\r\n{\"a\":1}\r\n");
    want.extend_from_slice(
        b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"tags\"\r\n\r\np\r\n",
    );
    want.extend_from_slice(
        b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"tags\"\r\n\r\nq\r\n",
    );
    want.extend_from_slice(b"--BOUNDARY--\r\n");
    assert_eq!(
        String::from_utf8_lossy(&body),
        String::from_utf8_lossy(&want)
    );
    assert_eq!(body, want);

    // Data URL: its media type is used when the encoding gives none.
    let req = build_ok(&r, json!({"blob": "data:image/gif;base64,R0lG"}));
    let body = String::from_utf8_lossy(&req.body.expect("body").1).to_string();
    assert!(
        body.contains("Content-Type: image/gif\r\n\r\nGIF\r\n"),
        "{body}"
    );

    // A data URL whose media type carries CR/LF (or is not `type/subtype`) is not written
    // into the part's headers (#23 finding 16): the default type is used.
    for bad in [
        "data:image/gif\r\nX-Injected: 1;base64,R0lG",
        "data:image/gif\nX: y;base64,R0lG",
        "data:not a type;base64,R0lG",
    ] {
        let req = build_ok(&r, json!({ "blob": bad }));
        let body = String::from_utf8_lossy(&req.body.expect("body").1).to_string();
        assert!(
            !body.contains("X-Injected") && !body.contains("X: y"),
            "{body}"
        );
        assert!(
            body.contains("Content-Type: application/octet-stream\r\n\r\nGIF\r\n"),
            "{body}"
        );
    }

    // Invalid base64 names the field.
    let e = build_err(&r, json!({"file": "not base64!!"}));
    assert_eq!(e.arg.as_deref(), Some("file"));
    assert!(
        e.message.contains("`file`") && e.message.contains("base64"),
        "{e}"
    );
    let mut r2 = r.clone();
    if let Some(b) = r2.body.as_mut() {
        b.encoding[0].binary = true;
    }
    let e = build_err(&r2, json!({"file": ["AAEC", "@@"]}));
    assert!(e.message.contains("file[1]"), "{e}");

    // A random boundary that appears in no part.
    let b = base();
    let ctx = BuildContext {
        base: &b,
        user_agent: UA,
        static_headers: &[],
        forwarded_headers: &[],
    };
    let req = build(
        &ctx,
        &r,
        &args(json!({"title": "x"})),
        &AuthParts::default(),
        None,
    )
    .expect("build");
    let (ct, body) = req.body.expect("body");
    let boundary = ct
        .strip_prefix("multipart/form-data; boundary=")
        .expect("boundary");
    assert!(boundary.len() > 20);
    assert_eq!(
        String::from_utf8(body).expect("utf8"),
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nx\r\n--{boundary}--\r\n"
        )
    );
}

/// A JSON body declared under a media range is sent as `application/json`, never with
/// the range as its Content-Type (Jellyfin's `application/*+json`, `*/*`).
#[test]
fn json_bodies_under_a_media_range_are_application_json() {
    for range in ["application/*+json", "*/*", "application/*"] {
        let r = body_route(
            BodyKind::Json,
            range,
            true,
            vec![arg("name", ArgLocation::BodyField)],
            vec![],
        );
        let (ct, body) = body_str(&build_ok(&r, json!({"name": "x"})));
        assert_eq!(
            (ct.as_str(), body.as_str()),
            ("application/json", r#"{"name":"x"}"#)
        );
    }
    let r = body_route(
        BodyKind::Json,
        "application/merge-patch+json",
        true,
        vec![arg("name", ArgLocation::BodyField)],
        vec![],
    );
    assert_eq!(
        body_str(&build_ok(&r, json!({"name": "x"}))).0,
        "application/merge-patch+json"
    );
}

/// A multipart body whose schema is a file (not an object of parts) is one file part.
#[test]
fn multipart_file_bodies_are_one_file_part() {
    let mut r = body_route(
        BodyKind::Multipart,
        "multipart/form-data",
        false,
        vec![arg("body", ArgLocation::Body)],
        vec![],
    );
    r.args[0].wire = String::new();
    let (ct, body) = build_ok(&r, json!({"body": "AAEC"})).body.expect("body");
    assert_eq!(ct, "multipart/form-data; boundary=BOUNDARY");
    assert_eq!(
        body,
        b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\x01\x02\r\n--BOUNDARY--\r\n"
    );
    let e = build_err(&r, json!({"body": 5}));
    assert!(e.message.contains("must be an object"), "{e}");
}

/// A multipart array of objects is one JSON part per item, as OpenAPI's default encoding
/// of arrays says (a primitive array already was one text part per item).
#[test]
fn multipart_arrays_of_objects_are_one_json_part_per_item() {
    let r = body_route(
        BodyKind::Multipart,
        "multipart/form-data",
        true,
        vec![arg("parts", ArgLocation::BodyField)],
        vec![],
    );
    let (_, body) = body_str(&build_ok(&r, json!({"parts": [{"a": 1}, [2], "x"]})));
    assert_eq!(
        body,
        "--BOUNDARY\r\nContent-Disposition: form-data; name=\"parts\"\r\nContent-Type: application/json\r\n\r\n{\"a\":1}\r\n\
         --BOUNDARY\r\nContent-Disposition: form-data; name=\"parts\"\r\nContent-Type: application/json\r\n\r\n[2]\r\n\
         --BOUNDARY\r\nContent-Disposition: form-data; name=\"parts\"\r\n\r\nx\r\n\
         --BOUNDARY--\r\n"
    );
}

#[test]
fn text_and_binary_bodies() {
    let r = body_route(
        BodyKind::Text,
        "text/plain",
        false,
        vec![arg("body", ArgLocation::Body)],
        vec![],
    );
    assert_eq!(
        body_str(&build_ok(&r, json!({"body": "héllo\n"}))),
        ("text/plain".into(), "héllo\n".into())
    );
    assert_eq!(
        body_str(&build_ok(&r, json!({"body": {"a": 1}}))).1,
        r#"{"a":1}"#
    );
    assert!(build_ok(&r, json!({})).body.is_none());

    let r = body_route(
        BodyKind::Binary,
        "application/octet-stream",
        false,
        vec![arg("body", ArgLocation::Body)],
        vec![],
    );
    assert_eq!(
        build_ok(&r, json!({"body": "AAEC/w=="})).body,
        Some(("application/octet-stream".into(), vec![0, 1, 2, 255]))
    );
    assert_eq!(
        build_ok(&r, json!({"body": "AAEC_w"})).body,
        Some(("application/octet-stream".into(), vec![0, 1, 2, 255]))
    );
    assert_eq!(
        build_ok(&r, json!({"body": "AAEC\n/w=="}))
            .body
            .map(|b| b.1),
        Some(vec![0, 1, 2, 255])
    );
    let e = build_err(&r, json!({"body": "***"}));
    assert_eq!(e.arg.as_deref(), Some("body"));
    assert!(e.message.contains("base64"));
    assert!(build_err(&r, json!({"body": 5})).message.contains("base64"));
    let r = body_route(
        BodyKind::Binary,
        "image/*",
        false,
        vec![arg("body", ArgLocation::Body)],
        vec![],
    );
    assert_eq!(
        build_ok(&r, json!({"body": "data:image/png;base64,AAEC"})).body,
        Some(("image/png".into(), vec![0, 1, 2]))
    );
}

/// #36 item 14: a whole body that would go out as zero bytes (`""` for
/// `application/octet-stream` or `application/jwt`, sent as an empty body) is refused when
/// the body is required, naming the argument, and not sent when it is optional.
#[test]
fn empty_bodies_are_refused_when_required_and_not_sent_when_optional() {
    for (kind, ct, empty) in [
        (BodyKind::Binary, "application/octet-stream", json!("")),
        (BodyKind::Binary, "application/jwt", json!("")),
        (BodyKind::Binary, "image/*", json!("data:image/png;base64,")),
        (BodyKind::Text, "text/plain", json!("")),
        (
            BodyKind::Form,
            "application/x-www-form-urlencoded",
            json!(""),
        ),
    ] {
        let mut r = body_route(
            kind,
            ct,
            false,
            vec![arg("body", ArgLocation::Body)],
            vec![],
        );
        r.args[0].wire = String::new();
        let req = build_ok(&r, json!({ "body": empty }));
        assert_eq!(req.body, None, "{ct}");
        if let Some(b) = r.body.as_mut() {
            b.required = true;
        }
        let e = build_err(&r, json!({ "body": empty }));
        assert_eq!(e.arg.as_deref(), Some("body"), "{ct}");
        assert!(
            e.message.starts_with(&format!(
                "argument `body` (the request body, {ct}): is empty"
            )),
            "{}",
            e.message
        );
        // Content is sent.
        let content = if kind == BodyKind::Binary {
            "aGk="
        } else {
            "hi"
        };
        assert!(
            build_ok(&r, json!({ "body": content })).body.is_some(),
            "{ct}"
        );
    }
}
