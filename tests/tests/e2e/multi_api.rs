//! Several APIs in one server (#20): a config file's `apis:` list, the built binary, a
//! recording upstream per API (and a third host), real MCP clients over stdio and HTTP.
//!
//! Both APIs have an apiKey scheme of the same name in the same header; each one's secret comes
//! from its own namespaced variable. The tests check where every secret went: each API's only
//! to its own origin, never to the other API's base URL, to an operation-level server on another
//! host, or across a redirect to the other API.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openapi_mcp_runtime::rmcp::ServiceExt;
use openapi_mcp_runtime::rmcp::model::CallToolRequestParams;
use openapi_mcp_runtime::rmcp::transport::{
    ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess,
};
use openapi_mcp_tests::harness::{Client, Scratch, binary, call, text};
use openapi_mcp_tests::upstream::{Recorded, Reply, Upstream};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const PETS_KEY: &str = "sk-pets-Qm41Xz";
const CRM_KEY: &str = "sk-crm-Vb72Lp";
/// The single-API variable: a server of several APIs never reads it.
const UNSCOPED_KEY: &str = "sk-unscoped-Jt05Rw";
const SECRETS: [&str; 3] = [PETS_KEY, CRM_KEY, UNSCOPED_KEY];

/// An OpenAPI 3.0 spec: `servers`, a global apiKey scheme `api_key` in `X-Api-Key`, and
/// `ops` as (operationId, path, operation-level server).
fn spec(title: &str, server: &str, ops: &[(&str, &str, Option<&str>)]) -> String {
    let mut paths = serde_json::Map::new();
    for (id, path, op_server) in ops {
        let mut op = json!({
            "operationId": id,
            "summary": format!("{id} of {title}"),
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
        });
        if let Some(s) = op_server {
            op["servers"] = json!([{"url": s}]);
        }
        paths.insert(path.to_string(), json!({"get": op}));
    }
    json!({
        "openapi": "3.0.3",
        "info": {"title": title, "version": "1.0.0", "description": format!("The {title} API.")},
        "servers": [{"url": server}],
        "security": [{"api_key": []}],
        "components": {"securitySchemes": {"api_key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}},
        "paths": paths
    })
    .to_string()
}

/// Three hosts: the pets API, the crm API, and a third one an operation of pets is served from.
struct Hosts {
    pets: Upstream,
    crm: Upstream,
    third: Upstream,
}

impl Hosts {
    async fn start() -> Hosts {
        let hosts = Hosts {
            pets: Upstream::start().await,
            crm: Upstream::start().await,
            third: Upstream::start().await,
        };
        // pets' /moved redirects to the crm API.
        let to_crm = hosts.crm.url("/crm/contacts");
        hosts.pets.respond(move |r| {
            if r.path().ends_with("/moved") {
                let mut reply = Reply::empty(302);
                reply.headers.push(("location".into(), to_crm.clone()));
                reply
            } else {
                Reply::json(200, json!({"host": "pets", "target": r.target}))
            }
        });
        hosts
            .crm
            .respond(|r| Reply::json(200, json!({"host": "crm", "target": r.target})));
        hosts
            .third
            .respond(|r| Reply::json(200, json!({"host": "third", "target": r.target})));
        hosts
    }

    /// The two specs and a config listing both APIs (YAML): pets with a `base-url` (its
    /// `report` operation on the third host), crm from its spec's own server (its `ping`
    /// operation on the pets API's origin, its `export` operation on the third host). `extra` goes at the top level.
    fn config(&self, dir: &Scratch, extra: &str) -> String {
        let pets = dir.write_arg(
            "pets.json",
            &spec(
                "Pet Store",
                "http://127.0.0.1:9/unused",
                &[
                    ("listPets", "/pets", None),
                    ("moved", "/moved", None),
                    ("report", "/report", Some(&self.third.url("/elsewhere"))),
                ],
            ),
        );
        let crm = dir.write_arg(
            "crm.json",
            &spec(
                "Acme CRM",
                &self.crm.url("/crm"),
                &[
                    ("listContacts", "/contacts", None),
                    ("ping", "/ping", Some(&self.pets.url("/api"))),
                    ("export", "/export", Some(&self.third.url("/crm-side"))),
                ],
            ),
        );
        dir.write_arg(
            "apis.yaml",
            &format!(
                "{extra}apis:\n  - name: pets\n    spec: {pets}\n    base-url: {base}\n    header: ['X-From: pets-config']\n  - name: crm\n    spec: {crm}\n",
                base = self.pets.url("/api")
            ),
        )
    }

    /// Every request any host received.
    fn all(&self) -> Vec<(&'static str, Recorded)> {
        let tag = |name: &'static str, up: &Upstream| {
            up.requests()
                .into_iter()
                .map(move |r| (name, r))
                .collect::<Vec<_>>()
        };
        let mut out = tag("pets", &self.pets);
        out.extend(tag("crm", &self.crm));
        out.extend(tag("third", &self.third));
        out
    }
}

/// The proxy binary with the config file, each API's variable set (and the single-API one).
fn command(config: &str, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(binary());
    cmd.args(["proxy", "--config", config])
        .args(args)
        .env_remove("RUST_LOG")
        .env("OPENAPI_MCP_PETS_API_KEY", PETS_KEY)
        .env("OPENAPI_MCP_CRM_API_KEY", CRM_KEY)
        .env("OPENAPI_MCP_API_KEY", UNSCOPED_KEY);
    cmd
}

/// The names of the tools the server lists, in order.
async fn tool_names(client: &Client) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// The calls every transport makes, and where their credentials went.
async fn calls_go_to_their_own_api(client: &Client, hosts: &Hosts) {
    let mut names = tool_names(client).await;
    // API by API, each prefixed with its name.
    assert_eq!(
        names,
        [
            "pets_list_pets",
            "pets_moved",
            "pets_report",
            "crm_list_contacts",
            "crm_ping",
            "crm_export"
        ]
    );
    names.clear();

    let r = call(client, "pets_list_pets", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = hosts.pets.last();
    assert_eq!(req.target, "/api/pets");
    assert_eq!(req.header("x-api-key"), Some(PETS_KEY));
    assert_eq!(req.header("x-from"), Some("pets-config"));

    let r = call(client, "crm_list_contacts", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = hosts.crm.last();
    assert_eq!(req.target, "/crm/contacts");
    assert_eq!(req.header("x-api-key"), Some(CRM_KEY));
    // pets' static header is pets'.
    assert_eq!(req.header("x-from"), None);

    // An operation-level server on a third host: no credential.
    let r = call(client, "pets_report", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = hosts.third.last();
    assert_eq!(req.target, "/elsewhere/report");
    assert_eq!(req.header("x-api-key"), None);

    // crm's operation served from the pets API's base URL: not crm's secret (nor pets').
    let before = hosts.pets.requests().len();
    let r = call(client, "crm_ping", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = hosts.pets.last();
    assert_eq!(hosts.pets.requests().len(), before + 1);
    assert_eq!(req.target, "/api/ping");
    assert_eq!(req.header("x-api-key"), None);

    // crm has no base-url, and its spec serves an operation from the third host: a host only the
    // spec names is not crm's origin, so it gets no credential either.
    let r = call(client, "crm_export", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let req = hosts.third.last();
    assert_eq!(req.target, "/crm-side/export");
    assert_eq!(req.header("x-api-key"), None);

    // pets redirects to the crm API: not followed, so crm's host gets nothing from pets.
    let crm_before = hosts.crm.requests().len();
    let r = call(client, "pets_moved", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).contains("redirects are not followed"),
        "{}",
        text(&r)
    );
    assert_eq!(hosts.pets.last().header("x-api-key"), Some(PETS_KEY));
    assert_eq!(hosts.crm.requests().len(), crm_before);

    // Where every secret went, over all requests.
    for (host, req) in hosts.all() {
        let all: String = req
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {}\n", v.to_str().unwrap_or("")))
            .collect::<String>()
            + &req.target
            + &req.body_text();
        assert!(!all.contains(UNSCOPED_KEY), "{host} got the unscoped key");
        if host != "pets" {
            assert!(!all.contains(PETS_KEY), "{host} got pets' key: {req:?}");
        }
        if host != "crm" {
            assert!(!all.contains(CRM_KEY), "{host} got crm's key: {req:?}");
        }
    }
}

#[tokio::test]
async fn stdio_each_api_gets_its_own_credentials_and_only_its_own() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-multi-stdio");
    let config = hosts.config(&dir, "");
    let transport = TokioChildProcess::new(command(&config, &[]).configure(|_| {})).expect("spawn");
    let client = ().serve(transport).await.expect("initialize");
    let info = client.peer_info().expect("server info");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(
        instructions.contains("Tools for 2 APIs")
            && instructions.contains("- pets: Pet Store (version 1.0.0)")
            && instructions.contains("- crm: Acme CRM (version 1.0.0)"),
        "{instructions}"
    );
    calls_go_to_their_own_api(&client, &hosts).await;
    client.cancel().await.unwrap();
}

/// The binary over HTTP, its stderr collected.
struct HttpProxy {
    _child: tokio::process::Child,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl HttpProxy {
    fn start(config: &str, args: &[&str]) -> HttpProxy {
        let mut child = command(config, args)
            .args(["--transport", "http", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the proxy");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let err = child.stderr.take().expect("stderr");
        let log = stderr.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(err).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                log.lock().unwrap().push(line);
            }
        });
        HttpProxy {
            _child: child,
            stderr,
        }
    }

    /// `http://host:port` after `marker` in the first stderr line that has it.
    async fn url_after(&self, marker: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let found = self.stderr.lock().unwrap().iter().find_map(|l| {
                let rest = &l[l.find(marker)? + marker.len()..];
                let end = rest.get(7..)?.find('/').map_or(rest.len(), |i| i + 7);
                Some(rest[..end].to_string())
            });
            if let Some(u) = found {
                return u;
            }
            assert!(
                Instant::now() < deadline,
                "no `{marker}` line; stderr: {:?}",
                self.stderr.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test]
async fn http_calls_metrics_and_audit_carry_the_api() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-multi-http");
    let audit = dir.path_arg("audit.jsonl");
    let config = hosts.config(
        &dir,
        &format!("metrics-listen: 127.0.0.1:0\naudit-log: {audit}\nready-check: true\n"),
    );
    let proxy = HttpProxy::start(&config, &[]);
    let mcp = proxy.url_after("Streamable HTTP at ").await;
    let metrics = proxy.url_after("metrics at ").await;
    // --ready-check: ready once every API's servers answered a HEAD (without credentials).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = reqwest::get(format!("{mcp}/readyz")).await.unwrap();
        if r.status() == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "/readyz stayed {}", r.status());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (host, req) in hosts.all() {
        assert_eq!(req.method, "HEAD", "{host}: {req:?}");
        assert_eq!(req.header("x-api-key"), None, "{host}");
    }
    for up in [&hosts.pets, &hosts.crm, &hosts.third] {
        assert!(!up.requests().is_empty(), "a host was not probed");
        up.clear();
    }
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{mcp}/mcp"
        )))
        .await
        .expect("initialize over HTTP");
    calls_go_to_their_own_api(&client, &hosts).await;
    client.cancel().await.unwrap();

    let scrape = reqwest::get(format!("{metrics}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for series in [
        r#"openapi_mcp_tool_calls_total{api="pets",tool="pets_list_pets",outcome="ok"} 1"#,
        r#"openapi_mcp_tool_calls_total{api="crm",tool="crm_list_contacts",outcome="ok"} 1"#,
        r#"openapi_mcp_tool_calls_total{api="crm",tool="crm_ping",outcome="ok"} 1"#,
        r#"openapi_mcp_tool_calls_total{api="pets",tool="pets_moved",outcome="upstream_3xx"} 1"#,
    ] {
        assert!(scrape.contains(series), "{series} not in\n{scrape}");
    }

    // One audit line per call, each naming its API; no secret in the log.
    let deadline = Instant::now() + Duration::from_secs(10);
    let log = loop {
        let log = std::fs::read_to_string(&audit).unwrap_or_default();
        if log.lines().count() >= 6 || Instant::now() > deadline {
            break log;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let apis: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l["api"].as_str().unwrap(), l["tool"].as_str().unwrap()))
        .collect();
    assert_eq!(
        apis,
        [
            ("pets", "pets_list_pets"),
            ("crm", "crm_list_contacts"),
            ("pets", "pets_report"),
            ("crm", "crm_ping"),
            ("crm", "crm_export"),
            ("pets", "pets_moved"),
        ]
    );
    for s in SECRETS {
        assert!(!log.contains(s), "{s} in the audit log");
    }
    let stderr = proxy.stderr.lock().unwrap().join("\n");
    for s in SECRETS {
        assert!(!stderr.contains(s), "{s} on stderr");
    }
    assert!(
        stderr.contains(&format!(
            "APIs: pets at {}, crm at {}",
            hosts.pets.url("/api"),
            hosts.crm.url("/crm")
        )),
        "{stderr}"
    );
}

#[tokio::test]
async fn dynamic_mode_searches_every_api_and_labels_each_result() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-multi-dynamic");
    let config = hosts.config(&dir, "mode: dynamic\n");
    let transport = TokioChildProcess::new(command(&config, &[]).configure(|_| {})).expect("spawn");
    let client = ().serve(transport).await.expect("initialize");
    let search = |query: &str| {
        CallToolRequestParams::new("search_operations").with_arguments(
            json!({"query": query, "limit": 10})
                .as_object()
                .unwrap()
                .clone(),
        )
    };
    let r = client.call_tool(search("list")).await.unwrap();
    let results = r.structured_content.as_ref().unwrap()["results"]
        .as_array()
        .unwrap()
        .clone();
    let found: Vec<(String, String)> = results
        .iter()
        .map(|h| {
            (
                h["name"].as_str().unwrap().to_string(),
                h["api"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        found.contains(&("pets_list_pets".into(), "pets".into()))
            && found.contains(&("crm_list_contacts".into(), "crm".into())),
        "{found:?}"
    );
    let t = text(&r);
    assert!(t.contains("pets_list_pets (API pets)"), "{t}");
    let d = call(
        &client,
        "describe_operation",
        json!({"name": "crm_list_contacts"}),
    )
    .await;
    assert_eq!(d.structured_content.as_ref().unwrap()["api"], "crm");
    assert!(text(&d).starts_with("API: crm (Acme CRM)"), "{}", text(&d));
    // call_operation goes through the operation's API, with its credential.
    let r = call(
        &client,
        "call_operation",
        json!({"name": "crm_list_contacts", "arguments": {}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(hosts.crm.last().header("x-api-key"), Some(CRM_KEY));
    client.cancel().await.unwrap();
}

/// `--watch` with several APIs: a change to one API's spec file reloads that API's tools; the
/// other API keeps its own, and calls still go to each API's host with its credential.
#[tokio::test]
async fn watch_reloads_the_api_whose_spec_changed() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-multi-watch");
    let config = hosts.config(&dir, "watch: true\n");
    let transport = TokioChildProcess::new(command(&config, &[]).configure(|_| {})).expect("spawn");
    let client = ().serve(transport).await.expect("initialize");
    let names = |tools: Vec<openapi_mcp_runtime::rmcp::model::Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name.to_string()).collect()
    };
    assert_eq!(names(client.list_all_tools().await.unwrap()).len(), 6);
    // crm's spec gains an operation.
    dir.write_arg(
        "crm.json",
        &spec(
            "Acme CRM",
            &hosts.crm.url("/crm"),
            &[
                ("listContacts", "/contacts", None),
                ("ping", "/ping", Some(&hosts.pets.url("/api"))),
                ("export", "/export", Some(&hosts.third.url("/crm-side"))),
                ("listDeals", "/deals", None),
            ],
        ),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let listed = loop {
        let listed = names(client.list_all_tools().await.unwrap());
        if listed.len() == 7 || Instant::now() > deadline {
            break listed;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        listed,
        [
            "pets_list_pets",
            "pets_moved",
            "pets_report",
            "crm_list_contacts",
            "crm_ping",
            "crm_export",
            "crm_list_deals"
        ]
    );
    let r = call(&client, "crm_list_deals", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(hosts.crm.last().target, "/crm/deals");
    assert_eq!(hosts.crm.last().header("x-api-key"), Some(CRM_KEY));
    let r = call(&client, "pets_list_pets", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(hosts.pets.last().header("x-api-key"), Some(PETS_KEY));
    client.cancel().await.unwrap();
}

/// Runs the binary to its end: exit code and stderr.
async fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = tokio::process::Command::new(binary())
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn colliding_names_are_refused_at_start_naming_both_apis() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-multi-collide");
    let config = hosts.config(&dir, "");
    // Both APIs' tools unprefixed: `list_pets` twice once crm serves pets' spec too.
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "crm.json\n",
        "pets.json\n    prefix: pets\n    base-url: http://127.0.0.1:9/\n",
    );
    let bad = dir.write_arg("collide.yaml", &text);
    let (code, _, stderr) = run(&["proxy", "--config", &bad]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("tool `pets_list_pets` is in API `pets` and in API `crm`"),
        "{stderr}"
    ); // A client's header would reach every API: refused.
    let fwd = dir.write_arg(
        "forward.yaml",
        &format!(
            "forward-header: [X-User-Token]\n{}",
            std::fs::read_to_string(&config).unwrap()
        ),
    );
    let (code, _, stderr) = run(&["proxy", "--config", &fwd]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("--forward-header x-user-token") && stderr.contains("every one of them"),
        "{stderr}"
    );
}

#[tokio::test]
async fn toml_parses_the_same_and_print_masks_every_apis_secrets() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-multi-toml");
    let yaml = hosts.config(&dir, "transport: http\n");
    // Literal secrets, to see them masked.
    let yaml_text = std::fs::read_to_string(&yaml).unwrap() + "    auth: [api_key=lit-crm-Pe31]\n";
    let yaml_text = yaml_text.replace(
        "header: ['X-From: pets-config']",
        "header: ['X-From: pets-config', 'Authorization: Bearer lit-pets-Ka88']",
    );
    let yaml = dir.write_arg("lit.yaml", &yaml_text);
    let toml = dir.write_arg(
        "lit.toml",
        &format!(
            "transport = \"http\"\n[[apis]]\nname = \"pets\"\nspec = \"{pets}\"\nbase-url = \"{base}\"\nheader = [\"X-From: pets-config\", \"Authorization: Bearer lit-pets-Ka88\"]\n[[apis]]\nname = \"crm\"\nspec = \"{crm}\"\nauth = [\"api_key=lit-crm-Pe31\"]\n",
            pets = dir.path_arg("pets.json"),
            crm = dir.path_arg("crm.json"),
            base = hosts.pets.url("/api"),
        ),
    );
    let values = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split("  # ").next().unwrap().to_string())
            .collect()
    };
    let (code, from_yaml, stderr) = run(&["config", "--print", "--config", &yaml]).await;
    assert_eq!(code, Some(0), "{stderr}");
    let (code, from_toml, stderr_toml) = run(&["config", "--print", "--config", &toml]).await;
    assert_eq!(code, Some(0), "{stderr_toml}");
    assert_eq!(values(&from_yaml), values(&from_toml));
    for secret in ["lit-crm-Pe31", "lit-pets-Ka88"] {
        assert!(!from_yaml.contains(secret), "{secret} in\n{from_yaml}");
    }
    assert!(from_yaml.contains("- name: crm"), "{from_yaml}");
    assert!(from_yaml.contains("  - api_key=***"), "{from_yaml}");
    assert!(
        from_yaml.contains("  - 'Authorization: ***'"),
        "{from_yaml}"
    );
    // The literal secrets are warned about, with each API's own variable.
    assert!(
        stderr.contains("`apis[1].auth` holds a literal secret")
            && stderr.contains("OPENAPI_MCP_CRM_<SCHEME>"),
        "{stderr}"
    );
}

/// An Arazzo document over one source `source` at `url`, with `workflows` as (workflowId,
/// operationId): one step each, its outputs the upstream's `host` and `target`.
fn arazzo(source: &str, url: &str, workflows: &[(&str, &str)]) -> String {
    let mut text = format!(
        "arazzo: 1.0.1\ninfo: {{title: {source} flows, version: 1.0.0}}\nsourceDescriptions:\n  - name: {source}\n    url: {url}\n    type: openapi\nworkflows:\n"
    );
    for (id, op) in workflows {
        text += &format!(
            "  - workflowId: {id}\n    summary: {id} of {source}\n    steps:\n      - stepId: call\n        operationId: {op}\n        successCriteria:\n          - condition: $statusCode == 200\n        outputs:\n          host: $response.body#/host\n          target: $response.body#/target\n    outputs:\n      host: $steps.call.outputs.host\n      target: $steps.call.outputs.target\n"
        );
    }
    text
}

/// [`Hosts::config`] with workflows: pets' `arazzo:` (a good document with a workflow over
/// crm's operation, and a broken one), crm's `spec` an Arazzo document, `workflows-only`.
fn flows_config(hosts: &Hosts, dir: &Scratch) -> String {
    let config = hosts.config(dir, "");
    let pets_flows = dir.write_arg(
        "pets.arazzo.yaml",
        &arazzo(
            "pets",
            "./pets.json",
            &[("listAll", "listPets"), ("crossed", "listContacts")],
        ),
    );
    let broken = dir.write_arg("broken.arazzo.yaml", "arazzo: 1.0.1\nworkflows: [\n");
    dir.write_arg(
        "crm.arazzo.yaml",
        &arazzo("crm", "./crm.json", &[("contacts", "listContacts")]),
    );
    let flows = std::fs::read_to_string(&config)
        .unwrap()
        .replace(
            "header: ['X-From: pets-config']\n",
            &format!("header: ['X-From: pets-config']\n    arazzo: [{pets_flows}, {broken}]\n"),
        )
        .replace("crm.json\n", "crm.arazzo.yaml\n    workflows-only: true\n");
    dir.write_arg("flows.yaml", &flows)
}

/// #39: each `apis:` entry with its own workflows, through a real MCP client over HTTP. pets
/// takes `arazzo:` documents (one of them broken: only its workflows are lost; one workflow
/// names crm's operation: skipped, a workflow runs over its own API only); crm's `spec` is an
/// Arazzo document (its source is crm's spec) with `workflows-only`. Each workflow tool has
/// its API's prefix and runs with its API's base URL, credentials and headers.
#[tokio::test]
async fn each_api_serves_its_own_workflows_with_its_own_credentials() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-multi-arazzo");
    let config = flows_config(&hosts, &dir);
    let proxy = HttpProxy::start(&config, &[]);
    let mcp = proxy.url_after("Streamable HTTP at ").await;
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{mcp}/mcp"
        )))
        .await
        .expect("initialize over HTTP");
    let names = tool_names(&client).await;
    // pets' operations and workflow, crm's workflow only (workflows-only), each prefixed.
    assert_eq!(
        names,
        [
            "pets_list_pets",
            "pets_moved",
            "pets_report",
            "pets_list_all",
            "crm_contacts"
        ]
    );
    let stderr = proxy.stderr.lock().unwrap().join("\n");
    assert!(
        stderr.contains(&format!("config file {config}: key `apis[0].arazzo[1]`"))
            && stderr.contains("API `pets` is served without this document's workflows"),
        "{stderr}"
    );
    assert!(
        stderr.contains("pets.arazzo.yaml#/workflows/1") && stderr.contains("crossed"),
        "{stderr}"
    );

    // Each workflow through its own API: base URL, credential, static headers.
    for (tool, up, host, target, key, from) in [
        (
            "pets_list_all",
            &hosts.pets,
            "pets",
            "/api/pets",
            PETS_KEY,
            Some("pets-config"),
        ),
        (
            "crm_contacts",
            &hosts.crm,
            "crm",
            "/crm/contacts",
            CRM_KEY,
            None,
        ),
    ] {
        let r = call(&client, tool, json!({})).await;
        assert_eq!(r.is_error, Some(false), "{tool}: {}", text(&r));
        assert_eq!(
            r.structured_content,
            Some(json!({"host": host, "target": target}))
        );
        let req = up.last();
        assert_eq!(req.target, target);
        assert_eq!(req.header("x-api-key"), Some(key));
        assert_eq!(req.header("x-from"), from);
    }

    // crm's operations are not callable by name (its workflow's step still calls them).
    let before = hosts.crm.requests().len();
    let unknown = client
        .call_tool(CallToolRequestParams::new("crm_list_contacts"))
        .await
        .expect_err("crm_list_contacts is not served by name");
    assert!(
        unknown
            .to_string()
            .contains("unknown tool: crm_list_contacts"),
        "{unknown}"
    );
    assert_eq!(hosts.crm.requests().len(), before);
    // pets' operations still are.
    let r = call(&client, "pets_list_pets", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));

    for (host, req) in hosts.all() {
        let all = format!("{:?}{}", req.headers, req.target);
        if host != "pets" {
            assert!(!all.contains(PETS_KEY), "{host} got pets' key: {req:?}");
        }
        if host != "crm" {
            assert!(!all.contains(CRM_KEY), "{host} got crm's key: {req:?}");
        }
    }
    client.cancel().await.unwrap();
}

/// #39: the entries' workflow keys refused at start-up, naming the file and the key.
#[tokio::test]
async fn workflow_keys_errors_name_the_file_and_the_key() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-multi-arazzo-errors");
    let config = hosts.config(&dir, "");
    let good = dir.write_arg(
        "pets.arazzo.yaml",
        &arazzo("pets", "./pets.json", &[("listAll", "listPets")]),
    );
    dir.write_arg(
        "two.arazzo.yaml",
        &(arazzo("pets", "./pets.json", &[("listAll", "listPets")]) + "  # a second source\n")
            .replace(
                "workflows:\n",
                "  - name: crm\n    url: ./crm.json\n    type: openapi\nworkflows:\n",
            ),
    );
    dir.write_arg("bad.arazzo.yaml", "arazzo: 1.0.1\nworkflows: [\n");
    let base = std::fs::read_to_string(&config).unwrap();
    let missing = dir.path_arg("missing.arazzo.yaml");
    let cases: Vec<(String, String)> = vec![
        (
            base.replace(
                "crm.json\n",
                &format!("crm.json\n    arazzo: [{good}, {missing}]\n"),
            ),
            format!("key `apis[1].arazzo[1]`: {missing}: no such file"),
        ),
        (
            base.replace("crm.json\n", "crm.json\n    workflows-only: true\n"),
            "key `apis[1].workflows-only`: API `crm` has no workflows".into(),
        ),
        (
            format!(
                "mode: hybrid\n{}",
                base.replace(
                    "crm.json\n",
                    &format!("crm.json\n    arazzo: [{good}]\n    workflows-only: true\n")
                )
            ),
            "key `apis[1].workflows-only`: cannot hide API `crm`'s operations in mode hybrid"
                .into(),
        ),
        (
            format!("arazzo: [{good}]\n{base}"),
            "key `arazzo`: is set per API when the file lists `apis`".into(),
        ),
        (
            base.replace("crm.json\n", "two.arazzo.yaml\n"),
            "key `apis[1].spec`: ".to_string()
                + &dir.path_arg("two.arazzo.yaml")
                + " has 2 `openapi` source descriptions (pets, crm)",
        ),
        (
            base.replace("crm.json\n", "bad.arazzo.yaml\n"),
            "key `apis[1].spec`: ".to_string() + &dir.path_arg("bad.arazzo.yaml"),
        ),
        (
            base.replace("crm.json\n", "crm.json\n    arazzo: {a: 1}\n"),
            "key `apis[1].arazzo`: expected a string, a number or a list of them, found a map"
                .into(),
        ),
    ];
    for (i, (text, want)) in cases.into_iter().enumerate() {
        let file = dir.write_arg(&format!("bad{i}.yaml"), &text);
        let (code, _, stderr) = run(&["proxy", "--config", &file]).await;
        assert_eq!(code, Some(1), "{text}\n=> {stderr}");
        assert!(
            stderr.contains(&format!("config file {file}")) && stderr.contains(&want),
            "{text}\nwanted {want}\n=> {stderr}"
        );
    }
}

/// #39: `workflows-only` of an entry in `--mode dynamic`: the API's operations are neither
/// found nor run by `call_operation`; its workflow is, with the API's credential; the other
/// API's operations still are.
#[tokio::test]
async fn dynamic_mode_hides_a_workflows_only_apis_operations() {
    let hosts = Hosts::start().await;
    let dir = Scratch::new("e2e-multi-arazzo-dynamic");
    let config = flows_config(&hosts, &dir);
    let transport =
        TokioChildProcess::new(command(&config, &["--mode", "dynamic"]).configure(|c| {
            c.stderr(Stdio::null());
        }))
        .expect("spawn");
    let client = ().serve(transport).await.expect("initialize");
    let r = call(
        &client,
        "call_operation",
        json!({"name": "crm_list_contacts", "arguments": {}}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(hosts.crm.requests().is_empty());
    let r = call(
        &client,
        "call_operation",
        json!({"name": "crm_contacts", "arguments": {}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(hosts.crm.last().header("x-api-key"), Some(CRM_KEY));
    let r = call(
        &client,
        "call_operation",
        json!({"name": "pets_list_pets", "arguments": {}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(hosts.pets.last().header("x-api-key"), Some(PETS_KEY));
    client.cancel().await.unwrap();
}
