"""End-to-end check of the `openapi-mcp` binary with the official Python MCP SDK client.

A recording upstream (stdlib HTTP server on 127.0.0.1:0) plays the petstore API. The proxy is
driven over stdio and over Streamable HTTP (stateful and stateless) through `mcp.Client` in both
protocol eras: mode="legacy" (2025-11-25, the initialize handshake) and mode="auto" (the SDK's
default: it probes `server/discover`, which we answer, so the session runs in 2026-07-28), and
once with mode="2026-07-28" (adopted without a probe). `--confirm destructive` is exercised
through the SDK's elicitation callback in both eras. Every check compares what the upstream
received byte for byte, or what the client got back.
Exit status 0 when every check passed; a failed check raises with what was expected.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import threading

from mcp import Client, StdioServerParameters, types
from upstream import RecordingUpstream

API_KEY = "py-e2e-secret-key"


class Upstream(RecordingUpstream):
    """Plays a tiny petstore."""

    def __init__(self) -> None:
        super().__init__(self.respond)

    @staticmethod
    def respond(rec: dict) -> tuple[int, object]:
        method, target = rec["method"], rec["target"]
        if method == "GET" and target.startswith("/api/pets?") or target == "/api/pets":
            if method == "GET":
                return 200, [{"id": 1, "name": "Rex", "tag": "dog"}, {"id": 2, "name": "Tom"}]
        if method == "GET" and target.startswith("/api/pets/search?"):
            return 200, []
        if method == "POST" and target == "/api/pets":
            pet = json.loads(rec["body"])
            return 201, {"id": 7, **pet}
        if method == "GET" and target == "/api/pets/404":
            return 404, {"code": 404, "message": "no such pet"}
        m = re.fullmatch(r"/api/pets/(\d+)", target)
        if m and method == "GET":
            return 200, {"id": int(m.group(1)), "name": "Rex"}
        if m and method == "DELETE":
            return 204, None
        return 500, {"code": 500, "message": f"unexpected {method} {target}"}



def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)
    print(f"  ok: {what}")


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def exercise(client: Client, upstream: Upstream, label: str) -> None:
    print(f"[{label}]")
    tools = (await client.list_tools()).tools
    names = sorted(t.name for t in tools)
    check(
        names
        == sorted(
            [
                "petstore_list_pets",
                "petstore_create_pet",
                "petstore_search_pets_legacy",
                "petstore_show_pet_by_id",
                "petstore_update_pet",
                "petstore_delete_pet",
            ]
        ),
        f"tools/list serves the 6 petstore tools: {names}",
    )
    by_name = {t.name: t for t in tools}
    show = by_name["petstore_show_pet_by_id"]
    check(show.input_schema.get("type") == "object" and "petId" in show.input_schema["properties"], "inputSchema is a flat object with petId")
    check(show.output_schema is not None and show.output_schema.get("type") == "object", "outputSchema present and an object")
    check(show.annotations is not None and show.annotations.read_only_hint is True, "GET tool is readOnlyHint")
    upstream.take()

    # Query parameters: integer and exploded array.
    r = await client.call_tool("petstore_list_pets", {"limit": 5, "tags": ["dog", "cat food"]})
    check(not r.is_error, "list_pets succeeded")
    check(r.structured_content == {"result": [{"id": 1, "name": "Rex", "tag": "dog"}, {"id": 2, "name": "Tom"}]}, "array result wrapped as {result: [...]} in structuredContent")
    (req,) = upstream.take()
    check(req["method"] == "GET" and req["target"] == "/api/pets?limit=5&tags=dog&tags=cat%20food", f"query bytes: {req['target']}")
    check(req["headers"].get("x-api-key") == API_KEY, "API key from OPENAPI_MCP_API_KEY sent in X-API-Key")
    check("application/json" in req["headers"].get("accept", ""), "Accept from the declared responses")

    # Path parameter.
    r = await client.call_tool("petstore_show_pet_by_id", {"petId": 12})
    check(not r.is_error and r.structured_content == {"id": 12, "name": "Rex"}, f"show_pet_by_id structured result: {r.structured_content}")
    (req,) = upstream.take()
    check(req["target"] == "/api/pets/12", f"path bytes: {req['target']}")
    # A query value full of URL syntax stays one value.
    r = await client.call_tool("petstore_search_pets_legacy", {"q": "a&b=c#d/e?f %"})
    check(not r.is_error, f"search succeeded: {text_of(r)!r}")
    (req,) = upstream.take()
    check(req["target"] == "/api/pets/search?q=a%26b%3Dc%23d%2Fe%3Ff%20%25", f"query value percent-encoded: {req['target']}")

    # JSON body from flattened arguments; readOnly id is not an argument.
    r = await client.call_tool("petstore_create_pet", {"name": "Fido", "tag": "dog", "status": "available"})
    check(not r.is_error and r.structured_content == {"id": 7, "name": "Fido", "tag": "dog", "status": "available"}, "create_pet returns the created pet")
    (req,) = upstream.take()
    check(req["method"] == "POST" and req["headers"].get("content-type", "").startswith("application/json"), "POST with Content-Type application/json")
    check(json.loads(req["body"]) == {"name": "Fido", "tag": "dog", "status": "available"}, f"body bytes: {req['body']!r}")

    # Upstream error becomes a tool error with the status and body.
    r = await client.call_tool("petstore_show_pet_by_id", {"petId": 404})
    check(r.is_error and "404" in text_of(r) and "no such pet" in text_of(r) and r.structured_content is None, "HTTP 404 is isError with status and body")
    upstream.take()

    # Empty 204.
    r = await client.call_tool("petstore_delete_pet", {"petId": 3})
    check(not r.is_error and text_of(r) != "", f"204 gives a short text: {text_of(r)!r}")
    (req,) = upstream.take()
    check(req["method"] == "DELETE" and req["target"] == "/api/pets/3", "DELETE sent")

    # Invalid arguments: a tool error naming the fields, nothing sent upstream.
    r = await client.call_tool("petstore_create_pet", {"nmae": "x", "status": "lost"})
    msg = text_of(r)
    check(r.is_error and "nmae" in msg and "name" in msg and "status" in msg, f"validation error lists every problem: {msg!r}")
    check(upstream.take() == [], "nothing sent upstream for invalid arguments")

    # Unknown tool: a protocol error (-32602).
    try:
        await client.call_tool("no_such_tool", {})
    except Exception as e:  # the SDK raises MCPError
        check("no_such_tool" in str(e) or "-32602" in str(e) or "not found" in str(e).lower(), f"unknown tool is a JSON-RPC error: {e}")
    else:
        raise AssertionError("unknown tool did not fail")


# The eras, as `mcp.Client(mode=...)` selects them: "legacy" runs the 2025-11-25 initialize
# handshake; "auto" probes server/discover, which we answer, so it settles on 2026-07-28;
# "2026-07-28" adopts that version without a probe.
MODES = {"legacy": "2025-11-25", "auto": "2026-07-28", "2026-07-28": "2026-07-28"}


def proxy_env() -> dict:
    return dict(os.environ, OPENAPI_MCP_API_KEY=API_KEY, RUST_LOG="warn")


class HttpProxy:
    """`openapi-mcp proxy --transport http` on 127.0.0.1:0; `url` once it serves."""

    def __init__(self, args, base: str, extra: list[str]) -> None:
        cmd = [args.bin, "proxy", args.spec, "--base-url", base, "--transport", "http", "--listen", "127.0.0.1:0", *extra]
        self.proc = subprocess.Popen(cmd, env=proxy_env(), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.url = None
        for line in self.proc.stderr:  # the start-up line names the URL
            m = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
            if m:
                self.url = m.group(1)
                break
        check(self.url is not None, f"HTTP proxy announced its URL: {self.url}")
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def check_era(client: Client, mode: str) -> None:
    check(client.protocol_version == MODES[mode], f"mode={mode!r} negotiated {client.protocol_version}")


async def run_stdio(args, upstream: Upstream, base: str, mode: str) -> None:
    params = StdioServerParameters(command=args.bin, args=["proxy", args.spec, "--base-url", base], env=proxy_env())
    async with Client(params, mode=mode) as client:
        check_era(client, mode)
        await exercise(client, upstream, f"stdio, mode={mode}")


async def run_http(args, upstream: Upstream, base: str, stateless: bool, mode: str) -> None:
    proxy = HttpProxy(args, base, ["--stateless"] if stateless else [])
    try:
        async with Client(proxy.url, mode=mode) as client:
            check_era(client, mode)
            await exercise(client, upstream, "streamable http" + (" stateless" if stateless else "") + f", mode={mode}")
    finally:
        proxy.stop()


async def run_confirm(args, upstream: Upstream, base: str, transport: str, mode: str) -> None:
    """--confirm destructive: a DELETE waits for the user's answer through the client's elicitation
    callback (2025: an elicitation/create request; 2026: an input_required result the SDK fulfils
    with the same callback and retries)."""
    print(f"[confirm, {transport}, mode={mode}]")
    asked: list = []
    answer: list = []

    async def elicit(context, params):
        asked.append(params)
        return answer[0]

    extra = ["--confirm", "destructive"]
    proxy = HttpProxy(args, base, extra) if transport == "http" else None
    server = proxy.url if proxy else StdioServerParameters(command=args.bin, args=["proxy", args.spec, "--base-url", base, *extra], env=proxy_env())
    try:
        async with Client(server, mode=mode, elicitation_callback=elicit) as client:
            check_era(client, mode)
            upstream.take()
            answer[:] = [types.ElicitResult(action="accept", content={"confirm": True})]
            r = await client.call_tool("petstore_delete_pet", {"petId": 3})
            check(not r.is_error and len(asked) == 1, f"accepted: sent after one question: {text_of(r)!r}")
            check("DELETE" in asked[0].message, f"the question names the request: {asked[0].message!r}")
            reqs = upstream.take()
            check(len(reqs) == 1 and reqs[0]["method"] == "DELETE" and reqs[0]["target"] == "/api/pets/3", "DELETE sent once after the yes")
            asked.clear()
            answer[:] = [types.ElicitResult(action="decline")]
            r = await client.call_tool("petstore_delete_pet", {"petId": 4})
            check(r.is_error and len(asked) == 1, f"declined: a tool error: {text_of(r)!r}")
            check(upstream.take() == [], "declined: nothing sent upstream")
        # A client without the elicitation capability cannot be asked: nothing is sent.
        async with Client(server, mode=mode) as client:
            try:
                r = await client.call_tool("petstore_delete_pet", {"petId": 5})
                outcome = f"tool error: {text_of(r)}" if r.is_error else "sent"
            except Exception as e:  # the SDK raises MCPError
                outcome = f"error: {e}"
            want = "tool error" if MODES[mode] == "2025-11-25" else "error"
            check(outcome.startswith(want + ":"), f"no elicitation capability: {outcome[:160]!r}")
            check(upstream.take() == [], "no elicitation capability: nothing sent upstream")
    finally:
        if proxy:
            proxy.stop()


async def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--spec", required=True)
    args = p.parse_args()
    upstream = Upstream()
    base = f"http://127.0.0.1:{upstream.port}/api"
    # Both eras over every transport: 2025-11-25 by initialize, 2026-07-28 by server/discover.
    for mode in ("legacy", "auto"):
        await asyncio.wait_for(run_stdio(args, upstream, base, mode), 120)
        await asyncio.wait_for(run_http(args, upstream, base, stateless=False, mode=mode), 120)
        await asyncio.wait_for(run_http(args, upstream, base, stateless=True, mode=mode), 120)
        for transport in ("stdio", "http"):
            await asyncio.wait_for(run_confirm(args, upstream, base, transport, mode), 120)
    # A client that adopts 2026-07-28 without probing.
    await asyncio.wait_for(run_stdio(args, upstream, base, "2026-07-28"), 120)
    await asyncio.wait_for(run_http(args, upstream, base, stateless=False, mode="2026-07-28"), 120)
    print("python e2e: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
