#!/usr/bin/env bash
# The GPU runs (docs/translation.md, docs/operator.md) in one device call, step by step:
#   tests      the GPU tests (pytest -m gpu)
#   bench      the CUDA rows of the attention benchmark -> $OUT/attention_bench_cuda.md
#   sweep      short translation runs (30,000 pairs, 2 epochs, L = 20): projection with
#              unit-length q and k (normalize_qk) at σ = 0.5, 1 and 2 at every site and with σ
#              learned from 1, and standard attention -> $OUT/sweep_epochs.csv,
#              $OUT/sweep_log.txt (the σ = 0.05 / 0.1 / learned runs without normalize_qk and
#              the compiled standard run of 2026-11-27, this step's earlier version at
#              f0f3290, are in docs/results/translation_sigma_sweep_epochs.csv)
#   translate  the comparison: standard vs projection (unit-length q and k, σ = $SIGMA at every
#              site), L = 20 and 10 side by side, 10 epochs, full data
#              -> $OUT/translate.tgz: L{20,10}/translation{.md,.png,_epochs.csv,_samples.csv,
#              _results.json} and the logs; merge them here with translate_compare.py --merge
# STEPS picks and orders them (default: tests bench sweep; translate needs a call of its own:
# its four 10-epoch runs take most of one, and a call returns at most 8 files).
#
# Prepared here (once; .whl/ and runs/ are git-ignored):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp --platform manylinux2014_x86_64 -d .whl \
#       jsonargparse==4.53.0 docstring-parser==0.18.0 typeshed-client==2.14.0
#   mkdir -p runs/data/spa-eng && cp ../shared/datasets/spa-eng/spa.txt.gz runs/data/spa-eng/
# then run on the device with carry [".whl", "runs/data"]:
#   bash experiments/gpu_runs.sh                  # tests, bench, sweep
#   STEPS=translate bash experiments/gpu_runs.sh  # the comparison
# Every step has its own time limit, within BUDGET_S in all, so that one slow step still leaves
# the others' files under $OUT (one device call may run at most 10 minutes).
set -u
OUT=${OUT:-runs/gpu}
BUDGET_S=${BUDGET_S:-580}
STEPS=${STEPS:-tests bench sweep}
SIGMA=${SIGMA:-0.5}  # translate: the best unit-length σ of the short runs (docs/translation.md)
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1

# run "$@" (after the limit) for at most $1 seconds and never past BUDGET_S; SIGKILL 10 s
# after SIGTERM
limited() {
    local t=$1 rest=$((BUDGET_S - SECONDS - 10))
    shift
    ((rest < t)) && t=$rest
    ((t > 5)) && timeout -k 10 "$t" "$@"
}

TRANSLATE=(python3 experiments/translate_compare.py --data-dir runs/data --runs-dir /tmp/runs
    --set trainer.precision=bf16-mixed --set model.transformer.init_args.attention_backend=fused)
SHORT=(--sequence-lengths 20 --max-pairs 30000 --max-epochs 2 --output-dir /tmp/sweep)
PROJ=experiments/configs/translate_projection.yaml
STD=experiments/configs/translate_standard.yaml
ARGS=model.transformer.init_args

merge_sweep() {  # every finished sweep run's epochs, one CSV under $OUT
    python3 - "$OUT" <<'EOF'
import csv, pathlib, sys
rows = []
for path in sorted(pathlib.Path("/tmp/sweep").glob("*_epochs.csv")):
    rows += [{"run": path.name[: -len("_epochs.csv")], **r} for r in csv.DictReader(path.open())]
if rows:
    with (pathlib.Path(sys.argv[1]) / "sweep_epochs.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
        writer.writeheader()
        writer.writerows(rows)
EOF
}

for step in $STEPS; do
    case $step in
    tests)
        {
            nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
            python3 -c "import torch, lightning; print(torch.__version__, lightning.__version__)"
            limited 100 python3 -m pytest -n 0 -m gpu tests/ops/test_gpu.py -q -p no:cacheprovider
        } >"$OUT/gpu_tests.txt" 2>&1 ;;
    bench)
        limited 120 python3 experiments/bench_attention.py --devices cuda \
            --lengths 1024 4096 16384 --iir-max-len 16384 --mem-cap-gib 8 --case-timeout 30 \
            --out "$OUT/attention_bench_cuda.md" >"$OUT/bench_log.txt" 2>&1 ;;
    sweep)
        for run in unit0.5 unit1 unit2 unit1learned standard; do
            case $run in
            unit*) sigma=${run#unit}
                   args=(--configs $PROJ --set "$ARGS.normalize_qk=true"
                         --set "$ARGS.self_attention_sigma=${sigma%learned}"
                         --set "$ARGS.cross_attention_sigma=${sigma%learned}")
                   [ "${sigma%learned}" != "$sigma" ] && args+=(--set "$ARGS.learn_sigma=true") ;;
            standard) args=(--configs $STD) ;;
            esac
            limit=55
            limited $limit "${TRANSLATE[@]}" "${SHORT[@]}" --name "$run" "${args[@]}" \
                >>"$OUT/sweep_log.txt" 2>&1
            merge_sweep
        done ;;
    translate)  # projection with unit-length q and k at σ = $SIGMA (standard ignores both);
        # the two lengths run side by side, one process each: a step of this small model is
        # host-bound (3.5 ms of kernels in a step of about 10 ms for standard attention,
        # docs/results/translation_profile_h200.txt), and the four runs one after another
        # would not fit one call. Their times are therefore shared-GPU times.
        for L in 20 10; do
            limited "$BUDGET_S" "${TRANSLATE[@]}" --sequence-lengths $L --output-dir "$OUT/L$L" \
                --runs-dir /tmp/runs$L --set "$ARGS.normalize_qk=true" \
                --set "$ARGS.self_attention_sigma=$SIGMA" \
                --set "$ARGS.cross_attention_sigma=$SIGMA" >"$OUT/translate_log_L$L.txt" 2>&1 &
        done
        wait
        # a call returns at most 8 files: one archive of both folders and their logs
        (cd "$OUT" && tar czf translate.tgz L20 L10 translate_log_L20.txt translate_log_L10.txt \
            && rm -rf L20 L10 translate_log_L20.txt translate_log_L10.txt) ;;
    esac
    echo "$step done at ${SECONDS}s"
done
