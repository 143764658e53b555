# openapi-mcp as a container: the proxy over Streamable HTTP on port 8080.
#
#   docker build -t openapi-mcp .
#   docker run --rm -p 8080:8080 -v "$PWD/specs/petstore.yaml:/etc/openapi-mcp/openapi.yaml:ro" \
#       -e OPENAPI_MCP_AUTH_TOKEN=... -e OPENAPI_MCP_API_KEY=... \
#       openapi-mcp /etc/openapi-mcp/openapi.yaml --stateless --base-url https://api.example.com/v1
#
# The arguments after the image name are the spec and any `openapi-mcp proxy` options; without
# any, /etc/openapi-mcp/openapi.yaml is served (mount it, or bake it in with a two-line Dockerfile:
# `FROM openapi-mcp` and `COPY my-api.yaml /etc/openapi-mcp/openapi.yaml`). Credentials come as
# environment variables (OPENAPI_MCP_<SCHEME>, OPENAPI_MCP_AUTH_TOKEN), never baked in.

# --- build: the release binary ------------------------------------------------------------------
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# Every workspace member's manifest is needed for the lock file to resolve, so the whole tree is
# copied (.dockerignore leaves out target/ and .git).
COPY . .
# The image's binary is stripped (the release profile keeps line tables for backtraces: a third
# of the binary's size); a panic then still names the panicking file and line, not the frames.
ENV CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=symbols
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p openapi-mcp-cli \
    && cp target/release/openapi-mcp /usr/local/bin/openapi-mcp

# --- run: glibc, CA certificates and the binary, as a non-root user -----------------------------
# distroless/cc: libc, libgcc_s and /etc/ssl/certs (the CA roots the API calls and remote specs
# are checked against), no shell, no package manager; its `nonroot` user is uid 65532. (The
# binary links glibc, for jemalloc and aws-lc: distroless/static or scratch would need a musl
# build.)
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /usr/local/bin/openapi-mcp /usr/local/bin/openapi-mcp
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/openapi-mcp", "proxy", "--transport", "http", "--listen", "0.0.0.0:8080"]
CMD ["/etc/openapi-mcp/openapi.yaml"]
