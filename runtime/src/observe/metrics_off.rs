//! [`Metrics`] without the `metrics` feature: the same calls, counting nothing. No server
//! built without it makes one (`--metrics-listen` is refused at start-up, naming the feature).

use std::sync::Arc;
use std::time::Duration;

use super::Outcome;

/// The server's metrics: none without the `metrics` feature.
#[derive(Debug, Default)]
pub struct Metrics;

impl Metrics {
    pub fn new() -> Self {
        Metrics
    }

    /// Nothing to expose.
    pub fn encode(&self) -> String {
        String::new()
    }

    pub fn count_call(&self, _api: Option<&Arc<str>>, _tool: &str, _outcome: Outcome) {}

    pub fn call_started(&self) {}

    pub fn call_ended(&self, _elapsed: Duration) {}

    pub fn upstream(&self, _took: Duration, _sent: u64, _received: u64) {}

    pub fn reloaded(&self, _ok: bool) {}

    pub fn auth_failed(&self) {}

    pub fn audit_entry_dropped(&self) {}
}
