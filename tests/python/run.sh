#!/usr/bin/env bash
# End-to-end job: drives the built `openapi-mcp` binary with the official Python MCP SDK client,
# over stdio and over Streamable HTTP, against a local recording upstream (127.0.0.1:0); then
# validates the HTTP requests the proxy sends against their specs (validate_requests.py).
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
"$venv/bin/python" "$here/e2e.py" --bin "$bin" --spec "$root/specs/petstore.yaml"
# OpenTelemetry: the binary's OTLP export received by a real receiver, trace ids checked end to end.
"$venv/bin/python" "$here/otel_e2e.py" --bin "$bin" --spec "$root/specs/petstore.yaml"
# OAuth resource server (--oauth-issuer): a real authorization server (Authlib, oauth_as.py), the
# SDK's own OAuth client, 401/403 challenges in both eras, scopes per tool.
"$venv/bin/python" "$here/oauth_e2e.py" --bin "$bin"
# OAuth proxy (--oauth-proxy): the proxy as its clients' authorization server, each user sent
# through the API's own authorization-code flow (Authlib, oauth_code_as.py); two users at once.
"$venv/bin/python" "$here/oauth_proxy_e2e.py" --bin "$bin"

# Every tool of the bundled 3.x fixtures, and of the small real-world specs in ../shared/specs
# when they are there, called once; each request the upstream receives is checked against the
# spec by openapi-core, an OpenAPI validator that shares no code with openapi-mcp.
shared="$root/../shared/specs"
specs=("$root"/specs/*.yaml "$root"/specs/external-refs/*.yaml)
small=(oai-petstore-3.0.yaml oai-petstore-expanded-3.0.json oai-uspto-3.0.yaml
    readme-train-travel-3.1.json redocly-museum-3.1.yaml readme-parameters-style-3.0.json
    readme-discriminators-3.0.json readme-schema-circular-3.0.json readme-security-3.0.json
    oai-link-example-3.0.json oai-callback-example-3.0.yaml)
if [[ -d "$shared" ]]; then
    for s in "${small[@]}"; do specs+=("$shared/$s"); done
else
    echo "request validation: ../shared/specs not found; the real-world specs are skipped"
fi
exec "$venv/bin/python" "$here/validate_requests.py" --bin "$bin" "${specs[@]}"
