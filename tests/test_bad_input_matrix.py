"""The bad-input matrix (issue 22): every estimator's fit and predict and the CSR expansion,
each given each kind of bad input, raise the expected exception with a message naming what is
wrong (the row, where a row is at fault), never a panic, an internal error or a silent result.
Cells where the input is in fact acceptable are listed as such, so a change of behaviour in any
cell fails here."""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
import scipy.sparse as sp

RNG = np.random.default_rng(0)
X = RNG.standard_normal((40, 4))
Y_SIGN = np.sign(RNG.standard_normal(40))
Y_REAL = RNG.standard_normal(40)


def _with(row: int, col: int, value: float) -> np.ndarray:
    Z = X.copy()
    Z[row, col] = value
    return Z


# name -> (input, {entry kind: expectation}); an expectation is "ok" or (exception, regex).
# Entry kinds: "fit", "predict" (of a model fitted on X), "expand" (expand_csr, degree 2).
ValueErr, TypeErr = ValueError, TypeError
BAD_X: dict[str, tuple[Any, dict[str, Any]]] = {
    "NaN": (_with(3, 1, np.nan), {"*": (ValueErr, r"row 3")}),
    "infinity": (_with(5, 2, np.inf), {"*": (ValueErr, r"row 5")}),
    "1e300": (
        _with(5, 2, 1e300),
        {"*": (ValueErr, r"row 5"), "expand": (ValueErr, r"row 5: .*overflow")},
    ),
    "complex": (X + 1j, {"*": ((ValueErr, TypeErr), r"[Cc]omplex")}),
    "strings": (X.astype(str), {"*": (TypeErr, r"numeric")}),
    "3-D": (X.reshape(40, 2, 2), {"*": (ValueErr, r"2-D array, got 3")}),
    "1-D": (X[:, 0], {"*": (ValueErr, r"2[-D]* ?[Dd]?.*array.*1")}),
    "no rows": (
        X[:0],
        {
            "fit": (ValueErr, r"0 sample|0 examples"),
            "predict": "ok",  # 0 predictions (scikit-learn refuses)
            "expand": "ok",
        },
    ),
    "no columns": (
        X[:, :0],
        {"fit": (ValueErr, r"0 feature"), "predict": (ValueErr, r"feature"), "expand": "ok"},
    ),
    "None": (None, {"*": (ValueErr, r"2-D array, got 0")}),
    "CSR with NaN": (sp.csr_matrix(_with(3, 1, np.nan)), {"*": (ValueErr, r"row 3")}),
    "frame of strings": (
        pl.DataFrame({"a": ["x"] * 40}),
        {
            "*": (TypeErr, r"'a' \(String\)|fitted on a matrix"),
            # The online learners hash a string column as they read it (a namespace).
            "fit:SGDRegressor": "ok",
            "fit:SGDClassifier": "ok",
            "expand": (TypeErr, r"numeric|sparse"),
        },
    ),
    # Acceptable inputs (converted as scikit-learn converts them).
    "booleans": (X > 0, {"*": "ok"}),
    "int8": ((X * 10).astype(np.int8), {"*": "ok"}),
    "COO matrix": (sp.coo_matrix(X), {"*": "ok"}),
    "list of lists": (X.tolist(), {"*": "ok"}),
    "object floats": (X.astype(object), {"*": "ok"}),
    "object strings": (
        np.where(np.arange(4) == 2, "a", X).astype(object),
        {"*": (TypeErr, r"numeric features, got an object array: .*'a'")},
    ),
}
BAD_Y: dict[str, tuple[Any, Any, Any]] = {
    # name -> (y, regressors' expectation, classifiers' expectation)
    "NaN": (
        np.where(np.arange(40) == 7, np.nan, Y_SIGN),
        (ValueErr, r"row 7"),
        (ValueErr, r"row 7"),
    ),
    "infinity": (
        np.where(np.arange(40) == 7, np.inf, Y_SIGN),
        (ValueErr, r"row 7"),
        (ValueErr, r"row 7"),
    ),
    "too short": (Y_SIGN[:30], (ValueErr, r"40 rows .*30"), (ValueErr, r"40 rows .*30")),
    "2-D": (
        np.c_[Y_SIGN, Y_SIGN],
        (ValueErr, r"1-D|1-dimensional"),
        (ValueErr, r"1-D|1-dimensional"),
    ),
    "None": (None, (ValueErr, r"requires y"), (ValueErr, r"requires y")),
    "complex": (Y_SIGN + 1j, (ValueErr, r"[Cc]omplex|numeric"), (ValueErr, r"[Cc]omplex")),
    "strings": (Y_SIGN.astype(str), (ValueErr, r"label type|numeric"), "ok"),
}
ESTIMATORS: dict[str, tuple[Callable[[], Any], np.ndarray, bool]] = {
    "SGDRegressor": (lambda: pp.SGDRegressor(), Y_REAL, False),
    "SGDClassifier": (lambda: pp.SGDClassifier(), Y_SIGN, True),
    "DoSClassifier": (lambda: pp.DoSClassifier(rank=2), Y_SIGN, True),
    "PassiveAggressiveClassifier": (lambda: pp.PassiveAggressiveClassifier(), Y_SIGN, True),
}


def _check(run: Callable[[], Any], expected: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if expected == "ok":
            run()
            return
        kinds, pattern = expected
        try:
            run()
        except BaseException as error:  # noqa: BLE001 - a panic is a BaseException
            message = str(error)
            assert isinstance(error, kinds), f"{type(error).__name__}: {message}"
            assert re.search(pattern, message), message
            assert "panicked" not in message and "internal error" not in message, message
        else:
            raise AssertionError(f"no error; expected {kinds} matching {pattern!r}")


def _expectation(table: dict[str, Any], kind: str, estimator: str = "") -> Any:
    return table.get(f"{kind}:{estimator}", table.get(kind, table.get("*")))


@pytest.mark.parametrize("estimator", list(ESTIMATORS))
@pytest.mark.parametrize("bad", list(BAD_X))
def test_fit_and_predict_on_bad_features(estimator: str, bad: str) -> None:
    make, y, _ = ESTIMATORS[estimator]
    value, table = BAD_X[bad]
    n = np.shape(value)[0] if value is not None and np.ndim(value) else 40
    _check(lambda: make().fit(value, y[:n]), _expectation(table, "fit", estimator))
    model = make().fit(X, y)
    _check(lambda: model.predict(value), _expectation(table, "predict", estimator))


@pytest.mark.parametrize("bad", list(BAD_X))
def test_expand_csr_on_bad_features(bad: str) -> None:
    value, table = BAD_X[bad]
    _check(lambda: pp.expand_csr(value, degree=2), _expectation(table, "expand"))


@pytest.mark.parametrize("estimator", list(ESTIMATORS))
@pytest.mark.parametrize("bad", list(BAD_Y))
def test_fit_on_bad_labels(estimator: str, bad: str) -> None:
    make, _, classifier = ESTIMATORS[estimator]
    y, for_regressors, for_classifiers = BAD_Y[bad]
    _check(lambda: make().fit(X, y), for_classifiers if classifier else for_regressors)


# ------------------------------------------------------------------------- option values
# Every option of every estimator and parameter object, given each kind of bad value: a
# TypeError or ValueError naming the option, unless the value is in fact acceptable (listed in
# ACCEPTED) or fails later for a reason of its own (listed in OTHER).
BAD_VALUES: dict[str, Any] = {
    "string": "x",
    "None": None,
    "list": [1],
    "huge": 2**70,
    "negative": -1,
    "NaN": math.nan,
    "bool": True,
    "float": 0.5,
}
OPTION_OWNERS: dict[str, tuple[type, Callable[[dict[str, Any]], Any], np.ndarray]] = {
    "SGDRegressor": (pp.SGDRegressor, lambda o: pp.SGDRegressor(**o), Y_REAL),
    "SGDClassifier": (pp.SGDClassifier, lambda o: pp.SGDClassifier(**o), Y_SIGN),
    "DoSClassifier": (pp.DoSClassifier, lambda o: pp.DoSClassifier(**o), Y_SIGN),
    "PassiveAggressiveClassifier": (
        pp.PassiveAggressiveClassifier,
        lambda o: pp.PassiveAggressiveClassifier(**o),
        Y_SIGN,
    ),
    "Apple": (pp.Apple, lambda o: pp.SGDRegressor(expansion=pp.Apple(**o)), Y_REAL),
    "FieldApple": (pp.FieldApple, lambda o: pp.SGDClassifier(expansion=pp.FieldApple(**o)), Y_SIGN),
    "FFM": (pp.FFM, lambda o: pp.SGDClassifier(ffm=pp.FFM(**o)), Y_SIGN),
}
_SGDS = ("SGDRegressor", "SGDClassifier")
_SGD_ACCEPTED = [
    "interactions=None", "eta0=huge", "eta0=float", "power_t=float", "initial_t=huge",
    "initial_t=float", "l1=huge", "l1=float", "l2=float", "adaptive=bool", "normalized=bool",
    "invariant=bool", "constant=bool", "shuffle=bool", "random_state=None", "average_tail=float",
    "features=string", "features=None", "categorical=None", "progress=None", "progress=bool",
    "quantile_tau=float", "field_scales=bool", "initial_weight=huge", "initial_weight=negative",
    "initial_weight=float", "ffm=None", "bits=None",
]  # fmt: skip
_PA_ACCEPTED = [
    "averaging=None", "C=huge", "C=float", "progress=None", "progress=bool", "n_features=None",
    "shuffle=bool", "random_state=None",
]  # fmt: skip
ACCEPTED = {
    *(f"{sgd}.{cell}" for sgd in _SGDS for cell in _SGD_ACCEPTED),
    *(f"{pa}.{cell}" for pa in ("DoSClassifier", "PassiveAggressiveClassifier")
      for cell in _PA_ACCEPTED),
    "Apple.alpha=float", "Apple.fallback=bool", "Apple.field_crosses=None",
    "FieldApple.budget=huge", "FieldApple.budget=float", "FieldApple.z=huge", "FieldApple.z=float",
    "FFM.fields=None", "FFM.learning_rate=float", "FFM.power_t=float",
    "FFM.initial_accumulator=huge", "FFM.initial_accumulator=float", "FFM.init_scale=float",
}  # fmt: skip
# A rate exponent of 2**70 makes the first step infinite; l2 of 2**70 the first score NaN.
OTHER = {
    **{f"{sgd}.power_t=huge": (ValueErr, r"row \d+: the update step overflows") for sgd in _SGDS},
    **{f"{sgd}.l2=huge": (ValueErr, r"row \d+: learning overflows") for sgd in _SGDS},
    # Latent values of 2**70 (a rate or a start that large) overflow the first products.
    "FFM.learning_rate=huge": (ValueErr, r"row \d+: the factorization's step overflows"),
    "FFM.init_scale=huge": (ValueErr, r"row \d+: learning overflows"),
}
OPTION_CELLS = [
    (owner, field.name, kind)
    for owner, (cls, _, _) in OPTION_OWNERS.items()
    for field in dataclasses.fields(cls)
    for kind in BAD_VALUES
]


@pytest.mark.parametrize(("owner", "option", "kind"), OPTION_CELLS)
def test_bad_option_values(owner: str, option: str, kind: str) -> None:
    _, make, y = OPTION_OWNERS[owner]
    key = f"{owner}.{option}={kind}"
    expected = "ok" if key in ACCEPTED else OTHER.get(key, ((TypeErr, ValueErr), rf"\b{option}\b"))
    _check(lambda: make({option: BAD_VALUES[kind]}).fit(X, y), expected)


def test_every_listed_cell_exists() -> None:
    cells = {f"{owner}.{option}={kind}" for owner, option, kind in OPTION_CELLS}
    assert ACCEPTED <= cells and set(OTHER) <= cells


# ------------------------------------------------------------------------ named columns
FRAME = pl.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": Y_SIGN})


@pytest.mark.parametrize("estimator", list(ESTIMATORS))
@pytest.mark.parametrize("lazy", [False, True])
def test_a_misnamed_target_column_is_named(estimator: str, lazy: bool) -> None:
    make, _, _ = ESTIMATORS[estimator]
    frame = FRAME.lazy() if lazy else FRAME
    _check(
        lambda: make().fit(frame, "lable"),
        (pl.exceptions.ColumnNotFoundError, r"y='lable' is not a column .*\['a', 'b', 'label'\]"),
    )
    model = make().fit(frame, "label")  # the same frame, the right name
    assert len(model.predict(FRAME.drop("label"))) == 40


def _fit_with(cls: type, name: str, value: Any) -> None:
    """Fits the estimator (or an estimator with the expansion) of class ``cls`` with option
    ``name`` set to ``value``, on data every option applies to."""
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(40, 3)))
    y = (X[:, 0] > 0.8).astype(int)
    if cls is pp.FieldApple:
        fields = pl.DataFrame({"a": pp.from_numpy(X), "b": pp.from_numpy(X)})
        pp.SGDClassifier(expansion=cls(**{name: value}), progress=False).fit(fields, y)
    elif cls is pp.FFM:
        pp.SGDClassifier(ffm=cls(**{name: value}), progress=False).fit(X, y)
    elif cls is pp.Apple:
        pp.SGDRegressor(expansion=cls(**{name: value}), progress=False).fit(X, y)
    else:
        cls(**{name: value}).fit(X, y)


DOCUMENTED_RANGES = [
    (cls, f)
    for cls in (pp.SGDRegressor, pp.Apple, pp.FieldApple, pp.FFM, pp.DoSClassifier)
    for f in dataclasses.fields(cls)
    if f.metadata.get("accepted")
]


@pytest.mark.parametrize(
    ("cls", "field"),
    DOCUMENTED_RANGES,
    ids=[f"{c.__name__}.{f.name}" for c, f in DOCUMENTED_RANGES],
)
def test_documented_ranges_are_what_the_engine_accepts(cls: type, field: Any) -> None:
    """The 'Accepted:' line of an option the engine checks says what the engine's error says."""
    accepted = field.metadata["accepted"]
    assert f"Accepted: {accepted}." in " ".join((cls.__doc__ or "").split())
    said = set()
    for value in (0,) if isinstance(field.default, int) else (math.nan, -1.0, 0.0):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _fit_with(cls, field.name, value)
        except (ValueError, TypeError) as error:
            found = re.search(rf"\b{field.name} must be (.*?), got", str(error))
            if found:
                said.add(found.group(1))
    assert said == {accepted}
