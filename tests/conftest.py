from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from sklearn.metrics import log_loss

REPO = Path(__file__).resolve().parents[1]
# The benchmark data: $POLARS_POLY_DATA, else ../shared/data beside the clone.
SHARED_DATA = Path(os.environ.get("POLARS_POLY_DATA", REPO.parent / "shared" / "data"))


def shared_file(*parts: str) -> Path:
    """A file of the shared benchmark data, or skip the test when the folder is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path} (set POLARS_POLY_DATA)")
    return path


def logloss_on(model: Any, test: pl.DataFrame, label: str = "label") -> float:
    """A classifier's logistic loss on ``test`` (labels +1/-1 in ``label``), by scikit-learn."""
    p = model.predict_proba(test.drop(label))[:, 1]
    return float(log_loss(test[label].to_numpy() > 0, p, labels=[False, True]))
