"""Distributed training on Dask (issue 23): throughput with 1 and 2 workers, what moves per
round, and distributed apple's accuracy against the single machine, in one run.

* **Throughput.** A ``LocalCluster`` of 1 and of 2 worker processes (one thread each) trains the
  same shards with ``polars_poly.dask.fit``; runs alternate 1 and 2 workers, medians are
  reported with the ratio. Two settings:
  - *compute-bound*: 24 dense features, ``expansion="cubic"`` (2,925 features per example),
    ``bits=18`` (a 4 MiB model): the work per example dwarfs the model moved per round;
  - *eat-rate*: the fwumious_wabbit benchmark (``polars_poly.synthetic.eat_rate``; 12 categorical
    fields hashed into one sparse column each, ``interactions=[("A", "B")]``, ``bits=24``, a
    256 MiB model, logistic loss; 10M rows by default): ~14 features per example, so each
    round's model traffic and averaging weigh against little work.
  Per round: examples/s (examples over the round's wall time, averaging included), bytes moved
  between workers (Dask's transfer counters, which count our model file) and seconds.
* **Control.** The eat-rate fits as plain processes without Dask, one shard each: one process
  alone, then two at once. On a machine whose cores share one memory system, two random-access
  learners slow each other down; this ratio bounds what two workers can gain there.
* **Factorization.** ``ffm=pp.FFM(k=4)`` over every pair of eat-rate's 12 fields, and apple with
  the factorization of the pairs it crosses, on eat-rate with a fifth of the pairs held out of
  training (``--ffm-rows``): one machine against 4 shards on 2 workers, one pass.
* **Accuracy.** apple (``field_crosses=None``) on a dense regression with a planted product
  (``y = x0·x1 + 0.5·x2 + noise``): test MSE of ``passes`` passes on one machine (in memory,
  ``holdout=0``) against 4 shards on Dask with the same passes, averaged by examples and by the
  AdaGrad sums.

The machine's load average is printed with each measurement: compare on a quiet machine. The
2-core VM runs the scheduler and this client beside the workers.

    .venv/bin/python -m benches.suite.dask_training                      # eat-rate 10M, 2 passes
    .venv/bin/python -m benches.suite.dask_training --eat-rate-rows 2000000 --repeats 3
    .venv/bin/python -m benches.suite.dask_training --skip dense eat-rate apple   # FFM alone
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
import polars_poly.dask as ppd
from distributed import Client, LocalCluster
from polars_poly import synthetic

from benches.common import load

FIELDS = [chr(ord("A") + k) for k in range(12)]


def dense_frame(n: int, width: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, width))
    y = X[:, 0] * X[:, 1] + 0.5 * X[:, 2] + 0.3 * rng.standard_normal(n)
    return pl.DataFrame({f"x{i}": X[:, i] for i in range(width)} | {"y": y})


def write_dense_shards(work: Path, n: int, width: int, n_shards: int, seed: int) -> list[str]:
    frame = dense_frame(n, width, seed)
    size = -(-n // n_shards)
    paths = []
    for k in range(n_shards):
        path = work / f"dense-{seed}-{k:02d}.parquet"
        frame[k * size : (k + 1) * size].write_parquet(path)
        paths.append(str(path))
    return paths


def write_eat_rate_shards(work: Path, n: int, n_shards: int, bits: int) -> list[str]:
    """Shards of hashed eat-rate rows (one sparse column per field), a million rows at a time."""
    size = -(-n // n_shards)
    paths = []
    for k in range(n_shards):
        raw = work / f"eat-rate-raw-{k:02d}.parquet"
        synthetic.write_parquet("eat_rate", raw, min(size, n - k * size), seed=0, offset=k * size)
        path = work / f"eat-rate-{k:02d}.parquet"
        pl.scan_parquet(raw).select(
            "label", *(pp.hash_features(f, bits=bits).alias(f) for f in FIELDS)
        ).sink_parquet(path)
        raw.unlink()
        paths.append(str(path))
    return paths


@contextmanager
def local_client(workers: int) -> Iterator[Client]:
    """A client of a local cluster of ``workers`` one-thread processes."""
    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
        yield client


def run(
    workers: int, estimator: Any, paths: list[str], y: str, passes: int
) -> list[dict[str, Any]]:
    with local_client(workers) as client:
        model = ppd.fit(estimator, paths, y, client=client, passes=passes, progress=False)
    return list(model.rounds_)


def throughput(name: str, estimator: Any, paths: list[str], y: str, args: Any) -> None:
    print(f"\n## {name}: {len(paths)} shards, {args.passes} passes")
    rates: dict[int, list[float]] = {1: [], 2: []}
    for repeat in range(args.repeats):
        for workers in (1, 2):
            rounds = run(workers, estimator, paths, y, args.passes)
            total_examples = sum(r["examples"] for r in rounds)
            total_seconds = sum(r["seconds"] for r in rounds)
            rates[workers].append(total_examples / total_seconds)
            per_round = ", ".join(
                f"{r['seconds']:.2f} s (tasks {'/'.join(f'{t:.2f}' for t in r['task_seconds'])} "
                f"s, average {r['average_seconds']:.2f} s) / {r['bytes_moved'] / 1e6:.0f} MB"
                for r in rounds
            )
            print(
                f"repeat {repeat + 1}, {workers} worker(s): "
                f"{total_examples / total_seconds:,.0f} examples/s; per round {per_round}; "
                f"model {rounds[-1]['model_bytes'] / 1e6:.1f} MB; "
                f"loss {rounds[-1]['progressive_loss']:.5f}; {load()}"
            )
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    print(
        f"median: 1 worker {one:,.0f} examples/s, 2 workers {two:,.0f} examples/s, "
        f"ratio {two / one:.2f}x"
    )


def _fit_alone(path: str) -> float:
    """Examples/s of one plain eat-rate fit of a shard (in a worker process of the control)."""
    frame = pl.read_parquet(path)
    began = time.perf_counter()
    pp.SGDClassifier(bits=24, interactions=[("A", "B")], features=FIELDS, field_scales=False).fit(
        frame, "label"
    )
    return len(frame) / (time.perf_counter() - began)


def _read_then_fit(path: str) -> tuple[float, float]:
    """Seconds to read a shard as a training task does (``collect_batches``), and to learn it
    from memory."""
    began = time.perf_counter()
    for _ in pl.scan_parquet(path).collect_batches(chunk_size=65_536):
        pass
    read = time.perf_counter() - began
    return read, len(pl.read_parquet(path)) / _fit_alone(path)


def machine_scaling(paths: list[str], args: Any) -> None:
    """The control: the same fits as plain processes, without Dask, one alone and two at once.
    Two at once over one alone bounds what 2 Dask workers can gain on this machine."""
    print("\n## control: plain fits of one eat-rate shard each, 1 process vs 2 at once")
    context = multiprocessing.get_context("spawn")
    alone, together = [], []
    with context.Pool(2) as pool:
        for _ in range(args.repeats):
            alone.append(pool.apply(_fit_alone, (paths[0],)))
            together.append(sum(pool.map(_fit_alone, paths[:2])))
            print(
                f"1 process {alone[-1]:,.0f} examples/s; 2 at once {together[-1]:,.0f} "
                f"examples/s in all; {load()}"
            )
        read, learn = pool.apply(_read_then_fit, (paths[0],))
    one, two = statistics.median(alone), statistics.median(together)
    print(f"median: 1 process {one:,.0f}, 2 at once {two:,.0f} examples/s, ratio {two / one:.2f}x")
    rows = pl.scan_parquet(paths[0]).select(pl.len()).collect().item()
    print(
        f"one shard ({rows:,} rows): read in batches {read:.2f} s "
        f"({read / rows * 1e6:.2f} µs/row), learned from memory {learn:.2f} s"
    )


def accuracy(work: Path, args: Any) -> None:
    print(f"\n## apple accuracy: 4 shards vs one machine, {args.passes} passes")
    train = dense_frame(args.apple_rows, 10, seed=1)
    test = dense_frame(50_000, 10, seed=2)
    apple = pp.Apple(field_crosses=None)
    single = pp.SGDRegressor(expansion=apple, passes=args.passes, holdout=0, n_iter_no_change=0)
    single.fit(train, "y")
    paths = []
    for k in range(4):
        path = work / f"apple-{k}.parquet"
        train[k::4].write_parquet(path)
        paths.append(str(path))
    models = {"one machine": single}
    with local_client(2) as client:
        for averaging in ("examples", "adaptive"):
            models[f"4 shards, averaging={averaging}"] = ppd.fit(
                pp.SGDRegressor(expansion=apple),
                paths,
                "y",
                client=client,
                passes=args.passes,
                partitions=4,  # one training task per shard: 4-way local apple, then averaging
                averaging=averaging,
                progress=False,
            )
    truth = test["y"].to_numpy()
    mse = {name: float(np.mean((m.predict(test) - truth) ** 2)) for name, m in models.items()}
    for name, value in mse.items():
        relative = value / mse["one machine"] - 1
        print(f"{name}: test MSE {value:.5f} ({relative:+.2%} vs one machine; target within 1%)")
    print(load())


def factorization(work: Path, args: Any) -> None:
    """The field-aware factorization on eat-rate with a fifth of the pairs held out of training:
    test logloss and AUC of one machine against 4 shards on Dask (one pass, averaged by
    examples), over every pair and over the pairs apple crosses."""
    from sklearn.base import clone
    from sklearn.metrics import roc_auc_score

    print(f"\n## factorization: 4 shards vs one machine, eat_rate_unseen {args.ffm_rows:,} rows")
    held_out = 0.2
    train = synthetic.eat_rate(args.ffm_rows, 0, held_out_pairs=held_out)
    test = synthetic.eat_rate(
        200_000, 0, held_out_pairs=held_out, include_held_out=True, offset=args.ffm_rows
    )

    def hashed(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.select("label", *(pp.hash_features(f, bits=24).alias(f) for f in FIELDS))

    train, test = hashed(train), hashed(test)
    paths = []
    for k in range(4):
        path = work / f"ffm-{k}.parquet"
        train.slice(k * len(train) // 4, len(train) // 4).write_parquet(path)
        paths.append(str(path))
    settings: dict[str, dict[str, Any]] = {
        "every pair": {"ffm": pp.FFM(k=4, pairs="all")},
        "apple + its crosses' pairs": {"expansion": "apple", "ffm": pp.FFM(k=4)},
    }
    y = test["label"].to_numpy() > 0
    with local_client(2) as client:
        for name, options in settings.items():
            estimator = pp.SGDClassifier(loss="logistic", bits=24, shuffle=False, **options)
            began = time.perf_counter()
            single = clone(estimator).fit(train, "label")
            alone = time.perf_counter() - began
            began = time.perf_counter()
            shards = ppd.fit(estimator, paths, "label", client=client, progress=False)
            spread = time.perf_counter() - began
            for where, model, took in (
                ("one machine", single, alone),
                ("4 shards", shards, spread),
            ):
                p = np.clip(model.predict_proba(test.drop("label"))[:, 1], 1e-15, 1 - 1e-15)
                logloss = float(-(y * np.log(p) + (~y) * np.log(1 - p)).mean())
                print(
                    f"{name}, {where}: test logloss {logloss:.4f}, AUC "
                    f"{roc_auc_score(y, p):.5f}, {took:.1f} s"
                )
    print(load())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eat-rate-rows", type=int, default=10_000_000)
    parser.add_argument("--dense-rows", type=int, default=400_000)
    parser.add_argument("--apple-rows", type=int, default=400_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--ffm-rows", type=int, default=2_000_000)
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["dense", "eat-rate", "apple", "ffm"]
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pp-distributed-") as tmp:
        work = Path(tmp)
        if "dense" not in args.skip:
            paths = write_dense_shards(work, args.dense_rows, 24, args.shards, seed=0)
            throughput(
                "compute-bound (24 dense features, cubic, bits=18)",
                pp.SGDRegressor(expansion="cubic", bits=18),
                paths,
                "y",
                args,
            )
        if "eat-rate" not in args.skip:
            began = time.perf_counter()
            paths = write_eat_rate_shards(work, args.eat_rate_rows, args.shards, bits=24)
            print(f"\n(eat-rate shards written in {time.perf_counter() - began:.0f} s)")
            throughput(
                f"eat-rate {args.eat_rate_rows:,} rows (bits=24, A x B)",
                # Without field scales, as the control's plain fits (and the documented runs,
                # from before Dask trained them).
                pp.SGDClassifier(
                    bits=24, interactions=[("A", "B")], features=FIELDS, field_scales=False
                ),
                paths,
                "label",
                args,
            )
            machine_scaling(paths, args)
        if "apple" not in args.skip:
            accuracy(work, args)
        if "ffm" not in args.skip:
            factorization(work, args)


if __name__ == "__main__":
    main()
