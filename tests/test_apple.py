"""apple (expansion="apple"): discovery of a hidden monomial, readable monomials, schedules,
persistence, Polars scoring, determinism and bad parameters."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from sklearn.base import clone


def hidden_monomial(n: int, seed: int, noise: float = 0.05) -> pl.DataFrame:
    """Eight binary columns; the target is age*hours*kids (the paper's §2.3 example) + noise."""
    rng = np.random.default_rng(seed)
    names = ["age", "hours", "kids", "a", "b", "c", "d", "e"]
    bits = (rng.random((n, len(names))) < 0.5).astype(np.float64)
    frame = pl.DataFrame({name: bits[:, k] for k, name in enumerate(names)})
    target = bits[:, 0] * bits[:, 1] * bits[:, 2] + noise * rng.normal(size=n)
    return frame.with_columns(y=pl.Series(target))


def mse(model: pp.SGDRegressor, frame: pl.DataFrame) -> float:
    prediction = model.predict(frame.drop("y"))
    return float(np.mean((prediction - frame["y"].to_numpy()) ** 2))


def test_apple_finds_the_hidden_monomial_and_names_it() -> None:
    train, test = hidden_monomial(40_000, 0), hidden_monomial(5_000, 1)
    linear = pp.SGDRegressor().fit(train, "y")
    apple = pp.SGDRegressor(expansion="apple").fit(train, "y")
    noise = 0.05**2
    assert mse(linear, test) > noise + 0.02
    assert mse(apple, test) < 3 * noise
    monomials = apple.monomials()
    assert monomials.columns == ["monomial", "degree", "expansion", "weight", "factors"]
    assert apple.n_expansions_ == 5
    assert apple.n_parents_ == monomials.height
    # The first expansion picks base features; a product of two of age/hours/kids follows.
    names = set(monomials["monomial"].to_list())
    assert {"age*hours", "age*kids", "hours*kids"} & names, names
    first = monomials.filter(pl.col("expansion") == 1)
    assert (first["degree"] == 1).all()
    assert (monomials["degree"] <= monomials["expansion"]).all()
    row = monomials.filter(pl.col("degree") == 2).row(0, named=True)
    assert row["monomial"] == "*".join(row["factors"])


@pytest.mark.parametrize(
    ("ranking", "fallback"),
    [
        ("magnitude", False),
        ("max_magnitude", False),
        ("ssm", False),
        ("magnitude", True),
        ("max_magnitude", True),
    ],
)
def test_every_ranking_finds_the_hidden_monomial(ranking: str, fallback: bool) -> None:
    train, test = hidden_monomial(30_000, 11), hidden_monomial(3_000, 12)
    model = pp.SGDRegressor(expansion=pp.Apple(ranking=ranking, fallback=fallback))
    model.fit(train, "y")
    assert mse(model, test) < 3 * 0.05**2, ranking
    assert model.get_params()["expansion__ranking"] == ranking
    assert model.get_params()["expansion__fallback"] == fallback


def test_monomial_names_show_powers_and_matrix_columns() -> None:
    rng = np.random.default_rng(2)
    X = rng.random((20_000, 3))
    y = X[:, 0] * X[:, 1] ** 2
    model = pp.SGDRegressor(expansion=pp.Apple(ranking="ssm", fallback=True)).fit(X, y)
    names = model.monomials()["monomial"].to_list()
    assert all(part.split("^")[0] in {"x0", "x1", "x2"} for n in names for part in n.split("*"))
    assert any("^" in n for n in names), names
    with pytest.raises(ValueError, match="expansion='linear'"):
        pp.SGDRegressor().fit(X, y).monomials()


def test_schedules_in_memory_lazy_and_partial_fit(tmp_path: Path) -> None:
    frame = hidden_monomial(6_000, 3)
    # In memory: the run length is known, 6 epochs -> 5 expansions.
    assert pp.SGDRegressor(expansion="apple").fit(frame, "y").n_expansions_ == 5
    # A LazyFrame streams: doubling by default (1000, 2000, 4000), epochs when asked.
    path = tmp_path / "data.parquet"
    frame.write_parquet(path)
    lazy = pl.scan_parquet(path)
    auto = pp.SGDRegressor(expansion="apple", batch_size=500).fit(lazy, "y")
    assert auto.n_expansions_ == 3
    epochs = pp.SGDRegressor(expansion=pp.Apple(schedule="epochs"), batch_size=500)
    assert epochs.fit(lazy, "y").n_expansions_ == 5
    # partial_fit is a stream: doubling.
    model = pp.SGDRegressor(expansion="apple")
    for start in range(0, 2_500, 500):
        model.partial_fit(frame.slice(start, 500), "y")
    assert model.n_expansions_ == 2
    # With passes, the epochs span all passes.
    two = pp.SGDRegressor(expansion="apple", passes=2, holdout=0).fit(frame, "y")
    assert two.n_expansions_ == 5


def test_save_load_pickle_and_predict_expr_agree(tmp_path: Path) -> None:
    train, test = hidden_monomial(8_000, 4), hidden_monomial(500, 5)
    model = pp.SGDRegressor(expansion=pp.Apple(alpha=0.5), bits=20).fit(train, "y")
    expected = model.predict(test.drop("y"))
    path = tmp_path / "apple.model"
    model.save(path)
    loaded = pp.load_model(path)
    assert isinstance(loaded, pp.SGDRegressor)
    np.testing.assert_array_equal(loaded.predict(test.drop("y")), expected)
    assert loaded.monomials().equals(model.monomials())
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(test.drop("y")), expected)
    scored = test.lazy().select(model.predict_expr().alias("p")).collect(engine="streaming")
    np.testing.assert_allclose(scored["p"].to_numpy(), expected, rtol=0, atol=0)
    # Training continues after loading, with the parents kept.
    before = loaded.n_parents_
    loaded.partial_fit(train.slice(0, 2_000), "y")
    assert loaded.n_parents_ >= before


def test_training_is_deterministic_and_clone_keeps_parameters() -> None:
    frame = hidden_monomial(5_000, 6)
    model = pp.SGDRegressor(expansion=pp.Apple(alpha=0.75, ranking="ssm", max_degree=4))
    a = clone(model).fit(frame, "y")
    b = clone(model).fit(frame, "y")
    np.testing.assert_array_equal(a.predict(frame.drop("y")), b.predict(frame.drop("y")))
    assert a.monomials().equals(b.monomials())
    assert (a.monomials()["degree"] <= 3).all(), "parents stay below max_degree"
    params = clone(model).get_params()
    assert params["expansion__alpha"] == 0.75 and params["expansion__ranking"] == "ssm"
    assert params["expansion__max_degree"] == 4


def test_classifier_with_apple() -> None:
    # y = sign(x0·x1) on ±1 features: linear cannot do better than chance.
    rng = np.random.default_rng(7)
    X = rng.choice([-1.0, 1.0], size=(20_000, 6))
    labels = (X[:, 0] * X[:, 1] > 0).astype(int)
    model = pp.SGDClassifier(expansion="apple").fit(X, labels)
    linear = pp.SGDClassifier().fit(X, labels)
    assert model.score(X, labels) > 0.99
    assert linear.score(X, labels) < 0.6
    assert model.n_expansions_ == 5


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"alpha": 0.0}, "alpha must be"),
        ({"alpha": 3}, "alpha must be"),
        ({"ranking": "biggest"}, "ranking must be"),
        ({"schedule": "weekly"}, "schedule must be"),
        ({"max_degree": 9}, "max_degree must be"),
        ({"max_degree": 0}, "max_degree must be"),
        ({"identity": "sorted"}, "identity must be"),
    ],
)
def test_bad_apple_parameters_are_rejected(params: dict[str, object], message: str) -> None:
    frame = hidden_monomial(100, 8)
    with pytest.raises(ValueError, match=message):
        pp.SGDRegressor(expansion=pp.Apple(**params)).fit(frame, "y")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot be combined"):
        pp.SGDRegressor(expansion="apple", interactions=[("a", "b")]).fit(frame, "y")


def test_path_identity_is_vowpal_wabbits_rule_and_round_trips(tmp_path: Path) -> None:
    train, test = hidden_monomial(20_000, 9), hidden_monomial(1_000, 10)
    canonical = pp.SGDRegressor(expansion="apple").fit(train, "y")
    path = pp.SGDRegressor(expansion=pp.Apple(identity="path")).fit(train, "y")
    assert mse(path, test) < 3 * 0.05**2
    # Path identity emits a product once per path: more features per example than canonical.
    assert path.n_feature_updates_ > canonical.n_feature_updates_
    path.save(tmp_path / "path.model")
    loaded = pp.load_model(tmp_path / "path.model")
    assert loaded.get_params()["expansion__identity"] == "path"
    np.testing.assert_array_equal(loaded.predict(test.drop("y")), path.predict(test.drop("y")))


def test_catch_up_helps_a_short_run_and_is_kept_with_the_model(tmp_path: Path) -> None:
    # A short run: each expansion's new monomials have only the rest of the run to learn in;
    # catching up on the examples before the expansion gives them more.
    train, test = hidden_monomial(2_400, 11), hidden_monomial(2_000, 12)
    errors = {}
    for catch_up in (0, 2048):
        model = pp.SGDRegressor(expansion=pp.Apple(catch_up=catch_up), bits=20)
        errors[catch_up] = mse(model.fit(train, "y"), test)
    # The error above the noise's (0.05 ** 2), a deterministic run: 0.0013 against 0.0021.
    noise = 0.05**2
    assert errors[2048] - noise < 0.75 * (errors[0] - noise), errors
    model = pp.SGDRegressor(expansion=pp.Apple(catch_up=1000), bits=20).fit(train, "y")
    model.save(tmp_path / "caught_up.model")
    loaded = pp.load_model(tmp_path / "caught_up.model")
    assert loaded.get_params()["expansion__catch_up"] == 1000
    with pytest.raises(ValueError, match="catch_up"):
        pp.SGDRegressor(expansion=pp.Apple(catch_up=-1)).fit(train, "y")


@pytest.mark.parametrize("expansion", ["apple", "object"])
def test_nested_field_cross_settings_of_auto_make_it_the_object(expansion: str) -> None:
    """``field_crosses="auto"`` is a string, which has no settings: a nested setting
    (``expansion__field_crosses__max_fields``, as ``GridSearchCV`` sets it through a
    ``Pipeline``) first makes it the ``FieldApple()`` it stands for."""
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    def settings() -> pp.Apple | str:
        return "apple" if expansion == "apple" else pp.Apple()

    model = pp.SGDClassifier(expansion=settings())
    assert model.set_params(expansion__field_crosses__max_fields=2) is model
    assert repr(model.expansion) == repr(pp.Apple(field_crosses=pp.FieldApple(max_fields=2)))
    both = pp.Apple().set_params(field_crosses="auto", field_crosses__z=4.0)
    assert repr(both) == repr(pp.Apple(field_crosses=pp.FieldApple(z=4.0)))
    assert pp.Apple().get_params()["field_crosses"] == "auto", "no nested setting: unchanged"

    # A tiny frame of three categorical columns (three namespaces); label = A xor B.
    rng = np.random.default_rng(3)
    a, b, c = (rng.integers(0, 2, 400) for _ in range(3))
    frame = pl.DataFrame({"A": a.astype(str), "B": b.astype(str), "C": c.astype(str)})
    labels = a ^ b
    clf = pp.SGDClassifier(loss="logistic", bits=12, expansion=settings(), progress=False)
    pipeline = Pipeline([("clf", clf)])
    grid = {"clf__expansion__field_crosses__max_fields": [2, 3]}
    search = GridSearchCV(pipeline, grid, cv=2).fit(frame, labels)
    best = search.best_params_["clf__expansion__field_crosses__max_fields"]
    fields = search.best_estimator_["clf"].expansion.field_crosses
    assert isinstance(fields, pp.FieldApple) and fields.max_fields == best
    assert repr(clf.expansion) == repr(settings()), "the search leaves the original alone"
