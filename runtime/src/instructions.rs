//! The server's `instructions` (both eras: the `initialize` result and `server/discover`), built
//! once per tool set from the spec: what the API is, its areas (tags) with their tool counts, how
//! calls are authenticated, and in `dynamic`/`hybrid` mode how to find operations. Clients that
//! defer loading tools search only tool names and these instructions, so they name what the
//! server can do; they are capped at [`MAX_CHARS`] so they never crowd a model's context.

use std::fmt::Write as _;

use openapi_mcp_toolset::model::{ApiKeyLocation, SecurityScheme, ToolSet};

use crate::dynamic;

/// Characters of instructions at most.
pub const MAX_CHARS: usize = 2000;
/// Characters of the spec's `info.description` at most.
const MAX_DESCRIPTION_CHARS: usize = 600;
/// Tags named at most (the largest first).
const MAX_TAGS: usize = 15;

/// How the tools are exposed, as far as the instructions care.
pub enum Exposure {
    /// One tool per operation.
    Tools,
    /// `searchable` operations behind the discovery tools; `direct` other tools listed as
    /// themselves (`hybrid`).
    Discovery { searchable: usize, direct: usize },
}

/// The instructions for `set` exposed as `exposure`.
pub fn build(set: &ToolSet, exposure: &Exposure) -> String {
    // "the GitHub v3 REST API", not "the GitHub v3 REST API API".
    let api = if set.title.to_ascii_lowercase().ends_with("api") {
        set.title.clone()
    } else {
        format!("{} API", set.title)
    };
    let mut out = match exposure {
        Exposure::Tools => format!(
            "Tools for the {api} (version {}): each tool is one HTTP operation; call it with the arguments its inputSchema describes.",
            set.version
        ),
        Exposure::Discovery { searchable, direct } => format!(
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

/// "Areas: pets (4 operations), store (3), …": the tags, most operations first.
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
    let mut text = String::from("Areas of the API (tags, with their operations): ");
    for (i, (tag, n)) in counts.iter().take(MAX_TAGS).enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        let _ = write!(text, "{tag} ({n})");
    }
    if counts.len() > MAX_TAGS {
        let _ = write!(text, " and {} more", counts.len() - MAX_TAGS);
    }
    text.push('.');
    Some(text)
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
            SecurityScheme::OAuth2Token => "an OAuth 2.0 token".to_string(),
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
        let text = build(&s, &Exposure::Tools);
        assert!(
            text.starts_with("Tools for the Pets API (version 1.0)"),
            "{text}"
        );
        assert!(text.contains("A pet store."), "{text}");
        assert!(text.contains("X-Api-Key header") && text.contains("never pass credentials"));
        let text = build(
            &s,
            &Exposure::Discovery {
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
    fn long_descriptions_are_capped() {
        let long = "word ".repeat(2000);
        let text = build(&set(Some(&long), Vec::new()), &Exposure::Tools);
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
