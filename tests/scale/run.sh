#!/usr/bin/env bash
# Scale job: 3 `openapi-mcp proxy --transport http --stateless` instances behind a real nginx
# (round robin, no stickiness), driven by 2026-07-28 and 2025-11-25 clients at once, one
# instance killed mid-run (scale.py says what is checked): raw HTTP clients of each era, and
# clients of the official Python MCP SDK from the virtualenv of tests/python/run.sh (made here
# when missing; OPENAPI_MCP_PY_VENV overrides). Installs nginx from Debian's packages when it is
# missing (as root, like CI); needs python3 and the built binary (the debug one `cargo test`
# built; built here when missing; OPENAPI_MCP_BIN overrides).
# Everything listens on 127.0.0.1; nginx runs from a temp dir (`nginx -p DIR`), not as a service.
#
# Usage: tests/scale/run.sh [--calls N] [--clients N]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${OPENAPI_MCP_PY_VENV:-$root/target/py-e2e-venv}"
bin="${OPENAPI_MCP_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/openapi-mcp}"

nginx="$(command -v nginx || true)"
[[ -z "$nginx" && -x /usr/sbin/nginx ]] && nginx=/usr/sbin/nginx
if [[ -z "$nginx" ]]; then
    echo "== scale: installing nginx-light from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # The package's postinst tries to start the system service; that may fail without an init
    # system, which is fine: this job starts its own nginx.
    apt-get install -y -qq --no-install-recommends nginx-light >/dev/null || true
    nginx=/usr/sbin/nginx
    [[ -x "$nginx" ]] || {
        echo "scale: nginx did not install" >&2
        exit 1
    }
fi
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/tests/python/requirements.txt"
if [[ ! -x "$bin" ]]; then
    (cd "$root" && cargo build -p openapi-mcp-cli)
fi
exec python3 "$here/scale.py" --bin "$bin" --spec "$root/specs/petstore.yaml" --nginx "$nginx" \
    --sdk-python "$venv/bin/python" "$@"
