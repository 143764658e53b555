//! openapi-mcp runtime: load OpenAPI specs, convert their operations to MCP tools, and serve
//! those tools by forwarding calls to the real API.
//!
//! Data flows one way: [`load`] -> [`convert`] -> [`model::ToolSet`] -> proxy server / codegen.

pub mod convert;
pub mod diag;
/// Differences between two converted versions of an API (`openapi-mcp diff`).
pub mod diff;
pub mod dynamic;
pub mod extensions;
pub mod filter;
pub mod forward;
/// Invariant checks shared by the fuzz targets (`fuzz/`) and their replay tests.
pub mod fuzz_checks;
pub mod load;
/// The names lockfile (`--lock FILE`): published tool names stay stable across spec versions.
pub mod lock;
pub mod model;
pub mod naming;
/// The loaded documents' compact tree.
pub mod node;
pub mod overrides;
pub mod pattern;
pub mod pointer;
pub mod profile;
pub mod schema;
pub mod server;
pub mod transport;
pub mod validate;

pub use convert::{Conversion, ConvertReport, OutputSchemaMode, ToolOptions, convert};
pub use load::{LoadError, Spec, SpecSource, load};
pub use rmcp;
