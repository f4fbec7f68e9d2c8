"""Vowpal Wabbit text (or its cache) learned by the engine end to end (``vw_run``): parsing,
learning, the progressive table, the summary and ``-p`` in Rust; the slots' names for
``--invert_hash``."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

import polars_poly as pp
from polars_poly._lazy import np
from polars_poly.cli._data import ENGINE_BATCH_ROWS, _vw_reader_options
from polars_poly.cli._model import (
    CLASSIFICATION_LOSSES,
    _classes,
    _estimator,
    _in_pieces,
    _raw_labels,
)
from polars_poly.cli._outputs import _write_history
from polars_poly.readers import DEFAULT_NAMESPACE


def _train_vw(
    args: argparse.Namespace,
    path: str | None,
    cache: str | None,
    report_to: TextIO | None,
    model: Any,
) -> tuple[Any, Any, dict[int, str] | None] | None:
    """Learns the Vowpal Wabbit text ``path`` (writing ``cache`` on the way, when given) or,
    with no ``path``, the ``cache``: parsing, learning, the report and ``-p`` in the engine;
    ``model``: the one ``-i`` continues, else a new one. Returns the model, the engine's
    report of the run and, with ``--invert_hash``, the slots' names; ``None`` when the model
    learns in pieces (more than two classes), nothing done."""
    from polars_poly import _internal

    read = {k: v for k, v in _vw_reader_options(args, model).items() if v is not None}
    if model is not None and _in_pieces(model):
        return None
    scan = None
    if model is None or (path is not None and cache is not None):
        source = path if path is not None else cache
        assert source is not None  # a run has one or the other
        scan = _internal.vw_scan(source, read, cache=path is None)
    if model is None:
        assert scan is not None
        namespaces, labels, _ = scan
        # A file of no features (or none at all: --no_stdin) learns the constant alone, as vw.
        namespaces = namespaces or [DEFAULT_NAMESPACE]
        raw = args.loss_function in CLASSIFICATION_LOSSES and _raw_labels(
            labels, args.loss_function
        )
        model = _estimator(args, namespaces, None, raw_labels=raw)
        if isinstance(model, pp.SGDClassifier):
            model.classes_ = np.unique(np.asarray(_classes(args, labels)))
            if len(model.classes_) > 2:
                return None
    else:
        namespaces = list(model.namespaces_)
        read["other_namespaces"] = "drop"
    classes = None
    if isinstance(model, pp.SGDClassifier):
        first, second = (float(c) for c in model.classes_)
        classes = (first, second)
    holdout = args.passes > 1 and not args.holdout_off and not args.testonly

    def print_rows(lines: list[str]) -> None:
        if report_to is not None:
            print("\n".join(lines), file=report_to, flush=True)

    def run(learner: Any) -> tuple[Any, ...]:
        return tuple(
            _internal.vw_train(
                learner,
                path,
                cache,
                read,
                write_cache=path is not None and cache is not None,
                scan=scan,
                passes=args.passes,
                holdout_period=args.holdout_period if holdout else 0,
                early_terminate=args.early_terminate,
                test_only=bool(args.testonly),
                classes=classes,
                batch_rows=ENGINE_BATCH_ROWS,
                progress=args.progress,
                quiet=report_to is None,
                history=bool(args.history),
                predictions=args.predictions,
                print=print_rows,
                link=args.link,
                binary=args.binary,
                audit=sys.stdout.write if args.audit else None,
            )
        )

    _, _, summary, rows, report = model._learn_vw(namespaces, run)
    model._vw_reader = {k: v for k, v in read.items() if k != "other_namespaces"}
    if report_to is not None:
        print("\n".join(summary), file=report_to)
    if args.history:
        _write_history(args.history, rows)
    names = None
    if args.invert_hash:
        assert path is not None  # a cache is refused with --invert_hash
        names = _feature_names(model, path, read)
    return model, report, names


def _feature_names(model: Any, path: str, read: dict[str, Any]) -> dict[int, str]:
    """Slot -> feature name of the model's features on the text ``path`` (``--invert_hash``)."""
    from polars_poly import _internal

    options = model._learner.options()
    features = options["features"]
    return _internal.vw_feature_names(
        path,
        read | {"other_namespaces": "drop"},
        namespaces=list(options["namespaces"]),
        crosses=[list(cross) for cross in features.get("namespace_crosses", [])],
        constant=bool(options["constant"]),
        bits=int(options["bits"]),
    )
