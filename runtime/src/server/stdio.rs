//! The stdio transport (always built): one MCP session over stdin/stdout; and [`ServeError`],
//! what serving over stdio or HTTP fails with.

use std::net::SocketAddr;
use std::time::Duration;

use rmcp::ServiceExt;

use super::ProxyServer;

/// Why serving failed (stdio or HTTP).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("MCP session failed to start: {0}")]
    Init(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("HTTP server failed: {0}")]
    Http(std::io::Error),
}

/// Serves one MCP session over stdin/stdout until stdin closes.
///
/// When both are pipes (how MCP clients launch servers) they are driven by the IO reactor
/// (`rmcp::transport::stdio_pipes`, non-blocking descriptors of their own) instead of tokio's
/// `Stdin`/`Stdout`, which hand every read and write to the blocking thread pool; anything else
/// (a terminal, a file, a socket) falls back to those.
pub async fn serve_stdio(server: ProxyServer) -> Result<(), ServeError> {
    warm_up_later(&server);
    let running = server
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|e| ServeError::Init(e.to_string()))?;
    let reason = running.waiting().await;
    tracing::debug!(?reason, "stdio session ended");
    Ok(())
}

/// Above this many operations the validators are compiled on first use only: compiling all of
/// GitHub's 1,223 at start-up costs ~14 MB of memory for tools most sessions never call.
const EAGER_VALIDATORS_MAX: usize = 256;

/// Compiles the argument validators in the background once the start-up burst is past: a client
/// connects, initializes and lists the tools right after spawning the server, and compiling
/// every validator at once would compete with that first `tools/list` for the CPU. A call that
/// comes earlier (or any call, for a spec of more than [`EAGER_VALIDATORS_MAX`] operations)
/// compiles its own validator.
pub(crate) fn warm_up_later(server: &ProxyServer) {
    if server.state().set.tools.len() > EAGER_VALIDATORS_MAX {
        return;
    }
    let server = server.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        server.warm_up();
    });
}
