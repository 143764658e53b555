//! The results of the discovery tools of `--mode dynamic|hybrid` (`search_operations`,
//! `describe_operation`, areas), built from the server's tool state and the search index of
//! [`crate::modes::dynamic`].
//!
//! Arazzo workflows (#39) in `--mode dynamic|code` are searched, described and called through
//! the same tools as the operations ([`ToolState::index_workflows`]): a search result of
//! `kind` "workflow" (no method or path), described with its inputs and outputs (code mode: a
//! function of `api`), and run by `call_operation` or a script as a tool call of it would be.
//! In `hybrid` mode they are listed as tools of their own, like the pinned operations.

use super::workflow::{WorkflowTool, WorkflowTools};
use super::*;

impl ToolState {
    /// Dynamic and code mode: the workflows are searchable, described and called through the
    /// discovery tools instead of being listed (`only`: instead of the operations too). Returns
    /// false (nothing done) in the other modes.
    pub(super) fn index_workflows(&mut self, w: &WorkflowTools) -> bool {
        let Some(d) = self.discovery.as_mut().filter(|d| !d.hybrid) else {
            return false;
        };
        let docs = w.search_docs(&self.set);
        if w.only {
            d.index = SearchIndex::build(&self.set.tools, []);
        } else if !w.only_apis.is_empty() {
            // `workflows-only` in some `apis:` entries: their operations are not searchable.
            let tools = &self.set.tools;
            let keep: Vec<usize> = d
                .index
                .ops()
                .iter()
                .copied()
                .filter(|&i| !w.only_apis.contains(&tools[i].api))
                .collect();
            d.index = SearchIndex::build_with_tags(tools, keep, &self.set.tag_descriptions);
        }
        d.index.add_workflows(&docs);
        d.workflows = true;
        d.only = w.only;
        dynamic::describe_workflows(&mut d.tools, docs.len(), w.only, d.code);
        // Dynamic and code mode list nothing but their discovery tools.
        self.tools = d.tools.clone();
        self.sizes = self
            .tools
            .iter()
            .map(openapi_mcp_toolset::model::json_size)
            .collect();
        self.index.clear();
        self.listed_at.iter_mut().for_each(|i| *i = u32::MAX);
        let listing = |searchable| {
            if d.code {
                crate::server::instructions::Listing::Code { searchable }
            } else {
                crate::server::instructions::Listing::Discovery {
                    searchable,
                    direct: 0,
                }
            }
        };
        let (n, how) = if d.code {
            (
                docs.len(),
                "run one as `api.<name>(args)` in an `execute` script",
            )
        } else {
            (docs.len(), "run one with `call_operation`")
        };
        if w.only {
            self.instructions =
                crate::server::instructions::build_for(&self.set, &self.apis, &listing(n));
            self.instructions.push_str(&format!(
                "\n\nOnly the API's {n} workflows are served: each runs several operations in order in one call (the operations are not searchable or callable on their own); find them with `{}` and {how}.",
                dynamic::SEARCH
            ));
        } else {
            self.instructions.push_str(&format!(
                "\n\nWorkflows: {n} workflows of the API's owner run several operations in order in one call. `{}` finds them beside the operations (results of kind \"workflow\"); {how}, like an operation. Prefer a workflow when it does the whole task.",
                dynamic::SEARCH
            ));
        }
        true
    }

    /// Whether the workflows are reached through the discovery tools.
    fn workflows_discovered(&self) -> bool {
        self.discovery.as_ref().is_some_and(|d| d.workflows)
    }

    /// A workflow tool listed as itself (tools and hybrid mode), by name.
    pub(super) fn listed_workflow(&self, name: &str) -> Option<&WorkflowTool> {
        if self.workflows_discovered() {
            return None;
        }
        self.workflows.as_deref()?.get(name)
    }

    /// A workflow reached through the discovery tools (dynamic and code mode), by name.
    pub(super) fn discovered_workflow(&self, name: &str) -> Option<&WorkflowTool> {
        if !self.workflows_discovered() {
            return None;
        }
        self.workflows.as_deref()?.get(name)
    }

    /// An operation reached through the discovery tools, by name: any operation, except with
    /// `--workflows-only` (then none) and those of APIs whose `apis:` entry says
    /// `workflows-only`.
    pub(super) fn discovered_op(&self, name: &str) -> Option<usize> {
        if self.discovery.as_ref().is_some_and(|d| d.only) {
            return None;
        }
        let i = *self.ops.get(name)?;
        let hidden = self.workflows_discovered()
            && self
                .workflows
                .as_deref()
                .is_some_and(|w| w.only_apis.contains(&self.set.tools[i].api));
        (!hidden).then_some(i)
    }

    /// The names a script's `api` object has: the operations (unless `--workflows-only`), then
    /// the workflows reached through the discovery tools.
    #[cfg(feature = "code")]
    pub(super) fn script_functions(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .set
            .tools
            .iter()
            .map(|d| d.name())
            .filter(|n| self.discovered_op(n).is_some())
            .map(str::to_string)
            .collect();
        if self.workflows_discovered()
            && let Some(w) = self.workflows.as_deref()
        {
            out.extend(w.tools().map(|t| t.name.to_string()));
        }
        out
    }

    /// The names of the APIs a workflow's operations are of, when several APIs are served.
    fn workflow_apis(&self, wt: &WorkflowTool) -> Vec<String> {
        if self.apis.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<String> = Vec::new();
        for tool in wt.operation_tools() {
            if let Some(name) = self
                .ops
                .get(tool)
                .and_then(|&i| self.api_name(&self.set.tools[i]))
                && !out.iter().any(|n| n == &**name)
            {
                out.push(name.to_string());
            }
        }
        out
    }
}

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
    let (hits, listed) = match area {
        None => (d.index.search(query, limit), None),
        Some(area) => match area_hits(state, d, query, limit, area) {
            Ok(found) => found,
            Err(unknown) => return *unknown,
        },
    };
    let mut results = Vec::with_capacity(hits.len());
    let mut text = String::new();
    let workflows = state
        .workflows
        .as_deref()
        .filter(|_| d.workflows && d.index.workflows() > 0);
    for (rank, hit) in hits.iter().enumerate() {
        if hit.workflow {
            let Some(wt) = workflows.and_then(|w| w.at(hit.op)) else {
                continue;
            };
            let (line, result) = workflow_hit(state, wt, rank, hit.score);
            text.push_str(&line);
            results.push(result);
            continue;
        }
        let (line, result) = operation_hit(state, hit, rank, workflows.is_some());
        text.push_str(&line);
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
    if hits.is_empty() && workflows.is_some() {
        text = format!(
            "Nothing matches {query:?} (searched {} operations and {} workflows). Try other words: the resource's name, an action (list, create, update, delete) or what the task is for.",
            d.index.len(),
            d.index.workflows()
        );
    } else if hits.is_empty() {
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
    if workflows.is_some() {
        structured["total_workflows"] = Value::from(d.index.workflows());
    }
    r.structured_content = Some(structured);
    r
}

/// Operations of an area listed instead of hits: (their count, whether the query matched none).
type Listed = Option<(usize, bool)>;

/// The hits of a search within `area`: the query's hits among its operations, else (`*`, or
/// nothing matched) the area's operations in the spec's order, with (their count, whether the
/// query matched nothing). `Err`: no indexed operation has this area (the answer saying so).
fn area_hits(
    state: &ToolState,
    d: &Discovery,
    query: &str,
    limit: usize,
    area: &str,
) -> Result<(Vec<dynamic::Hit>, Listed), Box<CallToolResult>> {
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
        return Err(Box::new(unknown_area(state, d, area)));
    }
    let hits: Vec<dynamic::Hit> = if query.trim() == "*" {
        Vec::new()
    } else {
        d.index
            .search(query, usize::MAX)
            .into_iter()
            .filter(|h| !h.workflow && in_area(h.op))
            .take(limit)
            .collect()
    };
    if !hits.is_empty() {
        return Ok((hits, None));
    }
    let listed = Some((members.len(), query.trim() != "*"));
    let hits = members
        .into_iter()
        .take(limit)
        .map(|op| dynamic::Hit {
            op,
            score: 0.0,
            workflow: false,
        })
        .collect();
    Ok((hits, listed))
}

/// One operation of the search results: its line of text and its structured entry (`kind`
/// when the server has workflows too).
fn operation_hit(
    state: &ToolState,
    hit: &dynamic::Hit,
    rank: usize,
    with_workflows: bool,
) -> (String, Value) {
    let def = &state.set.tools[hit.op];
    let summary = dynamic::summary(def);
    let required = dynamic::required_arguments(def);
    let api = state.api_name(def);
    let line = format!(
        "{}. {}{} — {} {} — {}\n   required: {}\n",
        rank + 1,
        def.name(),
        api.map(|a| format!(" (API {a})")).unwrap_or_default(),
        def.route.method.as_str(),
        def.route.path,
        summary,
        required
    );
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
    if with_workflows {
        result["kind"] = Value::from("operation");
    }
    (line, result)
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
    let Some(i) = state.discovered_op(name) else {
        if let Some(wt) = state.discovered_workflow(name) {
            return describe_workflow(state, d, wt);
        }
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
    let mut close = dynamic::closest_names(&state.set.tools, Some(&d.index), name, 5);
    if let Some(w) = state.workflows.as_deref().filter(|_| d.workflows) {
        // Only what the discovery tools reach (not with `--workflows-only`).
        close.retain(|n| state.discovered_op(n).is_some());
        close.extend(closest_workflows(w, name, &close));
        close.truncate(5);
    }
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

/// A search hit that is a workflow: its line of text and its structured result.
fn workflow_hit(state: &ToolState, wt: &WorkflowTool, rank: usize, score: f32) -> (String, Value) {
    let tool = &wt.tool;
    let summary = tool.title.as_deref().unwrap_or(wt.id()).to_string();
    let required = dynamic::required_of_schema(&tool.input_schema);
    let steps = wt.steps();
    let apis = state.workflow_apis(wt);
    let line = format!(
        "{}. {}{} — workflow `{}`, {} step(s) in one call — {}\n   required: {}\n",
        rank + 1,
        tool.name,
        if apis.is_empty() {
            String::new()
        } else {
            format!(" (APIs {})", apis.join(", "))
        },
        wt.id(),
        steps.len(),
        summary,
        required
    );
    let mut result = serde_json::json!({
        "name": tool.name,
        "kind": "workflow",
        "workflow": wt.id(),
        "steps": steps.len(),
        "summary": summary,
        "required_arguments": required,
        "score": (f64::from(score) * 1000.0).round() / 1000.0,
    });
    if !apis.is_empty() {
        result["apis"] = Value::from(apis);
    }
    (line, result)
}

/// `describe_operation` of a workflow: its inputSchema, outputSchema, annotations and steps
/// (code mode: its TypeScript declaration on `api`).
fn describe_workflow(state: &ToolState, d: &Discovery, wt: &WorkflowTool) -> CallToolResult {
    let tool = &wt.tool;
    let steps = wt.steps();
    let apis = state.workflow_apis(wt);
    if d.code {
        let mut v = crate::modes::code::describe_workflow(tool, wt.id(), &steps);
        let mut text = crate::modes::code::workflow_declaration(tool, wt.id(), &steps);
        if !apis.is_empty() {
            text = format!("// APIs: {}\n{text}", apis.join(", "));
            v["apis"] = Value::from(apis);
        }
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(v);
        return r;
    }
    let mut v = serde_json::json!({
        "name": tool.name,
        "kind": "workflow",
        "workflow": wt.id(),
        "steps": steps,
        "inputSchema": Value::Object((*tool.input_schema).clone()),
    });
    if let Some(t) = &tool.title {
        v["title"] = Value::from(t.as_str());
    }
    if let Some(desc) = &tool.description {
        v["description"] = Value::from(desc.as_ref());
    }
    if let Some(o) = &tool.output_schema {
        v["outputSchema"] = Value::Object((**o).clone());
    }
    if let Some(a) = &tool.annotations {
        v["annotations"] = serde_json::to_value(a).unwrap_or(Value::Null);
    }
    if !apis.is_empty() {
        v["apis"] = Value::from(apis);
    }
    let text = format!(
        "A workflow: its steps run in order in one call, and the result is its outputs (a failed step is an error naming it). Call it with `{}` {{\"name\": \"{}\", \"arguments\": {{...}}}} where arguments match inputSchema.\n{}",
        dynamic::CALL,
        tool.name,
        serde_json::to_string_pretty(&v).unwrap_or_default()
    );
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(v);
    r
}

/// Up to 5 workflow names close to `name` (by edit distance), not already in `have`.
fn closest_workflows(w: &WorkflowTools, name: &str, have: &[String]) -> Vec<String> {
    if name.len() > openapi_mcp_toolset::suggest::MAX_NAME_LEN {
        return Vec::new();
    }
    let lower = name.to_lowercase();
    let close_enough = (name.chars().count() / 3).max(2);
    let mut by_edit: Vec<(usize, String)> = w
        .tools()
        .map(|t| {
            (
                openapi_mcp_toolset::suggest::edit_distance(&lower, &t.name.to_lowercase()),
                t.name.to_string(),
            )
        })
        .filter(|(e, n)| *e <= close_enough && !have.contains(n))
        .collect();
    by_edit.sort();
    by_edit.into_iter().take(5).map(|(_, n)| n).collect()
}

/// What `call_operation` (or a script's `api.*` call) names.
pub(super) enum Target<'a> {
    Operation(usize),
    Workflow(&'a WorkflowTool),
    Unknown,
}

/// The operation or workflow `name` is, as the discovery tools reach them.
pub(super) fn target<'a>(state: &'a ToolState, name: &str) -> Target<'a> {
    if let Some(i) = state.discovered_op(name) {
        return Target::Operation(i);
    }
    match state.discovered_workflow(name) {
        Some(wt) => Target::Workflow(wt),
        None => Target::Unknown,
    }
}
