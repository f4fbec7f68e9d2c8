"""What aligned averaging costs on hashed, text-sized inputs: a binary ``DoSClassifier`` (rank 4)
on 100,000 synthetic rows of 20 tokens hashed into ``2**18`` columns, trained without averaging
and with a snapshot every 2,000 and every 20,000 examples (best of 3 fits each). A snapshot
touches all ``2·d·(n+1)`` parameters, a step only ``2·d·(nnz+1)``.

Run: ``.venv/bin/python -m benches.experiments.dos_hashed_averaging``
"""

from __future__ import annotations

import time

import numpy as np
import polars_poly as pp
import scipy.sparse as sp

ROWS, TOKENS, WIDTH, RANK = 100_000, 20, 2**18, 4


def main() -> None:
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(ROWS), TOKENS)
    columns = rng.integers(0, WIDTH, ROWS * TOKENS)
    X = sp.csr_array((np.ones(ROWS * TOKENS), (rows, columns)), shape=(ROWS, WIDTH))
    X.sum_duplicates()
    y = (X @ rng.normal(size=WIDTH) > 0).astype(int)
    print(f"binary DoS, rank {RANK}, {ROWS:,} rows of {TOKENS} tokens in {WIDTH:,} columns")
    for averaging in (None, 2000, 20000):
        seconds = []
        for _ in range(3):
            model = pp.DoSClassifier(RANK, n_features=WIDTH, averaging=averaging, progress=False)
            began = time.perf_counter()
            model.fit(X, y)
            seconds.append(time.perf_counter() - began)
        best = min(seconds)
        print(f"  averaging={averaging}: {best:.3f} s, {ROWS / best:,.0f} examples/s")


if __name__ == "__main__":
    main()
