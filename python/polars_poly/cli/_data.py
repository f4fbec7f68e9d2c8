"""Reading ``-d``: the file's format (``--format``, its suffix, else its first line), standard
input and other streams copied to a temporary file, and the file scanned as a LazyFrame read
in batches (a Vowpal Wabbit file with the reader flags and a model's namespaces)."""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars_poly as pp
from polars_poly._lazy import pl

STDIN = "-"


def _format_of(path: str, given: str) -> str:
    """The format ``--format`` gives, else the suffix's (``.vw``, ``.parquet``, ``.svm``), else
    the first line's: Vowpal Wabbit text has a ``|``, a LIBSVM line never does (``vw`` users
    name their files ``.dat``, ``.txt`` or nothing, and ``/dev/stdin`` has no suffix)."""
    if given != "auto":
        return given
    name = path[:-3] if path.endswith(".gz") else path
    if name.endswith(".vw"):
        return "vw"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".svm", ".libsvm", ".svmlight")):
        return "libsvm"
    return "vw" if b"|" in _first_line(path) else "libsvm"


def _first_line(path: str) -> bytes:
    """The first line of the (plain or gzip) file that is not blank; b"" for none."""
    import gzip

    with open(path, "rb") as raw:
        gzipped = raw.read(2) == b"\x1f\x8b"
    opened = gzip.open(path, "rb") if gzipped else open(path, "rb")
    with opened as lines:
        for line in lines:
            if line.strip():
                return bytes(line)
    return b""


@contextmanager
def data_file(path: str, format: str) -> Iterator[tuple[str, str]]:
    """(a readable path, its format) for ``-d``: the file, or standard input (``-`` or no
    ``-d``: Vowpal Wabbit text unless ``--format`` says) or any other stream (a pipe, a FIFO,
    ``/dev/stdin``), which can be read only once, copied to a temporary file first (a file is
    read more than once: its format, its namespaces, then its rows)."""
    stream = path == STDIN or (os.path.exists(path) and not _is_file_or_directory(path))
    if not stream:
        yield path, _format_of(path, format)
        return
    with tempfile.TemporaryDirectory(prefix="polars-poly-stdin-") as folder:
        copy = Path(folder) / ("stdin" if path in (STDIN, "/dev/stdin") else Path(path).name)
        with copy.open("wb") as out:
            if path == STDIN:
                shutil.copyfileobj(sys.stdin.buffer, out)
            else:
                with open(path, "rb") as source:
                    shutil.copyfileobj(source, out)
        yield str(copy), _format_of(str(copy), format)


def _is_file_or_directory(path: str) -> bool:
    mode = os.stat(path).st_mode
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


# Rows read and learned at a time: the commands stream their input in bounded memory.
BATCH_ROWS = 65_536
# Rows per batch of a run in the engine (Vowpal Wabbit text or its cache): three batches are in
# flight (read, queued, learned), so smaller ones keep the peak near the weight table's size;
# below this the hand-offs begin to cost.
ENGINE_BATCH_ROWS = 16_384


def scan_data(
    path: str, kind: str, args: argparse.Namespace, bits: int, model: Any = None
) -> tuple[pl.LazyFrame, list[str], str]:
    """The data file as a LazyFrame read in batches, its feature columns (one per Vowpal Wabbit
    namespace) and its label column. A Vowpal Wabbit file is read with the reader flags
    (``--ignore``, ``--keep``, ``--hash``, ``--ngram``, ``--skips``) and, for a ``model``, as
    its namespaces: one the file lacks is empty, one the model lacks is dropped (it has no
    weights for it)."""
    if kind == "libsvm":
        return pp.scan_libsvm(path, batch_size=BATCH_ROWS), ["features"], "label"
    if kind == "vw":
        read = _vw_reader_options(args, model)
        fitted = getattr(model, "namespaces_", None)
        if fitted is not None:
            read |= {"namespaces": list(fitted), "other_namespaces": "drop"}
        else:
            read["namespaces"] = "auto"
        frame = pp.scan_vw(path, bits=bits, batch_size=BATCH_ROWS, **read)
        names = frame.collect_schema().names()
        return frame, [c for c in names if c not in ("label", "weight", "base", "tag")], "label"
    frame = pl.scan_parquet(path)
    names = frame.collect_schema().names()
    if args.label not in names:
        raise ValueError(f"{path}: no label column {args.label!r}; its columns are {names}")
    return frame, [c for c in names if c not in (args.label, "weight")], args.label


def batches(frame: pl.LazyFrame) -> Iterator[pl.DataFrame]:
    """The frame's rows, ``BATCH_ROWS`` at a time."""
    yield from frame.collect_batches(chunk_size=BATCH_ROWS)


def _vw_reader_options(args: argparse.Namespace, model: Any = None) -> dict[str, Any]:
    """The reader flags (``--ignore``, ``--keep``, ``--hash``, ``--ngram``, ``--skips``): the
    command line's, else those the ``model`` was trained with (kept in its file, as vw keeps
    them in its model)."""
    given = {
        "ignore": "".join(args.ignore) or None,
        "keep": "".join(args.keep) or None,
        "hash": None if args.hash == "strings" else args.hash,
        "ngram": args.ngram or None,
        "skips": args.skips or None,
    }
    stored = getattr(model, "_vw_reader", None) or {}
    merged = {key: value if value is not None else stored.get(key) for key, value in given.items()}
    return merged | {"hash": merged["hash"] or "strings"}
