"""Polynomial expansion of CSR matrices: polars-poly vs scikit-learn, side by side.

For each grid point (degree 2 and 3; nnz per row 10, 30, 100; D = 1000) it times, on the same
input, scikit-learn's ``PolynomialFeatures(degree).fit_transform`` on CSR, our ``expand_csr``
on one thread and on all cores, and our Polars expression (all cores), and a memory-write floor:
filling output buffers of the same size (int32/int64 indices + float64 values) with numpy.
Throughput is output nonzeros per second; ratios are against scikit-learn and the floor.
Peak memory of each method is measured in a fresh subprocess (ru_maxrss minus the input's
baseline) and reported relative to the output's own size.

Run: ``.venv/bin/python benches/expand_vs_sklearn.py`` (add ``--quick`` for a smaller grid).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np
import polars as pl
import scipy.sparse as sp


def make_input(n_rows: int, nnz: int, n_features: int, seed: int = 0) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    indices = np.sort(rng.random((n_rows, n_features)).argsort(axis=1)[:, :nnz], axis=1)
    indptr = np.arange(0, n_rows * nnz + 1, nnz)
    data = rng.random(n_rows * nnz) + 0.01
    return sp.csr_array(
        (data, indices.ravel().astype(np.int32), indptr), shape=(n_rows, n_features)
    )


def rows_for(nnz: int, degree: int, target_output: int) -> int:
    per_row = sum(
        int(np.prod([nnz + j for j in range(k)]) // np.prod(range(1, k + 1)))
        for k in range(1, degree + 1)
    )
    return max(1, target_output // per_row)


def methods(X: sp.csr_array, degree: int) -> dict[str, Callable[[], object]]:
    import polars_poly as pp
    from sklearn.preprocessing import PolynomialFeatures

    frame = pl.DataFrame({"x": pp.from_scipy(X)})
    width = X.shape[1]
    expr = pp.expand("x", n_features=width, degree=degree, include_bias=False)
    return {
        "sklearn": lambda: PolynomialFeatures(degree, include_bias=False).fit_transform(
            sp.csr_matrix(X)
        ),
        "ours_1thread": lambda: pp.expand_csr(X, degree, include_bias=False, parallel=False),
        "ours_all_cores": lambda: pp.expand_csr(X, degree, include_bias=False),
        "polars_expr": lambda: frame.select(expr),
    }


def write_floor(n_out: int, index_dtype: type) -> None:
    indices = np.empty(n_out, dtype=index_dtype)
    values = np.empty(n_out, dtype=np.float64)
    indices.fill(1)
    values.fill(1.0)


def best(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def peak_child(args: list[str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def child(method: str, n_rows: int, nnz: int, n_features: int, degree: int) -> None:
    X = make_input(n_rows, nnz, n_features)
    methods(make_input(4, nnz, n_features), degree)["ours_1thread"]()  # import and warm up
    runs = methods(X, degree)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = runs[method]()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    del result
    print(json.dumps({"peak_kib": peak - base}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=5)
    args = parser.parse_args()
    if args.child:
        method, *numbers = args.child
        child(method, *map(int, numbers))
        return
    n_features = 1000
    target = 2_000_000 if args.quick else 20_000_000
    print(
        f"{'deg':>3} {'nnz':>4} {'out nnz':>10} | "
        + " | ".join(
            f"{m:>22}" for m in ["sklearn", "ours_1thread", "ours_all_cores", "polars_expr"]
        )
        + " | floor Mnz/s"
    )
    for degree in (2, 3):
        for nnz in (10, 30, 100):
            n_rows = rows_for(nnz, degree, target)
            X = make_input(n_rows, nnz, n_features)
            runs = methods(X, degree)
            n_out = runs["ours_1thread"]().nnz  # type: ignore[attr-defined]
            floor = best(lambda n=n_out: write_floor(n, np.int32), args.repeats)
            timings = {name: best(run, args.repeats) for name, run in runs.items()}
            output_kib = n_out * (4 + 8) / 1024
            cells = []
            for name, seconds in timings.items():
                peak = peak_child([name, str(n_rows), str(nnz), str(n_features), str(degree)])[
                    "peak_kib"
                ]
                speed = f"{n_out / seconds / 1e6:6.0f}M {timings['sklearn'] / seconds:4.1f}x"
                cells.append(f"{speed} {seconds / floor:4.1f}f {peak / output_kib:4.2f}m")
            print(
                f"{degree:3d} {nnz:4d} {n_out:10d} | "
                + " | ".join(cells)
                + f" | {n_out / floor / 1e6:8.0f}"
            )
    print("cells: output nonzeros/s, speed-up vs sklearn, time / memory-write floor,")
    print("       peak memory / output size (int32 indices + float64 values)")


if __name__ == "__main__":
    main()
