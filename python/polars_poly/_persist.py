"""One persistence mechanism for every estimator: the engine's model file (versioned,
checksummed, one section per component), with the estimator's own state (its Python-only
options and fitted column layout, never what the engine stores) as text beside. ``save``,
``load``, :func:`polars_poly.load_model` and pickling all go through it.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable
from typing import Any, ClassVar

from polars_poly import _internal
from polars_poly._lazy import pl
from polars_poly._params import check_options

# Largest model file a scoring expression embeds when the model was never saved (bytes). Polars
# copies the literal for every batch of a query: a streaming eat-rate query took 1.05-1.07x the
# handle's time with a 1.6-1.9 MiB file carried, 1.14x with 5.2 MiB and 1.55x with 17.9 MiB when
# this limit was chosen (ad45126; benches/suite/carried_model.py measures the sizes it allows).
EMBED_LIMIT = 2 * 2**20


# A check of one stored value: what it must be when it is not that, else None.
StateCheck = Callable[[Any], str | None]


def kind_of(*kinds: type, what: str) -> StateCheck:
    """A value of one of ``kinds`` (``bool`` only when listed)."""

    def check(value: Any) -> str | None:
        plain = isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))
        finite = not isinstance(value, float) or math.isfinite(value)
        return None if plain and finite else what

    return check


def optional(check: StateCheck) -> StateCheck:
    return lambda value: None if value is None else check(value)


def list_of(item: StateCheck, what: str, *, at_least: int = 0) -> StateCheck:
    def check(value: Any) -> str | None:
        ok = isinstance(value, list) and len(value) >= at_least
        return None if ok and all(item(v) is None for v in value) else what

    return check


def dict_of(item: StateCheck, what: str) -> StateCheck:
    def check(value: Any) -> str | None:
        ok = isinstance(value, dict) and all(isinstance(k, str) for k in value)
        return None if ok and all(item(v) is None for v in value.values()) else what

    return check


NAME = kind_of(str, what="a string")
NAMES = list_of(NAME, "a list of column names")
_INTEGER = kind_of(int, what="")


# Counts and labels the engine and numpy hold in 64 bits (signed: within both i64 and u64).
_INT64 = (-(2**63), 2**63 - 1)


def plain(value: Any) -> Any:
    """A numpy scalar option (a seed from ``np.arange``, a ``np.bool_``) as the Python number or
    bool it holds, which the stored JSON can hold; any other value as it is."""
    # By its module, not isinstance: saving from the command line imports no numpy.
    numpy_scalar = type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0
    return value.item() if numpy_scalar else value


def COUNT(value: Any) -> str | None:  # noqa: N802 - a check, named as the others
    ok = _INTEGER(value) is None and 0 <= value <= _INT64[1]
    return None if ok else "a non-negative integer below 2**63"


NUMBER = kind_of(int, float, what="a finite number")
# A class label as JSON keeps it: a string, a number or a boolean; two or more, all distinct.
_LABELS = list_of(kind_of(str, int, float, bool, what=""), "", at_least=2)


def _label_kind(label: Any) -> str:
    """A stored label's kind: numpy holds classes of one kind in one array (an integer
    beyond 64 bits, or a string beside a number, would make it an object array)."""
    if isinstance(label, bool | str):
        return type(label).__name__
    return "number" if isinstance(label, float) or _INT64[0] <= label <= _INT64[1] else "big"


def CLASSES(value: Any) -> str | None:  # noqa: N802 - a check, named as the others
    # Labels are looked up in the classes by bisection: they are stored sorted, as a fit
    # leaves them, so that each compares greater than the one before.
    ok = (
        _LABELS(value) is None
        and len({_label_kind(label) for label in value}) == 1
        and _label_kind(value[0]) != "big"
        and all(a < b for a, b in zip(value, value[1:], strict=False))
    )
    return None if ok else "a sorted list of two or more distinct labels of one type within 64 bits"


def check_state(name: str, state: dict[str, Any], schema: dict[str, StateCheck]) -> None:
    """``state`` (a model file's estimator text) holds what ``schema`` says of each key it has:
    a ``ValueError`` naming the first damaged key otherwise (never a TypeError, KeyError or
    IndexError later, at predict or partial_fit)."""
    for key, check in schema.items():
        if key in state:
            value = state[key]
            problem = check(value)
            if problem is not None:
                shown = repr(value)
                shown = shown if len(shown) <= 60 else shown[:57] + "..."
                raise ValueError(
                    f"the model file's {name} metadata is damaged: {key!r} must be {problem}, "
                    f"got {shown}"
                )


class Persistent:
    """``save`` / ``load`` / pickling for an estimator whose fitted engine model is in the
    attribute named by ``_model_attribute``; ``_stored_state`` checks the estimator text it
    writes beside the model (keys absent from older files are not required)."""

    _model_attribute: str
    _stored_state: ClassVar[dict[str, StateCheck]]
    # The estimators a model file may name, by class name: every public subclass registers
    # itself when its module is imported (so this module imports none of them).
    _registry: ClassVar[dict[str, type[Persistent]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("polars_poly.") and not cls.__name__.startswith("_"):
            Persistent._registry[cls.__name__] = cls

    def _fitted_model(self) -> Any:
        raise NotImplementedError

    def _estimator_text(self) -> str:
        raise NotImplementedError

    @classmethod
    def _from_model(cls, model: Any, state: dict[str, Any]) -> Any:
        raise NotImplementedError

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the fitted model to ``path`` in polars-poly's versioned, checksummed model
        format (docs/model_file.md). Scoring expressions built from the model afterwards read
        it back from this file if the model object is gone when they run."""
        self._fitted_model().save(file_to_write(path), self._estimator_text())
        self._source = file_source(path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Any:
        """Reads a model written by ``save``; training can continue with ``partial_fit``. A
        file that is not one, or is damaged, raises ``ValueError``; a missing file
        ``FileNotFoundError``; a file of another estimator ``TypeError``."""
        model, text = _internal.load_model(file_to_read(path))
        estimator = estimator_from(model, text, expected=cls)
        estimator._source = file_source(path)
        return estimator

    def _carried(self) -> tuple[list[pl.Expr], dict[str, Any]]:
        """What a scoring expression carries, besides the model's handle, to score when the
        model object is gone or in another process: the file the model was read from or saved
        to, unless it learned since (plugin kwargs); else, for a model file of at most
        ``EMBED_LIMIT`` bytes, the file's bytes as a literal last input (built once per state
        of the model). A larger model never saved carries nothing: its expression needs the
        model object alive, and says so."""
        source = getattr(self, "_source", None)
        if source is not None:
            return [], {"source": source[0], "checksum": source[1]}
        embedded = self.__dict__.get("_embedded")
        if embedded is None:
            model = self._fitted_model()
            if int(model.nbytes) > EMBED_LIMIT:
                return [], {}
            embedded = pl.lit(model.to_bytes("{}"), dtype=pl.Binary)
            self.__dict__["_embedded"] = embedded
        return [embedded], {"embedded": True}

    def _learned(self) -> None:
        """The model changed: its file (if any) no longer holds it, nor its embedded bytes."""
        self.__dict__.pop("_source", None)
        self.__dict__.pop("_embedded", None)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_embedded", None)
        model = state.pop(self._model_attribute, None)
        if model is not None:
            state["_model_bytes"] = model.to_bytes(self._estimator_text())
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        data = state.pop("_model_bytes", None)
        self.__dict__.update(state)
        if data is not None:
            model, text = _internal.model_from_bytes(data)
            setattr(self, self._model_attribute, engine_model(model, text))


def estimator_from(model: Any, text: str, expected: type | None = None) -> Any:
    """The estimator a model file holds, from its engine model and estimator text."""
    try:
        state = json.loads(text)
        name = state["estimator"]
        params = state["params"]
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError("the model file has no polars-poly estimator metadata") from err
    classes = Persistent._registry
    if not isinstance(name, str) or name not in classes:
        if expected is not None and isinstance(name, str) and name.isidentifier():
            # Another estimator, whose module this process has not imported.
            raise TypeError(f"the model file holds a {name}, not a {expected.__name__}")
        raise ValueError(f"the model file holds an unknown estimator {name!r}")
    cls = classes[name]
    if expected is not None and not issubclass(cls, expected):
        raise TypeError(f"the model file holds a {name}, not a {expected.__name__}")
    if not isinstance(params, dict):
        raise ValueError(f"the model file's {name} metadata is damaged: its params are {params!r}")
    check_state(name, state, cls._stored_state)
    try:
        estimator = cls._from_model(engine_model(model, text), state)
        # The options as fit checks them: a damaged one fails here, not in a later call.
        check_options(estimator)
        return estimator
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        # The engine checked its own sections; this is the Python layer's text, damaged.
        raise ValueError(
            f"the model file's {name} metadata is damaged ({type(err).__name__}: {err})"
        ) from err


def engine_model(model: Any, text: str = "{}") -> Any:
    """The engine model a file holds as the estimator keeps it (a one-against-all file reads
    as a list of its classes' learners, with its progressive error counts from the file's
    estimator text: a pickled model, moved between Dask workers too, keeps counting them)."""
    if isinstance(model, list):
        from polars_poly.multiclass import OneAgainstAll

        try:
            errors, weight = json.loads(text).get("multiclass_errors", (0.0, 0.0))
        except (ValueError, TypeError, AttributeError):
            errors, weight = 0.0, 0.0  # no or damaged text: counting starts again
        return OneAgainstAll(model, (float(errors), float(weight)))
    return model


def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, for messages (``a FIFO``, ...)."""
    kinds = {
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    return next((name for test, name in kinds.items() if test(mode)), "not a regular file")


def file_to_read(path: str | os.PathLike[str]) -> str:
    """``path`` when it is a regular file: a model file is read whole and then again for its
    checksum, which a FIFO or a device cannot give (reading one would block or never end)."""
    name = os.fspath(path)
    mode = os.stat(name).st_mode  # FileNotFoundError names the path
    if not stat.S_ISREG(mode):
        raise ValueError(f"{name} is {file_kind(mode)}, not a model file")
    return name


def file_to_write(path: str | os.PathLike[str]) -> str:
    """Where ``save`` writes ``path``'s new file: through a symbolic link, its target (the link
    stays a link); a path that exists must be a regular file (``save`` replaces a file whole,
    which would turn a device or FIFO into a file and leave the device unwritten)."""
    name = os.path.realpath(os.fspath(path))
    if os.path.lexists(name):
        mode = os.stat(name).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"{os.fspath(path)} is {file_kind(mode)}: save writes a regular file")
    return name


def file_source(path: str | os.PathLike[str]) -> tuple[str, int]:
    """A model file's absolute path and checksum (its last 4 bytes, little-endian)."""
    absolute = os.path.abspath(os.fspath(path))
    with open(absolute, "rb") as file:
        file.seek(-4, os.SEEK_END)
        return absolute, int.from_bytes(file.read(4), "little")
