"""Our ``apple_vw`` (Vowpal Wabbit's parent ranking and path identity) and Vowpal Wabbit's own
``--stage_poly`` trained side by side at one fixed learning rate, per split: test error,
progressive (training) loss and features generated, plus our ``apple_max`` and default
``apple``. Shows how far two implementations of the same algorithm that train alike (same
progressive loss, same feature count) still differ in a single run's test error.

Same protocol as ``python -m polars_poly compare`` (80/20 split by seed, squared loss, one pass,
b = 24, 6 epochs), without the rate grid. Needs ``vowpalwabbit`` and the shared data.

Run: ``.venv/bin/python -m benches.experiments.apple_twin_runs adult 0.5 [--seeds 0,1,2]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

from polars_poly import compare
from polars_poly.benchdata import load_dataset

from benches.common import REPO

OURS = ("apple_vw", "apple_max", "apple")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("rate", type=float)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args()
    X, y, task = load_dataset(args.dataset, args.data_dir)
    print(f"{args.dataset}, rate {args.rate}: test error, progressive loss, features generated")
    for seed in (int(s) for s in args.seeds.split(",")):
        data = compare.split(X, y, seed)
        X_train, y_train, X_test, y_test = data
        for algorithm in OURS:
            model, _ = compare._fit_ours(algorithm, args.rate, 1.0, X_train, y_train)
            error = compare.test_error(model.predict(X_test), y_test, task)
            print(
                f"  split {seed}  ours {algorithm:<9} {error:8.4f}  "
                f"{model.progressive_loss_:8.4f}  {model.n_feature_updates_:>10,}"
            )
        vw = compare.VowpalWabbit(data)
        try:
            outcome = vw.run("apple", task, y_test, [args.rate], [1.0])
        finally:
            vw.close()
        print(
            f"  split {seed}  VW   {'apple':<9} {outcome.error:8.4f}  "
            f"{outcome.progressive:8.4f}  {int(outcome.features):>10,}"
        )


if __name__ == "__main__":
    main()
