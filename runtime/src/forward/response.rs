//! HTTP response → MCP tool result, and transport failures → readable error results.

use std::time::Duration;

use base64::Engine as _;
use http::{HeaderMap, StatusCode, header};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value, json};

use super::fit::{self, ResponseMode};
use openapi_mcp_toolset::model::{OutputShape, Route};

/// How much of a non-2xx body is shown (characters).
pub const ERROR_BODY_MAX_CHARS: usize = 8 * 1024;

/// The body was cut at `--max-response-bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truncation {
    /// The full length was announced (Content-Length).
    Of(u64),
    /// The full length is unknown.
    Unknown,
}

fn status_line(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(r) => format!("HTTP {} {r}", status.as_u16()),
        None => format!("HTTP {}", status.as_u16()),
    }
}

/// `type/subtype` in lower case, without parameters.
fn essence(headers: &HeaderMap) -> Option<String> {
    let ct = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let e = ct.split(';').next()?.trim().to_ascii_lowercase();
    (!e.is_empty()).then_some(e)
}

pub fn is_json_essence(e: &str) -> bool {
    e == "application/json" || e.ends_with("+json") || e == "text/json" || e == "application/x-json"
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Json,
    Text,
    Image,
    Audio,
    Other,
}

fn kind_of(essence: Option<&str>, body: &[u8]) -> Kind {
    let Some(e) = essence else {
        return if std::str::from_utf8(body).is_ok() {
            Kind::Text
        } else {
            Kind::Other
        };
    };
    const TEXTUAL: &[&str] = &[
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/x-www-form-urlencoded",
        "application/csv",
        "application/sql",
        "application/graphql",
        "application/x-ndjson",
        "application/ndjson",
        "application/jsonl",
        "application/json-seq",
    ];
    if is_json_essence(e) {
        Kind::Json
    } else if e.starts_with("text/")
        || e.ends_with("+xml")
        || e.ends_with("/xml")
        || TEXTUAL.contains(&e)
    {
        Kind::Text
    } else if e.starts_with("image/") {
        Kind::Image
    } else if e.starts_with("audio/") {
        Kind::Audio
    } else {
        Kind::Other
    }
}

fn trunc_note(shown: usize, t: Truncation) -> String {
    match t {
        Truncation::Of(total) => format!("[response truncated: {shown} of {total} bytes shown]"),
        Truncation::Unknown => {
            format!("[response truncated: {shown} of more than {shown} bytes shown]")
        }
    }
}

fn text_result(is_error: bool, text: String) -> CallToolResult {
    if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

fn cut_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((i, _)) => format!("{}\n[error body cut at {max} characters]", &s[..i]),
    }
}

fn render_error_body(body: &[u8], essence: Option<&str>, truncated: bool) -> String {
    let kind = kind_of(essence, body);
    if !truncated
        && matches!(kind, Kind::Json | Kind::Text)
        && let Ok(v) = serde_json::from_slice::<Value>(body)
        && (kind == Kind::Json || v.is_object() || v.is_array())
    {
        let pretty = serde_json::to_string_pretty(&v)
            .unwrap_or_else(|_| String::from_utf8_lossy(body).into_owned());
        return cut_chars(&pretty, ERROR_BODY_MAX_CHARS);
    }
    match kind {
        Kind::Json | Kind::Text => cut_chars(&String::from_utf8_lossy(body), ERROR_BODY_MAX_CHARS),
        _ => format!(
            "[{} bytes of {}]",
            body.len(),
            essence.unwrap_or("binary data")
        ),
    }
}

fn json_kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn json_result(line: &str, v: Value, text: String, output: OutputShape) -> CallToolResult {
    match output {
        OutputShape::None => text_result(false, text),
        OutputShape::Object if v.is_object() => {
            let mut r = text_result(false, text);
            r.structured_content = Some(v);
            r
        }
        OutputShape::Object => text_result(
            true,
            format!(
                "{line}: the API returned a JSON {} where the API description promised an object, so the result cannot match the tool's output schema. Body:\n{text}",
                json_kind_name(&v)
            ),
        ),
        OutputShape::Wrapped => {
            let mut r = text_result(false, text);
            r.structured_content = Some(json!({ "result": v }));
            r
        }
    }
}

/// Maps an API response to a tool result.
///
/// * 3xx: error ("the API redirected to ...; redirects are not followed").
/// * other non-2xx: error, `HTTP 404 Not Found` + newline + the body (pretty JSON, or text cut at
///   [`ERROR_BODY_MAX_CHARS`]).
/// * 2xx JSON: one text block with the body as received; `structuredContent` per `route.output`
///   (the object itself, or `{"result": body}`). A non-object where an object was promised, or
///   invalid JSON when the tool has an output schema, is an error (clients validate
///   `structuredContent` against the output schema and would reject a result without it).
/// * 2xx text/XML: text; image/*: image block; audio/*: audio block; anything else: an embedded
///   blob resource `openapi-mcp://response<resource_path>`.
/// * empty body: `HTTP 204 No Content: the request succeeded and returned no body.` with
///   `structuredContent` `{}` / `{"result": null}` when the tool has an output schema.
/// * truncated: a note `[response truncated: N of M bytes shown]`; truncated JSON (or anything a
///   tool with an output schema receives) is an error, since it cannot be parsed.
pub fn to_result(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    truncated: Option<Truncation>,
    route: &Route,
    resource_path: &str,
) -> CallToolResult {
    let args = Map::new();
    let shape = Shape {
        mode: ResponseMode::Full,
        max: usize::MAX,
        select: None,
        args: &args,
        secrets: &[],
    };
    to_result_shaped(
        status,
        headers,
        body,
        truncated,
        route,
        resource_path,
        &shape,
    )
    .0
}

/// How a JSON result is shaped (#22, see [`super::fit`]).
pub struct Shape<'a> {
    pub mode: ResponseMode,
    /// `--max-response-bytes`: the budget of the result's JSON text. A JSON `body` may be longer
    /// (it is read past the budget, so it can be cut at an item boundary).
    pub max: usize,
    /// The selection argument's name and expression.
    pub select: Option<(&'a str, &'a str)>,
    /// The call's arguments (for the next page's).
    pub args: &'a Map<String, Value>,
    /// Replaced in the parsed body before anything is selected from it (a selection could
    /// otherwise transform a secret past the scrubbing of the result).
    pub secrets: &'a [&'a str],
}

/// [`to_result`] with a [`Shape`]: a 2xx JSON body is compacted (`--response compact`),
/// selected (`_select`) and cut to `shape.max` bytes at an item boundary, with a note that says
/// what was cut and the next page's arguments. Also returns the full (uncompacted) structured
/// content when it differs, for a compacted one that the output schema rejects.
pub fn to_result_shaped(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    truncated: Option<Truncation>,
    route: &Route,
    resource_path: &str,
    shape: &Shape<'_>,
) -> (CallToolResult, Option<Value>) {
    let line = status_line(status);
    if status.is_success() && !(body.is_empty() && truncated.is_none()) {
        let ess = essence(headers);
        let kind = kind_of(ess.as_deref(), body);
        let wants_json = route.output != OutputShape::None;
        if kind == Kind::Json || (kind == Kind::Text && wants_json) {
            let parsed = match truncated {
                Some(_) => fit::recover_prefix(body).map(|v| (v, true)),
                None => serde_json::from_slice::<Value>(body)
                    .ok()
                    .map(|v| (v, false)),
            };
            if let Some((v, partial)) = parsed
                && (route.output != OutputShape::Object || v.is_object())
            {
                return shaped_json(v, partial, body, headers, route, shape);
            }
        }
    }
    // Not JSON: the old rules, on at most `max` bytes.
    let (body, truncated) = if body.len() > shape.max {
        (
            &body[..shape.max],
            Some(truncated.unwrap_or(Truncation::Of(body.len() as u64))),
        )
    } else {
        (body, truncated)
    };
    let mut r = plain_result(
        status,
        &line,
        headers,
        body,
        truncated,
        route,
        resource_path,
    );
    if let Some((arg, _)) = shape.select
        && status.is_success()
        && r.is_error != Some(true)
    {
        r.content.push(ContentBlock::text(format!(
            "[openapi-mcp: `{arg}` was not applied: the API's answer is not JSON ({}).]",
            essence(headers).as_deref().unwrap_or("no Content-Type")
        )));
    }
    (r, None)
}

/// A parsed 2xx JSON body, shaped (see [`to_result_shaped`]).
fn shaped_json(
    mut v: Value,
    partial: bool,
    raw: &[u8],
    headers: &HeaderMap,
    route: &Route,
    shape: &Shape<'_>,
) -> (CallToolResult, Option<Value>) {
    if !shape.secrets.is_empty() {
        super::scrub::scrub_json(&mut v, shape.secrets);
    }
    let compacted = (shape.mode == ResponseMode::Compact)
        .then(|| fit::compacted(&v))
        .flatten();
    let base = compacted.as_ref().unwrap_or(&v);
    let mut notes = Vec::new();
    let mut failed = None;
    let selected = match shape.select {
        Some((arg, expr)) => match fit::select(&v, expr, shape.max) {
            Ok(s) => Some(s),
            Err(e) => {
                failed = Some(format!(
                    "The API call succeeded, but `{arg}` could not be applied to its result: {e}. The request was carried out (do not repeat it because of this); the result without the selection follows."
                ));
                None
            }
        },
        None => None,
    };
    let text_v = selected.as_ref().unwrap_or(base);
    let mut text_fit = fit::fit(text_v, shape.max);
    if partial && text_fit.is_none() {
        // Recovered from a cut body and within the budget: nothing more cut here, but the
        // body went on.
        text_fit = Some((text_v.clone(), whole_cut(text_v)));
    }
    let text_value = text_fit.as_ref().map_or(text_v, |(f, _)| f);
    let unchanged = selected.is_none()
        && text_fit.is_none()
        && (shape.mode == ResponseMode::Full
            || (compacted.is_none() && serde_json::to_vec(&v).is_ok_and(|b| b.len() == raw.len())));
    let text = if unchanged {
        String::from_utf8_lossy(raw).into_owned()
    } else {
        serde_json::to_string(text_value).unwrap_or_default()
    };
    if let Some((_, cut)) = &text_fit {
        let select_arg = shape.select.map_or(fit::SELECT_ARG, |(a, _)| a);
        let mut args = shape.args.clone();
        if let Some((a, e)) = shape.select {
            args.insert(a.to_string(), Value::String(e.to_string()));
        }
        let next = fit::next_page(route, &args, headers, &v, cut);
        notes.push(fit::cut_note(
            cut,
            shape.max,
            partial,
            next.as_ref(),
            select_arg,
        ));
    }
    let wrap = |x: Value| match route.output {
        OutputShape::Wrapped => Some(json!({ "result": x })),
        OutputShape::Object => Some(x),
        OutputShape::None => None,
    };
    let fitted = |x: &Value| fit::fit(x, shape.max).map_or_else(|| x.clone(), |(f, _)| f);
    let structured = if route.output == OutputShape::None {
        None
    } else if selected.is_none() {
        wrap(text_value.clone())
    } else {
        wrap(fitted(base))
    };
    let fallback = match (&compacted, route.output) {
        (Some(_), OutputShape::Object | OutputShape::Wrapped) => wrap(fitted(&v)),
        _ => None,
    };
    let mut blocks = Vec::new();
    if let Some(f) = failed {
        blocks.push(ContentBlock::text(f));
    }
    blocks.push(ContentBlock::text(text));
    blocks.extend(notes.into_iter().map(ContentBlock::text));
    let mut r = CallToolResult::success(blocks);
    r.structured_content = structured;
    (r, fallback)
}

/// A [`fit::Cut`] that cuts nothing (a body recovered from a cut one, within the budget).
fn whole_cut(v: &Value) -> fit::Cut {
    let (member, len) = match v {
        Value::Array(a) => (None, a.len()),
        Value::Object(m) => m
            .iter()
            .filter_map(|(k, x)| x.as_array().map(|a| (Some(k.clone()), a.len())))
            .max_by_key(|(_, n)| *n)
            .unwrap_or((None, m.len())),
        _ => (None, 0),
    };
    let items = v.is_array() || member.is_some();
    let last_shown = match (&member, v) {
        (None, Value::Array(a)) => a.last().cloned(),
        (Some(k), _) => v
            .get(k)
            .and_then(Value::as_array)
            .and_then(|a| a.last().cloned()),
        _ => None,
    };
    fit::Cut {
        member,
        items,
        shown: len,
        total: len,
        last_shown,
    }
}

/// The result of anything but a shaped JSON body.
fn plain_result(
    status: StatusCode,
    line: &str,
    headers: &HeaderMap,
    body: &[u8],
    truncated: Option<Truncation>,
    route: &Route,
    resource_path: &str,
) -> CallToolResult {
    let line = line.to_string();
    let ess = essence(headers);
    let ess = ess.as_deref();

    if status.is_redirection() {
        let loc = headers
            .get(header::LOCATION)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        return text_result(
            true,
            match loc {
                Some(l) => {
                    format!("{line}: the API redirected to {l}; redirects are not followed.")
                }
                None => format!(
                    "{line}: the API answered with a redirection status; redirects are not followed."
                ),
            },
        );
    }
    if !status.is_success() {
        let mut text = line;
        if !body.is_empty() {
            text.push('\n');
            text.push_str(&render_error_body(body, ess, truncated.is_some()));
        }
        if let Some(t) = truncated {
            text.push('\n');
            text.push_str(&trunc_note(body.len(), t));
        }
        return text_result(true, text);
    }

    if body.is_empty() && truncated.is_none() {
        let mut r = text_result(
            false,
            format!("{line}: the request succeeded and returned no body."),
        );
        r.structured_content = match route.output {
            OutputShape::None => None,
            OutputShape::Object => Some(json!({})),
            OutputShape::Wrapped => Some(json!({ "result": null })),
        };
        return r;
    }

    let kind = kind_of(ess, body);
    let wants_json = route.output != OutputShape::None;
    let ct = ess.unwrap_or("a response without Content-Type");

    if let Some(t) = truncated {
        let note = trunc_note(body.len(), t);
        return match kind {
            Kind::Text if !wants_json => {
                text_result(false, format!("{}\n{note}", String::from_utf8_lossy(body)))
            }
            Kind::Json | Kind::Text => text_result(
                true,
                format!(
                    "{line}: the response exceeded --max-response-bytes ({} bytes), so the JSON cannot be parsed; the partial body follows.\n{}\n{note}",
                    body.len(),
                    String::from_utf8_lossy(body)
                ),
            ),
            _ => text_result(
                true,
                format!(
                    "{line}: the {ct} response exceeded --max-response-bytes ({} bytes) and was not returned; raise the limit to receive it.\n{note}",
                    body.len()
                ),
            ),
        };
    }

    match kind {
        Kind::Json | Kind::Text if kind == Kind::Json || wants_json => {
            let text = String::from_utf8_lossy(body).into_owned();
            match serde_json::from_slice::<Value>(body) {
                Ok(v) => json_result(&line, v, text, route.output),
                Err(e) if kind == Kind::Json && !wants_json => {
                    let _ = e;
                    text_result(false, text)
                }
                Err(e) if kind == Kind::Json => text_result(
                    true,
                    format!(
                        "{line}: the API's answer is labelled {ct} but is not valid JSON ({e}), so it cannot match the tool's output schema. Body:\n{text}"
                    ),
                ),
                Err(_) => text_result(
                    true,
                    format!(
                        "{line}: the API answered with {ct} where the API description promised JSON, so the result cannot match the tool's output schema. Body:\n{text}"
                    ),
                ),
            }
        }
        Kind::Json | Kind::Text => text_result(false, String::from_utf8_lossy(body).into_owned()),
        Kind::Image | Kind::Audio | Kind::Other => {
            let b64 = base64::engine::general_purpose::STANDARD.encode(body);
            let mime = ess.unwrap_or("application/octet-stream").to_string();
            let block = match kind {
                Kind::Image => ContentBlock::image(b64, mime),
                Kind::Audio => ContentBlock::audio(b64, mime),
                _ => ContentBlock::resource(
                    ResourceContents::blob(b64, format!("openapi-mcp://response{resource_path}"))
                        .with_mime_type(mime),
                ),
            };
            if wants_json {
                CallToolResult::error(vec![
                    ContentBlock::text(format!(
                        "{line}: the API answered with {ct} where the API description promised JSON, so the result cannot match the tool's output schema."
                    )),
                    block,
                ])
            } else {
                CallToolResult::success(vec![block])
            }
        }
    }
}

/// `30 s`, `1.5 s`, `250 ms`.
pub(crate) fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// All messages in an error's source chain, joined with `: ` (duplicates dropped).
fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        let s = e.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = e.source();
    }
    parts.join(": ")
}

/// A sentence for a failed request. `origin` is `scheme://host:port` (no credentials, no path).
pub(crate) fn transport_error(
    err: reqwest::Error,
    origin: &str,
    host: &str,
    timeout: Duration,
) -> String {
    if err.is_timeout() {
        return format!(
            "the API did not answer within {} (timeout); the request may or may not have been applied",
            fmt_duration(timeout)
        );
    }
    let is_connect = err.is_connect();
    let is_redirect = err.is_redirect();
    let err = err.without_url();
    let detail = chain(&err);
    let lower = detail.to_ascii_lowercase();
    let refused = {
        let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(&err);
        let mut found = false;
        while let Some(e) = cur {
            if let Some(io) = e.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                found = true;
            }
            cur = e.source();
        }
        found || lower.contains("connection refused")
    };
    if refused {
        return format!(
            "could not connect to {origin}: connection refused; is the API running and is --base-url right?"
        );
    }
    if lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
    {
        return format!(
            "could not resolve the host name `{host}` (DNS lookup failed); check --base-url and the network ({detail})"
        );
    }
    if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
        return format!(
            "the TLS connection to {origin} failed ({detail}); check the server's certificate and --base-url"
        );
    }
    if is_redirect {
        return format!("the API redirected the request; redirects are not followed ({detail})");
    }
    if is_connect {
        return format!(
            "could not connect to {origin} ({detail}); is the API running and is --base-url right?"
        );
    }
    format!("the request to {origin} failed: {detail}")
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;
    use openapi_mcp_toolset::model::HttpMethod;

    fn route(output: OutputShape) -> Route {
        Route {
            method: HttpMethod::Get,
            path: "/pets/{id}".into(),
            server: None,
            args: vec![],
            body: None,
            accept: None,
            security: vec![],
            oauth_scopes: Vec::new(),
            output,
            pinned: Default::default(),
            credential_params: Vec::new(),
            input_schema: Default::default(),
        }
    }

    fn h(ct: &str) -> HeaderMap {
        let mut m = HeaderMap::new();
        m.insert(header::CONTENT_TYPE, HeaderValue::from_str(ct).expect("hv"));
        m
    }

    fn run(
        status: u16,
        ct: Option<&str>,
        body: &[u8],
        t: Option<Truncation>,
        out: OutputShape,
    ) -> Value {
        let headers = ct.map(h).unwrap_or_default();
        let r = to_result(
            StatusCode::from_u16(status).expect("status"),
            &headers,
            body,
            t,
            &route(out),
            "/pets/1",
        );
        serde_json::to_value(&r).expect("json")
    }

    fn text_of(v: &Value) -> &str {
        v["content"][0]["text"].as_str().unwrap_or("")
    }

    #[test]
    fn json_object_array_wrapped() {
        let v = run(
            200,
            Some("application/json; charset=utf-8"),
            br#"{"id":1}"#,
            None,
            OutputShape::Object,
        );
        assert_eq!(v["isError"], false);
        assert_eq!(text_of(&v), r#"{"id":1}"#);
        assert_eq!(v["structuredContent"], json!({"id": 1}));

        let v = run(
            200,
            Some("application/json"),
            br#"[1,2]"#,
            None,
            OutputShape::Wrapped,
        );
        assert_eq!(v["structuredContent"], json!({"result": [1, 2]}));
        assert_eq!(text_of(&v), "[1,2]");

        let v = run(
            200,
            Some("application/hal+json"),
            br#"[1,2]"#,
            None,
            OutputShape::None,
        );
        assert_eq!(v["isError"], false);
        assert!(v.get("structuredContent").is_none());

        // Object promised, array received: an error that says so, with the body.
        let v = run(
            200,
            Some("application/json"),
            br#"[1,2]"#,
            None,
            OutputShape::Object,
        );
        assert_eq!(v["isError"], true);
        assert!(
            text_of(&v).contains("JSON array where the API description promised an object")
                && text_of(&v).ends_with("[1,2]")
        );
        assert!(v.get("structuredContent").is_none());

        // Invalid JSON: text when there's no output schema, an error otherwise.
        let v = run(
            200,
            Some("application/json"),
            b"{oops",
            None,
            OutputShape::None,
        );
        assert_eq!((v["isError"].clone(), text_of(&v)), (json!(false), "{oops"));
        let v = run(
            200,
            Some("application/json"),
            b"{oops",
            None,
            OutputShape::Object,
        );
        assert_eq!(v["isError"], true);
        assert!(text_of(&v).contains("not valid JSON"));

        // Mislabelled JSON is accepted when the tool has an output schema.
        let v = run(
            200,
            Some("text/plain"),
            br#"{"a":1}"#,
            None,
            OutputShape::Object,
        );
        assert_eq!(v["structuredContent"], json!({"a": 1}));
        let v = run(200, Some("text/html"), b"<html>", None, OutputShape::Object);
        assert_eq!(v["isError"], true);
    }

    #[test]
    fn text_image_audio_blob() {
        let v = run(
            200,
            Some("text/plain"),
            "héllo".as_bytes(),
            None,
            OutputShape::None,
        );
        assert_eq!(
            v,
            json!({"resultType": v["resultType"], "content": [{"type": "text", "text": "héllo"}], "isError": false})
        );
        let v = run(
            200,
            Some("application/xml"),
            b"<a/>",
            None,
            OutputShape::None,
        );
        assert_eq!(text_of(&v), "<a/>");
        let v = run(
            200,
            Some("image/png"),
            &[0x89, b'P', b'N', b'G'],
            None,
            OutputShape::None,
        );
        assert_eq!(
            v["content"][0],
            json!({"type": "image", "data": "iVBORw==", "mimeType": "image/png"})
        );
        let v = run(200, Some("audio/wav"), b"RIFF", None, OutputShape::None);
        assert_eq!(
            v["content"][0],
            json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
        );
        let v = run(
            200,
            Some("application/pdf"),
            b"%PDF",
            None,
            OutputShape::None,
        );
        assert_eq!(
            v["content"][0],
            json!({"type": "resource", "resource": {"uri": "openapi-mcp://response/pets/1", "mimeType": "application/pdf", "blob": "JVBERg=="}})
        );
        let v = run(200, None, &[0xff, 0xfe], None, OutputShape::None);
        assert_eq!(
            v["content"][0]["resource"]["mimeType"],
            "application/octet-stream"
        );
        let v = run(200, None, b"plain", None, OutputShape::None);
        assert_eq!(text_of(&v), "plain");
    }

    #[test]
    fn empty_bodies() {
        let v = run(204, None, b"", None, OutputShape::None);
        assert_eq!(
            text_of(&v),
            "HTTP 204 No Content: the request succeeded and returned no body."
        );
        assert_eq!(v["isError"], false);
        assert!(v.get("structuredContent").is_none());
        assert_eq!(
            run(204, None, b"", None, OutputShape::Object)["structuredContent"],
            json!({})
        );
        assert_eq!(
            run(
                200,
                Some("application/json"),
                b"",
                None,
                OutputShape::Wrapped
            )["structuredContent"],
            json!({"result": null})
        );
        assert_eq!(
            text_of(&run(200, None, b"", None, OutputShape::None)),
            "HTTP 200 OK: the request succeeded and returned no body."
        );
    }

    #[test]
    fn errors_and_redirects() {
        let v = run(
            404,
            Some("application/problem+json"),
            br#"{"title":"not found","status":404}"#,
            None,
            OutputShape::Object,
        );
        assert_eq!(v["isError"], true);
        assert_eq!(
            text_of(&v),
            "HTTP 404 Not Found\n{\n  \"title\": \"not found\",\n  \"status\": 404\n}"
        );
        assert!(v.get("structuredContent").is_none());
        let v = run(500, Some("text/plain"), b"boom", None, OutputShape::None);
        assert_eq!(text_of(&v), "HTTP 500 Internal Server Error\nboom");
        let v = run(401, None, b"", None, OutputShape::None);
        assert_eq!(text_of(&v), "HTTP 401 Unauthorized");
        let v = run(599, Some("text/plain"), b"x", None, OutputShape::None);
        assert_eq!(text_of(&v), "HTTP 599\nx");
        let long = "x".repeat(ERROR_BODY_MAX_CHARS + 10);
        let v = run(
            400,
            Some("text/plain"),
            long.as_bytes(),
            None,
            OutputShape::None,
        );
        assert!(text_of(&v).ends_with(&format!(
            "[error body cut at {ERROR_BODY_MAX_CHARS} characters]"
        )));

        let mut hm = HeaderMap::new();
        hm.insert(
            header::LOCATION,
            HeaderValue::from_static("https://login.example.com/"),
        );
        let r = to_result(
            StatusCode::FOUND,
            &hm,
            b"",
            None,
            &route(OutputShape::None),
            "/p",
        );
        let v = serde_json::to_value(&r).expect("json");
        assert_eq!(v["isError"], true);
        assert_eq!(
            text_of(&v),
            "HTTP 302 Found: the API redirected to https://login.example.com/; redirects are not followed."
        );
    }

    #[test]
    fn truncation() {
        let v = run(
            200,
            Some("text/plain"),
            b"abcd",
            Some(Truncation::Of(10_485_760)),
            OutputShape::None,
        );
        assert_eq!(v["isError"], false);
        assert_eq!(
            text_of(&v),
            "abcd\n[response truncated: 4 of 10485760 bytes shown]"
        );
        let v = run(
            200,
            Some("application/json"),
            br#"{"a":"#,
            Some(Truncation::Unknown),
            OutputShape::Object,
        );
        assert_eq!(v["isError"], true);
        assert!(v.get("structuredContent").is_none());
        let t = text_of(&v);
        assert!(
            t.contains("--max-response-bytes")
                && t.ends_with("{\"a\":\n[response truncated: 5 of more than 5 bytes shown]"),
            "{t}"
        );
        let v = run(
            200,
            Some("image/png"),
            b"abcd",
            Some(Truncation::Of(100)),
            OutputShape::None,
        );
        assert_eq!(v["isError"], true);
        assert!(text_of(&v).contains("image/png response exceeded --max-response-bytes"));
        let v = run(
            500,
            Some("application/json"),
            br#"{"a":"#,
            Some(Truncation::Of(99)),
            OutputShape::None,
        );
        assert_eq!(
            text_of(&v),
            "HTTP 500 Internal Server Error\n{\"a\":\n[response truncated: 5 of 99 bytes shown]"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(fmt_duration(Duration::from_secs(30)), "30 s");
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(fmt_duration(Duration::from_millis(250)), "250 ms");
    }
}
