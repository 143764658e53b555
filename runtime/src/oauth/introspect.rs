//! Opaque tokens (`--oauth-introspection-url`): each token is shown to the authorization
//! server's RFC 7662 introspection endpoint, this server authenticating with its own client
//! credentials (`--oauth-client-id`, the secret from [`super::CLIENT_SECRET_ENV`];
//! `client_secret_basic`). The answer must say `active: true`; then `exp` and `nbf` (with
//! [`LEEWAY_SECS`] of clock skew), `iss` (when given), `aud` (required: the token must be for this
//! server, RFC 8707) and the scopes are checked as for a JWT.
//!
//! Answers are cached, keyed by the token's SHA-256 (never the token), for at most
//! [`CACHE_TTL`] and never past the token's `exp`: a token revoked at the authorization server
//! stops working here within that time. Refusals are cached too (a refused token is asked about
//! once per TTL however often it is sent), except "not valid yet" and an unreachable
//! authorization server. The cache holds at most [`CACHE_MAX`] tokens.

use std::time::{Duration, Instant};

use serde::Deserialize;

pub use super::{CACHE_MAX, CACHE_TTL};
use super::{
    Claims, ClientAuth, LEEWAY_SECS, OAuthOptions, TokenError, Validated, scope_list, unix_now,
};
/// Cap on an introspection answer.
const ANSWER_MAX: usize = 64 * 1024;

/// `--oauth-introspection-url` and how to authenticate there.
#[derive(Clone, Debug)]
pub struct Introspection {
    pub url: String,
    pub client: ClientAuth,
    /// How long an answer is used ([`CACHE_TTL`] unless a test says otherwise).
    pub ttl: Duration,
}

/// The introspection client with its cache.
pub(crate) struct Introspector {
    cfg: Introspection,
    cache: Validated,
}

/// An RFC 7662 §2.2 answer (the members this server uses).
#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    active: bool,
    scope: Option<String>,
    sub: Option<String>,
    exp: Option<f64>,
    nbf: Option<f64>,
    iss: Option<String>,
    aud: Option<Audience>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Introspector {
    pub(crate) fn new(cfg: Introspection) -> Self {
        Introspector {
            cfg,
            cache: Validated::default(),
        }
    }

    pub(crate) async fn validate(
        &self,
        http: &reqwest::Client,
        opts: &OAuthOptions,
        token: &str,
    ) -> Result<Claims, TokenError> {
        let key = super::token_digest(token);
        if let Some(hit) = self.cache.get(&key) {
            return hit;
        }
        let answer = self.ask(http, token).await?;
        let now = unix_now();
        let result = check(&answer, opts, now);
        let keep = match &result {
            Err(TokenError::NotYetValid) => None,
            _ => {
                // Never past the token's own expiry.
                let left = answer
                    .exp
                    .map(|e| Duration::from_secs((e.max(0.0) as u64).saturating_sub(now)));
                Some(left.map_or(self.cfg.ttl, |l| l.min(self.cfg.ttl)))
            }
        };
        if let Some(keep) = keep.filter(|k| !k.is_zero()) {
            self.cache.put(key, Instant::now() + keep, result.clone());
        }
        result
    }

    /// The cache's keys (tests: they are digests, not tokens).
    #[cfg(test)]
    pub(crate) fn held_keys(&self) -> Vec<[u8; 32]> {
        self.cache.keys()
    }

    /// Asks the introspection endpoint about `token`.
    async fn ask(&self, http: &reqwest::Client, token: &str) -> Result<Answer, TokenError> {
        let url = &self.cfg.url;
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let unavailable = |why: String| {
            tracing::warn!("token introspection at {url}: {why}");
            TokenError::IntrospectionUnavailable
        };
        let mut resp = http
            .post(url)
            .header(http::header::AUTHORIZATION, self.cfg.client.basic())
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| unavailable(e.without_url().to_string()))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(unavailable(format!(
                "HTTP {status}{}",
                if status == http::StatusCode::UNAUTHORIZED {
                    " (check --oauth-client-id and its secret)"
                } else {
                    ""
                }
            )));
        }
        let mut buf = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| unavailable(e.without_url().to_string()))?
        {
            if buf.len() + chunk.len() > ANSWER_MAX {
                return Err(unavailable(format!("an answer over {ANSWER_MAX} bytes")));
            }
            buf.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&buf)
            .map_err(|e| unavailable(format!("not an RFC 7662 answer: {e}")))
    }
}

/// What an answer says of the token, checked as a JWT's claims are.
fn check(a: &Answer, opts: &OAuthOptions, now: u64) -> Result<Claims, TokenError> {
    if !a.active {
        return Err(TokenError::Inactive);
    }
    let secs = |v: f64| v.max(0.0) as u64;
    if let Some(exp) = a.exp
        && secs(exp).saturating_add(LEEWAY_SECS) < now
    {
        return Err(TokenError::Expired);
    }
    if let Some(nbf) = a.nbf
        && secs(nbf) > now.saturating_add(LEEWAY_SECS)
    {
        return Err(TokenError::NotYetValid);
    }
    if let Some(iss) = &a.iss
        && *iss != opts.issuer
    {
        return Err(TokenError::Issuer);
    }
    let for_us = match &a.aud {
        None => return Err(TokenError::MissingClaim),
        Some(Audience::One(a)) => *a == opts.audience,
        Some(Audience::Many(l)) => l.contains(&opts.audience),
    };
    if !for_us {
        return Err(TokenError::Audience);
    }
    Ok(Claims {
        subject: a.sub.clone(),
        scopes: scope_list(a.scope.as_deref()),
        hide_unauthorized_tools: opts.hide_unauthorized_tools,
        expires_at: a.exp.map(secs),
    })
}
