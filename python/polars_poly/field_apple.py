"""``FieldApple``: apple at the level of fields — crosses of whole feature columns found during
training, as one parameter object.

``SGDClassifier(expansion=pp.FieldApple())`` starts linear on its feature columns (each
categorical field hashed into its own sparse column, or the namespaces of a Vowpal Wabbit file)
and screens every cross of two columns on the model's residual; a cross that surely lowers the
loss joins the model and is then computed on the fly, like ``interactions``. It finds crosses
whose columns say nothing alone (Vowpal Wabbit's ``-q`` without knowing the pair); see
docs/algorithms.md §7.
"""

from __future__ import annotations

from typing import Any

from polars_poly._estimator import BaseEstimator
from polars_poly._params import at_least, check_options, documented, engine_options, option


@documented({})
class FieldApple(BaseEstimator):  # type: ignore[misc]
    """Field-level apple: grow crosses of feature columns, judged on the residual.

    Two judges learn the model's residual from every cross of two feature columns: a *shadow*
    factorization machine (a vector of 4 numbers per feature value, shared by all crosses: it
    sees crosses of low rank from few rows) and a hashed cell per value pair of each cross (the
    pair's shrunk mean residual: it sees crosses whose every value pair has its own effect).
    Each cross's progressive gain under each judge (what it adds to the fit) decides: every
    ``check_every`` examples the cross whose mean gain is most significant joins, if its z-score
    is at least ``z`` (on fewer than 5,000 gain samples, ``z * sqrt(5000 / samples)``, and none
    before 1,000); crosses whose gain stays negative are paused, leaving the budget to the
    others. A cross in the model is a column to the judges too (its values are the
    combinations of its columns' values), so once ``a*b`` has joined, ``a*b*c`` is screened for
    every other column ``c`` (up to ``max_fields`` columns in a cross); triples of columns of
    few values (at most 20,000 value triples) are also probed whole, for a cross of three
    columns none of whose pairs says anything. Screening costs about
    ``budget`` units per learned feature (a unit: a shadow vector update, or four crosses
    judged). Needs two or more sparse feature columns.

    [parameters]

    Examples
    --------
    >>> import numpy as np, polars as pl, polars_poly as pp
    >>> rng = np.random.default_rng(0)
    >>> n = 60_000
    >>> animal, food, other = (rng.integers(0, 100, n) for _ in range(3))
    >>> fields = pl.DataFrame({"animal": animal, "food": food, "other": other}).cast(pl.String)
    >>> frame = fields.select(  # each categorical field hashed into its own sparse column
    ...     pp.hash_features(c, bits=20).alias(c) for c in fields.columns
    ... ).with_columns(y=pl.Series(np.where(animal % 2 == food % 2, 1, -1)))
    >>> model = pp.SGDClassifier(loss="logistic", expansion=pp.FieldApple()).fit(frame, "y")
    >>> model.crosses()["cross"].to_list()  # neither column says anything alone
    ['animal*food']
    >>> round(model.score(frame, "y"), 2)
    1.0
    """

    max_crosses: int = option(8, "Most crosses added (>= 1).", engine=True, check=at_least(1))
    budget: float = option(
        0.5,
        "Screening units per learned feature (a unit is a shadow vector update or four\n"
        "crosses judged): screening costs about this fraction of linear training.",
        engine=True,
        accepted="a number > 0",
    )
    check_every: int = option(
        10_000, "Learned examples between two checks (>= 1).", engine=True, check=at_least(1)
    )
    z: float = option(
        5.0,
        "Least z-score (mean gain over its standard error) for a cross to join (on fewer than\n"
        "5,000 gain samples, z * sqrt(5000 / samples)).",
        engine=True,
        accepted="a number > 0",
    )
    shadow_bits: int = option(
        20,
        "The shared shadow table has ``2**shadow_bits`` vectors of 4 numbers (10..=26); the\n"
        "value-pair cells number ``2**(shadow_bits + 1)`` (at most ``2**25``, 16 bytes each).",
        engine=True,
        check=at_least(10, 26),
    )

    catch_up: int = option(
        131_072,
        "A cross that joins takes the update steps it missed on the last ``catch_up`` learned\n"
        "examples (kept while a join is in sight: the first 30 checks, and while a candidate has\n"
        "half the z-score to join; at most 2**22 features: 48 MiB), predicted by the model as it\n"
        "is when it joins; 0 keeps none.",
        engine=True,
        check=at_least(0),
    )

    max_fields: int = option(
        3,
        "Most feature columns in a cross (2..=8): with 3, a cross that has joined is screened\n"
        "crossed with each other column (``a*b*c``), judged on the residual as pairs are, and\n"
        "triples of columns of few values are probed whole (a cross no pair of it announces).",
        engine=True,
        check=at_least(2, 8),
    )

    def _engine(self) -> dict[str, Any]:
        """The engine's feature-set options."""
        check_options(self)
        return {"kind": "field_apple", **engine_options(self)}

    def _is_default(self) -> bool:
        return engine_options(self) == engine_options(FieldApple())


__all__ = ["FieldApple"]
