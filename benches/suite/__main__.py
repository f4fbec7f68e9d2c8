"""The maintained benchmark suite: the scripts behind docs/benchmarks.md, each with the arguments
that give the page's numbers.

    .venv/bin/python -m benches.suite                 # every script, full size (hours)
    .venv/bin/python -m benches.suite learner_vs_vw   # some of them
    .venv/bin/python -m benches.suite --smoke         # all at a tiny size: a check, no numbers

``make bench`` runs the criterion benches and then this. Scripts that need the shared data or a
checkout of Vowpal Wabbit say ``SKIPPED`` and exit 0 when it is absent. Exit status: the number
of scripts that failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass

from benches.common import REPO, load


@dataclass(frozen=True)
class Bench:
    module: str  # in benches/suite
    full: tuple[str, ...] = ()  # arguments for the benchmarks page's numbers
    smoke: tuple[str, ...] = ()  # arguments for a run of seconds that only checks it works

    @property
    def name(self) -> str:
        """The module, and its first argument when that is a data set's name."""
        first = self.full[0] if self.full and not self.full[0].startswith("-") else None
        return f"{self.module}:{first}" if first else self.module


SUITE = (
    Bench(
        "expand_vs_sklearn",
        smoke=("--repeats", "1", "--output-nonzeros", "200000", "--points", "2:30"),
    ),
    Bench("read_vs_sklearn", smoke=("--repeats", "1")),
    Bench("learner_vs_vw", smoke=("--quick", "--only", "synthetic")),
    Bench("multiclass_vs_vw", smoke=("--rounds", "1", "--datasets", "shuttle")),
    Bench("eat_rate_vw", smoke=("--train", "20000", "--test", "2000", "--bits", "18")),
    Bench("vw_text_speed", smoke=("--rows", "2000", "--rounds", "1")),
    Bench(
        "vw_reading",
        smoke=("--eat-rate", "20000", "--scan-rows", "5000", "--adult", "5000", "--rounds", "1"),
    ),
    Bench("cli_startup", smoke=("--rounds", "1", "--rows", "100")),
    Bench("score_streaming", smoke=("--rows", "20000", "--rounds", "1", "--bits", "18")),
    *(
        Bench(
            "field_crosses",
            full=(kind, "--train", "2000000", "--test", "200000"),
            smoke=(kind, "--train", "20000", "--test", "2000", "--bits", "18"),
        )
        for kind in ("eat_rate", "eat_rate_unseen", "click", "click3", "click3_pairs")
    ),
    Bench("numeric_columns", smoke=("--rows", "20000", "--rounds", "1")),
    Bench("string_columns", smoke=("--rows", "20000", "--rounds", "1")),
    Bench(
        "field_cross_reliability",
        full=("--rows", "1000000", "--seeds", "6"),
        smoke=("--rows", "10000", "--seeds", "1"),
    ),
    Bench("vw_click3", smoke=("--train", "2000", "--test", "500")),
    Bench("default_rate", smoke=("--train", "10000", "--test", "2000", "--text", "2000")),
    Bench("field_scales_cost", smoke=("--train", "10000", "--rounds", "1")),
    Bench("large_hashed", smoke=("--train", "20000", "--test", "2000", "--rounds", "1")),
    Bench("dos_python_api", smoke=("--examples", "4000", "--rounds", "1")),
    Bench("dos_hashed_averaging", smoke=("--rows", "5000", "--rounds", "1")),
    Bench(
        "dos_digits",
        smoke=("--examples", "8000", "--sklearn-examples", "2000", "--out", "/tmp/pp-bench-smoke"),
    ),
    Bench("save_memory", smoke=("--rank", "2", "--features", "10000")),
    Bench("averaging_cost", smoke=("--rounds", "1")),
    Bench("carried_model", smoke=("--rows", "20000", "--train", "2000", "--rounds", "1")),
    Bench("pa_batch_check", smoke=("--rows", "20000", "--rounds", "1")),
    Bench(
        "dask_training",
        smoke=(
            *("--eat-rate-rows", "20000", "--dense-rows", "4000", "--apple-rows", "4000"),
            *("--shards", "2", "--passes", "1", "--repeats", "1", "--ffm-rows", "20000"),
        ),
    ),
    Bench(
        "dask_field_crosses",
        full=(
            *("--field-scales", "--varieties", "1000", "--noise-fields", "10"),
            *("--rows", "500000", "--bits", "24"),
        ),
        smoke=("--field-scales", "--shards", "2", "--rows", "5000", "--passes", "1"),
    ),
    Bench("table_saturation", smoke=("--train", "30000", "--test", "3000")),
    *(
        Bench(
            "categorical_peers",
            full=(kind,),
            smoke=(kind, "--train", "20000", "--test", "2000", "--bits", "18"),
        )
        for kind in ("eat_rate_unseen", "click3_pairs")
    ),
    Bench("apple_summary"),
    Bench(
        "apple_variant_race",
        full=("--variants", "apple_typical,apple_max", "--linear-guard", "0.1"),
        smoke=(
            *("--variants", "apple_typical,apple_max", "--linear-guard", "0.1"),
            *("--datasets", "australian", "--seeds", "1"),
        ),
    ),
    Bench(
        "apple_catch_up",
        full=("--rounds", "5"),
        smoke=("--datasets", "australian", "--rounds", "1"),
    ),
    Bench(
        "ranking_race_cost",
        full=("--rounds", "5"),
        smoke=("--sets", "australian,text1k,eat_rate_0.01m", "--rounds", "1", "--bits", "18"),
    ),
    Bench(
        "apple_sparse",
        full=("--data", "text12k", "--seeds", "0,1,2,3,4,5", "--vw"),
        smoke=("--data", "text1k", "--seeds", "0", "--rates", "0.5", "--vw"),
    ),
    Bench("vw_suite"),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="scripts to run (default: all)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks, not numbers")
    args = parser.parse_args()
    unknown = set(args.names) - {bench.module for bench in SUITE} - {b.name for b in SUITE}
    if unknown:
        parser.error(f"not in the suite: {', '.join(sorted(unknown))}")
    failed = []
    for bench in SUITE:
        if args.names and not {bench.module, bench.name} & set(args.names):
            continue
        arguments = bench.smoke if args.smoke else bench.full
        command = [sys.executable, "-m", f"benches.suite.{bench.module}", *arguments]
        print(f"\n### {' '.join(command[1:])}  ({load()})", flush=True)
        began = time.perf_counter()
        if subprocess.run(command, cwd=REPO).returncode != 0:
            failed.append(bench.name)
        print(f"### {bench.name}: {time.perf_counter() - began:.1f} s", flush=True)
    print(f"\n{len(failed)} failed" + (f": {', '.join(failed)}" if failed else ""))
    return len(failed)


if __name__ == "__main__":
    raise SystemExit(main())
