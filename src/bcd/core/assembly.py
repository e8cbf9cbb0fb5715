"""Assembly of the compiled parts of a solve from validated options.

:func:`assemble` is the one path from option names to compiled objects:
it validates the combination against the spec tables
(``bcd.core.specs.check_combination``), compiles the problem, builds
the block strategy's units, the update and the rule's selector, and
returns an :class:`Assembly` that can run the engine.  :func:`bcd.solve`
is built on it; it is also the way to inspect a selector or an update (for
example :meth:`Assembly.draw`).
"""
import numpy as np

from .._validation import LazyEntropy, LazyRandomState, check_random_state, seed_words
from . import _engine
from ._select import CyCyclicSelector
from .blocks import BLOCKS, Units
from .rules import RULES
from .specs import check_combination, option_index
from .updates import UPDATES

TABLES = (BLOCKS, RULES, UPDATES)

#: the arguments of :func:`bcd.solve` that name the parts of a configuration
PARTS = ("rule", "blocks", "block_size", "update")


def configuration_options():
    """The options of :func:`bcd.solve` that give an explicit configuration
    instead of the automatic one: :data:`PARTS` and every spec option of the
    tables but those the automatic configuration chooses itself
    (``Option.auto``), in table order."""
    return PARTS + tuple(name for name, (opt, _) in option_index(TABLES).items()
                         if not opt.auto)


class Context:
    """What the builders of block strategies, rules and updates may use.

    Attributes
    ----------
    problem : bcd.problems.Problem
    state : CyProblem
        The compiled problem.
    blocks : str
        The block strategy.
    block_size : int or None
        ``block_size`` (None for forest-structured blocks).
    options : dict
        Every spec option, resolved (for example ``options["partition"]``).
    rng : numpy RandomState or Generator
    graph, graph_matrix : CyGraph, csr_matrix or None
        The Hessian's graph, for forest-structured blocks.
    units : Units
        The block strategy's units (set once built).
    seed : (int, int)
        Seed words of the compiled random number generator (set once the
        units are built, so that random partitions draw first).
    coordinates : int32 array or None
        The coordinates the block strategy may use (a working set), sorted;
        None: all.
    """

    def __init__(self, problem, state, blocks, block_size, options, rng, graph=None):
        self.coordinates = None
        self.problem = problem
        self.state = state
        self.blocks = blocks
        self.block_size = block_size
        self.options = options
        self.rng = rng
        self.graph, self.graph_matrix = graph if graph is not None else (None, None)
        self.units = None
        self.seed = None

    @property
    def n(self):
        return self.problem.n_coordinates


class Assembly:
    """The compiled parts of one solve.

    Attributes
    ----------
    state : CyProblem
        The compiled problem, holding the iterate (``state.get_x()``).
    units : Units
        The block strategy's units.
    selector : CySelector
    update : CyUpdate
    specs : (Spec, Spec, Spec)
        The block, rule and update specs.
    options : dict
        ``rule``, ``blocks``, ``update``, ``block_size`` and every spec option.
    """

    def __init__(self, state, units, selector, update, specs, options, context):
        self.state = state
        self.units = units
        self.selector = selector
        self.update = update
        self.specs = specs
        self.options = options
        self.context = context

    def restrict(self, coordinates):
        """Rebuild the units, the update and the selector on a subset of the
        coordinates (sorted int32; None: all), keeping the iterate: the
        inner problem of a working set."""
        b_spec, r_spec, u_spec = self.specs
        ctx = self.context
        ctx.coordinates = coordinates
        units = ctx.units = b_spec.build(ctx)
        self.state.reserve(units.max_block, units.max_block if units.dense else 1)
        step = (b_spec.solve or u_spec.build)(ctx)
        step.reserve(units.max_block)
        self.units, self.update = units, step
        self.selector = _selector(ctx, r_spec)

    @property
    def block_matrix(self):
        """Whether an iteration forms a dense block matrix."""
        flag = self.specs[2].block_matrix
        if callable(flag):
            flag = flag(self.options["blocks"], self.options)
        return bool(self.units.dense and flag)

    def draw(self, count):
        """The next ``count`` blocks the rule picks at the current iterate,
        without stepping."""
        return self.selector.draw(self.state, count)

    @property
    def pass_length(self):
        """Iterations in one pass over the units."""
        u = self.units
        return max(1, -(-u.n_units // max(1, u.per_iteration)))

    def run(self, max_iter, tol=0.0, max_time=0.0, check_every=10**9, callback=None,
            callback_every=1, progress=None, monitor=None, scope=None, extrapolation=None,
            first_iteration=0):
        """Run the engine from the current iterate; returns its Outcome.

        ``scope`` restricts the stopping test to some coordinates (those of
        a :meth:`restrict`); ``extrapolation`` is a
        :class:`~bcd.core._extrapolate.CyAnderson`, tried once per pass.
        """
        settings = _engine.Settings(
            max_iter=max_iter, tol=tol, max_time=max_time, check_every=check_every,
            callback=callback, callback_every=callback_every,
            max_block=self.units.max_block, greedy=self.specs[1].gradient, progress=progress,
            scope=scope, extrapolation=extrapolation, pass_length=self.pass_length,
            first_iteration=first_iteration)
        return _engine.run(self.state, self.selector, self.update, settings, monitor)


def assemble(problem, rule, blocks, update, block_size=None, random_state=None, x0=None,
             **options):
    """Validate a configuration and build its compiled parts.

    Parameters are those of :func:`bcd.solve`; ``options`` are the spec
    options (those of the ``bcd.core.specs.Option`` entries of the
    three specs; None: not given).  ``x0`` must already be validated.

    Returns
    -------
    Assembly
    """
    specs, resolved = check_combination(problem, blocks, rule, update, options, TABLES)
    b_spec, r_spec, u_spec = specs
    # an integer seed is seeded only if a draw needs it (see LazyRandomState);
    # no seed: fresh entropy, through a Generator only if a draw other than
    # the compiled generators' seed words needs one (see LazyEntropy)
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        rng = LazyRandomState(random_state)
    elif random_state is None:
        rng = LazyEntropy()
    else:
        rng = check_random_state(random_state)
    n = problem.n_coordinates
    if b_spec.solve is not None:
        block_size = None        # blocks the strategy solves itself take their size from it
    elif block_size is None:
        default = r_spec.default_block_size
        block_size = default(n) if default is not None else min(5, n)
    state = problem.compile(r_spec.gradient, block_size or 1)
    if x0 is not None:
        state.set_x(x0)
    if problem.penalty is not None:
        # projects x onto the domain of the penalty
        state.set_penalty(problem.penalty.compile(n))
    graph = None
    if "graph" in b_spec.needs.problem:
        cached, matrix = problem.hessian_graph()
        graph = (cached.fork(), matrix)         # the solve's own scratch
    ctx = Context(problem, state, blocks, block_size, resolved, rng, graph)
    units = ctx.units = b_spec.build(ctx)
    state.reserve(units.max_block, units.max_block if units.dense else 1)
    step = (b_spec.solve or u_spec.build)(ctx)
    step.reserve(units.max_block)
    selector = _selector(ctx, r_spec)
    record = dict(rule=rule, blocks=blocks, block_size=block_size, update=update, **resolved)
    return Assembly(state, units, selector, step, specs, record, ctx)


def _selector(ctx, r_spec):
    if ctx.units.n_units == 0:
        # no coordinate can move; a one-unit placeholder keeps the selector valid
        placeholder = Units(np.array([0, 0], np.int32), np.zeros(0, np.int32), 1, np.zeros(1),
                            ctx.n)
        return CyCyclicSelector(placeholder.ptr, placeholder.coords, placeholder.lipschitz,
                                1, (0, 0), False)
    ctx.seed = seed_words(ctx.rng)
    return r_spec.build(ctx)
