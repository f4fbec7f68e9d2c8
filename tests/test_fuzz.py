"""Fuzzing (issue 22): the readers, the model loader and the expressions on random and hostile
input either succeed or raise an ordinary exception naming the problem: never a panic
(``PanicException``), an internal error, a crash or a hang.

A short run is part of ``make test``; a long one is
``POLARS_POLY_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz.py`` (examples per target).
"""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.exceptions import PolarsError

EXAMPLES = int(os.environ.get("POLARS_POLY_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# What bad input may raise. A PanicException is a BaseException, so it is never among these;
# an internal error is a RuntimeError / ComputeError whose message says so (checked below).
ORDINARY = (ValueError, TypeError, OverflowError, MemoryError, OSError, PolarsError)


def outcome(run) -> object:
    """Runs ``run``; returns its result, or the ordinary exception it raised."""
    try:
        return run()
    except ORDINARY as error:
        message = str(error)
        assert "panicked" not in message and "internal error" not in message, message
        assert message, f"{type(error).__name__} without a message"
        return error


# Lines near the LIBSVM and VW grammars: the characters they use, numbers of every shape.
NUMBER = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", "-", "+3", "1_0", "1e", "1e400", "0x10", "nan", "-inf", ".", "1.5.2"]),
)
TOKEN = st.one_of(
    NUMBER,
    st.builds(lambda i, v: f"{i}:{v}", NUMBER, NUMBER),
    st.builds(lambda q: f"qid:{q}", NUMBER),
    st.sampled_from(["|", "|a", "|ns:2", "'tag", ":", "::", "|a:b:c", "\t", "é", "\x00", "#"]),
    st.text(max_size=6),
)
LINE = st.lists(TOKEN, max_size=8).map(" ".join)
TEXT = st.lists(LINE, max_size=12).map("\n".join)


@FUZZ
@given(text=TEXT, zero_based=st.sampled_from([True, False, "auto"]))
def test_read_libsvm_never_panics(tmp_path: Path, text: str, zero_based: object) -> None:
    path = tmp_path / "fuzz.svm"
    path.write_text(text, encoding="utf-8")
    result = outcome(lambda: pp.read_libsvm(path, zero_based=zero_based))
    if isinstance(result, pl.DataFrame):
        values = result["features"].explode().struct.field("value").drop_nulls()
        assert values.is_finite().all()
        assert result["label"].is_finite().all()


@FUZZ
@given(text=TEXT, bits=st.integers(1, 32))
# A header field with more after its number (`0:`) is read as Vowpal Wabbit reads it, warned.
@pytest.mark.filterwarnings("ignore:line .* as Vowpal Wabbit reads it:UserWarning")
def test_read_vw_never_panics(tmp_path: Path, text: str, bits: int) -> None:
    path = tmp_path / "fuzz.vw"
    path.write_text(text, encoding="utf-8")
    outcome(lambda: pp.read_vw(path, bits=bits))


@pytest.fixture(scope="module")
def saved_models(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[bytes, np.ndarray]]:
    """Model files of several kinds, and a batch to score with them."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 6))
    y = np.sign(X[:, 0] * X[:, 1])
    models = [
        pp.SGDRegressor(expansion="quadratic", l1=1e-4).fit(X, y),
        pp.SGDClassifier(bits=10).fit(X, y),
        pp.SGDClassifier(expansion=pp.Apple(alpha=0.5)).fit(X, y),
        pp.DoSClassifier(rank=2).fit(X, y),
        pp.PassiveAggressiveClassifier().fit(X, y),
    ]
    folder = tmp_path_factory.mktemp("models")
    saved = []
    for k, model in enumerate(models):
        path = folder / f"{k}.model"
        model.save(path)
        saved.append((path.read_bytes(), X))
    return saved


@FUZZ
@given(data=st.data())
def test_mutated_model_files_are_rejected_or_usable(
    tmp_path: Path, saved_models: list[tuple[bytes, np.ndarray]], data: st.DataObject
) -> None:
    original, X = data.draw(st.sampled_from(saved_models))
    mutated = bytearray(original)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(mutated) - 5))
        hostile = data.draw(
            st.one_of(
                st.binary(min_size=1, max_size=8),
                st.sampled_from([np.nan, np.inf, -1.0, -1e300, 1e300, 0.0]).map(
                    lambda v: np.float64(v).tobytes()
                ),
            )
        )
        mutated[at : at + len(hostile)] = hostile
    if data.draw(st.booleans()):
        # Sealed again: the checksum cannot tell; the field checks must.
        body = bytes(mutated[:-4])
        mutated[-4:] = zlib.crc32(body).to_bytes(4, "little")
    path = tmp_path / "mutated.model"
    path.write_bytes(bytes(mutated))
    model = outcome(lambda: pp.load_model(path))
    if isinstance(model, Exception):
        assert isinstance(model, ValueError), f"{type(model).__name__}: {model}"
        return
    scores = outcome(lambda: model.predict(X))
    if isinstance(scores, np.ndarray) and scores.dtype.kind == "f":
        assert np.isfinite(scores).all()


DTYPES = [
    pl.Boolean,
    pl.Int8,
    pl.Int64,
    pl.UInt32,
    pl.Float32,
    pl.Float64,
    pl.Decimal(12, 3),
    pl.String,
    pl.Categorical,
    pl.List(pl.String),
    pl.List(pl.Float64),
    pl.Date,
    pl.Binary,
    pl.Null,
]
VALUE = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.integers(-(2**63), 2**63 - 1),
    st.text(max_size=5),
)


@FUZZ
@given(
    dtype=st.sampled_from(DTYPES),
    values=st.lists(VALUE, max_size=20),
    expression=st.sampled_from(["to_sparse", "hash_features", "expand"]),
    streaming=st.booleans(),
)
def test_expressions_on_random_columns_never_panic(
    dtype: pl.DataType, values: list, expression: str, streaming: bool
) -> None:
    try:
        column = pl.Series("c", values, strict=False).cast(dtype, strict=False)
    except (PolarsError, TypeError, ValueError, OverflowError):
        return  # Polars itself cannot build this column
    if expression == "to_sparse":
        expr = pp.to_sparse("c")
    elif expression == "hash_features":
        expr = pp.hash_features("c", bits=12)
    else:
        expr = pp.expand(pp.to_sparse("c"), n_features=1, degree=3)
    query = pl.LazyFrame({"c": column}).select(expr)
    result = outcome(lambda: query.collect(engine="streaming" if streaming else "auto"))
    if isinstance(result, pl.DataFrame):
        values = result.to_series().explode().struct.field("value").drop_nulls()
        assert values.is_finite().all()


def _key_paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value in decoded JSON (the first three items of a list)."""
    paths = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            paths += _key_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for k, item in enumerate(value[:3]):
            paths += _key_paths(item, (*prefix, k))
    return paths


HOSTILE_JSON = [None, [], {}, "x", "", -1, 0, 1e300, True, [1, 2], {"a": 1}, [[1]]]


def _tampered_estimators() -> list[tuple[str, object, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 3))
    y2, y3 = (X[:, 0] > 0).astype(int), np.digitize(X[:, 1], [-0.5, 0.5])
    frame = pl.DataFrame({"a": ["p", "q", "r"] * 40, "b": X[:, 0], "y": y2})
    return [
        ("SGDRegressor", pp.SGDRegressor(progress=False).fit(X, X[:, 0]), X, X[:, 0]),
        ("SGDClassifier", pp.SGDClassifier(progress=False).fit(X, y2), X, y2),
        ("one-against-all", pp.SGDClassifier(progress=False).fit(X, y3), X, y3),
        (
            "apple on a frame",
            pp.SGDClassifier(progress=False, expansion="apple").fit(frame, "y"),
            frame.drop("y"),
            y2,
        ),
        ("DoSClassifier", pp.DoSClassifier(rank=2).fit(X, y3), X, y3),
        ("PassiveAggressiveClassifier", pp.PassiveAggressiveClassifier().fit(X, y2), X, y2),
    ]


@pytest.mark.parametrize("case", range(6))
def test_tampered_estimator_text_is_refused_at_load_or_works(case: int) -> None:
    """Every value of the estimator text a model file keeps beside the engine's sections,
    replaced by each hostile JSON value (a file edited by hand and resealed): loading raises
    ValueError naming the damage, or the model predicts, learns and pickles; never a
    TypeError, KeyError or IndexError later."""
    import json
    import pickle

    from polars_poly._persist import estimator_from

    name, estimator, X, y = _tampered_estimators()[case]
    model = estimator._fitted_model()  # type: ignore[attr-defined]
    text = estimator._estimator_text()  # type: ignore[attr-defined]
    outcomes = {"refused": 0, "works": 0}
    for path in _key_paths(json.loads(text)):
        for hostile in HOSTILE_JSON:
            state = json.loads(text)
            if not path:
                state = hostile
            else:
                inner = state
                for key in path[:-1]:
                    inner = inner[key]
                inner[path[-1]] = hostile
            edited = json.dumps(state)
            engine, stored = pp._internal.model_from_bytes(model.to_bytes(edited))
            try:
                loaded = estimator_from(engine, stored)
            except ValueError as error:
                assert "damaged" in str(error) or "estimator" in str(error), error
                outcomes["refused"] += 1
                continue
            # A refusal naming the option the edit broke is fine; no other kind of error is.
            for method, args in (("predict", (X,)), ("partial_fit", (X, y))):
                try:
                    getattr(loaded, method)(*args)
                except (ValueError, PolarsError) as error:
                    assert "internal error" not in str(error), error
                except TypeError as error:  # a column of a kind the edited layout refuses
                    assert str(error).startswith("column "), error
            pickle.loads(pickle.dumps(loaded))
            outcomes["works"] += 1
    assert outcomes["refused"] > 0 and outcomes["works"] > 0, (name, outcomes)


@pytest.mark.parametrize("kind", ["dos", "dos one-vs-rest", "pa"])
def test_resealed_classifier_sections_load_refused_or_learn_without_nan(
    tmp_path: Path, kind: str
) -> None:
    """The passive-aggressive classifiers' section edited at every third byte (a NaN, a value
    beyond f32, f64's largest) and resealed with a valid checksum: the file is refused, or the
    model scores finite values and learns on, or refuses a row naming it; never a panic, a NaN
    score or a model left unusable."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((100, 3))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    model = {
        "dos": pp.DoSClassifier(rank=2),
        "dos one-vs-rest": pp.DoSClassifier(rank=1, multiclass="ovr", averaging=30),
        "pa": pp.PassiveAggressiveClassifier(),
    }[kind].fit(X, y)
    path = tmp_path / "model"
    model.save(path)
    original = path.read_bytes()
    hostile = [np.float64(np.nan).tobytes(), np.float64(1e39).tobytes(), b"\xff" * 7 + b"\x7f"]
    counts = {"refused": 0, "usable": 0, "refuses a row": 0}
    for at in range(0, len(original) - 12, 3):
        for value in hostile:
            edited = bytearray(original)
            edited[at : at + 8] = value
            edited[-4:] = zlib.crc32(bytes(edited[:-4])).to_bytes(4, "little")
            path.write_bytes(bytes(edited))
            try:
                loaded = pp.load_model(path)
            except ValueError:
                counts["refused"] += 1
                continue
            try:
                assert np.isfinite(loaded.decision_function(X)).all()
                loaded.partial_fit(X, y)
                assert np.isfinite(loaded.decision_function(X)).all()
                counts["usable"] += 1
            except ValueError as error:
                assert re.match(r"row \d+: ", str(error)), error
                counts["refuses a row"] += 1
                loaded.predict(X[:0])  # still usable (no poisoned lock)
    assert counts["refused"] > 0 and counts["usable"] > 0, counts
