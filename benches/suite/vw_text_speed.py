"""``polars-poly train`` against ``vw`` on the Vowpal Wabbit user's own files: UCI Adult written
as VW text (one namespace per column, importance weights, tags), replicated to ``--rows``,
trained by both programs with the same flags, alternating, ``--rounds`` times each.

Prints each program's median and best wall time, their ratio, each one's peak memory (max RSS
of the process) and the machine's load; checks that both report the same average loss. Needs
the shared data (``adult/adult.tsv.gz``) and the ``vowpalwabbit`` package.

    .venv/bin/python -m benches.suite.vw_text_speed --rows 325000 --rounds 5
    .venv/bin/python -m benches.suite.vw_text_speed --flags "--loss_function logistic -q ab"
    .venv/bin/python -m benches.suite.vw_text_speed --cache          # both from their own caches
    .venv/bin/python -m benches.suite.vw_text_speed --eat-rate 10000000 --rounds 3 \
        --flags "-b 24 -q AB --loss_function logistic"          # add --cache: from the caches
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from benches.common import DATA, compile_package

HERE = Path(__file__).resolve().parent


def write_adult_vw(path: Path, rows: int, seed: int = 0) -> None:
    """Adult's 14 columns as 14 namespaces (letters a..n, a column's values ``name=value``,
    numbers as ``name:value``), labels -1/+1, a random importance weight and a tag per row,
    the 48,842 rows repeated (shuffled) up to ``rows``."""
    frame = pl.read_csv(DATA / "adult" / "adult.tsv.gz", separator="\t")
    features = [c for c in frame.columns if c != "target"]
    rng = np.random.default_rng(seed)
    order = np.concatenate(
        [rng.permutation(frame.height) for _ in range(-(-rows // frame.height))]
    )[:rows]
    frame = frame[order]
    parts = [
        pl.when(pl.col("target") == 1).then(pl.lit("1")).otherwise(pl.lit("-1")),
        pl.lit(" "),
        pl.Series(np.round(rng.uniform(0.5, 2.0, rows), 3)).cast(pl.String),
        pl.lit(" 'r"),
        pl.int_range(pl.len()).cast(pl.String),
    ]
    for letter, column in zip("abcdefghijklmn", features, strict=False):
        name = re.sub(r"\W", "_", column)
        parts.append(pl.lit(f" |{letter} {name}:"))
        parts.append(pl.col(column).cast(pl.Float64).cast(pl.String))
    lines = frame.select(pl.concat_str(parts).alias("line"))
    lines.write_csv(path, include_header=False, quote_style="never")


# The child's peak memory through GNU time: a forked child inherits the parent's high-water
# mark (wait4's ru_maxrss would report this script's own size for both programs).
TIME = Path("/usr/bin/time")
PEAK = "bench-peak-kb"


def write_eat_rate_vw(path: Path, rows: int) -> None:
    """fwumious_wabbit's eat-rate set (``polars_poly.synthetic.eat_rate``, its original
    sampling, seed 0) as VW text, ``label |A animal |B food |C ... |L ...``, 500,000 rows at a
    time."""
    from polars_poly.synthetic import eat_rate

    chunk = 500_000
    with path.open("wb") as out:
        for at in range(0, rows, chunk):
            frame = eat_rate(min(chunk, rows - at), 0, sampling="fwumious", offset=at)
            parts = [pl.col("label").cast(pl.Int64).cast(pl.String)]
            for field in frame.columns[1:]:
                parts += [pl.lit(f" |{field} "), pl.col(field)]
            lines = frame.select(pl.concat_str(parts).alias("line"))
            lines.write_csv(out, include_header=False, quote_style="never")


def run(command: list[str]) -> tuple[float, float | None, str]:
    """(wall seconds, peak RSS in MB or None without GNU time, stderr) of one run (stderr
    through a file, so that no pipe fills)."""
    wrapped = [str(TIME), "-f", f"{PEAK} %M", *command] if TIME.exists() else command
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.run(wrapped, stdout=subprocess.DEVNULL, stderr=err, check=False)
        wall = time.perf_counter() - start
        err.seek(0)
        text = err.read().decode()
    if process.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} failed:\n{text[-2000:]}")
    peaks = [line for line in text.splitlines() if line.startswith(PEAK)]
    peak = float(peaks[-1].split()[1]) / 1024 if peaks else None
    return wall, peak, text


def average_loss(stderr: str) -> float:
    found = re.search(r"average loss = ([0-9.]+)", stderr)
    if found is None:
        raise RuntimeError(f"no average loss in:\n{stderr[-1000:]}")
    return float(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=325_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--flags", default="--loss_function logistic")
    parser.add_argument("--file", type=Path, help="a VW file to use instead of Adult")
    parser.add_argument("--cache", action="store_true", help="time runs from each one's cache")
    parser.add_argument("--eat-rate", type=int, help="use this many rows of eat-rate instead")
    args = parser.parse_args(argv)
    adult = args.file is None and args.eat_rate is None
    if adult and not (DATA / "adult" / "adult.tsv.gz").exists():
        print(f"skipped: no shared data at {DATA}")
        return 0
    compile_package()
    with tempfile.TemporaryDirectory(prefix="vw-text-speed-") as folder:
        path = args.file
        if args.eat_rate is not None:
            path = Path(folder) / "eat_rate.vw"
            write_eat_rate_vw(path, args.eat_rate)
        elif path is None:
            path = Path(folder) / "adult.vw"
            write_adult_vw(path, args.rows)
        flags = shlex.split(args.flags)
        programs = {
            "polars-poly": [sys.executable, "-m", "polars_poly", "train", "-d", str(path), *flags],
            "vw": [sys.executable, "-m", "vowpalwabbit", "-d", str(path), *flags],
        }
        if args.cache:
            # Each program writes its own cache once (timed apart), then every round reads it.
            for name, command in programs.items():
                command += ["--cache_file", str(Path(folder) / f"{name}.cache")]
                wall, _, _ = run(command)
                print(f"{name:12s} writing its cache {wall:6.2f} s")
        times: dict[str, list[float]] = {name: [] for name in programs}
        peaks: dict[str, list[float | None]] = {name: [] for name in programs}
        losses: dict[str, float] = {}
        loads = []
        for _ in range(args.rounds):
            for name, command in programs.items():
                loads.append(os.getloadavg()[0])
                wall, peak, stderr = run(command)
                times[name].append(wall)
                peaks[name].append(peak)
                losses[name] = average_loss(stderr)
    what = f"Adult as VW text, {args.rows:,} rows"
    if args.file or args.eat_rate:
        what = f"eat-rate as VW text, {args.eat_rate:,} rows" if args.eat_rate else path.name
    print(f"{what}; flags {args.flags}{' (from each program’s cache)' if args.cache else ''}")
    for name in programs:
        known = [p for p in peaks[name] if p is not None]
        peak_text = f"{max(known):6.0f} MB" if known else "n/a (no GNU time)"
        print(
            f"{name:12s} median {statistics.median(times[name]):6.2f} s  best "
            f"{min(times[name]):6.2f} s  peak {peak_text}  average loss {losses[name]:.6f}"
        )
    ratio = statistics.median(times["vw"]) / statistics.median(times["polars-poly"])
    print(f"vw time / polars-poly time (medians): {ratio:.2f}")
    print(f"load during the runs: {min(loads):.2f}-{max(loads):.2f} (2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
