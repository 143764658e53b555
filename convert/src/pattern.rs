//! `pattern` keywords every client can compile.
//!
//! JSON Schema patterns are ECMA-262 regular expressions, and the clients that compile them do so
//! in Unicode mode: the TypeScript MCP SDK compiles every tool's `outputSchema` with Ajv (flag `u`)
//! when it receives `tools/list`, and one pattern it cannot compile makes the whole list fail.
//! Specs are written by people used to other engines: Java's `\p{Print}`, `\p{XDigit}` or
//! `[a&&[^b]]`, needless escapes such as `\@` or `\_`, ranges from a class escape (`[\w-.]`),
//! all of which Unicode mode refuses.
//!
//! [`portable`] checks a pattern with `regress` (an ECMA-262 engine) in Unicode mode and, when
//! it fails, applies only rewrites that every engine agrees on (an escaped punctuation character
//! is that character; a `-` next to a class escape is a literal `-`; POSIX names such as
//! `\p{Alpha}` are their ASCII sets; `\p{Han}` is the script `\p{Script=Han}`). A pattern that
//! still does not compile is reported so the caller can leave it out.

/// Characters that keep their backslash in Unicode mode outside a character class.
const SYNTAX: &[char] = &[
    '^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/',
];

/// The pattern as clients in Unicode mode accept it: `Ok(None)` when it already compiles,
/// `Ok(Some(rewritten))` when the rewrites above make it compile, `Err(the engine's error for
/// the pattern as written)` otherwise.
pub fn portable(pattern: &str) -> Result<Option<String>, regress::Error> {
    let first = match compiles(pattern) {
        Ok(()) => return Ok(None),
        Err(e) => e,
    };
    // A leading `(?i)` (Java, Python, PCRE) has no inline form in ECMA-262: spell the letters
    // in both cases instead.
    let (pattern, rewritten) = match pattern.strip_prefix("(?i)").and_then(case_insensitive) {
        Some(ci) => (ci, true),
        None => (pattern.to_string(), false),
    };
    if rewritten && compiles(&pattern).is_ok() {
        return Ok(Some(pattern));
    }
    match rewrite(&pattern) {
        Some(r) if (rewritten || r != pattern) && compiles(&r).is_ok() => Ok(Some(r)),
        _ => Err(first),
    }
}

/// `pattern` matching ASCII letters in either case: `a` becomes `[aA]`, a class's `a-f` gains
/// `A-F`. `None` for shapes this cannot rewrite faithfully (named groups and backreferences,
/// whose names are letters too).
fn case_insensitive(pattern: &str) -> Option<String> {
    if pattern.contains("(?<") || pattern.contains("\\k<") {
        return None;
    }
    let toks = tokens(pattern);
    let letter = |t: &str| {
        let mut c = t.chars();
        match (c.next(), c.next()) {
            (Some(ch), None) if ch.is_ascii_alphabetic() => Some(ch),
            _ => None,
        }
    };
    let flip = |c: char| {
        if c.is_ascii_lowercase() {
            c.to_ascii_uppercase()
        } else {
            c.to_ascii_lowercase()
        }
    };
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut in_class = false;
    let mut i = 0;
    while i < toks.len() {
        let tok = toks[i].as_str();
        match (in_class, tok) {
            (false, "[") => in_class = true,
            (true, "]") => in_class = false,
            _ => {}
        }
        match letter(tok) {
            Some(a) if in_class => {
                // A range of letters of one case: add the same range in the other case.
                if let (Some("-"), Some(b)) = (
                    toks.get(i + 1).map(String::as_str),
                    toks.get(i + 2).and_then(|t| letter(t)),
                ) && a.is_ascii_lowercase() == b.is_ascii_lowercase()
                {
                    out.extend([a, '-', b, flip(a), '-', flip(b)]);
                    i += 3;
                    continue;
                }
                out.extend([a, flip(a)]);
            }
            Some(a) => out.extend(['[', a, flip(a), ']']),
            None => out.push_str(tok),
        }
        i += 1;
    }
    Some(out)
}

fn compiles(pattern: &str) -> Result<(), regress::Error> {
    regress::Regex::with_flags(pattern, "u").map(drop)
}

/// ASCII sets of the POSIX / Java property names, as the inside of a character class.
fn posix_set(name: &str) -> Option<&'static str> {
    Some(match name {
        "Lower" => "a-z",
        "Upper" => "A-Z",
        "Alpha" => "a-zA-Z",
        "Digit" => "0-9",
        "Alnum" => "a-zA-Z0-9",
        "XDigit" => "0-9a-fA-F",
        "Punct" => r"!-\/:-@\[-`{-~",
        "Graph" => "!-~",
        "Print" => " -~",
        "Blank" => r" \t",
        "Cntrl" => r"\x00-\x1F\x7F",
        "Space" => r" \t\n\x0B\f\r",
        "all" => r"\s\S",
        _ => return None,
    })
}

/// A property name Unicode mode accepts for a Java-style `\p{IsX}` / `\p{X}`, if any.
fn unicode_property(name: &str) -> Option<String> {
    let bare = name.strip_prefix("Is").unwrap_or(name);
    [bare.to_string(), format!("Script={bare}")]
        .into_iter()
        .find(|n| compiles(&format!(r"\p{{{n}}}")).is_ok())
}

/// Is `tokens[i]` an escape that stands for a set of characters (`\w`, `\p{L}`, ...)?
fn is_class_escape(tok: &str) -> bool {
    let mut c = tok.chars();
    c.next() == Some('\\')
        && matches!(
            c.next(),
            Some('w' | 'W' | 'd' | 'D' | 's' | 'S' | 'p' | 'P')
        )
}

/// Splits a pattern into atoms: one character, or one escape (`\x`, `\p{..}`, `\u{..}`).
fn tokens(pattern: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\\' && i + 1 < chars.len() {
            let mut end = i + 2;
            if matches!(chars[i + 1], 'p' | 'P' | 'u' | 'x')
                && chars.get(i + 2) == Some(&'{')
                && let Some(close) = chars[i + 2..].iter().position(|&c| c == '}')
            {
                end = i + 2 + close + 1;
            }
            out.push(chars[i..end].iter().collect());
            i = end;
        } else {
            out.push(chars[i].to_string());
            i += 1;
        }
    }
    out
}

fn rewrite(pattern: &str) -> Option<String> {
    let toks = tokens(pattern);
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut in_class = false;
    let mut class_start = false;
    for (i, tok) in toks.iter().enumerate() {
        let at_class_start = std::mem::take(&mut class_start);
        if !in_class && tok == "[" {
            in_class = true;
            class_start = true;
            out.push('[');
            continue;
        }
        if in_class && tok == "^" && at_class_start {
            out.push('^');
            class_start = true;
            continue;
        }
        if in_class && tok == "]" {
            in_class = false;
            out.push(']');
            continue;
        }
        if in_class && tok == "[" {
            // Java's nested classes and `&&` intersections have no Unicode-mode equivalent.
            return None;
        }
        if in_class && tok == "-" {
            let prev = i.checked_sub(1).map(|p| toks[p].as_str());
            let next = toks.get(i + 1).map(String::as_str);
            if prev.is_some_and(is_class_escape) || next.is_some_and(is_class_escape) {
                out.push_str(r"\-");
                continue;
            }
            out.push('-');
            continue;
        }
        let mut c = tok.chars();
        if c.next() != Some('\\') {
            out.push_str(tok);
            continue;
        }
        let Some(e) = c.next() else {
            out.push_str(tok);
            continue;
        };
        if matches!(e, 'p' | 'P') {
            let name = tok.get(3..tok.len().saturating_sub(1))?;
            if let Some(set) = posix_set(name) {
                match (e, in_class) {
                    ('p', true) => out.push_str(set),
                    ('p', false) => {
                        out.push('[');
                        out.push_str(set);
                        out.push(']');
                    }
                    ('P', false) => {
                        out.push_str("[^");
                        out.push_str(set);
                        out.push(']');
                    }
                    _ => return None,
                }
            } else {
                let n = unicode_property(name)?;
                out.push('\\');
                out.push(e);
                out.push('{');
                out.push_str(&n);
                out.push('}');
            }
            continue;
        }
        // An escaped punctuation character is that character in every engine; letters and
        // digits are escapes whose meaning differs between engines, so they stay as written.
        let needless = !e.is_alphanumeric()
            && !SYNTAX.contains(&e)
            && (!in_class || e != '-')
            && tok.chars().count() == 2;
        if needless {
            out.push(e);
        } else {
            out.push_str(tok);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::portable;

    #[test]
    fn leading_case_insensitive_flags_become_both_cases() {
        // #23 part 2: `(?i)` is not ECMA-262; it used to drop the pattern.
        let p = portable("(?i)^(pay|details)$").unwrap().unwrap();
        assert_eq!(p, "^([pP][aA][yY]|[dD][eE][tT][aA][iI][lL][sS])$");
        let re = regress::Regex::with_flags(&p, "u").unwrap();
        assert!(re.find("PAY").is_some() && re.find("Details").is_some());
        assert!(re.find("payx").is_none());
        assert_eq!(
            portable("(?i)[a-f0-9]{2}").unwrap().as_deref(),
            Some("[a-fA-F0-9]{2}")
        );
        // Named groups have letters that are not matched text: not rewritten.
        assert!(portable("(?i)(?<x>a)\\k<x>").is_err());
    }

    #[test]
    fn valid_patterns_are_kept_as_written() {
        for p in [
            r"^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$",
            r"^\d{3}-\d{4}$",
            r"^[\w\-\.]+$",
            r"^(?!aws:).*",
            r"\P{C}*",
            r"^\/path$",
        ] {
            assert_eq!(portable(p), Ok(None), "{p}");
        }
    }

    #[test]
    fn other_engines_syntax_is_rewritten_to_the_same_meaning() {
        let cases = [
            (r"^[\w-.+]+@[\w-.+]+$", r"^[\w\-.+]+@[\w\-.+]+$"),
            (r"^[a-zA-Z0-9\s-_()\[\]]+$", r"^[a-zA-Z0-9\s\-_()\[\]]+$"),
            (r"^a\@b\:c$", r"^a@b:c$"),
            (r"^[a-z\_]+$", r"^[a-z_]+$"),
            (r"\p{Print}+", r"[ -~]+"),
            (
                r"\p{XDigit}{8}-\p{XDigit}{4}",
                r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}",
            ),
            (r"^[\p{Digit}a-f]+$", r"^[0-9a-f]+$"),
            (r"\P{Digit}", r"[^0-9]"),
            (
                r"^[A-Za-z \p{Han}\p{Katakana}-]*$",
                r"^[A-Za-z \p{Script=Han}\p{Script=Katakana}\-]*$",
            ),
            (r"\p{IsAlphabetic}+", r"\p{Alphabetic}+"),
            (r"[\p{all}]*", r"[\s\S]*"),
        ];
        for (from, to) in cases {
            assert_eq!(portable(from), Ok(Some(to.to_string())), "{from}");
            let re = regress::Regex::with_flags(to, "u").expect(to);
            drop(re);
        }
        // The rewrites keep what the pattern matches.
        let re = regress::Regex::with_flags(r"^[\w\-.+]+@[\w\-.+]+$", "u").expect("re");
        assert!(re.find("a.b-c+d@x-y.z").is_some());
        assert!(re.find("a b@x").is_none());
    }

    #[test]
    fn patterns_without_an_equivalent_are_refused_with_the_reason() {
        for p in [
            r"[\p{Print}&&[^|:/]]+",
            r"^(?i)abc$",
            r"abc\Z",
            r"\x{1F600}",
            r"[\P{Digit}]",
            r"(unclosed",
        ] {
            let e = portable(p).expect_err(p);
            assert!(!e.to_string().is_empty(), "{p}");
        }
    }
}
