//! Integration tests of the OpenAPI -> MCP converter: snapshots of every fixture in `specs/`,
//! targeted assertions per concern, and a real-world corpus run over `../shared/specs`.
//!
//! Snapshots live in `convert/tests/snapshots/`; regenerate with
//! `UPDATE_SNAPSHOTS=1 cargo test -p openapi-mcp-convert --test converter`, then review the diff.

mod converter {
    pub mod corpus;
    pub mod extensions;
    pub mod fixtures;
    pub mod lock;
    pub mod snapshots;
    pub mod support;
}
