"""Gaussian process regression: kernel column throughput and GBCD
iterations on Friedman1 with 5000 training points."""
import numpy as np

import bcd

from .common import quiet

N = 5000


def _problem():
    X, y, _, _ = bcd.datasets.make_friedman1(N, 10, random_state=0)
    return X, bcd.GaussianProcess(X, y, bcd.gp.SquaredExponential(2.0), 0.05)


class KernelColumns:
    """K[:, b] @ w for a block of 500 columns (2.5 million kernel entries)."""

    def setup(self):
        X, self.problem = _problem()
        rng = np.random.default_rng(0)
        self.cols = rng.choice(N, 500, replace=False)
        self.w = rng.standard_normal(500)

    def time_block_product(self):
        self.problem.kernel_product(self.w, self.cols)

    def track_entries_per_second(self):
        import time
        t = time.perf_counter()
        for _ in range(5):
            self.problem.kernel_product(self.w, self.cols)
        return 5 * N * 500 / (time.perf_counter() - t)
    track_entries_per_second.unit = "entries/s"


class GBCD:
    """GBCD (kappa 60) to ||g||_inf <= 1e-4, with every candidate drawn
    afresh per step (mi_refresh 0: the paper's rule) or 15 of them."""
    params = [[200, 500], [0, 15]]
    param_names = ["block_size", "mi_refresh"]

    def setup(self, block_size, refresh):
        quiet()
        _, self.problem = _problem()

    def _solve(self, block_size, refresh, max_iter=10**6):
        return bcd.solve(self.problem, rule="gbcd", block_size=block_size, update="exact",
                         tol=1e-4, max_iter=max_iter, random_state=0,
                         mi_refresh=refresh or None)

    def time_solve(self, block_size, refresh):
        self._solve(block_size, refresh)

    def time_ten_iterations(self, block_size, refresh):
        self._solve(block_size, refresh, max_iter=10)

    def track_iterations(self, block_size, refresh):
        return self._solve(block_size, refresh).n_iter
    track_iterations.unit = "iterations"
