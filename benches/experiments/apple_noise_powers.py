"""apple on mixed data: hashed categorical fields beside two numeric columns.

eat-rate in small (100 animals and foods, 4 noise fields, each field hashed into its own
column) with two standard normal columns u, v in one sparse column ``N``. Apple's parents come
from ``N`` alone (categorical fields are left to field crosses), so every parent is a power or
product of u and v. ``--signal noise`` (the default): u and v say nothing, eat-rate's label
stands. ``--signal slopes``: the label is drawn from a logistic model of ``s(animal)·u + u·v/2``,
``s`` = +-2 by animal: a slope per category (the cross of N and A) and a numeric product
(apple's). Prints each variant's progressive loss, test logloss on the last sixth of the rows,
parents, crosses and the loss since the row before in ``history_``'s last rows (a loss that
rises late is the expansions doing harm).

    .venv/bin/python -m benches.experiments.apple_noise_powers --rows 60000 [--signal slopes]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly.synthetic import eat_rate

from benches.suite.dask_field_crosses import logloss

VARIANTS: dict[str, dict[str, Any]] = {
    "default (race + linear guard)": {},
    "typical": {"ranking": "typical"},
    "typical, catch_up=0": {"ranking": "typical", "catch_up": 0},
    "typical, max_degree=2": {"ranking": "typical", "max_degree": 2},
    "typical, max_degree=3": {"ranking": "typical", "max_degree": 3},
    "linear + crosses (max_degree=1)": {"max_degree": 1},
}


def mixed_data(rows: int, signal: str) -> pl.DataFrame:
    frame = eat_rate(rows, seed=1, varieties=100, noise_fields=4)
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=frame.height), rng.normal(size=frame.height)
    if signal == "slopes":
        animals = frame["A"].unique().sort()
        slope = dict(zip(animals, rng.choice([-2.0, 2.0], size=animals.len()), strict=True))
        margin = np.array([slope[a] for a in frame["A"]]) * u + 0.5 * u * v
        label = (rng.uniform(size=frame.height) < 1 / (1 + np.exp(-margin))).astype(float)
        frame = frame.with_columns(label=label)
    frame = frame.with_columns(u=u, v=v)
    fields = [c for c in frame.columns if c not in ("label", "u", "v")]
    return frame.select(
        "label", *(pp.hash_features(f, bits=20).alias(f) for f in fields), N=pp.to_sparse("u", "v")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=60_000)
    parser.add_argument("--signal", choices=("noise", "slopes"), default="noise")
    args = parser.parse_args()
    data = mixed_data(args.rows, args.signal)
    test_rows = args.rows // 6
    train, test = data.head(args.rows - test_rows), data.tail(test_rows)
    rows = []
    for scales in (True, False):
        for name, options in VARIANTS.items():
            model = pp.SGDClassifier(
                loss="logistic", bits=20, field_scales=scales, expansion=pp.Apple(**options)
            ).fit(train, "label")
            late = model.history_["loss_since_last"].to_list()[-3:]
            rows.append(
                {
                    "field scales": scales,
                    "variant": name,
                    "kept": model.apple_ranking_,
                    "progressive loss": round(model.progressive_loss_, 4),
                    "test logloss": round(logloss(model, test), 4),
                    "parents": model.n_parents_,
                    "crosses": ",".join(model.crosses()["cross"]),
                    "loss since, last 3 rows": ", ".join(f"{x:.3f}" for x in late),
                }
            )
    with pl.Config(tbl_rows=20, tbl_width_chars=220, fmt_str_lengths=40):
        print(pl.DataFrame(rows))


if __name__ == "__main__":
    main()
