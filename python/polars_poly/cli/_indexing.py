"""``--oaa``'s class numbering as Vowpal Wabbit decides it while it reads (``oaa.cc``).

Without ``--indexing`` vw numbers the classes 1..K until the first example labelled 0 or K:
a 0 makes the classes 0..K-1 from that example on (the examples before stay learned as
1..K: class c was head c - 1, it is head c now), a K keeps 1..K. Once decided, a label out of
the range is renamed 0 (0..K-1) or K (1..K) with a warning, yet learned as no class's (every
head a negative example: vw tests the heads against the label it read) and counted an error
whatever the prediction. The model keeps one numbering, ``classes_`` (1..K, or 0..K-1 when the first
label is 0 or ``--indexing 0`` says so): :class:`VwIndexing` turns each example's label into
the class of that numbering that vw's head learns, and says per example how vw prints its
classes (``-p``, the table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from polars_poly._lazy import np

if TYPE_CHECKING:
    import numpy.typing as npt


class VwIndexing:
    """The numbering state of one run over ``k`` classes numbered from ``base`` (the model's
    ``classes_[0]``); ``decided``: whether the numbering is fixed from the start (``--indexing``
    given, or the model's first label was 0)."""

    def __init__(self, k: int, base: int, decided: bool) -> None:
        self.k, self.base = k, base
        # None until decided; then 0 (classes 0..K-1) or 1 (1..K).
        self.indexing: int | None = base if decided else None
        self.warnings: list[str] = []

    def translate(
        self, labels: npt.NDArray[np.float64], first_example: int
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """For a batch of labels whose first is example ``first_example`` (0-based): the class
        of the model's numbering each example is learned as (-1 for a label out of the classes:
        no class's), the offset that turns a class of the model's numbering into the name vw
        prints for it (``name = class - offset``), and the head whose probability vw's
        multiclass log loss takes for each example."""
        n, k = len(labels), self.k
        zero_based = np.zeros(n, dtype=bool)
        checked = np.zeros(n, dtype=bool)  # rows whose numbering is decided: labels validated
        if self.indexing is None:
            hits = np.flatnonzero((labels == 0) | (labels == k))
            if hits.size:
                first = int(hits[0])
                self.indexing = 0 if labels[first] == 0 else 1
                checked[first:] = True
                zero_based[first:] = self.indexing == 0
        else:
            checked[:] = True
            zero_based[:] = self.indexing == 0
        # The model's class of each example: vw's label shifted into the model's numbering
        # (a model numbered 1..K learns vw's class c of 0..K-1 as c + 1: the same head).
        offset = np.where(zero_based & (self.base == 1), 1, 0).astype(np.int64)
        classes = labels + offset
        # Decided numberings validate the labels as vw does: out of range is 0 or K.
        low, high = np.where(zero_based, 0, 1), np.where(zero_based, k - 1, k)
        relabeled = checked & ((labels < low) | (labels > high) | (labels != np.floor(labels)))
        # vw's log loss reads the head of the label as read, wrapping as its unsigned ints do.
        index = labels.astype(np.int64) - np.where(zero_based, 0, 1)
        heads = np.mod(np.mod(index, 2**32), k)
        if relabeled.any():
            to = np.where(zero_based, 0, k)
            classes[relabeled] = -1.0
            for row in np.flatnonzero(relabeled)[:3]:
                self.warnings.append(
                    f"[warning] example {first_example + row + 1}: label {labels[row]:g} is not "
                    f"in {{{low[row]},{high[row]}}}: read as {to[row]}, learned as no class's "
                    "(an error whatever the prediction), as vw does"
                )
        return classes, offset, heads
