"""Sparse columns: the data model shared by every polars-poly function.

A sparse row is a ``List(Struct({"index": UInt32 | UInt64, "value": Float32 | Float64}))`` value.
Rows may be unsorted and may repeat an index: a row means the *sum* of its entries (scipy's rule),
so kernels sort rows and add duplicates up. Zeros need not be stored. A null row is a missing row
and stays null through every expression.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa

from polars_poly._params import integer
from polars_poly._plugin import as_exprs, call_plugin

if TYPE_CHECKING:
    import scipy.sparse as sp

INDEX_DTYPES = (pl.UInt32, pl.UInt64)
VALUE_DTYPES = (pl.Float32, pl.Float64)


def sparse_dtype(
    index: type[pl.DataType] = pl.UInt32, value: type[pl.DataType] = pl.Float64
) -> pl.List:
    """The Polars dtype of a sparse column.

    Examples
    --------
    >>> sparse_dtype()
    List(Struct({'index': UInt32, 'value': Float64}))
    """
    return pl.List(pl.Struct({"index": index, "value": value}))


def is_scipy_sparse(matrix: Any) -> bool:
    """Whether ``matrix`` is a scipy sparse matrix, without importing scipy (a fifth of the
    command line's start-up): one exists only once scipy has been imported."""
    scipy_sparse = sys.modules.get("scipy.sparse")
    return scipy_sparse is not None and bool(scipy_sparse.issparse(matrix))


def width_option(n_features: Any) -> int:
    """The width option ``n_features``: a non-negative integer (a ``TypeError`` or
    ``ValueError`` naming it otherwise)."""
    width = integer("n_features", n_features)
    if width < 0:
        raise ValueError(f"n_features must be >= 0, got {width}")
    return width


def _check_csr(matrix: Any) -> sp.csr_array | sp.csr_matrix:
    if is_scipy_sparse(matrix) and matrix.format == "csr":
        return matrix
    if is_scipy_sparse(matrix):
        raise TypeError(
            f"expected a scipy CSR matrix, got {type(matrix).__name__} in {matrix.format!r} "
            "format; convert it with .tocsr() first"
        )
    raise TypeError(f"expected a scipy CSR matrix, got {type(matrix).__name__}")


def _check_structure(csr: Any) -> None:
    """A CSR matrix whose ``indptr`` describes its arrays: from 0, never decreasing, ending at
    their length (scipy does not check a matrix built from raw arrays)."""
    indptr = np.asarray(csr.indptr)
    n = len(np.asarray(csr.indices))
    if len(np.asarray(csr.data)) != n:
        raise ValueError(f"CSR matrix has {n} column indices but {len(csr.data)} values")
    if len(indptr) != csr.shape[0] + 1 or (len(indptr) and (indptr[0] != 0 or indptr[-1] != n)):
        raise ValueError(
            f"CSR matrix's indptr must run from 0 to {n} over {csr.shape[0] + 1} entries"
        )
    steps = np.diff(indptr)
    if steps.size and int(steps.min()) < 0:
        row = int(np.argmax(steps < 0))
        raise ValueError(
            f"row {row}: the CSR matrix's indptr decreases ({int(indptr[row])} then "
            f"{int(indptr[row + 1])})"
        )


def from_scipy(matrix: sp.csr_array | sp.csr_matrix, name: str = "features") -> pl.Series:
    """A scipy CSR matrix as a sparse Series, sharing the matrix's index and value buffers.

    ``indices`` and ``data`` are not copied (``int32``/``int64`` indices are viewed as
    ``UInt32``/``UInt64``; ``float32``/``float64`` values are kept); ``indptr`` is widened to the
    64-bit offsets Arrow large lists use. Unsorted and duplicate entries are kept as they are.

    Examples
    --------
    >>> import scipy.sparse as sp, numpy as np
    >>> s = from_scipy(sp.csr_array(np.array([[0.0, 2.0], [3.0, 0.0]])))
    >>> s.to_list()
    [[{'index': 1, 'value': 2.0}], [{'index': 0, 'value': 3.0}]]
    """
    csr = _check_csr(matrix)
    _check_structure(csr)
    indices = np.asarray(csr.indices)
    if indices.size and int(indices.min()) < 0:
        at = int(np.argmax(indices < 0))
        row = int(np.searchsorted(csr.indptr, at, side="right")) - 1
        raise ValueError(f"row {row}: negative column index {int(indices[at])} in the CSR matrix")
    width = int(csr.shape[1])
    if indices.size and int(indices.max()) >= width:
        at = int(np.argmax(indices >= width))
        row = int(np.searchsorted(csr.indptr, at, side="right")) - 1
        raise ValueError(
            f"row {row}: column index {int(indices[at])} is beyond the CSR matrix's {width} columns"
        )
    index_view = indices.view(np.uint32 if indices.dtype.itemsize == 4 else np.uint64)
    data = np.asarray(csr.data)
    if np.iscomplexobj(data):
        raise TypeError(
            f"the CSR matrix holds complex values ({data.dtype}): features are real numbers"
        )
    if data.dtype not in (np.float32, np.float64):
        data = data.astype(np.float64)
    if data.size and not np.isfinite(data).all():
        row = (
            int(np.searchsorted(csr.indptr, int(np.flatnonzero(~np.isfinite(data))[0]), "right"))
            - 1
        )
        raise ValueError(f"CSR matrix has a non-finite value in row {row}")
    entries = pa.StructArray.from_arrays(
        [pa.array(index_view), pa.array(data)], names=["index", "value"]
    )
    offsets = pa.array(np.asarray(csr.indptr, dtype=np.int64))
    series = pl.Series(name, pa.LargeListArray.from_arrays(offsets, entries))
    return series


def _flat_buffers(series: pl.Series) -> tuple[npt.NDArray[np.int64], np.ndarray, np.ndarray]:
    """(offsets from 0, indices, values) of a sparse Series; null rows read as empty rows."""
    check_sparse(series)
    array = series.rechunk().to_arrow()
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.null_count:
        array = array.fill_null(pa.scalar([], type=array.type))
    offsets = np.asarray(array.offsets, dtype=np.int64)
    start, end = int(offsets[0]), int(offsets[-1])
    offsets = offsets - start
    entries = array.values.slice(start, end - start)
    if entries.null_count:
        row = _row_of_first(offsets, entries.is_null().to_numpy(zero_copy_only=False))
        raise ValueError(
            f"column {series.name!r}, row {row}: a sparse row contains a null entry (null "
            "struct); drop or fill it first"
        )
    # A null row is a missing row; a null index or value inside a row is no feature (numpy
    # would read it as NaN).
    fields = {name: entries.field(name) for name in ("index", "value")}
    for name, field in fields.items():
        if field.null_count:
            row = _row_of_first(offsets, field.is_null().to_numpy(zero_copy_only=False))
            raise ValueError(
                f"column {series.name!r}, row {row}: sparse entries must not have a null {name} "
                "(a null row is a missing row; drop or fill the entry)"
            )
    indices = fields["index"].to_numpy(zero_copy_only=False)
    values = fields["value"].to_numpy(zero_copy_only=False)
    return offsets, indices, values


def check_sparse(series: pl.Series) -> None:
    """Raises a ``TypeError`` naming the column unless ``series`` is a sparse column."""
    if not isinstance(series, pl.Series):
        shown = repr(series)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise TypeError(
            f"series must be a sparse polars Series, got {type(series).__name__} {shown}"
        )
    dtype = series.dtype
    ok = False
    if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct):
        fields = {f.name: f.dtype for f in dtype.inner.fields}
        ok = (
            fields.keys() == {"index", "value"}
            and fields["index"] in (pl.UInt32, pl.UInt64, pl.Int32, pl.Int64)
            and fields["value"] in VALUE_DTYPES
        )
    if not ok:
        raise TypeError(
            f"column {series.name!r} is not a sparse column: expected "
            f"List(Struct({{'index': UInt32|UInt64, 'value': Float32|Float64}})), got {dtype}"
        )


def to_scipy(series: pl.Series, n_features: int) -> sp.csr_array:
    """A sparse Series as a scipy ``csr_array`` of shape ``(len(series), n_features)``.

    Index and value buffers are shared with the Series when they are contiguous (they are then
    read-only: ``.copy()`` the matrix before in-place methods such as ``sort_indices``); null
    rows become empty rows. Fails, naming the row, if an index is ``>= n_features`` or a value
    is NaN or infinite.

    Examples
    --------
    >>> s = pl.Series("x", [[{"index": 2, "value": 1.5}], None], dtype=sparse_dtype())
    >>> X = to_scipy(s, 3)
    >>> X.shape, X.nnz
    ((2, 3), 1)
    >>> X.toarray().tolist()
    [[0.0, 0.0, 1.5], [0.0, 0.0, 0.0]]
    """
    n_features = width_option(n_features)
    offsets, indices, values = _flat_buffers(series)
    if indices.size:
        if indices.dtype.kind == "i" and int(indices.min()) < 0:
            raise ValueError(f"column {series.name!r}: negative feature index {int(indices.min())}")
        top = int(indices.max())
        if top >= n_features:
            row = _row_of_first(offsets, indices >= n_features)
            raise ValueError(
                f"column {series.name!r}, row {row}: feature index {top} is out of range "
                f"for n_features={n_features}"
            )
    finite = np.isfinite(values)
    if not finite.all():
        row = _row_of_first(offsets, ~finite)
        raise ValueError(
            f"column {series.name!r}, row {row}: non-finite value "
            f"{values[~finite][0]}; scipy and numpy matrices of features must be finite"
        )
    if n_features <= np.iinfo(np.int32).max and indices.dtype.itemsize == 4:
        indices = indices.view(np.int32)
    else:
        indices = indices.astype(np.int64, copy=False)
    import scipy.sparse as sp

    return sp.csr_array((values, indices, offsets), shape=(len(series), n_features))


def _row_of_first(offsets: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]) -> int:
    first = int(np.flatnonzero(mask)[0])
    return int(np.searchsorted(offsets, first, side="right")) - 1


def from_numpy(array: npt.ArrayLike, name: str = "features") -> pl.Series:
    """A dense 2-D array as a sparse Series (zeros dropped, column j -> index j).

    Examples
    --------
    >>> from_numpy([[0, 2], [3, 0]]).to_list()
    [[{'index': 1, 'value': 2.0}], [{'index': 0, 'value': 3.0}]]
    """
    if is_scipy_sparse(array):
        raise TypeError(
            f"from_numpy takes a dense 2-D numpy array, got a scipy sparse "
            f"{type(array).__name__}; use from_scipy(matrix.tocsr()) for a scipy matrix"
        )
    dense = np.asarray(array)
    if dense.ndim != 2:
        raise ValueError(f"expected a 2-D array, got {dense.ndim} dimension(s)")
    if dense.dtype.kind not in "biuf":
        raise TypeError(f"expected a numeric array, got dtype {dense.dtype}")
    if dense.dtype.kind == "f" and not np.isfinite(dense).all():
        row, col = np.argwhere(~np.isfinite(dense))[0]
        raise ValueError(f"non-finite value {dense[row, col]} at row {row}, column {col}")
    import scipy.sparse as sp

    return from_scipy(sp.csr_array(dense.astype(np.float64, copy=False)), name=name)


def to_numpy(series: pl.Series, n_features: int) -> npt.NDArray[np.float64]:
    """A sparse Series as a dense ``(len(series), n_features)`` array (duplicates summed).

    Examples
    --------
    >>> row = [{"index": 1, "value": 2.0}, {"index": 1, "value": 0.5}]
    >>> s = pl.Series([row], dtype=sparse_dtype())
    >>> to_numpy(s, 3).tolist()
    [[0.0, 2.5, 0.0]]
    """
    return np.asarray(to_scipy(series, n_features).toarray(), dtype=np.float64)


def n_features(series: pl.Series) -> int:
    """The number of columns a sparse Series spans: its largest index plus one (0 if empty).

    Examples
    --------
    >>> n_features(pl.Series([[{"index": 6, "value": 1.0}], []], dtype=sparse_dtype()))
    7
    """
    offsets, indices, _ = _flat_buffers(series)
    if indices.size and int(indices.min()) < 0:
        at = int(np.argmax(indices < 0))
        row = int(np.searchsorted(offsets, at, side="right")) - 1
        raise ValueError(
            f"column {series.name!r}, row {row}: negative feature index {int(indices[at])}"
        )
    return int(indices.max()) + 1 if indices.size else 0


def to_sparse(*columns: str | pl.Expr | list[str | pl.Expr]) -> pl.Expr:
    """Numeric (or boolean) columns as one sparse column: the i-th column becomes index i.

    Zeros and nulls are left out; NaN/inf raise an error naming the column and row. The result
    is named after the first column; use ``.alias`` to rename it. Works with selectors
    (e.g. ``polars.selectors.numeric()``) and in lazy and streaming queries.

    Examples
    --------
    >>> df = pl.DataFrame({"a": [1.0, 0.0], "b": [0, 5]})
    >>> df.select(to_sparse("a", "b").alias("x"))["x"].to_list()
    [[{'index': 0, 'value': 1.0}], [{'index': 1, 'value': 5.0}]]
    """
    return call_plugin("to_sparse", as_exprs(columns), wildcard=True)


def hash_features(
    *columns: str | pl.Expr | list[str | pl.Expr], bits: int = 18, seed: int = 0
) -> pl.Expr:
    """Arbitrary columns hashed into one sparse column of ``2**bits`` features, VW style.

    A numeric, decimal or boolean column ``c`` contributes ``(h(c), value)``; a string,
    categorical or enum column ``c`` contributes ``(h(value) seeded by h(c), 1.0)`` (a
    categorical hashes exactly as its string); a list or array of strings ``c`` (a bag of
    tokens, e.g. ``pl.col("text").str.split(" ")``) contributes ``(h(token) seeded by h(c),
    1.0)`` for each token, so a repeated token counts its occurrences. ``h`` is MurmurHash3
    x86_32 with Vowpal Wabbit's rule for all-digit names (value + seed), masked to the low
    ``bits`` bits; the rules are documented in docs/sparse.md ("Hashing"), stable across
    versions. Nulls are left out; colliding features are summed. Other dtypes are refused when
    the query is planned, naming the column (the dtype table of docs/sparse.md).

    Examples
    --------
    >>> df = pl.DataFrame({"age": [23.0, None], "city": ["Paris", "Lyon"]})
    >>> df.select(hash_features("age", "city", bits=8).alias("x"))["x"].to_list()
    [[{'index': 72, 'value': 1.0}, {'index': 81, 'value': 23.0}], [{'index': 48, 'value': 1.0}]]
    """
    bits, seed = integer("bits", bits), integer("seed", seed)
    if not 1 <= bits <= 32:
        raise ValueError(f"bits must be in 1..=32, got {bits}")
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be in 0..2**32, got {seed}")
    return call_plugin(
        "hash_features", as_exprs(columns), {"bits": bits, "seed": seed}, wildcard=True
    )


def hashed_feature_names(
    data: pl.DataFrame | pl.LazyFrame, *columns: str, bits: int = 18, seed: int = 0
) -> pl.DataFrame:
    """The readable name of every feature ``hash_features(*columns, bits=bits, seed=seed)``
    gives ``data``: ``column=value`` for a string, categorical or enum column's values and a
    token list's tokens, ``column`` for a numeric or boolean column. Columns: ``index`` (the
    feature's index in the sparse column) and ``name`` (names of colliding features joined by
    ``" | "``), sorted by index. Pass it to ``monomials(names=...)`` to read apple's monomials
    of hashed data as column values.

    Examples
    --------
    >>> df = pl.DataFrame({"age": [23.0, 31.0], "city": ["Paris", "Lyon"]})
    >>> hashed_feature_names(df, "age", "city", bits=8).rows()
    [(48, 'city=Lyon'), (72, 'city=Paris'), (81, 'age')]
    """
    lazy = data.lazy()
    schema = lazy.collect_schema()
    parts = []
    for column in columns:
        if column not in schema:
            raise pl.exceptions.ColumnNotFoundError(
                f"{column!r} is not a column of the frame; its columns are {schema.names()}"
            )
        dtype = schema[column]
        if isinstance(dtype, pl.List | pl.Array):
            # Each distinct token as a one-token list of the column: hashed as in the data.
            tokens = lazy.select(pl.col(column).explode().drop_nulls().unique())
            named = tokens.collect(engine="streaming").select(
                pl.concat_list(pl.col(column)).alias(column),
                (pl.lit(f"{column}=") + pl.col(column)).alias("name"),
            )
        elif dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum | pl.Categorical):
            values = lazy.select(pl.col(column).cast(pl.String).drop_nulls().unique())
            named = values.collect(engine="streaming").with_columns(
                name=pl.lit(f"{column}=") + pl.col(column)
            )
        else:
            # hash_features's own dtype check (planned on no rows): a column it refuses (a date,
            # say) is refused here as there, naming it.
            lazy.select(column).head(0).select(hash_features(column, bits=bits)).collect()
            named = pl.DataFrame({column: [1.0], "name": [column]})
        hashed = named.select(hash_features(column, bits=bits, seed=seed).alias("f"), "name")
        parts.append(
            hashed.select(pl.col("f").list.first().struct.field("index").alias("index"), "name")
        )
    if not parts:
        raise ValueError("name at least one column, as given to hash_features")
    found = pl.concat(parts).with_columns(pl.col("index").cast(pl.Int64))
    return found.group_by("index").agg(pl.col("name").unique().sort().str.join(" | ")).sort("index")
