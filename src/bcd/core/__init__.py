"""The compiled core and the tables that declare what works with what.

``bcd.core.specs`` holds the spec types and the validation of a
configuration; ``RULES``, ``UPDATES`` and ``BLOCKS`` are the tables of the
selection rules, block updates and block strategies; :func:`assemble`
builds the compiled parts of a configuration.
"""
from . import auto
from .assembly import Assembly, assemble
from .blocks import BLOCKS
from .rules import RULES
from .specs import capability_table, combination_table
from .updates import UPDATES

__all__ = ["Assembly", "assemble", "BLOCKS", "RULES", "UPDATES", "reference_markdown"]

HEADER = """# Valid combinations

This page is generated from the spec tables (`bcd.core.RULES`, `UPDATES`,
`BLOCKS`) and the capabilities of the registered problems and of the
penalties by `python -m bcd combinations > docs/combinations.md`; the test
suite checks that it is up to date.  A rule, update or block strategy
works on a problem when the problem provides every capability it needs
(and, with a penalty, the penalty provides those it needs); `bcd.solve`
checks exactly this and names what is missing.

"""


def reference_markdown():
    """The documentation page of valid combinations, generated from the specs."""
    from .. import penalties, problems
    classes = list(dict.fromkeys(problems.get(name) for name in problems.available()))
    return (HEADER + "## Capabilities\n\n"
            + capability_table(classes, [penalties.L1, penalties.NonNegative, penalties.Box])
            + "\n## Rules, updates and block strategies\n\n"
            + combination_table((BLOCKS, RULES, UPDATES))
            + "\n## Automatic configuration\n\n" + auto.table_markdown())
