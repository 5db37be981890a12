#!/usr/bin/env bash
# The GPU runs (docs/translation.md, docs/operator.md) in one device call, step by step:
#   tests      the GPU tests (pytest -m gpu)
#   bench      the CUDA rows of the attention benchmark -> $OUT/attention_bench_cuda.md
#   sweep      short translation runs (30,000 pairs, 2 epochs, L = 20): projection at
#              σ = 0.05 and 0.1 at every site and with learned σ, and standard attention
#              with and without torch.compile -> $OUT/sweep_epochs.csv, $OUT/sweep_log.txt
#   translate  the comparison: standard vs projection, L = 20 and 10, 10 epochs, full data
#              -> $OUT/translation{.md,.png,_epochs.csv,_samples.csv}
# STEPS picks and orders them (default: all four, in this order).
#
# Prepared here (once; .whl/ and runs/ are git-ignored):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp --platform manylinux2014_x86_64 -d .whl \
#       jsonargparse==4.53.0 docstring-parser==0.18.0 typeshed-client==2.14.0
#   mkdir -p runs/data/spa-eng && cp ../shared/datasets/spa-eng/spa.txt.gz runs/data/spa-eng/
# then run on the device with carry [".whl", "runs/data"]:
#   STEPS="tests bench sweep" bash experiments/gpu_runs.sh
# Every step has its own time limit, so that one slow step still leaves the others' files
# under $OUT (one device call may run at most 10 minutes; at most 8 files come back).
set -u
OUT=${OUT:-runs/gpu}
BUDGET_S=${BUDGET_S:-580}
STEPS=${STEPS:-tests bench sweep translate}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1

left() { echo $((BUDGET_S - SECONDS)); }
TRANSLATE=(python3 experiments/translate_compare.py --data-dir runs/data --runs-dir /tmp/runs
    --set trainer.precision=bf16-mixed --set model.transformer.init_args.attention_backend=fused)
SHORT=(--sequence-lengths 20 --max-pairs 30000 --max-epochs 2 --output-dir /tmp/sweep)
PROJ=experiments/configs/translate_projection.yaml
STD=experiments/configs/translate_standard.yaml
SIGMA=model.transformer.init_args

for step in $STEPS; do
    case $step in
    tests)
        {
            nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
            python3 -c "import torch, lightning; print(torch.__version__, lightning.__version__)"
            timeout 100 python3 -m pytest -m gpu tests/ops/test_gpu.py -q -p no:cacheprovider
        } >"$OUT/gpu_tests.txt" 2>&1 ;;
    bench)
        timeout 150 python3 experiments/bench_attention.py --devices cuda \
            --lengths 1024 4096 16384 --iir-max-len 16384 --mem-cap-gib 8 --case-timeout 30 \
            --out "$OUT/attention_bench_cuda.md" >"$OUT/bench_log.txt" 2>&1 ;;
    sweep)
        {
            for s in 0.05 0.1; do
                timeout 60 "${TRANSLATE[@]}" "${SHORT[@]}" --configs $PROJ --name "sigma$s" \
                    --set $SIGMA.self_attention_sigma=$s --set $SIGMA.cross_attention_sigma=$s
            done
            timeout 60 "${TRANSLATE[@]}" "${SHORT[@]}" --configs $PROJ --name learned \
                --set $SIGMA.learn_sigma=true
            timeout 60 "${TRANSLATE[@]}" "${SHORT[@]}" --configs $STD --name standard
            timeout 120 "${TRANSLATE[@]}" "${SHORT[@]}" --configs $STD --name compiled \
                --set model.compile=true
        } >"$OUT/sweep_log.txt" 2>&1
        python3 - "$OUT" <<'EOF'
import csv, pathlib, sys
out = pathlib.Path(sys.argv[1])
rows = []
for name in ("sigma0.05", "sigma0.1", "learned", "standard", "compiled"):
    path = pathlib.Path("/tmp/sweep") / f"{name}_epochs.csv"
    if path.exists():
        rows += [{"run": name, **r} for r in csv.DictReader(path.open())]
if rows:
    with (out / "sweep_epochs.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
EOF
        ;;
    translate)
        timeout "$(left)" "${TRANSLATE[@]}" --sequence-lengths 20 10 --output-dir "$OUT" \
            >"$OUT/translate_log.txt" 2>&1 ;;
    esac
    echo "$step done at ${SECONDS}s"
done
