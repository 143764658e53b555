//! [`Metrics`]: `prometheus-client` counters, gauges and histograms (the `metrics` feature).

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

use super::Outcome;

/// `api` (only when the server serves several APIs: one of their names from the config),
/// `tool`, `outcome`.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct CallLabels {
    api: Option<Arc<str>>,
    tool: String,
    outcome: &'static str,
}

impl EncodeLabelSet for CallLabels {
    fn encode(
        &self,
        encoder: &mut prometheus_client::encoding::LabelSetEncoder,
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeLabel;
        if let Some(api) = &self.api {
            ("api", &**api).encode(encoder.encode_label())?;
        }
        ("tool", self.tool.as_str()).encode(encoder.encode_label())?;
        ("outcome", self.outcome).encode(encoder.encode_label())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

/// Latency buckets, in seconds: 1 ms to 30 s (the default `--timeout`).
const LATENCY_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// The server's Prometheus metrics (see the README's "Running it as a service").
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    call_seconds: Histogram,
    upstream_seconds: Histogram,
    in_flight: Gauge,
    sent_bytes: Counter,
    received_bytes: Counter,
    reloads: Family<ResultLabels, Counter>,
    auth_failures: Counter,
    audit_dropped: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("openapi_mcp");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "tool_calls",
            "Tool calls by tool and outcome (ok, tool_error, upstream_4xx/5xx/..., timeout, unreachable, invalid, rate_limited, cancelled)",
            calls.clone(),
        );
        let call_seconds = Histogram::new(LATENCY_BUCKETS);
        registry.register_with_unit(
            "tool_call_duration",
            "Time from a tools/call request to its result (end to end, in the server)",
            Unit::Seconds,
            call_seconds.clone(),
        );
        let upstream_seconds = Histogram::new(LATENCY_BUCKETS);
        registry.register_with_unit(
            "upstream_request_duration",
            "Time the API took for a call: sending the request and reading the answer, retries included",
            Unit::Seconds,
            upstream_seconds.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "tool_calls_in_flight",
            "Tool calls being served now",
            in_flight.clone(),
        );
        let sent_bytes = Counter::default();
        registry.register_with_unit(
            "upstream_sent",
            "Request body bytes sent to the API",
            Unit::Bytes,
            sent_bytes.clone(),
        );
        let received_bytes = Counter::default();
        registry.register_with_unit(
            "upstream_received",
            "Response body bytes read from the API",
            Unit::Bytes,
            received_bytes.clone(),
        );
        let reloads = Family::<ResultLabels, Counter>::default();
        registry.register(
            "spec_reloads",
            "Spec reloads under --watch, by result (ok, error: the previous tools are kept)",
            reloads.clone(),
        );
        let auth_failures = Counter::default();
        registry.register(
            "auth_failures",
            "HTTP requests refused for a missing or wrong --auth-token bearer token",
            auth_failures.clone(),
        );
        let audit_dropped = Counter::default();
        registry.register(
            "audit_dropped",
            "Audit log entries dropped because the writer fell behind (queue full)",
            audit_dropped.clone(),
        );
        Self {
            registry,
            calls,
            call_seconds,
            upstream_seconds,
            in_flight,
            sent_bytes,
            received_bytes,
            reloads,
            auth_failures,
            audit_dropped,
        }
    }

    /// The metrics in the Prometheus text exposition format (OpenMetrics flavour).
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(4096);
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// A call of `tool` (a name of the tool set, or [`UNKNOWN_TOOL`]) of API `api` (when
    /// several are served) ended as `outcome`.
    pub fn count_call(&self, api: Option<&Arc<str>>, tool: &str, outcome: Outcome) {
        self.calls
            .get_or_create(&CallLabels {
                api: api.cloned(),
                tool: tool.to_string(),
                outcome: outcome.as_str(),
            })
            .inc();
    }

    pub fn call_started(&self) {
        self.in_flight.inc();
    }

    pub fn call_ended(&self, elapsed: Duration) {
        self.in_flight.dec();
        self.call_seconds.observe(elapsed.as_secs_f64());
    }

    pub fn upstream(&self, took: Duration, sent: u64, received: u64) {
        self.upstream_seconds.observe(took.as_secs_f64());
        self.sent_bytes.inc_by(sent);
        self.received_bytes.inc_by(received);
    }

    pub fn reloaded(&self, ok: bool) {
        self.reloads
            .get_or_create(&ResultLabels {
                result: if ok { "ok" } else { "error" },
            })
            .inc();
    }

    pub fn auth_failed(&self) {
        self.auth_failures.inc();
    }

    /// An audit entry was dropped (the writer fell behind).
    pub fn audit_entry_dropped(&self) {
        self.audit_dropped.inc();
    }
}
