"""Polars, NumPy and PyArrow, each imported when one of its attributes is first read.

The command line's runs on Vowpal Wabbit text go from the file through the engine to the
report and the model file without any of them: importing them would be 0.2 s, half of a
short run. Modules on that path take ``pl``, ``np`` and ``pa`` from here; type checkers see the
modules themselves.
"""

from __future__ import annotations

import importlib
import types
from typing import TYPE_CHECKING, Any

__all__ = ["np", "pa", "pl"]

if TYPE_CHECKING:
    import numpy as np
    import polars as pl
    import pyarrow as pa
else:

    class _OnFirstUse(types.ModuleType):
        """Stands for the module of its name until an attribute is read: then imports it and
        takes its attributes, so that later reads are plain ones."""

        def __getattr__(self, name: str) -> Any:
            module = importlib.import_module(self.__name__)
            self.__dict__.update(module.__dict__)
            return getattr(module, name)

    np = _OnFirstUse("numpy")
    pl = _OnFirstUse("polars")
    pa = _OnFirstUse("pyarrow")
