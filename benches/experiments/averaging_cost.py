"""What tail averaging costs: one-pass fits on a9a's training split (seed 0, b = 24, rate 0.5)
with ``average_tail`` 0, 1e-9 (a window of one example: the fixed cost), 0.16 and 1,
alternating, best of 5 each, timed side by side in one process. Needs ``../shared/data`` (or
a data directory as the first argument).

Run: ``.venv/bin/python -m benches.experiments.averaging_cost [DATA_DIR]``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import polars_poly as pp
from polars_poly.benchdata import load_dataset
from polars_poly.compare import split

from benches.common import REPO

TAILS = (0.0, 1e-9, 0.16, 1.0)


def main() -> None:
    data_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "data"
    X, y, _ = load_dataset("a9a", data_dir)
    X_train, y_train, _, _ = split(X, y, 0)
    for expansion in ("linear", "quadratic", "apple"):
        times: dict[float, list[float]] = {tail: [] for tail in TAILS}
        for _ in range(5):
            for tail in TAILS:
                model = pp.SGDRegressor(
                    expansion=expansion,
                    bits=24,
                    eta0=0.5,
                    average_tail=tail,
                    progress=False,
                )
                began = time.perf_counter()
                model.fit(X_train, y_train)
                times[tail].append(time.perf_counter() - began)
        base = min(times[0.0])
        shown = ", ".join(
            f"average_tail={tail}: {min(t) * 1e3:.1f} ms ({min(t) / base:.2f}x)"
            for tail, t in times.items()
        )
        print(f"{expansion:9s} {shown}")


if __name__ == "__main__":
    main()
