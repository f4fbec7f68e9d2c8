"""``train``: the data (a cache, Vowpal Wabbit text, frames) routed to the engine's run or to
a run of frames; ``-i`` continued, ``--no_stdin`` rewritten, the files written."""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path
from typing import Any, TextIO

import polars_poly as pp
from polars_poly._lazy import np
from polars_poly.cli._checks import _check_continuation, _check_frames_flags, _check_train_flags
from polars_poly.cli._data import STDIN, _vw_reader_options, data_file, scan_data
from polars_poly.cli._model import (
    CLASSIFICATION_LOSSES,
    _classes,
    _distinct_labels,
    _estimator,
    _in_pieces,
    _raw_labels,
)
from polars_poly.cli._outputs import _save_and_describe
from polars_poly.cli._progress import _train_in_pieces
from polars_poly.cli._scored import _train_scored
from polars_poly.cli._vw_run import _train_vw
from polars_poly.multiclass import OneAgainstAll


def train(args: argparse.Namespace, out: TextIO) -> None:
    """``train``: learns the file (or, with ``-t``, only scores it) and reports as ``vw``."""
    report_to = None if args.quiet else out
    _check_train_flags(args)
    if args.no_stdin:
        _rewrite_model(args, report_to)
        return
    cache = _cache_path(args)
    if cache is not None and args.kill_cache:
        Path(cache).unlink(missing_ok=True)
    continued = _continued_model(args)
    learned: tuple[Any, Any, dict[int, str] | None] | None
    if cache is not None and Path(cache).exists() and _runs_natively(args):
        # As vw: an existing cache is read instead of the text (which may be absent).
        learned = _train_vw(args, None, cache, report_to, continued)
        if learned is None:
            raise ValueError(
                f"{cache}: a model of more than two classes learns from the text, not from a "
                "cache (give -d without -c)"
            )
    else:
        with contextlib.ExitStack() as stack:
            path, kind = stack.enter_context(data_file(args.data, args.format))
            learned = None
            if kind == "vw" and _runs_natively(args):
                learned = _train_vw(args, path, cache, report_to, continued)
            if learned is None:
                _check_frames_flags(args)
                learned = _train_frames(args, path, kind, report_to, stack, continued), None, None
    model, report, names = learned
    _save_and_describe(args, model, report, names, report_to)


def _continued_model(args: argparse.Namespace) -> Any:
    """The model ``-i`` continues (checked against the command line's flags), or None."""
    if not args.initial_regressor:
        return None
    model = pp.load_model(args.initial_regressor)
    _check_continuation(args, model)
    model.set_params(progress=False)
    return model


def _cache_path(args: argparse.Namespace) -> str | None:
    """The cache ``-c`` (``DATA.cache``, as vw names it) or ``--cache_file`` asks for."""
    if args.cache_file:
        return str(args.cache_file)
    if args.cache:
        if args.data == STDIN:
            raise ValueError(
                "-c names its cache after -d; reading standard input, give --cache_file"
            )
        return f"{args.data}.cache"
    return None


def _runs_natively(args: argparse.Namespace) -> bool:
    """Whether a Vowpal Wabbit file is learned by the engine end to end (``vw_run``): every
    run but one-against-all and apple's ranking race (their models learn in pieces)."""
    return not (args.oaa or args.stage_poly or args.format not in ("auto", "vw"))


def _train_frames(
    args: argparse.Namespace,
    path: str,
    kind: str,
    report_to: TextIO | None,
    stack: contextlib.ExitStack,
    model: Any,
) -> Any:
    """Learns a file read as frames (parquet, LIBSVM; a Vowpal Wabbit file for one-against-all
    and apple's race), the report rebuilt from the learner's records (the engine's VwReport)."""
    predictions = open(args.predictions, "w") if args.predictions else None  # noqa: SIM115
    if predictions is not None:
        stack.enter_context(predictions)
    bits = args.bits if model is None else model.bits_
    frame, columns, label = scan_data(path, kind, args, bits or 18, model)
    weight = "weight" if "weight" in frame.collect_schema().names() else None
    if model is None:
        # The labels decide the model of a classification loss (without --oaa's 1..K).
        labels = None
        if not args.oaa and args.loss_function in CLASSIFICATION_LOSSES:
            labels = _distinct_labels(frame, label)
        raw = labels is not None and _raw_labels(labels, args.loss_function)
        model = _estimator(args, columns, frame.collect_schema(), raw_labels=raw)
        if isinstance(model, pp.SGDClassifier):
            # As partial_fit(classes=...) names them: --oaa's 1..K (or 0..K-1), else the file's
            # labels.
            first_label = _first_label(frame, label) if args.oaa and args.indexing is None else None
            model.classes_ = np.unique(np.asarray(_classes(args, labels, first_label)))
    if _in_pieces(model):
        if kind == "vw":
            _learn_in_file_order(model)
        _train_in_pieces(args, model, frame, label, weight, report_to, predictions)
    else:
        _train_scored(args, model, frame, label, weight, report_to, predictions)
    if kind == "vw":
        read = _vw_reader_options(args, model)
        model._vw_reader = {k: v for k, v in read.items() if v is not None}
    return model


def _first_label(frame: Any, label: str) -> float | None:
    """The first example's label (it decides --oaa's indexing, as in vw), None for no rows."""
    first = frame.select(label).head(1).collect()[label]
    return None if first.is_empty() else first[0]


def _learn_in_file_order(model: Any) -> None:
    """One-against-all learns Vowpal Wabbit text as vw does: a feature repeated in an
    example's namespace is one feature per occurrence, learned in turn (not one of the summed
    value, as a frame's rows are made canonical), and a row whose value overflows single
    precision is predicted 0 and not learned (with a warning), not an error."""
    model._in_file_order = True
    if isinstance(getattr(model, "_learner", None), OneAgainstAll):
        model._learner.in_order = True  # a model -i continues
        model._learner.overflow = "vw"


def _rewrite_model(args: argparse.Namespace, report_to: TextIO | None) -> None:
    """``--no_stdin``: no data; the model of ``-i`` is written again."""
    from polars_poly._internal import VwReport

    if not args.initial_regressor:
        # As vw: a new model of no data (every weight 0), after no pass.
        learned = _train_vw(
            argparse.Namespace(**{**vars(args), "passes": 0}), os.devnull, None, report_to, None
        )
        assert learned is not None  # no labels: not in pieces
        _save_and_describe(args, *learned, report_to)
        return
    model = pp.load_model(args.initial_regressor)
    if report_to is not None:
        print("\n".join(VwReport("squared").summary()), file=report_to)
    _save_and_describe(args, model, None, {} if args.invert_hash else None, report_to)
