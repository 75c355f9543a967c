#!/usr/bin/env bash
# H200, torch 2.15.0+cu132, envcheck from its wheel (main after every merge of 2026-12-04): the README's first command
# (doctor in envcheck's own venv), doctor --no-gpu on the torch venv (cuda.paths not compared), fix --bundle, the
# README's --model example (llama_mlp.py:decode) cold, and the same model compiled per set and timed directly.
set -u
export PYTHONUNBUFFERED=1 ENVCHECK_CACHE_DIR=/tmp/ec
unset CUTE_DSL_ARCH
O=/tmp/outD; mkdir -p $O; exec > >(tee -a $O/d.log) 2>&1
t() { echo; echo "== $(date +%T) $*"; }
[ -x /tmp/v15/bin/python ] || { t "install torch 2.15.0"; bash .gpu/t215/install.sh /tmp/v15 2>&1 | tail -3; }
T=/tmp/v15/bin/python
t "install envcheck from its wheel"; python3 -m venv /tmp/ev && /tmp/ev/bin/pip install -q --no-index --find-links .whl nvgemm-envcheck 2>&1 | tail -2
EC=/tmp/ev/bin/envcheck; $EC --version
t "D1 the README's first command: doctor in envcheck's own venv"; (cd /tmp && $EC doctor > $O/d1-own.txt 2>&1; echo "exit $?"); cat $O/d1-own.txt
t "D2 doctor --no-gpu on bare torch 2.15.0"; $EC doctor --python $T --no-gpu > $O/d2-nogpu.txt 2>&1; echo "exit $?"; grep -A4 "cuda.paths\|cutedsl.arch" $O/d2-nogpu.txt
t "D3 fix --bundle"; timeout 200 $EC fix --bundle /tmp/ob/ops.tar.parts.json --python $T --yes > $O/d3-fix.txt 2>&1; echo "exit $?"; tail -4 $O/d3-fix.txt
t "D4 bench --model benchmarks/llama_mlp.py:decode --fresh"; s=$(date +%s); timeout 240 $EC bench --python $T --model benchmarks/llama_mlp.py:decode --fresh --json > $O/mlp-decode.json 2> $O/mlp-decode.err; echo "exit $? in $(( $(date +%s)-s )) s"
python3 - $O/mlp-decode.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); m = d.get("model") or {}
print("recording:", (m.get("recording") or {}).get("device"), [ (g["op"], g["m"], g["n"], g["k"], g.get("bias")) for g in (m.get("recording") or {}).get("gemms", [])])
print("offered:", [o.get("text") for o in m.get("offered", [])])
for r in (m.get("timing") or {}).get("rows", []): print("row:", r.get("backends"), r.get("status"), r.get("ms"), r.get("gemm_calls"), r.get("cause"), r.get("failed_on"))
print("verdict:", (m.get("verdict") or {}).get("text"))
print("decision:", ((d.get("bench") or {}).get("decision") or {}).get("text"))
PY
t "D5 the same model compiled per set and timed directly"; timeout 200 $T benchmarks/model_direct.py benchmarks/llama_mlp.py:decode --json $O/mlp-decode.json > $O/mlp-direct.txt 2>&1; echo "exit $?"; grep -E "^(set|ATEN|NVGEMM)" $O/mlp-direct.txt
t end; tar -czf $OUT/d.tgz -C $O .
