"""The examples in the public docstrings and the documentation pages run
and print what they claim, and the generated pages are up to date."""
import doctest
import importlib
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

MODULES = ["bcd", "bcd._solve", "bcd._path", "bcd.problems", "bcd.problems.linear", "bcd.problems.multinomial",
           "bcd.problems.quadratic", "bcd.core.enetpath",
           "bcd.problems.poisson", "bcd.datasets", "bcd.forest", "bcd.penalties",
           "bcd.gp.kernels", "bcd.gp.problem", "bcd.gp.regressor", "bcd.gp.sparse",
           "bcd.core.calibration", "bcd.distributed._newton_local"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, attempted = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0, f"{name} has no examples"
    assert failures == 0


def test_combinations_page_is_generated_from_the_specs():
    from bcd._reference import reference_markdown
    page = (ROOT / "docs" / "combinations.md").read_text()
    assert page == reference_markdown(), \
        "docs/combinations.md is stale: python -m bcd combinations > docs/combinations.md"


def test_extending_page_examples_run():
    failures, attempted = doctest.testfile(str(ROOT / "docs" / "extending.md"),
                                           module_relative=False,
                                           optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failures == 0


def test_extending_page_excerpts_are_the_sources():
    # every code block announced by "<!-- from: PATH -->" appears verbatim in PATH
    page = (ROOT / "docs" / "extending.md").read_text()
    excerpts = re.findall(r"<!-- from: (\S+) -->\n```\w*\n(.*?)```", page, flags=re.S)
    assert len(excerpts) >= 5
    for path, code in excerpts:
        assert code in (ROOT / path).read_text(), (path, code)
