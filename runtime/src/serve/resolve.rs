//! From options to parts: [`ServeArgs`]' checks and builders (credentials, the forwarder,
//! the HTTP, OAuth, observability and session options), and [`StartError`].

use super::*;
/// Why serving could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The options or the tool set do not allow serving (exit code 1).
    #[error(transparent)]
    Input(#[from] UserError),
    #[error("setting up the HTTP client")]
    Client(#[source] ForwardError),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error("HTTP server task")]
    Task(#[source] tokio::task::JoinError),
}

impl StartError {
    /// The error to report: a user error unwrapped (so [`crate::serve::exit::ExitStatus::of`] sees it),
    /// anything else as it is.
    pub fn into_error(self) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        match self {
            StartError::Input(e) => Box::new(e),
            other => Box::new(other),
        }
    }
}

impl ServeArgs {
    /// The origins besides the base URL's that receive credentials: `--credential-origin`, and,
    /// when the base URL is the spec's own (no `--base-url`), the spec's operation-level servers
    /// (the spec names them as the API's hosts). With `--base-url` (a mock, staging), operation
    /// servers elsewhere get requests without credentials, and start-up says so.
    ///
    /// In a server of several APIs (`api` is the entry's name) a credential goes only to its own
    /// API's origin: the base URL and the entry's `credential-origin` list. An operation-level
    /// server on any other host (another API's base URL or not) gets requests without this API's
    /// credentials, and start-up says which origin to add. `others` are the other APIs' base URL
    /// origins, named as such in that warning.
    pub(super) fn credential_origins(
        &self,
        set: &ToolSet,
        base: &url::Url,
        others: &[String],
        api: Option<&str>,
    ) -> Result<Vec<String>, UserError> {
        let mut origins = Vec::new();
        for o in &self.credential_origin {
            let u = url::Url::parse(o)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
                .ok_or_else(|| {
                    UserError::msg(format!(
                        "--credential-origin {o:?} is not an origin like https://api.example.com"
                    ))
                })?;
            origins.push(u.origin().ascii_serialization());
        }
        let base_origin = base.origin().ascii_serialization();
        let mut elsewhere: Vec<(String, usize)> = Vec::new();
        for t in &set.tools {
            let Some(server) = t.route.server.as_deref() else {
                continue;
            };
            let Ok(u) = base.join(server) else { continue };
            let origin = u.origin().ascii_serialization();
            if origin == base_origin || origins.contains(&origin) {
                continue;
            }
            match elsewhere.iter_mut().find(|(o, _)| *o == origin) {
                Some((_, n)) => *n += 1,
                None => elsewhere.push((origin, 1)),
            }
        }
        let of_api = api.map(|a| format!("API {a}: ")).unwrap_or_default();
        for (origin, n) in elsewhere {
            if others.contains(&origin) {
                tracing::warn!(
                    "{of_api}{n} operation(s) are served from {origin} (their own `servers`), another API's base URL: they are sent without this API's credentials; add its credential-origin {origin} to send them"
                );
            } else if api.is_some() {
                // A server of several APIs: a credential goes to its own API's origin only
                // (the base URL and the entry's credential-origin list), never to another host
                // the spec happens to name.
                tracing::warn!(
                    "{of_api}{n} operation(s) are served from {origin} (their own `servers`), not from this API's base URL: they are sent without its credentials; add its credential-origin {origin} to send them"
                );
            } else if self.base_url.is_none() {
                origins.push(origin);
            } else {
                tracing::warn!(
                    "{of_api}{n} operation(s) are served from {origin} (their own `servers`), not from --base-url: they are sent without credentials; add --credential-origin {origin} to send them"
                );
            }
        }
        Ok(origins)
    }

    /// Refuses options that would leak the HTTP gate's credential: with `--auth-token`, the
    /// client's `Authorization` header *is* the gate token, so `--forward-header Authorization`
    /// would send it to the API (replacing the API's own credential, and echoed back to the model
    /// by any API that reflects headers).
    pub fn check_gate(&self) -> Result<(), UserError> {
        self.check_oauth()?;
        if self.auth_token.is_some()
            && self
                .forward_header
                .iter()
                .any(|h| h.trim().eq_ignore_ascii_case("authorization"))
        {
            return Err(UserError::msg(
                "--forward-header Authorization cannot be combined with --auth-token: the clients' Authorization header carries the --auth-token secret, which would be sent to the API; forward a different header for per-user API credentials (e.g. --forward-header X-Api-Token)",
            ));
        }
        Ok(())
    }

    /// `--oauth-*`: an issuer with an http(s) URL, not with `--auth-token`, never passing the
    /// client's token on to the API (MCP forbids token passthrough).
    pub(super) fn check_oauth(&self) -> Result<(), UserError> {
        self.check_oauth_proxy()?;
        if self.upstream_auth == UpstreamAuth::OAuthProxy && self.oauth_proxy.is_none() {
            return Err(UserError::msg(
                "--upstream-auth oauth-proxy needs --oauth-proxy URL (this server's public URL, where MCP clients authorize)",
            ));
        }
        let exchange = self.upstream_auth == UpstreamAuth::TokenExchange;
        if self.token_exchange_audience.is_some() && !exchange {
            return Err(UserError::msg(
                "--token-exchange-audience is for --upstream-auth token-exchange",
            ));
        }
        if exchange && (self.oauth_issuer.is_none() || self.transport != Transport::Http) {
            return Err(UserError::msg(
                "--upstream-auth token-exchange exchanges each caller's OAuth token: it needs --transport http and --oauth-issuer (and --oauth-client-id)",
            ));
        }
        if exchange && self.oauth_client_id.is_none() {
            return Err(UserError::msg(
                "--upstream-auth token-exchange needs --oauth-client-id (and its secret in OPENAPI_MCP_OAUTH_CLIENT_SECRET): this server authenticates at the issuer's token endpoint to exchange tokens",
            ));
        }
        let Some(issuer) = &self.oauth_issuer else {
            if self.oauth_proxy.is_some() {
                return Ok(());
            }
            if self.oauth_audience.is_some()
                || self.oauth_jwks_url.is_some()
                || self.oauth_introspection_url.is_some()
                || self.hide_unauthorized_tools
            {
                return Err(UserError::msg(
                    "--oauth-audience, --oauth-jwks-url, --oauth-introspection-url and --hide-unauthorized-tools need --oauth-issuer",
                ));
            }
            if self.oauth_client_id.is_some() {
                return Err(UserError::msg(
                    "--oauth-client-id is this server's client at the --oauth-issuer: give --oauth-issuer (with --oauth-introspection-url or --upstream-auth token-exchange)",
                ));
            }
            return Ok(());
        };
        if self.oauth_introspection_url.is_some() && self.oauth_jwks_url.is_some() {
            return Err(UserError::msg(
                "--oauth-jwks-url and --oauth-introspection-url are two ways to check tokens (JWTs against the issuer's keys, or any token at the introspection endpoint): choose one",
            ));
        }
        if self.oauth_introspection_url.is_some() && self.oauth_client_id.is_none() {
            return Err(UserError::msg(
                "--oauth-introspection-url needs --oauth-client-id (and its secret in OPENAPI_MCP_OAUTH_CLIENT_SECRET): the introspection endpoint answers authenticated clients only (RFC 7662)",
            ));
        }
        for (flag, v) in [
            ("--oauth-issuer", Some(issuer)),
            ("--oauth-audience", self.oauth_audience.as_ref()),
            ("--oauth-jwks-url", self.oauth_jwks_url.as_ref()),
            (
                "--oauth-introspection-url",
                self.oauth_introspection_url.as_ref(),
            ),
        ] {
            if let Some(v) = v
                && !url::Url::parse(v).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
            {
                return Err(UserError::msg(format!(
                    "{flag} {v:?} is not an http(s) URL"
                )));
            }
        }
        if self.auth_token.is_some() {
            return Err(UserError::msg(
                "--oauth-issuer and --auth-token are two ways to guard the HTTP transport: choose one",
            ));
        }
        if self
            .forward_header
            .iter()
            .any(|h| h.trim().eq_ignore_ascii_case("authorization"))
        {
            return Err(UserError::msg(
                "--forward-header Authorization cannot be combined with --oauth-issuer: the clients' Authorization header carries their token for this server, which must never reach the API",
            ));
        }
        Ok(())
    }

    /// `--oauth-*` as the HTTP transport takes them (`None`: no OAuth). The client secret comes
    /// from [`crate::oauth::CLIENT_SECRET_ENV`].
    pub fn oauth_options(&self) -> Result<Option<OAuthOptions>, UserError> {
        let Some(issuer) = self.oauth_issuer.clone() else {
            return Ok(None);
        };
        let introspection = match &self.oauth_introspection_url {
            None => None,
            Some(url) => Some(crate::oauth::introspect::Introspection {
                url: url.clone(),
                client: self.oauth_client()?,
                ttl: crate::oauth::introspect::CACHE_TTL,
            }),
        };
        Ok(Some(OAuthOptions {
            issuer,
            audience: self.oauth_audience.clone().unwrap_or_default(),
            jwks_url: self.oauth_jwks_url.clone(),
            hide_unauthorized_tools: self.hide_unauthorized_tools,
            scopes_supported: Vec::new(),
            introspection,
            jwks: None,
        }))
    }

    /// `--upstream-auth token-exchange`: its provider of per-caller credentials for `forwarder`'s
    /// schemes (`None`: static credentials).
    pub(super) fn token_exchange(
        &self,
        forwarder: &Forwarder,
    ) -> Result<Option<crate::oauth::exchange::TokenExchange>, UserError> {
        if self.upstream_auth != UpstreamAuth::TokenExchange {
            return Ok(None);
        }
        let issuer = self
            .oauth_issuer
            .clone()
            .ok_or_else(|| UserError::msg("--upstream-auth token-exchange needs --oauth-issuer"))?;
        let audience = match &self.token_exchange_audience {
            Some(a) if !a.trim().is_empty() => a.trim().to_string(),
            Some(_) => return Err(UserError::msg("--token-exchange-audience is empty")),
            None => forwarder.options().base_url.origin().ascii_serialization(),
        };
        let exchange = crate::oauth::exchange::TokenExchange::new(
            crate::oauth::exchange::ExchangeOptions {
                issuer,
                client: self.oauth_client()?,
                audience,
                token_endpoint: None,
            },
            forwarder.schemes(),
        );
        if exchange.schemes().is_empty() {
            tracing::warn!(
                "--upstream-auth token-exchange: the spec declares no oauth2, openIdConnect or http bearer scheme, so no exchanged token is ever sent"
            );
        }
        Ok(Some(exchange))
    }

    /// `--oauth-client-id` with its secret from the environment.
    pub(super) fn oauth_client(&self) -> Result<crate::oauth::ClientAuth, UserError> {
        use crate::oauth::CLIENT_SECRET_ENV;
        let id = self.oauth_client_id.clone().ok_or_else(|| {
            UserError::msg(
                "--oauth-client-id is needed (this server's client at the --oauth-issuer)",
            )
        })?;
        let secret = std::env::var(CLIENT_SECRET_ENV)
            .ok()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                UserError::msg(format!(
                    "--oauth-client-id {id} needs its secret in {CLIENT_SECRET_ENV}"
                ))
            })?;
        Ok(crate::oauth::ClientAuth::new(id, secret))
    }

    /// `--oauth-proxy` and its options: HTTP only, not with another gate, never passing the
    /// client's token on.
    pub(super) fn check_oauth_proxy(&self) -> Result<(), UserError> {
        if self.oauth_proxy.is_none() {
            if self.oauth_proxy_scheme.is_some()
                || self.upstream_client_id.is_some()
                || self.oauth_store.is_some()
                || !self.oauth_proxy_redirect_hosts.is_empty()
            {
                return Err(UserError::msg(
                    "--oauth-proxy-scheme, --upstream-client-id, --oauth-store and --oauth-proxy-redirect-hosts need --oauth-proxy",
                ));
            }
            return Ok(());
        }
        let clash = if self.oauth_issuer.is_some() {
            Some("--oauth-issuer (this server is the issuer)")
        } else if self.auth_token.is_some() {
            Some("--auth-token")
        } else if self.oauth_jwks_url.is_some() {
            Some("--oauth-jwks-url (the proxy signs its own tokens)")
        } else if self.oauth_introspection_url.is_some() {
            Some("--oauth-introspection-url (the proxy checks its own tokens)")
        } else if self.oauth_client_id.is_some() {
            Some(
                "--oauth-client-id (the client id at the API's authorization server is --upstream-client-id)",
            )
        } else if self.transport != Transport::Http {
            Some("--transport stdio (it is an HTTP server)")
        } else if self
            .forward_header
            .iter()
            .any(|h| h.trim().eq_ignore_ascii_case("authorization"))
        {
            Some("--forward-header Authorization (the client's token must never reach the API)")
        } else {
            None
        };
        match clash {
            Some(c) => Err(UserError::msg(format!(
                "--oauth-proxy cannot be combined with {c}"
            ))),
            None => Ok(()),
        }
    }

    /// The `--oauth-proxy` authorization server for `set`, opened (store, keys) by `factory`,
    /// when asked for; without a factory (a server built without the proxy), an error saying so.
    pub fn oauth_proxy(
        &self,
        set: &ToolSet,
        base_url: &url::Url,
        factory: Option<crate::oauth::authorization::OAuthProxyFactory>,
    ) -> Result<Option<Arc<dyn crate::oauth::authorization::AuthorizationServer>>, UserError> {
        self.oauth_proxy_for(set, base_url, None, factory)
    }

    /// [`ServeArgs::oauth_proxy`] for API `api` of a server of several: the upstream client's
    /// secret is read from its own variable (`OPENAPI_MCP_<API>_UPSTREAM_CLIENT_SECRET`).
    pub(super) fn oauth_proxy_for(
        &self,
        set: &ToolSet,
        base_url: &url::Url,
        api: Option<&str>,
        factory: Option<crate::oauth::authorization::OAuthProxyFactory>,
    ) -> Result<Option<Arc<dyn crate::oauth::authorization::AuthorizationServer>>, UserError> {
        use crate::forward::auth::UPSTREAM_SECRET_ENV;
        use crate::oauth::authorization::{NO_OAUTH_PROXY, ProxyArgs, ProxyContext};
        let Some(url) = &self.oauth_proxy else {
            return Ok(None);
        };
        let factory = factory.ok_or_else(|| UserError::msg(NO_OAUTH_PROXY))?;
        let env = |k: &str| match api {
            Some(a) if k == UPSTREAM_SECRET_ENV => {
                std::env::var(crate::server::multi::env_var(a, k)).ok()
            }
            _ => std::env::var(k).ok(),
        };
        let args = ProxyArgs {
            url,
            scheme: self.oauth_proxy_scheme.as_deref(),
            client_id: self.upstream_client_id.as_deref(),
            store: self.oauth_store.as_deref(),
            audience: self.oauth_audience.as_deref(),
            redirect_hosts: &self.oauth_proxy_redirect_hosts,
        };
        let context = ProxyContext {
            schemes: &set.security_schemes,
            base_url,
            env: &env,
        };
        factory(args, context)
            .map(Some)
            .map_err(|e| UserError::msg(e.to_string()))
    }

    /// The key sealing 2026-era confirmations ([`CONFIRM_KEY_ENV`]), when one is set.
    pub fn confirm_key(&self) -> Result<Option<Arc<[u8]>>, UserError> {
        let Some(key) = std::env::var_os(CONFIRM_KEY_ENV) else {
            return Ok(None);
        };
        let key = key.as_encoded_bytes();
        if key.len() < 32 {
            return Err(UserError::msg(format!(
                "{CONFIRM_KEY_ENV} must be at least 32 bytes (it is {})",
                key.len()
            )));
        }
        Ok(Some(Arc::from(key)))
    }

    /// Metrics (`--metrics-listen`) and the audit log (`--audit-log`), opened; `-` (stdout) is
    /// refused over stdio, where stdout carries the MCP messages.
    pub fn observe(&self) -> Result<Observe, UserError> {
        let metrics = self.metrics_listen.map(|_| Arc::new(Metrics::new()));
        let audit = match self.audit_log.as_deref() {
            None => None,
            Some("") => {
                return Err(UserError::msg(
                    "--audit-log needs a file name, or - for standard output",
                ));
            }
            Some(path) => {
                let target = AuditTarget::parse(path);
                if target == AuditTarget::Stdout && self.transport == Transport::Stdio {
                    return Err(UserError::msg(
                        "--audit-log - writes to standard output, which carries the MCP messages over stdio: give a file (or /dev/stderr)",
                    ));
                }
                let log = AuditLog::open(target, metrics.clone()).map_err(|e| {
                    UserError::msg(format!(
                        "--audit-log {path}: cannot open it for appending ({e})"
                    ))
                })?;
                Some(log)
            }
        };
        Ok(Observe {
            metrics,
            audit,
            traces: crate::observe::otel::enabled(),
        })
    }

    /// The API servers `--ready-check` probes: the base URL and the operation-level servers.
    pub(super) fn upstreams(set: &ToolSet, base: &url::Url) -> Vec<url::Url> {
        let mut out = vec![base.clone()];
        for t in &set.tools {
            if let Some(server) = t.route.server.as_deref()
                && let Ok(u) = base.join(server)
                && !out.contains(&u)
            {
                out.push(u);
            }
        }
        out
    }

    /// `--mode` and `--pin` as the server's [`ToolMode`].
    pub fn tool_mode(&self) -> Result<ToolMode, UserError> {
        if self.mode != Mode::Hybrid && !self.pin.is_empty() {
            return Err(UserError::msg("--pin only applies to --mode hybrid"));
        }
        let mode = ToolMode::from_flags(self.mode, &self.pin).map_err(UserError::new)?;
        Ok(match mode {
            ToolMode::Code(_) => ToolMode::Code(crate::modes::code::CodeLimits {
                timeout: code_timeout_duration(self.code_timeout)?,
                memory: (self.code_memory.clamp(4, 4096) as usize) << 20,
                max_calls: self.code_max_calls.max(1) as usize,
                max_output: self.max_response_bytes,
            }),
            other => other,
        })
    }

    /// The forwarder for `set`: base URL, credentials (environment and `--auth`), static headers,
    /// timeouts and retries. Also returns the schemes that have no credential.
    pub fn forwarder(&self, set: &ToolSet) -> Result<(Forwarder, Vec<String>), StartError> {
        let base = self.base_url(set)?;
        self.forwarder_for(set, base, None, &[])
    }

    /// The base URL for `set`: `--base-url`, else the spec's first server.
    pub(super) fn base_url(&self, set: &ToolSet) -> Result<url::Url, UserError> {
        let base = match self.base_url.clone().or_else(|| set.base_url.clone()) {
            Some(b) => b,
            None => {
                return Err(UserError::msg(
                    "the spec declares no server URL: pass --base-url",
                ));
            }
        };
        url::Url::parse(&base).map_err(|e| {
            // Not parsed: shown without what may hold secrets (user info, the query).
            let safe = shown_url_text(&base);
            UserError::msg(format!(
                "invalid base URL {safe:?} (pass an absolute --base-url): {e}"
            ))
        })
    }

    /// [`ServeArgs::forwarder`] of API `api` of a server of several (credentials from its own
    /// variables, `OPENAPI_MCP_<API>_<SCHEME>`; `others`: the other APIs' base URL origins),
    /// or of the only API (`None`).
    pub(super) fn forwarder_for(
        &self,
        set: &ToolSet,
        base_url: url::Url,
        api: Option<&str>,
        others: &[String],
    ) -> Result<(Forwarder, Vec<String>), StartError> {
        let var = |k: &str| match api {
            Some(a) => crate::server::multi::env_var(a, k),
            None => k.to_string(),
        };
        let of_api = api.map(|a| format!("API {a}: ")).unwrap_or_default();
        for (v, names) in openapi_mcp_toolset::model::ambiguous_env(&set.security_schemes) {
            tracing::warn!(
                "{of_api}security schemes {} all read {}: none of them takes a credential from the environment (one secret would go to each); set each with --auth SCHEME=VALUE",
                names.join(", "),
                var(&v)
            );
        }
        let (mut creds, reserved) =
            Credentials::from_env_as(&set.security_schemes, var, |k| std::env::var(k).ok());
        for r in reserved {
            tracing::warn!("{of_api}{r}");
        }
        for a in &self.auth {
            let Some((scheme, value)) = a.split_once('=') else {
                return Err(UserError::msg(format!(
                    "{of_api}--auth expects SCHEME=VALUE: one value has no `=` (not shown: it may be a secret)"
                ))
                .into());
            };
            if !set.security_schemes.iter().any(|(n, _)| n == scheme) {
                if crate::forward::scrub::looks_generated(scheme) {
                    return Err(UserError::msg(format!(
                        "{of_api}--auth: the spec has no security scheme by the name before `=` (not shown: it looks like a secret; --auth expects SCHEME=VALUE)"
                    ))
                    .into());
                }
                let known: Vec<&str> = set
                    .security_schemes
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect();
                return Err(UserError::msg(format!(
                    "--auth: the spec has no security scheme {scheme:?} (it has: {})",
                    known.join(", ")
                ))
                .into());
            }
            creds.set(scheme, value.to_string());
        }
        let mut static_headers = Vec::new();
        for h in &self.header {
            let Some((name, value)) = h.split_once(':') else {
                return Err(UserError::msg(format!(
                    "{of_api}--header expects 'Name: value': one value has no `:` (not shown: it may be a secret)"
                ))
                .into());
            };
            static_headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        let missing = creds.missing(&set.security_schemes);
        let mut forward_opts = ForwardOptions::new(base_url);
        forward_opts.timeout = timeout_duration(self.timeout)?;
        forward_opts.max_response_bytes = self.max_response_bytes;
        forward_opts.response = self.response;
        forward_opts.retries = self.retries;
        forward_opts.retry_writes = self.retry_writes;
        forward_opts.static_headers = static_headers;
        forward_opts.credential_origins =
            self.credential_origins(set, &forward_opts.base_url.clone(), others, api)?;
        let forwarder = Forwarder::new(forward_opts, set.security_schemes.clone(), creds)
            .map_err(StartError::Client)?;
        Ok((forwarder, missing))
    }
}
