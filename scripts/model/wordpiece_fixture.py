"""Write the fixture that checks Patina's WordPiece tokenizer against Hugging Face's own.

    PYTHONPATH=<models>/.pytools python3 scripts/model/wordpiece_fixture.py MODEL_DIR \
        > crates/embed/data/wordpiece-fixture.json

Each case is a text and the ids `tokenizers` gives it (no special tokens added, no truncation).
The texts: the start of source files of this repository in several languages, and strings made to
reach every step of BERT's tokenization (accents, controls, CJK, special tokens written in the
text, long words, whitespace of every kind), plus random strings from a fixed seed.
"""

import json
import os
import random
import subprocess
import sys

from tokenizers import Tokenizer

model_dir = sys.argv[1]
tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
tok.no_padding()
tok.no_truncation()

root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split("\n")
exts = (".rs", ".py", ".go", ".js", ".ts", ".lua", ".el", ".md", ".proto", ".toml", ".sh")
picked = sorted(f for f in files if f.endswith(exts))
rng = random.Random(20261203)
texts = []
for f in rng.sample(picked, min(40, len(picked))):
    with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
        texts.append(f + "\n" + fh.read(1000))

texts += [
    "Überprüfe die Konfiguration — déjà vu, naïve café! Ça marche?",
    "İstanbul ıi ß ẞ ǅ ﬁ Ω Σίσυφος ΣΑΣ",
    "日本語のテキストと中文字符 and 한국어 텍스트 mixed",
    "zero\u200bwidth\u200djoiner\u2060and\u00adsoft\u00a0nbsp\u2028line\u2029para",
    "nul\u0000byte and \ufffd replacement and \u0007 bell \u001b[31m escape",
    "tabs\tand\nnewlines\r\nand\x0bvertical\x0cfeed",
    "[CLS] literal [SEP] tokens [MASK]ed and [PAD][UNK] glued [cls] lower",
    "a" * 99 + " " + "b" * 100 + " " + "c" * 101,
    "emoji 🙂👍🏽 👩‍💻 flags 🇫🇷 and symbols ∑∫√≤≥ ±×÷ €£¥ §¶ ©®™",
    "fn main() { println!(\"{}\", x.map(|y| y * 2).unwrap_or_default()); } // ok?",
    "full-width ＡＢＣ１２３！＂ and half ｶﾀｶﾅ",
    "combining e\u0301 a\u0300 o\u0308 n\u0303 and precomposed é à ö ñ",
    "Devanagari हिन्दी and Thai ภาษาไทย and Arabic العربية and Hebrew עברית",
    "",
    "   ",
    "snake_case camelCase PascalCase SCREAMING_CASE kebab-case dot.case",
]
# Random strings: code points drawn from several blocks, assigned or not.
blocks = [(0x20, 0x7E), (0xA0, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF), (0x2000, 0x206F),
          (0x3000, 0x30FF), (0x4E00, 0x4E80), (0xAC00, 0xAC40), (0xFF00, 0xFFEF), (0x1F300, 0x1F64F)]
for _ in range(60):
    s = []
    for _ in range(rng.randint(5, 80)):
        lo, hi = rng.choice(blocks)
        s.append(chr(rng.randint(lo, hi)))
        if rng.random() < 0.15:
            s.append(" ")
    texts.append("".join(s))

cases = [{"text": t, "ids": tok.encode(t, add_special_tokens=False).ids} for t in texts]
sys.stdout.write('{"tokenizer": "all-MiniLM-L6-v2 tokenizer.json", "cases": [\n')
sys.stdout.write(",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cases))
sys.stdout.write("\n]}\n")
