"""Fixed cost of a call to ``bcd.solve`` on a tiny problem."""
import numpy as np

import bcd

from .common import quiet


class SolveOverhead:
    def setup(self):
        quiet()
        rng = np.random.default_rng(0)
        self.A = np.asfortranarray(rng.standard_normal((10, 5)))
        self.b = rng.standard_normal(10)
        self.problem = bcd.LeastSquares(self.A, self.b)

    def time_solve_one_iteration(self):
        bcd.solve(self.problem, max_iter=1)

    def time_problem_and_solve_one_iteration(self):
        bcd.solve(bcd.LeastSquares(self.A, self.b), max_iter=1)
