"""Multiclass SGDClassifier (one against all): each class's learner is exactly the binary
model of "this class or not", scoring agrees across predict / expressions / files, and
scikit-learn's one-vs-rest over our binary classifier gives the same probabilities."""

from __future__ import annotations

import gc
import pickle
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


def blobs(n: int = 600, k: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """k Gaussian clusters in 4 dimensions, labelled 0..k-1."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(k, 4))
    labels = rng.integers(0, k, size=n)
    return centers[labels] + rng.normal(size=(n, 4)), labels


def frame_of(X: np.ndarray, labels: np.ndarray) -> pl.DataFrame:
    names = np.array(["ant", "bee", "cat", "dog", "eel"])[labels]
    return pl.DataFrame({f"x{i}": X[:, i] for i in range(X.shape[1])}).with_columns(
        animal=pl.Series(names)
    )


@settings(max_examples=12, deadline=None)
@given(
    k=st.integers(3, 5),
    seed=st.integers(0, 10_000),
    expansion=st.sampled_from(["linear", "quadratic", "apple"]),
    passes=st.sampled_from([1, 3]),
)
def test_each_class_is_the_binary_model_of_that_class(
    k: int, seed: int, expansion: str, passes: int
) -> None:
    X, y = blobs(300, k, seed)
    # apple's ranking race keeps one ranking for the whole multiclass model (the lower summed
    # loss), which each binary model would pick alone: compare a fixed ranking.
    fixed = pp.Apple(ranking="typical") if expansion == "apple" else expansion
    options = {"expansion": fixed, "passes": passes, "progress": False}
    model = pp.SGDClassifier(**options).fit(X, y)
    assert model.classes_.tolist() == list(range(k))
    scores = model.decision_function(X)
    assert scores.shape == (300, k)
    loss = 0.0
    for c in range(k):
        binary = pp.SGDClassifier(**options).fit(X, (y == c).astype(int))
        np.testing.assert_array_equal(scores[:, c], binary.decision_function(X))
        loss += binary.progressive_loss_
    assert model.progressive_loss_ == pytest.approx(loss, rel=1e-12)
    np.testing.assert_array_equal(model.predict(X), np.argmax(scores, axis=1))


def test_probabilities_equal_scikit_learns_one_vs_rest_over_the_binary_model() -> None:
    from sklearn.multiclass import OneVsRestClassifier

    X, y = blobs(800, 4, 1)
    ours = pp.SGDClassifier(shuffle=False, progress=False).fit(X, y)
    reference = OneVsRestClassifier(pp.SGDClassifier(shuffle=False, progress=False)).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), reference.predict_proba(X), rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), reference.predict(X))
    assert ours.score(X, y) > 0.9


def test_string_labels_frames_expressions_and_lazy_fit_agree() -> None:
    X, y = blobs(1000, 3, 2)
    frame = frame_of(X, y)
    model = pp.SGDClassifier(shuffle=False, progress=False).fit(frame, "animal")
    assert model.classes_.tolist() == ["ant", "bee", "cat"]
    assert model.score(frame, "animal") > 0.9
    features = frame.drop("animal")
    out = features.lazy().select(
        label=model.predict_expr(),
        proba=model.predict_proba_expr(),
        scores=model.decision_function_expr(),
    )
    out = out.collect(engine="streaming")
    assert out.schema["label"] == pl.String
    assert out["label"].to_list() == model.predict(features).tolist()
    np.testing.assert_array_equal(out["proba"].to_numpy(), model.predict_proba(features))
    np.testing.assert_array_equal(out["scores"].to_numpy(), model.decision_function(features))
    lazy = pp.SGDClassifier(shuffle=False, progress=False).fit(frame.lazy(), "animal")
    np.testing.assert_array_equal(lazy.decision_function(features), model.decision_function(X))
    assert lazy.progressive_loss_ == model.progressive_loss_
    assert lazy.history_["examples"][-1] == 1000


def test_partial_fit_names_the_classes_first_and_refuses_others() -> None:
    X, y = blobs(900, 3, 3)
    whole = pp.SGDClassifier(shuffle=False, progress=False).fit(X, y)
    online = pp.SGDClassifier(shuffle=False, progress=False)
    for start in range(0, 900, 300):
        part = slice(start, start + 300)
        online.partial_fit(X[part], y[part], classes=[0, 1, 2])
    np.testing.assert_array_equal(online.decision_function(X), whole.decision_function(X))
    # Rows counted over the whole stream of partial_fit calls, as the engine counts them.
    with pytest.raises(ValueError, match=r"row 901: label 7 is not one of the classes \[0, 1, 2\]"):
        online.partial_fit(X[:3], np.array([0, 7, 1]))
    np.testing.assert_array_equal(online.decision_function(X), whole.decision_function(X))


def test_files_pickles_and_expressions_outliving_the_model(tmp_path: Path) -> None:
    X, y = blobs(500, 4, 4)
    frame = frame_of(X, y)
    model = pp.SGDClassifier(shuffle=False, expansion="apple", progress=False).fit(frame, "animal")
    features = frame.drop("animal")
    path = tmp_path / "model.pp"
    model.save(path)
    loaded = pp.load_model(path)
    assert isinstance(loaded, pp.SGDClassifier)
    assert loaded.classes_.tolist() == model.classes_.tolist()
    np.testing.assert_array_equal(loaded.decision_function(features), model.decision_function(X))
    unpickled = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(unpickled.predict(features), model.predict(features))
    # The progressive error counts travel with the model (Dask moves models this way) and
    # keep counting: before, an unpickled model counted from 0 again.
    assert unpickled._learner.errors == model._learner.errors
    unpickled.partial_fit(features, frame["animal"])
    continued = pickle.loads(pickle.dumps(model)).partial_fit(features, frame["animal"])
    assert continued.progressive_error_ == unpickled.progressive_error_
    assert unpickled._learner.errors[1] == 2 * model._learner.errors[1]
    monomials = loaded.monomials()
    assert monomials.columns[0] == "class"
    assert set(monomials["class"].to_list()) <= set(model.classes_.tolist())
    expression = loaded.predict_proba_expr().alias("p")
    del loaded
    gc.collect()
    read_back = features.select(expression)["p"].to_numpy()
    np.testing.assert_allclose(read_back, model.predict_proba(features), rtol=1e-12)
    # Continued training after loading equals training without the break.
    again = pp.load_model(path).partial_fit(features, frame["animal"])
    model.partial_fit(features, frame["animal"])
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))


def test_multiclass_needs_the_logistic_loss_for_probabilities() -> None:
    X, y = blobs(200, 3, 5)
    hinge = pp.SGDClassifier(loss="hinge", progress=False).fit(X, y)
    assert hinge.predict(X).shape == (200,)
    with pytest.raises(ValueError, match="needs loss='logistic'"):
        hinge.predict_proba(X)
    with pytest.raises(ValueError, match="needs loss='logistic'"):
        hinge.predict_proba_expr()


def test_bad_labels_are_named_in_frames_and_lazy_frames() -> None:
    X, y = blobs(300, 3, 6)
    frame = frame_of(X, y).with_columns(
        animal=pl.when(pl.int_range(pl.len()) == 157).then(None).otherwise(pl.col("animal"))
    )
    with pytest.raises(ValueError, match="row 157 is null"):
        pp.SGDClassifier(progress=False).fit(frame, "animal")
    # Streamed in batches of 50: the row of the whole input, not of its batch.
    with pytest.raises(ValueError, match="row 157 is null"):
        pp.SGDClassifier(progress=False, batch_size=50).fit(frame.lazy(), "animal")
    target = pl.when(pl.col("animal").is_null()).then(None).otherwise(pl.col("x0"))
    numeric = frame.select(pl.exclude("animal"), target=target)
    with pytest.raises(ValueError, match="row 157 is null"):
        pp.SGDRegressor(progress=False, batch_size=50).fit(numeric.lazy(), "target")
    mixed = np.array(["ant", 3, "bee"] * 100, dtype=object)
    with pytest.raises(ValueError, match="cannot be ordered"):
        pp.SGDClassifier(progress=False).fit(X, mixed)
