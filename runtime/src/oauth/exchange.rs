//! `--upstream-auth token-exchange` (RFC 8693): each caller's validated access token for this
//! server is exchanged at the issuer's token endpoint (from its RFC 8414 / OpenID metadata) for
//! an access token whose audience is the API: `resource` = the API's base-URL origin, or
//! `--token-exchange-audience` (sent as `resource` when it is an absolute URI, else as
//! `audience`). This server authenticates with its own client (`--oauth-client-id`,
//! `client_secret_basic`). The exchanged token is sent for the operation's oauth2 and http bearer
//! schemes (other schemes keep their static credentials); the caller's own token never goes to
//! the API.
//!
//! Exchanged tokens are cached per caller, keyed by the SHA-256 of the caller's token (never
//! the token), until [`EXPIRY_MARGIN`] before they expire and never past the caller's token's own
//! `exp`; a 401 from the API drops the caller's entry (the next attempt exchanges again). One
//! exchange at a time per caller token; at most [`CACHE_MAX`] callers are held.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openapi_mcp_toolset::model::SecurityScheme;
use serde::Deserialize;

use super::caller::{Caller, CallerCredentialError, CallerCredentials, CredentialFuture};
use super::{ClientAuth, issuer_metadata_urls, unix_now};

/// RFC 8693 §2.1 `grant_type`.
pub const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// RFC 8693 §3: an OAuth 2.0 access token.
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";
/// Callers whose exchanged tokens are held at most.
pub const CACHE_MAX: usize = 10_000;
/// An exchanged token is exchanged anew this long before it expires.
pub const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
/// How long an exchanged token without `expires_in`, for a caller token without `exp`, is used.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);
/// Cap on the token endpoint's answer.
const ANSWER_MAX: usize = 64 * 1024;

/// What `--upstream-auth token-exchange` needs.
#[derive(Clone, Debug)]
pub struct ExchangeOptions {
    /// The issuer of the callers' tokens, whose token endpoint does the exchange.
    pub issuer: String,
    /// `--oauth-client-id` and its secret.
    pub client: ClientAuth,
    /// The API's identifier asked for (`resource` if an absolute URI, else `audience`).
    pub audience: String,
    /// The token endpoint, when not from the issuer's metadata (tests).
    pub token_endpoint: Option<String>,
}

type Slot = Arc<tokio::sync::Mutex<Option<(String, Instant)>>>;

/// The token-exchange provider of per-caller credentials.
pub struct TokenExchange {
    opts: ExchangeOptions,
    http: reqwest::Client,
    /// The oauth2 and http bearer schemes of the API: the exchanged token is for them.
    schemes: Vec<String>,
    endpoint: tokio::sync::OnceCell<String>,
    cache: Mutex<HashMap<[u8; 32], Slot>>,
}

impl std::fmt::Debug for TokenExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenExchange")
            .field("opts", &self.opts)
            .field("schemes", &self.schemes)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Issued {
    access_token: String,
    expires_in: Option<f64>,
    token_type: Option<String>,
}

#[derive(Deserialize)]
struct Refusal {
    error: Option<String>,
    error_description: Option<String>,
}

impl TokenExchange {
    /// For the API's `schemes`: the exchanged token fills its oauth2 and http bearer schemes.
    pub fn new(opts: ExchangeOptions, schemes: &[(String, SecurityScheme)]) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        let endpoint = tokio::sync::OnceCell::new();
        if let Some(e) = &opts.token_endpoint {
            let _ = endpoint.set(e.clone());
        }
        TokenExchange {
            http,
            schemes: schemes
                .iter()
                .filter(|(_, s)| {
                    matches!(
                        s,
                        SecurityScheme::Bearer
                            | SecurityScheme::OAuth2Token
                            | SecurityScheme::OAuth2AuthorizationCode { .. }
                            | SecurityScheme::OAuth2ClientCredentials { .. }
                    )
                })
                .map(|(n, _)| n.clone())
                .collect(),
            opts,
            endpoint,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The schemes the exchanged token is sent for.
    pub fn schemes(&self) -> &[String] {
        &self.schemes
    }

    /// The caller's exchanged token: the cached one, else a new exchange.
    async fn token_for(&self, caller: &Caller) -> Result<String, CallerCredentialError> {
        let slot = self.slot(caller.token_digest());
        let mut held = slot.lock().await;
        if let Some((token, until)) = held.as_ref()
            && Instant::now() < *until
        {
            return Ok(token.clone());
        }
        *held = None;
        let (token, expires_in) = self.exchange(caller).await?;
        let mut life = expires_in
            .map(|s| s.saturating_sub(EXPIRY_MARGIN.min(s / 2)))
            .unwrap_or(DEFAULT_LIFETIME);
        if let Some(exp) = caller.expires_at {
            life = life.min(Duration::from_secs(exp.saturating_sub(unix_now())));
        }
        if !life.is_zero() {
            *held = Some((token.clone(), Instant::now() + life));
        }
        Ok(token)
    }

    fn slot(&self, key: &[u8; 32]) -> Slot {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = cache.get(key) {
            return Arc::clone(s);
        }
        if cache.len() >= CACHE_MAX {
            let now = Instant::now();
            // Keep the entries in use and the live ones.
            cache.retain(|_, s| match s.try_lock() {
                Ok(v) => v.as_ref().is_some_and(|(_, until)| *until > now),
                Err(_) => true,
            });
            if cache.len() >= CACHE_MAX {
                cache.retain(|_, s| s.try_lock().is_err());
            }
        }
        Arc::clone(cache.entry(*key).or_default())
    }

    /// Number of callers held (tests).
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    async fn token_endpoint(&self) -> Result<&String, CallerCredentialError> {
        self.endpoint
            .get_or_try_init(|| async {
                #[derive(Deserialize)]
                struct Meta {
                    issuer: Option<String>,
                    token_endpoint: Option<String>,
                }
                for url in issuer_metadata_urls(&self.opts.issuer) {
                    let Ok(resp) = self.http.get(&url).send().await else {
                        continue;
                    };
                    if !resp.status().is_success() {
                        continue;
                    }
                    let Ok(body) = resp.bytes().await else {
                        continue;
                    };
                    let Ok(m) = serde_json::from_slice::<Meta>(&body) else {
                        continue;
                    };
                    if m.issuer.as_deref().is_some_and(|i| i != self.opts.issuer) {
                        continue;
                    }
                    if let Some(t) = m.token_endpoint {
                        return Ok(t);
                    }
                }
                tracing::warn!(
                    "no token_endpoint in the metadata of {} (RFC 8414 or OpenID): token exchange cannot work",
                    self.opts.issuer
                );
                Err(CallerCredentialError::new(
                    "the authorization server's token endpoint cannot be found now, so no token for the API could be had; try again later (the server's log says more)",
                ))
            })
            .await
    }

    /// One RFC 8693 exchange: the issued token and its lifetime.
    async fn exchange(
        &self,
        caller: &Caller,
    ) -> Result<(String, Option<Duration>), CallerCredentialError> {
        let endpoint = self.token_endpoint().await?;
        let audience = &self.opts.audience;
        let target = if url::Url::parse(audience).is_ok() {
            "resource"
        } else {
            "audience"
        };
        let params = [
            ("subject_token", caller.token().expose()),
            ("subject_token_type", ACCESS_TOKEN_TYPE),
            ("requested_token_type", ACCESS_TOKEN_TYPE),
            (target, audience.as_str()),
        ];
        let url = url::Url::parse(endpoint).map_err(|e| {
            tracing::warn!("token exchange at {endpoint}: {e}");
            CallerCredentialError::new(
                "the authorization server could not be reached to exchange your token for one for the API; try again later",
            )
        })?;
        let post = super::token_post::TokenPost {
            url: &url,
            grant_type: GRANT_TYPE,
            params: &params,
            client: super::token_post::TokenClient::Basic(&self.opts.client),
            user_agent: None,
            max_bytes: ANSWER_MAX,
        };
        let answer = match post.send(&self.http).await {
            Ok(a) if !a.truncated => a,
            Err(super::token_post::TokenPostError::Send(e)) => {
                tracing::warn!("token exchange at {endpoint}: {e}");
                return Err(CallerCredentialError::new(
                    "the authorization server could not be reached to exchange your token for one for the API; try again later",
                ));
            }
            _ => {
                tracing::warn!("token exchange at {endpoint}: the answer could not be read");
                return Err(CallerCredentialError::new(
                    "the authorization server's answer to the token exchange could not be read; try again later",
                ));
            }
        };
        let (status, buf) = (answer.status, answer.body);
        if !status.is_success() {
            let refusal: Refusal = serde_json::from_slice(&buf).unwrap_or(Refusal {
                error: None,
                error_description: None,
            });
            let code = refusal.error.unwrap_or_default();
            // What the authorization server said, without anything of the tokens or secret.
            let mut said: String = refusal
                .error_description
                .unwrap_or_default()
                .chars()
                .take(200)
                .collect();
            for secret in [caller.token().expose(), self.opts.client.secret()] {
                if !secret.is_empty() {
                    said = said.replace(secret, "[redacted]");
                }
            }
            let said = if said.is_empty() {
                String::new()
            } else {
                format!(": {said}")
            };
            tracing::warn!(
                subject = %caller.subject,
                "token exchange at {endpoint}: HTTP {status} {code}{said}"
            );
            let message = match (status.as_u16(), code.as_str()) {
                (400, "invalid_grant") | (400, "invalid_token") => format!(
                    "the authorization server would not exchange your token for one for the API (invalid_grant{said}): authorize again (sign in anew), then retry"
                ),
                (401, _) | (_, "invalid_client") | (_, "unauthorized_client") => format!(
                    "the authorization server refused this server's own client for token exchange (HTTP {status} {code}{said}): the operator must check --oauth-client-id and its secret"
                ),
                _ => format!(
                    "the authorization server refused the token exchange for the API (HTTP {status} {code}{said})"
                ),
            };
            return Err(CallerCredentialError::new(message));
        }
        let issued: Issued = serde_json::from_slice(&buf).map_err(|e| {
            tracing::warn!("token exchange at {endpoint}: not a token response: {e}");
            CallerCredentialError::new(
                "the authorization server's answer to the token exchange has no access token; try again later",
            )
        })?;
        if issued.access_token.is_empty()
            || issued.access_token == caller.token().expose()
            || issued
                .token_type
                .as_deref()
                .is_some_and(|t| !t.eq_ignore_ascii_case("bearer") && t != "N_A")
        {
            return Err(CallerCredentialError::new(
                "the authorization server's answer to the token exchange is not a bearer token for the API; nothing was sent",
            ));
        }
        let life = issued
            .expires_in
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64);
        Ok((issued.access_token, life))
    }
}

impl CallerCredentials for TokenExchange {
    fn credential<'a>(&'a self, caller: &'a Caller, scheme: &'a str) -> CredentialFuture<'a> {
        Box::pin(async move {
            if !self.schemes.iter().any(|s| s == scheme) {
                return Ok(None);
            }
            self.token_for(caller).await.map(Some)
        })
    }

    fn rejected(&self, caller: &Caller, _scheme: &str) {
        let slot = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            cache.get(caller.token_digest()).cloned()
        };
        if let Some(slot) = slot
            && let Ok(mut held) = slot.try_lock()
        {
            *held = None;
        }
    }
}
