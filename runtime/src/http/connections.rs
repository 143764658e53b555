//! The HTTP accept loop, with the limits `axum::serve` does not set: a cap on open connections
//! (at the cap the loop stops accepting, so new clients wait in the listen backlog instead of
//! the process running out of descriptors and failing everyone) and a header-read timeout,
//! which also bounds how long an idle keep-alive connection waits for its next request and how
//! long a client may trickle a request's headers: silent sockets give their slot back within it.
//! On Unix the soft open-files limit is raised to the hard one at start, and the cap kept under
//! half of it (each call may hold an upstream socket too).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::connect_info::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Limits of [`serve`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Open connections at most.
    pub max: usize,
    /// A request's headers must arrive within this, and an idle connection is closed after it.
    pub header_read_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max: 4096,
            header_read_timeout: Duration::from_secs(10),
        }
    }
}

/// Raises the soft open-files limit to the hard one and returns the connection cap that fits:
/// `wanted`, at most half the soft limit (and at least 16).
fn fit_to_descriptors(wanted: usize) -> usize {
    #[cfg(unix)]
    {
        use nix::sys::resource::{Resource, getrlimit, setrlimit};
        let Ok((mut soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
            return wanted;
        };
        if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
            soft = hard;
        }
        let fits = usize::try_from(soft / 2).unwrap_or(usize::MAX).max(16);
        if fits < wanted {
            tracing::warn!(
                "--max-connections {wanted} is more than half the open-files limit ({soft}): serving at most {fits} connections at once"
            );
        }
        wanted.min(fits)
    }
    #[cfg(not(unix))]
    wanted
}

const KEEP_ALIVE: http::HeaderName = http::HeaderName::from_static("keep-alive");

/// `Keep-Alive: timeout=N`, N a second less than the idle timeout (whole seconds, at least 1): a
/// client that believes it reuses the connection in time.
fn keep_alive_header(idle: Duration) -> http::HeaderValue {
    let secs = idle.as_secs().saturating_sub(1).max(1);
    http::HeaderValue::from_str(&format!("timeout={secs}"))
        .unwrap_or_else(|_| http::HeaderValue::from_static("timeout=1"))
}

/// Serves `app` on `listener` until `stop`, then lets open connections finish their requests.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let max = fit_to_descriptors(limits.max.max(1));
    let keep_alive = keep_alive_header(limits.header_read_timeout);
    let slots = Arc::new(Semaphore::new(max));
    // Connections hold `closed_rx` until they end; `stopping` tells them to shut down.
    let (stopping_tx, stopping_rx) = watch::channel(false);
    let (closed_tx, closed_rx) = watch::channel(());
    loop {
        // At the cap, wait for a slot before accepting: clients queue in the listen backlog.
        let slot = tokio::select! {
            _ = stop.cancelled() => break,
            slot = Arc::clone(&slots).acquire_owned() => match slot {
                Ok(s) => s,
                Err(_) => break,
            },
        };
        let (tcp, peer) = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors (EMFILE) and the like: back off instead of spinning.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let app = app.clone();
        let keep_alive = keep_alive.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            let app = app.clone();
            let keep_alive = keep_alive.clone();
            async move {
                let mut response = app
                    .oneshot(req.map(axum::body::Body::new))
                    .await
                    .unwrap_or_else(|e| match e {});
                // Announce when an idle connection will be closed, so clients that pool
                // connections (Node's undici reads this) retire it before instead of reusing a
                // socket this side is closing.
                let headers = response.headers_mut();
                if !headers.contains_key(http::header::CONNECTION) {
                    headers.insert(KEEP_ALIVE, keep_alive);
                }
                Ok::<_, Infallible>(response)
            }
        });
        let mut stopping = stopping_rx.clone();
        let closed = closed_rx.clone();
        tokio::spawn(async move {
            // HTTP/1.1 only (what MCP clients speak over http://): protocol detection would read
            // the first bytes with no timeout at all.
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .serve_connection(TokioIo::new(tcp), service)
                .with_upgrades();
            let mut conn = std::pin::pin!(conn);
            let result = tokio::select! {
                result = conn.as_mut() => result,
                // Stopping (or the loop is gone): finish the requests in flight, then close.
                _ = stopping.changed() => {
                    conn.as_mut().graceful_shutdown();
                    conn.as_mut().await
                }
            };
            if let Err(e) = result {
                tracing::debug!("connection from {peer}: {e}");
            }
            drop(closed);
            drop(slot);
        });
    }
    drop(listener);
    let _ = stopping_tx.send(true);
    drop(closed_rx);
    closed_tx.closed().await;
    Ok(())
}
