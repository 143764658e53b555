//! Progress on long calls: when the client sent a `progressToken` with `tools/call`, a call the
//! API has not answered after [`FIRST`] gets a `notifications/progress` every [`EVERY`] until it
//! does. Both eras: in 2025-11-25 the notification goes to the session (rmcp routes it to the
//! request's stream), in 2026-07-28 it flows on the response stream of the request it concerns.
//! The total is unknown (an HTTP call has no steps), so `progress` counts the notifications (it
//! must increase with each one, as the revisions require); the message says what is being waited
//! for and for how long.

use std::future::Future;
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;

/// Calls that answer sooner send no progress at all.
pub const FIRST: Duration = Duration::from_secs(1);
/// The interval between two notifications after the first.
pub const EVERY: Duration = Duration::from_secs(1);

/// Runs `call`, sending progress notifications while it is pending if the request asked for them
/// (`what` names the HTTP request, for the message).
pub async fn while_pending<F: Future>(
    context: &RequestContext<RoleServer>,
    what: impl FnOnce() -> String,
    call: F,
) -> F::Output {
    let Some(token) = context.meta.get_progress_token() else {
        return call.await;
    };
    let started = Instant::now();
    let what = what();
    let mut call = std::pin::pin!(call);
    let mut next = tokio::time::Instant::now() + FIRST;
    let mut sent = 0u32;
    loop {
        tokio::select! {
            out = &mut call => return out,
            _ = tokio::time::sleep_until(next) => {
                let waited = started.elapsed();
                sent += 1;
                let param = ProgressNotificationParam::new(token.clone(), f64::from(sent))
                    .with_message(format!("waiting for the API to answer {what} ({} s)", waited.as_secs()));
                // A client gone or a stream closed only ends the notifications, not the call
                // (cancellation has its own path).
                if context.peer.notify_progress(param).await.is_err() {
                    return call.await;
                }
                next += EVERY;
            }
        }
    }
}
