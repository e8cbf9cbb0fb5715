"""The options of rules, block strategies and updates come from their specs.

* A rule with an option is one row of ``RULES`` (its builder and its
  :class:`~bcd.core.specs.Option`), and nothing else: ``bcd.solve`` takes
  the option as a keyword, checks it, records it and documents it; the
  estimators count it as an explicit configuration; the combinations page
  lists it.  The toy rule below is registered for one test and removed
  after it.
* The docstring of ``bcd.solve`` documents every spec option from the specs.
* Unknown keywords are a TypeError naming the valid options.
"""
import inspect

import numpy as np
import pytest

import bcd
from bcd.core import RULES
from bcd.core.assembly import TABLES, configuration_options
from bcd.core._select import CyCyclicSelector, CyRandomSelector
from bcd.core.specs import Option, Spec, combination_table, needs, option_index, \
    options_docstring
from bcd.linear_model._base import CONFIGURATION_OPTIONS, SolveRecord


def _problem():
    rs = np.random.RandomState(0)
    A = rs.randn(30, 12)
    return bcd.LeastSquares(A, rs.randn(30), l2=0.1)


def _toy(ctx):
    # either existing compiled selector, as the option says: the same blocks
    # as rule "cyclic" or rule "random" (fixed blocks)
    u = ctx.units
    if ctx.options["toy_order"] == "cyclic":
        return CyCyclicSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed, False)
    return CyRandomSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed)


TOY = Spec("rule", "toy", _toy, needs(), frozenset({"fixed"}),
           options=(Option("toy_order", "cyclic", "the order of the toy rule",
                           choices={"cyclic": needs(), "random": needs()},
                           text="""The blocks of the toy rule: in turn or uniformly at
                           random."""),),
           doc="a toy rule for the tests")


@pytest.fixture
def toy_rule(monkeypatch):
    monkeypatch.setitem(RULES, "toy", TOY)
    yield TOY


def _run(problem, **kwargs):
    return bcd.solve(problem, blocks="fixed", block_size=3, update="gradient", max_iter=60,
                     tol=0.0, check_every=1, random_state=4, warn=False, **kwargs)


@pytest.mark.parametrize("order", ["cyclic", "random"])
def test_a_rule_with_an_option_is_its_spec_row_only(toy_rule, order):
    problem = _problem()
    toy = _run(problem, rule="toy", toy_order=order)
    same = _run(problem, rule=order)
    # the option reached the builder: the toy rule draws the blocks of the rule it names
    np.testing.assert_array_equal(toy.x, same.x)
    np.testing.assert_array_equal(toy.history.objective, same.history.objective)
    assert toy.options["rule"] == "toy" and toy.options["toy_order"] == order
    # its default, recorded when not given
    assert _run(problem, rule="toy").options["toy_order"] == "cyclic"
    # checked against its choices, and refused with another rule, by check_combination
    with pytest.raises(ValueError, match=r"Unknown toy_order 'sideways' for rule 'toy'; "
                                         r"valid values are 'cyclic', 'random'"):
        _run(problem, rule="toy", toy_order="sideways")
    with pytest.raises(ValueError, match=r"toy_order='random' does not apply to rule='gs'.*"
                                         r"an option of rule 'toy'"):
        _run(problem, rule="gs", toy_order="random")
    # an explicit configuration for solve and for the estimators
    assert "toy_order" in configuration_options()
    assert SolveRecord(bcd.linear_model.Ridge(), {"toy_order": "random"}).explicit
    # documented from its spec
    assert "toy_order : {\"cyclic\", \"random\"}, default=\"cyclic\"" in options_docstring(TABLES)
    assert "``rule='toy'``" in options_docstring(TABLES)
    assert "`toy_order` (the order of the toy rule" in combination_table(TABLES)


def test_the_toy_rule_is_gone_after_its_test():
    assert "toy" not in RULES and "toy_order" not in option_index(TABLES)
    with pytest.raises(TypeError, match="unexpected keyword argument 'toy_order'"):
        bcd.solve(_problem(), toy_order="cyclic")


def test_solve_documents_every_spec_option_from_its_spec():
    doc = bcd.solve.__doc__
    index = option_index(TABLES)
    assert set(index) >= {"partition", "working_set", "vertex_order", "extrapolation",
                          "gsd_diagonal", "gsq_method", "mi_candidates", "mi_refresh",
                          "lipschitz"}
    for name, (opt, specs) in index.items():
        assert f"    {name} : {opt.signature()}\n" in doc, name
        # the first words of its text, as written in the spec
        assert " ".join(opt.text.split()[:4]) in " ".join(doc.split()), name
    assert "@SPEC_OPTIONS@" not in doc


def test_configuration_options_are_derived_from_the_tables():
    names = set(configuration_options())
    assert {"rule", "blocks", "block_size", "update", "mi_refresh", "partition"} <= names
    # those the automatic configuration chooses keep it
    assert not {"working_set", "extrapolation"} & names
    assert CONFIGURATION_OPTIONS == configuration_options()


def test_an_unknown_keyword_is_a_type_error_naming_the_options():
    with pytest.raises(TypeError, match=r"solve\(\) got an unexpected keyword argument "
                                        r"'partitions'; .*partition"):
        bcd.solve(_problem(), partitions="sort")


def test_solve_takes_the_configuration_positionally_and_the_rest_by_keyword():
    params = inspect.signature(bcd.solve).parameters
    positional = [p.name for p in params.values()
                  if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == ["problem", "rule", "blocks", "block_size", "update"]
    assert next(reversed(params.values())).kind is inspect.Parameter.VAR_KEYWORD
    with pytest.raises(TypeError):
        bcd.solve(_problem(), "gs", "variable", 2, "gradient", "sort")


def test_the_options_left_to_the_configuration():
    problem = _problem()
    # None and "auto" leave an option to the configuration: the automatic one stays
    auto = bcd.solve(problem, partition=None, working_set="auto", extrapolation="auto")
    assert auto.options["auto"] is not None
    # an option the automatic configuration chooses keeps it
    assert bcd.solve(problem, extrapolation=0).options["auto"] is not None
    # any other makes the configuration explicit
    explicit = bcd.solve(problem, lipschitz="bound", max_iter=50000)
    assert explicit.options["auto"] is None and explicit.options["rule"] == "gs"


def test_the_option_index_follows_the_tables(monkeypatch):
    # cached, and computed again when a spec is replaced (same name) or removed
    import dataclasses
    before = option_index(TABLES)
    assert option_index(TABLES) is before
    renamed = Option("gsq_variant", "iht", "renamed", choices={"iht": needs(), "omp": needs()})
    monkeypatch.setitem(RULES, "gsq", dataclasses.replace(RULES["gsq"], options=(renamed,)))
    index = option_index(TABLES)
    assert "gsq_variant" in index and "gsq_method" not in index
    monkeypatch.undo()
    assert "gsq_method" in option_index(TABLES) and "gsq_variant" not in option_index(TABLES)
