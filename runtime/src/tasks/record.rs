//! A task's record, as stored (sealed) and shared by the replicas: where the task is in its
//! life ([`Stage`]) and what `tasks/get` answers from it. The registry ([`super::registry`])
//! changes records; the store ([`super::store`]) keeps them.

use rmcp::model::{DetailedTask, Task, TaskPayload, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a task is in its life.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Stage {
    /// The API carries the operation out; its status is at `status_url`.
    Polling {
        status_url: String,
    },
    /// The request is still in flight on the instance that started it (`--task-after`).
    Running,
    /// Nothing was sent yet: the call waits for the client's answer to `requests` (the
    /// extension's `inputRequests`; `--confirm` inside a task), given with `tasks/update` before
    /// `deadline_ms` (Unix milliseconds). `call` is what is sent when the user accepts; it lives
    /// only in this (sealed) record, never with the client.
    InputRequired {
        requests: Value,
        call: PendingCall,
        deadline_ms: u64,
    },
    /// Ended with this `CallToolResult` (an error result too: a tool error).
    Completed {
        result: Value,
    },
    /// Ended with this JSON-RPC error.
    Failed {
        error: Value,
    },
    Cancelled,
}

impl Stage {
    pub(super) fn is_terminal(&self) -> bool {
        matches!(
            self,
            Stage::Completed { .. } | Stage::Failed { .. } | Stage::Cancelled
        )
    }
}

/// A call waiting in a task for the user's answer: its arguments (validated) and selection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    pub args: serde_json::Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<(String, String)>,
}

/// One task, as stored (sealed).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Digest of who created it ([`Owner`]); only they see it.
    pub owner: String,
    /// The tool that was called.
    pub tool: String,
    /// The API (index into the server's APIs) the status URL belongs to.
    pub api: usize,
    #[serde(flatten)]
    pub stage: Stage,
    pub message: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Unix milliseconds of creation (the TTL counts from it).
    pub created_ms: u64,
    pub ttl_ms: u64,
    pub poll_ms: u64,
    /// Unix milliseconds before which `tasks/get` answers from the record without polling.
    pub next_poll_ms: u64,
}

impl TaskRecord {
    pub fn new(owner: String, tool: String, api: usize, ttl_ms: u64, poll_ms: u64) -> Self {
        let at = rmcp::task_manager::current_timestamp();
        let now = now_ms();
        TaskRecord {
            owner,
            tool,
            api,
            stage: Stage::Running,
            message: None,
            created_at: at.clone(),
            updated_at: at,
            created_ms: now,
            ttl_ms,
            poll_ms,
            next_poll_ms: now.saturating_add(poll_ms),
        }
    }

    pub fn with_stage(mut self, stage: Stage) -> Self {
        self.stage = stage;
        self
    }

    pub(super) fn touch(&mut self) {
        self.updated_at = rmcp::task_manager::current_timestamp();
    }

    /// Unix seconds when the record expires (the end of its TTL).
    pub(super) fn expires(&self) -> u64 {
        (self.created_ms.saturating_add(self.ttl_ms)) / 1000 + 1
    }

    pub(super) fn task(&self, id: &str) -> Task {
        let status = match &self.stage {
            Stage::Polling { .. } | Stage::Running => TaskStatus::Working,
            Stage::InputRequired { .. } => TaskStatus::InputRequired,
            Stage::Completed { .. } => TaskStatus::Completed,
            Stage::Failed { .. } => TaskStatus::Failed,
            Stage::Cancelled => TaskStatus::Cancelled,
        };
        let mut t = Task::new(id, status, self.created_at.clone(), self.updated_at.clone())
            .with_ttl_ms(self.ttl_ms)
            .with_poll_interval_ms(self.poll_ms);
        if let Some(m) = &self.message {
            t = t.with_status_message(m.clone());
        }
        t
    }

    /// The `DetailedTask` of `tasks/get`.
    pub fn detailed(&self, id: &str) -> DetailedTask {
        let payload = match &self.stage {
            Stage::Polling { .. } | Stage::Running => TaskPayload::Working,
            Stage::InputRequired { requests, .. } => TaskPayload::InputRequired {
                input_requests: serde_json::from_value(requests.clone()).unwrap_or_default(),
            },
            Stage::Completed { result } => TaskPayload::Completed {
                result: result.as_object().cloned().unwrap_or_default(),
            },
            Stage::Failed { error } => TaskPayload::Failed {
                error: error.as_object().cloned().unwrap_or_default(),
            },
            Stage::Cancelled => TaskPayload::Cancelled,
        };
        DetailedTask::new(self.task(id), payload)
    }
}

pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
