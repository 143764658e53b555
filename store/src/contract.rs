//! The contract every [`Store`] keeps, as a check run against a store (the `contract` feature:
//! for this crate's tests and those of its users that run it against Redis and PostgreSQL).
// A check: a panic with what differs is its report.
#![allow(clippy::unwrap_used)]

use crate::{Store, now};

/// What every store must do, run against each (SQLite here; Redis and PostgreSQL when their
/// servers are on this machine).
pub async fn check(st: &dyn Store) {
    let binary = b"v\r\n\0binary\xff".to_vec();
    st.put("code", "k", binary.clone(), now() + 60)
        .await
        .expect("put");
    assert_eq!(
        st.get("code", "k").await.expect("get"),
        Some(binary.clone())
    );
    assert_eq!(
        st.get("grant", "k").await.expect("get"),
        None,
        "kinds apart"
    );
    assert_eq!(st.take("code", "k").await.expect("take"), Some(binary));
    assert_eq!(
        st.take("code", "k").await.expect("take"),
        None,
        "taken once"
    );
    assert_eq!(st.get("code", "k").await.expect("get"), None);
    // Expired records are neither read nor taken.
    st.put("code", "old", b"v".to_vec(), now() - 1)
        .await
        .expect("put");
    assert_eq!(st.get("code", "old").await.expect("get"), None, "expired");
    assert_eq!(st.take("code", "old").await.expect("take"), None, "expired");
    // A put replaces the value and the expiry.
    st.put("grant", "g", b"1".to_vec(), now() - 1)
        .await
        .expect("put");
    st.put("grant", "g", b"2".to_vec(), now() + 60)
        .await
        .expect("put");
    assert_eq!(
        st.get("grant", "g").await.expect("get"),
        Some(b"2".to_vec())
    );
    st.delete("grant", "g").await.expect("delete");
    st.delete("grant", "never-there").await.expect("delete");
    assert_eq!(st.get("grant", "g").await.expect("get"), None);
    // Of eight concurrent takes of one record, exactly one gets it.
    st.put("refresh", "once", b"rt".to_vec(), now() + 60)
        .await
        .expect("put");
    let takes = futures::future::join_all((0..8).map(|_| st.take("refresh", "once"))).await;
    let won: Vec<_> = takes
        .into_iter()
        .map(|t| t.expect("take"))
        .filter(Option::is_some)
        .collect();
    assert_eq!(won, vec![Some(b"rt".to_vec())], "one take wins");
    // Live records of a kind are counted; expired, taken and deleted ones are not.
    for k in ["c1", "c2", "c3"] {
        st.put("client-new", k, b"x".to_vec(), now() + 60)
            .await
            .expect("put");
    }
    st.put("client-new", "old", b"x".to_vec(), now() - 1)
        .await
        .expect("put");
    st.put("pending", "p", b"x".to_vec(), now() + 60)
        .await
        .expect("put");
    assert_eq!(st.count("client-new").await.expect("count"), 3);
    st.delete("client-new", "c1").await.expect("delete");
    let _ = st.take("client-new", "c2").await.expect("take");
    st.put("client-new", "c3", b"y".to_vec(), now() + 60)
        .await
        .expect("put");
    assert_eq!(st.count("client-new").await.expect("count"), 1);
    assert_eq!(st.count("pending").await.expect("count"), 1);
    assert_eq!(st.count("nothing").await.expect("count"), 0);
    assert!(!st.describe().is_empty());
}
