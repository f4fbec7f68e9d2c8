"""The estimators' options, declared once (see ``polars_poly._params``), and their checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from polars_poly._estimator import (
    BaseEstimator,
    FeatureNamesIn,
)
from polars_poly._params import (
    at_least,
    between,
    check_options,
    column_names,
    documented,
    engine_options,
    from_engine,
    nested_settings,
    open_interval,
    option,
)
from polars_poly._persist import (
    Persistent,
)
from polars_poly.apple import Apple
from polars_poly.ffm import FFM
from polars_poly.field_apple import FieldApple
from polars_poly.learner._data import (
    _DEGREE,
    _NAMES,
    _POLYNOMIAL,
    Expansion,
    _FitState,
    _name_crosses,
)

# A growing table's first size: Vowpal Wabbit's default table (4 MiB, in the cache); its
# largest by default, 256 MiB: eat-rate's million value pairs need it.
GROWING_FROM_BITS = 18
MAX_BITS = 24


@documented(_NAMES)
class _Options(_FitState, FeatureNamesIn, Persistent, BaseEstimator):  # type: ignore[misc]
    """The options of the two estimators, declared once here (see ``polars_poly._params``)."""

    _model_attribute = "_learner"

    loss: str = option(
        "squared",
        "The loss, one of {losses} (``quantile`` uses ``quantile_tau``).",
        engine=True,
    )
    expansion: Expansion = option(
        "linear",
        "Features learned on, generated per example: the inputs (``linear``); plus all\n"
        "products x_i·x_j, i <= j (``quadratic``); plus all x_i·x_j·x_l, i <= j <= l\n"
        "(``cubic``); or apple's adaptive polynomial expansion (an :class:`Apple`, whose\n"
        "settings are ``expansion__alpha`` etc.; ``'apple'`` means ``Apple()``), see\n"
        ":meth:`monomials`; or crosses of feature columns found during training (a\n"
        ":class:`FieldApple`), see :meth:`crosses`.",
    )
    interactions: Sequence[tuple[str, ...]] | None = option(
        None,
        "Crosses of feature columns (namespaces), each a tuple of two or more column names. A\n"
        "cross of k columns learns a weight for every product of k features, one from each\n"
        "column in turn: ``('a', 'b')`` is Vowpal Wabbit's ``-q ab``, ``('a', 'b', 'c')`` its\n"
        "``--cubic abc`` / ``--interactions abc``, and so on for any k, with its slots. A\n"
        "column repeated in a row takes its features as combinations with repetition:\n"
        "``('a', 'a')`` is every x_i·x_j of ``a`` with i <= j, ``('a', 'a', 'a')`` every\n"
        "x_i·x_j·x_l with i <= j <= l. As in Vowpal Wabbit, crosses of the same columns in\n"
        "another order are one (the first in the order of the columns' positions is kept), and\n"
        "a cross repeating a column beside others is put in that order (``('a', 'b', 'a')`` is\n"
        "``('a', 'a', 'b')``), as a loaded model reports it. A cross of k columns of n\n"
        "features each has up to n**k features per example.",
    )
    ffm: FFM | None = option(
        None,
        "A field-aware factorization machine learned beside the weights (an :class:`FFM`,\n"
        "whose settings are ``ffm__k`` etc.): a vector per feature value and other column,\n"
        "so that pairs of values never seen together are scored from what each showed beside\n"
        "others. It is saved, pickled, scored in expressions and averaged on Dask with the\n"
        "model; the command line's ``--ffm_k`` / ``--ffm_field`` give it.",
    )
    bits: int | None = option(
        None,
        "The weight table has ``2**bits`` entries (Vowpal Wabbit's ``-b``). ``None`` (the\n"
        "default): it starts at ``2**18`` and doubles, as often as the features seen need, up\n"
        "to ``2**max_bits``; the model predicts the same across a growth, and features that\n"
        "shared a weight get one each (``bits_`` is the size reached).",
        check=at_least(1, 32, optional=True),
    )
    max_bits: int = option(
        MAX_BITS,
        "The largest table a growing one (``bits=None``) reaches: ``2**max_bits`` entries of\n"
        "16 bytes (4 with ``adaptive`` and ``normalized`` off), 256 MiB at 24, per class\n"
        "with more than two classes. Ignored when ``bits`` is given.",
        check=at_least(1, 32),
    )
    eta0: float = option(
        0.5,
        "Initial learning rate (Vowpal Wabbit's ``-l``); the rate decays with ``power_t``\n"
        "and ``initial_t`` (``--power_t``, ``--initial_t``).",
        engine=True,
        accepted="finite and > 0",
    )
    power_t: float = option(
        0.5, "Exponent of the learning-rate decay.", engine=True, accepted="finite and >= 0"
    )
    initial_t: float = option(
        0.0, "Initial time of the learning-rate decay.", engine=True, accepted="finite and >= 0"
    )
    initial_weight: float = option(
        0.0,
        "The weight every slot of the table starts at, the constant's too (Vowpal Wabbit's\n"
        "``--initial_weight``); the adaptive and normalizer state starts at 0 as always.",
        engine=True,
        accepted="finite",
    )
    l1: float = option(
        0.0,
        "L1 regularization (Vowpal Wabbit's lazy scheme).",
        engine=True,
        accepted="finite and >= 0",
    )
    l2: float = option(
        0.0,
        "L2 regularization (Vowpal Wabbit's lazy scheme).",
        engine=True,
        accepted="finite and >= 0",
    )
    adaptive: bool = option(True, "Per-coordinate adaptive (AdaGrad) rates.", engine=True)
    normalized: bool = option(True, "Per-feature scale normalization.", engine=True)
    invariant: bool = option(
        True,
        "Importance-invariant updates. All three switches on is Vowpal Wabbit's default, all\n"
        "off plain SGD with a ``power_t`` decay.",
        engine=True,
    )
    constant: bool = option(True, "Add the constant (bias) feature.", engine=True)
    field_scales: bool | str = option(
        "auto",
        "Learn a scale per field (each sparse feature column, each cross of columns, apple's\n"
        "monomials): the model scores ``sum_f a_f * (w_f . x_f)``, each ``a_f`` learned by\n"
        "the loss, so that a field whose values each need large steps (a cross of two\n"
        "categorical columns) and noise fields get their own effective rates, which no single\n"
        "``eta0`` gives. ``'auto'``: on with two or more sparse feature columns, off with one\n"
        "(or a matrix); ``False`` is Vowpal Wabbit's model. The learned scales:\n"
        "``field_scales_``. See docs/learners.md.",
        check=lambda v: None if v == "auto" or isinstance(v, bool) else "'auto', True or False",
    )
    passes: int = option(
        1,
        "Passes over the data (in-memory data: with ``holdout`` and early stopping).",
        fit=True,
        check=at_least(1),
    )
    shuffle: bool = option(
        True,
        "Shuffle each pass of in-memory data (seed ``random_state``), as scikit-learn's SGD\n"
        "estimators do: data sorted by class or time otherwise teaches the last class last.\n"
        "``False`` learns the rows in their order, as Vowpal Wabbit does (the command line\n"
        "keeps the order). A LazyFrame, a VW file and ``partial_fit`` are learned in their\n"
        "order whatever this says: a stream is not held in memory to be shuffled. Feature\n"
        "columns of several chunks (a frame read from parquet) are copied into one first.",
        fit=True,
    )
    random_state: int | None = option(
        None, "The shuffling seed (0 when None).", fit=True, check=at_least(0, optional=True)
    )
    holdout: int = option(
        10,
        "With ``passes > 1`` on in-memory data, every ``holdout``-th row is held out (0: none).",
        fit=True,
        check=at_least(0),
    )
    n_iter_no_change: int = option(
        3,
        "Stop after this many passes without a better holdout loss (0: never).",
        fit=True,
        check=at_least(0),
    )
    average_tail: float = option(
        0.0,
        "Tail averaging, in [0, 1]: in-memory ``fit`` returns the mean of the weights after\n"
        "each of the last ``ceil(average_tail * n)`` of the ``n`` examples it learns (all\n"
        "passes), instead of the last weights: less of the noise of the final steps\n"
        "(Polyak-Ruppert averaging). 0 keeps the last iterate. The progressive loss is that\n"
        "of the running model, unchanged. For apple keep it within the last epoch (at most 1/6\n"
        "with the epoch schedule), where the monomial set no longer grows. Needs in-memory\n"
        "data (not ``partial_fit`` or a LazyFrame, whose end is unknown) and ``l1 = l2 = 0``.\n"
        "Costs 16 bytes per touched weight slot during the fit.",
        fit=True,
        check=between(0.0, 1.0),
    )
    features: str | Sequence[str] | None = option(
        None,
        "Feature columns of a Polars frame (default: every sparse, string, token-list and "
        "numeric column; each sparse or string column a namespace, the numeric ones together "
        "one, 'features').",
        check=column_names,
    )
    categorical: str | Sequence[str] | None = option(
        None,
        "Columns of a Polars frame to hash as categories whatever their type, one namespace "
        "each: code 17 of an integer or boolean column A is the string 'A=17' (not '17': an "
        "all-digit string hashes to its value plus the namespace's seed, as in Vowpal Wabbit, "
        "and crosses of such codes collide). Without it an integer column is a number. String, "
        "categorical and enum columns are categories already.",
        check=column_names,
    )
    batch_size: int = option(
        65_536,
        "Rows per batch (at most) when streaming a LazyFrame (and per progress-bar step).",
        check=at_least(1),
    )
    progress: bool | None = option(
        None,
        "tqdm progress bar with examples/s and progressive loss (default: when stderr is a\nTTY).",
    )
    quantile_tau: float = option(
        0.5,
        "The quantile of the quantile loss, in (0, 1).",
        engine=True,
        check=open_interval(0.0, 1.0),
    )

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def set_params(self, **params: Any) -> Any:
        """scikit-learn's ``set_params``. A nested setting of ``expansion="apple"``
        (``expansion__alpha=0.5``, as ``GridSearchCV`` sets ``clf__expansion__alpha``) first
        makes the expansion the ``Apple()`` the string means: a string has no settings."""
        return super().set_params(**nested_settings(self, params, "expansion", "apple", Apple))

    def _apple(self) -> Apple | None:
        """The apple settings, when the model grows its features."""
        if isinstance(self.expansion, Apple):
            return self.expansion
        return Apple() if self.expansion == "apple" else None

    def _feature_set(self, namespaces: list[str]) -> dict[str, Any]:
        """The engine's feature-set options."""
        apple = self._apple()
        if apple is not None and self.interactions:
            raise ValueError(
                "interactions (namespace crosses) cannot be combined with expansion='apple'"
            )
        crosses = []
        for cross in _name_crosses(self.interactions):
            for name in cross:
                if name not in namespaces:
                    raise ValueError(
                        f"interactions: {name!r} is not a feature column; the feature columns "
                        f"are {namespaces}"
                    )
            crosses.append([namespaces.index(name) for name in cross])
        if apple is not None:
            return apple._engine(len(namespaces))
        if isinstance(self.expansion, FieldApple):
            if self.interactions:
                raise ValueError(
                    "interactions cannot be combined with a FieldApple expansion, which finds "
                    "its own crosses"
                )
            return self.expansion._engine()
        if not isinstance(self.expansion, str) or self.expansion not in _DEGREE:
            raise ValueError(
                "expansion must be 'linear', 'quadratic', 'cubic', 'apple', a "
                f"polars_poly.Apple or a polars_poly.FieldApple, got {self.expansion!r}"
            )
        degree = _DEGREE[self.expansion]
        return {"kind": "interactions", "degree": degree, "namespace_crosses": crosses}

    def _check_params(self) -> None:
        check_options(self)

    def _no_averaging(self, what: str) -> None:
        if float(self.average_tail):
            raise ValueError(
                f"average_tail={self.average_tail!r} needs in-memory fit (the averaging window is "
                f"the end of the run); {what} streams. Set average_tail=0"
            )

    def _engine_options(self, namespaces: list[str]) -> dict[str, Any]:
        scales = self.field_scales
        fixed = self.bits
        features = self._feature_set(namespaces)
        crossing = _crosses_columns(features)
        return {
            **engine_options(self),
            "bits": min(GROWING_FROM_BITS, int(self.max_bits)) if fixed is None else int(fixed),
            "max_bits": int(self.max_bits) if fixed is None else None,
            "namespaces": namespaces,
            "features": features,
            "field_scales": len(namespaces) >= 2 if scales == "auto" else bool(scales),
            "ffm": None if self.ffm is None else self._ffm()._engine(namespaces, crossing),
        }

    def _ffm(self) -> FFM:
        if not isinstance(self.ffm, FFM):
            raise TypeError(f"ffm must be None or a polars_poly.FFM, got {self.ffm!r}")
        return self.ffm


def _crosses_columns(features: dict[str, Any]) -> bool:
    """Whether a model of these engine feature options crosses its columns (given interactions
    or field screening's crosses): what ``FFM(pairs='auto')`` factorizes."""
    return features["kind"] in ("field_apple", "apple_fields") or bool(
        features.get("namespace_crosses")
    )


def _engine_params(
    options: dict[str, Any], apple_race: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Estimator parameters from the options a loaded model was built with (``apple_race``:
    apple's settings a race may change, as the estimator was given them, when the file says)."""
    features = options["features"]
    namespaces = options["namespaces"]
    expansion: Expansion
    interactions = None
    if features["kind"] in ("apple", "apple_fields"):
        expansion = Apple._from_engine(features, len(namespaces), apple_race)
    elif features["kind"] == "field_apple":
        expansion = FieldApple(**from_engine(FieldApple, features))
    else:
        expansion = _POLYNOMIAL[features["degree"]]
        crosses = features["namespace_crosses"]
        if crosses:
            interactions = [tuple(namespaces[k] for k in cross) for cross in crosses]
    ffm = options.get("ffm")
    if ffm is not None:
        ffm = FFM._from_engine(ffm, namespaces, _crosses_columns(features))
    growing = options.get("max_bits") is not None
    return {
        **from_engine(_Options, options),
        "bits": None if growing else options["bits"],
        "max_bits": options["max_bits"] if growing else MAX_BITS,
        "expansion": expansion,
        "interactions": interactions,
        "ffm": ffm,
    }
