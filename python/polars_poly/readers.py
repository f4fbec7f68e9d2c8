"""Readers for LIBSVM/svmlight and Vowpal Wabbit text files (plain or gzip), parsed in Rust."""

from __future__ import annotations

import numbers
import os
import stat
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

from polars_poly import _internal
from polars_poly._lazy import pl
from polars_poly._params import integer
from polars_poly._persist import file_kind

ZeroBased = bool | Literal["auto"]
PathLike = str | os.PathLike[str]

# The engine's registry of readers (``src/readers/mod.rs``) opens every format by name; the
# functions below are each format's public face. Options are checked once, in Rust.


def _read(format: str, path: PathLike, options: dict[str, Any]) -> pl.DataFrame:
    return _internal.read(format, os.fspath(path), options)


def _iter(
    format: str, path: PathLike, batch_size: int, options: dict[str, Any]
) -> Iterator[pl.DataFrame]:
    return iter(_internal.Batches(format, os.fspath(path), options, _batch_size(batch_size)))


def _batch_size(value: Any) -> int:
    batch_size = integer("batch_size", value)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    return batch_size


def _scan(format: str, path: PathLike, batch_size: int, options: dict[str, Any]) -> pl.LazyFrame:
    """A LazyFrame over a file read in batches when the query runs (projection, filter and
    row limit applied batch by batch)."""
    from polars.io.plugins import register_io_source

    batch_size = _batch_size(batch_size)
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


def _libsvm_options(zero_based: Any, n_features: Any) -> dict[str, Any]:
    """The LIBSVM reader's options, ``n_features`` checked here (a ``TypeError`` or
    ``ValueError`` naming it); the engine checks ``zero_based``."""
    if n_features is not None:
        n_features = integer("n_features", n_features)
        if n_features < 0:
            raise ValueError(f"n_features must be >= 0 or None, got {n_features}")
    return {"zero_based": zero_based, "n_features": n_features}


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
    return _read("libsvm", path, _libsvm_options(zero_based, n_features))


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
    options = _libsvm_options(zero_based, n_features)
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
    options = _libsvm_options(zero_based, n_features)
    return _scan("libsvm", path, batch_size, options)


Namespaces = str | Sequence[str] | None
#: Namespace letters: a string of letters (``"ab"``) or a list of names (``["a", "default"]``).
NamespaceLetters = str | Sequence[str] | None
#: Vowpal Wabbit's ``--ngram`` / ``--skips``: ``2`` (every namespace), ``"a2"`` (namespace ``a``;
#: ``"default2"`` for the default namespace) or a list of them, later ones winning.
GramSpec = int | str | Sequence[int | str] | None
OtherNamespaces = Literal["error", "drop"]
HashMode = Literal["strings", "all"]


_LETTERS = "a string of namespace letters, a list of namespace names"


def _names(option: str, value: Any, wanted: str = f"{_LETTERS} or None") -> list[str]:
    """Namespace names: a string is its letters, except ``"default"``; a list (or any iterable)
    holds names. Anything else is a ``TypeError`` naming ``option`` and saying what it takes."""
    if isinstance(value, str):
        return [value] if value == DEFAULT_NAMESPACE else list(value)
    if isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        names = list(value)
        if all(isinstance(name, str) for name in names):
            return [str(name) for name in names]
    raise TypeError(f"{option} must be {wanted}, got {value!r}")


def _gram_specs(option: str, value: GramSpec) -> list[str]:
    """``--ngram``/``--skips`` specs as the engine reads them: ``2``, ``"a2"`` or a list of them
    (a ``TypeError`` naming ``option`` otherwise)."""
    if value is None:
        return []

    def spec(item: Any) -> bool:
        return isinstance(item, str | numbers.Integral) and not isinstance(item, bool)

    specs = [value] if isinstance(value, str | numbers.Integral) else value
    if isinstance(specs, Iterable) and not isinstance(specs, bytes | Mapping):
        specs = list(specs)
        if all(spec(item) for item in specs):
            return [item if isinstance(item, str) else str(int(item)) for item in specs]
    raise TypeError(
        f"{option} must be an integer (2), a namespace and an integer ('a2'), a list of them "
        f"or None, got {value!r}"
    )


def _choice(option: str, value: Any, allowed: tuple[str, ...]) -> Any:
    """A string option the engine checks against its names; any other type is a ``TypeError``
    here, naming the option and its values."""
    if not isinstance(value, str):
        listed = " or ".join(repr(a) for a in allowed)
        raise TypeError(f"{option} must be {listed}, got {value!r}")
    return value


def _vw_options(
    path: PathLike,
    bits: int,
    seed: int,
    namespaces: Namespaces,
    other_namespaces: OtherNamespaces = "error",
    ignore: NamespaceLetters = None,
    keep: NamespaceLetters = None,
    hash: HashMode = "strings",
    ngram: GramSpec = None,
    skips: GramSpec = None,
) -> dict[str, Any]:
    """The reader options; ``namespaces="auto"`` lists every namespace of the file (a fast scan
    of the whole file in Rust), in order of first appearance, less those ``ignore``/``keep``
    remove."""
    options: dict[str, Any] = {
        "bits": integer("bits", bits),
        "seed": integer("seed", seed),
        "other_namespaces": _choice("other_namespaces", other_namespaces, ("error", "drop")),
        "ignore": [] if ignore is None else _names("ignore", ignore),
        "keep": None if keep is None else _names("keep", keep),
        "hash": _choice("hash", hash, ("strings", "all")),
        "ngram": _gram_specs("ngram", ngram),
        "skips": _gram_specs("skips", skips),
    }
    if namespaces is None:
        return options
    if isinstance(namespaces, str) and namespaces == "auto":
        _refuse_read_once(path)
        names = _internal.vw_namespaces(os.fspath(path), options)
        if not names:
            left = " left by ignore/keep" if ignore is not None or keep is not None else ""
            raise ValueError(f"{os.fspath(path)!r}: no features: no namespace in the file{left}")
    else:
        names = _names("namespaces", namespaces, f"{_LETTERS}, 'auto' or None")
    options["namespaces"] = names
    return options


def _refuse_read_once(path: PathLike) -> None:
    """``namespaces="auto"`` reads the file twice (its namespaces first): a FIFO or a device,
    which can be read once, would wait for ever for the second read's writer."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # the reader names a missing or unreadable file
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise ValueError(
            f"{os.fspath(path)!r} is {file_kind(mode)}, which can be read once: "
            "namespaces='auto' reads the file twice (its namespaces first); give the namespaces "
            "(namespaces='AB' or a list), or write the data to a file"
        )


#: The column name of Vowpal Wabbit's default namespace with ``namespaces=``.
DEFAULT_NAMESPACE = "default"


def read_vw(
    path: PathLike,
    *,
    bits: int = 18,
    seed: int = 0,
    namespaces: Namespaces = None,
    other_namespaces: OtherNamespaces = "error",
    ignore: NamespaceLetters = None,
    keep: NamespaceLetters = None,
    hash: HashMode = "strings",
    ngram: GramSpec = None,
    skips: GramSpec = None,
) -> pl.DataFrame:
    """Reads a Vowpal Wabbit text file (plain or gzip) into a DataFrame.

    Columns: ``label`` (Float64, null when absent), ``weight`` (importance, default 1.0),
    ``base`` (default 0.0), ``tag`` (String, null when absent), then the features. A label
    written with more after its number (``1:1``, a cost-sensitive label's form) is read as
    Vowpal Wabbit reads it, as the number, with a ``UserWarning`` naming the first such line.

    * ``namespaces=None``: ``features`` (sparse, indices hashed into ``2**bits`` with Vowpal
      Wabbit's hashing) and ``namespace`` (one namespace letter per stored feature, aligned with
      ``features``; ``32`` = space for the default namespace);
    * ``namespaces="AB"`` (or ``["A", "B", "default"]``, or ``"auto"`` for every namespace of
      the file, in order of first appearance, found by a fast scan of the whole file): one
      sparse column per namespace letter, named by it (``"default"`` for the default
      namespace), ready for a learner's ``interactions``. Their indices keep Vowpal Wabbit's
      whole 32-bit hash relative to the column (``bits`` does not apply: the learner masks), so
      that a learner lands every feature and every namespace cross on the slot Vowpal Wabbit's
      ``-q`` gives it. A listed namespace absent from the file is an empty column. A feature of
      a namespace not listed raises ``ValueError`` naming the line, or with
      ``other_namespaces="drop"`` is left out (scoring a file with a model's namespaces).

    Vowpal Wabbit's feature options, with its exact rules (see ``docs/readers.md``):

    * ``ignore="ab"`` (``--ignore``): the features of namespaces ``a`` and ``b`` are removed;
      ``keep="ab"`` (``--keep``): only theirs are kept. Namespaces are named by their letter,
      ``"default"`` for the default namespace; the two cannot be combined.
    * ``hash="all"`` (``--hash all``): all-digit names are hashed as strings too (by default a
      name like ``123`` is its number plus the namespace hash).
    * ``ngram=2`` (``--ngram 2``; ``"a3"`` for namespace ``a`` only, or a list) adds each
      namespace's 2-grams (up to N-grams) of consecutive features; ``skips=1`` (``--skips``)
      lets a gram skip up to that many features.

    A NUL byte right after a number (``x:0.7\\0``) ends the line's features there, as in
    Vowpal Wabbit.

    >>> import tempfile, pathlib, polars_poly as pp
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "train.vw"
    >>> _ = path.write_text("1 |Animal cat |Food fish\\n-1 |Animal cow |Food fish\\n")
    >>> frame = pp.read_vw(path, namespaces="AF")
    >>> frame.columns
    ['label', 'weight', 'base', 'tag', 'A', 'F']
    >>> model = pp.SGDClassifier(loss="logistic", interactions=[("A", "F")], progress=False)
    >>> model.fit(frame).namespaces_  # label and importance weights used as vw uses them
    ['A', 'F']
    >>> pp.read_vw(path, namespaces="auto", ignore="F").columns
    ['label', 'weight', 'base', 'tag', 'A']
    """
    options = _vw_options(
        path, bits, seed, namespaces, other_namespaces, ignore, keep, hash, ngram, skips
    )
    return _read("vw", path, options)


def iter_vw(
    path: PathLike,
    *,
    bits: int = 18,
    seed: int = 0,
    batch_size: int = 100_000,
    namespaces: Namespaces = None,
    other_namespaces: OtherNamespaces = "error",
    ignore: NamespaceLetters = None,
    keep: NamespaceLetters = None,
    hash: HashMode = "strings",
    ngram: GramSpec = None,
    skips: GramSpec = None,
) -> Iterator[pl.DataFrame]:
    """Reads a Vowpal Wabbit file in DataFrames of at most ``batch_size`` rows (columns and
    options as :func:`read_vw`)."""
    options = _vw_options(
        path, bits, seed, namespaces, other_namespaces, ignore, keep, hash, ngram, skips
    )
    return _iter("vw", path, batch_size, options)


def scan_vw(
    path: PathLike,
    *,
    bits: int = 18,
    seed: int = 0,
    batch_size: int = 100_000,
    namespaces: Namespaces = None,
    other_namespaces: OtherNamespaces = "error",
    ignore: NamespaceLetters = None,
    keep: NamespaceLetters = None,
    hash: HashMode = "strings",
    ngram: GramSpec = None,
    skips: GramSpec = None,
) -> pl.LazyFrame:
    """A LazyFrame over a Vowpal Wabbit file that is read in batches when the query runs
    (columns and options as :func:`read_vw`; with ``namespaces="auto"`` the whole file is
    scanned once for its namespace letters, without hashing or parsing numbers)."""
    options = _vw_options(
        path, bits, seed, namespaces, other_namespaces, ignore, keep, hash, ngram, skips
    )
    frame = _scan("vw", path, batch_size, options)
    if options.get("namespaces") is not None:
        _remember_vw_scan(frame, os.fspath(path), options, batch_size)
    return frame


# The LazyFrames scan_vw made, by id (LazyFrames cannot be hashed), so that fitting one as it
# is learns the file in the engine end to end; any query on one is a new frame, read as frames.
_VW_SCANS: dict[int, tuple[weakref.ref[pl.LazyFrame], str, dict[str, Any], int]] = {}


def _remember_vw_scan(
    frame: pl.LazyFrame, path: str, options: dict[str, Any], batch_size: int
) -> None:
    key = id(frame)
    _VW_SCANS[key] = (weakref.ref(frame), path, options, batch_size)
    weakref.finalize(frame, _VW_SCANS.pop, key, None)


def vw_scan_source(frame: Any) -> tuple[str, dict[str, Any], int] | None:
    """(path, reader options, batch size) of a LazyFrame that :func:`scan_vw` returned with
    namespace columns, untouched since; ``None`` for any other frame."""
    entry = _VW_SCANS.get(id(frame))
    if entry is None or entry[0]() is not frame:
        return None
    return entry[1], entry[2], entry[3]
