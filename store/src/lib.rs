//! Where `--oauth-proxy` keeps its state: registered clients, authorizations in progress, its
//! one-time codes and refresh tokens, and each user's upstream tokens (the grants).
//!
//! A small key-value interface with expiry ([`Store`]), so that one embedded store (SQLite, the
//! default) and shared ones for several instances behind a load balancer fit it. Every value is
//! sealed with AES-256-GCM ([`Sealer`]) under a key derived from `OPENAPI_MCP_STORE_KEY`, with
//! the record's kind and key as associated data (a value copied to another record does not open);
//! the keys of records named by a secret (a code, a refresh token, an authorization's `state`)
//! are that secret's SHA-256, so the store's contents give no usable token back.

//!
//! Each backend is a cargo feature: `sqlite` (the default: SQLite compiled in, one file),
//! `redis` and `postgres` (shared by several instances; TLS over rustls). [`StoreSpec::parse`]
//! of a URL whose backend this build leaves out says which feature to enable.

#[cfg(any(test, feature = "contract"))]
pub mod contract;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "redis")]
mod redis;
mod seal;
mod spec;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(any(feature = "redis", feature = "postgres"))]
mod tls;

pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "redis")]
pub use redis::RedisStore;
pub use seal::Sealer;
pub use spec::StoreSpec;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

/// What a store can fail with (said to the operator's log; the client gets `server_error`).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the OAuth store {0}: {1}")]
    Backend(String, String),
    #[error(
        "a stored record does not open with this OPENAPI_MCP_STORE_KEY (another key, or tampered)"
    )]
    Sealed,
}

/// A boxed future of a store operation.
pub type StoreFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// A key-value store with expiry (Unix seconds). Values are sealed already.
pub trait Store: Send + Sync + 'static {
    /// Sets `kind/key` to `value` until `expires`.
    fn put<'a>(
        &'a self,
        kind: &'a str,
        key: &'a str,
        value: Vec<u8>,
        expires: u64,
    ) -> StoreFuture<'a, ()>;
    /// The value of `kind/key`, unless absent or expired.
    fn get<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<Vec<u8>>>;
    /// Removes `kind/key` and returns what it held, atomically: of two concurrent takes, one
    /// gets the value (one-time codes, rotated refresh tokens).
    fn take<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<Vec<u8>>>;
    /// Removes `kind/key`.
    fn delete<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, ()>;
    /// How many live (unexpired) records of `kind` there are: what bounds the store's growth
    /// from unauthenticated requests (registrations, sign-ins in progress).
    fn count<'a>(&'a self, kind: &'a str) -> StoreFuture<'a, u64>;
    /// What the store is, for the start-up line (no credential in it).
    fn describe(&self) -> String;
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Counts a store's writes: expired records are swept on every 256th (the stores whose backend
/// does not expire records itself).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Default)]
pub(crate) struct Sweeps(std::sync::atomic::AtomicU64);

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl Sweeps {
    /// Counts one write; whether this one sweeps.
    pub(crate) fn sweep_due(&self) -> bool {
        self.0
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .is_multiple_of(256)
    }
}

/// Fills `buf` with random bytes (the system's CSPRNG).
pub fn random_bytes(buf: &mut [u8]) {
    if aws_lc_rs::rand::fill(buf).is_err() {
        // aws-lc's generator does not fail once initialised; fall back to the OS anyway.
        let _ = getrandom::fill(buf);
    }
}

#[cfg(test)]
mod tests;
