"""polars-poly's SGDClassifier vs Vowpal Wabbit, one pass, b = 18, logistic loss, default update
rule (adaptive + normalized + invariant, learning rate 0.5, power_t 0.5), linear and quadratic
(ours: all x_i·x_j, i <= j, plus the linear terms and the constant; Vowpal Wabbit: ``-q ff``, the
same set with the same hashing).

Ours trains from data already in memory as Arrow (a sparse Polars column); Vowpal Wabbit
(``pip install vowpalwabbit``) trains with ``python -m vowpalwabbit`` from its binary cache file,
made beforehand. Best of three runs each. Reported: examples/s, feature updates/s (expanded
features incl. the constant), progressive validation loss, and test 0-1 error. Vowpal Wabbit's
time is the process wall time minus the wall time of the same command on a one-example file
(interpreter and library start).

Data: a9a (train/test), w8a (80/20 split), Skin_NonSkin (shuffled, 80/20), and a synthetic set
of 1M training rows (20 of 2,000 features per row, labels from a random linear + pairwise model).

Run: ``.venv/bin/python -m benches.suite.learner_vs_vw`` (``--quick`` for a 100k-row synthetic set;
``--ours-only`` skips Vowpal Wabbit, for A/B runs of two builds of ours: run it alternately with
``PYTHONPATH`` set to an unpacked wheel of the other build).
"""

from __future__ import annotations

import argparse
import gzip
import io
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import scipy.sparse as sp

from benches.common import DATA

VW_ARGS = ["--loss_function", "logistic", "-b", "18"]
# Best of this many runs, for both learners.
REPEATS = 3


def split(csr: sp.csr_array, y: np.ndarray, seed: int) -> tuple[sp.csr_array, ...]:
    order = np.random.default_rng(seed).permutation(csr.shape[0])
    cut = int(0.8 * len(order))
    train, test = order[:cut], order[cut:]
    return csr[train], y[train], csr[test], y[test]


def libsvm(path: Path, width: int) -> tuple[sp.csr_array, np.ndarray]:
    frame = pp.read_libsvm(path, n_features=width)
    return pp.to_scipy(frame["features"], width), frame["label"].to_numpy()


def datasets(quick: bool) -> dict[str, tuple[sp.csr_array, ...]]:
    out = {}
    a9a, ya = libsvm(DATA / "a9a" / "a9a.gz", 124)
    a9at, yat = libsvm(DATA / "a9a" / "a9a.t.gz", 124)
    out["a9a"] = (a9a, ya, a9at, yat)
    w8a, yw = libsvm(DATA / "w8a" / "w8a.gz", 301)
    out["w8a"] = split(w8a, yw, 0)
    with gzip.open(DATA / "skin_nonskin" / "Skin_NonSkin.txt.gz", "rb") as f:
        skin = pl.read_csv(io.BytesIO(f.read()), separator="\t")
    dense = skin.select("B", "G", "R").to_numpy().astype(np.float64)
    ys = np.where(skin["SKIN"].to_numpy() == 1, 1.0, -1.0)
    out["Skin_NonSkin"] = split(sp.csr_array(dense), ys, 0)
    out["synthetic"] = synthetic(100_000 if quick else 1_000_000)
    return out


def synthetic(n_train: int, nnz: int = 20, width: int = 2_000) -> tuple[sp.csr_array, ...]:
    """Sparse rows (one index per block of width/nnz columns) with labels from a random model
    with linear and pairwise terms, plus 5% label noise; a quarter as many test rows."""
    rng = np.random.default_rng(42)
    n = n_train + n_train // 4
    block = width // nnz
    indices = (np.arange(nnz) * block + rng.integers(0, block, size=(n, nnz))).ravel()
    values = rng.uniform(0.1, 1.0, size=n * nnz)
    csr = sp.csr_array((values, indices, np.arange(0, n * nnz + 1, nnz)), shape=(n, width))
    w = rng.normal(size=width)
    pair = rng.normal(size=width)
    score = csr @ w + (csr @ pair) * (csr @ np.roll(pair, 1)) / nnz
    y = np.where(score - np.median(score) > 0, 1.0, -1.0)
    y = np.where(rng.random(n) < 0.05, -y, y)
    return csr[:n_train], y[:n_train], csr[n_train:], y[n_train:]


def vw_text(csr: sp.csr_array, y: np.ndarray, path: Path) -> None:
    with open(path, "w") as f:
        for row in range(csr.shape[0]):
            start, end = csr.indptr[row], csr.indptr[row + 1]
            pairs = zip(csr.indices[start:end], csr.data[start:end], strict=True)
            f.write(f"{y[row]:g} |features " + " ".join(f"{i}:{v:.9g}" for i, v in pairs) + "\n")


def run_vw(args: list[str]) -> tuple[float, str]:
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "vowpalwabbit", *args], capture_output=True, text=True, check=True
    )
    return time.perf_counter() - began, done.stderr


def number(pattern: str, text: str) -> float:
    match = re.search(pattern + r"\s*=\s*([-0-9.eE+]+)", text)
    if match is None:
        raise RuntimeError(f"{pattern!r} not in Vowpal Wabbit's output:\n{text}")
    return float(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100k synthetic rows instead of 1M")
    parser.add_argument("--only", nargs="*", help="dataset names to run")
    parser.add_argument("--ours-only", action="store_true", help="time ours alone (no VW)")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pp-vw-"))
    one = work / "one.vw"
    one.write_text("1 |features 1:1\n")
    print(f"polars_poly from {pp.__file__}", file=sys.stderr)
    if not options.ours_only:
        startup = min(run_vw(["-d", str(one), "--quiet", *VW_ARGS])[0] for _ in range(3))
        print(f"Vowpal Wabbit start-up (subtracted): {startup:.3f} s", file=sys.stderr)
    rows = []
    for name, (Xtr, ytr, Xte, yte) in datasets(options.quick).items():
        if options.only and name not in options.only:
            continue
        train_vw, test_vw = work / f"{name}.vw", work / f"{name}.test.vw"
        cache = work / f"{name}.cache"
        if not options.ours_only:
            vw_text(Xtr, ytr, train_vw)
            vw_text(Xte, yte, test_vw)
            make_cache = ["-d", str(train_vw), "--cache_file", str(cache), "--noop", "-b", "18"]
            run_vw([*make_cache, "--quiet"])
        train = pl.DataFrame({"features": pp.from_scipy(Xtr), "label": ytr})
        test = pl.DataFrame({"features": pp.from_scipy(Xte)})
        for expansion, q in (("linear", []), ("quadratic", ["-q", "ff"])):
            ours_time = float("inf")
            for _ in range(REPEATS):
                # VW's fixed table (-b 18), for a like-for-like comparison.
                # ... and its order: the rows as the file has them (the default shuffles).
                model = pp.SGDClassifier(
                    expansion=expansion,
                    bits=18,
                    progress=False,
                    batch_size=len(train),
                    shuffle=False,
                )
                began = time.perf_counter()
                model.fit(train, "label")
                ours_time = min(ours_time, time.perf_counter() - began)
            ours_error = float(np.mean(model.predict(test) != yte))
            n = len(train)
            if options.ours_only:
                rows.append(
                    {
                        "data": name,
                        "expansion": expansion,
                        "rows": n,
                        "ours ex/s": n / ours_time,
                        "ours loss": model.progressive_loss_,
                        "ours test err": ours_error,
                    }
                )
                print(rows[-1], file=sys.stderr)
                continue
            model_file = work / f"{name}.{expansion}.model"
            args = ["-d", str(train_vw), "--cache_file", str(cache), "-f", str(model_file)]
            runs = [run_vw([*args, *VW_ARGS, *q]) for _ in range(REPEATS)]
            wall, log = min(runs)
            vw_time = max(wall - startup, 1e-9)
            preds = work / "preds.txt"
            run_vw(["-t", "-i", str(model_file), "-d", str(test_vw), "-p", str(preds), "--quiet"])
            vw_scores = np.loadtxt(preds, usecols=0)
            vw_error = float(np.mean(np.where(vw_scores > 0, 1.0, -1.0) != yte))
            rows.append(
                {
                    "data": name,
                    "expansion": expansion,
                    "rows": n,
                    "ours ex/s": n / ours_time,
                    "VW ex/s": n / vw_time,
                    "speed-up": vw_time / ours_time,
                    "ours feat/s": model.n_feature_updates_ / ours_time,
                    "VW feat/s": number("total feature number", log) / vw_time,
                    "ours loss": model.progressive_loss_,
                    "VW loss": number("average loss", log),
                    "ours test err": ours_error,
                    "VW test err": vw_error,
                }
            )
            print(rows[-1], file=sys.stderr)
    print(markdown(rows))


def markdown(rows: list[dict[str, object]]) -> str:
    def cell(value: object) -> str:
        if isinstance(value, float):
            if value >= 1e4:
                return f"{value / 1e6:.2f}M"
            return f"{value:.4f}" if value < 1 else f"{value:.2f}"
        return str(value)

    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(r[k]) for k in head) + " |" for r in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
