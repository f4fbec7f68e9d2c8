"""apple on click-like data with count columns: hashed categorical fields beside heavy-tailed
numeric features, as in click logs (Criteo's 13 integer counts beside 26 categorical fields).

The click generator's 20 fields (cardinalities up to 100k, planted field and value crosses),
each hashed into its own column, beside 4 lognormal counts (median 3, up to thousands) in one
sparse column ``N``; the label is redrawn from the generator's true log-odds plus
``0.4·log1p(n0) - 0.1·log1p(n1)·log1p(n2)``. Prints fit time, test logloss and AUC, progressive
loss, the crosses found and apple's parents for each model.

    .venv/bin/python -m benches.experiments.apple_mixed_click [--rows 300000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly.synthetic import click
from sklearn.metrics import log_loss, roc_auc_score

MODELS = {
    "linear": "linear",
    "FieldApple": pp.FieldApple(),
    "apple (default)": "apple",
    "apple typical": pp.Apple(ranking="typical"),
    "apple max_degree=1 (crosses only)": pp.Apple(max_degree=1),
}


def mixed_click(rows: int) -> pl.DataFrame:
    frame = click(rows, seed=3, n_fields=20, max_cardinality=100_000, with_truth=True)
    rng = np.random.default_rng(0)
    counts = rng.lognormal(1.0, 1.5, size=(frame.height, 4)).round()
    logs = np.log1p(counts)
    p_true = frame["p_true"].to_numpy()
    margin = np.log(p_true / (1 - p_true)) + 0.4 * logs[:, 0] - 0.1 * logs[:, 1] * logs[:, 2]
    label = np.where(rng.uniform(size=frame.height) < 1 / (1 + np.exp(-margin)), 1.0, -1.0)
    fields = [c for c in frame.columns if c.startswith("f")]
    data = frame.select(*(pp.hash_features(f, bits=22).alias(f) for f in fields))
    data = data.with_columns(label=label, **{f"n{i}": counts[:, i] for i in range(4)})
    return data.select("label", *fields, N=pp.to_sparse(*(f"n{i}" for i in range(4))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=300_000, help="training rows (50k test)")
    args = parser.parse_args()
    data = mixed_click(args.rows + 50_000)
    train, test = data.head(args.rows), data.tail(50_000)
    y = test["label"].to_numpy() > 0
    rows = []
    for name, expansion in MODELS.items():
        began = time.perf_counter()
        model = pp.SGDClassifier(loss="logistic", bits=22, expansion=expansion)
        model.fit(train, "label")
        seconds = time.perf_counter() - began
        p = model.predict_proba(test.drop("label"))[:, 1]
        apple = isinstance(expansion, pp.Apple) or expansion == "apple"
        rows.append(
            {
                "model": name,
                "fit s": round(seconds, 2),
                "test logloss": round(float(log_loss(y, p, labels=[False, True])), 4),
                "AUC": round(float(roc_auc_score(y, p)), 4),
                "progressive": round(model.progressive_loss_, 4),
                "crosses": ",".join(model.crosses()["cross"]) if expansion != "linear" else "",
                "kept": model.apple_ranking_ if apple else "",
                "parents": model.n_parents_ if apple else 0,
            }
        )
    with pl.Config(tbl_rows=20, tbl_width_chars=200, fmt_str_lengths=40):
        print(pl.DataFrame(rows))


if __name__ == "__main__":
    main()
