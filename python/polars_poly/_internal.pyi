"""Type stubs for the compiled extension module (src/python/)."""

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

__version__: str
LOSSES: list[str]
RANKINGS: list[str]
SCHEDULES: list[str]
IDENTITIES: list[str]

FORMATS: list[str]

def read(format: str, path: str, options: dict[str, Any]) -> pl.DataFrame: ...
def reader_schema(format: str, options: dict[str, Any]) -> pl.DataFrame: ...
def vw_namespaces(path: str, options: dict[str, Any]) -> list[str]: ...
def vw_scan(
    path: str, options: dict[str, Any], cache: bool = False
) -> tuple[list[str], list[float], bool]: ...
def vw_prediction_lines(predictions: list[float], tags: list[str | None] | None = None) -> str: ...

class VwReport:
    def __init__(
        self,
        loss: str,
        quantile_tau: float = 0.5,
        holdout: bool = False,
        progress: str | None = None,
        quiet: bool = False,
        history: bool = False,
    ) -> None: ...
    def add(
        self,
        labels: list[float],
        weights: list[float],
        predictions: list[float],
        losses: list[float],
        features: list[int],
        holdout: list[bool],
    ) -> list[str]: ...
    def end_pass(self) -> bool: ...
    def summary(self) -> list[str]: ...
    def rows(
        self,
    ) -> list[tuple[int, float, float | None, float | None, bool, float | None, float, int]]: ...

def vw_train(
    learner: Learner,
    data: str | None,
    cache: str | None,
    options: dict[str, Any],
    *,
    write_cache: bool,
    scan: tuple[list[str], list[float], bool] | None,
    passes: int,
    holdout_period: int,
    early_terminate: int,
    test_only: bool,
    classes: tuple[float, float] | None,
    batch_rows: int,
    progress: str | None,
    quiet: bool,
    history: bool,
    predictions: str | None,
    print: Callable[[list[str]], None],
    link: str = "identity",
    binary: bool = False,
    audit: Callable[[str], object] | None = None,
) -> tuple[
    int,
    int,
    list[str],
    list[tuple[int, float, float | None, float | None, bool, float | None, float, int]],
    VwReport,
]: ...
def vw_feature_names(
    path: str,
    options: dict[str, Any],
    *,
    namespaces: list[str],
    crosses: list[list[int]],
    constant: bool,
    bits: int,
) -> dict[int, str]: ...
def vw_readable_model(
    learner: Learner,
    path: str,
    report: VwReport | None,
    *,
    version: str,
    options: str,
    ngram: list[str],
    skips: list[str],
    save_resume: bool,
    names: dict[int, str] | None = None,
) -> None: ...

class Batches(Iterator[pl.DataFrame]):
    def __init__(
        self, format: str, path: str, options: dict[str, Any], batch_rows: int
    ) -> None: ...
    def __iter__(self) -> Batches: ...
    def __next__(self) -> pl.DataFrame: ...
    @property
    def summary(self) -> list[tuple[str, int]]: ...

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
    def learn_recording(
        self,
        features: list[pl.Series],
        labels: pl.Series,
        weights: pl.Series | None = None,
        first_row: int = 0,
    ) -> tuple[float, float, pl.Series]: ...
    def learn_scored(
        self,
        features: list[pl.Series],
        labels: pl.Series,
        weights: pl.Series | None = None,
        first_row: int = 0,
        held_out: list[bool] | None = None,
    ) -> tuple[pl.Series, pl.Series, pl.Series]: ...
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
    ) -> tuple[int, list[float], list[float], bool, list[tuple[int, float, float, int]]]: ...
    def predict(self, features: list[pl.Series], output: str = ...) -> pl.Series: ...
    def to_bytes(self, estimator: str) -> bytes: ...
    @property
    def nbytes(self) -> int: ...
    def __copy__(self) -> Learner: ...
    def fork(self, ranking: str, linear: bool = False) -> Learner: ...
    def check_batch(
        self,
        features: list[pl.Series],
        labels: pl.Series,
        weights: pl.Series | None = None,
        first_row: int = 0,
    ) -> None: ...
    def apple_next_expansion(self) -> tuple[int, bool] | None: ...
    def save(self, path: str, estimator: str) -> None: ...
    @property
    def handle(self) -> int: ...
    @property
    def progress(self) -> tuple[int, float, float, int]: ...
    @property
    def is_trained(self) -> bool: ...
    def weights_at(self, slots: list[int]) -> list[float]: ...
    def namespace_seed(self, k: int) -> int: ...
    def field_scales(self) -> list[float] | None: ...
    def linear_coefficients(
        self, k: int, n: int, constant: bool
    ) -> tuple[list[float], float] | None: ...
    def begin_run(self, examples: int) -> None: ...
    def field_crosses(self) -> list[tuple[int, int, int]]: ...
    def field_candidates(self) -> list[tuple[int, int, float, float, int, bool]]: ...
    def apple_parents(self) -> list[tuple[list[int], int, float]]: ...
    def apple_state(self) -> tuple[int, int, float, int] | None: ...

def set_engine_stop(requested: bool) -> None: ...
def chain_sigint() -> bool: ...
def average_learners(start: Learner | None, shards: list[Learner], weighting: str) -> Learner: ...

# The classifier's input: its one sparse column, or a C-contiguous float32/float64 matrix.
PaFeatures = list[pl.Series] | npt.NDArray[np.float32] | npt.NDArray[np.float64]

class PaCore:
    def __init__(self, options: dict[str, Any]) -> None: ...
    def options(self) -> dict[str, Any]: ...
    def stats(self) -> tuple[int, int, int, int, int]: ...
    def learn(
        self, features: PaFeatures, classes: npt.NDArray[np.uint32], first_row: int
    ) -> tuple[int, int, int, int, int]: ...
    def check(self, features: PaFeatures, first_row: int) -> None: ...
    def predict(self, features: PaFeatures, use_average: bool = True) -> npt.NDArray[np.uint32]: ...
    def decision_scores(
        self, features: PaFeatures, use_average: bool
    ) -> npt.NDArray[np.float64]: ...
    def to_bytes(self, estimator: str) -> bytes: ...
    def save(self, path: str, estimator: str) -> None: ...
    @property
    def handle(self) -> int: ...
    def __copy__(self) -> PaCore: ...
    @property
    def nbytes(self) -> int: ...

def average_pa_cores(start: PaCore | None, shards: list[PaCore]) -> PaCore: ...
def load_model(path: str) -> tuple[Learner | PaCore, str]: ...
def model_from_bytes(data: bytes) -> tuple[Learner | PaCore | list[Learner], str]: ...
def heads_to_bytes(heads: list[Learner], estimator: str) -> bytes: ...
def save_heads(heads: list[Learner], path: str, estimator: str) -> None: ...
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
