"""Numeric columns beside string, categorical or sparse columns, as click data has them (counts
next to hashed fields): the online learners take each namespaced column as a namespace and the
numeric columns together as one more, ``"features"``, after them. The reference is the same fit
on the namespaces built by hand (the numeric columns through ``to_sparse``): models,
predictions and errors must be the same, bit for bit."""

from __future__ import annotations

import pickle

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from polars_poly.synthetic import eat_rate
from sklearn.base import clone

from tests.conftest import logloss_on

BITS = 18


@pytest.fixture(scope="module")
def raw() -> pl.DataFrame:
    """eat-rate's fields A, B, C and two numbers: ``weight``, which flips the label of a
    herbivore (so only its cross with A predicts it), and ``count``, noise with zeros and
    nulls."""
    frame = eat_rate(30_000, seed=5, varieties=30, noise_fields=1)
    rng = np.random.default_rng(5)
    weight = rng.normal(size=len(frame))
    count = pl.Series("count", rng.poisson(0.7, size=len(frame)).astype(np.int64))
    herbivore = frame["A"].str.starts_with("Herbivore").to_numpy()
    label = frame["label"].to_numpy() * np.where(herbivore & (weight > 0), -1.0, 1.0)
    return frame.with_columns(
        pl.Series("label", label),
        pl.Series("weight", weight),
        count.scatter(range(0, len(frame), 97), None),
    ).select("A", "weight", "B", "count", "C", "label")


def by_hand(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    """The namespaces of ``raw``'s columns built by hand: strings as they are, the numbers
    (in the frame's order) one sparse column after them."""
    names = [c for c in frame.collect_schema().names() if c != "label"]
    numbers = [c for c in names if c in ("weight", "count")]
    texts = [c for c in names if c not in numbers]
    label = ["label"] if "label" in frame.collect_schema() else []
    return frame.select(*texts, pp.to_sparse(*numbers).alias("features"), *label)


MODELS = {
    "cross with the numbers": {"loss": "logistic", "interactions": [("A", "features")]},
    "apple": {"loss": "logistic", "expansion": "apple"},
    "field apple": {"loss": "logistic", "expansion": pp.FieldApple()},
    "regressor": {"expansion": "quadratic"},
}


@pytest.mark.parametrize("name", MODELS)
def test_numeric_columns_train_as_one_namespace_after_the_others(raw, name) -> None:
    make = pp.SGDRegressor if name == "regressor" else pp.SGDClassifier
    params = {"bits": BITS, "progress": False, **MODELS[name]}
    direct = make(**params).fit(raw, "label")
    given = make(**params).fit(by_hand(raw), "label")
    assert direct.namespaces_ == given.namespaces_ == ["A", "B", "C", "features"]
    assert direct.feature_columns_ == ["A", "weight", "B", "count", "C"]
    assert direct.progressive_loss_ == given.progressive_loss_
    test = raw.tail(1_000).drop("label")
    expected = given.predict(by_hand(test))
    np.testing.assert_array_equal(direct.predict(test), expected)
    # By name, whatever the order of the columns.
    np.testing.assert_array_equal(direct.predict(test.select(reversed(test.columns))), expected)
    scored = test.lazy().select(direct.predict_expr().alias("p")).collect(engine="streaming")
    np.testing.assert_array_equal(scored["p"].to_numpy(), expected)
    if name == "field apple":
        assert direct.crosses().equals(given.crosses())


def test_the_numbers_cross_is_what_predicts(raw) -> None:
    # A label that only A x weight predicts (a herbivore's follows the sign of weight, a
    # carnivore's the opposite): the cross must learn it and the linear model must not, so the
    # numeric namespace is really crossed.
    herbivore = pl.col("A").str.starts_with("Herbivore")
    sign = pl.when(pl.col("weight") > 0).then(1.0).otherwise(-1.0)
    frame = raw.with_columns(label=pl.when(herbivore).then(sign).otherwise(-sign))
    train, test = frame.head(25_000), frame.tail(5_000)
    params = {"loss": "logistic", "bits": BITS, "progress": False}
    crossed = pp.SGDClassifier(interactions=[("A", "features")], **params)
    linear = pp.SGDClassifier(**params)
    accuracy = {
        name: model.fit(train, "label").score(test.drop("label"), test["label"])
        for name, model in (("crossed", crossed), ("linear", linear))
    }
    assert accuracy["crossed"] > 0.9 and accuracy["linear"] < 0.6, accuracy
    # apple finds that cross of a field with the numbers by itself (measured: 0.997).
    apple = pp.SGDClassifier(expansion="apple", **params).fit(train, "label")
    assert apple.crosses()["cross"].to_list() == ["A*features"]
    assert apple.score(test.drop("label"), test["label"]) > 0.95


def test_lazy_batches_categoricals_and_saved_models(raw, tmp_path) -> None:
    params = {"loss": "logistic", "bits": BITS, "interactions": [("A", "B")], "progress": False}
    eager = pp.SGDClassifier(shuffle=False, **params).fit(raw, "label")
    test = raw.tail(500).drop("label")
    expected = eager.predict_proba(test)
    lazy = pp.SGDClassifier(shuffle=False, batch_size=1_000, **params).fit(raw.lazy(), "label")
    np.testing.assert_array_equal(lazy.predict_proba(test), expected)
    categorical = raw.with_columns(pl.col("A").cast(pl.Categorical))
    as_categories = pp.SGDClassifier(shuffle=False, batch_size=1_000, **params).fit(
        categorical.lazy(), "label"
    )
    np.testing.assert_array_equal(as_categories.predict_proba(test), expected)
    online = pp.SGDClassifier(shuffle=False, **params)
    for start in range(0, len(raw), 7_000):
        online.partial_fit(raw.slice(start, 7_000), "label", classes=[-1.0, 1.0])
    np.testing.assert_array_equal(online.predict_proba(test), expected)
    eager.save(tmp_path / "m.bin")
    loaded = pp.load_model(tmp_path / "m.bin")
    np.testing.assert_array_equal(loaded.predict_proba(test), expected)
    assert loaded.feature_columns_ == eager.feature_columns_
    assert loaded.namespaces_ == eager.namespaces_


def test_sparse_and_numeric_columns_mix_too(raw) -> None:
    params = {"loss": "logistic", "bits": BITS, "expansion": "quadratic", "progress": False}
    hashed = raw.select(pp.hash_features("A", "B", bits=BITS).alias("AB"), pl.exclude("A", "B"))
    direct = pp.SGDClassifier(**params).fit(hashed, "label")
    assert direct.namespaces_ == ["AB", "C", "features"]
    given = pp.SGDClassifier(**params).fit(by_hand(hashed), "label")
    test = hashed.tail(500).drop("label")
    np.testing.assert_array_equal(direct.predict_proba(test), given.predict_proba(by_hand(test)))


def test_columns_of_many_chunks_are_not_copied_beside_a_column_added_whole(raw) -> None:
    # A frame read in pieces (a chunk per parquet row group) with a column added whole: Polars
    # copies every column of a frame it queries into aligned chunks first (1-3 s on 10M rows),
    # so the namespaces are made without querying the frame. The model is the same.
    pieces = pl.concat(
        [raw.slice(start, 5_000) for start in range(0, len(raw), 5_000)], rechunk=False
    )
    added = pieces.with_columns(pl.Series("extra", np.arange(len(raw)) % 3, dtype=pl.Float64))
    assert added["A"].n_chunks() == 6 and added["extra"].n_chunks() == 1
    columns = pp._input.namespace_columns(
        added, ["A", "B", "C", "weight", "extra"], ["weight", "extra"]
    )
    assert [c.n_chunks() for c in columns] == [6, 6, 6, 1]
    params = {
        "loss": "logistic",
        "bits": BITS,
        "interactions": [("A", "features")],
        "progress": False,
    }
    fitted = pp.SGDClassifier(**params).fit(added, "label")
    expected = pp.SGDClassifier(**params).fit(added.rechunk(), "label")
    assert fitted.progressive_loss_ == expected.progressive_loss_


def test_monomials_name_the_numeric_columns(raw) -> None:
    model = pp.SGDClassifier(loss="logistic", bits=BITS, expansion="apple", progress=False)
    factors = model.fit(raw, "label").monomials()["factors"].explode().unique().to_list()
    # apple's parents here are the numbers' monomials; each named by its column.
    assert "weight" in factors, factors
    assert set(factors) <= {"weight", "count"} | {
        f for f in factors if f.startswith(("A[", "B[", "C["))
    }


def test_bad_numbers_are_named_by_column_and_row(raw) -> None:
    broken = raw.with_columns(raw["weight"].scatter(1234, float("nan")))
    for frame in (broken, broken.lazy()):
        with pytest.raises(ValueError, match=r"weight.*row 1234|row 1234.*weight"):
            pp.SGDClassifier(bits=BITS, progress=False).fit(frame, "label")
    # A model's namespace named "features" may not be both a column and the numbers' namespace.
    clash = raw.rename({"C": "features"})
    with pytest.raises(ValueError, match=r"\['weight', 'count'\] form one namespace"):
        pp.SGDClassifier(bits=BITS).fit(clash, "label")
    # Scoring a frame without a fitted column, numeric or string: named.
    model = pp.SGDClassifier(bits=BITS, progress=False).fit(raw, "label")
    for missing in ("count", "B"):
        with pytest.raises(pl.exceptions.ColumnNotFoundError, match=f"'{missing}' is not a col"):
            model.predict(raw.drop("label", missing))
    # The numbers alone: no string columns to hash, the model as before (one namespace).
    numbers = pp.SGDClassifier(bits=BITS, progress=False)
    numbers.fit(raw.select("weight", "label"), "label")
    assert numbers.namespaces_ == ["features"]
    assert numbers.coef_.shape == (1, 1)
    mixed = pp.SGDClassifier(bits=BITS, progress=False).fit(raw, "label")
    with pytest.raises(AttributeError, match="coef_"):
        _ = mixed.coef_


def test_the_dos_classifier_still_takes_one_kind() -> None:
    # One feature space: a sparse column or numeric columns, not both (nor one silently).
    frame = pl.DataFrame({"x": pp.from_numpy(np.eye(4)), "age": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(ValueError, match=r"sparse feature columns are \['x'\].*'age'"):
        pp.DoSClassifier().fit(frame, np.array([0, 1, 0, 1]))


def test_uci_adult_as_it_is_learns_as_scikit_learns_one_hot_logistic_regression() -> None:
    """Adult's categories (as strings) and numbers, given as they are: a linear model's test
    accuracy and logloss as scikit-learn's logistic regression on one-hot categories and
    standardized numbers (the reference: a batch solver of the same model class)."""
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from tests.conftest import shared_file

    adult = pl.read_csv(shared_file("adult", "adult.tsv.gz"), separator="\t")
    categories = ["workclass", "education", "marital-status", "occupation", "relationship"]
    categories += ["race", "sex", "native-country"]  # integer codes in PMLB's copy
    numbers = [c for c in adult.columns if c not in categories and c != "target"]
    adult = adult.with_columns(pl.col(categories).cast(pl.String))
    train, test = adult.head(32_561), adult.tail(16_281)
    X_train, X_test = train.drop("target"), test.drop("target")
    y_train, y_test = train["target"].to_numpy(), test["target"].to_numpy()
    reference = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), categories), (StandardScaler(), numbers)
        ),
        LogisticRegression(max_iter=2_000),
    ).fit(X_train.to_pandas(), y_train)
    expected = log_loss(y_test, reference.predict_proba(X_test.to_pandas())[:, 1])
    ours = pp.SGDClassifier(loss="logistic", passes=3, progress=False).fit(train, "target")
    assert ours.namespaces_ == [*categories, "features"]
    logloss = log_loss(y_test, ours.predict_proba(X_test)[:, 1])
    # Measured: 0.3200 against 0.3175; accuracy 0.8528 against 0.8530.
    assert abs(logloss - expected) < 0.01, (logloss, expected)
    accuracy = ours.score(X_test, y_test)
    assert abs(accuracy - reference.score(X_test.to_pandas(), y_test)) < 0.005, accuracy


def test_a_struct_of_numbers_is_a_namespace_of_them(raw) -> None:
    """``pl.struct(...)`` of numeric columns groups them into a namespace of its own, read as
    ``to_sparse`` of its fields is (the frame's loose numeric columns are such a struct); a
    missing struct row has no features, as a missing sparse row would not be allowed to."""
    params = {"loss": "logistic", "bits": BITS, "interactions": [("A", "n")], "progress": False}
    some = pl.int_range(pl.len()) % 5 != 0
    grouped = raw.select(
        "A", "B", pl.when(some).then(pl.struct("weight", "count")).alias("n"), "label"
    )
    assert grouped["n"].null_count() == 6_000
    direct = pp.SGDClassifier(**params).fit(grouped, "label")
    assert direct.namespaces_ == ["A", "B", "n"]
    numbers = [pl.when(some).then(pl.col(c)) for c in ("weight", "count")]
    sparse = raw.select("A", "B", pp.to_sparse(*numbers).alias("n"), "label")
    given = pp.SGDClassifier(**params).fit(sparse, "label")
    expected = given.predict_proba(sparse.drop("label"))
    np.testing.assert_array_equal(direct.predict_proba(grouped.drop("label")), expected)
    scored = grouped.lazy().select(direct.decision_function_expr().alias("s"))
    np.testing.assert_array_equal(
        scored.collect(engine="streaming")["s"], given.decision_function(sparse.drop("label"))
    )
    # A bad value is named by its field and row.
    broken = raw["count"].cast(pl.Float64).scatter(2_345, float("inf"))
    bad = grouped.with_columns(pl.struct(raw["weight"], broken).alias("n"))
    for frame in (bad, bad.lazy()):
        with pytest.raises(ValueError, match=r'column "count", row 2345: non-finite value inf'):
            pp.SGDClassifier(**params).fit(frame, "label")


def test_a_pandas_frame_of_strings_and_numbers_trains_as_its_polars_frame(raw) -> None:
    frame = raw.head(5_000)
    params = {"loss": "logistic", "bits": BITS, "interactions": [("A", "B")], "progress": False}
    from_polars = pp.SGDClassifier(**params).fit(frame, "label")
    X, y = frame.drop("label").to_pandas(), frame["label"].to_numpy()
    from_pandas = pp.SGDClassifier(**params).fit(X, y)
    assert from_pandas.namespaces_ == ["A", "B", "C", "features"]
    np.testing.assert_array_equal(from_pandas.predict_proba(X), from_polars.predict_proba(X))


@pytest.mark.parametrize("interactions", [[], [("A", "features")]], ids=["linear", "A x numbers"])
def test_numbers_beside_strings_learn_as_vowpal_wabbit_learns_their_namespace(
    interactions: list[tuple[str, str]],
) -> None:
    """The independent reference: Vowpal Wabbit on the same rows written as ``|A ... |B ...
    |C ... |features n0:x n1:y`` (``-q Af`` for the cross). The hashing of the numbers differs
    (an index per column against VW's hash of the name), so at ``bits=24``, where nothing
    collides, the progressive losses agree to the float rounding of the sums (measured:
    1.8e-7 and 2.0e-7 apart)."""
    pyvw = pytest.importorskip("vowpalwabbit.pyvw")
    frame = eat_rate(10_000, seed=7, varieties=30, noise_fields=1)
    rng = np.random.default_rng(7)
    frame = frame.with_columns(
        pl.Series("n0", rng.poisson(1.5, len(frame)).astype(float)),
        pl.Series("n1", np.round(rng.normal(size=len(frame)), 3)),
    )
    ours = pp.SGDClassifier(
        shuffle=False,
        loss="logistic",
        bits=24,
        interactions=interactions,
        field_scales=False,
        progress=False,
    ).fit(frame, "label")
    args = "--quiet --loss_function logistic -b 24" + "".join(
        f" -q {a[0]}{b[0]}" for a, b in interactions
    )
    vw = pyvw.Workspace(args)
    for row in frame.iter_rows(named=True):
        numbers = " ".join(f"{k}:{row[k]:.9g}" for k in ("n0", "n1") if row[k] != 0)
        vw.learn(f"{row['label']:g} |A {row['A']} |B {row['B']} |C {row['C']} |features {numbers}")
    theirs = vw.get_sum_loss() / vw.get_weighted_examples()
    vw.finish()
    assert abs(ours.progressive_loss_ - theirs) < 1e-5, (ours.progressive_loss_, theirs)


def test_integer_codes_declared_categorical_train_as_their_strings(raw, tmp_path) -> None:
    # A and B coded as integers (Polars' own dictionary codes), as click data often has them:
    # declared categorical, code 17 of A is hashed as the string "A=17" (bare digits would hash
    # to consecutive slots), the same model as making those strings by hand; left as they are
    # they are numbers, and the cross is lost.
    codes = raw.with_columns(pl.col("A", "B").cast(pl.Categorical).to_physical().cast(pl.Int64))
    cast = codes.with_columns(
        pl.concat_str(pl.lit(f"{c}="), pl.col(c).cast(pl.String)).alias(c) for c in ("A", "B")
    )
    params = {"loss": "logistic", "bits": BITS, "interactions": [("A", "B")], "progress": False}
    declared = pp.SGDClassifier(shuffle=False, **params, categorical=["A", "B"]).fit(codes, "label")
    by_cast = pp.SGDClassifier(shuffle=False, **params).fit(cast, "label")
    assert declared.namespaces_ == by_cast.namespaces_ == ["A", "B", "C", "features"]
    assert declared.progressive_loss_ == by_cast.progressive_loss_
    X = codes.drop("label")
    expected = by_cast.predict_proba(cast.drop("label"))
    np.testing.assert_array_equal(declared.predict_proba(X), expected)
    streamed = X.lazy().select(declared.predict_proba_expr()).collect(engine="streaming")
    np.testing.assert_array_equal(streamed.to_series().to_numpy(), expected[:, 1])
    lazy = pp.SGDClassifier(shuffle=False, **params, categorical=["A", "B"]).fit(
        codes.lazy(), "label"
    )
    assert lazy.progressive_loss_ == by_cast.progressive_loss_
    declared.save(tmp_path / "m.bin")
    for again in (pp.load_model(tmp_path / "m.bin"), pickle.loads(pickle.dumps(declared))):
        assert again.categorical == ["A", "B"]
        np.testing.assert_array_equal(again.predict_proba(X), expected)
        scored = X.lazy().select(again.predict_proba_expr()).collect(engine="streaming")
        np.testing.assert_array_equal(scored.to_series().to_numpy(), expected[:, 1])
    assert clone(declared).get_params()["categorical"] == ["A", "B"]
    numbers = pp.SGDClassifier(shuffle=False, **params | {"interactions": None}).fit(codes, "label")
    assert numbers.namespaces_ == ["C", "features"]  # A and B are numbers beside weight, count
    assert numbers.progressive_loss_ > declared.progressive_loss_ + 0.1


def test_what_is_declared_categorical_must_be_a_code_column_of_the_frame(raw) -> None:
    frame = raw.with_columns(code=pl.int_range(pl.len()) % 7)
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match="categorical='nope'"):
        pp.SGDClassifier(categorical="nope").fit(frame, "label")
    with pytest.raises(TypeError, match="categorical column 'weight' has dtype Float64"):
        pp.SGDClassifier(categorical=["weight"]).fit(frame, "label")
    with pytest.raises(ValueError, match="'label' is the target"):
        pp.SGDClassifier(categorical=["label"]).fit(frame, "label")
    with pytest.raises(ValueError, match=r"categorical columns \['code'\] are not among"):
        pp.SGDClassifier(features=["A", "B"], categorical=["code"]).fit(frame, "label")
    with pytest.raises(ValueError, match="names columns of a Polars frame, not of a ndarray"):
        pp.SGDClassifier(categorical=["A"]).fit(np.ones((4, 2)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="categorical"):
        pp.SGDClassifier(categorical=3).fit(frame, "label")
    # Scoring a frame whose declared column is missing names it too.
    model = pp.SGDClassifier(categorical="code", progress=False).fit(frame, "label")
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match="code"):
        model.predict(frame.drop("code", "label"))


def test_declared_codes_cross_as_well_as_their_strings_where_bare_digits_collide() -> None:
    # Vowpal Wabbit's hashing maps an all-digit string to its value plus the namespace's seed:
    # codes 0..999 of A and of B land on consecutive slots, and their cross collides. Declared
    # categorical they are hashed as "A=17", as well spread as the original strings.
    data = eat_rate(300_000, seed=0, noise_fields=2)
    fields = [c for c in data.columns if c != "label"]
    # Codes 0..n-1 in the order of the sorted values (a categorical's physical codes depend on
    # the strings the process has seen before, so they would depend on the tests run before).
    codes = data.with_columns(pl.col(fields).rank("dense").cast(pl.Int64) - 1)
    bare = codes.with_columns(pl.col(fields).cast(pl.String))
    params = {"loss": "logistic", "bits": 22, "interactions": [("A", "B")], "progress": False}

    def test_logloss(frame: pl.DataFrame, categorical: list[str] | None = None) -> float:
        model = pp.SGDClassifier(**params, categorical=categorical)
        return logloss_on(model.fit(frame.head(250_000), "label"), frame.tail(50_000))

    strings, declared = test_logloss(data), test_logloss(codes, fields)
    assert abs(declared - strings) < 0.01, (declared, strings)
    assert test_logloss(bare) > strings + 0.03, (test_logloss(bare), strings)
