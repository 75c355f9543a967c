#!/usr/bin/env bash
# H200, the image's torch 2.11.0+cu130 with the recipe stack from `envcheck bundle --profile torch-2.11-nvgemm`
# (envcheck from its wheel, main 40505f6): the README's first command, doctor and fix --bundle on the image's python3,
# then the reference model block (tests/data/h200-s4/model.py) with NVGEMM alone and beside ATEN,TRITON, each log read
# whole for errors.
set -u
export PYTHONUNBUFFERED=1 ENVCHECK_CACHE_DIR=/tmp/ec
unset CUTE_DSL_ARCH
O=$OUT/e; mkdir -p $O; exec > >(tee -a $O/e.log) 2>&1
t() { echo; echo "== $(date +%T) $*"; }
mkdir -p /tmp/rb && cp .gpu/rec/rec.tar.part02-of-02 .gpu/rec/rec.tar.parts.json /tmp/rb/
T=python3
t "install envcheck from its wheel"; python3 -m venv /tmp/ev && /tmp/ev/bin/pip install -q --no-index --find-links .whl nvgemm-envcheck 2>&1 | tail -2
EC=/tmp/ev/bin/envcheck; $EC --version; $T -c 'import torch; print(torch.__version__)'
t "E1 the README's first command (envcheck's own venv)"; (cd /tmp && $EC doctor > $O/e1-own.txt 2>&1; echo "exit $?"); grep -E "^  (PASS|WARN|FAIL|SKIP)|checks:|can fix|own environment" $O/e1-own.txt
t "E2 doctor on the image's python3"; $EC doctor --python $T > $O/e2-doctor.txt 2>&1; echo "exit $?"; grep -E "^  (PASS|WARN|FAIL|SKIP)|checks:|chosen" $O/e2-doctor.txt
t "E3 fix --bundle (recipe)"; timeout 150 $EC fix --bundle /tmp/rb/rec.tar.parts.json --python $T --yes > $O/e3-fix.txt 2>&1; echo "exit $?"; tail -5 $O/e3-fix.txt
$EC doctor --python $T > $O/e3-doctor.txt 2>&1; echo "doctor after: exit $?"; grep -E "^  (WARN|FAIL)|checks:" $O/e3-doctor.txt
for run in "NVGEMM 2048" "ATEN,TRITON,NVGEMM 16"; do
  set -- $run; t "E4 model.py $1 M=$2"
  TORCHINDUCTOR_CACHE_DIR=/tmp/mc-$2 timeout 85 $T tests/data/h200-s4/model.py $1 $2 > $O/e4-$2.log 2>&1; echo "exit $?"
  grep RESULT $O/e4-$2.log; echo "lines $(wc -l < $O/e4-$2.log); error-ish lines: $(grep -ciE 'error|exception|traceback|failed' $O/e4-$2.log)"
  grep -iE 'error|exception|traceback|failed' $O/e4-$2.log | sort | uniq -c | sort -rn | head -8
  grep -c "nv_universal_gemm" $O/e4-$2.log
done
t "E5 explain on the model's log"; $EC explain $O/e4-2048.log > $O/e5-explain.txt 2>&1; echo "exit $?"; head -8 $O/e5-explain.txt
t end
