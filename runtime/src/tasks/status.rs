//! What an API's answer about a long-running operation means for its task: the HTTP status of a
//! poll of the status URL, and the operation's own status word in the body (Azure, Google, AWS,
//! GitHub and job-queue spellings), mapped to the extension's task states; `Retry-After` to the
//! task's `pollIntervalMs`.

use std::time::Duration;

use serde_json::Value;

/// What a poll of the status URL says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The operation goes on (202, or a running status word).
    Working,
    /// It ended; the answer is the task's result, an error result when `is_error` (the API said
    /// the operation failed, or refused the poll with a 4xx: tool errors, not protocol errors).
    Completed { is_error: bool },
    /// The API says the operation was cancelled.
    Cancelled,
    /// 303 See Other: the result is at the answer's `Location`.
    SeeOther,
    /// The poll failed in a way that may pass (not sent, unreachable, timed out, 429, 5xx): keep
    /// the task working and poll again.
    Retry,
}

/// An operation's status word, by meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

/// The meaning of a status word, case, spaces, `-` and `_` aside; `None` for a word that is none
/// of these (a resource's own `status: "available"` means the operation ended).
pub fn word(s: &str) -> Option<Word> {
    let w: String = s
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    Some(match w.as_str() {
        "running" | "inprogress" | "notstarted" | "pending" | "accepted" | "queued" | "started"
        | "starting" | "creating" | "updating" | "deleting" | "provisioning" | "waiting"
        | "scheduled" | "processing" | "working" | "submitted" => Word::Running,
        "succeeded" | "success" | "successful" | "completed" | "complete" | "done" | "finished"
        | "ok" => Word::Succeeded,
        "failed" | "failure" | "error" | "errored" | "timedout" | "rejected" => Word::Failed,
        "cancelled" | "canceled" | "aborted" | "cancelling" | "canceling" => Word::Cancelled,
        _ => return None,
    })
}

/// Members that hold an operation's status, in the order they are looked for (at the top level,
/// then under `properties` (Azure resources) and `metadata` (Google operations)).
const STATUS_MEMBERS: [&str; 4] = ["status", "state", "provisioningState", "phase"];

/// The operation's status word in a status resource, if it has one.
pub fn status_word(body: &Value) -> Option<Word> {
    let find = |v: &Value| {
        STATUS_MEMBERS
            .iter()
            .find_map(|m| v.get(*m).and_then(Value::as_str).and_then(word))
    };
    find(body)
        .or_else(|| body.get("properties").and_then(find))
        .or_else(|| body.get("metadata").and_then(find))
        .or_else(|| {
            // Google long-running operations: `done` is the verdict; `error` says it failed.
            match body.get("done").and_then(Value::as_bool)? {
                false => Some(Word::Running),
                true if body.get("error").is_some_and(|e| !e.is_null()) => Some(Word::Failed),
                true => Some(Word::Succeeded),
            }
        })
}

/// The verdict of a poll that got HTTP `status` (`None`: nothing came back) with the structured
/// body `body`.
pub fn verdict(status: Option<u16>, body: Option<&Value>) -> Verdict {
    let Some(status) = status else {
        return Verdict::Retry;
    };
    match status {
        202 => Verdict::Working,
        303 => Verdict::SeeOther,
        408 | 425 | 429 | 500..=599 => Verdict::Retry,
        200..=299 => match body.and_then(status_word) {
            Some(Word::Running) => Verdict::Working,
            Some(Word::Failed) => Verdict::Completed { is_error: true },
            Some(Word::Cancelled) => Verdict::Cancelled,
            Some(Word::Succeeded) | None => Verdict::Completed { is_error: false },
        },
        _ => Verdict::Completed { is_error: true },
    }
}

/// The default poll interval (no `Retry-After`).
pub const DEFAULT_POLL: Duration = Duration::from_secs(2);
/// Bounds on the poll interval a `Retry-After` asks for.
pub const MIN_POLL: Duration = Duration::from_millis(500);
pub const MAX_POLL: Duration = Duration::from_secs(60);

/// `pollIntervalMs` for an answer that asked to come back after `retry_after` (if it did).
pub fn poll_interval_ms(retry_after: Option<Duration>) -> u64 {
    let d = retry_after
        .unwrap_or(DEFAULT_POLL)
        .clamp(MIN_POLL, MAX_POLL);
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_words_of_the_big_apis_map_to_states() {
        for w in [
            "Running",
            "InProgress",
            "in_progress",
            "NotStarted",
            "queued",
            "PENDING",
        ] {
            assert_eq!(word(w), Some(Word::Running), "{w}");
        }
        for w in ["Succeeded", "succeeded", "completed", "DONE", "finished"] {
            assert_eq!(word(w), Some(Word::Succeeded), "{w}");
        }
        for w in ["Failed", "failure", "error", "TimedOut"] {
            assert_eq!(word(w), Some(Word::Failed), "{w}");
        }
        for w in ["Canceled", "cancelled", "Aborted"] {
            assert_eq!(word(w), Some(Word::Cancelled), "{w}");
        }
        // A resource's own status (a pet, a user) is no operation status.
        assert_eq!(word("available"), None);
        assert_eq!(word("active"), None);
        assert_eq!(word(""), None);
    }

    #[test]
    fn the_status_is_found_where_apis_put_it() {
        assert_eq!(
            status_word(&json!({"status": "running"})),
            Some(Word::Running)
        );
        // Azure: a resource's provisioningState under properties.
        assert_eq!(
            status_word(&json!({"id": "x", "properties": {"provisioningState": "Succeeded"}})),
            Some(Word::Succeeded)
        );
        // Google: done / error.
        assert_eq!(
            status_word(&json!({"name": "op", "done": false})),
            Some(Word::Running)
        );
        assert_eq!(
            status_word(&json!({"name": "op", "done": true, "error": {"code": 3}})),
            Some(Word::Failed)
        );
        assert_eq!(
            status_word(&json!({"name": "op", "done": true, "response": {}})),
            Some(Word::Succeeded)
        );
        // A resource's own status that is no operation status: none.
        assert_eq!(status_word(&json!({"id": 1, "status": "available"})), None);
        assert_eq!(status_word(&json!([1, 2])), None);
    }

    #[test]
    fn http_statuses_give_verdicts() {
        assert_eq!(verdict(Some(202), None), Verdict::Working);
        assert_eq!(verdict(Some(303), None), Verdict::SeeOther);
        assert_eq!(verdict(None, None), Verdict::Retry);
        for s in [429, 500, 502, 503, 504] {
            assert_eq!(verdict(Some(s), None), Verdict::Retry, "{s}");
        }
        for s in [400, 401, 403, 404, 410] {
            assert_eq!(
                verdict(Some(s), None),
                Verdict::Completed { is_error: true },
                "{s}"
            );
        }
        let body = json!({"status": "failed", "error": "disk full"});
        assert_eq!(
            verdict(Some(200), Some(&body)),
            Verdict::Completed { is_error: true }
        );
        let body = json!({"status": "in_progress"});
        assert_eq!(verdict(Some(200), Some(&body)), Verdict::Working);
        let body = json!({"status": "canceled"});
        assert_eq!(verdict(Some(200), Some(&body)), Verdict::Cancelled);
        let body = json!({"id": 42, "name": "rex"});
        assert_eq!(
            verdict(Some(200), Some(&body)),
            Verdict::Completed { is_error: false }
        );
        assert_eq!(
            verdict(Some(204), None),
            Verdict::Completed { is_error: false }
        );
    }

    #[test]
    fn retry_after_becomes_a_bounded_poll_interval() {
        assert_eq!(poll_interval_ms(None), 2000);
        assert_eq!(poll_interval_ms(Some(Duration::from_secs(5))), 5000);
        assert_eq!(poll_interval_ms(Some(Duration::ZERO)), 500);
        assert_eq!(poll_interval_ms(Some(Duration::from_secs(3600))), 60_000);
    }
}
