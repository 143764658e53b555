//! The tools, one module per tag (an operation goes to its first tag's module; operations without
//! tags are grouped by the first segment of their path), and [`dispatch`], from tool name to handler.
use ::openapi_mcp_runtime::forward::Forwarder;
use ::openapi_mcp_runtime::model::Route;
use ::openapi_mcp_runtime::rmcp::model::{CallToolResult, ContentBlock};
use ::serde_json::{Map, Value};
/// Operations tagged `pets`.
pub mod pets;
/// What a handler returns, boxed so that one `dispatch` can return any of them.
pub type HandlerFuture<'a> = ::std::pin::Pin<
    Box<dyn ::std::future::Future<Output = CallToolResult> + Send + 'a>,
>;
/// The handler of the tool `name` called with `args`, or `None` for an unknown tool.
///
/// `route` is the tool's route from [`crate::tool_set`]; the handler forwards through it.
pub fn dispatch<'a>(
    name: &str,
    fwd: &'a Forwarder,
    route: &'a Route,
    args: Map<String, Value>,
) -> Option<HandlerFuture<'a>> {
    let handler: HandlerFuture<'a> = match name {
        "petstore_list_pets" => {
            Box::pin(self::pets::petstore_list_pets(fwd, route, args))
        }
        "petstore_create_pet" => {
            Box::pin(self::pets::petstore_create_pet(fwd, route, args))
        }
        "petstore_search_pets_legacy" => {
            Box::pin(self::pets::petstore_search_pets_legacy(fwd, route, args))
        }
        "petstore_show_pet_by_id" => {
            Box::pin(self::pets::petstore_show_pet_by_id(fwd, route, args))
        }
        "petstore_update_pet" => {
            Box::pin(self::pets::petstore_update_pet(fwd, route, args))
        }
        "petstore_delete_pet" => {
            Box::pin(self::pets::petstore_delete_pet(fwd, route, args))
        }
        _ => return None,
    };
    Some(handler)
}
/// Reads a tool's arguments as its typed struct; on failure, the tool error to return (the
/// message names the argument).
pub fn parse<'de, T: ::serde::Deserialize<'de>>(
    tool: &str,
    args: &'de Map<String, Value>,
) -> Result<T, CallToolResult> {
    ::serde_path_to_error::deserialize(args)
        .map_err(|err| {
            CallToolResult::error(
                vec![
                    ContentBlock::text(format!("Invalid arguments for `{tool}`; nothing was sent to the API: {err}"))
                ],
            )
        })
}
