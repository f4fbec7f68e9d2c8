"""Any generator streamed to one parquet file, a chunk (and row group) at a time:
:func:`write_parquet`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import polars as pl
import pyarrow.parquet as pq

from polars_poly.synthetic._click import click
from polars_poly.synthetic._eat_rate import eat_rate
from polars_poly.synthetic._text import text

Kind = Literal["eat_rate", "text", "click"]


_GENERATORS: dict[str, Callable[..., pl.DataFrame]] = {
    "eat_rate": eat_rate,
    "text": text,
    "click": click,
}
# Rows per chunk when none is given: a million, but text rows hold ~80 tokens each.
_CHUNK_ROWS = {"eat_rate": 1_000_000, "text": 100_000, "click": 1_000_000}


def _kind(kind: str) -> str:
    name = kind.replace("-", "_")
    if name not in _GENERATORS:
        raise ValueError(f"kind must be one of {sorted(_GENERATORS)}, got {kind!r}")
    return name


def write_parquet(
    kind: Kind | str,
    path: str | os.PathLike[str],
    n_rows: int,
    seed: int,
    chunk_rows: int | None = None,
    *,
    offset: int = 0,
    compression: str = "zstd",
    **params: Any,
) -> Path:
    """Stream ``n_rows`` rows of a generator to one parquet file, a chunk at a time.

    Memory is bounded by one chunk: each chunk is generated, written as a row group and
    dropped. Row ``i`` of the file is the same whatever ``chunk_rows`` is, and equals row ``i``
    of the generator called with ``n_rows`` directly.

    Parameters
    ----------
    kind
        ``"eat_rate"`` (or ``"eat-rate"``), ``"text"`` or ``"click"``.
    path
        The parquet file to write (overwritten).
    n_rows
        Number of rows.
    seed
        The generator's seed.
    chunk_rows
        Rows per chunk (and row group); ``None`` for 1,000,000 (100,000 for ``text``).
    offset
        Index of the first row, to write e.g. a test set that follows a training set.
    compression
        Parquet compression codec.
    **params
        The generator's other keyword arguments (``vocabulary=``, ``n_fields=``, ...).

    Returns
    -------
    pathlib.Path
        The file written.

    Examples
    --------
    >>> import polars as pl
    >>> path = write_parquet("eat-rate", "eat-rate.parquet", 2500, seed=0, chunk_rows=1000)
    >>> pl.read_parquet(path).equals(eat_rate(2500, seed=0))
    True
    """
    name = _kind(kind)
    generator = _GENERATORS[name]
    step = _CHUNK_ROWS[name] if chunk_rows is None else int(chunk_rows)
    if step <= 0:
        raise ValueError(f"chunk_rows must be positive, got {chunk_rows}")
    if n_rows < 0:
        raise ValueError(f"n_rows must be non-negative, got {n_rows}")
    out = Path(path)
    writer: pq.ParquetWriter | None = None
    try:
        start = 0
        while writer is None or start < n_rows:
            size = min(step, n_rows - start)
            table = generator(size, seed, offset=offset + start, **params).to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(out, table.schema, compression=compression)
            writer.write_table(table, row_group_size=max(size, 1))
            start += size
    finally:
        if writer is not None:
            writer.close()
    return out
