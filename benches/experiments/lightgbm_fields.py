"""LightGBM with categorical features on the field-crosses sets, beside our linear fit (issue 58,
item 5): the peer that splits on categories, with early stopping on a held-out tenth of the
training rows (which is what makes it a batch learner, many passes over the data).

    .venv/bin/python -m benches.experiments.lightgbm_fields eat_rate_unseen \
        --cat-smooth 1 --min-data-per-group 20 --max-cat-threshold 64
    .venv/bin/python -m benches.experiments.lightgbm_fields click3_pairs

The data are `benches.suite.field_crosses`' (the same seed, rows and test rows); each field's
values become consecutive integer category codes over training and test rows together. Prints
LightGBM's test logloss, AUC, number of trees and fit time, and the time of our linear fit on
the same rows (hashed, `bits=24`, one pass) for the ratio. Needs `lightgbm` (not a
dependency: skipped with a message when absent).
"""

from __future__ import annotations

import argparse
import os
import time

import polars_poly as pp

from benches.suite.categorical_peers import lightgbm
from benches.suite.field_crosses import data_arguments, frames, hashed, truth_logloss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    parser.add_argument("--leaves", type=int, default=63)
    parser.add_argument("--rate", type=float, default=0.1)
    parser.add_argument("--max-trees", type=int, default=2000)
    parser.add_argument("--patience", type=int, default=50, help="early stopping rounds")
    # LightGBM's own defaults; eat-rate's pure cross needs looser ones (see the module docs).
    parser.add_argument("--cat-smooth", type=float, default=10.0)
    parser.add_argument("--min-data-per-group", type=int, default=100)
    parser.add_argument("--max-cat-threshold", type=int, default=32)
    args = parser.parse_args()
    data, fields = frames(args.kind, args.train, args.test, args.seed)
    categories = {
        "cat_smooth": args.cat_smooth,
        "min_data_per_group": args.min_data_per_group,
        "max_cat_threshold": args.max_cat_threshold,
    }
    found = lightgbm(
        data, fields, args.train, categories, args.leaves, args.rate, args.max_trees, args.patience
    )
    if found is None:
        return
    features = hashed(data, fields, 24)
    started = time.perf_counter()
    pp.SGDClassifier(loss="logistic", bits=24).fit(features.head(args.train), "label")
    linear_seconds = time.perf_counter() - started
    print(
        f"{args.kind}: {args.train:,} train (a tenth held out for early stopping) + "
        f"{args.test:,} test rows, {len(fields)} fields; load {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{found['model']}: test logloss {found['logloss']:.4f}, AUC {found['auc']:.5f}, "
        f"{found['fit_s']:.1f} s ({found['fit_s'] / linear_seconds:.0f}x our linear fit's "
        f"{linear_seconds:.2f} s)"
    )
    truth = truth_logloss(data, args.test)
    if truth is not None:
        print(f"the generating model's test logloss: {truth:.4f}")


if __name__ == "__main__":
    main()
