"""String, categorical and enum columns fed to the online learners as they are: each column a
namespace, each value hashed with the model's ``bits`` as ``hash_features`` hashes it. The
reference is the same fit on ``hash_features`` columns of the same ``bits``: models, predictions
and errors must be the same, bit for bit."""

from __future__ import annotations

import pickle

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from polars_poly.synthetic import eat_rate

BITS = 18


@pytest.fixture(scope="module")
def raw() -> pl.DataFrame:
    return eat_rate(40_000, seed=3, varieties=40, noise_fields=3)


def hashed(frame: pl.DataFrame | pl.LazyFrame, bits: int = BITS):  # noqa: ANN201
    fields = [c for c in frame.collect_schema().names() if c != "label"]
    return frame.with_columns(pp.hash_features(f, bits=bits).alias(f) for f in fields)


MODELS = {
    "cross": {"loss": "logistic", "interactions": [("A", "B")]},
    "apple": {"loss": "logistic", "expansion": "apple"},
    "field apple": {"loss": "logistic", "expansion": pp.FieldApple()},
    "regressor": {"expansion": "quadratic"},
}


@pytest.mark.parametrize("name", MODELS)
def test_raw_columns_train_as_their_hashed_columns(raw, name) -> None:
    make = pp.SGDRegressor if name == "regressor" else pp.SGDClassifier
    params = {"bits": BITS, "progress": False, **MODELS[name]}
    direct = make(**params).fit(raw, "label")
    given = make(**params).fit(hashed(raw), "label")
    test = raw.tail(1_000).drop("label")
    np.testing.assert_array_equal(direct.predict(test), given.predict(hashed(test)))
    np.testing.assert_array_equal(direct.predict(hashed(test)), given.predict(test))
    assert direct.progressive_loss_ == given.progressive_loss_
    assert direct.feature_columns_ == given.feature_columns_ == list("ABCDE")
    if name == "field apple":
        assert direct.crosses().equals(given.crosses())
        assert ["A", "B"] in direct.crosses()["fields"].to_list()


def test_lazy_frames_categoricals_and_enums_train_as_strings(raw) -> None:
    params = {"loss": "logistic", "bits": BITS, "interactions": [("A", "B")], "progress": False}
    eager = pp.SGDClassifier(shuffle=False, **params).fit(raw, "label")
    lazy = pp.SGDClassifier(shuffle=False, batch_size=1_000, **params).fit(raw.lazy(), "label")
    as_categorical = raw.with_columns(pl.col("A", "B").cast(pl.Categorical))
    kinds = pl.Enum(sorted(raw["C"].unique().to_list()))
    as_enum = as_categorical.with_columns(pl.col("C").cast(kinds))
    mixed = pp.SGDClassifier(shuffle=False, **params).fit(as_enum, "label")
    mixed_lazy = pp.SGDClassifier(shuffle=False, batch_size=1_000, **params).fit(
        as_enum.lazy(), "label"
    )
    test = raw.tail(500).drop("label")
    expected = eager.predict_proba(test)
    np.testing.assert_array_equal(lazy.predict_proba(test), expected)
    np.testing.assert_array_equal(mixed.predict_proba(test), expected)
    np.testing.assert_array_equal(mixed_lazy.predict_proba(test), expected)
    np.testing.assert_array_equal(eager.predict_proba(as_enum.tail(500).drop("label")), expected)
    # Batch by batch, and saved and loaded, the same model.
    online = pp.SGDClassifier(shuffle=False, **params)
    for start in range(0, len(raw), 8_000):
        online.partial_fit(raw.slice(start, 8_000), "label", classes=[-1.0, 1.0])
    np.testing.assert_array_equal(online.predict_proba(test), expected)


def test_a_model_of_string_columns_saves_and_loads(raw, tmp_path) -> None:
    model = pp.SGDClassifier(loss="logistic", bits=BITS, expansion="apple").fit(raw, "label")
    model.save(tmp_path / "m.bin")
    loaded = pp.load_model(tmp_path / "m.bin")
    test = raw.tail(500).drop("label")
    np.testing.assert_array_equal(loaded.predict_proba(test), model.predict_proba(test))
    assert loaded.feature_columns_ == model.feature_columns_


def test_token_lists_train_as_their_hashed_columns(raw) -> None:
    """A column of token lists (or arrays) is a namespace too: a repeated token counts its
    occurrences, missing lists and tokens add nothing, as in ``hash_features``."""
    words = raw.select(
        "label",
        pl.concat_list("A", "B", "A", pl.col("A").str.split("-").list.first(), "C").alias("words"),
        pl.concat_list("D", "E").alias("pair"),
    )
    words = words.with_columns(
        pl.when(pl.int_range(pl.len()) % 11 == 0).then(None).otherwise(pl.col("words"))
    )
    words = words.with_columns(pl.col("pair").list.to_array(2))
    params = {"loss": "logistic", "bits": BITS, "expansion": "quadratic", "progress": False}
    direct = pp.SGDClassifier(shuffle=False, **params).fit(words, "label")
    given = pp.SGDClassifier(shuffle=False, **params).fit(hashed(words), "label")
    test = words.tail(800).drop("label")
    np.testing.assert_array_equal(
        direct.decision_function(test), given.decision_function(hashed(test))
    )
    assert direct.progressive_loss_ == given.progressive_loss_
    lazy = pp.SGDClassifier(shuffle=False, batch_size=700, **params).fit(words.lazy(), "label")
    np.testing.assert_array_equal(lazy.decision_function(test), direct.decision_function(test))


def test_a_missing_string_is_no_feature(raw) -> None:
    """A null value leaves its namespace empty for that row, as in ``hash_features``' column
    (an empty row), in training and in scoring; the row itself is scored."""
    holes = raw.with_columns(
        pl.when(pl.int_range(pl.len()) % 7 == 0).then(None).otherwise(pl.col("A")).alias("A")
    )
    params = {"loss": "logistic", "bits": BITS, "interactions": [("A", "B")], "progress": False}
    direct = pp.SGDClassifier(**params).fit(holes, "label")
    given = pp.SGDClassifier(**params).fit(hashed(holes), "label")
    test = holes.head(700).drop("label")
    scores = direct.decision_function(test)
    assert np.isfinite(scores).all()
    np.testing.assert_array_equal(scores, given.decision_function(hashed(test)))


def test_predict_expr_scores_raw_columns_in_a_streaming_query(raw) -> None:
    model = pp.SGDClassifier(loss="logistic", bits=BITS, interactions=[("A", "B")])
    model.fit(raw, "label")
    fields = [c for c in raw.columns if c != "label"]
    query = raw.lazy().with_columns(pl.col("A").cast(pl.Categorical))
    direct = query.select(model.predict_proba_expr(*fields).alias("p"))
    hashing = [pp.hash_features(f, bits=BITS).alias(f) for f in fields]
    given = query.select(model.predict_proba_expr(*hashing).alias("p"))
    scored = direct.collect(engine="streaming")["p"].to_numpy()
    np.testing.assert_array_equal(scored, given.collect(engine="streaming")["p"].to_numpy())
    np.testing.assert_array_equal(scored, model.predict_proba(raw)[:, 1])


def test_scoring_expressions_read_the_fitted_categorical_columns_as_strings(raw, tmp_path) -> None:
    # A categorical column crossing into the engine as it is is rebuilt value by value (twice
    # the query's time): the expression of the fitted columns casts those fitted as categorical
    # or enum, values or lists, and leaves the others as they are.
    frame = raw.with_columns(
        pl.col("A").cast(pl.Categorical),
        pl.col("B").cast(pl.Enum(sorted(raw["B"].unique()))),
        tokens=pl.concat_list("C", "D").cast(pl.List(pl.Categorical)),
    )
    model = pp.SGDClassifier(loss="logistic", bits=BITS, interactions=[("A", "B")])
    model.fit(frame, "label")

    def inputs(fitted: pp.SGDClassifier) -> set[str]:
        return {str(e) for e in fitted.predict_proba_expr().meta.pop()}

    casts = {
        'col("A").strict_cast(String)',
        'col("B").strict_cast(String)',
        'col("tokens").strict_cast(List(String))',
    }
    assert casts <= inputs(model)
    assert 'col("C")' in inputs(model)  # a string column as it is
    as_strings = frame.with_columns(
        pl.col("A", "B").cast(pl.String), pl.col("tokens").cast(pl.List(pl.String))
    )
    expected = model.predict_proba(frame.drop("label"))[:, 1]
    for given in (frame, as_strings):
        scored = given.lazy().select(model.predict_proba_expr()).collect(engine="streaming")
        np.testing.assert_array_equal(scored.to_series().to_numpy(), expected)
    model.save(tmp_path / "m.bin")
    assert casts <= inputs(pp.load_model(tmp_path / "m.bin"))
    assert casts <= inputs(pickle.loads(pickle.dumps(model)))
    # Refitted on strings, nothing is cast.
    refit = model.fit(as_strings, "label")
    assert not any("cast" in e for e in inputs(refit))


def test_raw_columns_hash_with_the_models_bits(raw) -> None:
    """The columns are hashed with the model's ``bits``. Columns hashed beforehand with more bits
    give the same model (the table keeps the low bits); with fewer, another model."""
    params = {"loss": "logistic", "bits": 12, "progress": False}
    direct = pp.SGDClassifier(**params).fit(raw, "label")
    test = raw.tail(300).drop("label")
    expected = direct.predict_proba(test)
    for bits, same in ((12, True), (BITS, True), (8, False)):
        given = pp.SGDClassifier(**params).fit(hashed(raw, bits), "label")
        assert np.array_equal(given.predict_proba(hashed(test, bits)), expected) == same


def test_what_is_not_a_namespace_is_refused_by_name(raw) -> None:
    dated = raw.with_columns(pl.date(2020, 1, 1).alias("day"))
    with pytest.raises(TypeError, match=r"string feature columns are .*'day' \(Date\)"):
        pp.SGDClassifier(bits=BITS).fit(dated, "label")
    with pytest.raises(TypeError, match=r"'day' \(Date\).*hashed as they are read"):
        pp.SGDClassifier(bits=BITS, features=["A", "day"]).fit(dated, "label")
    # Scoring columns of another kind than the model's namespaces take: named, with the kinds.
    model = pp.SGDClassifier(bits=BITS, progress=False).fit(raw, "label")
    with pytest.raises(TypeError, match=r'column "A" has dtype .*a string, categorical or enum'):
        model.predict_proba(raw.with_columns(pl.lit(3).alias("A")).drop("label"))
    # The passive-aggressive classifiers take one sparse column: a string column is refused.
    with pytest.raises((TypeError, ValueError), match="hash_features"):
        pp.PassiveAggressiveClassifier().fit(raw.select("A", "label"), "label")


@pytest.mark.parametrize("interactions", [[], [("A", "B")], [("A", "C")]])
def test_string_columns_learn_as_vowpal_wabbit_learns_them_at_the_same_slots(
    interactions: list[tuple[str, str]],
) -> None:
    """The independent reference for string columns and their crosses: Vowpal Wabbit on the same
    rows, each string written as its ``hash_features`` index (an all-digit name, which Vowpal
    Wabbit hashes to itself plus the namespace's hash: our slot). Written as the strings
    themselves, Vowpal Wabbit lays its slots out otherwise (no second seed), and its ``-q AB``
    differs by one collision of its own (docs/algorithms.md, hashing). Measured
    apart: 1.7e-7 (linear), 1.4e-6 (``-q AB``), 1.3e-7 (``-q AC``)."""
    pyvw = pytest.importorskip("vowpalwabbit.pyvw")
    frame = eat_rate(20_000, seed=7, varieties=30, noise_fields=1)
    index = frame.select(
        "label",
        *(pp.hash_features(c, bits=24).list.first().struct.field("index").alias(c) for c in "ABC"),
    )
    ours = pp.SGDClassifier(
        shuffle=False,
        loss="logistic",
        bits=24,
        interactions=interactions,
        field_scales=False,
        progress=False,
    ).fit(frame, "label")
    vw = pyvw.Workspace(
        "--quiet --loss_function logistic -b 24" + "".join(f" -q {a}{b}" for a, b in interactions)
    )
    for row in index.iter_rows(named=True):
        vw.learn(f"{row['label']:g} |A {row['A']} |B {row['B']} |C {row['C']}")
    theirs = vw.get_sum_loss() / vw.get_weighted_examples()
    vw.finish()
    assert abs(ours.progressive_loss_ - theirs) < 1e-5, (ours.progressive_loss_, theirs)
