"""The greedy rules that use curvature: GSL, GSD and GSQ.

With fixed blocks GSL scores ``||g_b||^2 / L_b``, GSD ``sum_{i in b} g_i^2 / L_i``
and GSQ ``g_b^T H_b^{-1} g_b`` (inverses stored per block).  With variable
blocks GSL is the GSD rule with SIRT diagonals and GSQ an approximate
L0-constrained quadratic solve (10 iterations of iterative hard
thresholding).  Datasets A (least squares) and B (logistic regression),
blocks of 5 coordinates, gradient updates with the curvature bound.
"""
import bcd

from .common import (BLOCKS, DATASETS, GREEDY_RULES, NO_CHECKS, IterationTracks, make_problem,
                     quiet, solve_options, warm_up)


class GreedyRules(IterationTracks):
    params = [DATASETS, GREEDY_RULES, BLOCKS]
    param_names = ["dataset", "rule", "blocks"]
    timeout = 180
    timed_iterations = 200

    def setup(self, dataset, rule, blocks):
        quiet()
        self.problem = make_problem(dataset)
        self.options = solve_options(rule, blocks)
        warm_up(self.problem, self.options)


class GreedyRuleSetup:
    """Wall time of a one-iteration solve on a new problem object: the
    rule's own set-up (SIRT diagonal for GSL with variable blocks, block
    inverses for GSQ with fixed blocks, row view of A) plus one iteration."""

    params = [DATASETS, GREEDY_RULES, BLOCKS]
    param_names = ["dataset", "rule", "blocks"]
    number = 1
    repeat = (1, 5, 20.0)
    warmup_time = 0.0
    timeout = 180

    def setup(self, dataset, rule, blocks):
        quiet()
        make_problem(dataset)            # generate the data outside the measurement
        self.options = solve_options(rule, blocks)

    def time_setup_and_one_iteration(self, dataset, rule, blocks):
        bcd.solve(make_problem(dataset), max_iter=1, tol=0.0, check_every=NO_CHECKS,
                  **self.options)
