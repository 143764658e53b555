import re, unicodedata
class WordPiece:
    def __init__(self, vocab):
        self.vocab = {w: i for i, w in enumerate(vocab)}
    def words(self, text):
        text = unicodedata.normalize('NFD', text.lower())
        text = ''.join(c for c in text if unicodedata.category(c) != 'Mn')
        return re.findall(r'[a-z0-9]+|[^\sa-z0-9]', text)
    def piece(self, w):
        if len(w) > 100: return [self.vocab['[UNK]']]
        out, s = [], 0
        while s < len(w):
            e = len(w); cur = None
            while s < e:
                sub = w[s:e] if s == 0 else '##' + w[s:e]
                if sub in self.vocab: cur = self.vocab[sub]; break
                e -= 1
            if cur is None: return [self.vocab['[UNK]']]
            out.append(cur); s = e
        return out
    def encode(self, text):
        return [i for w in self.words(text) for i in self.piece(w)]
