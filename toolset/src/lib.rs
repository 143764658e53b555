//! The openapi-mcp contract: what the converter produces and what the server and generated
//! crates consume. It depends on no server stack (no axum, reqwest or rmcp server).
//!
//! - [`api_file`]: the `api.json` format generated crates embed (one definition, versioned).
//! - [`model`]: the tool set, each tool with its route (wire bindings of every argument).
//! - [`location`]: where something lives in a spec (`doc#/json/pointer`), typed.
//! - [`naming`]: snake_case, prefixes, collision-free names, credential variable names.
//! - [`media`]: media-type helpers shared by the converter and the forwarder.
//! - [`filter`]: which operations become tools (globs on tags, names, paths, methods).
//! - [`validate`]: argument validation against a tool's inputSchema, with "did you mean".
//! - [`schema_walk`]: the keywords that hold subschemas, and one walk over them.
//! - [`suggest`]: the edit distance and closest-name rule behind every "did you mean".

pub mod api_file;
pub mod filter;
pub mod location;
pub mod media;
pub mod model;
pub mod naming;
pub mod schema_walk;
pub mod suggest;
pub mod validate;

pub use location::Location;
pub use rmcp;
