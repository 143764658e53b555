#!/usr/bin/env python3
"""Builds the PyPI wheel of openapi-mcp from an already-built binary (no Rust build here).

The wheel is what `maturin build` with `bindings = "bin"` makes, assembled directly: the binary
as `{dist}-{version}.data/scripts/openapi-mcp` (pip and uv install it into the environment's
bin/ as the `openapi-mcp` command), METADATA, WHEEL with the platform tag, RECORD. Doing it here
takes a few seconds and reuses the binary cargo already built; maturin would run a second
cargo build of the CLI (a release build is over ten minutes on CI's two cores).

The distribution is `openapi-mcp-cli` (the crate's name; `openapi-mcp` on PyPI is another
project). Besides the `openapi-mcp` binary it has a tiny Python module whose console script
`openapi-mcp-cli` runs the binary, so that `uvx openapi-mcp-cli proxy SPEC` works as well as
`uvx --from openapi-mcp-cli openapi-mcp proxy SPEC` (and `python -m openapi_mcp_cli`).

The platform tag: on Linux, manylinux_2_<N>_<arch> where 2.<N> is the newest GLIBC symbol
version the binary needs and <arch> its ELF machine (what auditwheel would say for a binary that
links only glibc, libgcc_s and libm); elsewhere give --plat-tag (macosx_11_0_arm64,
win_amd64, ...).

Usage: build_wheel.py --bin target/release/openapi-mcp --out dist/pypi [--version 0.1.0]
                      [--plat-tag TAG]
Prints the wheel's path.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import struct
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DIST = "openapi-mcp-cli"
MODULE = "openapi_mcp_cli"

ELF_MACHINES = {0x3E: "x86_64", 0xB7: "aarch64"}


def workspace_version() -> str:
    text = open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8").read()
    section = text.split("[workspace.package]", 1)[1]
    m = re.search(r'^version\s*=\s*"([^"]+)"', section, re.M)
    if not m:
        sys.exit("no [workspace.package] version in Cargo.toml")
    return m.group(1)


def linux_tag(data: bytes) -> str:
    if data[:4] != b"\x7fELF":
        sys.exit("the binary is not an ELF file: give --plat-tag")
    endian = "<" if data[5] == 1 else ">"
    (machine,) = struct.unpack(endian + "H", data[18:20])
    arch = ELF_MACHINES.get(machine)
    if arch is None:
        sys.exit(f"ELF machine {machine:#x} has no manylinux tag here: give --plat-tag")
    versions = [int(m) for m in re.findall(rb"GLIBC_2\.(\d+)", data)]
    if not versions:
        sys.exit("the binary needs no glibc symbol versions (static?): give --plat-tag")
    # manylinux starts at glibc 2.17 (manylinux2014).
    return f"manylinux_2_{max(max(versions), 17)}_{arch}"


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


INIT = '''"""openapi-mcp: the binary installed with this package."""

import os
import sys
import sysconfig


def find_binary() -> str:
    """The path of the `openapi-mcp` binary this package installed."""
    exe = "openapi-mcp" + (".exe" if sys.platform == "win32" else "")
    schemes = [sysconfig.get_default_scheme()]
    if sys.version_info >= (3, 10):
        schemes.append(sysconfig.get_preferred_scheme("user"))
    for scheme in schemes:
        path = os.path.join(sysconfig.get_path("scripts", scheme), exe)
        if os.path.isfile(path):
            return path
    # Installed with --target or --prefix: beside this module's site directory.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for rel in ("bin", "Scripts", os.path.join("..", "..", "..", "bin")):
        path = os.path.normpath(os.path.join(here, rel, exe))
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"the {exe} binary of openapi-mcp-cli is not installed")
'''

MAIN = '''import os
import subprocess
import sys

from openapi_mcp_cli import find_binary


def main() -> None:
    binary = find_binary()
    if sys.platform == "win32":
        sys.exit(subprocess.call([binary, *sys.argv[1:]]))
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
'''

DESCRIPTION = """# openapi-mcp

Put any OpenAPI-described REST API in front of LLM agents as MCP tools: a prebuilt binary.

```sh
uvx --from openapi-mcp-cli openapi-mcp tools ./openapi.yaml
uvx --from openapi-mcp-cli openapi-mcp proxy ./openapi.yaml     # serve over stdio
pip install openapi-mcp-cli && openapi-mcp proxy ./openapi.yaml
```

In an MCP client's configuration: `"command": "uvx", "args": ["--from", "openapi-mcp-cli",
"openapi-mcp", "proxy", "/path/to/openapi.yaml"]` (or `"args": ["openapi-mcp-cli", "proxy", ...]`).
Credentials come from environment variables named after the spec's security schemes
(`OPENAPI_MCP_<SCHEME>`).
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the built openapi-mcp binary")
    ap.add_argument("--out", required=True, help="directory to write the wheel to")
    ap.add_argument("--version", default=None, help="default: the workspace version")
    ap.add_argument("--plat-tag", default=None, help="default: from the Linux binary")
    a = ap.parse_args()

    data = open(a.bin, "rb").read()
    version = a.version or workspace_version()
    tag = a.plat_tag or linux_tag(data)
    exe = "openapi-mcp.exe" if tag.startswith("win") else "openapi-mcp"
    norm = DIST.replace("-", "_")
    dist_info = f"{norm}-{version}.dist-info"
    metadata = (
        "Metadata-Version: 2.1\n"
        f"Name: {DIST}\n"
        f"Version: {version}\n"
        "Summary: Put any OpenAPI-described REST API in front of LLM agents as MCP tools (prebuilt binary)\n"
        "License: Apache-2.0\n"
        "Keywords: mcp,model-context-protocol,openapi,swagger,llm\n"
        "Classifier: Programming Language :: Rust\n"
        "Classifier: License :: OSI Approved :: Apache Software License\n"
        "Project-URL: Source, https://github.com/openapi-mcp/openapi-mcp\n"
        "Requires-Python: >=3.8\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + DESCRIPTION
    )
    files: list[tuple[str, bytes, int]] = [
        (f"{MODULE}/__init__.py", INIT.encode(), 0o644),
        (f"{MODULE}/__main__.py", MAIN.encode(), 0o644),
        (f"{norm}-{version}.data/scripts/{exe}", data, 0o755),
        (f"{dist_info}/METADATA", metadata.encode(), 0o644),
        (
            f"{dist_info}/WHEEL",
            (
                "Wheel-Version: 1.0\n"
                "Generator: openapi-mcp packaging/pypi/build_wheel.py\n"
                "Root-Is-Purelib: false\n"
                f"Tag: py3-none-{tag}\n"
            ).encode(),
            0o644,
        ),
        (
            f"{dist_info}/entry_points.txt",
            f"[console_scripts]\n{DIST} = {MODULE}.__main__:main\n".encode(),
            0o644,
        ),
    ]
    record = "".join(f"{name},{record_hash(body)},{len(body)}\n" for name, body, _ in files)
    record += f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode(), 0o644))

    os.makedirs(a.out, exist_ok=True)
    wheel = os.path.join(a.out, f"{norm}-{version}-py3-none-{tag}.whl")
    tmp = wheel + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for name, body, mode in files:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | mode) << 16
            z.writestr(info, body)
    os.replace(tmp, wheel)
    print(wheel)


if __name__ == "__main__":
    main()
