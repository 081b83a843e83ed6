#!/usr/bin/env bash
set -euo pipefail

source ./lib/log.sh
. "config/defaults.sh"

# Prints how to call this script.
usage() {
  echo "usage: deploy.sh TARGET"
}

function build {
  cargo build --release
  log_info "built"
}

deploy() (
  build
  rsync -a target/ "$1:/srv/"
)

main() {
  [[ $# -eq 1 ]] || { usage; exit 2; }
  deploy "$1"
}

main "$@"
