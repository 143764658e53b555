#!/usr/bin/env bash
# Compares two `openapi-mcp` binaries: `tools --json` output, stderr and exit code on every
# bundled fixture and every shared real-world spec, with default options, `--output-schema strict`
# and `--client gemini`. Prints one line per difference and a count; exits 1 when any differs.
#
#   bash tests/tools-parity.sh OLD_BINARY NEW_BINARY
#
# Used to show that a refactoring changes nothing users see (e.g. build the previous commit in a
# `git worktree` and pass both binaries).
set -uo pipefail
old=$1 new=$2
root=$(cd "$(dirname "$0")/.." && pwd)
shared="$root/../shared/specs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
specs=()
for f in "$root"/specs/*.yaml "$root"/specs/*.json "$root"/specs/external-refs/openapi.yaml; do
    [[ -f $f ]] && specs+=("$f")
done
if [[ -d $shared ]]; then
    for f in "$shared"/*.json "$shared"/*.yaml "$shared"/digitalocean-3.0/DigitalOcean-public.v2.yaml \
        "$shared"/oai-petstore-separate-2.0/spec/swagger.yaml; do
        [[ -f $f ]] && specs+=("$f")
    done
else
    echo "note: $shared not found; real-world specs skipped"
fi
runs=0 diffs=0
for spec in "${specs[@]}"; do
    for opts in "" "--output-schema strict" "--client gemini"; do
        runs=$((runs + 1))
        # shellcheck disable=SC2086
        (cd "$root" && "$old" tools --json $opts "$spec" >"$tmp/o.out" 2>"$tmp/o.err"; echo $? >"$tmp/o.rc")
        # shellcheck disable=SC2086
        (cd "$root" && "$new" tools --json $opts "$spec" >"$tmp/n.out" 2>"$tmp/n.err"; echo $? >"$tmp/n.rc")
        for part in out err rc; do
            if ! cmp -s "$tmp/o.$part" "$tmp/n.$part"; then
                echo "DIFF ($part): ${spec#"$root"/} $opts"
                diffs=$((diffs + 1))
                break
            fi
        done
    done
done
echo "$runs runs, $diffs differences"
[[ $diffs -eq 0 ]]
