#!/usr/bin/env bash
# Fuzzes each target for SECONDS (default 60) with cargo-fuzz (libFuzzer).
#   bash fuzz/run.sh [SECONDS]        (FUZZ_TOOLCHAIN=stable: skip nightly)
# Uses nightly (with AddressSanitizer) when a nightly toolchain is installed, else stable with
# `-s none` (libFuzzer's coverage instrumentation only; the workspace forbids unsafe code, so
# ASan adds little). Installs cargo-fuzz when missing. Crashes land in fuzz/artifacts/<target>/;
# a crash input goes to fuzz/regressions/<target>/ once fixed (replayed by
# `cargo test -p openapi-mcp-tests --lib fuzz_checks`).
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_PER_TARGET="${1:-60}"
TARGETS=(load_convert build_request)

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

# Seeds: the fixture specs for load_convert, generated tool calls for build_request.
mkdir -p corpus/load_convert corpus/build_request
for f in ../specs/*.yaml ../specs/*.json ../specs/external-refs/*.yaml seeds/load_convert/* regressions/load_convert/*; do
    [ -f "$f" ] && cp "$f" "corpus/load_convert/$(basename "$f")-$(cksum <"$f" | cut -d' ' -f1)"
done
for f in seeds/build_request/* regressions/build_request/*; do
    [ -f "$f" ] && cp "$f" corpus/build_request/
done

status=0
for t in "${TARGETS[@]}"; do
    echo "== fuzzing $t for ${SECONDS_PER_TARGET}s"
    if ! cargo "$TOOLCHAIN" fuzz run "${SANITIZER[@]}" -O "$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1; then
        echo "FAILED: $t found a crash (see fuzz/artifacts/$t/)"
        status=1
    fi
done
exit $status
