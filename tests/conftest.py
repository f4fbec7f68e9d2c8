from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The benchmark data: $POLARS_POLY_DATA, else ../shared/data beside the clone.
SHARED_DATA = Path(os.environ.get("POLARS_POLY_DATA", REPO.parent / "shared" / "data"))


def shared_file(*parts: str) -> Path:
    """A file of the shared benchmark data, or skip the test when the folder is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path} (set POLARS_POLY_DATA)")
    return path
