//! OpenTelemetry without the `otel` feature: the same calls as the real module, doing nothing
//! (traces are never on, so the call path never makes a span). A server built without it that
//! finds the OTLP variables set says so at start-up, once, and serves without traces (the
//! variables are often set for every service of a deployment, so this does not refuse to start).

/// The trace context a call runs in: empty.
#[derive(Clone, Debug, Default)]
pub struct Context;

impl Context {
    /// The current context: empty (as `opentelemetry::Context::current`).
    pub fn current() -> Self {
        Context
    }
}

/// Never on.
#[inline]
pub fn enabled() -> bool {
    false
}

/// There is no exporter to keep alive.
pub enum Guard {}

/// Never made: there is no exporter to build.
#[derive(Debug, thiserror::Error)]
#[error("OpenTelemetry: {0}")]
pub struct OtelError(String);

/// Whether the environment asks for traces (as the real module decides).
fn wanted(var: impl Fn(&str) -> Option<String>) -> bool {
    let set = |k: &str| var(k).is_some_and(|v| !v.trim().is_empty());
    let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let none = var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"));
    (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        && !disabled
        && !none
}

/// The message when the environment asks for traces of a server built without them.
pub const NOT_BUILT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT is set, but this server was built without the `otel` feature: no traces are exported (regenerate with `openapi-mcp generate --features otel`)";

/// Nothing to start; warns when the environment asks for traces.
pub fn init_from_env() -> Result<Option<Guard>, OtelError> {
    if wanted(|k| std::env::var(k).ok()) {
        tracing::warn!("{NOT_BUILT}");
    }
    Ok(None)
}

pub fn caller_context(
    _meta: Option<&serde_json::Map<String, serde_json::Value>>,
    _headers: Option<&http::HeaderMap>,
) -> Context {
    Context
}

pub fn call_span(_parent: &Context, _tool: &str) -> Context {
    Context
}

pub fn end_call(_cx: &Context, _outcome: &str, _op: Option<(&str, &str, Option<&str>)>) {}

pub fn step(_name: &'static str) -> Option<()> {
    None
}

pub fn upstream_span(_method: &str, _path_template: &str, _host: &str) -> Option<Context> {
    None
}

pub fn end_upstream(_cx: &Context, _status: Option<u16>) {}

pub fn inject(_cx: &Context) -> Vec<(String, String)> {
    Vec::new()
}

/// `future.with_context(cx)`: the future itself.
pub trait FutureExt: Sized {
    fn with_context(self, _cx: Context) -> Self {
        self
    }
}

impl<F: std::future::Future> FutureExt for F {}

#[cfg(test)]
mod tests {
    /// The same variables ask for traces as with the feature; the message names the feature.
    #[test]
    fn the_variables_are_read_as_with_the_feature() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_string())
            }
        };
        assert!(super::wanted(env(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://c:4318"
        )])));
        assert!(!super::wanted(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_SDK_DISABLED", "true")
        ])));
        assert!(!super::wanted(env(&[])));
        assert!(super::NOT_BUILT.contains("`otel` feature"));
    }
}
