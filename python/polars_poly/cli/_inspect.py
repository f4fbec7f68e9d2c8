"""``inspect``: a model's options, its records and what apple grew; with the model's
description in our layout (``--readable_model`` of a model learned in pieces) and plots."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

import polars_poly as pp
from polars_poly._lazy import np, pl


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
    lines = [f"{type(model).__name__}", f"bits:{model.bits_}", f"loss:{model.loss}"]
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
    slots = list(range(2**model.bits_))
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
