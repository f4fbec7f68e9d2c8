"""The entry-point matrix (issue 56): every public entry point, given every kind of bad or
unusual input, through every engine, generated from three tables (setups x entry points,
frames, labels) so that a new entry point meets every input and a new input every entry point.

A cell passes when the call either

- returns a result of the right length whose numbers are finite and, where the input holds the
  same numbers as the reference frame in another form (a narrower integer dtype, float32, a
  decimal, a chunked or lazy frame), equal to the reference's; and scoring expressions (eager,
  lazy and streaming) give what ``predict`` gives on the same frame; or
- raises an ordinary exception (``ValueError``, ``TypeError``, a Polars error, ...) with a clear
  message: not empty, not an internal error or a panic, not one of Python's own messages about
  its objects (``'NoneType' object is not iterable``, ``unhashable type``, a bare ``KeyError``).

It never panics (a ``PanicException`` is a ``BaseException``: it fails the cell), never returns
NaN silently and never differs between engines. The hand-written expectations of particular
cells (which error, naming which row) live in ``test_bad_input_matrix.py``; this matrix is their
breadth. ``POLARS_POLY_MATRIX_SAMPLE=k`` runs every k-th cell (CI runs all: about a minute).
"""

from __future__ import annotations

import datetime as dt
import inspect
import math
import os
import re
import warnings
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
import scipy.sparse as sp
from polars.exceptions import PolarsError

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
UNCLEAR = re.compile(
    r"object is not (iterable|subscriptable|callable)|unhashable type|has no attribute|"
    r"index out of range|cannot be interpreted as an integer|NulError|unwrap\(\)|"
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
    values = np.asarray(result.to_numpy() if isinstance(result, pl.Series) else result)
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
# name -> (estimator factory, the columns its base frame has, the target). The SGD setups keep
# the rows' order (shuffle=False): a LazyFrame is learned in order, and is compared with the base.
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
    "DoSClassifier": (lambda: pp.DoSClassifier(rank=2), ["num", "num2"], Y_CLASS),
    "PassiveAggressiveClassifier": (
        lambda: pp.PassiveAggressiveClassifier(),
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
def _fitted(setup: str) -> tuple[Any, pl.DataFrame]:
    make, columns, y = SETUPS[setup]
    frame = base_frame(columns, y)
    return make().fit(frame, "y"), frame


def _features(frame: Any) -> Any:
    """The frame without its target (when it is a frame that has one)."""
    if isinstance(frame, pl.LazyFrame):
        return frame.drop("y") if "y" in frame.collect_schema() else frame
    if isinstance(frame, pl.DataFrame) and "y" in frame.columns:
        return frame.drop("y")
    return frame


def _scored_by_expression(model: Any, frame: Any, engine: str) -> Any:
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        pytest.skip("an expression scores a frame")
    lazy = frame if isinstance(frame, pl.LazyFrame) else _features(frame).lazy()
    return lazy.select(model.predict_expr()).collect(engine=engine)


def _n_rows(frame: Any) -> int:
    if isinstance(frame, pl.LazyFrame):
        return frame.select(pl.len()).collect().item()
    return len(frame) if isinstance(frame, pl.DataFrame) else 0


# name -> (call(setup, frame) -> result or None for a fit, whether its result is a prediction
# comparable with predict's on the same frame)
ENTRIES: dict[str, Callable[[str, Any], Any]] = {
    "fit": lambda setup, frame: SETUPS[setup][0]().fit(frame, "y").predict(_features(frame)),
    "partial_fit": lambda setup, frame: (
        _fitted(setup)[0].partial_fit(frame, "y").predict(_features(frame))
    ),
    "predict": lambda setup, frame: _fitted(setup)[0].predict(_features(frame)),
    "predict_expr": lambda setup, frame: _scored_by_expression(_fitted(setup)[0], frame, "auto"),
    "predict_expr streaming": lambda setup, frame: _scored_by_expression(
        _fitted(setup)[0], frame, "streaming"
    ),
}

FRAME_CELLS = [
    (s, e, f)
    for s in SETUPS
    for e in ENTRIES
    for f in FRAMES
    if not f.startswith("cat ") or "cat" in SETUPS[s][1]  # the setups without a string column
]
SAMPLE = int(os.environ.get("POLARS_POLY_MATRIX_SAMPLE", "1"))


def _sampled(cells: list) -> list:
    return cells[::SAMPLE]


_REFERENCES: dict[tuple[str, str, int], np.ndarray] = {}


def _reference(setup: str, entry: str, equivalent: Callable) -> np.ndarray:
    """The entry's result on the frame a cell's input must be read as (computed once)."""
    key = (setup, entry, id(equivalent))
    if key not in _REFERENCES:
        make, columns, y = SETUPS[setup]
        result = ENTRIES[entry](setup, equivalent(base_frame(columns, y)))
        _REFERENCES[key] = _numbers(result)
    return _REFERENCES[key]


@pytest.mark.parametrize(("setup", "entry", "frame_name"), _sampled(FRAME_CELLS))
def test_entry_on_frame(setup: str, entry: str, frame_name: str) -> None:
    make, columns, y = SETUPS[setup]
    transform, same = FRAMES[frame_name]
    frame = transform(base_frame(columns, y))
    result = _run(lambda: ENTRIES[entry](setup, frame))
    if isinstance(result, BaseException):
        return
    reference = None if same is None else _reference(setup, entry, same)
    values = _check_result(result, _n_rows(frame), reference)
    if entry.startswith("predict_expr"):
        # The expression scores what predict scores.
        predicted = _run(lambda: _fitted(setup)[0].predict(_features(frame)))
        if not isinstance(predicted, BaseException):
            np.testing.assert_allclose(values, _numbers(predicted), rtol=1e-5, atol=1e-6)


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
LABEL_ENTRIES = ("fit", "partial_fit")
LABEL_CELLS = [(s, e, k) for s in SETUPS for e in LABEL_ENTRIES for k in LABELS]
WEIGHT_CELLS = [(s, e, k) for s in SETUPS for e in LABEL_ENTRIES for k in WEIGHTS]


def _training(setup: str, entry: str) -> tuple[Any, pl.DataFrame]:
    make, columns, y = SETUPS[setup]
    frame = base_frame(columns, y).drop("y")
    model = make() if entry == "fit" else _fitted(setup)[0]
    return model, frame


@pytest.mark.parametrize(("setup", "entry", "labels"), _sampled(LABEL_CELLS))
def test_entry_on_labels(setup: str, entry: str, labels: str) -> None:
    model, frame = _training(setup, entry)
    y = LABELS[labels](SETUPS[setup][2])
    result = _run(lambda: getattr(model, entry)(frame, y).predict(frame))
    if not isinstance(result, BaseException):
        _check_result(result, N, None)


@pytest.mark.parametrize(("setup", "entry", "weights"), _sampled(WEIGHT_CELLS))
def test_entry_on_sample_weights(setup: str, entry: str, weights: str) -> None:
    model, frame = _training(setup, entry)
    y = SETUPS[setup][2]
    if "sample_weight" not in inspect.signature(getattr(model, entry)).parameters:
        pytest.skip(f"{setup}.{entry} takes no sample_weight")
    result = _run(lambda: getattr(model, entry)(frame, y, sample_weight=WEIGHTS[weights]()))
    if not isinstance(result, BaseException):
        _check_result(result.predict(frame), N, None)


# ------------------------------------------------------------- matrices and functions
MATRICES: dict[str, Callable[[], Any]] = {
    "dense": lambda: np.c_[NUM, NUM2],
    "float32": lambda: np.c_[NUM, NUM2].astype(np.float32),
    "int8": lambda: (np.c_[NUM, NUM2] * 10).astype(np.int8),
    "Fortran order": lambda: np.asfortranarray(np.c_[NUM, NUM2]),
    "strided": lambda: np.c_[NUM, NUM, NUM2, NUM2][:, ::2],
    "NaN": lambda: np.c_[np.where(np.arange(N) == 4, np.nan, NUM), NUM2],
    "1e39": lambda: np.c_[np.where(np.arange(N) == 4, 1e39, NUM), NUM2],
    "CSR": lambda: sp.csr_matrix(np.c_[NUM, NUM2]),
    "CSC": lambda: sp.csc_matrix(np.c_[NUM, NUM2]),
    "COO array": lambda: sp.coo_array(np.c_[NUM, NUM2]),
    "CSR int64 indices": lambda: _csr_int64(np.c_[NUM, NUM2]),
    "CSR unsorted": lambda: _csr_unsorted(np.c_[NUM, NUM2]),
    "CSR decreasing indptr": lambda: _csr_broken(),
    "CSR complex": lambda: sp.csr_matrix(np.c_[NUM, NUM2] + 1j),
    "one column": lambda: NUM.reshape(-1, 1),
    "three columns": lambda: np.c_[NUM, NUM2, NUM],
    "list of lists": lambda: np.c_[NUM, NUM2].tolist(),
    "1-D": lambda: NUM,
    "3-D": lambda: np.c_[NUM, NUM2].reshape(N, 2, 1),
    "strings": lambda: np.c_[NUM, NUM2].astype(str),
    "object with None": lambda: np.array([[None, 1.0]] * N, dtype=object),
    "empty": lambda: np.zeros((0, 2)),
    "sparse Series": lambda: pp.from_numpy(np.c_[NUM, NUM2]),
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
    matrix = sp.csr_matrix(np.c_[NUM, NUM2])
    matrix.indptr = matrix.indptr.copy()
    matrix.indptr[3] = matrix.indptr[1]  # decreasing: 3 then 1
    return matrix


MATRIX_SAME = {"dense", "float32", "Fortran order", "strided", "CSR", "CSC", "COO array"}
MATRIX_SAME |= {"CSR int64 indices", "CSR unsorted", "list of lists", "sparse Series"}
MATRIX_ENTRIES: dict[str, Callable[[str, Any], Any]] = {
    "fit": lambda setup, X: SETUPS[setup][0]().fit(X, SETUPS[setup][2]).predict(X),
    "predict": lambda setup, X: (
        SETUPS[setup][0]().fit(np.c_[NUM, NUM2], SETUPS[setup][2]).predict(X)
    ),
}
MATRIX_CELLS = [(s, e, m) for s in SETUPS for e in MATRIX_ENTRIES for m in MATRICES]


@pytest.mark.parametrize(("setup", "entry", "matrix"), _sampled(MATRIX_CELLS))
def test_entry_on_matrix(setup: str, entry: str, matrix: str) -> None:
    X = MATRICES[matrix]()
    result = _run(lambda: MATRIX_ENTRIES[entry](setup, X))
    if isinstance(result, BaseException):
        return
    if matrix in MATRIX_SAME:
        dense = np.c_[NUM, NUM2]
        reference = _numbers(MATRIX_ENTRIES[entry](setup, dense))
        tolerance = 1e-3 if matrix == "float32" else 1e-6
        np.testing.assert_allclose(_numbers(result), reference, rtol=tolerance, atol=tolerance)
    else:
        _check_result(result, len(result), None)


# name -> expression over column "c" of the frame
EXPRESSIONS: dict[str, Callable[[], pl.Expr]] = {
    "to_sparse": lambda: pp.to_sparse("c"),
    "hash_features": lambda: pp.hash_features("c", bits=10),
    "expand": lambda: pp.expand(pp.to_sparse("c"), n_features=1, degree=3),
    "expand hashed": lambda: pp.expand(pp.to_sparse("c"), n_features=1, degree=2, bits=8),
}
ENGINES = ("eager", "lazy", "streaming")
COLUMN_FRAMES = {name: t for name, (t, _) in FRAMES.items() if name not in ("not a frame", "lazy")}
EXPRESSION_CELLS = [(x, e, f) for x in EXPRESSIONS for e in ENGINES for f in COLUMN_FRAMES]


@pytest.mark.parametrize(("expression", "engine", "frame_name"), _sampled(EXPRESSION_CELLS))
def test_expression_on_column(expression: str, engine: str, frame_name: str) -> None:
    """Each function expression on the numeric column of each frame (renamed ``c``)."""
    frame = COLUMN_FRAMES[frame_name](base_frame(["num", "num2", "cat"], Y_REAL))
    # The column the frame's edit changed: the string column's, else the first one's.
    column = "cat" if frame_name.startswith("cat ") else frame.columns[0]
    data = frame.select(pl.col(column).alias("c"))
    if engine == "eager":
        result = _run(lambda: data.select(EXPRESSIONS[expression]()))
    else:
        lazy = data.lazy().select(EXPRESSIONS[expression]())
        result = _run(lambda: lazy.collect(engine="streaming" if engine == "streaming" else "auto"))
    if isinstance(result, BaseException):
        return
    assert len(result) == len(data)
    values = result.to_series().explode().struct.field("value").drop_nulls()
    assert values.is_finite().all(), "a non-finite value"


def test_the_matrix_has_at_least_3000_cells() -> None:
    cells = len(FRAME_CELLS) + len(LABEL_CELLS) + len(WEIGHT_CELLS)
    cells += len(MATRIX_CELLS) + len(EXPRESSION_CELLS)
    assert cells >= 3000, cells
