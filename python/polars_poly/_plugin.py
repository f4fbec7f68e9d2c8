"""Registration of the compiled plugin expressions (one place that knows the library path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from polars.plugins import register_plugin_function

PLUGIN_PATH = Path(__file__).parent


def call_plugin(
    function_name: str,
    args: list[pl.Expr],
    kwargs: dict[str, Any] | None = None,
    *,
    wildcard: bool = False,
) -> pl.Expr:
    """An elementwise plugin call into ``polars_poly._internal``."""
    return register_plugin_function(
        plugin_path=PLUGIN_PATH,
        function_name=function_name,
        args=args,
        kwargs=kwargs,
        is_elementwise=True,
        input_wildcard_expansion=wildcard,
    )


def as_exprs(columns: tuple[str | pl.Expr | list[str | pl.Expr], ...]) -> list[pl.Expr]:
    """Column names, expressions and lists of either, flattened to expressions."""
    exprs: list[pl.Expr] = []
    for column in columns:
        if isinstance(column, list | tuple):
            exprs.extend(as_exprs(tuple(column)))
        elif isinstance(column, str):
            exprs.append(pl.col(column))
        elif isinstance(column, pl.Expr):
            exprs.append(column)
        else:
            raise TypeError(f"expected a column name or a Polars expression, got {column!r}")
    if not exprs:
        raise ValueError("at least one column is required")
    return exprs
