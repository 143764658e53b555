//! The user's consent to each client (#36): the confused-deputy defence of an authorization
//! server that sends every client's users to a third party with one static client id.
//!
//! Without it, anyone can register a client (or publish a metadata document) with their own
//! redirect URI, send a victim one `/authorize` link, and when the API's authorization server
//! approves silently (the user authorized the proxy's app there before), the victim's browser
//! would carry a code for the victim's API token straight to them. So `/authorize` first shows
//! a page, served by this proxy, naming the client, where it sends the user back and the
//! scopes; only the user's "Approve" sends the browser on to the API's authorization server.
//!
//! - **CSRF**: the page's form carries the request, sealed (AES-GCM with the browser's id as
//!   associated data: it opens for that browser only, and only until it expires) and a token
//!   (an HMAC of the browser's id and that request); the browser's id is in an `HttpOnly`,
//!   `SameSite=Lax` cookie (`__Host-` and `Secure` when the proxy is on https). The `POST` is
//!   refused without the cookie, with another token, or from another `Origin` (or
//!   `Sec-Fetch-Site`).
//! - **Framing**: `X-Frame-Options: DENY` and CSP `frame-ancestors 'none'`.
//! - **Remembered consent**: an approval is remembered in the same cookie, as an HMAC of the
//!   browser id, client id, redirect URI, scopes and resource (16 bytes each, the 32 latest).
//!   A cookie, not the store: nothing a stranger's requests can make the store keep, nothing to
//!   expire server-side, shared by instances with the same key, and bound to the browser (a
//!   value copied to another browser does not match its id). A changed redirect URI or scope
//!   set asks again. Clearing cookies forgets the approvals.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use url::Url;

use super::{Client, OAuthProxy, b64, back_to, page, random_bytes, same_bytes};
use crate::store::now;

/// The most approvals one browser's cookie remembers (the latest).
pub const MAX_REMEMBERED: usize = 32;
/// How long the cookie (the browser's id and its approvals) lives after the last approval.
pub const COOKIE_MAX_AGE: u64 = 90 * 24 * 3600;
/// How long a consent page's form can be sent.
pub const FORM_TTL: u64 = 10 * 60;
/// Where the form is sent.
pub const CONSENT_PATH: &str = "/oauth/consent";

/// A checked authorization request, waiting for the user's consent (sealed into the page's
/// form) or going on to the API's authorization server.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct AuthRequest {
    pub client_id: String,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub code_challenge: String,
    pub resource: String,
    pub scopes: Vec<String>,
    /// When the consent form expires (Unix seconds).
    #[serde(default)]
    pub expires: u64,
}

/// A browser, as its cookie says: its random id and the approvals it remembers.
pub(super) struct Browser {
    pub id: String,
    pub remembered: Vec<String>,
    /// Whether the id was made now (the answer sets the cookie).
    pub new: bool,
}

fn token_chars(s: &str) -> bool {
    s.len() == 22
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl OAuthProxy {
    /// The consent cookie's name: `__Host-` (which browsers accept only `Secure`, for `/`,
    /// without a domain) when the proxy is on https.
    fn cookie_name(&self) -> &'static str {
        if self.cfg.issuer.starts_with("https://") {
            "__Host-openapi-mcp-consent"
        } else {
            "openapi-mcp-consent"
        }
    }

    /// The browser of a request (a new one when it has no valid cookie).
    pub(super) fn browser(&self, headers: &HeaderMap) -> Browser {
        let name = self.cookie_name();
        let value = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.trim_matches('"'));
        if let Some(v) = value {
            let parts: Vec<&str> = v.split('.').collect();
            if parts.len() <= MAX_REMEMBERED + 1 && parts.iter().all(|p| token_chars(p)) {
                return Browser {
                    id: parts[0].to_string(),
                    remembered: parts[1..].iter().map(|s| s.to_string()).collect(),
                    new: false,
                };
            }
        }
        let mut id = [0u8; 16];
        random_bytes(&mut id);
        Browser {
            id: b64(&id),
            remembered: Vec::new(),
            new: true,
        }
    }

    /// The `Set-Cookie` value holding `b`.
    fn cookie(&self, b: &Browser) -> HeaderValue {
        let mut v = format!(
            "{}={}; Path=/; Max-Age={COOKIE_MAX_AGE}; HttpOnly; SameSite=Lax",
            self.cookie_name(),
            std::iter::once(b.id.as_str())
                .chain(b.remembered.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(".")
        );
        if self.cfg.issuer.starts_with("https://") {
            v.push_str("; Secure");
        }
        // Only base64url characters, dots and fixed text.
        HeaderValue::from_str(&v).unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    fn mac(&self, parts: &[&str]) -> String {
        let mut ctx = aws_lc_rs::hmac::Context::with_key(&self.consent_key);
        for p in parts {
            ctx.update(&(p.len() as u64).to_be_bytes());
            ctx.update(p.as_bytes());
        }
        b64(&ctx.sign().as_ref()[..16])
    }

    /// What an approval of `req` by browser `b` is remembered as.
    fn approval(&self, b: &Browser, req: &AuthRequest) -> String {
        let mut scopes = req.scopes.clone();
        scopes.sort();
        scopes.dedup();
        self.mac(&[
            "approval v1",
            &b.id,
            &req.client_id,
            &req.redirect_uri,
            &scopes.join(" "),
            &req.resource,
        ])
    }

    /// Whether browser `b` approved this client, redirect URI, scopes and resource before.
    pub(super) fn approved(&self, b: &Browser, req: &AuthRequest) -> bool {
        let want = self.approval(b, req);
        b.remembered
            .iter()
            .any(|r| same_bytes(r.as_bytes(), want.as_bytes()))
    }

    pub(super) fn csrf(&self, b: &Browser, sealed: &str) -> String {
        self.mac(&["csrf v1", &b.id, sealed])
    }

    /// The consent page for `req` from `client`.
    pub(super) fn consent_page(&self, b: &Browser, req: &AuthRequest, client: &Client) -> Response {
        let mut req = req.clone();
        req.expires = now() + FORM_TTL;
        let plain = serde_json::to_vec(&req).unwrap_or_default();
        let sealed = b64(&self.sealer.seal("consent-request", &b.id, &plain));
        let csrf = self.csrf(b, &sealed);
        let api = self
            .cfg
            .authorization_url
            .host_str()
            .unwrap_or("the API")
            .to_string();
        let back = shown_redirect(&req.redirect_uri);
        let name = match &client.name {
            Some(n) if !n.trim().is_empty() => format!(
                "<b>{}</b> <small>(the name it gave itself: not verified)</small>",
                escape(n)
            ),
            _ => "<b>an application that gave no name</b>".to_string(),
        };
        let scopes = if req.scopes.is_empty() {
            "<dd>no particular scope</dd>".to_string()
        } else {
            req.scopes
                .iter()
                .map(|s| format!("<dd><code>{}</code></dd>", escape(s)))
                .collect()
        };
        let html = format!(
            r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Allow access to {api_e}?</title>
<style>body{{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.4}}dt{{font-weight:600;margin-top:.6rem}}dd{{margin-left:1rem}}code{{word-break:break-all}}.warn{{background:#fff4e5;padding:.6rem;border-left:4px solid #e68a00}}button{{font-size:1rem;padding:.5rem 1.2rem;margin-right:1rem}}</style>
</head><body><main>
<h1>Allow an application to act as you at {api_e}?</h1>
<p>An application asks this MCP server ({issuer_e}) to sign you in at <b>{api_e}</b> and then call that API as you.</p>
<dl>
<dt>Application</dt><dd>{name}</dd>
<dt>Client ID</dt><dd><code>{client_id_e}</code></dd>
<dt>Your answer goes to</dt><dd><b>{back_e}</b><br><code>{redirect_e}</code></dd>
<dt>Access asked for</dt>{scopes}
</dl>
<p class="warn">Approve only if you started this sign-in yourself, in that application. If a link or a message brought you here, deny: approving lets whoever receives the answer at <b>{back_e}</b> use {api_e} as you.</p>
<form method="post" action="{CONSENT_PATH}">
<input type="hidden" name="request" value="{sealed}">
<input type="hidden" name="csrf" value="{csrf}">
<button type="submit" name="decision" value="deny">Deny</button>
<button type="submit" name="decision" value="approve">Approve</button>
</form>
</main></body></html>
"#,
            api_e = escape(&api),
            issuer_e = escape(&self.cfg.issuer),
            client_id_e = escape(&req.client_id),
            back_e = escape(&back),
            redirect_e = escape(&req.redirect_uri),
        );
        let mut resp = (StatusCode::OK, html).into_response();
        let h = resp.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        protect(h);
        if b.new {
            h.insert(header::SET_COOKIE, self.cookie(b));
        }
        resp
    }
}

/// The headers of every consent answer: not cached, not framed, not sniffed, no referrer.
fn protect(h: &mut HeaderMap) {
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

/// Where a redirect URI sends the user, as shown: `https://host[:port]`, or the app scheme
/// with its host.
fn shown_redirect(uri: &str) -> String {
    match Url::parse(uri) {
        Ok(u) => match u.host_str() {
            Some(h) => match u.port() {
                Some(p) => format!("{}://{h}:{p}", u.scheme()),
                None => format!("{}://{h}", u.scheme()),
            },
            None => format!("the application that opens {}: links", u.scheme()),
        },
        Err(_) => uri.to_string(),
    }
}

/// HTML-escapes text for an element or a quoted attribute.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

fn refused(status: StatusCode, text: &str) -> Response {
    let mut resp = page(status, text);
    protect(resp.headers_mut());
    resp
}

fn see_other(to: &str) -> Response {
    let mut resp = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    protect(resp.headers_mut());
    resp
}

/// `POST /oauth/consent`: the user's answer on the consent page.
pub(super) async fn consent(
    State(p): State<Arc<OAuthProxy>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    // A browser's form post comes from this origin: another one (or `null`, a sandboxed frame)
    // is a forged request, whatever it carries.
    if let Some(origin) = headers.get(header::ORIGIN) {
        if origin.to_str().ok() != Some(p.cfg.issuer.as_str()) {
            return refused(
                StatusCode::FORBIDDEN,
                "refused: the consent form was sent from another site",
            );
        }
    } else if let Some(site) = headers.get("sec-fetch-site")
        && !matches!(site.to_str(), Ok("same-origin") | Ok("none"))
    {
        return refused(
            StatusCode::FORBIDDEN,
            "refused: the consent form was sent from another site",
        );
    }
    let form: HashMap<String, String> =
        url::form_urlencoded::parse(&body)
            .into_owned()
            .fold(HashMap::new(), |mut m, (k, v)| {
                m.entry(k).or_insert(v);
                m
            });
    let b = p.browser(&headers);
    let (Some(sealed), Some(csrf)) = (form.get("request"), form.get("csrf")) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "invalid request: this is where the consent page's form is sent",
        );
    };
    if b.new {
        return refused(
            StatusCode::FORBIDDEN,
            "refused: the consent form comes without this browser's cookie (are cookies blocked?); start again from your MCP client",
        );
    }
    if !same_bytes(csrf.as_bytes(), p.csrf(&b, sealed).as_bytes()) {
        return refused(
            StatusCode::FORBIDDEN,
            "refused: the consent form does not belong to this browser; start again from your MCP client",
        );
    }
    let opened = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(sealed.as_bytes())
        .ok()
        .and_then(|s| p.sealer.open("consent-request", &b.id, &s).ok())
        .and_then(|plain| serde_json::from_slice::<AuthRequest>(&plain).ok());
    let Some(req) = opened else {
        return refused(
            StatusCode::BAD_REQUEST,
            "invalid request: the consent form is damaged; start again from your MCP client",
        );
    };
    if req.expires < now() {
        return refused(
            StatusCode::BAD_REQUEST,
            "this consent page expired: start again from your MCP client",
        );
    }
    // The client may have gone, or the operator narrowed the redirect hosts, meanwhile.
    let client = match p.client(&req.client_id).await {
        Ok(Some(c)) => c,
        Ok(None) => {
            return refused(
                StatusCode::BAD_REQUEST,
                "invalid request: this client is no longer registered",
            );
        }
        Err(e) => return super::server_error(e),
    };
    if !client.redirect_uris.contains(&req.redirect_uri) || !p.redirect_allowed(&req.redirect_uri) {
        return refused(
            StatusCode::BAD_REQUEST,
            "invalid request: redirect_uri is not one this client may use",
        );
    }
    match form.get("decision").map(String::as_str) {
        Some("approve") => {
            let mut b = b;
            let mark = p.approval(&b, &req);
            b.remembered.retain(|r| r != &mark);
            b.remembered.insert(0, mark);
            b.remembered.truncate(MAX_REMEMBERED);
            let cookie = p.cookie(&b);
            let mut resp = match p.start_upstream(req).await {
                Ok(to) => see_other(&to),
                Err(resp) => resp,
            };
            resp.headers_mut().insert(header::SET_COOKIE, cookie);
            resp
        }
        Some("deny") => {
            let mut pairs = vec![
                ("error", "access_denied"),
                ("error_description", "the user denied access"),
                ("iss", p.cfg.issuer.as_str()),
            ];
            if let Some(s) = &req.state {
                pairs.push(("state", s));
            }
            see_other(&back_to(&req.redirect_uri, &pairs))
        }
        _ => refused(
            StatusCode::BAD_REQUEST,
            "invalid request: decision must be approve or deny",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>alert("x")</script>&'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"
        );
        assert_eq!(escape("a\u{0}b"), "a\u{fffd}b");
    }

    #[test]
    fn redirects_are_shown_by_where_they_go() {
        assert_eq!(
            shown_redirect("https://evil.example:8443/cb?x=1"),
            "https://evil.example:8443"
        );
        assert_eq!(
            shown_redirect("http://127.0.0.1:5000/cb"),
            "http://127.0.0.1:5000"
        );
        assert_eq!(
            shown_redirect("cursor://anysphere.cursor-retrieval/oauth"),
            "cursor://anysphere.cursor-retrieval"
        );
        assert_eq!(
            shown_redirect("myapp:/cb"),
            "the application that opens myapp: links"
        );
    }
}
