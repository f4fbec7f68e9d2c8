"""``Apple``: the settings of apple, the adaptive polynomial expansion, as one parameter object.

``SGDRegressor(expansion=pp.Apple(alpha=0.5, ranking="ssm"))`` trains with apple;
``expansion="apple"`` means ``Apple()``. Being a scikit-learn style parameter object, its
settings are reachable as ``expansion__alpha`` in ``get_params``, ``set_params`` and
``GridSearchCV``.
"""

from __future__ import annotations

from typing import Any

from polars_poly import _internal
from polars_poly._estimator import BaseEstimator
from polars_poly._params import documented, engine_options, option

_NAMES = {
    "rankings": ", ".join(repr(n) for n in _internal.RANKINGS),
    "schedules": ", ".join(repr(n) for n in _internal.SCHEDULES),
    "identities": ", ".join(repr(n) for n in _internal.IDENTITIES),
}


@documented(_NAMES)
class Apple(BaseEstimator):  # type: ignore[misc]
    """apple: grow the monomial set during training from the monomials with the largest weights.

    Each expansion adds ``s = floor(s̄ ** alpha)`` parents (``s̄`` the average number of nonzero
    features per example, with the constant); every feature the model uses is a base feature or
    a parent times a base feature (Agarwal et al. 2014; docs/algorithms.md §4). Ranges and names
    are checked when the estimator is fitted.

    [parameters]

    Examples
    --------
    >>> import polars_poly as pp
    >>> model = pp.SGDRegressor(expansion=pp.Apple(alpha=0.5, ranking="ssm"))
    >>> model.get_params()["expansion__alpha"]  # nested parameters, as GridSearchCV sees them
    0.5
    >>> model.set_params(expansion__alpha=1.0).expansion.alpha
    1.0
    """

    alpha: float = option(
        1.0, "Parents per expansion: ``floor(s̄ ** alpha)``, in (0, 2].", engine=True
    )
    ranking: str = option(
        "magnitude",
        "How candidate parents are ranked, one of {rankings}: weight magnitude times the\n"
        "monomial's root mean square over recent examples (the typical size of its\n"
        "contribution), weight magnitude times its largest ``|x|`` (Vowpal Wabbit's\n"
        "``--stage_poly``), or correlation with the residual.",
        engine=True,
    )
    fallback: bool = option(
        False,
        "The last parent of each expansion is the smallest-degree candidate (risk\n"
        "consistency: every monomial is eventually reached).",
        engine=True,
    )
    schedule: str = option(
        "auto",
        "When to expand, one of {schedules}: ``epochs`` cuts the run (all passes) into\n"
        "``epochs`` parts and expands at each boundary (needs the run length, which in-memory\n"
        "``fit`` knows and a LazyFrame ``fit`` counts first); ``doubling`` expands after\n"
        "``doubling_first``, 2x, 4x, ... examples (Vowpal Wabbit's schedule for streams);\n"
        "``auto``: epochs when the run length is known, else doubling.",
        engine=True,
    )
    epochs: int = option(6, "Epochs of the epochs schedule (the paper's 6), 1..=1000.", engine=True)
    doubling_first: int = option(
        1000, "First expansion point of the doubling schedule, in examples.", engine=True
    )
    max_degree: int = option(6, "Highest degree of a generated monomial, 1..=8.", engine=True)
    identity: str = option(
        "canonical",
        "One of {identities}: one weight per monomial, each emitted once per example, or\n"
        "Vowpal Wabbit's ``--stage_poly`` rule, where a product is keyed by the path that\n"
        "reached it (``x_a·x_b`` from ``a`` and from ``b`` are two features), for comparison.",
        engine=True,
    )

    def _engine(self) -> dict[str, Any]:
        """The engine's feature-set options."""
        return {"kind": "apple", **engine_options(self)}

    def _is_default(self) -> bool:
        return engine_options(self) == engine_options(Apple())


__all__ = ["Apple"]
