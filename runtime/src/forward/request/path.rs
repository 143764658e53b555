//! The path: template variables in their styles, and the query written in the path key.

use serde_json::{Map, Value};

use super::{arg_err, effective, prim};
use crate::forward::ArgError;
use crate::forward::encode::{enc, enc_query_literal, enc_template_literal};
use openapi_mcp_toolset::model::{ArgBinding, ArgLocation, PathStyle, Route};

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
pub(super) fn join_object(
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
pub(super) fn build_path(route: &Route, args: &Map<String, Value>) -> Result<String, ArgError> {
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
pub(super) fn template_query(
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
