"""Multiclass (one against all): ours against Vowpal Wabbit's ``--oaa``, side by side in one run.

The shared data sets with more than two classes (``../shared/data``): shuttle (7 classes),
covtype_subset10k (7), mnist_t10k (10) on a seeded 80/20 split, and sector (105 classes, sparse
tf-idf text) on its own train/test files. Both sides: logistic loss, one pass, the default rate
and update rule, ``bits`` 18, features hashed identically (one namespace, index names). Ours:
``SGDClassifier.fit`` on the scipy matrix (one engine learner per class, each its own table);
Vowpal Wabbit: ``--oaa K`` from its binary cache (made beforehand), one shared table, its time
the process wall time minus that of the same command on a one-example cache. Rounds alternate
the two; medians are reported with the ratio, and the load average before each round.

    .venv/bin/python -m benches.suite.multiclass_vs_vw                 # 3 rounds
    .venv/bin/python -m benches.suite.multiclass_vs_vw --rounds 1 --datasets shuttle
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

import numpy as np
import polars_poly as pp
import scipy.sparse as sp
from polars_poly import benchdata

from benches.common import data_or_exit, load, module_or_exit, seconds, timed

DATASETS = ("shuttle", "covtype_subset10k", "mnist_t10k", "sector")
# sector comes as its own train and test files; the others are split here.
SECTOR = ("sector/sector.scale.gz", "sector/sector.t.scale.gz")


def files(name: str) -> tuple[str, ...]:
    """The files of data set ``name`` in the shared data folder."""
    return SECTOR if name == "sector" else (benchdata._SPECS[name].path,)


def read(name: str, root: Path) -> tuple[sp.csr_array, np.ndarray, sp.csr_array, np.ndarray]:
    """(train X, train y, test X, test y) with the original class labels."""
    spec = benchdata._SPECS[name]
    if name == "sector":
        X, y = spec.reader(root / SECTOR[0])
        Xt, yt = spec.reader(root / SECTOR[1])
        width = max(X.shape[1], Xt.shape[1])
        X.resize((X.shape[0], width))
        Xt.resize((Xt.shape[0], width))
        return sp.csr_array(X), y, sp.csr_array(Xt), yt
    X, y = spec.reader(root / spec.path)
    order = np.random.default_rng(0).permutation(X.shape[0])
    cut = int(0.8 * len(order))
    X = sp.csr_array(X)
    return X[order[:cut]], y[order[:cut]], X[order[cut:]], y[order[cut:]]


def vw_file(X: sp.csr_array, labels: np.ndarray, path: Path) -> None:
    """Vowpal Wabbit text with labels 1..K (``labels`` are class numbers from 0)."""
    with open(path, "w") as f:
        for row in range(X.shape[0]):
            start, end = X.indptr[row], X.indptr[row + 1]
            pairs = zip(X.indices[start:end], X.data[start:end], strict=True)
            body = " ".join(f"{i}:{v:.9g}" for i, v in pairs)
            f.write(f"{labels[row] + 1} |features {body}\n")


def vw(args: list[str]) -> float:
    """Wall seconds of ``python -m vowpalwabbit --quiet args`` (its wheel has no binary)."""
    command = [sys.executable, "-m", "vowpalwabbit", "--quiet", *args]
    return seconds(partial(subprocess.run, command, check=True))


def fit_ours(X: sp.csr_array, ids: np.ndarray, bits: int) -> pp.SGDClassifier:
    # The rows in file order, as vw learns them (the default shuffles in-memory data).
    return pp.SGDClassifier(bits=bits, progress=False, shuffle=False).fit(X, ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--bits", type=int, default=18)
    args = parser.parse_args()
    names = args.datasets.split(",")
    root = data_or_exit(*(path for name in names for path in files(name)))
    module_or_exit("vowpalwabbit", "pip install vowpalwabbit")
    work = Path(tempfile.mkdtemp(prefix="multiclass-"))
    print(
        f"{'data set':<18}{'classes':>8}{'train':>8}{'test':>7}{'ours err':>10}{'VW err':>9}"
        f"{'ours s':>9}{'VW s':>8}{'VW/ours':>9}"
    )
    for name in names:
        X, y, Xt, yt = read(name, root)
        classes = np.unique(np.concatenate([y, yt]))
        ids, test_ids = np.searchsorted(classes, y), np.searchsorted(classes, yt)
        k = len(classes)
        vw_file(X, ids, work / "train.vw")
        vw_file(Xt, test_ids, work / "test.vw")
        (work / "one.vw").write_text((work / "train.vw").read_text().split("\n", 1)[0] + "\n")
        common = ["--oaa", str(k), "--loss_function", "logistic", "-b", str(args.bits)]
        cache = work / "train.cache"
        cache.unlink(missing_ok=True)
        vw(["-d", str(work / "train.vw"), "--cache_file", str(cache), "--noop", *common])
        # Vowpal Wabbit's start-up: the same command on a one-example file's cache.
        one, one_cache = work / "one.vw", work / "one.cache"
        one_cache.unlink(missing_ok=True)
        vw(["-d", str(one), "--cache_file", str(one_cache), "--noop", *common])
        startup = statistics.median(
            vw(["-d", str(one), "--cache_file", str(one_cache), *common]) for _ in range(3)
        )
        ours_s, vw_s = [], []
        ours_err = vw_err = float("nan")
        for _ in range(args.rounds):
            load_before = load()
            model, took = timed(partial(fit_ours, X, ids, args.bits))
            ours_s.append(took)
            ours_err = float((model.predict(Xt) != test_ids).mean())
            model_path = work / "vw.model"
            train = ["-d", str(work / "train.vw"), "--cache_file", str(cache)]
            vw_s.append(vw([*train, *common, "-f", str(model_path)]) - startup)
            preds = work / "preds.txt"
            vw(["-t", "-i", str(model_path), "-d", str(work / "test.vw"), "-p", str(preds)])
            predicted = np.loadtxt(preds).astype(int) - 1
            vw_err = float((predicted != test_ids).mean())
            print(f"  {name}: round {load_before}", file=sys.stderr)
        a, b = statistics.median(ours_s), statistics.median(vw_s)
        print(
            f"{name:<18}{k:>8}{X.shape[0]:>8}{Xt.shape[0]:>7}{100 * ours_err:>9.2f}%"
            f"{100 * vw_err:>8.2f}%{a:>9.3f}{b:>8.3f}{b / a:>8.2f}x"
        )


if __name__ == "__main__":
    main()
