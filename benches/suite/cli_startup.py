"""Start-up time of the command line and of ``import polars_poly``, each in a fresh process.

Rounds alternate the cases (``polars-poly --help``, ``polars-poly train --help``,
``polars-poly train -d <1,000-row VW file> --quiet`` and ``python -c "import polars_poly"``),
so that a burst of load hits them all alike; prints each case's median and minimum wall time,
and the machine's load averages before and after. The targets (issue): the two ``--help`` under
0.5 s, the 1,000-row ``train`` under 1 s. A benchmark, not a test: it asserts nothing.

``polars-poly`` is the console script next to the interpreter when installed, else
``python -m polars_poly``.

Run: ``.venv/bin/python -m benches.suite.cli_startup [--rounds 7] [--rows 1000] [--module]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benches.common import compile_package, load


def write_vw(path: Path, rows: int, seed: int = 0) -> None:
    """``rows`` examples like ``1 |a x1 x2:0.5 |b y3``: random features of two namespaces."""
    rng = random.Random(seed)
    lines = []
    for _ in range(rows):
        label = rng.choice((-1, 1))
        a = " ".join(
            f"x{rng.randrange(100)}" + (f":{rng.uniform(-1, 1):.3f}" if rng.random() < 0.5 else "")
            for _ in range(rng.randint(1, 5))
        )
        b = " ".join(f"y{rng.randrange(20)}" for _ in range(rng.randint(1, 3)))
        lines.append(f"{label} |a {a} |b {b}")
    path.write_text("\n".join(lines) + "\n")


def program(module: bool) -> list[str]:
    """How to run ``polars-poly``: the console script beside the interpreter, or ``-m``."""
    script = Path(sys.executable).parent / "polars-poly"
    if script.exists() and not module:
        return [str(script)]
    return [sys.executable, "-m", "polars_poly"]


def run(command: list[str]) -> float:
    """Wall seconds of the command in a fresh process; fails loudly if it fails."""
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rows", type=int, default=1000, help="rows of the VW file trained on")
    parser.add_argument("--module", action="store_true", help="run python -m polars_poly")
    args = parser.parse_args()
    cli = program(args.module)
    compile_package()
    with tempfile.TemporaryDirectory(prefix="cli-startup-") as folder:
        data = Path(folder) / "small.vw"
        write_vw(data, args.rows)
        cases = {
            "polars-poly --help": [*cli, "--help"],
            "polars-poly train --help": [*cli, "train", "--help"],
            f"polars-poly train -d ({args.rows:,} rows) --quiet": [
                *cli,
                *("train", "-d", str(data), "--quiet"),
            ],
            "python -c 'import polars_poly'": [sys.executable, "-c", "import polars_poly"],
        }
        print(f"{' '.join(cli)}; {args.rounds} rounds; {os.cpu_count()} CPUs")
        print(f"before: {load()} (1, 5, 15 min)")
        for command in cases.values():  # warm the page cache and the bytecode
            run(command)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, command in cases.items():
                times[name].append(run(command))
    print(f"after:  {load()} (1, 5, 15 min)")
    width = max(map(len, times))
    print(f"{'case':<{width}}  median s   min s")
    for name, seconds in times.items():
        print(f"{name:<{width}}  {statistics.median(seconds):8.3f}  {min(seconds):6.3f}")


if __name__ == "__main__":
    main()
