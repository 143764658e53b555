//! URLs as they may be printed (#36): user info dropped and query values hidden, the one masking
//! of the start-up line, `config --print` and errors. A leaf: `serve` and `config` both use it.

/// A URL given as text (an option's value: the spec URL, `--base-url`, `--oauth-store`, …) as
/// it may be printed: [`shown_url`] when it parses; when it does not, the same done on the text
/// (user info dropped, query values hidden). Text that is no URL (no `://`, no `?`) is
/// unchanged. The one masking of the start-up line, `config --print` and errors (#36).
pub fn shown_url_text(value: &str) -> String {
    if let Ok(u) = url::Url::parse(value)
        && u.has_host()
    {
        // Nothing to hide: the value as given (not normalized, `https://a.example` stays).
        if u.username().is_empty() && u.password().is_none() && u.query().is_none() {
            return value.to_string();
        }
        return shown_url(&u);
    }
    let scheme_end = value.find("://").map(|i| i + 3);
    if scheme_end.is_none() && !value.contains('?') {
        return value.to_string();
    }
    let (head, query) = match value.find('?') {
        Some(i) => (&value[..i], Some(&value[i + 1..])),
        None => (value, None),
    };
    let mut out = match scheme_end {
        Some(start) => {
            let authority_end = head[start..].find('/').map_or(head.len(), |i| start + i);
            match head[..authority_end].rfind('@') {
                Some(at) if at >= start => format!("{}{}", &head[..start], &head[at + 1..]),
                _ => head.to_string(),
            }
        }
        None => head.to_string(),
    };
    if let Some(q) = query {
        out.push('?');
        out.push_str(&mask_query(q));
    }
    out
}

/// `k=v&…` with every value `***`.
fn mask_query(q: &str) -> String {
    q.split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) => format!("{k}=***"),
            None => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// A URL as it may be printed: without user info and with query values hidden (a base URL can
/// carry `user:password@` or `?key=SECRET`).
pub fn shown_url(url: &url::Url) -> String {
    let mut u = url.clone();
    if !u.username().is_empty() || u.password().is_some() {
        let _ = u.set_username("");
        let _ = u.set_password(None);
    }
    if let Some(q) = u.query().filter(|q| !q.is_empty()) {
        let hidden = mask_query(q);
        u.set_query(Some(&hidden));
    }
    u.to_string()
}
