#!/bin/sh
# Print the commands that fetch the repositories this question set is
# labelled against, each checked out at the commit recorded in the JSONL
# files. Nothing is downloaded by this script; run its output yourself.
#
# Usage: bench/questions/fetch.sh URL_BASE DEST
#   URL_BASE  e.g. https://github.com (or a local mirror with owner/name.git)
#   DEST      directory that will hold one clone per repository
# Example:
#   bench/questions/fetch.sh https://github.com /tmp/bench-repos | sh
set -eu
if [ $# -ne 2 ]; then
    echo "usage: $0 URL_BASE DEST" >&2
    exit 2
fi
base=${1%/}
dest=${2%/}
# name  owner/repo  commit   (must match the "commit" field of NAME.jsonl)
while read -r name repo commit; do
    echo "git clone $base/$repo.git $dest/$name"
    echo "git -C $dest/$name checkout --detach $commit"
done <<'LIST'
cobra spf13/cobra adbc8813901bba65827259daa8e22ff94ec1f30e
flask pallets/flask 2ac89889f4cc330eabd50f295dcef02828522c69
ripgrep BurntSushi/ripgrep 3fce3b5bb0236da2df6d99672afb8a719642eca7
express expressjs/express a3714473feb3d2908add734d340e7755fd85e0a3
LIST
