"""The official MCP conformance suite's authorization-server scenarios (`conformance authorization`:
`authorization-server-metadata-endpoint`, `authorization-code-grant`) against `--oauth-proxy` (#21).

The proxy runs as in oauth_proxy_e2e.py, in front of the API's own authorization server (Authlib,
oauth_code_as.py, signing in a default user since the suite's browser step sends no test header).
The suite's client is registered at the proxy's /register with the suite's callback; the suite
prints the authorization URL for a person to open, and this script opens it as a browser would
(following the redirects: the proxy's /authorize and its consent page, approved as a user would,
the API's authorization server, the proxy's /oauth/callback, the suite's callback). The suite then redeems the code at the proxy's /token.

Usage: oauth_proxy_conformance.py --bin target/debug/openapi-mcp --node NODE --cli CONFORMANCE_JS
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading

os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")

import httpx2  # noqa: E402
import oauth_proxy_e2e as e  # noqa: E402
from oauth_code_as import CodeAuthServer  # noqa: E402
from upstream import RecordingUpstream  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--node", required=True)
    p.add_argument("--cli", required=True)
    args = p.parse_args()
    asrv = CodeAuthServer("upstream-client", e.UPSTREAM_SECRET, ["pets:read", "pets:write"], default_user="conformance")
    upstream = RecordingUpstream(lambda rec: (200, {"ok": True}))
    tmp = tempfile.mkdtemp()
    spec = os.path.join(tmp, "api.yaml")
    with open(spec, "w") as f:
        f.write(e.spec(asrv))
    proxy = e.Proxy(args.bin, spec, f"http://127.0.0.1:{upstream.port}", os.path.join(tmp, "store.sqlite3"))
    asrv.allow_redirect(f"{proxy.origin}/oauth/callback")
    out: list[str] = []
    try:
        port = e.free_port()
        reg = e.raw("POST", f"{proxy.origin}/register",
                    json={"redirect_uris": [f"http://127.0.0.1:{port}/callback"], "token_endpoint_auth_method": "none"})
        e.check(reg.status_code == 201, "the suite's client is registered (RFC 7591)")
        proc = subprocess.Popen([args.node, args.cli, "authorization", "--url", proxy.origin, "--client-id",
                                 reg.json()["client_id"], "--resource", proxy.url, "--port", str(port)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

        def browse(url: str) -> None:
            with httpx2.Client(follow_redirects=False, timeout=30) as hc:
                for _ in range(10):
                    r = hc.get(url)
                    out.append(f"[browser] {r.status_code} {url.split('?')[0]}")
                    if r.status_code == 200 and url.startswith(f"{proxy.origin}/authorize"):
                        # The proxy's consent page (#36): the user approves the suite's client.
                        action, fields = e.consent_form(url, r.text)
                        r = hc.post(action, data={**fields, "decision": "approve"}, headers={"Origin": proxy.origin})
                        out.append(f"[browser] {r.status_code} consent approved")
                    if r.status_code not in (302, 303):
                        return
                    url = r.headers["location"]

        for line in proc.stdout:
            out.append(line.rstrip())
            m = re.search(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)", line)
            if m:
                threading.Thread(target=browse, args=(m.group(1),), daemon=True).start()
        rc = proc.wait(timeout=120)
    finally:
        proxy.stop()
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(out))
    print(text[text.find("=== SUMMARY ==="):] if "=== SUMMARY ===" in text else text)
    e.check(rc == 0 and re.search(r"Total: [1-9]\d* passed, 0 failed", text) is not None
            and "authorization-server-metadata-endpoint: 2 passed, 0 failed" in text
            and "authorization-code-grant: 1 passed, 0 failed" in text,
            "conformance authorization: metadata (with Client ID Metadata Document support) and authorization code grant pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
