//! The PostgreSQL store (the `postgres` feature).

use std::path::PathBuf;

use crate::{Store, StoreError, StoreFuture, Sweeps, now};

/// A shared store for several instances: PostgreSQL (9.5 or later: `ON CONFLICT`,
/// `DELETE … RETURNING`), `postgres://USER:PASSWORD@HOST:PORT/DB` (or `postgresql://`, or
/// libpq's `key=value` options in the query: `?connect_timeout=10&application_name=x`). With
/// `sslmode=require` or `verify-full` (and `sslrootcert=/path/ca.pem` for an operator's CA, else
/// the platform's roots), over TLS (rustls, the certificate and host name always checked);
/// otherwise plain. One table, `openapi_mcp_oauth_proxy (kind, key, value bytea, expires
/// bigint, PRIMARY KEY (kind, key))`, created when missing; expired rows are never read and are
/// deleted every 256 writes.
///
/// One connection (`tokio-postgres` pipelines the concurrent queries of all tasks over it),
/// made again on the next request when it was lost.
pub struct PostgresStore {
    config: tokio_postgres::Config,
    shown: String,
    tls: Option<std::sync::Arc<rustls::ClientConfig>>,
    /// `sslrootcert=` when given (for errors).
    ca: Option<PathBuf>,
    conn: tokio::sync::Mutex<Option<std::sync::Arc<PgConn>>>,
    puts: Sweeps,
}

/// `tokio-postgres`'s TLS hooks over `tokio-rustls`, with the Redis store's rustls
/// configuration (no channel binding: SCRAM without `-PLUS`).
#[derive(Clone)]
struct PgTls(std::sync::Arc<rustls::ClientConfig>);

struct PgTlsConnect {
    connector: tokio_rustls::TlsConnector,
    name: rustls::pki_types::ServerName<'static>,
}

struct PgTlsStream(tokio_rustls::client::TlsStream<tokio_postgres::Socket>);

impl tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket> for PgTls {
    type Stream = PgTlsStream;
    type TlsConnect = PgTlsConnect;
    type Error = rustls::pki_types::InvalidDnsNameError;

    fn make_tls_connect(&mut self, domain: &str) -> Result<PgTlsConnect, Self::Error> {
        Ok(PgTlsConnect {
            connector: tokio_rustls::TlsConnector::from(std::sync::Arc::clone(&self.0)),
            name: rustls::pki_types::ServerName::try_from(domain.to_string())?,
        })
    }
}

impl tokio_postgres::tls::TlsConnect<tokio_postgres::Socket> for PgTlsConnect {
    type Stream = PgTlsStream;
    type Error = std::io::Error;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<PgTlsStream>> + Send>>;

    fn connect(self, stream: tokio_postgres::Socket) -> Self::Future {
        Box::pin(async move {
            self.connector
                .connect(self.name, stream)
                .await
                .map(PgTlsStream)
        })
    }
}

impl tokio::io::AsyncRead for PgTlsStream {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for PgTlsStream {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl tokio_postgres::tls::TlsStream for PgTlsStream {
    fn channel_binding(&self) -> tokio_postgres::tls::ChannelBinding {
        tokio_postgres::tls::ChannelBinding::none()
    }
}

/// What a PostgreSQL URL says, before anything is read or connected: the client configuration
/// (with `sslmode` and `sslrootcert` taken out), whether TLS is required, the CA file, and the
/// URL as shown (no password).
struct PgUrl {
    config: tokio_postgres::Config,
    tls: bool,
    ca: Option<PathBuf>,
    shown: String,
}

impl PgUrl {
    fn parse(url: &str) -> Result<Self, String> {
        // sslmode and sslrootcert are ours: tokio-postgres knows neither verify-full nor
        // sslrootcert. The URL is not repeated in errors: it may hold the password.
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut rest = Vec::new();
        let mut mode = None;
        let mut ca = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = percent_encoding::percent_decode_str(v)
                .decode_utf8_lossy()
                .into_owned();
            match k {
                "sslmode" => mode = Some(v),
                "sslrootcert" if !v.is_empty() => ca = Some(PathBuf::from(v)),
                _ => rest.push(pair),
            }
        }
        let tls = match mode.as_deref() {
            None | Some("disable" | "allow" | "prefer") => false,
            Some("require" | "verify-ca" | "verify-full") => true,
            Some(other) => {
                return Err(format!(
                    "--oauth-store postgres://…?sslmode={other}: use disable (plain) or require/verify-full (TLS, the certificate always checked)"
                ));
            }
        };
        if ca.is_some() && !tls {
            return Err(
                "--oauth-store postgres://…?sslrootcert=: needs sslmode=require or verify-full"
                    .into(),
            );
        }
        let url = if rest.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", rest.join("&"))
        };
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| format!("--oauth-store postgres://…: {}", pg_error(&e)))?;
        config.ssl_mode(if tls {
            tokio_postgres::config::SslMode::Require
        } else {
            tokio_postgres::config::SslMode::Disable
        });
        if config.get_hosts().is_empty() {
            return Err("--oauth-store postgres://: no host".into());
        }
        if config.get_user().is_none() {
            return Err(
                "--oauth-store postgres://: no user (postgres://USER:PASSWORD@HOST/DB)".into(),
            );
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(5));
        }
        if config.get_application_name().is_none() {
            config.application_name("openapi-mcp oauth-proxy");
        }
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .map(|h| match h {
                tokio_postgres::config::Host::Tcp(name) => name.clone(),
                #[cfg(unix)]
                tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let mut shown = format!(
            "postgres://{}@{}:{port}/{}",
            config.get_user().unwrap_or(""),
            hosts.join(","),
            config
                .get_dbname()
                .or(config.get_user())
                .unwrap_or_default()
        );
        if tls {
            shown.push_str("?sslmode=verify-full");
            if let Some(ca) = &ca {
                shown.push_str(&format!("&sslrootcert={}", ca.display()));
            }
        }
        Ok(PgUrl {
            config,
            tls,
            ca,
            shown,
        })
    }
}

/// A live connection and its prepared statements.
struct PgConn {
    client: tokio_postgres::Client,
    put: tokio_postgres::Statement,
    get: tokio_postgres::Statement,
    take: tokio_postgres::Statement,
    delete: tokio_postgres::Statement,
    sweep: tokio_postgres::Statement,
    count: tokio_postgres::Statement,
}

/// The table's name (in the connection's default schema).
const PG_TABLE: &str = "openapi_mcp_oauth_proxy";

/// A `tokio-postgres` error as one line, with its cause (the server's message and SQLSTATE).
/// Neither carries the connection's password.
fn pg_error(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {} ({})", db.severity(), db.message(), db.code().code());
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

/// Whether the connection is gone after `e`: closed, or ended by the server (a FATAL error:
/// `pg_terminate_backend`, a shutdown, a restart; or a connection exception, SQLSTATE 08…).
fn pg_lost(e: &tokio_postgres::Error) -> bool {
    e.is_closed()
        || e.as_db_error().is_some_and(|db| {
            matches!(db.severity(), "FATAL" | "PANIC") || db.code().code().starts_with("08")
        })
}

/// The URL as shown (no password).
pub(crate) fn shown(url: &str) -> Result<String, String> {
    PgUrl::parse(url).map(|u| u.shown)
}

impl PostgresStore {
    /// `postgres://USER:PASSWORD@HOST[:PORT]/DB[?OPTION=VALUE…]` (or `postgresql://`); with
    /// TLS, the `sslrootcert` file is read here.
    pub fn parse(url: &str) -> Result<Self, String> {
        let u = PgUrl::parse(url)?;
        let tls = if u.tls {
            let config = crate::tls::redis_tls_config(u.ca.as_deref()).map_err(|e| {
                e.replace("rediss://…?ca=", "postgres://…?sslrootcert=")
                    .replace("rediss://", "postgres://")
            })?;
            Some(std::sync::Arc::new(config))
        } else {
            None
        };
        Ok(PostgresStore {
            config: u.config,
            shown: u.shown,
            tls,
            ca: u.ca,
            conn: tokio::sync::Mutex::new(None),
            puts: Default::default(),
        })
    }

    fn err(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::Backend(self.shown.clone(), e.to_string())
    }

    /// Connects, creates the table when missing and prepares the statements.
    async fn connect(&self) -> Result<PgConn, StoreError> {
        let timeout = std::time::Duration::from_secs(10);
        let timed_out = |_| self.err("connecting timed out");
        let failed = |e: tokio_postgres::Error| match &self.tls {
            Some(_) if e.to_string().contains("TLS") => {
                let hint = match &self.ca {
                    Some(ca) => format!(
                        "is the server's certificate issued by a CA in {} for this host name?",
                        ca.display()
                    ),
                    None => "is the server's certificate issued by a CA this machine trusts for this host name? (or name its CA with sslrootcert=/path/ca.pem)".to_string(),
                };
                self.err(format!("{} ({hint})", pg_error(&e)))
            }
            _ => self.err(pg_error(&e)),
        };
        let ended = |r: Result<(), tokio_postgres::Error>| {
            if let Err(e) = r {
                tracing::debug!("postgres store: the connection ended: {}", pg_error(&e));
            }
        };
        let client = match &self.tls {
            None => {
                let (client, connection) =
                    tokio::time::timeout(timeout, self.config.connect(tokio_postgres::NoTls))
                        .await
                        .map_err(timed_out)?
                        .map_err(failed)?;
                tokio::spawn(async move { ended(connection.await) });
                client
            }
            Some(tls) => {
                let tls = PgTls(std::sync::Arc::clone(tls));
                let (client, connection) = tokio::time::timeout(timeout, self.config.connect(tls))
                    .await
                    .map_err(timed_out)?
                    .map_err(failed)?;
                tokio::spawn(async move { ended(connection.await) });
                client
            }
        };
        let create = format!(
            "CREATE TABLE IF NOT EXISTS {PG_TABLE} (
                kind text NOT NULL, key text NOT NULL, value bytea NOT NULL,
                expires bigint NOT NULL, PRIMARY KEY (kind, key));
             CREATE INDEX IF NOT EXISTS {PG_TABLE}_expires ON {PG_TABLE} (expires);"
        );
        // Created only when missing, so that a user with no CREATE right on the schema can use
        // a table made by another. Two instances creating it at once: one of them may see the
        // other's half-made type (a unique violation) and finds the table there on the second
        // try.
        let exists = client
            .query_one(
                &format!("SELECT to_regclass('{PG_TABLE}') IS NOT NULL"),
                &[],
            )
            .await
            .and_then(|r| r.try_get::<_, bool>(0))
            .map_err(|e| self.err(pg_error(&e)))?;
        if !exists && let Err(e) = client.batch_execute(&create).await {
            let racing = e.code().is_some_and(|c| {
                *c == tokio_postgres::error::SqlState::UNIQUE_VIOLATION
                    || *c == tokio_postgres::error::SqlState::DUPLICATE_TABLE
            });
            if !racing {
                return Err(self.err(pg_error(&e)));
            }
            client
                .batch_execute(&create)
                .await
                .map_err(|e| self.err(pg_error(&e)))?;
        }
        let prepare = |sql: String| {
            let client = &client;
            async move {
                client
                    .prepare(&sql)
                    .await
                    .map_err(|e| self.err(pg_error(&e)))
            }
        };
        Ok(PgConn {
            put: prepare(format!(
                "INSERT INTO {PG_TABLE} (kind, key, value, expires) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (kind, key) DO UPDATE SET value = EXCLUDED.value, expires = EXCLUDED.expires"
            ))
            .await?,
            get: prepare(format!(
                "SELECT value FROM {PG_TABLE} WHERE kind = $1 AND key = $2 AND expires >= $3"
            ))
            .await?,
            take: prepare(format!(
                "DELETE FROM {PG_TABLE} WHERE kind = $1 AND key = $2 RETURNING value, expires"
            ))
            .await?,
            delete: prepare(format!("DELETE FROM {PG_TABLE} WHERE kind = $1 AND key = $2")).await?,
            sweep: prepare(format!("DELETE FROM {PG_TABLE} WHERE expires < $1")).await?,
            count: prepare(format!(
                "SELECT COUNT(*) FROM {PG_TABLE} WHERE kind = $1 AND expires >= $2"
            ))
            .await?,
            client,
        })
    }

    /// Runs `op` on the connection (made when there is none); when the connection turns out
    /// lost, once more on a new one.
    async fn run<T, F, Fut>(&self, op: F) -> Result<T, StoreError>
    where
        F: Fn(std::sync::Arc<PgConn>) -> Fut,
        Fut: std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    {
        for attempt in 0..2 {
            let conn = {
                let mut slot = self.conn.lock().await;
                match slot.as_ref() {
                    Some(c) if !c.client.is_closed() => std::sync::Arc::clone(c),
                    _ => {
                        *slot = None;
                        let c = std::sync::Arc::new(self.connect().await?);
                        *slot = Some(std::sync::Arc::clone(&c));
                        c
                    }
                }
            };
            let result = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                op(std::sync::Arc::clone(&conn)),
            )
            .await;
            let lost = match result {
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e)) if pg_lost(&e) || conn.client.is_closed() => pg_error(&e),
                Ok(Err(e)) => return Err(self.err(pg_error(&e))),
                Err(_) => "no answer within 5 s".to_string(),
            };
            // Forget this connection (unless another task has already replaced it).
            let mut slot = self.conn.lock().await;
            if slot
                .as_ref()
                .is_some_and(|c| std::sync::Arc::ptr_eq(c, &conn))
            {
                *slot = None;
            }
            drop(slot);
            if attempt == 1 {
                return Err(self.err(lost));
            }
            tracing::debug!("postgres store: {lost}; reconnecting");
        }
        Err(self.err("cannot reach PostgreSQL"))
    }
}

impl Store for PostgresStore {
    fn put<'a>(
        &'a self,
        kind: &'a str,
        key: &'a str,
        value: Vec<u8>,
        expires: u64,
    ) -> StoreFuture<'a, ()> {
        let sweep = self.puts.sweep_due();
        Box::pin(async move {
            let expires = i64::try_from(expires).unwrap_or(i64::MAX);
            self.run(|c| {
                let value = &value;
                async move {
                    c.client
                        .execute(&c.put, &[&kind, &key, value, &expires])
                        .await?;
                    if sweep {
                        c.client.execute(&c.sweep, &[&(now() as i64)]).await?;
                    }
                    Ok(())
                }
            })
            .await
        })
    }

    fn get<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            self.run(|c| async move {
                let row = c
                    .client
                    .query_opt(&c.get, &[&kind, &key, &(now() as i64)])
                    .await?;
                row.map(|r| r.try_get::<_, Vec<u8>>(0)).transpose()
            })
            .await
        })
    }

    fn take<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            self.run(|c| async move {
                let row = c.client.query_opt(&c.take, &[&kind, &key]).await?;
                let Some(row) = row else { return Ok(None) };
                let expires: i64 = row.try_get(1)?;
                let value: Vec<u8> = row.try_get(0)?;
                Ok((expires >= now() as i64).then_some(value))
            })
            .await
        })
    }

    fn delete<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.run(|c| async move {
                c.client
                    .execute(&c.delete, &[&kind, &key])
                    .await
                    .map(|_| ())
            })
            .await
        })
    }

    fn count<'a>(&'a self, kind: &'a str) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            self.run(|c| async move {
                let row = c
                    .client
                    .query_one(&c.count, &[&kind, &(now() as i64)])
                    .await?;
                let n: i64 = row.try_get(0)?;
                Ok(u64::try_from(n).unwrap_or(0))
            })
            .await
        })
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }
}
