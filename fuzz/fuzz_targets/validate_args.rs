//! A fuzzed tool input schema (spec keywords, ECMA-262 patterns from the bytes) and arguments,
//! validated the way the server validates a call: no panic, bounded problem lists, and each
//! input done within `LIMIT` (see `openapi_mcp_tests::fuzz_checks::validate_args`).
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use openapi_mcp_tests::fuzz_checks::validate_args::check_validate_args;

/// Compiling the schema and validating the arguments, per input (a release build).
const LIMIT: Duration = Duration::from_secs(2);

fuzz_target!(|data: &[u8]| {
    if let Err(e) = check_validate_args(data, LIMIT) {
        panic!("invariant broken: {e}");
    }
});
