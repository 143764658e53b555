//! The request builder of generated crates' typed handlers.
//!
//! A handler reads its arguments as a typed struct, then says where each field goes on the wire:
//!
//! ```ignore
//! fwd.request(route)
//!     .path("petId", &args.pet_id)
//!     .query_opt("limit", args.limit.as_ref())
//!     .body_field("name", &args.name)
//!     .send()
//!     .await
//! ```
//!
//! Every setter names the parameter's location and wire name; the route (from the spec) supplies
//! how that parameter is serialized (style, explode, content type, body media type), and the
//! request is built by the same code as `openapi-mcp proxy`'s, so a generated server sends
//! exactly what the proxy sends. A setter for a parameter the operation does not have (an edit
//! gone wrong) makes [`Call::send`] return a tool error that names it; nothing is sent.
//!
//! Values are serialized with `serde`. Whole-number `f64`s are sent as integers (`10`, not
//! `10.0`), which is what the caller wrote unless they wrote `10.0`.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Map, Value};

use super::Forwarder;
use openapi_mcp_toolset::model::{ArgLocation, Route};

/// Where a [`Call`] setter puts its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Path,
    Query,
    Header,
    Cookie,
    BodyField,
    Body,
}

impl Slot {
    fn matches(self, loc: &ArgLocation) -> bool {
        matches!(
            (self, loc),
            (Slot::Path, ArgLocation::Path { .. })
                | (Slot::Query, ArgLocation::Query { .. })
                | (Slot::Header, ArgLocation::Header { .. })
                | (Slot::Cookie, ArgLocation::Cookie { .. })
                | (Slot::BodyField, ArgLocation::BodyField)
                | (Slot::Body, ArgLocation::Body)
        )
    }

    fn describe(self, wire: &str) -> String {
        match self {
            Slot::Path => format!("path parameter `{wire}`"),
            Slot::Query => format!("query parameter `{wire}`"),
            Slot::Header => format!("header `{wire}`"),
            Slot::Cookie => format!("cookie `{wire}`"),
            Slot::BodyField => format!("request body property `{wire}`"),
            Slot::Body => "whole request body".to_string(),
        }
    }
}

/// One tool call being assembled by a typed handler; see the module docs.
#[must_use = "a Call does nothing until `send` is awaited"]
pub struct Call<'a> {
    fwd: &'a Forwarder,
    route: &'a Route,
    args: Map<String, Value>,
    problems: Vec<String>,
}

impl Forwarder {
    /// Starts the request of one tool call on `route`, for a typed handler to fill in.
    pub fn request<'a>(&'a self, route: &'a Route) -> Call<'a> {
        Call {
            fwd: self,
            route,
            args: Map::new(),
            problems: Vec::new(),
        }
    }
}

impl<'a> Call<'a> {
    /// A path parameter (`{wire}` in the path template).
    pub fn path<T: Serialize + ?Sized>(self, wire: &str, value: &T) -> Self {
        self.set(Slot::Path, wire, value)
    }

    /// A query parameter.
    pub fn query<T: Serialize + ?Sized>(self, wire: &str, value: &T) -> Self {
        self.set(Slot::Query, wire, value)
    }

    /// A query parameter, left out when `value` is `None`.
    pub fn query_opt<T: Serialize>(self, wire: &str, value: Option<&T>) -> Self {
        self.set_opt(Slot::Query, wire, value)
    }

    /// A header parameter.
    pub fn header<T: Serialize + ?Sized>(self, wire: &str, value: &T) -> Self {
        self.set(Slot::Header, wire, value)
    }

    /// A header parameter, left out when `value` is `None`.
    pub fn header_opt<T: Serialize>(self, wire: &str, value: Option<&T>) -> Self {
        self.set_opt(Slot::Header, wire, value)
    }

    /// A cookie parameter.
    pub fn cookie<T: Serialize + ?Sized>(self, wire: &str, value: &T) -> Self {
        self.set(Slot::Cookie, wire, value)
    }

    /// A cookie parameter, left out when `value` is `None`.
    pub fn cookie_opt<T: Serialize>(self, wire: &str, value: Option<&T>) -> Self {
        self.set_opt(Slot::Cookie, wire, value)
    }

    /// One property of an object request body (JSON, form or multipart, as the spec says).
    pub fn body_field<T: Serialize + ?Sized>(self, wire: &str, value: &T) -> Self {
        self.set(Slot::BodyField, wire, value)
    }

    /// One property of an object request body, left out when `value` is `None`.
    pub fn body_field_opt<T: Serialize>(self, wire: &str, value: Option<&T>) -> Self {
        self.set_opt(Slot::BodyField, wire, value)
    }

    /// The whole request body (a non-object body, or one without declared properties).
    pub fn body<T: Serialize + ?Sized>(self, value: &T) -> Self {
        self.set(Slot::Body, "", value)
    }

    /// The whole request body, none when `value` is `None`.
    pub fn body_opt<T: Serialize>(self, value: Option<&T>) -> Self {
        self.set_opt(Slot::Body, "", value)
    }

    /// A path parameter, left out when `value` is `None` (the request then fails: path
    /// parameters are required).
    pub fn path_opt<T: Serialize>(self, wire: &str, value: Option<&T>) -> Self {
        self.set_opt(Slot::Path, wire, value)
    }

    /// A tool argument by its inputSchema name, wherever the route binds it (for arguments
    /// without a wire binding of their own).
    pub fn arg<T: Serialize + ?Sized>(mut self, name: &str, value: &T) -> Self {
        match serde_json::to_value(value) {
            Ok(mut v) => {
                whole_floats_to_integers(&mut v);
                self.args.insert(name.to_string(), v);
            }
            Err(e) => self
                .problems
                .push(format!("argument `{name}` cannot be serialized: {e}")),
        }
        self
    }

    /// A tool argument by its inputSchema name, left out when `value` is `None`.
    pub fn arg_opt<T: Serialize>(self, name: &str, value: Option<&T>) -> Self {
        match value {
            Some(v) => self.arg(name, v),
            None => self,
        }
    }

    /// Builds the request like the proxy does, sends it, and maps the response to the tool result.
    pub async fn send(self) -> CallToolResult {
        if !self.problems.is_empty() {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "The handler of `{} {}` is inconsistent with the API description; nothing was sent: {}",
                self.route.method.as_str(),
                self.route.path,
                self.problems.join("; ")
            ))]);
        }
        self.fwd.call(self.route, &self.args).await
    }

    /// The tool arguments this call has collected (what the proxy would have received).
    pub fn arguments(&self) -> &Map<String, Value> {
        &self.args
    }

    fn set_opt<T: Serialize>(self, slot: Slot, wire: &str, value: Option<&T>) -> Self {
        match value {
            Some(v) => self.set(slot, wire, v),
            None => self,
        }
    }

    fn set<T: Serialize + ?Sized>(mut self, slot: Slot, wire: &str, value: &T) -> Self {
        let binding = self
            .route
            .args
            .iter()
            .find(|b| slot.matches(&b.location) && (slot == Slot::Body || b.wire == wire));
        let binding = binding.or_else(|| {
            // Header names are case-insensitive.
            (slot == Slot::Header).then_some(())?;
            self.route
                .args
                .iter()
                .find(|b| slot.matches(&b.location) && b.wire.eq_ignore_ascii_case(wire))
        });
        let Some(binding) = binding else {
            self.problems
                .push(format!("the operation has no {}", slot.describe(wire)));
            return self;
        };
        match serde_json::to_value(value) {
            Ok(mut v) => {
                whole_floats_to_integers(&mut v);
                self.args.insert(binding.arg.clone(), v);
            }
            Err(e) => self
                .problems
                .push(format!("{} cannot be serialized: {e}", slot.describe(wire))),
        }
        self
    }
}

/// `#[serde(deserialize_with)]` of an optional nullable field (`Option<Option<T>>`): an absent
/// property stays `None` (with `#[serde(default)]`), `null` becomes `Some(None)`.
pub fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}

/// `#[serde(deserialize_with)]` of an optional `Value` field: `null` is kept as
/// `Some(Value::Null)`, not taken for an absent property.
pub fn present<'de, D>(d: D) -> Result<Option<Value>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    <Value as serde::Deserialize>::deserialize(d).map(Some)
}

/// `10.0` -> `10` (within the range of `i64`): `f64` fields would otherwise print a `.0` the
/// caller did not write.
fn whole_floats_to_integers(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.trunc() == f
                && (-9.2e18..9.2e18).contains(&f)
            {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_floats_to_integers),
        Value::Object(map) => map.values_mut().for_each(whole_floats_to_integers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forward::ForwardOptions;
    use openapi_mcp_toolset::model::{
        ArgBinding, BodyBinding, BodyKind, HttpMethod, OutputShape, PathStyle,
    };
    use serde_json::json;

    fn route() -> Route {
        let arg = |arg: &str, wire: &str, location| ArgBinding {
            arg: arg.into(),
            wire: wire.into(),
            location,
            required: false,
            content_type: None,
        };
        Route {
            method: HttpMethod::Post,
            path: "/pets/{petId}".into(),
            server: None,
            args: vec![
                arg(
                    "petId",
                    "petId",
                    ArgLocation::Path {
                        style: PathStyle::Simple,
                        explode: false,
                    },
                ),
                arg("X-Trace", "X-Trace", ArgLocation::Header { explode: false }),
                arg("body_petId", "petId", ArgLocation::BodyField),
                arg("price", "price", ArgLocation::BodyField),
            ],
            body: Some(BodyBinding {
                kind: BodyKind::Json,
                content_type: "application/json".into(),
                required: true,
                flattened: true,
                encoding: Vec::new(),
            }),
            accept: None,
            security: Vec::new(),
            oauth_scopes: Vec::new(),
            output: OutputShape::None,
            pinned: Map::new(),
            credential_params: Vec::new(),
            input_schema: Default::default(),
        }
    }

    fn forwarder() -> Forwarder {
        let opts = ForwardOptions::new("http://127.0.0.1:9/api".parse().expect("url"));
        Forwarder::new(opts, Vec::new(), Credentials::new()).expect("forwarder")
    }

    use super::super::Credentials;

    #[test]
    fn setters_fill_the_arguments_the_proxy_would_get() {
        let fwd = forwarder();
        let r = route();
        let call = fwd
            .request(&r)
            .path("petId", &7)
            .header_opt("x-trace", Some(&"abc"))
            .body_field("petId", "p-1")
            .body_field_opt::<f64>("price", Some(&10.0));
        assert!(call.problems.is_empty(), "{:?}", call.problems);
        assert_eq!(
            Value::Object(call.arguments().clone()),
            json!({"petId": 7, "X-Trace": "abc", "body_petId": "p-1", "price": 10})
        );
        let built = fwd
            .build_request(&r, call.arguments())
            .expect("request builds");
        assert_eq!(built.url.path(), "/api/pets/7");
        assert_eq!(built.header("X-Trace"), Some("abc"));
        let none = fwd.request(&r).body_field_opt::<f64>("price", None);
        assert!(none.arguments().is_empty());
    }

    /// #36: a generated handler's typed values meet the proxy's empty-value rule (the same
    /// builder): `Vec<String>` items that are empty are not sent, an optional `Some("")` is not
    /// sent, a required empty one is refused naming the argument, an empty required upload too.
    #[test]
    fn typed_empty_values_follow_the_proxys_rule() {
        let fwd = forwarder();
        let mut r = route();
        r.method = HttpMethod::Get;
        r.path = "/pets".into();
        r.body = None;
        let q = |name: &str, required| ArgBinding {
            arg: name.into(),
            wire: name.into(),
            location: ArgLocation::query(openapi_mcp_toolset::model::QueryStyle::Form, true),
            required,
            content_type: None,
        };
        r.args = vec![q("tags", false), q("cursor", false), q("q", true)];
        let tags = vec!["a".to_string(), String::new()];
        let call = fwd
            .request(&r)
            .query("tags", &tags)
            .query_opt("cursor", Some(&""))
            .query("q", "x");
        let built = fwd.build_request(&r, call.arguments()).expect("builds");
        assert_eq!(built.url.query(), Some("tags=a&q=x"));
        let call = fwd.request(&r).query("q", &[""; 2]);
        let e = fwd
            .build_request(&r, call.arguments())
            .expect_err("required empty");
        assert_eq!(e.arg.as_deref(), Some("q"));

        r.method = HttpMethod::Put;
        r.args = vec![ArgBinding {
            arg: "body".into(),
            wire: String::new(),
            location: ArgLocation::Body,
            required: true,
            content_type: None,
        }];
        r.body = Some(BodyBinding {
            kind: BodyKind::Binary,
            content_type: "application/octet-stream".into(),
            required: true,
            flattened: false,
            encoding: Vec::new(),
        });
        let call = fwd.request(&r).body("");
        let e = fwd
            .build_request(&r, call.arguments())
            .expect_err("empty required body");
        assert!(e.message.contains("is empty"), "{e:?}");
    }

    #[tokio::test]
    async fn an_unknown_parameter_is_a_tool_error_and_nothing_is_sent() {
        let fwd = forwarder();
        let r = route();
        let result = fwd
            .request(&r)
            .path("petId", &7)
            .query("limit", &3)
            .body(&json!([1]))
            .send()
            .await;
        assert_eq!(result.is_error, Some(true));
        let text = format!("{:?}", result.content);
        assert!(
            text.contains("no query parameter `limit`")
                && text.contains("no whole request body")
                && text.contains("nothing was sent"),
            "{text}"
        );
    }
}
