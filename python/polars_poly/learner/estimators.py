"""The two estimators: ``SGDRegressor`` and ``SGDClassifier``."""

from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING, Any

from polars_poly._estimator import (
    ClassifierMixin,
    RegressorMixin,
)
from polars_poly._exclusive import one_call_at_a_time
from polars_poly._input import (
    classes_of,
    label_array,
)
from polars_poly._internal import Learner
from polars_poly._lazy import np, pl
from polars_poly._params import (
    documented,
    option,
)
from polars_poly.learner._base import _BaseSGD
from polars_poly.learner._data import (
    _NAMES,
)
from polars_poly.multiclass import OneAgainstAll

if TYPE_CHECKING:
    import numpy.typing as npt


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
    table_load_ : float
        About the share of the model's features that share a weight slot with another (those
        seen since a growing table last grew): above 0.1 in a fixed table, or in a growing one
        at its ``max_bits``, the fit warns (``TableSaturationWarning``).
    bits_ : int
        The weight table's size after the fit (``2**bits_`` entries): ``bits``, or where a
        growing table (``bits=None``) got to.
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
    >>> abs(round(pp.SGDRegressor().fit(X, y).score(X, y), 1))  # the linear model: nothing
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
        """Predictions (clipped to the label range seen in training). ``X``: a frame, an array,
        or a Vowpal Wabbit file's path (read as the model's namespaces)."""
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
    table_load_ : float
        As :class:`SGDRegressor`'s (multiclass: the fullest class table).
    bits_ : int
        As :class:`SGDRegressor`'s (multiclass: the largest class table).
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
    [(0.126, 1, 0.592), (-0.132, 0, 0.334), (0.64, 1, 0.923)]

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
            learner = OneAgainstAll.new(options, len(self.classes_))
            # The command line learns Vowpal Wabbit text as vw: features in file order, and a
            # row that overflows single precision predicted 0 and not learned.
            vw_text = bool(self.__dict__.get("_in_file_order", False))
            learner.in_order = vw_text
            learner.overflow = "vw" if vw_text else "refuse"
            return learner
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
        # The command line's vw emulation learns a label out of --oaa's classes as vw does:
        # every class's head a negative example (cli/_indexing.py).
        negative = self._multiclass() and getattr(self, "_vw_unseen_labels", False)
        ids = _class_numbers(classes, labels, first_row, negative)
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
        ``(n, classes)``, each class's score. ``X``: a frame, an array, or a Vowpal Wabbit
        file's path (read as the model's namespaces)."""
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
    classes: npt.NDArray[Any],
    labels: npt.NDArray[Any],
    first_row: int = 0,
    unseen_as_none: bool = False,
) -> npt.NDArray[np.int64]:
    """Each label's position in ``classes``; a label not among them is an error naming it and
    its row (counted from ``first_row``), or with ``unseen_as_none`` the position -1 (no
    class's: every one-against-all head learns it as a negative)."""
    try:
        ids = np.minimum(np.searchsorted(classes, labels), len(classes) - 1)
        unseen = classes[ids] != labels
    except TypeError:
        unseen = np.ones(len(labels), dtype=bool)
        ids = np.zeros(len(labels), dtype=np.int64)
    if unseen_as_none:
        return np.where(unseen, -1, ids).astype(np.int64)
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
