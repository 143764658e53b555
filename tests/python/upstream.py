"""A recording HTTP upstream on 127.0.0.1:0 for the end-to-end scripts (stdlib only)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# A request as recorded: method, target (path and query as sent), headers (lower-cased names ->
# value), header_list (every header line as sent, in order), body (bytes).
Recorded = dict
# What to answer: a status and a JSON payload (None: an empty body).
Responder = Callable[[Recorded], "tuple[int, object]"]


class RecordingUpstream:
    """Records every request and answers with `respond(request)`."""

    def __init__(self, respond: Responder) -> None:
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                rec = {
                    "method": self.command,
                    "target": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "header_list": list(self.headers.items()),
                    "body": body,
                }
                with upstream.lock:
                    upstream.requests.append(rec)
                status, payload = respond(rec)
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                if payload is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle
            do_HEAD = do_OPTIONS = do_TRACE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self) -> list[Recorded]:
        with self.lock:
            out, self.requests = self.requests, []
        return out
