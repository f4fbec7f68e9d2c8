"""What the bench scripts share: where the data is, how busy the machine is, how to time a run
and how to read its peak memory.

Scripts run from the repository root as modules (``.venv/bin/python -m benches.suite.NAME``), so
they import this as ``benches.common``.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent
# The shared benchmark data (``../shared/data`` beside the clone unless $POLARS_POLY_DATA says).
DATA = Path(os.environ.get("POLARS_POLY_DATA", REPO.parent / "shared" / "data"))


def data_or_exit(*names: str) -> Path:
    """The shared data folder, or exit visibly (status 0: a skip, not a failure) when it or one
    of ``names`` in it is missing."""
    missing = [name for name in names if not (DATA / name).exists()]
    if not DATA.is_dir() or missing:
        what = ", ".join(missing) if DATA.is_dir() else str(DATA)
        print(f"SKIPPED: needs the shared data ({what}; set $POLARS_POLY_DATA)")
        raise SystemExit(0)
    return DATA


def module_or_exit(name: str, install: str) -> None:
    """Exit visibly (status 0: a skip, not a failure) when the peer tool ``name`` (a Python
    module, ``vowpalwabbit`` say) is not installed; ``install`` says how to get it."""
    if importlib.util.find_spec(name) is None:
        print(f"SKIPPED: needs {name} ({install})")
        raise SystemExit(0)


def load() -> str:
    """The 1, 5 and 15 minute load averages, to print beside every timing (shared machines)."""
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def seconds(run: Callable[[], object]) -> float:
    """Wall seconds one call of ``run`` takes."""
    began = time.perf_counter()
    run()
    return time.perf_counter() - began


def timed(run: Callable[[], T]) -> tuple[T, float]:
    """``run()``'s result and the wall seconds the call took (dropping the result is not
    timed)."""
    began = time.perf_counter()
    result = run()
    return result, time.perf_counter() - began


def best_of(run: Callable[[], object], repeats: int) -> float:
    """The fastest of ``repeats`` calls, in seconds."""
    return min(seconds(run) for _ in range(repeats))


def alternated_medians(runs: Mapping[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds of each run, the runs taken in turn (A, B, A, B, ...) so that a change in
    the machine's load hits every one of them alike."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            times[name].append(seconds(run))
    return {name: statistics.median(taken) for name, taken in times.items()}


def compile_package() -> None:
    """Writes the bytecode of polars_poly's modules, as installing the wheel does: a process
    started with ``PYTHONDONTWRITEBYTECODE`` (or a read-only tree) would otherwise compile the
    editable build's modules from source at every start of a timed command (0.04 s)."""
    import compileall

    import polars_poly

    compileall.compile_dir(Path(polars_poly.__file__).parent, quiet=1)


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status (Linux only)")


def peak_above_kib(run: Callable[[], object]) -> tuple[int, float]:
    """(KiB of peak resident memory above the memory before ``run``, seconds ``run`` took); its
    result is dropped only after the peak is read. Linux only: the kernel's ``VmHWM`` counter,
    reset through ``/proc/self/clear_refs``."""
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
    before = _status_kib("VmRSS:")
    began = time.perf_counter()
    result = run()
    took = time.perf_counter() - began
    peak = _status_kib("VmHWM:")
    del result
    return peak - before, took


# The committed comparison table behind the apple claims of the benchmarks page.
COMPARE_TABLE = REPO / "benches" / "results" / "apple_compare.csv.gz"
