//! The stores' own tests: the SQLite store against the store contract, its files' modes, and
//! the default path. (Redis and PostgreSQL are checked by the OAuth proxy's tests, against real
//! servers, with the same contract.)
// Test code: a panic with the unwrapped error is the failure report.
#![allow(clippy::unwrap_used)]

use super::*;

fn env(extra: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k: &str| {
        extra
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

#[cfg(feature = "sqlite")]
mod tempdir {
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Self {
            let mut b = [0u8; 8];
            crate::random_bytes(&mut b);
            let name: String = b.iter().map(|x| format!("{x:02x}")).collect();
            let p = std::env::temp_dir().join(format!("openapi-mcp-store-{name}"));
            let _ = std::fs::create_dir_all(&p);
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[test]
fn the_default_store_is_in_a_data_directory() {
    let p = StoreSpec::default_path(env(&[("XDG_DATA_HOME", "/data"), ("HOME", "/home/u")]));
    assert_eq!(
        p,
        std::path::PathBuf::from("/data/openapi-mcp/oauth-proxy.sqlite3")
    );
    let p = StoreSpec::default_path(env(&[("HOME", "/home/u")]));
    assert_eq!(
        p,
        std::path::PathBuf::from("/home/u/.local/share/openapi-mcp/oauth-proxy.sqlite3")
    );
}

/// The memory store (no backend feature) keeps the same contract.
#[tokio::test]
async fn the_memory_store_keeps_the_store_contract() {
    let st = MemoryStore::new();
    contract::check(&st).await;
    assert_eq!(st.describe(), "memory");
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn the_sqlite_store_keeps_the_store_contract() {
    let d = tempdir::Dir::new();
    let st = SqliteStore::open(&d.0.join("sub/dir/s.sqlite3")).expect("opens");
    contract::check(&st).await;
    assert!(st.describe().starts_with("sqlite:"));
}

/// The SQLite store's directory and files are owner-only from creation (#36): the directories it
/// makes are 0700 (they were 0755) and the database and its write-ahead log 0600, the file being
/// created with that mode before SQLite opens it rather than chmod-ed afterwards.
#[cfg(unix)]
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn the_sqlite_store_is_owner_only_from_creation() {
    use std::os::unix::fs::PermissionsExt as _;
    let d = tempdir::Dir::new();
    let file = d.0.join("made/here/s.sqlite3");
    let st = SqliteStore::open(&file).expect("opens");
    st.put("client", "k", b"v".to_vec(), now() + 60)
        .await
        .expect("put");
    let mode = |p: &std::path::Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    assert_eq!(mode(&d.0.join("made")), 0o700);
    assert_eq!(mode(&d.0.join("made/here")), 0o700);
    assert_eq!(mode(&file), 0o600);
    let wal = d.0.join("made/here/s.sqlite3-wal");
    if wal.exists() {
        assert_eq!(mode(&wal), 0o600);
    }
}

/// `sqlite::memory:` stays in memory: creating the file before SQLite opens it must not make a file
/// named `:memory:` in the working directory (the oauth_proxy fuzz check uses that store).
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn the_in_memory_sqlite_store_makes_no_file() {
    let name = std::path::Path::new(":memory:");
    let existed = name.exists();
    let st = SqliteStore::open(name).expect("opens");
    st.put("client", "k", b"v".to_vec(), now() + 60)
        .await
        .expect("put");
    assert!(existed || !name.exists(), "a file named :memory: was made");
}

/// A store URL whose backend this build leaves out names the feature to enable.
#[cfg(not(all(feature = "redis", feature = "postgres")))]
#[test]
fn a_store_left_out_of_the_build_names_its_feature() {
    #[cfg(not(feature = "redis"))]
    {
        let e = StoreSpec::parse("redis://127.0.0.1:6379").expect_err("no redis");
        assert!(e.contains("enable feature `redis`"), "{e}");
    }
    #[cfg(not(feature = "postgres"))]
    {
        let e = StoreSpec::parse("postgres://u:hunter2@h/db").expect_err("no postgres");
        assert!(e.contains("enable feature `postgres`"), "{e}");
        assert!(!e.contains("hunter2"), "{e}");
        let e = StoreSpec::Postgres("postgres://u:hunter2@h/db".into())
            .open()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("enable feature `postgres`"), "{e}");
    }
}
