"""How reliably the field screening finds eat-rate's cross: ``pp.FieldApple()`` (what the
default apple's ``field_crosses="auto"`` screens with; its budget nudged by ±4%, which changes
which examples are screened) fitted on ``--rows`` eat-rate rows of each of ``--seeds`` seeds,
alone and beside 13 count columns (Poisson, mean 2: noise, as in
``benches/suite/numeric_columns.py``). Prints each fit (the row at which ``A*B`` joined, the
crosses, the fit seconds), then per count setting: how many fits found ``A*B``, the median and
the latest row at which it joined, and the median fit time. A screening that finds the cross only
when the examples it happens to screen first favour it shows up here as misses and late finds.

    .venv/bin/python -m benches.suite.field_cross_reliability --rows 1000000 --seeds 6
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial

import polars as pl
import polars_poly as pp

from benches.common import load, seconds
from benches.suite.numeric_columns import COUNTS, mixed_frame

BUDGETS = (0.48, 0.5, 0.52)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=6)
    args = parser.parse_args()
    print(f"{args.rows:,} eat-rate rows a fit, bits 24; {load()}")
    fits: list[tuple[int, int | None, float]] = []
    for seed in range(args.seeds):
        frame = mixed_frame(args.rows, seed)
        for counts in (0, 13):
            data = frame.drop(COUNTS[counts:])
            for budget in BUDGETS:
                model = pp.SGDClassifier(
                    loss="logistic",
                    bits=24,
                    expansion=pp.FieldApple(budget=budget),
                    progress=False,
                )
                took = seconds(partial(model.fit, data, "label"))
                crosses = model.crosses()
                found = crosses.filter(pl.col("cross") == "A*B")["added_at"].to_list()
                fits.append((counts, found[0] if found else None, took))
                print(
                    f"seed {seed} counts {counts:2} budget {budget}: A*B at "
                    f"{found[0] if found else '-'}, crosses {crosses['cross'].to_list()}, "
                    f"{took:.2f} s",
                    flush=True,
                )
    print("| counts | found A*B | median row | latest row | median fit |")
    print("|---:|---:|---:|---:|---:|")
    for counts in (0, 13):
        runs = [f for f in fits if f[0] == counts]
        rows = [f[1] for f in runs if f[1] is not None]
        median = f"{statistics.median(rows):,.0f}" if rows else "-"
        latest = f"{max(rows):,}" if rows else "-"
        median_fit = statistics.median(f[2] for f in runs)
        print(f"| {counts} | {len(rows)}/{len(runs)} | {median} | {latest} | {median_fit:.2f} s |")
    print(load())


if __name__ == "__main__":
    main()
