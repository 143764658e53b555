//! [`MemoryStore`]: records in this process's memory, gone with it (always built: no backend
//! feature, no C build). For state that needs no sharing and no restart, e.g. the tasks of a
//! server with no `--task-store`.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::{Store, StoreError, StoreFuture, now};

/// The records: (kind, key) -> (value, expiry time).
type Records = HashMap<(String, String), (Vec<u8>, u64)>;

/// Records in memory, behind one lock (each operation is a few map operations, so a take is
/// atomic: of concurrent takes, one gets the value). Expired records are swept on every 256th
/// write, as the SQLite store does.
#[derive(Default)]
pub struct MemoryStore {
    records: Mutex<Records>,
    writes: std::sync::atomic::AtomicU64,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Records) -> T) -> Result<T, StoreError> {
        let mut records = self
            .records
            .lock()
            .map_err(|_| StoreError::Backend("memory".into(), "poisoned lock".into()))?;
        Ok(f(&mut records))
    }
}

fn ready<'a, T: Send + 'a>(r: Result<T, StoreError>) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(r))
}

fn live((value, expires): (Vec<u8>, u64)) -> Option<Vec<u8>> {
    (expires >= now()).then_some(value)
}

impl Store for MemoryStore {
    fn put<'a>(
        &'a self,
        kind: &'a str,
        key: &'a str,
        value: Vec<u8>,
        expires: u64,
    ) -> StoreFuture<'a, ()> {
        let sweep = self
            .writes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .is_multiple_of(256);
        ready(self.with(|r| {
            if sweep {
                let t = now();
                r.retain(|_, (_, exp)| *exp >= t);
            }
            r.insert((kind.to_string(), key.to_string()), (value, expires));
        }))
    }

    fn get<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        ready(self.with(|r| {
            r.get(&(kind.to_string(), key.to_string()))
                .cloned()
                .and_then(live)
        }))
    }

    fn take<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        ready(self.with(|r| {
            r.remove(&(kind.to_string(), key.to_string()))
                .and_then(live)
        }))
    }

    fn delete<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, ()> {
        ready(self.with(|r| {
            r.remove(&(kind.to_string(), key.to_string()));
        }))
    }

    fn count<'a>(&'a self, kind: &'a str) -> StoreFuture<'a, u64> {
        ready(self.with(|r| {
            let t = now();
            r.iter()
                .filter(|((k, _), (_, exp))| k == kind && *exp >= t)
                .count() as u64
        }))
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}
