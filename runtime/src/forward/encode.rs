//! The percent-encoders of the request: path and query values, `allowReserved` values, form
//! bodies, cookies and the literal text of path templates. A leaf module: both the request
//! builder ([`super::request`]) and the credentials ([`super::auth`], which lists the encoded
//! forms of a secret to redact them) use it, so neither imports the other for it.

use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};

/// Everything but RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`).
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// `allowReserved`: reserved characters pass, except the ones OAS 3.0.4 / 3.1.1 still make the
/// application encode: `#`, `[`, `]` (not allowed in a query: `#` would end it and turn the rest
/// into a fragment that is never sent) and `&`, `=`, `+` (form-urlencoded delimiters: a raw `&`
/// would let a value add query parameters of its own). `%` is handled separately: only valid
/// `%XX` triples pass.
const RESERVED_OK: &AsciiSet = &UNRESERVED
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b',')
    .remove(b';');
/// Cookie values: controls, space, `"`, `,`, `;`, `\`, `%` and non-ASCII.
const COOKIE: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b',')
    .add(b';')
    .add(b'\\')
    .add(b'%')
    .add(0x7f);
/// Characters of a path template's literal text that the URL parser would encode anyway.
const TEMPLATE_LITERAL: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// Characters of a path key's literal query text that cannot go on the wire as they are.
const QUERY_LITERAL: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// RFC 3986 unreserved characters pass; everything else is percent-encoded (path and query
/// values, names).
pub(crate) fn enc(s: &str) -> String {
    utf8_percent_encode(s, UNRESERVED).to_string()
}

/// `allowReserved` query values: reserved characters (but the exceptions of `RESERVED_OK`) pass.
pub(crate) fn enc_reserved(s: &str) -> String {
    // Valid percent-encoded triples pass through unchanged; any other `%` is encoded.
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut start = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push_str(&utf8_percent_encode(&s[start..i], RESERVED_OK).to_string());
            let triple = i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit();
            if triple {
                out.push_str(&s[i..i + 3]);
                i += 3;
            } else {
                out.push_str("%25");
                i += 1;
            }
            start = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&utf8_percent_encode(&s[start..], RESERVED_OK).to_string());
    out
}

/// `application/x-www-form-urlencoded` (space = `+`).
pub(crate) fn enc_form(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Cookie values (the `COOKIE` set).
pub(crate) fn enc_cookie(s: &str) -> String {
    utf8_percent_encode(s, COOKIE).to_string()
}

/// The literal text of a path template segment: only what the URL parser would encode anyway.
pub(crate) fn enc_template_literal(s: &str) -> String {
    utf8_percent_encode(s, TEMPLATE_LITERAL).to_string()
}

/// The literal query text written in a path key.
pub(crate) fn enc_query_literal(s: &str) -> String {
    utf8_percent_encode(s, QUERY_LITERAL).to_string()
}
