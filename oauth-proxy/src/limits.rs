//! What bounds the OAuth proxy's unauthenticated endpoints (#36): the size of everything a
//! client can make the proxy keep, how many registrations and sign-ins in progress the store
//! holds, and how often one client address may call `/register`, `/authorize` (and the consent
//! form), `/oauth/callback` and `/token`.
//!
//! The client address is the TCP peer's (there is no trusted-proxy notion in the server: behind
//! a reverse proxy every client shares its address, so these limits become that proxy's totals).
//! IPv6 peers are counted per /64, the block one subscriber gets.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::OAuthProxy;

/// The longest `state` a client may send to `/authorize` (kept while the user signs in).
pub const MAX_STATE_BYTES: usize = 1024;
/// The most redirect URIs one client may register (or list in its metadata document).
pub const MAX_REDIRECT_URIS: usize = 8;
/// The longest redirect URI.
pub const MAX_REDIRECT_URI_BYTES: usize = 512;
/// The longest `client_name` (characters).
pub const MAX_CLIENT_NAME_CHARS: usize = 100;
/// The longest `scope` (at `/register` and `/authorize`).
pub const MAX_SCOPE_BYTES: usize = 1024;
/// The most scopes one request names.
pub const MAX_SCOPES: usize = 64;
/// The largest `/register` body (client metadata, RFC 7591).
pub const MAX_REGISTRATION_BYTES: usize = 16 * 1024;
/// The longest `client_id` (a registered id is 43 characters; a metadata document's URL).
pub const MAX_CLIENT_ID_BYTES: usize = 512;
/// A registered client that never got a token is forgotten after this long.
pub const UNUSED_CLIENT_TTL: u64 = 24 * 3600;
/// The most registrations that never got a token the store keeps; `/register` refuses beyond.
pub const MAX_UNUSED_CLIENTS: u64 = 10_000;
/// The most sign-ins in progress (sent to the API's authorization server, not back yet) the
/// store keeps; `/authorize` refuses beyond.
pub const MAX_PENDING: u64 = 10_000;
/// The most client metadata documents kept in the cache; beyond, documents are fetched again
/// each time instead of kept.
pub const MAX_CACHED_DOCUMENTS: u64 = 10_000;

/// How many records of the kinds a stranger can create the store keeps.
#[derive(Clone, Copy, Debug)]
pub struct StoreBounds {
    /// Registrations that never got a token.
    pub unused_clients: u64,
    /// Sign-ins in progress.
    pub pending: u64,
    /// Cached client metadata documents.
    pub documents: u64,
}

impl Default for StoreBounds {
    fn default() -> Self {
        StoreBounds {
            unused_clients: MAX_UNUSED_CLIENTS,
            pending: MAX_PENDING,
            documents: MAX_CACHED_DOCUMENTS,
        }
    }
}

/// An endpoint group with its own budget per client address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `POST /register`.
    Register,
    /// `GET /authorize` and the consent form's `POST /oauth/consent`.
    Authorize,
    /// `GET /oauth/callback`.
    Callback,
    /// `POST /token`.
    Token,
}

impl Endpoint {
    /// The endpoint of a request path, if it is a limited one.
    pub fn of(path: &str) -> Option<Self> {
        match path {
            "/register" => Some(Endpoint::Register),
            "/authorize" | "/oauth/consent" => Some(Endpoint::Authorize),
            "/oauth/callback" => Some(Endpoint::Callback),
            "/token" => Some(Endpoint::Token),
            _ => None,
        }
    }

    /// (burst, requests per second afterwards) per client address.
    pub fn budget(self) -> (f64, f64) {
        match self {
            // Registration is once per client installation.
            Endpoint::Register => (20.0, 0.1),
            Endpoint::Authorize => (30.0, 0.5),
            Endpoint::Callback => (30.0, 0.5),
            Endpoint::Token => (60.0, 1.0),
        }
    }
}

struct Bucket {
    tokens: f64,
    last: Instant,
}

/// Above this many tracked addresses, full buckets are forgotten (a forgotten bucket and a full
/// one behave alike).
const PRUNE_AT: usize = 4096;
/// Never more than this many: past it, new addresses share one bucket.
const MAX_TRACKED: usize = 65_536;

/// Token buckets per (endpoint, client address).
#[derive(Default)]
pub struct RateLimits {
    buckets: Mutex<Buckets>,
}

#[derive(Default)]
struct Buckets {
    map: HashMap<(Endpoint, String), Bucket>,
    /// The size at which full buckets are pruned next (doubling while they are all in use, so
    /// a flood of addresses costs a prune per doubling, not per request).
    prune_at: usize,
}

impl RateLimits {
    /// Takes one request of `endpoint` for `addr`, or says how long until one is allowed.
    pub fn take(
        &self,
        endpoint: Endpoint,
        addr: Option<IpAddr>,
        now: Instant,
    ) -> Result<(), Duration> {
        let (burst, rate) = endpoint.budget();
        let mut guard = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let buckets = &mut *guard;
        let mut key = (endpoint, client_key(addr));
        if !buckets.map.contains_key(&key) {
            if buckets.map.len() >= buckets.prune_at.max(PRUNE_AT) {
                buckets.map.retain(|(ep, _), b| {
                    let (burst, rate) = ep.budget();
                    b.tokens + now.saturating_duration_since(b.last).as_secs_f64() * rate < burst
                });
                buckets.prune_at = (buckets.map.len() * 2).max(PRUNE_AT);
            }
            if buckets.map.len() >= MAX_TRACKED {
                key = (endpoint, "overflow".to_string());
            }
        }
        let b = buckets.map.entry(key).or_insert(Bucket {
            tokens: burst,
            last: now,
        });
        let elapsed = now.saturating_duration_since(b.last).as_secs_f64();
        b.tokens = (b.tokens + elapsed * rate).min(burst);
        b.last = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - b.tokens) / rate))
        }
    }
}

/// What a client address counts as: the IPv4 address, an IPv6 address's /64 (an IPv4-mapped
/// one as its IPv4 address).
pub fn client_key(addr: Option<IpAddr>) -> String {
    match addr {
        None => "unknown".into(),
        Some(IpAddr::V4(a)) => a.to_string(),
        Some(IpAddr::V6(a)) => match a.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = a.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// The middleware of the proxy's routes: 429 with `Retry-After` past an endpoint's budget.
pub async fn limit(State(p): State<Arc<OAuthProxy>>, req: Request, next: Next) -> Response {
    let Some(endpoint) = Endpoint::of(req.uri().path()).filter(|_| p.cfg.rate_limited) else {
        return next.run(req).await;
    };
    let addr = req
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip());
    match p.limits.take(endpoint, addr, Instant::now()) {
        Ok(()) => next.run(req).await,
        Err(wait) => {
            let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
            tracing::info!(
                client = %client_key(addr),
                ?endpoint,
                "oauth-proxy: too many requests from one client address"
            );
            let (burst, rate) = endpoint.budget();
            let text = format!(
                "too many requests from this address (at most {burst} at once, then one every {} s); retry after {secs} s",
                1.0 / rate
            );
            let mut resp = if matches!(endpoint, Endpoint::Register | Endpoint::Token) {
                let body =
                    serde_json::json!({"error": "too_many_requests", "error_description": text});
                let mut r = (StatusCode::TOO_MANY_REQUESTS, body.to_string()).into_response();
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                r
            } else {
                (StatusCode::TOO_MANY_REQUESTS, format!("{text}\n")).into_response()
            };
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
            resp.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            resp
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_gets_its_burst_then_waits() {
        let l = RateLimits::default();
        let t = Instant::now();
        let a: IpAddr = "192.0.2.1".parse().expect("ip");
        let b: IpAddr = "192.0.2.2".parse().expect("ip");
        for _ in 0..20 {
            assert!(l.take(Endpoint::Register, Some(a), t).is_ok());
        }
        let wait = l.take(Endpoint::Register, Some(a), t).expect_err("over");
        assert_eq!(wait.as_secs(), 10);
        // Other addresses and other endpoints have their own budgets.
        assert!(l.take(Endpoint::Register, Some(b), t).is_ok());
        assert!(l.take(Endpoint::Token, Some(a), t).is_ok());
        // Refilled with time.
        assert!(
            l.take(Endpoint::Register, Some(a), t + Duration::from_secs(10))
                .is_ok()
        );
    }

    #[test]
    fn ipv6_addresses_count_per_64() {
        let l = RateLimits::default();
        let t = Instant::now();
        for i in 0..20u16 {
            let a = IpAddr::V6(std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 2, i, i, i, i));
            assert!(l.take(Endpoint::Register, Some(a), t).is_ok());
        }
        let other_host = IpAddr::V6(std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 9, 9, 9, 9));
        assert!(l.take(Endpoint::Register, Some(other_host), t).is_err());
        let other_net = IpAddr::V6(std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 3, 0, 0, 0, 1));
        assert!(l.take(Endpoint::Register, Some(other_net), t).is_ok());
        assert_eq!(
            client_key(Some("::ffff:198.51.100.7".parse().expect("ip"))),
            "198.51.100.7"
        );
    }

    #[test]
    fn tracked_addresses_stay_bounded() {
        let l = RateLimits::default();
        let t = Instant::now();
        for i in 0..(MAX_TRACKED as u32 + 100) {
            let _ = l.take(Endpoint::Token, Some(IpAddr::V4(i.into())), t);
        }
        assert!(l.buckets.lock().expect("lock").map.len() <= MAX_TRACKED + 4);
    }
}
