#!/usr/bin/env bash
# H200, torch 2.15.0 with the operators stack: the default llm bench cold then warm, CUTE_DSL_ARCH unset (the verdict
# for torch 2.15.0 says it is not needed), for envcheck's own share (benchmarks/bench_time_budget.py); then undo.
set -u
export PYTHONUNBUFFERED=1 ENVCHECK_CACHE_DIR=/tmp/ec
unset CUTE_DSL_ARCH
O=/tmp/outC; mkdir -p $O; exec > >(tee -a $O/c.log) 2>&1
t() { echo; echo "== $(date +%T) $*"; }
T=/tmp/v15/bin/python; EC=/tmp/ev/bin/envcheck
log() { grep -E '^(ENVCHECK-BENCH-|SingleProcess AUTOTUNE|envcheck-bench: phase|# )' "$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["bench"]["log"])' $1)" > $2 2>/dev/null; grep -c 'expects arch' "$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["bench"]["log"])' $1)"; }
t "C1 bench llm --fresh"; s=$(date +%s); timeout 420 $EC bench --python $T --fresh --json > $O/bench-llm-cold.json 2> $O/bench-llm-cold.err; echo "exit $? in $(( $(date +%s) - s )) s"; tail -14 $O/bench-llm-cold.err; echo "arch errors: $(log $O/bench-llm-cold.json $O/bench-llm-cold.log)"
t "C2 bench llm warm"; s=$(date +%s); timeout 130 $EC bench --python $T --json > $O/bench-llm-warm.json 2> $O/bench-llm-warm.err; echo "exit $? in $(( $(date +%s) - s )) s"; tail -14 $O/bench-llm-warm.err; echo "arch errors: $(log $O/bench-llm-warm.json $O/bench-llm-warm.log)"
t "C3 undo"; timeout 120 $EC fix --undo --yes --python $T 2>&1 | tail -3; $T -m pip freeze | sort > /tmp/freeze1.txt; diff /tmp/freeze0.txt /tmp/freeze1.txt && echo "FREEZE RESTORED"
t end; tar -czf $OUT/c.tgz -C $O .
