"""Shared data and helpers for the benchmarks.

The paper's 1000 x 10000 datasets take about half a second to generate, so
they are built lazily and kept for the lifetime of the benchmark process.
Datasets A and B are least squares and binary logistic regression; C
(1000 x 1000, 50 classes) is multinomial logistic regression with a ridge
penalty ``MULTINOMIAL_L2``.
"""
import functools
import warnings

import numpy as np

import bcd

RULES = ["cyclic", "random", "lipschitz", "gs"]
GREEDY_RULES = ["gsl", "gsd", "gsq"]    # the rules scored with curvature information
BLOCKS = ["fixed", "variable"]
DATASETS = ["A", "B"]
#: block updates; "gradient-estimate" is the gradient update with lipschitz="estimate"
UPDATES = ["gradient", "gradient-estimate", "linesearch", "matrix", "newton", "exact"]
MULTINOMIAL_L2 = 1.0   # ridge penalty of the multinomial problem on dataset C
BLOCK_SIZE = 5
PARTITION = "sort"     # partition used with fixed blocks
SEED = 0               # random_state of every solve
NO_CHECKS = 10**9      # check_every value that tests only the start and the end


def quiet():
    """Silence the warning issued when a solve stops on ``max_iter``."""
    warnings.simplefilter("ignore", bcd.ConvergenceWarning)


@functools.lru_cache(maxsize=None)
def paper_dataset(name):
    """``(A, target)`` of the paper's dataset ``name`` at full size."""
    return bcd.datasets.make_paper_dataset(name, random_state=1)


def make_problem(name):
    """The problem of dataset ``name``: least squares for A, logistic for B,
    multinomial logistic regression (50 classes, ``l2 = MULTINOMIAL_L2``) for C."""
    A, target = paper_dataset(name)
    if name == "A":
        return bcd.LeastSquares(A, target)
    if name == "C":
        return bcd.Multinomial(A, target, l2=MULTINOMIAL_L2)
    return bcd.Logistic(A, target)


def objective(name, x):
    """Objective of dataset ``name`` at ``x``, computed with NumPy/SciPy."""
    A, target = paper_dataset(name)
    if name == "C":
        W = np.asarray(x).reshape(A.shape[1], -1)
        S = np.asarray(A @ W)
        lse = np.logaddexp.reduce(S, axis=1)
        return float(np.sum(lse - S[np.arange(S.shape[0]), target])) \
            + 0.5 * MULTINOMIAL_L2 * float(np.sum(W * W))
    z = A @ x
    if name == "A":
        r = z - target
        return 0.5 * float(r @ r)
    return float(np.sum(np.logaddexp(0.0, -target * z)))


@functools.lru_cache(maxsize=None)
def optimal_value(name):
    """Optimal objective value f* of dataset ``name``.

    A: the matrix is underdetermined with full row rank, so the least-squares
    residual can be driven to zero; f* is evaluated at a tight LSQR solution
    (it is zero up to rounding).  B: the data are linearly separable (more
    features than samples, full row rank), so the infimum of the logistic
    loss is 0.
    """
    if name == "A":
        from scipy.sparse.linalg import lsqr

        A, b = paper_dataset(name)
        x = lsqr(A, b, atol=1e-14, btol=1e-14, iter_lim=100 * A.shape[1])[0]
        return objective(name, x)
    return 0.0


def solve_options(rule, blocks):
    """Keyword arguments of ``bcd.solve`` for a rule x blocks combination."""
    options = dict(rule=rule, blocks=blocks, block_size=BLOCK_SIZE, random_state=SEED)
    if blocks == "fixed":
        options["partition"] = PARTITION
    return options


def update_options(update):
    """Keyword arguments of ``bcd.solve`` selecting the block update ``update``
    (one of ``UPDATES``)."""
    if update == "gradient-estimate":
        return dict(update="gradient", lipschitz="estimate")
    return dict(update=update)


def warm_up(problem, options):
    """One iteration, so that the caches a rule keeps on the problem (the
    row view of A, the SIRT diagonal of rule "gsl" with variable blocks) are
    built before anything is measured."""
    bcd.solve(problem, max_iter=1, tol=0.0, check_every=NO_CHECKS, **options)


class IterationTracks:
    """``track_`` benchmarks shared by classes whose ``setup`` sets
    ``self.problem`` and ``self.options`` and whose first parameter is the
    dataset: the time per iteration of the compiled loop and f(x_500) - f*."""

    timed_iterations = 500

    def track_seconds_per_iteration(self, dataset, *params):
        """Time per iteration of the compiled loop (``Result.iteration_time / n_iter``)."""
        result = bcd.solve(self.problem, max_iter=self.timed_iterations, tol=0.0,
                           check_every=NO_CHECKS, **self.options)
        return result.iteration_time / result.n_iter

    track_seconds_per_iteration.unit = "seconds"

    def track_suboptimality_500(self, dataset, *params):
        """f(x_500) - f*, evaluated with NumPy/SciPy."""
        result = bcd.solve(self.problem, max_iter=500, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return objective(dataset, result.x) - optimal_value(dataset)

    track_suboptimality_500.unit = "objective gap"
