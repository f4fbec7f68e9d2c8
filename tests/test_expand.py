"""Polynomial expansion: equal to scikit-learn's PolynomialFeatures, sparse and at any degree."""

from __future__ import annotations

import mmh3
import numpy as np
import polars as pl
import polars_poly as pp
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import PolynomialFeatures

from tests.conftest import shared_file


def assert_same_csr(ours: sp.csr_array, reference: sp.spmatrix) -> None:
    reference = sp.csr_array(reference, copy=True)
    reference.eliminate_zeros()
    reference.sort_indices()
    assert ours.shape == reference.shape
    np.testing.assert_array_equal(ours.indptr, reference.indptr)
    np.testing.assert_array_equal(ours.indices, reference.indices)
    np.testing.assert_allclose(ours.data, reference.data, rtol=1e-12)


def output_columns(n: int, degree: object, interaction_only: bool, include_bias: bool) -> int:
    return pp.output_width(n, degree, interaction_only=interaction_only, include_bias=include_bias)  # type: ignore[arg-type]


@st.composite
def expansion_cases(draw: st.DrawFn) -> tuple[sp.csr_array, object, bool, bool]:
    rows = draw(st.integers(1, 8))
    cols = draw(st.integers(1, 9))
    density = draw(st.floats(0.0, 1.0))
    seed = draw(st.integers(0, 2**32 - 1))
    matrix = sp.random_array((rows, cols), density=density, format="csr", rng=seed)
    matrix.data = np.round(matrix.data * 4 - 2, 2)  # signed values, some of them zero
    interaction_only = draw(st.booleans())
    include_bias = draw(st.booleans())
    max_degree = draw(st.integers(1, 4))
    if draw(st.booleans()):
        degree: object = max_degree
    else:
        degree = (draw(st.integers(0, max_degree)), max_degree)
    return matrix, degree, interaction_only, include_bias


@settings(max_examples=300, deadline=None)
@given(expansion_cases())
def test_equals_sklearn_on_random_csr(case: tuple[sp.csr_array, object, bool, bool]) -> None:
    matrix, degree, interaction_only, include_bias = case
    reference = PolynomialFeatures(
        degree, interaction_only=interaction_only, include_bias=include_bias
    )
    assume(output_columns(matrix.shape[1], degree, interaction_only, include_bias) > 0)
    expected = reference.fit_transform(sp.csr_matrix(matrix))
    ours = pp.expand_csr(
        matrix, degree, interaction_only=interaction_only, include_bias=include_bias
    )
    assert_same_csr(ours, expected)
    dense = pp.expand_csr(
        matrix.toarray(), degree, interaction_only=interaction_only, include_bias=include_bias
    )
    assert_same_csr(dense, expected)
    names = pp.PolynomialExpander(
        degree, interaction_only=interaction_only, include_bias=include_bias
    ).fit(matrix)
    np.testing.assert_array_equal(names.get_feature_names_out(), reference.get_feature_names_out())


@settings(max_examples=50, deadline=None)
@given(expansion_cases())
def test_polars_expression_equals_expand_csr(case: tuple[sp.csr_array, object, bool, bool]) -> None:
    matrix, degree, interaction_only, include_bias = case
    assume(output_columns(matrix.shape[1], degree, interaction_only, include_bias) > 0)
    expected = pp.expand_csr(
        matrix, degree, interaction_only=interaction_only, include_bias=include_bias
    )
    frame = pl.DataFrame({"x": pp.from_scipy(matrix)})
    expr = pp.expand(
        "x",
        n_features=matrix.shape[1],
        degree=degree,
        interaction_only=interaction_only,
        include_bias=include_bias,
    )
    out = frame.lazy().select(expr).collect(engine="streaming")["x"]
    assert out.dtype == pl.List(pl.Struct({"index": pl.UInt64, "value": pl.Float64}))
    assert_same_csr(pp.to_scipy(out, expected.shape[1]), expected)


def test_unsorted_rows_and_duplicates_are_handled_where_sklearn_is_wrong() -> None:
    # one row, stored unsorted, with index 1 twice: it means x = [0, 5, 2]
    unsorted = sp.csr_matrix(
        (np.array([2.0, 1.0, 4.0]), np.array([2, 1, 1]), np.array([0, 3])), shape=(1, 3)
    )
    truth = np.array([[0.0, 5.0, 2.0]])
    expected = PolynomialFeatures(2).fit_transform(truth)
    ours = pp.expand_csr(unsorted, 2)
    np.testing.assert_allclose(ours.toarray(), expected)
    sklearn_result = PolynomialFeatures(2).fit_transform(unsorted)
    assert not np.allclose(sklearn_result.toarray(), expected), (
        "sklearn got this right now: update the test"
    )


def test_row_with_only_explicit_zeros_expands_to_bias_only() -> None:
    matrix = sp.csr_array((np.array([0.0]), np.array([1]), np.array([0, 1])), shape=(1, 3))
    ours = pp.expand_csr(matrix, 3)
    np.testing.assert_array_equal(ours.toarray()[0], [1.0] + [0.0] * 19)


@pytest.mark.parametrize(
    "name,degree",
    [
        ("a9a/a9a.gz", 2),
        ("a9a/a9a.gz", 3),
        ("mushrooms/mushrooms", 2),
        ("mushrooms/mushrooms", 3),
        ("splice/splice.gz", 2),
        ("splice/splice.gz", 3),
    ],
)
def test_equals_sklearn_on_shared_data(name: str, degree: int) -> None:
    frame = pp.read_libsvm(shared_file(*name.split("/")))
    frame = frame.head(3000)
    width = 123 if name.startswith("a9a") else pp.n_features(frame["features"])
    X = pp.to_scipy(frame["features"], width)
    expected = PolynomialFeatures(degree).fit_transform(sp.csr_matrix(X))
    assert_same_csr(pp.expand_csr(X, degree), expected)
    out = (
        frame.lazy()
        .select(pp.expand("features", n_features=width, degree=degree))
        .collect()["features"]
    )
    assert_same_csr(pp.to_scipy(out, expected.shape[1]), expected)


def test_any_degree_and_64_bit_columns() -> None:
    # D = 10^6, degree 4: C(10^6 + 3, 4) ~ 4.2e22 does not fit u64 -> error suggesting hashing
    with pytest.raises(OverflowError, match="bits"):
        pp.output_width(10**6, 4)
    # D = 2^21, degree 3: block sizes beyond 2^32, indices need 64 bits
    n = 2**21
    width = pp.output_width(n, 3, include_bias=False)
    assert width > 2**60
    row = pl.Series("x", [[{"index": n - 1, "value": 2.0}]], dtype=pp.sparse_dtype())
    out = pl.select(pp.expand(pl.lit(row), n_features=n, degree=3, include_bias=False)).to_series()
    assert out.to_list()[0][-1] == {"index": width - 1, "value": 8.0}
    assert pp.monomial(width - 1, n, 3, include_bias=False) == [(n - 1, 3)]
    # degree 7 on a tiny row: C(3+6, 7) monomials of degree 7
    out7 = pp.expand_csr(np.array([[1.0, 2.0, 3.0]]), 7, include_bias=False)
    reference = PolynomialFeatures(7, include_bias=False).fit_transform(np.array([[1.0, 2.0, 3.0]]))
    np.testing.assert_allclose(out7.toarray(), reference)


def test_csr_output_uses_scipys_index_type_and_is_writable() -> None:
    # int32 indices whenever every column fits (what scipy picks), int64 beyond; fresh writable
    # arrays either way, so users can scale or sort the result in place.
    small = pp.expand_csr(sp.csr_array(np.array([[0.0, 2.0, 3.0]])), 2)
    assert small.indices.dtype == np.int32 and small.indptr.dtype == np.int32
    assert small.data.flags.writeable and small.indices.flags.writeable
    small.data *= 2
    np.testing.assert_allclose(
        small.toarray(), 2 * PolynomialFeatures(2).fit_transform(np.array([[0.0, 2.0, 3.0]]))
    )
    d = 70_000  # degree 2: C(70001, 2) + 70001 columns > 2^31
    wide = sp.csr_array(([1.5, 2.0], ([0, 0], [3, d - 1])), shape=(1, d))
    out = pp.expand_csr(wide, 2, include_bias=False)
    assert out.shape[1] > np.iinfo(np.int32).max
    assert out.indices.dtype == np.int64 and out.indptr.dtype == np.int64
    last = pp.column_of([(d - 1, 2)], d, 2, include_bias=False)
    assert out.indices[-1] == last and out.data[-1] == 4.0
    hashed = pp.expand_csr(wide, 2, bits=20)
    assert hashed.indices.dtype == np.int32 and hashed.shape == (1, 2**20)


def test_feature_names_and_inverse_without_materializing() -> None:
    D = 10**5
    reference = PolynomialFeatures(3).fit(np.zeros((1, 4)))
    for column, name in enumerate(reference.get_feature_names_out()):
        assert pp.feature_name(column, 4, 3) == name
    assert pp.feature_name(1 + D, D, 3) == "x0^2"
    assert pp.column_of({0: 2}, D, 3) == 1 + D
    assert pp.column_of({7: 1, 99_999: 2}, D, 3) == pp.column_of([(99_999, 2), (7, 1)], D, 3)
    col = pp.column_of({7: 1, 99_999: 2}, D, 3)
    assert pp.monomial(col, D, 3) == [(7, 1), (99_999, 2)]
    assert pp.feature_name(col, D, 3, input_features=[f"f{i}" for i in range(D)]) == "f7 f99999^2"


def test_hashed_form_is_order_independent_murmur3() -> None:
    bits = 20
    row = pl.Series(
        "x", [[{"index": 9, "value": 2.0}, {"index": 3, "value": 5.0}]], dtype=pp.sparse_dtype()
    )
    out = (
        pl.select(pp.expand(pl.lit(row), degree=2, include_bias=False, bits=bits, seed=11))
        .to_series()
        .to_list()[0]
    )
    mask = (1 << bits) - 1

    def h(*indices: int) -> int:
        return mmh3.hash(np.array(sorted(indices), dtype="<u8").tobytes(), 11, signed=False) & mask

    expected: dict[int, float] = {}
    for column, value in [(3, 5.0), (9, 2.0), (h(3, 3), 25.0), (h(3, 9), 10.0), (h(9, 9), 4.0)]:
        expected[column] = expected.get(column, 0.0) + value
    assert out == [{"index": c, "value": v} for c, v in sorted(expected.items())]


def test_expander_in_a_pipeline_and_on_dataframes() -> None:
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    pipe = Pipeline(
        [("poly", pp.PolynomialExpander(2)), ("clf", LogisticRegression(max_iter=1000))]
    )
    assert pipe.fit(X, y).score(X, y) > 0.9
    frame = pl.DataFrame({"age": [1.0, 2.0], "hours": [0.0, 3.0]})
    expander = pp.PolynomialExpander(2, include_bias=False).fit(frame)
    assert list(expander.get_feature_names_out()) == [
        "age",
        "hours",
        "age^2",
        "age hours",
        "hours^2",
    ]
    np.testing.assert_allclose(
        expander.transform(frame).toarray(), [[1, 0, 1, 0, 0], [2, 3, 4, 6, 9]]
    )


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: pp.expand_csr(np.eye(2), 0, include_bias=False), ValueError, "no output columns"),
        (lambda: pp.expand_csr(np.eye(2), -1), ValueError, "degree must be >= 0"),
        (lambda: pp.expand_csr(np.eye(2), (3, 2)), ValueError, "min <= max"),
        (lambda: pp.expand_csr(np.array([[np.nan, 1.0]]), 2), ValueError, "non-finite"),
        (lambda: pp.expand("x", degree=2), ValueError, "n_features is required"),
        (lambda: pp.PolynomialExpander().transform(np.eye(2)), Exception, "not fitted"),
    ],
)
def test_bad_input(call: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]


def test_bad_rows_in_expression_name_the_row() -> None:
    frame = pl.DataFrame(
        {"x": pl.Series([[], [{"index": 5, "value": 1.0}]], dtype=pp.sparse_dtype())}
    )
    with pytest.raises(
        pl.exceptions.ComputeError, match="row 1: feature index 5 is out of range for n_features=3"
    ):
        frame.select(pp.expand("x", n_features=3))
    nan = pl.DataFrame(
        {"x": pl.Series([[{"index": 0, "value": float("nan")}]], dtype=pp.sparse_dtype())}
    )
    with pytest.raises(pl.exceptions.ComputeError, match="row 0"):
        nan.select(pp.expand("x", n_features=3))
    with pytest.raises(pl.exceptions.ComputeError, match="not a sparse column"):
        pl.DataFrame({"x": [1, 2]}).select(pp.expand("x", n_features=3))
    floats = pl.Series(
        "x",
        [[{"index": 1.0, "value": 1.0}]],
        dtype=pl.List(pl.Struct({"index": pl.Float64, "value": pl.Float64})),
    )
    with pytest.raises(
        pl.exceptions.ComputeError,
        match=r"got List\(Struct\{index: Float64, value: Float64\}\)",
    ):
        pl.DataFrame({"x": floats}).select(pp.expand("x", n_features=3))
    signed = pl.Series(
        "x",
        [[{"index": 0, "value": 1.0}], [{"index": 1, "value": 1.0}, {"index": -4, "value": 2.0}]],
        dtype=pl.List(pl.Struct({"index": pl.Int64, "value": pl.Float64})),
    )
    with pytest.raises(pl.exceptions.ComputeError, match="row 1: negative feature index -4"):
        pl.DataFrame({"x": signed}).select(pp.expand("x", n_features=3))


def test_negative_csr_index_names_row_and_value() -> None:
    X = sp.csr_array(
        (np.ones(3), np.array([0, 2, -7], dtype=np.int32), np.array([0, 1, 1, 3])), shape=(3, 3)
    )
    with pytest.raises(ValueError, match="row 2: negative column index -7"):
        pp.expand_csr(X, 2)


def test_null_rows_stay_null() -> None:
    frame = pl.DataFrame(
        {"x": pl.Series([None, [{"index": 1, "value": 2.0}]], dtype=pp.sparse_dtype())}
    )
    out = frame.select(pp.expand("x", n_features=2, include_bias=False))["x"].to_list()
    assert out == [None, [{"index": 1, "value": 2.0}, {"index": 4, "value": 4.0}]]


@pytest.mark.filterwarnings("ignore")
def test_polynomial_expander_passes_every_scikit_learn_estimator_check() -> None:
    """Complex, object, empty, NaN and infinite input refused at fit as scikit-learn refuses it;
    1-D input told to reshape; the sparse tag (6 checks failed before)."""
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(pp.PolynomialExpander(), on_fail=None)
    assert [r["check_name"] for r in results if r["status"] == "failed"] == []
    assert len(results) > 30
