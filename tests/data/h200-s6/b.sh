#!/usr/bin/env bash
# H200, torch 2.15.0 with the operators stack (after a.sh): bench --model on a block with biases, attention and experts;
# the same model compiled per set and timed directly; the fp8 projection; the README's MLP example.
set -u
export PYTHONUNBUFFERED=1 ENVCHECK_CACHE_DIR=/tmp/ec
unset CUTE_DSL_ARCH
O=/tmp/outB; mkdir -p $O; exec > >(tee -a $O/b.log) 2>&1
t() { echo; echo "== $(date +%T) $*"; }
T=/tmp/v15/bin/python; EC=/tmp/ev/bin/envcheck
t "B1 bench --model transformer_block (cold)"; s=$(date +%s); timeout 240 $EC bench --python $T --model benchmarks/transformer_block.py --fresh --json > $O/block-cold.json 2> $O/block-cold.err; echo "exit $? in $(( $(date +%s)-s )) s"; tail -30 $O/block-cold.err
t "B1b the same, text (warm)"; s=$(date +%s); timeout 120 $EC bench --python $T --model benchmarks/transformer_block.py > $O/block-warm.txt 2>&1; echo "exit $? in $(( $(date +%s)-s )) s"; cat $O/block-warm.txt
t "B2 the block compiled per set and timed directly"; timeout 150 $T benchmarks/model_direct.py benchmarks/transformer_block.py:model --json $O/block-cold.json > $O/block-direct.txt 2>&1; echo "exit $?"; cat $O/block-direct.txt
t "B3 fp8"; s=$(date +%s); timeout 120 $EC bench --python $T --model benchmarks/transformer_block.py:fp8 > $O/fp8.txt 2>&1; echo "exit $? in $(( $(date +%s)-s )) s"; cat $O/fp8.txt
t end; tar -czf $OUT/b.tgz -C $O .
