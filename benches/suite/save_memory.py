"""Memory and time of saving a large model (issue 22: saves are streamed, not built in memory).

A ``DoSClassifier`` of rank 16 over 1M features (a 488 MiB file) is fitted, the process's peak
resident memory is reset (Linux: ``/proc/self/clear_refs``), the model is saved, and the peak
above the fitted model is read back (``VmHWM``). The same for pickling (``to_bytes``), which
builds the one copy a ``bytes`` object is.

Run: ``python -m benches.suite.save_memory [--rank 16] [--features 1000000]`` (Linux only).
"""

from __future__ import annotations

import argparse
import pickle
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars_poly as pp
import scipy.sparse as sp

from benches.common import peak_above_kib


def peak_above(run: Callable[[], object]) -> tuple[float, float]:
    """(MiB of peak resident memory above the memory before ``run``, seconds it took)."""
    kib, took = peak_above_kib(run)
    return max(0.0, kib / 1024), took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--features", type=int, default=1_000_000)
    args = parser.parse_args()
    X = sp.random(2000, args.features, density=1e-5, format="csr", random_state=0)
    y = np.arange(2000) % 2
    model = pp.DoSClassifier(rank=args.rank, n_features=args.features).fit(X, y)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.bin"
        save_peak, save_time = peak_above(lambda: model.save(path))
        size = path.stat().st_size / 2**20
    pickle_peak, pickle_time = peak_above(lambda: pickle.dumps(model))
    print(f"DoSClassifier rank {args.rank}, {args.features} features: file {size:.0f} MiB")
    print(f"save:   peak {save_peak:.0f} MiB above the fitted model, {save_time:.2f} s")
    print(f"pickle: peak {pickle_peak:.0f} MiB above the fitted model, {pickle_time:.2f} s")


if __name__ == "__main__":
    main()
