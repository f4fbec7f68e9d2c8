"""Seeded synthetic data sets that look like users' data, for tests (small) and benches (large).

Three generators, each returning a :class:`polars.DataFrame` of ``n_rows`` rows for a ``seed``:

* :func:`eat_rate` -- the public "eat-rate" benchmark of Fwumious Wabbit: 12 categorical fields of
  which only the animal x food cross predicts the label;
* :func:`text` -- bag-of-words documents over a Zipf vocabulary, l2-normalized tf-idf in a sparse
  column, labels from planted words and planted word pairs;
* :func:`click` -- click-like hashed categorical fields with Zipf values, a 3-5% positive rate and
  labels from a planted logistic model with field-level and value-level crosses;

and :func:`write_parquet`, which streams any of them to one parquet file chunk by chunk.

Every random quantity of row ``i`` is a counter-based hash of ``(seed, stream, i, ...)`` (the
splitmix64 finalizer applied to a key that :class:`numpy.random.SeedSequence` derives from the
seed and the stream's name), so row ``i`` is the same whichever chunk generates it: the rows
``offset .. offset + n_rows`` of a data set can be generated alone, in any order, in parallel.
The planted structure of :func:`text` and :func:`click` (word weights, field crosses, the
intercept) is drawn once per ``(seed, parameters)`` from a :func:`numpy.random.default_rng`
seeded the same way, and is returned by :func:`text_planted` and :func:`click_planted`.

Examples
--------
>>> from polars_poly.synthetic import eat_rate
>>> frame = eat_rate(3, seed=0)
>>> frame.columns[:4]
['label', 'A', 'B', 'C']
>>> frame.equals(eat_rate(3, seed=0))
True
"""

# One module per generator family (_eat_rate, _text, _click) over the counter-based randomness
# of _random; _parquet writes any of them.
from polars_poly.synthetic._click import (
    ClickPlanted,
    FieldCross,
    TripleCross,
    ValueCross,
    click,
    click_planted,
)
from polars_poly.synthetic._eat_rate import eat_rate, held_out_pair
from polars_poly.synthetic._parquet import write_parquet
from polars_poly.synthetic._text import TextPlanted, text, text_planted

__all__ = [
    "ClickPlanted",
    "FieldCross",
    "TextPlanted",
    "TripleCross",
    "ValueCross",
    "click",
    "click_planted",
    "eat_rate",
    "held_out_pair",
    "text",
    "text_planted",
    "write_parquet",
]
