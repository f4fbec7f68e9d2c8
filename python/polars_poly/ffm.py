"""``FFM``: a field-aware factorization machine learned beside an online model's weights, as one
parameter object (``SGDClassifier(ffm=pp.FFM(k=4))``).

Each feature value owns a vector of ``k`` numbers for every other field (feature column); a pair
of values of two fields scores the dot product of each one's vector for the other's field. A
pair never seen in training is still scored, from what each value showed beside others: the
model of fwumious_wabbit and of the best shallow models of click prediction, learned online
with the same hashing, in the same pass as the weights. See docs/learners.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from polars_poly._estimator import BaseEstimator
from polars_poly._params import (
    at_least,
    check_options,
    column_names,
    documented,
    engine_options,
    from_engine,
    one_of,
    option,
)


@documented({})
class FFM(BaseEstimator):  # type: ignore[misc]
    """A field-aware factorization machine over an online model's feature columns.

    The model scores the weights' sum plus, for every pair of features ``i``, ``j`` of the
    factorized columns, ``<v(i, field of j), v(j, field of i)> x_i x_j`` (pairs within one
    column too; a one-hot column has none). Each latent value takes its own AdaGrad step from
    the loss's derivative: ``v -= learning_rate * g / G**power_t`` after ``G += g**2``, ``G``
    starting at ``initial_accumulator``. Vectors start uniform in
    ``±init_scale / sqrt(k)``, drawn from ``random_state``. A feature's vectors lie in row
    ``hash(its weight slot)`` of a table of ``2**bits`` rows, each ``2 * F * k`` floats for
    ``F`` factorized columns (the vectors, then their AdaGrad sums); over crossed pairs alone,
    each vector its own row of ``2 * k`` floats, hashed from the value and its partner column.

    [parameters]

    Examples
    --------
    Whether an animal eats a food depends on the animal's diet and the food's kind, which no
    column says; the pairs in the test set were never seen in training:

    >>> import numpy as np, polars as pl, polars_poly as pp
    >>> rng = np.random.default_rng(0)
    >>> animal, food = rng.integers(0, 200, 100_000), rng.integers(0, 200, 100_000)
    >>> eats = np.where(animal % 3 == food % 3, 1, -1)
    >>> unseen = (animal * 7 + food) % 10 == 0
    >>> frame = pl.DataFrame({"animal": animal, "food": food}).cast(pl.String)
    >>> frame = frame.with_columns(eats=pl.Series(eats))
    >>> train, test = frame.filter(~pl.Series(unseen)), frame.filter(pl.Series(unseen))
    >>> model = pp.SGDClassifier(loss="logistic", ffm=pp.FFM(k=4)).fit(train, "eats")
    >>> round(model.score(test, "eats"), 2)
    1.0
    >>> crossed = pp.SGDClassifier(loss="logistic", interactions=[("animal", "food")])
    >>> crossed.fit(train, "eats").score(test, "eats") < 0.8  # a cross knows only seen pairs
    True
    """

    k: int = option(
        4, "Latent dimensions per feature and field.", engine=True, accepted="an integer in 1..=128"
    )
    fields: str | Sequence[str] | None = option(
        None,
        "The feature columns factorized (default: every feature column of the model).",
        check=column_names,
    )
    pairs: str = option(
        "auto",
        "Which pairs of the factorized columns have a term: ``'all'`` (every pair, and the pairs\n"
        "within a column), ``'crosses'`` (only pairs of columns within a cross the model\n"
        "computes: the ``interactions`` given, or the crosses apple's field screening finds,\n"
        "each from when it joins), or ``'auto'``: ``'crosses'`` when the model crosses columns,\n"
        "else ``'all'``. Over the crosses a feature reads a few vectors where ``'all'`` reads\n"
        "one per factorized column, and no pair without a cross adds noise (docs/learners.md).",
        check=one_of("auto", "all", "crosses"),
    )
    bits: int = option(
        18,
        "The latent table has ``2**bits`` rows, one per feature value (values whose weight\n"
        "slots hash to one row share it).",
        engine=True,
        accepted="an integer in 1..=30",
    )
    learning_rate: float = option(
        0.1, "AdaGrad's rate of the latent values.", engine=True, accepted="finite and > 0"
    )
    power_t: float = option(
        0.5,
        "The exponent of AdaGrad's sums in the step (0.5: AdaGrad).",
        engine=True,
        accepted="in [0, 1]",
    )
    initial_accumulator: float = option(
        1.0,
        "Where AdaGrad's sums start (the first steps are at most ``learning_rate``).",
        engine=True,
        accepted="finite and > 0",
    )
    init_scale: float = option(
        0.1,
        "Latent values start uniform in ``±init_scale / sqrt(k)``.",
        engine=True,
        accepted="finite and >= 0",
    )
    random_state: int = option(
        0, "The seed of the starting values and rows.", engine="seed", check=at_least(0)
    )

    def _engine(self, namespaces: list[str], crossing: bool) -> dict[str, Any]:
        """The engine's options for a model of feature columns ``namespaces`` (a column's
        field is its position, from 1) that crosses columns or not (``crossing``)."""
        check_options(self)
        if self.pairs == "crosses" and not crossing:
            raise ValueError(
                "ffm pairs='crosses' factorizes the pairs of columns the model crosses, and this "
                "model crosses none: give interactions, or expansion='apple' with its field "
                "crosses (or pairs='all')"
            )
        pairs = ("crosses" if crossing else "all") if self.pairs == "auto" else self.pairs
        if self.fields is None:
            chosen = list(namespaces)
        elif isinstance(self.fields, str):
            chosen = [self.fields]
        else:
            chosen = list(self.fields)
        for name in chosen:
            if name not in namespaces:
                raise ValueError(
                    f"ffm fields: {name!r} is not a feature column; the feature columns are "
                    f"{namespaces}"
                )
        fields = [1 + namespaces.index(n) for n in chosen]
        return {**engine_options(self), "fields": fields, "pairs": pairs}

    @classmethod
    def _from_engine(cls, options: dict[str, Any], namespaces: list[str], crossing: bool) -> FFM:
        """The parameter object of a loaded model's ``ffm`` options (of a model crossing
        columns or not): the pairs ``'auto'`` when they are what ``'auto'`` chooses."""
        fields = [namespaces[field - 1] for field in options["fields"]]
        every = fields == list(namespaces)
        pairs = options.get("pairs", "all")
        pairs = "auto" if pairs == ("crosses" if crossing else "all") else pairs
        return cls(**from_engine(cls, options), fields=None if every else fields, pairs=pairs)


__all__ = ["FFM"]
