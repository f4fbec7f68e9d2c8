"""What it costs a scoring expression to carry its model: a streaming ``predict_proba_expr``
query with the model's file bytes as a literal input (what a never-saved model up to
``EMBED_LIMIT`` carries) against the same query carrying only the model's handle, alternating:
the expression's build (which writes the model's bytes once per model state) and the query apart.

eat-rate rows (12 hashed fields, ``polars_poly.synthetic.eat_rate``), logistic models trained on
``--train`` of them: linear, and with the A x B cross (``--cross``, a model file some 10x
larger); the query scores ``--rows`` rows in a streaming engine run. Polars materializes the
literal for every batch (copying the bytes), so the cost grows with the model file. Each
expression is built afresh per round (building one serializes the model once). Prints each
side's median seconds, the ratio and the load averages.

    .venv/bin/python -m benches.suite.carried_model      # 2M rows, bits 18 and 22, linear
    .venv/bin/python -m benches.suite.carried_model --bits 24 --cross --train 2000000
"""

from __future__ import annotations

import argparse
import statistics
import time

import polars_poly as pp
from polars_poly import _persist
from polars_poly.synthetic import eat_rate

from benches.common import load

FIELDS = "ABCDEFGHIJKL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bits", default="18,22")
    parser.add_argument("--train", type=int, default=100_000)
    parser.add_argument("--cross", action="store_true", help="interactions=[('A', 'B')]")
    args = parser.parse_args()
    crosses = [("A", "B")] if args.cross else None
    raw = eat_rate(args.rows, seed=0)
    for bits in (int(b) for b in args.bits.split(",")):
        frame = raw.select("label", *(pp.hash_features(f, bits=bits).alias(f) for f in FIELDS))
        model = pp.SGDClassifier(bits=bits, interactions=crosses, progress=False)
        model.fit(frame.head(args.train), "label")
        size = model._learner.nbytes
        sides = {"handle only": 0, "bytes carried": 2**40}
        build: dict[str, list[float]] = {s: [] for s in sides}
        query: dict[str, list[float]] = {s: [] for s in sides}
        for _ in range(args.rounds):
            for side, limit in sides.items():
                _persist.EMBED_LIMIT = limit
                model._learned()  # a fresh expression: the bytes are written again
                began = time.perf_counter()
                expr = model.predict_proba_expr(*FIELDS)
                built = time.perf_counter()
                frame.lazy().select(expr).collect(engine="streaming")
                build[side].append(built - began)
                query[side].append(time.perf_counter() - built)
        b0, b1 = (statistics.median(build[s]) for s in sides)
        q0, q1 = (statistics.median(query[s]) for s in sides)
        print(
            f"bits {bits}{' A x B' if crosses else ''} (model file {size / 2**20:.1f} MiB), "
            f"{args.rows:,} rows: "
            f"build {1e3 * b0:.1f} ms / {1e3 * b1:.1f} ms, query {q0:.3f} s / {q1:.3f} s "
            f"(handle only / bytes carried), query ratio {q1 / q0:.3f} "
            f"({load()})"
        )


if __name__ == "__main__":
    main()
