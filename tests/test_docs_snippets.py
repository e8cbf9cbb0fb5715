"""Every Python code block of README.md and of the documentation pages runs,
without a warning.

The blocks of one page run in order in one namespace, as a reader pasting
them into one session would; a block written as a doctest (``>>>``) is run
by :mod:`doctest` and must print what it shows.  Warnings are errors.

A block is left out only when the HTML comment on the line before it says
so, and every such block is listed in ``MARKED`` below, so a marker cannot
be added silently:

``<!-- snippet: slow (why) -->``
    runs only when the environment variable ``BCD_SLOW_SNIPPETS=1`` is set
    (``BCD_SLOW_SNIPPETS=1 pytest tests/test_docs_snippets.py``);
``<!-- snippet: skip (why) -->``
    never runs here: it needs something a test machine does not have (a
    Dask scheduler);
``<!-- from: PATH -->``
    an excerpt of a source file, checked against that file by
    ``tests/test_docs.py``.

reStructuredText pages are read too (``.. code-block:: python``).
"""
import doctest
import os
import pathlib
import re
import textwrap
import time
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SLOW = os.environ.get("BCD_SLOW_SNIPPETS", "") not in ("", "0")

# (page, first line of the block) -> the marker's kind; see the module docstring
MARKED = {
    ("README.md", "X, y, X_test, y_test = bcd.datasets.make_friedman1(10000, 1000)"): "slow",
    ("docs/guide/gaussian_processes.md",
     "X, y, X_test, y_test = bcd.datasets.make_friedman1(10000, 1000)"): "slow",
    ("docs/guide/gp_hyperparameters.md", "import numpy as np"): "slow",
    ("docs/guide/gp_hyperparameters.md",
     "grid = np.log([[v, l, n] for v in (0.5, 2.0) for l in (0.3, 1.0, 3.0) for n in (0.01, 0.1)])"):
        "skip",
    ("docs/guide/gp_hyperparameters.md", "from distributed import Client"): "skip",
    ("docs/guide/sparse_gp.md", "import numpy as np"): "slow",
    ("docs/extending.md", "capabilities = frozenset({\"block_hessian\", \"quadratic_model\"})"):
        "from",
    ("docs/extending.md", "def smooth_objective(self, x):"): "from",
    ("docs/extending.md", 'Option("mi_refresh", None,'): "from",
    ("docs/extending.md", "return CyMaxImprovementSelector(u.ptr, u.coords, u.lipschitz, "
                          "u.per_iteration, ctx.seed,"): "from",
    ("docs/extending.md", "class RationalQuadratic(_Base):"): "skip",
}

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n"
                    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$", re.M | re.S)
_MARKER = re.compile(r"<!--\s*(?:snippet:\s*(?P<kind>slow|skip)\b|(?P<from>from):)[^>]*-->\s*$")
_RST = re.compile(r"^(?P<indent>[ \t]*)\.\. (?:code-block|code|sourcecode):: python[ \t]*\n"
                  r"(?:(?P=indent)[ \t]+:[^\n]*\n)*[ \t]*\n"
                  r"(?P<body>(?:(?:(?P=indent)[ \t]+[^\n]*)?\n)+)", re.M)


def _pages():
    pages = [ROOT / "README.md"]
    skip_dirs = {"_build", "auto_examples", "gen_modules", "generated", "_templates"}
    for path in sorted((ROOT / "docs").rglob("*")):
        if path.suffix in (".md", ".rst") and not skip_dirs & set(path.relative_to(ROOT).parts):
            pages.append(path)
    return pages


def _blocks(path):
    """(line, code, marker) of each Python block of a page, in order."""
    text = path.read_text()
    found = []
    if path.suffix == ".md":
        for match in _FENCE.finditer(text):
            info = match.group("info").strip()
            language = info.strip("{}").split()[0] if info else ""
            if language not in ("python", "py", "pycon", "python3"):
                continue
            before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = _MARKER.search(before)
            kind = marker and (marker.group("kind") or marker.group("from"))
            code = textwrap.dedent(match.group("body"))
            found.append((text.count("\n", 0, match.start()) + 1, code, kind))
    else:
        for match in _RST.finditer(text):
            code = textwrap.dedent(match.group("body"))
            found.append((text.count("\n", 0, match.start()) + 1, code, None))
    return found


def _first_line(code):
    return next(line.strip() for line in code.splitlines() if line.strip())


def _run_block(code, namespace, where):
    if code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(code, namespace, where, where, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE
                                       | doctest.ELLIPSIS)
        output = []
        runner.run(test, out=output.append, clear_globs=False)
        assert runner.failures == 0, "".join(output)
    else:
        exec(compile(code, where, "exec"), namespace)


PAGES = [page for page in _pages() if _blocks(page)]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_snippets_run_without_warnings(page, monkeypatch, tmp_path):
    name = str(page.relative_to(ROOT))
    # files a snippet writes (figures) land in a scratch folder
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__snippet__"}
    ran = 0
    for line, code, kind in _blocks(page):
        if kind == "from" or kind == "skip" or (kind == "slow" and not SLOW):
            continue
        where = f"{name}:{line}"
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _run_block(code, namespace, where)
        print(f"{where}: {time.perf_counter() - start:.2f} s")
        ran += 1
    if not any(kind is None for _, _, kind in _blocks(page)):
        pytest.skip(f"{name} has only marked blocks (run with BCD_SLOW_SNIPPETS=1)")
    assert ran > 0


def test_marked_blocks_are_the_listed_ones():
    marked = {(str(page.relative_to(ROOT)), _first_line(code)): kind
              for page in PAGES for _, code, kind in _blocks(page) if kind}
    assert marked == MARKED


def test_the_block_finder_reads_markdown_and_rst(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\n```\n\n```\nnot python\n```\n\n"
                    "<!-- snippet: slow (a minute) -->\n```python\ny = 2\n```\n")
    assert _blocks(page) == [(3, "x = 1\n", None), (12, "y = 2\n", "slow")]
    page = tmp_path / "page.rst"
    page.write_text("Text::\n\n.. code-block:: python\n\n   x = 1\n   y = x\n\nAfter.\n")
    assert [(line, code.strip()) for line, code, _ in _blocks(page)] == [(3, "x = 1\ny = x")]


def test_a_warning_in_a_block_fails():
    with pytest.raises(UserWarning):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _run_block("import warnings\nwarnings.warn('no')\n", {}, "here")
