"""GP hyperparameter learning on Friedman1 with the SE-ARD kernel (ten
length-scales, a variance and the noise): one marginal-likelihood
evaluation, the gradient contractions, the "ml", "cv" and "cv_admm" fits, and the
ratio of the "ml" fit time to scikit-learn's.  Larger sizes:
``python -m asv_benches.gp_hyper`` (see its docstring for the targets)."""
import time
import warnings

import numpy as np

import bcd
from bcd.gp import hyper

from .common import quiet, require


def _data(n):
    X, y, Xt, yt = bcd.datasets.make_friedman1(n, 500, random_state=0)
    return X, y, Xt, yt


def _kernel():
    return bcd.gp.SquaredExponential(np.ones(10), 1.0)


class MarginalLikelihood:
    """log p(y | theta) and its 12 derivatives by Cholesky (n = 2000)."""

    def setup(self):
        quiet()
        self.X, self.y, _, _ = _data(2000)
        self.space = hyper.Space(_kernel(), 1.0, (1e-5, 1e5))
        self.theta = self.space.theta0()

    def time_value_and_gradient(self):
        hyper.log_marginal_likelihood(self.space, self.theta, self.X, self.y)


class GradientContraction:
    """sum_ij (u v^T)_ij dK_ij/dtheta_p for the 11 kernel parameters, on a
    5000 x 4000 block (20 million pairs)."""

    def setup(self):
        X, _, _, _ = _data(5000)
        self.grad = _kernel().gradient(X, X[:4000])
        rng = np.random.default_rng(0)
        self.u, self.v = rng.standard_normal(5000), rng.standard_normal(4000)

    def time_low_rank(self):
        self.grad.low_rank(self.u, self.v)

    def track_pairs_per_second(self):
        t = time.perf_counter()
        self.grad.low_rank(self.u, self.v)
        return 20e6 / (time.perf_counter() - t)
    track_pairs_per_second.unit = "pairs/s"


class Fit:
    """GPRegressor fits with learned hyperparameters."""
    params = [["ml", "cv-naive", "cv-consensus", "cv_admm-naive", "cv_admm-consensus"]]
    param_names = ["optimizer"]
    timeout = 600

    def setup(self, optimizer):
        quiet()
        self.X, self.y, self.Xt, self.yt = _data(1000)

    def _fit(self, optimizer):
        name, _, scheme = optimizer.partition("-")
        kw = dict(optimizer=name)
        if scheme:
            kw.update(cv=5, cv_scheme=scheme, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bcd.gp.GPRegressor(_kernel(), 1.0, **kw).fit(self.X, self.y)

    def time_fit(self, optimizer):
        self._fit(optimizer)

    def track_test_rmse(self, optimizer):
        gp = self._fit(optimizer)
        return float(np.sqrt(np.mean((gp.predict(self.Xt) - self.yt) ** 2)))
    track_test_rmse.unit = "RMSE"


class MLAgainstScikitLearn:
    """Fit time of optimizer="ml" over scikit-learn's GaussianProcessRegressor
    (same kernel, bounds and start, no restarts) at n = 1000; target <= 1.0."""
    unit = "ratio"
    timeout = 900

    def setup(self):
        quiet()
        require("sklearn")
        self.X, self.y, _, _ = _data(1000)

    def track_time_ratio(self):
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            bcd.gp.GPRegressor(_kernel(), 1.0, optimizer="ml").fit(self.X, self.y)
            ours = time.perf_counter() - t
            kernel = ConstantKernel(1.0, (1e-5, 1e5)) * RBF(np.ones(10), (1e-5, 1e5)) \
                + WhiteKernel(1.0, (1e-5, 1e5))
            t = time.perf_counter()
            GaussianProcessRegressor(kernel, alpha=1e-10).fit(self.X, self.y)
            theirs = time.perf_counter() - t
        return ours / theirs
