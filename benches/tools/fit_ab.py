"""The 10M eat-rate fit of two builds, alternating on one machine (issue 21's A/B runs).

Each build is a directory holding a ``polars_poly`` package with its compiled extension (a
worktree's ``python/`` after ``maturin develop``, or an unpacked wheel); it is put first on
``PYTHONPATH`` of a fresh process, which reads the parquet files ``benches/large_hashed.py
--work DIR`` wrote and fits ``--fits`` times: from memory (hashed columns in a frame) or end to
end (a lazy query reading, hashing and fitting). Rounds alternate the builds' order; the median
of every fit and each round's median are printed, with the load before each process.
``--counts K`` adds K count columns (Poisson, mean 2, seeded) beside the hashed fields in memory:
the model reads them as one more namespace, and the examples are no longer one-hot.

    git worktree add /tmp/base 8a40cc1 && (cd /tmp/base && maturin develop --release)
    .venv/bin/python -m benches.tools.fit_ab /tmp/base/python python --work /tmp/lhwork --rounds 4
    .venv/bin/python -m benches.tools.fit_ab /tmp/base/python python --mode end-to-end
    .venv/bin/python -m benches.tools.fit_ab /tmp/base/python python --counts 13
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

# One process: the model of large_hashed.py (Vowpal Wabbit's: no field scales), fitted `fits`
# times; prints one "fit <seconds>" line a fit.
CHILD = """
import sys, time, numpy as np, polars as pl, polars_poly as pp
parts, mode, fits, counts = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fields = [c for c in pl.scan_parquet(parts).collect_schema().names() if c != "label"]
def query():
    hashed = (pp.hash_features(f, bits=24).alias(f) for f in fields)
    return pl.scan_parquet(parts).select("label", *hashed)
data = query().collect() if mode == "memory" else None
if data is not None and counts:
    rng = np.random.default_rng(0)
    data = data.with_columns(
        pl.Series(f"n{i}", rng.poisson(2.0, len(data)).astype(np.float64)) for i in range(counts)
    )
for _ in range(fits):
    model = pp.SGDClassifier(
        loss="logistic", bits=24, interactions=[("A", "B")], field_scales=False, progress=False
    )
    began = time.perf_counter()
    model.fit(data if data is not None else query(), "label")
    print(f"fit {time.perf_counter() - began:.3f}", flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base", type=Path, help="directory holding the base build's package")
    parser.add_argument("new", type=Path, help="directory holding the new build's package")
    parser.add_argument("--work", type=Path, default=Path("/tmp/lhwork"))
    parser.add_argument("--mode", choices=["memory", "end-to-end"], default="memory")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--fits", type=int, default=3, help="fits per process")
    parser.add_argument("--counts", type=int, default=0, help="count columns (memory mode)")
    args = parser.parse_args()
    if args.counts and args.mode != "memory":
        sys.exit("--counts is for --mode memory")
    parts = args.work / "train" / "*.parquet"
    if not list((args.work / "train").glob("*.parquet")):
        sys.exit(f"no parquet files in {args.work / 'train'}: run benches/large_hashed.py first")
    builds = {"base": args.base.resolve(), "new": args.new.resolve()}
    times: dict[str, list[float]] = {name: [] for name in builds}
    rounds: dict[str, list[float]] = {name: [] for name in builds}
    for round_ in range(args.rounds):
        order = list(builds) if round_ % 2 == 0 else list(builds)[::-1]
        for name in order:
            load = os.getloadavg()[0]
            env = {**os.environ, "PYTHONPATH": str(builds[name])}
            command = [sys.executable, "-c", CHILD, str(parts), args.mode, str(args.fits)]
            command.append(str(args.counts))
            out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            fits = [float(t) for t in re.findall(r"^fit ([\d.]+)$", out.stdout, re.MULTILINE)]
            times[name] += fits
            rounds[name].append(statistics.median(fits))
            shown = " ".join(f"{t:.3f}" for t in fits)
            print(f"round {round_ + 1} {name}: {shown} s  (load {load:.2f})", flush=True)
    for name in builds:
        per_round = " ".join(f"{t:.2f}" for t in rounds[name])
        print(f"{name}: median {statistics.median(times[name]):.3f} s, round medians {per_round}")
    ratio = statistics.median(times["new"]) / statistics.median(times["base"])
    counts = f", {args.counts} counts" if args.counts else ""
    print(f"new/base {ratio:.3f} ({args.mode}{counts}, {args.fits} fits a process)")


if __name__ == "__main__":
    main()
