"""The "eat-rate" benchmark of Fwumious Wabbit: :func:`eat_rate`."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_poly.synthetic._random import (
    I64,
    U64,
    _below,
    _check_positive,
    _hash,
    _key,
    _rng,
    _rows,
)


@lru_cache(maxsize=8)
def _eat_rate_kinds(seed: int, varieties: int) -> tuple[npt.NDArray[np.bool_], ...]:
    """Which animal types are herbivores and which food types plants: exactly half of each
    (a seeded permutation), so that neither field alone has any effect on the label."""
    rng = _rng(seed, "eat_rate/types/kinds")
    return tuple(rng.permutation(varieties) < varieties // 2 for _ in range(2))


def held_out_pair(seed: int, share: float, animal: I64, food: I64) -> npt.NDArray[np.bool_]:
    """Whether each (animal, food) type pair is one of the ``share`` of pairs
    :func:`eat_rate` keeps out of training rows (``held_out_pairs``); a fixed, seeded choice."""
    if not 0.0 <= share < 1.0:
        raise ValueError(f"held_out_pairs must be in [0, 1), got {share!r}")
    key = _key(seed, "eat_rate/types/held_out")
    bits = _hash(key, animal.astype(np.uint64), food.astype(np.uint64))
    held: npt.NDArray[np.bool_] = bits < np.uint64(min(share * 2.0**64, 2.0**64 - 2**11))
    return held


def _half_and_half(
    seed: int, varieties: int, animal: I64, food: I64
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    herbivores, plants = _eat_rate_kinds(int(seed), varieties)
    return herbivores[animal], plants[food]


def eat_rate(
    n_rows: int,
    seed: int,
    *,
    sampling: Literal["types", "fwumious"] = "types",
    varieties: int = 1000,
    noise_fields: int = 10,
    noise_values: int = 10_000,
    unseen: bool = False,
    held_out_pairs: float = 0.0,
    include_held_out: bool = False,
    offset: int = 0,
) -> pl.DataFrame:
    """The "eat-rate" benchmark of Fwumious Wabbit (its ``BENCHMARK.md`` and ``generate.py``).

    Each row is one feeding experiment: an animal (field ``A``), a food (field ``B``), ten fields
    of noise (``C`` .. ``L``) and whether the animal ate the food. Animals are herbivores or
    carnivores, foods are plants or meat, and the names carry the kind: ``"Herbivore-65"``,
    ``"Meat-120"``. The label is ``+1`` when a herbivore meets a plant or a carnivore meets meat,
    else ``-1``: the original's rule, with no label noise (the original has none). Neither field
    alone says anything about the label (half the animals eat any given food), so only the
    ``A x B`` cross predicts; and since a learner sees hashed names, not their meaning, it must
    learn each (animal, food) pair from the rows that contain it.

    Two samplings:

    ``"types"`` (default; the data set of the project's issue 20)
        ``varieties`` animal types and ``varieties`` food types, each of a fixed kind (half of
        the types of each, chosen by the seed), both drawn uniformly per row; each noise field
        ``X`` is ``"X" + str(uniform in 0 .. noise_values - 1)``.
    ``"fwumious"`` (the original ``generate.py``, number for number)
        The diet and the food kind are fair coins *per row*, so ``"Herbivore-7"`` and
        ``"Carnivore-7"`` are two animals; then with probability 1/2 the animal's number is
        uniform in ``0 .. varieties`` and the food's in ``0 .. varieties // 4``, else the other
        way round (pairs of two numbers above ``varieties // 4`` never occur); noise values are
        uniform in ``0 .. noise_values``. Ranges are inclusive, as Python's ``random.randint``.
        ``unseen=True`` gives the original's "hard" test set, only such never-seen pairs.

    Reference numbers (``benches/suite/eat_rate_vw.py``, ``docs/datasets.md``): seed 0, training
    rows ``0 .. 2M``, test rows ``2M .. 2.2M``, one pass of Vowpal Wabbit 9.11 through ``pyvw``,
    ``pyvw.Workspace("--loss_function logistic -b 24 --quiet")`` with each field its namespace
    (``"1 |A Herbivore-5 |B Plant-7 |C C123 ..."``), test logloss of ``sigmoid(prediction)``:

    ==============  ================  ================  ====================
    sampling        linear            ``-q AB``         issue 20 (``-q AB``)
    ==============  ================  ================  ====================
    ``"types"``     0.7134 (50.1%)    0.6232 (31.8%)    0.6236 (32%)
    ``"fwumious"``  0.7136 (49.9%)    0.6522 (37.8%)
    ==============  ================  ================  ====================

    (test error in parentheses; the issue's linear model: 0.714, 50%). So the issue's numbers
    come from the ``"types"`` data; the original's sampling is harder: 1.76M possible
    (animal, food) pairs against 1M, each seen less often. Where both depart from the
    original: the random numbers come from our counter-based hashes rather than Python's
    Mersenne Twister, so the rows are not the original's files (the distribution is the same),
    and the label is a float.

    Parameters
    ----------
    n_rows
        Number of rows.
    seed
        Non-negative integer; the same seed gives the same rows.
    sampling
        ``"types"`` or ``"fwumious"``, see above.
    varieties
        Number of animal and of food types (``"types"``); the largest animal and food number
        (``"fwumious"``, the original's ``feature_variety``).
    noise_fields
        Number of noise fields, named ``C``, ``D``, ... (at most 24).
    noise_values
        Number of values of a noise field (``"types"``); the largest one (``"fwumious"``).
    unseen
        With ``sampling="fwumious"``: draw the original's "hard" rows, animal and food numbers
        both above ``varieties // 4``.
    held_out_pairs
        With ``sampling="types"``: this share of the ``varieties**2`` (animal, food) type pairs
        (a seeded choice, :func:`held_out_pair`) never occurs in the rows, unless
        ``include_held_out``: a row that drew one draws again. Training rows without them and
        test rows with them give a test set whose pairs the training never saw in at least this
        share of rows (other pairs may be missing from the training rows by chance), the case
        where a cross of the two fields cannot help and a factorization can.
    include_held_out
        Draw rows from every pair (a test set; ``held_out_pairs`` then only names the pairs the
        matching training rows lack).
    offset
        Index of the first row: ``eat_rate(n, s, offset=k)`` equals rows ``k .. k + n`` of
        ``eat_rate(k + n, s)``.

    Returns
    -------
    polars.DataFrame
        ``label`` (Float64, +1/-1), then ``A``, ``B`` and the noise fields (String).

    Examples
    --------
    >>> eat_rate(2, seed=1).columns
    ['label', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L']
    """
    if not 0 <= noise_fields <= 24:
        raise ValueError(f"noise_fields must be in 0..24, got {noise_fields}")
    if sampling not in ("types", "fwumious"):
        raise ValueError(f"sampling must be 'types' or 'fwumious', got {sampling!r}")
    _check_positive(varieties=varieties, noise_values=noise_values)
    if unseen and sampling != "fwumious":
        raise ValueError("unseen=True needs sampling='fwumious'")
    if held_out_pairs and sampling != "types":
        raise ValueError("held_out_pairs needs sampling='types'")
    held_out_pair(seed, held_out_pairs, np.zeros(0, np.int64), np.zeros(0, np.int64))
    rows = _rows(offset, n_rows)

    def bits(stream: str, counter: U64 = rows) -> U64:
        return _hash(_key(seed, f"eat_rate/{sampling}/{stream}"), counter)

    def coin(stream: str, counter: U64 = rows) -> npt.NDArray[np.bool_]:
        heads: npt.NDArray[np.bool_] = (bits(stream, counter) >> np.uint64(63)) == 0
        return heads

    if sampling == "types":
        animal = _below(bits("animal"), varieties)
        food = _below(bits("food"), varieties)
        if held_out_pairs and not include_held_out:
            # Draw again, from a stream of its own per attempt, until no row holds such a pair.
            redraw = np.flatnonzero(held_out_pair(seed, held_out_pairs, animal, food))
            attempt = 0
            while redraw.size:
                attempt += 1
                again = rows[redraw]
                animal[redraw] = _below(bits(f"animal/again/{attempt}", again), varieties)
                food[redraw] = _below(bits(f"food/again/{attempt}", again), varieties)
                held = held_out_pair(seed, held_out_pairs, animal[redraw], food[redraw])
                redraw = redraw[held]
        herbivore, plant = _half_and_half(seed, varieties, animal, food)
        noise_range = noise_values
    else:
        herbivore, plant = coin("diet"), coin("kind")
        block = varieties // 4
        animal_bits, food_bits = bits("animal"), bits("food")
        if unseen:
            animal = block + 1 + _below(animal_bits, varieties - block)
            food = block + 1 + _below(food_bits, varieties - block)
        else:
            wide = coin("block")
            animal = np.where(
                wide, _below(animal_bits, varieties + 1), _below(animal_bits, block + 1)
            )
            food = np.where(wide, _below(food_bits, block + 1), _below(food_bits, varieties + 1))
        noise_range = noise_values + 1
    letters = [chr(ord("C") + j) for j in range(noise_fields)]
    numbers: dict[str, Any] = {
        "label": np.where(herbivore == plant, 1.0, -1.0),
        "herbivore": herbivore,
        "plant": plant,
        "animal": animal,
        "food": food,
    }
    for letter in letters:
        numbers[letter] = _below(bits(letter), noise_range)
    return pl.DataFrame(numbers).select(
        pl.col("label"),
        pl.concat_str(
            pl.when(pl.col("herbivore")).then(pl.lit("Herbivore-")).otherwise(pl.lit("Carnivore-")),
            pl.col("animal").cast(pl.String),
        ).alias("A"),
        pl.concat_str(
            pl.when(pl.col("plant")).then(pl.lit("Plant-")).otherwise(pl.lit("Meat-")),
            pl.col("food").cast(pl.String),
        ).alias("B"),
        *(pl.concat_str(pl.lit(x), pl.col(x).cast(pl.String)).alias(x) for x in letters),
    )
