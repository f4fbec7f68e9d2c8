"""Models that learn in pieces (one against all, apple's ranking race): each example that
brings the count to a power of two scored, then learned, and its row of Vowpal Wabbit's
progressive table printed here (:class:`ProgressTable`), then the summary."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

import polars_poly as pp
from polars_poly._lazy import np, pl
from polars_poly.cli._data import batches
from polars_poly.cli._indexing import VwIndexing
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

    def row(self, model: Any, label: float, predicted: float | str, features: int) -> None:
        examples, loss, weight, _ = model._learner.progress
        errors = getattr(model._learner, "errors", None)
        if errors is not None:  # one against all: the multiclass error, as vw --oaa prints
            loss, weight = errors
        since = (loss - self.last[0]) / max(weight - self.last[1], 1e-300)
        self.last = (loss, weight)
        shown = predicted if isinstance(predicted, str) else f"{predicted:.4f}"
        print(
            f"{loss / max(weight, 1e-300):>10.6f} {since:>10.6f} {examples:>12d} "
            f"{weight:>10.1f} {label:>9.4f} {shown:>9} {features:>9d}",
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
    learned, with its tag, as ``vw --oaa`` writes them. With ``--probabilities`` (one against
    all), each class's probability instead: in the table (``2(54%)``), in ``-p``
    (``1:0.25 2:0.25 ...``) and as the summary's average multiclass log loss."""
    holdout = args.passes > 1 and not args.holdout_off
    multiclass = _multiclass(model)
    if args.testonly or args.progress or holdout or (predictions and not multiclass):
        raise ValueError(
            "-t, -P and passes with a holdout need one engine model: not --oaa, and not "
            "--stage_poly's race of rankings, which -p needs too (give --holdout_off with "
            "--passes)"
        )
    classes = None
    if isinstance(model, pp.SGDClassifier) and not _fitted(model):
        classes = model.classes_.tolist()
    probabilities = bool(getattr(args, "probabilities", False)) and multiclass
    if probabilities and args.loss_function != "logistic" and report_to is not None:
        print(
            "[warning] --probabilities should be used only with --loss_function=logistic, "
            f"currently using: {args.loss_function}",
            file=report_to,
        )
    table = None if report_to is None else ProgressTable(report_to)
    start = model._learner.progress if _fitted(model) else (0, 0.0, 0.0, 0)
    label_sum = log_loss = 0.0
    # --oaa's classes numbered as vw numbers them while it reads (a new model: -i keeps its own).
    indexing = None
    if args.oaa and multiclass and classes is not None:
        base = int(model.classes_[0])
        given = getattr(args, "indexing", None) is not None
        indexing = VwIndexing(len(model.classes_), base, decided=given or base == 0)
        model._vw_unseen_labels = True  # a relabeled example is no class's, as in vw
    for _ in range(args.passes):
        for batch in batches(frame):
            shown = None
            if indexing is not None and not batch[label].null_count():
                vw_labels = batch[label].cast(pl.Float64).to_numpy()
                learned, offset, heads = indexing.translate(vw_labels, _examples(model))
                batch = batch.with_columns(pl.Series(label, learned))
                shown = (vw_labels, offset, heads)
                if indexing.warnings and report_to is not None:
                    print("\n".join(indexing.warnings), file=report_to)
                indexing.warnings.clear()
            scores = learn_batch(model, batch, label, weight, classes, table, probabilities, shown)
            offsets = shown[1] if shown is not None else np.zeros(batch.height, dtype=np.int64)
            if probabilities:
                shares = class_probabilities(scores)
                true_heads = None if shown is None else shown[2]
                log_loss += _log_loss(shares, model.classes_, batch, label, weight, true_heads)
                if predictions is not None:
                    _write_probabilities(predictions, shares, model.classes_, batch, offsets)
            elif predictions is not None:
                best = model.classes_[np.argmax(scores, axis=1)] - offsets
                _write_classes(predictions, best, batch)
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
    multiclass_log_loss = ""
    if probabilities:
        average = log_loss / max(weight_sum, 1e-300)
        multiclass_log_loss = f"average multiclass log loss = {average:.6f}\n"
    print(
        f"\nfinished run\n{counts}\nweighted example sum = {weight_sum:.6f}\n"
        f"weighted label sum = {label_sum:.6f}\n"
        f"average loss = {loss / max(weight_sum, 1e-300):.6f}\n"
        f"{multiclass_log_loss}total feature number = {updates}",
        file=report_to,
    )


def learn_batch(
    model: Any,
    batch: pl.DataFrame,
    label: str,
    weight: str | None,
    classes: list[Any] | None,
    table: ProgressTable | None,
    probabilities: bool = False,
    shown: tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int64]]
    | None = None,
) -> npt.NDArray[np.float64]:
    """Learns a batch of examples; with a table, the example that brings the count to a power
    of two is scored first and gets its row (as ``vw`` prints them; with ``probabilities``, its
    class and that class's probability). Returns, for a model of more than two classes, each
    class's score of each row before the row was learned (rows x classes; else nothing).
    ``shown`` (``--oaa`` numbered as vw numbers while it reads, :mod:`._indexing`): each
    example's label as the file gives it, and the offset from the model's class to the name
    vw prints."""
    if batch[label].null_count():
        first = int(batch[label].is_null().arg_true()[0]) + _examples(model)
        raise ValueError(f"example {first + 1} has no label")
    progressive: list[npt.NDArray[np.float64]] = []

    def learn(at: int, count: int) -> None:
        rows = batch.slice(at, count)
        model.partial_fit(rows, label, weight, **_first(classes, model))
        scores = getattr(model._learner, "progressive_scores", None)
        if scores is not None:
            progressive.append(scores)
        skipped = getattr(model._learner, "overflowed", ())
        if skipped and table is not None:
            for row, reason in skipped:
                print(
                    f"[warning] example {row + 1}: {reason}: predicted 0 and not learned, "
                    "as vw does",
                    file=table.out,
                )

    start = 0
    while start < batch.height:
        seen = _examples(model)
        if table is None:
            end = batch.height
        else:
            next_row = 1 << seen.bit_length()  # the next power of two above the count
            end = min(batch.height, start + next_row - seen - 1)
        if end > start:
            learn(start, end - start)
            start = end
            continue
        # The example that brings the count to a power of two: scored first, then learned.
        example = batch.slice(start, 1)
        multiclass = _multiclass(model)
        # A class is read off the scores learning records before it learns the row (a row
        # whose numbers overflow scores 0 for every class, as in vw).
        predicted: float | str = (
            _score(model, example) if _fitted(model) and not multiclass else 0.0
        )
        before = model._learner.progress[3] if _fitted(model) else 0
        offset = 0 if shown is None else int(shown[1][start])
        learn(start, 1)
        if multiclass:
            predicted = float(model.classes_[int(np.argmax(progressive[-1][-1]))])
        if isinstance(predicted, float) and shown is not None:
            predicted -= offset
        if probabilities:
            shares = class_probabilities(progressive[-1])[-1]
            best = int(np.argmax(progressive[-1][-1]))
            # vw: the class, then its probability in percent, rounded (single precision).
            name = model.classes_[best] - offset
            predicted = f"{name:g}({np.float32(100) * shares[best]:.0f}%)"
        if table is not None:
            # Features of the example (a multiclass model updates them once per class).
            heads = len(getattr(model._learner, "heads", [None]))
            features = (model._learner.progress[3] - before) // heads
            given = float(example[label][0]) if shown is None else float(shown[0][start])
            table.row(model, given, predicted, int(features))
        start += 1
    return np.concatenate(progressive) if progressive else np.zeros((0, 0))


def class_probabilities(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    """``vw --oaa --probabilities``'s: each class's logistic link of its score, normalized to
    sum to 1 over the classes, in single precision as vw computes them."""
    with np.errstate(over="ignore"):  # a score below -88 (not the logistic loss's): P 0
        linked: npt.NDArray[np.float32] = np.float32(1) / (
            np.float32(1) + np.exp(-scores.astype(np.float32))
        )
    shares: npt.NDArray[np.float32] = linked / linked.sum(axis=1, dtype=np.float32, keepdims=True)
    return shares


def _log_loss(
    shares: npt.NDArray[np.float32],
    classes: npt.NDArray[Any],
    batch: pl.DataFrame,
    label: str,
    weight: str | None,
    heads: npt.NDArray[np.int64] | None = None,
) -> float:
    """The batch's sum of importance x -log(probability of the true class), 999 for a
    probability of 0 (vw's multiclass log loss); ``heads``: each example's class position
    where the label does not say it (:mod:`._indexing`)."""
    positions = np.searchsorted(classes, batch[label].to_numpy()) if heads is None else heads
    true = shares[np.arange(len(positions)), positions]
    importance = np.ones(len(true)) if weight is None else batch[weight].to_numpy()
    with np.errstate(divide="ignore"):
        losses = np.where(true > 0, -np.log(true).astype(np.float64) * importance, 999.0)
    return float(losses.sum())


def _write_probabilities(
    out: TextIO,
    shares: npt.NDArray[np.float32],
    classes: npt.NDArray[Any],
    batch: pl.DataFrame,
    offsets: npt.NDArray[np.int64],
) -> None:
    """``vw --oaa --probabilities``'s ``-p`` lines: ``class:probability`` for every class
    (6 significant digits; each example's class names as vw numbers them then, ``offsets``),
    then the tag."""
    tags = batch["tag"].to_list() if "tag" in batch.columns else [None] * len(shares)
    named = {0: [f"{c:g}" for c in classes]}
    for row, tag, offset in zip(shares, tags, offsets.tolist(), strict=True):
        names = named.setdefault(offset, [f"{c - offset:g}" for c in classes])
        line = " ".join(f"{name}:{float(p):g}" for name, p in zip(names, row, strict=True))
        out.write(f"{line} {tag}\n" if tag else f"{line}\n")


def _write_classes(out: TextIO, predicted: npt.NDArray[Any], batch: pl.DataFrame) -> None:
    """``vw --oaa``'s ``-p`` lines of a batch: each row's predicted class, then its tag."""
    from polars_poly._internal import vw_prediction_lines

    tags = batch["tag"].to_list() if "tag" in batch.columns else None
    out.write(vw_prediction_lines(predicted.astype(float).tolist(), tags))


def _examples(model: Any) -> int:
    return int(model._learner.progress[0]) if _fitted(model) else 0


def _multiclass(model: Any) -> bool:
    return len(getattr(model, "classes_", ())) > 2


def _score(model: Any, row: pl.DataFrame) -> float:
    """A one-model's prediction for one row before learning it: the margin of a classifier,
    as Vowpal Wabbit prints."""
    if isinstance(model, pp.SGDClassifier):
        return float(model.decision_function(row)[0])
    return float(model.predict(row)[0])


def _first(classes: list[int] | None, model: Any) -> dict[str, Any]:
    """``classes`` for a classifier's first ``partial_fit``."""
    if classes is not None and not hasattr(model, "classes_"):
        return {"classes": classes}
    return {}
