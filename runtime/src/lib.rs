//! openapi-mcp runtime: serve a tool set ([`toolset::ToolSet`]) as an MCP server and forward every
//! call to the real API. This is what `openapi-mcp proxy` runs and what every generated server
//! crate depends on; it never converts a spec (that is `openapi-mcp-convert`).
//!
//! Where each part lives:
//! - [`serve`]: the one entry point (`openapi-mcp proxy` and every generated `main`): serving
//!   options, resolving them, the run loop, the config file, exit statuses.
//! - [`server`]: the rmcp `ServerHandler`, tool state and paging, the call path; `--confirm`,
//!   progress notifications, the server's instructions, several APIs in one server.
//! - [`modes`]: `--mode dynamic|hybrid` (discovery tools and their search index) and `--mode code`
//!   (scripts in an embedded JavaScript sandbox).
//! - [`forward`]: a tool call -> the HTTP request (encoders, auth, response mapping).
//! - [`http`]: Streamable HTTP: transport, the accept loop, session bounds.
//! - [`oauth`]: the OAuth resource server, token introspection and exchange, the OAuth proxy.
//! - [`observe`]: Prometheus metrics, the audit log, readiness, OpenTelemetry traces.

#[cfg(feature = "http")]
pub mod embed;
pub mod extend;
pub mod features;
pub mod forward;
pub mod generated;
#[cfg(feature = "http")]
pub mod http;
pub mod modes;
pub mod oauth;
pub mod observe;
pub mod serve;
pub mod server;
pub mod tasks;

pub use openapi_mcp_toolset as toolset;
pub use openapi_mcp_toolset::{filter, model, naming, validate};
pub use rmcp;
