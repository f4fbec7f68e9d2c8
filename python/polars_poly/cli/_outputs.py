"""The files ``train`` writes besides its report: ``-f``, ``--readable_model`` and
``--invert_hash`` (Vowpal Wabbit's layout, written by the engine), ``--plot`` and
``--history``."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from polars_poly._lazy import pl
from polars_poly.cli._inspect import _save_plot, write_readable_model
from polars_poly.cli._model import _in_pieces


def _save_and_describe(
    args: argparse.Namespace,
    model: Any,
    report: Any,
    names: dict[int, str] | None,
    report_to: TextIO | None,
) -> None:
    """Writes ``-f``, ``--readable_model``, ``--invert_hash`` and ``--plot``; ``report``: the
    engine's report of the run (``None``: no run, or a model learned in pieces); ``names``:
    the slots' names (``--invert_hash``)."""
    if args.final_regressor:
        model.save(args.final_regressor)
    if args.readable_model:
        if _in_pieces(model):
            # One-against-all: our layout (per class), not vw's interleaved table.
            with open(args.readable_model, "w") as file:
                write_readable_model(model, file)
        else:
            _write_vw_readable(args, model, report, args.readable_model)
    if args.invert_hash:
        _write_vw_readable(args, model, report, args.invert_hash, names or {})
    if args.plot:
        _save_plot(model.plot_learning_curve, args.plot)


def _write_vw_readable(
    args: argparse.Namespace,
    model: Any,
    report: Any,
    path: str,
    names: dict[int, str] | None = None,
) -> None:
    """``model`` in Vowpal Wabbit's readable layout (``vw_run::readable``), each slot's name
    first when ``names`` are given (``--invert_hash``)."""
    from polars_poly import __version__, _internal

    _internal.vw_readable_model(
        model._check_fitted(),
        path,
        report,
        version=f"polars-poly {__version__}",
        options=_vw_kept_options(args),
        ngram=list(args.ngram),
        skips=list(args.skips),
        save_resume=not args.predict_only_model,
        names=names,
    )


def _vw_kept_options(args: argparse.Namespace) -> str:
    """The flags vw keeps in a model's header, as it writes them: sorted by name, then the
    namespaces of ``--ignore`` and ``--keep`` merged."""
    kept: list[tuple[str, str]] = [("binary", "")] if args.binary else []
    if isinstance(args.cubic, str):
        kept.append(("cubic", args.cubic))
    kept += [("interactions", value) for value in args.interactions]
    if args.link != "identity":
        kept.append(("link", args.link))
    if args.noconstant:
        kept.append(("noconstant", ""))
    quadratic = [*args.q, *([args.quadratic] if isinstance(args.quadratic, str) else [])]
    kept += [("quadratic", value) for value in quadratic]
    text = "".join(f" --{name} {value}".rstrip() for name, value in sorted(kept))
    for name in ("ignore", "keep"):
        letters = sorted(set("".join(getattr(args, name))))
        if letters:
            text += f" --{name} {''.join(letters)}"
    return text


def _write_history(path: str, rows: list[tuple[Any, ...]]) -> None:
    """``--history``: the printed table's rows as numbers."""
    names = ["examples", "weight", "average_loss", "loss_since_last", "holdout", "label"]
    pl.DataFrame(rows, schema=[*names, "prediction", "features"], orient="row").write_csv(path)
