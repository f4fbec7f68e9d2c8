"""Difference-of-squares (DoS) quadratic classifier and linear passive-aggressive baseline.

``DoSClassifier(rank=d)`` scores ``||U z||^2 - ||V z||^2`` on ``z = [x; 1]`` with ``U, V`` of
shape ``d x (n+1)`` and learns by passive-aggressive steps (no learning rate): after each
mistake-or-low-margin example the model moves the least it can to reach margin 1, a 1-D convex
problem solved to machine precision (``src/dos``). ``PassiveAggressiveClassifier`` is the linear
PA baseline with the same API. Multiclass is one-vs-one (majority vote) or one-vs-rest; the
running *aligned* average of each binary model (minimum-norm Lorentz boost + orthogonal
Procrustes, so that symmetric copies of a DoS model average to the same classifier) is snapshotted
every ``averaging`` examples and used for prediction when present.

Inputs: scipy sparse matrices, dense numpy arrays, Polars DataFrames (one sparse column or numeric
columns) and LazyFrames (collected), through the same input adapter as the online learners
(``polars_poly._input``). ``fit`` learns in-memory rows in an order shuffled with the seed
``random_state`` (``shuffle=True``, as scikit-learn's); a LazyFrame and ``partial_fit`` are
learned in their order. The input width is fixed by the first fit: the input's own width, or
``n_features`` when given (text hashed by ``hash_features(..., bits=b)``: ``2**b``, so that later
inputs with other hashed columns fit the same model). Training and scoring release the GIL;
scoring inside queries is the native ``model_predict`` expression; models are saved in the one
model-file format of every estimator (versioned, checksummed).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_poly._estimator import BaseEstimator, ClassifierMixin, FeatureNamesIn, not_fitted
from polars_poly._exclusive import one_call_at_a_time
from polars_poly._input import (
    SCORE_ROWS,
    as_float_array,
    as_polars,
    check_named_columns,
    classes_of,
    frame_columns,
    label_array,
    matrix_rows,
    scored_in_pieces,
    select_alone,
)
from polars_poly._internal import DOS_MAX_FEATURES, PassiveAggressive, shuffled_rows
from polars_poly._params import (
    at_least,
    check_options,
    documented,
    engine_options,
    fields,
    from_engine,
    option,
)
from polars_poly._persist import CLASSES, NAMES, Persistent, StateCheck, optional, plain
from polars_poly._plugin import call_plugin
from polars_poly.sparse import n_features as width_of
from polars_poly.sparse import to_sparse

# The classifiers' input: one sparse column, or a dense C-contiguous float matrix.
Rows = pl.Series | npt.NDArray[Any]
# The widest input a model takes (the engine's): indices below it.
MAX_FEATURES = DOS_MAX_FEATURES


def _rows(
    rows: Rows, start: int, length: int, order: npt.NDArray[np.int64] | None = None
) -> list[pl.Series] | npt.NDArray[Any]:
    """Rows ``start .. start + length`` as the engine takes them (a row slice of a
    C-contiguous matrix is one too); with ``order``, the rows ``order[start : start + length]``
    (gathered into a new batch: the input is not modified, and a dense matrix stays dense)."""
    if order is not None:
        taken = order[start : start + length]
        return [rows.gather(taken)] if isinstance(rows, pl.Series) else rows[taken]
    if isinstance(rows, pl.Series):
        return [rows.slice(start, length)]
    return rows[start : start + length]


def _shuffled_rows(n: int, seed: int | None) -> npt.NDArray[np.int64]:
    """The order ``shuffle`` learns ``n`` in-memory rows in (seed 0 when None): the engine's
    permutation, the one the online learners' ``fit`` takes."""
    return shuffled_rows(n, 0 if seed is None else int(seed)).to_numpy().astype(np.int64)


def _scored(rows: Rows, score: Callable[[Any], npt.NDArray[Any]]) -> npt.NDArray[Any]:
    """``score`` of every row, in pieces (see :func:`scored_in_pieces`)."""
    if isinstance(rows, pl.Series):
        return scored_in_pieces([rows], len(rows), score)
    pieces = [score(rows[start : start + SCORE_ROWS]) for start in range(0, len(rows), SCORE_ROWS)]
    return np.concatenate(pieces) if len(pieces) > 1 else score(rows)


def _n_features_check(value: Any) -> str | None:
    if value is None or (isinstance(value, int | np.integer) and not isinstance(value, bool)):
        if value is None or value >= 1:
            return None
    return "an integer >= 1 or None"


def _unseen_label(classes: npt.NDArray[Any], label: Any, row: int, note: str = "") -> ValueError:
    """The error for a label that is none of the fitted classes, in SGDClassifier's words."""
    value = label.item() if isinstance(label, np.generic) else label
    return ValueError(
        f"y: row {row}: label {value!r} is not one of the classes {classes.tolist()!r}{note} "
        "(the classes are fixed by fit's labels or partial_fit's first call)"
    )


def _labels_of_another_type(classes: npt.NDArray[Any], labels: npt.NDArray[Any]) -> ValueError:
    """The error for labels that cannot be compared with the fitted classes (strings, or an
    object array or a categorical Series, against integer classes): the first label that is
    no class, with its type and the classes'."""
    fitted = classes.tolist()
    kinds = "/".join(sorted({type(c).__name__ for c in fitted}))
    for row, label in enumerate(labels.tolist()):
        try:
            known = label in fitted
        except (TypeError, ValueError):
            known = False
        if not known:
            note = f": a {type(label).__name__} label against {kinds} classes"
            return _unseen_label(classes, label, row, note)
    return ValueError(
        f"y: labels of dtype {labels.dtype} cannot be compared with the classes {fitted!r} "
        f"({kinds} classes)"
    )


@documented({})
class _BasePA(FeatureNamesIn, Persistent, ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Shared fit/predict logic; the model family is the engine option ``rank`` (0: linear)."""

    _model_attribute = "core_"
    # Whether ``random_state`` also seeds the engine's initialization (DoS; the linear model
    # starts from zero weights, with the engine's seed 0).
    _seeds_initialization: ClassVar[bool] = False
    _stored_state: ClassVar[dict[str, StateCheck]] = {
        "classes": CLASSES,
        "feature_columns": optional(NAMES),
    }

    averaging: int | None = option(
        2000,
        "Snapshot every model into its aligned running average every ``averaging`` examples\n"
        "and predict with the averages (None: the last models).",
        engine=True,
    )
    multiclass: str = option(
        "ovo", "``ovo``: one-vs-one, majority vote; ``ovr``: one-vs-rest, argmax.", engine=True
    )
    variant: str = option(
        "pa",
        "``pa``: reach margin 1 exactly; ``pa1``/``pa2``: cap the steps by ``C`` for noisy\n"
        "labels (our extension for DoS, see docs/algorithms.md §5).",
        engine=True,
    )
    C: float = option(
        1.0, "Aggressiveness of ``pa1``/``pa2``.", engine="c", accepted="> 0 (or inf for plain PA)"
    )
    shuffle: bool = option(
        True,
        "``fit`` learns in-memory data (a matrix, a DataFrame) in an order shuffled with the seed\n"
        "``random_state``, as scikit-learn's PassiveAggressiveClassifier does (one pass: one\n"
        "shuffle); sample weights follow their rows. Rows sorted by class otherwise teach the\n"
        "last class last. ``False`` learns the rows in their order. A LazyFrame and\n"
        "``partial_fit`` are learned in their order whatever this says (as the online learners\n"
        "learn a stream). Feature columns of several chunks are copied into one first.",
    )
    random_state: int | None = option(
        None, "The shuffling seed (0 when None).", check=at_least(0, optional=True)
    )
    batch_size: int = option(
        8192, "Rows per engine call (and per progress-bar step).", check=at_least(1)
    )
    progress: bool | None = option(
        None, "tqdm progress bar with the mistake rate (default: when stderr is a TTY)."
    )
    n_features: int | None = option(
        None,
        "Fixed input width (hashed columns: ``2**bits``); None takes the first fit's input's.",
        check=_n_features_check,
    )

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------------------- inputs

    def _series(self, X: Any, fitting: bool = False) -> tuple[Rows, int | None]:
        """Any supported input as one sparse Series (a dense matrix: as one, read in place)
        and the width it declares (None: the Series' own indices). A frame's numeric feature
        columns are remembered when ``fitting`` and read by name afterwards
        (``feature_columns_``), so that columns in another order are not scored by position; a
        frame's one sparse column is read whatever its name, as a matrix is."""
        if isinstance(X, pl.LazyFrame):
            X = X.collect()
        X = as_polars(X)
        if isinstance(X, pl.DataFrame):
            fitted = None if fitting else getattr(self, "feature_columns_", None)
            if fitted is not None:
                names, numeric = self._fitted_frame_columns(X, fitted)
            else:
                names, numeric = frame_columns(X.schema, None, set(), estimator=type(self).__name__)
            sparse = not numeric
            if sparse and len(names) != 1:
                raise ValueError(
                    f"expected one sparse column or only numeric columns, got columns {X.columns}"
                )
            if fitting:
                self.feature_columns_ = None if sparse else names
            series = select_alone(X, names, to_sparse(*names) if numeric else pl.col(names[0]))
            return series, None if sparse else len(names)
        if fitting and hasattr(self, "feature_columns_"):
            del self.feature_columns_
        return matrix_rows(X, min_rows=0)

    @staticmethod
    def _fitted_frame_columns(X: pl.DataFrame, fitted: list[str]) -> tuple[list[str], list[str]]:
        """The columns the model was fitted with, from ``X`` by name (an error naming those
        missing)."""
        missing = [name for name in fitted if name not in X.columns]
        if missing:
            raise ValueError(
                f"X lacks the feature column(s) {missing} the model was fitted with "
                f"({fitted}); it has {X.columns}"
            )
        return frame_columns(X.select(fitted).schema, None, set())

    def _split_target(self, X: Any, y: Any, sample_weight: Any = None) -> tuple[Any, Any, Any]:
        """``(X, y, sample_weight)`` with a target or weights given by column name taken out of
        the frame ``X``."""
        named = {
            k: v for k, v in (("y", y), ("sample_weight", sample_weight)) if isinstance(v, str)
        }
        if not named:
            return X, y, sample_weight
        if isinstance(X, pl.LazyFrame):
            X = X.collect()
        if not isinstance(X, pl.DataFrame):
            raise TypeError(f"{' and '.join(named)} may be a column name only with a Polars frame")
        check_named_columns(X.schema, **named)
        taken = {}
        for what, name in named.items():
            column = X.get_column(name)
            if column.null_count():
                kind = "target" if what == "y" else "sample_weight"
                row = int(column.is_null().arg_true()[0])
                raise ValueError(f"{kind} column {name!r}: row {row} is null")
            taken[what] = column.to_numpy()
        return X.drop(*named.values()), taken.get("y", y), taken.get("sample_weight", sample_weight)

    def _first_series(self, X: Any) -> tuple[Rows, int]:
        """The input of the first fit and the model's width: ``n_features`` when it is set,
        else the width the input has."""
        series, width = self._series(X, fitting=True)
        fixed = self.n_features
        if fixed is not None and width is not None and width != fixed:
            raise ValueError(f"X has {width} features, but n_features={fixed}")
        if fixed is not None:
            return series, int(fixed)
        if width is None:
            assert isinstance(series, pl.Series)  # a matrix always declares its width
            width = max(width_of(series), 1)
            if width > MAX_FEATURES:
                raise self._index_beyond_limit(series)
        elif width > MAX_FEATURES:
            raise ValueError(
                f"X has {width} features: a {type(self).__name__} takes at most {MAX_FEATURES}"
            )
        return series, width

    def _index_beyond_limit(self, series: pl.Series) -> ValueError:
        """The error for a sparse column (the width of a first fit without ``n_features``)
        holding an index the model cannot take, naming its row."""
        tops = series.list.eval(pl.element().struct.field("index")).list.max()
        row = int((tops >= MAX_FEATURES).arg_true()[0])
        return ValueError(
            f"column {series.name!r}, row {row}: feature index {int(tops[row])} is beyond what "
            f"a {type(self).__name__} takes: at most {MAX_FEATURES} features, indices 0 to "
            f"{MAX_FEATURES - 1} (the width is the input's largest index plus one when "
            "n_features is not given)"
        )

    def _checked(self, X: Any) -> Rows:
        """An input to score or continue training with, once fitted."""
        self._fitted_model()
        series, width = self._series(X)
        if width is not None and width != self.n_features_in_:
            raise ValueError(
                f"X has {width} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        return series

    def _fitted_model(self) -> PassiveAggressive:
        core: PassiveAggressive | None = getattr(self, "core_", None)
        if core is None:
            raise not_fitted(self)
        return core

    def _hinted(self, err: ValueError) -> ValueError:
        if self.n_features is None and "out of range" in str(err):
            return ValueError(
                f"{err} (the width was taken from the first fit's input; for hashed "
                "columns pass n_features=2**bits)"
            )
        return err

    # ------------------------------------------------------------------------------ training

    def _new_core(self, n_classes: int, n_features: int) -> PassiveAggressive:
        check_options(self)
        # The linear baseline is rank 0 (seed 0, unused); DoSClassifier's rank overrides it.
        seed = self.random_state if self._seeds_initialization else None
        options = {
            "rank": 0,
            "seed": 0 if seed is None else int(seed),
            **engine_options(self),
            "n_classes": n_classes,
            "n_features": n_features,
        }
        return PassiveAggressive(options)

    def _class_ids(self, y: Any) -> npt.NDArray[np.uint32]:
        labels = np.asarray(y)
        if labels.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {labels.shape}")
        if labels.dtype.kind == "f" and not np.isfinite(labels).all():
            row = int(np.flatnonzero(~np.isfinite(labels))[0])
            raise ValueError(f"label at row {row} is {labels[row]}")
        try:
            ids = np.minimum(np.searchsorted(self.classes_, labels), len(self.classes_) - 1)
            unseen = self.classes_[ids] != labels
        except TypeError:  # labels numpy cannot order against the classes (str against int)
            raise _labels_of_another_type(self.classes_, labels) from None
        if unseen.any():
            row = int(np.flatnonzero(unseen)[0])
            raise _unseen_label(self.classes_, labels[row], row)
        return ids.astype(np.uint32)

    def _batches(self, n_rows: int) -> Iterator[tuple[int, int]]:
        show = self.progress if self.progress is not None else sys.stderr.isatty()
        step = int(self.batch_size)
        starts = range(0, n_rows, step)
        if show and n_rows > step:
            from tqdm.auto import tqdm

            bar = tqdm(total=n_rows, unit="ex", unit_scale=True, desc=type(self).__name__)
            for start in starts:
                stop = min(n_rows, start + step)
                yield start, stop
                stats = self.core_.stats()
                bar.set_postfix(mistake_rate=f"{stats[4] / max(stats[1], 1):.4f}")
                bar.update(stop - start)
            bar.close()
        else:
            for start in starts:
                yield start, min(n_rows, start + step)

    def _learn(
        self, series: Rows, y: Any, sample_weight: Any = None, shuffle: bool = False
    ) -> None:
        """Learns the rows in their order, or (``shuffle``) in the order of
        :func:`_shuffled_rows` with the seed ``random_state``, labels and weights with them."""
        self._learned()
        ids = self._class_ids(y)
        if ids.shape[0] != len(series):
            raise ValueError(f"X has {len(series)} rows but y has {ids.shape[0]} labels")
        weights = _sample_weights(sample_weight, len(series))
        step = int(self.batch_size)
        if len(series) > step or shuffle:
            # Learning goes batch by batch (progress, Ctrl-C): check every batch first, so a bad
            # row anywhere leaves the model as it was. In the given order: an error names the
            # row where it is in the input, shuffled or not.
            for start in range(0, len(series), step):
                try:
                    self.core_.check(_rows(series, start, step), start)
                except ValueError as err:
                    raise self._hinted(err) from None
        order = None
        if shuffle:
            order = _shuffled_rows(len(series), self.random_state)
            if isinstance(series, pl.Series) and series.n_chunks() > 1:
                # Gathering from a column of many chunks (a frame read from parquet) costs
                # several times the learning: it is made contiguous once (a copy).
                series = series.rechunk()
            ids = ids[order]
            weights = None if weights is None else weights[order]
        for start, stop in self._batches(len(series)):
            try:
                part = None if weights is None else weights[start:stop]
                rows = _rows(series, start, stop - start, order)
                self.core_.learn(rows, ids[start:stop], start, part)
            except ValueError as err:
                raise self._hinted(err) from None

    def _start(self, X: Any, classes: Any) -> Rows:
        check_options(self)
        if classes is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        classes = np.asarray(classes)
        if np.iscomplexobj(classes):
            raise ValueError("Complex data not supported: class labels are complex numbers")
        if classes.dtype.kind == "f" and not np.isfinite(classes).all():
            row = int(np.flatnonzero(~np.isfinite(classes))[0])
            raise ValueError(f"label at row {row} is {classes[row]}")
        # As SGDClassifier reads them: continuous labels refused, one class of {0, 1} binary.
        all_classes = classes_of(classes.ravel())
        series, width = self._first_series(X)
        self.classes_ = all_classes
        self.n_features_in_ = int(width)
        self.core_ = self._new_core(len(all_classes), self.n_features_in_)
        return series

    @one_call_at_a_time
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> _BasePA:
        """Trains from scratch on (X, y) in one pass (``y`` and ``sample_weight`` may name
        columns of the frame ``X``): over the rows shuffled with the seed ``random_state`` when
        ``shuffle`` (the default) and ``X`` is in memory (a matrix, a DataFrame), in their order
        otherwise (``shuffle=False``, a LazyFrame). The input is not modified.

        ``sample_weight`` (finite, >= 0; each weight follows its row) scales each example's
        aggressiveness: under ``variant="pa1"``/``"pa2"`` an example of weight w takes a step
        capped by ``C * w`` (for the linear PA-I classifier exactly what learning it w times in
        a row does); plain PA reaches margin 1 whatever the weight. A weight of 0 skips the
        row, as if absent."""
        # A LazyFrame is a stream: learned in its order, as the online learners learn one.
        stream = isinstance(X, pl.LazyFrame)
        X, y, sample_weight = self._split_target(X, y, sample_weight)
        y = label_array(y, "y")
        weights = _sample_weights(sample_weight, len(y))
        if weights is not None and len(weights) and not weights.any():
            # A fit that learns nothing is a mistake; a partial_fit of such a batch is not.
            raise ValueError("Sample weights must contain at least one non-zero number.")
        series = self._start(X, y)
        self._learn(series, y, weights, shuffle=bool(self.shuffle) and not stream)
        return self

    @one_call_at_a_time
    def partial_fit(
        self, X: Any, y: Any, classes: Any = None, sample_weight: Any = None
    ) -> _BasePA:
        """Continues training on the rows in their order (as scikit-learn's ``partial_fit``:
        ``shuffle`` is for ``fit``); the first call needs ``classes`` (all labels that will
        occur). ``sample_weight`` as in :meth:`fit`."""
        X, y, sample_weight = self._split_target(X, y, sample_weight)
        y = label_array(y, "y")
        if not hasattr(self, "core_"):
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            series = self._start(X, classes)
        else:
            series = self._checked(X)
        self._learn(series, y, sample_weight)
        return self

    # ------------------------------------------------------------------------------- scoring

    def predict(self, X: Any) -> npt.NDArray[Any]:
        """Predicted labels (from the aligned averages when averaging is on)."""
        series = self._checked(X)
        try:
            ids = _scored(series, self.core_.predict)
        except ValueError as err:
            raise self._hinted(err) from None
        return np.asarray(self.classes_[ids])

    def decision_function(self, X: Any) -> npt.NDArray[np.float64]:
        """Binary: the score oriented towards ``classes_[1]`` (shape ``(n,)``). Multiclass:
        one-vs-rest scores ``(n, C)``, or one-vs-one pairwise scores ``(n, C(C-1)/2)`` in pair
        order (0,1), (0,2), ..., positive towards the first class of the pair."""
        series = self._checked(X)
        try:
            averaged = self.averaging is not None
            scores = _scored(series, lambda part: self.core_.decision_scores(part, averaged))
        except ValueError as err:
            raise self._hinted(err) from None
        n = len(self.classes_)
        n_models = n * (n - 1) // 2 if self.multiclass == "ovo" else n
        scores = scores.reshape(len(series), n_models)
        if n == 2 and scores.shape[1] == 1:
            return np.asarray(-scores[:, 0])
        if n == 2:  # one-vs-rest with two classes: model 1 is class 1
            return np.asarray(scores[:, 1])
        return np.asarray(scores)

    def predict_expr(self, features: str | pl.Expr) -> pl.Expr:
        """A Polars expression computing :meth:`predict` on a sparse column, usable in lazy and
        streaming queries (the native scoring expression, elementwise)."""
        core = self._fitted_model()
        expr = pl.col(features) if isinstance(features, str) else features
        carried, kwargs = self._carried()
        ids = call_plugin(
            "model_predict",
            [expr, *carried],
            {"handle": core.handle, "output": "class_id", **kwargs},
        )
        dtype = pl.Series(self.classes_[:1]).dtype
        return ids.replace_strict(
            list(range(len(self.classes_))), self.classes_.tolist(), return_dtype=dtype
        )

    # --------------------------------------------------------------------------- persistence

    def _estimator_text(self) -> str:
        # numpy scalars (a seed from np.arange) as JSON's numbers and booleans.
        params = {
            f.name: plain(getattr(self, f.name))
            for f in fields(self)
            if not f.metadata.get("engine")
        }
        state = {
            "estimator": type(self).__name__,
            "params": params,
            "classes": self.classes_.tolist(),
            "feature_columns": getattr(self, "feature_columns_", None),
        }
        return json.dumps(state)

    @classmethod
    def _from_model(cls, model: Any, state: dict[str, Any]) -> Any:
        options = model.options()
        if state.get("classes") is None or len(state["classes"]) != options["n_classes"]:
            raise ValueError(f"the classes {state.get('classes')!r} are not the model's")
        params = dict(state["params"])
        if cls._seeds_initialization and "random_state" not in params:
            # Files before shuffle=True kept DoS's seed as the engine's only.
            params["random_state"] = options["seed"]
        estimator = cls(**params, **from_engine(cls, options))
        estimator.core_ = model
        estimator.classes_ = np.asarray(state["classes"])
        estimator.n_features_in_ = options["n_features"]
        if state.get("feature_columns") is not None:  # files before 2026-11-26 have none
            estimator.feature_columns_ = list(state["feature_columns"])
        return estimator


def _sample_weights(sample_weight: Any, n_rows: int) -> npt.NDArray[np.float64] | None:
    """The weights as floats, all checked before anything is learned (a bad weight in a later
    batch must not leave the earlier ones learned)."""
    if sample_weight is None:
        return None
    if np.isscalar(sample_weight):
        weights = np.full(n_rows, float(sample_weight))  # type: ignore[arg-type]
    else:
        weights = as_float_array(sample_weight, "sample_weight")
    if weights.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} rows but sample_weight has {weights.shape[0]} values")
    bad = ~(np.isfinite(weights) & (weights >= 0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"sample_weight: row {row} is {weights[row]}; weights must be finite and >= 0"
        )
    return weights


@documented({})
class DoSClassifier(_BasePA):
    """Difference-of-squares quadratic classifier of rank ``rank`` trained by passive-aggressive
    steps; ``variant="pa1"``/``"pa2"`` cap steps by ``C`` for noisy labels (our extension).

    ``fit`` makes one pass over in-memory rows (a matrix, a DataFrame) shuffled with the seed
    ``random_state`` (``shuffle=True``, as scikit-learn's PassiveAggressiveClassifier), labels
    and sample weights with their rows; ``shuffle=False``, ``partial_fit`` and a LazyFrame
    learn the rows in the order given.

    [parameters]

    Examples
    --------
    The sign of ``x0 * x1`` (an XOR of signs): a difference of two squares, out of reach of a
    linear classifier.

    >>> import polars_poly as pp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 2))
    >>> y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> dos = pp.DoSClassifier(rank=2).fit(X, y)
    >>> linear = pp.PassiveAggressiveClassifier().fit(X, y)
    >>> dos.score(X, y) > 0.85, linear.score(X, y) < 0.6
    (True, True)
    """

    rank: int = option(
        4,
        "Rank d of U and V (d x (n + 1) each).",
        engine=True,
        check=at_least(1),
        positional=True,
    )
    random_state: int | None = option(
        None,
        "Seeds the N(0, 1/#elements) initialization and the shuffling (0 when None).",
        check=at_least(0, optional=True),
    )

    _seeds_initialization: ClassVar[bool] = True


@documented({})
class PassiveAggressiveClassifier(_BasePA):
    """Linear passive-aggressive classifier (the DoS paper's baseline), same API as
    :class:`DoSClassifier`.

    ``fit`` makes one pass over in-memory rows (a matrix, a DataFrame) shuffled with the seed
    ``random_state`` (``shuffle=True``, as scikit-learn's PassiveAggressiveClassifier), labels
    and sample weights with their rows; ``shuffle=False``, ``partial_fit`` and a LazyFrame
    learn the rows in the order given.

    [parameters]
    """


__all__ = ["DoSClassifier", "PassiveAggressiveClassifier"]
