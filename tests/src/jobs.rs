//! A job API with long-running operations, the upstream of the MCP tasks tests (#38), served
//! by axum on 127.0.0.1 (port 0) as `specs/jobs.yaml` describes it:
//!
//! - `POST /api/jobs {name, polls, fail}` answers `202 Accepted`, `Location: /api/jobs/{id}`,
//!   `Retry-After: 1`; `GET /api/jobs/{id}` says `running` for the first `polls` reads, then
//!   `succeeded` (with a result) or `failed` (with an error); `DELETE /api/jobs/{id}` cancels it
//!   (later reads say `cancelled`).
//! - `POST /api/exports` answers 202 with an `Operation-Location: /api/operations/{id}` (Azure
//!   style, `Running` once, then `Succeeded`... as a `303 See Other` to
//!   `/api/exports/{id}/result`); exports have no cancel operation.
//! - `POST /api/reports?delayMs=N` answers 200 after N ms (a slow synchronous call).
//! - `GET /api/health` answers at once.
//!
//! Reads advance a job by count, not by time, so tests do not depend on timing. Every request
//! is logged (`METHOD /path`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// One job's state.
#[derive(Clone, Debug)]
struct Job {
    name: String,
    /// Reads left before it ends.
    polls_left: u64,
    fail: bool,
    cancelled: bool,
}

#[derive(Default)]
struct Jobs {
    next: u64,
    jobs: HashMap<String, Job>,
    /// Export operations: reads left before they end.
    exports: HashMap<String, u64>,
    log: Vec<String>,
    /// `Authorization` headers seen.
    authorizations: Vec<String>,
}

type Shared = Arc<Mutex<Jobs>>;

/// A running job API.
pub struct JobApi {
    pub addr: SocketAddr,
    shared: Shared,
    _task: tokio::task::JoinHandle<()>,
}

fn note(s: &Shared, line: String, headers: &HeaderMap) {
    let mut j = s.lock().expect("jobs lock");
    j.log.push(line);
    if let Some(a) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        j.authorizations.push(a.to_string());
    }
}

async fn start_job(
    State(s): State<Shared>,
    headers: HeaderMap,
    body: Option<Json<Value>>,
) -> Response {
    note(&s, "POST /api/jobs".into(), &headers);
    let body = body.map(|b| b.0).unwrap_or_default();
    let mut j = s.lock().expect("jobs lock");
    j.next += 1;
    let id = format!("job-{}", j.next);
    let job = Job {
        name: body["name"].as_str().unwrap_or("job").to_string(),
        polls_left: body["polls"].as_u64().unwrap_or(1),
        fail: body["fail"].as_bool().unwrap_or(false),
        cancelled: false,
    };
    let answer = json!({"id": id, "name": job.name, "status": "queued"});
    j.jobs.insert(id.clone(), job);
    let mut resp = (StatusCode::ACCEPTED, Json(answer)).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::LOCATION,
        HeaderValue::from_str(&format!("/api/jobs/{id}")).expect("location"),
    );
    h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    resp
}

async fn get_job(State(s): State<Shared>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    note(&s, format!("GET /api/jobs/{id}"), &headers);
    let mut j = s.lock().expect("jobs lock");
    let Some(job) = j.jobs.get_mut(&id) else {
        return (StatusCode::NOT_FOUND, Json(json!({"error": "no such job"}))).into_response();
    };
    let status = if job.cancelled {
        "cancelled"
    } else if job.polls_left > 0 {
        job.polls_left -= 1;
        "running"
    } else if job.fail {
        "failed"
    } else {
        "succeeded"
    };
    let mut body = json!({"id": id, "name": job.name, "status": status});
    match status {
        "succeeded" => body["result"] = json!({"answer": 42}),
        "failed" => body["error"] = json!("the job ran out of disk"),
        _ => {}
    }
    Json(body).into_response()
}

async fn cancel_job(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    note(&s, format!("DELETE /api/jobs/{id}"), &headers);
    let mut j = s.lock().expect("jobs lock");
    match j.jobs.get_mut(&id) {
        Some(job) => {
            job.cancelled = true;
            StatusCode::ACCEPTED.into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn start_export(State(s): State<Shared>, headers: HeaderMap) -> Response {
    note(&s, "POST /api/exports".into(), &headers);
    let mut j = s.lock().expect("jobs lock");
    j.next += 1;
    let id = format!("exp-{}", j.next);
    j.exports.insert(id.clone(), 1);
    let mut resp = StatusCode::ACCEPTED.into_response();
    resp.headers_mut().insert(
        "operation-location",
        HeaderValue::from_str(&format!("/api/operations/{id}")).expect("location"),
    );
    resp
}

async fn get_operation(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    note(&s, format!("GET /api/operations/{id}"), &headers);
    let mut j = s.lock().expect("jobs lock");
    let Some(left) = j.exports.get_mut(&id) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if *left > 0 {
        *left -= 1;
        let mut resp = Json(json!({"id": id, "status": "Running"})).into_response();
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return resp;
    }
    let mut resp = StatusCode::SEE_OTHER.into_response();
    resp.headers_mut().insert(
        header::LOCATION,
        HeaderValue::from_str(&format!("/api/exports/{id}/result")).expect("location"),
    );
    resp
}

async fn export_result(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    note(&s, format!("GET /api/exports/{id}/result"), &headers);
    Json(json!({"exportId": id, "rows": 1234})).into_response()
}

async fn make_report(
    State(s): State<Shared>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    note(&s, "POST /api/reports".into(), &headers);
    let ms: u64 = q.get("delayMs").and_then(|v| v.parse().ok()).unwrap_or(0);
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    Json(json!({"report": format!("made in {ms} ms")})).into_response()
}

async fn health(State(s): State<Shared>, headers: HeaderMap) -> Response {
    note(&s, "GET /api/health".into(), &headers);
    Json(json!({"ok": true})).into_response()
}

impl JobApi {
    pub async fn start() -> Self {
        let shared: Shared = Arc::default();
        let app = axum::Router::new()
            .route("/api/jobs", post(start_job))
            .route("/api/jobs/{id}", get(get_job).delete(cancel_job))
            .route("/api/exports", post(start_export))
            .route("/api/operations/{id}", get(get_operation))
            .route("/api/exports/{id}/result", get(export_result))
            .route("/api/reports", post(make_report))
            .route("/api/health", get(health))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind job API");
        let addr = listener.local_addr().expect("job API addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        JobApi {
            addr,
            shared,
            _task: task,
        }
    }

    /// The API's base URL (`http://127.0.0.1:PORT/api`).
    pub fn base_url(&self) -> String {
        format!("http://{}/api", self.addr)
    }

    /// The requests so far, as `METHOD /path`.
    pub fn requests(&self) -> Vec<String> {
        self.shared.lock().expect("jobs lock").log.clone()
    }

    /// The `Authorization` headers seen so far.
    pub fn authorizations(&self) -> Vec<String> {
        self.shared
            .lock()
            .expect("jobs lock")
            .authorizations
            .clone()
    }

    /// Whether job `id` was cancelled.
    pub fn cancelled(&self, id: &str) -> bool {
        self.shared
            .lock()
            .expect("jobs lock")
            .jobs
            .get(id)
            .is_some_and(|j| j.cancelled)
    }
}
