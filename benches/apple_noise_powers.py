"""apple on mixed data: hashed categorical fields beside two Gaussian noise columns.

eat-rate in small (100 animals and foods, 4 noise fields, each field hashed into its own
column) with two numeric columns of standard normal noise in one sparse column ``N``. Apple's
parents come from ``N`` alone (categorical fields are left to field crosses), so every parent
is a power or product of noise, and its children multiply every feature. Prints each variant's
progressive loss, parents, crosses and the loss since the row before in ``history_``'s last
rows (a loss that rises late is the expansions doing harm).

    .venv/bin/python benches/apple_noise_powers.py --rows 60000
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly.synthetic import eat_rate

VARIANTS: dict[str, dict[str, Any]] = {
    "default (race + linear guard)": {},
    "typical": {"ranking": "typical"},
    "typical, catch_up=0": {"ranking": "typical", "catch_up": 0},
    "typical, max_degree=2": {"ranking": "typical", "max_degree": 2},
    "typical, max_degree=3": {"ranking": "typical", "max_degree": 3},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=60_000)
    args = parser.parse_args()
    frame = eat_rate(args.rows, seed=1, varieties=100, noise_fields=4)
    rng = np.random.default_rng(0)
    frame = frame.with_columns(u=rng.normal(size=frame.height), v=rng.normal(size=frame.height))
    fields = [c for c in frame.columns if c not in ("label", "u", "v")]
    data = frame.select(
        "label", *(pp.hash_features(f, bits=20).alias(f) for f in fields), N=pp.to_sparse("u", "v")
    )
    rows = []
    for scales in (True, False):
        for name, options in VARIANTS.items():
            model = pp.SGDClassifier(
                loss="logistic", bits=20, field_scales=scales, expansion=pp.Apple(**options)
            ).fit(data, "label")
            late = model.history_["loss_since_last"].to_list()[-3:]
            rows.append(
                {
                    "field scales": scales,
                    "variant": name,
                    "kept": model.apple_ranking_,
                    "progressive loss": round(model.progressive_loss_, 4),
                    "parents": model.n_parents_,
                    "crosses": ",".join(model.crosses()["cross"]),
                    "loss since, last 3 rows": ", ".join(f"{x:.3f}" for x in late),
                }
            )
    with pl.Config(tbl_rows=20, tbl_width_chars=200, fmt_str_lengths=40):
        print(pl.DataFrame(rows))


if __name__ == "__main__":
    main()
