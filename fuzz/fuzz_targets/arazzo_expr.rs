//! Arazzo runtime expressions, templates, payloads and criteria (simple, regex, jsonpath)
//! parsed and evaluated against a fixed scope (#39): no panic or stack overflow, results within
//! the output budget, no value of the scope in an error, expressions that parse again from
//! their own text, and each input done within `LIMIT` of CPU time (see
//! `openapi_mcp_tests::fuzz_checks::arazzo_expr`). Memory: libFuzzer's -rss_limit_mb (run.sh).
#![no_main]

use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use openapi_mcp_tests::fuzz_checks::arazzo_expr::{Fixture, check_arazzo_expr};

/// Parsing and evaluating one input, in a release build (the budgets bound the work to well
/// under this).
const LIMIT: Duration = Duration::from_secs(1);

static FIXTURE: LazyLock<Fixture> = LazyLock::new(Fixture::new);

fuzz_target!(|data: &[u8]| {
    if let Err(e) = check_arazzo_expr(&FIXTURE, data, LIMIT) {
        panic!("invariant broken: {e}");
    }
});
