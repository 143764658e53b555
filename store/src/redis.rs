//! The Redis store (the `redis` feature).

use std::path::PathBuf;

use crate::{Store, StoreError, StoreFuture, now};

/// A shared store for several instances: Redis 6.2 or later (`GETDEL`), over TCP
/// (`redis://[:password@]host[:port][/db]`) or TLS (`rediss://…[?ca=/path/ca.pem]`: the
/// server's certificate is checked against the platform's roots, or only against the CA
/// certificates in that PEM file). Records are keys `openapi-mcp:oauth-proxy:KIND:KEY` with
/// Redis's own expiry (`SET … EXAT`), so every instance sees every record and Redis forgets
/// expired ones itself.
///
/// The client is ours (RESP, a handful of commands and one script, one connection
/// re-established on failure) rather than a crate: they are the whole need. TLS is rustls,
/// already built for reqwest.
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

/// `put`'s index update (KEYS[1] the index; ARGV: expiry, key, `(now`): add the key scored by
/// its expiry, drop the expired members, and expire the index with its latest member.
const INDEX_PUT: &[u8] = b"redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]) \
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3]) \
local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES') \
if top[2] then redis.call('EXPIREAT', KEYS[1], top[2]) end \
return 1";

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

/// The URL as shown (no password).
pub(crate) fn shown(url: &str) -> Result<String, String> {
    RedisUrl::parse(url).map(|u| u.shown)
}

impl RedisStore {
    /// `redis://[:password@]host[:port][/db]` or `rediss://…[?ca=/path/ca.pem]` (the CA file
    /// is read here).
    pub fn parse(url: &str) -> Result<Self, String> {
        let u = RedisUrl::parse(url)?;
        let tls = if u.tls {
            let config = crate::tls::redis_tls_config(u.ca.as_deref())?;
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
            // members go at each write, so it holds no more than the live records, and it
            // expires with its latest member, so a kind written once and never again (the
            // task marker of an owner who does not come back) leaves nothing behind. One
            // script: atomic against other instances' writes, one round trip.
            let index = Self::index(kind);
            let stale = format!("({}", now());
            self.command(&[
                b"EVAL",
                INDEX_PUT,
                b"1",
                &index,
                at.as_bytes(),
                key.as_bytes(),
                stale.as_bytes(),
            ])
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

#[cfg(test)]
mod tests {
    // Test code: a panic with the unwrapped error is the failure report.
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A `redis-server` of this machine's on a free loopback port (killed on drop); `None`, and
    /// the test says it is skipped, without one.
    struct Server(std::process::Child, u16);
    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    async fn server() -> Option<Server> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn();
        let Ok(child) = child else {
            eprintln!("skipped: no redis-server on PATH (apt-get install redis-server)");
            return None;
        };
        let mut s = Server(child, port);
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Some(s);
            }
            if let Ok(Some(_)) = s.0.try_wait() {
                return None;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        None
    }

    /// The expiry of `key` in Unix seconds (`TTL` added to now): `None` for a key without one.
    async fn expiry(st: &RedisStore, key: &[u8]) -> Option<u64> {
        match st.command(&[b"TTL", key]).await.unwrap() {
            Reply::Int(t) if t >= 0 => Some(now() + u64::try_from(t).unwrap()),
            Reply::Int(_) => None,
            other => panic!("TTL answered {other:?}"),
        }
    }

    /// A kind's index (the sorted set `count` reads) expires with its latest record: a kind
    /// written once and never again (the task marker of an owner who does not come back: one per
    /// Authorization header) leaves nothing behind in Redis. Before, the index had no expiry.
    #[tokio::test]
    async fn a_kinds_index_expires_with_its_latest_record() {
        let Some(srv) = server().await else { return };
        let st = RedisStore::parse(&format!("redis://127.0.0.1:{}", srv.1)).unwrap();
        crate::contract::check(&st).await;
        let index = RedisStore::index("task-of/someone");
        let (early, late) = (now() + 600, now() + 1200);
        st.put("task-of/someone", "a", Vec::new(), late)
            .await
            .unwrap();
        let at = expiry(&st, &index).await;
        assert!(at.is_some_and(|t| t.abs_diff(late) <= 2), "{at:?}");
        // An earlier record does not shorten it; a later one lengthens it.
        st.put("task-of/someone", "b", Vec::new(), early)
            .await
            .unwrap();
        let at = expiry(&st, &index).await;
        assert!(at.is_some_and(|t| t.abs_diff(late) <= 2), "{at:?}");
        st.put("task-of/someone", "c", Vec::new(), late + 600)
            .await
            .unwrap();
        let at = expiry(&st, &index).await;
        assert!(at.is_some_and(|t| t.abs_diff(late + 600) <= 2), "{at:?}");
        assert_eq!(st.count("task-of/someone").await.unwrap(), 3);
    }
}
