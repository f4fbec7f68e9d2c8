"""apple on one column of dense, heavy-tailed numeric features (no categorical fields).

Six features drawn normal, lognormal (sigma 1.2) or Student t with 3 degrees of freedom; the
label is drawn from a logistic model of ``1.5·z0·z1 + 0.5·z0`` (``z`` the standardized first two
features), the other four are noise. 50k rows to train, 10k to test, logistic loss, defaults
otherwise. Prints test logloss and progressive loss of linear, quadratic and apple (the default
race, ``typical``, ``max_magnitude``): whether powers and products of unbounded features
destabilize apple's online learning where no categorical field is involved.

    .venv/bin/python -m benches.experiments.apple_heavy_tails
"""

from __future__ import annotations

import numpy as np
import polars as pl
import polars_poly as pp
from sklearn.metrics import log_loss

MODELS = {
    "linear": "linear",
    "quadratic": "quadratic",
    "apple (default)": "apple",
    "apple typical": pp.Apple(ranking="typical"),
    "apple max_magnitude": pp.Apple(ranking="max_magnitude"),
}


def features(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "normal":
        return rng.normal(size=(n, 6))
    if kind == "lognormal":
        return rng.lognormal(0.0, 1.2, size=(n, 6))
    return rng.standard_t(3, size=(n, 6))


def main() -> None:
    rng = np.random.default_rng(0)
    n = 60_000
    rows = []
    for kind in ("normal", "lognormal", "student t3"):
        X = features(kind, n, rng)
        z = (X[:, :2] - X[:, :2].mean(axis=0)) / X[:, :2].std(axis=0)
        margin = 1.5 * z[:, 0] * z[:, 1] + 0.5 * z[:, 0]
        label = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-margin)), 1.0, -1.0)
        frame = pl.DataFrame({f"x{i}": X[:, i] for i in range(6)}).with_columns(label=label)
        train, test = frame.head(50_000), frame.tail(10_000)
        y = test["label"].to_numpy() > 0
        for name, expansion in MODELS.items():
            model = pp.SGDClassifier(loss="logistic", expansion=expansion).fit(train, "label")
            p = model.predict_proba(test.drop("label"))[:, 1]
            apple = name.startswith("apple")
            rows.append(
                {
                    "features": kind,
                    "model": name,
                    "kept": model.apple_ranking_ if apple else "",
                    "test logloss": round(float(log_loss(y, p, labels=[False, True])), 4),
                    "progressive": round(model.progressive_loss_, 4),
                }
            )
    with pl.Config(tbl_rows=20):
        print(pl.DataFrame(rows))


if __name__ == "__main__":
    main()
