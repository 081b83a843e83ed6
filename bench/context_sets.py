#!/usr/bin/env python3
"""Context sets from a repository's history: a commit message is the question, the pre-image lines
its diff changes are the gold, the parent commit is the corpus (issue 64).

    bench/context_sets.py CLONE NAME OWNER/REPO --ext py [--ext pyi] [--max 40] > bench/questions/context/NAME.jsonl

Each line has the format of ../shared/eval/swebench-context (`id`, `repo`, `commit` = the parent,
`query`, `gold_lines` = {path: [line, …]}), so `patina bench context` reads both.

Which commits: non-merge, changing 1-3 source files of the language (tests, docs and vendored
files are not counted and their lines are not gold), at least 5 distinct words of three letters or
more in the cleaned message, at most 120 gold lines, walked newest first and spread over history
(every k-th eligible commit, so that one burst of work does not fill the set). Nothing is chosen
by looking at what Patina answers: the rule is fixed before any search runs. A commit whose parent
cannot be checked out from the clone (a blob absent from the snapshot: `patina bench context`
would stop there) is passed over like one with too many gold lines; a complete clone gives the
same set as before this check.
"""

import argparse
import json
import re
import subprocess
import sys

TEST_PARTS = re.compile(r"(^|/)(tests?|testing|spec|__tests__|benches|examples?|docs?)(/|$)|(^|/)test_|_test\.|\.test\.|_spec\.")
TRAILER = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|cc|fixes|closes|refs?|see|pr-url|change-id):", re.I)
URL = re.compile(r"https?://\S+")
PR_REF = re.compile(r"\(#\d+\)|#\d+")
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def git(clone, *args):
    return subprocess.run(["git", "-C", clone, *args], capture_output=True, check=True,
                          text=True, errors="replace").stdout


def clean(message):
    lines = []
    for line in message.splitlines():
        if TRAILER.match(line.strip()):
            continue
        line = PR_REF.sub("", URL.sub("", line)).rstrip()
        lines.append(line)
    text = "\n".join(lines).strip()
    return re.sub(r"\n{3,}", "\n\n", text)


def informative(text, min_words=5):
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", text)}
    return len(words) >= min_words


def is_source(path, exts):
    return path.rsplit(".", 1)[-1] in exts and not TEST_PARTS.search(path)


def gold_lines(clone, parent, commit, paths):
    """Per path, the pre-image lines the diff removes or changes; a hunk that only adds lines
    counts the line it follows (the first line when it adds at the top)."""
    diff = git(clone, "diff", "-U0", "--no-color", "--no-renames", parent, commit, "--", *paths)
    gold, path = {}, None
    for line in diff.splitlines():
        if line.startswith("--- "):
            path = line[6:] if line.startswith("--- a/") else None
        elif line.startswith("@@") and path:
            m = HUNK.match(line)
            start, count = int(m.group(1)), int(m.group(2) or 1)
            lines = range(start, start + count) if count else [max(start, 1)]
            gold.setdefault(path, set()).update(lines)
    return {p: sorted(v) for p, v in gold.items() if v}


def complete(clone, commit):
    """Whether every blob of `commit`'s tree is in the clone (a snapshot may lack large ones)."""
    tree = git(clone, "ls-tree", "-r", commit)
    blobs = "".join(line.split()[2] + "\n" for line in tree.splitlines()
                    if line.split()[1] == "blob")
    out = subprocess.run(["git", "-C", clone, "cat-file", "--batch-check"], input=blobs,
                         capture_output=True, text=True, check=True).stdout
    return " missing" not in out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clone")
    ap.add_argument("name")
    ap.add_argument("repo", help="owner/name, recorded in each line")
    ap.add_argument("--ext", action="append", required=True, help="a source extension (repeat)")
    ap.add_argument("--max", type=int, default=40)
    ap.add_argument("--scan", type=int, default=3000, help="newest commits to consider")
    ap.add_argument("--max-gold", type=int, default=120)
    args = ap.parse_args()
    exts = set(args.ext)
    log = git(args.clone, "log", "--no-merges", f"-{args.scan}", "--format=%x1e%H %P%x1f%B%x1f",
              "--name-only")
    eligible = []
    for entry in log.split("\x1e")[1:]:
        head, message, files = entry.split("\x1f", 2)
        shas = head.split()
        if len(shas) != 2:
            continue
        commit, parent = shas
        files = [f for f in files.split("\n") if f.strip()]
        source = [f for f in files if is_source(f, exts)]
        if not 1 <= len(source) <= 3:
            continue
        text = clean(message)
        if not informative(text):
            continue
        eligible.append((commit, parent, text, source))
    step = max(1, len(eligible) // args.max)
    out = 0
    for commit, parent, text, source in eligible[::step]:
        if out >= args.max:
            break
        gold = gold_lines(args.clone, parent, commit, source)
        total = sum(len(v) for v in gold.values())
        if not gold or total > args.max_gold or not complete(args.clone, parent):
            continue
        out += 1
        print(json.dumps({"id": f"{args.name}-{commit[:10]}", "repo": args.repo, "commit": parent,
                          "query": text, "gold_lines": gold}))
    print(f"{args.name}: {out} instances from {len(eligible)} eligible commits", file=sys.stderr)


if __name__ == "__main__":
    main()
