//! Hand-signed tokens (keys made here) against a JWKS served on 127.0.0.1:0: the edge cases a
//! real authorization server does not produce on demand.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use super::*;

const ISS: &str = "https://issuer.example";
const AUD: &str = "http://127.0.0.1:9/mcp";

struct Key {
    kid: String,
    enc: EncodingKey,
    jwk: Value,
}

fn key(kid: &str) -> Key {
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
    let point = pair.public_key().as_ref(); // 0x04 || x || y
    Key {
        kid: kid.into(),
        enc: EncodingKey::from_ec_der(pkcs8.as_ref()),
        jwk: json!({"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
            "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])}),
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn claims() -> Value {
    json!({"iss": ISS, "aud": AUD, "sub": "alice", "exp": now() + 300, "iat": now(),
        "scope": "pets:read"})
}

fn sign(k: &Key, claims: &Value) -> String {
    let mut h = Header::new(Algorithm::ES256);
    h.kid = Some(k.kid.clone());
    jsonwebtoken::encode(&h, claims, &k.enc).unwrap()
}

/// A JWKS endpoint whose key list the test changes, counting its fetches.
struct Jwks {
    url: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
}

async fn jwks(keys: Vec<Value>) -> Jwks {
    let keys = Arc::new(Mutex::new(keys));
    let fetches = Arc::new(AtomicUsize::new(0));
    let (k, f) = (Arc::clone(&keys), Arc::clone(&fetches));
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            f.fetch_add(1, Ordering::SeqCst);
            let body = json!({"keys": *k.lock().unwrap()}).to_string();
            async move { body }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Jwks {
        url: format!("http://{addr}/jwks"),
        keys,
        fetches,
    }
}

fn server(jwks_url: &str) -> ResourceServer {
    ResourceServer::new(OAuthOptions {
        issuer: ISS.into(),
        audience: AUD.into(),
        jwks_url: Some(jwks_url.into()),
        hide_unauthorized_tools: false,
        scopes_supported: vec![],
    })
}

#[tokio::test]
async fn a_valid_token_gives_its_subject_and_scopes() {
    let k = key("k1");
    let j = jwks(vec![k.jwk.clone()]).await;
    let rs = server(&j.url);
    let c = rs.validate(&sign(&k, &claims())).await.unwrap();
    assert_eq!(c.subject.as_deref(), Some("alice"));
    assert_eq!(c.scopes, vec!["pets:read".to_string()]);
    // `scp` as a list (Azure, Okta) counts too.
    let mut cl = claims();
    cl["scp"] = json!(["pets:write"]);
    let c = rs.validate(&sign(&k, &cl)).await.unwrap();
    assert_eq!(c.scopes, vec!["pets:read".to_string(), "pets:write".into()]);
    // The keys were fetched once for both.
    assert_eq!(j.fetches.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn expiry_not_before_issuer_and_audience_are_checked() {
    let k = key("k1");
    let j = jwks(vec![k.jwk.clone()]).await;
    let rs = server(&j.url);
    let with = |f: &dyn Fn(&mut Value)| {
        let mut c = claims();
        f(&mut c);
        sign(&k, &c)
    };
    let cases: Vec<(String, TokenError)> = vec![
        (
            with(&|c| c["exp"] = json!(now() - 120)),
            TokenError::Expired,
        ),
        (
            with(&|c| c["nbf"] = json!(now() + 120)),
            TokenError::NotYetValid,
        ),
        (
            with(&|c| c["iss"] = json!("https://other.example")),
            TokenError::Issuer,
        ),
        (
            with(&|c| c["aud"] = json!("http://127.0.0.1:9/other")),
            TokenError::Audience,
        ),
        (
            with(&|c| {
                c.as_object_mut().unwrap().remove("aud");
            }),
            TokenError::MissingClaim,
        ),
        (
            with(&|c| {
                c.as_object_mut().unwrap().remove("exp");
            }),
            TokenError::MissingClaim,
        ),
    ];
    for (token, want) in cases {
        assert_eq!(rs.validate(&token).await.unwrap_err(), want);
    }
    // Within the clock skew: expired 10 s ago, valid from 10 s on, still accepted.
    let t = with(&|c| c["exp"] = json!(now() - 10));
    assert!(rs.validate(&t).await.is_ok());
    let t = with(&|c| c["nbf"] = json!(now() + 10));
    assert!(rs.validate(&t).await.is_ok());
    // An audience list holding this server is fine.
    let t = with(&|c| c["aud"] = json!(["https://api.example", AUD]));
    assert!(rs.validate(&t).await.is_ok());
}

#[tokio::test]
async fn an_unknown_kid_fetches_the_keys_again_at_a_bounded_rate() {
    let k1 = key("k1");
    let j = jwks(vec![k1.jwk.clone()]).await;
    let rs = server(&j.url);
    rs.validate(&sign(&k1, &claims())).await.unwrap();
    assert_eq!(j.fetches.load(Ordering::SeqCst), 1);
    // The issuer rotates: k2 is published; a token signed with it makes the server fetch again
    // (the last fetch is older than REFETCH_MIN: pretend so).
    let k2 = key("k2");
    j.keys.lock().unwrap().push(k2.jwk.clone());
    rs.cache.lock().await.fetched = Some(Instant::now() - REFETCH_MIN);
    rs.validate(&sign(&k2, &claims())).await.unwrap();
    assert_eq!(j.fetches.load(Ordering::SeqCst), 2);
    // A kid nobody publishes: refused, and a flood of them fetches nothing more.
    let k3 = key("k3");
    for _ in 0..20 {
        assert_eq!(
            rs.validate(&sign(&k3, &claims())).await.unwrap_err(),
            TokenError::UnknownKey
        );
    }
    assert_eq!(j.fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_forged_signature_none_and_hmac_are_refused() {
    let k = key("k1");
    let j = jwks(vec![k.jwk.clone()]).await;
    let rs = server(&j.url);
    // Another key under the published kid.
    let forger = key("k1");
    assert_eq!(
        rs.validate(&sign(&forger, &claims())).await.unwrap_err(),
        TokenError::Signature
    );
    // alg none.
    let head = B64.encode(json!({"alg": "none", "kid": "k1"}).to_string());
    let body = B64.encode(claims().to_string());
    let none = format!("{head}.{body}.");
    assert!(rs.validate(&none).await.is_err());
    // HS256 keyed with the public key's JSON (the classic confusion): refused by algorithm.
    let mut h = Header::new(Algorithm::HS256);
    h.kid = Some("k1".into());
    let secret = k.jwk.to_string();
    let hs =
        jsonwebtoken::encode(&h, &claims(), &EncodingKey::from_secret(secret.as_bytes())).unwrap();
    assert_eq!(rs.validate(&hs).await.unwrap_err(), TokenError::Algorithm);
    // Not a JWT at all; the error names no part of it.
    let e = rs.validate("not-a-jwt-secret-value").await.unwrap_err();
    assert_eq!(e, TokenError::Malformed);
    assert!(!e.to_string().contains("secret-value"));
}

#[tokio::test]
async fn the_jwks_url_comes_from_the_issuer_metadata() {
    let k = key("k1");
    let j = jwks(vec![k.jwk.clone()]).await;
    // An issuer serving only OpenID discovery (RFC 8414's path answers 404).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let doc = json!({"issuer": issuer, "jwks_uri": j.url}).to_string();
    let app = axum::Router::new().route(
        "/.well-known/openid-configuration",
        axum::routing::get(move || {
            let d = doc.clone();
            async move { d }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let rs = ResourceServer::new(OAuthOptions {
        issuer: issuer.clone(),
        audience: AUD.into(),
        jwks_url: None,
        hide_unauthorized_tools: false,
        scopes_supported: vec![],
    });
    let mut c = claims();
    c["iss"] = json!(issuer);
    assert!(rs.validate(&sign(&k, &c)).await.is_ok());
}

#[test]
fn scope_rules_and_challenges() {
    let c = Claims {
        scopes: vec!["read".into()],
        ..Claims::default()
    };
    assert!(c.allows(&[]));
    assert!(c.allows(&[vec![]]));
    assert!(c.allows(&[vec!["read".into()]]));
    assert!(!c.allows(&[vec!["read".into(), "write".into()]]));
    // Any one alternative suffices.
    let alts = vec![vec!["admin".into()], vec!["read".into()]];
    assert!(c.allows(&alts));
    // The challenge names the alternative with the fewest missing scopes, and only its scopes.
    let alts = vec![
        vec!["admin".to_string(), "audit".into()],
        vec!["read".to_string(), "write".into()],
    ];
    assert_eq!(challenge_scopes(&c, &alts), ["read", "write"]);
    assert_eq!(
        metadata_url("https://mcp.example.com/mcp"),
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    );
    assert_eq!(
        issuer_metadata_urls("https://as.example/tenant")[0],
        "https://as.example/.well-known/oauth-authorization-server/tenant"
    );
    assert_eq!(
        challenge(&[("error", "insufficient_scope"), ("scope", "a b")]),
        r#"Bearer error="insufficient_scope", scope="a b""#
    );
}

#[test]
fn conflicting_or_malformed_oauth_options_are_refused_at_start() {
    use crate::serve::ServeArgs;
    let base = || ServeArgs {
        oauth_issuer: Some(ISS.into()),
        ..ServeArgs::default()
    };
    assert!(base().check_gate().is_ok());
    let refused = |a: ServeArgs, words: &str| {
        let e = a.check_gate().unwrap_err().to_string();
        assert!(e.contains(words), "{e}");
    };
    refused(
        ServeArgs {
            auth_token: Some("t".into()),
            ..base()
        },
        "choose one",
    );
    refused(
        ServeArgs {
            forward_header: vec!["authorization".into()],
            ..base()
        },
        "must never reach the API",
    );
    refused(
        ServeArgs {
            oauth_issuer: Some("issuer.example".into()),
            ..base()
        },
        "not an http(s) URL",
    );
    refused(
        ServeArgs {
            oauth_issuer: None,
            hide_unauthorized_tools: true,
            ..base()
        },
        "need --oauth-issuer",
    );
}
