"""Our parent rankings compared by a training-only measure: for every (data set, split) of a
comparison table (default: the committed ``benches/results/apple_compare.csv.gz``), ``apple``
(|w|·rms) and
``apple_max`` (|w|·max|x|) are refitted at the learning rate the table picked for each, and
their progressive validation losses (the loss that picked the rate; no test data) compared.

The default ranking was chosen by counting test rel_err < 0.5 over the 84 runs; this says which
ranking trains better on the same runs.

Run: ``python -m benches.experiments.apple_ranking_progressive [table.csv[.gz]]`` (needs the
shared data; a few minutes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
from polars_poly import compare
from polars_poly.benchdata import load_dataset

from benches.common import COMPARE_TABLE, REPO

DATA = REPO.parent / "shared" / "data"
VARIANTS = ("apple", "apple_max")


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else COMPARE_TABLE
    table = pl.read_csv(path.read_bytes()).filter(
        pl.col("system") == "ours", pl.col("algorithm").is_in(VARIANTS)
    )
    rates = table.pivot(on="algorithm", index=["dataset", "seed"], values="rate")
    rows = []
    for name in rates["dataset"].unique(maintain_order=True):
        X, y, _ = load_dataset(name, DATA)
        for seed, *picked in rates.filter(dataset=name).select("seed", *VARIANTS).iter_rows():
            X_train, y_train, _, _ = compare.split(X, y, seed)
            losses = {}
            for algorithm, rate in zip(VARIANTS, picked, strict=True):
                model, _ = compare._fit_ours(algorithm, rate, 1.0, X_train, y_train)
                losses[algorithm] = float(model.progressive_loss_)
            rows.append({"dataset": name, "seed": seed, **losses})
            print(
                f"{name:>18} split {seed}: " + ", ".join(f"{a} {v:.5g}" for a, v in losses.items())
            )
    result = pl.DataFrame(rows)
    lower = result.filter(pl.col("apple") < pl.col("apple_max")).height
    higher = result.filter(pl.col("apple") > pl.col("apple_max")).height
    ratio = result.select((pl.col("apple") / pl.col("apple_max")).median()).item()
    print(
        f"\n|w|·rms vs |w|·max|x| at their picked rates: lower progressive loss on {lower}, "
        f"higher on {higher}, equal on {result.height - lower - higher} of {result.height} "
        f"runs; median ratio {ratio:.4f}"
    )
    per_set = result.group_by("dataset").agg(pl.col("apple").mean(), pl.col("apple_max").mean())
    print(
        "data sets where |w|·rms has the lower mean progressive loss: "
        f"{per_set.filter(pl.col('apple') < pl.col('apple_max')).height}/{per_set.height}"
    )


if __name__ == "__main__":
    main()
