"""The Arazzo comparison: arazzo-runner (the peer) and openapi-mcp (ours) run the same workflows
of fixtures/ against the same recording upstream (recorder.py), and must send the same requests
in the same order and end the same way (status, failed step, outputs).

Usage: python compare.py --out DIR [--bin OPENAPI_MCP]
Runs in the virtualenv of compare.sh (arazzo-runner and the MCP SDK installed). Writes
DIR/peer.json and DIR/ours.json (each case: status, failed_step, outputs, requests as the
recorder logged them). Without --bin only the peer runs (its record is still written and its
known deviations still checked).

The cases (fixtures/cases.json) without `peer_deviation` compare peer and ours. A case with
`peer_deviation` is one where arazzo-runner departs from Arazzo 1.0.1: ours must give the
`expect`ed record (derived from the specification by hand), and the peer must still differ
from it (when a new arazzo-runner gets it right, the case says so: drop the deviation).
Queries are compared as sorted pairs (their order carries no meaning); header names are
compared lower-cased, and only those recorder.py records.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")


def normalise(record: dict) -> dict:
    requests = []
    for r in record.get("requests") or []:
        requests.append({
            "method": r["method"],
            "path": r["path"],
            "query": sorted([list(p) for p in r["query"]]),
            "headers": r["headers"],
            "body": r["body"],
        })
    return {
        "status": record["status"],
        "outputs": record.get("outputs"),
        "requests": requests,
    }


def differences(a: dict, b: dict, a_name: str, b_name: str) -> list[str]:
    out = []
    for key in ("status", "outputs"):
        if a.get(key) != b.get(key):
            out.append(f"{key}: {a_name} {json.dumps(a.get(key))} != {b_name} {json.dumps(b.get(key))}")
    ra, rb = a["requests"], b["requests"]
    for i in range(max(len(ra), len(rb))):
        x = ra[i] if i < len(ra) else None
        y = rb[i] if i < len(rb) else None
        if x != y:
            out.append(f"request {i + 1}: {a_name} {json.dumps(x)}\n{' ' * 13}{b_name} {json.dumps(y)}")
    return out


def start_recorder(tmp: str) -> tuple[subprocess.Popen, str]:
    port_file = os.path.join(tmp, "port")
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "recorder.py"), port_file])
    for _ in range(100):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        time.sleep(0.05)
    port = open(port_file).read().strip()
    url = f"http://127.0.0.1:{port}"
    urllib.request.urlopen(url + "/__log").read()
    return proc, url


def fill(docs: str, port: str) -> None:
    """The fixtures with the recorder's port in their servers."""
    os.makedirs(docs, exist_ok=True)
    for name in os.listdir(FIXTURES):
        if name.endswith(".yaml"):
            text = open(os.path.join(FIXTURES, name)).read().replace("{{PORT}}", port)
            open(os.path.join(docs, name), "w").write(text)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--bin")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases_path = os.path.join(FIXTURES, "cases.json")
    cases = json.load(open(cases_path))
    with tempfile.TemporaryDirectory() as tmp:
        recorder, url = start_recorder(tmp)
        try:
            docs = os.path.join(args.out, "docs")
            fill(docs, url.rsplit(":", 1)[1])
            peer_out = os.path.join(args.out, "peer.json")
            subprocess.run([sys.executable, os.path.join(HERE, "run_peer.py"), docs, cases_path, url,
                            peer_out], check=True)
            peer = {r["name"]: r for r in json.load(open(peer_out))}
            ours = None
            if args.bin:
                ours_out = os.path.join(args.out, "ours.json")
                subprocess.run([sys.executable, os.path.join(HERE, "run_ours.py"), args.bin, docs,
                                cases_path, url, ours_out], check=True)
                ours = {r["name"]: r for r in json.load(open(ours_out))}
        finally:
            recorder.terminate()
            recorder.wait()

    passed = failed = 0
    for case in cases:
        name = case["name"]
        p = normalise(peer[name])
        problems: list[str] = []
        notes: list[str] = []
        if "peer_deviation" in case:
            expect = normalise(case["expect"])
            if not differences(p, expect, "peer", "spec"):
                notes.append("arazzo-runner now gives the specified result: drop the deviation")
            if ours is not None:
                problems += differences(normalise(ours[name]), expect, "ours", "spec")
                if ours[name].get("seconds", 0) < case.get("min_seconds", 0):
                    problems.append(f"ours took {ours[name]['seconds']} s, less than the Retry-After waits ({case['min_seconds']} s)")
                if ours[name].get("seconds", 0) > case.get("max_seconds", 1e9):
                    problems.append(f"ours took {ours[name]['seconds']} s, more than {case['max_seconds']} s: the Retry-After header did not overrule retryAfter")
        else:
            if not p["requests"]:
                problems.append("the peer sent no request (a comparison that cannot fail)")
            if ours is not None:
                problems += differences(normalise(ours[name]), p, "ours", "peer")
                if ours[name].get("failed_step") != peer[name].get("failed_step"):
                    problems.append(f"failed step: ours {ours[name].get('failed_step')} != peer {peer[name].get('failed_step')}")
        kind = "deviation" if "peer_deviation" in case else "same"
        if problems:
            failed += 1
            print(f"FAIL {name}")
            for line in problems:
                print("     " + line)
        else:
            passed += 1
            what = f"{len(p['requests'])} requests" if kind == "same" else "ours as specified; peer deviates"
            print(f"ok   {name} ({what})")
        for n in notes:
            print("     note: " + n)
    print(f"arazzo: {passed} passed, {failed} failed" + ("" if ours is not None else " (peer only: no --bin)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
