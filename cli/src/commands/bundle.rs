//! `openapi-mcp bundle`: an MCP Bundle (MCPB, the format Claude Desktop installs with one click)
//! and a `server.json` for the MCP Registry, for a spec served either by this openapi-mcp binary
//! (`proxy`, the spec copied into the bundle) or by a server that `openapi-mcp generate` wrote and
//! its owner built (`--binary`).
//!
//! The directory written:
//!   manifest.json   the MCPB manifest (manifest_version 0.3, `server.type: "binary"`): the
//!                   command runs `${__dirname}/server/<binary>`; each credential variable of the
//!                   spec's security schemes is a `user_config` entry marked `sensitive` (Claude
//!                   Desktop asks for it and keeps it in the OS keychain), passed to the server
//!                   in `mcp_config.env`
//!   server/<binary> the server binary
//!   spec.yaml|json  the spec (proxy only, when SPEC is a file)
//!   server.json     the MCP Registry entry: the npm and PyPI packages of openapi-mcp serving the
//!                   spec (proxy only), the packed bundle (`--mcpb-url`/`--mcpb-sha256`) and a
//!                   hosted Streamable HTTP deployment (`--remote-url`)
//!
//! `mcpb pack DIR` (npm `@anthropic-ai/mcpb`) makes the `.mcpb` file from the directory.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use openapi_mcp_convert::pipeline::LockMode;
use openapi_mcp_runtime::model::{SecurityScheme, ToolSet, ambiguous_env};
use openapi_mcp_runtime::serve::exit::UserError;
use serde_json::{Map, Value, json};

use crate::args::{BundleArgs, ProxyArgs, SpecArgs};

/// The MCPB manifest version written (0.3: `binary` servers, `user_config`, `platform_overrides`;
/// the newest that Claude Desktop and `mcpb` 2.x both take without the `uv` server type of 0.4).
pub const MANIFEST_VERSION: &str = "0.3";
/// The MCP Registry's server.json schema the entry follows.
pub const SERVER_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
/// The npm and PyPI packages of openapi-mcp itself (packaging/npm, packaging/pypi).
const NPM_PACKAGE: &str = "openapi-mcp";
const PYPI_PACKAGE: &str = "openapi-mcp-cli";

/// `proxy` options given after `--`, parsed as `openapi-mcp proxy` parses them.
#[derive(Parser, Debug)]
#[command(name = "proxy")]
struct ProxyLine {
    #[command(flatten)]
    proxy: ProxyArgs,
}

/// SPEC alone, for a generated server (its conversion options were fixed by `generate`).
#[derive(Parser, Debug)]
struct SpecLine {
    #[command(flatten)]
    spec: SpecArgs,
}

/// One credential variable of the spec, as the bundle asks for it.
#[derive(Debug, Clone, PartialEq)]
struct Credential {
    /// The environment variable (`OPENAPI_MCP_API_KEY`).
    env: String,
    /// Its `user_config` key (`api_key`).
    key: String,
    title: String,
    description: String,
}

pub async fn run(args: BundleArgs) -> anyhow::Result<ExitCode> {
    // The spec options in the server's arguments decide the tools (and are checked here as
    // `proxy` would check them); a generated server takes serving options only.
    let spec_args = if args.binary.is_none() {
        let mut line = vec!["proxy".to_string(), args.spec.clone()];
        line.extend(args.server_args.iter().cloned());
        let parsed = ProxyLine::try_parse_from(&line).map_err(|e| {
            UserError::msg(format!(
                "the proxy options after `--`: {}",
                e.to_string().trim_end()
            ))
        })?;
        parsed.proxy.spec
    } else {
        SpecLine::try_parse_from(["bundle", args.spec.as_str()])
            .map_err(|e| UserError::msg(e.to_string().trim_end().to_string()))?
            .spec
    };
    let opts = super::pipeline_options(&spec_args, spec_args.tool_options()?, LockMode::Read);
    let conversion = super::load_and_convert(&opts).await?;
    let set = conversion.tools;
    if set.tools.is_empty() {
        return Err(UserError::msg(
            "the spec has no operations that convert to tools: nothing to bundle",
        )
        .into());
    }

    let name = args
        .name
        .clone()
        .unwrap_or_else(|| openapi_mcp_codegen::default_crate_name(&set.title));
    let version = args
        .bundle_version
        .clone()
        .or_else(|| Some(set.version.trim().to_string()).filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "0.1.0".to_string());
    let binary = match &args.binary {
        Some(b) => b.clone(),
        None => std::env::current_exe().context("locating this openapi-mcp binary")?,
    };
    let binary_name = binary
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .context("--binary has no file name")?;
    let platform = binary_platform(&binary)?;
    let spec_file = match (&args.binary, is_url(&args.spec)) {
        (None, false) => Some(format!(
            "spec.{}",
            Path::new(&args.spec)
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase())
                .filter(|e| e == "json" || e == "yml" || e == "yaml")
                .unwrap_or_else(|| "yaml".to_string())
        )),
        _ => None,
    };
    let (credentials, skipped) = credentials(&set);
    for (base, schemes) in &skipped {
        eprintln!(
            "warning: the security schemes {} all map to {base}, which the server therefore does not read: the bundle asks for none of them (pass `--auth SCHEME=VALUE` after `--`)",
            schemes.join(", ")
        );
    }

    let mut server_args: Vec<String> = Vec::new();
    if args.binary.is_none() {
        server_args.push("proxy".into());
        server_args.push(match &spec_file {
            Some(f) => format!("${{__dirname}}/{f}"),
            None => args.spec.clone(),
        });
    }
    server_args.extend(args.server_args.iter().cloned());

    let display = args
        .display_name
        .clone()
        .unwrap_or_else(|| set.title.clone());
    let description = format!("MCP server for the {} API", set.title.trim());
    let manifest = manifest(&ManifestInput {
        name: &name,
        display: &display,
        version: &version,
        description: &description,
        long_description: set.description.as_deref(),
        author: args.author.as_deref().unwrap_or("openapi-mcp"),
        binary_name: &binary_name,
        args: &server_args,
        platform,
        credentials: &credentials,
    });
    let registry_name = args.registry_name.clone().unwrap_or_else(|| {
        eprintln!(
            "note: server.json is named com.example/{name}: pass --registry-name (io.github.<user>/{name}, or under a domain you own) before publishing it"
        );
        format!("com.example/{name}")
    });
    let server_json = server_json(&ServerJsonInput {
        registry_name: &registry_name,
        description: &description,
        version: &version,
        proxy_spec: args.binary.is_none().then_some(args.spec.as_str()),
        proxy_args: &args.server_args,
        credentials: &credentials,
        mcpb: args.mcpb_url.as_deref().zip(args.mcpb_sha256.as_deref()),
        remote_url: args.remote_url.as_deref(),
        remote_bearer: args.remote_bearer,
    })?;

    write_bundle(
        &args.out,
        args.force,
        &binary,
        &binary_name,
        spec_file.as_deref().map(|f| (Path::new(&args.spec), f)),
        &manifest,
        &server_json,
    )?;
    eprintln!(
        "openapi-mcp: bundled {name} {version} ({} tools, {} credential variables) in {}; pack it with: npx -y @anthropic-ai/mcpb pack {}",
        set.tools.len(),
        credentials.len(),
        args.out.display(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn is_url(spec: &str) -> bool {
    spec.starts_with("http://") || spec.starts_with("https://")
}

/// The MCPB platform of a binary, from its magic number.
fn binary_platform(path: &Path) -> anyhow::Result<&'static str> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .with_context(|| format!("reading {}", path.display()))
        .map_err(super::user_error)?;
    Ok(match magic {
        [0x7f, b'E', b'L', b'F'] => "linux",
        [b'M', b'Z', _, _] => "win32",
        [0xcf, 0xfa, 0xed, 0xfe] | [0xfe, 0xed, 0xfa, 0xcf] | [0xca, 0xfe, 0xba, 0xbe] => "darwin",
        _ => {
            return Err(UserError::msg(format!(
                "{} is not an executable (ELF, Mach-O or PE)",
                path.display()
            ))
            .into());
        }
    })
}

/// The credential variables the server reads, in spec order (the ones of schemes whose names
/// collide are left out: the server reads none of them), and the collisions.
fn credentials(set: &ToolSet) -> (Vec<Credential>, Vec<(String, Vec<String>)>) {
    let ambiguous = ambiguous_env(&set.security_schemes);
    let mut out: Vec<Credential> = Vec::new();
    for (scheme_name, scheme) in &set.security_schemes {
        if ambiguous
            .iter()
            .any(|(_, names)| names.contains(scheme_name))
        {
            continue;
        }
        let how = match scheme {
            SecurityScheme::ApiKey { name, location } => {
                let location = format!("{location:?}").to_lowercase();
                format!("sent as the {name} {location}")
            }
            SecurityScheme::Bearer => "sent as Authorization: Bearer".to_string(),
            SecurityScheme::Basic => "HTTP Basic authentication".to_string(),
            SecurityScheme::OAuth2ClientCredentials { .. } => {
                "OAuth 2.0, client credentials flow".to_string()
            }
            SecurityScheme::OAuth2Token | SecurityScheme::OAuth2AuthorizationCode { .. } => {
                "OAuth 2.0, sent as a bearer token".to_string()
            }
        };
        let vars = scheme.env_var_names(scheme_name);
        let base = openapi_mcp_runtime::model::credential_env_base(scheme_name);
        for env in vars {
            if out.iter().any(|c| c.env == env) {
                continue;
            }
            let suffix = env.strip_prefix(&base).unwrap_or("");
            let (what, title_what) = match (scheme, suffix) {
                (_, "_USERNAME") => ("the user name".to_string(), "user name"),
                (_, "_PASSWORD") => ("the password".to_string(), "password"),
                (_, "_CLIENT_ID") => ("the client ID".to_string(), "client ID"),
                (_, "_CLIENT_SECRET") => ("the client secret".to_string(), "client secret"),
                (SecurityScheme::Basic, _) => (
                    "user:password in one value (instead of the two above)".to_string(),
                    "user:password",
                ),
                (SecurityScheme::OAuth2ClientCredentials { .. }, _) => (
                    "an access token (instead of the client credentials above)".to_string(),
                    "access token",
                ),
                (SecurityScheme::ApiKey { .. }, _) => ("the API key".to_string(), "API key"),
                (SecurityScheme::Bearer, _) => ("the bearer token".to_string(), "bearer token"),
                _ => ("the access token".to_string(), "access token"),
            };
            let key = env
                .strip_prefix("OPENAPI_MCP_")
                .unwrap_or(&env)
                .to_ascii_lowercase();
            out.push(Credential {
                title: format!("{} ({scheme_name})", capitalize(title_what)),
                description: format!(
                    "{} for the `{scheme_name}` security scheme ({how}); the server reads it from {env}. Leave it empty for operations that need none.",
                    capitalize(&what)
                ),
                env,
                key,
            });
        }
    }
    (out, ambiguous)
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

struct ManifestInput<'a> {
    name: &'a str,
    display: &'a str,
    version: &'a str,
    description: &'a str,
    long_description: Option<&'a str>,
    author: &'a str,
    binary_name: &'a str,
    args: &'a [String],
    platform: &'static str,
    credentials: &'a [Credential],
}

/// The MCPB manifest.
fn manifest(m: &ManifestInput<'_>) -> Value {
    let mut user_config = Map::new();
    let mut env = Map::new();
    for c in m.credentials {
        user_config.insert(
            c.key.clone(),
            json!({
                "type": "string",
                "title": c.title,
                "description": c.description,
                "sensitive": true,
                "required": false,
            }),
        );
        env.insert(
            c.env.clone(),
            Value::String(format!("${{user_config.{}}}", c.key)),
        );
    }
    let mut out = json!({
        "manifest_version": MANIFEST_VERSION,
        "name": m.name,
        "display_name": m.display,
        "version": m.version,
        "description": m.description,
    });
    let obj = out.as_object_mut().expect("an object");
    if let Some(long) = m.long_description.filter(|d| !d.trim().is_empty()) {
        obj.insert("long_description".into(), Value::String(long.to_string()));
    }
    obj.insert("author".into(), json!({ "name": m.author }));
    obj.insert(
        "server".into(),
        json!({
            "type": "binary",
            "entry_point": format!("server/{}", m.binary_name),
            "mcp_config": {
                "command": format!("${{__dirname}}/server/{}", m.binary_name),
                "args": m.args,
                "env": env,
            },
        }),
    );
    obj.insert("tools_generated".into(), Value::Bool(true));
    obj.insert("keywords".into(), json!(["openapi", "api", "mcp"]));
    obj.insert("compatibility".into(), json!({ "platforms": [m.platform] }));
    if !user_config.is_empty() {
        obj.insert("user_config".into(), Value::Object(user_config));
    }
    out
}

struct ServerJsonInput<'a> {
    registry_name: &'a str,
    description: &'a str,
    version: &'a str,
    /// The spec served by `openapi-mcp proxy` (None for a generated server).
    proxy_spec: Option<&'a str>,
    proxy_args: &'a [String],
    credentials: &'a [Credential],
    /// The packed bundle's download URL and SHA-256.
    mcpb: Option<(&'a str, &'a str)>,
    remote_url: Option<&'a str>,
    remote_bearer: bool,
}

/// The registry's name rule (`namespace/name`), its description limit, and a specific version.
fn check_server_json(input: &ServerJsonInput<'_>) -> anyhow::Result<()> {
    let name_ok = input.registry_name.split_once('/').is_some_and(|(ns, n)| {
        !ns.is_empty()
            && !n.is_empty()
            && !n.contains('/')
            && ns
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-".contains(c))
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    });
    if !name_ok || input.registry_name.len() > 200 {
        return Err(UserError::msg(format!(
            "--registry-name {:?}: the MCP Registry wants NAMESPACE/NAME in reverse-DNS form (io.github.<user>/<name>)",
            input.registry_name
        ))
        .into());
    }
    if let Some((_, sha)) = input.mcpb
        && (sha.len() != 64 || !sha.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')))
    {
        return Err(
            UserError::msg("--mcpb-sha256: 64 lowercase hexadecimal digits (sha256sum)").into(),
        );
    }
    if let Some(url) = input.remote_url
        && !is_url(url)
    {
        return Err(UserError::msg(format!("--remote-url {url:?}: an http(s) URL")).into());
    }
    Ok(())
}

/// The MCP Registry entry.
fn server_json(input: &ServerJsonInput<'_>) -> anyhow::Result<Value> {
    check_server_json(input)?;
    let description: String = input.description.chars().take(100).collect();
    let env: Vec<Value> = input
        .credentials
        .iter()
        .map(|c| {
            json!({
                "name": c.env,
                "description": c.description,
                "isRequired": false,
                "isSecret": true,
                "format": "string",
            })
        })
        .collect();
    let mut packages: Vec<Value> = Vec::new();
    if let Some(spec) = input.proxy_spec {
        // `npx -y openapi-mcp proxy SPEC [OPTIONS]`, `uvx openapi-mcp-cli proxy SPEC [OPTIONS]`:
        // a spec given as a URL is fixed; a file is the user's to give.
        let mut arguments = vec![json!({ "type": "positional", "value": "proxy" })];
        arguments.push(if is_url(spec) {
            json!({ "type": "positional", "value": spec, "description": "The OpenAPI spec served" })
        } else {
            json!({
                "type": "positional",
                "valueHint": "spec",
                "description": "Path or URL of the OpenAPI spec to serve",
                "isRequired": true,
                "format": "filepath",
            })
        });
        arguments.extend(
            input
                .proxy_args
                .iter()
                .map(|a| json!({ "type": "positional", "value": a })),
        );
        let version = env!("CARGO_PKG_VERSION");
        for (registry, identifier, hint) in
            [("npm", NPM_PACKAGE, "npx"), ("pypi", PYPI_PACKAGE, "uvx")]
        {
            packages.push(json!({
                "registryType": registry,
                "identifier": identifier,
                "version": version,
                "runtimeHint": hint,
                "transport": { "type": "stdio" },
                "packageArguments": arguments,
                "environmentVariables": env,
            }));
        }
    }
    if let Some((url, sha)) = input.mcpb {
        packages.push(json!({
            "registryType": "mcpb",
            "identifier": url,
            "version": input.version,
            "fileSha256": sha,
            "transport": { "type": "stdio" },
            "environmentVariables": env,
        }));
    }
    let mut out = json!({
        "$schema": SERVER_SCHEMA,
        "name": input.registry_name,
        "description": description,
        "version": input.version,
    });
    let obj = out.as_object_mut().expect("an object");
    if !packages.is_empty() {
        obj.insert("packages".into(), Value::Array(packages));
    }
    if let Some(url) = input.remote_url {
        let mut remote = json!({ "type": "streamable-http", "url": url });
        if input.remote_bearer {
            remote["headers"] = json!([{
                "name": "Authorization",
                "description": "Bearer <token>: the deployment's --auth-token (OPENAPI_MCP_AUTH_TOKEN)",
                "isRequired": true,
                "isSecret": true,
            }]);
        }
        obj.insert("remotes".into(), json!([remote]));
    }
    Ok(out)
}

/// Writes the bundle directory: a new or empty one, or a previous bundle (it has a
/// manifest.json), whose files are replaced; anything else needs --force.
fn write_bundle(
    out: &Path,
    force: bool,
    binary: &Path,
    binary_name: &str,
    spec: Option<(&Path, &str)>,
    manifest: &Value,
    server_json: &Value,
) -> anyhow::Result<()> {
    if out.exists() {
        let previous = out.join("manifest.json").is_file();
        let empty = std::fs::read_dir(out)
            .with_context(|| format!("reading {}", out.display()))?
            .next()
            .is_none();
        if !previous && !empty && !force {
            return Err(UserError::msg(format!(
                "{} is not empty and holds no bundle (no manifest.json): choose another -o, or pass --force",
                out.display()
            ))
            .into());
        }
    }
    let server_dir: PathBuf = out.join("server");
    std::fs::create_dir_all(&server_dir)
        .with_context(|| format!("creating {}", server_dir.display()))?;
    let dest = server_dir.join(binary_name);
    std::fs::copy(binary, &dest)
        .with_context(|| format!("copying {} to {}", binary.display(), dest.display()))?;
    if let Some((spec, name)) = spec {
        std::fs::copy(spec, out.join(name))
            .with_context(|| format!("copying the spec {}", spec.display()))?;
    }
    for (file, value) in [("manifest.json", manifest), ("server.json", server_json)] {
        let text = serde_json::to_string_pretty(value).context("serializing")? + "\n";
        std::fs::write(out.join(file), text)
            .with_context(|| format!("writing {}", out.join(file).display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cred(env: &str, key: &str) -> Credential {
        Credential {
            env: env.into(),
            key: key.into(),
            title: "t".into(),
            description: "d".into(),
        }
    }

    #[test]
    fn manifest_asks_for_each_credential_as_a_sensitive_user_config() {
        let creds = [cred("OPENAPI_MCP_API_KEY", "api_key")];
        let args = vec!["proxy".to_string(), "${__dirname}/spec.yaml".to_string()];
        let m = manifest(&ManifestInput {
            name: "petstore-mcp",
            display: "Petstore",
            version: "1.0.0",
            description: "MCP server for the Petstore API",
            long_description: None,
            author: "me",
            binary_name: "openapi-mcp",
            args: &args,
            platform: "linux",
            credentials: &creds,
        });
        assert_eq!(m["server"]["type"], "binary");
        assert_eq!(m["server"]["entry_point"], "server/openapi-mcp");
        assert_eq!(
            m["server"]["mcp_config"]["env"]["OPENAPI_MCP_API_KEY"],
            "${user_config.api_key}"
        );
        assert_eq!(m["user_config"]["api_key"]["sensitive"], true);
        assert_eq!(m["compatibility"]["platforms"][0], "linux");
    }

    #[test]
    fn server_json_lists_the_packages_and_checks_its_inputs() {
        let creds = [cred("OPENAPI_MCP_API_KEY", "api_key")];
        let mut input = ServerJsonInput {
            registry_name: "io.github.someone/petstore-mcp",
            description: "MCP server for the Petstore API",
            version: "1.0.0",
            proxy_spec: Some("https://example.com/openapi.yaml"),
            proxy_args: &[],
            credentials: &creds,
            mcpb: Some(("https://github.com/o/r/releases/download/v1/p.mcpb", "ab")),
            remote_url: Some("https://mcp.example.com/mcp"),
            remote_bearer: true,
        };
        assert!(server_json(&input).is_err(), "a short sha256");
        let sha = "a".repeat(64);
        input.mcpb = Some(("https://github.com/o/r/releases/download/v1/p.mcpb", &sha));
        let s = server_json(&input).unwrap();
        let kinds: Vec<_> = s["packages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["registryType"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["npm", "pypi", "mcpb"]);
        assert_eq!(
            s["packages"][0]["packageArguments"][1]["value"],
            "https://example.com/openapi.yaml"
        );
        assert_eq!(
            s["packages"][0]["environmentVariables"][0]["isSecret"],
            true
        );
        assert_eq!(s["remotes"][0]["headers"][0]["name"], "Authorization");
        input.registry_name = "petstore";
        assert!(server_json(&input).is_err(), "a name without a namespace");
    }
}
