"""The API's own authorization server for the `--oauth-proxy` tests (#21): Authlib (PyPI) doing the
authorization-code grant with PKCE required (RFC 7636, S256), the refresh-token grant (rotating
refresh tokens) and client authentication by `client_secret_post` / `client_secret_basic`.
Authlib does the protocol; this module adapts it to http.server and approves every request
automatically for the user a test names in the `X-Test-User` header of the `/authorize` request
(standing in for a signed-in browser session).

Access tokens are opaque (Authlib's bearer generator) and short-lived (`expires_in` given), and
the server remembers which user each one belongs to, so the recording API (`user_of`) can say
whose token a request carried.

    asrv = CodeAuthServer("upstream-client", "upstream-secret-value", ["repo", "user"], expires_in=3)
    asrv.issuer, asrv.authorize_url, asrv.token_url
"""

from __future__ import annotations

import threading
import warnings
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, OAuth2Request, TokenMixin, grants
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc7636 import CodeChallenge

# This adapter hands Authlib the form as the request body, which it still accepts with a warning.
warnings.filterwarnings("ignore", message=".*'body' parameter in OAuth2Request.*")


class Client(ClientMixin):
    def __init__(self, client_id: str, secret: str, scopes: list[str]) -> None:
        self.client_id, self.secret, self.scopes = client_id, secret, scopes
        self.redirect_uris: list[str] = []

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope):
        return " ".join(s for s in (scope or "").split() if s in self.scopes)

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret):
        return client_secret == self.secret

    def check_endpoint_auth_method(self, method, endpoint):
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type in ("authorization_code", "refresh_token")


class Code(AuthorizationCodeMixin):
    def __init__(self, code, client_id, redirect_uri, scope, user, challenge, method) -> None:
        self.code, self.client_id, self.redirect_uri, self.scope, self.user = code, client_id, redirect_uri, scope, user
        self.code_challenge, self.code_challenge_method = challenge, method
        self.at = time.time()

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope


class Token(TokenMixin):
    def __init__(self, data: dict, client_id: str, user: str) -> None:
        self.data, self.client_id, self.user = data, client_id, user
        self.revoked = False

    def check_client(self, client):
        return client.get_client_id() == self.client_id

    def get_scope(self):
        return self.data.get("scope", "")

    def get_expires_in(self):
        return self.data.get("expires_in", 0)

    def is_revoked(self):
        return self.revoked

    def is_expired(self):
        return False


class CodeAuthServer:
    """The API's authorization server on 127.0.0.1:0, in a thread."""

    def __init__(self, client_id: str, secret: str, scopes: list[str], expires_in: int = 3600,
                 default_user: str | None = None) -> None:
        # default_user: who is signed in when a request names nobody (for clients that cannot
        # send X-Test-User, such as the conformance suite's).
        self.default_user = default_user
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.issuer = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.authorize_url = f"{self.issuer}/login/oauth/authorize"
        self.token_url = f"{self.issuer}/login/oauth/access_token"
        self.client = Client(client_id, secret, scopes)
        self.codes: dict[str, Code] = {}
        self.tokens: dict[str, Token] = {}  # access token -> token
        self.refresh: dict[str, Token] = {}  # refresh token -> token
        self.grants_seen: list[str] = []  # grant_type of each successful token request
        self.challenges: list[tuple[str, str]] = []  # (code_challenge_method, redirect_uri) per code
        self.lock = threading.Lock()
        this = self

        class _Server(AuthorizationServer):
            def query_client(self, cid):
                return this.client if cid == this.client.client_id else None

            def save_token(self, token, request):
                t = Token(dict(token), request.client.get_client_id(), request.user)
                this.tokens[token["access_token"]] = t
                if token.get("refresh_token"):
                    this.refresh[token["refresh_token"]] = t

            def send_signal(self, name, *args, **kwargs):
                pass

            def create_oauth2_request(self, request):
                if isinstance(request, OAuth2Request):
                    return request
                method, uri, headers, form = request
                req = OAuth2Request(method, uri, body=form, headers=headers)
                req.payload = BasicOAuth2Payload(form)
                return req

            def handle_response(self, status, body, headers):
                return status, body, headers

        class CodeGrant(grants.AuthorizationCodeGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

            def save_authorization_code(self, code, request):
                p = request.payload.data
                this.codes[code] = Code(code, request.client.get_client_id(), p.get("redirect_uri"), request.scope,
                                        request.user, p.get("code_challenge"), p.get("code_challenge_method"))
                this.challenges.append((p.get("code_challenge_method"), p.get("redirect_uri")))

            def query_authorization_code(self, code, client):
                c = this.codes.get(code)
                if c and c.client_id == client.get_client_id() and time.time() - c.at < 60:
                    return c
                return None

            def delete_authorization_code(self, authorization_code):
                this.codes.pop(authorization_code.code, None)

            def authenticate_user(self, authorization_code):
                return authorization_code.user

        class RefreshGrant(grants.RefreshTokenGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]
            INCLUDE_NEW_REFRESH_TOKEN = True

            def authenticate_refresh_token(self, refresh_token):
                t = this.refresh.get(refresh_token)
                return t if t and not t.revoked else None

            def authenticate_user(self, credential):
                return credential.user

            def revoke_old_credential(self, credential):
                credential.revoked = True

        self.server = _Server(scopes_supported=scopes)
        self.server.register_grant(CodeGrant, [CodeChallenge(required=True)])
        self.server.register_grant(RefreshGrant)
        self.server.register_token_generator(
            "default",
            lambda grant_type, client, user=None, scope=None, expires_in=None, include_refresh_token=True: {
                "token_type": "Bearer",
                "access_token": "upstream-at-" + __import__("secrets").token_urlsafe(24),
                "expires_in": this.expires_in,
                "scope": scope or "",
                **({"refresh_token": "upstream-rt-" + __import__("secrets").token_urlsafe(24)} if include_refresh_token else {}),
            },
        )
        self.expires_in = expires_in
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def allow_redirect(self, uri: str) -> None:
        self.client.redirect_uris.append(uri)

    def user_of(self, authorization: str | None) -> str | None:
        """The user whose live access token an `Authorization: Bearer …` header carries."""
        if not authorization or not authorization.startswith("Bearer "):
            return None
        t = self.tokens.get(authorization[len("Bearer "):])
        if t is None or t.revoked:
            return None
        return t.user

    def _handler(self):
        this = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body, headers=()) -> None:
                import json

                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                hdrs = dict(headers)
                if "Location" not in hdrs:
                    self.send_header("Content-Type", "application/json")
                for k, v in hdrs.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                if path != "/login/oauth/authorize":
                    self._send(404, {"error": "not_found"})
                    return
                user = self.headers.get("X-Test-User") or this.default_user
                form = dict(urllib.parse.parse_qsl(query))
                headers = {k: v for k, v in self.headers.items()}
                with this.lock:
                    req = ("GET", this.issuer + self.path, headers, form)
                    if not user:
                        self._send(401, {"error": "login_required"})
                        return
                    grant = this.server.get_consent_grant(req, end_user=user)
                    status, body, hdrs = this.server.create_authorization_response(
                        this.server.create_oauth2_request(req), grant_user=user, grant=grant
                    )
                self._send(status, body, hdrs)

            def do_POST(self) -> None:
                if self.path != "/login/oauth/access_token":
                    self._send(404, {"error": "not_found"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                headers = {k: v for k, v in self.headers.items()}
                with this.lock:
                    status, body, hdrs = this.server.create_token_response(
                        ("POST", this.token_url, headers, form)
                    )
                    if status == 200:
                        this.grants_seen.append(form.get("grant_type", ""))
                self._send(status, body, hdrs)

        return Handler

    def close(self) -> None:
        self.httpd.shutdown()
