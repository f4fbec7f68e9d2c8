"""Click-like hashed categorical fields with a planted logistic model: :func:`click`, its
planted model :func:`click_planted` (:class:`ClickPlanted`, :class:`FieldCross`,
:class:`ValueCross`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from polars_poly.synthetic._random import (
    _MASK32,
    F64,
    I64,
    U64,
    _calibrate,
    _hash,
    _key,
    _labels,
    _normal,
    _rng,
    _rows,
    _uniform,
)


@dataclass(frozen=True)
class FieldCross:
    """A planted field-level cross: every pair of values of ``a`` and ``b`` has its own weight,
    ``scale`` times a standard normal drawn by hashing the pair. ``marginal`` says whether
    both fields also have main effects (if not, neither field says anything alone)."""

    a: str
    b: str
    scale: float
    marginal: bool


@dataclass(frozen=True)
class ValueCross:
    """A planted value-level cross: rows with ``a == value_a`` and ``b == value_b`` get
    ``weight`` added to their margin. ``rank_a`` and ``rank_b`` are the values' frequency
    ranks in their fields (0 the commonest)."""

    a: str
    value_a: str
    b: str
    value_b: str
    weight: float
    rank_a: int
    rank_b: int


@dataclass(frozen=True)
class TripleCross:
    """A planted cross of three fields: every triple of their values has its own weight. With
    ``pairs=False`` the weight is ``scale * u_a * u_b * u_c``, each ``u`` a hashed sign of the
    value centred and scaled to mean 0 and variance 1 under the field's value frequencies, so
    that no pair of the three fields (and no field) carries anything of it: only the triple
    does. With ``pairs=True`` it is ``scale * (n_ab + n_ac + n_bc + n_abc) / 2``, hashed
    standard normals of each pair of values and of the triple: crosses of two of the fields
    find most of it."""

    fields: tuple[str, str, str]
    scale: float
    pairs: bool


@dataclass(frozen=True)
class ClickPlanted:
    """The planted logistic model of :func:`click` for one seed and parameters.

    ``margin = intercept + sum of main effects + sum of field crosses + sum of value crosses``
    and ``P(label = +1) = sigmoid(margin)``. A main effect of field ``f`` gives each value its
    own weight, ``main_scale[f]`` times a standard normal drawn by hashing the value.

    Attributes
    ----------
    fields
        Field names, ``f00``, ``f01``, ...
    cardinalities
        Number of distinct values of each field.
    zipf
        Exponent of each field's value frequencies.
    main_scale
        Standard deviation of each field's main effects (0 for fields without them).
    field_crosses, value_crosses, triple_crosses
        The planted crosses.
    intercept
        Calibrated so that the mean of ``P(label = +1)`` is ``positive_rate``.
    positive_rate
        The target positive rate.
    """

    fields: tuple[str, ...]
    cardinalities: tuple[int, ...]
    zipf: tuple[float, ...]
    main_scale: tuple[float, ...]
    field_crosses: tuple[FieldCross, ...]
    value_crosses: tuple[ValueCross, ...]
    intercept: float
    positive_rate: float
    triple_crosses: tuple[TripleCross, ...] = ()

    @property
    def crossed_fields(self) -> list[tuple[str, str]]:
        """The field pairs of the field-level crosses."""
        return [(c.a, c.b) for c in self.field_crosses]

    @property
    def main_fields(self) -> list[str]:
        """The fields with main effects."""
        return [f for f, s in zip(self.fields, self.main_scale, strict=True) if s > 0]


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
# Ranges of the per-field Zipf exponents, main-effect scales and field-cross scales: chosen so
# that the true model scores AUC ~0.86 and a model without the crosses ~0.76 (docs/datasets.md).
_ZIPF = (0.9, 1.4)
_MAIN_SCALE = (0.1, 0.3)
_CROSS_SCALE = (0.5, 0.8)
_TRIPLE_SCALE = (0.8, 1.2)
_CARDINALITY_PATTERN = (10, 1_000, 100_000, 1_000_000, 100, 10_000)


def _permute32(x: U64, key: np.uint64) -> U64:
    """A keyed bijection of 32-bit words (xor, odd multiplications and xorshifts mod 2**32)."""
    k = np.uint64(int(key) & 0xFFFFFFFF)
    x = (x ^ k) & _MASK32
    x = (x * np.uint64(0x9E3779B1)) & _MASK32
    x = x ^ (x >> np.uint64(16))
    x = (x * np.uint64(0x85EBCA6B)) & _MASK32
    x = x ^ (x >> np.uint64(13))
    x = (x + np.uint64(int(key) >> 32)) & _MASK32
    x = (x * np.uint64(0xC2B2AE35)) & _MASK32
    return x ^ (x >> np.uint64(16))


def _hex8(x: U64) -> pa.Array:
    """32-bit words as 8-character lowercase hex strings (one Arrow string array)."""
    shifts = np.arange(28, -1, -4, dtype=np.uint64)
    chars = np.ascontiguousarray(_HEX[((x[:, None] >> shifts) & np.uint64(15)).astype(np.intp)])
    offsets = np.arange(0, 8 * len(x) + 1, 8, dtype=np.int32)
    return pa.StringArray.from_buffers(len(x), pa.py_buffer(offsets), pa.py_buffer(chars))


def _click_value_name(seed: int, field: int, ranks: I64) -> pa.Array:
    return _hex8(_permute32(ranks.astype(np.uint64), _key(seed, f"click/name/{field}")))


def _click_ranks(seed: int, stream: str, planted: ClickPlanted, rows: U64) -> list[I64]:
    """The value rank of every field for ``rows`` (a bounded power law, rank 0 the commonest)."""
    ranks = []
    for f, (k, s) in enumerate(zip(planted.cardinalities, planted.zipf, strict=True)):
        u = _uniform(_hash(_key(seed, f"{stream}/{f}"), rows))
        if abs(s - 1.0) < 1e-9:
            x = float(k + 1) ** u
        else:
            x = ((1.0 - u) + u * float(k + 1) ** (1.0 - s)) ** (1.0 / (1.0 - s))
        ranks.append(np.clip(np.floor(x).astype(np.int64) - 1, 0, k - 1))
    return ranks


def _rank_probabilities(cardinality: int, zipf: float) -> F64:
    """``P(rank = r)`` of :func:`_click_ranks`' bounded power law, ``r = 0 .. cardinality-1``."""
    edges = np.arange(1, cardinality + 2, dtype=np.float64)  # rank r is x in [r + 1, r + 2)
    top = float(cardinality + 1)
    if abs(zipf - 1.0) < 1e-9:
        cdf = np.log(edges) / np.log(top)
    else:
        cdf = (edges ** (1.0 - zipf) - 1.0) / (top ** (1.0 - zipf) - 1.0)
    probabilities: F64 = np.diff(np.minimum(cdf, 1.0))
    probabilities[-1] += 1.0 - probabilities.sum()  # x = k + 1 exactly lands in the last rank
    return probabilities


def _centred_signs(seed: int, t: int, planted: ClickPlanted, field: int, ranks: I64) -> F64:
    """The pure triple cross ``t``'s factor of ``field``: a hashed sign per value, centred and
    scaled to mean 0 and variance 1 under the field's value frequencies."""
    key = _key(seed, f"click/triple/{t}/{field}")
    every = np.arange(planted.cardinalities[field], dtype=np.uint64)
    signs = np.where(_hash(key, every) >> np.uint64(63) == 0, 1.0, -1.0)
    p = _rank_probabilities(planted.cardinalities[field], planted.zipf[field])
    mean = float(p @ signs)
    spread = np.sqrt(max(1.0 - mean * mean, 1e-12))
    centred: F64 = (signs[ranks] - mean) / spread
    return centred


def _triple_margin(seed: int, t: int, planted: ClickPlanted, ranks: list[I64]) -> F64:
    """The margin triple cross ``t`` adds to rows of value ranks ``ranks`` (one per field)."""
    cross = planted.triple_crosses[t]
    index = {name: f for f, name in enumerate(planted.fields)}
    a, b, c = (index[name] for name in cross.fields)
    if not cross.pairs:
        product = _centred_signs(seed, t, planted, a, ranks[a])
        for f in (b, c):
            product = product * _centred_signs(seed, t, planted, f, ranks[f])
        return cross.scale * product
    key = _key(seed, f"click/triple/{t}")
    ra, rb, rc = (ranks[f].astype(np.uint64) for f in (a, b, c))
    parts = [(ra, rb, 1), (ra, rc, 2), (rb, rc, 3)]
    total = sum(_normal(_hash(key, x, y, np.full_like(x, k))) for x, y, k in parts)
    total = total + _normal(_hash(key, ra, rb, rc + np.uint64(4)))
    margin: F64 = cross.scale * total / 2.0
    return margin


def _click_margin(seed: int, planted: ClickPlanted, ranks: list[I64]) -> F64:
    """The planted margin (without intercept) of rows given their value ranks."""
    n = len(ranks[0]) if ranks else 0
    margin = np.zeros(n)
    index = {name: f for f, name in enumerate(planted.fields)}
    for f, scale in enumerate(planted.main_scale):
        if scale > 0:
            key = _key(seed, f"click/main/{f}")
            margin += scale * _normal(_hash(key, ranks[f].astype(np.uint64)))
    for c, cross in enumerate(planted.field_crosses):
        key = _key(seed, f"click/cross/{c}")
        a, b = ranks[index[cross.a]].astype(np.uint64), ranks[index[cross.b]].astype(np.uint64)
        margin += cross.scale * _normal(_hash(key, a, b))
    for value_cross in planted.value_crosses:
        hit = (ranks[index[value_cross.a]] == value_cross.rank_a) & (
            ranks[index[value_cross.b]] == value_cross.rank_b
        )
        margin += value_cross.weight * hit
    for t in range(len(planted.triple_crosses)):
        margin += _triple_margin(seed, t, planted, ranks)
    return margin


@lru_cache(maxsize=8)
def _click_model(
    seed: int,
    n_fields: int,
    max_cardinality: int,
    positive_rate: float,
    n_field_crosses: int,
    n_value_crosses: int,
    n_triple_crosses: int = 0,
    triple_pairs: bool = False,
) -> ClickPlanted:
    if not 0 < positive_rate < 1:
        raise ValueError(f"positive_rate must be in (0, 1), got {positive_rate}")
    if max_cardinality < 10:
        raise ValueError(f"max_cardinality must be at least 10, got {max_cardinality}")
    if n_fields < 2 or n_fields > 1000:
        raise ValueError(f"n_fields must be in 2..1000, got {n_fields}")
    rng = _rng(seed, "click/model")
    width = max(2, len(str(n_fields - 1)))
    fields = tuple(f"f{f:0{width}d}" for f in range(n_fields))
    pattern = [min(k, max_cardinality) for k in _CARDINALITY_PATTERN]
    cardinalities = rng.permutation(np.resize(pattern, n_fields)).astype(np.int64)
    zipf = rng.uniform(*_ZIPF, size=n_fields)

    # Field crosses among fields of at most 1,000 values (so that value pairs recur): the
    # first half "pure" (neither field has a main effect), the rest "marginal".
    small = np.flatnonzero(cardinalities <= 1000)
    if 2 * n_field_crosses > len(small):
        raise ValueError(
            f"n_field_crosses {n_field_crosses} needs {2 * n_field_crosses} fields of at most "
            f"1000 values; n_fields {n_fields} has {len(small)}"
        )
    crossed = rng.choice(small, size=2 * n_field_crosses, replace=False).reshape(-1, 2)
    n_pure = n_field_crosses // 2
    silent = set(int(f) for f in crossed[:n_pure].ravel())
    # About a fifth of the fields have no main effect: the pure-cross fields and a few others.
    others = [f for f in range(n_fields) if f not in set(int(g) for g in crossed.ravel())]
    extra = max(0, round(0.2 * n_fields) - len(silent))
    silent |= set(int(f) for f in rng.choice(others, size=min(extra, len(others)), replace=False))
    main_scale = tuple(
        0.0 if f in silent else float(rng.uniform(*_MAIN_SCALE)) for f in range(n_fields)
    )
    field_crosses = tuple(
        FieldCross(
            fields[int(a)], fields[int(b)], float(rng.uniform(*_CROSS_SCALE)), marginal=c >= n_pure
        )
        for c, (a, b) in enumerate(crossed)
    )
    # Value-level crosses between common values (ranks 0..4) of random field pairs.
    value_crosses = []
    for _ in range(n_value_crosses):
        a, b = (int(f) for f in rng.choice(n_fields, size=2, replace=False))
        ra, rb = (int(rng.integers(min(int(cardinalities[f]), 5))) for f in (a, b))
        weight = float(rng.choice([-1.0, 1.0]) * rng.uniform(1.5, 2.5))
        value_crosses.append(
            ValueCross(
                fields[a],
                _click_value_name(seed, a, np.array([ra])).to_pylist()[0],
                fields[b],
                _click_value_name(seed, b, np.array([rb])).to_pylist()[0],
                weight,
                ra,
                rb,
            )
        )
    # Triple crosses among the other fields of at most 100 values (so that value triples
    # recur). Drawn after everything else: without them the model is the one of before.
    triple_crosses = []
    if n_triple_crosses:
        free = [int(f) for f in np.flatnonzero(cardinalities <= 100) if f not in crossed]
        if 3 * n_triple_crosses > len(free):
            raise ValueError(
                f"n_triple_crosses {n_triple_crosses} needs {3 * n_triple_crosses} fields of "
                f"at most 100 values outside the field crosses; there are {len(free)}"
            )
        chosen = rng.choice(free, size=3 * n_triple_crosses, replace=False).reshape(-1, 3)
        for triple in chosen:
            first, second, third = (fields[int(f)] for f in sorted(triple))
            scale = float(rng.uniform(*_TRIPLE_SCALE))
            names = (first, second, third)
            triple_crosses.append(TripleCross(names, scale, pairs=triple_pairs))
    draft = ClickPlanted(
        fields,
        tuple(int(k) for k in cardinalities),
        tuple(float(s) for s in zipf),
        main_scale,
        field_crosses,
        tuple(value_crosses),
        0.0,
        positive_rate,
        tuple(triple_crosses),
    )
    # The intercept that gives the target positive rate on a calibration stream.
    calibration = _rows(0, 50_000)
    margin = _click_margin(seed, draft, _click_ranks(seed, "click/calibration", draft, calibration))
    return dataclasses.replace(draft, intercept=_calibrate(margin, positive_rate, 1.0))


def click_planted(
    seed: int,
    *,
    n_fields: int = 30,
    max_cardinality: int = 1_000_000,
    positive_rate: float = 0.04,
    n_field_crosses: int = 4,
    n_value_crosses: int = 5,
    n_triple_crosses: int = 0,
    triple_pairs: bool = False,
) -> ClickPlanted:
    """The planted logistic model behind :func:`click` with the same arguments.

    Parameters
    ----------
    seed, n_fields, max_cardinality, positive_rate, n_field_crosses, n_value_crosses
    n_triple_crosses, triple_pairs
        As for :func:`click`.

    Returns
    -------
    ClickPlanted
        Cardinalities, main effects, field and value crosses and the intercept.

    Examples
    --------
    >>> planted = click_planted(0)
    >>> len(planted.field_crosses), len(planted.value_crosses)
    (4, 5)
    """
    return _click_model(
        int(seed),
        n_fields,
        max_cardinality,
        float(positive_rate),
        n_field_crosses,
        n_value_crosses,
        n_triple_crosses,
        triple_pairs,
    )


def click(
    n_rows: int,
    seed: int,
    n_fields: int = 30,
    *,
    max_cardinality: int = 1_000_000,
    positive_rate: float = 0.04,
    n_field_crosses: int = 4,
    n_value_crosses: int = 5,
    n_triple_crosses: int = 0,
    triple_pairs: bool = False,
    offset: int = 0,
    with_truth: bool = False,
) -> pl.DataFrame:
    """Click-like data: hashed categorical fields and a rare label from a planted logistic model.

    Field ``f`` has ``cardinalities[f]`` values (10, 100, 1e3, 1e4, 1e5 or 1e6, each for about
    a sixth of the fields, capped at ``max_cardinality``); the value of rank ``r`` is drawn
    with probability about proportional to ``(r + 1) ** -zipf[f]`` (a bounded power law,
    ``zipf[f]`` uniform in 0.9 .. 1.4) and is named by an 8-digit hex string, a keyed
    bijection of its rank, as in hashed advertising logs. The label is ``+1`` with probability
    ``sigmoid(margin)`` (:class:`ClickPlanted`): per-value main effects on about 80% of the
    fields; ``n_field_crosses`` field crosses between fields of at most 1,000 values, each
    value pair with its own hashed weight, the first half between fields with no main effect
    (invisible to any model of single fields), the rest between fields that also matter
    alone; ``n_value_crosses`` crosses of two common values of two fields;
    ``n_triple_crosses`` crosses of three fields of at most 100 values (:class:`TripleCross`):
    pure (no pair of the three carries anything of it), or with ``triple_pairs`` made mostly of
    crosses of its pairs; an intercept calibrated for ``positive_rate``.

    At the defaults (seed 0, 500k rows) the true probabilities (``with_truth=True``) score
    logloss 0.128 and AUC 0.856 against the constant's 0.168; scikit-learn's logistic regression
    on one-hot values, 200k training rows, 0.153 and 0.726 (``docs/datasets.md``).

    Parameters
    ----------
    n_rows
        Number of rows.
    seed
        Non-negative integer; the same seed gives the same rows.
    n_fields
        Number of categorical fields (20 to 40 look like advertising data).
    max_cardinality
        Largest number of values of a field.
    positive_rate
        Mean of ``P(label = +1)``.
    n_field_crosses
        Number of planted field-level crosses.
    n_value_crosses
        Number of planted value-level crosses.
    n_triple_crosses
        Number of planted crosses of three fields (0: the data of before they existed; the
        defaults leave fields for one).
    triple_pairs
        Whether the crosses of three fields are mostly crosses of their pairs.
    offset
        Index of the first row (see :func:`eat_rate`).
    with_truth
        Add a column ``p_true``: the true ``P(label = +1)`` of each row.

    Returns
    -------
    polars.DataFrame
        ``label`` (Float64, +1/-1), the fields ``f00`` .. (String), and ``p_true`` if asked.

    Examples
    --------
    >>> click(2, seed=0, n_fields=20).columns[:3]
    ['label', 'f00', 'f01']
    """
    planted = click_planted(
        seed,
        n_fields=n_fields,
        max_cardinality=max_cardinality,
        positive_rate=positive_rate,
        n_field_crosses=n_field_crosses,
        n_value_crosses=n_value_crosses,
        n_triple_crosses=n_triple_crosses,
        triple_pairs=triple_pairs,
    )
    rows = _rows(offset, n_rows)
    ranks = _click_ranks(seed, "click/values", planted, rows)
    margin = planted.intercept + _click_margin(seed, planted, ranks)
    label, p = _labels(margin, _hash(_key(seed, "click/label"), rows), 1.0)
    columns: dict[str, Any] = {"label": label}
    for f, name in enumerate(planted.fields):
        columns[name] = pl.Series(name, _click_value_name(seed, f, ranks[f]))
    if with_truth:
        columns["p_true"] = p
    return pl.DataFrame(columns)
