"""One model fitted on eat-rate's fields given three ways, alternating, in one process: as
string columns (the model hashes them as it reads them), as categorical columns (cast to strings
in the query), and as ``hash_features`` columns of the model's ``bits``. The three fits give the
same model; only the time differs.

* ``--mode memory`` (default): from an in-memory frame (hashing included for the strings and
  categoricals, done beforehand for the ``hash_features`` frame);
* ``--mode end-to-end``: a LazyFrame over the parquet files ``benches/large_hashed.py --work DIR``
  wrote (strings; categoricals cast in the scan; a ``hash_features`` select);
* ``--mode score``: a model fitted on the categorical frame's first 300k rows scores every row
  in a streaming query, ``predict_proba_expr()`` over the frame as strings and as categoricals
  (the fitted expression reads those as strings), and ``predict_proba_expr(*pl.col(fields))``
  over the categoricals (they cross into the engine as they are);
* ``--mode codes``: the fields as integer codes (Polars' dictionary codes), fitted on the first
  ``--rows`` minus 200k rows with the default field scales and tested on the rest: declared
  ``categorical=fields`` (hashed as ``"A=17"``), against the original strings and the codes
  cast to bare digit strings (which Vowpal Wabbit's hashing maps to consecutive slots);
  progressive and test logloss, fit time.

The model is large_hashed.py's: logistic loss, ``bits=24``, ``interactions=[("A", "B")]``, no
field scales. Medians over rounds are printed, with the load before each round.

    .venv/bin/python -m benches.suite.string_columns --rows 2000000 --rounds 3
    .venv/bin/python -m benches.suite.string_columns --mode end-to-end --work /tmp/lhwork --rounds 4
    .venv/bin/python -m benches.suite.string_columns --mode score --rounds 5
    .venv/bin/python -m benches.suite.string_columns --mode codes --rows 1200000
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly.synthetic import eat_rate

from benches.common import load

BITS = 24


def model() -> pp.SGDClassifier:
    return pp.SGDClassifier(
        loss="logistic", bits=BITS, interactions=[("A", "B")], field_scales=False, progress=False
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mode", choices=["memory", "end-to-end", "score", "codes"], default="memory"
    )
    parser.add_argument("--rows", type=int, default=2_000_000, help="memory mode: rows")
    parser.add_argument("--work", type=Path, default=Path("/tmp/lhwork"), help="end-to-end data")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.mode == "score":
        score(args.rows, args.rounds)
        return
    if args.mode == "codes":
        integer_codes(args.rows)
        return

    inputs: dict[str, Callable[[], pl.DataFrame | pl.LazyFrame]]
    if args.mode == "memory":
        strings = eat_rate(args.rows, seed=0)
        fields = [c for c in strings.columns if c != "label"]
        categorical = strings.with_columns(pl.col(fields).cast(pl.Categorical))
        hashed = strings.with_columns(pp.hash_features(f, bits=BITS).alias(f) for f in fields)
        inputs = {"strings": lambda: strings, "categorical": lambda: categorical}
        inputs["hash_features"] = lambda: hashed
    else:
        parts = str(args.work / "train" / "*.parquet")
        fields = [c for c in pl.scan_parquet(parts).collect_schema().names() if c != "label"]
        inputs = {
            "strings": lambda: pl.scan_parquet(parts),
            "categorical": lambda: pl.scan_parquet(parts).with_columns(
                pl.col(fields).cast(pl.Categorical)
            ),
            "hash_features": lambda: pl.scan_parquet(parts).with_columns(
                pp.hash_features(f, bits=BITS).alias(f) for f in fields
            ),
        }

    times: dict[str, list[float]] = {name: [] for name in inputs}
    losses: dict[str, float] = {}
    for round_ in range(args.rounds):
        names = list(inputs) if round_ % 2 == 0 else list(reversed(inputs))
        print(f"round {round_ + 1} ({load()}):", end="", flush=True)
        for name in names:
            data = inputs[name]()
            fitted = model()
            began = time.perf_counter()
            fitted.fit(data, "label")
            times[name].append(time.perf_counter() - began)
            print(f"  {name} {times[name][-1]:.2f} s", end="", flush=True)
            losses[name] = fitted.progressive_loss_
        print()
    print(f"medians over {args.rounds} rounds ({args.mode}):")
    for name, values in times.items():
        print(f"  {name:14s} {statistics.median(values):6.2f} s")
    same = len(set(losses.values())) == 1
    print(f"the same progressive loss from every input: {same} ({losses['strings']:.6f})")


def score(rows: int, rounds: int) -> None:
    strings = eat_rate(rows, seed=0)
    fields = [c for c in strings.columns if c != "label"]
    categorical = strings.with_columns(pl.col(fields).cast(pl.Categorical))
    fitted = model().fit(categorical.head(300_000), "label")
    queries = {
        "strings": (strings, fitted.predict_proba_expr()),
        "categorical": (categorical, fitted.predict_proba_expr()),
        "categorical as is": (categorical, fitted.predict_proba_expr(*map(pl.col, fields))),
    }
    times: dict[str, list[float]] = {name: [] for name in queries}
    scores = {}
    for round_ in range(rounds):
        names = list(queries) if round_ % 2 == 0 else list(reversed(queries))
        print(f"round {round_ + 1} ({load()}):", end="", flush=True)
        for name in names:
            frame, expr = queries[name]
            began = time.perf_counter()
            scored = frame.lazy().select(expr).collect(engine="streaming").to_series()
            times[name].append(time.perf_counter() - began)
            print(f"  {name} {times[name][-1]:.2f} s", end="", flush=True)
            scores[name] = scored
        print()
    print(f"medians over {rounds} rounds (score, {rows:,} rows):")
    for name, values in times.items():
        print(f"  {name:18s} {statistics.median(values):6.2f} s")
    same = all(s.equals(scores["strings"]) for s in scores.values())
    print(f"the same scores from every input: {same}")


def integer_codes(rows: int) -> None:
    strings = eat_rate(rows, seed=0)
    fields = [c for c in strings.columns if c != "label"]
    codes = strings.with_columns(pl.col(fields).cast(pl.Categorical).to_physical().cast(pl.Int64))
    inputs = {
        "strings": (strings, None),
        "codes, categorical=fields": (codes, fields),
        "codes cast to bare digits": (codes.with_columns(pl.col(fields).cast(pl.String)), None),
    }
    train_rows = rows - 200_000
    print(f"{train_rows:,} rows to train, 200,000 to test ({load()}):")
    for name, (frame, categorical) in inputs.items():
        fitted = pp.SGDClassifier(
            loss="logistic", bits=BITS, interactions=[("A", "B")], categorical=categorical
        ).set_params(progress=False)
        began = time.perf_counter()
        fitted.fit(frame.head(train_rows), "label")
        seconds = time.perf_counter() - began
        test = frame.tail(200_000)
        p = np.clip(fitted.predict_proba(test.drop("label"))[:, 1], 1e-15, 1 - 1e-15)
        y = test["label"].to_numpy() > 0
        loss = float(-(y * np.log(p) + ~y * np.log(1 - p)).mean())
        print(
            f"  {name:27s} progressive {fitted.progressive_loss_:.4f}  test logloss {loss:.4f}"
            f"  fit {seconds:.2f} s"
        )


if __name__ == "__main__":
    main()
