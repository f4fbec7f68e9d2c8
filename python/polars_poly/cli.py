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
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import polars as pl

import polars_poly as pp
from polars_poly._input import frame_columns, namespace_names

FORMATS = ("auto", "libsvm", "vw", "parquet")
CLASSIFICATION_LOSSES = ("logistic", "hinge")


def _format_of(path: str, given: str) -> str:
    if given != "auto":
        return given
    name = path[:-3] if path.endswith(".gz") else path
    if name.endswith(".vw"):
        return "vw"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    return "libsvm"


STDIN = "-"


@contextmanager
def data_file(path: str, format: str) -> Iterator[tuple[str, str]]:
    """(a readable path, its format) for ``-d``: the file, or standard input copied to a
    temporary file (``-`` or no ``-d``: Vowpal Wabbit text unless ``--format`` says)."""
    if path != STDIN:
        yield path, _format_of(path, format)
        return
    kind = "vw" if format == "auto" else format
    with tempfile.TemporaryDirectory(prefix="polars-poly-stdin-") as folder:
        copy = Path(folder) / f"stdin.{kind}"
        with copy.open("wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out)
        yield str(copy), kind


# Rows read and learned at a time: the commands stream their input in bounded memory.
BATCH_ROWS = 65_536


def scan_data(path: str, kind: str, label: str, bits: int) -> tuple[pl.LazyFrame, list[str], str]:
    """The data file as a LazyFrame read in batches, its feature columns (one per Vowpal Wabbit
    namespace) and its label column."""
    if kind == "libsvm":
        return pp.scan_libsvm(path, batch_size=BATCH_ROWS), ["features"], "label"
    if kind == "vw":
        frame = pp.scan_vw(path, bits=bits, namespaces="auto", batch_size=BATCH_ROWS)
        names = frame.collect_schema().names()
        return frame, [c for c in names if c not in ("label", "weight", "base", "tag")], "label"
    frame = pl.scan_parquet(path)
    names = frame.collect_schema().names()
    if label not in names:
        raise ValueError(f"{path}: no label column {label!r}; its columns are {names}")
    return frame, [c for c in names if c not in (label, "weight")], label


def batches(frame: pl.LazyFrame) -> Iterator[pl.DataFrame]:
    """The frame's rows, ``BATCH_ROWS`` at a time."""
    yield from frame.collect_batches(chunk_size=BATCH_ROWS)


def _pairs(letters: list[str], namespaces: list[str]) -> list[tuple[str, str]]:
    """``-q ab`` (or Vowpal Wabbit's ``--quadratic ab``, ``--interactions ab``) as pairs of
    namespaces: each letter is a namespace's first character."""

    def column(letter: str) -> str:
        found = [c for c in namespaces if c[:1] == letter]
        if not found:
            raise ValueError(f"-q {letter}: no namespace starting with {letter!r} in {namespaces}")
        return found[0]

    pairs = []
    for text in letters:
        if len(text) != 2:
            raise ValueError(
                f"-q / --interactions take two namespace letters, got {text!r} (crosses of "
                "three or more namespaces are not supported)"
            )
        pairs.append((column(text[0]), column(text[1])))
    return pairs


def _estimator(args: argparse.Namespace, columns: list[str], schema: pl.Schema) -> Any:
    """The estimator the options ask for, on the feature ``columns`` of a frame of ``schema``
    (its numeric columns one namespace, ``features``: ``-q`` names it by ``f``)."""
    options: dict[str, Any] = {
        "loss": args.loss_function,
        "bits": args.bits,
        "eta0": args.learning_rate,
        "power_t": args.power_t,
        "initial_t": args.initial_t,
        "l1": args.l1,
        "l2": args.l2,
        "features": columns,
        "progress": False,
        "field_scales": bool(args.field_scales),
    }
    if isinstance(args.cubic, str):
        raise ValueError(
            f"--cubic {args.cubic}: crosses of three namespaces are not supported (--cubic "
            "alone: all products up to degree 3)"
        )
    # Vowpal Wabbit's --quadratic ab and --interactions ab are -q ab; --quadratic alone is ours.
    crosses = [*args.q, *args.interactions]
    if isinstance(args.quadratic, str):
        crosses.append(args.quadratic)
    if args.stage_poly:
        options["expansion"] = pp.Apple(field_crosses=None)
    elif args.cubic:
        options["expansion"] = "cubic"
    elif args.quadratic is True:
        options["expansion"] = "quadratic"
    if crosses:
        namespaces = namespace_names(*frame_columns(schema, columns, set(), text=True))
        options["interactions"] = _pairs(crosses, namespaces)
    if args.oaa or args.loss_function in CLASSIFICATION_LOSSES:
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
    with data_file(args.data, args.format) as (path, kind):
        frame, columns, label = scan_data(path, kind, args.label, args.bits)
        weight = "weight" if "weight" in frame.collect_schema().names() else None
        if args.initial_regressor:
            model = pp.load_model(args.initial_regressor)
            model.set_params(progress=False)
        else:
            model = _estimator(args, columns, frame.collect_schema())
        classes = None
        if isinstance(model, pp.SGDClassifier) and not hasattr(model, "classes_"):
            classes = _classes(args, frame, label)
        table = None if args.quiet else ProgressTable(out)
        for _ in range(args.passes):
            for batch in batches(frame):
                learn_batch(model, batch, label, weight, classes, table)
    examples, loss, weight_sum, updates = model._learner.progress
    errors = getattr(model._learner, "errors", None)
    if errors is not None:
        loss, updates = errors[0], updates // len(model._learner.heads)
    print(
        f"\nfinished run\nnumber of examples = {examples}\nweighted example sum = "
        f"{weight_sum:.1f}\naverage loss = {loss / max(weight_sum, 1e-300):.6f}\n"
        f"total feature number = {updates}",
        file=out,
    )
    if args.final_regressor:
        model.save(args.final_regressor)
        print(f"model written to {args.final_regressor}", file=out)
    if args.history:
        # partial_fit records each call's end; keep the doublings (and the end), as the table.
        examples = pl.col("examples")
        doublings = (examples & (examples - 1) == 0) | (examples == examples.max())
        model.history_.filter(doublings).write_csv(args.history)
        print(f"learning curve written to {args.history}", file=out)
    if args.plot:
        _save_plot(model.plot_learning_curve, args.plot)
        print(f"learning curve plot written to {args.plot}", file=out)


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


def _classes(args: argparse.Namespace, frame: pl.LazyFrame, label: str) -> list[Any]:
    """A new classifier's classes: 1..K with ``--oaa K`` (Vowpal Wabbit's multiclass labels; a
    label outside them is an error naming its example), else the file's labels ({0, 1} or
    {-1, +1} when they are among those; one scan of the label column)."""
    if args.oaa:
        return list(range(1, args.oaa + 1))
    from polars_poly.learner import classes_of

    query = frame.select(pl.col(label).unique().sort())
    labels = query.collect(engine="streaming")[label].drop_nulls()
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
    if args.probabilities and not hasattr(model, "predict_proba"):
        raise ValueError(
            f"probabilities need a classifier trained with the logistic loss; the model is a "
            f"{type(model).__name__}"
        )
    classifier = hasattr(model, "classes_")
    multiclass = len(getattr(model, "classes_", ())) > 2
    score = Score(classifier)
    written = 0
    with data_file(args.data, args.format) as (path, kind):
        frame, _, label = scan_data(path, kind, args.label, getattr(model, "bits", 18))
        with contextlib.ExitStack() as stack:
            sink = stack.enter_context(open(args.predictions, "w")) if args.predictions else out
            for batch in batches(frame):
                predicted = None
                if args.raw and isinstance(model, pp.SGDClassifier):
                    values = model.decision_function(batch)
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


def add_commands(commands: Any) -> None:
    """The ``train``, ``predict`` and ``inspect`` subcommands, on an argparse subparsers."""
    data = argparse.ArgumentParser(add_help=False)
    data.add_argument(
        "-d",
        "--data",
        default=STDIN,
        help="LIBSVM, VW text or parquet file, plain or gzip (default or '-': standard input)",
    )
    data.add_argument("--format", choices=FORMATS, default="auto", help="default: by suffix")
    data.add_argument("--label", default="label", help="label column of a parquet file")
    t = commands.add_parser("train", parents=[data], help="train a model (Vowpal Wabbit flags)")
    t.add_argument("-f", "--final_regressor", help="write the model here")
    t.add_argument("-i", "--initial_regressor", help="continue training this model")
    t.add_argument("-b", "--bits", type=int, default=18, help="weight table of 2**bits")
    t.add_argument("-l", "--learning_rate", type=float, default=0.5)
    t.add_argument("--power_t", type=float, default=0.5)
    t.add_argument("--initial_t", type=float, default=0.0)
    t.add_argument("--l1", type=float, default=0.0)
    t.add_argument("--l2", type=float, default=0.0)
    t.add_argument("--passes", type=int, default=1)
    # Vowpal Wabbit's cache and holdout flags, so that its command lines run: reading needs no
    # cache here, and passes learn every row (as vw's --holdout_off).
    for flags in (("-c", "--cache"), ("-k", "--kill_cache"), ("--holdout_off",)):
        t.add_argument(*flags, action="store_true", help="accepted as in vw; changes nothing")
    t.add_argument(
        "--loss_function", default="squared", choices=["squared", "logistic", "hinge", "quantile"]
    )
    t.add_argument("-q", action="append", default=[], help="cross two namespaces, e.g. -q ab")
    t.add_argument(
        "--interactions", action="append", default=[], help="as -q (pairs of namespaces)"
    )
    t.add_argument("--stage_poly", action="store_true", help="apple, the adaptive expansion")
    t.add_argument(
        "--quadratic",
        nargs="?",
        const=True,
        default=False,
        metavar="AB",
        help="alone: all products x_i x_j; with two namespace letters: as -q",
    )
    t.add_argument(
        "--cubic", nargs="?", const=True, default=False, help="all products up to degree 3"
    )
    t.add_argument(
        "--field_scales",
        action="store_true",
        help="learn a scale per namespace and cross (ours; off: Vowpal Wabbit's model)",
    )
    t.add_argument("--quiet", action="store_true", help="no progressive table")
    t.add_argument(
        "--oaa", type=int, default=0, metavar="K", help="K classes, labels 1..K (one against all)"
    )
    t.add_argument("--history", metavar="CSV", help="write the learning curve (history_) here")
    t.add_argument("--plot", metavar="PNG", help="plot the learning curve here (matplotlib)")
    p = commands.add_parser("predict", parents=[data], help="score a file with a model")
    p.add_argument("-i", "--initial_regressor", required=True, help="the model")
    p.add_argument("-p", "--predictions", help="write predictions here (default: stdout)")
    p.add_argument("--raw", action="store_true", help="classifier margins, not labels")
    p.add_argument("--probabilities", action="store_true", help="P(larger class), logistic")
    # Vowpal Wabbit's spellings of the two: --link logistic, --link identity (margins).
    p.add_argument("--link", choices=["identity", "logistic"], help="as vw: margins or P")
    p.add_argument("--binary", action="store_true", help="labels (the default), as vw")
    i = commands.add_parser("inspect", help="summarize a model, list apple's monomials")
    i.add_argument("-i", "--initial_regressor", required=True, help="the model")
    i.add_argument("--top", type=int, default=20, help="monomials listed")
    i.add_argument(
        "--readable_model", metavar="FILE", help="write the weights, by name where known, here"
    )
    i.add_argument("--plot", metavar="PNG", help="plot apple's --top monomials here (matplotlib)")


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
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as a killed-by-SIGPIPE tool would.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (OSError, ValueError, TypeError, pl.exceptions.PolarsError) as err:
        print(f"polars-poly {args.command}: error: {err}", file=sys.stderr)
        return 1
    return 0
