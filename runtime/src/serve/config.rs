//! `--config FILE`: every option of a command, from a YAML or TOML file, with the command line
//! overriding it.
//!
//! The keys are not a second list to keep in step with the flags: they are the command's own
//! clap arguments (long names, `spec` for the positional), read from the [`clap::Command`] at run
//! time, so a flag added to `proxy` (or to [`crate::serve::ServeArgs`]) is a key the moment it
//! exists. Each value is checked with that argument's own value parser (ranges, enums, header
//! names, timeouts), and an error names the file and the key. The file's settings become
//! command-line tokens placed before the user's own; an option the user gave on the command line
//! (or through its environment variable) drops the file's value for it, lists included, so
//! clap parses one command line, with every rule it already has.
//!
//! [`render_effective`] prints what a parsed command line amounts to (`openapi-mcp config
//! --print`), with secrets masked.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};
use openapi_mcp_toolset::suggest::{Tolerance, closest};
use serde_json::Value;

/// The id of the argument naming the config file.
pub const CONFIG_ARG: &str = "config";

/// The top-level key listing several APIs served by one server (`openapi-mcp proxy`).
pub const APIS_KEY: &str = "apis";

/// The keys of `openapi-mcp proxy`'s workflows (#39): a command without them (a generated
/// server) says why rather than "unknown key".
const WORKFLOW_KEYS: &[&str] = &["arazzo", "workflows-only"];

/// What shows instead of a secret.
pub const MASK: &str = "***";

/// Why a config file cannot be used. Every variant names the file; those about a setting name
/// its key too.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading config file {file}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("config file {file} is not valid {format}: {message}")]
    Parse {
        file: String,
        format: &'static str,
        message: String,
    },
    #[error("config file {file}: expected a map of settings (key: value) at the top level")]
    NotAMap { file: String },
    #[error("config file {file}: unknown key `{key}`{}", suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    UnknownKey {
        file: String,
        key: String,
        suggestion: Option<String>,
    },
    #[error("config file {file}: `{key}` and `{other}` are the same setting; keep one")]
    Duplicate {
        file: String,
        key: String,
        other: String,
    },
    #[error("config file {file}: key `{key}`: expected {expected}, found {found}")]
    Type {
        file: String,
        key: String,
        expected: &'static str,
        found: &'static str,
    },
    #[error("config file {file}: key `{key}`: {message}")]
    Value {
        file: String,
        key: String,
        message: String,
    },
    #[error("config file {file}: key `{key}` cannot be set in a config file")]
    NotSettable { file: String, key: String },
}

/// A command line with a config file's settings put in.
#[derive(Debug, Clone, Default)]
pub struct Expanded {
    /// The command line to parse.
    pub argv: Vec<OsString>,
    /// The config file, when `--config` was given.
    pub file: Option<PathBuf>,
    /// Ids of the arguments whose value comes from the file.
    pub from_file: BTreeSet<String>,
    /// Lines for stderr: literal secrets in the file.
    pub warnings: Vec<String>,
    /// The file's `apis:` list (several APIs in one server), each entry as written; the
    /// command that serves them reads them ([`entry_tokens`]).
    pub apis: Option<Vec<Value>>,
}

/// Puts the settings of the file named by `--config` into `argv`, for `root` (the command whose
/// own arguments take `--config`, as a generated server's) or for `root`'s first subcommand
/// named in `subcommands` (as `openapi-mcp proxy`). Without `--config`, or when `argv` does not
/// parse at all (clap reports that when it parses the result), `argv` comes back unchanged.
pub fn expand(
    root: &Command,
    subcommands: &[&str],
    argv: Vec<OsString>,
) -> Result<Expanded, ConfigError> {
    let unchanged = |argv| Expanded {
        argv,
        ..Expanded::default()
    };
    // A first parse with every argument optional (the spec may be in the file) finds --config
    // and what the command line sets.
    let mut relaxed = root.clone().mut_args(|a| a.required(false));
    for name in subcommands {
        relaxed = relaxed.mut_subcommand(name, |c| c.mut_args(|a| a.required(false)));
    }
    let Ok(matches) = relaxed.try_get_matches_from(argv.iter()) else {
        return Ok(unchanged(argv));
    };
    let mut built = root.clone();
    built.build();
    let (cmd, given, sub_name) = if subcommands.is_empty() {
        (&built, &matches, None)
    } else {
        match matches.subcommand() {
            Some((name, m)) if subcommands.contains(&name) => match built.find_subcommand(name) {
                Some(c) => (c, m, Some(name)),
                None => return Ok(unchanged(argv)),
            },
            _ => return Ok(unchanged(argv)),
        }
    };
    let Some(path) = given
        .try_get_raw(CONFIG_ARG)
        .ok()
        .flatten()
        .and_then(|mut v| v.next())
        .map(PathBuf::from)
    else {
        return Ok(unchanged(argv));
    };
    let settings = read(&path)?;
    let file = path.display().to_string();
    let mut options: Vec<OsString> = Vec::new();
    let mut positionals: Vec<OsString> = Vec::new();
    let mut from_file = BTreeSet::new();
    let mut warnings = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut apis = None;
    for (key, value) in settings {
        if key == APIS_KEY && find_key(cmd, &key).is_none() {
            match value {
                Value::Array(items) => apis = Some(items),
                other => {
                    return Err(ConfigError::Type {
                        file,
                        key,
                        expected: "a list of APIs (maps with `name`, `spec`, …)",
                        found: type_name(&other),
                    });
                }
            }
            continue;
        }
        let (arg, values) = setting(cmd, &file, &key, &key, &value, &mut seen)?;
        let id = arg.get_id().to_string();
        // The command line (or the option's environment variable) wins, lists included.
        if matches!(
            given.value_source(&id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        ) {
            continue;
        }
        if values.is_empty() {
            continue;
        }
        if let Some(w) = secret_warning(arg, &file, &key, &values, None) {
            warnings.push(w);
        }
        from_file.insert(id);
        match arg.get_long() {
            Some(long) if !arg.is_positional() => {
                for v in values {
                    options.push(match v {
                        Token::Flag => format!("--{long}").into(),
                        Token::Value(v) => {
                            let mut t = OsString::from(format!("--{long}="));
                            t.push(v);
                            t
                        }
                    });
                }
            }
            _ => positionals.extend(values.into_iter().filter_map(|v| match v {
                Token::Value(v) => Some(OsString::from(v)),
                Token::Flag => None,
            })),
        }
    }
    // The file's options go right after the (sub)command's name, the user's after them; the
    // file's positionals at the end, after `--` (a value starting with `-` stays a value).
    let at = match sub_name {
        Some(name) => argv
            .iter()
            .skip(1)
            .position(|a| a == OsStr::new(name))
            .map_or(argv.len(), |i| i + 2),
        None => 1.min(argv.len()),
    };
    let mut out: Vec<OsString> = argv[..at].to_vec();
    out.extend(options);
    out.extend(argv[at..].iter().cloned());
    if !positionals.is_empty() {
        if !argv[at..].iter().any(|a| a == OsStr::new("--")) {
            out.push("--".into());
        }
        out.extend(positionals);
    }
    Ok(Expanded {
        argv: out,
        file: Some(path),
        from_file,
        warnings,
        apis,
    })
}

/// One setting of a file, checked: the argument `key` names (`shown`: the key as errors name
/// it, e.g. `apis[1].base-url`), and its tokens. `seen` holds the (key, id) pairs already set,
/// so that `base_url` and `base-url` together are an error.
fn setting<'a>(
    cmd: &'a Command,
    file: &str,
    key: &str,
    shown: &str,
    value: &Value,
    seen: &mut Vec<(String, String)>,
) -> Result<(&'a Arg, Vec<Token>), ConfigError> {
    let arg = find_key(cmd, key).ok_or_else(|| {
        if WORKFLOW_KEYS.contains(&key.replace('_', "-").as_str()) {
            return ConfigError::Value {
                file: file.to_string(),
                key: shown.to_string(),
                message: "Arazzo workflows are served by `openapi-mcp proxy` (built with the runtime's `workflows` feature); this server does not serve workflows".into(),
            };
        }
        let keys = keys(cmd);
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        ConfigError::UnknownKey {
            file: file.to_string(),
            suggestion: closest(&key.replace('_', "-"), &keys, Tolerance::HALF).map(str::to_string),
            key: shown.to_string(),
        }
    })?;
    let id = arg.get_id().to_string();
    if id == CONFIG_ARG {
        return Err(ConfigError::NotSettable {
            file: file.to_string(),
            key: shown.to_string(),
        });
    }
    if let Some((other, _)) = seen.iter().find(|(_, i)| *i == id) {
        return Err(ConfigError::Duplicate {
            file: file.to_string(),
            key: shown.to_string(),
            other: other.clone(),
        });
    }
    seen.push((shown.to_string(), id));
    let values = values(cmd, arg, file, shown, value)?;
    Ok((arg, values))
}

/// The settings of one entry of a list in a config file (an API of `apis:`) as a command line
/// for `cmd` (options first, then `--` and the positionals), every value checked by its
/// argument's own parser. `path` names the entry in errors (`apis[1]`: a key is
/// `apis[1].base-url`); `auth_env` is what warnings about a literal `auth` secret suggest
/// instead (`OPENAPI_MCP_PETS_<SCHEME>`).
#[derive(Debug, Clone, Default)]
pub struct EntryTokens {
    /// The command line (without a program name).
    pub argv: Vec<OsString>,
    /// Ids of the arguments the entry sets.
    pub from_file: BTreeSet<String>,
    /// Lines for stderr: literal secrets in the entry.
    pub warnings: Vec<String>,
}

/// See [`EntryTokens`]. An entry that is not a map is an error naming `path`.
pub fn entry_tokens(
    cmd: &Command,
    file: &str,
    path: &str,
    entry: &Value,
    auth_env: &str,
) -> Result<EntryTokens, ConfigError> {
    let Value::Object(map) = entry else {
        return Err(ConfigError::Type {
            file: file.to_string(),
            key: path.to_string(),
            expected: "a map of settings (name, spec, …)",
            found: type_name(entry),
        });
    };
    let mut out = EntryTokens::default();
    let mut positionals = Vec::new();
    let mut seen = Vec::new();
    for (key, value) in map {
        let shown = format!("{path}.{key}");
        let (arg, values) = setting(cmd, file, key, &shown, value, &mut seen)?;
        if values.is_empty() {
            continue;
        }
        if let Some(w) = secret_warning(arg, file, &shown, &values, Some(auth_env)) {
            out.warnings.push(w);
        }
        out.from_file.insert(arg.get_id().to_string());
        match arg.get_long() {
            Some(long) if !arg.is_positional() => {
                for v in values {
                    out.argv.push(match v {
                        Token::Flag => format!("--{long}").into(),
                        Token::Value(v) => format!("--{long}={v}").into(),
                    });
                }
            }
            _ => positionals.extend(values.into_iter().filter_map(|v| match v {
                Token::Value(v) => Some(OsString::from(v)),
                Token::Flag => None,
            })),
        }
    }
    if !positionals.is_empty() {
        out.argv.push("--".into());
        out.argv.extend(positionals);
    }
    Ok(out)
}

/// One command-line token from the file: a flag set, or an option's value.
enum Token {
    Flag,
    Value(String),
}

/// The settings of a YAML (`.yaml`, `.yml`, `.json`, anything else) or TOML (`.toml`) file, in
/// file order.
pub fn read(path: &Path) -> Result<Vec<(String, Value)>, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        file: file.clone(),
        source,
    })?;
    let toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    parse(&file, &text, toml)
}

/// [`read`] for text already read: `file` names it in errors.
pub fn parse(file: &str, text: &str, toml: bool) -> Result<Vec<(String, Value)>, ConfigError> {
    let value: Value = if toml {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            file: file.to_string(),
            format: "TOML",
            message: e.message().to_string() + &toml_location(text, e.span()),
        })?
    } else {
        // An empty file (or only comments) sets nothing.
        if text.lines().all(|l| {
            let l = l.trim();
            l.is_empty() || l.starts_with('#') || l == "---"
        }) {
            return Ok(Vec::new());
        }
        serde_yaml_ng::from_str(text).map_err(|e| ConfigError::Parse {
            file: file.to_string(),
            format: "YAML",
            message: e.to_string(),
        })?
    };
    match value {
        Value::Object(map) => Ok(map.into_iter().collect()),
        _ => Err(ConfigError::NotAMap {
            file: file.to_string(),
        }),
    }
}

fn toml_location(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    let Some(span) = span else {
        return String::new();
    };
    let before = text.get(..span.start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!(" at line {line} column {column}")
}

/// The argument a key names: its long name (or the positional's id), `_` and `-` alike.
fn find_key<'a>(cmd: &'a Command, key: &str) -> Option<&'a Arg> {
    let key = key.replace('_', "-");
    cmd.get_arguments().find(|a| {
        !matches!(a.get_action(), ArgAction::Help | ArgAction::Version)
            && (a.get_long() == Some(key.as_str())
                || (a.is_positional() && a.get_id().as_str() == key))
    })
}

/// Every key a file can set for `cmd` (its long names and positionals, but `--config`, `--help`
/// and `--version`).
pub fn keys(cmd: &Command) -> Vec<String> {
    cmd.get_arguments()
        .filter(|a| {
            !matches!(a.get_action(), ArgAction::Help | ArgAction::Version)
                && a.get_id() != CONFIG_ARG
        })
        .filter_map(|a| {
            if a.is_positional() {
                Some(a.get_id().to_string())
            } else {
                a.get_long().map(str::to_string)
            }
        })
        .collect()
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

/// The tokens for `value`, checked by the argument's own value parser.
fn values(
    cmd: &Command,
    arg: &Arg,
    file: &str,
    key: &str,
    value: &Value,
) -> Result<Vec<Token>, ConfigError> {
    let type_err = |expected| ConfigError::Type {
        file: file.to_string(),
        key: key.to_string(),
        expected,
        found: type_name(value),
    };
    match arg.get_action() {
        ArgAction::SetTrue => match value {
            Value::Bool(true) => Ok(vec![Token::Flag]),
            Value::Bool(false) | Value::Null => Ok(Vec::new()),
            _ => Err(type_err("true or false")),
        },
        ArgAction::Count => match value {
            Value::Null => Ok(Vec::new()),
            Value::Number(n) => match n.as_u64().filter(|n| *n <= 8) {
                Some(n) => Ok((0..n).map(|_| Token::Flag).collect()),
                None => Err(type_err("a count from 0 to 8")),
            },
            _ => Err(type_err("a count from 0 to 8")),
        },
        ArgAction::Append => {
            let items: Vec<&Value> = match value {
                Value::Array(items) => items.iter().collect(),
                Value::Null => Vec::new(),
                v => vec![v],
            };
            items
                .into_iter()
                .map(|v| {
                    scalar(v)
                        .ok_or_else(|| type_err("a string, a number or a list of them"))
                        .and_then(|s| check(cmd, arg, file, key, s))
                })
                .collect()
        }
        _ => match value {
            Value::Null => Ok(Vec::new()),
            v => {
                let s = scalar(v).ok_or_else(|| type_err("a string or a number"))?;
                Ok(vec![check(cmd, arg, file, key, s)?])
            }
        },
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `s` through the argument's own value parser (each comma-separated part, for comma lists):
/// `cmd` parses `s` alone (clap keeps `ValueParser::parse_ref` to itself). Only errors about the
/// value count: a missing or conflicting other argument is the whole command line's business.
fn check(cmd: &Command, arg: &Arg, file: &str, key: &str, s: String) -> Result<Token, ConfigError> {
    // `auth` and `header` values hold secrets: a malformed one is named by its key, never shown.
    let shape = match arg.get_long() {
        Some("auth") if !s.contains('=') => Some("expects SCHEME=VALUE, and a value has no `=`"),
        Some("header") if !s.contains(':') => Some("expects 'Name: value', and a value has no `:`"),
        _ => None,
    };
    if let Some(problem) = shape {
        return Err(ConfigError::Value {
            file: file.to_string(),
            key: key.to_string(),
            message: format!("{problem} (not shown: it may be a secret)"),
        });
    }
    let token = match arg.get_long() {
        Some(long) if !arg.is_positional() => format!("--{long}="),
        _ => String::new(),
    };
    let probe = cmd
        .clone()
        .no_binary_name(true)
        .mut_args(|a| a.required(false));
    let parts: Vec<&str> = match arg.get_value_delimiter() {
        Some(d) => s.split(d).collect(),
        None => vec![s.as_str()],
    };
    for part in parts {
        let mut argv = Vec::new();
        if token.is_empty() {
            argv.push("--".to_string());
        }
        argv.push(format!("{token}{part}"));
        if let Err(e) = probe.clone().try_get_matches_from(argv)
            && matches!(
                e.kind(),
                clap::error::ErrorKind::InvalidValue | clap::error::ErrorKind::ValueValidation
            )
        {
            let long = arg.get_long().unwrap_or_default();
            return Err(ConfigError::Value {
                file: file.to_string(),
                key: key.to_string(),
                message: if is_secret(arg) || long == "auth" || long == "header" {
                    "not a valid value (not shown: it may be a secret)".to_string()
                } else {
                    clap_message(&e)
                },
            });
        }
    }
    Ok(Token::Value(s))
}

/// A clap error's first line without `error: `.
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let line = text.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

/// Whether an argument holds a secret as a whole: its name says so, or clap hides its
/// environment value. (`--auth` and `--header` hold one after their `=` / `:`.)
fn is_secret(arg: &Arg) -> bool {
    let name = arg.get_long().unwrap_or(arg.get_id().as_str());
    // An API's name or URI, not a token (shown by `config --print`, no warning).
    if name == "token-exchange-audience" {
        return false;
    }
    arg.is_hide_env_values_set()
        || ["token", "secret", "password", "passphrase"]
            .iter()
            .any(|w| name.contains(w))
}

/// A warning when the file holds a literal secret for `arg`.
fn secret_warning(
    arg: &Arg,
    file: &str,
    key: &str,
    values: &[Token],
    auth_env: Option<&str>,
) -> Option<String> {
    let long = arg.get_long().unwrap_or_default();
    let literal = is_secret(arg)
        || long == "auth"
        || (long == "header"
            && values.iter().any(|v| match v {
                Token::Value(h) => h.split_once(':').is_some_and(|(name, value)| {
                    crate::forward::scrub::names_a_secret(name.trim(), value)
                }),
                Token::Flag => false,
            }));
    if !literal {
        return None;
    }
    let instead = match (long, arg.get_env()) {
        (_, Some(env)) => format!("set {} instead", env.to_string_lossy()),
        ("auth", _) => format!(
            "set {} instead (see `Credentials` in the README)",
            auth_env.unwrap_or("OPENAPI_MCP_<SCHEME>")
        ),
        _ => "keep secrets in environment variables".into(),
    };
    Some(format!(
        "config file {file}: `{key}` holds a literal secret (anyone who can read the file has it); {instead}"
    ))
}

/// `value` of `arg` as it may be shown: secrets masked (`--auth SCHEME=***`, `--header
/// 'Name: ***'`), any URL as the start-up line shows it ([`crate::serve::shown::shown_url_text`]: no
/// user info, query values `***`).
pub fn mask(arg: &Arg, value: &str) -> String {
    let long = arg.get_long().unwrap_or_default();
    if is_secret(arg) {
        return MASK.to_string();
    }
    match long {
        "auth" => match value.split_once('=') {
            Some((scheme, _)) => format!("{scheme}={MASK}"),
            None => MASK.to_string(),
        },
        "header" => match value.split_once(':') {
            Some((name, _)) => format!("{name}: {MASK}"),
            None => MASK.to_string(),
        },
        _ => crate::serve::shown::shown_url_text(value),
    }
}

/// Where a setting's value came from.
fn source_name(
    m: &ArgMatches,
    arg: &Arg,
    from_file: &BTreeSet<String>,
    file: Option<&Path>,
) -> String {
    let id = arg.get_id().as_str();
    match m.value_source(id) {
        Some(ValueSource::CommandLine) if from_file.contains(id) => file
            .map(|f| format!("config file {}", f.display()))
            .unwrap_or_else(|| "config file".into()),
        Some(ValueSource::CommandLine) => "command line".into(),
        Some(ValueSource::EnvVariable) => arg
            .get_env()
            .map(|e| format!("environment {}", e.to_string_lossy()))
            .unwrap_or_else(|| "environment".into()),
        Some(ValueSource::DefaultValue) => "default".into(),
        _ => "not set".into(),
    }
}

/// The effective settings of a parsed `cmd` as YAML (a config file that says the same, but for
/// masked secrets), each with where its value came from. `skip` leaves out arguments of the
/// printing command itself.
pub fn render_effective(
    cmd: &Command,
    m: &ArgMatches,
    from_file: &BTreeSet<String>,
    file: Option<&Path>,
    skip: &[&str],
) -> String {
    let mut out = String::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if matches!(arg.get_action(), ArgAction::Help | ArgAction::Version)
            || id == CONFIG_ARG
            || skip.contains(&id)
        {
            continue;
        }
        let key = if arg.is_positional() {
            id.to_string()
        } else {
            match arg.get_long() {
                Some(l) => l.to_string(),
                None => continue,
            }
        };
        let raw: Vec<String> = m
            .try_get_raw(id)
            .ok()
            .flatten()
            .map(|vs| vs.map(|v| mask(arg, &v.to_string_lossy())).collect())
            .unwrap_or_default();
        let value = match arg.get_action() {
            ArgAction::SetTrue => Value::Bool(m.get_flag(id)),
            ArgAction::Count => Value::from(m.get_count(id)),
            ArgAction::Append => Value::Array(raw.into_iter().map(yaml_scalar).collect()),
            _ => raw.into_iter().next().map_or(Value::Null, yaml_scalar),
        };
        let mut entry = serde_json::Map::new();
        entry.insert(key, value);
        let text = serde_yaml_ng::to_string(&entry).unwrap_or_default();
        let source = source_name(m, arg, from_file, file);
        let mut lines = text.lines();
        if let Some(first) = lines.next() {
            let _ = writeln!(out, "{first}  # {source}");
        }
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
    }
    out
}

/// A number stays a number in the output; anything else is a string.
fn yaml_scalar(s: String) -> Value {
    if let Ok(n) = s.parse::<u64>() {
        return Value::from(n);
    }
    if let Ok(f) = s.parse::<f64>()
        && f.is_finite()
        && s.contains('.')
    {
        return Value::from(f);
    }
    Value::String(s)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use clap::{CommandFactory, FromArgMatches, Parser};

    /// A command shaped like `openapi-mcp proxy`: a positional, flags, single values with
    /// parsers, lists (repeatable, comma-separated), an env-backed secret.
    #[derive(Parser, Debug)]
    #[command(name = "t")]
    struct Root {
        #[arg(short, long, action = ArgAction::Count, global = true)]
        verbose: u8,
        #[command(subcommand)]
        cmd: Sub,
    }
    #[derive(clap::Subcommand, Debug)]
    enum Sub {
        Proxy(P),
    }
    #[derive(clap::Args, Debug)]
    struct P {
        spec: String,
        #[arg(long)]
        config: Option<PathBuf>,
        #[arg(long)]
        stateless: bool,
        #[arg(long, default_value_t = 30.0)]
        timeout: f64,
        #[arg(long, value_parser = clap::value_parser!(u16).range(16..=128), default_value_t = 64)]
        max_name_len: u16,
        #[arg(long, value_delimiter = ',')]
        include_tag: Vec<String>,
        #[arg(long)]
        header: Vec<String>,
        #[arg(long)]
        auth: Vec<String>,
        #[arg(long, env = "CFG_TEST_AUTH_TOKEN", hide_env_values = true)]
        auth_token: Option<String>,
        #[arg(long)]
        base_url: Option<String>,
        #[arg(long, value_enum, default_value_t = M::Tools)]
        mode: M,
    }
    #[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
    enum M {
        Tools,
        Dynamic,
    }

    fn write(name: &str, text: &str) -> (tempdir::Dir, PathBuf) {
        let dir = tempdir::Dir::new();
        let p = dir.0.join(name);
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static N: AtomicUsize = AtomicUsize::new(0);
                let p = std::env::temp_dir().join(format!(
                    "openapi-mcp-config-test-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&p).unwrap();
                Dir(p)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    fn run(file: &Path, extra: &[&str]) -> Result<(Expanded, P), ConfigError> {
        let mut argv: Vec<OsString> = vec!["t".into(), "proxy".into(), "--config".into()];
        argv.push(file.into());
        argv.extend(extra.iter().map(OsString::from));
        let e = expand(&Root::command(), &["proxy"], argv)?;
        let m = Root::command().try_get_matches_from(&e.argv).unwrap();
        let Sub::Proxy(p) = Root::from_arg_matches(&m).unwrap().cmd;
        Ok((e, p))
    }

    const YAML: &str = "spec: api.yaml\nstateless: true\ntimeout: 2.5\nmax_name_len: 40\ninclude-tag: [pets, 'users,orgs']\nheader:\n  - 'Accept: application/json'\nmode: dynamic\n";

    #[test]
    fn yaml_and_toml_set_every_kind_of_option() {
        let (_d, y) = write("c.yaml", YAML);
        let (_e, from_yaml) = run(&y, &[]).unwrap();
        let toml = "spec = \"api.yaml\"\nstateless = true\ntimeout = 2.5\nmax_name_len = 40\ninclude-tag = [\"pets\", \"users,orgs\"]\nheader = [\"Accept: application/json\"]\nmode = \"dynamic\"\n";
        let (_d2, t) = write("c.toml", toml);
        let (_e, from_toml) = run(&t, &[]).unwrap();
        for p in [from_yaml, from_toml] {
            assert_eq!(p.spec, "api.yaml");
            assert!(p.stateless);
            assert_eq!(p.timeout, 2.5);
            assert_eq!(p.max_name_len, 40);
            assert_eq!(p.include_tag, ["pets", "users", "orgs"]);
            assert_eq!(p.header, ["Accept: application/json"]);
            assert_eq!(p.mode, M::Dynamic);
        }
    }

    #[test]
    fn the_command_line_overrides_the_file_lists_included() {
        let (_d, y) = write("c.yaml", YAML);
        let (e, p) = run(
            &y,
            &["other.yaml", "--timeout", "9", "--include-tag", "x", "-v"],
        )
        .unwrap();
        assert_eq!(p.spec, "other.yaml");
        assert_eq!(p.timeout, 9.0);
        assert_eq!(p.include_tag, ["x"]);
        // Untouched ones still come from the file.
        assert_eq!(p.max_name_len, 40);
        assert!(e.from_file.contains("max_name_len") && !e.from_file.contains("timeout"));
    }

    #[test]
    fn a_file_value_starting_with_a_dash_stays_a_value() {
        let (_d, y) = write("c.yaml", "spec: -odd.yaml\nbase-url: -x\n");
        let (_e, p) = run(&y, &[]).unwrap();
        assert_eq!(p.spec, "-odd.yaml");
        assert_eq!(p.base_url.as_deref(), Some("-x"));
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let cases = [
            (
                "spec: a\ntimout: 3\n",
                "unknown key `timout`; did you mean `timeout`?",
            ),
            (
                "spec: a\ntimeout: soon\n",
                "key `timeout`: invalid value 'soon'",
            ),
            (
                "spec: a\nmax-name-len: 500\n",
                "key `max-name-len`: invalid value '500'",
            ),
            (
                "spec: a\nstateless: yes please\n",
                "key `stateless`: expected true or false, found a string",
            ),
            (
                "spec: a\ninclude-tag: {a: 1}\n",
                "key `include-tag`: expected a string, a number or a list of them, found a map",
            ),
            (
                "spec: a\nbase-url: [a, b]\n",
                "key `base-url`: expected a string or a number, found a list",
            ),
            ("spec: a\nmode: fast\n", "key `mode`: invalid value 'fast'"),
            (
                "spec: a\nconfig: other.yaml\n",
                "key `config` cannot be set",
            ),
            (
                "spec: a\nbase_url: x\nbase-url: y\n",
                "`base-url` and `base_url` are the same setting",
            ),
            ("- a\n- b\n", "expected a map of settings"),
            ("spec: [\n", "is not valid YAML"),
        ];
        for (text, want) in cases {
            let (_d, y) = write("bad.yaml", text);
            let err = run(&y, &[]).err().unwrap().to_string();
            assert!(err.contains("bad.yaml"), "{err}");
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let (_d, t) = write("bad.toml", "spec = \"a\"\ntimeout = \n");
        let err = run(&t, &[]).err().unwrap().to_string();
        assert!(
            err.contains("bad.toml is not valid TOML") && err.contains("line 2"),
            "{err}"
        );
        let err = run(Path::new("/nonexistent/x.yaml"), &[]).err().unwrap();
        assert!(err.to_string().contains("/nonexistent/x.yaml"), "{err}");
    }

    #[test]
    fn no_config_leaves_the_command_line_alone() {
        let argv: Vec<OsString> = ["t", "proxy", "a.yaml", "--timeout", "3"]
            .map(OsString::from)
            .to_vec();
        let e = expand(&Root::command(), &["proxy"], argv.clone()).unwrap();
        assert_eq!(e.argv, argv);
        // A command line clap rejects is handed back for clap to report.
        let bad: Vec<OsString> = ["t", "proxy", "--nope"].map(OsString::from).to_vec();
        assert_eq!(
            expand(&Root::command(), &["proxy"], bad.clone())
                .unwrap()
                .argv,
            bad
        );
    }

    #[test]
    fn secrets_are_masked_in_print_and_warned_about() {
        let (_d, y) = write(
            "s.yaml",
            "spec: https://u:pw@example.com/api.yaml\nauth: [api_key=sk-live-1]\nauth-token: gate-secret\nheader: ['X-Api-Key: k-9', 'Accept: text/plain']\n",
        );
        let (e, _p) = run(&y, &[]).unwrap();
        assert_eq!(e.warnings.len(), 3, "{:?}", e.warnings);
        assert!(e.warnings.iter().any(|w| w.contains("CFG_TEST_AUTH_TOKEN")));
        let mut cmd = Root::command();
        cmd.build();
        let m = cmd.clone().try_get_matches_from(&e.argv).unwrap();
        let sub = cmd.find_subcommand("proxy").unwrap();
        let (_, sm) = m.subcommand().unwrap();
        let text = render_effective(sub, sm, &e.from_file, e.file.as_deref(), &[]);
        for secret in ["pw", "sk-live-1", "gate-secret", "k-9"] {
            assert!(!text.contains(secret), "{secret} in\n{text}");
        }
        assert!(
            text.contains("api_key=***") && text.contains("X-Api-Key: ***"),
            "{text}"
        );
        assert!(
            text.contains("spec: https://example.com/api.yaml"),
            "{text}"
        );
        assert!(text.contains("timeout: 30  # default"), "{text}");
        assert!(text.contains("auth-token: '***'  # config file"), "{text}");
        // The output is a config file itself: every key parses back.
        let back = parse("print", &text, false).unwrap();
        assert_eq!(back.len(), keys(sub).len(), "{text}");
    }

    #[test]
    fn a_secret_given_on_the_command_line_drops_the_files() {
        let (_d, y) = write("e.yaml", "spec: a\nauth-token: from-file\n");
        let (e, p) = run(&y, &["--auth-token", "from-cli"]).unwrap();
        assert_eq!(p.auth_token.as_deref(), Some("from-cli"));
        // The file's secret is not used, so nothing to warn about.
        assert!(e.warnings.is_empty() && !e.from_file.contains("auth_token"));
    }

    /// A generated server (any feature set) has no workflow keys: refused saying so, not as a
    /// typo.
    #[test]
    fn workflow_keys_are_refused_clearly_where_there_are_none() {
        use crate::serve::GeneratedCli;
        for text in ["arazzo: [shop.arazzo.yaml]\n", "workflows_only: true\n"] {
            let (_d, y) = write("w.yaml", text);
            let argv: Vec<OsString> = vec!["srv".into(), "--config".into(), y.into()];
            let err = expand(&GeneratedCli::command(), &[], argv)
                .err()
                .unwrap()
                .to_string();
            assert!(
                err.contains("w.yaml")
                    && err.contains("Arazzo workflows are served by `openapi-mcp proxy`"),
                "{err}"
            );
        }
    }

    /// A generated server's command line (no subcommand, no positional) takes a file too.
    #[test]
    fn a_generated_servers_command_line_takes_a_config_file() {
        use crate::serve::{GeneratedCli, Transport};
        let (_d, y) = write(
            "g.toml",
            "transport = \"http\"\nretries = 2\nheader = \"X-A: 1\"\nverbose = 1\n",
        );
        let argv: Vec<OsString> = vec![
            "srv".into(),
            "--config".into(),
            y.into(),
            "--retries".into(),
            "5".into(),
        ];
        let e = expand(&GeneratedCli::command(), &[], argv).unwrap();
        let m = GeneratedCli::command()
            .try_get_matches_from(&e.argv)
            .unwrap();
        let cli = GeneratedCli::from_arg_matches(&m).unwrap();
        assert_eq!(cli.serve.transport, Transport::Http);
        assert_eq!(cli.serve.retries, 5);
        assert_eq!(cli.serve.header, ["X-A: 1"]);
        assert_eq!(cli.verbose, 1);
    }
}
