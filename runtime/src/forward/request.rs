//! Tool arguments → HTTP request (pure: no I/O).
//!
//! Serialization follows the OpenAPI 3.0 style rules (the `color` table of the spec):
//! path parameters are percent-encoded as RFC 3986 path segments (everything but unreserved
//! characters), query parameters likewise (space = `%20`), header values are sent raw but must not
//! contain control characters, cookie values get `;`, `,`, space, `"`, `\` and `%`
//! percent-encoded. `application/x-www-form-urlencoded` rules are used only for form bodies.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use serde_json::{Map, Value};
use url::Url;

use super::auth::AuthParts;
use super::encode::{
    enc, enc_cookie, enc_form, enc_query_literal, enc_reserved, enc_template_literal,
};
use super::{ArgError, BuiltRequest};
use openapi_mcp_toolset::model::{
    ArgBinding, ArgLocation, BodyBinding, BodyKind, PartEncoding, PathStyle, QueryStyle, Route,
    is_reserved_header,
};

/// The longest URL the HTTP stack accepts (`http::Uri`: `u16::MAX - 1`).
pub(crate) const MAX_URL_BYTES: usize = 65_534;

/// A primitive as text: strings raw, numbers as JSON number text, booleans, null → empty.
/// Arrays and objects (nested inside a parameter) become compact JSON. Integral floats that are
/// exact (`5.0`, which JSON Schema's `integer` accepts) are written as integers (`5`): an
/// integer parameter must not reach the API as `5.0`.
fn prim(v: &Value) -> String {
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

fn is_json_media(ct: &str) -> bool {
    let e = openapi_mcp_toolset::media::media_base(ct);
    e == "application/json" || e.ends_with("+json") || e == "text/json"
}

/// A parameter value after `content` serialization: parameters declared with a JSON media type are
/// sent as compact JSON text.
fn effective<'v>(b: &ArgBinding, v: &'v Value) -> std::borrow::Cow<'v, Value> {
    match &b.content_type {
        Some(ct) if is_json_media(ct) => std::borrow::Cow::Owned(Value::String(v.to_string())),
        Some(_) if !v.is_string() => std::borrow::Cow::Owned(Value::String(v.to_string())),
        _ => std::borrow::Cow::Borrowed(v),
    }
}

fn arg_err(b: &ArgBinding, msg: impl std::fmt::Display) -> ArgError {
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

// ---------------------------------------------------------------- path

fn expand_path(name: &str, v: &Value, style: PathStyle, explode: bool) -> String {
    match (style, v) {
        (PathStyle::Simple, Value::Array(a)) => a
            .iter()
            .map(|x| enc(&prim(x)))
            .collect::<Vec<_>>()
            .join(","),
        (PathStyle::Simple, Value::Object(o)) => join_object(o, explode, "=", ",", enc),
        (PathStyle::Simple, v) => enc(&prim(v)),
        // RFC 6570 `{.list}` / `{.list*}` (OAS 3.1.1 corrected 3.0's example table to match).
        (PathStyle::Label, Value::Array(a)) => {
            format!(
                ".{}",
                a.iter()
                    .map(|x| enc(&prim(x)))
                    .collect::<Vec<_>>()
                    .join(if explode { "." } else { "," })
            )
        }
        (PathStyle::Label, Value::Object(o)) => {
            format!(
                ".{}",
                join_object(o, explode, "=", if explode { "." } else { "," }, enc)
            )
        }
        (PathStyle::Label, v) => format!(".{}", enc(&prim(v))),
        (PathStyle::Matrix, Value::Array(a)) if explode => a
            .iter()
            .map(|x| format!(";{}={}", enc(name), enc(&prim(x))))
            .collect(),
        (PathStyle::Matrix, Value::Array(a)) => {
            format!(
                ";{}={}",
                enc(name),
                a.iter()
                    .map(|x| enc(&prim(x)))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }
        (PathStyle::Matrix, Value::Object(o)) if explode => {
            format!(";{}", join_object(o, true, "=", ";", enc))
        }
        (PathStyle::Matrix, Value::Object(o)) => {
            format!(";{}={}", enc(name), join_object(o, false, "=", ",", enc))
        }
        (PathStyle::Matrix, Value::Null) => format!(";{}", enc(name)),
        (PathStyle::Matrix, v) => format!(";{}={}", enc(name), enc(&prim(v))),
    }
}

/// `k,v,k2,v2` (explode false, `flat_sep` between everything) or `k=v<sep>k2=v2` (explode true).
fn join_object(
    o: &Map<String, Value>,
    explode: bool,
    kv: &str,
    sep: &str,
    e: fn(&str) -> String,
) -> String {
    if explode {
        o.iter()
            .map(|(k, v)| format!("{}{kv}{}", e(k), e(&prim(v))))
            .collect::<Vec<_>>()
            .join(sep)
    } else {
        o.iter()
            .flat_map(|(k, v)| [e(k), e(&prim(v))])
            .collect::<Vec<_>>()
            .join(sep)
    }
}

fn is_dot_segment(seg: &str) -> bool {
    matches!(
        seg.to_ascii_lowercase().as_str(),
        "." | ".." | "%2e" | ".%2e" | "%2e." | "%2e%2e"
    )
}

/// The path argument bound to template variable `name`, its style and explode, and its value.
type PathArg<'r, 'a> = (
    &'r ArgBinding,
    (PathStyle, bool),
    std::borrow::Cow<'a, Value>,
);

fn path_arg<'r, 'a>(
    route: &'r Route,
    args: &'a Map<String, Value>,
    name: &str,
) -> Result<PathArg<'r, 'a>, ArgError> {
    let (binding, style) = route
        .args
        .iter()
        .find_map(|b| match b.location {
            ArgLocation::Path { style, explode } if b.wire == name => Some((b, (style, explode))),
            _ => None,
        })
        .ok_or_else(|| ArgError {
            arg: None,
            message: format!("path template variable `{{{name}}}` has no matching argument"),
        })?;
    let value = args
        .get(&binding.arg)
        .ok_or_else(|| arg_err(binding, "missing (path parameters are required)"))?;
    Ok((binding, style, effective(binding, value)))
}

/// The route's path with its parameters substituted. Every `/`-separated segment that contains a
/// parameter must come out non-empty and must not be a dot segment (`.`, `..` or their `%2E`
/// spellings, which URL parsers resolve, moving the request to another resource).
fn build_path(route: &Route, args: &Map<String, Value>) -> Result<String, ArgError> {
    let mut out = String::new();
    let (path, _) = split_template(&route.path);
    let template = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    for (i, seg) in template.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        let mut built = String::new();
        let mut used: Vec<&ArgBinding> = Vec::new();
        let mut rest = seg;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| c + open) else {
                break;
            };
            built.push_str(&enc_template_literal(&rest[..open]));
            let name = &rest[open + 1..close];
            let (binding, (style, explode), value) = path_arg(route, args, name)?;
            built.push_str(&expand_path(name, &value, style, explode));
            used.push(binding);
            rest = &rest[close + 1..];
        }
        built.push_str(&enc_template_literal(rest));
        if let Some(b) = used.first() {
            if built.is_empty() {
                return Err(arg_err(
                    b,
                    "is empty; an empty path segment would address a different resource",
                ));
            }
            if is_dot_segment(&built) {
                return Err(arg_err(
                    b,
                    format!(
                        "makes the path segment `{built}`, a dot segment that URL resolution would remove (path traversal); refused"
                    ),
                ));
            }
        }
        out.push_str(&built);
    }
    Ok(out)
}

/// A path key may carry a query (`/{Bucket}?acl`, common in specs converted from AWS models) or
/// a fragment (`/cookies#exploded`, used to tell apart several operations on one path). Paths are
/// appended to the server URL, so the query is sent as written and the fragment is not: returns
/// the path part and the query part (without `?`), if any.
pub(crate) fn split_template(template: &str) -> (&str, Option<&str>) {
    let end = template.find(['?', '#']).unwrap_or(template.len());
    let query = template[end..]
        .strip_prefix('?')
        .map(|q| q.split('#').next().unwrap_or_default())
        .filter(|q| !q.is_empty());
    (&template[..end], query)
}

/// The query written in the path key, with any `{variable}` in it filled (simple style, encoded
/// as a query value).
fn template_query(
    route: &Route,
    query: &str,
    args: &Map<String, Value>,
) -> Result<String, ArgError> {
    let mut out = String::new();
    let mut rest = query;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| c + open) else {
            break;
        };
        out.push_str(&enc_query_literal(&rest[..open]));
        let name = &rest[open + 1..close];
        let (_, _, value) = path_arg(route, args, name)?;
        out.push_str(&enc(&prim(&value)));
        rest = &rest[close + 1..];
    }
    out.push_str(&enc_query_literal(rest));
    Ok(out)
}

// ---------------------------------------------------------------- query

fn expand_query(
    name: &str,
    v: &Value,
    style: QueryStyle,
    explode: bool,
    allow_reserved: bool,
    out: &mut Vec<String>,
) {
    let ev: fn(&str) -> String = if allow_reserved { enc_reserved } else { enc };
    let n = enc(name);
    match v {
        Value::Null => {}
        Value::Array(a) if a.is_empty() => {}
        Value::Object(o) if o.is_empty() => {}
        Value::Array(_) if style == QueryStyle::DeepObject => deep_value(&n, v, ev, enc, out),
        // Styles say nothing of arrays of objects or arrays; APIs that take one in the query
        // (Box's `mdfilters`) take it as JSON, whole.
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
            out.push(format!("{n}={}", ev(&v.to_string())))
        }
        Value::Array(a) => scalar_array(&n, a, style, explode, ev, out),
        Value::Object(o) => match style {
            QueryStyle::DeepObject => deep_object(&n, o, ev, enc, out),
            _ if explode => out.extend(
                o.iter()
                    .map(|(k, x)| format!("{}={}", enc(k), ev(&prim(x)))),
            ),
            QueryStyle::Form => out.push(format!("{n}={}", join_object(o, false, "", ",", ev))),
            QueryStyle::SpaceDelimited => {
                out.push(format!("{n}={}", join_object(o, false, "", "%20", ev)))
            }
            QueryStyle::PipeDelimited => {
                out.push(format!("{n}={}", join_object(o, false, "", "|", ev)))
            }
        },
        v => out.push(format!("{n}={}", ev(&prim(v)))),
    }
}

/// An array of scalars as `style` spells it (query parameters and form fields alike): exploded,
/// `n=a&n=b`; else one `n=` with the style's delimiter (`,`, `%20`, `|`). `n` is encoded already;
/// `ev` encodes each value.
fn scalar_array(
    n: &str,
    a: &[Value],
    style: QueryStyle,
    explode: bool,
    ev: fn(&str) -> String,
    out: &mut Vec<String>,
) {
    let delim = match style {
        _ if explode => None,
        QueryStyle::Form | QueryStyle::DeepObject => Some(","),
        QueryStyle::SpaceDelimited => Some("%20"),
        QueryStyle::PipeDelimited => Some("|"),
    };
    match delim {
        None => out.extend(a.iter().map(|x| format!("{n}={}", ev(&prim(x))))),
        Some(d) => out.push(format!(
            "{n}={}",
            a.iter().map(|x| ev(&prim(x))).collect::<Vec<_>>().join(d)
        )),
    }
}

/// `prefix[k]=v`, recursing into nested objects (`prefix[a][b]=v`); arrays repeat the key
/// (`prefix[a]=1&prefix[a]=2`). `prefix` is already encoded.
/// deepObject is the bracket convention of Rack, PHP and `qs` (`a[b][c]=x`); OpenAPI defines it
/// for objects only. Arrays inside one (and arrays given a deepObject style, like Stripe's
/// `expand`) follow the same convention: `a[]=x&a[]=y` for scalars, which those parsers all read
/// as an array (a repeated `a=x&a=y` keeps only the last value there), and `a[0][k]=v` for arrays
/// of objects or arrays, as Stripe's own clients send them.
fn deep_object(
    prefix: &str,
    o: &Map<String, Value>,
    ev: fn(&str) -> String,
    key_enc: fn(&str) -> String,
    out: &mut Vec<String>,
) {
    for (k, v) in o {
        deep_value(&format!("{prefix}[{}]", key_enc(k)), v, ev, key_enc, out);
    }
}

fn deep_value(
    key: &str,
    v: &Value,
    ev: fn(&str) -> String,
    key_enc: fn(&str) -> String,
    out: &mut Vec<String>,
) {
    match v {
        Value::Null => {}
        Value::Object(inner) => deep_object(key, inner, ev, key_enc, out),
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
            for (i, x) in a.iter().enumerate() {
                deep_value(&format!("{key}[{i}]"), x, ev, key_enc, out);
            }
        }
        Value::Array(a) => out.extend(a.iter().map(|x| format!("{key}[]={}", ev(&prim(x))))),
        v => out.push(format!("{key}={}", ev(&prim(v)))),
    }
}

fn check_header_value(b: &ArgBinding, s: &str) -> Result<(), ArgError> {
    if s.chars().any(|c| c.is_control() && c != '\t') {
        return Err(arg_err(
            b,
            "contains a control character (CR, LF, ...), which is not allowed in an HTTP header",
        ));
    }
    Ok(())
}

fn expand_header(v: &Value, explode: bool) -> String {
    let id: fn(&str) -> String = str::to_string;
    match v {
        Value::Array(a) => a.iter().map(prim).collect::<Vec<_>>().join(","),
        Value::Object(o) => join_object(o, explode, "=", ",", id),
        v => prim(v),
    }
}

fn expand_cookie(
    b: &ArgBinding,
    v: &Value,
    explode: bool,
    out: &mut Vec<String>,
) -> Result<(), ArgError> {
    let check = |s: &str| -> Result<(), ArgError> {
        if s.contains(['\r', '\n']) {
            Err(arg_err(
                b,
                "contains CR or LF, which is not allowed in a cookie",
            ))
        } else {
            Ok(())
        }
    };
    let name = &b.wire;
    match v {
        Value::Null => {}
        Value::Array(a) => {
            for x in a {
                check(&prim(x))?;
            }
            if explode {
                out.extend(a.iter().map(|x| format!("{name}={}", enc_cookie(&prim(x)))));
            } else {
                out.push(format!(
                    "{name}={}",
                    a.iter()
                        .map(|x| enc_cookie(&prim(x)))
                        .collect::<Vec<_>>()
                        .join(",")
                ));
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                check(k)?;
                check(&prim(x))?;
            }
            if explode {
                out.extend(
                    o.iter()
                        .map(|(k, x)| format!("{}={}", enc_cookie(k), enc_cookie(&prim(x)))),
                );
            } else {
                out.push(format!(
                    "{name}={}",
                    join_object(o, false, "", ",", enc_cookie)
                ));
            }
        }
        v => {
            let s = prim(v);
            check(&s)?;
            out.push(format!("{name}={}", enc_cookie(&s)));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- bodies

fn encoding_of<'e>(binding: &'e BodyBinding, wire: &str) -> Option<&'e PartEncoding> {
    binding.encoding.iter().find(|e| e.name == wire)
}

/// The first concrete media type of an encoding `contentType` list (`image/png, image/jpeg`);
/// wildcards yield `None`.
fn concrete_media(ct: Option<&str>) -> Option<String> {
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
fn decode_base64(s: &str) -> Result<(Vec<u8>, Option<String>), InvalidBase64> {
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

fn credential_shadowed(what: &str, name: &str) -> ArgError {
    ArgError {
        arg: None,
        message: format!(
            "the arguments set the {what} `{name}`, which carries the API credential; refused (the configured credential is sent)"
        ),
    }
}

/// A binary argument that is neither base64 nor a base64 `data:` URL.
#[derive(Debug, thiserror::Error)]
#[error("invalid base64 ({0})")]
struct InvalidBase64(#[source] base64::DecodeError);

/// One `application/x-www-form-urlencoded` field (name and value encoded, delimiters raw), as
/// its encoding object says: arrays default to style form, exploded (`tag=a&tag=b`); objects,
/// and arrays of objects or arrays, that no `style` covers go deepObject-style (`filter[a]=1`,
/// `items[0][price]=p1`, the bracket convention of Rack, PHP and `qs`): exploded form style would
/// drop the field's name (`a=1`) and a nested value would be JSON text, which no form decoder
/// reads.
fn form_field(name: &str, v: &Value, enc_: Option<&PartEncoding>, out: &mut Vec<String>) {
    let n = enc_form(name);
    if enc_
        .and_then(|e| e.content_type.as_deref())
        .is_some_and(is_json_media)
    {
        if !v.is_null() {
            out.push(format!("{n}={}", enc_form(&v.to_string())));
        }
        return;
    }
    let declared = enc_.and_then(|e| e.style);
    let style = declared.unwrap_or(QueryStyle::Form);
    let explode = enc_
        .and_then(|e| e.explode)
        .unwrap_or(style == QueryStyle::Form);
    match v {
        Value::Null => {}
        Value::Array(_) if style == QueryStyle::DeepObject => {
            deep_value(&n, v, enc_form, enc_form, out)
        }
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
            deep_value(&n, v, enc_form, enc_form, out)
        }
        Value::Object(o) if declared.is_none() => deep_object(&n, o, enc_form, enc_form, out),
        Value::Array(a) => scalar_array(&n, a, style, explode, enc_form, out),
        Value::Object(o) => match style {
            QueryStyle::DeepObject => deep_object(&n, o, enc_form, enc_form, out),
            _ if explode => out.extend(
                o.iter()
                    .filter(|(_, x)| !x.is_null())
                    .map(|(k, x)| format!("{}={}", enc_form(k), enc_form(&prim(x)))),
            ),
            QueryStyle::SpaceDelimited => out.push(format!(
                "{n}={}",
                join_object(o, false, "", "%20", enc_form)
            )),
            QueryStyle::PipeDelimited => {
                out.push(format!("{n}={}", join_object(o, false, "", "|", enc_form)))
            }
            QueryStyle::Form => {
                out.push(format!("{n}={}", join_object(o, false, "", ",", enc_form)))
            }
        },
        v => out.push(format!("{n}={}", enc_form(&prim(v)))),
    }
}

/// One part of a multipart body.
struct Part {
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

fn body_arg<'a>(
    route: &'a Route,
    args: &'a Map<String, Value>,
) -> Option<(&'a ArgBinding, &'a Value)> {
    route
        .args
        .iter()
        .filter(|b| b.location == ArgLocation::Body)
        .find_map(|b| args.get(&b.arg).map(|v| (b, v)))
}

fn body_fields<'a>(
    route: &'a Route,
    args: &'a Map<String, Value>,
) -> Vec<(&'a ArgBinding, &'a Value)> {
    route
        .args
        .iter()
        .filter(|b| b.location == ArgLocation::BodyField)
        .filter_map(|b| args.get(&b.arg).map(|v| (b, v)))
        .collect()
}

fn build_body(
    route: &Route,
    args: &Map<String, Value>,
    boundary: Option<&str>,
) -> Result<Option<(String, Vec<u8>)>, ArgError> {
    let Some(binding) = &route.body else {
        return Ok(None);
    };
    let mut ct = binding.content_type.clone();
    let fields = body_fields(route, args);
    let whole = body_arg(route, args);
    match binding.kind {
        BodyKind::Json => {
            // A media range (`*/*`, `application/*`, `application/*+json`) is not a content
            // type: what is sent is JSON.
            if ct.contains('*') {
                ct = "application/json".to_string();
            }
            if let Some((_, v)) = whole {
                return Ok(Some((ct, v.to_string().into_bytes())));
            }
            if fields.is_empty() && !(binding.required && binding.flattened) {
                return Ok(None);
            }
            let obj: Map<String, Value> = fields
                .iter()
                .map(|(b, v)| (b.wire.clone(), (*v).clone()))
                .collect();
            Ok(Some((ct, Value::Object(obj).to_string().into_bytes())))
        }
        BodyKind::Form => {
            let mut pairs = Vec::new();
            match whole {
                Some((_, Value::String(s))) => return Ok(Some((ct, s.clone().into_bytes()))),
                Some((_, Value::Object(o))) => {
                    for (k, v) in o {
                        form_field(k, v, encoding_of(binding, k), &mut pairs);
                    }
                }
                Some((b, _)) => {
                    return Err(arg_err(
                        b,
                        "a form body must be an object (or an already encoded string)",
                    ));
                }
                None => {
                    if fields.is_empty() && !binding.required {
                        return Ok(None);
                    }
                    for (b, v) in &fields {
                        form_field(&b.wire, v, encoding_of(binding, &b.wire), &mut pairs);
                    }
                }
            }
            Ok(Some((ct, pairs.join("&").into_bytes())))
        }
        BodyKind::Multipart => {
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
                    let (data, mime) = decode_base64(s)
                        .map_err(|e| arg_err(b, format!("the file content: {e}")))?;
                    parts.push(Part {
                        name: "file".into(),
                        filename: Some("file".into()),
                        content_type: Some(
                            mime.unwrap_or_else(|| "application/octet-stream".to_string()),
                        ),
                        data,
                    });
                }
                Some((b, _)) => return Err(arg_err(b, "a multipart body must be an object")),
                None => {
                    if fields.is_empty() && !binding.required {
                        return Ok(None);
                    }
                    for (b, v) in &fields {
                        multipart_parts(b, &b.wire, v, encoding_of(binding, &b.wire), &mut parts)?;
                    }
                }
            }
            let boundary = match boundary {
                Some(b) => b.to_string(),
                None => loop {
                    let b = random_boundary();
                    if !parts
                        .iter()
                        .any(|p| p.data.windows(b.len()).any(|w| w == b.as_bytes()))
                    {
                        break b;
                    }
                },
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
        BodyKind::Text => match whole {
            None => Ok(None),
            Some((_, v)) => {
                let ct = if ct.contains('*') {
                    "text/plain; charset=utf-8".to_string()
                } else {
                    ct
                };
                Ok(Some((
                    ct,
                    match v {
                        Value::String(s) => s.clone().into_bytes(),
                        v => v.to_string().into_bytes(),
                    },
                )))
            }
        },
        BodyKind::Binary => match whole {
            None => Ok(None),
            Some((b, Value::String(s))) => {
                let (data, mime) = decode_base64(s).map_err(|e| arg_err(b, e))?;
                let ct = if ct.contains('*') {
                    mime.unwrap_or_else(|| "application/octet-stream".to_string())
                } else {
                    ct
                };
                Ok(Some((ct, data)))
            }
            Some((b, _)) => Err(arg_err(b, "must be a base64 string")),
        },
    }
}

// ---------------------------------------------------------------- request

/// Settings the request builder needs from the forwarder.
pub(crate) struct BuildContext<'a> {
    pub base: &'a Url,
    pub user_agent: &'a str,
    pub static_headers: &'a [(String, String)],
    /// Headers of the MCP client's own HTTP request that `--forward-header` passes on: they
    /// replace same-named headers, credentials included (the operator asked for exactly that).
    pub forwarded_headers: &'a [(String, String)],
}

/// The base URL a route is sent to: `route.server` (absolute, or relative to the base URL) or the
/// base URL.
pub(crate) fn effective_base(base: &Url, server: Option<&str>) -> Result<Url, ArgError> {
    let Some(server) = server else {
        return Ok(base.clone());
    };
    let url = match Url::parse(server) {
        Ok(u) => u,
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            base.join(server).map_err(|e| ArgError {
                arg: None,
                message: format!(
                    "the operation's server URL `{server}` cannot be resolved against {base}: {e}"
                ),
            })?
        }
        Err(e) => {
            return Err(ArgError {
                arg: None,
                message: format!("the operation's server URL `{server}` is invalid: {e}"),
            });
        }
    };
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(ArgError {
            arg: None,
            message: format!("the operation's server URL `{server}` is not an http(s) URL"),
        });
    }
    // The URL standard accepts hosts the HTTP stack does not (`https://{your-agent-url}`: a
    // server variable whose default is a placeholder); refuse them here, naming the server URL,
    // instead of failing later with the HTTP client's "not a valid Uri".
    if http::Uri::try_from(url.as_str()).is_err() {
        return Err(ArgError {
            arg: None,
            message: format!(
                "the operation's server URL `{server}` is not a valid HTTP URL (a server variable left as a placeholder?)"
            ),
        });
    }
    Ok(url)
}

pub(crate) fn build(
    ctx: &BuildContext<'_>,
    route: &Route,
    args: &Map<String, Value>,
    auth: &AuthParts,
    boundary: Option<&str>,
) -> Result<BuiltRequest, ArgError> {
    // Serializers and `Drop` recurse: never hand them an unbounded depth (validation refuses
    // such arguments first; this guards direct `build_request` callers).
    for b in &route.args {
        if let Some(v) = args.get(&b.arg)
            && openapi_mcp_toolset::validate::depth_exceeds(
                v,
                openapi_mcp_toolset::validate::MAX_DEPTH,
            )
        {
            return Err(arg_err(
                b,
                format!(
                    "is nested more than {} levels deep; refused",
                    openapi_mcp_toolset::validate::MAX_DEPTH
                ),
            ));
        }
    }
    // Empty values the API takes none of are left out (or refused, when required): the same
    // ones validation left out, in every serialization style (see `drop_empty_values`).
    let schema = route.input_schema.get();
    let pruned = openapi_mcp_toolset::validate::drop_empty_values(schema.as_deref(), route, args)
        .map_err(|problems| {
        let first = problems.into_iter().next();
        ArgError {
            arg: first.as_ref().map(|p| p.arg.clone()),
            message: first.map(|p| p.message).unwrap_or_default(),
        }
    })?;
    let args = &*pruned;
    let base = effective_base(ctx.base, route.server.as_deref())?;
    let base_path = base.path().trim_end_matches('/').to_string();
    let path = format!("{base_path}{}", build_path(route, args)?);

    let mut query: Vec<String> = Vec::new();
    if let Some(q) = base.query().filter(|q| !q.is_empty()) {
        query.push(q.to_string());
    }
    let args_query_start = query.len();
    if let (_, Some(q)) = split_template(&route.path) {
        query.push(template_query(route, q, args)?);
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut cookies: Vec<String> = Vec::new();
    for b in &route.args {
        let Some(value) = args.get(&b.arg) else {
            continue;
        };
        // A parameter the credential fills is the credential's, never the argument's (the
        // argument of a per-call apiKey parameter, when its credential is configured).
        let filled = match &b.location {
            ArgLocation::Header { .. } => auth
                .headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case(&b.wire)),
            ArgLocation::Query { .. } => auth.query.iter().any(|(k, _)| *k == b.wire),
            ArgLocation::Cookie { .. } => auth.cookies.iter().any(|(k, _)| *k == b.wire),
            _ => false,
        };
        if filled {
            continue;
        }
        let value = effective(b, value);
        match &b.location {
            ArgLocation::Query {
                style,
                explode,
                allow_reserved,
                ..
            } => {
                let before = query.len();
                expand_query(
                    &b.wire,
                    &value,
                    *style,
                    *explode,
                    *allow_reserved,
                    &mut query,
                );
                // A required parameter is always in the query: an empty object or array (or
                // null) has no members to write, and is sent as the empty value (`filter=`,
                // OpenAPI's "empty" serialization) instead of leaving the parameter out. Only
                // where the API allows empty values: elsewhere `drop_empty_values` refused it.
                if b.required && query.len() == before {
                    query.push(format!("{}=", enc(&b.wire)));
                }
            }
            ArgLocation::Header { explode } => {
                if value.is_null() {
                    continue;
                }
                let s = expand_header(&value, *explode);
                check_header_value(b, &s)?;
                if http::HeaderName::from_bytes(b.wire.as_bytes()).is_err() {
                    return Err(arg_err(b, "is not a valid HTTP header name"));
                }
                // The converter never makes these arguments; a tool set from elsewhere (an
                // older api.json, a hand-made one) still cannot set them.
                if is_reserved_header(&b.wire) {
                    return Err(arg_err(b, "names a header the HTTP client sets; refused"));
                }
                headers.push((b.wire.clone(), s));
            }
            ArgLocation::Cookie { explode } => expand_cookie(b, &value, *explode, &mut cookies)?,
            ArgLocation::Path { .. } | ArgLocation::Body | ArgLocation::BodyField => {}
        }
    }
    // Arguments never set a credential's parameter: a free-form object exploded into the query
    // (or cookies) could otherwise put `api_key=OTHER` before the configured one, and many
    // servers read the first.
    let shadows = |entries: &[String], sep: char, name: &str| {
        entries
            .iter()
            .flat_map(|e| e.split(sep))
            .any(|pair| pair.trim().split('=').next() == Some(name))
    };
    for (k, _) in &auth.query {
        if shadows(&query[args_query_start..], '&', &enc(k)) {
            return Err(credential_shadowed("query parameter", k));
        }
    }
    for (k, _) in &auth.cookies {
        if shadows(&cookies, ';', k) {
            return Err(credential_shadowed("cookie", k));
        }
    }
    for (k, v) in &auth.query {
        query.push(format!("{}={}", enc(k), enc(v)));
    }
    for (k, v) in &auth.cookies {
        cookies.push(format!("{k}={}", enc_cookie(v)));
    }

    if let Some(accept) = &route.accept {
        headers.push(("Accept".to_string(), accept.clone()));
    }
    headers.push(("User-Agent".to_string(), ctx.user_agent.to_string()));
    // Static headers replace same-named computed headers, but never credentials.
    for (k, v) in ctx.static_headers {
        if auth.headers.iter().any(|(a, _)| a.eq_ignore_ascii_case(k)) {
            continue;
        }
        if k.eq_ignore_ascii_case("cookie") {
            cookies.push(v.clone());
            continue;
        }
        headers.retain(|(h, _)| !h.eq_ignore_ascii_case(k));
        headers.push((k.clone(), v.clone()));
    }
    if !cookies.is_empty() {
        headers.push(("Cookie".to_string(), cookies.join("; ")));
    }
    for (k, v) in &auth.headers {
        headers.retain(|(h, _)| !h.eq_ignore_ascii_case(k));
        headers.push((k.clone(), v.clone()));
    }
    for (k, v) in ctx.forwarded_headers {
        if v.contains(['\r', '\n']) || http::HeaderName::from_bytes(k.as_bytes()).is_err() {
            continue;
        }
        headers.retain(|(h, _)| !h.eq_ignore_ascii_case(k));
        headers.push((k.clone(), v.clone()));
    }
    for (k, v) in &auth.headers {
        if v.contains(['\r', '\n']) || http::HeaderName::from_bytes(k.as_bytes()).is_err() {
            return Err(ArgError {
                arg: None,
                message: format!("the credential for header `{k}` is not a valid header value"),
            });
        }
    }

    let mut url = base.clone();
    url.set_fragment(None);
    url.set_path(&path);
    let query = query.join("&");
    url.set_query(if query.is_empty() { None } else { Some(&query) });
    if url.path() != path {
        return Err(ArgError {
            arg: None,
            message: format!(
                "the path arguments would be rewritten by URL normalization (`{path}` became `{}`); refused",
                url.path()
            ),
        });
    }
    let len = url.as_str().len();
    if len > MAX_URL_BYTES {
        let culprit = route
            .args
            .iter()
            .filter(|b| {
                matches!(
                    b.location,
                    ArgLocation::Path { .. } | ArgLocation::Query { .. }
                )
            })
            .filter_map(|b| {
                let v = args.get(&b.arg)?;
                Some((b, v.as_str().map_or_else(|| v.to_string().len(), str::len)))
            })
            .max_by_key(|(_, n)| *n);
        let what = format!(
            "makes the request URL {len} bytes long, more than the {MAX_URL_BYTES} bytes an HTTP request target can hold; refused"
        );
        return Err(match culprit {
            Some((b, _)) => arg_err(b, what),
            None => ArgError {
                arg: None,
                message: format!("the arguments {what}"),
            },
        });
    }
    let under = url.scheme() == base.scheme()
        && url.host_str() == base.host_str()
        && url.port_or_known_default() == base.port_or_known_default()
        && (url.path() == base_path || url.path().starts_with(&format!("{base_path}/")));
    if !under {
        return Err(ArgError {
            arg: None,
            message: format!("the request URL would leave the API base URL {base}; refused"),
        });
    }

    let body = build_body(route, args, boundary)?;
    let method =
        http::Method::from_bytes(route.method.as_str().as_bytes()).unwrap_or(http::Method::GET);
    Ok(BuiltRequest {
        method,
        url,
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use openapi_mcp_toolset::model::HttpMethod;

    const UA: &str = "openapi-mcp/test";

    fn base() -> Url {
        Url::parse("https://api.example.com/v1/").expect("url")
    }

    fn route(path: &str, args: Vec<ArgBinding>) -> Route {
        Route {
            args,
            ..Route::new(HttpMethod::Get, path)
        }
    }

    fn arg(name: &str, location: ArgLocation) -> ArgBinding {
        ArgBinding {
            arg: name.into(),
            wire: name.into(),
            location,
            required: false,
            content_type: None,
        }
    }

    fn args(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    /// `build` with the test base URL, no static or forwarded headers, and `auth`.
    fn build_with(r: &Route, a: Value, auth: &AuthParts) -> Result<BuiltRequest, ArgError> {
        let b = base();
        let ctx = BuildContext {
            base: &b,
            user_agent: UA,
            static_headers: &[],
            forwarded_headers: &[],
        };
        build(&ctx, r, &args(a), auth, Some("BOUNDARY"))
    }

    fn build_ok(r: &Route, a: Value) -> BuiltRequest {
        build_with(r, a, &AuthParts::default()).expect("build")
    }

    fn build_err(r: &Route, a: Value) -> ArgError {
        build_with(r, a, &AuthParts::default()).expect_err("should fail")
    }

    fn path_url(style: PathStyle, explode: bool, v: Value) -> String {
        let r = route(
            "/c/{color}",
            vec![arg("color", ArgLocation::Path { style, explode })],
        );
        build_ok(&r, json!({ "color": v }))
            .url
            .path()
            .trim_start_matches("/v1/c/")
            .to_string()
    }

    fn blue() -> Value {
        json!("blue")
    }
    fn arr() -> Value {
        json!(["blue", "black", "brown"])
    }
    fn obj() -> Value {
        json!({"R": 100, "G": 200, "B": 150})
    }

    #[test]
    fn query_and_fragment_written_in_the_path_key() {
        let path = |style| ArgLocation::Path {
            style,
            explode: false,
        };
        let q = |name: &str| arg(name, ArgLocation::query(QueryStyle::Form, true));
        // AWS-style: the query in the key is sent as written, before the parameters.
        let r = route(
            "/{Bucket}?acl",
            vec![arg("Bucket", path(PathStyle::Simple)), q("max")],
        );
        let req = build_ok(&r, json!({"Bucket": "b 1", "max": 2}));
        assert_eq!(req.url.path(), "/v1/b%201");
        assert_eq!(req.url.query(), Some("acl&max=2"));
        // Variables in it are filled and encoded as query values.
        let r = route(
            "/x?list-type=2&prefix={p}",
            vec![arg("p", path(PathStyle::Simple))],
        );
        let req = build_ok(&r, json!({"p": "a&b"}));
        assert_eq!(req.url.query(), Some("list-type=2&prefix=a%26b"));
        // A fragment only tells operations apart: it is not sent, a `?` after it included.
        let r = route("/cookies#form?x=1", vec![q("a")]);
        let req = build_ok(&r, json!({"a": "1"}));
        assert_eq!(req.url.path(), "/v1/cookies");
        assert_eq!(req.url.query(), Some("a=1"));
        assert_eq!(req.url.fragment(), None);
        assert_eq!(
            openapi_mcp_toolset::media::path_template_names("/a/{x}#{y}"),
            vec!["x".to_string()]
        );
    }

    #[test]
    fn path_styles_spec_table() {
        use PathStyle::*;
        let cases: Vec<(PathStyle, bool, Value, &str)> = vec![
            (Simple, false, blue(), "blue"),
            (Simple, false, arr(), "blue,black,brown"),
            (Simple, false, obj(), "R,100,G,200,B,150"),
            (Simple, true, blue(), "blue"),
            (Simple, true, arr(), "blue,black,brown"),
            (Simple, true, obj(), "R=100,G=200,B=150"),
            (Label, false, blue(), ".blue"),
            (Label, false, arr(), ".blue,black,brown"),
            (Label, false, obj(), ".R,100,G,200,B,150"),
            (Label, true, blue(), ".blue"),
            (Label, true, arr(), ".blue.black.brown"),
            (Label, true, obj(), ".R=100.G=200.B=150"),
            (Matrix, false, blue(), ";color=blue"),
            (Matrix, false, arr(), ";color=blue,black,brown"),
            (Matrix, false, obj(), ";color=R,100,G,200,B,150"),
            (Matrix, true, blue(), ";color=blue"),
            (Matrix, true, arr(), ";color=blue;color=black;color=brown"),
            (Matrix, true, obj(), ";R=100;G=200;B=150"),
            (Matrix, false, Value::Null, ";color"),
            (Label, false, json!("a.b"), ".a.b"),
            (Simple, false, json!(5), "5"),
            (Simple, false, json!(2.5), "2.5"),
            (Simple, false, json!(true), "true"),
        ];
        for (style, explode, v, want) in cases {
            assert_eq!(
                path_url(style, explode, v.clone()),
                want,
                "{style:?} explode={explode} {v}"
            );
        }
        // The brief's id examples.
        assert_eq!(path_url(Matrix, false, json!(5)), ";color=5");
        assert_eq!(path_url(Matrix, false, json!([3, 4])), ";color=3,4");
        assert_eq!(path_url(Matrix, true, json!([3, 4])), ";color=3;color=4");
        assert_eq!(
            path_url(Matrix, true, json!({"role": "admin"})),
            ";role=admin"
        );
    }

    #[test]
    fn path_hostile_values() {
        let simple = ArgLocation::Path {
            style: PathStyle::Simple,
            explode: false,
        };
        let r = route("/files/{name}/meta", vec![arg("name", simple.clone())]);
        let cases = [
            ("../etc", "/v1/files/..%2Fetc/meta"),
            ("a/b?c#d", "/v1/files/a%2Fb%3Fc%23d/meta"),
            ("%2e%2e", "/v1/files/%252e%252e/meta"),
            ("//evil.com", "/v1/files/%2F%2Fevil.com/meta"),
            ("a b%", "/v1/files/a%20b%25/meta"),
            ("...", "/v1/files/.../meta"),
            ("é", "/v1/files/%C3%A9/meta"),
        ];
        for (v, want) in cases {
            let req = build_ok(&r, json!({ "name": v }));
            assert_eq!(req.url.path(), want, "{v}");
            assert_eq!(req.url.as_str(), format!("https://api.example.com{want}"));
            assert_eq!(req.url.host_str(), Some("api.example.com"));
        }
        // `.` and `..` (as whole segments) are resolved by URL parsers even when percent-encoded
        // (WHATWG treats `%2E%2E` as `..`), so they are refused instead of silently rewritten.
        assert_eq!(
            Url::parse("https://h/v1/files/%2E%2E/meta")
                .expect("url")
                .path(),
            "/v1/meta"
        );
        for v in ["..", ".", ""] {
            let e = build_err(&r, json!({ "name": v }));
            assert_eq!(e.arg.as_deref(), Some("name"), "{v}: {e}");
        }
        // Label style: the value `.` would make the segment `..`.
        let r2 = route(
            "/x/{n}",
            vec![arg(
                "n",
                ArgLocation::Path {
                    style: PathStyle::Label,
                    explode: false,
                },
            )],
        );
        assert!(
            build_err(&r2, json!({"n": "."}))
                .message
                .contains("dot segment")
        );
        assert!(
            build_err(&r2, json!({"n": null}))
                .message
                .contains("dot segment")
        );
        // Missing path argument: an error, no panic.
        let e = build_err(&r, json!({}));
        assert_eq!(e.arg.as_deref(), Some("name"));
        // A template variable without a binding.
        let r3 = route("/x/{nope}", vec![]);
        assert!(build_err(&r3, json!({})).message.contains("{nope}"));
        // Dots inside a larger segment are fine.
        let r4 = route("/files/{name}.json", vec![arg("name", simple)]);
        assert_eq!(
            build_ok(&r4, json!({"name": ".."})).url.path(),
            "/v1/files/...json"
        );
    }

    #[test]
    fn oversized_urls_and_deep_values_are_refused_naming_the_argument() {
        let simple = ArgLocation::Path {
            style: PathStyle::Simple,
            explode: false,
        };
        let q = ArgLocation::query(QueryStyle::Form, true);
        let r = route(
            "/files/{name}",
            vec![
                arg("name", simple),
                arg("q", q),
                arg("body", ArgLocation::Body),
            ],
        );
        // Up to http::Uri's limit: sent.
        let fits = MAX_URL_BYTES - "https://api.example.com/v1/files/".len();
        let req = build_ok(&r, json!({ "name": "a".repeat(fits) }));
        assert_eq!(req.url.as_str().len(), MAX_URL_BYTES);
        let e = build_err(&r, json!({ "name": "a".repeat(fits + 1) }));
        assert_eq!(e.arg.as_deref(), Some("name"));
        assert_eq!(
            e.message,
            "argument `name` (path `name`): makes the request URL 65535 bytes long, more than the 65534 bytes an HTTP request target can hold; refused"
        );
        // Integral floats are written as integers in the URL.
        let req = build_ok(&r, json!({"name": 5.0, "q": -0.0}));
        assert_eq!(req.url.as_str(), "https://api.example.com/v1/files/5?q=0");
        let req = build_ok(&r, json!({"name": 2.5, "q": 1e300}));
        assert_eq!(
            req.url.as_str(),
            "https://api.example.com/v1/files/2.5?q=1e%2B300"
        );
        let e = build_err(&r, json!({"name": "x", "q": "é".repeat(40_000)}));
        assert_eq!(e.arg.as_deref(), Some("q"), "{e}");
        // Nested beyond MAX_DEPTH: refused before any serializer recurses.
        let mut deep = json!(1);
        for _ in 0..=openapi_mcp_toolset::validate::MAX_DEPTH {
            deep = Value::Array(vec![deep]);
        }
        let e = build_err(&r, json!({"name": "x", "body": deep}));
        assert_eq!(
            e.message,
            "argument `body` (body `body`): is nested more than 128 levels deep; refused"
        );
    }

    #[test]
    fn base_url_and_server_override() {
        let r = route("/pets", vec![]);
        assert_eq!(
            build_ok(&r, json!({})).url.as_str(),
            "https://api.example.com/v1/pets"
        );
        let b = Url::parse("http://127.0.0.1:8080").expect("url");
        let ctx = BuildContext {
            base: &b,
            user_agent: UA,
            static_headers: &[],
            forwarded_headers: &[],
        };
        let req = build(&ctx, &r, &Map::new(), &AuthParts::default(), None).expect("build");
        assert_eq!(req.url.as_str(), "http://127.0.0.1:8080/pets");
        // Base query parameters are kept.
        let b = Url::parse("https://h/api?api-version=2").expect("url");
        let ctx = BuildContext {
            base: &b,
            user_agent: UA,
            static_headers: &[],
            forwarded_headers: &[],
        };
        let r2 = route(
            "/x",
            vec![arg("q", ArgLocation::query(QueryStyle::Form, true))],
        );
        let req = build(
            &ctx,
            &r2,
            &args(json!({"q": 1})),
            &AuthParts::default(),
            None,
        )
        .expect("build");
        assert_eq!(req.url.as_str(), "https://h/api/x?api-version=2&q=1");
        // Operation server: absolute, and relative to the base URL.
        let mut r3 = route("/up", vec![]);
        r3.server = Some("https://files.example.com/u".into());
        assert_eq!(
            build_ok(&r3, json!({})).url.as_str(),
            "https://files.example.com/u/up"
        );
        r3.server = Some("/v2".into());
        assert_eq!(
            build_ok(&r3, json!({})).url.as_str(),
            "https://api.example.com/v2/up"
        );
        // A server variable whose default is a placeholder (DigitalOcean's agent inference:
        // `https://{agent_url}`, default `{your-agent-url}`): the URL standard accepts the host,
        // the HTTP stack does not; refused before sending, naming the server URL.
        r3.server = Some("https://{your-agent-url}".into());
        let e = build_err(&r3, json!({}));
        assert!(e.arg.is_none());
        assert!(
            e.message
                .contains("`https://{your-agent-url}` is not a valid HTTP URL"),
            "{}",
            e.message
        );
        r3.server = Some("https://".into());
        assert!(
            build_err(&r3, json!({}))
                .message
                .contains("`https://` is invalid")
        );
    }

    fn query_of(style: QueryStyle, explode: bool, v: Value) -> String {
        query_of_allowing(style, explode, false, v)
    }

    fn query_of_allowing(
        style: QueryStyle,
        explode: bool,
        allow_empty_value: bool,
        v: Value,
    ) -> String {
        let r = route(
            "/q",
            vec![arg(
                "color",
                ArgLocation::Query {
                    style,
                    explode,
                    allow_reserved: false,
                    allow_empty_value,
                },
            )],
        );
        build_ok(&r, json!({ "color": v }))
            .url
            .query()
            .unwrap_or("")
            .to_string()
    }

    #[test]
    fn query_styles_spec_table() {
        use QueryStyle::*;
        let cases: Vec<(QueryStyle, bool, Value, &str)> = vec![
            // The table's "empty" column is for parameters that allow empty values (below);
            // others leave `""` out, as OpenAPI's `allowEmptyValue` defaults to false.
            (Form, false, json!(""), ""),
            (Form, true, json!(""), ""),
            (Form, false, blue(), "color=blue"),
            (Form, false, arr(), "color=blue,black,brown"),
            (Form, false, obj(), "color=R,100,G,200,B,150"),
            (Form, true, blue(), "color=blue"),
            (Form, true, arr(), "color=blue&color=black&color=brown"),
            (Form, true, obj(), "R=100&G=200&B=150"),
            (SpaceDelimited, false, arr(), "color=blue%20black%20brown"),
            (
                SpaceDelimited,
                false,
                obj(),
                "color=R%20100%20G%20200%20B%20150",
            ),
            (PipeDelimited, false, arr(), "color=blue|black|brown"),
            (PipeDelimited, false, obj(), "color=R|100|G|200|B|150"),
            (
                DeepObject,
                true,
                obj(),
                "color[R]=100&color[G]=200&color[B]=150",
            ),
            (
                DeepObject,
                true,
                json!({"a": {"b": "x"}, "c": [1, 2]}),
                "color[a][b]=x&color[c][]=1&color[c][]=2",
            ),
            (
                DeepObject,
                true,
                json!({"l": [{"k": 1}, {"k": 2}]}),
                "color[l][0][k]=1&color[l][1][k]=2",
            ),
            (DeepObject, true, json!(["a", "b"]), "color[]=a&color[]=b"),
            (
                Form,
                true,
                json!([{"k": "v"}]),
                "color=%5B%7B%22k%22%3A%22v%22%7D%5D",
            ),
            (DeepObject, true, json!([{"k": "v"}]), "color[0][k]=v"),
            (Form, true, json!([3, 4]), "color=3&color=4"),
            (Form, false, json!([3, 4]), "color=3,4"),
            (SpaceDelimited, false, json!([3, 4]), "color=3%204"),
            (PipeDelimited, false, json!([3, 4]), "color=3|4"),
            (
                Form,
                true,
                json!({"role": "admin", "name": "x"}),
                "role=admin&name=x",
            ),
            (Form, false, json!({"role": "admin"}), "color=role,admin"),
            (
                DeepObject,
                true,
                json!({"role": "admin"}),
                "color[role]=admin",
            ),
            (Form, true, json!(true), "color=true"),
            (Form, true, json!(null), ""),
            (Form, true, json!([]), ""),
        ];
        for (style, explode, v, want) in cases {
            assert_eq!(
                query_of(style, explode, v.clone()),
                want,
                "{style:?} explode={explode} {v}"
            );
        }
        for explode in [false, true] {
            assert_eq!(query_of_allowing(Form, explode, true, json!("")), "color=");
        }
    }

    #[test]
    fn query_encoding() {
        use QueryStyle::*;
        assert_eq!(
            query_of(Form, true, json!("a b&c=d/é+%")),
            "color=a%20b%26c%3Dd%2F%C3%A9%2B%25"
        );
        // Values containing the delimiter are encoded, delimiters are not.
        assert_eq!(
            query_of(Form, false, json!(["a,b", "c|d"])),
            "color=a%2Cb,c%7Cd"
        );
        assert_eq!(
            query_of(PipeDelimited, false, json!(["a|b", "c"])),
            "color=a%7Cb|c"
        );
        // allowReserved: reserved characters pass (except `#[]` and the form delimiters `&=+`),
        // valid %XX triples pass.
        let r = route(
            "/q",
            vec![arg(
                "p",
                ArgLocation::Query {
                    style: Form,
                    explode: true,
                    allow_reserved: true,
                    allow_empty_value: false,
                },
            )],
        );
        let req = build_ok(&r, json!({"p": "a/b?c:d@e!$&()*+,;=[x]#f %41 %zz"}));
        assert_eq!(
            req.url.query(),
            Some("p=a/b?c:d@e!$%26()*%2B,;%3D%5Bx%5D%23f%20%41%20%25zz")
        );
        // content: application/json on a query parameter.
        let mut a = arg("filter", ArgLocation::query(Form, true));
        a.content_type = Some("application/json".into());
        let r = route("/q", vec![a]);
        let req = build_ok(&r, json!({"filter": {"a": [1, "x y"]}}));
        assert_eq!(
            req.url.query(),
            Some("filter=%7B%22a%22%3A%5B1%2C%22x%20y%22%5D%7D")
        );
        // Parameter names are encoded too.
        let r = route("/q", vec![arg("a b", ArgLocation::query(Form, true))]);
        assert_eq!(build_ok(&r, json!({"a b": 1})).url.query(), Some("a%20b=1"));
    }

    #[test]
    fn headers_and_cookies() {
        let r = route(
            "/h",
            vec![
                arg("X-Color", ArgLocation::Header { explode: false }),
                arg("X-Arr", ArgLocation::Header { explode: false }),
                arg("X-Obj", ArgLocation::Header { explode: false }),
                arg("X-ObjE", ArgLocation::Header { explode: true }),
                arg("X-Num", ArgLocation::Header { explode: false }),
                arg("X-Null", ArgLocation::Header { explode: false }),
            ],
        );
        let req = build_ok(
            &r,
            json!({"X-Color": "blue", "X-Arr": arr(), "X-Obj": obj(), "X-ObjE": obj(), "X-Num": 1.5, "X-Null": null}),
        );
        assert_eq!(
            req.headers,
            vec![
                ("X-Color".to_string(), "blue".to_string()),
                ("X-Arr".to_string(), "blue,black,brown".to_string()),
                ("X-Obj".to_string(), "R,100,G,200,B,150".to_string()),
                ("X-ObjE".to_string(), "R=100,G=200,B=150".to_string()),
                ("X-Num".to_string(), "1.5".to_string()),
                ("User-Agent".to_string(), UA.to_string()),
            ]
        );
        for bad in ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u{0}b", "a\u{7f}"] {
            let e = build_err(&r, json!({ "X-Color": bad }));
            assert_eq!(e.arg.as_deref(), Some("X-Color"));
            assert!(e.message.contains("X-Color"), "{e}");
        }
        assert!(
            build_err(&r, json!({"X-Arr": ["ok", "b\nad"]}))
                .message
                .contains("X-Arr")
        );
        // A tab is allowed.
        assert!(
            build_ok(&r, json!({"X-Color": "a\tb"}))
                .headers
                .contains(&("X-Color".into(), "a\tb".into()))
        );

        let r = route(
            "/c",
            vec![
                arg("session", ArgLocation::Cookie { explode: true }),
                arg("ids", ArgLocation::Cookie { explode: false }),
                arg("many", ArgLocation::Cookie { explode: true }),
            ],
        );
        let req = build_ok(
            &r,
            json!({"session": "a b;c,d\"e%", "ids": [3, 4], "many": ["x", "y"]}),
        );
        assert_eq!(
            req.headers.last(),
            Some(&(
                "Cookie".to_string(),
                "session=a%20b%3Bc%2Cd%22e%25; ids=3,4; many=x; many=y".to_string()
            ))
        );
        let e = build_err(&r, json!({"session": "a\r\nSet-Cookie: x"}));
        assert_eq!(e.arg.as_deref(), Some("session"));
    }

    /// #23 finding 21: a tool set from elsewhere (an older api.json) that binds `Host` or
    /// `Transfer-Encoding` to an argument still cannot set them.
    #[test]
    fn reserved_headers_are_refused_as_arguments() {
        for name in [
            "Host",
            "transfer-encoding",
            "Proxy-Authorization",
            "Connection",
        ] {
            let r = route(
                "/a",
                vec![arg(name, ArgLocation::Header { explode: false })],
            );
            let e = build_err(&r, json!({ name: "evil.example" }));
            assert_eq!(e.arg.as_deref(), Some(name));
            assert!(e.message.contains("refused"), "{e}");
        }
    }

    #[test]
    fn accept_user_agent_static_and_auth_headers() {
        let mut r = route(
            "/a",
            vec![arg("X-Trace", ArgLocation::Header { explode: false })],
        );
        r.accept = Some("application/json, text/plain".into());
        let b = base();
        let statics = vec![
            ("Authorization".to_string(), "Bearer static".to_string()),
            ("X-Tenant".to_string(), "t1".to_string()),
            ("X-Trace".to_string(), "static-trace".to_string()),
        ];
        let ctx = BuildContext {
            base: &b,
            user_agent: UA,
            static_headers: &statics,
            forwarded_headers: &[],
        };
        let auth = AuthParts {
            headers: vec![("Authorization".into(), "Bearer secret".into())],
            query: vec![("api key".into(), "k&1".into())],
            cookies: vec![("sid".into(), "s;1".into())],
            needs_token: vec![],
        };
        let req = build(&ctx, &r, &args(json!({"X-Trace": "arg"})), &auth, None).expect("build");
        assert_eq!(
            req.headers,
            vec![
                (
                    "Accept".to_string(),
                    "application/json, text/plain".to_string()
                ),
                ("User-Agent".to_string(), UA.to_string()),
                ("X-Tenant".to_string(), "t1".to_string()),
                ("X-Trace".to_string(), "static-trace".to_string()),
                ("Cookie".to_string(), "sid=s%3B1".to_string()),
                ("Authorization".to_string(), "Bearer secret".to_string()),
            ]
        );
        assert_eq!(req.url.query(), Some("api%20key=k%261"));
        // Debug output hides credentials.
        let dbg = format!("{req:?}");
        assert!(!dbg.contains("secret") && !dbg.contains("k%261"), "{dbg}");
    }

    /// #23 finding 19: a free-form object exploded into the query (or cookies) cannot set the
    /// credential's parameter before the configured one.
    #[test]
    fn arguments_never_shadow_a_credential_parameter() {
        let r = route(
            "/a",
            vec![
                arg("extra", ArgLocation::query(QueryStyle::Form, true)),
                arg("prefs", ArgLocation::Cookie { explode: true }),
            ],
        );
        let auth = AuthParts {
            headers: vec![],
            query: vec![("api_key".into(), "REAL".into())],
            cookies: vec![("sid".into(), "S1".into())],
            needs_token: vec![],
        };
        let go = |a: Value| build_with(&r, a, &auth);
        let e = go(json!({"extra": {"q": "x", "api_key": "ATTACKER"}})).expect_err("shadowing");
        assert!(
            e.message.contains("`api_key`") && e.message.contains("refused"),
            "{e}"
        );
        let e = go(json!({"prefs": {"sid": "ATTACKER"}})).expect_err("cookie shadowing");
        assert!(e.message.contains("`sid`"), "{e}");
        // Other names pass, and the credential is sent once.
        let req = go(json!({"extra": {"q": "x", "api_key_hint": "y"}})).expect("build");
        assert_eq!(req.url.query(), Some("q=x&api_key_hint=y&api_key=REAL"));
    }

    fn body_route(
        kind: BodyKind,
        ct: &str,
        flattened: bool,
        args: Vec<ArgBinding>,
        encoding: Vec<PartEncoding>,
    ) -> Route {
        let mut r = route("/b", args);
        r.method = HttpMethod::Post;
        r.body = Some(BodyBinding {
            kind,
            content_type: ct.into(),
            required: false,
            flattened,
            encoding,
        });
        r
    }

    fn body_str(req: &BuiltRequest) -> (String, String) {
        let (ct, b) = req.body.clone().expect("body");
        (ct, String::from_utf8(b).expect("utf8"))
    }

    #[test]
    fn json_bodies() {
        let r = body_route(
            BodyKind::Json,
            "application/json",
            true,
            vec![
                arg("name", ArgLocation::BodyField),
                arg("tag", ArgLocation::BodyField),
                arg("gone", ArgLocation::BodyField),
            ],
            vec![],
        );
        let req = build_ok(&r, json!({"name": "Rex", "tag": null}));
        assert_eq!(req.method, http::Method::POST);
        assert_eq!(
            body_str(&req),
            (
                "application/json".into(),
                r#"{"name":"Rex","tag":null}"#.into()
            )
        );
        assert!(build_ok(&r, json!({})).body.is_none());
        let mut rr = r.clone();
        if let Some(b) = rr.body.as_mut() {
            b.required = true;
        }
        assert_eq!(body_str(&build_ok(&rr, json!({}))).1, "{}");
        // Wire names differ from argument names.
        let mut a = arg("body_type", ArgLocation::BodyField);
        a.wire = "type".into();
        let r = body_route(BodyKind::Json, "application/json", true, vec![a], vec![]);
        assert_eq!(
            body_str(&build_ok(&r, json!({"body_type": 1}))).1,
            r#"{"type":1}"#
        );
        // Whole body.
        let r = body_route(
            BodyKind::Json,
            "application/merge-patch+json",
            false,
            vec![arg("body", ArgLocation::Body)],
            vec![],
        );
        assert_eq!(
            body_str(&build_ok(&r, json!({"body": [1, {"a": "é"}]}))),
            (
                "application/merge-patch+json".into(),
                r#"[1,{"a":"é"}]"#.into()
            )
        );
        assert!(build_ok(&r, json!({})).body.is_none());
    }

    fn enc_of(
        name: &str,
        style: Option<QueryStyle>,
        explode: Option<bool>,
        ct: Option<&str>,
    ) -> PartEncoding {
        PartEncoding {
            name: name.into(),
            content_type: ct.map(str::to_string),
            style,
            explode,
            binary: false,
        }
    }

    #[test]
    fn form_bodies() {
        let fields = [
            "s", "n", "tags", "csv", "sp", "pipe", "obj", "objf", "metadata", "js", "nil",
        ];
        let r = body_route(
            BodyKind::Form,
            "application/x-www-form-urlencoded",
            true,
            fields
                .iter()
                .map(|f| arg(f, ArgLocation::BodyField))
                .collect(),
            vec![
                enc_of("csv", None, Some(false), None),
                enc_of("sp", Some(QueryStyle::SpaceDelimited), None, None),
                enc_of("pipe", Some(QueryStyle::PipeDelimited), None, None),
                enc_of("objf", Some(QueryStyle::Form), Some(false), None),
                enc_of("metadata", Some(QueryStyle::DeepObject), None, None),
                enc_of("js", None, None, Some("application/json")),
            ],
        );
        let req = build_ok(
            &r,
            json!({
                "s": "a b&c=é", "n": 4.5, "tags": ["x", "y"], "csv": ["x", "y,z"], "sp": [1, 2], "pipe": [1, 2],
                "obj": {"k1": "v1", "k2": 2}, "objf": {"k": "v"},
                "metadata": {"order_id": "6735", "nested": {"a": 1}, "items": [{"price": "p1"}]},
                "js": {"a": [1]}, "nil": null
            }),
        );
        assert_eq!(
            body_str(&req),
            (
                "application/x-www-form-urlencoded".into(),
                "s=a+b%26c%3D%C3%A9&n=4.5&tags=x&tags=y&csv=x,y%2Cz&sp=1%202&pipe=1|2&obj[k1]=v1&obj[k2]=2&objf=k,v\
                 &metadata[order_id]=6735&metadata[nested][a]=1&metadata[items][0][price]=p1&js=%7B%22a%22%3A%5B1%5D%7D"
                    .into()
            )
        );
        assert!(build_ok(&r, json!({})).body.is_none());
    }

    /// #23 part 2: a required query parameter is never left out: where the API allows empty
    /// values an empty object or array is sent as the empty value (`name=`); #36: elsewhere it
    /// is refused, naming the argument, as an empty string is. An optional empty one is not sent.
    #[test]
    fn required_query_parameters_are_always_sent_or_refused() {
        let q = |name: &str, style, explode, required, allow_empty_value| {
            let mut a = arg(
                name,
                ArgLocation::Query {
                    style,
                    explode,
                    allow_reserved: false,
                    allow_empty_value,
                },
            );
            a.required = required;
            a
        };
        let r = route(
            "/q",
            vec![
                q("filter", QueryStyle::DeepObject, true, true, true),
                q("page", QueryStyle::Form, true, true, true),
                q("ids", QueryStyle::PipeDelimited, false, true, true),
                q("sort", QueryStyle::Form, true, false, false),
            ],
        );
        let query = |v: Value| build_ok(&r, v).url.query().unwrap_or("").to_string();
        assert_eq!(
            query(json!({"filter": {}, "page": {}, "ids": [], "sort": {}})),
            "filter=&page=&ids="
        );
        assert_eq!(
            query(
                json!({"filter": {"a": null}, "page": {"n": 1}, "ids": [1, 2], "sort": {"by": "x"}})
            ),
            "filter=&n=1&ids=1|2&by=x"
        );
        for (style, explode) in [
            (QueryStyle::DeepObject, true),
            (QueryStyle::Form, true),
            (QueryStyle::Form, false),
            (QueryStyle::SpaceDelimited, false),
            (QueryStyle::PipeDelimited, false),
        ] {
            let r = route("/q", vec![q("filter", style, explode, true, false)]);
            for empty in [
                json!({}),
                json!([]),
                json!({"a": ""}),
                json!(["", null]),
                json!(""),
            ] {
                let e = build_err(&r, json!({ "filter": empty }));
                assert_eq!(e.arg.as_deref(), Some("filter"));
                assert!(
                    e.message
                        .starts_with("argument `filter` (query `filter`): ")
                        && e.message.contains("the API allows no empty value"),
                    "{style:?} {explode} {empty}: {}",
                    e.message
                );
            }
        }
    }

    /// #36 item 13: an empty item or member is not sent where the API allows no empty value, in
    /// every style (`ids=a&ids=` went out for `["a", ""]`); where it allows one it is.
    #[test]
    fn empty_items_and_members_are_not_sent() {
        use QueryStyle::*;
        let cases: Vec<(QueryStyle, bool, Value, &str)> = vec![
            (Form, true, json!(["a", ""]), "color=a"),
            (Form, false, json!(["a", "", null, "b"]), "color=a,b"),
            (SpaceDelimited, false, json!(["a", ""]), "color=a"),
            (PipeDelimited, false, json!(["", "b"]), "color=b"),
            (DeepObject, true, json!(["a", ""]), "color[]=a"),
            (Form, true, json!({"R": "", "G": "1"}), "G=1"),
            (Form, false, json!({"R": "", "G": "1"}), "color=G,1"),
            (
                SpaceDelimited,
                false,
                json!({"R": null, "G": "1"}),
                "color=G%201",
            ),
            (
                PipeDelimited,
                false,
                json!({"R": "", "G": "1"}),
                "color=G|1",
            ),
            (
                DeepObject,
                true,
                json!({"a": {"b": "", "c": "x"}, "d": [""], "e": [{"k": ""}, {"k": "v"}]}),
                "color[a][c]=x&color[e][1][k]=v",
            ),
            (Form, true, json!(["", null]), ""),
            (DeepObject, true, json!({"a": {"b": ""}}), ""),
        ];
        for (style, explode, v, want) in cases {
            assert_eq!(
                query_of(style, explode, v.clone()),
                want,
                "{style:?} explode={explode} {v}"
            );
        }
        assert_eq!(
            query_of_allowing(Form, true, true, json!(["a", ""])),
            "color=a&color="
        );
    }

    /// #23 part 2: form fields without an encoding style: arrays exploded, objects and arrays of
    /// objects deepObject-style, never JSON text or bare member names.
    #[test]
    fn form_fields_without_a_style_are_decodable() {
        let fields = ["tag", "filter", "items", "grid"];
        let r = body_route(
            BodyKind::Form,
            "application/x-www-form-urlencoded",
            true,
            fields
                .iter()
                .map(|f| arg(f, ArgLocation::BodyField))
                .collect(),
            vec![enc_of("grid", None, Some(false), None)],
        );
        let req = build_ok(
            &r,
            json!({"tag": ["a", "b"], "filter": {"a": 1, "n": {"m": "x"}}, "items": [{"sku": "s"}, {"sku": "t"}],
                   "grid": [[1, 2]]}),
        );
        assert_eq!(
            body_str(&req).1,
            "tag=a&tag=b&filter[a]=1&filter[n][m]=x&items[0][sku]=s&items[1][sku]=t&grid[0][]=1&grid[0][]=2"
        );
    }

    #[test]
    fn multipart_bodies() {
        let mut enc_file = enc_of("file", None, None, Some("image/png, image/jpeg"));
        enc_file.binary = true;
        let mut enc_any = enc_of("blob", None, None, None);
        enc_any.binary = true;
        let r = body_route(
            BodyKind::Multipart,
            "multipart/form-data",
            true,
            ["title", "count", "file", "blob", "meta", "tags", "nil"]
                .iter()
                .map(|f| arg(f, ArgLocation::BodyField))
                .collect(),
            vec![enc_file, enc_any],
        );
        let req = build_ok(
            &r,
            json!({"title": "Hi \"x\"", "count": 3, "file": "iVBORw0KGgo=", "blob": "AAEC", "meta": {"a": 1}, "tags": ["p", "q"], "nil": null}),
        );
        let (ct, body) = req.body.clone().expect("body");
        assert_eq!(ct, "multipart/form-data; boundary=BOUNDARY");
        let mut want = Vec::new();
        want.extend_from_slice(
            b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHi \"x\"\r\n",
        );
        want.extend_from_slice(
            b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"count\"\r\n\r\n3\r\n",
        );
        want.extend_from_slice(
            b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\nContent-Type: image/png\r\n\r\n",
        );
        want.extend_from_slice(&[0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n']);
        want.extend_from_slice(b"\r\n");
        want.extend_from_slice(
            b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"blob\"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\x01\x02\r\n",
        );
        want.extend_from_slice(b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"meta\"\r\nContent-Type: application/json\r\n\r\n{\"a\":1}\r\n");
        want.extend_from_slice(
            b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"tags\"\r\n\r\np\r\n",
        );
        want.extend_from_slice(
            b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"tags\"\r\n\r\nq\r\n",
        );
        want.extend_from_slice(b"--BOUNDARY--\r\n");
        assert_eq!(
            String::from_utf8_lossy(&body),
            String::from_utf8_lossy(&want)
        );
        assert_eq!(body, want);

        // Data URL: its media type is used when the encoding gives none.
        let req = build_ok(&r, json!({"blob": "data:image/gif;base64,R0lG"}));
        let body = String::from_utf8_lossy(&req.body.expect("body").1).to_string();
        assert!(
            body.contains("Content-Type: image/gif\r\n\r\nGIF\r\n"),
            "{body}"
        );

        // A data URL whose media type carries CR/LF (or is not `type/subtype`) is not written
        // into the part's headers (#23 finding 16): the default type is used.
        for bad in [
            "data:image/gif\r\nX-Injected: 1;base64,R0lG",
            "data:image/gif\nX: y;base64,R0lG",
            "data:not a type;base64,R0lG",
        ] {
            let req = build_ok(&r, json!({ "blob": bad }));
            let body = String::from_utf8_lossy(&req.body.expect("body").1).to_string();
            assert!(
                !body.contains("X-Injected") && !body.contains("X: y"),
                "{body}"
            );
            assert!(
                body.contains("Content-Type: application/octet-stream\r\n\r\nGIF\r\n"),
                "{body}"
            );
        }

        // Invalid base64 names the field.
        let e = build_err(&r, json!({"file": "not base64!!"}));
        assert_eq!(e.arg.as_deref(), Some("file"));
        assert!(
            e.message.contains("`file`") && e.message.contains("base64"),
            "{e}"
        );
        let mut r2 = r.clone();
        if let Some(b) = r2.body.as_mut() {
            b.encoding[0].binary = true;
        }
        let e = build_err(&r2, json!({"file": ["AAEC", "@@"]}));
        assert!(e.message.contains("file[1]"), "{e}");

        // A random boundary that appears in no part.
        let b = base();
        let ctx = BuildContext {
            base: &b,
            user_agent: UA,
            static_headers: &[],
            forwarded_headers: &[],
        };
        let req = build(
            &ctx,
            &r,
            &args(json!({"title": "x"})),
            &AuthParts::default(),
            None,
        )
        .expect("build");
        let (ct, body) = req.body.expect("body");
        let boundary = ct
            .strip_prefix("multipart/form-data; boundary=")
            .expect("boundary");
        assert!(boundary.len() > 20);
        assert_eq!(
            String::from_utf8(body).expect("utf8"),
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nx\r\n--{boundary}--\r\n"
            )
        );
    }

    /// A JSON body declared under a media range is sent as `application/json`, never with
    /// the range as its Content-Type (Jellyfin's `application/*+json`, `*/*`).
    #[test]
    fn json_bodies_under_a_media_range_are_application_json() {
        for range in ["application/*+json", "*/*", "application/*"] {
            let r = body_route(
                BodyKind::Json,
                range,
                true,
                vec![arg("name", ArgLocation::BodyField)],
                vec![],
            );
            let (ct, body) = body_str(&build_ok(&r, json!({"name": "x"})));
            assert_eq!(
                (ct.as_str(), body.as_str()),
                ("application/json", r#"{"name":"x"}"#)
            );
        }
        let r = body_route(
            BodyKind::Json,
            "application/merge-patch+json",
            true,
            vec![arg("name", ArgLocation::BodyField)],
            vec![],
        );
        assert_eq!(
            body_str(&build_ok(&r, json!({"name": "x"}))).0,
            "application/merge-patch+json"
        );
    }

    /// A multipart body whose schema is a file (not an object of parts) is one file part.
    #[test]
    fn multipart_file_bodies_are_one_file_part() {
        let mut r = body_route(
            BodyKind::Multipart,
            "multipart/form-data",
            false,
            vec![arg("body", ArgLocation::Body)],
            vec![],
        );
        r.args[0].wire = String::new();
        let (ct, body) = build_ok(&r, json!({"body": "AAEC"})).body.expect("body");
        assert_eq!(ct, "multipart/form-data; boundary=BOUNDARY");
        assert_eq!(
            body,
            b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\x01\x02\r\n--BOUNDARY--\r\n"
        );
        let e = build_err(&r, json!({"body": 5}));
        assert!(e.message.contains("must be an object"), "{e}");
    }

    /// A multipart array of objects is one JSON part per item, as OpenAPI's default encoding
    /// of arrays says (a primitive array already was one text part per item).
    #[test]
    fn multipart_arrays_of_objects_are_one_json_part_per_item() {
        let r = body_route(
            BodyKind::Multipart,
            "multipart/form-data",
            true,
            vec![arg("parts", ArgLocation::BodyField)],
            vec![],
        );
        let (_, body) = body_str(&build_ok(&r, json!({"parts": [{"a": 1}, [2], "x"]})));
        assert_eq!(
            body,
            "--BOUNDARY\r\nContent-Disposition: form-data; name=\"parts\"\r\nContent-Type: application/json\r\n\r\n{\"a\":1}\r\n\
             --BOUNDARY\r\nContent-Disposition: form-data; name=\"parts\"\r\nContent-Type: application/json\r\n\r\n[2]\r\n\
             --BOUNDARY\r\nContent-Disposition: form-data; name=\"parts\"\r\n\r\nx\r\n\
             --BOUNDARY--\r\n"
        );
    }

    #[test]
    fn text_and_binary_bodies() {
        let r = body_route(
            BodyKind::Text,
            "text/plain",
            false,
            vec![arg("body", ArgLocation::Body)],
            vec![],
        );
        assert_eq!(
            body_str(&build_ok(&r, json!({"body": "héllo\n"}))),
            ("text/plain".into(), "héllo\n".into())
        );
        assert_eq!(
            body_str(&build_ok(&r, json!({"body": {"a": 1}}))).1,
            r#"{"a":1}"#
        );
        assert!(build_ok(&r, json!({})).body.is_none());

        let r = body_route(
            BodyKind::Binary,
            "application/octet-stream",
            false,
            vec![arg("body", ArgLocation::Body)],
            vec![],
        );
        assert_eq!(
            build_ok(&r, json!({"body": "AAEC/w=="})).body,
            Some(("application/octet-stream".into(), vec![0, 1, 2, 255]))
        );
        assert_eq!(
            build_ok(&r, json!({"body": "AAEC_w"})).body,
            Some(("application/octet-stream".into(), vec![0, 1, 2, 255]))
        );
        assert_eq!(
            build_ok(&r, json!({"body": "AAEC\n/w=="}))
                .body
                .map(|b| b.1),
            Some(vec![0, 1, 2, 255])
        );
        let e = build_err(&r, json!({"body": "***"}));
        assert_eq!(e.arg.as_deref(), Some("body"));
        assert!(e.message.contains("base64"));
        assert!(build_err(&r, json!({"body": 5})).message.contains("base64"));
        let r = body_route(
            BodyKind::Binary,
            "image/*",
            false,
            vec![arg("body", ArgLocation::Body)],
            vec![],
        );
        assert_eq!(
            build_ok(&r, json!({"body": "data:image/png;base64,AAEC"})).body,
            Some(("image/png".into(), vec![0, 1, 2]))
        );
    }

    /// #36 item 14: a whole body that would go out as zero bytes (`""` for
    /// `application/octet-stream` or `application/jwt`, sent as an empty body) is refused when
    /// the body is required, naming the argument, and not sent when it is optional.
    #[test]
    fn empty_bodies_are_refused_when_required_and_not_sent_when_optional() {
        for (kind, ct, empty) in [
            (BodyKind::Binary, "application/octet-stream", json!("")),
            (BodyKind::Binary, "application/jwt", json!("")),
            (BodyKind::Binary, "image/*", json!("data:image/png;base64,")),
            (BodyKind::Text, "text/plain", json!("")),
            (
                BodyKind::Form,
                "application/x-www-form-urlencoded",
                json!(""),
            ),
        ] {
            let mut r = body_route(
                kind,
                ct,
                false,
                vec![arg("body", ArgLocation::Body)],
                vec![],
            );
            r.args[0].wire = String::new();
            let req = build_ok(&r, json!({ "body": empty }));
            assert_eq!(req.body, None, "{ct}");
            if let Some(b) = r.body.as_mut() {
                b.required = true;
            }
            let e = build_err(&r, json!({ "body": empty }));
            assert_eq!(e.arg.as_deref(), Some("body"), "{ct}");
            assert!(
                e.message.starts_with(&format!(
                    "argument `body` (the request body, {ct}): is empty"
                )),
                "{}",
                e.message
            );
            // Content is sent.
            let content = if kind == BodyKind::Binary {
                "aGk="
            } else {
                "hi"
            };
            assert!(
                build_ok(&r, json!({ "body": content })).body.is_some(),
                "{ct}"
            );
        }
    }
}
