"""An INFIMNIST-style endless stream of distorted digits, for the DoS experiment and for tests.

Example ``i`` of a stream is base image ``i mod N`` warped by a random elastic deformation
(Simard, Steinkraus & Platt 2003: per-pixel uniform [-1, 1] displacement fields smoothed by a
Gaussian of std ``sigma`` pixels and scaled by ``alpha``) composed with a small random affine
jitter (rotation, isotropic scale, horizontal shear, translation, each uniform in its range),
sampled bilinearly. All randomness comes from an RNG seeded by ``(seed, i)``, so the stream is
reproducible, can be cut into batches anywhere and is generated in parallel (``src/datasets``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from polars_poly import _internal


def read_mnist(
    images: str | os.PathLike[str], labels: str | os.PathLike[str]
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """MNIST IDX files (plain or gzip) as ``(images (n, rows, cols) uint8, labels (n,) uint8)``."""
    pixels, rows, cols = _internal.read_idx_images(os.fspath(images))
    targets = _internal.read_idx_labels(os.fspath(labels))
    return pixels.reshape(-1, rows, cols), targets


class DigitStream:
    """A seeded stream of distorted copies of ``images`` (``(n, rows, cols)`` uint8) with their
    ``labels``; defaults are the INFIMNIST-like settings (alpha 24, sigma 4, rotation +-0.1 rad,
    scale +-10%, shear +-0.1, translation +-1 px)."""

    def __init__(
        self,
        images: npt.ArrayLike,
        labels: npt.ArrayLike,
        *,
        seed: int = 0,
        alpha: float = 24.0,
        sigma: float = 4.0,
        max_rotation: float = 0.1,
        max_scale: float = 0.1,
        max_shear: float = 0.1,
        max_translation: float = 1.0,
    ) -> None:
        base = np.ascontiguousarray(images, dtype=np.uint8)
        if base.ndim != 3:
            raise ValueError(f"images must have shape (n, rows, cols), got {base.shape}")
        self.shape = (int(base.shape[1]), int(base.shape[2]))
        self._stream = _internal.DigitStream(
            base.ravel(),
            np.ascontiguousarray(labels, dtype=np.uint8),
            self.shape[0],
            self.shape[1],
            seed,
            alpha,
            sigma,
            max_rotation,
            max_scale,
            max_shear,
            max_translation,
        )

    def batch(
        self, start: int, count: int
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.uint8]]:
        """Examples ``start .. start + count``: pixels ``(count, rows * cols)`` float32 in [0, 1]
        and labels."""
        if start < 0 or count < 0:
            raise ValueError(f"start and count must be >= 0, got {start} and {count}")
        pixels, labels = self._stream.batch(start, count)
        return pixels.reshape(count, self.shape[0] * self.shape[1]), labels

    def batches(
        self, batch_size: int, total: int
    ) -> Iterator[tuple[npt.NDArray[np.float32], npt.NDArray[np.uint8]]]:
        """The first ``total`` examples in batches of ``batch_size``."""
        for start in range(0, total, batch_size):
            yield self.batch(start, min(batch_size, total - start))
