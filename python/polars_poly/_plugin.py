"""Registration of the compiled plugin expressions (one place that knows the library path)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from polars_poly import _internal
from polars_poly._lazy import pl

PLUGIN_PATH = Path(__file__).parent


def call_plugin(
    function_name: str,
    args: list[pl.Expr],
    kwargs: dict[str, Any] | None = None,
    *,
    wildcard: bool = False,
) -> pl.Expr:
    """An elementwise plugin call into ``polars_poly._internal``."""
    # Ctrl-C then also stops our calls in flight in the query (see src/python/guard.rs): only
    # where Ctrl-C means KeyboardInterrupt (a program with a SIGINT handler of its own gets
    # Polars' behaviour as it was); a no-op after the first expression or off the main thread.
    # A process started with SIGINT ignored (in the background, under nohup) has Python report
    # it ignored while Polars, imported, handles it and interrupts its queries: chain_sigint
    # then chains onto Polars' handler (and leaves a handler that is still SIG_IGN alone).
    handler = signal.getsignal(signal.SIGINT)
    if handler is signal.default_int_handler or handler in (signal.SIG_IGN, signal.SIG_DFL):
        _internal.chain_sigint()
    checked = []
    for arg in args:
        # Polars hands a plugin its inputs over the Arrow C interface, where a name is a C
        # string: a NUL byte in one panics inside Polars before our code runs. A name known
        # now is checked now; one known only when the query is planned (pl.all(), a regex, a
        # selector) is checked then, by a name mapping that changes nothing else.
        name = arg.meta.output_name(raise_if_undetermined=False)
        if name is None:
            arg = arg.name.map(_refuse_nul_name)
        else:
            _refuse_nul_name(name)
        checked.append(arg)
    from polars.plugins import register_plugin_function

    return register_plugin_function(
        plugin_path=PLUGIN_PATH,
        function_name=function_name,
        args=checked,
        kwargs=kwargs,
        is_elementwise=True,
        input_wildcard_expansion=wildcard,
    )


def _refuse_nul_name(name: str) -> str:
    """``name`` itself, or a ValueError naming it if it holds a NUL byte."""
    if "\x00" in name:
        raise ValueError(
            f"column {name!r}: a NUL byte in a column name is not supported by Polars' "
            "plugin interface; rename the column (or .alias the expression)"
        )
    return name


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
