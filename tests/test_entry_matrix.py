"""The entry-point matrix (issue 56): every public entry point, given every kind of bad or
unusual input, through every engine, generated from tables (setups x entry points x inputs x
engines) so that a new entry point meets every input of its kind and a new input every entry
point that takes it. The kinds of input: frames, labels and sample weights, matrices, sparse
columns, the column of a function expression, files (for the readers and the model loaders),
and a small table of command-line runs.

A cell passes when the call either

- returns a result of the right length whose numbers are finite and, where the input holds the
  same numbers as the reference input in another form (a narrower integer dtype, float32, a
  decimal, a chunked or lazy frame, a gzip file, a CSR matrix), equal to the reference's; and
  where two entry points must agree (a scoring expression, eager, lazy or streaming, and its
  method; ``score`` and the metric of ``predict``; a scan, a batch iterator and a read; a loaded
  model and the saved one; a conversion and the same conversion done in Python), they agree; or
- raises an ordinary exception (``ValueError``, ``TypeError``, a Polars error, ...) with a clear
  message: not empty, not an internal error or a panic, not one of Python's or PyO3's own
  messages about its objects (``'NoneType' object is not iterable``, ``unhashable type``,
  ``'<' not supported between instances``, ``is not an instance of``, a bare ``KeyError``).

It never panics (a ``PanicException`` is a ``BaseException``: it fails the cell), never crashes
or hangs (the cells that could, a FIFO and the command line, run in a child process with a
timeout), never returns NaN silently and never differs between engines. The hand-written
expectations of particular cells (which error, naming which row) live in
``test_bad_input_matrix.py``, ``test_bad_options.py``, ``test_readers.py`` and
``test_reliability.py``; this matrix is their breadth. ``POLARS_POLY_MATRIX_SAMPLE=k`` runs every
k-th cell of each table (CI runs all).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import functools
import gzip
import inspect
import json
import math
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
import scipy.sparse as sp
from polars.exceptions import PolarsError
from sklearn.metrics import accuracy_score, r2_score

N = 40
RNG = np.random.default_rng(56)
NUM = RNG.standard_normal(N)
NUM2 = RNG.standard_normal(N)
CAT = np.array(["a", "b", "c", "d"])[RNG.integers(0, 4, N)]
Y_REAL = NUM - 0.5 * NUM2 + RNG.normal(0, 0.1, N)
Y_CLASS = (NUM + NUM2 > 0).astype(np.int64)

# ------------------------------------------------------------------ outcome of one cell
ORDINARY = (ValueError, TypeError, OverflowError, MemoryError, OSError, PolarsError)
# Python's words about its own objects: a message only a bug lets through.
# PyO3's and numpy's raw conversion messages, and a call the library itself got wrong (an
# argument missing or too many), are as unclear.
UNCLEAR = re.compile(
    r"object is not (iterable|subscriptable|callable)|unhashable type|has no attribute|"
    r"index out of range|cannot be interpreted as an integer|NulError|unwrap\(\)|"
    r"not supported between instances|is not an instance of|cannot be converted to '|"
    r"can't convert|int too big to convert|too large to convert|"
    r"required positional argument|positional arguments? but \d+ (was|were) given|"
    r"unexpected keyword argument|cannot convert float NaN to integer|"
    r"internal error|panicked|^'[^']*'$|^$"
)


def _check_error(error: BaseException) -> None:
    message = str(error)
    assert isinstance(error, ORDINARY), f"{type(error).__name__}: {message}"
    assert not isinstance(error, KeyError | IndexError | AttributeError), message
    assert not UNCLEAR.search(message), f"{type(error).__name__}: {message}"


def _run(call: Callable[[], Any]) -> Any:
    """The call's result, or the ordinary exception it raised (checked to be clear)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return call()
        except pytest.skip.Exception:
            raise
        except BaseException as error:  # noqa: BLE001 - a panic is a BaseException
            _check_error(error)
            return error


def _numbers(result: Any) -> np.ndarray:
    """A prediction, a score column or a frame of them as a float array (labels: their codes)."""
    if isinstance(result, pl.DataFrame):
        result = result.to_series()
    values = np.atleast_1d(
        np.asarray(result.to_numpy() if isinstance(result, pl.Series) else result)
    )
    if values.dtype.kind in "biuf":
        return values.astype(np.float64)
    return np.unique(values.astype(str), return_inverse=True)[1].astype(np.float64)


def _check_result(result: Any, n_rows: int, reference: np.ndarray | None) -> np.ndarray:
    values = _numbers(result)
    assert len(values) == n_rows, f"{len(values)} results for {n_rows} rows"
    assert np.isfinite(values).all(), "a non-finite result"
    if reference is not None:
        np.testing.assert_allclose(values, reference, rtol=1e-4, atol=1e-5)
    return values


# ----------------------------------------------------------------------- the setups
# name -> (estimator factory, the columns its base frame has, the target). The setups keep the
# rows' order (shuffle=False): a LazyFrame is learned in order, and is compared with the base.
SETUPS: dict[str, tuple[Callable[[], Any], list[str], np.ndarray]] = {
    "SGDRegressor": (
        lambda: pp.SGDRegressor(shuffle=False, progress=False),
        ["num", "num2", "cat"],
        Y_REAL,
    ),
    "SGDClassifier": (
        lambda: pp.SGDClassifier(shuffle=False, progress=False),
        ["num", "num2", "cat"],
        Y_CLASS,
    ),
    "SGDClassifier quadratic": (
        lambda: pp.SGDClassifier(shuffle=False, expansion="quadratic", progress=False),
        ["num", "num2", "cat"],
        Y_CLASS,
    ),
    "SGDClassifier apple": (
        lambda: pp.SGDClassifier(shuffle=False, expansion="apple", progress=False),
        ["num", "num2", "cat"],
        Y_CLASS,
    ),
    "SGDClassifier field apple": (
        lambda: pp.SGDClassifier(shuffle=False, expansion=pp.FieldApple(), progress=False),
        ["num", "num2", "cat"],
        Y_CLASS,
    ),
    "SGDClassifier ffm": (
        lambda: pp.SGDClassifier(shuffle=False, ffm=pp.FFM(k=2), progress=False),
        ["num", "num2", "cat"],
        Y_CLASS,
    ),
    "DoSClassifier": (lambda: pp.DoSClassifier(rank=2, shuffle=False), ["num", "num2"], Y_CLASS),
    "PassiveAggressiveClassifier": (
        lambda: pp.PassiveAggressiveClassifier(shuffle=False),
        ["num", "num2"],
        Y_CLASS,
    ),
}


def base_frame(columns: list[str], y: np.ndarray) -> pl.DataFrame:
    data = {"num": NUM, "num2": NUM2, "cat": CAT}
    return pl.DataFrame({c: data[c] for c in columns}).with_columns(pl.Series("y", y))


def _at(column: str, row: int, value: Any, dtype: Any = None) -> Callable[[pl.DataFrame], Any]:
    """The frame with ``column``'s value at ``row`` replaced."""

    def edit(frame: pl.DataFrame) -> pl.DataFrame:
        values = frame[column].to_list()
        values[row] = value
        series = pl.Series(column, values, dtype=dtype or frame.schema[column], strict=False)
        return frame.with_columns(series)

    return edit


def _cast(column: str, dtype: Any) -> Callable[[pl.DataFrame], Any]:
    return lambda frame: frame.with_columns(pl.col(column).cast(dtype, strict=False))


def _replace(column: str, series: Callable[[pl.DataFrame], pl.Series]) -> Callable:
    return lambda frame: frame.with_columns(series(frame).alias(column))


def _as_float(column: str, dtype: Any) -> Callable[[pl.DataFrame], Any]:
    """The frame whose ``column`` holds the numbers ``_cast(column, dtype)`` leaves, as f64:
    what a column of ``dtype`` must be read as."""
    return lambda frame: frame.with_columns(
        pl.col(column).cast(dtype, strict=False).cast(pl.Float64)
    )


def _chunked(frame: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([frame[:13], frame[13:29], frame[29:]], rechunk=False)


# ----------------------------------------------------------------------- the frames
# name -> (what the base frame becomes, the frame whose results a result on it, if any, must
# equal: SAME for the base frame, OTHER for none)
SAME: Callable[[pl.DataFrame], Any] = lambda frame: frame  # noqa: E731
OTHER = None
FRAMES: dict[str, tuple[Callable[[pl.DataFrame], Any], Callable | None]] = {
    "base": (lambda f: f, SAME),
    # Values of the numeric column.
    "NaN": (_at("num", 7, math.nan), OTHER),
    "inf": (_at("num", 7, math.inf), OTHER),
    "-inf": (_at("num", 7, -math.inf), OTHER),
    "1e39": (_at("num", 7, 1e39), OTHER),
    "1e300": (_at("num", 7, 1e300), OTHER),
    "2e19": (_at("num", 7, 2e19), OTHER),
    "1e-320": (_at("num", 7, 1e-320), OTHER),
    "-0.0": (_at("num", 7, -0.0), OTHER),
    "null": (_at("num", 7, None), OTHER),
    "all null": (_replace("num", lambda f: pl.Series([None] * len(f), dtype=pl.Float64)), OTHER),
    "all zero": (_replace("num", lambda f: pl.Series([0.0] * len(f))), OTHER),
    # The numeric column in other dtypes.
    "Float32": (_cast("num", pl.Float32), _as_float("num", pl.Float32)),
    "Int8": (_cast("num", pl.Int8), _as_float("num", pl.Int8)),
    "Int64": (_cast("num", pl.Int64), _as_float("num", pl.Int64)),
    "UInt8": (_cast("num", pl.UInt8), _as_float("num", pl.UInt8)),
    "UInt64": (_cast("num", pl.UInt64), _as_float("num", pl.UInt64)),
    "Int128": (_cast("num", pl.Int128), _as_float("num", pl.Int128)),
    "Decimal": (_cast("num", pl.Decimal(20, 17)), SAME),
    "Boolean": (_cast("num", pl.Boolean), _as_float("num", pl.Boolean)),
    "Null": (_replace("num", lambda f: pl.Series([None] * len(f), dtype=pl.Null)), OTHER),
    "String of numbers": (_cast("num", pl.String), OTHER),
    "Date": (_replace("num", lambda f: pl.Series([dt.date(2020, 1, 1)] * len(f))), OTHER),
    "Datetime": (_replace("num", lambda f: pl.Series([dt.datetime(2020, 1, 1)] * len(f))), OTHER),
    "Duration": (_replace("num", lambda f: pl.Series([dt.timedelta(1)] * len(f))), OTHER),
    "Time": (_replace("num", lambda f: pl.Series([dt.time(1)] * len(f))), OTHER),
    "Binary": (_replace("num", lambda f: pl.Series([b"x"] * len(f))), OTHER),
    "Struct": (_replace("num", lambda f: f.select(pl.struct(pl.col("num"))).to_series()), OTHER),
    "List(Float64)": (_replace("num", lambda f: f["num"].reshape((-1, 1)).arr.to_list()), OTHER),
    "Array(Float64, 1)": (_replace("num", lambda f: f["num"].reshape((-1, 1))), OTHER),
    "Object": (
        _replace("num", lambda f: pl.Series([object()] * len(f), dtype=pl.Object)),
        OTHER,
    ),
    "Decimal huge": (
        _replace("num", lambda f: pl.Series([Decimal("1e30")] * len(f), dtype=pl.Decimal(38, 0))),
        OTHER,
    ),
    # The string column.
    "cat Categorical": (_cast("cat", pl.Categorical), SAME),
    "cat Enum": (_cast("cat", pl.Enum(["a", "b", "c", "d"])), SAME),
    "cat null": (_at("cat", 3, None), OTHER),
    "cat all null": (_replace("cat", lambda f: pl.Series([None] * len(f), dtype=pl.String)), OTHER),
    "cat empty string": (_at("cat", 3, ""), OTHER),
    "cat NUL inside": (_at("cat", 3, "a\x00b"), OTHER),
    "cat long": (_at("cat", 3, "x" * 100_000), OTHER),
    "cat unicode": (_at("cat", 3, "é字🙂"), OTHER),
    "cat List(String)": (_replace("cat", lambda f: f["cat"].str.split("")), OTHER),
    "cat List(String) with null": (
        _replace("cat", lambda f: pl.Series([["a", None]] * len(f), dtype=pl.List(pl.String))),
        OTHER,
    ),
    "cat Int64": (_replace("cat", lambda f: pl.Series(range(len(f)))), OTHER),
    # Names.
    "empty name": (lambda f: f.rename({"num": ""}), OTHER),
    "NUL in a name": (lambda f: f.rename({"num": "n\x00m"}), OTHER),
    "unicode name": (lambda f: f.rename({"num": "número"}), OTHER),
    "renamed column": (lambda f: f.rename({"num": "other"}), OTHER),
    "column named features": (lambda f: f.rename({"num": "features"}), OTHER),
    # Shapes.
    "no rows": (lambda f: f.clear(), OTHER),
    "one row": (lambda f: f.head(1), OTHER),
    "only the target": (lambda f: f.select("y"), OTHER),
    "target first": (lambda f: f.select("y", pl.exclude("y")), SAME),
    # A position-based learner (DoS, PA) fits another (equally good) model on columns in
    # another order; predict reads the fitted ones by name.
    "features reversed": (lambda f: f.select(list(reversed(f.columns))), OTHER),
    "extra column": (lambda f: f.with_columns(extra=pl.lit(1.0)), OTHER),
    "duplicated rows": (lambda f: pl.concat([f, f]), OTHER),
    "chunked": (_chunked, SAME),
    "sliced": (lambda f: pl.concat([f[:5], f])[5:], SAME),
    "lazy": (lambda f: f.lazy(), SAME),
    "not a frame": (lambda f: "not a frame", OTHER),
}


# ---------------------------------------------------------------------- entry points
@functools.cache
def _model(setup: str) -> Any:
    """The setup's estimator fitted on its base frame (fitted once; the entry points that
    change a model change a copy)."""
    make, columns, y = SETUPS[setup]
    return make().fit(base_frame(columns, y), "y")


def _features(frame: Any) -> Any:
    """The frame without its target (when it is a frame that has one)."""
    if isinstance(frame, pl.LazyFrame):
        return frame.drop("y") if "y" in frame.collect_schema() else frame
    if isinstance(frame, pl.DataFrame) and "y" in frame.columns:
        return frame.drop("y")
    return frame


def _target(setup: str, frame: Any) -> Any:
    """The frame's target column as an array (the setup's labels when it has none)."""
    if isinstance(frame, pl.LazyFrame) and "y" in frame.collect_schema():
        return frame.select("y").collect().to_series().to_numpy()
    if isinstance(frame, pl.DataFrame) and "y" in frame.columns:
        return frame["y"].to_numpy()
    return SETUPS[setup][2]


def _position_based(model: Any) -> bool:
    return isinstance(model, pp.DoSClassifier | pp.PassiveAggressiveClassifier)


def _expression(model: Any, method: str) -> pl.Expr:
    """The model's scoring expression over the columns it was fitted on: the online learners
    read them by name; DoS and PA score one sparse column (built from them)."""
    if _position_based(model):
        return getattr(model, method)(pp.to_sparse(*model.feature_columns_))
    return getattr(model, method)()


def _namespace(model: Any, method: str) -> pl.Expr:
    """The same through the ``.poly`` namespace (``pl.col(first).poly.predict(model, *rest)``)."""
    if _position_based(model):
        return getattr(pp.to_sparse(*model.feature_columns_).poly, method)(model)
    first, *rest = model.feature_columns_
    return getattr(pl.col(first).poly, method)(model, *rest)


def _collect(frame: Any, expr: pl.Expr, engine: str) -> pl.DataFrame:
    """``frame.select(expr)`` on an engine: ``eager`` (a DataFrame), ``lazy`` or ``streaming``."""
    if engine == "eager":
        data = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
        return data.select(expr)
    lazy = frame if isinstance(frame, pl.LazyFrame) else frame.lazy()
    return lazy.select(expr).collect(engine="streaming" if engine == "streaming" else "auto")


def _score(setup: str, frame: Any) -> float:
    return float(_model(setup).score(_features(frame), _target(setup, frame)))


@dataclasses.dataclass(frozen=True)
class Entry:
    """An entry point taking a frame: ``call(setup, frame)`` gives its result (a fit: the
    refitted model's predictions); ``method`` is the estimator method it needs (a setup
    without it has no cell); ``like`` names the eager entry whose result on the same frame
    this one's must equal; ``per_row``: a result per row (else one number)."""

    call: Callable[[str, Any], Any]
    method: str
    like: str | None = None
    per_row: bool = True


ENGINES = ("eager", "lazy", "streaming")


def _by_expression(name: str, method: str, build: Callable[[Any, str], pl.Expr]) -> dict:
    """A scoring expression's entry on each engine: it gives what its method gives."""
    return {
        f"{name} {engine}": Entry(
            lambda setup, frame, engine=engine: _collect(
                _features(frame), build(_model(setup), method), engine
            ),
            method,
            like=method.removesuffix("_expr"),
        )
        for engine in ENGINES
    }


@functools.cache
def _dask_client() -> Any:
    """A client of a one-worker cluster of its own process (started at the first Dask cell,
    closed with the module): the estimator and the shards' models cross a process boundary."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    return distributed.Client(cluster)


@pytest.fixture(scope="module", autouse=True)
def _close_dask() -> Any:
    yield
    if _dask_client.cache_info().currsize:
        client = _dask_client()
        cluster = client.cluster
        client.close()
        cluster.close()


def _dask_fit(setup: str, frame: Any) -> Any:
    """``polars_poly.dask.fit`` on the frame written as two parquet shards (the form a cluster
    reads; a frame parquet cannot hold fails there), then the fitted model's predictions. What
    is not a frame is given as the data itself."""
    ppd = pytest.importorskip("polars_poly.dask")
    with tempfile.TemporaryDirectory(prefix="pp-matrix-dask-") as folder:
        data: Any = frame
        if isinstance(frame, pl.LazyFrame | pl.DataFrame):
            whole = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
            half = len(whole) // 2
            data = [f"{folder}/part-{k}.parquet" for k in range(2)]
            whole[:half].write_parquet(data[0])
            whole[half:].write_parquet(data[1])
        model = ppd.fit(SETUPS[setup][0](), data, "y", client=_dask_client(), progress=False)
    return model.predict(_features(frame))


ENTRIES: dict[str, Entry] = {
    "fit": Entry(
        lambda setup, frame: SETUPS[setup][0]().fit(frame, "y").predict(_features(frame)), "fit"
    ),
    "dask fit": Entry(_dask_fit, "fit"),
    "partial_fit": Entry(
        lambda setup, frame: (
            copy.deepcopy(_model(setup)).partial_fit(frame, "y").predict(_features(frame))
        ),
        "partial_fit",
    ),
    "predict": Entry(lambda setup, frame: _model(setup).predict(_features(frame)), "predict"),
    "decision_function": Entry(
        lambda setup, frame: _model(setup).decision_function(_features(frame)),
        "decision_function",
    ),
    "predict_proba": Entry(
        lambda setup, frame: _model(setup).predict_proba(_features(frame)), "predict_proba"
    ),
    "score": Entry(_score, "score", per_row=False),
    **_by_expression("predict_expr", "predict_expr", _expression),
    **_by_expression("decision_function_expr", "decision_function_expr", _expression),
    **_by_expression("predict_proba_expr", "predict_proba_expr", _expression),
    # The namespace: pl.col(...).poly.predict(model) is the model's predict_expr.
    **_by_expression(".poly.predict", "predict_expr", lambda m, _: _namespace(m, "predict")),
    **_by_expression(
        ".poly.predict_proba", "predict_proba_expr", lambda m, _: _namespace(m, "predict_proba")
    ),
}


def _applies(setup: str, entry: str, frame_name: str) -> bool:
    if not hasattr(SETUPS[setup][0](), ENTRIES[entry].method):
        return False
    if frame_name.startswith("cat ") and "cat" not in SETUPS[setup][1]:
        return False  # the setups without a string column
    # An expression scores a frame: "not a frame" is an input of the methods only.
    return not (frame_name == "not a frame" and ENTRIES[entry].like is not None)


FRAME_CELLS = [(s, e, f) for s in SETUPS for e in ENTRIES for f in FRAMES if _applies(s, e, f)]
SAMPLE = int(os.environ.get("POLARS_POLY_MATRIX_SAMPLE", "1"))
# The cells that find a bug not yet fixed, each with its reproducer: expected to fail (strict: a
# fix makes them pass, and the mark must then go).
BUGS: dict[tuple[str, ...], str] = {}


def _sampled(cells: list) -> list:
    """Every SAMPLE-th cell, those in BUGS marked as expected failures."""
    return [
        pytest.param(*cell, marks=pytest.mark.xfail(strict=True, reason=BUGS[cell]))
        if cell in BUGS
        else cell
        for cell in cells[::SAMPLE]
    ]


_REFERENCES: dict[tuple[str, str, int], np.ndarray] = {}


def _reference(setup: str, entry: str, equivalent: Callable) -> np.ndarray:
    """The entry's result on the frame a cell's input must be read as (computed once)."""
    key = (setup, entry, id(equivalent))
    if key not in _REFERENCES:
        make, columns, y = SETUPS[setup]
        result = ENTRIES[entry].call(setup, equivalent(base_frame(columns, y)))
        _REFERENCES[key] = _numbers(result)
    return _REFERENCES[key]


def _check_alike(values: np.ndarray, other: np.ndarray) -> None:
    """An expression's values against its method's (a binary ``predict_proba``: its second
    column, the probability ``predict_proba_expr`` gives)."""
    if other.ndim == 2 and values.ndim == 1:
        other = other[:, -1]
    np.testing.assert_allclose(values, other, rtol=1e-5, atol=1e-6)


def _check_score(setup: str, frame: Any, value: float) -> None:
    """``score`` is the metric of ``predict`` (accuracy; R², NaN on fewer than 2 rows)."""
    n_rows = _n_rows(frame)
    assert math.isfinite(value) or (n_rows < 2 and math.isnan(value)), value
    predicted = _run(lambda: _model(setup).predict(_features(frame)))
    if isinstance(predicted, BaseException) or not n_rows:
        return
    truth = _target(setup, frame)
    metric = r2_score if setup == "SGDRegressor" else accuracy_score
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = metric(truth, predicted)
    np.testing.assert_allclose(value, expected, rtol=1e-9, atol=1e-12)


def _n_rows(frame: Any) -> int:
    if isinstance(frame, pl.LazyFrame):
        return frame.select(pl.len()).collect().item()
    return len(frame) if isinstance(frame, pl.DataFrame) else 0


@pytest.mark.parametrize(("setup", "entry", "frame_name"), _sampled(FRAME_CELLS))
def test_entry_on_frame(setup: str, entry: str, frame_name: str) -> None:
    make, columns, y = SETUPS[setup]
    transform, same = FRAMES[frame_name]
    frame = transform(base_frame(columns, y))
    point = ENTRIES[entry]
    result = _run(lambda: point.call(setup, frame))
    if isinstance(result, BaseException):
        # A string is no frame: no column of it is missing (the online learners read it as
        # a VW file's path; a missing file is named as one).
        not_found = isinstance(result, pl.exceptions.ColumnNotFoundError)
        assert not (frame_name == "not a frame" and not_found), str(result)
        return
    reference = None if same is None else _reference(setup, entry, same)
    if not point.per_row:
        _check_score(setup, frame, result)
        if reference is not None:
            np.testing.assert_allclose(result, reference[0], rtol=1e-4, atol=1e-5)
        return
    values = _check_result(result, _n_rows(frame), reference)
    if point.like is not None:
        # The expression scores what its method scores, on every engine.
        other = _run(lambda: ENTRIES[point.like].call(setup, frame))
        if not isinstance(other, BaseException):
            _check_alike(values, _numbers_2d(other))


def _numbers_2d(result: Any) -> np.ndarray:
    """A method's result as floats, keeping its columns (``predict_proba``)."""
    values = np.asarray(result)
    return values.astype(np.float64) if values.ndim == 2 else _numbers(result)


# ----------------------------------------------------------------------- labels, weights
LABELS: dict[str, Callable[[np.ndarray], Any]] = {
    "NaN": lambda y: np.where(np.arange(N) == 7, np.nan, y),
    "inf": lambda y: np.where(np.arange(N) == 7, np.inf, y),
    "1e300": lambda y: np.where(np.arange(N) == 7, 1e300, y),
    "None inside": lambda y: [None if k == 7 else v for k, v in enumerate(y.tolist())],
    "strings": lambda y: y.astype(str),
    "mixed types": lambda y: [str(v) if k % 2 else v for k, v in enumerate(y.tolist())],
    "booleans": lambda y: y > np.median(y),
    "one class": lambda y: np.ones(N),
    "three classes": lambda y: np.arange(N) % 3,
    "too short": lambda y: y[:-3],
    "too long": lambda y: np.r_[y, y[:3]],
    "2-D": lambda y: np.c_[y, y],
    "column vector": lambda y: y.reshape(-1, 1),
    "empty": lambda y: y[:0],
    "complex": lambda y: y + 1j,
    "None": lambda y: None,
    "a Series": lambda y: pl.Series("target", y),
    "a Series with null": lambda y: pl.Series("target", [None, *y.tolist()[1:]]),
    "Categorical Series": lambda y: pl.Series(y.astype(str)).cast(pl.Categorical),
    "list": lambda y: y.tolist(),
    "object array": lambda y: y.astype(object),
    "a missing column name": lambda y: "no such column",
    "float16": lambda y: y.astype(np.float16),
}
WEIGHTS: dict[str, Callable[[], Any]] = {
    "NaN": lambda: np.where(np.arange(N) == 5, np.nan, 1.0),
    "negative": lambda: np.where(np.arange(N) == 5, -1.0, 1.0),
    "all zero": lambda: np.zeros(N),
    "inf": lambda: np.where(np.arange(N) == 5, np.inf, 1.0),
    "1e300": lambda: np.where(np.arange(N) == 5, 1e300, 1.0),
    "too short": lambda: np.ones(N - 1),
    "strings": lambda: np.array(["1"] * N),
    "2-D": lambda: np.ones((N, 2)),
    "a column name": lambda: "num2",
}
# The entry points taking labels and weights; a fit's result is its model's predictions.
LABEL_ENTRIES = ("fit", "partial_fit", "score")
LABEL_CELLS = [(s, e, k) for s in SETUPS for e in LABEL_ENTRIES for k in LABELS]
WEIGHT_CELLS = [(s, e, k) for s in SETUPS for e in LABEL_ENTRIES for k in WEIGHTS]


def _training(setup: str, entry: str) -> tuple[Any, pl.DataFrame]:
    make, columns, y = SETUPS[setup]
    frame = base_frame(columns, y).drop("y")
    model = {"fit": make, "partial_fit": lambda: copy.deepcopy(_model(setup))}.get(
        entry, lambda: _model(setup)
    )()
    return model, frame


def _check_trained(setup: str, entry: str, result: Any, frame: pl.DataFrame, y: Any) -> None:
    """A fit's model predicts finite numbers; a score is the metric of ``predict`` (NaN only
    where scikit-learn's metric is NaN: labels of 1e300 overflow R²)."""
    if entry != "score":
        _check_result(result.predict(frame), N, None)
        return
    metric = r2_score if setup == "SGDRegressor" else accuracy_score
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = metric(np.asarray(y), _model(setup).predict(frame))
    np.testing.assert_allclose(result, expected, rtol=1e-9, atol=1e-12)
    assert math.isfinite(result) or not math.isfinite(expected), result


@pytest.mark.parametrize(("setup", "entry", "labels"), _sampled(LABEL_CELLS))
def test_entry_on_labels(setup: str, entry: str, labels: str) -> None:
    model, frame = _training(setup, entry)
    y = LABELS[labels](SETUPS[setup][2])
    result = _run(lambda: getattr(model, entry)(frame, y))
    if not isinstance(result, BaseException):
        _check_trained(setup, entry, result, frame, y)


@pytest.mark.parametrize(("setup", "entry", "weights"), _sampled(WEIGHT_CELLS))
def test_entry_on_sample_weights(setup: str, entry: str, weights: str) -> None:
    model, frame = _training(setup, entry)
    y = SETUPS[setup][2]
    if "sample_weight" not in inspect.signature(getattr(model, entry)).parameters:
        pytest.skip(f"{setup}.{entry} takes no sample_weight")
    weight = WEIGHTS[weights]()
    result = _run(lambda: getattr(model, entry)(frame, y, sample_weight=weight))
    if not isinstance(result, BaseException):
        if entry == "score":
            assert math.isfinite(result), result
        else:
            _check_trained(setup, entry, result, frame, y)


# ------------------------------------------------------------- matrices and functions
DENSE = np.c_[NUM, NUM2]
MATRICES: dict[str, Callable[[], Any]] = {
    "dense": lambda: DENSE.copy(),
    "float32": lambda: DENSE.astype(np.float32),
    "int8": lambda: (DENSE * 10).astype(np.int8),
    "Fortran order": lambda: np.asfortranarray(DENSE),
    "strided": lambda: np.c_[NUM, NUM, NUM2, NUM2][:, ::2],
    "NaN": lambda: np.c_[np.where(np.arange(N) == 4, np.nan, NUM), NUM2],
    "1e39": lambda: np.c_[np.where(np.arange(N) == 4, 1e39, NUM), NUM2],
    "CSR": lambda: sp.csr_matrix(DENSE),
    "CSC": lambda: sp.csc_matrix(DENSE),
    "COO array": lambda: sp.coo_array(DENSE),
    "CSR int64 indices": lambda: _csr_int64(DENSE),
    "CSR unsorted": lambda: _csr_unsorted(DENSE),
    "CSR decreasing indptr": lambda: _csr_broken(),
    "CSR complex": lambda: sp.csr_matrix(DENSE + 1j),
    "one column": lambda: NUM.reshape(-1, 1),
    "three columns": lambda: np.c_[NUM, NUM2, NUM],
    "list of lists": lambda: DENSE.tolist(),
    "1-D": lambda: NUM,
    "3-D": lambda: DENSE.reshape(N, 2, 1),
    "strings": lambda: DENSE.astype(str),
    "object with None": lambda: np.array([[None, 1.0]] * N, dtype=object),
    "empty": lambda: np.zeros((0, 2)),
    "sparse Series": lambda: pp.from_numpy(DENSE),
}


def _csr_int64(dense: np.ndarray) -> sp.csr_matrix:
    matrix = sp.csr_matrix(dense)
    matrix.indices = matrix.indices.astype(np.int64)
    matrix.indptr = matrix.indptr.astype(np.int64)
    return matrix


def _csr_unsorted(dense: np.ndarray) -> sp.csr_matrix:
    matrix = sp.csr_matrix(dense)
    for row in range(matrix.shape[0]):
        start, end = matrix.indptr[row], matrix.indptr[row + 1]
        matrix.indices[start:end] = matrix.indices[start:end][::-1]
        matrix.data[start:end] = matrix.data[start:end][::-1]
    matrix.has_sorted_indices = False
    return matrix


def _csr_broken() -> sp.csr_matrix:
    matrix = sp.csr_matrix(DENSE)
    matrix.indptr = matrix.indptr.copy()
    matrix.indptr[3] = matrix.indptr[1]  # decreasing: 3 then 1
    return matrix


MATRIX_SAME = {"dense", "float32", "Fortran order", "strided", "CSR", "CSC", "COO array"}
MATRIX_SAME |= {"CSR int64 indices", "CSR unsorted", "list of lists", "sparse Series"}


@functools.cache
def _matrix_model(setup: str) -> Any:
    return SETUPS[setup][0]().fit(DENSE, SETUPS[setup][2])


# name -> (call(setup, X), the estimator method it needs)
MATRIX_ENTRIES: dict[str, tuple[Callable[[str, Any], Any], str]] = {
    "fit": (lambda setup, X: SETUPS[setup][0]().fit(X, SETUPS[setup][2]).predict(X), "fit"),
    "predict": (lambda setup, X: _matrix_model(setup).predict(X), "predict"),
    "decision_function": (
        lambda setup, X: _matrix_model(setup).decision_function(X),
        "decision_function",
    ),
    "predict_proba": (lambda setup, X: _matrix_model(setup).predict_proba(X), "predict_proba"),
    "score": (lambda setup, X: _matrix_model(setup).score(X, SETUPS[setup][2]), "score"),
}
MATRIX_CELLS = [
    (s, e, m)
    for s in SETUPS
    for e, (_, method) in MATRIX_ENTRIES.items()
    if hasattr(SETUPS[s][0](), method)
    for m in MATRICES
]


@functools.cache
def _matrix_reference(setup: str, entry: str) -> np.ndarray:
    return _numbers_2d(MATRIX_ENTRIES[entry][0](setup, DENSE))


@pytest.mark.parametrize(("setup", "entry", "matrix"), _sampled(MATRIX_CELLS))
def test_entry_on_matrix(setup: str, entry: str, matrix: str) -> None:
    X = MATRICES[matrix]()
    result = _run(lambda: MATRIX_ENTRIES[entry][0](setup, X))
    if isinstance(result, BaseException):
        return
    values = _numbers_2d(result)
    assert np.isfinite(values).all(), "a non-finite result"
    if matrix in MATRIX_SAME:
        tolerance = 1e-3 if matrix == "float32" else 1e-6
        reference = _matrix_reference(setup, entry)
        np.testing.assert_allclose(values, reference, rtol=tolerance, atol=tolerance)


def _dense(result: Any) -> np.ndarray:
    """A matrix function's result (a scipy matrix, a sparse Series) as a dense array."""
    if sp.issparse(result):
        return np.asarray(result.toarray())
    if isinstance(result, pl.Series):
        return pp.to_numpy(result, pp.n_features(result))
    return np.asarray(result, dtype=np.float64)


@functools.cache
def _expander() -> pp.PolynomialExpander:
    return pp.PolynomialExpander(2).fit(DENSE)


# The functions of a matrix: name -> call(X)
MATRIX_FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "PolynomialExpander.fit_transform": lambda X: pp.PolynomialExpander(2).fit_transform(X),
    "PolynomialExpander.fit_transform hashed": lambda X: pp.PolynomialExpander(
        3, bits=8
    ).fit_transform(X),
    "PolynomialExpander.transform": lambda X: _expander().transform(X),
    "expand_csr": lambda X: pp.expand_csr(X, 2),
    "expand_csr hashed": lambda X: pp.expand_csr(X, 2, bits=8),
    "from_numpy": lambda X: pp.from_numpy(X),
    "from_scipy": lambda X: pp.to_scipy(pp.from_scipy(X), X.shape[1]),
}
MATRIX_FUNCTION_CELLS = [(f, m) for f in MATRIX_FUNCTIONS for m in MATRICES]


@pytest.mark.parametrize(("function", "matrix"), _sampled(MATRIX_FUNCTION_CELLS))
def test_function_on_matrix(function: str, matrix: str) -> None:
    X = MATRICES[matrix]()
    result = _run(lambda: MATRIX_FUNCTIONS[function](X))
    if isinstance(result, BaseException):
        return
    values = _dense(result)
    assert np.isfinite(values).all(), "a non-finite result"
    if matrix in MATRIX_SAME:
        tolerance = 1e-3 if matrix == "float32" else 1e-9
        if matrix == "sparse Series" and function == "from_numpy":
            return  # a Series is no dense array (refused or read as one: either is fine)
        dense = sp.csr_matrix(DENSE) if function == "from_scipy" else DENSE
        reference = _dense(MATRIX_FUNCTIONS[function](dense))
        np.testing.assert_allclose(values, reference, rtol=tolerance, atol=tolerance)


# ------------------------------------------------------------------------- sparse columns
def _sparse_base() -> pl.Series:
    """Three features: two real and one 0/1 (so that rows have 2 or 3 entries)."""
    return pp.from_numpy(np.c_[NUM, NUM2, (NUM > 0).astype(np.float64)], name="s")


SPARSE_ROW = 3


def _sparse_at(row_value: Any, dtype: Any = None) -> Callable[[], pl.Series]:
    """The base column with row ``SPARSE_ROW`` replaced (in ``dtype``, default the base's)."""

    def make() -> pl.Series:
        rows = _sparse_base().to_list()
        rows[SPARSE_ROW] = row_value
        return pl.Series("s", rows, dtype=dtype or pp.sparse_dtype())

    return make


def _sparse_cast(index: Any, value: Any) -> Callable[[], pl.Series]:
    dtype = pl.List(pl.Struct({"index": index, "value": value}))
    return lambda: _sparse_base().cast(dtype)


def _sparse_halves() -> pl.Series:
    """Each entry written twice, as two halves (the same numbers: a row is its entries' sum)."""
    rows = [
        [{"index": e["index"], "value": e["value"] / 2} for e in row for _ in range(2)]
        for row in _sparse_base().to_list()
    ]
    return pl.Series("s", rows, dtype=pp.sparse_dtype())


SIGNED = pl.List(pl.Struct({"index": pl.Int64, "value": pl.Float64}))
WIDE = pp.sparse_dtype(pl.UInt64)
# name -> (the column, whether it holds the base column's numbers: True, "float32" or False)
SPARSE: dict[str, tuple[Callable[[], Any], bool | str]] = {
    "base": (_sparse_base, True),
    "UInt64 indices": (_sparse_cast(pl.UInt64, pl.Float64), True),
    "Int64 indices": (_sparse_cast(pl.Int64, pl.Float64), True),
    "Int32 indices": (_sparse_cast(pl.Int32, pl.Float64), True),
    "Float32 values": (_sparse_cast(pl.UInt32, pl.Float32), "float32"),
    "unsorted rows": (lambda: _sparse_base().list.reverse(), True),
    "entries in halves": (_sparse_halves, True),
    "chunked": (lambda: pl.concat([_sparse_base()[:13], _sparse_base()[13:]], rechunk=False), True),
    "sliced": (lambda: pl.concat([_sparse_base()[:5], _sparse_base()])[5:], True),
    "null row": (_sparse_at(None), False),
    "empty row": (_sparse_at([]), False),
    "null entry": (_sparse_at([None, {"index": 0, "value": 1.0}]), False),
    "null index": (_sparse_at([{"index": None, "value": 1.0}]), False),
    "null value": (_sparse_at([{"index": 0, "value": None}]), False),
    "NaN value": (_sparse_at([{"index": 0, "value": math.nan}]), False),
    "inf value": (_sparse_at([{"index": 0, "value": math.inf}]), False),
    "1e39 value": (_sparse_at([{"index": 0, "value": 1e39}]), False),
    "1e300 value": (_sparse_at([{"index": 0, "value": 1e300}]), False),
    "1e-320 value": (_sparse_at([{"index": 0, "value": 1e-320}]), False),
    "negative index": (_sparse_at([{"index": -3, "value": 1.0}], SIGNED), False),
    "index 3 (beyond the width)": (_sparse_at([{"index": 3, "value": 1.0}]), False),
    "index 2**32-1": (_sparse_at([{"index": 2**32 - 1, "value": 1.0}]), False),
    "index 2**63": (_sparse_at([{"index": 2**63, "value": 1.0}], WIDE), False),
    "all rows empty": (lambda: pl.Series("s", [[]] * N, dtype=pp.sparse_dtype()), False),
    "no rows": (lambda: _sparse_base().clear(), False),
    "all null": (lambda: pl.Series("s", [None] * N, dtype=pp.sparse_dtype()), False),
    "List(Float64)": (lambda: pl.Series("s", [[1.0, 2.0]] * N), False),
    "other field names": (
        lambda: pl.Series("s", [[{"i": 0, "v": 1.0}]] * N),
        False,
    ),
    "Int64 values": (_sparse_cast(pl.UInt32, pl.Int64), False),
    "String": (lambda: pl.Series("s", ["0:1"] * N), False),
    "a numpy array": (lambda: np.c_[NUM, NUM2, NUM], False),
}


def _sparse_frame(column: Any) -> pl.DataFrame:
    return pl.DataFrame({"s": column})


@functools.cache
def _sparse_model(name: str) -> Any:
    frame = _sparse_frame(_sparse_base())
    if name == "DoSClassifier":
        return pp.DoSClassifier(rank=2).fit(frame, Y_CLASS)
    return pp.SGDRegressor(shuffle=False, progress=False).fit(frame, Y_REAL)


def _expand_on(engine: str, **options: Any) -> Callable[[Any], Any]:
    return lambda column: _collect(
        _sparse_frame(column), pp.expand(pl.col("s"), degree=2, **options), engine
    )


def _scored_on(name: str, engine: str) -> Callable[[Any], Any]:
    return lambda column: _collect(
        _sparse_frame(column), _sparse_model(name).predict_expr("s"), engine
    )


def _fit_on(make: Callable[[], Any], y: np.ndarray) -> Callable[[Any], Any]:
    def fit(column: Any) -> Any:
        frame = _sparse_frame(column)
        return make().fit(frame, y[: len(frame)] if len(frame) < N else y).predict(frame)

    return fit


# name -> call(column): the entry points that read a sparse column
SPARSE_ENTRIES: dict[str, Callable[[Any], Any]] = {
    "to_scipy": lambda column: pp.to_scipy(column, 3),
    "to_numpy": lambda column: pp.to_numpy(column, 3),
    "n_features": lambda column: pp.n_features(column),
    **{f"expand {e}": _expand_on(e, n_features=3) for e in ENGINES},
    **{f"expand hashed {e}": _expand_on(e, bits=8) for e in ENGINES},
    **{
        f".poly.expand {e}": lambda column, e=e: _collect(
            _sparse_frame(column), pl.col("s").poly.expand(n_features=3, degree=3), e
        )
        for e in ENGINES
    },
    "SGDRegressor.fit": _fit_on(lambda: pp.SGDRegressor(shuffle=False, progress=False), Y_REAL),
    "SGDRegressor.predict": lambda column: _sparse_model("SGDRegressor").predict(
        _sparse_frame(column)
    ),
    **{f"SGDRegressor.predict_expr {e}": _scored_on("SGDRegressor", e) for e in ENGINES},
    "DoSClassifier.fit": _fit_on(lambda: pp.DoSClassifier(rank=2), Y_CLASS),
    **{f"DoSClassifier.predict_expr {e}": _scored_on("DoSClassifier", e) for e in ENGINES},
}
SPARSE_CELLS = [(e, c) for e in SPARSE_ENTRIES for c in SPARSE]


def _python_dense(column: pl.Series, width: int) -> np.ndarray:
    """``to_numpy`` done in Python (null rows empty, duplicates summed): what it must give."""
    dense = np.zeros((len(column), width))
    for row, entries in enumerate(column.to_list()):
        for entry in entries or []:
            dense[row, entry["index"]] += entry["value"]
    return dense


def _sparse_values(result: Any) -> np.ndarray:
    """A sparse-column entry's result as floats: a matrix dense, an expansion's rows dense
    (null rows NaN-free: left out), predictions and counts as they are."""
    if isinstance(result, pl.DataFrame):
        result = result.to_series()
    if isinstance(result, pl.Series) and isinstance(result.dtype, pl.List):
        rows = result.to_list()
        width = 1 + max((e["index"] for row in rows for e in row or []), default=-1)
        return _python_dense(pl.Series("s", [row or [] for row in rows], dtype=result.dtype), width)
    if sp.issparse(result):
        return np.asarray(result.toarray())
    return _numbers(result)


@functools.cache
def _sparse_reference(entry: str) -> np.ndarray:
    return _sparse_values(SPARSE_ENTRIES[entry](_sparse_base()))


@pytest.mark.parametrize(("entry", "column_name"), _sampled(SPARSE_CELLS))
def test_entry_on_sparse_column(entry: str, column_name: str) -> None:
    make, same = SPARSE[column_name]
    column = make()
    result = _run(lambda: SPARSE_ENTRIES[entry](column))
    if isinstance(result, BaseException):
        return
    values = _sparse_values(result)
    if entry != "n_features":
        assert len(values) == len(column), f"{len(values)} rows for {len(column)}"
    if "predict" in entry and isinstance(column, pl.Series):
        # A null row is a missing row: its prediction is null (NaN in numpy).
        missing = column.is_null().to_numpy()
        assert np.isnan(values[missing]).all(), "a null row has a prediction"
        values = values[~missing]
    assert np.isfinite(values).all(), "a non-finite result"
    if entry in ("to_scipy", "to_numpy"):
        np.testing.assert_array_equal(values, _python_dense(column, 3))
    if entry == "n_features":
        indices = [e["index"] for row in column.to_list() for e in row or []]
        assert result == 1 + max(indices, default=-1), (result, max(indices, default=-1))
    if same:
        tolerance = 1e-5 if same == "float32" else 1e-9
        reference = _sparse_reference(entry)
        np.testing.assert_allclose(values, reference, rtol=tolerance, atol=tolerance)


# ------------------------------------------------------------ a function expression's column
def _selected(expression: Callable[[], pl.Expr]) -> Callable[[pl.DataFrame, str], Any]:
    return lambda data, engine: _collect(data, expression(), engine)


def _names(data: pl.DataFrame, engine: str) -> pl.DataFrame:
    """``hashed_feature_names`` of a DataFrame (eager) or a LazyFrame."""
    return pp.hashed_feature_names(data if engine == "eager" else data.lazy(), "c", bits=10)


# name -> call(frame of one column "c", engine)
COLUMN_ENTRIES: dict[str, Callable[[pl.DataFrame, str], Any]] = {
    "to_sparse": _selected(lambda: pp.to_sparse("c")),
    "hash_features": _selected(lambda: pp.hash_features("c", bits=10)),
    "expand": _selected(lambda: pp.expand(pp.to_sparse("c"), n_features=1, degree=3)),
    "expand hashed": _selected(
        lambda: pp.expand(pp.to_sparse("c"), n_features=1, degree=2, bits=8)
    ),
    ".poly.to_sparse": _selected(lambda: pl.col("c").poly.to_sparse()),
    ".poly.hash_features": _selected(lambda: pl.col("c").poly.hash_features(bits=10)),
    ".poly.expand": _selected(
        lambda: pl.col("c").poly.to_sparse().poly.expand(n_features=1, degree=2)
    ),
    "hashed_feature_names": _names,
}
COLUMN_FRAMES = {name: t for name, (t, _) in FRAMES.items() if name not in ("not a frame", "lazy")}
EXPRESSION_CELLS = [
    (x, e, f)
    for x in COLUMN_ENTRIES
    for e in ENGINES
    if not (x == "hashed_feature_names" and e == "streaming")  # it takes a frame
    for f in COLUMN_FRAMES
]


@pytest.mark.parametrize(("expression", "engine", "frame_name"), _sampled(EXPRESSION_CELLS))
def test_expression_on_column(expression: str, engine: str, frame_name: str) -> None:
    """Each function expression on the numeric column of each frame (renamed ``c``)."""
    frame = COLUMN_FRAMES[frame_name](base_frame(["num", "num2", "cat"], Y_REAL))
    # The column the frame's edit changed: the string column's, else the first one's.
    column = "cat" if frame_name.startswith("cat ") else frame.columns[0]
    data = frame.select(pl.col(column).alias("c"))
    result = _run(lambda: COLUMN_ENTRIES[expression](data, engine))
    if isinstance(result, BaseException):
        return
    if expression == "hashed_feature_names":
        # It names every feature hash_features gives, and refuses the dtypes hash_features
        # refuses (a value hash_features refuses, NaN, has a name all the same).
        hashed = _run(lambda: data.select(pp.hash_features("c", bits=10)))
        if isinstance(hashed, BaseException):
            planned = _run(lambda: data.clear().select(pp.hash_features("c", bits=10)))
            assert not isinstance(planned, BaseException), f"names a refused dtype: {planned}"
            return
        given = set(hashed.to_series().explode().struct.field("index").drop_nulls().to_list())
        assert given <= set(result["index"].to_list()), given - set(result["index"].to_list())
        return
    assert len(result) == len(data)
    values = result.to_series().explode().struct.field("value").drop_nulls()
    assert values.is_finite().all(), "a non-finite value"


# ----------------------------------------------------------------------------------- files
VALID_LIBSVM = b"1 1:0.5 3:1.5\n-1 2:1\n1 1:2 2:-1 3:0.25\n"
VALID_VW = b"1 |a x:0.5 y |b z:1.5\n-1 |a y:2\n1 'tag |b w\n"
GARBAGE = np.random.default_rng(5).integers(0, 256, 4096, dtype=np.uint8).tobytes()
MODEL_SETUPS = (
    "SGDRegressor",
    "SGDClassifier apple",
    "DoSClassifier",
    "PassiveAggressiveClassifier",
)


def _bytes(data: bytes, suffix: str = ".txt") -> Callable[[Path, str], Path]:
    def make(folder: Path, name: str) -> Path:
        path = folder / f"{name.replace(' ', '_').replace('/', '_')}{suffix}"
        path.write_bytes(data)
        return path

    return make


def _model_bytes(setup: str, edit: Callable[[bytes], bytes]) -> Callable[[Path, str], Path]:
    def make(folder: Path, name: str) -> Path:
        path = folder / f"{name.replace(' ', '_')}.model"
        _model(setup).save(path)
        path.write_bytes(edit(path.read_bytes()))
        return path

    return make


def _flipped(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x5A]) + data[middle + 1 :]


def _special(kind: str) -> Callable[[Path, str], Path]:
    def make(folder: Path, name: str) -> Path:
        path = folder / name.replace(" ", "_")
        if kind == "directory":
            path.mkdir()
        elif kind == "dangling symlink":
            path.symlink_to(folder / "nowhere")
        elif kind == "symlink loop":
            path.symlink_to(path)
        elif kind == "fifo":
            os.mkfifo(path)
        return path

    return make


# name -> (make(folder, name) -> path, the file whose content it holds, if another: every entry
# that reads both gives the same result)
FILES: dict[str, tuple[Callable[[Path, str], Path], str | None]] = {
    "valid libsvm": (_bytes(VALID_LIBSVM, ".libsvm"), None),
    "valid vw": (_bytes(VALID_VW, ".vw"), None),
    **{f"{setup} model": (_model_bytes(setup, lambda data: data), None) for setup in MODEL_SETUPS},
    "empty": (_bytes(b""), None),
    "newlines only": (_bytes(b"\n\n\n"), None),
    "whitespace only": (_bytes(b"  \t \n \r\n"), None),
    "comment only": (_bytes(b"# nothing here\n"), None),
    "binary garbage": (_bytes(GARBAGE, ".bin"), None),
    "NUL bytes": (_bytes(b"\x00" * 1024), None),
    "NUL inside a line": (_bytes(b"1 1:1\x002:3\n1 |a x\x00y\n"), None),
    "truncated line": (_bytes(b"1 1:0.5 3:"), None),
    "an index without a number": (_bytes(b"1 :5\n"), None),
    "only a label": (_bytes(b"1\n-1\n"), None),
    "CRLF line ends": (
        _bytes(b"1 1:0.5 3:1.5\r\n-1 2:1\r\n1 1:2 2:-1 3:0.25\r\n"),
        "valid libsvm",
    ),
    "UTF-8 byte order mark": (_bytes(b"\xef\xbb\xbf" + VALID_LIBSVM), None),
    "invalid UTF-8": (_bytes(b"1 1:1 \xff\xfe:2\n1 |a \xff\xfe\n"), None),
    "value 1e400": (_bytes(b"1 1:1e400\n1 |a x:1e400\n"), None),
    "label 1e400": (_bytes(b"1e400 1:1\n1e400 |a x\n"), None),
    "a thousand digits": (_bytes(b"1 1:" + b"9" * 1000 + b"\n"), None),
    "values 1e308": (_bytes(b"1e308 1:1e308 2:-1e308\n-1e308 |a x:1e308 y:-1e308\n"), None),
    "index beyond 2**64": (_bytes(b"1 18446744073709551617:1\n"), None),
    "200k features on a line": (
        _bytes(("1 " + " ".join(f"{i}:1" for i in range(1, 200_001)) + "\n").encode()),
        None,
    ),
    "tabs": (_bytes(b"1\t1:0.5\t3:1.5\n-1\t|a\tx\n"), None),
    "commas between features": (_bytes(b"1 1:0.5,3:1.5\n"), None),
    "semicolons and equals": (_bytes(b"1;1=0.5;3=1.5\n"), None),
    "CSV": (_bytes(b"label,a,b\n1,0.5,1.5\n"), None),
    "JSON": (_bytes(b'{"label": 1, "features": {"1": 0.5}}\n'), None),
    "only bars": (_bytes(b"|\n||\n| |\n"), None),
    "gzip": (_bytes(gzip.compress(VALID_LIBSVM + VALID_VW, mtime=0), ".gz"), None),
    "gzip of valid libsvm": (
        _bytes(gzip.compress(VALID_LIBSVM, mtime=0), ".libsvm.gz"),
        "valid libsvm",
    ),
    "gzip under a plain name": (
        _bytes(gzip.compress(VALID_LIBSVM, mtime=0), ".libsvm"),
        "valid libsvm",
    ),
    "plain under a .gz name": (_bytes(VALID_LIBSVM, ".libsvm.gz"), "valid libsvm"),
    "truncated gzip": (_bytes(gzip.compress(VALID_LIBSVM * 50, mtime=0)[:60], ".gz"), None),
    "gzip of garbage": (_bytes(gzip.compress(GARBAGE, mtime=0), ".gz"), None),
    "parquet": (_bytes(b"PAR1" + GARBAGE[:200] + b"PAR1", ".parquet"), None),
    "model truncated": (_model_bytes("SGDClassifier apple", lambda d: d[: len(d) // 2]), None),
    "model with a byte flipped": (_model_bytes("SGDClassifier apple", _flipped), None),
    "model magic only": (_model_bytes("SGDRegressor", lambda d: d[:7]), None),
    "model with trailing bytes": (_model_bytes("DoSClassifier", lambda d: d + b"\x00" * 9), None),
    "DoS model truncated": (_model_bytes("DoSClassifier", lambda d: d[: len(d) - 5]), None),
    "directory": (_special("directory"), None),
    "missing": (_special("missing"), None),
    "dangling symlink": (_special("dangling symlink"), None),
    "symlink loop": (_special("symlink loop"), None),
    "/dev/null": (lambda folder, name: Path("/dev/null"), None),
    "FIFO": (_special("fifo"), None),  # fed the valid file of each entry's kind
}


def _libsvm_batches(path: Path) -> pl.DataFrame:
    batches = list(pp.iter_libsvm(path, batch_size=2))
    return pl.concat(batches) if batches else pp.read_libsvm(path).clear()


def _vw_batches(path: Path) -> pl.DataFrame:
    batches = list(pp.iter_vw(path, batch_size=2))
    return pl.concat(batches) if batches else pp.read_vw(path).clear()


@functools.cache
def _vw_model() -> Any:
    """An SGDRegressor fitted on the valid VW file."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "valid.vw"
        path.write_bytes(VALID_VW)
        return pp.SGDRegressor(shuffle=False, progress=False).fit(path)


@dataclasses.dataclass(frozen=True)
class FileEntry:
    """An entry point reading a path: ``kind`` is what it reads (``libsvm``, ``vw`` or
    ``model``: its valid file is the reference); ``like`` the entry whose result on the same
    file this one's must equal."""

    call: Callable[[Path], Any]
    kind: str
    like: str | None = None


FILE_ENTRIES: dict[str, FileEntry] = {
    "read_libsvm": FileEntry(pp.read_libsvm, "libsvm"),
    "iter_libsvm": FileEntry(_libsvm_batches, "libsvm", like="read_libsvm"),
    "scan_libsvm lazy": FileEntry(
        lambda path: pp.scan_libsvm(path).collect(), "libsvm", like="read_libsvm"
    ),
    "scan_libsvm streaming": FileEntry(
        lambda path: pp.scan_libsvm(path).collect(engine="streaming"), "libsvm", like="read_libsvm"
    ),
    "read_vw": FileEntry(pp.read_vw, "vw"),
    "read_vw namespaces": FileEntry(lambda path: pp.read_vw(path, namespaces="auto"), "vw"),
    "iter_vw": FileEntry(_vw_batches, "vw", like="read_vw"),
    "scan_vw lazy": FileEntry(lambda path: pp.scan_vw(path).collect(), "vw", like="read_vw"),
    "scan_vw streaming": FileEntry(
        lambda path: pp.scan_vw(path).collect(engine="streaming"), "vw", like="read_vw"
    ),
    "SGDRegressor.fit(path)": FileEntry(
        lambda path: pp.SGDRegressor(shuffle=False, progress=False).fit(path).predict(path), "vw"
    ),
    "SGDRegressor.predict(path)": FileEntry(lambda path: _vw_model().predict(path), "vw"),
    "load_model": FileEntry(pp.load_model, "model"),
    "SGDRegressor.load": FileEntry(pp.SGDRegressor.load, "model"),
    "SGDClassifier.load": FileEntry(pp.SGDClassifier.load, "model"),
    "DoSClassifier.load": FileEntry(pp.DoSClassifier.load, "model"),
    "PassiveAggressiveClassifier.load": FileEntry(pp.PassiveAggressiveClassifier.load, "model"),
}
FILE_CELLS = [(e, f) for e in FILE_ENTRIES for f in FILES]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("matrix_files")
    return {name: make(folder, name) for name, (make, _) in FILES.items()}


def _digest(result: Any) -> str:
    """A result in a form two processes can compare: a frame's rows, an array's numbers, a
    loaded model's class and predictions on its base frame."""
    if isinstance(result, pl.DataFrame):
        return repr(result.rows())
    if isinstance(result, np.ndarray):
        return repr(result.tolist())
    setup = _setup_of(result)
    return f"{type(result).__name__}: {_loaded_predictions(result, setup).tolist()!r}"


def _setup_of(model: Any) -> str:
    """The setup a loaded model belongs to (by its class and its columns)."""
    name = type(model).__name__
    return "SGDClassifier apple" if name == "SGDClassifier" else name


def _loaded_predictions(model: Any, setup: str) -> np.ndarray:
    make, columns, y = SETUPS[setup]
    return _numbers(model.predict(base_frame(columns, y).drop("y")))


def _valid_file(kind: str, files: dict[str, Path], entry: str) -> Path:
    if kind == "model":
        # The valid model file of the estimator class the entry loads (load_model: any).
        owner = entry.split(".")[0]
        setup = next((s for s in MODEL_SETUPS if s.split()[0] == owner), MODEL_SETUPS[0])
        return files[f"{setup} model"]
    return files[f"valid {kind}"]


def _check_loaded(model: Any, file: str) -> None:
    """A loaded model predicts finite numbers on its base frame, those of the saved model when
    the file is one, and goes on learning (or refuses clearly)."""
    setup = _setup_of(model)
    values = _loaded_predictions(model, setup)
    assert np.isfinite(values).all(), "a non-finite prediction"
    if file.endswith(" model") and file.removesuffix(" model") in MODEL_SETUPS:
        saved = file.removesuffix(" model")
        assert saved == setup, (saved, setup)
        np.testing.assert_array_equal(values, _loaded_predictions(_model(setup), setup))
    make, columns, y = SETUPS[setup]
    learned = _run(lambda: model.partial_fit(base_frame(columns, y), "y"))
    if not isinstance(learned, BaseException):
        assert np.isfinite(_loaded_predictions(model, setup)).all()


def _check_read(frame: pl.DataFrame) -> None:
    """A reader's frame: finite labels (or null: a VW line without one) and finite values in
    each sparse column."""
    if "label" in frame.columns:
        assert np.isfinite(frame["label"].drop_nulls().to_numpy()).all(), "a non-finite label"
    for name, dtype in frame.schema.items():
        if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct):
            values = frame[name].explode().struct.field("value").drop_nulls()
            assert values.is_finite().all(), f"a non-finite value in {name!r}"


@pytest.mark.parametrize(("entry", "file"), _sampled(FILE_CELLS))
def test_entry_on_file(entry: str, file: str, files: dict[str, Path]) -> None:
    point = FILE_ENTRIES[entry]
    if file == "FIFO":
        _check_fifo(entry, files)
        return
    path = files[file]
    result = _run(lambda: point.call(path))
    if isinstance(result, BaseException):
        return
    if point.kind == "model":
        _check_loaded(result, file)
        return
    if isinstance(result, pl.DataFrame):
        _check_read(result)
    else:
        _check_result(result, len(result), None)
    if point.like is not None:
        # A scan or the batches of a file are what its read gives, or fail as it fails.
        read = _run(lambda: FILE_ENTRIES[point.like].call(path))
        assert not isinstance(read, BaseException), f"{point.like} refuses it: {read}"
        assert result.equals(read.select(result.columns)), "differs from the read"
    holds = FILES[file][1]
    if holds is not None:
        # The same content under another name, compressed or with other line ends.
        other = _run(lambda: point.call(files[holds]))
        if not isinstance(other, BaseException):
            assert _digest(result) == _digest(other), f"differs from {holds!r}"


# The FIFO: each entry in a child process (one that blocked with the GIL held would stop this
# process too), fed the valid file of its kind once by this process, as `cat file > fifo` feeds
# it; an entry that opens the FIFO a second time then waits for ever: a child that does not answer
# within FIFO_SECONDS (once it has started, within HANG_SECONDS) hangs. A command-line run has
# HANG_SECONDS.
FIFO_SECONDS = 8
HANG_SECONDS = 60


def _child_answers(paths: dict[str, str]) -> None:
    """In the child: each entry on its path, one JSON line each: the result's digest, or the
    error's problem (None when its message is clear); a first line once it has started (the
    estimators imported and the VW model fitted, so that each entry takes milliseconds)."""
    _vw_model()
    print("{}", flush=True)
    for entry, path in paths.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                answer: dict[str, Any] = {"digest": _digest(FILE_ENTRIES[entry].call(Path(path)))}
        except BaseException as error:  # noqa: BLE001 - a panic is a BaseException
            try:
                _check_error(error)
                answer = {"error": None}
            except AssertionError as problem:
                answer = {"error": str(problem)}
        print(json.dumps(answer), flush=True)


def _feed(fifo: Path, data: bytes, done: threading.Event) -> None:
    """Writes ``data`` to the first reader that opens ``fifo`` (unless ``done`` comes first)."""
    while not done.is_set():
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader yet
            time.sleep(0.005)
            continue
        try:
            os.set_blocking(fd, True)
            os.write(fd, data)
        except OSError:
            pass  # the reader stopped reading
        finally:
            os.close(fd)
        return


_FIFO_ANSWERS: dict[str, dict[str, Any]] = {}


def _pump(stream: Any, lines: queue.Queue[str | None]) -> None:
    """The child's lines, then None at its end."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def _fifo_answers(files: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """Every file entry's answer on a FIFO of its own, from a child process (a new child for the
    entries left after one hangs or crashes)."""
    if _FIFO_ANSWERS:
        return _FIFO_ANSWERS
    folder = files["FIFO"].parent / "fifos"
    folder.mkdir()
    pending = list(FILE_ENTRIES)
    while pending:
        done = threading.Event()
        paths = {}
        for entry in pending:
            paths[entry] = str(folder / f"{len(_FIFO_ANSWERS)}-{entry.replace(' ', '_')}")
            os.mkfifo(paths[entry])
            content = _valid_file(FILE_ENTRIES[entry].kind, files, entry).read_bytes()
            feeder = threading.Thread(
                target=_feed, args=(Path(paths[entry]), content, done), daemon=True
            )
            feeder.start()
        code = "import json, sys\nfrom tests.test_entry_matrix import _child_answers\n"
        code += "_child_answers(json.loads(sys.argv[1]))"
        errors = folder / f"stderr-{len(_FIFO_ANSWERS)}"
        with errors.open("w") as stderr:
            child = subprocess.Popen(
                [sys.executable, "-c", code, json.dumps(paths)],
                cwd=Path(__file__).resolve().parents[1],
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        lines: queue.Queue[str | None] = queue.Queue()
        pump = threading.Thread(target=_pump, args=(child.stdout, lines), daemon=True)
        pump.start()
        started = lines.get(timeout=HANG_SECONDS)
        assert started is not None, f"the child failed to start: {errors.read_text()}"
        for entry in list(pending):
            pending.remove(entry)
            try:
                line = lines.get(timeout=FIFO_SECONDS)
            except queue.Empty:
                _FIFO_ANSWERS[entry] = {"hang": f"no answer in {FIFO_SECONDS} s"}
                break
            if line is None:
                child.wait()
                crash = f"exit {child.returncode}: {errors.read_text()[-2000:]}"
                _FIFO_ANSWERS[entry] = {"crash": crash}
                break
            _FIFO_ANSWERS[entry] = json.loads(line)
        done.set()
        if child.poll() is None:
            child.kill()
        child.wait()
        pump.join(timeout=FIFO_SECONDS)
        child.stdout.close()
    return _FIFO_ANSWERS


def _check_fifo(entry: str, files: dict[str, Path]) -> None:
    answer = _fifo_answers(files)[entry]
    assert "hang" not in answer and "crash" not in answer, answer
    if "error" in answer:
        assert answer["error"] is None, answer["error"]
        return
    point = FILE_ENTRIES[entry]
    expected = _digest(point.call(_valid_file(point.kind, files, entry)))
    assert answer["digest"] == expected, "a FIFO reads otherwise than its content"


# --------------------------------------------------------------------------- command line
# name -> (arguments, files named by {file}, the outcome allowed: "ok" exit 0, "error" exit 1
# with one clear line, "either")
CLI_CELLS: dict[str, tuple[list[str], str]] = {
    "train valid vw": (["train", "-d", "{valid vw}", "-f", "{out}"], "ok"),
    "train valid libsvm": (["train", "-d", "{valid libsvm}"], "ok"),
    "train empty": (["train", "-d", "{empty}"], "either"),
    "train binary garbage": (["train", "-d", "{binary garbage}"], "error"),
    "train NUL bytes": (["train", "-d", "{NUL bytes}"], "error"),
    "train value 1e400": (["train", "-d", "{value 1e400}"], "error"),
    "train semicolons": (["train", "-d", "{semicolons and equals}"], "either"),
    "train truncated gzip": (["train", "-d", "{truncated gzip}"], "error"),
    "train directory": (["train", "-d", "{directory}"], "error"),
    "train a model file": (["train", "-d", "{SGDRegressor model}"], "error"),
    "train --oaa 0": (["train", "-d", "{valid vw}", "--oaa", "0"], "error"),
    "predict garbage model": (["predict", "-i", "{binary garbage}", "-d", "{valid vw}"], "error"),
    "predict truncated model": (
        ["predict", "-i", "{model truncated}", "-d", "{valid vw}"],
        "error",
    ),
    "predict flipped model": (
        ["predict", "-i", "{model with a byte flipped}", "-d", "{valid vw}"],
        "error",
    ),
    "predict directory model": (["predict", "-i", "{directory}", "-d", "{valid vw}"], "error"),
    "predict on garbage": (["predict", "-i", "{vw model}", "-d", "{binary garbage}"], "error"),
    "inspect empty": (["inspect", "-i", "{empty}"], "error"),
    "inspect truncated model": (["inspect", "-i", "{DoS model truncated}"], "error"),
    "inspect a libsvm file": (["inspect", "-i", "{valid libsvm}"], "error"),
    "inspect valid model": (["inspect", "-i", "{SGDClassifier apple model}"], "ok"),
}


def _cli_arguments(arguments: list[str], files: dict[str, Path]) -> list[str]:
    folder = files["valid vw"].parent
    named = {f"{{{name}}}": str(path) for name, path in files.items()}
    named |= {"{out}": str(folder / "cli.model"), "{vw model}": str(folder / "vw.model")}
    return [named.get(a, a) for a in arguments]


@pytest.mark.parametrize("cell", list(CLI_CELLS)[::SAMPLE])
def test_command_line_on_bad_input(cell: str, files: dict[str, Path]) -> None:
    arguments, allowed = CLI_CELLS[cell]
    model = files["valid vw"].parent / "vw.model"
    if not model.exists():
        _vw_model().save(model)
    done = subprocess.run(
        [sys.executable, "-m", "polars_poly", *_cli_arguments(arguments, files)],
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS,
        check=False,
    )
    assert done.returncode in (0, 1, 2), f"killed by signal {-done.returncode}: {done.stderr}"
    assert "Traceback" not in done.stderr and "panicked" not in done.stderr, done.stderr
    if allowed == "ok" or (allowed == "either" and done.returncode == 0):
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode != 0, f"exit 0 on bad input: {done.stdout[-300:]}"
    last = done.stderr.strip().splitlines()[-1]
    assert re.match(r"polars-poly \w+: error: ", last), done.stderr
    assert not UNCLEAR.search(last.split(": error: ", 1)[1]), last


# ---------------------------------------------------------------------------- the tables
# Every public function and estimator method that takes data, and the table it meets its inputs
# in; what takes none is listed with where its options are checked.
NO_DATA = {
    # Constants, modules, option objects and warnings: no input of their own.
    *("__version__", "IDENTITIES", "LOSSES", "RANKINGS", "SCHEDULES", "datasets", "synthetic"),
    *("Apple", "FFM", "FieldApple", "TableSaturationWarning"),
    # Options only (test_bad_options, test_bad_input_matrix): widths, names and monomials.
    *("sparse_dtype", "output_width", "feature_name", "monomial", "column_of"),
}
METHODS_WITHOUT_DATA = {
    # scikit-learn's plumbing, the model's own state, and saving (test_reliability: save onto a
    # directory, a FIFO, a symlink, a full device).
    *("get_params", "set_params", "get_metadata_routing", "set_output"),
    *("set_fit_request", "set_partial_fit_request", "set_score_request"),
    *("crosses", "ffm_pairs", "monomials", "screening", "plot_learning_curve", "plot_monomials"),
    *("get_feature_names_out", "save"),
}


def _covered() -> set[str]:
    """The names the tables' entries call (``SGDRegressor.load``: ``SGDRegressor``, ``load``)."""
    tables = [ENTRIES, LABEL_ENTRIES, MATRIX_ENTRIES, MATRIX_FUNCTIONS, SPARSE_ENTRIES]
    tables += [COLUMN_ENTRIES, FILE_ENTRIES]
    return set(re.findall(r"[A-Za-z_]+", " ".join(name for t in tables for name in t)))


def test_every_public_entry_point_meets_the_matrix() -> None:
    covered = _covered()
    missing = [n for n in pp.__all__ if n not in NO_DATA and n not in covered]
    estimators = (pp.SGDRegressor, pp.SGDClassifier, pp.DoSClassifier)
    for cls in (*estimators, pp.PassiveAggressiveClassifier, pp.PolynomialExpander):
        methods = [n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))]
        missing += [
            f"{cls.__name__}.{n}" for n in methods if n not in covered | METHODS_WITHOUT_DATA
        ]
    assert not missing, f"public entry points in no table of the matrix: {missing}"


def _cell_counts() -> dict[str, int]:
    return {
        "frames": len(FRAME_CELLS),
        "labels": len(LABEL_CELLS),
        "weights": len(WEIGHT_CELLS),
        "matrices": len(MATRIX_CELLS),
        "matrix functions": len(MATRIX_FUNCTION_CELLS),
        "sparse columns": len(SPARSE_CELLS),
        "expressions": len(EXPRESSION_CELLS),
        "files": len(FILE_CELLS),
        "command line": len(CLI_CELLS),
    }


def test_the_matrix_has_at_least_3000_cells() -> None:
    assert sum(_cell_counts().values()) >= 3000, _cell_counts()
