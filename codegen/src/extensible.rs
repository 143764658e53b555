//! A generated crate the owner extends (#42): user-owned files created once and never
//! overwritten, and the report of a regeneration (overrides that no longer match a tool).
//!
//! `openapi-mcp generate --extensible` writes such a crate: the files of [`generate_extensible`]
//! as for any generation, then [`write_user_owned`], then prints [`regeneration_report`].

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use openapi_mcp_toolset::model::ToolSet;

use crate::emit::extend_rs;
use crate::{CodegenError, CodegenOptions, GeneratedCrate, MARKER_FILE, Result, generate};

/// The files generation creates once and then leaves to the owner (never rewritten, never
/// removed as stale).
pub use crate::emit::extend_rs::USER_OWNED;

/// The files of an extensible crate: those generation owns (rewritten by every generation,
/// listed in the marker) and those the owner owns (written only when missing).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtensibleCrate {
    pub generated: GeneratedCrate,
    pub user_owned: BTreeMap<PathBuf, String>,
}

/// [`generate`] with the extension points: `src/main.rs` runs the owner's extensions,
/// `src/lib.rs` declares `pub mod custom;`, and `src/custom.rs` is user-owned (not in the
/// marker, so a regeneration neither rewrites nor removes it).
pub fn generate_extensible(set: &ToolSet, opts: &CodegenOptions) -> Result<ExtensibleCrate> {
    if crate::features(opts.mode, &opts.features)?
        .oauth_proxy
        .is_some()
    {
        return Err(CodegenError::ExtensibleOAuthProxy);
    }
    if !opts.workflows.is_empty() {
        return Err(CodegenError::ExtensibleWorkflows);
    }
    let mut generated = generate(set, opts)?;
    let plan = crate::plan::plan(set, &opts.crate_name);
    generated.files.insert(
        PathBuf::from("src/main.rs"),
        extend_rs::main_rs(&plan, set, opts.mode, opts.default_pins())?,
    );
    generated
        .files
        .insert(PathBuf::from("src/lib.rs"), extend_rs::lib_rs(set)?);
    let mut user_owned = BTreeMap::new();
    user_owned.insert(
        PathBuf::from(extend_rs::USER_OWNED[0]),
        extend_rs::custom_rs(&plan),
    );
    // The marker lists only what generation owns (unchanged: same file names).
    debug_assert!(generated.files.contains_key(Path::new(MARKER_FILE)));
    Ok(ExtensibleCrate {
        generated,
        user_owned,
    })
}

/// Writes each user-owned file that `dir` does not have yet (never one that exists, whatever
/// its content); returns those written.
pub fn write_user_owned(dir: &Path, files: &BTreeMap<PathBuf, String>) -> io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (rel, text) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        // `create_new`: an existing file (or a link to one) is left alone, with no window
        // between a check and the write.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                io::Write::write_all(&mut f, text.as_bytes())?;
                written.push(rel.clone());
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(written)
}

/// What a regeneration of `dir` for `set` should tell the owner: the overrides in its
/// `src/custom.rs` that match no tool any more (none when it has no such file).
pub fn regeneration_report(dir: &Path, set: &ToolSet) -> io::Result<Vec<String>> {
    match std::fs::read_to_string(dir.join(extend_rs::USER_OWNED[0])) {
        Ok(text) => Ok(extend_rs::stale_overrides(&text, set)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuntimeDep;

    fn petstore(drop_delete: bool) -> ToolSet {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let bytes = std::fs::read(root.join("specs/petstore.yaml")).expect("petstore spec");
        let spec =
            openapi_mcp_convert::load::load_single(&bytes, "specs/petstore.yaml").expect("loads");
        let mut set =
            openapi_mcp_convert::convert(&spec, &openapi_mcp_convert::ToolOptions::default()).tools;
        if drop_delete {
            set.tools.retain(|t| t.name() != "petstore_delete_pet");
        }
        set
    }

    fn opts() -> CodegenOptions {
        CodegenOptions {
            crate_name: "petstore-mcp".into(),
            runtime_dep: RuntimeDep::Version("0.1.0".into()),
            ..Default::default()
        }
    }

    /// A temporary directory of this test's own, emptied first.
    fn temp_dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("openapi-mcp-codegen-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    fn write_generated(dir: &Path, k: &GeneratedCrate) {
        for (rel, text) in &k.files {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("dir");
            std::fs::write(p, text).expect("write");
        }
    }

    #[test]
    fn extensible_crate_files() {
        let set = petstore(false);
        let k = generate_extensible(&set, &opts()).expect("generates");
        let plain = generate(&set, &opts()).expect("generates");
        // Only main.rs and lib.rs differ from the plain crate; custom.rs is user-owned, not in
        // the marker.
        for (path, text) in &plain.files {
            let differs = k.generated.files.get(path) != Some(text);
            let expected = path == Path::new("src/main.rs") || path == Path::new("src/lib.rs");
            assert_eq!(differs, expected, "{}", path.display());
        }
        let marker = &k.generated.files[Path::new(MARKER_FILE)];
        assert!(!marker.contains("custom.rs"), "{marker}");
        let lib = &k.generated.files[Path::new("src/lib.rs")];
        assert!(lib.contains("pub mod custom;\npub mod tools;"), "{lib}");
        let main = &k.generated.files[Path::new("src/main.rs")];
        assert!(
            main.contains("generated_main_extended(")
                && main.contains("petstore_mcp::custom::extensions()"),
            "{main}"
        );
        let custom = &k.user_owned[Path::new("src/custom.rs")];
        assert!(
            custom.contains("pub fn extensions() -> Extensions"),
            "{custom}"
        );
        // Every example in it is commented out: nothing to report on a fresh crate.
        assert!(extend_rs::stale_overrides(custom, &set).is_empty());
        for file in [lib, main] {
            syn::parse_file(file).expect("parses");
        }
        syn::parse_file(custom).expect("custom.rs parses");
    }

    /// Regenerating after a spec change rewrites the generated files, keeps the owner's
    /// `src/custom.rs` byte for byte, and reports the override whose tool is gone.
    #[test]
    fn regeneration_keeps_user_owned_files_and_reports_stale_overrides() {
        let dir = temp_dir("regenerate");
        let first = generate_extensible(&petstore(false), &opts()).expect("generates");
        write_generated(&dir, &first.generated);
        let written = write_user_owned(&dir, &first.user_owned).expect("writes");
        assert_eq!(written, vec![PathBuf::from("src/custom.rs")]);
        // The owner's edits: an override of a tool that exists, one of a tool about to go, a
        // custom tool and a hook.
        let owned = r#"use openapi_mcp_runtime::generated::*;
pub fn extensions() -> Extensions {
    Extensions::new()
        .override_tool("petstore_list_pets", |fwd: &Forwarder, route: &Route, args: Args| Box::pin(async move { fwd.call(route, &args).await }))
        .override_tool( "petstore_delete_pet", |fwd: &Forwarder, route: &Route, args: Args| Box::pin(async move { fwd.call(route, &args).await }))
        // .override_tool("commented_out", ...)
        .tool(Tool::new("hello", "hi", Default::default()), |_f: &Forwarder, _a: Args| Box::pin(async { CallToolResult::success(vec![]) }))
        .before(|_c: CallInfo, a: Args| async move { Before::Continue(a) })
}
"#;
        std::fs::write(dir.join("src/custom.rs"), owned).expect("owner edits");
        assert!(
            regeneration_report(&dir, &petstore(false))
                .expect("report")
                .is_empty()
        );

        // The spec loses deletePet; regenerate.
        let set = petstore(true);
        let second = generate_extensible(&set, &opts()).expect("generates");
        write_generated(&dir, &second.generated);
        let written = write_user_owned(&dir, &second.user_owned).expect("writes");
        assert!(written.is_empty(), "custom.rs exists: not written");
        assert_eq!(
            std::fs::read_to_string(dir.join("src/custom.rs")).expect("read"),
            owned
        );
        assert_eq!(
            regeneration_report(&dir, &set).expect("report"),
            vec!["src/custom.rs:5: the override of tool `petstore_delete_pet` matches no operation of the spec (renamed or removed?): it is not used".to_string()]
        );
        // The generated side did change.
        let tools = std::fs::read_to_string(dir.join("src/tools/pets.rs")).expect("read");
        assert!(!tools.contains("petstore_delete_pet"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The extended entry point has no OAuth proxy factory: refused rather than a server that
    /// would turn `--oauth-proxy` down at start-up.
    #[test]
    fn oauth_proxy_feature_is_refused() {
        for asked in ["oauth-proxy", "all"] {
            let o = CodegenOptions {
                features: vec![asked.to_string()],
                ..opts()
            };
            assert!(
                matches!(
                    generate_extensible(&petstore(false), &o),
                    Err(CodegenError::ExtensibleOAuthProxy)
                ),
                "{asked}"
            );
        }
        let o = CodegenOptions {
            features: vec!["http".to_string()],
            ..opts()
        };
        assert!(generate_extensible(&petstore(false), &o).is_ok());
    }

    #[test]
    fn an_existing_user_file_is_never_overwritten() {
        let dir = temp_dir("owned");
        std::fs::create_dir_all(dir.join("src")).expect("dir");
        std::fs::write(dir.join("src/custom.rs"), "// mine\n").expect("write");
        let mut files = BTreeMap::new();
        files.insert(PathBuf::from("src/custom.rs"), "// generated\n".to_string());
        files.insert(PathBuf::from("src/other.rs"), "// generated\n".to_string());
        let written = write_user_owned(&dir, &files).expect("writes");
        assert_eq!(written, vec![PathBuf::from("src/other.rs")]);
        assert_eq!(
            std::fs::read_to_string(dir.join("src/custom.rs")).expect("read"),
            "// mine\n"
        );
        assert!(
            regeneration_report(&temp_dir("none"), &petstore(false))
                .expect("report")
                .is_empty()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
