//! Query parameters, and the array and deepObject spellings form fields share with them.

use serde_json::{Map, Value};

use super::path::join_object;
use super::prim;
use crate::forward::encode::{enc, enc_reserved};
use openapi_mcp_toolset::model::QueryStyle;

pub(super) fn expand_query(
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
pub(super) fn scalar_array(
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
pub(super) fn deep_object(
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

pub(super) fn deep_value(
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
