//! Bodies: JSON, form, text and binary (multipart parts are in [`super::multipart`], base64
//! file contents decoded by [`super::media`]).

use serde_json::{Map, Value};

use super::media::{decode_base64, encoding_of};
use super::multipart::build_multipart;
use super::path::join_object;
use super::query::{deep_object, deep_value, scalar_array};
use super::{arg_err, is_json_media, prim};
use crate::forward::ArgError;
use crate::forward::encode::enc_form;
use openapi_mcp_toolset::model::{
    ArgBinding, ArgLocation, BodyBinding, BodyKind, PartEncoding, QueryStyle, Route,
};

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

pub(super) fn build_body(
    route: &Route,
    args: &Map<String, Value>,
    boundary: Option<&str>,
) -> Result<Option<(String, Vec<u8>)>, ArgError> {
    let Some(binding) = &route.body else {
        return Ok(None);
    };
    let ct = binding.content_type.clone();
    let fields = body_fields(route, args);
    let whole = body_arg(route, args);
    match binding.kind {
        BodyKind::Json => Ok(json_body(binding, ct, whole, &fields)),
        BodyKind::Form => form_body(binding, ct, whole, &fields),
        BodyKind::Multipart => build_multipart(binding, &ct, whole, &fields, boundary),
        BodyKind::Text => Ok(text_body(ct, whole)),
        BodyKind::Binary => binary_body(ct, whole),
    }
}

/// The whole body argument, if given, and the body fields given (a flattened body).
type Whole<'a> = Option<(&'a ArgBinding, &'a Value)>;

fn json_body(
    binding: &BodyBinding,
    mut ct: String,
    whole: Whole<'_>,
    fields: &[(&ArgBinding, &Value)],
) -> Option<(String, Vec<u8>)> {
    // A media range (`*/*`, `application/*`, `application/*+json`) is not a content
    // type: what is sent is JSON.
    if ct.contains('*') {
        ct = "application/json".to_string();
    }
    if let Some((_, v)) = whole {
        return Some((ct, v.to_string().into_bytes()));
    }
    if fields.is_empty() && !(binding.required && binding.flattened) {
        return None;
    }
    let obj: Map<String, Value> = fields
        .iter()
        .map(|(b, v)| (b.wire.clone(), (*v).clone()))
        .collect();
    Some((ct, Value::Object(obj).to_string().into_bytes()))
}

fn form_body(
    binding: &BodyBinding,
    ct: String,
    whole: Whole<'_>,
    fields: &[(&ArgBinding, &Value)],
) -> Result<Option<(String, Vec<u8>)>, ArgError> {
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
            for (b, v) in fields {
                form_field(&b.wire, v, encoding_of(binding, &b.wire), &mut pairs);
            }
        }
    }
    Ok(Some((ct, pairs.join("&").into_bytes())))
}

fn text_body(ct: String, whole: Whole<'_>) -> Option<(String, Vec<u8>)> {
    let (_, v) = whole?;
    let ct = if ct.contains('*') {
        "text/plain; charset=utf-8".to_string()
    } else {
        ct
    };
    Some((
        ct,
        match v {
            Value::String(s) => s.clone().into_bytes(),
            v => v.to_string().into_bytes(),
        },
    ))
}

fn binary_body(ct: String, whole: Whole<'_>) -> Result<Option<(String, Vec<u8>)>, ArgError> {
    match whole {
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
    }
}
