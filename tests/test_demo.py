"""The demo explains itself: a headline (what was trained, which won, by how much, where the
files went), terms defined, no jargon columns, no empty plot."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars_poly import compare, demo


def test_the_demo_says_what_it_did_and_writes_a_plot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    monkeypatch.setattr(compare, "vw_available", lambda: False)  # ours only: quicker
    demo.run_demo(tmp_path / "out")
    text = capsys.readouterr().out
    assert text.startswith("polars-poly demo: linear, quadratic, cubic and apple models")
    assert "Best test error: " in text and "test error: share of the test rows" in text
    assert f"written to {tmp_path / 'out'}/: compare.csv, models.png" in text
    for jargon in ("rel_err", "Mfeat", "rel_time"):
        assert jargon not in text
    # apple's monomials are shown, with what the race kept (never an empty table).
    assert "kept the linear model here" in text or "chose to expand" in text
    assert " 0 monomials in" not in text
    assert (tmp_path / "out" / "models.png").stat().st_size > 10_000  # bars, not an empty frame


def _table(errors: dict[tuple[str, str], float]) -> pl.DataFrame:
    rows = [
        {"system": s, "algorithm": a, "error": e, "seconds": 0.01 if s == "ours" else 0.2}
        for (s, a), e in errors.items()
    ]
    return pl.DataFrame(rows)


def test_the_headline_names_the_winner_and_the_margin() -> None:
    won = _table({("ours", "lin"): 0.30, ("ours", "quad"): 0.25, ("ours", "apple"): 0.21})
    assert demo.headline(won, vw=False) == (
        "Best test error: apple (adaptive), 21.0%, 9.0 points better than linear."
    )
    lost = _table(
        {("ours", "lin"): 0.20, ("ours", "apple"): 0.25, ("vw", "apple"): 0.26, ("vw", "lin"): 0.2}
    )
    text = demo.headline(lost, vw=True)
    assert text.startswith("Best test error: linear, 20.0%.\napple (25.0%) does not beat linear")
    assert text.endswith("test error 25.0% vs 26.0%,\n20x faster in this run.")
