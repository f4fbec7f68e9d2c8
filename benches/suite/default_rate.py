"""Does the default learning rate need tuning on the new data sets (issue 20, part 4)? Default
apple (``expansion="apple"``), logistic loss, one pass, on eat-rate and click (2M training rows,
200k test, each field hashed into its own sparse column, ``bits=24``) and the text generator
(100k documents, 80/20, one sparse column), at the default ``eta0`` (0.5) and over a grid of
rates. Prints, per set, the test logloss and error at each rate, and the default's gap to the
best rate of the grid (relative, in %).

    .venv/bin/python -m benches.suite.default_rate [--sets eat_rate,click,text] [--train 2000000]
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly import synthetic

from benches.common import load, seconds

RATES = (0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
DEFAULT = float(pp.SGDClassifier().eta0)


def frames(kind: str, n_train: int, n_test: int) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """Training rows, test rows and the bits: text as one sparse column (2^22), eat-rate and
    click with each field hashed into its own column (2^24)."""
    if kind == "text":
        data = synthetic.text(n_train + n_test, 0).select("label", "features")
        return data.head(n_train), data.tail(n_test), 22
    generate = synthetic.eat_rate if kind == "eat_rate" else synthetic.click
    data = generate(n_train + n_test, 0)
    fields = [c for c in data.columns if c != "label"]
    hashed = data.select("label", *(pp.hash_features(f, bits=24).alias(f) for f in fields))
    return hashed.head(n_train), hashed.tail(n_test), 24


def scores(model: pp.SGDClassifier, test: pl.DataFrame) -> tuple[float, float]:
    """Test logloss and error."""
    p = np.clip(model.predict_proba(test.drop("label"))[:, 1], 1e-15, 1 - 1e-15)
    y = test["label"].to_numpy() > 0
    logloss = float(-(y * np.log(p) + (~y) * np.log(1 - p)).mean())
    return logloss, float(((p > 0.5) != y).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="eat_rate,click,text")
    parser.add_argument("--train", type=int, default=2_000_000)
    parser.add_argument("--test", type=int, default=200_000)
    parser.add_argument("--text", type=int, default=100_000, help="documents (80/20 split)")
    args = parser.parse_args()
    rates = sorted({*RATES, DEFAULT})
    for kind in args.sets.split(","):
        text_train = args.text * 4 // 5
        n_train, n_test = (
            (text_train, args.text - text_train) if kind == "text" else (args.train, args.test)
        )
        train, test, bits = frames(kind, n_train, n_test)
        rows = []
        for rate in rates:
            model = pp.SGDClassifier(loss="logistic", bits=bits, expansion="apple", eta0=rate)
            took = seconds(partial(model.fit, train, "label"))
            logloss, error = scores(model, test)
            rows.append({"rate": rate, "logloss": logloss, "error": error, "fit_s": took})
        table = pl.DataFrame(rows)
        default = table.filter(pl.col("rate") == DEFAULT).row(0, named=True)
        best_logloss, best_error = table["logloss"].min(), table["error"].min()
        print(f"{kind}: {n_train:,} train / {n_test:,} test; {load()}")
        with pl.Config(tbl_rows=20):
            print(table)
        print(
            f"  default rate {DEFAULT}: logloss {default['logloss']:.4f} "
            f"(+{100 * (default['logloss'] / best_logloss - 1):.1f}% over the grid's best), "
            f"error {default['error']:.4f} "
            f"(+{100 * (default['error'] / best_error - 1):.1f}%)",
            flush=True,
        )


if __name__ == "__main__":
    main()
