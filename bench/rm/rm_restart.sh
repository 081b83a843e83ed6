#!/bin/bash
# Needs a daemon built with the test hooks (PATINA_TEST_IDLE_RELEASE_SECS):
#   cargo build --release --workspace --features patinad/test-hooks
# rm_restart.sh BIN REPO: index REPO (no model) in a fresh state, restart the daemon, idle, RSS; rm; RSS.
BIN=$1; REPO=$2; W=/tmp/rmrs; rm -rf $W; mkdir -p $W; export PATINA_HOME=$W
export PATINA_TEST_IDLE_RELEASE_SECS=${IDLE:-20}
pid() { $BIN/patina status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['daemon']['pid'])"; }
rss() { grep VmRSS /proc/$(pid)/status | awk '{print $2}'; }
$BIN/patina daemon start >/dev/null 2>&1; sleep 40; e=$(rss)
$BIN/patina add "$REPO" >/dev/null 2>&1
$BIN/patina daemon stop >/dev/null; $BIN/patina daemon start >/dev/null 2>&1
$BIN/patina q "how does the runtime schedule tasks" --repo big >/dev/null 2>&1
sleep ${WAIT:-60}; a=$(rss)
$BIN/patina rm "$(basename $REPO)" >/dev/null
sleep ${AFTER:-10}; b=$(rss)
[ -n "${KEEP:-}" ] || $BIN/patina daemon stop >/dev/null
python3 -c "e,a,b=$e,$a,$b; print(f'restarted: empty {e/1024:.1f} MiB, with the repository {a/1024:.1f}, after rm {b/1024:.1f}: returned {(a-b)/(a-e):.0%} of what it added')"
