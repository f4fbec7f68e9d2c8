"""Is there anything for a degree-2 expansion to find on sector? Batch kernel machines as an
independent reference (issue 20's "better than linear" on sector).

sector (6,412 documents of 55,197 tf-idf words, the most frequent of 105 classes against the
rest, as ``polars_poly.benchdata`` loads it) on the 10 seeded 80/20 splits of the apple
comparison (``polars_poly.compare.split``). scikit-learn's SVC, trained to convergence on each
split (many passes, not apple's one): a linear kernel against polynomial kernels of degree 2
(``(gamma x.z + 1)^2``: every product of two words, weighted by ``gamma`` against the linear
terms) and 3, and an RBF kernel. If the degree-2 kernels are no better than the linear one,
no degree-2 monomials carry signal the linear model misses, and no expansion, apple's or Vowpal
Wabbit's, can be better than linear there except by chance.

Per model: the mean test error over the splits and, against the linear kernel on the same
split, the splits it is better / worse on and a two-sided paired t-test (``p``; ``-`` where the
errors are equal on every split). About 5-8 minutes on 2 cores.

    .venv/bin/python -m benches.experiments.sector_kernel_reference
    .venv/bin/python -m benches.experiments.sector_kernel_reference --seeds 0,1,2 --C 10,100
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from polars_poly.benchdata import load_dataset
from polars_poly.compare import split
from scipy import stats
from sklearn.svm import SVC

from benches.common import REPO


def kernels(C: float) -> dict[str, SVC]:
    return {
        f"linear C={C:g}": SVC(kernel="linear", C=C),
        **{
            f"poly2 gamma={g:g} C={C:g}": SVC(kernel="poly", degree=2, gamma=g, coef0=1.0, C=C)
            for g in (0.1, 0.3, 1.0, 3.0)
        },
        f"poly3 gamma=0.3 C={C:g}": SVC(kernel="poly", degree=3, gamma=0.3, coef0=1.0, C=C),
        f"rbf gamma=1 C={C:g}": SVC(kernel="rbf", gamma=1.0, C=C),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--seeds", default=",".join(str(s) for s in range(10)))
    parser.add_argument("--C", default="10", help="comma-separated SVC C values")
    args = parser.parse_args()
    if not (args.data_dir / "sector").is_dir():
        print(f"skipped: no sector data under {args.data_dir}")
        return
    X, y, _ = load_dataset("sector", args.data_dir)
    # libsvm takes 32-bit indices.
    X = sp.csr_matrix(X)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"sector: {X.shape[0]} rows, {X.shape[1]} features, positive rate {np.mean(y > 0):.4f}")
    for C in (float(c) for c in args.C.split(",")):
        errors: dict[str, list[float]] = {}
        began = time.perf_counter()
        for seed in seeds:
            X_train, y_train, X_test, y_test = split(X, y, seed)
            for name, model in kernels(C).items():
                predicted = model.fit(X_train, y_train).predict(X_test)
                errors.setdefault(name, []).append(float(np.mean(predicted != y_test)))
        print(f"\nC={C:g}, {len(seeds)} splits, {time.perf_counter() - began:.0f} s")
        linear = np.array(errors[f"linear C={C:g}"])
        print(f"{'model':28s} {'error':>7s} {'better/worse':>12s} {'p':>6s}")
        for name, values in errors.items():
            d = np.array(values) - linear
            p = "-" if not d.any() else f"{stats.ttest_rel(values, linear).pvalue:.3f}"
            counts = f"{int((d < 0).sum())}/{int((d > 0).sum())}"
            print(f"{name:28s} {100 * np.mean(values):6.3f}% {counts:>12s} {p:>6s}")


if __name__ == "__main__":
    main()
