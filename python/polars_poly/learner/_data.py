"""What the estimators' layers share: the expansion names, one batch of examples (``_Data``),
the private state ``fit`` sets, and small conversions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from polars_poly import _internal
from polars_poly._internal import Learner
from polars_poly._lazy import np, pl
from polars_poly.apple import Apple
from polars_poly.field_apple import FieldApple
from polars_poly.multiclass import OneAgainstAll
from polars_poly.ranking_race import RankingRace

if TYPE_CHECKING:
    import numpy.typing as npt

Expansion = Literal["linear", "quadratic", "cubic", "apple"] | Apple | FieldApple
_DEGREE = {"linear": 1, "quadratic": 2, "cubic": 3}
_POLYNOMIAL: dict[int, Expansion] = {1: "linear", 2: "quadratic", 3: "cubic"}
_NAMES = {"losses": ", ".join(repr(n) for n in _internal.LOSSES)}


@dataclass
class _Data:
    """Features (one sparse Series per namespace), labels and weights of one batch."""

    features: list[pl.Series]
    labels: npt.NDArray[np.float64] | None
    weights: npt.NDArray[np.float64] | None

    def __len__(self) -> int:
        return len(self.features[0]) if self.features else 0

    def slice(self, start: int, length: int) -> _Data:
        return _Data(
            [s.slice(start, length) for s in self.features],
            None if self.labels is None else self.labels[start : start + length],
            None if self.weights is None else self.weights[start : start + length],
        )

    def contiguous(self) -> _Data:
        """The examples with every feature column in one chunk (a copy of those in several)."""
        features = [s.rechunk() if s.n_chunks() > 1 else s for s in self.features]
        return _Data(features, self.labels, self.weights)

    def take(self, rows: npt.NDArray[np.int64]) -> _Data:
        """The examples at ``rows``, in that order."""
        return _Data(
            [s.gather(rows) for s in self.features],
            None if self.labels is None else self.labels[rows],
            None if self.weights is None else self.weights[rows],
        )


def _at_doublings(batches: Iterable[_Data], seen: int) -> Iterator[_Data]:
    """``batches`` cut where the count of examples (``seen`` before the first) reaches a power
    of two, where ``history_`` takes its rows; learning is example by example, so the cuts
    change nothing else."""
    for batch in batches:
        lengths = {len(a) for a in (batch.labels, batch.weights) if a is not None}
        if lengths - {len(batch)}:
            yield batch  # whole: the engine names the mismatch in the caller's numbers
            continue
        start = 0
        while start < len(batch):
            point = 1 << seen.bit_length()  # the next power of two above seen
            length = min(len(batch) - start, point - seen)
            yield batch if length == len(batch) else batch.slice(start, length)
            start += length
            seen += length


class _FitState:
    """Types of the private state ``fit`` sets (not options: a plain base, not dataclass
    fields)."""

    # A RankingRace (apple's ranking="auto") inside fit, which keeps its winner, and between
    # partial_fit calls.
    _learner: Learner | OneAgainstAll | RankingRace
    _rows_seen: int
    # The numeric ones among feature_columns_: together one namespace, after the others.
    _numeric_columns: list[str]
    _categorical_columns: dict[str, str]
    _width: int | None


def _name_crosses(interactions: Any) -> list[tuple[str, ...]]:
    """``interactions`` as a list of crosses (tuples of two or more names); a ``TypeError`` for
    any other shape."""

    def is_cross(cross: Any) -> bool:
        return (
            isinstance(cross, tuple | list)
            and len(cross) >= 2
            and all(isinstance(name, str) for name in cross)
        )

    if interactions is None:
        return []
    if (
        not isinstance(interactions, Sequence)
        or isinstance(interactions, str)
        or not all(is_cross(c) for c in interactions)
    ):
        raise TypeError(
            "interactions must be a list of crosses, each a tuple of two or more feature column "
            f"names, e.g. [('a', 'b'), ('a', 'b', 'c')]; got {interactions!r}"
        )
    return [tuple(cross) for cross in interactions]


def _weights(weights: npt.NDArray[np.float64] | None) -> pl.Series | None:
    return None if weights is None else pl.Series(weights)


# Options only the Python layer keeps (the rest the engine stores); version-2 files (polars-poly
# 0.1) named ``n_iter_no_change`` ``early_stopping``.
_LEGACY_NAMES = {"early_stopping": "n_iter_no_change"}


def _has_field_crosses(learner: Learner | OneAgainstAll) -> bool:
    """Whether the engine model grows crosses of feature columns."""
    return str(learner.options()["features"]["kind"]) in ("field_apple", "apple_fields")


def _shuffled_rows(n: int, seed: int | None) -> npt.NDArray[np.int64]:
    """The order ``shuffle`` learns ``n`` in-memory rows in (seed 0 when None): the engine's,
    whose ``fit`` (several passes, averaging) takes its first pass in the same order."""
    return _internal.shuffled_rows(n, 0 if seed is None else seed).to_numpy().astype(np.int64)


def _name_original_rows(err: Exception, order: npt.NDArray[np.int64], first: int) -> None:
    """``err``'s "row N" (N counted from ``first`` in the shuffled ``order``) made the row the
    user gave, so that a bad row is named where it is in their data."""

    def original(match: re.Match[str]) -> str:
        at = int(match.group(1)) - first
        return f"row {first + int(order[at])}" if 0 <= at < len(order) else match.group(0)

    err.args = tuple(
        re.sub(r"\brow (\d+)", original, a) if isinstance(a, str) else a for a in err.args
    )
