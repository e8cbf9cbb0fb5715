"""Progress of every rule x block strategy after a fixed number of iterations.

Tracks the suboptimality f(x_500) - f* on datasets A (least squares) and
B (logistic regression) with blocks of 5 coordinates, starting from zero.
Lower is better.  The objective is evaluated with NumPy/SciPy from the
returned ``x``, independently of the value reported by the solver.
"""
import bcd

from .common import (BLOCKS, DATASETS, NO_CHECKS, RULES, make_problem, objective,
                     optimal_value, quiet, solve_options)


class Suboptimality:
    params = [DATASETS, RULES, BLOCKS]
    param_names = ["dataset", "rule", "blocks"]
    unit = "objective gap"
    n_iter = 500

    def setup(self, dataset, rule, blocks):
        quiet()
        self.problem = make_problem(dataset)
        self.options = solve_options(rule, blocks)
        self.f_star = optimal_value(dataset)

    def track_suboptimality_500(self, dataset, rule, blocks):
        result = bcd.solve(self.problem, max_iter=self.n_iter, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return objective(dataset, result.x) - self.f_star
