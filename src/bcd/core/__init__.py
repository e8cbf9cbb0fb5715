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
from .updates import UPDATES

__all__ = ["Assembly", "assemble", "BLOCKS", "RULES", "UPDATES"]
