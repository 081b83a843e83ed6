#!/bin/bash
# BIN: a directory with release builds of patina and patinad; REPO: a git repository (bench/RESULTS.md, twelfth session).
BIN=$1; REPO=$2; W=/tmp/addt; rm -rf $W; mkdir -p $W; export PATINA_HOME=$W
$BIN/patina daemon start >/dev/null 2>&1; sleep 3
t0=$(date +%s%N); $BIN/patina add "$REPO" >/dev/null 2>&1; t1=$(date +%s%N)
q0=$(date +%s%N); for i in $(seq 20); do $BIN/patina q "how does the runtime schedule tasks $i" --repo big >/dev/null 2>&1; done; q1=$(date +%s%N)
$BIN/patina daemon stop >/dev/null
echo "add $(( (t1-t0)/1000000 )) ms, 20 queries $(( (q1-q0)/1000000 )) ms"
