//! The converter: every OpenAPI operation becomes an MCP tool with a route.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::diag::Diagnostics;
use crate::ir::{self, flatten_object};
use crate::load::{DocumentSet, Spec};
use crate::node::Node;
use crate::pointer::Loc;
use crate::schema::{self, DefTable, Deps, SchemaStore};
use openapi_mcp_toolset::filter::Filter;
use openapi_mcp_toolset::model::*;
use openapi_mcp_toolset::naming::{NameAllocator, prefix_from_title, sanitize_arg};

pub use crate::ir::ConvertReport;

/// Sets of names and locations: looked up, never iterated (the hasher cannot change output).
type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;

/// How output schemas are emitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum OutputSchemaMode {
    /// The spec's shape, without rejecting real-world deviations (default).
    #[default]
    Lenient,
    /// Exactly the spec's schema (`required`, `additionalProperties: false` kept).
    Strict,
    /// No output schemas, no structured content.
    None,
}

/// Options of the conversion, shared by `tools`, `proxy` and `generate`.
#[derive(Clone, Debug)]
pub struct ToolOptions {
    /// Tool name prefix; `None` derives one from `info.title`, `Some("")` disables it.
    pub prefix: Option<String>,
    /// Longest tool name (default 64, at most 128).
    pub max_name_len: usize,
    /// Longest description, in characters.
    pub max_description_len: usize,
    pub output_schema: OutputSchemaMode,
    /// Lenient output schemas keep definitions up to this many `$ref`s deep; deeper ones are
    /// elided to `{"title": name}` (they accept anything), which bounds the size of tools/list.
    pub output_ref_depth: usize,
    pub filter: Filter,
    /// The MCP client the tool list is shaped for (`generic`: unchanged).
    pub client: crate::profile::ClientProfile,
}

impl Default for ToolOptions {
    fn default() -> Self {
        Self {
            prefix: None,
            max_name_len: 64,
            max_description_len: 1024,
            output_schema: OutputSchemaMode::Lenient,
            output_ref_depth: 1,
            filter: Filter::default(),
            client: Default::default(),
        }
    }
}

/// The result of converting a spec.
pub struct Conversion {
    pub tools: ToolSet,
    pub diagnostics: Diagnostics,
    pub report: ConvertReport,
}

/// Approximate bytes of definitions one tool's inputSchema carries at most. Above it, deeper
/// definitions accept any value (see [`DefTable::bundle_within`]): an entity model as
/// interlinked as Microsoft Graph's gave single tools 1.7 MB schemas (about 450k tokens, more
/// than a model's context) and its whole list 12 GB. The largest inputSchema of the shared
/// real-world specs (Kubernetes' pod status, 199 kB) stays whole.
const INPUT_DEFS_BUDGET: usize = 256 * 1024;

/// Converts a loaded spec into a tool set, in two stages: the spec is lowered to its operations
/// ([`ir::lower`]: the API's facts, and each operation's inputs, security and responses in one
/// shape), then each operation is built into a tool ([`build`]). The client profile, the
/// overrides and the lock are passes over the result ([`crate::pipeline`]).
pub fn convert(spec: &Spec, opts: &ToolOptions) -> Conversion {
    let mut diagnostics = Diagnostics::default();
    let api = ir::lower(spec, &opts.filter, &mut diagnostics);
    build(api, opts, diagnostics)
}

/// Builds a tool from each lowered operation, then the tool set.
fn build(api: ir::Api<'_>, opts: &ToolOptions, mut diags: Diagnostics) -> Conversion {
    let ir::Api {
        docs,
        dialect,
        title,
        version,
        description,
        tag_descriptions,
        base_url,
        security_schemes,
        operations,
        mut report,
    } = api;
    let root = docs.root();
    let mut store = SchemaStore::new(docs, dialect);
    let prefix = match &opts.prefix {
        Some(p) => p.clone(),
        None => prefix_from_title(&title),
    };
    let mut names = NameAllocator::new(&prefix, opts.max_name_len);
    let mut built: Vec<ToolDef> = Vec::with_capacity(operations.len());
    // Each tool's schema parts are frozen into compact JSON on a second thread while the next
    // operations are converted (see [`Freezer`]).
    let frozen = std::thread::scope(|scope| {
        let mut freezer = Freezer::start(scope);
        for op in operations {
            let (item, node) = (op.src.item, op.src.op);
            let ctx = OpContext {
                op,
                schemes: &security_schemes,
                opts,
            };
            let (mut def, mut parts) = ctx.build(&mut store, &mut names, &mut diags);
            let max = opts.max_description_len;
            crate::extensions::apply(&mut def, root, item, node, max, &mut diags);
            crate::extensions::mirror_headers(&def, &mut parts.input, root, item, node, &mut diags);
            crate::extensions::task_support(&mut def, node, &mut diags);
            built.push(def);
            freezer.push(parts);
        }
        freezer.finish()
    });
    diags.extend(std::mem::take(&mut store.diags));
    // Every tool bundles its schemas from the same definitions, when they are first needed.
    let table = Arc::new(store.into_table());
    let mut tools: Vec<Arc<ToolDef>> = built
        .into_iter()
        .zip(frozen)
        .map(|(def, parts)| {
            Arc::new(def.with_deferred_schemas(Arc::new(PendingSchemas {
                table: table.clone(),
                parts,
            })))
        })
        .collect();
    report.tools = tools.len();
    let base_url = adopt_primary_server(base_url, &mut tools);
    let tools = ToolSet {
        title,
        version,
        description,
        tag_descriptions,
        base_url,
        security_schemes,
        tools,
    };
    Conversion {
        tools,
        diagnostics: diags,
        report,
    }
}

/// Reallocates the tool's schemas at their final size (same content and order): maps and arrays
/// built entry by entry keep up to half their capacity unused, and with a thousand tools alive
/// next to the parsed spec that is what sets the peak memory of a conversion.
fn compact_tool(tool: &mut rmcp::model::Tool) {
    let input = Arc::make_mut(&mut tool.input_schema);
    object_properties(input);
    compact_map(input);
    if let Some(out) = &mut tool.output_schema {
        let out = Arc::make_mut(out);
        object_properties(out);
        compact_map(out);
    }
}

/// The TypeScript SDK requires every top-level property schema of an input or output schema to
/// be an object and rejects the whole `tools/list` otherwise; JSON Schema's boolean schemas (a
/// spec's `someField: false`, as Codat writes one) become their object forms.
fn object_properties(schema: &mut Map<String, Value>) {
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for v in props.values_mut() {
            if let Value::Bool(b) = v {
                *v = if *b { json!({}) } else { json!({"not": {}}) };
            }
        }
    }
}

fn compact_map(m: &mut Map<String, Value>) {
    let mut exact: Map<String, Value> = Map::with_capacity(m.len());
    for (k, mut v) in std::mem::take(m) {
        compact_value(&mut v);
        exact.insert(k, v);
    }
    *m = exact;
}

fn compact_value(v: &mut Value) {
    match v {
        Value::Object(m) => compact_map(m),
        Value::Array(a) => {
            a.shrink_to_fit();
            a.iter_mut().for_each(compact_value);
        }
        _ => {}
    }
}

/// A lowered operation being built into a tool.
struct OpContext<'a, 's> {
    op: ir::Operation<'a>,
    /// The API's security schemes.
    schemes: &'s [(String, SecurityScheme)],
    opts: &'s ToolOptions,
}

/// A tool's inputSchema as it is built: the arguments, their schemas, and the names taken.
#[derive(Default)]
struct Input {
    taken: HashSet<String>,
    args: Vec<ArgBinding>,
    properties: Map<String, Value>,
    required: Vec<String>,
    deps: Deps,
    /// Keywords of the inputSchema's root besides its properties (`dependentRequired`).
    root_extra: Map<String, Value>,
    /// Declared parameters a credential fills.
    credentials: Vec<CredentialParam>,
}

impl Input {
    /// Adds the argument `binding.arg` with its schema.
    fn add(&mut self, schema: Value, binding: ArgBinding) {
        if binding.required {
            self.required.push(binding.arg.clone());
        }
        self.properties.insert(binding.arg.clone(), schema);
        self.args.push(binding);
    }

    /// The whole request body as one argument, `body` unless a parameter has that name.
    fn whole_body(&mut self, required: bool, schema: Value) {
        let arg = if self.taken.insert("body".to_string()) {
            "body".to_string()
        } else {
            self.unique_arg("request_body", "body")
        };
        self.add(
            schema,
            ArgBinding {
                arg,
                wire: String::new(),
                location: ArgLocation::Body,
                required,
                content_type: None,
            },
        );
    }

    /// An argument name for `name` no other argument has: qualified by its location (`path`,
    /// `query`, ..., `body`) and then numbered when needed.
    fn unique_arg(&mut self, name: &str, location: &str) -> String {
        let taken = &mut self.taken;
        let base = sanitize_arg(name);
        if taken.insert(base.clone()) {
            return base;
        }
        let qualified = sanitize_arg(&format!("{location}_{name}"));
        if taken.insert(qualified.clone()) {
            return qualified;
        }
        let mut n = 2;
        loop {
            let c = format!("{qualified}_{n}");
            if taken.insert(c.clone()) {
                return c;
            }
            n += 1;
        }
    }

    /// The inputSchema, its definitions' dependencies, the names of the arguments that are
    /// parameters (not body), and the bindings.
    fn assemble(self) -> (Map<String, Value>, Deps, Vec<String>, Vec<ArgBinding>) {
        let mut input = Map::new();
        input.insert("type".into(), json!("object"));
        input.insert("properties".into(), Value::Object(self.properties));
        if !self.required.is_empty() {
            input.insert("required".into(), json!(self.required));
        }
        input.extend(self.root_extra);
        input.insert("additionalProperties".into(), json!(false));
        let params: Vec<String> = self
            .args
            .iter()
            .filter(|a| !matches!(a.location, ArgLocation::Body | ArgLocation::BodyField))
            .map(|a| a.arg.clone())
            .collect();
        (input, self.deps, params, self.args)
    }
}

impl<'a> OpContext<'a, '_> {
    fn build(
        mut self,
        store: &mut SchemaStore<'_>,
        names: &mut NameAllocator,
        diags: &mut Diagnostics,
    ) -> (ToolDef, BuiltParts) {
        let mut input = Input::default();
        let extra_schemes = self.parameters(store, &mut input, diags);
        self.template_variables(&mut input);
        let body = self.body(store, &mut input, diags);
        let credential_params = std::mem::take(&mut input.credentials);
        let (input, input_deps, params, args) = input.assemble();
        let (output_schema, output) = self.output(store);
        let tool = self.tool(names);
        let parts = SchemaParts {
            input,
            input_deps,
            params,
            output: output_schema,
        };
        let op = self.op;
        let route = Route {
            method: op.method,
            path: op.path.to_string(),
            server: op.server,
            args,
            body,
            accept: op.responses.accept,
            security: with_declared_schemes(op.security, &extra_schemes),
            oauth_scopes: op.oauth_scopes,
            output: if self.opts.output_schema == OutputSchemaMode::None {
                OutputShape::None
            } else {
                output
            },
            pinned: Map::new(),
            credential_params,
            input_schema: Default::default(),
        };
        let def = ToolDef::new(
            tool,
            route,
            op.operation_id.map(str::to_string),
            op.tags,
            op.src.docs.describe(&op.src.op_loc),
        );
        (def, parts)
    }

    /// Parameters become arguments in location order: path, query, header, cookie. Returns the
    /// security schemes the operation gains because it declares their parameters.
    fn parameters(
        &self,
        store: &mut SchemaStore<'_>,
        input: &mut Input,
        diags: &mut Diagnostics,
    ) -> Vec<String> {
        let security = &self.op.security;
        let mut extra_schemes: Vec<String> = Vec::new();
        for wanted in ParamIn::ALL {
            for p in self.op.params.iter().filter(|p| p.location == wanted) {
                // A parameter a credential fills: an apiKey scheme's, or `Authorization`.
                let mut per_call: Option<Option<String>> = None;
                if let Some((cp, schemes)) = self.credential_param(p) {
                    if schemes
                        .iter()
                        .any(|n| security.iter().flatten().any(|s| s == n))
                    {
                        // The operation's security fills it: never an argument. A required one
                        // that no configured credential fills stops the call (the forwarder says
                        // which variable to set).
                        input.credentials.push(cp);
                        continue;
                    }
                    // The operation's security does not use it: the value is per-call data, an
                    // argument. An apiKey scheme named by the parameter is still added to the
                    // operation's requirements (apideck declares its app id header on
                    // operations whose security does not name that scheme), and `--header`
                    // may set it: either fills the parameter instead, so the argument is
                    // optional, and the forwarder refuses a call that has none of them when
                    // the parameter is required.
                    let scheme = schemes.into_iter().find(|n| {
                        self.schemes
                            .iter()
                            .any(|(s, k)| s == n && matches!(k, SecurityScheme::ApiKey { .. }))
                    });
                    if let Some(scheme) = &scheme
                        && !extra_schemes.contains(scheme)
                    {
                        extra_schemes.push(scheme.clone());
                    }
                    input.credentials.push(cp);
                    per_call = Some(scheme);
                }
                let (mut schema, pdeps) = self.param_schema(store, p, diags);
                input.deps.extend(pdeps);
                if let Value::Object(m) = &mut schema {
                    if let Some(d) = p.description {
                        m.insert("description".into(), Value::String(d.to_string()));
                    }
                    if p.deprecated {
                        m.insert("deprecated".into(), Value::Bool(true));
                    }
                    if !m.contains_key("examples")
                        && let Some(ex) = p.example
                    {
                        m.insert("examples".into(), json!([ex]));
                    }
                }
                if let (Some(scheme), Value::Object(m)) = (&per_call, &mut schema) {
                    let by = match scheme {
                        Some(scheme) => format!(
                            "the credential of security scheme `{scheme}` ({}) is configured",
                            credential_env_base(scheme)
                        ),
                        None => format!("the server is started with `--header {}`", p.name),
                    };
                    let note = format!(
                        "When {by}, that is sent instead of this argument.{}",
                        if p.required {
                            " Required otherwise."
                        } else {
                            ""
                        }
                    );
                    let text = match m.get("description").and_then(Value::as_str) {
                        Some(d) => format!("{d}\n\n{note}"),
                        None => note,
                    };
                    m.insert("description".into(), Value::String(text));
                }
                let arg = input.unique_arg(p.name, wanted.as_str());
                input.add(
                    schema,
                    ArgBinding {
                        arg,
                        wire: p.name.to_string(),
                        location: p.arg_location(),
                        required: p.required && per_call.is_none(),
                        content_type: p.content_type().map(str::to_string),
                    },
                );
            }
        }
        extra_schemes
    }

    /// When a credential fills parameter `p` (an apiKey scheme's parameter, or an
    /// `Authorization` header): the parameter, and the schemes that fill it, in spec order.
    fn credential_param(&self, p: &ir::Param<'_>) -> Option<(CredentialParam, Vec<String>)> {
        let location = match p.location {
            ParamIn::Header => ApiKeyLocation::Header,
            ParamIn::Query => ApiKeyLocation::Query,
            ParamIn::Cookie => ApiKeyLocation::Cookie,
            ParamIn::Path => return None,
        };
        let cp = CredentialParam {
            name: p.name.to_string(),
            location,
            required: p.required,
        };
        let authorization =
            location == ApiKeyLocation::Header && p.name.eq_ignore_ascii_case("authorization");
        let schemes: Vec<String> = self
            .schemes
            .iter()
            .filter(|(_, s)| cp.filled_by(s))
            .map(|(n, _)| n.clone())
            .collect();
        (authorization || !schemes.is_empty()).then_some((cp, schemes))
    }

    /// Template variables nobody declared (lowering warned): required string arguments.
    fn template_variables(&self, input: &mut Input) {
        for name in &self.op.undeclared {
            let arg = input.unique_arg(name, ParamIn::Path.as_str());
            input.add(
                json!({"type": "string"}),
                ArgBinding {
                    arg,
                    wire: name.clone(),
                    location: ArgLocation::Path {
                        style: PathStyle::Simple,
                        explode: false,
                    },
                    required: true,
                    content_type: None,
                },
            );
        }
    }

    /// Name, title, description and annotations of the tool.
    fn tool(&self, names: &mut NameAllocator) -> rmcp::model::Tool {
        let op = &self.op;
        let (method, path) = (op.method, op.path);
        let name = names.allocate(&op.base_name(), &format!("{} {path}", method.as_str()));
        let (summary, long) = (op.summary, op.description);
        let title = summary
            .map(str::to_string)
            .unwrap_or_else(|| format!("{} {path}", method.as_str()));
        let mut description = String::new();
        if op.deprecated {
            description.push_str("Deprecated. ");
        }
        match (summary, long) {
            (Some(s), Some(l)) if l.starts_with(s) => description.push_str(l),
            (Some(s), Some(l)) => {
                description.push_str(s);
                description.push_str("\n\n");
                description.push_str(l);
            }
            (Some(s), None) => description.push_str(s),
            (None, Some(l)) => description.push_str(l),
            (None, None) => description.push_str(&format!("{} {path}", method.as_str())),
        }
        let description = truncate_chars(&description, self.opts.max_description_len);

        let mut annotations = rmcp::model::ToolAnnotations::with_title(title.clone())
            .read_only(method.is_read_only())
            .idempotent(method.is_idempotent())
            .open_world(true);
        if !method.is_read_only() {
            annotations = annotations.destructive(!matches!(method, HttpMethod::Post));
        }

        let mut tool = rmcp::model::Tool::default();
        tool.name = name.into();
        tool.title = Some(title);
        tool.description = Some(description.into());
        tool.annotations = Some(annotations);
        tool
    }

    /// The converted schema of one parameter.
    fn param_schema(
        &self,
        store: &mut SchemaStore<'_>,
        p: &ir::Param<'_>,
        diags: &mut Diagnostics,
    ) -> (Value, Deps) {
        // A parameter many operations share is converted once.
        let convert = |store: &mut SchemaStore<'_>,
                       f: &dyn Fn(&mut SchemaStore<'_>) -> (Value, Deps)| {
            if p.shared {
                store.convert_remembered(&p.loc, f)
            } else {
                f(store)
            }
        };
        match p.schema {
            ir::ParamSchema::Schema(s) => {
                convert(store, &|store| store.convert_node(&p.loc.join("schema"), s))
            }
            ir::ParamSchema::Content {
                media_type: Some(mt),
                schema: Some(s),
            } => convert(store, &|store| {
                store.convert_node(&p.loc.join("content").join(mt).join("schema"), s)
            }),
            ir::ParamSchema::Content { .. } => (json!({}), Vec::new()),
            ir::ParamSchema::Inline(node) => {
                convert(store, &|store| swagger2_param_schema(store, &p.loc, node))
            }
            ir::ParamSchema::Missing => {
                diags.warning(
                    self.op.src.docs.describe(&p.loc),
                    "parameter has neither `schema` nor `content`; any value is accepted",
                );
                (json!({}), Vec::new())
            }
        }
    }

    /// The request body, in either dialect: its arguments, and how it is sent.
    fn body(
        &mut self,
        store: &mut SchemaStore<'_>,
        input: &mut Input,
        diags: &mut Diagnostics,
    ) -> Option<BodyBinding> {
        let rb = self.op.body.take()?;
        let kind = rb.media.kind;
        let mut binding = BodyBinding {
            kind,
            content_type: rb.media.content_type,
            required: rb.required,
            flattened: false,
            encoding: rb.media.encoding,
        };
        let description = rb.description;
        let docs = self.op.src.docs;
        match rb.content {
            ir::BodyContent::Fields(fields) => {
                binding.flattened = true;
                for f in fields {
                    let (mut s, d) = swagger2_param_schema(store, &f.loc, f.node);
                    input.deps.extend(d);
                    add_description(&mut s, f.node.get("description"));
                    let arg = input.unique_arg(f.name, "body");
                    input.add(
                        s,
                        ArgBinding {
                            arg,
                            wire: f.name.to_string(),
                            location: ArgLocation::BodyField,
                            required: f.required,
                            content_type: None,
                        },
                    );
                }
            }
            ir::BodyContent::Schema(schema_loc) => {
                if kind == BodyKind::Json
                    && self.flatten_body(store, &schema_loc, &mut binding, input)
                {
                    return Some(binding);
                }
                let (mut s, d) = store.convert_at(&schema_loc);
                input.deps.extend(d);
                if kind == BodyKind::Binary {
                    // An upload (`consumes: [application/octet-stream]`): the bytes, as base64.
                    let mt = binding.content_type.as_str();
                    mark_base64(&mut s, Some(mt).filter(|m| !m.contains('*')));
                }
                add_description(&mut s, description);
                input.whole_body(binding.required, s);
            }
            ir::BodyContent::MediaSchema(Some(schema_loc))
                if matches!(kind, BodyKind::Json | BodyKind::Form | BodyKind::Multipart) =>
            {
                if self.flatten_body(store, &schema_loc, &mut binding, input) {
                    if binding.required && kind == BodyKind::Multipart {
                        require_the_file(&binding, input);
                    }
                    // Root-level `dependentRequired` of the body still holds, under the argument names.
                    let dependent = dependent_required(docs, &schema_loc, &input.args);
                    if !dependent.is_empty() {
                        input
                            .root_extra
                            .insert("dependentRequired".into(), Value::Object(dependent));
                    }
                    return Some(binding);
                }
                let (mut s, d) = store.convert_at(&schema_loc);
                input.deps.extend(d);
                if kind == BodyKind::Json {
                    add_description(&mut s, description);
                } else if kind == BodyKind::Multipart && is_binary_schema(docs, &schema_loc) {
                    // A file as the whole multipart body (loket.nl): one file part.
                    mark_base64(&mut s, None);
                    add_description(&mut s, description);
                    diags.warning(
                        docs.describe(&schema_loc),
                        "multipart body schema is a file, not an object of parts; sent as one file part named `file`",
                    );
                } else {
                    diags.warning(
                        docs.describe(&schema_loc),
                        "form body schema is not an object; sent as a single field-less body",
                    );
                }
                input.whole_body(binding.required, s);
            }
            ir::BodyContent::MediaSchema(_) if kind == BodyKind::Binary => {
                let mut s = json!({"type": "string"});
                let mt = binding.content_type.as_str();
                mark_base64(&mut s, Some(mt).filter(|m| !m.contains('*')));
                add_description(&mut s, description);
                input.whole_body(binding.required, s);
            }
            // A text body whose schema is a string keeps its constraints (enum, pattern,
            // lengths); any other schema (XML described as an object) is sent as text.
            ir::BodyContent::MediaSchema(Some(schema_loc))
                if kind == BodyKind::Text
                    && docs.deref(&schema_loc).is_ok_and(|(_, n)| {
                        n.get("type").and_then(Node::as_str) == Some("string")
                    }) =>
            {
                let (mut s, d) = store.convert_at(&schema_loc);
                input.deps.extend(d);
                add_description(&mut s, description);
                input.whole_body(binding.required, s);
            }
            ir::BodyContent::MediaSchema(_) => {
                // Text, or a schema-less JSON/form body.
                let mut s = if kind == BodyKind::Text {
                    json!({"type": "string"})
                } else {
                    json!({})
                };
                add_description(&mut s, description);
                input.whole_body(binding.required, s);
            }
        }
        Some(binding)
    }

    /// One argument per property when the body schema at `schema_loc` is a plain object; false
    /// (nothing added) otherwise. Read-only properties are left out; multipart file parts are
    /// base64 strings.
    fn flatten_body(
        &self,
        store: &mut SchemaStore<'_>,
        schema_loc: &Loc,
        binding: &mut BodyBinding,
        input: &mut Input,
    ) -> bool {
        let Some(shape) = flatten_object(self.op.src.docs, schema_loc) else {
            return false;
        };
        binding.flattened = true;
        for (prop, ploc, is_req) in shape {
            if is_read_only(self.op.src.docs, &ploc, 0) {
                continue;
            }
            let (mut s, d) = body_field_schema(store, &ploc);
            input.deps.extend(d);
            if binding.kind == BodyKind::Multipart && is_binary_schema(self.op.src.docs, &ploc) {
                let ct = binding
                    .encoding
                    .iter()
                    .find(|e| e.name == prop)
                    .and_then(|e| e.content_type.clone());
                mark_base64(&mut s, ct.as_deref());
                match binding.encoding.iter_mut().find(|e| e.name == prop) {
                    Some(e) => e.binary = true,
                    None => binding.encoding.push(PartEncoding {
                        name: prop.clone(),
                        content_type: None,
                        style: None,
                        explode: None,
                        binary: true,
                    }),
                }
            }
            let arg = input.unique_arg(&prop, "body");
            input.add(
                s,
                ArgBinding {
                    arg,
                    wire: prop,
                    location: ArgLocation::BodyField,
                    required: is_req,
                    content_type: None,
                },
            );
        }
        true
    }

    /// outputSchema, and how to shape structured content.
    fn output(&self, store: &mut SchemaStore<'_>) -> (Option<BuiltOutput>, OutputShape) {
        if self.opts.output_schema == OutputSchemaMode::None {
            return (None, OutputShape::None);
        }
        let Some(schema_loc) = &self.op.responses.schema else {
            return (None, OutputShape::None);
        };
        let (root, mut deps) = store.convert_at(schema_loc);
        // A root `$ref` to an object definition is inlined so the root says `type: object`.
        // Which definitions, and the shape, are decided here from their top levels; parsing and
        // merging them is left to the freezing thread (see [`OutputRecipe`]).
        let mut top = schema::DefSummary::of(&root);
        let mut inline = Vec::new();
        for _ in 0..8 {
            let Some(r) = top.reference.take() else {
                break;
            };
            let Some((i, def, text)) = store.table().def_by_ref(&r) else {
                break;
            };
            inline.push(text);
            if !def.is_map {
                top = def.clone();
                break;
            }
            top = top.merged_over(def);
            deps.extend_from_slice(store.table().def_deps(i));
        }
        let is_object = top.is_map
            && (top.type_object == Some(true)
                || (top.type_object.is_none()
                    && top.properties
                    && !top.one_of
                    && !top.any_of)
                // `allOf` of objects (through `$ref`s) is an object too.
                || (top.type_object.is_none()
                    && flatten_object(self.op.src.docs, schema_loc).is_some()));
        let shape = if is_object {
            OutputShape::Object
        } else {
            OutputShape::Wrapped
        };
        let root_map = OutputRecipe {
            base: root,
            inline,
            shape,
        };
        let depth = match self.opts.output_schema {
            OutputSchemaMode::Lenient => Some(self.opts.output_ref_depth),
            _ => None,
        };
        let pending = PendingOutput {
            root: root_map,
            deps,
            depth,
            shape,
            lenient: self.opts.output_schema == OutputSchemaMode::Lenient,
        };
        (Some(pending), shape)
    }
}

/// The operation's security alternatives, each first also with `extra` (schemes whose
/// parameters the operation declares): the credentials of `extra` go along when configured,
/// and each alternative still applies alone when they are not.
fn with_declared_schemes(
    security: Vec<SecurityRequirement>,
    extra: &[String],
) -> Vec<SecurityRequirement> {
    if extra.is_empty() {
        return security;
    }
    if security.is_empty() {
        return vec![extra.to_vec()];
    }
    let mut out = Vec::with_capacity(security.len() * 2);
    for alt in security {
        let mut with = alt.clone();
        with.extend(extra.iter().cloned());
        out.push(with);
        out.push(alt);
    }
    out
}

/// A Swagger 2.0 non-body parameter carries its schema inline (`type`, `items`, `enum`, ...).
fn swagger2_param_schema(store: &mut SchemaStore<'_>, loc: &Loc, node: &Node) -> (Value, Deps) {
    let Some(m) = node.as_object() else {
        return (json!({}), Vec::new());
    };
    let mut s = Vec::new();
    for (k, v) in m.entries() {
        if matches!(
            &**k,
            "type"
                | "format"
                | "items"
                | "enum"
                | "default"
                | "minimum"
                | "maximum"
                | "exclusiveMinimum"
                | "exclusiveMaximum"
                | "minLength"
                | "maxLength"
                | "pattern"
                | "minItems"
                | "maxItems"
                | "uniqueItems"
                | "multipleOf"
                | "x-nullable"
        ) {
            s.push((k.clone(), v.clone()));
        }
    }
    store.convert_node(loc, &Node::from_entries(s))
}

/// A required multipart body whose schema requires none of its parts, with one file part: that
/// file is required (an upload whose schema forgot `required: [file]` went out without the
/// file). Other fields stay optional: an empty form is a valid form.
fn require_the_file(binding: &BodyBinding, input: &mut Input) {
    let fields: Vec<usize> = (0..input.args.len())
        .filter(|&i| input.args[i].location == ArgLocation::BodyField)
        .collect();
    if fields.iter().any(|&i| input.args[i].required) {
        return;
    }
    let files: Vec<usize> = fields
        .iter()
        .copied()
        .filter(|&i| {
            binding
                .encoding
                .iter()
                .any(|e| e.binary && e.name == input.args[i].wire)
        })
        .collect();
    let [only] = files.as_slice() else {
        return;
    };
    let only = *only;
    input.args[only].required = true;
    input.required.push(input.args[only].arg.clone());
}

/// The converted schema of a flattened body property; a property only named in `required` (no
/// schema at `ploc`) accepts any value and says why.
fn body_field_schema(store: &mut SchemaStore<'_>, ploc: &Loc) -> (Value, Deps) {
    match store.docs().get(ploc) {
        Some(node) => store.convert_node(ploc, node),
        None => (
            json!({"description": "Required by the API; its spec does not describe this field."}),
            Vec::new(),
        ),
    }
}

/// The `dependentRequired` of an object body (its root and its `allOf` parts), renamed to the
/// argument names its properties got; constraints on properties that are not arguments are dropped.
fn dependent_required(docs: &DocumentSet, loc: &Loc, args: &[ArgBinding]) -> Map<String, Value> {
    let arg_of = |wire: &str| {
        args.iter()
            .find(|a| a.location == ArgLocation::BodyField && a.wire == wire)
            .map(|a| a.arg.clone())
    };
    let mut out = Map::new();
    let mut stack = vec![(loc.clone(), 0usize)];
    let mut seen = HashSet::default();
    while let Some((loc, depth)) = stack.pop() {
        let Ok((loc, node)) = docs.deref(&loc) else {
            continue;
        };
        if depth > 32 || !seen.insert(loc.clone()) {
            continue;
        }
        if let Some(dr) = node.get("dependentRequired").and_then(Node::as_object) {
            for (k, v) in dr {
                let (Some(key), Some(list)) = (arg_of(k), v.as_array()) else {
                    continue;
                };
                let names: Vec<Value> = list
                    .iter()
                    .filter_map(Node::as_str)
                    .filter_map(arg_of)
                    .map(Value::String)
                    .collect();
                if !names.is_empty() {
                    out.insert(key, Value::Array(names));
                }
            }
        }
        if let Some(parts) = node.get("allOf").and_then(Node::as_array) {
            for i in 0..parts.len() {
                stack.push((loc.join("allOf").index(i), depth + 1));
            }
        }
    }
    out
}

/// Whether the schema at `loc` is `readOnly`: itself, through `$ref`s, or in an `allOf` member
/// (`allOf: [{$ref: Plain}, {readOnly: true}]`); an explicit `readOnly: false` wins.
fn is_read_only(docs: &DocumentSet, loc: &Loc, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    // A `$ref` with a `readOnly` sibling (3.1) says so itself.
    if let Some(b) = docs
        .get(loc)
        .and_then(|n| n.get("readOnly"))
        .and_then(Node::as_bool)
    {
        return b;
    }
    let Ok((loc, node)) = docs.deref(loc) else {
        return false;
    };
    match node.get("readOnly").and_then(Node::as_bool) {
        Some(b) => b,
        None => node
            .get("allOf")
            .and_then(Node::as_array)
            .is_some_and(|all| {
                (0..all.len()).any(|i| is_read_only(docs, &loc.join("allOf").index(i), depth + 1))
            }),
    }
}

fn is_binary_schema(docs: &DocumentSet, loc: &Loc) -> bool {
    let Ok((_, node)) = docs.deref(loc) else {
        return false;
    };
    let fmt = node.get("format").and_then(Node::as_str);
    let ty = node.get("type").and_then(Node::as_str);
    (ty == Some("string") && matches!(fmt, Some("binary") | Some("byte")))
        || ty == Some("file")
        || node.get("contentEncoding").is_some()
        || node.get("contentMediaType").is_some() && ty == Some("string")
}

fn mark_base64(s: &mut Value, media_type: Option<&str>) {
    if let Value::Object(m) = s {
        m.insert("type".into(), json!("string"));
        m.remove("format");
        m.insert("contentEncoding".into(), json!("base64"));
        if let Some(mt) = media_type {
            m.insert("contentMediaType".into(), json!(mt));
        }
        if !m.contains_key("description") {
            m.insert("description".into(), json!("File content, base64-encoded."));
        }
    }
}

fn add_description(s: &mut Value, d: Option<&Node>) {
    if let (Value::Object(m), Some(d)) = (s, d.and_then(Node::as_str))
        && !m.contains_key("description")
    {
        m.insert("description".into(), Value::String(d.to_string()));
    }
}

fn into_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => {
            let mut m = Map::new();
            m.insert("result".into(), other);
            m
        }
    }
}

fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// What a converted tool's schemas are bundled from: its input and output roots (converted,
/// with `$ref`s to the conversion's definitions) and the definitions they reference. `M` and
/// `O` are how the roots are held: a map and an [`OutputRecipe`] while the operation is
/// converted, then frozen.
pub(crate) struct SchemaParts<M = FrozenMap, O = M> {
    input: M,
    input_deps: Deps,
    /// The inputSchema properties that are parameters (they keep a `readOnly` schema).
    params: Vec<String>,
    output: Option<PendingOutput<O>>,
}

/// Schema parts as an operation's conversion builds them, before [`Freezer`] freezes them.
type BuiltParts = SchemaParts<Map<String, Value>, OutputRecipe>;
type BuiltOutput = PendingOutput<OutputRecipe>;

/// How the freezing thread builds an output root: the converted schema, the definitions its
/// root `$ref` is inlined from (their texts, in order: each one's members with the current
/// root's other members put over them), and whether the result is the object itself or is
/// wrapped as `{result}`.
pub(crate) struct OutputRecipe {
    base: Value,
    inline: Vec<Arc<str>>,
    shape: OutputShape,
}

impl OutputRecipe {
    fn build(self) -> Map<String, Value> {
        let mut root = self.base;
        for text in &self.inline {
            let mut merged = match schema::parse_text(text) {
                Value::Object(m) => m,
                other => {
                    root = other;
                    break;
                }
            };
            if let Value::Object(siblings) = root {
                for (k, sv) in siblings {
                    if k != "$ref" {
                        merged.insert(k, sv);
                    }
                }
            }
            root = Value::Object(merged);
        }
        if self.shape == OutputShape::Object {
            let mut m = into_map(root);
            m.insert("type".into(), json!("object"));
            m
        } else {
            let mut m = Map::new();
            m.insert("type".into(), json!("object"));
            m.insert("properties".into(), json!({ "result": root }));
            m
        }
    }
}

impl BuiltParts {
    fn freeze(self, texts: &mut Interner) -> SchemaParts {
        SchemaParts {
            input: FrozenMap::freeze(self.input, texts),
            input_deps: self.input_deps,
            params: self.params,
            output: self.output.map(|o| PendingOutput {
                root: FrozenMap::freeze(o.root.build(), texts),
                deps: o.deps,
                depth: o.depth,
                shape: o.shape,
                lenient: o.lenient,
            }),
        }
    }
}

/// A schema map held as compact JSON text until a tool's schemas are bundled. A thousand tools'
/// input and output roots as `Value` trees took 3 to 10 times their JSON size (Cloudflare:
/// 1.6 MB of JSON, most of the 32 MB a conversion kept); as text they are what sets the peak
/// memory of a conversion no longer, and parsing one back when a tool is first listed costs
/// about what cloning the map did. Each property's schema is its own text, shared by every
/// tool whose property has the same text: operations repeat the same parameters (Kubernetes:
/// 4.7 MB of parameter descriptions in its inputSchemas, 46 kB of them distinct).
pub(crate) struct FrozenMap {
    /// The map without `properties`.
    rest: Box<str>,
    /// `properties`: where it was in the map, and its entries.
    properties: Option<(usize, Vec<FrozenProperty>)>,
}

/// A property's name and its schema's (shared) text.
type FrozenProperty = (Box<str>, Arc<str>);

/// Texts shared between frozen maps.
#[derive(Default)]
struct Interner(HashSet<Arc<str>>);

impl Interner {
    fn intern(&mut self, text: String) -> Arc<str> {
        if let Some(t) = self.0.get(text.as_str()) {
            return t.clone();
        }
        let t: Arc<str> = Arc::from(text);
        self.0.insert(t.clone());
        t
    }
}

impl FrozenMap {
    fn freeze(mut m: Map<String, Value>, texts: &mut Interner) -> Self {
        let at = m.keys().position(|k| k == "properties");
        let properties = match (at, m.get("properties")) {
            (Some(at), Some(Value::Object(_))) => match m.shift_remove("properties") {
                Some(Value::Object(props)) => Some((
                    at,
                    props
                        .into_iter()
                        .map(|(k, v)| (k.into_boxed_str(), texts.intern(schema::json_text(&v))))
                        .collect(),
                )),
                _ => None,
            },
            _ => None,
        };
        FrozenMap {
            rest: schema::json_text(&m).into_boxed_str(),
            properties,
        }
    }

    fn thaw(&self) -> Map<String, Value> {
        let mut m: Map<String, Value> = serde_json::from_str(&self.rest).unwrap_or_default();
        if let Some((at, props)) = &self.properties {
            let props: Map<String, Value> = props
                .iter()
                .map(|(k, t)| (k.to_string(), schema::parse_text(t)))
                .collect();
            m.shift_insert(
                (*at).min(m.len()),
                "properties".into(),
                Value::Object(props),
            );
        }
        m
    }
}

/// Freezes converted operations' schema parts on a second thread, in order, while the
/// conversion goes on: the conversion is single-threaded and machines have two cores at least,
/// so serializing (and freeing) the maps costs no wall time. Without a thread, it freezes inline.
struct Freezer<'scope> {
    worker: Option<FreezeWorker<'scope>>,
    /// Parts not handed over yet: they go in batches (a hand-over per operation spent a tenth
    /// of Cloudflare's conversion waking the thread).
    batch: Vec<BuiltParts>,
    done: Vec<SchemaParts>,
    /// Texts shared by the parts frozen inline.
    texts: Interner,
}

/// The freezing thread: batches in, frozen parts (in order) out.
type FreezeWorker<'scope> = (
    std::sync::mpsc::SyncSender<Vec<BuiltParts>>,
    std::thread::ScopedJoinHandle<'scope, Vec<SchemaParts>>,
);

/// Operations handed to the freezing thread at once, and batches queued for it at most (which
/// bounds the maps alive at once).
const FREEZE_BATCH: usize = 32;
const FREEZE_QUEUE: usize = 4;

impl<'scope> Freezer<'scope> {
    fn start<'env>(scope: &'scope std::thread::Scope<'scope, 'env>) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<BuiltParts>>(FREEZE_QUEUE);
        let worker = std::thread::Builder::new()
            .name("openapi-mcp-freeze".into())
            .spawn_scoped(scope, move || {
                let mut texts = Interner::default();
                rx.into_iter()
                    .flatten()
                    .map(|p| p.freeze(&mut texts))
                    .collect()
            })
            .ok()
            .map(|handle| (tx, handle));
        Freezer {
            worker,
            batch: Vec::with_capacity(FREEZE_BATCH),
            done: Vec::new(),
            texts: Interner::default(),
        }
    }

    fn push(&mut self, parts: BuiltParts) {
        match &self.worker {
            Some((tx, _)) => {
                self.batch.push(parts);
                if self.batch.len() == FREEZE_BATCH {
                    let batch =
                        std::mem::replace(&mut self.batch, Vec::with_capacity(FREEZE_BATCH));
                    // A send fails only when the thread has panicked; `finish` resumes that panic.
                    drop(tx.send(batch));
                }
            }
            None => self.done.push(parts.freeze(&mut self.texts)),
        }
    }

    fn finish(self) -> Vec<SchemaParts> {
        match self.worker {
            Some((tx, handle)) => {
                if !self.batch.is_empty() {
                    drop(tx.send(self.batch));
                }
                drop(tx);
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }
            None => self.done,
        }
    }
}

/// The success response's schema, before bundling.
pub(crate) struct PendingOutput<M = FrozenMap> {
    root: M,
    deps: Deps,
    /// `--output-ref-depth` in lenient mode.
    depth: Option<usize>,
    shape: OutputShape,
    lenient: bool,
}

impl PendingOutput {
    fn finish(&self, table: &DefTable) -> Value {
        let mut out = Value::Object(table.bundle(self.root.thaw(), &self.deps, self.depth));
        schema::strip_write_only(&mut out);
        if self.lenient {
            match self.shape {
                OutputShape::Wrapped => {
                    // The wrapper itself is exact: `result` is always there.
                    if let Some(r) = out.pointer_mut("/properties/result") {
                        schema::make_lenient(r);
                    }
                    if let Some(Value::Object(defs)) = out.get_mut("$defs") {
                        defs.values_mut().for_each(schema::make_lenient);
                    }
                    if let Value::Object(m) = &mut out {
                        m.insert("required".into(), json!(["result"]));
                    }
                }
                _ => schema::make_lenient(&mut out),
            }
            // The root must stay an object even where lenient rules would allow null.
            if let Value::Object(m) = &mut out {
                m.insert("type".into(), json!("object"));
            }
        } else if self.shape == OutputShape::Wrapped
            && let Value::Object(m) = &mut out
        {
            m.insert("required".into(), json!(["result"]));
        }
        out
    }
}

/// A converted tool's schema parts and the definitions they are bundled from (shared by every
/// tool of the conversion).
pub struct PendingSchemas {
    table: Arc<DefTable>,
    parts: SchemaParts,
}

impl SchemaSource for PendingSchemas {
    fn has_output(&self) -> bool {
        self.parts.output.is_some()
    }

    /// The input schema's parts as converted, nothing bundled (a search hit's argument line).
    fn input_outline(&self, _head: &rmcp::model::Tool) -> Arc<Map<String, Value>> {
        let mut input = Value::Object(self.parts.input.thaw());
        strip_read_only_from_body(&mut input, &self.parts.params);
        Arc::new(into_map(input))
    }

    /// The tool with its self-contained input and output schemas.
    fn materialize(&self, head: &rmcp::model::Tool) -> rmcp::model::Tool {
        let parts = &self.parts;
        let mut input = Value::Object(self.table.bundle_within(
            parts.input.thaw(),
            &parts.input_deps,
            None,
            Some(INPUT_DEFS_BUDGET),
        ));
        strip_read_only_from_body(&mut input, &parts.params);
        let mut tool = head.clone();
        tool.input_schema = Arc::new(into_map(input));
        tool.output_schema = parts
            .output
            .as_ref()
            .map(|o| Arc::new(into_map(o.finish(&self.table))));
        compact_tool(&mut tool);
        tool
    }
}

/// `readOnly` properties leave request bodies. It concerns body properties only: a parameter
/// keeps its argument even when its schema says `readOnly` (Cloudflare marks its path
/// identifiers so, and dropping them made those operations uncallable); the annotation itself is
/// dropped from the parameter.
fn strip_read_only_from_body(input: &mut Value, params: &[String]) {
    let params: HashSet<&str> = params.iter().map(String::as_str).collect();
    let Some(Value::Object(props)) = input.get_mut("properties") else {
        schema::strip_read_only(input);
        return;
    };
    let order: Vec<String> = props.keys().cloned().collect();
    let mut held = Map::new();
    for k in order.iter().filter(|k| params.contains(k.as_str())) {
        if let Some(mut v) = props.remove(k) {
            if let Value::Object(m) = &mut v
                && m.get("readOnly") == Some(&Value::Bool(true))
            {
                m.remove("readOnly");
            }
            held.insert(k.clone(), v);
        }
    }
    schema::strip_read_only(input);
    if let Some(Value::Object(props)) = input.get_mut("properties") {
        let mut rest = std::mem::take(props);
        for k in &order {
            if let Some(v) = held.remove(k).or_else(|| rest.remove(k)) {
                props.insert(k.clone(), v);
            }
        }
    }
}

/// The API's base URL, and operations whose own server is that base URL no longer carry it.
///
/// Path- or operation-level `servers` override the base URL, and `--base-url` replaces the base
/// URL only. Some specs give every path the same server and none at the root (Twilio): that
/// server is the API's base URL, and `--base-url` must reach those operations too. So without a
/// root server, the server most operations declare becomes the base URL; then any operation whose
/// server equals the base URL follows the base URL (and `--base-url`). Servers that really differ
/// (Stripe's uploads at files.stripe.com) stay per operation.
fn adopt_primary_server(base_url: Option<String>, tools: &mut [Arc<ToolDef>]) -> Option<String> {
    let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
    let primary = base_url.clone().or_else(|| {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for t in tools.iter() {
            if let Some(s) = t.route.server.as_deref() {
                match counts.iter_mut().find(|(c, _)| same(c, s)) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((s, 1)),
                }
            }
        }
        // The first of the most common (max_by_key keeps the last of equals: reverse first).
        counts
            .iter()
            .rev()
            .max_by_key(|(_, n)| *n)
            .map(|(s, _)| s.to_string())
    });
    let Some(primary) = primary else {
        return base_url;
    };
    for t in tools.iter_mut() {
        if t.route.server.as_deref().is_some_and(|s| same(s, &primary))
            && let Some(def) = Arc::get_mut(t)
        {
            def.route.server = None;
        }
    }
    Some(base_url.unwrap_or(primary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frozen_maps_thaw_to_the_same_map() {
        let src = json!({
            "zeta": 1, "properties": {"p": {"type": "string"}, "q": {"type": "string"}, "r": {}},
            "alpha": [0.1, 1e-7, 1.7976931348623157e308, 5e-324, -0.0, 2.5],
            "big": u64::MAX, "small": i64::MIN, "f": 0.30000000000000004,
            "nested": {"b": null, "a": "\u{e9}\n\"", "m": {"z": true, "y": false}},
        });
        let Value::Object(map) = src else {
            unreachable!()
        };
        let thawed = FrozenMap::freeze(map.clone(), &mut Interner::default()).thaw();
        assert_eq!(thawed, map);
        // Key order survives too (tool schemas list properties in the spec's order).
        assert_eq!(
            thawed.keys().collect::<Vec<_>>(),
            map.keys().collect::<Vec<_>>()
        );
        assert_eq!(
            thawed["nested"]
                .as_object()
                .map(|m| m.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["b".to_string(), "a".to_string(), "m".to_string()])
        );
        // Equal property schemas are one text, shared.
        let mut texts = Interner::default();
        let a = FrozenMap::freeze(map.clone(), &mut texts);
        let b = FrozenMap::freeze(map.clone(), &mut texts);
        let (Some((_, pa)), Some((_, pb))) = (&a.properties, &b.properties) else {
            panic!("properties frozen apart")
        };
        assert!(Arc::ptr_eq(&pa[0].1, &pb[0].1));
        assert!(!Arc::ptr_eq(&pa[0].1, &pa[2].1));
        assert_eq!(pa[0].1, pa[1].1);
        assert!(
            thawed["alpha"][4]
                .as_f64()
                .is_some_and(|z| z == 0.0 && z.is_sign_negative())
        );
    }

    #[test]
    fn template_names() {
        use openapi_mcp_toolset::media::path_template_names;
        assert_eq!(path_template_names("/a/{b}/c/{d}.json"), vec!["b", "d"]);
        assert!(path_template_names("/x").is_empty());
    }
}
