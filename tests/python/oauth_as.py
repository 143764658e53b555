"""A small OAuth 2.1 authorization server built on Authlib (PyPI), for the resource-server tests
of `--oauth-issuer` (#21). Authlib does the protocol: client authentication
(client_secret_basic / client_secret_post), the client_credentials grant, scope checks and RFC 9068
JWT access tokens signed with an RSA key it generates. This module only adapts it to
http.server, publishes the RFC 8414 metadata and the JWKS, and puts the RFC 8707 `resource`
parameter into the token's `aud`.

    server = AuthServer({"client-a": ("secret-a", "pets:read pets:write")})
    server.issuer            # http://127.0.0.1:PORT
    server.token("client-a", "secret-a", scope="pets:read", resource="http://.../mcp")
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from authlib.jose import JsonWebKey
from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, OAuth2Request, grants
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator


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
        return grant_type == "client_credentials"


class _Server(AuthorizationServer):
    def __init__(self, clients: dict[str, Client], scopes: list[str]) -> None:
        super().__init__(scopes_supported=scopes)
        self.clients = clients

    def query_client(self, client_id):
        return self.clients.get(client_id)

    def save_token(self, token, request):
        pass

    def send_signal(self, name, *args, **kwargs):
        pass

    def create_oauth2_request(self, request):
        method, uri, headers, form = request
        req = OAuth2Request(method, uri, headers=headers)
        req.payload = BasicOAuth2Payload(form)
        return req

    def handle_response(self, status, body, headers):
        return status, body, headers


class AuthServer:
    """The authorization server on 127.0.0.1:0, in a thread."""

    def __init__(self, clients: dict[str, tuple[str, str]]) -> None:
        self.key = JsonWebKey.generate_key("RSA", 2048, {"kid": "as-key-1", "alg": "RS256", "use": "sig"}, is_private=True)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.issuer = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        all_scopes = sorted({s for _, scopes in clients.values() for s in scopes.split()})
        self.server = _Server({cid: Client(cid, sec, sc) for cid, (sec, sc) in clients.items()}, all_scopes)
        self.resource = threading.local()
        this = self

        class Tokens(JWTBearerTokenGenerator):
            def get_jwks(self):
                return {"keys": [this.key.as_dict(is_private=True)]}

            def get_audiences(self, client, user, scope):
                # RFC 8707: the token is for the resource the client asked for.
                return getattr(this.resource, "value", None) or client.get_client_id()

        self.server.register_grant(grants.ClientCredentialsGrant)
        self.server.register_token_generator("default", Tokens(issuer=self.issuer))
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
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
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
                if self.path != "/token":
                    self._send(404, {"error": "not_found"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                headers = {k: v for k, v in self.headers.items()}
                with this.lock:
                    this.resource.value = form.get("resource")
                    status, body, hdrs = this.server.create_token_response(
                        ("POST", this.issuer + "/token", headers, form)
                    )
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

    def close(self) -> None:
        self.httpd.shutdown()
