#!/bin/bash
# Needs a daemon built with the test hooks (PATINA_TEST_IDLE_RELEASE_SECS):
#   cargo build --release --workspace --features patinad/test-hooks
# rm_one.sh BIN REPO [model]: RSS of an idle daemon, after adding REPO (idle), after rm REPO.
BIN=$1; REPO=$2; W=/tmp/rmone; rm -rf $W; mkdir -p $W; export PATINA_HOME=$W
[ "${3:-}" = model ] && ln -s ${PATINA_MODELS:-$HOME/.local/share/patina/models} $W/models
export PATINA_TEST_IDLE_RELEASE_SECS=${IDLE:-20}
rss() { grep VmRSS /proc/$($BIN/patina status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['daemon']['pid'])")/status | awk '{print $2}'; }
$BIN/patina daemon start >/dev/null 2>&1; sleep ${WAIT:-40}
e=$(rss)
t0=$(date +%s); $BIN/patina add "$REPO" >/dev/null 2>&1; echo "add took $(( $(date +%s) - t0 )) s"
$BIN/patina q "how does the runtime schedule tasks" --repo big >/dev/null 2>&1
sleep ${WAIT:-40}; $BIN/patina status | sed -n 1,9p
a=$(rss)
$BIN/patina rm "$(basename $REPO)" >/dev/null
sleep ${AFTER:-10}
b=$(rss); $BIN/patina status | sed -n 1,9p
[ -n "${KEEP:-}" ] || $BIN/patina daemon stop >/dev/null
python3 -c "e,a,b=$e,$a,$b; print(f'empty {e/1024:.1f} MiB, with the repository {a/1024:.1f}, after rm {b/1024:.1f}: returned {(a-b)/(a-e):.0%} of what it added')"
