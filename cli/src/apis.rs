//! `apis:` in a `proxy` config file: several APIs served by one server (#20).
//!
//! Each entry is a map with `name` (`[a-z][a-z0-9_]*`, unique), `spec`, any conversion option
//! of [`SpecArgs`] (the prefix defaults to the name) and the API-side serving options
//! [`ApiOptions::IDS`] (`base-url`, `credential-origin`, `auth`, `header`, `upstream-auth`,
//! `token-exchange-audience`, `upstream-client-id`, `oauth-proxy-scheme`). Its keys are the
//! proxy's own arguments, read from the clap command like top-level keys, so they take the same
//! values, checks and "did you mean". The other serving options are the server's, at the top
//! level; a per-API option at the top level (or on the command line) next to `apis:` is an error
//! naming it, rather than a guess at which API it was meant for. The one exception is
//! `upstream-auth` ([`ApiOptions::SERVER_DEFAULTS`]): at the top level it is the default of the entries
//! that do not set their own (one mode for every API is the common case).
//!
//! Workflows (#39): an entry's `arazzo:` (a list of Arazzo documents) and `workflows-only:` are
//! the `--arazzo` and `--workflows-only` of that API alone, and its `spec:` may be an Arazzo
//! document with one `openapi` source description ([`crate::arazzo::entry`]).

use std::collections::BTreeSet;
use std::path::Path;

use clap::parser::ValueSource;
use clap::{Arg, ArgMatches, Args, Command, CommandFactory, FromArgMatches};
use openapi_mcp_runtime::serve::config::{self, ConfigError, Expanded};
use openapi_mcp_runtime::serve::exit::UserError;
use openapi_mcp_runtime::serve::{ApiAuth, ApiOptions, ServeArgs, check_api_auth};
use openapi_mcp_runtime::server::multi;
use serde_json::Value;

use crate::args::SpecArgs;

/// The id of an entry's name.
const NAME: &str = "name";

/// One API of `apis:`.
#[derive(Debug)]
pub struct ApiConfig {
    pub name: String,
    /// Its spec and conversion options (the prefix is the name unless the entry sets one).
    pub spec: SpecArgs,
    /// Its own serving options (`upstream_auth: None`: the top-level one, the server's default).
    pub options: ApiOptions,
    /// The entry as parsed, for `config --print`.
    pub matches: ArgMatches,
    pub from_file: BTreeSet<String>,
    /// The config file, and the entry's key in it (`apis[1]`), for errors and warnings.
    pub file: String,
    pub key: String,
}

/// The ids of every per-API argument: the spec and its conversion options, and
/// [`ApiOptions::IDS`].
pub fn per_api_ids() -> Vec<String> {
    SpecArgs::augment_args(Command::new("spec"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .chain(ApiOptions::IDS.iter().map(|s| s.to_string()))
        .collect()
}

/// The command an `apis:` entry is parsed with: `name`, then the proxy's per-API arguments.
pub fn entry_command() -> Command {
    let mut cli = crate::args::Cli::command();
    cli.build();
    let ids = per_api_ids();
    let mut cmd = Command::new("api")
        .no_binary_name(true)
        .disable_help_flag(true)
        .arg(
            Arg::new(NAME)
                .long(NAME)
                .required(true)
                .help("The API's name: tool-name prefix, credential variables, labels"),
        );
    if let Some(proxy) = cli.find_subcommand("proxy") {
        for a in proxy.get_arguments() {
            if ids.iter().any(|id| id == a.get_id().as_str()) {
                let mut a = a.clone().global(false);
                if ApiOptions::SERVER_DEFAULTS.contains(&a.get_id().as_str()) {
                    // Unset in an entry means the top level's value, not clap's default.
                    a = a.default_value(None::<&'static str>);
                }
                cmd = cmd.arg(a);
            }
        }
    }
    cmd.build();
    cmd
}

/// The CLI's command for a config file with `apis:`: `proxy` and `config` take no spec
/// argument (each API has its own).
pub fn relaxed(cmd: Command) -> Command {
    let no_spec = |c: Command| c.mut_arg("spec", |a| a.required(false).default_value(""));
    cmd.mut_subcommand("proxy", no_spec)
        .mut_subcommand("config", no_spec)
}

/// The APIs of `expanded`'s file, checked: `m` is the `proxy` (or `config`) command's matches,
/// `cmd` that command. Returns them with the warnings for stderr (literal secrets).
pub fn parse(
    expanded: &Expanded,
    cmd: &Command,
    m: &ArgMatches,
) -> anyhow::Result<(Vec<ApiConfig>, Vec<String>)> {
    let Some(entries) = &expanded.apis else {
        return Ok((Vec::new(), Vec::new()));
    };
    let file = expanded
        .file
        .as_deref()
        .map(Path::display)
        .map(|d| d.to_string())
        .unwrap_or_default();
    refuse_server_wide(expanded, cmd, m, &file)?;
    if entries.is_empty() {
        return Err(ConfigError::Value {
            file,
            key: config::APIS_KEY.into(),
            message: "lists no API".into(),
        }
        .into());
    }
    let entry_cmd = entry_command();
    let entry_keys = config::keys(&entry_cmd);
    let top_keys = config::keys(cmd);
    let mut apis: Vec<ApiConfig> = Vec::with_capacity(entries.len());
    let mut warnings = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let path = format!("{}[{i}]", config::APIS_KEY);
        if let Value::Object(map) = entry {
            check_entry(map, &apis, &entry_keys, &top_keys, &file, &path)?;
        }
        let (api, entry_warnings) = parse_entry(&entry_cmd, entry, &file, &path)?;
        warnings.extend(entry_warnings);
        apis.push(api);
    }
    check_auths(m, &apis, file.clone())?;
    check_workflows(m, &apis, &file)?;
    Ok((apis, warnings))
}

/// A per-API option beside `apis:` (in the file, on the command line or from the environment)
/// would be a guess at which API it is for (but for the defaults of the entries): refused,
/// naming where it was set.
fn refuse_server_wide(
    expanded: &Expanded,
    cmd: &Command,
    m: &ArgMatches,
    file: &str,
) -> anyhow::Result<()> {
    for id in per_api_ids() {
        if ApiOptions::SERVER_DEFAULTS.contains(&id.as_str()) {
            continue;
        }
        let Some(arg) = cmd.get_arguments().find(|a| a.get_id() == id.as_str()) else {
            continue;
        };
        let key = arg.get_long().unwrap_or(id.as_str()).to_string();
        if expanded.from_file.contains(&id) {
            return Err(ConfigError::Value {
                file: file.to_string(),
                key,
                message: format!(
                    "is set per API when the file lists `{}`: move it into the entries of `{}`",
                    config::APIS_KEY,
                    config::APIS_KEY
                ),
            }
            .into());
        }
        if matches!(
            m.value_source(&id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        ) {
            let given = if arg.is_positional() {
                format!("the {} argument", id.to_uppercase())
            } else {
                format!("--{key}")
            };
            return Err(UserError::msg(format!(
                "{given} is per API, and config file {file} lists `{}`: set `{key}` in its entries",
                config::APIS_KEY
            ))
            .into());
        }
    }
    Ok(())
}

/// The keys of entry `path` (`apis[i]`) before it is parsed: no server-wide setting, a `name`
/// and a `spec`, a valid name no entry before it (`apis`) has.
fn check_entry(
    map: &serde_json::Map<String, Value>,
    apis: &[ApiConfig],
    entry_keys: &[String],
    top_keys: &[String],
    file: &str,
    path: &str,
) -> Result<(), ConfigError> {
    let value_err = |key: String, message: String| ConfigError::Value {
        file: file.to_string(),
        key,
        message,
    };
    for key in map.keys() {
        let k = key.replace('_', "-");
        if !entry_keys.contains(&k) && top_keys.contains(&k) {
            return Err(value_err(
                format!("{path}.{key}"),
                "is a setting of the whole server, not of one API: set it at the top level of the file".into(),
            ));
        }
    }
    for required in [NAME, "spec"] {
        if map.get(required).is_none_or(Value::is_null) {
            return Err(value_err(path.to_string(), format!("needs `{required}`")));
        }
    }
    let name = map.get(NAME).and_then(Value::as_str).unwrap_or_default();
    multi::check_name(name).map_err(|e| value_err(format!("{path}.{NAME}"), e))?;
    if let Some(j) = apis.iter().position(|a| a.name == name) {
        return Err(value_err(
            format!("{path}.{NAME}"),
            format!(
                "`{name}` is the name of {}[{j}] too: API names are unique",
                config::APIS_KEY
            ),
        ));
    }
    Ok(())
}

/// Entry `path` (`apis[i]`) parsed with `entry_cmd`, with its warnings (literal secrets).
fn parse_entry(
    entry_cmd: &Command,
    entry: &Value,
    file: &str,
    path: &str,
) -> anyhow::Result<(ApiConfig, Vec<String>)> {
    let value_err = |message: String| ConfigError::Value {
        file: file.to_string(),
        key: path.to_string(),
        message,
    };
    let name = entry
        .get(NAME)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let auth_env = format!("OPENAPI_MCP_{}_<SCHEME>", name.to_ascii_uppercase());
    let tokens = config::entry_tokens(entry_cmd, file, path, entry, &auth_env)?;
    let matches = entry_cmd
        .clone()
        .try_get_matches_from(&tokens.argv)
        .map_err(|e| {
            let text = e.to_string();
            let line = text.lines().next().unwrap_or_default();
            value_err(line.strip_prefix("error: ").unwrap_or(line).to_string())
        })?;
    let mut spec = SpecArgs::from_arg_matches(&matches).map_err(|e| value_err(e.to_string()))?;
    if spec.prefix.is_none() {
        spec.prefix = Some(name.clone());
    }
    let api = ApiConfig {
        spec,
        options: ApiOptions::from_matches(&matches),
        from_file: tokens.from_file,
        matches,
        name,
        file: file.to_string(),
        key: path.to_string(),
    };
    Ok((api, tokens.warnings))
}

/// The entries' workflow keys (#39): each `arazzo:` document is a file (a missing one is a
/// mistake in the config file; one that is there but broken only loses its workflows, at
/// start-up), and `workflows-only` has workflows to serve and operations it can hide: not in
/// `--mode hybrid`, whose search would still find the API's operations (tools mode unlists
/// them; dynamic and code mode leave them out of search and `call_operation`).
fn check_workflows(m: &ArgMatches, apis: &[ApiConfig], file: &str) -> anyhow::Result<()> {
    let value_err = |key: String, message: String| ConfigError::Value {
        file: file.to_string(),
        key,
        message,
    };
    let server = ServeArgs::from_arg_matches(m).map_err(|e| anyhow::anyhow!("{e}"))?;
    for api in apis {
        for (j, path) in api.spec.arazzo.iter().enumerate() {
            if !path.is_file() {
                return Err(value_err(
                    format!("{}.arazzo[{j}]", api.key),
                    format!("{}: no such file", path.display()),
                )
                .into());
            }
        }
        if !api.spec.workflows_only {
            continue;
        }
        let key = format!("{}.workflows-only", api.key);
        if api.spec.arazzo.is_empty() && !openapi_mcp_arazzo::load::is_document(&api.spec.spec) {
            return Err(value_err(
                key,
                format!(
                    "API `{}` has no workflows to serve instead of its operations: list Arazzo documents in `{}.arazzo`, or make its `spec` one",
                    api.name, api.key
                ),
            )
            .into());
        }
        if server.mode == openapi_mcp_runtime::serve::Mode::Hybrid {
            return Err(value_err(
                key,
                format!(
                    "cannot hide API `{}`'s operations in mode hybrid (its search would still find them): drop it, or serve mode tools, dynamic or code",
                    api.name
                ),
            )
            .into());
        }
    }
    Ok(())
}

/// The APIs' credential modes together (one oauth-proxy API at most, each mode's keys in its
/// mode), with the file and the key to change.
fn check_auths(m: &ArgMatches, apis: &[ApiConfig], file: String) -> anyhow::Result<()> {
    let server = ServeArgs::from_arg_matches(m).map_err(|e| anyhow::anyhow!("{e}"))?;
    let auths: Vec<ApiAuth<'_>> = apis.iter().map(|a| a.options.api_auth(&a.name)).collect();
    if let Err(e) = check_api_auth(&server, &auths) {
        let key = match e.api {
            Some(i) => format!("{}[{i}].{}", config::APIS_KEY, e.key),
            None => e.key.to_string(),
        };
        return Err(ConfigError::Value {
            file,
            key,
            message: e.message,
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::ffi::OsString;

    use super::*;
    use openapi_mcp_runtime::serve::UpstreamAuth;

    struct File(std::path::PathBuf);
    impl File {
        fn new(name: &str, text: &str) -> File {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "openapi-mcp-apis-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            File(p)
        }
    }
    impl Drop for File {
        fn drop(&mut self) {
            if let Some(d) = self.0.parent() {
                let _ = std::fs::remove_dir_all(d);
            }
        }
    }

    /// `openapi-mcp proxy --config FILE ARGS...` as `main` parses it.
    fn apis(file: &File, args: &[&str]) -> anyhow::Result<Vec<ApiConfig>> {
        let argv: Vec<OsString> = ["openapi-mcp", "proxy", "--config"]
            .into_iter()
            .map(OsString::from)
            .chain([file.0.clone().into_os_string()])
            .chain(args.iter().map(OsString::from))
            .collect();
        let expanded = config::expand(&crate::args::Cli::command(), crate::CONFIG_COMMANDS, argv)?;
        let mut cli = relaxed(crate::args::Cli::command());
        let m = cli.clone().try_get_matches_from(&expanded.argv)?;
        cli.build();
        let proxy = cli.find_subcommand("proxy").unwrap();
        let (_, pm) = m.subcommand().unwrap();
        Ok(parse(&expanded, proxy, pm)?.0)
    }

    const YAML: &str = "transport: http\napis:\n  - name: pets\n    spec: pets.yaml\n    base-url: http://127.0.0.1:1/api\n    include_tag: [pets]\n    header: ['X-A: 1']\n  - name: crm\n    spec: crm.yaml\n    prefix: ''\n    auth: [key=lit]\n    client: claude\n";

    /// #36 item 4: every environment variable a command-line option reads (`env = …`, in every
    /// subcommand, and in a generated server's command line) is one of the server's own
    /// variables, which no security scheme's credential is read from: a new option's variable
    /// cannot be forgotten.
    #[test]
    fn every_option_variable_is_reserved_from_credentials() {
        fn envs(cmd: &Command, out: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                if let Some(e) = a.get_env() {
                    out.push(e.to_string_lossy().into_owned());
                }
            }
            for sub in cmd.get_subcommands() {
                envs(sub, out);
            }
        }
        let mut all = Vec::new();
        envs(&crate::args::Cli::command(), &mut all);
        envs(
            &<openapi_mcp_runtime::serve::GeneratedCli as CommandFactory>::command(),
            &mut all,
        );
        assert!(
            all.iter().any(|e| e == "OPENAPI_MCP_AUTH_TOKEN"),
            "the enumeration finds the options' variables: {all:?}"
        );
        for e in &all {
            assert!(
                openapi_mcp_runtime::forward::auth::server_env(e).is_some(),
                "option variable {e} is not in forward::auth::SERVER_ENV"
            );
        }
    }

    #[test]
    fn yaml_and_toml_entries_parse_the_same() {
        let toml = "transport = \"http\"\n[[apis]]\nname = \"pets\"\nspec = \"pets.yaml\"\nbase-url = \"http://127.0.0.1:1/api\"\ninclude_tag = [\"pets\"]\nheader = [\"X-A: 1\"]\n[[apis]]\nname = \"crm\"\nspec = \"crm.yaml\"\nprefix = \"\"\nauth = [\"key=lit\"]\nclient = \"claude\"\n";
        for f in [File::new("m.yaml", YAML), File::new("m.toml", toml)] {
            let a = apis(&f, &[]).unwrap();
            assert_eq!(a.len(), 2);
            assert_eq!(a[0].name, "pets");
            assert_eq!(a[0].spec.spec, "pets.yaml");
            assert_eq!(
                a[0].spec.prefix.as_deref(),
                Some("pets"),
                "defaults to the name"
            );
            assert_eq!(a[0].spec.include_tag, ["pets"]);
            assert_eq!(
                a[0].options.base_url.as_deref(),
                Some("http://127.0.0.1:1/api")
            );
            assert_eq!(a[0].options.header, ["X-A: 1"]);
            assert_eq!(a[1].spec.prefix.as_deref(), Some(""));
            assert_eq!(a[1].options.auth, ["key=lit"]);
            assert_eq!(
                a[1].spec.client,
                openapi_mcp_convert::profile::Client::Claude
            );
            assert!(a[1].options.base_url.is_none());
        }
    }

    #[test]
    fn errors_name_the_file_and_the_entrys_key() {
        let entry = |rest: &str| format!("apis:\n  - name: pets\n    spec: p.yaml\n{rest}");
        let cases = [
            (
                entry("    base-url: [a]\n"),
                "key `apis[0].base-url`: expected a string",
            ),
            (
                entry("    base_ur: x\n"),
                "unknown key `apis[0].base_ur`; did you mean `base-url`?",
            ),
            (
                entry("    transport: http\n"),
                "`apis[0].transport`: is a setting of the whole server",
            ),
            (
                entry("    max-name-len: 500\n"),
                "key `apis[0].max-name-len`: invalid value '500'",
            ),
            (
                entry("  - name: pets\n    spec: q.yaml\n"),
                "key `apis[1].name`: `pets` is the name of apis[0] too",
            ),
            (
                "apis:\n  - name: Pets\n    spec: p.yaml\n".into(),
                "key `apis[0].name`: \"Pets\" is not an API name",
            ),
            (
                "apis:\n  - spec: p.yaml\n".into(),
                "key `apis[0]`: needs `name`",
            ),
            ("apis:\n  - name: a\n".into(), "key `apis[0]`: needs `spec`"),
            (
                "apis:\n  - just-a-string\n".into(),
                "key `apis[0]`: expected a map",
            ),
            (
                "apis: pets.yaml\n".into(),
                "key `apis`: expected a list of APIs",
            ),
            ("apis: []\n".into(), "key `apis`: lists no API"),
            (
                format!("base-url: http://x/\n{}", entry("")),
                "key `base-url`: is set per API when the file lists `apis`",
            ),
            (
                format!("spec: other.yaml\n{}", entry("")),
                "key `spec`: is set per API",
            ),
            (
                format!("upstream-client-id: gh\n{}", entry("")),
                "key `upstream-client-id`: is set per API",
            ),
            (
                entry("    upstream-client-id: gh\n"),
                "key `apis[0].upstream-client-id`: API `pets`: upstream-client-id is for upstream-auth oauth-proxy (this API's is static)",
            ),
            (
                entry("    upstream-auth: oauth-proxy\n    upstream-client-id: gh\n"),
                "key `apis[0].upstream-auth`: API `pets`: oauth-proxy needs `oauth-proxy: URL` at the top level",
            ),
            (
                format!(
                    "transport: http\noauth-proxy: http://127.0.0.1:1\n{}  - name: crm\n    spec: c.yaml\n  - name: gh\n    spec: g.yaml\n    upstream-auth: oauth-proxy\n    upstream-client-id: gh\n",
                    entry("    upstream-auth: oauth-proxy\n    upstream-client-id: pets\n")
                ),
                "key `apis[2].upstream-auth`: APIs `pets` (apis[0]) and `gh` (apis[2]) are both upstream-auth oauth-proxy",
            ),
            (
                format!(
                    "transport: http\noauth-proxy: http://127.0.0.1:1\n{}",
                    entry("")
                ),
                "key `oauth-proxy`: makes this server the authorization server for one API's users",
            ),
        ];
        for (text, want) in cases {
            let f = File::new("bad.yaml", &text);
            let err = format!("{:#}", apis(&f, &[]).err().unwrap());
            assert!(err.contains("bad.yaml"), "{err}");
            assert!(err.contains(want), "{text}\n=> {err}");
        }
        // The command line's per-API options have no API to go to either.
        let f = File::new("ok.yaml", &entry(""));
        let err = apis(&f, &["--auth", "k=v"]).err().unwrap().to_string();
        assert!(err.contains("--auth is per API"), "{err}");
        let err = apis(&f, &["some.yaml"]).err().unwrap().to_string();
        assert!(err.contains("the SPEC argument is per API"), "{err}");
        // Server-wide options still come from the command line.
        assert_eq!(apis(&f, &["--transport", "http"]).unwrap().len(), 1);
    }

    /// `upstream-auth` per entry; at the top level (file or command line) it is the default of
    /// the entries that do not set their own, not an error.
    #[test]
    fn upstream_auth_is_per_api_with_the_top_level_as_default() {
        let text = "transport: http\noauth-issuer: https://as.example\noauth-client-id: rs\nupstream-auth: token-exchange\napis:\n  - name: crm\n    spec: crm.yaml\n    token-exchange-audience: https://crm.example\n  - name: pets\n    spec: pets.yaml\n    upstream-auth: static\n";
        let f = File::new("modes.yaml", text);
        let a = apis(&f, &[]).unwrap();
        assert_eq!(a[0].options.upstream_auth, None, "the top level's");
        assert_eq!(a[1].options.upstream_auth, Some(UpstreamAuth::Static));
        assert_eq!(
            a[0].options.token_exchange_audience.as_deref(),
            Some("https://crm.example")
        );
        // The top level's default from the command line: `crm` is then static, and its
        // audience is refused naming its key.
        let err = format!(
            "{:#}",
            apis(&f, &["--upstream-auth", "static"]).err().unwrap()
        );
        assert!(
            err.contains("key `apis[0].token-exchange-audience`: API `crm`: token-exchange-audience is for upstream-auth token-exchange (this API's is static)"),
            "{err}"
        );
    }
}
