"""Multinomial logistic regression on the paper's dataset C (1000 x 1000,
about 7% non-zeros, 50 classes, so 50000 coordinates) with ``l2 = 1``.

Every rule x block strategy with block Newton updates, and every update
(but the exact one, for quadratics only) with the GSD rule; blocks of 5
coordinates.  A step refreshes the softmax of every row the block touches,
and greedy rules push the change of all 50 classes of those rows into the
tracked gradient, so greedy iterations cost much more than on A and B.
"""
import bcd

from .common import (BLOCKS, GREEDY_RULES, NO_CHECKS, RULES, UPDATES, make_problem, objective,
                     quiet, solve_options, update_options, warm_up)

DATASET = "C"
N_ITER = 200


class MultinomialRules:
    params = [RULES + GREEDY_RULES, BLOCKS]
    param_names = ["rule", "blocks"]
    timeout = 180

    def setup(self, rule, blocks):
        quiet()
        self.problem = make_problem(DATASET)
        self.options = dict(solve_options(rule, blocks), update="newton")
        warm_up(self.problem, self.options)

    def track_seconds_per_iteration(self, rule, blocks):
        """Time per iteration of the compiled loop (``Result.iteration_time / n_iter``)."""
        result = bcd.solve(self.problem, max_iter=N_ITER, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return result.iteration_time / result.n_iter

    track_seconds_per_iteration.unit = "seconds"

    def track_objective_200(self, rule, blocks):
        """f(x_200), evaluated with NumPy/SciPy (the optimal value is about 6.7137)."""
        result = bcd.solve(self.problem, max_iter=N_ITER, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return objective(DATASET, result.x)

    track_objective_200.unit = "objective"


class MultinomialUpdates:
    params = [[u for u in UPDATES if u != "exact"], BLOCKS]
    param_names = ["update", "blocks"]
    rule = "gsd"

    def setup(self, update, blocks):
        quiet()
        self.problem = make_problem(DATASET)
        self.options = dict(solve_options(self.rule, blocks), **update_options(update))
        warm_up(self.problem, self.options)

    def track_seconds_per_iteration(self, update, blocks):
        """Time per iteration of the compiled loop (``Result.iteration_time / n_iter``)."""
        result = bcd.solve(self.problem, max_iter=N_ITER, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return result.iteration_time / result.n_iter

    track_seconds_per_iteration.unit = "seconds"

    def track_objective_200(self, update, blocks):
        """f(x_200), evaluated with NumPy/SciPy."""
        result = bcd.solve(self.problem, max_iter=N_ITER, tol=0.0, check_every=NO_CHECKS,
                           **self.options)
        return objective(DATASET, result.x)

    track_objective_200.unit = "objective"

    def time_200_iterations(self, update, blocks):
        """Wall time of a 200-iteration solve (its set-up included)."""
        bcd.solve(self.problem, max_iter=N_ITER, tol=0.0, check_every=NO_CHECKS, **self.options)
