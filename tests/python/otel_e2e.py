"""OpenTelemetry end to end: the `openapi-mcp` binary exports its spans over OTLP/HTTP to a real
receiver (the OTLP protobuf messages of the `opentelemetry-proto` package, from PyPI), and the
trace runs client -> proxy -> upstream without a break:

- the caller's trace context arrives in `_meta` (a 2025-era client over stdio) or as the HTTP
  `traceparent` header (a 2026-era request over Streamable HTTP);
- the proxy's `tools/call` span is the caller's span's child, in the caller's trace;
- its `validate arguments` and upstream client spans are the call span's children;
- the upstream receives a `traceparent` naming the proxy's client span as parent;
- no span carries an argument value or a credential.

Usage: otel_e2e.py --bin target/debug/openapi-mcp --spec specs/petstore.yaml
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from upstream import RecordingUpstream

API_KEY = "otel-e2e-secret-key"
PET_NAME = "argument-value-that-must-not-leak"
SERVER, CLIENT = 2, 3  # Span.SpanKind values


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)
    print(f"  ok: {what}")


class Receiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1:0 that keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[dict] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                ok = self.path == "/v1/traces" and self.headers.get("Content-Type") == "application/x-protobuf"
                if ok:
                    req = ExportTraceServiceRequest()
                    req.ParseFromString(body)
                    with receiver.lock:
                        for rs in req.resource_spans:
                            service = next(
                                (a.value.string_value for a in rs.resource.attributes if a.key == "service.name"), None
                            )
                            for ss in rs.scope_spans:
                                for s in ss.spans:
                                    receiver.spans.append(
                                        {
                                            "service": service,
                                            "name": s.name,
                                            "kind": s.kind,
                                            "trace": s.trace_id.hex(),
                                            "id": s.span_id.hex(),
                                            "parent": s.parent_span_id.hex(),
                                            "attrs": {a.key: str(a.value).strip() for a in s.attributes},
                                            "raw": str(s),
                                        }
                                    )
                out = ExportTraceServiceResponse().SerializeToString() if ok else b""
                self.send_response(200 if ok else 400)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, trace: str, names: set[str], timeout: float = 20) -> list[dict]:
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                got = [s for s in self.spans if s["trace"] == trace]
            if names <= {s["name"] for s in got}:
                return got
            time.sleep(0.1)
        raise AssertionError(f"spans {names} of trace {trace} not received; got {[s['name'] for s in got]}")


def env(receiver: Receiver) -> dict:
    return dict(
        os.environ,
        OPENAPI_MCP_API_KEY=API_KEY,
        RUST_LOG="warn",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}",
        OTEL_BSP_SCHEDULE_DELAY="100",
    )


def check_trace(receiver: Receiver, upstream: RecordingUpstream, trace: str, caller_span: str, label: str) -> None:
    tool = "tools/call petstore_create_pet"
    spans = receiver.wait_for(trace, {tool, "validate arguments", "POST /pets", "map response"})
    by_name = {s["name"]: s for s in spans}
    call, validate, http = by_name[tool], by_name["validate arguments"], by_name["POST /pets"]
    check(by_name["map response"]["parent"] == call["id"], f"{label}: response mapping is a child of the call span")
    check(call["parent"] == caller_span and call["kind"] == SERVER, f"{label}: tools/call span is the caller's child")
    check(call["service"] == "openapi-mcp", f"{label}: service.name is openapi-mcp")
    check(validate["parent"] == call["id"], f"{label}: validation is a child of the call span")
    check(http["parent"] == call["id"] and http["kind"] == CLIENT, f"{label}: the upstream request is a client child span")
    check("201" in http["attrs"].get("http.response.status_code", ""), f"{label}: the client span has the status")
    sent = [r for r in upstream.take() if r["method"] == "POST"]
    check(len(sent) == 1, f"{label}: one request reached the upstream")
    tp = sent[0]["headers"].get("traceparent", "")
    m = re.fullmatch(r"00-([0-9a-f]{32})-([0-9a-f]{16})-0[0-9a-f]", tp)
    check(m is not None and m.group(1) == trace and m.group(2) == http["id"], f"{label}: upstream traceparent {tp} names the client span")
    raw = " ".join(s["raw"] for s in spans)
    check(PET_NAME not in raw and API_KEY not in raw, f"{label}: no argument value or credential in any span")


def stdio_meta(args, upstream: RecordingUpstream, receiver: Receiver) -> None:
    """2025 era over stdio; the trace context in the call's `_meta`."""
    trace, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    base = f"http://127.0.0.1:{upstream.port}/api"
    proc = subprocess.Popen(
        [args.bin, "proxy", args.spec, "--base-url", base],
        env=env(receiver),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout], daemon=True).start()

    def send(msg: dict) -> None:
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()

    def answer(id_: int) -> dict:
        while True:
            msg = json.loads(lines.get(timeout=30))
            if msg.get("id") == id_:
                return msg

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "otel-e2e", "version": "0"}}})
    answer(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "petstore_create_pet", "arguments": {"name": PET_NAME}, "_meta": {"traceparent": f"00-{trace}-{parent}-01"}}})
    r = answer(2)
    check(r.get("result", {}).get("isError") is False, f"stdio: the call succeeded: {r}")
    proc.stdin.close()  # the client goes away: the proxy flushes its spans and exits
    proc.wait(timeout=20)
    check_trace(receiver, upstream, trace, parent, "stdio + _meta")


def http_header(args, upstream: RecordingUpstream, receiver: Receiver) -> None:
    """2026 era over Streamable HTTP; the trace context in the HTTP `traceparent` header."""
    trace, parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    base = f"http://127.0.0.1:{upstream.port}/api"
    proc = subprocess.Popen(
        [args.bin, "proxy", args.spec, "--base-url", base, "--transport", "http", "--listen", "127.0.0.1:0"],
        env=env(receiver),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = None
        for line in proc.stderr:
            m = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
            if m:
                url = m.group(1)
                break
        check(url is not None, "http: the proxy announced its URL")
        threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
        version = "2026-07-28"
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "petstore_create_pet",
                "arguments": {"name": PET_NAME},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": version,
                    "io.modelcontextprotocol/clientInfo": {"name": "otel-e2e", "version": "0"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
        req = urllib.request.Request(
            url,
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": version,
                "Mcp-Method": "tools/call",
                "Mcp-Name": "petstore_create_pet",
                "traceparent": f"00-{trace}-{parent}-01",
            },
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            text = resp.read().decode()
        check('"isError":false' in text.replace(" ", ""), f"http: the call succeeded: {text[:200]}")
        check_trace(receiver, upstream, trace, parent, "2026 http + traceparent header")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--spec", required=True)
    args = p.parse_args()
    receiver = Receiver()
    upstream = RecordingUpstream(lambda rec: (201, {"id": 7, "name": "x"}) if rec["method"] == "POST" else (200, []))
    stdio_meta(args, upstream, receiver)
    http_header(args, upstream, receiver)
    print("otel e2e: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
