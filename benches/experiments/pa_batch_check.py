"""What checking every batch first costs a DoS/PA fit (issue 22: a failing fit learns nothing).

A fit of more than one ``batch_size`` batch checks all its batches before learning any. This
times, on a random 400k x 2000 CSR matrix at 1% density, the fit (which includes the checks) and
the checks alone (the same ``check`` calls over the same batches), medians of 5 runs each,
alternating.

Run: ``.venv/bin/python -m benches.experiments.pa_batch_check``.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import polars_poly as pp
import scipy.sparse as sp
from polars_poly._input import matrix_series


def main() -> None:
    rng = np.random.default_rng(0)
    n = 400_000
    X = sp.random(n, 2000, density=0.01, format="csr", random_state=0)
    y = rng.integers(0, 2, n)
    series, _ = matrix_series(X)
    for make in (pp.PassiveAggressiveClassifier, lambda: pp.DoSClassifier(rank=4)):
        fits, checks = [], []
        for _ in range(5):
            began = time.perf_counter()
            model = make().fit(X, y)
            fits.append(time.perf_counter() - began)
            step = int(model.batch_size)
            began = time.perf_counter()
            for start in range(0, n, step):
                model.core_.check([series.slice(start, step)], start)
            checks.append(time.perf_counter() - began)
        fit, check = statistics.median(fits), statistics.median(checks)
        print(
            f"{type(model).__name__}: fit {fit:.3f} s, of which checking {check:.3f} s "
            f"({check / fit:.0%})"
        )


if __name__ == "__main__":
    main()
