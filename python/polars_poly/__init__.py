"""polars-poly: sparse polynomial expansion and nonlinear online learning for Polars, in Rust.

Sparse columns are ``List(Struct({"index": UInt32|UInt64, "value": Float32|Float64}))``; see
:mod:`polars_poly.sparse`. Importing the package registers the ``.poly`` expression namespace
(with Polars imported before or after it).
``LOSSES``, ``RANKINGS``, ``SCHEDULES`` and ``IDENTITIES`` are the names the engine's registries
offer (``SGDRegressor(loss=...)``, ``Apple(ranking=..., schedule=..., identity=...)``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from polars_poly._with_polars import register_namespace

register_namespace()

if TYPE_CHECKING:
    from polars_poly import datasets, synthetic
    from polars_poly._internal import IDENTITIES, LOSSES, RANKINGS, SCHEDULES, __version__
    from polars_poly._loading import load_model
    from polars_poly.apple import Apple
    from polars_poly.dos import DoSClassifier, PassiveAggressiveClassifier
    from polars_poly.ffm import FFM
    from polars_poly.field_apple import FieldApple
    from polars_poly.learner import SGDClassifier, SGDRegressor, TableSaturationWarning
    from polars_poly.polynomial import (
        column_of,
        expand,
        expand_csr,
        feature_name,
        monomial,
        output_width,
    )
    from polars_poly.readers import (
        iter_libsvm,
        iter_vw,
        read_libsvm,
        read_vw,
        scan_libsvm,
        scan_vw,
    )
    from polars_poly.sparse import (
        from_numpy,
        from_scipy,
        hash_features,
        hashed_feature_names,
        n_features,
        sparse_dtype,
        to_numpy,
        to_scipy,
        to_sparse,
    )
    from polars_poly.transformers import PolynomialExpander

__all__ = [
    "__version__",
    "Apple",
    "FFM",
    "FieldApple",
    "IDENTITIES",
    "LOSSES",
    "RANKINGS",
    "SCHEDULES",
    "datasets",
    "synthetic",
    "from_numpy",
    "from_scipy",
    "hash_features",
    "hashed_feature_names",
    "iter_libsvm",
    "iter_vw",
    "n_features",
    "read_libsvm",
    "read_vw",
    "scan_libsvm",
    "scan_vw",
    "sparse_dtype",
    "DoSClassifier",
    "PassiveAggressiveClassifier",
    "PolynomialExpander",
    "SGDClassifier",
    "SGDRegressor",
    "TableSaturationWarning",
    "load_model",
    "column_of",
    "expand",
    "expand_csr",
    "feature_name",
    "monomial",
    "output_width",
    "to_numpy",
    "to_scipy",
    "to_sparse",
]

# The public names are imported on first use (PEP 562), each from its module: ``import
# polars_poly`` and the command line's ``--help`` load neither the extension nor NumPy, SciPy or
# scikit-learn (the estimators derive from scikit-learn's classes).
_HOMES = {
    "_internal": ("__version__", "IDENTITIES", "LOSSES", "RANKINGS", "SCHEDULES"),
    "_loading": ("load_model",),
    "apple": ("Apple",),
    "ffm": ("FFM",),
    "field_apple": ("FieldApple",),
    "dos": ("DoSClassifier", "PassiveAggressiveClassifier"),
    "learner": ("SGDClassifier", "SGDRegressor", "TableSaturationWarning"),
    "transformers": ("PolynomialExpander",),
    "readers": ("iter_libsvm", "iter_vw", "read_libsvm", "read_vw", "scan_libsvm", "scan_vw"),
    "polynomial": ("column_of", "expand", "expand_csr", "feature_name", "monomial", "output_width"),
    "sparse": (
        *("from_numpy", "from_scipy", "hash_features", "hashed_feature_names", "n_features"),
        *("sparse_dtype", "to_numpy", "to_scipy", "to_sparse"),
    ),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}
_SUBMODULES = ("datasets", "synthetic")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"polars_poly.{name}")
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"polars_poly.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
