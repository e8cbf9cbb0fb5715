"""Every function of the API reference (docs/api/index.rst) documents each of
its parameters in a numpydoc Parameters section."""
import importlib
import inspect
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _reference_entries():
    """Fully qualified names listed by the autosummary tables of the API page."""
    names, module, in_table = [], None, False
    for line in (ROOT / "docs" / "api" / "index.rst").read_text().splitlines():
        directive = re.match(r"\.\. (?:current)?module:: (\S+)", line)
        if directive:
            module = directive.group(1)
        elif line.startswith(".. autosummary::"):
            in_table = True
        elif in_table and re.match(r"^   [A-Za-z_][\w.]*$", line):
            names.append(f"{module}.{line.strip()}")
        elif in_table and line and not line.startswith(" "):
            in_table = False
    return names


def _resolve(name):
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


def _documented_parameters(doc):
    """The names in the Parameters and Other Parameters sections (numpydoc),
    or None without a Parameters section."""
    sections = [re.search(r"^\s*" + title + r"\n\s*-{10,}\n(.*?)(?=^\s*\w[\w ]*\n\s*-{3,}\n|\Z)",
                          doc, re.S | re.M) for title in ("Parameters", "Other Parameters")]
    if not sections[0]:
        return None
    names = set()
    text = "\n".join(section.group(1) for section in sections if section)
    for line in text.splitlines():
        entry = re.match(r"^ {0,4}(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::|$)", line)
        if entry and line.strip():
            names.update(n.strip() for n in entry.group(1).split(","))
    return names


FUNCTIONS = [name for name in _reference_entries()
             if inspect.isfunction(_resolve(name))]


def test_the_reference_lists_the_functions():
    assert {"bcd.solve", "bcd.lambda_max", "bcd.problems.register",
            "bcd.forest.is_forest", "bcd.datasets.make_friedman1"} <= set(FUNCTIONS)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_documents_every_parameter(name):
    function = _resolve(name)
    expected = set()
    for parameter in inspect.signature(function).parameters.values():
        prefix = {inspect.Parameter.VAR_POSITIONAL: "*",
                  inspect.Parameter.VAR_KEYWORD: "**"}.get(parameter.kind, "")
        expected.add(prefix + parameter.name)
    documented = _documented_parameters(inspect.getdoc(function) or "")
    if not expected:
        return
    assert documented is not None, f"{name} has no Parameters section"
    assert expected <= documented, f"{name} does not document {sorted(expected - documented)}"
