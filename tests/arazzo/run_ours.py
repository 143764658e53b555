"""Runs the comparison cases with openapi-mcp: `openapi-mcp proxy DOC.arazzo.yaml` over stdio,
each workflow called as a tool by the official Python MCP client (mcp, tests/python's pin),
against the recording upstream.

Usage: python run_ours.py OPENAPI_MCP DOCS_DIR CASES_JSON RECORDER_URL OUT_JSON
Writes, per case: status ("ok" or "failed"), the failed step (from the error text), the
outputs (structuredContent), the requests the recorder logged, the time the call took.
Credentials: a one-source document is one API (OPENAPI_MCP_API_KEY for the shop's `apiKey`
scheme); a two-source document is one API per source (OPENAPI_MCP_SHOP_API_KEY,
OPENAPI_MCP_SHIP_BEARER).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
import urllib.request

from mcp import Client, StdioServerParameters


def call(url: str, method: str = "GET"):
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def env() -> dict:
    return dict(
        os.environ,
        RUST_LOG="warn",
        OPENAPI_MCP_API_KEY="shop-key-123",
        OPENAPI_MCP_SHOP_API_KEY="shop-key-123",
        OPENAPI_MCP_SHIP_BEARER="ship-token-456",
    )


async def main() -> None:
    binary, docs, cases_path, recorder, out = sys.argv[1:6]
    results = []
    for case in json.load(open(cases_path)):
        doc = os.path.join(docs, case["document"])
        params = StdioServerParameters(command=binary, args=["proxy", doc], env=env())
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            tool = snake(case["workflow"])
            if tool not in names:
                raise SystemExit(f"{case['name']}: no tool {tool} in {names}")
            call(recorder + "/__reset", "POST")
            started = time.monotonic()
            r = await client.call_tool(tool, case["inputs"])
            elapsed = time.monotonic() - started
            text = "".join(getattr(c, "text", "") for c in r.content)
            failed_step = None
            if r.is_error:
                m = re.search(r"step `([^`]+)`", text)
                failed_step = m.group(1) if m else None
            results.append({
                "name": case["name"],
                "status": "failed" if r.is_error else "ok",
                "failed_step": failed_step,
                "outputs": None if r.is_error else r.structured_content,
                "error": text if r.is_error else None,
                "requests": call(recorder + "/__log"),
                "seconds": round(elapsed, 1),
            })
    json.dump(results, open(out, "w"), indent=1)


if __name__ == "__main__":
    asyncio.run(main())
