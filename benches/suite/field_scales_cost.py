"""What field scales cost and give (``field_scales``): eat-rate and click (2M training rows,
each field hashed into its own sparse column, ``bits=24``, logistic loss, one pass, default
rate), the same models with scales on and off, alternating within each round; fit time is the
median in-memory ``fit`` over the rounds, with the test logloss beside it.

    .venv/bin/python -m benches.suite.field_scales_cost [--sets eat_rate,click] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial

import polars as pl
import polars_poly as pp

from benches.common import load, seconds
from benches.suite.default_rate import frames, scores  # the same sets, hashed the same way


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="eat_rate,click")
    parser.add_argument("--train", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for kind in args.sets.split(","):
        train, test, _ = frames(kind, args.train, args.train // 10)
        given = [("A", "B")] if kind == "eat_rate" else [("f00", "f07"), ("f02", "f17")]
        models: dict[str, dict[str, object]] = {
            "linear": {},
            "given crosses": {"interactions": given},
            "apple": {"expansion": "apple"},
        }
        times: dict[tuple[str, bool], list[float]] = {}
        losses: dict[tuple[str, bool], float] = {}
        for _ in range(args.rounds):
            for name, options in models.items():
                for scales in (False, True):
                    model = pp.SGDClassifier(
                        loss="logistic", bits=24, field_scales=scales, **options
                    )
                    took = seconds(partial(model.fit, train, "label"))
                    times.setdefault((name, scales), []).append(took)
                    losses[(name, scales)] = scores(model, test)[0]
        print(f"{kind}: {args.train:,} training rows; {load()}")
        rows = []
        for name in models:
            off, on = (statistics.median(times[(name, s)]) for s in (False, True))
            rows.append(
                {
                    "model": name,
                    "logloss off": losses[(name, False)],
                    "logloss on": losses[(name, True)],
                    "fit s off": off,
                    "fit s on": on,
                    "time on/off": on / off,
                }
            )
        print(pl.DataFrame(rows), flush=True)


if __name__ == "__main__":
    main()
