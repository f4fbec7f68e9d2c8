"""Bag-of-words documents over a Zipf vocabulary with planted words and word pairs:
:func:`text`, its planted model :func:`text_planted` (:class:`TextPlanted`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from polars_poly.synthetic._random import (
    F64,
    I64,
    U64,
    _calibrate,
    _check_positive,
    _hash,
    _key,
    _labels,
    _rng,
    _rows,
    _uniform,
)

_CONSONANTS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"
_SYLLABLES = [c + v for c in _CONSONANTS for v in _VOWELS]


def _word(rank: int) -> str:
    """A pronounceable name for a word rank, unique (bijective base-90 syllables), short if
    frequent: 0 -> "ba", 89 -> "zu", 90 -> "baba"."""
    parts: list[str] = []
    n = rank
    while n >= 0:
        parts.append(_SYLLABLES[n % len(_SYLLABLES)])
        n = n // len(_SYLLABLES) - 1
    return "".join(reversed(parts))


@dataclass(frozen=True, eq=False)
class TextPlanted:
    """The vocabulary and planted model of :func:`text` for one seed and parameters.

    Word ids are the ``index`` of the sparse ``features`` column; ids are a seeded permutation
    of the frequency ranks. A document's margin is ``bias`` plus the weight of every planted
    word it contains plus the weight of every planted pair whose two words it contains (each
    counted once, however often it occurs); ``P(label = +1) = sigmoid(margin / noise)``.

    Attributes
    ----------
    names
        The word of each id.
    probability
        The probability of each id as a token (Zipf over its rank).
    idf
        ``1 + ln(1 / df)`` of each id, ``df`` the expected fraction of documents containing it.
    words, word_weights
        Ids of the planted single words and their weights.
    pairs, pair_weights
        Planted word pairs (ids; no pair word is a planted single word) and their weights.
    bias, noise
        The intercept (calibrated for a balanced label) and the link's temperature.
    """

    names: tuple[str, ...]
    probability: F64
    idf: F64
    words: I64
    word_weights: F64
    pairs: tuple[tuple[int, int], ...]
    pair_weights: F64
    bias: float
    noise: float

    @property
    def pair_names(self) -> list[tuple[str, str]]:
        """The planted pairs as words."""
        return [(self.names[a], self.names[b]) for a, b in self.pairs]

    @property
    def word_names(self) -> list[str]:
        """The planted single words."""
        return [self.names[int(i)] for i in self.words]


@dataclass(frozen=True)
class _TextShape:
    vocabulary: int
    zipf: float
    min_tokens: int
    max_tokens: int
    cdf: F64  # by rank
    guide: I64  # guide[j]: the first rank whose cdf exceeds j / len(guide)
    rank_to_id: I64


def _length_pmf(min_tokens: int, max_tokens: int) -> F64:
    """P(L = l) for l in min..max when L = floor(min * ((max + 1) / min) ** u), u uniform."""
    lengths = np.arange(min_tokens, max_tokens + 2, dtype=np.float64)
    return np.diff(np.log(lengths)) / math.log((max_tokens + 1) / min_tokens)


def _documents(shape: _TextShape, key: np.uint64, rows: U64) -> tuple[I64, I64, I64, I64]:
    """Token ids of the documents ``rows``: (token offsets, token ids, and the sorted distinct
    (row, id) entries with their counts as ``row * vocabulary + id`` keys and counts)."""
    u = _uniform(_hash(key, rows))
    ratio = (shape.max_tokens + 1) / shape.min_tokens
    lengths = np.minimum(np.floor(shape.min_tokens * ratio**u).astype(np.int64), shape.max_tokens)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    token_row = np.repeat(rows, lengths)
    position = np.arange(offsets[-1], dtype=np.uint64) - np.repeat(
        offsets[:-1].astype(np.uint64), lengths
    )
    ids = shape.rank_to_id[_inverse_cdf(shape, _uniform(_hash(key, token_row, position)))]
    # Distinct (row, id) entries: sort the keys, keep the first of each run, count the run.
    entries = np.repeat(np.arange(len(rows), dtype=np.int64), lengths) * shape.vocabulary + ids
    entries.sort()
    first = np.ones(len(entries), dtype=bool)
    np.not_equal(entries[1:], entries[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, len(entries)))
    return offsets, ids, entries[starts], counts


def _inverse_cdf(shape: _TextShape, u: F64) -> I64:
    """The rank ``r`` with ``cdf[r - 1] <= u < cdf[r]``: a guide table gives a rank at or
    just below it, a few vectorized steps finish (as ``searchsorted``, several times faster)."""
    rank = shape.guide[(u * len(shape.guide)).astype(np.int64)]
    todo = np.flatnonzero(shape.cdf[rank] <= u)
    while todo.size:
        rank[todo] += 1
        todo = todo[shape.cdf[rank[todo]] <= u[todo]]
    return rank


def _text_margin(planted: TextPlanted, n_rows: int, row: I64, word: I64, weights: F64) -> F64:
    """The planted margin (without bias) of each document from its distinct (row, word)."""
    margin = np.bincount(row, weights=weights[word], minlength=n_rows).astype(np.float64)
    if planted.pairs:
        pair_words = np.unique(np.array(planted.pairs, dtype=np.int64).ravel())
        slot = np.full(len(weights), -1, dtype=np.int64)
        slot[pair_words] = np.arange(len(pair_words))
        hit = slot[word] >= 0
        present = np.zeros((n_rows, len(pair_words)), dtype=bool)
        present[row[hit], slot[word[hit]]] = True
        for (a, b), w in zip(planted.pairs, planted.pair_weights, strict=True):
            margin += w * (present[:, slot[a]] & present[:, slot[b]])
    return margin


@lru_cache(maxsize=8)
def _text_model(
    seed: int,
    vocabulary: int,
    zipf: float,
    min_tokens: int,
    max_tokens: int,
    n_words: int,
    n_pairs: int,
    noise: float,
) -> tuple[_TextShape, TextPlanted]:
    if vocabulary < 200:
        raise ValueError(f"vocabulary must be at least 200, got {vocabulary}")
    if not 1 <= min_tokens <= max_tokens:
        raise ValueError(f"need 1 <= min_tokens <= max_tokens, got {min_tokens}, {max_tokens}")
    _check_positive(zipf=zipf)
    if noise < 0:
        raise ValueError(f"noise must be non-negative, got {noise}")
    rng = _rng(seed, "text/model")
    by_rank = np.arange(1, vocabulary + 1, dtype=np.float64) ** -zipf
    by_rank /= by_rank.sum()
    cdf = np.cumsum(by_rank)
    cdf[-1] = 1.0
    rank_to_id = rng.permutation(vocabulary).astype(np.int64)
    guide = np.searchsorted(cdf, np.arange(1 << 20) / float(1 << 20), side="right")
    shape = _TextShape(
        vocabulary, zipf, min_tokens, max_tokens, cdf, guide.astype(np.int64), rank_to_id
    )

    # Expected document frequency of each rank over the length distribution.
    pmf = _length_pmf(min_tokens, max_tokens)
    lengths = np.arange(min_tokens, max_tokens + 1, dtype=np.float64)
    absent = np.exp(np.log1p(-by_rank)[:, None] * lengths[None, :]) @ pmf
    df = np.clip(1.0 - absent, 1e-300, 1.0)
    names = [""] * vocabulary
    for rank in range(vocabulary):
        names[int(rank_to_id[rank])] = _word(rank)
    probability = np.empty(vocabulary)
    probability[rank_to_id] = by_rank
    idf = np.empty(vocabulary)
    idf[rank_to_id] = 1.0 - np.log(df)

    # Pair words are frequent enough to meet (ranks 10..99), single words are spread
    # log-uniformly over ranks 10..4999; no word is both.
    pair_pool = np.arange(10, max(100, 10 + 4 * n_pairs))
    if 2 * n_pairs > len(pair_pool) or pair_pool[-1] >= vocabulary:
        raise ValueError(f"n_pairs {n_pairs} too large for vocabulary {vocabulary}")
    pair_ranks = rng.choice(pair_pool, size=2 * n_pairs, replace=False)
    single_pool = np.setdiff1d(np.arange(10, min(vocabulary, 5000)), pair_ranks)
    if n_words > len(single_pool):
        raise ValueError(f"n_words {n_words} too large for vocabulary {vocabulary}")
    weight_of_rank = 1.0 / single_pool
    single_ranks = rng.choice(
        single_pool, size=n_words, replace=False, p=weight_of_rank / weight_of_rank.sum()
    )
    words = np.sort(rank_to_id[single_ranks])
    word_weights = rng.normal(0.0, 1.0, size=n_words)
    pair_ids = rank_to_id[pair_ranks].reshape(-1, 2)
    pairs = tuple((int(a), int(b)) for a, b in pair_ids)
    pair_weights = rng.choice([-1.0, 1.0], size=n_pairs) * rng.uniform(2.0, 3.0, size=n_pairs)
    planted = TextPlanted(
        tuple(names), probability, idf, words, word_weights, pairs, pair_weights, 0.0, noise
    )

    # Balance the labels on documents of a calibration stream.
    weights = np.zeros(vocabulary)
    weights[words] = word_weights
    n_calibration = 20_000
    _, _, entries, _ = _documents(shape, _key(seed, "text/calibration"), _rows(0, n_calibration))
    margin = _text_margin(
        planted, n_calibration, entries // vocabulary, entries % vocabulary, weights
    )
    return shape, dataclasses.replace(planted, bias=_calibrate(margin, 0.5, noise))


def text_planted(
    seed: int,
    *,
    vocabulary: int = 50_000,
    zipf: float = 1.0,
    min_tokens: int = 20,
    max_tokens: int = 200,
    n_words: int = 300,
    n_pairs: int = 10,
    noise: float = 0.5,
) -> TextPlanted:
    """The vocabulary and planted model behind :func:`text` with the same arguments.

    Parameters
    ----------
    seed, vocabulary, zipf, min_tokens, max_tokens, n_words, n_pairs, noise
        As for :func:`text`.

    Returns
    -------
    TextPlanted
        Word names, probabilities and idf by id; planted words, pairs and weights; the bias.

    Examples
    --------
    >>> planted = text_planted(0, vocabulary=1000, n_words=20, n_pairs=3)
    >>> len(planted.pairs), len(planted.words)
    (3, 20)
    """
    return _text_model(
        int(seed), vocabulary, float(zipf), min_tokens, max_tokens, n_words, n_pairs, noise
    )[1]


def text(
    n_rows: int,
    seed: int,
    vocabulary: int = 50_000,
    *,
    zipf: float = 1.0,
    min_tokens: int = 20,
    max_tokens: int = 200,
    n_words: int = 300,
    n_pairs: int = 10,
    noise: float = 0.5,
    offset: int = 0,
    with_truth: bool = False,
) -> pl.DataFrame:
    """Sparse text: bag-of-words documents with tf-idf features and labels from planted words.

    Tokens are drawn independently from a Zipf vocabulary (the word of frequency rank ``r``
    has probability proportional to ``(r + 1) ** -zipf``); a document has ``L`` tokens,
    ``L = floor(min_tokens * ((max_tokens + 1) / min_tokens) ** u)`` for ``u`` uniform (a
    log-uniform length, so short documents are more common, mean ~80 by default). Word names
    are pronounceable strings, shorter for frequent words. Features are ``count * idf`` over
    the document's distinct words, l2-normalized, where ``idf = 1 + ln(1 / df)`` and ``df`` is
    the *expected* fraction of documents containing the word under this distribution, so every
    chunk uses the same idf. The label is ``+1`` with probability ``sigmoid(margin / noise)``,
    the margin being the planted model of :class:`TextPlanted` (a few hundred single words
    with N(0, 1) weights, a few word pairs with weights of magnitude 2-3 whose words have no
    effect of their own, a bias balancing the labels).

    At the defaults (seed 0, 100k documents) the true probabilities score test error 9.8%
    (19.1% for the true model without its pairs); scikit-learn's logistic regression on the
    features, 100k training documents, 19.9% (``docs/datasets.md``).

    Parameters
    ----------
    n_rows
        Number of documents.
    seed
        Non-negative integer; the same seed gives the same documents.
    vocabulary
        Number of distinct words.
    zipf
        Exponent of the word frequencies.
    min_tokens, max_tokens
        Range of document lengths in tokens.
    n_words
        Number of planted single words (drawn log-uniformly from frequency ranks 10 .. 4999).
    n_pairs
        Number of planted word pairs (words of frequency ranks 10 .. 99).
    noise
        Temperature of the logistic link; ``0`` gives noiseless labels ``sign(margin)``.
    offset
        Index of the first document (see :func:`eat_rate`).
    with_truth
        Add a column ``p_true``: the true ``P(label = +1)`` of each row.

    Returns
    -------
    polars.DataFrame
        ``label`` (Float64, +1/-1), ``tokens`` (List(String)), ``features``
        (``List(Struct({"index": UInt32, "value": Float64}))``, sorted by index, no
        duplicates, l2 norm 1), and ``p_true`` (Float64) if asked.

    Examples
    --------
    >>> frame = text(2, seed=0, vocabulary=1000, n_words=20, n_pairs=3)
    >>> frame.schema["features"]
    List(Struct({'index': UInt32, 'value': Float64}))
    """
    shape, planted = _text_model(
        int(seed), vocabulary, float(zipf), min_tokens, max_tokens, n_words, n_pairs, noise
    )
    rows = _rows(offset, n_rows)
    offsets, ids, entries, counts = _documents(shape, _key(seed, "text/tokens"), rows)
    row = entries // vocabulary
    word = entries % vocabulary
    values = counts * planted.idf[word]
    norms = np.sqrt(np.bincount(row, weights=values * values, minlength=n_rows))
    values /= norms[row]
    feature_offsets = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=n_rows), out=feature_offsets[1:])

    weights = np.zeros(vocabulary)
    weights[planted.words] = planted.word_weights
    margin = planted.bias + _text_margin(planted, n_rows, row, word, weights)
    label, p = _labels(margin, _hash(_key(seed, "text/label"), rows), noise)

    names = pa.array(planted.names, type=pa.large_string())
    tokens = pa.LargeListArray.from_arrays(pa.array(offsets), names.take(pa.array(ids)))
    entries_array = pa.StructArray.from_arrays(
        [pa.array(word.astype(np.uint32)), pa.array(values)], names=["index", "value"]
    )
    features = pa.LargeListArray.from_arrays(pa.array(feature_offsets), entries_array)
    columns: dict[str, Any] = {
        "label": label,
        "tokens": pl.Series("tokens", tokens),
        "features": pl.Series("features", features),
    }
    if with_truth:
        columns["p_true"] = p
    return pl.DataFrame(columns)
