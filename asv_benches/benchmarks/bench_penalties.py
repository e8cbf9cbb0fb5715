"""Updates of penalized problems: proximal gradient, proximal Newton,
two-metric projection and homotopy.

Dataset A (least squares, sparse 1000 x 10000) with ``L1(lam, positive=True)``,
the problem of the paper's Figure 7 (``lam = 5e4``, a solution with 49
non-zeros) and a harder one with ``lam = 1e4`` (about 500 non-zeros), GSD-q
rule with fixed (sorted by L_i) or variable blocks of ``PENALTY_BLOCK_SIZE``
coordinates, as in the figure.  Tracks the time per iteration, the
suboptimality F(x_k) - F* after ``SUBOPT_ITERATIONS`` iterations (F evaluated
with NumPy/SciPy from the returned ``x``) and the number of iterations to a
KKT residual of ``1e-6 lam``; times the solve to that tolerance.
``BoundConstrained``: non-negative least squares on a dense problem.

Rows i (Lasso on A against scikit-learn, celer and skglm), j (a larger
Lasso) and k (non-negative least squares against ``scipy.optimize.nnls``)
of ``asv_benches/compare.py`` are ``compare_lasso_a``,
``compare_lasso_large`` and ``compare_nnls``; the ``RowTrack`` classes at
the end report their ratios to asv, row j at a reduced size,
``LASSO_LARGE_ASV_SHAPE`` (the full size takes 4.5 GB of memory and 15-35 s
to generate).
"""
import functools

import numpy as np

import bcd

from .common import (BLOCKS, NO_CHECKS, SEED, RowTrack, fmt_time, format_options, paper_dataset,
                     quiet, ratio_row, run_iterations, at_loosest_tolerance, timed, warm_up)

PENALTY_LAMBDAS = [5e4, 1e4]
PENALIZED_UPDATES = ["gradient", "newton", "two_metric", "homotopy"]
PENALTY_RULE = "gsd"
PENALTY_BLOCK_SIZE = 50
SUBOPT_ITERATIONS = 20
KKT_FRACTION = 1e-6          # the tolerance of the solves to tolerance, times lambda
MAX_ITER = 20000             # cap of the solves to tolerance


def penalized_problem(lam):
    """Least squares on dataset A with ``L1(lam, positive=True)``."""
    A, b = paper_dataset("A")
    return bcd.LeastSquares(A, b, penalty=bcd.L1(lam, positive=True))


def least_squares_objective(A, b, x, lam=0.0, nonnegative=False):
    """1/2 ||Ax - b||^2 + lam ||x||_1 by NumPy/SciPy; inf outside x >= 0."""
    x = np.asarray(x, dtype=float).ravel()
    if nonnegative and x.size and x.min() < 0.0:
        return np.inf
    r = A @ x - b
    return 0.5 * float(r @ r) + lam * float(np.abs(x).sum())


def penalized_objective(lam, x):
    """The objective of ``penalized_problem(lam)`` at ``x`` (inf if some x_i < 0)."""
    A, b = paper_dataset("A")
    return least_squares_objective(A, b, x, lam, nonnegative=True)


@functools.lru_cache(maxsize=None)
def penalized_optimum(lam):
    """F* by proximal Newton with greedy variable blocks larger than the
    support, to a KKT residual of 1e-10 lam (certified by the duality gap)."""
    problem = penalized_problem(lam)
    result = bcd.solve(problem, rule="gsd", blocks="variable", block_size=1000, update="newton",
                       tol=1e-10 * lam, max_iter=10000)
    assert result.converged and result.duality_gap <= 1e-8 * abs(result.objective), \
        (result.message, result.duality_gap)
    return penalized_objective(lam, result.x)


def penalized_options(update, blocks):
    options = dict(rule=PENALTY_RULE, blocks=blocks, block_size=PENALTY_BLOCK_SIZE,
                   update=update, random_state=SEED)
    if blocks == "fixed":
        options["partition"] = "sort"
    return options


class PenalizedUpdates:
    params = [PENALTY_LAMBDAS, PENALIZED_UPDATES, BLOCKS]
    param_names = ["lam", "update", "blocks"]
    timeout = 300
    timed_iterations = 200

    def setup(self, lam, update, blocks):
        quiet()
        self.problem = penalized_problem(lam)
        self.options = penalized_options(update, blocks)
        self.tol = KKT_FRACTION * lam
        warm_up(self.problem, self.options)

    def _to_tolerance(self):
        return bcd.solve(self.problem, tol=self.tol, max_iter=MAX_ITER, **self.options)

    def time_solve_to_tolerance(self, lam, update, blocks):
        """Wall time of a solve to a KKT residual of 1e-6 lam (capped at
        MAX_ITER iterations; see the iterations track)."""
        self._to_tolerance()

    def track_iterations_to_tolerance(self, lam, update, blocks):
        """Iterations to a KKT residual of 1e-6 lam (NaN if not reached
        within MAX_ITER)."""
        result = self._to_tolerance()
        return result.n_iter if result.converged else float("nan")

    track_iterations_to_tolerance.unit = "iterations"

    def track_seconds_per_iteration(self, lam, update, blocks):
        """Time per iteration of the compiled loop (``Result.iteration_time / n_iter``)."""
        result = bcd.solve(self.problem, max_iter=self.timed_iterations, tol=0.0,
                           check_every=NO_CHECKS, **self.options)
        return result.iteration_time / max(result.n_iter, 1)

    track_seconds_per_iteration.unit = "seconds"

    def track_suboptimality(self, lam, update, blocks):
        """F(x_k) - F* after SUBOPT_ITERATIONS iterations, by NumPy/SciPy."""
        result = bcd.solve(self.problem, max_iter=SUBOPT_ITERATIONS, tol=0.0,
                           check_every=NO_CHECKS, **self.options)
        return penalized_objective(lam, result.x) - penalized_optimum(lam)

    track_suboptimality.unit = "objective gap"


NNLS_SHAPE = (2000, 500)


@functools.lru_cache(maxsize=None)
def nnls_data(shape=NNLS_SHAPE, seed=0):
    """A dense seeded Gaussian matrix ``A`` of ``shape`` and ``b``."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal(shape)
    b = rng.standard_normal(shape[0])
    return A, b


def nnls_problem(shape=NNLS_SHAPE, seed=0):
    """Least squares with ``NonNegative()`` on ``nnls_data(shape, seed)``."""
    return bcd.LeastSquares(*nnls_data(shape, seed), penalty=bcd.NonNegative())


class BoundConstrained:
    """Non-negative least squares (dense 2000 x 500): cyclic blocks of 10
    with proximal gradient, and greedy (GSD-q) variable blocks of 50 with
    the three second-order updates; solve to a KKT residual of 1e-8
    ||A^T b||_inf, problem built outside the measurement."""

    params = [["gradient", "newton", "two_metric", "homotopy"]]
    param_names = ["update"]
    timeout = 120

    def setup(self, update):
        quiet()
        self.problem = nnls_problem()
        A, b = self.problem.A, self.problem.b
        self.tol = 1e-8 * float(np.max(np.abs(A.T @ b)))
        if update == "gradient":
            self.options = dict(rule="cyclic", blocks="fixed", partition="order",
                                block_size=10, update=update)
        else:
            self.options = dict(rule="gsd", blocks="variable", block_size=50, update=update)
        warm_up(self.problem, self.options)

    def time_solve_to_tolerance(self, update):
        bcd.solve(self.problem, tol=self.tol, max_iter=10**6, **self.options)

    def track_iterations_to_tolerance(self, update):
        result = bcd.solve(self.problem, tol=self.tol, max_iter=10**6, **self.options)
        return result.n_iter if result.converged else float("nan")

    track_iterations_to_tolerance.unit = "iterations"


# --------------------------------------------------------------------------- i, j, k. time to F*

#: relative accuracy of the objective every solver must reach: (F - F*) / |F*|
OBJ_RTOL = 1e-10
#: lambda of the paper's Figure 7 (L1 + non-negativity on dataset A)
LASSO_LAMBDA = 5e4
#: bcd's KKT tolerances tried, as fractions of ||A^T b||_inf, loosest first
BCD_TOL_FRACTIONS = tuple(10.0 ** -e for e in range(3, 15))
#: tolerances tried for the other solvers, loosest first
PEER_TOLS = tuple(10.0 ** -e for e in range(2, 15))

# Fastest bcd configurations found (time to build the problem and solve it to
# (F - F*) / |F*| <= 1e-10, the KKT tolerance tightened by factors of 10; 2-core
# machine, with the fastest peer at about 5-6 ms (L1 + x >= 0) and 7 ms (L1) on row i,
# 0.13 s (skglm) on row j, scipy's nnls at about 80 ms on row k).
#
# Row i, dataset A, lambda = 5e4 (supports of 49 coordinates with x >= 0,
# 75 without):
#   gs or gsd with variable blocks of 50-100 and proximal Newton or homotopy
#   reach the solution in 2 (x >= 0) or 3-4 iterations: 4.5-6 ms, of which
#   the iterations take about 2 ms; the rest is the initial gradient, the
#   final certificate (full products with A^T) and Python set-up.  (Blocks
#   this large touch every row of A, so no CSR copy of A is made: that
#   saved about 2 ms.)  Blocks of 50 need
#   11-13 iterations without x >= 0 (larger than the support of 75 is
#   better).  Two-metric projection: 3-6 iterations, 8-12 ms.  gsl with
#   variable blocks: the same iterations plus about 2 s for its SIRT
#   diagonal.  Fixed blocks (sorted by L_i) of 50-200 with any greedy rule
#   and update: 60-570 iterations, 0.11-0.46 s.  Cyclic coordinate descent
#   (variable blocks of 1, i.e. a fresh permutation every pass): 11-12 ms; in
#   order (fixed blocks of 1): 16-18 ms; blocks of 5 with Newton or
#   homotopy: 23-35 ms; random selection: >= 34 ms.
LASSO_A_BEST = dict(rule="gs", blocks="variable", block_size=75, update="newton",
                    check_every=1)
#
# Row j, 5000 x 50000 (support of 1484 coordinates):
#   coordinate descent in column order (cyclic, fixed blocks of 1, partition
#   "order") with a stopping test every 5 epochs: 0.57 s; the same with
#   partitions "sort", "random" or "avg" (columns visited out of memory order):
#   1.7-2.7 s; cyclic with variable blocks of 1 (a new permutation per pass,
#   fewer epochs but each about 6 times slower): 2.0 s.
#   gs / gsd with variable blocks: 100-300 coordinates, ~430-710 iterations,
#   13 s; 1500-3000 coordinates with proximal Newton, 4-5 iterations, 2.1-4 s
#   (the dense block Hessian A_b^T A_b dominates), two-metric projection
#   2.7-6 s, homotopy > 30 s (a breakpoint per coordinate entering the path).
LASSO_LARGE_BEST = dict(rule="cyclic", blocks="fixed", partition="order", block_size=1,
                        update="gradient", check_every=250000)
#
# Row k, dense 2000 x 500 NNLS (251 coordinates at their bound):
#   cyclic, fixed blocks of 10 (in order), proximal gradient: 6.6 ms; cyclic
#   coordinate descent (blocks of 1, fixed or variable): 7-8 ms; cyclic with
#   Newton, homotopy or two-metric on blocks of 10-50: 15-60 ms; gs / gsd
#   with variable blocks of 50-500 and Newton, two-metric or homotopy:
#   16-260 ms; fixed blocks of 50-500: 46-700 ms.
NNLS_BEST = dict(rule="cyclic", blocks="fixed", partition="order", block_size=10,
                 update="gradient")

LASSO_LARGE_SHAPE = (5000, 50000)
LASSO_LARGE_ASV_SHAPE = (2000, 20000)
LASSO_LARGE_FRACTION = 1.0 / 20.0      # lambda = lambda_max / 20


def _time_to_objective(name, fit, objective, f_star, tols, repeats):
    """Tighten ``tol`` (loosest first) until ``fit(tol)`` returns an x with
    (F(x) - F*) / |F*| <= OBJ_RTOL, or three tolerances bring no improvement;
    then time ``repeats`` fits at that tolerance.  ``fit(tol)`` returns x.
    A solution below F* by more than OBJ_RTOL raises an AssertionError."""
    def attempt(tol):
        _, x = timed(fit, tol, ignore=Warning)      # convergence warnings at loose tol
        rel = (objective(x) - f_star) / abs(f_star)
        if rel < -OBJ_RTOL:
            raise AssertionError(f"{name} found F = {objective(x)!r} below the reference "
                                 f"F* = {f_star!r}: the reference is not optimal")
        return rel, None

    def fit_seconds(tol):
        return timed(fit, tol, ignore=Warning)[0]

    return at_loosest_tolerance(name, tols, attempt, OBJ_RTOL, fit_seconds, repeats)


def _describe(target):
    return target.describe(f"(F-F*)/|F*|={target.error:.1e}", OBJ_RTOL)


def _bcd_fit(make_problem, options, scale, max_time=60.0):
    """bcd's fit: build the problem and solve it to the KKT tolerance
    ``tol * scale`` (the problem is rebuilt every time, so caches such as
    the row view of A are part of the time)."""
    def fit(tol):
        result = bcd.solve(make_problem(), tol=tol * scale, max_iter=10**9, max_time=max_time,
                           random_state=0, **options)
        return result.x
    return fit


def _time_bcd(make_problem, options, scale, objective, f_star, repeats):
    """bcd's time to F*: warm-up, then ``_time_to_objective`` over its KKT
    tolerances ``BCD_TOL_FRACTIONS * scale``."""
    run_iterations(make_problem(), max_iter=2, **options)            # warm-up
    return _time_to_objective("bcd", _bcd_fit(make_problem, options, scale), objective, f_star,
                              BCD_TOL_FRACTIONS, repeats)


def _bcd_note(options, ours):
    return (f"bcd ({format_options(options)}) tol={ours.tol:.0e}*||A^T b||_inf: "
            f"(F-F*)/|F*|={ours.error:.1e}" + ("" if ours.reached else " NOT REACHED"))


def _lasso_peers(A, b, lam, positive):
    """(name, fit) of scikit-learn, celer and skglm for 1/2 ||Ax - b||^2 +
    lam ||x||_1: their objective is ours divided by n_samples with
    alpha = lam / n_samples (the fits reaching F* confirm the scaling)."""
    from sklearn.linear_model import Lasso

    alpha = lam / A.shape[0]
    peers = [("sklearn", lambda tol: Lasso(alpha=alpha, fit_intercept=False, positive=positive,
                                            tol=tol, max_iter=100000).fit(A, b).coef_)]
    try:
        import celer

        peers.append(("celer", lambda tol: celer.Lasso(
            alpha=alpha, fit_intercept=False, positive=positive, tol=tol).fit(A, b).coef_))
    except ImportError:
        pass
    try:
        import skglm

        peers.append(("skglm", lambda tol: skglm.Lasso(
            alpha=alpha, fit_intercept=False, positive=positive, tol=tol).fit(A, b).coef_))
    except ImportError:
        pass
    return peers


def _lasso_reference(A, b, lam, positive, scale):
    """F* of the Lasso by bcd: coordinate descent in column order to a KKT
    residual of 1e-12 ||A^T b||_inf, with its duality gap and support."""
    problem = bcd.LeastSquares(A, b, penalty=bcd.L1(lam, positive=positive))
    result = bcd.solve(problem, rule="cyclic", blocks="fixed", partition="order", block_size=1,
                       update="gradient", tol=1e-12 * scale, max_iter=10**9, max_time=600)
    if not result.converged:
        raise AssertionError(f"the reference solve did not converge: {result.message}")
    f_star = least_squares_objective(A, b, result.x, lam, positive)
    return f_star, result


def _default_and_best(label, make_problem, options, scale, objective, f_star, repeats,
                      reference_seconds, reference_name, note):
    """Rows of bcd's time to F* over the reference's: ``bcd.solve`` with the
    default configuration, then the explicit configuration ``options``."""
    rows = []
    for kind, config in (("default", {}), ("best explicit", options)):
        ours = _time_bcd(make_problem, config, scale, objective, f_star, repeats)
        chosen = config or _auto_options(make_problem())
        rows.append(ratio_row(f"{label} ({kind})", ours.seconds,
                              f"{fmt_time(reference_seconds)} {reference_name}",
                              ours.seconds / reference_seconds, "<= 1.0x",
                              note=(note + "; " if not rows else "") + _bcd_note(chosen, ours),
                              passed=ours.reached))
    return rows


def _auto_options(problem):
    """The configuration ``bcd.solve(problem)`` chooses."""
    result = bcd.solve(problem, max_iter=1)
    return bcd.core.auto.configuration(result.options)


def compare_lasso(label, A, b, lam, positive, options, repeats, what):
    """Rows of bcd's time to (F - F*) / |F*| <= 1e-10 over the fastest peer
    (default configuration, then ``options``)."""
    scale = float(np.max(np.abs(A.T @ b)))
    f_star, ref = _lasso_reference(A, b, lam, positive, scale)

    def objective(x):
        return least_squares_objective(A, b, x, lam, positive)

    peers = [_time_to_objective(name, fit, objective, f_star, PEER_TOLS, repeats)
             for name, fit in _lasso_peers(A, b, lam, positive)]
    # the tightest fit of each peer cross-checks F*: none may go below it
    # (checked in _time_to_objective); report the closest approach
    make_problem = functools.partial(bcd.LeastSquares, A, b,
                                     penalty=bcd.L1(lam, positive=positive))
    reached = [p for p in peers if p.reached]
    ref_peer = min(reached or peers, key=lambda p: p.seconds)
    support = int(np.count_nonzero(ref.x))
    note = (f"{what}, lambda={lam:.6g}{' and x >= 0' if positive else ''}; F*={f_star!r} "
            f"(bcd coordinate descent, KKT residual {ref.optimality:.1e}, duality gap "
            f"{ref.duality_gap:.1e}, support {support}); "
            + "; ".join(_describe(p) for p in peers))
    if not reached:
        note += "; no peer reached F*"
    return _default_and_best(label, make_problem, options, scale, objective, f_star, repeats,
                             ref_peer.seconds, ref_peer.name, note)


def compare_lasso_a(repeats, positive=(True, False)):
    """Rows i: Lasso on dataset A, 1/2 ||Ax - b||^2 + lambda ||x||_1 with
    lambda = 5e4 (the paper's Figure 7 problem), with x >= 0 and without:
    time to (F - F*) / |F*| <= 1e-10, F evaluated by NumPy/SciPy.  F* comes
    from a tight bcd solve (coordinate descent to a KKT residual of
    1e-12 ||A^T b||_inf, reported with its duality gap and support) and is
    cross-checked by every other solver: a solution more than 1e-10 below it
    raises an AssertionError.  Peers: scikit-learn's ``Lasso``, celer's
    ``Lasso`` and skglm's ``Lasso`` (those installed), with
    ``alpha = lambda / n_samples``, no intercept and ``positive=`` for the
    x >= 0 variant; their objective is ours divided by n_samples, which
    their reaching F* confirms.  Each solver's ``tol`` is tightened by
    factors of 10 (from 1e-2) until its solution reaches F* within 1e-10,
    and only the fit is timed; bcd's KKT tolerance likewise, from
    1e-3 ||A^T b||_inf, and its time covers building the problem and the
    solve (so the row view of A that greedy rules build is included).  bcd
    runs its default configuration, and its fastest explicit configuration
    from a grid search (``LASSO_A_BEST``).  Target: bcd default / (fastest
    peer that reaches F*) <= 1, two rows (default, explicit) per variant
    (those of ``positive``).
    """
    A, b = paper_dataset("A")
    return [row for pos in positive
            for row in compare_lasso(f"i. Lasso{' x>=0' if pos else ''} on A, lambda=5e4: "
                                     "bcd / fastest peer", A, b, LASSO_LAMBDA, pos,
                                     LASSO_A_BEST, repeats, "dataset A (sparse 1000 x 10000)")]


def lasso_large_data(shape=LASSO_LARGE_SHAPE):
    """Dataset A's recipe at ``shape`` (5000 x 50000: 15-35 s and 4.5 GB of
    memory to generate, as the matrix is drawn dense before it is sparsified)."""
    m, n = shape
    return bcd.datasets.make_paper_dataset("A", n_samples=m, n_features=n, random_state=1)


def compare_lasso_large(repeats, shape=LASSO_LARGE_SHAPE):
    """Row j: the same as rows i for a harder Lasso: dataset A's recipe at
    5000 x 50000 (``make_paper_dataset("A", n_samples=5000,
    n_features=50000)``; 15-35 s and 4.5 GB of memory to generate, as the
    matrix is drawn dense), lambda = lambda_max / 20 with lambda_max =
    ||A^T b||_inf, without x >= 0; bcd's default configuration and
    ``LASSO_LARGE_BEST``.  Target: bcd default / fastest peer <= 1.
    """
    generation, (A, b) = timed(lasso_large_data, shape)
    lam = LASSO_LARGE_FRACTION * float(np.max(np.abs(A.T @ b)))
    m, n = A.shape
    return compare_lasso(f"j. Lasso on {m} x {n}, lambda_max/20: bcd / fastest peer", A, b, lam,
                         False, LASSO_LARGE_BEST, repeats,
                         f"dataset A's recipe at {m} x {n} ({A.nnz} non-zeros, generated in "
                         f"{generation:.0f} s)")


def compare_nnls(repeats):
    """Row k: non-negative least squares on a dense seeded Gaussian
    2000 x 500 matrix (and b): bcd with ``NonNegative()`` (default
    configuration, problem built inside the timing, KKT tolerance tightened
    as in rows i) against ``scipy.optimize.nnls``, whose objective is F*,
    cross-checked by a tight bcd solve; a second row for ``NNLS_BEST``.
    Target: bcd default / nnls <= 1.
    """
    from scipy.optimize import nnls

    A, b = nnls_data()
    scale = float(np.max(np.abs(A.T @ b)))

    def objective(x):
        return least_squares_objective(A, b, x, nonnegative=True)

    _, (x_nnls, _) = timed(nnls, A, b, ignore=Warning)
    f_star = objective(x_nnls)
    make_problem = functools.partial(bcd.LeastSquares, A, b, penalty=bcd.NonNegative())
    check = bcd.solve(make_problem(), rule="gsd", blocks="variable", block_size=A.shape[1],
                      update="newton", tol=1e-12 * scale, max_iter=1000)
    f_check = objective(check.x)
    if not abs(f_check - f_star) <= 1e-12 * abs(f_star):
        raise AssertionError(f"nnls's objective {f_star!r} and bcd's tight solve {f_check!r} "
                             "differ")

    def nnls_fit(tol):
        return nnls(A, b)[0]

    theirs = _time_to_objective("nnls", nnls_fit, objective, f_star, (0.0,), repeats)
    m, n = A.shape
    note = (f"dense Gaussian {m} x {n}, seed 0; F*={f_star!r} (nnls; bcd GSD-VB Newton over all "
            f"coordinates: {f_check!r}), {int(np.count_nonzero(x_nnls))} positive coordinates")
    return _default_and_best(f"k. NNLS dense {m} x {n}: bcd / scipy nnls", make_problem,
                             NNLS_BEST, scale, objective, f_star, repeats, theirs.seconds,
                             "nnls", note)


#: the rows of compare.py in this module: (progress title, run(repeats) -> Row(s))
STEPS = [
    ("i. Lasso on A (lambda = 5e4, with and without x >= 0) vs scikit-learn, celer, skglm",
     compare_lasso_a),
    ("j. Lasso on 5000 x 50000 (lambda_max / 20) vs scikit-learn, celer, skglm",
     compare_lasso_large),
    ("k. NNLS, dense 2000 x 500, vs scipy.optimize.nnls", compare_nnls),
]


# --------------------------------------------------------------------------- rows as asv tracks

class LassoVsPeers(RowTrack):
    """Rows i: bcd / fastest peer time to (F - F*) / |F*| <= 1e-10 for the
    Lasso on A, with and without x >= 0 (target <= 1)."""

    params = [[True, False]]
    param_names = ["positive"]
    requires = ("sklearn",)

    def track_time_ratio(self, positive):
        return compare_lasso_a(self.repeats, positive=(positive,))[0].figure


class LargeLassoVsPeers(RowTrack):
    """Row j at a reduced size, ``LASSO_LARGE_ASV_SHAPE`` (2000 x 20000):
    bcd / fastest peer time to (F - F*) / |F*| <= 1e-10 (target <= 1)."""

    requires = ("sklearn",)

    def track_time_ratio(self):
        return compare_lasso_large(self.repeats, shape=LASSO_LARGE_ASV_SHAPE)[0].figure


class NNLSVsScipy(RowTrack):
    """Row k: bcd / ``scipy.optimize.nnls`` time on a dense 2000 x 500 problem
    (target <= 1)."""

    def track_time_ratio(self):
        return compare_nnls(self.repeats)[0].figure
