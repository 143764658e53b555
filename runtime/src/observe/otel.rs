//! OpenTelemetry traces: a span per tool call (`tools/call <tool>`, kind server) with children for
//! argument validation, each upstream HTTP request (kind client, which carries `traceparent` to
//! the API) and the mapping of its response, exported over OTLP/HTTP by the official SDK.
//!
//! On only when the standard variables ask for it (`OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, unless `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none`); off, each instrumented place costs one atomic load. W3C trace
//! context arriving with a call (the `traceparent`/`tracestate` keys of the request's `_meta`,
//! else the HTTP request's headers) is continued. Spans carry the tool, the operation's method and
//! path template, the upstream status and the outcome: never argument values, URLs with their
//! query, or headers.

use std::sync::atomic::{AtomicBool, Ordering};

pub use opentelemetry::Context;
use opentelemetry::KeyValue;
use opentelemetry::global::{self, BoxedSpan, BoxedTracer};
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer, TracerProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;

pub use opentelemetry::context::FutureExt;

static ON: AtomicBool = AtomicBool::new(false);

/// Whether traces are exported (set once by [`init_from_env`]).
#[inline]
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Keeps the exporter alive; flushes the spans still queued when dropped (at exit).
pub struct Guard(SdkTracerProvider);

impl Drop for Guard {
    fn drop(&mut self) {
        ON.store(false, Ordering::Relaxed);
        if let Err(e) = self.0.shutdown() {
            tracing::warn!("OpenTelemetry: flushing the last spans failed: {e}");
        }
    }
}

/// Why the standard variables did not give an exporter.
#[derive(Debug, thiserror::Error)]
#[error("OpenTelemetry: {0}")]
pub struct OtelError(String);

/// Whether the environment asks for traces: an OTLP endpoint is set and the SDK is not disabled.
fn wanted(var: impl Fn(&str) -> Option<String>) -> bool {
    let set = |k: &str| var(k).is_some_and(|v| !v.trim().is_empty());
    let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let none = var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"));
    (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        && !disabled
        && !none
}

/// Starts exporting when the environment asks for it (see the module docs); `Ok(None)` when it
/// does not. Call once, at start-up, before serving.
pub fn init_from_env() -> Result<Option<Guard>, OtelError> {
    if !wanted(|k| std::env::var(k).ok()) {
        return Ok(None);
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
        .map_err(|e| OtelError(e.to_string()))?;
    let mut resource = opentelemetry_sdk::Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("openapi-mcp");
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    global::set_tracer_provider(provider.clone());
    global::set_text_map_propagator(TraceContextPropagator::new());
    ON.store(true, Ordering::Relaxed);
    tracing::info!("OpenTelemetry: exporting traces over OTLP/HTTP");
    Ok(Some(Guard(provider)))
}

fn tracer() -> BoxedTracer {
    global::tracer_provider().tracer("openapi-mcp")
}

/// The caller's trace context: `_meta`'s `traceparent`/`tracestate` when given, else the HTTP
/// request's headers; an empty context (a new trace) when neither has one.
pub fn caller_context(
    meta: Option<&serde_json::Map<String, serde_json::Value>>,
    headers: Option<&http::HeaderMap>,
) -> Context {
    let propagator = TraceContextPropagator::new();
    if let Some(meta) = meta.filter(|m| m.contains_key("traceparent")) {
        return propagator.extract(&MetaCarrier(meta));
    }
    match headers {
        Some(h) if h.contains_key("traceparent") => propagator.extract(&HeaderCarrier(h)),
        _ => Context::new(),
    }
}

/// The span of a tool call, child of `parent`: returns the context to run the call in.
pub fn call_span(parent: &Context, tool: &str) -> Context {
    let span = tracer()
        .span_builder(format!("tools/call {tool}"))
        .with_kind(SpanKind::Server)
        .with_attributes([
            KeyValue::new("mcp.method.name", "tools/call"),
            KeyValue::new("gen_ai.tool.name", tool.to_string()),
        ])
        .start_with_context(&tracer(), parent);
    parent.with_span(span)
}

/// Ends the call's span with what became of it.
pub fn end_call(cx: &Context, outcome: &str, op: Option<(&str, &str, Option<&str>)>) {
    let span = cx.span();
    span.set_attribute(KeyValue::new("openapi_mcp.outcome", outcome.to_string()));
    if let Some((method, path, operation_id)) = op {
        span.set_attribute(KeyValue::new("http.request.method", method.to_string()));
        span.set_attribute(KeyValue::new("url.template", path.to_string()));
        if let Some(id) = operation_id {
            span.set_attribute(KeyValue::new("openapi.operation_id", id.to_string()));
        }
    }
    if outcome != "ok" {
        span.set_status(Status::error(outcome.to_string()));
    }
    span.end();
}

/// A child of the current span (an internal step of the call), or `None` when traces are off.
pub fn step(name: &'static str) -> Option<BoxedSpan> {
    if !enabled() {
        return None;
    }
    let t = tracer();
    Some(t.start_with_context(name, &Context::current()))
}

/// The span of one upstream HTTP request, child of the current span; its context is what
/// [`inject`] sends to the API.
pub fn upstream_span(method: &str, path_template: &str, host: &str) -> Option<Context> {
    if !enabled() {
        return None;
    }
    let parent = Context::current();
    let span = tracer()
        .span_builder(format!("{method} {path_template}"))
        .with_kind(SpanKind::Client)
        .with_attributes([
            KeyValue::new("http.request.method", method.to_string()),
            KeyValue::new("url.template", path_template.to_string()),
            KeyValue::new("server.address", host.to_string()),
        ])
        .start_with_context(&tracer(), &parent);
    Some(parent.with_span(span))
}

/// Ends an upstream request's span with its status (`None`: no answer).
pub fn end_upstream(cx: &Context, status: Option<u16>) {
    let span = cx.span();
    match status {
        Some(s) => {
            span.set_attribute(KeyValue::new("http.response.status_code", i64::from(s)));
            if s >= 400 {
                span.set_status(Status::error(s.to_string()));
            }
        }
        None => span.set_status(Status::error("no response")),
    }
    span.end();
}

/// `traceparent` (and `tracestate`) for the upstream request made in `cx`.
pub fn inject(cx: &Context) -> Vec<(String, String)> {
    let mut out = HeaderList(Vec::with_capacity(2));
    TraceContextPropagator::new().inject_context(cx, &mut out);
    out.0
}

struct MetaCarrier<'a>(&'a serde_json::Map<String, serde_json::Value>);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.as_str())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

struct HeaderCarrier<'a>(&'a http::HeaderMap);

impl Extractor for HeaderCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

struct HeaderList(Vec<(String, String)>);

impl Injector for HeaderList {
    fn set(&mut self, key: &str, value: String) {
        self.0.push((key.to_string(), value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::TraceContextExt;

    #[test]
    fn only_an_endpoint_turns_traces_on_and_the_sdk_switches_can_turn_them_off() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(!wanted(env(&[])));
        assert!(!wanted(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])));
        assert!(wanted(env(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://127.0.0.1:4318"
        )])));
        assert!(wanted(env(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://c/v1/traces"
        )])));
        assert!(!wanted(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
            ("OTEL_SDK_DISABLED", "TRUE")
        ])));
        assert!(!wanted(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
            ("OTEL_TRACES_EXPORTER", "none")
        ])));
    }

    #[test]
    fn caller_context_prefers_meta_then_headers() {
        let tp = |t: &str| format!("00-{t}-00f067aa0ba902b7-01");
        let a = "4bf92f3577b34da6a3ce929d0e0e4736";
        let b = "0af7651916cd43dd8448eb211c80319c";
        let mut meta = serde_json::Map::new();
        meta.insert("traceparent".into(), tp(a).into());
        let mut headers = http::HeaderMap::new();
        headers.insert("traceparent", tp(b).parse().unwrap());
        let id = |cx: Context| cx.span().span_context().trace_id().to_string();
        assert_eq!(id(caller_context(Some(&meta), Some(&headers))), a);
        assert_eq!(id(caller_context(None, Some(&headers))), b);
        assert_eq!(
            id(caller_context(
                Some(&serde_json::Map::new()),
                Some(&headers)
            )),
            b
        );
        assert!(!caller_context(None, None).span().span_context().is_valid());
        // A malformed traceparent starts a new trace rather than failing the call.
        meta.insert("traceparent".into(), "garbage".into());
        assert!(
            !caller_context(Some(&meta), None)
                .span()
                .span_context()
                .is_valid()
        );
    }
}
