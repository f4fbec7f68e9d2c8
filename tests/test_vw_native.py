"""Fitting a Vowpal Wabbit file (a path, or ``scan_vw``'s LazyFrame as it is) learns it in the
engine end to end (``src/vw_run``): the model of fitting its frames, to the rounding of the
order its features are learned in (the file's, as in Vowpal Wabbit; a frame's are sorted)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import polars_poly as pp
import pytest


def write_file(path: Path, rows: int, labels: tuple[float, ...] = (-1.0, 1.0)) -> Path:
    rng = np.random.default_rng(7)
    lines = []
    for k in range(rows):
        a, b = rng.integers(0, 9), rng.integers(0, 6)
        label = labels[(a + b) % len(labels)]
        weight = f" {rng.uniform(0.5, 2):.2f}" if k % 3 else ""
        late = f" |z w{k % 4}" if k > rows // 2 else ""
        lines.append(f"{label}{weight} 'e{k} |a x{a} v:{rng.normal():.3f} |b y{b}{late}")
    path.write_text("\n".join(lines) + "\n")
    return path


def scores(model: pp.SGDRegressor | pp.SGDClassifier, frame: pl.DataFrame) -> np.ndarray:
    if isinstance(model, pp.SGDClassifier):
        return np.asarray(model.decision_function(frame))
    return np.asarray(model.predict(frame))


@pytest.mark.parametrize(
    "make",
    [
        lambda: pp.SGDRegressor(bits=16, interactions=[("a", "b"), ("a", "z")]),
        lambda: pp.SGDClassifier(loss="logistic", bits=16, interactions=[("a", "b")], passes=2),
        lambda: pp.SGDClassifier(loss="hinge", bits=16, expansion="quadratic"),
    ],
)
def test_a_scan_as_it_is_fits_the_model_of_its_frames(tmp_path, make) -> None:
    path = write_file(tmp_path / "train.vw", 3000)
    native = make().fit(pp.scan_vw(path, namespaces="auto"))
    # Any query on the scan is another frame: read as frames.
    frames = make().fit(pp.scan_vw(path, namespaces="auto").select(pl.all()))
    by_path = make().fit(str(path))
    test = pp.read_vw(path, namespaces="auto").head(500)
    np.testing.assert_allclose(scores(native, test), scores(frames, test), rtol=1e-6)
    np.testing.assert_array_equal(scores(by_path, test), scores(native, test))
    assert native.n_examples_ == frames.n_examples_
    assert native.pass_loss_ == pytest.approx(frames.pass_loss_, rel=1e-6)
    assert native.namespaces_ == frames.namespaces_ == ["a", "b", "z"]
    # The fitted model is an ordinary one: saved, loaded and scored the same.
    native.save(tmp_path / "m.model")
    loaded = pp.load_model(tmp_path / "m.model")
    np.testing.assert_array_equal(scores(loaded, test), scores(native, test))


def test_a_multiclass_file_and_averaging_take_the_frames_path(tmp_path) -> None:
    path = write_file(tmp_path / "three.vw", 900, labels=(1.0, 2.0, 3.0))
    model = pp.SGDClassifier(loss="logistic", bits=14).fit(pp.scan_vw(path, namespaces="auto"))
    assert list(model.classes_) == [1.0, 2.0, 3.0]
    binary = write_file(tmp_path / "two.vw", 900)
    with pytest.raises(ValueError, match="average_tail"):
        pp.SGDRegressor(average_tail=0.5).fit(pp.scan_vw(binary, namespaces="auto"))


def test_a_bad_line_is_an_error_naming_it(tmp_path) -> None:
    path = tmp_path / "bad.vw"
    path.write_text("1 |a x\n-1 1 0.5 |a y\n")
    with pytest.raises(ValueError, match=r"line 2: base \(initial prediction\) 0.5"):
        pp.SGDRegressor().fit(str(path))
    path.write_text("1 |a x:1\n-1 |a y:oops\n")
    with pytest.raises(ValueError, match="line 2"):
        pp.SGDRegressor().fit(pp.scan_vw(path, namespaces="auto"))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1e20", r"row 1: a feature has value 1e20 in magnitude, whose square overflows"),
        ("-1e39", r"row 1: a feature has a value beyond single precision \(above 3.4"),
    ],
)
def test_a_feature_that_overflows_is_an_error_naming_its_row(tmp_path, value, message) -> None:
    """``train`` learns such a row as vw does (predicted 0, not learned, a warning:
    test_cli_vw); a fit refuses it, as it refuses the same row of a frame, and the model is
    left unfitted rather than fitted without it in silence."""
    path = tmp_path / "big.vw"
    path.write_text(f"1 |a x:1\n-1 |a y:{value} x\n1 |a x:2\n")
    with pytest.raises(ValueError, match=message):
        pp.SGDRegressor().fit(str(path))
    with pytest.raises(ValueError, match=rf"row 1: .*{value}"):
        pp.SGDRegressor().fit(pp.read_vw(path, namespaces="auto"))


def test_a_path_is_scored_as_its_frames(tmp_path) -> None:
    """``predict``, ``decision_function`` and ``predict_proba`` take a path, as ``fit`` does:
    read as the model's namespaces, one the file lacks empty and one the model lacks left
    out."""
    path = write_file(tmp_path / "train.vw", 2000)
    model = pp.SGDClassifier(loss="logistic", interactions=[("a", "b")])
    model.fit(str(path))
    same = pp.SGDClassifier(loss="logistic", interactions=[("a", "b")])
    same.fit(pp.scan_vw(path, namespaces="auto"))
    frame = pp.read_vw(path, namespaces="auto")
    np.testing.assert_array_equal(model.decision_function(frame), same.decision_function(frame))
    np.testing.assert_array_equal(model.decision_function(path), same.decision_function(frame))
    np.testing.assert_array_equal(model.predict(str(path)), same.predict(frame))
    np.testing.assert_array_equal(model.predict_proba(path), same.predict_proba(frame))
    # A test file without namespace z and with a namespace q the model never saw.
    test = tmp_path / "test.vw"
    test.write_text("1 |a x1 |b y2 |q new\n-1 |b y3\n")
    expected = pp.read_vw(test, namespaces=["a", "b", "z"], other_namespaces="drop")
    np.testing.assert_array_equal(model.decision_function(test), model.decision_function(expected))
    assert model.predict(test).shape == (2,)


def test_a_path_is_scored_with_the_reader_flags_the_command_line_trained_with(tmp_path) -> None:
    from polars_poly.__main__ import main

    path = tmp_path / "train.vw"
    path.write_text("1 |t a b c\n-1 |t b c d\n1 |t a b d\n-1 |t c d e\n" * 50)
    assert (
        main(["train", "-d", str(path), "--ngram", "t2", "-f", str(tmp_path / "m"), "--quiet"]) == 0
    )
    model = pp.load_model(tmp_path / "m")
    frame = pp.read_vw(path, namespaces=["t"], ngram="t2")
    np.testing.assert_array_equal(model.predict(path), model.predict(frame))
    plain = pp.read_vw(path, namespaces=["t"])
    assert not np.array_equal(model.predict(frame), model.predict(plain))
