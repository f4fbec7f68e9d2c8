"""Could a training-only signal pick apple's variant per data set? For every shared data set
and split seed (the comparison's protocol: ``polars_poly.compare.run_ours``, rate picked by
progressive loss from the grid), two apple variants (``--variants``) are trained, and a third
model, ``race``, takes whichever of the two has the lower progressive validation loss: what a
champion/challenger run of both inside one fit would keep. Each is tested against Vowpal
Wabbit's ``--stage_poly`` on the same splits (its 10 splits in the committed
``benches/results/apple_compare.csv.gz`` and ``notes/data/apple_compare_noise.csv.gz``), paired
t-test at 5% per data set, as ``benches/experiments/apple_noise.py`` does.

The default apple (``ranking="auto"``) races ``typical`` against ``max_magnitude`` (both with
the catch-up) inside one fit, which keeps the same model, and keeps the linear model where its
progressive loss is 10% lower: ``--variants apple_typical,apple_max --linear-guard 0.1`` (which
also trains ``lin``) gives the default's verdicts, ``guarded``, beside each ranking's alone
(about 35 minutes; needs the shared data). ``--out`` keeps the fits' table, ``--table`` gives
the verdicts of a kept table without training (``notes/data/apple_compare_race_rankings.csv.gz``
holds one, where ``apple`` was ``typical``: ``--variants apple,apple_max``). The default
``--variants`` race the default apple against ``apple_vw`` (Vowpal Wabbit's parent ranking and
path identity).

    .venv/bin/python -m benches.suite.apple_variant_race --variants apple_typical,apple_max \
        --linear-guard 0.1
    .venv/bin/python -m benches.suite.apple_variant_race --table race.csv   # the verdicts only
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl
from polars_poly import compare
from polars_poly.benchdata import list_datasets, load_dataset
from scipy import stats

from benches.common import COMPARE_TABLE, REPO, data_or_exit

VARIANTS = ("apple", "apple_vw")


def run(
    data: Path, datasets: list[str], seeds: range, out: Path | None, variants: tuple[str, ...]
) -> pl.DataFrame:
    """Each variant's test error and progressive loss on each split (written to ``out`` as it
    goes, when given)."""
    rows = []
    for name in datasets:
        X, y, task = load_dataset(name, data)
        for seed in seeds:
            split = compare.split(X, y, seed)
            for algorithm in variants:
                outcome = compare.run_ours(
                    algorithm, split, task, compare.DEFAULT_RATES, compare.DEFAULT_ALPHAS
                )
                rows.append(
                    {
                        "dataset": name,
                        "seed": seed,
                        "algorithm": algorithm,
                        "error": outcome.error,
                        "progressive": outcome.progressive,
                        "rate": outcome.rate,
                    }
                )
            print(name, seed, rows[-len(variants) :], flush=True)
        if out is not None:
            pl.DataFrame(rows).write_csv(out)
    return pl.DataFrame(rows)


def verdicts(
    table: pl.DataFrame, variants: tuple[str, str], margin: float | None = None
) -> pl.DataFrame:
    """Per data set, each variant's, the race's and (with ``margin``) the guarded race's verdict
    against ``--stage_poly``: the guard keeps ``lin`` when its progressive loss times
    ``1 + margin`` is below the race's, as apple's default does."""
    first, second = variants
    vw = (
        pl.concat(
            pl.read_csv(path.read_bytes()).select("dataset", "seed", "system", "algorithm", "error")
            for path in (COMPARE_TABLE, REPO / "notes" / "data" / "apple_compare_noise.csv.gz")
        )
        .filter(system="vw", algorithm="apple")
        .select("dataset", "seed", vw="error")
    )
    wide = (
        table.filter(algorithm=first)
        .select("dataset", "seed", pl.col("error").alias(first), p_first="progressive")
        .join(
            table.filter(algorithm=second).select(
                "dataset", "seed", pl.col("error").alias(second), p_second="progressive"
            ),
            on=["dataset", "seed"],
        )
        .join(vw, on=["dataset", "seed"])
        .with_columns(
            race=pl.when(pl.col("p_first") <= pl.col("p_second"))
            .then(pl.col(first))
            .otherwise(pl.col(second))
        )
    )
    models = [first, second, "race"]
    if margin is not None:
        lin = table.filter(algorithm="lin").select(
            "dataset", "seed", lin="error", p_lin="progressive"
        )
        best = pl.min_horizontal("p_first", "p_second")
        kept = pl.col("p_lin") * (1 + margin) < best
        wide = wide.join(lin, on=["dataset", "seed"]).with_columns(
            guarded=pl.when(kept).then(pl.col("lin")).otherwise(pl.col("race")),
            picks_lin=kept,
        )
        models.append("guarded")
    out = []
    for (name,), group in sorted(wide.group_by("dataset"), key=lambda kv: kv[0]):
        row: dict[str, object] = {"dataset": name, "splits": group.height}
        for model in models:
            d = (group[model] - group["vw"]).to_numpy()
            if not np.any(d):
                row[model] = "tie"
                continue
            p = stats.ttest_rel(group[model].to_numpy(), group["vw"].to_numpy()).pvalue
            verdict = ("better" if d.mean() < 0 else "worse") if p < 0.05 else "n.s."
            row[model] = f"{verdict} ({d.mean() / group['vw'].mean():+.3f})"
        row[f"race picks {first}"] = int((group["p_first"] <= group["p_second"]).sum())
        if margin is not None:
            row["guard keeps lin"] = int(group["picks_lin"].sum())
        out.append(row)
    return pl.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the fits' table here (CSV)")
    parser.add_argument("--table", type=Path, help="verdicts of an earlier run's CSV")
    parser.add_argument("--datasets", default="", help="comma-separated (default: all)")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help=f"the two raced algorithms of polars_poly.compare (default: {','.join(VARIANTS)})",
    )
    parser.add_argument(
        "--linear-guard",
        type=float,
        metavar="MARGIN",
        help="also train lin and judge the race with the linear guard (apple's default: 0.1)",
    )
    args = parser.parse_args()
    variants = tuple(args.variants.split(","))
    if len(variants) != 2:
        raise SystemExit(f"--variants names two algorithms, got {args.variants!r}")
    margin = args.linear_guard
    if args.table is not None:
        table = pl.read_csv(args.table.read_bytes())
    else:
        data = data_or_exit()
        names = [n for n in args.datasets.split(",") if n] or list_datasets(data)
        trained = variants + (("lin",) if margin is not None else ())
        table = run(data, names, range(args.seeds), args.out, trained)
    result = verdicts(table, variants, margin)
    with pl.Config(tbl_rows=40, tbl_width_chars=160):
        print(result)
    for model in (*variants, "race", *(("guarded",) if margin is not None else ())):
        column = result[model].to_list()
        better = sum(v.startswith("better") for v in column)
        worse = sum(v.startswith("worse") for v in column)
        print(f"{model}: significantly better than --stage_poly on {better}, worse on {worse}")


if __name__ == "__main__":
    main()
