//! Fuzzed request sequences against the `--oauth-proxy` endpoints (`/register`, `/authorize`,
//! the consent form, `/oauth/callback`, `/token`, the metadata) in-process, from client
//! addresses the input picks: no panic, an answer within the step timeout, no 5xx but the
//! documented capacity refusal, no secret in an answer, no input markup in a page, and a store
//! that stays within its bounds (see `openapi_mcp_tests::fuzz_checks::oauth_proxy`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use openapi_mcp_tests::fuzz_checks::oauth_proxy::{OAuthFixture, check_oauth_proxy};

fn fixture() -> &'static OAuthFixture {
    static FX: OnceLock<OAuthFixture> = OnceLock::new();
    FX.get_or_init(|| match OAuthFixture::new() {
        Ok(fx) => fx,
        Err(e) => panic!("fixture: {e}"),
    })
}

fuzz_target!(|data: &[u8]| {
    if let Err(e) = check_oauth_proxy(fixture(), data) {
        panic!("invariant broken: {e}");
    }
});
