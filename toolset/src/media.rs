//! Media types and path templates: the helpers the converter and the forwarder must read alike.

use crate::model::BodyKind;

/// Names of the `{variables}` of a path template.
pub fn path_template_names(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    // A fragment in a path key is not sent (see `forward::request::split_template`).
    let mut rest = path.split('#').next().unwrap_or_default();
    while let Some(start) = rest.find('{') {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        let name = &rest[start + 1..start + end];
        if !name.is_empty() && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
        rest = &rest[start + end + 1..];
    }
    out
}

/// A media type without its parameters, trimmed and lowercase (`Application/JSON; charset=utf-8`
/// -> `application/json`; borrowed when it already is).
pub fn media_base(mt: &str) -> std::borrow::Cow<'_, str> {
    let base = mt.split(';').next().unwrap_or("").trim();
    if base.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(base.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(base)
    }
}

/// Whether a media type (or range) is read and written as JSON.
pub fn is_json(mt: &str) -> bool {
    let base = media_base(mt);
    base == "application/json"
        || base.ends_with("+json")
        || base == "*/*"
        || base == "application/*"
        || base == "text/json"
}

/// How a request body of this media type is encoded.
pub fn body_kind(mt: &str) -> BodyKind {
    let base = media_base(mt);
    if is_json(&base) {
        BodyKind::Json
    } else if base == "application/x-www-form-urlencoded" {
        BodyKind::Form
    } else if base.starts_with("multipart/") {
        BodyKind::Multipart
    } else if base.starts_with("text/") || base == "application/xml" || base.ends_with("+xml") {
        BodyKind::Text
    } else {
        BodyKind::Binary
    }
}
