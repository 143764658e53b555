//! The whole request: parameters, credentials, headers, and the URL checks.

use serde_json::{Map, Value};
use url::Url;

use super::body::build_body;
use super::headers::{check_header_value, expand_cookie, expand_header};
use super::path::{build_path, split_template, template_query};
use super::query::expand_query;
use super::{MAX_URL_BYTES, arg_err, effective};
use crate::forward::auth::AuthParts;
use crate::forward::encode::{enc, enc_cookie};
use crate::forward::{ArgError, BuiltRequest};
use openapi_mcp_toolset::model::{ArgLocation, Route, is_reserved_header};

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
    refuse_deep_arguments(route, args)?;
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

    let mut params = Params::default();
    if let Some(q) = base.query().filter(|q| !q.is_empty()) {
        params.query.push(q.to_string());
    }
    let args_query_start = params.query.len();
    if let (_, Some(q)) = split_template(&route.path) {
        params.query.push(template_query(route, q, args)?);
    }
    params.add_arguments(route, args, auth)?;
    params.add_credentials(auth, args_query_start)?;
    let Params {
        query,
        headers,
        cookies,
    } = params;
    let headers = finish_headers(ctx, route, auth, headers, cookies)?;
    let url = request_url(&base, &base_path, &path, &query.join("&"), route, args)?;

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

/// Serializers and `Drop` recurse: never hand them an unbounded depth (validation refuses
/// such arguments first; this guards direct `build_request` callers).
fn refuse_deep_arguments(route: &Route, args: &Map<String, Value>) -> Result<(), ArgError> {
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
    Ok(())
}

/// The query pairs, headers and cookies written so far, in order.
#[derive(Default)]
struct Params {
    query: Vec<String>,
    headers: Vec<(String, String)>,
    cookies: Vec<String>,
}

impl Params {
    /// The query, header and cookie arguments, in their styles.
    fn add_arguments(
        &mut self,
        route: &Route,
        args: &Map<String, Value>,
        auth: &AuthParts,
    ) -> Result<(), ArgError> {
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
                    let before = self.query.len();
                    expand_query(
                        &b.wire,
                        &value,
                        *style,
                        *explode,
                        *allow_reserved,
                        &mut self.query,
                    );
                    // A required parameter is always in the query: an empty object or array (or
                    // null) has no members to write, and is sent as the empty value (`filter=`,
                    // OpenAPI's "empty" serialization) instead of leaving the parameter out. Only
                    // where the API allows empty values: elsewhere `drop_empty_values` refused it.
                    if b.required && self.query.len() == before {
                        self.query.push(format!("{}=", enc(&b.wire)));
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
                    self.headers.push((b.wire.clone(), s));
                }
                ArgLocation::Cookie { explode } => {
                    expand_cookie(b, &value, *explode, &mut self.cookies)?
                }
                ArgLocation::Path { .. } | ArgLocation::Body | ArgLocation::BodyField => {}
            }
        }
        Ok(())
    }

    /// The credential's query parameters and cookies, after the arguments' (the query pairs
    /// from `args_query_start` on), which never set one of them.
    fn add_credentials(
        &mut self,
        auth: &AuthParts,
        args_query_start: usize,
    ) -> Result<(), ArgError> {
        // Arguments never set a credential's parameter: a free-form object exploded into the
        // query (or cookies) could otherwise put `api_key=OTHER` before the configured one, and
        // many servers read the first.
        let shadows = |entries: &[String], sep: char, name: &str| {
            entries
                .iter()
                .flat_map(|e| e.split(sep))
                .any(|pair| pair.trim().split('=').next() == Some(name))
        };
        for (k, _) in &auth.query {
            if shadows(&self.query[args_query_start..], '&', &enc(k)) {
                return Err(credential_shadowed("query parameter", k));
            }
        }
        for (k, _) in &auth.cookies {
            if shadows(&self.cookies, ';', k) {
                return Err(credential_shadowed("cookie", k));
            }
        }
        for (k, v) in &auth.query {
            self.query.push(format!("{}={}", enc(k), enc(v)));
        }
        for (k, v) in &auth.cookies {
            self.cookies.push(format!("{k}={}", enc_cookie(v)));
        }
        Ok(())
    }
}

/// The request's headers: the arguments' (`headers`), then `Accept`, `User-Agent`, the static
/// headers, the cookies, the credential's and the forwarded client headers, each replacing
/// same-named ones before it.
fn finish_headers(
    ctx: &BuildContext<'_>,
    route: &Route,
    auth: &AuthParts,
    mut headers: Vec<(String, String)>,
    mut cookies: Vec<String>,
) -> Result<Vec<(String, String)>, ArgError> {
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
    Ok(headers)
}

/// The request URL: `base` with `path` and `query`, refused when URL normalization would rewrite
/// the path, when it is too long for an HTTP request target, or when it leaves the base URL.
fn request_url(
    base: &Url,
    base_path: &str,
    path: &str,
    query: &str,
    route: &Route,
    args: &Map<String, Value>,
) -> Result<Url, ArgError> {
    let mut url = base.clone();
    url.set_fragment(None);
    url.set_path(path);
    url.set_query(if query.is_empty() { None } else { Some(query) });
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
        return Err(url_too_long(route, args, len));
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
    Ok(url)
}

/// A URL of `len` bytes is refused naming the longest path or query argument.
fn url_too_long(route: &Route, args: &Map<String, Value>, len: usize) -> ArgError {
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
    match culprit {
        Some((b, _)) => arg_err(b, what),
        None => ArgError {
            arg: None,
            message: format!("the arguments {what}"),
        },
    }
}

fn credential_shadowed(what: &str, name: &str) -> ArgError {
    ArgError {
        arg: None,
        message: format!(
            "the arguments set the {what} `{name}`, which carries the API credential; refused (the configured credential is sent)"
        ),
    }
}
