"""One-against-all: a multiclass model as one hashed learner per class, each learning "this
class or not" from the same examples in the same pass (Vowpal Wabbit's ``--oaa``,
scikit-learn's one-vs-rest). :class:`polars_poly.SGDClassifier` uses it when it sees more
than two classes; this module is the model object, the estimator keeps the class labels.

The engine learners are the binary ones, unchanged; the model file holds them in class order
(one ``one_against_all`` section). The progressive loss of the model is the sum over the
classes of each one's binary loss on the example (the objective one-against-all minimizes).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from polars_poly import _internal
from polars_poly._internal import Learner
from polars_poly._lazy import np, pl

if TYPE_CHECKING:
    import numpy.typing as npt


class OneAgainstAll:
    """The learners of a multiclass model, one per class (in the order of ``classes_``), with
    the methods of one engine ``Learner`` the estimator calls."""

    def __init__(self, heads: Sequence[Learner], errors: tuple[float, float] = (0.0, 0.0)) -> None:
        if len(heads) < 3:
            raise ValueError(f"one-against-all needs 3 or more classes, got {len(heads)}")
        self.heads = list(heads)
        # Learn a sparse column's entries as features in the order given, a repeated one twice
        # (Vowpal Wabbit's text, as the command line learns it), not summed. Not stored: how
        # the input is read.
        self.in_order = False
        # What learning does with a row whose numbers overflow single precision: "refuse" (an
        # error naming it) or "vw" (predicted 0, not learned, as vw; ``overflowed`` names the
        # rows of the last batch). Not stored either.
        self.overflow = "refuse"
        self.overflowed: list[tuple[int, str]] = []
        # Σ weight of the examples whose class was mispredicted before learning them, Σ weight:
        # the progressive multiclass error (Vowpal Wabbit's --oaa loss) of one-pass learning.
        self.errors = errors
        # Each class's score of each row of the last batch learned, before learning it (rows x
        # classes): the command line's progressive -p and --probabilities.
        self.progressive_scores: npt.NDArray[np.float64] = np.zeros((0, len(self.heads)))

    @classmethod
    def new(cls, options: dict[str, Any], n_classes: int) -> OneAgainstAll:
        return cls([Learner(options) for _ in range(n_classes)])

    # --------------------------------------------------------------------------- training

    @staticmethod
    def _signed(classes: npt.NDArray[np.float64], k: int) -> pl.Series:
        """Class ``k``'s binary labels from the class numbers: +1 for class k, -1 otherwise."""
        return pl.Series(np.where(classes == k, 1.0, -1.0))

    def learn(
        self,
        features: list[pl.Series],
        labels: pl.Series,
        weights: pl.Series | None = None,
        first_row: int = 0,
    ) -> tuple[float, float]:
        """One progressive pass of every class's learner over the batch (labels: class
        numbers), counting the examples whose class was mispredicted before learning them. The
        engine checks a batch whole before learning it, so a bad row stops the first learner
        before any learns."""
        loss = weight = 0.0
        scores = []
        classes = labels.to_numpy()
        skipped: dict[int, str] = {}
        for k, head in enumerate(self.heads):
            signed = self._signed(classes, k)
            part, weight, progressive = head.learn_recording(
                features, signed, weights, first_row, in_order=self.in_order, overflow=self.overflow
            )
            if self.overflow == "vw":  # only vw's policy skips rows (refusing raises)
                for row, reason in head.take_overflowed_rows():
                    skipped.setdefault(row, reason)
            loss += part
            scores.append(progressive.to_numpy())
        self.overflowed = sorted(skipped.items())
        self.progressive_scores = np.column_stack(scores)
        wrong = np.argmax(self.progressive_scores, axis=1) != classes
        importance = np.ones(len(wrong)) if weights is None else weights.to_numpy()
        errors, total = self.errors
        self.errors = (errors + float(importance[wrong].sum()), total + float(importance.sum()))
        return loss, weight

    def fit(
        self,
        features: list[pl.Series],
        labels: pl.Series,
        weights: pl.Series | None,
        options: dict[str, Any],
    ) -> tuple[int, list[float], list[float], bool, list[tuple[int, float, float, int]]]:
        """Each class's multi-pass fit (its own holdout and early stopping, as scikit-learn's
        one-vs-rest fits each class alone). Per-pass losses sum the classes', a class that
        stopped early counting its last pass. No learning curve (the classes' runs may differ
        in length): ``history_`` records the end."""
        classes = labels.to_numpy()
        reports = [
            head.fit(
                features,
                self._signed(classes, k),
                weights,
                options,
            )
            for k, head in enumerate(self.heads)
        ]
        runs = max(r[0] for r in reports)
        pass_losses = [r[1] for r in reports]
        holdout_losses = [r[2] for r in reports]
        stopped = any(r[3] for r in reports)
        return runs, _summed(pass_losses), _summed(holdout_losses), stopped, []

    def begin_run(self, examples: int) -> None:
        for head in self.heads:
            head.begin_run(examples)

    # --------------------------------------------------------------------------- state

    @property
    def progress(self) -> tuple[int, float, float, int]:
        """(examples, Σ weight·loss summed over the classes, Σ weight, feature updates of all
        the classes)."""
        first = self.heads[0].progress
        loss = sum(h.progress[1] for h in self.heads)
        updates = sum(h.progress[3] for h in self.heads)
        return first[0], loss, first[2], updates

    def scores(self, features: list[pl.Series], output: str = "score") -> npt.NDArray[np.float64]:
        """Each class's score (or with ``output="probability"`` its logistic link) of every
        row: shape (rows, classes)."""
        heads = self.heads
        columns = [np.asarray(h.predict(features, output).to_numpy(), np.float64) for h in heads]
        return np.column_stack(columns)

    def options(self) -> Any:
        """The first class's options, with the largest table of the classes' (growing tables
        grow apart)."""
        options = self.heads[0].options()
        options["bits"] = max(int(h.options()["bits"]) for h in self.heads)
        return options

    def table_load(self) -> float:
        """The fullest class table's load (each class has its own table)."""
        return max(head.table_load() for head in self.heads)

    def namespace_seed(self, k: int) -> int:
        return int(self.heads[0].namespace_seed(k))

    def apple_state(self) -> tuple[int, int, float, int] | None:
        """apple's state of the first class, its expansions counted over all the classes."""
        states = [h.apple_state() for h in self.heads]
        if states[0] is None:
            return None
        first = states[0]
        return (sum(int(s[0]) for s in states if s is not None), first[1], first[2], first[3])

    def apple_parents(self) -> list[Any]:
        return [p for h in self.heads for p in h.apple_parents()]

    def field_crosses(self) -> list[Any]:
        return [c for h in self.heads for c in h.field_crosses()]

    def check_batch(
        self,
        features: list[pl.Series],
        labels: pl.Series,
        weights: pl.Series | None = None,
        first_row: int = 0,
    ) -> None:
        """The checks ``learn`` makes before learning (the classes share features and weights;
        class labels become valid signs)."""
        signed = self._signed(labels.to_numpy(), 0)
        self.heads[0].check_batch(features, signed, weights, first_row)

    def apple_next_expansion(self) -> tuple[int, bool] | None:
        """The first class's (every class learns the same examples on the same schedule)."""
        return self.heads[0].apple_next_expansion()

    def fork(self, ranking: str, linear: bool = False) -> OneAgainstAll:
        """Every class's model forked (``Learner.fork``)."""
        return OneAgainstAll([h.fork(ranking, linear) for h in self.heads], self.errors)

    def field_candidates(self) -> list[Any]:
        return [c for h in self.heads for c in h.field_candidates()]

    @property
    def nbytes(self) -> int:
        return sum(int(h.nbytes) for h in self.heads)

    # --------------------------------------------------------------------------- files

    def to_bytes(self, estimator: str) -> bytes:
        return _internal.heads_to_bytes(self.heads, estimator)

    def save(self, path: str, estimator: str) -> None:
        _internal.save_heads(self.heads, path, estimator)

    def __copy__(self) -> OneAgainstAll:
        return OneAgainstAll([copy.copy(h) for h in self.heads], self.errors)


def _summed(losses: list[list[float]]) -> list[float]:
    """Per pass, the classes' losses summed; a class that stopped early counts its last."""
    passes = max(len(each) for each in losses)
    return [
        float(sum(each[min(p, len(each) - 1)] for each in losses if each)) for p in range(passes)
    ]


__all__ = ["OneAgainstAll"]
