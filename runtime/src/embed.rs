//! Embedding (#42): an MCP server inside the API owner's own axum/tower service.
//!
//! Both directions at once, typically:
//! - tool calls go **in process** to the owner's `axum::Router` ([`Embed::in_process`]: no
//!   socket, the app's middleware sees every call, credentials travel as headers as over the
//!   network), or over HTTP to any base URL ([`Embed::new`] with a [`Forwarder`]);
//! - the MCP endpoint is **mounted** in the owner's router ([`Embed::router`]: Streamable HTTP at
//!   `/mcp`, with the runtime's HTTP options — bearer token or OAuth, sessions and their bounds,
//!   body size, rate limit, Host/Origin checks — applied to it alone).
//!
//! ```no_run
//! # async fn f(set: openapi_mcp_runtime::generated::ToolSet, app: axum::Router) -> Result<(), Box<dyn std::error::Error>> {
//! use openapi_mcp_runtime::embed::Embed;
//! use openapi_mcp_runtime::forward::Credentials;
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! let mcp = Embed::in_process(set, "http://localhost/".parse()?, Credentials::new(), app.clone())?
//!     .router(&shutdown)?;
//! let both = app.merge(mcp); // the API's routes and /mcp
//! # Ok(()) }
//! ```
//!
//! The router also answers `/healthz` and `/readyz` (and, with OAuth, the protected-resource
//! metadata): an app that has routes of these names gets a panic from `merge`.

use std::net::SocketAddr;

use tokio_util::sync::CancellationToken;

use crate::extend::{ExtendError, Extensions};
use crate::forward::{Credentials, ForwardError, ForwardOptions, Forwarder};
use crate::http::transport::{HttpOptions, http_router};
use crate::server::{Dispatcher, ProxyServer, ServerOptions};
use openapi_mcp_toolset::model::ToolSet;

/// An MCP server to embed (see the module documentation).
pub struct Embed {
    set: ToolSet,
    forwarder: Forwarder,
    server: ServerOptions,
    http: HttpOptions,
    extensions: Option<Extensions>,
}

/// Why an embedded server could not be made.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(transparent)]
    Forward(#[from] ForwardError),
    #[error(transparent)]
    Extend(#[from] ExtendError),
}

impl std::fmt::Debug for Embed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embed")
            .field("tools", &self.set.tools.len())
            .field("forwarder", &self.forwarder)
            .field("server", &self.server)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

impl Embed {
    /// A server of `set` whose calls `forwarder` sends (over HTTP, or in process when it was
    /// given a service: [`Forwarder::set_in_process`]).
    pub fn new(set: ToolSet, forwarder: Forwarder) -> Self {
        Embed {
            set,
            forwarder,
            server: ServerOptions::default(),
            // Loopback until told otherwise: `listen` only names the address the owner serves
            // on (Host checks, the OAuth audience); nothing is bound here.
            http: HttpOptions::new(SocketAddr::from(([127, 0, 0, 1], 0))),
            extensions: None,
        }
    }

    /// A server of `set` whose calls go to `app` in process. `base_url` is where the app would
    /// be over HTTP (its path prefix is kept: routes are appended to it; its host is the
    /// requests' `Host`); `credentials` are sent as headers as over the network.
    pub fn in_process<S, B>(
        set: ToolSet,
        base_url: url::Url,
        credentials: Credentials,
        app: S,
    ) -> Result<Self, EmbedError>
    where
        S: tower::Service<http::Request<axum::body::Body>, Response = http::Response<B>>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Error: Into<crate::forward::local::BoxError>,
        S::Future: Send + 'static,
        B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
        B::Error: Into<crate::forward::local::BoxError>,
    {
        let fwd = Forwarder::new(
            ForwardOptions::new(base_url),
            set.security_schemes.clone(),
            credentials,
        )?;
        fwd.set_in_process(app);
        Ok(Self::new(set, fwd))
    }

    /// The generated crate's typed handlers (`Some(Arc::new(my_crate::tools::dispatch))`).
    pub fn dispatcher(mut self, dispatcher: Dispatcher) -> Self {
        self.server.dispatcher = Some(dispatcher);
        self
    }

    /// The owner's custom tools, overrides and hooks.
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = Some(extensions);
        self
    }

    /// Changes the MCP side's options (paging, `--confirm`, concurrency, mode, observe, …).
    pub fn server_options(mut self, f: impl FnOnce(&mut ServerOptions)) -> Self {
        f(&mut self.server);
        self
    }

    /// Changes the HTTP options of the mounted endpoint (auth, sessions, limits, allowed hosts
    /// and origins; `listen`: the address the owner serves on).
    pub fn http_options(mut self, f: impl FnOnce(&mut HttpOptions)) -> Self {
        f(&mut self.http);
        self
    }

    /// The MCP server (for stdio, or to drive it some other way). Extensions are applied:
    /// custom tools join the tool set, and overrides that name no tool are logged.
    pub fn server(self) -> Result<ProxyServer, EmbedError> {
        Ok(self.into_parts()?.0)
    }

    /// The MCP endpoint as a router to merge into the owner's (`/mcp`, `/healthz`, `/readyz`).
    /// Call it inside a Tokio runtime; `shutdown` ends its sessions and background tasks.
    pub fn router(self, shutdown: &CancellationToken) -> Result<axum::Router, EmbedError> {
        let (server, http) = self.into_parts()?;
        Ok(http_router(server, &http, shutdown))
    }

    fn into_parts(self) -> Result<(ProxyServer, HttpOptions), EmbedError> {
        let Embed {
            mut set,
            forwarder,
            mut server,
            http,
            extensions,
        } = self;
        if let Some(ext) = extensions {
            for w in ext.check(&set) {
                tracing::warn!("{w}");
            }
            ext.extend_tool_set(&mut set)?;
            server.dispatcher = Some(ext.dispatcher(server.dispatcher.take()));
        }
        Ok((ProxyServer::new(set, forwarder, server), http))
    }
}
