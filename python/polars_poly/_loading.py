"""``load_model``: a model file of any estimator, read as that estimator.

Above the estimators' modules (it imports them all, so that each has registered itself with
:class:`~polars_poly._persist.Persistent`), which import ``_persist`` below them.
"""

from __future__ import annotations

import os
from typing import Any

from polars_poly import _internal, dos, learner  # noqa: F401  (the estimators register)
from polars_poly._persist import estimator_from, file_source, file_to_read


def load_model(path: str | os.PathLike[str]) -> Any:
    """Reads a model written by any estimator's ``save`` and returns that estimator."""
    model, text = _internal.load_model(file_to_read(path))
    estimator = estimator_from(model, text)
    estimator._source = file_source(path)
    return estimator
