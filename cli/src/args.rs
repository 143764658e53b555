//! Command-line arguments.

use clap::{Args, Parser, Subcommand, ValueEnum};
use openapi_mcp_convert::profile::{Client, ClientProfile};
use openapi_mcp_convert::{OutputSchemaMode, ToolOptions};
use openapi_mcp_runtime::filter::{Filter, Pattern};
use openapi_mcp_runtime::model::HttpMethod;

#[derive(Parser, Debug)]
#[command(
    name = "openapi-mcp",
    version,
    about = "Put any OpenAPI-described REST API in front of LLM agents as MCP tools"
)]
pub struct Cli {
    /// More logging on stderr (-v debug, -vv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per run
pub enum Command {
    /// List the MCP tools a spec converts to (a table, or `--json` for the exact tools/list array).
    Tools(ToolsArgs),
    /// Serve the spec's operations as MCP tools (stdio or Streamable HTTP), forwarding calls to the API.
    Proxy(crate::commands::proxy::ProxyArgs),
    /// Write a standalone Rust MCP server crate for the spec (same tools and behaviour as `proxy`).
    Generate(crate::commands::generate::GenerateArgs),
    /// Report what an MCP client would reject or degrade in the spec's tool list (exit 1 on
    /// anything it rejects; with --strict also on warnings).
    Lint(crate::commands::lint::LintArgs),
    /// Compare two versions of a spec: tools added, removed and renamed, and breaking and
    /// non-breaking inputSchema changes (exit 1 when anything is breaking).
    Diff(crate::commands::diff::DiffArgs),
}

#[derive(Args, Debug)]
pub struct ToolsArgs {
    #[command(flatten)]
    pub spec: SpecArgs,
    /// Print exactly the `tools` array that tools/list serves.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when the conversion produced any diagnostic.
    #[arg(long)]
    pub strict: bool,
    /// Size of the tools/list payload in bytes and tokens (o200k_base), per tool and per
    /// `proxy --mode`, with a recommendation for large APIs.
    #[arg(long, conflicts_with = "json")]
    pub stats: bool,
    /// Write the --lock file for this spec (new operations added, removed ones marked removed;
    /// locked names kept). Without it the file is only written when it does not exist yet.
    #[arg(long, requires = "lock")]
    pub update_lock: bool,
}

/// The spec and the conversion options shared by `tools`, `proxy` and `generate`.
#[derive(Args, Debug, Clone)]
pub struct SpecArgs {
    /// OpenAPI 3.0/3.1 or Swagger 2.0 spec: a file path or an http(s) URL, JSON or YAML.
    pub spec: String,
    /// Tool name prefix (default: derived from info.title; '' for none).
    #[arg(long)]
    pub prefix: Option<String>,
    /// Longest tool name (clients reject names over 64 characters).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(16..=128))]
    pub max_name_len: u16,
    /// Longest tool description, in characters.
    #[arg(long, default_value_t = 1024)]
    pub max_description_len: usize,
    /// Output schemas: lenient (shape without rejecting deviations), strict (as the spec says) or none.
    #[arg(long, value_enum, default_value_t = OutputSchemaArg::Lenient)]
    pub output_schema: OutputSchemaArg,
    /// Lenient output schemas keep nested definitions up to this many $refs deep (deeper ones accept anything).
    #[arg(long, default_value_t = 1)]
    pub output_ref_depth: usize,
    /// Only operations with one of these tags (glob; repeatable, comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub include_tag: Vec<String>,
    /// Leave out operations with one of these tags (glob).
    #[arg(long, value_delimiter = ',')]
    pub exclude_tag: Vec<String>,
    /// Only operations whose operationId or tool name matches (glob).
    #[arg(long, value_delimiter = ',')]
    pub include_op: Vec<String>,
    /// Leave out operations whose operationId or tool name matches (glob).
    #[arg(long, value_delimiter = ',')]
    pub exclude_op: Vec<String>,
    /// Only operations whose path matches (glob, e.g. '/repos/**').
    #[arg(long, value_delimiter = ',')]
    pub include_path: Vec<String>,
    /// Leave out operations whose path matches (glob).
    #[arg(long, value_delimiter = ',')]
    pub exclude_path: Vec<String>,
    /// Only these HTTP methods (e.g. get,head).
    #[arg(long, value_delimiter = ',')]
    pub method: Vec<String>,
    /// Leave out deprecated operations.
    #[arg(long)]
    pub exclude_deprecated: bool,
    /// Shape the tool list for this MCP client (name limits, schema keywords it rejects);
    /// generic leaves it as is.
    #[arg(long, value_enum, default_value_t = ClientArg::Generic)]
    pub client: ClientArg,
    /// The name the client registers this server under (Claude Code and Cursor count it
    /// against their tool-name limits; default: the first word of the API title).
    #[arg(long, value_name = "NAME")]
    pub server_name: Option<String>,
    /// Per-tool renames, titles, descriptions, hidden and pinned arguments (YAML or JSON).
    #[arg(long, value_name = "FILE")]
    pub overrides: Option<std::path::PathBuf>,
    /// Names lockfile (JSON, or YAML for .yaml/.yml): published tool names stay stable across
    /// spec versions (`tools --lock FILE --update-lock` writes it; proxy/generate only read it).
    #[arg(long, value_name = "FILE")]
    pub lock: Option<std::path::PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientArg {
    Generic,
    Claude,
    Openai,
    Gemini,
    Cursor,
    Vscode,
}

impl ClientArg {
    pub fn client(self) -> Client {
        match self {
            ClientArg::Generic => Client::Generic,
            ClientArg::Claude => Client::Claude,
            ClientArg::Openai => Client::Openai,
            ClientArg::Gemini => Client::Gemini,
            ClientArg::Cursor => Client::Cursor,
            ClientArg::Vscode => Client::Vscode,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum OutputSchemaArg {
    Lenient,
    Strict,
    None,
}

impl SpecArgs {
    pub fn tool_options(&self) -> anyhow::Result<ToolOptions> {
        let pats = |v: &[String]| -> anyhow::Result<Vec<Pattern>> {
            v.iter()
                .map(|p| Pattern::new(p).map_err(anyhow::Error::msg))
                .collect()
        };
        let path_pats = |v: &[String]| -> anyhow::Result<Vec<Pattern>> {
            v.iter()
                .map(|p| Pattern::path(p).map_err(anyhow::Error::msg))
                .collect()
        };
        let methods = self
            .method
            .iter()
            .map(|m| {
                HttpMethod::parse(m).ok_or_else(|| anyhow::anyhow!("unknown HTTP method {m:?}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(ToolOptions {
            prefix: self.prefix.clone(),
            max_name_len: usize::from(self.max_name_len),
            max_description_len: self.max_description_len,
            output_schema: match self.output_schema {
                OutputSchemaArg::Lenient => OutputSchemaMode::Lenient,
                OutputSchemaArg::Strict => OutputSchemaMode::Strict,
                OutputSchemaArg::None => OutputSchemaMode::None,
            },
            output_ref_depth: self.output_ref_depth,
            filter: Filter {
                include_tags: pats(&self.include_tag)?,
                exclude_tags: pats(&self.exclude_tag)?,
                include_operations: pats(&self.include_op)?,
                exclude_operations: pats(&self.exclude_op)?,
                include_paths: path_pats(&self.include_path)?,
                exclude_paths: path_pats(&self.exclude_path)?,
                methods,
                exclude_deprecated: self.exclude_deprecated,
            },
            client: ClientProfile {
                client: self.client.client(),
                server_name: self.server_name.clone(),
            },
        })
    }
}
