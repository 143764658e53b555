//! The tools, one module per tag (an operation goes to its first tag's module; operations without
//! tags are grouped by the first segment of their path), and [`dispatch`], from tool name to handler.
use ::openapi_mcp_runtime::generated::{CallToolResult, ContentBlock, Forwarder, Route};
use ::serde_json::{Map, Value};
/// Operations without tags under `/todos`.
pub mod todos;
/// What a handler returns, boxed so that one `dispatch` can return any of them.
pub type HandlerFuture<'a> = ::std::pin::Pin<
    Box<dyn ::std::future::Future<Output = CallToolResult> + Send + 'a>,
>;
/// A handler, boxing its future.
type Handler<'a> = fn(&'a Forwarder, &'a Route, Map<String, Value>) -> HandlerFuture<'a>;
/// The handler of the tool `name` called with `args`, or `None` for an unknown tool.
///
/// `route` is the tool's route from [`crate::tool_set`]; the handler forwards through it.
pub fn dispatch<'a>(
    name: &str,
    fwd: &'a Forwarder,
    route: &'a Route,
    args: Map<String, Value>,
) -> Option<HandlerFuture<'a>> {
    let handler: Handler<'a> = match name {
        "todo_list_todos" => {
            |fwd, route, args| Box::pin(self::todos::todo_list_todos(fwd, route, args))
        }
        "todo_create_todo" => {
            |fwd, route, args| Box::pin(self::todos::todo_create_todo(fwd, route, args))
        }
        "todo_get_todo" => {
            |fwd, route, args| Box::pin(self::todos::todo_get_todo(fwd, route, args))
        }
        "todo_delete_todo" => {
            |fwd, route, args| Box::pin(self::todos::todo_delete_todo(fwd, route, args))
        }
        "todo_update_todo" => {
            |fwd, route, args| Box::pin(self::todos::todo_update_todo(fwd, route, args))
        }
        _ => return None,
    };
    Some(handler(fwd, route, args))
}
/// Reads a tool's arguments as its typed struct; on failure, the tool error to return (the
/// message names the argument).
///
/// The arguments have passed the tool's input schema already, and the types accept what
/// the schema accepts; one exception needs help: JSON Schema's `integer` includes
/// integral floats such as `2.0`, which `i64` rejects, so those are read as integers.
pub fn parse<T: ::serde::de::DeserializeOwned>(
    tool: &str,
    args: &Map<String, Value>,
) -> Result<T, Box<CallToolResult>> {
    let parsed = if args.values().any(has_integral_float) {
        let mut args = Value::Object(args.clone());
        integral_floats_to_integers(&mut args);
        ::serde_path_to_error::deserialize(args)
    } else {
        ::serde_path_to_error::deserialize(args)
    };
    parsed
        .map_err(|err| {
            Box::new(
                CallToolResult::error(
                    vec![
                        ContentBlock::text(format!("Invalid arguments for `{tool}`; nothing was sent to the API: {err}"))
                    ],
                ),
            )
        })
}
/// `2.0` -> `2`, within the range of `i64`.
fn as_integer(n: &::serde_json::Number) -> Option<i64> {
    let f = n.as_f64().filter(|_| n.is_f64())?;
    (f.trunc() == f && (-9.2e18..9.2e18).contains(&f)).then_some(f as i64)
}
fn has_integral_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => as_integer(n).is_some(),
        Value::Array(items) => items.iter().any(has_integral_float),
        Value::Object(map) => map.values().any(has_integral_float),
        _ => false,
    }
}
fn integral_floats_to_integers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(i) = as_integer(n) {
                *v = Value::from(i);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_to_integers),
        Value::Object(map) => map.values_mut().for_each(integral_floats_to_integers),
        _ => {}
    }
}
