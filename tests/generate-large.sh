#!/usr/bin/env bash
# Generates a crate with `openapi-mcp generate` for each large real-world spec in ../shared/specs
# and compiles it (`cargo check` by default) with the workspace's target dir and Cargo.lock, so the
# dependencies are built once and shared. Prints the generation and compile time per spec and
# fails if any spec does not generate or its crate does not compile.
#
#   tests/generate-large.sh [check|build|clippy|test] [SPEC_FILE...]
#
# `clippy` also fails on clippy warnings (the generated crates have `#![deny(warnings)]`).
# `build` also runs each built server (python3, raw JSON-RPC over stdio): initialize, tools/list,
# and a call of the first 20 tools against a closed port, each of which must get a tool result.
# Without SPEC_FILEs: Stripe, GitHub, Kubernetes and OpenAI. Says SKIPPED (and exits 0) when
# ../shared/specs is missing. The crates are written to <target>/tmp/generate-large/<name>.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

cmd=check
case "${1:-}" in
check | build | clippy | test)
    cmd=$1
    shift
    ;;
-h | --help)
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
if [ $# -gt 0 ]; then
    specs=("$@")
else
    specs=(stripe-spec3.json github-octokit-2026-3.0.json k8s-swagger-2.0.json openai-api-3.1.yaml)
fi

shared=$root/../shared/specs
if [ ! -d "$shared" ]; then
    echo "SKIPPED: $shared is missing (the large real-world specs live there)"
    exit 0
fi

target=${CARGO_TARGET_DIR:-$root/target}
export CARGO_TARGET_DIR=$target
out=$target/tmp/generate-large
mkdir -p "$out"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

echo "== building openapi-mcp"
cargo build --quiet -p openapi-mcp-cli
bin=$target/debug/openapi-mcp

# Runs a generated server: initialize, tools/list, then the first 20 tools called with `{}`
# against a closed port (a tool result each: invalid arguments, or a refused connection).
smoke() {
    python3 - "$1" <<'PY'
import json, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "--base-url", "http://127.0.0.1:9/"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=sys.stderr)
def rpc(i, method, params):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    p.stdin.flush()
    line = p.stdout.readline()
    if not line:
        sys.exit(f"the server exited during {method} (status {p.wait()})")
    return json.loads(line)
t = time.time()
rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "smoke", "version": "1"}})
p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
tools = rpc(2, "tools/list", {})["result"]["tools"]
listed = time.time() - t
for n, tool in enumerate(tools[:20]):
    r = rpc(10 + n, "tools/call", {"name": tool["name"], "arguments": {}})
    if "result" not in r:
        sys.exit(f"tools/call {tool['name']}: {r}")
p.kill()
print(f"{len(tools)} tools listed in {listed:.2f}s after spawn, {min(20, len(tools))} calls answered")
PY
}

summary=()
failed=()
total_start=$(now)
for spec in "${specs[@]}"; do
    path=$shared/$spec
    if [ ! -f "$path" ]; then
        echo "SKIPPED $spec: $path is missing"
        summary+=("$(printf '%-32s %10s %10s  %s' "$spec" - - SKIPPED)")
        continue
    fi
    name=$(echo "${spec%.*}" | tr -c 'A-Za-z0-9\n' '-' | tr 'A-Z' 'a-z')
    dir=$out/$name
    log=$out/$name.log

    echo "== $spec: generate"
    t0=$(now)
    if ! "$bin" generate "$path" -o "$dir" --name "large-$name" --runtime-dep "$root/runtime" >"$log" 2>&1; then
        cat "$log"
        echo "FAILED $spec: openapi-mcp generate"
        failed+=("$spec (generate)")
        summary+=("$(printf '%-32s %10s %10s  %s' "$spec" - - 'FAILED (generate)')")
        continue
    fi
    t1=$(now)
    gen=$(secs "$t0" "$t1")
    tools=$(grep -c '| `tools::' "$dir/README.md" || true)
    lines=$(cat "$dir"/src/tools/*.rs | wc -l)
    cp "$root/Cargo.lock" "$dir/Cargo.lock"

    echo "== $spec: cargo $cmd ($tools tools, $lines lines in src/tools/, generated in ${gen}s)"
    args=(--manifest-path "$dir/Cargo.toml")
    [ "$cmd" = clippy ] && args+=(--all-targets)
    [ "$cmd" = test ] && args+=(--no-run)
    t2=$(now)
    if cargo "$cmd" "${args[@]}" >"$log" 2>&1; then
        result=ok
    else
        grep -E '^(error|warning)' -A12 "$log" | head -150 || true
        echo "(full log: $log)"
        result=FAILED
        failed+=("$spec (cargo $cmd)")
    fi
    t3=$(now)
    if [ "$result" = ok ] && [ "$cmd" = build ]; then
        if smoke "$target/debug/large-$name" >"$log.smoke" 2>&1; then
            echo "== $spec: smoke run: $(tail -1 "$log.smoke")"
        else
            tail -20 "$log.smoke"
            result=FAILED
            failed+=("$spec (smoke run)")
        fi
    fi
    took=$(secs "$t2" "$t3")
    echo "== $spec: cargo $cmd $result in ${took}s"
    summary+=("$(printf '%-32s %9ss %9ss  %s' "$spec" "$gen" "$took" "$result")")
done

echo
printf '%-32s %10s %10s  %s\n' spec generate "cargo $cmd" result
printf '%s\n' "${summary[@]}"
echo "total: $(secs "$total_start" "$(now)")s"
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
