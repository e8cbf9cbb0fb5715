"""Sparse GP regression (``bcd.gp.SparseGPRegressor``): the cost of a swap
against m x n, of an evaluation of the objective and its gradient, of
predictions, and the ratio to the exact GP at n = 5000 (a reduced version of
the ``exact`` target of ``python -m asv_benches.sparse_gp``)."""
import time
import warnings

import numpy as np

import bcd
from bcd.gp.sparse import _Factor, _InfoPivots, _Run

from .common import quiet

NOISE = 0.05


def _data(n, seed=0):
    X, y, Xt, yt = bcd.datasets.make_friedman1(n, 2000, random_state=seed)
    return X, y, Xt, yt


def _kernel():
    return bcd.gp.SquaredExponential(np.full(10, 2.0), 1.0)


class Swaps:
    """One swap epoch (min(60, m) swaps) at fixed hyperparameters."""
    params = [[5000, 20000], [64, 256]]
    param_names = ["n", "m"]
    timeout = 300

    def setup(self, n, m):
        quiet()
        X, y, _, _ = _data(n)
        self.est = bcd.gp.SparseGPRegressor(_kernel(), NOISE, n_inducing=m,
                                            optimize_hyperparameters=False, n_threads=1)
        self.fac = _Factor(X, y, m, 1, 1)
        self.fac.set_model(_kernel(), NOISE)
        self.run = _Run(self.est, self.fac, _kernel(), np.random.default_rng(0), m, 16, None,
                        time.perf_counter())
        self.run.start()

    def time_swap_epoch(self, n, m):
        self.run._swap_epoch()

    def track_ns_per_swap_and_mn(self, n, m):
        t0 = time.perf_counter()
        swaps, _ = self.run._swap_epoch()
        return 1e9 * (time.perf_counter() - t0) / swaps / (m * n)
    track_ns_per_swap_and_mn.unit = "ns"


class InformationPivots:
    """Scoring every candidate from 16 information pivots."""
    params = [[20000], [256]]
    param_names = ["n", "m"]

    def setup(self, n, m):
        X, y, _, _ = _data(n)
        self.fac = _Factor(X, y, m, 1, 1)
        self.fac.set_model(_kernel(), NOISE)
        self.fac.factorize(np.random.default_rng(0).choice(n, m, replace=False))
        self.info = _InfoPivots(self.fac, 16, np.random.default_rng(1))
        self.info.refresh()

    def time_refresh(self, n, m):
        self.info.refresh()

    def time_best_candidate(self, n, m):
        self.info.best_candidate(m, self.fac.d, self.fac.inducing)


class Hyperparameters:
    """The objective and its gradient with respect to the 12 log-parameters."""
    params = [[10000], [128, 512]]
    param_names = ["n", "m"]
    timeout = 300

    def setup(self, n, m):
        X, y, _, _ = _data(n)
        self.kernel = _kernel()
        self.fac = _Factor(X, y, m, 1, 1)
        self.fac.set_model(self.kernel, NOISE)
        self.piv = np.random.default_rng(0).choice(n, m, replace=False)
        self.spec, self.gmap = self.kernel._spec(10, gradient=True)

    def time_objective(self, n, m):
        self.fac.factorize(self.piv)
        self.fac.objective()

    def time_objective_and_gradient(self, n, m):
        self.fac.factorize(self.piv)
        self.fac.gradient(self.spec, self.gmap)


class Predict:
    """Mean and standard deviation of 20,000 test points, m = 512."""
    timeout = 300

    def setup(self):
        X, y, _, _ = _data(5000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.gp = bcd.gp.SparseGPRegressor(_kernel(), NOISE, n_inducing=512,
                                               optimize_hyperparameters=False, max_epochs=1,
                                               n_threads=1).fit(X, y)
        self.Xt = np.random.default_rng(0).standard_normal((20000, 10))

    def time_mean(self):
        self.gp.predict(self.Xt)

    def time_mean_and_std(self):
        self.gp.predict(self.Xt, return_std=True)


class SparseVsExact:
    """Fit + 5000 predictions of the exact GP (GBCD) over those of the
    sparse GP (m = 512, same fixed hyperparameters), n = 5000; and the
    ratio of their test RMSEs."""
    unit = "ratio"
    timeout = 600

    def setup(self):
        quiet()
        self.X, self.y, self.Xt, self.yt = bcd.datasets.make_friedman1(5000, 5000,
                                                                       random_state=0)
        # hyperparameters of the sparse GP's free energy (learned once, untimed)
        self.kernel = bcd.gp.SquaredExponential(
            [4.1, 5.6, 13.2, 107.0, 207.0, 3e3, 1e4, 2.5e4, 7.2e3, 1.6e4], 782.0)
        self.noise = 0.0403

    def _times(self):
        t0 = time.perf_counter()
        ex = bcd.gp.GPRegressor(self.kernel, self.noise, n_threads=1).fit(self.X, self.y)
        m_ex = ex.predict(self.Xt)
        t_ex = time.perf_counter() - t0
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sp = bcd.gp.SparseGPRegressor(self.kernel, self.noise, n_inducing=512,
                                          optimize_hyperparameters=False,
                                          n_threads=1).fit(self.X, self.y)
        m_sp = sp.predict(self.Xt)
        t_sp = time.perf_counter() - t0
        return t_ex, t_sp, m_ex, m_sp

    def track_speedup(self):
        t_ex, t_sp, _, _ = self._times()
        return t_ex / t_sp

    def track_rmse_ratio(self):
        _, _, m_ex, m_sp = self._times()
        return float(np.sqrt(np.mean((m_sp - self.yt) ** 2) / np.mean((m_ex - self.yt) ** 2)))
