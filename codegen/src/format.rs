//! Tokens -> pretty-printed Rust source.

use proc_macro2::TokenStream;

use crate::CodegenError;

/// Parses `tokens` as a file and pretty-prints it; a parse failure is a generator bug and carries
/// the token text.
pub fn rust_file(file: &str, tokens: TokenStream) -> Result<String, CodegenError> {
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(parsed) => Ok(prettyplease::unparse(&parsed)),
        Err(e) => Err(CodegenError::Unparsable {
            file: file.to_string(),
            message: e.to_string(),
            tokens: tokens.to_string(),
        }),
    }
}

/// `#[doc = " line"]` attributes, one per line, with characters a comment cannot hold removed
/// (bare CR is an error in doc comments, bidirectional overrides are denied by default). Blank leading/trailing lines are dropped.
pub fn doc_attrs(text: &str) -> TokenStream {
    let mut out = TokenStream::new();
    for line in doc_lines(text) {
        out.extend(quote::quote! { #[doc = #line] });
    }
    out
}

/// Like [`doc_attrs`], as inner attributes (`//!`).
pub fn inner_doc_attrs(text: &str) -> TokenStream {
    let mut out = TokenStream::new();
    for line in doc_lines(text) {
        out.extend(quote::quote! { #![doc = #line] });
    }
    out
}

fn doc_lines(text: &str) -> Vec<String> {
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            l.chars()
                // Bidirectional overrides in comments are a hard error
                // (`text_direction_codepoint_in_comment`).
                .filter(|c| {
                    (!c.is_control() || *c == '\t')
                        && !matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
                })
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect();
    let start = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |e| e + 1);
    lines[start..end]
        .iter()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!(" {l}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_and_literals_survive_odd_characters() {
        let text = "a\u{202E}b\rc\td\n\n  \n";
        let tokens = quote::quote! {
            pub enum E {
                #[serde(rename = "\u{202E}x\"\n")]
                A,
            }
        };
        let mut all = doc_attrs(text);
        all.extend(tokens);
        let file = rust_file("t.rs", quote::quote! { #all }).expect("parses");
        assert!(file.contains("/// abc\td\n"), "{file}");
        assert!(!file.contains('\u{202E}'), "{file}");
        // Literals keep every character, escaped.
        assert!(file.contains(r#"rename = "\u{202E}x\"\n""#), "{file}");
    }
}
