"""The main job run by ``make demo`` / ``python -m polars_poly demo`` on bundled data: the apple
comparison (lin / quad / cubic / apple, ours and, when installed, Vowpal Wabbit's) on the bundled
german.numer set, what apple learned, then a short tour of the rest of the package."""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

import polars as pl

import polars_poly as pp


def bundled_dataset(name: str = "german.numer_scale.gz") -> Path:
    """Path of a data set shipped inside the package (``polars_poly/data``)."""
    return Path(str(resources.files("polars_poly") / "data" / name))


def run_demo(out_dir: str | Path = "compare-out") -> None:
    from polars_poly.compare import (
        compare,
        format_summary,
        plots_available,
        printable,
        vw_available,
    )

    vw = vw_available()
    print("apple vs lin / quad / cubic on the bundled german.numer set (80/20 split, squared")
    print(
        "loss, learning rate picked by progressive validation)"
        + (", ours and Vowpal Wabbit's:" if vw else ":")
    )
    table = compare(["german.numer"], None, vw=vw, out_dir=out_dir, log=lambda _: None)
    with pl.Config(tbl_rows=20, tbl_cols=-1, tbl_hide_dataframe_shape=True, float_precision=4):
        print(printable(table, with_split=False))
    print(format_summary(table))
    if plots_available():
        print(
            f"table and plots written to {out_dir}/ (compare.csv, rel_err_time_cdf.png, "
            "tradeoff.png)"
        )
    else:
        print(f"table written to {out_dir}/compare.csv (pip install matplotlib for the plots)")
    frame = pp.read_libsvm(bundled_dataset())
    model = pp.SGDRegressor(expansion=pp.Apple(alpha=0.5)).fit(frame, "label")
    grown = f"{model.n_parents_} parents in {model.n_expansions_} expansions"
    print(f"\napple (alpha=0.5) grew {grown}; the first ones:")
    with pl.Config(tbl_hide_dataframe_shape=True, float_precision=3):
        print(model.monomials().head(8))
    print("\n--- tour of the rest of the package ---")
    run_tour()


def run_tour() -> None:
    path = bundled_dataset()
    started = time.perf_counter()
    frame = pp.read_libsvm(path)
    elapsed = time.perf_counter() - started
    features = frame["features"]
    width = pp.n_features(features)
    nnz = int(features.list.len().sum())
    print(f"read {path.name}: {frame.height} rows, {width} features, {nnz} nonzeros", end="")
    print(f" in {elapsed * 1e3:.1f} ms")
    print(frame.head(3))

    matrix = pp.to_scipy(features, width)
    back = pp.from_scipy(matrix)
    print(f"scipy round trip: {matrix.shape} CSR, {matrix.nnz} stored values", end="")
    print(f"; equal after the round trip: {back.equals(features)}")

    for degree in (2, 3):
        started = time.perf_counter()
        expanded = frame.lazy().select(
            pp.expand("features", n_features=width, degree=degree, include_bias=False)
        )
        out = expanded.collect(engine="streaming")["features"]
        elapsed = time.perf_counter() - started
        out_nnz = int(out.list.len().sum())
        out_width = pp.output_width(width, degree, include_bias=False)
        print(
            f"degree-{degree} expansion (Polars streaming expression): {out_width} columns,", end=""
        )
        print(f" {out_nnz} nonzeros in {elapsed * 1e3:.1f} ms")
    last = out.to_list()[0][-1]
    name = pp.feature_name(last["index"], width, 3, include_bias=False)
    print(f"last monomial of row 0: column {last['index']} = {name!r}, value {last['value']:.4f}")

    people = pl.LazyFrame(
        {"age": [23, 41, 35], "income": [1.5, 0.0, 3.2], "city": ["Paris", "Lyon", None]}
    )
    hashed = people.select(pp.hash_features("age", "income", "city", bits=10).alias("features"))
    print("VW-style hashing of mixed columns into 2^10 features (streaming engine):")
    print(hashed.collect(engine="streaming"))

    learn_demo(frame)


def learn_demo(frame: pl.DataFrame) -> None:
    """Nonlinear learning at linear cost: online learners on an 80/20 split of the bundled data."""
    labels = (frame["label"] > 0).cast(pl.Int8).to_numpy()
    split = int(0.8 * frame.height)
    train, test = frame.slice(0, split), frame.slice(split)
    train_y, test_y = labels[:split], labels[split:]
    print(f"\nonline learners, {split} training rows, {frame.height - split} test rows:")
    print(f"{'model':>36} | {'test error':>10} | {'fit time':>9}")
    models: dict[str, object] = {
        "SGDClassifier linear (logistic)": pp.SGDClassifier(expansion="linear", passes=3),
        "SGDClassifier quadratic (logistic)": pp.SGDClassifier(expansion="quadratic", passes=3),
        "PassiveAggressiveClassifier": pp.PassiveAggressiveClassifier(averaging=100),
        "DoSClassifier rank 2": pp.DoSClassifier(2, averaging=100),
    }
    for name, model in models.items():
        started = time.perf_counter()
        model.fit(train.select("features"), train_y)  # type: ignore[attr-defined]
        elapsed = time.perf_counter() - started
        predicted = model.predict(test.select("features"))  # type: ignore[attr-defined]
        error = float((predicted != test_y).mean())
        print(f"{name:>36} | {100 * error:9.1f}% | {elapsed * 1e3:6.1f} ms")
    dos = models["DoSClassifier rank 2"]
    scored = test.lazy().select(dos.predict_expr("features").alias("predicted"))  # type: ignore[attr-defined]
    print("DoS predictions inside a streaming Polars query:", end=" ")
    print(scored.collect(engine="streaming")["predicted"].head(8).to_list())
