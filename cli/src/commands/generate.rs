//! `openapi-mcp generate`: write a standalone Rust MCP server crate for the spec.
//!
//! Writing is all-or-nothing for a new directory (files go to a temporary sibling directory that
//! is renamed into place). A directory from a previous generation (it has the marker file) is
//! updated file by file from the same temporary directory: generated files are replaced, files
//! the new generation no longer produces are removed, everything else (`target/`, `Cargo.lock`,
//! `.git`, your own files) is kept.
//!
//! `--extensible` adds the user-owned `src/custom.rs` (created once if missing, never rewritten,
//! never removed as stale: it is not in the marker, and the clean-up skips it even if a marker
//! lists it), and prints the overrides in it that match no tool any more as warnings.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use openapi_mcp_codegen::{
    CodegenError, CodegenOptions, MARKER_FILE, RuntimeDep, USER_OWNED, WorkflowDocument,
    default_crate_name, generate, generate_extensible, marker_files, regeneration_report,
    write_user_owned,
};

use openapi_mcp_convert::pipeline::LockMode;
use openapi_mcp_runtime::serve::ServeArgs;
use openapi_mcp_runtime::serve::exit::UserError;

use crate::args::GenerateArgs;

pub async fn run(args: GenerateArgs) -> anyhow::Result<ExitCode> {
    for warning in generate_crate(args).await? {
        eprintln!("openapi-mcp: warning: {warning}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Generates and writes the crate; returns the warnings for the owner (with `--extensible`,
/// overrides in `src/custom.rs` that match no tool any more, as `PATH:LINE: ...`).
async fn generate_crate(args: GenerateArgs) -> anyhow::Result<Vec<String>> {
    // Checked like `proxy` does (pins only in hybrid mode, valid globs), before any work.
    ServeArgs {
        mode: args.mode,
        pin: args.pin.clone(),
        ..ServeArgs::default()
    }
    .tool_mode()?;
    // An unknown --features name, before any work.
    openapi_mcp_codegen::features(args.mode, &args.features).map_err(UserError::new)?;
    let (set, workflows) = converted_with_workflows(&args).await?;
    if set.tools.is_empty() {
        return Err(UserError::msg(
            "the spec has no operations that convert to tools: nothing to generate",
        )
        .into());
    }
    let crate_name = args
        .name
        .clone()
        .unwrap_or_else(|| default_crate_name(&set.title));
    let runtime_dep = match &args.runtime_dep {
        None => RuntimeDep::default(),
        Some(s) => parse_runtime_dep(s).map_err(super::user_error)?,
    };
    let codegen_opts = CodegenOptions {
        crate_name: crate_name.clone(),
        runtime_dep,
        mode: args.mode,
        pins: args.pin.clone(),
        features: args.features.clone(),
        workflows,
        workflows_only: args.spec.workflows_only,
    };
    let (files, user_owned) = if args.extensible {
        generate_extensible(&set, &codegen_opts).map(|k| (k.generated.files, k.user_owned))
    } else {
        generate(&set, &codegen_opts).map(|k| (k.files, Default::default()))
    }
    .map_err(|e| {
        let bad = matches!(
            e,
            CodegenError::InvalidCrateName { .. }
                | CodegenError::UnknownFeature { .. }
                | CodegenError::ExtensibleOAuthProxy
                | CodegenError::ExtensibleWorkflows
                | CodegenError::WorkflowsOnlyWithout
        );
        if bad {
            anyhow::Error::new(UserError::new(e))
        } else {
            anyhow::Error::new(e)
        }
    })
    .context("generating the crate")?;

    let previous = check_target(&args.out, args.force)?;
    write_crate(&args.out, &files, previous.as_deref())
        .with_context(|| format!("writing {}", args.out.display()))?;
    let mut warnings = Vec::new();
    let mut created = Vec::new();
    if args.extensible {
        // After the generated files: a new directory is renamed into place in one step first.
        created = write_user_owned(&args.out, &user_owned)
            .with_context(|| format!("writing the user-owned files of {}", args.out.display()))?;
        let report = regeneration_report(&args.out, &set)
            .with_context(|| format!("reading {}", args.out.join(USER_OWNED[0]).display()))?;
        // Each entry starts with the file's path relative to the crate (`src/custom.rs:LINE:`).
        warnings.extend(
            report
                .into_iter()
                .map(|w| format!("{}", args.out.join(w).display())),
        );
    } else if previous.is_some() {
        for rel in USER_OWNED {
            if args.out.join(rel).is_file() {
                warnings.push(format!(
                    "{} is kept but not used: the crate was generated without --extensible (its src/lib.rs does not declare it)",
                    args.out.join(rel).display()
                ));
            }
        }
    }
    let created = if created.is_empty() {
        String::new()
    } else {
        format!(
            "; created {} (yours: regeneration never overwrites it)",
            created
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    eprintln!(
        "openapi-mcp: generated {crate_name} ({} tools, {} files) in {}{created}; build it with: cargo build --release --manifest-path {}",
        set.tools.len(),
        files.len(),
        args.out.display(),
        args.out.join("Cargo.toml").display()
    );
    Ok(warnings)
}

/// The spec's tool set and the Arazzo documents the crate embeds (#39), read as `proxy` reads
/// the same arguments: SPEC an Arazzo document (its one `openapi` source converted with the
/// conversion options), or SPEC with `--arazzo FILE`s. The workflows are checked as `proxy`
/// checks them (each broken one reported on stderr and skipped; a load error stops here).
async fn converted_with_workflows(
    args: &GenerateArgs,
) -> anyhow::Result<(openapi_mcp_toolset::model::ToolSet, Vec<WorkflowDocument>)> {
    let (set, paths) = if crate::arazzo::is_document(&args.spec.spec) {
        let served = crate::arazzo::document(&args.spec).await?;
        if served.apis.len() > 1 {
            let names: Vec<&str> = served.apis.iter().map(|(n, _)| n.as_str()).collect();
            return Err(UserError::msg(format!(
                "{}: {} `openapi` source descriptions ({}): a generated crate serves one API; serve this document with `openapi-mcp proxy`",
                args.spec.spec,
                names.len(),
                names.join(", ")
            ))
            .into());
        }
        let mut paths = vec![PathBuf::from(&args.spec.spec)];
        paths.extend(args.spec.arazzo.iter().cloned());
        (served.merged, paths)
    } else {
        let opts = super::pipeline_options(&args.spec, args.spec.tool_options()?, LockMode::Read);
        let set = super::load_and_convert(&opts).await?.tools;
        crate::arazzo::over_spec(&args.spec, &set)?;
        (set, args.spec.arazzo.clone())
    };
    let mut docs: Vec<WorkflowDocument> = Vec::with_capacity(paths.len());
    for path in &paths {
        let text = std::fs::read_to_string(path).map_err(|e| {
            UserError::msg(format!(
                "{}: cannot read as UTF-8 text: {e}",
                path.display()
            ))
        })?;
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "workflows.arazzo.yaml".into());
        // Two documents of one name (from different directories): the later ones numbered.
        let mut unique = file_name.clone();
        let mut n = 2;
        while docs.iter().any(|d| d.file_name == unique) {
            unique = match file_name.split_once('.') {
                Some((stem, ext)) => format!("{stem}-{n}.{ext}"),
                None => format!("{file_name}-{n}"),
            };
            n += 1;
        }
        docs.push(WorkflowDocument {
            file_name: unique,
            text,
        });
    }
    Ok((set, docs))
}

/// `0.1.0`, `^0.1`, `=0.1.2` are versions; anything else is a path (made absolute, since Cargo
/// reads relative paths from the generated crate's directory, not from here).
fn parse_runtime_dep(s: &str) -> anyhow::Result<RuntimeDep> {
    let s = s.trim();
    if s.is_empty() {
        anyhow::bail!("--runtime-dep is empty: pass a version (0.1.0) or a path");
    }
    let looks_like_version = s.starts_with(|c: char| c.is_ascii_digit() || "^~=<>*".contains(c))
        && !s.contains(['/', '\\'])
        && !Path::new(s).exists();
    if looks_like_version {
        return Ok(RuntimeDep::Version(s.to_string()));
    }
    let path = std::path::absolute(s)
        .with_context(|| format!("--runtime-dep: cannot resolve the path {s:?}"))?;
    if !path.join("Cargo.toml").is_file() {
        anyhow::bail!(
            "--runtime-dep: {} has no Cargo.toml (expected the openapi-mcp runtime crate)",
            path.display()
        );
    }
    Ok(RuntimeDep::Path(path.canonicalize().unwrap_or(path)))
}

/// What is in the target directory. `Ok(Some(files))`: a previous generation's files (from its
/// marker). Refuses a non-empty directory without a marker unless `force`.
fn check_target(out: &Path, force: bool) -> anyhow::Result<Option<Vec<PathBuf>>> {
    if !out.exists() {
        return Ok(None);
    }
    if !out.is_dir() {
        return Err(
            UserError::msg(format!("{} exists and is not a directory", out.display())).into(),
        );
    }
    let marker = out.join(MARKER_FILE);
    if marker.is_file() {
        let text = std::fs::read_to_string(&marker)
            .with_context(|| format!("reading {}", marker.display()))?;
        return Ok(Some(marker_files(&text)));
    }
    let non_empty = std::fs::read_dir(out)
        .with_context(|| format!("reading {}", out.display()))?
        .next()
        .is_some();
    if non_empty && !force {
        return Err(UserError::msg(format!(
            "{} is not empty and was not generated by openapi-mcp (no {MARKER_FILE}): choose another -o, or pass --force to write into it",
            out.display()
        ))
        .into());
    }
    Ok(Some(Vec::new()))
}

/// Writes every file into a temporary sibling of `out`, then moves it into place.
fn write_crate(
    out: &Path,
    files: &std::collections::BTreeMap<PathBuf, String>,
    previous: Option<&[PathBuf]>,
) -> anyhow::Result<()> {
    let out = std::path::absolute(out).context("resolving the output directory")?;
    let parent = out.parent().context("the output directory has no parent")?;
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let base = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "crate".into());
    let tmp = parent.join(format!(".{base}.openapi-mcp-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let staged = (|| -> anyhow::Result<()> {
        for (rel, text) in files {
            let path = tmp.join(rel);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    })();
    if let Err(e) = staged {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }

    let result = match previous {
        // New (or empty) directory: one rename.
        None => std::fs::rename(&tmp, &out)
            .with_context(|| format!("moving {} to {}", tmp.display(), out.display())),
        Some(prev) if is_empty_dir(&out) && prev.is_empty() => std::fs::remove_dir(&out)
            .and_then(|()| std::fs::rename(&tmp, &out))
            .with_context(|| format!("moving {} to {}", tmp.display(), out.display())),
        // Regeneration (or --force): replace generated files one by one, drop stale ones.
        Some(prev) => (|| -> anyhow::Result<()> {
            for rel in files.keys() {
                let dest = out.join(rel);
                if let Some(dir) = dest.parent() {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                }
                std::fs::rename(tmp.join(rel), &dest)
                    .with_context(|| format!("replacing {}", dest.display()))?;
            }
            // Never a user-owned file, even if an (edited) marker lists it.
            let user_owned = |p: &Path| USER_OWNED.iter().any(|u| p == Path::new(u));
            for rel in prev
                .iter()
                .filter(|p| !files.contains_key(*p) && !user_owned(p))
            {
                let stale = out.join(rel);
                if stale.is_file() {
                    std::fs::remove_file(&stale)
                        .with_context(|| format!("removing stale {}", stale.display()))?;
                }
            }
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(())
        })(),
    };
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

fn is_empty_dir(p: &Path) -> bool {
    std::fs::read_dir(p)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_dep_versions_and_paths() {
        assert_eq!(
            parse_runtime_dep("0.1.0").unwrap(),
            RuntimeDep::Version("0.1.0".into())
        );
        assert_eq!(
            parse_runtime_dep("^0.1").unwrap(),
            RuntimeDep::Version("^0.1".into())
        );
        let runtime = openapi_mcp_codegen::default_runtime_path();
        match parse_runtime_dep(runtime.to_str().unwrap()).unwrap() {
            RuntimeDep::Path(p) => assert!(p.is_absolute() && p.join("Cargo.toml").is_file()),
            other => panic!("{other:?}"),
        }
        assert!(parse_runtime_dep("./no/such/dir").is_err());
    }

    fn generate_args(argv: &[&str]) -> GenerateArgs {
        use clap::Parser;
        let argv = ["openapi-mcp", "generate"].iter().chain(argv);
        match crate::args::Cli::try_parse_from(argv).unwrap().command {
            crate::args::Command::Generate(a) => a,
            other => panic!("{other:?}"),
        }
    }

    fn generate_with(argv: &[&str]) -> anyhow::Result<Vec<String>> {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
            .block_on(generate_crate(generate_args(argv)))
    }

    /// Every file under `dir`, by relative path.
    fn read_tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
        fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<PathBuf, Vec<u8>>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(root, &p, out);
                } else {
                    let rel = p.strip_prefix(root).unwrap().to_path_buf();
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
        let mut out = std::collections::BTreeMap::new();
        walk(dir, dir, &mut out);
        out
    }

    /// `--extensible`: src/custom.rs is created once, survives a regeneration from a spec that
    /// lost an operation byte for byte (even with a marker that lists it), the override of the
    /// lost operation's tool is reported with file:line; without the flag the crate is the
    /// plain one.
    #[test]
    fn extensible_keeps_custom_rs_and_reports_stale_overrides() {
        let root =
            std::env::temp_dir().join(format!("openapi-mcp-gen-ext-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/petstore.yaml");
        let text = std::fs::read_to_string(&spec).unwrap();
        let (start, end) = (
            text.find("    delete:\n      operationId: deletePet")
                .unwrap(),
            text.find("components:\n").unwrap(),
        );
        let smaller = root.join("petstore-no-delete.yaml");
        std::fs::write(&smaller, format!("{}{}", &text[..start], &text[end..])).unwrap();
        let (spec, smaller) = (spec.to_str().unwrap(), smaller.to_str().unwrap());
        let (plain, ext) = (root.join("plain"), root.join("ext"));
        let (plain_s, ext_s) = (plain.to_str().unwrap(), ext.to_str().unwrap());

        assert!(generate_with(&[spec, "-o", plain_s]).unwrap().is_empty());
        assert!(
            generate_with(&[spec, "-o", ext_s, "--extensible"])
                .unwrap()
                .is_empty()
        );
        let (plain_files, ext_files) = (read_tree(&plain), read_tree(&ext));
        assert!(!plain_files.contains_key(Path::new("src/custom.rs")));
        assert!(ext_files.contains_key(Path::new("src/custom.rs")));
        // Only main.rs and lib.rs differ; custom.rs is added.
        for (path, bytes) in &plain_files {
            let same = ext_files.get(path) == Some(bytes);
            let expected = path != Path::new("src/main.rs") && path != Path::new("src/lib.rs");
            assert_eq!(same, expected, "{}", path.display());
        }
        assert_eq!(ext_files.len(), plain_files.len() + 1);

        // The owner overrides a tool that stays and one about to go.
        let custom = "use openapi_mcp_runtime::generated::*;\n\
pub fn extensions() -> Extensions {\n\
    Extensions::new()\n\
        .override_tool(\"petstore_list_pets\", |fwd: &Forwarder, route: &Route, args: Args| Box::pin(async move { fwd.call(route, &args).await }))\n\
        .override_tool(\"petstore_delete_pet\", |fwd: &Forwarder, route: &Route, args: Args| Box::pin(async move { fwd.call(route, &args).await }))\n\
}\n";
        std::fs::write(ext.join("src/custom.rs"), custom).unwrap();
        // A marker edited to list custom.rs must not get it removed as stale.
        let mut marker = std::fs::read_to_string(ext.join(MARKER_FILE)).unwrap();
        marker.push_str("src/custom.rs\n");
        std::fs::write(ext.join(MARKER_FILE), marker).unwrap();

        let warnings = generate_with(&[smaller, "-o", ext_s, "--extensible"]).unwrap();
        assert_eq!(
            warnings,
            vec![format!(
                "{}: the override of tool `petstore_delete_pet` matches no operation of the spec (renamed or removed?): it is not used",
                ext.join("src/custom.rs:5").display()
            )]
        );
        assert_eq!(
            std::fs::read_to_string(ext.join("src/custom.rs")).unwrap(),
            custom
        );
        let pets = std::fs::read_to_string(ext.join("src/tools/pets.rs")).unwrap();
        assert!(!pets.contains("petstore_delete_pet"), "{pets}");
        assert!(
            !std::fs::read_to_string(ext.join(MARKER_FILE))
                .unwrap()
                .contains("custom.rs")
        );

        // Without the flag: the plain crate's files, custom.rs kept (and said to be unused).
        let warnings = generate_with(&[smaller, "-o", ext_s]).unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("without --extensible"), "{warnings:?}");
        assert_eq!(
            std::fs::read_to_string(ext.join("src/custom.rs")).unwrap(),
            custom
        );
        let plain2 = root.join("plain2");
        generate_with(&[smaller, "-o", plain2.to_str().unwrap()]).unwrap();
        let mut back = read_tree(&ext);
        back.remove(Path::new("src/custom.rs"));
        assert_eq!(back, read_tree(&plain2));

        // Not with the OAuth proxy (the extended entry point has none): a user error.
        let out = root.join("oauth");
        let err = generate_with(&[
            spec,
            "-o",
            out.to_str().unwrap(),
            "--extensible",
            "--features",
            "oauth-proxy",
        ])
        .unwrap_err();
        assert!(err.chain().any(|e| e.is::<UserError>()), "{err:#}");
        assert!(!out.exists());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn writes_new_then_regenerates_keeping_other_files() {
        let root =
            std::env::temp_dir().join(format!("openapi-mcp-gen-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let out = root.join("crate");
        let mut files = std::collections::BTreeMap::new();
        files.insert(PathBuf::from("a.txt"), "a".to_string());
        files.insert(PathBuf::from("src/old.rs"), "old".to_string());
        files.insert(
            PathBuf::from(MARKER_FILE),
            "a.txt\nsrc/old.rs\n".to_string(),
        );
        assert_eq!(check_target(&out, false).unwrap(), None);
        write_crate(&out, &files, None).unwrap();
        std::fs::write(out.join("mine.txt"), "keep").unwrap();

        let prev = check_target(&out, false).unwrap().unwrap();
        assert_eq!(
            prev,
            vec![PathBuf::from("a.txt"), PathBuf::from("src/old.rs")]
        );
        files.remove(Path::new("src/old.rs"));
        files.insert(PathBuf::from("a.txt"), "a2".to_string());
        files.insert(PathBuf::from(MARKER_FILE), "a.txt\n".to_string());
        write_crate(&out, &files, Some(&prev)).unwrap();
        assert_eq!(std::fs::read_to_string(out.join("a.txt")).unwrap(), "a2");
        assert!(!out.join("src/old.rs").exists());
        assert_eq!(
            std::fs::read_to_string(out.join("mine.txt")).unwrap(),
            "keep"
        );

        let other = root.join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("x"), "x").unwrap();
        assert!(check_target(&other, false).is_err());
        assert_eq!(check_target(&other, true).unwrap(), Some(Vec::new()));
        let leftovers: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("tmp"))
            .collect();
        assert!(leftovers.is_empty());
        let _ = std::fs::remove_dir_all(&root);
    }
}
