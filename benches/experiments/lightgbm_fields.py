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

import numpy as np
import polars as pl
import polars_poly as pp
from sklearn.metrics import roc_auc_score

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
    try:
        import lightgbm as lgb
    except ImportError:
        print("lightgbm is not installed: skipped (pip install lightgbm)")
        return

    data, fields = frames(args.kind, args.train, args.test, args.seed)
    # Consecutive codes from 0 per field (Polars' categorical codes are shared by all columns,
    # which LightGBM reads as sparse categories).
    codes = data.select((pl.col(f).cast(pl.String).rank("dense") - 1).alias(f) for f in fields)
    x = codes.to_numpy().astype(np.int32)
    y = (data["label"].to_numpy() > 0).astype(np.float64)
    n_fit = args.train - args.train // 10
    train_x, valid_x, test_x = x[:n_fit], x[n_fit : args.train], x[args.train :]
    train_y, valid_y, test_y = y[:n_fit], y[n_fit : args.train], y[args.train :]
    params = {
        "objective": "binary",
        "learning_rate": args.rate,
        "num_leaves": args.leaves,
        "num_threads": 2,
        "verbose": -1,
        "max_cat_to_onehot": 4,
        "max_cat_threshold": args.max_cat_threshold,
        "min_data_per_group": args.min_data_per_group,
        "cat_smooth": args.cat_smooth,
    }
    started = time.perf_counter()
    train_set = lgb.Dataset(train_x, train_y, categorical_feature=list(range(len(fields))))
    valid_set = lgb.Dataset(valid_x, valid_y, reference=train_set)
    booster = lgb.train(
        params,
        train_set,
        num_boost_round=args.max_trees,
        valid_sets=[valid_set],
        callbacks=[lgb.early_stopping(args.patience, verbose=False)],
    )
    lgb_seconds = time.perf_counter() - started
    p = np.clip(booster.predict(test_x, num_iteration=booster.best_iteration), 1e-15, 1 - 1e-15)
    logloss = float(-(test_y * np.log(p) + (1 - test_y) * np.log(1 - p)).mean())
    auc = float(roc_auc_score(test_y, p))

    features = hashed(data, fields, 24)
    started = time.perf_counter()
    pp.SGDClassifier(loss="logistic", bits=24).fit(features.head(args.train), "label")
    linear_seconds = time.perf_counter() - started
    print(
        f"{args.kind}: {args.train:,} train (a tenth held out for early stopping) + "
        f"{args.test:,} test rows, {len(fields)} fields; load {os.getloadavg()[0]:.2f}"
    )
    print(
        f"LightGBM {lgb.__version__}: test logloss {logloss:.4f}, AUC {auc:.5f}, "
        f"{booster.best_iteration} trees, {lgb_seconds:.1f} s "
        f"({lgb_seconds / linear_seconds:.0f}x our linear fit's {linear_seconds:.2f} s)"
    )
    truth = truth_logloss(data, args.test)
    if truth is not None:
        print(f"the generating model's test logloss: {truth:.4f}")


if __name__ == "__main__":
    main()
