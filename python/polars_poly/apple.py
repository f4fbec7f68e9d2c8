"""``Apple``: the settings of apple, the adaptive polynomial expansion, as one parameter object.

``SGDRegressor(expansion=pp.Apple(alpha=0.5, ranking="ssm"))`` trains with apple;
``expansion="apple"`` means ``Apple()``. Being a scikit-learn style parameter object, its
settings are reachable as ``expansion__alpha`` in ``get_params``, ``set_params`` and
``GridSearchCV``.
"""

from __future__ import annotations

from typing import Any, Literal

from polars_poly import _internal
from polars_poly._estimator import BaseEstimator
from polars_poly._params import (
    at_least,
    check_options,
    documented,
    engine_options,
    from_engine,
    nested_settings,
    option,
)
from polars_poly.field_apple import FieldApple
from polars_poly.ranking_race import FIRST

_NAMES = {
    "rankings": ", ".join(repr(n) for n in _internal.RANKINGS),
    "schedules": ", ".join(repr(n) for n in _internal.SCHEDULES),
    "identities": ", ".join(repr(n) for n in _internal.IDENTITIES),
}


_RANKING_WANTED = "one of 'auto', " + _NAMES["rankings"]


@documented(_NAMES)
class Apple(BaseEstimator):  # type: ignore[misc]
    """apple: grow the monomial set during training from the monomials with the largest weights.

    Each expansion adds ``s = floor(s̄ ** alpha)`` parents (``s̄`` the average number of nonzero
    features per example, with the constant); every feature the model uses is a base feature or
    a parent times a base feature (Agarwal et al. 2014; docs/algorithms.md §4). On two or more
    feature columns it also grows crosses of whole columns, judged on the residual
    (``field_crosses``, :class:`FieldApple`; docs/algorithms.md §7). Ranges and names are
    checked when the estimator is fitted.

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
        1.0, "Parents per expansion: ``floor(s̄ ** alpha)``.", engine=True, accepted="in (0, 2]"
    )
    ranking: str = option(
        "auto",
        "How candidate parents are ranked: ``'auto'`` or one of {rankings}. ``auto``: ``fit``\n"
        "trains ``typical`` and ``max_magnitude`` side by side from the first expansion that may\n"
        "add parents and keeps the model with the lower progressive loss (``apple_ranking_``\n"
        "names it): each wins data sets the other loses (the benchmarks page), at twice the\n"
        "work after the fork (in parallel threads). A third model stops growing monomials there\n"
        "(the linear model; field crosses still grow) and is kept (``apple_ranking_ ==\n"
        "'linear'``) only when its progressive loss is 10% below the better ranking's:\n"
        "expansions that hurt are dropped. A race learned in batches (a long stream) is decided\n"
        "2**17 examples after the fork, keeping the linear model unless the monomials lowered\n"
        "the loss since the fork by 0.5% (they cost the rest of the stream otherwise).\n"
        "``partial_fit`` races from call to call (the leader\n"
        "predicts; saving or pickling keeps the leader alone); distributed training ranks by\n"
        "``typical``. ``typical``: weight magnitude times the monomial's\n"
        "root mean square over the recent examples in which it occurs (the typical size of its\n"
        "contribution where it contributes), powers of sparse monomials last (on binary or\n"
        "tf-idf rows ``x**2`` is nearly ``x``); ``magnitude`` (an earlier default): the same\n"
        "over all recent examples, absent counted as 0, which prefers frequent monomials;\n"
        "``max_magnitude``: times its largest ``|x|`` (Vowpal Wabbit's ``--stage_poly``);\n"
        "``ssm``: correlation with the residual; ``per_child``, ``distinct``: see\n"
        "notes/apple_experiments.md.",
        engine=True,
        check=lambda v: None if v == "auto" or v in _internal.RANKINGS else _RANKING_WANTED,
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
    epochs: int = option(
        6,
        "Epochs of the epochs schedule (the paper's 6), 1..=1000.",
        engine=True,
        check=at_least(1, 1000),
    )
    doubling_first: int = option(
        1000,
        "First expansion point of the doubling schedule, in examples.",
        engine=True,
        check=at_least(1),
    )
    max_degree: int = option(
        6, "Highest degree of a generated monomial, 1..=8.", engine=True, check=at_least(1, 8)
    )
    identity: str = option(
        "canonical",
        "One of {identities}: one weight per monomial, each emitted once per example, or\n"
        "Vowpal Wabbit's ``--stage_poly`` rule, where a product is keyed by the path that\n"
        "reached it (``x_a·x_b`` from ``a`` and from ``b`` are two features), for comparison.",
        engine=True,
    )
    catch_up: int = option(
        2048,
        "The monomials an expansion adds take the update steps they missed on the last\n"
        "``catch_up`` learned examples before it (kept from ``catch_up`` examples before each\n"
        "expansion; at most 2**22 features: 48 MiB), each predicted by the model as it is at\n"
        "the expansion; 0: none (the paper's apple). The kept examples are not saved: a model\n"
        "loaded just before an expansion catches up on the examples it learned since.",
        engine=True,
        check=at_least(0),
    )

    field_crosses: FieldApple | str | None = option(
        "auto",
        "Crosses of whole feature columns grown beside the monomials (see\n"
        ":class:`FieldApple`): ``'auto'`` screens them with ``FieldApple()``'s settings when\n"
        "the model has two or more feature columns (each categorical field hashed into its own\n"
        "sparse column, or Vowpal Wabbit namespaces), a :class:`FieldApple` with its settings\n"
        "(two or more columns needed), ``None`` never.",
        check=lambda v: (
            None
            if v is None or v == "auto" or isinstance(v, FieldApple)
            else "'auto', None or a polars_poly.FieldApple"
        ),
    )

    def set_params(self, **params: Any) -> Any:
        """scikit-learn's ``set_params``. A nested setting of ``field_crosses="auto"``
        (``field_crosses__max_fields=2``, as ``GridSearchCV`` sets
        ``clf__expansion__field_crosses__max_fields``) first makes ``field_crosses`` the
        ``FieldApple()`` that ``'auto'`` screens with: a string has no settings. The crosses
        are then asked for, so the model needs two or more feature columns."""
        return super().set_params(
            **nested_settings(self, params, "field_crosses", "auto", FieldApple)
        )

    def _crosses(self, n_columns: int) -> FieldApple | None:
        """The field crosses in force for a model of ``n_columns`` feature columns."""
        check_options(self)
        if isinstance(self.field_crosses, FieldApple):
            if n_columns < 2:
                raise ValueError(
                    "field_crosses needs two or more feature columns (sparse columns, one per "
                    f"field); this model has {n_columns}. Use field_crosses='auto' or None"
                )
            return self.field_crosses
        return FieldApple() if self.field_crosses == "auto" and n_columns >= 2 else None

    def _engine(self, n_columns: int = 1) -> dict[str, Any]:
        """The engine's feature-set options for a model of ``n_columns`` feature columns."""
        crosses = self._crosses(n_columns)
        apple = engine_options(self)
        if self.ranking == "auto":
            # The race starts with typical and forks max_magnitude (polars_poly.ranking_race).
            apple["ranking"] = FIRST
        if crosses is None:
            return {"kind": "apple", **apple}
        fields = {k: v for k, v in crosses._engine().items() if k != "kind"}
        return {"kind": "apple_fields", "apple": apple, "fields": fields}

    @classmethod
    def _from_engine(
        cls, features: dict[str, Any], n_columns: int, race: dict[str, Any] | None = None
    ) -> Apple | Literal["apple"]:
        """The ``expansion`` of a loaded model's feature set of ``n_columns`` feature columns
        (``'apple'`` for the defaults); ``race``: the estimator's own ``ranking`` and
        ``max_degree`` (``'auto'`` where the engine stores the race's winner), when the file
        says."""
        crosses: FieldApple | str | None = "auto"
        if features["kind"] == "apple_fields":
            fields = FieldApple(**from_engine(FieldApple, features["fields"]))
            apple = cls(**from_engine(cls, features["apple"]))
            crosses = "auto" if fields._is_default() else fields
        else:
            apple = cls(**from_engine(cls, features))
            # Two or more columns without crosses: they were turned off.
            crosses = None if n_columns >= 2 else "auto"
        apple.field_crosses = crosses
        if race is not None:
            apple.ranking = race["ranking"]
            apple.max_degree = race["max_degree"]
        return "apple" if apple._is_default() else apple

    def _is_default(self) -> bool:
        return self.field_crosses == "auto" and engine_options(self) == engine_options(Apple())


__all__ = ["Apple"]
