"""What apple's ranking race (``ranking="auto"``, the default) costs against one ranking
(``typical``): wall and CPU seconds of ``fit``, alternating the two, medians over rounds.

The race trains one model up to the first expansion that may add parents, then two (in
parallel threads); on hashed categorical fields it never forks. Data: shared sets (skipped
visibly when ``../shared/data``, or ``$POLARS_POLY_DATA``, is absent), the text generator's
default set, and eat-rate with each field hashed into its own column.

    .venv/bin/python -m benches.suite.ranking_race_cost --rounds 5 [--bits 18]

textNk: N thousand documents of the text generator's default set; eat_rate_Nm: N million rows.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import polars as pl
import polars_poly as pp
from polars_poly.benchdata import load_dataset
from polars_poly.synthetic import eat_rate

from benches.common import DATA, load
from benches.suite.apple_sparse import text_csr


def text_frame(rows: int) -> tuple[Any, Any, str]:
    X, y = text_csr(rows, 0, 8000, 0.5, 10, 300)
    return X, y, "classification"


def eat_rate_frame(rows: int) -> tuple[Any, Any, str]:
    frame = eat_rate(rows, seed=1)
    fields = [c for c in frame.columns if c != "label"]
    hashed = frame.select(*(pp.hash_features(f, bits=24).alias(f) for f in fields), "label")
    return hashed, "label", "classification"


def timed_fit(X: Any, y: Any, task: str, ranking: str, bits: int) -> tuple[float, float, str]:
    estimator = pp.SGDClassifier if task == "classification" else pp.SGDRegressor
    loss = {"loss": "logistic"} if task == "classification" else {}
    model = estimator(expansion=pp.Apple(ranking=ranking), bits=bits, progress=False, **loss)
    wall, cpu = time.perf_counter(), time.process_time()
    model.fit(X, y)
    return time.perf_counter() - wall, time.process_time() - cpu, model.apple_ranking_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sets", default="a9a,covtype_subset10k,w8a,text12k,text200k,eat_rate_1m")
    parser.add_argument("--bits", type=int, default=24)
    args = parser.parse_args()
    print(load())
    print(f"{'set':<20}{'rows':>9}{'kept':>15}{'typical s':>11}{'wall auto/typ':>15}{'cpu':>7}")
    for name in args.sets.split(","):
        if name.startswith("text") and name.endswith("k"):
            X, y, task = text_frame(int(name.removeprefix("text").removesuffix("k")) * 1000)
        elif name.startswith("eat_rate_"):
            millions = float(name.removeprefix("eat_rate_").removesuffix("m"))
            X, y, task = eat_rate_frame(int(millions * 10**6))
        elif DATA.is_dir():
            X, y, task = load_dataset(name, DATA)
        else:
            print(f"{name:<20} skipped: needs the shared data sets in {DATA}")
            continue
        times: dict[str, list[tuple[float, float]]] = {"auto": [], "typical": []}
        kept = ""
        for _ in range(args.rounds):
            for ranking in ("typical", "auto"):
                wall, cpu, ranked = timed_fit(X, y, task, ranking, args.bits)
                times[ranking].append((wall, cpu))
                kept = ranked if ranking == "auto" else kept
        rows = X.height if isinstance(X, pl.DataFrame) else X.shape[0]
        ratio = [
            statistics.median(t[k] for t in times["auto"])
            / statistics.median(t[k] for t in times["typical"])
            for k in (0, 1)
        ]
        base = statistics.median(t[0] for t in times["typical"])
        print(
            f"{name:<20}{rows:>9}{kept:>15}{base:>11.2f}{ratio[0]:>15.2f}{ratio[1]:>7.2f}",
            flush=True,
        )
    print(load())


if __name__ == "__main__":
    main()
