"""Writes ``apple_fields.model`` and ``expected.json`` with the build of format 7 (commit
1776967), for ``tests/test_params.py::test_format_7_apple_with_field_crosses_predicts_as_trained``.

apple beside field crosses on hashed fields and a numeric column ``N``: its parents come from
``N``, and in format 7 their children multiplied the fields' values too (format 8 leaves them
out). Run from the repository with the old build first on the path, for example its wheel
unpacked into ``/tmp/oldpkg``:

    PYTHONPATH=/tmp/oldpkg .venv/bin/python tests/data/format7/make_model.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
from polars_poly.synthetic import eat_rate

HERE = Path(__file__).parent


def mixed_rows(n: int) -> pl.DataFrame:
    """eat-rate in miniature (20 animals and foods, 2 noise fields of 200 values) beside two
    standard normal columns in one sparse column ``N``; deterministic."""
    frame = eat_rate(n, seed=5, varieties=20, noise_fields=2, noise_values=200)
    rng = np.random.default_rng(5)
    frame = frame.with_columns(u=rng.normal(size=n), v=rng.normal(size=n))
    fields = [c for c in frame.columns if c not in ("label", "u", "v")]
    return frame.select(
        "label", *(pp.hash_features(f, bits=12).alias(f) for f in fields), N=pp.to_sparse("u", "v")
    )


def main() -> None:
    data = mixed_rows(3_000)
    model = pp.SGDClassifier(loss="logistic", bits=12, expansion=pp.Apple(ranking="typical"))
    model.fit(data, "label")
    assert model.n_parents_ > 0, "the file must hold parents whose children the formats differ on"
    model.save(HERE / "apple_fields.model")
    expected = {
        "n_parents": model.n_parents_,
        "proba": model.predict_proba(data.head(200).drop("label"))[:, 1].tolist(),
    }
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    print(f"wrote with {pp.__file__}: {model.n_parents_} parents", file=sys.stderr)


if __name__ == "__main__":
    main()
