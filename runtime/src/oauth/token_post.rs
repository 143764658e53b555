//! The OAuth token-endpoint POST (RFC 6749 §3.2), written once for every grant this server
//! sends: client credentials (`forward/`: an API's `clientCredentials` flow), token exchange
//! ([`super::exchange`], RFC 8693), and the OAuth proxy's authorization-code and refresh grants
//! at the API's authorization server (the `openapi-mcp-oauth-proxy` crate).
//!
//! One request shape: a form body (`grant_type` first, then the client's credentials when they
//! go in the form, then the grant's own parameters), `Accept: application/json`, the client
//! authenticated by `client_secret_basic` or `client_secret_post`; the answer read up to a cap.
//! What an answer means differs per grant, so each caller maps the status and body itself; the
//! errors here name no URL query, no form value and no secret.

use std::collections::HashMap;

use http::header;
use url::Url;

use super::ClientAuth;

/// How the client authenticates at the token endpoint (RFC 6749 §2.3.1).
#[derive(Clone, Copy, Debug)]
pub enum TokenClient<'a> {
    /// `client_secret_basic`: `Authorization: Basic` with the id and secret.
    Basic(&'a ClientAuth),
    /// `client_secret_post`: `client_id` (and `client_secret`, for a confidential client) in
    /// the form.
    Post {
        id: &'a str,
        secret: Option<&'a str>,
    },
}

/// One token request.
#[derive(Clone, Copy, Debug)]
pub struct TokenPost<'a> {
    pub url: &'a Url,
    pub grant_type: &'a str,
    /// The grant's own parameters (`code`, `refresh_token`, `scope`, `subject_token`, …).
    pub params: &'a [(&'a str, &'a str)],
    pub client: TokenClient<'a>,
    /// `User-Agent`, when the caller sends one.
    pub user_agent: Option<&'a str>,
    /// The most of the answer read (the rest is dropped and [`TokenAnswer::truncated`] set).
    pub max_bytes: usize,
}

/// The token endpoint's answer, as read.
#[derive(Debug)]
pub struct TokenAnswer {
    pub status: http::StatusCode,
    pub content_type: String,
    pub body: Vec<u8>,
    /// The answer was longer than [`TokenPost::max_bytes`].
    pub truncated: bool,
}

/// Why no answer could be had (the `reqwest` errors without their URL).
#[derive(Debug, thiserror::Error)]
pub enum TokenPostError {
    #[error("{0}")]
    Send(#[source] reqwest::Error),
    #[error("{0}")]
    Read(#[source] reqwest::Error),
}

impl TokenPost<'_> {
    /// The form body: `grant_type`, the client's credentials when posted, the parameters.
    pub fn body(&self) -> String {
        let mut ser = url::form_urlencoded::Serializer::new(String::new());
        ser.append_pair("grant_type", self.grant_type);
        if let TokenClient::Post { id, secret } = self.client {
            ser.append_pair("client_id", id);
            if let Some(s) = secret {
                ser.append_pair("client_secret", s);
            }
        }
        for (k, v) in self.params {
            ser.append_pair(k, v);
        }
        ser.finish()
    }

    /// Sends the request with `http` and reads the answer (at most `max_bytes`).
    pub async fn send(&self, http: &reqwest::Client) -> Result<TokenAnswer, TokenPostError> {
        let mut req = http
            .post(self.url.clone())
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json");
        if let TokenClient::Basic(client) = self.client {
            req = req.header(header::AUTHORIZATION, client.basic());
        }
        if let Some(ua) = self.user_agent {
            req = req.header(header::USER_AGENT, ua);
        }
        let mut resp = req
            .body(self.body())
            .send()
            .await
            .map_err(|e| TokenPostError::Send(e.without_url()))?;
        let status = resp.status();
        let content_type = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| TokenPostError::Read(e.without_url()))?
        {
            let room = self.max_bytes - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(TokenAnswer {
            status,
            content_type,
            body,
            truncated,
        })
    }
}

impl TokenAnswer {
    /// The answer's fields as strings: JSON (RFC 6749 §5.1), or the form encoding some servers
    /// (GitHub without `Accept: application/json`) answer with. Arrays of strings are joined
    /// with spaces; other values are left out.
    pub fn fields(&self) -> HashMap<String, String> {
        token_fields(&self.content_type, &self.body)
    }
}

/// [`TokenAnswer::fields`] of a content type and body.
pub fn token_fields(content_type: &str, body: &[u8]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    if let Ok(serde_json::Value::Object(m)) = serde_json::from_slice::<serde_json::Value>(body) {
        for (k, v) in m {
            let s = match v {
                serde_json::Value::String(s) => s,
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Array(a) => a
                    .iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => continue,
            };
            out.insert(k, s);
        }
    } else if content_type.contains("x-www-form-urlencoded") || !body.starts_with(b"{") {
        for (k, v) in url::form_urlencoded::parse(body) {
            out.insert(k.into_owned(), v.into_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post<'a>(
        url: &'a Url,
        client: TokenClient<'a>,
        params: &'a [(&'a str, &'a str)],
    ) -> TokenPost<'a> {
        TokenPost {
            url,
            grant_type: "refresh_token",
            params,
            client,
            user_agent: None,
            max_bytes: 1024,
        }
    }

    #[test]
    fn the_form_has_the_grant_then_the_posted_client_then_the_parameters() {
        let url = Url::parse("https://as.example/token").expect("static URL");
        let params = [("refresh_token", "r t&x")];
        let posted = post(
            &url,
            TokenClient::Post {
                id: "my id",
                secret: Some("s&cret"),
            },
            &params,
        );
        assert_eq!(
            posted.body(),
            "grant_type=refresh_token&client_id=my+id&client_secret=s%26cret&refresh_token=r+t%26x"
        );
        let public = post(
            &url,
            TokenClient::Post {
                id: "i",
                secret: None,
            },
            &params,
        );
        assert_eq!(
            public.body(),
            "grant_type=refresh_token&client_id=i&refresh_token=r+t%26x"
        );
        let auth = ClientAuth::new("i".into(), "s".into());
        let basic = post(&url, TokenClient::Basic(&auth), &params);
        assert_eq!(
            basic.body(),
            "grant_type=refresh_token&refresh_token=r+t%26x"
        );
    }

    #[test]
    fn answers_are_json_or_form_encoded() {
        let f = token_fields(
            "application/json",
            br#"{"access_token":"a","expires_in":60,"scope":["x","y"],"n":null}"#,
        );
        assert_eq!(f.get("access_token").map(String::as_str), Some("a"));
        assert_eq!(f.get("expires_in").map(String::as_str), Some("60"));
        assert_eq!(f.get("scope").map(String::as_str), Some("x y"));
        assert!(!f.contains_key("n"));
        let f = token_fields(
            "application/x-www-form-urlencoded",
            b"access_token=b&scope=repo%2Cuser",
        );
        assert_eq!(f.get("access_token").map(String::as_str), Some("b"));
        assert_eq!(f.get("scope").map(String::as_str), Some("repo,user"));
        assert!(token_fields("text/html", b"{not json").is_empty());
    }
}
