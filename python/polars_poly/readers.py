"""Readers for LIBSVM/svmlight and Vowpal Wabbit text files (plain or gzip), parsed in Rust."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, Literal

import polars as pl

from polars_poly import _internal

ZeroBased = bool | Literal["auto"]
PathLike = str | os.PathLike[str]

# The engine's registry of readers (``src/readers/mod.rs``) opens every format by name; the
# functions below are each format's public face. Options are checked once, in Rust.


def _read(format: str, path: PathLike, options: dict[str, Any]) -> pl.DataFrame:
    return _internal.read(format, os.fspath(path), options)


def _iter(
    format: str, path: PathLike, batch_size: int, options: dict[str, Any]
) -> Iterator[pl.DataFrame]:
    return iter(_internal.Batches(format, os.fspath(path), options, batch_size))


def _scan(format: str, path: PathLike, batch_size: int, options: dict[str, Any]) -> pl.LazyFrame:
    """A LazyFrame over a file read in batches when the query runs (projection, filter and
    row limit applied batch by batch)."""
    from polars.io.plugins import register_io_source

    schema = _internal.reader_schema(format, options).schema

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch: int | None,
    ) -> Iterator[pl.DataFrame]:
        remaining = n_rows
        for frame in _iter(format, path, batch or batch_size, options):
            frame = frame.select(schema.names())
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


def read_libsvm(
    path: PathLike, *, zero_based: ZeroBased = "auto", n_features: int | None = None
) -> pl.DataFrame:
    """Reads a LIBSVM/svmlight file (plain or gzip) into a DataFrame.

    Columns: ``label`` (Float64), ``qid`` (Int64, only when the file has ``qid:`` tokens) and
    ``features`` (sparse: ``List(Struct({"index": UInt32, "value": Float64}))``). Each row is
    sorted by index, repeated indices are summed and zero values dropped.

    ``zero_based="auto"`` follows scikit-learn: indices are one-based (shifted down by one)
    unless an index 0 occurs in the file. ``n_features``, when given, is checked against every
    index. A malformed line raises ``ValueError`` with the line number and its text.
    """
    return _read("libsvm", path, {"zero_based": zero_based, "n_features": n_features})


def iter_libsvm(
    path: PathLike,
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
    options = {"zero_based": zero_based, "n_features": n_features}
    return _iter("libsvm", path, batch_size, options)


def scan_libsvm(
    path: PathLike,
    *,
    batch_size: int = 100_000,
    zero_based: ZeroBased = "auto",
    n_features: int | None = None,
) -> pl.LazyFrame:
    """A LazyFrame over a LIBSVM file that is read in batches when the query runs.

    The ``qid`` column is not part of the scanned schema; use :func:`read_libsvm` for ranking
    files.
    """
    options = {"zero_based": zero_based, "n_features": n_features}
    return _scan("libsvm", path, batch_size, options)


def read_vw(path: PathLike, *, bits: int = 18, seed: int = 0) -> pl.DataFrame:
    """Reads a Vowpal Wabbit text file (plain or gzip) into a DataFrame.

    Columns: ``label`` (Float64, null when absent), ``weight`` (importance, default 1.0),
    ``base`` (default 0.0), ``tag`` (String, null when absent), ``features`` (sparse, indices
    hashed into ``2**bits`` with Vowpal Wabbit's hashing) and ``namespace`` (one namespace letter
    per stored feature, aligned with ``features``; ``32`` = space for the default namespace).
    """
    return _read("vw", path, {"bits": bits, "seed": seed})


def iter_vw(
    path: PathLike, *, bits: int = 18, seed: int = 0, batch_size: int = 100_000
) -> Iterator[pl.DataFrame]:
    """Reads a Vowpal Wabbit file in DataFrames of at most ``batch_size`` rows."""
    return _iter("vw", path, batch_size, {"bits": bits, "seed": seed})


def scan_vw(
    path: PathLike, *, bits: int = 18, seed: int = 0, batch_size: int = 100_000
) -> pl.LazyFrame:
    """A LazyFrame over a Vowpal Wabbit file that is read in batches when the query runs."""
    return _scan("vw", path, batch_size, {"bits": bits, "seed": seed})
