//! End-to-end tests: a real upstream HTTP server, the proxy, and real MCP clients.
// Test code: a panic with the unwrapped error is the failure report.
#![allow(clippy::unwrap_used)]

mod e2e {
    pub mod arazzo;
    pub mod attack_oauth_proxy;
    pub mod attack_secrets;
    pub mod attack_select;
    pub mod code;
    pub mod config;
    pub mod corpus;
    pub mod corpus_calls;
    pub mod docs;
    pub mod dynamic;
    pub mod embed;
    pub mod eras;
    pub mod fidelity;
    pub mod generate_parity;
    pub mod hardening;
    pub mod hostile;
    pub mod lock_diff;
    pub mod multi_api;
    pub mod ops;
    pub mod overlay;
    pub mod overrides;
    pub mod proxy_http;
    pub mod proxy_inprocess;
    pub mod proxy_lifecycle;
    pub mod proxy_stdio;
    pub mod proxy_wire;
    pub mod responses;
    pub mod tasks;
    pub mod workflow_scopes;
}
