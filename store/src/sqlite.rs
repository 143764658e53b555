//! The embedded store: SQLite, compiled in (the `sqlite` feature).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::{Store, StoreError, StoreFuture, Sweeps, now};

/// The embedded store: one SQLite file (WAL), one table.
pub struct SqliteStore {
    path: PathBuf,
    conn: Mutex<rusqlite::Connection>,
    puts: Sweeps,
}

impl SqliteStore {
    /// Opens (creating it and its directory, owner-only, when missing) the store at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let err = |e: &dyn std::fmt::Display| {
            StoreError::Backend(format!("sqlite:{}", path.display()), e.to_string())
        };
        // Owner-only from the first byte: the directory is made 0700 and the file 0600 before
        // SQLite opens it (SQLite gives its -wal and -shm files the database file's mode). Setting
        // the mode after opening left a window in which another local user could open a handle
        // that keeps working after the chmod. An existing file or directory keeps its mode.
        // `:memory:` is SQLite's name for a database that is no file: nothing to create.
        let on_disk = path.as_os_str() != ":memory:";
        if let Some(dir) = path
            .parent()
            .filter(|d| on_disk && !d.as_os_str().is_empty())
        {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(dir).map_err(|e| err(&e))?;
        }
        if on_disk {
            let mut create = std::fs::OpenOptions::new();
            create.write(true).create(true).truncate(false);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut create, 0o600);
            create.open(path).map_err(|e| err(&e))?;
        }
        let conn = rusqlite::Connection::open(path).map_err(|e| err(&e))?;
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
        let sweep = self.puts.sweep_due();
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

    fn count<'a>(&'a self, kind: &'a str) -> StoreFuture<'a, u64> {
        ready(self.run(|c| {
            c.query_row(
                "SELECT COUNT(*) FROM oauth_proxy WHERE kind = ?1 AND expires >= ?2",
                rusqlite::params![kind, now() as i64],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| u64::try_from(n).unwrap_or(0))
        }))
    }

    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }
}
