"""apple with field crosses trained on Dask: each shard screens its own rows for crosses, the
merged model keeps their union, and later passes train it frozen.

eat-rate in small by default (100 animals and foods, 4 noise fields of 10,000 values; the full
benchmark's 1,000 and 10 with ``--varieties 1000 --noise-fields 10``), each field hashed into its
own column, ``--shards`` parquet shards of ``--rows`` rows each, and 20k rows to test. Prints
each shard's own model (crosses, test logloss), one machine over all the rows (the default apple,
and the cross given), the linear model, and the distributed default apple after
1..``--passes`` passes on a 2-worker LocalCluster, with fit times.

    .venv/bin/python -m benches.suite.dask_field_crosses [--shards 4 --rows 40000 --passes 3]
        [--averaging examples] [--given] [--field-scales]
    .venv/bin/python -m benches.suite.dask_field_crosses --field-scales --varieties 1000 \
        --noise-fields 10 --rows 500000 --bits 24
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl
import polars_poly as pp
import polars_poly.dask as ppd
from distributed import Client, LocalCluster
from polars_poly.synthetic import eat_rate
from sklearn.metrics import log_loss

from benches.common import load


def logloss(model: pp.SGDClassifier, test: pl.DataFrame) -> float:
    """Test logloss (labels +1/-1), by scikit-learn."""
    p = model.predict_proba(test.drop("label"))[:, 1]
    return float(log_loss(test["label"].to_numpy() > 0, p, labels=[False, True]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--rows", type=int, default=40_000, help="rows per shard")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--varieties", type=int, default=100)
    parser.add_argument("--noise-fields", type=int, default=4)
    parser.add_argument("--bits", type=int, default=20)
    parser.add_argument("--averaging", choices=("auto", "examples", "adaptive"), default="auto")
    parser.add_argument("--given", action="store_true", help="also Dask with A*B given")
    parser.add_argument(
        "--field-scales",
        action="store_true",
        help="every model with a scale per field (the default for several columns; off: "
        "Vowpal Wabbit's model)",
    )
    args = parser.parse_args()
    options = {"loss": "logistic", "bits": args.bits, "field_scales": args.field_scales}
    n = args.shards * args.rows
    print(f"eat-rate: {args.shards} shards of {args.rows:,} rows, bits {args.bits}; {load()}")
    frame = eat_rate(n + 20_000, seed=1, varieties=args.varieties, noise_fields=args.noise_fields)
    fields = [c for c in frame.columns if c != "label"]
    data = frame.select("label", *(pp.hash_features(f, bits=args.bits).alias(f) for f in fields))
    train, test = data.head(n), data.tail(20_000)
    work = tempfile.TemporaryDirectory(prefix="pp-dask-crosses-")
    directory = Path(work.name)
    shards = []
    for k in range(args.shards):
        path = directory / f"part-{k:03d}.parquet"
        train[k * args.rows : (k + 1) * args.rows].write_parquet(path)
        shards.append(str(path))
    rows = []

    def row(model: str, fitted: pp.SGDClassifier, began: float, crosses: bool = True) -> None:
        seconds = time.perf_counter() - began
        found = ",".join(fitted.crosses()["cross"]) if crosses else ""
        loss = logloss(fitted, test)
        rows.append({"model": model, "crosses": found, "test logloss": loss, "seconds": seconds})

    typical = pp.Apple(ranking="typical")  # what Dask trains with the default ranking
    for k, shard_path in enumerate(shards):
        shard = pl.read_parquet(shard_path)
        began = time.perf_counter()
        row(
            f"shard {k} alone",
            pp.SGDClassifier(**options, expansion=typical).fit(shard, "label"),
            began,
        )
    began = time.perf_counter()
    alone = pp.SGDClassifier(**options, expansion=typical).fit(train, "label")
    row("one machine, all rows", alone, began)
    began = time.perf_counter()
    given = pp.SGDClassifier(**options, interactions=[("A", "B")]).fit(train, "label")
    row("one machine, A*B given", given, began, crosses=False)
    began = time.perf_counter()
    row("linear, all rows", pp.SGDClassifier(**options).fit(train, "label"), began, crosses=False)
    with (
        LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=2, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,  # type: ignore[no-untyped-call]
    ):
        models: dict[str, dict[str, Any]] = {"Dask": {"expansion": "apple"}}
        if args.given:
            models["Dask, A*B given"] = {"interactions": [("A", "B")]}
        for name, model_options in models.items():
            for passes in range(1, args.passes + 1):
                began = time.perf_counter()
                model = ppd.fit(
                    pp.SGDClassifier(**options, **model_options),
                    shards,
                    "label",
                    client=client,
                    passes=passes,
                    partitions=len(shards),
                    averaging=args.averaging,
                )
                crosses = "expansion" in model_options
                row(f"{name}, {passes} pass(es)", model, began, crosses=crosses)
    work.cleanup()
    with pl.Config(tbl_rows=30, fmt_str_lengths=40):
        print(
            pl.DataFrame(rows).with_columns(
                pl.col("test logloss").round(4), pl.col("seconds").round(2)
            )
        )
    print(load())


if __name__ == "__main__":
    main()
