"""Field scales (``field_scales``): a learned scale per feature column and cross, on by default
with two or more sparse feature columns. What 'auto' turns on, what the scales learn on
eat-rate (docs/datasets.md), the scores they give, persistence, and where they are refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from polars_poly import synthetic

from tests.conftest import logloss_on


def hashed_eat_rate(n: int, seed: int) -> pl.DataFrame:
    data = synthetic.eat_rate(n, seed)
    fields = [c for c in data.columns if c != "label"]
    return data.select("label", *(pp.hash_features(f, bits=20).alias(f) for f in fields))


@pytest.fixture(scope="module")
def eat_rate() -> tuple[pl.DataFrame, pl.DataFrame]:
    data = hashed_eat_rate(330_000, 0)
    return data.head(300_000), data.tail(30_000)


def test_scales_learn_what_no_single_rate_does(eat_rate) -> None:
    train, test = eat_rate
    cross = {"loss": "logistic", "bits": 20, "interactions": [("A", "B")]}
    scaled = pp.SGDClassifier(**cross).fit(train, "label")  # 'auto': 12 columns
    plain = pp.SGDClassifier(**cross, field_scales=False).fit(train, "label")
    # Only the animal x food cross predicts; each of its million values is seen about once
    # here. Vowpal Wabbit's model at its default rate barely learns it.
    assert logloss_on(scaled, test) < logloss_on(plain, test) - 0.05
    scales = dict(scaled.field_scales_.iter_rows())
    assert set(scales) == {*"ABCDEFGHIJKL", "A*B"}
    noise = [scales[f] for f in "CDEFGHIJKL"]
    assert scales["A*B"] > 2 > 1 > max(noise), scales
    with pytest.raises(AttributeError, match="learns no field scales"):
        _ = plain.field_scales_


def test_auto_is_off_for_one_column_or_a_matrix() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2_000, 5))
    y = X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=2_000)
    frame = pl.DataFrame({"x": pp.from_numpy(X), "y": y})
    for data, target in ((X, y), (frame, "y")):
        auto = pp.SGDRegressor(expansion="apple").fit(data, target)
        off = pp.SGDRegressor(expansion="apple", field_scales=False).fit(data, target)
        inputs = data if isinstance(data, np.ndarray) else frame.drop("y")
        np.testing.assert_array_equal(auto.predict(inputs), off.predict(inputs))
        assert not hasattr(auto, "field_scales_")
    forced = pp.SGDRegressor(expansion="apple", field_scales=True).fit(X, y)
    assert forced.field_scales_["field"].to_list() == ["features", "monomials"]


def test_scores_are_the_scaled_sum_of_the_fields(eat_rate) -> None:
    # Brute force from the slots: feature hash = index + the column's seed, the cross's
    # (h_A * 16777619) ^ h_B (Vowpal Wabbit's -q), the constant 11650396; weights by slot.
    train, test = eat_rate
    model = pp.SGDClassifier(loss="logistic", bits=20, interactions=[("A", "B")])
    model.fit(train.head(50_000), "label")
    learner, mask = model._learner, 2**20 - 1
    columns = list(model.namespaces_)
    seeds = [learner.namespace_seed(k) for k in range(len(columns))]
    scales = dict(model.field_scales_.iter_rows())
    rows = test.head(300)
    weight_of = dict(enumerate(learner.weights_at(list(range(2**20)))))
    expected = []
    for row in rows.iter_rows(named=True):
        hashes = {
            c: [(e["index"] + s) % 2**64 for e in row[c]]
            for c, s in zip(columns, seeds, strict=True)
        }
        score = weight_of[11_650_396 & mask]
        for c in columns:
            score += scales[c] * sum(weight_of[h & mask] for h in hashes[c])
        cross = [((a * 16_777_619) % 2**64) ^ b for a in hashes["A"] for b in hashes["B"]]
        score += scales["A*B"] * sum(weight_of[h & mask] for h in cross)
        expected.append(score)
    got = model.decision_function(rows.drop("label"))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_save_load_and_learning_on_continue_identically(eat_rate, tmp_path: Path) -> None:
    train, test = eat_rate
    # The cross joins in the first part: screening state is not saved, so a cross joining after
    # the save could join at another row on resuming.
    first, second = train.head(60_000), train.slice(60_000, 20_000)
    params = {"loss": "logistic", "bits": 20, "expansion": "apple"}
    straight = pp.SGDClassifier(**params)
    straight.partial_fit(first, "label", classes=[-1.0, 1.0]).partial_fit(second, "label")
    saved = pp.SGDClassifier(**params).partial_fit(first, "label", classes=[-1.0, 1.0])
    saved.save(tmp_path / "m.ppm")
    resumed = pp.SGDClassifier.load(tmp_path / "m.ppm").partial_fit(second, "label")
    x = test.drop("label").head(2_000)
    np.testing.assert_array_equal(resumed.decision_function(x), straight.decision_function(x))
    assert resumed.field_scales_.equals(straight.field_scales_)
    # apple's fields: each column, its monomials, then any cross of columns found.
    assert straight.crosses()["cross"].to_list() == ["A*B"]
    assert straight.field_scales_["field"].to_list() == [*"ABCDEFGHIJKL", "monomials", "A*B"]
    assert (straight.field_scales_["scale"] != 1.0).any()


def test_multiclass_has_a_scale_table_per_class() -> None:
    rng = np.random.default_rng(1)
    n = 3_000
    frame = pl.DataFrame({"a": rng.integers(0, 5, n), "b": rng.integers(0, 5, n)})
    label = (frame["a"] + frame["b"]).to_numpy() % 3
    hashed = frame.select(pp.hash_features("a", bits=12), pp.hash_features("b", bits=12))
    model = pp.SGDClassifier(loss="logistic", bits=12).fit(hashed, label)
    table = model.field_scales_
    assert table.columns == ["class", "field", "scale"]
    assert table["class"].to_list() == [0, 0, 1, 1, 2, 2]


@pytest.mark.parametrize("value", ["on", 1, None])
def test_bad_values_are_refused(value: object) -> None:
    with pytest.raises((TypeError, ValueError), match="field_scales"):
        pp.SGDRegressor(field_scales=value).fit(np.eye(3), np.ones(3))
