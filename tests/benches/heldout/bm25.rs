//! A plain Okapi BM25 over the operations, as generic MCP tool search ranks tools (issue #41): the
//! baseline every set of this bench reports beside `search_operations`' own ranking.
//!
//! What it indexes, one bag of words per operation (no fields, no weights):
//! - the tool's name (as `tools/list` gives it),
//! - the tool's description (as `tools/list` gives it: the spec's summary and description),
//! - the name and the `description` of each top-level property of the tool's `inputSchema` (path,
//!   query, header and cookie parameters, and the body's fields where the body is flattened into
//!   arguments; an unflattened body is the one argument `body`).
//!
//! Tokenization: split on every non-alphanumeric character and at camelCase boundaries (`fooBar`,
//! `HTTPServer` -> `http server`, `v2Beta`), lower case, tokens of one character dropped (as
//! FastMCP's BM25 search transform drops them). No stop words, no stemming, no synonyms.
//!
//! Scoring: textbook Okapi BM25, k1 = 1.5, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5));
//! a query token said twice counts twice. Ties are broken by tool-set order.

use std::collections::HashMap;
use std::sync::Arc;

use openapi_mcp_toolset::model::ToolDef;

const K1: f64 = 1.5;
const B: f64 = 0.75;

/// The baseline index: per document its length and term frequencies, per term its postings.
pub struct Bm25 {
    lens: Vec<f64>,
    avg: f64,
    postings: HashMap<String, Vec<(u32, u32)>>,
}

/// Lower-case tokens split on non-alphanumerics and camelCase boundaries; one-character tokens
/// dropped.
pub fn tokenize(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if !cur.is_empty() && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter()
        .map(|t| t.to_lowercase())
        .filter(|t| t.chars().count() > 1)
        .collect()
}

/// The text the baseline indexes for one operation (see the module documentation).
pub fn document(def: &ToolDef) -> String {
    let tool = def.tool();
    let mut parts: Vec<String> = vec![tool.name.to_string()];
    if let Some(d) = &tool.description {
        parts.push(d.to_string());
    }
    if let Some(serde_json::Value::Object(props)) = tool.input_schema.get("properties") {
        for (name, schema) in props {
            parts.push(name.clone());
            if let Some(d) = schema.get("description").and_then(|d| d.as_str()) {
                parts.push(d.to_string());
            }
        }
    }
    parts.join(" ")
}

impl Bm25 {
    /// Indexes every operation of `defs` (document `i` is operation `i`).
    pub fn build(defs: &[Arc<ToolDef>]) -> Self {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lens = Vec::with_capacity(defs.len());
        for (i, def) in defs.iter().enumerate() {
            let tokens = tokenize(&document(def));
            lens.push(tokens.len() as f64);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in tokens {
                *tf.entry(t).or_default() += 1;
            }
            for (t, f) in tf {
                postings.entry(t).or_default().push((i as u32, f));
            }
        }
        let avg = lens.iter().sum::<f64>() / lens.len().max(1) as f64;
        Bm25 {
            lens,
            avg: avg.max(1.0),
            postings,
        }
    }

    /// The best `limit` operations (indexes in the tool set) for `query`, best first; only
    /// scores > 0.
    pub fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let mut ranked: Vec<(usize, f64)> = self
            .scores(query)
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().take(limit).map(|(d, _)| d).collect()
    }

    /// Every document's score for `query`.
    fn scores(&self, query: &str) -> Vec<f64> {
        let n = self.lens.len() as f64;
        let mut scores = vec![0f64; self.lens.len()];
        for t in tokenize(query) {
            let Some(postings) = self.postings.get(&t) else {
                continue;
            };
            let df = postings.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(d, f) in postings {
                let f = f64::from(f);
                let norm = K1 * (1.0 - B + B * self.lens[d as usize] / self.avg);
                scores[d as usize] += idf * f * (K1 + 1.0) / (f + norm);
            }
        }
        scores
    }

    /// Heap bytes (an estimate from the collections' capacities).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.lens.capacity() * size_of::<f64>()
            + self
                .postings
                .iter()
                .map(|(k, v)| {
                    k.capacity()
                        + v.capacity() * size_of::<(u32, u32)>()
                        + size_of::<(String, Vec<(u32, u32)>)>()
                        + 1
                })
                .sum::<usize>()
    }
}

/// Checks the tokenizer and the formula on fixed inputs (the bench runs it first: a bench target
/// has no test harness). Panics on a difference.
pub fn self_check() {
    assert_eq!(
        tokenize("reposListForAuthenticatedUser HTTPServer v2Beta a_b snake_case"),
        [
            "repos",
            "list",
            "for",
            "authenticated",
            "user",
            "http",
            "server",
            "v2",
            "beta",
            "snake",
            "case"
        ]
    );
    // Two documents, "alpha beta" and "beta beta gamma": avgdl 2.5; "alpha" has df 1, so
    // idf = ln(1 + 1.5/1.5) = ln 2 and the first document scores
    // ln 2 * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 2 / 2.5)).
    let docs = [vec!["alpha", "beta"], vec!["beta", "beta", "gamma"]];
    let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
    for (i, d) in docs.iter().enumerate() {
        let mut tf: HashMap<&str, u32> = HashMap::new();
        for t in d {
            *tf.entry(t).or_default() += 1;
        }
        for (t, f) in tf {
            postings
                .entry(t.to_string())
                .or_default()
                .push((i as u32, f));
        }
    }
    let idx = Bm25 {
        lens: vec![2.0, 3.0],
        avg: 2.5,
        postings,
    };
    let scores = idx.scores("alpha");
    let want = 2f64.ln() * 2.5 / (1.0 + 1.5 * (0.25 + 0.75 * 2.0 / 2.5));
    assert!((scores[0] - want).abs() < 1e-12 && scores[1] == 0.0);
    // "beta" is in both documents; the second has it twice and ranks first.
    assert_eq!(idx.search("beta", 10), [1, 0]);
}
