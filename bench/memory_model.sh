#!/bin/bash
# With the model: RSS after indexing + full embedding, after the bulk session's idle release, after rm.
set -e
# usage: bench/memory_model.sh REPO   (BIN=dir of patina/patinad; PATINA_MODEL_DIR = the model)
[ -n "$BIN" ] && export PATH=$BIN:$PATH
export PATINA_HOME=$(mktemp -d /tmp/patina-memm.XXXXXX)
export PATINA_SOCKET=$PATINA_HOME/p.sock XDG_RUNTIME_DIR=$PATINA_HOME/run XDG_STATE_HOME=$PATINA_HOME/xs
mkdir -m 700 -p $XDG_RUNTIME_DIR
rss() { awk '/VmRSS/{printf "%.0f", $2/1024}' /proc/$PID/status; }
patinad > $PATINA_HOME/d.log 2>&1 & PID=$!; sleep 3
r0=$(rss); t0=$SECONDS
patina add --force $1 | tail -1
peak=0
while patina status | grep -q waiting; do r=$(rss); [ $r -gt $peak ] && peak=$r; sleep 2; done
r1=$(rss); t1=$((SECONDS-t0))
sleep 30; r2=$(rss)
for i in $(seq 1 50); do patina q "how are flags parsed $i" >/dev/null 2>&1; done; r3=$(rss)
patina rm $(basename $1) >/dev/null; sleep 30; r4=$(rss)
echo "repo=$(basename $1) start=${r0} embedding_peak=${peak} covered=${r1} (after ${t1}s) idle30s=${r2} after_50q=${r3} after_rm+30s=${r4} (MiB)"
kill $PID; sleep 1; rm -rf "$PATINA_HOME"
