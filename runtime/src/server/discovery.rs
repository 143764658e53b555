//! The results of the discovery tools of `--mode dynamic|hybrid` (`search_operations`,
//! `describe_operation`, areas), built from the server's tool state and the search index of
//! [`crate::modes::dynamic`].

use super::*;

/// `search_operations`: ranked operations as text and structured content.
pub(super) fn search_result(
    state: &ToolState,
    d: &Discovery,
    args: &serde_json::Map<String, Value>,
) -> CallToolResult {
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // A search query is a sentence: past a few hundred words the rest only costs time.
    let query = match query.char_indices().nth(dynamic::MAX_QUERY_CHARS) {
        Some((i, _)) => &query[..i],
        None => query,
    };
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(dynamic::DEFAULT_LIMIT, |l| {
            usize::try_from(l).unwrap_or(usize::MAX)
        })
        .clamp(1, dynamic::MAX_LIMIT);
    let area = args
        .get("area")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|a| !a.is_empty());
    // With an area: the query's hits among its operations, else (`*`, or nothing matched) the
    // area's operations in the spec's order.
    let mut listed: Option<(usize, bool)> = None;
    let hits = match area {
        None => d.index.search(query, limit),
        Some(area) => {
            let key = dynamic::area_key(area);
            let tools = &state.set.tools;
            let in_area = |op: usize| tools[op].tags.iter().any(|t| dynamic::area_key(t) == key);
            let members: Vec<usize> = d
                .index
                .ops()
                .iter()
                .copied()
                .filter(|&op| in_area(op))
                .collect();
            if members.is_empty() {
                return unknown_area(state, d, area);
            }
            let mut hits: Vec<dynamic::Hit> = if query.trim() == "*" {
                Vec::new()
            } else {
                d.index
                    .search(query, usize::MAX)
                    .into_iter()
                    .filter(|h| in_area(h.op))
                    .take(limit)
                    .collect()
            };
            if hits.is_empty() {
                listed = Some((members.len(), query.trim() != "*"));
                hits = members
                    .into_iter()
                    .take(limit)
                    .map(|op| dynamic::Hit { op, score: 0.0 })
                    .collect();
            }
            hits
        }
    };
    let mut results = Vec::with_capacity(hits.len());
    let mut text = String::new();
    for (rank, hit) in hits.iter().enumerate() {
        let def = &state.set.tools[hit.op];
        let summary = dynamic::summary(def);
        let required = dynamic::required_arguments(def);
        let api = state.api_name(def);
        text.push_str(&format!(
            "{}. {}{} — {} {} — {}\n   required: {}\n",
            rank + 1,
            def.name(),
            api.map(|a| format!(" (API {a})")).unwrap_or_default(),
            def.route.method.as_str(),
            def.route.path,
            summary,
            required
        ));
        let mut result = serde_json::json!({
            "name": def.name(),
            "method": def.route.method.as_str(),
            "path": def.route.path,
            "summary": summary,
            "required_arguments": required,
            "score": (f64::from(hit.score) * 1000.0).round() / 1000.0,
        });
        if let Some(api) = api {
            result["api"] = Value::from(&**api);
        }
        results.push(result);
    }
    if let (Some((n, unmatched)), Some(area)) = (listed, area) {
        let head = if unmatched {
            format!("No operation of area {area:?} matches {query:?}; its operations")
        } else {
            format!("The operations of area {area:?}")
        };
        let more = if n > hits.len() {
            format!(", the first {} of {n} (a query narrows them)", hits.len())
        } else {
            String::new()
        };
        text = format!("{head}{more}:\n{text}");
    }
    if hits.is_empty() {
        text = format!(
            "No operation matches {query:?} (searched {} operations). Try other words: the resource's name (e.g. \"user\", \"invoice\"), an action (list, create, update, delete) or a path segment, or browse an area (`area`, with the query `*`).",
            d.index.len()
        );
    } else if d.code {
        text.push_str(&format!(
            "\nNext: `{}` with a name for its TypeScript declaration, then call it as `api.<name>(args)` in an `{}` script.",
            dynamic::DESCRIBE,
            crate::modes::code::EXECUTE
        ));
    } else {
        text.push_str(&format!(
            "\nNext: `{}` with a name and the required arguments above; `{}` first for the optional ones and their details.",
            dynamic::CALL,
            dynamic::DESCRIBE
        ));
    }
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    let mut structured = serde_json::json!({
        "query": query,
        "results": results,
        "total_operations": d.index.len(),
    });
    if let Some(area) = area {
        structured["area"] = Value::from(area);
    }
    if let Some((n, _)) = listed {
        structured["area_operations"] = Value::from(n);
    }
    r.structured_content = Some(structured);
    r
}

/// `search_operations` with an area no indexed operation has: the areas there are.
pub(super) fn unknown_area(state: &ToolState, d: &Discovery, area: &str) -> CallToolResult {
    // Echo a prefix only: the name is the caller's, of any length.
    let area = match area.char_indices().nth(64) {
        Some((i, _)) => format!("{}…", &area[..i]),
        None => area.to_string(),
    };
    let areas = dynamic::areas(&state.set.tools, &d.index);
    let text = if areas.is_empty() {
        format!(
            "Unknown area {area:?}: the operations of this API have no areas (tags). Search without `area`."
        )
    } else {
        let shown: Vec<String> = areas
            .iter()
            .take(60)
            .map(|(t, n)| format!("{t} ({n})"))
            .collect();
        let more = if areas.len() > shown.len() {
            format!(" and {} more", areas.len() - shown.len())
        } else {
            String::new()
        };
        format!(
            "Unknown area {area:?}. Areas (operations): {}{more}.",
            shown.join(", ")
        )
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// `describe_operation`: the operation's full tool definition.
pub(super) fn describe_result(
    state: &ToolState,
    d: &Discovery,
    args: &serde_json::Map<String, Value>,
) -> CallToolResult {
    let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
    let Some(&i) = state.ops.get(name) else {
        return unknown_operation(state, d, name);
    };
    let def = &state.set.tools[i];
    let api = state.apis().get(def.api);
    if d.code {
        let mut v = crate::modes::code::describe(def);
        let mut text = crate::modes::code::declaration(def);
        if let Some(api) = api {
            v["api"] = Value::from(api.name.as_str());
            text = format!("// API: {} ({})\n{text}", api.name, api.title);
        }
        if let Some(a) = &def.tool().annotations {
            let hints: Vec<&str> = [
                (a.read_only_hint == Some(true), "read-only"),
                (a.destructive_hint == Some(true), "destructive"),
                (a.idempotent_hint == Some(true), "idempotent"),
            ]
            .into_iter()
            .filter_map(|(on, h)| on.then_some(h))
            .collect();
            if !hints.is_empty() {
                text.push_str(&format!("\n// {}", hints.join(", ")));
            }
        }
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(v);
        return r;
    }
    let mut v = dynamic::describe(def);
    if let Some(api) = api {
        v["api"] = Value::from(api.name.as_str());
    }
    if let Some(arg) = &state.select_args[i]
        && let Some(Value::Object(props)) = v
            .get_mut("inputSchema")
            .and_then(|s| s.get_mut("properties"))
    {
        props.insert(arg.clone(), crate::forward::fit::selection_schema());
    }
    let text = format!(
        "{}Call it with `{}` {{\"name\": \"{}\", \"arguments\": {{...}}}} where arguments match inputSchema.\n{}",
        api.map(|a| format!("API: {} ({})\n", a.name, a.title))
            .unwrap_or_default(),
        dynamic::CALL,
        def.name(),
        serde_json::to_string_pretty(&v).unwrap_or_default()
    );
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(v);
    r
}

pub(super) fn unknown_operation(state: &ToolState, d: &Discovery, name: &str) -> CallToolResult {
    let close = dynamic::closest_names(&state.set.tools, Some(&d.index), name, 5);
    // Echo a prefix only: the name is the caller's, of any length.
    let name = match name.char_indices().nth(64) {
        Some((i, _)) => format!("{}…", &name[..i]),
        None => name.to_string(),
    };
    let text = if close.is_empty() {
        format!(
            "Unknown operation `{name}`; nothing was sent to the API. Find one with `{}`.",
            dynamic::SEARCH
        )
    } else {
        format!(
            "Unknown operation `{name}`; nothing was sent to the API. Closest names: {}. Or find one with `{}`.",
            close.join(", "),
            dynamic::SEARCH
        )
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}
