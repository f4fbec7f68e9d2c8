"""Polynomial and interaction features of sparse rows, in scikit-learn's column order.

Only products of stored nonzeros are formed (cost per row ``O(nnz**K)``, never ``O(D**K)``), and
each monomial's output column is computed directly by the K-simplex mapping (no lookup tables).
Output columns match ``sklearn.preprocessing.PolynomialFeatures`` exactly: the bias column, then
the degree blocks in increasing degree, each in lexicographic order of sorted index tuples.

With ``bits=b`` the same monomials are hashed into ``2**b`` columns instead
(``column = MurmurHash3(sorted index tuple as little-endian u64 words, seed) mod 2**b`` for degree
>= 2, the index itself mod ``2**b`` for degree 1; colliding monomials in a row are summed).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
import scipy.sparse as sp

from polars_poly import _internal
from polars_poly._input import numeric_objects
from polars_poly._params import INT_MAX, boolean, integer
from polars_poly._plugin import call_plugin
from polars_poly.sparse import from_numpy, from_scipy, width_option

Degree = int | tuple[int, int]


def _degrees(degree: Degree) -> tuple[int, int]:
    """(min_degree, max_degree) from scikit-learn's ``degree`` argument, validated."""
    if isinstance(degree, bool):
        raise TypeError(f"degree must be an int or a (min, max) pair of ints, got {degree!r}")
    if isinstance(degree, int | np.integer):
        if degree < 0:
            raise ValueError(f"degree must be >= 0, got {degree}")
        return 0, int(degree)
    if (
        isinstance(degree, tuple | list)
        and len(degree) == 2
        and all(isinstance(d, int | np.integer) and not isinstance(d, bool) for d in degree)
    ):
        low, high = int(degree[0]), int(degree[1])
        if not 0 <= low <= high:
            raise ValueError(f"degree=(min, max) needs 0 <= min <= max, got {degree!r}")
        return low, high
    raise TypeError(f"degree must be an int or a (min, max) pair of ints, got {degree!r}")


def _options(
    degree: Degree, interaction_only: bool, include_bias: bool, bits: int | None, seed: int
) -> dict[str, Any]:
    low, high = _degrees(degree)
    bits = None if bits is None else integer("bits", bits)
    seed = integer("seed", seed)
    if high == 0 and not include_bias:
        raise ValueError("degree 0 with include_bias=False would give no output columns")
    if bits is not None and not 1 <= bits <= 32:
        raise ValueError(f"bits must be in 1..=32, got {bits}")
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be in 0..2**32, got {seed}")
    return {
        "min_degree": low,
        "max_degree": high,
        "interaction_only": boolean("interaction_only", interaction_only),
        "include_bias": boolean("include_bias", include_bias),
        "bits": bits,
        "seed": seed,
        "n_features": None,
    }


def output_width(
    n_features: int,
    degree: Degree = 2,
    *,
    interaction_only: bool = False,
    include_bias: bool = True,
    bits: int | None = None,
) -> int:
    """Number of output columns (``2**bits`` when hashed). Raises ``OverflowError`` when it does
    not fit 64 bits (use the hashed form, ``bits=...``, then).

    Examples
    --------
    >>> output_width(3, 2), output_width(3, 2, include_bias=False), output_width(3, 2, bits=12)
    (10, 9, 4096)
    """
    options = _options(degree, interaction_only, include_bias, bits, 0)
    if bits is not None:
        return 1 << bits
    return int(_internal.expansion_width(width_option(n_features), options))


def expand(
    column: str | pl.Expr,
    *,
    n_features: int | None = None,
    degree: Degree = 2,
    interaction_only: bool = False,
    include_bias: bool = True,
    bits: int | None = None,
    seed: int = 0,
) -> pl.Expr:
    """Polynomial expansion of a sparse column, as an elementwise Polars expression.

    ``n_features`` (the input width D) is required unless ``bits`` is given. The output is a sparse
    column with UInt64 indices and Float64 values, each row sorted by column. Null rows stay
    null. Runs in eager, lazy and streaming queries; Polars splits the work over its threads.

    Examples
    --------
    >>> s = pl.Series("x", [[{"index": 0, "value": 2.0}, {"index": 2, "value": 3.0}]])
    >>> e = expand(pl.lit(s), n_features=3, degree=2, include_bias=False)
    >>> [(d["index"], d["value"]) for d in pl.select(e).item().to_list()]
    [(0, 2.0), (2, 3.0), (3, 4.0), (5, 6.0), (8, 9.0)]
    """
    options = _options(degree, interaction_only, include_bias, bits, seed)
    if bits is None:
        if n_features is None:
            raise ValueError("n_features is required for the exact expansion (or pass bits=...)")
        output_width(
            n_features, degree, interaction_only=interaction_only, include_bias=include_bias
        )
    options["n_features"] = None if n_features is None else width_option(n_features)
    expr = pl.col(column) if isinstance(column, str) else column
    return call_plugin("expand", [expr], options)


def expand_csr(
    X: sp.csr_array | sp.csr_matrix | npt.ArrayLike,
    degree: Degree = 2,
    *,
    interaction_only: bool = False,
    include_bias: bool = True,
    bits: int | None = None,
    seed: int = 0,
    parallel: bool = True,
) -> sp.csr_array:
    """Polynomial expansion of a scipy CSR matrix (or dense array) into a scipy ``csr_array``.

    Same columns as ``PolynomialFeatures(degree, interaction_only=..., include_bias=...)
    .fit_transform(X)``; unsorted rows are sorted and duplicate entries summed first (scikit-learn
    gets both wrong). ``parallel=False`` uses one thread.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> X = sp.csr_array([[1.0, 2.0]])
    >>> expand_csr(X, degree=2).toarray().tolist()  # 1, x0, x1, x0^2, x0 x1, x1^2
    [[1.0, 1.0, 2.0, 1.0, 2.0, 4.0]]
    >>> expand_csr(X, degree=2, interaction_only=True, include_bias=False).toarray().tolist()
    [[1.0, 2.0, 2.0]]
    """
    options = _options(degree, interaction_only, include_bias, bits, seed)
    parallel = boolean("parallel", parallel)
    if sp.issparse(X):
        matrix: Any = X if X.format == "csr" else X.tocsr()  # type: ignore[union-attr]
        series = from_scipy(matrix)
    else:
        matrix = numeric_objects(np.asarray(X))
        series = from_numpy(matrix)
    n_features = int(matrix.shape[1])
    options["n_features"] = n_features
    width = (
        1 << bits
        if bits is not None
        else output_width(
            n_features, degree, interaction_only=interaction_only, include_bias=include_bias
        )
    )
    indptr, indices, data = _internal.expand_to_csr(series, options, parallel)
    # The arrays are fresh, owned by numpy, sorted and canonical: no copy and no check needed.
    return sp.csr_array((data, indices, indptr), shape=(matrix.shape[0], width), copy=False)


def feature_name(
    column: int,
    n_features: int,
    degree: Degree = 2,
    *,
    interaction_only: bool = False,
    include_bias: bool = True,
    input_features: list[str] | None = None,
) -> str:
    """The ``get_feature_names_out`` name of one output column (e.g. ``"x0 x3^2"``), computed
    from the index alone.

    Examples
    --------
    >>> feature_name(5, n_features=3), feature_name(9, n_features=3)
    ('x0 x1', 'x2^2')
    >>> feature_name(5, n_features=3, input_features=["age", "hours", "kids"])
    'age hours'
    """
    return (
        " ".join(
            _power_name(input_features[i] if input_features else f"x{i}", p)
            for i, p in monomial(
                column,
                n_features,
                degree,
                interaction_only=interaction_only,
                include_bias=include_bias,
            )
        )
        or "1"
    )


def _power_name(name: str, power: int) -> str:
    return name if power == 1 else f"{name}^{power}"


def monomial(
    column: int,
    n_features: int,
    degree: Degree = 2,
    *,
    interaction_only: bool = False,
    include_bias: bool = True,
) -> list[tuple[int, int]]:
    """The monomial of an output column as ``[(input index, power), ...]`` (``[]`` for the bias).

    Examples
    --------
    >>> monomial(5, n_features=3), monomial(0, n_features=3)
    ([(0, 1), (1, 1)], [])
    """
    options = _options(degree, interaction_only, include_bias, None, 0)
    options["n_features"] = width_option(n_features)
    column = integer("column", column)
    if column < 0:
        raise ValueError(f"column must be >= 0, got {column}")
    return [(int(i), int(p)) for i, p in _internal.expansion_monomial(column, options)]


def column_of(
    exponents: dict[int, int] | list[tuple[int, int]],
    n_features: int,
    degree: Degree = 2,
    *,
    interaction_only: bool = False,
    include_bias: bool = True,
) -> int:
    """The output column of a monomial given as ``{input index: power}`` (inverse of
    :func:`monomial`).

    Examples
    --------
    >>> column_of({0: 1, 1: 1}, n_features=3), column_of({2: 2}, n_features=3)
    (5, 9)
    """
    options = _options(degree, interaction_only, include_bias, None, 0)
    options["n_features"] = width_option(n_features)
    pairs = _exponents(exponents)
    total = sum(power for _, power in pairs)
    if total > options["max_degree"]:
        # Refused before the engine spells the monomial out, one entry per unit of its degree.
        raise ValueError(
            f"exponents {exponents!r}: degree {total} is not part of this expansion "
            f"(degrees {options['min_degree']} to {options['max_degree']})"
        )
    return int(_internal.expansion_column(pairs, options))


# The engine takes a monomial's powers as 32-bit integers.
_POWER_MAX = 2**32 - 1


def _exponents(exponents: Any) -> list[tuple[int, int]]:
    """:func:`column_of`'s monomial as sorted ``(index, power)`` pairs; a ``TypeError`` or
    ``ValueError`` naming ``exponents`` and the value at fault otherwise."""
    wanted = "a {index: power} dict or a list of (index, power) pairs"
    if isinstance(exponents, Mapping):
        pairs = list(exponents.items())
    elif isinstance(exponents, Iterable) and not isinstance(exponents, str | bytes):
        pairs = list(exponents)
        if not all(isinstance(pair, tuple | list) and len(pair) == 2 for pair in pairs):
            raise TypeError(f"exponents must be {wanted}, got {exponents!r}")
    else:
        raise TypeError(f"exponents must be {wanted}, got {exponents!r}")
    checked = []
    for index, power in pairs:
        for what, value, high in (("index", index, INT_MAX), ("power", power, _POWER_MAX)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"exponents: {what} {value!r} is not an integer (in {exponents!r})")
            if not 0 <= int(value) <= high:
                raise ValueError(
                    f"exponents: {what} {value} is out of range [0, {high}] (in {exponents!r})"
                )
        checked.append((int(index), int(power)))
    return sorted(checked)
