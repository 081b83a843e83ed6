"""CoSQA dev MRR@10 of a static token table alone (scripts/model/distil.py): a text is the
L2-normalised mean of its WordPiece tokens' rows; documents are embedded as the daemon embeds a
chunk (path, newline, text). usage: python3 static_cosqa.py MODEL_DIR static.bin [idf]  (idf: tokens also weighted by
their IDF in the corpus, as a daemon could at index time; needs numpy,
tokenizers: PYTHONPATH=<models>/.pytools)"""
import json, sys, struct, numpy as np
from tokenizers import Tokenizer
md = sys.argv[1]; table_path = sys.argv[2]
tok = Tokenizer.from_file(f"{md}/tokenizer.json"); tok.no_truncation(); tok.no_padding()
raw = open(table_path, "rb").read()
_, rows, dims = struct.unpack("<III", raw[4:16])
T = np.frombuffer(raw[16:], dtype="<f2").reshape(rows, dims).astype(np.float32)
W = np.ones(rows)
def emb(text):
    ids = tok.encode(text, add_special_tokens=False).ids[:512]
    if not ids: return np.zeros(dims, np.float32)
    v = (T[ids] * W[ids][:, None]).sum(axis=0); return v / (np.linalg.norm(v) + 1e-12)
corpus = [json.loads(l) for l in open("/work/shared/eval/cosqa/corpus.jsonl")]
if len(sys.argv) > 3 and sys.argv[3] == "idf":
    df = np.zeros(rows)
    for c in corpus:
        for t in set(tok.encode(c["path"] + "\n" + c["text"], add_special_tokens=False).ids[:512]):
            df[t] += 1
    W = np.log((len(corpus) + 1) / (df + 1)) + 1
paths = [c["path"] for c in corpus]
D = np.stack([emb(c["path"] + "\n" + c["text"]) for c in corpus])
qs = [json.loads(l) for l in open("/work/shared/eval/cosqa/dev.jsonl")]
mrr = 0
for q in qs:
    s = D @ emb(q["query"]); top = np.argsort(-s)[:10]
    rel = {r["path"] for r in q["relevant"]}
    for i, j in enumerate(top):
        if paths[j] in rel: mrr += 1 / (i + 1); break
print("static MRR@10 %.4f over %d queries" % (mrr / len(qs), len(qs)))
