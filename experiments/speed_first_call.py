"""The speed case of bench_autofit.py (Lorenz, 12,000 samples, fit on 8,000, forecast the rest
at h = 5) timed three times in one fresh process: is the first call slower (a cold start)?

    .venv/bin/python experiments/speed_first_call.py
"""

from __future__ import annotations

import time

import numpy as np

from tssdpa.data.synthetic import make_signal
from tssdpa.filters import ProjectionForecaster


def main() -> int:
    n, n_test, h = 12000, 4000, 5
    x = make_signal("lorenz", n, 0)
    tr = n - n_test
    z = (x - x[:tr].mean()) / x[:tr].std()
    for i in range(3):
        tic = time.perf_counter()
        fc = ProjectionForecaster(horizon=h).fit(z[:tr])
        np.asarray(fc.forecast(z[tr - 400 :], h))
        print(f"call {i + 1}: fit + forecast {time.perf_counter() - tic:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
