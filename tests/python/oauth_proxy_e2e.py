"""`--oauth-proxy` end to end (#21): the `openapi-mcp` binary as the authorization server of its MCP
clients, sending each user through the API's own authorization-code flow, which the spec's
`securitySchemes` declare and a real authorization server serves (Authlib, oauth_code_as.py:
authorization code with PKCE required, rotating refresh tokens, short-lived opaque tokens).
The MCP clients are the official Python SDK's `OAuthClientProvider` (401 -> protected resource
metadata -> authorization server metadata -> dynamic registration -> /authorize with PKCE and
`resource` -> /token), whose redirect handler follows the redirects itself as a browser would,
signed in at the API's authorization server as one user or another. The API is a recording
upstream that answers with the user whose token it received.

Checked:
- metadata: the proxy's RFC 8414 document (PKCE S256, registration endpoint), the protected
  resource metadata naming the proxy as the authorization server, the 401 challenge;
- refusals: an unregistered client, a plain-PKCE or PKCE-less /authorize, a foreign `resource`,
  an http redirect URI to another host at /register, a wrong code_verifier at /token;
- the proxy's own PKCE and state at the API's authorization server, with its /oauth/callback;
- two users signed in concurrently, calls interleaved: every call reaches the API with that
  user's API token only (the API names the user back), never with an MCP token;
- the API's token expires: the next call renews it at the tokenUrl (refresh_token grant) and
  goes on; the MCP client's refresh at the proxy's /token works too; the rotated refresh token
  presented again revokes the grant (invalid_grant; the newer access token's calls say to sign
  in again and send nothing; the newer refresh token is refused);
- no API token, MCP token or client secret in results, logs or the audit log; none in clear
  in the SQLite store; a shared store's password (Redis, rediss, PostgreSQL) never in a log
  line or an answer, also when the store cannot be reached;
- the mode per API (`apis:` in a config file): API `per` through the proxy (its client secret in
  OPENAPI_MCP_PER_UPSTREAM_CLIENT_SECRET) and API `keyed` static, a recording upstream each,
  both specs with an oauth2 scheme `apiauth` and an apiKey scheme `api_key`: `per`'s upstream
  gets the user's own API token and never `keyed`'s key; `keyed`'s gets its static key and never
  a user's API token or an MCP token, and its operation's scope (at its own authorization
  server) is not asked of the proxy's tokens.

Usage: oauth_proxy_e2e.py --bin target/debug/openapi-mcp
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import html
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import warnings

os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")  # the test AS is on http://127.0.0.1
warnings.filterwarnings("ignore", message=".*joserfc.*")
warnings.filterwarnings("ignore", message=".*'body' parameter in OAuth2Request.*")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.auth import OAuthClientProvider  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata  # noqa: E402
from oauth_code_as import CodeAuthServer  # noqa: E402
from upstream import RecordingUpstream  # noqa: E402

UPSTREAM_SECRET = "upstream-client-secret-value"
STORE_KEY = "k" * 16 + "-store-key-for-the-e2e-test-0123456789"
LATENCIES: list[float] = []  # seconds per tools/call of the two users (SDK client to API and back)
EXPIRES_IN = 6  # the API's access tokens: renewed from EXPIRES_IN/2 on


def spec(asrv: CodeAuthServer) -> str:
    return f"""
openapi: 3.0.3
info: {{title: Per-user API, version: '1'}}
components:
  securitySchemes:
    apiauth:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: {asrv.authorize_url}
          tokenUrl: {asrv.token_url}
          scopes: {{'pets:read': read pets, 'pets:write': add pets}}
security: [{{apiauth: ['pets:read']}}]
paths:
  /me:
    get:
      operationId: getMe
      responses: {{'200': {{description: ok, content: {{application/json: {{schema: {{type: object}}}}}}}}}}
  /pets:
    post:
      operationId: addPet
      security: [{{apiauth: ['pets:write']}}]
      requestBody:
        content: {{application/json: {{schema: {{type: object, properties: {{name: {{type: string}}}}}}}}}}
      responses: {{'201': {{description: created}}}}
"""


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)
    print(f"  ok: {what}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proxy:
    def __init__(self, binary: str, spec_path: str, base: str | None, store: str, public: str | None = None,
                 env: dict | None = None) -> None:
        """`spec_path` and `base`; or a config file with `apis:` as `spec_path`, `base` None and
        the variables in `env`."""
        port = free_port()
        self.listen = f"http://127.0.0.1:{port}"
        # The public URL (the issuer); another instance's, for instances behind one address.
        self.origin = public or self.listen
        self.url = f"{self.origin}/mcp"
        self.audit = tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False).name
        api = (["--config", spec_path] if base is None
               else [spec_path, "--base-url", base, "--upstream-client-id", "upstream-client"])
        cmd = [binary, "proxy", *api, "--transport", "http", "--listen", f"127.0.0.1:{port}",
               "--oauth-proxy", self.origin,
               "--oauth-store", store if "://" in store else f"sqlite:{store}", "--audit-log", self.audit]
        env = {**os.environ, "RUST_LOG": "debug", "OPENAPI_MCP_STORE_KEY": STORE_KEY,
               **(env if env is not None else {"OPENAPI_MCP_UPSTREAM_CLIENT_SECRET": UPSTREAM_SECRET})}
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
        self.log: list[str] = []
        started = False
        for line in self.proc.stderr:
            self.log.append(line)
            if "over Streamable HTTP at" in line:
                started = True
                break
        check(started, f"the proxy started: {''.join(self.log)[-400:]}")
        check(any(f"register {self.origin}/oauth/callback" in line for line in self.log) or public is not None,
              "the start-up line names the callback URL to register at the API")
        threading.Thread(target=lambda: self.log.extend(self.proc.stderr), daemon=True).start()

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        return "".join(self.log) + open(self.audit).read()


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


CONSENT_FIELD = re.compile(r'<input type="hidden" name="(request|csrf)" value="([^"]*)">')


def consent_form(page_url: str, html_text: str) -> tuple[str, dict]:
    """The proxy's consent page (#36): where its form posts, and its hidden fields."""
    m = re.search(r'<form method="post" action="([^"]+)"', html_text)
    if not m:
        raise AssertionError(f"{page_url}: not a consent page: {html_text[:200]}")
    fields = {k: html.unescape(v) for k, v in CONSENT_FIELD.findall(html_text)}
    return urllib.parse.urljoin(page_url, html.unescape(m.group(1))), fields


def origin_of(url: str) -> str:
    u = urllib.parse.urlsplit(url)
    return f"{u.scheme}://{u.netloc}"


class Browser:
    """Follows the authorization redirects as a user's browser would, signed in at the API's
    authorization server as `user`, keeping its cookies, and approving the proxy's consent page
    as the user would (#36); stops at the client's redirect URI."""

    REDIRECT = "http://127.0.0.1:9/callback"

    def __init__(self, user: str, asrv: CodeAuthServer) -> None:
        self.user, self.asrv = user, asrv
        self.result: AuthorizationCodeResult | None = None
        self.hops: list[str] = []
        self.consents = 0  # consent pages approved
        self.cookies = httpx2.Cookies()

    async def redirect(self, url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False, cookies=self.cookies) as hc:
            try:
                await self._follow(hc, url)
            finally:
                self.cookies = hc.cookies

    async def _follow(self, hc, url: str) -> None:
        for _ in range(10):
            self.hops.append(url)
            if url.startswith(self.REDIRECT):
                q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
                if "error" in q:
                    raise AssertionError(f"authorization failed: {q}")
                self.result = AuthorizationCodeResult(code=q["code"], state=q.get("state"), iss=q.get("iss"))
                return
            headers = {"X-Test-User": self.user} if url.startswith(self.asrv.issuer) else {}
            resp = await hc.get(url, headers=headers)
            if resp.status_code == 200 and "/authorize" in url:
                # The proxy asks the user first: read the page, press "Approve".
                check(resp.headers.get("x-frame-options") == "DENY"
                      and "frame-ancestors 'none'" in resp.headers.get("content-security-policy", ""),
                      "the consent page cannot be framed")
                action, fields = consent_form(url, resp.text)
                resp = await hc.post(action, data={**fields, "decision": "approve"},
                                     headers={"Origin": origin_of(action)})
                self.consents += 1
            if resp.status_code not in (302, 303):
                raise AssertionError(f"{url}: {resp.status_code} {resp.text[:200]}")
            url = resp.headers["location"]
        raise AssertionError("too many redirects")

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


def provider(proxy: Proxy, browser: Browser, storage: Memory, scope: str = "pets:read") -> OAuthClientProvider:
    meta = OAuthClientMetadata(redirect_uris=[Browser.REDIRECT], token_endpoint_auth_method="none",
                               grant_types=["authorization_code", "refresh_token"], client_name=f"e2e {browser.user}",
                               scope=scope)
    return OAuthClientProvider(server_url=proxy.url, client_metadata=meta, storage=storage,
                               redirect_handler=browser.redirect, callback_handler=browser.callback)


def raw(method: str, url: str, **kw):
    with httpx2.Client(follow_redirects=False, timeout=30) as hc:
        return hc.request(method, url, **kw)


def s256(v: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).rstrip(b"=").decode()


def raw_checks(proxy: Proxy, asrv: CodeAuthServer) -> None:
    print("[metadata, challenge and refusals]")
    meta = raw("GET", f"{proxy.origin}/.well-known/oauth-authorization-server").json()
    check(meta["issuer"] == proxy.origin and meta["code_challenge_methods_supported"] == ["S256"]
          and meta["registration_endpoint"] == f"{proxy.origin}/register"
          and sorted(meta["scopes_supported"]) == ["pets:read", "pets:write"],
          f"RFC 8414 metadata: issuer, S256 only, registration, the flow's scopes: {meta}")
    prm = raw("GET", f"{proxy.origin}/.well-known/oauth-protected-resource/mcp").json()
    check(prm["resource"] == proxy.url and prm["authorization_servers"] == [proxy.origin],
          f"protected resource metadata names the proxy as the authorization server: {prm}")
    r = raw("POST", proxy.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"})
    check(r.status_code == 401 and "resource_metadata=" in r.headers.get("www-authenticate", ""),
          f"no token: 401 {r.headers.get('www-authenticate')}")
    bad = raw("POST", f"{proxy.origin}/register", json={"redirect_uris": ["http://evil.example/cb"]})
    check(bad.status_code == 400 and bad.json()["error"] == "invalid_redirect_uri",
          f"/register refuses a plain-http redirect URI to another host: {bad.text}")
    reg = raw("POST", f"{proxy.origin}/register",
              json={"redirect_uris": [Browser.REDIRECT], "token_endpoint_auth_method": "none"})
    check(reg.status_code == 201 and "client_secret" not in reg.json(), "/register: a public client (201)")
    cid = reg.json()["client_id"]
    verifier = "v" * 50
    base = {"response_type": "code", "client_id": cid, "redirect_uri": Browser.REDIRECT, "state": "st-1",
            "code_challenge": s256(verifier), "code_challenge_method": "S256", "resource": proxy.url}
    r = raw("GET", f"{proxy.origin}/authorize", params={**base, "client_id": "nobody"})
    check(r.status_code == 400 and "location" not in r.headers, "/authorize: unknown client, no redirect (400)")
    for label, change, error in (("plain PKCE", {"code_challenge_method": "plain"}, "invalid_request"),
                                 ("no PKCE", {"code_challenge": ""}, "invalid_request"),
                                 ("another resource", {"resource": "http://127.0.0.1:1/mcp"}, "invalid_target"),
                                 ("unknown scope", {"scope": "admin"}, "invalid_scope")):
        r = raw("GET", f"{proxy.origin}/authorize", params={**base, **change})
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(r.headers.get("location", "")).query))
        check(r.status_code == 302 and q.get("error") == error and q.get("state") == "st-1",
              f"/authorize {label}: back to the client with {error}")
    # The consent page first (#36): the user approves it in the same browser (cookies kept).
    browser = httpx2.Client(follow_redirects=False, timeout=30)
    page = browser.get(f"{proxy.origin}/authorize", params=base)
    check(page.status_code == 200 and "location" not in page.headers and "Approve" in page.text,
          "/authorize shows the user the proxy's consent page before anything else")
    action, fields = consent_form(str(page.url), page.text)
    forged = raw("POST", action, data={**fields, "decision": "approve"}, headers={"Origin": proxy.origin})
    check(forged.status_code == 403 and "location" not in forged.headers,
          "the consent form posted without the browser's cookie (CSRF) is refused")
    r = browser.post(action, data={**fields, "decision": "approve"}, headers={"Origin": proxy.origin})
    browser.close()
    up = urllib.parse.urlsplit(r.headers["location"])
    q = dict(urllib.parse.parse_qsl(up.query))
    check(f"{up.scheme}://{up.netloc}{up.path}" == asrv.authorize_url and q["client_id"] == "upstream-client"
          and q["redirect_uri"] == f"{proxy.origin}/oauth/callback" and q["code_challenge_method"] == "S256"
          and q["code_challenge"] != base["code_challenge"] and q["state"] != "st-1",
          "approved, /authorize sends the user to the API's authorizationUrl with the proxy's own client id, callback, PKCE and state")
    # The user signs in; the proxy's code comes back to the client.
    with httpx2.Client(follow_redirects=False, timeout=30) as hc:
        cb = hc.get(r.headers["location"], headers={"X-Test-User": "carol"}).headers["location"]
        back = hc.get(cb).headers["location"]
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(back).query))
    check(back.startswith(Browser.REDIRECT) and q.get("state") == "st-1" and q.get("iss") == proxy.origin and q.get("code"),
          "the callback exchanges the API's code and redirects to the client with the proxy's code, its state and iss")
    form = {"grant_type": "authorization_code", "code": q["code"], "client_id": cid, "redirect_uri": Browser.REDIRECT,
            "code_verifier": "w" * 50, "resource": proxy.url}
    t = raw("POST", f"{proxy.origin}/token", data=form)
    check(t.status_code == 400 and t.json()["error"] == "invalid_grant", f"/token: wrong code_verifier: {t.text}")
    t = raw("POST", f"{proxy.origin}/token", data={**form, "code_verifier": verifier})
    check(t.status_code == 400 and t.json()["error"] == "invalid_grant",
          "/token: a code is spent by its first use, even a failed one")


async def user_session(proxy: Proxy, asrv: CodeAuthServer, user: str, calls: int, seen: list) -> Memory:
    storage, browser = Memory(), Browser(user, asrv)
    async with httpx2.AsyncClient(auth=provider(proxy, browser, storage), timeout=30) as hc:
        async with Client(streamable_http_client(proxy.url, http_client=hc)) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            check(names == ["per_add_pet", "per_get_me"], f"{user}: tools after the OAuth flow: {names}")
            for _ in range(calls):
                t0 = time.perf_counter()
                result = await client.call_tool("per_get_me", {})
                LATENCIES.append(time.perf_counter() - t0)
                text = "".join(getattr(c, "text", "") for c in result.content)
                seen.append((user, text))
                check(not result.is_error and f'"login":"{user}"' in text.replace(" ", ""),
                      f"{user}: get_me answered as {user}")
                await asyncio.sleep(0.05)
            # A scope the token lacks: the 403 challenge (the SDK then steps up; not followed here).
    check(any(h.startswith(asrv.authorize_url) for h in browser.hops), f"{user}: signed in at the API's authorization server")
    check(browser.consents == 1, f"{user}: approved the client on the proxy's consent page once")
    return storage


async def refresh_checks(proxy: Proxy, asrv: CodeAuthServer, storage: Memory, user: str, upstream) -> list:
    """The API's token expired meanwhile: the call renews it. Then the MCP client's own refresh,
    and a replay of the rotated refresh token, which revokes the grant (RFC 9700 §4.14.2).
    Returns what the API got before the revocation."""
    browser = Browser(user, asrv)
    async with httpx2.AsyncClient(auth=provider(proxy, browser, storage), timeout=30) as hc:
        async with Client(streamable_http_client(proxy.url, http_client=hc)) as client:
            result = await client.call_tool("per_get_me", {})
            text = "".join(getattr(c, "text", "") for c in result.content)
            check(not result.is_error and f'"login":"{user}"' in text.replace(" ", ""),
                  f"{user}: after the API token expired, the call renewed it and went through")
    check(browser.hops == [], f"{user}: no new sign-in was needed")
    old = storage.tokens
    form = {"grant_type": "refresh_token", "refresh_token": old.refresh_token, "client_id": storage.info.client_id}
    t = raw("POST", f"{proxy.origin}/token", data=form)
    check(t.status_code == 200 and t.json()["access_token"] != old.access_token, "the proxy's refresh_token grant issues a new token")
    token = t.json()["access_token"]
    h = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}",
         "MCP-Protocol-Version": "2025-11-25"}
    init = raw("POST", proxy.url, headers=h, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    h["Mcp-Session-Id"] = init.headers.get("mcp-session-id", "")
    raw("POST", proxy.url, headers=h, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "per_get_me", "arguments": {}}}
    r = raw("POST", proxy.url, headers=h, json=call)
    body = r.text.replace(" ", "").replace('\\"', '"')
    check(init.status_code == 200 and r.status_code == 200 and f'"login":"{user}"' in body,
          f"{user}: the refreshed MCP token calls get_me as {user}: {r.status_code} {r.text[:160]}")
    sent = upstream.take()
    again = raw("POST", f"{proxy.origin}/token", data=form)
    check(again.status_code == 400 and again.json()["error"] == "invalid_grant" and "revoked" in again.json().get("error_description", ""),
          "the rotated refresh token presented again: invalid_grant, and its grant is revoked (RFC 9700 §4.14.2)")
    r = raw("POST", proxy.url, headers=h, json={**call, "id": 3})
    body = r.text.replace(" ", "").replace('\\"', '"')
    check(r.status_code == 200 and '"isError":true' in body and "Signinagain" in body and '"login"' not in body
          and upstream.take() == [],
          f"{user}: the newer MCP token still passes the gate, but the grant is gone: the call says to sign in again, nothing reaches the API")
    newer = raw("POST", f"{proxy.origin}/token", data={**form, "refresh_token": t.json()["refresh_token"]})
    check(newer.status_code == 400 and newer.json()["error"] == "invalid_grant",
          f"{user}: the newer refresh token of the revoked grant is refused too")
    return sent


KEYED_SPEC = """
openapi: 3.0.3
info: {title: Keyed, version: '1'}
components:
  securitySchemes:
    apiauth:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: https://keyed.example/authorize
          tokenUrl: https://keyed.example/token
          scopes: {'things:read': read things}
    api_key: {type: apiKey, in: header, name: X-Api-Key}
security: [{apiauth: ['things:read']}, {api_key: []}]
paths:
  /things:
    get:
      operationId: getThings
      responses: {'200': {description: ok, content: {application/json: {schema: {type: object}}}}}
"""
STATIC_KEY = "keyed-static-key-value"


def per_api_checks(args, asrv: CodeAuthServer, spec_path: str, upstream: RecordingUpstream) -> list[str]:
    """`apis:` with API `per` through the proxy and `keyed` static. Both specs have the schemes
    `apiauth` (oauth2) and `api_key` as alternatives, the one without a credential first
    (keyed: `apiauth`; per: `api_key`), so the proxy's hook or a key on the wrong API's forwarder
    would be chosen and show in the other's requests."""
    print("[apis: per through the OAuth proxy, keyed static]")
    keyed = RecordingUpstream(lambda rec: (200, {"ok": True}))
    tmp = tempfile.mkdtemp()
    keyed_spec = os.path.join(tmp, "keyed.yaml")
    with open(keyed_spec, "w") as f:
        f.write(KEYED_SPEC)
    per_spec = os.path.join(tmp, "per.yaml")
    with open(spec_path) as f:
        text = f.read()
    for old, new in (("security: [{apiauth: ['pets:read']}]", "security: [{api_key: []}, {apiauth: ['pets:read']}]"),
                     ("  securitySchemes:\n", "  securitySchemes:\n    api_key: {type: apiKey, in: header, name: X-Api-Key}\n")):
        assert old in text, old
        text = text.replace(old, new)
    with open(per_spec, "w") as f:
        f.write(text)
    config = os.path.join(tmp, "apis.yaml")
    with open(config, "w") as f:
        f.write(f"""apis:
  - name: per
    spec: {per_spec}
    base-url: http://127.0.0.1:{upstream.port}
    upstream-auth: oauth-proxy
    upstream-client-id: upstream-client
  - name: keyed
    spec: {keyed_spec}
    base-url: http://127.0.0.1:{keyed.port}
""")
    # The client secret only in the API's own variable (the single-API one unset).
    env = {"OPENAPI_MCP_PER_UPSTREAM_CLIENT_SECRET": UPSTREAM_SECRET, "OPENAPI_MCP_KEYED_API_KEY": STATIC_KEY,
           "OPENAPI_MCP_UPSTREAM_CLIENT_SECRET": ""}
    proxy = Proxy(args.bin, config, None, os.path.join(tmp, "oauth.sqlite3"), env=env)
    asrv.allow_redirect(f"{proxy.origin}/oauth/callback")
    check(any("API per, scheme apiauth" in line for line in proxy.log), "the start-up line names the API behind the proxy")
    upstream.take()

    async def session() -> Memory:
        storage, browser = Memory(), Browser("erin", asrv)
        async with httpx2.AsyncClient(auth=provider(proxy, browser, storage), timeout=30) as hc:
            async with Client(streamable_http_client(proxy.url, http_client=hc)) as client:
                names = sorted(t.name for t in (await client.list_tools()).tools)
                check(names == ["keyed_get_things", "per_add_pet", "per_get_me"], f"erin: both APIs' tools: {names}")
                for _ in range(3):
                    for name in ("per_get_me", "keyed_get_things"):
                        result = await client.call_tool(name, {})
                        text = "".join(getattr(c, "text", "") for c in result.content)
                        check(not result.is_error, f"erin: {name} succeeds: {text[:120]}")
        return storage

    try:
        storage = asyncio.run(session())
        to_per, to_keyed = upstream.take(), keyed.take()
        check(len(to_per) == 3 and all(r["user"] == "erin" and "x-api-key" not in r["headers"] for r in to_per),
              "per's upstream: erin's own API token on each call, never keyed's static key")
        api_tokens = list(asrv.tokens) + list(asrv.refresh)
        mcp = [storage.tokens.access_token, storage.tokens.refresh_token]
        check(len(to_keyed) == 3 and all(r["headers"].get("x-api-key") == STATIC_KEY and "authorization" not in r["headers"]
                                         and not any(t in json.dumps(r["headers"]) for t in api_tokens + mcp)
                                         for r in to_keyed),
              "keyed's upstream: its static key on each call, never erin's API token or an MCP token")
    finally:
        text = proxy.stop()
    check(STATIC_KEY not in text and UPSTREAM_SECRET not in text, "no static key or client secret in the logs")
    return mcp


def shared_store_checks(args, asrv: CodeAuthServer, spec_path: str, base: str) -> list[str]:
    """Two instances behind one public URL share a Redis store and the store key: a user who
    signed in through one is served by the other. Skipped (and said so) without redis-server."""
    import shutil

    if shutil.which("redis-server") is None:
        print("[two instances, one Redis store] skipped: no redis-server on PATH (apt-get install redis-server)")
        return []
    print("[two instances, one Redis store]")
    port = free_port()
    redis_password = "redis-password-for-the-e2e-test"
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                              "--requirepass", redis_password],
                             stdout=subprocess.DEVNULL)
    tokens: list[str] = []
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        store = f"redis://:{redis_password}@127.0.0.1:{port}"
        a = Proxy(args.bin, spec_path, base, store)
        b = Proxy(args.bin, spec_path, base, store, public=a.origin)
        asrv.allow_redirect(f"{a.origin}/oauth/callback")
        try:
            storage = asyncio.run(user_session(a, asrv, "dave", 1, []))
            tokens += [storage.tokens.access_token, storage.tokens.refresh_token]
            h = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {storage.tokens.access_token}",
                 "MCP-Protocol-Version": "2025-11-25"}
            other = f"{b.listen}/mcp"
            init = raw("POST", other, headers=h, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
            h["Mcp-Session-Id"] = init.headers.get("mcp-session-id", "")
            raw("POST", other, headers=h, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            r = raw("POST", other, headers=h, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                   "params": {"name": "per_get_me", "arguments": {}}})
            body = r.text.replace(" ", "").replace('\\"', '"')
            check(r.status_code == 200 and '"login":"dave"' in body,
                  "dave signed in through instance A; instance B serves his call with his API token (shared Redis store)")
            t = raw("POST", f"{b.listen}/token", data={"grant_type": "refresh_token", "client_id": storage.info.client_id,
                                                        "refresh_token": storage.tokens.refresh_token})
            check(t.status_code == 200, "instance B redeems the refresh token instance A issued")
            tokens.append(t.json().get("access_token", ""))
            t = raw("POST", f"{a.listen}/token", data={"grant_type": "refresh_token", "client_id": storage.info.client_id,
                                                        "refresh_token": storage.tokens.refresh_token})
            check(t.status_code == 400 and "revoked" in t.json().get("error_description", ""),
                  "and instance A then refuses it (one use across instances) and revokes the grant: a replay")
        finally:
            text = a.stop() + b.stop()
        check(not any(tok and tok in text for tok in tokens) and f"redis://127.0.0.1:{port}/0" in "".join(a.log)
              and UPSTREAM_SECRET not in text and redis_password not in text,
              "no token or secret in either instance's logs (the store is named without its password)")
    finally:
        redis.terminate()
        redis.wait(timeout=10)
    return tokens


def store_password_checks(args, spec_path: str, base: str) -> None:
    """Shared stores named with a password, unreachable: the start-up line and the error logged
    when a request needs the store name them without it, and the client gets 503."""
    print("[store URLs with a password]")
    secret = "store-url-password-e2e"
    for store, shown in [(f"postgres://app:{secret}@127.0.0.1:{free_port()}/oauth", "postgres://app@127.0.0.1:"),
                         (f"rediss://:{secret}@127.0.0.1:{free_port()}/2", "rediss://127.0.0.1:")]:
        proxy = Proxy(args.bin, spec_path, base, store)
        try:
            r = raw("POST", f"{proxy.origin}/register", json={"redirect_uris": ["http://127.0.0.1:5000/cb"],
                                                              "token_endpoint_auth_method": "none"})
            time.sleep(0.2)
        finally:
            text = proxy.stop()
        check(r.status_code == 503 and r.json()["error"] == "temporarily_unavailable" and secret not in r.text,
              f"{shown}…: the store cannot be reached: 503 temporarily_unavailable")
        check(f"store {shown}" in text and text.count(shown) >= 2 and secret not in text,
              f"{shown}…: named in the start-up line and the logged error, never with its password")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    asrv = CodeAuthServer("upstream-client", UPSTREAM_SECRET, ["pets:read", "pets:write"], expires_in=EXPIRES_IN)

    def respond(rec):
        user = asrv.user_of(rec["headers"].get("authorization"))
        rec["user"] = user
        if user is None:
            return 401, {"message": "Bad credentials"}
        if rec["target"].startswith("/me"):
            return 200, {"login": user}
        return 201, {"id": 1, "owner": user}

    upstream = RecordingUpstream(respond)
    tmp = tempfile.mkdtemp()
    spec_path = os.path.join(tmp, "api.yaml")
    with open(spec_path, "w") as f:
        f.write(spec(asrv))
    store = os.path.join(tmp, "oauth.sqlite3")
    proxy = Proxy(args.bin, spec_path, f"http://127.0.0.1:{upstream.port}", store)
    asrv.allow_redirect(f"{proxy.origin}/oauth/callback")
    mcp_tokens: list[str] = []
    try:
        raw_checks(proxy, asrv)
        upstream.take()
        print("[two users at once]")
        seen: list = []

        async def both():
            return await asyncio.gather(user_session(proxy, asrv, "alice", 6, seen),
                                        user_session(proxy, asrv, "bob", 6, seen))

        alice, bob = asyncio.run(both())
        mcp_tokens += [alice.tokens.access_token, alice.tokens.refresh_token, bob.tokens.access_token, bob.tokens.refresh_token]
        sent = upstream.take()
        check(len(sent) == 12 and all(r["user"] in ("alice", "bob") for r in sent),
              f"the API got 12 calls, each with a live user token: {[r['user'] for r in sent]}")
        check(sorted(u for u, _ in seen) == ["alice"] * 6 + ["bob"] * 6, "each user's 6 calls answered as that user")
        check(len({r["headers"]["authorization"] for r in sent}) >= 2, "two users, two API tokens")
        check(not any(t in r["headers"].get("authorization", "") for r in sent for t in mcp_tokens),
              "no MCP token reaches the API")
        check(asrv.challenges and all(m == "S256" and u == f"{proxy.origin}/oauth/callback" for m, u in asrv.challenges),
              "the API's authorization server saw the proxy's S256 PKCE and callback")
        print("[the API token expires]")
        time.sleep(EXPIRES_IN + 1)
        before = asrv.grants_seen.count("refresh_token")
        sent = asyncio.run(refresh_checks(proxy, asrv, alice, "alice", upstream))
        check(asrv.grants_seen.count("refresh_token") > before, "the proxy renewed alice's API token at the tokenUrl (refresh_token grant)")
        check(sent and all(r["user"] == "alice" for r in sent), "after renewal, alice's calls carry alice's new API token")
        mcp_tokens += shared_store_checks(args, asrv, spec_path, f"http://127.0.0.1:{upstream.port}")
        store_password_checks(args, spec_path, f"http://127.0.0.1:{upstream.port}")
        mcp_tokens += per_api_checks(args, asrv, spec_path, upstream)
    finally:
        text = proxy.stop()
    api_tokens = list(asrv.tokens) + list(asrv.refresh)
    check(len(api_tokens) >= 4, f"the API issued {len(api_tokens)} tokens")
    check(not any(t in text for t in api_tokens + mcp_tokens) and UPSTREAM_SECRET not in text and STORE_KEY not in text,
          "no API token, MCP token, client secret or store key in the logs or the audit log")
    audit = [json.loads(line) for line in open(proxy.audit) if line.strip()]
    check(len(audit) >= 13 and all(a["caller"].get("subject") for a in audit if a["tool"] == "per_get_me"),
          f"the audit log has the calls, each with its grant as subject ({len(audit)} lines)")
    blob = b""
    for suffix in ("", "-wal"):
        if os.path.exists(store + suffix):
            blob += open(store + suffix, "rb").read()
    check(blob and b"upstream-at-" not in blob and b"upstream-rt-" not in blob and b"pets:read" not in blob,
          "the store holds the API tokens sealed (no token, not even a scope, in clear)")
    check(not re.search(r"upstream-(at|rt)-", "".join(t for _, t in [("", x[1]) for x in seen])), "no API token in any result")
    lat = sorted(LATENCIES)
    print(f"  tools/call through the proxy (user's API token looked up, unsealed, sent): median {1000 * lat[len(lat) // 2]:.1f} ms, "
          f"max {1000 * lat[-1]:.1f} ms over {len(lat)} calls")
    print("oauth proxy e2e: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
