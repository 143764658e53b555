"""The proxy as an OAuth 2.1 resource server (#21), end to end: the `openapi-mcp` binary with
`--oauth-issuer` pointing at a real authorization server (Authlib, oauth_as.py), driven by the
official Python MCP SDK's own OAuth client (ClientCredentialsOAuthProvider: 401 challenge ->
protected resource metadata -> authorization server metadata -> token with `resource` -> call),
and by raw HTTP for what a client library hides:

- the RFC 9728 metadata (root and path-suffixed): resource, authorization server, scopes;
- no token: 401 with `WWW-Authenticate: Bearer resource_metadata="..."`;
- a token issued for another resource (audience) or by nobody: 401 `invalid_token`;
- a token with `pets:read` lists both tools and calls `listPets`; the upstream never sees it;
- the same token calling `addPet` (needs `pets:write`): 403 `insufficient_scope`, scope="pets:write";
- `--hide-unauthorized-tools`: that token's tools/list has no `addPet`;
- a 2026-07-28-era request gets the same 401/403;
- the audit log names the token's `sub`; no token in the log, the audit log or a response;
- opaque tokens (`--oauth-introspection-url`, RFC 7662): the same checks against an Authlib AS
  issuing opaque tokens, the proxy authenticating at its introspection endpoint with
  `--oauth-client-id` and OPENAPI_MCP_OAUTH_CLIENT_SECRET; a revoked token is refused; the SDK
  client's flow works unchanged;
- `--upstream-auth token-exchange` (RFC 8693): two users call concurrently; every upstream
  request carries the token the AS issued to the proxy for that user's own token (audience: the
  API's origin), never the other user's, never an MCP token; one exchange per user (cached); a
  user whose token the AS will not exchange gets a tool error saying to authorize again, and
  nothing is sent;
- the mode per API (`apis:` in a config file): API `pets` in token-exchange mode and API `keyed`
  static, a recording upstream each, both specs with an oauth2 scheme `petauth` and an apiKey
  scheme `api_key`: `pets`' upstream gets each user's exchanged token (exchanged for its origin)
  and never `keyed`'s static key; `keyed`'s gets its static key and never an exchanged or an MCP
  token.

Usage: oauth_e2e.py --bin target/debug/openapi-mcp
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
import warnings

os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")  # the test AS is on http://127.0.0.1
warnings.filterwarnings("ignore", message=".*joserfc.*")  # Authlib's own RFC 9068 code still uses authlib.jose

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from oauth_as import AuthServer  # noqa: E402
from upstream import RecordingUpstream  # noqa: E402

SPEC = """
openapi: 3.0.3
info: {title: Scoped Pets, version: '1'}
components:
  securitySchemes:
    petauth:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: https://as.example/authorize
          tokenUrl: https://as.example/token
          scopes: {'pets:read': read pets, 'pets:write': add pets}
security: [{petauth: ['pets:read']}]
paths:
  /pets:
    get:
      operationId: listPets
      responses: {'200': {description: ok, content: {application/json: {schema: {type: array, items: {type: object}}}}}}
    post:
      operationId: addPet
      security: [{petauth: ['pets:write']}]
      requestBody:
        content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}
      responses: {'201': {description: created}}
"""
CLIENTS = {"reader": ("reader-secret-value", "pets:read"), "writer": ("writer-secret-value", "pets:read pets:write")}
# The proxy's own client at the AS (introspection, token exchange).
PROXY_CLIENT = ("mcp-proxy", "proxy-secret-value", "pets:read pets:write")


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)
    print(f"  ok: {what}")


class Proxy:
    def __init__(self, args, spec: str, issuer: str, base: str | None, extra: list[str], env: dict | None = None) -> None:
        """`spec` and `base`; or a config file with `apis:` as `spec` and `base` None."""
        self.audit = tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False).name
        api = [spec, "--base-url", base] if base is not None else ["--config", spec]
        cmd = [args.bin, "proxy", *api, "--transport", "http", "--listen", "127.0.0.1:0",
               "--oauth-issuer", issuer, "--audit-log", self.audit, *extra]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                     env={**os.environ, "RUST_LOG": "debug", **(env or {})})
        self.log: list[str] = []
        self.url = None
        for line in self.proc.stderr:
            self.log.append(line)
            m = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
            if m:
                self.url = m.group(1)
                break
        check(self.url is not None, f"the proxy announced its URL: {self.url}")
        threading.Thread(target=lambda: self.log.extend(self.proc.stderr), daemon=True).start()
        self.origin = self.url.rsplit("/mcp", 1)[0]

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        return "".join(self.log) + open(self.audit).read()


def http(method: str, url: str, body: dict | None = None, headers: dict | None = None):
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})}
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(), headers=h, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.headers, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def call(name: str, args: dict, era: str = "2025-11-25") -> dict:
    params: dict = {"name": name, "arguments": args}
    if era == "2026-07-28":
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": era,
            "io.modelcontextprotocol/clientInfo": {"name": "oauth-e2e", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def era_headers(era: str, name: str) -> dict:
    h = {"MCP-Protocol-Version": era}
    if era == "2026-07-28":
        h.update({"Mcp-Method": "tools/call", "Mcp-Name": name})
    return h


def raw_checks(proxy: Proxy, auth: AuthServer, upstream: RecordingUpstream) -> list[str]:
    """Metadata, challenges and scope refusals, by raw HTTP (stateless proxy). Returns the tokens."""
    print("[metadata and challenges]")
    meta_url = f"{proxy.origin}/.well-known/oauth-protected-resource/mcp"
    for url in (meta_url, f"{proxy.origin}/.well-known/oauth-protected-resource"):
        status, _, text = http("GET", url)
        meta = json.loads(text)
        check(status == 200 and meta["resource"] == proxy.url and meta["authorization_servers"] == [auth.issuer],
              f"{url}: resource and authorization server: {meta}")
        check(sorted(meta["scopes_supported"]) == ["pets:read", "pets:write"], "scopes_supported from the spec")
    reader = auth.token("reader", CLIENTS["reader"][0], "pets:read", proxy.url)
    writer = auth.token("writer", CLIENTS["writer"][0], "pets:read pets:write", proxy.url)
    elsewhere = auth.token("writer", CLIENTS["writer"][0], "pets:read pets:write", "http://127.0.0.1:1/other")
    for era in ("2025-11-25", "2026-07-28"):
        h = era_headers(era, "scoped_list_pets")
        status, headers, _ = http("POST", proxy.url, call("scoped_list_pets", {}, era), h)
        challenge = headers.get("WWW-Authenticate", "")
        check(status == 401 and challenge == f'Bearer resource_metadata="{meta_url}"', f"{era} no token: 401 {challenge}")
        for label, token in (("another audience", elsewhere), ("not a JWT", "garbage-token-value")):
            status, headers, body = http("POST", proxy.url, call("scoped_list_pets", {}, era), {**h, "Authorization": f"Bearer {token}"})
            challenge = headers.get("WWW-Authenticate", "")
            check(status == 401 and 'error="invalid_token"' in challenge and f'resource_metadata="{meta_url}"' in challenge,
                  f"{era} {label}: 401 {challenge}")
            check(token not in body and token not in challenge, f"{era} {label}: the token is not echoed")
        status, _, body = http("POST", proxy.url, call("scoped_list_pets", {}, era), {**h, "Authorization": f"Bearer {reader}"})
        check(status == 200 and '"isError":false' in body.replace(" ", ""), f"{era} pets:read token calls listPets: {body[:120]}")
        h = era_headers(era, "scoped_add_pet")
        status, headers, body = http("POST", proxy.url, call("scoped_add_pet", {"name": "rex"}, era), {**h, "Authorization": f"Bearer {reader}"})
        challenge = headers.get("WWW-Authenticate", "")
        check(status == 403 and 'error="insufficient_scope"' in challenge and 'scope="pets:write"' in challenge
              and f'resource_metadata="{meta_url}"' in challenge, f"{era} pets:read token calling addPet: 403 {challenge}")
        status, _, body = http("POST", proxy.url, call("scoped_add_pet", {"name": "rex"}, era), {**h, "Authorization": f"Bearer {writer}"})
        check(status == 200 and '"isError":false' in body.replace(" ", ""), f"{era} pets:write token calls addPet")
    sent = upstream.take()
    check([r["method"] for r in sent] == ["GET", "POST", "GET", "POST"], f"the upstream got the 4 allowed calls only: {[r['method'] for r in sent]}")
    check(all("authorization" not in r["headers"] for r in sent), "no MCP token reaches the upstream")
    return [reader, writer, elsewhere]


def introspection_checks(proxy: Proxy, auth: AuthServer, upstream: RecordingUpstream) -> list[str]:
    """Opaque tokens, checked at the AS's introspection endpoint (stateless proxy)."""
    print("[opaque tokens: --oauth-introspection-url]")
    upstream.take()  # what earlier sections sent
    reader = auth.token("reader", CLIENTS["reader"][0], "pets:read", proxy.url)
    writer = auth.token("writer", CLIENTS["writer"][0], "pets:read pets:write", proxy.url)
    elsewhere = auth.token("writer", CLIENTS["writer"][0], "pets:read pets:write", "http://127.0.0.1:1/other")
    revoked = auth.token("writer", CLIENTS["writer"][0], "pets:read pets:write", proxy.url)
    auth.revoke(revoked)
    check(not reader.startswith("eyJ") and reader.startswith("opaque-"), "the AS issues opaque tokens")
    h = era_headers("2025-11-25", "scoped_list_pets")
    status, _, body = http("POST", proxy.url, call("scoped_list_pets", {}), {**h, "Authorization": f"Bearer {reader}"})
    check(status == 200 and '"isError":false' in body.replace(" ", ""), f"an opaque pets:read token calls listPets: {body[:120]}")
    for label, token, words in (("another audience", elsewhere, "another resource"), ("revoked", revoked, "not active"),
                                ("unknown", "opaque-garbage-token-value", "not active")):
        status, headers, body = http("POST", proxy.url, call("scoped_list_pets", {}), {**h, "Authorization": f"Bearer {token}"})
        challenge = headers.get("WWW-Authenticate", "")
        check(status == 401 and 'error="invalid_token"' in challenge and words in challenge, f"{label} opaque token: 401 {challenge}")
        check(token not in body and token not in challenge, f"{label}: the token is not echoed")
    h = era_headers("2025-11-25", "scoped_add_pet")
    status, headers, _ = http("POST", proxy.url, call("scoped_add_pet", {"name": "rex"}), {**h, "Authorization": f"Bearer {reader}"})
    challenge = headers.get("WWW-Authenticate", "")
    check(status == 403 and 'scope="pets:write"' in challenge, f"the pets:read opaque token calling addPet: 403 {challenge}")
    status, _, body = http("POST", proxy.url, call("scoped_add_pet", {"name": "rex"}), {**h, "Authorization": f"Bearer {writer}"})
    check(status == 200 and '"isError":false' in body.replace(" ", ""), "the pets:write opaque token calls addPet")
    sent = upstream.take()
    check([r["method"] for r in sent] == ["GET", "POST"], f"the upstream got the 2 allowed calls only: {[r['method'] for r in sent]}")
    check(all("authorization" not in r["headers"] for r in sent), "no MCP token reaches the upstream")
    return [reader, writer, elsewhere, revoked]


def exchange_checks(proxy: Proxy, auth: AuthServer, upstream: RecordingUpstream, base: str) -> list[str]:
    """Token exchange: each user's calls carry that user's exchanged token (stateless proxy)."""
    print("[--upstream-auth token-exchange]")
    upstream.take()
    users = {u: auth.token(u, CLIENTS[u][0], "pets:read pets:write", proxy.url) for u in ("alice", "bob")}
    h = era_headers("2025-11-25", "scoped_add_pet")

    def add(user: str, i: int) -> tuple[int, str]:
        status, _, body = http("POST", proxy.url, call("scoped_add_pet", {"name": f"{user}-{i}"}),
                               {**h, "Authorization": f"Bearer {users[user]}"})
        return status, body

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        jobs = [pool.submit(add, u, i) for i in range(12) for u in users]
        results = [j.result() for j in jobs]
    failed = [b[:160] for st, b in results if st != 200 or '"isError":false' not in b.replace(" ", "")]
    check(not failed, f"24 concurrent calls by two users all succeed: {failed[:2]}")
    sent = upstream.take()
    exchanged = auth.exchanged
    by_user = {u: {t for sub, t, aud in exchanged if sub == u} for u in users}
    check(all(len(by_user[u]) == 1 for u in users), f"one exchange per user, then cached: {[(s, a) for s, _, a in exchanged]}")
    check(all(aud == base for _, _, aud in exchanged), f"each exchange asked for the API's origin ({base}) as resource")
    ok = len(sent) == 24
    for rec in sent:
        user = json.loads(rec["body"])["name"].split("-")[0]
        token = rec["headers"].get("authorization", "").removeprefix("Bearer ")
        ok &= token in by_user[user] and token not in users.values()
        ok &= all(t not in by_user[other] for other in users if other != user for t in [token])
    check(ok, "every upstream request carries its own user's exchanged token: not the other's, not an MCP token")
    # A user whose token the AS will not exchange (revoked there; still a valid JWT here).
    carol = auth.token("carol", CLIENTS["carol"][0], "pets:read pets:write", proxy.url)
    auth.revoke(carol)
    status, _, body = http("POST", proxy.url, call("scoped_add_pet", {"name": "carol-0"}),
                           {**h, "Authorization": f"Bearer {carol}"})
    result = json.loads(body)["result"]
    text = result["content"][0]["text"]
    check(status == 200 and result["isError"] and "authorize again" in text and "Nothing was sent" in text,
          f"an exchange refused: a tool error saying what to do: {text}")
    check(carol not in body and upstream.take() == [], "nothing sent, no token in the error")
    return [*users.values(), carol, *(t for _, t, _ in exchanged)]


KEYED_SPEC = """
openapi: 3.0.3
info: {title: Keyed, version: '1'}
components:
  securitySchemes:
    petauth:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: https://keyed.example/authorize
          tokenUrl: https://keyed.example/token
          scopes: {'pets:read': read}
    api_key: {type: apiKey, in: header, name: X-Api-Key}
security: [{petauth: ['pets:read']}, {api_key: []}]
paths:
  /things:
    get:
      operationId: getThings
      responses: {'200': {description: ok, content: {application/json: {schema: {type: object}}}}}
"""
STATIC_KEY = "keyed-static-key-value"


def per_api_checks(args, auth: AuthServer, secret_env: dict, spec_path: str) -> tuple[list[str], str]:
    """`apis:` with API `pets` in token-exchange mode and `keyed` static: each credential goes to
    its own API only. Both specs have the schemes `petauth` (oauth2) and `api_key` as alternatives,
    the one without a credential first (keyed: `petauth`; pets: `api_key`), so an exchange hook
    or a key on the wrong API's forwarder would be chosen and show in the other's requests."""
    print("[apis: pets in token-exchange mode, keyed static]")
    pets = RecordingUpstream(lambda rec: (201, {"id": 1}) if rec["method"] == "POST" else (200, [{"id": 1}]))
    keyed = RecordingUpstream(lambda rec: (200, {"ok": True}))
    tmp = tempfile.mkdtemp()
    keyed_spec = os.path.join(tmp, "keyed.yaml")
    with open(keyed_spec, "w") as f:
        f.write(KEYED_SPEC)
    # `pets` has the `api_key` scheme too (no key set for it), as its first alternative: with
    # keyed's key it would be sent instead of the exchanged token.
    pets_spec = os.path.join(tmp, "pets.yaml")
    with open(spec_path) as f:
        text = f.read()
    for old, new in (("security: [{petauth: ['pets:write']}]", "security: [{api_key: []}, {petauth: ['pets:write']}]"),
                     ("  securitySchemes:\n", "  securitySchemes:\n    api_key: {type: apiKey, in: header, name: X-Api-Key}\n")):
        assert old in text, old
        text = text.replace(old, new)
    with open(pets_spec, "w") as f:
        f.write(text)
    config = os.path.join(tmp, "apis.yaml")
    with open(config, "w") as f:
        f.write(f"""stateless: true
oauth-client-id: {PROXY_CLIENT[0]}
apis:
  - name: pets
    spec: {pets_spec}
    base-url: http://127.0.0.1:{pets.port}
    upstream-auth: token-exchange
  - name: keyed
    spec: {keyed_spec}
    base-url: http://127.0.0.1:{keyed.port}
""")
    proxy = Proxy(args, config, auth.issuer, None, [], {**secret_env, "OPENAPI_MCP_KEYED_API_KEY": STATIC_KEY})
    try:
        before = len(auth.exchanged)
        users = {u: auth.token(u, CLIENTS[u][0], "pets:read pets:write", proxy.url) for u in ("alice", "bob")}

        def one(user: str, name: str, arguments: dict) -> tuple[int, str]:
            status, _, body = http("POST", proxy.url, call(name, arguments),
                                   {**era_headers("2025-11-25", name), "Authorization": f"Bearer {users[user]}"})
            return status, body

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            jobs = [pool.submit(one, u, *c) for _ in range(3) for u in users
                    for c in (("pets_add_pet", {"name": f"{u}-x"}), ("keyed_get_things", {}))]
            results = [j.result() for j in jobs]
        failed = [b[:200] for st, b in results if st != 200 or '"isError":false' not in b.replace(" ", "")]
        check(not failed, f"12 calls by two users to both APIs all succeed: {failed[:2]}")
        exchanged = auth.exchanged[before:]
        mine = {t for _, t, _ in exchanged}
        check(len(exchanged) == 2 and all(aud == f"http://127.0.0.1:{pets.port}" for _, _, aud in exchanged),
              f"one exchange per user, for pets' origin only: {[(s, a) for s, _, a in exchanged]}")
        to_pets, to_keyed = pets.take(), keyed.take()
        ok = len(to_pets) == 6
        for rec in to_pets:
            user = json.loads(rec["body"])["name"].split("-")[0]
            token = rec["headers"].get("authorization", "").removeprefix("Bearer ")
            ok &= token in {t for sub, t, _ in exchanged if sub == user}
            ok &= STATIC_KEY not in json.dumps(rec["headers"]) and "x-api-key" not in rec["headers"]
        check(ok, "pets' upstream: each request with its user's exchanged token, never keyed's static key")
        ok = len(to_keyed) == 6
        for rec in to_keyed:
            ok &= rec["headers"].get("x-api-key") == STATIC_KEY and "authorization" not in rec["headers"]
            ok &= not any(t in json.dumps(rec["headers"]) for t in [*mine, *users.values()])
        check(ok, "keyed's upstream: its static key on every request, never an exchanged or an MCP token")
    finally:
        out = proxy.stop()
    check(STATIC_KEY not in out, "the static key is in no log line or audit line")
    return [*users.values(), *mine], out


async def sdk_checks(proxy: Proxy, auth: AuthServer, client_id: str, hidden: bool, label: str = "") -> None:
    """The SDK's OAuth client finds everything from the 401 and calls a tool."""

    class Memory:
        def __init__(self) -> None:
            self.tokens = self.info = None

        async def get_tokens(self):
            return self.tokens

        async def set_tokens(self, tokens) -> None:
            self.tokens = tokens

        async def get_client_info(self):
            return self.info

        async def set_client_info(self, info) -> None:
            self.info = info

    provider = ClientCredentialsOAuthProvider(
        server_url=proxy.url, storage=Memory(), client_id=client_id, client_secret=CLIENTS[client_id][0], issuer=auth.issuer
    )
    async with httpx2.AsyncClient(auth=provider) as hc:
        async with Client(streamable_http_client(proxy.url, http_client=hc)) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            want = ["scoped_list_pets"] if hidden else ["scoped_add_pet", "scoped_list_pets"]
            check(names == want, f"SDK client {client_id}{label} ({'--hide-unauthorized-tools' if hidden else 'all shown'}): tools {names}")
            result = await client.call_tool("scoped_list_pets", {})
            check(not result.is_error, f"SDK client {client_id}{label}: listPets called after the OAuth flow")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    auth = AuthServer(CLIENTS)
    upstream = RecordingUpstream(lambda rec: (201, {"id": 1}) if rec["method"] == "POST" else (200, [{"id": 1}]))
    base = f"http://127.0.0.1:{upstream.port}"
    spec = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    spec.write(SPEC)
    spec.close()
    tokens: list[str] = []
    outputs = []
    proxy = Proxy(args, spec.name, auth.issuer, base, ["--stateless"])
    try:
        tokens = raw_checks(proxy, auth, upstream)
    finally:
        outputs.append(proxy.stop())
    audit = [json.loads(line) for line in open(proxy.audit) if line.strip()]
    check({a["caller"].get("subject") for a in audit} == {"reader", "writer"}, f"the audit log names each token's sub: {[a['caller'] for a in audit][:2]}")
    for hidden in (False, True):
        proxy = Proxy(args, spec.name, auth.issuer, base, ["--hide-unauthorized-tools"] if hidden else [])
        try:
            asyncio.run(sdk_checks(proxy, auth, "reader", hidden))
        finally:
            outputs.append(proxy.stop())
    auth.close()
    # Opaque tokens: another AS issuing them, the proxy introspecting.
    clients = {**CLIENTS, PROXY_CLIENT[0]: PROXY_CLIENT[1:]}
    auth = AuthServer(clients, opaque=True, introspectors=[PROXY_CLIENT[0]])
    introspect = ["--oauth-introspection-url", f"{auth.issuer}/introspect", "--oauth-client-id", PROXY_CLIENT[0]]
    secret_env = {"OPENAPI_MCP_OAUTH_CLIENT_SECRET": PROXY_CLIENT[1]}
    proxy = Proxy(args, spec.name, auth.issuer, base, ["--stateless", *introspect], secret_env)
    try:
        tokens += introspection_checks(proxy, auth, upstream)
    finally:
        outputs.append(proxy.stop())
    proxy = Proxy(args, spec.name, auth.issuer, base, introspect, secret_env)
    try:
        asyncio.run(sdk_checks(proxy, auth, "writer", False, " (opaque token)"))
    finally:
        outputs.append(proxy.stop())
    auth.close()
    # Token exchange: JWTs for the proxy, exchanged at the AS for tokens for the API.
    users = {"alice": ("alice-secret-value", "pets:read pets:write"), "bob": ("bob-secret-value", "pets:read pets:write"),
             "carol": ("carol-secret-value", "pets:read pets:write")}
    CLIENTS.update(users)
    auth = AuthServer({**users, PROXY_CLIENT[0]: PROXY_CLIENT[1:]}, exchangers=[PROXY_CLIENT[0]])
    exchange = ["--upstream-auth", "token-exchange", "--oauth-client-id", PROXY_CLIENT[0]]
    proxy = Proxy(args, spec.name, auth.issuer, base, ["--stateless", *exchange], secret_env)
    try:
        tokens += exchange_checks(proxy, auth, upstream, base)
    finally:
        outputs.append(proxy.stop())
    more, out = per_api_checks(args, auth, secret_env, spec.name)
    tokens += more
    outputs.append(out)
    auth.close()
    text = "".join(outputs)
    check(not any(t in text for t in tokens) and "secret-value" not in text, "no token or client secret in the logs or audit logs")
    print("oauth e2e: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
