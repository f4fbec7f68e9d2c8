"""What field-level apple's screening sees on the click-like set: after each 250k-row step of
``partial_fit``, the crosses that joined, the four most promising candidates and the planted
crosses' z-scores (``SGDClassifier.screening()``), with the samples each z-score is over.
``--expansion apple`` screens as the default apple does.

    .venv/bin/python -m benches.experiments.click_screening [--rows 1000000]
    python -m benches.experiments.click_screening --rows 60000 --step 5000 --expansion apple
"""

from __future__ import annotations

import argparse

import polars as pl
import polars_poly as pp
from polars_poly import synthetic


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--step", type=int, default=250_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--expansion", choices=["field", "apple"], default="field")
    args = parser.parse_args()
    data = synthetic.click(args.rows, args.seed)
    fields = [c for c in data.columns if c != "label"]
    features = data.select("label", *(pp.hash_features(f, bits=24).alias(f) for f in fields))
    planted = [
        "*".join(sorted((c.a, c.b))) for c in synthetic.click_planted(args.seed).field_crosses
    ]
    expansion = pp.FieldApple() if args.expansion == "field" else "apple"
    model = pp.SGDClassifier(loss="logistic", bits=24, expansion=expansion, progress=False)
    for start in range(0, args.rows, args.step):
        batch = features.slice(start, args.step)
        if start == 0:
            model.fit(batch, "label")
        else:
            model.partial_fit(batch, "label", classes=[-1, 1])
        screening = model.screening()
        best = screening.head(4).select("cross", pl.col("z").round(2), "samples").rows()
        ours = screening.filter(pl.col("cross").is_in(planted)).select(
            "cross", pl.col("z").round(2)
        )
        print(
            f"{start + batch.height:>9,} rows  joined {model.crosses()['cross'].to_list()}  "
            f"best {best}  planted {ours.rows()}",
            flush=True,
        )


if __name__ == "__main__":
    main()
