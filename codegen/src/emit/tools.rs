//! `src/tools/mod.rs` (dispatch) and `src/tools/<tag>.rs` (argument structs, the structs and enums
//! they use, and handlers).
//!
//! The modules import a few CamelCase names (`Forwarder`, `Route`, `CallToolResult`, `Map`,
//! `Value`) with `::`-anchored paths and use the prelude's `String`, `Vec`, `Option` and `Box`.
//! No generated item can shadow them: generated type names avoid them (see
//! `types::RESERVED_TYPE_NAMES`), and functions and modules are snake_case.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::CodegenError;
use crate::format::{doc_attrs, inner_doc_attrs, rust_file};
use crate::plan::{FieldPlan, ModulePlan, Plan, Setter, ToolPlan, TypeDef};
use crate::types::Presence;

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
            quote! { #name => |fwd, route, args| Box::pin(self::#module::#f(fwd, route, args)), }
        })
    });
    let tokens = quote! {
        #docs

        use ::openapi_mcp_runtime::generated::{CallToolResult, ContentBlock, Forwarder, Route};
        use ::serde_json::{Map, Value};

        #(#mods)*

        /// What a handler returns, boxed so that one `dispatch` can return any of them.
        pub type HandlerFuture<'a> = ::std::pin::Pin<Box<dyn ::std::future::Future<Output = CallToolResult> + Send + 'a>>;

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
            // A function pointer per arm, not a future: with a future per arm, an unoptimized
            // build reserves stack for every one of them in this frame (megabytes for a large
            // API, a stack overflow on a 2 MiB worker thread).
            let handler: Handler<'a> = match name {
                #(#arms)*
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
        pub fn parse<T: ::serde::de::DeserializeOwned>(tool: &str, args: &Map<String, Value>) -> Result<T, Box<CallToolResult>> {
            let parsed = if args.values().any(has_integral_float) {
                let mut args = Value::Object(args.clone());
                integral_floats_to_integers(&mut args);
                ::serde_path_to_error::deserialize(args)
            } else {
                ::serde_path_to_error::deserialize(args)
            };
            parsed.map_err(|err| {
                Box::new(CallToolResult::error(vec![ContentBlock::text(format!(
                    "Invalid arguments for `{tool}`; nothing was sent to the API: {err}"
                ))]))
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
        // The doc comments are the spec's descriptions, Markdown as the spec authors wrote it.
        #![allow(
            unknown_lints,
            clippy::doc_lazy_continuation,
            clippy::doc_overindented_list_items,
            clippy::doc_nested_refdefs,
            clippy::tabs_in_doc_comments,
            clippy::needless_doctest_main,
            clippy::test_attr_in_doctest
        )]

        use ::openapi_mcp_runtime::generated::{CallToolResult, Forwarder, Route};
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
    let fields = t.fields.iter().map(field);
    let types = t.types.iter().map(type_def);
    let fn_doc = doc_attrs(&format!(
        "The tool `{}` ({operation}): reads the arguments as [`{}`] and puts each one where the API\n\
         expects it. The route (from the spec) says how each is serialized; the runtime builds and\n\
         sends the request exactly as `openapi-mcp proxy` does.",
        t.name, t.struct_ident
    ));
    let f = ident(&t.fn_ident);
    let name = &t.name;
    let calls = t
        .fields
        .iter()
        .zip(&t.setters)
        .map(|(f, s)| setter_call(f, s));
    // A tool without arguments still parses them (an unexpected argument is an error).
    let binding = if t.fields.is_empty() {
        ident("_args")
    } else {
        ident("args")
    };
    quote! {
        #struct_doc
        #[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
        pub struct #struct_id {
            #(#fields)*
        }

        #(#types)*

        #fn_doc
        pub async fn #f(fwd: &Forwarder, route: &Route, args: Map<String, Value>) -> CallToolResult {
            let #binding: #struct_id = match super::parse(#name, &args) {
                Ok(args) => args,
                Err(invalid) => return *invalid,
            };
            fwd.request(route)
                #(#calls)*
                .send()
                .await
        }
    }
}

/// `.query("limit", &args.limit)`, `.body_field_opt("name", args.name.as_ref())`, ...
fn setter_call(f: &FieldPlan, s: &Setter) -> TokenStream {
    let id = ident(&f.ident);
    let optional = matches!(
        f.presence,
        Presence::Optional | Presence::OptionalNullable | Presence::OptionalValue
    );
    let method = if optional {
        ident(&format!("{}_opt", s.method))
    } else {
        ident(s.method)
    };
    let value = if optional {
        quote! { args.#id.as_ref() }
    } else {
        quote! { &args.#id }
    };
    match &s.wire {
        Some(wire) => quote! { .#method(#wire, #value) },
        None => quote! { .#method(#value) },
    }
}

fn field(f: &FieldPlan) -> TokenStream {
    let mut text = f.description.clone().unwrap_or_default();
    if let Some(b) = &f.binding {
        if !text.trim().is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(b);
    }
    let doc = doc_attrs(&text);
    let rename = f.rename.as_ref().map(|r| quote! { #[serde(rename = #r)] });
    // Absent stays absent and `null` stays `null` when the value is serialized again.
    let presence = match f.presence {
        Presence::Required | Presence::RequiredNullable => quote! {},
        Presence::Optional => quote! { #[serde(default, skip_serializing_if = "Option::is_none")] },
        Presence::OptionalNullable => quote! {
            #[serde(
                default,
                deserialize_with = "::openapi_mcp_runtime::generated::typed::nullable",
                skip_serializing_if = "Option::is_none"
            )]
        },
        Presence::OptionalValue => quote! {
            #[serde(
                default,
                deserialize_with = "::openapi_mcp_runtime::generated::typed::present",
                skip_serializing_if = "Option::is_none"
            )]
        },
    };
    let id = ident(&f.ident);
    let ty = &f.ty;
    quote! { #doc #rename #presence pub #id: #ty, }
}

/// A struct or enum that an argument struct uses.
fn type_def(t: &TypeDef) -> TokenStream {
    match t {
        TypeDef::Struct {
            ident: id,
            doc,
            fields,
            extra,
        } => {
            let doc = doc_attrs(doc);
            let id = ident(id);
            let fields = fields.iter().map(field);
            let extra = extra.as_deref().map(|e| {
                let e = ident(e);
                quote! {
                    /// Properties the schema does not declare, kept as sent.
                    #[serde(flatten)]
                    pub #e: Map<String, Value>,
                }
            });
            quote! {
                #doc
                #[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
                pub struct #id {
                    #(#fields)*
                    #extra
                }
            }
        }
        TypeDef::Enum {
            ident: id,
            doc,
            variants,
        } => {
            let doc = doc_attrs(doc);
            let id = ident(id);
            let variants = variants.iter().map(|(v, value)| {
                let rename = (v != value).then(|| quote! { #[serde(rename = #value)] });
                let v = ident(v);
                quote! { #rename #v, }
            });
            quote! {
                #doc
                #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ::serde::Deserialize, ::serde::Serialize)]
                #[allow(clippy::enum_variant_names)]
                pub enum #id {
                    #(#variants)*
                }
            }
        }
    }
}
