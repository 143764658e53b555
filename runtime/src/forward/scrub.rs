//! Keeping configured secrets out of what the model sees. Every result (error or success, text
//! and `structuredContent`) has each secret replaced by `[redacted]`: APIs echo request headers,
//! put the query key into pagination links, or return the caller's own key. A secret that the
//! `--max-response-bytes` cut splits is redacted too (its first part ends the shown text).
//!
//! What is a secret, value by value (#36), whatever the header or scheme it is sent under:
//! every credential (`--auth`, `OPENAPI_MCP_*` variables, client-credentials tokens, each
//! caller's token or API token sent upstream), and every `--header` value except those of
//! [`BENIGN_HEADERS`] and `*-Version` headers (unless such a value looks generated, see
//! [`looks_generated`]). Each is scrubbed in the forms an API may echo it in: as sent, after
//! its auth scheme word (`Bearer x` → `x`), each cookie of a `Cookie` header, the `user:pass` and
//! password inside `Basic` base64, percent-encoded (query, form, cookie) and JSON-escaped.
//! Values shorter than [`MIN_SECRET_LEN`] characters are not scrubbed (they would match ordinary
//! text: a 3-character secret redacted would garble every word holding it); the server warns
//! about each at start-up ([`short_secrets`]).

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// What a secret is replaced with.
pub(crate) const REDACTED: &str = "[redacted]";

/// Shorter values are not scrubbed: they would match ordinary text.
pub(crate) const MIN_SECRET_LEN: usize = 4;

/// Header names whose values are configuration, never credentials (`--header Accept: …`).
const BENIGN_HEADERS: &[&str] = &[
    "accept",
    "accept-encoding",
    "accept-language",
    "cache-control",
    "content-language",
    "content-type",
    "user-agent",
    "x-request-id",
];

/// Whether a `--header NAME: VALUE` value is treated as a secret: every header's, except the
/// headers in [`BENIGN_HEADERS`] and version headers (`X-GitHub-Api-Version: 2022-11-28` must
/// not redact dates) — unless their value looks generated ([`looks_generated`]). A header's name
/// says nothing reliable: `X-Access`, `X-Tenant-Id` or `X-Partner` carry secrets too.
pub(crate) fn is_secret_header(name: &str, value: &str) -> bool {
    let n = name.to_ascii_lowercase();
    if BENIGN_HEADERS.contains(&n.as_str()) || n.ends_with("version") {
        return looks_generated(value);
    }
    true
}

/// Whether a `--header` in a config file is worth a "literal secret" warning: its name says it
/// holds one (auth, key, token, secret, cookie, session, pass, credential, signature, …) or its
/// value looks generated. Narrower than [`is_secret_header`] (what results redact, where a
/// false positive costs little): a warning about `X-Trace: from-config` would be noise.
#[cfg(feature = "cli")]
pub(crate) fn names_a_secret(name: &str, value: &str) -> bool {
    const WORDS: &[&str] = &[
        "auth",
        "key",
        "token",
        "secret",
        "cookie",
        "session",
        "pass",
        "credential",
        "signature",
        "sig",
        "private",
        "jwt",
        "bearer",
        "access",
    ];
    let n = name.to_ascii_lowercase();
    WORDS.iter().any(|w| n.contains(w)) || looks_generated(value)
}

/// A value that looks like a generated secret: at least 16 characters without spaces, of at
/// least three of lower case, upper case, digits, symbols.
pub(crate) fn looks_generated(value: &str) -> bool {
    let v = value.trim();
    let classes = [
        v.chars().any(|c| c.is_ascii_lowercase()),
        v.chars().any(|c| c.is_ascii_uppercase()),
        v.chars().any(|c| c.is_ascii_digit()),
        v.chars().any(|c| !c.is_ascii_alphanumeric()),
    ];
    v.chars().count() >= 16
        && !v.contains(char::is_whitespace)
        && classes.iter().filter(|c| **c).count() >= 3
}

/// The strings to scrub for a `--header NAME: VALUE` (empty when it is not a secret, see
/// [`is_secret_header`]): the value, the part after an auth scheme word, each cookie value of a
/// `Cookie` header, the decoded `user:pass` of `Basic`, each in its [`value_forms`].
pub(crate) fn header_secrets(name: &str, value: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !is_secret_header(name, value) {
        return out;
    }
    push_forms(&mut out, value);
    if let Some((scheme, rest)) = value.split_once(' ') {
        let rest = rest.trim();
        push_forms(&mut out, rest);
        if scheme.eq_ignore_ascii_case("basic") {
            push_basic(&mut out, rest);
        }
    }
    if name.eq_ignore_ascii_case("cookie") {
        for pair in value.split(';') {
            if let Some((_, v)) = pair.split_once('=') {
                push_forms(&mut out, v.trim());
            }
        }
    }
    out
}

/// The credentials inside `Basic` base64: `user:pass` and the password.
fn push_basic(out: &mut Vec<String>, b64: &str) {
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(b64.trim()) else {
        return;
    };
    let Ok(pair) = String::from_utf8(bytes) else {
        return;
    };
    push_forms(out, &pair);
    if let Some((_, pass)) = pair.split_once(':') {
        push_forms(out, pass);
    }
}

fn push_forms(out: &mut Vec<String>, v: &str) {
    for f in value_forms(v) {
        if !out.contains(&f) {
            out.push(f);
        }
    }
}

/// `v` and the distinct forms it takes on the wire — query (RFC 3986), form body
/// (`application/x-www-form-urlencoded`) and cookie encoding — or in a JSON error body that
/// echoes it (string escaping). A value of unreserved characters only (`A-Z a-z 0-9 - . _ ~`,
/// most tokens) has no other form: nothing is computed for it.
pub(crate) fn value_forms(v: &str) -> Vec<String> {
    use super::encode::{enc, enc_cookie, enc_form};
    let mut out = vec![v.to_string()];
    if v.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
    {
        return out;
    }
    let json = serde_json::to_string(v).unwrap_or_default();
    let json = json
        .strip_prefix('"')
        .and_then(|j| j.strip_suffix('"'))
        .unwrap_or(v)
        .to_string();
    for e in [enc(v), enc_form(v), enc_cookie(v), json] {
        if !out.contains(&e) {
            out.push(e);
        }
    }
    out
}

/// What among `--header` values and the credentials is too short to be scrubbed (see the module
/// docs): a description of each (header name or scheme, never the value), for a start-up
/// warning.
pub(crate) fn short_secrets(
    headers: &[(String, String)],
    creds: &super::Credentials,
) -> Vec<String> {
    let short = |v: &str| !v.is_empty() && v.chars().count() < MIN_SECRET_LEN;
    let mut out: Vec<String> = headers
        .iter()
        .filter(|(k, v)| is_secret_header(k, v))
        .filter(|(_, v)| {
            short(v.trim())
                || v.split_once(' ')
                    .is_some_and(|(_, rest)| short(rest.trim()))
        })
        .map(|(k, _)| format!("--header {k}"))
        .collect();
    out.extend(
        creds
            .short_values(MIN_SECRET_LEN)
            .into_iter()
            .map(|s| format!("the credential of security scheme {s}")),
    );
    out
}

/// The secrets to scrub, longest first (a secret containing another is replaced whole).
pub(crate) fn prepare(mut secrets: Vec<String>) -> Vec<String> {
    secrets.retain(|s| s.len() >= MIN_SECRET_LEN);
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

/// Replaces every secret in the result's text blocks and structured content.
pub(crate) fn scrub(result: &mut CallToolResult, secrets: &[&str]) {
    if secrets.is_empty() {
        return;
    }
    for block in &mut result.content {
        if let ContentBlock::Text(t) = block {
            scrub_text(&mut t.text, secrets);
        }
    }
    if let Some(v) = &mut result.structured_content {
        scrub_value(v, secrets);
    }
}

fn replace_secrets(text: &mut String, secrets: &[&str]) {
    for s in secrets {
        if text.contains(s) {
            *text = text.replace(s, REDACTED);
        }
    }
}

fn scrub_text(text: &mut String, secrets: &[&str]) {
    replace_secrets(text, secrets);
    // A body cut by the response cap: the shown part may end with the start of a secret.
    let Some(note) = text.rfind("\n[response truncated: ") else {
        return;
    };
    let body = &text[..note];
    let cut = secrets.iter().find_map(|s| {
        (MIN_SECRET_LEN..s.len())
            .rev()
            .filter(|k| s.is_char_boundary(*k))
            .find(|k| body.ends_with(&s[..*k]))
    });
    if let Some(k) = cut {
        text.replace_range(note - k..note, REDACTED);
    }
}

fn scrub_value(v: &mut Value, secrets: &[&str]) {
    match v {
        // A cut body is never structured: no truncation note to look for.
        Value::String(s) => replace_secrets(s, secrets),
        Value::Array(a) => a.iter_mut().for_each(|x| scrub_value(x, secrets)),
        Value::Object(m) => m.values_mut().for_each(|x| scrub_value(x, secrets)),
        _ => {}
    }
}

/// Replaces every secret in a parsed body, member names included (before a `_select`
/// expression can move or transform them).
pub(crate) fn scrub_json(v: &mut Value, secrets: &[&str]) {
    match v {
        Value::String(s) => replace_secrets(s, secrets),
        Value::Array(a) => a.iter_mut().for_each(|x| scrub_json(x, secrets)),
        Value::Object(m) => {
            if m.keys().any(|k| secrets.iter().any(|s| k.contains(s))) {
                let old = std::mem::take(m);
                for (mut k, mut x) in old {
                    replace_secrets(&mut k, secrets);
                    scrub_json(&mut x, secrets);
                    m.insert(k, x);
                }
            } else {
                m.values_mut().for_each(|x| scrub_json(x, secrets));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn success_results_text_and_structured_content_are_scrubbed() {
        let mut r = CallToolResult::success(vec![ContentBlock::text(
            r#"{"echo":"KEY-12345","next":"https://api/x?api_key=KEY-12345&page=2"}"#,
        )]);
        r.structured_content =
            Some(json!({"echo": "KEY-12345", "list": [{"h": "Bearer KEY-12345"}]}));
        scrub(&mut r, &["KEY-12345"]);
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("KEY-12345"), "{text}");
        assert_eq!(
            r.structured_content.unwrap()["list"][0]["h"],
            "Bearer [redacted]"
        );
    }

    #[test]
    fn a_secret_split_by_the_response_cap_is_redacted() {
        let mut t =
            "{\"token\":\"SECRET-VAL\n[response truncated: 20 of 99 bytes shown]".to_string();
        scrub_text(&mut t, &["SECRET-VALUE-42"]);
        assert_eq!(
            t,
            "{\"token\":\"[redacted]\n[response truncated: 20 of 99 bytes shown]"
        );
        // Too short a tail to be the secret's start: left alone.
        let mut t = "abc SEC\n[response truncated: 7 of 9 bytes shown]".to_string();
        let before = t.clone();
        scrub_text(&mut t, &["SECRET-VALUE-42"]);
        assert_eq!(t, before);
    }

    #[test]
    fn header_values_are_secrets_whatever_the_name() {
        assert!(is_secret_header("X-Credential", "abc"));
        assert!(is_secret_header("X-Signature", "abc"));
        assert!(is_secret_header("X-Pass", "abc"));
        assert!(is_secret_header("X-Tenant", "sk_live_51Habc9XyZ"));
        // #36 item 12: a name that says nothing still carries a secret.
        assert!(is_secret_header("X-Access", "letmein-please"));
        assert!(is_secret_header("X-Tenant", "acme"));
        assert!(!is_secret_header("X-GitHub-Api-Version", "2022-11-28"));
        assert!(!is_secret_header("Accept", "application/vnd.github+json"));
        assert!(!is_secret_header("User-Agent", "my agent/1.0"));
        // A generated-looking value under a benign name is still a secret.
        assert!(is_secret_header("X-Request-Id", "sk_live_51Habc9XyZ"));
    }

    /// #36 item 12: the forms an upstream may echo a `--header` value in.
    #[test]
    fn header_secrets_cover_scheme_words_basic_cookies_and_encodings() {
        let s = header_secrets("X-Access", "open sesame/42");
        for form in [
            "open sesame/42",
            "sesame/42",
            "open%20sesame%2F42",
            "open+sesame%2F42",
        ] {
            assert!(s.contains(&form.to_string()), "{form}: {s:?}");
        }
        // Basic: the base64, and what it holds.
        let b64 = base64::engine::general_purpose::STANDARD.encode("alice:pa ss");
        let s = header_secrets("Authorization", &format!("Basic {b64}"));
        for form in [b64.as_str(), "alice:pa ss", "pa ss", "pa%20ss"] {
            assert!(s.contains(&form.to_string()), "{form}: {s:?}");
        }
        let s = header_secrets("Cookie", "sid=abc123XYZ; theme=dark");
        assert!(s.contains(&"abc123XYZ".to_string()), "{s:?}");
        assert!(header_secrets("Accept", "application/json").is_empty());
        // A plain token has one form, computed without encoding it.
        assert_eq!(
            value_forms("tok-EN_1.2~x"),
            vec!["tok-EN_1.2~x".to_string()]
        );
    }

    #[test]
    fn short_values_are_named_for_a_warning_never_shown() {
        let mut c = super::super::Credentials::new();
        c.set("k", "ab".into());
        c.set("long", "abcdef".into());
        let w = short_secrets(
            &[
                ("X-Pin".into(), "123".into()),
                ("Authorization".into(), "Bearer xy".into()),
                ("Accept".into(), "*/*".into()),
                ("X-Ok".into(), "abcd".into()),
            ],
            &c,
        );
        assert_eq!(
            w,
            vec![
                "--header X-Pin",
                "--header Authorization",
                "the credential of security scheme k"
            ]
        );
    }
}
