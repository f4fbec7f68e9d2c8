"""Criterion A/B of two builds, run alternately on one machine: base, new, base, new, ...

Build each side's bench executables first, in its own checkout and target folder, e.g.

    git worktree add /tmp/base 5f05ff8
    cd /tmp/base && CARGO_TARGET_DIR=/tmp/base-target cargo bench --no-run --bench learner \
        --bench apple && cd -
    CARGO_TARGET_DIR=/tmp/new-target cargo bench --no-run --bench learner --bench apple
    .venv/bin/python -m benches.tools.criterion_ab /tmp/base-target /tmp/new-target --rounds 4

Prints, per benchmark, the median over rounds of each side's criterion point estimate and
new/base, then the median and range of the ratios, and the load before each run.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
from collections import defaultdict
from pathlib import Path

UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# "name   time:   [low unit mid unit high unit]", the name possibly on the line before.
TIME = re.compile(r"^(\S+)?\s+time:\s+\[\S+ \S+ ([\d.]+) (\S+)")


def executable(target: Path, bench: str) -> Path:
    found = [p for p in (target / "release" / "deps").glob(f"{bench}-*") if p.suffix != ".d"]
    if len(found) != 1:
        raise SystemExit(f"expected one {bench} executable in {target}, found {found}")
    return found[0]


def parse(out: str) -> dict[str, float]:
    """Each benchmark's point estimate (seconds) in criterion's output, whose "time:" line may
    follow the benchmark's name on a line of its own; "change:" lines are not estimates."""
    times: dict[str, float] = {}
    name: str | None = None
    for line in out.splitlines():
        match = TIME.match(line)
        key = match.group(1) or name if match else None
        if match and key:
            times[key] = float(match.group(2)) * UNITS[match.group(3)]
            name = None
        elif re.match(r"^\S+/\S+$", line.strip()):
            name = line.strip()
    return times


def run(path: Path, seconds: float, only: str = "") -> dict[str, float]:
    """Runs one bench executable (only the benchmarks matching the regular expression ``only``
    when given); each benchmark's point estimate, in seconds."""
    command = [str(path), "--bench", "--warm-up-time", "1", "--measurement-time", str(seconds)]
    if only:
        command.append(only)
    out = subprocess.run([*command, "--noplot"], capture_output=True, text=True, check=True)
    return parse(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path, help="base side's CARGO_TARGET_DIR")
    parser.add_argument("new", type=Path, help="new side's CARGO_TARGET_DIR")
    parser.add_argument("--benches", default="learner,apple")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=2.0, help="measurement time")
    parser.add_argument(
        "--only", default="", help="criterion filter: run only the benchmarks it matches"
    )
    args = parser.parse_args()
    results: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for round_ in range(1, args.rounds + 1):
        for side, target in (("base", args.base), ("new", args.new)):
            for bench in args.benches.split(","):
                print(f"round {round_} {side} {bench}: load {os.getloadavg()[0]:.2f}", flush=True)
                for name, seconds in run(
                    executable(target, bench), args.seconds, args.only
                ).items():
                    results[name][side].append(seconds)
    ratios = []
    for name, sides in results.items():
        if not (sides["base"] and sides["new"]):
            print(f"{name:55s} only on one side: {dict(sides)}")
            continue
        base, new = statistics.median(sides["base"]), statistics.median(sides["new"])
        ratios.append(new / base)
        print(
            f"{name:55s} base {base * 1e3:10.3f} ms  new {new * 1e3:10.3f} ms  "
            f"new/base {new / base:.3f}"
        )
    print(
        f"median new/base {statistics.median(ratios):.3f}, "
        f"range {min(ratios):.3f}-{max(ratios):.3f} over {len(ratios)} benchmarks"
    )


if __name__ == "__main__":
    main()
