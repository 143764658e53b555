//! Logging to stderr (or a file), queued while serving so a slow terminal never stalls a call.

/// Whether log lines go through the queue of [`init_logging`] (while serving) or are written in
/// place.
static LOGS_QUEUED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Log lines are queued from its creation (once the `serving` line is out) until it is dropped
/// (serving ended). (Over HTTP only: without the `http` feature nothing queues.)
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(super) struct QueuedLogs;

impl QueuedLogs {
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(super) fn start() -> Self {
        LOGS_QUEUED.store(true, std::sync::atomic::Ordering::Relaxed);
        QueuedLogs
    }
}

impl Drop for QueuedLogs {
    fn drop(&mut self) {
        LOGS_QUEUED.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Keeps the log writer's thread until it is dropped, then writes what is queued (hold it until
/// the program returns).
#[must_use = "log lines still queued are lost unless the guard lives until the program returns"]
pub struct LogGuard(#[allow(dead_code)] Option<tracing_appender::non_blocking::WorkerGuard>);

/// Logs to stderr: `info` by default (rmcp's own lines only as errors), `-v` debug, `-vv` trace;
/// `RUST_LOG` overrides.
///
/// While a server serves over HTTP ([`QueuedLogs`]), lines go through a queue to a writer thread that
/// writes each batch it finds queued in one `write` (a buffered stderr flushed when the queue is
/// empty), so a call's log line costs the serving threads no system call, and a stalled reader of
/// stderr (a full pipe, a slow log collector) never stalls a call: past 128,000 queued lines,
/// lines are dropped instead. Before that (start-up warnings, then the `serving` line printed
/// directly) and after it, lines are written in place, so they keep their order with what the
/// program prints itself.
pub fn init_logging(verbose: u8) -> LogGuard {
    use tracing_subscriber::EnvFilter;
    // rmcp's own lines (handshakes, stream ends, a warning for every error answered to a client,
    // such as an unknown tool) are noise for users at the default level; -v shows them.
    let default = match verbose {
        0 => "info,rmcp=error",
        1 => "debug,rmcp=info",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(true)
        .thread_name("openapi-mcp-log")
        .finish(std::io::BufWriter::new(std::io::stderr()));
    use tracing_subscriber::fmt::writer::MakeWriterExt as _;
    let writer = writer
        .with_filter(|_| LOGS_QUEUED.load(std::sync::atomic::Ordering::Relaxed))
        .or_else(std::io::stderr);
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init()
        .is_ok();
    LogGuard(installed.then_some(guard))
}
