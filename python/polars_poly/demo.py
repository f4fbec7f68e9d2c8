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


NAMES = {
    "lin": "linear",
    "quad": "quadratic (all x_i x_j)",
    "cubic": "cubic (all x_i x_j x_k)",
    "apple": "apple (adaptive)",
    "apple_best": "apple, best alpha",
}


def run_demo(out_dir: str | Path = "compare-out") -> None:
    from polars_poly.compare import compare, plots_available, plotted_files, vw_available

    vw = vw_available()
    frame = pp.read_libsvm(bundled_dataset())
    width = pp.n_features(frame["features"])
    print(
        f"polars-poly demo: linear, quadratic, cubic and apple models on german.numer\n"
        f"({frame.height:,} rows, {width} features; trained on 80%, tested on 20%)"
        + (", by polars-poly and by Vowpal Wabbit" if vw else "")
        + ".\n"
    )
    table = compare(["german.numer"], None, vw=vw, out_dir=out_dir, log=lambda _: None)
    print(headline(table, vw))
    print()
    print(model_table(table, vw))
    print(
        "\n  test error: share of the test rows whose sign is predicted wrong (the models learn"
        "\n              the +1/-1 label with squared loss, as in the apple paper);"
        "\n  time:       one pass of training at the learning rate that progressive"
        "\n              validation picked from a grid, in milliseconds;"
        "\n  apple:      grows degree-2/3 monomials of the features the model relies on, as"
        "\n              training goes (Agarwal et al., NIPS 2014), ranked two ways side by side"
        "\n              and the linear model kept where neither helps; best alpha: its tuned"
        "\n              variant."
    )
    files = ["compare.csv"] + (plotted_files(table) if plots_available() else [])
    print(f"\nwritten to {out_dir}/: {', '.join(files)}", end="")
    print("" if plots_available() else " (pip install matplotlib for the plot)")
    model = pp.SGDRegressor(expansion=pp.Apple(alpha=0.5)).fit(frame, "label")
    if model.apple_ranking_ == "linear":
        # The race kept the copy that stopped growing: show what a ranking would have grown.
        print(
            "\napple (alpha=0.5) kept the linear model here: linear's progressive loss was more"
            "\nthan 10% below both rankings' (apple_ranking_ == 'linear')."
        )
        model = pp.SGDRegressor(expansion=pp.Apple(alpha=0.5, ranking="typical"))
        model.fit(frame, "label")
        lead = "with ranking='typical' it would have expanded"
    else:
        lead = f"what apple (alpha=0.5, ranking {model.apple_ranking_!r}) chose to expand"
    grown = f"{model.n_parents_} monomials in {model.n_expansions_} expansions"
    print(f"\n{lead}: {grown}; the first ones:")
    with pl.Config(tbl_hide_dataframe_shape=True, float_precision=3):
        print(model.monomials().head(8))
    print("\n--- tour of the rest of the package ---")
    run_tour()


def _ours(table: pl.DataFrame, algorithm: str, column: str) -> float:
    row = table.filter((pl.col("system") == "ours") & (pl.col("algorithm") == algorithm))
    return float(row[column][0])


def headline(table: pl.DataFrame, vw: bool) -> str:
    """Which model won, by how much, and how our apple compares with Vowpal Wabbit's."""
    ours = table.filter(pl.col("system") == "ours").sort("error", maintain_order=True)
    best = ours.row(0, named=True)
    linear = _ours(table, "lin", "error")
    if best["algorithm"] == "lin":
        lines = [f"Best test error: linear, {100 * linear:.1f}%."]
    else:
        lines = [
            f"Best test error: {NAMES[best['algorithm']]}, {100 * best['error']:.1f}%, "
            f"{100 * (linear - best['error']):.1f} points better than linear."
        ]
    apple = _ours(table, "apple", "error")
    if apple > linear:
        lines.append(
            f"apple ({100 * apple:.1f}%) does not beat linear here: on this small, nearly\n"
            "linear set every expansion loses a little to linear (apple on 28 data sets:\n"
            "docs/benchmarks.md)."
        )
    if vw:
        theirs = table.filter((pl.col("system") == "vw") & (pl.col("algorithm") == "apple"))
        if theirs.height:
            speed = float(theirs["seconds"][0]) / _ours(table, "apple", "seconds")
            lines.append(
                f"Our apple against Vowpal Wabbit's (--stage_poly): test error {100 * apple:.1f}% "
                f"vs {100 * float(theirs['error'][0]):.1f}%,\n{speed:.0f}x faster in this run."
            )
    return "\n".join(lines)


def model_table(table: pl.DataFrame, vw: bool) -> str:
    """One line per model: test error and time, ours and (when run) Vowpal Wabbit's."""
    header = f"{'model':<26}{'test error':>11}{'time':>10}"
    if vw:
        header += f"{'VW error':>11}{'VW time':>10}"
    lines = [header]
    for algorithm, name in NAMES.items():
        rows = {
            r["system"]: r
            for r in table.filter(pl.col("algorithm") == algorithm).iter_rows(named=True)
        }
        if "ours" not in rows:
            continue
        line = f"{name:<26}"
        for system in ("ours", "vw") if vw else ("ours",):
            r = rows.get(system)
            line += (
                f"{100 * r['error']:>10.1f}%{1e3 * r['seconds']:>8.1f}ms"
                if r
                else f"{'-':>11}{'-':>10}"
            )
        lines.append(line)
    return "\n".join(lines)


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
