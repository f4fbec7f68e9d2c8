"""Streaming scoring through Python: ``predict_proba_expr`` over hashed eat-rate rows.

A model with the A x B cross (``interactions=[("A", "B")]``, ``bits=24``) is fitted on the first
500k rows, then scored by a streaming query over all ``--rows`` hashed rows, ``--rounds`` times,
with field scales on (the default for several columns) and off (as ``benches/large_hashed.py``
runs it, to match Vowpal Wabbit), alternating. Prints each query's time and rows/s per core (the
query runs on every core), the medians, and the load.

    .venv/bin/python -m benches.suite.score_streaming --rows 4000000 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
from functools import partial

import polars as pl
import polars_poly as pp

from benches.common import load, timed
from benches.suite.field_crosses import frames, hashed


def stream(rows: pl.DataFrame, expr: pl.Expr) -> pl.DataFrame:
    """``expr`` over ``rows`` by the streaming engine."""
    return rows.lazy().select(expr).collect(engine="streaming")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bits", type=int, default=24)
    args = parser.parse_args()
    data, fields = frames("eat_rate", args.rows, 1, 0)
    rows = hashed(data, fields, args.bits).head(args.rows)
    cores = os.cpu_count() or 1
    fit_rows = rows.head(500_000)
    exprs = {}
    # The expressions read their models while the queries run: keep the estimators alive.
    models = []
    for scales in (True, False):
        model = pp.SGDClassifier(
            loss="logistic",
            bits=args.bits,
            interactions=[("A", "B")],
            field_scales=scales,
            progress=False,
        )
        model.fit(fit_rows.drop("label"), fit_rows["label"])
        models.append(model)
        exprs[f"field scales {'on' if scales else 'off'}"] = model.predict_proba_expr(*fields)
    times: dict[str, list[float]] = {name: [] for name in exprs}
    print(f"{args.rows:,} rows, {cores} cores; {load()}")
    for r in range(args.rounds):
        for name, expr in exprs.items():
            scored, seconds = timed(partial(stream, rows, expr))
            assert len(scored) == args.rows
            times[name].append(seconds)
            rate = args.rows / seconds / cores / 1e6
            print(f"  round {r + 1} {name}: {seconds:.3f} s, {rate:.2f}M rows/s per core")
    for name, taken in times.items():
        median = statistics.median(taken)
        rate = args.rows / median / cores / 1e6
        print(f"{name}: median {median:.3f} s, {rate:.2f}M rows/s per core")
    print(load())


if __name__ == "__main__":
    main()
