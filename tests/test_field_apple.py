"""Field-level apple through the estimators: the planted cross found by name, model files,
pickling, nested parameters, streamed training and the errors a user can meet."""

from __future__ import annotations

import importlib.util
import json
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest
from polars_poly.synthetic import eat_rate

from tests.conftest import logloss_on

FIELDS = list("ABCDEF")


@pytest.fixture(scope="module")
def data() -> pl.DataFrame:
    """eat-rate in small (100 animals, 100 foods, 4 noise fields), each field hashed alone."""
    frame = eat_rate(100_000, seed=1, varieties=100, noise_fields=4)
    return frame.select("label", *(pp.hash_features(f, bits=20).alias(f) for f in FIELDS))


def test_finds_the_cross_and_learns_like_the_given_one(data: pl.DataFrame) -> None:
    train, test = data.head(80_000), data.tail(20_000)
    found = pp.SGDClassifier(loss="logistic", bits=20, expansion=pp.FieldApple()).fit(
        train, "label"
    )
    crosses = found.crosses()
    assert crosses["cross"].to_list() == ["A*B"]
    assert crosses["fields"].to_list() == [["A", "B"]]
    assert 0 < crosses["added_at"][0] <= 30_000
    assert found.n_crosses_ == 1
    # The crosses still judged: every other pair of the 6 columns, and A*B with each other
    # column (max_fields=3), most promising first.
    screening = found.screening()
    assert screening.height == 15 - 1 + 4
    assert "A*B" not in screening["cross"].to_list()
    assert {"A*B*C", "A*B*F"} <= set(screening["cross"].to_list())
    assert ["A", "B", "D"] in screening["fields"].to_list()
    assert screening["z"].to_list() == sorted(screening["z"].to_list(), reverse=True)
    # The command line's inspect lists the crosses by field name.
    path = Path(tempfile.mkdtemp()) / "fields.bin"
    found.save(path)
    shown = subprocess.run(
        [sys.executable, "-m", "polars_poly", "inspect", "-i", str(path)],
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0 and "n_crosses: 1" in shown.stdout and "A*B" in shown.stdout
    assert (screening["samples"] > 0).all() and (screening["z"] < 5.0).all()
    # z is the better judge's; candidates past 5,000 samples with z <= 0 are paused.
    assert screening["z"].to_list() == [
        max(a, b) for a, b in screening.select("z_factors", "z_cells").rows()
    ]
    paused = screening.filter(~pl.col("active"))
    assert ((paused["samples"] >= 5_000) & (paused["z"] <= 0)).all()
    given = pp.SGDClassifier(loss="logistic", bits=20, interactions=[("A", "B")]).fit(
        train, "label"
    )
    linear = pp.SGDClassifier(loss="logistic", bits=20).fit(train, "label")
    assert logloss_on(found, test) < logloss_on(given, test) + 0.02
    assert logloss_on(found, test) < logloss_on(linear, test) - 0.15


def test_model_file_pickle_and_native_scoring_keep_the_crosses(
    data: pl.DataFrame, tmp_path: Path
) -> None:
    settings = pp.FieldApple(check_every=5_000, max_crosses=3)
    model = pp.SGDClassifier(loss="logistic", bits=20, expansion=settings)
    model.fit(data.head(40_000), "label")
    test = data.tail(1_000).drop("label")
    expected = model.decision_function(test)
    path = tmp_path / "fields.model"
    model.save(path)
    for restored in (pp.load_model(path), pickle.loads(pickle.dumps(model))):
        assert isinstance(restored, pp.SGDClassifier)
        assert restored.crosses().equals(model.crosses())
        assert restored.get_params()["expansion__max_crosses"] == 3
        assert np.array_equal(restored.decision_function(test), expected)
    scored = test.lazy().select(model.decision_function_expr()).collect(engine="streaming")
    assert np.allclose(scored.to_series().to_numpy(), expected)


def test_nested_parameters_and_streamed_training(data: pl.DataFrame, tmp_path: Path) -> None:
    model = pp.SGDClassifier(loss="logistic", bits=20, expansion=pp.FieldApple())
    assert model.get_params()["expansion__z"] == 5.0
    model.set_params(expansion__check_every=4_000)
    assert model.expansion.check_every == 4_000
    path = tmp_path / "train.parquet"
    data.head(60_000).write_parquet(path)
    streamed = model.fit(pl.scan_parquet(path), "label")
    assert streamed.crosses()["cross"].to_list()[:1] == ["A*B"]


def _triple_data(n: int, seed: int) -> pl.DataFrame:
    """Columns A, B, C of 10 values and D, E of 1000, hashed apart: the label's log-odds are a
    random sign per (A, B) pair plus 1.5 times a random sign per (A, B, C) triple."""
    rng = np.random.default_rng(seed)
    a, b, c = (rng.integers(0, 10, n) for _ in range(3))
    d, e = (rng.integers(0, 1000, n) for _ in range(2))
    pair_sign = np.where(np.random.default_rng(99).random(100) < 0.5, -1.0, 1.0)
    triple_sign = np.where(np.random.default_rng(98).random(1000) < 0.5, -1.0, 1.0)
    margin = pair_sign[a * 10 + b] + 1.5 * triple_sign[a * 100 + b * 10 + c]
    label = np.where(rng.random(n) < 1 / (1 + np.exp(-margin)), 1, -1)
    fields = pl.DataFrame({"A": a, "B": b, "C": c, "D": d, "E": e}).cast(pl.String)
    hashed = fields.select(pp.hash_features(f, bits=20).alias(f) for f in fields.columns)
    return hashed.with_columns(label=pl.Series(label))


def test_a_cross_of_three_columns_is_found_named_saved_and_scored(tmp_path: Path) -> None:
    data = _triple_data(240_000, seed=3)
    train, test = data.head(200_000), data.tail(40_000)
    found = pp.SGDClassifier(loss="logistic", bits=20, expansion=pp.FieldApple()).fit(
        train, "label"
    )
    crosses = found.crosses()
    assert crosses["cross"].to_list()[:2] == ["A*B", "A*B*C"], crosses
    assert crosses["fields"].to_list()[1] == ["A", "B", "C"]
    # No noise column in any cross.
    assert not {"D", "E"} & {f for fields in crosses["fields"].to_list() for f in fields}
    given = pp.SGDClassifier(
        loss="logistic", bits=20, interactions=[("A", "B"), ("A", "B", "C")]
    ).fit(train, "label")
    pairs_only = pp.SGDClassifier(
        loss="logistic", bits=20, expansion=pp.FieldApple(max_fields=2)
    ).fit(train, "label")
    assert all(len(f) == 2 for f in pairs_only.crosses()["fields"].to_list())
    assert logloss_on(found, test) < logloss_on(given, test) + 0.01
    assert logloss_on(found, test) < logloss_on(pairs_only, test) - 0.05
    # Saved, loaded and scored natively like any cross.
    path = tmp_path / "triple.model"
    found.save(path)
    restored = pp.load_model(path)
    assert isinstance(restored, pp.SGDClassifier)
    assert restored.crosses().equals(crosses)
    features = test.drop("label")
    expected = found.decision_function(features)
    assert np.array_equal(restored.decision_function(features), expected)
    scored = features.lazy().select(found.decision_function_expr()).collect()
    assert np.allclose(scored.to_series().to_numpy(), expected)


def test_errors_name_what_is_wrong(data: pl.DataFrame) -> None:
    small = data.head(100)
    with pytest.raises(ValueError, match="interactions cannot be combined"):
        pp.SGDClassifier(loss="logistic", expansion=pp.FieldApple(), interactions=[("A", "B")]).fit(
            small, "label"
        )
    with pytest.raises(ValueError, match="z must be a number > 0, got -1"):
        pp.SGDClassifier(loss="logistic", expansion=pp.FieldApple(z=-1.0)).fit(small, "label")
    with pytest.raises(ValueError, match=r"shadow_bits must be an integer in \[10, 26\]"):
        pp.SGDClassifier(loss="logistic", expansion=pp.FieldApple(shadow_bits=40)).fit(
            small, "label"
        )
    with pytest.raises(ValueError, match=r"max_fields must be an integer in \[2, 8\]"):
        pp.SGDClassifier(loss="logistic", expansion=pp.FieldApple(max_fields=1)).fit(small, "label")
    with pytest.raises(TypeError, match="max_crosses"):
        pp.SGDClassifier(loss="logistic", expansion=pp.FieldApple(max_crosses="8")).fit(  # type: ignore[arg-type]
            small, "label"
        )
    linear = pp.SGDClassifier(loss="logistic").fit(small, "label")
    with pytest.raises(ValueError, match="crosses\\(\\) describes the crosses .*'linear' on 6"):
        linear.crosses()
    with pytest.raises(ValueError, match="screening\\(\\) describes the crosses"):
        linear.screening()


def test_default_apple_grows_field_crosses_on_two_or_more_columns(
    data: pl.DataFrame, tmp_path: Path
) -> None:
    train, test = data.head(80_000), data.tail(20_000)
    default = pp.SGDClassifier(loss="logistic", bits=20, expansion="apple").fit(train, "label")
    assert default.crosses()["cross"].to_list() == ["A*B"]
    # Every column is categorical (one value per row): apple leaves them to the crosses and
    # takes no monomial parent from them.
    assert default.n_crosses_ == 1 and default.n_parents_ == 0
    # Streamed from parquet (the doubling schedule), the crosses are found as well.
    train.write_parquet(tmp_path / "train.parquet")
    streamed = pp.SGDClassifier(loss="logistic", bits=20, expansion="apple")
    streamed.fit(pl.scan_parquet(tmp_path / "train.parquet"), "label")
    assert streamed.crosses()["cross"].to_list() == ["A*B"]
    again = pp.SGDClassifier(loss="logistic", bits=20, expansion="apple").fit(train, "label")
    assert again.monomials().equals(default.monomials()), "deterministic"
    assert again.crosses().equals(default.crosses())
    assert np.array_equal(again.predict_proba(test), default.predict_proba(test))
    without = pp.SGDClassifier(
        loss="logistic", bits=20, expansion=pp.Apple(field_crosses=None)
    ).fit(train, "label")
    assert logloss_on(default, test) < logloss_on(without, test) - 0.15
    with pytest.raises(ValueError, match="describes the crosses"):
        without.crosses()
    # Settings of the crosses are nested parameters; a saved or pickled model keeps them all.
    tuned = pp.SGDClassifier(loss="logistic", bits=20, expansion="apple")
    tuned.set_params(expansion=pp.Apple(field_crosses=pp.FieldApple(z=4.0)))
    assert tuned.get_params()["expansion__field_crosses__z"] == 4.0
    tuned.fit(train, "label")
    for model in (default, tuned, without):
        model.save(tmp_path / "m")
        loaded = pp.load_model(tmp_path / "m")
        assert repr(loaded.expansion) == repr(model.expansion)
        unpickled = pickle.loads(pickle.dumps(model))
        for other in (loaded, unpickled):
            assert np.array_equal(other.predict_proba(test), model.predict_proba(test))
    assert pp.load_model(tmp_path / "m").expansion.field_crosses is None


def with_numeric_columns(frame: pl.DataFrame, u: np.ndarray, v: np.ndarray) -> pl.DataFrame:
    """The fields hashed alone beside the numeric columns u and v in one sparse column N."""
    frame = frame.with_columns(u=u, v=v)
    return frame.select(
        "label", *(pp.hash_features(f, bits=20).alias(f) for f in FIELDS), N=pp.to_sparse("u", "v")
    )


def test_apple_takes_parents_and_factors_from_the_columns_that_are_not_categorical() -> None:
    frame = eat_rate(60_000, seed=1, varieties=100, noise_fields=4)
    rng = np.random.default_rng(0)
    data = with_numeric_columns(frame, rng.normal(size=frame.height), rng.normal(size=frame.height))
    typical = pp.Apple(ranking="typical")
    model = pp.SGDClassifier(loss="logistic", bits=20, expansion=typical).fit(data, "label")
    assert model.crosses()["cross"].to_list() == ["A*B"]
    parents = model.monomials()
    assert parents.height == model.n_parents_ > 0
    assert all(f.startswith("N[") for factors in parents["factors"] for f in factors)
    # u and v are noise. Their monomials times each value of the noise fields were many rare
    # features taking full steps: the progressive loss doubled (0.45 against 0.21). Children
    # multiply N's features alone now, and noise monomials cost nearly nothing.
    grown = pp.Apple(max_degree=1)  # linear, field crosses still grown
    linear = pp.SGDClassifier(loss="logistic", bits=20, expansion=grown).fit(data, "label")
    assert linear.crosses()["cross"].to_list() == ["A*B"]
    assert model.progressive_loss_ < linear.progressive_loss_ * 1.02


def test_a_slope_per_category_is_a_field_cross_and_apple_adds_the_numeric_product() -> None:
    """y depends on u with a slope of +-2 by animal, and on u*v: the slopes are the cross of
    N and A (found by the field screening, not by value-level children), u*v apple's."""
    frame = eat_rate(60_000, seed=1, varieties=100, noise_fields=4)
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=frame.height), rng.normal(size=frame.height)
    animals = frame["A"].unique().sort()
    slope = dict(zip(animals, rng.choice([-2.0, 2.0], size=animals.len()), strict=True))
    margin = np.array([slope[a] for a in frame["A"]]) * u + 0.5 * u * v
    label = (rng.uniform(size=frame.height) < 1 / (1 + np.exp(-margin))).astype(float)
    data = with_numeric_columns(frame.with_columns(label=label), u, v)
    train, test = data.head(50_000), data.tail(10_000)
    options = dict(loss="logistic", bits=20)
    default = pp.SGDClassifier(**options, expansion="apple").fit(train, "label")
    assert default.crosses()["cross"].to_list() == ["A*N"]
    assert default.apple_ranking_ != "linear"
    crossed = pp.SGDClassifier(**options, expansion=pp.Apple(max_degree=1)).fit(train, "label")
    assert crossed.crosses()["cross"].to_list() == ["A*N"]
    assert logloss_on(default, test) < logloss_on(crossed, test) - 0.003


def test_noise_counts_beside_the_fields_split_no_cross() -> None:
    """A joined cross is split further by categories only: by 13 noise counts (a numeric
    namespace, 13 value triples an example) its cells learned the linear model's lag on the
    counts, and `A*B*features` joined 10k rows after `A*B` (on eat-rate 1M with these counts,
    test logloss 0.386 against 0.328 for `A*B` alone)."""
    rng = np.random.default_rng(3)
    rows = 120_000
    frame = eat_rate(rows, seed=3, varieties=300, noise_fields=2).with_columns(
        pl.Series(f"n{i}", rng.poisson(2.0, rows).astype(np.float64)) for i in range(13)
    )
    model = pp.SGDClassifier(loss="logistic", bits=22, expansion=pp.FieldApple(), progress=False)
    crosses = model.fit(frame, "label").crosses()
    assert crosses["cross"].to_list() == ["A*B"]
    # The split is still listed among the candidates, never screened.
    screening = model.screening()
    assert screening.filter(pl.col("cross") == "A*B*features")["samples"].to_list() == [0]


def test_field_crosses_option_is_checked(data: pl.DataFrame) -> None:
    small = data.head(2_000)
    bad = pp.Apple(field_crosses="always")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="field_crosses must be 'auto', None or a polars_poly"):
        pp.SGDClassifier(loss="logistic", expansion=bad).fit(small, "label")
    one_column = small.select("label", "A")
    explicit = pp.Apple(field_crosses=pp.FieldApple())
    with pytest.raises(ValueError, match="field_crosses needs two or more feature columns.*has 1"):
        pp.SGDClassifier(loss="logistic", expansion=explicit).fit(one_column, "label")
    # 'auto' on one column is plain apple.
    plain = pp.SGDClassifier(loss="logistic", expansion="apple").fit(one_column, "label")
    with pytest.raises(ValueError, match="on 1 feature column"):
        plain.crosses()


FORMAT_7 = Path(__file__).parent / "data" / "format7"


def test_a_format_7_model_with_parents_predicts_as_it_was_trained(tmp_path: Path) -> None:
    """A model file of format 7 (written by commit 1776967, `tests/data/format7/make_model.py`)
    whose apple parents' children multiplied the hashed fields' values: loaded, it predicts
    exactly what it did then (read as format 8, which leaves those children out, its
    probabilities would move by up to 0.1), and saved again it stays so."""
    spec = importlib.util.spec_from_file_location("make_model", FORMAT_7 / "make_model.py")
    assert spec is not None and spec.loader is not None
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    rows = maker.mixed_rows(3_000).head(200).drop("label")
    expected = json.loads((FORMAT_7 / "expected.json").read_text())
    model = pp.load_model(FORMAT_7 / "apple_fields.model")
    assert model.n_parents_ == expected["n_parents"] > 0

    def as_then(fitted: pp.SGDClassifier) -> np.ndarray:
        # The file's probabilities were taken with numpy's exp of the scores (predict_proba
        # now takes the engine's, which may differ in the last bit): the scores are the same.
        return 1.0 / (1.0 + np.exp(-fitted.decision_function(rows)))

    np.testing.assert_array_equal(as_then(model), expected["proba"])
    np.testing.assert_allclose(model.predict_proba(rows)[:, 1], expected["proba"], rtol=1e-15)
    model.save(tmp_path / "again")
    again = pp.load_model(tmp_path / "again")
    np.testing.assert_array_equal(as_then(again), expected["proba"])
