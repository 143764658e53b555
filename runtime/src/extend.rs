//! Extension points of a generated crate (#42): what an API owner adds in the user-owned
//! `src/custom.rs` that generation never overwrites.
//!
//! * **Custom tools** written in Rust ([`Extensions::tool`]): added to the tool set, so they are
//!   listed, paged, searched (`--mode dynamic`), validated against their inputSchema, confirmed
//!   (`--confirm`), limited (`--max-concurrency`), logged and audited like the generated ones.
//! * **Overrides** ([`Extensions::override_tool`]): one generated tool's handler replaced by
//!   name, without editing generated files. An override that names no tool is reported
//!   ([`Extensions::check`]) at start-up and by `openapi-mcp generate`.
//! * **Hooks** around every call (custom tools included): [`Extensions::before`] sees the
//!   arguments once they are valid and may let the call go on (arguments as they are or
//!   altered) or answer it itself ([`Before::Deny`]: nothing is sent); [`Extensions::after`]
//!   sees the result and may reshape it. Hooks run in the order they were added.
//!
//! Everything rides the server's existing handler slot ([`crate::server::Dispatcher`]): a server
//! without extensions pays nothing, and one with extensions keeps the generated handlers as
//! they are. Arguments a `before` hook alters are not validated again: the hook is the
//! owner's code.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{CallToolResult, Tool};
use serde_json::{Map, Value};

use crate::forward::{CallerIdentity, Forwarder};
use crate::server::{Dispatcher, HandlerFuture};
use openapi_mcp_toolset::model::{HttpMethod, OutputShape, Route, ToolDef, ToolSet};

/// The arguments of a call.
pub type Args = Map<String, Value>;

/// A boxed future of a hook.
pub type HookFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

type CustomFn = Arc<dyn for<'a> Fn(&'a Forwarder, Args) -> HandlerFuture<'a> + Send + Sync>;
type OverrideFn =
    Arc<dyn for<'a> Fn(&'a Forwarder, &'a Route, Args) -> HandlerFuture<'a> + Send + Sync>;
type BeforeFn = Arc<dyn Fn(CallInfo, Args) -> HookFuture<Before> + Send + Sync>;
type AfterFn = Arc<dyn Fn(CallInfo, CallToolResult) -> HookFuture<CallToolResult> + Send + Sync>;

/// What a hook knows of the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallInfo {
    /// The tool's name.
    pub tool: Arc<str>,
    /// The operation's method and path template (`None` for a custom tool).
    pub operation: Option<(HttpMethod, String)>,
    /// The MCP caller the runtime's OAuth gate authorized, when there is one.
    pub caller: Option<CallerIdentity>,
}

/// What a `before` hook decides.
#[derive(Debug)]
pub enum Before {
    /// Go on with these arguments (as received, or altered).
    Continue(Args),
    /// Answer the call with this result; nothing is sent (the `after` hooks still run).
    Deny(CallToolResult),
}

/// A tool written in Rust, served beside the generated ones.
#[derive(Clone)]
struct Custom {
    tool: Tool,
    handler: CustomFn,
}

/// The owner's tools, overrides and hooks (see the module documentation).
#[derive(Clone, Default)]
pub struct Extensions {
    custom: Vec<Custom>,
    overrides: HashMap<String, OverrideFn>,
    before: Vec<BeforeFn>,
    after: Vec<AfterFn>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut overrides: Vec<&String> = self.overrides.keys().collect();
        overrides.sort();
        f.debug_struct("Extensions")
            .field(
                "custom",
                &self.custom.iter().map(|c| &c.tool.name).collect::<Vec<_>>(),
            )
            .field("overrides", &overrides)
            .field("before", &self.before.len())
            .field("after", &self.after.len())
            .finish()
    }
}

/// A problem with the extensions, found when they are applied to the tool set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtendError {
    #[error(
        "custom tool `{0}`: a tool name is 1 to 128 characters among A-Z, a-z, 0-9, `_`, `-` and `.`"
    )]
    BadName(String),
    #[error("custom tool `{0}`: a generated tool has this name (override it instead)")]
    Taken(String),
    #[error("custom tool `{0}` is added twice")]
    Twice(String),
    #[error("custom tool `{name}`: its inputSchema must be a JSON Schema of type object: {reason}")]
    Schema { name: String, reason: String },
}

impl Extensions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool written in Rust. `tool` is its MCP definition (name, description,
    /// inputSchema, annotations: `readOnlyHint` makes it a read for `--confirm writes`); the
    /// handler gets the validated arguments and the API's forwarder.
    pub fn tool<F>(mut self, tool: Tool, handler: F) -> Self
    where
        F: for<'a> Fn(&'a Forwarder, Args) -> HandlerFuture<'a> + Send + Sync + 'static,
    {
        self.custom.push(Custom {
            tool,
            handler: Arc::new(handler),
        });
        self
    }

    /// Replaces the handler of the generated tool `name`. The handler gets the tool's route and
    /// may still forward (`fwd.call(route, &args)`, or the generated handler).
    pub fn override_tool<F>(mut self, name: &str, handler: F) -> Self
    where
        F: for<'a> Fn(&'a Forwarder, &'a Route, Args) -> HandlerFuture<'a> + Send + Sync + 'static,
    {
        self.overrides.insert(name.to_string(), Arc::new(handler));
        self
    }

    /// Runs `hook` before every call, once its arguments are valid.
    pub fn before<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(CallInfo, Args) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Before> + Send + 'static,
    {
        self.before
            .push(Arc::new(move |c, a| Box::pin(hook(c, a)) as HookFuture<_>));
        self
    }

    /// Runs `hook` on every call's result (errors included) before it is returned.
    pub fn after<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(CallInfo, CallToolResult) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = CallToolResult> + Send + 'static,
    {
        self.after
            .push(Arc::new(move |c, r| Box::pin(hook(c, r)) as HookFuture<_>));
        self
    }

    /// Whether there is nothing to apply.
    pub fn is_empty(&self) -> bool {
        self.custom.is_empty()
            && self.overrides.is_empty()
            && self.before.is_empty()
            && self.after.is_empty()
    }

    /// The names of the overrides, sorted.
    pub fn overridden(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.overrides.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Overrides that name no tool of `set` (the spec changed, or a typo): one sentence each.
    pub fn check(&self, set: &ToolSet) -> Vec<String> {
        self.overridden()
            .into_iter()
            .filter(|n| set.find(n).is_none())
            .map(|n| {
                format!(
                    "the override of tool `{n}` matches no operation (renamed or removed from the spec?): it is not used"
                )
            })
            .collect()
    }

    /// Adds the custom tools to `set` (after the generated ones, in the order they were added).
    pub fn extend_tool_set(&self, set: &mut ToolSet) -> Result<(), ExtendError> {
        let mut added: Vec<&str> = Vec::new();
        for c in &self.custom {
            let name = c.tool.name.as_ref();
            if !valid_tool_name(name) {
                return Err(ExtendError::BadName(name.to_string()));
            }
            if added.contains(&name) {
                return Err(ExtendError::Twice(name.to_string()));
            }
            if set.find(name).is_some() {
                return Err(ExtendError::Taken(name.to_string()));
            }
            match c.tool.input_schema.get("type") {
                Some(Value::String(t)) if t == "object" => {}
                other => {
                    return Err(ExtendError::Schema {
                        name: name.to_string(),
                        reason: match other {
                            None => "it has no `type`".into(),
                            Some(v) => format!("its `type` is {v}"),
                        },
                    });
                }
            }
            if let Err(e) = jsonschema_compiles(&c.tool.input_schema) {
                return Err(ExtendError::Schema {
                    name: name.to_string(),
                    reason: e,
                });
            }
            added.push(name);
            let read_only = c
                .tool
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                .unwrap_or(false);
            let route = Route {
                method: if read_only {
                    HttpMethod::Get
                } else {
                    HttpMethod::Post
                },
                path: format!("(custom tool {name})"),
                server: None,
                args: Vec::new(),
                body: None,
                accept: None,
                security: Vec::new(),
                oauth_scopes: Vec::new(),
                output: if c.tool.output_schema.is_some() {
                    OutputShape::Object
                } else {
                    OutputShape::None
                },
                pinned: Map::new(),
                credential_params: Vec::new(),
                input_schema: Default::default(),
            };
            set.tools.push(Arc::new(ToolDef::new(
                c.tool.clone(),
                route,
                None,
                vec!["custom".into()],
                openapi_mcp_toolset::Location::default(),
            )));
        }
        Ok(())
    }

    /// The handler slot of a server with these extensions around `generated` (the crate's typed
    /// handlers; the plain forwarder when `None` or when they do not handle a tool).
    pub fn dispatcher(self, generated: Option<Dispatcher>) -> Dispatcher {
        let ext = Arc::new(self);
        let hooked = !ext.before.is_empty() || !ext.after.is_empty();
        Arc::new(slot(move |name, fwd, route, args| {
            let custom = ext.custom.iter().find(|c| c.tool.name == name).cloned();
            let over = ext.overrides.get(name).cloned();
            if !hooked && custom.is_none() && over.is_none() {
                // Nothing of the owner's for this tool: as without extensions.
                return generated.as_ref().and_then(|g| g(name, fwd, route, args));
            }
            let ext = Arc::clone(&ext);
            let generated = generated.clone();
            let info = CallInfo {
                tool: Arc::from(name),
                operation: custom.is_none().then(|| (route.method, route.path.clone())),
                caller: crate::forward::local::current_caller(),
            };
            let name = name.to_string();
            Some(Box::pin(async move {
                let mut args = args;
                let mut denied = None;
                for hook in &ext.before {
                    match hook(info.clone(), args).await {
                        Before::Continue(a) => args = a,
                        Before::Deny(r) => {
                            denied = Some(r);
                            args = Map::new();
                            break;
                        }
                    }
                }
                let mut result = match denied {
                    Some(r) => r,
                    None => match (custom, over) {
                        (Some(c), _) => (c.handler)(fwd, args).await,
                        (None, Some(o)) => o(fwd, route, args).await,
                        (None, None) => {
                            let handled = generated
                                .as_ref()
                                .and_then(|g| g(&name, fwd, route, args.clone()));
                            match handled {
                                Some(f) => f.await,
                                None => fwd.call(route, &args).await,
                            }
                        }
                    },
                };
                for hook in &ext.after {
                    result = hook(info.clone(), result).await;
                }
                result
            }) as HandlerFuture<'_>)
        }))
    }
}

/// Gives a closure the handler slot's higher-ranked signature.
fn slot<F>(f: F) -> F
where
    F: for<'a> Fn(&'a str, &'a Forwarder, &'a Route, Args) -> Option<HandlerFuture<'a>>,
{
    f
}

/// MCP tool names (2025-11-25): 1 to 128 of `A-Z a-z 0-9 _ - .`.
fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Whether the schema compiles as the server's validator compiles it.
fn jsonschema_compiles(schema: &Map<String, Value>) -> Result<(), String> {
    let v = openapi_mcp_toolset::validate::LazyValidator::default();
    v.get(schema)
        .as_ref()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The original tool set of the generated crate and its extensions, for
/// [`generated_main_extended`] (one server per process).
#[cfg(feature = "cli")]
static EXTENDED: std::sync::OnceLock<(ReadToolSet, Extensions)> = std::sync::OnceLock::new();

/// A generated crate's `tool_set` function.
#[cfg(feature = "cli")]
type ReadToolSet = fn() -> Result<ToolSet, openapi_mcp_toolset::api_file::ApiFileError>;

/// The tool set of [`EXTENDED`]: the embedded one plus the custom tools (checked already).
#[cfg(feature = "cli")]
fn extended_tool_set() -> Result<ToolSet, openapi_mcp_toolset::api_file::ApiFileError> {
    use serde::de::Error as _;
    let Some((read, ext)) = EXTENDED.get() else {
        return Err(openapi_mcp_toolset::api_file::ApiFileError::Json(
            serde_json::Error::custom("the extensions were not installed"),
        ));
    };
    let mut set = read()?;
    ext.extend_tool_set(&mut set).map_err(|e| {
        openapi_mcp_toolset::api_file::ApiFileError::Json(serde_json::Error::custom(e))
    })?;
    Ok(set)
}

/// [`crate::serve::generated_main`] with the owner's extensions (`src/custom.rs` of an
/// extensible generated crate): custom tools join the tool set, overrides and hooks wrap the
/// crate's handlers. Extensions that cannot apply (a custom tool named like a generated one, an
/// invalid schema) stop the server before it starts, saying which; overrides that match no
/// tool are warned about.
#[cfg(feature = "cli")]
pub fn generated_main_extended(
    g: crate::serve::Generated,
    extensions: Extensions,
) -> std::process::ExitCode {
    // The check needs the tool set; a tool set that does not read is reported by the server.
    if let Ok(mut set) = (g.tool_set)() {
        for w in extensions.check(&set) {
            eprintln!("warning: src/custom.rs: {w}");
        }
        if let Err(e) = extensions.extend_tool_set(&mut set) {
            eprintln!("error: src/custom.rs: {e}");
            return crate::serve::exit::ExitStatus::Failure.into();
        }
    }
    let dispatcher = Some(extensions.clone().dispatcher(g.dispatcher.clone()));
    if EXTENDED.set((g.tool_set, extensions)).is_err() {
        eprintln!("error: generated_main_extended runs once per process");
        return crate::serve::exit::ExitStatus::Error.into();
    }
    crate::serve::generated_main(crate::serve::Generated {
        tool_set: extended_tool_set,
        dispatcher,
        ..g
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::forward::{Credentials, ForwardOptions};
    use rmcp::model::ContentBlock;

    fn obj(v: Value) -> Args {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn tool(name: &str, schema: Value) -> Tool {
        Tool::new(name.to_string(), "a tool", obj(schema))
    }

    fn route(path: &str) -> Route {
        Route {
            method: HttpMethod::Get,
            path: path.into(),
            server: None,
            args: Vec::new(),
            body: None,
            accept: None,
            security: Vec::new(),
            oauth_scopes: Vec::new(),
            output: OutputShape::None,
            pinned: Map::new(),
            credential_params: Vec::new(),
            input_schema: Default::default(),
        }
    }

    fn set_of(names: &[&str]) -> ToolSet {
        ToolSet {
            title: "T".into(),
            version: "1".into(),
            description: None,
            tag_descriptions: Vec::new(),
            base_url: None,
            security_schemes: Vec::new(),
            tools: names
                .iter()
                .map(|n| {
                    Arc::new(ToolDef::new(
                        tool(n, json!({"type": "object"})),
                        route(&format!("/{n}")),
                        None,
                        Vec::new(),
                        Default::default(),
                    ))
                })
                .collect(),
        }
    }

    /// A forwarder whose calls go in process to an app that echoes the path and query.
    fn forwarder(hits: Arc<Mutex<Vec<String>>>) -> Forwarder {
        let f = Forwarder::new(
            ForwardOptions::new("http://api.local/".parse().expect("url")),
            Vec::new(),
            Credentials::new(),
        )
        .expect("forwarder");
        let app = axum::Router::new().fallback(move |uri: http::Uri| {
            let hits = Arc::clone(&hits);
            async move {
                hits.lock().expect("hits").push(uri.to_string());
                format!("upstream {uri}")
            }
        });
        assert!(f.set_in_process(app));
        f
    }

    fn text(r: &CallToolResult) -> String {
        r.content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("|")
    }

    #[test]
    fn custom_tools_are_checked_when_added_to_the_set() {
        fn ok(_: &Forwarder, _: Args) -> HandlerFuture<'_> {
            Box::pin(async { CallToolResult::success(vec![]) })
        }
        let mut set = set_of(&["a_list"]);
        let e = Extensions::new()
            .tool(tool("a_list", json!({"type": "object"})), ok)
            .extend_tool_set(&mut set.clone());
        assert_eq!(e, Err(ExtendError::Taken("a_list".into())));
        let e = Extensions::new()
            .tool(tool("bad name", json!({"type": "object"})), ok)
            .extend_tool_set(&mut set.clone());
        assert_eq!(e, Err(ExtendError::BadName("bad name".into())));
        let e = Extensions::new()
            .tool(tool("x", json!({"type": "object"})), ok)
            .tool(tool("x", json!({"type": "object"})), ok)
            .extend_tool_set(&mut set.clone());
        assert_eq!(e, Err(ExtendError::Twice("x".into())));
        let e = Extensions::new()
            .tool(tool("x", json!({"type": "string"})), ok)
            .extend_tool_set(&mut set.clone());
        assert!(matches!(e, Err(ExtendError::Schema { .. })), "{e:?}");
        let e = Extensions::new()
            .tool(
                tool("x", json!({"type": "object", "minProperties": "two"})),
                ok,
            )
            .extend_tool_set(&mut set.clone());
        assert!(matches!(e, Err(ExtendError::Schema { .. })), "{e:?}");
        Extensions::new()
            .tool(tool("x", json!({"type": "object"})), ok)
            .extend_tool_set(&mut set)
            .expect("added");
        assert_eq!(set.tools.len(), 2);
        assert_eq!(set.tools[1].name(), "x");
        assert_eq!(set.tools[1].route.method, HttpMethod::Post);
    }

    #[test]
    fn stale_overrides_are_reported() {
        let ext = Extensions::new()
            .override_tool("a_list", |f, r, a| {
                Box::pin(async move { f.call(r, &a).await })
            })
            .override_tool("a_gone", |f, r, a| {
                Box::pin(async move { f.call(r, &a).await })
            });
        assert_eq!(ext.overridden(), ["a_gone", "a_list"]);
        assert_eq!(
            ext.check(&set_of(&["a_list"])),
            [
                "the override of tool `a_gone` matches no operation (renamed or removed from the spec?): it is not used"
            ]
        );
    }

    #[tokio::test]
    async fn overrides_custom_tools_and_hooks_around_every_call() {
        let hits = Arc::new(Mutex::new(Vec::new()));
        let fwd = forwarder(Arc::clone(&hits));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen_before = Arc::clone(&seen);
        let ext = Extensions::new()
            .tool(tool("hello", json!({"type": "object"})), |_, a: Args| {
                Box::pin(async move {
                    CallToolResult::success(vec![ContentBlock::text(format!(
                        "hello {}",
                        a.get("who").and_then(Value::as_str).unwrap_or("?")
                    ))])
                })
            })
            .override_tool("b", |f, r, mut a| {
                Box::pin(async move {
                    a.insert("overridden".into(), json!(true));
                    let mut res = f.call(r, &a).await;
                    res.content.push(ContentBlock::text("(override)"));
                    res
                })
            })
            .before(move |call: CallInfo, mut args: Args| {
                let seen = Arc::clone(&seen_before);
                async move {
                    seen.lock().expect("seen").push(format!(
                        "{} {:?}",
                        call.tool,
                        call.operation.as_ref().map(|(_, p)| p.clone())
                    ));
                    if args.contains_key("deny") {
                        return Before::Deny(CallToolResult::error(vec![ContentBlock::text(
                            "denied",
                        )]));
                    }
                    args.insert("who".into(), json!("altered"));
                    Before::Continue(args)
                }
            })
            .after(|_, mut r: CallToolResult| async move {
                r.content.push(ContentBlock::text("after"));
                r
            });
        // The crate's handler for `a`; none for `b` (the override has it) nor `c`.
        let generated: Dispatcher = Arc::new(|name, _f, _r, _a| {
            (name == "a").then(|| {
                Box::pin(async { CallToolResult::success(vec![ContentBlock::text("generated a")]) })
                    as HandlerFuture<'_>
            })
        });
        let d = ext.dispatcher(Some(generated));
        let run = |name: &'static str, path: &'static str, args: Value| {
            let d = Arc::clone(&d);
            let fwd = fwd.clone();
            async move {
                let r = route(path);
                match d(name, &fwd, &r, obj(args)) {
                    Some(f) => f.await,
                    None => CallToolResult::error(vec![ContentBlock::text("not handled")]),
                }
            }
        };
        assert_eq!(text(&run("a", "/a", json!({})).await), "generated a|after");
        assert_eq!(
            text(&run("c", "/c", json!({})).await),
            "upstream /c|after",
            "no handler: the forwarder, hooks still around it"
        );
        assert_eq!(
            text(&run("hello", "(custom tool hello)", json!({"who": "x"})).await),
            "hello altered|after",
            "the before hook altered the argument"
        );
        let r = run("b", "/b", json!({"deny": 1})).await;
        assert_eq!(r.is_error, Some(true));
        assert_eq!(text(&r), "denied|after");
        assert_eq!(
            text(&run("b", "/b", json!({})).await),
            "upstream /b|(override)|after"
        );
        assert_eq!(
            *hits.lock().expect("hits"),
            ["/c", "/b"],
            "the denied call sent nothing"
        );
        assert_eq!(
            *seen.lock().expect("seen"),
            [
                "a Some(\"/a\")",
                "c Some(\"/c\")",
                "hello None",
                "b Some(\"/b\")",
                "b Some(\"/b\")"
            ]
        );
    }

    /// Without hooks, a tool the owner did not touch takes the crate's own path (the slot
    /// answers `None` where the crate's handlers do: the plain forwarder).
    #[test]
    fn untouched_tools_pass_through() {
        let ext = Extensions::new()
            .override_tool("b", |f, r, a| Box::pin(async move { f.call(r, &a).await }));
        let d = ext.dispatcher(None);
        let fwd = Forwarder::new(
            ForwardOptions::new("http://api.local/".parse().expect("url")),
            Vec::new(),
            Credentials::new(),
        )
        .expect("forwarder");
        let r = route("/a");
        assert!(d("a", &fwd, &r, Map::new()).is_none());
        assert!(d("b", &fwd, &r, Map::new()).is_some());
    }
}
