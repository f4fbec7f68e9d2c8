"""Polynomial expansion of CSR matrices: polars-poly vs scikit-learn, side by side.

For each grid point (degree 2 and 3; nnz per row 10, 30, 100; D = 1000) it times, on the same
input, scikit-learn's ``PolynomialFeatures(degree).fit_transform`` on CSR, our ``expand_csr`` on
one thread and on all cores, our Polars expression (eager ``select`` and the streaming engine),
and a memory-write floor: filling freshly allocated numpy buffers of the output's size (int32
indices + float64 values). Throughput is output nonzeros per second; ratios are against
scikit-learn and against the floor (time / floor time: 1.0 means "as fast as writing the output").

Peak memory of each method is measured in a fresh subprocess: the kernel's peak-RSS counter is
reset after the input is built (``/proc/self/clear_refs``), and the peak growth while the method
runs is reported relative to the output's own size (int32 indices + float64 values: 12 bytes per
nonzero). Core scaling of the Polars expression is measured in subprocesses with
``POLARS_MAX_THREADS`` / ``RAYON_NUM_THREADS`` set to 1 and to all cores.

Run: ``.venv/bin/python -m benches.suite.expand_vs_sklearn`` (``--quick`` for smaller inputs).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from functools import partial

import numpy as np
import polars as pl
import scipy.sparse as sp

from benches.common import REPO, best_of, peak_above_kib

METHODS = ["sklearn", "ours_1thread", "ours_all_cores", "polars_expr", "polars_streaming"]


def make_input(n_rows: int, nnz: int, n_features: int, seed: int = 0) -> sp.csr_array:
    """Rows of `nnz` distinct sorted random columns, built a block at a time (small peak)."""
    rng = np.random.default_rng(seed)
    indices = np.empty((n_rows, nnz), dtype=np.int32)
    block = max(1, 2_000_000 // n_features)
    for start in range(0, n_rows, block):
        stop = min(n_rows, start + block)
        keys = rng.random((stop - start, n_features))
        indices[start:stop] = np.sort(np.argpartition(keys, nnz - 1, axis=1)[:, :nnz], axis=1)
    indptr = np.arange(0, n_rows * nnz + 1, nnz, dtype=np.int64)
    data = rng.random(n_rows * nnz) + 0.01
    return sp.csr_array((data, indices.ravel(), indptr), shape=(n_rows, n_features))


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
    expr = pp.expand("x", n_features=X.shape[1], degree=degree, include_bias=False)
    X_matrix = sp.csr_matrix(X)
    return {
        "sklearn": lambda: PolynomialFeatures(degree, include_bias=False).fit_transform(X_matrix),
        "ours_1thread": lambda: pp.expand_csr(X, degree, include_bias=False, parallel=False),
        "ours_all_cores": lambda: pp.expand_csr(X, degree, include_bias=False),
        "polars_expr": lambda: frame.select(expr),
        "polars_streaming": lambda: frame.lazy().select(expr).collect(engine="streaming"),
    }


def write_floor(n_out: int) -> None:
    indices = np.empty(n_out, dtype=np.int32)
    values = np.empty(n_out, dtype=np.float64)
    indices.fill(1)
    values.fill(1.0)


def in_child(job: Mapping[str, object], env: dict[str, str] | None = None) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "benches.suite.expand_vs_sklearn", "--child", json.dumps(job)],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def child(job: dict[str, int | str]) -> None:
    """In a fresh process: peak memory growth of one call, then (if asked) best-of timing."""
    n_rows, nnz, n_features = int(job["n_rows"]), int(job["nnz"]), int(job["n_features"])
    degree, n_out, repeats = int(job["degree"]), int(job["n_out"]), int(job["repeats"])
    X = make_input(n_rows, nnz, n_features)
    methods(make_input(4, nnz, n_features), degree)["ours_1thread"]()  # import and warm up
    run = (
        (lambda: write_floor(n_out))
        if job["method"] == "floor"
        else methods(X, degree)[str(job["method"])]
    )
    peak_kib, first = peak_above_kib(run)
    seconds = best_of(run, repeats) if repeats else first
    print(json.dumps({"peak_kib": peak_kib, "first_seconds": first, "seconds": seconds}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="4M output nonzeros per point")
    parser.add_argument(
        "--output-nonzeros", type=int, default=None, help="per grid point (default 20M)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--points",
        help="only these grid points, as degree:nnz pairs (e.g. 3:10,2:30); default: all",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    grid = [(degree, nnz) for degree in (2, 3) for nnz in (10, 30, 100)]
    if args.points:
        grid = [
            (int(degree), int(nnz))
            for degree, nnz in (point.split(":") for point in args.points.split(","))
        ]
    if args.child:
        child(json.loads(args.child))
        return
    n_features = 1000
    target = args.output_nonzeros or (4_000_000 if args.quick else 20_000_000)
    header = f"{'deg':>3} {'nnz':>4} {'out nnz':>10} | "
    print(header + " | ".join(f"{m:>24}" for m in METHODS))
    scaling_point = None
    for degree, nnz in grid:
        n_rows = rows_for(nnz, degree, target)
        X = make_input(n_rows, nnz, n_features)
        runs = methods(X, degree)
        n_out = runs["ours_1thread"]().nnz  # type: ignore[attr-defined]
        floor = best_of(partial(write_floor, n_out), args.repeats)
        timings = {name: best_of(run, args.repeats) for name, run in runs.items()}
        job = {"n_rows": n_rows, "nnz": nnz, "n_features": n_features, "degree": degree}
        job.update(n_out=n_out, repeats=0)
        cold = {name: in_child({**job, "method": name}) for name in METHODS}
        cells = []
        for name, seconds in timings.items():
            # Peak growth relative to the method's own output: CSR int32 indices + float64
            # values (12 bytes per nonzero); the Polars column has UInt64 indices (16 bytes).
            own_bytes = 16 if name.startswith("polars") else 12
            growth = cold[name]["peak_kib"] * 1024 / (n_out * own_bytes)
            speed = f"{n_out / seconds / 1e6:5.0f}M {timings['sklearn'] / seconds:4.1f}x"
            cells.append(f"{speed} {seconds / floor:4.1f}f {growth:4.2f}m")
        print(f"{degree:3d} {nnz:4d} {n_out:10d} | " + " | ".join(cells), flush=True)
        if degree == 2 and nnz == 30:
            scaling_point = (n_rows, nnz, degree, n_out)
    print("cells: output nonzeros/s (best of repeats), speed-up vs sklearn (x), time / floor (f),")
    print("       peak memory growth / the method's own output size (m)")
    print("(best-of timings let every allocator reuse pages of the previous call; numpy returns")
    print(" big blocks to the OS, so the floor pays its page faults on every call)")
    if scaling_point is None:
        return
    n_rows, nnz, degree, n_out = scaling_point
    cores = os.cpu_count() or 1
    print(f"\ncore scaling, degree {degree}, nnz {nnz} ({n_out} output nonzeros), output nnz/s:")
    for name in ("ours_1thread", "ours_all_cores", "polars_expr", "polars_streaming"):
        speeds = []
        for threads in sorted({1, cores}):
            env = {"POLARS_MAX_THREADS": str(threads), "RAYON_NUM_THREADS": str(threads)}
            point = {"n_rows": n_rows, "nnz": nnz, "n_features": n_features, "degree": degree}
            point |= {"n_out": n_out, "repeats": args.repeats}
            seconds = in_child({**point, "method": name}, env)["seconds"]
            speeds.append(f"{threads} thread(s) {n_out / seconds / 1e6:6.0f}M")
        print(f"  {name:>18}: " + ", ".join(speeds))


if __name__ == "__main__":
    main()
