"""The ``train`` flags checked before any work: ranges, flags that do not go together
(:class:`UsageError`, exit 2), and what ``-i`` may not change in the model it continues."""

from __future__ import annotations

import argparse
from typing import Any

import polars_poly as pp


def _check_train_flags(args: argparse.Namespace) -> None:
    for flag, on in (("--invert_hash", bool(args.invert_hash)), ("--audit", args.audit)):
        if on and (args.ngram or args.skips or args.stage_poly):
            raise UsageError(
                f"{flag} names linear features, the constant and namespace crosses: not with "
                "--ngram, --skips or --stage_poly"
            )
        if on and (args.quadratic is True or args.cubic is True):
            raise UsageError(f"{flag} names namespace crosses: not --quadratic/--cubic alone")
    if args.invert_hash and (args.cache or args.cache_file):
        raise UsageError("--invert_hash reads the text: not with a cache (as in vw)")
    if args.passes < 1:
        raise ValueError(f"--passes must be at least 1, got {args.passes}")
    if args.holdout_period < 1:
        raise ValueError(f"--holdout_period must be at least 1, got {args.holdout_period}")
    if args.oaa is not None and args.oaa < 2:
        raise ValueError(f"--oaa takes the number of classes, 2 or more, got {args.oaa}")
    if args.indexing is not None and not args.oaa:
        raise UsageError("--indexing numbers --oaa's classes: give --oaa K")
    if args.probabilities:
        if not args.oaa:
            raise UsageError(
                "--probabilities is --oaa's (each class's probability): give --oaa K; "
                "predict --probabilities scores a binary model"
            )
        # As vw: the link is applied to each class's score by hand, a --link given is identity.
        args.link = "identity"
    if args.bits is not None and not 1 <= args.bits <= 32:
        raise ValueError(f"-b must be in 1..32, got {args.bits}")


class UsageError(Exception):
    """Flags that do not go together (exit 2, as argparse's own usage errors)."""


def _check_frames_flags(args: argparse.Namespace) -> None:
    """Flags only the engine's run on VW text has (``vw_run``'s scorer), refused elsewhere."""
    flags = (
        ("--binary", args.binary),
        ("--link", args.link != "identity"),
        ("--invert_hash", bool(args.invert_hash)),
        ("--audit", args.audit),
    )
    given = [flag for flag, on in flags if on]
    if given:
        raise UsageError(
            f"{', '.join(given)}: need VW text learned in one model; not with --oaa, "
            "--stage_poly, more than two classes, or LIBSVM/parquet input"
        )


def _check_continuation(args: argparse.Namespace, model: Any) -> None:
    """``-i MODEL`` continues the model as it is: a flag that would change what it is (its
    table size, its crosses, its loss) is refused by name, where ``vw`` refuses a ``-b`` of
    another size and lets ``-q`` replace the stored crosses."""
    if not isinstance(model, pp.SGDRegressor | pp.SGDClassifier):
        raise ValueError(f"-i: train continues SGD models, not a {type(model).__name__}")
    if args.bits is not None and args.bits != model.bits_:
        raise ValueError(f"-i: the model has -b {model.bits_}, the command line -b {args.bits}")
    changes = {
        "-q/--interactions": bool(args.q or args.interactions or isinstance(args.quadratic, str)),
        "--quadratic/--cubic": bool(args.quadratic or args.cubic),
        "--initial_weight": bool(args.initial_weight),
        "--stage_poly": args.stage_poly,
        "--noconstant": args.noconstant,
        "--oaa": bool(args.oaa),
        "--ffm_k": args.ffm_k is not None,
    }
    given = [flag for flag, on in changes.items() if on]
    if given:
        raise ValueError(
            f"-i: {', '.join(given)} would change the model's features; a loaded model keeps "
            "its own (train a new model instead)"
        )
    if args.loss_function != "squared" and args.loss_function != model.loss:
        raise ValueError(
            f"-i: the model's loss is {model.loss!r}, the command line's {args.loss_function!r}"
        )
