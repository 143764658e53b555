#!/usr/bin/env bash
# End-to-end job: drives the built `openapi-mcp` binary with the official Python MCP SDK client,
# over stdio and over Streamable HTTP, against a local recording upstream (127.0.0.1:0).
# Installs the SDK into a private virtualenv; needs python3 (>= 3.10) and the built binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${OPENAPI_MCP_PY_VENV:-$root/target/py-e2e-venv}"
bin="${OPENAPI_MCP_BIN:-$root/target/debug/openapi-mcp}"

if [[ ! -x "$bin" ]]; then
    (cd "$root" && cargo build -p openapi-mcp-cli)
fi
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
exec "$venv/bin/python" "$here/e2e.py" --bin "$bin" --spec "$root/specs/petstore.yaml"
