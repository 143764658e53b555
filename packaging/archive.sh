#!/usr/bin/env bash
# The release archive of one platform's binary, as `cargo binstall openapi-mcp-cli` downloads it
# (cli/Cargo.toml [package.metadata.binstall]): openapi-mcp-<target>.tar.gz (a .zip for Windows
# targets) holding openapi-mcp-<target>/openapi-mcp[.exe], plus its .sha256.
#
# Usage: packaging/archive.sh BIN TARGET OUT_DIR
#   TARGET: the Rust target triple the binary was built for (x86_64-unknown-linux-gnu, ...)
# Prints the archive's path.
set -euo pipefail
bin="$1" target="$2" out="$3"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
dir="openapi-mcp-$target"
mkdir "$stage/$dir"
case "$target" in
*windows*)
    cp "$bin" "$stage/$dir/openapi-mcp.exe"
    archive="$out/$dir.zip"
    rm -f "$archive"
    (cd "$stage" && python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED); [z.write(p) for p in sys.argv[2:]]; z.close()' "$archive" "$dir/openapi-mcp.exe")
    ;;
*)
    install -m 0755 "$bin" "$stage/$dir/openapi-mcp"
    archive="$out/$dir.tar.gz"
    tar -C "$stage" --owner=0 --group=0 -czf "$archive" "$dir"
    ;;
esac
(cd "$out" && sha256sum "$(basename "$archive")" >"$(basename "$archive").sha256")
echo "$archive"
