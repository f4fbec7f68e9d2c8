"""Whether the weight table holds the model's features without many of them sharing a slot.

A hashed model of ``2**bits`` slots and n features gives about ``1 - exp(-n / 2**bits)`` of its
features a slot that another feature shares (the engine's ``table_load`` estimates it: the share
of slots in use, or of a growing table's slots holding a feature's state). A few percent costs
nothing measurable; beyond that the shared weights blur what the features say: on eat-rate
(about a million animal x food crosses) a fixed ``bits=18`` reached test logloss 0.65 against
0.17 at ``bits=24``. A growing table (``bits=None``, the default) grows before that; a fit that
ends with more than ``SATURATED`` of the features sharing slots in a fixed table, or in a growing
one at its ``max_bits``, says so, with the setting that would bring it under ``COMFORTABLE``.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path
from types import FrameType

_PACKAGE = str(Path(__file__).resolve().parent.parent)

SATURATED = 0.10
COMFORTABLE = 0.05


class TableSaturationWarning(UserWarning):
    """A fit ended with many of the model's features sharing weight slots (see ``bits``)."""


def features_in(load: float, bits: int) -> float:
    """The number of distinct features a table of ``2**bits`` slots holds when ``load`` of its
    slots are in use (the inverse of ``load = 1 - exp(-n / 2**bits)``)."""
    slots = 2.0**bits
    return -slots * math.log1p(-min(load, 1.0 - 1.0 / slots))


def bits_for(features: float, share: float = COMFORTABLE) -> int:
    """The fewest bits for which ``features`` share slots at most ``share`` of the time."""
    return max(1, math.ceil(math.log2(features / -math.log1p(-share))))


def warn_if_saturated(
    estimator: str, load: float, bits: int, bytes_per_slot: int, growing: bool = False
) -> None:
    """Warns when more than ``SATURATED`` of the features share a slot (``load``: of those seen
    since a growing table last grew). ``growing``: the table grew to its ``max_bits``, which
    is then the setting to raise."""
    if load <= SATURATED:
        return
    features = features_in(load, bits)
    wanted = bits_for(features)
    size = (2**wanted) * bytes_per_slot
    table = f"{size / 2**20:,.0f} MiB" if size >= 2**20 else f"{size / 2**10:,.0f} KiB"
    setting = "max_bits" if growing else "bits"
    grew = f"grew to its largest size (max_bits={bits}) and " if growing else f"(bits={bits}) "
    warnings.warn(
        f"{estimator}: the weight table {grew}is {load:.0%} full: about {load:.0%} of "
        f"the model's ~{features:,.0f} features share a weight with another feature, which "
        f"blurs what they say. {setting}={wanted} would bring that under {COMFORTABLE:.0%} "
        f"(a table of {table}).",
        TableSaturationWarning,
        stacklevel=_first_frame_outside_the_package(),
    )


def _first_frame_outside_the_package() -> int:
    """The ``stacklevel`` of the user's call (``fit``, ``partial_fit`` and the paths to this
    warning have different depths)."""
    level = 1
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    return level
