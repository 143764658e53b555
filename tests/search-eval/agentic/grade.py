"""Grades the agent's choices: grade.py HELDOUT_JSON OUT_DIR '{"<spec file>": "<api key>", ...}'.
Prints aggregates only (a blind set's per-query results are never printed)."""
import json, sys, glob, os
heldout = sys.argv[1]; outdir = sys.argv[2]; names = json.loads(sys.argv[3])
d = json.load(open(heldout))
tot = [0, 0, 0, 0]  # n, chosen right, searches sum, one search
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
    print(f"{key:12} n={n:3} chosen right {ok:3} ({ok*100/n:5.1f}%)  of them on the first search {n1:3}  searches/request {s/max(1,len(got)):.2f}  answered {len(got)}")
    for k, v in enumerate([n, ok, s, n1]): tot[k] += v
print(f"{'all':12} n={tot[0]:3} chosen right {tot[1]:3} ({tot[1]*100/max(1,tot[0]):5.1f}%)  first search {tot[3]}  searches/request {tot[2]/max(1,tot[0]):.2f}")
