//! Header and cookie parameters.

use serde_json::Value;

use super::path::join_object;
use super::{arg_err, prim};
use crate::forward::ArgError;
use crate::forward::encode::enc_cookie;
use openapi_mcp_toolset::model::ArgBinding;

pub(super) fn check_header_value(b: &ArgBinding, s: &str) -> Result<(), ArgError> {
    if s.chars().any(|c| c.is_control() && c != '\t') {
        return Err(arg_err(
            b,
            "contains a control character (CR, LF, ...), which is not allowed in an HTTP header",
        ));
    }
    Ok(())
}

pub(super) fn expand_header(v: &Value, explode: bool) -> String {
    let id: fn(&str) -> String = str::to_string;
    match v {
        Value::Array(a) => a.iter().map(prim).collect::<Vec<_>>().join(","),
        Value::Object(o) => join_object(o, explode, "=", ",", id),
        v => prim(v),
    }
}

pub(super) fn expand_cookie(
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
