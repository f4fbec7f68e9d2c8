"""What a saturated weight table costs and what the fit says about it (issue 58, item 3).

``SGDClassifier(loss="logistic", expansion="apple")`` with nothing else set hashes into
``bits=18``; on eat-rate (about a million animal x food crosses) most of the crosses then
share a slot. The script fits that default on the first ``--train`` rows of
``polars_poly.synthetic.eat_rate(seed)`` (string columns as they are, one pass), records the
``TableSaturationWarning`` the fit gives, then fits again at the ``bits`` the warning names;
prints each fit's table load, test logloss and AUC on the next ``--test`` rows, and fit seconds.
One process, one model at a time; the machine's load is printed.

    .venv/bin/python -m benches.suite.table_saturation --train 2000000 --test 200000
"""

from __future__ import annotations

import argparse
import re
import time
import warnings

import numpy as np
import polars_poly as pp
from polars_poly import synthetic
from sklearn.metrics import roc_auc_score

from benches.common import load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=2_000_000)
    parser.add_argument("--test", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = synthetic.eat_rate(args.train + args.test, args.seed)
    train, test = data.head(args.train), data.tail(args.test)
    y_test = test["label"].to_numpy() > 0
    print(f"eat-rate {args.train:,} train / {args.test:,} test rows; {load()}")

    def fit(bits: int | None) -> tuple[pp.SGDClassifier, list[str], float]:
        options = {} if bits is None else {"bits": bits}
        model = pp.SGDClassifier(loss="logistic", expansion="apple", **options)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pp.TableSaturationWarning)
            began = time.perf_counter()
            model.fit(train, "label")
            took = time.perf_counter() - began
        said = [str(w.message) for w in caught if w.category is pp.TableSaturationWarning]
        return model, said, took

    suggested = None
    for bits in (None, "suggested"):
        model, said, took = fit(suggested if bits == "suggested" else None)
        p = np.clip(model.predict_proba(test.drop("label"))[:, 1], 1e-15, 1 - 1e-15)
        logloss = float(-(y_test * np.log(p) + (~y_test) * np.log(1 - p)).mean())
        auc = float(roc_auc_score(y_test, p))
        name = "default" if bits is None else f"bits={suggested}"
        print(
            f"{name:>10}: table load {model.table_load_:.3f}, test logloss {logloss:.4f}, "
            f"AUC {auc:.4f}, fit {took:.1f} s"
        )
        for message in said:
            print(f"    warned: {message}")
        if bits is None:
            found = re.search(r"bits=(\d+) would", said[0]) if said else None
            if found is None:
                print("    no warning: the default table holds these features")
                return
            suggested = int(found.group(1))
    print(load())


if __name__ == "__main__":
    main()
