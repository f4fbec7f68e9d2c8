"""DoSClassifier / PassiveAggressiveClassifier: the passive-aggressive contract (margin 1 after a
step), an independent numpy linear PA, multiclass, Polars expressions, save/load, scikit-learn
conformance and bad input."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from polars_poly.dos import _shuffled_rows
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

finite = st.floats(-3, 3, allow_nan=False).filter(lambda v: abs(v) > 1e-3)


@settings(max_examples=60, deadline=None)
@given(
    x=st.lists(finite, min_size=1, max_size=6),
    rank=st.integers(1, 4),
    seed=st.integers(0, 50),
    label=st.sampled_from([0, 1]),
)
def test_one_dos_step_reaches_margin_one(x: list[float], rank: int, seed: int, label: int) -> None:
    X = np.array([x])
    model = pp.DoSClassifier(rank, averaging=None, random_state=seed)
    model.partial_fit(X, [label], classes=[0, 1])
    sign = 1.0 if label == 1 else -1.0
    margin = sign * model.decision_function(X)[0]
    # Passive-aggressive: an example with margin < 1 is learned to margin exactly 1; one that
    # already had margin >= 1 leaves the model alone.
    assert margin == pytest.approx(1.0, rel=1e-4) or margin > 1.0


def numpy_linear_pa(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Crammer et al.'s PA on z = [x; 1], from zero weights."""
    w = np.zeros(X.shape[1] + 1)
    for x, label in zip(X, y, strict=True):
        z = np.append(x, 1.0)
        loss = max(0.0, 1.0 - label * w @ z)
        w += loss / (z @ z) * label * z
    return w


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_linear_pa_equals_numpy_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 5)) * (rng.random((30, 5)) < 0.6)
    y = np.where(rng.random(30) < 0.5, -1, 1)
    model = pp.PassiveAggressiveClassifier(averaging=None, shuffle=False).fit(X, y)
    w = numpy_linear_pa(X, y.astype(float))
    test = rng.normal(size=(10, 5))
    # classes_ = [-1, 1]: the binary decision is oriented towards +1.
    np.testing.assert_allclose(model.decision_function(test), test @ w[:-1] + w[-1], atol=1e-9)
    # Shuffled (the default): the reference on the rows in the seed's order, labels with them.
    order = _shuffled_rows(30, seed)
    shuffled = pp.PassiveAggressiveClassifier(averaging=None, random_state=seed).fit(X, y)
    w = numpy_linear_pa(X[order], y[order].astype(float))
    np.testing.assert_allclose(shuffled.decision_function(test), test @ w[:-1] + w[-1], atol=1e-9)


def three_blobs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = np.array([[3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]])
    labels = rng.integers(0, 3, n)
    return centers[labels] + rng.normal(scale=0.5, size=(n, 3)), np.array(["a", "b", "c"])[labels]


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
@pytest.mark.parametrize("estimator", [pp.DoSClassifier(2), pp.PassiveAggressiveClassifier()])
def test_multiclass_learns_and_inputs_agree(estimator: pp.DoSClassifier, multiclass: str) -> None:
    X, y = three_blobs(600)
    model = clone(estimator).set_params(multiclass=multiclass, averaging=100).fit(X[:500], y[:500])
    assert model.score(X[500:], y[500:]) > 0.9
    assert list(model.classes_) == ["a", "b", "c"]
    predicted = model.predict(X[500:])
    np.testing.assert_array_equal(model.predict(sp.csr_array(X[500:])), predicted)
    frame = pl.DataFrame({"features": pp.from_numpy(X[500:])})
    np.testing.assert_array_equal(model.predict(frame), predicted)
    lazy = frame.lazy().select(model.predict_expr("features").alias("label"))
    for engine in ("in-memory", "streaming"):
        assert lazy.collect(engine=engine)["label"].to_list() == list(predicted)
    n_scores = 3 if multiclass == "ovr" else 3
    assert model.decision_function(X[:4]).shape == (4, n_scores)


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
def test_a_frame_of_several_chunks_is_scored_as_one_chunk(multiclass: str) -> None:
    """Scoring cuts a column of several long chunks at their ends (each read in place)."""
    from polars_poly._input import SCORE_CHUNK_ROWS, SCORE_ROWS, batch_ranges

    X, y = three_blobs(60_000, seed=3)
    model = pp.DoSClassifier(2, multiclass=multiclass, averaging=100).fit(X[:2_000], y[:2_000])
    whole = pl.DataFrame({"features": pp.from_numpy(X)})
    chunked = pl.concat([whole.slice(0, 25_000), whole.slice(25_000, 35_000)], rechunk=False)
    column = [chunked["features"]]
    assert list(batch_ranges(column, 60_000, SCORE_ROWS, SCORE_CHUNK_ROWS)) == [
        (0, 25_000),
        (25_000, 35_000),
    ]
    np.testing.assert_array_equal(model.predict(chunked), model.predict(whole))
    np.testing.assert_array_equal(model.decision_function(chunked), model.decision_function(whole))


@pytest.mark.parametrize("estimator", [pp.DoSClassifier(2), pp.PassiveAggressiveClassifier()])
def test_dense_and_sparse_inputs_train_the_same_model(estimator: pp.DoSClassifier) -> None:
    # Dense inputs are read in place (zeros skipped), CSR through its arrays: the same examples.
    X, y = three_blobs(300, seed=11)
    X[X < 0.5] = 0.0  # explicit zeros, as in images
    X = (np.round(X * 4) / 4).astype(np.float32)  # exact in float32 and float64
    snapshot = X.copy()
    params = {"averaging": 40, "batch_size": 64}
    reference = clone(estimator).set_params(**params).fit(sp.csr_array(X.astype(np.float64)), y)
    expected = reference.decision_function(X.astype(np.float64))
    for variant in (
        X,  # float32, read as it is
        X.astype(np.float64),
        np.asfortranarray(X),  # made C-contiguous first
        pl.DataFrame(X.astype(np.float64), schema=["a", "b", "c"]),
        sp.csr_array(X),
    ):
        model = clone(estimator).set_params(**params).fit(variant, y)
        np.testing.assert_array_equal(model.decision_function(X), expected)
        np.testing.assert_array_equal(model.decision_function(sp.csr_array(X)), expected)
    np.testing.assert_array_equal(X, snapshot)  # the input is not modified
    counts = (X * 4).astype(np.int64)  # integer dtypes are read as float64
    model = clone(estimator).set_params(**params).fit(counts, y)
    np.testing.assert_array_equal(
        model.decision_function(X),
        clone(estimator).set_params(**params).fit(counts * 1.0, y).decision_function(X),
    )


@pytest.mark.parametrize("as_csr", [False, True])
def test_bad_value_is_named_by_its_row_in_the_whole_input(as_csr: bool) -> None:
    X, y = three_blobs(40, seed=2)
    X[29, 1] = np.inf  # in the 8th batch of 4
    with pytest.raises(ValueError, match="row 29"):
        pp.DoSClassifier(batch_size=4).fit(sp.csr_array(X) if as_csr else X, y)


def test_partial_fit_in_chunks_equals_fit() -> None:
    X, y = three_blobs(300, seed=3)
    whole = pp.DoSClassifier(3, averaging=50, batch_size=64, shuffle=False).fit(X, y)
    pieces = pp.DoSClassifier(3, averaging=50, batch_size=64)
    for start in range(0, 300, 70):
        pieces.partial_fit(X[start : start + 70], y[start : start + 70], classes=["a", "b", "c"])
    np.testing.assert_array_equal(whole.decision_function(X), pieces.decision_function(X))


@pytest.mark.parametrize(
    "estimator", [pp.DoSClassifier(2, variant="pa1", C=0.5), pp.PassiveAggressiveClassifier()]
)
def test_save_load_round_trip_and_damaged_files(
    estimator: pp.DoSClassifier, tmp_path: Path
) -> None:
    X, y = three_blobs(200, seed=5)
    model = clone(estimator).set_params(averaging=30).fit(X, y)
    path = tmp_path / "model.npz"
    model.save(path)
    loaded = type(model).load(path)
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    loaded.partial_fit(X[:20], y[:20])  # training continues
    raw = path.read_bytes()
    (tmp_path / "truncated.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="model file"):
        type(model).load(tmp_path / "truncated.npz")
    damaged = bytearray(raw)
    damaged[len(raw) // 3] ^= 0xFF
    (tmp_path / "damaged.npz").write_bytes(bytes(damaged))
    with pytest.raises(ValueError):
        type(model).load(tmp_path / "damaged.npz")
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(ValueError, match="model file"):
        type(model).load(tmp_path / "text.npz")


def test_scikit_learn_conformance() -> None:
    X, y = three_blobs(300, seed=7)
    pipe = make_pipeline(StandardScaler(), pp.DoSClassifier(2))
    assert pipe.fit(X, y).score(X, y) > 0.9
    search = GridSearchCV(pp.DoSClassifier(), {"rank": [1, 2]}, cv=2).fit(X, y)
    assert search.best_params_["rank"] in (1, 2)
    assert clone(pp.PassiveAggressiveClassifier(C=0.1)).get_params()["C"] == 0.1


@pytest.mark.parametrize(
    ("call", "match"),
    [
        # One class of {0, 1} is a binary problem (as SGDClassifier reads it); another is not.
        (lambda: pp.DoSClassifier().fit(np.ones((3, 2)), [5, 5, 5]), "got 1 class \\(5\\)"),
        (lambda: pp.DoSClassifier().fit(np.ones((3, 2)), [0.5, 1, 2]), "Unknown label type"),
        (lambda: pp.DoSClassifier(rank=0).fit(np.eye(2), [0, 1]), "rank must be"),
        (lambda: pp.DoSClassifier(variant="pa1", C=-1.0).fit(np.eye(2), [0, 1]), "C"),
        (lambda: pp.DoSClassifier(multiclass="x").fit(np.eye(2), [0, 1]), "multiclass"),
        (lambda: pp.DoSClassifier().predict(np.eye(2)), "not fitted"),
        (
            lambda: pp.DoSClassifier().fit(np.eye(2), [0, 1]).partial_fit(np.eye(2), [0, 2]),
            "row 1: label 2 is not one of the classes",
        ),
        (lambda: pp.DoSClassifier().fit(np.eye(2), [0.0, np.nan]), "row 1"),
        (
            lambda: pp.DoSClassifier().fit(np.array([[1.0, 0.0], [np.nan, 1.0]]), [0, 1]),
            "row 1",
        ),
        (lambda: pp.DoSClassifier().fit(np.eye(2), [0, 1]).predict(np.eye(3)), "3 features"),
        (lambda: pp.DoSClassifier().partial_fit(np.eye(2), [0, 1]), "classes must be passed"),
    ],
)
def test_bad_input(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


def test_zero_hidden_vector_is_defined() -> None:
    # ||Uz|| = 0 happens for a zero-initialized side; learning still reaches margin 1.
    model = pp.DoSClassifier(1, averaging=None, random_state=1)
    X = np.array([[0.0, 0.0]])  # z = [0, 0, 1]: only the bias
    model.partial_fit(X, [1], classes=[0, 1])
    assert model.decision_function(X)[0] == pytest.approx(1.0, rel=1e-4)


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
def test_no_rows_give_empty_outputs(multiclass: str) -> None:
    X, y = three_blobs(90, seed=4)
    model = pp.DoSClassifier(2, multiclass=multiclass).fit(X, y)
    assert model.predict(np.empty((0, 3))).shape == (0,)
    assert model.decision_function(np.empty((0, 3))).shape == (0, 3)
    assert model.decision_function(sp.csr_array((0, 3))).shape == (0, 3)
    empty = pl.DataFrame({"features": pp.from_numpy(X[:0])})
    assert empty.lazy().select(model.predict_expr("features")).collect().height == 0
    binary = pp.PassiveAggressiveClassifier(multiclass=multiclass).fit(X, y == "a")
    assert binary.decision_function(np.empty((0, 3))).shape == (0,)


def test_hashed_text_with_a_fixed_width(tmp_path: Path) -> None:
    # Text as bags of tokens hashed into 2**18 columns: training fixes the width, so rows of
    # unseen tokens (hashed anywhere in the 2**18) are scored, in eager and streaming queries.
    rng = np.random.default_rng(0)
    good, bad, filler = ["good", "great", "fine"], ["bad", "awful", "poor"], ["the", "a", "is"]
    texts, labels = [], []
    for _ in range(400):
        label = int(rng.integers(2))
        words = list(rng.choice(good if label else bad, 2)) + list(rng.choice(filler, 2))
        texts.append(" ".join(words))
        labels.append(label)
    bits = 18
    hashed = pp.hash_features(pl.col("text").str.split(" ").alias("tokens"), bits=bits)
    X = pl.DataFrame({"text": texts}).select(hashed)
    model = pp.DoSClassifier(2, n_features=2**bits).fit(X, labels)
    assert model.n_features_in_ == 2**bits
    unseen = pl.DataFrame({"text": ["great fine zebra", "awful poor quasar"]})
    np.testing.assert_array_equal(model.predict(unseen.select(hashed)), [1, 0])
    streamed = unseen.lazy().select(model.predict_expr(hashed)).collect(engine="streaming")
    assert streamed.to_series().to_list() == [1, 0]
    model.save(tmp_path / "text.npz")
    assert pp.DoSClassifier.load(tmp_path / "text.npz").get_params()["n_features"] == 2**bits
    # Without n_features the width is the first input's, and a larger index is named.
    narrow = pp.DoSClassifier(2).fit(X, labels)
    wide = pl.DataFrame({"features": pp.from_scipy(sp.csr_array(([1.0], ([0], [2**bits - 1]))))})
    assert narrow.n_features_in_ < 2**bits
    with pytest.raises(ValueError, match="pass n_features=2\\*\\*bits"):
        narrow.predict(wide)
    with pytest.raises(ValueError, match="out of range for n_features=10"):
        pp.DoSClassifier(n_features=10).fit(X, labels)
    with pytest.raises(ValueError, match="X has 3 features, but n_features=4"):
        pp.PassiveAggressiveClassifier(n_features=4).fit(np.eye(3), [0, 1, 1])
    with pytest.raises(ValueError, match="n_features must be an integer >= 1"):
        pp.PassiveAggressiveClassifier(n_features=0).fit(np.eye(3), [0, 1, 1])
    # Raw text is not a feature column: the error names it and points at hash_features.
    with pytest.raises(TypeError, match=r"'text' \(String\).*hash_features"):
        pp.DoSClassifier().fit(pl.DataFrame({"n": [1.0, 2.0], "text": ["a b", "c"]}), [0, 1])


def test_one_model_file_pickling_and_native_scoring_for_every_estimator(tmp_path: Path) -> None:
    # DoS/PA models use the same model file as the online learners (load_model reads either),
    # pickle through it, and score in queries with the same native expression.
    import pickle

    X, y = three_blobs(300, seed=8)
    model = pp.DoSClassifier(2, averaging=50).fit(X, y)
    path = tmp_path / "dos.model"
    model.save(path)
    loaded = pp.load_model(path)
    assert isinstance(loaded, pp.DoSClassifier)
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.decision_function(X), model.decision_function(X))
    with pytest.raises(TypeError, match="holds a DoSClassifier, not a SGDRegressor"):
        pp.SGDRegressor.load(path)
    sgd = tmp_path / "sgd.model"
    pp.SGDClassifier().fit(X, y == "a").save(sgd)
    with pytest.raises(TypeError, match="holds a SGDClassifier, not a PassiveAggressive"):
        pp.PassiveAggressiveClassifier.load(sgd)
    # Null rows stay null through the native expression.
    features = pp.from_numpy(X[:3])
    frame = pl.DataFrame({"features": features}).with_columns(
        pl.when(pl.int_range(3) == 1).then(None).otherwise(pl.col("features")).alias("features")
    )
    scored = frame.lazy().select(model.predict_expr("features")).collect(engine="streaming")
    labels = scored.to_series().to_list()
    assert labels[1] is None and labels[0] == model.predict(X[:1])[0]


def test_dos_learns_a_product_the_linear_baseline_cannot() -> None:
    # y = sign(x0·x1): quadratic, so DoS of rank >= 1 separates it and linear PA stays near
    # chance; a model family mixed up anywhere between the options and the engine fails here.
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(6_000, 4))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    dos = pp.DoSClassifier(2, averaging=500).fit(X[:5_000], y[:5_000])
    linear = pp.PassiveAggressiveClassifier(averaging=500).fit(X[:5_000], y[:5_000])
    assert dos.score(X[5_000:], y[5_000:]) > 0.9
    assert linear.score(X[5_000:], y[5_000:]) < 0.65
    assert dos.core_.options()["rank"] == 2 and linear.core_.options()["rank"] == 0


@pytest.mark.parametrize("make", [lambda: pp.DoSClassifier(rank=2), pp.PassiveAggressiveClassifier])
def test_frame_columns_are_read_by_name_not_position(make, tmp_path: Path) -> None:
    """A model fitted on named numeric columns reads them by name: the same frame with its
    columns in another order scores the same (it was scored by position, at chance), one
    without a fitted column is an error naming it, and a pandas frame reads as a Polars one."""
    pytest.importorskip("pandas")
    rng = np.random.default_rng(9)
    X = rng.standard_normal((600, 3))
    y = (X[:, 0] > 0).astype(int)
    frame = pl.DataFrame(X, schema=["a", "b", "c"])
    model = make().fit(frame, y)
    assert model.feature_columns_ == ["a", "b", "c"]
    assert model.feature_names_in_.tolist() == ["a", "b", "c"] and model.n_features_in_ == 3
    assert not hasattr(make().fit(X, y), "feature_names_in_")
    reordered = frame.select("c", "a", "b")
    np.testing.assert_array_equal(model.predict(reordered), model.predict(frame))
    assert (model.predict(frame) == y).mean() > 0.9
    with pytest.raises(ValueError, match=r"lacks the feature column\(s\) \['a'\]"):
        model.predict(frame.drop("a"))
    path = tmp_path / "model.pp"
    model.save(path)
    loaded = pp.load_model(path)
    np.testing.assert_array_equal(loaded.predict(reordered), model.predict(frame))
    assert loaded.feature_names_in_.tolist() == ["a", "b", "c"]
    on_pandas = make().fit(frame.to_pandas(), y)
    np.testing.assert_array_equal(
        on_pandas.predict(reordered.to_pandas()), on_pandas.predict(frame.to_pandas())
    )
    np.testing.assert_array_equal(on_pandas.predict(frame.to_pandas()), model.predict(frame))


@pytest.mark.parametrize("make", [pp.DoSClassifier, pp.PassiveAggressiveClassifier])
def test_scikit_learn_estimator_checks_pass_but_the_pairwise_decision_shape(make) -> None:
    """scikit-learn's ``check_estimator``: every check passes (not fitted, feature counts,
    sparse tag, label types, a column-vector y, one sample, sample weights as lists, Series and
    of the wrong shape) but four. Two read a multiclass ``decision_function`` as one column per
    class; one-vs-one's is one column per pair of classes (documented), as scikit-learn's SVC
    with ``decision_function_shape="ovo"``. Two compare integer weights with repeated rows
    after shuffling the weighted rows: an online learner depends on the order of its examples
    (scikit-learn's own SGD estimators are expected to fail them too); in order, a weight of 0
    is the row removed and, for linear PA-I, a weight w the row learned w times (tested
    below)."""
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(make(), on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    expected = {
        "check_classifiers_classes",
        "check_classifiers_train",
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    }
    assert failed <= expected, failed


@pytest.mark.parametrize("make", [pp.DoSClassifier, pp.PassiveAggressiveClassifier])
def test_sample_weight_zero_removes_a_row_and_ones_change_nothing(make) -> None:
    """A weight of 0 is the row removed (averaging included); weights of 1 are none; weights
    may name a column of the frame; a bad weight is an error naming its row, before anything
    is learned."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(900, 4))
    y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(int) + (X[:, 3] > 1)
    w = rng.integers(0, 4, size=900).astype(float)
    # In order: a shuffled fit of fewer rows learns them in another order (ones are tested
    # shuffled too).
    options = {"variant": "pa1", "C": 0.1, "averaging": 50, "shuffle": False}
    np.testing.assert_array_equal(
        make(variant="pa1").fit(X, y, sample_weight=np.ones(900)).decision_function(X),
        make(variant="pa1").fit(X, y).decision_function(X),
    )
    plain = make(**options).fit(X, y)
    ones = make(**options).fit(X, y, sample_weight=np.ones(900))
    np.testing.assert_array_equal(ones.decision_function(X), plain.decision_function(X))
    weighted = make(**options).fit(X, y, sample_weight=w)
    kept = w > 0
    removed = make(**options).fit(X[kept], y[kept], sample_weight=w[kept])
    np.testing.assert_array_equal(weighted.decision_function(X), removed.decision_function(X))
    assert not np.array_equal(weighted.decision_function(X), plain.decision_function(X))
    frame = pl.DataFrame(X, schema=list("abcd")).with_columns(label=y, w=w)
    by_name = make(**options).fit(frame, "label", sample_weight="w")
    np.testing.assert_array_equal(
        by_name.decision_function(frame.drop("label", "w")), weighted.decision_function(X)
    )
    for bad, shown in [(-1.0, "-1.0"), (np.nan, "nan"), (np.inf, "inf")]:
        given = w.copy()
        given[700] = bad
        with pytest.raises(ValueError, match=f"sample_weight: row 700 is {shown}"):
            weighted.partial_fit(X, y, sample_weight=given)
    np.testing.assert_array_equal(weighted.decision_function(X), removed.decision_function(X))
    with pytest.raises(ValueError, match="sample_weight has 899 values"):
        make().fit(X, y, sample_weight=w[1:])


def test_linear_pa1_weight_is_the_row_learned_that_many_times() -> None:
    """For the linear PA-I classifier a weight w is exactly the row learned w times in a row
    (the steps add up to min(C*w, what reaches margin 1))."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 3))
    y = (X @ [1.0, -2.0, 0.5] + 0.3 * rng.normal(size=400) > 0).astype(int)
    w = rng.integers(1, 4, size=400)
    options = {"variant": "pa1", "C": 0.02, "shuffle": False}
    weighted = pp.PassiveAggressiveClassifier(**options).fit(X, y, sample_weight=w)
    repeated = pp.PassiveAggressiveClassifier(**options)
    repeated.fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(
        weighted.decision_function(X), repeated.decision_function(X), rtol=1e-10, atol=1e-12
    )


# ---------------------------------------------------------------------------------- shuffle


def sorted_iris() -> tuple[np.ndarray, np.ndarray]:
    """Iris, standardized, its rows sorted by class (as load_iris gives them)."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    assert (np.diff(y) >= 0).all()
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("make", [pp.DoSClassifier, pp.PassiveAggressiveClassifier])
def test_shuffle_by_default_learns_data_sorted_by_class(make: type) -> None:
    """scikit-learn's PassiveAggressiveClassifier shuffles by default: rows sorted by class are
    learned in a shuffled order. In their order (shuffle=False) the last class is learned last
    (macro F1 0.63 for PA, 0.70 for DoS); shuffled, 0.87-0.97 over the seeds."""
    from sklearn.metrics import f1_score

    X, y = sorted_iris()

    def f1(model: pp.DoSClassifier) -> float:
        return float(f1_score(y, model.fit(X, y).predict(X), average="macro"))

    assert make().shuffle is True and make().random_state is None
    in_order = f1(make(shuffle=False))
    shuffled = [f1(make(random_state=seed)) for seed in range(6)]
    assert in_order < 0.75, in_order
    assert min(shuffled) > 0.85 and np.median(shuffled) > 0.9, shuffled
    assert f1(make()) == f1(make(random_state=0))  # None is the seed 0


@pytest.mark.parametrize("make", [pp.DoSClassifier, pp.PassiveAggressiveClassifier])
def test_shuffle_seeds_in_order_partial_fit_and_lazy_frames(make: type) -> None:
    """The same seed gives the same model, another seed another one; shuffle=False is the rows
    in their order (a fit of the rows permuted by the seed's order, shuffle=False, is the
    shuffled fit); partial_fit and a LazyFrame learn in the order given."""
    X, y = three_blobs(700, seed=12)
    options = {"averaging": 40, "batch_size": 64}

    def scores(model: pp.DoSClassifier) -> np.ndarray:
        return np.asarray(model.decision_function(X))

    seed3 = scores(make(random_state=3, **options).fit(X, y))
    np.testing.assert_array_equal(scores(make(random_state=3, **options).fit(X, y)), seed3)
    assert not np.array_equal(scores(make(random_state=4, **options).fit(X, y)), seed3)
    order = _shuffled_rows(700, 3)
    assert sorted(order) == list(range(700)) and (order != np.arange(700)).any()
    permuted = make(random_state=3, shuffle=False, **options).fit(X[order], y[order])
    np.testing.assert_array_equal(scores(permuted), seed3)
    in_order = scores(make(random_state=3, shuffle=False, **options).fit(X, y))
    assert not np.array_equal(in_order, seed3)
    pieces = make(random_state=3, **options)
    for start in range(0, 700, 250):
        pieces.partial_fit(X[start : start + 250], y[start : start + 250], classes=["a", "b", "c"])
    np.testing.assert_array_equal(scores(pieces), in_order)
    frame = pl.DataFrame(X, schema=["p", "q", "r"]).with_columns(label=y)
    lazy = make(random_state=3, **options).fit(frame.lazy(), "label")
    np.testing.assert_array_equal(scores(lazy), in_order)
    eager = make(random_state=3, **options).fit(frame, "label")
    np.testing.assert_array_equal(scores(eager), seed3)
    # A frame of several chunks is learned as one chunk.
    chunked = pl.concat([frame.slice(0, 300), frame.slice(300, 400)], rechunk=False)
    assert chunked.n_chunks() == 2
    np.testing.assert_array_equal(
        scores(make(random_state=3, **options).fit(chunked, "label")), seed3
    )
    if make is pp.DoSClassifier:  # the seed also draws the initialization
        assert not np.array_equal(
            scores(make(random_state=4, shuffle=False, **options).fit(X, y)), in_order
        )


@pytest.mark.parametrize("make", [pp.DoSClassifier, pp.PassiveAggressiveClassifier])
def test_sample_weights_follow_their_rows_when_shuffled(make: type) -> None:
    """A shuffled weighted fit is the fit of the rows and weights permuted by the seed's order,
    in order; a weight of 0 still removes its row wherever the shuffle puts it. Nothing the
    user gave is modified (dense, sparse, frame, labels, weights)."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(int)
    w = rng.integers(0, 4, size=500).astype(float)
    options = {"variant": "pa1", "C": 0.1, "averaging": 30, "batch_size": 50}
    given = [X.copy(), y.copy(), w.copy()]
    weighted = make(random_state=5, **options).fit(X, y, sample_weight=w)
    order = _shuffled_rows(500, 5)
    permuted = make(random_state=5, shuffle=False, **options)
    permuted.fit(X[order], y[order], sample_weight=w[order])
    np.testing.assert_array_equal(weighted.decision_function(X), permuted.decision_function(X))
    kept = w[order] > 0
    removed = make(random_state=5, shuffle=False, **options)
    removed.fit(X[order][kept], y[order][kept], sample_weight=w[order][kept])
    np.testing.assert_array_equal(weighted.decision_function(X), removed.decision_function(X))
    # Another input kind, its rows shuffled the same way: the same model.
    csr = sp.csr_array(X)
    snapshot = (csr.data.copy(), csr.indices.copy(), csr.indptr.copy())
    sparse = make(random_state=5, **options).fit(csr, y, sample_weight=w)
    np.testing.assert_array_equal(sparse.decision_function(X), weighted.decision_function(X))
    frame = pl.DataFrame(X, schema=list("abcd")).with_columns(label=y, w=w)
    kept_frame = frame.clone()
    by_name = make(random_state=5, **options).fit(frame, "label", sample_weight="w")
    np.testing.assert_array_equal(by_name.decision_function(X), weighted.decision_function(X))
    for before, after in zip(given, [X, y, w], strict=True):
        np.testing.assert_array_equal(before, after)
    for before, after in zip(snapshot, (csr.data, csr.indices, csr.indptr), strict=True):
        np.testing.assert_array_equal(before, after)
    assert frame.equals(kept_frame)


@pytest.mark.parametrize("make", [pp.DoSClassifier, pp.PassiveAggressiveClassifier])
def test_shuffle_options_round_trip_and_bad_values_are_named(make: type, tmp_path: Path) -> None:
    """shuffle and random_state are parameters as scikit-learn's (get/set_params, clone,
    pickle, save and load keep them; numpy values too); bad values are errors naming them,
    as the online learners'."""
    import pickle

    X, y = three_blobs(200, seed=6)
    model = make(shuffle=False, random_state=np.int64(7), averaging=20).fit(X, y)
    assert model.get_params()["shuffle"] is False and model.get_params()["random_state"] == 7
    assert clone(model).get_params() == model.get_params()
    assert make().set_params(shuffle=False).shuffle is False
    model.save(tmp_path / "model")
    for restored in (pickle.loads(pickle.dumps(model)), pp.load_model(tmp_path / "model")):
        assert restored.get_params() == model.get_params()
        np.testing.assert_array_equal(restored.decision_function(X), model.decision_function(X))
    default = make().fit(X, y)
    assert pickle.loads(pickle.dumps(default)).get_params() == default.get_params()
    for bad in ("yes", None, 1):
        with pytest.raises(TypeError, match="shuffle must be True or False"):
            make(shuffle=bad).fit(X, y)
    # random_state: the online learners' check and words, value by value.
    for bad in (-1, 2**70, 0.5, "1", True):
        with pytest.raises((TypeError, ValueError), match="random_state must be") as sgd_error:
            pp.SGDClassifier(random_state=bad, progress=False).fit(X, y)
        with pytest.raises(sgd_error.type, match="random_state must be") as pa_error:
            make(random_state=bad).fit(X, y)
        assert str(pa_error.value) == str(sgd_error.value)


def test_files_before_shuffle_keep_the_dos_seed() -> None:
    """A DoS model file written before shuffle existed kept random_state as the engine's seed
    only: loaded, its random_state is that seed (and shuffle the default)."""
    import json

    from polars_poly._persist import estimator_from

    X, y = three_blobs(100, seed=2)
    model = pp.DoSClassifier(2, random_state=9).fit(X, y)
    state = json.loads(model._estimator_text())
    for name in ("shuffle", "random_state"):
        del state["params"][name]
    engine, text = pp._internal.model_from_bytes(model.core_.to_bytes(json.dumps(state)))
    loaded = estimator_from(engine, text)
    assert loaded.random_state == 9 and loaded.shuffle is True
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
