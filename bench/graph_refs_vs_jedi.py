#!/usr/bin/env python3
"""Accuracy of `patina refs` against jedi's references on a Python repository (issue 12).

Samples N functions and methods defined under the package directory (seeded), asks jedi for
their references across the project and `patina refs --json` for the same definition, and
reports precision and recall over (path, line) sites, micro-averaged. The definition's own line
is excluded on both sides. Import statements (`from .x import name`) are references for jedi
but not call/use sites for patina; the figures are given with and without them.

Usage (the repository registered with a running patinad; jedi importable):
    PYTHONPATH=/path/to/jedi python3 bench/graph_refs_vs_jedi.py REPO_ROOT [--package src/flask]
        [-n 100] [--seed 12] [--patina patina] [--misses 10]
"""

import argparse
import ast
import os
import random
import sys

import jedi

from common import refs_at


def python_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x not in ("node_modules", "__pycache__")]
        for f in files:
            if f.endswith(".py"):
                yield os.path.relpath(os.path.join(d, f), root)


def definitions(root, package):
    """(path, qualified name, name, line, col) of every function and method under package."""
    out = []
    for rel in python_files(os.path.join(root, package)):
        path = os.path.join(package, rel)
        try:
            tree = ast.parse(open(os.path.join(root, path), encoding="utf-8").read())
        except SyntaxError:
            continue

        def visit(node, parent):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    q = f"{parent}.{child.name}" if parent else child.name
                    col = child.col_offset + (6 if isinstance(child, ast.AsyncFunctionDef) else 0) + 4
                    out.append((path, q, child.name, child.lineno, col))
                elif isinstance(child, ast.ClassDef):
                    visit(child, child.name)

        visit(tree, None)
    return out


def import_lines(root, path, cache={}):
    if path not in cache:
        lines = set()
        try:
            tree = ast.parse(open(os.path.join(root, path), encoding="utf-8").read())
            for n in ast.walk(tree):
                if isinstance(n, (ast.Import, ast.ImportFrom)):
                    lines.update(range(n.lineno, (n.end_lineno or n.lineno) + 1))
        except (SyntaxError, UnicodeDecodeError, FileNotFoundError):
            pass
        cache[path] = lines
    return cache[path]


def jedi_refs(project, root, path, line, col):
    script = jedi.Script(path=os.path.join(root, path), project=project)
    out = set()
    for r in script.get_references(line, col, include_builtins=False, scope="project"):
        if r.module_path is None or r.is_definition():
            continue
        rel = os.path.relpath(str(r.module_path), root)
        if rel.startswith(".."):
            continue
        out.add((rel, r.line))
    return out



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--package", default="src/flask")
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--patina", default="patina")
    ap.add_argument("--misses", type=int, default=10, help="print this many disagreements")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    defs = definitions(root, a.package)
    random.Random(a.seed).shuffle(defs)
    sample = defs[: a.n]
    project = jedi.Project(root)
    tp = fp = fn = 0
    tp_i = fp_i = fn_i = 0
    tp_s = fp_s = fn_s = 0
    misses = []
    with_refs = 0
    for path, q, name, line, col in sample:
        j = jedi_refs(project, root, path, line, col)
        p = refs_at(a.patina, root, q, path, line)
        with_refs += bool(j)
        tp += len(p & j)
        fp += len(p - j)
        fn += len(j - p)
        # Without import statements.
        strip = lambda s: {(f, l) for f, l in s if l not in import_lines(root, f)}
        ji, pi = strip(j), strip(p)
        tp_i += len(pi & ji)
        fp_i += len(pi - ji)
        fn_i += len(ji - pi)
        # Only sites inside the package (library code, where jedi infers types best).
        inside = lambda s: {(f, l) for f, l in s if f.startswith(a.package + "/")}
        js, ps = inside(ji), inside(pi)
        tp_s += len(ps & js)
        fp_s += len(ps - js)
        fn_s += len(js - ps)
        for site in sorted(pi - ji):
            misses.append(("patina only", q, site))
        for site in sorted(ji - pi):
            misses.append(("jedi only", q, site))

    def pr(tp, fp, fn):
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 1.0
        return p, r

    p, r = pr(tp, fp, fn)
    pi, ri = pr(tp_i, fp_i, fn_i)
    print(f"functions: {len(sample)} (of {len(defs)}; {with_refs} with jedi references)")
    print(f"all sites:        precision {p:.3f}  recall {r:.3f}  (tp {tp}, fp {fp}, fn {fn})")
    print(f"without imports:  precision {pi:.3f}  recall {ri:.3f}  (tp {tp_i}, fp {fp_i}, fn {fn_i})")
    ps, rs = pr(tp_s, fp_s, fn_s)
    print(f"  in {a.package}: precision {ps:.3f}  recall {rs:.3f}  (tp {tp_s}, fp {fp_s}, fn {fn_s})")
    for m in misses[: a.misses]:
        print("  ", *m)


if __name__ == "__main__":
    sys.exit(main())
