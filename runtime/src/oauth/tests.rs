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
        introspection: None,
        jwks: None,
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
        introspection: None,
        jwks: None,
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

/// An RFC 7662 introspection endpoint: answers per token (the test changes them), for the
/// client `rs` with secret `rs-secret-value` only, counting the questions.
struct Introspect {
    url: String,
    answers: Arc<Mutex<std::collections::HashMap<String, Value>>>,
    asked: Arc<AtomicUsize>,
}

async fn introspection_endpoint() -> Introspect {
    use axum::http::{HeaderMap, StatusCode};
    let answers: Arc<Mutex<std::collections::HashMap<String, Value>>> = Arc::default();
    let asked = Arc::new(AtomicUsize::new(0));
    let (a, n) = (Arc::clone(&answers), Arc::clone(&asked));
    let app = axum::Router::new().route(
        "/introspect",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            n.fetch_add(1, Ordering::SeqCst);
            let want = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode("rs:rs-secret-value")
            );
            let authed =
                headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(want.as_str());
            let form: std::collections::HashMap<String, String> =
                url::form_urlencoded::parse(body.as_bytes())
                    .into_owned()
                    .collect();
            let answer = a
                .lock()
                .unwrap()
                .get(form.get("token").map(String::as_str).unwrap_or(""))
                .cloned()
                .unwrap_or(json!({"active": false}));
            async move {
                if !authed {
                    return (
                        StatusCode::UNAUTHORIZED,
                        json!({"error": "invalid_client"}).to_string(),
                    );
                }
                (StatusCode::OK, answer.to_string())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Introspect {
        url: format!("http://{addr}/introspect"),
        answers,
        asked,
    }
}

fn introspecting(url: &str, secret: &str, ttl: Duration) -> ResourceServer {
    ResourceServer::new(OAuthOptions {
        issuer: ISS.into(),
        audience: AUD.into(),
        introspection: Some(introspect::Introspection {
            url: url.into(),
            client: ClientAuth::new("rs".into(), secret.into()),
            ttl,
        }),
        ..OAuthOptions::default()
    })
}

fn active() -> Value {
    json!({"active": true, "iss": ISS, "aud": AUD, "sub": "alice", "scope": "pets:read pets:write",
        "exp": now() + 300, "client_id": "app", "token_type": "Bearer"})
}

#[tokio::test]
async fn an_opaque_token_is_introspected_once_per_ttl_and_revocation_takes_effect() {
    let ep = introspection_endpoint().await;
    ep.answers
        .lock()
        .unwrap()
        .insert("opaque-token-1".into(), active());
    let rs = introspecting(&ep.url, "rs-secret-value", Duration::from_millis(400));
    let c = rs.validate("opaque-token-1").await.unwrap();
    assert_eq!(c.subject.as_deref(), Some("alice"));
    assert_eq!(c.scopes, ["pets:read", "pets:write"]);
    assert!(c.expires_at.is_some_and(|e| e > now()));
    // Cached: asked once for many uses.
    for _ in 0..5 {
        assert!(rs.validate("opaque-token-1").await.is_ok());
    }
    assert_eq!(ep.asked.load(Ordering::SeqCst), 1);
    // Revoked at the authorization server: still accepted until the answer's TTL is over, then
    // refused.
    ep.answers
        .lock()
        .unwrap()
        .insert("opaque-token-1".into(), json!({"active": false}));
    assert!(rs.validate("opaque-token-1").await.is_ok());
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(
        rs.validate("opaque-token-1").await.unwrap_err(),
        TokenError::Inactive
    );
    assert_eq!(ep.asked.load(Ordering::SeqCst), 2);
    // The refusal is cached too.
    assert_eq!(
        rs.validate("opaque-token-1").await.unwrap_err(),
        TokenError::Inactive
    );
    assert_eq!(ep.asked.load(Ordering::SeqCst), 2);
    // The cache never holds the token itself.
    let held = rs.introspector.as_ref().unwrap().held_keys();
    assert!(
        held.iter()
            .all(|k| !k.windows(14).any(|w| w == b"opaque-token-1"))
    );
    assert!(held.contains(&token_digest("opaque-token-1")));
}

#[tokio::test]
async fn introspection_answers_are_checked_like_jwt_claims() {
    let ep = introspection_endpoint().await;
    let rs = introspecting(&ep.url, "rs-secret-value", Duration::from_secs(30));
    let with = |f: &dyn Fn(&mut Value)| {
        let mut a = active();
        f(&mut a);
        a
    };
    let cases: Vec<(Value, Result<(), TokenError>)> = vec![
        (json!({"active": false}), Err(TokenError::Inactive)),
        (
            with(&|a| a["exp"] = json!(now() - 120)),
            Err(TokenError::Expired),
        ),
        (
            with(&|a| a["nbf"] = json!(now() + 120)),
            Err(TokenError::NotYetValid),
        ),
        (
            with(&|a| a["iss"] = json!("https://other.example")),
            Err(TokenError::Issuer),
        ),
        (
            with(&|a| a["aud"] = json!("http://127.0.0.1:9/other")),
            Err(TokenError::Audience),
        ),
        (
            with(&|a| {
                a.as_object_mut().unwrap().remove("aud");
            }),
            Err(TokenError::MissingClaim),
        ),
        // Within the clock skew, an audience list holding this server, no `iss` (the endpoint
        // is the issuer's own) and no `exp`: accepted.
        (with(&|a| a["exp"] = json!(now() - 10)), Ok(())),
        (
            with(&|a| a["aud"] = json!(["https://api.example", AUD])),
            Ok(()),
        ),
        (
            with(&|a| {
                a.as_object_mut().unwrap().remove("iss");
                a.as_object_mut().unwrap().remove("exp");
            }),
            Ok(()),
        ),
    ];
    for (i, (answer, want)) in cases.into_iter().enumerate() {
        let token = format!("opaque-case-{i}");
        ep.answers
            .lock()
            .unwrap()
            .insert(token.clone(), answer.clone());
        let got = rs.validate(&token).await.map(|_| ());
        assert_eq!(got, want, "{answer}");
    }
    // "Not valid yet" is not cached: it will be.
    let asked = ep.asked.load(Ordering::SeqCst);
    assert!(rs.validate("opaque-case-2").await.is_err());
    assert_eq!(ep.asked.load(Ordering::SeqCst), asked + 1);
}

#[tokio::test]
async fn a_short_lived_token_is_not_cached_past_its_expiry() {
    let ep = introspection_endpoint().await;
    let rs = introspecting(&ep.url, "rs-secret-value", Duration::from_secs(30));
    let mut a = active();
    a["exp"] = json!(now() + 1);
    ep.answers.lock().unwrap().insert("short-lived".into(), a);
    assert!(rs.validate("short-lived").await.is_ok());
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // Past its exp the answer is not reused (the server is asked again; within the clock skew
    // it still says active).
    assert!(rs.validate("short-lived").await.is_ok());
    assert_eq!(ep.asked.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_introspection_failure_refuses_without_caching_or_telling_secrets() {
    let ep = introspection_endpoint().await;
    ep.answers
        .lock()
        .unwrap()
        .insert("opaque-token-2".into(), active());
    // Wrong client secret: the endpoint answers 401; the token cannot be checked.
    let rs = introspecting(&ep.url, "wrong-secret-value", Duration::from_secs(30));
    for _ in 0..2 {
        let e = rs.validate("opaque-token-2").await.unwrap_err();
        assert_eq!(e, TokenError::IntrospectionUnavailable);
        assert!(e.is_unavailable());
        let text = e.to_string();
        assert!(
            !text.contains("opaque-token-2") && !text.contains("secret-value"),
            "{text}"
        );
    }
    assert_eq!(
        ep.asked.load(Ordering::SeqCst),
        2,
        "failures are not cached"
    );
    // Nobody listening.
    let rs = introspecting(
        "http://127.0.0.1:9/introspect",
        "rs-secret-value",
        Duration::from_secs(30),
    );
    assert_eq!(
        rs.validate("opaque-token-2").await.unwrap_err(),
        TokenError::IntrospectionUnavailable
    );
    // The client secret never shows in Debug.
    let dbg = format!("{:?}", rs.opts);
    assert!(
        !dbg.contains("rs-secret-value") && dbg.contains("<redacted>"),
        "{dbg}"
    );
}

#[test]
fn upstream_auth_options_are_checked_at_start() {
    use crate::serve::{ServeArgs, Transport, UpstreamAuth};
    let base = || ServeArgs {
        transport: Transport::Http,
        oauth_issuer: Some(ISS.into()),
        oauth_client_id: Some("rs".into()),
        upstream_auth: UpstreamAuth::TokenExchange,
        ..ServeArgs::default()
    };
    assert!(base().check_gate().is_ok());
    let refused = |a: ServeArgs, words: &str| {
        let e = a.check_gate().unwrap_err().to_string();
        assert!(e.contains(words), "{e}");
    };
    refused(
        ServeArgs {
            oauth_client_id: None,
            ..base()
        },
        "needs --oauth-client-id",
    );
    refused(
        ServeArgs {
            oauth_issuer: None,
            ..base()
        },
        "needs --transport http and --oauth-issuer",
    );
    refused(
        ServeArgs {
            transport: Transport::Stdio,
            ..base()
        },
        "needs --transport http and --oauth-issuer",
    );
    refused(
        ServeArgs {
            upstream_auth: UpstreamAuth::Static,
            token_exchange_audience: Some("https://api.example".into()),
            ..base()
        },
        "is for --upstream-auth token-exchange",
    );
    refused(
        ServeArgs {
            upstream_auth: UpstreamAuth::OAuthProxy,
            oauth_issuer: None,
            oauth_client_id: None,
            ..base()
        },
        "--upstream-auth oauth-proxy needs --oauth-proxy URL",
    );
}

#[test]
fn introspection_options_are_checked_at_start() {
    use crate::serve::ServeArgs;
    let base = || ServeArgs {
        oauth_issuer: Some(ISS.into()),
        oauth_introspection_url: Some("https://issuer.example/introspect".into()),
        oauth_client_id: Some("rs".into()),
        ..ServeArgs::default()
    };
    assert!(base().check_gate().is_ok());
    let refused = |a: ServeArgs, words: &str| {
        let e = a.check_gate().unwrap_err().to_string();
        assert!(e.contains(words), "{e}");
    };
    refused(
        ServeArgs {
            oauth_client_id: None,
            ..base()
        },
        "needs --oauth-client-id",
    );
    refused(
        ServeArgs {
            oauth_jwks_url: Some("https://issuer.example/jwks".into()),
            ..base()
        },
        "choose one",
    );
    refused(
        ServeArgs {
            oauth_introspection_url: Some("introspect".into()),
            ..base()
        },
        "not an http(s) URL",
    );
    refused(
        ServeArgs {
            oauth_issuer: None,
            ..base()
        },
        "need --oauth-issuer",
    );
}

#[tokio::test]
async fn a_validated_jwt_is_reused_until_its_expiry_only() {
    let k = key("k1");
    let j = jwks(vec![k.jwk.clone()]).await;
    let rs = server(&j.url);
    let token = sign(&k, &claims());
    let mut short = claims();
    short["exp"] = json!(now() + 1);
    let short = sign(&k, &short);
    assert!(rs.validate(&token).await.is_ok());
    assert!(rs.validate(&short).await.is_ok());
    // The keys are gone (and not fetched again): the tokens checked lately are still known...
    *rs.decoding.write().unwrap() = Arc::default();
    rs.cache.lock().await.fetched = Some(Instant::now());
    let c = rs.validate(&token).await.unwrap();
    assert_eq!(c.subject.as_deref(), Some("alice"));
    assert!(rs.validate(&short).await.is_ok());
    // ...but never past a token's own expiry: then its signature is checked again.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        rs.validate(&short).await.unwrap_err(),
        TokenError::UnknownKey
    );
    assert!(rs.validate(&token).await.is_ok());
    // Held by digest, not by token.
    assert!(rs.validated.keys().contains(&token_digest(&token)));
    // Refusals are not held: a forged token is checked each time.
    let forger = key("k1");
    *rs.decoding.write().unwrap() = Arc::default();
    assert!(rs.validate(&sign(&forger, &claims())).await.is_err());
}

/// An RFC 8693 token endpoint (and the RFC 8414 metadata naming it) for the client `rs`:
/// `exchanged-<n>-for-<subject token>`, an hour; `invalid_grant` (echoing the subject token, as
/// careless servers do) for subject tokens starting `revoked`. The forms it got are kept.
struct Exchanger {
    issuer: String,
    forms: Arc<Mutex<Vec<std::collections::HashMap<String, String>>>>,
}

async fn exchanger() -> Exchanger {
    use axum::http::{HeaderMap, StatusCode};
    let forms: Arc<Mutex<Vec<std::collections::HashMap<String, String>>>> = Arc::default();
    let f = Arc::clone(&forms);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let meta = json!({"issuer": issuer, "token_endpoint": format!("{issuer}/token")}).to_string();
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || std::future::ready(meta.clone())),
        )
        .route(
            "/token",
            axum::routing::post(move |headers: HeaderMap, body: String| {
                let want = format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode("rs:rs-secret-value")
                );
                let authed = headers.get("authorization").and_then(|v| v.to_str().ok())
                    == Some(want.as_str());
                let form: std::collections::HashMap<String, String> =
                    url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
                let mut all = f.lock().unwrap();
                all.push(form.clone());
                let n = all.len();
                let subject = form.get("subject_token").cloned().unwrap_or_default();
                async move {
                    if !authed {
                        return (StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}).to_string());
                    }
                    if subject.starts_with("revoked") {
                        let e = json!({"error": "invalid_grant", "error_description": format!("subject token {subject} is revoked")});
                        return (StatusCode::BAD_REQUEST, e.to_string());
                    }
                    let t = json!({"access_token": format!("exchanged-{n}-for-{subject}"), "token_type": "Bearer",
                        "expires_in": 3600, "issued_token_type": exchange::ACCESS_TOKEN_TYPE});
                    (StatusCode::OK, t.to_string())
                }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Exchanger { issuer, forms }
}

fn exchange_provider(issuer: &str, secret: &str, audience: &str) -> exchange::TokenExchange {
    use openapi_mcp_toolset::model::{ApiKeyLocation, SecurityScheme};
    exchange::TokenExchange::new(
        exchange::ExchangeOptions {
            issuer: issuer.into(),
            client: ClientAuth::new("rs".into(), secret.into()),
            audience: audience.into(),
            token_endpoint: None,
        },
        &[
            ("oauth".into(), SecurityScheme::OAuth2Token),
            ("bearer".into(), SecurityScheme::Bearer),
            (
                "key".into(),
                SecurityScheme::ApiKey {
                    name: "X-Key".into(),
                    location: ApiKeyLocation::Header,
                },
            ),
        ],
    )
}

#[tokio::test]
async fn token_exchange_gives_each_caller_its_own_cached_token() {
    use crate::forward::{Caller, CallerCredentials};
    let ex = exchanger().await;
    let p = exchange_provider(&ex.issuer, "rs-secret-value", "https://api.example");
    let alice = Caller::new("alice".into(), "mcp-token-alice", None);
    let bob = Caller::new("bob".into(), "mcp-token-bob", None);
    // Concurrent first calls of one caller: one exchange.
    let got = futures::future::join_all((0..8).map(|_| p.credential(&alice, "oauth"))).await;
    let a = got[0].clone().unwrap().unwrap();
    assert!(
        got.iter()
            .all(|g| g.as_ref().unwrap().as_deref() == Some(a.as_str()))
    );
    assert!(a.ends_with("-for-mcp-token-alice"), "{a}");
    // The bearer scheme gets the same token; the API key none (static credentials apply).
    assert_eq!(
        p.credential(&alice, "bearer").await.unwrap().as_deref(),
        Some(a.as_str())
    );
    assert_eq!(p.credential(&alice, "key").await.unwrap(), None);
    let b = p.credential(&bob, "oauth").await.unwrap().unwrap();
    assert!(b.ends_with("-for-mcp-token-bob") && b != a, "{b}");
    {
        let forms = ex.forms.lock().unwrap();
        assert_eq!(forms.len(), 2, "one exchange per caller");
        let f = &forms[0];
        assert_eq!(f["grant_type"], exchange::GRANT_TYPE);
        assert_eq!(f["subject_token"], "mcp-token-alice");
        assert_eq!(f["subject_token_type"], exchange::ACCESS_TOKEN_TYPE);
        assert_eq!(f["resource"], "https://api.example");
        assert!(!f.contains_key("audience"));
    }
    // The API refused alice's token: dropped, exchanged again next time.
    p.rejected(&alice, "oauth");
    let a2 = p.credential(&alice, "oauth").await.unwrap().unwrap();
    assert_ne!(a2, a);
    assert_eq!(ex.forms.lock().unwrap().len(), 3);
    assert_eq!(p.held(), 2);
    // Never past the caller's own token's expiry.
    let carol = Caller::new("carol".into(), "mcp-token-carol", Some(now() + 1));
    p.credential(&carol, "oauth").await.unwrap();
    p.credential(&carol, "oauth").await.unwrap();
    assert_eq!(ex.forms.lock().unwrap().len(), 4);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    p.credential(&carol, "oauth").await.unwrap();
    assert_eq!(ex.forms.lock().unwrap().len(), 5);
    // Debug shows no token.
    let dbg = format!("{alice:?} {p:?}");
    assert!(
        !dbg.contains("mcp-token") && !dbg.contains("rs-secret-value"),
        "{dbg}"
    );
}

#[tokio::test]
async fn token_exchange_refusals_say_what_to_do_and_show_no_token() {
    use crate::forward::{Caller, CallerCredentials};
    let ex = exchanger().await;
    // A logical audience goes as `audience`.
    let p = exchange_provider(&ex.issuer, "rs-secret-value", "orders-api");
    let dave = Caller::new("dave".into(), "revoked-mcp-token-dave", None);
    let e = p.credential(&dave, "oauth").await.unwrap_err();
    assert!(e.message.contains("authorize again"), "{e}");
    assert!(
        !e.message.contains("revoked-mcp-token-dave") && e.message.contains("[redacted]"),
        "{e}"
    );
    assert_eq!(ex.forms.lock().unwrap()[0]["audience"], "orders-api");
    // Refusals are not cached: asked again.
    assert!(p.credential(&dave, "oauth").await.is_err());
    assert_eq!(ex.forms.lock().unwrap().len(), 2);
    // This server's own client refused: the operator's problem, said so.
    let p = exchange_provider(&ex.issuer, "wrong-secret-value", "orders-api");
    let erin = Caller::new("erin".into(), "mcp-token-erin", None);
    let e = p.credential(&erin, "oauth").await.unwrap_err();
    assert!(e.message.contains("--oauth-client-id"), "{e}");
    assert!(!e.message.contains("wrong-secret-value") && !e.message.contains("mcp-token-erin"));
    // No authorization server at all.
    let p = exchange_provider("http://127.0.0.1:9", "rs-secret-value", "orders-api");
    let e = p.credential(&erin, "oauth").await.unwrap_err();
    assert!(e.message.contains("try again later"), "{e}");
}
