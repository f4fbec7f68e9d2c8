"""Smoke test of an installed wheel (``make wheel-test``): every public entry point once, run
from outside the source tree in a virtual environment that has only the wheel and its
runtime dependencies (no Rust, no scikit-learn, no matplotlib, no dask)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp


def main() -> None:
    assert "site-packages" in pp.__file__, f"not the installed wheel: {pp.__file__}"
    work = Path(tempfile.mkdtemp())
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 3))
    y = X[:, 0] * X[:, 1] + 0.1 * rng.standard_normal(500)
    frame = pl.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y})

    # Expressions: sparse columns, expansion, hashing.
    sparse = frame.select(pp.to_sparse("a", "b", "c").alias("f"))
    expanded = sparse.select(pp.expand("f", n_features=3, degree=2))
    assert expanded.height == 500
    hashed = pl.DataFrame({"t": ["x", "y"]}).select(pp.hash_features("t", bits=10))
    assert hashed.height == 2
    csr = pp.expand_csr(pp.to_scipy(sparse["f"], 3), degree=2)
    assert csr.shape == (500, 10)
    assert pp.from_scipy(csr).dtype == pp.sparse_dtype() and pp.n_features(sparse["f"]) == 3
    assert "squared" in pp.LOSSES and pp.RANKINGS and pp.SCHEDULES and pp.IDENTITIES
    assert callable(pp.datasets.read_mnist)

    # Learners, scoring in a query, the model file.
    model = pp.SGDRegressor(expansion=pp.Apple(alpha=0.5), progress=False).fit(frame, "y")
    scored = frame.lazy().select(model.predict_expr()).collect(engine="streaming")
    assert np.allclose(scored.to_series().to_numpy(), model.predict(frame))
    assert model.history_.height > 5
    path = work / "m.bin"
    model.save(path)
    assert np.array_equal(pp.load_model(path).predict(frame), model.predict(frame))
    labels = (frame["y"] > 0).cast(pl.Int8)
    classifier = pp.SGDClassifier(progress=False).fit(frame.drop("y"), labels.to_numpy())
    assert classifier.predict_proba(frame.drop("y")).shape == (500, 2)
    kinds = pl.Series(["low", "mid", "high"])[np.digitize(frame["y"].to_numpy(), [-0.3, 0.3])]
    multiclass = pp.SGDClassifier(progress=False).fit(frame.drop("y"), kinds)
    assert multiclass.predict_proba(frame.drop("y")).shape == (500, 3)
    names = pp.hashed_feature_names(pl.DataFrame({"t": ["x", "y"]}), "t", bits=10)
    assert set(names["name"]) == {"t=x", "t=y"}
    dos = pp.DoSClassifier(rank=2, progress=False).fit(frame.drop("y"), labels.to_numpy())
    assert set(dos.predict(frame.drop("y")).tolist()) <= {0, 1}

    passive = pp.PassiveAggressiveClassifier(progress=False).fit(frame.drop("y"), labels)
    assert passive.predict(frame.drop("y")).shape == (500,)
    expander = pp.PolynomialExpander(degree=2).fit(X)
    assert expander.transform(X).shape == (500, pp.output_width(3, 2))
    assert pp.feature_name(5, 3, 2) == "x0 x1" and pp.monomial(5, 3, 2) == [(0, 1), (1, 1)]
    assert pp.column_of({0: 1, 1: 1}, 3, 2) == 5
    assert np.array_equal(pp.to_numpy(pp.from_numpy(X), 3), X)
    assert frame.select(pl.col("a").poly.to_sparse("b")).height == 500
    eat = pp.synthetic.eat_rate(2000, seed=0, varieties=10, noise_fields=2)
    fields = eat.select("label", *(pp.hash_features(f, bits=16).alias(f) for f in "AB"))
    crossed = pp.SGDClassifier(expansion=pp.FieldApple(), bits=16, progress=False)
    assert crossed.fit(fields, "label").n_examples_ == 2000
    factorized = pp.SGDClassifier(ffm=pp.FFM(k=2, bits=10), bits=16, progress=False)
    # Two columns: the pair and each column's own (empty) pairs.
    assert factorized.fit(fields, "label").ffm_pairs(fields.drop("label")).height == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pp.SGDClassifier(bits=4, progress=False).fit(fields, "label")
    assert any(issubclass(w.category, pp.TableSaturationWarning) for w in caught)

    # Readers.
    svm = work / "d.svm"
    svm.write_text("1 1:0.5 3:1\n0 2:1\n")
    assert pp.read_libsvm(svm).height == 2
    assert pp.scan_libsvm(svm).collect().height == 2
    assert sum(b.height for b in pp.iter_libsvm(svm, batch_size=1)) == 2
    vw = work / "d.vw"
    vw.write_text("1 |A x |B y\n-1 |A z |B y\n")
    assert pp.read_vw(vw, namespaces="AB").columns[-2:] == ["A", "B"]
    assert pp.scan_vw(vw).collect().height == 2
    assert sum(b.height for b in pp.iter_vw(vw, batch_size=1)) == 2

    # The optional extras say what to install when they are missing.
    try:
        import polars_poly.dask  # noqa: F401
    except ImportError as err:
        assert "pip install 'polars-poly[dask]'" in str(err), err
    else:
        raise AssertionError("dask is not in the wheel's environment")

    # The console script.
    script = Path(sys.executable).with_name("polars-poly")
    done = subprocess.run(
        [str(script), "train", "-d", str(vw), "-q", "AB", "--loss_function", "logistic"],
        capture_output=True,
        text=True,
        cwd=work,
        env={**os.environ},
    )
    assert done.returncode == 0, done.stderr
    assert "average loss" in done.stderr
    # The demo runs without matplotlib and Vowpal Wabbit, and says what the plot needs.
    demo = subprocess.run(
        [sys.executable, "-m", "polars_poly", "demo"], capture_output=True, text=True, cwd=work
    )
    assert demo.returncode == 0, demo.stderr
    assert "Best test error" in demo.stdout and "pip install matplotlib" in demo.stdout
    # Every public name was used above.
    source = Path(__file__).read_text()
    unused = [
        name for name in pp.__all__ if not name.startswith("__") and f"pp.{name}" not in source
    ]
    assert not unused, f"the smoke test does not use {unused}"
    print(f"wheel smoke test passed: polars_poly {pp.__version__} from {pp.__file__}")


if __name__ == "__main__":
    main()
