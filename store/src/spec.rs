//! `--oauth-store`: which store, from its URL.

use std::path::PathBuf;

use crate::{Store, StoreError};

/// `--oauth-store`: where the state is kept. `Debug` shows no password.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreSpec {
    Sqlite(PathBuf),
    /// `redis://…`, shared by several instances.
    Redis(String),
    /// `postgres://…` (or `postgresql://…`), shared by several instances.
    Postgres(String),
}

impl std::fmt::Debug for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreSpec::Sqlite(p) => write!(f, "sqlite:{}", p.display()),
            #[cfg(feature = "redis")]
            StoreSpec::Redis(u) => match crate::redis::shown(u) {
                Ok(r) => f.write_str(&r),
                Err(_) => f.write_str("redis://<invalid>"),
            },
            #[cfg(not(feature = "redis"))]
            StoreSpec::Redis(_) => f.write_str("redis://<not shown>"),
            #[cfg(feature = "postgres")]
            StoreSpec::Postgres(u) => match crate::postgres::shown(u) {
                Ok(p) => f.write_str(&p),
                Err(_) => f.write_str("postgres://<invalid>"),
            },
            #[cfg(not(feature = "postgres"))]
            StoreSpec::Postgres(_) => f.write_str("postgres://<not shown>"),
        }
    }
}

impl StoreSpec {
    /// `sqlite:PATH`, `redis://…`, or `postgres://…` / `postgresql://…`.
    pub fn parse(s: &str) -> Result<Self, String> {
        if let Some(path) = s.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err("--oauth-store sqlite:PATH needs a path".into());
            }
            #[cfg(not(feature = "sqlite"))]
            return Err(missing("sqlite"));
            #[cfg(feature = "sqlite")]
            return Ok(StoreSpec::Sqlite(PathBuf::from(path)));
        }
        if s.starts_with("redis://") || s.starts_with("rediss://") {
            #[cfg(feature = "redis")]
            crate::RedisStore::parse(s)?;
            #[cfg(not(feature = "redis"))]
            return Err(missing("redis"));
            #[cfg(feature = "redis")]
            return Ok(StoreSpec::Redis(s.to_string()));
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            crate::PostgresStore::parse(s)?;
            #[cfg(not(feature = "postgres"))]
            return Err(missing("postgres"));
            #[cfg(feature = "postgres")]
            return Ok(StoreSpec::Postgres(s.to_string()));
        }
        let scheme = s.split(':').next().unwrap_or("");
        Err(format!(
            "--oauth-store {scheme:?}: not a store this build has; use sqlite:PATH (one host), or redis://HOST:PORT or postgres://USER:PASSWORD@HOST:PORT/DB (instances on several hosts)"
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

    /// Opens the store (a backend this build leaves out is an error naming its feature).
    pub fn open(&self) -> Result<Box<dyn Store>, StoreError> {
        match self {
            #[cfg(feature = "sqlite")]
            StoreSpec::Sqlite(p) => Ok(Box::new(crate::SqliteStore::open(p)?)),
            #[cfg(feature = "redis")]
            StoreSpec::Redis(u) => Ok(Box::new(
                crate::RedisStore::parse(u).map_err(|e| StoreError::Backend("redis".into(), e))?,
            )),
            #[cfg(feature = "postgres")]
            StoreSpec::Postgres(u) => Ok(Box::new(
                crate::PostgresStore::parse(u)
                    .map_err(|e| StoreError::Backend("postgres".into(), e))?,
            )),
            #[allow(unreachable_patterns)]
            other => Err(StoreError::Backend(
                other.backend().into(),
                missing(other.backend()),
            )),
        }
    }

    /// The backend's name, which is also its cargo feature: `sqlite`, `redis`, `postgres`.
    pub fn backend(&self) -> &'static str {
        match self {
            StoreSpec::Sqlite(_) => "sqlite",
            StoreSpec::Redis(_) => "redis",
            StoreSpec::Postgres(_) => "postgres",
        }
    }
}

/// What a store URL whose backend this build leaves out is told.
#[allow(dead_code)]
fn missing(backend: &str) -> String {
    format!(
        "--oauth-store {backend}: this build has no `{backend}` store; enable feature `{backend}` (of openapi-mcp-store, or the server's `oauth-proxy` stores)"
    )
}
