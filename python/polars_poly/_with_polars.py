"""The ``.poly`` expression namespace registered with Polars whenever Polars is imported: at once
when it already is, else right after its import, so that ``import polars_poly`` does not import
Polars (0.13 s; the command line's runs on Vowpal Wabbit text never use it)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

NAMESPACE_MODULE = "polars_poly.namespace"


def register_namespace() -> None:
    """Registers ``pl.Expr.poly`` now, or when Polars is first imported."""
    if "polars" in sys.modules:
        importlib.import_module(NAMESPACE_MODULE)
    elif not any(isinstance(finder, _PolarsImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PolarsImport())


class _PolarsImport:
    """A finder on ``sys.meta_path`` (not derived from ``importlib.abc``, whose import costs
    a tenth of the command line's) that finds nothing itself: on Polars' import it leaves
    ``sys.meta_path`` and has Polars' own loader register the namespace once Polars has run."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "polars":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("polars")
        loader: Any = None if spec is None else spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_polars = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_polars(module)
            importlib.import_module(NAMESPACE_MODULE)

        # On this loader object alone (Polars' own), so that what Polars reads of its loader
        # (resources, its path) is unchanged.
        loader.exec_module = exec_module
        return spec
