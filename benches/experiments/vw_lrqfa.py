"""Vowpal Wabbit's field-aware low-rank quadratic (``--lrqfa``) on eat-rate with a fifth of the
(animal, food) pairs held out of training (``eat_rate_unseen`` of
``benches/suite/field_crosses.py``), given the two fields that interact: ``--lrqfa AB<k>``;
for comparison the cross ``-q AB``. 2M training rows, 200k test rows, ``-b 24``, one pass
through ``pyvw`` (one core); prints test logloss and AUC of each.

    .venv/bin/python -m benches.experiments.vw_lrqfa            # k = 4
    .venv/bin/python -m benches.experiments.vw_lrqfa 8          # k = 8
"""

from __future__ import annotations

import sys
import time

import numpy as np
from polars_poly import synthetic
from sklearn.metrics import roc_auc_score
from vowpalwabbit import pyvw

HELD_OUT = 0.2


def run(flags: str, lines: list[str], labels: np.ndarray, n_train: int) -> None:
    vw = pyvw.Workspace(f"--loss_function logistic -b 24 --quiet {flags}")
    began = time.perf_counter()
    for r in range(n_train):
        vw.learn(f"{int(labels[r])} {lines[r]}")
    learned = time.perf_counter() - began
    margins = np.array([vw.predict(line) for line in lines[n_train:]])
    vw.finish()
    y = labels[n_train:] > 0
    p = np.clip(1 / (1 + np.exp(-margins)), 1e-15, 1 - 1e-15)
    logloss = float(-(y * np.log(p) + (~y) * np.log(1 - p)).mean())
    auc = roc_auc_score(y, p)
    print(f"VW {flags}: test logloss {logloss:.4f}, AUC {auc:.5f} ({learned:.0f} s to learn)")


def main() -> None:
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    n_train, n_test = 2_000_000, 200_000
    train = synthetic.eat_rate(n_train, 0, held_out_pairs=HELD_OUT)
    test = synthetic.eat_rate(
        n_test, 0, held_out_pairs=HELD_OUT, include_held_out=True, offset=n_train
    )
    fields = [c for c in train.columns if c != "label"]
    lines = [
        " ".join(f"|{field} {value}" for field, value in zip(fields, row, strict=True))
        for frame in (train, test)
        for row in frame.select(fields).iter_rows()
    ]
    labels = np.concatenate([train["label"].to_numpy(), test["label"].to_numpy()])
    for flags in (f"--lrqfa AB{k}", "-q AB"):
        run(flags, lines, labels, n_train)


if __name__ == "__main__":
    main()
