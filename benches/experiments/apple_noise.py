"""Is apple's gap to Vowpal Wabbit's ``--stage_poly`` more than split-to-split noise? Paired
statistics per data set over 10 random 80/20 splits.

For each data set and split seed, ``d = error(ours) - error(VW apple)`` on the same split, for
our ``apple`` (the default) and for ``apple_vw`` (ours making both of Vowpal Wabbit's choices: its
parent ranking and its path identity, i.e. a near copy of its algorithm, the calibration of what
"equally good" looks like). Per data set: the mean of ``d`` over the splits, a two-sided paired
t-test, and the verdict: ``tie`` (identical errors on every split), ``better`` / ``worse``
(p < 0.05), else ``n.s.`` (not significant). With 28 data sets tested at 5%, about 1.4 verdicts
are expected by chance alone.

Also printed: the issue's literal count (ours no worse on the mean over all splits) and apple's
rel_err on the per-data-set mean errors of lin, quad and cubic.

Input: comparison tables written by ``python -m polars_poly compare``; by default the committed
``benches/results/apple_compare.csv.gz`` (seeds 0-2, every algorithm) and
``notes/data/apple_compare_noise.csv.gz``
(seeds 3-9: ``compare --vw --vw-algorithms apple --seeds 3,4,5,6,7,8,9 --algorithms
lin,quad,cubic,apple,apple_vw``).

With ``--apple-variant TABLE`` (a ``compare --algorithms apple`` table of a variant of our apple,
e.g. another parent ranking, on the same seeds) that table's apple replaces ours, and the script
also tests the variant against the default apple per data set.

Run: ``python -m benches.experiments.apple_noise [table.csv[.gz] ...] [--apple-variant TABLE]``
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import polars as pl
from polars_poly.compare import rel_err
from scipy import stats

from benches.common import REPO

DEFAULT_TABLES = ("benches/results/apple_compare.csv.gz", "notes/data/apple_compare_noise.csv.gz")
VARIANTS = ("apple", "apple_vw")
#: Two-sided significance level of the per-data-set verdicts.
LEVEL = 0.05
#: Data sets with at least this many training rows count as large.
LARGE = 10_000


def load(paths: list[Path]) -> pl.DataFrame:
    """The error of every (data set, seed, system, algorithm) run in the tables."""
    columns = ["dataset", "seed", "system", "algorithm", "n_train", "error"]
    frames = [pl.read_csv(p.read_bytes()).select(columns) for p in paths]
    table = pl.concat(frames).filter(pl.col("error").is_not_nan())
    repeated = table.group_by("dataset", "seed", "system", "algorithm").len().filter(len=2)
    if repeated.height:
        raise SystemExit(f"runs listed twice across the tables: {repeated.head()}")
    return table


def verdict(d: np.ndarray) -> tuple[str, float]:
    """Paired verdict on the differences ``d`` (ours - VW) and its p-value."""
    if np.all(d == 0):
        return "tie", 1.0
    if np.all(d == d[0]):  # constant nonzero difference: no variance to test against
        return ("worse" if d[0] > 0 else "better"), 0.0
    p = float(stats.ttest_1samp(d, 0.0).pvalue)
    if p < LEVEL:
        return ("worse" if d.mean() > 0 else "better"), p
    return "n.s.", p


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="*", type=Path)
    parser.add_argument("--apple-variant", type=Path, default=None)
    args = parser.parse_args()
    paths = args.tables or [REPO / name for name in DEFAULT_TABLES]
    table = load(paths)
    default_apple = pl.col("system").eq("ours") & pl.col("algorithm").eq("apple")
    if args.apple_variant is not None:
        variant = load([args.apple_variant]).filter(default_apple)
        default = table.filter(default_apple).select("dataset", "seed", pl.col("error"))
        table = pl.concat([table.filter(~default_apple), variant])
    vw = table.filter(system="vw", algorithm="apple").select(
        "dataset", "seed", pl.col("error").alias("vw")
    )
    ours = table.filter(system="ours").pivot(
        on="algorithm", index=["dataset", "seed", "n_train"], values="error"
    )
    paired = ours.join(vw, on=["dataset", "seed"]).sort("dataset", "seed")

    rows = []
    counts = {
        v: {"tie": 0, "better": 0, "worse": 0, "n.s.": 0, "mean_no_worse": 0} for v in VARIANTS
    }
    for (name,), part in paired.group_by("dataset", maintain_order=True):
        row: dict[str, object] = {"dataset": name, "splits": part.height}
        large = bool(part["n_train"].min() >= LARGE)
        vw_errors = part["vw"].to_numpy()
        for variant in VARIANTS:
            d = part[variant].to_numpy() - vw_errors
            said, p = verdict(d)
            counts[variant][said] += 1
            counts[variant]["mean_no_worse"] += int(part[variant].mean() <= part["vw"].mean())
            row[f"{variant}-vw (rel)"] = f"{d.mean() / max(vw_errors.mean(), 1e-300):+.3f}"
            row[f"{variant} verdict"] = f"{said} (p={p:.2f})"
            row[f"{variant} better/worse splits"] = f"{int((d < 0).sum())}/{int((d > 0).sum())}"
        means = [
            float(part[a].mean()) if a in part.columns and part[a].is_not_null().all() else math.nan
            for a in ("lin", "quad", "cubic")
        ]
        row["apple rel_err (means)"] = round(rel_err(float(part["apple"].mean()), means), 2)
        row["large"] = large
        rows.append(row)

    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, fmt_str_lengths=40):
        print(pl.DataFrame(rows))
    n = len(rows)
    for variant in VARIANTS:
        c = counts[variant]
        d = paired[variant] - paired["vw"]
        # "No worse" as compare's summary counts it (VW writes 6 significant digits).
        no_worse = paired[variant] <= paired["vw"] * (1 + 1e-5) + 1e-12
        print(
            f"ours {variant} vs VW apple over {paired.height} runs: no worse on "
            f"{int(no_worse.sum())} ({int((d < 0).sum())} better, {int((d > 0).sum())} worse)"
        )
        print(
            f"ours {variant} vs VW apple over {n} data sets: no worse on the mean over the splits "
            f"on {c['mean_no_worse']}/{n}; paired t-test at {LEVEL:.0%}: {c['better']} better, "
            f"{c['worse']} worse, {c['n.s.']} not significant, {c['tie']} ties -> not "
            f"significantly worse on {n - c['worse']}/{n}"
        )
    below = [r for r in rows if r["apple rel_err (means)"] < 0.5]  # type: ignore[operator]
    n_large = sum(bool(r["large"]) for r in rows)
    print(
        f"ours apple rel_err < 0.5 on the mean errors over the splits: {len(below)}/{n}; on the "
        f"{n_large} data sets with >= {LARGE:,} training rows: "
        f"{sum(bool(r['large']) for r in below)}/{n_large}"
    )
    if args.apple_variant is not None:
        against = paired.select("dataset", "seed", "apple").join(default, on=["dataset", "seed"])
        said: dict[str, list[str]] = {"better": [], "worse": []}
        for (name,), part in against.group_by("dataset", maintain_order=True):
            d = part["apple"].to_numpy() - part["error"].to_numpy()
            outcome, _ = verdict(d)
            if outcome in said:
                rel = d.mean() / max(part["error"].mean(), 1e-300)
                said[outcome].append(f"{name} ({rel:+.1%})")
        print(
            f"variant vs our default apple, paired t-test at {LEVEL:.0%}: better on "
            f"{', '.join(said['better']) or 'none'}; worse on {', '.join(said['worse']) or 'none'}"
        )


if __name__ == "__main__":
    main()
