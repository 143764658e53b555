//! openapi-mcp converter: an OpenAPI spec (Swagger 2.0, OpenAPI 3.0, 3.1; JSON or YAML; a file or
//! a URL; split over many files) -> the tool set of the contract crate (`openapi-mcp-toolset`).
//!
//! - [`load`], [`node`], [`pointer`]: documents, `$ref` resolution, the compact read-only tree.
//! - [`convert`]: the conversion in two stages. `ir` lowers the spec once into its operations
//!   (either dialect's parameters, request body, security, server and responses in one typed
//!   shape); [`convert`] then builds a tool from each operation (inputs, outputs, names,
//!   annotations), with [`schema`] and [`pattern`] turning OpenAPI schemas into the JSON Schema
//!   2020-12 clients compile.
//! - Passes over the tool set: [`profile`] (client profiles), [`extensions`], [`overrides`],
//!   [`lock`]; [`diff`] compares two tool sets.
//! - [`pipeline`]: load -> convert -> profile -> overrides -> lock as one call, with each pass's
//!   report.
//! - [`diag`]: located diagnostics; one broken operation degrades alone.

pub mod convert;
pub mod diag;
/// Differences between two converted versions of an API (`openapi-mcp diff`).
pub mod diff;
pub mod extensions;
mod ir;
pub mod load;
/// The names lockfile (`--lock FILE`): published tool names stay stable across spec versions.
pub mod lock;
/// The loaded documents' compact tree.
pub mod node;
pub mod overlay;
pub mod overrides;
pub mod pattern;
/// The whole pipeline (load, convert, profile, overrides, lock) as one function, for every front end.
pub mod pipeline;
pub mod pointer;
pub mod profile;
pub mod schema;

pub use convert::{Conversion, ConvertReport, OutputSchemaMode, ToolOptions, convert};
pub use load::{LoadError, Spec, SpecSource, load};
pub use openapi_mcp_toolset as toolset;
