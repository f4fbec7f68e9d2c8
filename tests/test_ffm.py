"""Field-aware factorization through the estimators (issue 58): pairs never seen in training
scored from each value's latent vectors, model files, pickling, native scoring, nested
parameters, multiclass, and the errors a user can meet."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from polars_poly.synthetic import eat_rate

from tests.conftest import logloss_on

FIELDS = list("ABCD")


@pytest.fixture(scope="module")
def unseen() -> tuple[pl.DataFrame, pl.DataFrame]:
    """eat-rate in small (200 animals and foods, 2 noise fields) with a fifth of the (animal,
    food) pairs kept out of training; the test rows are those of the pairs training never saw."""
    settings = {"varieties": 200, "noise_fields": 2, "noise_values": 1_000, "held_out_pairs": 0.2}
    train = eat_rate(80_000, seed=1, **settings)
    test = eat_rate(40_000, seed=1, offset=80_000, include_held_out=True, **settings)
    test = test.join(train.select("A", "B").unique(), on=["A", "B"], how="anti")

    def hashed(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.select("label", *(pp.hash_features(f, bits=20).alias(f) for f in FIELDS))

    return hashed(train), hashed(test)


def test_unseen_pairs_are_scored_from_the_values_latent_vectors(unseen) -> None:
    train, test = unseen
    model = pp.SGDClassifier(loss="logistic", bits=20, ffm=pp.FFM(k=4), random_state=0)
    model.fit(train, "label")
    crossed = pp.SGDClassifier(loss="logistic", bits=20, interactions=[("A", "B")]).fit(
        train, "label"
    )
    # The given cross knows the pairs it saw; the factorization also the others.
    assert logloss_on(model, test) < 0.1
    assert logloss_on(model, test) < logloss_on(crossed, test) - 0.1
    assert model.score(test, "label") > 0.98


def test_model_file_pickle_and_native_scoring_keep_the_factorization(
    unseen, tmp_path: Path
) -> None:
    train, test = unseen
    settings = pp.FFM(k=3, bits=12, fields=["A", "B"], learning_rate=0.2, random_state=5)
    model = pp.SGDClassifier(loss="logistic", bits=18, ffm=settings).fit(
        train.head(20_000), "label"
    )
    features = test.head(2_000).drop("label")
    expected = model.decision_function(features)
    path = tmp_path / "ffm.model"
    model.save(path)
    for restored in (pp.load_model(path), pickle.loads(pickle.dumps(model))):
        assert isinstance(restored, pp.SGDClassifier)
        assert restored.get_params()["ffm"].get_params() == settings.get_params()
        assert np.array_equal(restored.decision_function(features), expected)
    scored = features.lazy().select(model.decision_function_expr()).collect(engine="streaming")
    assert np.allclose(scored.to_series().to_numpy(), expected)
    # Training on after loading continues the run: the same as never saving.
    loaded = pp.load_model(path)
    more = train.slice(20_000, 5_000)
    model.partial_fit(more, "label")
    loaded.partial_fit(more, "label")
    assert np.array_equal(loaded.decision_function(features), model.decision_function(features))


def test_every_column_by_default_nested_parameters_and_multiclass(unseen) -> None:
    train, _ = unseen
    model = pp.SGDClassifier(loss="logistic", ffm=pp.FFM())
    assert model.get_params()["ffm__k"] == 4
    model.set_params(ffm__k=2, ffm__bits=10)
    assert (model.ffm.k, model.ffm.bits) == (2, 10)
    model.fit(train.head(5_000), "label")
    assert model.get_params()["ffm"].fields is None  # every feature column
    three = train.head(6_000).with_columns(label=pl.int_range(pl.len()).mod(3).cast(pl.String))
    multiclass = pp.SGDClassifier(loss="logistic", ffm=pp.FFM(k=2, bits=8)).fit(three, "label")
    assert len(multiclass.predict(three.drop("label"))) == 6_000


def test_errors_name_what_is_wrong(unseen) -> None:
    small = unseen[0].head(100)

    def fit(ffm: object) -> None:
        pp.SGDClassifier(loss="logistic", ffm=ffm).fit(small, "label")  # type: ignore[arg-type]

    with pytest.raises(ValueError, match=r"ffm k must be an integer in 1..=128, got 0"):
        fit(pp.FFM(k=0))
    with pytest.raises(ValueError, match=r"ffm bits must be an integer in 1..=30, got 31"):
        fit(pp.FFM(bits=31))
    with pytest.raises(ValueError, match="ffm learning_rate must be finite and > 0, got -1"):
        fit(pp.FFM(learning_rate=-1.0))
    with pytest.raises(ValueError, match=r"ffm fields: 'Z' is not a feature column; .*\['A'"):
        fit(pp.FFM(fields=["A", "Z"]))
    with pytest.raises(ValueError, match="random_state must be"):
        fit(pp.FFM(random_state=-2))
    with pytest.raises(TypeError, match="ffm must be None or a polars_poly.FFM, got 'yes'"):
        fit("yes")
    with pytest.raises(TypeError, match="k"):
        fit(pp.FFM(k="4"))  # type: ignore[arg-type]


def test_ffm_pairs_names_the_pair_that_carries_the_score(unseen) -> None:
    train, test = unseen
    model = pp.SGDClassifier(loss="logistic", bits=20, ffm=pp.FFM(k=4)).fit(train, "label")
    pairs = model.ffm_pairs(test.drop("label").head(5_000))
    assert pairs.height == 4 * 5 // 2  # 4 columns: 6 pairs and 4 within (none, one-hot)
    assert pairs["pair"][0] == "A*B" and pairs["fields"][0].to_list() == ["A", "B"]
    # The animal and the food carry the score; the noise columns' pairs next to nothing.
    assert pairs["mean_abs"][0] > 20 * pairs["mean_abs"][1]
    within = pairs.filter(pl.col("pair").is_in(["A*A", "B*B", "C*C", "D*D"]))
    assert (within["mean_abs"] == 0).all()
    plain = pp.SGDClassifier(loss="logistic").fit(train.head(1_000), "label")
    with pytest.raises(ValueError, match=r"ffm_pairs\(\) describes a model with"):
        plain.ffm_pairs(test.head(10))


def test_over_the_crosses_apple_finds_the_factorization_follows_them(unseen, tmp_path) -> None:
    """With field crosses (apple's, or given), ``FFM()`` factorizes the crossed pairs alone
    (``pairs='auto'``): apple finds animal*food, the factorization of that pair scores pairs
    training never saw; a saved, pickled or streamed model scores the same."""
    train, test = unseen
    model = pp.SGDClassifier(loss="logistic", expansion="apple", ffm=pp.FFM(k=4)).fit(
        train, "label"
    )
    assert model.crosses()["cross"].to_list() == ["A*B"]
    pairs = model.ffm_pairs(test.drop("label").head(2_000))
    assert pairs["pair"].to_list() == ["A*B"]
    apple = pp.SGDClassifier(loss="logistic", expansion="apple").fit(train, "label")
    # On 80k rows the cross's own weights take most of the seen pairs' signal first (about
    # 0.28 here, against 0.71 for apple alone; at 1M rows of eat-rate 0.005, docs/learners.md).
    assert logloss_on(model, test) < 0.4
    assert logloss_on(model, test) < logloss_on(apple, test) - 0.3
    features = test.head(2_000).drop("label")
    expected = model.decision_function(features)
    model.save(tmp_path / "m")
    for restored in (pp.load_model(tmp_path / "m"), pickle.loads(pickle.dumps(model))):
        assert restored.get_params()["ffm"].get_params() == pp.FFM(k=4).get_params()
        assert np.array_equal(restored.decision_function(features), expected)
    streamed = features.lazy().select(model.decision_function_expr()).collect(engine="streaming")
    assert np.allclose(streamed.to_series().to_numpy(), expected)

    given = pp.SGDClassifier(loss="logistic", interactions=[("A", "C")], ffm=pp.FFM(k=2))
    given.fit(train.head(5_000), "label")
    assert given.ffm_pairs(features)["pair"].to_list() == ["A*C"]
    every = pp.SGDClassifier(loss="logistic", interactions=[("A", "C")], ffm=pp.FFM(pairs="all"))
    assert every.fit(train.head(5_000), "label").ffm_pairs(features).height == 10
    with pytest.raises(ValueError, match="ffm pairs='crosses' factorizes the pairs of columns"):
        pp.SGDClassifier(loss="logistic", ffm=pp.FFM(pairs="crosses")).fit(train.head(100), "label")
    with pytest.raises(ValueError, match="pairs"):
        pp.SGDClassifier(loss="logistic", ffm=pp.FFM(pairs="some")).fit(train.head(100), "label")
