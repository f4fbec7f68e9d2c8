"""The synthetic data generators: determinism, chunking, schemas, and the planted structure."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import scipy.stats
from polars_poly import synthetic
from polars_poly.synthetic import (
    click,
    click_planted,
    eat_rate,
    text,
    text_planted,
    write_parquet,
)

SMALL_TEXT: dict[str, Any] = {"vocabulary": 2000, "n_words": 50, "n_pairs": 5}

# kind -> (generator, keyword arguments for a small fast frame)
KINDS: dict[str, tuple[Callable[..., pl.DataFrame], dict[str, Any]]] = {
    "eat_rate": (eat_rate, {}),
    "eat_rate_fwumious": (eat_rate, {"sampling": "fwumious"}),
    "text": (text, SMALL_TEXT),
    "click": (click, {"n_fields": 20}),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_same_seed_same_rows_other_seed_other_rows(kind: str) -> None:
    generate, params = KINDS[kind]
    frame = generate(500, 7, **params)
    assert frame.height == 500
    assert frame.equals(generate(500, 7, **params))
    other = generate(500, 8, **params)
    assert not frame.equals(other)
    # Not a shifted copy either: the second column differs in many rows.
    name = frame.columns[1]
    assert (frame[name].hash() != other[name].hash()).sum() > 100


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_rows_do_not_depend_on_where_generation_starts(kind: str) -> None:
    generate, params = KINDS[kind]
    whole = generate(1000, 3, **params)
    parts = pl.concat(
        [generate(n, 3, offset=start, **params) for start, n in [(0, 1), (1, 400), (401, 599)]]
    )
    assert parts.equals(whole)
    assert generate(0, 3, **params).schema == whole.schema


@pytest.mark.parametrize(
    ("kind", "params"),
    [("eat-rate", {}), ("eat_rate", {"sampling": "fwumious"}), ("text", SMALL_TEXT)]
    + [("click", {"n_fields": 20})],
)
def test_write_parquet_in_chunks_equals_one_chunk(
    kind: str, params: dict[str, Any], tmp_path: Path
) -> None:
    rows = 2500
    chunked = write_parquet(kind, tmp_path / "a.parquet", rows, 11, chunk_rows=1000, **params)
    whole = write_parquet(kind, tmp_path / "b.parquet", rows, 11, chunk_rows=rows, **params)
    frame = pl.read_parquet(chunked)
    assert frame.equals(pl.read_parquet(whole))
    generate = synthetic._parquet._GENERATORS[kind.replace("-", "_")]
    assert frame.equals(generate(rows, 11, **params))
    import pyarrow.parquet as pq

    assert pq.ParquetFile(chunked).metadata.num_row_groups == 3


def test_write_parquet_offset_zero_rows_and_bad_arguments(tmp_path: Path) -> None:
    path = write_parquet("click", tmp_path / "t.parquet", 300, 2, offset=100, n_fields=20)
    assert pl.read_parquet(path).equals(click(400, 2, n_fields=20).slice(100))
    empty = pl.read_parquet(write_parquet("eat_rate", tmp_path / "e.parquet", 0, 0))
    assert empty.height == 0 and empty.schema == eat_rate(1, 0).schema
    with pytest.raises(ValueError, match="kind must be one of"):
        write_parquet("criteo", tmp_path / "x.parquet", 10, 0)
    with pytest.raises(ValueError, match="chunk_rows"):
        write_parquet("text", tmp_path / "x.parquet", 10, 0, chunk_rows=0)
    with pytest.raises(ValueError, match="seed"):
        eat_rate(10, -1)


def test_schemas() -> None:
    fields: list[tuple[str, pl.DataType]] = [(letter, pl.String()) for letter in "ABCDEFGHIJKL"]
    assert eat_rate(5, 0).schema == pl.Schema([("label", pl.Float64()), *fields])
    sparse = pl.List(pl.Struct({"index": pl.UInt32, "value": pl.Float64}))
    assert text(5, 0, **SMALL_TEXT).schema == pl.Schema(
        [("label", pl.Float64()), ("tokens", pl.List(pl.String)), ("features", sparse)]
    )
    assert text(5, 0, with_truth=True, **SMALL_TEXT).columns[-1] == "p_true"
    frame = click(5, 0, with_truth=True)
    assert frame.columns == ["label", *(f"f{f:02d}" for f in range(30)), "p_true"]
    assert all(frame[name].dtype == pl.String for name in frame.columns[1:-1])
    for generate, params in KINDS.values():
        labels = generate(200, 1, **params)["label"]
        assert labels.dtype == pl.Float64
        assert set(labels.unique().to_list()) == {-1.0, 1.0}


@pytest.mark.parametrize("sampling", ["types", "fwumious"])
def test_eat_rate_label_is_the_diet_match_of_the_names(sampling: str) -> None:
    frame = eat_rate(20_000, 5, sampling=sampling)  # type: ignore[arg-type]
    diet = frame["A"].str.split("-").list.first()
    kind = frame["B"].str.split("-").list.first()
    assert set(diet.unique()) == {"Herbivore", "Carnivore"}
    assert set(kind.unique()) == {"Plant", "Meat"}
    match = ((diet == "Herbivore") & (kind == "Plant")) | ((diet == "Carnivore") & (kind == "Meat"))
    assert (frame["label"] == pl.Series(np.where(match.to_numpy(), 1.0, -1.0))).all()
    # Noise values: letter + number, within range.
    numbers = frame["C"].str.slice(1).cast(pl.Int64)
    assert frame["C"].str.starts_with("C").all()
    assert 0 <= numbers.min() and numbers.max() <= 10_000  # type: ignore[operator]


def test_eat_rate_types_have_a_fixed_diet_and_the_original_layout_has_blocks() -> None:
    frame = eat_rate(50_000, 0)
    number = frame["A"].str.split("-").list.last()
    assert frame.select(number.n_unique()).item() == 1000
    # Each type number carries one diet: 1000 animal names in all.
    assert frame["A"].n_unique() == 1000 and frame["B"].n_unique() == 1000
    original = eat_rate(50_000, 0, sampling="fwumious")
    a = original["A"].str.split("-").list.last().cast(pl.Int64)
    b = original["B"].str.split("-").list.last().cast(pl.Int64)
    assert a.max() == 1000 and b.max() == 1000
    assert not ((a > 250) & (b > 250)).any()  # the never-seen block
    hard = eat_rate(5000, 0, sampling="fwumious", unseen=True)
    a = hard["A"].str.split("-").list.last().cast(pl.Int64)
    b = hard["B"].str.split("-").list.last().cast(pl.Int64)
    assert ((a > 250) & (b > 250)).all()
    with pytest.raises(ValueError, match="unseen"):
        eat_rate(10, 0, unseen=True)


def test_eat_rate_label_depends_on_the_pair_only() -> None:
    """The cross determines the label; neither field alone, nor a noise field, says anything."""
    frame = eat_rate(40_000, 1)
    assert frame.group_by("A", "B").agg(pl.col("label").n_unique())["label"].max() == 1
    positive = (frame["label"] > 0).to_numpy()

    def p_value(codes: np.ndarray) -> float:
        width = int(codes.max()) + 1
        table = np.stack(
            [
                np.bincount(codes[positive], minlength=width),
                np.bincount(codes[~positive], minlength=width),
            ]
        )
        return float(scipy.stats.chi2_contingency(table[:, table.sum(0) > 0]).pvalue)

    diet = (frame["A"].str.starts_with("Herbivore")).to_numpy().astype(np.int64)
    food = (frame["B"].str.starts_with("Plant")).to_numpy().astype(np.int64)
    noise = frame["C"].str.slice(1).cast(pl.Int64).to_numpy() % 20
    # Animals' diet, food kind, noise: independent of the label; the (diet, kind) pair: all of it.
    assert p_value(diet) > 1e-3 and p_value(food) > 1e-3 and p_value(noise) > 1e-3
    assert p_value(2 * diet + food) < 1e-100


def test_text_features_are_sorted_unique_and_l2_normalized() -> None:
    frame = text(2000, 4, **SMALL_TEXT)
    lengths = frame["tokens"].list.len()
    assert lengths.min() >= 20 and lengths.max() <= 200  # type: ignore[operator]
    planted = text_planted(4, **SMALL_TEXT)
    ids = {name: i for i, name in enumerate(planted.names)}
    for tokens, features in zip(
        frame["tokens"].to_list()[:50], frame["features"].to_list()[:50], strict=True
    ):
        index = [entry["index"] for entry in features]
        value = np.array([entry["value"] for entry in features])
        assert index == sorted(set(ids[t] for t in tokens))  # sorted, no duplicates
        counts = np.array([tokens.count(planted.names[i]) for i in index])
        expected = counts * planted.idf[index]
        np.testing.assert_allclose(value, expected / np.linalg.norm(expected), rtol=1e-12)
    norms = frame.select(
        pl.col("features").list.eval(pl.element().struct.field("value").pow(2)).list.sum().sqrt()
    ).to_series()
    np.testing.assert_allclose(norms.to_numpy(), 1.0, rtol=1e-12)


def test_text_vocabulary_is_zipf_and_idf_matches_document_frequency() -> None:
    frame = text(5000, 0, **SMALL_TEXT)
    planted = text_planted(0, **SMALL_TEXT)
    assert len(set(planted.names)) == len(planted.names) == 2000
    index = frame["features"].explode().struct.field("index").to_numpy()
    df = np.bincount(index, minlength=2000) / frame.height
    common = planted.probability > 1e-3
    expected = np.exp(1.0 - planted.idf)  # idf = 1 + ln(1 / df)
    np.testing.assert_allclose(df[common], expected[common], atol=0.03)
    counts = np.bincount(
        frame["tokens"]
        .explode()
        .replace_strict({name: i for i, name in enumerate(planted.names)}, return_dtype=pl.Int64)
        .to_numpy(),
        minlength=2000,
    )
    np.testing.assert_allclose(counts / counts.sum(), planted.probability, atol=3e-3)


def test_text_planted_pairs_and_labels() -> None:
    planted = text_planted(0, **SMALL_TEXT)
    assert len(planted.pairs) == 5 and len(planted.words) == 50
    pair_words = {w for pair in planted.pairs for w in pair}
    assert len(pair_words) == 10 and not pair_words & set(planted.words.tolist())
    assert all(len(a) > 0 and len(b) > 0 for a, b in planted.pair_names)
    assert planted.word_names[0] == planted.names[int(planted.words[0])]
    frame = text(20_000, 0, with_truth=True, **SMALL_TEXT)
    positive = frame["label"] > 0
    assert 0.45 < positive.mean() < 0.55  # type: ignore[operator]
    # The label follows the truth, and the pairs move it the way their weights say.
    p = frame["p_true"].to_numpy()
    assert np.mean((p > 0.5) == positive.to_numpy()) > 0.8
    present = frame.select(
        [
            (pl.col("features").list.eval(pl.element().struct.field("index").is_in([a, b])))
            .list.sum()
            .eq(2)
            .alias(f"pair{k}")
            for k, (a, b) in enumerate(planted.pairs)
        ]
    )
    for k, weight in enumerate(planted.pair_weights):
        both = present[f"pair{k}"].to_numpy()
        if both.sum() >= 200:
            rate_with, rate_without = (
                positive.to_numpy()[both].mean(),
                positive.to_numpy()[~both].mean(),
            )
            assert (rate_with - rate_without) * weight > 0.1


def test_text_noiseless_labels_are_the_sign_of_the_margin() -> None:
    frame = text(3000, 2, noise=0.0, with_truth=True, **SMALL_TEXT)
    assert ((frame["p_true"] > 0.5) == (frame["label"] > 0)).all()


def test_click_positive_rate_and_fields() -> None:
    frame = click(200_000, 0)
    rate = float((frame["label"] > 0).mean())  # type: ignore[arg-type]
    assert 0.03 <= rate <= 0.05
    planted = click_planted(0)
    assert sorted(set(planted.cardinalities)) == [10, 100, 1000, 10_000, 100_000, 1_000_000]
    for name, cardinality in zip(planted.fields, planted.cardinalities, strict=True):
        column = frame[name]
        assert column.str.len_chars().eq(8).all()
        assert column.n_unique() <= cardinality
        if cardinality <= 100:
            assert column.n_unique() == cardinality
    assert frame["f03"].n_unique() > 1000  # high-cardinality fields look like ids


def test_click_planted_structure() -> None:
    planted = click_planted(0)
    assert len(planted.field_crosses) == 4 and len(planted.value_crosses) == 5
    scale = dict(zip(planted.fields, planted.main_scale, strict=True))
    cardinality = dict(zip(planted.fields, planted.cardinalities, strict=True))
    pure = [c for c in planted.field_crosses if not c.marginal]
    marginal = [c for c in planted.field_crosses if c.marginal]
    assert len(pure) == 2 and len(marginal) == 2
    assert all(scale[c.a] == 0 and scale[c.b] == 0 for c in pure)
    assert all(scale[c.a] > 0 and scale[c.b] > 0 for c in marginal)
    assert all(cardinality[c.a] <= 1000 and cardinality[c.b] <= 1000 for c in pure + marginal)
    assert len(set(planted.crossed_fields)) == 4
    assert 20 <= len(planted.main_fields) <= 26
    frame = click(20_000, 0)
    for cross in planted.value_crosses:
        assert (frame[cross.a] == cross.value_a).sum() > 0
        assert (frame[cross.b] == cross.value_b).sum() > 0
    assert click_planted(1) != planted
    assert click_planted(0, n_fields=40).fields[-1] == "f39"


def test_click_is_learnable_beyond_the_base_rate() -> None:
    """Logistic regression on one-hot fields beats the constant on held-out rows (on 20k rows,
    ~800 positives: logloss 0.953 x the constant's, AUC 0.68)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss, roc_auc_score
    from sklearn.preprocessing import OneHotEncoder

    frame = click(30_000, 0)
    fields = frame.columns[1:]
    x = frame.select(fields).to_numpy()
    y = (frame["label"] > 0).to_numpy()
    train, test = slice(0, 20_000), slice(20_000, None)
    encoder = OneHotEncoder(handle_unknown="ignore", min_frequency=5)
    model = LogisticRegression(C=0.03, max_iter=300)
    model.fit(encoder.fit_transform(x[train]), y[train])
    p = model.predict_proba(encoder.transform(x[test]))[:, 1]
    base = log_loss(y[test], np.full(len(p), y[train].mean()))
    assert log_loss(y[test], p) < 0.97 * base
    assert roc_auc_score(y[test], p) > 0.62


def test_click_truth_matches_the_planted_intercept() -> None:
    frame = click(100_000, 3, n_fields=24, positive_rate=0.05, with_truth=True)
    assert abs(frame["p_true"].mean() - 0.05) < 0.005  # type: ignore[operator]
    assert abs((frame["label"] > 0).mean() - 0.05) < 0.005  # type: ignore[operator]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: eat_rate(5, 0, noise_fields=25), "noise_fields"),
        (lambda: eat_rate(5, 0, sampling="other"), "sampling"),  # type: ignore[arg-type]
        (lambda: text(5, 0, vocabulary=10), "vocabulary"),
        (lambda: text(5, 0, min_tokens=30, max_tokens=20), "min_tokens"),
        (lambda: click(5, 0, positive_rate=1.5), "positive_rate"),
        (lambda: click(5, 0, n_fields=4), "n_field_crosses"),
        (lambda: click(-1, 0), "n_rows"),
    ],
)
def test_bad_arguments_name_the_parameter(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_eat_rate_held_out_pairs_never_train_and_make_a_stated_share_of_test_rows() -> None:
    """With ``held_out_pairs=h`` training rows never hold one of the held-out pairs (about h of
    the 10,000 pairs of 100 x 100 types); test rows (``include_held_out``) hold them in about h
    of the rows. The rows keep the offset property, and the label rule is the pair's."""
    options = {"varieties": 100, "noise_fields": 1, "held_out_pairs": 0.3}
    train = eat_rate(60_000, 2, **options)  # type: ignore[arg-type]
    test = eat_rate(20_000, 2, include_held_out=True, offset=60_000, **options)  # type: ignore[arg-type]

    def pairs(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        number = [frame[f].str.split("-").list.last().cast(pl.Int64).to_numpy() for f in "AB"]
        return number[0], number[1]

    every = np.arange(100)
    grid_a, grid_b = np.repeat(every, 100), np.tile(every, 100)
    held = synthetic.held_out_pair(2, 0.3, grid_a, grid_b)
    assert 0.28 < held.mean() < 0.32
    a, b = pairs(train)
    assert not synthetic.held_out_pair(2, 0.3, a, b).any()
    assert len(set(zip(a, b, strict=True))) > 0.99 * (~held).sum(), "the other pairs all occur"
    ta, tb = pairs(test)
    in_test_held = synthetic.held_out_pair(2, 0.3, ta, tb).mean()
    assert abs(in_test_held - held.mean()) < 0.02
    seen = set(zip(a, b, strict=True))
    unseen = np.mean([pair not in seen for pair in zip(ta, tb, strict=True)])
    assert abs(unseen - in_test_held) < 0.01
    assert eat_rate(500, 2, offset=100, **options).equals(train.slice(100, 500))  # type: ignore[arg-type]
    diet, kind = (train[f].str.split("-").list.first() for f in "AB")
    match = (diet == "Herbivore") == (kind == "Plant")
    assert (train["label"] == pl.Series(np.where(match.to_numpy(), 1.0, -1.0))).all()
    assert eat_rate(300, 2, varieties=100, noise_fields=1).equals(
        eat_rate(300, 2, varieties=100, noise_fields=1, held_out_pairs=0.0)
    )
    with pytest.raises(ValueError, match="held_out_pairs must be in"):
        eat_rate(10, 0, held_out_pairs=1.0)
    with pytest.raises(ValueError, match="needs sampling='types'"):
        eat_rate(10, 0, sampling="fwumious", held_out_pairs=0.1)


@pytest.mark.parametrize("pairs", [False, True])
def test_click_triple_crosses_are_pure_or_made_of_pairs(pairs: bool) -> None:
    """A pure cross of three fields carries nothing in any pair of them (its mean over the third
    field is exactly 0 for every value pair, under the value frequencies); one with pairs is
    mostly its pairs' crosses. Either way the labels follow it, and without triple crosses the
    data is what it was."""
    from polars_poly.synthetic._click import _rank_probabilities, _triple_margin

    planted = synthetic.click_planted(0, n_triple_crosses=1, triple_pairs=pairs)
    (cross,) = planted.triple_crosses
    assert cross.pairs is pairs and 0.8 <= cross.scale <= 1.2
    index = [planted.fields.index(name) for name in cross.fields]
    sizes = [planted.cardinalities[f] for f in index]
    assert max(sizes) <= 100
    grid = np.stack(np.meshgrid(*(np.arange(k) for k in sizes), indexing="ij"), -1).reshape(-1, 3)
    ranks = [np.zeros(len(grid), np.int64) for _ in planted.fields]
    for j, f in enumerate(index):
        ranks[f] = grid[:, j]
    w = _triple_margin(0, 0, planted, ranks).reshape(sizes)
    p = [_rank_probabilities(planted.cardinalities[f], planted.zipf[f]) for f in index]
    assert all(abs(q.sum() - 1) < 1e-12 and (q > 0).all() for q in p)
    joint = np.einsum("a,b,c->abc", *p)
    total = float((joint * w * w).sum() - (joint * w).sum() ** 2)
    explained = []
    for axis in range(3):  # the pair of the two other fields, averaged over this one
        mean = (w * joint).sum(axis) / joint.sum(axis)
        weight = joint.sum(axis)
        explained.append(float((weight * mean * mean).sum()) / total)
    if pairs:
        assert all(share > 0.15 for share in explained), explained
    else:
        assert max(explained) < 1e-20 and abs(total - cross.scale**2) < 1e-9, explained
    frame = synthetic.click(100_000, 0, n_triple_crosses=1, triple_pairs=pairs)
    rows = [frame[name].to_numpy() for name in planted.fields]
    names = {
        f: synthetic._click._click_value_name(0, f, np.arange(planted.cardinalities[f]))
        for f in index
    }
    row_ranks = [np.zeros(len(frame), np.int64) for _ in planted.fields]
    for f in index:
        lookup = {name: r for r, name in enumerate(names[f].to_pylist())}
        row_ranks[f] = np.array([lookup[v] for v in rows[f]])
    margin = _triple_margin(0, 0, planted, row_ranks)
    label = frame["label"].to_numpy() > 0
    assert scipy.stats.spearmanr(margin, label).statistic > 0.05
    assert synthetic.click(2000, 3).equals(synthetic.click(2000, 3, n_triple_crosses=0))
    with pytest.raises(ValueError, match="n_triple_crosses 9 needs 27 fields"):
        synthetic.click_planted(0, n_triple_crosses=9)
