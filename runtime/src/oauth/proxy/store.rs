//! Where `--oauth-proxy` keeps its state: registered clients, authorizations in progress, its
//! one-time codes and refresh tokens, and each user's upstream tokens (the grants).
//!
//! A small key-value interface with expiry ([`Store`]), so that one embedded store (SQLite, the
//! default) and shared ones for several instances behind a load balancer fit it. Every value is
//! sealed with AES-256-GCM ([`Sealer`]) under a key derived from `OPENAPI_MCP_STORE_KEY`, with
//! the record's kind and key as associated data (a value copied to another record does not open);
//! the keys of records named by a secret (a code, a refresh token, an authorization's `state`)
//! are that secret's SHA-256, so the store's contents give no usable token back.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};

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

/// The embedded store: one SQLite file (WAL), one table.
pub struct SqliteStore {
    path: PathBuf,
    conn: Mutex<rusqlite::Connection>,
    puts: std::sync::atomic::AtomicU64,
}

impl SqliteStore {
    /// Opens (creating it and its directory, owner-only, when missing) the store at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let err = |e: &dyn std::fmt::Display| {
            StoreError::Backend(format!("sqlite:{}", path.display()), e.to_string())
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
        }
        let conn = rusqlite::Connection::open(path).map_err(|e| err(&e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        }
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             PRAGMA busy_timeout=5000;
             CREATE TABLE IF NOT EXISTS oauth_proxy (
                kind TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
                expires INTEGER NOT NULL, PRIMARY KEY (kind, key));
             CREATE INDEX IF NOT EXISTS oauth_proxy_expires ON oauth_proxy (expires);",
        )
        .map_err(|e| err(&e))?;
        Ok(SqliteStore {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
            puts: Default::default(),
        })
    }

    fn run<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        f(&conn).map_err(|e| StoreError::Backend(self.describe(), e.to_string()))
    }
}

fn ready<'a, T: Send + 'a>(r: Result<T, StoreError>) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(r))
}

impl Store for SqliteStore {
    fn put<'a>(
        &'a self,
        kind: &'a str,
        key: &'a str,
        value: Vec<u8>,
        expires: u64,
    ) -> StoreFuture<'a, ()> {
        // Expired records go every 256 writes.
        let sweep = self
            .puts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .is_multiple_of(256);
        ready(self.run(|c| {
            c.execute(
                "INSERT OR REPLACE INTO oauth_proxy (kind, key, value, expires) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![kind, key, value, expires as i64],
            )?;
            if sweep {
                c.execute(
                    "DELETE FROM oauth_proxy WHERE expires < ?1",
                    [now() as i64],
                )?;
            }
            Ok(())
        }))
    }

    fn get<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        ready(self.run(|c| {
            use rusqlite::OptionalExtension as _;
            c.query_row(
                "SELECT value FROM oauth_proxy WHERE kind = ?1 AND key = ?2 AND expires >= ?3",
                rusqlite::params![kind, key, now() as i64],
                |r| r.get::<_, Vec<u8>>(0),
            )
            .optional()
        }))
    }

    fn take<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        ready(self.run(|c| {
            use rusqlite::OptionalExtension as _;
            let v = c
                .query_row(
                    "DELETE FROM oauth_proxy WHERE kind = ?1 AND key = ?2 RETURNING value, expires",
                    rusqlite::params![kind, key],
                    |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, i64>(1)?)),
                )
                .optional()?;
            Ok(v.filter(|(_, exp)| *exp >= now() as i64).map(|(v, _)| v))
        }))
    }

    fn delete<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, ()> {
        ready(self.run(|c| {
            c.execute(
                "DELETE FROM oauth_proxy WHERE kind = ?1 AND key = ?2",
                rusqlite::params![kind, key],
            )
            .map(|_| ())
        }))
    }

    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }
}

/// Seals and opens stored values (AES-256-GCM, a random 96-bit nonce per value).
pub struct Sealer {
    key: LessSafeKey,
}

impl Sealer {
    /// `key`: 32 bytes (derived from `OPENAPI_MCP_STORE_KEY`).
    pub fn new(key: &[u8; 32]) -> Self {
        // A 32-byte key is always a valid AES-256 key.
        let unbound = UnboundKey::new(&AES_256_GCM, key).unwrap_or_else(|_| unreachable!());
        Sealer {
            key: LessSafeKey::new(unbound),
        }
    }

    fn aad(kind: &str, key: &str) -> Vec<u8> {
        let mut aad = Vec::with_capacity(kind.len() + key.len() + 1);
        aad.extend_from_slice(kind.as_bytes());
        aad.push(0);
        aad.extend_from_slice(key.as_bytes());
        aad
    }

    pub fn seal(&self, kind: &str, key: &str, plain: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        super::random_bytes(&mut nonce);
        let mut buf = plain.to_vec();
        // Sealing fails only for inputs far beyond what is stored here.
        if self
            .key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(Self::aad(kind, key)),
                &mut buf,
            )
            .is_err()
        {
            return Vec::new();
        }
        let mut out = nonce.to_vec();
        out.extend_from_slice(&buf);
        out
    }

    pub fn open(&self, kind: &str, key: &str, sealed: &[u8]) -> Result<Vec<u8>, StoreError> {
        if sealed.len() < NONCE_LEN {
            return Err(StoreError::Sealed);
        }
        let (nonce, rest) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| StoreError::Sealed)?;
        let mut buf = rest.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(Self::aad(kind, key)), &mut buf)
            .map_err(|_| StoreError::Sealed)?;
        Ok(plain.to_vec())
    }
}

/// `--oauth-store`: where the state is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreSpec {
    Sqlite(PathBuf),
}

impl StoreSpec {
    /// `sqlite:PATH` (`redis://` and `postgres://` are named in the error: not built yet).
    pub fn parse(s: &str) -> Result<Self, String> {
        if let Some(path) = s.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err("--oauth-store sqlite:PATH needs a path".into());
            }
            return Ok(StoreSpec::Sqlite(PathBuf::from(path)));
        }
        let scheme = s.split(':').next().unwrap_or("");
        Err(format!(
            "--oauth-store {scheme:?}: not a store this build has; use sqlite:PATH (one instance, or instances sharing the file on one host)"
        ))
    }

    /// The default: `oauth-proxy.sqlite3` in `$OPENAPI_MCP_DATA_DIR`, else
    /// `$XDG_DATA_HOME/openapi-mcp`, else `~/.local/share/openapi-mcp`, else the working
    /// directory.
    pub fn default_path(env: impl Fn(&str) -> Option<String>) -> PathBuf {
        let dir = env("OPENAPI_MCP_DATA_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                env("XDG_DATA_HOME")
                    .filter(|d| !d.is_empty())
                    .map(|d| PathBuf::from(d).join("openapi-mcp"))
            })
            .or_else(|| {
                env("HOME")
                    .filter(|d| !d.is_empty())
                    .map(|h| PathBuf::from(h).join(".local/share/openapi-mcp"))
            })
            .unwrap_or_else(|| PathBuf::from("."));
        dir.join("oauth-proxy.sqlite3")
    }

    pub fn open(&self) -> Result<Box<dyn Store>, StoreError> {
        match self {
            StoreSpec::Sqlite(p) => Ok(Box::new(SqliteStore::open(p)?)),
        }
    }
}
