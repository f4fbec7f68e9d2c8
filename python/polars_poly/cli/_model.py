"""The estimator the flags ask for (loss, update rule, expansion, ``-q``/``--interactions``
crosses of namespace letters), the labels that decide a classifier's classes, and what a
model's state says about how it learns (fitted yet; in pieces or in one engine run)."""

from __future__ import annotations

import argparse
import itertools
from typing import Any

import polars_poly as pp
from polars_poly._input import frame_columns, namespace_names
from polars_poly._lazy import np, pl
from polars_poly.cli._checks import UsageError

CLASSIFICATION_LOSSES = ("logistic", "hinge")


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


def _ffm(args: argparse.Namespace, namespaces: list[str]) -> pp.FFM:
    """fwumious_wabbit's ``--ffm_k``, ``--ffm_field`` (each one namespace here, by name or
    letter; none: every namespace) and the rule's flags, as an :class:`FFM`."""
    fields: list[str] = []
    for given in args.ffm_field:
        if given in namespaces:
            fields.append(given)
            continue
        matching = [n for n in namespaces if len(given) == 1 and _letter(n) == given]
        if not matching:
            raise UsageError(
                f"--ffm_field {given}: no namespace is named or starts with it (a field is one "
                f"namespace here; fwumious_wabbit's fields of several are not supported); the "
                f"namespaces are {namespaces}"
            )
        fields.append(matching[0])
    rule = {
        "bits": args.ffm_bit_precision,
        "learning_rate": args.ffm_learning_rate,
        "power_t": args.ffm_power_t,
        "initial_accumulator": args.ffm_init_acc_gradient,
    }
    given_rule = {name: value for name, value in rule.items() if value is not None}
    return pp.FFM(k=args.ffm_k, fields=fields or None, pairs=args.ffm_pairs, **given_rule)


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


def _raw_labels(labels: pl.Series | list[float], loss: str) -> bool:
    """Whether a classification loss learns the file's ``labels`` as they are, as Vowpal
    Wabbit does, rather than as classes: a logistic loss on labels in [-1, +1] (a 0 is half
    positive, half negative), a hinge loss on labels that are not -1/+1 nor whole numbers
    beyond them (integer labels 1..K are classes: ours, one against all)."""
    if loss not in CLASSIFICATION_LOSSES:
        return False
    if not isinstance(labels, list):
        if not labels.dtype.is_numeric():
            return False
        labels = labels.to_list()
    values = set(labels)
    if not values or values <= {-1.0, 1.0}:
        return False
    within = all(-1 <= v <= 1 for v in values)
    if loss == "logistic":
        return within
    return within or not all(float(v).is_integer() for v in values)


def _estimator(
    args: argparse.Namespace,
    columns: list[str],
    schema: pl.Schema | None,
    raw_labels: bool = False,
) -> Any:
    """The estimator the options ask for, on the feature ``columns`` of a frame of ``schema``
    (its numeric columns one namespace, ``features``: ``-q`` names it by ``f``), or with no
    ``schema`` on the namespaces ``columns`` of Vowpal Wabbit text read by the engine. A
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
        "shuffle": False,  # Vowpal Wabbit learns the rows in their order
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
    if crosses or args.ffm_k is not None:
        namespaces = (
            columns
            if schema is None
            else namespace_names(*frame_columns(schema, columns, set(), text=True))
        )
    if crosses:
        options["interactions"] = _crosses(crosses, namespaces)
    if args.ffm_k is not None:
        options["ffm"] = _ffm(args, namespaces)
    if args.oaa or (args.loss_function in CLASSIFICATION_LOSSES and not raw_labels):
        return pp.SGDClassifier(**options)
    return pp.SGDRegressor(**options)


def _classes(
    args: argparse.Namespace,
    labels: pl.Series | list[float] | None,
    first_label: float | None = None,
) -> list[Any]:
    """A new classifier's classes: with ``--oaa K`` Vowpal Wabbit's multiclass labels, 1..K, or
    0..K-1 with ``--indexing 0`` or when the first example's label is 0 (a first 0 later
    renumbers vw's classes from there: cli/_indexing.py), else the file's distinct ``labels``
    ({0, 1} or {-1, +1} when they are among those)."""
    if args.oaa or labels is None:
        indexing = getattr(args, "indexing", None)
        if indexing is None:
            indexing = 0 if first_label == 0 else 1
        return list(range(indexing, indexing + (args.oaa or 0)))
    from polars_poly._input import classes_of

    values = np.asarray(labels, dtype=np.float64) if isinstance(labels, list) else labels.to_numpy()
    found: list[Any] = classes_of(values).tolist()
    return found


def _in_pieces(model: Any) -> bool:
    """Whether the model learns in pieces, the table's rows scored apart: one-against-all (its
    table is of classes) and a new apple model, whose rankings race (its own models)."""
    if len(getattr(model, "classes_", ())) > 2:
        return True
    apple = model._apple()
    return not _fitted(model) and apple is not None and apple.ranking == "auto"


def _fitted(model: Any) -> bool:
    return hasattr(model, "_learner")
