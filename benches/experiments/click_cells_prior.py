"""How strongly the value-pair cells of field-level apple (docs/algorithms.md §7) shrink each
pair's mean, measured outside the learner: a linear model is fitted on the first ``--train``
click rows; on the next ``--residual`` rows, every candidate cross predicts the residual
``y - p`` of each row by its value pair's shrunk running mean ``S / (n + prior)`` of the rows
before it, and scores the progressive gain ``r² - (r - p)²``. Prints each cross's z-score (mean
gain over its standard error), best first, marking the planted crosses.

    .venv/bin/python -m benches.experiments.click_cells_prior --prior 5 30 200
    python -m benches.experiments.click_cells_prior --prior 200 --pairs all   # 435 pairs, slower
"""

from __future__ import annotations

import argparse
import random
from itertools import combinations

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly import synthetic


def pair_z(frame: pl.DataFrame, a: str, b: str, prior: float) -> float:
    """z-score of the progressive gain of the shrunk per-value-pair mean of residual ``r``."""
    key = (pl.col(a) + "|" + pl.col(b)).alias("key")
    before = frame.select(key, "r").with_columns(
        sum=pl.col("r").cum_sum().over("key") - pl.col("r"),
        count=pl.int_range(pl.len()).over("key").cast(pl.Float64),
    )
    gain = before.select(
        pl.col("r") ** 2 - (pl.col("r") - pl.col("sum") / (pl.col("count") + prior)) ** 2
    )[:, 0].to_numpy()
    return float(gain.mean() / (gain.std() / np.sqrt(len(gain))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=1_000_000)
    parser.add_argument("--residual", type=int, default=400_000)
    parser.add_argument("--prior", type=float, nargs="+", default=[5.0, 30.0, 200.0])
    parser.add_argument("--pairs", choices=["sample", "all"], default="sample")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    data = synthetic.click(args.train + args.residual, args.seed)
    fields = [c for c in data.columns if c != "label"]
    hashed = data.select("label", *(pp.hash_features(f, bits=24).alias(f) for f in fields))
    model = pp.SGDClassifier(loss="logistic", bits=24).fit(hashed.head(args.train), "label")
    p = model.predict_proba(hashed.tail(args.residual).drop("label"))[:, 1]
    y = (data.tail(args.residual)["label"].to_numpy() > 0).astype(float)
    frame = data.tail(args.residual).with_columns(r=pl.Series(y - p))

    planted = {tuple(sorted((c.a, c.b))) for c in synthetic.click_planted(args.seed).field_crosses}
    pairs = list(combinations(fields, 2))
    if args.pairs == "sample":  # the planted crosses and 40 others
        rng = random.Random(1)
        pairs = sorted(planted) + rng.sample([q for q in pairs if q not in planted], 40)
    for prior in args.prior:
        scored = sorted(((pair_z(frame, a, b, prior), (a, b)) for a, b in pairs), reverse=True)
        print(f"prior {prior:g}: {len(pairs)} crosses, best first")
        for z, (a, b) in scored[:8]:
            print(f"  {z:7.2f}  {a}*{b}{'  planted' if (a, b) in planted else ''}")
        noise = max(z for z, q in scored if q not in planted)
        mine = ", ".join(f"{a}*{b} {z:.1f}" for z, (a, b) in scored if (a, b) in planted)
        print(f"  planted: {mine}; best other {noise:.2f}", flush=True)


if __name__ == "__main__":
    main()
