//! Fuzzed HTTP requests (method, path, MCP headers, JSON-RPC-shaped bodies) through the
//! Streamable HTTP service in-process: no panic, an answer within the step timeout, no 5xx,
//! well-formed JSON and event streams, the bearer token and Host checks hold (see
//! `openapi_mcp_tests::fuzz_checks::http_transport`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use openapi_mcp_tests::fuzz_checks::http_transport::{HttpFixture, check_http_transport};

/// The spec the replay test serves too.
const PETSTORE: &[u8] = include_bytes!("../../specs/petstore.yaml");

fn fixture() -> &'static HttpFixture {
    static FX: OnceLock<HttpFixture> = OnceLock::new();
    FX.get_or_init(|| match HttpFixture::new(PETSTORE) {
        Ok(fx) => fx,
        Err(e) => panic!("fixture: {e}"),
    })
}

fuzz_target!(|data: &[u8]| {
    if let Err(e) = check_http_transport(fixture(), data) {
        panic!("invariant broken: {e}");
    }
});
