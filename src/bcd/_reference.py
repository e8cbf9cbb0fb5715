"""The documentation page of valid combinations (``docs/combinations.md``).

Generated from the spec tables of the core (``bcd.core.RULES``,
``UPDATES``, ``BLOCKS``), the automatic configuration's table, and the
capabilities of the registered problems and penalties, each listed from
its own registry.  It sits above the core, the problems and the penalties
so that none of them imports the others to write it.
"""
from . import penalties, problems
from .core import BLOCKS, RULES, UPDATES, auto
from .core.specs import capability_table, combination_table

HEADER = """# Valid combinations

This page is generated from the spec tables (`bcd.core.RULES`, `UPDATES`,
`BLOCKS`) and the capabilities of the registered problems and of the
penalties by `python -m bcd combinations > docs/combinations.md`; the test
suite checks that it is up to date.  A rule, update or block strategy
works on a problem when the problem provides every capability it needs
(and, with a penalty, the penalty provides those it needs); `bcd.solve`
checks exactly this and names what is missing.

"""


def _registered(registry):
    """The classes of a registry (``available``/``get``), each once, in order."""
    return list(dict.fromkeys(registry.get(name) for name in registry.available()))


def reference_markdown():
    """The documentation page of valid combinations, generated from the specs."""
    return (HEADER + "## Capabilities\n\n"
            + capability_table(_registered(problems), _registered(penalties))
            + "\n## Rules, updates and block strategies\n\n"
            + combination_table((BLOCKS, RULES, UPDATES))
            + "\n## Automatic configuration\n\n" + auto.table_markdown())
