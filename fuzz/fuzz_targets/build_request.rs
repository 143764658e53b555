//! Fixed tools from specs/ + fuzzed JSON arguments -> the request builder: the URL stays under
//! the base URL's scheme/host/port/base path, header values carry no CR/LF
//! (see `openapi_mcp_tests::fuzz_checks`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use openapi_mcp_tests::fuzz_checks::{RequestFixture, check_build_request};

/// Same files, same order as the replay test in `tests/src/fuzz_checks.rs`.
const SPECS: &[(&str, &[u8])] = &[
    ("petstore.yaml", include_bytes!("../../specs/petstore.yaml")),
    (
        "param-styles.yaml",
        include_bytes!("../../specs/param-styles.yaml"),
    ),
    ("hostile.yaml", include_bytes!("../../specs/hostile.yaml")),
    ("forms.yaml", include_bytes!("../../specs/forms.yaml")),
    (
        "collisions.yaml",
        include_bytes!("../../specs/collisions.yaml"),
    ),
    ("swagger2.yaml", include_bytes!("../../specs/swagger2.yaml")),
    (
        "openapi31.yaml",
        include_bytes!("../../specs/openapi31.yaml"),
    ),
];

fn fixture() -> &'static RequestFixture {
    static FX: OnceLock<RequestFixture> = OnceLock::new();
    FX.get_or_init(|| match RequestFixture::new(SPECS) {
        Ok(fx) => fx,
        Err(e) => panic!("fixture specs: {e}"),
    })
}

fuzz_target!(|data: &[u8]| {
    if let Err(e) = check_build_request(fixture(), data) {
        panic!("invariant broken: {e}");
    }
});
