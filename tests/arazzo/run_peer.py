"""Runs the comparison cases with arazzo-runner (Jentic's Python Arazzo executor, PyPI) against
the recording upstream, through its Python API (`ArazzoRunner.from_arazzo_path(...)
.execute_workflow(...)`: the CLI prints a Python repr, not JSON).

Usage: python run_peer.py DOCS_DIR CASES_JSON RECORDER_URL OUT_JSON
DOCS_DIR holds the fixtures with the recorder's port filled in. Writes, per case: status
("ok" or "failed"), the failed step, the outputs, and the requests the recorder logged.
Credentials come from the variables arazzo-runner derives from the specs (`show-env-mappings`):
SHOP_APIKEY for the shop's API key, SHIPPING_BEARER_TOKEN for the shipping API's bearer token.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import urllib.request

from arazzo_runner import ArazzoRunner


def call(url: str, method: str = "GET"):
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def main() -> None:
    docs, cases_path, recorder, out = sys.argv[1:5]
    logging.disable(logging.CRITICAL)
    os.environ["SHOP_APIKEY"] = "shop-key-123"
    os.environ["SHIPPING_BEARER_TOKEN"] = "ship-token-456"
    results = []
    for case in json.load(open(cases_path)):
        call(recorder + "/__reset", "POST")
        runner = ArazzoRunner.from_arazzo_path(os.path.join(docs, case["document"]))
        started = time.monotonic()
        result = runner.execute_workflow(case["workflow"], case["inputs"])
        elapsed = time.monotonic() - started
        status = "ok" if result.status.value == "workflow_complete" else "failed"
        failed_step = None
        if status == "failed":
            state = next(iter(runner.execution_states.values()))
            failed_step = state.current_step_id
        results.append({
            "name": case["name"],
            "status": status,
            "failed_step": failed_step,
            "outputs": result.outputs if status == "ok" else None,
            "requests": call(recorder + "/__log"),
            "seconds": round(elapsed, 1),
        })
    json.dump(results, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
