"""Numbers beside hashed fields, as click data has them: eat-rate's 12 string fields and 13
count columns (Poisson, mean 2), fitted and scored two ways, alternating, in one process:

* ``in place``: the frame as it is; the model reads the counts where they lie (one namespace,
  ``features``, a struct of the columns in the query);
* ``sparse``: the counts made into a ``to_sparse`` column first (what the model did inside
  before reading them in place, and what a user would write by hand).

Both give the same model (the bench checks the progressive loss and the scores); only the time
and the memory differ. Rows: fit from an in-memory frame, fit from a parquet file (LazyFrame,
streamed in batches), streaming ``decision_function_expr`` over the parquet file; then a frame of
numbers only (20 normal columns, half the rows, a squared-loss ``SGDRegressor``): fit and
``predict`` from memory. Medians over
rounds are printed, with the load before each round; then the peak memory a fit from memory adds
to the process that holds the frame (each way in a fresh process).

``--vw``: instead, ours against Vowpal Wabbit (from its cache, start-up subtracted, ``-q AB``)
on the same rows with 0, 1 and 13 counts, alternating; the counts in VW's namespace
``features`` as ``n0:2 n1:3 ...``. Ours fits the frame from memory. The progressive losses
are printed beside the times. A row with a count of 0 has no feature there, so the rows are no
longer one-hot: their blocks are expanded row by row (on the builder thread) rather than
column by column.

``--apple``: instead, what ``expansion="apple"`` costs beside counts: the default apple (its
ranking race), ``Apple(ranking="typical")``, ``FieldApple()`` (the field crosses without apple's
monomials) and the linear model, each fitted once on ``--rows``
rows with 0, 1 and 13 counts, then scored on 200k more rows: fit seconds, feature updates an
example and test logloss. The counts are noise (the label is eat-rate's), so what apple's
monomials of them cost buys nothing here.

    .venv/bin/python -m benches.suite.numeric_columns --rows 2000000 --rounds 3
    .venv/bin/python -m benches.suite.numeric_columns --vw --rows 2000000 --rounds 3
    .venv/bin/python -m benches.suite.numeric_columns --apple --rows 1000000
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly.synthetic import eat_rate

from benches.common import REPO, load

BITS = 24
COUNTS = [f"n{i}" for i in range(13)]


def model() -> pp.SGDClassifier:
    return pp.SGDClassifier(
        loss="logistic", bits=BITS, interactions=[("A", "B")], field_scales=False, progress=False
    )


Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def as_sparse(frame: Frame) -> Frame:
    return frame.select(pl.exclude(COUNTS), pp.to_sparse(*COUNTS).alias("features"))


def mixed_frame(rows: int, seed: int = 0) -> pl.DataFrame:
    """``rows`` eat-rate rows of ``seed`` with the 13 counts beside them."""
    rng = np.random.default_rng(seed)
    return eat_rate(rows, seed=seed).with_columns(
        pl.Series(name, rng.poisson(2.0, rows).astype(np.float64)) for name in COUNTS
    )


def status_kb(field: str) -> int:
    """A ``/proc/self/status`` field (``VmRSS``, ``VmHWM``) in kB."""
    line = next(x for x in open("/proc/self/status") if x.startswith(field + ":"))
    return int(line.split()[1])


def peak_added(rows: int, sparse: bool) -> None:
    """(In a child process.) Prints the MB a fit from memory adds to the resident size at its
    peak, over the frame already held."""
    frame = mixed_frame(rows)
    with open("/proc/self/clear_refs", "w") as file:
        file.write("5")  # resets the peak (VmHWM) to the current size
    before = status_kb("VmRSS")
    model().fit(as_sparse(frame) if sparse else frame, "label")
    print((status_kb("VmHWM") - before) // 1024)


def vw_text(frame: pl.DataFrame, counts: list[str], path: Path) -> None:
    """``frame`` as Vowpal Wabbit text: field k in namespace A, B, ...; counts in ``features``."""
    fields = [c for c in frame.columns if c != "label" and c not in counts]
    parts = [pl.col("label").cast(pl.Int64).cast(pl.String)]
    parts += [pl.format(f"|{chr(ord('A') + k)} {{}}", pl.col(f)) for k, f in enumerate(fields)]
    if counts:
        numbers = [
            pl.when(pl.col(c) != 0).then(pl.format(c + ":{}", pl.col(c).cast(pl.Int64)))
            for c in counts
        ]
        parts.append(
            pl.concat_str([pl.lit("|features"), *numbers], separator=" ", ignore_nulls=True)
        )
    lines = frame.select(pl.concat_str(parts, separator=" ").alias("line"))
    lines.write_csv(path, include_header=False, quote_style="never")


def run_vw(args: list[str]) -> tuple[float, str]:
    """Seconds and stderr of ``python -m vowpalwabbit args`` (its wheel has no binary)."""
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "vowpalwabbit", *args], capture_output=True, check=True, text=True
    )
    return time.perf_counter() - began, done.stderr


def against_vw(rows: int, rounds: int) -> None:
    work = Path(tempfile.mkdtemp())
    frame = mixed_frame(rows)
    startup = min(run_vw(["-d", "/dev/null", "--quiet"])[0] for _ in range(3))
    print(f"Vowpal Wabbit start-up {startup:.2f} s (subtracted)")
    table = []
    for k in (0, 1, 13):
        data = frame.drop(COUNTS[k:])
        vw_text(data, COUNTS[:k], work / "train.vw")
        cache = work / f"train{k}.cache"
        run_vw(["-d", str(work / "train.vw"), "--cache_file", str(cache), "--noop", "--quiet"])
        vw_args = ["-d", str(work / "train.vw"), "--cache_file", str(cache), "-b", str(BITS)]
        vw_args += ["--loss_function", "logistic", "-q", "AB"]
        ours_s, vw_s, ours_loss, vw_loss = [], [], 0.0, ""
        for round_ in range(rounds):
            for who in ("ours", "vw") if round_ % 2 == 0 else ("vw", "ours"):
                if who == "ours":
                    began = time.perf_counter()
                    ours_loss = model().fit(data, "label").progressive_loss_
                    ours_s.append(time.perf_counter() - began)
                else:
                    seconds, stderr = run_vw(vw_args)
                    vw_s.append(seconds - startup)
                    vw_loss = next(x for x in stderr.splitlines() if "average loss" in x)
            timing = f"ours {ours_s[-1]:.2f} s, VW {vw_s[-1]:.2f} s"
            print(f"  {k} counts, round {round_ + 1}: {timing}, {load()}")
        ours, theirs = statistics.median(ours_s), statistics.median(vw_s)
        table.append(
            f"| {k} | {ours:.2f} s | {theirs:.2f} s | {theirs / ours:.2f}x | "
            f"{ours_loss:.6f} / {vw_loss.split('=')[1].strip()} |"
        )
    print(f"\n{rows:,} rows, 12 string fields + counts, bits={BITS}, A x B")
    print("| counts | ours (memory) | VW (cache) | VW / ours | progressive loss ours / VW |")
    print("|---:|---:|---:|---:|---|")
    print("\n".join(table))


def apple_beside_counts(rows: int) -> None:
    frame = mixed_frame(rows + 200_000)
    train, test = frame.head(rows), frame.tail(200_000)
    models: dict[str, Callable[[], str | pp.Apple | pp.FieldApple]] = {
        "default apple": lambda: "apple",
        "typical": lambda: pp.Apple(ranking="typical"),
        "field crosses alone": lambda: pp.FieldApple(),
        "linear": lambda: "linear",
    }
    print(f"{rows:,} eat-rate rows + counts, bits={BITS}, one fit each, {load()}")
    print("| counts | model | fit | feature updates an example | test logloss | crosses |")
    print("|---:|---|---:|---:|---:|---|")
    for k in (0, 1, 13):
        data, held = train.drop(COUNTS[k:]), test.drop(COUNTS[k:])
        for name, expansion in models.items():
            fitted = pp.SGDClassifier(
                loss="logistic", bits=BITS, expansion=expansion(), progress=False
            )
            began = time.perf_counter()
            fitted.fit(data, "label")
            seconds = time.perf_counter() - began
            p = np.clip(fitted.predict_proba(held.drop("label"))[:, 1], 1e-15, 1 - 1e-15)
            y = held["label"].to_numpy() > 0
            logloss = -float(np.mean(np.where(y, np.log(p), np.log1p(-p))))
            updates = fitted.n_feature_updates_ / rows
            crosses = fitted.crosses()["cross"].to_list() if name != "linear" else []
            print(
                f"| {k} | {name} | {seconds:.2f} s | {updates:.1f} | {logloss:.4f} | "
                f"{', '.join(crosses) or '-'} |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peak-of", choices=["in place", "sparse"], help=argparse.SUPPRESS)
    parser.add_argument("--vw", action="store_true", help="against Vowpal Wabbit (see above)")
    parser.add_argument("--apple", action="store_true", help="apple beside counts (see above)")
    args = parser.parse_args()
    if args.apple:
        apple_beside_counts(args.rows)
        return
    if args.vw:
        against_vw(args.rows, args.rounds)
        return
    if args.peak_of:
        peak_added(args.rows, args.peak_of == "sparse")
        return

    frame = mixed_frame(args.rows)
    path = Path(tempfile.mkdtemp()) / "mixed.parquet"
    frame.write_parquet(path)

    def fit_memory(sparse: bool) -> tuple[float, float]:
        data = as_sparse(frame) if sparse else frame  # the conversion is part of the fit
        return model().fit(data, "label").progressive_loss_, 0.0

    def fit_parquet(sparse: bool) -> tuple[float, float]:
        scan = pl.scan_parquet(path)
        return model().fit(as_sparse(scan) if sparse else scan, "label").progressive_loss_, 0.0

    rng = np.random.default_rng(1)
    dense = pl.DataFrame({f"x{i}": rng.normal(size=args.rows // 2) for i in range(20)})
    dense = dense.with_columns(y=pl.col("x0") * pl.col("x1") + pl.col("x2"))
    numbers = [f"x{i}" for i in range(20)]
    dense_sparse = dense.select(pp.to_sparse(*numbers).alias("features"), "y")

    def fit_numbers(sparse: bool) -> tuple[float, float]:
        data = dense.select(pp.to_sparse(*numbers).alias("features"), "y") if sparse else dense
        return pp.SGDRegressor(progress=False).fit(data, "y").progressive_loss_, 0.0

    regressor = pp.SGDRegressor(progress=False).fit(dense, "y")
    sparse_regressor = pp.SGDRegressor(progress=False).fit(dense_sparse, "y")

    def predict_numbers(sparse: bool) -> tuple[float, float]:
        if sparse:  # the conversion is part of the scoring
            data = dense.select(pp.to_sparse(*numbers).alias("features"))
            return 0.0, float(sparse_regressor.predict(data).sum())
        return 0.0, float(regressor.predict(dense.drop("y")).sum())

    scorer = model().fit(frame.head(200_000), "label")
    sparse_scorer = model().fit(as_sparse(frame.head(200_000)), "label")

    def score_parquet(sparse: bool) -> tuple[float, float]:
        scan = pl.scan_parquet(path)
        query = (as_sparse(scan) if sparse else scan).select(
            (sparse_scorer if sparse else scorer).decision_function_expr().alias("s")
        )
        return 0.0, float(query.collect(engine="streaming")["s"].sum())

    rows: dict[str, Callable[[bool], tuple[float, float]]] = {
        "fit from memory": fit_memory,
        "fit from parquet": fit_parquet,
        "streaming scoring from parquet": score_parquet,
        "numbers only: fit from memory": fit_numbers,
        "numbers only: predict from memory": predict_numbers,
    }
    times: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        print(f"round {round_ + 1}, {load()}")
        for name, run in rows.items():
            results = {}
            # Alternate which way goes first.
            for way in ["in place", "sparse"] if round_ % 2 == 0 else ["sparse", "in place"]:
                start = time.perf_counter()
                results[way] = run(way == "sparse")
                times.setdefault((name, way), []).append(time.perf_counter() - start)
            assert results["in place"] == results["sparse"], (name, results)
    print(f"\n{args.rows:,} rows, 12 string fields + 13 counts, bits={BITS}, A x B")
    print("| row | in place | sparse column | ratio |\n|---|---:|---:|---:|")
    for name in rows:
        ours, theirs = (statistics.median(times[(name, w)]) for w in ("in place", "sparse"))
        print(f"| {name} | {ours:.2f} s | {theirs:.2f} s | {ours / theirs:.2f} |")
    peaks = {
        way: subprocess.run(
            [sys.executable, "-m", "benches.suite.numeric_columns", "--rows", str(args.rows)]
            + ["--peak-of", way],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        for way in ("in place", "sparse")
    }
    added = f"{peaks['in place']} MB | {peaks['sparse']} MB"
    print(f"| peak memory a fit from memory adds | {added} | |")


if __name__ == "__main__":
    main()
