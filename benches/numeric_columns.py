"""Numbers beside hashed fields, as click data has them: eat-rate's 12 string fields and 13
count columns (Poisson, mean 2), fitted and scored two ways, alternating, in one process:

* ``in place``: the frame as it is; the model reads the counts where they lie (one namespace,
  ``features``, a struct of the columns in the query);
* ``sparse``: the counts made into a ``to_sparse`` column first (what the model did inside
  before reading them in place, and what a user would write by hand).

Both give the same model (the bench checks the progressive loss and the scores); only the time
and the memory differ. Rows: fit from an in-memory frame, fit from a parquet file (LazyFrame,
streamed in batches), streaming ``decision_function_expr`` over the parquet file; then a frame of
numbers only (20 normal columns, half the rows, a squared-loss ``SGDRegressor``): fit and
``predict`` from memory. Medians over
rounds are printed, with the load before each round; then the peak memory a fit from memory adds
to the process that holds the frame (each way in a fresh process).

    .venv/bin/python benches/numeric_columns.py --rows 2000000 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly.synthetic import eat_rate

BITS = 24
COUNTS = [f"n{i}" for i in range(13)]


def model() -> pp.SGDClassifier:
    return pp.SGDClassifier(
        loss="logistic", bits=BITS, interactions=[("A", "B")], field_scales=False, progress=False
    )


def load() -> str:
    return open("/proc/loadavg").read().split()[0]


def as_sparse(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    return frame.select(pl.exclude(COUNTS), pp.to_sparse(*COUNTS).alias("features"))


def mixed_frame(rows: int) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    return eat_rate(rows, seed=0).with_columns(
        pl.Series(name, rng.poisson(2.0, rows).astype(np.float64)) for name in COUNTS
    )


def status_kb(field: str) -> int:
    """A ``/proc/self/status`` field (``VmRSS``, ``VmHWM``) in kB."""
    line = next(x for x in open("/proc/self/status") if x.startswith(field + ":"))
    return int(line.split()[1])


def peak_added(rows: int, sparse: bool) -> None:
    """(In a child process.) Prints the MB a fit from memory adds to the resident size at its
    peak, over the frame already held."""
    frame = mixed_frame(rows)
    with open("/proc/self/clear_refs", "w") as file:
        file.write("5")  # resets the peak (VmHWM) to the current size
    before = status_kb("VmRSS")
    model().fit(as_sparse(frame) if sparse else frame, "label")
    print((status_kb("VmHWM") - before) // 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peak-of", choices=["in place", "sparse"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak_of:
        peak_added(args.rows, args.peak_of == "sparse")
        return

    frame = mixed_frame(args.rows)
    path = Path(tempfile.mkdtemp()) / "mixed.parquet"
    frame.write_parquet(path)

    def fit_memory(sparse: bool) -> tuple[float, float]:
        data = as_sparse(frame) if sparse else frame  # the conversion is part of the fit
        return model().fit(data, "label").progressive_loss_, 0.0

    def fit_parquet(sparse: bool) -> tuple[float, float]:
        scan = pl.scan_parquet(path)
        return model().fit(as_sparse(scan) if sparse else scan, "label").progressive_loss_, 0.0

    rng = np.random.default_rng(1)
    dense = pl.DataFrame({f"x{i}": rng.normal(size=args.rows // 2) for i in range(20)})
    dense = dense.with_columns(y=pl.col("x0") * pl.col("x1") + pl.col("x2"))
    numbers = [f"x{i}" for i in range(20)]
    dense_sparse = dense.select(pp.to_sparse(*numbers).alias("features"), "y")

    def fit_numbers(sparse: bool) -> tuple[float, float]:
        data = dense.select(pp.to_sparse(*numbers).alias("features"), "y") if sparse else dense
        return pp.SGDRegressor(progress=False).fit(data, "y").progressive_loss_, 0.0

    regressor = pp.SGDRegressor(progress=False).fit(dense, "y")
    sparse_regressor = pp.SGDRegressor(progress=False).fit(dense_sparse, "y")

    def predict_numbers(sparse: bool) -> tuple[float, float]:
        if sparse:  # the conversion is part of the scoring
            data = dense.select(pp.to_sparse(*numbers).alias("features"))
            return 0.0, float(sparse_regressor.predict(data).sum())
        return 0.0, float(regressor.predict(dense.drop("y")).sum())

    scorer = model().fit(frame.head(200_000), "label")
    sparse_scorer = model().fit(as_sparse(frame.head(200_000)), "label")

    def score_parquet(sparse: bool) -> tuple[float, float]:
        scan = pl.scan_parquet(path)
        query = (as_sparse(scan) if sparse else scan).select(
            (sparse_scorer if sparse else scorer).decision_function_expr().alias("s")
        )
        return 0.0, float(query.collect(engine="streaming")["s"].sum())

    rows: dict[str, Callable[[bool], tuple[float, float]]] = {
        "fit from memory": fit_memory,
        "fit from parquet": fit_parquet,
        "streaming scoring from parquet": score_parquet,
        "numbers only: fit from memory": fit_numbers,
        "numbers only: predict from memory": predict_numbers,
    }
    times: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        print(f"round {round_ + 1}, load {load()}")
        for name, run in rows.items():
            results = {}
            # Alternate which way goes first.
            for way in ["in place", "sparse"] if round_ % 2 == 0 else ["sparse", "in place"]:
                start = time.perf_counter()
                results[way] = run(way == "sparse")
                times.setdefault((name, way), []).append(time.perf_counter() - start)
            assert results["in place"] == results["sparse"], (name, results)
    print(f"\n{args.rows:,} rows, 12 string fields + 13 counts, bits={BITS}, A x B")
    print("| row | in place | sparse column | ratio |\n|---|---:|---:|---:|")
    for name in rows:
        ours, theirs = (statistics.median(times[(name, w)]) for w in ("in place", "sparse"))
        print(f"| {name} | {ours:.2f} s | {theirs:.2f} s | {ours / theirs:.2f} |")
    peaks = {
        way: subprocess.run(
            [sys.executable, __file__, "--rows", str(args.rows), "--peak-of", way],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        for way in ("in place", "sparse")
    }
    added = f"{peaks['in place']} MB | {peaks['sparse']} MB"
    print(f"| peak memory a fit from memory adds | {added} | |")


if __name__ == "__main__":
    main()
