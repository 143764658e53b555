//! The helpers both body builders ([`super::body`], [`super::multipart`]) take: a field's
//! encoding object, the media type it declares, and base64 file contents.

use base64::Engine as _;
use openapi_mcp_toolset::model::{BodyBinding, PartEncoding};

pub(super) fn encoding_of<'e>(binding: &'e BodyBinding, wire: &str) -> Option<&'e PartEncoding> {
    binding.encoding.iter().find(|e| e.name == wire)
}

/// The first concrete media type of an encoding `contentType` list (`image/png, image/jpeg`);
/// wildcards yield `None`.
pub(super) fn concrete_media(ct: Option<&str>) -> Option<String> {
    let first = ct?.split(',').next()?.trim();
    (!first.is_empty() && !first.contains('*')).then(|| first.to_string())
}

/// `type/subtype`, both RFC 9110 tokens.
fn is_media_type(m: &str) -> bool {
    let token = |t: &str| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    m.split_once('/').is_some_and(|(t, s)| token(t) && token(s))
}

/// Base64 (standard or URL-safe, padded or not, whitespace ignored) or a `data:<mime>;base64,`
/// URL. Returns the bytes and the data URL's media type.
pub(super) fn decode_base64(s: &str) -> Result<(Vec<u8>, Option<String>), InvalidBase64> {
    let (mime, payload) = match s.strip_prefix("data:").and_then(|r| r.split_once(',')) {
        Some((meta, data)) if meta.ends_with(";base64") => {
            let m = meta.trim_end_matches(";base64");
            // Only a well-formed `type/subtype` is used (it becomes a part's Content-Type: CR/LF
            // or other bytes there would write raw lines into the multipart headers).
            (
                Some(m.split(';').next().unwrap_or("").to_string()).filter(|m| is_media_type(m)),
                data,
            )
        }
        _ => (None, s),
    };
    let clean: String = payload
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let decoded = if clean.contains(['-', '_']) {
        if clean.ends_with('=') {
            URL_SAFE.decode(&clean)
        } else {
            URL_SAFE_NO_PAD.decode(&clean)
        }
    } else if clean.ends_with('=') {
        STANDARD.decode(&clean)
    } else {
        STANDARD_NO_PAD.decode(&clean)
    };
    decoded.map(|d| (d, mime)).map_err(InvalidBase64)
}

/// A binary argument that is neither base64 nor a base64 `data:` URL.
#[derive(Debug, thiserror::Error)]
#[error("invalid base64 ({0})")]
pub(super) struct InvalidBase64(#[source] base64::DecodeError);
