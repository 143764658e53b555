//! Bytes -> spec (JSON or YAML) -> tools: never panics; tool names valid, unique, <= 64;
//! every inputSchema root is `type: object` (see `openapi_mcp_tests::fuzz_checks`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use openapi_mcp_tests::fuzz_checks::check_load_convert;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = check_load_convert(data) {
        panic!("invariant broken: {e}");
    }
});
