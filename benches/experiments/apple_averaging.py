"""Tail averaging in the apple comparison: our learners with ``average_tail`` against the
committed table (last iterates, and Vowpal Wabbit's runs on the same splits).

The averaged table (default: the committed ``notes/data/apple_compare_avg.csv.gz``) comes from
(all 28 data sets; 7 minutes as two processes of 14 data sets each, whose CSVs were
concatenated, so its ``seconds`` are not comparable with the committed table's):

    .venv/bin/python -m polars_poly compare --seeds 0,1,2 --algorithms lin,quad,cubic,apple \\
        --average-tail 0.16 --out compare-avg

(0.16 keeps apple's averaging window inside its last epoch, the sixth of the run after the
last expansion). Prints, for apple: runs and data sets (mean over splits) where ours is no
worse than ``--stage_poly``, and rel_err counts; for every algorithm of ours: on how many runs
averaging lowered the test error, and the median ratio of test errors. Learning rates are
picked by progressive loss, which averaging does not change, so both tables use the same rates.

Run: ``.venv/bin/python -m benches.experiments.apple_averaging [compare-avg/compare.csv]``
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from benches.common import COMPARE_TABLE, REPO

KEY = ["dataset", "seed"]


def no_worse(ours: pl.DataFrame, vw: pl.DataFrame) -> tuple[int, int, int, int]:
    """(runs no worse, runs, data sets no worse on the mean over splits, data sets)."""
    runs = ours.join(vw, on=KEY)
    per_set = runs.group_by("dataset").agg(pl.col("error").mean(), pl.col("e_vw").mean())
    return (
        runs.filter(pl.col("error") <= pl.col("e_vw")).height,
        runs.height,
        per_set.filter(pl.col("error") <= pl.col("e_vw")).height,
        per_set.height,
    )


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "notes/data/apple_compare_avg.csv.gz"
    averaged = pl.read_csv(path.read_bytes()).filter(system="ours")
    committed = pl.read_csv((COMPARE_TABLE).read_bytes())
    last = committed.filter(system="ours")
    vw = committed.filter(system="vw", algorithm="apple").select(
        *KEY, pl.col("error").alias("e_vw")
    )
    for name, table in (("last iterate", last), ("averaged", averaged)):
        apple = table.filter(algorithm="apple")
        runs_ok, runs, sets_ok, sets = no_worse(apple, vw)
        rel = apple.get_column("rel_err")
        per_set = apple.group_by("dataset").agg(pl.col("rel_err").mean())
        print(
            f"apple, {name}: no worse than --stage_poly on {runs_ok}/{runs} runs, "
            f"{sets_ok}/{sets} data sets; rel_err < 0.5 on {(rel < 0.5).sum()}/{rel.len()} runs "
            f"({per_set.filter(pl.col('rel_err') < 0.5).height}/{per_set.height} data sets), "
            f"< 0 on {(rel < 0).sum()}"
        )
    pairs = averaged.join(last, on=[*KEY, "algorithm"], suffix="_last").filter(
        pl.col("error").is_not_nan() & pl.col("error_last").is_not_nan()
    )
    same_rate = pairs.filter(pl.col("rate") == pl.col("rate_last")).height
    print(f"runs at the same picked rate as the committed table: {same_rate}/{pairs.height}")
    for algorithm in ("lin", "quad", "cubic", "apple"):
        p = pairs.filter(algorithm=algorithm)
        lower = p.filter(pl.col("error") < pl.col("error_last")).height
        higher = p.filter(pl.col("error") > pl.col("error_last")).height
        ratio = p.select((pl.col("error") / pl.col("error_last")).median()).item()
        print(
            f"{algorithm:6s} averaged vs last iterate: lower error on {lower}, higher on "
            f"{higher} of {p.height} runs; median error ratio {ratio:.3f}"
        )
    flips = (
        averaged.filter(algorithm="apple")
        .group_by("dataset")
        .agg(pl.col("error").mean().alias("averaged"))
        .join(
            last.filter(algorithm="apple")
            .group_by("dataset")
            .agg(pl.col("error").mean().alias("last")),
            on="dataset",
        )
        .join(vw.group_by("dataset").agg(pl.col("e_vw").mean()), on="dataset")
        .filter((pl.col("averaged") <= pl.col("e_vw")) != (pl.col("last") <= pl.col("e_vw")))
        .sort("dataset")
    )
    with pl.Config(tbl_rows=-1, float_precision=4):
        print("data sets where averaging changes the verdict against --stage_poly:")
        print(flips)


if __name__ == "__main__":
    main()
