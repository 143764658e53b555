//! End-to-end test support: a recording upstream API, ways to start the proxy, and the invariant
//! checks shared by the fuzz targets (`fuzz/`) and their replay tests.

pub mod fuzz_checks;
pub mod harness;
pub mod jobs;
pub mod upstream;
