"""Models that learn in pieces (one against all, apple's ranking race): each example that
brings the count to a power of two scored, then learned, and its row of Vowpal Wabbit's
progressive table printed here (:class:`ProgressTable`), then the summary."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

import polars_poly as pp
from polars_poly._lazy import np, pl
from polars_poly.cli._data import batches
from polars_poly.cli._model import _fitted

if TYPE_CHECKING:
    import numpy.typing as npt


class ProgressTable:
    """Vowpal Wabbit's progressive table: one row at 1, 2, 4, ... examples."""

    HEADER = (
        f"{'average':>10} {'since':>10} {'example':>12} {'example':>10} {'current':>9} "
        f"{'current':>9} {'current':>9}\n"
        f"{'loss':>10} {'last':>10} {'counter':>12} {'weight':>10} {'label':>9} "
        f"{'predict':>9} {'features':>9}"
    )

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.last = (0.0, 0.0)
        print(self.HEADER, file=out)

    def row(self, model: Any, label: float, predicted: float, features: int) -> None:
        examples, loss, weight, _ = model._learner.progress
        errors = getattr(model._learner, "errors", None)
        if errors is not None:  # one against all: the multiclass error, as vw --oaa prints
            loss, weight = errors
        since = (loss - self.last[0]) / max(weight - self.last[1], 1e-300)
        self.last = (loss, weight)
        print(
            f"{loss / max(weight, 1e-300):>10.6f} {since:>10.6f} {examples:>12d} "
            f"{weight:>10.1f} {label:>9.4f} {predicted:>9.4f} {features:>9d}",
            file=self.out,
        )


def _train_in_pieces(
    args: argparse.Namespace,
    model: Any,
    frame: pl.LazyFrame,
    label: str,
    weight: str | None,
    report_to: TextIO | None,
    predictions: TextIO | None,
) -> None:
    """One-against-all and apple's race: each table row's example scored, then learned; with
    ``predictions`` (``-p``, one against all), each example's class as predicted before it was
    learned, with its tag, as ``vw --oaa`` writes them."""
    holdout = args.passes > 1 and not args.holdout_off
    multiclass = len(getattr(model, "classes_", ())) > 2
    if args.testonly or args.progress or holdout or (predictions and not multiclass):
        raise ValueError(
            "-t, -P and passes with a holdout need one engine model: not --oaa, and not "
            "--stage_poly's race of rankings, which -p needs too (give --holdout_off with "
            "--passes)"
        )
    classes = None
    if isinstance(model, pp.SGDClassifier) and not _fitted(model):
        classes = model.classes_.tolist()
    table = None if report_to is None else ProgressTable(report_to)
    start = model._learner.progress if _fitted(model) else (0, 0.0, 0.0, 0)
    label_sum = 0.0
    for _ in range(args.passes):
        for batch in batches(frame):
            predicted = learn_batch(model, batch, label, weight, classes, table)
            if predictions is not None:
                _write_classes(predictions, model.classes_[predicted], batch)
            if not multiclass:  # vw sums no multiclass labels
                w = batch[weight] if weight else 1.0
                label_sum += float((batch[label].cast(pl.Float32).cast(pl.Float64) * w).sum())
    if args.history:
        # partial_fit records each call's end; keep the doublings (and the end), as the table.
        examples = pl.col("examples")
        doublings = (examples & (examples - 1) == 0) | (examples == examples.max())
        model.history_.filter(doublings).write_csv(args.history)
    if report_to is None:
        return
    # This run's part of the model's progress record (vw reports the run, not the model).
    now = model._learner.progress
    examples, loss, weight_sum = now[0] - start[0], now[1] - start[1], now[2] - start[2]
    updates = now[3] - start[3]
    errors = getattr(model._learner, "errors", None)
    if errors is not None:
        loss, updates = errors[0], updates // len(model._learner.heads)
    counts = f"number of examples = {examples}"
    if args.passes > 1:
        counts = f"number of examples per pass = {examples // args.passes}\n"
        counts += f"passes used = {args.passes}"
    print(
        f"\nfinished run\n{counts}\nweighted example sum = {weight_sum:.6f}\n"
        f"weighted label sum = {label_sum:.6f}\n"
        f"average loss = {loss / max(weight_sum, 1e-300):.6f}\n"
        f"total feature number = {updates}",
        file=report_to,
    )


def learn_batch(
    model: Any,
    batch: pl.DataFrame,
    label: str,
    weight: str | None,
    classes: list[Any] | None,
    table: ProgressTable | None,
) -> npt.NDArray[np.int64]:
    """Learns a batch of examples; with a table, the example that brings the count to a power
    of two is scored first and gets its row (as ``vw`` prints them). Returns, for a model of
    more than two classes, the class (its position) each row was predicted before it was
    learned (else nothing)."""
    if batch[label].null_count():
        first = int(batch[label].is_null().arg_true()[0]) + _examples(model)
        raise ValueError(f"example {first + 1} has no label")
    progressive: list[npt.NDArray[np.int64]] = []

    def learn(rows: pl.DataFrame) -> None:
        model.partial_fit(rows, label, weight, **_first(classes, model))
        classes_predicted = getattr(model._learner, "predicted", None)
        if classes_predicted is not None:
            progressive.append(classes_predicted)

    start = 0
    while start < batch.height:
        seen = _examples(model)
        if table is None:
            end = batch.height
        else:
            next_row = 1 << seen.bit_length()  # the next power of two above the count
            end = min(batch.height, start + next_row - seen - 1)
        if end > start:
            learn(batch.slice(start, end - start))
            start = end
            continue
        # The example that brings the count to a power of two: scored first, then learned.
        example = batch.slice(start, 1)
        predicted = _score(model, example) if _fitted(model) else 0.0
        if not _fitted(model) and classes is not None and len(classes) > 2:
            predicted = float(classes[0])  # all scores 0: the first class, as vw says
        before = model._learner.progress[3] if _fitted(model) else 0
        learn(example)
        if table is not None:
            # Features of the example (a multiclass model updates them once per class).
            heads = len(getattr(model._learner, "heads", [None]))
            features = (model._learner.progress[3] - before) // heads
            table.row(model, float(example[label][0]), predicted, int(features))
        start += 1
    return np.concatenate(progressive) if progressive else np.zeros(0, dtype=np.int64)


def _write_classes(out: TextIO, predicted: npt.NDArray[Any], batch: pl.DataFrame) -> None:
    """``vw --oaa``'s ``-p`` lines of a batch: each row's predicted class, then its tag."""
    from polars_poly._internal import vw_prediction_lines

    tags = batch["tag"].to_list() if "tag" in batch.columns else None
    out.write(vw_prediction_lines(predicted.astype(float).tolist(), tags))


def _examples(model: Any) -> int:
    return int(model._learner.progress[0]) if _fitted(model) else 0


def _score(model: Any, row: pl.DataFrame) -> float:
    """The model's prediction for one row before learning it: the margin of a classifier, as
    Vowpal Wabbit prints."""
    if isinstance(model, pp.SGDClassifier):
        if len(model.classes_) > 2:
            return float(model.predict(row)[0])
        return float(model.decision_function(row)[0])
    return float(model.predict(row)[0])


def _first(classes: list[int] | None, model: Any) -> dict[str, Any]:
    """``classes`` for a classifier's first ``partial_fit``."""
    if classes is not None and not hasattr(model, "classes_"):
        return {"classes": classes}
    return {}
