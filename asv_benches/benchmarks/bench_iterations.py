"""Cost of the iterations of every rule x block strategy.

Dataset A is a sparse least-squares problem, dataset B a sparse logistic
regression (both 1000 x 10000, about 7% non-zeros); blocks of 5
coordinates.  The stopping test is disabled (``tol=0`` and
``check_every=10**9``) so every run does exactly the requested number of
iterations.
"""
import bcd

from .common import BLOCKS, DATASETS, NO_CHECKS, RULES, make_problem, quiet, solve_options


class Iterations:
    """Wall time of ``bcd.solve`` for 200 iterations (set-up included)."""

    params = [DATASETS, RULES, BLOCKS]
    param_names = ["dataset", "rule", "blocks"]
    n_iter = 200

    def setup(self, dataset, rule, blocks):
        quiet()
        self.problem = make_problem(dataset)
        self.options = solve_options(rule, blocks)

    def time_200_iterations(self, dataset, rule, blocks):
        bcd.solve(self.problem, max_iter=self.n_iter, tol=0.0, check_every=NO_CHECKS,
                  **self.options)


class SecondsPerIteration:
    """Time per iteration of the compiled loop alone (``Result.time / n_iter``).

    Unlike ``Iterations.time_200_iterations`` this excludes the one-time
    set-up of a solve (partitions, initial gradient), which dominates for
    the cheap rules.
    """

    params = [DATASETS, RULES, BLOCKS]
    param_names = ["dataset", "rule", "blocks"]
    unit = "seconds"
    n_iter = 1000

    def setup(self, dataset, rule, blocks):
        quiet()
        self.problem = make_problem(dataset)
        self.options = solve_options(rule, blocks)

    def track_seconds_per_iteration(self, dataset, rule, blocks):
        result = bcd.solve(self.problem, max_iter=self.n_iter, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return result.time / result.n_iter
