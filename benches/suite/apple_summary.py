"""The apple numbers of docs/benchmarks.md derived from a comparison table (default: the committed
``benches/results/apple_compare.csv.gz``, written by
``python -m polars_poly compare --vw --seeds 0,1,2 ...``).

Prints the summary of ``polars_poly.compare.format_summary`` and, beyond it: wins / ties / losses
of our apple (and of each variant of ours) against Vowpal Wabbit's, how many classification runs
are within one test-set standard error of it, per-data-set means, generated features per example
relative to lin and quad, and apple's time against our cubic.

Run: ``.venv/bin/python -m benches.suite.apple_summary [table.csv[.gz]]``
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
from polars_poly.compare import format_summary

from benches.common import COMPARE_TABLE


def pivot(table: pl.DataFrame, system: str, values: str) -> pl.DataFrame:
    """One row per (data set, split), one column per algorithm."""
    return table.filter(system=system).pivot(
        on="algorithm", index=["dataset", "seed"], values=values
    )


def median_ratio(frame: pl.DataFrame, a: str, b: str) -> float:
    return float(frame.select((pl.col(a) / pl.col(b)).median()).item())


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else COMPARE_TABLE
    table = pl.read_csv(path.read_bytes())
    print(format_summary(table))

    runs = (
        table.filter(algorithm="apple")
        .pivot(on="system", index=["dataset", "seed", "task", "n_train"], values="error")
        .rename({"ours": "e_ours", "vw": "e_vw"})
    )
    wins = runs.filter(pl.col("e_ours") < pl.col("e_vw")).height
    ties = runs.filter(pl.col("e_ours") == pl.col("e_vw")).height
    print(f"\napple vs VW apple: {wins} wins, {ties} ties, {runs.height - wins - ties} losses")
    # Every apple variant of ours against VW's apple (alpha = 1) on the same splits.
    vw_apple = table.filter(system="vw", algorithm="apple").select(
        "dataset", "seed", pl.col("error").alias("e_vw")
    )
    variants = (
        table.filter(pl.col("system") == "ours", pl.col("algorithm").str.starts_with("apple"))
        .join(vw_apple, on=["dataset", "seed"])
        .group_by("algorithm", maintain_order=True)
        .agg(
            (pl.col("error") <= pl.col("e_vw")).sum().alias("no_worse"),
            (pl.col("error") < pl.col("e_vw")).sum().alias("better"),
            (pl.col("error") > pl.col("e_vw")).sum().alias("worse"),
            pl.len().alias("runs"),
        )
    )
    for name, no_worse, better, worse, n in variants.iter_rows():
        print(
            f"ours {name} vs VW apple: no worse on {no_worse}/{n} ({better} better, {worse} worse)"
        )
    # Test part = 20% of the rows: n_test = n_train / 4.
    se = (pl.col("e_vw") * (1 - pl.col("e_vw")) / (pl.col("n_train") / 4)).sqrt()
    classification = runs.filter(task="classification")
    close = classification.filter(pl.col("e_ours") <= pl.col("e_vw") + se).height
    print(f"classification runs within one standard error of VW: {close}/{classification.height}")

    per_set = runs.group_by("dataset").agg(pl.col("e_ours").mean(), pl.col("e_vw").mean())
    print(
        "data sets where ours is no worse on the mean over splits: "
        f"{per_set.filter(pl.col('e_ours') <= pl.col('e_vw')).height}/{per_set.height}"
    )
    mean_rel = (
        table.filter(system="ours", algorithm="apple")
        .group_by("dataset")
        .agg(pl.col("rel_err").mean())
    )
    print(
        "data sets with mean rel_err < 0.5: "
        f"{mean_rel.filter(pl.col('rel_err') < 0.5).height}/{mean_rel.height}"
    )

    generated = pivot(
        table.with_columns(features=pl.col("features_per_s") * pl.col("seconds")),
        "ours",
        "features",
    )
    rates = pivot(table, "ours", "features_per_s")
    print(
        "features per example, apple / lin: "
        f"{median_ratio(generated, 'apple', 'lin'):.1f}x, "
        f"apple / quad: {median_ratio(generated, 'apple', 'quad'):.2f}x; "
        f"features/s apple / quad: {median_ratio(rates, 'apple', 'quad'):.2f}x"
    )

    seconds = pivot(table, "ours", "seconds").filter(pl.col("cubic").is_not_nan())
    vw_seconds = pivot(table, "vw", "seconds").filter(pl.col("cubic").is_not_nan())
    print(
        f"runs where cubic ran: {seconds.height}; ours apple faster than our cubic on "
        f"{seconds.filter(pl.col('apple') < pl.col('cubic')).height}, median time "
        f"{median_ratio(seconds, 'apple', 'cubic'):.2f}x cubic, "
        f"{median_ratio(pivot(table, 'ours', 'seconds'), 'apple', 'quad'):.1f}x quad; "
        f"VW apple slower than VW cubic on "
        f"{vw_seconds.filter(pl.col('apple') > pl.col('cubic')).height}"
    )
    medians = (
        table.filter(pl.col("rel_time").is_not_nan())
        .group_by("system", "algorithm")
        .agg(
            pl.col("rel_time").median().round(2),
            (pl.col("features_per_s").median() / 1e6).round(1).alias("Mfeat/s"),
        )
        .sort("system", "algorithm")
    )
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True):
        print(medians)


if __name__ == "__main__":
    main()
