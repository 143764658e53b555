//! The ways a tool set is shown to the model besides one tool per operation: `--mode
//! dynamic|hybrid` (search and call operations through a few discovery tools) and `--mode code`
//! (scripts against an `api` object in an embedded JavaScript sandbox).

pub mod code;
pub mod dynamic;
