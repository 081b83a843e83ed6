#!/bin/bash
# Needs a daemon built with the test hooks (PATINA_TEST_IDLE_RELEASE_SECS):
#   cargo build --release --workspace --features patinad/test-hooks
# The first question after the query session was released idle, against warm ones (whole
# process, ms). The release time is shortened to 20 s with the daemon's test knob.
#   bench/first_query.sh BIN_DIR PATINA_HOME REPO [ROUNDS]
set -u
BIN=$1; export PATINA_HOME=$2 PATINA_TEST_IDLE_RELEASE_SECS=20; REPO=$3; ROUNDS=${4:-5}
"$BIN/patina" daemon stop >/dev/null 2>&1; "$BIN/patina" daemon start >/dev/null 2>&1; sleep 20
q() { local s; s=$(date +%s%N); "$BIN/patina" q --repo "$REPO" -n 10 "$1" >/dev/null; echo $(( ($(date +%s%N) - s) / 1000000 )); }
for round in $(seq "$ROUNDS"); do
  sleep 45
  cold=$(q "how are blueprints registered on the application round $round")
  warm1=$(q "where is the request context pushed round $round")
  warm2=$(q "how does url routing match a rule round $round")
  echo "after release: $cold ms; warm: $warm1 $warm2 ms"
done
grep "query session loaded" "$PATINA_HOME/patinad.log" | tail -"$ROUNDS"
"$BIN/patina" daemon stop
