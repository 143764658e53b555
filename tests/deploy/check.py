"""Checks the packaging (Dockerfile, deploy/kubernetes/*.yaml) against the real binary.

kubernetes-validate (run.sh) checks each manifest against the Kubernetes API schemas; this checks
what a schema cannot see:
  - the manifests fit together: the Service selects the Deployment's pods and targets ports the
    container declares; the probes and the HPA name what exists; the volume and envFrom name the
    ConfigMap and the Secret; the pod runs non-root with a read-only root filesystem;
  - the Dockerfile is multi-stage, builds the CLI with --locked and strips it, runs on distroless
    (with CA roots) as a non-root user, and its ENTRYPOINT runs the binary it copies;
  - the container's command line (the Dockerfile's ENTRYPOINT followed by the Deployment's args)
    is run with the debug binary, with the ConfigMap's files in place of /etc/openapi-mcp/, the
    Secret's values as its environment, 127.0.0.1 free ports in place of 0.0.0.0:8080/9090 and a
    recording upstream in place of the --base-url: the probes' paths answer 200 on the probes'
    port without a token and for any Host (the kubelet sends the pod IP), /mcp refuses a request
    without the Secret's bearer token and answers one with it under the Service's host name, a
    tools/call reaches the upstream with the Secret's API key, and the metrics port serves
    /metrics.

Usage: python check.py --bin BIN --root REPO  (needs PyYAML: run.sh's venv has it)
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(f"  {'ok' if cond else 'FAIL'}: {what}", flush=True)
    if not cond:
        failures.append(what)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manifests(root: str) -> dict[str, dict]:
    out = {}
    d = os.path.join(root, "deploy", "kubernetes")
    for name in sorted(os.listdir(d)):
        if name.endswith(".yaml"):
            for doc in yaml.safe_load_all(open(os.path.join(d, name))):
                if doc:
                    out[doc["kind"]] = doc
    return out


def dockerfile(root: str) -> tuple[list[list[str]], list[str], list[str]]:
    """The stages (each a list of instructions, continuation lines joined), ENTRYPOINT and CMD."""
    text = re.sub(r"\\\n", " ", open(os.path.join(root, "Dockerfile")).read())
    stages: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append([])
        stages[-1].append(line)
    final = stages[-1]

    def exec_form(instr: str) -> list[str]:
        found = [l for l in final if l.upper().startswith(instr + " ")]
        return json.loads(found[-1][len(instr) + 1:]) if found else []

    return stages, exec_form("ENTRYPOINT"), exec_form("CMD")


def check_static(root: str, m: dict[str, dict]) -> None:
    stages, entrypoint, cmd = dockerfile(root)
    final = stages[-1]
    check(len(stages) >= 2, f"Dockerfile is multi-stage ({len(stages)} stages)")
    check(any("cargo build --release --locked -p openapi-mcp-cli" in l for l in stages[0]),
          "its build stage builds the CLI in release with --locked")
    users = [l.split()[1] for l in final if l.upper().startswith("USER ")]
    check(bool(users) and users[-1].split(":")[0] not in ("0", "root"),
          f"its final stage runs as a non-root user ({users[-1] if users else 'none'})")
    copied = [l.split()[-1] for l in final if l.upper().startswith("COPY --FROM=")]
    check(bool(entrypoint) and entrypoint[0] in copied,
          f"its ENTRYPOINT runs the binary the final stage copies ({entrypoint[:1]})")
    check(entrypoint[1:] == ["proxy", "--transport", "http", "--listen", "0.0.0.0:8080"],
          f"ENTRYPOINT: proxy --transport http --listen 0.0.0.0:8080 ({entrypoint[1:]})")
    build_env = " ".join(l for l in stages[0] if l.upper().startswith("ENV "))
    check("CARGO_PROFILE_RELEASE_STRIP=symbols" in build_env and "CARGO_PROFILE_RELEASE_DEBUG=false" in build_env,
          "its build stage strips the binary (no line tables, no symbols)")
    base = final[0].split()[1]
    check(base.startswith("gcr.io/distroless/") or base == "scratch",
          f"its final stage is distroless or scratch ({base})")
    check(base != "scratch" or any(l.upper().startswith("COPY") and "ca-certificates" in l for l in final),
          "its final stage has CA roots (every distroless image ships them; scratch copies them)")
    ignored = open(os.path.join(root, ".dockerignore")).read().split()
    check("target" in ignored and ".git" in ignored, ".dockerignore leaves out target and .git")

    dep, svc, hpa = m["Deployment"], m["Service"], m["HorizontalPodAutoscaler"]
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    labels = dep["spec"]["template"]["metadata"]["labels"]
    check(all(labels.get(k) == v for k, v in dep["spec"]["selector"]["matchLabels"].items()),
          "the Deployment's selector matches its pod labels")
    check(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()),
          "the Service selects the Deployment's pods")
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    check(all(p["targetPort"] in ports for p in svc["spec"]["ports"]),
          f"the Service targets ports the container declares ({sorted(ports)})")
    check("sessionAffinity" not in svc["spec"] or svc["spec"]["sessionAffinity"] == "None",
          "the Service has no session affinity")
    check("--stateless" in c["args"], "the replicas run --stateless (no stickiness needed)")
    check(hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
          and hpa["spec"]["scaleTargetRef"]["name"] == dep["metadata"]["name"],
          "the HPA scales the Deployment")
    check("cpu" in c.get("resources", {}).get("requests", {}),
          "the container requests CPU (what the HPA's utilization is of)")
    vols = {v["name"]: v for v in pod["volumes"]}
    check(all(vols[vm["name"]].get("configMap", {}).get("name") == m["ConfigMap"]["metadata"]["name"]
              for vm in c["volumeMounts"]) and c["volumeMounts"][0]["mountPath"] == "/etc/openapi-mcp",
          "the ConfigMap is mounted at /etc/openapi-mcp")
    check([e["secretRef"]["name"] for e in c["envFrom"]] == [m["Secret"]["metadata"]["name"]],
          "the Secret is the container's environment (envFrom)")
    sc, psc = c["securityContext"], pod["securityContext"]
    check(psc.get("runAsNonRoot") is True and psc.get("runAsUser", 0) != 0
          and str(psc.get("runAsUser")) == users[-1].split(":")[0],
          "the pod runs as non-root, the Dockerfile's user")
    check(sc.get("readOnlyRootFilesystem") is True and sc.get("allowPrivilegeEscalation") is False
          and sc.get("capabilities", {}).get("drop") == ["ALL"],
          "read-only root filesystem, no privilege escalation, no capabilities")
    check(m["ConfigMap"]["data"].get("openapi.yaml") == open(os.path.join(root, "specs", "petstore.yaml")).read(),
          "the ConfigMap's openapi.yaml is specs/petstore.yaml, as its comment says")
    check(c["livenessProbe"]["httpGet"]["path"] == "/healthz"
          and c["readinessProbe"]["httpGet"]["path"] == "/readyz",
          "liveness probes /healthz, readiness /readyz")


class Upstream:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict]] = []
        up = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a) -> None:
                pass

            def _any(self) -> None:
                up.requests.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
                body = b"" if self.command == "HEAD" else json.dumps({"id": 7, "name": "rex"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_HEAD = do_POST = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def get(port: int, path: str, host: str | None = None) -> tuple[int, str]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path, headers={"Host": host} if host else {})
    r = c.getresponse()
    body = r.read().decode()
    c.close()
    return r.status, body


def mcp(port: int, host: str, token: str | None, method: str, params: dict) -> tuple[int, dict | str]:
    params = {**params, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "deploy-check", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}}}
    headers = {"Host": host, "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if "name" in params:
        headers["Mcp-Name"] = params["name"]
    if token:
        headers["Authorization"] = f"Bearer {token}"
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}), headers)
    r = c.getresponse()
    body = r.read().decode()
    c.close()
    try:
        return r.status, json.loads(body)
    except ValueError:
        return r.status, body


def check_running(root: str, bin_: str, m: dict[str, dict]) -> None:
    _, entrypoint, _ = dockerfile(root)
    dep = m["Deployment"]
    (c,) = dep["spec"]["template"]["spec"]["containers"]
    work = tempfile.mkdtemp(prefix="openapi-mcp-deploy.")
    proc = None
    try:
        for name, data in m["ConfigMap"]["data"].items():
            with open(os.path.join(work, name), "w") as f:
                f.write(data)
        up = Upstream()
        port, mport = free_port(), free_port()
        argv = [bin_] + entrypoint[1:] + c["args"]
        rewrites = {"0.0.0.0:8080": f"127.0.0.1:{port}", "0.0.0.0:9090": f"127.0.0.1:{mport}"}
        argv = [rewrites.get(a, a) for a in argv]
        argv = [f"--metrics-listen=127.0.0.1:{mport}" if a == "--metrics-listen=0.0.0.0:9090" else a for a in argv]
        argv = [a.replace("/etc/openapi-mcp/", work + "/") for a in argv]
        argv = [f"--base-url=http://127.0.0.1:{up.port}/v1" if a.startswith("--base-url=") else a for a in argv]
        check(any(a == f"127.0.0.1:{port}" for a in argv) and any(f"127.0.0.1:{mport}" in a for a in argv),
              "the container listens on 0.0.0.0:8080 (ENTRYPOINT) and serves metrics on 0.0.0.0:9090")
        secret = m["Secret"]["stringData"]
        env = {"PATH": os.environ.get("PATH", "")}
        env.update(secret)
        env.update({e["name"]: e["value"] for e in c.get("env", [])})
        log = open(os.path.join(work, "proxy.log"), "w")
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        probe_port = {p["name"]: p["containerPort"] for p in c["ports"]}[c["readinessProbe"]["httpGet"]["port"]]
        check(probe_port == 8080, "the probes' port is the ENTRYPOINT's 8080")
        ready, deadline = None, time.time() + 30
        while time.time() < deadline:
            try:
                ready = get(port, c["readinessProbe"]["httpGet"]["path"], host="10.1.2.3:8080")
                if ready[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        check(ready is not None and ready[0] == 200,
              f"readiness {c['readinessProbe']['httpGet']['path']} answers 200 with the pod IP as Host, "
              f"no token ({ready})")
        check(any(r[0] == "HEAD" for r in up.requests), "--ready-check asked the API (HEAD) first")
        live = get(port, c["livenessProbe"]["httpGet"]["path"], host="10.1.2.3:8080")
        check(live[0] == 200, f"liveness {c['livenessProbe']['httpGet']['path']} answers 200 ({live})")
        token = secret.get("OPENAPI_MCP_AUTH_TOKEN", "")
        api_key = secret.get("OPENAPI_MCP_API_KEY", "")
        check(bool(token and api_key), "the Secret holds OPENAPI_MCP_AUTH_TOKEN and OPENAPI_MCP_API_KEY")
        svc_host = f"{m['Service']['metadata']['name']}:{m['Service']['spec']['ports'][0]['port']}"
        status, _ = mcp(port, svc_host, None, "server/discover", {})
        check(status == 401, f"/mcp without the Secret's token: HTTP {status} (401)")
        status, r = mcp(port, svc_host, token, "server/discover", {})
        check(status == 200 and isinstance(r, dict) and "result" in r,
              f"/mcp with the token, Host {svc_host}: HTTP {status}")
        status, r = mcp(port, "openapi-mcp.default.svc.cluster.local:8080", token, "tools/call",
                        {"name": "petstore_show_pet_by_id", "arguments": {"petId": 7}})
        ok = status == 200 and isinstance(r, dict) and not r.get("result", {}).get("isError", True)
        check(ok, f"tools/call through the Service's cluster name: HTTP {status} {str(r)[:200]}")
        gets = [r for r in up.requests if r[0] == "GET"]
        check(len(gets) == 1 and gets[0][1] == "/v1/pets/7"
              and gets[0][2].get("x-api-key") == api_key
              and "authorization" not in gets[0][2],
              "the API got GET /v1/pets/7 with the Secret's API key, and not the client's token")
        status, body = get(mport, "/metrics")
        check(status == 200 and 'outcome="ok"' in body, "the metrics port serves /metrics")
        text = open(os.path.join(work, "proxy.log")).read()
        check(bool(token and api_key) and token not in text and api_key not in text,
              "no credential in the proxy's log")
    finally:
        if proc and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if failures and os.path.exists(os.path.join(work, "proxy.log")):
            print(open(os.path.join(work, "proxy.log")).read()[-3000:], file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    m = manifests(args.root)
    check(sorted(m) == ["ConfigMap", "Deployment", "HorizontalPodAutoscaler", "Secret", "Service"],
          f"deploy/kubernetes holds a ConfigMap, Deployment, HPA, Secret and Service ({sorted(m)})")
    check_static(args.root, m)
    check_running(args.root, args.bin, m)
    if failures:
        print(f"deploy: {len(failures)} checks FAILED", file=sys.stderr)
        return 1
    print("deploy: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
