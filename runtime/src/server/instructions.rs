//! The server's `instructions` (both eras: the `initialize` result and `server/discover`), built
//! once per tool set from the spec: what the API is, its areas (tags) with their tool counts, how
//! calls are authenticated, and in `dynamic`/`hybrid` mode how to find operations. Clients that
//! defer loading tools search only tool names and these instructions, so they name what the
//! server can do; they are capped at [`MAX_CHARS`] so they never crowd a model's context.

use std::fmt::Write as _;

use openapi_mcp_toolset::model::{ApiKeyLocation, SecurityScheme, ToolSet};

use crate::modes::dynamic;
use crate::server::multi::ApiInfo;

/// Characters of instructions at most.
pub const MAX_CHARS: usize = 2000;
/// Characters of the spec's `info.description` at most.
const MAX_DESCRIPTION_CHARS: usize = 600;
/// Tags named at most (the largest first).
const MAX_TAGS: usize = 15;

/// What `tools/list` holds, as far as the instructions care: not a tool mode (that is
/// [`crate::modes::dynamic::ToolMode`], resolved from `--mode`), but what the server's mode
/// came to for this tool set, with the counts the text names (`hybrid` with every operation
/// pinned lists plain tools).
pub enum Listing {
    /// One tool per operation.
    Tools,
    /// `searchable` operations behind the discovery tools; `direct` other tools listed as
    /// themselves (`hybrid`).
    Discovery { searchable: usize, direct: usize },
    /// Code mode: `searchable` operations called from `execute` scripts.
    Code { searchable: usize },
}

/// The instructions for `set` listed as `listing`.
pub fn build(set: &ToolSet, listing: &Listing) -> String {
    // "the GitHub v3 REST API", not "the GitHub v3 REST API API".
    let api = if set.title.to_ascii_lowercase().ends_with("api") {
        set.title.clone()
    } else {
        format!("{} API", set.title)
    };
    let mut out = match listing {
        Listing::Tools => format!(
            "Tools for the {api} (version {}): each tool is one HTTP operation; call it with the arguments its inputSchema describes.",
            set.version
        ),
        Listing::Discovery { searchable, direct } => format!(
            "Tools for the {api} (version {}). {searchable} operations are reached through three tools: `{}` to find operations for a task (search by what you want done, or by an area below), `{}` for an operation's arguments (inputSchema), then `{}` to run it.{}",
            set.version,
            dynamic::SEARCH,
            dynamic::DESCRIBE,
            dynamic::CALL,
            if *direct == 0 {
                ""
            } else {
                " The other tools are operations you can call directly."
            }
        ),
        Listing::Code { searchable } => format!(
            "Tools for the {api} (version {}). {searchable} operations are functions of an `api` object in JavaScript scripts: find them with `{}` (search by what you want done, or by an area below), read their TypeScript declarations with `{}`, then run a script with `{}` (several dependent calls in one step).",
            set.version,
            dynamic::SEARCH,
            dynamic::DESCRIBE,
            crate::modes::code::EXECUTE,
        ),
    };
    if let Some(d) = set
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
    {
        out.push_str("\n\n");
        out.extend(d.chars().take(MAX_DESCRIPTION_CHARS));
        if d.chars().count() > MAX_DESCRIPTION_CHARS {
            out.push('…');
        }
    }
    finish(set, out)
}

/// Characters of one API's line (several APIs) at most.
const MAX_API_LINE_CHARS: usize = 200;

/// [`build`] for the merged tool set of several `apis` (with fewer than two, [`build`] itself):
/// the first paragraph names each API (its name, title, version and the first sentence of its
/// description); the areas and authentication are all the APIs'.
pub fn build_for(set: &ToolSet, apis: &[ApiInfo], listing: &Listing) -> String {
    if apis.len() < 2 {
        return build(set, listing);
    }
    let n = apis.len();
    let mut out = match listing {
        Listing::Tools => format!(
            "Tools for {n} APIs: each tool is one HTTP operation of one of them (its name starts with its API's prefix); call it with the arguments its inputSchema describes."
        ),
        Listing::Discovery { searchable, direct } => format!(
            "Tools for {n} APIs. {searchable} operations of them are reached through three tools: `{}` to find operations for a task (search by what you want done, or by an area below; each result names its API), `{}` for an operation's arguments (inputSchema), then `{}` to run it.{}",
            dynamic::SEARCH,
            dynamic::DESCRIBE,
            dynamic::CALL,
            if *direct == 0 {
                ""
            } else {
                " The other tools are operations you can call directly."
            }
        ),
        Listing::Code { searchable } => format!(
            "Tools for {n} APIs. {searchable} operations of them are functions of an `api` object in JavaScript scripts: find them with `{}` (each result names its API), read their TypeScript declarations with `{}`, then run a script with `{}` (several dependent calls in one step, across the APIs).",
            dynamic::SEARCH,
            dynamic::DESCRIBE,
            crate::modes::code::EXECUTE,
        ),
    };
    out.push_str("\n\nThe APIs:");
    for a in apis {
        let mut line = format!("\n- {}: {} (version {})", a.name, a.title, a.version);
        if let Some(d) = a.description.as_deref().and_then(first_sentence) {
            let _ = write!(line, " \u{2014} {d}");
        }
        if line.chars().count() > MAX_API_LINE_CHARS {
            line = line.chars().take(MAX_API_LINE_CHARS - 1).collect();
            line.push('…');
        }
        out.push_str(&line);
    }
    finish(set, out)
}

/// The areas and authentication paragraphs after `out`, all capped at [`MAX_CHARS`].
fn finish(set: &ToolSet, mut out: String) -> String {
    if let Some(areas) = areas(set) {
        out.push_str("\n\n");
        out.push_str(&areas);
    }
    if let Some(auth) = authentication(set) {
        out.push_str("\n\n");
        out.push_str(&auth);
    }
    if out.chars().count() > MAX_CHARS {
        out = out.chars().take(MAX_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// "Areas of the API …: pets (4) — everything about your pets; store (3); …": the tags, most
/// operations first, each with the first sentence of its spec description while they fit in
/// [`MAX_AREAS_CHARS`] (descriptions of the smaller areas go first).
fn areas(set: &ToolSet) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for t in &set.tools {
        for tag in &t.tags {
            match counts.iter_mut().find(|(name, _)| *name == tag.as_str()) {
                Some((_, n)) => *n += 1,
                None => counts.push((tag.as_str(), 1)),
            }
        }
    }
    if counts.len() < 2 {
        return None;
    }
    // Most operations first; ties keep the spec's order.
    counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    let mut entries: Vec<(String, Option<String>)> = counts
        .iter()
        .take(MAX_TAGS)
        .map(|&(tag, n)| {
            let about = set
                .tag_descriptions
                .iter()
                .find(|(name, _)| name == tag)
                .and_then(|(_, d)| first_sentence(d));
            (format!("{tag} ({n})"), about)
        })
        .collect();
    let render = |entries: &[(String, Option<String>)]| {
        let mut text = String::from("Areas of the API (tags, with their operations): ");
        for (i, (head, about)) in entries.iter().enumerate() {
            if i > 0 {
                text.push_str("; ");
            }
            text.push_str(head);
            if let Some(about) = about {
                let _ = write!(text, " \u{2014} {about}");
            }
        }
        if counts.len() > MAX_TAGS {
            let _ = write!(text, "; and {} more", counts.len() - MAX_TAGS);
        }
        text.push('.');
        text
    };
    let mut text = render(&entries);
    while text.chars().count() > MAX_AREAS_CHARS {
        match entries.iter_mut().rev().find(|(_, about)| about.is_some()) {
            Some((_, about)) => *about = None,
            None => break,
        }
        text = render(&entries);
    }
    Some(text)
}

/// Characters of the areas paragraph at most while it carries tag descriptions.
const MAX_AREAS_CHARS: usize = 900;
/// Characters of one tag's description at most.
const MAX_TAG_DESCRIPTION_CHARS: usize = 80;

/// The first sentence of a tag description on one line, lower-cased at its start, without a
/// final period; `None` when nothing is left.
fn first_sentence(description: &str) -> Option<String> {
    let line: String = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = line
        .find(". ")
        .map(|i| i + 1)
        .unwrap_or(line.len())
        .min(line.len());
    let sentence = line[..end].trim().trim_end_matches('.');
    if sentence.is_empty() {
        return None;
    }
    let mut out: String = sentence.chars().take(MAX_TAG_DESCRIPTION_CHARS).collect();
    if sentence.chars().count() > MAX_TAG_DESCRIPTION_CHARS {
        out.push('\u{2026}');
    }
    Some(out)
}

/// How calls are authenticated: by the server, never by the model.
fn authentication(set: &ToolSet) -> Option<String> {
    if set.security_schemes.is_empty() {
        return None;
    }
    let kinds: Vec<String> = set
        .security_schemes
        .iter()
        .map(|(_, s)| match s {
            SecurityScheme::ApiKey { name, location } => match location {
                ApiKeyLocation::Header => format!("an API key in the {name} header"),
                ApiKeyLocation::Query => format!("an API key in the {name} query parameter"),
                ApiKeyLocation::Cookie => format!("an API key in the {name} cookie"),
            },
            SecurityScheme::Bearer => "a bearer token".to_string(),
            SecurityScheme::Basic => "HTTP Basic credentials".to_string(),
            SecurityScheme::OAuth2ClientCredentials { .. } => {
                "an OAuth 2.0 token (client credentials)".to_string()
            }
            SecurityScheme::OAuth2Token | SecurityScheme::OAuth2AuthorizationCode { .. } => {
                "an OAuth 2.0 token".to_string()
            }
        })
        .collect();
    let mut unique: Vec<&String> = Vec::new();
    for k in &kinds {
        if !unique.contains(&k) {
            unique.push(k);
        }
    }
    let listed: Vec<&str> = unique.iter().map(|s| s.as_str()).collect();
    Some(format!(
        "Authentication: this server adds the API's credentials to each call itself ({}); never pass credentials, tokens or keys as arguments. A 401 or 403 answer means the server's credentials are missing or lack a permission, not that the call should be retried with other arguments.",
        listed.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(description: Option<&str>, schemes: Vec<(String, SecurityScheme)>) -> ToolSet {
        ToolSet {
            title: "Pets".into(),
            version: "1.0".into(),
            description: description.map(str::to_string),
            tag_descriptions: Vec::new(),
            base_url: None,
            security_schemes: schemes,
            tools: Vec::new(),
        }
    }

    #[test]
    fn says_what_the_api_is_how_to_search_and_who_authenticates() {
        let s = set(
            Some("A pet store."),
            vec![(
                "key".into(),
                SecurityScheme::ApiKey {
                    name: "X-Api-Key".into(),
                    location: ApiKeyLocation::Header,
                },
            )],
        );
        let text = build(&s, &Listing::Tools);
        assert!(
            text.starts_with("Tools for the Pets API (version 1.0)"),
            "{text}"
        );
        assert!(text.contains("A pet store."), "{text}");
        assert!(text.contains("X-Api-Key header") && text.contains("never pass credentials"));
        let text = build(
            &s,
            &Listing::Discovery {
                searchable: 40,
                direct: 0,
            },
        );
        assert!(
            text.contains("40 operations") && text.contains(dynamic::SEARCH),
            "{text}"
        );
        assert!(!text.contains("call directly"), "{text}");
    }

    #[test]
    fn areas_say_what_each_tag_is_for_within_their_budget() {
        use openapi_mcp_toolset::location::Location;
        use openapi_mcp_toolset::model::{HttpMethod, Route, ToolDef};
        use std::sync::Arc;
        let tool = |name: &str, tag: &str| {
            Arc::new(ToolDef::new(
                rmcp::model::Tool::new(name.to_string(), "", Arc::new(Default::default())),
                Route::new(HttpMethod::Get, "/x"),
                None,
                vec![tag.to_string()],
                Location::default(),
            ))
        };
        let mut s = set(None, Vec::new());
        s.tools = vec![tool("a", "pets"), tool("b", "pets"), tool("c", "store")];
        s.tag_descriptions = vec![
            (
                "pets".into(),
                "Everything about your Pets.\n\nFind out more at the docs.".into(),
            ),
            ("store".into(), "Access to\n Petstore orders".into()),
        ];
        let text = build(&s, &Listing::Tools);
        assert!(
            text.contains("pets (2) \u{2014} Everything about your Pets; store (1) \u{2014} Access to Petstore orders."),
            "{text}"
        );
        // Too many long descriptions: the smaller areas lose theirs first, the names stay.
        s.tools = (0..15)
            .flat_map(|i| (0..(20 - i)).map(move |j| (i, j)))
            .map(|(i, j)| tool(&format!("t{i}_{j}"), &format!("tag{i}")))
            .collect();
        s.tag_descriptions = (0..15)
            .map(|i| {
                (
                    format!("tag{i}"),
                    format!("Area number {i} {}", "x".repeat(70)),
                )
            })
            .collect();
        let text = build(&s, &Listing::Tools);
        let areas = text.split("\n\n").find(|p| p.starts_with("Areas")).unwrap();
        assert!(areas.chars().count() <= MAX_AREAS_CHARS, "{areas}");
        assert!(
            areas.contains("tag0 (20) \u{2014} Area number 0"),
            "{areas}"
        );
        assert!(
            areas.contains("tag14 (6)") && !areas.contains("Area number 14"),
            "{areas}"
        );
    }

    #[test]
    fn several_apis_are_each_named_within_the_cap() {
        let api = |name: &str, title: &str, d: &str| ApiInfo {
            name: name.into(),
            title: title.into(),
            version: "2".into(),
            description: Some(d.into()),
            tag_descriptions: Vec::new(),
            security_schemes: Vec::new(),
            token_scopes: true,
        };
        let apis = [
            api("pets", "Swagger Petstore", "A pet store. With more text."),
            api("crm", "Acme CRM", &"customers ".repeat(100)),
        ];
        let text = build_for(
            &set(None, Vec::new()),
            &apis,
            &Listing::Discovery {
                searchable: 9,
                direct: 0,
            },
        );
        assert!(text.starts_with("Tools for 2 APIs. 9 operations"), "{text}");
        assert!(
            text.contains("\n- pets: Swagger Petstore (version 2) \u{2014} A pet store\n- crm: Acme CRM (version 2)"),
            "{text}"
        );
        let crm = text.lines().find(|l| l.starts_with("- crm")).unwrap();
        assert!(
            crm.chars().count() < MAX_API_LINE_CHARS && crm.ends_with('…'),
            "{crm}"
        );
        assert!(text.chars().count() <= MAX_CHARS);
        // One API: the single-API instructions.
        assert_eq!(
            build_for(&set(None, Vec::new()), &apis[..1], &Listing::Tools),
            build(&set(None, Vec::new()), &Listing::Tools)
        );
    }

    #[test]
    fn long_descriptions_are_capped() {
        let long = "word ".repeat(2000);
        let text = build(&set(Some(&long), Vec::new()), &Listing::Tools);
        assert!(
            text.chars().count() <= MAX_CHARS,
            "{}",
            text.chars().count()
        );
        assert!(text.contains('…'));
        assert!(
            !text.contains("Authentication"),
            "no schemes, no word on it"
        );
    }
}
