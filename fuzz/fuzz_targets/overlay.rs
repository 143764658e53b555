//! OpenAPI Overlay documents (RFC 9535 JSONPath targets, recursive updates, removals) applied to
//! an OpenAPI-ish document through `openapi_mcp_convert::overlay` (#39): no panic or stack
//! overflow, results within the budgets (nodes and text written, depth), errors and warnings
//! naming `fuzz.yaml#/actions/N...`, the idempotence properties that hold, and each input done
//! within `LIMIT` of CPU time (see `openapi_mcp_tests::fuzz_checks::overlay`). Memory:
//! libFuzzer's -rss_limit_mb (run.sh).
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use openapi_mcp_tests::fuzz_checks::overlay::check_overlay;

/// Parsing and applying one overlay, in a release build with AddressSanitizer (several times
/// slower than without on this allocation-heavy code); the budgets (MAX_WRITTEN, MAX_VISITED)
/// keep the seeds that reach them to a few seconds there.
const LIMIT: Duration = Duration::from_secs(10);

fuzz_target!(|data: &[u8]| {
    if let Err(e) = check_overlay(data, LIMIT) {
        panic!("invariant broken: {e}");
    }
});
