"""``PolynomialExpander``: a scikit-learn transformer over the sparse expansion kernel."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
import scipy.sparse as sp

from polars_poly._estimator import BaseEstimator, TransformerMixin, not_fitted
from polars_poly._input import checked_dense, checked_scipy
from polars_poly.polynomial import Degree, expand_csr, feature_name, output_width


class PolynomialExpander(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    """Polynomial and interaction features, like ``sklearn.preprocessing.PolynomialFeatures``
    but computed sparsely in Rust (output always a scipy ``csr_array``).

    Parameters
    ----------
    degree : int or (min, max)
        Maximal degree, or the range of degrees, as in scikit-learn.
    interaction_only : bool
        Only products of distinct features (no powers).
    include_bias : bool
        Prepend the constant column.
    bits : int or None
        Hash the monomials into ``2**bits`` columns instead of the exact layout.
    seed : int
        Seed of the monomial hash (only with ``bits``).

    Accepts scipy sparse matrices, dense arrays and Polars DataFrames of numeric columns.

    Examples
    --------
    >>> expander = PolynomialExpander(2, include_bias=False)
    >>> expander.fit_transform(np.array([[1.0, 2.0]])).toarray().tolist()
    [[1.0, 2.0, 1.0, 2.0, 4.0]]
    >>> expander.get_feature_names_out().tolist()
    ['x0', 'x1', 'x0^2', 'x0 x1', 'x1^2']
    """

    def __init__(
        self,
        degree: Degree = 2,
        *,
        interaction_only: bool = False,
        include_bias: bool = True,
        bits: int | None = None,
        seed: int = 0,
    ) -> None:
        self.degree = degree
        self.interaction_only = interaction_only
        self.include_bias = include_bias
        self.bits = bits
        self.seed = seed

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _as_matrix(self, X: Any) -> sp.csr_array | npt.NDArray[Any]:
        """``X`` as a CSR or dense matrix, checked as scikit-learn checks it (shape, numeric,
        real and finite values, a row at least)."""
        if isinstance(X, pl.DataFrame):
            X = X.to_numpy()
        elif hasattr(X, "columns") and hasattr(X, "to_numpy"):  # pandas
            X = X.to_numpy()
        if sp.issparse(X):
            return checked_scipy(X, min_rows=1)
        dense = np.asarray(X)
        if np.iscomplexobj(dense):
            raise ValueError("Complex data not supported")
        return checked_dense(dense, min_rows=1)

    def fit(self, X: Any, y: Any = None) -> PolynomialExpander:
        """Learns the input width (and names, from a DataFrame); validates the options."""
        matrix = self._as_matrix(X)
        self.n_features_in_ = int(matrix.shape[1])
        columns = getattr(X, "columns", None)
        if columns is not None and all(isinstance(c, str) for c in columns):
            self.feature_names_in_ = np.asarray(list(columns), dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.n_output_features_ = output_width(
            self.n_features_in_,
            self.degree,
            interaction_only=self.interaction_only,
            include_bias=self.include_bias,
            bits=self.bits,
        )
        return self

    def transform(self, X: Any) -> sp.csr_array:
        """The expanded features of ``X`` as a ``csr_array``."""
        if not hasattr(self, "n_features_in_"):
            raise not_fitted(self)
        matrix = self._as_matrix(X)
        if matrix.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {matrix.shape[-1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        return expand_csr(
            matrix,
            self.degree,
            interaction_only=self.interaction_only,
            include_bias=self.include_bias,
            bits=self.bits,
            seed=self.seed,
        )

    def get_feature_names_out(self, input_features: Any = None) -> npt.NDArray[np.object_]:
        """Output names in scikit-learn's format (``"x0 x3^2"``). Not available when hashed."""
        if not hasattr(self, "n_features_in_"):
            raise not_fitted(self)
        if self.bits is not None:
            raise ValueError("hashed columns have no unique names (bits is set)")
        names = self._input_names(input_features)
        return np.asarray(
            [
                feature_name(
                    column,
                    self.n_features_in_,
                    self.degree,
                    interaction_only=self.interaction_only,
                    include_bias=self.include_bias,
                    input_features=names,
                )
                for column in range(self.n_output_features_)
            ],
            dtype=object,
        )

    def _input_names(self, input_features: Any) -> list[str]:
        if input_features is None:
            if hasattr(self, "feature_names_in_"):
                return [str(n) for n in self.feature_names_in_]
            return [f"x{i}" for i in range(self.n_features_in_)]
        names = [str(n) for n in input_features]
        if len(names) != self.n_features_in_:
            raise ValueError(
                f"input_features has {len(names)} names, expected {self.n_features_in_}"
            )
        return names
