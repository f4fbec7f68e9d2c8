"""A file read as frames learned in one engine model, every row scored and reported by the
engine (``VwReport``): Vowpal Wabbit's table, summary, holdout and ``-p``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from polars_poly._lazy import np, pl
from polars_poly.cli._data import batches
from polars_poly.cli._outputs import _write_history

if TYPE_CHECKING:
    import numpy.typing as npt


def _train_scored(
    args: argparse.Namespace,
    model: Any,
    frame: pl.LazyFrame,
    label: str,
    weight: str | None,
    report_to: TextIO | None,
    predictions: TextIO | None,
) -> None:
    """Every row learned (or, with ``-t``, scored) by the engine, which reports each one: the
    table, the summary and ``-p`` are Vowpal Wabbit's (the engine's ``VwReport``)."""
    from polars_poly._internal import VwReport, vw_prediction_lines

    holdout = args.passes > 1 and not args.holdout_off and not args.testonly
    report = VwReport(
        args.loss_function,
        args.quantile_tau,
        holdout,
        args.progress,
        quiet=report_to is None,
        history=bool(args.history),
    )
    no_better = 0
    for _ in range(args.passes):
        counter = 0
        for batch in batches(frame):
            labels = _report_labels(batch[label], model)
            unlabeled = np.isnan(labels)
            # In-pass counter from 1: vw holds out the examples it makes a multiple of the period.
            counters = np.arange(counter + 1, counter + batch.height + 1)
            counter += batch.height
            # Held out: vw's test-only examples of a pass (their loss is the holdout loss);
            # with -t and unlabeled ones, the rest that is scored and not learned.
            held_out = np.zeros(batch.height, dtype=bool)
            if holdout:
                held_out = counters % args.holdout_period == 0
            scored_only = held_out | unlabeled | bool(args.testonly)
            learned = batch
            if unlabeled.any():
                # Scored, not learned: any label of the model's will do.
                learned = batch.with_columns(pl.col(label).fill_null(_any_class(model)))
            scored, losses, features = model._learn_scored(
                learned, label, weight, held_out=scored_only.tolist()
            )
            losses = np.where(unlabeled, 0.0, losses)
            weights = batch[weight].cast(pl.Float64).to_numpy() if weight else np.ones(batch.height)
            lines = report.add(
                labels.tolist(),
                weights.tolist(),
                scored.tolist(),
                losses.tolist(),
                features.astype(np.uint64).tolist(),
                held_out.tolist(),
            )
            if lines and report_to is not None:
                print("\n".join(lines), file=report_to, flush=True)
            if predictions is not None:
                tags = batch["tag"].to_list() if "tag" in batch.columns else None
                predictions.write(vw_prediction_lines(scored.tolist(), tags))
        if report.end_pass() or not holdout:
            no_better = 0
        else:
            no_better += 1
        if holdout and no_better >= args.early_terminate:
            break
    if report_to is not None:
        print("\n".join(report.summary()), file=report_to)
    if args.history:
        _write_history(args.history, report.rows())


def _report_labels(column: pl.Series, model: Any) -> npt.NDArray[np.float64]:
    """The labels as the table shows them: numbers as they are, a classifier's other labels
    as -1 / +1 (its second class); NaN where there is none."""
    if column.dtype.is_numeric() or column.dtype == pl.Boolean:
        return column.cast(pl.Float64).fill_null(np.nan).to_numpy().copy()
    signs = np.where((column == model.classes_[1]).fill_null(False).to_numpy(), 1.0, -1.0)
    return np.where(column.is_null().to_numpy(), np.nan, signs)


def _any_class(model: Any) -> Any:
    classes = getattr(model, "classes_", None)
    return 0.0 if classes is None else classes[0]
