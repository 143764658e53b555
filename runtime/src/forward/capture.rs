//! The raw exchange of a call, for a caller that needs more than the tool result: an Arazzo
//! workflow's step evaluates `$statusCode`, `$response.header.X` and `$response.body#/a` on
//! what the API answered, before the result is shaped (`--response compact`, `_select`, the
//! byte budget). [`capturing`] runs a call with a slot that [`Forwarder::call`] fills with the
//! last answer it read; outside [`capturing`] nothing is kept (one `try_with` per call).
//!
//! The body is as read (at most the forwarder's read cap), before scrubbing: the slot also
//! keeps the secrets the forwarder would scrub from that call's result, for the caller to
//! scrub what it shows ([`Captured::secrets`]).
//!
//! [`Forwarder::call`]: super::Forwarder::call

use std::cell::RefCell;

tokio::task_local! {
    static SLOT: RefCell<Option<Captured>>;
}

/// The last answer a call read.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    /// The request's URL (credentials in its query included: scrub before showing).
    pub url: String,
    pub status: u16,
    /// Response headers, names lower-cased, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body as read (cut at the read cap when longer).
    pub body: Vec<u8>,
    /// Whether the body was cut.
    pub cut: bool,
    /// What the forwarder scrubs from this call's result (credential values and their
    /// encodings), longest first.
    pub secrets: Vec<String>,
}

/// Runs `fut`, keeping the last answer a forwarder read in it.
pub async fn capturing<F: std::future::Future>(fut: F) -> (F::Output, Option<Captured>) {
    SLOT.scope(RefCell::new(None), async move {
        let out = fut.await;
        let captured = SLOT.with(|s| s.borrow_mut().take());
        (out, captured)
    })
    .await
}

/// Whether a caller is capturing (the forwarder copies nothing otherwise).
pub(crate) fn wanted() -> bool {
    SLOT.try_with(|_| ()).is_ok()
}

/// Keeps `captured` as the current call's answer (a no-op outside [`capturing`]).
pub(crate) fn keep(captured: impl FnOnce() -> Captured) {
    let _ = SLOT.try_with(|s| *s.borrow_mut() = Some(captured()));
}
