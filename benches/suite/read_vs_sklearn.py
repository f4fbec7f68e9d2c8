"""Reading LIBSVM files: polars_poly.read_libsvm vs sklearn's load_svmlight_file, side by side.

Run: ``python -m benches.suite.read_vs_sklearn`` (needs ../shared/data). Each reader is timed
on the same file alternately, best of ``--repeats`` runs; the ratio is sklearn's time / ours.
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

import polars_poly as pp
from sklearn.datasets import load_svmlight_file

from benches.common import DATA, best_of

FILES = ["a9a/a9a.gz", "w8a/w8a.gz", "sector/sector.scale.gz", "sector/sector.t.scale.gz"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    print(f"{'file':28} {'rows':>8} {'ours ms':>9} {'sklearn ms':>11} {'ratio':>7}")
    for name in FILES:
        path = args.data / name
        if not path.exists():
            print(f"{name:28} missing")
            continue
        rows = pp.read_libsvm(path).height
        ours = best_of(partial(pp.read_libsvm, path), args.repeats)
        theirs = best_of(partial(load_svmlight_file, str(path)), args.repeats)
        print(f"{name:28} {rows:8d} {ours * 1e3:9.1f} {theirs * 1e3:11.1f} {theirs / ours:6.1f}x")


if __name__ == "__main__":
    main()
