#!/usr/bin/env bash
# Fuzzes each target for SECONDS (default 60) with cargo-fuzz (libFuzzer).
#   bash fuzz/run.sh [SECONDS]        (FUZZ_TOOLCHAIN=stable: skip nightly)
#   FUZZ_TARGETS="http_transport" FUZZ_RUNS=10000000 bash fuzz/run.sh 7200
#     (some targets only; stop after FUZZ_RUNS executions or SECONDS, whichever comes first)
#   FUZZ_TIMEOUT=120: libFuzzer's per-input limit in wall-clock seconds (default 10); raise it for
#     a fuzzer at nice 19 beside builds, where a starved input is not a finding (the targets check
#     their own CPU-time limits)
# Uses nightly (with AddressSanitizer) when a nightly toolchain is installed, else stable with
# `-s none` (libFuzzer's coverage instrumentation only; the workspace forbids unsafe code, so
# ASan adds little). Installs cargo-fuzz when missing. Crashes land in fuzz/artifacts/<target>/;
# a crash input goes to fuzz/regressions/<target>/ once fixed (replayed by
# `cargo test -p openapi-mcp-tests --lib fuzz_checks`).
set -euo pipefail
# The bundled SQLite (the store crate, linked by the runtime) trips ASan's one-definition-rule
# check at start-up of every target with a false report (global `aiOff` in sqlite3.c): off.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0"
cd "$(dirname "$0")"
SECONDS_PER_TARGET="${1:-60}"
TARGETS=(load_convert build_request http_transport validate_args select oauth_proxy arazzo_expr overlay)
if [ -n "${FUZZ_TARGETS:-}" ]; then
    read -ra TARGETS <<<"$FUZZ_TARGETS"
fi
LIMITS=(-max_total_time="$SECONDS_PER_TARGET")
if [ -n "${FUZZ_RUNS:-}" ]; then
    LIMITS+=(-runs="$FUZZ_RUNS")
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

# FUZZ_TOOLCHAIN=stable forces the stable path (no sanitizer) even where nightly exists.
if [ "${FUZZ_TOOLCHAIN:-}" != stable ] && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    TOOLCHAIN=+nightly
    SANITIZER=(-s address)
    echo "== nightly found: fuzzing with AddressSanitizer"
else
    TOOLCHAIN=+stable
    SANITIZER=(-s none)
    echo "== no nightly toolchain: fuzzing on stable without a sanitizer (-s none)"
fi
if ! cargo "$TOOLCHAIN" fuzz build "${SANITIZER[@]}" -O; then
    echo "SKIPPED: the fuzz targets do not build with cargo $TOOLCHAIN fuzz here"
    exit 0
fi

# Seeds: the fixture specs for load_convert; for the others seeds/<target>/ (generated tool
# calls, HTTP requests, schemas with patterns); and every target's fixed crash inputs.
mkdir -p corpus/load_convert corpus/build_request corpus/http_transport corpus/validate_args corpus/select corpus/oauth_proxy corpus/arazzo_expr corpus/overlay
for f in ../specs/*.yaml ../specs/*.json ../specs/external-refs/*.yaml seeds/load_convert/* regressions/load_convert/*; do
    [ -f "$f" ] && cp "$f" "corpus/load_convert/$(basename "$f")-$(cksum <"$f" | cut -d' ' -f1)"
done
for t in build_request http_transport validate_args select oauth_proxy arazzo_expr overlay; do
    for f in seeds/$t/* regressions/$t/*; do
        [ -f "$f" ] && cp "$f" "corpus/$t/"
    done
done

status=0
for t in "${TARGETS[@]}"; do
    echo "== fuzzing $t for ${SECONDS_PER_TARGET}s${FUZZ_RUNS:+ or $FUZZ_RUNS runs}"
    # A target's token dictionary (dicts/<target>.dict), when it has one.
    DICT=()
    if [ -f "dicts/$t.dict" ]; then
        DICT=(-dict="dicts/$t.dict")
    fi
    if ! cargo "$TOOLCHAIN" fuzz run "${SANITIZER[@]}" -O "$t" "corpus/$t" -- \
        "${LIMITS[@]}" "${DICT[@]}" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1; then
        echo "FAILED: $t found a crash (see fuzz/artifacts/$t/)"
        status=1
    fi
done
exit $status
