"""What tail averaging costs: one-pass fits on a9a's training split (seed 0, b = 24, rate 0.5)
with ``average_tail`` 0 (the default), 1e-9 (a window of one example: the fixed cost), 0.16 and
1, alternating, best of ``--rounds`` each, timed side by side in one process. Needs the shared
data (``../shared/data`` or ``$POLARS_POLY_DATA``; ``SKIPPED`` without it).

    .venv/bin/python -m benches.suite.averaging_cost [--rounds 5]
"""

from __future__ import annotations

import argparse
from functools import partial

import polars_poly as pp
from polars_poly.benchdata import load_dataset
from polars_poly.compare import split

from benches.common import data_or_exit, load, seconds

TAILS = (0.0, 1e-9, 0.16, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="fits of each, the best kept")
    args = parser.parse_args()
    X, y, _ = load_dataset("a9a", data_or_exit("a9a"))
    X_train, y_train, _, _ = split(X, y, 0)
    print(f"a9a, {X_train.shape[0]:,} training rows; {load()}")
    for expansion in ("linear", "quadratic", "apple"):
        times: dict[float, list[float]] = {tail: [] for tail in TAILS}
        for _ in range(args.rounds):
            for tail in TAILS:
                model = pp.SGDRegressor(
                    expansion=expansion,
                    bits=24,
                    eta0=0.5,
                    average_tail=tail,
                    progress=False,
                )
                times[tail].append(seconds(partial(model.fit, X_train, y_train)))
        base = min(times[0.0])
        shown = ", ".join(
            f"average_tail={tail}: {min(t) * 1e3:.1f} ms ({min(t) / base:.2f}x)"
            for tail, t in times.items()
        )
        print(f"{expansion:9s} {shown}")
    print(load())


if __name__ == "__main__":
    main()
