"""Reliability (issue 22): every Polars dtype is supported or refused by name before any batch
runs, sizes beyond the machine are ``MemoryError``s, saves are atomic, models are independent
across threads. Ctrl-C has its own file (test_interrupt.py); mutated model files are
property-tested in Rust (src/model/tests.rs)."""

from __future__ import annotations

import decimal
import os
import re
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl
import polars.selectors as cs
import polars_poly as pp
import pytest
import scipy.sparse as sp
from polars.exceptions import ComputeError

N = 6


def _series() -> dict[str, tuple[pl.Series, str, str]]:
    """name -> (column, what to_sparse does, what hash_features does): "number" (like the column
    cast to Float64), "text" (like the column cast to String), "tokens" (like List(String)) or
    "refused"."""
    strings = ["a", "b", "a", "c", None, "b"]
    return {
        "Boolean": (pl.Series([True, False, True, None, False, True]), "number", "number"),
        **{
            name: (pl.Series([1, 0, 3, None, 5, 2], dtype=dtype), "number", "number")
            for name, dtype in [
                ("Int8", pl.Int8),
                ("Int16", pl.Int16),
                ("Int32", pl.Int32),
                ("Int64", pl.Int64),
                ("Int128", pl.Int128),
                ("UInt8", pl.UInt8),
                ("UInt16", pl.UInt16),
                ("UInt32", pl.UInt32),
                ("UInt64", pl.UInt64),
                ("Float32", pl.Float32),
                ("Float64", pl.Float64),
            ]
        },
        "Decimal": (
            pl.Series(
                [decimal.Decimal(v) for v in ["1.5", "0", "2.25", "-3", "0.01", "7"]],
                dtype=pl.Decimal(10, 2),
            ),
            "number",
            "number",
        ),
        "String": (pl.Series(strings), "refused", "text"),
        "Categorical": (pl.Series(strings, dtype=pl.Categorical), "refused", "text"),
        "Enum": (pl.Series(strings, dtype=pl.Enum(["a", "b", "c"])), "refused", "text"),
        "List(String)": (
            pl.Series([["a", "b"], [], None, ["c"], ["a", "a"], ["b"]]),
            "refused",
            "tokens",
        ),
        "Array(String)": (
            pl.Series(
                [["a", "b"], ["c", "a"], None, ["c", "c"], ["a", "b"], ["b", "b"]],
                dtype=pl.Array(pl.String, 2),
            ),
            "refused",
            "tokens",
        ),
        "List(Float64)": (pl.Series([[1.0], [], None, [2.0], [3.0], [0.0]]), "refused", "refused"),
        "Array(Float64)": (
            pl.Series([[1.0, 2.0]] * N, dtype=pl.Array(pl.Float64, 2)),
            "refused",
            "refused",
        ),
        "Struct": (pl.Series([{"a": i} for i in range(N)]), "refused", "refused"),
        "Binary": (pl.Series([b"a"] * N), "refused", "refused"),
        "Date": (pl.Series(range(N)).cast(pl.Date), "refused", "refused"),
        "Datetime": (pl.Series(range(N)).cast(pl.Datetime("us")), "refused", "refused"),
        "Duration": (pl.Series(range(N)).cast(pl.Duration("us")), "refused", "refused"),
        "Time": (pl.Series(range(N)).cast(pl.Time), "refused", "refused"),
        "Null": (pl.Series([None] * N, dtype=pl.Null), "refused", "refused"),
    }


DTYPES = _series()
REFERENCE_CAST = {"number": pl.Float64, "text": pl.String, "tokens": pl.List(pl.String)}
TABLE_WORDS = {"value": "number", "hashed string": "text", "hashed tokens": "tokens"}


def test_the_documented_dtype_table_is_what_the_tests_enforce() -> None:
    readme = (Path(__file__).resolve().parents[1] / "docs" / "sparse.md").read_text()
    table = readme.split("| dtypes | `to_sparse` | `hash_features` |")[1].split("\n\n")[0]
    documented = {}
    for line in table.strip().splitlines()[1:]:
        names, to_sparse, hashed = (cell.strip() for cell in line.strip("|").split("|"))
        for name in names.split(", "):
            documented[name] = (
                TABLE_WORDS.get(to_sparse, to_sparse),
                TABLE_WORDS.get(hashed, hashed),
            )
    assert documented == {name: (a, b) for name, (_, a, b) in DTYPES.items()}


@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("expression", ["to_sparse", "hash_features"])
def test_every_dtype_is_supported_or_refused_by_name_before_any_batch(
    name: str, expression: str
) -> None:
    column, to_sparse_does, hash_does = DTYPES[name]
    frame = pl.DataFrame({"x": column})
    make = getattr(pp, expression)
    does = to_sparse_does if expression == "to_sparse" else hash_does
    if does == "refused":
        # Refused at planning time (the schema), eagerly, lazily and streaming, naming the
        # column and its dtype: never "the plugin panicked".
        query = frame.lazy().select(make("x"))
        for run in [
            query.collect_schema,
            lambda: frame.select(make("x")),
            lambda: query.collect(engine="streaming"),
        ]:
            with pytest.raises(ComputeError) as error:
                run()
            message = str(error.value)
            assert 'column "x" has dtype' in message, message
            assert "panicked" not in message
    else:
        # Supported: exactly what the column cast to its reference dtype gives.
        got = frame.select(make("x"))
        reference = frame.select(make(pl.col("x").cast(REFERENCE_CAST[does])))
        assert got.equals(reference), (got, reference)
        streamed = frame.lazy().select(make("x")).collect(engine="streaming")
        assert streamed.equals(reference)


def test_categoricals_train_like_the_strings_they_stand_for() -> None:
    rng = np.random.default_rng(0)
    words = rng.choice(["red", "green", "blue", "cyan"], 400)
    y = np.where(np.isin(words, ["red", "cyan"]), 1.0, -1.0)
    scores = []
    for dtype in [pl.String, pl.Categorical, pl.Enum(["red", "green", "blue", "cyan"])]:
        frame = pl.DataFrame({"color": pl.Series(words, dtype=dtype)})
        X = frame.select(pp.hash_features("color", bits=12))
        scores.append(pp.SGDClassifier(bits=12).fit(X, y).decision_function(X))
    np.testing.assert_array_equal(scores[0], scores[1])
    np.testing.assert_array_equal(scores[0], scores[2])


def test_estimators_name_feature_columns_of_no_feature_type() -> None:
    frame = pl.DataFrame({"day": pl.date_range(date(2020, 1, 1), date(2020, 1, 10), eager=True)})
    with pytest.raises(TypeError, match=r"'day' \(Date\)"):
        pp.SGDRegressor().fit(frame, np.ones(10))
    # A categorical column is a namespace of the online learners, not of the classifiers of
    # one sparse column.
    frame = pl.DataFrame({"c": pl.Series(["a", "b"] * 5, dtype=pl.Categorical)})
    with pytest.raises(TypeError, match=r"'c' \(Categorical\)"):
        pp.PassiveAggressiveClassifier().fit(frame, np.sign(np.arange(10) - 4.5))


def test_sizes_beyond_the_machine_are_memory_errors_naming_the_size() -> None:
    X = sp.random(50, 20, density=0.3, format="csr", random_state=0)
    wide = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(50, 2**31))
    y = np.sign(np.random.default_rng(0).standard_normal(50))
    with pytest.raises(MemoryError, match=r"n_features=2147483648 and rank=4 .* needs 128\.0 GiB"):
        pp.DoSClassifier(rank=4, n_features=2**31).fit(wide, y)
    with pytest.raises(MemoryError, match=r"n_features=2147483648 .* needs 32\.0 GiB"):
        pp.PassiveAggressiveClassifier().fit(wide, y)
    one_long_row = sp.csr_matrix(np.ones((1, 3000)))
    with pytest.raises(MemoryError, match=r"row 0 \(3000 nonzeros, 4509005501 monomials"):
        pp.expand_csr(one_long_row, degree=3, bits=20)
    with pytest.raises(MemoryError, match=r"the expansion \(\d+ entries") as error:
        pp.expand_csr(sp.csr_matrix(np.ones((2000, 3000))), degree=3)
    # The size asked for is both buffers', the indices' and the values' (each checked alone,
    # the pair could pass at up to twice what is free).
    found = re.search(
        r"\((\d+) entries of indices and values\) needs ([\d.]+) GiB", str(error.value)
    )
    assert found, error.value
    entries, gib = int(found[1]), float(found[2])
    assert gib == pytest.approx(entries * (8 + 8) / 2**30, abs=0.05), error.value


def test_a_save_that_fails_part_way_leaves_the_previous_file(tmp_path: Path) -> None:
    # A file-size limit makes the second save fail after writing part of the model (the
    # audit's "disk full"); the model saved first must still load and predict the same.
    script = textwrap.dedent(
        """
        import resource, signal, sys, numpy as np, scipy.sparse as sp, polars_poly as pp
        X = sp.random(300, 40, density=0.2, format="csr", random_state=0)
        y = np.random.default_rng(0).standard_normal(300)
        small = pp.SGDRegressor(bits=10).fit(X, y)
        small.save(sys.argv[1])
        big = pp.SGDRegressor(bits=18, expansion="quadratic").fit(X, y)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8_000, 8_000))
        try:
            big.save(sys.argv[1])
        except OSError as error:
            print("save failed:", error)
        else:
            raise SystemExit("the save should have failed")
        np.save(sys.argv[2], small.predict(X))
        """
    )
    model, expected = tmp_path / "model.pp", tmp_path / "expected.npy"
    done = subprocess.run(
        [sys.executable, "-c", script, str(model), str(expected)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "save failed" in done.stdout
    X = sp.random(300, 40, density=0.2, format="csr", random_state=0)
    np.testing.assert_array_equal(pp.load_model(model).predict(X), np.load(expected))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["expected.npy", "model.pp"]


def test_models_on_four_threads_equal_sequential_runs() -> None:
    rng = np.random.default_rng(3)
    data = []
    for k in range(4):
        X = sp.random(3000, 50, density=0.1, format="csr", random_state=k)
        data.append((X, np.sign(rng.standard_normal(3000))))

    def work(k: int) -> tuple[np.ndarray, np.ndarray]:
        X, y = data[k]
        sgd = pp.SGDClassifier(expansion="quadratic", passes=2, random_state=k).fit(X, y)
        dos = pp.DoSClassifier(rank=4, random_state=k).fit(X, y)
        return sgd.decision_function(X), dos.decision_function(X)

    sequential = [work(k) for k in range(4)]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(work, range(4)))
    for (a, b), (c, d) in zip(sequential, threaded, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


@pytest.mark.parametrize(
    ("case", "make", "scale_x", "scale_y", "weight"),
    [
        ("cubic on X * 1e8", lambda: pp.SGDRegressor(expansion="cubic"), 1e8, 1.0, 1.0),
        ("labels * 1e300", pp.SGDRegressor, 1.0, 1e300, 1.0),
        ("logistic on X * 1e30", pp.SGDClassifier, 1e30, 1.0, 1.0),
        ("weights of 1e300", pp.SGDRegressor, 1.0, 1.0, 1e300),
    ],
)
def test_overflow_is_an_error_naming_the_row_not_a_silent_zero_model(
    case: str, make, scale_x: float, scale_y: float, weight: float
) -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5))
    y = np.sign(X[:, 0]) * scale_y
    with pytest.raises(ValueError, match=r"row \d+: .*overflow"):
        make().fit(X * scale_x, y, sample_weight=np.full(200, weight))


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (1e300, "feature \\d+ has value 1e300, beyond the f32 range"),
        (1e30, "a feature has value 1e30 in magnitude, whose square overflows"),
    ],
)
def test_bad_values_name_their_column_among_several(value: float, says: str) -> None:
    rng = np.random.default_rng(2)
    n = 200
    frame = pl.DataFrame(
        {"A": rng.integers(0, 5, n).astype(str), "u": rng.normal(size=n), "v": rng.normal(size=n)}
    )
    numeric = frame.select("u", "v").with_columns(
        pl.when(pl.int_range(pl.len()) == 77).then(value).otherwise(pl.col("u")).alias("u")
    )

    def hashed(numbers: pl.DataFrame) -> pl.DataFrame:
        return pl.concat([frame.select("A"), numbers], how="horizontal").select(
            pp.hash_features("A", bits=18).alias("A"),
            pp.hash_features("u", "v", bits=18).alias("num"),
        )

    y = pl.Series("y", rng.integers(0, 2, n))
    bad = hashed(numeric)
    with pytest.raises(ValueError, match=f'^column "num", row 77: {says}'):
        pp.SGDClassifier(progress=False).fit(bad, y)
    # Scoring names it too.
    model = pp.SGDClassifier(progress=False).fit(hashed(frame.select("u", "v")), y)
    if value > 3.4e38:
        with pytest.raises(ValueError, match=f'column "num", row 77: {says}'):
            model.predict(bad)
    # A frame's numbers are read in place: a value beyond single precision is named by its own
    # column (a square's overflow, met learning, by its row: one namespace).
    own = 'column "u", row 77: value 1e300, beyond the f32 range' if value > 3.4e38 else None
    with pytest.raises(ValueError, match=f"^{own or f'row 77: {says}'}"):
        pp.SGDClassifier(progress=False).fit(numeric, y)
    if own:
        with pytest.raises(ValueError, match=own):
            pp.SGDClassifier(progress=False).fit(frame.select("u", "v"), y).predict(numeric)


def test_a_failing_partial_fit_learns_nothing_from_its_batch() -> None:
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((300, 4)), rng.standard_normal(300)
    model = pp.SGDRegressor().partial_fit(X[:100], y[:100])
    before = model.predict(X)
    bad = X[100:200].copy()
    bad[57, 2] = np.nan
    with pytest.raises(ValueError, match="row 57"):
        model.partial_fit(bad, y[100:200])
    np.testing.assert_array_equal(model.predict(X), before)

    # A frame's sparse column: the same, checked by the engine before it learns any row.
    def frame(rows: np.ndarray) -> pl.DataFrame:
        entries = [[{"index": j, "value": float(v)} for j, v in enumerate(r)] for r in rows]
        return pl.DataFrame({"x": entries}, schema={"x": pp.sparse_dtype()})

    model = pp.SGDRegressor().partial_fit(frame(X[:100]), y[:100])
    before = model.predict(frame(X))
    # Rows count over the whole stream of partial_fit calls: 100 before this batch.
    with pytest.raises(ValueError, match="row 157: feature 2 has non-finite value NaN"):
        model.partial_fit(frame(bad), y[100:200])
    np.testing.assert_array_equal(model.predict(frame(X)), before)


@pytest.mark.parametrize("make", [pp.DoSClassifier, pp.PassiveAggressiveClassifier])
def test_a_failing_partial_fit_of_the_pa_family_learns_nothing(make: type) -> None:
    """Learning goes batch by batch (batch_size rows): a bad row in a late batch must not leave
    the earlier batches learned."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 4))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    model = make(batch_size=32, n_features=4).partial_fit(X[:100], y[:100], classes=[-1, 1])
    before = model.decision_function(X)
    rows = [[{"index": j, "value": float(v)} for j, v in enumerate(r)] for r in X[100:200]]
    rows[77][1]["index"] = 9  # past n_features, found only when batch 3 (rows 64-95) is read
    bad = pl.Series("x", rows, dtype=pp.sparse_dtype())
    with pytest.raises(ValueError, match="row 77"):
        model.partial_fit(bad, y[100:200])
    np.testing.assert_array_equal(model.decision_function(X), before)


@pytest.mark.parametrize("batch_size", [64, 100, 1000])
def test_lazy_training_errors_name_the_row_of_the_whole_input(batch_size: int) -> None:
    rows = [[{"index": 0, "value": float(i)}] for i in range(400)]
    rows[150][0]["value"] = float("nan")
    frame = pl.DataFrame(
        {"x": rows, "y": np.ones(400)}, schema={"x": pp.sparse_dtype(), "y": pl.Float64}
    )
    with pytest.raises(ValueError, match=r"^row 150: feature 0 has non-finite value NaN"):
        pp.SGDRegressor(batch_size=batch_size).fit(frame.lazy(), "y")


@pytest.mark.parametrize("batch_size", [64, 1000])
def test_lazy_training_on_numeric_columns_names_the_row_of_the_whole_input(
    batch_size: int,
) -> None:
    values = np.arange(400, dtype=float)
    values[150] = np.nan
    frame = pl.LazyFrame({"a": values, "b": np.ones(400), "y": np.ones(400)})
    with pytest.raises(ValueError, match=r"column \"a\", row 150: non-finite value NaN"):
        pp.SGDRegressor(batch_size=batch_size).fit(frame, "y")


def test_plugin_row_errors_say_their_numbers_count_from_the_batch() -> None:
    # A plugin cannot know where Polars' batch starts in the whole input; its row numbers must
    # not pass for the input's.
    values = np.arange(300_000, dtype=float)
    values[250_000] = np.nan
    with pytest.raises(
        ComputeError, match=r"row \d+: non-finite value NaN \[row numbers count.*with_row_index"
    ):
        pl.LazyFrame({"a": values}).select(pp.to_sparse("a")).collect(engine="streaming")


def test_expressions_keep_filter_and_slice_pushdown(tmp_path) -> None:
    # Why plugin errors cannot name the row of the whole input (docs/reliability.md): a row
    # index as an extra input would block these pushdowns, and a .head(10) would score a file.
    path = tmp_path / "x.parquet"
    pl.DataFrame({"a": np.arange(100.0), "b": np.ones(100)}).write_parquet(path)
    model = pp.SGDRegressor().fit(pl.read_parquet(path).select(pp.to_sparse("a"), "b"), "b")
    for expr in (pp.to_sparse("a"), pp.hash_features("a"), model.predict_expr(pp.to_sparse("a"))):
        query = pl.scan_parquet(path).with_columns(expr.alias("out"))
        assert "SELECTION" in query.filter(pl.col("a") > 5).explain().split("SCAN", 1)[1]
        assert "SLICE" in query.head(10).explain().split("SCAN", 1)[1]


@pytest.mark.parametrize("convert", [pp.to_scipy, pp.to_numpy])
def test_conversions_refuse_non_finite_values_naming_the_row(convert) -> None:
    column = pl.Series(
        "x",
        [[{"index": 0, "value": 1.0}], [], [{"index": 1, "value": float("nan")}]],
        dtype=pp.sparse_dtype(),
    )
    with pytest.raises(ValueError, match=r"column 'x', row 2: non-finite value nan"):
        convert(column, 3)


def _small_model(tmp_path: Path) -> tuple[pp.SGDRegressor, pl.DataFrame]:
    frame = pl.DataFrame({"a": ["x", "y", "z", "x"], "y": [0.0, 1.0, 2.0, 0.5]})
    return pp.SGDRegressor(bits=10).fit(frame, "y"), frame


@pytest.mark.parametrize("reader", ["pp.load_model(path)", "pp.SGDRegressor.load(path)"])
def test_loading_a_fifo_or_a_directory_is_an_error_not_a_hang(tmp_path, reader) -> None:
    """A FIFO is refused before it is opened (reading one blocks until a writer comes, and
    Ctrl-C cannot stop the read); a subprocess, so that a hang fails instead of blocking."""
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    code = f"import polars_poly as pp\npath = {str(fifo)!r}\n{reader}"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert f"{fifo} is a FIFO, not a model file" in done.stderr
    with pytest.raises(ValueError, match="is a directory, not a model file"):
        pp.load_model(tmp_path)


def test_save_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path) -> None:
    model, frame = _small_model(tmp_path)
    target, link = tmp_path / "target.model", tmp_path / "link.model"
    pp.SGDRegressor(bits=10).fit(frame.head(2), "y").save(target)
    link.symlink_to(target)
    model.save(link)
    assert link.is_symlink() and link.resolve() == target
    np.testing.assert_array_equal(pp.load_model(target).predict(frame), model.predict(frame))


def test_save_onto_a_fifo_or_directory_is_an_error_that_leaves_it(tmp_path) -> None:
    model, _ = _small_model(tmp_path)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is a FIFO: save writes a regular file"):
        model.save(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    with pytest.raises(ValueError, match="is a directory: save writes a regular file"):
        model.save(tmp_path)
    # A device node, directly or through a link, stays the device (it used to be replaced by a
    # regular file).
    link = tmp_path / "null-link"
    link.symlink_to("/dev/null")
    for device in [Path("/dev/null"), link]:
        with pytest.raises(ValueError, match="save writes a regular file"):
            model.save(device)
        assert stat.S_ISCHR(os.stat(device).st_mode)
    assert link.is_symlink()


def test_train_onto_a_full_device_is_an_error(tmp_path) -> None:
    """``train -f /dev/full`` exits 1 naming the path, and the device stays a device."""
    data = tmp_path / "train.vw"
    data.write_text("1 | a:1\n-1 | b:1\n")
    done = subprocess.run(
        [sys.executable, "-m", "polars_poly", "train", "-d", str(data), "-f", "/dev/full"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    assert "/dev/full" in done.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.parametrize(
    "make, partial",
    [
        (lambda: pp.SGDRegressor(bits=10, shuffle=False), {}),  # a LazyFrame: in order
        (lambda: pp.DoSClassifier(), {"classes": [-1.0, 1.0]}),
    ],
)
def test_a_second_thread_training_one_estimator_is_refused(make, partial) -> None:
    """While one thread trains an estimator (held inside fit by a query that waits), another
    thread's fit or partial_fit on it raises at once; the first fit's model is a serial fit's."""
    from polars_poly import _exclusive

    frame = pl.DataFrame({"a": [0.0, 1.0, 2.0, 0.5] * 50, "y": [1.0, -1.0, 1.0, -1.0] * 50})
    release = threading.Event()

    def held(series: pl.Series) -> pl.Series:
        release.wait(60)
        return series

    query = frame.lazy().with_columns(pl.col("y").map_batches(held, return_dtype=pl.Float64))
    model = make()
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(lambda: model.fit(query, "y"))
        for _ in range(600):
            if id(model) in _exclusive._TRAINING:
                break
            time.sleep(0.05)
        with pytest.raises(RuntimeError, match="another thread is training this estimator"):
            model.fit(frame, "y")
        with pytest.raises(RuntimeError, match="another thread is training this estimator"):
            model.partial_fit(frame, "y", **partial)
        release.set()
        first.result(timeout=60)
    serial = make().fit(frame, "y")
    np.testing.assert_array_equal(model.predict(frame), serial.predict(frame))


@pytest.mark.parametrize("name", ["", "s\x00t"])
@pytest.mark.parametrize("make", [pp.SGDRegressor, pp.SGDClassifier, pp.DoSClassifier])
def test_a_feature_column_name_arrow_cannot_carry_is_refused_by_name(make, name) -> None:
    frame = pl.DataFrame({name: [1.0, 2.0, 0.5], "y": [-1.0, 1.0, 1.0]})
    with pytest.raises(ValueError) as error:
        make().fit(frame, "y")
    assert str(error.value).startswith(f"feature column {name!r}: ")
    assert "column name is not supported" in str(error.value)


@pytest.mark.parametrize(
    "build",
    [
        lambda model, name: model.predict_expr(name),
        lambda model, name: model.predict_expr(pl.col(name)),
        lambda model, name: pp.to_sparse(name),
        lambda model, name: pp.hash_features(name, bits=8),
        lambda model, name: pp.expand(pp.to_sparse(name), n_features=1, degree=2),
    ],
    ids=["predict_expr name", "predict_expr col", "to_sparse", "hash_features", "expand"],
)
def test_a_nul_byte_in_an_expression_input_name_is_refused_by_name(build) -> None:
    """Polars passes a plugin's inputs over the Arrow C interface, whose names are C strings:
    a NUL in one panicked inside Polars. Each of our expressions refuses it when built."""
    frame = pl.DataFrame({"s": ["a", "b", "a"], "y": [-1.0, 1.0, 1.0]})
    model = pp.SGDRegressor(progress=False).fit(frame, "y")
    with pytest.raises(ValueError, match=r"^column 's\\x00t': a NUL byte in a column name"):
        build(model, "s\x00t")


@pytest.mark.parametrize(
    "expression",
    [
        pp.hash_features(pl.all()),
        pp.hash_features(pl.col("^s.*$")),
        pp.hash_features(cs.string()),
        pp.to_sparse(cs.numeric()),
    ],
    ids=["all", "regex", "string-selector", "numeric-selector"],
)
def test_a_nul_byte_in_a_name_known_only_at_planning_is_refused(expression: pl.Expr) -> None:
    """A wildcard, regex or selector input names its columns only when the query is planned:
    a NUL in one is refused then, by name (it panicked inside Polars)."""
    frame = pl.LazyFrame({"s\x00t": ["a", "b"], "s\x00n": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"^column 's\\x00[tn]': a NUL byte in a column name"):
        frame.select(expression).collect()
    # Clean names go through unchanged, output names included.
    clean = pl.LazyFrame({"st": ["a", "b"], "sn": [1.0, 2.0]}).select(expression).collect()
    assert clean.columns[0] in ("st", "sn")


def _raw_csr(
    data: list[complex], indices: list[int], indptr: list[int], width: int
) -> sp.csr_matrix:
    """A CSR matrix of raw arrays, which scipy does not check."""
    matrix = sp.csr_matrix((1, width))
    matrix.data, matrix.indices, matrix.indptr = (
        np.asarray(data),
        np.asarray(indices, np.int32),
        np.asarray(indptr, np.int32),
    )
    matrix._shape = (len(indptr) - 1, width)
    return matrix


@pytest.mark.parametrize(
    "matrix, error, message",
    [
        (
            _raw_csr([1.0, 2.0, 3.0], [0, 1, 0], [0, 3, 1, 3], 2),
            ValueError,
            "row 1: the CSR matrix's indptr decreases",
        ),
        (
            _raw_csr([1.0], [5], [0, 1], 3),
            ValueError,
            "row 0: column index 5 is beyond the CSR matrix's 3 columns",
        ),
        (sp.csr_matrix(np.array([[1 + 2j, 0.0]])), TypeError, "complex values"),
    ],
    ids=["decreasing indptr", "index beyond the width", "complex"],
)
@pytest.mark.parametrize(
    "use",
    [pp.from_scipy, pp.expand_csr, lambda m: pp.expand_csr(m, bits=8)],
    ids=["from_scipy", "expand_csr", "hashed expand_csr"],
)
def test_an_invalid_scipy_csr_is_an_error_naming_its_fault(matrix, error, message, use) -> None:
    with pytest.raises(error, match=message):
        use(matrix)


def test_hashed_feature_names_refuses_what_hash_features_refuses() -> None:
    frame = pl.DataFrame({"d": [date(2020, 1, 1)], "x": [1.0]})
    for call in (
        lambda: frame.select(pp.hash_features("d")),
        lambda: pp.hashed_feature_names(frame, "d"),
    ):
        with pytest.raises(ComputeError, match='column "d" has dtype date'):
            call()
    assert pp.hashed_feature_names(frame, "x", bits=8)["name"].to_list() == ["x"]


def test_a_hashed_expansion_beyond_memory_is_a_memory_error_before_it_is_built() -> None:
    """200,000 rows of 40 nonzeros at degree 3 hash up to 200,000 x 12,341 entries (79 GB):
    refused before any is built, naming the size, where it used to abort the process (or be
    OOM-killed); in a subprocess, so that a regression fails instead of killing the tests."""
    code = textwrap.dedent(
        """
        import numpy as np, scipy.sparse as sp, polars as pl, polars_poly as pp
        rows, nnz = 200_000, 40
        rng = np.random.default_rng(0)
        indices = np.sort(rng.choice(1000, size=(rows, nnz), replace=True), axis=1).ravel()
        indptr = np.arange(0, rows * nnz + 1, nnz)
        X = sp.csr_matrix((np.ones(rows * nnz), indices, indptr), shape=(rows, 1000))
        frame = pl.DataFrame({"x": pp.from_scipy(X)})
        lengths = pp.expand("x", degree=3, bits=16).list.len().sum()
        expander = pp.PolynomialExpander(degree=3, bits=16)
        for name, call in [
            ("expand_csr", lambda: pp.expand_csr(X, degree=3, bits=16)),
            ("expand", lambda: frame.select(lengths)),
            ("PolynomialExpander", lambda: expander.fit_transform(X)),
        ]:
            try:
                call()
                print(name, "built")
            except (MemoryError, pl.exceptions.ComputeError) as error:
                named = "hashed expansion of 200000 rows" in str(error)
                print(name, type(error).__name__, named)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # An expression's error reaches Python as Polars' ComputeError, with the message.
    expected = [
        "expand_csr MemoryError True",
        "expand ComputeError True",
        "PolynomialExpander MemoryError True",
    ]
    assert done.stdout.split("\n")[:3] == expected


def test_ctrl_c_during_save_keeps_the_file_the_last_completed_save_wrote(tmp_path) -> None:
    """Two models saved in turn to one path until SIGINT lands during a save: the interrupted
    save raises KeyboardInterrupt and the file is still the last completed save's, with no
    temporary file left (the save used to complete, rename over the file, then raise)."""
    code = textwrap.dedent(
        f"""
        import os, sys, numpy as np, polars as pl, polars_poly as pp
        frame = pl.DataFrame({{"a": ["x", "y", "z"] * 100, "y": [1.0, 2.0, 3.0] * 100}})
        models = [
            pp.SGDRegressor(bits=24).fit(frame, "y"),
            pp.SGDRegressor(bits=24).fit(frame.with_columns(-pl.col("y")), "y"),
        ]
        path = {str(tmp_path / "m.model")!r}
        done = None
        print("ready", flush=True)
        try:
            for k in range(10_000):
                models[k % 2].save(path)
                done = k % 2
        except KeyboardInterrupt:
            loaded = pp.load_model(path).predict(frame)
            same = np.array_equal(loaded, models[done].predict(frame))
            left = [n for n in os.listdir(os.path.dirname(path)) if n != "m.model"]
            print("interrupted", done is not None, same, left, flush=True)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    time.sleep(2.0)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert out.strip() == "interrupted True True []", err[-2000:]


def test_n_features_of_a_negative_index_is_an_error_naming_its_row() -> None:
    entries = [[{"index": 2, "value": 1.0}], [{"index": -3, "value": 1.0}]]
    series = pl.Series(
        "x", entries, dtype=pl.List(pl.Struct({"index": pl.Int64, "value": pl.Float64}))
    )
    with pytest.raises(ValueError, match="column 'x', row 1: negative feature index -3"):
        pp.n_features(series)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda X, f, p: pp.expand_csr(X, bits="8"), TypeError, "bits must be an integer, got '8'"),
        (lambda X, f, p: pp.expand_csr(X, bits=8, seed=1.5), TypeError, "seed must be an integer"),
        (
            lambda X, f, p: f.select(pp.hash_features("a", bits="x")),
            TypeError,
            "bits must be an integer",
        ),
        (lambda X, f, p: pp.read_vw(p, bits="x"), TypeError, "bits must be an integer, got 'x'"),
        (lambda X, f, p: pp.scan_vw(p, batch_size="x"), TypeError, "batch_size must be an integer"),
        (
            lambda X, f, p: next(pp.iter_libsvm(p, batch_size=0)),
            ValueError,
            "batch_size must be at least 1",
        ),
        # A truth value is not taken from "yes" or None (they passed as True and False).
        (
            lambda X, f, p: pp.expand_csr(X, interaction_only="yes"),
            TypeError,
            "interaction_only must be True or False, got 'yes'",
        ),
        (
            lambda X, f, p: pp.PolynomialExpander(include_bias=None).fit(X),
            TypeError,
            "include_bias must be True or False, got None",
        ),
        (
            lambda X, f, p: f.select(pp.expand(pp.to_sparse("a"), n_features="1")),
            TypeError,
            "n_features must be an integer, got '1'",
        ),
        (
            lambda X, f, p: pp.output_width(-1, 2),
            ValueError,
            "n_features must be >= 0, got -1",
        ),
    ],
    ids=[
        "expand_csr bits",
        "expand_csr seed",
        "hash_features bits",
        "read_vw bits",
        "scan_vw batch_size",
        "batches of 0 rows",
        "expand_csr interaction_only",
        "PolynomialExpander include_bias",
        "expand n_features",
        "output_width negative",
    ],
)
def test_functions_name_a_wrongly_typed_option(tmp_path, call, error, message) -> None:
    path = tmp_path / "one.vw"
    path.write_text("1 |a x\n")
    X = sp.csr_matrix(np.eye(3))
    frame = pl.DataFrame({"a": [1.0]})
    with pytest.raises(error, match=message):
        call(X, frame, path)


def test_a_numeric_column_of_nulls_or_strings_at_scoring_is_named() -> None:
    """A fitted numeric column given as all nulls (dtype Null) is missing values, as nulls in a
    numeric column are; given as strings, the error names it (not the numeric columns'
    internal struct, ``features``), from a frame and from a scoring expression."""
    model = pp.SGDRegressor().fit(
        pl.DataFrame({"a": [1.0, 2.0], "b": [0.5, 1.0], "y": [0.0, 1.0]}), "y"
    )
    nulls = pl.DataFrame({"a": [None, None], "b": [1.0, 1.0]})
    missing = nulls.with_columns(pl.col("a").cast(pl.Float64))
    np.testing.assert_array_equal(model.predict(nulls), model.predict(missing))
    strings = pl.DataFrame({"a": ["x", None], "b": [1.0, 1.0]})
    with pytest.raises(TypeError, match='numeric feature column "a" has dtype str'):
        model.predict(strings)
    with pytest.raises(ComputeError, match='numeric feature column "a" has dtype null'):
        nulls.select(model.predict_expr("a", "b"))
