"""Where a translation training step's time goes: standard vs projection attention.

Trains each attention kind for ``--steps`` steps on 30,000 pairs (validation off, BLEU off),
under bf16-mixed with the fused projection backend and unit-length q and k at σ = 0.5 (the
settings of docs/results/translation.md), times every step after a host-device sync, and runs
``torch.profiler`` over 20 steps of the second half. Writes ``profile_<kind>.txt`` to ``--out``:
the mean step time over the second half (the 20 profiled steps included, so it is an upper
bound), then the operators sorted by self CUDA time and by self CPU time.

On the GPU (docs/results/translation_profile_h200.txt; .whl and runs/data as in
experiments/gpu_runs.sh):
    python experiments/translate_profile.py --out $OUT --steps 400
Further LightningCLI overrides go after the options, e.g. ``--model.compile=true``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import lightning as L
import torch
from torch.profiler import ProfilerActivity, profile, schedule

from tssdpa.translation.cli import TranslationCLI

REPO = Path(__file__).resolve().parents[1]
ARGS = "model.transformer.init_args"


class StepTimer(L.Callback):
    """Wall clock at the start of every training step, after the device has caught up."""

    def __init__(self):
        self.starts: list[float] = []

    def on_train_batch_start(self, *args):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        self.starts.append(time.perf_counter())


class ProfilerStep(L.Callback):
    def __init__(self, prof):
        self.prof = prof

    def on_train_batch_end(self, *args):
        self.prof.step()


def profile_one(kind: str, steps: int, data_dir: str, extra: list[str]) -> list[str]:
    args = [
        "--config",
        str(REPO / f"experiments/configs/translate_{kind}.yaml"),
        f"--data.data_dir={data_dir}",
        "--data.max_pairs=30000",
        "--trainer.logger=false",
        "--trainer.callbacks=[]",
        "--trainer.enable_checkpointing=false",
        "--history_file=null",
        "--test_after_fit=false",
        f"--trainer.max_steps={steps}",
        "--trainer.limit_val_batches=0",
        "--trainer.precision=bf16-mixed",
        f"--{ARGS}.attention_backend=fused",
        f"--{ARGS}.normalize_qk=true",
        f"--{ARGS}.self_attention_sigma=0.5",
        f"--{ARGS}.cross_attention_sigma=0.5",
        "--model.bleu=false",
        *extra,
    ]
    saved, sys.argv = sys.argv, sys.argv[:1]  # the CLI reads only the arguments given
    try:
        cli = TranslationCLI(args=args, run=False)
    finally:
        sys.argv = saved
    timer = StepTimer()
    cli.trainer.callbacks.append(timer)
    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    with profile(
        activities=activities, schedule=schedule(wait=steps // 2, warmup=5, active=20)
    ) as prof:
        cli.trainer.callbacks.append(ProfilerStep(prof))
        cli.trainer.fit(cli.model, datamodule=cli.datamodule)
    t = timer.starts
    half = len(t) // 2
    per_step_ms = (t[-1] - t[half]) / (len(t) - 1 - half) * 1e3
    lines = [
        f"{kind}: {per_step_ms:.2f} ms per training step (steps {half}..{len(t) - 1}, alone on "
        "the device, profiler active over 20 of them)"
    ]
    keys = ["self_cuda_time_total"] if torch.cuda.is_available() else []
    for key in [*keys, "self_cpu_time_total"]:
        table = prof.key_averages().table(sort_by=key, row_limit=18, max_name_column_width=60)
        lines.append(table)
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="folder for profile_<kind>.txt")
    p.add_argument("--steps", type=int, default=400, help="training steps per attention kind")
    p.add_argument("--data-dir", default="runs/data", help="folder holding spa-eng/spa.txt.gz")
    args, extra = p.parse_known_args(argv)
    if args.steps < 60:
        p.error(f"--steps must be at least 60 (20 profiled in the second half), got {args.steps}")
    args.out.mkdir(parents=True, exist_ok=True)
    for kind in ("standard", "projection"):
        lines = profile_one(kind, args.steps, args.data_dir, extra)
        (args.out / f"profile_{kind}.txt").write_text("\n".join(lines))
        print(lines[0], flush=True)


if __name__ == "__main__":
    main()
