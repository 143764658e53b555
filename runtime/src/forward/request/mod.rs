//! Tool arguments → HTTP request (pure: no I/O).
//!
//! Serialization follows the OpenAPI 3.0 style rules (the `color` table of the spec):
//! path parameters are percent-encoded as RFC 3986 path segments (everything but unreserved
//! characters), query parameters likewise (space = `%20`), header values are sent raw but must not
//! contain control characters, cookie values get `;`, `,`, space, `"`, `\` and `%`
//! percent-encoded. `application/x-www-form-urlencoded` rules are used only for form bodies.

//!
//! One file a part of the request: [`path`] (the path template and the query written in it),
//! [`query`] (query parameters and the styles form fields share), [`headers`] (header and cookie
//! parameters), [`body`] (JSON, form, text and binary bodies), [`multipart`] (multipart parts and
//! boundaries) and [`build`] (the whole request: credentials, headers, URL checks).

use serde_json::Value;

use super::ArgError;
use openapi_mcp_toolset::model::ArgBinding;

mod body;
mod build;
mod headers;
mod media;
mod multipart;
mod path;
mod query;

pub(crate) use build::{BuildContext, build, effective_base};

/// The longest URL the HTTP stack accepts (`http::Uri`: `u16::MAX - 1`).
pub(crate) const MAX_URL_BYTES: usize = 65_534;

/// A primitive as text: strings raw, numbers as JSON number text, booleans, null → empty.
/// Arrays and objects (nested inside a parameter) become compact JSON. Integral floats that are
/// exact (`5.0`, which JSON Schema's `integer` accepts) are written as integers (`5`): an
/// integer parameter must not reach the API as `5.0`.
pub(super) fn prim(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(f)
                if !n.is_i64()
                    && !n.is_u64()
                    && f.fract() == 0.0
                    && f.abs() < 9_007_199_254_740_992.0 =>
            {
                format!("{}", f as i64)
            }
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

pub(super) fn is_json_media(ct: &str) -> bool {
    let e = openapi_mcp_toolset::media::media_base(ct);
    e == "application/json" || e.ends_with("+json") || e == "text/json"
}

/// A parameter value after `content` serialization: parameters declared with a JSON media type are
/// sent as compact JSON text.
pub(super) fn effective<'v>(b: &ArgBinding, v: &'v Value) -> std::borrow::Cow<'v, Value> {
    match &b.content_type {
        Some(ct) if is_json_media(ct) => std::borrow::Cow::Owned(Value::String(v.to_string())),
        Some(_) if !v.is_string() => std::borrow::Cow::Owned(Value::String(v.to_string())),
        _ => std::borrow::Cow::Borrowed(v),
    }
}

pub(super) fn arg_err(b: &ArgBinding, msg: impl std::fmt::Display) -> ArgError {
    ArgError {
        arg: Some(b.arg.clone()),
        message: format!(
            "argument `{}` ({} `{}`): {msg}",
            b.arg,
            b.location.label(),
            b.wire
        ),
    }
}

#[cfg(test)]
mod tests;
