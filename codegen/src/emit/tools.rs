//! `src/tools/mod.rs` (dispatch) and `src/tools/<tag>.rs` (argument structs and handlers).
//!
//! The modules import a few CamelCase names (`Forwarder`, `Route`, `CallToolResult`, `Map`,
//! `Value`) with `::`-anchored paths and use the prelude's `String`, `Vec` and `Option`. No
//! generated item can shadow them: the only generated types are `*Args` structs, and functions
//! and modules are snake_case.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::CodegenError;
use crate::format::{doc_attrs, inner_doc_attrs, rust_file};
use crate::plan::{ModulePlan, Plan, ToolPlan};

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

pub fn tools_mod(plan: &Plan) -> Result<String, CodegenError> {
    let docs = inner_doc_attrs(
        "The tools, one module per tag (an operation goes to its first tag's module; operations without\n\
         tags are grouped by the first segment of their path), and [`dispatch`], from tool name to handler.",
    );
    let mods = plan.modules.iter().map(|m| {
        let doc = doc_attrs(&format!("{}.", m.group.describe()));
        let id = ident(&m.ident);
        quote! { #doc pub mod #id; }
    });
    let arms = plan.modules.iter().flat_map(|m| {
        let module = ident(&m.ident);
        m.tools.iter().map(move |t| {
            let name = &t.name;
            let f = ident(&t.fn_ident);
            quote! { #name => Box::pin(self::#module::#f(fwd, route, args)), }
        })
    });
    let tokens = quote! {
        #docs

        use ::openapi_mcp_runtime::forward::Forwarder;
        use ::openapi_mcp_runtime::model::Route;
        use ::openapi_mcp_runtime::rmcp::model::{CallToolResult, ContentBlock};
        use ::serde_json::{Map, Value};

        #(#mods)*

        /// What a handler returns, boxed so that one `dispatch` can return any of them.
        pub type HandlerFuture<'a> = ::std::pin::Pin<Box<dyn ::std::future::Future<Output = CallToolResult> + Send + 'a>>;

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
                #(#arms)*
                _ => return None,
            };
            Some(handler)
        }

        /// Reads a tool's arguments as its typed struct; on failure, the tool error to return (the
        /// message names the argument).
        pub fn parse<'de, T: ::serde::Deserialize<'de>>(tool: &str, args: &'de Map<String, Value>) -> Result<T, CallToolResult> {
            ::serde_path_to_error::deserialize(args).map_err(|err| {
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "Invalid arguments for `{tool}`; nothing was sent to the API: {err}"
                ))])
            })
        }
    };
    rust_file("src/tools/mod.rs", tokens)
}

pub fn tool_module(module: &ModulePlan) -> Result<String, CodegenError> {
    let file = format!("src/tools/{}.rs", module.ident);
    let docs = inner_doc_attrs(&format!(
        "{}: per operation, an argument struct and a handler.",
        module.group.describe()
    ));
    let items = module.tools.iter().map(tool_items);
    let tokens = quote! {
        #docs

        use ::openapi_mcp_runtime::forward::Forwarder;
        use ::openapi_mcp_runtime::model::Route;
        use ::openapi_mcp_runtime::rmcp::model::CallToolResult;
        use ::serde_json::{Map, Value};

        #(#items)*
    };
    rust_file(&file, tokens)
}

fn tool_items(t: &ToolPlan) -> TokenStream {
    let operation = format!("`{} {}`", t.method, t.path);
    let mut struct_doc = String::new();
    let description = t
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty());
    if let Some(title) = t.title.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        // Descriptions often repeat the summary (the title): say it once.
        if !description.is_some_and(|d| d.contains(title)) {
            struct_doc.push_str(title);
            struct_doc.push_str("\n\n");
        }
    }
    if let Some(d) = description {
        struct_doc.push_str(d);
        struct_doc.push_str("\n\n");
    }
    struct_doc.push_str(&format!(
        "Arguments of the tool `{}` ({operation}).",
        t.name
    ));
    let struct_doc = doc_attrs(&struct_doc);
    let struct_id = ident(&t.struct_ident);
    let fields = t.fields.iter().map(|f| {
        let mut text = f.description.clone().unwrap_or_default();
        if let Some(b) = &f.binding {
            if !text.trim().is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(b);
        }
        let doc = doc_attrs(&text);
        let rename = f.rename.as_ref().map(|r| quote! { #[serde(rename = #r)] });
        let id = ident(&f.ident);
        let ty = &f.ty;
        quote! { #doc #rename pub #id: #ty, }
    });
    let fn_doc = doc_attrs(&format!(
        "The tool `{}` ({operation}): reads the arguments as [`{}`], then forwards them with the runtime's\n\
         `Forwarder`, which builds the request exactly as `openapi-mcp proxy` does.",
        t.name, t.struct_ident
    ));
    let f = ident(&t.fn_ident);
    let name = &t.name;
    quote! {
        #struct_doc
        #[derive(Debug, ::serde::Deserialize)]
        pub struct #struct_id {
            #(#fields)*
        }

        #fn_doc
        pub async fn #f(fwd: &Forwarder, route: &Route, args: Map<String, Value>) -> CallToolResult {
            let _typed: #struct_id = match super::parse(#name, &args) {
                Ok(typed) => typed,
                Err(invalid) => return invalid,
            };
            fwd.call(route, &args).await
        }
    }
}
