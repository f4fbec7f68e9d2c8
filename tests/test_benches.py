"""Every script of the maintained benchmark suite (``benches/suite``, behind docs/benchmarks.md)
runs, at a tiny size: a script that rots fails here, not on the day someone needs its numbers.
No timing is checked (speed claims live in the benches' own output)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benches.suite.__main__ import SUITE, Bench
from tests.conftest import REPO


@pytest.mark.parametrize("bench", SUITE, ids=lambda bench: bench.name)
def test_suite_script_runs(bench: Bench) -> None:
    command = [sys.executable, "-m", f"benches.suite.{bench.module}", *bench.smoke]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (
        f"{' '.join(command[1:])}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    )
    assert done.stdout.strip(), "printed nothing"


def test_every_suite_script_is_listed() -> None:
    """A script put in benches/suite is in the suite's list (and so in this test)."""
    scripts = {p.stem for p in (REPO / "benches" / "suite").glob("*.py")} - {"__init__", "__main__"}
    assert scripts == {bench.module for bench in SUITE}
