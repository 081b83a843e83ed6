#!/usr/bin/env python3
"""Accuracy of `patina refs` on Go code against a word search (issue 12: where gopls cannot run).

Debian's gopls (0.5) cannot load a module whose dependencies are not in a module cache, and
nothing may be downloaded here; so the reference is a careful word search: every whole-word
occurrence of the function's name in the repository's Go files, outside comments and string
literals, and not on the definition's own line. For a method, only selector uses (`.Name`) count.
A word search over-reports (another type's method of the same name, a local variable) and never
under-reports a use by name, so its sites bound patina's recall from below; `--show N` prints
the disagreements of N functions for a manual check of which side is right.

Usage (the repository registered with a running patinad):
    python3 bench/graph_refs_go.py REPO_ROOT [-n 50] [--seed 7] [--patina patina] [--show 20]
"""

import argparse
import os
import random
import re
import sys

from common import refs_at

FUNC = re.compile(r"^func\s+(?:\(\s*\w*\s*\*?\s*(\w+)(?:\[[^\]]*\])?\s*\)\s*)?(\w+)\s*[\[(]")


def go_files(root, tests):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x != "vendor"]
        for f in files:
            if f.endswith(".go") and (tests or not f.endswith("_test.go")):
                yield os.path.relpath(os.path.join(d, f), root)


def definitions(root):
    out = []
    for path in go_files(root, tests=False):
        for i, line in enumerate(open(os.path.join(root, path), encoding="utf-8"), 1):
            m = FUNC.match(line)
            if m and m.group(2) != "init" and m.group(2) != "main":
                recv, name = m.group(1), m.group(2)
                out.append((path, f"{recv}.{name}" if recv else name, name, recv, i))
    return out


def code_only(line):
    """The line without its // comment and string literals (good enough for Go source)."""
    out, i, n = [], 0, len(line)
    while i < n:
        c = line[i]
        if c == "/" and line.startswith("//", i):
            break
        if c in "\"'`":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" and c != "`" else 1
            i = j + 1
            out.append(" ")
            continue
        out.append(c)
        i += 1
    return "".join(out)


def word_sites(root, name, method, def_path, def_line, cache={}):
    pat = re.compile(r"\." + re.escape(name) + r"\b" if method else r"(?<![\w.])" + re.escape(name) + r"\b")
    out = set()
    for path in go_files(root, tests=True):
        if path not in cache:
            cache[path] = open(os.path.join(root, path), encoding="utf-8").read().split("\n")
        in_block = False
        for i, line in enumerate(cache[path], 1):
            # Block comments: skip whole lines inside /* … */ (rare in Go).
            if in_block:
                if "*/" in line:
                    in_block = False
                continue
            if line.lstrip().startswith("/*") and "*/" not in line:
                in_block = True
                continue
            if (path, i) == (def_path, def_line):
                continue
            if pat.search(code_only(line)):
                out.add((path, i))
    return out



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--patina", default="patina")
    ap.add_argument("--show", type=int, default=0, help="print the disagreements of this many functions")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    defs = definitions(root)
    random.Random(a.seed).shuffle(defs)
    sample = defs[: a.n]
    tp = fp = fn = 0
    shown = 0
    for path, q, name, recv, line in sample:
        w = word_sites(root, name, recv is not None, path, line)
        p = refs_at(a.patina, root, q, path, line)
        tp += len(p & w)
        fp += len(p - w)
        fn += len(w - p)
        if shown < a.show and (p ^ w):
            shown += 1
            print(f"## {q} ({path}:{line}): patina {len(p)}, word search {len(w)}")
            for f, l in sorted(p - w):
                print(f"   patina only  {f}:{l}: {open(os.path.join(root, f)).read().split(chr(10))[l-1].strip()}")
            for f, l in sorted(w - p):
                print(f"   words only   {f}:{l}: {open(os.path.join(root, f)).read().split(chr(10))[l-1].strip()}")
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 1.0
    print(f"functions: {len(sample)} (of {len(defs)})")
    print(f"against the word search: agreement precision {prec:.3f}  recall {rec:.3f}  (both {tp}, patina only {fp}, words only {fn})")


if __name__ == "__main__":
    sys.exit(main())
