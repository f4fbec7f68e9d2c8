"""One training call at a time per estimator: a second thread that calls ``fit`` or
``partial_fit`` on an estimator another thread is training raises at once, instead of both
writing one model (which gives a model equal to neither serial fit, or a ``KeyError``).
Estimators stay picklable: the estimators being trained are listed here, not marked on them."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

_GUARD = threading.Lock()
_TRAINING: set[int] = set()

Method = TypeVar("Method", bound=Callable[..., Any])


def one_call_at_a_time(method: Method) -> Method:
    """Wraps a training method of an estimator (see the module docs)."""

    @functools.wraps(method)
    def exclusive(self: Any, *args: Any, **kwargs: Any) -> Any:
        key = id(self)
        with _GUARD:
            if key in _TRAINING:
                raise RuntimeError(
                    f"{type(self).__name__}.{method.__name__}: another thread is training this "
                    "estimator; train one estimator per thread (sklearn.base.clone makes copies)"
                )
            _TRAINING.add(key)
        try:
            return method(self, *args, **kwargs)
        finally:
            with _GUARD:
                _TRAINING.discard(key)

    return exclusive  # type: ignore[return-value]
