#!/usr/bin/env bash
# The second GPU call: the encode paths again with three rounds each (run.sh's first call had
# time for one), the GPU batch limits, and where the encode's time goes.
# Usage (in the repository root, there):  OUT=/some/folder bash benchmarks/gpu/run2.sh
set -u
if [ -n "${SMALL:-}" ]; then N_SHORT=400 N_LONG=100; else N_SHORT=20000 N_LONG=5000; fi
LOG=gpu_log2.txt source benchmarks/gpu/setup.sh || exit 1
stage "encode, short sentences" timeout 110 python3 benchmarks/encode_speed.py --device "$DEVICE" \
  --n $N_SHORT --rounds 3 --out "$OUT/encode_speed_cuda.json"
stage "encode, long sections" timeout 100 python3 benchmarks/encode_speed.py --device "$DEVICE" \
  --n $N_LONG --rounds 3 --texts benchmarks/.cache/pg-sections/corpus.csv \
  --out "$OUT/encode_speed_cuda_long.json"
stage "encode profile" timeout 60 python3 benchmarks/gpu/encode_profile.py --n $N_SHORT --device "$DEVICE"
echo "=== done ($(date +%T))"
