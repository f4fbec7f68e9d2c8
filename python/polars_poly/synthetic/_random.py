"""Counter-based randomness: every random quantity of row ``i`` is the splitmix64 finalizer
of ``(stream key, i, ...)``, the key derived from the seed and the stream's name, so a row
is the same whichever chunk generates it; the planted structure's generator; and the
draws the generators share (uniforms, normals, labels of a logistic link, calibration)."""

from __future__ import annotations

import math
import zlib

import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MASK32 = np.uint64(0xFFFFFFFF)


def _mix(x: U64) -> U64:
    """The splitmix64 finalizer, elementwise (a bijection of 64-bit words)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def _key(seed: int, stream: str) -> np.uint64:
    """The 64-bit key of a named random stream of a seed."""
    if not isinstance(seed, int | np.integer) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    sequence = np.random.SeedSequence([int(seed), zlib.crc32(stream.encode())])
    key: np.uint64 = sequence.generate_state(1, np.uint64)[0]
    return key


def _rng(seed: int, stream: str) -> np.random.Generator:
    """A numpy generator for the planted structure of a seed (drawn once, not per row)."""
    _key(seed, stream)  # validates the seed
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(stream.encode())]))


def _hash(key: np.uint64, first: U64, *more: U64) -> U64:
    """64 random bits for each counter tuple ``(first[i], *more[i])`` of the stream ``key``."""
    h = _mix(first * _GOLDEN + key)
    for counter in more:
        h = _mix(h + counter * _GOLDEN)
    return h


def _uniform(bits: U64) -> F64:
    """Uniform [0, 1) floats from random bits (the top 53)."""
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _below(bits: U64, n: int) -> I64:
    """Integers uniform in ``[0, n)`` from random bits (the modulo bias is below 2**-40)."""
    return (bits % np.uint64(n)).astype(np.int64)


def _normal(bits: U64) -> F64:
    """Standard normal floats from random bits (Box-Muller on two derived uniforms)."""
    u1 = ((bits >> np.uint64(11)) + np.uint64(1)).astype(np.float64) * 2.0**-53
    u2 = _uniform(_mix(bits ^ _GOLDEN))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * math.pi * u2)


def _rows(offset: int, n_rows: int) -> U64:
    if n_rows < 0 or offset < 0:
        raise ValueError(f"n_rows and offset must be non-negative, got {n_rows} and {offset}")
    return np.arange(offset, offset + n_rows, dtype=np.uint64)


def _sigmoid(z: F64) -> F64:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _labels(margin: F64, bits: U64, noise: float) -> tuple[F64, F64]:
    """+1/-1 labels drawn from ``P(+1) = sigmoid(margin / noise)`` (sign of margin if noise 0)."""
    if noise > 0:
        p = _sigmoid(margin / noise)
    else:
        p = (margin > 0).astype(np.float64)
    return np.where(_uniform(bits) < p, 1.0, -1.0), p


def _calibrate(margin: F64, rate: float, noise: float) -> float:
    """The intercept ``b`` with ``mean(sigmoid((margin + b) / noise)) == rate`` (bisection)."""
    if noise <= 0:
        return -float(np.quantile(margin, 1.0 - rate))
    lo, hi = -50.0 * noise - float(margin.max()), 50.0 * noise - float(margin.min())
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if float(_sigmoid((margin + mid) / noise).mean()) < rate:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _check_positive(**values: float) -> None:
    for name, value in values.items():
        if not value > 0:
            raise ValueError(f"{name} must be positive, got {value!r}")
