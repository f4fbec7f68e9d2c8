"""The training command line: ``polars-poly train``, ``predict`` and ``inspect``, with flags
named like Vowpal Wabbit's where it has one (docs/cli.md).

``polars-poly train -d train.vw --stage_poly -f model.bin`` trains apple on a Vowpal Wabbit file
and prints the progressive table at doubling example counts, as ``vw`` does;
``polars-poly predict -d test.vw -i model.bin -p preds.txt`` scores a file;
``polars-poly inspect -i model.bin`` summarizes a model and lists what apple grew.

Exit codes: 0 on success, 1 on an error (one line on stderr naming it), 2 on a usage error,
130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

# Each concern has its module: _data (reading -d), _model (the estimator the flags ask for), _checks
# (flags that do not go together), _train and its three runs (_vw_run: the engine end to end;
# _scored: frames in one engine model; _progress: models learned in pieces, with the progressive
# table), _outputs (the files train writes), _predict and _inspect.
from polars_poly._lazy import pl
from polars_poly.cli._checks import UsageError
from polars_poly.cli._data import (
    BATCH_ROWS,
    ENGINE_BATCH_ROWS,
    STDIN,
    batches,
    data_file,
    scan_data,
)
from polars_poly.cli._inspect import inspect, write_readable_model
from polars_poly.cli._model import CLASSIFICATION_LOSSES
from polars_poly.cli._predict import Score, predict
from polars_poly.cli._progress import ProgressTable, learn_batch
from polars_poly.cli._train import train

__all__ = [
    "BATCH_ROWS",
    "CLASSIFICATION_LOSSES",
    "COMMANDS",
    "ENGINE_BATCH_ROWS",
    "STDIN",
    "ProgressTable",
    "Score",
    "UsageError",
    "batches",
    "data_file",
    "inspect",
    "learn_batch",
    "predict",
    "run",
    "scan_data",
    "train",
    "write_readable_model",
]


COMMANDS = {"train": train, "predict": predict, "inspect": inspect}


def run(args: argparse.Namespace) -> int:
    """Runs a ``train`` / ``predict`` / ``inspect`` command: its exit code. ``train`` reports
    on stderr, as ``vw`` does, so that stdout stays free for predictions."""
    out = sys.stderr if args.command == "train" else sys.stdout
    try:
        with warnings.catch_warnings():
            # A program's warnings are lines of its own, not Python's source locations;
            # --quiet prints nothing on stderr, warnings included.
            if getattr(args, "quiet", False):
                warnings.simplefilter("ignore")
            warnings.showwarning = _warning_line(args.command)
            COMMANDS[args.command](args, out)
    except KeyboardInterrupt:
        print("polars-poly: interrupted", file=sys.stderr)
        return 130
    except UsageError as err:
        print(f"polars-poly {args.command}: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as a killed-by-SIGPIPE tool would.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (OSError, ValueError, TypeError, pl.exceptions.PolarsError) as err:
        print(f"polars-poly {args.command}: error: {err}", file=sys.stderr)
        return 1
    return 0


def _warning_line(command: str) -> Any:
    """A ``warnings.showwarning`` printing ``polars-poly COMMAND: warning: MESSAGE``."""

    def show(message: Warning | str, *_: object, **__: object) -> None:
        print(f"polars-poly {command}: warning: {message}", file=sys.stderr)

    return show
