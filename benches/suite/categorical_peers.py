"""Every peer on one categorical set, side by side in one run (issue 58, item 5).

The data are ``benches.suite.field_crosses``' (``eat_rate_unseen``: a fifth of the animal x food
pairs never seen in training; ``click3`` / ``click3_pairs``: click-like with a planted cross of
three fields). On the same training and test rows, one pass each unless said:

* ours: linear, the generating crosses given (``interactions``), the default apple, a
  field-aware factorization over every pair of fields (``ffm=pp.FFM(k=4, pairs="all")``), and
  apple with a factorization of the pairs it crosses (``expansion="apple", ffm=pp.FFM(k=4)``):
  each field hashed into its own column (``hash_features``, ``--bits``), the fit timed alone;
* Vowpal Wabbit (``pyvw``, one core): the generating crosses given (``-q`` for pairs,
  ``--cubic`` for triples) and ``--lrqfa`` over the fields of those crosses (``k=4``), ``-b 24``;
* LightGBM with categorical features (consecutive codes per field, early stopping on a tenth of
  the training rows; eat-rate's pure cross needs looser categorical settings than LightGBM's
  defaults, which stop at one tree: ``cat_smooth`` 1, ``min_data_per_group`` 20,
  ``max_cat_threshold`` 64; click-like uses the defaults, which the looser ones overfit). Not
  a dependency: skipped with a message when absent;
* the batch FFM peer pyFFM, in an interpreter of its own (it pins numpy 1.18; see
  ``benches/tools/pyffm_peer.py``), given with ``--pyffm-python``: its defaults (k=4, rate 0.2,
  lambda 0.002), early-stopped epochs on the last tenth of the training rows. xlearn, the other,
  is a source package whose build needs cmake (not run).

Prints test logloss, AUC and fit seconds of each, and the time over our linear fit's. One process,
one model at a time; the machine's load is printed (Vowpal Wabbit's parser thread makes its time
depend on it).

    .venv/bin/python -m benches.suite.categorical_peers eat_rate_unseen
    .venv/bin/python -m benches.suite.categorical_peers click3_pairs
    (add ``--pyffm-python /tmp/ffmenv/bin/python`` for pyFFM)
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
from sklearn.metrics import roc_auc_score

from benches.common import load, seconds, timed
from benches.suite.field_crosses import data_arguments, frames, hashed, known_crosses, scores
from benches.tools import pyffm_peer

# LightGBM's categorical settings per kind of data (see the module docs).
LOOSE: dict[str, Any] = {"cat_smooth": 1.0, "min_data_per_group": 20, "max_cat_threshold": 64}
LIGHTGBM_DEFAULTS: dict[str, Any] = {
    "cat_smooth": 10.0,
    "min_data_per_group": 100,
    "max_cat_threshold": 32,
}


def measured(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return {
        "logloss": float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()),
        "auc": float(roc_auc_score(y, p)),
    }


def ours(
    data: pl.DataFrame, fields: list[str], known: list[tuple[str, ...]], args: Any
) -> list[dict[str, Any]]:
    features = hashed(data, fields, args.bits)
    train, test = features.head(args.train), features.tail(args.test)
    models: dict[str, dict[str, Any]] = {
        "ours: linear": {},
        "ours: given crosses": {"interactions": known},
        "ours: default apple": {"expansion": "apple"},
        "ours: ffm k=4": {"ffm": pp.FFM(k=4, pairs="all")},
        "ours: apple + ffm k=4 over its crosses": {"expansion": "apple", "ffm": pp.FFM(k=4)},
    }
    # A first fit starts the thread pool and faults in the allocator: not any model's time.
    pp.SGDClassifier(loss="logistic", bits=args.bits).fit(train.head(10_000), "label")
    rows = []
    for name, options in models.items():
        model = pp.SGDClassifier(loss="logistic", bits=args.bits, **options)
        took = seconds(partial(model.fit, train, "label"))
        result = scores(model, test)
        rows.append(
            {"model": name, "logloss": result["logloss"], "auc": result["auc"], "fit_s": took}
        )
        print(f"  {rows[-1]}", flush=True)
    return rows


def vowpal_wabbit(
    data: pl.DataFrame, fields: list[str], known: list[tuple[str, ...]], args: Any
) -> list[dict[str, Any]]:
    from vowpalwabbit import pyvw

    # One namespace letter per field: a..z, then A..Z.
    letters = [chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26) for i in range(len(fields))]
    letter = dict(zip(fields, letters, strict=True))
    columns = [data[f].cast(pl.String).to_list() for f in fields]
    lines = [
        " ".join(f"|{letters[j]} {columns[j][r]}" for j in range(len(fields)))
        for r in range(len(data))
    ]
    labels = data["label"].to_numpy()
    crosses = " ".join(
        ("-q " if len(cross) == 2 else "--cubic ") + "".join(letter[f] for f in cross)
        for cross in known
    )
    crossed = sorted({letter[f] for cross in known for f in cross})
    runs = {"VW: given crosses": crosses, "VW: --lrqfa k=4": f"--lrqfa {''.join(crossed)}4"}
    rows = []
    y_test = (labels[args.train :] > 0).astype(np.float64)
    for name, flags in runs.items():
        vw = pyvw.Workspace(f"--loss_function logistic -b 24 --quiet {flags}")
        took = seconds(partial(learn_vw, vw, labels, lines, args.train))
        margins = np.array([vw.predict(lines[r]) for r in range(args.train, len(lines))])
        vw.finish()
        rows.append({"model": name, **measured(y_test, 1 / (1 + np.exp(-margins))), "fit_s": took})
        print(f"  {rows[-1]} ({flags})", flush=True)
    return rows


def learn_vw(vw: Any, labels: np.ndarray, lines: list[str], n_train: int) -> None:
    """One pass of Vowpal Wabbit over the first ``n_train`` lines."""
    for r in range(n_train):
        vw.learn(f"{int(labels[r])} {lines[r]}")


def lightgbm(
    data: pl.DataFrame,
    fields: list[str],
    n_train: int,
    categories: dict[str, Any],
    leaves: int = 63,
    rate: float = 0.1,
    max_trees: int = 2000,
    patience: int = 50,
) -> dict[str, Any] | None:
    """LightGBM with categorical features on the first ``n_train`` rows of ``data`` (a tenth of
    them held out for early stopping), scored on the rest; None when it is not installed."""
    try:
        import lightgbm as lgb
    except ImportError:
        print("  LightGBM: not installed, skipped (pip install lightgbm)")
        return None
    # Consecutive codes from 0 per field (Polars' categorical codes are shared by all columns,
    # which LightGBM reads as sparse categories).
    codes = data.select((pl.col(f).cast(pl.String).rank("dense") - 1).alias(f) for f in fields)
    x = codes.to_numpy().astype(np.int32)
    y = (data["label"].to_numpy() > 0).astype(np.float64)
    n_fit = n_train - n_train // 10
    params = {
        "objective": "binary",
        "learning_rate": rate,
        "num_leaves": leaves,
        "num_threads": 2,
        "verbose": -1,
        "max_cat_to_onehot": 4,
        **categories,
    }

    def train() -> tuple[Any, Any, Any]:
        """The booster and its data sets (returned, so that freeing them is not timed)."""
        train_set = lgb.Dataset(x[:n_fit], y[:n_fit], categorical_feature=list(range(len(fields))))
        valid_set = lgb.Dataset(x[n_fit:n_train], y[n_fit:n_train], reference=train_set)
        booster = lgb.train(
            params,
            train_set,
            num_boost_round=max_trees,
            valid_sets=[valid_set],
            callbacks=[lgb.early_stopping(patience, verbose=False)],
        )
        return booster, train_set, valid_set

    (booster, *_data_sets), took = timed(train)
    p = booster.predict(x[n_train:], num_iteration=booster.best_iteration)
    name = f"LightGBM {lgb.__version__} ({booster.best_iteration} trees)"
    row = {"model": name, **measured(y[n_train:], np.asarray(p)), "fit_s": took}
    print(f"  {row}", flush=True)
    return row


def pyffm(
    data: pl.DataFrame, fields: list[str], n_train: int, python: str | None
) -> dict[str, Any] | None:
    """pyFFM (batch, early-stopped epochs) in its own interpreter (``benches.tools.pyffm_peer``);
    None with a message when no interpreter for it is given."""
    if python is None:
        print("  pyFFM: skipped (give --pyffm-python; see benches/tools/pyffm_peer.py)")
        return None
    # One global index per (field, value): consecutive codes per field, offset by the fields before.
    codes = data.select((pl.col(f).cast(pl.String).rank("dense") - 1).alias(f) for f in fields)
    sizes = [codes[f].n_unique() for f in fields[:-1]]
    offsets = np.cumsum(np.array([0, *sizes], dtype=np.int64))
    features = codes.to_numpy().astype(np.int64) + offsets[None, :]
    labels = np.where(data["label"].to_numpy() > 0, 1.0, -1.0)
    with tempfile.TemporaryDirectory() as folder:
        given, out = Path(folder) / "input.npz", Path(folder) / "output.npz"
        pyffm_peer.write_input(given, features, labels, n_train)
        subprocess.run([python, pyffm_peer.__file__, str(given), str(out)], check=True)
        result = np.load(out)
        p, took, epochs = result["p"], float(result["fit_s"]), int(result["best_epoch"])
    y = (labels[n_train:] > 0).astype(np.float64)
    row = {"model": f"pyFFM k=4 (best epoch {epochs})", **measured(y, p), "fit_s": took}
    print(f"  {row}", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    parser.add_argument("--bits", type=int, default=24)
    parser.add_argument("--skip", default="", help="comma-separated: vw, lightgbm, pyffm")
    parser.add_argument(
        "--pyffm-python", help="an interpreter with pyFFM (benches/tools/pyffm_peer.py)"
    )
    args = parser.parse_args()
    skipped = set(args.skip.split(","))
    data, fields = frames(args.kind, args.train, args.test, args.seed)
    known = known_crosses(args.kind, args.seed)
    print(
        f"{args.kind}: {args.train:,} train + {args.test:,} test rows, {len(fields)} fields, "
        f"generating crosses {known}; {load()}"
    )
    rows = ours(data, fields, known, args)
    if "vw" not in skipped:
        rows += vowpal_wabbit(data, fields, known, args)
    if "lightgbm" not in skipped:
        loose = args.kind.startswith("eat_rate")
        found = lightgbm(data, fields, args.train, LOOSE if loose else LIGHTGBM_DEFAULTS)
        rows += [found] if found is not None else []
    if "pyffm" not in skipped:
        found = pyffm(data, fields, args.train, args.pyffm_python)
        rows += [found] if found is not None else []
    table = pl.DataFrame(rows)
    linear = table.filter(pl.col("model") == "ours: linear")["fit_s"][0]
    table = table.with_columns(over_linear=pl.col("fit_s") / linear)
    with pl.Config(tbl_rows=20, tbl_width_chars=200, fmt_str_lengths=60, float_precision=4):
        print(table)
    print(load())


if __name__ == "__main__":
    main()
