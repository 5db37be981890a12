"""The causal channel choice scored on the fit block or on the rows after it: the harness's
denoising cells of a long recording (seed 0, its six noise settings, its split), one joint
and one each-channel-alone causal fit of the training part per cell, and the test SNR gain
(dB) of the output each rule's choice gives, channel by channel:

* ``fit block``: a channel alone where its score on the fit block (the first
  ``max_fit_samples`` training rows, on which both fits tuned their settings) is lower than the
  joint one's by more than ``CAUSAL_TIE`` (the rule before 2026-12-06);
* ``held out``: the same on the training rows after the block
  (``projection_channels.held_out_scores``; the rule since);
* ``both``: a channel alone only where both say so;
* ``joint`` and ``alone``: every channel the one way.

Fits with the clean target, as the harness fits them, or with ``--sure`` without it (SURE).

    .venv/bin/python experiments/channels_held_out_probe.py imu_fusion --data-dir ../shared/datasets
    .venv/bin/python experiments/channels_held_out_probe.py ETTh2 --columns HUFL HULL MUFL MULL \\
        LUFL LULL OT --sure --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from tssdpa.data.tasks import denoise_tasks
from tssdpa.filters import ProjectionFilter
from tssdpa.filters.projection_channels import CAUSAL_TIE, held_out_scores


def cell(task, sure: bool) -> dict:
    """Per rule of the module: (test SNR gain dB, the channels alone as 'A' / 'j')."""
    tr0, tr1 = task.split.bounds("train")
    t0, t1 = task.split.bounds("test")
    x = task.noisy[tr0:tr1]
    target = None if sure else task.clean[tr0:tr1].copy()
    joint = ProjectionFilter(causal=True, channel_independent=False).fit(x.copy(), target)
    alone = ProjectionFilter(causal=True, channel_independent=True).fit(x.copy(), target)
    block = slice(0, min(len(x), joint.max_fit_samples))  # no channel starts late in these
    hj, ha, scored = held_out_scores(joint, x, target, None, block, alone.channel_models_)
    bj, ba = joint.channel_scores_, alone.channel_scores_
    own = ba < bj - CAUSAL_TIE * np.abs(bj)
    after = np.where(scored, ha < hj - CAUSAL_TIE * np.abs(hj), own)
    picks = {"fit block": own, "held out": after, "both": own & after,
             "joint": np.zeros_like(own), "alone": np.ones_like(own)}  # fmt: skip
    w = min(t0, task.warmup)  # as the harness filters its test part
    y_joint, y_alone = (np.asarray(f.filter(task.noisy[t0 - w : t1]))[w:] for f in (joint, alone))
    clean = task.clean[t0:t1]
    noisy = np.sqrt(np.nanmean((task.noisy[t0:t1] - clean) ** 2))
    out = {}
    for rule, pick in picks.items():
        rmse = np.sqrt(np.mean((np.where(pick, y_alone, y_joint) - clean) ** 2))
        out[rule] = (20 * np.log10(noisy / rmse), "".join("A" if p else "j" for p in pick))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset")
    p.add_argument("--columns", nargs="+", default=None)
    p.add_argument("--sure", action="store_true", help="fits without the target (SURE)")
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")  # notes on the data: not this probe's subject
    tasks = denoise_tasks(args.dataset, seeds=(0,), columns=args.columns, quick=True,
                          data_dir=args.data_dir)  # fmt: skip
    gains: dict = {}
    for task in tasks:
        res = cell(task, args.sure)
        for rule, (g, chosen) in res.items():
            gains.setdefault(rule, []).append((g, chosen.count("A")))
        print(f"{task.setting:16s} " + " | ".join(f"{r} {g:6.2f} {c}" for r, (g, c) in res.items()),
              flush=True)  # fmt: skip
    base = np.array([g for g, _ in gains["fit block"]])
    print("mean SNR gain dB (over the fit-block rule; channels alone): " + ", ".join(
        f"{r} {np.mean([g for g, _ in v]):.2f} ({np.mean([g for g, _ in v]) - base.mean():+.2f}; "
        f"{sum(n for _, n in v)})" for r, v in gains.items()))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
