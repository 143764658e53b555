#!/usr/bin/env python3
"""Which operations of real specs become MCP tasks under openapi-mcp's rules (#38), and which look
long-running without the spec saying so.

For each spec, the tools are what `openapi-mcp tools SPEC --json` serves (the exact tools/list
array), each mapped to its operation through the names lockfile (`tools --lock F --update-lock`:
name -> method + path). Each tool's operation is then read in the spec (relative `$ref`s across
files followed, as in the multi-file DigitalOcean spec) and put in one class:

  declared  a `202` response declaring a `Location`, `Operation-Location` or `Azure-AsyncOperation`
            header: a task when the API sends it and a GET tool reads that URL (the pairing of
            `--poll`; the `paired` column says whether some GET tool's path is a child of the
            operation's path or an `operations`/`jobs`/`status` path it could point to)
  202       a `202` without such a header: a task at run time only if the API sends one anyway
            (plain call otherwise; `--task-after` still turns a slow one into a task); `paired`:
            a GET tool reads the resource itself or `{path}/{id}`
  body-link long-running by its shape, not by a header (the server does not follow these): a
            2xx answer whose body names its status by id (an `id`/`uuid` and a `status`, or an
            `action`/`operation`/`job` object, or a `status_url`) and a GET tool at a child path
            `{path}/{id}` or `.../actions/{id}` reads it - GitHub's `merge-async`, DigitalOcean's
            droplet actions. A heuristic: a resource with a lifecycle status (a Stripe charge
            `pending`) looks the same; `why` says what matched, a POST `.../cancel` when there is one
  async-name the path or operationId says async / export / import / long-running, nothing else
            marks it

x-mcp-task (when the spec carries it, or an overlay adds it) is shown in its own column.

Usage: python3 tests/tasks/survey.py [--bin target/debug/openapi-mcp] [--specs ../shared/specs]
                                     [--list N] [--json]
Exits 0 when the specs directory is absent (says SKIPPED).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml  # PyYAML

STATUS_HEADERS = ("location", "operation-location", "azure-asyncoperation")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
ASYNC_WORDS = re.compile(r"(^|[^a-z])(async|asynchronous|export|import|long[-_]?running)([^a-z]|$)", re.I)
WORKING = re.compile(r"\b(running|in progress|not started|pending|queued|accepted|started|creating|updating|deleting|"
                     r"provisioning|waiting|scheduled|processing|submitted|validating|finalizing|enqueued)\b", re.I)
LINK_FIELDS = {"status_url", "statusurl", "monitor_url", "poll_url", "operation_location"}
STATUS_PATHS = re.compile(r"/(operations?|jobs?|tasks?|status|actions?|runs?)(/|$)", re.I)


class Spec:
    """A spec document with `$ref`s resolved on demand, across files relative to the referrer."""

    def __init__(self, root: str) -> None:
        self.files: dict[str, object] = {}
        self.root = os.path.abspath(root)
        self.doc = self.load(self.root)

    def load(self, path: str) -> object:
        if path not in self.files:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            self.files[path] = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
        return self.files[path]

    def deref(self, node: object, base: str, depth: int = 0) -> tuple[object, str]:
        """The node a `$ref` chain ends at, and the file it is in."""
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 32:
            ref = node["$ref"]
            file, _, pointer = ref.partition("#")
            if file:
                base = os.path.normpath(os.path.join(os.path.dirname(base), file))
                node = self.load(base)
            else:
                node = self.load(base)
            for part in [p for p in pointer.split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                node = node.get(part) if isinstance(node, dict) else None
            depth += 1
        return node, base

    def properties(self, schema: object, base: str, depth: int = 0) -> dict[str, tuple[object, str]]:
        """Top-level properties of a schema (allOf merged, one level of oneOf/anyOf)."""
        schema, base = self.deref(schema, base)
        out: dict[str, tuple[object, str]] = {}
        if not isinstance(schema, dict) or depth > 4:
            return out
        for k, v in (schema.get("properties") or {}).items():
            out[k] = (v, base)
        for key in ("allOf", "oneOf", "anyOf"):
            for sub in schema.get(key) or []:
                out.update(self.properties(sub, base, depth + 1))
        return out


def tools_of(bin_: str, spec: str) -> tuple[list[dict], dict[str, tuple[str, str]]]:
    """The served tools (`tools --json`) and name -> (METHOD, path) from the names lockfile."""
    listed = subprocess.run([bin_, "tools", spec, "--json"], capture_output=True, text=True)
    if listed.returncode != 0:
        raise RuntimeError(f"tools --json {spec}: {listed.stderr.strip()[:300]}")
    tools = json.loads(listed.stdout)
    with tempfile.TemporaryDirectory() as d:
        lock = os.path.join(d, "lock.json")
        r = subprocess.run([bin_, "tools", spec, "--lock", lock, "--update-lock"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"tools --lock {spec}: {r.stderr.strip()[:300]}")
        ops = json.load(open(lock))["operations"]
    routes = {o["name"]: (o["method"].upper(), o["path"]) for o in ops.values()}
    return tools, routes


def template_matches(template: str, path: str) -> bool:
    """Whether a concrete-ish `path` (templates allowed) fits `template` segment by segment."""
    t, p = template.strip("/").split("/"), path.strip("/").split("/")
    return len(t) == len(p) and all(a == b or a.startswith("{") for a, b in zip(t, p))


def children_by_id(path: str, gets: list[str]) -> list[str]:
    """GET paths that read one item under `path`: `{path}/{id}`, or `/actions/{id}` for an
    `.../actions` path (DigitalOcean's global action resource)."""
    base = path.rstrip("/")
    out = [g for g in gets if g.startswith(base + "/") and re.fullmatch(r"\{[^/}]+\}", g[len(base) + 1:])]
    if base.endswith("/actions"):
        out += [g for g in gets if re.fullmatch(r"(/v\d+)?/actions/\{[^/}]+\}", g)]
    return out


def job_words(spec: Spec, schema: object, base: str) -> bool:
    """Whether a status property's values (enum, example, description) include a word of a job
    still working (the vocabulary the server maps to `working`)."""
    schema, _ = spec.deref(schema, base)
    if not isinstance(schema, dict):
        return False
    text = " ".join(str(v) for v in (schema.get("enum") or []) + [schema.get("example", ""), schema.get("description", "")])
    return bool(WORKING.search(text.replace("_", " ").replace("-", " ")))


def job_shape(spec: Spec, props: dict[str, tuple[object, str]]) -> str:
    """Where a body names a job (`id+status`, `action.id+status`, `details.uuid+status`); ''
    when it does not. A status of the wrapper object counts for what it wraps (GitHub's
    merge-async: `status` beside `details.uuid`)."""
    def shaped(ps: dict[str, tuple[object, str]]) -> bool:
        names = {k.lower(): k for k in ps}
        return bool({"id", "uuid"} & set(names)) and any(
            n in names and job_words(spec, *ps[names[n]]) for n in ("status", "state", "phase"))
    if shaped(props):
        return "id+status"
    top = {n: p for n, p in props.items() if n.lower() in ("status", "state", "phase")}
    for k, (v, b) in props.items():
        if k.lower() in ("action", "operation", "job", "details", "data"):
            sub = spec.properties(v, b)
            if shaped({**top, **sub}):
                return f"{k}.id|uuid+status"
    return ""


def classify(spec: Spec, method: str, path: str, gets: list[str], posts: list[str]) -> dict:
    item, base = spec.deref((spec.doc.get("paths") or {}).get(path), spec.root)
    op, obase = spec.deref((item or {}).get(method.lower()), base)
    row = {"method": method, "path": path, "class": None, "why": "", "x-mcp-task": None, "paired": None}
    if not isinstance(op, dict):
        row["class"] = "?"
        return row
    row["x-mcp-task"] = op.get("x-mcp-task")
    op_id = str(op.get("operationId") or "")
    responses = op.get("responses") or {}
    # GET tools that could read a status URL the API sends: the resource itself or one item
    # under it (the runtime pairs the URL it gets with any GET tool's path template).
    children = children_by_id(path, gets) + ([path] if path in gets and method != "GET" else [])
    if "202" in responses:
        resp, rbase = spec.deref(responses["202"], obase)
        headers = {k.lower(): v for k, v in ((resp or {}).get("headers") or {}).items()} if isinstance(resp, dict) else {}
        named = [h for h in STATUS_HEADERS if h in headers]
        if named:
            row["class"] = "declared"
            row["why"] = "202 + " + "/".join(named)
            row["paired"] = bool(children) or any(STATUS_PATHS.search(g) for g in gets)
            return row
        row["class"] = "202"
        row["why"] = "202, no status header declared"
        row["paired"] = bool(children)
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        # The shape of a job: a 2xx body naming the job (an id and a status whose values include
        # a "still working" word, at the top or in an action/operation/job/details object, or a
        # status URL) and a GET tool reading `{path}/{id}` (or `/actions/{id}`).
        readers = children_by_id(path, gets)
        for code in ("202", "201", "200"):
            if code not in responses:
                continue
            resp, rbase = spec.deref(responses[code], obase)
            if not isinstance(resp, dict):
                continue
            content = resp.get("content") or {}
            if not content and "schema" in resp:  # Swagger 2.0
                content = {"application/json": {"schema": resp["schema"]}}
            for media in content.values():
                props = spec.properties((media or {}).get("schema"), rbase)
                link = sorted(k for k in props if k.lower() in LINK_FIELDS)
                where = job_shape(spec, props)
                if link or (where and readers):
                    row["class"] = "202+body-link" if row["class"] == "202" else "body-link"
                    row["why"] = f"{code} body: " + (f"{link[0]}" if link else where)
                    if readers:
                        row["why"] += f"; read by GET {readers[0]}"
                        cancel = [g for g in posts if g.startswith(readers[0] + "/") and g.endswith("cancel")]
                        if cancel:
                            row["why"] += f"; cancel POST {cancel[0]}"
                    row["paired"] = bool(readers) or bool(link)
                    return row
    if row["class"] is None and method != "GET" and (ASYNC_WORDS.search(path) or ASYNC_WORDS.search(op_id)):
        row["class"] = "async-name"
        row["why"] = f"name: {op_id or path}"
    return row


def specs_in(d: str) -> list[str]:
    out = []
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if os.path.isfile(p) and name.endswith((".json", ".yaml", ".yml")):
            out.append(p)
        elif os.path.isdir(p):
            roots = [f for f in os.listdir(p) if re.search(r"(public|openapi|swagger|root).*\.(ya?ml|json)$", f, re.I)]
            if roots:
                out.append(os.path.join(p, sorted(roots)[0]))
    return out


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("OPENAPI_MCP_BIN", os.path.join(root, "target/debug/openapi-mcp")))
    ap.add_argument("--specs", default=os.path.join(os.path.dirname(root), "shared", "specs"))
    ap.add_argument("--list", type=int, default=6, help="operations listed per spec and class")
    ap.add_argument("--json", action="store_true", help="every classified operation, as JSON")
    ap.add_argument("spec", nargs="*", help="specs to survey instead of the --specs directory")
    args = ap.parse_args()
    specs = args.spec or (specs_in(args.specs) if os.path.isdir(args.specs) else [])
    if not specs:
        print(f"survey: SKIPPED: no specs ({args.specs} not found)")
        return 0
    classes = ("declared", "202", "202+body-link", "body-link", "async-name")
    table, detail = [], {}
    for s in specs:
        name = os.path.relpath(s, args.specs) if not args.spec else s
        try:
            tools, routes = tools_of(args.bin, s)
        except RuntimeError as e:
            print(f"survey: {name}: {e}", file=sys.stderr)
            continue
        spec = Spec(s)
        gets = sorted({p for (m, p) in routes.values() if m == "GET"})
        posts = sorted({p for (m, p) in routes.values() if m == "POST"})
        rows = []
        for t in tools:
            if t["name"] not in routes:
                continue
            method, path = routes[t["name"]]
            r = classify(spec, method, path, gets, posts)
            r["tool"] = t["name"]
            rows.append(r)
        detail[name] = [r for r in rows if r["class"] in classes or r["x-mcp-task"] is not None]
        counts = {c: sum(1 for r in rows if r["class"] == c) for c in classes}
        paired_202 = sum(1 for r in rows if r["class"] in ("declared", "202", "202+body-link") and r["paired"])
        marked = sum(1 for r in rows if r["x-mcp-task"] is not None)
        table.append((name, len(tools), counts, paired_202, marked))
    if args.json:
        json.dump(detail, sys.stdout, indent=1)
        print()
        return 0
    print("| spec | tools | 202 + status header declared (task) | 202 without header (task only if the API sends one) | of those, a GET tool reads the resource or `{path}/{id}` | 2xx body names its job (body-link, not followed) | async by name only | x-mcp-task |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, n, c, paired, marked in table:
        print(f"| {name} | {n} | {c['declared']} | {c['202'] + c['202+body-link']} | {paired} | {c['body-link'] + c['202+body-link']} | {c['async-name']} | {marked} |")
    if args.list:
        for name, rows in detail.items():
            for cls in classes:
                picked = [r for r in rows if r["class"] == cls][: args.list]
                if picked:
                    more = sum(1 for r in rows if r["class"] == cls) - len(picked)
                    print(f"\n{name} - {cls}:" + (f" (first {len(picked)}, {more} more)" if more > 0 else ""))
                    for r in picked:
                        print(f"  {r['method']:6} {r['path']}  [{r['tool']}] {r['why']}")
            marked = [r for r in rows if r["x-mcp-task"] is not None]
            for r in marked:
                print(f"  x-mcp-task: {r['x-mcp-task']}: {r['method']} {r['path']} [{r['tool']}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
