"""The ``.poly`` expression namespace: ``pl.col("x").poly.<function>(...)``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from polars_poly.polynomial import Degree

# The namespace is registered once the package and Polars are both imported; its functions
# import their modules (the extension, NumPy, SciPy) when first called, so that the import
# stays light.


@pl.api.register_expr_namespace("poly")
class PolyNamespace:
    """Sparse-feature functions on an expression (see the module functions for details).

    Examples
    --------
    >>> df = pl.DataFrame({"a": [3.0, 0.0], "b": [0.0, 2.0]})
    >>> out = df.select(pl.col("a").poly.to_sparse("b").poly.expand(n_features=2, degree=2))
    >>> [[(e["index"], e["value"]) for e in row] for row in out["a"].to_list()]
    [[(0, 1.0), (1, 3.0), (3, 9.0)], [(0, 1.0), (2, 2.0), (5, 4.0)]]
    """

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def to_sparse(self, *others: str | pl.Expr) -> pl.Expr:
        """This column and ``others`` (numeric) as one sparse column; see :func:`to_sparse`."""
        from polars_poly import sparse

        return sparse.to_sparse(self._expr, *others)

    def hash_features(self, *others: str | pl.Expr, bits: int = 18, seed: int = 0) -> pl.Expr:
        """This column and ``others`` hashed into one sparse column; see :func:`hash_features`."""
        from polars_poly import sparse

        return sparse.hash_features(self._expr, *others, bits=bits, seed=seed)

    def expand(
        self,
        *,
        n_features: int | None = None,
        degree: Degree = 2,
        interaction_only: bool = False,
        include_bias: bool = True,
        bits: int | None = None,
        seed: int = 0,
    ) -> pl.Expr:
        """Polynomial expansion of this sparse column; see :func:`polars_poly.expand`."""
        from polars_poly import polynomial

        return polynomial.expand(
            self._expr,
            n_features=n_features,
            degree=degree,
            interaction_only=interaction_only,
            include_bias=include_bias,
            bits=bits,
            seed=seed,
        )

    def predict(self, model: Any, *others: str | pl.Expr) -> pl.Expr:
        """``model.predict_expr`` on this sparse column (and ``others``, one per namespace) for
        a fitted :class:`~polars_poly.SGDRegressor` or :class:`~polars_poly.SGDClassifier`."""
        expr: pl.Expr = model.predict_expr(self._expr, *others)
        return expr

    def predict_proba(self, model: Any, *others: str | pl.Expr) -> pl.Expr:
        """``model.predict_proba_expr`` on this sparse column (and ``others``): P(label = the
        larger class) of a fitted :class:`~polars_poly.SGDClassifier` with the logistic
        loss."""
        expr: pl.Expr = model.predict_proba_expr(self._expr, *others)
        return expr
