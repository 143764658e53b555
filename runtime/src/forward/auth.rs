//! Credentials for the API's security schemes, security-requirement selection, and the OAuth2
//! client-credentials token cache.
//!
//! # Where credentials come from
//!
//! Every scheme gets an environment-variable prefix made from its name: `OPENAPI_MCP_` followed by
//! the scheme name in upper snake case (`api_key` → `OPENAPI_MCP_API_KEY`, `bearerAuth` →
//! `OPENAPI_MCP_BEARER_AUTH`, `petstore-auth` → `OPENAPI_MCP_PETSTORE_AUTH`).
//!
//! | scheme | variables |
//! |---|---|
//! | apiKey | `OPENAPI_MCP_<NAME>`: the key |
//! | http bearer | `OPENAPI_MCP_<NAME>`: the token |
//! | http basic | `OPENAPI_MCP_<NAME>_USERNAME` and `OPENAPI_MCP_<NAME>_PASSWORD`, or `OPENAPI_MCP_<NAME>` as `user:pass` |
//! | oauth2 client credentials | `OPENAPI_MCP_<NAME>_CLIENT_ID` and `OPENAPI_MCP_<NAME>_CLIENT_SECRET` (a token is fetched), or `OPENAPI_MCP_<NAME>`: a token used as is |
//! | other oauth2 flows, openIdConnect | `OPENAPI_MCP_<NAME>`: the access token |
//!
//! [`Credentials::set`] is what `--auth SCHEME=VALUE` calls; VALUE means what `OPENAPI_MCP_<NAME>`
//! means (for basic: `user:pass`; for oauth2: a token).
//!
//! Secrets never appear in `Debug` output, errors, results or logs.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;

use openapi_mcp_toolset::model::{ApiKeyLocation, SecurityScheme, ambiguous_env};

/// What the user supplied for one scheme.
#[derive(Clone, PartialEq, Eq)]
enum Secret {
    /// `OPENAPI_MCP_<NAME>` or `--auth NAME=VALUE`: a key, a token, or `user:pass` for basic.
    Raw(String),
    UserPass {
        user: String,
        pass: String,
    },
    Client {
        id: String,
        secret: String,
    },
}

/// Secret values per security-scheme name.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    map: BTreeMap<String, Secret>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.map.keys().map(|k| (k, "<redacted>")))
            .finish()
    }
}

/// One scheme's usable credential.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cred<'a> {
    /// API key, bearer token, or an OAuth2 access token given directly.
    Token(&'a str),
    Basic {
        user: &'a str,
        pass: &'a str,
    },
    /// OAuth2 client credentials: a token must be fetched.
    Client {
        id: &'a str,
        secret: &'a str,
    },
}

use openapi_mcp_toolset::model::credential_env_base as env_base;

/// The environment variable of `--auth-token` (the HTTP gate's bearer token).
pub const AUTH_TOKEN_ENV: &str = "OPENAPI_MCP_AUTH_TOKEN";

/// Where the OAuth proxy's SQLite store goes by default (read by `oauth::proxy::store`).
pub const DATA_DIR_ENV: &str = "OPENAPI_MCP_DATA_DIR";
/// The environment variable holding the key that seals 2026-era confirmations.
pub const CONFIRM_KEY_ENV: &str = "OPENAPI_MCP_CONFIRM_KEY";
/// The environment variable holding the secret of `--oauth-client-id` (defined with the OAuth
/// client's credentials, listed here with the server's other variables).
pub use crate::oauth::CLIENT_SECRET_ENV;
/// The environment variable holding the key that seals the OAuth proxy's store and signs its
/// tokens (32 bytes or more).
pub const STORE_KEY_ENV: &str = "OPENAPI_MCP_STORE_KEY";
/// The environment variable holding the secret of `--upstream-client-id` (never a flag).
pub const UPSTREAM_SECRET_ENV: &str = "OPENAPI_MCP_UPSTREAM_CLIENT_SECRET";

/// Every `OPENAPI_MCP_*` variable the server reads for itself, with what it is for (#36). A
/// security scheme whose credential variable is one of these (a scheme `auth_token`,
/// `store_key`, `confirm_key`; an oauth2 client-credentials scheme `oauth` or `upstream`; in a
/// server of several APIs, API `auth` with scheme `token`) reads no credential from the
/// environment: the server's own secret would otherwise be sent to the API, and an API key set
/// under that name would become the server's. The clap arguments take their `env` names from
/// here, and a test checks every `env` of the command line is listed.
pub const SERVER_ENV: &[(&str, &str)] = &[
    (AUTH_TOKEN_ENV, "--auth-token, the HTTP gate's token"),
    (CONFIRM_KEY_ENV, "the key sealing --confirm confirmations"),
    (CLIENT_SECRET_ENV, "the secret of --oauth-client-id"),
    (STORE_KEY_ENV, "the key of the --oauth-proxy store"),
    (UPSTREAM_SECRET_ENV, "the secret of --upstream-client-id"),
    (DATA_DIR_ENV, "the --oauth-proxy store's directory"),
];

/// What the server reads `var` for, when it is one of its own variables ([`SERVER_ENV`]).
pub fn server_env(var: &str) -> Option<&'static str> {
    SERVER_ENV
        .iter()
        .find(|(n, _)| *n == var)
        .map(|(_, what)| *what)
}

/// A security scheme that reads no credential from the environment because one of its
/// variables is the server's own ([`SERVER_ENV`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReservedEnv {
    pub scheme: String,
    /// The variable, as the scheme would have read it.
    pub var: String,
    /// What the server reads it for.
    pub what: &'static str,
}

impl fmt::Display for ReservedEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "security scheme {} would read its credential from {}, which is the server's own ({}): it reads nothing from the environment; set it with --auth {}=VALUE",
            self.scheme, self.var, self.what, self.scheme
        )
    }
}

impl Credentials {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads every scheme's variables (see the module docs) through `env`. Empty values count as
    /// unset. Schemes that share their variables with another scheme ([`ambiguous_env`])
    /// read nothing.
    pub fn from_env(
        schemes: &[(String, SecurityScheme)],
        env: impl Fn(&str) -> Option<String>,
    ) -> Self {
        Self::from_env_as(schemes, str::to_string, env).0
    }

    /// [`Credentials::from_env`] where the variable `name(v)` is read for each variable `v` of
    /// the module docs (a server of several APIs reads `OPENAPI_MCP_<API>_<SCHEME>`). A scheme
    /// any of whose variables is the server's own ([`SERVER_ENV`]) reads nothing: it is
    /// returned, for a warning.
    pub fn from_env_as(
        schemes: &[(String, SecurityScheme)],
        name: impl Fn(&str) -> String,
        env: impl Fn(&str) -> Option<String>,
    ) -> (Self, Vec<ReservedEnv>) {
        let get = |v: &str| env(&name(v)).filter(|v| !v.is_empty());
        let ambiguous = ambiguous_env(schemes);
        let mut creds = Self::default();
        let mut reserved = Vec::new();
        for (scheme_name, scheme) in schemes {
            let taken = scheme.env_var_names(scheme_name).into_iter().find_map(|v| {
                let var = name(&v);
                server_env(&var).map(|what| ReservedEnv {
                    scheme: scheme_name.clone(),
                    var,
                    what,
                })
            });
            if let Some(r) = taken {
                reserved.push(r);
                continue;
            }
            let name = scheme_name;
            let base = env_base(name);
            if ambiguous.iter().any(|(b, _)| *b == base) {
                continue;
            }
            let secret = match scheme {
                SecurityScheme::Basic => match get(&format!("{base}_USERNAME")) {
                    Some(user) => Some(Secret::UserPass {
                        user,
                        pass: get(&format!("{base}_PASSWORD")).unwrap_or_default(),
                    }),
                    None => get(&base).map(Secret::Raw),
                },
                SecurityScheme::OAuth2ClientCredentials { .. } => match get(&base) {
                    Some(token) => Some(Secret::Raw(token)),
                    None => match (
                        get(&format!("{base}_CLIENT_ID")),
                        get(&format!("{base}_CLIENT_SECRET")),
                    ) {
                        (Some(id), Some(secret)) => Some(Secret::Client { id, secret }),
                        _ => None,
                    },
                },
                SecurityScheme::ApiKey { .. }
                | SecurityScheme::Bearer
                | SecurityScheme::OAuth2Token
                | SecurityScheme::OAuth2AuthorizationCode { .. } => get(&base).map(Secret::Raw),
            };
            if let Some(s) = secret {
                creds.map.insert(name.clone(), s);
            }
        }
        (creds, reserved)
    }

    /// `--auth SCHEME=VALUE`: VALUE means what `OPENAPI_MCP_<NAME>` means (for basic `user:pass`,
    /// for oauth2 a ready token). Replaces anything read from the environment for that scheme.
    pub fn set(&mut self, scheme: &str, value: String) {
        self.map.insert(scheme.to_string(), Secret::Raw(value));
    }

    /// OAuth2 client-credentials id and secret for `scheme` (the token is fetched on first use).
    pub fn set_client_credentials(
        &mut self,
        scheme: &str,
        client_id: String,
        client_secret: String,
    ) {
        self.map.insert(
            scheme.to_string(),
            Secret::Client {
                id: client_id,
                secret: client_secret,
            },
        );
    }

    /// The environment variables consulted for a scheme, in the order they are tried.
    pub fn env_var_names(scheme_name: &str, scheme: &SecurityScheme) -> Vec<String> {
        scheme.env_var_names(scheme_name)
    }

    /// Names of the schemes (from `schemes`) that have no usable credential.
    pub fn missing(&self, schemes: &[(String, SecurityScheme)]) -> Vec<String> {
        schemes
            .iter()
            .filter(|(n, s)| self.cred(n, s).is_none())
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Whether any credential is configured for `scheme`.
    pub fn has(&self, scheme_name: &str, scheme: &SecurityScheme) -> bool {
        self.cred(scheme_name, scheme).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub(crate) fn cred<'a>(&'a self, name: &str, scheme: &SecurityScheme) -> Option<Cred<'a>> {
        match (self.map.get(name)?, scheme) {
            (Secret::Raw(v), SecurityScheme::Basic) => Some(match v.split_once(':') {
                Some((user, pass)) => Cred::Basic { user, pass },
                None => Cred::Basic { user: v, pass: "" },
            }),
            (Secret::Raw(v), _) => Some(Cred::Token(v)),
            (Secret::UserPass { user, pass }, SecurityScheme::Basic) => {
                Some(Cred::Basic { user, pass })
            }
            (Secret::Client { id, secret }, SecurityScheme::OAuth2ClientCredentials { .. }) => {
                Some(Cred::Client { id, secret })
            }
            _ => None,
        }
    }

    /// The schemes whose secret (a key, a token, a password, a client secret) is non-empty and
    /// shorter than `min` characters: too short to be scrubbed from results.
    pub(crate) fn short_values(&self, min: usize) -> Vec<String> {
        let short = |v: &str| !v.is_empty() && v.chars().count() < min;
        self.map
            .iter()
            .filter(|(_, s)| match s {
                Secret::Raw(v) => match v.split_once(':') {
                    Some((_, pass)) => short(v) || short(pass),
                    None => short(v),
                },
                Secret::UserPass { pass, .. } => short(pass),
                Secret::Client { secret, .. } => short(secret),
            })
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Every secret string (and derived form) that must be scrubbed from text shown to clients.
    /// Besides the raw value: its base64 (basic auth) and the percent-encoded forms it takes in a
    /// query string, a cookie or a form body (APIs echo those back in error bodies).
    pub(crate) fn secret_strings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in self.map.values() {
            match s {
                Secret::Raw(v) => {
                    push_with_encodings(&mut out, v);
                    out.push(base64::engine::general_purpose::STANDARD.encode(v));
                    if let Some((_, pass)) = v.split_once(':') {
                        push_with_encodings(&mut out, pass);
                    }
                }
                Secret::UserPass { user, pass } => {
                    push_with_encodings(&mut out, pass);
                    out.push(
                        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}")),
                    );
                }
                Secret::Client { secret, .. } => push_with_encodings(&mut out, secret),
            }
        }
        out
    }
}

/// `v` in every form it may come back in ([`super::scrub::value_forms`]).
fn push_with_encodings(out: &mut Vec<String>, v: &str) {
    for e in super::scrub::value_forms(v) {
        if !out.contains(&e) {
            out.push(e);
        }
    }
}

/// The first security alternative whose schemes all have credentials. Non-empty alternatives are
/// preferred over an empty one (`{}` = "auth optional"), so configured credentials are sent when
/// the operation accepts them. `None`: send without credentials.
#[cfg(test)]
pub(crate) fn select<'r>(
    security: &'r [Vec<String>],
    schemes: &[(String, SecurityScheme)],
    creds: &Credentials,
) -> Option<&'r [String]> {
    select_with(security, schemes, creds, &[])
}

/// [`select`] with per-caller credentials (scheme, value) besides the static ones.
pub(crate) fn select_with<'r>(
    security: &'r [Vec<String>],
    schemes: &[(String, SecurityScheme)],
    creds: &Credentials,
    per_caller: &[(String, String)],
) -> Option<&'r [String]> {
    security
        .iter()
        .filter(|alt| !alt.is_empty())
        .find(|alt| {
            alt.iter().all(|name| {
                schemes.iter().any(|(n, s)| {
                    n == name
                        && (per_caller.iter().any(|(c, _)| c == n) || creds.cred(n, s).is_some())
                })
            })
        })
        .map(Vec::as_slice)
}

/// A per-caller credential as the scheme takes it (basic: `user:pass`; anything else: a token).
fn caller_cred<'a>(scheme: &SecurityScheme, value: &'a str) -> Cred<'a> {
    match scheme {
        SecurityScheme::Basic => match value.split_once(':') {
            Some((user, pass)) => Cred::Basic { user, pass },
            None => Cred::Basic {
                user: value,
                pass: "",
            },
        },
        _ => Cred::Token(value),
    }
}

/// Credentials placed on one request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AuthParts {
    /// Header name and value.
    pub headers: Vec<(String, String)>,
    /// Raw (not yet encoded) query name and value.
    pub query: Vec<(String, String)>,
    /// Raw cookie name and value.
    pub cookies: Vec<(String, String)>,
    /// Client-credentials schemes whose token is not cached yet (they get no header).
    pub needs_token: Vec<String>,
}

/// Puts the credentials of `alt` on a request; `token(scheme)` is the cached OAuth2 token.
#[cfg(test)]
pub(crate) fn apply(
    alt: &[String],
    schemes: &[(String, SecurityScheme)],
    creds: &Credentials,
    token: impl Fn(&str) -> Option<String>,
) -> AuthParts {
    apply_with(alt, schemes, creds, token, &[])
}

/// [`apply`] with per-caller credentials (scheme, value), which take the place of the static
/// credential of their scheme.
pub(crate) fn apply_with(
    alt: &[String],
    schemes: &[(String, SecurityScheme)],
    creds: &Credentials,
    token: impl Fn(&str) -> Option<String>,
    per_caller: &[(String, String)],
) -> AuthParts {
    let mut parts = AuthParts::default();
    for name in alt {
        let Some((_, scheme)) = schemes.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let cred = match per_caller.iter().find(|(n, _)| n == name) {
            Some((_, v)) => Some(caller_cred(scheme, v)),
            None => creds.cred(name, scheme),
        };
        let Some(cred) = cred else {
            continue;
        };
        match (scheme, cred) {
            (
                SecurityScheme::ApiKey {
                    name: key,
                    location,
                },
                Cred::Token(v),
            ) => match location {
                ApiKeyLocation::Header => parts.headers.push((key.clone(), v.to_string())),
                ApiKeyLocation::Query => parts.query.push((key.clone(), v.to_string())),
                ApiKeyLocation::Cookie => parts.cookies.push((key.clone(), v.to_string())),
            },
            (_, Cred::Basic { user, pass }) => {
                let enc =
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
                parts
                    .headers
                    .push(("Authorization".to_string(), format!("Basic {enc}")));
            }
            (_, Cred::Token(t)) => parts
                .headers
                .push(("Authorization".to_string(), format!("Bearer {t}"))),
            (_, Cred::Client { .. }) => match token(name) {
                Some(t) => parts
                    .headers
                    .push(("Authorization".to_string(), format!("Bearer {t}"))),
                None => parts.needs_token.push(name.clone()),
            },
        }
    }
    parts
}

/// Cached OAuth2 access tokens per scheme name.
#[derive(Default)]
pub(crate) struct TokenCache {
    map: std::sync::Mutex<HashMap<String, (String, Option<Instant>)>>,
    /// Serializes token fetches so concurrent calls don't all hit the token endpoint.
    pub fetch_lock: tokio::sync::Mutex<()>,
}

/// Tokens are refreshed this long before they expire.
pub(crate) const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

impl TokenCache {
    pub fn get(&self, scheme: &str) -> Option<String> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let (tok, until) = map.get(scheme)?;
        match until {
            Some(t) if Instant::now() >= *t => None,
            _ => Some(tok.clone()),
        }
    }
    /// Caches `token` until `expires_in` minus [`EXPIRY_MARGIN`] — or minus half the lifetime for
    /// tokens that live less than twice the margin — (forever when the server gave no lifetime: a
    /// 401 refreshes it).
    pub fn put(&self, scheme: &str, token: String, expires_in: Option<u64>) {
        let until = expires_in.map(|s| {
            let life = Duration::from_secs(s);
            Instant::now() + life - EXPIRY_MARGIN.min(life / 2)
        });
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(scheme.to_string(), (token, until));
    }
    pub fn invalidate(&self, scheme: &str) {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(scheme);
    }
    pub fn all_tokens(&self) -> Vec<String> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|(t, _)| t.clone())
            .collect()
    }
}

/// `access_token` and `expires_in` from a token endpoint's JSON answer.
/// Why a token endpoint's answer is not a token.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenResponseError {
    #[error("the token endpoint did not return JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    #[error("the token endpoint's answer has no `access_token`")]
    NoAccessToken,
}

pub(crate) fn parse_token_response(
    body: &[u8],
) -> Result<(String, Option<u64>), TokenResponseError> {
    let v: Value = serde_json::from_slice(body).map_err(TokenResponseError::NotJson)?;
    let token = v
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or(TokenResponseError::NoAccessToken)?;
    let expires = match v.get("expires_in") {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    Ok((token.to_string(), expires))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schemes() -> Vec<(String, SecurityScheme)> {
        vec![
            (
                "api_key".into(),
                SecurityScheme::ApiKey {
                    name: "X-API-Key".into(),
                    location: ApiKeyLocation::Header,
                },
            ),
            ("bearerAuth".into(), SecurityScheme::Bearer),
            ("basic".into(), SecurityScheme::Basic),
            (
                "cc".into(),
                SecurityScheme::OAuth2ClientCredentials {
                    token_url: "https://a/token".into(),
                    scopes: vec![],
                },
            ),
            ("oidc".into(), SecurityScheme::OAuth2Token),
            (
                "qkey".into(),
                SecurityScheme::ApiKey {
                    name: "key".into(),
                    location: ApiKeyLocation::Query,
                },
            ),
            (
                "ckey".into(),
                SecurityScheme::ApiKey {
                    name: "sid".into(),
                    location: ApiKeyLocation::Cookie,
                },
            ),
        ]
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn env_names() {
        let s = schemes();
        assert_eq!(
            Credentials::env_var_names("api_key", &s[0].1),
            vec!["OPENAPI_MCP_API_KEY"]
        );
        assert_eq!(
            Credentials::env_var_names("bearerAuth", &s[1].1),
            vec!["OPENAPI_MCP_BEARER_AUTH"]
        );
        assert_eq!(
            Credentials::env_var_names("basic", &s[2].1),
            vec![
                "OPENAPI_MCP_BASIC_USERNAME",
                "OPENAPI_MCP_BASIC_PASSWORD",
                "OPENAPI_MCP_BASIC"
            ]
        );
        assert_eq!(
            Credentials::env_var_names("cc", &s[3].1),
            vec![
                "OPENAPI_MCP_CC_CLIENT_ID",
                "OPENAPI_MCP_CC_CLIENT_SECRET",
                "OPENAPI_MCP_CC"
            ]
        );
        assert_eq!(
            Credentials::env_var_names("petstore-auth", &SecurityScheme::Bearer),
            vec!["OPENAPI_MCP_PETSTORE_AUTH"]
        );
    }

    #[test]
    fn from_env_and_missing() {
        let s = schemes();
        let c = Credentials::from_env(
            &s,
            env_of(&[
                ("OPENAPI_MCP_API_KEY", "k1"),
                ("OPENAPI_MCP_BASIC_USERNAME", "alice"),
                ("OPENAPI_MCP_BASIC_PASSWORD", "pw"),
                ("OPENAPI_MCP_CC_CLIENT_ID", "id"),
                ("OPENAPI_MCP_CC_CLIENT_SECRET", "sec"),
                ("OPENAPI_MCP_OIDC", ""),
            ]),
        );
        assert_eq!(c.cred("api_key", &s[0].1), Some(Cred::Token("k1")));
        assert_eq!(
            c.cred("basic", &s[2].1),
            Some(Cred::Basic {
                user: "alice",
                pass: "pw"
            })
        );
        assert_eq!(
            c.cred("cc", &s[3].1),
            Some(Cred::Client {
                id: "id",
                secret: "sec"
            })
        );
        assert_eq!(c.missing(&s), vec!["bearerAuth", "oidc", "qkey", "ckey"]);
        // Debug never shows secrets.
        let dbg = format!("{c:?}");
        assert!(
            !dbg.contains("k1") && !dbg.contains("pw") && !dbg.contains("sec\""),
            "{dbg}"
        );

        // A direct token wins over client credentials; basic as user:pass.
        let c = Credentials::from_env(
            &s,
            env_of(&[
                ("OPENAPI_MCP_CC", "tok"),
                ("OPENAPI_MCP_CC_CLIENT_ID", "id"),
                ("OPENAPI_MCP_CC_CLIENT_SECRET", "s"),
                ("OPENAPI_MCP_BASIC", "bob:p:w"),
            ]),
        );
        assert_eq!(c.cred("cc", &s[3].1), Some(Cred::Token("tok")));
        assert_eq!(
            c.cred("basic", &s[2].1),
            Some(Cred::Basic {
                user: "bob",
                pass: "p:w"
            })
        );
    }

    #[test]
    fn set_overrides() {
        let s = schemes();
        let mut c = Credentials::new();
        c.set("basic", "u:p".into());
        c.set("bearerAuth", "t".into());
        assert_eq!(
            c.cred("basic", &s[2].1),
            Some(Cred::Basic {
                user: "u",
                pass: "p"
            })
        );
        assert_eq!(c.cred("bearerAuth", &s[1].1), Some(Cred::Token("t")));
        c.set("basic", "justuser".into());
        assert_eq!(
            c.cred("basic", &s[2].1),
            Some(Cred::Basic {
                user: "justuser",
                pass: ""
            })
        );
    }

    #[test]
    fn selection() {
        let s = schemes();
        let mut c = Credentials::new();
        c.set("bearerAuth", "t".into());
        let sec = vec![vec!["api_key".to_string()], vec!["bearerAuth".to_string()]];
        assert_eq!(select(&sec, &s, &c), Some(&["bearerAuth".to_string()][..]));
        // All schemes of an alternative are needed.
        let sec = vec![vec!["api_key".to_string(), "bearerAuth".to_string()]];
        assert_eq!(select(&sec, &s, &c), None);
        c.set("api_key", "k".into());
        assert_eq!(select(&sec, &s, &c).map(<[String]>::len), Some(2));
        // Optional auth: credentials are sent when configured, none otherwise.
        let sec = vec![vec![], vec!["bearerAuth".to_string()]];
        assert_eq!(select(&sec, &s, &c), Some(&["bearerAuth".to_string()][..]));
        assert_eq!(select(&sec, &s, &Credentials::new()), None);
        // Unknown scheme names (dropped by the converter) are never satisfiable.
        let sec = vec![vec!["nope".to_string()]];
        assert_eq!(select(&sec, &s, &c), None);
        assert_eq!(select(&[], &s, &c), None);
    }

    #[test]
    fn apply_parts() {
        let s = schemes();
        let mut c = Credentials::new();
        c.set("api_key", "k".into());
        c.set("basic", "Aladdin:open sesame".into());
        c.set("qkey", "q v".into());
        c.set("ckey", "cv".into());
        c.set("oidc", "tok".into());
        c.set_client_credentials("cc", "id".into(), "sec".into());
        let alt: Vec<String> = ["api_key", "basic", "qkey", "ckey", "oidc", "cc"]
            .iter()
            .map(|x| x.to_string())
            .collect();
        let p = apply(&alt, &s, &c, |_| None);
        assert_eq!(
            p.headers,
            vec![
                ("X-API-Key".to_string(), "k".to_string()),
                (
                    "Authorization".to_string(),
                    "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==".to_string()
                ),
                ("Authorization".to_string(), "Bearer tok".to_string()),
            ]
        );
        assert_eq!(p.query, vec![("key".to_string(), "q v".to_string())]);
        assert_eq!(p.cookies, vec![("sid".to_string(), "cv".to_string())]);
        assert_eq!(p.needs_token, vec!["cc"]);
        let p = apply(&["cc".to_string()], &s, &c, |n| {
            (n == "cc").then(|| "T".to_string())
        });
        assert_eq!(
            p.headers,
            vec![("Authorization".to_string(), "Bearer T".to_string())]
        );
        assert!(
            c.secret_strings()
                .contains(&"QWxhZGRpbjpvcGVuIHNlc2FtZQ==".to_string())
        );
    }

    /// #23 finding 20: schemes whose names map to one variable share no secret.
    #[test]
    fn schemes_sharing_a_variable_read_none_of_it() {
        let s = vec![
            (
                "ApiKey".to_string(),
                SecurityScheme::ApiKey {
                    name: "X-Key".into(),
                    location: ApiKeyLocation::Header,
                },
            ),
            ("api-key".to_string(), SecurityScheme::Basic),
            ("other".to_string(), SecurityScheme::Bearer),
        ];
        assert_eq!(
            ambiguous_env(&s),
            vec![(
                "OPENAPI_MCP_API_KEY".to_string(),
                vec!["ApiKey".to_string(), "api-key".to_string()]
            )]
        );
        let c = Credentials::from_env(&s, |k| {
            matches!(k, "OPENAPI_MCP_API_KEY" | "OPENAPI_MCP_OTHER").then(|| "v".to_string())
        });
        assert_eq!(
            c.missing(&s),
            vec!["ApiKey".to_string(), "api-key".to_string()]
        );
    }

    /// #36 item 4: a scheme whose variable is the server's own (`--auth-token`'s, the store
    /// key, the confirm key, the OAuth client secrets) reads nothing from the environment.
    #[test]
    fn schemes_never_read_the_servers_own_variables() {
        let s = vec![
            ("auth_token".to_string(), SecurityScheme::Bearer),
            (
                "store-key".to_string(),
                SecurityScheme::ApiKey {
                    name: "X-Key".into(),
                    location: ApiKeyLocation::Header,
                },
            ),
            ("ConfirmKey".to_string(), SecurityScheme::OAuth2Token),
            (
                "oauth".to_string(),
                SecurityScheme::OAuth2ClientCredentials {
                    token_url: "https://a/token".into(),
                    scopes: vec![],
                },
            ),
            (
                "upstream".to_string(),
                SecurityScheme::OAuth2ClientCredentials {
                    token_url: "https://a/token".into(),
                    scopes: vec![],
                },
            ),
            ("data_dir".to_string(), SecurityScheme::Bearer),
            ("fine".to_string(), SecurityScheme::Bearer),
        ];
        // Every variable set, the servers' own and the ordinary one.
        let env = |k: &str| Some(format!("value-of-{k}"));
        let (c, reserved) = Credentials::from_env_as(&s, str::to_string, env);
        assert_eq!(
            c.missing(&s),
            vec![
                "auth_token",
                "store-key",
                "ConfirmKey",
                "oauth",
                "upstream",
                "data_dir"
            ]
        );
        assert_eq!(
            c.cred("fine", &SecurityScheme::Bearer),
            Some(Cred::Token("value-of-OPENAPI_MCP_FINE"))
        );
        let vars: Vec<&str> = reserved.iter().map(|r| r.var.as_str()).collect();
        assert_eq!(
            vars,
            vec![
                "OPENAPI_MCP_AUTH_TOKEN",
                "OPENAPI_MCP_STORE_KEY",
                "OPENAPI_MCP_CONFIRM_KEY",
                "OPENAPI_MCP_OAUTH_CLIENT_SECRET",
                "OPENAPI_MCP_UPSTREAM_CLIENT_SECRET",
                "OPENAPI_MCP_DATA_DIR",
            ]
        );
        // The warning says which variable, what it is, and what to do; never a value.
        let w = reserved[0].to_string();
        assert!(
            w.contains("OPENAPI_MCP_AUTH_TOKEN")
                && w.contains("--auth-token")
                && w.contains("--auth auth_token=VALUE")
                && !w.contains("value-of"),
            "{w}"
        );
        // `from_env` (generated servers, tests) keeps the rule.
        let c = Credentials::from_env(&s, env);
        assert!(!c.has("auth_token", &SecurityScheme::Bearer));
        // --auth still sets such a scheme.
        let mut c = c;
        c.set("auth_token", "explicit".into());
        assert_eq!(
            c.cred("auth_token", &SecurityScheme::Bearer),
            Some(Cred::Token("explicit"))
        );
    }

    /// #36 item 4: every `OPENAPI_MCP_*` variable the runtime's code reads for itself — a
    /// `…_ENV` constant, or a literal passed to `env(…)`, `var(…)` or `var_os(…)` — is in
    /// [`SERVER_ENV`] (the clap options' variables are checked by the CLI's tests).
    #[test]
    fn every_variable_the_runtime_reads_is_reserved() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        let mut found = Vec::new();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            for line in text.lines() {
                for marker in ["_ENV: &str = \"", "env(\"", "var(\"", "var_os(\""] {
                    let Some(at) = line.find(marker) else {
                        continue;
                    };
                    let rest = &line[at + marker.len()..];
                    let lit = &rest[..rest.find('"').unwrap_or(rest.len())];
                    if lit.starts_with("OPENAPI_MCP_") {
                        found.push((f.display().to_string(), lit.to_string()));
                    }
                }
            }
        }
        assert!(
            found.iter().any(|(_, v)| v == "OPENAPI_MCP_STORE_KEY")
                && found.iter().any(|(_, v)| v == "OPENAPI_MCP_DATA_DIR"),
            "the scan finds the server's variables: {found:?}"
        );
        for (file, var) in &found {
            assert!(
                server_env(var).is_some(),
                "{file} reads {var}, which is not in SERVER_ENV"
            );
        }
    }

    /// #36 item 4, several APIs: API `auth`'s scheme `token` would read `OPENAPI_MCP_AUTH_TOKEN`.
    #[test]
    fn an_api_name_and_scheme_never_make_a_servers_variable() {
        let s = vec![("token".to_string(), SecurityScheme::Bearer)];
        let env = |k: &str| Some(format!("value-of-{k}"));
        let (c, reserved) =
            Credentials::from_env_as(&s, |k| crate::server::multi::env_var("auth", k), env);
        assert!(c.is_empty());
        assert_eq!(reserved[0].var, "OPENAPI_MCP_AUTH_TOKEN");
        let (c, reserved) =
            Credentials::from_env_as(&s, |k| crate::server::multi::env_var("pets", k), env);
        assert!(reserved.is_empty());
        assert_eq!(
            c.cred("token", &SecurityScheme::Bearer),
            Some(Cred::Token("value-of-OPENAPI_MCP_PETS_TOKEN"))
        );
    }

    #[test]
    fn secret_strings_include_wire_encodings() {
        let mut c = Credentials::new();
        c.set("qkey", "q v&x;\"".into());
        c.set_client_credentials("cc", "id".into(), "s/+ t".into());
        c.set("hkey", "a\\b\"c".into());
        let s = c.secret_strings();
        for form in [
            "q v&x;\"",
            "q%20v%26x%3B%22", // query
            "q+v%26x%3B%22",   // form body
            "q%20v&x%3B%22",   // cookie
            "s/+ t",
            "s%2F%2B%20t",
            "s%2F%2B+t",
            "s/+%20t",
            "q v&x;\\\"",  // JSON-escaped
            "a\\\\b\\\"c", // JSON-escaped
        ] {
            assert!(s.contains(&form.to_string()), "{form}: {s:?}");
        }
    }

    #[test]
    fn token_cache_and_parsing() {
        let cache = TokenCache::default();
        cache.put("a", "t1".into(), Some(3600));
        assert_eq!(cache.get("a").as_deref(), Some("t1"));
        cache.put("b", "t2".into(), Some(20)); // short-lived: cached for half its 20 s
        assert_eq!(cache.get("b").as_deref(), Some("t2"));
        cache.put("b", "t0".into(), Some(0)); // already expired
        assert_eq!(cache.get("b"), None);
        cache.put("c", "t3".into(), None);
        assert_eq!(cache.get("c").as_deref(), Some("t3"));
        cache.invalidate("a");
        assert_eq!(cache.get("a"), None);

        // The client-credentials form (sent by crate::oauth::token_post).
        let url = url::Url::parse("https://a/token").expect("static URL");
        let body = |params: &[(&str, &str)], id: &str, secret: &str| {
            crate::oauth::token_post::TokenPost {
                url: &url,
                grant_type: "client_credentials",
                params,
                client: crate::oauth::token_post::TokenClient::Post {
                    id,
                    secret: Some(secret),
                },
                user_agent: None,
                max_bytes: 1,
            }
            .body()
        };
        assert_eq!(
            body(&[("scope", "read write:x")], "my id", "s&cret"),
            "grant_type=client_credentials&client_id=my+id&client_secret=s%26cret&scope=read+write%3Ax"
        );
        assert_eq!(
            body(&[], "i", "s"),
            "grant_type=client_credentials&client_id=i&client_secret=s"
        );
        assert_eq!(
            parse_token_response(br#"{"access_token":"x","expires_in":60}"#).ok(),
            Some(("x".into(), Some(60)))
        );
        assert_eq!(
            parse_token_response(br#"{"access_token":"x","expires_in":"60"}"#).ok(),
            Some(("x".into(), Some(60)))
        );
        assert_eq!(
            parse_token_response(br#"{"access_token":"x"}"#).ok(),
            Some(("x".into(), None))
        );
        assert!(parse_token_response(br#"{"error":"invalid_client"}"#).is_err());
        assert!(parse_token_response(b"<html>").is_err());
    }
}
