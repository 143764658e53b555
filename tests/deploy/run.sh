#!/usr/bin/env bash
# Packaging job: the Kubernetes manifests (deploy/kubernetes/*.yaml) against the Kubernetes API
# schemas with kubernetes-validate --strict (pinned, from PyPI, into a private virtualenv; its
# schemas are bundled, so it needs no network once installed), then tests/deploy/check.py: the
# manifests and the Dockerfile fit together and the container's command line works with the
# built binary (see its header).
#
# No container image is built here: no container engine runs on the CI machines (docker's daemon
# is not running; Debian's podman installs but cannot start a container: crun's setrlimit is
# refused and the cgroups are hybrid v1/v2), and base images could not be pulled anyway.
#
# Usage: tests/deploy/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${OPENAPI_MCP_DEPLOY_VENV:-$root/target/deploy-venv}"
bin="${OPENAPI_MCP_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/openapi-mcp}"
kubernetes_validate_version=1.37.0
kubernetes_version=1.34.0 # validated against this API version too (a cluster a year older)

if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$kubernetes_validate_version"
if [[ ! -x "$bin" ]]; then
    (cd "$root" && cargo build -p openapi-mcp-cli)
fi
cd "$root"
for k in "$kubernetes_validate_version" "$kubernetes_version"; do
    "$venv/bin/kubernetes-validate" --strict --kubernetes-version "$k" deploy/kubernetes/*.yaml
done
exec "$venv/bin/python" "$here/check.py" --bin "$bin" --root "$root"
