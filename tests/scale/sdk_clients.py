"""Clients of the official Python MCP SDK (`mcp.Client`) for the scale job: N clients of each era
("legacy": 2025-11-25 initialize; "2026-07-28": server/discover, `_meta` on every request)
against one URL (nginx in front of the instances), each calling the GET tool in a loop until the
file STOP exists. Prints one JSON line per call: era, start and end (time.monotonic(), the same
clock as the driver's: CLOCK_MONOTONIC is system-wide), and the error or null.

Usage: python sdk_clients.py URL STOP [--clients-per-era N]   (in a virtualenv with mcp)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

from mcp import Client

TOOL = "petstore_show_pet_by_id"
ERAS = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}


async def client_loop(url: str, stop: str, mode: str, first: int, out: list) -> None:
    pet = first
    while not os.path.exists(stop):
        opened = time.monotonic()
        try:
            async with Client(url, mode=mode, read_timeout_seconds=30) as client:
                if client.protocol_version != ERAS[mode]:
                    out.append([f"sdk-{ERAS[mode]}", time.monotonic(), time.monotonic(),
                                f"negotiated {client.protocol_version}"])
                    return
                while not os.path.exists(stop):
                    pet += 1
                    start = time.monotonic()
                    err = None
                    try:
                        r = await client.call_tool(TOOL, {"petId": pet})
                        got = (r.structured_content or {}).get("id")
                        if r.is_error or got != pet:
                            err = f"tools/call petId={pet}: {r.model_dump_json()[:200]}"
                    except Exception as e:  # the SDK raises on an HTTP error (nginx's 502)
                        err = f"tools/call: {type(e).__name__}: {e}"
                    out.append([f"sdk-{ERAS[mode]}", start, time.monotonic(), err])
                    if err:
                        break  # a new client, as an application would reconnect
        except Exception as e:
            out.append([f"sdk-{ERAS[mode]}", opened, time.monotonic(), f"connect: {type(e).__name__}: {e}"])
            await asyncio.sleep(0.05)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("stop")
    ap.add_argument("--clients-per-era", type=int, default=2)
    args = ap.parse_args()
    out: list = []
    tasks = [client_loop(args.url, args.stop, mode, 1_000_000 * (i + 1) + 1000 * j, out)
             for i, mode in enumerate(ERAS) for j in range(args.clients_per_era)]
    await asyncio.gather(*tasks)
    for rec in out:
        print(json.dumps(rec))


if __name__ == "__main__":
    asyncio.run(main())
