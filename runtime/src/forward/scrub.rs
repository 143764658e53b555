//! Keeping configured secrets out of what the model sees. Every result (error or success, text
//! and `structuredContent`) has each secret replaced by `[redacted]`: APIs echo request headers,
//! put the query key into pagination links, or return the caller's own key. A secret that the
//! `--max-response-bytes` cut splits is redacted too (its first part ends the shown text).

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// What a secret is replaced with.
pub(crate) const REDACTED: &str = "[redacted]";

/// Shorter values are not scrubbed: they would match ordinary text.
const MIN_SECRET_LEN: usize = 4;

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

/// Whether a `--header NAME: VALUE` value is treated as a secret: any header whose name says so
/// (auth, key, token, secret, cookie, session, pass, credential, signature, …), and any other
/// value that looks like a generated secret (at least 16 characters without spaces, of at least
/// three of: lower case, upper case, digits, symbols), except the headers in [`BENIGN_HEADERS`]
/// and version headers (`X-GitHub-Api-Version: 2022-11-28` must not redact dates).
pub(crate) fn is_secret_header(name: &str, value: &str) -> bool {
    let n = name.to_ascii_lowercase();
    if BENIGN_HEADERS.contains(&n.as_str()) || n.ends_with("version") {
        return false;
    }
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
    ];
    if WORDS.iter().any(|w| n.contains(w)) {
        return true;
    }
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
    fn header_values_are_secrets_by_name_or_by_shape() {
        assert!(is_secret_header("X-Credential", "abc"));
        assert!(is_secret_header("X-Signature", "abc"));
        assert!(is_secret_header("X-Pass", "abc"));
        assert!(is_secret_header("X-Tenant", "sk_live_51Habc9XyZ"));
        assert!(!is_secret_header("X-GitHub-Api-Version", "2022-11-28"));
        assert!(!is_secret_header("Accept", "application/vnd.github+json"));
        assert!(!is_secret_header("X-Tenant", "acme"));
        assert!(!is_secret_header("X-Note", "hello world and more text"));
    }
}
