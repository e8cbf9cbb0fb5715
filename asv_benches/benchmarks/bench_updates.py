"""Block updates: the gradient step with the curvature bound or with a
running Lipschitz estimate, the Armijo line search along -grad_b f, the
matrix step with the block curvature bound, block Newton with a line search,
and the exact block minimizer (least squares only).

Gauss-Southwell with fixed or variable blocks of 5 coordinates on datasets
A (least squares) and B (logistic regression).
"""
import bcd

from .common import (BLOCKS, DATASETS, NO_CHECKS, UPDATES, make_problem, objective,
                     optimal_value, quiet, solve_options, update_options, warm_up)


class Updates:
    params = [DATASETS, UPDATES, BLOCKS]
    param_names = ["dataset", "update", "blocks"]
    rule = "gs"

    def setup(self, dataset, update, blocks):
        if update == "exact" and dataset != "A":
            raise NotImplementedError("the exact update needs a quadratic objective")
        quiet()
        self.problem = make_problem(dataset)
        self.options = dict(solve_options(self.rule, blocks), **update_options(update))
        warm_up(self.problem, self.options)

    def track_seconds_per_iteration(self, dataset, update, blocks):
        """Time per iteration of the compiled loop (``Result.iteration_time / n_iter``)."""
        result = bcd.solve(self.problem, max_iter=500, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return result.iteration_time / result.n_iter

    track_seconds_per_iteration.unit = "seconds"

    def track_suboptimality_500(self, dataset, update, blocks):
        """f(x_500) - f*, evaluated with NumPy/SciPy."""
        result = bcd.solve(self.problem, max_iter=500, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return objective(dataset, result.x) - optimal_value(dataset)

    track_suboptimality_500.unit = "objective gap"
