"""The apple comparison: data set loaders, the paper's relative error/time, an end-to-end run
on the bundled data (and Vowpal Wabbit on the same split when installed), the command line."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from polars_poly import benchdata
from polars_poly import compare as cmp
from polars_poly.__main__ import main

from tests.conftest import SHARED_DATA

DATA = SHARED_DATA
needs_data = pytest.mark.skipif(
    not DATA.is_dir(), reason=f"shared benchmark data not available: {DATA} (set POLARS_POLY_DATA)"
)


def test_rel_err_follows_the_paper() -> None:
    # Baselines lin, quad, cubic = 0.30, 0.20, 0.25: min 0.20, max 0.30.
    base = [0.30, 0.20, 0.25]
    assert cmp.rel_err(0.20, base) == 0.0
    assert cmp.rel_err(0.30, base) == pytest.approx(1.0)
    assert cmp.rel_err(0.25, base) == pytest.approx(0.5)
    assert cmp.rel_err(0.15, base) == pytest.approx(-0.5)
    assert cmp.rel_err(0.2, [0.2, math.nan, 0.3]) == 0.0, "missing baselines are left out"
    assert cmp.rel_err(0.1, [0.2, 0.2, 0.2]) == -math.inf
    assert math.isnan(cmp.rel_err(0.1, [math.nan]))


def test_split_and_cubic_size() -> None:
    X = sp.csr_array(np.arange(20.0).reshape(10, 2))
    y = np.arange(10.0)
    Xtr, ytr, Xte, yte = cmp.split(X, y, seed=3)
    assert Xtr.shape == (8, 2) and Xte.shape == (2, 2)
    assert sorted(np.concatenate([ytr, yte]).tolist()) == y.tolist()
    # Row with 2 nonzeros: C(4,3) + C(3,2) + 2 + 1 = 4 + 3 + 3 = 10 cubic features.
    assert cmp.cubic_updates(sp.csr_array(np.array([[1.0, 2.0]]))) == 10
    assert cmp.test_error(
        np.array([0.5, -1.0, 0.0]), np.array([1.0, 1.0, -1.0]), "classification"
    ) == pytest.approx(1 / 3)
    assert cmp.test_error(np.array([1.0, 3.0]), np.array([0.0, 1.0]), "regression") == 2.5


@needs_data
@pytest.mark.parametrize(
    ("name", "rows", "width", "task"),
    [
        ("a9a", 32_561, 123, "classification"),  # LIBSVM, gzip
        ("abalone", 4_177, 8, "regression"),  # LIBSVM
        ("heart", 270, 13, "classification"),  # PMLB TSV
        ("magic04", 19_020, 10, "classification"),  # CSV without header, string labels
        ("eeg_eye_state", 14_980, 14, "classification"),  # ARFF
        ("space_ga", 3_107, 6, "regression"),  # CSV, target first
        ("shuttle", 58_000, 9, "classification"),  # multiclass -> most frequent vs rest
    ],
)
def test_loaders_read_every_format(name: str, rows: int, width: int, task: str) -> None:
    X, y, got_task = benchdata.load_dataset(name, DATA)
    assert X.shape == (rows, width)
    assert got_task == task
    assert np.isfinite(X.data).all() and np.isfinite(y).all()
    if task == "classification":
        assert set(np.unique(y).tolist()) == {-1.0, 1.0}


@needs_data
def test_every_shared_data_set_is_known() -> None:
    present = {p.name for p in DATA.iterdir() if p.is_dir()}
    assert set(benchdata.list_datasets(DATA)) == present


def test_bundled_comparison_end_to_end(tmp_path: Path) -> None:
    table = cmp.compare(
        ["german.numer"],
        None,
        algorithms=["lin", "quad", "apple", "apple_vw"],
        rates=[0.25, 0.5],
        seeds=[0, 1],
        out_dir=tmp_path,
        log=lambda _: None,
    )
    assert table.height == 8
    assert set(table["algorithm"]) == {"lin", "quad", "apple", "apple_vw"}
    assert table["seed"].to_list() == [0] * 4 + [1] * 4
    assert ((table["error"] >= 0) & (table["error"] <= 1)).all()
    assert (table["features_per_s"] > 0).all()
    lin = table.filter(table["algorithm"] == "lin").row(0, named=True)
    assert lin["rel_time"] == 1.0 and lin["rel_err"] in (0.0, 1.0)
    # The default rate 0.5 is in the grid: its error is reported.
    assert table["error_default"].is_finite().all()
    for name in ("compare.csv", "rel_err_time_cdf.png", "tradeoff.png"):
        assert (tmp_path / name).stat().st_size > 0
    with pytest.raises(ValueError, match="unknown algorithms"):
        cmp.compare(["german.numer"], None, algorithms=["quintic"])


@pytest.mark.skipif(not cmp.vw_available(), reason="vowpalwabbit not installed")
def test_vowpal_wabbit_side_matches_ours_on_fixed_expansions(tmp_path: Path) -> None:
    # Same hashing and update rule: the linear and quadratic test errors are equal.
    table = cmp.compare(
        ["german.numer"],
        None,
        algorithms=["lin", "quad"],
        rates=[0.5],
        vw=True,
        log=lambda _: None,
    )
    ours = table.filter(table["system"] == "ours").sort("algorithm")
    vw = table.filter(table["system"] == "vw").sort("algorithm")
    assert ours["error"].to_list() == pytest.approx(vw["error"].to_list(), abs=1e-9)

    # ... from the same features: the counts of generated features agree with its own.
    def generated(frame: pl.DataFrame) -> list[float]:
        return (frame["features_per_s"] * frame["seconds"]).to_list()

    assert generated(ours) == pytest.approx(generated(vw), rel=1e-6)
    assert "ours vs VW lin" in cmp.format_summary(table)


@pytest.mark.skipif(not cmp.vw_available(), reason="vowpalwabbit not installed")
def test_vowpal_wabbit_can_run_a_subset() -> None:
    table = cmp.compare(
        ["german.numer"],
        None,
        algorithms=["lin", "quad"],
        rates=[0.5],
        vw=True,
        vw_algorithms=["quad"],
        log=lambda _: None,
    )
    ran = sorted(zip(table["system"].to_list(), table["algorithm"].to_list(), strict=True))
    assert ran == [("ours", "lin"), ("ours", "quad"), ("vw", "quad")]
    with pytest.raises(ValueError, match="not among the algorithms"):
        cmp.compare(["german.numer"], None, algorithms=["lin"], vw=True, vw_algorithms=["quad"])
    with pytest.raises(ValueError, match="add apple"):
        cmp.compare(
            ["german.numer"],
            None,
            algorithms=["apple", "apple_best"],
            vw=True,
            vw_algorithms=["apple_best"],
        )


def test_summary_counts_runs() -> None:
    def row(seed: int, system: str, algorithm: str, error: float, seconds: float) -> dict:
        return {
            "dataset": "d",
            "seed": seed,
            "system": system,
            "algorithm": algorithm,
            "error": error,
            "seconds": seconds,
            "rel_err": {0.1: -0.5, 0.2: 0.0, 0.3: 0.6}.get(error, math.nan),
            "rel_time": seconds,
            "error_spread": 0.5,
            "error_default": error * 1.05 if seed == 0 else error * 2,
        }

    table = pl.DataFrame(
        [
            row(0, "ours", "apple", 0.1, 2.0),
            row(1, "ours", "apple", 0.3, 4.0),
            row(0, "vw", "apple", 0.2, 8.0),
            row(1, "vw", "apple", 0.2, 1.0),
        ]
    )
    s = cmp.summary(table)
    assert (s["ours.apple.n"], s["ours.apple.rel_err<0.5"], s["ours.apple.rel_err<0"]) == (2, 1, 1)
    assert s["ours.apple.median_rel_time"] == 3.0
    assert (s["ours.apple.default_near"], s["ours.apple.default_n"]) == (1, 2)
    assert (s["vs_vw.apple.n"], s["vs_vw.apple.error_no_worse"], s["vs_vw.apple.faster"]) == (
        2,
        1,
        1,
    )
    assert s["vs_vw.apple.median_speedup"] == pytest.approx((4.0 + 0.25) / 2)
    assert "ours vs VW apple: error no worse on 1/2" in cmp.format_summary(table)


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(
        [
            "compare",
            "--bundled",
            "--algorithms",
            "lin,quad",
            "--rates",
            "0.5",
            "--out",
            str(tmp_path),
        ]
    )
    printed = capsys.readouterr().out
    assert "german.numer" in printed and "quad" in printed
    assert (tmp_path / "compare.csv").exists()
    with pytest.raises(SystemExit):
        main(["compare", "--rates", "fast"])


def test_the_plots_are_optional(monkeypatch) -> None:
    from polars_poly.compare import plots_available

    assert plots_available()  # matplotlib is a test dependency
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an install without it sees
    assert not plots_available()


@needs_data
@pytest.mark.parametrize(("name", "seed"), [("adult", 2), ("australian", 4), ("eeg_eye_state", 0)])
def test_apple_fits_raw_scales_at_every_rate_of_the_grid(name: str, seed: int) -> None:
    # adult's raw columns reach 1.5e6, australian's 1e5, eeg_eye_state has outliers of 7e5:
    # apple once grew products of 2e19-6e20 there, whose squares single precision cannot hold,
    # and the learner refused the row, ending the whole comparison. Candidates whose children
    # could overflow are no longer parents, and an outlier row's overflowing children are left
    # out of that row.
    X, y, _ = benchdata.load_dataset(name, DATA)
    Xtr, ytr, _, _ = cmp.split(X, y, seed)
    for rate in cmp.DEFAULT_RATES:
        model = cmp._fit_ours("apple", rate, 1.0, Xtr, ytr)[0]
        assert model.n_expansions_ == 5
        assert np.isfinite(model.predict(Xtr)).all()
