"""What checking every batch first costs a DoS/PA fit (issue 22: a failing fit learns nothing).

A fit of more than one ``batch_size`` batch checks all its batches before learning any. This
times, on a random 400k x 2000 CSR matrix at 1% density, the fit (which includes the checks) and
the checks alone (the same ``check`` calls over the same batches), medians of 5 runs each,
alternating.

    .venv/bin/python -m benches.suite.pa_batch_check [--rows 400000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
import scipy.sparse as sp
from polars_poly._input import matrix_series

from benches.common import load, seconds, timed


def check_all(model: Any, series: pl.Series, rows: int) -> None:
    """The checks a fit makes first: each ``batch_size`` batch of ``series``."""
    step = int(model.batch_size)
    for start in range(0, rows, step):
        model.core_.check([series.slice(start, step)], start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    n = args.rows
    rng = np.random.default_rng(0)
    X = sp.random(n, 2000, density=0.01, format="csr", random_state=0)
    y = rng.integers(0, 2, n)
    series, _ = matrix_series(X)
    print(f"{n:,} x 2000 CSR at 1% density; {load()}")
    makers: list[Callable[[], Any]] = [
        pp.PassiveAggressiveClassifier,
        partial(pp.DoSClassifier, rank=4),
    ]
    for make in makers:
        fits, checks = [], []
        for _ in range(args.rounds):
            model, fit_seconds = timed(partial(make().fit, X, y))
            fits.append(fit_seconds)
            checks.append(seconds(partial(check_all, model, series, n)))
        fit, check = statistics.median(fits), statistics.median(checks)
        print(
            f"{type(model).__name__}: fit {fit:.3f} s, of which checking {check:.3f} s "
            f"({check / fit:.0%}; {load()})"
        )


if __name__ == "__main__":
    main()
