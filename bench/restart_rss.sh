#!/bin/bash
# Restart a daemon on an existing state and report its memory after SECONDS idle (the state a
# daemon meets the next morning: catch-up rounds done, idle graphs, histories and the query
# session released).
#   bench/restart_rss.sh BIN_DIR PATINA_HOME SECONDS
set -u
BIN=$1; export PATINA_HOME=$2
"$BIN/patina" daemon stop >/dev/null 2>&1
"$BIN/patina" daemon start >/dev/null 2>&1
sleep "$3"
"$BIN/patina" status | sed -n 1,9p
PID=$("$BIN/patina" status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['daemon']['pid'])")
grep VmRSS "/proc/$PID/status"
