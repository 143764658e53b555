//! A `_select` expression (JMESPath) and a document, through the server's path (#36): no panic
//! or stack overflow, results within the output budget, one-line errors, agreement with the
//! `jmespath` crate where it can run safely, and each input done within `LIMIT` (see
//! `openapi_mcp_tests::fuzz_checks::select`).
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use openapi_mcp_tests::fuzz_checks::select::check_select;

/// Compiling and evaluating, per input (a release build; the step budget is 1 M steps).
const LIMIT: Duration = Duration::from_secs(2);

fuzz_target!(|data: &[u8]| {
    if let Err(e) = check_select(data, LIMIT) {
        panic!("invariant broken: {e}");
    }
});
