//! Argument validation against a tool's inputSchema, with messages a model can act on.

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// A lazily compiled validator (compiled once, on first use or by a warm-up task).
#[derive(Default)]
pub struct LazyValidator {
    cell: OnceLock<Result<jsonschema::Validator, String>>,
}

impl LazyValidator {
    pub fn get(&self, schema: &Map<String, Value>) -> &Result<jsonschema::Validator, String> {
        self.cell.get_or_init(|| {
            jsonschema::draft202012::options()
                .should_validate_formats(false)
                .build(&Value::Object(schema.clone()))
                .map_err(|e| e.to_string())
        })
    }
}

/// Validates `args`; returns one line per problem, each naming the argument path.
pub fn check(
    validator: &LazyValidator,
    schema: &Map<String, Value>,
    args: &Map<String, Value>,
) -> Result<(), Vec<String>> {
    let v = match validator.get(schema) {
        Ok(v) => v,
        // A schema the validator cannot compile (e.g. an exotic regex): let the API judge.
        Err(_) => return Ok(()),
    };
    let instance = Value::Object(args.clone());
    let mut problems = Vec::new();
    for err in v.iter_errors(&instance) {
        let path = display_path(err.instance_path().as_str());
        match err.kind() {
            jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected }
                if path.is_empty() =>
            {
                let valid: Vec<&str> = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                for name in unexpected {
                    let hint = match closest(name, &valid) {
                        Some(c) => format!("did you mean `{c}`?"),
                        None if valid.is_empty() => "this tool takes no arguments.".to_string(),
                        None => format!("valid arguments: {}.", valid.join(", ")),
                    };
                    problems.push(format!("unknown argument `{name}`: {hint}"));
                }
            }
            _ => {
                let what = if path.is_empty() {
                    "arguments".to_string()
                } else {
                    format!("`{path}`")
                };
                problems.push(format!("{what}: {err}"));
            }
        }
        if problems.len() >= 20 {
            problems.push("(more problems not shown)".to_string());
            break;
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// `/tags/0/name` -> `tags[0].name`.
fn display_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if seg.chars().all(|c| c.is_ascii_digit()) && !seg.is_empty() {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

/// The valid name closest to `name` (case-insensitive edit distance), if close enough.
fn closest<'a>(name: &str, valid: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    valid
        .iter()
        .map(|v| (levenshtein(&lower, &v.to_ascii_lowercase()), *v))
        .filter(|(d, v)| *d <= (v.len().max(name.len()) / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Map<String, Value> {
        match json!({"type": "object", "properties": {"petId": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["petId"], "additionalProperties": false})
        {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn reports_every_problem_with_paths_and_suggestions() {
        let v = LazyValidator::default();
        let args = match json!({"petid": 1, "tags": ["a", 2]}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let problems = check(&v, &schema(), &args).unwrap_err();
        let text = problems.join("\n");
        assert!(
            text.contains("unknown argument `petid`: did you mean `petId`?"),
            "{text}"
        );
        assert!(text.contains("`tags[1]`"), "{text}");
        assert!(text.contains("petId"), "{text}");
        let ok = match json!({"petId": 1}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        assert!(check(&v, &schema(), &ok).is_ok());
    }

    #[test]
    fn paths_display() {
        assert_eq!(display_path("/a/0/b~1c"), "a[0].b/c");
        assert_eq!(display_path(""), "");
    }
}
