#!/usr/bin/env bash
# The fine-tuning measurements on a shared 2-core CPU, one at a time, at low priority.
# Each writes its JSON into benchmarks/results/ as soon as it is done; logs go to /tmp.
# Usage: nohup benchmarks/run_finetune_cpu.sh > /tmp/finetune_cpu.log 2>&1 &
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
PY=${PY:-/work/main/.venv/bin/python}
echo "start $(date -u +%H:%M:%S)"
nice -n 10 $PY benchmarks/finetune_speed.py --steps 40 --rounds 3
echo "speed done $(date -u +%H:%M:%S)"
nice -n 10 $PY benchmarks/finetune_quality.py --objectives cosine --epochs 1 --suffix _cosine_1ep
echo "cosine done $(date -u +%H:%M:%S)"
nice -n 10 $PY benchmarks/finetune_quality.py --objectives cosent --epochs 1 --suffix _cosent_1ep
echo "cosent done $(date -u +%H:%M:%S)"
nice -n 10 $PY benchmarks/finetune_quality.py --objectives none --nli --max-steps 300 \
    --nli-dev-limit 2000 --suffix _nli
echo "nli done $(date -u +%H:%M:%S)"
