"""The same eat-rate fit repeated in one process: how much its time varies, and whether each fit's
weight table was backed by huge pages (Linux ``AnonHugePages``), issue 21.

eat-rate rows (12 fields hashed with ``hash_features`` into ``bits=24``), logistic loss,
``interactions=[("A", "B")]``, one pass, one thread; each fit from the same in-memory frame.

Run: ``.venv/bin/python -m benches.tools.fit_repeat [--rows 2000000] [--fits 4]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import polars_poly as pp
from polars_poly import synthetic


def huge_pages_mib() -> float:
    lines = Path("/proc/self/smaps").read_text().splitlines()
    return sum(int(line.split()[1]) for line in lines if line.startswith("AnonHugePages:")) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--fits", type=int, default=4)
    args = parser.parse_args()
    frame = synthetic.eat_rate(args.rows, 0)
    fields = [c for c in frame.columns if c != "label"]
    train = frame.select("label", *(pp.hash_features(f, bits=24).alias(f) for f in fields))
    for _ in range(args.fits):
        model = pp.SGDClassifier(
            loss="logistic", bits=24, interactions=[("A", "B")], field_scales=False, progress=False
        )
        began = time.perf_counter()
        model.fit(train, "label")
        took = time.perf_counter() - began
        print(f"fit {took:.2f} s, AnonHugePages {huge_pages_mib():.0f} MiB", flush=True)
        del model


if __name__ == "__main__":
    main()
