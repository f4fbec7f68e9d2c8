"""What the model learned, by name: apple's monomials, field crosses and their screening,
field scales."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polars_poly._input import (
    DEFAULT_NAMESPACE,
)
from polars_poly._internal import Learner
from polars_poly._lazy import pl
from polars_poly.learner._data import (
    _has_field_crosses,
)
from polars_poly.learner._scoring import _Scoring
from polars_poly.multiclass import OneAgainstAll


class _Inspection(_Scoring):
    """What the model learned, by name."""

    def _feature_name(self, seeds: list[int], names: dict[int, str] | None = None) -> Any:
        """A function from a base feature's hash to its readable name: the column name for
        numeric frame columns, the given name of its index (``names``), ``x<i>`` for a matrix
        or one sparse column, ``<column>[<i>]`` with several sparse columns."""
        numeric = getattr(self, "_numeric_columns", [])
        numeric_k = self.namespaces_.index(DEFAULT_NAMESPACE) if numeric else None

        def name(feature_hash: int) -> str:
            k, index = min(
                ((k, (feature_hash - seed) % 2**64) for k, seed in enumerate(seeds)),
                key=lambda pair: pair[1],
            )
            if k == numeric_k and index < len(numeric):
                return str(numeric[index])
            if names is not None and index in names:
                return names[index]
            if len(seeds) == 1:
                return f"x{index}"
            return f"{self.namespaces_[k]}[{index}]"

        return name

    def _by_class(self, table: Callable[[Learner], pl.DataFrame]) -> pl.DataFrame:
        """``table`` of the model; of a multiclass model, each class's, stacked in class order
        after a ``class`` column."""
        learner = self._check_fitted()
        if not isinstance(learner, OneAgainstAll):
            return table(learner)
        classes = pl.Series("class", self.classes_)
        return pl.concat(
            [
                table(head)
                .with_columns(pl.lit(classes[k], dtype=classes.dtype).alias("class"))
                .select("class", pl.exclude("class"))
                for k, head in enumerate(learner.heads)
            ]
        )

    def _field_apple(self, method: str) -> tuple[Learner | OneAgainstAll, list[str]]:
        """The fitted engine model and its feature-column names, for a model that grows field
        crosses (a FieldApple, or apple with field crosses)."""
        learner = self._check_fitted()
        if not _has_field_crosses(learner):
            raise ValueError(
                f"{method}() describes the crosses of feature columns a FieldApple (or apple on "
                f"two or more feature columns) grows; this model uses "
                f"expansion={self.expansion!r} on {len(self.namespaces_)} feature column(s)"
            )
        return learner, list(self.namespaces_)

    def ffm_pairs(self, X: Any) -> pl.DataFrame:
        """What each pair of the factorized columns carries (a model with ``ffm``), largest
        first: the mean over the rows of ``X`` of the magnitude of the pair's term in the score.

        Columns: ``pair`` (``"animal*food"``; ``"text*text"`` the pairs of features within a
        column, none in a one-hot column), ``fields`` (the two column names) and ``mean_abs``;
        with a ``class`` column first for a multiclass model. Under ``FFM(pairs='crosses')``,
        only the pairs of columns crossed so far.
        """
        learner = self._check_fitted()
        head = learner.heads[0] if isinstance(learner, OneAgainstAll) else learner
        settings = head.options().get("ffm")
        if settings is None:
            raise ValueError("ffm_pairs() describes a model with a field-aware factorization (ffm)")
        names = [self.namespaces_[field - 1] for field in settings["fields"]]
        data = self._data(X, None, None, fitting=False, scoring=True)
        return self._by_class(lambda one: self._ffm_pairs(one, data.features, names))

    def _ffm_pairs(self, learner: Learner, features: Any, names: list[str]) -> pl.DataFrame:
        terms = learner.ffm_pair_terms(features)
        n = len(names)
        rows = [
            (f"{names[a]}*{names[b]}", [names[a], names[b]], terms[a * n + b])
            for a, b in learner.ffm_term_pairs()
        ]
        frame = pl.DataFrame(
            rows,
            schema={"pair": pl.String, "fields": pl.List(pl.String), "mean_abs": pl.Float64},
            orient="row",
        )
        return frame.sort("mean_abs", descending=True, maintain_order=True)

    def crosses(self) -> pl.DataFrame:
        """The crosses of feature columns a :class:`FieldApple` expansion added, in order.

        Columns: ``cross`` (``"animal*food"``; ``"animal*food*hour"`` for a cross of three
        columns, see ``FieldApple.max_fields``), ``fields`` (the column names) and ``added_at``
        (the number of learned examples when the cross joined).
        """
        _, names = self._field_apple("crosses")
        return self._by_class(lambda learner: self._crosses(learner, names))

    def _crosses(self, learner: Learner, names: list[str]) -> pl.DataFrame:
        rows = [
            ("*".join(names[k] for k in fields), [names[k] for k in fields], added)
            for fields, added in learner.field_crosses()
        ]
        return pl.DataFrame(
            rows,
            schema={"cross": pl.String, "fields": pl.List(pl.String), "added_at": pl.Int64},
            orient="row",
        )

    def screening(self) -> pl.DataFrame:
        """The crosses a :class:`FieldApple` expansion is still judging, most promising first.

        Columns: ``cross``, ``fields``, ``z`` (how surely the cross lowers the loss: the larger
        of its two judges' z-scores; it joins at a check when it is the largest and at least
        ``expansion.z``, or ``expansion.z * sqrt(5000 / samples)`` on fewer than 5,000
        samples), ``z_factors`` (the shared factorization's judgement, for crosses of low
        rank), ``z_cells`` (its value-pair cells' judgement, for crosses whose every pair of
        values has its own effect), ``samples`` (gain samples since the last cross joined or
        the candidate rejoined the race) and ``active`` (false while the candidate is
        paused: its z-score was not above zero after 5,000 samples; paused candidates rejoin
        when a cross joins or after 30 checks without one). Empty once ``max_crosses`` are
        in.
        """
        _, names = self._field_apple("screening")
        return self._by_class(lambda learner: self._screening(learner, names))

    def _screening(self, learner: Learner, names: list[str]) -> pl.DataFrame:
        rows = [
            (
                "*".join(names[k] for k in fields),
                [names[k] for k in fields],
                max(zf, zc),
                zf,
                zc,
                samples,
                active,
            )
            for fields, zf, zc, samples, active in learner.field_candidates()
        ]
        frame = pl.DataFrame(
            rows,
            schema={
                "cross": pl.String,
                "fields": pl.List(pl.String),
                "z": pl.Float64,
                "z_factors": pl.Float64,
                "z_cells": pl.Float64,
                "samples": pl.Int64,
                "active": pl.Boolean,
            },
            orient="row",
        )
        return frame.sort("z", descending=True, maintain_order=True)

    def monomials(self, names: pl.DataFrame | dict[int, str] | None = None) -> pl.DataFrame:
        """The monomials apple chose to expand (its parents), in the order they were added.

        Columns: ``monomial`` (readable name built from the input feature names, e.g.
        ``age*hours^2``), ``degree``, ``expansion`` (1 for the first expansion, ...),
        ``weight`` (the model's weight on the monomial itself) and ``factors`` (the factor
        names, with repeats for powers). Every feature the model uses is a base feature or a
        parent times a base feature.

        ``names`` names the features of sparse columns by index: a frame of ``index`` and
        ``name`` (as :func:`polars_poly.hashed_feature_names` gives for hashed columns, e.g.
        ``city=Paris*age``) or a dict; unnamed indices stay ``x<i>``.
        """
        self._check_fitted()
        if self._apple() is None:
            raise ValueError(
                f"monomials() describes apple's feature set; this model uses "
                f"expansion={self.expansion!r}"
            )
        if isinstance(names, pl.DataFrame):
            missing = {"index", "name"} - set(names.columns)
            if missing:
                raise ValueError(f"names must have columns index and name; missing {missing}")
            names = dict(zip(names["index"].to_list(), names["name"].to_list(), strict=True))
        return self._by_class(lambda learner: self._monomials(learner, names))

    def _monomials(self, learner: Learner, names: dict[int, str] | None) -> pl.DataFrame:
        seeds = [learner.namespace_seed(k) for k in range(len(self.namespaces_))]
        name = self._feature_name(seeds, names)
        rows = []
        for factors, expansion, weight in learner.apple_parents():
            factor_names = [name(h) for h in factors]
            parts: list[str] = []
            for factor in dict.fromkeys(factor_names):
                power = factor_names.count(factor)
                parts.append(factor if power == 1 else f"{factor}^{power}")
            rows.append(("*".join(parts), len(factors), expansion, weight, factor_names))
        return pl.DataFrame(
            rows,
            schema={
                "monomial": pl.String,
                "degree": pl.Int32,
                "expansion": pl.Int32,
                "weight": pl.Float64,
                "factors": pl.List(pl.String),
            },
            orient="row",
        )

    @property
    def field_scales_(self) -> pl.DataFrame:
        """The learned scale of each field of a model with field scales (see ``field_scales``):
        columns ``field`` (a feature column's name, a cross ``"A*B"``, ``"degree 2"``, apple's
        ``"monomials"``) and ``scale`` (its weights' multiplier in the
        score; 1 for a field not yet seen); with a ``class`` column first for a multiclass
        model. A model without field scales has no ``field_scales_`` (``AttributeError``)."""
        learner = self._check_fitted()
        heads = learner.heads if isinstance(learner, OneAgainstAll) else [learner]
        if heads[0].field_scales() is None:
            raise AttributeError(
                f"field_scales_: this model learns no field scales "
                f"(field_scales={self.field_scales!r} on {len(self.namespaces_)} feature "
                "column(s); 'auto' turns them on with two or more)"
            )
        return self._by_class(self._field_scale_table)

    def _field_scale_table(self, learner: Learner) -> pl.DataFrame:
        scales = learner.field_scales() or []
        names = self._field_names(learner)
        rows = [(name, float(scales[f]) if f < len(scales) else 1.0) for f, name in names]
        return pl.DataFrame(rows, schema={"field": pl.String, "scale": pl.Float64}, orient="row")

    def _field_names(self, learner: Learner) -> list[tuple[int, str]]:
        """(field id, name) of the model's fields, in id order (ids: src/learner/features.rs)."""
        options = learner.options()
        features, names = options["features"], list(options["namespaces"])
        kind = str(features["kind"])
        monomials = 1 + max(len(names), 3)
        if kind == "interactions" and int(features["degree"]) >= 2:
            fields = [(d, f"degree {d}") for d in range(1, int(features["degree"]) + 1)]
        else:
            fields = [(1 + k, name) for k, name in enumerate(names)]
        if kind in ("apple", "apple_fields"):
            fields.append((monomials, "monomials"))
        crosses: list[list[int]]
        if kind in ("field_apple", "apple_fields"):
            crosses = [list(fields) for fields, _ in learner.field_crosses()]
        else:
            crosses = [[int(k) for k in cross] for cross in features.get("namespace_crosses", [])]
        fields += [
            (monomials + 1 + p, "*".join(names[k] for k in cross))
            for p, cross in enumerate(crosses)
        ]
        return fields
