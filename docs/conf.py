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
exclude_patterns = ["_build", "apple_rankings", "Thumbs.db", ".DS_Store"]

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


def setup(app: object) -> None:
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)  # type: ignore[attr-defined]
