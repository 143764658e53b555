//! Task records and their life: created when a call becomes a task, read by `tasks/get` (which
//! polls the API's status URL when the record says it is time), ended by the API's answer, a
//! `tasks/cancel`, or the TTL (the record expires with it).
//!
//! Everything a replica needs to answer for a task is in its record, so any replica sharing the
//! store answers `tasks/get` and `tasks/cancel`: a 202-task's status URL is polled from the
//! record. Only a `--task-after` task's in-flight request lives in one process; other replicas
//! see it `working` until that process stores its answer (or the TTL ends it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, CreateTaskResult, GetTaskResult};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::record::now_ms;
pub use super::record::{PendingCall, Stage, TaskRecord};
use super::status::{Verdict, poll_interval_ms, verdict};
use super::store::{TaskStore, TaskStoreError};

fn sha256_hex(bytes: &[u8]) -> String {
    let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, bytes);
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Who a task belongs to: a digest of the OAuth subject the server validated, else of the
/// `Authorization` header the client sent, else of its MCP session, else everyone unauthenticated
/// (stdio: the one client).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner(String);

impl Owner {
    pub fn new(subject: Option<&str>, authorization: Option<&[u8]>, session: Option<&str>) -> Self {
        let tagged: Vec<u8> = match (subject, authorization, session) {
            (Some(s), _, _) => [b"sub\0".as_slice(), s.as_bytes()].concat(),
            (None, Some(a), _) => [b"authorization\0".as_slice(), a].concat(),
            (None, None, Some(s)) => [b"session\0".as_slice(), s.as_bytes()].concat(),
            (None, None, None) => b"anonymous".to_vec(),
        };
        Owner(sha256_hex(&tagged))
    }

    pub fn digest(&self) -> &str {
        &self.0
    }
}

/// What the server reads the API with for a task: the GET tool that reads a status URL, and the
/// operation that cancels it, each called through the forwarder with the credentials of the
/// request being served (the task's owner).
pub trait StatusReader: Send + Sync {
    /// Reads `url` of API `api` through the GET tool whose path matches it; `None` when no tool
    /// of the server reads it.
    fn read<'a>(&'a self, api: usize, url: &'a Url)
    -> futures::future::BoxFuture<'a, Option<Read>>;
    /// Calls the API's cancel operation for the operation whose status is at `url` (a DELETE of
    /// it, or a POST of `…:cancel` / `…/cancel`); `None` when the spec has none.
    fn cancel<'a>(
        &'a self,
        api: usize,
        url: &'a Url,
    ) -> futures::future::BoxFuture<'a, Option<Read>>;
    /// The task's final result as a result of `tool` (the tool that was called, whose output
    /// schema a client checks it against); as it is by default.
    fn conform(&self, tool: &str, result: CallToolResult) -> CallToolResult {
        let _ = tool;
        result
    }
}

/// One answer of the API about a task.
#[derive(Debug)]
pub struct Read {
    /// The tool that was called.
    pub tool: String,
    pub result: CallToolResult,
    /// The HTTP status, when an answer came.
    pub status: Option<u16>,
    /// A 202's status URL (it may move).
    pub accepted_at: Option<Url>,
    /// The answer's `Retry-After`.
    pub retry_after: Option<Duration>,
    /// A 303's `Location` (where the result is).
    pub see_other: Option<Url>,
}

/// How an in-flight (`--task-after`) call ended.
pub enum Finished {
    /// With this result.
    Result(CallToolResult),
    /// The API accepted it (202) and keeps its status at this URL.
    Accepted {
        status_url: Url,
        retry_after: Option<Duration>,
    },
    /// With a protocol error.
    Error(ErrorData),
    /// Nothing was sent (the user did not confirm, or the call could no longer be made): this
    /// tool error is the task's result.
    NotSent(CallToolResult),
}

/// A task's input, claimed by the `tasks/update` that answered it (see [`Tasks::claim_input`]).
#[derive(Debug)]
pub struct Claimed {
    pub handle: Handle,
    /// The tool that was called, and its API.
    pub tool: String,
    pub api: usize,
    /// What to send if the answer says so.
    pub call: PendingCall,
    /// The client's response to the outstanding request.
    pub answer: Value,
}

/// Limits of the task registry.
#[derive(Clone, Copy, Debug)]
pub struct TaskLimits {
    /// How long a task (and its result) is kept, from its creation (`--task-ttl`).
    pub ttl: Duration,
    /// Live tasks one owner may have; past it calls run as plain calls.
    pub per_owner: u64,
    /// Live tasks of the server.
    pub total: u64,
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            ttl: Duration::from_secs(3600),
            per_owner: 256,
            total: 10_000,
        }
    }
}

/// A created task: its id (the client's handle) and key (the store's).
#[derive(Clone, Debug)]
pub struct Handle {
    pub id: String,
    key: String,
}

/// The tasks of a server.
pub struct Tasks {
    store: TaskStore,
    limits: TaskLimits,
    /// In-flight requests of `--task-after` tasks started here, by record key.
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("store", &self.store)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

fn store_error(e: TaskStoreError) -> ErrorData {
    tracing::warn!(error = %e, "task store");
    ErrorData::internal_error("the task store failed; see the server log", None)
}

fn not_found() -> ErrorData {
    ErrorData::invalid_params(
        "Failed to retrieve task: task not found (unknown, another client's, or expired)",
        None,
    )
}

impl Tasks {
    pub fn new(store: TaskStore, limits: TaskLimits) -> Self {
        Tasks {
            store,
            limits,
            running: Mutex::new(HashMap::new()),
        }
    }

    pub fn limits(&self) -> TaskLimits {
        self.limits
    }

    pub fn store(&self) -> &TaskStore {
        &self.store
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.limits.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// A new task of `owner` in `stage`, durably stored before this returns (so that `tasks/get`
    /// finds it at once, on any replica); `None` when the owner or the server has as many live
    /// tasks as allowed (the call then goes on as a plain call).
    async fn create(
        &self,
        owner: &Owner,
        tool: &str,
        api: usize,
        stage: Stage,
        poll_ms: u64,
        message: String,
    ) -> Result<Option<(Handle, CreateTaskResult)>, ErrorData> {
        let (mine, all) = self
            .store
            .counts(owner.digest())
            .await
            .map_err(store_error)?;
        if mine >= self.limits.per_owner || all >= self.limits.total {
            tracing::warn!(
                tool,
                mine,
                all,
                "task limit reached: the call is served without a task"
            );
            return Ok(None);
        }
        let mut raw = [0u8; 16];
        getrandom::fill(&mut raw)
            .map_err(|e| ErrorData::internal_error(format!("task id: {e}"), None))?;
        let id: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        let key = sha256_hex(id.as_bytes());
        let mut record = TaskRecord::new(
            owner.digest().to_string(),
            tool.to_string(),
            api,
            self.ttl_ms(),
            poll_ms,
        )
        .with_stage(stage);
        record.message = Some(message);
        self.store
            .put(&key, &record, record.expires())
            .await
            .map_err(store_error)?;
        let created = CreateTaskResult::new(record.task(&id));
        Ok(Some((Handle { id, key }, created)))
    }

    /// A task for an operation the API accepted (202) with its status at `status_url`.
    pub async fn accepted(
        &self,
        owner: &Owner,
        tool: &str,
        api: usize,
        status_url: &Url,
        retry_after: Option<Duration>,
    ) -> Result<Option<CreateTaskResult>, ErrorData> {
        let message = format!(
            "The API accepted the request and carries it out; its status is at {}.",
            shown(status_url)
        );
        Ok(self
            .create(
                owner,
                tool,
                api,
                Stage::Polling {
                    status_url: status_url.to_string(),
                },
                poll_interval_ms(retry_after),
                message,
            )
            .await?
            .map(|(_, c)| c))
    }

    /// A task for a call still in flight (`--task-after`): the caller runs the request and hands
    /// its end to [`Tasks::finish`]; `cancel` is the token `tasks/cancel` trips.
    pub async fn in_flight(
        &self,
        owner: &Owner,
        tool: &str,
        cancel: CancellationToken,
    ) -> Result<Option<(Handle, CreateTaskResult)>, ErrorData> {
        let created = self
            .create(
                owner,
                tool,
                0,
                Stage::Running,
                poll_interval_ms(None),
                "The request is still in flight to the API.".into(),
            )
            .await?;
        if let Some((h, _)) = &created
            && let Ok(mut r) = self.running.lock()
        {
            r.insert(h.key.clone(), cancel);
        }
        Ok(created)
    }

    /// A task whose call waits for the client's answer to `requests` (`--confirm`: the user's
    /// consent) before anything is sent; `call` is sealed in the record, for the owner only, and
    /// the answer is awaited for `wait` at most (and within the task's TTL). `None` when the
    /// owner or the server has as many live tasks as allowed.
    #[allow(clippy::too_many_arguments)]
    pub async fn awaiting_input(
        &self,
        owner: &Owner,
        tool: &str,
        api: usize,
        requests: &rmcp::model::InputRequests,
        call: PendingCall,
        wait: Duration,
        message: String,
    ) -> Result<Option<(Handle, CreateTaskResult)>, ErrorData> {
        let wait_ms = u64::try_from(wait.as_millis())
            .unwrap_or(u64::MAX)
            .min(self.ttl_ms());
        let deadline_ms = now_ms().saturating_add(wait_ms);
        let requests = serde_json::to_value(requests)
            .map_err(|e| ErrorData::internal_error(format!("input requests: {e}"), None))?;
        let created = self
            .create(
                owner,
                tool,
                api,
                Stage::InputRequired {
                    requests,
                    call,
                    deadline_ms,
                },
                poll_interval_ms(None),
                message,
            )
            .await?;
        if let Some((h, _)) = &created {
            self.store
                .put_input(&h.key, deadline_ms / 1000 + 1)
                .await
                .map_err(store_error)?;
        }
        Ok(created)
    }

    /// `tasks/update` of a task waiting for input: when `responses` holds an answer for the
    /// outstanding request `key` (one `is_answer` accepts; another shape is an invalid-params
    /// error) and this update is the first to claim it, the task moves to `working` (its call
    /// is the caller's to send or refuse, then to hand to [`Tasks::finish`]; `cancel` is what
    /// `tasks/cancel` trips meanwhile). `None`: nothing to act on (responses to keys that are not
    /// outstanding are ignored, as the extension says: another key, a task not waiting, an
    /// answer already given, a replay).
    pub async fn claim_input(
        &self,
        id: &str,
        owner: &Owner,
        responses: &rmcp::model::InputResponses,
        key_name: &str,
        is_answer: impl Fn(&Value) -> bool,
        cancel: CancellationToken,
    ) -> Result<Option<Claimed>, ErrorData> {
        let (key, mut record) = self.load(id, owner).await?;
        let (call, deadline_ms) = match &record.stage {
            Stage::InputRequired {
                call, deadline_ms, ..
            } => (call.clone(), *deadline_ms),
            _ => return Ok(None),
        };
        let Some(answer) = responses.get(key_name) else {
            return Ok(None);
        };
        if now_ms() >= deadline_ms {
            self.expire_input(&key, &mut record).await?;
            return Ok(None);
        }
        if !is_answer(answer) {
            return Err(ErrorData::invalid_params(
                format!(
                    "inputResponses.{key_name} is not an answer to the outstanding request (an elicitation result: action, content)"
                ),
                None,
            ));
        }
        if !self.store.take_input(&key).await.map_err(store_error)? {
            return Ok(None);
        }
        if let Ok(mut r) = self.running.lock() {
            r.insert(key.clone(), cancel);
        }
        record.stage = Stage::Running;
        record.message = Some("The client answered; the task goes on.".into());
        record.touch();
        self.store
            .put(&key, &record, record.expires())
            .await
            .map_err(store_error)?;
        Ok(Some(Claimed {
            handle: Handle {
                id: id.to_string(),
                key,
            },
            tool: record.tool.clone(),
            api: record.api,
            call,
            answer: answer.clone(),
        }))
    }

    /// Ends a task whose input was not given in time: nothing was sent.
    async fn expire_input(&self, key: &str, record: &mut TaskRecord) -> Result<(), ErrorData> {
        // Whoever takes the mark first ends it; a concurrent update finds it taken.
        let _ = self.store.take_input(key).await.map_err(store_error)?;
        let result = CallToolResult::error(vec![ContentBlock::text(format!(
            "Nobody answered the confirmation of `{}` in time; nothing was sent to the API. Call it again to be asked again.",
            record.tool
        ))]);
        record.stage = Stage::Completed {
            result: serde_json::to_value(&result).unwrap_or(Value::Null),
        };
        record.message = Some("The input was not given in time; nothing was sent.".into());
        record.touch();
        self.store
            .put(key, record, record.expires())
            .await
            .map_err(store_error)
    }

    /// Stores how an in-flight call ended (unless the task was cancelled meanwhile).
    pub async fn finish(&self, handle: &Handle, api: usize, end: Finished) {
        if let Ok(mut r) = self.running.lock() {
            r.remove(&handle.key);
        }
        let mut record = match self.store.get(&handle.key).await {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "task store: an in-flight call's answer is lost");
                return;
            }
        };
        if record.stage != Stage::Running {
            return;
        }
        match end {
            Finished::Result(result) => {
                record.stage = Stage::Completed {
                    result: serde_json::to_value(&result).unwrap_or(Value::Null),
                };
                record.message = Some("The API answered.".into());
            }
            Finished::Accepted {
                status_url,
                retry_after,
            } => {
                record.api = api;
                record.message = Some(format!(
                    "The API accepted the request and carries it out; its status is at {}.",
                    shown(&status_url)
                ));
                record.stage = Stage::Polling {
                    status_url: status_url.to_string(),
                };
                record.poll_ms = poll_interval_ms(retry_after);
                record.next_poll_ms = now_ms().saturating_add(record.poll_ms);
            }
            Finished::NotSent(result) => {
                record.stage = Stage::Completed {
                    result: serde_json::to_value(&result).unwrap_or(Value::Null),
                };
                record.message = Some("Nothing was sent to the API.".into());
            }
            Finished::Error(e) => {
                record.message = Some(e.message.to_string());
                record.stage = Stage::Failed {
                    error: serde_json::to_value(&e).unwrap_or(Value::Null),
                };
            }
        }
        record.touch();
        if let Err(e) = self.store.put(&handle.key, &record, record.expires()).await {
            tracing::warn!(error = %e, "task store: an in-flight call's answer is lost");
        }
    }

    async fn load(&self, id: &str, owner: &Owner) -> Result<(String, TaskRecord), ErrorData> {
        let key = sha256_hex(id.as_bytes());
        match self.store.get(&key).await {
            Ok(Some(r)) if r.owner == owner.digest() => Ok((key, r)),
            Ok(_) => Err(not_found()),
            // A record this key does not open is no task of this server's.
            Err(TaskStoreError::Store(super::store::StoreError::Sealed)) => Err(not_found()),
            Err(e) => Err(store_error(e)),
        }
    }

    /// `tasks/get`: the task as its record has it, after polling the API when it is time.
    pub async fn get(
        &self,
        id: &str,
        owner: &Owner,
        reader: &dyn StatusReader,
    ) -> Result<GetTaskResult, ErrorData> {
        let (key, mut record) = self.load(id, owner).await?;
        if let Stage::InputRequired { deadline_ms, .. } = &record.stage
            && now_ms() >= *deadline_ms
        {
            self.expire_input(&key, &mut record).await?;
        }
        if let Stage::Polling { status_url } = &record.stage
            && now_ms() >= record.next_poll_ms
        {
            let url = Url::parse(status_url).map_err(|e| {
                ErrorData::internal_error(format!("a stored status URL does not parse: {e}"), None)
            })?;
            self.poll(&mut record, &url, reader).await;
            record.touch();
            self.store
                .put(&key, &record, record.expires())
                .await
                .map_err(store_error)?;
        }
        Ok(GetTaskResult::new(record.detailed(id)))
    }

    /// Polls the status URL once and moves the record on as the answer says.
    async fn poll(&self, record: &mut TaskRecord, url: &Url, reader: &dyn StatusReader) {
        let Some(read) = reader.read(record.api, url).await else {
            let e = ErrorData::internal_error(
                format!(
                    "no tool of this server reads the operation's status at {} any more",
                    shown(url)
                ),
                None,
            );
            record.message = Some(e.message.to_string());
            record.stage = Stage::Failed {
                error: serde_json::to_value(&e).unwrap_or(Value::Null),
            };
            return;
        };
        record.poll_ms = poll_interval_ms(read.retry_after);
        record.next_poll_ms = now_ms().saturating_add(record.poll_ms);
        match verdict(read.status, read.result.structured_content.as_ref()) {
            Verdict::Working => {
                if let Some(next) = &read.accepted_at {
                    record.stage = Stage::Polling {
                        status_url: next.to_string(),
                    };
                }
                record.message = Some(format!(
                    "The API is carrying the operation out (`{}` says it is still running).",
                    read.tool
                ));
            }
            Verdict::Retry => {
                record.message = Some(format!(
                    "The last poll of the operation's status (`{}`) failed ({}); it is polled again.",
                    read.tool,
                    match read.status {
                        Some(s) => format!("HTTP {s}"),
                        None => "no answer".into(),
                    }
                ));
            }
            Verdict::Cancelled => {
                record.message = Some(format!("`{}` says the operation was cancelled.", read.tool));
                record.stage = Stage::Cancelled;
            }
            Verdict::Completed { is_error } => {
                let status = read.status;
                complete(record, read, is_error, status, reader);
            }
            Verdict::SeeOther => match read.see_other.clone() {
                Some(loc) => match reader.read(record.api, &loc).await {
                    Some(end) => {
                        let is_error = !matches!(
                            verdict(end.status, None),
                            Verdict::Completed { is_error: false }
                        ) || end.result.is_error == Some(true);
                        let status = end.status;
                        complete(record, end, is_error, status, reader);
                    }
                    None => {
                        let mut result = read.result;
                        result.content.push(ContentBlock::text(format!(
                            "[openapi-mcp: the operation ended; its result is at {}, which no tool of this server reads.]",
                            shown(&loc)
                        )));
                        complete_with(record, result, false, reader);
                    }
                },
                None => complete(record, read, true, Some(303), reader),
            },
        }
    }

    /// `tasks/cancel`: the API's cancel operation when it has one; the task is `cancelled`
    /// (a terminal task stays as it is: the same acknowledgement).
    pub async fn cancel(
        &self,
        id: &str,
        owner: &Owner,
        reader: &dyn StatusReader,
    ) -> Result<(), ErrorData> {
        let (key, mut record) = self.load(id, owner).await?;
        if record.stage.is_terminal() {
            return Ok(());
        }
        let message = match &record.stage {
            Stage::Polling { status_url } => match Url::parse(status_url) {
                Ok(url) => match reader.cancel(record.api, &url).await {
                    Some(r) if r.status.is_some_and(|s| (200..300).contains(&s)) => format!(
                        "Cancelled: the API's `{}` answered HTTP {}.",
                        r.tool,
                        r.status.unwrap_or_default()
                    ),
                    Some(r) => format!(
                        "Cancelled here; the API's `{}` answered {}, so the operation may still run.",
                        r.tool,
                        match r.status {
                            Some(s) => format!("HTTP {s}"),
                            None => "nothing".into(),
                        }
                    ),
                    None => "Cancelled here; the API has no operation that cancels it, so it may still run.".into(),
                },
                Err(_) => "Cancelled.".into(),
            },
            Stage::InputRequired { .. } => {
                // An answer arriving now finds the mark taken and sends nothing.
                self.store.take_input(&key).await.map_err(store_error)?;
                "Cancelled before the input was given; nothing was sent to the API.".into()
            }
            _ => {
                let token = self.running.lock().ok().and_then(|mut r| r.remove(&key));
                match token {
                    Some(t) => {
                        t.cancel();
                        "Cancelled: the request to the API was dropped (the API may have received it).".into()
                    }
                    None => "Cancelled: the request runs on another instance of this server, whose answer will be discarded.".into(),
                }
            }
        };
        record.stage = Stage::Cancelled;
        record.message = Some(message);
        record.touch();
        self.store
            .put(&key, &record, record.expires())
            .await
            .map_err(store_error)
    }

    /// `tasks/update` of a task that waits for no input: a known task's update is acknowledged
    /// (responses to keys that are not outstanding are ignored, as the extension says).
    pub async fn update(&self, id: &str, owner: &Owner) -> Result<(), ErrorData> {
        self.load(id, owner).await.map(|_| ())
    }
}

/// Ends `record` with the answer `read`.
fn complete(
    record: &mut TaskRecord,
    read: Read,
    is_error: bool,
    status: Option<u16>,
    reader: &dyn StatusReader,
) {
    let mut result = read.result;
    result.content.push(ContentBlock::text(format!(
        "[openapi-mcp: the API carried the request out in the background; this is the answer of its status operation `{}`{}. Do not repeat the call.]",
        read.tool,
        match status {
            Some(s) => format!(" (HTTP {s})"),
            None => String::new(),
        }
    )));
    complete_with(record, result, is_error, reader);
}

fn complete_with(
    record: &mut TaskRecord,
    mut result: CallToolResult,
    is_error: bool,
    reader: &dyn StatusReader,
) {
    if is_error {
        result.is_error = Some(true);
    }
    let result = reader.conform(&record.tool, result);
    record.message = Some(if is_error {
        "The operation ended with an error.".into()
    } else {
        "The operation ended.".into()
    });
    record.stage = Stage::Completed {
        result: serde_json::to_value(&result).unwrap_or(Value::Null),
    };
}

/// A URL as the task shows it: without query and fragment (status URLs can carry signed tokens).
pub fn shown(url: &Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// Whether `tasks` is worth an `Arc` clone (handy for the server's spawned finishers).
pub type SharedTasks = Arc<Tasks>;

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{TaskPayload, TaskStatus};
    use serde_json::json;

    /// One scripted answer: HTTP status, body, a 202's new status URL.
    type Answer = (Option<u16>, Value, Option<Url>);

    /// Answers reads from a script (the API's side), recording what was asked.
    #[derive(Default)]
    struct Script {
        reads: Mutex<Vec<Answer>>,
        asked: Mutex<Vec<String>>,
        cancels: Option<u16>,
    }

    impl Script {
        fn then(self, status: Option<u16>, body: Value) -> Self {
            self.reads.lock().unwrap().push((status, body, None));
            self
        }
    }

    impl StatusReader for Script {
        fn read<'a>(
            &'a self,
            _api: usize,
            url: &'a Url,
        ) -> futures::future::BoxFuture<'a, Option<Read>> {
            self.asked.lock().unwrap().push(format!("GET {url}"));
            let next = {
                let mut r = self.reads.lock().unwrap();
                if r.is_empty() {
                    None
                } else {
                    Some(r.remove(0))
                }
            };
            Box::pin(async move {
                let (status, body, accepted_at) = next?;
                Some(Read {
                    tool: "api_get_job".into(),
                    result: CallToolResult::structured(body),
                    status,
                    accepted_at,
                    retry_after: Some(Duration::from_secs(3)),
                    see_other: None,
                })
            })
        }

        fn cancel<'a>(
            &'a self,
            _api: usize,
            url: &'a Url,
        ) -> futures::future::BoxFuture<'a, Option<Read>> {
            self.asked.lock().unwrap().push(format!("CANCEL {url}"));
            let status = self.cancels;
            Box::pin(async move {
                status.map(|s| Read {
                    tool: "api_cancel_job".into(),
                    result: CallToolResult::success(vec![]),
                    status: Some(s),
                    accepted_at: None,
                    retry_after: None,
                    see_other: None,
                })
            })
        }
    }

    fn tasks() -> Tasks {
        Tasks::new(TaskStore::memory().unwrap(), TaskLimits::default())
    }

    /// Makes the task's next `tasks/get` poll the API (as if its poll interval had passed).
    async fn due(t: &Tasks, id: &str) {
        let key = sha256_hex(id.as_bytes());
        let mut r = t.store.get(&key).await.unwrap().unwrap();
        r.next_poll_ms = 0;
        t.store.put(&key, &r, r.expires()).await.unwrap();
    }

    fn url() -> Url {
        Url::parse("http://127.0.0.1:9/api/jobs/1?sig=s3cret").unwrap()
    }

    async fn start(t: &Tasks, owner: &Owner) -> String {
        let c = t
            .accepted(
                owner,
                "api_start_job",
                0,
                &url(),
                Some(Duration::from_secs(1)),
            )
            .await
            .unwrap()
            .unwrap();
        assert_eq!(c.task.poll_interval_ms, Some(1000));
        assert_eq!(c.task.status, TaskStatus::Working);
        let m = c.task.status_message.clone().unwrap();
        assert!(
            !m.contains("s3cret"),
            "the status URL's query is not shown: {m}"
        );
        c.task.task_id
    }

    #[tokio::test]
    async fn polls_follow_the_api_until_it_ends() {
        let t = tasks();
        let me = Owner::new(None, Some(b"Bearer a"), None);
        let id = start(&t, &me).await;
        let api = Script::default()
            .then(Some(503), json!({}))
            .then(Some(200), json!({"status": "running"}))
            .then(Some(200), json!({"status": "succeeded", "answer": 42}));
        // Within the poll interval: the record answers, the API is not read.
        let got = t.get(&id, &me, &api).await.unwrap();
        assert_eq!(got.task.status(), TaskStatus::Working);
        assert!(api.asked.lock().unwrap().is_empty());
        // A 503 is no end: still working, and the message says the poll failed.
        due(&t, &id).await;
        let got = t.get(&id, &me, &api).await.unwrap();
        assert_eq!(got.task.status(), TaskStatus::Working);
        assert!(got.task.task.status_message.unwrap().contains("HTTP 503"));
        assert_eq!(got.task.task.poll_interval_ms, Some(3000), "Retry-After: 3");
        due(&t, &id).await;
        let got = t.get(&id, &me, &api).await.unwrap();
        assert_eq!(got.task.status(), TaskStatus::Working);
        due(&t, &id).await;
        let got = t.get(&id, &me, &api).await.unwrap();
        let TaskPayload::Completed { result } = &got.task.payload else {
            panic!("{got:?}");
        };
        assert_eq!(result["structuredContent"]["answer"], 42);
        assert_eq!(result["isError"], false);
        // Terminal: no more reads.
        due(&t, &id).await;
        t.get(&id, &me, &api).await.unwrap();
        assert_eq!(api.asked.lock().unwrap().len(), 3);
    }

    #[tokio::test]
    async fn a_status_no_tool_reads_fails_the_task_with_a_protocol_error() {
        let t = tasks();
        let me = Owner::new(None, None, None);
        let id = start(&t, &me).await;
        due(&t, &id).await;
        // The script has no answer: no tool reads the URL (the spec was reloaded without it).
        let got = t.get(&id, &me, &Script::default()).await.unwrap();
        let TaskPayload::Failed { error } = &got.task.payload else {
            panic!("{got:?}");
        };
        assert_eq!(error["code"], -32603);
        let shown = Value::Object(error.clone()).to_string();
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[tokio::test]
    async fn tasks_are_their_owners_and_cancel_is_idempotent() {
        let t = tasks();
        let alice = Owner::new(Some("alice"), None, None);
        let mallory = Owner::new(Some("mallory"), None, None);
        let id = start(&t, &alice).await;
        let api = Script {
            cancels: Some(202),
            ..Script::default()
        };
        for e in [
            t.get(&id, &mallory, &api).await.unwrap_err(),
            t.cancel(&id, &mallory, &api).await.unwrap_err(),
            t.update(&id, &mallory).await.unwrap_err(),
            t.get("not-a-task", &alice, &api).await.unwrap_err(),
        ] {
            assert_eq!(e.code.0, -32602, "{e:?}");
        }
        t.cancel(&id, &alice, &api).await.unwrap();
        let got = t.get(&id, &alice, &api).await.unwrap();
        assert_eq!(got.task.status(), TaskStatus::Cancelled);
        assert!(got.task.task.status_message.unwrap().contains("HTTP 202"));
        // Again: the same acknowledgement, the API is not asked twice.
        t.cancel(&id, &alice, &api).await.unwrap();
        let cancels = api
            .asked
            .lock()
            .unwrap()
            .iter()
            .filter(|a| a.starts_with("CANCEL"))
            .count();
        assert_eq!(cancels, 1);
        // The same subject through another request is the same owner.
        assert_eq!(alice, Owner::new(Some("alice"), Some(b"Bearer x"), None));
    }

    #[tokio::test]
    async fn an_owner_has_a_bounded_number_of_tasks() {
        let t = Tasks::new(
            TaskStore::memory().unwrap(),
            TaskLimits {
                per_owner: 2,
                ..TaskLimits::default()
            },
        );
        let me = Owner::new(None, Some(b"Bearer a"), None);
        start(&t, &me).await;
        start(&t, &me).await;
        let third = t
            .accepted(&me, "api_start_job", 0, &url(), None)
            .await
            .unwrap();
        assert!(
            third.is_none(),
            "past the bound the call is served without a task"
        );
        let other = Owner::new(None, Some(b"Bearer b"), None);
        start(&t, &other).await;
    }

    #[tokio::test]
    async fn an_in_flight_call_stores_its_end() {
        let t = tasks();
        let me = Owner::new(None, None, Some("session-1"));
        let token = CancellationToken::new();
        let (h, created) = t
            .in_flight(&me, "api_report", token.clone())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(created.task.status, TaskStatus::Working);
        let api = Script::default();
        t.finish(
            &h,
            0,
            Finished::Result(CallToolResult::success(vec![ContentBlock::text("done")])),
        )
        .await;
        let got = t.get(&h.id, &me, &api).await.unwrap();
        assert_eq!(got.task.status(), TaskStatus::Completed);
        // A cancelled in-flight task trips its token, and a late answer does not revive it.
        let token = CancellationToken::new();
        let (h, _) = t
            .in_flight(&me, "api_report", token.clone())
            .await
            .unwrap()
            .unwrap();
        t.cancel(&h.id, &me, &api).await.unwrap();
        assert!(token.is_cancelled());
        t.finish(&h, 0, Finished::Result(CallToolResult::success(vec![])))
            .await;
        let got = t.get(&h.id, &me, &api).await.unwrap();
        assert_eq!(got.task.status(), TaskStatus::Cancelled);
    }

    fn confirm_requests() -> rmcp::model::InputRequests {
        serde_json::from_value(
            json!({"confirm": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Allow?", "requestedSchema": {"type": "object",
            "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}}}}),
        )
        .unwrap()
    }

    async fn waiting(t: &Tasks, me: &Owner) -> String {
        let call = PendingCall {
            args: json!({"petId": 3}).as_object().cloned().unwrap(),
            select: None,
        };
        let (h, created) = t
            .awaiting_input(
                me,
                "api_delete_pet",
                0,
                &confirm_requests(),
                call,
                Duration::from_secs(600),
                "waiting".into(),
            )
            .await
            .unwrap()
            .unwrap();
        assert_eq!(created.task.status, TaskStatus::InputRequired);
        h.id
    }

    fn responses(v: Value) -> rmcp::model::InputResponses {
        serde_json::from_value(v).unwrap()
    }

    /// The pending call is claimed once: by its owner, for the outstanding key, with an answer
    /// of the right shape; a replay, another key, another owner or a late answer get nothing.
    #[tokio::test]
    async fn input_is_claimed_once_by_its_owner() {
        let t = tasks();
        let me = Owner::new(None, Some(b"Bearer a"), None);
        let other = Owner::new(None, Some(b"Bearer b"), None);
        let id = waiting(&t, &me).await;
        let api = Script::default();
        let got = t.get(&id, &me, &api).await.unwrap();
        let TaskPayload::InputRequired { input_requests } = &got.task.payload else {
            panic!("{got:?}");
        };
        assert!(input_requests.contains_key("confirm"));
        let yes = responses(json!({"confirm": {"action": "accept", "content": {"confirm": true}}}));
        let ok = |v: &Value| v.get("action").is_some();
        let token = CancellationToken::new;
        let e = t
            .claim_input(&id, &other, &yes, "confirm", ok, token())
            .await
            .unwrap_err();
        assert_eq!(e.code.0, -32602);
        let none = t
            .claim_input(
                &id,
                &me,
                &responses(json!({"x": {}})),
                "confirm",
                ok,
                token(),
            )
            .await
            .unwrap();
        assert!(none.is_none(), "another key is ignored");
        let e = t
            .claim_input(
                &id,
                &me,
                &responses(json!({"confirm": {}})),
                "confirm",
                ok,
                token(),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code.0, -32602, "a malformed answer is refused");
        // Two at once: one claim.
        let (a, b) = tokio::join!(
            t.claim_input(&id, &me, &yes, "confirm", ok, token()),
            t.claim_input(&id, &me, &yes, "confirm", ok, token()),
        );
        let claims = [a.unwrap(), b.unwrap()];
        assert_eq!(claims.iter().filter(|c| c.is_some()).count(), 1);
        let claimed = claims.into_iter().flatten().next().unwrap();
        assert_eq!(claimed.tool, "api_delete_pet");
        assert_eq!(claimed.call.args["petId"], 3);
        let got = t.get(&id, &me, &api).await.unwrap();
        assert_eq!(got.task.status(), TaskStatus::Working);
        let replay = t
            .claim_input(&id, &me, &yes, "confirm", ok, token())
            .await
            .unwrap();
        assert!(replay.is_none());

        // Past its deadline: the task ends (isError, nothing sent) and an answer claims nothing.
        let id = waiting(&t, &me).await;
        let key = sha256_hex(id.as_bytes());
        let mut r = t.store.get(&key).await.unwrap().unwrap();
        if let Stage::InputRequired { deadline_ms, .. } = &mut r.stage {
            *deadline_ms = 0;
        }
        t.store.put(&key, &r, r.expires()).await.unwrap();
        let late = t
            .claim_input(&id, &me, &yes, "confirm", ok, token())
            .await
            .unwrap();
        assert!(late.is_none());
        let got = t.get(&id, &me, &api).await.unwrap();
        let TaskPayload::Completed { result } = &got.task.payload else {
            panic!("{got:?}");
        };
        assert_eq!(result["isError"], true);
        assert!(
            Value::Object(result.clone())
                .to_string()
                .contains("nothing was sent")
        );
    }
}
