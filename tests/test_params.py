"""The option sets: one typed description per set (names, defaults, types, docs), the apple
parameter object, the engine's registries, the error map and the files of polars-poly 0.1."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import polars_poly as pp
import pytest
import scipy.sparse as sp
from polars_poly._params import fields
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

LEGACY = Path(__file__).parent / "data" / "legacy_v2"


def hidden_product(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    return X, X[:, 0] * X[:, 1] + 0.01 * rng.standard_normal(n)


def test_apple_settings_are_nested_parameters_for_grid_search() -> None:
    X, y = hidden_product(3_000, 1)
    model = pp.SGDRegressor(expansion=pp.Apple(alpha=0.3))
    params = model.get_params()
    assert params["expansion__alpha"] == 0.3 and params["expansion__ranking"] == "auto"
    assert params["expansion__field_crosses"] == "auto"
    copy = clone(model)
    assert copy.expansion is not model.expansion and copy.expansion.alpha == 0.3
    copy.set_params(expansion__alpha=0.7, expansion__ranking="ssm")
    assert model.expansion.alpha == 0.3, "set_params on a clone leaves the original alone"
    grid = {"expansion__alpha": [0.5, 1.0], "expansion__ranking": ["magnitude", "ssm"]}
    search = GridSearchCV(pp.SGDRegressor(expansion=pp.Apple()), grid, cv=2).fit(X, y)
    assert set(search.best_params_) == set(grid)
    assert search.best_estimator_.n_expansions_ == 5


def test_apple_string_means_the_defaults() -> None:
    X, y = hidden_product(2_000, 2)
    by_name = pp.SGDRegressor(expansion="apple").fit(X, y)
    by_object = pp.SGDRegressor(expansion=pp.Apple()).fit(X, y)
    np.testing.assert_array_equal(by_name.predict(X), by_object.predict(X))


def test_nested_settings_of_the_apple_string_make_it_the_object() -> None:
    """``GridSearchCV`` over ``clf__expansion__alpha`` with ``expansion="apple"`` (a string has
    no settings): the string becomes the ``Apple()`` it means, then takes the setting."""
    from sklearn.pipeline import Pipeline

    X, y = hidden_product(600, 2)
    pipeline = Pipeline([("clf", pp.SGDRegressor(expansion="apple", progress=False))])
    search = GridSearchCV(pipeline, {"clf__expansion__alpha": [0.5, 1.0]}, cv=2).fit(X, y)
    best = search.best_estimator_["clf"].expansion
    assert repr(best) == repr(pp.Apple(alpha=search.best_params_["clf__expansion__alpha"]))
    both = pp.SGDRegressor().set_params(expansion="apple", expansion__alpha=0.25)
    assert repr(both.expansion) == repr(pp.Apple(alpha=0.25))
    assert pp.SGDRegressor(expansion="apple").get_params()["expansion"] == "apple"


def test_docstrings_list_every_option_with_its_default_and_the_registries() -> None:
    for cls in (pp.SGDRegressor, pp.SGDClassifier):
        doc = cls.__doc__ or ""
        for f in fields(cls):
            assert f"    {f.name} : " in doc, (cls.__name__, f.name)
        assert all(repr(loss) in doc for loss in pp.LOSSES)
    assert "eta0 : float, default=0.5" in (pp.SGDRegressor.__doc__ or "")
    assert "loss : str, default='logistic'" in (pp.SGDClassifier.__doc__ or "")
    doc = pp.Apple.__doc__ or ""
    assert "alpha : float, default=1.0" in doc
    assert all(repr(name) in doc for name in pp.RANKINGS + pp.SCHEDULES + pp.IDENTITIES)


def test_registries_come_from_the_engine() -> None:
    assert {"squared", "logistic", "hinge", "quantile"} <= set(pp.LOSSES)
    assert {"magnitude", "max_magnitude", "ssm"} <= set(pp.RANKINGS)
    assert {"auto", "epochs", "doubling"} <= set(pp.SCHEDULES)
    assert set(pp.IDENTITIES) == {"canonical", "path"}
    X, y = hidden_product(200, 3)
    with pytest.raises(ValueError, match=r'loss must be one of \[.*"quantile".*\], got "huber"'):
        pp.SGDRegressor(loss="huber").fit(X, y)
    with pytest.raises(ValueError, match=r"ranking must be one of .*max_magnitude"):
        pp.SGDRegressor(expansion=pp.Apple(ranking="largest")).fit(X, y)


def test_wrong_types_are_type_errors_naming_the_option() -> None:
    X, y = hidden_product(100, 4)
    with pytest.raises(TypeError, match="bits must be an integer, got '18'"):
        pp.SGDRegressor(bits="18").fit(X, y)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="alpha must be a number, got 'big'"):
        pp.SGDRegressor(expansion=pp.Apple(alpha="big")).fit(X, y)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="adaptive must be True or False"):
        pp.SGDRegressor(adaptive=1).fit(X, y)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1, got 0"):
        pp.SGDRegressor(batch_size=0).fit(X, y)
    with pytest.raises(ValueError, match=r"average_tail must be a number in \[0, 1\], got 2"):
        pp.SGDRegressor(average_tail=2).fit(X, y)


def test_no_parameter_shares_a_scikit_learn_name_with_another_meaning() -> None:
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    ours = {f.name for f in fields(pp.SGDRegressor)}
    theirs = set(SGDRegressor().get_params()) | set(SGDClassifier().get_params())
    # The names both have, each meaning the same thing in both: the loss function, the initial
    # learning rate, the exponent of its inverse-scaling decay, shuffling each pass and its
    # seed, and passes without improvement before stopping.
    assert ours & theirs == {
        "loss",
        "eta0",
        "power_t",
        "shuffle",
        "random_state",
        "n_iter_no_change",
    }
    X, y = hidden_product(100, 5)
    # scikit-learn's learning-rate schedule and regularization strength are not ours: naming
    # them is an error that says which parameter, not a silently different model.
    with pytest.raises(TypeError, match="learning_rate"):
        pp.SGDClassifier(learning_rate="optimal").fit(X, y > 0.2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="alpha"):
        pp.SGDClassifier(alpha=1e-4).fit(X, y > 0.2)  # type: ignore[call-arg]


def test_missing_files_raise_file_not_found_everywhere(tmp_path: Path) -> None:
    missing = tmp_path / "missing.bin"
    calls = [
        lambda: pp.load_model(missing),
        lambda: pp.SGDRegressor.load(missing),
        lambda: pp.read_libsvm(missing),
        lambda: pp.read_vw(missing),
        lambda: pp.datasets.read_mnist(missing, missing),
    ]
    for call in calls:
        with pytest.raises(FileNotFoundError, match="missing.bin"):
            call()


def test_files_of_polars_poly_0_1_load_with_todays_parameters() -> None:
    expected = json.loads((LEGACY / "expected_predictions.json").read_text())
    rng_rows = _legacy_rows()
    model = pp.load_model(LEGACY / "linear_squared.model")
    assert isinstance(model, pp.SGDRegressor)
    params = model.get_params()
    # The old `early_stopping` is today's `n_iter_no_change`; the old `learning_rate` is the
    # engine's stored eta0.
    assert params["n_iter_no_change"] == 3 and params["eta0"] == 0.5 and params["bits"] == 12
    assert params["expansion"] == "linear" and params["loss"] == "squared"
    np.testing.assert_array_equal(model.predict(rng_rows), expected["linear_squared"])
    apple = pp.load_model(LEGACY / "apple_canonical.model")
    # Trained with the defaults of its day: the ranking now called by its name, no catch-up.
    assert repr(apple.get_params()["expansion"]) == "Apple(catch_up=0, ranking='magnitude')"
    np.testing.assert_array_equal(apple.predict(rng_rows), expected["apple_canonical"])
    path = pp.load_model(LEGACY / "apple_path.model")
    assert isinstance(path.expansion, pp.Apple) and path.expansion.identity == "path"
    assert len(path.monomials()) == 23


FORMAT_9 = Path(__file__).parent / "data" / "format9"


@pytest.mark.parametrize(
    "name", ["regressor", "apple_fields", "one_against_all", "dos", "passive_aggressive"]
)
def test_format_9_models_predict_as_trained(name: str, tmp_path: Path) -> None:
    """Files of format 9 (commit 822cc86, `tests/data/format9/make_models.py`) hold each
    component's options by position; format 10 stores them by name. Each kind of model loads,
    predicts what it did then, and saved again (in today's format) and loaded, still does."""
    spec = importlib.util.spec_from_file_location("make_models", FORMAT_9 / "make_models.py")
    assert spec is not None and spec.loader is not None
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    data = maker.rows()
    _, inputs, method = maker.models(data)[name]
    expected = json.loads((FORMAT_9 / "expected.json").read_text())[name]
    model = pp.load_model(FORMAT_9 / f"{name}.model")
    np.testing.assert_array_equal(getattr(model, method)(inputs.head(60)), expected)
    model.save(tmp_path / "again")
    version = (tmp_path / "again").read_bytes()[8:12]
    assert version != (FORMAT_9 / f"{name}.model").read_bytes()[8:12]
    again = pp.load_model(tmp_path / "again")
    np.testing.assert_array_equal(getattr(again, method)(inputs.head(60)), expected)
    # Option objects (an old apple's FieldApple(max_fields=2)) compare by what they hold.
    assert {k: repr(v) for k, v in again.get_params().items()} == {
        k: repr(v) for k, v in model.get_params().items()
    }


def _legacy_rows() -> sp.csr_array:
    """The first 50 rows the legacy files were trained on (8 binary features; the generator of
    src/apple/tests.rs, seed 7)."""
    state = 7
    rows = []
    for _ in range(50):
        row = []
        for _ in range(8):
            state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
            row.append(1.0 if (state >> 11) / 2**53 < 0.5 else 0.0)
        for _ in range(4):
            state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        rows.append(row)
    return sp.csr_array(np.array(rows))


# Defaults the Python layer sets apart from the engine's, each with its reason.
OWN_DEFAULTS = {
    # The engine keeps Vowpal Wabbit's order; the estimators shuffle as scikit-learn's do.
    ("fit", "shuffle"),
    # apple's default races two rankings, which the Python layer runs (polars_poly.ranking_race);
    # the engine learns one ranking, "typical" when none is named.
    ("apple", "ranking"),
}


def test_python_defaults_equal_the_engines() -> None:
    """Every option both layers describe has one default: the Python declaration's equals the
    Rust struct's (``Default``), but for the listed, reasoned exceptions."""
    from polars_poly import _internal
    from polars_poly._params import engine_options, fit_options

    rust = _internal.engine_defaults()
    python = {
        "learner": engine_options(pp.SGDRegressor()),
        "fit": fit_options(pp.SGDRegressor()),
        "apple": engine_options(pp.Apple()),
        "field_apple": engine_options(pp.FieldApple()),
        "ffm": engine_options(pp.FFM()),
    }
    compared = 0
    for owner, options in python.items():
        assert options, owner
        for name, value in options.items():
            assert name in rust[owner], f"{owner}.{name} is not an engine option"
            if (owner, name) in OWN_DEFAULTS:
                assert value != rust[owner][name], f"{owner}.{name} agrees now: drop the exception"
                continue
            assert value == rust[owner][name], (owner, name, value, rust[owner][name])
            compared += 1
    assert compared >= 25
    # The fit options the engine takes are exactly those the estimators declare for it.
    assert set(python["fit"]) == set(rust["fit"])
