"""apple on sparse data under the paper's protocol: synthetic text and shared sets.

Runs lin, apple variants (``--variant name=key:value,...`` for ``Apple`` options; without one,
the default apple, ``default=``) and with ``--vw`` Vowpal Wabbit's lin and ``--stage_poly``
(needs ``vowpalwabbit``: ``SKIPPED`` without it) on the same 80/20 splits, rate picked by
progressive loss (``polars_poly.compare``'s protocol), and prints one row per (data set, split,
algorithm). ``textNk[:vocabulary[:noise[:pairs[:words]]]]`` is the text generator; other names
are shared data sets (``../shared/data`` or ``$POLARS_POLY_DATA``).

    .venv/bin/python -m benches.suite.apple_sparse --data text12k --seeds 0,1,2,3,4,5 --vw
    .venv/bin/python -m benches.suite.apple_sparse --data text12k --seeds 0,1,2 --vw \
        --variant default= --variant max=ranking:max_magnitude
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np
import polars as pl
import scipy.sparse as sp
from polars_poly.apple import Apple
from polars_poly.benchdata import Task, load_dataset
from polars_poly.compare import DEFAULT_RATES, VowpalWabbit, split, test_error
from polars_poly.learner import SGDRegressor
from polars_poly.synthetic import text

from benches.common import data_or_exit, module_or_exit


def text_csr(
    n_rows: int, seed: int, vocabulary: int, noise: float, pairs: int, words: int
) -> tuple[sp.csr_array, np.ndarray]:
    df = text(n_rows, seed, vocabulary=vocabulary, noise=noise, n_pairs=pairs, n_words=words)
    lengths = df["features"].list.len().to_numpy()
    flat = df.select(pl.col("features").explode().struct.unnest())
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    X = sp.csr_array(
        (flat["value"].to_numpy(), flat["index"].to_numpy().astype(np.int64), indptr),
        shape=(len(df), vocabulary),
    )
    X.sort_indices()
    return X, df["label"].to_numpy()


def load(name: str) -> tuple[sp.csr_array, np.ndarray, Task]:
    if name.startswith("text"):
        # textNk[:vocabulary[:noise[:pairs[:words]]]]: N thousand documents of the text
        # generator (seed 0; defaults 8000 words, noise 0.5, 10 pairs, 300 planted words).
        size, *rest = name[4:].split(":")
        given = dict(zip(("vocabulary", "noise", "pairs", "words"), rest, strict=False))
        X, y = text_csr(
            int(size.rstrip("k")) * 1000,
            0,
            int(given.get("vocabulary", 8000)),
            float(given.get("noise", 0.5)),
            int(given.get("pairs", 10)),
            int(given.get("words", 300)),
        )
        return X, y, "classification"
    X, y, task = load_dataset(name, data_or_exit())
    return X, y, task


def parse_variant(spec: str) -> tuple[str, dict[str, Any]]:
    name, _, options = spec.partition("=")
    kwargs: dict[str, Any] = {}
    for item in filter(None, options.split(",")):
        key, _, value = item.partition(":")
        kwargs[key] = value
        for kind in (int, float):
            try:
                kwargs[key] = kind(value)
                break
            except ValueError:
                pass
        if value in ("true", "false"):
            kwargs[key] = value == "true"
    return name, kwargs


def fit(kwargs: dict[str, Any] | None, rate: float, X: Any, y: Any) -> tuple[SGDRegressor, float]:
    expansion: Any = "linear" if kwargs is None else Apple(**kwargs)
    model = SGDRegressor(expansion=expansion, bits=24, eta0=rate, progress=False)
    began = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="text12k")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--rates", default=",".join(map(str, DEFAULT_RATES)))
    parser.add_argument("--variant", action="append", help="NAME=key:value,... (default: default=)")
    parser.add_argument("--vw", action="store_true")
    parser.add_argument("--no-lin", action="store_true")
    args = parser.parse_args()
    if args.vw:
        module_or_exit("vowpalwabbit", "pip install vowpalwabbit")
    rates = [float(r) for r in args.rates.split(",")]
    variants: list[tuple[str, dict[str, Any] | None]] = [] if args.no_lin else [("lin", None)]
    variants += [parse_variant(v) for v in args.variant or ["default="]]
    for name in args.data.split(","):
        X, y, task = load(name)
        for seed in [int(s) for s in args.seeds.split(",")]:
            data = split(X, y, seed)
            Xtr, ytr, Xt, yt = data
            for label, kwargs in variants:
                best = None
                began = time.perf_counter()
                for rate in rates:
                    model, seconds = fit(kwargs, rate, Xtr, ytr)
                    loss = float(model.progressive_loss_)
                    if best is None or loss < best[0]:
                        error = test_error(model.predict(Xt), yt, task)
                        feats = model.n_feature_updates_ / Xtr.shape[0]
                        best = (loss, error, rate, feats, seconds)
                assert best is not None
                print(
                    f"{name}\t{seed}\tours\t{label}\terr={best[1]:.4f}\tprog={best[0]:.4f}"
                    f"\trate={best[2]}\tfeat/ex={best[3]:.0f}\tfit={best[4]:.2f}s"
                    f"\tgrid={time.perf_counter() - began:.0f}s",
                    flush=True,
                )
            if args.vw:
                runner = VowpalWabbit(data)
                try:
                    for algorithm in ("lin", "apple"):
                        out = runner.run(algorithm, task, yt, rates, [1.0])
                        per_ex = out.features / Xtr.shape[0] if math.isfinite(out.features) else 0
                        print(
                            f"{name}\t{seed}\tvw\t{algorithm}\terr={out.error:.4f}"
                            f"\tprog={out.progressive:.4f}\trate={out.rate}"
                            f"\tfeat/ex={per_ex:.0f}",
                            flush=True,
                        )
                finally:
                    runner.close()


if __name__ == "__main__":
    main()
