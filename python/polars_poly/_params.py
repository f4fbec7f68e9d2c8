"""One typed description of each option set: a dataclass field per option.

An estimator (or a parameter object such as :class:`polars_poly.Apple`) declares its options as
fields made by :func:`option`: the annotation is the type, the default is the default, and the
metadata holds the documentation, whether the Rust engine receives the option (``engine``) and,
for options only the Python layer uses, their constraint (``check``). From that one place follow:

- ``__init__`` (the dataclass's: it only stores the parameters, as scikit-learn requires), so
  ``get_params``, ``set_params`` and ``clone`` see exactly these names;
- the static types (mypy and IDEs read the dataclass);
- the "Parameters" section of the docstring (:func:`documented`), with each default;
- the checks (:func:`engine_options`, :func:`check_options`): types for every option (a
  ``TypeError`` naming it), the constraint of Python-only options here, and the ranges and names
  of engine options once, in Rust, whose messages use the same names. The names a registry
  offers (losses, rankings, schedules) come from the engine itself (``polars_poly.LOSSES``, ...).
"""

from __future__ import annotations

import dataclasses
import numbers
import re
import sys
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Check = Callable[[Any], str | None]


def option(
    default: Any,
    doc: str,
    *,
    engine: bool | str = False,
    fit: bool = False,
    check: Check | None = None,
    accepted: str | None = None,
    positional: bool = False,
) -> Any:
    """A documented option (see the module docs). ``engine``: the engine receives it (under this
    name when a string) when it builds the model; ``fit``: the engine's ``fit`` receives it, by
    this name, in its ``FitOptions`` (:func:`fit_options`); ``check(value)`` returns what is
    wrong with a value (``None`` when it is fine); ``accepted`` states the values the engine
    accepts, for the docs, where the engine checks (a test holds the engine's errors to it);
    ``positional`` options may also be given by position (before the keyword-only ones)."""
    return dataclasses.field(
        default=default,
        metadata={"doc": doc, "engine": engine, "fit": fit, "check": check, "accepted": accepted},
        kw_only=not positional,
    )


def accepted_values(field: dataclasses.Field[Any]) -> str | None:
    """What an option accepts, as the docs say it: its ``accepted`` text, else what its check
    asks of a value no check accepts."""
    if field.metadata.get("accepted"):
        return str(field.metadata["accepted"])
    check = field.metadata.get("check")
    return None if check is None else check(object())


# The engine stores integer options in 64 bits; larger values are refused here, by name.
INT_MAX = 2**63 - 1


def at_least(low: int, high: int = INT_MAX, *, optional: bool = False) -> Check:
    """An integer in ``[low, high]`` (or ``None`` when ``optional``)."""
    wanted = f"an integer >= {low}" if high == INT_MAX else f"an integer in [{low}, {high}]"

    def check(value: Any) -> str | None:
        if optional and value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            return wanted + (" or None" if optional else "")
        if high == INT_MAX and int(value) > INT_MAX:
            return f"an integer in [{low}, 2**63 - 1]"
        if not low <= int(value) <= high:
            return wanted + (" or None" if optional else "")
        return None

    return check


def between(low: float, high: float) -> Check:
    """A number in ``[low, high]``."""

    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return f"a number in [{low:g}, {high:g}]"
        if not low <= float(value) <= high:
            return f"a number in [{low:g}, {high:g}]"
        return None

    return check


def column_names(value: Any) -> str | None:
    """A column name, a sequence of column names, or ``None``."""
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, Sequence) and all(isinstance(name, str) for name in value):
        return None
    return "a column name, a list of column names or None"


def open_interval(low: float, high: float) -> Check:
    """A number in ``(low, high)``."""

    def check(value: Any) -> str | None:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            if low < float(value) < high:
                return None
        return f"a number in ({low:g}, {high:g})"

    return check


def one_of(*allowed: Any) -> Check:
    def check(value: Any) -> str | None:
        return None if value in allowed else f"one of {allowed!r}"

    return check


def fields(obj: Any) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(obj)


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def integer(name: str, value: Any) -> int:
    """``value`` as an int; a ``TypeError`` naming the option ``name`` otherwise (for the
    functions' options, checked as the estimators' are)."""
    return int(_coerce(name, value, int))


def boolean(name: str, value: Any) -> bool:
    """``value`` as a bool (True, False or a numpy bool); a ``TypeError`` naming the option
    ``name`` otherwise ("yes" or None are not taken for their truth value)."""
    return bool(_coerce(name, value, bool))


def _is_numpy_bool(value: Any) -> bool:
    """Whether ``value`` is a numpy bool, without importing numpy: none exists before it is."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.bool_)


def _coerce(name: str, value: Any, kind: Any) -> Any:
    """``value`` as the plain Python type ``kind`` (int, float, bool, str); a ``TypeError``
    naming the option otherwise."""
    if kind is bool:
        if isinstance(value, bool) or _is_numpy_bool(value):
            return bool(value)
        raise TypeError(f"{name} must be True or False, got {value!r}")
    if kind is int:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            if not -INT_MAX - 1 <= int(value) <= INT_MAX:
                raise ValueError(f"{name} must be an integer in [-2**63, 2**63 - 1], got {value}")
            return int(value)
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if kind is float:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
        raise TypeError(f"{name} must be a number, got {value!r}")
    if kind is str:
        if isinstance(value, str):
            return value
        raise TypeError(f"{name} must be a string, got {value!r}")
    members = typing.get_args(kind)
    if len(members) == 2 and type(None) in members:  # ``T | None``
        plain = members[0] if members[1] is type(None) else members[1]
        return None if value is None else _coerce(name, value, plain)
    return value


def engine_options(obj: Any) -> dict[str, Any]:
    """The options the engine receives, typed (see the module docs)."""
    hints = _hints(type(obj))
    options = {}
    for f in fields(obj):
        engine = f.metadata.get("engine")
        if engine:
            name = engine if isinstance(engine, str) else f.name
            options[name] = _coerce(f.name, getattr(obj, f.name), hints[f.name])
    return options


def fit_options(obj: Any) -> dict[str, Any]:
    """The options the engine's ``fit`` receives, by name, typed (its ``FitOptions``)."""
    hints = _hints(type(obj))
    return {
        f.name: _coerce(f.name, getattr(obj, f.name), hints[f.name])
        for f in fields(obj)
        if f.metadata.get("fit")
    }


def from_engine(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    """The parameters of ``cls`` the engine reports in ``options`` (a loaded model's)."""
    params = {}
    for f in dataclasses.fields(cls):
        engine = f.metadata.get("engine")
        if engine:
            params[f.name] = options[engine if isinstance(engine, str) else f.name]
    return params


def nested_settings(
    obj: Any, params: dict[str, Any], name: str, word: str, make: Callable[[], Any]
) -> dict[str, Any]:
    """``set_params``' parameters when a nested setting (``name__x``, as ``GridSearchCV`` sets
    them) meets the option ``name`` given as the string ``word``: the string first becomes the
    object it stands for, ``make()`` (a string has no settings)."""
    if any(key.startswith(f"{name}__") for key in params):
        if params.get(name) == word:
            return {**params, name: make()}
        if name not in params and getattr(obj, name) == word:
            setattr(obj, name, make())
    return params


def check_options(obj: Any) -> None:
    """Checks every option's type (a ``TypeError`` naming it) and constraint (a ``ValueError``
    naming it); the engine checks its options' ranges again, in the same words."""
    hints = _hints(type(obj))
    for f in fields(obj):
        value = getattr(obj, f.name)
        _coerce(f.name, value, hints[f.name])
        check = f.metadata.get("check")
        if check is not None and (problem := check(value)) is not None:
            raise ValueError(f"{f.name} must be {problem}, got {value!r}")


def _type_name(kind: Any) -> str:
    """``kind`` as the docs show it: ``int``, ``Sequence[str] | None``, ``Union[..., Apple]``."""
    if isinstance(kind, type):
        return kind.__name__
    return re.sub(r"\b(?:typing|collections\.abc|polars_poly(?:\.\w+)*)\.", "", str(kind))


def parameters_section(cls: type, names: dict[str, Any]) -> str:
    """The numpydoc "Parameters" section of ``cls``'s options; ``{name}`` placeholders in the
    docs are filled from ``names`` (the engine's registries)."""
    hints = _hints(cls)
    lines = ["Parameters", "----------"]
    for f in dataclasses.fields(cls):
        lines.append(f"{f.name} : {_type_name(hints[f.name])}, default={f.default!r}")
        doc = f.metadata["doc"].format(**names)
        lines.extend(f"    {line}" for line in doc.splitlines())
        accepted = accepted_values(f)
        if accepted:
            lines.append(f"    Accepted: {accepted}.")
    return "\n".join(lines)


def documented(names: dict[str, Any]) -> Callable[[type[T]], type[T]]:
    """Makes ``cls`` a parameter dataclass and writes its "Parameters" section where its
    docstring has the line ``[parameters]``."""

    def decorate(cls: type[T]) -> type[T]:
        cls = dataclasses.dataclass(kw_only=True, eq=False, repr=False)(cls)
        doc = cls.__doc__ or ""
        indent = " " * 4
        section = "\n".join(
            (indent + line) if line else line for line in parameters_section(cls, names).split("\n")
        )
        cls.__doc__ = doc.replace(f"{indent}[parameters]", section)
        return cls

    return decorate
