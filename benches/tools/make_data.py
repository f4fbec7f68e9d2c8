"""Write a synthetic data set of polars_poly.synthetic to parquet, in bounded memory.

    .venv/bin/python -m benches.tools.make_data eat-rate            # 10M train + 1M test rows
    .venv/bin/python -m benches.tools.make_data text                # 1M rows
    .venv/bin/python -m benches.tools.make_data click               # 10M rows
    .venv/bin/python -m benches.tools.make_data click --rows 200000 --test-rows 50000 --seed 3

Files go to ``--out`` (a directory, default /tmp/polars_poly_data): ``<kind>-train.parquet`` and,
when ``--test-rows`` is above 0, ``<kind>-test.parquet``, the rows that follow the training rows
of the same seed (same distribution, disjoint rows). Each file is written a chunk at a time
(``--chunk-rows``), so memory stays that of one chunk whatever ``--rows`` is. Prints rows/s
and file sizes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from polars_poly.synthetic import write_parquet

# kind -> (training rows, test rows)
DEFAULTS = {
    "eat-rate": (10_000_000, 1_000_000),
    "text": (1_000_000, 0),
    "click": (10_000_000, 0),
}


def write(
    kind: str,
    path: Path,
    rows: int,
    seed: int,
    offset: int,
    chunk_rows: int | None,
    params: dict[str, Any],
) -> None:
    """Write one file and report its speed and size."""
    began = time.perf_counter()
    write_parquet(kind, path, rows, seed, chunk_rows, offset=offset, **params)
    seconds = time.perf_counter() - began
    size = path.stat().st_size
    print(
        f"{path}: {rows:,} rows in {seconds:.1f} s ({rows / max(seconds, 1e-9):,.0f} rows/s), "
        f"{size / 2**20:,.1f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=sorted(DEFAULTS))
    parser.add_argument("--rows", type=int, help="training rows (default: per kind, see above)")
    parser.add_argument("--test-rows", type=int, help="test rows after the training rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/polars_poly_data"))
    parser.add_argument("--chunk-rows", type=int, help="rows per chunk (default 1M, 100k for text)")
    parser.add_argument(
        "--sampling",
        choices=["types", "fwumious"],
        default="types",
        help="eat-rate only: the issue's data set or the original generate.py's sampling",
    )
    parser.add_argument("--vocabulary", type=int, default=50_000, help="text only")
    parser.add_argument("--fields", type=int, default=30, help="click only: number of fields")
    args = parser.parse_args()

    train_rows, test_rows = DEFAULTS[args.kind]
    train_rows = train_rows if args.rows is None else args.rows
    test_rows = test_rows if args.test_rows is None else args.test_rows
    params: dict[str, Any] = {
        "eat-rate": {"sampling": args.sampling},
        "text": {"vocabulary": args.vocabulary},
        "click": {"n_fields": args.fields},
    }[args.kind]
    args.out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    write(
        args.kind,
        args.out / f"{args.kind}-train.parquet",
        train_rows,
        args.seed,
        0,
        args.chunk_rows,
        params,
    )
    if test_rows > 0:
        write(
            args.kind,
            args.out / f"{args.kind}-test.parquet",
            test_rows,
            args.seed,
            train_rows,
            args.chunk_rows,
            params,
        )
    total = train_rows + test_rows
    seconds = time.perf_counter() - began
    print(f"total: {total:,} rows in {seconds:.1f} s ({total / max(seconds, 1e-9):,.0f} rows/s)")


if __name__ == "__main__":
    main()
