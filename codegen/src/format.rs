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
/// (bare CR is an error in doc comments). Blank leading/trailing lines are dropped.
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
                .filter(|c| !c.is_control() || *c == '\t')
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
