//! openapi-mcp runtime: serve a tool set ([`toolset::ToolSet`]) as an MCP server and forward every
//! call to the real API. This is what `openapi-mcp proxy` runs and what every generated server
//! crate depends on; it never converts a spec (that is `openapi-mcp-convert`).
//!
//! - [`forward`]: a tool call -> the HTTP request (encoders, auth, response mapping).
//! - [`server`]: the rmcp `ServerHandler`, tool state and paging, the call path.
//! - [`confirm`]: `--confirm`, the user's consent before a call is sent (elicitation, both eras).
//! - [`instructions`]: the server's instructions, from the spec.
//! - [`progress`]: progress notifications while a call waits for the API.
//! - [`dynamic`]: the discovery tools of `--mode dynamic|hybrid` and their search index.
//! - [`code`]: `--mode code`, scripts against an `api` object in an embedded JavaScript sandbox.
//! - [`transport`]: stdio and Streamable HTTP (host/origin checks, auth, limits).
//! - [`connections`]: the HTTP accept loop (connection cap, header-read/idle timeout).
//! - [`sessions`]: bounds on Streamable HTTP sessions (caps, half-open expiry, issued ids).
//! - [`multi`]: several APIs in one server (`apis:`): merged tool sets, per-API variables.
//! - [`observe`]: Prometheus metrics, the audit log, readiness (`/metrics`, `--audit-log`, `/readyz`).

pub mod code;
#[cfg(feature = "cli")]
pub mod config;
pub mod confirm;
pub mod connections;
pub mod dynamic;
pub mod exit;
pub mod forward;
pub mod instructions;
pub mod multi;
pub mod oauth;
pub mod observe;
pub mod otel;
pub mod progress;
pub mod serve;
pub mod server;
pub mod sessions;
pub mod shown;
pub mod transport;

pub use openapi_mcp_toolset as toolset;
pub use openapi_mcp_toolset::{filter, model, naming, validate};
pub use rmcp;
