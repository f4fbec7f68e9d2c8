"""Start-up imports what it needs and no more (the timings: ``benches/suite/cli_startup.py``).

``polars-poly --help`` and ``train --help`` load neither the extension nor Polars, NumPy, SciPy,
scikit-learn, matplotlib, Dask or tqdm; ``import polars_poly`` loads none of them either, yet
registers ``pl.Expr.poly`` (with Polars imported before or after it) and gives every public name
on first use; ``train`` on Vowpal Wabbit text never imports Polars or PyArrow. Each check runs
in a fresh interpreter: this process has imported everything already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars_poly
import pytest

HEAVY = (
    "polars_poly._internal",
    "polars",
    "numpy",
    "pyarrow",
    "scipy",
    "sklearn",
    "pandas",
    "matplotlib",
    "dask",
    "distributed",
    "tqdm",
)

# Runs the command line as the console script does, then writes the loaded modules' names.
PROBE = """
import atexit, json, sys
from polars_poly.__main__ import main
atexit.register(lambda: json.dump(sorted(sys.modules), open({out!r}, "w")))
sys.argv = ["polars-poly", *{argv!r}]
sys.exit(main())
"""


def python(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter, warnings as errors."""
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True
    )


def loaded_after(code: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``code`` run, and the modules loaded at its exit (it writes them to ``{out!r}``)."""
    out = tmp_path / "modules.json"
    done = python(code.replace("{out!r}", repr(str(out))))
    modules = set(json.loads(out.read_text())) if out.exists() else set()
    return done, modules


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m in HEAVY or m.split(".")[0] in HEAVY)


@pytest.mark.parametrize("argv", [["--help"], ["train", "--help"], ["predict", "--help"]])
def test_help_imports_nothing_heavy(argv: list[str], tmp_path: Path) -> None:
    done, modules = loaded_after(PROBE.replace("{argv!r}", repr(argv)), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: polars-poly")
    assert heavy(modules) == []
    assert "polars_poly.cli" not in modules and "polars_poly.compare" not in modules


def test_a_usage_error_imports_nothing_heavy(tmp_path: Path) -> None:
    done, modules = loaded_after(PROBE.replace("{argv!r}", repr(["train", "--nope"])), tmp_path)
    assert done.returncode == 2 and "--nope" in done.stderr
    assert heavy(modules) == []


def test_compare_help_shows_its_description_and_defaults(tmp_path: Path) -> None:
    done, _ = loaded_after(PROBE.replace("{argv!r}", repr(["compare", "--help"])), tmp_path)
    assert done.returncode == 0, done.stderr
    assert "The apple paper's comparison" in done.stdout
    assert "--rates RATES" in done.stdout and "--field-scales {auto,on,off}" in done.stdout


def test_importing_the_package_imports_nothing_heavy(tmp_path: Path) -> None:
    code = """
import atexit, json, sys
atexit.register(lambda: json.dump(sorted(sys.modules), open({out!r}, "w")))
import polars_poly
"""
    done, modules = loaded_after(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert heavy(modules) == []


@pytest.mark.parametrize("polars_first", [True, False])
def test_the_poly_namespace_is_registered_whichever_is_imported_first(polars_first: bool) -> None:
    """Polars imported before the package, or after it (the package then registers the
    namespace as Polars' import ends): ``pl.Expr.poly`` works either way, and Polars itself
    is unchanged (its loader, its resources)."""
    first, second = (
        ("polars as pl", "polars_poly") if polars_first else ("polars_poly", "polars as pl")
    )
    code = f"""
import sys
import {first}
import {second}
assert "poly" in vars(pl.Expr), "not registered"
frame = pl.DataFrame({{"a": [3.0, 0.0], "b": [0.0, 2.0]}})
out = frame.select(pl.col("a").poly.to_sparse("b"))
assert [[e["index"] for e in row] for row in out["a"].to_list()] == [[0], [1]]
assert type(sys.modules["polars"].__spec__.loader).__name__ == "SourceFileLoader"
assert not any(type(f).__module__ == "polars_poly._with_polars" for f in sys.meta_path)
"""
    done = python(code)
    assert done.returncode == 0, done.stderr


def test_every_public_name_resolves_and_is_listed() -> None:
    code = """
import polars_poly
listed = dir(polars_poly)
for name in polars_poly.__all__:
    assert name in listed, name
    assert getattr(polars_poly, name) is not None, name
assert callable(polars_poly.expand) and callable(polars_poly.SGDRegressor)
"""
    done = python(code)
    assert done.returncode == 0, done.stderr
    # and in this process, where the test modules imported the package's modules in their order
    assert set(polars_poly.__all__) <= set(dir(polars_poly))
    assert all(getattr(polars_poly, name) is not None for name in polars_poly.__all__)


def test_the_poly_namespace_works_before_anything_else_is_imported() -> None:
    """``import polars_poly`` registers ``pl.Expr.poly``; its functions import what they need
    on first call."""
    code = """
import polars as pl
import polars_poly as pp
frame = pl.DataFrame({"a": [3.0, 0.0], "b": [0.0, 2.0]})
out = frame.select(pl.col("a").poly.to_sparse("b").poly.expand(n_features=2, degree=2))
assert [[e["index"] for e in row] for row in out["a"].to_list()] == [[0, 1, 3], [0, 2, 5]]
assert pl.Expr.poly.__name__ == "PolyNamespace"
assert callable(pp.expand) and pp.expand.__module__ == "polars_poly.polynomial"
"""
    done = python(code)
    assert done.returncode == 0, done.stderr


def test_the_program_trains_without_importing_scikit_learn(tmp_path: Path) -> None:
    """``python -m polars_poly train`` (the console script alike) runs its estimators on the
    stand-in base classes: scikit-learn is never imported, and the model it writes loads as
    any other (with scikit-learn's classes here)."""
    data, model = tmp_path / "d.vw", tmp_path / "m.bin"
    data.write_text("".join(f"{k % 3 - 1} |a x{k % 7} |b y{k % 5}\n" for k in range(300)))
    code = f"""
import atexit, json, runpy, sys
atexit.register(lambda: json.dump(sorted(sys.modules), open({{out!r}}, "w")))
sys.argv = ["polars-poly", "train", "-d", {str(data)!r}, "-q", "ab", "-f", {str(model)!r}]
runpy.run_module("polars_poly", run_name="__main__")
"""
    done, modules = loaded_after(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "sklearn" not in {m.split(".")[0] for m in modules}
    loaded = polars_poly.load_model(model)
    assert loaded.n_examples_ == 300 and loaded.get_params()["interactions"] == [("a", "b")]


@pytest.mark.parametrize(
    ("flags", "numpy"),
    [
        (["-q", "ab", "--readable_model", "{folder}/r.txt", "-p", "{folder}/p.txt"], False),
        (["--loss_function", "logistic", "--cache_file", "{folder}/c.cache"], True),
        (["--invert_hash", "{folder}/i.txt", "--passes", "2", "--holdout_off"], False),
    ],
)
def test_the_program_trains_on_vw_text_without_polars(
    flags: list[str], numpy: bool, tmp_path: Path
) -> None:
    """From Vowpal Wabbit text to the report, the predictions and the model file, the
    engine does the work: neither Polars (0.13 s to import) nor PyArrow is imported, nor NumPy
    but for a classifier's classes; the extension runs on its own allocator. The model
    loads and scores as any other."""
    data, model = tmp_path / "d.vw", tmp_path / "m.bin"
    data.write_text("".join(f"{k % 2 * 2 - 1} |a x{k % 7} |b y{k % 5}:0.5\n" for k in range(300)))
    argv = [f.replace("{folder}", str(tmp_path)) for f in flags]
    code = f"""
import atexit, json, runpy, sys
atexit.register(lambda: json.dump(sorted(sys.modules), open({{out!r}}, "w")))
sys.argv = ["polars-poly", "train", "-d", {str(data)!r}, "-f", {str(model)!r}, *{argv!r}]
runpy.run_module("polars_poly", run_name="__main__")
"""
    done, modules = loaded_after(code, tmp_path)
    assert done.returncode == 0, done.stderr
    roots = {m.split(".")[0] for m in modules}
    assert "polars_poly" in roots and "polars" not in roots and "pyarrow" not in roots
    assert ("numpy" in roots) == numpy
    loaded = polars_poly.load_model(model)
    assert loaded.n_examples_ == 300 * (2 if "--passes" in flags else 1)
    scores = loaded.predict(polars_poly.read_vw(data, namespaces=["a", "b"]))
    assert len(scores) == 300
