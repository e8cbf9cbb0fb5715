"""What works with what: the declared specs of rules, updates and block strategies.

Every selection rule, block update and block strategy is one :class:`Spec`
in one table (``bcd.core.rules.RULES``, ``bcd.core.updates.UPDATES``,
``bcd.core.blocks.BLOCKS``).  A spec states what it needs; problems and
penalties state what they provide (their ``capabilities``).
:func:`check_combination` compares the two and is the only place where
:func:`bcd.solve` decides whether a combination is valid, so its error
messages and the documentation's table of valid combinations
(:func:`combination_table`) come from the same source.

Problem capabilities (``Problem.capabilities``):

``lipschitz``
    ``problem.lipschitz`` holds global coordinate-wise Lipschitz constants
    ``L_i`` of the gradient.
``hessian_bound``
    Block curvature bounds ``H_b`` with ``H_b >= nabla^2_bb f(x)`` everywhere.
``bound_products``
    Products with a curvature bound ``M`` of the whole problem.
``sirt_diagonal``
    The row sums ``sum_j |M_ij|`` of that bound (:meth:`Problem.sirt_diagonal`).
``block_hessian``
    Block Hessians ``nabla^2_bb f(x)`` at the current iterate.
``hessian_entries``
    Arbitrary entries of the (constant) Hessian of a quadratic.
``quadratic``
    f is quadratic, so a block's minimizer solves a linear system.
``graph``
    The sparse graph of the Hessian (:meth:`Problem.hessian_graph`).
``duality_gap``
    A duality gap certificate for some penalties (:meth:`Problem.duality_gap`),
    and safe screening from it (:meth:`Problem.safe_zeros`).

Penalty capabilities (``Penalty.capabilities``): every penalty provides
``prox`` (the proximal operator) and ``distance`` (the distance of
``-grad_i f`` to the subdifferential, the optimality measure); optional are
``slope`` (whether and how g_i is differentiable at a point: proximal
Newton), ``orthant`` (the smooth pieces of two-metric projection) and
``path`` (the piecewise-linear solution path of the homotopy update).
"""
import dataclasses
import numbers
import re
import textwrap

import numpy as np
from typing import Any, Callable, Mapping, Optional

PROBLEM_CAPABILITIES = {
    "lipschitz": "coordinate-wise Lipschitz constants L_i",
    "hessian_bound": "block curvature bounds H_b",
    "bound_products": "products with a curvature bound of the whole problem",
    "sirt_diagonal": "the row sums of a curvature bound (SIRT diagonal)",
    "block_hessian": "block Hessians",
    "hessian_entries": "entries of a constant Hessian",
    "quadratic": "a quadratic objective",
    "graph": "the sparse graph of the Hessian",
    "duality_gap": "a duality gap",
    "dual": "a Fenchel dual over the samples (formulation='dual')",
    "quadratic_model": "weighted least-squares models of the loss (formulation='newton')",
}

PENALTY_CAPABILITIES = {
    "prox": "a proximal operator",
    "distance": "the distance to the subdifferential",
    "slope": "the derivative on smooth pieces",
    "orthant": "orthant pieces for two-metric projection",
    "path": "a piecewise-linear solution path",
}

#: what every penalty must provide
REQUIRED_PENALTY_CAPABILITIES = frozenset({"prox", "distance"})


@dataclasses.dataclass(frozen=True)
class Needs:
    """Requirements of a spec, or of one choice of one of its options.

    Attributes
    ----------
    problem : frozenset of str
        Problem capabilities required.
    penalty : frozenset of str or None
        Penalty capabilities required when the problem has a penalty; None
        when the spec does not handle a penalty at all.
    smooth : bool
        Whether the spec works without a penalty.
    with_blocks : mapping of str to frozenset of str
        Further problem capabilities required with particular block
        strategies.
    """
    problem: frozenset = frozenset()
    penalty: Optional[frozenset] = frozenset()
    smooth: bool = True
    with_blocks: Mapping[str, frozenset] = dataclasses.field(default_factory=dict)

    def problem_needs(self, blocks):
        return self.problem | self.with_blocks.get(blocks, frozenset())


def needs(problem=(), penalty=(), smooth=True, with_blocks=None):
    """A :class:`Needs` from plain iterables (``penalty=None``: no penalty)."""
    return Needs(frozenset(problem), None if penalty is None else frozenset(penalty), smooth,
                 {k: frozenset(v) for k, v in (with_blocks or {}).items()})


@dataclasses.dataclass(frozen=True)
class Option:
    """An option of a spec, passed to :func:`bcd.solve` as a keyword.

    ``choices`` maps each accepted string to its :class:`Needs` (None for a
    numeric option, checked by ``check``); ``default`` may be a callable of
    the problem's capabilities, for a default that depends on them.
    ``blocks`` restricts the option to some block strategies.

    ``doc`` is the option's line in the table of valid combinations;
    ``text`` its entry in the docstring of :func:`bcd.solve` (numpydoc
    prose, defaulting to ``doc``), under the type ``kind`` for an option
    without choices (``"int"``, ``"bool"``; the choices make the type of
    the others).  ``auto``: the automatic configuration may choose the
    option; :func:`bcd.solve` then takes ``"auto"`` (its default) for "as
    the automatic configuration chooses, else ``default``", and giving the
    option keeps the automatic configuration.  Any other option given makes
    the configuration explicit.
    """
    name: str
    default: Any
    doc: str
    choices: Optional[Mapping[str, Needs]] = None
    check: Optional[Callable[[Any], Any]] = None
    blocks: Optional[frozenset] = None
    text: str = ""
    kind: str = "int"
    auto: bool = False

    def default_for(self, capabilities):
        return self.default(capabilities) if callable(self.default) else self.default

    def given(self, value):
        """Whether ``value``, passed to :func:`bcd.solve`, gives the option
        (None, and "auto" for an option the automatic configuration
        chooses, leave it to the configuration)."""
        if self.auto:
            return not (isinstance(value, str) and value == "auto")
        return value is not None

    def signature(self):
        """The numpydoc type line of the option in :func:`bcd.solve`."""
        if self.choices is not None:
            kind = "{" + ", ".join(f'"{c}"' for c in self.choices) + "}"
        else:
            kind = self.kind
        if self.auto:
            return f'{kind} or "auto", default="auto"'
        if callable(self.default) or self.default is None:
            return f"{kind}, optional"
        default = f'"{self.default}"' if isinstance(self.default, str) else repr(self.default)
        return f"{kind}, default={default}"


@dataclasses.dataclass(frozen=True)
class Spec:
    """One rule, update or block strategy.

    Attributes
    ----------
    kind : {"rule", "update", "blocks"}
    name : str
    build : callable
        Builds the compiled part from a :class:`bcd.core.assembly.Context`.
    needs : Needs
    blocks : frozenset of str or None
        Block strategies it works with (None: all; block specs use None).
    gradient : bool
        Whether it reads the full gradient, kept up to date incrementally
        (greedy rules).
    options : tuple of Option
    doc : str
        One line for the documentation.
    default_block_size : callable or None
        Rules: ``block_size`` when none is given, as a function of n
        (None: ``min(5, n)``).
    default_tol : float or None
        Rules: ``tol`` when none is given (None: 1e-6).
    block_matrix : bool or callable
        Updates: whether an iteration forms a dense block matrix (a
        function of the block strategy and the resolved options when it
        depends on them); it sets the spacing of the stopping tests.
    solve : callable or None
        Block strategies that solve their own blocks (the forest-structured
        ones, by message passing): builds the update from the
        :class:`~bcd.core.assembly.Context`.  Every update spec that lists
        the strategy in its ``blocks`` then means this solve.
    alias_of : str or None
        Another name of the spec named here (listed once in tables).
    """
    kind: str
    name: str
    build: Callable
    needs: Needs = Needs()
    blocks: Optional[frozenset] = None
    gradient: bool = False
    options: tuple = ()
    doc: str = ""
    default_block_size: Optional[Callable[[int], int]] = None
    default_tol: Optional[float] = None
    block_matrix: Any = False
    solve: Optional[Callable] = None
    alias_of: Optional[str] = None


def integer_at_least(name, low, none=False):
    """A check of an integer option ``name`` >= ``low`` (or None, if ``none``)."""
    what = {0: "a non-negative integer", 1: "a positive integer"}.get(low, f"an integer >= {low}")
    if none:
        what += " or None"

    def check(value):
        if none and value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name} must be {what}, got {value!r}.")
        return int(value)
    return check


def boolean(name):
    def check(value):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {value!r}.")
        return bool(value)
    return check


def _names(names):
    return ", ".join(names) if names else "none"


def _describe(caps):
    return ", ".join(f"{PROBLEM_CAPABILITIES.get(c, c)} ({c!r})" for c in sorted(caps))


def _problem_name(problem):
    return type(problem).__name__


def _penalty_name(penalty):
    return type(penalty).__name__


def unmet(spec, blocks, problem, given=None):
    """Why ``spec`` cannot run with ``blocks`` on ``problem`` (None if it can).

    ``given`` maps option names to chosen values (their choices may add
    requirements).
    """
    if spec.blocks is not None and blocks not in spec.blocks:
        return (f"works with blocks {_names([repr(b) for b in sorted(spec.blocks)])}, not "
                f"blocks={blocks!r}")
    parts = [("", spec.needs)]
    for opt in spec.options:
        value = (given or {}).get(opt.name)
        if opt.choices is not None and value in opt.choices:
            parts.append((f"with {opt.name}={value!r} ", opt.choices[value]))
    caps = problem.capabilities
    penalty = problem.penalty
    for label, need in parts:
        missing = need.problem_needs(blocks) - caps
        if missing:
            return (f"{label}needs {_describe(missing)}, which {_problem_name(problem)} does "
                    f"not provide")
        if penalty is None and not need.smooth:
            return f"{label}needs a penalty (penalty=...)"
        if penalty is not None:
            if need.penalty is None:
                return f"{label}does not handle a penalty ({penalty!r})"
            missing = need.penalty - penalty.capabilities
            if missing:
                what = ", ".join(PENALTY_CAPABILITIES.get(c, c) for c in sorted(missing))
                return (f"{label}needs a penalty with {what}, which {_penalty_name(penalty)} "
                        f"does not have")
    return None


def available(table, blocks, problem):
    """Names of the specs of ``table`` usable with ``blocks`` on ``problem``:
    with their default options, or else with one other option choice,
    which is then named (``"'gradient' (lipschitz='estimate')"``)."""
    out = []
    for name, spec in table.items():
        if spec.alias_of is not None:
            continue
        defaults = {o.name: o.default_for(problem.capabilities) for o in spec.options}
        if unmet(spec, blocks, problem, defaults) is None:
            out.append(repr(name))
            continue
        for opt in spec.options:
            for choice in opt.choices or ():
                if unmet(spec, blocks, problem, {**defaults, opt.name: choice}) is None:
                    out.append(f"{name!r} ({opt.name}={choice!r})")
                    break
            else:
                continue
            break
    return out


class SpecTable(dict):
    """A table of specs (name -> :class:`Spec`): a dict that counts its
    changes, so that what is derived from the tables (:func:`option_index`)
    is computed once and again only after a spec is added, replaced or
    removed (a rule registered at run time)."""

    __slots__ = ("version",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.version = 0

    def _changed(self):
        self.version += 1

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self._changed()

    def __delitem__(self, key):
        super().__delitem__(key)
        self._changed()

    def pop(self, *args):
        out = super().pop(*args)
        self._changed()
        return out

    def popitem(self):
        out = super().popitem()
        self._changed()
        return out

    def setdefault(self, key, default=None):
        out = super().setdefault(key, default)
        self._changed()
        return out

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        self._changed()

    def clear(self):
        super().clear()
        self._changed()


_INDEX = {}


def _tables_key(tables):
    """What the tables' derived data depend on: their identities and change
    counts (for plain dicts, the identities of their specs)."""
    return tuple((id(table), table.version) if isinstance(table, SpecTable)
                 else (id(table), tuple(map(id, table.values()))) for table in tables)


def option_index(tables):
    """``{name: (Option, [specs that take it])}`` of every option of the
    specs in ``tables``, in table order (aliases left out; the first
    definition of a name gives its Option).

    Cached until a table changes: a spec added, replaced or removed (a rule
    registered at run time) is seen at the next call."""
    key = _tables_key(tables)
    index = _INDEX.get(key)
    if index is None:
        index = {}
        for table in tables:
            for spec in table.values():
                if spec.alias_of is not None:
                    continue
                for opt in spec.options:
                    index.setdefault(opt.name, (opt, []))[1].append(spec)
        _INDEX.clear()          # one entry: the tables change only when specs are registered
        _INDEX[key] = index
    return index


def options_docstring(tables, indent="    "):
    """The numpydoc entries of the spec options, for the docstring of
    :func:`bcd.solve`: each option's type, the specs that take it and its
    ``text``."""
    lines = []
    for name, (opt, specs) in option_index(tables).items():
        owners = ", ".join(f"``{s.kind}={s.name!r}``" for s in specs)
        lines.append(f"{name} : {opt.signature()}")
        body = (opt.text or opt.doc[:1].upper() + opt.doc[1:] + ".").strip()
        body += f"  Option of {owners}."
        lines += _wrap(body, indent, 78)
    return "\n".join(indent + line if line else "" for line in lines)


def _wrap(text, indent, width):
    """``text`` (paragraphs separated by blank lines) as indented lines."""
    out = []
    for k, paragraph in enumerate(text.split("\n\n")):
        if k:
            out.append("")
        # the source's line breaks and indentation become one space; the two
        # spaces after a full stop stay
        words = re.sub(r"\.[ \t]*\n[ \t]*", ".  ", paragraph.strip())
        words = re.sub(r"[ \t]*\n[ \t]*", " ", words)
        out += textwrap.wrap(words, width - 2 * len(indent),
                             initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False, break_long_words=False)
    return out


def _lookup(table, kind, name):
    if not isinstance(name, str) or name not in table:
        valid = ", ".join(repr(k) for k in table)
        raise ValueError(f"Unknown {kind} {name!r}; valid values are {valid}.")
    return table[name]


def check_combination(problem, blocks, rule, update, options, tables):
    """Validate a rule / blocks / update combination and its options.

    Parameters
    ----------
    problem : Problem
    blocks, rule, update : str
    options : dict
        The spec options given by the caller (name -> value; None means
        "not given").
    tables : (BLOCKS, RULES, UPDATES)

    Returns
    -------
    specs : (Spec, Spec, Spec)
        The block, rule and update specs.
    resolved : dict
        Every option of the three specs, with defaults filled in.

    Raises
    ------
    ValueError
        Naming what is wrong and listing what is available instead.
    """
    block_table, rule_table, update_table = tables
    b_spec = _lookup(block_table, "blocks", blocks)
    r_spec = _lookup(rule_table, "rule", rule)
    u_spec = _lookup(update_table, "update", update)
    specs = (b_spec, r_spec, u_spec)
    caps = problem.capabilities

    # options: each given option must belong to one of the three specs
    owners = {}
    for spec in specs:
        for opt in spec.options:
            if opt.blocks is None or blocks in opt.blocks:
                owners[opt.name] = (spec, opt)
    resolved = {}
    for name, value in options.items():
        if value is None:
            continue
        if name not in owners:
            users = [f"{s.kind} {s.name!r}" for t in tables for s in t.values()
                     if any(o.name == name for o in s.options) and s.alias_of is None]
            raise ValueError(f"Option {name}={value!r} does not apply to rule={rule!r}, "
                             f"blocks={blocks!r}, update={update!r}; it is an option of "
                             f"{', '.join(users)}.")
        spec, opt = owners[name]
        if opt.choices is not None:
            if not isinstance(value, str) or value not in opt.choices:
                valid = ", ".join(repr(c) for c in opt.choices)
                raise ValueError(f"Unknown {name} {value!r} for {spec.kind} {spec.name!r}; "
                                 f"valid values are {valid}.")
        elif opt.check is not None:
            value = opt.check(value)
        resolved[name] = value
    for name, (spec, opt) in owners.items():
        resolved.setdefault(name, opt.default_for(caps))

    # the specs themselves, block strategy first
    why = unmet(b_spec, blocks, problem, resolved)
    if why:
        valid = [repr(b) for b in block_table
                 if unmet(block_table[b], b, problem, resolved) is None]
        raise ValueError(f"blocks={blocks!r} {why}; block strategies available for this "
                         f"problem: {_names(valid)}.")
    for spec, table in ((r_spec, rule_table), (u_spec, update_table)):
        why = unmet(spec, blocks, problem, resolved)
        if why:
            valid = available(table, blocks, problem)
            raise ValueError(f"{spec.kind} {spec.name!r} {why}; {spec.kind}s available for "
                             f"{_problem_name(problem)}"
                             f"{' with a penalty' if problem.penalty is not None else ''} and "
                             f"blocks={blocks!r}: {_names(valid)}.")
    return specs, resolved


def combination_table(tables):
    """Markdown tables of the block strategies, rules and updates with what
    they need (the documentation shows this, generated from the specs)."""
    lines = []
    for title, table in zip(("Block strategies", "Rules", "Updates"), tables):
        has_blocks = title != "Block strategies"
        head = ["name", "what it does", "problem needs", "penalty"]
        head += ["block strategies"] if has_blocks else []
        head += ["options"]
        lines += [f"### {title}", "", "| " + " | ".join(head) + " |",
                  "|" + "---|" * len(head)]
        for name, spec in table.items():
            if spec.alias_of is not None:
                continue
            n = spec.needs
            caps = ", ".join(f"`{c}`" for c in sorted(n.problem)) or "–"
            extra = "; ".join(f"with {b}: " + ", ".join(f"`{c}`" for c in sorted(v))
                              for b, v in sorted(n.with_blocks.items()))
            if extra:
                caps += f" ({extra})"
            if n.penalty is None:
                pen = "not supported"
            else:
                pen = ("required" if not n.smooth else "supported") + (
                    ", needs " + ", ".join(f"`{c}`" for c in sorted(n.penalty))
                    if n.penalty else "")
            row = [f"`{name}`", spec.doc, caps, pen]
            if has_blocks:
                row.append(", ".join(sorted(spec.blocks)) if spec.blocks is not None else "all")
            row.append("; ".join(_option_doc(o) for o in spec.options) or "–")
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)


def capability_table(problem_classes, penalty_classes):
    """Markdown tables of the capabilities of problem and penalty classes."""
    lines = ["### Problems", "", "| problem | " + " | ".join(f"`{c}`" for c in PROBLEM_CAPABILITIES)
             + " |", "|---|" + "---|" * len(PROBLEM_CAPABILITIES)]
    for cls in problem_classes:
        lines.append(f"| `{cls.__name__}` | " + " | ".join(
            "yes" if c in cls.capabilities else "" for c in PROBLEM_CAPABILITIES) + " |")
    lines += ["", "### Penalties", "",
              "| penalty | " + " | ".join(f"`{c}`" for c in PENALTY_CAPABILITIES) + " |",
              "|---|" + "---|" * len(PENALTY_CAPABILITIES)]
    for cls in penalty_classes:
        lines.append(f"| `{cls.__name__}` | " + " | ".join(
            "yes" if c in cls.capabilities else "" for c in PENALTY_CAPABILITIES) + " |")
    return "\n".join(lines) + "\n"


def _option_doc(opt):
    default = "" if callable(opt.default) else f", default {opt.default!r}"
    if opt.choices is None:
        return f"`{opt.name}` ({opt.doc}{default})"
    parts = []
    for choice, need in opt.choices.items():
        req = ", ".join(f"`{c}`" for c in sorted(need.problem))
        if need.penalty is None:
            req = (req + ", " if req else "") + "no penalty"
        parts.append(f"{choice}" + (f" ({req})" if req else ""))
    return f"`{opt.name}` ({opt.doc}{default}): " + ", ".join(parts)
