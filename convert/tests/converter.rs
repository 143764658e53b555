//! Integration tests of the OpenAPI -> MCP converter: snapshots of every fixture in `specs/`,
//! targeted assertions per concern, and a real-world corpus run over `../shared/specs`.
//!
//! Snapshots live in `convert/tests/snapshots/`; regenerate with
//! `UPDATE_SNAPSHOTS=1 cargo test -p openapi-mcp-convert --test converter`, then review the diff.

mod converter {
    pub mod corpus;
    pub mod extensions;
    /// Targeted assertions, one module per fixture of `specs/` (see specs/README.md), plus the
    /// properties every fixture must have and the regressions pinned by inline specs.
    pub mod fixtures {
        pub mod allof_oneof;
        pub mod broken_ops;
        pub mod collisions;
        pub mod credential_params;
        pub mod every_fixture;
        pub mod external_refs;
        pub mod forms;
        pub mod inline;
        pub mod not_openapi;
        pub mod nulls;
        pub mod openapi31;
        pub mod param_styles;
        pub mod petstore;
        pub mod query_and_form_encoding;
        pub mod read_only_nested;
        pub mod recursive;
        pub mod required_bodies;
        pub mod reserved_headers;
        pub mod security;
        pub mod swagger2;
    }
    pub mod loader_hardening;
    pub mod lock;
    pub mod snapshots;
    pub mod support;
}
