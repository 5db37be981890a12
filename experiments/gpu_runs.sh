#!/usr/bin/env bash
# The GPU runs (docs/translation.md, docs/results/attention_bench_cuda.md) in one device call:
# the GPU tests, the CUDA attention benchmark, then the translation comparison (standard vs
# projection attention, sequence lengths 20 and 10, 10 epochs each, full data).
#
# Prepared here (once; .whl/ and runs/ are git-ignored):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp --platform manylinux2014_x86_64 -d .whl \
#       jsonargparse==4.53.0 docstring-parser==0.18.0 typeshed-client==2.14.0
#   mkdir -p runs/data/spa-eng && cp ../shared/datasets/spa-eng/spa.txt.gz runs/data/spa-eng/
# then run on the device with carry [".whl", "runs/data"]:
#   bash experiments/gpu_runs.sh
# Every step has its own time limit, so that one slow step still leaves the others' files
# under $OUT (one device call may run at most 10 minutes).
set -u
OUT=${OUT:-runs/gpu}
BUDGET_S=${BUDGET_S:-580}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1

left() { echo $((BUDGET_S - SECONDS)); }

{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    python3 -c "import torch, lightning; print('torch', torch.__version__, 'lightning', lightning.__version__)"
    timeout 100 python3 -m pytest -m gpu tests/ops/test_gpu.py -q -p no:cacheprovider
} >"$OUT/gpu_tests.txt" 2>&1
echo "gpu tests done at ${SECONDS}s"

timeout 130 python3 experiments/bench_attention.py --devices cuda \
    --lengths 1024 4096 16384 --iir-max-len 16384 --mem-cap-gib 8 --case-timeout 30 \
    --out "$OUT/attention_bench_cuda.md" >"$OUT/bench_log.txt" 2>&1
echo "bench done at ${SECONDS}s"

timeout "$(left)" python3 experiments/translate_compare.py --sequence-lengths 20 10 \
    --data-dir runs/data --output-dir "$OUT" --runs-dir /tmp/runs \
    --set trainer.precision=bf16-mixed \
    --set model.transformer.init_args.attention_backend=fused 2>&1 | tee "$OUT/translate_log.txt"
echo "translation done at ${SECONDS}s"
