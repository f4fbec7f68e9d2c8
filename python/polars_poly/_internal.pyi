"""Type stubs for the compiled extension module (src/python/)."""

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

__version__: str
LOSSES: list[str]
RANKINGS: list[str]
SCHEDULES: list[str]
IDENTITIES: list[str]

def read_libsvm(path: str, zero_based: str, n_features: int | None) -> tuple[pl.DataFrame, int]: ...
def read_vw(path: str, bits: int, seed: int) -> pl.DataFrame: ...

class LibsvmBatches(Iterator[pl.DataFrame]):
    def __init__(
        self, path: str, zero_based: str, n_features: int | None, batch_rows: int
    ) -> None: ...
    def __iter__(self) -> LibsvmBatches: ...
    def __next__(self) -> pl.DataFrame: ...
    @property
    def n_features_seen(self) -> int: ...

class VwBatches(Iterator[pl.DataFrame]):
    def __init__(self, path: str, bits: int, seed: int, batch_rows: int) -> None: ...
    def __iter__(self) -> VwBatches: ...
    def __next__(self) -> pl.DataFrame: ...

def expand_series(series: pl.Series, options: dict[str, Any], parallel: bool) -> pl.Series: ...

_IndexArray = npt.NDArray[np.int32] | npt.NDArray[np.int64]

def expand_to_csr(
    series: pl.Series, options: dict[str, Any], parallel: bool
) -> tuple[_IndexArray, _IndexArray, npt.NDArray[np.float64]]: ...
def expansion_width(n_features: int, options: dict[str, Any]) -> int: ...
def expansion_monomial(column: int, options: dict[str, Any]) -> list[tuple[int, int]]: ...
def expansion_column(exponents: list[tuple[int, int]], options: dict[str, Any]) -> int: ...

class Learner:
    def __init__(self, options: dict[str, Any]) -> None: ...
    def options(self) -> dict[str, Any]: ...
    def learn(
        self,
        features: list[pl.Series],
        labels: pl.Series,
        weights: pl.Series | None = None,
        first_row: int = 0,
    ) -> tuple[float, float]: ...
    def fit(
        self,
        features: list[pl.Series],
        labels: pl.Series,
        weights: pl.Series | None,
        passes: int,
        shuffle_seed: int | None,
        holdout_period: int,
        early_stopping: int,
        average_tail: float = 0.0,
    ) -> tuple[int, list[float], list[float], bool]: ...
    def predict(self, features: list[pl.Series]) -> pl.Series: ...
    def to_bytes(self, estimator: str) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> tuple[Learner, str]: ...
    def save(self, path: str, estimator: str) -> None: ...
    @staticmethod
    def load(path: str) -> tuple[Learner, str]: ...
    @property
    def handle(self) -> int: ...
    @property
    def progress(self) -> tuple[int, float, float, int]: ...
    @property
    def is_trained(self) -> bool: ...
    def weights_at(self, slots: list[int]) -> list[float]: ...
    def namespace_seed(self, k: int) -> int: ...
    def begin_run(self, examples: int) -> None: ...
    def apple_parents(self) -> list[tuple[list[int], int, float]]: ...
    def apple_state(self) -> tuple[int, int, float, int] | None: ...

# A batch for PaCore: the int64 indptr, int64 indices and float64 data of a CSR matrix, or a
# C-contiguous dense float32/float64 matrix.
PaExamples = (
    tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]
    | npt.NDArray[np.float32]
    | npt.NDArray[np.float64]
)

class PaCore:
    def __init__(
        self,
        n_classes: int,
        n_features: int,
        rank: int,
        seed: int,
        variant: str,
        c: float,
        strategy: str,
        averaging_interval: int | None,
    ) -> None: ...
    @property
    def n_features(self) -> int: ...
    @property
    def n_classes(self) -> int: ...
    def stats(self) -> tuple[int, int, int, int, int]: ...
    def learn(
        self, examples: PaExamples, classes: npt.NDArray[np.uint32], first_row: int
    ) -> tuple[int, int, int, int, int]: ...
    def predict(self, examples: PaExamples, use_average: bool) -> npt.NDArray[np.uint32]: ...
    def decision_scores(
        self, examples: PaExamples, use_average: bool
    ) -> npt.NDArray[np.float64]: ...
    def export(
        self,
    ) -> tuple[
        str,
        int,
        int,
        int,
        int | None,
        int,
        tuple[int, int, int, int, int],
        list[list[float]],
        list[tuple[list[float] | None, int]],
    ]: ...
    @staticmethod
    def restore(
        strategy: str,
        n_classes: int,
        n_features: int,
        rank: int,
        averaging_interval: int | None,
        seen: int,
        stats: tuple[int, int, int, int, int],
        models: list[list[float]],
        averages: list[tuple[list[float] | None, int]],
        variant: str,
        c: float,
    ) -> PaCore: ...
    def __copy__(self) -> PaCore: ...

def read_idx_images(path: str) -> tuple[npt.NDArray[np.uint8], int, int]: ...
def read_idx_labels(path: str) -> npt.NDArray[np.uint8]: ...

class DigitStream:
    def __init__(
        self,
        pixels: npt.NDArray[np.uint8],
        labels: npt.NDArray[np.uint8],
        rows: int,
        cols: int,
        seed: int,
        alpha: float,
        sigma: float,
        max_rotation: float,
        max_scale: float,
        max_shear: float,
        max_translation: float,
    ) -> None: ...
    def batch(
        self, start: int, count: int
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.uint8]]: ...
