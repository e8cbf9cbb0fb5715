"""The examples in the public docstrings run and print what they claim."""
import doctest
import importlib

import pytest

MODULES = ["bcd", "bcd._solve", "bcd.problems", "bcd.problems.linear", "bcd.problems.multinomial",
           "bcd.problems.quadratic", "bcd.datasets", "bcd.forest", "bcd.penalties",
           "bcd.gp.kernels", "bcd.gp.problem", "bcd.gp.regressor"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, attempted = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0, f"{name} has no examples"
    assert failures == 0
