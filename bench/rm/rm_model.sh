#!/bin/bash
# Needs a daemon built with the test hooks (PATINA_TEST_IDLE_RELEASE_SECS):
#   cargo build --release --workspace --features patinad/test-hooks
# rm_model.sh BIN REPO: as rm_one.sh, with the model: RSS measured once every chunk has the model's vector.
BIN=$1; REPO=$2; W=/tmp/rmmodel; rm -rf $W; mkdir -p $W; export PATINA_HOME=$W
ln -s ${PATINA_MODELS:-$HOME/.local/share/patina/models} $W/models
export PATINA_TEST_IDLE_RELEASE_SECS=20
pid() { $BIN/patina status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['daemon']['pid'])"; }
rss() { grep VmRSS /proc/$(pid)/status | awk '{print $2}'; }
$BIN/patina daemon start >/dev/null 2>&1; sleep 40; e=$(rss)
t0=$(date +%s); $BIN/patina add "$REPO" >/dev/null 2>&1
while true; do
  b=$($BIN/patina status --json | python3 -c "import json,sys; d=json.load(sys.stdin); print(sum(r['embed_backlog'] for r in d['repos']))")
  [ "$b" = 0 ] && break; echo "$(( $(date +%s) - t0 )) s: backlog $b"; sleep 60
done
echo "embedded after $(( $(date +%s) - t0 )) s"
# The graph is built once more when the backlog drains (at 20k vectors and more): wait for it.
N=$($BIN/patina status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['repos'][0]['chunks'])")
if [ "$N" -ge 20000 ]; then
  until grep "vector index rebuilt" $W/patinad.log | tail -1 | grep -q "vectors=$N "; do sleep 5; done
  echo "last graph build after $(( $(date +%s) - t0 )) s"
fi
$BIN/patina q "how does the runtime schedule tasks" --repo big >/dev/null 2>&1
sleep ${WAIT:-90}; $BIN/patina status | sed -n 1,9p; a=$(rss)
$BIN/patina rm "$(basename $REPO)" >/dev/null
sleep ${AFTER:-10}; b=$(rss); $BIN/patina status | sed -n 1,9p
[ -n "${KEEP:-}" ] || $BIN/patina daemon stop >/dev/null
python3 -c "e,a,b=$e,$a,$b; print(f'model: empty {e/1024:.1f} MiB, with the repository {a/1024:.1f}, after rm {b/1024:.1f}: returned {(a-b)/(a-e):.0%} of what it added')"
