"""Every example of the documentation runs.

* The ```python blocks of README.md and docs/*.md: the blocks of one page run in order in one
  namespace (a block may use an earlier block's names), in a fresh working directory per page.
  A block right after the line ``<!-- skip-if-no-data -->`` needs the shared benchmark data: it
  skips when the folder is absent, and otherwise finds its files by name (``a9a.gz``) in its
  working directory. Bash blocks are not run.
* The doctests of every module of ``polars_poly``, one test per module that has examples.

Examples check what they show with ``assert``; a failure points at the Markdown line.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import polars_poly
import pytest

from tests.conftest import REPO, SHARED_DATA

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
NEEDS_DATA = "<!-- skip-if-no-data -->"
FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    index: int  # 1-based among the page's python blocks
    line: int  # 1-based line of the block's first code line
    source: str
    needs_data: bool

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO).as_posix()}:{self.index}"


def python_blocks(page: Path) -> list[Block]:
    """The page's ```python blocks, in order, with the line each starts on."""
    blocks: list[Block] = []
    lines = page.read_text(encoding="utf-8").split("\n")
    previous = ""  # the last non-blank line before the current position
    at = 0
    while at < len(lines):
        opening = FENCE.match(lines[at])
        if opening is None:
            if lines[at].strip():
                previous = lines[at].strip()
            at += 1
            continue
        end = next((k for k in range(at + 1, len(lines)) if lines[k].strip() == "```"), len(lines))
        if opening.group(1) == "python":
            blocks.append(
                Block(
                    page,
                    len(blocks) + 1,
                    at + 2,
                    "\n".join(lines[at + 1 : end]) + "\n",
                    previous == NEEDS_DATA,
                )
            )
        previous = ""
        at = end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in python_blocks(page)]


@dataclass
class PageRun:
    """The state a page's blocks share: one namespace, one working directory."""

    workdir: Path
    # A page runs as a script does (its `if __name__ == "__main__":` blocks too).
    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__main__"})
    done: int = 0  # blocks run so far, in order
    failed: str | None = None


_RUNS: dict[Path, PageRun] = {}


def link_shared_data(workdir: Path) -> None:
    """Every file of the shared data, by its name, in the working directory."""
    for path in sorted(SHARED_DATA.glob("*/*")):
        target = workdir / path.name
        if path.is_file() and not target.exists():
            target.symlink_to(path)


def run_block(block: Block, run: PageRun) -> None:
    if run.failed is not None:
        pytest.fail(f"{run.failed} failed, and the blocks after it may use its names")
    if block.needs_data:
        if not SHARED_DATA.is_dir():
            run.done = block.index
            pytest.skip(f"shared data not available: {SHARED_DATA} (set POLARS_POLY_DATA)")
        link_shared_data(run.workdir)
    # Padding keeps the Markdown line numbers in tracebacks.
    code = compile("\n" * (block.line - 1) + block.source, str(block.page), "exec")
    run.done = block.index
    try:
        exec(code, run.namespace)
    except BaseException:
        run.failed = block.id
        raise


@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_doc_example(
    block: Block, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _RUNS.get(block.page)
    if run is None or run.done >= block.index:  # first block, or the page again (-k, reruns)
        run = _RUNS[block.page] = PageRun(tmp_path_factory.mktemp(block.page.stem))
    monkeypatch.chdir(run.workdir)
    # Under -k a block may run without the ones before it: run those first.
    for earlier in python_blocks(block.page)[run.done : block.index - 1]:
        run_block(earlier, run)
    run_block(block, run)


def test_the_pages_have_examples() -> None:
    """The extraction finds the examples (a broken fence pattern would silently test nothing)."""
    pages = {block.page.name for block in BLOCKS}
    assert {"README.md", "sparse.md", "expansion.md", "learners.md", "dos.md"} <= pages


def package_modules() -> list[ModuleType]:
    # Subpackages' modules too (polars_poly.synthetic._text): a package's doctests are those of
    # the functions defined in it, not of those it re-exports.
    prefix = f"{polars_poly.__name__}."
    names = [polars_poly.__name__] + [
        info.name
        for info in pkgutil.walk_packages(polars_poly.__path__, prefix)
        if info.name != f"{prefix}__main__"
    ]
    return [importlib.import_module(name) for name in names]


FINDER = doctest.DocTestFinder()
DOCTESTED = [
    module for module in package_modules() if any(test.examples for test in FINDER.find(module))
]


@pytest.mark.parametrize("module", DOCTESTED, ids=[module.__name__ for module in DOCTESTED])
def test_doctests(module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    for test in FINDER.find(module):
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
    assert result.attempted > 0


@pytest.mark.parametrize(
    "name",
    ["to_sparse", "hash_features", "from_scipy", "to_scipy", "expand", "expand_csr"]
    + ["SGDRegressor", "SGDClassifier", "DoSClassifier"],
)
def test_main_entry_points_have_examples(name: str) -> None:
    docstring = getattr(polars_poly, name).__doc__ or ""
    assert ">>> " in docstring, f"polars_poly.{name} has no example in its docstring"


LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings (lower case, punctuation dropped, spaces -> -)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


# A run log's marks: a date, "run 12", "stop 52", "load 1.3", "Before:".
RUN_LOG = re.compile(r"20\d\d-\d\d-\d\d|\brun \d+\b|\bruns \d+-\d+|\bstop \d+|\bload \d|Before:")
# The pages that date their numbers: one date or commit per claim, and the changelog.
DATED_PAGES = {"benchmarks.md", "changelog.md"}


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_guide_and_reference_pages_carry_no_run_log(page: Path) -> None:
    """The user guide, the reference and the explanations say what is; how it came to be is in
    git and notes/, and each number's date is on the benchmarks page."""
    if page.name in DATED_PAGES:
        return
    lines = page.read_text(encoding="utf-8").split("\n")
    dated = [f"{k}: {line.strip()[:80]}" for k, line in enumerate(lines, 1) if RUN_LOG.search(line)]
    assert not dated, f"{page.name} carries a run log: {dated[:5]}"


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_links_point_at_files_and_headings(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(target)
    assert not broken, f"{page.name}: broken links {broken}"


def test_the_api_reference_lists_every_public_name() -> None:
    """docs/api.md documents each name of ``polars_poly.__all__`` (modules by their name)."""
    api = (REPO / "docs" / "api.md").read_text()
    missing = [
        name
        for name in polars_poly.__all__
        if not name.startswith("__") and f"polars_poly.{name}" not in api and f"`{name}`" not in api
    ]
    assert not missing, f"docs/api.md does not document {missing}"
