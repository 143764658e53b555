//! End-to-end test support: a recording upstream API and ways to start the proxy.

pub mod harness;
pub mod upstream;
