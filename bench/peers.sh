#!/usr/bin/env bash
# Side by side with a peer (issue 15 item 5): ck (BeaconBay/ck) and Patina on the same repositories
# in one run. Not part of CI: it builds a third-party tool and takes minutes per repository.
#
#   bench/peers.sh --ck CK --work DIR [--bin DIR] [--model DIR] [--runs N] [--skip-sem] REPO...
#
#   --ck CK       a ck checkout, or a ck git dir (cloned into DIR/ck); never vendored into Patina
#   --work DIR    scratch: ck build (DIR/ck-target), repository clones, state roots, model cache
#   --bin DIR     Patina's patina/patinad (default: target/release)
#   --model DIR   Patina's model dir (scripts/setup-model; default $PATINA_MODEL_DIR, else
#                 $PATINA_HOME/models/all-MiniLM-L6-v2, else ~/.local/share/patina/models/...)
#   --runs N      runs per query (default 5)
#   REPO          a checkout or a git dir; each is cloned twice under DIR/repos (one per tool)
#
# What it measures, per repository and per tool (bench/peers.py does the measuring):
#   cold index, lexical  - Patina: `patina add` against a running, empty daemon (returns once the
#                          lexical/symbol index is written). ck: the first `ck --lex` on a fresh
#                          clone (chunks the tree without embeddings, builds its tantivy index,
#                          answers one query).
#   cold index, semantic - Patina: from `patina add` until `patina status --json` shows every chunk
#                          embedded (embed_backlog 0; the commit-message backlog is reported apart).
#                          ck: `ck --index --model minilm .` on a fresh clone.
#   query p50/p95        - whole process (spawn, search, print to a file) over a fixed list of 10
#                          queries (5 identifiers, 5 questions) x N runs, after one warm-up each.
#                          Patina: `patina q` (default hybrid) and `--oracle lexical` against the warm
#                          daemon; ck: regex (`-F`), `--lex`, `--sem`, `--hybrid`, `--topk 10`.
#   RSS                  - Patina: the daemon's VmHWM (peak) and VmRSS when idle after indexing,
#                          from /proc/PID/status. ck: max RSS (getrusage of the child) of each
#                          indexing process and the median over query processes; ck keeps nothing
#                          resident between commands.
#
# Both tools run the same embedding model, all-MiniLM-L6-v2 fp32 (ck's default is bge-small, which
# would need huggingface): ck's fastembed cache is pre-populated with Patina's ONNX export of it and
# tokenizer, and ck links the ONNX Runtime library that scripts/setup-model installs (ort's
# ORT_LIB_LOCATION + ORT_PREFER_DYNAMIC_LINK; nothing is downloaded). HF_ENDPOINT points at a closed
# port so any download attempt fails at once instead of hanging. If ck's semantic side cannot run,
# the lexical/regex rows are still measured and the reason is printed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ck_src="" work="" bin="$here/../target/release" model="" runs=5 skip_sem=0 repos=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --ck) ck_src=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --skip-sem) skip_sem=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "peers.sh: unknown option $1" >&2; exit 2 ;;
    *) repos+=("$1"); shift ;;
  esac
done
[[ -n $ck_src && -n $work && ${#repos[@]} -gt 0 ]] || { echo "usage: bench/peers.sh --ck CK --work DIR [--bin DIR] [--model DIR] [--runs N] REPO..." >&2; exit 2; }
log() { printf 'peers: %s\n' "$*" >&2; }
mkdir -p "$work"
work=$(cd "$work" && pwd)
bin=$(cd "$bin" && pwd)
[[ -x $bin/patina && -x $bin/patinad ]] || { echo "peers.sh: no patina/patinad in $bin (cargo build --release)" >&2; exit 1; }

if [[ -z $model ]]; then
  if [[ -n ${PATINA_MODEL_DIR:-} ]]; then model=$PATINA_MODEL_DIR
  elif [[ -n ${PATINA_HOME:-} ]]; then model=$PATINA_HOME/models/all-MiniLM-L6-v2
  else model=${XDG_DATA_HOME:-$HOME/.local/share}/patina/models/all-MiniLM-L6-v2; fi
fi
sem_reason=""
[[ -f $model/model.onnx && -f $model/tokenizer.json ]] || sem_reason="no Patina model at $model (scripts/setup-model)"
((skip_sem)) && sem_reason="--skip-sem given"

# --- ck: checkout and release build, linked against Patina's ONNX Runtime ---------------------
if [[ -f $ck_src/Cargo.toml ]]; then ck_dir=$(cd "$ck_src" && pwd)
else
  ck_dir=$work/ck
  [[ -d $ck_dir/.git ]] || git clone -q "$ck_src" "$ck_dir"
fi
ck_commit=$(git -C "$ck_dir" rev-parse HEAD)
ortlib=$work/ortlib
mkdir -p "$ortlib"
ort_so=$(ls "$model"/lib/libonnxruntime.so.*.* 2>/dev/null | head -1 || true)
if [[ -n $ort_so ]]; then
  # ort links -lonnxruntime; the library's soname is libonnxruntime.so.1
  for n in libonnxruntime.so libonnxruntime.so.1; do ln -sf "$ort_so" "$ortlib/$n"; done
  [[ -f $model/lib/libonnxruntime_providers_shared.so ]] && ln -sf "$model/lib/libonnxruntime_providers_shared.so" "$ortlib/"
fi
ck=$work/ck-target/release/ck
if [[ -z $ort_so ]]; then
  echo "peers.sh: no libonnxruntime under $model/lib: ck cannot be linked without downloading ONNX Runtime" >&2; exit 1
fi
log "building ck $ck_commit (release, -j ${CK_JOBS:-1}, nice 10; a no-op when up to date)"
(cd "$ck_dir" && ORT_LIB_LOCATION=$ortlib ORT_PREFER_DYNAMIC_LINK=1 CARGO_TARGET_DIR=$work/ck-target \
  nice -n 10 cargo build --release --locked -j "${CK_JOBS:-1}" -p ck-search >&2)

# --- ck's model cache: all-MiniLM-L6-v2 in fastembed's hf-hub layout, from Patina's model dir ---
# fastembed's AllMiniLML6V2 is Qdrant/all-MiniLM-L6-v2-onnx (model.onnx, mean pooling); ck's cache
# root is $XDG_CACHE_HOME/ck/models. The two tokenizer side files are the model's standard BERT values.
cache=$work/xdg-cache
if [[ -z $sem_reason ]]; then
  snap=$cache/ck/models/models--Qdrant--all-MiniLM-L6-v2-onnx/snapshots/patina
  mkdir -p "$snap" "$(dirname "$(dirname "$snap")")/refs"
  printf patina > "$(dirname "$(dirname "$snap")")/refs/main"
  ln -sf "$model/model.onnx" "$snap/model.onnx"
  ln -sf "$model/tokenizer.json" "$snap/tokenizer.json"
  ln -sf "$model/config.json" "$snap/config.json"
  printf '{"cls_token":"[CLS]","mask_token":"[MASK]","pad_token":"[PAD]","sep_token":"[SEP]","unk_token":"[UNK]"}\n' > "$snap/special_tokens_map.json"
  printf '{"do_lower_case":true,"model_max_length":512,"pad_token":"[PAD]","cls_token":"[CLS]","sep_token":"[SEP]","unk_token":"[UNK]","mask_token":"[MASK]","tokenize_chinese_chars":true,"strip_accents":null,"tokenizer_class":"BertTokenizer"}\n' > "$snap/tokenizer_config.json"
fi

export CK_BIN=$ck CK_COMMIT=$ck_commit CK_LD_LIBRARY_PATH=$ortlib CK_XDG_CACHE_HOME=$cache
export PATINA_BIN=$bin PEERS_MODEL=$model PEERS_SEM_REASON=$sem_reason
exec python3 "$here/peers.py" --work "$work" --runs "$runs" "${repos[@]}"
