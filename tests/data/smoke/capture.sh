#!/usr/bin/env bash
# Captures, on a GPU machine, the outputs kept in tests/data/smoke/ and the timings of the closing note.
# Run from the repository root after `.gpu/install.sh python3` has installed the staged stack:
#     OUT=/some/dir bash tests/data/smoke/capture.sh [python3]
# It breaks the stack on purpose as it goes (cutlass_api uninstalled, the DSL moved out of site-packages), then
# puts the DSL back. Every step is time-limited and logged; a failed step does not stop the others.
set -u
py=${1:-python3}; out=${OUT:?set OUT}; cap="$out/captures"; mkdir -p "$cap"
export PYTHONUNBUFFERED=1 CAPTURE_PYTHON="$py" ENVCHECK_CACHE_DIR=/tmp/envcheck-cache
helper="$py tests/data/smoke/capture_child.py"
step() { echo "$(date +%s.%N) $*" >> "$out/steps.log"; }
site=$($py -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

step start
$py -c 'import torch, platform; print(torch.__version__, torch.version.cuda, platform.python_version())' > "$out/versions.txt" 2>&1
$py -m envcheck smoke --help > "$out/cli-help.txt" 2>&1; echo "cli exit $?" >> "$out/cli-help.txt"
tar -czf "$out/torch-nvgemm-src.tgz" -C "$($py -c 'import torch, os; print(os.path.dirname(torch.__file__))')" \
  _inductor/codegen/nv_universal_gemm _inductor/config.py _inductor/select_algorithm.py 2>/dev/null

step bench; timeout 300 $py benchmarks/smoke_times.py --python "$py" --warm 2 --out "$out/bench.json" > "$out/bench.txt" 2>&1
step cutedsl; timeout 90 $helper raw "$cap/cutedsl-backend-cc90.log" --backends CUTEDSL >> "$out/steps.log" 2>&1
step no-cuda; CUDA_VISIBLE_DEVICES= timeout 60 $helper raw "$cap/no-cuda-visible.log" >> "$out/steps.log" 2>&1
step timeout; ENVCHECK_CACHE_DIR=/tmp/envcheck-timeout timeout 90 $helper smoke "$cap/timeout-12s.smoke.json" --fresh --timeout 12 >> "$out/steps.log" 2>&1
sleep 1; ps -eo pid,pgid,etimes,cmd | grep -v grep | grep -E 'smoke_child|compile_worker' > "$out/leftover-processes.txt"
step warm-profile; ENVCHECK_SMOKE_PROFILE="$out/warm.prof" timeout 120 $helper smoke "$out/warm-profile.smoke.json" >> "$out/steps.log" 2>&1

step no-cutlass-api; $py -m pip uninstall -y cutlass_api >> "$out/steps.log" 2>&1
timeout 60 $helper smoke "$cap/no-cutlass-api.smoke.json" >> "$out/steps.log" 2>&1
timeout 60 $helper raw "$cap/no-cutlass-api.log" >> "$out/steps.log" 2>&1
timeout 90 $helper raw "$cap/no-cutlass-api-inductor.log" --no-import-check >> "$out/steps.log" 2>&1

step pth-trap; mkdir -p /tmp/target && mv "$site"/nvidia_cutlass_dsl* /tmp/target/
$py -m pip install -q --no-index --no-deps --no-build-isolation -e .gpu/cutlass/python/cutlass_api >> "$out/steps.log" 2>&1
PYTHONPATH=/tmp/target timeout 60 $helper smoke "$cap/pth-trap.smoke.json" >> "$out/steps.log" 2>&1
PYTHONPATH=/tmp/target timeout 60 $helper raw "$cap/pth-trap.log" >> "$out/steps.log" 2>&1
PYTHONPATH=/tmp/target timeout 90 $helper raw "$cap/pth-trap-inductor.log" --no-import-check >> "$out/steps.log" 2>&1
mv /tmp/target/nvidia_cutlass_dsl* "$site"/

step threads1; TORCHINDUCTOR_COMPILE_THREADS=1 timeout 250 $py benchmarks/smoke_times.py --python "$py" --warm 1 \
  --cache-dir /tmp/envcheck-threads1 --out "$out/bench-threads1.json" > "$out/bench-threads1.txt" 2>&1
step cold-profile; ENVCHECK_SMOKE_PROFILE="$out/cold.prof" timeout 150 $helper smoke "$out/cold-profile.smoke.json" --fresh >> "$out/steps.log" 2>&1
for p in warm cold; do
  [ -f "$out/$p.prof" ] && $py -c "import pstats, sys; s = pstats.Stats(sys.argv[1]); s.sort_stats('cumulative').print_stats(70); s.sort_stats('tottime').print_stats(40)" "$out/$p.prof" > "$out/$p-profile.txt" 2>&1
done
step copy; mkdir -p "$out/runs" "$out/runs-timeout"
cp -r "$ENVCHECK_CACHE_DIR/smoke/." "$out/runs/"; cp -r /tmp/envcheck-timeout/smoke/. "$out/runs-timeout/"
du -sh "$ENVCHECK_CACHE_DIR"/* > "$out/cache-sizes.txt" 2>&1
step end
