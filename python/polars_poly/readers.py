"""Readers for LIBSVM/svmlight and Vowpal Wabbit text files (plain or gzip), parsed in Rust."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
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


Namespaces = str | Sequence[str] | None


def _vw_options(path: PathLike, bits: int, seed: int, namespaces: Namespaces) -> dict[str, Any]:
    """The reader options; ``namespaces="auto"`` lists the namespaces of the first 100,000
    examples, in order of appearance."""
    options: dict[str, Any] = {"bits": bits, "seed": seed}
    if namespaces is None:
        return options
    if isinstance(namespaces, str) and namespaces == "auto":
        first = next(_iter("vw", path, 100_000, options), None)
        letters: dict[int, None] = {}
        if first is not None:
            for letter in first["namespace"].explode().drop_nulls().unique(maintain_order=True):
                letters[int(letter)] = None
        names = [DEFAULT_NAMESPACE if k == 32 else chr(k) for k in letters]
        if not names:
            raise ValueError(f"{os.fspath(path)!r}: no features in the first 100,000 examples")
    elif isinstance(namespaces, str):
        names = list(namespaces)
    else:
        names = [str(name) for name in namespaces]
    options["namespaces"] = names
    return options


#: The column name of Vowpal Wabbit's default namespace with ``namespaces=``.
DEFAULT_NAMESPACE = "default"


def read_vw(
    path: PathLike, *, bits: int = 18, seed: int = 0, namespaces: Namespaces = None
) -> pl.DataFrame:
    """Reads a Vowpal Wabbit text file (plain or gzip) into a DataFrame.

    Columns: ``label`` (Float64, null when absent), ``weight`` (importance, default 1.0),
    ``base`` (default 0.0), ``tag`` (String, null when absent), then the features:

    * ``namespaces=None``: ``features`` (sparse, indices hashed into ``2**bits`` with Vowpal
      Wabbit's hashing) and ``namespace`` (one namespace letter per stored feature, aligned with
      ``features``; ``32`` = space for the default namespace);
    * ``namespaces="AB"`` (or ``["A", "B", "default"]``, or ``"auto"`` for those of the first
      100,000 examples): one sparse column per namespace letter, named by it (``"default"`` for
      the default namespace), ready for a learner's ``interactions``. Their indices keep Vowpal
      Wabbit's whole 32-bit hash relative to the column (``bits`` does not apply: the learner
      masks), so that a learner lands every feature and every namespace cross on the slot Vowpal
      Wabbit's ``-q`` gives it. A feature of a namespace not listed raises ``ValueError`` naming
      the line.

    >>> import tempfile, pathlib, polars_poly as pp
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "train.vw"
    >>> _ = path.write_text("1 |Animal cat |Food fish\\n-1 |Animal cow |Food fish\\n")
    >>> frame = pp.read_vw(path, namespaces="AF")
    >>> frame.columns
    ['label', 'weight', 'base', 'tag', 'A', 'F']
    >>> model = pp.SGDClassifier(loss="logistic", interactions=[("A", "F")], progress=False)
    >>> model.fit(frame).namespaces_  # label and importance weights used as vw uses them
    ['A', 'F']
    """
    return _read("vw", path, _vw_options(path, bits, seed, namespaces))


def iter_vw(
    path: PathLike,
    *,
    bits: int = 18,
    seed: int = 0,
    batch_size: int = 100_000,
    namespaces: Namespaces = None,
) -> Iterator[pl.DataFrame]:
    """Reads a Vowpal Wabbit file in DataFrames of at most ``batch_size`` rows (columns as
    :func:`read_vw`)."""
    return _iter("vw", path, batch_size, _vw_options(path, bits, seed, namespaces))


def scan_vw(
    path: PathLike,
    *,
    bits: int = 18,
    seed: int = 0,
    batch_size: int = 100_000,
    namespaces: Namespaces = None,
) -> pl.LazyFrame:
    """A LazyFrame over a Vowpal Wabbit file that is read in batches when the query runs
    (columns as :func:`read_vw`; with ``namespaces="auto"`` the first 100,000 examples are read
    once to list them)."""
    return _scan("vw", path, batch_size, _vw_options(path, bits, seed, namespaces))
