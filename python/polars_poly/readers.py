"""Readers for LIBSVM/svmlight and Vowpal Wabbit text files (plain or gzip), parsed in Rust."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Literal

import polars as pl

from polars_poly import _internal

ZeroBased = bool | Literal["auto"]


def _zero_based(value: ZeroBased) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value == "auto":
        return "auto"
    raise ValueError(f"zero_based must be True, False or 'auto', got {value!r}")


def _check_n_features(n_features: int | None) -> None:
    if n_features is not None and n_features < 0:
        raise ValueError(f"n_features must be >= 0, got {n_features}")


def read_libsvm(
    path: str | os.PathLike[str],
    *,
    zero_based: ZeroBased = "auto",
    n_features: int | None = None,
) -> pl.DataFrame:
    """Reads a LIBSVM/svmlight file into a DataFrame.

    Columns: ``label`` (Float64), ``qid`` (Int64, only when the file has ``qid:`` tokens) and
    ``features`` (sparse: ``List(Struct({"index": UInt32, "value": Float64}))``). Each row is
    sorted by index, repeated indices are summed and zero values dropped.

    ``zero_based="auto"`` follows scikit-learn: indices are one-based (shifted down by one)
    unless an index 0 occurs in the file. ``n_features``, when given, is checked against every
    index. A malformed line raises ``ValueError`` with the line number and its text.
    """
    _check_n_features(n_features)
    frame, _ = _internal.read_libsvm(os.fspath(path), _zero_based(zero_based), n_features)
    return frame


def iter_libsvm(
    path: str | os.PathLike[str],
    *,
    batch_size: int = 100_000,
    zero_based: ZeroBased = "auto",
    n_features: int | None = None,
) -> Iterator[pl.DataFrame]:
    """Reads a LIBSVM file in DataFrames of at most ``batch_size`` rows (bounded memory).

    With ``zero_based="auto"`` the first batch decides (one-based unless it holds an index 0);
    a later index 0 then raises instead of silently shifting: pass ``zero_based`` explicitly for
    files whose first batch is not representative.
    """
    _check_n_features(n_features)
    return iter(
        _internal.LibsvmBatches(os.fspath(path), _zero_based(zero_based), n_features, batch_size)
    )


def scan_libsvm(
    path: str | os.PathLike[str],
    *,
    batch_size: int = 100_000,
    zero_based: ZeroBased = "auto",
    n_features: int | None = None,
) -> pl.LazyFrame:
    """A LazyFrame over a LIBSVM file that is read in batches when the query runs.

    The ``qid`` column is not part of the scanned schema; use :func:`read_libsvm` for ranking
    files.
    """
    from polars.io.plugins import register_io_source

    schema: dict[str, pl.DataType] = {
        "label": pl.Float64(),
        "features": pl.List(pl.Struct({"index": pl.UInt32, "value": pl.Float64})),
    }

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch: int | None,
    ) -> Iterator[pl.DataFrame]:
        remaining = n_rows
        for frame in iter_libsvm(
            path, batch_size=batch or batch_size, zero_based=zero_based, n_features=n_features
        ):
            frame = frame.select(schema.keys())
            if predicate is not None:
                frame = frame.filter(predicate)
            if with_columns is not None:
                frame = frame.select(with_columns)
            if remaining is not None:
                frame = frame.head(remaining)
                remaining -= frame.height
            yield frame
            if remaining is not None and remaining <= 0:
                return

    return register_io_source(source, schema=schema)


def read_vw(path: str | os.PathLike[str], *, bits: int = 18, seed: int = 0) -> pl.DataFrame:
    """Reads a Vowpal Wabbit text file into a DataFrame.

    Columns: ``label`` (Float64, null when absent), ``weight`` (importance, default 1.0),
    ``base`` (default 0.0), ``tag`` (String, null when absent), ``features`` (sparse, indices
    hashed into ``2**bits`` with Vowpal Wabbit's hashing) and ``namespace`` (one namespace letter
    per stored feature, aligned with ``features``; ``32`` = space for the default namespace).
    """
    _check_bits(bits, seed)
    return _internal.read_vw(os.fspath(path), bits, seed)


def iter_vw(
    path: str | os.PathLike[str], *, bits: int = 18, seed: int = 0, batch_size: int = 100_000
) -> Iterator[pl.DataFrame]:
    """Reads a Vowpal Wabbit file in DataFrames of at most ``batch_size`` rows."""
    _check_bits(bits, seed)
    return iter(_internal.VwBatches(os.fspath(path), bits, seed, batch_size))


def _check_bits(bits: int, seed: int) -> None:
    if not 1 <= bits <= 32:
        raise ValueError(f"bits must be in 1..=32, got {bits}")
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be in 0..2**32, got {seed}")
