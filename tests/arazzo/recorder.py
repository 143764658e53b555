"""The recording stand-in upstream of the Arazzo comparison (stdlib only).

Serves the two fixture APIs on one 127.0.0.1 port: the shop (`/shop/...`, API key header
`X-API-Key`) and the shipping API (`/ship/...`, bearer token). Every request is recorded
(method, path, query pairs in order, the headers that matter, the body parsed as JSON when it
is JSON) and answered deterministically; the only state is per-path call counters, which make
the polling loop (`GET /shop/orders/{id}`: `pending` twice, then `ready`) and the retry case
(`GET /shop/inventory`: 503 with `Retry-After: 1` twice, then 200; `POST /shop/reservations`:
429 with `Retry-After: 1` once, then 201) repeatable.

Control endpoints (not recorded): `POST /__reset` clears the log and the counters,
`GET /__log` returns the log as JSON.

Usage: python3 recorder.py PORT_FILE   (binds 127.0.0.1:0, writes the port to PORT_FILE)
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

# Headers recorded: credentials, the body's type, and the header parameters of the fixtures.
# Others (User-Agent, Accept, traceparent, ...) differ between any two HTTP clients.
RECORDED_HEADERS = ("authorization", "x-api-key", "content-type", "x-request-tag")

PETS = [
    {"id": 1, "name": "Rex", "status": "available", "price": 30},
    {"id": 2, "name": "Tom", "status": "available", "price": 12},
    {"id": 3, "name": "Kit", "status": "sold", "price": 8},
    {"id": 4, "name": "Bo", "status": "available", "price": 25},
]

lock = threading.Lock()
log: list[dict] = []
counters: dict[str, int] = {}


def count(key: str) -> int:
    """How many times `key` was requested before this request (0 the first time)."""
    n = counters.get(key, 0)
    counters[key] = n + 1
    return n


def respond(method: str, path: str, query: list, headers: dict, body) -> tuple[int, dict, object]:
    """(status, extra headers, JSON payload or None) for a recorded request."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["shop"]:
        if headers.get("x-api-key") != "shop-key-123":
            return 401, {}, {"error": "missing or wrong X-API-Key"}
        rest = parts[1:]
        if method == "GET" and rest == ["pets"]:
            q = dict(query)
            pets = [p for p in PETS if p["status"] == q.get("status", "available")]
            pets.sort(key=lambda p: p["price"])
            limit = int(q.get("limit", "10"))
            return 200, {}, pets[:limit]
        if method == "GET" and len(rest) == 2 and rest[0] == "pets":
            for p in PETS:
                if str(p["id"]) == rest[1]:
                    return 200, {}, p
            return 404, {}, {"error": "no such pet"}
        if method == "POST" and rest == ["orders"]:
            if not isinstance(body, dict) or "petId" not in body:
                return 400, {}, {"error": "petId required"}
            n = count("orders")
            discount = 5 if body.get("coupon") == "SAVE5" else 0
            return 201, {"Location": f"/shop/orders/{100 + n}"}, {
                "id": 100 + n,
                "petId": body["petId"],
                "quantity": body.get("quantity", 1),
                "discount": discount,
                "status": "placed",
            }
        if method == "GET" and len(rest) == 2 and rest[0] == "orders":
            n = count("GET /orders/" + rest[1])
            return 200, {}, {"id": int(rest[1]) if rest[1].isdigit() else rest[1],
                             "status": "pending" if n < 2 else "ready"}
        if method == "POST" and rest == ["reservations"]:
            n = count("reservations")
            if n < 1:
                return 429, {"Retry-After": "1"}, {"error": "too many reservations, slow down"}
            return 201, {}, {"id": f"R-{n}", "petId": (body or {}).get("petId")}
        if method == "GET" and rest == ["inventory"]:
            n = count("inventory")
            if n < 2:
                return 503, {"Retry-After": "1"}, {"error": "busy"}
            return 200, {}, {"available": 3, "sold": 1}
    if parts[:1] == ["ship"]:
        if headers.get("authorization") != "Bearer ship-token-456":
            return 401, {}, {"error": "missing or wrong bearer token"}
        rest = parts[1:]
        if method == "POST" and rest == ["shipments"]:
            if not isinstance(body, dict) or "orderId" not in body:
                return 400, {}, {"error": "orderId required"}
            return 201, {}, {"trackingNumber": f"TRK-{body['orderId']}", "carrier": "acme"}
        if method == "GET" and len(rest) == 2 and rest[0] == "shipments":
            return 200, {}, {"trackingNumber": rest[1], "state": "in_transit"}
    return 404, {}, {"error": "no route"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        if url.path in ("/__reset", "/__log"):
            with lock:
                if url.path == "/__reset":
                    log.clear()
                    counters.clear()
                    payload = {"ok": True}
                else:
                    payload = list(log)
            self._send(200, {}, payload)
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        query = parse_qsl(url.query, keep_blank_values=True)
        with lock:
            log.append({
                "method": self.command,
                "path": url.path,
                "query": [list(p) for p in query],
                "headers": {h: headers[h] for h in RECORDED_HEADERS if h in headers},
                "body": body,
            })
            status, extra, payload = respond(self.command, url.path, query, headers, body)
        self._send(status, extra, payload)

    def _send(self, status: int, extra: dict, payload) -> None:
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        if payload is not None:
            self.send_header("Content-Type", "application/json")
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
