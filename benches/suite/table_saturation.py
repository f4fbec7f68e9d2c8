"""The growing weight table against fixed ones where a fixed default saturates (issue 58, item 3).

``SGDClassifier(loss="logistic", expansion="apple")`` with nothing else set starts its table at
``2**18`` and grows it as the features seen need, up to ``max_bits`` (24). On eat-rate (about a
million animal x food crosses) a fixed ``bits=18`` (Vowpal Wabbit's default) shares most slots.
The script fits, on the first ``--train`` rows of ``polars_poly.synthetic.eat_rate(seed)``
(string columns as they are, one pass): the default, ``bits=18`` and ``bits=24``, in
alternating order for ``--rounds`` rounds; prints for each the table's size reached and load,
the ``TableSaturationWarning`` the fit gave, test logloss and AUC on the next ``--test`` rows,
and the median fit seconds and their ratio to ``bits=24``'s. The machine's load is printed.

    .venv/bin/python -m benches.suite.table_saturation --train 2000000 --test 200000
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import polars_poly as pp
from polars_poly import synthetic
from sklearn.metrics import roc_auc_score

from benches.common import load

SETTINGS: dict[str, dict[str, int]] = {
    "default": {},
    "bits=18": {"bits": 18},
    "bits=24": {"bits": 24},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=2_000_000)
    parser.add_argument("--test", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    data = synthetic.eat_rate(args.train + args.test, args.seed)
    train, test = data.head(args.train), data.tail(args.test)
    y_test = test["label"].to_numpy() > 0
    print(f"eat-rate {args.train:,} train / {args.test:,} test rows; {load()}")

    seconds: dict[str, list[float]] = {name: [] for name in SETTINGS}
    results: dict[str, str] = {}
    for r in range(args.rounds):
        names = list(SETTINGS) if r % 2 == 0 else list(reversed(SETTINGS))
        for name in names:
            model = pp.SGDClassifier(loss="logistic", expansion="apple", **SETTINGS[name])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", pp.TableSaturationWarning)
                began = time.perf_counter()
                model.fit(train, "label")
                seconds[name].append(time.perf_counter() - began)
            said = [str(w.message) for w in caught if w.category is pp.TableSaturationWarning]
            p = np.clip(model.predict_proba(test.drop("label"))[:, 1], 1e-15, 1 - 1e-15)
            logloss = float(-(y_test * np.log(p) + (~y_test) * np.log(1 - p)).mean())
            auc = float(roc_auc_score(y_test, p))
            results[name] = (
                f"bits_ {model.bits_}, table load {model.table_load_:.3f}, test logloss "
                f"{logloss:.4f}, AUC {auc:.4f}"
                + "".join(f"\n    warned: {message}" for message in said)
            )
    reference = statistics.median(seconds["bits=24"])
    for name in SETTINGS:
        took = statistics.median(seconds[name])
        print(f"{name:>8}: {results[name]}")
        print(
            f"          fit {took:.2f} s (median of {args.rounds}), {took / reference:.2f}x bits=24"
        )
    print(load())


if __name__ == "__main__":
    main()
