//! Exit codes from a typed status, for the `openapi-mcp` CLI and every generated server's `main`.
//!
//! An error caused by what the user gave (arguments, the spec, an overrides or lock file, a
//! config) is wrapped in [`UserError`] where it is found; [`ExitStatus::of`] finds that marker
//! anywhere in an error's source chain (uv's `ExitStatus` + typed user errors), instead of
//! matching a text.

use std::error::Error;
use std::process::ExitCode;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// Done (0).
    Success,
    /// The user's input was wrong: a spec, a file or an argument (1). Also what `--strict`,
    /// `lint` and `diff` use for "found something".
    Failure,
    /// Anything else: I/O, the network, a bug (2).
    Error,
}

impl ExitStatus {
    /// The status of a failed run: [`ExitStatus::Failure`] when a [`UserError`] is in `err`'s
    /// source chain, else [`ExitStatus::Error`]. (A transparent wrapper's `source()` skips what
    /// it wraps: unwrap such errors first, as `serve::StartError::into_error` does.)
    pub fn of(err: &(dyn Error + 'static)) -> ExitStatus {
        let mut cur: Option<&(dyn Error + 'static)> = Some(err);
        while let Some(e) = cur {
            if e.is::<UserError>() {
                return ExitStatus::Failure;
            }
            cur = e.source();
        }
        ExitStatus::Error
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> ExitCode {
        match s {
            ExitStatus::Success => ExitCode::SUCCESS,
            ExitStatus::Failure => ExitCode::from(1),
            ExitStatus::Error => ExitCode::from(2),
        }
    }
}

/// Marks an error as caused by the user's input. Its message and causes are those of the error
/// it wraps (it adds no text of its own).
#[derive(Debug)]
pub struct UserError(pub Box<dyn Error + Send + Sync + 'static>);

impl std::fmt::Display for UserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Error for UserError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0.source()
    }
}

impl UserError {
    pub fn new(err: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Self {
        UserError(err.into())
    }
    /// A user error with only a message.
    pub fn msg(msg: impl std::fmt::Display) -> Self {
        UserError(msg.to_string().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] UserError);

    #[test]
    fn user_error_found_in_the_chain() {
        let e = Outer(UserError::msg("bad flag"));
        assert_eq!(ExitStatus::of(&e), ExitStatus::Failure);
        let io = std::io::Error::other("disk");
        assert_eq!(ExitStatus::of(&io), ExitStatus::Error);
        assert_eq!(UserError::msg("bad flag").to_string(), "bad flag");
    }
}
