"""Hashed online learning with scikit-learn estimators: ``SGDRegressor`` and ``SGDClassifier``.

Vowpal Wabbit's core learning loop in Rust (``src/learner``): features hashed into ``2**bits``
weights, expanded on the fly per example (``expansion="linear" | "quadratic" | "cubic"``, plus
namespace crosses, or apple's adaptive expansion, :class:`polars_poly.Apple`), Vowpal Wabbit's
default adaptive + normalized + importance-invariant update,
progressive validation loss. Training and scoring release the GIL.

Inputs: scipy sparse matrices, dense numpy arrays, Polars DataFrames with sparse columns, string
(categorical, enum) columns or token lists, each a namespace, the strings hashed with the model's
``bits`` as ``hash_features`` hashes them, and numeric columns, together one namespace
(``"features"``) after the others; Polars LazyFrames (streamed in batches, bounded memory) and
Arrow tables.
With a DataFrame or LazyFrame, ``y`` (and ``sample_weight``) may be a column name.
"""

from polars_poly.learner._base import _BaseSGD
from polars_poly.learner._data import _NAMES
from polars_poly.learner._saturation import TableSaturationWarning
from polars_poly.learner.estimators import SGDClassifier, SGDRegressor

__all__ = ["_NAMES", "SGDClassifier", "SGDRegressor", "TableSaturationWarning", "_BaseSGD"]
