//! A real HTTP upstream on 127.0.0.1:0 that records every request it receives.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Response, StatusCode};
use axum::serve::ListenerExt;

/// One request as the upstream saw it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// Raw path and query exactly as sent (`/api/pets?limit=2`).
    pub target: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Recorded {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
    pub fn query(&self) -> Option<&str> {
        self.target.split_once('?').map(|(_, q)| q)
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn body_json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// What the upstream answers: status, content type, body.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    pub headers: Vec<(String, String)>,
}

impl Reply {
    pub fn json(status: u16, v: serde_json::Value) -> Self {
        Self {
            status,
            content_type: Some("application/json".into()),
            body: v.to_string().into_bytes(),
            headers: vec![],
        }
    }
    pub fn raw(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            content_type: Some(content_type.into()),
            body: body.into(),
            headers: vec![],
        }
    }
    pub fn empty(status: u16) -> Self {
        Self {
            status,
            content_type: None,
            body: vec![],
            headers: vec![],
        }
    }
}

type Responder = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

#[derive(Clone)]
struct Shared {
    log: Arc<Mutex<Vec<Recorded>>>,
    responder: Arc<Mutex<Responder>>,
    /// How long every answer waits (a slow API).
    delay: Arc<Mutex<std::time::Duration>>,
}

/// A running upstream.
pub struct Upstream {
    pub addr: SocketAddr,
    shared: Shared,
    _task: tokio::task::JoinHandle<()>,
}

impl Upstream {
    /// Starts an upstream that answers with `responder` (by default: 200 with a JSON echo).
    pub async fn start() -> Self {
        let shared = Shared {
            log: Arc::new(Mutex::new(Vec::new())),
            responder: Arc::new(Mutex::new(Arc::new(|r: &Recorded| {
                Reply::json(
                    200,
                    serde_json::json!({"method": r.method, "target": r.target}),
                )
            }))),
            delay: Arc::new(Mutex::new(std::time::Duration::ZERO)),
        };
        let app = axum::Router::new()
            .fallback(record)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind upstream");
        let addr = listener.local_addr().expect("upstream addr");
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            addr,
            shared,
            _task: task,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn respond(&self, f: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) {
        *self.shared.responder.lock().expect("responder lock") = Arc::new(f);
    }

    /// Every answer from now on comes after `delay` (the request is recorded at once).
    pub fn delay(&self, delay: std::time::Duration) {
        *self.shared.delay.lock().expect("delay lock") = delay;
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.log.lock().expect("log lock").clone()
    }

    pub fn last(&self) -> Recorded {
        self.requests()
            .pop()
            .expect("the upstream received no request")
    }

    pub fn clear(&self) {
        self.shared.log.lock().expect("log lock").clear();
    }
}

async fn record(State(shared): State<Shared>, req: Request) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 64 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let rec = Recorded {
        method: parts.method.to_string(),
        target: parts
            .uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default(),
        headers: parts.headers,
        body,
    };
    let responder = shared.responder.lock().expect("responder lock").clone();
    let reply = responder(&rec);
    shared.log.lock().expect("log lock").push(rec);
    let delay = *shared.delay.lock().expect("delay lock");
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut resp =
        Response::builder().status(StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK));
    if let Some(ct) = &reply.content_type {
        resp = resp.header("content-type", ct);
    }
    for (k, v) in &reply.headers {
        resp = resp.header(k, v);
    }
    resp.body(Body::from(reply.body)).expect("response")
}
