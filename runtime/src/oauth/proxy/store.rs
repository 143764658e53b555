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

/// Counts a store's writes: expired records are swept on every 256th (the stores whose backend
/// does not expire records itself).
#[derive(Default)]
struct Sweeps(std::sync::atomic::AtomicU64);

impl Sweeps {
    /// Counts one write; whether this one sweeps.
    fn sweep_due(&self) -> bool {
        self.0
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .is_multiple_of(256)
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
            StoreSpec::Redis(u) => match RedisUrl::parse(u) {
                Ok(r) => f.write_str(&r.shown),
                Err(_) => f.write_str("redis://<invalid>"),
            },
            StoreSpec::Postgres(u) => match PgUrl::parse(u) {
                Ok(p) => f.write_str(&p.shown),
                Err(_) => f.write_str("postgres://<invalid>"),
            },
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
            return Ok(StoreSpec::Sqlite(PathBuf::from(path)));
        }
        if s.starts_with("redis://") || s.starts_with("rediss://") {
            RedisStore::parse(s)?;
            return Ok(StoreSpec::Redis(s.to_string()));
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            PostgresStore::parse(s)?;
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

    pub fn open(&self) -> Result<Box<dyn Store>, StoreError> {
        match self {
            StoreSpec::Sqlite(p) => Ok(Box::new(SqliteStore::open(p)?)),
            StoreSpec::Redis(u) => Ok(Box::new(
                RedisStore::parse(u).map_err(|e| StoreError::Backend("redis".into(), e))?,
            )),
            StoreSpec::Postgres(u) => Ok(Box::new(
                PostgresStore::parse(u).map_err(|e| StoreError::Backend("postgres".into(), e))?,
            )),
        }
    }
}

/// A shared store for several instances: Redis 6.2 or later (`GETDEL`), over TCP
/// (`redis://[:password@]host[:port][/db]`) or TLS (`rediss://…[?ca=/path/ca.pem]`: the
/// server's certificate is checked against the platform's roots, or only against the CA
/// certificates in that PEM file). Records are keys `openapi-mcp:oauth-proxy:KIND:KEY` with
/// Redis's own expiry (`SET … EXAT`), so every instance sees every record and Redis forgets
/// expired ones itself.
///
/// The client is ours (RESP, five commands, one connection re-established on failure) rather
/// than a crate: these five commands are the whole need. TLS is rustls, already built for
/// reqwest.
pub struct RedisStore {
    addr: String,
    password: Option<String>,
    db: u32,
    shown: String,
    tls: Option<RedisTls>,
    conn: tokio::sync::Mutex<Option<RedisConn>>,
}

/// TLS to Redis: the client configuration and the name the certificate must have.
struct RedisTls {
    config: std::sync::Arc<rustls::ClientConfig>,
    name: rustls::pki_types::ServerName<'static>,
    /// `?ca=` when given (for errors).
    ca: Option<PathBuf>,
}

/// A connection to Redis, plain or TLS.
trait RedisIo: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> RedisIo for T {}
type RedisConn = tokio::io::BufStream<Box<dyn RedisIo>>;

/// One RESP reply.
#[derive(Debug, PartialEq)]
enum Reply {
    Ok,
    Int(i64),
    Bulk(Option<Vec<u8>>),
}

/// What a Redis URL says, before anything is read or connected.
struct RedisUrl {
    host: String,
    port: u16,
    password: Option<String>,
    db: u32,
    tls: bool,
    ca: Option<PathBuf>,
    shown: String,
}

impl RedisUrl {
    fn parse(url: &str) -> Result<Self, String> {
        // The URL is not repeated in the error: it may hold the password.
        let u = url::Url::parse(url).map_err(|e| format!("--oauth-store redis://…: {e}"))?;
        let tls = u.scheme() == "rediss";
        let host = u
            .host_str()
            .ok_or("--oauth-store redis://: no host")?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = u.port().unwrap_or(6379);
        let db = u.path().trim_start_matches('/').parse::<u32>().unwrap_or(0);
        let password = u
            .password()
            .map(|p| {
                percent_encoding::percent_decode_str(p)
                    .decode_utf8_lossy()
                    .into_owned()
            })
            .filter(|p| !p.is_empty());
        let mut ca = None;
        for (k, v) in u.query_pairs() {
            match &*k {
                "ca" if tls && !v.is_empty() => ca = Some(PathBuf::from(&*v)),
                "ca" => {
                    return Err(
                        "--oauth-store: ?ca= is for rediss:// (TLS) and names a PEM file".into(),
                    );
                }
                other => {
                    return Err(format!(
                        "--oauth-store redis://…?{other}=: unknown option (rediss:// takes ?ca=/path/ca.pem)"
                    ));
                }
            }
        }
        let scheme = if tls { "rediss" } else { "redis" };
        let shown_host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        let shown = match &ca {
            Some(ca) => format!("{scheme}://{shown_host}:{port}/{db}?ca={}", ca.display()),
            None => format!("{scheme}://{shown_host}:{port}/{db}"),
        };
        Ok(RedisUrl {
            host,
            port,
            password,
            db,
            tls,
            ca,
            shown,
        })
    }
}

/// The TLS client configuration for `rediss://`: the CA certificates of `ca` (PEM) only, or
/// the platform's roots.
fn redis_tls_config(ca: Option<&Path>) -> Result<rustls::ClientConfig, String> {
    let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(std::sync::Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("--oauth-store rediss://: TLS: {e}"))?;
    let Some(ca) = ca else {
        let verifier = rustls_platform_verifier::Verifier::new(provider)
            .map_err(|e| format!("--oauth-store rediss://: the platform's CA certificates: {e}"))?;
        return Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(std::sync::Arc::new(verifier))
            .with_no_client_auth());
    };
    use rustls::pki_types::{CertificateDer, pem::PemObject as _};
    let bad =
        |e: &dyn std::fmt::Display| format!("--oauth-store rediss://…?ca={}: {e}", ca.display());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).map_err(|e| bad(&e))? {
        roots
            .add(cert.map_err(|e| bad(&e))?)
            .map_err(|e| bad(&format!("not a CA certificate: {e}")))?;
    }
    if roots.is_empty() {
        return Err(bad(&"no PEM certificate in it"));
    }
    Ok(builder.with_root_certificates(roots).with_no_client_auth())
}

impl RedisStore {
    /// `redis://[:password@]host[:port][/db]` or `rediss://…[?ca=/path/ca.pem]` (the CA file
    /// is read here).
    pub fn parse(url: &str) -> Result<Self, String> {
        let u = RedisUrl::parse(url)?;
        let tls = if u.tls {
            let config = redis_tls_config(u.ca.as_deref())?;
            let name = rustls::pki_types::ServerName::try_from(u.host.clone())
                .map_err(|e| format!("--oauth-store rediss://{}: {e}", u.host))?;
            Some(RedisTls {
                config: std::sync::Arc::new(config),
                name,
                ca: u.ca.clone(),
            })
        } else {
            None
        };
        let addr = if u.host.contains(':') {
            format!("[{}]:{}", u.host, u.port)
        } else {
            format!("{}:{}", u.host, u.port)
        };
        Ok(RedisStore {
            addr,
            password: u.password,
            db: u.db,
            shown: u.shown,
            tls,
            conn: tokio::sync::Mutex::new(None),
        })
    }

    fn err(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::Backend(self.shown.clone(), e.to_string())
    }

    fn key(kind: &str, key: &str) -> Vec<u8> {
        format!("openapi-mcp:oauth-proxy:{kind}:{key}").into_bytes()
    }

    /// The sorted set of a kind's keys, scored by their expiry (for [`Store::count`]).
    fn index(kind: &str) -> Vec<u8> {
        format!("openapi-mcp:oauth-proxy-index:{kind}").into_bytes()
    }

    async fn connect(&self) -> Result<RedisConn, StoreError> {
        let tcp = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            tokio::net::TcpStream::connect(&self.addr),
        )
        .await
        .map_err(|_| self.err("connecting timed out"))?
        .map_err(|e| self.err(e))?;
        let _ = tcp.set_nodelay(true);
        let io: Box<dyn RedisIo> = match &self.tls {
            None => Box::new(tcp),
            Some(tls) => {
                let connector =
                    tokio_rustls::TlsConnector::from(std::sync::Arc::clone(&tls.config));
                let stream = tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    connector.connect(tls.name.clone(), tcp),
                )
                .await
                .map_err(|_| self.err("the TLS handshake timed out"))?
                .map_err(|e| {
                    let hint = match &tls.ca {
                        Some(ca) => format!(
                            "is the server's certificate issued by a CA in {} for this host name?",
                            ca.display()
                        ),
                        None => "is the server's certificate issued by a CA this machine trusts for this host name? (or name its CA with ?ca=/path/ca.pem)".to_string(),
                    };
                    self.err(format!("TLS handshake: {e} ({hint})"))
                })?;
                Box::new(stream)
            }
        };
        let mut s = tokio::io::BufStream::new(io);
        if let Some(p) = &self.password {
            expect_ok(self, roundtrip(&mut s, &[b"AUTH", p.as_bytes()]).await)?;
        }
        if self.db != 0 {
            let db = self.db.to_string();
            expect_ok(self, roundtrip(&mut s, &[b"SELECT", db.as_bytes()]).await)?;
        }
        Ok(s)
    }

    /// Sends one command and reads its reply, on the shared connection (made again once when
    /// it fails).
    async fn command(&self, args: &[&[u8]]) -> Result<Reply, StoreError> {
        let mut guard = self.conn.lock().await;
        for attempt in 0..2 {
            if guard.is_none() {
                *guard = Some(self.connect().await?);
            }
            let Some(s) = guard.as_mut() else { continue };
            match tokio::time::timeout(std::time::Duration::from_secs(5), roundtrip(s, args)).await
            {
                Ok(Ok(Ok(r))) => return Ok(r),
                Ok(Ok(Err(server_error))) => return Err(self.err(server_error)),
                Ok(Err(e)) if attempt == 0 => {
                    tracing::debug!("redis store: {e}; reconnecting");
                    *guard = None;
                }
                Ok(Err(e)) => {
                    *guard = None;
                    return Err(self.err(e));
                }
                Err(_) => {
                    *guard = None;
                    return Err(self.err("no answer within 5 s"));
                }
            }
        }
        Err(self.err("cannot reach Redis"))
    }
}

fn expect_ok(
    store: &RedisStore,
    r: std::io::Result<Result<Reply, String>>,
) -> Result<(), StoreError> {
    match r {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(store.err(e)),
        Err(e) => Err(store.err(e)),
    }
}

/// Writes a RESP command; reads one reply (`Err` inside: the server's error line).
async fn roundtrip(s: &mut RedisConn, args: &[&[u8]]) -> std::io::Result<Result<Reply, String>> {
    use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    s.write_all(&out).await?;
    s.flush().await?;
    let mut line = String::new();
    if s.read_line(&mut line).await? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "Redis closed the connection",
        ));
    }
    let line = line.trim_end();
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not a RESP reply");
    let (tag, rest) = line.split_at(line.len().min(1));
    Ok(match tag {
        "+" => Ok(Reply::Ok),
        "-" => Err(rest.chars().take(200).collect()),
        ":" => Ok(Reply::Int(rest.parse().map_err(|_| bad())?)),
        "$" => {
            let n: i64 = rest.parse().map_err(|_| bad())?;
            if n < 0 {
                Ok(Reply::Bulk(None))
            } else {
                let n = usize::try_from(n).map_err(|_| bad())?;
                if n > 16 * 1024 * 1024 {
                    return Err(bad());
                }
                let mut buf = vec![0u8; n + 2];
                s.read_exact(&mut buf).await?;
                buf.truncate(n);
                Ok(Reply::Bulk(Some(buf)))
            }
        }
        _ => return Err(bad()),
    })
}

impl Store for RedisStore {
    fn put<'a>(
        &'a self,
        kind: &'a str,
        key: &'a str,
        value: Vec<u8>,
        expires: u64,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let k = Self::key(kind, key);
            let at = expires.max(1).to_string();
            self.command(&[b"SET", &k, &value, b"EXAT", at.as_bytes()])
                .await?;
            // The kind's index (a sorted set of its keys by expiry), for `count`; its expired
            // members go at each write, so it holds no more than the live records.
            let index = Self::index(kind);
            self.command(&[b"ZADD", &index, at.as_bytes(), key.as_bytes()])
                .await?;
            let stale = format!("({}", now());
            self.command(&[b"ZREMRANGEBYSCORE", &index, b"-inf", stale.as_bytes()])
                .await
                .map(|_| ())
        })
    }

    fn get<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            match self.command(&[b"GET", &Self::key(kind, key)]).await? {
                Reply::Bulk(v) => Ok(v),
                other => Err(self.err(format!("GET answered {other:?}"))),
            }
        })
    }

    fn take<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            let taken = match self.command(&[b"GETDEL", &Self::key(kind, key)]).await? {
                Reply::Bulk(v) => v,
                other => return Err(self.err(format!("GETDEL answered {other:?}"))),
            };
            self.command(&[b"ZREM", &Self::index(kind), key.as_bytes()])
                .await?;
            Ok(taken)
        })
    }

    fn delete<'a>(&'a self, kind: &'a str, key: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.command(&[b"DEL", &Self::key(kind, key)]).await?;
            self.command(&[b"ZREM", &Self::index(kind), key.as_bytes()])
                .await
                .map(|_| ())
        })
    }

    fn count<'a>(&'a self, kind: &'a str) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let index = Self::index(kind);
            let stale = format!("({}", now());
            self.command(&[b"ZREMRANGEBYSCORE", &index, b"-inf", stale.as_bytes()])
                .await?;
            match self.command(&[b"ZCARD", &index]).await? {
                Reply::Int(n) => Ok(u64::try_from(n).unwrap_or(0)),
                other => Err(self.err(format!("ZCARD answered {other:?}"))),
            }
        })
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }
}

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

impl PostgresStore {
    /// `postgres://USER:PASSWORD@HOST[:PORT]/DB[?OPTION=VALUE…]` (or `postgresql://`); with
    /// TLS, the `sslrootcert` file is read here.
    pub fn parse(url: &str) -> Result<Self, String> {
        let u = PgUrl::parse(url)?;
        let tls = if u.tls {
            let config = redis_tls_config(u.ca.as_deref()).map_err(|e| {
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
