"""``predict``: a file scored batch by batch (labels, margins or probabilities), with the
accuracy or R² of the examples that have a label."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any, TextIO

import polars_poly as pp
from polars_poly._lazy import np, pl
from polars_poly.cli._data import batches, data_file, scan_data


def predict(args: argparse.Namespace, out: TextIO) -> None:
    if args.binary and (args.link or args.raw or args.probabilities):
        raise ValueError("--binary writes labels: it takes no --link, --raw or --probabilities")
    args.raw = args.raw or args.link == "identity"
    args.probabilities = args.probabilities or args.link == "logistic"
    model = pp.load_model(args.initial_regressor)
    margins = isinstance(model, pp.SGDRegressor) and model.loss == "logistic"
    if args.probabilities and not (hasattr(model, "predict_proba") or margins):
        raise ValueError(
            f"probabilities need a classifier trained with the logistic loss; the model is a "
            f"{type(model).__name__}"
        )
    classifier = hasattr(model, "classes_")
    multiclass = len(getattr(model, "classes_", ())) > 2
    score = Score(classifier)
    written = 0
    with data_file(args.data, args.format) as (path, kind):
        frame, _, label = scan_data(path, kind, args, getattr(model, "bits_", 18), model)
        with contextlib.ExitStack() as stack:
            sink = stack.enter_context(open(args.predictions, "w")) if args.predictions else out
            for batch in batches(frame):
                predicted = None
                if args.raw and isinstance(model, pp.SGDClassifier):
                    values = model.decision_function(batch)
                elif args.probabilities and margins:
                    # A logistic regressor of Vowpal Wabbit's soft labels: P(+1) of its margin.
                    values = model._scores(batch, "probability")
                elif args.probabilities:
                    values = model.predict_proba(batch)
                    values = values if multiclass else values[:, 1]
                else:
                    values = predicted = model.predict(batch)
                values = np.asarray(values)
                fmt = "%.6g" if values.dtype.kind in "biuf" else "%s"
                np.savetxt(sink, values, fmt=fmt)
                written += len(values)
                if label in batch.columns:
                    # Labels to score against: the predictions (made again only when the
                    # output is margins or probabilities).
                    score.add(
                        batch[label], model.predict(batch) if predicted is None else predicted
                    )
    if args.predictions:
        print(f"{written} predictions written to {args.predictions}", file=out)
    if score.rows:
        value = score.value()
        shown = "n.a. (the labels do not vary)" if value is None else f"{value:.6f}"
        print(f"{score.name} = {shown}", file=sys.stderr)


class Score:
    """Accuracy (classifier) or R² (regressor) of predictions against labels, accumulated batch
    by batch; examples without a label are left out."""

    def __init__(self, classifier: bool) -> None:
        self.classifier = classifier
        self.name = "accuracy" if classifier else "R²"
        self.rows = 0
        self.correct = 0
        self.sums = np.zeros(3)  # Σy, Σy², Σ(y - prediction)²

    def add(self, labels: pl.Series, predicted: Any) -> None:
        known = labels.is_not_null().to_numpy()
        y, p = labels.to_numpy()[known], np.asarray(predicted)[known]
        self.rows += len(y)
        if self.classifier:
            self.correct += int((p == y).sum())
        else:
            y = y.astype(np.float64)
            self.sums += [y.sum(), (y * y).sum(), ((y - p) ** 2).sum()]

    def value(self) -> float | None:
        """The accuracy, or R²; None for R² of labels that do not vary (one row, or all
        equal), where it is undefined."""
        if self.classifier:
            return self.correct / self.rows
        total, squares, residual = self.sums
        spread = squares - total * total / self.rows
        # The sums' rounding leaves a spread of about 1e-16 of the squares for equal labels.
        if spread <= 1e-12 * squares:
            return None
        return float(1.0 - residual / spread)
