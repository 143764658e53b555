//! Responses that fit (#22): compact JSON results, the `_select` argument (JMESPath), and
//! truncation that keeps JSON valid, with the arguments of the next page.
//!
//! * [`compact`] drops what carries no information for a model: `null`, empty strings, arrays
//!   and objects (members only: array elements keep their positions), hypermedia (`*_url`
//!   members but `html_url`, HAL's `_links`, RFC 6570 URL templates such as
//!   `https://api.github.com/users/octocat/following{/other_user}`).
//! * [`select`] applies a JMESPath expression to the full (uncompacted) body; what it returns is
//!   returned as is, so a field the user selected is never dropped.
//! * [`fit`] cuts a value to a byte budget at item boundaries: the main array (the top-level
//!   array, or the largest array member of a top-level object, like `{"items": [...]}`), else
//!   the top-level object's members; [`recover_prefix`] makes a valid document of a body cut
//!   mid-way.
//! * [`next_page`] finds the arguments that continue after the last item shown: an `offset`,
//!   Stripe's `starting_after`, `page` + a page size, a `Link: <...>; rel="next"` header mapped
//!   back to the tool's argument names, or a cursor the body carries.

use http::HeaderMap;
use serde_json::{Map, Value};

use openapi_mcp_toolset::model::{ArgLocation, Route};

pub mod select;

/// How JSON results are rendered (`--response`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ResponseMode {
    /// Nulls, empty values and hypermedia links dropped; minified.
    #[default]
    Compact,
    /// The body as the API sent it.
    Full,
}

impl ResponseMode {
    pub fn name(self) -> &'static str {
        match self {
            ResponseMode::Compact => "compact",
            ResponseMode::Full => "full",
        }
    }
}

/// The selection argument's name, unless the tool already has an argument of that name.
pub const SELECT_ARG: &str = "_select";

/// The name of the selection argument of a tool with these arguments: `_select`, or with more
/// leading underscores when the spec already uses it.
pub fn selection_arg<'a>(args: impl Iterator<Item = &'a str> + Clone) -> String {
    let mut name = SELECT_ARG.to_string();
    while args.clone().any(|a| a == name) {
        name.insert(0, '_');
    }
    name
}

/// The selection argument's schema (its description is the only place it is documented).
pub fn selection_schema() -> Value {
    serde_json::json!({
        "type": "string",
        "description": "JMESPath expression selecting what to return from the JSON result, e.g. `[].{id: id, name: name}`. Not sent to the API."
    })
}

/// Whether `expr` is a JMESPath expression within the limits of `_select` (see [`select`]
/// module doc): length, nesting, known functions and their argument counts. The message
/// otherwise, on one line, saying what is wrong.
pub fn check_selection(expr: &str) -> Result<(), String> {
    select::compile(expr).map(|_| ()).map_err(selection_error)
}

fn selection_error(e: select::SelectError) -> String {
    match e.kind {
        select::ErrorKind::Syntax => {
            format!("not a valid JMESPath expression: {}", one_line(&e.message))
        }
        select::ErrorKind::Limit => format!("over a limit of `_select` expressions: {}", e.message),
        _ => format!("not a valid JMESPath expression: {}", e.message),
    }
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
}

/// `expr` applied to `v`, within the budgets of a server whose results are cut at
/// `max_response_bytes` ([`select::Limits::for_response`]). On a worker of a multi-threaded
/// tokio runtime it runs in `block_in_place`, so the worker's other tasks move elsewhere
/// meanwhile (it is bounded, but may take a good fraction of a second).
pub fn select(v: &Value, expr: &str, max_response_bytes: usize) -> Result<Value, String> {
    let run = || {
        let limits = select::Limits::for_response(max_response_bytes);
        select::compile(expr)
            .and_then(|s| s.search(v, limits))
            .map_err(|e| match e.kind {
                select::ErrorKind::Limit => e.message,
                _ => selection_error(e),
            })
    };
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(run)
        }
        _ => run(),
    }
}
/// A member that is hypermedia: `*_url` (but `html_url`, the page a person opens), `_links`,
/// or a string that is a URL template.
fn is_hypermedia(key: &str, v: &Value) -> bool {
    if key == "_links" {
        return true;
    }
    let Value::String(s) = v else {
        return false;
    };
    let url_like = s.starts_with("http://") || s.starts_with("https://") || s.starts_with('/');
    (key.ends_with("_url") && key != "html_url" && url_like) || (url_like && is_url_template(s))
}

/// RFC 6570 expressions: `{/other_user}`, `{?since,all}`, `{id}` in a URL.
fn is_url_template(s: &str) -> bool {
    let Some(open) = s.find('{') else {
        return false;
    };
    s[open..].find('}').is_some_and(|close| {
        let inner = &s[open + 1..open + close];
        !inner.is_empty()
            && inner
                .trim_start_matches(['/', '?', '&', '+', '#', '.', ';'])
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ',' | '*' | '-'))
    })
}

/// Whether a member carries nothing: null, `""`, `[]`, `{}`.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// `v` without nulls, empty values and hypermedia members (recursively; an object emptied by
/// it goes too). Returns how many members were dropped.
pub fn compact(v: &mut Value) -> usize {
    match v {
        Value::Array(a) => a.iter_mut().map(compact).sum(),
        Value::Object(m) => {
            let mut dropped = 0;
            let old = std::mem::take(m);
            for (k, mut x) in old {
                if is_hypermedia(&k, &x) {
                    dropped += 1;
                    continue;
                }
                dropped += compact(&mut x);
                if is_empty(&x) {
                    dropped += 1;
                    continue;
                }
                m.insert(k, x);
            }
            dropped
        }
        _ => 0,
    }
}

/// The compact form of a result (see [`compact`]), or `None` when it is the same, or when
/// compacting would leave nothing of a top-level object (an index of links such as GitHub's
/// `GET /` is its own data).
pub fn compacted(v: &Value) -> Option<Value> {
    let mut c = v.clone();
    if compact(&mut c) == 0 {
        return None;
    }
    let emptied = matches!(&c, Value::Object(m) if m.is_empty());
    (!emptied).then_some(c)
}

/// The longest valid JSON document a cut body starts with: the text up to its last complete
/// member or array item, with the open arrays and objects closed. `None` when not even one
/// container level was opened or nothing in it completed.
pub fn recover_prefix(body: &[u8]) -> Option<Value> {
    #[derive(Clone, Copy, PartialEq)]
    enum Frame {
        Array,
        Object,
    }
    // Cuts happen between whole items of the main array (the top-level one, or one a member of
    // the top-level object), else between the top-level object's members: an item is never
    // shown with members missing.
    let at_cut_level = |stack: &[Frame]| {
        matches!(
            stack,
            [Frame::Array] | [Frame::Object, Frame::Array] | [Frame::Object]
        )
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut best: Option<(usize, Vec<Frame>)> = None;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in body.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' => stack.push(Frame::Array),
            b'{' => stack.push(Frame::Object),
            b']' | b'}' => {
                stack.pop();
                if stack.is_empty() {
                    // The document is complete: it parses as it is (or not at all).
                    return serde_json::from_slice(&body[..=i]).ok();
                }
                if at_cut_level(&stack) {
                    best = Some((i + 1, stack.clone()));
                }
            }
            b',' if at_cut_level(&stack) => best = Some((i, stack.clone())),
            _ => {}
        }
    }
    let (end, open) = best?;
    let mut text = body[..end].to_vec();
    // A member key with no value yet cannot end an object: `{"a":1` ends at a value, always.
    for f in open.iter().rev() {
        text.push(if *f == Frame::Array { b']' } else { b'}' });
    }
    serde_json::from_slice(&text).ok()
}

/// What [`fit`] cut.
#[derive(Clone, Debug, PartialEq)]
pub struct Cut {
    /// The member holding the main array (`items`), `None` for a top-level array or when the
    /// top-level object's members were cut.
    pub member: Option<String>,
    /// Array items (`true`) or object members were cut.
    pub items: bool,
    pub shown: usize,
    pub total: usize,
    /// The last item shown (for `starting_after`-style cursors).
    pub last_shown: Option<Value>,
}

fn json_len(v: &Value) -> usize {
    serde_json::to_vec(v).map(|b| b.len()).unwrap_or(usize::MAX)
}

/// The main array of `v`: `v` itself, or the largest array member of an object (by items).
fn main_array(v: &Value) -> Option<Option<String>> {
    match v {
        Value::Array(_) => Some(None),
        Value::Object(m) => m
            .iter()
            .filter_map(|(k, x)| x.as_array().map(|a| (k, a.len())))
            .filter(|(_, n)| *n > 0)
            .max_by_key(|(_, n)| *n)
            .map(|(k, _)| Some(k.clone())),
        _ => None,
    }
}

/// `v` cut to at most `max` bytes of JSON text, at item boundaries (see the module doc).
/// `None` when it fits as it is. A scalar over the budget is returned whole (there is nothing
/// valid to cut it to); so is an object whose first member alone is over it.
pub fn fit(v: &Value, max: usize) -> Option<(Value, Cut)> {
    let full = json_len(v);
    if full <= max {
        return None;
    }
    if let Some(member) = main_array(v) {
        let arr = match &member {
            None => v.as_array(),
            Some(k) => v.get(k).and_then(Value::as_array),
        }?;
        let items: Vec<usize> = arr.iter().map(json_len).collect();
        // Everything but the array's items (and the commas between them).
        let rest = full - items.iter().sum::<usize>() - arr.len().saturating_sub(1);
        let mut size = rest;
        let mut k = 0;
        for (i, n) in items.iter().enumerate() {
            let add = n + usize::from(i > 0);
            if size + add > max {
                break;
            }
            size += add;
            k += 1;
        }
        if size <= max {
            let kept: Vec<Value> = arr[..k].to_vec();
            let last_shown = kept.last().cloned();
            let out = match &member {
                None => Value::Array(kept),
                Some(name) => {
                    let mut m = v.as_object().cloned().unwrap_or_default();
                    m.insert(name.clone(), Value::Array(kept));
                    Value::Object(m)
                }
            };
            return Some((
                out,
                Cut {
                    member,
                    items: true,
                    shown: k,
                    total: arr.len(),
                    last_shown,
                },
            ));
        }
    }
    // No main array, or the rest of the envelope alone is over the budget: whole members.
    let m = v.as_object()?;
    let mut out = Map::new();
    let mut size = 2;
    for (key, x) in m {
        let add = json_len(&Value::String(key.clone())) + 1 + json_len(x) + usize::from(size > 2);
        if size + add > max {
            break;
        }
        size += add;
        out.insert(key.clone(), x.clone());
    }
    let shown = out.len();
    Some((
        Value::Object(out),
        Cut {
            member: None,
            items: false,
            shown,
            total: m.len(),
            last_shown: None,
        },
    ))
}

/// The arguments of the call that continues after the last item shown, and whether they do
/// exactly that (`false`: they fetch the next page, which skips the items cut from this one).
#[derive(Clone, Debug, PartialEq)]
pub struct NextPage {
    pub args: Map<String, Value>,
    pub exact: bool,
}

/// The query argument bound to wire name `wire` (case-insensitive), if the tool has one.
fn query_arg<'r>(route: &'r Route, wires: &[&str]) -> Option<&'r str> {
    wires.iter().find_map(|w| {
        route
            .args
            .iter()
            .find(|b| {
                matches!(b.location, ArgLocation::Query { .. }) && b.wire.eq_ignore_ascii_case(w)
            })
            .map(|b| b.arg.as_str())
    })
}

/// The JSON type of an argument in the tool's inputSchema.
fn arg_type(route: &Route, arg: &str) -> Option<String> {
    let schema = route.input_schema.get()?;
    let p = schema.get("properties")?.get(arg)?;
    match p.get("type")? {
        Value::String(t) => Some(t.clone()),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(str::to_string),
        _ => None,
    }
}

/// A value for argument `arg` from query text: a number when the schema says so.
fn typed(route: &Route, arg: &str, text: &str) -> Value {
    match arg_type(route, arg).as_deref() {
        Some("integer" | "number") => text
            .parse::<serde_json::Number>()
            .map(Value::Number)
            .unwrap_or_else(|_| Value::String(text.to_string())),
        Some("boolean") if text == "true" || text == "false" => Value::Bool(text == "true"),
        _ => Value::String(text.to_string()),
    }
}

fn int_arg(args: &Map<String, Value>, name: &str) -> Option<u64> {
    match args.get(name)? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The `rel="next"` URL of a `Link` header.
pub fn link_next(headers: &HeaderMap) -> Option<String> {
    for v in headers.get_all(http::header::LINK) {
        let Ok(v) = v.to_str() else { continue };
        for part in v.split(',') {
            let mut pieces = part.split(';');
            let Some(url) = pieces.next().map(str::trim) else {
                continue;
            };
            let is_next = pieces.any(|p| {
                let p = p.trim().to_ascii_lowercase();
                p.strip_prefix("rel=")
                    .map(|r| r.trim_matches('"').split_whitespace().any(|r| r == "next"))
                    .unwrap_or(false)
            });
            if is_next && url.starts_with('<') && url.ends_with('>') {
                return Some(url[1..url.len() - 1].to_string());
            }
        }
    }
    None
}

/// Body members that carry the next page's cursor, and the argument names that take it.
const BODY_CURSORS: &[(&str, &[&str])] = &[
    ("next_cursor", &["cursor"]),
    ("nextCursor", &["cursor"]),
    ("next_page_token", &["page_token", "pageToken"]),
    ("nextPageToken", &["pageToken", "page_token"]),
    ("next_token", &["next_token", "nextToken"]),
    ("nextToken", &["nextToken", "next_token"]),
];

fn find_member<'v>(v: &'v Value, name: &str, depth: usize) -> Option<&'v Value> {
    let m = v.as_object()?;
    m.get(name).or_else(|| {
        (depth > 0)
            .then(|| m.values().find_map(|x| find_member(x, name, depth - 1)))
            .flatten()
    })
}

/// The next page's arguments (see the module doc), from the call's `args`, the response
/// `headers`, the full `body` and what was `cut`.
pub fn next_page(
    route: &Route,
    args: &Map<String, Value>,
    headers: &HeaderMap,
    body: &Value,
    cut: &Cut,
) -> Option<NextPage> {
    if !cut.items {
        return None;
    }
    let shown = cut.shown as u64;
    let with = |pairs: Vec<(String, Value)>, exact: bool| {
        let mut a = args.clone();
        for (k, v) in pairs {
            a.insert(k, v);
        }
        NextPage { args: a, exact }
    };
    if shown > 0 {
        if let Some(off) = query_arg(route, &["offset", "skip", "start"]) {
            let next = int_arg(args, off).unwrap_or(0) + shown;
            return Some(with(vec![(off.to_string(), Value::from(next))], true));
        }
        if let Some(after) = query_arg(route, &["starting_after"])
            && let Some(id) = cut.last_shown.as_ref().and_then(|l| l.get("id"))
            && !id.is_null()
        {
            return Some(with(vec![(after.to_string(), id.clone())], true));
        }
        if let Some(page) = query_arg(route, &["page"])
            && let Some(size_arg) = query_arg(
                route,
                &["per_page", "page_size", "pageSize", "limit", "size"],
            )
            && let Some(size) = int_arg(args, size_arg)
                .or(Some(cut.total as u64))
                .filter(|s| *s > 0)
        {
            // Items before the first one not shown; a page size that divides it continues
            // exactly there (the largest one up to what was shown).
            let p = int_arg(args, page).unwrap_or(1).max(1);
            let seen = (p - 1) * size + shown;
            let d = (1..=shown)
                .rev()
                .find(|d| seen.is_multiple_of(*d))
                .unwrap_or(1);
            return Some(with(
                vec![
                    (page.to_string(), Value::from(seen / d + 1)),
                    (size_arg.to_string(), Value::from(d)),
                ],
                true,
            ));
        }
    }
    let exact = false;
    if let Some(next) = link_next(headers)
        && let Ok(url) = url::Url::parse(&next)
    {
        let mut pairs = Vec::new();
        for (k, v) in url.query_pairs() {
            if let Some(b) = route
                .args
                .iter()
                .find(|b| matches!(b.location, ArgLocation::Query { .. }) && b.wire == k.as_ref())
            {
                pairs.push((b.arg.clone(), typed(route, &b.arg, &v)));
            }
        }
        if !pairs.is_empty() {
            return Some(with(pairs, exact));
        }
    }
    for (member, names) in BODY_CURSORS {
        if let Some(arg) = query_arg(route, names)
            && let Some(Value::String(c)) = find_member(body, member, 2)
            && !c.is_empty()
        {
            return Some(with(
                vec![(arg.to_string(), Value::String(c.clone()))],
                exact,
            ));
        }
    }
    if let Some(page) = query_arg(route, &["page"]) {
        let p = int_arg(args, page).unwrap_or(1).max(1);
        return Some(with(vec![(page.to_string(), Value::from(p + 1))], exact));
    }
    None
}

/// The note after a cut result: what was cut, and how to go on.
pub fn cut_note(
    cut: &Cut,
    max: usize,
    partial: bool,
    next: Option<&NextPage>,
    select_arg: &str,
) -> String {
    let unit = if cut.items { "items" } else { "members" };
    let of = match &cut.member {
        Some(m) => format!(" of `{m}`"),
        None => String::new(),
    };
    let total = if partial {
        format!("at least {}", cut.total)
    } else {
        cut.total.to_string()
    };
    let cut_n = cut.total - cut.shown;
    let more = if partial { "at least " } else { "" };
    let mut s = format!(
        "[openapi-mcp: the result was over --max-response-bytes ({max} bytes): {} of {total} {unit}{of} shown, {more}{cut_n} cut (the JSON above is complete as shown).",
        cut.shown
    );
    let narrower =
        format!("a smaller page size or a `{select_arg}` expression that keeps fewer fields");
    match next {
        Some(n) if n.exact => s.push_str(&format!(
            " To continue after the last item shown, call again with arguments {}.]",
            Value::Object(n.args.clone())
        )),
        Some(n) => s.push_str(&format!(
            " Next page: call again with arguments {} (it skips the {unit} cut here; to see those, call this page again with {narrower}).]",
            Value::Object(n.args.clone())
        )),
        None => s.push_str(&format!(" To see the rest, call again with {narrower}.]")),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use openapi_mcp_toolset::model::{ArgBinding, HttpMethod};
    use serde_json::json;

    #[test]
    fn compact_drops_nulls_empties_and_hypermedia() {
        let mut v = json!({
            "id": 1, "title": "t", "body": null, "labels": [], "milestone": {},
            "url": "https://api.github.com/repos/o/r/issues/1",
            "html_url": "https://github.com/o/r/issues/1",
            "comments_url": "https://api.github.com/repos/o/r/issues/1/comments",
            "user": {"login": "octo", "following_url": "https://api.github.com/users/octo/following{/other_user}", "avatar_url": "https://x/1", "gravatar_id": ""},
            "_links": {"self": {"href": "/x"}},
            "template": "https://api.example.com/things{?page,per_page}",
            "zero": 0, "no": false, "list": [null, 1, {}],
            "note": "a {placeholder} in text"
        });
        let dropped = compact(&mut v);
        assert_eq!(
            v,
            json!({"id": 1, "title": "t", "url": "https://api.github.com/repos/o/r/issues/1",
                "html_url": "https://github.com/o/r/issues/1", "user": {"login": "octo"},
                "zero": 0, "no": false, "list": [null, 1, {}], "note": "a {placeholder} in text"})
        );
        assert_eq!(dropped, 9);
        // A body that is nothing but links stays as it is.
        let links = json!({"current_user_url": "https://api.github.com/user", "emojis_url": "https://api.github.com/emojis"});
        assert_eq!(compacted(&links), None);
        assert_eq!(compacted(&json!({"a": 1})), None);
        assert_eq!(
            compacted(&json!({"a": 1, "b": null})),
            Some(json!({"a": 1}))
        );
    }

    #[test]
    fn selection_is_jmespath() {
        let v = json!([{"id": 1, "n": "a", "x": null}, {"id": 2, "n": "b"}]);
        assert_eq!(select(&v, "[].id", 1 << 20).unwrap(), json!([1, 2]));
        assert_eq!(
            select(&v, "[?id==`2`].{n: n, x: x}", 1 << 20).unwrap(),
            json!([{"n": "b", "x": null}])
        );
        let e = check_selection("[?id==").unwrap_err();
        assert!(!e.is_empty() && !e.contains('\n'), "{e}");
        assert_eq!(selection_arg(["id", "select"].into_iter()), "_select");
        assert_eq!(
            selection_arg(["_select", "__select"].into_iter()),
            "___select"
        );
    }

    #[test]
    fn prefix_recovery_keeps_whole_items() {
        let body = br#"{"total":3,"items":[{"id":1,"s":"a,]"},{"id":2},{"id":3,"na"#;
        assert_eq!(
            recover_prefix(body),
            Some(json!({"total": 3, "items": [{"id": 1, "s": "a,]"}, {"id": 2}]}))
        );
        assert_eq!(recover_prefix(br#"[1,2,3"#), Some(json!([1, 2])));
        assert_eq!(recover_prefix(br#"[[1],[2"#), Some(json!([[1]])));
        // A member of the envelope after the array is cut off: the array is whole.
        assert_eq!(
            recover_prefix(br#"{"items":[{"a":{"b":1,"c":2}}],"next":"x"#),
            Some(json!({"items": [{"a": {"b": 1, "c": 2}}]}))
        );
        assert_eq!(recover_prefix(br#"[{"a":1,"b":2"#), None);
        assert_eq!(recover_prefix(br#""abc"#), None);
        assert_eq!(recover_prefix(br#"[1"#), None);
    }

    #[test]
    fn fit_cuts_the_main_array_or_members() {
        let v = json!({"count": 5, "items": [1, 22, 333, 4444, 55555], "tag": ["x"]});
        // {"count":5,"items":[],"tag":["x"]} is 34 bytes; 1,22 adds 4.
        let (out, cut) = fit(&v, 38).unwrap();
        assert_eq!(out, json!({"count": 5, "items": [1, 22], "tag": ["x"]}));
        assert_eq!((cut.shown, cut.total, cut.items), (2, 5, true));
        assert_eq!(cut.member.as_deref(), Some("items"));
        assert!(json_len(&out) <= 38);
        assert!(fit(&v, 1000).is_none());
        let (out, cut) = fit(&json!([1, 2, 3]), 5).unwrap();
        assert_eq!((out, cut.shown, cut.member), (json!([1, 2]), 2, None));
        let (out, cut) = fit(&json!({"a": 1, "b": "x".repeat(50)}), 20).unwrap();
        assert_eq!(
            (out, cut.items, cut.shown, cut.total),
            (json!({"a": 1}), false, 1, 2)
        );
    }

    fn route(args: &[(&str, &str)], schema: Value) -> Route {
        let r = Route {
            args: args
                .iter()
                .map(|(a, w)| ArgBinding {
                    arg: a.to_string(),
                    wire: w.to_string(),
                    location: ArgLocation::query(
                        openapi_mcp_toolset::model::QueryStyle::Form,
                        true,
                    ),
                    required: false,
                    content_type: None,
                })
                .collect(),
            ..Route::new(HttpMethod::Get, "/items")
        };
        let _ = schema;
        r
    }

    fn cut(shown: usize, total: usize, last: Value) -> Cut {
        Cut {
            member: None,
            items: true,
            shown,
            total,
            last_shown: Some(last),
        }
    }

    #[test]
    fn next_page_arguments() {
        let h = HeaderMap::new();
        let a = |v: Value| v.as_object().cloned().unwrap();
        // Page + size: continues exactly after the last item shown.
        let r = route(&[("page", "page"), ("per_page", "per_page")], json!({}));
        let n = next_page(
            &r,
            &a(json!({"page": 2, "per_page": 10})),
            &h,
            &json!([]),
            &cut(5, 10, json!({})),
        )
        .unwrap();
        assert_eq!(
            (n.args, n.exact),
            (a(json!({"page": 4, "per_page": 5})), true)
        );
        let n = next_page(
            &r,
            &a(json!({"per_page": 30})),
            &h,
            &json!([]),
            &cut(12, 30, json!({})),
        )
        .unwrap();
        assert_eq!(n.args, a(json!({"page": 2, "per_page": 12})));
        // Offset and starting_after.
        let r = route(&[("offset", "offset"), ("limit", "limit")], json!({}));
        let n = next_page(
            &r,
            &a(json!({"offset": 20})),
            &h,
            &json!([]),
            &cut(7, 50, json!({})),
        )
        .unwrap();
        assert_eq!(n.args, a(json!({"offset": 27})));
        let r = route(&[("starting_after", "starting_after")], json!({}));
        let n = next_page(
            &r,
            &Map::new(),
            &h,
            &json!([]),
            &cut(2, 10, json!({"id": "cus_2"})),
        )
        .unwrap();
        assert_eq!(
            (n.args, n.exact),
            (a(json!({"starting_after": "cus_2"})), true)
        );
        // Link header: the next URL's query mapped back to argument names.
        let r = route(&[("after_cursor", "after")], json!({}));
        let mut h = HeaderMap::new();
        h.insert(
            http::header::LINK,
            http::HeaderValue::from_static(r#"<https://api.test/items?after=Y3Vy&x=1>; rel="next", <https://api.test/items?after=Zmlyc3Q>; rel="first""#),
        );
        let n = next_page(
            &r,
            &a(json!({"q": "z"})),
            &h,
            &json!([]),
            &cut(2, 10, json!({})),
        )
        .unwrap();
        assert_eq!(
            (n.args, n.exact),
            (a(json!({"q": "z", "after_cursor": "Y3Vy"})), false)
        );
        // A cursor in the body.
        let r = route(&[("cursor", "cursor")], json!({}));
        let body = json!({"members": [], "response_metadata": {"next_cursor": "dXNlcjpV"}});
        let n = next_page(
            &r,
            &Map::new(),
            &HeaderMap::new(),
            &body,
            &cut(2, 10, json!({})),
        )
        .unwrap();
        assert_eq!(n.args, a(json!({"cursor": "dXNlcjpV"})));
        assert!(
            next_page(
                &route(&[], json!({})),
                &Map::new(),
                &HeaderMap::new(),
                &body,
                &cut(2, 10, json!({}))
            )
            .is_none()
        );
    }
}
