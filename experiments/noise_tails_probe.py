"""How often ``tssdpa.estimators.noise_tails.gaussian_tails`` calls Gaussian noise heavy-tailed,
and how far Student-t and outlier noise lie from it -- the figures behind ``TAIL_SDS``.

For n samples: the share of 20,000 Gaussian columns whose RMS over MAD scale exceeds ``1 + k /
sqrt(n)`` (k = 4 and 5), the ratio's standard deviation, and the median and 1st percentile of the
ratio for 300 draws of ``tssdpa.data.add_noise``'s ``student_t`` (3 degrees of freedom) and
``impulsive`` noise (2% outliers of 10x) at 10 dB (seed 0).

    .venv/bin/python experiments/noise_tails_probe.py
"""

from __future__ import annotations

import numpy as np

from tssdpa.data import add_noise
from tssdpa.estimators.noise_tails import tail_ratio


def main() -> int:
    rng = np.random.default_rng(0)
    print(f"{'n':>5s} {'P(>1+4/sqrt n)':>15s} {'P(>1+5/sqrt n)':>15s} {'sd':>6s}  "
          "student_t median (1%)  impulsive median (1%)")  # fmt: skip
    for n in (100, 200, 400, 1000, 4000):
        r = tail_ratio(rng.normal(size=(n, 20_000)))
        clean = np.sin(np.arange(n) / 5.0)
        heavy = []
        for kind in ("student_t", "impulsive"):
            h = tail_ratio(np.column_stack([add_noise(clean, kind, 10.0, seed=s) - clean
                                            for s in range(300)]))  # fmt: skip
            heavy.append(f"{np.median(h):.3f} ({np.quantile(h, 0.01):.3f})")
        p4, p5 = (float(np.mean(r > 1 + k / np.sqrt(n))) for k in (4, 5))
        print(f"{n:5d} {p4:15.5f} {p5:15.5f} {r.std():6.3f}  {heavy[0]:>21s}  {heavy[1]:>21s}",
              flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
