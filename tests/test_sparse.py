"""Sparse columns: conversions to and from scipy/numpy, and the to_sparse / hash expressions."""

from __future__ import annotations

import datetime

import mmh3
import numpy as np
import polars as pl
import polars_poly as pp
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@st.composite
def csr_matrices(draw: st.DrawFn) -> sp.csr_array:
    rows = draw(st.integers(0, 12))
    cols = draw(st.integers(1, 40))
    density = draw(st.floats(0.0, 1.0))
    seed = draw(st.integers(0, 2**32 - 1))
    index_dtype = draw(st.sampled_from([np.int32, np.int64]))
    value_dtype = draw(st.sampled_from([np.float32, np.float64]))
    matrix = sp.random_array(
        (rows, cols), density=density, format="csr", rng=seed, dtype=value_dtype
    )
    matrix.indices = matrix.indices.astype(index_dtype)
    matrix.indptr = matrix.indptr.astype(index_dtype)
    return matrix


@settings(max_examples=150, deadline=None)
@given(csr_matrices())
def test_csr_round_trip_keeps_every_stored_entry(matrix: sp.csr_array) -> None:
    before = (matrix.indptr.copy(), matrix.indices.copy(), matrix.data.copy())
    series = pp.from_scipy(matrix)
    assert len(series) == matrix.shape[0]
    back = pp.to_scipy(series, matrix.shape[1])
    assert back.shape == matrix.shape
    np.testing.assert_array_equal(back.indptr, matrix.indptr)
    np.testing.assert_array_equal(back.indices, matrix.indices)
    np.testing.assert_array_equal(back.data, matrix.data)
    assert back.data.dtype == matrix.data.dtype
    # the user's matrix is untouched
    for original, now in zip(before, (matrix.indptr, matrix.indices, matrix.data), strict=True):
        np.testing.assert_array_equal(original, now)


@settings(max_examples=150, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=10),
        elements=st.sampled_from([0.0, 0.0, 1.0, -2.5, 1e-300, 3e8]),
    )
)
def test_dense_round_trip(dense: np.ndarray) -> None:
    series = pp.from_numpy(dense)
    assert all(v != 0.0 for row in series.to_list() for v in (e["value"] for e in row))
    np.testing.assert_array_equal(pp.to_numpy(series, dense.shape[1]), dense)


def test_from_scipy_shares_buffers() -> None:
    matrix = sp.random_array((1000, 50), density=0.2, format="csr", rng=0)
    series = pp.from_scipy(matrix)
    values = series.list.explode().struct.field("value").to_numpy()
    assert np.shares_memory(values, matrix.data)


def test_unsorted_and_duplicate_entries_mean_their_sum() -> None:
    matrix = sp.csr_array(
        (np.array([1.0, 2.0, 3.0]), np.array([4, 1, 4]), np.array([0, 3])), shape=(1, 5)
    )
    series = pp.from_scipy(matrix)
    assert series.to_list() == [
        [{"index": 4, "value": 1.0}, {"index": 1, "value": 2.0}, {"index": 4, "value": 3.0}]
    ]
    np.testing.assert_array_equal(pp.to_numpy(series, 5), [[0.0, 2.0, 0.0, 0.0, 4.0]])


def test_null_rows_become_empty_rows_in_scipy() -> None:
    series = pl.Series("x", [[{"index": 1, "value": 2.0}], None], dtype=pp.sparse_dtype())
    np.testing.assert_array_equal(pp.to_numpy(series, 2), [[0.0, 2.0], [0.0, 0.0]])


def test_to_scipy_rejects_index_out_of_range() -> None:
    series = pl.Series("x", [[], [{"index": 7, "value": 1.0}]], dtype=pp.sparse_dtype())
    with pytest.raises(
        ValueError, match=r"column 'x', row 1: feature index 7 is out of range for n_features=5"
    ):
        pp.to_scipy(series, 5)


def test_wrong_dtype_names_the_column() -> None:
    with pytest.raises(TypeError, match="column 'y' is not a sparse column"):
        pp.to_scipy(pl.Series("y", [1, 2]), 3)
    with pytest.raises(TypeError, match="CSR"):
        pp.from_scipy(sp.coo_array(np.eye(2)))
    with pytest.raises(ValueError, match="non-finite value nan at row 1, column 0"):
        pp.from_numpy(np.array([[1.0], [np.nan]]))
    with pytest.raises(ValueError, match="non-finite value in row 1"):
        pp.from_scipy(sp.csr_array(np.array([[1.0, 0.0], [0.0, np.inf]])))


FRAME = pl.DataFrame(
    {
        "a": [1.0, 0.0, None, 2.5],
        "b": [0, 3, 4, 0],
        "c": [True, False, True, False],
    }
)
EXPECTED = [
    [{"index": 0, "value": 1.0}, {"index": 2, "value": 1.0}],
    [{"index": 1, "value": 3.0}],
    [{"index": 1, "value": 4.0}, {"index": 2, "value": 1.0}],
    [{"index": 0, "value": 2.5}],
]


@pytest.mark.parametrize("engine", ["eager", "lazy", "streaming"])
def test_to_sparse_in_every_engine(engine: str) -> None:
    expr = pp.to_sparse("a", "b", "c").alias("x")
    if engine == "eager":
        out = FRAME.select(expr)
    else:
        out = (
            FRAME.lazy()
            .select(expr)
            .collect(engine="streaming" if engine == "streaming" else "auto")
        )
    assert out["x"].to_list() == EXPECTED
    assert out["x"].dtype == pp.sparse_dtype()


def test_to_sparse_namespace_and_selectors() -> None:
    import polars.selectors as cs

    out = FRAME.select(pl.col("a").poly.to_sparse("b", "c").alias("x"))
    assert out["x"].to_list() == EXPECTED
    out = FRAME.select(pp.to_sparse(cs.all()).alias("x"))
    assert out["x"].to_list() == EXPECTED


def test_to_sparse_errors() -> None:
    with pytest.raises(
        pl.exceptions.ComputeError, match=r'column "a", row 1: non-finite value NaN'
    ):
        pl.DataFrame({"a": [1.0, float("nan")]}).select(pp.to_sparse("a"))
    with pytest.raises(pl.exceptions.ComputeError, match='column "s" has dtype str'):
        pl.DataFrame({"s": ["x"]}).select(pp.to_sparse("s"))


def vw_hash(name: str, seed: int) -> int:
    """Vowpal Wabbit's hashstring, written from its documented rule (oracle: mmh3)."""
    stripped = name.strip(" ")
    if stripped.isdigit() and stripped.isascii():
        return (int(stripped) + seed) % 2**32
    return mmh3.hash(stripped.encode(), seed, signed=False)


@pytest.mark.parametrize("bits,seed", [(18, 0), (10, 12345), (32, 7)])
def test_hash_features_matches_reference_hash(bits: int, seed: int) -> None:
    frame = pl.DataFrame(
        {"age": [23, 0, None], "city": ["Paris", None, "Lyon"], "42": [1.5, 2.0, 0.0]}
    )
    out = frame.lazy().select(
        pp.hash_features("age", "city", "42", bits=bits, seed=seed).alias("h")
    )
    rows = out.collect(engine="streaming")["h"].to_list()
    mask = (1 << bits) - 1
    age = vw_hash("age", seed) & mask
    col42 = vw_hash("42", seed) & mask
    city = vw_hash("city", seed)

    def expected(entries: list[tuple[int, float]]) -> list[dict[str, float]]:
        summed: dict[int, float] = {}
        for index, value in entries:
            summed[index] = summed.get(index, 0.0) + value
        return [{"index": i, "value": v} for i, v in sorted(summed.items()) if v != 0.0]

    assert rows[0] == expected([(age, 23.0), (vw_hash("Paris", city) & mask, 1.0), (col42, 1.5)])
    assert rows[1] == expected([(col42, 2.0)])
    assert rows[2] == expected([(vw_hash("Lyon", city) & mask, 1.0)])


def test_hash_features_errors() -> None:
    with pytest.raises(ValueError, match="bits must be in 1..=32"):
        pp.hash_features("a", bits=0)
    with pytest.raises(pl.exceptions.ComputeError, match='column "a", row 0: non-finite value inf'):
        pl.DataFrame({"a": [float("inf")]}).select(pp.hash_features("a"))
    with pytest.raises(pl.exceptions.ComputeError, match=r"column \"d\" has dtype date"):
        pl.DataFrame({"d": [datetime.date(2020, 1, 1)]}).select(pp.hash_features("d"))


def test_hash_features_token_lists_count_each_token() -> None:
    # A List(String) column is a bag of tokens in the column's namespace, as in VW's
    # `|tokens the cat the`: each occurrence adds 1, null lists and null tokens add nothing.
    frame = pl.DataFrame(
        {"tokens": [["the", "cat", "the"], None, ["dog", None], []], "n": [1.0, 2.0, None, None]}
    )
    bits, seed = 20, 3
    rows = frame.lazy().select(pp.hash_features("tokens", "n", bits=bits, seed=seed))
    got = rows.collect(engine="streaming").to_series().to_list()
    mask = (1 << bits) - 1
    namespace = vw_hash("tokens", seed)

    def token(word: str) -> int:
        return vw_hash(word, namespace) & mask

    n = vw_hash("n", seed) & mask
    expected = [
        sorted([(token("the"), 2.0), (token("cat"), 1.0), (n, 1.0)]),
        [(n, 2.0)],
        [(token("dog"), 1.0)],
        [],
    ]
    assert [[(e["index"], e["value"]) for e in row] for row in got] == expected
    with pytest.raises(pl.exceptions.ComputeError, match="lists or arrays of strings"):
        pl.DataFrame({"x": [[1, 2]]}).select(pp.hash_features("x"))
