"""Hashed online learning with scikit-learn estimators: ``SGDRegressor`` and ``SGDClassifier``.

Vowpal Wabbit's core learning loop in Rust (``src/learner``): features hashed into ``2**bits``
weights, expanded on the fly per example (``expansion="linear" | "quadratic" | "cubic"``, plus
namespace crosses, or apple's adaptive expansion, :class:`polars_poly.Apple`), Vowpal Wabbit's
default adaptive + normalized + importance-invariant update,
progressive validation loss. Training and scoring release the GIL.

Inputs: scipy sparse matrices, dense numpy arrays, Polars DataFrames with sparse columns, string
(categorical, enum) columns or token lists, each a namespace, the strings hashed with the model's
``bits`` as ``hash_features`` hashes them, and numeric columns, together one namespace
(``"features"``) after the others; Polars LazyFrames (streamed in batches, bounded memory) and
Arrow tables.
With a DataFrame or LazyFrame, ``y`` (and ``sample_weight``) may be a column name.
"""

from __future__ import annotations

import functools
import json
import operator
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa

from polars_poly import _internal
from polars_poly._estimator import (
    BaseEstimator,
    ClassifierMixin,
    FeatureNamesIn,
    RegressorMixin,
    not_fitted,
)
from polars_poly._exclusive import one_call_at_a_time
from polars_poly._input import (
    DEFAULT_NAMESPACE,
    as_categories,
    as_float_array,
    as_polars,
    batch_ranges,
    batches_of,
    categorical_columns,
    categorical_exprs,
    check_named_columns,
    classes_of,
    engine_column,
    feature_exprs,
    frame_columns,
    is_vw_frame,
    label_array,
    matrix_series,
    namespace_columns,
    namespace_names,
    scored_in_pieces,
)
from polars_poly._internal import Learner
from polars_poly._params import (
    at_least,
    between,
    check_options,
    column_names,
    documented,
    engine_options,
    fields,
    from_engine,
    open_interval,
    option,
)
from polars_poly._persist import (
    CLASSES,
    COUNT,
    NAME,
    NAMES,
    NUMBER,
    Persistent,
    StateCheck,
    dict_of,
    kind_of,
    list_of,
    optional,
)
from polars_poly._plugin import call_plugin
from polars_poly.apple import Apple
from polars_poly.field_apple import FieldApple
from polars_poly.multiclass import OneAgainstAll
from polars_poly.ranking_race import LINEAR, RankingRace
from polars_poly.readers import scan_vw, vw_scan_source

Expansion = Literal["linear", "quadratic", "cubic", "apple"] | Apple | FieldApple
Frame = pl.DataFrame | pl.LazyFrame
_DEGREE = {"linear": 1, "quadratic": 2, "cubic": 3}
_POLYNOMIAL: dict[int, Expansion] = {1: "linear", 2: "quadratic", 3: "cubic"}
_NAMES = {"losses": ", ".join(repr(n) for n in _internal.LOSSES)}


@dataclass
class _Data:
    """Features (one sparse Series per namespace), labels and weights of one batch."""

    features: list[pl.Series]
    labels: npt.NDArray[np.float64] | None
    weights: npt.NDArray[np.float64] | None

    def __len__(self) -> int:
        return len(self.features[0]) if self.features else 0

    def slice(self, start: int, length: int) -> _Data:
        return _Data(
            [s.slice(start, length) for s in self.features],
            None if self.labels is None else self.labels[start : start + length],
            None if self.weights is None else self.weights[start : start + length],
        )


def _at_doublings(batches: Iterable[_Data], seen: int) -> Iterator[_Data]:
    """``batches`` cut where the count of examples (``seen`` before the first) reaches a power
    of two, where ``history_`` takes its rows; learning is example by example, so the cuts
    change nothing else."""
    for batch in batches:
        lengths = {len(a) for a in (batch.labels, batch.weights) if a is not None}
        if lengths - {len(batch)}:
            yield batch  # whole: the engine names the mismatch in the caller's numbers
            continue
        start = 0
        while start < len(batch):
            point = 1 << seen.bit_length()  # the next power of two above seen
            length = min(len(batch) - start, point - seen)
            yield batch if length == len(batch) else batch.slice(start, length)
            start += length
            seen += length


class _FitState:
    """Types of the private state ``fit`` sets (not options: a plain base, not dataclass
    fields)."""

    # A RankingRace (apple's ranking="auto") inside fit, which keeps its winner, and between
    # partial_fit calls.
    _learner: Learner | OneAgainstAll | RankingRace
    _rows_seen: int
    # The numeric ones among feature_columns_: together one namespace, after the others.
    _numeric_columns: list[str]
    _categorical_columns: dict[str, str]
    _width: int | None


@documented(_NAMES)
class _BaseSGD(_FitState, FeatureNamesIn, Persistent, BaseEstimator):  # type: ignore[misc]
    """Shared machinery of the two estimators; their options, declared once here (see
    ``polars_poly._params``)."""

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
    bits: int = option(
        18,
        "The weight table has ``2**bits`` entries.",
        engine=True,
        accepted="an integer in 1..=32",
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
        check=at_least(1),
    )
    shuffle: bool = option(False, "Shuffle each pass of in-memory data (seed ``random_state``).")
    random_state: int | None = option(
        None, "The shuffling seed (0 when None).", check=at_least(0, optional=True)
    )
    holdout: int = option(
        10,
        "With ``passes > 1`` on in-memory data, every ``holdout``-th row is held out (0: none).",
        check=at_least(0),
    )
    n_iter_no_change: int = option(
        3,
        "Stop after this many passes without a better holdout loss (0: never).",
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
        if any(name.startswith("expansion__") for name in params):
            if params.get("expansion") == "apple":
                params = {**params, "expansion": Apple()}
            elif "expansion" not in params and self.expansion == "apple":
                self.expansion = Apple()
        return super().set_params(**params)

    # ----------------------------------------------------------------------------- validation

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
        return {"kind": "polynomial", "degree": degree, "namespace_crosses": crosses}

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
        return {
            **engine_options(self),
            "namespaces": namespaces,
            "features": self._feature_set(namespaces),
            "field_scales": len(namespaces) >= 2 if scales == "auto" else bool(scales),
        }

    # ----------------------------------------------------------------------------- inputs

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

    # ----------------------------------------------------------------------------- training

    def _new_learner(self, namespaces: list[str], race: bool = False) -> None:
        """A new engine model; ``race``: a race between apple's rankings when its ranking is
        ``'auto'`` (not in distributed training, whose shards must share a ranking)."""
        self._check_params()
        learner = self._make_learner(self._engine_options(namespaces))
        apple = self._apple()
        racing = race and apple is not None and apple.ranking == "auto"
        self._learner = RankingRace(learner) if racing else learner
        self._history: list[dict[str, Any]] = []
        self._learned()
        self.namespaces_ = namespaces
        self.pass_loss_: list[float] = []
        self.holdout_loss_: list[float] = []
        self.stopped_early_ = False

    def _make_learner(self, options: dict[str, Any]) -> Learner | OneAgainstAll:
        return Learner(options)

    def _lazy_facts(self, y: str) -> list[pl.Expr]:
        """Aggregations of a LazyFrame a fit must know before its first batch (the classes),
        computed in one scan with the row count when that is needed too."""
        return []

    def _learn_facts(self, facts: pl.DataFrame, query: pl.LazyFrame, y: str) -> None:
        """Takes the one row of :meth:`_lazy_facts`' results (``query``: the model's columns,
        for a further scan)."""

    def _show_progress(self) -> bool:
        try:
            import tqdm  # noqa: F401
        except ImportError:
            if self.progress:
                raise ImportError("progress=True needs tqdm: pip install tqdm") from None
            return False
        if self.progress is not None:
            return bool(self.progress)
        return sys.stderr.isatty()

    def _learn_stream(
        self, batches: Iterable[_Data], total: int | None, whole_batches: bool = False
    ) -> None:
        """One progressive pass over batches, with the progress bar. The batches are cut where
        ``history_`` takes a row, unless ``whole_batches`` (``partial_fit``: a batch with a bad
        row must learn nothing, and the engine checks a batch before learning it)."""
        bar = None
        if self._show_progress():
            from tqdm.auto import tqdm

            bar = tqdm(total=total, unit="ex", unit_scale=True, desc=type(self).__name__)
        self._learned()
        start_examples = self._learner.progress[0]
        row: int = self._rows_seen
        try:
            pieces = batches if whole_batches else _at_doublings(batches, start_examples)
            for batch in pieces:
                if len(batch) == 0:
                    continue
                if batch.labels is None:
                    raise ValueError("y is required")
                self._learner.learn(
                    batch.features, pl.Series(batch.labels), _weights(batch.weights), row
                )
                row += len(batch)
                examples = self._learner.progress[0]
                if examples & (examples - 1) == 0:
                    self._record_history()
                if bar is not None:
                    # tqdm shows examples/s itself (one rate, not two that disagree).
                    bar.update(len(batch))
                    _, loss, weight, _ = self._learner.progress
                    bar.set_postfix(loss=f"{loss / weight:.4f}" if weight else "n/a")
        finally:
            if bar is not None:
                bar.close()
            self._rows_seen = row
            self._record_history()

    def _record_history(
        self,
        progress: tuple[int, float, float, int] | None = None,
        grown: tuple[int, int] | None | Literal["now"] = "now",
    ) -> None:
        """A row of ``history_`` (once per example count): of the model now, or of the
        ``progress`` record (examples, Σ weight·loss, Σ weight, updates) an engine call
        reported, with apple's (expansions, parents) ``grown`` when known (None: not known
        then, a null in the frame)."""
        history: list[dict[str, Any]] = self.__dict__.setdefault("_history", [])
        examples, loss, weight, updates = progress or self._learner.progress
        last = history[-1] if history else None
        if weight == 0 or (last is not None and last["examples"] == examples):
            return
        since = last or {"examples": 0, "_loss": 0.0, "_weight": 0.0, "_updates": 0}
        if grown == "now":
            apple = self._learner.apple_state()
            grown = (
                (int(apple[0]), len(self._learner.apple_parents())) if apple is not None else (0, 0)
            )
        history.append(
            {
                "examples": examples,
                "progressive_loss": loss / weight,
                "loss_since_last": (loss - since["_loss"]) / max(weight - since["_weight"], 1e-300),
                "features_per_example": (updates - since["_updates"])
                / max(examples - since["examples"], 1),
                "expansions": None if grown is None else grown[0],
                "parents": None if grown is None else grown[1],
                "_loss": loss,
                "_weight": weight,
                "_updates": updates,
            }
        )

    @property
    def history_(self) -> pl.DataFrame:
        """The learning curve: a row at 1, 2, 4, ... examples and at the end of each stream
        (``fit``, ``partial_fit``, each pass of a multi-pass in-memory ``fit``): examples,
        progressive loss so far and since the row before, features updated per example since
        then, apple's expansions and parents. Inside a multi-pass in-memory ``fit`` (one engine
        call) apple's counts are known at its end only: null before. A multiclass model's
        multi-pass ``fit`` records its end only."""
        rows = getattr(self, "_history", None)
        if rows is None:
            raise not_fitted(self)
        schema = {
            "examples": pl.Int64,
            "progressive_loss": pl.Float64,
            "loss_since_last": pl.Float64,
            "features_per_example": pl.Float64,
            "expansions": pl.Int64,
            "parents": pl.Int64,
        }
        return pl.DataFrame([{k: r[k] for k in schema} for r in rows], schema=schema)

    def plot_learning_curve(self, ax: Any = None) -> Any:
        """The progressive loss against the examples learned (log scale), apple's expansions
        marked; needs matplotlib. Returns the matplotlib Axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError(
                "plot_learning_curve needs matplotlib: pip install matplotlib"
            ) from None
        history = self.history_
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        ax.plot(history["examples"], history["progressive_loss"], marker=".", label="average")
        ax.plot(history["examples"], history["loss_since_last"], alpha=0.6, label="since last")
        grown = history.filter(pl.col("expansions") > pl.col("expansions").shift(1).fill_null(0))
        for examples in grown["examples"]:
            ax.axvline(examples, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_xlabel("examples learned")
        ax.set_ylabel(f"progressive {self.loss} loss")
        ax.legend()
        return ax

    def plot_monomials(self, top: int = 20, ax: Any = None) -> Any:
        """apple's ``top`` monomials of largest absolute weight as horizontal bars (colour:
        degree; label: the monomial, with its class for a multiclass model, and the expansion
        that added it); needs matplotlib. Returns the matplotlib Axes."""
        try:
            import matplotlib.pyplot as plt
            from matplotlib.patches import Rectangle
        except ImportError:
            raise ImportError("plot_monomials needs matplotlib: pip install matplotlib") from None
        table = self.monomials()
        if top < 1:
            raise ValueError(f"top must be at least 1, got {top!r}")
        shown = table.sort(pl.col("weight").abs(), descending=True).head(top).reverse()
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 0.3 * max(shown.height, 4) + 1))
        prefix = [f"{c}: " for c in shown["class"]] if "class" in shown.columns else None
        labels = [
            f"{prefix[i] if prefix else ''}{m} (exp. {e})"
            for i, (m, e) in enumerate(zip(shown["monomial"], shown["expansion"], strict=True))
        ]
        colors = [f"C{d - 1}" for d in shown["degree"]]
        ax.barh(range(shown.height), shown["weight"].to_list(), color=colors)
        ax.set_yticks(range(shown.height), labels, fontsize=8)
        ax.axvline(0, color="grey", linewidth=0.5)
        ax.set_xlabel("weight of the monomial")
        degrees = sorted(set(shown["degree"].to_list()))
        handles = [Rectangle((0, 0), 1, 1, color=f"C{d - 1}") for d in degrees]
        ax.legend(handles, [f"degree {d}" for d in degrees], fontsize=8, loc="lower right")
        ax.set_title(f"apple's monomials, top {shown.height} of {table.height} by |weight|")
        return ax

    def _fit_memory(self, data: _Data) -> None:
        if data.labels is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        if len(data) == 0:
            raise ValueError("cannot fit on 0 examples")
        if data.weights is not None and len(data.weights) and not data.weights.any():
            raise ValueError("Sample weights must contain at least one non-zero number.")
        passes = int(self.passes)
        if passes == 1 and not self.shuffle and not float(self.average_tail):
            self._learner.begin_run(len(data))
            size = int(self.batch_size)
            before = self._learner.progress
            ranges = batch_ranges(data.features, len(data), size)
            lengths = {len(a) for a in (data.labels, data.weights) if a is not None}
            # Labels or weights of another length go whole: the engine names the mismatch.
            pieces = [data] if lengths - {len(data)} else (data.slice(s, n) for s, n in ranges)
            self._learn_stream(pieces, len(data))
            after = self._learner.progress
            self.pass_loss_ = [(after[1] - before[1]) / max(after[2] - before[2], 1e-300)]
            return
        seed = None
        if self.shuffle:
            seed = 0 if self.random_state is None else int(self.random_state)
        runs, pass_loss, holdout_loss, stopped, curve = self._learner.fit(
            data.features,
            pl.Series(data.labels),
            _weights(data.weights),
            passes,
            seed,
            int(self.holdout),
            int(self.n_iter_no_change),
            float(self.average_tail),
        )
        self.n_passes_ = runs
        self.pass_loss_ = pass_loss
        self.holdout_loss_ = holdout_loss
        self.stopped_early_ = stopped
        # The last record is the model now, whose apple counts are known.
        for progress in curve[:-1]:
            self._record_history(progress, grown=None)
        self._record_history()

    def _lazy_batches(
        self, frame: pl.LazyFrame, y: Any, sample_weight: Any, fitting: bool
    ) -> tuple[pl.LazyFrame, Callable[[], Iterator[_Data]]]:
        """The query of a LazyFrame's model columns, and its batches of ``batch_size`` rows.
        ``fitting`` chooses (and remembers) the feature columns; else the fitted ones."""
        if not isinstance(y, str):
            raise TypeError("with a LazyFrame, y must be the name of the target column")
        if sample_weight is not None and not isinstance(sample_weight, str):
            raise TypeError("with a LazyFrame, sample_weight must be a column name")
        schema = frame.collect_schema()
        check_named_columns(schema, y=y, sample_weight=sample_weight)
        exclude = {y} | ({sample_weight} if isinstance(sample_weight, str) else set())
        frame, codes = as_categories(frame, schema, self._categorical_names(), exclude)
        if codes:
            schema = pl.Schema(schema | dict.fromkeys(codes, pl.String()))
        if fitting:
            names, numeric = self._frame_columns(schema, exclude)
            self._remember_columns(names, numeric, schema, codes)
        else:
            names, numeric = self._fitted_columns()
            for name in names:
                check_named_columns(schema, feature_column=name)
        # Numeric columns become their namespace's struct batch by batch (the query keeps the
        # frame's names: no "features" column beside the target's or weight's own name).
        keep = [*(engine_column(n, schema[n]) for n in names), pl.col(y)]
        if isinstance(sample_weight, str):
            keep.append(pl.col(sample_weight))
        query = frame.select(keep)

        def batches() -> Iterator[_Data]:
            first_row = self._rows_seen
            for chunk in batches_of(query, int(self.batch_size)):
                labels = self._labels(chunk.get_column(y), first_row)
                weights = None
                if isinstance(sample_weight, str):
                    column = chunk.get_column(sample_weight)
                    weights = as_float_array(column, "sample_weight", first_row)
                columns = namespace_columns(chunk, names, numeric)
                first_row += len(chunk)
                yield _Data(columns, labels, weights)

        return query, batches

    def _lazy_pass(
        self, batches: Callable[[], Iterator[_Data]], rows: int | None = None, shard: bool = False
    ) -> None:
        """One progressive pass over a LazyFrame's batches (``rows`` of them, when known: the
        progress bar's total). ``shard``: the rows are one task's part of a distributed fit,
        where rows whose importance weights are all 0 learn nothing instead of failing (the
        average weighs each task by what it learned)."""
        before = self._learner.progress
        self._learn_stream(batches(), rows)
        after = self._learner.progress
        if after[0] == before[0]:
            raise ValueError("cannot fit on 0 examples")
        if after[2] == before[2]:
            if not shard:
                # scikit-learn's message for the same input in memory.
                raise ValueError("Sample weights must contain at least one non-zero number.")
            self.pass_loss_.append(float("nan"))
            return
        self.pass_loss_.append((after[1] - before[1]) / (after[2] - before[2]))

    def _fit_lazy(
        self,
        frame: pl.LazyFrame,
        y: Any,
        sample_weight: Any,
        run_length: int | None = None,
        race: bool = True,
        shard: bool = False,
    ) -> None:
        """A new model from ``passes`` passes over a LazyFrame. apple's epochs are placed over
        ``run_length`` examples when given, else over the counted rows (epochs schedule);
        ``race``: see :meth:`_new_learner`; ``shard``: see :meth:`_lazy_pass`."""
        query, batches = self._lazy_batches(frame, y, sample_weight, fitting=True)
        apple = self._apple()
        # apple's epochs need the run length: count the rows first, in the scan (if any) that
        # finds what the model needs before its first batch. Where that scan runs anyway (a
        # classifier's classes) the rows are counted too: a large table the run will fill then
        # starts on huge pages (see `Learner.begin_run`).
        facts_needed = self._lazy_facts(y)
        count = run_length is None and (
            (apple is not None and apple.schedule == "epochs") or bool(facts_needed)
        )
        aggregates = [*facts_needed, *([pl.len().alias("_rows")] if count else [])]
        facts = query.select(aggregates).collect(engine="streaming") if aggregates else None
        if facts is not None:
            self._learn_facts(facts, query, y)
        self._new_learner(self._namespaces(), race=race)
        self._rows_seen = 0
        rows = run_length
        if run_length is not None:
            self._learner.begin_run(run_length)
        elif facts is not None and count:
            rows = int(facts["_rows"][0])
            self._learner.begin_run(rows * int(self.passes))
        for _ in range(int(self.passes)):
            self._lazy_pass(batches, rows, shard=shard)
        self.n_passes_ = int(self.passes)

    def _continue_lazy(
        self, frame: pl.LazyFrame, y: Any, sample_weight: Any, shard: bool = False
    ) -> None:
        """One more pass of the fitted model over a LazyFrame with the fitted feature columns
        (rows numbered from 0 in errors: a new stream); ``shard``: see :meth:`_lazy_pass`."""
        _, batches = self._lazy_batches(frame, y, sample_weight, fitting=False)
        self._rows_seen = 0
        self._lazy_pass(batches, shard=shard)
        self.n_passes_ = getattr(self, "n_passes_", 0) + 1
        self._finish_fit()

    def _fit(self, X: Any, y: Any, sample_weight: Any) -> _BaseSGD:
        self._check_params()
        if isinstance(X, str | os.PathLike):
            X = scan_vw(X, namespaces="auto")
        source = vw_scan_source(X) if y is None and sample_weight is None else None
        if source is not None and self._fit_vw_file(*source):
            return self
        y, sample_weight = self._vw_defaults(X, y, sample_weight)
        if isinstance(X, pl.LazyFrame):
            self._no_averaging("fit on a LazyFrame")
            self._fit_lazy(X, y, sample_weight)
        else:
            data = self._data(X, y, sample_weight, fitting=True)
            self._new_learner(self._namespaces(), race=True)
            self._rows_seen = 0
            self.n_passes_ = int(self.passes)
            self._fit_memory(data)
        self._finish_fit()
        return self

    def _fit_vw_file(self, path: str, options: dict[str, Any], batch_rows: int) -> bool:
        """``fit`` of a Vowpal Wabbit file as :func:`scan_vw` reads it, learned by the engine
        end to end (``src/vw_run``): the same model as fitting the frames, without them. False
        (nothing done) for the models that learn in pieces (apple's ranking race, more than
        two classes) and for averaging, which take the frames' path."""
        apple = self._apple()
        if float(self.average_tail) or (apple is not None and apple.ranking == "auto"):
            return False
        namespaces, labels, more = _internal.vw_scan(path, options)
        classes = None
        if isinstance(self, SGDClassifier):
            found = classes_of(np.asarray(labels, dtype=np.float64))
            if more or len(found) != 2:
                return False
            self.classes_ = found
            classes = (float(found[0]), float(found[1]))
        schema = _internal.reader_schema("vw", options).schema
        if hasattr(self, "_learner"):
            del self._learner

        def run(learner: Learner) -> tuple[Any, ...]:
            return _internal.vw_train(
                learner,
                path,
                None,
                options,
                write_cache=False,
                scan=None,
                passes=1,
                holdout_period=0,
                early_terminate=0,
                test_only=False,
                classes=classes,
                batch_rows=batch_rows,
                progress=None,
                quiet=True,
                history=False,
                predictions=None,
                print=lambda lines: None,
            )

        for _ in range(int(self.passes)):
            before = self._learner.progress if hasattr(self, "_learner") else (0, 0.0, 0.0, 0)
            self._learn_vw(schema, run)
            after = self._learner.progress
            if after[0] == before[0]:
                raise ValueError("cannot fit on 0 examples")
            if after[2] == before[2]:
                raise ValueError("Sample weights must contain at least one non-zero number.")
            self.pass_loss_.append((after[1] - before[1]) / (after[2] - before[2]))
        self.n_passes_ = int(self.passes)
        return True

    def _finish_fit(self, keep_race: bool = False) -> None:
        """Fitted attributes from the model; a ranking race ends here (its winner kept) unless
        ``keep_race`` (``partial_fit``: the stream goes on)."""
        if isinstance(self._learner, RankingRace) and not keep_race:
            self._learner, _ = self._learner.winner()
        learner = self._check_fitted()
        examples, loss, weight, updates = learner.progress
        self.n_examples_ = int(examples)
        self.n_feature_updates_ = int(updates)
        self.progressive_loss_ = loss / weight if weight else float("nan")
        apple = learner.apple_state()
        if apple is not None:
            self.n_expansions_ = int(apple[0])
            self.n_parents_ = len(learner.apple_parents())
            engine = learner.options()["features"]
            engine = engine.get("apple", engine)
            # max_degree 1 where the settings ask more: the race kept the linear model.
            asked = getattr(self._apple(), "max_degree", 1)
            stopped = int(engine["max_degree"]) == 1 < int(asked)
            self.apple_ranking_ = LINEAR if stopped else str(engine["ranking"])
        if _has_field_crosses(learner):
            self.n_crosses_ = len(learner.field_crosses())
        if isinstance(learner, OneAgainstAll) and learner.errors[1] > 0:
            errors, weight = learner.errors
            self.progressive_error_ = errors / weight

    def _partial_fit(self, X: Any, y: Any, sample_weight: Any) -> _BaseSGD:
        if isinstance(X, pl.LazyFrame):
            raise TypeError("partial_fit takes in-memory batches; use fit for a LazyFrame")
        self._no_averaging("partial_fit")
        y, sample_weight = self._vw_defaults(X, y, sample_weight)
        first = not hasattr(self, "_learner")
        data = self._data(
            X, y, sample_weight, fitting=first, first_row=0 if first else self._rows_seen
        )
        if first:
            self._new_learner(self._namespaces(), race=True)
            self._rows_seen = 0
        if len(data) == 0:
            raise ValueError("cannot fit on 0 examples")
        self._learn_stream([data], len(data), whole_batches=True)
        self._finish_fit(keep_race=True)
        return self

    def _learn_scored(
        self, X: Any, y: Any, sample_weight: Any, held_out: list[bool] | None = None
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """``partial_fit`` of one batch that learns every row but those ``held_out`` marks
        (scored only) and reports each row: its progressive prediction, its loss times its
        weight, its features. What the command line's Vowpal Wabbit report needs; one engine
        model only (no ranking race, not one-against-all)."""
        first = not hasattr(self, "_learner")
        data = self._data(
            X, y, sample_weight, fitting=first, first_row=0 if first else self._rows_seen
        )
        if first:
            self._new_learner(self._namespaces())
            self._rows_seen = 0
        learner = self._learner
        if not isinstance(learner, Learner):
            raise TypeError(f"a report of every row needs one engine model, not a {learner!r}")
        self._learned()
        labels = pl.Series(data.labels)
        scored = learner.learn_scored(
            data.features, labels, _weights(data.weights), self._rows_seen, held_out
        )
        self._rows_seen += len(data)
        self._finish_fit()
        predictions, losses, features = (s.to_numpy() for s in scored)
        return predictions, losses, features

    def _learn_vw(
        self, schema: pl.Schema, run: Callable[[Learner], tuple[Any, ...]]
    ) -> tuple[Any, ...]:
        """The command line's run on Vowpal Wabbit text or its cache, in the engine end to end:
        a new model takes its columns from ``schema`` (the reader's, of the file's namespaces);
        ``run`` gets the one engine model and returns what the engine's run did, its second
        item the rows read. Bookkeeping as ``partial_fit``'s."""
        first = not hasattr(self, "_learner")
        if first:
            names, numeric = self._frame_columns(schema, {"label", "weight", "base", "tag"})
            self._remember_columns(names, numeric, schema)
            self._new_learner(self._namespaces())
            self._rows_seen = 0
        learner = self._learner
        if not isinstance(learner, Learner):
            raise TypeError(f"a run of the engine needs one engine model, not a {learner!r}")
        self._learned()
        result = run(learner)
        self._rows_seen += int(result[1])
        self._finish_fit()
        return result

    # ----------------------------------------------------------------------------- scoring

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
        named = features and all(isinstance(f, str) for f in features)
        if not features or (fitted is not None and named and sorted(features) == sorted(fitted)):
            # The fitted columns (by name, in any order: by position they would feed each column
            # to another's namespace), numeric ones made into their namespace.
            read_as = categorical_exprs(getattr(self, "_categorical_columns", {}))
            exprs = feature_exprs(*self._fitted_columns(), given=read_as)
        else:
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
                f"2**{self.bits}; train with more bits"
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
        if kind == "polynomial" and int(features["degree"]) >= 2:
            fields = [(d, f"degree {d}") for d in range(1, int(features["degree"]) + 1)]
        else:
            fields = [(1 + k, name) for k, name in enumerate(names)]
        if kind in ("apple", "apple_fields"):
            fields.append((monomials, "monomials"))
        crosses: list[list[int]]
        if kind in ("field_apple", "apple_fields"):
            crosses = [[a, b] for a, b, _ in learner.field_crosses()]
        else:
            crosses = [[int(k) for k in cross] for cross in features.get("namespace_crosses", [])]
        fields += [
            (monomials + 1 + p, "*".join(names[k] for k in cross))
            for p, cross in enumerate(crosses)
        ]
        return fields

    # ----------------------------------------------------------------------------- apple

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

    def crosses(self) -> pl.DataFrame:
        """The crosses of feature columns a :class:`FieldApple` expansion added, in order.

        Columns: ``cross`` (``"animal*food"``), ``fields`` (the two column names) and
        ``added_at`` (the number of learned examples when the cross joined).
        """
        _, names = self._field_apple("crosses")
        return self._by_class(lambda learner: self._crosses(learner, names))

    def _crosses(self, learner: Learner, names: list[str]) -> pl.DataFrame:
        rows = [
            (f"{names[a]}*{names[b]}", [names[a], names[b]], added)
            for a, b, added in learner.field_crosses()
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
            (f"{names[a]}*{names[b]}", [names[a], names[b]], max(zf, zc), zf, zc, samples, active)
            for a, b, zf, zc, samples, active in learner.field_candidates()
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

    # ----------------------------------------------------------------------------- persistence

    def _estimator_text(self) -> str:
        """What the model file keeps beside the engine's sections: the options only the Python
        layer knows and the fitted column layout (nothing the engine stores)."""
        params = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if not f.metadata.get("engine") and f.name not in ("expansion", "interactions")
        }
        for listed in ("features", "categorical"):
            if params.get(listed) is not None and not isinstance(params[listed], str):
                params[listed] = list(params[listed])
        state = {
            "estimator": type(self).__name__,
            "params": params,
            "feature_columns": getattr(self, "feature_columns_", None),
            "numeric_columns": getattr(self, "_numeric_columns", []),
            "categorical_columns": getattr(self, "_categorical_columns", {}),
            "n_features_in": getattr(self, "n_features_in_", None),
            "classes": self._classes_list(),
            "pass_loss": list(self.pass_loss_),
            "holdout_loss": list(self.holdout_loss_),
            "rows_seen": self._rows_seen,
            # The command line's Vowpal Wabbit reader flags (n-grams, ...), which reading a
            # file for the model needs again.
            "vw_reader": self.__dict__.get("_vw_reader"),
        }
        learner = self._check_fitted()
        if isinstance(learner, OneAgainstAll):
            state["multiclass_errors"] = list(learner.errors)
        apple = self._apple()
        if apple is not None:
            # The engine stores the settings the model trained with (a race's winner: its
            # ranking, max_degree 1 for the linear model); the estimator's own may differ.
            state["apple_race"] = {"ranking": apple.ranking, "max_degree": apple.max_degree}
        return json.dumps(state)

    def _classes_list(self) -> list[Any] | None:
        return None

    # What _estimator_text writes, as load checks it.
    _stored_state: ClassVar[dict[str, StateCheck]] = {
        "feature_columns": optional(NAMES),
        "numeric_columns": NAMES,
        "categorical_columns": dict_of(NAME, "a mapping of column names to category kinds"),
        "sparse_columns": kind_of(bool, what="True or False"),  # files before mixed columns
        "n_features_in": optional(COUNT),
        "classes": optional(CLASSES),
        "pass_loss": list_of(NUMBER, "a list of numbers"),
        "holdout_loss": list_of(NUMBER, "a list of numbers"),
        "rows_seen": COUNT,
        "vw_reader": optional(dict_of(lambda _: None, "a mapping of reader options")),
        "multiclass_errors": list_of(NUMBER, "two numbers", at_least=2),
        "apple_race": dict_of(lambda _: None, "a mapping of apple settings"),
    }

    def _restore(self, learner: Learner | OneAgainstAll, state: dict[str, Any]) -> None:
        classes = state["classes"]
        heads = len(learner.heads) if isinstance(learner, OneAgainstAll) else 2
        if (classes is None) == isinstance(self, ClassifierMixin):
            raise ValueError(f"classes {classes!r} for a {type(self).__name__}")
        if classes is not None and len(classes) != heads:
            raise ValueError(f"{len(classes)} classes for a model of {heads}")
        columns = set(state["feature_columns"] or [])
        stray = set(state.get("numeric_columns", [])) | set(state.get("categorical_columns", {}))
        if not stray <= columns:
            raise ValueError(f"columns {sorted(stray - columns)} are not among the features")
        self._learner = learner
        if isinstance(learner, OneAgainstAll):
            errors, weight = state.get("multiclass_errors", (0.0, 0.0))
            learner.errors = (float(errors), float(weight))
        self.feature_columns_ = state["feature_columns"]
        if "numeric_columns" in state:
            self._numeric_columns = state["numeric_columns"]
        else:  # before mixed columns: all sparse or all numeric
            numeric = not state["sparse_columns"] and state["feature_columns"] is not None
            self._numeric_columns = list(state["feature_columns"]) if numeric else []
        self._categorical_columns = state.get("categorical_columns", {})
        # Files before 2026-11-27 have none for numeric columns: counted as a fit counts them.
        self._count_features_in(state["n_features_in"])
        self.namespaces_ = list(learner.options()["namespaces"])
        self.pass_loss_ = state["pass_loss"]
        self.holdout_loss_ = state["holdout_loss"]
        self.stopped_early_ = False
        self._rows_seen = state["rows_seen"]
        if state.get("vw_reader"):
            self._vw_reader = state["vw_reader"]
        if state["classes"] is not None:
            self.classes_ = np.asarray(state["classes"])
        self._finish_fit()

    def _fitted_model(self) -> Learner | OneAgainstAll:
        return self._check_fitted()

    @classmethod
    def _from_model(cls, model: Any, state: dict[str, Any]) -> Any:
        own = {f.name for f in fields(cls) if not f.metadata.get("engine")}
        stored = {_LEGACY_NAMES.get(k, k): v for k, v in state["params"].items()}
        params = {
            k: v for k, v in stored.items() if k in own and k not in ("expansion", "interactions")
        }
        engine = _engine_params(model.options(), state.get("apple_race"))
        estimator = cls(**params, **engine)
        estimator._restore(model, state)
        return estimator


def _name_crosses(interactions: Any) -> list[tuple[str, ...]]:
    """``interactions`` as a list of crosses (tuples of two or more names); a ``TypeError`` for
    any other shape."""

    def is_cross(cross: Any) -> bool:
        return (
            isinstance(cross, tuple | list)
            and len(cross) >= 2
            and all(isinstance(name, str) for name in cross)
        )

    if interactions is None:
        return []
    if (
        not isinstance(interactions, Sequence)
        or isinstance(interactions, str)
        or not all(is_cross(c) for c in interactions)
    ):
        raise TypeError(
            "interactions must be a list of crosses, each a tuple of two or more feature column "
            f"names, e.g. [('a', 'b'), ('a', 'b', 'c')]; got {interactions!r}"
        )
    return [tuple(cross) for cross in interactions]


def _weights(weights: npt.NDArray[np.float64] | None) -> pl.Series | None:
    return None if weights is None else pl.Series(weights)


# Options only the Python layer keeps (the rest the engine stores); version-2 files (polars-poly
# 0.1) named ``n_iter_no_change`` ``early_stopping``.
_LEGACY_NAMES = {"early_stopping": "n_iter_no_change"}


def _has_field_crosses(learner: Learner | OneAgainstAll) -> bool:
    """Whether the engine model grows crosses of feature columns."""
    return str(learner.options()["features"]["kind"]) in ("field_apple", "apple_fields")


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
    return {**from_engine(_BaseSGD, options), "expansion": expansion, "interactions": interactions}


class _ScoreColumns:
    """``score`` that also takes column names for ``y`` and ``sample_weight`` (placed before the
    scikit-learn mixins, whose ``score`` it calls)."""

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy (classifier) or R² (regressor); with a Polars frame ``y`` and
        ``sample_weight`` may be column names."""
        if isinstance(X, pl.LazyFrame) and (isinstance(y, str) or isinstance(sample_weight, str)):
            X = X.collect()
        if isinstance(X, pl.DataFrame):
            if isinstance(y, str):
                y = X.get_column(y).to_numpy()
            if isinstance(sample_weight, str):
                sample_weight = X.get_column(sample_weight).to_numpy()
        result: float = super().score(X, y, sample_weight=sample_weight)  # type: ignore[misc]
        return result


@documented(_NAMES)
class SGDRegressor(_ScoreColumns, RegressorMixin, _BaseSGD):  # type: ignore[misc]
    """Hashed online linear regression on (polynomially expanded) sparse features.

    [parameters]

    Attributes
    ----------
    progressive_loss_ : float
        Average loss of every learned example before it was learned.
    pass_loss_, holdout_loss_ : list of float
        Per pass progressive and holdout losses.
    n_examples_, n_feature_updates_ : int
        Examples and expanded features learned.
    n_expansions_, n_parents_ : int
        apple only: expansions done and monomials expanded so far.
    apple_ranking_ : str
        apple only: the ranking the model trained with (with ``ranking="auto"``, the one the
        race kept, or ``'linear'`` when it kept the model that stopped growing).
    n_crosses_ : int
        FieldApple, or apple on two or more feature columns: crosses of feature columns added
        so far.
    coef_, intercept_ : ndarray
        Linear models (``expansion="linear"``) on a matrix or numeric columns: the weights,
        shape ``(n_features,)``, and the constant's, shape ``(1,)``.

    Examples
    --------
    A target no linear model fits, learned in one pass by the quadratic expansion:

    >>> import polars_poly as pp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = X[:, 0] * X[:, 1]
    >>> model = pp.SGDRegressor(expansion="quadratic").fit(X, y)
    >>> model.n_examples_, round(model.score(X, y), 3)
    (2000, 1.0)
    >>> round(pp.SGDRegressor().fit(X, y).score(X, y), 1)
    0.0
    """

    @one_call_at_a_time
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> SGDRegressor:
        """Trains a new model on ``X`` / ``y`` (``y``: array or target column name)."""
        self._fit(X, y, sample_weight)
        return self

    @one_call_at_a_time
    def partial_fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> SGDRegressor:
        """One online pass over a batch, continuing the current model."""
        self._partial_fit(X, y, sample_weight)
        return self

    def predict(self, X: Any) -> npt.NDArray[np.float64]:
        """Predictions (clipped to the label range seen in training)."""
        return self._scores(X)

    def predict_expr(self, *features: str | pl.Expr) -> pl.Expr:
        """A Polars expression computing :meth:`predict` in (lazy, streaming) queries.

        ``features``: the feature column(s), one per namespace: sparse, string or token lists
        (default: the columns the model was fitted on, the numeric ones made into their
        namespace; those same column names, in any order, are read the same way). The
        expression refers to this fitted model; refitting makes it invalid.
        """
        return self._score_expr(features, "score")


def _finite_extremes(labels: npt.NDArray[Any]) -> bool:
    """Whether the smallest and largest of float ``labels`` are finite (NaN is neither)."""
    return bool(np.isfinite(labels.min()) and np.isfinite(labels.max()))


@documented(_NAMES)
class SGDClassifier(_ScoreColumns, ClassifierMixin, _BaseSGD):  # type: ignore[misc]
    """Hashed online classifier, binary or multiclass (one against all), on (polynomially
    expanded) sparse features; the options of :class:`SGDRegressor`, with the logistic loss by
    default.

    Labels may be of any type numpy can sort (integers, strings, booleans); ``classes_`` holds
    them sorted. With two classes the first is learned as -1, the second as +1. With more,
    the model is one binary learner per class, each learning "this class or not" from the same
    examples in the same pass (Vowpal Wabbit's ``--oaa``, scikit-learn's one-vs-rest): the
    predicted class has the highest score, and the progressive loss is the sum of the classes'
    binary losses. ``predict_proba`` needs the logistic loss (multiclass: each class's
    probability, normalized to sum to 1, as scikit-learn's one-vs-rest does).

    [parameters]

    Attributes
    ----------
    classes_ : ndarray
        The class labels, sorted.
    progressive_loss_ : float
        Average loss of every learned example before it was learned (multiclass: the sum of
        the classes' binary losses).
    progressive_error_ : float
        Multiclass only: the fraction (by importance weight) of the examples learned one pass
        at a time (``passes=1``, ``partial_fit``, LazyFrames) whose class was mispredicted
        before they were learned (Vowpal Wabbit's ``--oaa`` progressive loss).
    coef_, intercept_ : ndarray
        Linear models on a matrix or numeric columns: the weights, shape ``(1, n_features)``
        (binary) or ``(n_classes, n_features)``, and the constant's.
    n_examples_, pass_loss_, holdout_loss_, n_expansions_, n_parents_, apple_ranking_
        As :class:`SGDRegressor`'s, as is ``n_crosses_``.

    Examples
    --------
    >>> import polars_poly as pp
    >>> rng = np.random.default_rng(0)
    >>> frame = pl.DataFrame({"x": rng.normal(size=1000)})
    >>> frame = frame.with_columns(label=(pl.col("x") > 0).cast(pl.Int8))
    >>> model = pp.SGDClassifier().fit(frame, "label")  # the label: a column name or an array
    >>> model.classes_.tolist(), model.score(frame, "label") > 0.95
    ([0, 1], True)
    >>> scored = frame.lazy().select(
    ...     pl.col("x").round(3),
    ...     model.predict_expr().alias("label"),
    ...     model.predict_proba_expr().round(3).alias("p"),
    ... )
    >>> scored.collect(engine="streaming").head(3).rows()  # x, predicted label, P(label = 1)
    [(0.126, 1, 0.578), (-0.132, 0, 0.303), (0.64, 1, 0.932)]

    Three classes named by strings:

    >>> frame = frame.with_columns(
    ...     size=pl.when(pl.col("x") < -0.5).then(pl.lit("small"))
    ...     .when(pl.col("x") < 0.5).then(pl.lit("medium")).otherwise(pl.lit("large"))
    ... )
    >>> model = pp.SGDClassifier(expansion="quadratic", passes=3).fit(frame.drop("label"), "size")
    >>> model.classes_.tolist(), model.score(frame.drop("label"), "size") > 0.9
    (['large', 'medium', 'small'], True)
    >>> model.predict_proba(frame.drop("label")).shape
    (1000, 3)
    """

    loss: str = option(
        "logistic",
        "The loss, one of {losses} (``quantile`` uses ``quantile_tau``).",
        engine=True,
    )

    def _multiclass(self) -> bool:
        return len(getattr(self, "classes_", ())) > 2

    def _make_learner(self, options: dict[str, Any]) -> Learner | OneAgainstAll:
        if self._multiclass():
            return OneAgainstAll.new(options, len(self.classes_))
        return Learner(options)

    def _lazy_facts(self, y: str) -> list[pl.Expr]:
        # A multiclass model has a learner per class from the first example: find the classes
        # first. Most labels hold two values: their extremes and whether every label is one of
        # them take one quick pass (10M labels read from parquet: 0.055 s, against 0.09-0.14 s
        # for their distinct values); other labels take a second scan (`_learn_facts`).
        label = pl.col(y)
        two = (label == label.min()) | (label == label.max()) | label.is_null()
        return [label.min().alias("_low"), label.max().alias("_high"), two.all().alias("_two")]

    def _learn_facts(self, facts: pl.DataFrame, query: pl.LazyFrame, y: str) -> None:
        # Classes given beforehand stay: distributed training names every shard's classes, and
        # a shard may hold one of them only (fit itself forgets the classes first).
        if hasattr(self, "classes_"):
            return
        if facts["_two"][0]:
            values = pl.concat([facts["_low"], facts["_high"].alias("_low")]).drop_nulls()
        else:
            # (A null or NaN label is left to the batches, whose errors name its row.)
            distinct = pl.col(y).drop_nulls().drop_nans().unique()
            values = query.select(distinct).collect(engine="streaming").get_column(y)
        if len(values):
            self.classes_ = classes_of(label_array(values, "y"))

    def _labels(self, y: Any, first_row: int = 0) -> npt.NDArray[np.float64]:
        """The engine's labels: -1 / +1 for a binary model, class numbers 0, 1, ... for a
        multiclass one (rows in errors counted from ``first_row``)."""
        labels = label_array(y, "y", first_row)
        # Every label is finite when the extremes are (no temporary array of 10M flags).
        if labels.dtype.kind == "f" and len(labels) and not _finite_extremes(labels):
            row = int(np.flatnonzero(~np.isfinite(labels))[0])
            raise ValueError(
                f"y: row {first_row + row}: label is {labels[row]}; labels must be finite"
            )
        if np.iscomplexobj(labels):
            raise ValueError("Complex data not supported: the labels are complex numbers")
        # Classes found in these labels hold every one of them.
        found_here = not hasattr(self, "classes_")
        if found_here:
            self.classes_ = classes_of(labels)
        classes = self.classes_
        if len(classes) == 2 and labels.dtype.kind in "biuf" and classes.dtype.kind in "biuf":
            # Two comparisons instead of a binary search per label (0.05 s against 0.17 s on
            # 10M labels); a label of neither class falls through to the error naming it.
            if found_here or np.count_nonzero(labels == classes[0]) + np.count_nonzero(
                labels == classes[1]
            ) == len(labels):
                if labels.dtype == np.float64 and classes[0] == -1 and classes[1] == 1:
                    # Already the engine's labels: no copy (the engine only reads them).
                    return labels
                return np.where(labels == classes[1], 1.0, -1.0)
        ids = _class_numbers(classes, labels, first_row)
        if self._multiclass():
            return ids.astype(np.float64)
        return np.where(ids == 1, 1.0, -1.0)

    def _classes_list(self) -> list[Any] | None:
        classes = getattr(self, "classes_", None)
        return None if classes is None else classes.tolist()

    @one_call_at_a_time
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> SGDClassifier:
        """Trains a new model; its classes are the labels in ``y``."""
        if hasattr(self, "classes_"):
            del self.classes_
        self._fit(X, y, sample_weight)
        return self

    @one_call_at_a_time
    def partial_fit(
        self, X: Any, y: Any = None, sample_weight: Any = None, classes: Any = None
    ) -> SGDClassifier:
        """One online pass over a batch. The first call may name every class that will occur
        (``classes``, as in scikit-learn); without it the first batch's labels are the
        classes (a batch of only 0s or 1s: {0, 1}; only -1s: {-1, +1})."""
        if classes is not None and not hasattr(self, "_learner"):
            values = np.unique(label_array(classes, "classes"))
            if len(values) < 2:
                raise ValueError(f"classes must name 2 or more labels, got {values.tolist()!r}")
            self.classes_ = values
        self._partial_fit(X, y, sample_weight)
        return self

    def decision_function(self, X: Any) -> npt.NDArray[np.float64]:
        """Raw scores (margins for the logistic loss; clipped to the label range seen in
        training). Binary: shape ``(n,)``, positive means ``classes_[1]``. Multiclass: shape
        ``(n, classes)``, each class's score."""
        return self._scores(X)

    def predict(self, X: Any) -> npt.NDArray[Any]:
        """Class labels (binary: ``classes_[1]`` where the score is positive; multiclass: the
        class of the highest score)."""
        scores = self._scores(X)
        if scores.ndim == 2:
            return np.asarray(self.classes_[np.argmax(scores, axis=1)])
        labels: npt.NDArray[Any] = np.where(scores > 0, self.classes_[1], self.classes_[0])
        return labels

    def _check_logistic(self) -> None:
        if self.loss != "logistic":
            raise ValueError(f"predict_proba needs loss='logistic', this model uses {self.loss!r}")

    def predict_proba(self, X: Any) -> npt.NDArray[np.float64]:
        """Per row, the probability of each class in ``classes_`` order (logistic loss only;
        multiclass: each class's own probability, normalized to sum to 1)."""
        self._check_logistic()
        positive = self._scores(X, "probability")
        if positive.ndim == 2:
            # Summed class by class, in order, as predict_proba_expr does.
            total = functools.reduce(np.add, positive.T)[:, None]
            return np.asarray(positive / np.where(total > 0, total, 1.0))
        return np.column_stack([1.0 - positive, positive])

    def predict_expr(self, *features: str | pl.Expr) -> pl.Expr:
        """A Polars expression computing :meth:`predict` (class labels) in queries."""
        self._check_fitted()
        if self._multiclass():
            best = pl.concat_list(self._head_exprs(features, "score")).list.arg_max()
            dtype = pl.Series(self.classes_[:1]).dtype
            labels: pl.Expr = best.replace_strict(
                list(range(len(self.classes_))), self.classes_.tolist(), return_dtype=dtype
            )
            return labels
        score = self._score_expr(features, "score")
        low, high = self.classes_.tolist()
        if not all(isinstance(c, int) and not isinstance(c, bool) for c in (low, high)):
            dtype = pl.Series(self.classes_).dtype
            named: pl.Expr = (score > 0).replace_strict(
                [False, True], [low, high], return_dtype=dtype
            )
            return named
        # Arithmetic rather than when/then keeps the input column's name (and nulls stay null).
        step = int(high) - int(low)
        return (score > 0).cast(pl.Int64) * step + int(low)

    def predict_proba_expr(self, *features: str | pl.Expr) -> pl.Expr:
        """A Polars expression of ``P(classes_[1])`` for a binary model; of an array of each
        class's probability (as :meth:`predict_proba`) for a multiclass one (logistic loss
        only)."""
        self._check_logistic()
        if self._multiclass():
            each = self._head_exprs(features, "probability")
            # Summed class by class, in order (as predict_proba does: equal to the bit).
            total = functools.reduce(operator.add, each)
            probabilities: pl.Expr = pl.concat_arr([p / total for p in each])
            return probabilities
        return self._score_expr(features, "probability")

    def decision_function_expr(self, *features: str | pl.Expr) -> pl.Expr:
        """A Polars expression of :meth:`decision_function` (multiclass: an array of each
        class's score)."""
        return self._score_expr(features, "score")


def _class_numbers(
    classes: npt.NDArray[Any], labels: npt.NDArray[Any], first_row: int = 0
) -> npt.NDArray[np.int64]:
    """Each label's position in ``classes``; a label not among them is an error naming it and
    its row (counted from ``first_row``)."""
    try:
        ids = np.minimum(np.searchsorted(classes, labels), len(classes) - 1)
        unseen = classes[ids] != labels
    except TypeError:
        unseen = np.ones(len(labels), dtype=bool)
        ids = np.zeros(len(labels), dtype=np.int64)
    if np.any(unseen):
        row = int(np.flatnonzero(unseen)[0])
        value = labels[row].item() if hasattr(labels[row], "item") else labels[row]
        raise ValueError(
            f"y: row {first_row + row}: label {value!r} is not one of the classes "
            f"{classes.tolist()!r} "
            "(the classes are fixed by fit's labels or partial_fit's first call)"
        )
    return ids.astype(np.int64)


__all__ = ["SGDClassifier", "SGDRegressor"]
