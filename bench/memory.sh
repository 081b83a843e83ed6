#!/bin/bash
# Idle RSS of a lexical-only daemon (no model) after indexing, after N×2 queries, after `patina rm`
# (issue 15; figures in bench/RESULTS.md). A fresh state root in a temporary directory.
# usage: bench/memory.sh REPO [memory_mb|""] N        (BIN=dir of patina/patinad, else PATH)
set -e
[ -n "$BIN" ] && export PATH=$BIN:$PATH
export PATINA_MODEL_DIR=/nonexistent
export PATINA_HOME=$(mktemp -d /tmp/patina-mem.XXXXXX)
export PATINA_SOCKET=$PATINA_HOME/p.sock XDG_RUNTIME_DIR=$PATINA_HOME/run XDG_STATE_HOME=$PATINA_HOME/xs
mkdir -m 700 -p $XDG_RUNTIME_DIR
[ -n "$2" ] && printf '[daemon]\nmemory_mb = %s\n' "$2" > $PATINA_HOME/config.toml
rss() { awk '/VmRSS/{printf "%.0f", $2/1024}' /proc/$PID/status; }
patinad > $PATINA_HOME/d.log 2>&1 &
PID=$!; sleep 2
r0=$(rss)
patina add --force "$1" | tail -1
sleep 5
r1=$(rss)
for i in $(seq 1 "$3"); do
  patina q "how does the scheduler handle blocking tasks $i" >/dev/null 2>&1
  patina q "spawn_blocking" >/dev/null 2>&1
done
sleep 3
r2=$(rss)
patina rm "$(basename "$1")" >/dev/null
sleep 5
r3=$(rss)
echo "repo=$(basename "$1") budget=${2:-512} start=${r0}MiB indexed=${r1}MiB after_$((2*$3))_queries=${r2}MiB after_rm=${r3}MiB"
patina daemon stop >/dev/null
rm -rf "$PATINA_HOME"
