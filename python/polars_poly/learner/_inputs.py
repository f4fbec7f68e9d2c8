"""What the estimators read: frames, matrices, VW frames and files, labels and weights, as
batches of namespaces."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

from polars_poly._input import (
    DEFAULT_NAMESPACE,
    as_categories,
    as_float_array,
    as_polars,
    categorical_columns,
    check_named_columns,
    frame_columns,
    is_vw_frame,
    matrix_series,
    namespace_columns,
    namespace_names,
)
from polars_poly._lazy import np, pa, pl
from polars_poly.learner._data import (
    _Data,
)
from polars_poly.learner._options import _Options
from polars_poly.readers import scan_vw

if TYPE_CHECKING:
    import numpy.typing as npt


def _check_opens(path: str | os.PathLike[str]) -> None:
    """A Vowpal Wabbit file's path checked before a query is built (a scan opens its file only
    when the query runs, after resolving its columns): a missing, unreadable or directory path
    is the ``OSError`` naming it. A FIFO or a device, which can be read once, is left to the
    scan."""
    mode = os.stat(path).st_mode  # a missing path: FileNotFoundError naming it
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        open(path, "rb").close()  # noqa: SIM115 - opened only to be refused early


class _Inputs(_Options):
    """What the estimators read."""

    def _vw_file(self, path: str | os.PathLike[str], *, scoring: bool) -> pl.LazyFrame:
        """A Vowpal Wabbit file given by its path, as a :func:`scan_vw` frame. To fit: a column
        per namespace of the file. To score: the model's namespaces (one the file lacks is
        empty, one the model lacks is left out: it has no weights), read with the reader options
        the command line trained it with (``--ngram``, ``--ignore``...)."""
        if not scoring:
            return scan_vw(path, namespaces="auto")
        stored = getattr(self, "_vw_reader", None) or {}
        namespaces = list(self.namespaces_)
        _check_opens(path)
        frame = scan_vw(path, namespaces=namespaces, other_namespaces="drop", **stored)
        fitted = getattr(self, "feature_columns_", None) or []
        schema = frame.collect_schema()
        missing = [name for name in fitted if name not in schema]
        if missing:
            raise ValueError(
                f"{os.fspath(path)!r} is read as a Vowpal Wabbit file (a path given as X is one), "
                f"whose columns are its namespaces; it lacks the feature column(s) {missing} "
                f"the {type(self).__name__} was fitted with ({fitted}): score a frame with "
                "those columns"
            )
        return frame

    def _vw_defaults(self, X: Any, y: Any, sample_weight: Any) -> tuple[Any, Any]:
        """``y`` and ``sample_weight`` of a Vowpal Wabbit file's frame (``read_vw`` /
        ``scan_vw``) default to its ``label`` and ``weight`` (importance) columns, as ``vw``
        learns it; its ``base`` (initial predictions) must be 0."""
        if not isinstance(X, pl.DataFrame | pl.LazyFrame):
            return y, sample_weight
        schema = X.collect_schema()
        if not is_vw_frame(schema):
            return y, sample_weight
        based = X.lazy().select(pl.col("base").ne(0).arg_true().first().alias("row"))
        row = based.collect(engine="streaming")["row"][0]
        if row is not None:
            value = X.lazy().select(pl.col("base").gather(row)).collect()["base"][0]
            raise ValueError(
                f"row {row} has base (initial prediction) {value:g}: Vowpal Wabbit's base is "
                "not supported; drop the column to ignore it"
            )
        if sample_weight is None and "weight" in schema:
            sample_weight = "weight"
        return ("label" if y is None else y), sample_weight

    def _frame_columns(self, schema: pl.Schema, exclude: set[str]) -> tuple[list[str], list[str]]:
        return frame_columns(schema, self.features, exclude, text=True)

    def _matrix_features(self, X: Any, min_rows: int) -> list[pl.Series]:
        """scipy / numpy input as one sparse Series, checking the width against the fit."""
        series, width = matrix_series(X, min_rows)
        self._width = width  # None for a sparse Series: read at any width
        if width is None:
            return [series]
        fitted = getattr(self, "n_features_in_", None)
        if fitted is not None and width != fitted:
            raise ValueError(
                f"X has {width} features, but {type(self).__name__} is expecting {fitted} "
                "features as input"
            )
        return [series]

    def _frame_data(
        self,
        frame: pl.DataFrame,
        y: Any,
        sample_weight: Any,
        names: list[str],
        numeric: list[str],
        first_row: int,
    ) -> _Data:
        features = namespace_columns(frame, names, numeric)
        labels = None
        if y is not None:
            labels = self._labels(frame.get_column(y) if isinstance(y, str) else y, first_row)
        weights = None
        if sample_weight is not None:
            if isinstance(sample_weight, str):
                sample_weight = frame.get_column(sample_weight)
            weights = as_float_array(sample_weight, "sample_weight", first_row)
        return _Data(features, labels, weights)

    def _data(
        self,
        X: Any,
        y: Any,
        sample_weight: Any,
        fitting: bool,
        scoring: bool = False,
        first_row: int = 0,
    ) -> _Data:
        """In-memory inputs (everything but LazyFrames) as a batch (of 0 rows only when
        ``scoring``); rows in label errors are counted from ``first_row``."""
        if isinstance(X, pa.Table | pa.RecordBatch):
            X = pl.from_arrow(X)
        X = as_polars(X)
        if isinstance(X, pl.DataFrame):
            check_named_columns(X.schema, y=y, sample_weight=sample_weight)
            exclude = {c for c in (y, sample_weight) if isinstance(c, str)}
            X, codes = as_categories(X, X.schema, self._categorical_names(), exclude)
            if fitting:
                names, numeric = self._frame_columns(X.schema, exclude)
                self._remember_columns(names, numeric, X.schema, codes)
            else:
                names, numeric = self._fitted_columns()
                for name in names:
                    check_named_columns(X.schema, feature_column=name)
            return self._frame_data(X, y, sample_weight, names, numeric, first_row)
        if isinstance(y, str) or isinstance(sample_weight, str):
            raise TypeError("y and sample_weight may be column names only with a Polars frame")
        if self._categorical_names():
            raise ValueError(
                f"categorical={self.categorical!r} names columns of a Polars frame, not of a "
                f"{type(X).__name__}"
            )
        features = self._matrix_features(X, min_rows=0 if scoring else 1)
        if fitting:
            self._remember_columns(None, [])
        labels = None if y is None else self._labels(y, first_row)
        weights = None
        if sample_weight is not None:
            weights = as_float_array(sample_weight, "sample_weight", first_row)
        return _Data(features, labels, weights)

    def _remember_columns(
        self,
        names: list[str] | None,
        numeric: list[str],
        schema: pl.Schema | None = None,
        codes: list[str] | None = None,
    ) -> None:
        declared = self._categorical_names()
        if names is not None and any(n not in names for n in declared):
            left_out = [n for n in declared if n not in names]
            raise ValueError(f"categorical columns {left_out} are not among the feature columns")
        self.feature_columns_ = names
        self._numeric_columns = numeric
        # Scoring expressions of the fitted columns read these as they were fitted: a
        # categorical column crossing into the engine as it is costs twice the query
        # (engine_column), and codes declared categorical would be numbers.
        found = categorical_columns(schema, names) if schema is not None and names else {}
        self._categorical_columns = dict.fromkeys(codes or [], "code") | found
        self._count_features_in(self._width if names is None else None)

    def _categorical_names(self) -> list[str]:
        """The columns of the ``categorical`` option."""
        given = self.categorical
        return [] if given is None else [given] if isinstance(given, str) else list(given)

    def _count_features_in(self, width: int | None) -> None:
        """``n_features_in_`` as scikit-learn counts them: a matrix's ``width``, or a frame's
        numeric columns (one feature each). A sparse column has no count: it is read as a
        matrix of any width."""
        names = self.feature_columns_
        if names is not None and len(self._numeric_columns) == len(names):
            width = len(names)
        if width is not None:
            self.n_features_in_ = width
        elif hasattr(self, "n_features_in_"):
            del self.n_features_in_

    def _fitted_columns(self) -> tuple[list[str], list[str]]:
        names = getattr(self, "feature_columns_", None)
        if names is None:
            raise TypeError(
                f"this {type(self).__name__} was fitted on a matrix; predict on a matrix too"
            )
        return list(names), list(self._numeric_columns)

    def _namespaces(self) -> list[str]:
        """The fitted columns' namespaces (a matrix's one: its columns numbered)."""
        names = getattr(self, "feature_columns_", None)
        if names is None:
            return [DEFAULT_NAMESPACE]
        return namespace_names(*self._fitted_columns())

    def _labels(self, y: Any, first_row: int = 0) -> npt.NDArray[np.float64]:
        """The engine's labels of ``y`` (rows in errors counted from ``first_row``)."""
        return as_float_array(y, "y", first_row)
