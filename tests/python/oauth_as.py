"""A small OAuth 2.1 authorization server built on Authlib (PyPI), for the resource-server tests
of `--oauth-issuer` (#21). Authlib does the protocol: client authentication
(client_secret_basic / client_secret_post), the client_credentials grant, scope checks, RFC 9068
JWT access tokens signed with an RSA key it generates, and RFC 7662 introspection
(IntrospectionEndpoint). This module adapts it to http.server, publishes the RFC 8414 metadata
and the JWKS, puts the RFC 8707 `resource` parameter into the token's `aud`, and adds what
Authlib leaves to the application: opaque tokens (`opaque=True`), their records (for
introspection and revocation), and an RFC 8693 token-exchange grant (Authlib has no
implementation of that grant, only its grant-type hooks) that trades a token this server issued
for one whose audience is the `resource` (or `audience`) asked for, same subject and scope.

    server = AuthServer({"client-a": ("secret-a", "pets:read pets:write")}, opaque=True)
    server.issuer            # http://127.0.0.1:PORT
    server.token("client-a", "secret-a", scope="pets:read", resource="http://.../mcp")
    server.revoke(token)     # introspection says active: false from now on
    server.exchanged         # [(subject token's sub, issued token, audience)] in order
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from authlib.jose import JsonWebKey
from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, InvalidRequestError, OAuth2Request, UnauthorizedClientError, grants
from authlib.oauth2.rfc6749.errors import InvalidGrantError
from authlib.oauth2.rfc6749.grants.base import BaseGrant, TokenEndpointMixin
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
LIFETIME = 3600


class Client(ClientMixin):
    def __init__(self, client_id: str, secret: str, scopes: str) -> None:
        self.client_id, self.secret, self.scopes = client_id, secret, scopes.split()

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        return " ".join(s for s in (scope or "").split() if s in self.scopes)

    def check_redirect_uri(self, redirect_uri):
        return False

    def check_client_secret(self, client_secret):
        return client_secret == self.secret

    def check_endpoint_auth_method(self, method, endpoint):
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type):
        return False

    def check_grant_type(self, grant_type):
        # Every client may get tokens; token exchange is for the resource server's client.
        return grant_type == "client_credentials" or (grant_type == TOKEN_EXCHANGE and self.exchanges)

    exchanges = False


class User:
    def __init__(self, sub: str) -> None:
        self.sub = sub

    def get_user_id(self):
        return self.sub


class Record:
    """An issued token as introspection sees it."""

    def __init__(self, claims: dict) -> None:
        self.claims, self.revoked = claims, False

    def is_expired(self):
        return self.claims["exp"] < time.time()

    def is_revoked(self):
        return self.revoked


class Introspection(IntrospectionEndpoint):
    CLIENT_AUTH_METHODS = ["client_secret_basic"]

    def query_token(self, token_string, token_type_hint):
        return self.server.records.get(token_string)

    def check_permission(self, token, client, request):
        return client.client_id in self.server.introspectors

    def introspect_token(self, token):
        return {"active": True, "token_type": "Bearer", **token.claims}


class TokenExchange(BaseGrant, TokenEndpointMixin):
    """RFC 8693: subject_token (an access token this server issued, active) for a new access
    token for `resource` / `audience`, with the subject's `sub` and scope."""

    GRANT_TYPE = TOKEN_EXCHANGE
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def validate_token_request(self):
        client = self.authenticate_token_endpoint_client()
        if not client.check_grant_type(self.GRANT_TYPE):
            raise UnauthorizedClientError("this client may not exchange tokens")
        form = self.request.payload.data
        if form.get("subject_token_type") != ACCESS_TOKEN_TYPE:
            raise InvalidRequestError("subject_token_type must be an access token")
        record = self.server.records.get(form.get("subject_token") or "")
        if record is None or record.is_expired() or record.is_revoked():
            raise InvalidGrantError("the subject token is not active")
        if not (form.get("resource") or form.get("audience")):
            raise InvalidRequestError("resource or audience is required")
        self.request.client = client
        self.subject = record

    def create_token_response(self):
        form = self.request.payload.data
        audience = form.get("resource") or form.get("audience")
        self.server.audience_of_next = audience
        self.request.user = User(self.subject.claims["sub"])
        token = self.generate_token(
            user=self.request.user,
            scope=self.subject.claims.get("scope"),
            include_refresh_token=False,
        )
        token["issued_token_type"] = ACCESS_TOKEN_TYPE
        self.server.exchanged.append((self.subject.claims["sub"], token["access_token"], audience))
        self.save_token(token)
        return 200, token, self.TOKEN_RESPONSE_HEADER


class _Request(OAuth2Request):
    @property
    def form(self):
        # The endpoints (introspection) read the form here, the grants through `payload`.
        return self.payload.data


class _Server(AuthorizationServer):
    def __init__(self, clients: dict[str, Client], scopes: list[str]) -> None:
        super().__init__(scopes_supported=scopes)
        self.clients = clients
        self.records: dict[str, Record] = {}
        self.introspectors: set[str] = set()
        self.exchanged: list[tuple[str, str, str]] = []
        self.audience_of_next = None
        self.issuer = ""

    def query_client(self, client_id):
        return self.clients.get(client_id)

    def save_token(self, token, request):
        # What introspection answers about this token (a JWT's claims are the same).
        user = getattr(request, "user", None)
        now = int(time.time())
        self.records[token["access_token"]] = Record({
            "iss": self.issuer,
            "sub": user.get_user_id() if user else request.client.get_client_id(),
            "aud": self.audience_of_next or request.client.get_client_id(),
            "scope": token.get("scope", ""),
            "client_id": request.client.get_client_id(),
            "iat": now,
            "exp": now + int(token.get("expires_in", LIFETIME)),
        })

    def send_signal(self, name, *args, **kwargs):
        pass

    def create_oauth2_request(self, request):
        method, uri, headers, form = request
        req = _Request(method, uri, headers=headers)
        req.payload = BasicOAuth2Payload(form)
        return req

    def handle_response(self, status, body, headers):
        return status, body, headers


class AuthServer:
    """The authorization server on 127.0.0.1:0, in a thread."""

    def __init__(self, clients: dict[str, tuple[str, str]], opaque: bool = False, introspectors=(), exchangers=()) -> None:
        """`opaque`: access tokens are random strings (introspect them) rather than JWTs;
        `introspectors`: the clients allowed at /introspect; `exchangers`: the clients allowed
        the token-exchange grant."""
        self.key = JsonWebKey.generate_key("RSA", 2048, {"kid": "as-key-1", "alg": "RS256", "use": "sig"}, is_private=True)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.issuer = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        all_scopes = sorted({s for _, scopes in clients.values() for s in scopes.split()})
        registered = {cid: Client(cid, sec, sc) for cid, (sec, sc) in clients.items()}
        for cid in exchangers:
            registered[cid].exchanges = True
        self.server = _Server(registered, all_scopes)
        self.server.issuer = self.issuer
        self.server.introspectors = set(introspectors)
        this = self

        class Tokens(JWTBearerTokenGenerator):
            def get_jwks(self):
                return {"keys": [this.key.as_dict(is_private=True)]}

            def get_audiences(self, client, user, scope):
                # RFC 8707: the token is for the resource the client asked for.
                return this.server.audience_of_next or client.get_client_id()

        def opaque_tokens(grant_type, client, user=None, scope=None, expires_in=None, include_refresh_token=True):
            token = {"token_type": "Bearer", "access_token": "opaque-" + secrets.token_urlsafe(24), "expires_in": LIFETIME}
            if scope:
                token["scope"] = scope
            return token

        self.server.register_grant(grants.ClientCredentialsGrant)
        self.server.register_grant(TokenExchange)
        self.server.register_endpoint(Introspection)
        self.server.register_token_generator("default", opaque_tokens if opaque else Tokens(issuer=self.issuer))
        self.lock = threading.Lock()
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def metadata(self) -> dict:
        return {
            "issuer": self.issuer,
            # Required by RFC 8414 (and the MCP SDK's model) though only client_credentials is
            # served: /authorize answers unsupported_response_type.
            "authorization_endpoint": f"{self.issuer}/authorize",
            "response_types_supported": ["code"],
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "grant_types_supported": ["client_credentials", TOKEN_EXCHANGE],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "introspection_endpoint": f"{self.issuer}/introspect",
            "scopes_supported": self.server.scopes_supported,
        }

    def _handler(self):
        this = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body, headers=()) -> None:
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/.well-known/oauth-authorization-server":
                    self._send(200, this.metadata())
                elif self.path == "/jwks":
                    self._send(200, {"keys": [this.key.as_dict(is_private=False)]})
                elif self.path.startswith("/authorize"):
                    self._send(400, {"error": "unsupported_response_type"})
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self) -> None:
                if self.path not in ("/token", "/introspect"):
                    self._send(404, {"error": "not_found"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                # Authlib looks headers up by their canonical names; HTTP/1.1 clients may send
                # them in any case (reqwest: lower case).
                headers = {k.title(): v for k, v in self.headers.items()}
                request = ("POST", this.issuer + self.path, headers, form)
                with this.lock:
                    if self.path == "/introspect":
                        status, body, hdrs = this.server.create_endpoint_response("introspection", request)
                    else:
                        # RFC 8707: the token is for the resource the client asked for (the
                        # token-exchange grant sets its own).
                        this.server.audience_of_next = form.get("resource")
                        status, body, hdrs = this.server.create_token_response(request)
                        this.server.audience_of_next = None
                self._send(status, body, hdrs)

        return Handler

    def token(self, client_id: str, secret: str, scope: str, resource: str) -> str:
        """An access token by the client_credentials grant (client_secret_basic)."""
        form = urllib.parse.urlencode({"grant_type": "client_credentials", "scope": scope, "resource": resource})
        basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
        req = urllib.request.Request(
            f"{self.issuer}/token",
            data=form.encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded", "Authorization": f"Basic {basic}"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())["access_token"]

    def revoke(self, token: str) -> None:
        """Introspection says `active: false` for this token from now on."""
        with self.lock:
            self.server.records[token].revoked = True

    @property
    def exchanged(self) -> list[tuple[str, str, str]]:
        with self.lock:
            return list(self.server.exchanged)

    def close(self) -> None:
        self.httpd.shutdown()


def serve_forever(clients: dict[str, list[str]], **options) -> None:
    """For tests in other languages (tests/typescript/oauth.mjs): prints the issuer on stdout,
    serves until stdin closes."""
    import sys

    server = AuthServer({cid: tuple(v) for cid, v in clients.items()}, **options)
    print(server.issuer, flush=True)
    sys.stdin.read()
    server.close()
