#!/usr/bin/env bash
# H200, torch 2.15.0+cu132: install torch and envcheck (its wheel), doctor (bare, own env), fix --bundle, doctor after,
# dockerfile, smoke three ways (CUTE_DSL_ARCH unset; every NVGEMM config; supplement configs), explain on a real
# Linear-with-bias failure.
set -u
export PYTHONUNBUFFERED=1 ENVCHECK_CACHE_DIR=/tmp/ec
unset CUTE_DSL_ARCH
O=/tmp/outA; mkdir -p $O; exec > >(tee -a $O/a.log) 2>&1
t() { echo; echo "== $(date +%T) $*"; }
[ -x /tmp/v15/bin/python ] || { t "install torch 2.15.0"; bash .gpu/t215/install.sh /tmp/v15 2>&1 | tail -3; }
T=/tmp/v15/bin/python
[ -x /tmp/ev/bin/envcheck ] || { t "install envcheck from its wheel"; python3 -m venv /tmp/ev && /tmp/ev/bin/pip install -q --no-index --find-links .whl nvgemm-envcheck 2>&1 | tail -2; }
EC=/tmp/ev/bin/envcheck; $EC --version
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; ls -l /usr/local/nvidia/lib64/libcuda* /usr/local/nvidia/lib/libcuda* 2>&1 | head
$T -m pip freeze | sort > /tmp/freeze0.txt
t "A1 doctor on bare torch 2.15.0"; $EC doctor --python $T > $O/a1-doctor.txt 2>&1; echo "exit $?"; cat $O/a1-doctor.txt
$EC doctor --python $T --json > $O/a1-doctor.json 2>/dev/null
t "A1b doctor in envcheck's own environment (the README's first command)"; (cd /tmp && $EC doctor > $O/a1b-own.txt 2>&1; echo "exit $?"); head -30 $O/a1b-own.txt
t "A2 fix --dry-run, then fix --bundle"; $EC fix --dry-run --python $T > $O/a2-dry.txt 2>&1; echo "exit $?"; cat $O/a2-dry.txt
timeout 300 $EC fix --bundle /tmp/ob/ops.tar.parts.json --python $T --yes > $O/a2-fix.txt 2>&1; echo "exit $?"; tail -8 $O/a2-fix.txt
t "A3 doctor after fix"; $EC doctor --python $T > $O/a3-doctor.txt 2>&1; echo "exit $?"; cat $O/a3-doctor.txt
$EC doctor --python $T --json > $O/a3-doctor.json 2>/dev/null
TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS=all $EC doctor --python $T > $O/a3-doctor-all.txt 2>&1; echo "exit (all configs) $?"; grep -A3 cutedsl.arch $O/a3-doctor-all.txt
t "A3b dockerfile per torch"; for v in 2.15.0 2.14.1; do $EC dockerfile --torch $v --gpu-capability 9.0 > $O/a3b-dockerfile-$v.txt 2> $O/a3b-dockerfile-$v.err; echo "$v exit $?: $(grep -c '^ENV CUTE_DSL_ARCH' $O/a3b-dockerfile-$v.txt) ENV lines"; cat $O/a3b-dockerfile-$v.err | head -3; done
t "A4 smoke --fresh, CUTE_DSL_ARCH unset"; timeout 240 $EC smoke --python $T --fresh --json > $O/a4-smoke.json 2> $O/a4-smoke.err; echo "exit $?"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print({k: d.get(k) for k in ('status','exit_code')}); print(json.dumps(d.get('candidates') or d.get('smoke',{}).get('candidates'))[:600])" $O/a4-smoke.json 2>&1
t "A4b smoke --fresh, every NVGEMM config"; TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS=all timeout 240 $EC smoke --python $T --fresh > $O/a4b-smoke-all.txt 2>&1; echo "exit $?"; cat $O/a4b-smoke-all.txt
t "A4c smoke --fresh, supplement configs"; TORCHINDUCTOR_NVGEMM_SUPPLEMENT_CONFIGS=1 timeout 240 $EC smoke --python $T --fresh > $O/a4c-smoke-supp.txt 2>&1; echo "exit $?"; cat $O/a4c-smoke-supp.txt
t "A5 explain on a Linear with bias, NVGEMM alone"
$T - > $O/a5-linear.out 2> $O/a5-linear.log <<'PY'
import torch, torch._inductor.config as c
c.max_autotune = True; c.max_autotune_gemm_backends = "NVGEMM"
m = torch.nn.Linear(1024, 2048).cuda().bfloat16(); torch.compile(m)(torch.randn(256, 1024, device="cuda", dtype=torch.bfloat16))
PY
echo "linear exit $?"; tail -3 $O/a5-linear.log
$EC explain $O/a5-linear.log > $O/a5-explain.txt 2>&1; echo "explain exit $?"; cat $O/a5-explain.txt
$EC explain $O/a5-linear.log --json > $O/a5-explain.json 2>&1
$EC explain $O/a5-linear.log --python $T > $O/a5-explain-python.txt 2>&1; echo "explain --python exit $?"; head -12 $O/a5-explain-python.txt
TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN,TRITON,NVGEMM $T - > $O/a5-remedy.out 2> $O/a5-remedy.log <<'PY'
import torch, torch._inductor.config as c
c.max_autotune = True
m = torch.nn.Linear(1024, 2048).cuda().bfloat16(); torch.compile(m)(torch.randn(256, 1024, device="cuda", dtype=torch.bfloat16)); print("ok")
PY
echo "remedy exit $?"
t end; tar -czf $OUT/a.tgz -C $O .
