"""Hyperparameter learning of GPRegressor: kernel gradients, the marginal
likelihood optimizer, cross-validation ADMM, pickling, and Dask."""
import os
import pickle
import signal
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.optimize

import bcd
from bcd.gp import (GPRegressor, LocallyPeriodic, Matern, Periodic, RationalQuadratic,
                    SquaredExponential)
from bcd.gp import hyper

KERNELS = {
    "se": lambda: SquaredExponential(0.8, 1.3),
    "se-ard": lambda: SquaredExponential([0.7, 1.3], 1.5),
    "matern32-ard": lambda: Matern(1.5, [0.6, 1.1], 0.7),
    "matern52": lambda: Matern(2.5, 0.9),
    "periodic": lambda: Periodic(1.3, 0.8, 1.2),
    "lp": lambda: LocallyPeriodic(1.1, 0.9, 0.8),
    "se+lp": lambda: SquaredExponential(3.0) + LocallyPeriodic(2.0, 1.0),
    "(se+m52)*per": lambda: (SquaredExponential(1.0) + Matern(2.5, [0.5, 2.0]))
    * Periodic(1.7, 1.2, 0.5),
    "(se+m52)*per 1-d": lambda: (SquaredExponential(1.0) + Matern(2.5, 0.5))
    * Periodic(1.7, 1.2, 0.5),
    "fixed parts": lambda: SquaredExponential(1.0, variance_bounds="fixed")
    * Periodic(1.7, 1.2, period_bounds="fixed"),
    "rq": lambda: RationalQuadratic(0.9, alpha=0.7, variance=1.3),
    "rq-ard*per": lambda: RationalQuadratic([0.6, 1.4], alpha=2.5) * Periodic(1.7, 1.2, 0.5),
    "rq fixed alpha": lambda: RationalQuadratic(0.8, alpha=1.5, alpha_bounds="fixed")
    + SquaredExponential(2.0),
}


def _fd_contraction(kernel, X1, X2, W, h=1e-5):
    theta = kernel.theta
    out = np.empty(theta.size)
    for p in range(theta.size):
        e = np.zeros_like(theta)
        e[p] = h
        kernel.theta = theta + e
        plus = kernel(X1, X2)
        kernel.theta = theta - e
        minus = kernel(X1, X2)
        kernel.theta = theta
        out[p] = np.sum(W * (plus - minus)) / (2 * h)
    return out


def _rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


# ------------------------------------------------------------------ kernel interface

@pytest.mark.parametrize("name", list(KERNELS))
def test_gradient_contractions_match_finite_differences(name):
    kernel = KERNELS[name]()
    rng = np.random.default_rng(0)
    X1, X2 = rng.uniform(0, 3, (40, 2)), rng.uniform(0, 3, (30, 2))
    W = rng.standard_normal((40, 30))
    U, V = rng.standard_normal((40, 2)), rng.standard_normal((30, 2))
    S = rng.standard_normal((40, 40))
    S = S + S.T
    grad = kernel.gradient(X1, X2)
    assert grad.n_params == kernel.theta.size
    assert _rel(grad.dense(W), _fd_contraction(kernel, X1, X2, W)) < 1e-6
    assert _rel(grad.low_rank(U, V), _fd_contraction(kernel, X1, X2, U @ V.T)) < 1e-6
    sym = kernel.gradient(X1).dense(S, symmetric=True)
    assert _rel(sym, _fd_contraction(kernel, X1, None, S)) < 1e-6


@pytest.mark.parametrize("lengthscale,alpha,variance", [(1.3, 0.7, 2.0), (0.5, 5.0, 1.0),
                                                         (3.0, 0.05, 0.3)])
def test_rational_quadratic_matches_sklearn(lengthscale, alpha, variance):
    """Entries and log-parameter gradient of the rational quadratic kernel
    against scikit-learn's ConstantKernel * RationalQuadratic, to 1e-12."""
    sk = pytest.importorskip("sklearn.gaussian_process.kernels")
    rng = np.random.default_rng(3)
    X, Z = rng.standard_normal((50, 3)), rng.standard_normal((20, 3))
    ours = RationalQuadratic(lengthscale, alpha=alpha, variance=variance)
    ref = sk.ConstantKernel(variance) * sk.RationalQuadratic(length_scale=lengthscale,
                                                             alpha=alpha)
    np.testing.assert_allclose(ours(X, Z), ref(X, Z), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ours(X), ref(X), rtol=1e-12, atol=1e-15)
    # d K / d theta: ours (variance, lengthscale, alpha), scikit-learn's
    # (constant, alpha, length_scale) by its hyperparameters' names
    names = [h.name for h in ref.hyperparameters]
    order = [names.index(n) for n in ("k1__constant_value", "k2__length_scale", "k2__alpha")]
    assert [h.name for h in ours.hyperparameters] == ["variance", "lengthscale", "alpha"]
    np.testing.assert_allclose(ours.theta, ref.theta[order], rtol=1e-15)
    _, dK = ref(X, eval_gradient=True)
    for W in (rng.standard_normal((50, 50)), np.eye(50)[:, [7]] @ np.eye(50)[[11]]):
        W = W + W.T
        expected = np.einsum("ij,ijp->p", W, dK)[order]
        got = ours.gradient(X).dense(W)
        np.testing.assert_allclose(got, expected, rtol=1e-12,
                                   atol=1e-12 * np.abs(expected).max())
        np.testing.assert_allclose(ours.gradient(X).dense(W, symmetric=True), expected,
                                   rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_rational_quadratic_ml_matches_scikit_learn():
    sk_gp = pytest.importorskip("sklearn.gaussian_process")
    from sklearn.gaussian_process.kernels import (ConstantKernel, RationalQuadratic as SkRQ,
                                                  WhiteKernel)
    X, y = _data(60, 1)
    ours = GPRegressor(RationalQuadratic(1.0, alpha=1.0), 0.5, optimizer="ml").fit(X, y)
    kernel = ConstantKernel(1.0, (1e-5, 1e5)) * SkRQ(1.0, 1.0, (1e-5, 1e5), (1e-5, 1e5)) \
        + WhiteKernel(0.5, (1e-5, 1e5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sk_gp.GaussianProcessRegressor(kernel, alpha=1e-10).fit(X, y)
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        ref.log_marginal_likelihood_value_, rel=1e-6)
    np.testing.assert_allclose(ours.predict(X[:10]), ref.predict(X[:10]), rtol=1e-3, atol=1e-4)


def test_every_kind_of_the_table_has_a_kernel_class():
    from bcd.gp import kernels
    from bcd.gp._kernel import KIND_CODES

    classes = [SquaredExponential(1.0), Matern(1.5, 1.0), Matern(2.5, 1.0), Periodic(1.0, 1.0),
               LocallyPeriodic(1.0, 1.0), kernels.Hamming(), kernels.HistogramIntersection(),
               RationalQuadratic(1.0)]
    assert sorted(k._code for k in classes) == sorted(KIND_CODES.values())
    assert list(kernels.KINDS) == list(KIND_CODES)
    assert [row.code for row in kernels.KINDS.values()] == list(range(len(KIND_CODES)))


def test_gradient_does_not_depend_on_the_thread_count():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 3, (700, 3))
    kernel = SquaredExponential([1.0, 2.0, 0.5]) + LocallyPeriodic(1.0, 2.0)
    u, v = rng.standard_normal(700), rng.standard_normal(700)
    one = kernel.gradient(X, n_threads=1).low_rank(u, v)
    two = kernel.gradient(X, n_threads=2).low_rank(u, v)
    assert np.array_equal(one, two)


def test_theta_bounds_and_hyperparameters():
    k = SquaredExponential([1.0, 2.0], 3.0, lengthscale_bounds=(1e-2, 1e2)) \
        + Periodic(2.0, 0.5, variance_bounds="fixed")
    names = [h.name for h in k.hyperparameters]
    assert names == ["k1__variance", "k1__lengthscale", "k2__variance", "k2__lengthscale",
                     "k2__period"]
    assert [h.fixed for h in k.hyperparameters] == [False, False, True, False, False]
    np.testing.assert_allclose(k.theta, np.log([3.0, 1.0, 2.0, 0.5, 2.0]))
    np.testing.assert_allclose(k.bounds[1:3], np.log([[1e-2, 1e2]] * 2))
    k.theta = np.log([4.0, 1.5, 2.5, 0.7, 3.0])
    assert k.k1.variance == pytest.approx(4.0) and k.k2.period == pytest.approx(3.0)
    np.testing.assert_allclose(k.k1.lengthscale, [1.5, 2.5])
    assert k.k2.variance == 1.0
    with pytest.raises(ValueError):
        k.theta = np.zeros(3)


@pytest.mark.parametrize("bounds", [(1.0, 1.0), (2.0, 1.0), (0.0, 1.0), (-1.0, 2.0),
                                    (1.0, np.inf), "free", (1.0,)])
def test_bad_bounds_are_rejected(bounds):
    with pytest.raises((ValueError, TypeError)):
        SquaredExponential(1.0, lengthscale_bounds=bounds)
    X, y = np.zeros((5, 1)), np.zeros(5)
    X[:, 0] = np.arange(5)
    with pytest.raises((ValueError, TypeError)):
        GPRegressor(SquaredExponential(1.0), 0.1, optimizer="ml", noise_bounds=bounds).fit(X, y)


# ------------------------------------------------------------------ marginal likelihood

def _data(n=120, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 4, (n, d))
    y = np.sin(2 * X[:, 0]) + 0.5 * np.cos(X[:, -1]) + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("name", ["se-ard", "lp", "se+lp", "(se+m52)*per 1-d", "rq"])
def test_marginal_likelihood_gradient(name):
    # periodic kernels of the Euclidean distance are positive definite in 1-D
    X, y = _data(60, 1 if name != "se-ard" else 2)
    space = hyper.Space(KERNELS[name](), 0.2, (1e-5, 1e5))
    theta = space.theta0()
    lml, grad = hyper.log_marginal_likelihood(space, theta, X, y)
    fd = np.empty_like(theta)
    for p in range(theta.size):
        e = np.zeros_like(theta)
        e[p] = 1e-6
        fd[p] = (hyper.log_marginal_likelihood(space, theta + e, X, y, False)[0]
                 - hyper.log_marginal_likelihood(space, theta - e, X, y, False)[0]) / 2e-6
    assert _rel(grad, fd) < 1e-6


def test_ml_matches_scikit_learn():
    pytest.importorskip("sklearn")
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    X, y = _data(150, 3)
    ours = GPRegressor(SquaredExponential(np.ones(3)), 1.0, optimizer="ml").fit(X, y)
    kernel = ConstantKernel(1.0, (1e-5, 1e5)) * RBF(np.ones(3), (1e-5, 1e5)) \
        + WhiteKernel(1.0, (1e-5, 1e5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = GaussianProcessRegressor(kernel, alpha=1e-10, n_restarts_optimizer=0).fit(X, y)
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        ref.log_marginal_likelihood_value_, rel=1e-6)
    assert ours.noise_ == pytest.approx(ref.kernel_.k2.noise_level, rel=1e-3)
    np.testing.assert_allclose(ours.predict(X[:20]), ref.predict(X[:20]), rtol=1e-3, atol=1e-4)
    assert ours.history_.ndim == 1 and len(ours.history_) == ours.n_iter_


def test_ml_restarts_keep_the_best_start():
    X, y = _data(80)
    one = GPRegressor(SquaredExponential([1.0, 1.0]), 0.5, optimizer="ml").fit(X, y)
    many = GPRegressor(SquaredExponential([1.0, 1.0]), 0.5, optimizer="ml", n_restarts=3,
                       random_state=0).fit(X, y)
    lmls = [-run[1] for run in many.hyper_["runs"]]
    assert len(lmls) == 4
    assert many.log_marginal_likelihood_value_ == pytest.approx(max(lmls))
    assert many.log_marginal_likelihood_value_ >= one.log_marginal_likelihood_value_ - 1e-8


# ------------------------------------------------------------------ CV-ADMM

def _paper_se(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 10, n))[:, None]
    K = SquaredExponential(0.5)(X) + 0.1 * np.eye(n)
    return X, np.linalg.cholesky(K) @ rng.standard_normal(n)


@pytest.mark.parametrize("cv,scheme", [(0.3, "naive"), (3, "naive"), (3, "consensus")])
def test_cv_admm_runs_and_reports(cv, scheme):
    X, y = _paper_se()
    gp = GPRegressor(SquaredExponential(0.7, variance_bounds="fixed"), 0.1,
                     noise_bounds="fixed", optimizer="cv_admm", cv=cv, cv_scheme=scheme,
                     random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # converges: no ConvergenceWarning
        gp.fit(X, y)
    assert gp.noise_ == 0.1 and gp.kernel_.variance == 1.0
    assert 0.2 < gp.kernel_.lengthscale < 1.5
    assert np.isfinite(gp.cv_mse_) and 0 < gp.cv_mse_ < np.var(y)
    assert gp.history_.ndim == 1 and len(gp.history_) >= 1
    assert not hasattr(gp, "log_marginal_likelihood_value_")
    assert gp.score(X, y) > 0.5


def test_cv_admm_lowers_the_cross_validation_error():
    """One hold-out run: the exact validation error at the learned theta is
    below the error at the start."""
    rng = np.random.default_rng(1)
    X = np.sort(rng.uniform(0, 10, 500))[:, None]
    K = SquaredExponential(0.5)(X) + 0.1 * np.eye(500)
    y = np.linalg.cholesky(K) @ rng.standard_normal(500)
    perm = rng.permutation(500)
    val, train = np.sort(perm[:250]), np.sort(perm[250:])
    space = hyper.Space(SquaredExponential(1.0, variance_bounds="fixed"), 0.1, "fixed")
    opts = dict(hyper.ADMM_DEFAULTS, z_steps=20, epsilon=0.0, max_iter=30)
    state = hyper.HoldOut(X, y, val, train, space, space.theta0(), opts, 0).run()
    start = state.validation_mse(space.theta0(), 1e-8)
    end = state.validation_mse(state.theta, 1e-8)
    assert end < start
    assert state.theta[0] < space.theta0()[0]      # towards the true 0.5


def test_iteration_limit_warns_and_keeps_the_best():
    X, y = _paper_se(200)
    gp = GPRegressor(SquaredExponential(1.0), 0.1, optimizer="cv_admm", cv=2,
                     admm_options={"max_iter": 2, "epsilon": 0.0}, random_state=0)
    with pytest.warns(hyper.convergence_warning(), match="iteration limit"):
        gp.fit(X, y)
    assert np.isfinite(gp.cv_mse_)


def test_balance_rho_follows_the_larger_residual():
    opts = dict(hyper.ADMM_DEFAULTS)
    assert hyper.balance_rho(5.0, 11.0, 1.0, opts, 5.0) == 10.0      # primal > 10 dual
    assert hyper.balance_rho(5.0, 1.0, 11.0, opts, 5.0) == 2.5       # dual > 10 primal
    assert hyper.balance_rho(5.0, 9.0, 1.0, opts, 5.0) == 5.0        # balanced enough
    assert hyper.balance_rho(5.0, 1.0, 9.0, opts, 5.0) == 5.0
    assert hyper.balance_rho(5e4, 1.0, 0.0, opts, 5.0) == 5e4        # kept within 1e4 x
    assert hyper.balance_rho(5e-4, 0.0, 1.0, opts, 5.0) == 5e-4


def _holdout_state(rho, rho_update, n=300):
    X, y = _paper_se(n)
    perm = np.random.default_rng(2).permutation(n)
    val, train = np.sort(perm[:n // 3]), np.sort(perm[n // 3:])
    space = hyper.Space(SquaredExponential(0.7, variance_bounds="fixed"), 0.1, "fixed")
    opts = dict(hyper.ADMM_DEFAULTS, rho=rho, rho_update=rho_update, epsilon=0.0)
    return hyper.HoldOut(X, y, val, train, space, space.theta0(), opts, 0)


@pytest.mark.parametrize("rho,direction", [(1e-3, 1), (1e3, -1)])
def test_balanced_rho_moves_towards_the_smaller_residual(rho, direction):
    """With a tiny rho the constraint is far from satisfied (primal residual
    >> dual): rho must grow; with a huge rho z barely moves off feasibility
    while rho C dz is large (dual >> primal): rho must shrink.  The fixed rho
    stays put on the same case."""
    state = _holdout_state(rho, True)
    fixed = _holdout_state(rho, False)
    for _ in range(3):
        state.iterate()
        fixed.iterate()
        if direction > 0:
            assert state.primal_residual > 10 * state.dual_residual
        else:
            assert state.dual_residual > 10 * state.primal_residual
    assert state.rhos == [rho, rho * 2.0 ** direction, rho * 4.0 ** direction]
    assert state.rho == rho * 8.0 ** direction
    assert fixed.rhos == [rho] * 3 and fixed.rho == rho


@pytest.mark.parametrize("cv,scheme", [(0.3, "naive"), (3, "naive"), (3, "consensus")])
def test_balanced_rho_fits_are_deterministic(cv, scheme):
    X, y = _paper_se(200)

    def fit():
        gp = GPRegressor(SquaredExponential(0.7, variance_bounds="fixed"), 0.1,
                         noise_bounds="fixed", optimizer="cv_admm", cv=cv, cv_scheme=scheme,
                         admm_options=dict(rho_update=True), random_state=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return gp.fit(X, y)

    a, b = fit(), fit()
    assert np.array_equal(a.hyper_["theta"], b.hyper_["theta"])
    assert a.cv_mse_ == b.cv_mse_
    assert np.array_equal(a.history_, b.history_)
    rho_a, rho_b = a.hyper_["rho"], b.hyper_["rho"]
    assert len(rho_a["folds"]) == (1 if isinstance(cv, float) else cv)
    for ra, rb in zip(rho_a["folds"], rho_b["folds"]):
        assert np.array_equal(ra, rb) and ra[0] == 5.0
    # balancing changed rho somewhere (else this test would not test it)
    assert any(np.any(r != 5.0) for r in rho_a["folds"])
    if scheme == "consensus":
        assert np.array_equal(rho_a["consensus"], rho_b["consensus"])
        assert rho_a["consensus"][0] == 5.0


def test_fixed_rho_is_the_papers():
    X, y = _paper_se(200)
    gp = GPRegressor(SquaredExponential(0.7, variance_bounds="fixed"), 0.1,
                     noise_bounds="fixed", optimizer="cv_admm", cv=3, cv_scheme="consensus",
                     admm_options=dict(rho_update=False), random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp.fit(X, y)
    for r in gp.hyper_["rho"]["folds"] + [gp.hyper_["rho"]["consensus"]]:
        assert len(r) >= 1 and np.all(r == 5.0)


# ------------------------------------------------------------------ CV, exact gradient

def _dense_cv(space, theta, X, y, folds):
    """The K-fold CV error by dense solves."""
    kernel, noise = space.unpack(theta)
    errors = []
    for val, train in folds:
        C = kernel(X[train]) + noise * np.eye(len(train))
        pred = kernel(X[val], X[train]) @ np.linalg.solve(C, y[train])
        errors.append(np.mean((pred - y[val]) ** 2))
    return float(np.mean(errors))


@pytest.mark.parametrize("name", ["se-ard", "lp", "se+lp", "(se+m52)*per 1-d"])
def test_cv_fold_gradient_matches_dense_finite_differences(name):
    X, y = _data(70, 1 if name != "se-ard" else 2, seed=2)
    space = hyper.Space(KERNELS[name](), 0.2, (1e-3, 10.0))
    folds = hyper.make_folds(70, 3, np.random.default_rng(0))
    opts = dict(hyper.CV_DEFAULTS, solve_tol=1e-11)
    theta = space.theta0()
    states = [hyper.CVFold(X, y, v, t, space, opts).evaluate(theta) for v, t in folds]
    value = np.mean([s.value for s in states])
    grad = np.mean([s.grad for s in states], axis=0)
    assert value == pytest.approx(_dense_cv(space, theta, X, y, folds), rel=1e-8)
    fd = np.empty(space.size)
    for p in range(space.size):
        e = np.zeros(space.size)
        e[p] = 1e-5
        fd[p] = (_dense_cv(space, theta + e, X, y, folds)
                 - _dense_cv(space, theta - e, X, y, folds)) / 2e-5
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7 * np.max(np.abs(fd)))


@pytest.mark.parametrize("name", list(KERNELS))
def test_scale_direction_scales_the_system(name):
    """C(theta + t v) = e^t C(theta) along the declared direction; None
    when a term has no learned variance or the noise is fixed."""
    kernel = KERNELS[name]()
    space = hyper.Space(kernel, 0.3, (1e-3, 10.0))
    v = space.scale_direction()
    assert hyper.Space(kernel, 0.3, "fixed").scale_direction() is None
    no_variance = SquaredExponential(1.0, variance_bounds="fixed") + Periodic(1.0, 1.0)
    assert hyper.Space(no_variance, 0.3, (1e-3, 10.0)).scale_direction() is None
    X = np.random.default_rng(0).uniform(0, 3, (15, 2 if "1-d" not in name else 1))
    theta = space.theta0()
    k0, n0 = space.unpack(theta)
    k1, n1 = space.unpack(theta + 0.7 * v)
    np.testing.assert_allclose(k1(X), np.exp(0.7) * k0(X), rtol=1e-12)
    assert n1 == pytest.approx(np.exp(0.7) * n0, rel=1e-12)


def test_cv_reaches_the_dense_cross_validation_minimum():
    """optimizer="cv" (GBCD solves, exact gradient) reaches the minimum that
    L-BFGS-B finds on the dense CV error from the same start (the noise held
    at its start, the kernel's variance free: the CV error is constant along
    the scale direction)."""
    X, y = _data(150, 2, seed=9)
    kernel = SquaredExponential([1.0, 1.0])
    gp = GPRegressor(kernel, 0.1, optimizer="cv", cv=3, cv_scheme="consensus",
                     random_state=0, tol=1e-10).fit(X, y)
    space = hyper.Space(kernel, 0.1, (1e-5, 1e5))
    folds = hyper.make_folds(150, 3, np.random.default_rng(0))
    bounds = space.bounds.copy()
    bounds[-1] = np.log(0.1)
    dense = scipy.optimize.minimize(lambda t: _dense_cv(space, t, X, y, folds), space.theta0(),
                                    method="L-BFGS-B", bounds=bounds)
    assert gp.cv_mse_ <= dense.fun * (1 + 1e-6)
    theta = np.append(gp.kernel_.theta, np.log(gp.noise_))
    assert gp.cv_mse_ == pytest.approx(_dense_cv(space, theta, X, y, folds), rel=1e-7)
    assert len(gp.history_) == gp.hyper_["n_iter"]
    assert np.all(np.diff(gp.history_) <= 1e-12)


def test_cv_sets_the_scale_by_maximum_likelihood():
    """The scale the CV error leaves open is the marginal likelihood's
    maximizer along the scale direction, and it does not change the
    predictive mean."""
    X, y = _data(120, 2, seed=10)
    y = 30.0 * y                               # far from the start's scale
    gp = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, optimizer="cv", cv=3,
                     random_state=0, tol=1e-10).fit(X, y)
    space = hyper.Space(SquaredExponential([1.0, 1.0]), 0.1, (1e-5, 1e5))
    theta = np.append(gp.kernel_.theta, np.log(gp.noise_))
    v = space.scale_direction()
    _, grad = hyper.log_marginal_likelihood(space, theta, X, y)
    assert abs(grad @ v) < 1e-6 * X.shape[0]
    assert gp.hyper_["scale"] > 10                  # the variance followed y's scale
    np.testing.assert_allclose(gp.hyper_["theta"], theta, rtol=1e-12)
    np.testing.assert_allclose(gp.alpha_, gp.result_.x / gp.hyper_["scale"], rtol=1e-12)
    again = GPRegressor(gp.kernel_, gp.noise_, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(gp.predict(X[:9]), again.predict(X[:9]), rtol=1e-6,
                               atol=1e-8 * np.abs(y).max())


@pytest.mark.parametrize("cv,scheme", [(0.3, "naive"), (3, "naive"), (3, "consensus")])
def test_cv_schemes_lower_the_error_and_report(cv, scheme):
    X, y = _paper_se()
    kw = dict(optimizer="cv", cv=cv, cv_scheme=scheme, random_state=0)
    gp = GPRegressor(SquaredExponential(2.0, variance_bounds="fixed"), 0.1,
                     noise_bounds="fixed", **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # converges: no ConvergenceWarning
        gp.fit(X, y)
    assert 0.3 < gp.kernel_.lengthscale < 0.8     # the truth is 0.5, the start 2.0
    space = hyper.Space(SquaredExponential(2.0, variance_bounds="fixed"), 0.1, "fixed")
    folds = gp.hyper_["folds"]
    assert gp.cv_mse_ == pytest.approx(_dense_cv(space, gp.kernel_.theta, X, y, folds),
                                       rel=1e-6)
    assert gp.cv_mse_ < _dense_cv(space, space.theta0(), X, y, folds)
    assert "scale" not in gp.hyper_                # the noise is fixed: no scale step
    assert not hasattr(gp, "log_marginal_likelihood_value_")


def test_cv_iteration_limit_warns_and_keeps_the_last(monkeypatch):
    X, y = _data(90, 2, seed=11)
    monkeypatch.setitem(hyper.CV_DEFAULTS, "max_iter", 1)
    gp = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, optimizer="cv", cv=3,
                     random_state=0)
    with pytest.warns(hyper.convergence_warning(), match="before converging"):
        gp.fit(X, y)
    assert np.isfinite(gp.cv_mse_) and gp.hyper_["n_iter"] == 1


# ------------------------------------------------------------------ candidates

CANDIDATES = np.log([[2.0, 0.3, 0.05], [0.5, 3.0, 0.5]])      # lengthscales, noise


@pytest.mark.parametrize("optimizer", ["ml", "cv", "cv_admm"])
def test_candidates_run_as_starts_and_the_best_is_kept(optimizer):
    """Each candidate gives the same result as a fit started from it alone,
    and the fit keeps the best start by its own criterion."""
    X, y = _data(120, 2, seed=6)
    kw = dict(optimizer=optimizer, cv=3, cv_scheme="consensus", random_state=0)
    kw["admm_options"] = {"max_iter": 15}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp = GPRegressor(SquaredExponential([1.0, 1.0], variance_bounds="fixed"), 0.1,
                         candidates=CANDIDATES, **kw).fit(X, y)
        starts = gp.hyper_["starts"]
        assert len(starts) == 1 + len(CANDIDATES)
        np.testing.assert_array_equal(starts[0]["start"], np.log([1.0, 1.0, 0.1]))
        for row, start in zip(CANDIDATES, starts[1:]):
            np.testing.assert_array_equal(start["start"], row)
            alone = GPRegressor(SquaredExponential(np.exp(row[:2]), variance_bounds="fixed"),
                                float(np.exp(row[2])), **kw).fit(X, y)
            np.testing.assert_allclose(start["theta"],
                                       np.append(alone.kernel_.theta, np.log(alone.noise_)),
                                       rtol=1e-10, atol=1e-10)
    key, pick = ("lml", max) if optimizer == "ml" else ("cv_mse", min)
    values = [s[key] for s in starts]
    chosen = gp.log_marginal_likelihood_value_ if optimizer == "ml" else gp.cv_mse_
    assert chosen == pick(values)
    # (the noise goes through exp and log: equal to rounding)
    np.testing.assert_allclose(np.append(gp.kernel_.theta, np.log(gp.noise_)),
                               starts[values.index(chosen)]["theta"], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("candidates,error,match", [
    (np.zeros((2, 2)), ValueError, r"shape \(n_candidates, 3\)"),
    (np.zeros(3), ValueError, "shape"),
    ([[0.0, np.nan, 0.0]], ValueError, "NaN"),
    ([[0.0, 0.0, 20.0]], ValueError, "outside the log-bounds"),
    ([["a", "b", "c"]], TypeError, "candidates"),
])
def test_bad_candidates(candidates, error, match):
    X, y = _data(20)
    gp = GPRegressor(SquaredExponential([1.0, 1.0], variance_bounds="fixed"), 0.1,
                     optimizer="ml", candidates=candidates)
    with pytest.raises(error, match=match):
        gp.fit(X, y)


def test_candidates_need_an_optimizer():
    X, y = _data(20)
    with pytest.raises(ValueError, match="candidates needs an optimizer"):
        GPRegressor(SquaredExponential(1.0), 0.1, candidates=[[0.0, 0.0, 0.0]]).fit(X, y)


@pytest.mark.parametrize("optimizer", ["ml", "cv", "cv_admm"])
def test_thread_pool_tasks_do_not_touch_the_warning_filters(monkeypatch, optimizer):
    """The folds and restarts run on threads: nothing in them may use
    warnings.catch_warnings (process-wide, not thread-safe)."""
    X, y = _data(90, 2, seed=8)

    def forbidden(*args, **kwargs):
        raise AssertionError("warnings.catch_warnings is not thread-safe")

    gp = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, optimizer=optimizer, cv=3,
                     cv_scheme="consensus", n_restarts=1, random_state=0,
                     admm_options={"max_iter": 5})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with monkeypatch.context() as m:
            m.setattr(warnings, "catch_warnings", forbidden)
            gp.fit(X, y)
    assert np.all(np.isfinite(gp.kernel_.theta))


def test_optimizer_none_keeps_the_given_hyperparameters():
    X, y = _data(100)
    base = GPRegressor(SquaredExponential(0.5), 0.1, tol=1e-8, random_state=0).fit(X, y)
    again = GPRegressor(SquaredExponential(0.5), 0.1, tol=1e-8, random_state=0,
                        optimizer=None).fit(X, y)
    assert np.array_equal(base.alpha_, again.alpha_)
    assert base.noise_ == 0.1 and base.kernel_.lengthscale == 0.5
    assert not hasattr(base, "history_") and base.result_ is not None


@pytest.mark.parametrize("params,error,match", [
    (dict(optimizer="bfgs"), ValueError, "optimizer"),
    (dict(optimizer="cv_admm", cv_scheme="bagged"), ValueError, "cv_scheme"),
    (dict(optimizer="cv_admm", cv=1.0), ValueError, r"\(0, 1\)"),
    (dict(optimizer="cv_admm", cv=0.0), ValueError, r"\(0, 1\)"),
    (dict(optimizer="cv_admm", cv=1), ValueError, "at least 2"),
    (dict(optimizer="cv_admm", cv=50), ValueError, "more than"),
    (dict(optimizer="cv", cv=50), ValueError, "more than"),
    (dict(optimizer="cv", cv=0.01), ValueError, "empty"),
    (dict(optimizer="cv", cv_scheme="bagged"), ValueError, "cv_scheme"),
    (dict(optimizer="cv_admm", cv="5"), TypeError, "cv"),
    (dict(optimizer="ml", client="tcp://127.0.0.1:8786"), TypeError, "Client"),
    (dict(optimizer="ml", n_restarts=-1), ValueError, "n_restarts"),
    (dict(optimizer="cv_admm", admm_options={"step": 1}), ValueError, "unknown"),
])
def test_bad_input(params, error, match):
    X, y = _data(20)
    with pytest.raises(error, match=match):
        GPRegressor(SquaredExponential(1.0), 0.1, **params).fit(X, y)


@pytest.mark.parametrize("optimizer", ["ml", "cv", "cv_admm"])
def test_nan_in_the_data_is_rejected(optimizer):
    X, y = _data(20)
    Xn, yn = X.copy(), y.copy()
    Xn[3, 0] = np.nan
    yn[4] = np.nan
    gp = GPRegressor(SquaredExponential(1.0), 0.1, optimizer=optimizer)
    with pytest.raises(ValueError, match="NaN"):
        gp.fit(Xn, y)
    with pytest.raises(ValueError, match="NaN"):
        gp.fit(X, yn)


# ------------------------------------------------------------------ pickling

def _roundtrip(obj):
    return pickle.loads(pickle.dumps(obj))


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernels_pickle(name):
    k = KERNELS[name]()
    k2 = _roundtrip(k)
    X = np.random.default_rng(0).uniform(size=(10, 2))
    assert np.array_equal(k(X), k2(X)) and np.array_equal(k.theta, k2.theta)
    assert [h.bounds for h in k.hyperparameters] == [h.bounds for h in k2.hyperparameters]


def test_problems_penalties_and_states_pickle():
    X, y = _data(50)
    problem = bcd.GaussianProcess(X, y, SquaredExponential(0.5), 0.1)
    p2 = _roundtrip(problem)
    alpha = np.linspace(0, 1, 50)
    assert np.array_equal(problem.matvec(alpha), p2.matvec(alpha))
    for penalty in (bcd.L1(0.3), bcd.NonNegative(), bcd.Box(-1.0, 2.0)):
        again = _roundtrip(penalty)
        assert type(again) is type(penalty) and repr(again) == repr(penalty)
    ls = bcd.LeastSquares(X, y, penalty=bcd.L1(0.1))
    assert np.array_equal(_roundtrip(ls).gradient(np.ones(2)), ls.gradient(np.ones(2)))
    space = hyper.Space(SquaredExponential(0.5), 0.1, (1e-3, 1.0))
    state = hyper.HoldOut(X, y, np.arange(10), np.arange(10, 50), space, space.theta0(),
                          hyper.ADMM_DEFAULTS, 0)
    state.iterate()
    s2 = _roundtrip(state)
    s2.iterate()
    state.iterate()
    assert np.array_equal(state.theta, s2.theta) and np.array_equal(state.z, s2.z)


@pytest.mark.parametrize("params", [dict(), dict(optimizer="ml"),
                                    dict(optimizer="cv_admm", cv=2), dict(optimizer="cv", cv=2)])
def test_fitted_estimators_pickle(params):
    X, y = _data(80)
    gp = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, random_state=0, **params).fit(X, y)
    gp2 = _roundtrip(gp)
    np.testing.assert_array_equal(gp.predict(X[:7]), gp2.predict(X[:7]))
    assert gp2.get_params(deep=False).keys() == gp.get_params(deep=False).keys()


# ------------------------------------------------------------------ Dask

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=40)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.mark.parametrize("params", [
    dict(optimizer="cv_admm", cv=3, cv_scheme="naive"),
    dict(optimizer="cv_admm", cv=3, cv_scheme="consensus", n_restarts=1),
    dict(optimizer="cv_admm", cv=0.25),
    dict(optimizer="cv_admm", cv=3, cv_scheme="naive",
         candidates=np.log([[1.5, 0.5, 2.0, 0.05], [0.7, 2.0, 0.5, 0.3]])),
    dict(optimizer="cv", cv=3, cv_scheme="consensus", n_restarts=1),
    dict(optimizer="cv", cv=3, cv_scheme="naive"),
])
def test_dask_cv_admm_equals_the_thread_pool_bitwise(client, params):
    X, y = _data(240, 2, seed=3)
    local = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, random_state=0, **params).fit(X, y)
    dist = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, random_state=0, client=client,
                       **params).fit(X, y)
    assert np.array_equal(local.kernel_.theta, dist.kernel_.theta)
    assert local.noise_ == dist.noise_ and local.cv_mse_ == dist.cv_mse_
    assert np.array_equal(local.history_, dist.history_)
    assert dist.client is client
    gp2 = _roundtrip(dist)             # the client is dropped, the model kept
    assert gp2.client is None
    np.testing.assert_array_equal(gp2.predict(X[:5]), dist.predict(X[:5]))


def test_dask_ml_restarts_equal_the_thread_pool(client):
    """The restarts run as tasks; the dense Cholesky runs with the workers'
    one BLAS thread, so agreement is to rounding (1e-8 relative), not bitwise."""
    X, y = _data(200, 2, seed=4)
    kw = dict(optimizer="ml", n_restarts=2, random_state=0)
    local = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, **kw).fit(X, y)
    dist = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, client=client, **kw).fit(X, y)
    np.testing.assert_allclose(local.kernel_.theta, dist.kernel_.theta, rtol=1e-8, atol=1e-8)
    assert dist.log_marginal_likelihood_value_ == pytest.approx(
        local.log_marginal_likelihood_value_, rel=1e-10)


def test_dask_ml_candidates_equal_the_thread_pool(client):
    """Candidates run as tasks on the cluster like the restarts (agreement to
    rounding, as above)."""
    X, y = _data(200, 2, seed=7)
    kw = dict(optimizer="ml", candidates=np.log([[2.0, 0.3, 3.0, 0.02], [0.5, 3.0, 0.3, 0.5]]))
    local = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, **kw).fit(X, y)
    dist = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, client=client, **kw).fit(X, y)
    assert len(dist.hyper_["starts"]) == 3
    for a, b in zip(local.hyper_["starts"], dist.hyper_["starts"]):
        np.testing.assert_allclose(a["theta"], b["theta"], rtol=1e-8, atol=1e-8)
    assert dist.log_marginal_likelihood_value_ == pytest.approx(
        local.log_marginal_likelihood_value_, rel=1e-10)


def test_killing_a_worker_mid_fit_retries_or_fails_clearly(client):
    X, y = _data(500, 2, seed=5)
    kw = dict(optimizer="cv_admm", cv=2, cv_scheme="consensus", random_state=0,
              admm_options={"epsilon": 0.0, "max_iter": 40})
    reference = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference.fit(X, y)
    pids = list(client.run(os.getpid).values())
    outcome = {}

    def fit():
        gp = GPRegressor(SquaredExponential([1.0, 1.0]), 0.1, client=client, **kw)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outcome["model"] = gp.fit(X, y)
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc

    thread = threading.Thread(target=fit, daemon=True)
    thread.start()
    time.sleep(0.8)
    os.kill(pids[0], signal.SIGKILL)
    thread.join(timeout=120)
    assert not thread.is_alive(), "the fit hung after a worker died"
    if "error" in outcome:
        assert isinstance(outcome["error"], RuntimeError)
        assert "worker" in str(outcome["error"]).lower()
    else:
        # the lost fold states were recomputed from their lineage: same result
        assert np.array_equal(outcome["model"].kernel_.theta, reference.kernel_.theta)
    client.wait_for_workers(2, timeout=60)


def test_discrete_kernels_say_their_parameters_are_not_learned_here():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (40, 3)).astype(float)
    y = X[:, 0] - X[:, 1] + 0.1 * rng.standard_normal(40)
    for kernel in (bcd.gp.Hamming(np.ones(3)), bcd.gp.HistogramIntersection()):
        with pytest.raises(ValueError, match="SparseGPRegressor"):
            bcd.gp.GPRegressor(kernel, noise=0.1, optimizer="ml").fit(X, y)
        assert bcd.gp.GPRegressor(kernel, noise=0.1).fit(X, y).score(X, y) > 0.5
