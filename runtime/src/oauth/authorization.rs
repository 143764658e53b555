//! The seam where an authorization server plugs into serving (`--oauth-proxy`, #21, #37).
//!
//! The runtime is the OAuth *resource server* (it checks the tokens MCP clients send); the
//! authorization server that issues those tokens and holds each user's API tokens lives in its
//! own crate (`openapi-mcp-oauth-proxy`), above the runtime. Serving names it only through
//! [`AuthorizationServer`] and builds it with the [`OAuthProxyFactory`] the program hands in
//! ([`crate::serve::Serving::oauth_proxy`]): the `openapi-mcp` binary passes the proxy crate's
//! factory; a server built without it keeps the `--oauth-proxy*` options and refuses them with
//! [`NO_OAUTH_PROXY`].

use std::sync::Arc;

use jsonwebtoken::jwk::JwkSet;
use openapi_mcp_toolset::model::SecurityScheme;
use url::Url;

use super::caller::CallerCredentials;

/// An authorization server served beside `/mcp`, and the source of each caller's API
/// credential for its scheme (through [`CallerCredentials`], consulted by the forwarder).
pub trait AuthorizationServer: CallerCredentials + std::fmt::Debug {
    /// The issuer of its tokens (an origin): what the resource server expects in `iss`.
    fn issuer(&self) -> &str;
    /// The audience of its tokens (this server's MCP endpoint).
    fn resource(&self) -> &str;
    /// The spec's security scheme whose per-caller credentials it gives.
    fn scheme(&self) -> &str;
    /// The public keys of its tokens (the resource server checks them with these, unfetched).
    fn jwks(&self) -> &JwkSet;
    /// Its routes (unauthenticated), merged beside `/mcp`.
    fn router(self: Arc<Self>) -> axum::Router;
    /// What the start-up line says of it (no secret in it); `api`: the API whose users sign in
    /// through it, when the server serves several.
    fn describe(&self, api: Option<&str>) -> String;
}

/// The `--oauth-proxy` options as given.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProxyArgs<'a> {
    /// `--oauth-proxy URL`: the public base URL (an origin).
    pub url: &'a str,
    /// `--oauth-proxy-scheme`.
    pub scheme: Option<&'a str>,
    /// `--upstream-client-id`.
    pub client_id: Option<&'a str>,
    /// `--oauth-store`.
    pub store: Option<&'a str>,
    /// `--oauth-audience` (default: the base URL + `/mcp`).
    pub audience: Option<&'a str>,
    /// `--oauth-proxy-redirect-hosts`.
    pub redirect_hosts: &'a [String],
}

/// What the served API gives the authorization server: its security schemes, its base URL
/// (relative flow URLs are resolved against it) and the environment (the store key, the
/// upstream client's secret; per API when a server serves several).
#[derive(Clone, Copy)]
pub struct ProxyContext<'a> {
    pub schemes: &'a [(String, SecurityScheme)],
    pub base_url: &'a Url,
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
}

/// Why an authorization server cannot start (said to the operator).
pub type SetupFailure = Box<dyn std::error::Error + Send + Sync>;

/// Builds the authorization server from the `--oauth-proxy*` options (the proxy crate's
/// `factory`).
pub type OAuthProxyFactory =
    fn(ProxyArgs<'_>, ProxyContext<'_>) -> Result<Arc<dyn AuthorizationServer>, SetupFailure>;

/// What a server built without the OAuth proxy says of `--oauth-proxy`.
pub const NO_OAUTH_PROXY: &str = "--oauth-proxy: this server was built without the OAuth proxy; build with feature `oauth-proxy` (a generated server: `openapi-mcp generate --features oauth-proxy`)";
