//! Arazzo documents on the command line (#39): `proxy SPEC --arazzo FILE` adds a document's
//! workflows to the spec's tools; `proxy FILE.arazzo.yaml` serves a document's workflows with
//! the operations of its `openapi` source descriptions, each loaded and converted like a spec
//! (same loader, limits and conversion options), one API per source when there are several
//! (credentials `OPENAPI_MCP_<SOURCE>_<VAR>`, as for `apis:` entries).
//!
//! Load errors stop the command (`file#/pointer: message`); a workflow the validator finds
//! broken is skipped alone, with a warning on stderr at `file#/pointer`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use openapi_mcp_arazzo::load::{self, Document};
use openapi_mcp_arazzo::model::SourceKind;
use openapi_mcp_arazzo::validate::{self, Workflows};
use openapi_mcp_convert::pipeline::{LockMode, PipelineOptions};
use openapi_mcp_runtime::serve::config::ConfigError;
use openapi_mcp_runtime::server::multi::{self, ApiInfo};
use openapi_mcp_runtime::server::workflow::{SetOperations, WorkflowTools};
use openapi_mcp_toolset::model::ToolSet;

use crate::apis::ApiConfig;
use crate::args::SpecArgs;
use crate::commands::user_error;

pub use openapi_mcp_arazzo::load::is_document;

/// An Arazzo document, loaded (its load errors are the user's).
fn load_document(path: &Path) -> anyhow::Result<Arc<Document>> {
    load::load_file(path)
        .map(Arc::new)
        .map_err(|e| user_error(anyhow::Error::new(e)))
}

/// Checks `doc` against the operations of `set` (sources mapped to APIs by `sources`) and
/// prints its diagnostics: each broken workflow is skipped, with a warning.
fn checked(doc: Arc<Document>, set: &ToolSet, sources: Vec<(String, usize)>) -> Arc<Workflows> {
    let ops = SetOperations { set, sources };
    let workflows = validate::validate(doc, &ops);
    let mut err = std::io::stderr().lock();
    for d in workflows.diagnostics() {
        let _ = writeln!(err, "warning: {d}");
    }
    let usable = workflows.usable().count();
    let total = workflows.document().workflows().len();
    if usable < total {
        let _ = writeln!(
            err,
            "warning: {}: {} of {total} workflows skipped (see above)",
            workflows.document().name(),
            total - usable
        );
    }
    Arc::new(workflows)
}

/// [`checked`] with every `openapi` source of `doc` taken to be the one API of `set`.
fn checked_over_one(doc: Arc<Document>, set: &ToolSet) -> Arc<Workflows> {
    let sources = doc.sources_as_one_api(0);
    checked(doc, set, sources)
}

/// The workflows of `--arazzo` documents over one spec's tools: every `openapi` source of a
/// document is that spec.
pub fn over_spec(args: &SpecArgs, set: &ToolSet) -> anyhow::Result<Option<Arc<WorkflowTools>>> {
    if args.arazzo.is_empty() {
        return Ok(None);
    }
    let mut docs = Vec::with_capacity(args.arazzo.len());
    for path in &args.arazzo {
        let doc = load_document(path)?;
        docs.push(checked_over_one(doc, set));
    }
    Ok(Some(Arc::new(WorkflowTools::new(
        set,
        &docs,
        args.workflows_only,
    ))))
}

/// An Arazzo document served with its sources' operations.
pub struct Served {
    /// One per `openapi` source description: its API name and converted tools.
    pub apis: Vec<(String, ToolSet)>,
    /// The merged tool set (one API: its set), for `tools`.
    pub merged: ToolSet,
    pub workflows: Arc<WorkflowTools>,
}

/// Loads the Arazzo document `args.spec` names, converts its `openapi` sources with `args`'
/// conversion options, and checks its workflows (and those of `--arazzo` documents) against
/// them.
pub async fn document(args: &SpecArgs) -> anyhow::Result<Served> {
    let path = PathBuf::from(&args.spec);
    let doc = load_document(&path)?;
    let mut apis: Vec<(String, ToolSet)> = Vec::new();
    let mut sources = Vec::new();
    for s in doc.source_descriptions() {
        if s.kind != SourceKind::Openapi {
            continue;
        }
        let mut source_args = SpecArgs {
            spec: s.location.clone(),
            ..args.clone()
        };
        // --overlay, --overrides and --lock are of the document's one API when it has one.
        if doc.source_descriptions().len() > 1 {
            source_args.overlay.clear();
            source_args.overrides = None;
            source_args.lock = None;
        }
        let opts = crate::commands::pipeline_options(
            &source_args,
            source_args.tool_options()?,
            LockMode::Read,
        );
        let conversion = crate::commands::load_and_convert(&opts)
            .await
            .map_err(|e| e.context(format!("{}: source description `{}`", doc.name(), s.name)))?;
        let name = openapi_mcp_toolset::naming::snake(&s.name);
        multi::check_name(&name).map_err(|m| {
            user_error(anyhow::anyhow!(
                "{}: source description `{}`: {m}",
                doc.name(),
                s.name
            ))
        })?;
        sources.push((s.name.clone(), apis.len()));
        apis.push((name, conversion.tools));
    }
    if apis.is_empty() {
        return Err(user_error(anyhow::anyhow!(
            "{}: no `openapi` source description to serve the workflows with",
            doc.name()
        )));
    }
    let merged = if apis.len() == 1 {
        apis[0].1.clone()
    } else {
        let parts: Vec<_> = apis
            .iter()
            .map(|(n, set)| ApiInfo::split(n, set.clone()))
            .collect();
        multi::merge(parts)
            .map_err(|e| user_error(anyhow::Error::new(e)))?
            .0
    };
    let mut docs = vec![checked(doc, &merged, sources.clone())];
    for extra in &args.arazzo {
        let d = load_document(extra)?;
        docs.push(checked(d, &merged, sources.clone()));
    }
    let workflows = Arc::new(WorkflowTools::new(&merged, &docs, args.workflows_only));
    Ok(Served {
        apis,
        merged,
        workflows,
    })
}

/// `proxy FILE.arazzo.yaml`: the document's workflows with its sources' operations (one API
/// per source when there are several).
pub async fn proxy_document(
    args: crate::args::ProxyArgs,
) -> anyhow::Result<std::process::ExitCode> {
    use openapi_mcp_runtime::serve::{ApiServing, Serving, StartError, serve, serve_apis};
    if args.watch {
        return Err(user_error(anyhow::anyhow!(
            "--watch does not reload Arazzo documents yet: serve the document without it"
        )));
    }
    let served = document(&args.spec).await?;
    let serving = Serving {
        program: "openapi-mcp".to_string(),
        label: openapi_mcp_runtime::serve::shown_url_text(&args.spec.spec),
        dispatcher: None,
        on_start: None,
        watched: false,
        oauth_proxy: Some(openapi_mcp_oauth_proxy::factory),
        workflows: Some(served.workflows),
    };
    let started = if served.apis.len() == 1 {
        let (_, set) = served.apis.into_iter().next().expect("one API");
        serve(set, &args.serve, serving).await
    } else {
        let apis = served
            .apis
            .into_iter()
            .map(|(name, set)| ApiServing {
                name,
                set,
                options: Default::default(),
            })
            .collect();
        serve_apis(apis, &args.serve, serving).await
    };
    started.map_err(|e| match e {
        StartError::Input(u) => anyhow::Error::new(u),
        other => anyhow::Error::new(other),
    })?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// `tools` of an Arazzo document (or of SPEC with `--arazzo`): the operation tools (unless
/// `--workflows-only`), then one per usable workflow; `--json` prints them as served.
pub async fn list_tools(args: &crate::args::ToolsArgs) -> anyhow::Result<std::process::ExitCode> {
    use anyhow::Context;
    let (set, workflows) = if is_document(&args.spec.spec) {
        let served = document(&args.spec).await?;
        (served.merged, served.workflows)
    } else {
        let opts = crate::commands::pipeline_options(
            &args.spec,
            args.spec.tool_options()?,
            LockMode::Read,
        );
        let conversion = crate::commands::load_and_convert(&opts).await?;
        let w = over_spec(&args.spec, &conversion.tools)?.unwrap_or_default();
        (conversion.tools, w)
    };
    let ops: Vec<_> = if args.spec.workflows_only {
        Vec::new()
    } else {
        set.tools.iter().collect()
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        let mut tools: Vec<openapi_mcp_runtime::rmcp::model::Tool> = ops
            .iter()
            .map(|t| openapi_mcp_runtime::server::served_tool(t))
            .collect();
        tools.extend(workflows.tools().cloned());
        serde_json::to_writer_pretty(&mut out, &tools).context("writing JSON")?;
        writeln!(out)?;
    } else {
        let w = ops
            .iter()
            .map(|t| t.name().len())
            .chain(workflows.tools().map(|t| t.name.len()))
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(out, "{:<w$}  {:<8} {:<40} ARGS", "NAME", "KIND", "WHAT")?;
        for t in &ops {
            let what = format!("{} {}", t.route.method.as_str(), t.route.path);
            writeln!(
                out,
                "{:<w$}  {:<8} {what:<40} {}",
                t.name(),
                "op",
                t.route.args.len()
            )?;
        }
        for (t, id) in workflows.entries() {
            let args = t
                .input_schema
                .get("properties")
                .and_then(|p| p.as_object())
                .map_or(0, |p| p.len());
            writeln!(out, "{:<w$}  {:<8} {:<40} {args}", t.name, "workflow", id)?;
        }
        writeln!(
            out,
            "\n{} operation tools, {} workflow tools",
            ops.len(),
            workflows.len()
        )?;
    }
    out.flush().context("writing to stdout")?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// An `apis:` entry converted (#39): its spec (an OpenAPI description, or the one `openapi`
/// source of an Arazzo document as `spec`), and the workflows of that document and of its
/// `arazzo:` documents, checked against the entry's own tools (every `openapi` source of a
/// document is the entry's API).
pub struct Entry {
    /// How its spec is loaded and converted (what `--watch` reloads).
    pub opts: PipelineOptions,
    pub set: ToolSet,
    pub workflows: Vec<Arc<Workflows>>,
}

/// See [`Entry`]. An Arazzo document as `spec` that cannot be loaded, or that has other than one
/// `openapi` source description (an entry is one API), is an error naming `apis[i].spec`. An
/// `arazzo:` document that cannot be loaded is skipped with a warning naming `apis[i].arazzo[j]`:
/// the entry's other workflows, its operations and every other API are still served.
pub async fn entry(api: &ApiConfig) -> anyhow::Result<Entry> {
    let config_err = |key: String, message: String| {
        anyhow::Error::new(ConfigError::Value {
            file: api.file.clone(),
            key,
            message,
        })
    };
    let mut spec = api.spec.clone();
    let mut own = None;
    if is_document(&spec.spec) {
        let key = format!("{}.spec", api.key);
        let doc = load::load_file(Path::new(&spec.spec))
            .map_err(|e| config_err(key.clone(), e.to_string()))?;
        let sources: Vec<_> = doc
            .source_descriptions()
            .iter()
            .filter(|s| s.kind == SourceKind::Openapi)
            .collect();
        let [source] = sources.as_slice() else {
            let names: Vec<&str> = sources.iter().map(|s| s.name.as_str()).collect();
            return Err(config_err(
                key,
                format!(
                    "{} has {} `openapi` source descriptions ({}), and an entry of `apis` is one API: give each source an entry of its own (and the workflows over one source to its entry's `arazzo`), or serve the document alone as `spec` at the top level (one API per source)",
                    doc.name(),
                    sources.len(),
                    names.join(", ")
                ),
            ));
        };
        spec.spec = source.location.clone();
        own = Some(Arc::new(doc));
    }
    let opts = crate::commands::pipeline_options(&spec, spec.tool_options()?, LockMode::Read);
    let set = crate::commands::load_and_convert(&opts).await?.tools;
    let mut workflows: Vec<Arc<Workflows>> =
        own.into_iter().map(|d| checked_over_one(d, &set)).collect();
    for (j, path) in api.spec.arazzo.iter().enumerate() {
        match load::load_file(path) {
            Ok(doc) => workflows.push(checked_over_one(Arc::new(doc), &set)),
            Err(e) => eprintln!(
                "warning: config file {}: key `{}.arazzo[{j}]`: {e}; API `{}` is served without this document's workflows",
                api.file, api.key, api.name
            ),
        }
    }
    Ok(Entry {
        opts,
        set,
        workflows,
    })
}

/// The workflow tools of a server of several APIs: each entry's (`workflows`, in `apis` order)
/// named with its prefix, uniquely beside the merged operation tools `set`; the operation tools
/// of an entry with `workflows-only` are not listed when it has a usable workflow (none: they
/// are, with a warning, as for one API). `None` when no entry has a usable workflow.
pub fn of_apis(
    apis: &[ApiConfig],
    workflows: &[Vec<Arc<Workflows>>],
    set: &ToolSet,
) -> Option<Arc<WorkflowTools>> {
    let mut tools = WorkflowTools::default();
    for (i, (api, docs)) in apis.iter().zip(workflows).enumerate() {
        let before = tools.len();
        tools.add(set, api.spec.prefix.as_deref().unwrap_or(&api.name), docs);
        if api.spec.workflows_only {
            if tools.len() > before {
                tools.only_apis.push(i);
            } else {
                eprintln!(
                    "warning: config file {}: key `{}.workflows-only`: API `{}` has no usable workflow, so its operation tools are listed",
                    api.file, api.key, api.name
                );
            }
        }
    }
    (!tools.is_empty()).then(|| Arc::new(tools))
}
