"""Scoring (arrays and native Polars expressions) and the linear weights (``coef_``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from polars_poly._estimator import (
    RegressorMixin,
    not_fitted,
)
from polars_poly._input import (
    categorical_exprs,
    feature_exprs,
    scored_in_pieces,
)
from polars_poly._internal import Learner
from polars_poly._lazy import np, pl
from polars_poly._plugin import call_plugin
from polars_poly.learner._training import _Training
from polars_poly.multiclass import OneAgainstAll
from polars_poly.ranking_race import RankingRace

if TYPE_CHECKING:
    import numpy.typing as npt


class _Scoring(_Training):
    """Scoring (arrays and native Polars expressions) and the linear weights (``coef_``)."""

    def _check_fitted(self) -> Learner | OneAgainstAll:
        """The fitted engine model (of a ranking race that ``partial_fit`` keeps, its leader)."""
        learner: Learner | OneAgainstAll | RankingRace | None = getattr(self, "_learner", None)
        if learner is None:
            raise not_fitted(self)
        return learner.leader if isinstance(learner, RankingRace) else learner

    def _scores(self, X: Any, output: str = "score") -> npt.NDArray[np.float64]:
        """Each row's score, or with ``output="probability"`` its logistic link, computed by
        the engine as the scoring expressions compute it (one column per class for a
        multiclass model)."""
        learner = self._check_fitted()
        if isinstance(X, str | os.PathLike):
            X = self._vw_file(X, scoring=True)
        if isinstance(X, pl.LazyFrame):
            column = X.select(self._score_expr(None, output).alias("score")).collect(
                engine="streaming"
            )
            return np.asarray(column.get_column("score").to_numpy(), dtype=np.float64)
        data = self._data(X, None, None, fitting=False, scoring=True)

        def scores(features: list[pl.Series]) -> npt.NDArray[np.float64]:
            if isinstance(learner, OneAgainstAll):
                return learner.scores(features, output)
            return np.asarray(learner.predict(features, output).to_numpy(), dtype=np.float64)

        return scored_in_pieces(data.features, len(data), scores)

    def _score_expr(self, features: Sequence[str | pl.Expr] | None, output: str) -> pl.Expr:
        learner = self._check_fitted()
        if isinstance(learner, OneAgainstAll):
            return pl.concat_arr(self._head_exprs(features, output))
        return self._head_exprs(features, output)[0]

    def _head_exprs(self, features: Sequence[str | pl.Expr] | None, output: str) -> list[pl.Expr]:
        """The scoring expression of each engine learner (one; one per class for a multiclass
        model)."""
        learner = self._check_fitted()
        fitted = getattr(self, "feature_columns_", None)
        # ``pl.col("a")`` is the column "a", read as its name is (numeric columns into their
        # namespace), so that both forms score alike.
        features = [_plain_name(f) for f in features] if features else features
        named = features and all(isinstance(f, str) for f in features)
        if not features or (fitted is not None and named and sorted(features) == sorted(fitted)):
            # The fitted columns (by name, in any order: by position they would feed each column
            # to another's namespace), numeric ones made into their namespace.
            read_as = categorical_exprs(getattr(self, "_categorical_columns", {}))
            exprs = feature_exprs(*self._fitted_columns(), given=read_as)
        else:
            numeric_columns = getattr(self, "_numeric_columns", []) if fitted else []
            numeric = [f for f in features if isinstance(f, str) and f in numeric_columns]
            if numeric:
                # A numeric column alone is no namespace: the fitted ones are read together.
                raise ValueError(
                    f"numeric feature column(s) {numeric} are read together with the model's "
                    f"other fitted columns: pass all of {fitted} (by name or pl.col, in any "
                    "order) or none"
                )
            exprs = [pl.col(f) if isinstance(f, str) else f for f in features]
        if len(exprs) != len(self.namespaces_):
            raise ValueError(
                f"the model was trained on {len(self.namespaces_)} feature column(s), got "
                f"{len(exprs)}"
            )
        heads = learner.heads if isinstance(learner, OneAgainstAll) else [learner]
        carried, kwargs = self._carried()
        return [
            call_plugin(
                "model_predict",
                [*exprs, *carried],
                {"handle": head.handle, "output": output, "head": k, **kwargs},
            )
            for k, head in enumerate(heads)
        ]

    def _linear_weights(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(coefficients, intercepts), one row per engine learner, of a linear model on
        numbered features."""
        learner = self._check_fitted()
        columns = getattr(self, "feature_columns_", None)
        numbered = columns is None or len(self._numeric_columns) == len(columns)
        linear = self.expansion == "linear" and not self.interactions
        if not (linear and numbered):
            raise AttributeError(
                "coef_ describes a linear model on numbered features (a matrix or numeric "
                f"columns); this model uses expansion={self.expansion!r}"
                + (f", interactions={self.interactions!r}" if self.interactions else "")
                + ("" if numbered else f" on hashed sparse columns {columns}")
                + " (see monomials() for apple)"
            )
        n = len(columns) if columns is not None else int(self.n_features_in_)
        heads = learner.heads if isinstance(learner, OneAgainstAll) else [learner]
        found = [head.linear_coefficients(0, n, bool(self.constant)) for head in heads]
        if any(f is None for f in found):
            raise AttributeError(
                f"coef_: two of the {n} features (or the constant) share a weight slot of "
                f"2**{self.bits_}; train with more bits"
            )
        coef = np.array([f[0] for f in found if f is not None], dtype=np.float64)
        intercept = np.array([f[1] for f in found if f is not None], dtype=np.float64)
        return coef, intercept

    @property
    def coef_(self) -> npt.NDArray[np.float64]:
        """The weights of a linear model (``expansion="linear"``) on a matrix or numeric
        columns: the score is ``X @ coef_.T + intercept_`` (before clipping to the label
        range). Shape ``(n_features,)`` for a regressor, ``(1, n_features)`` for a binary
        classifier, ``(n_classes, n_features)`` for a multiclass one, as scikit-learn's.
        Other models have no ``coef_`` (``AttributeError`` saying why)."""
        coef, _ = self._linear_weights()
        return coef[0] if isinstance(self, RegressorMixin) else coef

    @property
    def intercept_(self) -> npt.NDArray[np.float64]:
        """The constant feature's weight (0 with ``constant=False``), one per row of
        ``coef_``."""
        return self._linear_weights()[1]


def _plain_name(feature: str | pl.Expr) -> str | pl.Expr:
    """The column name an expression that only refers to one column stands for (``pl.col("a")``,
    not aliased, not a regex or a selection of several); anything else as it is."""
    if isinstance(feature, pl.Expr) and feature.meta.is_column():
        return feature.meta.output_name()
    return feature
