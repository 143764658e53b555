//! In-process forwarding (#42): tool calls sent to a `tower::Service` — typically the API
//! owner's own `axum::Router` — instead of over HTTP.
//!
//! The request is the one [`Forwarder::build_request`](super::Forwarder::build_request) makes
//! and reqwest would send: method, path and query (origin-form, as a server receives them),
//! every header (credentials, `--header`, forwarded client headers, `User-Agent`, `Accept`
//! (`*/*` when the route sets none, as reqwest does), `Host` and `Content-Length` as on the
//! wire) and the body. No socket is involved; the app's middleware sees every call. The answer
//! is mapped exactly as an HTTP answer (status, headers, `--max-response-bytes`, `--timeout`
//! over the whole exchange, retries).
//!
//! Only requests to the base URL's origin go in process: an operation whose `servers` entry is
//! elsewhere is still sent over HTTP.
//!
//! When the MCP caller was authorized by the runtime's OAuth gate, the app's handlers find a
//! [`CallerIdentity`] in the request's extensions. It carries the subject, never the caller's
//! MCP access token (tokens for this server are not passed on to the API, in process or not).

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::header;
use tokio::time::Instant;
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;
use url::Url;

use super::BuiltRequest;

/// The body type of in-process requests and answers.
pub type Body = axum::body::Body;

/// Errors a service may return (an `axum::Router` never does: its error is `Infallible`).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Who called the tool, as the runtime's OAuth gate authorized them: inserted into the
/// extensions of in-process requests (`Extension<CallerIdentity>` in axum) when the call came
/// from an authorized caller. No token: only who.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallerIdentity {
    /// `sub` of the caller's token (empty when it had none).
    pub subject: String,
    /// When the caller's token expires (Unix seconds), when it says.
    pub expires_at: Option<u64>,
}

/// The caller of the call being served (see [`super::CallScope::with_caller`]), as the app
/// and the extension hooks see it.
pub fn current_caller() -> Option<CallerIdentity> {
    super::CALL_SCOPE
        .try_with(|s| {
            s.caller.as_ref().map(|c| CallerIdentity {
                subject: c.subject.clone(),
                expires_at: c.expires_at,
            })
        })
        .ok()
        .flatten()
}

/// The service calls go to, with the origin it stands for.
#[derive(Clone)]
pub(crate) struct LocalService {
    svc: BoxCloneSyncService<http::Request<Body>, http::Response<Body>, BoxError>,
}

impl fmt::Debug for LocalService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LocalService")
    }
}

impl LocalService {
    pub(crate) fn new<S, B>(service: S) -> Self
    where
        S: tower::Service<http::Request<Body>, Response = http::Response<B>>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let svc = service
            .map_response(|r: http::Response<B>| r.map(Body::new))
            .map_err(Into::into);
        LocalService {
            svc: BoxCloneSyncService::new(svc),
        }
    }

    /// Sends `built` to the service; the answer's body must be read before `deadline` too.
    pub(crate) async fn send(
        &self,
        built: &BuiltRequest,
        caller: Option<CallerIdentity>,
        deadline: Instant,
    ) -> Result<LocalResponse, LocalError> {
        let req = to_request(built, caller)?;
        let call = self.svc.clone().oneshot(req);
        let resp = match tokio::time::timeout_at(deadline, call).await {
            Err(_) => return Err(LocalError::Timeout),
            Ok(Err(e)) => return Err(LocalError::Service(chain(&*e))),
            Ok(Ok(r)) => r,
        };
        let (mut parts, body) = resp.into_parts();
        // As on the wire: a body of known length is sent with its Content-Length.
        let exact = http_body::Body::size_hint(&body).exact();
        if let Some(n) = exact
            && !parts.headers.contains_key(header::CONTENT_LENGTH)
            && !parts.headers.contains_key(header::TRANSFER_ENCODING)
        {
            parts.headers.insert(header::CONTENT_LENGTH, n.into());
        }
        Ok(LocalResponse {
            status: parts.status,
            headers: parts.headers,
            content_length: exact,
            body: body.into_data_stream(),
            deadline,
        })
    }
}

/// The `http::Request` reqwest would put on the wire for `built`.
pub(crate) fn to_request(
    built: &BuiltRequest,
    caller: Option<CallerIdentity>,
) -> Result<http::Request<Body>, LocalError> {
    let url = &built.url;
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let mut req = http::Request::builder()
        .method(built.method.clone())
        .uri(target.as_str())
        .body(Body::empty())
        .map_err(|e| LocalError::Request(e.to_string()))?;
    let headers = req.headers_mut();
    for (k, v) in &built.headers {
        // As `Forwarder::send` does: invalid ones were rejected when the request was built.
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(k.as_bytes()),
            http::HeaderValue::from_bytes(v.as_bytes()),
        ) {
            headers.append(name, value);
        }
    }
    if !headers.contains_key(header::ACCEPT) {
        headers.insert(header::ACCEPT, http::HeaderValue::from_static("*/*"));
    }
    if let Some(host) = host_header(url)
        && let Ok(v) = http::HeaderValue::from_str(&host)
    {
        headers.insert(header::HOST, v);
    }
    if let Some((ct, body)) = &built.body {
        if let Ok(v) = http::HeaderValue::from_str(ct) {
            headers.insert(header::CONTENT_TYPE, v);
        }
        headers.insert(header::CONTENT_LENGTH, body.len().into());
        *req.body_mut() = Body::from(body.clone());
    }
    if let Some(c) = caller {
        req.extensions_mut().insert(c);
    }
    Ok(req)
}

/// `host[:port]` as reqwest sends it (the port only when it is not the scheme's default).
fn host_header(url: &Url) -> Option<String> {
    let host = url.host_str()?;
    Some(match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    })
}

/// An in-process answer being read.
pub(crate) struct LocalResponse {
    status: http::StatusCode,
    headers: http::HeaderMap,
    content_length: Option<u64>,
    body: axum::body::BodyDataStream,
    deadline: Instant,
}

impl LocalResponse {
    pub(crate) fn status(&self) -> http::StatusCode {
        self.status
    }

    pub(crate) fn headers(&self) -> &http::HeaderMap {
        &self.headers
    }

    pub(crate) fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// The next piece of the body, within the call's deadline.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, LocalError> {
        loop {
            match tokio::time::timeout_at(self.deadline, self.body.next()).await {
                Err(_) => return Err(LocalError::Timeout),
                Ok(None) => return Ok(None),
                Ok(Some(Err(e))) => return Err(LocalError::Body(chain(&e))),
                // Empty frames (trailers) are not data.
                Ok(Some(Ok(b))) if b.is_empty() => continue,
                Ok(Some(Ok(b))) => return Ok(Some(b)),
            }
        }
    }
}

/// What went wrong with an in-process call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LocalError {
    /// The request could not be made (a URL the `http` crate refuses).
    Request(String),
    /// The service answered with an error instead of a response.
    Service(String),
    /// Reading the answer's body failed.
    Body(String),
    /// `--timeout` passed.
    Timeout,
}

impl LocalError {
    pub(crate) fn is_timeout(&self) -> bool {
        matches!(self, LocalError::Timeout)
    }

    /// The message of a tool error, as `response::transport_error` words HTTP failures.
    pub(crate) fn message(&self, timeout: Duration) -> String {
        match self {
            LocalError::Timeout => format!(
                "the API did not answer within {} (timeout); the request may or may not have been applied",
                super::response::fmt_duration(timeout)
            ),
            LocalError::Request(e) => format!("the request could not be made: {e}"),
            LocalError::Service(e) => format!("the in-process API service failed: {e}"),
            LocalError::Body(e) => format!("the in-process API's answer broke off: {e}"),
        }
    }
}

fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// An answer being read: from the network or from the in-process service.
pub(crate) enum Upstream {
    Http(reqwest::Response),
    Local(LocalResponse),
}

impl Upstream {
    pub(crate) fn status(&self) -> http::StatusCode {
        match self {
            Upstream::Http(r) => r.status(),
            Upstream::Local(r) => r.status(),
        }
    }

    pub(crate) fn headers(&self) -> &http::HeaderMap {
        match self {
            Upstream::Http(r) => r.headers(),
            Upstream::Local(r) => r.headers(),
        }
    }

    pub(crate) fn content_length(&self) -> Option<u64> {
        match self {
            Upstream::Http(r) => r.content_length(),
            Upstream::Local(r) => r.content_length(),
        }
    }
}

/// A failed exchange: over the network or in process.
#[derive(Debug)]
pub(crate) enum SendError {
    Http(reqwest::Error),
    Local(LocalError),
}

impl SendError {
    pub(crate) fn is_timeout(&self) -> bool {
        match self {
            SendError::Http(e) => e.is_timeout(),
            SendError::Local(e) => e.is_timeout(),
        }
    }

    /// Could not connect (never in process: there is no connection).
    pub(crate) fn is_connect(&self) -> bool {
        match self {
            SendError::Http(e) => e.is_connect(),
            SendError::Local(_) => false,
        }
    }

    /// The tool error's text (see `response::transport_error`).
    pub(crate) fn message(self, origin: &str, host: &str, timeout: Duration) -> String {
        match self {
            SendError::Http(e) => super::response::transport_error(e, origin, host, timeout),
            SendError::Local(e) => e.message(timeout),
        }
    }
}

/// A body read piece by piece (see `read_capped`).
pub(crate) trait Chunks {
    type Error;
    fn chunk(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Option<Bytes>, Self::Error>> + Send;
}

impl Chunks for reqwest::Response {
    type Error = reqwest::Error;
    fn chunk(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Option<Bytes>, Self::Error>> + Send {
        reqwest::Response::chunk(self)
    }
}

impl Chunks for Upstream {
    type Error = SendError;
    async fn chunk(&mut self) -> Result<Option<Bytes>, Self::Error> {
        match self {
            Upstream::Http(r) => r.chunk().await.map_err(SendError::Http),
            Upstream::Local(r) => r.chunk().await.map_err(SendError::Local),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::extract::Request;
    use axum::response::IntoResponse;
    use openapi_mcp_toolset::model::{
        ApiKeyLocation, ArgBinding, ArgLocation, BodyBinding, BodyKind, HttpMethod, OutputShape,
        PathStyle, QueryStyle, Route, SecurityScheme,
    };
    use rmcp::model::CallToolResult;
    use serde_json::{Map, Value, json};

    use super::*;
    use crate::forward::{CallScope, Caller, Credentials, ForwardOptions, Forwarder};

    /// What the app saw of one request.
    #[derive(Debug, Clone, PartialEq)]
    struct Seen {
        method: String,
        target: String,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        caller: Option<CallerIdentity>,
    }

    type Log = Arc<Mutex<Vec<Seen>>>;

    /// The app: records every request; `/big` answers 300 KiB, `/slow` never in time.
    fn app(log: Log) -> axum::Router {
        axum::Router::new().fallback(move |req: Request| {
            let log = log.clone();
            async move {
                let (parts, body) = req.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX)
                    .await
                    .unwrap_or_default();
                let mut headers: Vec<(String, String)> = parts
                    .headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), String::from_utf8_lossy(v.as_bytes()).into()))
                    .collect();
                headers.sort();
                let target = parts
                    .uri
                    .path_and_query()
                    .map(|p| p.to_string())
                    .unwrap_or_default();
                log.lock().expect("log").push(Seen {
                    method: parts.method.to_string(),
                    target: target.clone(),
                    headers,
                    body: body.to_vec(),
                    caller: parts.extensions.get::<CallerIdentity>().cloned(),
                });
                if target.starts_with("/api/big") {
                    return (
                        [(header::CONTENT_TYPE, "text/plain")],
                        "x".repeat(300 * 1024),
                    )
                        .into_response();
                }
                if target.starts_with("/api/slow") {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                let status = if parts.method == http::Method::POST {
                    http::StatusCode::CREATED
                } else {
                    http::StatusCode::OK
                };
                (status, axum::Json(json!({"id": 7, "name": "Rex"}))).into_response()
            }
        })
    }

    fn route(method: HttpMethod, path: &str) -> Route {
        let body = method == HttpMethod::Post;
        let mut args = vec![
            ArgBinding {
                arg: "petId".into(),
                wire: "petId".into(),
                location: ArgLocation::Path {
                    style: PathStyle::Simple,
                    explode: false,
                },
                required: true,
                content_type: None,
            },
            ArgBinding {
                arg: "q".into(),
                wire: "q".into(),
                location: ArgLocation::query(QueryStyle::Form, true),
                required: false,
                content_type: None,
            },
            ArgBinding {
                arg: "X-Trace".into(),
                wire: "X-Trace".into(),
                location: ArgLocation::Header { explode: false },
                required: false,
                content_type: None,
            },
        ];
        if body {
            args.push(ArgBinding {
                arg: "name".into(),
                wire: "name".into(),
                location: ArgLocation::BodyField,
                required: true,
                content_type: None,
            });
        }
        Route {
            method,
            path: path.into(),
            server: None,
            args,
            body: body.then(|| BodyBinding {
                kind: BodyKind::Json,
                content_type: "application/json".into(),
                required: true,
                flattened: true,
                encoding: vec![],
            }),
            accept: Some("application/json".into()),
            security: vec![vec!["key".into()]],
            oauth_scopes: Vec::new(),
            output: OutputShape::Object,
            pinned: Default::default(),
            credential_params: Vec::new(),
            input_schema: Default::default(),
        }
    }

    fn forwarder(base: &str, max: usize, timeout: Duration) -> Forwarder {
        let mut o = ForwardOptions::new(Url::parse(base).expect("url"));
        o.max_response_bytes = max;
        o.timeout = timeout;
        o.static_headers = vec![("X-Static".into(), "on".into())];
        let schemes = vec![(
            "key".to_string(),
            SecurityScheme::ApiKey {
                name: "X-Api-Key".into(),
                location: ApiKeyLocation::Header,
            },
        )];
        let mut creds = Credentials::new();
        creds.set("key", "the-api-key-123456".into());
        Forwarder::new(o, schemes, creds).expect("forwarder")
    }

    fn args(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    async fn call(f: &Forwarder, r: &Route, a: Value, caller: Option<&str>) -> CallToolResult {
        let caller = caller.map(|s| Arc::new(Caller::new(s.into(), "mcp-token-xyz", Some(99))));
        let a = args(a);
        CallScope::new(Vec::new())
            .with_caller(caller)
            .run(f.call(r, &a))
            .await
            .0
    }

    /// The same calls over loopback HTTP and in process: the app sees the same requests
    /// (method, target, every header, body) and the results are the same.
    #[tokio::test]
    async fn in_process_requests_and_results_are_those_of_http() {
        let over_http: Log = Arc::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let served = app(over_http.clone());
        tokio::spawn(async move { axum::serve(listener, served).await });
        let base = format!("http://{addr}/api");
        let remote = forwarder(&base, 100 * 1024, Duration::from_secs(30));
        let in_process: Log = Arc::default();
        let local = forwarder(&base, 100 * 1024, Duration::from_secs(30));
        assert!(local.set_in_process(app(in_process.clone())));
        assert!(!local.set_in_process(app(in_process.clone())), "set once");
        assert!(local.is_in_process() && !remote.is_in_process());

        let calls = [
            (
                route(HttpMethod::Get, "/pets/{petId}"),
                json!({"petId": 7, "q": "a b&c", "X-Trace": "t-1"}),
            ),
            (
                route(HttpMethod::Post, "/pets/{petId}"),
                json!({"petId": 7, "name": "Rëx"}),
            ),
            (
                route(HttpMethod::Delete, "/pets/{petId}"),
                json!({"petId": 8}),
            ),
            (route(HttpMethod::Get, "/big"), json!({"petId": 1})),
        ];
        for (r, a) in &calls {
            let h = call(&remote, r, a.clone(), None).await;
            let l = call(&local, r, a.clone(), None).await;
            assert_eq!(h, l, "{} {}", r.method.as_str(), r.path);
        }
        let over_http = over_http.lock().expect("log").clone();
        let in_process = in_process.lock().expect("log").clone();
        assert_eq!(over_http.len(), calls.len());
        assert_eq!(over_http, in_process);
        // The credential and the static header reached the app.
        assert!(in_process.iter().all(|s| {
            s.headers
                .contains(&("x-api-key".into(), "the-api-key-123456".into()))
                && s.headers.contains(&("x-static".into(), "on".into()))
        }));
        assert_eq!(in_process[0].target, "/api/pets/7?q=a%20b%26c");
    }

    /// The caller the OAuth gate authorized reaches the app as an extension, without its token.
    #[tokio::test]
    async fn the_caller_is_an_extension_without_token() {
        let log: Log = Arc::default();
        let f = forwarder("http://in.process/api", 1 << 20, Duration::from_secs(30));
        assert!(f.set_in_process(app(log.clone())));
        let r = route(HttpMethod::Get, "/pets/{petId}");
        let res = call(&f, &r, json!({"petId": 1}), Some("alice")).await;
        assert_eq!(res.is_error, Some(false));
        let _ = call(&f, &r, json!({"petId": 1}), None).await;
        let log = log.lock().expect("log").clone();
        assert_eq!(
            log[0].caller,
            Some(CallerIdentity {
                subject: "alice".into(),
                expires_at: Some(99)
            })
        );
        assert_eq!(log[1].caller, None);
        assert!(
            log.iter()
                .all(|s| s.headers.iter().all(|(_, v)| !v.contains("mcp-token")))
        );
    }

    /// `--timeout` covers the in-process exchange as it covers an HTTP one (the app waits an
    /// hour; the call ends at the timeout).
    #[tokio::test]
    async fn in_process_calls_time_out() {
        let f = forwarder("http://in.process/api", 1 << 20, Duration::from_millis(100));
        assert!(f.set_in_process(app(Arc::default())));
        let r = route(HttpMethod::Get, "/slow");
        let res = call(&f, &r, json!({"petId": 1}), None).await;
        assert_eq!(res.is_error, Some(true));
        let text = res
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert_eq!(
            text,
            "the API did not answer within 100 ms (timeout); the request may or may not have been applied"
        );
    }

    /// The bench figure of #42 (one run, not a check): the same call to the same app, in
    /// process and over loopback HTTP (keep-alive). `cargo test -p openapi-mcp-runtime --lib
    /// in_process_is_cheaper --release -- --ignored --nocapture`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "a measurement; run by hand"]
    async fn in_process_is_cheaper() {
        const N: usize = 5000;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let served = app(Arc::default());
        tokio::spawn(async move { axum::serve(listener, served).await });
        let base = format!("http://{addr}/api");
        let remote = forwarder(&base, 1 << 20, Duration::from_secs(30));
        let local = forwarder(&base, 1 << 20, Duration::from_secs(30));
        assert!(local.set_in_process(app(Arc::default())));
        let r = route(HttpMethod::Get, "/pets/{petId}");
        let a = args(json!({"petId": 7, "q": "x"}));
        let mut figures = Vec::new();
        for (what, f) in [("loopback HTTP", &remote), ("in process", &local)] {
            for _ in 0..200 {
                let _ = f.call(&r, &a).await;
            }
            let mut lat = Vec::with_capacity(N);
            let started = std::time::Instant::now();
            for _ in 0..N {
                let t = std::time::Instant::now();
                let res = f.call(&r, &a).await;
                lat.push(t.elapsed());
                assert_eq!(res.is_error, Some(false));
            }
            let total = started.elapsed();
            lat.sort();
            figures.push(format!(
                "{what}: {N} sequential calls in {:.1} ms, p50 {:.1} µs, p99 {:.1} µs, {:.0} calls/s",
                total.as_secs_f64() * 1e3,
                lat[N / 2].as_secs_f64() * 1e6,
                lat[N * 99 / 100].as_secs_f64() * 1e6,
                N as f64 / total.as_secs_f64()
            ));
        }
        for f in figures {
            println!("{f}");
        }
    }

    /// The request as a server receives it: origin-form target, `Host` with the port,
    /// `Content-Length`, reqwest's default `Accept`.
    #[test]
    fn the_request_is_what_a_server_receives() {
        let built = BuiltRequest {
            method: http::Method::PUT,
            url: Url::parse("http://in.process:8080/api/x?a=1").expect("url"),
            headers: vec![("X-A".into(), "1".into())],
            body: Some(("application/json".into(), b"{}".to_vec())),
        };
        let req = to_request(&built, None).expect("request");
        assert_eq!(req.uri(), "/api/x?a=1");
        assert_eq!(req.headers()["host"], "in.process:8080");
        assert_eq!(req.headers()["content-length"], "2");
        assert_eq!(req.headers()["accept"], "*/*");
    }
}
