"""The digit stream: reproducible, cut-anywhere batches, labels of base image i mod N, real
distortions (not copies), and the MNIST IDX reader against the raw file bytes."""

from __future__ import annotations

import gzip

import numpy as np
import polars_poly as pp
import pytest

from tests.conftest import shared_file


def base_images() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    images = np.zeros((5, 28, 28), dtype=np.uint8)
    images[:, 8:20, 10:18] = rng.integers(100, 256, size=(5, 12, 8))
    return images, np.array([3, 1, 4, 1, 5], dtype=np.uint8)


def test_stream_is_seeded_and_independent_of_batching() -> None:
    images, labels = base_images()
    stream = pp.datasets.DigitStream(images, labels, seed=7)
    whole, whole_labels = stream.batch(0, 12)
    parts = [stream.batch(start, 4) for start in (0, 4, 8)]
    np.testing.assert_array_equal(whole, np.concatenate([p[0] for p in parts]))
    np.testing.assert_array_equal(whole_labels, labels[np.arange(12) % 5])
    again, _ = pp.datasets.DigitStream(images, labels, seed=7).batch(0, 12)
    np.testing.assert_array_equal(whole, again)
    other, _ = pp.datasets.DigitStream(images, labels, seed=8).batch(0, 12)
    assert not np.array_equal(whole, other)
    assert whole.dtype == np.float32 and 0.0 <= whole.min() and whole.max() <= 1.0


def test_distortions_move_pixels_and_none_reproduces_the_base() -> None:
    images, labels = base_images()
    exact = pp.datasets.DigitStream(
        images,
        labels,
        alpha=0.0,
        max_rotation=0.0,
        max_scale=0.0,
        max_shear=0.0,
        max_translation=0.0,
    )
    copies, _ = exact.batch(0, 5)
    np.testing.assert_allclose(copies, images.reshape(5, -1) / 255.0, atol=1e-6)
    warped, _ = pp.datasets.DigitStream(images, labels, seed=1).batch(0, 5)
    difference = np.abs(warped - copies).mean(axis=1)
    assert (difference > 0.01).all()
    # the ink moves but is roughly conserved (no blank or saturated images)
    np.testing.assert_allclose(warped.sum(axis=1), copies.sum(axis=1), rtol=0.35)


def test_bad_stream_input() -> None:
    images, labels = base_images()
    with pytest.raises(ValueError, match="labels"):
        pp.datasets.DigitStream(images, labels[:3])
    with pytest.raises(ValueError, match="shape"):
        pp.datasets.DigitStream(images.reshape(5, -1), labels)
    with pytest.raises(ValueError):
        pp.datasets.DigitStream(images, labels, sigma=-1.0)


def test_read_mnist_matches_the_raw_idx_bytes() -> None:
    images_path = shared_file("mnist_t10k", "t10k-images-idx3-ubyte.gz")
    labels_path = shared_file("mnist_t10k", "t10k-labels-idx1-ubyte.gz")
    images, labels = pp.datasets.read_mnist(images_path, labels_path)
    with gzip.open(images_path) as raw:
        raw_images = np.frombuffer(raw.read()[16:], dtype=np.uint8)
    with gzip.open(labels_path) as raw:
        raw_labels = np.frombuffer(raw.read()[8:], dtype=np.uint8)
    assert images.shape == (10_000, 28, 28)
    np.testing.assert_array_equal(images.ravel(), raw_images)
    np.testing.assert_array_equal(labels, raw_labels)
    with pytest.raises(ValueError):
        pp.datasets.read_mnist(labels_path, labels_path)


def test_mnist_test_set_and_its_distorted_stream() -> None:
    # Formerly Rust tests that passed silently without the data; here a missing file is a
    # visible skip.
    images, labels = pp.datasets.read_mnist(
        shared_file("mnist_t10k", "t10k-images-idx3-ubyte.gz"),
        shared_file("mnist_t10k", "t10k-labels-idx1-ubyte.gz"),
    )
    assert images.shape == (10_000, 28, 28) and labels.shape == (10_000,)
    assert (labels < 10).all() and labels[0] == 7
    stream = pp.datasets.DigitStream(images, labels, seed=1)
    # Example 10,003 is a distorted copy of base image 3 (the stream cycles over the images).
    pixels, label = stream.batch(10_003, 1)
    assert pixels.shape == (1, 784) and label[0] == labels[3]
    assert np.corrcoef(pixels[0], images[3].ravel() / 255.0)[0, 1] > 0.5
