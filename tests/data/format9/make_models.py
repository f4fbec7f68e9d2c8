"""Writes one model file of each kind and ``expected.json`` with the build of format 9 (commit
822cc86), for ``tests/test_persistence.py::test_format_9_models_predict_as_trained``: format
10 stores every component's options by name, and these files hold them by position.

Run from the repository with the old build first on the path, for example its wheel unpacked
into ``/tmp/oldpkg``:

    PYTHONPATH=/tmp/oldpkg .venv/bin/python tests/data/format9/make_models.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp

HERE = Path(__file__).parent


def rows(n: int = 600) -> pl.DataFrame:
    """Two numeric columns, a hashed field pair and labels for each model kind; deterministic."""
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=n), rng.normal(size=n)
    city, hour = rng.integers(0, 30, n), rng.integers(0, 24, n)
    return pl.DataFrame(
        {
            "a": a,
            "b": b,
            "city": [f"c{v}" for v in city],
            "hour": [f"h{v}" for v in hour],
            "y": a * b + 0.5 * a,
            "label": (a * b + ((city + hour) % 3 == 0) > 0.3).astype(np.int64),
            "kind": (np.digitize(a + b, [-0.7, 0.7])).astype(np.int64),
        }
    )


def models(data: pl.DataFrame) -> dict[str, tuple[object, pl.DataFrame, str]]:
    """Name -> (fitted model, its input, the prediction compared)."""
    numeric = data.select("a", "b")
    fields = data.select(
        pp.hash_features("city", bits=10).alias("city"),
        pp.hash_features("hour", bits=10).alias("hour"),
        N=pp.to_sparse("a", "b"),
    )
    regressor = pp.SGDRegressor(
        bits=10, expansion="quadratic", l2=1e-6, initial_weight=0.01, shuffle=False
    ).fit(numeric, data["y"])
    apple = pp.SGDClassifier(loss="logistic", bits=10, expansion=pp.Apple(), shuffle=False)
    apple.fit(fields, data["label"])
    assert apple.n_parents_ > 0, "the file must hold apple parents"
    classes = pp.SGDClassifier(loss="logistic", bits=10, shuffle=False).fit(numeric, data["kind"])
    dos = pp.DoSClassifier(rank=2, averaging=100, random_state=3).fit(numeric, data["kind"])
    pa = pp.PassiveAggressiveClassifier(averaging=100).fit(numeric, data["label"])
    return {
        "regressor": (regressor, numeric, "predict"),
        "apple_fields": (apple, fields, "decision_function"),
        "one_against_all": (classes, numeric, "decision_function"),
        "dos": (dos, numeric, "decision_function"),
        "passive_aggressive": (pa, numeric, "decision_function"),
    }


def main() -> None:
    data = rows()
    expected = {}
    for name, (model, inputs, method) in models(data).items():
        model.save(HERE / f"{name}.model")  # type: ignore[attr-defined]
        expected[name] = np.asarray(getattr(model, method)(inputs.head(60))).tolist()
    (HERE / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"wrote with {pp.__file__}", file=sys.stderr)


if __name__ == "__main__":
    main()
