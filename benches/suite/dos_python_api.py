"""Training speed of ``PassiveAggressiveClassifier`` / ``DoSClassifier`` through the Python API
on streamed digits, from a dense float32 array (read in place) and from a scipy CSR matrix of the
same digits, side by side in one run (one-vs-one, averaging every 2,000, default batch size):
the two inputs alternate, ``--rounds`` fits each, after one warm-up fit; medians are printed,
with the machine's load.

Run: ``.venv/bin/python -m benches.suite.dos_python_api [--examples N] [--rounds R]`` (needs
``../shared/data``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from functools import partial

import polars_poly as pp
import scipy.sparse as sp

from benches.common import DATA


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    images, labels = pp.datasets.read_mnist(
        DATA / "mnist_t10k" / "t10k-images-idx3-ubyte.gz",
        DATA / "mnist_t10k" / "t10k-labels-idx1-ubyte.gz",
    )
    stream = pp.datasets.DigitStream(images[:8000], labels[:8000], seed=1)
    X, y = stream.batch(0, args.examples)
    csr = sp.csr_array(X)
    # The stream's rows are in random order already: learned in it (shuffle=False), as the
    # examples/s target was measured.
    models: dict[str, Callable[[], pp.DoSClassifier | pp.PassiveAggressiveClassifier]] = {
        "linear PA": lambda: pp.PassiveAggressiveClassifier(
            averaging=2000, progress=False, shuffle=False
        )
    }
    for d in (1, 2, 4, 8, 16):
        models[f"DoS d={d}"] = partial(
            pp.DoSClassifier, d, averaging=2000, progress=False, shuffle=False
        )
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    models["linear PA"]().fit(X[:20_000], y[:20_000])  # warm-up: pages, thread pool
    for name, make in models.items():
        speeds: dict[str, list[float]] = {"dense": [], "CSR": []}
        for _ in range(args.rounds):
            for kind, inputs in (("dense", X), ("CSR", csr)):
                started = time.perf_counter()
                make().fit(inputs, y)
                speeds[kind].append(len(y) / (time.perf_counter() - started))
        dense, sparse = (statistics.median(speeds[k]) for k in ("dense", "CSR"))
        print(
            f"{name:>10}: dense float32 {dense:,.0f} ex/s, CSR {sparse:,.0f} ex/s "
            f"(dense / CSR {dense / sparse:.2f}; medians of {args.rounds})"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
