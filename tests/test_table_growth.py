"""The weight table that grows as it fills (``bits=None``, the default): it grows where a fixed
table would saturate, predicts the same across a growth, saves and loads grown, stops at
``max_bits`` (and then warns as a fixed table does), and a fixed ``bits`` stays fixed."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import polars_poly as pp
import pytest

CROSSES = [("a", "b")]


def pairs_frame(n: int, seed: int, values: int = 700) -> pl.DataFrame:
    """Two fields of ``values`` values each whose label is a random effect of the value pair:
    about ``values**2`` crosses, far more than a table of 2**18 holds without collisions."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, values, n)
    b = rng.integers(0, values, n)
    effect = np.random.default_rng(99).standard_normal((values, values)) * 2.0
    p = 1.0 / (1.0 + np.exp(-effect[a, b]))
    y = (rng.random(n) < p).astype(np.int64)
    return pl.DataFrame({"a": [f"a{v}" for v in a], "b": [f"b{v}" for v in b], "y": y})


def log_loss(model: pp.SGDClassifier, frame: pl.DataFrame) -> float:
    p = np.clip(model.predict_proba(frame.drop("y"))[:, 1], 1e-12, 1 - 1e-12)
    y = frame["y"].to_numpy()
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


@pytest.fixture(scope="module")
def data() -> tuple[pl.DataFrame, pl.DataFrame]:
    return pairs_frame(600_000, 1), pairs_frame(50_000, 2)


@pytest.fixture(scope="module")
def fitted(data: tuple[pl.DataFrame, pl.DataFrame]) -> dict[str, pp.SGDClassifier]:
    train, _ = data
    models = {}
    for name, params in {
        "growing": {},
        "fixed 18": {"bits": 18},
        "fixed 24": {"bits": 24},
        "capped 19": {"max_bits": 19},
    }.items():
        model = pp.SGDClassifier(loss="logistic", interactions=CROSSES, shuffle=False, **params)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(train, "y")
        model.caught_ = [str(w.message) for w in caught if w.category is pp.TableSaturationWarning]
        models[name] = model
    return models


def test_the_default_table_grows_where_a_fixed_one_saturates(data, fitted) -> None:
    _, test = data
    growing, fixed18, fixed24 = fitted["growing"], fitted["fixed 18"], fitted["fixed 24"]
    assert growing.get_params()["bits"] is None
    assert 18 < growing.bits_ <= 24
    assert fixed18.bits_ == 18 and fixed24.bits_ == 24
    # The fixed table of 2**18 warns; the growing one does not need to.
    assert growing.caught_ == [] and fixed24.caught_ == []
    assert len(fixed18.caught_) == 1 and "bits=" in fixed18.caught_[0]
    assert growing.table_load_ < 0.10 < fixed18.table_load_
    losses = {name: log_loss(model, test) for name, model in fitted.items()}
    assert losses["growing"] < losses["fixed 18"] - 0.01, losses
    assert losses["growing"] < losses["fixed 24"] + 0.005, losses


def test_a_growing_table_stops_at_max_bits_and_then_warns(fitted) -> None:
    capped = fitted["capped 19"]
    assert capped.bits_ == 19
    [message] = capped.caught_
    assert "grew to its largest size (max_bits=19)" in message, message
    # The setting to raise, to a size that holds the ~490k crosses.
    assert "what they say. max_bits=2" in message, message


def test_a_grown_model_saves_loads_and_goes_on_growing(data, fitted, tmp_path) -> None:
    train, test = data
    growing = fitted["growing"]
    path = tmp_path / "grown.ppm"
    growing.save(path)
    loaded = pp.load_model(path)
    assert loaded.get_params()["bits"] is None
    assert loaded.get_params()["max_bits"] == 24
    assert loaded.bits_ == growing.bits_
    np.testing.assert_array_equal(
        loaded.predict_proba(test.drop("y")), growing.predict_proba(test.drop("y"))
    )
    # A model that learns on starts from where it was, on the same table.
    small = pp.SGDClassifier(loss="logistic", interactions=CROSSES, shuffle=False)
    small.fit(train[:5_000], "y")
    assert small.bits_ == 18
    for k in range(5_000, 600_000, 100_000):
        small.partial_fit(train[k : k + 100_000], "y")
    assert small.bits_ > 18


def test_a_growing_model_hashes_strings_as_its_largest_table_would() -> None:
    """A string's feature must stay the same as the table grows: a growing model hashes strings
    into ``max_bits`` (a fixed one into ``bits``), as ``hash_features`` does with those bits."""
    train = pairs_frame(5_000, 3, values=30)
    test = pairs_frame(1_000, 4, values=30).drop("y")
    for params, bits in (({}, 24), ({"max_bits": 20}, 20), ({"bits": 18}, 18)):

        def hashed(frame: pl.DataFrame, bits: int = bits) -> pl.DataFrame:
            return frame.with_columns(pp.hash_features(c, bits=bits).alias(c) for c in "ab")

        model = pp.SGDClassifier(loss="logistic", interactions=CROSSES, **params)
        twin = pp.SGDClassifier(loss="logistic", interactions=CROSSES, **params)
        model.fit(train, "y")
        twin.fit(hashed(train), "y")
        assert model.bits_ == twin.bits_ == min(bits, 18)
        np.testing.assert_array_equal(model.predict_proba(test), twin.predict_proba(hashed(test)))


def test_table_options_are_checked_by_name() -> None:
    with pytest.raises(ValueError, match="max_bits must be an integer in"):
        pp.SGDRegressor(max_bits=40).fit(pl.DataFrame({"x": [1.0], "y": [1.0]}), "y")
    with pytest.raises(ValueError, match="bits must be an integer in"):
        pp.SGDRegressor(bits=0).fit(pl.DataFrame({"x": [1.0], "y": [1.0]}), "y")
