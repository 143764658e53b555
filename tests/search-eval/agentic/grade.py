"""Grades the agent's choices: grade.py HELDOUT_JSON OUT_DIR '{"<spec file>": "<api key>", ...}'.
Prints aggregates only (a blind set's per-query results are never printed).

Columns: n; chosen right (the chosen method and path is one of the request's answers, after at
most 3 searches); first-search success (chosen right after ONE search, the request verbatim: the
share of requests the first search alone settles, #41); searches per request; answered (lines
found in out-<api>.jsonl)."""
import json, sys, os
heldout = sys.argv[1]; outdir = sys.argv[2]; names = json.loads(sys.argv[3])
d = json.load(open(heldout))
tot = [0, 0, 0, 0, 0]  # n, chosen right, searches sum, first-search right, answered


def pct(k, n):
    return f"{k:3} ({k * 100 / max(1, n):5.1f}%)"


print(f"{'api':12} {'n':>4}  {'chosen right':>14}  {'first-search success':>20}  {'searches/req':>12}  answered")
for spec, key in names.items():
    cases = d.get(spec, [])
    f = os.path.join(outdir, f'out-{key}.jsonl')
    if not os.path.exists(f): print(key, 'missing'); continue
    got = {}
    for l in open(f):
        l = l.strip()
        if l: r = json.loads(l); got[r['i']] = r
    ok = n1 = s = 0
    for i, c in enumerate(cases):
        r = got.get(i)
        exp = {f"{m.upper()} {p}" for m, p in c['expect']}
        if r:
            s += r.get('searches', 0)
            if r['choice'] in exp:
                ok += 1
                n1 += r.get('searches', 0) == 1
    n = len(cases)
    print(f"{key:12} {n:4}  {pct(ok, n):>14}  {pct(n1, n):>20}  {s / max(1, len(got)):12.2f}  {len(got)}")
    for k, v in enumerate([n, ok, s, n1, len(got)]): tot[k] += v
print(f"{'all':12} {tot[0]:4}  {pct(tot[1], tot[0]):>14}  {pct(tot[3], tot[0]):>20}  {tot[2] / max(1, tot[4]):12.2f}  {tot[4]}")
