"""Large hashed models, ours vs Vowpal Wabbit side by side in one run (issue 21).

eat-rate (``polars_poly.synthetic.eat_rate``, 12 hashed categorical fields, 10M training rows by
default) with ``bits=24``, logistic loss, the A x B cross (``interactions=[("A", "B")]``; Vowpal
Wabbit ``-q AB``), one pass, the default update rule; ours on one core (the learner is serial).
Rounds alternate ours and Vowpal Wabbit; medians are reported, with the ratios:

* **fit from memory** — ours: ``SGDClassifier.fit`` on an in-memory frame of hashed columns
  (and on the in-memory frame of the raw string columns, hashed by the model as it reads them);
  Vowpal Wabbit: training from its binary cache (made beforehand);
* **end to end** — ours: a lazy query reading the raw parquet files (string columns), hashing
  each field (``hash_features``) and fitting (``fit`` on the LazyFrame, streamed in batches);
  and the same files' string columns given to ``fit`` as they are (the model hashes each field
  as it reads it, with its ``bits``: the same model); Vowpal Wabbit: training from its text file
  (its parser thread beside the learner);
* **scoring** — ours: ``predict_proba_expr`` in a streaming query over the hashed rows (rows/s
  per core, 2 threads on this machine) and over the raw parquet (hashing included: by
  ``hash_features``, and by the model from the string columns); Vowpal Wabbit: ``-t`` over its
  text file;
* end to end from the Vowpal Wabbit text file too: ours reads it with ``read_vw(namespaces=...)``
  (one column per namespace, Vowpal Wabbit's hashing) and fits;
* test logloss and error: ours from parquet (``hash_features``, its own hashing), from the
  string columns (the same hashing) and ours from the text file (Vowpal Wabbit's slots, so its
  logloss equals Vowpal Wabbit's up to rounding).

Vowpal Wabbit runs as ``python -m vowpalwabbit`` (its wheel has no ``vw`` binary); its times are
the process wall time minus the wall time of the same command on a one-example file. The
machine's load average is printed with each measurement: compare on a quiet machine.

    .venv/bin/python -m benches.suite.large_hashed                      # 10M train / 200k test
    .venv/bin/python -m benches.suite.large_hashed --train 2000000 --rounds 3
    python -m benches.suite.large_hashed --data click         # the click-like set, 30 fields
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly import synthetic

from benches.common import load

CHUNK = 1_000_000


def generate(kind: str, start: int, stop: int, seed: int) -> pl.DataFrame:
    if kind == "eat_rate":
        return synthetic.eat_rate(stop - start, seed, offset=start)
    return synthetic.click(stop - start, seed, offset=start)


def write_data(kind: str, work: Path, n_train: int, n_test: int, seed: int) -> list[str]:
    """Raw parquet parts and Vowpal Wabbit text files of train and test; returns the fields."""
    fields: list[str] = []
    for split, start, stop in (("train", 0, n_train), ("test", n_train, n_train + n_test)):
        (work / split).mkdir()
        with open(work / f"{split}.vw", "w") as text:
            for part, at in enumerate(range(start, stop, CHUNK)):
                frame = generate(kind, at, min(at + CHUNK, stop), seed)
                fields = [c for c in frame.columns if c != "label"]
                frame.write_parquet(work / split / f"part-{part:04d}.parquet")
                pieces: list[pl.Expr] = [pl.col("label").cast(pl.Int64).cast(pl.String)]
                # One namespace per field, named by its first letter (what -q reads).
                for k, field in enumerate(fields):
                    pieces += [pl.lit(f" |{namespace(k)} "), pl.col(field)]
                lines = frame.select(pl.concat_str(pieces).alias("line"))["line"]
                text.write("\n".join(lines.to_list()) + "\n")
    return fields


def namespace(k: int) -> str:
    """Vowpal Wabbit namespace of field k: a distinct first character per field."""
    return chr(ord("A") + k) if k < 26 else chr(ord("a") + k - 26)


def hashed(frame: pl.LazyFrame | pl.DataFrame, fields: list[str], bits: int) -> Any:
    return frame.select("label", *(pp.hash_features(f, bits=bits).alias(f) for f in fields))


def run_vw(args: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "vowpalwabbit", *args], capture_output=True, check=True)
    return time.perf_counter() - began


def logloss_error(labels: np.ndarray, margins: np.ndarray) -> tuple[float, float]:
    y = np.where(labels > 0, 1.0, -1.0)
    return (
        float(np.mean(np.logaddexp(0.0, -y * margins))),
        float(np.mean(np.where(margins > 0, 1.0, -1.0) != y)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=["eat_rate", "click"], default="eat_rate")
    parser.add_argument("--train", type=int, default=10_000_000)
    parser.add_argument("--test", type=int, default=200_000)
    parser.add_argument("--bits", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None, help="keep the files here")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="pp-large-"))
    if args.work is not None:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    began = time.perf_counter()
    fields = write_data(args.data, work, args.train, args.test, args.seed)
    print(
        f"{args.data}: {args.train:,} train + {args.test:,} test rows, {len(fields)} fields, "
        f"written in {time.perf_counter() - began:.0f} s to {work}; {load()}",
        flush=True,
    )

    if args.data == "eat_rate":
        crosses = [("A", "B")]
    else:
        crosses = [(c.a, c.b) for c in synthetic.click_planted(args.seed).field_crosses]
    index = {f: k for k, f in enumerate(fields)}
    quadratic = [f"{namespace(index[a])}{namespace(index[b])}" for a, b in crosses]
    vw_common = ["--loss_function", "logistic", "-b", str(args.bits), "--quiet"]
    for q in quadratic:
        vw_common += ["-q", q]
    one = work / "one.vw"
    one.write_text("1 |A x\n")
    startup = min(run_vw(["-d", str(one), *vw_common]) for _ in range(3))
    cache = work / "train.cache"
    cache_s = (
        run_vw(
            [
                "-d",
                str(work / "train.vw"),
                "--cache_file",
                str(cache),
                "--noop",
                "-b",
                str(args.bits),
                "--quiet",
            ]
        )
        - startup
    )
    print(
        f"Vowpal Wabbit start-up {startup:.2f} s (subtracted); cache made in {cache_s:.1f} s",
        flush=True,
    )

    train_parts = str(work / "train" / "*.parquet")
    test_parts = str(work / "test" / "*.parquet")
    began = time.perf_counter()
    train = hashed(pl.read_parquet(train_parts), fields, args.bits)
    test = hashed(pl.read_parquet(test_parts), fields, args.bits)
    print(f"ours: read + hashed into memory in {time.perf_counter() - began:.1f} s", flush=True)
    train_strings = pl.read_parquet(train_parts)
    test_strings = pl.read_parquet(test_parts).drop("label")
    y_test = test["label"].to_numpy()
    names = [namespace(k) for k in range(len(fields))]
    test_text = pp.read_vw(work / "test.vw", namespaces=names)

    # The text file's columns are the namespace letters.
    letter_crosses = [(namespace(index[a]), namespace(index[b])) for a, b in crosses]

    def model(text: bool = False) -> pp.SGDClassifier:
        return pp.SGDClassifier(
            loss="logistic",
            bits=args.bits,
            interactions=letter_crosses if text else crosses,
            # Vowpal Wabbit's model, for equal test loss ('auto' would learn field scales), learned
            # as it learns: the rows in file order (the default shuffles in-memory data).
            field_scales=False,
            shuffle=False,
            progress=False,
        )

    times: dict[str, list[float]] = {}
    quality: dict[str, tuple[float, float]] = {}

    def record(name: str, seconds: float) -> None:
        times.setdefault(name, []).append(seconds)
        print(f"  {name}: {seconds:.2f} s  {load()}", flush=True)

    for round_ in range(args.rounds):
        print(f"round {round_ + 1}", flush=True)
        ours = model()
        began = time.perf_counter()
        ours.fit(train, "label")
        record("ours fit from memory", time.perf_counter() - began)
        margins = ours.decision_function(test.drop("label"))
        quality["ours"] = logloss_error(y_test, np.asarray(margins))

        model_file = work / "vw.model"
        vw_train = ["-d", str(work / "train.vw"), "-f", str(model_file), *vw_common]
        record("VW fit from cache", run_vw([*vw_train, "--cache_file", str(cache)]) - startup)

        in_memory = model()
        began = time.perf_counter()
        in_memory.fit(train_strings, "label")
        record("ours fit from memory, strings", time.perf_counter() - began)

        e2e = model()
        began = time.perf_counter()
        e2e.fit(hashed(pl.scan_parquet(train_parts), fields, args.bits), "label")
        record("ours end to end from parquet", time.perf_counter() - began)

        record("VW fit from text", run_vw(vw_train) - startup)

        # The same text file read by ours, one column per namespace: Vowpal Wabbit's hashing, so
        # its test logloss is Vowpal Wabbit's up to float rounding.
        strings = model()
        began = time.perf_counter()
        strings.fit(pl.scan_parquet(train_parts), "label")
        record("ours end to end from parquet, strings", time.perf_counter() - began)
        margins = strings.decision_function(test_strings)
        quality["ours from string columns"] = logloss_error(y_test, np.asarray(margins))

        from_text = model(text=True)
        began = time.perf_counter()
        frame = pp.read_vw(work / "train.vw", namespaces=names)
        from_text.fit(frame.select("label", *names), "label")
        record("ours end to end from VW text", time.perf_counter() - began)
        del frame
        margins = from_text.decision_function(test_text.select(names))
        quality["ours from VW text"] = logloss_error(y_test, np.asarray(margins))

        expr = ours.predict_proba_expr(*fields)
        began = time.perf_counter()
        scored = train.lazy().select(expr).collect(engine="streaming")
        record("ours score hashed rows (streaming)", time.perf_counter() - began)
        assert len(scored) == args.train
        # From the raw parquet: hashed by hash_features in the query, then by the model itself.
        hash_exprs = [pp.hash_features(f, bits=args.bits).alias(f) for f in fields]
        for name, inputs in (
            ("ours score raw parquet (streaming)", hash_exprs),
            ("ours score raw parquet, strings", fields),
        ):
            query = pl.scan_parquet(train_parts).select(ours.predict_proba_expr(*inputs))
            began = time.perf_counter()
            query.collect(engine="streaming")
            record(name, time.perf_counter() - began)

        preds = work / "vw.preds"
        record(
            "VW score from text",
            run_vw(
                [
                    "-t",
                    "-i",
                    str(model_file),
                    "-d",
                    str(work / "train.vw"),
                    "-p",
                    str(preds),
                    "--quiet",
                ]
            )
            - startup,
        )
        run_vw(
            ["-t", "-i", str(model_file), "-d", str(work / "test.vw"), "-p", str(preds), "--quiet"]
        )
        quality["VW"] = logloss_error(y_test, np.loadtxt(preds, usecols=0))

    median = {name: statistics.median(values) for name, values in times.items()}
    n = args.train
    rows = [
        (
            "fit from memory / VW from cache",
            median["VW fit from cache"] / median["ours fit from memory"],
        ),
        (
            "fit from memory, strings / VW from cache",
            median["VW fit from cache"] / median["ours fit from memory, strings"],
        ),
        (
            "end to end from parquet / VW from text",
            median["VW fit from text"] / median["ours end to end from parquet"],
        ),
        (
            "end to end from parquet, strings / VW text",
            median["VW fit from text"] / median["ours end to end from parquet, strings"],
        ),
        (
            "end to end from VW text / VW from text",
            median["VW fit from text"] / median["ours end to end from VW text"],
        ),
        (
            "score hashed rows / VW -t from text",
            median["VW score from text"] / median["ours score hashed rows (streaming)"],
        ),
    ]
    print(f"\nmedians over {args.rounds} rounds ({n:,} training rows, bits {args.bits}):")
    for name, seconds in median.items():
        print(f"  {name:42s} {seconds:7.2f} s  {n / seconds / 1e6:6.2f}M rows/s")
    print("speed-ups (Vowpal Wabbit time / ours):")
    for name, ratio in rows:
        print(f"  {name:42s} {ratio:6.2f}x")
    threads = pl.thread_pool_size()
    print(
        f"scoring per core ({threads} threads): "
        f"{n / median['ours score hashed rows (streaming)'] / threads / 1e6:.2f}M rows/s hashed, "
        f"{n / median['ours score raw parquet (streaming)'] / threads / 1e6:.2f}M rows/s raw, "
        f"{n / median['ours score raw parquet, strings'] / threads / 1e6:.2f}M rows/s raw "
        "(string columns)"
    )
    for name, (ll, err) in quality.items():
        print(f"test logloss {name:24s} {ll:.5f}  error {100 * err:.2f}%")
    for name in ("ours", "ours from string columns", "ours from VW text"):
        print(f"|logloss {name} - VW| = {abs(quality[name][0] - quality['VW'][0]):.2e}")
    if args.work is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
