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
import contextlib
import itertools
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt
import polars as pl

import polars_poly as pp
from polars_poly._input import frame_columns, namespace_names
from polars_poly.readers import DEFAULT_NAMESPACE

CLASSIFICATION_LOSSES = ("logistic", "hinge")


def _format_of(path: str, given: str) -> str:
    """The format ``--format`` gives, else the suffix's (``.vw``, ``.parquet``, ``.svm``), else
    the first line's: Vowpal Wabbit text has a ``|``, a LIBSVM line never does (``vw`` users
    name their files ``.dat``, ``.txt`` or nothing, and ``/dev/stdin`` has no suffix)."""
    if given != "auto":
        return given
    name = path[:-3] if path.endswith(".gz") else path
    if name.endswith(".vw"):
        return "vw"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".svm", ".libsvm", ".svmlight")):
        return "libsvm"
    return "vw" if b"|" in _first_line(path) else "libsvm"


def _first_line(path: str) -> bytes:
    """The first line of the (plain or gzip) file that is not blank; b"" for none."""
    import gzip

    with open(path, "rb") as raw:
        gzipped = raw.read(2) == b"\x1f\x8b"
    opened = gzip.open(path, "rb") if gzipped else open(path, "rb")
    with opened as lines:
        for line in lines:
            if line.strip():
                return bytes(line)
    return b""


STDIN = "-"


@contextmanager
def data_file(path: str, format: str) -> Iterator[tuple[str, str]]:
    """(a readable path, its format) for ``-d``: the file, or standard input (``-`` or no
    ``-d``: Vowpal Wabbit text unless ``--format`` says) or any other stream (a pipe, a FIFO,
    ``/dev/stdin``), which can be read only once, copied to a temporary file first (a file is
    read more than once: its format, its namespaces, then its rows)."""
    stream = path == STDIN or (os.path.exists(path) and not _is_file_or_directory(path))
    if not stream:
        yield path, _format_of(path, format)
        return
    with tempfile.TemporaryDirectory(prefix="polars-poly-stdin-") as folder:
        copy = Path(folder) / ("stdin" if path in (STDIN, "/dev/stdin") else Path(path).name)
        with copy.open("wb") as out:
            if path == STDIN:
                shutil.copyfileobj(sys.stdin.buffer, out)
            else:
                with open(path, "rb") as source:
                    shutil.copyfileobj(source, out)
        yield str(copy), _format_of(str(copy), format)


def _is_file_or_directory(path: str) -> bool:
    mode = os.stat(path).st_mode
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


# Rows read and learned at a time: the commands stream their input in bounded memory.
BATCH_ROWS = 65_536
# Rows per batch of a run in the engine (Vowpal Wabbit text or its cache): three batches are in
# flight (read, queued, learned), so smaller ones keep the peak near the weight table's size;
# below this the hand-offs begin to cost.
ENGINE_BATCH_ROWS = 16_384


def scan_data(
    path: str, kind: str, args: argparse.Namespace, bits: int, model: Any = None
) -> tuple[pl.LazyFrame, list[str], str]:
    """The data file as a LazyFrame read in batches, its feature columns (one per Vowpal Wabbit
    namespace) and its label column. A Vowpal Wabbit file is read with the reader flags
    (``--ignore``, ``--keep``, ``--hash``, ``--ngram``, ``--skips``) and, for a ``model``, as
    its namespaces: one the file lacks is empty, one the model lacks is dropped (it has no
    weights for it)."""
    if kind == "libsvm":
        return pp.scan_libsvm(path, batch_size=BATCH_ROWS), ["features"], "label"
    if kind == "vw":
        read = _vw_reader_options(args, model)
        fitted = getattr(model, "namespaces_", None)
        if fitted is not None:
            read |= {"namespaces": list(fitted), "other_namespaces": "drop"}
        else:
            read["namespaces"] = "auto"
        frame = pp.scan_vw(path, bits=bits, batch_size=BATCH_ROWS, **read)
        names = frame.collect_schema().names()
        return frame, [c for c in names if c not in ("label", "weight", "base", "tag")], "label"
    frame = pl.scan_parquet(path)
    names = frame.collect_schema().names()
    if args.label not in names:
        raise ValueError(f"{path}: no label column {args.label!r}; its columns are {names}")
    return frame, [c for c in names if c not in (args.label, "weight")], args.label


def batches(frame: pl.LazyFrame) -> Iterator[pl.DataFrame]:
    """The frame's rows, ``BATCH_ROWS`` at a time."""
    yield from frame.collect_batches(chunk_size=BATCH_ROWS)


def _crosses(specs: list[str], namespaces: list[str]) -> list[tuple[str, ...]]:
    """``-q ab``, ``--cubic abc``, ``--interactions abcd`` as crosses of namespace columns: each
    letter is a namespace's first character, ``:`` any namespace (each combination once, as
    ``vw`` expands it). A letter no namespace starts with makes an empty cross (none), as in
    ``vw``; the engine then keeps one of the crosses that are permutations of each other."""
    letter_of = {_letter(c): c for c in reversed(namespaces)}
    every = list(dict.fromkeys(letter_of[_letter(c)] for c in namespaces))
    crosses: list[tuple[str, ...]] = []
    for text in specs:
        if len(text) < 2:
            raise ValueError(f"a cross takes two or more namespace letters, got {text!r}")
        if any(letter != ":" and letter not in letter_of for letter in text):
            continue  # a namespace the data lacks: the cross is empty
        choices = [every if letter == ":" else [letter_of[letter]] for letter in text]
        for cross in itertools.product(*choices):
            known = [c for c in crosses if sorted(c) == sorted(cross)]
            if ":" in text and known:
                continue  # vw's wildcards make each combination once
            if cross not in crosses:
                crosses.append(cross)
    return crosses


def _letter(namespace: str) -> str:
    """The letter ``-q`` names a namespace column by (the default namespace's is a space)."""
    return " " if namespace == "default" else namespace[:1]


def _update_rule(args: argparse.Namespace) -> dict[str, Any]:
    """The update rule, learning rate and initial t of Vowpal Wabbit's flags: none of ``--sgd``,
    ``--adaptive``, ``--normalized``, ``--invariant`` is its default rule (all three on, rate
    0.5, t 0); any of them sets exactly those given, with a default rate of 10 (unless adaptive
    and normalized) and, without adaptive or normalized, a t of 1, the rate scaled by
    t ** power_t (vw's gd setup)."""
    switches = {"adaptive": args.adaptive, "normalized": args.normalized}
    switches["invariant"] = args.invariant
    initial_t = 0.0 if args.initial_t is None else args.initial_t
    if not (args.sgd or any(switches.values())):
        rate = 0.5 if args.learning_rate is None else args.learning_rate
        return {"eta0": rate, "initial_t": initial_t, **dict.fromkeys(switches, True)}
    rate = args.learning_rate
    if rate is None:
        rate = 0.5 if args.adaptive and args.normalized else 10.0
    if not (args.adaptive or args.normalized):
        initial_t = 1.0 if args.initial_t is None else args.initial_t
        rate *= float(np.float32(initial_t) ** np.float32(args.power_t))
    return {"eta0": rate, "initial_t": initial_t, **switches}


def _distinct_labels(frame: pl.LazyFrame, label: str) -> pl.Series:
    """The file's labels, each once, sorted (one scan of the label column)."""
    query = frame.select(pl.col(label).drop_nulls().unique().sort())
    return query.collect(engine="streaming")[label]


def _raw_labels(labels: pl.Series, loss: str) -> bool:
    """Whether a classification loss learns the file's ``labels`` as they are, as Vowpal
    Wabbit does, rather than as classes: a logistic loss on labels in [-1, +1] (a 0 is half
    positive, half negative), a hinge loss on labels that are not -1/+1 nor whole numbers
    beyond them (integer labels 1..K are classes: ours, one against all)."""
    if loss not in CLASSIFICATION_LOSSES or not labels.dtype.is_numeric():
        return False
    values = set(labels.to_list())
    if not values or values <= {-1.0, 1.0}:
        return False
    within = all(-1 <= v <= 1 for v in values)
    if loss == "logistic":
        return within
    return within or not all(float(v).is_integer() for v in values)


def _estimator(
    args: argparse.Namespace, columns: list[str], schema: pl.Schema, raw_labels: bool = False
) -> Any:
    """The estimator the options ask for, on the feature ``columns`` of a frame of ``schema``
    (its numeric columns one namespace, ``features``: ``-q`` names it by ``f``). A
    classification loss on ``raw_labels`` learns them as they are (Vowpal Wabbit's reading), a
    regressor of margins; otherwise it trains a classifier of the labels."""
    options: dict[str, Any] = {
        "loss": args.loss_function,
        "bits": 18 if args.bits is None else args.bits,
        **_update_rule(args),
        "power_t": args.power_t,
        "l1": args.l1,
        "l2": args.l2,
        "features": columns,
        "progress": False,
        "field_scales": bool(args.field_scales),
        "constant": not args.noconstant,
    }
    if args.loss_function == "quantile":
        options["quantile_tau"] = args.quantile_tau
    if args.initial_weight:
        options["initial_weight"] = args.initial_weight
    # Vowpal Wabbit's --quadratic ab is -q ab, --cubic abc and --interactions of any length are
    # crosses too; --quadratic and --cubic alone are ours (every product up to the degree).
    crosses = [*args.q, *args.interactions]
    crosses += [flag for flag in (args.quadratic, args.cubic) if isinstance(flag, str)]
    if args.stage_poly:
        options["expansion"] = pp.Apple(field_crosses=None)
    elif args.cubic is True:
        options["expansion"] = "cubic"
    elif args.quadratic is True:
        options["expansion"] = "quadratic"
    if crosses:
        namespaces = namespace_names(*frame_columns(schema, columns, set(), text=True))
        options["interactions"] = _crosses(crosses, namespaces)
    if args.oaa or (args.loss_function in CLASSIFICATION_LOSSES and not raw_labels):
        return pp.SGDClassifier(**options)
    return pp.SGDRegressor(**options)


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


def _vw_reader_options(args: argparse.Namespace, model: Any = None) -> dict[str, Any]:
    """The reader flags (``--ignore``, ``--keep``, ``--hash``, ``--ngram``, ``--skips``): the
    command line's, else those the ``model`` was trained with (kept in its file, as vw keeps
    them in its model)."""
    given = {
        "ignore": "".join(args.ignore) or None,
        "keep": "".join(args.keep) or None,
        "hash": None if args.hash == "strings" else args.hash,
        "ngram": args.ngram or None,
        "skips": args.skips or None,
    }
    stored = getattr(model, "_vw_reader", None) or {}
    merged = {key: value if value is not None else stored.get(key) for key, value in given.items()}
    return merged | {"hash": merged["hash"] or "strings"}


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
        schema = _internal.reader_schema("vw", read | {"namespaces": namespaces}).schema
        found = pl.Series("label", labels, dtype=pl.Float64).sort()
        raw = args.loss_function in CLASSIFICATION_LOSSES and _raw_labels(found, args.loss_function)
        model = _estimator(args, namespaces, schema, raw_labels=raw)
        if isinstance(model, pp.SGDClassifier):
            model.classes_ = np.unique(np.asarray(_classes(args, found)))
            if len(model.classes_) > 2:
                return None
    else:
        namespaces = list(model.namespaces_)
        schema = _internal.reader_schema("vw", read | {"namespaces": namespaces}).schema
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

    _, _, summary, rows, report = model._learn_vw(schema, run)
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
    bits = args.bits if model is None else model.bits
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
            # As partial_fit(classes=...) names them: --oaa's 1..K, else the file's labels.
            model.classes_ = np.unique(np.asarray(_classes(args, labels)))
    if _in_pieces(model):
        _train_in_pieces(args, model, frame, label, weight, report_to)
    else:
        _train_scored(args, model, frame, label, weight, report_to, predictions)
    if kind == "vw":
        read = _vw_reader_options(args, model)
        model._vw_reader = {k: v for k, v in read.items() if v is not None}
    return model


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
    if args.bits is not None and args.bits != model.bits:
        raise ValueError(f"-i: the model has -b {model.bits}, the command line -b {args.bits}")
    changes = {
        "-q/--interactions": bool(args.q or args.interactions or isinstance(args.quadratic, str)),
        "--quadratic/--cubic": bool(args.quadratic or args.cubic),
        "--initial_weight": bool(args.initial_weight),
        "--stage_poly": args.stage_poly,
        "--noconstant": args.noconstant,
        "--oaa": bool(args.oaa),
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


def _in_pieces(model: Any) -> bool:
    """Whether the model learns in pieces, the table's rows scored apart: one-against-all (its
    table is of classes) and a new apple model, whose rankings race (its own models)."""
    if len(getattr(model, "classes_", ())) > 2:
        return True
    apple = model._apple()
    return not _fitted(model) and apple is not None and apple.ranking == "auto"


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


def _write_history(path: str, rows: list[tuple[Any, ...]]) -> None:
    """``--history``: the printed table's rows as numbers."""
    names = ["examples", "weight", "average_loss", "loss_since_last", "holdout", "label"]
    pl.DataFrame(rows, schema=[*names, "prediction", "features"], orient="row").write_csv(path)


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


def _train_in_pieces(
    args: argparse.Namespace,
    model: Any,
    frame: pl.LazyFrame,
    label: str,
    weight: str | None,
    report_to: TextIO | None,
) -> None:
    """One-against-all and apple's race: each table row's example scored, then learned."""
    holdout = args.passes > 1 and not args.holdout_off
    if args.testonly or args.predictions or args.progress or holdout:
        raise ValueError(
            "-t, -p, -P and passes with a holdout need one engine model: not --oaa, and not "
            "--stage_poly's race of rankings (give --holdout_off with --passes)"
        )
    classes = None
    if isinstance(model, pp.SGDClassifier) and not _fitted(model):
        classes = model.classes_.tolist()
    table = None if report_to is None else ProgressTable(report_to)
    start = model._learner.progress if _fitted(model) else (0, 0.0, 0.0, 0)
    multiclass = len(getattr(model, "classes_", ())) > 2
    label_sum = 0.0
    for _ in range(args.passes):
        for batch in batches(frame):
            learn_batch(model, batch, label, weight, classes, table)
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
) -> None:
    """Learns a batch of examples; with a table, the example that brings the count to a power
    of two is scored first and gets its row (as ``vw`` prints them)."""
    if batch[label].null_count():
        first = int(batch[label].is_null().arg_true()[0]) + _examples(model)
        raise ValueError(f"example {first + 1} has no label")
    start = 0
    while start < batch.height:
        seen = _examples(model)
        if table is None:
            end = batch.height
        else:
            next_row = 1 << seen.bit_length()  # the next power of two above the count
            end = min(batch.height, start + next_row - seen - 1)
        if end > start:
            model.partial_fit(
                batch.slice(start, end - start), label, weight, **_first(classes, model)
            )
            start = end
            continue
        # The example that brings the count to a power of two: scored first, then learned.
        example = batch.slice(start, 1)
        predicted = _score(model, example) if _fitted(model) else 0.0
        if not _fitted(model) and classes is not None and len(classes) > 2:
            predicted = float(classes[0])  # all scores 0: the first class, as vw says
        before = model._learner.progress[3] if _fitted(model) else 0
        model.partial_fit(example, label, weight, **_first(classes, model))
        if table is not None:
            # Features of the example (a multiclass model updates them once per class).
            heads = len(getattr(model._learner, "heads", [None]))
            features = (model._learner.progress[3] - before) // heads
            table.row(model, float(example[label][0]), predicted, int(features))
        start += 1


def _examples(model: Any) -> int:
    return int(model._learner.progress[0]) if _fitted(model) else 0


def _classes(args: argparse.Namespace, labels: pl.Series | None) -> list[Any]:
    """A new classifier's classes: 1..K with ``--oaa K`` (Vowpal Wabbit's multiclass labels; a
    label outside them is an error naming its example), else the file's distinct ``labels``
    ({0, 1} or {-1, +1} when they are among those)."""
    if args.oaa or labels is None:
        return list(range(1, (args.oaa or 0) + 1))
    from polars_poly._input import classes_of

    found: list[Any] = classes_of(labels.to_numpy()).tolist()
    return found


def _save_plot(draw: Any, path: str) -> None:
    """Saves the figure of the Axes ``draw()`` returns (matplotlib, without a display)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install matplotlib") from None
    ax = draw()
    ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(ax.figure)


def _score(model: Any, row: pl.DataFrame) -> float:
    """The model's prediction for one row before learning it: the margin of a classifier, as
    Vowpal Wabbit prints."""
    if isinstance(model, pp.SGDClassifier):
        if len(model.classes_) > 2:
            return float(model.predict(row)[0])
        return float(model.decision_function(row)[0])
    return float(model.predict(row)[0])


def _fitted(model: Any) -> bool:
    return hasattr(model, "_learner")


def _first(classes: list[int] | None, model: Any) -> dict[str, Any]:
    """``classes`` for a classifier's first ``partial_fit``."""
    if classes is not None and not hasattr(model, "classes_"):
        return {"classes": classes}
    return {}


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
        frame, _, label = scan_data(path, kind, args, getattr(model, "bits", 18), model)
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
        print(f"{score.name} = {score.value():.6f}", file=sys.stderr)


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

    def value(self) -> float:
        if self.classifier:
            return self.correct / self.rows
        total, squares, residual = self.sums
        spread = squares - total * total / self.rows
        return float(1.0 - residual / spread) if spread > 0 else float("nan")


def inspect(args: argparse.Namespace, out: TextIO) -> None:
    model = pp.load_model(args.initial_regressor)
    print(f"{type(model).__name__} from {args.initial_regressor}", file=out)
    defaults = type(model)().get_params(deep=False)
    changed = {
        k: v for k, v in model.get_params(deep=False).items() if repr(v) != repr(defaults.get(k))
    }
    print(f"options (not default): {changed}", file=out)
    names = ("classes_", "n_examples_", "progressive_loss_", "progressive_error_", "namespaces_")
    for name in (*names, "n_parents_", "n_crosses_"):
        if hasattr(model, name):
            value = getattr(model, name)
            value = value.tolist() if isinstance(value, np.ndarray) else value
            print(f"{name.rstrip('_')}: {value}", file=out)
    with pl.Config(tbl_rows=args.top, tbl_cols=-1, fmt_str_lengths=60):
        if getattr(model, "n_parents_", 0):
            print(model.monomials().head(args.top), file=out)
        if getattr(model, "n_crosses_", 0):
            print(model.crosses().head(args.top), file=out)
    if args.plot:
        if not getattr(model, "n_parents_", 0):
            raise ValueError("--plot draws apple's monomials; this model has none")
        _save_plot(lambda: model.plot_monomials(top=args.top), args.plot)
        print(f"monomials plot written to {args.plot}", file=out)
    if args.readable_model:
        with open(args.readable_model, "w") as file:
            lines = write_readable_model(model, file)
        print(f"readable model ({lines} lines) written to {args.readable_model}", file=out)


def write_readable_model(model: Any, out: TextIO) -> int:
    """Vowpal Wabbit's ``--readable_model``: the options, then the weights by name where the
    model has names (a linear model's features and constant, apple's monomials), then every
    nonzero weight slot as ``slot:weight``, per class for a multiclass model. Returns the
    number of lines written."""
    if not isinstance(model, pp.SGDRegressor | pp.SGDClassifier):
        raise ValueError(f"--readable_model describes SGD models, not a {type(model).__name__}")
    lines = [f"{type(model).__name__}", f"bits:{model.bits}", f"loss:{model.loss}"]
    lines.append(f"expansion:{model.expansion!r}")
    if model.interactions:
        lines.append(f"interactions:{list(model.interactions)!r}")
    learner = model._learner
    heads = getattr(learner, "heads", [learner])
    classes = model.classes_.tolist() if len(heads) > 1 else [None]
    named: list[list[tuple[str, float]]] = [[] for _ in heads]
    if hasattr(model, "coef_"):
        names = model.feature_columns_ or [f"x{i}" for i in range(model.n_features_in_)]
        coef = np.atleast_2d(model.coef_)
        for k in range(len(heads)):
            named[k] = [*zip(names, coef[k].tolist(), strict=True)]
            named[k].append(("constant", float(model.intercept_[k])))
    elif model._apple() is not None:
        table = model.monomials()
        for k, cls in enumerate(classes):
            rows = table if cls is None else table.filter(pl.col("class") == cls)
            named[k] = list(zip(rows["monomial"].to_list(), rows["weight"].to_list(), strict=True))
    slots = list(range(2**model.bits))
    # Slot weights are before their field's scale; the scales (every class's) follow each head.
    all_scales = model.field_scales_ if heads[0].field_scales() is not None else None
    for k, head in enumerate(heads):
        if classes[k] is not None:
            lines.append(f"class:{classes[k]}")
        lines.extend(f"{name}:{weight:.6g}" for name, weight in named[k])
        weights = np.asarray(head.weights_at(slots))
        lines.extend(f"{slot}:{weights[slot]:.6g}" for slot in np.flatnonzero(weights))
        if all_scales is not None:
            scales = all_scales
            if classes[k] is not None:
                scales = scales.filter(pl.col("class") == classes[k])
            pairs = zip(scales["field"], scales["scale"], strict=True)
            lines.extend(f"field_scale:{name}:{scale:.6g}" for name, scale in pairs)
    out.write("\n".join(lines) + "\n")
    return len(lines)


COMMANDS = {"train": train, "predict": predict, "inspect": inspect}


def run(args: argparse.Namespace) -> int:
    """Runs a ``train`` / ``predict`` / ``inspect`` command: its exit code. ``train`` reports
    on stderr, as ``vw`` does, so that stdout stays free for predictions."""
    out = sys.stderr if args.command == "train" else sys.stdout
    try:
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
