#!/usr/bin/env bash
# The fine-tuning measurements on a shared 2-core CPU, one at a time, at low priority.
# Each writes its JSON into benchmarks/results/ as soon as it is done; checkpoints and
# history.json of the quality runs stay in $WORK (started again, a run resumes).
# STEPS caps the STSb runs (default: a full epoch); the schedule then spans STEPS steps.
# Usage: STEPS=120 nohup benchmarks/run_finetune_cpu.sh > /tmp/finetune_cpu.log 2>&1 &
# (STEPS=120 is what ran for the committed results; leave it unset for a full epoch.)
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
PY=${PY:-/work/main/.venv/bin/python}
WORK=${WORK:-/tmp/finetune_work}
CAP=${STEPS:+--max-steps $STEPS}
echo "start $(date -u +%H:%M:%S)"
nice -n 10 $PY benchmarks/finetune_speed.py --steps ${SPEED_STEPS:-12} --rounds 3
nice -n 10 $PY benchmarks/finetune_step_speed.py --steps ${SPEED_STEPS:-40}
echo "speed done $(date -u +%H:%M:%S)"
for objective in cosent cosine; do
    nice -n 10 $PY benchmarks/finetune_quality.py --objectives $objective --epochs 1 $CAP \
        --suffix _${objective}${STEPS:+_$STEPS} --work $WORK
    echo "$objective done $(date -u +%H:%M:%S)"
done
nice -n 10 $PY benchmarks/finetune_quality.py --objectives none --nli --max-steps 150 \
    --nli-dev-limit 1000 --suffix _nli --work $WORK
echo "nli done $(date -u +%H:%M:%S)"
