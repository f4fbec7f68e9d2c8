"""Sphinx configuration: the Markdown user guide (MyST) plus an autodoc API reference.

Build with ``make docs`` (warnings are errors).
"""

from __future__ import annotations

import polars_poly

project = "polars-poly"
author = "polars-poly contributors"
copyright = "polars-poly contributors"
release = polars_poly.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# MyST: GitHub-style anchors for `page.md#heading` links.
myst_heading_anchors = 4

# Docstrings are numpydoc style.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"

html_theme = "furo"
html_title = f"polars-poly {release}"


def _skip_scikit_learn_members(
    app: object, what: str, name: str, obj: object, skip: bool, options: object
) -> bool | None:
    """Leave out what the estimators inherit from scikit-learn (``score``, ``set_*_request``):
    scikit-learn documents those, with cross-references only its own site resolves."""
    if (getattr(obj, "__module__", None) or "").startswith("sklearn."):
        return True
    return None


# ---------------------------------------------------------------------------------------------
# ``options-table``: the options of an estimator or parameter object, generated from its
# docstring's "Parameters" section (itself generated from the one declaration of each option,
# ``polars_poly._params``) and its signature's defaults, so that the options reference cannot
# fall behind the code. Used from MyST pages inside an ``{eval-rst}`` block:
#
#     .. options-table:: polars_poly.SGDRegressor

import importlib
import inspect
import re

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

_ENTRY = re.compile(r"^(\w+) : (.+?)(?:, default=.*)?$")


def _object(path: str) -> object:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _parameters(obj: object) -> list[tuple[str, list[str]]]:
    """The numpydoc "Parameters" section of ``obj``: (name, description lines) in order."""
    lines = (inspect.getdoc(obj) or "").split("\n")
    start = lines.index("Parameters") + 2
    entries: list[tuple[str, list[str]]] = []
    for line in lines[start:]:
        entry = _ENTRY.match(line)
        if entry:
            entries.append((entry.group(1), []))
        elif line.startswith("    ") and entries:
            entries[-1][1].append(line.strip())
        elif line.strip() or not entries:
            break  # the next section
    return entries


def _summary(text: list[str]) -> tuple[str, str]:
    """The first sentence of an option's description, and what it accepts."""
    accepted = next((line[len("Accepted: ") :] for line in text if line.startswith("Accepted: ")), "")
    words = " ".join(line for line in text if not line.startswith("Accepted: "))
    depth = 0
    for at, char in enumerate(words):  # the first full stop outside parentheses
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "." and depth == 0 and words[at + 1 : at + 2] in ("", " "):
            if not words[:at].endswith(("etc", "e.g", "i.e")):
                words = words[: at + 1]
                break
    return words, accepted.rstrip(".")


class OptionsTable(Directive):
    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        obj = _object(self.arguments[0])
        defaults = inspect.signature(obj).parameters
        rows = [
            ".. list-table::",
            "   :header-rows: 1",
            "   :widths: 18 14 20 48",
            "",
            "   * - option",
            "     - default",
            "     - accepts",
            "     - what it does",
        ]
        for name, text in _parameters(obj):
            default = defaults[name].default if name in defaults else inspect.Parameter.empty
            shown = "" if default is inspect.Parameter.empty else f"``{default!r}``"
            sentence, accepted = _summary(text)
            rows += [f"   * - ``{name}``", f"     - {shown}", f"     - {accepted}", f"     - {sentence}"]
        container = nodes.container()
        self.state.nested_parse(StringList(rows, source=self.arguments[0]), self.content_offset, container)
        return container.children


def setup(app: object) -> None:
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)  # type: ignore[attr-defined]
    app.add_directive("options-table", OptionsTable)  # type: ignore[attr-defined]
