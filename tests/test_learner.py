"""SGDRegressor / SGDClassifier: engine equality, scikit-learn conformance, Polars scoring,
persistence, bad input, and a side-by-side with Vowpal Wabbit when it is installed."""

from __future__ import annotations

import math
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from polars_poly._internal import Learner

from tests.conftest import shared_file


def toy_regression(n: int = 400, seed: int = 0) -> tuple[sp.csr_array, np.ndarray]:
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(n, 8)) * (rng.random((n, 8)) < 0.5)
    y = dense @ np.arange(1.0, 9.0) / 8 + 0.3 * dense[:, 0] * dense[:, 1]
    return sp.csr_array(dense), y


def toy_classification(n: int = 600, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] - 0.5 * X[:, 2] + 0.2 * rng.normal(size=n) > 0).astype(int)
    return X, y


# ------------------------------------------------------------------------------ engine equality


def test_first_update_matches_the_closed_form() -> None:
    # One example x = (2.0), y = 1, default rule, squared loss: G = 16 for the feature and 4 for
    # the constant, N = 2 and 1, so pred-per-update = (4/(4·2) + 1/2) / sqrt(2) = 1/sqrt(2), and
    # the invariant update moves the prediction to y · (1 - exp(-2 · 0.5 · ppu)).
    model = pp.SGDRegressor().fit(np.array([[2.0]]), [1.0])
    expected = 1.0 - math.exp(-1.0 / math.sqrt(2.0))
    assert model.predict(np.array([[2.0]]))[0] == pytest.approx(expected, rel=1e-5)
    assert model.progressive_loss_ == pytest.approx(1.0)


def test_estimator_equals_the_engine_and_is_input_independent() -> None:
    X, y = toy_regression()
    model = pp.SGDRegressor(shuffle=False, expansion="quadratic", bits=16).fit(X, y)
    engine = Learner(model._engine_options(["features"]))
    series = pp.from_scipy(X)
    engine.learn([series], pl.Series(y))
    np.testing.assert_array_equal(model.predict(X), engine.predict([series]).to_numpy())
    # Dense numpy, a DataFrame's sparse column, batches of partial_fit: the same model.
    dense = pp.SGDRegressor(shuffle=False, expansion="quadratic", bits=16).fit(X.toarray(), y)
    frame = pl.DataFrame({"features": series, "target": y})
    from_frame = pp.SGDRegressor(shuffle=False, expansion="quadratic", bits=16).fit(frame, "target")
    online = pp.SGDRegressor(shuffle=False, expansion="quadratic", bits=16)
    for start in range(0, 400, 97):
        online.partial_fit(X[start : start + 97], y[start : start + 97])
    for other in (dense.predict(X), from_frame.predict(frame), online.predict(X)):
        np.testing.assert_array_equal(model.predict(X), other)
    assert online.progressive_loss_ == pytest.approx(model.progressive_loss_)


def test_quadratic_beats_linear_on_an_interaction() -> None:
    rng = np.random.default_rng(3)
    X = rng.choice([-1.0, 1.0], size=(4000, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    lin = pp.SGDClassifier().fit(X, y)
    quad = pp.SGDClassifier(expansion="quadratic").fit(X, y)
    assert quad.score(X, y) == 1.0
    assert lin.score(X, y) < 0.8
    assert quad.progressive_loss_ < lin.progressive_loss_


def test_passes_holdout_and_shuffle() -> None:
    X, y = toy_classification()
    one = pp.SGDClassifier().fit(X, y)
    many = pp.SGDClassifier(passes=5, shuffle=True, random_state=4, n_iter_no_change=0).fit(X, y)
    assert many.n_passes_ == 5 and len(many.holdout_loss_) == 5
    assert many.n_examples_ == 5 * 540
    assert many.holdout_loss_[-1] < 0.5
    again = pp.SGDClassifier(passes=5, shuffle=True, random_state=4, n_iter_no_change=0).fit(X, y)
    np.testing.assert_array_equal(many.decision_function(X), again.decision_function(X))
    assert one.n_examples_ == 600


def test_shuffle_learns_a_seeded_permutation_of_the_rows_and_names_rows_as_given() -> None:
    from polars_poly.learner._data import _shuffled_rows

    X, y = toy_regression(n=500, seed=2)
    for seed in (None, 3):
        shuffled = pp.SGDRegressor(random_state=seed, batch_size=64).fit(X, y)  # the default
        order = _shuffled_rows(len(y), seed)
        assert sorted(order.tolist()) == list(range(len(y))) and order.tolist() != sorted(order)
        in_order = pp.SGDRegressor(shuffle=False).fit(X[order], y[order])
        np.testing.assert_array_equal(shuffled.predict(X), in_order.predict(X))
        assert shuffled.progressive_loss_ == in_order.progressive_loss_
    # averaging and several passes take the engine's path: the same order for one pass
    averaged = pp.SGDRegressor(average_tail=1e-4).fit(X, y)
    np.testing.assert_array_equal(averaged.predict(X), pp.SGDRegressor().fit(X, y).predict(X))
    # A row that fails mid-stream is named where it is in the data given, not where it was
    # learned.
    X = np.random.default_rng(0).normal(size=(300, 3))
    y = X[:, 0].copy()
    X[217, 1], y[217] = 1e18, 1e30
    plain = {"normalized": False, "adaptive": False, "invariant": False, "batch_size": 16}
    with pytest.raises(ValueError, match=r"^row 217: learning overflows"):
        pp.SGDRegressor(**plain).fit(X, y)


def test_shuffle_by_default_learns_data_sorted_by_class() -> None:
    """scikit-learn's default: rows sorted by class (iris) are learned in a shuffled order; in
    their order, the last class is all the model learns last."""
    from sklearn.datasets import load_iris
    from sklearn.metrics import f1_score

    X, y = load_iris(return_X_y=True)

    def f1(model: pp.SGDClassifier) -> float:
        return float(f1_score(y, model.fit(X, y).predict(X), average="macro"))

    in_order = f1(pp.SGDClassifier(shuffle=False))
    shuffled = [f1(pp.SGDClassifier(random_state=seed)) for seed in range(8)]
    assert in_order < 0.2  # one class predicted: the last one learned
    assert min(shuffled) > 0.5 and np.median(shuffled) > 0.55


# ------------------------------------------------------------------------ scikit-learn contract


def test_average_tail_averages_the_end_of_the_run() -> None:
    X, y = toy_regression(n=2000, seed=4)
    noisy = y + np.random.default_rng(5).normal(scale=0.5, size=y.size)
    last = pp.SGDRegressor(expansion="quadratic", eta0=2.0).fit(X, noisy)
    # A window of one example is the last iterate: the in-memory path that averaging takes
    # learns exactly what the default (streaming) path learns.
    one = pp.SGDRegressor(expansion="quadratic", eta0=2.0, average_tail=1e-4)
    np.testing.assert_array_equal(one.fit(X, noisy).predict(X), last.predict(X))
    averaged = pp.SGDRegressor(expansion="quadratic", eta0=2.0, average_tail=0.25)
    averaged.fit(X, noisy)
    # Same run, same progressive loss; only the end point differs, and with a large step on
    # noisy labels the mean of the last quarter is closer to the noise-free target.
    assert averaged.progressive_loss_ == last.progressive_loss_
    mse_last = float(np.mean((last.predict(X) - y) ** 2))
    mse_averaged = float(np.mean((averaged.predict(X) - y) ** 2))
    assert mse_averaged < 0.8 * mse_last, (mse_averaged, mse_last)
    # Multi-pass and apple fits average too; the averaged model saves and loads as it is.
    for model in (
        pp.SGDRegressor(passes=3, holdout=0, average_tail=0.1),
        pp.SGDRegressor(expansion="apple", average_tail=1 / 6),
    ):
        model.fit(X, noisy)
        restored = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(restored.predict(X), model.predict(X))
        assert restored.average_tail == model.average_tail
    Xc, yc = toy_classification()
    classifier = pp.SGDClassifier(average_tail=0.2).fit(Xc, yc)
    assert classifier.score(Xc, yc) > 0.9
    assert classifier.progressive_loss_ == pp.SGDClassifier().fit(Xc, yc).progressive_loss_


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"average_tail": -0.1}, r"average_tail must be a number in \[0, 1\], got -0.1"),
        ({"average_tail": 1.5}, r"average_tail must be a number in \[0, 1\], got 1.5"),
        ({"average_tail": "all"}, r"average_tail must be a number, got 'all'"),
        ({"average_tail": 0.5, "l2": 0.01}, "average_tail cannot be combined with l1/l2"),
    ],
)
def test_average_tail_rejects_bad_settings(kwargs: dict[str, object], message: str) -> None:
    X, y = toy_regression(n=50)
    with pytest.raises((ValueError, TypeError), match=message):  # TypeError: not a number
        pp.SGDRegressor(**kwargs).fit(X, y)  # type: ignore[arg-type]


def test_average_tail_refuses_streams() -> None:
    X, y = toy_regression(n=50)
    with pytest.raises(ValueError, match="partial_fit streams"):
        pp.SGDRegressor(average_tail=0.2).partial_fit(X, y)
    frame = pl.DataFrame({"features": pp.from_scipy(X), "target": y})
    with pytest.raises(ValueError, match="fit on a LazyFrame streams"):
        pp.SGDRegressor(average_tail=0.2).fit(frame.lazy(), "target")


def test_sklearn_clone_pipeline_and_grid_search() -> None:
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = toy_classification()
    model = pp.SGDClassifier(eta0=0.3, expansion="quadratic")
    copy = clone(model)
    assert copy.get_params() == model.get_params() and copy is not model
    assert model.set_params(bits=12) is model and model.bits == 12
    pipe = make_pipeline(StandardScaler(), pp.SGDClassifier(passes=3)).fit(X, y)
    assert pipe.score(X, y) > 0.85
    search = GridSearchCV(pp.SGDRegressor(), {"eta0": [0.1, 1.0]}, cv=3)
    Xr, yr = toy_regression()
    search.fit(Xr, yr)
    assert search.best_params_["eta0"] in (0.1, 1.0)
    assert pp.SGDRegressor().fit(Xr, yr).score(Xr, yr) > 0.5


# Checks our estimators fail by design: online learning is order dependent, so a weight of 2 is
# not the same as a duplicated row elsewhere in the data.
EXPECTED_FAILURES = {
    name: {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    }
    for name in ("SGDRegressor", "SGDClassifier")
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("cls", [pp.SGDRegressor, pp.SGDClassifier])
def test_sklearn_check_estimator(cls: type) -> None:
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(cls(progress=False), on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed <= EXPECTED_FAILURES[cls.__name__], failed - EXPECTED_FAILURES[cls.__name__]
    assert len(results) > 50


def test_classifier_labels_and_probabilities() -> None:
    X, y = toy_classification()
    model = pp.SGDClassifier().fit(X, y)
    np.testing.assert_array_equal(model.classes_, [0, 1])
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(X), np.where(proba[:, 1] > 0.5, 1, 0))
    signed = pp.SGDClassifier().fit(X, 2 * y - 1)
    np.testing.assert_array_equal(signed.classes_, [-1, 1])
    np.testing.assert_array_equal(signed.predict(X), 2 * model.predict(X) - 1)
    with pytest.raises(ValueError, match="needs loss='logistic'"):
        pp.SGDClassifier(loss="hinge").fit(X, y).predict_proba(X)


_LABEL_VALUES = st.sampled_from(
    [-1.0, 0.0, -0.0, 1.0, 2.0, 0.5, 7.0, 1e308, 1.7e308, -1e308, np.inf, np.nan]
)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(_LABEL_VALUES, min_size=1, max_size=30),
    dtype=st.sampled_from(["float64", "float32", "int64", "uint8", "bool"]),
)
def test_classes_and_engine_labels_match_np_unique(values: list[float], dtype: str) -> None:
    """The classes found from the labels' extremes (no sort) are ``np.unique``'s, and the
    engine's labels are -1 / +1 by class whether or not they are copied."""
    from polars_poly._input import _two_or_fewer_values, classes_of

    raw = np.asarray(values)
    if dtype != "float64":  # huge and non-finite values as float64 only
        raw = np.where(np.isfinite(raw) & (np.abs(raw) < 100), raw, 9.0)
    labels = (np.abs(raw) if dtype in ("uint8", "bool") else raw).astype(dtype)
    expected = np.unique(labels)
    found = _two_or_fewer_values(labels)
    if found is None:
        assert len(expected) > 2 or np.isnan(labels).any()
    else:
        assert found.dtype == labels.dtype
        np.testing.assert_array_equal(found, expected)
    integral = labels.dtype.kind != "f" or np.all(
        np.isfinite(labels) & (labels == np.round(labels))
    )
    if len(expected) > 1 and integral:
        classes = classes_of(labels)
        np.testing.assert_array_equal(classes, expected)
        if len(classes) == 2:
            before = labels.copy()
            model = pp.SGDClassifier()
            engine = model._labels(labels)
            np.testing.assert_array_equal(engine, np.where(labels == classes[1], 1.0, -1.0))
            assert engine.dtype == np.float64
            np.testing.assert_array_equal(labels, before)
            # Later batches are checked against the classes found first.
            np.testing.assert_array_equal(model._labels(labels[::-1]), engine[::-1])
            if dtype != "bool":
                with pytest.raises(ValueError, match="y: row 0: label 3(.0)? is not one of"):
                    model._labels(np.asarray([3], dtype=labels.dtype))


def test_a_lazy_frames_classes_are_its_labels_classes() -> None:
    """A LazyFrame's classes come from its labels' extremes when they hold two values, from
    their distinct values otherwise: the classes a frame in memory finds, and a model that
    predicts alike."""
    n = 60
    x = np.arange(n, dtype=float) % 7
    label_sets: list[np.ndarray] = [
        np.where(np.arange(n) % 3 == 0, 4, 9),
        np.where(np.arange(n) % 2 == 0, "yes", "no"),
        np.arange(n) % 2 == 0,
        np.arange(n) % 3 + 1,
        np.array(["ant", "bee", "cat", "ant"] * (n // 4)),
        np.full(n, -1),
        np.where(np.arange(n) % 2 == 0, 1.0, 0.0),
    ]
    for labels in label_sets:
        frame = pl.DataFrame({"x": x, "y": labels})
        eager = pp.SGDClassifier(shuffle=False, bits=12).fit(frame, "y")
        lazy = pp.SGDClassifier(shuffle=False, bits=12).fit(frame.lazy(), "y")
        np.testing.assert_array_equal(lazy.classes_, eager.classes_)
        np.testing.assert_array_equal(lazy.predict(frame), eager.predict(frame))


def test_non_finite_labels_are_named_by_row() -> None:
    X, _ = toy_classification(20)
    for bad in (np.nan, np.inf, -np.inf):
        y = np.where(np.arange(20) % 2 == 0, 1.0, -1.0)
        y[13] = bad
        with pytest.raises(ValueError, match=f"row 13: label is {bad}"):
            pp.SGDClassifier().fit(X, y)
        # A LazyFrame's classes are found before its batches, which name the row.
        frame = pl.LazyFrame({"features": pp.from_scipy(sp.csr_matrix(X)), "y": y})
        with pytest.raises(ValueError, match=f"row 13: label is {bad}"):
            pp.SGDClassifier(batch_size=8).fit(frame, "y")


# ---------------------------------------------------------------------------- Polars scoring


def test_predict_expr_equals_predict_in_lazy_and_streaming_queries(tmp_path: Path) -> None:
    X, y = toy_regression(1000)
    frame = pl.DataFrame({"features": pp.from_scipy(X), "y": y})
    model = pp.SGDRegressor(expansion="quadratic").fit(frame, "y")
    expected = model.predict(frame)
    lazy = frame.lazy().select(model.predict_expr().alias("p")).collect()["p"].to_numpy()
    np.testing.assert_array_equal(lazy, expected)
    path = tmp_path / "data.parquet"
    frame.write_parquet(path)
    streamed = (
        pl.scan_parquet(path)
        .select(pl.col("features").poly.predict(model).alias("p"))
        .collect(engine="streaming")["p"]
        .to_numpy()
    )
    np.testing.assert_array_equal(streamed, expected)
    np.testing.assert_array_equal(model.predict(pl.scan_parquet(path)), expected)

    Xc, yc = toy_classification()
    clf = pp.SGDClassifier().fit(Xc, yc)
    cframe = pl.DataFrame({"features": pp.from_numpy(Xc)})
    out = (
        cframe.lazy()
        .select(
            clf.predict_expr("features").alias("label"),
            clf.predict_proba_expr("features").alias("proba"),
        )
        .collect(engine="streaming")
    )
    np.testing.assert_array_equal(out["label"].to_numpy(), clf.predict(Xc))
    named = cframe.select(pl.col("features").poly.predict(clf))
    assert named.columns == ["features"] and named.dtypes == [pl.Int64]
    proba = cframe.select(pl.col("features").poly.predict_proba(clf))["features"].to_numpy()
    # The same link, computed by the engine both ways: equal to the bit.
    np.testing.assert_array_equal(proba, clf.predict_proba(Xc)[:, 1])
    assert model.score(frame, "y") == pytest.approx(model.score(X, y))
    assert model.score(frame, "y") > 0.5
    np.testing.assert_array_equal(out["proba"].to_numpy(), clf.predict_proba(Xc)[:, 1])


def test_null_rows_score_null_and_a_refit_leaves_old_expressions_their_model() -> None:
    X, y = toy_regression(50)
    series = pp.from_scipy(X)
    model = pp.SGDRegressor().fit(X, y)
    frame = pl.DataFrame({"features": series}).with_columns(
        pl.when(pl.int_range(pl.len()) == 3)
        .then(None)
        .otherwise(pl.col("features"))
        .alias("features")
    )
    out = frame.select(model.predict_expr("features"))["features"]
    assert out.null_count() == 1 and out[3] is None
    expr = model.predict_expr("features")
    before = model.predict(X)
    model.fit(X[::-1], y[::-1])
    # The refitted model is another model: the expression scores with the one it was built from
    # (which it carries), not with the new one.
    scored = frame.select(expr)["features"].to_numpy()
    np.testing.assert_array_equal(np.delete(scored, 3), np.delete(before, 3))
    assert not np.allclose(before, model.predict(X))


def test_lazyframe_training_streams_batches_like_in_memory(tmp_path: Path) -> None:
    X, y = toy_regression(3000)
    frame = pl.DataFrame(
        {"features": pp.from_scipy(X), "target": y, "w": np.linspace(0.5, 2, 3000)}
    )
    path = tmp_path / "train.parquet"
    frame.write_parquet(path)
    streamed = pp.SGDRegressor(shuffle=False, batch_size=256).fit(
        pl.scan_parquet(path), "target", "w"
    )
    in_memory = pp.SGDRegressor(shuffle=False).fit(frame, "target", sample_weight="w")
    np.testing.assert_allclose(streamed.predict(frame), in_memory.predict(frame), rtol=1e-12)
    assert streamed.progressive_loss_ == pytest.approx(in_memory.progressive_loss_)
    # Numeric columns work as features too (to_sparse under the hood).
    numeric = pl.DataFrame({"a": X.toarray()[:, 0], "b": X.toarray()[:, 1], "target": y})
    model = pp.SGDRegressor(shuffle=False).fit(numeric.lazy(), "target")
    assert model.feature_columns_ == ["a", "b"]
    np.testing.assert_allclose(
        model.predict(numeric), numeric.select(model.predict_expr())["features"].to_numpy()
    )


def test_lazy_batches_are_slices_of_the_engines_frames(tmp_path: Path) -> None:
    from polars_poly._input import batches_of

    frame = pl.DataFrame({"x": np.arange(3000), "y": np.arange(3000) % 7})
    path = tmp_path / "rows.parquet"
    frame.write_parquet(path, row_group_size=1000)
    query = pl.scan_parquet(path).with_columns(z=pl.col("x") * 2)
    batches = list(batches_of(query, 256))
    assert all(0 < len(batch) <= 256 for batch in batches)
    assert pl.concat(batches).equals(query.collect())
    # Each is a slice of one frame of the engine: one chunk, never copied together.
    assert all(batch.n_chunks() == 1 for batch in batches)
    assert len(list(batches_of(query.filter(pl.col("x") < 0), 256))) == 0


# --------------------------------------------------------------------------------- persistence


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    expansion=st.sampled_from(["linear", "quadratic"]),
    classifier=st.booleans(),
)
def test_save_load_round_trip(
    tmp_path_factory: pytest.TempPathFactory, seed: int, expansion: str, classifier: bool
) -> None:
    X, y = toy_regression(120, seed)
    labels = (y > 0).astype(int) if classifier else y
    cls = pp.SGDClassifier if classifier else pp.SGDRegressor
    model = cls(expansion=expansion, bits=14).fit(X, labels)
    path = tmp_path_factory.mktemp("model") / "m.pp"
    model.save(path)
    loaded = pp.load_model(path)
    assert type(loaded) is cls and loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded._scores(X), model._scores(X))
    assert loaded.progressive_loss_ == model.progressive_loss_
    # Loading and continuing training equals training on.
    model.partial_fit(X, labels)
    loaded.partial_fit(X, labels)
    np.testing.assert_array_equal(loaded._scores(X), model._scores(X))
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored._scores(X), model._scores(X))


def test_bad_model_files_are_rejected(tmp_path: Path) -> None:
    X, y = toy_regression(50)
    model = pp.SGDRegressor().fit(X, y)
    path = tmp_path / "m.pp"
    model.save(path)
    data = path.read_bytes()
    (tmp_path / "text").write_text("1 1:0.5\n")
    with pytest.raises(ValueError, match="not a polars-poly model"):
        pp.load_model(tmp_path / "text")
    (tmp_path / "cut").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="truncated"):
        pp.load_model(tmp_path / "cut")
    corrupted = bytearray(data)
    corrupted[len(data) // 2] ^= 0xFF
    (tmp_path / "bad").write_bytes(bytes(corrupted))
    with pytest.raises(ValueError, match="checksum mismatch"):
        pp.load_model(tmp_path / "bad")
    with pytest.raises(OSError, match="missing"):
        pp.load_model(tmp_path / "missing")
    with pytest.raises(TypeError, match="holds a SGDRegressor"):
        pp.SGDClassifier.load(path)


# ---------------------------------------------------------------------------------- bad input


def test_a_pandas_frame_reads_its_columns_by_name() -> None:
    """A pandas DataFrame is read as a Polars frame: its columns by name, so the same frame
    with its columns in another order predicts the same (it was read by position)."""
    pd = pytest.importorskip("pandas")
    X, y = toy_classification(300)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    model = pp.SGDClassifier().fit(frame, y)
    assert model.feature_columns_ == list(frame.columns)
    reordered = frame[list(reversed(frame.columns))]
    np.testing.assert_array_equal(model.predict(reordered), model.predict(frame))
    np.testing.assert_array_equal(
        model.predict(frame), pp.SGDClassifier().fit(pl.from_pandas(frame), y).predict(frame)
    )


def test_feature_names_in_are_the_frames_feature_columns(tmp_path: Path) -> None:
    """scikit-learn's ``feature_names_in_``: a frame's feature columns (numeric and sparse
    alike, not the label), kept by save/load and pickling; ``n_features_in_``: a matrix's width,
    or the number of numeric columns (none with a sparse column, which reads as a matrix of any
    width). A matrix scored by a model of numeric columns must be as wide as they are."""
    X, y = toy_classification(200)
    frame = pl.DataFrame({f"x{i}": X[:, i] for i in range(X.shape[1])}).with_columns(
        label=pl.Series(y),
        words=pl.Series([["a", "b"] if v > 0 else ["c"] for v in y]),
    )
    model = pp.SGDClassifier(progress=False).fit(frame, "label")
    names = [f"x{i}" for i in range(X.shape[1])] + ["words"]
    assert model.feature_names_in_.tolist() == names
    assert model.feature_names_in_.dtype == object
    assert not hasattr(model, "n_features_in_")
    model.save(tmp_path / "m.ppm")
    for restored in (pp.SGDClassifier.load(tmp_path / "m.ppm"), pickle.loads(pickle.dumps(model))):
        assert restored.feature_names_in_.tolist() == names

    numeric = pp.SGDRegressor(progress=False).fit(frame.drop("words"), "label")
    assert numeric.n_features_in_ == X.shape[1]
    numeric.save(tmp_path / "n.ppm")
    assert pp.SGDRegressor.load(tmp_path / "n.ppm").n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(numeric.predict(X), numeric.predict(frame.drop("words")))
    with pytest.raises(
        ValueError, match=f"X has {X.shape[1] + 1} features.*expecting {X.shape[1]}"
    ):
        numeric.predict(np.hstack([X, X[:, :1]]))

    numeric.fit(X, y)
    assert numeric.n_features_in_ == X.shape[1]
    assert not hasattr(numeric, "feature_names_in_")
    with pytest.raises(AttributeError, match="not fitted on a frame's named feature columns"):
        _ = numeric.feature_names_in_


def test_scoring_expressions_read_the_fitted_columns_by_name() -> None:
    """Column names given to a scoring expression in another order than fitted are read in
    the fitted order (by position each column fed another's namespace: wrong scores, no
    error); renamed columns are still read by position."""
    from polars_poly.synthetic import eat_rate

    raw = eat_rate(6_000, seed=2, varieties=10, noise_fields=1)
    fields = [c for c in raw.columns if c != "label"]
    frame = raw.select("label", *(pp.hash_features(f, bits=18).alias(f) for f in fields))
    model = pp.SGDClassifier(loss="logistic", bits=18, interactions=[("A", "B")]).fit(
        frame, "label"
    )
    expected = model.predict_proba(frame.drop("label"))[:, 1]
    swapped = frame.select(model.predict_proba_expr(*reversed(fields))).to_series().to_numpy()
    np.testing.assert_array_equal(swapped, expected)
    renamed = frame.rename({"A": "first"})
    positional = renamed.select(model.predict_proba_expr("first", *fields[1:])).to_series()
    np.testing.assert_array_equal(positional.to_numpy(), expected)


def test_frames_of_many_chunks_learn_in_place_and_as_one_chunk() -> None:
    """A frame read from parquet has a chunk per row group: the batches of a fit are cut at
    the chunks' ends (the engine then reads each in place instead of copying it), and the
    model is the one the same frame in one chunk trains, bit for bit."""
    from polars_poly._input import batch_ranges
    from polars_poly.synthetic import eat_rate

    raw = eat_rate(9_000, seed=4, varieties=10, noise_fields=1)
    fields = [c for c in raw.columns if c != "label"]
    whole = raw.select("label", *(pp.hash_features(f, bits=18).alias(f) for f in fields))
    pieces = [whole.slice(0, 2_500), whole.slice(2_500, 4_000), whole.slice(6_500, 2_500)]
    chunked = pl.concat(pieces, rechunk=False)
    assert chunked.n_chunks() == 3 and whole.n_chunks() == 1
    ranges = list(batch_ranges([chunked[f] for f in fields], len(chunked), 1_000))
    assert [s for s, _ in ranges][:4] == [0, 1_000, 2_000, 2_500]  # cut at 2,500
    assert all(not (s < end < s + n) for s, n in ranges for end in (2_500, 6_500))
    assert sum(n for _, n in ranges) == len(chunked)
    models = [
        pp.SGDClassifier(bits=18, interactions=[("A", "B")], batch_size=1_000).fit(f, "label")
        for f in (whole, chunked)
    ]
    x = whole.drop("label")
    np.testing.assert_array_equal(models[0].decision_function(x), models[1].decision_function(x))
    assert models[0].pass_loss_ == models[1].pass_loss_


def test_frames_of_many_chunks_are_scored_in_place_and_as_one_chunk() -> None:
    """Scoring cuts a frame's columns at their chunks' ends too (chunks of 16k rows or more on
    average), scoring the pieces in order: the scores are the one-chunk frame's."""
    from polars_poly._input import SCORE_CHUNK_ROWS, SCORE_ROWS, batch_ranges
    from polars_poly.synthetic import eat_rate

    raw = eat_rate(60_000, seed=5, varieties=10, noise_fields=1)
    fields = [c for c in raw.columns if c != "label"]
    whole = raw.select(*(pp.hash_features(f, bits=18).alias(f) for f in fields))
    chunked = pl.concat(
        [whole.slice(0, 20_000), whole.slice(20_000, 17_000), whole.slice(37_000, 23_000)],
        rechunk=False,
    )
    columns = [chunked[f] for f in fields]
    ranges = list(batch_ranges(columns, len(chunked), SCORE_ROWS, SCORE_CHUNK_ROWS))
    assert ranges == [(0, 20_000), (20_000, 17_000), (37_000, 23_000)]
    labels = raw["label"].to_numpy()
    binary = pp.SGDClassifier(bits=18, interactions=[("A", "B")]).fit(whole, labels)
    np.testing.assert_array_equal(binary.predict_proba(chunked), binary.predict_proba(whole))
    multiclass = pp.SGDClassifier(bits=18).fit(whole, np.arange(len(whole)) % 3)
    np.testing.assert_array_equal(
        multiclass.decision_function(chunked), multiclass.decision_function(whole)
    )
    regressor = pp.SGDRegressor(bits=18).fit(whole, labels)
    np.testing.assert_array_equal(regressor.predict(chunked), regressor.predict(whole))


def test_bad_input_raises_precise_errors() -> None:
    X, y = toy_classification(20)
    with pytest.raises(ValueError, match=r"Unknown label type: continuous \(y holds 0.5\)"):
        pp.SGDClassifier().fit(X, np.where(np.arange(20) == 4, 0.5, y))
    fitted = pp.SGDClassifier().fit(X, y)
    with pytest.raises(ValueError, match=r"row 20: label -1 is not one of the classes \[0, 1\]"):
        fitted.partial_fit(X, -np.ones(20, dtype=int))
    with pytest.raises(ValueError, match=r"greater than one; got 1 class \(2\).*classes="):
        pp.SGDClassifier().fit(X, np.full(20, 2))
    # A LazyFrame's labels of one string class (read as Python objects: it was an
    # AttributeError before).
    with pytest.raises(ValueError, match="Sample weights must contain at least one non-zero"):
        lazy = pl.LazyFrame({"x": np.arange(20.0), "y": y, "w": np.zeros(20)})
        pp.SGDClassifier().fit(lazy, "y", "w")
    one_class = pl.LazyFrame({"x": np.arange(20.0), "y": ["no"] * 20})
    with pytest.raises(ValueError, match=r"got 1 class \('no'\)"):
        pp.SGDClassifier().fit(one_class, "y")
    with pytest.raises(ValueError, match="row 3 is null"):
        pp.SGDClassifier().fit(X, pl.Series(["a", "b", "c", None] * 5))
    bad = np.array(y, dtype=float)
    bad[7] = np.nan
    with pytest.raises(ValueError, match="row 7: label is nan"):
        pp.SGDClassifier().fit(X, bad)
    with pytest.raises(ValueError, match="row 7: label is NaN"):
        pp.SGDRegressor().fit(X, bad)
    Xbad = X.copy()
    Xbad[5, 2] = np.inf
    with pytest.raises(ValueError, match="row 5"):
        pp.SGDRegressor().fit(Xbad, y)
    with pytest.raises(ValueError, match="20 rows but labels have 19"):
        pp.SGDRegressor().fit(X, y[:19])
    with pytest.raises(ValueError, match=r"bits must be an integer in \[1, 32\] or None, got 0"):
        pp.SGDRegressor(bits=0).fit(X, y)
    with pytest.raises(ValueError, match="expansion must be"):
        pp.SGDRegressor(expansion="quartic").fit(X, y)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="eta0 must be finite and > 0"):
        pp.SGDRegressor(eta0=-1.0).fit(X, y)
    with pytest.raises(ValueError, match=r"0 sample\(s\) \(shape=\(0, 5\)\)"):
        pp.SGDRegressor().fit(X[:0], y[:0])
    empty = pl.DataFrame({"features": pp.from_numpy(X), "y": y}).head(0)
    with pytest.raises(ValueError, match="cannot fit on 0 examples"):
        pp.SGDRegressor().fit(empty, "y")
    with pytest.raises(ValueError, match="cannot fit on 0 examples: y is empty"):
        pp.SGDClassifier().fit(empty, "y")  # (was an IndexError in the classes' message)
    Xnan = X.copy()
    Xnan[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN at row 3, column 1"):
        pp.SGDRegressor().fit(Xnan, y)
    with pytest.raises(ValueError, match="importance weight is -1"):
        pp.SGDRegressor().fit(X, y, sample_weight=-np.ones(20))
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        pp.SGDRegressor().predict(X)
    with pytest.raises(ValueError, match="X has 4 features, but SGDClassifier is expecting 5"):
        fitted.predict(X[:, :4])
    frame = pl.DataFrame({"features": pp.from_numpy(X), "y": y}).with_columns(
        pl.when(pl.int_range(pl.len()) == 2)
        .then(None)
        .otherwise(pl.col("features"))
        .alias("features")
    )
    with pytest.raises(ValueError, match='feature column "features": row 2 is null'):
        pp.SGDClassifier().fit(frame, "y")


def test_frame_columns_are_never_silently_ignored() -> None:
    # The automatic choice (every sparse, string and numeric column but the target) must not
    # drop a column the user gave: a column of no feature type is an error naming it;
    # features= chooses.
    X, y = toy_classification(20)
    numeric = pl.DataFrame({"a": X[:, 0], "b": X[:, 1], "city": ["x"] * 20, "y": y})
    dated = numeric.with_columns(pl.date(2020, 1, 1).alias("day"))
    with pytest.raises(
        TypeError,
        match=r"numeric and string feature columns are \['a', 'b', 'city'\].*'day' \(Date\)",
    ):
        pp.SGDRegressor().fit(dated, "y")
    # A string column is a namespace (hashed as it is read); the numeric ones another, after it.
    assert pp.SGDRegressor().fit(numeric, "y").namespaces_ == ["city", "features"]
    # ... whose name a sparse column may already have: refused, naming it.
    sparse = pl.DataFrame({"features": pp.from_numpy(X), "age": X[:, 0], "y": y})
    with pytest.raises(ValueError, match=r"\['age'\] form one namespace, 'features'.*sparse"):
        pp.SGDRegressor().fit(sparse, "y")
    chosen = pp.SGDRegressor(features=["a", "b"]).fit(numeric, "y")
    alone = pp.SGDRegressor().fit(numeric.drop("city"), "y")
    np.testing.assert_array_equal(chosen.predict(numeric), alone.predict(numeric))
    dates = numeric.select(pl.date(2020, 1, 1).alias("day"), "y")
    with pytest.raises(
        TypeError, match="no sparse, string or numeric feature columns.*hash_features"
    ):
        pp.SGDRegressor().fit(dates, "y")


# ------------------------------------------------------------------- Vowpal Wabbit side by side


def _vw_lines(X: sp.csr_array, y: np.ndarray) -> list[str]:
    lines = []
    for row in range(X.shape[0]):
        start, end = X.indptr[row], X.indptr[row + 1]
        pairs = zip(X.indices[start:end], X.data[start:end], strict=True)
        feats = " ".join(f"{i}:{v:.9g}" for i, v in pairs)
        lines.append(f"{y[row]:g} |features {feats}")
    return lines


@pytest.mark.parametrize("expansion", ["linear", "quadratic"])
def test_progressive_loss_matches_vowpal_wabbit(expansion: str) -> None:
    vw = pytest.importorskip("vowpalwabbit")
    frame = pp.read_libsvm(shared_file("a9a", "a9a.gz"), n_features=124).head(10_000)
    csr = pp.to_scipy(frame["features"], 124)
    labels = frame["label"].to_numpy()
    args = "--quiet --loss_function logistic -b 18" + (" -q ff" if expansion == "quadratic" else "")
    workspace = vw.Workspace(args)
    for line in _vw_lines(csr, labels):
        workspace.learn(line)
    theirs = workspace.get_sum_loss() / workspace.get_weighted_examples()
    workspace.finish()
    ours = pp.SGDClassifier(shuffle=False, expansion=expansion).fit(csr, labels).progressive_loss_
    # Same hashing and update rule: equal to VW up to float rounding (measured: ~1e-6).
    assert ours == pytest.approx(theirs, rel=1e-3), (ours, theirs)


def test_vw_file_namespace_columns_train_exactly_like_vowpal_wabbit(tmp_path: Path) -> None:
    """A Vowpal Wabbit file read with one column per namespace trains as ``vw -q AB`` does:
    same slots for every feature and cross, so the same progressive loss and predictions."""
    vw = pytest.importorskip("vowpalwabbit")
    rng = np.random.default_rng(3)
    lines = []
    for _ in range(3000):
        a, b, c = rng.integers(0, 40), rng.integers(0, 40), rng.integers(0, 500)
        label = 1 if (a % 2 == b % 2) != (rng.random() < 0.1) else -1
        weight = f" {rng.choice([0.5, 1, 2])}"
        lines.append(f"{label}{weight} |Animal a{a} |Bfood b{b}:{rng.random() + 0.5:.4f} |c {c} w")
    path = tmp_path / "train.vw"
    path.write_text("\n".join(lines) + "\n")
    args = "--quiet --loss_function logistic -b 20 -q AB"
    workspace = vw.Workspace(args)
    for line in lines:
        workspace.learn(line)
    theirs = workspace.get_sum_loss() / workspace.get_weighted_examples()
    margins = [workspace.predict(line) for line in lines[:200]]
    workspace.finish()
    frame = pp.read_vw(path, namespaces="auto")
    assert frame.columns[4:] == ["A", "B", "c"]
    # field_scales=False: Vowpal Wabbit's model ('auto' learns a scale per column and cross).
    model = pp.SGDClassifier(
        shuffle=False,
        loss="logistic",
        bits=20,
        interactions=[("A", "B")],
        field_scales=False,
        progress=False,
    )
    # The frame as read: its label and importance weights are used, as vw uses them.
    model.fit(frame)
    # Measured: equal to 1e-7 (float rounding only).
    assert model.progressive_loss_ == pytest.approx(theirs, rel=1e-5)
    ours = model.decision_function(frame.head(200))
    np.testing.assert_allclose(ours, margins, rtol=1e-4, atol=1e-5)
    streamed = model.__sklearn_clone__()
    assert streamed.fit(pp.scan_vw(path, namespaces="auto")).progressive_loss_ == pytest.approx(
        model.progressive_loss_, rel=1e-12
    )
    unweighted = model.__sklearn_clone__()
    assert unweighted.fit(frame.drop("weight")).progressive_loss_ != pytest.approx(theirs)
    (tmp_path / "based.vw").write_text("1 |a x\n-1 0.5 0.25 |a y\n")
    with pytest.raises(ValueError, match=r"row 1 has base \(initial prediction\) 0.25"):
        pp.SGDRegressor(shuffle=False).fit(pp.read_vw(tmp_path / "based.vw"))


def _vw_crosses_lines(n: int = 1500, seed: int = 7) -> list[str]:
    """A regression file of three namespaces: ``a`` holds 1 to 4 numbered features, each line's
    in increasing order (Vowpal Wabbit hashes the number ``i`` of namespace ``a`` to
    ``i + hash(a)``, so its order is the order of our canonical rows, on which a namespace crossed
    with itself takes its pairs i <= j), ``b`` 1 to 2 named features with values, ``c`` 1 to 2
    named ones."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        a_indices = np.sort(rng.choice(30, size=rng.integers(1, 5), replace=False))
        a = " ".join(f"{i}:{rng.uniform(0.5, 1.5):.3f}" for i in a_indices)
        b_indices = rng.choice(20, size=rng.integers(1, 3), replace=False)
        b = " ".join(f"b{k}:{rng.uniform(-1, 1):.3f}" for k in b_indices)
        c_indices = rng.choice(8, size=rng.integers(1, 3), replace=False)
        c = " ".join(f"c{k}" for k in c_indices)
        label = float(a_indices.sum() % 3) - 0.5 * (b_indices[0] % 2) + 0.1 * rng.normal()
        lines.append(f"{label:.4f} |a {a} |b {b} |c {c}")
    return lines


def _vw_progressive(
    vw: Any, lines: list[str], args: str, tmp_path: Path
) -> tuple[float, np.ndarray]:
    """Vowpal Wabbit's progressive average loss and ``-p`` predictions on ``lines``."""
    predictions = tmp_path / "vw_predictions.txt"
    workspace = vw.Workspace(f"--quiet {args} -p {predictions}")
    for line in lines:
        workspace.learn(line)
    loss = workspace.get_sum_loss() / workspace.get_weighted_examples()
    workspace.finish()
    return loss, np.loadtxt(predictions)


VW_CROSSES = {
    "abc": ([("a", "b", "c")], "--interactions abc"),
    "aaa": ([("a", "a", "a")], "--cubic aaa"),
    "pairs and a triple": (
        [("a", "b"), ("c", "b", "a"), ("a", "a")],
        "-q ab --interactions cba -q aa",
    ),
    "aaab and ba": ([("a", "a", "a", "b"), ("b", "a")], "--interactions aaab --interactions ba"),
}


@pytest.mark.parametrize("case", list(VW_CROSSES))
def test_crosses_of_any_order_train_exactly_like_vowpal_wabbit(case: str, tmp_path: Path) -> None:
    """``interactions`` of three and more columns (and repeated ones) on a Vowpal Wabbit file
    read with one column per namespace train as ``vw --interactions`` does: the same slots for
    every product, so the same progressive loss and ``-p`` predictions."""
    vw = pytest.importorskip("vowpalwabbit")
    crosses, flags = VW_CROSSES[case]
    lines = _vw_crosses_lines()
    path = tmp_path / "train.vw"
    path.write_text("\n".join(lines) + "\n")
    theirs, their_predictions = _vw_progressive(vw, lines, f"-b 18 {flags}", tmp_path)
    frame = pp.read_vw(path, namespaces="abc")
    model = pp.SGDRegressor(
        shuffle=False, bits=18, interactions=crosses, field_scales=False, progress=False
    )
    model.fit(frame)
    # Measured: 1e-7 apart (float rounding only).
    assert model.progressive_loss_ == pytest.approx(theirs, rel=1e-5)
    # The progressive predictions, from the engine learner the estimator builds.
    engine = Learner(model._engine_options(["a", "b", "c"]))
    _, _, ours = engine.learn_recording([frame["a"], frame["b"], frame["c"]], frame["label"])
    np.testing.assert_allclose(ours.to_numpy(), their_predictions, atol=1e-4)
    path = tmp_path / "model.pp"
    model.save(path)
    loaded = pp.load_model(path)
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))


def test_the_initial_weight_trains_exactly_like_vowpal_wabbit(tmp_path: Path) -> None:
    """``initial_weight`` is ``vw --initial_weight``: every slot (the constant's too) starts
    there, linear and crossed alike."""
    vw = pytest.importorskip("vowpalwabbit")
    lines = _vw_crosses_lines(1000, seed=9)
    path = tmp_path / "train.vw"
    path.write_text("\n".join(lines) + "\n")
    frame = pp.read_vw(path, namespaces="abc")
    for crosses, flags in (([], ""), ([("a", "b", "c")], "--interactions abc")):
        theirs, their_predictions = _vw_progressive(
            vw, lines, f"-b 18 --initial_weight 0.5 {flags}", tmp_path
        )
        model = pp.SGDRegressor(
            shuffle=False,
            bits=18,
            initial_weight=0.5,
            interactions=crosses,
            field_scales=False,
            progress=False,
        )
        model.fit(frame)
        assert model.progressive_loss_ == pytest.approx(theirs, rel=1e-5), flags
        engine = Learner(model._engine_options(["a", "b", "c"]))
        _, _, ours = engine.learn_recording([frame["a"], frame["b"], frame["c"]], frame["label"])
        np.testing.assert_allclose(ours.to_numpy(), their_predictions, atol=1e-4)
        plain = pp.SGDRegressor(
            shuffle=False, bits=18, interactions=crosses, field_scales=False, progress=False
        )
        assert plain.fit(frame).progressive_loss_ != pytest.approx(theirs, rel=1e-3)
        loaded = pickle.loads(pickle.dumps(model))
        assert loaded.get_params()["initial_weight"] == 0.5
        np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))


def test_crosses_are_checked_named_and_kept_in_vowpal_wabbits_form(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            name: pp.from_numpy(np.random.default_rng(k).random((50, 3)))
            for k, name in enumerate(["a", "b", "c"])
        }
    ).with_columns(y=pl.Series(np.arange(50) % 2))
    for bad in ([("a",)], [("a", "b"), "c"], [("a", 1, "b")], "ab"):
        with pytest.raises(TypeError, match="each a tuple of two or more feature column names"):
            pp.SGDClassifier(interactions=bad).fit(frame, "y")
    with pytest.raises(ValueError, match="'d' is not a feature column"):
        pp.SGDClassifier(interactions=[("a", "b", "d")]).fit(frame, "y")
    given = [("b", "a", "b"), ("c", "b", "a"), ("a", "b", "c"), ("c", "c", "c", "c")]
    model = pp.SGDClassifier(interactions=given, progress=False).fit(frame, "y")
    assert model.get_params()["interactions"] == given
    fields = model.field_scales_["field"].to_list()
    assert fields[-3:] == ["a*b*b", "a*b*c", "c*c*c*c"]
    # A loaded model reports the crosses it learns (Vowpal Wabbit's form): ``bab`` sorted, and
    # of ``cba`` and ``abc`` (the same columns) the first in column order.
    model.save(tmp_path / "m.pp")
    loaded = pp.load_model(tmp_path / "m.pp")
    assert loaded.interactions == [("a", "b", "b"), ("a", "b", "c"), ("c", "c", "c", "c")]
    np.testing.assert_array_equal(loaded.predict_proba(frame), model.predict_proba(frame))
    # A column of 1000 features crossed with itself 5 times is refused by size, naming the row.
    wide = pl.DataFrame({"a": pp.from_numpy(np.ones((2, 1000)))}).with_columns(y=pl.Series([0, 1]))
    with pytest.raises(ValueError, match=r"row 0: .* namespace cross\(es\) of up to 5"):
        pp.SGDClassifier(interactions=[("a",) * 5]).fit(wide, "y")


def test_one_against_all_crosses_of_three_columns_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    n = 900
    columns = {name: rng.integers(0, 3, n) for name in "abc"}
    frame = pl.DataFrame(
        {name: pp.from_numpy(np.eye(3)[values]) for name, values in columns.items()}
    ).with_columns(y=pl.Series((columns["a"] + columns["b"] * columns["c"]) % 3))
    model = pp.SGDClassifier(
        interactions=[("a", "b", "c")], initial_weight=0.1, passes=3, progress=False
    ).fit(frame, "y")
    linear = pp.SGDClassifier(passes=3, progress=False).fit(frame, "y")
    assert model.score(frame, "y") > linear.score(frame, "y")
    model.save(tmp_path / "m.pp")
    loaded = pp.load_model(tmp_path / "m.pp")
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.predict_proba(frame), model.predict_proba(frame))


def test_namespaces_crosses_and_arrow_input() -> None:
    # y depends only on the product of a "user" and an "item" feature: linear terms cannot
    # learn it, the namespace cross can.
    rng = np.random.default_rng(5)
    n = 6000
    users, items = rng.integers(0, 2, n), rng.integers(0, 2, n)
    y = (users == items).astype(int)
    frame = pl.DataFrame(
        {
            "user": pp.from_numpy(np.column_stack([users == 0, users == 1]).astype(float)),
            "item": pp.from_numpy(np.column_stack([items == 0, items == 1]).astype(float)),
            "y": y,
        }
    )
    plain = pp.SGDClassifier().fit(frame, "y")
    crossed = pp.SGDClassifier(interactions=[("user", "item")]).fit(frame, "y")
    assert plain.namespaces_ == ["user", "item"]
    assert crossed.score(frame, "y") == 1.0 and plain.score(frame, "y") < 0.8
    np.testing.assert_array_equal(
        frame.select(crossed.predict_expr())["user"].to_numpy(), crossed.predict(frame)
    )
    from_arrow = pp.SGDClassifier(interactions=[("user", "item")]).fit(frame.to_arrow(), "y")
    np.testing.assert_array_equal(
        from_arrow.decision_function(frame), crossed.decision_function(frame)
    )
    with pytest.raises(ValueError, match="'shop' is not a feature column"):
        pp.SGDClassifier(interactions=[("user", "shop")]).fit(frame, "y")


def test_progress_bar_shows_rate_and_loss(capsys: pytest.CaptureFixture[str]) -> None:
    X, y = toy_regression(500)
    pp.SGDRegressor(progress=True, batch_size=100).fit(X, y)
    err = capsys.readouterr().err
    # One rate, tqdm's (examples/s), and the progressive loss.
    assert "SGDRegressor" in err and "loss=" in err and "ex/s" in err and "ex_s=" not in err
    pp.SGDRegressor(progress=False).fit(X, y)
    assert capsys.readouterr().err == ""


def test_history_has_a_row_at_each_doubling_and_plots(tmp_path: Path) -> None:
    X, y = toy_regression(1000)
    model = pp.SGDRegressor(shuffle=False, expansion=pp.Apple(), progress=False).fit(X, y)
    history = model.history_
    assert history["examples"].to_list() == [2**k for k in range(10)] + [1000]
    assert history["progressive_loss"][-1] == pytest.approx(model.progressive_loss_)
    expansions = history["expansions"].to_list()
    assert expansions == sorted(expansions) and expansions[-1] == model.n_expansions_
    assert history["parents"][-1] == model.n_parents_
    # Cut at doublings or not, learning is example by example: the engine fed in one piece
    # learns the same model.
    from polars_poly import _internal

    # The engine model of the ranking the race kept (``ranking="auto"``).
    kept = pp.Apple(ranking=model.apple_ranking_)
    whole = _internal.Learner(
        pp.SGDRegressor(shuffle=False, expansion=kept)._engine_options(["features"])
    )
    whole.begin_run(1000)
    whole.learn([pp.from_scipy(X)], pl.Series(y), None, 0)
    np.testing.assert_array_equal(whole.predict([pp.from_scipy(X)]).to_numpy(), model.predict(X))
    model.partial_fit(X[:100], y[:100])
    assert model.history_["examples"][-1] == 1100
    import matplotlib

    matplotlib.use("Agg")
    ax = model.plot_learning_curve()
    assert ax.get_xscale() == "log" and len(ax.lines) >= 2
    with pytest.raises(Exception, match="not fitted"):
        _ = pp.SGDRegressor(shuffle=False).history_


def test_an_expression_of_a_saved_model_outlives_the_model(tmp_path: Path) -> None:
    import gc
    import subprocess
    import sys

    X, y = toy_regression(200)
    frame = pl.DataFrame({"features": pp.from_scipy(X)})
    model = pp.SGDRegressor(progress=False).fit(X, y)
    expected = model.predict(X)
    path = tmp_path / "m.bin"
    model.save(path)
    # A temporary model: the expression reads the file back when it runs.
    query = frame.lazy().select(pp.load_model(path).predict_expr("features").alias("p"))
    gc.collect()
    np.testing.assert_array_equal(query.collect()["p"].to_numpy(), expected)
    # ... also in another process, from the serialized query.
    serialized = tmp_path / "query.bin"
    query.serialize(serialized)
    script = (
        "import polars as pl, polars_poly, sys\n"
        "print(pl.LazyFrame.deserialize(sys.argv[1]).collect()['p'].sum())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(serialized)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == pytest.approx(expected.sum())
    # A model that learned after it was loaded is not its file any more: its expression carries
    # the model's own bytes, so it scores as the changed model, here and in another process.
    changed = pp.load_model(path)
    changed.partial_fit(X[:10], y[:10])
    changed_expected = changed.predict(X)
    carried = frame.lazy().select(changed.predict_expr("features").alias("p"))
    del changed
    gc.collect()
    np.testing.assert_array_equal(carried.collect()["p"].to_numpy(), changed_expected)
    carried.serialize(tmp_path / "carried.bin")
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "carried.bin")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == pytest.approx(changed_expected.sum())
    # A file replaced since is refused (in a process that has not read the first one yet),
    # not taken for the model the expression was built from.
    pp.SGDRegressor(progress=False, eta0=0.1).fit(X, y).save(path)
    done = subprocess.run(
        [sys.executable, "-c", script, str(serialized)], capture_output=True, text=True
    )
    assert done.returncode != 0 and "changed since the expression was built" in done.stderr


@pytest.mark.parametrize("constant", [True, False])
def test_coef_and_intercept_reproduce_the_linear_scores(constant: bool) -> None:
    """coef_ and intercept_ are what the model scores with: X @ coef_.T + intercept_ equals the
    scores (float32 weights), for a matrix, numeric columns, scipy input, binary and multiclass."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(400, 6))
    y = X @ rng.normal(size=6) + 0.7
    options = {"constant": constant, "progress": False}
    regressor = pp.SGDRegressor(passes=3, **options).fit(X, y)
    assert regressor.coef_.shape == (6,) and regressor.intercept_.shape == (1,)
    # Predictions are clipped to the label range seen in training.
    linear = np.clip(X @ regressor.coef_ + regressor.intercept_, y.min(), y.max())
    np.testing.assert_allclose(linear, regressor.predict(X), atol=1e-5)
    assert (regressor.intercept_ != 0) == constant
    frame = pl.DataFrame({f"c{i}": X[:, i] for i in range(6)})
    binary = pp.SGDClassifier(**options).fit(frame, y > 0.7)
    assert binary.coef_.shape == (1, 6)
    scores = X @ binary.coef_.T + binary.intercept_
    np.testing.assert_allclose(scores[:, 0], binary.decision_function(frame), atol=1e-5)
    three = pp.SGDClassifier(**options).fit(sp.csr_matrix(X), np.digitize(y, [-1.0, 1.0]))
    assert three.coef_.shape == (3, 6)
    np.testing.assert_allclose(
        X @ three.coef_.T + three.intercept_, three.decision_function(X), atol=1e-5
    )
    with pytest.raises(AttributeError, match="expansion='quadratic'"):
        _ = pp.SGDRegressor(expansion="quadratic", progress=False).fit(X, y).coef_
    hashed = pl.DataFrame({"f": pp.from_numpy(X), "y": y})
    with pytest.raises(AttributeError, match=r"on hashed sparse columns \['f'\]"):
        _ = pp.SGDRegressor(progress=False).fit(hashed, "y").coef_


def test_learning_curve_and_monomial_plots_draw_what_the_model_holds() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 4))
    y = X[:, 0] * X[:, 1] + X[:, 2]
    model = pp.SGDRegressor(expansion="apple", progress=False).fit(X, y)
    ax = model.plot_monomials(top=5)
    bars = [patch.get_width() for patch in ax.patches]
    strongest = model.monomials().sort(pl.col("weight").abs(), descending=True).head(5)
    np.testing.assert_allclose(sorted(bars), sorted(strongest["weight"].to_list()))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1].startswith(strongest["monomial"][0] + " (exp. ")
    curve = model.plot_learning_curve()
    xs = curve.lines[0].get_xdata()
    np.testing.assert_array_equal(xs, model.history_["examples"].to_numpy())
    with pytest.raises(ValueError, match="top must be at least 1"):
        model.plot_monomials(top=0)
    with pytest.raises(ValueError, match="monomials\\(\\) describes apple"):
        pp.SGDRegressor(progress=False).fit(X, y).plot_monomials()
    plt.close("all")


def test_monomials_of_hashed_columns_read_as_column_values() -> None:
    """apple on hash_features output: hashed_feature_names turns x<index> factors back into
    column=value names, the planted product included."""
    rng = np.random.default_rng(6)
    n = 6000
    frame = pl.DataFrame(
        {
            "city": rng.choice(["Paris", "Lyon", "Nice"], n),
            "plan": rng.choice(["free", "pro"], n),
            "age": rng.normal(size=n),
        }
    )
    frame = frame.with_columns(
        y=((pl.col("city") == "Lyon") & (pl.col("plan") == "pro")).cast(pl.Float64) * 2
        + 0.1 * pl.col("age")
    )
    hashed = frame.select(pp.hash_features("city", "plan", "age", bits=16).alias("x"), "y")
    model = pp.SGDRegressor(expansion="apple", bits=16, passes=2, progress=False)
    model.fit(hashed, "y")
    names = pp.hashed_feature_names(frame, "city", "plan", "age", bits=16)
    assert set(names["name"]) == {
        "city=Paris",
        "city=Lyon",
        "city=Nice",
        "plan=free",
        "plan=pro",
        "age",
    }
    named = model.monomials(names=names)
    unnamed = model.monomials()
    assert named.height == unnamed.height
    factors = {f for row in named["factors"].to_list() for f in row}
    assert factors <= set(names["name"]), factors
    assert unnamed["monomial"][0].startswith("x")
    as_dict = model.monomials(names=dict(names.iter_rows()))
    assert as_dict["monomial"].to_list() == named["monomial"].to_list()
    with pytest.raises(ValueError, match="columns index and name"):
        model.monomials(names=names.rename({"name": "label"}))


def test_a_never_saved_model_too_large_to_carry_says_how_to_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above the embedding limit a never-saved model's expression carries only its handle: once
    the model is gone it fails with an error saying to keep it or save it."""
    import gc

    from polars_poly import _persist

    X, y = toy_regression(200)
    frame = pl.DataFrame({"features": pp.from_scipy(X)})
    monkeypatch.setattr(_persist, "EMBED_LIMIT", 0)
    query = frame.lazy().select(pp.SGDRegressor(progress=False).fit(X, y).predict_expr("features"))
    gc.collect()
    with pytest.raises(pl.exceptions.ComputeError, match="never saved"):
        query.collect()


def test_a_multi_pass_fit_records_its_learning_curve() -> None:
    """A multi-pass in-memory fit (one engine call) records rows at 1, 2, 4, ... examples over
    all passes and at each pass's end; its rows agree with the per-pass losses."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 3))
    y = X[:, 0] * X[:, 1]
    model = pp.SGDRegressor(expansion="apple", passes=3, holdout=0, progress=False).fit(X, y)
    history = model.history_
    examples = history["examples"].to_list()
    assert examples == [
        1,
        2,
        4,
        8,
        16,
        32,
        64,
        128,
        256,
        512,
        1024,
        2048,
        3000,
        4096,
        6000,
        8192,
        9000,
    ]
    # The rows at the passes' ends give back each pass's loss.
    ends = history.filter(pl.col("examples").is_in([3000, 6000, 9000]))
    losses = (ends["progressive_loss"] * ends["examples"]).to_numpy()
    per_pass = np.diff(np.concatenate([[0.0], losses])) / 3000
    np.testing.assert_allclose(per_pass, model.pass_loss_, rtol=1e-9)
    assert history["expansions"][-1] == model.n_expansions_
    assert history["expansions"][:-1].null_count() == len(examples) - 1


def test_a_builder_thread_beside_the_learner_changes_no_result(tmp_path: Path) -> None:
    """On a table larger than the cache the engine builds each batch's examples on a thread
    beside the learner (docs/architecture.md); a process whose thread pool has one thread
    (``RAYON_NUM_THREADS=1``) learns on one thread. Both fit the same model, score for score."""
    import os
    import subprocess
    import sys

    script = (
        "import sys, numpy as np, polars_poly as pp\n"
        "from polars_poly import synthetic\n"
        "raw = synthetic.eat_rate(20_000, 3)\n"
        "fields = [c for c in raw.columns if c != 'label']\n"
        "frame = raw.select('label', *(pp.hash_features(f, bits=22).alias(f) for f in fields))\n"
        "m = pp.SGDClassifier(loss='logistic', bits=22, interactions=[('A', 'B')], passes=2,\n"
        "                     progress=False).fit(frame, 'label')\n"
        "np.save(sys.argv[1], m.decision_function(frame.drop('label')))\n"
    )
    scores = []
    for threads in ["2", "1"]:
        path = tmp_path / f"scores_{threads}.npy"
        env = {**os.environ, "RAYON_NUM_THREADS": threads}
        done = subprocess.run(
            [sys.executable, "-c", script, str(path)], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        scores.append(np.load(path))
    assert np.abs(scores[0]).max() > 0.1, "the model learned something"
    np.testing.assert_array_equal(scores[0], scores[1])


def test_a_saturated_table_says_so_with_the_bits_that_would_hold_the_features() -> None:
    """Pairs of two 300-value fields (about 44,000 crosses seen) in a table of 2**14 slots: most
    every feature shares its slot, and the fit says so, naming the bits that would bring the
    shared share under 5%. The same data at those bits fits without the warning and better;
    `table_load_` is the share of slots in use (the warning's estimate, checked against the
    count of distinct features)."""
    import warnings

    from polars_poly.learner._saturation import bits_for, features_in

    rng = np.random.default_rng(8)
    n = 60_000
    a, b = rng.integers(0, 300, n), rng.integers(0, 300, n)
    frame = pl.DataFrame({"a": [f"a{v}" for v in a], "b": [f"b{v}" for v in b]})
    y = ((a * 7 + b * 13) % 5 < 2).astype(int)
    crossed = {"loss": "logistic", "interactions": [("a", "b")], "shuffle": False}
    with pytest.warns(pp.TableSaturationWarning, match=r"bits=14\) is 9\d% full") as caught:
        small = pp.SGDClassifier(bits=14, **crossed).fit(frame, y)
    message = str(caught[0].message)
    distinct = len(set(zip(a, b, strict=True))) + 600 + 1  # crosses, each field's values, constant
    assert small.table_load_ > 0.9
    estimate = features_in(small.table_load_, 14)
    assert 0.9 < estimate / distinct < 1.1, (estimate, distinct)
    wanted = bits_for(estimate)
    assert f"bits={wanted} would bring that under 5%" in message
    assert caught[0].filename == __file__, "the warning points at the caller's fit"
    with warnings.catch_warnings():
        warnings.simplefilter("error", pp.TableSaturationWarning)
        roomy = pp.SGDClassifier(bits=wanted, **crossed).fit(frame, y)
    assert roomy.table_load_ < 0.05 < 0.9 < small.table_load_
    assert roomy.progressive_loss_ < small.progressive_loss_


def test_a_frame_of_many_chunks_shuffles_to_the_same_model_and_stays_as_given() -> None:
    """A frame read in pieces (parquet row groups) is shuffled from contiguous copies of its
    columns (gathering from many chunks cost 5-7x the fit): the same model as from the frame
    made contiguous first; the frame given keeps its chunks."""
    rng = np.random.default_rng(3)
    parts = [
        pl.DataFrame(
            {
                "a": rng.integers(0, 50, 500).astype(str),
                "b": rng.integers(0, 50, 500).astype(str),
                "y": rng.choice([-1.0, 1.0], 500),
            }
        )
        for _ in range(6)
    ]
    chunked = pl.concat(parts, rechunk=False)
    assert chunked["a"].n_chunks() == 6
    options = {"loss": "logistic", "interactions": [("a", "b")], "random_state": 4}
    from_chunks = pp.SGDClassifier(**options).fit(chunked, "y")
    from_one = pp.SGDClassifier(**options).fit(chunked.rechunk(), "y")
    features = chunked.drop("y")
    np.testing.assert_array_equal(
        from_chunks.decision_function(features), from_one.decision_function(features)
    )
    assert from_chunks.progressive_loss_ == from_one.progressive_loss_
    assert chunked["a"].n_chunks() == 6
