"""Vowpal Wabbit on the synthetic eat-rate set: the reference numbers of docs/datasets.md.

Trains one pass of Vowpal Wabbit (``pyvw``, logistic loss, each field its own namespace) on rows
``0 .. train`` of ``polars_poly.synthetic.eat_rate(seed)`` and scores rows ``train .. train +
test``: a linear model and one with ``-q AB``. Prints test logloss and error of each.

    .venv/bin/python -m benches.suite.eat_rate_vw                 # 2M train / 200k test, bits 24
    .venv/bin/python -m benches.suite.eat_rate_vw --sampling fwumious    # the original's sampling
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from typing import Literal

import numpy as np
import polars as pl
from polars_poly.synthetic import eat_rate

from benches.common import load, module_or_exit, seconds

CHUNK = 200_000
Sampling = Literal["types", "fwumious"]


def vw_lines(start: int, stop: int, seed: int, sampling: Sampling) -> Iterator[str]:
    """Rows ``start .. stop`` of eat-rate as VW lines, ``"1 |A Herbivore-5 |B Plant-7 ..."``."""
    for at in range(start, stop, CHUNK):
        frame = eat_rate(min(CHUNK, stop - at), seed, sampling=sampling, offset=at)
        parts: list[pl.Expr] = [pl.col("label").cast(pl.Int64).cast(pl.String)]
        for field in frame.columns[1:]:
            parts += [pl.lit(f" |{field} "), pl.col(field)]
        yield from frame.select(pl.concat_str(parts).alias("line"))["line"].to_list()


def run(
    options: str, train: int, test: int, seed: int, sampling: Sampling
) -> tuple[float, float, float]:
    """(test logloss, test error, seconds) of one pass of VW with ``options``."""
    from vowpalwabbit import pyvw

    vw = pyvw.Workspace(options)
    labels: list[float] = []
    margins: list[float] = []

    def learn_and_score() -> None:
        for line in vw_lines(0, train, seed, sampling):
            vw.learn(line)
        for line in vw_lines(train, train + test, seed, sampling):
            labels.append(1.0 if line.startswith("1 ") else -1.0)
            margins.append(vw.predict(line))

    taken = seconds(learn_and_score)
    vw.finish()
    y, z = np.array(labels), np.array(margins)
    logloss = float(np.mean(np.logaddexp(0.0, -y * z)))
    error = float(np.mean(np.where(z > 0, 1.0, -1.0) != y))
    return logloss, error, taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=2_000_000)
    parser.add_argument("--test", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bits", type=int, default=24)
    parser.add_argument("--sampling", choices=["types", "fwumious"], default="types")
    args = parser.parse_args()
    module_or_exit("vowpalwabbit", "pip install vowpalwabbit")
    base = f"--loss_function logistic -b {args.bits} --quiet"
    print(
        f"eat-rate ({args.sampling}) seed {args.seed}: "
        f"{args.train:,} train rows, {args.test:,} test rows; {load()}"
    )
    for name, options in [("linear", base), ("-q AB", base + " -q AB")]:
        logloss, error, taken = run(options, args.train, args.test, args.seed, args.sampling)
        print(
            f"{name:8s} logloss {logloss:.4f}  error {100 * error:.1f}%  "
            f"({taken:.0f} s, {load()})  pyvw.Workspace({options!r})"
        )
    print(f"constant logloss {math.log(2):.4f}")


if __name__ == "__main__":
    main()
