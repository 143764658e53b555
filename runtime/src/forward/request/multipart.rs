//! Multipart bodies: one part a field (or a file), and a boundary no part contains.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::media::{concrete_media, decode_base64, encoding_of};
use super::{arg_err, prim};
use crate::forward::ArgError;
use openapi_mcp_toolset::model::{ArgBinding, BodyBinding, PartEncoding};

/// One part of a multipart body.
pub(super) struct Part {
    name: String,
    filename: Option<String>,
    content_type: Option<String>,
    data: Vec<u8>,
}

fn quote_disposition(s: &str) -> String {
    s.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn multipart_parts(
    b: &ArgBinding,
    wire: &str,
    v: &Value,
    pe: Option<&PartEncoding>,
    out: &mut Vec<Part>,
) -> Result<(), ArgError> {
    let declared = concrete_media(pe.and_then(|e| e.content_type.as_deref()));
    if pe.is_some_and(|e| e.binary) {
        let items: Vec<(String, &Value)> = match v {
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, x)| (format!("{wire}[{i}]"), x))
                .collect(),
            v => vec![(wire.to_string(), v)],
        };
        for (path, x) in items {
            let Value::String(s) = x else {
                return Err(arg_err(
                    b,
                    format!("`{path}` must be a base64 string (file content)"),
                ));
            };
            let (data, mime) =
                decode_base64(s).map_err(|e| arg_err(b, format!("`{path}`: {e}")))?;
            out.push(Part {
                name: wire.to_string(),
                filename: Some(wire.to_string()),
                content_type: Some(
                    declared
                        .clone()
                        .or(mime)
                        .unwrap_or_else(|| "application/octet-stream".to_string()),
                ),
                data,
            });
        }
        return Ok(());
    }
    match (v, declared) {
        (Value::Null, _) => {}
        (Value::String(s), ct) => out.push(Part {
            name: wire.into(),
            filename: None,
            content_type: ct,
            data: s.clone().into_bytes(),
        }),
        (v, Some(ct)) => out.push(Part {
            name: wire.into(),
            filename: None,
            content_type: Some(ct),
            data: v.to_string().into_bytes(),
        }),
        (Value::Array(a), None) => {
            // One part per item (OpenAPI: an array's default content type is that of its
            // items): primitives as text, objects and arrays as JSON.
            for x in a {
                let structured = x.is_array() || x.is_object();
                out.push(Part {
                    name: wire.into(),
                    filename: None,
                    content_type: structured.then(|| "application/json".into()),
                    data: if structured {
                        x.to_string().into_bytes()
                    } else {
                        prim(x).into_bytes()
                    },
                });
            }
        }
        (Value::Object(_), None) => out.push(Part {
            name: wire.into(),
            filename: None,
            content_type: Some("application/json".into()),
            data: v.to_string().into_bytes(),
        }),
        (v, None) => out.push(Part {
            name: wire.into(),
            filename: None,
            content_type: None,
            data: prim(v).into_bytes(),
        }),
    }
    Ok(())
}

static BOUNDARY_COUNTER: AtomicU64 = AtomicU64::new(0);

fn random_boundary() -> String {
    let state = RandomState::new();
    let mut h1 = state.build_hasher();
    h1.write_u64(BOUNDARY_COUNTER.fetch_add(1, Ordering::Relaxed));
    h1.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    let a = h1.finish();
    let mut h2 = state.build_hasher();
    h2.write_u64(a);
    format!("openapi-mcp-{a:016x}{:016x}", h2.finish())
}

fn multipart_body(parts: &[Part], boundary: &str) -> Vec<u8> {
    let mut body = Vec::new();
    for p in parts {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"",
                quote_disposition(&p.name)
            )
            .as_bytes(),
        );
        if let Some(f) = &p.filename {
            body.extend_from_slice(format!("; filename=\"{}\"", quote_disposition(f)).as_bytes());
        }
        body.extend_from_slice(b"\r\n");
        if let Some(ct) = &p.content_type {
            body.extend_from_slice(format!("Content-Type: {ct}\r\n").as_bytes());
        }
        body.extend_from_slice(b"\r\n");
        body.extend_from_slice(&p.data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    body
}

/// A multipart body: the whole body argument's members (or a file as the whole body), else the
/// body fields; its content type carries the boundary (`boundary`, or a random one no part
/// contains).
pub(super) fn build_multipart(
    binding: &BodyBinding,
    ct: &str,
    whole: Option<(&ArgBinding, &Value)>,
    fields: &[(&ArgBinding, &Value)],
    boundary: Option<&str>,
) -> Result<Option<(String, Vec<u8>)>, ArgError> {
    let mut parts = Vec::new();
    match whole {
        Some((b, Value::Object(o))) => {
            for (k, v) in o {
                multipart_parts(b, k, v, encoding_of(binding, k), &mut parts)?;
            }
        }
        // A file as the whole body (the spec's multipart schema is a binary string):
        // one file part, named `file` as the converter's warning says.
        Some((b, Value::String(s))) => {
            let (data, mime) =
                decode_base64(s).map_err(|e| arg_err(b, format!("the file content: {e}")))?;
            parts.push(Part {
                name: "file".into(),
                filename: Some("file".into()),
                content_type: Some(mime.unwrap_or_else(|| "application/octet-stream".to_string())),
                data,
            });
        }
        Some((b, _)) => return Err(arg_err(b, "a multipart body must be an object")),
        None => {
            if fields.is_empty() && !binding.required {
                return Ok(None);
            }
            for (b, v) in fields {
                multipart_parts(b, &b.wire, v, encoding_of(binding, &b.wire), &mut parts)?;
            }
        }
    }
    let boundary = match boundary {
        Some(b) => b.to_string(),
        None => unused_boundary(&parts),
    };
    let base_ct = ct
        .split(';')
        .next()
        .unwrap_or("multipart/form-data")
        .trim()
        .to_string();
    Ok(Some((
        format!("{base_ct}; boundary={boundary}"),
        multipart_body(&parts, &boundary),
    )))
}

/// A random boundary that no part's data contains.
fn unused_boundary(parts: &[Part]) -> String {
    loop {
        let b = random_boundary();
        if !parts
            .iter()
            .any(|p| p.data.windows(b.len()).any(|w| w == b.as_bytes()))
        {
            return b;
        }
    }
}
