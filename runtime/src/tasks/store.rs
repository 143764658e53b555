//! Where task records live: the server's key-value store with expiry (the one the OAuth proxy
//! keeps its state in: SQLite, Redis, PostgreSQL) when `--task-store` names one, so that every
//! replica serves every task and tasks outlive a restart; else the memory of this process (no
//! store backend needed: a server built without the `sqlite` feature has no SQLite).
//!
//! A record's key is the SHA-256 of its task id (the id is the client's bearer handle; the store
//! never holds it), its value the record sealed (AES-256-GCM, the kind and key as associated
//! data) under a key derived from `OPENAPI_MCP_STORE_KEY` (a shared store) or made for this
//! process (memory). Each record also has an owner marker (kind `task-of/OWNER`) with the same
//! expiry: counting those bounds the tasks of one owner.

// The server's key-value store (shared with the OAuth proxy): this one line says where it is.
pub use openapi_mcp_store::{MemoryStore, Sealer, Store, StoreError, StoreSpec, now};

use super::record::TaskRecord;

/// The kind of task records in the store.
const KIND: &str = "task";
/// The kind of a task's outstanding-input mark (see [`TaskStore::take_input`]).
const INPUT_KIND: &str = "task-input";

/// A store of sealed task records.
pub struct TaskStore {
    store: Box<dyn Store>,
    sealer: Sealer,
    shared: bool,
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("store", &self.store.describe())
            .finish_non_exhaustive()
    }
}

/// What opening or using the task store fails with.
#[derive(Debug, thiserror::Error)]
pub enum TaskStoreError {
    #[error("--task-store: {0}")]
    Spec(String),
    #[error(
        "--task-store needs OPENAPI_MCP_STORE_KEY (32 bytes or more), the key its records are sealed with; every instance sharing the store needs the same one"
    )]
    NoKey,
    #[error("OPENAPI_MCP_STORE_KEY must be at least 32 bytes (it is {0})")]
    ShortKey(usize),
    #[error("the task store: {0}")]
    Store(#[from] StoreError),
    #[error("a task record does not read back ({0})")]
    Record(String),
}

impl TaskStore {
    /// The in-memory store of this process (records die with it).
    pub fn memory() -> Result<Self, TaskStoreError> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| TaskStoreError::Record(e.to_string()))?;
        Ok(Self {
            store: Box::new(MemoryStore::new()),
            sealer: Sealer::new(&key),
            shared: false,
        })
    }

    /// The store `spec` names (`sqlite:PATH`, `redis://…`, `postgres://…`), its records sealed
    /// with a key derived from `store_key` (`OPENAPI_MCP_STORE_KEY`).
    pub fn open(spec: &str, store_key: Option<&[u8]>) -> Result<Self, TaskStoreError> {
        let key = store_key.ok_or(TaskStoreError::NoKey)?;
        if key.len() < 32 {
            return Err(TaskStoreError::ShortKey(key.len()));
        }
        let spec = StoreSpec::parse(spec)
            .map_err(|e| TaskStoreError::Spec(e.replace("--oauth-store", "--task-store")))?;
        Ok(Self {
            store: spec.open()?,
            sealer: Sealer::new(&derive(key, "task records v1")),
            shared: true,
        })
    }

    /// Whether other instances may share this store (a file or a server, not memory).
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// What the store is, for the start-up line (no credential in it).
    pub fn describe(&self) -> String {
        if self.shared {
            self.store.describe()
        } else {
            "memory".into()
        }
    }

    /// Writes `record` under `key` (the task id's digest) until `expires` (Unix seconds), and
    /// its owner marker.
    pub async fn put(
        &self,
        key: &str,
        record: &TaskRecord,
        expires: u64,
    ) -> Result<(), TaskStoreError> {
        let plain =
            serde_json::to_vec(record).map_err(|e| TaskStoreError::Record(e.to_string()))?;
        let sealed = self.sealer.seal(KIND, key, &plain);
        self.store.put(KIND, key, sealed, expires).await?;
        let owner_kind = owner_kind(&record.owner);
        self.store
            .put(&owner_kind, key, Vec::new(), expires)
            .await?;
        Ok(())
    }

    /// The record under `key`, unless absent or expired.
    pub async fn get(&self, key: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        let Some(sealed) = self.store.get(KIND, key).await? else {
            return Ok(None);
        };
        let plain = self.sealer.open(KIND, key, &sealed)?;
        serde_json::from_slice(&plain)
            .map(Some)
            .map_err(|e| TaskStoreError::Record(e.to_string()))
    }

    /// Marks the input of task `key` outstanding until `expires` (Unix seconds): the one
    /// answer that may act on it is the one that [`TaskStore::take_input`] first.
    pub async fn put_input(&self, key: &str, expires: u64) -> Result<(), TaskStoreError> {
        self.store.put(INPUT_KIND, key, Vec::new(), expires).await?;
        Ok(())
    }

    /// Takes the outstanding-input mark of task `key`, atomically (of two concurrent
    /// `tasks/update`s, on any replicas, one gets `true`); `false` when it was taken already or
    /// expired.
    pub async fn take_input(&self, key: &str) -> Result<bool, TaskStoreError> {
        Ok(self.store.take(INPUT_KIND, key).await?.is_some())
    }

    /// Live tasks of `owner`, and of everyone.
    pub async fn counts(&self, owner: &str) -> Result<(u64, u64), TaskStoreError> {
        let mine = self.store.count(&owner_kind(owner)).await?;
        let all = self.store.count(KIND).await?;
        Ok((mine, all))
    }

    /// Seconds since the Unix epoch (the store's clock for expiry).
    pub fn now() -> u64 {
        now()
    }
}

fn owner_kind(owner: &str) -> String {
    format!("task-of/{owner}")
}

/// HKDF-SHA256 of the store key for one purpose (the OAuth proxy derives its own keys from the
/// same variable with another salt, so a sealed record of one never opens as the other's).
fn derive(key: &[u8], info: &str) -> [u8; 32] {
    struct Len;
    impl aws_lc_rs::hkdf::KeyType for Len {
        fn len(&self) -> usize {
            32
        }
    }
    let mut out = [0u8; 32];
    let prk =
        aws_lc_rs::hkdf::Salt::new(aws_lc_rs::hkdf::HKDF_SHA256, b"openapi-mcp tasks").extract(key);
    let info = [info.as_bytes()];
    if let Ok(okm) = prk.expand(&info, Len) {
        let _ = okm.fill(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::record::{Stage, TaskRecord};
    use super::*;

    fn record(owner: &str) -> TaskRecord {
        TaskRecord::new(owner.into(), "jobs_start_export".into(), 0, 60_000, 2_000).with_stage(
            Stage::Polling {
                status_url: "http://127.0.0.1:9/jobs/1?sig=secret".into(),
            },
        )
    }

    #[tokio::test]
    async fn records_are_sealed_and_counted_per_owner() {
        let dir = std::env::temp_dir().join(format!("openapi-mcp-tasks-{}", std::process::id()));
        let path = dir.join("tasks.sqlite3");
        let spec = format!("sqlite:{}", path.display());
        let key = [7u8; 32];
        let a = TaskStore::open(&spec, Some(&key)).expect("open");
        let expires = TaskStore::now() + 60;
        a.put("k1", &record("alice"), expires).await.expect("put");
        a.put("k2", &record("alice"), expires).await.expect("put");
        a.put("k3", &record("bob"), expires).await.expect("put");
        assert_eq!(a.counts("alice").await.expect("count"), (2, 3));
        // Another instance on the same file with the same key reads it back.
        let b = TaskStore::open(&spec, Some(&key)).expect("open again");
        let back = b.get("k1").await.expect("get").expect("present");
        assert_eq!(back.owner, "alice");
        // The file holds no status URL in the clear (it can carry signed tokens).
        let raw = std::fs::read(&path).expect("read file");
        let wal = std::fs::read(path.with_extension("sqlite3-wal")).unwrap_or_default();
        for bytes in [&raw, &wal] {
            assert!(
                !bytes.windows(6).any(|w| w == b"secret"),
                "status URL stored in the clear"
            );
        }
        // Another key does not open it.
        let c = TaskStore::open(&spec, Some(&[8u8; 32])).expect("open with another key");
        assert!(c.get("k1").await.is_err());
        assert!(b.get("absent").await.expect("get").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_shared_store_needs_a_long_enough_key() {
        let e = TaskStore::open("sqlite:/tmp/x.sqlite3", None).unwrap_err();
        assert!(e.to_string().contains("OPENAPI_MCP_STORE_KEY"), "{e}");
        let e = TaskStore::open("sqlite:/tmp/x.sqlite3", Some(b"short")).unwrap_err();
        assert!(e.to_string().contains("at least 32 bytes"), "{e}");
        let e = TaskStore::open("memcached://x", Some(&[1u8; 32])).unwrap_err();
        assert!(e.to_string().starts_with("--task-store"), "{e}");
        assert!(!e.to_string().contains("--oauth-store"), "{e}");
    }
}
