"""Peak resident memory of one call, for the benches that measure it (Linux only: the kernel's
``VmHWM`` counter, reset through ``/proc/self/clear_refs``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def _kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status (Linux only)")


def peak_above_kib(run: Callable[[], object]) -> tuple[int, float]:
    """(KiB of peak resident memory above the memory before ``run``, seconds ``run`` took);
    its result is dropped only after the peak is read."""
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
    before = _kib("VmRSS:")
    began = time.perf_counter()
    result = run()
    took = time.perf_counter() - began
    peak = _kib("VmHWM:")
    del result
    return peak - before, took
