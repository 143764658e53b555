#!/usr/bin/env bash
# The weight of what we ship (#37): for the `openapi-mcp` binary and for a generated stdio server
# of specs/petstore.yaml (`openapi-mcp generate` defaults), a clean release build in a target
# directory of its own: crates compiled (cargo's `Compiling` lines), the C builds among them
# (`*-sys` crates), CPU time (user + sys, which depends far less on other load than wall time)
# and the stripped binary's size.
#
# Usage: tests/weight.sh [REV]
#   REV (default: the working tree) is measured from a `git worktree` of that revision, so two
#   runs (e.g. `tests/weight.sh 0c60239` and `tests/weight.sh`) compare before and after on the
#   same machine. Needs about 4 GB of free disk while it runs (removed after); `--offline` builds
#   need the registry cache of an earlier build (the workspace's own build fills it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rev="${1:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/openapi-mcp-weight.XXXXXX")"
cleanup() {
    [[ -n "$rev" ]] && git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
if [[ -n "$rev" ]]; then
    git -C "$root" worktree add --detach --force "$work/src" "$rev" >/dev/null
    src="$work/src"
else
    src="$root"
fi
offline=()
[[ "${WEIGHT_ONLINE:-}" == 1 ]] || offline=(--offline)

# One clean release build: "crates | C builds | CPU s | stripped bytes".
measure() { # KEY LABEL MANIFEST_DIR BINARY_NAME [cargo args...]
    local name="$1" label="$2" dir="$3" binname="$4"
    shift 4
    local target="$work/target-$name" log="$work/$name.log"
    (cd "$dir" && CARGO_TARGET_DIR="$target" /usr/bin/time -f "cpu %U %S" \
        cargo build --release "${offline[@]}" "$@" >"$log" 2>&1) || {
        tail -20 "$log" >&2
        echo "weight: the $name build failed" >&2
        exit 1
    }
    local crates csys cpu size
    crates=$(grep -c '^ *Compiling ' "$log")
    csys=$(grep '^ *Compiling ' "$log" | awk '{print $2}' | grep -E -- '-sys$' | grep -v '^linux-raw-sys$' |
        sort | paste -sd, -)
    cpu=$(awk '/^cpu /{printf "%.0f", $2 + $3}' "$log")
    strip -o "$work/$name.stripped" "$target/release/$binname"
    size=$(stat -c %s "$work/$name.stripped")
    printf '%-34s %7s %-40s %8s %12s\n' "$label" "$crates" "${csys:-none}" "${cpu}s" "$size"
    rm -rf "$target"
}

echo "openapi-mcp weight at ${rev:-the working tree} ($(nproc) cores)"
printf '%-34s %7s %-40s %8s %12s\n' "" "crates" "C builds" "CPU" "stripped B"
# The release binary measured first generates the crate (the revision's own generator).
measure binary "openapi-mcp binary (all features)" "$src" openapi-mcp --locked -p openapi-mcp-cli
bin="$work/binary.stripped"
"$bin" generate "$src/specs/petstore.yaml" -o "$work/gen" --runtime-dep "$src/runtime" >"$work/gen.log" 2>&1 || {
    cat "$work/gen.log" >&2
    exit 1
}
cp "$src/Cargo.lock" "$work/gen/Cargo.lock" # the workspace's versions, pruned by cargo
measure generated "generated petstore stdio server" "$work/gen" petstore-mcp
