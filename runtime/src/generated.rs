//! The stable surface for generated crates (#42): every path the `openapi-mcp generate` templates
//! use, and what an owner's user-owned files (`src/custom.rs`) need, in one place.
//!
//! Generated code and the code an owner writes beside it should name runtime items only
//! through `openapi_mcp_runtime::generated::…`. These names keep their meaning within a
//! major version of the runtime (0.x: within a minor version): the modules behind them
//! (`forward`, `server`, `serve`, …) may be reorganised, renamed or split without notice, and
//! a crate that reaches into them may stop compiling on a runtime upgrade; one that uses only
//! this module does not.
//!
//! What is here:
//! - the typed handlers' needs: [`Forwarder`] (and its [`Call`] builder,
//!   `fwd.request(route).query_opt(..).send()`), [`Route`], [`CallToolResult`],
//!   [`ContentBlock`], the serde helpers [`typed::nullable`] and [`typed::present`];
//! - the embedded tool set: [`ToolSet`], [`api_file::read`], [`api_file::ApiFileError`];
//! - the crate's `main` (feature `cli`): [`Generated`], [`Mode`], [`generated_main`],
//!   [`generated_main_with`] for a crate built with the OAuth proxy, and
//!   [`generated_main_extended`] for a crate with `src/custom.rs`;
//! - Arazzo workflows the crate embeds (#39): [`EmbeddedWorkflows`], [`EmbeddedDocument`],
//!   [`generated_main_with_workflows`] (feature `cli`; serving them needs `workflows`);
//! - the handler slot: [`Dispatcher`], [`HandlerFuture`];
//! - extension points: [`Extensions`], [`Before`], [`CallInfo`], [`Args`], [`Tool`];
//! - in-process forwarding and the caller's identity: [`CallerIdentity`];
//! - tests of the generated crate: [`ForwardOptions`], [`Credentials`].
//!
//! The `openapi-mcp generate` templates name nothing else (codegen's tests fail on a generated
//! file that names a runtime path outside this module). Crates generated before this module
//! existed name `openapi_mcp_runtime::forward`, `::model`, `::toolset`, `::serve` and `::rmcp`
//! directly; those paths are kept for them.

#[cfg(feature = "cli")]
pub use crate::extend::generated_main_extended;
pub use crate::extend::{Args, Before, CallInfo, ExtendError, Extensions};
pub use crate::forward::typed::Call;
pub use crate::forward::{CallerIdentity, Credentials, ForwardOptions, Forwarder};
#[cfg(feature = "cli")]
pub use crate::serve::{EmbeddedDocument, EmbeddedWorkflows};
#[cfg(feature = "cli")]
pub use crate::serve::{
    Generated, Mode, generated_main, generated_main_with, generated_main_with_workflows,
};
pub use crate::server::{Dispatcher, HandlerFuture};
pub use openapi_mcp_toolset::model::{Route, ToolSet};
pub use rmcp::model::{CallToolResult, ContentBlock, Tool};

/// The serde helpers of the typed argument structs.
pub mod typed {
    pub use crate::forward::typed::{nullable, present};
}

/// Reading the embedded tool set (`src/api.json`).
pub mod api_file {
    pub use openapi_mcp_toolset::api_file::{ApiFileError, read};
}

#[cfg(test)]
mod tests {
    /// The facade names what the checked-in generated crates use (codegen/tests/output): a
    /// path the templates use and the facade lacks fails to compile here.
    #[test]
    fn the_template_paths_resolve() {
        use super::*;
        let _: fn(&str) -> Result<ToolSet, api_file::ApiFileError> = api_file::read;
        let f = Forwarder::new(
            ForwardOptions::new("http://localhost/".parse().expect("static URL")),
            Vec::new(),
            Credentials::new(),
        )
        .expect("forwarder");
        let route: Option<&Route> = None;
        let _ = (f, route);
        let _ = CallToolResult::success(vec![ContentBlock::text("ok")]);
        let _ = typed::nullable::<serde_json::Value, i64>;
        let _ = typed::present::<serde_json::Value>;
        let _ = Extensions::new();
    }
}
