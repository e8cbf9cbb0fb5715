"""The solver entry point."""
import math
import time

import numpy as np

from . import _interrupt
from ._certify import Certificate, certify_returned
from ._progress import make_progress
from ._result import ConvergenceWarning, History, Result, warn_user
from ._validation import check_scalar, check_vector
from .core import _engine
from .core import workingset
from .core._extrapolate import CyAnderson
from .core._monitor import CyFaceMonitor
from .core import auto
from .core.assembly import TABLES, assemble
from .core.specs import option_index, options_docstring
from .problems import Problem
from ._newton import check_newton, run_newton
from .problems.dual import check_dual, solve_dual

_INT_MAX = 2**62
#: the default max_iter allows this many passes over the coordinates
MAX_PASSES = 1000
#: the default max_iter of formulation="newton": outer iterations
NEWTON_ITERATIONS = 1000
#: the default max_iter of an exact update of a block of every coordinate:
#: the direct solve of a quadratic and its iterative refinement, which
#: reaches the accuracy the conditioning allows within a few steps (a
#: Gaussian process of duplicate inputs with noise 1e-8 stays at a residual
#: of 6e-6 from its second step on, as numpy.linalg.solve's does)
EXACT_STEPS = 10


class IterationInfo:
    """What a callback receives: ``iteration``, ``x`` (a copy) and ``objective``."""

    __slots__ = ("iteration", "x", "objective")

    def __init__(self, iteration, x, objective):
        self.iteration = iteration
        self.x = x
        self.objective = objective

    def __repr__(self):
        return f"IterationInfo(iteration={self.iteration}, objective={self.objective:.10g})"


@_interrupt.records
def solve(problem, rule="auto", blocks="auto", block_size="auto", update="auto", *,
          tol=None, max_iter=None, max_time=None, tol_mode="absolute", x0=None,
          random_state=None, callback=None, callback_every=1, verbose=False,
          check_every="auto", target_support=None, screening=True, gap_tol=None, warn=True,
          formulation="auto", shrinking=True, **options):
    """Minimize a problem by block coordinate descent.

    With ``rule``, ``blocks``, ``block_size`` and ``update`` all left at
    ``"auto"`` (and no option of a rule, block strategy or update given but
    ``working_set`` and ``extrapolation``, see Other Parameters), the
    configuration is chosen from the problem's structure,
    penalty and size by the measured table ``bcd.core.auto.AUTO_TABLE``
    (for example coordinate descent on working sets with Anderson
    extrapolation for a Lasso, forest-structured blocks for label
    propagation); the choice is
    recorded in ``result.options`` (``options["auto"]`` names the table's
    row; for kernel systems, ``options["auto_prediction"]`` gives the
    predicted times of a dense solve and of GBCD that decided between them,
    see ``bcd.core.calibration``) and printed with ``verbose=True``.  As soon as one of them is
    given, those not given take the defaults ``rule="gs"``,
    ``blocks="variable"``, ``update="gradient"`` and no working set or
    extrapolation.

    Parameters
    ----------
    problem : bcd.problems.Problem
        A problem such as :class:`bcd.LeastSquares` or :class:`bcd.Logistic`.
    rule : {"auto", "gs", "gsl", "gsd", "gsq", "gbcd", "cyclic", "random", "lipschitz"}, default="auto"
        Block selection rule.  ``"gs"`` (Gauss-Southwell) takes the block
        with the largest gradient norm (fixed blocks) or the ``block_size``
        coordinates with the largest ``|grad_i f|`` (variable blocks).
        ``"gsl"`` maximizes ``||grad_b f||^2 / L_b`` (fixed blocks; for
        variable blocks the GSD rule with SIRT diagonals, as in the paper).
        ``"gsd"`` maximizes ``sum_{i in b} (grad_i f)^2 / D_i`` with ``D_i``
        chosen by ``gsd_diagonal``.  ``"gsq"`` maximizes
        ``grad_b.T H_b^{-1} grad_b``: exactly for fixed blocks, and for
        variable blocks by an approximate L0-constrained quadratic solve
        (``gsq_method``) started from the GS block.
        ``"lipschitz"`` samples blocks with probability proportional to
        ``L_b`` (fixed) or coordinates proportional to ``L_i`` without
        replacement (variable).  ``"gbcd"`` (alias ``"mi"``), for quadratic
        problems with variable blocks, approximates the maximum-improvement
        rule greedily (Bo and Sminchisescu): the block grows one coordinate
        at a time, each the best of ``mi_candidates`` random coordinates by
        the exact decrease of f given those already chosen, and the block's
        minimizer comes with it (use ``update="exact"``).  ``"cyclic"`` cycles through the fixed
        blocks, or through chunks of a fresh random permutation for
        variable blocks.  ``"random"`` samples uniformly.
    blocks : {"auto", "variable", "fixed", "tree", "forest_partition", "coloring"}, default="auto"
        Variable blocks: any ``block_size`` coordinates.  Fixed blocks: a
        partition chosen once (see ``partition``).  The forest-structured
        strategies need a problem with a sparse Hessian graph
        (:class:`bcd.Quadratic`, :class:`bcd.LabelPropagation`); their blocks
        induce forests of that graph and are solved exactly by message passing
        in time linear in the block (``update`` "exact", "matrix" or "newton",
        which coincide there; ``block_size`` is not used).  ``"tree"``
        grows a maximal forest every iteration, trying nodes in decreasing
        order of ``|grad_i f|`` (rule "gs"), ``|grad_i f| / sqrt(D_i)``
        (rule "gsd") or in random order (rule "random").
        ``"forest_partition"`` is the greedy partition into forests and
        ``"coloring"`` the greedy (Welsh-Powell) colouring, whose blocks have
        no internal edges (red-black on a lattice); their blocks are chosen
        by any rule but "gsq" (see ``vertex_order``).
    block_size : int or "auto", default="auto"
        Block size tau, between 1 and ``problem.n_coordinates``.  With an
        explicit configuration: 5, and ``min(500, n)`` for rule "gbcd".
    update : {"auto", "gradient", "linesearch", "matrix", "newton", "exact", "two_metric", "homotopy"}, default="auto"
        ``"gradient"``: ``x_b -= grad_b f / L_b`` (see ``lipschitz``).
        ``"linesearch"``: the direction ``-grad_b f`` with an Armijo
        backtracking search from step 1 (quadratic, then cubic
        interpolation).  ``"matrix"``: ``x_b -= H_b^{-1} grad_b f`` with the
        curvature bound ``H_b`` of Appendix B.  ``"newton"``: the block
        Hessian at ``x`` instead of ``H_b``, with the same line search.
        ``"exact"``: the block minimizer, for quadratic problems only.
        With a penalty g: ``"gradient"`` is the proximal gradient step,
        ``"newton"`` the proximal Newton step (eq. 38, the block
        subproblem solved exactly, with a backtracking search on its step
        parameter) and ``"two_metric"`` two-metric projection (Newton on
        the coordinates free to move, proximal gradient on those held at a
        bound or at 0); ``"homotopy"`` the exact block minimizer of a
        quadratic with an L1 penalty or bounds along a piecewise-linear path.
    max_iter : int, optional
        Maximum number of block updates.  Default 10000, and with the
        automatic configuration the updates of 1000 passes over the
        coordinates (at least 10000); 10 for the exact update of a block
        of every coordinate (a direct solve and its refinement).
    tol : float, optional
        Stop when ``||grad f(x)||_inf <= tol`` (unscaled objective; with a
        penalty the KKT residual, see :class:`Result`).  Default 1e-6, and
        1e-4 for rule "gbcd" (the criterion of Bo and Sminchisescu for
        Gaussian processes).  See ``tol_mode`` for data far from unit scale.
    tol_mode : {"absolute", "relative"}, default="absolute"
        ``"relative"``: stop when the optimality measure is at most ``tol``
        times ``||grad f(0)||_inf``, the scale of the gradient at the origin
        (the same for every starting point, so warm starts keep the same
        test).  Use it when the data are scaled far from 1: an absolute
        ``tol`` is met at once when everything is scaled down by 1e-10,
        and never when it is scaled up by 1e10 (rounding alone then leaves
        gradients above it).  A solve that converges at iteration 0 from
        the origin with a non-zero optimality measure warns that this may
        be the case.
    warn : bool, default=True
        Issue a ``ConvergenceWarning`` when the solve stops without
        converging (and for a suspicious convergence at iteration 0).
        ``False`` leaves the report to ``result.converged`` and
        ``result.message``: use it to silence the warning in code that runs
        on several threads, where ``warnings.catch_warnings`` is not safe
        (it changes the process-wide filters).
    max_time : float or None, default=None
        Wall-clock limit in seconds for the iteration loop (None or inf: no
        limit).  It is looked at between steps, and within a step that
        factors a block of 512 coordinates or more (by panels, between
        which Ctrl-C also stops it, x unmoved).
    x0 : array-like of shape (n_coordinates,), optional
        Starting point (default zeros).  Not modified.
    random_state : None, int, RandomState or Generator
        Seed for random rules, random partitions and cyclic permutations.
        The same seed reproduces the same iterates.
    callback : callable, optional
        ``callback(info)`` with an :class:`IterationInfo`, called every
        ``callback_every`` iterations (with ``formulation="newton"``: Newton
        steps).  Returning ``True`` stops the solve;
        ``None`` or ``False`` continue (any other value warns and
        continues).
    verbose : bool or int, default=False
        Progress output on standard output.  ``True`` (or 1) prints the
        configuration chosen automatically, then the iteration, objective,
        optimality and elapsed time at the stopping tests, at most about
        once a second, and a final line with the status.  ``2`` shows the
        same as one line rewritten in place when the output is a terminal
        (plain lines otherwise, as in a log file).  The reports come from
        the stopping tests, so with a large ``check_every`` they are rare.
    check_every : int or "auto", default="auto"
        Iterations between stopping tests (each test is one history row).
        ``"auto"`` spaces the tests so that they add about a quarter to the
        cost of the iterations they follow.  Not used with working sets,
        whose outer loop runs the tests (see ``working_set``).
    callback_every : int, default=1
        Iterations between callback calls.
    target_support : array-like of shape (n_coordinates,), optional
        With a penalty: a known solution's support (bool: non-zero, or for
        a box at a bound) or its faces (int in {-1, 0, 1}: the signs for L1,
        the bound for a box).  ``result.support_iteration`` is then the
        first iteration at which the iterate has it.
    screening : bool, default=True
        With working sets, on problems with safe screening rules (the Lasso:
        gap safe spheres), discard the coordinates proven zero at the
        solution.
    gap_tol : float, optional
        With working sets, on problems with a duality gap: also stop when
        the gap is at most ``gap_tol`` (it bounds F(x) - F*).
    formulation : {"auto", "primal", "dual", "newton"}, default="auto"
        The problem coordinate descent runs on.  ``"primal"``: the problem
        as given.  ``"dual"``: for L2-regularized linear models without a
        penalty and with ``l2 > 0`` on every coordinate but at most one (an
        intercept, minimized exactly as a block of its own at the stopping
        tests, with the rows centered along its column) (:class:`bcd.LeastSquares`,
        :class:`bcd.Logistic`, :class:`bcd.Multinomial`,
        :class:`bcd.LinearSVM`), its Fenchel dual, one coordinate per
        sample (``bcd.problems.dual``): exact or safeguarded Newton
        coordinate steps, the samples in a fresh random permutation every
        pass (``rule="random"``, the default), in order (``"cyclic"``) or
        the most violating ones (``"gs"``).  ``result.x`` is the primal
        solution, ``result.dual`` the dual variables and
        ``result.duality_gap`` certifies it: the stopping test is
        ``duality_gap <= tol`` (an upper bound of ``F(x) - F*``; with
        ``tol_mode="relative"``, ``tol`` times ``|F(x)|``), and
        ``result.optimality`` is that gap.  ``max_iter`` counts passes over
        the samples (default 1000) and ``n_iter`` the passes made;
        ``x0`` starts the dual variables at ``-s_i phi'(a_i^T x0)`` for
        least squares and the logistic loss (the hinge losses start at 0);
        ``extrapolation`` is the depth of Anderson extrapolation of the
        dual iterates (default 0: random orders gain little from it, the
        cyclic order much).  No other option of the primal configuration
        applies.  ``"newton"``: for linear models with a twice
        differentiable loss (:class:`bcd.LeastSquares`, :class:`bcd.Logistic`,
        :class:`bcd.Poisson`, :class:`bcd.LinearSVM` with the squared hinge),
        with or without a penalty: Newton steps whose quadratic models
        (weighted least squares) are solved by this function's automatic
        configuration, with a backtracking search on the objective
        (``bcd._newton``); ``max_iter`` counts Newton steps (default
        1000).  ``"auto"``: as the automatic configuration chooses (when no
        rule, block or update option is given), else ``"primal"``.
    shrinking : bool, default=True
        With ``formulation="dual"`` and a hinge loss: leave the dual
        variables held at a bound out of the passes until the others
        converge (liblinear's shrinking).  The stopping test always covers
        every sample.

    Other Parameters
    ----------------
    **options
        The options of particular rules, block strategies and updates,
        declared with them (``bcd.core.specs.Option``) and checked by
        ``bcd.core.specs.check_combination``; giving one that the chosen
        configuration does not use is an error naming the specs that take it.
        They are (generated from the spec tables):

@SPEC_OPTIONS@

    Returns
    -------
    Result
        Solution, objective, optimality measure, iteration count,
        convergence flag and reason, and history.  Every status but
        "converged" and "callback" comes with a :class:`ConvergenceWarning`:
        "max_iter", "max_time", "stalled", "diverged" (a non-finite
        objective or optimality measure: the result holds the last iterate
        and is never reported as converged) and "interrupted" (Ctrl-C
        during the solve: the loop checks for signals about every 0.1 s
        and returns the current iterate instead of raising
        ``KeyboardInterrupt``).

    Raises
    ------
    ValueError
        For invalid options, and when an exact block solve meets a block
        whose Hessian is not positive definite (f is not convex there; the
        message names the block).

    Notes
    -----
    A problem object holds no state of a solve: one problem can be solved
    from several threads at once, and the compiled loop runs without the
    GIL.

    Examples
    --------
    >>> import bcd
    >>> A, b = bcd.datasets.make_paper_dataset("A", n_samples=100, n_features=300)
    >>> lam = 0.1 * abs(A.T @ b).max()
    >>> result = bcd.solve(bcd.LeastSquares(A, b, penalty=bcd.L1(lam)))
    >>> result.converged, result.options["auto"]
    (True, 'penalized least squares')
    >>> result = bcd.solve(bcd.LeastSquares(A, b), rule="gs", blocks="variable",
    ...                    block_size=5, max_iter=20000, tol=1e-4)
    >>> result.converged
    True
    """
    args = locals()
    given_options, configures = _given_options(options) if options else ({}, False)
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a bcd problem instance (see bcd.problems.available()), "
                        f"got {type(problem).__name__}.")
    given = {name: value for name, value in (("rule", rule), ("blocks", blocks),
                                              ("block_size", block_size), ("update", update))
             if not _is_auto(value)}
    if not isinstance(formulation, str) or formulation not in FORMULATIONS:
        raise ValueError(f"formulation must be one of {list(FORMULATIONS)}, got "
                         f"{formulation!r}.")
    if formulation == "dual":
        return _solve_dual(problem, given, given_options, args, None)
    if formulation == "newton":
        return _solve_newton(problem, given, given_options, args, None)
    auto_row = None
    if not given and not configures:
        # the automatic configuration (of the primal alone with formulation="primal")
        config, auto_row = auto.choose(problem, TABLES, primal=formulation == "primal")
        config = dict(config)
        chosen = config.pop("formulation", "primal")
        if chosen == "dual":
            return _solve_dual(problem, {}, given_options, args, auto_row)
        if chosen == "newton":
            return _solve_newton(problem, {}, given_options, args, auto_row)
    else:
        config = dict(auto.EXPLICIT_DEFAULTS, **given)
    plan = _configure(problem, config, given_options, auto_row, args)
    out, ws_info = _run(plan)
    return _report(plan, out, ws_info)


def _given_options(options):
    """``(given, configures)``: the spec options given to :func:`solve`
    (those left to the configuration dropped: None, and "auto" for the
    options it chooses), and whether they make the configuration explicit
    (any but those the automatic configuration chooses); TypeError for a
    name that is no option of any spec."""
    index = option_index(TABLES)
    given, configures = {}, False
    for name, value in options.items():
        entry = index.get(name)
        if entry is None:
            raise TypeError(f"solve() got an unexpected keyword argument {name!r}; the options "
                            f"of rules, block strategies and updates are "
                            f"{', '.join(sorted(index))}.")
        opt = entry[0]
        if opt.given(value):
            given[name] = value
            configures = configures or not opt.auto
    return given, configures


class _Plan:
    """A configured primal solve: the assembled parts and the checked
    settings of :func:`solve`, between :func:`_configure`, :func:`_run` and
    :func:`_report`."""

    __slots__ = ("problem", "parts", "auto_row", "tol", "tol_mode", "max_iter", "max_time",
                 "check_every", "callback", "callback_every", "progress", "monitor",
                 "target_faces", "working", "screening", "gap_tol", "x0", "warn")


def _configure(problem, config, given_options, auto_row, args):
    """Check the settings of a primal solve, assemble its parts from
    ``config`` (rule, blocks, update, block_size and the options the
    automatic configuration chose) and the given spec options, and resolve
    the defaults that depend on them."""
    plan = _Plan()
    plan.problem, plan.auto_row = problem, auto_row
    n = problem.n_coordinates
    rule, blocks, update = config.pop("rule"), config.pop("blocks"), config.pop("update")
    block_size = config.pop("block_size", None)
    # the remaining choices of the table (partition, working set, extrapolation)
    # and the given options, which take precedence
    spec_options = dict(config, **given_options) if given_options else config
    if block_size is not None:
        block_size = check_scalar(block_size, "block_size", low=1, high=n, integer=True)
    max_iter, tol, max_time = args["max_iter"], args["tol"], args["max_time"]
    if max_iter is not None:
        max_iter = check_scalar(max_iter, "max_iter", low=0, high=_INT_MAX, integer=True)
    if tol is not None:
        tol = check_scalar(tol, "tol", low=0.0)
    if max_time is not None and not (isinstance(max_time, (int, float, np.floating))
                                     and max_time == np.inf):
        max_time = check_scalar(max_time, "max_time", low=0.0, low_inclusive=False)
    if max_time == np.inf:
        max_time = None
    callback, callback_every = args["callback"], args["callback_every"]
    callback_every = check_scalar(callback_every, "callback_every", low=1, high=_INT_MAX,
                                  integer=True)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, got {callback!r}.")
    x0 = args["x0"]
    if x0 is not None:
        x0 = check_vector(x0, "x0", n)
    target_faces, target_unsigned = _check_target_support(args["target_support"], problem)
    check_every = args["check_every"]
    auto_check = isinstance(check_every, str) and check_every == "auto"
    if not auto_check:
        check_every = check_scalar(check_every, "check_every", low=1, high=_INT_MAX,
                                   integer=True)
    gap_tol, tol_mode, screening = args["gap_tol"], args["tol_mode"], args["screening"]
    if gap_tol is not None:
        gap_tol = check_scalar(gap_tol, "gap_tol", low=0.0)
    if not isinstance(tol_mode, str) or tol_mode not in ("absolute", "relative"):
        raise ValueError(f"tol_mode must be 'absolute' or 'relative', got {tol_mode!r}.")
    if not isinstance(screening, (bool, np.bool_)):
        raise TypeError(f"screening must be True or False, got {screening!r}.")

    progress = make_progress(args["verbose"])

    parts = assemble(problem, rule, blocks, update, block_size, args["random_state"], x0,
                     **spec_options)
    if progress is not None and auto_row is not None:
        print(auto.describe(auto.configuration(parts.options), auto_row),
              file=progress.stream, flush=True)
    if tol is None:
        default = parts.specs[1].default_tol
        tol = 1e-6 if default is None else default
    if tol_mode == "relative":
        tol = tol * _gradient_scale(problem)
    units, state = parts.units, parts.state
    working = parts.options.get("working_set", False)
    if max_iter is None and update == "exact" and units.typical_size >= n:
        # a direct solve: more steps refine nothing the first few did not
        max_iter = EXACT_STEPS
    if max_iter is None:
        # automatic: the iterations of MAX_PASSES passes over the coordinates
        max_iter = 10000 if auto_row is None else max(
            10000, MAX_PASSES * math.ceil(n / max(units.typical_size, 1.0)))
    if working:
        check_every = None          # the outer loop tests; see bcd.core.workingset
    elif auto_check:
        per_iter, per_check = problem.iteration_costs(units.typical_size, state.tracking,
                                                      parts.block_matrix)
        check_every = max(1, math.ceil(4.0 * per_check / max(per_iter, 1.0)))
    if units.n_units == 0:
        # every coordinate has L_i = 0: the gradient is constant, nothing to do
        max_iter = 0
    if working:
        if gap_tol is not None and "duality_gap" not in problem.capabilities:
            raise ValueError(f"gap_tol needs a problem with a duality gap; "
                             f"{type(problem).__name__} has none.")
    elif gap_tol is not None:
        raise ValueError("gap_tol is a stopping test of working sets (working_set=True).")

    plan.callback = None if callback is None else _engine_callback(callback, problem.dtype)
    plan.monitor = (CyFaceMonitor(target_faces, target_unsigned)
                    if problem.penalty is not None else None)
    plan.parts, plan.tol, plan.tol_mode, plan.max_iter = parts, tol, tol_mode, max_iter
    plan.max_time, plan.check_every, plan.callback_every = max_time, check_every, callback_every
    plan.progress, plan.target_faces, plan.working = progress, target_faces, working
    plan.screening, plan.gap_tol, plan.x0, plan.warn = screening, gap_tol, x0, args["warn"]
    return plan


def _newton_callback(callback, every, dtype):
    """The Newton driver's callback ``(k, x, F) -> stop`` around the user's
    ``callback(IterationInfo) -> True to stop``, called every ``every`` steps
    (None without a callback)."""
    every = check_scalar(every, "callback_every", low=1, high=_INT_MAX, integer=True)
    if callback is None:
        return None
    if not callable(callback):
        raise TypeError(f"callback must be callable, got {callback!r}.")

    def step_cb(k, x, objective):
        if k % every:
            return False
        return _stops(callback(IterationInfo(k, x.astype(dtype), float(objective))))
    return step_cb


def _stops(answer):
    """Whether a callback's answer stops the solve: True does, None and
    False do not, anything else does not and is warned about."""
    if answer is None or isinstance(answer, (bool, np.bool_)):
        return bool(answer)
    warn_user(f"callback returned {answer!r}; only True stops the solve (None "
              f"or False continue).", UserWarning)
    return False


def _engine_callback(callback, dtype):
    """The engine's callback ``(iteration, state) -> stop`` around the user's
    ``callback(IterationInfo) -> True to stop``."""
    def engine_cb(it, k):
        return _stops(callback(IterationInfo(it, k.get_x().astype(dtype), k.get_objective())))
    return engine_cb


def _run(plan):
    """Run the engine (or the working-set loop around it): ``(Outcome,
    working-set info or None)``."""
    parts = plan.parts
    depth = parts.options.get("extrapolation", 0)
    if plan.working:
        return workingset.run(
            parts, plan.problem, max_iter=plan.max_iter, tol=plan.tol,
            max_time=plan.max_time or 0.0, callback=plan.callback,
            callback_every=plan.callback_every, progress=plan.progress, monitor=plan.monitor,
            extrapolation=depth, screening=bool(plan.screening), gap_tol=plan.gap_tol)
    out = parts.run(plan.max_iter, plan.tol, plan.max_time or 0.0, plan.check_every,
                    plan.callback, plan.callback_every, plan.progress, plan.monitor,
                    extrapolation=CyAnderson(depth) if depth else None)
    return out, None


def _report(plan, out, ws_info):
    """The :class:`Result` of a primal solve, with the warning of one that
    did not converge (or converged suspiciously at once)."""
    problem, parts, tol, monitor = plan.problem, plan.parts, plan.tol, plan.monitor
    history = History(*out.history)
    status_name = out.status_name
    progress = plan.progress
    if progress is not None:
        progress.end(progress.format(out.n_iter, out.objective, out.optimality, status_name))
    if status_name == "indefinite":
        block = out.block
        shown = ", ".join(str(int(i)) for i in block[:10]) + (", ..." if len(block) > 10 else "")
        raise ValueError(f"The Hessian of {type(problem).__name__} on the block of coordinates "
                         f"[{shown}] ({len(block)} in all; iteration {out.n_iter}) is not "
                         f"positive definite (a non-positive pivot): f is not strictly convex "
                         f"there, so the block has no unique minimizer.  The problem's Hessian "
                         f"must be positive definite (Quadratic: Q; GaussianProcess: K + noise "
                         f"I, which needs more noise when the kernel is not positive definite "
                         f"on the inputs, as Periodic may not be on inputs of 2 or more "
                         f"dimensions).")
    message = _engine.STATUS_MESSAGES[out.status]
    state = parts.state
    x = state.get_x()
    with np.errstate(over="ignore"):
        x_out = x.astype(problem.dtype, copy=False)
    if status_name != "diverged" and not np.all(np.isfinite(x_out)):
        # finite in float64, but beyond the range of the problem's float32
        status_name = "diverged"
        message = (f"Diverged: the iterate has entries beyond the range of {problem.dtype} "
                   f"(largest magnitude {np.abs(x).max():.3e}); solve with float64 data.")
    converged = status_name == "converged"
    if ws_info is not None and ws_info.gap_converged:
        message = "Converged: the duality gap reached gap_tol."
    elif ws_info is not None and ws_info.floor is not None:
        message = (f"Converged at the attainable accuracy: the optimality measure "
                   f"{ws_info.floor:.3e} is above tol = {tol:.3e} but at the rounding floor "
                   f"of its computation (two evaluations at the same x differ by as much), "
                   f"so no update can lower it.")
    if status_name == "diverged" and out.status_name == "diverged":
        where = "the starting point" if out.n_iter == 0 else f"iteration {out.n_iter}"
        message = (f"{message[:-1]} at {where} (objective {out.objective:.3e}, optimality "
                   f"{out.optimality:.3e}); the returned x is that iterate.")
    if not plan.warn:
        pass
    elif status_name not in ("converged", "callback"):
        detail = "" if status_name == "diverged" else \
            f" Optimality {out.optimality:.3e} > tol {tol:.3e}."
        warn_user(message + detail, ConvergenceWarning)
    elif converged and out.n_iter == 0 and plan.x0 is None and plan.tol_mode == "absolute" \
            and out.optimality > 0.0:
        warn_user(f"Converged at iteration 0: the optimality measure at the origin, "
                  f"{out.optimality:.3e}, is already below tol = {tol:.3e} although it is "
                  f"not zero.  If the data are scaled far below 1, use "
                  f"tol_mode='relative' or a smaller tol.", ConvergenceWarning)
    auto_row = plan.auto_row
    options = dict(parts.options, formulation="primal", check_every=plan.check_every, tol=tol,
                   tol_mode=plan.tol_mode,
                   max_iter=plan.max_iter, auto=None if auto_row is None else auto_row.name)
    if auto_row is not None:
        figures = auto.prediction(problem)
        if figures is not None:
            # the calibrated choice between a dense solve and GBCD (kernel systems)
            options["auto_prediction"] = figures
    gap = ws_info.duality_gap if ws_info is not None else None
    if gap is None and "duality_gap" in problem.capabilities and status_name != "diverged":
        # converged: the engine certified on state recomputed from x
        gap = problem.duality_gap(x, state if converged else None)
    # the certificates of the array returned (float32: cast from the iterate)
    cert = certify_returned(problem, x, x_out, Certificate(
        float(out.objective), float(out.optimality), gap, status_name, message, converged),
        tol=tol, state=state, gap_tol=plan.gap_tol, warn=plan.warn,
        gap_converged=ws_info is not None and ws_info.gap_converged)
    return Result(x_out if cert.x is None else cert.x, cert.objective,
                  cert.optimality, int(out.n_iter), cert.converged, cert.status, cert.message,
                  history, float(history.time[-1]) if len(history) else 0.0, options,
                  out.loop_time, duality_gap=cert.duality_gap,
                  active_set_iteration=monitor.changed_at if monitor is not None else None,
                  support_iteration=(None if monitor is None or plan.target_faces is None
                                     or monitor.target_reached_at < 0
                                     else int(monitor.target_reached_at)))


#: the values of ``formulation``
FORMULATIONS = ("auto", "primal", "dual", "newton")


def _driver_arguments(name, problem, given, given_options, args, allowed, takes):
    """The checked common arguments ``(max_iter or None, tol or None,
    tol_mode, max_time, x0)`` of a formulation that runs its own loop;
    ValueError naming any option of the primal configuration it does not
    take (``allowed``: those it does; ``takes``: their description)."""
    unused = [key for key in ("rule", "blocks", "block_size", "update")
              if key in given and key not in allowed]
    unused += [key for key in given_options if key not in allowed]
    for key, default in (("check_every", "auto"), ("callback", None),
                         ("target_support", None), ("gap_tol", None)):
        value = args[key]
        if key not in allowed and not (value is default or (isinstance(value, str)
                                                            and value == default)):
            unused.append(key)
    if unused:
        raise ValueError(f"formulation={name!r} takes only {takes}; got "
                         f"{', '.join(sorted(unused))}.")
    max_iter, tol, max_time = args["max_iter"], args["tol"], args["max_time"]
    if max_iter is not None:
        max_iter = check_scalar(max_iter, "max_iter", low=0, high=_INT_MAX, integer=True)
    if tol is not None:
        tol = check_scalar(tol, "tol", low=0.0)
    tol_mode = args["tol_mode"]
    if not isinstance(tol_mode, str) or tol_mode not in ("absolute", "relative"):
        raise ValueError(f"tol_mode must be 'absolute' or 'relative', got {tol_mode!r}.")
    if max_time is not None and not (isinstance(max_time, (int, float, np.floating))
                                     and max_time == np.inf):
        max_time = check_scalar(max_time, "max_time", low=0.0, low_inclusive=False)
    if max_time == np.inf:
        max_time = None
    x0 = args["x0"]
    if x0 is not None:
        x0 = check_vector(x0, "x0", problem.n_coordinates)
    return max_iter, tol, tol_mode, max_time, x0


def _driver_result(problem, x, status, n_iter, optimality, tol, elapsed, options, warn,
                   progress, duality_gap=None, dual=None, message=None, objective=None,
                   gap_test=False):
    """The Result of a formulation that runs its own loop (its final test is
    the history's one row), with the warning of a solve that did not converge.
    ``gap_test``: ``optimality`` is the duality gap (the dual formulation)."""
    if objective is None:
        with np.errstate(all="ignore"):
            objective = problem.objective(x)
    if status == "converged" and not np.isfinite(objective):
        status = "diverged"
    if message is None:
        message = _engine.STATUS_MESSAGES[_engine.STATUS_CODES[status]]
    if progress is not None:
        progress.end(progress.format(n_iter, objective, optimality, status))
    with np.errstate(over="ignore"):
        x_out = x.astype(problem.dtype, copy=False)
    if warn and status not in ("converged", "callback"):
        detail = "" if status == "diverged" else f" Optimality {optimality:.3e} > tol {tol:.3e}."
        warn_user(message + detail, ConvergenceWarning)
    history = History([n_iter], [objective], [optimality], [elapsed])
    # the certificates of the array returned (float32: cast from the iterate);
    # the dual's relative test is a gap of at most tol |F(x)|
    relative = options.get("formulation") == "dual" and options.get("tol_mode") == "relative"
    cert = certify_returned(problem, x, x_out, Certificate(
        float(objective), float(optimality), duality_gap, status, message,
        status == "converged"), tol=tol * abs(float(objective)) if relative else tol,
        gap_test=gap_test, warn=warn)
    return Result(x_out if cert.x is None else cert.x, cert.objective, cert.optimality,
                  int(n_iter), cert.converged, cert.status, cert.message, history, elapsed,
                  options, elapsed, duality_gap=cert.duality_gap, dual=dual)


def _solve_newton(problem, given, given_options, args, auto_row):
    """:func:`solve` with ``formulation="newton"``; ``args`` are its arguments."""
    check_newton(problem)
    max_iter, tol, tol_mode, max_time, x0 = _driver_arguments(
        "newton", problem, given, given_options, args, ("callback",),
        "max_iter (Newton iterations), tol, tol_mode, max_time, x0, random_state, verbose, "
        "callback (after every callback_every Newton steps) and warn")
    step_callback = _newton_callback(args["callback"], args["callback_every"], problem.dtype)
    max_iter = NEWTON_ITERATIONS if max_iter is None else max_iter
    tol = 1e-6 if tol is None else tol
    if tol_mode == "relative":
        tol = tol * _gradient_scale(problem)
    progress = make_progress(args["verbose"])
    if progress is not None and auto_row is not None:
        print(f"automatic configuration ({auto_row.name}): formulation='newton'",
              file=progress.stream, flush=True)
    t0 = time.perf_counter()
    x, status, n_iter, optimality, inner = run_newton(problem, tol, max_iter, max_time, x0,
                                                      args["random_state"], solve,
                                                      step_callback)
    options = dict(formulation="newton", tol=tol, tol_mode=tol_mode, max_iter=max_iter,
                   inner_iterations=inner, auto=None if auto_row is None else auto_row.name)
    message = None
    if status == "stalled":
        message = ("Stopped: no step along the Newton direction decreased the objective "
                   "(the optimality measure is at its rounding floor, or the model is poor).")
    return _driver_result(problem, x, status, n_iter, optimality, tol,
                          time.perf_counter() - t0, options, args["warn"], progress,
                          message=message)


def _solve_dual(problem, given, given_options, args, auto_row):
    """:func:`solve` with ``formulation="dual"``; ``args`` are its arguments."""
    check_dual(problem)
    max_iter, tol, tol_mode, max_time, x0 = _driver_arguments(
        "dual", problem, given, given_options, args, ("rule", "extrapolation"),
        "rule ('random', 'cyclic' or 'gs'), extrapolation, max_iter, tol, tol_mode, "
        "max_time, x0, random_state, shrinking, verbose and warn")
    depth = given_options.get("extrapolation", "auto")
    depth = 0 if _is_auto(depth) else check_scalar(depth, "extrapolation", low=0,
                                                   high=100, integer=True)
    rule = given.get("rule", "random")
    max_iter = MAX_PASSES if max_iter is None else max_iter
    tol = 1e-6 if tol is None else tol
    shrinking = args["shrinking"]
    if not isinstance(shrinking, (bool, np.bool_)):
        raise TypeError(f"shrinking must be True or False, got {shrinking!r}.")
    progress = make_progress(args["verbose"])
    options = dict(formulation="dual", rule=rule, shrinking=bool(shrinking),
                   extrapolation=depth, tol=tol,
                   tol_mode=tol_mode, max_iter=max_iter,
                   auto=None if auto_row is None else auto_row.name)
    if progress is not None and auto_row is not None:
        print(f"automatic configuration ({auto_row.name}): formulation='dual', rule={rule!r}",
              file=progress.stream, flush=True)
    t0 = time.perf_counter()
    out = solve_dual(problem, tol, max_iter, max_time, rule, args["random_state"], x0,
                     bool(shrinking), depth, relative=tol_mode == "relative")
    message = None
    if out.status == "max_iter":
        message = _engine.STATUS_MESSAGES[_engine.STATUS_CODES["max_iter"]].replace(
            "max_iter", "max_iter passes over the samples")
    elif out.status == "converged" and out.duality_gap > tol * (
            abs(out.objective) if tol_mode == "relative" else 1.0):
        message = (f"Converged: the duality gap {out.duality_gap:.3e} is above tol but within "
                   f"the rounding of the primal and dual objectives, the attainable accuracy.")
    return _driver_result(problem, out.x, out.status, out.n_epochs, out.duality_gap, tol,
                          time.perf_counter() - t0, options, args["warn"], progress,
                          duality_gap=out.duality_gap, dual=out.dual, message=message,
                          objective=out.objective, gap_test=True)


def _gradient_scale(problem):
    """``||grad f(0)||_inf`` (1 where it is zero or not finite): the scale of
    ``tol_mode="relative"``."""
    g = np.asarray(problem.gradient(np.zeros(problem.n_coordinates)), dtype=np.float64)
    scale = float(np.max(np.abs(g), initial=0.0))
    return scale if np.isfinite(scale) and scale > 0.0 else 1.0


def _is_auto(value):
    return isinstance(value, str) and value == "auto"


def _check_target_support(target, problem):
    """``(int8 faces or None, unsigned)`` from the ``target_support`` argument."""
    if target is None:
        return None, False
    if problem.penalty is None:
        raise ValueError("target_support needs a penalized problem (penalty=...).")
    arr = np.asarray(target)
    n = problem.n_coordinates
    if arr.shape != (n,):
        raise ValueError(f"target_support must have shape ({n},), got {arr.shape}.")
    if arr.dtype == bool:
        return np.ascontiguousarray(arr, dtype=np.int8), True
    if not np.issubdtype(arr.dtype, np.number) or not np.all(np.isin(arr, (-1, 0, 1))):
        raise ValueError("target_support must be boolean (the support) or hold -1, 0 and 1 "
                         "(the signs / bounds).")
    return np.ascontiguousarray(arr, dtype=np.int8), False


solve.__doc__ = solve.__doc__.replace("@SPEC_OPTIONS@\n", options_docstring(TABLES) + "\n")
