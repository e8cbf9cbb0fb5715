"""Sphinx configuration of the bcd documentation.

Build from the repository root with

    sphinx-build -W -b html docs docs/_build/html

The package is imported as installed (``pip install ".[docs]"``), so the
pages describe the compiled package that the examples run; only the docs'
own extension (``_ext/mathml.py``) is added to ``sys.path``.
"""
import os
import pathlib
import re
import sys

from sphinx_gallery.sorting import ExplicitOrder

import bcd

project = "bcd"
author = "the bcd developers"
copyright = "the bcd developers"
version = release = bcd.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "mathml",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

# the mathematics as MathML, rendered at build time (no script, works offline)
sys.path.insert(0, str(pathlib.Path(__file__).parent / "_ext"))
html_math_renderer = "mathml"

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "**/.ipynb_checkpoints",
    # sphinx-gallery writes these next to the pages; they are not pages
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.json",
    "auto_examples/*.md5",
    "auto_examples/*.codeobj.json",
]

# -- MyST -------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- autodoc / autosummary / numpydoc ---------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"
# the class template lists the methods itself
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- every cross-reference resolves -------------------------------------------
# With -W an unresolved reference fails the build.  The build is offline
# (no intersphinx), so references to other projects' objects, in bcd's
# docstrings and in the methods inherited from scikit-learn, stay text.
nitpicky = True
nitpick_ignore_regex = [(r"py:.*", r"(sklearn|scipy|numpy)(\..*)?")]
# References in the Gaussian process kernels' docstrings (src/bcd/gp, being
# reorganized) to private objects that have no page; remove these entries
# when those docstrings name public objects.
nitpick_ignore = [
    ("py:class", "bcd.gp._kernel.CyKernelGradient"),
    ("py:attr", "theta"),
    ("py:meth", "_terms"),
    ("py:data", "bcd.gp.hyper.ADMM_DEFAULTS"),
]

# -- sphinx-gallery ---------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": os.path.join("..", "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    # from the paper's experiments to the applications; files not listed
    # come last ("*")
    "within_subsection_order": ExplicitOrder([
        "plot_selection_rules.py", "plot_gsq_fixed_blocks.py", "plot_forest_blocks.py",
        "plot_two_moons.py", "plot_lasso_path.py", "plot_lasso_vs_sklearn.py",
        "plot_nonnegative_box.py", "plot_gp_regression.py", "*"]),
    "min_reported_time": 0,
    "show_memory": False,
    "capture_repr": ("_repr_html_",),
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "doc_module": ("bcd",),
    # "Examples using ..." on the API pages (the minigallery directive of
    # docs/_templates/autosummary)
    "backreferences_dir": os.path.join("gen_modules", "backreferences"),
}

# -- HTML -------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"bcd {release}"
html_static_path = ["_static"]
html_css_files = ["bcd.css"]
html_show_sourcelink = False
# the generated table of combinations is wide: it gets the whole page width;
# the estimators page has no sub-pages to list
html_sidebars = {"combinations": [], "estimators": []}
_EXAMPLES = sorted(path.stem for path in
                   (pathlib.Path(__file__).parent.parent / "examples").glob("*.py"))
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    # the combinations page and the examples' code get the width of the
    # page-toc column (pages named one by one: two wildcards would clash)
    "secondary_sidebar_items": {
        "**": ["page-toc"], "combinations": [],
        **{f"auto_examples/{name}": [] for name in _EXAMPLES}},
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}


# -- the generated combinations page ----------------------------------------
def _escape_table_pipes(app, docname, source):
    """``docs/combinations.md`` is generated (``python -m bcd combinations``)
    and writes norms as ``||g_b||``; inside a Markdown table an unescaped
    ``|`` ends the cell, so escape the doubled bars when the page is read."""
    if docname != "combinations":
        return
    lines = source[0].split("\n")
    source[0] = "\n".join(re.sub(r"\|\|(?=\S)|(?<=\S)\|\|", r"\\|\\|", line)
                          if line.startswith("|") else line for line in lines)


# -- plain-text formulas in docstrings ---------------------------------------
# The docstrings write absolute values and norms in plain text (``|x_i|``,
# ``||b||^2``).  In reST a word between two bars is a substitution
# reference, which does not exist and fails the build; the package uses no
# substitutions, so a bar outside inline literals, roles and math is meant
# literally and is escaped here.  Tables and line blocks (a line starting
# with "| " or "+-") are left alone.
_LITERAL = re.compile(r"(``.*?``|:[\w:+-]+:`[^`]*`|`[^`]*`_{0,2})")


def _escape_bars(line):
    stripped = line.lstrip()
    if "|" not in line or stripped.startswith(("| ", "+-", "+=")):
        return line
    parts = _LITERAL.split(line)
    return "".join(part if i % 2 else re.sub(r"(?<!\\)\|", r"\\|", part)
                   for i, part in enumerate(parts))


# A bare word ending in "_" is a reference in reST; in the docstrings it is
# an attribute name in a type or a description ("shape (n_features_in_,)").
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[\s,.;:)\]]|$)")


def _escape_line(line):
    parts = _LITERAL.split(_escape_bars(line))
    return "".join(part if i % 2 else _TRAILING_UNDERSCORE.sub(r"\\_", part)
                   for i, part in enumerate(parts))


# Methods inherited from scikit-learn (``score``, ``get_params``, ...) keep
# their docstrings; their cross-references point into scikit-learn's own
# documentation, which is not linked here, so they are shown as text.
_FOREIGN_REF = re.compile(r":(?:ref|term|doc):`([^`<]*?)\s*(?:<[^`>]*>)?`")


def _unlink_foreign(obj, lines):
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] == "bcd":
        return lines
    return [_FOREIGN_REF.sub(lambda m: m.group(1) or "", line) for line in lines]


def _prepare_docstring(app, what, name, obj, options, lines):
    out, block_indent, doctest = [], None, False
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if not line.strip():
            doctest = False
            out.append(line)
            continue
        if block_indent is not None and indent > block_indent:
            out.append(line)          # inside a literal block or a directive
            continue
        block_indent = None
        if line.lstrip().startswith(">>>"):
            doctest = True
        out.append(line if doctest else _escape_line(line))
        if line.rstrip().endswith("::"):
            block_indent = indent
    lines[:] = _unlink_foreign(obj, out)


def setup(app):
    app.connect("source-read", _escape_table_pipes)
    # numpydoc rewrites docstrings at priority 500; run after it, on reST
    app.connect("autodoc-process-docstring", _prepare_docstring, priority=600)
