"""Fusion of the server's lexical ranking (dumped by the dynamic bench with DYNAMIC_DUMP_DEV=FILE,
DEVELOPMENT sets only) with dense scores: final = lexical / best lexical + λ · cosine.
    MODEL_DIR=… TABLE=… DUMP=FILE [FULL=1] python fuse.py"""
import json, os, sys, math
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(HERE, 'proto.py')).read()
# proto.py's helpers, without its evaluation loop
exec(src.split('T = {}')[0])
rows = [json.loads(l) for l in open(os.environ['DUMP'])]
by_spec = {}
for r in rows:
    by_spec.setdefault(r['spec'], []).append(r)
variants = {'static384': X, 'static256': table(256), 'static128': table(128)}
results = {}
for spec, rs in by_spec.items():
    O = ops(spec)
    ids = [o[0] for o in O]
    pos = {i: k for k, i in enumerate(ids)}
    docs = [o[3] for o in O]
    N = len(docs)
    idf = token_idf(docs)
    dense = {}
    for name, Td in variants.items():
        dense[name] = (embed_static(docs, Td, idf), embed_static([r['task'] for r in rs], Td, idf))
    if FULL:
        dense['full'] = (embed_full(docs), embed_full([r['task'] for r in rs]))
    for name, (D, Q) in dense.items():
        sims = Q @ D.T
        for lam in [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0, 1.5, 2.0]:
            for qi, r in enumerate(rs):
                lex = np.zeros(N)
                hits = [(pos[i], s) for i, s in r['hits'] if i in pos]
                if hits:
                    m = max(s for _, s in hits)
                    for k, s in hits: lex[k] = s / m
                score = lex + lam * sims[qi]
                order = np.argsort(-score)[:10]
                rank = next((k for k, oi in enumerate(order) if ids[oi] in r['expect']), None)
                a = results.setdefault((name, lam), [0, 0, 0])
                a[0] += 1; a[1] += rank is not None and rank < 3; a[2] += rank is not None
for (name, lam), (n, h3, h10) in sorted(results.items()):
    print(f'{name:10} λ={lam:<4} n={n} top3={h3/n:.3f} top10={h10/n:.3f}')
