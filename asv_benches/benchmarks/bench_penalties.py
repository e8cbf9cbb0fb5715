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
"""
import functools

import numpy as np

import bcd

from .common import BLOCKS, NO_CHECKS, SEED, paper_dataset, quiet, warm_up

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


def penalized_objective(lam, x):
    """1/2 ||Ax - b||^2 + lam ||x||_1 by NumPy/SciPy (inf if some x_i < 0)."""
    A, b = paper_dataset("A")
    if np.min(x) < 0.0:
        return np.inf
    r = A @ x - b
    return 0.5 * float(r @ r) + lam * float(np.sum(x))


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


def nnls_problem(shape=(2000, 500), seed=0):
    """Least squares with ``NonNegative()`` on a dense seeded Gaussian matrix."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal(shape)
    b = rng.standard_normal(shape[0])
    return bcd.LeastSquares(A, b, penalty=bcd.NonNegative())


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
