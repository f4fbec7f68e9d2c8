"""Loaders for the benchmark data sets of the apple comparison (``python -m polars_poly compare``).

Every data set becomes ``(X, y, task)``: ``X`` a scipy CSR matrix (float64), ``y`` float64 labels
(``{-1, +1}`` for classification, raw targets for regression), ``task`` ``"classification"`` or
``"regression"``. Multiclass sets (shuttle, covtype, MNIST, sector) become binary problems, the
most frequent class against the rest, because the paper's protocol trains one squared-loss
learner per data set. Data sets with a separate test file use the training file only (the
comparison makes its own 80/20 split). String columns are integer-encoded.

The directory layout and file formats are those of the shared benchmark directory (see its
README); the bundled ``german.numer`` set ships inside the package.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
import polars as pl
import scipy.sparse as sp

Task = Literal["classification", "regression"]
Loaded = tuple[sp.csr_array, npt.NDArray[np.float64], Task]
BUNDLED = Path(__file__).parent / "data" / "german.numer_scale.gz"


@dataclass(frozen=True)
class _Spec:
    path: str
    reader: Callable[[Path], tuple[sp.csr_array, npt.NDArray[np.float64]]]
    task: Task


def _libsvm(path: Path) -> tuple[sp.csr_array, npt.NDArray[np.float64]]:
    from polars_poly.readers import read_libsvm
    from polars_poly.sparse import n_features, to_scipy

    frame = read_libsvm(path)
    width = max(int(n_features(frame["features"])), 1)
    X = to_scipy(frame["features"], width).astype(np.float64)
    return sp.csr_array(X), frame["label"].to_numpy().astype(np.float64)


def _numeric(frame: pl.DataFrame, target: str) -> tuple[sp.csr_array, npt.NDArray[np.float64]]:
    """A frame's columns (strings integer-encoded) as CSR, and its target column."""
    columns = []
    for name in frame.columns:
        if name == target:
            continue
        column = frame[name]
        if column.dtype == pl.String:
            column = column.cast(pl.Categorical).to_physical()
        columns.append(column.cast(pl.Float64).fill_null(0.0).to_numpy())
    dense = np.column_stack(columns)
    labels = frame[target]
    if labels.dtype == pl.String:
        labels = labels.cast(pl.Categorical).to_physical()
    return sp.csr_array(dense), labels.cast(pl.Float64).to_numpy()


def _tsv(
    target: str | None = None, separator: str = "\t", header: bool = True
) -> Callable[[Path], tuple[sp.csr_array, npt.NDArray[np.float64]]]:
    def read(path: Path) -> tuple[sp.csr_array, npt.NDArray[np.float64]]:
        frame = pl.read_csv(path, separator=separator, has_header=header, infer_schema_length=None)
        return _numeric(frame, target or frame.columns[-1])

    return read


def _arff(path: Path) -> tuple[sp.csr_array, npt.NDArray[np.float64]]:
    with gzip.open(path, "rt") as handle:
        text = handle.read()
    names = [
        line.split()[1]
        for line in text.splitlines()
        if line.strip().upper().startswith("@ATTRIBUTE")
    ]
    data = text[text.upper().index("@DATA") + len("@DATA") :]
    frame = pl.read_csv(io.StringIO(data.strip()), has_header=False, new_columns=names)
    return _numeric(frame, names[-1])


def _mnist(path: Path) -> tuple[sp.csr_array, npt.NDArray[np.float64]]:
    from polars_poly.datasets import read_mnist

    images, labels = read_mnist(
        path / "t10k-images-idx3-ubyte.gz", path / "t10k-labels-idx1-ubyte.gz"
    )
    X = sp.csr_array(images.reshape(len(images), -1).astype(np.float64) / 255.0)
    return X, labels.astype(np.float64)


_SPECS: dict[str, _Spec] = {
    "a9a": _Spec("a9a/a9a.gz", _libsvm, "classification"),
    "abalone": _Spec("abalone/abalone_scale", _libsvm, "regression"),
    "adult": _Spec("adult/adult.tsv.gz", _tsv(), "classification"),
    "australian": _Spec("australian/australian.tsv.gz", _tsv(), "classification"),
    "breast_cancer": _Spec("breast_cancer/breast_w.tsv.gz", _tsv(), "classification"),
    "covtype_subset10k": _Spec(
        "covtype_subset10k/covtype_small.csv.gz", _tsv("Cover_Type", ","), "classification"
    ),
    "cpu_act": _Spec("cpu_act/197_cpu_act.tsv.gz", _tsv(), "regression"),
    "cpu_small": _Spec("cpu_small/227_cpu_small.tsv.gz", _tsv(), "regression"),
    "diabetes": _Spec("diabetes/pima.tsv.gz", _tsv(), "classification"),
    "eeg_eye_state": _Spec("eeg_eye_state/eeg_eye_state.arff.gz", _arff, "classification"),
    "fried": _Spec("fried/564_fried.tsv.gz", _tsv(), "regression"),
    "german.numer": _Spec("german.numer/german.numer_scale", _libsvm, "classification"),
    "heart": _Spec("heart/heart_statlog.tsv.gz", _tsv(), "classification"),
    "house_16H": _Spec("house_16H/574_house_16H.tsv.gz", _tsv(), "regression"),
    "ionosphere": _Spec("ionosphere/ionosphere.tsv.gz", _tsv(), "classification"),
    "magic04": _Spec("magic04/magic04.data.gz", _tsv(None, ",", False), "classification"),
    "mnist_t10k": _Spec("mnist_t10k", _mnist, "classification"),
    "mushrooms": _Spec("mushrooms/mushrooms", _libsvm, "classification"),
    "phishing": _Spec("phishing/phishing.gz", _libsvm, "classification"),
    "sector": _Spec("sector/sector.scale.gz", _libsvm, "classification"),
    "shuttle": _Spec("shuttle/shuttle.tsv.gz", _tsv(), "classification"),
    "skin_nonskin": _Spec("skin_nonskin/Skin_NonSkin.txt.gz", _tsv("SKIN"), "classification"),
    "sonar": _Spec("sonar/sonar.tsv.gz", _tsv(), "classification"),
    "space_ga": _Spec("space_ga/space_ga.csv", _tsv("ln", ","), "regression"),
    "splice": _Spec("splice/splice.gz", _libsvm, "classification"),
    "svmguide1": _Spec("svmguide1/svmguide1", _libsvm, "classification"),
    "titanic": _Spec("titanic/titanic.tsv.gz", _tsv(), "classification"),
    "w8a": _Spec("w8a/w8a.gz", _libsvm, "classification"),
}


def list_datasets(data_dir: str | Path) -> list[str]:
    """Names of the known data sets present under ``data_dir``, sorted."""
    root = Path(data_dir)
    return sorted(name for name, spec in _SPECS.items() if (root / spec.path).exists())


def _binary(labels: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Two classes -> -1/+1 (the larger label is +1); more -> most frequent class vs the rest."""
    values, counts = np.unique(labels, return_counts=True)
    if len(values) < 2:
        raise ValueError(f"a classification data set needs two classes, got {values.tolist()}")
    positive = values[-1] if len(values) == 2 else values[np.argmax(counts)]
    return np.where(labels == positive, 1.0, -1.0)


def load_dataset(name: str, data_dir: str | Path | None = None) -> Loaded:
    """Data set ``name`` as ``(X, y, task)`` (see the module docs). ``data_dir=None`` reads the
    bundled ``german.numer``; other names need the shared data directory."""
    if name not in _SPECS:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(_SPECS)}")
    spec = _SPECS[name]
    if data_dir is None:
        if name != "german.numer":
            raise ValueError(f"only 'german.numer' is bundled; pass data_dir to read {name!r}")
        path = BUNDLED
    else:
        path = Path(data_dir) / spec.path
        if not path.exists():
            raise FileNotFoundError(f"data set {name!r}: {path} does not exist")
    X, y = spec.reader(path)
    if spec.task == "classification":
        y = _binary(y)
    if not np.isfinite(X.data).all() or not np.isfinite(y).all():
        raise ValueError(f"data set {name!r} has non-finite values")
    X.eliminate_zeros()
    return X, y, spec.task
