"""What apple's catch-up costs: training time of ``pp.Apple()`` (its default ``catch_up``)
against ``pp.Apple(catch_up=0)`` (the paper's apple, no catch-up), alternating A/B fits in one
process.

Per data set: the comparison's 80/20 split (seed 0), squared loss, one pass, ``bits=24``, the
default rate (0.5); ``--rounds`` alternating fits of each (B first in odd rounds); the median of
the per-round time ratios and each one's test error. Also ``--catch-up N`` to time another
value. The machine's load average is printed before and after (the VM is shared).

Needs the shared data (``../shared/data`` or ``$POLARS_POLY_DATA``; ``SKIPPED`` without it);
skips data sets that are missing.

    .venv/bin/python -m benches.suite.apple_catch_up --rounds 5 [--datasets a9a,adult,...]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import polars_poly as pp
from polars_poly import compare
from polars_poly.benchdata import Task, load_dataset

from benches.common import data_or_exit, load

DEFAULT_DATASETS = (
    "svmguide1,splice,abalone,cpu_act,phishing,mnist_t10k,sector,magic04,a9a,adult,w8a,skin_nonskin"
)


def fit_seconds(catch_up: int, data: tuple[Any, Any, Any, Any], task: Task) -> tuple[float, float]:
    """One fit's training time and test error."""
    X, y, X_test, y_test = data
    model = pp.SGDRegressor(
        expansion=pp.Apple(catch_up=catch_up), bits=24, eta0=0.5, progress=False
    )
    began = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - began
    return seconds, compare.test_error(model.predict(X_test), y_test, task)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=DEFAULT_DATASETS)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--catch-up", type=int, default=pp.Apple().catch_up)
    args = parser.parse_args()
    data_dir = data_or_exit()
    print(f"before: {load()}")
    print(
        f"{'data set':14s} {'rows':>7s} {'ratio':>6s} {'off s':>8s} {'on s':>8s} "
        f"{'error off':>10s} {'error on':>10s}"
    )
    for name in args.datasets.split(","):
        try:
            X, y, task = load_dataset(name, data_dir)
        except (OSError, ValueError) as err:
            print(f"{name:14s} skipped: {err}")
            continue
        data = compare.split(X, y, 0)
        ratios: list[float] = []
        off: list[tuple[float, float]] = []  # (seconds, test error) without the catch-up
        on: list[tuple[float, float]] = []
        for round_ in range(args.rounds):
            order = (0, args.catch_up) if round_ % 2 == 0 else (args.catch_up, 0)
            times = {}
            for catch_up in order:
                times[catch_up], error = fit_seconds(catch_up, data, task)
                (on if catch_up else off).append((times[catch_up], error))
            ratios.append(times[args.catch_up] / times[0])
        seconds_off = statistics.median(t for t, _ in off)
        seconds_on = statistics.median(t for t, _ in on)
        print(
            f"{name:14s} {data[0].shape[0]:7d} {statistics.median(ratios):6.2f} "
            f"{seconds_off:8.4f} {seconds_on:8.4f} {off[0][1]:10.4g} {on[0][1]:10.4g}"
        )
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
