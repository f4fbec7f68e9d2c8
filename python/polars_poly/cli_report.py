"""What ``polars-poly train`` reports as it learns, in Vowpal Wabbit's words: the progressive
table, the holdout loss of multi-pass runs and the summary (``vw``'s shared data, rebuilt from
the rows the learner reports).

A row's record is its label (NaN: none), importance weight, progressive prediction, loss times
weight, feature count and whether it was held out (scored, not learned). The table prints a row
when the weight of the examples seen reaches the next report point: 1, 2, 4, ... by default,
``-P N`` every N, ``-P 1.5`` at 1.5 times the last. From the second pass on, a run with a
holdout prints the holdout loss, marked ``h``, as ``vw`` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]

# Vowpal Wabbit's columns: (width, left-aligned, decimals or None for text).
_COLUMNS = ((8, True), (8, True), (12, False), (14, False), (14, False), (14, False), (8, False))
_TITLES = (
    ("average", "loss"),
    ("since", "last"),
    ("example", "counter"),
    ("example", "weight"),
    ("current", "label"),
    ("current", "predict"),
    ("current", "features"),
)
# Floats carry no label: Vowpal Wabbit's FLT_MAX.
_NO_LABEL = math.inf


def _cells(texts: tuple[str, ...]) -> str:
    out = []
    for text, (width, left) in zip(texts, _COLUMNS, strict=True):
        if len(text) > width:
            text = text[:width]
        out.append(text.ljust(width) if left else text.rjust(width))
    return " ".join(out).rstrip()


def loss_value(loss: str, prediction: float, label: float, tau: float = 0.5) -> float:
    """Vowpal Wabbit's loss of ``prediction`` for ``label`` (logistic: a label in [-1, 1] is
    the share (label + 1) / 2 of a positive label, as ``vw`` reads it)."""
    if loss == "squared":
        return (prediction - label) ** 2
    if loss == "hinge":
        return max(0.0, 1.0 - label * prediction)
    if loss == "quantile":
        e = label - prediction
        return tau * e if e > 0 else -(1.0 - tau) * e
    if loss == "logistic":
        share = (label + 1.0) / 2.0
        positive = math.log1p(math.exp(-prediction)) if prediction > -30 else -prediction
        negative = math.log1p(math.exp(prediction)) if prediction < 30 else prediction
        return share * positive + (1.0 - share) * negative
    raise ValueError(f"no loss {loss!r}")


@dataclass
class VwReport:
    """Vowpal Wabbit's shared data of a run: sums, the report points, the labels seen."""

    out: TextIO | None
    loss: str = "squared"
    tau: float = 0.5
    holdout: bool = False
    progress: str | None = None
    # Learned (or test) examples; held-out examples apart.
    examples: int = 0
    weighted_labeled: float = 0.0
    weighted_unlabeled: float = 0.0
    weighted_labels: float = 0.0
    sum_loss: float = 0.0
    total_features: int = 0
    holdout_loss: float = 0.0
    holdout_weight: float = 0.0
    holdout_best: float = math.inf
    current_pass: int = 0
    # Since the last table row, and since the pass began.
    loss_since_dump: float = 0.0
    old_weighted_labeled: float = 0.0
    holdout_loss_since_dump: float = 0.0
    holdout_weight_since_dump: float = 0.0
    holdout_loss_this_pass: float = 0.0
    holdout_weight_this_pass: float = 0.0
    # The first two distinct labels, and whether there were more (the best constant's).
    observed: list[float] = field(default_factory=list)
    more_labels: bool = False
    dump_interval: float = 1.0
    # The table's rows as numbers (``--history``), kept when ``keep_rows``.
    keep_rows: bool = False
    rows: list[dict[str, object]] = field(default_factory=list)
    adding: bool = False
    step: float = 2.0
    header_printed: bool = False

    def __post_init__(self) -> None:
        if self.progress is not None:
            self.adding = "." not in self.progress
            try:
                value = float(self.progress)
            except ValueError:
                raise ValueError(f"-P / --progress takes a number, got {self.progress!r}") from None
            if self.adding:
                self.step = max(value, 1.0)
                self.dump_interval = self.step
            else:
                self.step = value + 1.0 if value <= 1.0 else value

    def weighted_examples(self) -> float:
        return self.weighted_labeled + self.weighted_unlabeled

    def add(
        self,
        labels: Floats,
        weights: Floats,
        predictions: Floats,
        losses: Floats,
        features: Floats,
        held_out: npt.NDArray[np.bool_],
    ) -> None:
        """Takes the records of a batch of rows, in order, printing the table rows they reach.
        ``labels`` are NaN where a row has none."""
        labeled = ~np.isnan(labels)
        self._count_labels(labels[labeled])
        counted = ~held_out | ~labeled  # a held-out row without a label counts as vw's do
        is_holdout = held_out & labeled
        # Everything is cumulative over the batch; a table row is an index into it.
        w_counted = np.where(counted, weights, 0.0)
        cum_weight = np.cumsum(w_counted)
        start = self.weighted_examples()
        begin = 0
        n = len(labels)
        while begin < n:
            # The next row after which the weight of the examples reaches the report point
            # (vw compares its double sum with a float point).
            base = cum_weight[begin - 1] if begin else 0.0
            reached = start + (cum_weight[begin:] - base) >= self.dump_interval
            reporting = self.out is not None or self.keep_rows
            hits = np.flatnonzero(reached & counted[begin:] & reporting)
            end = n if len(hits) == 0 else begin + int(hits[0]) + 1
            self._accumulate(
                slice(begin, end), labels, labeled, weights, losses, features, counted, is_holdout
            )
            start = self.weighted_examples()
            if len(hits):
                row = end - 1
                label = float(labels[row])
                self._print_row(
                    _NO_LABEL if math.isnan(label) else label,
                    float(predictions[row]),
                    int(features[row]),
                )
            begin = end

    def _count_labels(self, labels: Floats) -> None:
        if self.more_labels or not len(labels):
            return
        for value in np.unique(labels.astype(np.float32)).tolist():
            if value not in self.observed:
                self.observed.append(value)
        # Order of first appearance matters only for which two are kept; vw sorts them anyway.
        if len(self.observed) > 2:
            self.more_labels = True

    def _accumulate(
        self,
        rows: slice,
        labels: Floats,
        labeled: npt.NDArray[np.bool_],
        weights: Floats,
        losses: Floats,
        features: Floats,
        counted: npt.NDArray[np.bool_],
        is_holdout: npt.NDArray[np.bool_],
    ) -> None:
        c, h, lab = counted[rows], is_holdout[rows], labeled[rows]
        w, loss = weights[rows], losses[rows]
        self.examples += int(c.sum())
        self.weighted_labeled += float(w[c & lab].sum())
        self.weighted_unlabeled += float(w[c & ~lab].sum())
        counted_loss = float(loss[c].sum())
        self.sum_loss += counted_loss
        self.loss_since_dump += counted_loss
        self.total_features += int(features[rows][c].sum())
        learned_labeled = c & lab
        # vw's labels are floats, their sum a double.
        single = labels[rows][learned_labeled].astype(np.float32).astype(np.float64)
        self.weighted_labels += float((single * w[learned_labeled]).sum())
        held_loss, held_weight = float(loss[h].sum()), float(w[h].sum())
        self.holdout_loss += held_loss
        self.holdout_weight += held_weight
        self.holdout_loss_since_dump += held_loss
        self.holdout_weight_since_dump += held_weight
        self.holdout_loss_this_pass += held_loss
        self.holdout_weight_this_pass += held_weight

    def _print_row(self, label: float, prediction: float, features: int) -> None:
        if self.out is not None and not self.header_printed:
            for line in range(2):
                print(_cells(tuple(t[line] for t in _TITLES)), file=self.out)
            self.header_printed = True
        holding_out = self.holdout and self.current_pass >= 1
        if holding_out:
            average = _ratio(self.holdout_loss, self.holdout_weight, "unknown")
            since = _ratio(self.holdout_loss_since_dump, self.holdout_weight_since_dump, "unknown")
            self.holdout_loss_since_dump = self.holdout_weight_since_dump = 0.0
        else:
            average = _ratio(self.sum_loss, self.weighted_labeled, "n.a.")
            gained = self.weighted_labeled - self.old_weighted_labeled
            since = _ratio(self.loss_since_dump, gained, "n.a.") if gained else "n.a."
        cells = (
            average,
            since,
            str(self.examples),
            f"{self.weighted_examples():.1f}",
            "unknown" if label == _NO_LABEL else f"{label:.4f}",
            f"{prediction:.4f}",
            str(features),
        )
        if self.out is not None:
            print(_cells(cells) + (" h" if holding_out else ""), file=self.out)
        if self.keep_rows:
            self.rows.append(
                {
                    "examples": self.examples,
                    "weight": self.weighted_examples(),
                    "average_loss": _as_float(average),
                    "loss_since_last": _as_float(since),
                    "holdout": holding_out,
                    "label": None if label == _NO_LABEL else label,
                    "prediction": prediction,
                    "features": features,
                }
            )
        self.loss_since_dump = 0.0
        self.old_weighted_labeled = self.weighted_labeled
        now = self.weighted_examples()
        self.dump_interval = float(np.float32(now + self.step if self.adding else now * self.step))

    def end_pass(self) -> bool:
        """A pass ended: whether its holdout loss is the best so far (vw's rule; a pass with
        no holdout example is no better)."""
        self.current_pass += 1
        if not self.holdout:
            return False
        weight = self.holdout_weight_this_pass
        loss = self.holdout_loss_this_pass / weight if weight > 0 else math.inf
        self.holdout_loss_this_pass = self.holdout_weight_this_pass = 0.0
        if loss < self.holdout_best:
            self.holdout_best = loss
            return True
        return False

    def summary(self) -> str:
        """Vowpal Wabbit's lines after ``finished run``."""
        lines = ["", "finished run"]
        if self.current_pass <= 1:
            lines.append(f"number of examples = {self.examples}")
        else:
            lines.append(f"number of examples per pass = {self.examples // self.current_pass}")
            lines.append(f"passes used = {self.current_pass}")
        lines.append(f"weighted example sum = {self.weighted_examples():.6f}")
        lines.append(f"weighted label sum = {self.weighted_labels:.6f}")
        if not self.holdout:
            average = _ratio(self.sum_loss, self.weighted_labeled, "n.a.")
        elif math.isinf(self.holdout_best):
            average = "undefined (no holdout)"
        else:
            average = f"{self.holdout_best:.6f} h"
        lines.append(f"average loss = {average}")
        best = self.best_constant()
        if best is not None:
            lines.append(f"best constant = {best[0]:.6f}")
            if best[1] is not None:
                lines.append(f"best constant's loss = {best[1]:.6f}")
        lines.append(f"total feature number = {self.total_features}")
        return "\n".join(lines)

    def best_constant(self) -> tuple[float, float | None] | None:
        """Vowpal Wabbit's best constant prediction and its loss (None where vw prints none)."""
        if not self.observed:
            return None
        first = self.observed[0]
        second = self.observed[1] if len(self.observed) > 1 else 0.0
        low, high = min(first, second), max(first, second)
        if low == high:
            return None
        total = self.weighted_labeled
        low_count = (self.weighted_labels - high * total) / (low - high)
        high_count = total - low_count
        if low_count + high_count <= 0:
            return None
        if self.loss == "squared":
            constant = self.weighted_labels / total
        elif self.more_labels:
            return None
        elif self.loss == "hinge":
            constant = -1.0 if high_count <= low_count else 1.0
        elif self.loss == "logistic":
            low, high = -1.0, 1.0
            if low_count <= 0:
                constant = 1.0
            elif high_count <= 0:
                constant = -1.0
            else:
                constant = math.log(high_count / low_count)
        elif self.loss == "quantile":
            constant = high if self.tau * (low_count + high_count) < high_count else low
        else:
            return None
        if self.more_labels:
            return constant, None
        loss = 0.0
        if low_count > 0:
            loss += loss_value(self.loss, constant, low, self.tau) * low_count
        if high_count > 0:
            loss += loss_value(self.loss, constant, high, self.tau) * high_count
        return constant, loss / (low_count + high_count)


def _as_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _ratio(total: float, weight: float, otherwise: str) -> str:
    if total == 0.0 and weight == 0.0:
        return otherwise
    return f"{total / weight:.6f}" if weight else otherwise
