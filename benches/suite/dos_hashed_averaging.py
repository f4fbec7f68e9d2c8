"""What aligned averaging costs on hashed, text-sized inputs: a binary ``DoSClassifier`` (rank 4)
on 100,000 synthetic rows of 20 tokens hashed into ``2**18`` columns, trained without averaging
and with a snapshot every 2,000 (the default) and every 20,000 examples (best of 3 fits each).
A snapshot touches all ``2·d·(n+1)`` parameters, a step only ``2·d·(nnz+1)``.

    .venv/bin/python -m benches.suite.dos_hashed_averaging [--rows 100000] [--rounds 3]
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import polars_poly as pp
import scipy.sparse as sp

from benches.common import load, seconds

TOKENS, WIDTH, RANK = 20, 2**18, 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3, help="fits of each, the best kept")
    args = parser.parse_args()
    rows = args.rows
    rng = np.random.default_rng(0)
    row_of = np.repeat(np.arange(rows), TOKENS)
    columns = rng.integers(0, WIDTH, rows * TOKENS)
    X = sp.csr_array((np.ones(rows * TOKENS), (row_of, columns)), shape=(rows, WIDTH))
    X.sum_duplicates()
    y = (X @ rng.normal(size=WIDTH) > 0).astype(int)
    print(f"binary DoS, rank {RANK}, {rows:,} rows of {TOKENS} tokens in {WIDTH:,} columns")
    for averaging in (None, 2000, 20000):
        taken = []
        for _ in range(args.rounds):
            model = pp.DoSClassifier(RANK, n_features=WIDTH, averaging=averaging, progress=False)
            taken.append(seconds(partial(model.fit, X, y)))
        best = min(taken)
        print(f"  averaging={averaging}: {best:.3f} s, {rows / best:,.0f} examples/s ({load()})")


if __name__ == "__main__":
    main()
