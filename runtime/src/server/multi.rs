//! Several APIs in one server (`apis:` in a config file, #20).
//!
//! Each API is converted on its own (its spec, prefix, filters, overrides, lock, client profile)
//! and gets its own [`crate::forward::Forwarder`] (base URL, credentials, credential origins,
//! static headers), so a credential can only go where its own API's forwarder sends it. The
//! server serves one merged [`ToolSet`]: the APIs' tools in API order, each tagged with its API's
//! index ([`ToolDef::api`]); a call goes to the forwarder of its tool's API. Names must not
//! collide across APIs (prefixes default to the API's name), checked at start-up and on every
//! `--watch` reload.

use std::sync::Arc;

use openapi_mcp_toolset::model::{SecurityScheme, ToolDef, ToolSet};

/// Longest API name.
pub const MAX_NAME_LEN: usize = 32;

/// What the server keeps of each API besides its tools: its name (from the config) and what
/// the spec says about it.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiInfo {
    /// `[a-z][a-z0-9_]*`, unique among the APIs.
    pub name: String,
    pub title: String,
    pub version: String,
    pub description: Option<String>,
    pub tag_descriptions: Vec<(String, String)>,
    pub security_schemes: Vec<(String, SecurityScheme)>,
    /// Whether a caller's token for this server is checked for the scopes the API's operations
    /// list (`Route::oauth_scopes`): true but for the other APIs of a server whose `oauth-proxy`
    /// is one API's, whose tokens carry that API's scopes only. [`merge`] drops the scopes of
    /// an API without.
    pub token_scopes: bool,
}

impl ApiInfo {
    /// The API `name` whose tools are `set`'s: its description, and the tools.
    pub fn split(name: &str, set: ToolSet) -> (ApiInfo, Vec<Arc<ToolDef>>) {
        let ToolSet {
            title,
            version,
            description,
            tag_descriptions,
            base_url: _,
            security_schemes,
            tools,
        } = set;
        let info = ApiInfo {
            name: name.to_string(),
            title,
            version,
            description,
            tag_descriptions,
            security_schemes,
            token_scopes: true,
        };
        (info, tools)
    }
}

/// Why an API name cannot be used, if it cannot.
pub fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return Err(format!(
            "{name:?} is not an API name: a lower-case letter, then lower-case letters, digits and `_`"
        ));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "{name:?} is not an API name: at most {MAX_NAME_LEN} characters"
        ));
    }
    Ok(())
}

/// The environment variable API `api` reads where a single-API server reads `var`
/// (`OPENAPI_MCP_API_KEY` of API `pets` is `OPENAPI_MCP_PETS_API_KEY`): two APIs with a scheme
/// of the same name never share a secret.
pub fn env_var(api: &str, var: &str) -> String {
    let rest = var.strip_prefix("OPENAPI_MCP_").unwrap_or(var);
    format!("OPENAPI_MCP_{}_{rest}", api.to_ascii_uppercase())
}

/// Why tool sets cannot be served together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error(
        "tool `{tool}` is in API `{first}` and in API `{second}`: give one of them another prefix (`prefix:` in its `apis` entry), or rename the tool in its overrides"
    )]
    Collision {
        tool: String,
        first: String,
        second: String,
    },
    #[error(
        "API `{first}` (scheme {first_scheme}) and API `{second}` (scheme {second_scheme}) would both read {var}: rename one of the APIs"
    )]
    SharedVariable {
        var: String,
        first: String,
        first_scheme: String,
        second: String,
        second_scheme: String,
    },
}

/// The APIs' tools as one tool set, in API order, each tool tagged with its API's index. Its
/// title and version join the APIs'; its tag descriptions and security schemes are all of
/// theirs (for the instructions; each forwarder has its own API's schemes).
pub fn merge(
    parts: Vec<(ApiInfo, Vec<Arc<ToolDef>>)>,
) -> Result<(ToolSet, Vec<ApiInfo>), MergeError> {
    let mut infos = Vec::with_capacity(parts.len());
    let mut tools: Vec<Arc<ToolDef>> = Vec::new();
    let mut owner: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, (info, defs)) in parts.into_iter().enumerate() {
        for mut def in defs {
            if let Some(&j) = owner.get(def.name()) {
                let first: &ApiInfo = &infos[j];
                return Err(MergeError::Collision {
                    tool: def.name().to_string(),
                    first: first.name.clone(),
                    second: info.name.clone(),
                });
            }
            owner.insert(def.name().to_string(), i);
            if def.api != i {
                Arc::make_mut(&mut def).api = i;
            }
            if !info.token_scopes && !def.route.oauth_scopes.is_empty() {
                Arc::make_mut(&mut def).route.oauth_scopes.clear();
            }
            tools.push(def);
        }
        infos.push(info);
    }
    let join = |f: &dyn Fn(&ApiInfo) -> &str| infos.iter().map(f).collect::<Vec<_>>().join(" + ");
    let set = ToolSet {
        title: join(&|a| a.title.as_str()),
        version: join(&|a| a.version.as_str()),
        description: None,
        tag_descriptions: infos
            .iter()
            .flat_map(|a| a.tag_descriptions.iter().cloned())
            .collect(),
        base_url: None,
        security_schemes: infos
            .iter()
            .flat_map(|a| a.security_schemes.iter().cloned())
            .collect(),
        tools,
    };
    Ok((set, infos))
}

/// Two APIs whose schemes read the same environment variable (`OPENAPI_MCP_A_B_KEY` is API
/// `a`'s scheme `b_key` and API `a_b`'s scheme `key`): one secret would go to both, so
/// start-up refuses it.
pub fn check_variables(infos: &[ApiInfo]) -> Result<(), MergeError> {
    let mut seen: Vec<(String, usize, &str)> = Vec::new();
    for (i, info) in infos.iter().enumerate() {
        for (scheme_name, scheme) in &info.security_schemes {
            for var in scheme.env_var_names(scheme_name) {
                let var = env_var(&info.name, &var);
                if let Some((_, j, other)) = seen.iter().find(|(v, j, _)| *v == var && *j != i) {
                    return Err(MergeError::SharedVariable {
                        var,
                        first: infos[*j].name.clone(),
                        first_scheme: (*other).to_string(),
                        second: info.name.clone(),
                        second_scheme: scheme_name.clone(),
                    });
                }
                seen.push((var, i, scheme_name.as_str()));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use openapi_mcp_toolset::location::Location;
    use openapi_mcp_toolset::model::{HttpMethod, Route};

    fn set(title: &str, names: &[&str], scheme: &str) -> ToolSet {
        let tools = names
            .iter()
            .map(|n| {
                let tool =
                    rmcp::model::Tool::new(n.to_string(), "", Arc::new(serde_json::Map::new()));
                Arc::new(ToolDef::new(
                    tool,
                    Route::new(HttpMethod::Get, "/x"),
                    None,
                    Vec::new(),
                    Location::default(),
                ))
            })
            .collect();
        ToolSet {
            title: title.into(),
            version: "1".into(),
            description: None,
            tag_descriptions: Vec::new(),
            base_url: None,
            security_schemes: vec![(scheme.to_string(), SecurityScheme::Bearer)],
            tools,
        }
    }

    #[test]
    fn names_are_checked() {
        for good in ["pets", "a", "stripe_v2", "x9"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "Pets", "9a", "_a", "a-b", "a b", "é", &"a".repeat(33)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn variables_are_namespaced_per_api() {
        assert_eq!(
            env_var("pets", "OPENAPI_MCP_API_KEY"),
            "OPENAPI_MCP_PETS_API_KEY"
        );
        assert_eq!(
            env_var("gh", "OPENAPI_MCP_BASIC_PASSWORD"),
            "OPENAPI_MCP_GH_BASIC_PASSWORD"
        );
    }

    #[test]
    fn merge_tags_tools_with_their_api_in_api_order() {
        let (a, ta) = ApiInfo::split("a", set("A", &["a_list", "a_get"], "key"));
        let (b, tb) = ApiInfo::split("b", set("B", &["b_list"], "key"));
        let (merged, infos) = merge(vec![(a, ta), (b, tb)]).unwrap();
        let got: Vec<(&str, usize)> = merged.tools.iter().map(|t| (t.name(), t.api)).collect();
        assert_eq!(got, [("a_list", 0), ("a_get", 0), ("b_list", 1)]);
        assert_eq!(merged.title, "A + B");
        assert_eq!(infos[1].name, "b");
        assert!(check_variables(&infos).is_ok());
    }

    /// An API whose operation scopes are not asked of the caller's token (beside the
    /// oauth-proxy's API) has them dropped; the other keeps its own.
    #[test]
    fn merge_drops_the_scopes_of_an_api_without_token_scopes() {
        let scoped = |title: &str, name: &str| {
            let mut s = set(title, &[name], "key");
            for t in &mut s.tools {
                Arc::make_mut(t).route.oauth_scopes = vec![vec!["read".to_string()]];
            }
            s
        };
        let (a, ta) = ApiInfo::split("a", scoped("A", "a_get"));
        let (mut b, tb) = ApiInfo::split("b", scoped("B", "b_get"));
        b.token_scopes = false;
        let (merged, _) = merge(vec![(a, ta), (b, tb)]).unwrap();
        let scopes: Vec<usize> = merged
            .tools
            .iter()
            .map(|t| t.route.oauth_scopes.len())
            .collect();
        assert_eq!(scopes, [1, 0]);
    }

    #[test]
    fn a_name_in_two_apis_is_refused_naming_both() {
        let (a, ta) = ApiInfo::split("a", set("A", &["list"], "key"));
        let (b, tb) = ApiInfo::split("b", set("B", &["get", "list"], "key"));
        let err = merge(vec![(a, ta), (b, tb)]).unwrap_err().to_string();
        assert!(
            err.contains("`list`") && err.contains("API `a`") && err.contains("API `b`"),
            "{err}"
        );
    }

    #[test]
    fn two_apis_reading_one_variable_are_refused() {
        let (a, _) = ApiInfo::split("a", set("A", &[], "b_key"));
        let (ab, _) = ApiInfo::split("a_b", set("AB", &[], "key"));
        let err = check_variables(&[a, ab]).unwrap_err().to_string();
        assert!(err.contains("OPENAPI_MCP_A_B_KEY"), "{err}");
    }
}
