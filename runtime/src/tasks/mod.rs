//! Long-running REST operations as MCP tasks: the `io.modelcontextprotocol/tasks` extension
//! (SEP-2663) for requests that declare it.
//!
//! A call whose answer is `202 Accepted` with a status URL a GET tool of the server reads, or
//! (with `--task-after`) one still in flight after a while, is answered with a task handle
//! (`resultType: "task"`) instead of blocking. `tasks/get` polls the API's status through the
//! same forwarder as any call (the owner's credentials, validation, scrubbing, origin policy)
//! and maps what it says to task states ([`status`]); `tasks/cancel` calls the API's cancel
//! operation when the spec has one. Records live in a store ([`store`]) that replicas share, so
//! any of them answers for any task ([`registry`]).

pub mod record;
pub mod registry;
pub mod status;
pub mod store;

pub use registry::{
    Claimed, Finished, Handle, Owner, PendingCall, Read, StatusReader, TaskLimits, Tasks,
};
pub use store::{TaskStore, TaskStoreError};

use std::sync::Arc;
use std::time::Duration;

/// A duration of `--task-after` / `--task-ttl`: a number with a unit (`500ms`, `2s`, `5m`, `1h`)
/// or plain seconds (`2.5`); more than 0, at most a week.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => t.split_at(at),
        None => (t, "s"),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (like 500ms, 2s, 5m, 1h)"))?;
    let scale = match unit.trim() {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!("{s:?}: unknown unit {other:?} (use ms, s, m or h)"));
        }
    };
    let secs = n * scale;
    if !secs.is_finite() || secs <= 0.0 || secs > 7.0 * 86_400.0 {
        return Err(format!("{s:?}: must be more than 0 and at most a week"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The server's tasks as the serving options say (`--tasks`, `--task-store`, `--task-ttl`):
/// `None` without `--tasks`. A shared store needs `OPENAPI_MCP_STORE_KEY` (`store_key`).
pub fn from_options(
    enabled: bool,
    store: Option<&str>,
    ttl: Duration,
    after: Option<Duration>,
    store_key: Option<&[u8]>,
) -> Result<Option<Arc<Tasks>>, String> {
    if !enabled {
        if store.is_some() || after.is_some() {
            return Err("--task-store and --task-after need --tasks".into());
        }
        return Ok(None);
    }
    let store = match store {
        Some(spec) => TaskStore::open(spec, store_key),
        None => TaskStore::memory(),
    }
    .map_err(|e| e.to_string())?;
    Ok(Some(Arc::new(Tasks::new(
        store,
        TaskLimits {
            ttl,
            ..TaskLimits::default()
        },
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        for bad in ["", "0s", "-1s", "2d", "abc", "NaNs", "9999h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn task_options_without_tasks_are_an_error() {
        let ttl = Duration::from_secs(60);
        assert!(
            from_options(false, None, ttl, None, None)
                .unwrap()
                .is_none()
        );
        let e = from_options(false, Some("sqlite:x"), ttl, None, None).unwrap_err();
        assert!(e.contains("need --tasks"), "{e}");
        let e = from_options(false, None, ttl, Some(ttl), None).unwrap_err();
        assert!(e.contains("need --tasks"), "{e}");
        let e = from_options(true, Some("sqlite:/tmp/t.sqlite3"), ttl, None, None).unwrap_err();
        assert!(e.contains("OPENAPI_MCP_STORE_KEY"), "{e}");
        assert!(from_options(true, None, ttl, None, None).unwrap().is_some());
    }
}
