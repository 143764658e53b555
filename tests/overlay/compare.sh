#!/usr/bin/env bash
# `--overlay` against openapi-overlays-js (npm, Lorna Mitchell's reference-style implementation
# of OpenAPI Overlay 1.0): each (spec, overlay) pair is applied by openapi-overlays-js, and the
# tools `openapi-mcp tools --json` converts from its result must equal those of
# `openapi-mcp tools SPEC --overlay OVERLAY --json`. The pairs: openapi-overlays-js's own test
# suite (its specs and overlays, from the npm package), our fixtures (specs/overlays/) over
# specs/petstore.yaml, and two real-world specs of ../shared/specs.
#
# What the two implementations do differently is not compared: openapi-overlays-js 0.2.0 uses
# the pre-RFC `jsonpath` package (no RFC 9535 syntax such as `?@.a` without parentheses), removes
# the targets of an action that has `remove: false`, and turns an array target into an object
# (`{'0': ..., '1': ...}`) instead of appending the update to it.
#
# Some of openapi-overlays-js's own overlays change nothing the tools show (servers, the info
# object): those pairs must give equal tools; ours (specs/overlays/) must also change them.
#
# Needs npm and node (node from PATH, else the one tests/typescript/run.sh installs), and the
# built binary (OPENAPI_MCP_BIN overrides).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${OPENAPI_MCP_BIN:-$root/target/debug/openapi-mcp}"
cache="${OPENAPI_MCP_OVERLAY_JS_DIR:-$root/target/overlay-js}"
version=0.2.0
node="$(command -v node || true)"
[[ -n "$node" ]] || node="$(ls "$root"/target/ts-client/node_modules/node-linux-*/bin/node 2>/dev/null | head -1)"
[[ -x "$node" ]] || { echo "overlay: no node found" >&2; exit 1; }
if [[ "$(cat "$cache/.installed" 2>/dev/null)" != "$version" ]]; then
    mkdir -p "$cache"
    echo '{"private": true}' >"$cache/package.json"
    (cd "$cache" && npm install --no-audit --no-fund --loglevel=error "openapi-overlays-js@$version")
    echo "$version" >"$cache/.installed"
fi
js="$cache/node_modules/openapi-overlays-js"
if [[ ! -x "$bin" ]]; then
    (cd "$root" && cargo build -p openapi-mcp-cli)
fi
shared="$root/../shared/specs"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# SPEC OVERLAY MUST_CHANGE
pairs=(
    "$js/test/openapi/petstore.yaml $js/test/overlays/overlay.yaml no"
    "$js/test/openapi/town.yaml $js/test/overlays/building-description.yaml no"
    "$js/test/openapi/town.yaml $js/test/overlays/update-root.yaml no"
    "$js/test/openapi/town.yaml $js/test/overlays/remove-example.yaml no"
    "$js/test/openapi/town.yaml $js/test/overlays/remove-properties.yaml no"
    "$js/test/openapi/town.yaml $js/test/overlays/remove-descriptions.yaml no"
    "$js/test/openapi/openapi-with-servers.yaml $js/test/overlays/remove-server.yaml no"
    "$js/test/openapi/responses.yaml $js/test/overlays/remove-responses.yaml no"
    "$root/specs/petstore.yaml $root/specs/overlays/petstore.overlay.yaml yes"
)
if [[ -d "$shared" ]]; then
    pairs+=(
        "$shared/redocly-museum-3.1.yaml $root/specs/overlays/museum.overlay.yaml yes"
        "$shared/github-api-3.0.json $root/specs/overlays/github.overlay.yaml yes"
    )
else
    echo "overlay: ../shared/specs not found: the real-world pairs are skipped"
fi

# The tool list, normalised (keys sorted) for comparison.
tools() {
    "$bin" tools "$@" --json 2>/dev/null | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True, indent=1))'
}

passed=0
failed=0
for pair in "${pairs[@]}"; do
    read -r spec overlay must_change <<<"$pair"
    name="$(basename "$spec") + $(basename "$overlay")"
    applied="$tmp/applied.yaml"
    (cd "$js" && "$node" index.js --openapi "$spec" --overlay "$overlay") >"$applied"
    tools "$applied" >"$tmp/js.json"
    tools "$spec" --overlay "$overlay" >"$tmp/ours.json"
    without="$(tools "$spec" | md5sum)"
    if ! cmp -s "$tmp/js.json" "$tmp/ours.json"; then
        echo "FAIL $name: the tools differ (< openapi-overlays-js, > --overlay)"
        diff "$tmp/js.json" "$tmp/ours.json" | head -40
        failed=$((failed + 1))
    elif [[ "$must_change" == yes && "$without" == "$(md5sum <"$tmp/ours.json")" ]]; then
        echo "FAIL $name: the overlay changed no tool (a comparison that cannot fail)"
        failed=$((failed + 1))
    else
        echo "ok   $name ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/ours.json") tools)"
        passed=$((passed + 1))
    fi
done
echo "overlay: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
