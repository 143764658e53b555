"""Checks the packages of openapi-mcp built from the already-built binary (issue #40):

  npm     packaging/npm/build.mjs makes `openapi-mcp` (the launcher) and `@openapi-mcp/linux-x64`
          (the binary); both tarballs are installed into a fresh directory with npm, with a PATH
          that has Node and no Rust toolchain, and `npx openapi-mcp tools SPEC` runs; the
          official TypeScript MCP SDK client lists the tools through `npx -y openapi-mcp proxy
          SPEC` over stdio; the main package installed without its optional dependency says
          what is missing.
  PyPI    packaging/pypi/build_wheel.py makes the wheel; its RECORD is checked; it is installed
          with pip into a fresh virtualenv (`openapi-mcp`, `openapi-mcp-cli` and `python -m
          openapi_mcp_cli` run) and run by uv the way `uvx` runs a tool (`uv tool run --from
          WHEEL`, `uvx --from WHEEL openapi-mcp-cli`) with a PATH that has Python and no Rust;
          the official Python MCP SDK client lists the tools through `uvx`.
  MCPB    `openapi-mcp bundle` for the proxy serving specs/petstore.yaml and for the generated
          petstore server (codegen/tests/output/petstore): the official `mcpb validate` and
          `mcpb pack` (npm @anthropic-ai/mcpb), `mcpb unpack` into a fresh directory, then the
          manifest's command is started as Claude Desktop starts it (${__dirname} and the
          user_config value substituted): the Python SDK client lists the tools and a call
          reaches a recording upstream with the API key given as user_config.
  server.json  the bundle's MCP Registry entry, against the rules of the registry's schema
          (see check_server_json; the published schema itself is fetched from a host this
          machine cannot reach, so --server-schema FILE validates against a copy when given).
  binstall  packaging/archive.sh's archive matches cli/Cargo.toml's [package.metadata.binstall]
          templates (file name and the binary's path inside), and its binary runs.
  crates  `cargo package --no-verify` of every library crate and the CLI: no metadata warning,
          each .crate has its sources and the README.

Prints the figures (install and install-to-first-tools/list times, sizes) and a closing
'N passed, N failed' line. Usage: see run.sh.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

from mcp import Client, StdioServerParameters  # noqa: E402
from upstream import RecordingUpstream  # noqa: E402

passed = 0
failures: list[str] = []
figures: list[str] = []


def check(cond: bool, what: str) -> bool:
    global passed
    print(f"  {'ok' if cond else 'FAIL'}: {what}", flush=True)
    if cond:
        passed += 1
    else:
        failures.append(what)
    return cond


def sh(cmd: list[str], *, env: dict | None = None, cwd: str | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, cwd=cwd, timeout=timeout, capture_output=True, text=True)


def tail(p: subprocess.CompletedProcess) -> str:
    return (p.stderr.strip() or p.stdout.strip())[-600:]


def only_path(*dirs: str) -> dict:
    """An environment whose PATH is `dirs` plus /usr/bin:/bin (no ~/.cargo/bin)."""
    path = ":".join(dict.fromkeys([*dirs, "/usr/bin", "/bin"]))
    return {"PATH": path, "LANG": "C.UTF-8"}


def expected_tools(bin_: str, spec: str) -> list[str]:
    p = sh([bin_, "tools", spec, "--json"])
    return [t["name"] for t in json.loads(p.stdout)]


async def list_and_call(params: StdioServerParameters, upstream: RecordingUpstream | None, key: str | None,
                        tool: str | None) -> tuple[list[str], float, dict | None]:
    """Tool names, seconds to the first tools/list answer, and the upstream request a call made."""
    started = time.monotonic()
    async with Client(params) as client:
        names: list[str] = []
        cursor = None
        first = None
        while True:
            page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
            first = first if first is not None else time.monotonic() - started
            names += [t.name for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                break
        seen = None
        if upstream is not None and tool:
            upstream.take()
            result = await client.call_tool(tool, {})
            reqs = upstream.take()
            seen = {"is_error": result.is_error, "requests": reqs}
    return names, first, seen


def check_npm(a, work: str, want: list[str]) -> None:
    print("[npm: packaging/npm/build.mjs, npm install of both tarballs, npx]")
    out = os.path.join(work, "dist", "npm")
    t = time.monotonic()
    p = sh(["node", os.path.join(ROOT, "packaging", "npm", "build.mjs"), "--bin", a.pkg_bin, "--out", out])
    if not check(p.returncode == 0, f"build.mjs packs the packages ({time.monotonic() - t:.1f} s) {tail(p) if p.returncode else ''}"):
        return
    tarballs = p.stdout.split()
    names = sorted(os.path.basename(x) for x in tarballs)
    check(names == [f"openapi-mcp-{a.version}.tgz", f"openapi-mcp-linux-x64-{a.version}.tgz"], f"two tarballs: {names}")
    main_tgz, plat_tgz = tarballs
    with tarfile.open(main_tgz) as tf:
        pkg = json.load(tf.extractfile("package/package.json"))
        check(pkg["bin"] == {"openapi-mcp": "bin/openapi-mcp.js"}
              and pkg["optionalDependencies"].get("@openapi-mcp/linux-x64") == a.version
              and len(pkg["optionalDependencies"]) == 5,
              "openapi-mcp: bin is the launcher; the 5 platform packages are optional dependencies at the same version")
    with tarfile.open(plat_tgz) as tf:
        ppkg = json.load(tf.extractfile("package/package.json"))
        member = tf.getmember("package/bin/openapi-mcp")
        check(ppkg["os"] == ["linux"] and ppkg["cpu"] == ["x64"] and ppkg.get("libc") == ["glibc"]
              and member.mode & 0o111 != 0,
              f"@openapi-mcp/linux-x64: os/cpu/libc linux/x64/glibc, the binary executable ({oct(member.mode)})")
    figures.append(f"npm tarballs: {os.path.getsize(main_tgz)} B launcher, {os.path.getsize(plat_tgz) / 1e6:.1f} MB binary package")

    node_dir = os.path.dirname(shutil.which("node") or "/usr/bin/node")
    env = only_path(node_dir)
    env["HOME"] = os.path.join(work, "npm-home")
    env["npm_config_cache"] = os.path.join(work, "npm-cache")
    env["npm_config_update_notifier"] = "false"
    check(shutil.which("cargo", path=env["PATH"]) is None and shutil.which("rustc", path=env["PATH"]) is None,
          f"the npm checks' PATH has no Rust toolchain ({env['PATH']})")
    app = os.path.join(work, "npm-app")
    os.makedirs(app)
    with open(os.path.join(app, "package.json"), "w") as f:
        json.dump({"name": "npm-app", "private": True}, f)
    t = time.monotonic()
    # --offline: the other platforms' optional packages are not fetched (they are skipped as
    # any optional dependency that cannot be installed); nothing leaves this machine.
    p = sh(["npm", "install", "--offline", "--no-audit", "--no-fund", main_tgz, plat_tgz], env=env, cwd=app)
    npm_install = time.monotonic() - t
    if not check(p.returncode == 0, f"npm install of the two tarballs into a fresh directory ({npm_install:.1f} s) {tail(p) if p.returncode else ''}"):
        return
    p = sh(["npx", "--no-install", "openapi-mcp", "tools", a.spec], env=env, cwd=app)
    check(p.returncode == 0 and all(n in p.stdout for n in want),
          f"npx openapi-mcp tools SPEC lists the {len(want)} tools {tail(p) if p.returncode else ''}")
    p = sh(["npx", "--no-install", "openapi-mcp", "--version"], env=env, cwd=app)
    check(p.returncode == 0 and p.stdout.startswith("openapi-mcp "), f"npx openapi-mcp --version: {p.stdout.strip()!r}")

    # A real client, configured as MCP clients are: "command": "npx", "args": ["-y", "openapi-mcp", ...].
    client_js = os.path.join(a.npm_tools, "list_tools.mjs")
    shutil.copy(os.path.join(HERE, "list_tools.mjs"), client_js)
    p = sh(["node", client_js, "npx", "-y", "openapi-mcp", "proxy", a.spec, "--base-url", "http://127.0.0.1:9"], env=env, cwd=app)
    got = json.loads(p.stdout) if p.returncode == 0 else {}
    check(got.get("tools") == want,
          f"TypeScript SDK client: tools/list through `npx -y openapi-mcp proxy SPEC` = `tools --json` ({len(got.get('tools', []))} tools) {tail(p) if p.returncode else ''}")
    if got:
        figures.append(f"npx-style install-to-first-tools/list: {npm_install:.1f} s npm install + {got['first_list_ms'] / 1000:.2f} s npx start to tools/list = {npm_install + got['first_list_ms'] / 1000:.1f} s")

    # Without the platform package (--omit=optional), the launcher says what is missing.
    bare = os.path.join(work, "npm-bare")
    os.makedirs(bare)
    with open(os.path.join(bare, "package.json"), "w") as f:
        json.dump({"name": "npm-bare", "private": True}, f)
    p = sh(["npm", "install", "--offline", "--omit=optional", "--no-audit", "--no-fund", main_tgz], env=env, cwd=bare)
    p = sh(["npx", "--no-install", "openapi-mcp", "tools", a.spec], env=env, cwd=bare)
    check(p.returncode == 1 and "@openapi-mcp/linux-x64 is not installed" in p.stderr,
          f"without the platform package: exit 1 naming it ({p.returncode}, {p.stderr.strip()[:120]!r})")


def record_ok(whl: str) -> bool:
    with zipfile.ZipFile(whl) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        for line in z.read(record).decode().splitlines():
            name, digest, size = line.rsplit(",", 2)
            if name == record:
                continue
            body = z.read(name)
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
            if digest != want or int(size) != len(body):
                return False
    return True


def check_pypi(a, work: str, want: list[str]) -> None:
    print("[PyPI: packaging/pypi/build_wheel.py, pip into a fresh virtualenv, uv tool run (uvx)]")
    t = time.monotonic()
    p = sh([sys.executable, os.path.join(ROOT, "packaging", "pypi", "build_wheel.py"), "--bin", a.pkg_bin, "--out", os.path.join(work, "dist", "pypi")])
    if not check(p.returncode == 0, f"build_wheel.py makes the wheel ({time.monotonic() - t:.1f} s) {tail(p) if p.returncode else ''}"):
        return
    whl = p.stdout.strip()
    check(re.fullmatch(rf"openapi_mcp_cli-{re.escape(a.version)}-py3-none-manylinux_2_\d+_x86_64\.whl", os.path.basename(whl)) is not None,
          f"the wheel's name and platform tag: {os.path.basename(whl)}")
    check(record_ok(whl), "RECORD: every file's sha256 and size")
    with zipfile.ZipFile(whl) as z:
        info = z.getinfo(f"openapi_mcp_cli-{a.version}.data/scripts/openapi-mcp")
        check((info.external_attr >> 16) & 0o111 != 0, "the binary is data/scripts/openapi-mcp, executable")
    figures.append(f"wheel: {os.path.getsize(whl) / 1e6:.1f} MB")

    base_python = os.path.join(sys.base_prefix, "bin", "python3")
    env = only_path(os.path.dirname(base_python))
    env["HOME"] = os.path.join(work, "py-home")
    check(shutil.which("cargo", path=env["PATH"]) is None, f"the PyPI checks' PATH has no Rust toolchain ({env['PATH']})")
    venv = os.path.join(work, "venv")
    t = time.monotonic()
    p = sh([base_python, "-m", "venv", venv], env=env)
    p = sh([os.path.join(venv, "bin", "pip"), "install", "--no-index", "--disable-pip-version-check", "--quiet", whl], env=env)
    pip_install = time.monotonic() - t
    if not check(p.returncode == 0, f"pip install of the wheel into a fresh virtualenv ({pip_install:.1f} s with the venv) {tail(p) if p.returncode else ''}"):
        return
    p = sh([os.path.join(venv, "bin", "openapi-mcp"), "tools", a.spec], env=env)
    check(p.returncode == 0 and all(n in p.stdout for n in want), f"venv/bin/openapi-mcp tools SPEC lists the tools {tail(p) if p.returncode else ''}")
    p = sh([os.path.join(venv, "bin", "openapi-mcp-cli"), "--version"], env=env)
    check(p.returncode == 0 and p.stdout.startswith("openapi-mcp "), f"venv/bin/openapi-mcp-cli --version: {p.stdout.strip()!r} {p.stderr.strip()[-200:]}")
    p = sh([os.path.join(venv, "bin", "python"), "-m", "openapi_mcp_cli", "--version"], env=env)
    check(p.returncode == 0 and p.stdout.startswith("openapi-mcp "), f"python -m openapi_mcp_cli --version: {p.stdout.strip()!r}")

    # uvx: a fresh uv cache and tool directory, offline (the wheel has no dependencies).
    uv_env = {**env, "UV_CACHE_DIR": os.path.join(work, "uv-cache"), "UV_TOOL_DIR": os.path.join(work, "uv-tools"),
              "UV_PYTHON": base_python, "UV_OFFLINE": "1", "UV_NO_PROGRESS": "1"}
    p = sh([a.uvx, "--from", whl, "openapi-mcp", "tools", a.spec], env=uv_env)
    check(p.returncode == 0 and all(n in p.stdout for n in want), f"uvx --from WHEEL openapi-mcp tools SPEC {tail(p) if p.returncode else ''}")
    p = sh([a.uvx, "--from", whl, "openapi-mcp-cli", "--version"], env=uv_env)
    check(p.returncode == 0 and p.stdout.startswith("openapi-mcp "), f"uvx --from WHEEL openapi-mcp-cli --version: {p.stdout.strip()!r} {tail(p) if p.returncode else ''}")

    # A real client through uvx, from an empty uv cache: install and start, to tools/list.
    shutil.rmtree(uv_env["UV_CACHE_DIR"], ignore_errors=True)
    params = StdioServerParameters(command=a.uvx, args=["--from", whl, "openapi-mcp", "proxy", a.spec, "--base-url", "http://127.0.0.1:9"], env=uv_env)
    try:
        names, first, _ = asyncio.run(list_and_call(params, None, None, None))
    except Exception as e:  # noqa: BLE001
        names, first = [], 0.0
        print(f"    {e!r}")
    check(names == want, f"Python SDK client: tools/list through `uvx --from WHEEL openapi-mcp proxy SPEC` = `tools --json` ({len(names)} tools)")
    if names:
        figures.append(f"uvx-style install-to-first-tools/list (empty uv cache, the wheel installed by uvx): {first:.1f} s; pip install into a new venv: {pip_install:.1f} s")


def check_server_json(doc: dict) -> list[str]:
    """The registry schema's rules that apply to what `bundle` writes (server.schema.json,
    ServerDetail / Package / Transport / KeyValueInput / Argument). Returns the violations."""
    bad = []
    if not re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", doc.get("name", "")) or not 3 <= len(doc["name"]) <= 200:
        bad.append(f"name {doc.get('name')!r}")
    if not 1 <= len(doc.get("description", "")) <= 100:
        bad.append("description: 1 to 100 characters")
    v = doc.get("version", "")
    if not v or len(v) > 255 or v == "latest" or re.match(r"[\^~<>=*]", v) or re.search(r"\.(x|\*)(\.|$)", v):
        bad.append(f"version {v!r}: a specific version")
    if not str(doc.get("$schema", "")).startswith("https://static.modelcontextprotocol.io/schemas/"):
        bad.append("$schema")
    allowed_top = {"$schema", "name", "title", "description", "version", "repository", "websiteUrl", "icons", "packages", "remotes", "_meta"}
    bad += [f"unknown property {k}" for k in doc if k not in allowed_top]

    def inputs(items, what: str, key_required: str | None) -> None:
        for i in items:
            if key_required and not isinstance(i.get(key_required), str):
                bad.append(f"{what}: {key_required} missing")
            for k in ("isRequired", "isSecret", "isRepeated"):
                if k in i and not isinstance(i[k], bool):
                    bad.append(f"{what}: {k} not a boolean")
            if "format" in i and i["format"] not in ("string", "number", "boolean", "filepath"):
                bad.append(f"{what}: format {i['format']!r}")
            if what.endswith("argument"):
                if i.get("type") not in ("positional", "named"):
                    bad.append(f"{what}: type {i.get('type')!r}")
                if i.get("type") == "positional" and "value" not in i and "valueHint" not in i:
                    bad.append(f"{what}: a positional argument needs value or valueHint")
                if i.get("type") == "named" and "name" not in i:
                    bad.append(f"{what}: a named argument needs name")

    for p in doc.get("packages", []):
        rt = p.get("registryType")
        if rt not in ("npm", "pypi", "nuget", "oci", "mcpb"):
            bad.append(f"registryType {rt!r}")
        if not p.get("identifier") or not p.get("version") or p.get("version") == "latest":
            bad.append(f"{rt}: identifier and a specific version")
        if rt == "mcpb" and (not re.fullmatch(r"[a-f0-9]{64}", p.get("fileSha256", "")) or not p.get("identifier", "").startswith("https://")):
            bad.append("mcpb: an https identifier and fileSha256")
        if p.get("transport", {}).get("type") not in ("stdio", "streamable-http", "sse"):
            bad.append(f"{rt}: transport")
        inputs(p.get("environmentVariables", []), f"{rt} environment variable", "name")
        inputs(p.get("packageArguments", []), f"{rt} package argument", None)
    for r in doc.get("remotes", []):
        if r.get("type") not in ("streamable-http", "sse") or not str(r.get("url", "")).startswith(("https://", "http://")):
            bad.append(f"remote {r}")
        inputs(r.get("headers", []), "remote header", "name")
    return bad


def check_bundle(a, work: str, want: list[str], kind: str, upstream: RecordingUpstream) -> None:
    print(f"[MCPB: openapi-mcp bundle ({kind}), mcpb validate/pack/unpack, started as Claude Desktop starts it]")
    out = os.path.join(work, f"bundle-{kind}")
    base = f"http://127.0.0.1:{upstream.port}/api"
    extra = ["--binary", a.generated_bin] if kind == "generated" else []
    cmd = [a.bin, "bundle", a.spec, "-o", out, "--registry-name", "io.github.openapi-mcp/petstore",
           "--remote-url", "https://mcp.example.com/mcp", "--remote-bearer", *extra, "--", "--base-url", base]
    p = sh(cmd)
    if not check(p.returncode == 0, f"openapi-mcp bundle {' '.join(extra)} writes the bundle {tail(p) if p.returncode else ''}"):
        return
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    server = manifest["server"]
    uc = manifest.get("user_config", {})
    check(server["type"] == "binary" and server["entry_point"] == f"server/{os.path.basename(a.generated_bin if extra else a.bin)}"
          and os.access(os.path.join(out, server["entry_point"]), os.X_OK),
          f"manifest: server.type binary, entry_point {server['entry_point']} is the executable")
    check(list(uc) == ["api_key"] and uc["api_key"]["sensitive"] is True and uc["api_key"]["type"] == "string"
          and server["mcp_config"]["env"] == {"OPENAPI_MCP_API_KEY": "${user_config.api_key}"},
          "manifest: the api_key scheme's OPENAPI_MCP_API_KEY is a sensitive user_config passed in env")
    want_args = (["proxy", "${__dirname}/spec.yaml"] if kind == "proxy" else []) + ["--base-url", base]
    check(server["mcp_config"]["args"] == want_args, f"manifest args: {server['mcp_config']['args']}")
    check(manifest["compatibility"]["platforms"] == ["linux"], "manifest: compatibility.platforms [linux]")

    p = sh(["node", a.mcpb, "validate", os.path.join(out, "manifest.json")])
    check(p.returncode == 0 and "validation passes" in p.stdout.lower(), f"mcpb validate: {(p.stdout + p.stderr).strip()[-200:]!r}")
    packed = os.path.join(work, f"petstore-{kind}.mcpb")
    t = time.monotonic()
    p = sh(["node", a.mcpb, "pack", out, packed])
    if not check(p.returncode == 0 and os.path.isfile(packed), f"mcpb pack ({time.monotonic() - t:.1f} s) {tail(p) if p.returncode else ''}"):
        return
    figures.append(f"{kind} .mcpb: {os.path.getsize(packed) / 1e6:.1f} MB")
    unpacked = os.path.join(work, f"unpacked-{kind}")
    p = sh(["node", a.mcpb, "unpack", packed, unpacked])
    check(p.returncode == 0 and os.path.isfile(os.path.join(unpacked, "manifest.json")), f"mcpb unpack into a fresh directory {tail(p) if p.returncode else ''}")

    # Started as Claude Desktop starts a binary server: ${__dirname} is the bundle's directory,
    # ${user_config.KEY} what the user typed (here a made-up key).
    def subst(s: str) -> str:
        return s.replace("${__dirname}", unpacked).replace("${user_config.api_key}", "key-from-user-config")

    cfg = json.load(open(os.path.join(unpacked, "manifest.json")))["server"]["mcp_config"]
    command = subst(cfg["command"])
    check(os.access(command, os.X_OK), "the unpacked binary keeps its executable bit")
    env = {**only_path(), **{k: subst(v) for k, v in cfg.get("env", {}).items()}}
    params = StdioServerParameters(command=command, args=[subst(x) for x in cfg.get("args", [])], env=env)
    try:
        names, first, seen = asyncio.run(list_and_call(params, upstream, "key-from-user-config", "petstore_list_pets"))
    except Exception as e:  # noqa: BLE001
        names, first, seen = [], 0.0, None
        print(f"    {e!r}")
    check(names == want, f"the bundle's server: tools/list = `tools --json` ({len(names)} tools, first answer in {first:.2f} s)")
    reqs = (seen or {}).get("requests", [])
    check(bool(seen) and not seen["is_error"] and len(reqs) == 1 and reqs[0]["target"].startswith("/api/pets")
          and reqs[0]["headers"].get("x-api-key") == "key-from-user-config",
          f"a tool call reaches the API with the user_config API key ({[(r['method'], r['target'], r['headers'].get('x-api-key')) for r in reqs]})")

    sj = json.load(open(os.path.join(out, "server.json")))
    bad = check_server_json(sj)
    check(not bad, f"server.json follows the registry schema's rules {bad}")
    kinds = [pk["registryType"] for pk in sj.get("packages", [])]
    check(kinds == (["npm", "pypi"] if kind == "proxy" else []) and sj["remotes"][0]["type"] == "streamable-http"
          and all(e["isSecret"] for pk in sj.get("packages", []) for e in pk["environmentVariables"]),
          f"server.json: packages {kinds}, a streamable-http remote, credentials secret")
    if a.server_schema:
        import jsonschema  # noqa: PLC0415  (only with --server-schema)

        errors = list(jsonschema.Draft7Validator(json.load(open(a.server_schema))).iter_errors(sj))
        check(not errors, f"server.json validates against {a.server_schema} {[e.message for e in errors][:3]}")

    # With the packed bundle's URL and digest: an mcpb package entry.
    sha = hashlib.sha256(open(packed, "rb").read()).hexdigest()
    p = sh([*cmd[: cmd.index("--")], "--mcpb-url", f"https://github.com/openapi-mcp/openapi-mcp/releases/download/v1.0.0/petstore-{kind}.mcpb",
            "--mcpb-sha256", sha, *cmd[cmd.index("--"):]])
    sj = json.load(open(os.path.join(out, "server.json")))
    mcpb_pkg = [pk for pk in sj.get("packages", []) if pk["registryType"] == "mcpb"]
    check(p.returncode == 0 and len(mcpb_pkg) == 1 and mcpb_pkg[0]["fileSha256"] == sha and not check_server_json(sj),
          "--mcpb-url/--mcpb-sha256: server.json lists the .mcpb with its digest")


def check_binstall(a, work: str) -> None:
    print("[cargo binstall: packaging/archive.sh against cli/Cargo.toml's templates]")
    target = "x86_64-unknown-linux-gnu"
    p = sh([os.path.join(ROOT, "packaging", "archive.sh"), a.pkg_bin, target, os.path.join(work, "dist", "release")])
    if not check(p.returncode == 0, f"archive.sh {tail(p) if p.returncode else ''}"):
        return
    archive = p.stdout.strip()
    cargo = tomllib.load(open(os.path.join(ROOT, "cli", "Cargo.toml"), "rb"))
    meta = cargo["package"]["metadata"]["binstall"]
    repo = tomllib.load(open(os.path.join(ROOT, "Cargo.toml"), "rb"))["workspace"]["package"]["repository"]
    fill = {"repo": repo, "version": a.version, "target": target, "archive-suffix": ".tar.gz", "bin": "openapi-mcp", "binary-ext": ""}

    def render(s: str) -> str:
        return re.sub(r"\{\s*([a-z-]+)\s*\}", lambda m: fill[m.group(1)], s)

    url = render(meta["pkg-url"])
    check(meta["pkg-fmt"] == "tgz" and url.endswith("/" + os.path.basename(archive)) and url.startswith(repo + "/releases/download/v"),
          f"pkg-url names the archive: {url}")
    inner = render(meta["bin-dir"])
    with tarfile.open(archive) as tf:
        m = tf.getmember(inner)
        check(m.mode & 0o111 != 0, f"bin-dir {inner} is in the archive, executable")
        tf.extract(m, os.path.join(work, "binstall"), filter="data")
    p = sh([os.path.join(work, "binstall", inner), "--version"])
    check(p.returncode == 0 and p.stdout.startswith("openapi-mcp "), f"the archived binary runs: {p.stdout.strip()!r}")


def check_crates(a) -> None:
    print("[crates: cargo package --no-verify of the published crates]")
    crates = ["openapi-mcp-toolset", "openapi-mcp-store", "openapi-mcp-arazzo", "openapi-mcp-convert",
              "openapi-mcp-runtime", "openapi-mcp-oauth-proxy", "openapi-mcp-codegen", "openapi-mcp-cli"]
    t = time.monotonic()
    cmd = ["cargo", "package", "--no-verify", "--allow-dirty"]
    for c in crates:
        cmd += ["-p", c]
    p = sh(cmd, cwd=ROOT, timeout=900)
    if not check(p.returncode == 0, f"cargo package of {len(crates)} crates ({time.monotonic() - t:.0f} s) {tail(p) if p.returncode else ''}"):
        return
    # The convert crate's tests and benches read the workspace's fixtures: they stay out of the
    # package (`include`), and cargo says it leaves out their targets.
    warnings = [l for l in p.stderr.splitlines() if l.startswith("warning")
                and not re.fullmatch(r"warning: ignoring (test|benchmark) `\w+` as `(tests|benches)/\w+\.rs` is not included in the published package", l)]
    check(not warnings, f"no packaging warnings (no missing metadata) {warnings[:3]}")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    for c in crates:
        crate = os.path.join(target, "package", f"{c}-{a.version}.crate")
        with tarfile.open(crate) as tf:
            files = {n.split("/", 1)[1] for n in tf.getnames()}
        src = "src/main.rs" if c.endswith("-cli") else "src/lib.rs"
        check({src, "README.md", "Cargo.toml"} <= files and not any(f.startswith(("tests/", "benches/")) for f in files),
              f"{c}: {len(files)} files with {src} and README.md, no tests/benches")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the built openapi-mcp")
    ap.add_argument("--pkg-bin", required=True, help="the binary to package (a stripped copy)")
    ap.add_argument("--generated-bin", required=True, help="the built petstore-mcp (generated server)")
    ap.add_argument("--spec", default=os.path.join(ROOT, "specs", "petstore.yaml"))
    ap.add_argument("--uvx", required=True)
    ap.add_argument("--mcpb", required=True, help="the mcpb CLI's script")
    ap.add_argument("--npm-tools", required=True, help="directory with node_modules/@modelcontextprotocol/sdk")
    ap.add_argument("--server-schema", default=None, help="a copy of the registry's server.schema.json")
    ap.add_argument("--skip-crates", action="store_true")
    a = ap.parse_args()
    for k in ("bin", "pkg_bin", "generated_bin", "spec", "uvx", "mcpb", "npm_tools", "server_schema"):
        if getattr(a, k):
            setattr(a, k, os.path.abspath(getattr(a, k)))
    a.version = tomllib.load(open(os.path.join(ROOT, "Cargo.toml"), "rb"))["workspace"]["package"]["version"]
    want = expected_tools(a.bin, a.spec)
    print(f"packaging: {a.spec}: {len(want)} tools; packaging {a.pkg_bin} ({os.path.getsize(a.pkg_bin) / 1e6:.1f} MB)")
    upstream = RecordingUpstream(lambda r: (200, [{"id": 1, "name": "rex"}]))
    with tempfile.TemporaryDirectory(prefix="openapi-mcp-packaging-") as work:
        check_npm(a, work, want)
        check_pypi(a, work, want)
        check_bundle(a, work, want, "proxy", upstream)
        check_bundle(a, work, want, "generated", upstream)
        check_binstall(a, work)
    if not a.skip_crates:
        check_crates(a)
    for f in figures:
        print(f"== {f}")
    for f in failures:
        print(f"FAILED: {f}")
    print(f"packaging: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
