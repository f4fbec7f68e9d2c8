"""pyFFM, the batch field-aware factorization machine peer, run in an interpreter of its own.

pyFFM 0.0.7 pins numpy 1.18 and pandas 1.4 (no wheels for CPython 3.11), but its code runs on
today's numpy and numba: install it without its pins into a separate environment,

    python3 -m venv /tmp/ffmenv
    /tmp/ffmenv/bin/pip install --no-deps pyffm==0.0.7
    /tmp/ffmenv/bin/pip install numpy numba pandas

and hand that interpreter to ``benches.suite.categorical_peers`` as
``--pyffm-python /tmp/ffmenv/bin/python``,
which writes the data with ``write_input`` and runs this file (standard library, numpy and pyffm
only: it must not import the project). pyFFM's own defaults: 4 latent dimensions, rate 0.2,
lambda 0.002, instance normalization, AdaGrad; its ``train`` holds out the last tenth of the
training rows and reports their logloss after each epoch; here with early stopping (it stops at
the first epoch whose held-out loss rises), at most ``--epochs`` epochs.

Input (``.npz``): ``features`` (rows x fields, a global feature index per cell), ``labels``
(+1/-1), ``n_train``. Output (``.npz``): the test rows' probabilities and the training seconds
(numba's compilation excluded: a warm-up on a few rows first).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np


def write_input(path: Path, features: np.ndarray, labels: np.ndarray, n_train: int) -> None:
    """The runner's input: global feature indices per row and field, +1/-1 labels."""
    np.savez(path, features=features.astype(np.int64), labels=labels, n_train=n_train)


def cells(features: np.ndarray) -> np.ndarray:
    """pyFFM's layout: rows x fields x (field, feature, value)."""
    rows, fields = features.shape
    x = np.empty((rows, fields, 3))
    x[:, :, 0] = np.arange(fields)[None, :]
    x[:, :, 1] = features
    x[:, :, 2] = 1.0
    return x


def trained(x: np.ndarray, y: np.ndarray, n_features: int, epochs: int) -> Any:
    from pyffm import PyFFM

    params = {"epochs": epochs, "early_stop": True, "sigmoid": True}
    model = PyFFM(model="ffm", training_params=params, log_level="WARNING")
    engine = model.engine
    engine.num_fields = int(x.shape[1])
    engine.num_features = n_features
    held = len(x) - len(x) // 10  # pyFFM's own split (split_frac 0.1)
    engine.train(x_train=x[:held], y_train=y[:held], x_test=x[held:], y_test=y[held:])
    return engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    data = np.load(args.input)
    features, labels, n_train = data["features"], data["labels"], int(data["n_train"])
    x, y = cells(features), labels.astype(np.float64)
    n_features = int(features.max()) + 1
    trained(x[:2000], y[:2000], n_features, 1)  # numba compiles here, not in the timed fit
    began = time.perf_counter()
    engine = trained(x[:n_train], y[:n_train], n_features, args.epochs)
    took = time.perf_counter() - began
    p = engine.predict(x[n_train:])
    epochs = int(engine.best_loss_epoch) + 1 if engine.best_loss_epoch is not None else 0
    np.savez(args.output, p=p, fit_s=took, best_epoch=epochs)


if __name__ == "__main__":
    main()
