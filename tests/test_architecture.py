"""The code's shape, checked: the import graphs of src/ (the engine's modules, the files inside
each, the bindings in src/python) and of the Python package have no cycle, the base learner
never names apple or the model layer above it, the engine uses no PyO3/Polars types, the
registries have no catch-all arm (docs/architecture.md), and no production file grows past
about 800 lines unnoticed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PACKAGE = REPO / "python" / "polars_poly"
ENGINE_MACROS = {"invalid", "named_registry", "with_rows"}


def _code(path: Path) -> str:
    """A file's code without comments (doc links are not imports)."""
    return "\n".join(
        line for line in path.read_text().splitlines() if not line.lstrip().startswith("//")
    )


def _production(path: Path) -> str:
    """The code before the file's test module."""
    return _code(path).split("#[cfg(test)]")[0]


def _module_graph() -> dict[str, set[str]]:
    """Top-level engine module -> the top-level modules its code names (tests included)."""
    graph: dict[str, set[str]] = {}
    for path in SRC.rglob("*.rs"):
        top = path.relative_to(SRC).parts[0].removesuffix(".rs")
        if top in ("python", "lib"):
            continue
        named = set(re.findall(r"crate::([a-z_]+)", _code(path))) - ENGINE_MACROS - {top}
        graph.setdefault(top, set()).update(named)
    return graph


def _file_graph(module: str) -> dict[str, set[str]]:
    """File (or folder) of `module` -> the sibling files its production code uses."""
    base = SRC / module
    siblings = {p.stem for p in base.iterdir() if p.suffix == ".rs" or p.is_dir()} - {"mod"}
    graph: dict[str, set[str]] = {}
    for path in base.rglob("*.rs"):
        name = path.relative_to(base).parts[0].removesuffix(".rs")
        if name in ("mod", "tests"):
            continue
        code = _production(path)
        used = set(re.findall(rf"(?:super|crate::{module})::([a-z_]+)", code)) & siblings
        if path.parent != base:  # inside a folder, super:: is the folder itself
            used = set(re.findall(rf"crate::{module}::([a-z_]+)", code)) & siblings
        graph.setdefault(name, set()).update(used - {name})
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found = []
    for start in graph:
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    found.append([*path, nxt])
                elif nxt not in path:
                    stack.append((nxt, [*path, nxt]))
    return found


def test_engine_modules_form_no_cycle() -> None:
    graph = _module_graph()
    assert not _cycles(graph), _cycles(graph)[:3]


def test_the_base_learner_never_names_apple_or_the_model_layer() -> None:
    graph = _module_graph()
    assert not graph["learner"] & {"apple", "model", "dos"}, graph["learner"]
    assert "model" not in graph["apple"] and "model" not in graph["dos"]
    # Nothing below the model layer names it: it is the top of the engine.
    assert all("model" not in uses for name, uses in graph.items() if name != "model")


def test_files_inside_each_module_form_no_cycle() -> None:
    for module in ("learner", "apple", "model", "dos", "readers", "polynomial", "python"):
        graph = _file_graph(module)
        assert not _cycles(graph), (module, _cycles(graph)[:3])


def test_the_engine_uses_no_pyo3_or_polars_types() -> None:
    for path in SRC.rglob("*.rs"):
        if path.relative_to(SRC).parts[0] == "python":
            continue
        code = _code(path)
        assert not re.search(r"\b(pyo3|polars|pythonize|numpy)::", code), path


def test_registries_have_no_catch_all_arm() -> None:
    for folder in ("learner/loss", "apple/ranking", "apple/schedule"):
        for path in (SRC / folder).glob("*.rs"):
            assert not re.search(r"\b_\s*=>", _production(path)), path


def _python_module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _python_imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports anywhere (inside functions too: a deferred
    import is still a dependency), except under ``if TYPE_CHECKING:``."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.add(child.module)
                found.update(f"{child.module}.{alias.name}" for alias in child.names)
            visit(child)

    visit(ast.parse(path.read_text()))
    return found & modules


def _python_graph() -> dict[str, set[str]]:
    """Module of polars_poly -> the package's modules it imports. The package root is left out:
    it only names the public API, each loaded on first use."""
    paths = {_python_module(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {
        name: _python_imports(path, modules) - {name, "polars_poly"}
        for name, path in paths.items()
        if name != "polars_poly"
    }


def test_python_modules_form_no_cycle() -> None:
    graph = _python_graph()
    assert graph["polars_poly._loading"] >= {"polars_poly.learner", "polars_poly.dos"}
    assert not _cycles(graph), _cycles(graph)[:3]


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = _python_graph()
    graph["polars_poly._persist"].add("polars_poly.learner")  # the circle there was
    assert _cycles(graph)


# Files over about 800 production lines, each with the reason it stays whole.
LONG_FILES: dict[str, str] = {}


def _production_lines(path: Path) -> int:
    text = path.read_text()
    if path.suffix == ".rs":
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests\b", text)[0]
    return len(text.splitlines())


def test_no_production_file_over_800_lines_without_a_reason() -> None:
    files = [*SRC.rglob("*.rs"), *PACKAGE.rglob("*.py")]
    long = {
        p.relative_to(REPO).as_posix(): _production_lines(p)
        for p in files
        if p.name != "tests.rs" and _production_lines(p) > 800
    }
    assert set(long) <= set(LONG_FILES), long
