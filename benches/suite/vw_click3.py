"""Vowpal Wabbit on click-like data with a pure cross of three fields (``click3`` of
``benches/suite/field_crosses.py``), given the truth: the planted pairs (``-q``) and the triple
(``--cubic``), or the pairs alone (``pairs``). 2M training rows, 200k test rows, ``-b 24``, one
pass through ``pyvw`` (about a minute each, one core); prints the test logloss. Needs
``vowpalwabbit`` (not a dependency: ``SKIPPED`` when absent).

    .venv/bin/python -m benches.suite.vw_click3          # pairs and triple
    .venv/bin/python -m benches.suite.vw_click3 pairs    # pairs only
"""

from __future__ import annotations

import argparse

import numpy as np
from polars_poly import synthetic

from benches.common import load, module_or_exit, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("given", nargs="?", choices=("pairs",), help="the planted pairs only")
    parser.add_argument("--train", type=int, default=2_000_000)
    parser.add_argument("--test", type=int, default=200_000)
    args = parser.parse_args()
    module_or_exit("vowpalwabbit", "pip install vowpalwabbit")
    from vowpalwabbit import pyvw

    n_train, n_test = args.train, args.test
    pairs_only = args.given == "pairs"
    data = synthetic.click(n_train + n_test, 0, n_triple_crosses=1)
    planted = synthetic.click_planted(0, n_triple_crosses=1)
    fields = [c for c in data.columns if c != "label"]
    # One namespace letter per field: a..z, then A..
    letters = [chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26) for i in range(len(fields))]
    letter = dict(zip(fields, letters, strict=True))
    pairs = " ".join(f"-q {letter[c.a]}{letter[c.b]}" for c in planted.field_crosses)
    triple = "".join(letter[f] for f in planted.triple_crosses[0].fields)
    cubic = "" if pairs_only else f"--cubic {triple}"
    print(f"click3: {n_train:,} train + {n_test:,} test rows, {len(fields)} fields; {load()}")
    vw = pyvw.Workspace(f"--loss_function logistic -b 24 --quiet {pairs} {cubic}")
    columns = [data[f].to_list() for f in fields]
    labels = data["label"].to_numpy()

    def learn_and_score() -> list[float]:
        losses = []
        for r in range(n_train + n_test):
            line = " ".join(f"|{letter[f]} {columns[j][r]}" for j, f in enumerate(fields))
            if r < n_train:
                vw.learn(f"{int(labels[r])} {line}")
            else:
                p = 1 / (1 + np.exp(-vw.predict(line)))
                losses.append(-np.log(p if labels[r] > 0 else 1 - p))
        return losses

    losses, took = timed(learn_and_score)
    vw.finish()
    print(f"VW {pairs} {cubic}: test logloss {np.mean(losses):.4f} ({took:.0f} s; {load()})")


if __name__ == "__main__":
    main()
