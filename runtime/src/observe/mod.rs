//! Running it as a service: Prometheus metrics (`--metrics-listen`), the audit log
//! (`--audit-log`) and readiness (`/readyz`, `--ready-check`).
//!
//! Both are off by default, and then cost nothing: the server holds an [`Observe`] whose parts
//! are `None`, and the call path checks that first. When on:
//! - [`Metrics`] are `prometheus-client` counters, gauges and histograms, exposed in the text
//!   format on `/metrics`. Labels are bounded: a tool name (finite: the spec's) and an outcome
//!   (a closed set); never argument values or request paths.
//! - The [`AuditLog`] takes one [`AuditEntry`] per call into a bounded queue; a writer thread
//!   serializes them as JSON lines, in batches: it waits [`AUDIT_BATCH_WAIT`] after an entry
//!   arrives and writes everything that came meanwhile, so a call never wakes it while calls keep
//!   coming (a wake-up per call cost 20 µs of CPU per call over stdio). [`AuditLog::flush`] is a
//!   barrier that serving runs before it returns, so no entry is lost at shut-down. A full queue
//!   drops the entry (counted in `openapi_mcp_audit_dropped_total`) rather than make a call wait.
//!   Entries hold no argument values and no secrets: names, the method and path *template*,
//!   statuses, sizes and times.

#[cfg(feature = "metrics")]
mod metrics;
#[cfg(not(feature = "metrics"))]
#[path = "metrics_off.rs"]
mod metrics;
#[cfg(feature = "otel")]
pub mod otel;
#[cfg(not(feature = "otel"))]
#[path = "otel_off.rs"]
pub mod otel;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde::Serialize;

pub use metrics::Metrics;

/// How a call ended, as the `outcome` label and the audit log's `outcome` field say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A result that is not an error (an API answer of 2xx, or a discovery tool's answer).
    Ok,
    /// An error result with no API status to blame: a missing credential, a declined
    /// confirmation, an answer that does not match the output schema, an unknown operation.
    ToolError,
    /// The API answered with a non-2xx status of this class (1 to 5).
    Upstream(u8),
    /// The API did not answer within `--timeout`.
    Timeout,
    /// The API could not be reached (connection refused, DNS, TLS).
    Unreachable,
    /// The arguments failed the tool's input schema (or the tool is unknown): nothing was sent.
    Invalid,
    /// Refused by `--rate-limit` before it reached the server.
    RateLimited,
    /// The client cancelled the call while it was waiting for the API.
    Cancelled,
    /// `--confirm` asked the client for the user's answer (2026-07-28: the call comes again
    /// with it); nothing was sent yet.
    InputRequired,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::Upstream(1) => "upstream_1xx",
            Outcome::Upstream(2) => "upstream_2xx",
            Outcome::Upstream(3) => "upstream_3xx",
            Outcome::Upstream(4) => "upstream_4xx",
            Outcome::Upstream(_) => "upstream_5xx",
            Outcome::Timeout => "timeout",
            Outcome::Unreachable => "unreachable",
            Outcome::Invalid => "invalid",
            Outcome::RateLimited => "rate_limited",
            Outcome::Cancelled => "cancelled",
            Outcome::InputRequired => "input_required",
        }
    }

    /// The outcome of a call that reached the forwarder: its upstream status, whether the result
    /// is an error, and whether the exchange timed out or could not connect.
    pub fn of_call(
        status: Option<u16>,
        is_error: bool,
        timed_out: bool,
        unreachable: bool,
    ) -> Self {
        match status {
            _ if timed_out => Outcome::Timeout,
            Some(s) if (200..300).contains(&s) => {
                if is_error {
                    Outcome::ToolError
                } else {
                    Outcome::Ok
                }
            }
            Some(s) => Outcome::Upstream((s / 100).clamp(1, 5) as u8),
            None if unreachable => Outcome::Unreachable,
            None if is_error => Outcome::ToolError,
            None => Outcome::Ok,
        }
    }
}

/// The label of calls to a tool the server does not have (their names are the caller's).
pub const UNKNOWN_TOOL: &str = "(unknown)";

// ------------------------------------------------------------------------------- audit log

/// Who made a call, as far as the server can tell without argument values: the transport, a
/// digest of the MCP session id (never the id itself, which would let a log reader use the
/// session), and the peer's address.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Caller {
    pub transport: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// The `sub` of the caller's validated OAuth token (`--oauth-issuer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

impl Caller {
    pub fn stdio() -> Self {
        Caller {
            transport: "stdio",
            ..Caller::default()
        }
    }

    /// The caller of an HTTP request: its session (as a digest) and its peer address.
    pub fn http(headers: &http::HeaderMap, extensions: &http::Extensions) -> Self {
        Caller {
            transport: "http",
            session: headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .filter(|s| !s.is_empty())
                .map(session_digest),
            peer: extensions
                .get::<axum::extract::ConnectInfo<SocketAddr>>()
                .map(|c| c.0.to_string()),
            subject: extensions
                .get::<crate::oauth::Claims>()
                .and_then(|c| c.subject.clone()),
        }
    }
}

/// A keyed hash of a session id (the key is random per process): the same session gives the
/// same digest in one process's log, and the digest does not give the id back.
pub fn session_digest(id: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    static KEY: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    let mut h = KEY.get_or_init(Default::default).build_hasher();
    h.write(id.as_bytes());
    format!("{:016x}", h.finish())
}

/// A request id unique in this process's log (and, with a random start, across restarts).
pub fn next_request_id() -> String {
    static NEXT: std::sync::OnceLock<AtomicU64> = std::sync::OnceLock::new();
    let next = NEXT.get_or_init(|| {
        let mut b = [0u8; 8];
        let _ = getrandom::fill(&mut b);
        // The high half random, the low half a counter: ids stay ordered within a run.
        AtomicU64::new(u64::from_be_bytes(b) & 0xffff_ffff_0000_0000)
    });
    format!("{:016x}", next.fetch_add(1, Ordering::Relaxed))
}

/// One call, as the audit log records it. No argument values, no secrets.
#[derive(Clone, Debug, Serialize)]
pub struct AuditEntry {
    /// RFC 3339, UTC, milliseconds (filled in by the writer from `at`).
    #[serde(skip)]
    pub at: SystemTime,
    pub request_id: String,
    pub caller: Caller,
    /// The API's title.
    pub api: Arc<str>,
    /// The operation's tool name (also through `call_operation`), a discovery tool's name
    /// (search, describe), or [`UNKNOWN_TOOL`].
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<&'static str>,
    /// The path template (`/pets/{petId}`), never the filled-in path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    pub latency_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_ms: Option<f64>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub outcome: &'static str,
}

#[derive(Serialize)]
struct AuditLine<'a> {
    time: String,
    #[serde(flatten)]
    entry: &'a AuditEntry,
}

/// Entries waiting for the writer at most; beyond, new entries are dropped and counted.
pub const AUDIT_QUEUE: usize = 16_384;

/// Where the audit log goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditTarget {
    Stdout,
    File(PathBuf),
}

impl AuditTarget {
    /// `-` is standard output, anything else a file (appended to).
    pub fn parse(s: &str) -> Self {
        if s == "-" {
            AuditTarget::Stdout
        } else {
            AuditTarget::File(PathBuf::from(s))
        }
    }

    /// A file is created owner-only (0600 on Unix: the log names users, tools and arguments'
    /// shapes); an existing file keeps its mode (the operator's choice, e.g. a log shipper's
    /// group).
    fn open(&self) -> std::io::Result<Box<dyn Write + Send>> {
        Ok(match self {
            AuditTarget::Stdout => Box::new(std::io::stdout()),
            AuditTarget::File(p) => {
                let mut o = std::fs::OpenOptions::new();
                o.create(true).append(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
                Box::new(o.open(p)?)
            }
        })
    }
}

/// The audit log: a bounded queue to a writer thread. Cheap to clone.
#[derive(Clone)]
pub struct AuditLog {
    tx: std::sync::mpsc::SyncSender<AuditMsg>,
    reopen: Arc<AtomicBool>,
    metrics: Option<Arc<Metrics>>,
    warned: Arc<AtomicBool>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditLog")
    }
}

impl AuditLog {
    /// Opens `target` (a file is created if needed and appended to) and starts the writer.
    pub fn open(target: AuditTarget, metrics: Option<Arc<Metrics>>) -> std::io::Result<Self> {
        let out = target.open()?;
        let (tx, rx) = std::sync::mpsc::sync_channel::<AuditMsg>(AUDIT_QUEUE);
        let reopen = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&reopen);
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || write_entries(rx, target, out, flag))?;
        Ok(Self {
            tx,
            reopen,
            metrics,
            warned: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Queues an entry; never waits (a full queue drops it, counted and warned about once).
    pub fn record(&self, entry: AuditEntry) {
        if let Err(e) = self.tx.try_send(AuditMsg::Entry(Box::new(entry))) {
            if let Some(m) = &self.metrics {
                m.audit_entry_dropped();
            }
            if !self.warned.swap(true, Ordering::Relaxed) {
                let why = match e {
                    std::sync::mpsc::TrySendError::Full(_) => "the writer fell behind",
                    std::sync::mpsc::TrySendError::Disconnected(_) => "the writer stopped",
                };
                tracing::warn!(
                    "audit log: entries are being dropped ({why}); openapi_mcp_audit_dropped_total counts them"
                );
            }
        }
    }

    /// Waits (at most `timeout`) until every entry queued before this call is written and
    /// flushed. Blocking: call it off the async workers.
    pub fn flush(&self, timeout: Duration) {
        let (ack, done) = std::sync::mpsc::sync_channel(1);
        // Behind a full queue, the barrier waits its turn (within the timeout).
        if self.tx.send_timeout_compat(AuditMsg::Flush(ack), timeout) {
            let _ = done.recv_timeout(timeout);
        }
    }

    /// The file is opened again before the next entry is written (`SIGHUP`, after a rotation).
    pub fn reopen(&self) {
        self.reopen.store(true, Ordering::Relaxed);
    }

    /// Reopens the file on every `SIGHUP` (Unix), for log rotation by renaming.
    pub fn reopen_on_sighup(&self) {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut hup) = signal(SignalKind::hangup()) else {
                return;
            };
            let log = self.clone();
            tokio::spawn(async move {
                while hup.recv().await.is_some() {
                    log.reopen();
                }
            });
        }
    }
}

/// What the writer thread receives: an entry, or a barrier to acknowledge once everything
/// before it is flushed.
enum AuditMsg {
    Entry(Box<AuditEntry>),
    Flush(std::sync::mpsc::SyncSender<()>),
}

trait SendTimeout<T> {
    /// Sends, retrying a full queue until `timeout`; false when it could not.
    fn send_timeout_compat(&self, msg: T, timeout: Duration) -> bool;
}

impl<T> SendTimeout<T> for std::sync::mpsc::SyncSender<T> {
    fn send_timeout_compat(&self, mut msg: T, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            match self.try_send(msg) {
                Ok(()) => return true,
                Err(std::sync::mpsc::TrySendError::Disconnected(_)) => return false,
                Err(std::sync::mpsc::TrySendError::Full(m)) => {
                    if std::time::Instant::now() >= deadline {
                        return false;
                    }
                    msg = m;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
    }
}

/// How long the writer waits after an entry before it writes what has come: while calls keep
/// coming, senders never find it blocked on the queue (a futex wake-up per call would sit on the
/// call path), and each batch is one write.
pub const AUDIT_BATCH_WAIT: Duration = Duration::from_millis(5);

fn write_entries(
    rx: std::sync::mpsc::Receiver<AuditMsg>,
    target: AuditTarget,
    out: Box<dyn Write + Send>,
    reopen: Arc<AtomicBool>,
) {
    let mut w = AuditWriter {
        out: std::io::BufWriter::with_capacity(64 * 1024, out),
        target,
        reopen,
        failed: false,
        line: Vec::with_capacity(512),
    };
    // Idle: block until a message comes. Then wait AUDIT_BATCH_WAIT, write what came meanwhile
    // and flush; again while entries keep coming, then block again.
    let mut acks: Vec<std::sync::mpsc::SyncSender<()>> = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut msg = Some(first);
        loop {
            if msg.is_none() {
                std::thread::sleep(AUDIT_BATCH_WAIT);
            }
            let mut wrote = 0usize;
            let mut gone = false;
            loop {
                let m = match msg.take() {
                    Some(m) => m,
                    None => match rx.try_recv() {
                        Ok(m) => m,
                        Err(std::sync::mpsc::TryRecvError::Empty) => break,
                        Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                            gone = true;
                            break;
                        }
                    },
                };
                match m {
                    AuditMsg::Entry(e) => {
                        w.write(*e);
                        wrote += 1;
                    }
                    AuditMsg::Flush(ack) => acks.push(ack),
                }
            }
            if wrote > 0 || !acks.is_empty() {
                w.flush();
            }
            for ack in acks.drain(..) {
                let _ = ack.try_send(());
            }
            if gone {
                return;
            }
            if wrote == 0 {
                break;
            }
        }
    }
    w.flush();
}

struct AuditWriter {
    out: std::io::BufWriter<Box<dyn Write + Send>>,
    target: AuditTarget,
    reopen: Arc<AtomicBool>,
    failed: bool,
    line: Vec<u8>,
}

impl AuditWriter {
    fn write(&mut self, entry: AuditEntry) {
        if self.reopen.swap(false, Ordering::Relaxed) {
            let _ = self.out.flush();
            match self.target.open() {
                Ok(w) => self.out = std::io::BufWriter::with_capacity(64 * 1024, w),
                Err(e) => tracing::warn!("audit log: reopening failed ({e}); writing on"),
            }
        }
        self.line.clear();
        let item = AuditLine {
            time: rfc3339(entry.at),
            entry: &entry,
        };
        if serde_json::to_writer(&mut self.line, &item).is_ok() {
            self.line.push(b'\n');
            if let Err(e) = self.out.write_all(&self.line) {
                self.failed_once(&e);
            }
        }
    }

    fn flush(&mut self) {
        if let Err(e) = self.out.flush() {
            self.failed_once(&e);
        }
    }

    fn failed_once(&mut self, e: &std::io::Error) {
        if !std::mem::replace(&mut self.failed, true) {
            tracing::warn!("audit log: writing failed ({e})");
        }
    }
}

/// Milliseconds, to the microsecond (as the audit log writes them).
pub fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// `2026-11-26T04:15:47.123Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

// ------------------------------------------------------------------------------- readiness

/// Whether `/readyz` says ready: the tool set is loaded (always, once HTTP serves) and, with
/// `--ready-check`, every upstream answered once. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Readiness {
    ready: Arc<AtomicBool>,
}

impl Default for Readiness {
    fn default() -> Self {
        Self::ready()
    }
}

impl Readiness {
    pub fn ready() -> Self {
        Self {
            ready: Arc::new(AtomicBool::new(true)),
        }
    }

    pub fn not_yet() -> Self {
        Self {
            ready: Arc::new(AtomicBool::new(false)),
        }
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// `--ready-check`: probes each of `upstreams` with a `HEAD` (no credentials, `timeout` each)
    /// until every one has answered with any HTTP status once, then says ready. Connection
    /// errors and timeouts are retried every second.
    pub fn probe(&self, upstreams: Vec<url::Url>, timeout: Duration) {
        let me = self.clone();
        tokio::spawn(async move {
            let client = match reqwest::Client::builder()
                .timeout(timeout)
                .redirect(reqwest::redirect::Policy::none())
                .build()
            {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!("--ready-check: cannot build an HTTP client ({e})");
                    return;
                }
            };
            let mut waiting = upstreams;
            loop {
                let mut still = Vec::new();
                for u in waiting {
                    match client.head(u.clone()).send().await {
                        Ok(_) => {}
                        Err(_) => still.push(u),
                    }
                }
                if still.is_empty() {
                    me.set_ready();
                    tracing::info!("--ready-check: every upstream answered; ready");
                    return;
                }
                waiting = still;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
}

/// Metrics and the audit log of a server: each `None` when off (the default).
#[derive(Clone, Debug, Default)]
pub struct Observe {
    pub metrics: Option<Arc<Metrics>>,
    pub audit: Option<AuditLog>,
    /// OpenTelemetry traces are exported ([`crate::observe::otel`]).
    pub traces: bool,
}

impl Observe {
    pub fn is_on(&self) -> bool {
        self.metrics.is_some() || self.audit.is_some() || self.traces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(i: usize) -> AuditEntry {
        AuditEntry {
            at: SystemTime::now(),
            request_id: next_request_id(),
            caller: Caller::stdio(),
            api: Arc::from("API"),
            tool: format!("tool_{i}"),
            operation_id: None,
            method: Some("GET"),
            path: Some("/x".into()),
            status: Some(200),
            latency_ms: 1.0,
            upstream_ms: None,
            bytes_sent: 0,
            bytes_received: 0,
            outcome: "ok",
        }
    }

    #[test]
    fn flush_writes_every_entry_queued_before_it() {
        let path = std::env::temp_dir().join(format!(
            "openapi-mcp-audit-{}-{}.jsonl",
            std::process::id(),
            next_request_id()
        ));
        let log = AuditLog::open(AuditTarget::File(path.clone()), None).expect("open");
        // Entries in several batches: the writer is mid-wait for most of them.
        for round in 0..3 {
            for i in 0..50 {
                log.record(entry(round * 50 + i));
            }
            log.flush(Duration::from_secs(5));
            let text = std::fs::read_to_string(&path).expect("read");
            assert_eq!(text.lines().count(), (round + 1) * 50, "round {round}");
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let last: serde_json::Value =
            serde_json::from_str(text.lines().last().expect("a line")).expect("JSON line");
        assert_eq!(last["tool"], "tool_149");
        let _ = std::fs::remove_file(path);
    }

    /// #36 item 10: the audit log (users, tools, outcomes) is created readable by its owner
    /// only, not with the umask's world-readable default.
    #[cfg(unix)]
    #[test]
    fn the_audit_log_is_created_owner_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let path = std::env::temp_dir().join(format!(
            "openapi-mcp-audit-mode-{}-{}.jsonl",
            std::process::id(),
            next_request_id()
        ));
        let log = AuditLog::open(AuditTarget::File(path.clone()), None).expect("open");
        log.record(entry(1));
        log.flush(Duration::from_secs(5));
        let mode = std::fs::metadata(&path)
            .expect("created")
            .permissions()
            .mode();
        let _ = std::fs::remove_file(&path);
        assert_eq!(mode & 0o777, 0o600, "mode {:o}", mode & 0o777);
    }

    #[test]
    fn rfc3339_dates() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_666_547_123);
        assert_eq!(rfc3339(t), "2026-11-26T04:15:47.123Z");
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn outcomes_by_status() {
        assert_eq!(
            Outcome::of_call(Some(200), false, false, false),
            Outcome::Ok
        );
        assert_eq!(
            Outcome::of_call(Some(200), true, false, false),
            Outcome::ToolError
        );
        assert_eq!(
            Outcome::of_call(Some(404), true, false, false).as_str(),
            "upstream_4xx"
        );
        assert_eq!(
            Outcome::of_call(Some(503), true, false, false).as_str(),
            "upstream_5xx"
        );
        assert_eq!(Outcome::of_call(None, true, true, false), Outcome::Timeout);
        assert_eq!(
            Outcome::of_call(None, true, false, true),
            Outcome::Unreachable
        );
        assert_eq!(
            Outcome::of_call(None, true, false, false),
            Outcome::ToolError
        );
    }

    #[test]
    fn metrics_text_names_the_counts() {
        let m = Metrics::new();
        m.count_call(None, "get_pet", Outcome::Ok);
        m.count_call(None, "get_pet", Outcome::Ok);
        m.count_call(None, "get_pet", Outcome::Upstream(4));
        let crm: Arc<str> = Arc::from("crm");
        m.count_call(Some(&crm), "crm_get_contact", Outcome::Ok);
        m.reloaded(false);
        let text = m.encode();
        assert!(
            text.contains(
                r#"openapi_mcp_tool_calls_total{api="crm",tool="crm_get_contact",outcome="ok"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"openapi_mcp_tool_calls_total{tool="get_pet",outcome="ok"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"openapi_mcp_tool_calls_total{tool="get_pet",outcome="upstream_4xx"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"openapi_mcp_spec_reloads_total{result="error"} 1"#),
            "{text}"
        );
    }

    #[test]
    fn session_digests_are_stable_and_do_not_contain_the_id() {
        let a = session_digest("3f1c-secret-session");
        assert_eq!(a, session_digest("3f1c-secret-session"));
        assert_ne!(a, session_digest("another"));
        assert!(!a.contains("secret"));
    }
}
