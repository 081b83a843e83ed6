#!/bin/bash
# Needs a daemon built with the test hooks (PATINA_TEST_IDLE_RELEASE_SECS):
#   cargo build --release --workspace --features patinad/test-hooks
# fresh_seeded.sh BIN W SEED REPO: idle RSS of a daemon that has just indexed REPO into a fresh
# state W whose embedding cache is a copy of SEED (a state's `embeddings` directory holding every
# chunk's vector, e.g. from a run of rm_model.sh with KEEP=1), so the vectors come from the cache
# and no model work is needed: what indexing and the vector graph builds leave behind, in minutes
# instead of the hour the model takes at 100k chunks. KEEP=1 leaves the daemon running; CONFIG=TEXT
# is written to the state's config.toml (e.g. CONFIG='[daemon]\nmemory_mb = 128').
BIN=$1; W=$2; SEED=$3; REPO=$4
rm -rf "$W"; mkdir -p "$W/state"; export PATINA_HOME=$W
cp -r "$SEED" "$W/state/embeddings"
[ -z "${CONFIG:-}" ] || printf "$CONFIG\n" > "$W/config.toml"
ln -s "${PATINA_MODELS:-$HOME/.local/share/patina/models}" "$W/models"
export PATINA_TEST_IDLE_RELEASE_SECS=20
st() { $BIN/patina status --json; }
$BIN/patina daemon start >/dev/null 2>&1; sleep 20
P=$(st | python3 -c "import json,sys; print(json.load(sys.stdin)['daemon']['pid'])")
echo "empty $(grep VmRSS /proc/$P/status)"
t0=$(date +%s); $BIN/patina add "$REPO" >/dev/null 2>&1
until st | python3 -c "import json,sys; r=json.load(sys.stdin)['repos'][0]; sys.exit(not (not r['indexing'] and r['embed_backlog']==0 and r['vectors']>=r['chunks']))"; do sleep 10; done
echo "indexed, every chunk with a vector, after $(( $(date +%s) - t0 )) s"
# The last graph build holds every chunk.
N=$(st | python3 -c "import json,sys; print(json.load(sys.stdin)['repos'][0]['chunks'])")
until grep "vector index rebuilt" "$W/patinad.log" | tail -1 | grep -q "vectors=$N "; do sleep 5; done
echo "last graph build after $(( $(date +%s) - t0 )) s"
$BIN/patina q "how does the runtime schedule tasks" --repo "$(basename "$REPO")" >/dev/null 2>&1
sleep ${WAIT:-90}
$BIN/patina status | sed -n 1,9p
grep VmRSS /proc/$P/status
python3 "$(dirname "$0")/heapwalk2.py" $P | grep '^total'
[ -n "${KEEP:-}" ] || $BIN/patina daemon stop >/dev/null 2>&1
