"""The one input adapter of the estimators: whatever the user gives as ``X`` (scipy sparse,
numpy, a Polars frame's sparse, string or numeric columns, a sparse Series) becomes feature
columns, one per namespace, and ``y`` / ``sample_weight`` become float arrays, with the same
checks and messages for every estimator. The Rust side reads sparse columns, and for the online
learners string, token-list and struct-of-numbers columns too (``src/python/input.rs``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from polars_poly._lazy import np, pl

if TYPE_CHECKING:
    import numpy.typing as npt

DEFAULT_NAMESPACE = "features"


class ColumnTypeError(TypeError, ValueError):
    """A frame column of no feature type (text, dates) where features were expected: a wrong
    type (``TypeError``) in a value the caller gave (``ValueError``); either ``except`` catches
    it, as numpy's ``AxisError`` is both a ``ValueError`` and an ``IndexError``."""


def as_polars(X: Any) -> Any:
    """A pandas DataFrame as a Polars one (its columns by name, as a Polars frame's are read:
    a frame whose columns come in another order at prediction is not scored by position);
    anything else as it is."""
    if type(X).__module__.startswith("pandas") and type(X).__name__ == "DataFrame":
        frame = pl.from_pandas(X)
        return frame.rename({c: str(c) for c in frame.columns if not isinstance(c, str)})
    return X


def is_sparse_dtype(dtype: pl.DataType) -> bool:
    return isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct)


def as_float_array(values: Any, what: str, first_row: int = 0) -> npt.NDArray[np.float64]:
    """Labels or weights as a contiguous 1-D float64 array (a null or a non-numeric value is an
    error naming ``what`` and the row, counted from ``first_row``)."""
    array = label_array(values, what, first_row)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"Unknown label type: {what} must be numeric, got dtype {array.dtype}")
    return np.ascontiguousarray(array, dtype=np.float64)


def label_array(values: Any, what: str, first_row: int = 0) -> npt.NDArray[Any]:
    """Labels of any type as a 1-D numpy array (a null is an error naming ``what`` and the row,
    counted from ``first_row``; a column vector is raveled with scikit-learn's warning)."""
    if values is None:
        raise ValueError(
            f"{what}: this estimator requires y to be passed, but the target y is None"
        )
    if isinstance(values, pl.Series):
        if values.null_count():
            row = first_row + int(values.is_null().arg_true()[0])
            raise ValueError(f"{what}: row {row} is null")
        values = values.to_numpy()
    array = np.asarray(values)
    if array.ndim == 2 and array.shape[1] == 1:
        try:
            from sklearn.exceptions import DataConversionWarning as Conversion
        except ImportError:  # pragma: no cover
            Conversion = UserWarning  # noqa: N806
        warnings.warn(
            f"A column-vector {what} was passed when a 1d array was expected; it is raveled",
            Conversion,
            stacklevel=5,
        )
        array = array[:, 0]
    if array.ndim != 1:
        raise ValueError(f"{what} must be 1-dimensional, got shape {array.shape}")
    if array.dtype.kind == "O":
        missing = [i for i, v in enumerate(array) if v is None]
        if missing:
            raise ValueError(f"{what}: row {first_row + missing[0]} is null")
    return array


def classes_of(labels: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The classes of a first batch of labels: their distinct values, sorted; a batch of one
    class of {0, 1} or {-1, +1} is taken as that binary problem (``partial_fit``'s first
    batch need not hold both)."""
    try:
        seen = _two_or_fewer_values(labels)
        if seen is None:
            seen = np.unique(labels)
    except TypeError as err:
        raise ValueError(f"y mixes labels of types that cannot be ordered ({err})") from None
    if seen.dtype.kind == "f" and np.any(seen != np.round(seen)):
        value = seen[seen != np.round(seen)][0]
        raise ValueError(
            f"Unknown label type: continuous (y holds {value:g}); a classifier takes class "
            "labels (integers, strings, booleans), a regressor continuous targets"
        )
    if seen.dtype.kind in "biuf" and len(seen) == 1:
        if seen[0] in (0, 1):
            return np.array([0, 1]).astype(seen.dtype)
        if seen[0] == -1:
            return np.array([-1, 1]).astype(seen.dtype)
    if len(seen) == 0:
        raise ValueError("cannot fit on 0 examples: y is empty")
    if len(seen) < 2:
        only = seen.tolist()[0]  # a Python value, whatever the array's dtype (object too)
        raise ValueError(
            f"The number of classes has to be greater than one; got 1 class ({only!r}). "
            "partial_fit's first call may name them all: classes=[...]"
        )
    return seen


def _two_or_fewer_values(labels: npt.NDArray[Any]) -> npt.NDArray[Any] | None:
    """The distinct values of numeric ``labels`` (sorted) when there are one or two, found from
    their minimum and maximum; None otherwise. ``np.unique`` sorts a copy of the labels: on 10M
    labels that and its fresh memory took 0.05-0.25 s of every fit, 2-3 passes here."""
    if labels.dtype.kind not in "biuf" or len(labels) == 0:
        return None
    # With a NaN among them both extremes are NaN, equal to no label: np.unique decides.
    low, high = labels.min(), labels.max()
    n_low = np.count_nonzero(labels == low)
    if n_low == len(labels):
        return np.array([low], dtype=labels.dtype)
    if n_low + np.count_nonzero(labels == high) == len(labels):
        return np.array([low, high], dtype=labels.dtype)
    return None


def batches_of(frame: pl.LazyFrame, size: int) -> Iterator[pl.DataFrame]:
    """The rows of ``frame``'s query in batches of at most ``size`` rows: zero-copy slices of the
    frames the streaming engine produces. Asking it for batches of exactly ``size`` rows made
    it copy each batch together from its own pieces on the caller's thread (on a 10M-row
    parquet fit, a tenth of the learner's thread)."""
    for morsel in frame.collect_batches():
        for start in range(0, len(morsel), size):
            yield morsel.slice(start, size)


def check_named_columns(schema: pl.Schema, **named: Any) -> None:
    """Each of ``named`` (e.g. ``y="label"``) that is a column name must be a column of the
    frame: a ``ColumnNotFoundError`` naming the argument, the name and the columns otherwise."""
    for what, name in named.items():
        if isinstance(name, str) and name not in schema:
            raise pl.exceptions.ColumnNotFoundError(
                f"{what}={name!r} is not a column of the frame; its columns are {schema.names()}"
            )


# The columns read_vw puts before the features, with their types, and the columns of its output
# that are never features.
VW_LEADING = {"label": "Float64", "weight": "Float64", "base": "Float64", "tag": "String"}
VW_NOT_FEATURES = frozenset([*VW_LEADING, "namespace"])


def is_vw_frame(schema: pl.Schema) -> bool:
    """Whether a frame is :func:`polars_poly.read_vw`'s output (its label, base and tag
    columns; the weight column may have been dropped)."""
    return all(schema.get(n) == getattr(pl, d) for n, d in VW_LEADING.items() if n != "weight")


def is_numbers_dtype(dtype: pl.DataType) -> bool:
    """A struct of numbers (or booleans): a namespace of its fields' values, the k-th field the
    feature of index k, as ``to_sparse`` of the fields."""
    return isinstance(dtype, pl.Struct) and all(
        f.dtype.is_numeric() or f.dtype == pl.Boolean for f in dtype.fields
    )


def is_text_dtype(dtype: pl.DataType) -> bool:
    """Strings, the dtypes that are strings with a dictionary (Categorical, Enum), and lists or
    arrays of them (bags of tokens)."""
    inner = dtype.inner if isinstance(dtype, pl.List | pl.Array) else dtype
    return inner == pl.String or isinstance(inner, pl.Categorical | pl.Enum)


HASH_HINT = (
    "hash strings, categoricals and token lists into a sparse column with polars_poly.hash_features"
)
TEXT_HINT = (
    "string, categorical, enum and token-list columns are hashed as they are read; other "
    "columns become features with polars_poly.hash_features or polars_poly.to_sparse"
)


def frame_columns(
    schema: pl.Schema,
    features: str | Sequence[str] | None,
    exclude: set[str],
    text: bool = False,
    estimator: str | None = None,
) -> tuple[list[str], list[str]]:
    """(feature columns, the numeric ones among them) of a frame: ``features`` if given, else
    every sparse and numeric column (for an online learner, ``text``: also every string,
    categorical, enum and token-list column, which it hashes with its ``bits``, and every struct
    of numbers); not the target or weight columns in ``exclude``, nor the label, importance
    weight, base, tag and namespace columns of a Vowpal Wabbit file's frame. Each namespaced
    column (sparse, string, struct) is a namespace and the numeric columns together one more,
    ``"features"``, after them (as a Vowpal Wabbit file of click data keeps its counts in one
    namespace). Without ``text`` (the DoS classifier: one feature space, no ``features``) the
    choice is the sparse columns if any, else the numeric ones, and a column it leaves out is an
    error (its hint names ``estimator``)."""

    def namespaced(dtype: pl.DataType) -> bool:
        return is_sparse_dtype(dtype) or (
            text and (is_text_dtype(dtype) or is_numbers_dtype(dtype))
        )

    def numeric(dtype: pl.DataType) -> bool:
        return dtype.is_numeric() or dtype == pl.Boolean

    def kind(dtype: pl.DataType) -> str:
        if is_sparse_dtype(dtype):
            return "sparse"
        if numeric(dtype):
            return "numeric"
        return "struct" if isinstance(dtype, pl.Struct) else "string"

    hint = TEXT_HINT if text else HASH_HINT
    kinds_listed = "sparse, string" if text else "sparse"  # "... or numeric", "... nor numeric"
    # Only the online learners take ``features``; the DoS/PA classifiers read the frame whole.
    choose = (
        "pass features=[...] to choose the feature columns"
        if text
        else f"{estimator or 'this estimator'} takes no features=[...]: select the feature "
        "columns before passing the frame (frame.select([...]))"
    )
    if is_vw_frame(schema):
        exclude = exclude | VW_NOT_FEATURES
    if features is not None:
        names = [features] if isinstance(features, str) else list(features)
        missing = [n for n in names if n not in schema]
        if missing:
            raise ValueError(f"feature columns {missing} are not in the frame")
    else:
        candidates = [n for n, d in schema.items() if n not in exclude]
        names = [n for n in candidates if namespaced(schema[n]) or numeric(schema[n])]
        if not text and any(namespaced(schema[n]) for n in names):
            names = [n for n in names if namespaced(schema[n])]
        # A column the automatic choice leaves out would be silently ignored: refuse. A column
        # of no feature type (dates, nested lists) is a type error.
        left_out = {n: schema[n] for n in candidates if n not in names}
        if names and left_out:
            kinds = " and ".join(sorted({kind(schema[n]) for n in names}))
            wrong_type = not any(namespaced(d) or numeric(d) for d in left_out.values())
            error = ColumnTypeError if wrong_type else ValueError
            described = ", ".join(f"{n!r} ({d})" for n, d in left_out.items())
            raise error(
                f"the frame's {kinds} feature columns are {names}, but it also has {described}, "
                f"which would be ignored: {choose} ({hint})"
            )
    if not names:
        others = {n: d for n, d in schema.items() if n not in exclude}
        described = ", ".join(f"{n!r} ({d})" for n, d in others.items())
        raise (ColumnTypeError if others else ValueError)(
            f"the frame has no {kinds_listed} or numeric feature columns"
            + (f", only {described}" if others else "")
            + f" ({hint})"
        )
    wrong = {n: schema[n] for n in names if not (namespaced(schema[n]) or numeric(schema[n]))}
    if wrong:
        described = ", ".join(f"{n!r} ({d})" for n, d in wrong.items())
        raise ColumnTypeError(
            f"feature column(s) {described} are neither {kinds_listed} nor numeric ({hint})"
        )
    for name in names:
        # A name the Arrow C interface cannot carry (NUL ends a C string), or none at all.
        if "\x00" in name or not name:
            raise ValueError(
                f"feature column {name!r}: "
                + ("a NUL byte in a column name" if name else "an empty column name")
                + " is not supported; rename the column (frame.rename)"
            )
    numeric_names = [n for n in names if numeric(schema[n])]
    if numeric_names and DEFAULT_NAMESPACE in names and DEFAULT_NAMESPACE not in numeric_names:
        clash = kind(schema[DEFAULT_NAMESPACE])
        raise ValueError(
            f"the numeric feature columns {numeric_names} form one namespace, "
            f"{DEFAULT_NAMESPACE!r}, which is also the name of a {clash} feature column: "
            "rename that column"
        )
    return names, numeric_names


def engine_column(name: str, dtype: pl.DataType | None) -> pl.Expr:
    """Column ``name`` (of ``dtype``, when known) as the engine takes it: categorical and enum
    columns, and lists of them, as the strings they stand for. The engine would take them as
    they are, but a categorical crossing into it is rebuilt value by value: on 2M eat-rate rows
    of 12 categorical fields a fit took 2.08 s, against 1.01 s casting them first
    (``benches/suite/string_columns.py``)."""
    column = pl.col(name)
    if isinstance(dtype, pl.List | pl.Array) and isinstance(dtype.inner, pl.Categorical | pl.Enum):
        return column.cast(pl.List(pl.String))
    if isinstance(dtype, pl.Categorical | pl.Enum):
        return column.cast(pl.String)
    return column


def as_categories(
    frame: Any, schema: pl.Schema, names: list[str], exclude: set[str]
) -> tuple[Any, list[str]]:
    """``frame`` (a DataFrame or LazyFrame, of ``schema``) with its columns ``names`` made
    strings, so that integer or boolean codes are hashed as categories, one namespace each:
    code ``17`` of column ``A`` becomes ``"A=17"`` (:func:`code_strings`); and the columns that
    were codes (string, categorical and enum columns are left as they are). A name that is no
    column, is the target or the weight (``exclude``), or whose type is no code (floats, lists,
    dates) is an error naming it."""
    if not names:
        return frame, []
    for name in names:
        check_named_columns(schema, categorical=name)
        if name in exclude:
            raise ValueError(f"categorical={name!r} is the target or weight column")
        dtype = schema[name]
        if not (dtype.is_integer() or dtype == pl.Boolean or is_text_dtype(dtype)):
            raise ColumnTypeError(
                f"categorical column {name!r} has dtype {dtype}: categories are integer, "
                "boolean, string, categorical or enum codes (a float's decimal form is no "
                "stable category: cast it to an integer first)"
            )
    codes = [n for n in names if not is_text_dtype(schema[n])]
    return (frame.with_columns(code_strings(n) for n in codes) if codes else frame), codes


def code_strings(name: str) -> pl.Expr:
    """Column ``name``'s codes as the strings ``"<name>=<code>"``. Not the bare digits: Vowpal
    Wabbit's hashing (the engine's) maps an all-digit string to its value plus the namespace's
    seed, which puts codes 0..n on n consecutive slots, and the cross of two such columns then
    collides (eat-rate's fields as codes: test logloss 0.570 as bare digits, 0.3265 as
    ``"A=17"``, 0.3276 as the original strings;
    ``python -m benches.suite.string_columns --mode codes``)."""
    return pl.concat_str(pl.lit(f"{name}="), pl.col(name).cast(pl.String)).alias(name)


def categorical_columns(schema: pl.Schema, names: list[str]) -> dict[str, str]:
    """Those of the feature columns ``names`` that are categorical or enum columns (``"value"``)
    or lists or arrays of them (``"list"``): what a fitted model remembers, with the codes it
    was told are categories (``"code"``, :func:`as_categories`), to read them as it was fitted
    in its scoring expressions (:func:`categorical_exprs`)."""
    kinds: dict[str, str] = {}
    for name in names:
        dtype = schema[name]
        inner = dtype.inner if isinstance(dtype, pl.List | pl.Array) else None
        if isinstance(inner if inner is not None else dtype, pl.Categorical | pl.Enum):
            kinds[name] = "value" if inner is None else "list"
    return kinds


def categorical_exprs(kinds: dict[str, str]) -> dict[str, pl.Expr]:
    """The expressions that read the remembered columns (:func:`categorical_columns`) as the
    model was fitted on them: categoricals as strings, codes as :func:`code_strings`."""
    dtypes = {"value": pl.Categorical(), "list": pl.List(pl.Categorical())}
    return {
        name: code_strings(name) if kind == "code" else engine_column(name, dtypes[kind])
        for name, kind in kinds.items()
    }


def feature_exprs(
    names: list[str],
    numeric: list[str],
    schema: pl.Schema | None = None,
    given: dict[str, pl.Expr] | None = None,
) -> list[pl.Expr]:
    """The namespace columns of a frame's feature columns ``names``: each namespaced column,
    categoricals read as strings when the frame's ``schema`` is given (:func:`engine_column`),
    or as the expression ``given`` for it, then the ``numeric`` ones as one struct column, which
    the model reads as it reads their ``to_sparse`` column (with no sparse column built in
    between)."""
    given = given or {}
    exprs = [
        given[n] if n in given else engine_column(n, schema.get(n) if schema else None)
        for n in names
        if n not in numeric
    ]
    if numeric:
        # A column of nulls alone has dtype Null: its values are missing numbers (no feature).
        columns = [
            pl.col(n).cast(pl.Float64) if schema is not None and schema.get(n) == pl.Null else n
            for n in numeric
        ]
        exprs.append(pl.struct(*columns).alias(DEFAULT_NAMESPACE))
    return exprs


def namespace_columns(frame: pl.DataFrame, names: list[str], numeric: list[str]) -> list[pl.Series]:
    """The namespace columns of an in-memory frame's feature columns (see
    :func:`feature_exprs`); the engine names a bad number's row from the batch's first row.

    Each is made by :func:`select_alone` from the columns its expression reads."""
    exprs = feature_exprs(names, numeric, frame.schema)
    return [select_alone(frame, expr.meta.root_names(), expr) for expr in exprs]


def select_alone(frame: pl.DataFrame, columns: list[str], expr: pl.Expr) -> pl.Series:
    """``expr`` over the ``columns`` of an in-memory frame, queried as a frame of their own:
    Polars first aligns the chunks of every column of a frame it queries, and a column added
    beside those read from parquet (one chunk against one per row group) made it copy them
    all, 1-3 s of a 10M-row eat-rate fit with one count column."""
    return pl.DataFrame([frame.get_column(n) for n in columns]).select(expr).to_series()


def namespace_names(names: list[str], numeric: list[str]) -> list[str]:
    """The namespaces of the feature columns ``names`` (see :func:`frame_columns`)."""
    return [n for n in names if n not in numeric] + ([DEFAULT_NAMESPACE] if numeric else [])


def _kind(value: Any) -> str:
    return "NaN" if np.isnan(value) else "infinity"


def check_shape(shape: tuple[int, ...], min_rows: int = 1) -> None:
    if shape[0] < min_rows:
        raise ValueError(f"0 sample(s) (shape={shape}) while a minimum of 1 is required.")
    if shape[1] == 0:
        raise ValueError(f"0 feature(s) (shape={shape}) while a minimum of 1 is required.")


def numeric_objects(dense: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """An object array as floats (as scikit-learn's ``check_array`` reads it); a ``TypeError``
    when an element is not a number. Other arrays are returned as they are."""
    if dense.dtype != object:
        return dense
    try:
        return dense.astype(np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"expected numeric features, got an object array: {error}") from None


def matrix_series(X: Any, min_rows: int = 1) -> tuple[pl.Series, int | None]:
    """scipy / numpy input (or a sparse Series) as one sparse Series and its width (None for a
    Series, whose width is its indices'). Non-finite values are errors naming the row. Training
    needs a row (``min_rows=1``, as scikit-learn); scoring 0 rows gives 0 scores."""
    # Imported here: sparse imports Polars, which the command line's VW runs never need.
    from polars_poly.sparse import check_sparse, from_numpy, from_scipy, is_scipy_sparse

    if isinstance(X, pl.Series):
        check_sparse(X)
        return X, None
    if is_scipy_sparse(X):
        matrix = checked_scipy(X, min_rows)
        return from_scipy(matrix, name=DEFAULT_NAMESPACE), int(matrix.shape[1])
    dense = checked_dense(X, min_rows)
    return from_numpy(dense, name=DEFAULT_NAMESPACE), int(dense.shape[1])


def matrix_rows(X: Any, min_rows: int = 1) -> tuple[pl.Series | npt.NDArray[Any], int | None]:
    """:func:`matrix_series`, except that a dense matrix stays one: C-contiguous float32 (when
    given so) or float64, for an engine that reads dense rows in place (the classifiers: a
    digit stream of 784 dense values a row cost 3-4x its learning to make sparse)."""
    from polars_poly.sparse import is_scipy_sparse  # here: as in matrix_series

    if isinstance(X, pl.Series) or is_scipy_sparse(X):
        return matrix_series(X, min_rows)
    # The engine checks the values as it reads them (the error names the row and column).
    dense = checked_dense(X, min_rows, values=False)
    kind = np.float32 if dense.dtype == np.float32 else np.float64
    return np.ascontiguousarray(dense, dtype=kind), int(dense.shape[1])


def checked_scipy(X: Any, min_rows: int) -> Any:
    """A scipy sparse matrix as CSR, checked as scikit-learn checks it: its shape, and real,
    finite values (errors name the row)."""
    matrix = X.tocsr()
    if np.iscomplexobj(matrix.data):
        raise ValueError("Complex data not supported")
    check_shape(matrix.shape, min_rows)
    if matrix.data.size and not np.isfinite(matrix.data).all():
        bad = int(np.flatnonzero(~np.isfinite(matrix.data))[0])
        row = int(np.searchsorted(matrix.indptr, bad, side="right")) - 1
        raise ValueError(f"Input X contains {_kind(matrix.data[bad])} in row {row}")
    return matrix


def checked_dense(X: Any, min_rows: int, values: bool = True) -> npt.NDArray[Any]:
    """``X`` as a 2-D numeric numpy array (not copied when it is one), checked as
    scikit-learn checks it: its shape, dtype and (with ``values``) finite values (errors name
    the row)."""
    dense = numeric_objects(np.asarray(X))
    if np.iscomplexobj(dense):
        raise ValueError("Complex data not supported")
    if dense.ndim == 1:
        raise ValueError(
            "Expected a 2D array, got a 1D array instead. Reshape your data either using "
            "array.reshape(-1, 1) if your data has a single feature or "
            "array.reshape(1, -1) if it contains a single sample."
        )
    if dense.ndim != 2:
        raise ValueError(f"expected a 2-D array, got {dense.ndim} dimension(s)")
    if dense.dtype.kind not in "biuf":
        raise TypeError(f"expected numeric features, got dtype {dense.dtype}")
    check_shape(dense.shape, min_rows)
    if values and dense.dtype.kind == "f" and not np.isfinite(dense).all():
        row, col = np.argwhere(~np.isfinite(dense))[0]
        raise ValueError(f"Input X contains {_kind(dense[row, col])} at row {row}, column {col}")
    return dense


# Scoring a frame: at most this many rows an engine call, cut at the ends of chunks of at least
# SCORE_CHUNK_ROWS rows on average (pieces of 64k rows scored 5-8% slower than one call of 4M
# rows, of 1M rows as fast).
SCORE_ROWS = 1 << 20
SCORE_CHUNK_ROWS = 1 << 14


def batch_ranges(
    features: list[pl.Series], n_rows: int, size: int, shortest: int | None = None
) -> Iterator[tuple[int, int]]:
    """(start, length) of batches of at most ``size`` rows that never cross the end of a chunk
    of a feature column: the engine reads a column of one chunk in place and copies one of
    several into one (a frame read from parquet has a chunk per row group; with batches across
    them a 10M-row eat-rate fit copied half its 2 GB of columns). Columns whose chunks average
    fewer than ``shortest`` rows (default a quarter batch) are copied as before (cutting at each
    would make many small calls). Learning is example by example, so the cuts change nothing
    else."""
    shortest = size // 4 if shortest is None else shortest
    long_chunked = [s for s in features if s.n_chunks() * shortest <= n_rows]
    ends = sorted({end for s in long_chunked for end in chunk_ends(s)} | {n_rows})
    start = 0
    for end in ends:
        while start < end:
            length = min(size, end - start)
            yield start, length
            start += length


def chunk_ends(series: pl.Series) -> Iterator[int]:
    """Where each chunk of ``series`` ends (its row count for one chunk)."""
    end = 0
    for chunk in series.get_chunks():
        end += len(chunk)
        yield end


def scored_in_pieces(
    columns: list[pl.Series], n_rows: int, score: Callable[[list[pl.Series]], npt.NDArray[Any]]
) -> npt.NDArray[Any]:
    """``score`` of the ``n_rows`` rows of ``columns``, in pieces cut at the columns' chunk ends
    (:func:`batch_ranges`, at most ``SCORE_ROWS`` rows each), joined in order along the first
    axis: the engine reads a column of one chunk in place and would copy one of several whole."""
    ranges = list(batch_ranges(columns, n_rows, SCORE_ROWS, SCORE_CHUNK_ROWS))
    if len(ranges) <= 1:
        return score(columns)
    return np.concatenate([score([c.slice(start, n) for c in columns]) for start, n in ranges])
