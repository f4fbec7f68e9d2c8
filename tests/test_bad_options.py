"""Bad options and labels (issue 56): a wrongly typed or out-of-range option, an unseen or
incomparable label, a frame of extra columns, a plain column expression and a tampered model
file each give a clear Python exception naming the option, column, row or value at fault (or
work), never a raw conversion message, an AttributeError or a numpy promotion error."""

from __future__ import annotations

import json
import pickle
import re
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
import scipy.sparse as sp

# Words of a raw PyO3/numpy/Python message that no error here may show.
RAW = re.compile(
    r"cannot be interpreted|can't convert|not iterable|not supported between|"
    r"is not an instance of|has no attribute|DType|int too big|too large to convert"
)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    libsvm = tmp_path / "data.svm"
    libsvm.write_text("1 1:2 3:4\n0 2:1\n")
    vw = tmp_path / "data.vw"
    vw.write_text("1 |a x y\n0 |b z\n")
    return {"libsvm": libsvm, "vw": vw}


def _sparse() -> pl.Series:
    return pp.from_scipy(sp.csr_array(np.eye(3)))


# (call on the files, the exception, what the message says)
OPTION_CASES: list[tuple[str, Callable[[dict[str, Path]], Any], type[Exception], str]] = [
    (
        "read_libsvm n_features=-1",
        lambda f: pp.read_libsvm(f["libsvm"], n_features=-1),
        ValueError,
        "n_features must be >= 0 or None, got -1",
    ),
    (
        "read_libsvm n_features='3'",
        lambda f: pp.read_libsvm(f["libsvm"], n_features="3"),
        TypeError,
        "n_features must be an integer, got '3'",
    ),
    (
        "iter_libsvm n_features=2.0",
        lambda f: next(pp.iter_libsvm(f["libsvm"], n_features=2.0)),
        TypeError,
        "n_features must be an integer, got 2.0",
    ),
    (
        "scan_libsvm n_features=-1",
        lambda f: pp.scan_libsvm(f["libsvm"], n_features=-1),
        ValueError,
        "n_features must be >= 0 or None, got -1",
    ),
    (
        "read_vw namespaces=2.5",
        lambda f: pp.read_vw(f["vw"], namespaces=2.5),
        TypeError,
        "namespaces must be a string of namespace letters, a list of namespace names, 'auto' "
        "or None, got 2.5",
    ),
    (
        "read_vw namespaces=['a', 2]",
        lambda f: pp.read_vw(f["vw"], namespaces=["a", 2]),
        TypeError,
        "namespaces must be .*, got ['a', 2]",
    ),
    (
        "read_vw ignore=2.5",
        lambda f: pp.read_vw(f["vw"], ignore=2.5),
        TypeError,
        "ignore must be a string of namespace letters, a list of namespace names or None, got 2.5",
    ),
    (
        "scan_vw keep=2.5",
        lambda f: pp.scan_vw(f["vw"], keep=2.5),
        TypeError,
        "keep must be .*, got 2.5",
    ),
    (
        "read_vw ngram=2.5",
        lambda f: pp.read_vw(f["vw"], ngram=2.5),
        TypeError,
        "ngram must be an integer (2), .*, got 2.5",
    ),
    (
        "iter_vw skips=True",
        lambda f: next(pp.iter_vw(f["vw"], ngram=2, skips=True)),
        TypeError,
        "skips must be .*, got True",
    ),
    (
        "read_vw other_namespaces=2",
        lambda f: pp.read_vw(f["vw"], other_namespaces=2),
        TypeError,
        "other_namespaces must be 'error' or 'drop', got 2",
    ),
    (
        "read_vw hash=None",
        lambda f: pp.read_vw(f["vw"], hash=None),
        TypeError,
        "hash must be 'strings' or 'all', got None",
    ),
    (
        "to_scipy '2'",
        lambda f: pp.to_scipy(_sparse(), "2"),
        TypeError,
        "n_features must be an integer, got '2'",
    ),
    (
        "to_numpy '2'",
        lambda f: pp.to_numpy(_sparse(), "2"),
        TypeError,
        "n_features must be an integer, got '2'",
    ),
    (
        "to_numpy 2.5",
        lambda f: pp.to_numpy(_sparse(), 2.5),
        TypeError,
        "n_features must be an integer, got 2.5",
    ),
    (
        "to_scipy -1",
        lambda f: pp.to_scipy(_sparse(), -1),
        ValueError,
        "n_features must be >= 0, got -1",
    ),
    (
        "expand_csr parallel='yes'",
        lambda f: pp.expand_csr(sp.csr_array(np.eye(3)), parallel="yes"),
        TypeError,
        "parallel must be True or False, got 'yes'",
    ),
    (
        "column_of None",
        lambda f: pp.column_of(None, 3),
        TypeError,
        "exponents must be a {index: power} dict or a list of (index, power) pairs, got None",
    ),
    (
        "column_of [(1,)]",
        lambda f: pp.column_of([(1,)], 3),
        TypeError,
        "exponents must be a {index: power} dict or a list of (index, power) pairs, got [(1,)]",
    ),
    (
        "column_of {'a': 1}",
        lambda f: pp.column_of({"a": 1}, 3),
        TypeError,
        "exponents: index 'a' is not an integer",
    ),
    (
        "column_of {0: 1.0}",
        lambda f: pp.column_of({0: 1.0}, 3),
        TypeError,
        "exponents: power 1.0 is not an integer",
    ),
    (
        "column_of {-1: 1}",
        lambda f: pp.column_of({-1: 1}, 3),
        ValueError,
        "exponents: index -1 is out of range",
    ),
    (
        "column_of {0: 2**70}",
        lambda f: pp.column_of({0: 2**70}, 3),
        ValueError,
        f"exponents: power {2**70} is out of range",
    ),
    (
        # The engine would spell a monomial of degree 2**32 - 1 out, one entry per unit.
        "column_of {0: 2**32 - 1}",
        lambda f: pp.column_of({0: 2**32 - 1}, 3),
        ValueError,
        "degree 4294967295 is not part of this expansion (degrees 0 to 2)",
    ),
    (
        # Layouts and monomials hold an entry per degree or factor: refused, not gigabytes.
        "monomial degree=10**9",
        lambda f: pp.monomial(10**9 - 1, 1, degree=10**9),
        ValueError,
        "degree 1000000000 is beyond the largest an expansion takes, 65535",
    ),
    (
        "column_of degree=10**9",
        lambda f: pp.column_of({0: 10**9}, 1, degree=10**9),
        ValueError,
        "degree 1000000000 is beyond the largest an expansion takes, 65535",
    ),
    (
        "expand_csr degree=10**9",
        lambda f: pp.expand_csr(sp.csr_array(np.eye(1)), degree=10**9),
        ValueError,
        "degree 1000000000 is beyond the largest an expansion takes, 65535",
    ),
    (
        "n_features [2]",
        lambda f: pp.n_features([2]),  # type: ignore[arg-type]
        TypeError,
        "series must be a sparse polars Series, got list [2]",
    ),
    (
        "to_scipy of a list",
        lambda f: pp.to_scipy([2], 3),  # type: ignore[arg-type]
        TypeError,
        "series must be a sparse polars Series, got list [2]",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "says"),
    [case[1:] for case in OPTION_CASES],
    ids=[case[0] for case in OPTION_CASES],
)
def test_wrongly_typed_options_name_the_option_and_the_value(
    files: dict[str, Path], call: Callable[[dict[str, Path]], Any], error: type, says: str
) -> None:
    pattern = re.escape(says).replace(re.escape(".*"), ".*")
    with pytest.raises(error, match=pattern) as raised:
        call(files)
    assert not RAW.search(str(raised.value)), raised.value


def test_good_options_of_the_checked_kinds_still_work(files: dict[str, Path]) -> None:
    """The checks let through what the options take: numpy integers, tuples of names, gram
    lists, numpy bools; and the monomial given as a list of pairs."""
    assert pp.read_libsvm(files["libsvm"], n_features=np.int64(4)).height == 2
    assert pp.read_vw(files["vw"], namespaces=("a", "b")).columns[-2:] == ["a", "b"]
    assert pp.read_vw(files["vw"], namespaces="ab", ngram=["a2", 2], skips=1).height == 2
    assert pp.read_vw(files["vw"], namespaces=np.array(["a", "b"])).columns[-2:] == ["a", "b"]
    assert pp.to_numpy(_sparse(), np.int32(3)).shape == (3, 3)
    assert pp.expand_csr(sp.csr_array(np.eye(2)), parallel=np.bool_(False)).shape == (2, 6)
    assert pp.column_of([(1, 1), (0, 1)], 3) == pp.column_of({0: 1, 1: 1}, 3) == 5
    assert pp.column_of({0: 0}, 3) == 0


@pytest.mark.parametrize("make", [pp.DoSClassifier, pp.PassiveAggressiveClassifier])
@pytest.mark.parametrize(
    ("fitted", "labels", "says"),
    [
        # A string Series (an object array once read): was AttributeError 'str' ... 'item'.
        (
            ["a", "b", "a", "b"],
            pl.Series(["a", "c", "a", "b"]),
            "y: row 1: label 'c' is not one of the classes ['a', 'b'] (the classes are fixed by "
            "fit's labels or partial_fit's first call)",
        ),
        # Integer classes, then labels numpy cannot order against them: was TypeError '<'.
        (
            [1, 2, 1, 2],
            np.array([1, "x", 1, 2], dtype=object),
            "y: row 1: label 'x' is not one of the classes [1, 2]: a str label against int classes",
        ),
        (
            [1, 2, 1, 2],
            pl.Series(["1", "2", "1", "2"], dtype=pl.Categorical),
            "y: row 0: label '1' is not one of the classes [1, 2]: a str label against int classes",
        ),
    ],
)
def test_pa_family_names_an_unseen_or_incomparable_label_as_sgd_does(
    make: type, fitted: list[Any], labels: Any, says: str
) -> None:
    X = np.eye(4)
    model = make().fit(X, fitted)
    before = model.decision_function(X)
    with pytest.raises(ValueError, match=re.escape(says)):
        model.partial_fit(X, labels)
    np.testing.assert_array_equal(model.decision_function(X), before)


def test_sgd_and_the_pa_family_word_an_unseen_label_alike() -> None:
    X = np.eye(4)
    words = []
    for make in (pp.SGDClassifier, pp.DoSClassifier, pp.PassiveAggressiveClassifier):
        model = make().fit(X, ["a", "b", "a", "b"])
        with pytest.raises(ValueError) as raised:
            model.partial_fit(X, ["a", "c", "a", "b"])
        # SGDClassifier counts rows over the whole stream, the PA family within the batch.
        words.append(re.sub(r"row \d+", "row N", str(raised.value)))
    assert len(set(words)) == 1, words


@pytest.mark.parametrize("make", [pp.DoSClassifier, pp.PassiveAggressiveClassifier])
def test_pa_family_hint_for_extra_columns_names_no_features_option(make: type) -> None:
    """DoS/PA take no ``features``: the hint for a frame of columns they would ignore says to
    select the columns, naming the estimator."""
    frame = pl.DataFrame(
        {
            "a": [1.0, 2.0, 0.0, 1.0],
            "s": pl.Series([[{"index": 0, "value": 1.0}]] * 4, dtype=pp.sparse_dtype()),
        }
    )
    with pytest.raises(ValueError, match="which would be ignored") as raised:
        make().fit(frame, [0, 1, 0, 1])
    message = str(raised.value)
    assert "pass features=" not in message
    assert f"{make.__name__} takes no features=[...]: select the feature columns" in message
    # The online learners do take features=: their hint is unchanged.
    with pytest.raises(ValueError, match=r"pass features=\[\.\.\.\] to choose"):
        pp.SGDClassifier().fit(frame.with_columns(d=date(2020, 1, 1)).drop("s"), [0, 1, 0, 1])


@pytest.mark.parametrize("method", ["predict_expr", "decision_function_expr"])
@pytest.mark.parametrize("columns", [["a"], ["a", "b"]])
def test_plain_column_expressions_score_as_their_names(method: str, columns: list[str]) -> None:
    """``predict_expr(pl.col("a"))`` reads a fitted numeric column as ``predict_expr("a")``
    does (it failed: "column "a" has dtype f64: a feature column is sparse ...")."""
    frame = pl.DataFrame({"a": [1.0, 2.0, 0.0, 1.0], "b": [0.0, 1.0, 1.0, 3.0]})
    y = [0, 1, 0, 1]
    model = pp.SGDClassifier(progress=False).fit(frame.select(columns), y)
    by_name = frame.select(getattr(model, method)(*columns)).to_series()
    by_expr = frame.select(getattr(model, method)(*map(pl.col, columns[::-1]))).to_series()
    assert by_expr.to_list() == by_name.to_list()
    array = model.predict if method == "predict_expr" else model.decision_function
    np.testing.assert_allclose(by_name.to_numpy(), array(frame.select(columns)))
    if len(columns) == 2:
        # One of two numeric columns is no namespace: refused, saying what to pass.
        with pytest.raises(ValueError, match=r"pass all of \['a', 'b'\]"):
            getattr(model, method)(pl.col("a"))


def _tampered(model: Any, key: str, value: Any) -> Any:
    """``model`` with ``key`` of its stored estimator text replaced by ``value``, resealed."""
    from polars_poly._persist import estimator_from

    state = json.loads(model._estimator_text())
    state[key] = value
    engine, text = pp._internal.model_from_bytes(model._fitted_model().to_bytes(json.dumps(state)))
    return estimator_from(engine, text)


TAMPERED = [
    (make, "classes", value, "'classes' must be a sorted list")
    for make in (pp.SGDClassifier, pp.DoSClassifier)
    # Two types (a numpy DTypePromotionError at predict), beyond 64 bits, a bool beside an
    # int, unsorted (looked up by bisection).
    for value in ([2**70, "q"], [2**70, 1], [1, True], ["q", "p"])
] + [
    # An OverflowError at partial_fit.
    (pp.SGDClassifier, key, 2**70, f"{key!r} must be a non-negative integer below 2**63")
    for key in ("rows_seen", "n_features_in")
]


@pytest.mark.parametrize(("make", "key", "value", "says"), TAMPERED)
def test_tampered_classes_and_counts_are_refused_at_load(
    make: type, key: str, value: Any, says: str
) -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] > 0, "p", "q")
    model = make(progress=False).fit(X, y)
    with pytest.raises(ValueError, match="metadata is damaged: " + re.escape(says)):
        _tampered(model, key, value)
    if key == "rows_seen":
        # The largest count within bounds loads and learns on.
        loaded = _tampered(model, key, 2**63 - 1 - len(X))
        loaded.partial_fit(X, y)
        assert loaded.predict(X).shape == (len(X),)


@pytest.mark.parametrize("make", [pp.SGDClassifier, pp.DoSClassifier])
def test_numpy_scalar_options_pickle_and_save(make: type, tmp_path: Path) -> None:
    """Options given as numpy scalars (a seed from ``np.arange``, a ``np.bool_``) are stored
    as the numbers they hold: saving and pickling used to fail on JSON."""
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    model = make(random_state=np.int64(3), shuffle=np.bool_(True)).fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    model.save(tmp_path / "model.pp")
    loaded = make.load(tmp_path / "model.pp")
    assert (loaded.random_state, loaded.shuffle) == (3, True)
    assert type(loaded.random_state) is int and type(loaded.shuffle) is bool
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


# ------------------------------------------------------------ a path given as X, sparse columns
def _fitted_on_frame(make: type) -> Any:
    frame = pl.DataFrame({"num": [0.5, -1.0, 2.0, -0.5], "y": [1, 0, 1, 0]})
    return make(progress=False).fit(frame, "y")


SCORING = [
    *[(pp.SGDClassifier, m) for m in ("predict", "decision_function", "predict_proba", "score")],
    *[(pp.SGDRegressor, m) for m in ("predict", "score")],
]


@pytest.mark.parametrize(("make", "method"), SCORING)
def test_scoring_a_missing_vw_path_names_the_path(
    make: type, method: str, tmp_path: Path, files: dict[str, Path]
) -> None:
    """A string X is a Vowpal Wabbit file's path: a missing one or a directory is named as
    read_vw names it, before any query (not Polars' ColumnNotFoundError with a plan)."""
    score = getattr(_fitted_on_frame(make), method)
    missing = tmp_path / "missing.vw"
    args = (np.zeros(2),) if method == "score" else ()
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        score(str(missing), *args)
    with pytest.raises(OSError, match=re.escape(str(tmp_path))):
        score(tmp_path, *args)
    # An existing VW file lacks the frame's columns: named, with the path.
    with pytest.raises(ValueError, match=r"lacks the feature column\(s\) \['num'\]") as caught:
        score(files["vw"], *args)
    assert str(files["vw"]) in str(caught.value)
    assert not isinstance(caught.value, pl.exceptions.ColumnNotFoundError)


def test_scoring_a_vw_file_by_path_still_works(files: dict[str, Path]) -> None:
    model = pp.SGDClassifier(progress=False).fit(str(files["vw"]))
    frame = pp.read_vw(files["vw"], namespaces="auto")
    assert model.predict(files["vw"]).tolist() == model.predict(frame).tolist()


def _sparse_with(entry: list[Any] | None, row: int = 3) -> pl.Series:
    """A sparse column "s" of 5 rows (a null row first), row ``row`` replaced by ``entry``."""
    rows: list[Any] = [None] + [[{"index": 0, "value": 1.0}, {"index": 2, "value": 2.0}]] * 4
    rows[row] = entry
    return pl.Series("s", rows, dtype=pp.sparse_dtype())


SPARSE_CALLS: dict[str, Callable[[pl.Series], Any]] = {
    "to_scipy": lambda s: pp.to_scipy(s, 3),
    "to_numpy": lambda s: pp.to_numpy(s, 3),
    "n_features": pp.n_features,
    "DoSClassifier.fit": lambda s: pp.DoSClassifier(rank=2).fit(
        pl.DataFrame({"s": s}), [0, 1, 0, 1, 0]
    ),
}


# A row's entries holding a null, and what the error says of it.
NULLS_INSIDE_A_ROW = [
    ([{"index": 1, "value": 1.0}, {"index": None, "value": 1.0}], "null index"),
    ([{"index": 1, "value": None}], "null value"),
    ([None, {"index": 1, "value": 1.0}], "null entry"),
]


@pytest.mark.parametrize("call", SPARSE_CALLS)
@pytest.mark.parametrize(("entry", "says"), NULLS_INSIDE_A_ROW)
def test_a_null_inside_a_sparse_row_names_the_column_and_row(
    call: str, entry: list[Any], says: str
) -> None:
    """A null row is a missing row; a null entry, index or value inside one is an error naming
    the column and the row (not numpy's NaN: 'cannot convert float NaN to integer')."""
    column = _sparse_with(entry)
    with pytest.raises(ValueError, match=rf"column 's', row 3: .*{says}"):
        SPARSE_CALLS[call](column)
    # Sliced: rows counted in the slice.
    with pytest.raises(ValueError, match=rf"column 's', row 2: .*{says}"):
        SPARSE_CALLS[call](pl.concat([column[:1], column])[2:])


ENGINE_SPARSE_CALLS: dict[str, Callable[[pl.Series], Any]] = {
    "SGDRegressor.fit": lambda s: pp.SGDRegressor(shuffle=False).fit(
        pl.DataFrame({"s": s}), np.zeros(len(s))
    ),
    "expand": lambda s: pl.DataFrame({"s": s}).select(pp.expand("s", bits=8)),
    "DoSClassifier.fit n_features": lambda s: pp.DoSClassifier(rank=2, n_features=4).fit(
        pl.DataFrame({"s": s}), [0, 1] * (len(s) // 2) + [0] * (len(s) % 2)
    ),
}


@pytest.mark.parametrize("call", ENGINE_SPARSE_CALLS)
@pytest.mark.parametrize(("entry", "says"), NULLS_INSIDE_A_ROW)
def test_the_engine_names_the_row_of_a_null_inside_a_sparse_row(
    call: str, entry: list[Any], says: str
) -> None:
    """The engine's reading of a sparse column names the row too (it named the column only),
    counted in the slice given; a null outside the slice is none of its business."""
    column = _sparse_with(entry)
    # No null row (training refuses one); one chunk (an expression is passed chunk by chunk).
    column = pl.concat([column[1:2], column[1:]]).rechunk()
    error = (ValueError, pl.exceptions.ComputeError)
    with pytest.raises(error, match=rf"column .s., row 3: .*{says}"):
        ENGINE_SPARSE_CALLS[call](column)
    with pytest.raises(error, match=rf"column .s., row 2: .*{says}"):
        ENGINE_SPARSE_CALLS[call](pl.concat([column[:1], column]).rechunk()[2:])
    ENGINE_SPARSE_CALLS[call](column[:3])


def test_a_null_sparse_row_is_still_a_missing_row() -> None:
    column = _sparse_with(None)
    assert pp.n_features(column) == 3
    assert pp.to_numpy(column, 3)[[0, 3]].tolist() == [[0.0] * 3, [0.0] * 3]


@pytest.mark.parametrize("dtype", [pl.UInt32, pl.UInt64])
def test_dos_names_an_index_beyond_its_limit_without_n_features(dtype: Any) -> None:
    """Without n_features the width is the largest index plus one: an index the model cannot
    take is named with its row and the limit, not as an n_features the user never gave."""
    column = _sparse_with([{"index": 2**32 - 1, "value": 1.0}]).cast(pp.sparse_dtype(dtype))
    with pytest.raises(ValueError, match=r"column 's', row 3: feature index 4294967295") as caught:
        pp.DoSClassifier(rank=2).fit(pl.DataFrame({"s": column}), [0, 1, 0, 1, 0])
    message = str(caught.value)
    assert "at most 4294967294 features" in message
    assert "n_features must be" not in message


@pytest.mark.parametrize("matrix", [sp.coo_array, sp.csr_matrix])
def test_from_numpy_points_a_scipy_matrix_to_from_scipy(matrix: Callable[[Any], Any]) -> None:
    with pytest.raises(TypeError, match=r"takes a dense 2-D numpy array.*from_scipy"):
        pp.from_numpy(matrix(np.eye(3)))
