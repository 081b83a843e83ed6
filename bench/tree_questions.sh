#!/bin/sh
# The time of each question of a list on a repository already indexed in HOME, whole-process and
# in the daemon (its summary's took_us), with the graph oracle's share; the model off, so nothing
# but the questions runs. One question first, then a pause, so a large repository's graph (built
# in the background for the next questions) is there.
#
#   bench/tree_questions.sh BIN HOME REPO [QUESTIONS] [PAUSE]
#   bench/tree_questions.sh target/release /work/large/tree-copy /work/large/tree
set -eu
bin=$1 home=$2 repo=$3
questions=$(realpath "${4:-$(dirname "$0")/questions/tree-latency.txt}")
bin=$(realpath "$bin")
pause=${5:-75}
export PATINA_HOME="$home" PATINA_MODEL_DIR="$home/no-model" NO_COLOR=1
cd "$repo"
"$bin/patina" daemon start >/dev/null 2>&1
"$bin/patina" q "how are permissions checked" -n 3 >/dev/null 2>&1 || true
sleep "$pause"
grep -v '^#' "$questions" | while IFS= read -r q; do
    [ -n "$q" ] || continue
    t0=$(date +%s%N)
    out=$("$bin/patina" q "$q" -n 10 --json 2>/dev/null | tail -1)
    t1=$(date +%s%N)
    printf '%s\n' "$out" | python3 -c "
import json, sys
v = json.load(sys.stdin)
g = [o['took_us'] // 1000 for o in v['oracles'] if o['oracle'] == 'graph']
print($(( (t1 - t0) / 1000000 )), 'ms whole;', v['took_us'] // 1000, 'ms daemon; graph', g[0] if g else '-', 'ms')"
done
"$bin/patina" daemon stop >/dev/null 2>&1
