//! Every real-world spec in ../shared/specs starts the proxy and lists its tools through a client.
//!
//! Pages of 100 tools: the whole Kubernetes list is one 25 MB message, which rmcp's own client
//! never finishes reading (the Python SDK does, in ~10 s); paging is what large specs need anyway.

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_runtime::server::ServerOptions;
use openapi_mcp_tests::harness::{connect_in_process, proxy_server_with, shared_specs};

#[tokio::test]
async fn every_shared_spec_serves_its_tools() {
    let Some(dir) = shared_specs() else {
        eprintln!("SKIPPED: ../shared/specs not found (the real-world corpus test needs it)");
        return;
    };
    let mut specs: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "yaml"))
        .collect();
    specs.push(dir.join("digitalocean-3.0/DigitalOcean-public.v2.yaml"));
    specs.push(dir.join("oai-petstore-separate-2.0/spec/swagger.yaml"));
    specs.sort();
    let mut total = 0;
    for p in specs {
        let started = std::time::Instant::now();
        let server_opts = ServerOptions {
            page_size: Some(100),
            ..ServerOptions::default()
        };
        let server = proxy_server_with(
            &p,
            "http://127.0.0.1:9/",
            ToolOptions::default(),
            &[],
            server_opts,
        )
        .await;
        let expected = server.state().tools().len();
        let client = connect_in_process(server).await;
        let tools = client
            .list_all_tools()
            .await
            .unwrap_or_else(|e| panic!("{}: tools/list failed: {e}", p.display()));
        assert_eq!(tools.len(), expected, "{}", p.display());
        total += tools.len();
        client.cancel().await.unwrap();
        eprintln!(
            "{}: {} tools in {:.2?}",
            p.display(),
            tools.len(),
            started.elapsed()
        );
    }
    eprintln!("corpus: {total} tools served through an rmcp client");
    assert!(total > 6000);
}
