#!/usr/bin/env bash
# One call: the recipe stack, then issue 9's anchors cold and warm with the sustained-state timing; a table per run.
set -u
export ENVCHECK_CACHE_DIR=/tmp/ebc PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 250 > $OUT/smi.csv &
smi=$!
t0=$(date +%s.%N)
bash .gpu/install.sh python3 > $OUT/install.log 2>&1; echo "install rc=$? $(python3 -c "import time;print(round(time.time()-$t0,1))") s"
A=4096x4096x4096,8192x8192x8192,16x4096x4096
table() { python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); b = d["bench"]
print(sys.argv[1].split("/")[-1], "wall", d["wall_s"], b["status"], "|", b["summary"])
for m in b["measurements"]:
    k, db = m["kernel_ms"], m["do_bench_ms"]
    gap = "%+.1f%%" % (100 * (db / k - 1)) if k and db else "-"
    s = m["shape"]
    print("%5dx%dx%d %-7s %-6s k=%.4f sp=%.3f reps=%s %-12s db=%s gap=%s call=%s host=%s tf=%s c=%s %s" % (
        s["m"], s["n"], s["k"], m["backend"], m["status"], k or 0, m["spread"] or 0, m["reps"], m["mode"],
        "%.4f" % db if db else "-", gap, "%.4f" % m["call_ms"] if m["call_ms"] else "-",
        "%.4f" % m["host_ms"] if m["host_ms"] else "-", "%.0f" % m["tflops"] if m["tflops"] else "-",
        m["compile_s"], (m["kernel"] or "")[:32]))
PY
}
for run in "cold 125 100 --fresh" "warm 60 40"; do
  set -- $run
  timeout -s INT -k 10 $2 python3 -m envcheck bench --shapes $A --budget $3 --timeout $(( $2 - 8 )) --json ${4:-} > $OUT/anchors-$1.json 2> $OUT/anchors-$1.log
  echo "anchors-$1 rc=$?"; table $OUT/anchors-$1.json
done
kill $smi
tar -czf $OUT/runs.tgz -C $ENVCHECK_CACHE_DIR bench 2>/dev/null; ls -la $OUT
