#!/usr/bin/env bash
# The GPU path of encoding and fine-tuning, measured on a lent GPU machine (see prepare.sh):
# encode speed against sentence-transformers on short sentences and on long sections, the
# training step against sentence-transformers' fit, and the whole learning loop of
# benchmarks/learning_ir.py (900 judged queries → model, verdict, switch) on the GPU.
# Every stage has its own time limit and a failed stage does not stop the next one.
#
# Usage (in the repository root, there):  OUT=/some/folder bash benchmarks/gpu/run.sh
# (DEVICE=cpu SMALL=1 NS=100 try the same stages, small, on a machine without a GPU.)
set -u
NS=${NS:-900}
if [ -n "${SMALL:-}" ]; then N_SHORT=400 N_LONG=100 STEPS=5; else N_SHORT=40000 N_LONG=10000 STEPS=200; fi
LOG=gpu_log.txt source benchmarks/gpu/setup.sh || exit 1
stage "encode, short sentences" timeout 100 python3 benchmarks/encode_speed.py --device "$DEVICE" \
  --n $N_SHORT --rounds 3 --out "$OUT/encode_speed_cuda.json"
stage "learning loop, $NS judged queries" timeout 270 python3 benchmarks/learning_ir.py \
  --ns "$NS" --recipes all --threads "$(nproc)" --results "$OUT/learning_ir_cuda.json"
stage "training step" timeout 80 python3 benchmarks/finetune_speed.py --device "$DEVICE" \
  --steps $STEPS --rounds 3 --data .gpu/data --suffix _cuda
cp benchmarks/results/finetune_speed_cuda.json "$OUT/" 2>/dev/null
stage "encode, long sections" timeout 80 python3 benchmarks/encode_speed.py --device "$DEVICE" \
  --n $N_LONG --rounds 2 --texts benchmarks/.cache/pg-sections/corpus.csv \
  --out "$OUT/encode_speed_cuda_long.json"
echo "=== done ($(date +%T))"
