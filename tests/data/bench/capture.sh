#!/usr/bin/env bash
# Captures, on a GPU machine, the outputs kept in tests/data/bench/. Run from the repository root after
# `bash .gpu/install.sh python3` has installed the staged recipe stack:
#     OUT=/some/dir bash tests/data/bench/capture.sh [python3] [A|B]
# Part A (about 8 minutes): issue 9's anchors cold then warm, the library called directly, torch without a GPU,
# and a first fill of the llm shapes. Part B (about 8 minutes, right after A on the same machine: it needs A's
# caches under /tmp): the rest of the llm shapes cold, then the whole default set warm.
# Every step has its own time limit (SIGINT first, so that envcheck takes its child's process group down with it;
# --timeout keeps envcheck inside it, so that its JSON is written) and a failed step does not stop the others.
# At most 8 files land in $OUT.
set -u
py=${1:-python3}; part=${2:-A}; out=${OUT:?set OUT}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 ENVCHECK_CACHE_DIR=/tmp/envcheck-bench-cache
step() { echo "$(date +%s.%N) $*" >> "$out/steps.log"; }
bench() {  # name limit_s args...
  local name=$1 limit=$2; shift 2
  step "$name start"
  echo "=== $name: envcheck bench $*" >> "$out/progress.log"
  timeout -s INT -k 15 "$limit" $py -m envcheck bench --timeout $((limit - 12)) "$@" > "$out/$name.json" 2>> "$out/progress.log"
  step "$name exit $?"
}

step "start part $part"
{ $py -c 'import torch, platform; print(torch.__version__, torch.version.cuda, platform.python_version())'
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
  nproc; git log -1 --format=%h; } >> "$out/steps.log" 2>&1
anchors=4096x4096x4096,8192x8192x8192,16x4096x4096  # issue 9's anchors
case $part in
A)
  bench anchors-cold 150 --shapes $anchors --budget 110 --json --fresh
  bench anchors-warm 60 --shapes $anchors --budget 40 --json
  bench library 100 --shapes $anchors --budget 70 --json --library
  CUDA_VISIBLE_DEVICES= bench no-cuda 20 --shapes 256x512x256 --json
  bench llm-fill-1 140 --budget 110 --json
  ;;
B)
  bench llm-fill-2 300 --budget 270 --json
  bench llm-warm 170 --budget 150 --json
  ;;
esac
step copy
tar -czf "$out/runs.tgz" -C "$ENVCHECK_CACHE_DIR" bench 2>> "$out/steps.log"
step end
