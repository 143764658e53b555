#!/usr/bin/env bash
# Arazzo workflows: our executor (`openapi-mcp proxy DOC.arazzo.yaml`, each workflow called as
# a tool by the official Python MCP client) against arazzo-runner (Jentic's Python executor,
# PyPI, pinned in requirements.txt), both running the workflows of fixtures/ against the same
# recording upstream (recorder.py, 127.0.0.1:0): the same requests in the same order (method,
# path, query, credentials and parameter headers, body) and the same outputs. Where
# arazzo-runner departs from Arazzo 1.0.1 (fixtures/cases.json says how), ours must give the
# record the specification implies and the peer must still differ.
# Records: target/arazzo-compare/{peer,ours}.json. Needs python3 (>= 3.11) and network for pip.
# OPENAPI_MCP_BIN overrides the binary; OPENAPI_MCP_ARAZZO_PEER_ONLY=1 runs only arazzo-runner.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${OPENAPI_MCP_BIN:-$root/target/debug/openapi-mcp}"
venv="${OPENAPI_MCP_ARAZZO_VENV:-$root/target/arazzo-runner/venv}"
out="$root/target/arazzo-compare"
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
if [[ "${OPENAPI_MCP_ARAZZO_PEER_ONLY:-}" == 1 ]]; then
    exec "$venv/bin/python" "$here/compare.py" --out "$out"
fi
if [[ ! -x "$bin" ]]; then
    (cd "$root" && cargo build -p openapi-mcp-cli)
fi
"$venv/bin/python" "$here/compare.py" --out "$out" --bin "$bin"
