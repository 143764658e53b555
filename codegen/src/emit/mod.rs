//! One emitter per output file. Rust files are built with `quote!` and pretty-printed; only the
//! Cargo manifest and the README are text templates.

pub mod extend_rs;
pub mod lib_rs;
pub mod main_rs;
pub mod manifest;
pub mod tools;
