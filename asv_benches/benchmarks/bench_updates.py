"""Block updates: the gradient step with the curvature bound or with a
running Lipschitz estimate, the Armijo line search along -grad_b f, the
matrix step with the block curvature bound, block Newton with a line search,
and the exact block minimizer (least squares only).

Gauss-Southwell with fixed or variable blocks of 5 coordinates on datasets
A (least squares) and B (logistic regression).
"""
from .common import (BLOCKS, DATASETS, UPDATES, IterationTracks, make_problem, quiet,
                     solve_options, update_options, warm_up)


class Updates(IterationTracks):
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
