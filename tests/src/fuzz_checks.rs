//! Property checks shared by the cargo-fuzz targets (`fuzz/`) and the stable regression tests
//! that replay their corpora: each check takes raw bytes, must never panic, and returns
//! `Err(description)` when an invariant is broken (the fuzz targets turn that into a crash).

pub mod arazzo_expr;
pub mod http_transport;
pub mod oauth_proxy;
pub mod overlay;
pub mod reader;
pub mod select;
pub mod validate_args;

use std::collections::HashSet;

use serde_json::{Map, Value};
use url::Url;

use openapi_mcp_convert::convert::{ToolOptions, convert};
use openapi_mcp_convert::load::load_single;
use openapi_mcp_runtime::forward::{Credentials, ForwardOptions, Forwarder};
use openapi_mcp_toolset::model::ToolDef;

/// Inputs longer than this are ignored (the loaders are linear; longer inputs only slow the fuzzer).
pub const MAX_INPUT: usize = 256 * 1024;

/// A tool name MCP clients accept: `^[a-zA-Z0-9_.-]{1,64}$`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Loads `data` as a JSON or YAML spec and converts it with the default options. Loading may
/// fail (that is an answer); a conversion must yield valid, unique tool names of at most 64
/// characters and input schemas whose root is `{"type": "object", ...}`.
pub fn check_load_convert(data: &[u8]) -> Result<(), String> {
    if data.len() > MAX_INPUT {
        return Ok(());
    }
    let Ok(spec) = load_single(data, "fuzz.yaml") else {
        return Ok(());
    };
    let conversion = convert(&spec, &ToolOptions::default());
    let mut seen = HashSet::new();
    for def in &conversion.tools.tools {
        let name = def.name();
        if !valid_tool_name(name) {
            return Err(format!("invalid tool name {name:?}"));
        }
        if !seen.insert(name.to_string()) {
            return Err(format!("duplicate tool name {name:?}"));
        }
        if def.tool().input_schema.get("type") != Some(&Value::String("object".into())) {
            return Err(format!(
                "tool {name}: inputSchema root is not type object: {}",
                Value::Object((*def.tool().input_schema).clone())
            ));
        }
    }
    if conversion.report.tools != conversion.tools.tools.len() {
        return Err(format!(
            "report says {} tools, the tool set has {}",
            conversion.report.tools,
            conversion.tools.tools.len()
        ));
    }
    Ok(())
}

/// The base URL the request-building check sends to: a non-default port and a base path.
pub const FUZZ_BASE_URL: &str = "https://api.example.test:8443/base/v1";

/// Fixed tool definitions plus a forwarder for [`check_build_request`].
pub struct RequestFixture {
    pub tools: Vec<std::sync::Arc<ToolDef>>,
    forwarder: Forwarder,
    base: Url,
}

impl RequestFixture {
    /// Converts each `(name, bytes)` spec (single-document) and keeps every tool.
    pub fn new(specs: &[(&str, &[u8])]) -> Result<Self, String> {
        let mut tools = Vec::new();
        for (name, bytes) in specs {
            let spec = load_single(bytes, name).map_err(|e| format!("{name}: {e}"))?;
            tools.extend(convert(&spec, &ToolOptions::default()).tools.tools);
        }
        if tools.is_empty() {
            return Err("no tools in the fixture specs".into());
        }
        let base = Url::parse(FUZZ_BASE_URL).map_err(|e| e.to_string())?;
        let opts = ForwardOptions::new(base.clone());
        let forwarder =
            Forwarder::new(opts, Vec::new(), Credentials::default()).map_err(|e| e.to_string())?;
        Ok(Self {
            tools,
            forwarder,
            base,
        })
    }

    /// Splits a fuzz input: the first two bytes pick the tool, the rest is JSON arguments
    /// (anything but an object is wrapped as `{"<first argument>": value}`).
    pub fn decode<'a>(&'a self, data: &[u8]) -> Option<(&'a ToolDef, Map<String, Value>)> {
        if data.len() < 2 || data.len() > MAX_INPUT {
            return None;
        }
        let idx = usize::from(u16::from_le_bytes([data[0], data[1]])) % self.tools.len();
        let def = &self.tools[idx];
        let value: Value = serde_json::from_slice(&data[2..]).ok()?;
        let args = match value {
            Value::Object(m) => m,
            other => {
                let first = def.route.args.first()?;
                let mut m = Map::new();
                m.insert(first.arg.clone(), other);
                m
            }
        };
        Some((def, args))
    }

    /// Encodes a fuzz input for tool `idx` (for seeds).
    pub fn encode(idx: usize, args: &Value) -> Vec<u8> {
        let mut out = (idx as u16).to_le_bytes().to_vec();
        out.extend_from_slice(args.to_string().as_bytes());
        out
    }

    /// The scheme, host, port and path prefix every request for `def` must stay under.
    fn expected_base(&self, def: &ToolDef) -> Result<Url, String> {
        let Some(server) = def.route.server.as_deref() else {
            return Ok(self.base.clone());
        };
        match Url::parse(server) {
            Ok(u) => Ok(u),
            Err(url::ParseError::RelativeUrlWithoutBase) => {
                self.base.join(server).map_err(|e| e.to_string())
            }
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Builds the request for a tool call from fuzzed arguments (validation is skipped on purpose:
/// the builder must be safe on its own). A refusal is fine; a built request must stay under the
/// base URL (scheme, host, port, base path; as many path segments as the template) and carry no
/// header name or value HTTP would reject (no CR/LF).
pub fn check_build_request(fx: &RequestFixture, data: &[u8]) -> Result<(), String> {
    let Some((def, args)) = fx.decode(data) else {
        return Ok(());
    };
    let Ok(req) = fx.forwarder.build_request(&def.route, &args) else {
        return Ok(());
    };
    verify_request(fx, def, &req)
}

fn verify_request(
    fx: &RequestFixture,
    def: &ToolDef,
    req: &openapi_mcp_runtime::forward::BuiltRequest,
) -> Result<(), String> {
    let name = def.name();
    let Ok(base) = fx.expected_base(def) else {
        return Err(format!(
            "{name}: a request was built for an unusable server URL"
        ));
    };
    let url = &req.url;
    let base_path = base.path().trim_end_matches('/');
    if url.scheme() != base.scheme()
        || url.host_str() != base.host_str()
        || url.port_or_known_default() != base.port_or_known_default()
    {
        return Err(format!("{name}: request origin left the base URL: {url}"));
    }
    let rest = if url.path() == base_path {
        ""
    } else if let Some(rest) = url.path().strip_prefix(&format!("{base_path}/")) {
        rest
    } else {
        return Err(format!(
            "{name}: request path {} is not under {base_path}",
            url.path()
        ));
    };
    let template = def.route.path.trim_start_matches('/');
    if rest.split('/').count() != template.split('/').count() {
        return Err(format!(
            "{name}: path {:?} has not the segments of the template {:?}",
            url.path(),
            def.route.path
        ));
    }
    if rest.split('/').any(|s| s == "." || s == "..") {
        return Err(format!("{name}: dot segment in {:?}", url.path()));
    }
    if url.fragment().is_some() {
        return Err(format!("{name}: the request URL has a fragment: {url}"));
    }
    for (k, v) in &req.headers {
        if v.contains(['\r', '\n']) {
            return Err(format!("{name}: header {k:?} value contains CR/LF"));
        }
        if http::HeaderName::from_bytes(k.as_bytes()).is_err() {
            return Err(format!("{name}: invalid header name {k:?}"));
        }
        if http::HeaderValue::from_str(v).is_err() {
            return Err(format!(
                "{name}: header {k:?} value is not a valid header value"
            ));
        }
    }
    if let Some((ct, _)) = &req.body
        && http::HeaderValue::from_str(ct).is_err()
    {
        return Err(format!("{name}: invalid content type {ct:?}"));
    }
    // #36: no empty query value (`name=`, `ids=a&ids=`) where the spec allows none; here every
    // query pair comes from an argument (no credentials, no query in the base URL), unless the
    // path key carries a query of its own.
    let allows_empty = def.route.args.iter().any(|b| {
        matches!(
            b.location,
            openapi_mcp_toolset::model::ArgLocation::Query {
                allow_empty_value: true,
                ..
            }
        )
    });
    if !allows_empty
        && !def.route.path.contains('?')
        && let Some(pair) = url
            .query()
            .and_then(|q| q.split('&').find(|p| p.ends_with('=')))
    {
        return Err(format!(
            "{name}: empty query value `{pair}` where the spec allows none: {url}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root")
            .to_path_buf()
    }

    fn files_in(dir: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        out.retain(|p| p.is_file());
        out.sort();
        out
    }

    /// The fixture the `build_request` fuzz target uses (same files, same order).
    pub(crate) fn request_fixture() -> RequestFixture {
        let names = [
            "petstore.yaml",
            "param-styles.yaml",
            "hostile.yaml",
            "forms.yaml",
            "collisions.yaml",
            "swagger2.yaml",
            "openapi31.yaml",
        ];
        let bytes: Vec<(String, Vec<u8>)> = names
            .iter()
            .map(|n| {
                let p = root().join("specs").join(n);
                (n.to_string(), std::fs::read(&p).expect("fixture spec"))
            })
            .collect();
        let specs: Vec<(&str, &[u8])> = bytes
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        RequestFixture::new(&specs).expect("fixture")
    }

    #[test]
    fn valid_tool_names() {
        assert!(valid_tool_name("pets_list-v1.2"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("a b"));
        assert!(!valid_tool_name(&"a".repeat(65)));
    }

    /// Every seed (the fixture specs) and every saved fuzz input passes `check_load_convert`.
    #[test]
    fn load_convert_corpus_replays() {
        let mut inputs = files_in(&root().join("specs"));
        inputs.extend(files_in(&root().join("fuzz/regressions/load_convert")));
        inputs.extend(files_in(&root().join("fuzz/seeds/load_convert")));
        assert!(inputs.len() >= 10, "seed corpus missing: {inputs:?}");
        for p in inputs {
            let data = std::fs::read(&p).expect("read input");
            if let Err(e) = check_load_convert(&data) {
                panic!("{}: {e}", p.display());
            }
        }
    }

    /// #36: empty items and members of every query parameter of every fixture tool (all styles)
    /// pass the empty-value invariant of [`check_build_request`]; and requests are built for
    /// them (the check is not skipped). `ids=a&ids=` used to be sent.
    #[test]
    fn empty_query_items_and_members_are_never_sent() {
        let fx = request_fixture();
        let mut built = 0;
        for (i, def) in fx.tools.iter().enumerate() {
            for b in &def.route.args {
                if !matches!(
                    b.location,
                    openapi_mcp_toolset::model::ArgLocation::Query { .. }
                ) {
                    continue;
                }
                for v in [
                    serde_json::json!(["a", ""]),
                    serde_json::json!({"k": "v", "e": ""}),
                    serde_json::json!({"k": {"e": ""}, "j": "x"}),
                    serde_json::json!(""),
                ] {
                    let data = RequestFixture::encode(i, &serde_json::json!({ b.arg.clone(): v }));
                    if let Err(e) = check_build_request(&fx, &data) {
                        panic!("{e}");
                    }
                    if let Some((def, args)) = fx.decode(&data)
                        && fx.forwarder.build_request(&def.route, &args).is_ok()
                    {
                        built += 1;
                    }
                }
            }
        }
        assert!(built >= 20, "only {built} requests built");
    }

    /// Every saved `build_request` input (seeds and crash regressions) passes the check, and the
    /// seeds really build requests (so the check is exercised, not skipped).
    #[test]
    fn build_request_corpus_replays() {
        let fx = request_fixture();
        let mut inputs = files_in(&root().join("fuzz/seeds/build_request"));
        let seeds = inputs.len();
        inputs.extend(files_in(&root().join("fuzz/regressions/build_request")));
        assert!(seeds >= 10, "seed corpus missing");
        let mut built = 0;
        for p in inputs {
            let data = std::fs::read(&p).expect("read input");
            if let Err(e) = check_build_request(&fx, &data) {
                panic!("{}: {e}", p.display());
            }
            if let Some((def, args)) = fx.decode(&data)
                && fx.forwarder.build_request(&def.route, &args).is_ok()
            {
                built += 1;
            }
        }
        assert!(
            built * 2 >= seeds,
            "only {built} of {seeds} seeds build a request"
        );
    }

    /// The check catches what it should: requests outside the base URL or with CR/LF headers.
    #[test]
    fn verify_request_rejects_escapes() {
        let fx = request_fixture();
        let def = fx
            .tools
            .iter()
            .find(|t| t.route.path.contains('{') && t.route.server.is_none())
            .expect("a tool with a path parameter")
            .clone();
        let good = openapi_mcp_runtime::forward::BuiltRequest {
            method: http::Method::GET,
            url: Url::parse(&format!(
                "{FUZZ_BASE_URL}{}",
                def.route.path.replace(['{', '}'], "")
            ))
            .expect("url"),
            headers: vec![("X-A".into(), "b".into())],
            body: None,
        };
        verify_request(&fx, &def, &good).expect("a good request passes");
        for bad_url in [
            "https://api.example.test:8443/other/x".to_string(),
            "http://api.example.test:8443/base/v1/x".to_string(),
            "https://evil.test:8443/base/v1/x".to_string(),
            "https://api.example.test/base/v1/x".to_string(),
            format!("{FUZZ_BASE_URL}/a/b/c/d/e/f/g"),
        ] {
            let mut r = good.clone();
            r.url = Url::parse(&bad_url).expect("url");
            assert!(verify_request(&fx, &def, &r).is_err(), "{bad_url}");
        }
        let mut r = good.clone();
        r.headers.push(("X-B".into(), "a\r\nInjected: 1".into()));
        assert!(verify_request(&fx, &def, &r).is_err());
    }

    /// A `..` path argument is refused by the builder, so the check sees no request.
    #[test]
    fn build_request_check_rejects_escape() {
        let fx = request_fixture();
        let idx = fx
            .tools
            .iter()
            .position(|t| t.route.path.contains('{'))
            .expect("a tool with a path parameter");
        // A path segment of `..` is refused by the builder, so the check sees no request.
        let arg = fx.tools[idx]
            .route
            .args
            .iter()
            .find(|b| {
                matches!(
                    b.location,
                    openapi_mcp_toolset::model::ArgLocation::Path { .. }
                )
            })
            .expect("path arg")
            .arg
            .clone();
        let data = RequestFixture::encode(idx, &serde_json::json!({ arg: ".." }));
        let (def, args) = fx.decode(&data).expect("decodes");
        assert!(fx.forwarder.build_request(&def.route, &args).is_err());
        assert!(check_build_request(&fx, &data).is_ok());
    }
}

/// Writes the `build_request` seed corpus (`fuzz/seeds/build_request`):
/// `cargo test -p openapi-mcp-tests --lib fuzz_checks::seeds::write -- --ignored`.
#[cfg(test)]
mod seeds {
    use super::*;
    use serde_json::json;

    fn value_for(schema: Option<&Value>, hostile: bool) -> Value {
        let ty = schema
            .and_then(|s| s.get("type"))
            .map(|t| match t {
                Value::Array(a) => a
                    .iter()
                    .find_map(|x| x.as_str().filter(|s| *s != "null"))
                    .unwrap_or("string")
                    .to_string(),
                other => other.as_str().unwrap_or("string").to_string(),
            })
            .unwrap_or_else(|| "string".into());
        if let Some(e) = schema
            .and_then(|s| s.get("enum"))
            .and_then(|e| e.as_array())
            .and_then(|a| a.first())
            && !hostile
        {
            return e.clone();
        }
        match (ty.as_str(), hostile) {
            ("integer", false) => json!(7),
            ("integer", true) => json!(-9007199254740993i64),
            ("number", false) => json!(1.5),
            ("number", true) => json!(1e300),
            ("boolean", _) => json!(true),
            ("array", false) => json!(["a", "b"]),
            ("array", true) => json!(["../x", "a,b", "c\r\nd"]),
            ("object", false) => json!({"k": "v", "n": 1}),
            ("object", true) => json!({"../k": "a/b", "x": {"y": "?#"}}),
            (_, false) => json!("abc"),
            (_, true) => json!("../a/%2e%2e/?x=1#f\r\nX-Injected: 1"),
        }
    }

    #[test]
    #[ignore = "writes the seed corpus"]
    fn write() {
        let fx = super::tests::request_fixture();
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/build_request");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (i, def) in fx.tools.iter().enumerate() {
            let props = def.tool().input_schema.get("properties");
            for hostile in [false, true] {
                let mut args = Map::new();
                for b in &def.route.args {
                    let schema = props.and_then(|p| p.get(&b.arg));
                    args.insert(b.arg.clone(), value_for(schema, hostile));
                }
                let data = RequestFixture::encode(i, &Value::Object(args));
                let name = format!("{i:03}-{}", if hostile { "hostile" } else { "plain" });
                std::fs::write(dir.join(name), data).expect("write seed");
            }
        }
    }
}
