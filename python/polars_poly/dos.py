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
columns) and LazyFrames (collected). The input width is fixed by the first fit: the input's own
width, or ``n_features`` when given (text hashed by ``hash_features(..., bits=b)``: ``2**b``, so
that later inputs with other hashed columns fit the same model). Training and scoring release the
GIL; models are saved as a
versioned ``.npz`` (a zip archive: every member is CRC-32 checked on load).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt
import polars as pl
import scipy.sparse as sp

from polars_poly._estimator import BaseEstimator, ClassifierMixin
from polars_poly._internal import PaCore
from polars_poly.sparse import to_scipy

Variant = Literal["pa", "pa1", "pa2"]
Strategy = Literal["ovo", "ovr"]
FORMAT = "polars-poly-pa"
FORMAT_VERSION = 1


# What the engine reads: a scipy CSR matrix, or a C-contiguous float32/float64 dense matrix
# (read in place, zeros skipped: images need no CSR round trip).
_Matrix: TypeAlias = sp.csr_array | npt.NDArray[np.float32] | npt.NDArray[np.float64]


def _matrix(X: Any, n_features: int | None = None) -> _Matrix:
    """Any supported input as a CSR array or a C-contiguous float dense array (sparse columns
    of a frame are used as they are)."""
    if isinstance(X, pl.LazyFrame):
        X = X.collect()
    if isinstance(X, pl.DataFrame):
        sparse = [c for c, t in X.schema.items() if isinstance(t, pl.List)]
        if sparse:
            if len(sparse) != 1 or X.width != 1:
                raise ValueError(
                    f"expected one sparse column or only numeric columns, got columns {X.columns}"
                )
            series = X.get_column(sparse[0])
            if n_features is None:
                from polars_poly.sparse import n_features as width_of

                n_features = width_of(series)
            return to_scipy(series, n_features)
        other = [
            f"{c!r} ({t})" for c, t in X.schema.items() if not (t.is_numeric() or t == pl.Boolean)
        ]
        if other:
            raise TypeError(
                f"expected numeric feature columns, got {', '.join(other)} (hash strings and "
                "token lists into a sparse column with polars_poly.hash_features)"
            )
        X = X.to_numpy()
    if sp.issparse(X):
        return sp.csr_array(X)
    dense = np.asarray(X)
    if dense.ndim != 2:
        raise ValueError(f"expected a 2-D input, got {dense.ndim} dimension(s)")
    if dense.dtype.kind not in "biuf":
        raise TypeError(f"expected numeric features, got dtype {dense.dtype}")
    if dense.dtype not in (np.float32, np.float64):
        dense = dense.astype(np.float64)
    return np.ascontiguousarray(dense)


_CsrArrays: TypeAlias = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]


def _examples(X: _Matrix) -> _CsrArrays | npt.NDArray[np.float32] | npt.NDArray[np.float64]:
    """The argument the engine's learn/predict take for a matrix from :func:`_matrix`."""
    if isinstance(X, np.ndarray):
        return X
    return (
        X.indptr.astype(np.int64, copy=False),
        X.indices.astype(np.int64, copy=False),
        X.data.astype(np.float64, copy=False),
    )


class _BasePA(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Shared fit/predict logic; subclasses fix the model family through ``_rank``."""

    def __init__(
        self,
        *,
        averaging: int | None = 2000,
        multiclass: Strategy = "ovo",
        variant: Variant = "pa",
        C: float = 1.0,
        batch_size: int = 8192,
        progress: bool | None = None,
        n_features: int | None = None,
    ) -> None:
        self.averaging = averaging
        self.multiclass = multiclass
        self.variant = variant
        self.C = C
        self.batch_size = batch_size
        self.progress = progress
        self.n_features = n_features

    def _rank(self) -> int:
        raise NotImplementedError

    def _first_matrix(self, X: Any) -> _Matrix:
        """The input of the first fit, at the fixed width ``n_features`` when it is set (hashed
        columns: ``2**bits``), else at the width the input has."""
        width = self.n_features
        if width is not None and (not isinstance(width, int | np.integer) or width < 1):
            raise ValueError(f"n_features must be an integer >= 1 or None, got {width!r}")
        matrix = _matrix(X, None if width is None else int(width))
        if width is not None and matrix.shape[1] != width:
            raise ValueError(f"X has {matrix.shape[1]} features, but n_features={width}")
        return matrix

    def _seed(self) -> int:
        return 0

    def _new_core(self, n_classes: int, n_features: int) -> PaCore:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        return PaCore(
            n_classes,
            n_features,
            self._rank(),
            self._seed(),
            self.variant,
            float(self.C),
            self.multiclass,
            self.averaging,
        )

    def _class_ids(self, y: Any) -> npt.NDArray[np.uint32]:
        labels = np.asarray(y)
        if labels.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {labels.shape}")
        if labels.dtype.kind == "f" and not np.isfinite(labels).all():
            row = int(np.flatnonzero(~np.isfinite(labels))[0])
            raise ValueError(f"label at row {row} is {labels[row]}")
        ids = np.searchsorted(self.classes_, labels)
        ids = np.minimum(ids, len(self.classes_) - 1)
        unseen = self.classes_[ids] != labels
        if unseen.any():
            row = int(np.flatnonzero(unseen)[0])
            raise ValueError(
                f"label {labels[row].item()!r} at row {row} is not one of the classes "
                f"{self.classes_.tolist()!r}"
            )
        return ids.astype(np.uint32)

    def _batches(self, n_rows: int) -> Iterator[tuple[int, int]]:
        show = self.progress if self.progress is not None else sys.stderr.isatty()
        starts = range(0, n_rows, self.batch_size)
        if show and n_rows > self.batch_size:
            from tqdm.auto import tqdm

            bar = tqdm(total=n_rows, unit="ex", unit_scale=True, desc=type(self).__name__)
            for start in starts:
                stop = min(n_rows, start + self.batch_size)
                yield start, stop
                stats = self.core_.stats()
                bar.set_postfix(mistake_rate=f"{stats[4] / max(stats[1], 1):.4f}")
                bar.update(stop - start)
            bar.close()
        else:
            for start in starts:
                yield start, min(n_rows, start + self.batch_size)

    def _learn(self, X: _Matrix, y: Any) -> None:
        ids = self._class_ids(y)
        if ids.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {ids.shape[0]} labels")
        for start, stop in self._batches(X.shape[0]):
            self.core_.learn(_examples(X[start:stop]), ids[start:stop], start)

    def fit(self, X: Any, y: Any) -> _BasePA:
        """Trains from scratch on (X, y), one pass in row order."""
        matrix = self._first_matrix(X)
        classes = np.unique(np.asarray(y))
        if len(classes) < 2:
            raise ValueError(f"need at least 2 classes to fit, got {list(classes)!r}")
        self.classes_ = classes
        self.n_features_in_ = int(matrix.shape[1])
        self.core_ = self._new_core(len(classes), self.n_features_in_)
        self._learn(matrix, y)
        return self

    def partial_fit(self, X: Any, y: Any, classes: Any = None) -> _BasePA:
        """Continues training; the first call needs ``classes`` (all labels that will occur)."""
        if not hasattr(self, "core_"):
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            all_classes = np.unique(np.asarray(classes))
            if len(all_classes) < 2:
                raise ValueError(f"need at least 2 classes, got {list(all_classes)!r}")
            matrix = self._first_matrix(X)
            self.classes_ = all_classes
            self.n_features_in_ = int(matrix.shape[1])
            self.core_ = self._new_core(len(all_classes), self.n_features_in_)
        else:
            matrix = self._checked(X)
        self._learn(matrix, y)
        return self

    def _checked(self, X: Any) -> _Matrix:
        if not hasattr(self, "core_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet: call fit first")
        try:
            matrix = _matrix(X, self.n_features_in_)
        except ValueError as err:
            if self.n_features is None and "out of range" in str(err):
                raise ValueError(
                    f"{err} (the width was taken from the first fit's input; for hashed "
                    "columns pass n_features=2**bits)"
                ) from err
            raise
        if matrix.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {matrix.shape[1]} features, the model was fitted with {self.n_features_in_}"
            )
        return matrix

    def _use_average(self) -> bool:
        return self.averaging is not None

    def predict(self, X: Any) -> npt.NDArray[Any]:
        """Predicted labels (from the aligned averages when averaging is on)."""
        matrix = self._checked(X)
        ids = self.core_.predict(_examples(matrix), self._use_average())
        return np.asarray(self.classes_[ids])

    def decision_function(self, X: Any) -> npt.NDArray[np.float64]:
        """Binary: the score oriented towards ``classes_[1]`` (shape ``(n,)``). Multiclass:
        one-vs-rest scores ``(n, C)``, or one-vs-one pairwise scores ``(n, C(C-1)/2)`` in pair
        order (0,1), (0,2), ..., positive towards the first class of the pair."""
        matrix = self._checked(X)
        scores = self.core_.decision_scores(_examples(matrix), self._use_average())
        n = len(self.classes_)
        n_models = n * (n - 1) // 2 if self.multiclass == "ovo" else n
        scores = scores.reshape(matrix.shape[0], n_models)
        if len(self.classes_) == 2 and scores.shape[1] == 1:
            return np.asarray(-scores[:, 0])
        if len(self.classes_) == 2:  # one-vs-rest with two classes: model 1 is class 1
            return np.asarray(scores[:, 1])
        return np.asarray(scores)

    def predict_expr(self, features: str | pl.Expr) -> pl.Expr:
        """A Polars expression computing :meth:`predict` on a sparse column, usable in lazy and
        streaming queries (elementwise: each batch is scored independently)."""
        self._checked(sp.csr_array((1, self.n_features_in_)))
        expr = pl.col(features) if isinstance(features, str) else features
        dtype = pl.Series(self.classes_[:1]).dtype
        width = self.n_features_in_

        def score(batch: pl.Series) -> pl.Series:
            return pl.Series(batch.name, self.predict(to_scipy(batch, width)), dtype=dtype)

        return expr.map_batches(score, return_dtype=dtype, is_elementwise=True)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the fitted model to ``path`` (``.npz``; format documented in the README)."""
        self._checked(sp.csr_array((1, self.n_features_in_)))
        parts = self.core_.export()
        strategy, n_classes, n_features, rank, interval, seen, stats, models, averages = parts
        meta = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "estimator": type(self).__name__,
            "params": self.get_params(),
            "strategy": strategy,
            "n_classes": n_classes,
            "n_features": n_features,
            "rank": rank,
            "averaging_interval": interval,
            "seen": seen,
            "stats": list(stats),
            "average_counts": [count for _, count in averages],
            "has_average": [avg is not None for avg, _ in averages],
        }
        # Missing averages (no snapshot yet) are stored as zeros; "has_average" says which.
        stored = [
            avg if avg is not None else [0.0] * len(models[m])
            for m, (avg, _) in enumerate(averages)
        ]
        np.savez(
            path,
            meta=np.array(json.dumps(meta)),
            classes=self.classes_,
            models=np.array(models, dtype=np.float64),
            averages=np.array(stored, dtype=np.float64),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Any:
        """Reads a model written by :meth:`save`; a file that is not one, or is damaged, raises
        ``ValueError``."""
        try:
            with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as archive:
                meta = json.loads(str(archive["meta"]))
                classes = archive["classes"]
                models = archive["models"]
                averages = archive["averages"]
        except (OSError, ValueError, KeyError, EOFError) as err:
            raise ValueError(f"{path}: not a polars-poly PA/DoS model file ({err})") from err
        except Exception as err:  # zipfile.BadZipFile, CRC errors
            raise ValueError(f"{path}: damaged model file ({err})") from err
        if meta.get("format") != FORMAT or meta.get("version") != FORMAT_VERSION:
            raise ValueError(f"{path}: not a polars-poly PA/DoS model file (format {meta!r})")
        target = {c.__name__: c for c in (DoSClassifier, PassiveAggressiveClassifier)}
        estimator_class = target.get(meta["estimator"])
        if estimator_class is None or (cls is not _BasePA and not issubclass(estimator_class, cls)):
            raise ValueError(f"{path}: holds a {meta['estimator']}, not a {cls.__name__}")
        estimator = estimator_class(**meta["params"])
        average_parts = [
            ([float(v) for v in averages[m]] if has else None, count)
            for m, (has, count) in enumerate(
                zip(meta["has_average"], meta["average_counts"], strict=True)
            )
        ]
        estimator.core_ = PaCore.restore(
            meta["strategy"],
            meta["n_classes"],
            meta["n_features"],
            meta["rank"],
            meta["averaging_interval"],
            meta["seen"],
            tuple(meta["stats"]),
            [list(map(float, m)) for m in models],
            average_parts,
            estimator.variant,
            float(estimator.C),
        )
        estimator.classes_ = classes
        estimator.n_features_in_ = meta["n_features"]
        return estimator


class DoSClassifier(_BasePA):
    """Difference-of-squares quadratic classifier of rank ``rank`` trained by passive-aggressive
    steps; ``variant="pa1"``/``"pa2"`` cap steps by ``C`` for noisy labels (our extension, see
    the README). ``random_state`` seeds the N(0, 1/#elements) initialization."""

    def __init__(
        self,
        rank: int = 4,
        *,
        averaging: int | None = 2000,
        multiclass: Strategy = "ovo",
        variant: Variant = "pa",
        C: float = 1.0,
        random_state: int = 0,
        batch_size: int = 8192,
        progress: bool | None = None,
        n_features: int | None = None,
    ) -> None:
        super().__init__(
            averaging=averaging,
            multiclass=multiclass,
            variant=variant,
            C=C,
            batch_size=batch_size,
            progress=progress,
            n_features=n_features,
        )
        self.rank = rank
        self.random_state = random_state

    def _rank(self) -> int:
        if not isinstance(self.rank, int | np.integer) or self.rank < 1:
            raise ValueError(f"rank must be an integer >= 1, got {self.rank!r}")
        return int(self.rank)

    def _seed(self) -> int:
        if not isinstance(self.random_state, int | np.integer) or self.random_state < 0:
            raise ValueError(f"random_state must be an integer >= 0, got {self.random_state!r}")
        return int(self.random_state)


class PassiveAggressiveClassifier(_BasePA):
    """Linear passive-aggressive classifier (the DoS paper's baseline), same API as
    :class:`DoSClassifier`."""

    def _rank(self) -> int:
        return 0
